"""The pooling family (kernels/pooling.cu): max pooling with indices, average and adaptive average
pooling, 2-D and 3-D, forward and backward (aclnn.md §5 Pooling; CANN's names and parameter order).

    aclnnMaxPool2dWithIndices(self, kernel_size, stride, padding, dilation, ceil_mode, out, indices)
    aclnnMaxPool2dWithIndicesBackward(grad_output, self, indices, kernel_size, stride, padding, dilation,
                                      ceil_mode, grad_input)
    aclnnMaxPool3dWithArgmax / aclnnMaxPool3dWithArgmaxBackward      (the same, 3 spatial dims)
    aclnnAvgPool2d(self, kernel_size, strides, paddings, ceil_mode, count_include_pad, divisor_override,
                   cube_math_type, out)
    aclnnAvgPool2dBackward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                           divisor_override, cube_math_type, grad_input)
    aclnnAvgPool3d(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, out)
    aclnnAvgPool3dBackward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                           divisor_override, output)
    aclnnAdaptiveAvgPool2d(self, output_size, out)    aclnnAdaptiveAvgPool2dBackward(grad_output, self, out)

Rules (aclnn.md §5; PyTorch's where CANN defers to it): kernel_size of length 1 or 2 (3-D: 1 or 3),
values > 0; stride of length 0 (= kernel), 1 or 2 (3), values > 0; padding of length 1 or 2 (3) with
0 <= pad <= kernel/2; dilation of length 1 or 2 (3), values > 0 (average pooling has none); output
size floor((in + 2p − d(k−1) − 1)/s) + 1, ceil_mode rounding up but dropping a last window that
starts in the right padding (PyTorch's rule); an output size < 1 is 161002. Inputs 3-D (C, H, W) or
4-D (N, C, H, W) (3-D pooling: 4-D or 5-D); FLOAT, FLOAT16, BF16; indices INT32 or INT64 (a flat
index d·H·W + h·W + w within its (n, c) plane, PyTorch's); divisor_override 0 = not set;
cube_math_type accepted (0–3) and ignored (the kernels compute in f32). Average-pool backward and
max-pool backward refuse empty tensors (CANN); forwards of empty inputs launch nothing.

Layouts: every tensor is used dense in the input's memory order when it is NC(D)HW or channels-last
(N(D)HWC, any format flag) — no copies; other views are copied (ViewCopy).

**Backward is deterministic**: one thread per input element gathers, in a fixed order, the gradients
of the outputs whose window contains it (max pooling: whose index names it) — no atomics.
"""
from __future__ import annotations

import numpy as np

from ..dtypes import aclDataType
from ..kernel_cache import declare, instantiate
from ..opdef import AttrParam as A, FLOATS, OpDef, TensorParam as T, register
from ..plan import Plan, grid_for, memory_order
from ..status import AclnnStatus
from ..tensor import aclIntArray

INVALID = AclnnStatus.ACLNN_ERR_PARAM_INVALID
I32, I64 = aclDataType.ACL_INT32, aclDataType.ACL_INT64
GROUP = "Pooling"
_CT = ("float", "__half", "__nv_bfloat16")
FAMILY = declare("pooling",
                 instantiate("pool_fwd<{T}, {CL}, 0, {I}>", T=_CT, CL=("false", "true"), I=("int", "long long")),
                 instantiate("pool_fwd<{T}, {CL}, {M}, int>", T=_CT, CL=("false", "true"), M=("1", "2")),
                 instantiate("pool_bwd<{T}, {CL}, 0, {I}>", T=_CT, CL=("false", "true"), I=("int", "long long")),
                 instantiate("pool_bwd<{T}, {CL}, {M}, int>", T=_CT, CL=("false", "true"), M=("1", "2")))
BLOCK = 256
# struct PoolGeom of kernels/pooling.cu, passed by value (22 int32 after two int64: no padding at the end)
GEOM = np.dtype([("N", "<i8"), ("C", "<i8"), *[(k, "<i4") for k in (
    "D", "H", "W", "OD", "OH", "OW", "kd", "kh", "kw", "sd", "sh", "sw", "pd", "ph", "pw", "dd", "dh", "dw",
    "divisor", "count_include_pad")]])


# geometry ------------------------------------------------------------------------------------------

def out_size(i: int, k: int, s: int, p: int, d: int, ceil: bool) -> int:
    """PyTorch's pooling_output_shape."""
    num = i + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    o = num // s + 1
    if ceil and (o - 1) * s >= i + p:
        o -= 1
    return o


def _arr(p: Plan, name: str, S: int, *, allow_empty: bool = False, lo: int = 1):
    """An aclIntArray of length 1 or S (0 too when allow_empty): S values, each >= lo."""
    v = p[name]
    vals = list(v) if v is not None else None
    if vals is None:
        p.fail(AclnnStatus.ACLNN_ERR_PARAM_NULLPTR, f"{name} must not be null")
    if len(vals) not in ((0, 1, S) if allow_empty else (1, S)):
        p.fail(INVALID, f"{name} must have {'0, ' if allow_empty else ''}1 or {S} values, got {len(vals)}")
    if any(x < lo for x in vals):
        p.fail(INVALID, f"{name} values must be >= {lo}, got {vals}")
    if any(x > 2 ** 31 - 1 for x in vals):
        p.fail(INVALID, f"{name} values must fit an int32, got {vals}")
    return vals * S if len(vals) == 1 else vals


class PoolPlan(Plan):
    """The spatial geometry of one pooling call: S spatial dims (2 or 3), N (1 for unbatched input), C."""
    S = 2

    def spatial(self, t):
        return tuple(t.view_dims[-self.S:])


def _layout(p: Plan, name: str) -> bool:
    """Channels-last when ``name`` is dense (or mostly) with C innermost (a rank-(S+2) tensor)."""
    t = p[name]
    if t.rank != p.S + 2:
        return False
    order = memory_order(t)
    return order is not None and order[-1] == 1 and t.view_dims[1] > 1


def _order(rank: int, cl: bool):
    return [0, *range(2, rank), 1] if cl else list(range(rank))


def _geom(p: Plan, x_name: str, out_spatial, k, s, pad, dil, divisor=0, count_include_pad=True) -> np.void:
    x = p[x_name]
    S = p.S
    dims = x.view_dims
    N, C = (dims[0], dims[1]) if x.rank == S + 2 else (1, dims[0])
    sp = list(dims[-S:])
    osp = list(out_spatial)
    if S == 2:
        sp, osp, k, s, pad, dil = [1, *sp], [1, *osp], [1, *k], [1, *s], [0, *pad], [1, *dil]
    g = np.zeros((), GEOM)
    g["N"], g["C"] = N, C
    for key, vals in (("D", sp), ("OD", osp), ("kd", k), ("sd", s), ("pd", pad), ("dd", dil)):
        names = {"D": ("D", "H", "W"), "OD": ("OD", "OH", "OW")}.get(key, (key, key[0] + "h", key[0] + "w"))
        for nm, v in zip(names, vals):
            g[nm] = v
    g["divisor"], g["count_include_pad"] = divisor, int(bool(count_include_pad))
    return g[()]


# checks ---------------------------------------------------------------------------------------------

def _window_attrs(p: Plan, *, has_dilation: bool, stride_name: str = "stride", padding_name: str = "padding"):
    S = p.S
    k = _arr(p, "kernel_size", S)
    s = _arr(p, stride_name, S, allow_empty=True) if list(p[stride_name] or []) else list(k)
    pad = _arr(p, padding_name, S, lo=0)
    if any(2 * pp > kk for pp, kk in zip(pad, k)):
        p.fail(INVALID, f"{padding_name} {pad} must be at most half of kernel_size {k}")
    dil = _arr(p, "dilation", S) if has_dilation else [1] * S
    return k, s, pad, dil


def _check_input(p: Plan, name: str) -> None:
    t = p[name]
    if t.rank not in (p.S + 1, p.S + 2):
        p.fail(INVALID, f"{name} must be {p.S + 1}-D or {p.S + 2}-D, got rank {t.rank} (shape {tuple(t.view_dims)})")
    if any(d == 0 for d in t.view_dims[-p.S - 1:]):
        p.fail(INVALID, f"{name} has an empty channel or spatial dim (shape {tuple(t.view_dims)})")


def _expected_out(p: Plan, x: str, k, s, pad, dil, ceil: bool):
    xs = p[x].view_dims
    osp = [out_size(i, kk, ss, pp, dd, ceil) for i, kk, ss, pp, dd in zip(xs[-p.S:], k, s, pad, dil)]
    if any(o < 1 for o in osp):
        p.fail(INVALID, f"the output would be empty: input {tuple(xs)}, kernel_size {k}, stride {s}, padding {pad}, "
                        f"dilation {dil} give spatial size {osp}")
    return (*xs[:-p.S], *osp)


def _same_shape(p: Plan, name: str, want) -> None:
    if p[name] is not None and tuple(p[name].view_dims) != tuple(want):
        p.fail(INVALID, f"{name} shape must be {tuple(want)}, got {tuple(p[name].view_dims)}")


def _no_empty(p: Plan, *names) -> None:
    for n in names:
        if p[n] is not None and p[n].numel == 0:
            p.fail(INVALID, f"{n} is empty (shape {tuple(p[n].view_dims)}): the backward does not take empty tensors")


# plans ------------------------------------------------------------------------------------------------

def _ct(p: Plan, name: str) -> str:
    return p.ctype(name)


def _launch(p: Plan, kernel: str, total: int, args) -> None:
    p.launch(FAMILY, kernel, grid_for(total, BLOCK), BLOCK, args)


def _max_plan(backward: bool):
    def plan(p: Plan) -> None:
        x = "self"
        k, s, pad, dil = p.window
        cl = _layout(p, x)
        order = _order(p[x].rank, cl)
        it = "long long" if p["indices"].data_type == I64 else "int"
        out_dims = p["indices"].view_dims
        g = _geom(p, x, out_dims[-p.S:], k, s, pad, dil)
        if not backward:
            xp, yp, ip = p.read(x, order), p.write("out", order), p.write("indices", order)
            _launch(p, f"pool_fwd<{_ct(p, x)}, {'true' if cl else 'false'}, 0, {it}>", p["out"].numel, (xp, yp, ip, g))
        else:
            gp, ip, dxp = p.read("grad_output", order), p.read("indices", order), p.write("grad_input", order)
            _launch(p, f"pool_bwd<{_ct(p, x)}, {'true' if cl else 'false'}, 0, {it}>", p[x].numel, (gp, ip, dxp, g))
    return plan


def _avg_plan(backward: bool, out_name: str, stride_name: str = "stride"):
    def plan(p: Plan) -> None:
        x = "self"
        k, s, pad, _ = p.window
        cl = _layout(p, x)
        order = _order(p[x].rank, cl)
        y = "grad_output" if backward else out_name
        g = _geom(p, x, p[y].view_dims[-p.S:], k, s, pad, [1] * p.S, p["divisor_override"] or 0,
                  p["count_include_pad"])
        mode = "true" if cl else "false"
        if not backward:
            _launch(p, f"pool_fwd<{_ct(p, x)}, {mode}, 1, int>", p[out_name].numel,
                    (p.read(x, order), p.write(out_name, order), None, g))
        else:
            _launch(p, f"pool_bwd<{_ct(p, x)}, {mode}, 1, int>", p[x].numel,
                    (p.read("grad_output", order), None, p.write(out_name, order), g))
    return plan


def _adaptive_plan(backward: bool):
    def plan(p: Plan) -> None:
        x = "self"
        cl = _layout(p, x)
        order = _order(p[x].rank, cl)
        y = "grad_output" if backward else "out"
        one = [1, 1]
        g = _geom(p, x, p[y].view_dims[-2:], one, one, [0, 0], one)
        mode = "true" if cl else "false"
        if not backward:
            _launch(p, f"pool_fwd<{_ct(p, x)}, {mode}, 2, int>", p["out"].numel, (p.read(x, order), p.write("out", order),
                                                                                   None, g))
        else:
            _launch(p, f"pool_bwd<{_ct(p, x)}, {mode}, 2, int>", p[x].numel,
                    (p.read("grad_output", order), None, p.write("out", order), g))
    return plan


def _plan_type(S: int):
    return type(f"Pool{S}dPlan", (PoolPlan,), {"S": S})


# checks per op ----------------------------------------------------------------------------------------

def _max_check(backward: bool):
    def check(p: Plan) -> None:
        _check_input(p, "self")
        p.window = _window_attrs(p, has_dilation=True)
        k, s, pad, dil = p.window
        want = _expected_out(p, "self", k, s, pad, dil, p["ceil_mode"])
        for n in (("grad_output", "indices") if backward else ("out", "indices")):
            _same_shape(p, n, want)
        if backward:
            _same_shape(p, "grad_input", p["self"].view_dims)
            _no_empty(p, "grad_output", "self")
    return check


def _avg_check(backward: bool, out_name: str, stride_name: str = "stride", padding_name: str = "padding",
               cube: bool = False):
    def check(p: Plan) -> None:
        _check_input(p, "self")
        p.window = _window_attrs(p, has_dilation=False, stride_name=stride_name, padding_name=padding_name)
        k, s, pad, dil = p.window
        d = p["divisor_override"]
        if d is not None and not -(2 ** 31) <= d < 2 ** 31:
            p.fail(INVALID, f"divisor_override must fit an int32, got {d}")
        if cube and p["cube_math_type"] is not None and p["cube_math_type"] not in (0, 1, 2, 3):
            p.fail(INVALID, f"cube_math_type must be 0–3, got {p['cube_math_type']}")
        want = _expected_out(p, "self", k, s, pad, dil, p["ceil_mode"])
        _same_shape(p, "grad_output" if backward else out_name, want)
        if backward:
            _same_shape(p, out_name, p["self"].view_dims)
            _no_empty(p, "grad_output", "self")
    return check


def _adaptive_check(backward: bool):
    def check(p: Plan) -> None:
        _check_input(p, "self")
        x = p["self"]
        if backward:
            _same_shape(p, "out", x.view_dims)
            g = p["grad_output"]
            if g.rank != x.rank or g.view_dims[:-2] != x.view_dims[:-2] or any(d < 1 for d in g.view_dims[-2:]):
                p.fail(INVALID, f"grad_output shape {tuple(g.view_dims)} does not fit self {tuple(x.view_dims)}")
            _no_empty(p, "grad_output", "self")
            return
        o = list(p["output_size"])
        if len(o) not in (1, 2) or any(v < 1 for v in o):
            p.fail(INVALID, f"output_size must be 1 or 2 positive values, got {o}")
        o = o * 2 if len(o) == 1 else o
        _same_shape(p, "out", (*x.view_dims[:-2], *o))
    return check


# the ops ----------------------------------------------------------------------------------------------

_IDX = frozenset({I32, I64})
_ARR = aclIntArray


def _max_ops(S: int, name: str):
    fwd = OpDef(
        name=name,
        params=(T("self", dtypes=FLOATS), A("kernel_size", _ARR), A("stride", _ARR), A("padding", _ARR),
                A("dilation", _ARR), A("ceil_mode", bool),
                T("out", out=True, match="self", shape=lambda p, n, t: None),
                T("indices", out=True, dtypes=_IDX, shape=lambda p, n, t: None)),
        ranks=(S + 1, S + 2), check=_max_check(False), plan=_max_plan(False), plan_type=_plan_type(S), group=GROUP,
        doc=f"{S}-D max pooling: out = the window maxima (first maximum; NaN wins), indices = their flat "
            f"positions in each (n, c) plane (INT32 or INT64). kernel/stride/padding/dilation of length 1 or {S} "
            f"(stride 0 values = kernel), pad <= kernel/2, ceil_mode PyTorch's. FLOAT, FLOAT16, BF16.")
    bwd = OpDef(
        name=name + "Backward",
        params=(T("grad_output", dtypes=FLOATS, match="self", shape=lambda p, n, t: None), T("self", dtypes=FLOATS),
                T("indices", dtypes=_IDX, shape=lambda p, n, t: None), A("kernel_size", _ARR), A("stride", _ARR),
                A("padding", _ARR), A("dilation", _ARR), A("ceil_mode", bool),
                T("grad_input", out=True, match="self")),
        ref="self", ranks=(S + 1, S + 2), check=_max_check(True), plan=_max_plan(True), plan_type=_plan_type(S),
        group=GROUP, cudnn=("cudnnPoolingBackward",),
        doc=f"{S}-D max pooling backward: grad_input[i] = Σ grad_output[o] over the outputs whose index is i, "
            f"gathered per input element in a fixed order (deterministic, no atomics). No empty tensors.")
    return fwd, bwd


def _avg_ops(S: int, name: str):
    two = S == 2
    st, pd = ("strides", "paddings") if two else ("stride", "padding")
    extra = (A("cube_math_type", int, optional=True),) if two else ()
    fwd = OpDef(
        name=name,
        params=(T("self", dtypes=FLOATS), A("kernel_size", _ARR), A(st, _ARR), A(pd, _ARR), A("ceil_mode", bool),
                A("count_include_pad", bool), A("divisor_override", int, optional=True), *extra,
                T("out", out=True, match="self", shape=lambda p, n, t: None)),
        ranks=(S + 1, S + 2), check=_avg_check(False, "out", st, pd, two), plan=_avg_plan(False, "out", st),
        plan_type=_plan_type(S), group=GROUP,
        doc=f"{S}-D average pooling: the window mean, divided by divisor_override (0: not set), else by the window "
            f"size with padding (count_include_pad) or without it. FLOAT, FLOAT16, BF16.")
    out_b = "grad_input" if two else "output"
    bwd = OpDef(
        name=name + "Backward",
        params=(T("grad_output", dtypes=FLOATS, match="self", shape=lambda p, n, t: None), T("self", dtypes=FLOATS),
                A("kernel_size", _ARR), A("stride", _ARR), A("padding", _ARR), A("ceil_mode", bool),
                A("count_include_pad", bool), A("divisor_override", int, optional=True),
                *((A("cube_math_type", int, optional=True),) if two else ()),
                T(out_b, out=True, match="self")),
        ref="self", ranks=(S + 1, S + 2), check=_avg_check(True, out_b, cube=two), plan=_avg_plan(True, out_b),
        plan_type=_plan_type(S), group=GROUP, cudnn=("cudnnPoolingBackward",),
        doc=f"{S}-D average pooling backward: each input element gathers grad_output/divisor of the windows that "
            f"contain it, in a fixed order (deterministic). No empty tensors.")
    return fwd, bwd


_OPS = [*_max_ops(2, "MaxPool2dWithIndices"), *_max_ops(3, "MaxPool3dWithArgmax"), *_avg_ops(2, "AvgPool2d"),
        *_avg_ops(3, "AvgPool3d"),
        OpDef(name="AdaptiveAvgPool2d",
              params=(T("self", dtypes=FLOATS), A("output_size", _ARR),
                      T("out", out=True, match="self", shape=lambda p, n, t: None)),
              ranks=(3, 4), check=_adaptive_check(False), plan=_adaptive_plan(False), plan_type=_plan_type(2),
              group=GROUP,
              doc="Adaptive 2-D average pooling to output_size (1 or 2 values): window [floor(o·I/O), "
                  "ceil((o+1)·I/O)). FLOAT, FLOAT16, BF16."),
        OpDef(name="AdaptiveAvgPool2dBackward",
              params=(T("grad_output", dtypes=FLOATS, match="self", shape=lambda p, n, t: None),
                      T("self", dtypes=FLOATS), T("out", out=True, match="self")),
              ref="self", ranks=(3, 4), check=_adaptive_check(True), plan=_adaptive_plan(True),
              plan_type=_plan_type(2), group=GROUP,
              doc="Adaptive 2-D average pooling backward, gathered per input element (deterministic).")]

for _op in _OPS:
    globals()[_op.name] = register(_op, globals())
