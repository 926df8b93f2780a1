"""The dropout family (kernels/dropout.cu): aclnnDropoutGenMask, aclnnDropoutDoMask,
aclnnDropoutBackward and aclnnDropout (aclnn.md §5 Dropout).

    aclnnDropoutGenMask(shape, prob, seed, offset, out)         out: the keep mask of a tensor of `shape`
    aclnnDropoutDoMask(self, mask, prob, out)                   out = self/(1 − prob) where kept, else 0
    aclnnDropoutBackward(grad_output, mask, scale, out)         out = grad_output·scale where kept, else 0
    aclnnDropout(input, p, train, seed, offset, out, mask_out)  both at once (mask_out untouched when
                                                                p = 0, p = 1 or train = false)

**Mask convention** (CANN's): UINT8, 1-D, align(numel, 128) / 8 bytes; element k of the tensor
(row-major logical index) is kept iff bit (k % 8) of byte k // 8 is 1; padding bits are 0.

**Random numbers**: Philox4x32-10 on (seed, offset, element index): block j = k // 4 of four 32-bit
words is philox(counter = (j, offset) as four 32-bit words, key = seed); element k is kept iff word
k % 4 >= round(prob·2^32), so P(keep) = 1 − prob exactly up to 2^-32. The mask is a function of
(seed, offset, numel) only: the same on the GPU and the emulator for any grid. A training loop
draws fresh, independent masks by advancing ``offset`` between calls (PyTorch-style; any
increment ≥ 1 gives a new stream), or by changing ``seed``.

p = 0 (or train = false) copies; p = 1 writes zeros; DropoutBackward's ``scale`` must be 0 (zeros)
or ≥ 1 (CANN: p = 1 − 1/scale, then DoMask). FLOAT, FLOAT16, BF16, f32 arithmetic. DOUBLE, f64
arithmetic (the multiply and 1/(1 − p) in double; the mask bits are the same for every dtype), in
aclnnDropoutDoMask, aclnnDropoutBackward and aclnnpyDropoutStateful — an aclnn-py extension (CANN lists
FLOAT/FLOAT16/BF16) for the cuDNN face's DOUBLE dropout; aclnnDropout stays FLOAT/FLOAT16/BF16. Tensors in any
layout (non-row-major views are copied: the mask indexes the logical row-major order).
"""
from __future__ import annotations

import math

import numpy as np

from ..dtypes import aclDataType
from ..kernel_cache import FLOAT_CTYPES, declare, instantiate
from ..opdef import FLOATS, AttrParam as A, OpDef, TensorParam as T, register
from ..plan import Plan, grid_for
from ..status import AclnnStatus
from ..tensor import aclIntArray

__all__ = ["mask_bytes", "keep_threshold", "philox4x32_10"]

INVALID = AclnnStatus.ACLNN_ERR_PARAM_INVALID
U8, F64 = aclDataType.ACL_UINT8, aclDataType.ACL_DOUBLE
# DOUBLE (f64 multiply; an aclnn-py extension) in the ops on dropout_do_mask and dropout_fused_state
FLOATS_D = FLOATS | {F64}
_FTD = (*FLOAT_CTYPES, "double")
GROUP = "Dropout"
FAMILY = declare("dropout", ["dropout_gen_mask", "philox_kat", "dropout_state_set", "dropout_state_advance"],
                 instantiate("dropout_fused_state<{T}>", T=_FTD),
                 instantiate("dropout_do_mask<{T}>", T=_FTD), instantiate("dropout_fused<{T}>", T=FLOAT_CTYPES),
                 instantiate("dropout_scale<{T}>", T=FLOAT_CTYPES))
BLOCK = 256
_M64 = (1 << 64) - 1


def mask_bytes(numel: int) -> int:
    """Bytes of the mask of a tensor of ``numel`` elements: align(numel, 128) / 8."""
    return -(-numel // 128) * 16


def keep_threshold(p: float) -> int:
    """Element kept iff its 32-bit Philox word >= this."""
    return min(int(round(p * 2.0 ** 32)), 1 << 32)


def philox4x32_10(ctr, key):
    """Reference Philox4x32-10 in Python (4 counter words, 2 key words -> 4 words), as the kernels compute it."""
    c, k = [int(v) & 0xFFFFFFFF for v in ctr], [int(v) & 0xFFFFFFFF for v in key]
    for r in range(10):
        if r:
            k = [(k[0] + 0x9E3779B9) & 0xFFFFFFFF, (k[1] + 0xBB67AE85) & 0xFFFFFFFF]
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k[0]) & 0xFFFFFFFF, p1 & 0xFFFFFFFF, ((p0 >> 32) ^ c[3] ^ k[1]) & 0xFFFFFFFF,
             p0 & 0xFFFFFFFF]
    return c


def _mask_rule(of: str | None):
    """The mask: 1-D UINT8 of align(numel, 128)/8 bytes, numel that of tensor ``of`` (None: of the shape attribute)."""
    def rule(plan: Plan, name: str, t) -> None:
        n = plan[of].numel if of else math.prod(plan["shape"])
        want = mask_bytes(n)
        if tuple(t.view_dims) != (want,):
            plan.fail(INVALID, f"{name} must be 1-D of align(numel, 128)/8 = {want} bytes for {n} elements, "
                               f"got shape {tuple(t.view_dims)}")
    return rule


def _u64(v: int) -> np.uint64:
    return np.uint64(int(v) & _M64)


def _grid(n: int):
    return grid_for(n, BLOCK)


def _mult(p: Plan, name: str, v: float):
    """The kernels' mult argument, of their compute type: np.float64 for DOUBLE data, else np.float32."""
    return np.float64(v) if p[name].data_type == F64 else np.float32(v)


# plans --------------------------------------------------------------------------------------------

def _plan_gen_mask(p: Plan) -> None:
    out = p["out"]
    nbytes = out.numel
    if nbytes == 0:
        return
    ptr = p.write("out")
    p.launch(FAMILY, "dropout_gen_mask", _grid(nbytes), BLOCK,
             (ptr, np.int64(nbytes), np.int64(math.prod(p["shape"])), _u64(keep_threshold(p["prob"])),
              _u64(p["seed"]), _u64(p["offset"])))


def _apply(p: Plan, x: str, y: str, mult: float | None) -> None:
    """y = x·mult where the mask bit is 1, else 0; mult None: all zeros."""
    t = p[x]
    if t.numel == 0:
        return
    if mult is None:
        p.fill(y, 0.0)
        return
    xp, mp, yp = p.read(x), p.read("mask"), p.write(y)
    p.launch(FAMILY, f"dropout_do_mask<{p.ctype(x)}>", _grid(t.numel), BLOCK,
             (xp, mp, yp, np.int64(t.numel), _mult(p, x, mult)))


def _plan_do_mask(p: Plan) -> None:
    prob = p["prob"]
    _apply(p, "self", "out", None if prob >= 1.0 else 1.0 / (1.0 - prob))


def _plan_backward(p: Plan) -> None:
    scale = p["scale"]
    _apply(p, "grad_output", "out", None if scale == 0 else scale)


def _plan_dropout(p: Plan) -> None:
    t = p["input"]
    n = t.numel
    prob = p["p"]
    if not p["train"] or prob == 0.0:          # identity; mask_out untouched
        xp, yp = p.read("input"), p.write("out")
        if n:
            p.launch(FAMILY, f"dropout_scale<{p.ctype('input')}>", _grid(n), BLOCK, (xp, yp, np.int64(n), np.float32(1.0)))
        return
    if prob >= 1.0:                            # all dropped; mask_out untouched
        p.fill("out", 0.0)
        return
    xp, yp, mp = p.read("input"), p.write("out"), p.write("mask_out")
    nbytes = p["mask_out"].numel
    p.launch(FAMILY, f"dropout_fused<{p.ctype('input')}>", _grid(nbytes), BLOCK,
             (xp, yp, mp, np.int64(n), np.int64(nbytes), _u64(keep_threshold(prob)), _u64(p["seed"]),
              _u64(p["offset"]), np.float32(1.0 / (1.0 - prob))))


# checks -------------------------------------------------------------------------------------------

def _check_gen_mask(p: Plan) -> None:
    shape = p["shape"]
    if any(d < 0 for d in shape):
        p.fail(INVALID, f"shape must not have negative dims, got {tuple(shape)}")
    if len(shape) > 8:
        p.fail(INVALID, f"shape must have at most 8 dims, got {len(shape)}")
    try:
        n = math.prod(shape)
    except TypeError:
        p.fail(INVALID, f"shape must hold integers, got {tuple(shape)}")
    if n >= 2 ** 62:
        p.fail(INVALID, f"shape has too many elements ({n})")
    _mask_rule(None)(p, "out", p["out"])


def _check_backward(p: Plan) -> None:
    s = p["scale"]
    if not (s == 0 or s >= 1) or math.isnan(s) or math.isinf(s):
        p.fail(INVALID, f"scale must be 0 or >= 1 (p = 1 − 1/scale), got {s!r}")
    for n in ("grad_output", "out"):
        if p[n].numel == 0:
            p.fail(INVALID, f"{n} is empty (shape {tuple(p[n].view_dims)}); DropoutBackward does not take empty tensors")


def _check_dropout(p: Plan) -> None:
    if p["train"] and 0.0 < p["p"] < 1.0 and p["input"].numel and p["mask_out"] is None:
        p.fail(AclnnStatus.ACLNN_ERR_PARAM_NULLPTR, "mask_out must not be null when train is true and 0 < p < 1")


PROB = (0.0, 1.0)

DropoutGenMask = register(OpDef(
    name="DropoutGenMask",
    params=(A("shape", aclIntArray), A("prob", float, range=PROB), A("seed", int), A("offset", int),
            T("out", out=True, dtypes={U8}, shape=lambda plan, name, t: None)),
    ref=None, check=_check_gen_mask, plan=_plan_gen_mask, group=GROUP,
    doc="out = the keep mask of a tensor of `shape` (UINT8, align(numel, 128)/8 bytes; bit k % 8 of byte k // 8 "
        "is 1 iff element k is kept; P(keep) = 1 − prob; Philox4x32-10 on (seed, offset, k); padding bits 0)."),
    globals())

DropoutDoMask = register(OpDef(
    name="DropoutDoMask",
    params=(T("self", dtypes=FLOATS_D), T("mask", dtypes={U8}, shape=_mask_rule("self")), A("prob", float, range=PROB),
            T("out", out=True, dtypes=FLOATS_D, match="self", alias=("self",))),
    plan=_plan_do_mask, group=GROUP,
    doc="out = self/(1 − prob) where the mask bit is 1, else 0 (prob = 1: zeros). FLOAT/FLOAT16/BF16 (f32 math), "
        "DOUBLE (f64 math, an aclnn-py extension), ranks 0–8, mask UINT8 of align(numel, 128)/8 bytes. out may be "
        "self. Empty: nothing launched."),
    globals())

DropoutBackward = register(OpDef(
    name="DropoutBackward",
    params=(T("grad_output", dtypes=FLOATS_D), T("mask", dtypes={U8}, shape=_mask_rule("grad_output")),
            A("scale", float), T("out", out=True, dtypes=FLOATS_D, match="grad_output", alias=("grad_output",))),
    ranks=(1, 8), check=_check_backward, plan=_plan_backward, group=GROUP, cudnn=("cudnnDropoutBackward",),
    doc="out = grad_output·scale where the mask bit is 1, else 0; scale 0 (zeros) or >= 1. FLOAT/FLOAT16/BF16 "
        "(f32 math), DOUBLE (f64 math, an aclnn-py extension for the cuDNN face), ranks 1–8, no empty tensors. out "
        "may be grad_output."),
    globals())

Dropout = register(OpDef(
    name="Dropout",
    params=(T("input"), A("p", float, range=PROB), A("train", bool), A("seed", int), A("offset", int),
            T("out", out=True, match="input", alias=("input",)),
            T("mask_out", out=True, optional=True, dtypes={U8}, shape=_mask_rule("input"))),
    check=_check_dropout, plan=_plan_dropout, group=GROUP,
    doc="out = input/(1 − p) where kept, else 0, and mask_out = the keep mask (as DropoutGenMask with "
        "prob = p); train = false or p = 0: out = input, p = 1: out = 0, mask_out untouched (may be null then)."),
    globals())


# cuDNN's stateful dropout (the face's cudnnSetDropoutDescriptor / cudnnDropoutForward): the generator
# state lives in the caller's states buffer on the device, {magic, seed, offset, 0} as 4 u64 words;
# a forward reads (seed, offset) there (aclnnpyDropoutStateful), then the face advances offset by one
# (aclnnpyDropoutStateAdvance, a separate op: every thread of the forward saw the old value).
STATE_BYTES = 32


def _state_rule(plan, name, t) -> None:
    """32 contiguous bytes starting 8-byte aligned in their storage (the kernels read u64 words)."""
    if t.view_dims != (STATE_BYTES,) or t.strides != (1,) or t.offset % 8:
        plan.fail(INVALID, f"{name} must be 1-D contiguous UINT8 of {STATE_BYTES} bytes at a view offset that is a "
                           f"multiple of 8, got shape {tuple(t.view_dims)}, strides {t.strides}, offset {t.offset}")


def _plan_state_set(p: Plan) -> None:
    p.launch(FAMILY, "dropout_state_set", 1, 32, (p.write("states"), _u64(p["seed"])))


def _plan_state_advance(p: Plan) -> None:
    p.launch(FAMILY, "dropout_state_advance", 1, 32, (p.update("states"),))


def _plan_stateful(p: Plan) -> None:
    t = p["input"]
    prob = p["p"]
    xp, yp, mp, st = p.read("input"), p.write("out"), p.write("mask"), p.read("states")
    nbytes = p["mask"].numel
    p.launch(FAMILY, f"dropout_fused_state<{p.ctype('input')}>", _grid(nbytes), BLOCK,
             (xp, yp, mp, np.int64(t.numel), np.int64(nbytes), _u64(keep_threshold(prob)), st,
              _mult(p, "input", 0.0 if prob >= 1.0 else 1.0 / (1.0 - prob))))


DropoutStateSet = register(OpDef(
    name="pyDropoutStateSet",
    params=(T("states", out=True, dtypes={U8}, shape=_state_rule), A("seed", int)),
    ref=None, plan=_plan_state_set, group=GROUP,
    doc=f"aclnn-py extension behind cudnnSetDropoutDescriptor: states (UINT8, {STATE_BYTES} bytes) = a fresh "
        "generator state for seed (offset 0)."),
    globals())

DropoutStateAdvance = register(OpDef(
    name="pyDropoutStateAdvance",
    params=(T("states", dtypes={U8}, written=True),),
    check=lambda p: _state_rule(p, "states", p["states"]),      # the reference tensor has no shape rule
    plan=_plan_state_advance, group=GROUP,
    doc="aclnn-py extension behind cudnnDropoutForward: the offset held in states += 1 (the next forward draws a "
        "fresh mask)."),
    globals())

DropoutStateful = register(OpDef(
    name="pyDropoutStateful",
    params=(T("input", dtypes=FLOATS_D), T("states", dtypes={U8}, shape=_state_rule), A("p", float, range=PROB),
            T("out", out=True, dtypes=FLOATS_D, match="input", alias=("input",)),
            T("mask", out=True, dtypes={U8}, shape=_mask_rule("input"))),
    plan=_plan_stateful, group=GROUP,
    doc="aclnn-py extension behind cudnnDropoutForward: out = input/(1 − p) where kept, else 0, and mask = the "
        "keep mask (DropoutGenMask's layout) drawn with the (seed, offset) held in states (set by "
        "aclnnpyDropoutStateSet). p = 1: zeros. FLOAT/FLOAT16/BF16 (f32 math), DOUBLE (f64 math). Empty input: "
        "nothing launched."),
    globals())
