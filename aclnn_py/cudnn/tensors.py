"""Tensor descriptors and the ops_infer tensor functions users build inputs with:
cudnnCreate/Set4d/Set4dEx/SetNd/SetNdEx/Get4d/GetNd/GetTensorSizeInBytes/Destroy TensorDescriptor,
cudnnDeriveBNTensorDescriptor, cudnnDeriveNormTensorDescriptor, cudnnSetTensor, cudnnScaleTensor,
cudnnAddTensor, cudnnTransformTensor.

Rules (cuDNN 8.9.7, cudnn.md §5; where the reference is silent, the choice is written here):
- dims must be >= 1 and strides >= 1 (BAD_PARAM otherwise); more than 2**31 - 1 elements:
  NOT_SUPPORTED. nbDims must be in [3, CUDNN_DIM_MAX]: above 8 NOT_SUPPORTED, below 3 BAD_PARAM
  (pad lower-rank data with 1s, as cuDNN recommends). dimA/strideA must hold nbDims ints.
- NCHW_VECT_C needs a vectorised data type (INT8x4, UINT8x4, INT8x32): anything else BAD_PARAM;
  the face computes on FLOAT, HALF, BFLOAT16 and DOUBLE tensors only (others NOT_SUPPORTED at use).
- cudnnGetTensor4dDescriptor of a descriptor that is not 4-D: BAD_PARAM.
- Destroying a destroyed descriptor: BAD_PARAM (cuDNN's behaviour is undefined); NULL: SUCCESS.
"""
from __future__ import annotations

import math

from ..dtypes import aclDataType
from ..tensor import aclCreateScalar
from ._core import (FLOAT_TYPES, ITEMSIZE, SUCCESS, Call, TensorDesc, api, bad, c_int, desc_of, destroy, enum_arg,
                    handle_of, int_array, number, packed_strides, pointer, tensor, unsupported)
from ._enums import CUDNN_DIM_MAX, cudnnBatchNormMode_t, cudnnDataType_t, cudnnNormMode_t, cudnnTensorFormat_t

__all__ = ["cudnnCreateTensorDescriptor", "cudnnSetTensor4dDescriptor", "cudnnSetTensor4dDescriptorEx",
           "cudnnGetTensor4dDescriptor", "cudnnSetTensorNdDescriptor", "cudnnSetTensorNdDescriptorEx",
           "cudnnGetTensorNdDescriptor", "cudnnGetTensorSizeInBytes", "cudnnDestroyTensorDescriptor",
           "cudnnDeriveBNTensorDescriptor", "cudnnDeriveNormTensorDescriptor", "cudnnSetTensor", "cudnnScaleTensor",
           "cudnnAddTensor", "cudnnTransformTensor"]

_VECT = (cudnnDataType_t.CUDNN_DATA_INT8x4, cudnnDataType_t.CUDNN_DATA_UINT8x4, cudnnDataType_t.CUDNN_DATA_INT8x32)
_MAX_ELEMS = (1 << 31) - 1


@api(None)
def cudnnCreateTensorDescriptor():
    """``desc, st``: an unset tensor descriptor."""
    return TensorDesc(), SUCCESS


def _store(d: TensorDesc, dtype, dims, strides) -> None:
    if math.prod(dims) > _MAX_ELEMS:
        unsupported(f"the tensor has {math.prod(dims)} elements, more than 2**31 - 1")
    d.dtype, d.dims, d.strides, d.is_set = dtype, tuple(dims), tuple(strides), True


def _format_strides(fmt, dims):
    """Packed strides of ``dims`` (N, C, spatial...) in NCHW or NHWC (channels innermost) order."""
    if fmt == cudnnTensorFormat_t.CUDNN_TENSOR_NHWC:
        order = [0, *range(2, len(dims)), 1]            # memory order outer -> inner
        st, acc = [0] * len(dims), 1
        for k in reversed(order):
            st[k] = acc
            acc *= dims[k]
        return tuple(st)
    return packed_strides(dims)


def _dims(vals, name):
    out = tuple(c_int(v, f"{name}") for v in vals)
    if any(v <= 0 for v in out):
        bad(f"{name} must be positive, got {out}")
    return out


def _strides(vals, name):
    out = tuple(c_int(v, name) for v in vals)
    if any(v <= 0 for v in out):
        bad(f"{name} must be positive, got {out}")
    return out


def _dtype_fmt(fmt, dataType):
    f = enum_arg(fmt, cudnnTensorFormat_t, "format")
    dt = enum_arg(dataType, cudnnDataType_t, "dataType")
    if f == cudnnTensorFormat_t.CUDNN_TENSOR_NCHW_VECT_C and dt not in _VECT:
        bad(f"format CUDNN_TENSOR_NCHW_VECT_C needs a vectorised dataType (INT8x4, UINT8x4, INT8x32), got {dt.name}")
    if f == cudnnTensorFormat_t.CUDNN_TENSOR_NCHW_VECT_C:
        unsupported("format CUDNN_TENSOR_NCHW_VECT_C is not supported by aclnn-py")
    return f, dt


@api()
def cudnnSetTensor4dDescriptor(tensorDesc, format, dataType, n, c, h, w):   # noqa: A002
    d = desc_of(tensorDesc, TensorDesc, "tensorDesc", must_be_set=False)
    f, dt = _dtype_fmt(format, dataType)
    dims = _dims((n, c, h, w), "n, c, h, w")
    _store(d, dt, dims, _format_strides(f, dims))
    return SUCCESS


@api()
def cudnnSetTensor4dDescriptorEx(tensorDesc, dataType, n, c, h, w, nStride, cStride, hStride, wStride):
    d = desc_of(tensorDesc, TensorDesc, "tensorDesc", must_be_set=False)
    dt = enum_arg(dataType, cudnnDataType_t, "dataType")
    _store(d, dt, _dims((n, c, h, w), "n, c, h, w"), _strides((nStride, cStride, hStride, wStride), "strides"))
    return SUCCESS


def _nb_dims(nbDims):
    nb = c_int(nbDims, "nbDims")
    if nb > CUDNN_DIM_MAX:
        unsupported(f"nbDims = {nb} exceeds CUDNN_DIM_MAX ({CUDNN_DIM_MAX})")
    if nb < 3:
        bad(f"nbDims = {nb}: tensor descriptors have 3 to {CUDNN_DIM_MAX} dims (pad with 1s)")
    return nb


@api()
def cudnnSetTensorNdDescriptor(tensorDesc, dataType, nbDims, dimA, strideA):
    d = desc_of(tensorDesc, TensorDesc, "tensorDesc", must_be_set=False)
    dt = enum_arg(dataType, cudnnDataType_t, "dataType")
    nb = _nb_dims(nbDims)
    dims = _dims(int_array(dimA, nb, "dimA"), "dimA")
    _store(d, dt, dims, _strides(int_array(strideA, nb, "strideA"), "strideA"))
    return SUCCESS


@api()
def cudnnSetTensorNdDescriptorEx(tensorDesc, format, dataType, nbDims, dimA):   # noqa: A002
    d = desc_of(tensorDesc, TensorDesc, "tensorDesc", must_be_set=False)
    f, dt = _dtype_fmt(format, dataType)
    nb = _nb_dims(nbDims)
    dims = _dims(int_array(dimA, nb, "dimA"), "dimA")
    _store(d, dt, dims, _format_strides(f, dims))
    return SUCCESS


@api(None, 0, 0, 0, 0, 0, 0, 0, 0)
def cudnnGetTensor4dDescriptor(tensorDesc):
    """``dataType, n, c, h, w, nStride, cStride, hStride, wStride, st``."""
    d = desc_of(tensorDesc, TensorDesc, "tensorDesc")
    if d.nb_dims != 4:
        bad(f"tensorDesc has {d.nb_dims} dims, not 4 (use cudnnGetTensorNdDescriptor)")
    return (d.dtype, *d.dims, *d.strides, SUCCESS)


@api(None, 0, [], [])
def cudnnGetTensorNdDescriptor(tensorDesc, nbDimsRequested):
    """``dataType, nbDims, dimA, strideA, st``: dimA/strideA hold min(nbDimsRequested, nbDims) values."""
    d = desc_of(tensorDesc, TensorDesc, "tensorDesc")
    k = c_int(nbDimsRequested, "nbDimsRequested")
    if k < 0:
        bad(f"nbDimsRequested must be >= 0, got {k}")
    k = min(k, d.nb_dims)
    return d.dtype, d.nb_dims, list(d.dims[:k]), list(d.strides[:k]), SUCCESS


@api(0)
def cudnnGetTensorSizeInBytes(tensorDesc):
    """``size, st``: bytes from the first to the last element the strides reach."""
    d = desc_of(tensorDesc, TensorDesc, "tensorDesc")
    return d.extent * ITEMSIZE[d.dtype], SUCCESS


@api()
def cudnnDestroyTensorDescriptor(tensorDesc):
    return destroy(tensorDesc, TensorDesc, "tensorDesc")


def _derived(x: TensorDesc, per_activation: bool):
    dims = (1, *x.dims[1:]) if per_activation else (1, x.dims[1], *[1] * (x.nb_dims - 2))
    dt = cudnnDataType_t.CUDNN_DATA_DOUBLE if x.dtype == cudnnDataType_t.CUDNN_DATA_DOUBLE \
        else cudnnDataType_t.CUDNN_DATA_FLOAT
    return dt, dims, packed_strides(dims)


def _xdesc_4d_5d(xDesc):
    x = desc_of(xDesc, TensorDesc, "xDesc")
    if x.nb_dims not in (4, 5):
        bad(f"xDesc has {x.nb_dims} dims; only 4-D and 5-D tensors are supported")
    return x


@api()
def cudnnDeriveBNTensorDescriptor(derivedBnDesc, xDesc, mode):
    """1xCx1x1 (1xCx1x1x1) for SPATIAL / SPATIAL_PERSISTENT, 1xCxHxW (1xCxDxHxW) for PER_ACTIVATION;
    FLOAT for FLOAT/HALF/BFLOAT16 x, DOUBLE for DOUBLE x; packed."""
    out = desc_of(derivedBnDesc, TensorDesc, "derivedBnDesc", must_be_set=False)
    x = _xdesc_4d_5d(xDesc)
    m = enum_arg(mode, cudnnBatchNormMode_t, "mode")
    dt, dims, st = _derived(x, m == cudnnBatchNormMode_t.CUDNN_BATCHNORM_PER_ACTIVATION)
    _store(out, dt, dims, st)
    return SUCCESS


@api()
def cudnnDeriveNormTensorDescriptor(derivedNormScaleBiasDesc, derivedNormMeanVarDesc, xDesc, mode, groupCnt):
    sb = desc_of(derivedNormScaleBiasDesc, TensorDesc, "derivedNormScaleBiasDesc", must_be_set=False)
    mv = desc_of(derivedNormMeanVarDesc, TensorDesc, "derivedNormMeanVarDesc", must_be_set=False)
    x = _xdesc_4d_5d(xDesc)
    m = enum_arg(mode, cudnnNormMode_t, "mode")
    if c_int(groupCnt, "groupCnt") != 1:
        unsupported(f"groupCnt = {groupCnt}: only 1 is supported (as in cuDNN 8)")
    dt, dims, st = _derived(x, m == cudnnNormMode_t.CUDNN_NORM_PER_ACTIVATION)
    _store(sb, dt, dims, st)
    _store(mv, dt, dims, st)
    return SUCCESS


# the tensor functions ------------------------------------------------------------------------------

def float_desc(d: TensorDesc, name: str) -> TensorDesc:
    if d.dtype not in FLOAT_TYPES:
        unsupported(f"{name} has data type {d.dtype.name}; aclnn-py computes FLOAT, HALF, BFLOAT16 and DOUBLE")
    return d


@api()
def cudnnSetTensor(handle, yDesc, y, valuePtr):
    """y[i] = value (any strides)."""
    h = handle_of(handle)
    yd = float_desc(desc_of(yDesc, TensorDesc, "yDesc"), "yDesc")
    yp = pointer(y, "y")
    v = number(valuePtr, "valuePtr")
    call = Call(h)
    call.op("InplaceFillScalar", self_ref=tensor(yd, yp), value=aclCreateScalar(v, aclDataType.ACL_DOUBLE))
    return call.run()


@api()
def cudnnScaleTensor(handle, yDesc, y, alpha):
    """y[i] = alpha·y[i]."""
    h = handle_of(handle)
    yd = float_desc(desc_of(yDesc, TensorDesc, "yDesc"), "yDesc")
    t = tensor(yd, pointer(y, "y"))
    a = number(alpha, "alpha")
    call = Call(h)
    call.blend(t, a, 0.0, t)
    return call.run()


@api()
def cudnnAddTensor(handle, alpha, aDesc, A, beta, cDesc, C):
    """C = alpha·A + beta·C; each dim of A is 1 or C's (A broadcasts); same data type."""
    h = handle_of(handle)
    a, b = number(alpha, "alpha"), number(beta, "beta")
    ad = float_desc(desc_of(aDesc, TensorDesc, "aDesc"), "aDesc")
    cd = float_desc(desc_of(cDesc, TensorDesc, "cDesc"), "cDesc")
    if ad.nb_dims != cd.nb_dims:
        bad(f"aDesc has {ad.nb_dims} dims, cDesc {cd.nb_dims}")
    if any(x not in (1, y) for x, y in zip(ad.dims, cd.dims)):
        bad(f"aDesc dims {ad.dims} must each be 1 or cDesc's {cd.dims}")
    if ad.dtype != cd.dtype:
        unsupported(f"aDesc ({ad.dtype.name}) and cDesc ({cd.dtype.name}) must have one data type")
    call = Call(h)
    call.blend(tensor(ad, pointer(A, "A")), a, b, tensor(cd, pointer(C, "C")))
    return call.run()


@api()
def cudnnTransformTensor(handle, alpha, xDesc, x, beta, yDesc, y):
    """y = alpha·x + beta·y with x and y in their own layouts (NCHW <-> NHWC, any strides); same dims
    and data type."""
    h = handle_of(handle)
    a, b = number(alpha, "alpha"), number(beta, "beta")
    xd = float_desc(desc_of(xDesc, TensorDesc, "xDesc"), "xDesc")
    yd = float_desc(desc_of(yDesc, TensorDesc, "yDesc"), "yDesc")
    if xd.dims != yd.dims:
        bad(f"xDesc dims {xd.dims} and yDesc dims {yd.dims} differ")
    if xd.dtype != yd.dtype:
        unsupported(f"xDesc ({xd.dtype.name}) and yDesc ({yd.dtype.name}): data type conversion is not supported")
    call = Call(h)
    call.blend(tensor(xd, pointer(x, "x")), a, b, tensor(yd, pointer(y, "y")))
    return call.run()
