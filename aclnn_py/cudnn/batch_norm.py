"""Batch normalization and the generalised normalization API (rows 2001–2004, 2007–2012, 2014, 2015,
and cudnnBatchNormalizationForwardInference / cudnnNormalizationForwardInference of ops_infer).

Each call runs the aclnn-py BatchNorm family (aclnn_py/ops/batch_norm.py):

    ForwardTraining(Ex), NormalizationForwardTraining  -> aclnnBatchNormActivation
    Backward(Ex), NormalizationBackward               -> [aclnnBatchNormStats] aclnnBatchNormActivationBackward
    ForwardInference, NormalizationForwardInference   -> aclnnBatchNorm (training = false)
    the reserve-space size queries                    -> aclnnBatchNormActivationGetReserveSpaceSize
    the workspace size queries                        -> phase 1 of the op without addresses

Modes: SPATIAL and SPATIAL_PERSISTENT (NORM_PER_CHANNEL; PERSIST and STANDARD algos) normalise per C
over N and the spatial dims; PER_ACTIVATION (NORM_PER_ACTIVATION) per (C, spatial) position over N:
x is then seen as (N, C·D·H·W) — in place when its non-N dims nest, else packed into scratch first.

Choices where cuDNN's documentation is silent (and the tests pin them):
- The reserve space holds the activation's gradient mask (one bit per element, in x's memory order):
  0 bytes for bnOps BN. BN_ACTIVATION / BN_ADD_ACTIVATION need it in the backward, unchanged.
- bnOps BN_ACTIVATION / BN_ADD_ACTIVATION take activationDesc modes RELU (coef ignored), CLIPPED_RELU
  (coef = ceiling) and IDENTITY; other modes NOT_SUPPORTED.
- dz of BackwardEx (BN_ADD_ACTIVATION) is the gradient after the activation, written as is
  (alphaDataDiff/betaDataDiff blend dx only).
- savedMean/savedInvVariance NULL in the backward: the statistics are recomputed from x.
- Data types: FLOAT, HALF, BFLOAT16 data take FLOAT parameter tensors (scale, bias, means, variances)
  and compute in f32 with f64 statistics combines; DOUBLE data takes DOUBLE parameter tensors (cuDNN's
  "double for double x, else float") and computes everything in f64 (statistics partials, finalize,
  apply, backward sums and coefficients). Any other parameter dtype is BAD_PARAM; other data types
  NOT_SUPPORTED.
- Parameter tensors (scale, bias, means, variances) must be laid out so their C (or C·D·H·W) values
  form one strided run (any packed layout, e.g. cudnnDeriveBNTensorDescriptor's); else NOT_SUPPORTED.
- The running variance is updated with the unbiased batch variance (as cuDNN and PyTorch).
"""
from __future__ import annotations

import math

from ..opdef import REGISTRY
from ..ops.batch_norm import aclnnBatchNormActivationGetReserveSpaceSize
from ._core import (SUCCESS, Call, CudnnFail, TensorDesc, api, bad, bytes_tensor, c_int, desc_of, enum_arg,
                    finite_double, flat_strides, from_aclnn, handle_of, number, pointer, size_arg, tensor, unsupported)
from ._enums import (CUDNN_BN_MIN_EPSILON, cudnnActivationMode_t, cudnnBatchNormMode_t, cudnnBatchNormOps_t,
                     cudnnDataType_t, cudnnNormAlgo_t, cudnnNormMode_t, cudnnNormOps_t)
from .activation import ActivationDesc

__all__ = ["cudnnBatchNormalizationForwardTraining", "cudnnBatchNormalizationForwardTrainingEx",
           "cudnnBatchNormalizationBackward", "cudnnBatchNormalizationBackwardEx",
           "cudnnBatchNormalizationForwardInference", "cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize",
           "cudnnGetBatchNormalizationBackwardExWorkspaceSize", "cudnnGetBatchNormalizationTrainingExReserveSpaceSize",
           "cudnnNormalizationForwardTraining", "cudnnNormalizationBackward", "cudnnNormalizationForwardInference",
           "cudnnGetNormalizationForwardTrainingWorkspaceSize", "cudnnGetNormalizationBackwardWorkspaceSize",
           "cudnnGetNormalizationTrainingReserveSpaceSize"]

F32, F64 = cudnnDataType_t.CUDNN_DATA_FLOAT, cudnnDataType_t.CUDNN_DATA_DOUBLE
_DATA = (cudnnDataType_t.CUDNN_DATA_FLOAT, cudnnDataType_t.CUDNN_DATA_HALF, cudnnDataType_t.CUDNN_DATA_BFLOAT16,
         cudnnDataType_t.CUDNN_DATA_DOUBLE)
_ACT = {cudnnActivationMode_t.CUDNN_ACTIVATION_RELU: "relu",
        cudnnActivationMode_t.CUDNN_ACTIVATION_CLIPPED_RELU: "clipped_relu",
        cudnnActivationMode_t.CUDNN_ACTIVATION_IDENTITY: "identity"}


# descriptors of one call -------------------------------------------------------------------------

def _data(desc, name: str) -> TensorDesc:
    d = desc_of(desc, TensorDesc, name)
    if d.nb_dims not in (4, 5):
        bad(f"{name} has {d.nb_dims} dims; only 4-D and 5-D tensors are supported")
    if d.dtype not in _DATA:
        unsupported(f"{name} data type {d.dtype.name} is not supported (FLOAT, HALF, BFLOAT16, DOUBLE)")
    return d


def _param_dtype(x: TensorDesc):
    """The parameter tensors' data type for data ``x``: DOUBLE for DOUBLE, else FLOAT (cuDNN's rule)."""
    return F64 if x.dtype == F64 else F32


def _same(a: TensorDesc, an: str, b: TensorDesc, bn: str) -> None:
    if a.dims != b.dims:
        bad(f"{an} dims {a.dims} and {bn} dims {b.dims} differ")
    if a.dtype != b.dtype:
        bad(f"{an} ({a.dtype.name}) and {bn} ({b.dtype.name}) data types differ")


class _Geometry:
    """How the data tensors of one call are seen by the aclnn op: as they are (spatial modes) or as
    (N, K) with K = C·spatial (per-activation), in place when the non-N dims nest, else packed."""

    def __init__(self, x: TensorDesc, per_activation: bool):
        self.x, self.per_activation = x, per_activation
        self.pdtype = _param_dtype(x)
        self.N = x.dims[0]
        self.C = math.prod(x.dims[1:]) if per_activation else x.dims[1]
        self.param_dims = (1, *x.dims[1:]) if per_activation else (1, x.dims[1], *[1] * (x.nb_dims - 2))

    def view(self, d: TensorDesc):
        """(dims, strides) of the op's view of data tensor ``d``, or None when it must be packed."""
        if not self.per_activation:
            return d.dims, d.strides
        fl = flat_strides(d.dims, d.strides, 1)
        return None if fl is None else ((self.N, fl[0]), (d.strides[0], fl[1]))

    def op_view(self, d: TensorDesc, addr):
        """An aclTensor for a workspace query (addr None): packed if ``d`` would be packed."""
        v = self.view(d)
        if v is None:
            v = ((self.N, self.C), (self.C, 1))
        return tensor(d, addr, *v)

    def param(self, desc, name: str, dtype_of_x) -> TensorDesc:
        d = desc_of(desc, TensorDesc, name)
        if d.dims != self.param_dims:
            bad(f"{name} dims {d.dims} must be {self.param_dims} for this mode (cudnnDeriveBNTensorDescriptor)")
        if d.dtype != self.pdtype:
            bad(f"{name} data type must be {self.pdtype.name[11:]} for {dtype_of_x.name} data, got {d.dtype.name}")
        if flat_strides(d.dims, d.strides, 0) is None:
            unsupported(f"{name} strides {d.strides}: the {self.C} values must form one strided run")
        return d

    def param_tensor(self, d: TensorDesc, addr):
        if addr is None:
            return None
        _, stride = flat_strides(d.dims, d.strides, 0)
        return tensor(d, addr, (self.C,), (stride,))


class _Data:
    """A data tensor of the call as the op sees it, with what must happen before / after the op."""

    def __init__(self, call: Call, g: _Geometry, d: TensorDesc, addr: int, *, read: bool,
                 alpha: float = 1.0, beta: float = 0.0, must_copy: bool = False):
        self.user = tensor(d, addr)
        self.alpha, self.beta = alpha, beta
        v = g.view(d)
        self.staged = v is None or must_copy or (not read and (alpha, beta) != (1.0, 0.0))
        if not self.staged:
            self.op = tensor(d, addr, *v)
            return
        # packed when the (N, K) view needs it, else dense in d's own memory order (the op plans it as d)
        td, taddr = call.temp(d.dtype, d.dims, like=None if v is None else d)
        self.full = tensor(td, taddr)
        self.op = tensor(td, taddr, *(g.view(td)))
        self.read = read

    def before(self, call: Call) -> None:
        if self.staged and self.read:
            call.blend(self.user, 1.0, 0.0, self.full)

    def after(self, call: Call) -> None:
        if self.staged and not self.read:
            call.blend(self.full, self.alpha, self.beta, self.user)


def _activation(bn_ops: int, activationDesc):
    """(aclnn activation_mode, ceiling) of bnOps / activationDesc."""
    if bn_ops == 0:
        return "identity", None
    d = desc_of(activationDesc, ActivationDesc, "activationDesc")
    if d.mode not in _ACT:
        unsupported(f"activationDesc mode {d.mode.name}: fused batch norm supports RELU, CLIPPED_RELU, IDENTITY")
    return _ACT[d.mode], (d.coef if d.mode == cudnnActivationMode_t.CUDNN_ACTIVATION_CLIPPED_RELU else None)


def _both_or_neither(a, an, b, bn):
    if (a is None) != (b is None):
        bad(f"{an} and {bn} must both be NULL or both be given")


def _epsilon(v) -> float:
    e = finite_double(v, "epsilon")
    if e < CUDNN_BN_MIN_EPSILON:
        bad(f"epsilon = {e} is below CUDNN_BN_MIN_EPSILON ({CUDNN_BN_MIN_EPSILON})")
    return e


def _reserve_need(g: _Geometry, x: TensorDesc, act: str) -> int:
    if act == "identity":
        return 0
    size, ret = aclnnBatchNormActivationGetReserveSpaceSize(g.op_view(x, None), act)
    if ret != 0:
        raise CudnnFail(from_aclnn(ret), "the reserve space size query failed")
    return size


def _reserve_tensor(need: int, addr, size) -> object:
    if need == 0:
        return None
    if addr is None:
        bad(f"reserveSpace is NULL but this bnOps needs {need} bytes (cudnnGet*TrainingExReserveSpaceSize)")
    if size < need:
        bad(f"reserveSpaceSizeInBytes = {size} is smaller than the {need} bytes required")
    return bytes_tensor(addr, need)


# forward training ---------------------------------------------------------------------------------

def _forward_args(handle, per_act, alpha, beta, xDesc, x, yDesc, y, sbDesc, mvDesc, scale, bias, names):
    """The arguments every forward (training and inference) checks the same way, in cuDNN's order."""
    h = handle_of(handle)
    a, b = number(alpha, "alpha"), number(beta, "beta")
    xd, yd = _data(xDesc, "xDesc"), _data(yDesc, "yDesc")
    _same(xd, "xDesc", yd, "yDesc")
    xp, yp = pointer(x, "x"), pointer(y, "y")
    g = _Geometry(xd, per_act)
    sbd = g.param(sbDesc, names[0], xd.dtype)
    mvd = sbd if mvDesc is None else g.param(mvDesc, "normMeanVarDesc", xd.dtype)
    return h, a, b, xd, yd, xp, yp, g, sbd, mvd, pointer(scale, names[1]), pointer(bias, names[2])


def _forward_training(*, handle, per_act, bn_ops, alpha, beta, xDesc, x, zDesc, z, yDesc, y, sbDesc, scale, bias,
                      factor, running_mean, running_var, epsilon, save_mean, save_inv, activationDesc, workspace,
                      ws_size, reserve, rs_size, mvDesc=None, names=("bnScaleBiasMeanVarDesc", "bnScale", "bnBias")):
    h, a, b, xd, yd, xp, yp, g, sbd, mvd, sp, bp = _forward_args(handle, per_act, alpha, beta, xDesc, x, yDesc, y,
                                                                 sbDesc, mvDesc, scale, bias, names)
    f = finite_double(factor, "exponentialAverageFactor")
    rm, rv = pointer(running_mean, "resultRunningMean", False), pointer(running_var, "resultRunningVariance", False)
    _both_or_neither(rm, "resultRunningMean", rv, "resultRunningVariance")
    eps = _epsilon(epsilon)
    sm, si = pointer(save_mean, "resultSaveMean", False), pointer(save_inv, "resultSaveInvVariance", False)
    _both_or_neither(sm, "resultSaveMean", si, "resultSaveInvVariance")
    act, ceiling = _activation(bn_ops, activationDesc)
    zd = zp = None
    if bn_ops == 2:
        zd = _data(zDesc, "zDesc")
        _same(xd, "xDesc", zd, "zDesc")
        zp = pointer(z, "zData")
    wp, wsz = pointer(workspace, "workspace", False), size_arg(ws_size, "workSpaceSizeInBytes")
    rp, rsz = pointer(reserve, "reserveSpace", False), size_arg(rs_size, "reserveSpaceSizeInBytes")
    R = _reserve_tensor(_reserve_need(g, xd, act), rp, rsz)

    call = Call(h, wp, wsz)
    X = _Data(call, g, xd, xp, read=True)
    Z = _Data(call, g, zd, zp, read=True) if zd is not None else None
    Y = _Data(call, g, yd, yp, read=False, alpha=a, beta=b, must_copy=yp == zp and zp is not None)
    for t in (X, Z):
        if t is not None:
            t.before(call)
    call.required_ws = call.op(
        "BatchNormActivation", input=X.op, z=Z.op if Z else None, weight=g.param_tensor(sbd, sp),
        bias=g.param_tensor(sbd, bp), running_mean=g.param_tensor(mvd, rm), running_var=g.param_tensor(mvd, rv),
        momentum=f, eps=eps, activation_mode=act, ceiling=ceiling, output=Y.op,
        save_mean=g.param_tensor(mvd, sm), save_invstd=g.param_tensor(mvd, si), reserve=R)
    Y.after(call)
    return call.run()


@api()
def cudnnBatchNormalizationForwardTraining(handle, mode, alpha, beta, xDesc, x, yDesc, y, bnScaleBiasMeanVarDesc,
                                           bnScale, bnBias, exponentialAverageFactor, resultRunningMean,
                                           resultRunningVariance, epsilon, resultSaveMean, resultSaveInvVariance):
    m = enum_arg(mode, cudnnBatchNormMode_t, "mode")
    return _forward_training(
        handle=handle, per_act=m == 0, bn_ops=0, alpha=alpha, beta=beta, xDesc=xDesc, x=x, zDesc=None, z=None,
        yDesc=yDesc, y=y, sbDesc=bnScaleBiasMeanVarDesc, scale=bnScale, bias=bnBias, factor=exponentialAverageFactor,
        running_mean=resultRunningMean, running_var=resultRunningVariance, epsilon=epsilon,
        save_mean=resultSaveMean, save_inv=resultSaveInvVariance, activationDesc=None, workspace=None, ws_size=0,
        reserve=None, rs_size=0)


@api()
def cudnnBatchNormalizationForwardTrainingEx(handle, mode, bnOps, alpha, beta, xDesc, xData, zDesc, zData, yDesc,
                                             yData, bnScaleBiasMeanVarDesc, bnScale, bnBias, exponentialAverageFactor,
                                             resultRunningMean, resultRunningVariance, epsilon, resultSaveMean,
                                             resultSaveInvVariance, activationDesc, workspace, workSpaceSizeInBytes,
                                             reserveSpace, reserveSpaceSizeInBytes):
    m = enum_arg(mode, cudnnBatchNormMode_t, "mode")
    ops = enum_arg(bnOps, cudnnBatchNormOps_t, "bnOps")
    return _forward_training(
        handle=handle, per_act=m == 0, bn_ops=int(ops), alpha=alpha, beta=beta, xDesc=xDesc, x=xData, zDesc=zDesc,
        z=zData, yDesc=yDesc, y=yData, sbDesc=bnScaleBiasMeanVarDesc, scale=bnScale, bias=bnBias,
        factor=exponentialAverageFactor, running_mean=resultRunningMean, running_var=resultRunningVariance,
        epsilon=epsilon, save_mean=resultSaveMean, save_inv=resultSaveInvVariance, activationDesc=activationDesc,
        workspace=workspace, ws_size=workSpaceSizeInBytes, reserve=reserveSpace, rs_size=reserveSpaceSizeInBytes)


# backward -----------------------------------------------------------------------------------------

def _backward(*, handle, per_act, bn_ops, alphaDataDiff, betaDataDiff, alphaParamDiff, betaParamDiff, xDesc, x,
              yDesc, y, dyDesc, dy, dzDesc, dz, dxDesc, dx, dsbDesc, scale, bias, dscale, dbias, epsilon, save_mean,
              save_inv, activationDesc, workspace, ws_size, reserve, rs_size, mvDesc=None,
              names=("dBnScaleBiasDesc", "bnScale", "dBnScaleResult", "dBnBiasResult")):
    h = handle_of(handle)
    aD, bD = number(alphaDataDiff, "alphaDataDiff"), number(betaDataDiff, "betaDataDiff")
    aP, bP = number(alphaParamDiff, "alphaParamDiff"), number(betaParamDiff, "betaParamDiff")
    xd, dyd, dxd = _data(xDesc, "xDesc"), _data(dyDesc, "dyDesc"), _data(dxDesc, "dxDesc")
    _same(xd, "xDesc", dyd, "dyDesc")
    _same(xd, "xDesc", dxd, "dxDesc")
    xp, dyp, dxp = pointer(x, "x"), pointer(dy, "dy"), pointer(dx, "dx")
    g = _Geometry(xd, per_act)
    pd = g.param(dsbDesc, names[0], xd.dtype)
    mvd = pd if mvDesc is None else g.param(mvDesc, "normMeanVarDesc", xd.dtype)
    sp = pointer(scale, names[1])
    dsp, dbp = pointer(dscale, names[2]), pointer(dbias, names[3])
    eps = _epsilon(epsilon)
    sm, si = pointer(save_mean, "savedMean", False), pointer(save_inv, "savedInvVariance", False)
    _both_or_neither(sm, "savedMean", si, "savedInvVariance")
    act, ceiling = _activation(bn_ops, activationDesc)
    dzd = dzp = None
    if bn_ops == 2:
        dzd = _data(dzDesc, "dzDesc")
        _same(xd, "xDesc", dzd, "dzDesc")
        dzp = pointer(dz, "dzData")
    if bn_ops and y is not None and yDesc is not None:
        _same(xd, "xDesc", _data(yDesc, "yDesc"), "yDesc")
    wp, wsz = pointer(workspace, "workspace", False), size_arg(ws_size, "workSpaceSizeInBytes")
    rp, rsz = pointer(reserve, "reserveSpace", False), size_arg(rs_size, "reserveSpaceSizeInBytes")
    R = _reserve_tensor(_reserve_need(g, xd, act), rp, rsz)

    call = Call(h, wp, wsz)
    X = _Data(call, g, xd, xp, read=True)
    DY = _Data(call, g, dyd, dyp, read=True)
    DX = _Data(call, g, dxd, dxp, read=False, alpha=aD, beta=bD, must_copy=dxp in (dyp, xp))
    DZ = _Data(call, g, dzd, dzp, read=False, must_copy=dzp in (dyp, xp)) if dzd is not None else None
    for t in (X, DY):
        t.before(call)
    if sm is None:                  # recompute the statistics the forward would have saved
        md, maddr = call.temp(g.pdtype, (g.C,))
        sd, saddr = call.temp(g.pdtype, (g.C,))
        mean, invstd = tensor(md, maddr), tensor(sd, saddr)
        call.op("BatchNormStats", input=X.op, eps=eps, mean=mean, invstd=invstd)
    else:
        mean, invstd = g.param_tensor(mvd, sm), g.param_tensor(mvd, si)
    params = []
    for addr in (dsp, dbp):
        user = g.param_tensor(pd, addr)
        if (aP, bP) == (1.0, 0.0):
            params.append((user, None))
        else:
            td, taddr = call.temp(g.pdtype, (g.C,))
            params.append((tensor(td, taddr), user))
    call.required_ws = call.op(
        "BatchNormActivationBackward", grad_out=DY.op, input=X.op, weight=g.param_tensor(pd, sp), bias=None,
        save_mean=mean, save_invstd=invstd, reserve=R, activation_mode=act, ceiling=ceiling, eps=eps,
        grad_input=DX.op, grad_z=DZ.op if DZ else None, grad_weight=params[0][0], grad_bias=params[1][0])
    DX.after(call)
    if DZ is not None:
        DZ.after(call)
    for res, user in params:
        if user is not None:
            call.blend(res, aP, bP, user)
    return call.run()


@api()
def cudnnBatchNormalizationBackward(handle, mode, alphaDataDiff, betaDataDiff, alphaParamDiff, betaParamDiff, xDesc,
                                    x, dyDesc, dy, dxDesc, dx, dBnScaleBiasDesc, bnScale, dBnScaleResult,
                                    dBnBiasResult, epsilon, savedMean, savedInvVariance):
    m = enum_arg(mode, cudnnBatchNormMode_t, "mode")
    return _backward(
        handle=handle, per_act=m == 0, bn_ops=0, alphaDataDiff=alphaDataDiff, betaDataDiff=betaDataDiff,
        alphaParamDiff=alphaParamDiff, betaParamDiff=betaParamDiff, xDesc=xDesc, x=x, yDesc=None, y=None,
        dyDesc=dyDesc, dy=dy, dzDesc=None, dz=None, dxDesc=dxDesc, dx=dx, dsbDesc=dBnScaleBiasDesc, scale=bnScale,
        bias=None, dscale=dBnScaleResult, dbias=dBnBiasResult, epsilon=epsilon, save_mean=savedMean,
        save_inv=savedInvVariance, activationDesc=None, workspace=None, ws_size=0, reserve=None, rs_size=0)


@api()
def cudnnBatchNormalizationBackwardEx(handle, mode, bnOps, alphaDataDiff, betaDataDiff, alphaParamDiff,
                                      betaParamDiff, xDesc, xData, yDesc, yData, dyDesc, dyData, dzDesc, dzData,
                                      dxDesc, dxData, dBnScaleBiasDesc, bnScaleData, bnBiasData, dBnScaleData,
                                      dBnBiasData, epsilon, savedMean, savedInvVariance, activationDesc, workSpace,
                                      workSpaceSizeInBytes, reserveSpace, reserveSpaceSizeInBytes):
    m = enum_arg(mode, cudnnBatchNormMode_t, "mode")
    ops = enum_arg(bnOps, cudnnBatchNormOps_t, "bnOps")
    return _backward(
        handle=handle, per_act=m == 0, bn_ops=int(ops), alphaDataDiff=alphaDataDiff, betaDataDiff=betaDataDiff,
        alphaParamDiff=alphaParamDiff, betaParamDiff=betaParamDiff, xDesc=xDesc, x=xData, yDesc=yDesc, y=yData,
        dyDesc=dyDesc, dy=dyData, dzDesc=dzDesc, dz=dzData, dxDesc=dxDesc, dx=dxData, dsbDesc=dBnScaleBiasDesc,
        scale=bnScaleData, bias=bnBiasData, dscale=dBnScaleData, dbias=dBnBiasData, epsilon=epsilon,
        save_mean=savedMean, save_inv=savedInvVariance, activationDesc=activationDesc, workspace=workSpace,
        ws_size=workSpaceSizeInBytes, reserve=reserveSpace, rs_size=reserveSpaceSizeInBytes,
        names=("dBnScaleBiasDesc", "bnScaleData", "dBnScaleData", "dBnBiasData"))


# inference ----------------------------------------------------------------------------------------

def _inference(*, handle, per_act, alpha, beta, xDesc, x, yDesc, y, sbDesc, scale, bias, mvDesc, mean, var, epsilon,
               names=("bnScaleBiasMeanVarDesc", "bnScale", "bnBias", "estimatedMean", "estimatedVariance")):
    h, a, b, xd, yd, xp, yp, g, sbd, mvd, sp, bp = _forward_args(handle, per_act, alpha, beta, xDesc, x, yDesc, y,
                                                                 sbDesc, mvDesc, scale, bias, names)
    mp, vp = pointer(mean, names[3]), pointer(var, names[4])
    eps = _epsilon(epsilon)
    call = Call(h)
    X = _Data(call, g, xd, xp, read=True)
    Y = _Data(call, g, yd, yp, read=False, alpha=a, beta=b)
    X.before(call)
    call.op("BatchNorm", input=X.op, weight=g.param_tensor(sbd, sp), bias=g.param_tensor(sbd, bp),
            running_mean=g.param_tensor(mvd, mp), running_var=g.param_tensor(mvd, vp), training=False,
            momentum=0.0, eps=eps, output=Y.op, save_mean=None, save_invstd=None)
    Y.after(call)
    return call.run()


@api()
def cudnnBatchNormalizationForwardInference(handle, mode, alpha, beta, xDesc, x, yDesc, y, bnScaleBiasMeanVarDesc,
                                            bnScale, bnBias, estimatedMean, estimatedVariance, epsilon):
    m = enum_arg(mode, cudnnBatchNormMode_t, "mode")
    return _inference(handle=handle, per_act=m == 0, alpha=alpha, beta=beta, xDesc=xDesc, x=x, yDesc=yDesc, y=y,
                      sbDesc=bnScaleBiasMeanVarDesc, scale=bnScale, bias=bnBias, mvDesc=None, mean=estimatedMean,
                      var=estimatedVariance, epsilon=epsilon)


# size queries -------------------------------------------------------------------------------------

def _query_tensors(g: _Geometry, pd: TensorDesc):
    return lambda: tensor(pd, None, (g.C,), (flat_strides(pd.dims, pd.strides, 0)[1],))


def _reserve_query_tensor(need: int):
    return bytes_tensor(None, need) if need else None


def _fwd_ws_query(handle, per_act, bn_ops, xDesc, zDesc, yDesc, sbDesc, activationDesc, mvDesc=None,
                  sb_name="bnScaleBiasMeanVarDesc"):
    """Phase 1 of aclnnBatchNormActivation on the call's descriptors, without addresses."""
    handle_of(handle)
    xd = _data(xDesc, "xDesc")
    g = _Geometry(xd, per_act)
    yd = xd if yDesc is None else _data(yDesc, "yDesc")
    _same(xd, "xDesc", yd, "yDesc")
    zd = None
    if bn_ops == 2:
        zd = xd if zDesc is None else _data(zDesc, "zDesc")
        _same(xd, "xDesc", zd, "zDesc")
    pd = g.param(sbDesc, sb_name, xd.dtype)
    if mvDesc is not None:
        g.param(mvDesc, "normMeanVarDesc", xd.dtype)
    act, ceiling = _activation(bn_ops, activationDesc)
    P = _query_tensors(g, pd)
    size, ret = REGISTRY["BatchNormActivation"].workspace_query(
        input=g.op_view(xd, None), z=g.op_view(zd, None) if zd else None, weight=P(), bias=P(), running_mean=P(),
        running_var=P(), momentum=0.1, eps=1e-5, activation_mode=act, ceiling=ceiling, output=g.op_view(yd, None),
        save_mean=P(), save_invstd=P(), reserve=_reserve_query_tensor(_reserve_need(g, xd, act)))
    if ret != 0:
        raise CudnnFail(from_aclnn(ret), "the workspace query failed")
    return size, SUCCESS


def _bwd_ws_query(handle, per_act, bn_ops, xDesc, yDesc, dyDesc, dzDesc, dxDesc, dsbDesc, activationDesc, mvDesc=None,
                  sb_name="dBnScaleBiasDesc"):
    """Phase 1 of aclnnBatchNormActivationBackward on the call's descriptors, without addresses."""
    handle_of(handle)
    xd = _data(xDesc, "xDesc")
    g = _Geometry(xd, per_act)
    views = {}
    for d, n in ((yDesc, "yDesc"), (dyDesc, "dyDesc"), (dzDesc, "dzDesc"), (dxDesc, "dxDesc")):
        if d is not None and (n != "dzDesc" or bn_ops == 2) and (n != "yDesc" or bn_ops):
            views[n] = _data(d, n)
            _same(xd, "xDesc", views[n], n)
    pd = g.param(dsbDesc, sb_name, xd.dtype)
    if mvDesc is not None:
        g.param(mvDesc, "normMeanVarDesc", xd.dtype)
    act, ceiling = _activation(bn_ops, activationDesc)
    P = _query_tensors(g, pd)
    v = lambda n: g.op_view(views.get(n, xd), None)      # noqa: E731
    size, ret = REGISTRY["BatchNormActivationBackward"].workspace_query(
        grad_out=v("dyDesc"), input=g.op_view(xd, None), weight=P(), bias=None, save_mean=P(), save_invstd=P(),
        reserve=_reserve_query_tensor(_reserve_need(g, xd, act)), activation_mode=act, ceiling=ceiling, eps=1e-5,
        grad_input=v("dxDesc"), grad_z=v("dzDesc") if bn_ops == 2 else None, grad_weight=P(), grad_bias=P())
    if ret != 0:
        raise CudnnFail(from_aclnn(ret), "the workspace query failed")
    return size, SUCCESS


@api(0)
def cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(handle, mode, bnOps, xDesc, zDesc, yDesc,
                                                             bnScaleBiasMeanVarDesc, activationDesc):
    m = enum_arg(mode, cudnnBatchNormMode_t, "mode")
    ops = enum_arg(bnOps, cudnnBatchNormOps_t, "bnOps")
    return _fwd_ws_query(handle, m == 0, int(ops), xDesc, zDesc, yDesc, bnScaleBiasMeanVarDesc, activationDesc)


@api(0)
def cudnnGetBatchNormalizationBackwardExWorkspaceSize(handle, mode, bnOps, xDesc, yDesc, dyDesc, dzDesc, dxDesc,
                                                      dBnScaleBiasDesc, activationDesc):
    m = enum_arg(mode, cudnnBatchNormMode_t, "mode")
    ops = enum_arg(bnOps, cudnnBatchNormOps_t, "bnOps")
    return _bwd_ws_query(handle, m == 0, int(ops), xDesc, yDesc, dyDesc, dzDesc, dxDesc, dBnScaleBiasDesc,
                         activationDesc)


def _reserve_query(handle, per_act, bn_ops, activationDesc, xDesc):
    handle_of(handle)
    xd = _data(xDesc, "xDesc")
    act, _ = _activation(bn_ops, activationDesc)
    return _reserve_need(_Geometry(xd, per_act), xd, act), SUCCESS


@api(0)
def cudnnGetBatchNormalizationTrainingExReserveSpaceSize(handle, mode, bnOps, activationDesc, xDesc):
    m = enum_arg(mode, cudnnBatchNormMode_t, "mode")
    ops = enum_arg(bnOps, cudnnBatchNormOps_t, "bnOps")
    return _reserve_query(handle, m == 0, int(ops), activationDesc, xDesc)


# the normalization API (cuDNN 8's generalisation of BN) ------------------------------------------

def _norm(mode, normOps, algo, groupCnt):
    m = enum_arg(mode, cudnnNormMode_t, "mode")
    ops = enum_arg(normOps, cudnnNormOps_t, "normOps")
    enum_arg(algo, cudnnNormAlgo_t, "algo")
    if c_int(groupCnt, "groupCnt") != 1:
        unsupported(f"groupCnt = {groupCnt}: only 1 is supported (as in cuDNN 8)")
    return m == cudnnNormMode_t.CUDNN_NORM_PER_ACTIVATION, int(ops)


@api()
def cudnnNormalizationForwardTraining(handle, mode, normOps, algo, alpha, beta, xDesc, xData, normScaleBiasDesc,
                                      normScale, normBias, exponentialAverageFactor, normMeanVarDesc,
                                      resultRunningMean, resultRunningVariance, epsilon, resultSaveMean,
                                      resultSaveInvVariance, activationDesc, zDesc, zData, yDesc, yData, workspace,
                                      workSpaceSizeInBytes, reserveSpace, reserveSpaceSizeInBytes, groupCnt):
    per_act, ops = _norm(mode, normOps, algo, groupCnt)
    return _forward_training(
        handle=handle, per_act=per_act, bn_ops=ops, alpha=alpha, beta=beta, xDesc=xDesc, x=xData, zDesc=zDesc,
        z=zData, yDesc=yDesc, y=yData, sbDesc=normScaleBiasDesc, scale=normScale, bias=normBias,
        factor=exponentialAverageFactor, running_mean=resultRunningMean, running_var=resultRunningVariance,
        epsilon=epsilon, save_mean=resultSaveMean, save_inv=resultSaveInvVariance, activationDesc=activationDesc,
        workspace=workspace, ws_size=workSpaceSizeInBytes, reserve=reserveSpace, rs_size=reserveSpaceSizeInBytes,
        mvDesc=normMeanVarDesc, names=("normScaleBiasDesc", "normScale", "normBias"))


@api()
def cudnnNormalizationBackward(handle, mode, normOps, algo, alphaDataDiff, betaDataDiff, alphaParamDiff,
                               betaParamDiff, xDesc, xData, yDesc, yData, dyDesc, dyData, dzDesc, dzData, dxDesc,
                               dxData, dNormScaleBiasDesc, normScaleData, normBiasData, dNormScaleData, dNormBiasData,
                               epsilon, normMeanVarDesc, savedMean, savedInvVariance, activationDesc, workSpace,
                               workSpaceSizeInBytes, reserveSpace, reserveSpaceSizeInBytes, groupCnt):
    per_act, ops = _norm(mode, normOps, algo, groupCnt)
    return _backward(
        handle=handle, per_act=per_act, bn_ops=ops, alphaDataDiff=alphaDataDiff, betaDataDiff=betaDataDiff,
        alphaParamDiff=alphaParamDiff, betaParamDiff=betaParamDiff, xDesc=xDesc, x=xData, yDesc=yDesc, y=yData,
        dyDesc=dyDesc, dy=dyData, dzDesc=dzDesc, dz=dzData, dxDesc=dxDesc, dx=dxData, dsbDesc=dNormScaleBiasDesc,
        scale=normScaleData, bias=normBiasData, dscale=dNormScaleData, dbias=dNormBiasData, epsilon=epsilon,
        save_mean=savedMean, save_inv=savedInvVariance, activationDesc=activationDesc, workspace=workSpace,
        ws_size=workSpaceSizeInBytes, reserve=reserveSpace, rs_size=reserveSpaceSizeInBytes, mvDesc=normMeanVarDesc,
        names=("dNormScaleBiasDesc", "normScaleData", "dNormScaleData", "dNormBiasData"))


@api()
def cudnnNormalizationForwardInference(handle, mode, normOps, algo, alpha, beta, xDesc, x, normScaleBiasDesc,
                                       normScale, normBias, normMeanVarDesc, estimatedMean, estimatedVariance, zDesc,
                                       z, activationDesc, yDesc, y, epsilon, groupCnt):
    """ops_infer's normalization inference; normOps other than NORM: NOT_SUPPORTED (no fused inference)."""
    per_act, ops = _norm(mode, normOps, algo, groupCnt)
    if ops != 0:
        unsupported("normOps NORM_ACTIVATION / NORM_ADD_ACTIVATION in inference are not supported by aclnn-py")
    return _inference(handle=handle, per_act=per_act, alpha=alpha, beta=beta, xDesc=xDesc, x=x, yDesc=yDesc, y=y,
                      sbDesc=normScaleBiasDesc, scale=normScale, bias=normBias, mvDesc=normMeanVarDesc,
                      mean=estimatedMean, var=estimatedVariance, epsilon=epsilon,
                      names=("normScaleBiasDesc", "normScale", "normBias", "estimatedMean", "estimatedVariance"))


@api(0)
def cudnnGetNormalizationForwardTrainingWorkspaceSize(handle, mode, normOps, algo, xDesc, zDesc, yDesc,
                                                      normScaleBiasDesc, activationDesc, normMeanVarDesc, groupCnt):
    per_act, ops = _norm(mode, normOps, algo, groupCnt)
    return _fwd_ws_query(handle, per_act, ops, xDesc, zDesc, yDesc, normScaleBiasDesc, activationDesc,
                         normMeanVarDesc, "normScaleBiasDesc")


@api(0)
def cudnnGetNormalizationBackwardWorkspaceSize(handle, mode, normOps, algo, xDesc, yDesc, dyDesc, dzDesc, dxDesc,
                                               dNormScaleBiasDesc, activationDesc, normMeanVarDesc, groupCnt):
    per_act, ops = _norm(mode, normOps, algo, groupCnt)
    return _bwd_ws_query(handle, per_act, ops, xDesc, yDesc, dyDesc, dzDesc, dxDesc, dNormScaleBiasDesc,
                         activationDesc, normMeanVarDesc, "dNormScaleBiasDesc")


@api(0)
def cudnnGetNormalizationTrainingReserveSpaceSize(handle, mode, normOps, algo, activationDesc, xDesc, groupCnt):
    per_act, ops = _norm(mode, normOps, algo, groupCnt)
    return _reserve_query(handle, per_act, ops, activationDesc, xDesc)
