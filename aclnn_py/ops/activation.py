"""The activation family (kernels/activation.cu): forward and backward of the pointwise activations.

Every op is one functor of ``kernels/activation.cu`` run by the shared elementwise kernels of
``kernels/include/aclnn/elementwise.cuh``: ``ew_unary`` (forward), ``ew_binary`` (backward, all
operands dense in one order) and ``ew_binary_bcast`` (backward with broadcasting: per-operand
strides, 0 on broadcast dims, the output dense). Adding an activation = a functor + an entry in
``_FWD``/``_BWD`` below.

Forward (CANN header order, snake_case names): ``aclnnRelu(self, out)``, ``aclnnSigmoid``,
``aclnnTanh``, ``aclnnHardtanh(self, clip_value_min, clip_value_max, out)``,
``aclnnElu(self, alpha, scale, input_scale, out)``, ``aclnnSilu``, ``aclnnGelu``,
``aclnnGeluV2(self, approximate, out)`` (int64 0 = erf, 1 = tanh, as the CANN header),
``aclnnLeakyRelu(self, negative_slope, out)``, ``aclnnSoftplus(self, beta, threshold, out)``,
``aclnnHardswish``, ``aclnnHardsigmoid``, ``aclnnSelu``, ``aclnnMish``; out has self's shape and
dtype and may be self exactly (the in-place forms).

Backward: aclnn.md §5 signatures. Broadcasting (NumPy rules, out = the broadcast shape) where the
CANN docs say the inputs broadcast: ThresholdBackward, SigmoidBackward, TanhBackward, GeluBackward,
GeluBackwardV2, LeakyReluBackward, SoftplusBackward, MishBackward; the others take equal shapes.
Every tensor of one call has one dtype (CANN's dtype promotion between gradOutput and self is not
implemented: mixed dtypes are refused with 161002). Scalar attributes are aclScalar of any
numeric dtype (read as a float). Empty tensors: nothing launched, except HardtanhBackward,
SeluBackward and MishBackward, which refuse them (as CANN).

Computation: in f32 for FLOAT/FLOAT16/BF16 (f64 for DOUBLE, the integer type for integer Relu /
ThresholdBackward), in the memory order of ``out`` (or of the input when out is not dense), so
contiguous, channels-last and transposed tensors are used in place; other views are copied into
the workspace. Deterministic (no reductions).
"""
from __future__ import annotations

import numpy as np

from ..dtypes import aclDataType
from ..kernel_cache import declare
from ..opdef import AttrParam as A, Broadcast, FLOATS, OpDef, TensorParam as T, register
from ..plan import Plan, dense_strides, memory_order, on_host
from ..status import AclnnStatus
from ..tensor import aclScalar

__all__ = ["OP_PARAMS", "EW_GEOM", "plan_unary", "plan_binary"]

INVALID = AclnnStatus.ACLNN_ERR_PARAM_INVALID
F32, F16, BF16, F64 = aclDataType.ACL_FLOAT, aclDataType.ACL_FLOAT16, aclDataType.ACL_BF16, aclDataType.ACL_DOUBLE
I8, U8, I32, I64 = aclDataType.ACL_INT8, aclDataType.ACL_UINT8, aclDataType.ACL_INT32, aclDataType.ACL_INT64
GROUP = "Activation"
FAMILY = "activation"

# struct OpParams / EwGeom of aclnn/elementwise.cuh, passed by value
OP_PARAMS = np.dtype([("a", "<f8"), ("b", "<f8"), ("c", "<f8"), ("d", "<f8")])
EW_GEOM = np.dtype([("rank", "<i4"), ("pad", "<i4"), ("numel", "<i8"), ("sizes", "<i8", 8), ("sa", "<i8", 8),
                    ("sb", "<i8", 8)])
BLOCK = 256
_CTYPE = {F32: "float", F16: "__half", BF16: "__nv_bfloat16", F64: "double", I8: "signed char",
          U8: "unsigned char", I32: "int", I64: "long long"}
_ITEMSIZE = {F32: 4, F16: 2, BF16: 2, F64: 8, I8: 1, U8: 1, I32: 4, I64: 8}


def op_params(*vals) -> np.void:
    v = np.zeros((), OP_PARAMS)
    for k, x in zip("abcd", vals):
        v[k] = x
    return v[()]


def _scalar(p: Plan, name: str) -> float:
    return p[name].to_float()


# launch geometry ----------------------------------------------------------------------------------

def _geometry(n: int, itemsize: int) -> tuple[int, int, int]:
    """(grid, block, chunk): elements per thread run. GPU: one 16-byte vector per thread per step;
    the host emulator: one long contiguous run per emulated thread (a plain loop)."""
    if on_host():
        block = 64
        grid = max(1, min(-(-n // (block * 4096)), 64))
        return grid, block, max(1, -(-n // (grid * block)))
    chunk = max(1, 16 // itemsize)
    return max(1, min(-(-n // (chunk * BLOCK)), 65535)), BLOCK, chunk


def _kernel(kind: str, dtype, functor: str) -> str:
    return f"ew_{kind}<{_CTYPE[dtype]}, {functor}>"


def plan_unary(family: str, functor, params, x: str = "self", y: str = "out"):
    """Plan hook of y = f(x) (same shape): functor(plan) -> name, params(plan) -> OpParams."""
    def plan(p: Plan) -> None:
        xt, yt = p[x], p[y]
        if yt.numel == 0:
            return
        order = memory_order(yt) or memory_order(xt) or list(range(xt.rank))
        xp, yp = p.read(x, order), p.write(y, order)
        dt = xt.data_type
        grid, block, chunk = _geometry(yt.numel, _ITEMSIZE[dt])
        p.launch(family, _kernel("unary", dt, functor(p)), grid, block,
                 (xp, yp, np.int64(yt.numel), np.int64(chunk), params(p)))
    return plan


def plan_binary(family: str, functor, params, a: str = "grad_output", b: str = "self", y: str = "out"):
    """Plan hook of y = f(a, b), a and b broadcasting to y's shape."""
    def plan(p: Plan) -> None:
        yt = p[y]
        if yt.numel == 0:
            return
        D, R = yt.view_dims, yt.rank
        order = memory_order(yt)
        if order is None:
            order = next((memory_order(p[n]) for n in (a, b) if p[n].view_dims == D and memory_order(p[n])),
                         None) or list(range(R))
        ptrs, strides = [], []
        for n in (a, b):
            t = p[n]
            off = R - t.rank
            sub = [d - off for d in order if d >= off]
            ptrs.append(p.read(n, sub))
            ds = dense_strides(t.view_dims, sub)
            strides.append([0 if k < off or t.view_dims[k - off] == 1 else ds[k - off] for k in range(R)])
        yp = p.write(y, order)
        dt = yt.data_type
        full = dense_strides(D, order)
        grid, block, chunk = _geometry(yt.numel, _ITEMSIZE[dt])
        fn = functor(p)
        if all(D[k] == 1 or s[k] == full[k] for s in strides for k in range(R)):
            p.launch(family, _kernel("binary", dt, fn), grid, block,
                     (*ptrs, yp, np.int64(yt.numel), np.int64(chunk), params(p)))
            return
        dims = [(D[d], strides[0][d], strides[1][d]) for d in order if D[d] != 1] or [(1, 0, 0)]
        merged = [dims[0]]
        for size, sa, sb in dims[1:]:
            ps, pa, pb = merged[-1]
            if pa == sa * size and pb == sb * size:
                merged[-1] = (ps * size, sa, sb)
            else:
                merged.append((size, sa, sb))
        g = np.zeros((), EW_GEOM)
        g["rank"], g["numel"] = len(merged), yt.numel
        for i, (size, sa, sb) in enumerate(merged):
            g["sizes"][i], g["sa"][i], g["sb"][i] = size, sa, sb
        inner = merged[-1][0]
        tile = min(chunk, inner)
        units = yt.numel // inner * -(-inner // tile)
        grid = max(1, min(-(-units // block), 65535 if block == BLOCK else 64))
        p.launch(family, _kernel("binary_bcast", dt, fn), grid, block, (*ptrs, yp, np.int64(tile), g[()], params(p)))
    return plan


# shape rules --------------------------------------------------------------------------------------

def _broadcast_shape(shapes):
    R = max(len(s) for s in shapes)
    out = []
    for k in range(R):
        ds = [s[k - (R - len(s))] for s in shapes if k >= R - len(s)]
        big = [d for d in ds if d != 1]
        out.append(big[0] if big else 1)
    return tuple(out)


def broadcast_out(*ins: str):
    """Shape rule of an output: exactly the broadcast shape of inputs ``ins`` (and a rank in the op's range)."""
    def rule(plan: Plan, name: str, t) -> None:
        want = _broadcast_shape([plan[n].view_dims for n in ins])
        if tuple(t.view_dims) != want:
            plan.fail(INVALID, f"{name} shape must be the broadcast shape {want} of {', '.join(ins)}, "
                               f"got {tuple(t.view_dims)}")
    return rule


def _rank_rule(lo: int, hi: int, inner=None):
    def rule(plan: Plan, name: str, t) -> None:
        if not lo <= t.rank <= hi:
            plan.fail(INVALID, f"{name} rank must be in [{lo}, {hi}], got {t.rank} (shape {tuple(t.view_dims)})")
        if inner is not None:
            inner(plan, name, t)
    return rule


def _real_scalars(p: Plan) -> None:
    """aclScalar attributes may have any real numeric dtype (bool and integers included), not a complex one."""
    for a in p.op.attrs:
        v = p[a.name]
        if isinstance(v, aclScalar) and np.iscomplexobj(v.value):
            p.fail(INVALID, f"{a.name} must be a real scalar, got {aclDataType(v.data_type).name}")


def _with_scalar_check(check):
    def both(p: Plan) -> None:
        _real_scalars(p)
        if check is not None:
            check(p)
    return both


def _no_empty(*names):
    def check(plan: Plan) -> None:
        for n in names:
            if plan[n] is not None and plan[n].numel == 0:
                plan.fail(INVALID, f"{n} is empty (shape {tuple(plan[n].view_dims)}); this op does not take "
                                   f"empty tensors")
    return check


# the ops ------------------------------------------------------------------------------------------

_FLOATS_D = FLOATS | {F64}
_KERNELS: list[str] = []


def _declare(kind: str, functor: str, dtypes) -> None:
    for dt in sorted(dtypes):
        name = _kernel(kind, dt, functor)
        if name not in _KERNELS:
            _KERNELS.append(name)


def _fixed(name):
    return lambda p: name


def _no_params(p):
    return op_params()


def forward(name: str, functor, *, attrs=(), params=_no_params, dtypes=FLOATS, ranks=(0, 8), formula="",
            functors=None, check=None) -> OpDef:
    fn = _fixed(functor) if isinstance(functor, str) else functor
    for f in (functors or (functor,)):
        _declare("unary", f, dtypes)
    dn = ", ".join(sorted(aclDataType(d).name[4:] for d in dtypes))
    return OpDef(
        name=name, params=(T("self", dtypes=dtypes), *attrs, T("out", out=True, dtypes=dtypes, match="self",
                                                                alias=("self",))),
        ranks=ranks, plan=plan_unary(FAMILY, fn, params), check=_with_scalar_check(check), group=GROUP,
        doc=f"out = {formula}. {dn}; out has self's shape and dtype; ranks {ranks[0]}–{ranks[1]}; out may be self "
            f"(in place). Empty: nothing launched.")


def backward(name: str, functor, saved: str, out: str, *, attrs=(), params=_no_params, dtypes=FLOATS,
             ranks=(0, 8), bcast=False, formula="", functors=None, check=None, grad_first=True, cudnn=()) -> OpDef:
    fn = _fixed(functor) if isinstance(functor, str) else functor
    for f in (functors or (functor,)):
        _declare("binary", f, dtypes)
        if bcast:
            _declare("binary_bcast", f, dtypes)
    if bcast:
        saved_p = T(saved, dtypes=dtypes, match="grad_output", shape=_rank_rule(*ranks, Broadcast("grad_output")))
        out_p = T(out, out=True, dtypes=dtypes, match="grad_output", alias=("grad_output",),
                  shape=_rank_rule(*ranks, broadcast_out("grad_output", saved)))
    else:
        saved_p = T(saved, dtypes=dtypes, match="grad_output")
        out_p = T(out, out=True, dtypes=dtypes, match="grad_output", alias=("grad_output",))
    g = T("grad_output", dtypes=dtypes)
    params_ = (g, *attrs, saved_p, out_p) if not grad_first else (g, saved_p, *attrs, out_p)
    dn = ", ".join(sorted(aclDataType(d).name[4:] for d in dtypes))
    shapes = ("grad_output and " + saved + " broadcast (NumPy rules); " + out + " has the broadcast shape"
              if bcast else "all shapes equal")
    return OpDef(
        name=name, params=params_, ranks=ranks, check=_with_scalar_check(check), group=GROUP, cudnn=cudnn,
        plan=plan_binary(FAMILY, fn, params, "grad_output", saved, out),
        doc=f"{out} = {formula} (g = grad_output). {dn}, one dtype for all; ranks {ranks[0]}–{ranks[1]}; {shapes}; "
            f"{out} may be grad_output (in place).")


S = lambda n: A(n, aclScalar)          # noqa: E731  an aclScalar attribute of any numeric dtype


def _elu_bwd_check(p: Plan) -> None:
    if p["is_result"] and _scalar(p, "alpha") < 0:
        p.fail(INVALID, f"alpha must be >= 0 when is_result is true, got {_scalar(p, 'alpha')}")


def _leaky_bwd_check(p: Plan) -> None:
    if p["self_is_result"] and _scalar(p, "negative_slope") < 0:
        p.fail(INVALID, f"negative_slope must be >= 0 when self_is_result is true (the forward cannot be inverted), "
                        f"got {_scalar(p, 'negative_slope')}")


def _both(*checks):
    def check(p):
        for c in checks:
            c(p)
    return check


_OPS = [
    forward("Relu", "Relu", dtypes=FLOATS | {I8, I32, I64}, formula="max(self, 0)"),
    forward("Sigmoid", "Sigmoid", formula="1 / (1 + exp(−self))"),
    forward("Tanh", "Tanh", dtypes=_FLOATS_D, formula="tanh(self)"),
    forward("Hardtanh", "Hardtanh", attrs=(S("clip_value_min"), S("clip_value_max")),
            params=lambda p: op_params(_scalar(p, "clip_value_min"), _scalar(p, "clip_value_max")),
            formula="clamp(self, clip_value_min, clip_value_max)"),
    forward("Elu", "Elu", attrs=(S("alpha"), S("scale"), S("input_scale")),
            params=lambda p: op_params(_scalar(p, "alpha"), _scalar(p, "scale"), _scalar(p, "input_scale")),
            formula="scale·self if self > 0 else scale·alpha·expm1(input_scale·self)"),
    forward("Silu", "Silu", formula="self·sigmoid(self)"),
    forward("Gelu", "GeluErf", formula="½·self·erfc(−self/√2)"),
    forward("GeluV2", lambda p: ("GeluErf", "GeluTanh")[p["approximate"]], functors=("GeluErf", "GeluTanh"),
            attrs=(A("approximate", int, choices=(0, 1)),),
            formula="GELU with approximate 0 (erf) or 1 (tanh: ½x(1 + tanh(√(2/π)(x + 0.044715x³))))"),
    forward("LeakyRelu", "LeakyRelu", attrs=(S("negative_slope"),), params=lambda p: op_params(_scalar(p, "negative_slope")),
            formula="self if self > 0 else negative_slope·self"),
    forward("Softplus", "Softplus", attrs=(S("beta"), S("threshold")),
            params=lambda p: op_params(_scalar(p, "beta"), _scalar(p, "threshold")),
            formula="self if beta·self > threshold else log(1 + exp(beta·self))/beta"),
    forward("Hardswish", "Hardswish", formula="self·clamp(self + 3, 0, 6)/6"),
    forward("Hardsigmoid", "Hardsigmoid", formula="clamp(self + 3, 0, 6)/6"),
    forward("Selu", "Selu", ranks=(1, 8), formula="1.0507·(self if self > 0 else 1.67326·expm1(self))"),
    forward("Mish", "Mish", formula="self·tanh(softplus(self))"),

    backward("ThresholdBackward", "ThresholdBwd", "self", "out", attrs=(S("threshold"),),
             params=lambda p: op_params(_scalar(p, "threshold")), dtypes=FLOATS | {I8, U8, I32, I64}, bcast=True,
             formula="0 where self <= threshold, else g"),
    backward("SigmoidBackward", "SigmoidBwd", "output", "grad_input", dtypes=_FLOATS_D, ranks=(1, 8), bcast=True,
             formula="g·output·(1 − output)"),
    backward("TanhBackward", "TanhBwd", "output", "grad_input", dtypes=_FLOATS_D, bcast=True,
             formula="g·(1 − output²)"),
    backward("HardtanhBackward", "HardtanhBwd", "self", "out", attrs=(S("min"), S("max")),
             params=lambda p: op_params(_scalar(p, "min"), _scalar(p, "max")),
             check=_no_empty("grad_output", "self", "out"), formula="0 where self <= min or self >= max, else g"),
    backward("EluBackward", lambda p: "EluBwd<true>" if p["is_result"] else "EluBwd<false>", "self_or_result",
             "grad_input", functors=("EluBwd<true>", "EluBwd<false>"),
             attrs=(S("alpha"), S("scale"), S("input_scale"), A("is_result", bool)), grad_first=False,
             params=lambda p: op_params(_scalar(p, "alpha"), _scalar(p, "scale"), _scalar(p, "input_scale")),
             check=_elu_bwd_check,
             formula="g·scale where x > 0; else g·input_scale·(x + alpha·scale) (is_result) or "
                     "g·input_scale·alpha·scale·exp(input_scale·x)"),
    backward("SiluBackward", "SiluBwd", "self", "grad_input", ranks=(1, 8),
             formula="g·σ(self)·(1 + self·(1 − σ(self)))"),
    backward("GeluBackward", "GeluErfBwd", "self", "grad_input", bcast=True, formula="g·(Φ(self) + self·φ(self))"),
    backward("GeluBackwardV2", lambda p: "GeluErfBwd" if p["approximate"] == "none" else "GeluTanhBwd", "self",
             "grad_input", functors=("GeluErfBwd", "GeluTanhBwd"), attrs=(A("approximate", str, choices=("none", "tanh")),),
             bcast=True, formula="GELU' (approximate \"none\": erf, \"tanh\": the tanh form)·g"),
    backward("LeakyReluBackward", "LeakyReluBwd", "self", "out", attrs=(S("negative_slope"), A("self_is_result", bool)),
             params=lambda p: op_params(_scalar(p, "negative_slope")), dtypes=_FLOATS_D, bcast=True,
             check=_leaky_bwd_check, formula="g where self > 0, else negative_slope·g"),
    backward("SoftplusBackward", "SoftplusBwd", "self", "grad_input", attrs=(S("beta"), S("threshold")),
             params=lambda p: op_params(_scalar(p, "beta"), _scalar(p, "threshold")), dtypes=_FLOATS_D, bcast=True,
             formula="g where beta·self > threshold, else g·σ(beta·self)"),
    backward("HardswishBackward", "HardswishBwd", "self", "out",
             formula="0 where self <= −3, g·(self/3 + ½) where self < 3, else g"),
    backward("HardsigmoidBackward", "HardsigmoidBwd", "self", "out", formula="g/6 where −3 < self < 3, else 0"),
    backward("SeluBackward", "SeluBwd", "result", "grad_input", ranks=(1, 8),
             check=_no_empty("grad_output", "result", "grad_input"),
             formula="g·1.0507 where result > 0, else g·(result + 1.0507·1.67326)"),
    backward("MishBackward", "MishBwd", "self", "grad_input", bcast=True,
             check=_no_empty("grad_output", "self", "grad_input"),
             formula="g·(tanh(sp(self)) + self·σ(self)·(1 − tanh²(sp(self))))"),
]

# what the cuDNN face (aclnn_py/cudnn/activation.py) launches beyond the aclnn ops: DOUBLE tensors and
# CUDNN_ACTIVATION_SWISH (x·σ(βx)), through the same plan_unary / plan_binary
CUDNN_FWD = {"SIGMOID": "Sigmoid", "RELU": "Relu", "TANH": "Tanh", "CLIPPED_RELU": "Hardtanh", "ELU": "Elu",
             "SWISH": "Swish"}
CUDNN_BWD = {"SIGMOID": "SigmoidBwd", "RELU": "ThresholdBwd", "TANH": "TanhBwd", "CLIPPED_RELU": "HardtanhBwd",
             "ELU": "EluBwd<false>", "SWISH": "SwishBwd"}
for _f in CUDNN_FWD.values():
    _declare("unary", _f, _FLOATS_D)
for _f in CUDNN_BWD.values():
    _declare("binary", _f, _FLOATS_D)
    _declare("binary_bcast", _f, _FLOATS_D)



def _cudnn_params(p: Plan):
    """OpParams of cuDNN's modes from (coef, swish_beta): CLIPPED_RELU clamps to [0, coef], ELU's alpha
    is coef (scale 1, input scale 1), SWISH's beta is swish_beta, RELU's threshold 0."""
    m, coef = p["mode"], p["coef"]
    return {"CLIPPED_RELU": op_params(0.0, coef), "ELU": op_params(coef, 1.0, 1.0),
            "SWISH": op_params(p["swish_beta"])}.get(m, op_params(0.0))


_SAVED_OUTPUT = ("SIGMOID", "TANH")          # their derivatives use the forward output y, the others x
_CUDNN_DOC = ("aclnn-py extension behind cudnnActivation{}: mode one of SIGMOID, RELU, TANH, CLIPPED_RELU "
              "(coef = ceiling), ELU (coef = alpha), SWISH (swish_beta); FLOAT, FLOAT16, BF16, DOUBLE. ")
_cudnn_bwd = {b: plan_binary(FAMILY, lambda p: CUDNN_BWD[p["mode"]], _cudnn_params, "grad_output", b, "out")
              for b in ("self", "output")}

_OPS += [
    OpDef(name="pyActivation", params=(T("self", dtypes=_FLOATS_D), A("mode", str, choices=tuple(CUDNN_FWD)),
                                       A("coef", float), A("swish_beta", float),
                                       T("out", out=True, dtypes=_FLOATS_D, match="self", alias=("self",))),
          plan=plan_unary(FAMILY, lambda p: CUDNN_FWD[p["mode"]], _cudnn_params), group=GROUP,
          doc=_CUDNN_DOC.format("Forward") + "out = f(self); out may be self."),
    OpDef(name="pyActivationBackward",
          params=(T("grad_output", dtypes=_FLOATS_D), T("self", dtypes=_FLOATS_D, match="grad_output"),
                  T("output", dtypes=_FLOATS_D, match="grad_output"), A("mode", str, choices=tuple(CUDNN_BWD)),
                  A("coef", float), A("swish_beta", float),
                  T("out", out=True, dtypes=_FLOATS_D, match="grad_output", alias=("grad_output",))),
          plan=lambda p: _cudnn_bwd["output" if p["mode"] in _SAVED_OUTPUT else "self"](p), group=GROUP,
          cudnn=("cudnnActivationBackward",),
          doc=_CUDNN_DOC.format("Backward") + "out = g·f'(self) (SIGMOID, TANH from output); one shape; out may "
              "be grad_output."),
]

declare(FAMILY, _KERNELS)
for _op in _OPS:
    globals()[_op.name] = register(_op, globals())
