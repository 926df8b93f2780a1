"""The LRN family (kernels/lrn.cu): local response normalization across channels and divisive
normalization, forward and backward — **aclnn-py extensions**, not CANN APIs.

CANN has no aclnn LRN or divisive-normalization op (aclnn.md §5 "LRN"), so these are two-phase ops
of our own, with cuDNN's formulas and parameter ranges (cudnn.md §4.4, §4.6, §5). Their names
carry the ``aclnnpy`` prefix (``aclnnpyLrnCrossChannel``, ...) so that nobody mistakes them for
CANN APIs; they follow the aclnn conventions otherwise (two phases, statuses, workspace, views).

    aclnnpyLrnCrossChannel(self, lrn_n, lrn_alpha, lrn_beta, lrn_k, out)
        out_c = self_c / (lrn_k + lrn_alpha/lrn_n · Σ_{j ∈ win(c)} self_j²)^lrn_beta
    aclnnpyLrnCrossChannelBackward(grad_output, self, output, lrn_n, lrn_alpha, lrn_beta, lrn_k, grad_input)
        grad_input_i = g_i·s_i^−β − (2αβ/n)·self_i·Σ_{c: i ∈ win(c)} g_c·output_c/s_c
    aclnnpyDivisiveNormalization(self, means, lrn_n, lrn_alpha, lrn_beta, lrn_k, out)
        u = self − means (means null: 0); out_p = u_p / (lrn_k + lrn_alpha/lrn_n^S · Σ_{q ∈ box(p)} u_q²)^lrn_beta
    aclnnpyDivisiveNormalizationBackward(self, means, grad_output, lrn_n, lrn_alpha, lrn_beta, lrn_k,
                                         grad_input, grad_means)
        grad_input = ∂L/∂self, grad_means = −grad_input (null: not written)

Window (cuDNN's): lookBehind = ⌊(n−1)/2⌋, lookAhead = n − lookBehind − 1; win(c) = [c − lookBehind,
c + lookAhead] over the channel dim (LRN) or the same extent in every spatial dim (box, divisive
normalization, S = 2 or 3 spatial dims); positions outside the tensor contribute 0 and the divisor
stays n (n^S). PyTorch's ``local_response_norm(x, size=n, alpha, beta, k)`` is the same formula
(its alpha is also divided by n) for odd n; for even n its window is the mirror image
([c − n/2, c + n/2 − 1]), i.e. ours equals flip_C(local_response_norm(flip_C(x))).

Parameters (cuDNN's ``cudnnSetLRNDescriptor`` ranges): lrn_n in [1, 16], lrn_k ≥ 1e-5,
lrn_beta ≥ 0.01, lrn_alpha any float; out of range → 161002.

Tensors: FLOAT, FLOAT16, BF16, DOUBLE (one dtype per call; f32 arithmetic for the 16-bit types,
f64 for DOUBLE). The channel dim is dim 1, or the last dim for NHWC/NDHWC formats. LRN: ranks 3–8
(cuDNN refuses ≤ 2 dims); divisive normalization: ranks 4–5 (cuDNN's 4-D/5-D), spatial dims = the
dims other than N and C. Every tensor of a call is used in the data tensor's memory order when it
is dense in one (NCHW, NHWC-strided, ...: no copy); other views go through a ViewCopy. Empty: success,
nothing launched.

Choices where the references are silent: the LRN backward uses the given ``output`` (cuDNN's y) in
g_c·y_c/s_c, as cuDNN's formula does; ``grad_input`` may be ``grad_output`` exactly (in place).
Divisive normalization's ``means`` enter the sum of squares too (u = x − means everywhere, the
formula of cudnn.md §4.4); cuDNN's temp/temp2 buffers are not parameters (the workspace holds the
backward's intermediate term). Backward ops run in two passes: t_p (per position) into the
workspace, then a gather over the mirrored window — no atomics, bitwise reproducible run to run.
"""
from __future__ import annotations

import math

import numpy as np

from ..dtypes import CHANNELS_LAST_FORMATS, aclDataType
from ..kernel_cache import declare, instantiate
from ..opdef import AttrParam as A, OpDef, TensorParam as T, register
from ..plan import Plan, dense_strides, grid_for, memory_order

F32, F16, BF16, F64 = aclDataType.ACL_FLOAT, aclDataType.ACL_FLOAT16, aclDataType.ACL_BF16, aclDataType.ACL_DOUBLE
DTYPES = frozenset({F32, F16, BF16, F64})
CTYPES = ("float", "__half", "__nv_bfloat16", "double")
FAMILY = declare("lrn", *(instantiate(k + "<{T}>", T=CTYPES) for k in (
    "lrn_fwd", "lrn_bwd_term", "lrn_bwd_dx", "divnorm_fwd", "divnorm_bwd_term", "divnorm_bwd_dx")))
GROUP = "LRN and divisive normalization (aclnn-py extensions, cuDNN formulas)"
BLOCK = 256

# struct Geo5 of kernels/lrn.cu, passed by value
GEO5 = np.dtype([("dim", "<i8", 5), ("stride", "<i8", 5)])

LRN_MIN_N, LRN_MAX_N, LRN_MIN_K, LRN_MIN_BETA = 1, 16, 1e-5, 0.01      # cudnn.md §5 (cudnnSetLRNDescriptor)


def _lrn_attrs():
    return (A("lrn_n", int, range=(LRN_MIN_N, LRN_MAX_N)), A("lrn_alpha", float),
            A("lrn_beta", float, range=(LRN_MIN_BETA, None)), A("lrn_k", float, range=(LRN_MIN_K, None)))


def _channel_axis(plan: Plan) -> int:
    """Dim 1, or the last dim for the channels-last formats (NHWC, NDHWC)."""
    t = plan.ref
    return t.rank - 1 if t.format in CHANNELS_LAST_FORMATS else 1


def _acc_size(plan: Plan) -> int:
    return 8 if plan.ref.data_type == F64 else 4


def _order(plan: Plan, like: str) -> list[int]:
    t = plan[like]
    return memory_order(t) or list(range(t.rank))


def _attrs(plan: Plan) -> tuple:
    return (int(plan["lrn_n"]), float(plan["lrn_alpha"]), float(plan["lrn_beta"]), float(plan["lrn_k"]))


# LRN ------------------------------------------------------------------------------------------

def _lrn_geometry(plan: Plan, like: str):
    order = _order(plan, like)
    dims = plan[like].view_dims
    k = order.index(plan.axis)
    return (order, math.prod(dims[d] for d in order[:k]), dims[plan.axis], math.prod(dims[d] for d in order[k + 1:]))


def _plan_lrn_fwd(p: Plan) -> None:
    order, outer, C, inner = _lrn_geometry(p, "self")
    n, alpha, beta, k = _attrs(p)
    ct = p.ctype("self")
    p.launch(FAMILY, f"lrn_fwd<{ct}>", grid_for(outer * C * inner, BLOCK), BLOCK,
             (p.read("self", order), p.write("out", order), np.int64(outer), np.int64(C), np.int64(inner),
              np.int32(n), alpha, beta, k))


def _plan_lrn_bwd(p: Plan) -> None:
    order, outer, C, inner = _lrn_geometry(p, "self")
    n, alpha, beta, k = _attrs(p)
    ct = p.ctype("self")
    total = outer * C * inner
    x, y, dy = p.read("self", order), p.read("output", order), p.read("grad_output", order)
    t = p.alloc(total * _acc_size(p))
    geo = (np.int64(outer), np.int64(C), np.int64(inner), np.int32(n))
    p.launch(FAMILY, f"lrn_bwd_term<{ct}>", grid_for(total, BLOCK), BLOCK, (x, y, dy, t, *geo, alpha, k))
    p.launch(FAMILY, f"lrn_bwd_dx<{ct}>", grid_for(total, BLOCK), BLOCK,
             (x, dy, t, p.write("grad_input", order), *geo, alpha, beta, k))


_LRN_DOC = ("aclnn-py extension (CANN has no LRN). cuDNN's cross-channel LRN (cudnn.md §4.6): window [c − ⌊(n−1)/2⌋, "
            "c + n − ⌊(n−1)/2⌋ − 1] over the channel dim (dim 1; last for NHWC/NDHWC), zero outside, alpha divided by "
            "n; lrn_n in [1, 16], lrn_k ≥ 1e-5, lrn_beta ≥ 0.01. FLOAT/FLOAT16/BF16/DOUBLE, one dtype, ranks 3–8, "
            "same shapes. Empty: nothing launched. Deterministic.")

LrnCrossChannel = register(OpDef(
    name="pyLrnCrossChannel",
    params=(T("self", dtypes=DTYPES), *_lrn_attrs(), T("out", out=True, dtypes=DTYPES, match="self")),
    ranks=(3, 8), axis=_channel_axis, plan=_plan_lrn_fwd, group=GROUP,
    doc="out = self / (lrn_k + lrn_alpha/lrn_n · Σ_{window} self²)^lrn_beta. " + _LRN_DOC), globals())

LrnCrossChannelBackward = register(OpDef(
    name="pyLrnCrossChannelBackward",
    params=(T("grad_output", dtypes=DTYPES), T("self", dtypes=DTYPES, match="grad_output"),
            T("output", dtypes=DTYPES, match="grad_output"), *_lrn_attrs(),
            T("grad_input", out=True, dtypes=DTYPES, match="grad_output", alias=("grad_output",))),
    ref="self", ranks=(3, 8), axis=_channel_axis, plan=_plan_lrn_bwd, group=GROUP,
    cudnn=("cudnnLRNCrossChannelBackward",),
    doc="grad_input_i = g_i·s_i^−β − (2αβ/n)·self_i·Σ_{c: i ∈ window(c)} g_c·output_c/s_c (g = grad_output, "
        "s = lrn_k + α/n·Σ self², output = the forward's out). grad_input may be grad_output (in place). Two "
        "passes (per-channel term in the workspace, then a gather): no atomics. " + _LRN_DOC), globals())


# divisive normalization -------------------------------------------------------------------------

def _geo5(plan: Plan, like: str, order) -> tuple[np.void, int]:
    """Geo5 (N, C, D, H, W with element strides of the dense buffer in ``order``) and S."""
    t = plan[like]
    dims = t.view_dims
    strides = dense_strides(dims, order)
    c = plan.axis
    spatial = [d for d in range(1, t.rank) if d != c]
    g = np.zeros((), GEO5)
    pad = 3 - len(spatial)
    g["dim"] = [dims[0], dims[c]] + [1] * pad + [dims[d] for d in spatial]
    g["stride"] = [strides[0], strides[c]] + [0] * pad + [strides[d] for d in spatial]
    return g[()], len(spatial)


def _plan_divnorm_fwd(p: Plan) -> None:
    order = _order(p, "self")
    geo, S = _geo5(p, "self", order)
    n, alpha, beta, k = _attrs(p)
    total = p.ref.numel
    p.launch(FAMILY, f"divnorm_fwd<{p.ctype('self')}>", grid_for(total, BLOCK), BLOCK,
             (p.read("self", order), p.read("means", order), p.write("out", order), geo, np.int32(S), np.int32(n),
              alpha, beta, k))


def _plan_divnorm_bwd(p: Plan) -> None:
    order = _order(p, "self")
    geo, S = _geo5(p, "self", order)
    n, alpha, beta, k = _attrs(p)
    total = p.ref.numel
    ct = p.ctype("self")
    x, m, dy = p.read("self", order), p.read("means", order), p.read("grad_output", order)
    t = p.alloc(total * _acc_size(p))
    p.launch(FAMILY, f"divnorm_bwd_term<{ct}>", grid_for(total, BLOCK), BLOCK,
             (x, m, dy, t, geo, np.int32(S), np.int32(n), alpha, beta, k))
    p.launch(FAMILY, f"divnorm_bwd_dx<{ct}>", grid_for(total, BLOCK), BLOCK,
             (x, m, dy, t, p.write("grad_input", order), p.write("grad_means", order), geo, np.int32(S),
              np.int32(n), alpha, beta, k))


_DIV_DOC = ("aclnn-py extension (CANN has no divisive normalization). cuDNN's DIVNORM_PRECOMPUTED_MEANS (cudnn.md "
            "§4.4): u = self − means (means optional: null = 0), s_p = lrn_k + lrn_alpha/lrn_n^S·Σ_{q ∈ box(p)} u_q², "
            "box = the LRN window [p − ⌊(n−1)/2⌋, p + n − ⌊(n−1)/2⌋ − 1] in each of the S spatial dims (zero "
            "outside). lrn_n in [1, 16], lrn_k ≥ 1e-5, lrn_beta ≥ 0.01. FLOAT/FLOAT16/BF16/DOUBLE, one dtype, ranks "
            "4–5 (channel dim 1, last for NHWC/NDHWC), same shapes. Empty: nothing launched. Deterministic.")

DivisiveNormalization = register(OpDef(
    name="pyDivisiveNormalization",
    params=(T("self", dtypes=DTYPES), T("means", optional=True, dtypes=DTYPES, match="self"), *_lrn_attrs(),
            T("out", out=True, dtypes=DTYPES, match="self")),
    ranks=(4, 5), axis=_channel_axis, plan=_plan_divnorm_fwd, group=GROUP,
    doc="out = u·s^−lrn_beta. " + _DIV_DOC), globals())


DivisiveNormalizationBackward = register(OpDef(
    name="pyDivisiveNormalizationBackward",
    params=(T("self", dtypes=DTYPES), T("means", optional=True, dtypes=DTYPES, match="self"),
            T("grad_output", dtypes=DTYPES, match="self"), *_lrn_attrs(),
            T("grad_input", out=True, dtypes=DTYPES, match="self"),
            T("grad_means", out=True, optional=True, dtypes=DTYPES, match="self")),
    ranks=(4, 5), axis=_channel_axis, plan=_plan_divnorm_bwd, group=GROUP,
    cudnn=("cudnnDivisiveNormalizationBackward",),
    doc="grad_input = g·s^−β − (2·lrn_alpha·β/n^S)·u·Σ_{p: i ∈ box(p)} g_p·u_p·s_p^(−β−1) (g = grad_output), "
        "grad_means = −grad_input (optional: null = not written). Two passes (per-position term in the workspace, "
        "then a gather over the mirrored box): no atomics. " + _DIV_DOC), globals())
