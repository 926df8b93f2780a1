"""OpInfos of the activation family (aclnn.md §5 Activations): every forward and backward op.

One table (``SPECS``) says per op: forward or backward, its saved tensor and output names, dtypes,
ranks, whether inputs broadcast, default and varied scalar attributes (aclScalar of several
dtypes), a float64 NumPy reference and PyTorch's op. Samples cover every dtype, every rank of the
op's range, every layout the harness builds (and outputs in another layout), broadcasting (lower
rank, size-1 dims on either side, channels-last), size-1 and empty dims, and extreme values
(large |x|, values near 0, NaN); error cases name the argument the message must mention.
"""
from __future__ import annotations

import math

import numpy as np

import aclnn_py as A
from harness import Sample, TensorSpec
from opdb import ErrorCase, OpInfo

F32, F16, BF16, F64 = A.ACL_FLOAT, A.ACL_FLOAT16, A.ACL_BF16, A.ACL_DOUBLE
I8, U8, I32, I64 = A.ACL_INT8, A.ACL_UINT8, A.ACL_INT32, A.ACL_INT64
INVALID, NULLPTR = A.ACLNN_ERR_PARAM_INVALID, A.ACLNN_ERR_PARAM_NULLPTR
ND = A.ACL_FORMAT_ND
FLOATS = (F32, F16, BF16)
INTS = (I8, U8, I32, I64)

try:
    from scipy.special import erfc as _erfc, expit as _expit
except ImportError:                                     # pragma: no cover
    _erfc = np.vectorize(math.erfc, otypes=[np.float64])

    def _expit(x):
        with np.errstate(over="ignore"):
            return np.where(x >= 0, 1 / (1 + np.exp(-np.abs(x))), np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x))))

SELU_A, SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
K_TANH = math.sqrt(2 / math.pi)


def scalar(v, dt=F32):
    return A.aclCreateScalar(v, dt)


def sv(s, name) -> float:
    return s.attrs[name].to_float()


# float64 references -----------------------------------------------------------------------------

def _sp(z):
    return np.logaddexp(0.0, z)


def gelu_erf(x):
    return 0.5 * x * _erfc(-x / math.sqrt(2))


def gelu_tanh(x):          # ½x(1 + tanh u) = x·σ(2u): no cancellation in the negative tail
    with np.errstate(over="ignore", invalid="ignore"):
        return x * _expit(2 * K_TANH * (x + 0.044715 * x ** 3))


def gelu_erf_bwd(g, x):
    with np.errstate(over="ignore", invalid="ignore"):
        return g * (0.5 * _erfc(-x / math.sqrt(2)) + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi))


def gelu_tanh_bwd(g, x):
    with np.errstate(over="ignore", invalid="ignore"):
        sg = _expit(2 * K_TANH * (x + 0.044715 * x ** 3))      # ½(1 + tanh u); 1 − tanh² u = 4σ(1 − σ)
        return g * (sg + 2 * x * sg * (1 - sg) * K_TANH * (1 + 3 * 0.044715 * x * x))


def elu(x, alpha, scale, iscale):
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(x > 0, scale * x, scale * alpha * np.expm1(x * iscale))


def elu_bwd(g, x, alpha, scale, iscale, is_result):
    with np.errstate(over="ignore", invalid="ignore"):
        neg = g * iscale * (x + alpha * scale) if is_result else g * iscale * alpha * scale * np.exp(x * iscale)
        return np.where(x <= 0, neg, g * scale)


def softplus(x, beta, thr):
    return np.where(x * beta > thr, x, _sp(beta * x) / beta)


def hardswish(x):
    return x * np.clip(x + 3, 0, 6) / 6


def mish(x):
    return x * np.tanh(_sp(x))


def mish_bwd(g, x):
    t = np.tanh(_sp(x))
    return g * (t + x * _expit(x) * (1 - t * t))


# op table ---------------------------------------------------------------------------------------
# kind, saved (backward), out name, dtypes, ranks, bcast, default attrs, attr variants, reference, torch,
# saved values from logits z (backward), empty allowed

def _d(**kw):
    return lambda: dict(kw)


def _spec(kind, ref, torch, *, saved=None, out="out", dtypes=FLOATS, ranks=(0, 8), bcast=False, attrs=_d(),
          variants=(), saved_from=None, empty=True, xscale=3.0):
    return dict(kind=kind, ref=ref, torch=torch, saved=saved, out=out, dtypes=dtypes, ranks=ranks, bcast=bcast,
                attrs=attrs, variants=variants, saved_from=saved_from, empty=empty, xscale=xscale)


def _T():
    import torch
    return torch


def _F():
    import torch.nn.functional as F
    return F


def _aten():
    import torch
    return torch.ops.aten


SPECS = {
    "Relu": _spec("fwd", lambda x, s: np.maximum(x, 0), lambda x, s: _T().relu(x), dtypes=FLOATS + (I8, I32, I64)),
    "Sigmoid": _spec("fwd", lambda x, s: _expit(x), lambda x, s: _T().sigmoid(x)),
    "Tanh": _spec("fwd", lambda x, s: np.tanh(x), lambda x, s: _T().tanh(x), dtypes=FLOATS + (F64,)),
    "Hardtanh": _spec("fwd", lambda x, s: np.minimum(np.maximum(x, sv(s, "clip_value_min")), sv(s, "clip_value_max")),
                      lambda x, s: _F().hardtanh(x, sv(s, "clip_value_min"), sv(s, "clip_value_max")),
                      attrs=lambda: {"clip_value_min": scalar(-1.0), "clip_value_max": scalar(1.0)},
                      variants=(lambda: {"clip_value_min": scalar(-2, I32), "clip_value_max": scalar(3, I64)},
                                lambda: {"clip_value_min": scalar(0.25, F64), "clip_value_max": scalar(0.5, F16)})),
    "Elu": _spec("fwd", lambda x, s: elu(x, sv(s, "alpha"), sv(s, "scale"), sv(s, "input_scale")),
                 lambda x, s: _aten().elu(x, sv(s, "alpha"), sv(s, "scale"), sv(s, "input_scale")),
                 attrs=lambda: {"alpha": scalar(1.0), "scale": scalar(1.0), "input_scale": scalar(1.0)},
                 variants=(lambda: {"alpha": scalar(0.5, F64), "scale": scalar(2, I32), "input_scale": scalar(1.5, F16)},
                           lambda: {"alpha": scalar(1.7, BF16), "scale": scalar(1.05), "input_scale": scalar(3, I64)})),
    "Silu": _spec("fwd", lambda x, s: x * _expit(x), lambda x, s: _F().silu(x)),
    "Gelu": _spec("fwd", lambda x, s: gelu_erf(x), lambda x, s: _F().gelu(x)),
    "GeluV2": _spec("fwd", lambda x, s: (gelu_erf, gelu_tanh)[s.attrs["approximate"]](x),
                    lambda x, s: _F().gelu(x, approximate=("none", "tanh")[s.attrs["approximate"]]),
                    attrs=_d(approximate=0), variants=(_d(approximate=1),)),
    "LeakyRelu": _spec("fwd", lambda x, s: np.where(x > 0, x, x * sv(s, "negative_slope")),
                       lambda x, s: _F().leaky_relu(x, sv(s, "negative_slope")),
                       attrs=lambda: {"negative_slope": scalar(0.01)},
                       variants=(lambda: {"negative_slope": scalar(0.2, F64)}, lambda: {"negative_slope": scalar(-1.5, F16)},
                                 lambda: {"negative_slope": scalar(2, I64)})),
    "Softplus": _spec("fwd", lambda x, s: softplus(x, sv(s, "beta"), sv(s, "threshold")),
                      lambda x, s: _F().softplus(x, sv(s, "beta"), sv(s, "threshold")),
                      attrs=lambda: {"beta": scalar(1.0), "threshold": scalar(20.0)},
                      variants=(lambda: {"beta": scalar(2, I32), "threshold": scalar(5.0, F64)},
                                lambda: {"beta": scalar(0.5, F16), "threshold": scalar(100, I64)})),
    "Hardswish": _spec("fwd", lambda x, s: hardswish(x), lambda x, s: _F().hardswish(x)),
    "Hardsigmoid": _spec("fwd", lambda x, s: np.clip(x + 3, 0, 6) / 6, lambda x, s: _F().hardsigmoid(x)),
    "Selu": _spec("fwd", lambda x, s: SELU_S * np.where(x > 0, x, SELU_A * np.expm1(np.minimum(x, 0))),
                  lambda x, s: _F().selu(x), ranks=(1, 8)),
    "Mish": _spec("fwd", lambda x, s: mish(x), lambda x, s: _F().mish(x)),

    "ThresholdBackward": _spec("bwd", lambda g, x, s: np.where(x <= sv(s, "threshold"), 0.0, g),
                               lambda g, x, s: _aten().threshold_backward(g, x, sv(s, "threshold")),
                               saved="self", dtypes=FLOATS + INTS, bcast=True, attrs=lambda: {"threshold": scalar(0.0)},
                               variants=(lambda: {"threshold": scalar(0.5, F64)}, lambda: {"threshold": scalar(1, I32)},
                                         lambda: {"threshold": scalar(-1.25, F16)})),
    "SigmoidBackward": _spec("bwd", lambda g, y, s: g * y * (1 - y), lambda g, y, s: _aten().sigmoid_backward(g, y),
                             saved="output", out="grad_input", dtypes=FLOATS + (F64,), ranks=(1, 8), bcast=True,
                             saved_from=lambda z, s: _expit(z)),
    "TanhBackward": _spec("bwd", lambda g, y, s: g * (1 - y * y), lambda g, y, s: _aten().tanh_backward(g, y),
                          saved="output", out="grad_input", dtypes=FLOATS + (F64,), bcast=True,
                          saved_from=lambda z, s: np.tanh(z)),
    "HardtanhBackward": _spec("bwd", lambda g, x, s: np.where((x <= sv(s, "min")) | (x >= sv(s, "max")), 0.0, g),
                              lambda g, x, s: _aten().hardtanh_backward(g, x, sv(s, "min"), sv(s, "max")),
                              saved="self", attrs=lambda: {"min": scalar(-1.0), "max": scalar(1.0)},
                              variants=(lambda: {"min": scalar(-2, I64), "max": scalar(0.5, F64)},), empty=False),
    "EluBackward": _spec("bwd", lambda g, x, s: elu_bwd(g, x, sv(s, "alpha"), sv(s, "scale"), sv(s, "input_scale"),
                                                        s.attrs["is_result"]),
                         lambda g, x, s: _aten().elu_backward(g, sv(s, "alpha"), sv(s, "scale"), sv(s, "input_scale"),
                                                              s.attrs["is_result"], x),
                         saved="self_or_result", out="grad_input",
                         attrs=lambda: {"alpha": scalar(1.0), "scale": scalar(1.0), "input_scale": scalar(1.0),
                                        "is_result": False},
                         variants=(lambda: {"alpha": scalar(0.5, F64), "scale": scalar(2, I32),
                                            "input_scale": scalar(1.5, F16), "is_result": True},
                                   lambda: {"alpha": scalar(1.2), "scale": scalar(1.05), "input_scale": scalar(0.5),
                                            "is_result": False}),
                         saved_from=lambda z, s: (elu(z, sv(s, "alpha"), sv(s, "scale"), sv(s, "input_scale"))
                                                  if s.attrs["is_result"] else z)),
    "SiluBackward": _spec("bwd", lambda g, x, s: g * _expit(x) * (1 + x * (1 - _expit(x))),
                          lambda g, x, s: _aten().silu_backward(g, x), saved="self", out="grad_input", ranks=(1, 8)),
    "GeluBackward": _spec("bwd", lambda g, x, s: gelu_erf_bwd(g, x), lambda g, x, s: _aten().gelu_backward(g, x),
                          saved="self", out="grad_input", bcast=True),
    "GeluBackwardV2": _spec("bwd", lambda g, x, s: (gelu_erf_bwd if s.attrs["approximate"] == "none" else gelu_tanh_bwd)(g, x),
                            lambda g, x, s: _aten().gelu_backward(g, x, approximate=s.attrs["approximate"]),
                            saved="self", out="grad_input", bcast=True, attrs=_d(approximate="none"),
                            variants=(_d(approximate="tanh"),)),
    "LeakyReluBackward": _spec("bwd", lambda g, x, s: np.where(x > 0, g, g * sv(s, "negative_slope")),
                               lambda g, x, s: _aten().leaky_relu_backward(g, x, sv(s, "negative_slope"),
                                                                           s.attrs["self_is_result"]),
                               saved="self", dtypes=FLOATS + (F64,), bcast=True,
                               attrs=lambda: {"negative_slope": scalar(0.01), "self_is_result": False},
                               variants=(lambda: {"negative_slope": scalar(0.3, F64), "self_is_result": True},
                                         lambda: {"negative_slope": scalar(-2, I32), "self_is_result": False})),
    "SoftplusBackward": _spec("bwd", lambda g, x, s: np.where(x * sv(s, "beta") > sv(s, "threshold"), g,
                                                              g * _expit(x * sv(s, "beta"))),
                              lambda g, x, s: _aten().softplus_backward(g, x, sv(s, "beta"), sv(s, "threshold")),
                              saved="self", out="grad_input", dtypes=FLOATS + (F64,), bcast=True,
                              attrs=lambda: {"beta": scalar(1.0), "threshold": scalar(20.0)},
                              variants=(lambda: {"beta": scalar(2, I64), "threshold": scalar(3.0, F64)},)),
    "HardswishBackward": _spec("bwd", lambda g, x, s: np.where(x <= -3, 0.0, np.where(x < 3, g * (x / 3 + 0.5), g)),
                               lambda g, x, s: _aten().hardswish_backward(g, x), saved="self"),
    "HardsigmoidBackward": _spec("bwd", lambda g, x, s: np.where((x > -3) & (x < 3), g / 6, 0.0),
                                 lambda g, x, s: _aten().hardsigmoid_backward(g, x), saved="self"),
    "SeluBackward": _spec("bwd", lambda g, y, s: np.where(y <= 0, g * (y + SELU_A * SELU_S), g * SELU_S),
                          lambda g, y, s: _aten().elu_backward(g, SELU_A, SELU_S, 1.0, True, y),
                          saved="result", out="grad_input", ranks=(1, 8), empty=False,
                          saved_from=lambda z, s: SELU_S * np.where(z > 0, z, SELU_A * np.expm1(np.minimum(z, 0)))),
    "MishBackward": _spec("bwd", lambda g, x, s: mish_bwd(g, x), lambda g, x, s: _aten().mish_backward(g, x),
                          saved="self", out="grad_input", bcast=True, empty=False),
}


# samples ----------------------------------------------------------------------------------------

def _ts(values, dtype, layout="contiguous"):
    v = np.asarray(values, np.float64)
    if dtype in INTS:
        lo = 0 if dtype == U8 else -100
        v = np.clip(np.round(v * 10), lo, 100)
    return TensorSpec(v, dtype, ND, layout)


def make(name, rng, shape, dtype=F32, *, layout="contiguous", out_layout=None, values=None, gshape=None, attrs=None,
         glayout=None, note=""):
    """A call of op ``name``: forward on ``shape``; backward with grad_output of ``gshape`` (default: shape)
    and the saved tensor of ``shape`` broadcasting to the output."""
    sp = SPECS[name]
    at = sp["attrs"]() if attrs is None else attrs
    s = Sample({}, at, note=note)
    z = rng.standard_normal(shape) * sp["xscale"] if values is None else np.asarray(values, np.float64)
    if sp["kind"] == "fwd":
        s.tensors = {"self": _ts(z, dtype, layout), "out": _ts(np.zeros(shape), dtype, out_layout or layout)}
        return s
    gshape = shape if gshape is None else gshape
    x = sp["saved_from"](z, s) if sp["saved_from"] else z
    oshape = np.broadcast_shapes(tuple(gshape), tuple(shape))
    g = rng.standard_normal(gshape)
    s.tensors = {"grad_output": _ts(g, dtype, glayout or layout), sp["saved"]: _ts(x, dtype, layout),
                 sp["out"]: _ts(np.zeros(oshape), dtype, out_layout or layout)}
    return s


EXTREMES = np.array([-1e4, -100.0, -88.0, -50.0, -20.0, -10.0, -5.0, -3.0, -2.5, -1.0, -1e-3, -1e-6, -1e-20, 0.0,
                     1e-20, 1e-6, 1e-3, 0.5, 1.0, 3.0, 5.0, 10.0, 19.5, 20.5, 50.0, 88.0, 100.0, 1e4, np.nan])


def _extremes(name, dtype):
    v = EXTREMES.copy()
    if dtype in (F16,):
        v = v[np.abs(np.nan_to_num(v)) < 6e4]
    if dtype in INTS:
        v = np.nan_to_num(v)[:10] / 100
    return v


def samples_of(name):
    sp = SPECS[name]
    lo, hi = sp["ranks"]

    def samples(rng):
        m = lambda *a, **k: make(name, rng, *a, **k)     # noqa: E731
        out = [m((3, 4, 5), note="3-D contiguous"), m((2, 3, 4), note="3-D")]
        for dt in sp["dtypes"]:
            out += [m((4, 7), dt, note=f"{A.aclDataType(dt).name} 2-D"),
                    m((3, 37), dt, layout="transposed", note=f"{A.aclDataType(dt).name} transposed")]
        for r in range(lo, hi + 1):
            out.append(m(tuple([2, 3, 1, 2, 3, 2, 1, 2][:r]), note=f"rank {r}"))
        out += [
            m((2, 3, 4, 5), layout="channels_last", note="channels-last"),
            m((3, 4, 5), layout="transposed", note="transposed"),
            m((3, 5, 6), layout="strided", note="strided views (copied)"),
            m((3, 5, 6), F16, layout="offset", note="at an element offset"),
            m((3, 5, 6), out_layout="strided", note="contiguous in, strided out"),
            m((4, 3), out_layout="transposed", note="contiguous in, transposed out"),
            m((1, 1, 1), note="all size 1"),
            m((5000,), note="long 1-D (many threads)"),
            m((2, 3, 2000), BF16, note="bf16, long"),
        ]
        for dt in sp["dtypes"]:
            if dt in FLOATS + (F64,):
                v = _extremes(name, dt)
                out.append(m(v.shape, dt, values=v, note=f"{A.aclDataType(dt).name} extreme values"))
        for i, var in enumerate(sp["variants"]):
            out += [m((4, 6), attrs=var(), note=f"attribute variant {i}"),
                    m((4, 6), F16, attrs=var(), note=f"attribute variant {i}, f16")]
            v = _extremes(name, F32)
            out.append(m(v.shape, F32, values=v, attrs=var(), note=f"attribute variant {i}, extremes"))
        if sp["bcast"]:
            out += [
                m((1, 3, 5), gshape=(4, 1, 5), note="broadcast both ways"),
                m((2, 3, 5), gshape=(3, 5), note="grad_output of lower rank"),
                m((5,), gshape=(2, 3, 4, 5), note="saved tensor 1-D"),
                m((2, 3), gshape=(1,), note="grad_output of one element"),
                m((1, 3, 1, 1), gshape=(2, 3, 4, 5), glayout="channels_last", out_layout="channels_last",
                  note="per-channel saved tensor, channels-last"),
                m((3, 1, 7), gshape=(3, 4, 7), layout="transposed", note="broadcast, transposed"),
                m((2, 1, 300), F16, gshape=(2, 50, 300), note="broadcast, long rows"),
                m((4, 1), gshape=(4, 1000), note="broadcast along a long inner dim"),
            ]
            if lo == 0:
                out.append(m((2, 3), gshape=(), note="rank-0 grad_output"))
            if sp["empty"]:
                out.append(m((1, 3), gshape=(0, 3), note="broadcast, empty"))
        if sp["empty"]:
            out += [m((0, 4), note="empty"), m((2, 0, 3), F16, note="empty middle dim")]
        return out
    return samples


def _vals(s):
    return {k: v.rounded() for k, v in s.tensors.items() if v is not None}


def reference_of(name):
    sp = SPECS[name]

    def ref(s):
        t = _vals(s)
        with np.errstate(all="ignore"):
            if sp["kind"] == "fwd":
                x = t["self"]
                return {"out": np.asarray(sp["ref"](x, s), np.float64)} if x.size else {}
            g, x = t["grad_output"], t[sp["saved"]]
            o = t[sp["out"]]
            if not o.size:
                return {}
            return {sp["out"]: np.broadcast_to(np.asarray(sp["ref"](g, x, s), np.float64), o.shape)}
    return ref


def torch_of(name):
    sp = SPECS[name]

    def ref(s):
        if s.tensors[sp["out"]].dtype not in FLOATS:     # the generic comparison has f32/f16/bf16 tolerances only;
            return {}                                    # DOUBLE and integer calls are checked by `reference`
        torch = _T()
        t = {k: torch.from_numpy(v) for k, v in _vals(s).items()}
        if sp["kind"] == "fwd":
            return {"out": sp["torch"](t["self"], s).numpy()}
        g, x = torch.broadcast_tensors(t["grad_output"], t[sp["saved"]])
        return {sp["out"]: sp["torch"](g.contiguous(), x.contiguous(), s).numpy()}
    return ref


def _data_dtype(name):
    data = "self" if SPECS[name]["kind"] == "fwd" else "grad_output"

    def dd(s):
        dt = s.tensors[data].dtype
        return dt if dt in (F16, BF16) else F32           # DOUBLE and integers: f32's (tighter than needed) tolerance
    return dd


# errors -----------------------------------------------------------------------------------------

def errors_of(name):
    sp = SPECS[name]
    fwd = sp["kind"] == "fwd"
    ins = ("self",) if fwd else ("grad_output", sp["saved"])
    out_n = sp["out"]
    lo, hi = sp["ranks"]

    def errors(rng):
        def case(note, status, names, fn=None, shape=(2, 3, 4), dtype=F32, **kw):
            s = make(name, rng, shape, dtype, note=note, **kw)
            if fn:
                fn(s)
            return ErrorCase(s, status, names)

        def null(n):
            return lambda s: s.tensors.__setitem__(n, None)

        def set_attr(n, v):
            return lambda s: s.attrs.__setitem__(n, v)

        def set_(n, **kv):
            return lambda s: [setattr(s.tensors[n], k, v) for k, v in kv.items()]
        out = [case(f"{n} null", NULLPTR, n, null(n)) for n in (*ins, out_n)]
        for a, v in sp["attrs"]().items():
            out.append(case(f"{a} null", NULLPTR, a, set_attr(a, None)))
            if isinstance(v, A.aclScalar):
                out.append(case(f"{a} a Python float, not an aclScalar", INVALID, a, set_attr(a, 0.5)))
                out.append(case(f"{a} a COMPLEX64 scalar", INVALID, a, set_attr(a, scalar(1.0, A.ACL_COMPLEX64))))
            elif isinstance(v, bool):
                out.append(case(f"{a} not a bool", INVALID, a, set_attr(a, 1)))
            elif isinstance(v, int):
                out += [case(f"{a} = 2", INVALID, a, set_attr(a, 2)), case(f"{a} = -1", INVALID, a, set_attr(a, -1)),
                        case(f"{a} a float", INVALID, a, set_attr(a, 1.0))]
            elif isinstance(v, str):
                out += [case(f"{a} = 'erf'", INVALID, a, set_attr(a, "erf")), case(f"{a} = 0", INVALID, a, set_attr(a, 0))]
        for bad in (F64, I32, I8, A.ACL_BOOL, A.ACL_INT16):
            if bad not in sp["dtypes"]:
                out.append(case(f"{A.aclDataType(bad).name}", INVALID, ins[0],
                                lambda s, bad=bad: [setattr(t, "dtype", bad) for t in s.tensors.values() if t is not None]))
        out.append(case("out dtype differs", INVALID, out_n, set_(out_n, dtype=F16)))
        if not fwd:
            out.append(case(f"{ins[1]} dtype differs", INVALID, ins[1], set_(ins[1], dtype=BF16)))
            if sp["bcast"]:
                out.append(case(f"{ins[1]} does not broadcast", INVALID, ins[1], set_(ins[1], values=np.zeros((2, 5, 4)))))
                out.append(case("out not the broadcast shape", INVALID, out_n, set_(out_n, values=np.zeros((2, 3, 1)))))
                out.append(case("out larger than the broadcast shape", INVALID, out_n,
                                set_(out_n, values=np.zeros((2, 2, 3, 4)))))
            else:
                out.append(case(f"{ins[1]} shape differs", INVALID, ins[1], set_(ins[1], values=np.zeros((2, 3, 5)))))
                out.append(case(f"{ins[1]} broadcastable but not equal", INVALID, ins[1],
                                set_(ins[1], values=np.zeros((1, 3, 4)))))
        else:
            out.append(case("out shape differs", INVALID, out_n, set_(out_n, values=np.zeros((2, 4, 3)))))
        out.append(case("rank 9", INVALID, ins[0], shape=(1, 2, 1, 1, 1, 1, 1, 1, 2)))
        if lo == 1:
            out.append(case("rank 0", INVALID, ins[0], shape=()))
        if not sp["empty"]:
            out.append(case("empty", INVALID, ins[0], shape=(2, 0, 3)))
        out.append(case("private format", INVALID, ins[0], set_(ins[0], format=A.ACL_FORMAT_NC1HWC0)))
        if name == "EluBackward":
            out.append(case("alpha < 0 with is_result", INVALID, "alpha",
                            lambda s: s.attrs.update(alpha=scalar(-0.5), is_result=True)))
        if name == "LeakyReluBackward":
            out.append(case("negative_slope < 0 with self_is_result", INVALID, "negative_slope",
                            lambda s: s.attrs.update(negative_slope=scalar(-0.5), self_is_result=True)))

        def mutate(fn):
            def f(s):
                s.mutate = fn
            return f

        def shrink(d):
            d[ins[0]].tensor.storage_dims = (d[ins[0]].storage_numel - 1,)

        def overlap(d):
            d[out_n].tensor.addr = d[ins[-1]].tensor.addr + 4
            d[out_n].tensor.storage_dims = d[ins[-1]].tensor.storage_dims

        def zero_stride(d):
            d[out_n].tensor.strides = (0, 4, 1)

        def null_addr(d):
            d[out_n].tensor.addr = None
        out += [case("view beyond storage_dims", INVALID, ins[0], mutate(shrink)),
                case("out overlaps an input", INVALID, out_n, mutate(overlap)),
                case("out overlaps itself (zero stride)", INVALID, out_n, mutate(zero_stride)),
                case("null data address", INVALID, out_n, mutate(null_addr))]
        return out
    return errors


def _in_place_layouts(s):
    layouts = {t.layout for t in s.tensors.values() if t is not None}
    return len(layouts) == 1 and "strided" not in layouts


def bench_of(name):
    def bench(rng, shape, dtype, channels_last):
        return make(name, rng, tuple(shape), dtype, layout="channels_last" if channels_last else "contiguous",
                    note="bench")
    return bench


_TORCH_DT = {F32: "float32", F16: "float16", BF16: "bfloat16", F64: "float64"}


def torch_gpu_of(name):
    sp = SPECS[name]

    def make_fn(s, device):
        torch = _T()
        t = {n: torch.from_numpy(v.rounded()).to(device=device, dtype=getattr(torch, _TORCH_DT[v.dtype]))
             for n, v in s.tensors.items() if v is not None}
        if sp["kind"] == "fwd":
            return lambda: sp["torch"](t["self"], s)
        return lambda: sp["torch"](t["grad_output"], t[sp["saved"]], s)
    return make_fn


OPS = [OpInfo(name, samples_of(name), reference_of(name), errors_of(name), (sp["out"],),
              torch_reference=torch_of(name), data_dtype_of=_data_dtype(name), zero_workspace=_in_place_layouts,
              data="self" if sp["kind"] == "fwd" else "grad_output", bench=bench_of(name), torch_gpu=torch_gpu_of(name))
       for name, sp in SPECS.items()]


# the cuDNN face's activation modes (aclnnpyActivation / aclnnpyActivationBackward) ---------------

def _sig(v):
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-v))


CUDNN_MODES = {   # mode: (f(x, coef, beta), f'(g, x, y, coef, beta))
    "SIGMOID": (lambda x, c, b: _sig(x), lambda g, x, y, c, b: g * y * (1 - y)),
    "RELU": (lambda x, c, b: np.maximum(x, 0), lambda g, x, y, c, b: np.where(x > 0, g, 0)),
    "TANH": (lambda x, c, b: np.tanh(x), lambda g, x, y, c, b: g * (1 - y * y)),
    "CLIPPED_RELU": (lambda x, c, b: np.clip(x, 0, c), lambda g, x, y, c, b: np.where((x > 0) & (x < c), g, 0)),
    "ELU": (lambda x, c, b: np.where(x > 0, x, c * np.expm1(np.minimum(x, 0))),
            lambda g, x, y, c, b: np.where(x > 0, g, g * c * np.exp(np.minimum(x, 0)))),
    "SWISH": (lambda x, c, b: x * _sig(b * x),
              lambda g, x, y, c, b: g * (_sig(b * x) + b * x * _sig(b * x) * (1 - _sig(b * x)))),
}


def make_cudnn(kind, rng, shape, mode="RELU", dtype=F32, *, coef=1.5, beta=0.75, layout="contiguous",
               out_layout=None, note=""):
    x = rng.standard_normal(shape) * 2
    x[np.abs(x) < 1e-2] = 0.5
    x[np.abs(x - coef) < 1e-2] = 0.5
    attrs = {"mode": mode, "coef": coef, "swish_beta": beta}
    if kind == "fwd":
        return Sample({"self": _ts(x, dtype, layout), "out": _ts(np.zeros(shape), dtype, out_layout or layout)},
                      attrs, note=note)
    y = CUDNN_MODES[mode][0](x, coef, beta)
    return Sample({"grad_output": _ts(rng.standard_normal(shape), dtype, layout), "self": _ts(x, dtype, layout),
                   "output": _ts(y, dtype, layout), "out": _ts(np.zeros(shape), dtype, out_layout or layout)},
                  attrs, note=note)


def cudnn_samples(kind):
    def samples(rng):
        m = lambda *a, **k: make_cudnn(kind, rng, *a, **k)     # noqa: E731
        out = [m((2, 3, 4, 5), note="4-D relu")]
        for mode in CUDNN_MODES:
            for dt in (F32, F16, BF16, F64):
                out.append(m((3, 7), mode, dt, note=f"{mode} {A.aclDataType(dt).name}"))
            out.append(m((2, 3, 4, 5), mode, layout="channels_last", note=f"{mode} channels-last"))
        out += [m((3, 5, 6), "ELU", coef=0.3, layout="strided", note="strided"),
                m((3, 5, 6), "SWISH", F16, beta=2.0, layout="offset", note="offset, swish beta 2"),
                m((4, 3), "TANH", out_layout="transposed", note="transposed out"),
                m((2, 3, 2, 3, 4), "CLIPPED_RELU", coef=6.0, note="5-D, ceiling 6"),
                m((0, 3), "SIGMOID", note="empty")]
        return out
    return samples


def cudnn_ref(kind):
    def ref(s):
        t = {k: v.rounded() for k, v in s.tensors.items() if v is not None}
        a = s.attrs
        f, df = CUDNN_MODES[a["mode"]]
        if kind == "fwd":
            x = t["self"]
            return {"out": f(x, a["coef"], a["swish_beta"])} if x.size else {}
        if not t["self"].size:
            return {}
        return {"out": df(t["grad_output"], t["self"], t["output"], a["coef"], a["swish_beta"])}
    return ref


def cudnn_errors(kind):
    def errors(rng):
        def case(note, status, name, fn):
            s = make_cudnn(kind, rng, (2, 3, 4), note=note)
            fn(s)
            return ErrorCase(s, status, name)
        first = "self" if kind == "fwd" else "grad_output"
        out = [case("mode IDENTITY", INVALID, "mode", lambda s: s.attrs.__setitem__("mode", "IDENTITY")),
               case("mode null", NULLPTR, "mode", lambda s: s.attrs.__setitem__("mode", None)),
               case("coef not a float", INVALID, "coef", lambda s: s.attrs.__setitem__("coef", "1")),
               case(f"{first} null", NULLPTR, first, lambda s: s.tensors.__setitem__(first, None)),
               case("int32", INVALID, first,
                    lambda s: [setattr(t, "dtype", A.ACL_INT32) for t in s.tensors.values()]),
               case("out dtype differs", INVALID, "out", lambda s: setattr(s.tensors["out"], "dtype", F16)),
               case("out shape differs", INVALID, "out",
                    lambda s: setattr(s.tensors["out"], "values", np.zeros((2, 4, 3))))]
        if kind == "bwd":
            out.append(case("output shape differs", INVALID, "output",
                            lambda s: setattr(s.tensors["output"], "values", np.zeros((2, 3, 5)))))
        return out
    return errors


def _cudnn_torch(kind):
    def ref(s):
        torch = _T()
        t = {k: torch.from_numpy(v.rounded()) for k, v in s.tensors.items() if v is not None}
        a = s.attrs
        mode = a["mode"]
        x = t["self"].clone().requires_grad_(kind == "bwd")
        F = torch.nn.functional
        y = {"SIGMOID": torch.sigmoid, "RELU": torch.relu, "TANH": torch.tanh,
             "CLIPPED_RELU": lambda v: F.hardtanh(v, 0.0, a["coef"]), "ELU": lambda v: F.elu(v, a["coef"]),
             "SWISH": lambda v: v * torch.sigmoid(a["swish_beta"] * v)}[mode](x)
        if kind == "fwd":
            return {"out": y.detach().numpy()}
        y.backward(t["grad_output"])
        if mode in ("SIGMOID", "TANH"):       # ours uses the given output; PyTorch recomputes it from x
            return {}
        return {"out": x.grad.numpy()}
    return ref


OPS += [OpInfo("pyActivation", cudnn_samples("fwd"), cudnn_ref("fwd"), cudnn_errors("fwd"), ("out",),
               torch_reference=_cudnn_torch("fwd"), zero_workspace=_in_place_layouts, data="self"),
        OpInfo("pyActivationBackward", cudnn_samples("bwd"), cudnn_ref("bwd"), cudnn_errors("bwd"), ("out",),
               torch_reference=_cudnn_torch("bwd"), zero_workspace=_in_place_layouts, data="grad_output")]
