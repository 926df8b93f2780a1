"""Activation descriptors: cudnnCreate/Set/Get/Destroy ActivationDescriptor and the swish beta.

``coef`` is the clipping threshold of CLIPPED_RELU and alpha of ELU; cudnnCreateActivationDescriptor
gives (RELU, NOT_PROPAGATE_NAN, coef 0, swish beta 1)."""
from __future__ import annotations

from ._core import SUCCESS, Descriptor, api, desc_of, destroy, enum_arg, finite_double
from ._enums import cudnnActivationMode_t, cudnnNanPropagation_t

__all__ = ["cudnnCreateActivationDescriptor", "cudnnSetActivationDescriptor", "cudnnGetActivationDescriptor",
           "cudnnSetActivationDescriptorSwishBeta", "cudnnGetActivationDescriptorSwishBeta",
           "cudnnDestroyActivationDescriptor"]


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
