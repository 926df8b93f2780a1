"""The BatchNorm family (kernels/batch_norm.cu): aclnn's BatchNorm ops, the SyncBatchNorm building
blocks, oneDNN graph's BatchNormTrainingBackward and cuDNN BN-Ex style fused ops.

Every data tensor reaches the kernels dense in one memory order, NCX or NXC (channels-last), chosen
from the op's data tensor; per-channel tensors are turned into coefficient arrays of the compute type
in the workspace (by the statistics finalize or a tiny prep kernel), so the big kernels are templated
only on (T, layout). Reductions are two-pass with fixed-order partials in the workspace: every op is
bitwise reproducible run to run. Per-channel tensors of one call share one dtype, FLOAT or the data
dtype (the kernels' P). Workspace sizes depend only on shapes and the compute type (``_bn_plan``),
never on data.

Compute type: f32 for FLOAT / FLOAT16 / BF16 data (statistics combined in f64), f64 for DOUBLE data.
DOUBLE data is taken by aclnnBatchNorm, BatchNormBackward, BatchNormStats, BatchNormActivation and
BatchNormActivationBackward (the ops behind the cuDNN face), with DOUBLE per-channel tensors only
(cuDNN's rule); there the workspace partials, coefficient arrays and eps / momentum / ceiling are f64
(8-byte slots) and every step computes in f64. The SyncBatchNorm building blocks (GatherStats, Elemt,
ReduceBackward, ElemtBackward) and oneDNN's TrainingBackward keep CANN's / oneDNN's FLOAT / FLOAT16 /
BF16 (their kernels would take double too; their declared dtypes follow the references).

    aclnnBatchNorm (training)   stats_partial -> stats_finalize (save_*, running_*) -> apply
    aclnnBatchNorm (inference)  prep(running_mean, running_var) -> apply
    aclnnBatchNormBackward      prep -> reduce_partial -> reduce_finalize -> bwd_elemt (training)
                                prep(running stats) -> [reduce_partial -> reduce_finalize] -> bwd_elemt<0>
    aclnnBatchNormStats         stats_partial -> stats_finalize<float>
    aclnnBatchNormGatherStatsWithCounts   gather_stats (zero-count ranks skipped on the device)
    aclnnBatchNormElemt         prep(mean, invstd) -> apply
    aclnnBatchNormReduceBackward  prep -> reduce_partial -> reduce_finalize (sums)
    aclnnBatchNormElemtBackward prep_elemt_bwd (Σ counter on the device) -> bwd_elemt
    aclnnBatchNormTrainingBackward (oneDNN)  prep(mean, variance) -> reduce -> finalize -> bwd_elemt
    aclnnBatchNormActivation    stats -> finalize -> apply<FUSED> (z, activation, reserve mask)
    aclnnBatchNormActivationBackward  prep -> reduce<MASKED> -> finalize -> bwd_elemt<2> (mask, grad_z)

Choices where the references are silent (the op docs repeat them):

- In place (exact aliases, as CANN's in-place forms): output may be input (BatchNorm, BatchNormElemt,
  BatchNormActivation), grad_input may be grad_out (BatchNormBackward, BatchNormElemtBackward),
  diff_src may be diff_dst (BatchNormTrainingBackward): the kernels read every element before the
  thread that reads it writes it, and statistics are reduced before the elementwise pass. Any
  other overlap of an output with a tensor is 161002 (save_mean passed as weight, for instance).

- aclnnBatchNorm: in inference, running_mean and running_var are required (161001, as PyTorch's
  "running_mean must be defined in evaluation mode"); save_mean/save_invstd are required in training
  and ignored in inference, where they may be null or of length 0 (PyTorch returns empty ones).
  Empty input: training fills save_mean = 0 and save_invstd = NaN (CANN), running stats untouched.
  running_var's non-negativity is not checked (it would need a host sync).
- aclnnBatchNormBackward: the same rules for running / save tensors (length 0 allowed in
  inference); masked-off outputs may be null and are never written. Empty input: nothing launched
  (after the parameter checks, which CANN does after the empty check).
- aclnnBatchNormStats: empty input (N·S = 0) gives mean = 0, invstd = NaN (0/0 variance).
- aclnnBatchNormGatherStatsWithCounts: an empty ``input`` does not matter (it only gives C);
  world = 0 gives mean_all = 0, invstd_all = NaN, running stats untouched.
- aclnnBatchNormReduceBackward: empty input zero-fills the requested sums (Ascend 950 behaviour;
  what a SyncBatchNorm rank with no samples needs). weight only has to be consistent (it does not
  enter the sums). Masked-off outputs may be null.
- aclnnBatchNormTrainingBackward: ``data_format`` None means "NXC" (oneDNN's default); a tensor
  format that contradicts it (NHWC/NDHWC with "NCX", NCL/NCHW/NCDHW with "NXC") is 161002. gamma
  absent while diff_gamma/diff_beta are wanted means gamma = 1. Empty input zero-fills diff_gamma,
  diff_beta. Stats dtypes: f32 data -> f32; bf16 -> f32 or bf16; f16 -> f32 (oneDNN's table).

The fused ops (cuDNN's ``cudnnBatchNormalizationForwardTrainingEx`` / ``BackwardEx`` with bnOps
BN / BN_ACTIVATION / BN_ADD_ACTIVATION, in aclnn dress; training only):

    aclnnBatchNormActivation(input, z, weight, bias, running_mean, running_var, momentum, eps,
                             activation_mode, ceiling, output, save_mean, save_invstd, reserve)
        output = act(BN(input) [+ z]); act = activation_mode in {"identity" (default), "relu",
        "clipped_relu"} (min(relu(v), ceiling)). ``reserve`` (UINT8 or INT32, contiguous, byte
        offset a multiple of 4) receives one bit per element: the activation passed the gradient.
        Its size: ``aclnnBatchNormActivationGetReserveSpaceSize(input, activation_mode) ->
        (size_in_bytes, ret)``; 0 for "identity" (reserve may be null then and is not written).
        weight, bias optional; running_mean/running_var both or neither, save_mean/save_invstd both
        or neither (cuDNN's rule; one alone -> 161001).
    aclnnBatchNormActivationBackward(grad_out, input, weight, bias, save_mean, save_invstd, reserve,
                                     activation_mode, ceiling, eps, grad_input, grad_z, grad_weight,
                                     grad_bias)
        dy' = grad_out where the reserve bit is set (all of it for "identity"); grad_z = dy' (if
        given); grad_input / grad_weight / grad_bias = BN backward of dy' with save_mean, save_invstd.
        grad_z, grad_weight, grad_bias optional (null = not wanted). bias, ceiling and eps are
        accepted for cuDNN parity but not needed (the mask replaces recomputing the activation).
    The reserve layout follows the memory order of ``input`` (the NCX / NXC variant the kernels
    use): pass the backward the same ``input`` view (same strides) the forward had.
"""
from __future__ import annotations

import math

import numpy as np

from ..dtypes import CHANNELS_LAST_FORMATS, aclDataType, aclFormat
from ..errors import fail
from ..kernel_cache import BOOLS, FLOAT_CTYPES, declare, instantiate
from ..launch import Ws
from ..opdef import (ALL_FORMATS, FLOATS, INVALID, NULLPTR, Along, AttrParam as A, OpDef, Rank, TensorParam as T,
                     export, register)
from ..plan import Plan, is_dense
from ..status import AclnnStatus
from ..tensor import aclBoolArray, aclTensor
from . import _bn_plan as bp

F32, F16, BF16, I32 = aclDataType.ACL_FLOAT, aclDataType.ACL_FLOAT16, aclDataType.ACL_BF16, aclDataType.ACL_INT32
F64 = aclDataType.ACL_DOUBLE
U8 = aclDataType.ACL_UINT8
_FT = FLOAT_CTYPES
_FTD = (*FLOAT_CTYPES, "double")     # the kernels the DOUBLE ops use (compute type f64)
FLOATS_D = FLOATS | {F64}            # data dtypes of BatchNorm, BatchNormBackward, BatchNormStats and the fused ops
FAMILY = declare(
    "batch_norm",
    instantiate("bn_stats_partial<{T}, {CL}>", T=_FTD, CL=BOOLS), instantiate("bn_stats_finalize<{P}>", P=_FTD),
    instantiate("bn_prep<{P}>", P=_FTD), instantiate("bn_apply<{T}, {CL}, {FUSED}>", T=_FTD, CL=BOOLS, FUSED=BOOLS),
    instantiate("bn_bwd_reduce_partial<{T}, {CL}, {MASKED}>", T=_FTD, CL=BOOLS, MASKED=BOOLS),
    instantiate("bn_bwd_reduce_finalize<{P}>", P=_FTD), instantiate("bn_bwd_elemt<{T}, {CL}, {MODE}>", T=_FTD, CL=BOOLS,
                                                                  MODE=("0", "1", "2")),
    instantiate("bn_prep_elemt_bwd<{P}, {Q}>", P=_FT, Q=("int", "__half", "float")),
    instantiate("bn_gather_stats<{P}, {Q}>", P=_FT, Q=_FT))
GROUP = "aclnn BatchNorm family (SyncBatchNorm building blocks)"
FUSED_GROUP = "Fused batch norm + add + activation (cuDNN *Ex)"
_FORMATS = ALL_FORMATS - {aclFormat.ACL_FORMAT_HWCN}     # the channel axis must be dim 1 or the last one
ACT_MODES = {"identity": 0, "relu": 1, "clipped_relu": 2}


class ChannelPlan(Plan):
    """The per-channel vocabulary of the family: N, C (the channel axis ``plan.axis``), S (elements per
    (n, c) pair), and the compute layout NCX or NXC (``channels_last``) the big kernels are templated on."""

    channels_last = False

    @property
    def N(self) -> int:
        return self.ref.view_dims[0]

    @property
    def C(self) -> int:
        return self.ref.view_dims[self.axis]

    @property
    def S(self) -> int:
        return math.prod(x for i, x in enumerate(self.ref.view_dims) if i not in (0, self.axis))

    def order(self, channels_last: bool) -> list[int]:
        others = [d for d in range(1, self.ref.rank) if d != self.axis]
        return [0, *others, self.axis] if channels_last else [0, self.axis, *others]

    def choose_layout(self, name: str | None = None) -> bool:
        """The compute layout from tensor ``name`` (default: the reference): NXC when it is channels-last
        in memory, else NCX; a general view is copied in whichever order keeps the channel axis where
        it mostly is."""
        t = self[name] if name else self.ref
        if is_dense(t, self.order(False)):
            self.channels_last = False
        elif is_dense(t, self.order(True)):
            self.channels_last = True
        else:
            ax = self.axis
            self.channels_last = bool(t.numel) and t.strides[ax] == min(
                abs(s) for d, s in zip(t.view_dims, t.strides) if d > 1)
        return self.channels_last

    def data_in(self, name: str):
        """A pointer to data tensor ``name`` dense in the compute layout."""
        return self.read(name, self.order(self.channels_last))

    def data_out(self, name: str):
        return self.write(name, self.order(self.channels_last))


def _channel_axis(plan: ChannelPlan) -> int:
    """dim 1 (NCHW, NCL, ND, ...) or the last dim (NHWC, NDHWC); it must not be empty."""
    ref = plan.ref
    return _nonempty_axis(plan, ref.rank - 1 if ref.format in CHANNELS_LAST_FORMATS else 1)


def _nonempty_axis(plan: ChannelPlan, ax: int) -> int:
    ref = plan.ref
    if ref.view_dims[ax] == 0:
        plan.fail(INVALID, f"{plan.op.ref_name} channel axis (dim {ax}) has size 0 (shape {tuple(ref.view_dims)})")
    return ax


def PARAM(plan: Plan) -> frozenset:
    """dtype rule of per-channel tensors: FLOAT or the data dtype; DOUBLE data takes DOUBLE only (cuDNN's
    "double for double data, else float"; the kernels' compute type follows the data)."""
    if plan.ref.data_type == F64:
        return frozenset({F64})
    return frozenset({F32, plan.ref.data_type})


def STATS_OUT(plan: Plan) -> frozenset:
    """aclnnBatchNormStats' outputs: FLOAT, DOUBLE for DOUBLE input."""
    return frozenset({F64 if plan.ref.data_type == F64 else F32})


def _ch(**kw):
    """A per-channel tensor: 1-D of length C."""
    return Along(**kw)


def _op(**kw) -> OpDef:
    """The family's defaults: rank 2-8 data with a channel axis, the per-channel plan, the layout
    chosen from the reference tensor before ``plan``."""
    plan_fn = kw.pop("plan")

    def plan(p: ChannelPlan) -> None:
        p.choose_layout()
        plan_fn(p)
    kw.setdefault("group", GROUP)
    return OpDef(plan=plan, ranks=(2, 8), formats=_FORMATS, axis=kw.pop("axis", _channel_axis),
                 plan_type=ChannelPlan, **kw)


def _i64(v) -> np.int64:
    return np.int64(v)


def _f32(v) -> np.float32:
    return np.float32(v)


def _wide(plan: Plan) -> bool:
    """DOUBLE data: the kernels compute in f64 (workspace slots, coefficient arrays, eps/momentum/ceiling)."""
    return plan.ref.data_type == F64


def _acc_size(plan: Plan) -> int:
    """Bytes of one compute-type slot: 8 for DOUBLE data, else 4 (f32)."""
    return 8 if _wide(plan) else 4


def _acc(plan: Plan, v):
    """A scalar kernel argument of the compute type (np.float64 for DOUBLE data, else np.float32)."""
    return np.float64(v) if _wide(plan) else np.float32(v)


def _cl(b: bool) -> str:
    return "true" if b else "false"


def _same_param_dtype(plan: Plan, names) -> aclDataType:
    """Per-channel tensors of one call share one dtype (FLOAT or the data dtype): the kernels' P.
    FLOAT when none of them is given (DOUBLE for DOUBLE data: P follows the compute type)."""
    present = [n for n in names if plan[n] is not None]
    dts = {plan.dtype(n) for n in present}
    if len(dts) > 1:
        plan.fail(INVALID, "per-channel tensors " + ", ".join(present) + " must share one dtype, got "
                  + ", ".join(f"{n}={aclDataType(plan.dtype(n)).name}" for n in present))
    return dts.pop() if dts else (F64 if plan.ref.data_type == F64 else F32)


def _layout(plan: ChannelPlan) -> bool:
    """The kernel variant: the planner's preference when S == 1 or C == 1 (same memory either way)."""
    plan.channels_last = bp.preferred_channels_last(plan.N, plan.C, plan.S, plan.channels_last)
    return plan.channels_last


def _layout_of(plan: Plan, name: str) -> bool:
    """The kernel variant chosen from tensor ``name`` (same shape as the reference) instead of the
    reference: the fused ops key the reserve-mask layout on ``input`` in both directions."""
    plan.choose_layout(name)
    return _layout(plan)


def _acc_arrays(plan: Plan, k: int) -> list[Ws]:
    """k per-channel arrays of the compute type (f32, f64 for DOUBLE data) in the workspace."""
    z = _acc_size(plan)
    base = plan.alloc(z * k * plan.C)
    return [Ws(base.byte_offset + z * plan.C * i) for i in range(k)]


def _want(plan: Plan, name: str, flag=True):
    return name if flag and plan[name] is not None else None


def _out(plan: Plan, name):
    return plan.write(name) if name else None


def _need(plan: Plan, cond: bool, name: str, why: str) -> None:
    if cond and plan[name] is None:
        plan.fail(NULLPTR, f"{name} must not be null {why}")


def _check_len(plan: Plan, name: str, allow_empty: bool) -> None:
    """A 'free' rank-1 per-channel tensor: length C (or 0 where allowed)."""
    t = plan[name]
    if t is None:
        return
    ok = (plan.C,) + ((0,) if allow_empty else ())
    if t.view_dims[0] not in ok:
        plan.fail(INVALID, f"{name} must be 1-D of length C={plan.C}{' (or 0 in inference)' if allow_empty else ''}, "
                           f"got shape {tuple(t.view_dims)}")


# the recurring kernel sequences ----------------------------------------------------------------

def _stats(plan: Plan, T_: str, cl: bool, x, *, P: str, eps, momentum=0.0, weight=None, bias=None,
           save_mean=None, save_invstd=None, running_mean=None, running_var=None, coef=True):
    """stats_partial -> stats_finalize. Returns the apply coefficients (mean_f, scale_f, shift_f) of the
    compute type."""
    N, C, S = plan.N, plan.C, plan.S
    # whole rows on the host for every dtype (2-byte types once measured slower there, 0.74 -> 1.22 ms
    # f16: the plan's 49 one-thread blocks then ran on one core; with both cores f16 0.79 -> 0.71 ms,
    # bf16 0.66 -> 0.55 on 8x64x56x56)
    grid, block, splits, wsf = bp.plan_reduction(N, C, S, cl, whole_rows=True)
    ws = plan.alloc(_acc_size(plan) * wsf)
    coefs = _acc_arrays(plan, 3) if coef else [None] * 3
    plan.launch(FAMILY, f"bn_stats_partial<{T_}, {_cl(cl)}>", grid, block, (x, ws, _i64(N), _i64(C), _i64(S)))
    grid, block = bp.plan_finalize(C)
    plan.launch(FAMILY, f"bn_stats_finalize<{P}>", grid, block,
                (ws, _i64(splits), _i64(C), _acc(plan, eps), _acc(plan, momentum), weight, bias, save_mean, save_invstd,
                 running_mean, running_var, *coefs))
    return coefs


def _prep(plan: Plan, P: str, mean, stat, stat_is_var: bool, eps, weight=None, bias=None,
          want=("mean", "invstd", "w", "scale", "shift")) -> dict:
    """bn_prep: coefficient arrays of the compute type (only those in ``want``) from user per-channel tensors."""
    keys = ("mean", "invstd", "w", "scale", "shift")
    arrs = dict(zip([k for k in keys if k in want], _acc_arrays(plan, len(want))))
    grid, block = bp.plan_per_channel(plan.C)
    plan.launch(FAMILY, f"bn_prep<{P}>", grid, block,
                (mean, stat, np.int32(stat_is_var), _acc(plan, eps), weight, bias, _i64(plan.C),
                 *(arrs.get(k) for k in keys)))
    return arrs


def _apply(plan: Plan, T_: str, cl: bool, x, y, mean_f, scale_f, shift_f, z=None, mask=None, act=0, ceiling=0.0):
    fused = z is not None or act != 0 or mask is not None
    grid, block = bp.plan_elementwise(plan.N, plan.C, plan.S, cl, fused=fused)
    plan.launch(FAMILY, f"bn_apply<{T_}, {_cl(cl)}, {_cl(fused)}>", grid, block,
                (x, z, mean_f, scale_f, shift_f, y, mask, _i64(plan.N), _i64(plan.C), _i64(plan.S),
                 np.int32(act), _acc(plan, ceiling)))


def _reduce(plan: Plan, T_: str, cl: bool, P: str, dy, x, mean_f, invstd_f, w_f=None, mask=None,
            sum_dy=None, sum_dy_xmu=None, grad_weight=None, grad_bias=None, coef=False):
    """reduce_partial -> reduce_finalize: the sums (and, with ``coef``, the dx coefficients a, k, g)."""
    N, C, S = plan.N, plan.C, plan.S
    grid, block, splits, wsf = bp.plan_reduction(N, C, S, cl)
    ws = plan.alloc(_acc_size(plan) * wsf)
    coefs = _acc_arrays(plan, 3) if coef else [None] * 3
    plan.launch(FAMILY, f"bn_bwd_reduce_partial<{T_}, {_cl(cl)}, {_cl(mask is not None)}>", grid, block,
                (dy, x, mask, mean_f, ws, _i64(N), _i64(C), _i64(S)))
    grid, block = bp.plan_finalize(C)
    plan.launch(FAMILY, f"bn_bwd_reduce_finalize<{P}>", grid, block,
                (ws, _i64(splits), _i64(C), _i64(N * S), invstd_f, w_f, sum_dy, sum_dy_xmu, grad_weight, grad_bias,
                 *coefs))
    return coefs


def _elemt_bwd(plan: Plan, T_: str, cl: bool, mode: int, dy, x, dx, mean_f=None, a_f=None, k_f=None, g_f=None,
               mask=None, dz=None):
    grid, block = bp.plan_elementwise(plan.N, plan.C, plan.S, cl, fused=False)
    plan.launch(FAMILY, f"bn_bwd_elemt<{T_}, {_cl(cl)}, {mode}>", grid, block,
                (dy, x, mask, mean_f, a_f, k_f, g_f, dx, dz, _i64(plan.N), _i64(plan.C), _i64(plan.S)))


def _backward_training(plan: Plan, *, dy_name, x_name, dx_name, P, mean, invstd, stat_is_var, eps, weight,
                       grad_weight=None, grad_bias=None, mask=None, dz_name=None, cl=None):
    """The training backward of BatchNormBackward, TrainingBackward (oneDNN) and the fused backward:
    prep -> reduce_partial -> reduce_finalize (grad_weight, grad_bias, a/k/g) -> bwd_elemt."""
    want_dx = dx_name is not None
    if not (want_dx or grad_weight or grad_bias):
        return
    T_ = plan.ctype(x_name)
    cl = _layout(plan) if cl is None else cl
    f = _prep(plan, P, mean, invstd, stat_is_var, eps, weight, want=("mean", "invstd", "w"))
    dy, x = plan.data_in(dy_name), plan.data_in(x_name)
    a, k, g = _reduce(plan, T_, cl, P, dy, x, f["mean"], f["invstd"], f["w"], mask=mask,
                      grad_weight=_out(plan, grad_weight), grad_bias=_out(plan, grad_bias), coef=want_dx)
    if want_dx:
        dx = plan.data_out(dx_name)
        dz = plan.data_out(dz_name) if dz_name else None
        mode = 2 if (mask is not None or dz is not None) else 1
        _elemt_bwd(plan, T_, cl, mode, dy, x, dx, f["mean"], a, k, g, mask=mask, dz=dz)


def _fill_stats_empty(plan: Plan, mean_name: str, invstd_name: str) -> None:
    """Empty batch: mean 0, invstd NaN (0/0 variance), as CANN's ProcessEmptyTensorWithValue."""
    for name, value in ((mean_name, 0.0), (invstd_name, math.nan)):
        if plan[name] is not None and plan[name].numel:
            plan.fill(name, value)


def _fill_zero(plan: Plan, *names) -> None:
    for n in names:
        if n is not None and plan[n] is not None:
            plan.fill(n, 0.0)


# aclnnBatchNorm --------------------------------------------------------------------------------

_BN_PARAMS = ("weight", "bias", "running_mean", "running_var", "save_mean", "save_invstd")


def _need_statistics(plan: Plan) -> None:
    """Training needs save_mean/save_invstd; inference needs the running stats (and may pass save_*
    null or of length 0, as PyTorch does)."""
    training = bool(plan["training"])
    if training:
        _need(plan, True, "save_mean", "in training")
        _need(plan, True, "save_invstd", "in training")
    else:
        _need(plan, True, "running_mean", "in inference (training=False uses the running stats)")
        _need(plan, True, "running_var", "in inference (training=False uses the running stats)")
    for n in ("save_mean", "save_invstd"):
        _check_len(plan, n, allow_empty=not training)


def _check_batch_norm(plan: Plan) -> None:
    _need_statistics(plan)
    _same_param_dtype(plan, _BN_PARAMS)


def _plan_batch_norm(plan: Plan) -> None:
    P = plan.ctype(_same_param_dtype(plan, _BN_PARAMS))
    T_ = plan.ctype("input")
    cl = _layout(plan)
    x = plan.data_in("input")
    y = plan.data_out("output")
    w, b = plan.read("weight"), plan.read("bias")
    if plan["training"]:
        m, s, sh = _stats(plan, T_, cl, x, P=P, eps=plan["eps"], momentum=plan["momentum"], weight=w, bias=b,
                          save_mean=plan.write("save_mean"), save_invstd=plan.write("save_invstd"),
                          running_mean=plan.update("running_mean"),
                          running_var=plan.update("running_var"))
    else:
        f = _prep(plan, P, plan.read("running_mean"), plan.read("running_var"), True, plan["eps"], w, b,
                  want=("mean", "scale", "shift"))
        m, s, sh = f["mean"], f["scale"], f["shift"]
    _apply(plan, T_, cl, x, y, m, s, sh)


def _empty_batch_norm(plan: Plan) -> None:
    if plan["training"]:
        _fill_stats_empty(plan, "save_mean", "save_invstd")


BatchNorm = register(_op(
    name="BatchNorm",
    params=(
        T("input", dtypes=FLOATS_D),
        T("weight", shape=_ch(), dtypes=PARAM, optional=True),
        T("bias", shape=_ch(), dtypes=PARAM, optional=True),
        T("running_mean", shape=_ch(), dtypes=PARAM, optional=True, written=True),
        T("running_var", shape=_ch(), dtypes=PARAM, optional=True, written=True),
        A("training", bool),
        A("momentum", float),
        A("eps", float),
        T("output", out=True, dtypes=FLOATS_D, match="input", alias=("input",)),
        T("save_mean", out=True, dtypes=PARAM, optional=True, shape=Rank(1, 1)),
        T("save_invstd", out=True, dtypes=PARAM, optional=True, shape=Rank(1, 1)),
    ),
    check=_check_batch_norm,
    plan=_plan_batch_norm,
    plan_empty=_empty_batch_norm,
    doc="output = (input − mean)·invstd·weight + bias. training: batch statistics (Welford, f64 combine), "
        "save_mean, save_invstd = 1/sqrt(var + eps) (biased var), running stats (optional, in place) = "
        "(1 − momentum)·running + momentum·stat with the unbiased variance. inference: running_mean and "
        "running_var (required) normalise; save_* untouched (null or length 0 allowed). Data FLOAT/FLOAT16/"
        "BF16/DOUBLE, NCHW/NHWC/NCDHW/NDHWC/ND rank 2–8; per-channel tensors FLOAT or the data dtype (one dtype; "
        "DOUBLE data: DOUBLE only, everything computed in f64). "
        "Empty input: save_mean = 0, save_invstd = NaN (training). Deterministic.",
), globals())


# aclnnBatchNormBackward ------------------------------------------------------------------------

_BNB_PARAMS = ("weight", "running_mean", "running_var", "save_mean", "save_invstd", "grad_weight", "grad_bias")
_BNB_OUTS = ("grad_input", "grad_weight", "grad_bias")


def _check_batch_norm_backward(plan: Plan) -> None:
    mask = plan["output_mask"]
    for flag, name in zip(mask, _BNB_OUTS):
        _need(plan, bool(flag), name, "when its output_mask entry is true")
    _need_statistics(plan)
    _same_param_dtype(plan, _BNB_PARAMS)


def _plan_batch_norm_backward(plan: Plan) -> None:
    P = plan.ctype(_same_param_dtype(plan, _BNB_PARAMS))
    mask = [bool(v) for v in plan["output_mask"]]
    dx_n, gw_n, gb_n = (_want(plan, n, f) for n, f in zip(_BNB_OUTS, mask))
    w = plan.read("weight")
    if plan["training"]:
        _backward_training(plan, dy_name="grad_out", x_name="input", dx_name=dx_n, P=P,
                           mean=plan.read("save_mean"), invstd=plan.read("save_invstd"),
                           stat_is_var=False, eps=plan["eps"], weight=w, grad_weight=gw_n, grad_bias=gb_n)
        return
    if not (dx_n or gw_n or gb_n):
        return
    T_ = plan.ctype("input")
    cl = _layout(plan)
    f = _prep(plan, P, plan.read("running_mean"), plan.read("running_var"), True, plan["eps"], w,
              want=("mean", "invstd", "scale"))
    dy = plan.data_in("grad_out")
    if gw_n or gb_n:
        _reduce(plan, T_, cl, P, dy, plan.data_in("input"), f["mean"], f["invstd"],
                grad_weight=_out(plan, gw_n), grad_bias=_out(plan, gb_n))
    if dx_n:
        _elemt_bwd(plan, T_, cl, 0, dy, None, plan.data_out(dx_n), g_f=f["scale"])


BatchNormBackward = register(_op(
    name="BatchNormBackward",
    params=(
        T("grad_out", dtypes=FLOATS_D),
        T("input", dtypes=FLOATS_D, match="grad_out"),
        T("weight", shape=_ch(), dtypes=PARAM, optional=True),
        T("running_mean", shape=_ch(), dtypes=PARAM, optional=True),
        T("running_var", shape=_ch(), dtypes=PARAM, optional=True),
        T("save_mean", dtypes=PARAM, optional=True, shape=Rank(1, 1)),
        T("save_invstd", dtypes=PARAM, optional=True, shape=Rank(1, 1)),
        A("training", bool),
        A("eps", float),
        A("output_mask", aclBoolArray, length=3),
        T("grad_input", out=True, dtypes=FLOATS_D, match="grad_out", optional=True, alias=("grad_out",)),
        T("grad_weight", out=True, shape=_ch(), dtypes=PARAM, optional=True),
        T("grad_bias", out=True, shape=_ch(), dtypes=PARAM, optional=True),
    ),
    check=_check_batch_norm_backward,
    plan=_plan_batch_norm_backward,
    doc="training: grad_input = (grad_out − Σgrad_out/n − (input − save_mean)·save_invstd²·Σgrad_out·(input − "
        "save_mean)/n)·save_invstd·weight; inference: grad_input = grad_out·weight/sqrt(running_var + eps). "
        "grad_weight = Σgrad_out·(input − mean)·invstd, grad_bias = Σgrad_out (mean/invstd: save_* in "
        "training, running stats in inference). output_mask (aclBoolArray of 3) picks the outputs; masked-off "
        "ones may be null and are not written. Data FLOAT/FLOAT16/BF16/DOUBLE (DOUBLE: DOUBLE per-channel "
        "tensors, f64 compute). Empty input: success, nothing launched. Deterministic.",
), globals())


# aclnnBatchNormStats ---------------------------------------------------------------------------

def _plan_batch_norm_stats(plan: Plan) -> None:
    T_ = plan.ctype("input")
    cl = _layout(plan)
    _stats(plan, T_, cl, plan.data_in("input"), P="double" if _wide(plan) else "float", eps=plan["eps"],
           save_mean=plan.write("mean"),
           save_invstd=plan.write("invstd"), coef=False)


BatchNormStats = register(_op(
    name="BatchNormStats",
    params=(
        T("input", dtypes=FLOATS_D),
        A("eps", float),
        T("mean", out=True, shape=_ch(), dtypes=STATS_OUT),
        T("invstd", out=True, shape=_ch(), dtypes=STATS_OUT),
    ),
    plan=_plan_batch_norm_stats,
    plan_empty=lambda plan: _fill_stats_empty(plan, "mean", "invstd"),
    doc="mean = Σinput/n, invstd = 1/sqrt(Σ(input − mean)²/n + eps) per channel (biased variance; Welford "
        "partials combined in f64). input FLOAT/FLOAT16/BF16/DOUBLE (DOUBLE computes in f64); mean, invstd: "
        "FLOAT (DOUBLE for DOUBLE input), 1-D C. Empty input: mean = 0, invstd = NaN. "
        "Deterministic.",
), globals())


# aclnnBatchNormGatherStatsWithCounts -----------------------------------------------------------

_GS_PARAMS = ("mean", "invstd", "running_mean", "running_var", "mean_all", "invstd_all")


def _check_gather(plan: Plan) -> None:
    mean, invstd, counts = plan["mean"], plan["invstd"], plan["counts"]
    if mean.view_dims[1] != plan.C:
        plan.fail(INVALID, f"mean must be 2-D [world, C={plan.C}], got shape {tuple(mean.view_dims)}")
    if invstd.view_dims != mean.view_dims:
        plan.fail(INVALID, f"invstd shape must equal mean's {tuple(mean.view_dims)}, got {tuple(invstd.view_dims)}")
    if counts.view_dims != (mean.view_dims[0],):
        plan.fail(INVALID, f"counts must be 1-D of length world={mean.view_dims[0]} (dim 0 of mean), got shape "
                           f"{tuple(counts.view_dims)}")
    _same_param_dtype(plan, _GS_PARAMS)


def _plan_gather(plan: Plan) -> None:
    P = plan.ctype(_same_param_dtype(plan, _GS_PARAMS))
    Q = plan.ctype("counts")
    world = plan["mean"].view_dims[0]
    args = (plan.read("mean"), plan.read("invstd"), plan.read("counts"), _i64(world), _i64(plan.C),
            _f32(plan["eps"]), _f32(plan["momentum"]), plan.update("running_mean"),
            plan.update("running_var"), plan.write("mean_all"), plan.write("invstd_all"))
    grid, block = bp.plan_per_channel(plan.C)
    plan.launch(FAMILY, f"bn_gather_stats<{P}, {Q}>", grid, block, args)


BatchNormGatherStatsWithCounts = register(_op(
    name="BatchNormGatherStatsWithCounts",
    params=(
        T("input"),
        T("mean", dtypes=PARAM, shape=Rank(2, 2)),
        T("invstd", dtypes=PARAM, shape=Rank(2, 2)),
        T("running_mean", shape=_ch(), dtypes=PARAM, optional=True, written=True),
        T("running_var", shape=_ch(), dtypes=PARAM, optional=True, written=True),
        A("momentum", float),
        A("eps", float),
        T("counts", dtypes=FLOATS, shape=Rank(1, 1)),
        T("mean_all", out=True, shape=_ch(), dtypes=PARAM),
        T("invstd_all", out=True, shape=_ch(), dtypes=PARAM),
    ),
    check=_check_gather,
    plan=_plan_gather,
    plan_empty=_plan_gather,          # input only gives C: an empty local batch still gathers
    doc="Combines per-rank mean/invstd [world, C] weighted by counts [world] (FLOAT/FLOAT16/BF16; INT32 is "
        "rejected as in CANN): mean_all, invstd_all = 1/sqrt(var + eps) with var_r = 1/invstd_r² − eps. Ranks "
        "with count ≤ 0 are skipped on the device (no host sync). running_mean/running_var (optional, in "
        "place) get momentum updates with the unbiased variance of the union; untouched when every count is 0 "
        "(then mean_all = 0, invstd_all = NaN). input only gives C. Deterministic.",
), globals())


# aclnnBatchNormElemt ---------------------------------------------------------------------------

_EL_PARAMS = ("weight", "bias", "mean", "invstd")


def _plan_elemt(plan: Plan) -> None:
    T_ = plan.ctype("input")
    P = plan.ctype(_same_param_dtype(plan, _EL_PARAMS))
    cl = _layout(plan)
    f = _prep(plan, P, plan.read("mean"), plan.read("invstd"), False, plan["eps"],
              plan.read("weight"), plan.read("bias"), want=("mean", "scale", "shift"))
    _apply(plan, T_, cl, plan.data_in("input"), plan.data_out("output"), f["mean"], f["scale"], f["shift"])


BatchNormElemt = register(_op(
    name="BatchNormElemt",
    params=(
        T("input"),
        T("weight", shape=_ch(), dtypes=PARAM, optional=True),
        T("bias", shape=_ch(), dtypes=PARAM, optional=True),
        T("mean", shape=_ch(), dtypes=PARAM),
        T("invstd", shape=_ch(), dtypes=PARAM),
        A("eps", float),
        T("output", out=True, match="input", alias=("input",)),
    ),
    check=lambda plan: _same_param_dtype(plan, _EL_PARAMS),
    plan=_plan_elemt,
    doc="output = (input − mean)·invstd·weight + bias (eps unused: invstd is given). Data FLOAT/FLOAT16/BF16; "
        "weight, bias, mean, invstd share one dtype, the data dtype (CANN) or FLOAT (an aclnn-py extension, as "
        "PyTorch's SyncBatchNorm kernels: FLOAT statistics from BatchNormStats/GatherStatsWithCounts compose "
        "with f16/bf16 data without a cast); weight, bias optional (1, 0). Empty input: nothing launched. "
        "Deterministic.",
), globals())


# aclnnBatchNormReduceBackward ------------------------------------------------------------------

_RB_PARAMS = ("mean", "invstd", "weight", "sum_dy", "sum_dy_xmu", "grad_weight", "grad_bias")


def _rb_outputs(plan: Plan):
    ig, wg, bg = bool(plan["input_g"]), bool(plan["weight_g"]), bool(plan["bias_g"])
    return (_want(plan, "sum_dy", ig), _want(plan, "sum_dy_xmu", ig), _want(plan, "grad_weight", wg),
            _want(plan, "grad_bias", bg))


def _check_reduce_backward(plan: Plan) -> None:
    for name, flag in (("sum_dy", "input_g"), ("sum_dy_xmu", "input_g"), ("grad_weight", "weight_g"),
                       ("grad_bias", "bias_g")):
        _need(plan, bool(plan[flag]), name, f"when {flag} is true")
    _same_param_dtype(plan, _RB_PARAMS)


def _plan_reduce_backward(plan: Plan) -> None:
    outs = _rb_outputs(plan)
    if not any(outs):
        return
    P = plan.ctype(_same_param_dtype(plan, _RB_PARAMS))
    T_ = plan.ctype("input")
    cl = _layout(plan)
    f = _prep(plan, P, plan.read("mean"), plan.read("invstd"), False, 0.0, want=("mean", "invstd"))
    dy, x = plan.data_in("grad_out"), plan.data_in("input")
    _reduce(plan, T_, cl, P, dy, x, f["mean"], f["invstd"], None, None, *(_out(plan, n) for n in outs))


BatchNormReduceBackward = register(_op(
    name="BatchNormReduceBackward",
    params=(
        T("grad_out"),
        T("input", match="grad_out"),
        T("mean", shape=_ch(), dtypes=PARAM),
        T("invstd", shape=_ch(), dtypes=PARAM),
        T("weight", shape=_ch(), dtypes=PARAM, optional=True),
        A("input_g", bool),
        A("weight_g", bool),
        A("bias_g", bool),
        T("sum_dy", out=True, shape=_ch(), dtypes=PARAM, optional=True),
        T("sum_dy_xmu", out=True, shape=_ch(), dtypes=PARAM, optional=True),
        T("grad_weight", out=True, shape=_ch(), dtypes=PARAM, optional=True),
        T("grad_bias", out=True, shape=_ch(), dtypes=PARAM, optional=True),
    ),
    check=_check_reduce_backward,
    plan=_plan_reduce_backward,
    plan_empty=lambda plan: _fill_zero(plan, *_rb_outputs(plan)),
    doc="sum_dy = Σgrad_out, sum_dy_xmu = Σgrad_out·(input − mean) (sums, not means; input_g), grad_weight = "
        "sum_dy_xmu·invstd (weight_g), grad_bias = sum_dy (bias_g). Outputs whose flag is false may be null "
        "and are not written. Empty input: the requested outputs are zero-filled. Deterministic.",
), globals())


# aclnnBatchNormElemtBackward -------------------------------------------------------------------

_EB_PARAMS = ("mean", "invstd", "weight", "sum_dy", "sum_dy_xmu")


def _check_elemt_backward(plan: Plan) -> None:
    _same_param_dtype(plan, _EB_PARAMS)


def _plan_elemt_backward(plan: Plan) -> None:
    C = plan.C
    cl = _layout(plan)
    T_ = plan.ctype("input")
    P = plan.ctype(_same_param_dtype(plan, _EB_PARAMS))
    Q = {I32: "int", F16: "__half", F32: "float"}[plan.dtype("counter")]
    mean_f, a_f, k_f, g_f = _acc_arrays(plan, 4)
    counter = plan.read("counter")
    params = [plan.read(n) for n in _EB_PARAMS]
    grid, block = bp.plan_per_channel(C)
    plan.launch(FAMILY, f"bn_prep_elemt_bwd<{P}, {Q}>", grid, block,
                (*params, counter, _i64(plan["counter"].numel), _i64(C), mean_f, a_f, k_f, g_f))
    dy, x = plan.data_in("grad_out"), plan.data_in("input")
    dx = plan.data_out("grad_input")
    _elemt_bwd(plan, T_, cl, 1, dy, x, dx, mean_f, a_f, k_f, g_f)


BatchNormElemtBackward = register(_op(
    name="BatchNormElemtBackward",
    params=(
        T("grad_out", match="input"),
        T("input"),
        T("mean", shape=_ch(), dtypes=PARAM),
        T("invstd", shape=_ch(), dtypes=PARAM),
        T("weight", shape=_ch(), dtypes=PARAM, optional=True),
        T("sum_dy", shape=_ch(), dtypes=PARAM),
        T("sum_dy_xmu", shape=_ch(), dtypes=PARAM),
        T("counter", dtypes=frozenset({I32, F16, F32}), shape=Rank(1, 8)),
        T("grad_input", out=True, match="input", alias=("grad_out",)),
    ),
    check=_check_elemt_backward,
    plan=_plan_elemt_backward,
    doc="grad_input = (grad_out − sum_dy/N − (input − mean)·invstd²·sum_dy_xmu/N)·invstd·weight, N = Σ counter "
        "(summed on the device). Data FLOAT/FLOAT16/BF16; per-channel tensors FLOAT or the data dtype (one dtype "
        "for all of them); counter INT32/FLOAT16/FLOAT of rank 1–8; weight optional (ones). Deterministic.",
), globals())


# aclnnBatchNormTrainingBackward (oneDNN graph semantics) ---------------------------------------

_TB_PARAMS = ("mean", "variance", "gamma", "diff_gamma", "diff_beta")
_CHANNEL_FIRST_FORMATS = frozenset({aclFormat.ACL_FORMAT_NCL, aclFormat.ACL_FORMAT_NCHW, aclFormat.ACL_FORMAT_NCDHW})


def _data_format(plan: Plan) -> str:
    v = plan["data_format"]
    return "NXC" if v is None else v


def _tb_axis(plan: ChannelPlan) -> int:
    return _nonempty_axis(plan, 1 if _data_format(plan) == "NCX" else plan.ref.rank - 1)


def _tb_grads(plan: Plan) -> bool:
    return plan["diff_gamma"] is not None


def _check_training_backward(plan: Plan) -> None:
    if (plan["diff_gamma"] is None) != (plan["diff_beta"] is None):
        given = "diff_gamma" if plan["diff_gamma"] is not None else "diff_beta"
        plan.fail(INVALID, f"diff_gamma and diff_beta must be both given or both null, got only {given}")
    fmt_name, src = _data_format(plan), plan["src"]
    if src.rank > 2 and ((fmt_name == "NCX" and src.format in CHANNELS_LAST_FORMATS) or
                         (fmt_name == "NXC" and src.format in _CHANNEL_FIRST_FORMATS)):
        plan.fail(INVALID, f"src format {aclFormat(src.format).name} contradicts data_format {fmt_name!r}")
    names = [n for n in _TB_PARAMS if n != "gamma" or _tb_grads(plan)]
    P = _same_param_dtype(plan, names)
    D = plan.dtype("src")
    if P == BF16 and D != BF16:
        plan.fail(INVALID, f"bf16 statistics need bf16 src (oneDNN: f32 src → f32 stats, bf16 → f32 or bf16, "
                           f"f16 → f32), got src {aclDataType(D).name} with {aclDataType(P).name} stats")


def _plan_training_backward(plan: Plan) -> None:
    grads = _tb_grads(plan)
    names = [n for n in _TB_PARAMS if n != "gamma" or grads]
    P = plan.ctype(_same_param_dtype(plan, names))
    _backward_training(plan, dy_name="diff_dst", x_name="src", dx_name="diff_src", P=P,
                       mean=plan.read("mean"), invstd=plan.read("variance"), stat_is_var=True,
                       eps=plan["epsilon"], weight=plan.read("gamma") if grads else None,
                       grad_weight="diff_gamma" if grads else None, grad_bias="diff_beta" if grads else None)


_STATS_T2 = frozenset({F32, BF16})

BatchNormTrainingBackward = register(_op(
    name="BatchNormTrainingBackward",
    group="oneDNN graph BatchNormTrainingBackward",
    params=(
        T("src"),
        T("diff_dst", match="src"),
        T("mean", shape=_ch(), dtypes=_STATS_T2),
        T("variance", shape=_ch(), dtypes=_STATS_T2),
        T("gamma", shape=_ch(), dtypes=_STATS_T2, optional=True),
        A("epsilon", float),
        A("data_format", str, optional=True, choices=("NCX", "NXC")),
        T("diff_src", out=True, match="src", alias=("diff_dst",)),
        T("diff_gamma", out=True, shape=_ch(), dtypes=_STATS_T2, optional=True),
        T("diff_beta", out=True, shape=_ch(), dtypes=_STATS_T2, optional=True),
    ),
    check=_check_training_backward,
    axis=_tb_axis,
    plan=_plan_training_backward,
    plan_empty=lambda plan: _fill_zero(plan, "diff_gamma", "diff_beta"),
    doc="oneDNN graph BatchNormTrainingBackward: takes the variance, invstd = 1/sqrt(variance + epsilon), "
        "x̂ = (src − mean)·invstd; diff_beta = Σdiff_dst, diff_gamma = Σdiff_dst·x̂, diff_src = gamma·invstd·"
        "(diff_dst − diff_beta/n − x̂·diff_gamma/n). data_format \"NXC\" (default, channels last) or \"NCX\". "
        "diff_gamma/diff_beta both or neither (161002); neither: gamma is ignored. dtypes: src f32 with f32 "
        "stats, bf16 with f32 or bf16, f16 with f32 (else 161002); stats share one dtype. Empty input: "
        "diff_gamma = diff_beta = 0. Deterministic.",
), globals())


# aclnnBatchNormActivation / aclnnBatchNormActivationBackward (cuDNN BN-Ex) ---------------------

_RESERVE_DTYPES = frozenset({U8, I32})


def _act(plan: Plan) -> int:
    v = plan["activation_mode"]
    return ACT_MODES["identity" if v is None else v]


def _reserve_bytes(N: int, C: int, S: int, cl: bool, act: int) -> int:
    return bp.reserve_mask_bytes(N, C, S, cl) if act else 0


def _check_activation_common(plan: Plan) -> int:
    act = _act(plan)
    if act == ACT_MODES["clipped_relu"] and plan["ceiling"] is None:
        plan.fail(NULLPTR, "ceiling must not be null with activation_mode 'clipped_relu'")
    if act:
        _need(plan, True, "reserve", f"with activation_mode {plan['activation_mode']!r} (it holds the mask)")
    r = plan["reserve"]
    if r is not None:
        if not r.is_contiguous():
            plan.fail(INVALID, f"reserve must be contiguous, got strides {r.strides} for shape {tuple(r.view_dims)}")
        if (r.offset * r.itemsize) % 4:
            plan.fail(INVALID, f"reserve must start on a 4-byte boundary, got offset {r.offset} "
                               f"({aclDataType(r.data_type).name})")
    return act


def _check_reserve_size(plan: Plan, cl: bool) -> None:
    r = plan["reserve"]
    need = _reserve_bytes(plan.N, plan.C, plan.S, cl, _act(plan))
    if need and r.numel * r.itemsize < need:
        plan.fail(INVALID, f"reserve holds {r.numel * r.itemsize} bytes, the mask needs {need} "
                           f"(aclnnBatchNormActivationGetReserveSpaceSize)")


def _both_or_neither(plan: Plan, a: str, b: str) -> None:
    if (plan[a] is None) != (plan[b] is None):
        missing = a if plan[a] is None else b
        plan.fail(NULLPTR, f"{missing} must not be null when {b if missing == a else a} is given (both or neither)")


_BA_PARAMS = ("weight", "bias", "running_mean", "running_var", "save_mean", "save_invstd")


def _check_bn_activation(plan: Plan) -> None:
    _check_activation_common(plan)
    _both_or_neither(plan, "running_mean", "running_var")
    _both_or_neither(plan, "save_mean", "save_invstd")
    _same_param_dtype(plan, _BA_PARAMS)


def _plan_bn_activation(plan: Plan) -> None:
    act = _act(plan)
    P = plan.ctype(_same_param_dtype(plan, _BA_PARAMS))
    T_ = plan.ctype("input")
    cl = _layout(plan)
    _check_reserve_size(plan, cl)
    x = plan.data_in("input")
    z = plan.data_in("z")
    y = plan.data_out("output")
    mask = plan.write("reserve") if act else None
    m, s, sh = _stats(plan, T_, cl, x, P=P, eps=plan["eps"], momentum=plan["momentum"],
                      weight=plan.read("weight"), bias=plan.read("bias"),
                      save_mean=plan.write("save_mean"), save_invstd=plan.write("save_invstd"),
                      running_mean=plan.update("running_mean"),
                      running_var=plan.update("running_var"))
    _apply(plan, T_, cl, x, y, m, s, sh, z=z, mask=mask, act=act, ceiling=plan["ceiling"] or 0.0)


_ACT_ATTRS = (A("activation_mode", str, optional=True, choices=tuple(ACT_MODES)), A("ceiling", float, optional=True))

BatchNormActivation = register(_op(
    name="BatchNormActivation",
    group=FUSED_GROUP,
    cudnn=("cudnnBatchNormalizationForwardTraining", "cudnnBatchNormalizationForwardTrainingEx",
           "cudnnNormalizationForwardTraining", "cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize",
           "cudnnGetNormalizationForwardTrainingWorkspaceSize", "cudnnGetBatchNormalizationTrainingExReserveSpaceSize",
           "cudnnGetNormalizationTrainingReserveSpaceSize"),
    params=(
        T("input", dtypes=FLOATS_D),
        T("z", dtypes=FLOATS_D, match="input", optional=True),
        T("weight", shape=_ch(), dtypes=PARAM, optional=True),
        T("bias", shape=_ch(), dtypes=PARAM, optional=True),
        T("running_mean", shape=_ch(), dtypes=PARAM, optional=True, written=True),
        T("running_var", shape=_ch(), dtypes=PARAM, optional=True, written=True),
        A("momentum", float),
        A("eps", float),
        *_ACT_ATTRS,
        T("output", out=True, dtypes=FLOATS_D, match="input", alias=("input",)),
        T("save_mean", out=True, shape=_ch(), dtypes=PARAM, optional=True),
        T("save_invstd", out=True, shape=_ch(), dtypes=PARAM, optional=True),
        T("reserve", out=True, dtypes=_RESERVE_DTYPES, optional=True, shape=Rank(1, 8)),
    ),
    check=_check_bn_activation,
    plan=_plan_bn_activation,
    plan_empty=lambda plan: _fill_stats_empty(plan, "save_mean", "save_invstd"),
    doc="cuDNN BN-Ex forward (training): output = act(BN(input) [+ z]), act in {identity, relu, clipped_relu "
        "(ceiling)}; save_mean, save_invstd, running stats as aclnnBatchNorm's training. reserve (UINT8/INT32, "
        "contiguous; size from aclnnBatchNormActivationGetReserveSpaceSize) gets the gradient-pass bit mask "
        "(not written for identity). running_* and save_* both or neither. Data FLOAT/FLOAT16/BF16/DOUBLE "
        "(DOUBLE: DOUBLE per-channel tensors, f64 compute). Deterministic.",
), globals())


_BAB_PARAMS = ("weight", "bias", "save_mean", "save_invstd", "grad_weight", "grad_bias")


def _check_bn_activation_backward(plan: Plan) -> None:
    _check_activation_common(plan)
    _same_param_dtype(plan, _BAB_PARAMS)


def _plan_bn_activation_backward(plan: Plan) -> None:
    act = _act(plan)
    P = plan.ctype(_same_param_dtype(plan, _BAB_PARAMS))
    cl = _layout_of(plan, "input")
    _check_reserve_size(plan, cl)
    _backward_training(plan, dy_name="grad_out", x_name="input", dx_name="grad_input", P=P,
                       mean=plan.read("save_mean"), invstd=plan.read("save_invstd"), stat_is_var=False,
                       eps=plan["eps"], weight=plan.read("weight"), grad_weight=_want(plan, "grad_weight"),
                       grad_bias=_want(plan, "grad_bias"), mask=plan.read("reserve") if act else None,
                       dz_name=_want(plan, "grad_z"), cl=cl)


BatchNormActivationBackward = register(_op(
    name="BatchNormActivationBackward",
    group=FUSED_GROUP,
    cudnn=("cudnnBatchNormalizationBackward", "cudnnBatchNormalizationBackwardEx", "cudnnNormalizationBackward",
           "cudnnGetBatchNormalizationBackwardExWorkspaceSize", "cudnnGetNormalizationBackwardWorkspaceSize"),
    params=(
        T("grad_out", dtypes=FLOATS_D),
        T("input", dtypes=FLOATS_D, match="grad_out"),
        T("weight", shape=_ch(), dtypes=PARAM, optional=True),
        T("bias", shape=_ch(), dtypes=PARAM, optional=True),
        T("save_mean", shape=_ch(), dtypes=PARAM),
        T("save_invstd", shape=_ch(), dtypes=PARAM),
        T("reserve", dtypes=_RESERVE_DTYPES, optional=True, shape=Rank(1, 8)),
        *_ACT_ATTRS,
        A("eps", float),
        T("grad_input", out=True, dtypes=FLOATS_D, match="grad_out"),
        T("grad_z", out=True, dtypes=FLOATS_D, match="grad_out", optional=True),
        T("grad_weight", out=True, shape=_ch(), dtypes=PARAM, optional=True),
        T("grad_bias", out=True, shape=_ch(), dtypes=PARAM, optional=True),
    ),
    check=_check_bn_activation_backward,
    plan=_plan_bn_activation_backward,
    plan_empty=lambda plan: _fill_zero(plan, "grad_weight", "grad_bias"),
    doc="cuDNN BN-Ex backward (training): dy' = grad_out where the forward's reserve bit is set (identity: all), "
        "grad_z = dy' (optional), then BN backward of dy' with save_mean/save_invstd: grad_input, grad_weight "
        "(optional), grad_bias (optional). Pass the same input view as the forward (the mask layout follows its "
        "memory order). bias, ceiling, eps are not needed (cuDNN parity). Data FLOAT/FLOAT16/BF16/DOUBLE (DOUBLE: "
        "DOUBLE per-channel tensors, f64 compute). Empty input: grad_weight = grad_bias "
        "= 0. Deterministic.",
), globals())


@export
def aclnnBatchNormActivationGetReserveSpaceSize(input, activation_mode="identity"):
    """Bytes of ``reserve`` that aclnnBatchNormActivation(Backward) need for ``input`` -> (size, ret).

    The mask has one bit per element, rows padded to 32 bits, in the memory order of ``input``
    (NCX: N·C·ceil(S/32) words, NXC: N·S·ceil(C/32) words); 0 for "identity".
    """
    api = "aclnnBatchNormActivationGetReserveSpaceSize"
    if input is None:
        return 0, fail(NULLPTR, f"{api}: input must not be null")
    if not isinstance(input, aclTensor) or input.destroyed:
        return 0, fail(INVALID, f"{api}: input must be a live aclTensor, got {input!r}")
    mode = "identity" if activation_mode is None else activation_mode
    if mode not in ACT_MODES:
        return 0, fail(INVALID, f"{api}: activation_mode must be one of {tuple(ACT_MODES)}, got {activation_mode!r}")
    if input.data_type not in FLOATS_D:
        return 0, fail(INVALID, f"{api}: input dtype must be one of FLOAT, FLOAT16, BF16, DOUBLE, got "
                                f"{aclDataType(input.data_type).name}")
    if not 2 <= input.rank <= 8:
        return 0, fail(INVALID, f"{api}: input rank must be in [2, 8], got {input.rank}")
    plan = ChannelPlan(BatchNormActivation.opdef, api, {"input": input}, [])
    plan.ref = input
    plan.axis = input.rank - 1 if input.format in CHANNELS_LAST_FORMATS else 1
    if plan.C == 0:
        return 0, fail(INVALID, f"{api}: input channel axis (dim {plan.axis}) has size 0")
    if not input.numel or not ACT_MODES[mode]:
        return 0, AclnnStatus.ACLNN_SUCCESS
    plan.choose_layout()
    return _reserve_bytes(plan.N, plan.C, plan.S, _layout(plan), ACT_MODES[mode]), AclnnStatus.ACLNN_SUCCESS


def _reserve_channels_last(input) -> bool:
    """Whether the reserve mask for ``input`` is in NXC order (tests decode masks with it)."""
    plan = ChannelPlan(BatchNormActivation.opdef, "", {"input": input}, [])
    plan.ref = input
    plan.axis = input.rank - 1 if input.format in CHANNELS_LAST_FORMATS else 1
    plan.choose_layout()
    return _layout(plan)


