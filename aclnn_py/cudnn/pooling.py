"""Pooling: row 2017 cudnnPoolingBackward, its forward cudnnPoolingForward and the pooling descriptor
(cudnnCreate/Set2d/SetNd/Get2d/GetNd/Destroy PoolingDescriptor, cudnnGetPooling2d/NdForwardOutputDim),
over the aclnn pooling ops (aclnnMaxPool2dWithIndices, aclnnMaxPool3dWithArgmax, aclnnAvgPool2d,
aclnnAvgPool3d and their backward ops).

cuDNN's pooling: symmetric padding, output 1 + (in + 2·pad − window)/stride (floor), 2 or 3 spatial
dims (4-D / 5-D tensors, any strides). MAX and MAX_DETERMINISTIC are the same deterministic
algorithm: cudnnPoolingBackward recomputes the argmax from x (aclnn max pooling with indices into
the handle's scratch), then gathers dy per input element in a fixed order — no atomics. AVERAGE
_COUNT_INCLUDE_PADDING / _EXCLUDE_PADDING divide by the padded / unpadded window size. Ties: the first
maximum in window order; NaN propagates whatever maxpoolingNanOpt says (the kernels compare as PyTorch).
Choices and limits: padding greater than half the window (which cuDNN accepts, giving windows that
may lie wholly in the padding) is NOT_SUPPORTED (the aclnn ops' rule); FLOAT, HALF, BFLOAT16 (computed
in f32) and DOUBLE (computed in f64: the aclnn pooling ops take DOUBLE as an aclnn-py extension); other
data types are NOT_SUPPORTED.
Statuses (cudnn.md §4.7): invalid mode or NaN option, negative or zero window/stride, negative
padding, nbDims other than 2 or 3 or not matching the tensors, y/dy or x/dx dims or strides that
differ, data types that differ, a y whose dims are not the forward's output dims: BAD_PARAM.
"""
from __future__ import annotations

from ..tensor import aclCreateIntArray
from ._core import (SUCCESS, Call, Descriptor, TensorDesc, api, bad, c_int, desc_of, destroy, enum_arg, handle_of,
                    int_array, number, pointer, tensor, unsupported)
from ._enums import cudnnDataType_t, cudnnNanPropagation_t, cudnnPoolingMode_t
from .activation import _result
from .lrn import _staged

__all__ = ["cudnnCreatePoolingDescriptor", "cudnnSetPooling2dDescriptor", "cudnnSetPoolingNdDescriptor",
           "cudnnGetPooling2dDescriptor", "cudnnGetPoolingNdDescriptor", "cudnnDestroyPoolingDescriptor",
           "cudnnGetPooling2dForwardOutputDim", "cudnnGetPoolingNdForwardOutputDim", "cudnnPoolingForward",
           "cudnnPoolingBackward"]

_DT = (cudnnDataType_t.CUDNN_DATA_FLOAT, cudnnDataType_t.CUDNN_DATA_HALF, cudnnDataType_t.CUDNN_DATA_BFLOAT16,
       cudnnDataType_t.CUDNN_DATA_DOUBLE)
_MAX = (cudnnPoolingMode_t.CUDNN_POOLING_MAX, cudnnPoolingMode_t.CUDNN_POOLING_MAX_DETERMINISTIC)


class PoolingDesc(Descriptor):
    kind = "cudnnPoolingDescriptor_t"

    def __init__(self):
        super().__init__()
        self.mode, self.nan_opt = cudnnPoolingMode_t.CUDNN_POOLING_MAX, cudnnNanPropagation_t.CUDNN_NOT_PROPAGATE_NAN
        self.window, self.padding, self.stride = (), (), ()


@api(None)
def cudnnCreatePoolingDescriptor():
    return PoolingDesc(), SUCCESS


def _set(d, mode, nan, window, padding, stride):
    m = enum_arg(mode, cudnnPoolingMode_t, "mode")
    n = enum_arg(nan, cudnnNanPropagation_t, "maxpoolingNanOpt")
    w = tuple(c_int(v, "window") for v in window)
    p = tuple(c_int(v, "padding") for v in padding)
    s = tuple(c_int(v, "stride") for v in stride)
    if any(v <= 0 for v in w):
        bad(f"window dims must be positive, got {w}")
    if any(v < 0 for v in p):
        bad(f"padding must not be negative, got {p}")
    if any(v <= 0 for v in s):
        bad(f"stride must be positive, got {s}")
    d.mode, d.nan_opt, d.window, d.padding, d.stride, d.is_set = m, n, w, p, s, True
    return SUCCESS


@api()
def cudnnSetPooling2dDescriptor(poolingDesc, mode, maxpoolingNanOpt, windowHeight, windowWidth, verticalPadding,
                                horizontalPadding, verticalStride, horizontalStride):
    d = desc_of(poolingDesc, PoolingDesc, "poolingDesc", must_be_set=False)
    return _set(d, mode, maxpoolingNanOpt, (windowHeight, windowWidth), (verticalPadding, horizontalPadding),
                (verticalStride, horizontalStride))


@api()
def cudnnSetPoolingNdDescriptor(poolingDesc, mode, maxpoolingNanOpt, nbDims, windowDimA, paddingA, strideA):
    d = desc_of(poolingDesc, PoolingDesc, "poolingDesc", must_be_set=False)
    nb = c_int(nbDims, "nbDims")
    if nb not in (2, 3):
        bad(f"nbDims = {nb}: pooling has 2 or 3 spatial dims")
    return _set(d, mode, maxpoolingNanOpt, int_array(windowDimA, nb, "windowDimA"), int_array(paddingA, nb, "paddingA"),
                int_array(strideA, nb, "strideA"))


@api(None, None, 0, 0, 0, 0, 0, 0)
def cudnnGetPooling2dDescriptor(poolingDesc):
    """``mode, maxpoolingNanOpt, windowHeight, windowWidth, verticalPadding, horizontalPadding,
    verticalStride, horizontalStride, st``."""
    d = desc_of(poolingDesc, PoolingDesc, "poolingDesc")
    if len(d.window) != 2:
        bad("poolingDesc is 3-D (use cudnnGetPoolingNdDescriptor)")
    return (d.mode, d.nan_opt, *d.window, *d.padding, *d.stride, SUCCESS)


@api(None, None, 0, [], [], [])
def cudnnGetPoolingNdDescriptor(poolingDesc, nbDimsRequested):
    """``mode, maxpoolingNanOpt, nbDims, windowDimA, paddingA, strideA, st``."""
    d = desc_of(poolingDesc, PoolingDesc, "poolingDesc")
    k = max(0, min(c_int(nbDimsRequested, "nbDimsRequested"), len(d.window)))
    return d.mode, d.nan_opt, len(d.window), list(d.window[:k]), list(d.padding[:k]), list(d.stride[:k]), SUCCESS


@api()
def cudnnDestroyPoolingDescriptor(poolingDesc):
    return destroy(poolingDesc, PoolingDesc, "poolingDesc")


def _out_dims(d: PoolingDesc, x: TensorDesc):
    S = len(d.window)
    if x.nb_dims != S + 2:
        bad(f"the tensor has {x.nb_dims} dims; a {S}-D pooling descriptor needs {S + 2}")
    sp = [1 + (i + 2 * p - k) // s for i, k, p, s in zip(x.dims[2:], d.window, d.padding, d.stride)]
    if any(v < 1 for v in sp):
        bad(f"the window {d.window} with padding {d.padding} does not fit the input {x.dims}")
    return (*x.dims[:2], *sp)


@api(0, 0, 0, 0)
def cudnnGetPooling2dForwardOutputDim(poolingDesc, inputTensorDesc):
    """``n, c, h, w, st``."""
    d = desc_of(poolingDesc, PoolingDesc, "poolingDesc")
    x = desc_of(inputTensorDesc, TensorDesc, "inputTensorDesc")
    if len(d.window) != 2:
        bad("poolingDesc is 3-D (use cudnnGetPoolingNdForwardOutputDim)")
    return (*_out_dims(d, x), SUCCESS)


@api([])
def cudnnGetPoolingNdForwardOutputDim(poolingDesc, inputTensorDesc, nbDims):
    """``outputTensorDimA, st``."""
    d = desc_of(poolingDesc, PoolingDesc, "poolingDesc")
    x = desc_of(inputTensorDesc, TensorDesc, "inputTensorDesc")
    if c_int(nbDims, "nbDims") != x.nb_dims:
        bad(f"nbDims = {nbDims} differs from inputTensorDesc's {x.nb_dims}")
    return list(_out_dims(d, x)), SUCCESS


def _tensor_desc(d, name):
    t = desc_of(d, TensorDesc, name)
    if t.dtype not in _DT:
        unsupported(f"{name} data type {t.dtype.name}: pooling computes FLOAT, HALF, BFLOAT16, DOUBLE")
    return t


def _attrs(d: PoolingDesc):
    if any(2 * p > k for p, k in zip(d.padding, d.window)):
        unsupported(f"padding {d.padding} greater than half the window {d.window} is not supported")
    ia = lambda v: aclCreateIntArray(list(v))      # noqa: E731
    return ia(d.window), ia(d.stride), ia(d.padding), ia([1] * len(d.window))


def _max_forward(call: Call, d: PoolingDesc, x, y_t, yd: TensorDesc):
    """Max pooling of x into y_t (an aclTensor of yd's dims); the indices go to scratch."""
    k, s, p, dil = _attrs(d)
    idd, iaddr = call.temp(cudnnDataType_t.CUDNN_DATA_INT64, yd.dims, like=yd)
    idx = tensor(idd, iaddr)
    name = "MaxPool2dWithIndices" if len(d.window) == 2 else "MaxPool3dWithArgmax"
    call.op(name, self=x, kernel_size=k, stride=s, padding=p, dilation=dil, ceil_mode=False, out=y_t, indices=idx)
    return idx, name


@api()
def cudnnPoolingForward(handle, poolingDesc, alpha, xDesc, x, beta, yDesc, y):
    h = handle_of(handle)
    d = desc_of(poolingDesc, PoolingDesc, "poolingDesc")
    a, b = number(alpha, "alpha"), number(beta, "beta")
    xd, yd = _tensor_desc(xDesc, "xDesc"), _tensor_desc(yDesc, "yDesc")
    if xd.dtype != yd.dtype:
        bad(f"xDesc ({xd.dtype.name}) and yDesc ({yd.dtype.name}) data types differ")
    want = _out_dims(d, xd)
    if yd.dims != want:
        bad(f"yDesc dims {yd.dims} are not the pooling output dims {want}")
    xp, yp = pointer(x, "x"), pointer(y, "y")
    call = Call(h)
    out, finish = _result(call, yd, yp, a, b)
    if out.addr == xp:
        out, finish = _staged(call, yd, yp, a, b)
    X = tensor(xd, xp)
    if d.mode in _MAX:
        _max_forward(call, d, X, out, yd)
    else:
        k, s, p, _ = _attrs(d)
        cip = d.mode == cudnnPoolingMode_t.CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
        if len(d.window) == 2:
            call.op("AvgPool2d", self=X, kernel_size=k, strides=s, paddings=p, ceil_mode=False, count_include_pad=cip,
                    divisor_override=0, cube_math_type=0, out=out)
        else:
            call.op("AvgPool3d", self=X, kernel_size=k, stride=s, padding=p, ceil_mode=False, count_include_pad=cip,
                    divisor_override=0, out=out)
    finish()
    return call.run()


@api()
def cudnnPoolingBackward(handle, poolingDesc, alpha, yDesc, y, dyDesc, dy, xDesc, x, beta, dxDesc, dx):
    h = handle_of(handle)
    d = desc_of(poolingDesc, PoolingDesc, "poolingDesc")
    a, b = number(alpha, "alpha"), number(beta, "beta")
    yd, dyd = _tensor_desc(yDesc, "yDesc"), _tensor_desc(dyDesc, "dyDesc")
    xd, dxd = _tensor_desc(xDesc, "xDesc"), _tensor_desc(dxDesc, "dxDesc")
    for (p_, pn), (q, qn) in (((yd, "yDesc"), (dyd, "dyDesc")), ((xd, "xDesc"), (dxd, "dxDesc"))):
        if p_.dims != q.dims:
            bad(f"{pn} dims {p_.dims} and {qn} dims {q.dims} differ")
        if p_.strides != q.strides:
            bad(f"{pn} strides {p_.strides} and {qn} strides {q.strides} differ")
    if len({t.dtype for t in (yd, dyd, xd, dxd)}) != 1:
        bad("yDesc, dyDesc, xDesc and dxDesc must have one data type")
    want = _out_dims(d, xd)
    if yd.dims != want:
        bad(f"yDesc dims {yd.dims} are not the pooling output dims {want} of xDesc")
    yp, dyp, xp, dxp = pointer(y, "y"), pointer(dy, "dy"), pointer(x, "x"), pointer(dx, "dx")
    call = Call(h)
    out, finish = _result(call, dxd, dxp, a, b)
    if out.addr in (xp, yp, dyp):
        out, finish = _staged(call, dxd, dxp, a, b)
    X, DY = tensor(xd, xp), tensor(dyd, dyp)
    k, s, p, dil = _attrs(d)
    if d.mode in _MAX:
        ytd, yaddr = call.temp(yd.dtype, yd.dims, like=yd)          # the argmax, recomputed from x
        idx, name = _max_forward(call, d, X, tensor(ytd, yaddr), yd)
        call.op(name + "Backward", grad_output=DY, self=X, indices=idx, kernel_size=k, stride=s, padding=p,
                dilation=dil, ceil_mode=False, grad_input=out)
    else:
        cip = d.mode == cudnnPoolingMode_t.CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
        if len(d.window) == 2:
            call.op("AvgPool2dBackward", grad_output=DY, self=X, kernel_size=k, stride=s, padding=p, ceil_mode=False,
                    count_include_pad=cip, divisor_override=0, cube_math_type=0, grad_input=out)
        else:
            call.op("AvgPool3dBackward", grad_output=DY, self=X, kernel_size=k, stride=s, padding=p, ceil_mode=False,
                    count_include_pad=cip, divisor_override=0, output=out)
    finish()
    return call.run()
