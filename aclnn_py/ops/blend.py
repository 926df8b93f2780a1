"""Blending (kernels/blend.cu): ``out = alpha·self + beta·out`` — the rule every cuDNN output follows.

``aclnnpyAxpby`` is an aclnn-py extension (the ``aclnnpy`` prefix: CANN has no such API). The cuDNN
face writes an op's result into its scratch and blends it into the caller's destination with it
when (alpha, beta) is not (1, 0), and builds ``cudnnAddTensor`` / ``cudnnScaleTensor`` /
``cudnnTransformTensor`` on it. ``aclnnInplaceFillScalar`` (CANN's) backs ``cudnnSetTensor``.

- ``self`` broadcasts to ``out`` (NumPy rules; cuDNN's AddTensor: each dim of self is 1 or out's).
- ``beta == 0``: ``out`` is never used — NaN or garbage in it does not leak (``out = alpha·self``).
- ``self`` may be ``out`` exactly (in place: ``cudnnScaleTensor``); any strides on both sides.
- FLOAT, FLOAT16, BF16 compute in f32, DOUBLE in f64; one dtype for both tensors.
"""
from __future__ import annotations

from ..dtypes import aclDataType
from ..kernel_cache import declare
from ..opdef import AttrParam as A, Broadcast, FLOATS, OpDef, TensorParam as T, register
from ..plan import Plan
from ..status import AclnnStatus
from ..tensor import aclScalar
from .activation import op_params, plan_binary, plan_unary

FAMILY = "blend"
GROUP = "aclnn-py extensions: blending and fill (behind the cuDNN face)"
_D = FLOATS | {aclDataType.ACL_DOUBLE}
_CT = {aclDataType.ACL_FLOAT: "float", aclDataType.ACL_FLOAT16: "__half", aclDataType.ACL_BF16: "__nv_bfloat16",
       aclDataType.ACL_DOUBLE: "double"}
declare(FAMILY, [f"ew_unary<{c}, Scale>" for c in _CT.values()]
        + [f"ew_{k}<{c}, {f}>" for f in ("Axpby", "ScaleFirst") for k in ("binary", "binary_bcast")
           for c in _CT.values()])


def _params(p: Plan):
    return op_params(p["alpha"], p["beta"])


_scale = plan_unary(FAMILY, lambda p: "Scale", _params, x="self", y="out")
_axpby = plan_binary(FAMILY, lambda p: "ScaleFirst" if p["beta"] == 0.0 else "Axpby", _params, a="self", b="out",
                     y="out")


def _plan_axpby(p: Plan) -> None:
    if p["beta"] == 0.0 and p["self"].view_dims == p["out"].view_dims:
        _scale(p)          # the destination is not even loaded
    else:
        _axpby(p)


def _check_axpby(p: Plan) -> None:
    if p["self"].rank > p["out"].rank or any(
            s not in (1, o) for s, o in zip(reversed(p["self"].view_dims), reversed(p["out"].view_dims))):
        p.fail(AclnnStatus.ACLNN_ERR_PARAM_INVALID, f"self shape {tuple(p['self'].view_dims)} must broadcast to out's "
                                                          f"{tuple(p['out'].view_dims)} (each dim 1 or out's)")


Axpby = register(OpDef(
    name="pyAxpby",
    params=(T("self", dtypes=_D, shape=Broadcast("out")),
            A("alpha", float), A("beta", float),
            T("out", out=True, dtypes=_D, match="self", alias=("self",), shape=lambda p, n, t: None)),
    ref="out",
    check=_check_axpby,
    plan=_plan_axpby,
    group=GROUP,
    doc="aclnn-py extension: out = alpha·self + beta·out; self broadcasts to out; beta = 0: out is not used "
        "(NaN in it does not leak); self may be out (in place). FLOAT, FLOAT16, BF16 (f32 math), DOUBLE.",
), globals())


def _plan_fill(p: Plan) -> None:
    p.fill("self_ref", p["value"].to_float())


InplaceFillScalar = register(OpDef(
    name="InplaceFillScalar",
    params=(T("self_ref", dtypes=_D | {aclDataType.ACL_INT32, aclDataType.ACL_INT64, aclDataType.ACL_INT8,
                                       aclDataType.ACL_UINT8, aclDataType.ACL_INT16, aclDataType.ACL_BOOL},
              written=True),
            A("value", aclScalar)),
    plan=_plan_fill,
    group=GROUP,
    doc="CANN's aclnnInplaceFillScalar: every element of self_ref = value (converted to self_ref's dtype); any "
        "strides. Empty: nothing launched.",
), globals())
