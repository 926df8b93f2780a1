"""OpInfos of the blending family (aclnn_py/ops/blend.py): aclnnpyAxpby (an aclnn-py extension behind
the cuDNN face's alpha/beta) and CANN's aclnnInplaceFillScalar (cudnnSetTensor).

Samples: every dtype (DOUBLE too), broadcasting of self, in place (self is out), beta = 0 over a
destination full of NaN (must not leak), every layout, empty tensors; errors name the argument."""
from __future__ import annotations

import numpy as np

import aclnn_py as A
from harness import Sample, TensorSpec
from opdb import ErrorCase, OpInfo

F32, F16, BF16, F64, I32 = A.ACL_FLOAT, A.ACL_FLOAT16, A.ACL_BF16, A.ACL_DOUBLE, A.ACL_INT32
INVALID, NULLPTR = A.ACLNN_ERR_PARAM_INVALID, A.ACLNN_ERR_PARAM_NULLPTR
ND = A.ACL_FORMAT_ND


def _spec(v, dt, layout="contiguous"):
    return TensorSpec(np.asarray(v, np.float64), dt, ND, layout)


def axpby(rng, shape, alpha=1.5, beta=-0.5, dt=F32, *, src_shape=None, layout="contiguous", out_layout=None,
          nan_out=False, note=""):
    src = rng.standard_normal(src_shape or shape)
    dst = np.full(shape, np.nan) if nan_out else rng.standard_normal(shape)
    return Sample({"self": _spec(src, dt, layout), "out": _spec(dst, dt, out_layout or layout)},
                  {"alpha": alpha, "beta": beta}, note=note)


def _axpby_samples(rng):
    # first (the generic executor tests run it twice): beta 0, so a second run gives the same out
    out = [axpby(rng, (2, 3, 4, 5), 1.5, 0.0, note="4-D"), axpby(rng, (2, 3, 4, 5), note="4-D, beta -0.5")]
    for dt, tag in ((F32, "f32"), (F16, "f16"), (BF16, "bf16"), (F64, "f64")):
        out += [axpby(rng, (3, 7), 2.0, 0.25, dt, note=f"{tag}"),
                axpby(rng, (3, 7), -1.0, 0.0, dt, nan_out=True, note=f"{tag}, beta 0 over NaN"),
                axpby(rng, (2, 3, 4), 0.5, 1.0, dt, src_shape=(1, 3, 1), note=f"{tag}, per-channel broadcast")]
    out += [
        axpby(rng, (2, 3, 4, 5), 1.0, 1.0, src_shape=(1, 3, 1, 1), note="cudnnAddTensor bias"),
        axpby(rng, (2, 3, 4, 5), 2.0, 0.0, src_shape=(1, 1, 1, 1), nan_out=True, note="scalar broadcast, beta 0"),
        axpby(rng, (2, 3, 4, 5), 1.0, 0.0, layout="contiguous", out_layout="channels_last", note="NCHW -> NHWC"),
        axpby(rng, (2, 3, 4, 5), 1.0, 0.5, layout="channels_last", out_layout="contiguous", note="NHWC -> NCHW"),
        axpby(rng, (3, 5, 6), 0.5, 2.0, layout="strided", note="strided views"),
        axpby(rng, (3, 5, 6), 0.5, 2.0, F16, layout="offset", note="offset views"),
        axpby(rng, (4, 3), 1.0, 1.0, out_layout="transposed", note="transposed out"),
        axpby(rng, (), 3.0, 1.0, note="rank 0"),
        axpby(rng, (2, 1, 2, 1, 2, 1, 2, 1), 1.0, 1.0, note="rank 8"),
        axpby(rng, (0, 4), 1.0, 1.0, note="empty"),
        axpby(rng, (5000,), 1.25, 0.75, note="long"),
    ]
    return out


def _vals(s):
    return {k: v.rounded() for k, v in s.tensors.items() if v is not None}


def _axpby_ref(s):
    t = _vals(s)
    a, b = s.attrs["alpha"], s.attrs["beta"]
    if t["out"].size == 0:
        return {}
    res = a * np.broadcast_to(t["self"], t["out"].shape)
    return {"out": res if b == 0 else res + b * t["out"]}


def _axpby_errors(rng):
    def case(note, status, names, fn, dt=F32):
        s = axpby(rng, (2, 3, 4), dt=dt, note=note)
        fn(s)
        return ErrorCase(s, status, names)
    return [
        case("self null", NULLPTR, "self", lambda s: s.tensors.__setitem__("self", None)),
        case("out null", NULLPTR, "out", lambda s: s.tensors.__setitem__("out", None)),
        case("alpha null", NULLPTR, "alpha", lambda s: s.attrs.__setitem__("alpha", None)),
        case("beta not a float", INVALID, "beta", lambda s: s.attrs.__setitem__("beta", "1")),
        case("int32", INVALID, "self", lambda s: [setattr(t, "dtype", I32) for t in s.tensors.values()]),
        case("dtypes differ", INVALID, "out", lambda s: setattr(s.tensors["out"], "dtype", F16)),
        case("self does not broadcast to out", INVALID, "self",
             lambda s: setattr(s.tensors["self"], "values", np.zeros((2, 5, 4)))),
        case("self bigger than out (out would broadcast)", INVALID, "self",
             lambda s: setattr(s.tensors["out"], "values", np.zeros((2, 1, 4)))),
    ]


def fill(rng, shape, value=2.5, dt=F32, layout="contiguous", note=""):
    return Sample({"self_ref": _spec(rng.standard_normal(shape), dt, layout)},
                  {"value": A.aclCreateScalar(value, A.ACL_DOUBLE)}, note=note)


def _fill_samples(rng):
    out = [fill(rng, (2, 3, 4, 5), note="4-D")]
    for dt in (F32, F16, BF16, F64, I32, A.ACL_INT8):
        out.append(fill(rng, (3, 7), -3.0, dt, note=A.aclDataType(dt).name))
    out += [fill(rng, (3, 5, 6), 1.0, layout="strided", note="strided"),
            fill(rng, (2, 3, 4, 5), 0.0, layout="channels_last", note="channels-last"),
            fill(rng, (), 7.0, note="rank 0"), fill(rng, (0, 3), note="empty")]
    return out


def _fill_ref(s):
    t = s.tensors["self_ref"]
    from aclnn_py.dtypes import dtype_info
    info = dtype_info(t.dtype)
    v = np.asarray(s.attrs["value"].value).astype(info.numpy).astype(np.float64)
    return {"self_ref": np.full(np.shape(t.values), v)} if np.size(t.values) else {}


def _fill_errors(rng):
    s1 = fill(rng, (2, 3), note="self_ref null")
    s1.tensors["self_ref"] = None
    s2 = fill(rng, (2, 3), note="value null")
    s2.attrs["value"] = None
    s3 = fill(rng, (2, 3), note="value not an aclScalar")
    s3.attrs["value"] = 1.0
    return [ErrorCase(s1, NULLPTR, "self_ref"), ErrorCase(s2, NULLPTR, "value"), ErrorCase(s3, INVALID, "value")]


OPS = [
    OpInfo("pyAxpby", _axpby_samples, _axpby_ref, _axpby_errors, outputs=("out",), data="out"),
    OpInfo("InplaceFillScalar", _fill_samples, _fill_ref, _fill_errors, outputs=("self_ref",), data="self_ref",
           workspace_free=True),
]
