"""Activation descriptors (cudnnCreate/Set/Get/Destroy ActivationDescriptor, the swish beta) and row
2000 cudnnActivationBackward with its forward cudnnActivationForward, over the extension ops
aclnnpyActivation / aclnnpyActivationBackward of the activation family.

``coef`` is the clipping threshold of CLIPPED_RELU and alpha of ELU; cudnnCreateActivationDescriptor
gives (RELU, NOT_PROPAGATE_NAN, coef 0, swish beta 1). Choices where cuDNN's docs are silent:
- RELU ignores coef (max(x, 0): the "upper bound" wording of the 8.x docs is unverified, and programs
  pass 0 or a huge value); its gradient is dy where x > 0. CLIPPED_RELU's gradient: dy where
  0 < x < coef. SIGMOID and TANH gradients use y, the others x.
- IDENTITY: BAD_PARAM (the docs: "does not work with cudnnActivationForward/Backward").
- Statuses as cuDNN's Returns list (cudnn.md §4.1): dims or data types of y, dy, x, dx differ, or the
  strides of x and dx (or of y and dy) differ: NOT_SUPPORTED; in place (dx == dy) with different
  dy/dx strides: BAD_PARAM. Forward: x/y dims or data types differ: NOT_SUPPORTED.
- reluNanOpt is accepted; NaN propagates through every mode (as PROPAGATE_NAN).
"""
from __future__ import annotations

from ._core import (SUCCESS, Call, Descriptor, TensorDesc, api, bad, desc_of, destroy, enum_arg, finite_double,
                    handle_of, number, pointer, tensor, unsupported)
from ._enums import cudnnActivationMode_t, cudnnNanPropagation_t
from .tensors import float_desc

__all__ = ["cudnnCreateActivationDescriptor", "cudnnSetActivationDescriptor", "cudnnGetActivationDescriptor",
           "cudnnSetActivationDescriptorSwishBeta", "cudnnGetActivationDescriptorSwishBeta",
           "cudnnDestroyActivationDescriptor", "cudnnActivationForward", "cudnnActivationBackward"]


class ActivationDesc(Descriptor):
    kind = "cudnnActivationDescriptor_t"

    def __init__(self):
        super().__init__()
        self.mode = cudnnActivationMode_t.CUDNN_ACTIVATION_RELU
        self.nan_opt = cudnnNanPropagation_t.CUDNN_NOT_PROPAGATE_NAN
        self.coef = 0.0
        self.swish_beta = 1.0
        self.is_set = True        # usable with its defaults, as cuDNN's


@api(None)
def cudnnCreateActivationDescriptor():
    return ActivationDesc(), SUCCESS


@api()
def cudnnSetActivationDescriptor(activationDesc, mode, reluNanOpt, coef):
    d = desc_of(activationDesc, ActivationDesc, "activationDesc")
    m = enum_arg(mode, cudnnActivationMode_t, "mode")
    n = enum_arg(reluNanOpt, cudnnNanPropagation_t, "reluNanOpt")
    c = finite_double(coef, "coef")
    d.mode, d.nan_opt, d.coef = m, n, c
    return SUCCESS


@api(None, None, 0.0)
def cudnnGetActivationDescriptor(activationDesc):
    """``mode, reluNanOpt, coef, st``."""
    d = desc_of(activationDesc, ActivationDesc, "activationDesc")
    return d.mode, d.nan_opt, d.coef, SUCCESS


@api()
def cudnnSetActivationDescriptorSwishBeta(activationDesc, swish_beta):
    d = desc_of(activationDesc, ActivationDesc, "activationDesc")
    d.swish_beta = finite_double(swish_beta, "swish_beta")
    return SUCCESS


@api(0.0)
def cudnnGetActivationDescriptorSwishBeta(activationDesc):
    return desc_of(activationDesc, ActivationDesc, "activationDesc").swish_beta, SUCCESS


@api()
def cudnnDestroyActivationDescriptor(activationDesc):
    return destroy(activationDesc, ActivationDesc, "activationDesc")


def _mode(activationDesc) -> tuple[str, float, float]:
    d = desc_of(activationDesc, ActivationDesc, "activationDesc")
    if d.mode == cudnnActivationMode_t.CUDNN_ACTIVATION_IDENTITY:
        bad("activationDesc mode CUDNN_ACTIVATION_IDENTITY does not work with cudnnActivationForward/Backward")
    return d.mode.name[17:], d.coef, d.swish_beta


def _same_dims_types(pairs):
    for (a, an), (b, bn) in pairs:
        if a.dims != b.dims:
            unsupported(f"{an} dims {a.dims} and {bn} dims {b.dims} differ")
        if a.dtype != b.dtype:
            unsupported(f"{an} ({a.dtype.name}) and {bn} ({b.dtype.name}) data types differ")


def _result(call: Call, d: TensorDesc, addr: int, alpha: float, beta: float):
    """Where the op writes: the destination itself when (alpha, beta) = (1, 0), else a scratch
    tensor in the destination's memory order, blended into it afterwards (``finish``)."""
    dst = tensor(d, addr)
    if (alpha, beta) == (1.0, 0.0):
        return dst, lambda: None
    td, taddr = call.temp(d.dtype, d.dims, like=d)
    tmp = tensor(td, taddr)
    return tmp, lambda: call.blend(tmp, alpha, beta, dst)


@api()
def cudnnActivationForward(handle, activationDesc, alpha, xDesc, x, beta, yDesc, y):
    """y = alpha·f(x) + beta·y; y may be x (the same descriptor)."""
    h = handle_of(handle)
    mode, coef, sb = _mode(activationDesc)
    a, b = number(alpha, "alpha"), number(beta, "beta")
    xd = float_desc(desc_of(xDesc, TensorDesc, "xDesc"), "xDesc")
    yd = float_desc(desc_of(yDesc, TensorDesc, "yDesc"), "yDesc")
    _same_dims_types([((xd, "xDesc"), (yd, "yDesc"))])
    xp, yp = pointer(x, "x"), pointer(y, "y")
    if xp == yp and xd.strides != yd.strides:
        bad("in place (y == x) needs identical xDesc and yDesc strides")
    call = Call(h)
    out, finish = _result(call, yd, yp, a, b)
    call.op("pyActivation", self=tensor(xd, xp), mode=mode, coef=coef, swish_beta=sb, out=out)
    finish()
    return call.run()


@api()
def cudnnActivationBackward(handle, activationDesc, alpha, yDesc, y, dyDesc, dy, xDesc, x, beta, dxDesc, dx):
    """dx = alpha·(dy·f'(x)) + beta·dx; dx may be dy (identical descriptors)."""
    h = handle_of(handle)
    mode, coef, sb = _mode(activationDesc)
    a, b = number(alpha, "alpha"), number(beta, "beta")
    yd = float_desc(desc_of(yDesc, TensorDesc, "yDesc"), "yDesc")
    dyd = float_desc(desc_of(dyDesc, TensorDesc, "dyDesc"), "dyDesc")
    xd = float_desc(desc_of(xDesc, TensorDesc, "xDesc"), "xDesc")
    dxd = float_desc(desc_of(dxDesc, TensorDesc, "dxDesc"), "dxDesc")
    yp, dyp, xp, dxp = pointer(y, "y"), pointer(dy, "dy"), pointer(x, "x"), pointer(dx, "dx")
    if dxp == dyp and dxd.strides != dyd.strides:
        bad("in place (dx == dy) needs identical dyDesc and dxDesc strides")
    _same_dims_types([((yd, "yDesc"), (dyd, "dyDesc")), ((yd, "yDesc"), (xd, "xDesc")),
                      ((yd, "yDesc"), (dxd, "dxDesc"))])
    if xd.strides != dxd.strides:
        unsupported(f"xDesc strides {xd.strides} and dxDesc strides {dxd.strides} differ")
    if yd.strides != dyd.strides:
        unsupported(f"yDesc strides {yd.strides} and dyDesc strides {dyd.strides} differ")
    call = Call(h)
    out, finish = _result(call, dxd, dxp, a, b)
    if dxp in (xp, yp) and out.addr == dxp:         # dx over x or y (not allowed by the op): through scratch
        td, taddr = call.temp(dxd.dtype, dxd.dims, like=dxd)
        tmp = tensor(td, taddr)
        out, finish = tmp, (lambda t=tmp: call.blend(t, a, b, tensor(dxd, dxp)))
    call.op("pyActivationBackward", grad_output=tensor(dyd, dyp), self=tensor(xd, xp), output=tensor(yd, yp),
            mode=mode, coef=coef, swish_beta=sb, out=out)
    finish()
    return call.run()
