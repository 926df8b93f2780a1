"""The BatchNorm family (kernels/batch_norm.cu): aclnn's SyncBatchNorm building blocks and friends.

Every data tensor reaches the kernels dense in one memory order, NCX or NXC (channels-last), chosen
from ``input``; per-channel tensors are turned into f32 coefficient arrays in the workspace by a
tiny prep kernel, so the big elementwise kernels are templated only on (T, layout). Reductions are
two-pass with fixed-order partials in the workspace: every op is bitwise reproducible run to run.

    aclnnBatchNormElemtBackward
        counter ─┐
        mean, invstd, weight, sum_dy, sum_dy_xmu ─ bn_prep_elemt_bwd ─> mean_f, a, k, g (workspace)
        grad_out, input ──────────────────────────── bn_bwd_elemt<T, CL, 1> ─> grad_input
"""
from __future__ import annotations

import numpy as np

from ..dtypes import aclDataType
from ..opdef import PARAM, INVALID, OpDef, Plan, TensorParam as T, register
from . import _bn_plan as bp

F32, F16, I32 = aclDataType.ACL_FLOAT, aclDataType.ACL_FLOAT16, aclDataType.ACL_INT32
FAMILY = "batch_norm"


def _i64(v) -> np.int64:
    return np.int64(v)


def _same_param_dtype(plan: Plan, names) -> aclDataType:
    """Per-channel tensors of one call share one dtype (FLOAT or the data dtype): the kernels' P."""
    present = [n for n in names if plan[n] is not None]
    dts = {plan.dtype(n) for n in present}
    if len(dts) > 1:
        plan.fail(INVALID, "per-channel tensors " + ", ".join(present) + " must share one dtype, got "
                  + ", ".join(f"{n}={aclDataType(plan.dtype(n)).name}" for n in present))
    return dts.pop()


def _layout(plan: Plan) -> bool:
    """The kernel variant: the planner's preference when S == 1 or C == 1 (same memory either way)."""
    plan.channels_last = bp.preferred_channels_last(plan.N, plan.C, plan.S, plan.channels_last)
    return plan.channels_last


def _cl(b: bool) -> str:
    return "true" if b else "false"


# aclnnBatchNormElemtBackward -------------------------------------------------------------------

_EB_PARAMS = ("mean", "invstd", "weight", "sum_dy", "sum_dy_xmu")


def _check_elemt_backward(plan: Plan) -> None:
    _same_param_dtype(plan, _EB_PARAMS)


def _plan_elemt_backward(plan: Plan) -> None:
    N, C, S = plan.N, plan.C, plan.S
    cl = _layout(plan)
    T_ = plan.ctype("input")
    P = plan.ctype(_same_param_dtype(plan, _EB_PARAMS))
    Q = {I32: "int", F16: "__half", F32: "float"}[plan.dtype("counter")]
    coef = plan.alloc(4 * 4 * C)
    mean_f, a_f, k_f, g_f = (coef.__class__(coef.byte_offset + 4 * C * i) for i in range(4))
    counter = plan.vector_in("counter")
    params = [plan.vector_in(n) for n in _EB_PARAMS]
    grid, block = bp.plan_per_channel(C)
    plan.launch(FAMILY, f"bn_prep_elemt_bwd<{P}, {Q}>", grid, block,
                (*params, counter, _i64(plan["counter"].numel), _i64(C), mean_f, a_f, k_f, g_f))
    dy, x = plan.data_in("grad_out"), plan.data_in("input")
    dx = plan.data_out("grad_input")
    grid, block = bp.plan_elementwise(N, C, S, cl)
    plan.launch(FAMILY, f"bn_bwd_elemt<{T_}, {_cl(cl)}, 1>", grid, block,
                (dy, x, None, mean_f, a_f, k_f, g_f, dx, None, _i64(N), _i64(C), _i64(S)))


BatchNormElemtBackward = register(OpDef(
    name="BatchNormElemtBackward",
    params=(
        T("grad_out", match="input"),
        T("input"),
        T("mean", kind="channel", dtypes=PARAM),
        T("invstd", kind="channel", dtypes=PARAM),
        T("weight", kind="channel", dtypes=PARAM, optional=True),
        T("sum_dy", kind="channel", dtypes=PARAM),
        T("sum_dy_xmu", kind="channel", dtypes=PARAM),
        T("counter", kind="free", dtypes=frozenset({I32, F16, F32}), ranks=(1, 8)),
        T("grad_input", out=True, match="input"),
    ),
    check=_check_elemt_backward,
    plan=_plan_elemt_backward,
    doc="grad_input = (grad_out − sum_dy/N − (input − mean)·invstd²·sum_dy_xmu/N)·invstd·weight, N = Σ counter "
        "(summed on the device). Data FLOAT/FLOAT16/BF16; per-channel tensors FLOAT or the data dtype (one dtype "
        "for all of them); counter INT32/FLOAT16/FLOAT of rank 1–8; weight optional (ones). Deterministic.",
), globals())

__all__ = ["aclnnBatchNormElemtBackwardGetWorkspaceSize", "aclnnBatchNormElemtBackward"]

