"""The pooling family (kernels/pooling.cu): max pooling with indices, average pooling and adaptive
average pooling, forward and backward (aclnn.md §5 Pooling; CANN names and parameter order).

    aclnnMaxPool2dWithIndices(self, kernel_size, stride, padding, dilation, ceil_mode, out, indices)
    aclnnMaxPool2dWithIndicesBackward(grad_output, self, indices, kernel_size, stride, padding, dilation,
                                      ceil_mode, grad_input)
    aclnnMaxPool3dWithArgmax(self, kernel_size, stride, padding, dilation, ceil_mode, out, indices)
    aclnnMaxPool3dWithArgmaxBackward(grad_output, self, indices, kernel_size, stride, padding, dilation,
                                     ceil_mode, grad_input)
    aclnnAvgPool2d(self, kernel_size, strides, paddings, ceil_mode, count_include_pad, divisor_override,
                   cube_math_type, out)
    aclnnAvgPool2dBackward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                           divisor_override, cube_math_type, grad_input)
    aclnnAvgPool3d(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, out)
    aclnnAvgPool3dBackward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                           divisor_override, output)
    aclnnAdaptiveAvgPool2d(self, output_size, out)
    aclnnAdaptiveAvgPool2dBackward(grad_output, self, out)

**Shapes.** 2-D pooling takes (C, H, W) or (N, C, H, W) — (N, H, W, C) when the format is NHWC —
and pools H, W; 3-D pooling takes (C, D, H, W) or (N, C, D, H, W) ((N, D, H, W, C) for NDHWC).
Attribute arrays: kernel length 1 or 2 (3 for 3-D; one value is used for every axis), stride
length 0 (= kernel), 1 or 2 (3), padding 1 or 2 (3) with 0 ≤ pad ≤ kernel/2, dilation 1 or 2 (3)
with values > 0. Output size (PyTorch's rule, ceil_mode included):
``o = (i + 2p − d(k − 1) − 1 + (s − 1 if ceil_mode else 0)) // s + 1``, minus one when ceil_mode
and the last window would start at or past ``i + p`` (the last-window rule). An output size < 1 is
161002. out/indices/grad_output must have exactly that shape (161002 naming them otherwise).

**Values.** As PyTorch's CPU kernels: max keeps the first maximum in window order (d, h, w), a NaN
wins; indices are flat over the input plane (d·H·W + h·W + w), INT32 or INT64. Average windows are
clipped at i + pad for the count_include_pad divisor and at i for the sum; divisor_override ≠ 0
replaces the divisor; cube_math_type (0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16,
3 USE_HF32) is accepted and changes nothing (there is no Cube unit: always f32 arithmetic, f64 for DOUBLE).
Adaptive windows are [⌊o·I/O⌋, ⌈(o+1)·I/O⌉). FLOAT, FLOAT16, BF16 (CANN's list; f16/bf16 computed
in f32) and DOUBLE — an aclnn-py extension (the cuDNN face's DOUBLE pooling runs these ops), computed
in f64 throughout (the kernels' compute type follows the data: f32 for the others, f64 for DOUBLE).

**Layouts.** Every kernel computes at each tensor's own strides: contiguous (NCHW), channels-last
(NHWC format, or an NCHW view with channels-last strides), transposed — any dense layout is used
in place, nothing copied; only views with gaps go through the workspace. Threads walk the written
tensor in its memory order.

**Deterministic backward, no atomics.** Each backward runs one thread per *input* element, which
gathers over the output windows that can contain it, in a fixed order (od, oh, ow ascending — the
order PyTorch's scatter adds in). Max-pool backward adds grad_output[o] where indices[o] equals
the element's flat index; an index outside its own window is never followed (indices from the
forward are always inside it), so bad indices cannot write out of bounds. Bitwise reproducible.
The one case where this differs from PyTorch's scatter: a window wholly in the padding (possible
only with MaxPool2dWithIndicesBackward's pad = kernel, which PyTorch refuses) has out = −inf and an
index outside it (PyTorch's), and its gradient goes nowhere.

**Where the reference is silent we chose:** indices null → 161001 (it is a required output);
MaxPool2dWithIndicesBackward accepts 0 ≤ pad ≤ kernel (aclnn.md §5), the forward ops pad ≤ kernel/2;
an empty batch dim (N = 0 of a 4-D/5-D input) succeeds with nothing launched, empty channels or
spatial dims are 161002 (PyTorch's rule; DESIGN §4 for channels; AvgPool2d and its backward refuse
every empty tensor, 161002, as documented); adaptive output_size has length 1 or 2 with values
≥ 1 and the input's H, W must be ≥ 1; out's format must equal self's (grad_input's self's).

**cuDNN.** The face's cudnnPoolingForward/Backward (aclnn_py/cudnn/pooling.py) run these ops:
MAX → MaxPool{2d,3d}With{Indices,Argmax} (indices into scratch; the backward recomputes them from x),
AVERAGE_COUNT_{INCLUDE,EXCLUDE}_PADDING → AvgPool{2d,3d}(Backward) with count_include_pad True/False;
cuDNN's floor output size is ceil_mode = False, dilation 1.
"""
from __future__ import annotations


import numpy as np

from ..dtypes import CHANNELS_LAST_FORMATS, aclDataType, aclFormat
from ..kernel_cache import FLOAT_CTYPES, declare, instantiate
from ..opdef import FLOATS, AttrParam as A, OpDef, TensorParam as T, register
from ..plan import Plan, dense_strides, grid_for, memory_order
from ..status import AclnnStatus
from ..tensor import aclIntArray

__all__ = ["pool_output_size", "POOL_GEOM"]

INVALID = AclnnStatus.ACLNN_ERR_PARAM_INVALID
GROUP = "Pooling"
INDEX_CTYPES = ("int", "long long")
DATA_CTYPES = (*FLOAT_CTYPES, "double")      # double: compute type f64 (kernels/pooling.cu acc_t)
FAMILY = declare("pooling",
                 instantiate("max_pool_fwd<{T}, {I}>", T=DATA_CTYPES, I=INDEX_CTYPES),
                 instantiate("max_pool_bwd<{T}, {I}>", T=DATA_CTYPES, I=INDEX_CTYPES),
                 *(instantiate(f"{k}<{{T}}>", T=DATA_CTYPES)
                   for k in ("avg_pool_fwd", "avg_pool_bwd", "adaptive_avg_fwd", "adaptive_avg_bwd")))
BLOCK = 256

I32, I64 = aclDataType.ACL_INT32, aclDataType.ACL_INT64
# data dtypes: CANN's FLOAT/FLOAT16/BF16, plus DOUBLE (an aclnn-py extension, f64 compute; the cuDNN face uses it)
DATA_DTYPES = _D = FLOATS | {aclDataType.ACL_DOUBLE}
INDEX_DTYPES = frozenset({I32, I64})
F = aclFormat
FORMATS_2D_MAX = frozenset({F.ACL_FORMAT_ND, F.ACL_FORMAT_NCHW, F.ACL_FORMAT_NHWC})
FORMATS_2D_AVG = frozenset({F.ACL_FORMAT_ND, F.ACL_FORMAT_NCHW, F.ACL_FORMAT_NCL})
FORMATS_3D = frozenset({F.ACL_FORMAT_ND, F.ACL_FORMAT_NCDHW})

# struct PoolGeom of kernels/pooling.cu (every field int64: no padding), passed by value
_SCALARS = ("N", "C", "ID", "IH", "IW", "OD", "OH", "OW", "kd", "kh", "kw", "sd", "sh", "sw", "pd", "ph", "pw",
            "dd", "dh", "dw")
POOL_GEOM = np.dtype([*((n, "<i8") for n in _SCALARS), ("xs", "<i8", 5), ("ys", "<i8", 5), ("is", "<i8", 5),
                      ("cl", "<i8"), ("count_include_pad", "<i8"), ("divisor", "<i8")])


# sizes -----------------------------------------------------------------------------------------

def pool_output_size(i: int, k: int, s: int, p: int, d: int = 1, ceil_mode: bool = False) -> int:
    """PyTorch's pooling_output_shape: floor (or ceil with the last-window rule) of the window count."""
    o = (i + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (o - 1) * s >= i + p:
        o -= 1
    return o


class _Geo:
    """Validated geometry of one call: axes of the data tensors, window parameters, output sizes."""
    __slots__ = ("nd", "n_axis", "c_axis", "sp_axes", "N", "C", "insz", "outsz", "k", "s", "p", "d")


def _axes(t, nd: int):
    """(n axis or None, c axis, spatial axes) of a data tensor of a nd-D pooling op."""
    r = t.rank
    if t.format in CHANNELS_LAST_FORMATS:
        return 0, r - 1, tuple(range(1, r - 1))
    sp = tuple(range(r - nd, r))
    return (0, 1, sp) if r == nd + 2 else (None, 0, sp)


def _nonempty(plan: Plan, data: str, g: "_Geo") -> None:
    """Channels and spatial dims must be non-empty (PyTorch's rule; DESIGN §4: channel axis 0 is 161002);
    only the batch dim may be 0."""
    t = plan[data]
    for a in (g.c_axis, *g.sp_axes):
        if t.view_dims[a] < 1:
            plan.fail(INVALID, f"{data} dim {a} ({'channels' if a == g.c_axis else 'spatial'}) must be non-empty, "
                               f"got shape {tuple(t.view_dims)}; only the batch dim may be 0")


def _int_array(plan: Plan, name: str, lengths: tuple, nd: int, lo: int | None, default=None):
    v = plan[name]
    if not isinstance(v, aclIntArray):
        plan.fail(INVALID, f"{name} must be an aclIntArray, got {type(v).__name__}")
    vals = tuple(int(x) for x in v)
    if len(vals) not in lengths:
        plan.fail(INVALID, f"{name} must have {' or '.join(map(str, lengths))} elements, got {len(vals)}")
    if not vals:
        return default
    if lo is not None:
        for j, x in enumerate(vals):
            if x < lo:
                plan.fail(INVALID, f"{name}[{j}] must be >= {lo}, got {x}")
    return vals * nd if len(vals) == 1 else vals


def _window_geo(plan: Plan, nd: int, names: dict, pad_limit: str, dilation: bool, ceil_name: str,
                data: str) -> _Geo:
    """Validate kernel/stride/padding(/dilation) and compute the output sizes from tensor ``data``."""
    g = _Geo()
    g.nd = nd
    t = plan[data]
    g.n_axis, g.c_axis, g.sp_axes = _axes(t, nd)
    dims = t.view_dims
    g.N = dims[g.n_axis] if g.n_axis is not None else 1
    g.C = dims[g.c_axis]
    g.insz = tuple(dims[a] for a in g.sp_axes)
    _nonempty(plan, data, g)
    lens = (1, nd)
    g.k = _int_array(plan, names["kernel"], lens, nd, 1)
    g.s = _int_array(plan, names["stride"], (0, 1, nd), nd, 1, default=g.k)
    g.p = _int_array(plan, names["padding"], lens, nd, 0)
    g.d = _int_array(plan, names["dilation"], lens, nd, 1) if dilation else (1,) * nd
    for j in range(nd):
        lim = g.k[j] if pad_limit == "kernel" else g.k[j] // 2
        if g.p[j] > lim:
            plan.fail(INVALID, f"{names['padding']}[{j}] = {g.p[j]} must be at most "
                               f"{'kernel_size' if pad_limit == 'kernel' else 'kernel_size/2'} = {lim} "
                               f"(kernel_size[{j}] = {g.k[j]})")
    ceil = plan[ceil_name]
    g.outsz = tuple(pool_output_size(i, k, s, p, d, ceil) for i, k, s, p, d in zip(g.insz, g.k, g.s, g.p, g.d))
    for j, (i, o) in enumerate(zip(g.insz, g.outsz)):
        if o < 1:
            plan.fail(INVALID, f"{data}: the pooled output size of spatial dim {g.sp_axes[j]} (size {i}) is {o} "
                               f"(kernel {g.k[j]}, stride {g.s[j]}, padding {g.p[j]}, dilation {g.d[j]}); "
                               f"it must be at least 1")
    return g


def _adaptive_geo(plan: Plan, data: str, out_size=None) -> _Geo:
    g = _Geo()
    g.nd = 2
    t = plan[data]
    g.n_axis, g.c_axis, g.sp_axes = _axes(t, 2)
    dims = t.view_dims
    g.N = dims[g.n_axis] if g.n_axis is not None else 1
    g.C = dims[g.c_axis]
    g.insz = tuple(dims[a] for a in g.sp_axes)
    _nonempty(plan, data, g)
    if out_size is None:
        out_size = _int_array(plan, "output_size", (1, 2), 2, 1)
    g.outsz = tuple(out_size)
    g.k = g.s = g.d = (1, 1)
    g.p = (0, 0)
    return g


def _out_dims(plan: Plan, g: _Geo, like: str) -> tuple:
    dims = list(plan[like].view_dims)
    for a, o in zip(g.sp_axes, g.outsz):
        dims[a] = o
    return tuple(dims)


def _expect_shape(plan: Plan, name: str, want: tuple) -> None:
    t = plan[name]
    if tuple(t.view_dims) != want:
        plan.fail(INVALID, f"{name} shape must be {want} (the pooled shape of self), got {tuple(t.view_dims)}")


def _same_format(plan: Plan, name: str, of: str = "self") -> None:
    if plan[name].format != plan[of].format:
        plan.fail(INVALID, f"{name} format {aclFormat(plan[name].format).name} must equal {of}'s "
                           f"({aclFormat(plan[of].format).name})")


# planning -------------------------------------------------------------------------------------

def _order(t) -> list[int]:
    return memory_order(t) or list(range(t.rank))


def _strides5(g: _Geo, t, order) -> list[int]:
    """Strides (elements) of the bound buffer of ``t`` (dense in ``order``) per axis n, c, d, h, w."""
    st = dense_strides(t.view_dims, order)
    sp = [st[a] for a in g.sp_axes]
    if g.nd == 2:
        sp = [0, *sp]
    return [st[g.n_axis] if g.n_axis is not None else 0, st[g.c_axis], *sp]


def _geom(g: _Geo, x_strides, y_strides, i_strides, cl: bool, count_include_pad=True, divisor=0) -> np.void:
    v = np.zeros((), POOL_GEOM)
    pad3 = (lambda t, fill: (fill, *t)) if g.nd == 2 else (lambda t, fill: tuple(t))
    ins, outs = pad3(g.insz, 1), pad3(g.outsz, 1)
    k, s, p, d = pad3(g.k, 1), pad3(g.s, 1), pad3(g.p, 0), pad3(g.d, 1)
    vals = (g.N, g.C, *ins, *outs, *k, *s, *p, *d)
    for name, val in zip(_SCALARS, vals):
        v[name] = val
    v["xs"], v["ys"], v["is"] = x_strides, y_strides, i_strides or [0] * 5
    v["cl"], v["count_include_pad"], v["divisor"] = int(cl), int(count_include_pad), int(divisor)
    return v[()]


def _walk_cl(g: _Geo, t, order) -> bool:
    """Whether threads should walk tensor ``t`` channels-innermost (its memory order ends with C)."""
    big = [a for a in order if t.view_dims[a] > 1]
    return bool(big) and big[-1] == g.c_axis


def _launch(p: Plan, kernel: str, g: _Geo, total: int, ptrs: tuple, geom) -> None:
    if total:
        p.launch(FAMILY, kernel, grid_for(total, BLOCK), BLOCK, (*ptrs, geom))


# max pooling ----------------------------------------------------------------------------------

_WIN = {"kernel": "kernel_size", "stride": "stride", "padding": "padding", "dilation": "dilation"}
_AVG2D = {"kernel": "kernel_size", "stride": "strides", "padding": "paddings"}
_AVGBWD = {"kernel": "kernel_size", "stride": "stride", "padding": "padding"}


def _cached(plan: Plan, make):
    g = getattr(plan, "_pool_geo", None)
    if g is None:
        g = make(plan)
        plan._pool_geo = g
    return g


def _max_geo(nd: int, pad_limit: str, data: str):
    return lambda plan: _cached(plan, lambda p: _window_geo(p, nd, _WIN, pad_limit, True, "ceil_mode", data))


def _pooled_rule(geo, like: str, formats: frozenset | None = None, same_format: str | None = None):
    """Shape rule of an output-sized tensor: exactly the pooled shape of ``like``; rank/format checks."""
    def rule(plan: Plan, name: str, t) -> None:
        g = geo(plan)
        if formats is not None and t.format not in formats:
            plan.fail(INVALID, f"{name} format {aclFormat(t.format).name} is not supported by this op")
        if same_format is not None:
            _same_format(plan, name, same_format)
        _expect_shape(plan, name, _out_dims(plan, g, like))
    return rule


def _plan_max_fwd(geo):
    def plan(p: Plan) -> None:
        g = geo(p)
        x, y, i = p["self"], p["out"], p["indices"]
        ox, oy, oi = _order(x), _order(y), _order(i)
        ptrs = (p.read("self", ox), p.write("out", oy), p.write("indices", oi))
        geom = _geom(g, _strides5(g, x, ox), _strides5(g, y, oy), _strides5(g, i, oi), _walk_cl(g, y, oy))
        ict = "int" if i.data_type == I32 else "long long"
        _launch(p, f"max_pool_fwd<{p.ctype('self')}, {ict}>", g, y.numel, ptrs, geom)
    return plan


def _plan_max_bwd(geo):
    def plan(p: Plan) -> None:
        g = geo(p)
        gy, i, gx = p["grad_output"], p["indices"], p["grad_input"]
        oy, oi, ox = _order(gy), _order(i), _order(gx)
        ptrs = (p.read("grad_output", oy), p.read("indices", oi), p.write("grad_input", ox))
        geom = _geom(g, _strides5(g, gx, ox), _strides5(g, gy, oy), _strides5(g, i, oi), _walk_cl(g, gx, ox))
        ict = "int" if i.data_type == I32 else "long long"
        _launch(p, f"max_pool_bwd<{p.ctype('grad_output')}, {ict}>", g, gx.numel, ptrs, geom)
    return plan


def _max_fwd_op(name: str, nd: int, ranks: tuple, formats: frozenset, doc: str) -> OpDef:
    geo = _max_geo(nd, "half", "self")
    return OpDef(
        name=name,
        params=(T("self", dtypes=_D), A("kernel_size", aclIntArray), A("stride", aclIntArray),
                A("padding", aclIntArray),
                A("dilation", aclIntArray), A("ceil_mode", bool),
                T("out", out=True, dtypes=_D, match="self", shape=_pooled_rule(geo, "self", formats, "self")),
                T("indices", out=True, dtypes=INDEX_DTYPES, shape=_pooled_rule(geo, "self", formats))),
        ranks=ranks, formats=formats, check=geo, plan=_plan_max_fwd(geo), group=GROUP, doc=doc)


def _max_bwd_op(name: str, nd: int, ranks: tuple, formats: frozenset, pad_limit: str, doc: str) -> OpDef:
    geo = _max_geo(nd, pad_limit, "self")
    return OpDef(
        name=name,
        params=(T("grad_output", dtypes=_D, shape=_pooled_rule(geo, "self", formats)),
                T("self", dtypes=_D, match="grad_output"),
                T("indices", dtypes=INDEX_DTYPES, shape=_pooled_rule(geo, "self", formats)),
                A("kernel_size", aclIntArray), A("stride", aclIntArray), A("padding", aclIntArray),
                A("dilation", aclIntArray), A("ceil_mode", bool),
                T("grad_input", out=True, dtypes=_D, match="grad_output", shape=_same_shape_format("self"))),
        ref="self", ranks=ranks, formats=formats, check=geo, plan=_plan_max_bwd(geo), group=GROUP,
        cudnn=("cudnnPoolingBackward",), doc=doc)


def _same_shape_format(of: str):
    def rule(plan: Plan, name: str, t) -> None:
        if tuple(t.view_dims) != tuple(plan[of].view_dims):
            plan.fail(INVALID, f"{name} shape must equal {of}'s {tuple(plan[of].view_dims)}, got {tuple(t.view_dims)}")
        _same_format(plan, name, of)
    return rule


# average pooling ------------------------------------------------------------------------------

def _avg_geo(nd: int, names: dict, data: str, no_empty: bool):
    def make(p: Plan) -> _Geo:
        g = _window_geo(p, nd, names, "half", False, "ceil_mode", data)
        if no_empty:
            for n in ("self", "grad_output"):
                if n in p.values and p[n] is not None and p[n].numel == 0:
                    p.fail(INVALID, f"{n} must not be empty (shape {tuple(p[n].view_dims)}): this op takes no "
                                    f"empty tensors")
        return g
    return lambda plan: _cached(plan, make)


def _divisor(p: Plan) -> int:
    return p["divisor_override"]


def _plan_avg_fwd(geo):
    def plan(p: Plan) -> None:
        g = geo(p)
        x, y = p["self"], p["out"]
        ox, oy = _order(x), _order(y)
        ptrs = (p.read("self", ox), p.write("out", oy))
        geom = _geom(g, _strides5(g, x, ox), _strides5(g, y, oy), None, _walk_cl(g, y, oy),
                     p["count_include_pad"], _divisor(p))
        _launch(p, f"avg_pool_fwd<{p.ctype('self')}>", g, y.numel, ptrs, geom)
    return plan


def _plan_avg_bwd(geo, out_name: str):
    def plan(p: Plan) -> None:
        g = geo(p)
        gy, gx = p["grad_output"], p[out_name]
        oy, ox = _order(gy), _order(gx)
        ptrs = (p.read("grad_output", oy), p.write(out_name, ox))
        geom = _geom(g, _strides5(g, gx, ox), _strides5(g, gy, oy), None, _walk_cl(g, gx, ox),
                     p["count_include_pad"], _divisor(p))
        _launch(p, f"avg_pool_bwd<{p.ctype('grad_output')}>", g, gx.numel, ptrs, geom)
    return plan


def _avg_attrs(names: dict, cube: bool) -> tuple:
    return (A(names["kernel"], aclIntArray), A(names["stride"], aclIntArray), A(names["padding"], aclIntArray),
            A("ceil_mode", bool), A("count_include_pad", bool), A("divisor_override", int),
            *((A("cube_math_type", int, choices=(0, 1, 2, 3)),) if cube else ()))


def _avg_fwd_op(name: str, nd: int, ranks: tuple, formats: frozenset, names: dict, cube: bool, no_empty: bool,
                doc: str) -> OpDef:
    geo = _avg_geo(nd, names, "self", no_empty)
    return OpDef(
        name=name,
        params=(T("self", dtypes=_D), *_avg_attrs(names, cube),
                T("out", out=True, dtypes=_D, match="self", shape=_pooled_rule(geo, "self", formats, "self"))),
        ranks=ranks, formats=formats, check=geo, plan=_plan_avg_fwd(geo), group=GROUP, doc=doc)


def _avg_bwd_op(name: str, nd: int, ranks: tuple, formats: frozenset, cube: bool, no_empty: bool, out_name: str,
                doc: str) -> OpDef:
    geo = _avg_geo(nd, _AVGBWD, "self", no_empty)
    return OpDef(
        name=name,
        params=(T("grad_output", dtypes=_D, shape=_pooled_rule(geo, "self", formats)),
                T("self", dtypes=_D, match="grad_output"),
                *_avg_attrs(_AVGBWD, cube),
                T(out_name, out=True, dtypes=_D, match="grad_output", shape=_same_shape_format("self"))),
        ref="self", ranks=ranks, formats=formats, check=geo, plan=_plan_avg_bwd(geo, out_name), group=GROUP,
        cudnn=("cudnnPoolingBackward",), doc=doc)


# adaptive average pooling ---------------------------------------------------------------------

def _adaptive_fwd_geo(plan: Plan) -> _Geo:
    return _cached(plan, lambda p: _adaptive_geo(p, "self"))


def _adaptive_bwd_geo(plan: Plan) -> _Geo:
    def make(p: Plan) -> _Geo:
        go = p["grad_output"]
        if go.rank != p["self"].rank:
            p.fail(INVALID, f"grad_output rank must equal self's ({p['self'].rank}), got {go.rank}")
        _, _, sp = _axes(p["self"], 2)
        return _adaptive_geo(p, "self", tuple(go.view_dims[a] for a in sp))
    return _cached(plan, make)


def _adaptive_grad_rule(plan: Plan, name: str, t) -> None:
    g = _adaptive_bwd_geo(plan)
    if t.format not in FORMATS_2D_AVG:
        plan.fail(INVALID, f"{name} format {aclFormat(t.format).name} is not supported by this op")
    want = _out_dims(plan, g, "self")
    if tuple(t.view_dims) != want or min(g.outsz) < 1:
        plan.fail(INVALID, f"{name} shape must be self's {tuple(plan['self'].view_dims)} with non-empty pooled "
                           f"spatial dims, got {tuple(t.view_dims)}")


def _plan_adaptive_fwd(p: Plan) -> None:
    g = _adaptive_fwd_geo(p)
    x, y = p["self"], p["out"]
    ox, oy = _order(x), _order(y)
    ptrs = (p.read("self", ox), p.write("out", oy))
    geom = _geom(g, _strides5(g, x, ox), _strides5(g, y, oy), None, _walk_cl(g, y, oy))
    _launch(p, f"adaptive_avg_fwd<{p.ctype('self')}>", g, y.numel, ptrs, geom)


def _plan_adaptive_bwd(p: Plan) -> None:
    g = _adaptive_bwd_geo(p)
    gy, gx = p["grad_output"], p["out"]
    oy, ox = _order(gy), _order(gx)
    ptrs = (p.read("grad_output", oy), p.write("out", ox))
    geom = _geom(g, _strides5(g, gx, ox), _strides5(g, gy, oy), None, _walk_cl(g, gx, ox))
    _launch(p, f"adaptive_avg_bwd<{p.ctype('grad_output')}>", g, gx.numel, ptrs, geom)


# registration ---------------------------------------------------------------------------------

_DT = "FLOAT/FLOAT16/BF16 (CANN), DOUBLE (an aclnn-py extension, for the cuDNN face: f64 compute)"

_MAX_DOC = ("out = max over each window (kernel_size, stride (length 0 = kernel), padding ≤ kernel/2, dilation; "
            "ceil_mode with PyTorch's last-window rule), indices = its flat position in the input plane{plane} "
            "(INT32 or INT64; first maximum wins, NaN propagates). " + _DT + ", {shapes}. Empty batch: nothing "
            "launched; empty channels or spatial dims: 161002. Deterministic.")
_MAXB_DOC = ("grad_input[i] = Σ grad_output[o] over the windows o that contain input element i and whose "
             "indices[o] name it (a gather, one thread per input element: no atomics, deterministic). "
             "Attributes as the forward ({pad}). " + _DT + ", indices INT32/INT64, {shapes}.")
_AVG_DOC = ("out = Σ window / divisor: divisor_override if ≠ 0, else the window size clipped at input + padding "
            "(count_include_pad) or at the input (not). kernel_size, {stride} (length 0 = kernel), {padding} "
            "≤ kernel/2, ceil_mode with PyTorch's last-window rule.{cube} " + _DT + ", {shapes}.{empty} "
            "Deterministic.")
_AVGB_DOC = ("{out}[i] = Σ grad_output[o]/divisor(o) over the windows o that contain input element i (a gather: "
             "no atomics, deterministic); attributes as the forward.{cube} " + _DT + ", {shapes}.{empty}")

SHAPES_2D = "(C, H, W) or (N, C, H, W); NHWC format: (N, H, W, C)"
SHAPES_2D_AVG = "(C, H, W) or (N, C, H, W), formats ND/NCHW/NCL (channels-last strides are computed in place)"
SHAPES_3D = "(C, D, H, W) or (N, C, D, H, W), formats ND/NCDHW (channels-last strides are computed in place)"
_CUBE = " cube_math_type 0–3 accepted (changes nothing: f32 arithmetic, f64 for DOUBLE)."
_NO_EMPTY = " Empty tensors: 161002."
_EMPTY_OK = " Empty batch: nothing launched; empty channels or spatial dims: 161002."

MaxPool2dWithIndices = register(_max_fwd_op(
    "MaxPool2dWithIndices", 2, (3, 4), FORMATS_2D_MAX,
    _MAX_DOC.format(plane=" (h·W + w)", shapes=SHAPES_2D)), globals())
MaxPool2dWithIndicesBackward = register(_max_bwd_op(
    "MaxPool2dWithIndicesBackward", 2, (3, 4), FORMATS_2D_MAX, "kernel",
    _MAXB_DOC.format(pad="0 ≤ padding ≤ kernel_size, as aclnn.md §5", shapes=SHAPES_2D)), globals())
AvgPool2d = register(_avg_fwd_op(
    "AvgPool2d", 2, (3, 4), FORMATS_2D_AVG, _AVG2D, True, True,
    _AVG_DOC.format(stride="strides", padding="paddings", cube=_CUBE, shapes=SHAPES_2D_AVG, empty=_NO_EMPTY)),
    globals())
AvgPool2dBackward = register(_avg_bwd_op(
    "AvgPool2dBackward", 2, (3, 4), FORMATS_2D_AVG, True, True, "grad_input",
    _AVGB_DOC.format(out="grad_input", cube=_CUBE, shapes=SHAPES_2D_AVG, empty=_NO_EMPTY)), globals())
AvgPool3d = register(_avg_fwd_op(
    "AvgPool3d", 3, (4, 5), FORMATS_3D, _AVGBWD, False, False,
    _AVG_DOC.format(stride="stride", padding="padding", cube="", shapes=SHAPES_3D, empty=_EMPTY_OK)), globals())
AvgPool3dBackward = register(_avg_bwd_op(
    "AvgPool3dBackward", 3, (4, 5), FORMATS_3D, False, False, "output",
    _AVGB_DOC.format(out="output", cube="", shapes=SHAPES_3D, empty=_EMPTY_OK)), globals())
MaxPool3dWithArgmax = register(_max_fwd_op(
    "MaxPool3dWithArgmax", 3, (4, 5), FORMATS_3D,
    _MAX_DOC.format(plane=" (d·H·W + h·W + w)", shapes=SHAPES_3D)), globals())
MaxPool3dWithArgmaxBackward = register(_max_bwd_op(
    "MaxPool3dWithArgmaxBackward", 3, (4, 5), FORMATS_3D, "half",
    _MAXB_DOC.format(pad="padding ≤ kernel_size/2", shapes=SHAPES_3D)), globals())
AdaptiveAvgPool2d = register(OpDef(
    name="AdaptiveAvgPool2d",
    params=(T("self", dtypes=_D), A("output_size", aclIntArray),
            T("out", out=True, dtypes=_D, match="self",
              shape=_pooled_rule(_adaptive_fwd_geo, "self", FORMATS_2D_AVG, "self"))),
    ranks=(3, 4), formats=FORMATS_2D_AVG, check=_adaptive_fwd_geo, plan=_plan_adaptive_fwd, group=GROUP,
    doc="out[o] = mean of self over [⌊o·I/O⌋, ⌈(o+1)·I/O⌉) per spatial axis; output_size length 1 or 2, values "
        "≥ 1; self's H, W ≥ 1. " + _DT + ", " + SHAPES_2D_AVG + "." + _EMPTY_OK + " Deterministic."),
    globals())
AdaptiveAvgPool2dBackward = register(OpDef(
    name="AdaptiveAvgPool2dBackward",
    params=(T("grad_output", dtypes=_D, shape=_adaptive_grad_rule), T("self", dtypes=_D, match="grad_output"),
            T("out", out=True, dtypes=_D, match="grad_output", shape=_same_shape_format("self"))),
    ref="self", ranks=(3, 4), formats=FORMATS_2D_AVG, check=_adaptive_bwd_geo, plan=_plan_adaptive_bwd,
    group=GROUP,
    doc="out[i] = Σ grad_output[o]/|window o| over the adaptive windows o that contain i (output size = "
        "grad_output's spatial dims; a gather: no atomics, deterministic). " + _DT + ", "
        + SHAPES_2D_AVG + "." + _EMPTY_OK),
    globals())
