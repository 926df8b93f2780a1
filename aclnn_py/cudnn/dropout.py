"""Dropout: row 2006 cudnnDropoutBackward, its forward cudnnDropoutForward and the descriptor API, over
the dropout family (aclnnpyDropoutStateSet, aclnnpyDropoutStateful, aclnnDropoutBackward).

The generator state lives in the caller's ``states`` buffer on the device (cudnnDropoutGetStatesSize:
32 bytes: {magic, seed, offset, 0}); cudnnSetDropoutDescriptor initialises it (seed, offset 0) on the
handle's stream, every cudnnDropoutForward draws its mask from it and advances the offset, so
successive forwards draw fresh masks; cudnnRestoreDropoutDescriptor re-attaches a buffer without
resetting it. The reserve space is the keep mask: one bit per element in the logical row-major
order, align(numel, 128)/8 bytes (cudnnDropoutGetReserveSpaceSize), which the backward reads
unchanged: dx = dy/(1 − p) where kept, else 0. Statuses as cudnn.md §4.5: element counts or data
types differ, in place with different strides, reserve smaller than required, a descriptor set
without states: BAD_PARAM. x and y (dy and dx) must have the same dims (same element count but
other dims: NOT_SUPPORTED). FLOAT, HALF, BFLOAT16 (multiplied in f32) and DOUBLE (multiplied in f64,
1/(1 − p) in double: the aclnn ops behind these take DOUBLE as an aclnn-py extension); the mask is the
same for every data type. Other data types: NOT_SUPPORTED.
"""
from __future__ import annotations

import numbers

from ..ops.dropout import STATE_BYTES, mask_bytes
from ._core import (SUCCESS, Call, Descriptor, TensorDesc, api, bad, bytes_tensor, desc_of, destroy, handle_of,
                    pointer, size_arg, tensor, unsupported)
from ._enums import cudnnDataType_t

__all__ = ["cudnnCreateDropoutDescriptor", "cudnnDestroyDropoutDescriptor", "cudnnDropoutGetStatesSize",
           "cudnnDropoutGetReserveSpaceSize", "cudnnSetDropoutDescriptor", "cudnnRestoreDropoutDescriptor",
           "cudnnGetDropoutDescriptor", "cudnnDropoutForward", "cudnnDropoutBackward"]

_DT = (cudnnDataType_t.CUDNN_DATA_FLOAT, cudnnDataType_t.CUDNN_DATA_HALF, cudnnDataType_t.CUDNN_DATA_BFLOAT16,
       cudnnDataType_t.CUDNN_DATA_DOUBLE)


class DropoutDesc(Descriptor):
    kind = "cudnnDropoutDescriptor_t"

    def __init__(self):
        super().__init__()
        self.dropout, self.states, self.seed = 0.0, None, 0
        self.is_set = True


@api(None)
def cudnnCreateDropoutDescriptor():
    return DropoutDesc(), SUCCESS


@api()
def cudnnDestroyDropoutDescriptor(dropoutDesc):
    return destroy(dropoutDesc, DropoutDesc, "dropoutDesc")


@api(0)
def cudnnDropoutGetStatesSize(handle):
    handle_of(handle)
    return STATE_BYTES, SUCCESS


@api(0)
def cudnnDropoutGetReserveSpaceSize(xdesc):
    d = desc_of(xdesc, TensorDesc, "xdesc")
    return mask_bytes(d.numel), SUCCESS


def _probability(v) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0.0 <= float(v) <= 1.0:
        bad(f"dropout must be a probability in [0, 1], got {v!r}")
    return float(v)


def _set(dropoutDesc, handle, dropout, states, stateSizeInBytes, seed, init: bool):
    d = desc_of(dropoutDesc, DropoutDesc, "dropoutDesc")
    h = handle_of(handle)
    p = _probability(dropout)
    sp = pointer(states, "states", False)
    size = size_arg(stateSizeInBytes, "stateSizeInBytes")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= int(seed) < (1 << 64):
        bad(f"seed must be an unsigned long long, got {seed!r}")
    if sp is not None and sp % 8:
        bad(f"states must be 8-byte aligned, got 0x{sp:x}")
    if sp is not None and size < STATE_BYTES:
        bad(f"stateSizeInBytes = {size} is smaller than cudnnDropoutGetStatesSize ({STATE_BYTES})")
    if sp is not None and init:
        call = Call(h)
        s64 = int(seed) - (1 << 64) if int(seed) >= 1 << 63 else int(seed)     # the op's int64 holds the u64 bits
        call.op("pyDropoutStateSet", states=bytes_tensor(sp, STATE_BYTES), seed=s64)
        call.run()
    d.dropout, d.seed = p, int(seed)
    if sp is not None:
        d.states = sp
    return SUCCESS


@api()
def cudnnSetDropoutDescriptor(dropoutDesc, handle, dropout, states, stateSizeInBytes, seed):
    """states NULL: only the probability is set (the generator is not touched), as cuDNN."""
    return _set(dropoutDesc, handle, dropout, states, stateSizeInBytes, seed, True)


@api()
def cudnnRestoreDropoutDescriptor(dropoutDesc, handle, dropout, states, stateSizeInBytes, seed):
    """Re-attach a states buffer initialised before (its generator state is kept)."""
    return _set(dropoutDesc, handle, dropout, states, stateSizeInBytes, seed, False)


@api(0.0, None, 0)
def cudnnGetDropoutDescriptor(dropoutDesc, handle):
    """``dropout, states, seed, st``."""
    d = desc_of(dropoutDesc, DropoutDesc, "dropoutDesc")
    handle_of(handle)
    return d.dropout, d.states, d.seed, SUCCESS


def _pair(a_desc, a_name, b_desc, b_name):
    a = desc_of(a_desc, TensorDesc, a_name)
    b = desc_of(b_desc, TensorDesc, b_name)
    for t, n in ((a, a_name), (b, b_name)):
        if t.dtype not in _DT:
            unsupported(f"{n} data type {t.dtype.name}: dropout computes FLOAT, HALF, BFLOAT16, DOUBLE")
    if a.numel != b.numel:
        bad(f"{a_name} ({a.numel} elements) and {b_name} ({b.numel} elements) differ in size")
    if a.dtype != b.dtype:
        bad(f"{a_name} ({a.dtype.name}) and {b_name} ({b.dtype.name}) data types differ")
    if a.dims != b.dims:
        unsupported(f"{a_name} dims {a.dims} and {b_name} dims {b.dims} differ (same element count)")
    return a, b


def _call(handle, dropoutDesc, in_desc, inp, out_desc, out, reserveSpace, reserveSpaceSizeInBytes, names):
    """The checks forward and backward share: (handle, descriptor, in/out tensors, mask tensor)."""
    h = handle_of(handle)
    d = desc_of(dropoutDesc, DropoutDesc, "dropoutDesc")
    ind, outd = _pair(in_desc, names[0], out_desc, names[2])
    ip, op = pointer(inp, names[1]), pointer(out, names[3])
    if ip == op and ind.strides != outd.strides:
        bad(f"in place ({names[3]} == {names[1]}) needs identical {names[0]} and {names[2]} strides")
    if d.states is None:
        bad("dropoutDesc has no states: call cudnnSetDropoutDescriptor with a states buffer first")
    rp = pointer(reserveSpace, "reserveSpace")
    size = size_arg(reserveSpaceSizeInBytes, "reserveSpaceSizeInBytes")
    need = mask_bytes(ind.numel)
    if size < need:
        bad(f"reserveSpaceSizeInBytes = {size} is smaller than cudnnDropoutGetReserveSpaceSize ({need})")
    return Call(h), d, tensor(ind, ip), tensor(outd, op), bytes_tensor(rp, need)


@api()
def cudnnDropoutForward(handle, dropoutDesc, xdesc, x, ydesc, y, reserveSpace, reserveSpaceSizeInBytes):
    call, d, X, Y, R = _call(handle, dropoutDesc, xdesc, x, ydesc, y, reserveSpace, reserveSpaceSizeInBytes,
                             ("xdesc", "x", "ydesc", "y"))
    states = bytes_tensor(d.states, STATE_BYTES)
    call.op("pyDropoutStateful", input=X, states=states, p=d.dropout, out=Y, mask=R)
    call.op("pyDropoutStateAdvance", states=states)
    return call.run()


@api()
def cudnnDropoutBackward(handle, dropoutDesc, dydesc, dy, dxdesc, dx, reserveSpace, reserveSpaceSizeInBytes):
    call, d, DY, DX, R = _call(handle, dropoutDesc, dydesc, dy, dxdesc, dx, reserveSpace, reserveSpaceSizeInBytes,
                               ("dydesc", "dy", "dxdesc", "dx"))
    scale = 0.0 if d.dropout >= 1.0 else 1.0 / (1.0 - d.dropout)
    call.op("DropoutBackward", grad_output=DY, mask=R, scale=scale, out=DX)
    return call.run()
