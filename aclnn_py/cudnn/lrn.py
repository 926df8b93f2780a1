"""LRN and divisive normalization: rows 2013 cudnnLRNCrossChannelBackward and 2005
cudnnDivisiveNormalizationBackward, their forwards and the LRN descriptor, over the aclnn-py
extension ops of the LRN family (aclnnpyLrnCrossChannel(Backward), aclnnpyDivisiveNormalization(Backward)).

cudnnCreateLRNDescriptor gives cuDNN's defaults (lrnN 5, lrnAlpha 1e-4, lrnBeta 0.75, lrnK 2.0);
cudnnSetLRNDescriptor takes lrnN in [CUDNN_LRN_MIN_N, CUDNN_LRN_MAX_N], lrnK >= CUDNN_LRN_MIN_K,
lrnBeta >= CUDNN_LRN_MIN_BETA (BAD_PARAM otherwise). Formulas (cudnn.md §4.4, §4.6): alpha is divided
by lrnN (LRN) or lrnN^S (divisive normalization over S spatial dims); windows [c − ⌊(n−1)/2⌋,
c + n − ⌊(n−1)/2⌋ − 1]. Double parameters are used in f32 for FLOAT/HALF/BFLOAT16 tensors, f64 for
DOUBLE. Choices: divisive normalization's temp/temp2 must be non-NULL (cuDNN's rule) and temp serves
as the ops' workspace when it is large enough (else the handle's scratch); means NULL = zeros;
dMeans NULL = not computed; dx and dMeans are blended with the same alpha/beta. Statuses (cudnn.md
§4.4, §4.6): NULL pointers, invalid mode, LRN tensors with <= 2 dims, divisive-normalization tensors
that are not 4-D/5-D, in place with different strides: BAD_PARAM; dims or data types of the tensors
differ: NOT_SUPPORTED (LRN) / BAD_PARAM (divisive normalization, "dimension mismatch").
"""
from __future__ import annotations

import numbers

from ._core import (SUCCESS, Call, Descriptor, TensorDesc, api, bad, desc_of, destroy, enum_arg, handle_of, number,
                    pointer, tensor, unsupported, ITEMSIZE)
from ._enums import (CUDNN_LRN_MAX_N, CUDNN_LRN_MIN_BETA, CUDNN_LRN_MIN_K, CUDNN_LRN_MIN_N, cudnnDivNormMode_t,
                     cudnnLRNMode_t)
from .activation import _result
from .tensors import float_desc

__all__ = ["cudnnCreateLRNDescriptor", "cudnnSetLRNDescriptor", "cudnnGetLRNDescriptor", "cudnnDestroyLRNDescriptor",
           "cudnnLRNCrossChannelForward", "cudnnLRNCrossChannelBackward", "cudnnDivisiveNormalizationForward",
           "cudnnDivisiveNormalizationBackward"]


class LRNDesc(Descriptor):
    kind = "cudnnLRNDescriptor_t"

    def __init__(self):
        super().__init__()
        self.n, self.alpha, self.beta, self.k = 5, 1e-4, 0.75, 2.0
        self.is_set = True

    def attrs(self) -> dict:
        return dict(lrn_n=self.n, lrn_alpha=self.alpha, lrn_beta=self.beta, lrn_k=self.k)


@api(None)
def cudnnCreateLRNDescriptor():
    return LRNDesc(), SUCCESS


@api()
def cudnnSetLRNDescriptor(normDesc, lrnN, lrnAlpha, lrnBeta, lrnK):
    d = desc_of(normDesc, LRNDesc, "normDesc")
    if isinstance(lrnN, bool) or not isinstance(lrnN, numbers.Integral) \
            or not CUDNN_LRN_MIN_N <= int(lrnN) <= CUDNN_LRN_MAX_N:
        bad(f"lrnN = {lrnN!r} is outside [CUDNN_LRN_MIN_N, CUDNN_LRN_MAX_N] = [{CUDNN_LRN_MIN_N}, {CUDNN_LRN_MAX_N}]")
    a, b, k = number(lrnAlpha, "lrnAlpha"), number(lrnBeta, "lrnBeta"), number(lrnK, "lrnK")
    if not abs(a) < float("inf"):
        bad(f"lrnAlpha must be finite, got {a}")
    if not b >= CUDNN_LRN_MIN_BETA or b == float("inf"):
        bad(f"lrnBeta = {b} is below CUDNN_LRN_MIN_BETA ({CUDNN_LRN_MIN_BETA})")
    if not k >= CUDNN_LRN_MIN_K or k == float("inf"):
        bad(f"lrnK = {k} is below CUDNN_LRN_MIN_K ({CUDNN_LRN_MIN_K})")
    d.n, d.alpha, d.beta, d.k = int(lrnN), a, b, k
    return SUCCESS


@api(0, 0.0, 0.0, 0.0)
def cudnnGetLRNDescriptor(normDesc):
    """``lrnN, lrnAlpha, lrnBeta, lrnK, st``."""
    d = desc_of(normDesc, LRNDesc, "normDesc")
    return d.n, d.alpha, d.beta, d.k, SUCCESS


@api()
def cudnnDestroyLRNDescriptor(lrnDesc):
    return destroy(lrnDesc, LRNDesc, "lrnDesc")


def _same(pairs, status_unsupported: bool):
    fail = unsupported if status_unsupported else bad
    (a, an), *rest = pairs
    for b, bn in rest:
        if a.dims != b.dims:
            fail(f"{an} dims {a.dims} and {bn} dims {b.dims} differ")
        if a.dtype != b.dtype:
            fail(f"{an} ({a.dtype.name}) and {bn} ({b.dtype.name}) data types differ")


def _lrn_desc(d, name):
    t = float_desc(desc_of(d, TensorDesc, name), name)
    if t.nb_dims <= 2:
        bad(f"{name} has {t.nb_dims} dims; LRN needs at least 3")
    return t


@api()
def cudnnLRNCrossChannelForward(handle, normDesc, lrnMode, alpha, xDesc, x, beta, yDesc, y):
    h = handle_of(handle)
    nd = desc_of(normDesc, LRNDesc, "normDesc")
    enum_arg(lrnMode, cudnnLRNMode_t, "lrnMode")
    a, b = number(alpha, "alpha"), number(beta, "beta")
    xd, yd = _lrn_desc(xDesc, "xDesc"), _lrn_desc(yDesc, "yDesc")
    _same([(xd, "xDesc"), (yd, "yDesc")], True)
    xp, yp = pointer(x, "x"), pointer(y, "y")
    call = Call(h)
    out, finish = _result(call, yd, yp, a, b)
    if out.addr == xp:                       # in place: the window reads neighbours, so through scratch
        out, finish = _staged(call, yd, yp, a, b)
    call.op("pyLrnCrossChannel", self=tensor(xd, xp), **nd.attrs(), out=out)
    finish()
    return call.run()


def _staged(call: Call, d: TensorDesc, addr: int, a: float, b: float):
    td, taddr = call.temp(d.dtype, d.dims, like=d)
    tmp = tensor(td, taddr)
    return tmp, lambda: call.blend(tmp, a, b, tensor(d, addr))


@api()
def cudnnLRNCrossChannelBackward(handle, normDesc, lrnMode, alpha, yDesc, y, dyDesc, dy, xDesc, x, beta, dxDesc, dx):
    h = handle_of(handle)
    nd = desc_of(normDesc, LRNDesc, "normDesc")
    enum_arg(lrnMode, cudnnLRNMode_t, "lrnMode")
    a, b = number(alpha, "alpha"), number(beta, "beta")
    yd, dyd = _lrn_desc(yDesc, "yDesc"), _lrn_desc(dyDesc, "dyDesc")
    xd, dxd = _lrn_desc(xDesc, "xDesc"), _lrn_desc(dxDesc, "dxDesc")
    _same([(yd, "yDesc"), (dyd, "dyDesc"), (xd, "xDesc"), (dxd, "dxDesc")], True)
    yp, dyp, xp, dxp = pointer(y, "y"), pointer(dy, "dy"), pointer(x, "x"), pointer(dx, "dx")
    if dxp == dyp and dxd.strides != dyd.strides:
        bad("in place (dx == dy) needs identical dyDesc and dxDesc strides")
    call = Call(h)
    out, finish = _result(call, dxd, dxp, a, b)
    if out.addr in (xp, yp):
        out, finish = _staged(call, dxd, dxp, a, b)
    call.op("pyLrnCrossChannelBackward", grad_output=tensor(dyd, dyp), self=tensor(xd, xp), output=tensor(yd, yp),
            **nd.attrs(), grad_input=out)
    finish()
    return call.run()


def _divnorm_desc(d, name):
    t = float_desc(desc_of(d, TensorDesc, name), name)
    if t.nb_dims not in (4, 5):
        bad(f"{name} has {t.nb_dims} dims; divisive normalization takes 4-D and 5-D tensors")
    return t


def _temps(temp, temp2, xd: TensorDesc):
    tp = pointer(temp, "temp")
    pointer(temp2, "temp2")                 # required by cuDNN; the aclnn ops need no second buffer
    return tp, xd.extent * ITEMSIZE[xd.dtype]


@api()
def cudnnDivisiveNormalizationForward(handle, normDesc, mode, alpha, xDesc, x, means, temp, temp2, beta, yDesc, y):
    h = handle_of(handle)
    nd = desc_of(normDesc, LRNDesc, "normDesc")
    enum_arg(mode, cudnnDivNormMode_t, "mode")
    a, b = number(alpha, "alpha"), number(beta, "beta")
    xd, yd = _divnorm_desc(xDesc, "xDesc"), _divnorm_desc(yDesc, "yDesc")
    _same([(xd, "xDesc"), (yd, "yDesc")], False)
    xp, yp = pointer(x, "x"), pointer(y, "y")
    mp = pointer(means, "means", False)
    tp, tsize = _temps(temp, temp2, xd)
    call = Call(h, tp, tsize)
    out, finish = _result(call, yd, yp, a, b)
    if out.addr in (xp, mp):
        out, finish = _staged(call, yd, yp, a, b)
    call.op("pyDivisiveNormalization", self=tensor(xd, xp), means=None if mp is None else tensor(xd, mp),
            **nd.attrs(), out=out)
    finish()
    return call.run()


@api()
def cudnnDivisiveNormalizationBackward(handle, normDesc, mode, alpha, xDesc, x, means, dy, temp, temp2, beta,
                                       dXdMeansDesc, dx, dMeans):
    h = handle_of(handle)
    nd = desc_of(normDesc, LRNDesc, "normDesc")
    enum_arg(mode, cudnnDivNormMode_t, "mode")
    a, b = number(alpha, "alpha"), number(beta, "beta")
    xd, dd = _divnorm_desc(xDesc, "xDesc"), _divnorm_desc(dXdMeansDesc, "dXdMeansDesc")
    _same([(xd, "xDesc"), (dd, "dXdMeansDesc")], False)
    xp, dyp, dxp = pointer(x, "x"), pointer(dy, "dy"), pointer(dx, "dx")
    mp, dmp = pointer(means, "means", False), pointer(dMeans, "dMeans", False)
    tp, tsize = _temps(temp, temp2, xd)
    call = Call(h, tp, tsize)
    ins = (xp, dyp, mp)
    dx_t, fin_dx = _result(call, dd, dxp, a, b)
    if dx_t.addr in ins:
        dx_t, fin_dx = _staged(call, dd, dxp, a, b)
    dm_t, fin_dm = (None, lambda: None)
    if dmp is not None:
        dm_t, fin_dm = _result(call, dd, dmp, a, b)
        if dm_t.addr in ins:
            dm_t, fin_dm = _staged(call, dd, dmp, a, b)
    call.op("pyDivisiveNormalizationBackward", self=tensor(xd, xp), means=None if mp is None else tensor(xd, mp),
            grad_output=tensor(xd, dyp), **nd.attrs(), grad_input=dx_t, grad_means=dm_t)
    fin_dx()
    fin_dm()
    return call.run()
