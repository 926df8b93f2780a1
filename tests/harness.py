"""Running an op from host arrays: device buffers with guard bytes, views of every layout, phase 1 + 2.

Every buffer is allocated with GUARD bytes of a known pattern on both sides, and the storage around
a strided view is filled with a sentinel, so a test can prove that nothing outside the outputs'
views was written.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np

import aclnn_py as A
from aclnn_py import acl
from aclnn_py.dtypes import CHANNELS_LAST_FORMATS, dtype_info

GUARD = 256
GUARD_BYTE = 0xA5
SENTINEL_BYTE = 0x7B


@dataclass
class TensorSpec:
    """A tensor of a sample: logical values, dtype, format and a memory layout.

    layout: "contiguous"; "channels_last" (memory order N, spatial..., C for a channel-at-dim-1 shape);
    "strided" (every other element of the last dim of a buffer twice as wide); "transposed"
    (memory order reversed); "offset" (contiguous, 7 elements into the storage).
    """
    values: np.ndarray
    dtype: int
    format: int = A.ACL_FORMAT_ND
    layout: str = "contiguous"

    def rounded(self) -> np.ndarray:
        """The values as the device holds them (rounded to dtype), in float64 (or int64)."""
        info = dtype_info(self.dtype)
        v = np.asarray(self.values).astype(info.numpy)
        return v.astype(np.float64) if info.is_float else v.astype(np.int64)


@dataclass
class DeviceTensor:
    spec: TensorSpec
    tensor: Any
    base: int            # allocation base (guard starts here)
    nbytes: int          # storage bytes
    storage_numel: int
    view_mask: np.ndarray  # bool over storage elements: True where the view lives

    @property
    def data(self) -> int:
        return self.base + GUARD


def _layout_strides(shape, layout, channel_axis):
    r = len(shape)
    if layout in ("contiguous", "offset"):
        order = list(range(r))
    elif layout == "channels_last":
        others = [d for d in range(1, r) if d != channel_axis]
        order = [0, *others, channel_axis]
    elif layout == "transposed":
        order = list(reversed(range(r)))
    elif layout == "strided":
        order = list(range(r))
    else:
        raise ValueError(layout)
    strides = [0] * r
    acc = 1
    for d in reversed(order):
        strides[d] = acc * (2 if layout == "strided" and d == r - 1 else 1)
        acc *= max(shape[d], 1) * (2 if layout == "strided" and d == r - 1 else 1)
    offset = 7 if layout == "offset" else 0
    return strides, offset, acc + offset


def make_device_tensor(spec: TensorSpec, channel_axis: int | None = None) -> DeviceTensor:
    info = dtype_info(spec.dtype)
    shape = tuple(np.shape(spec.values))
    if channel_axis is None:
        channel_axis = len(shape) - 1 if spec.format in CHANNELS_LAST_FORMATS else 1
    strides, offset, storage = _layout_strides(shape, spec.layout, min(channel_axis, max(len(shape) - 1, 0)))
    storage = max(storage, 1)
    nbytes = storage * info.itemsize
    base, ret = acl.rt.malloc(nbytes + 2 * GUARD, 0)
    assert ret == 0, acl.get_recent_err_msg()
    host = np.full(nbytes + 2 * GUARD, GUARD_BYTE, np.uint8)
    host[GUARD:GUARD + nbytes] = SENTINEL_BYTE
    store = host[GUARD:GUARD + nbytes].view(info.numpy)
    mask = np.zeros(storage, bool)
    if math.prod(shape):
        view = np.lib.stride_tricks.as_strided(store[offset:], shape, [s * info.itemsize for s in strides])
        view[...] = np.asarray(spec.values).astype(info.numpy)
        mview = np.lib.stride_tricks.as_strided(mask[offset:], shape, strides)
        mview[...] = True
    assert acl.rt.memcpy(base, host.nbytes, host.ctypes.data, host.nbytes, 1) == 0
    t = A.aclCreateTensor(shape, spec.dtype, strides, offset, spec.format, (storage,), base + GUARD)
    assert t is not None
    return DeviceTensor(spec, t, base, nbytes, storage, mask)


def read_storage(dt: DeviceTensor) -> np.ndarray:
    host = np.empty(dt.nbytes + 2 * GUARD, np.uint8)
    assert acl.rt.memcpy(host.ctypes.data, host.nbytes, dt.base, host.nbytes, 2) == 0, acl.get_recent_err_msg()
    return host


def device_bytes(ptr: int, nbytes: int) -> bytes:
    """``nbytes`` of device memory at ``ptr``, after the device is idle, copied device to host (on a
    GPU device memory is not host memory: reading it through ``acl.util.ptr_to_bytes`` gives None)."""
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    out = np.empty(nbytes, np.uint8)
    assert acl.rt.memcpy(out.ctypes.data, nbytes, ptr, nbytes, 2) == 0, acl.get_recent_err_msg()
    return out.tobytes()


def read_view(dt: DeviceTensor) -> np.ndarray:
    """The logical values of the view, in the tensor's NumPy dtype."""
    info = dtype_info(dt.spec.dtype)
    host = read_storage(dt)
    store = host[GUARD:GUARD + dt.nbytes].view(info.numpy)
    t = dt.tensor
    if not t.numel:
        return np.zeros(t.view_dims, info.numpy)
    return np.lib.stride_tricks.as_strided(store[t.offset:], t.view_dims,
                                           [s * info.itemsize for s in t.strides]).copy()


def untouched_outside_view(dt: DeviceTensor, before: np.ndarray) -> bool:
    """Guard bytes and the storage outside the view are byte-identical to ``before``."""
    after = read_storage(dt)
    if not (np.array_equal(after[:GUARD], before[:GUARD]) and np.array_equal(after[GUARD + dt.nbytes:],
                                                                            before[GUARD + dt.nbytes:])):
        return False
    isz = dtype_info(dt.spec.dtype).itemsize
    outside = np.repeat(~dt.view_mask, isz)
    return np.array_equal(after[GUARD:GUARD + dt.nbytes][outside], before[GUARD:GUARD + dt.nbytes][outside])


def free_device_tensor(dt: DeviceTensor) -> None:
    A.aclDestroyTensor(dt.tensor)
    assert acl.rt.free(dt.base) == 0


@dataclass
class Sample:
    """One call of an op: tensors (None = a null optional tensor) and attributes, by parameter name."""
    tensors: dict[str, TensorSpec | None]
    attrs: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    channel_axis: int | None = None
    mutate: Any = None        # f(dict name -> DeviceTensor): corrupt descriptions before phase 1 (error samples)

    def __repr__(self):
        parts = [f"{k}={None if v is None else (np.shape(v.values), A.aclDataType(v.dtype).name[4:], v.layout)}"
                 for k, v in self.tensors.items()]
        return f"Sample({self.note}: {', '.join(parts)}, {self.attrs})"


@dataclass
class Result:
    ws_size: int
    status1: int
    status2: int | None
    outputs: dict[str, np.ndarray]
    device: dict[str, DeviceTensor]
    before: dict[str, np.ndarray]
    executor: Any = None
    message: str | None = None


def call_op(reg, sample: Sample, stream=None, *, run: bool = True, workspace_delta: int = 0,
            keep_executor: bool = False) -> Result:
    """Phase 1 (+ phase 2 and a synchronize) of a registered op on ``sample``; reads every tensor back."""
    params = reg.opdef.params
    dev = {}
    for name, spec in sample.tensors.items():
        if spec is not None:
            dev[name] = make_device_tensor(spec, sample.channel_axis)
    if sample.mutate is not None:
        sample.mutate(dev)
    before = {n: read_storage(d) for n, d in dev.items()}
    args = []
    for p in params:
        if p.name in sample.tensors:
            d = dev.get(p.name)
            args.append(d.tensor if d is not None else None)
        else:
            args.append(sample.attrs.get(p.name))
    ws_size, ex, st1 = reg.get_workspace_size(*args)
    msg = acl.get_recent_err_msg() if st1 else None
    st2 = None
    ws = None
    if st1 == 0 and run:
        size = max(ws_size + workspace_delta, 0)
        if size > 0:
            ws, r = acl.rt.malloc(size + 2 * GUARD, 0)
            assert r == 0
            ws_ptr = ws + GUARD
        else:
            ws_ptr = None
        st2 = reg.run(ws_ptr, size, ex, stream)
        if st2:
            msg = acl.get_recent_err_msg()
        r = acl.rt.synchronize_stream(stream)
        assert r == 0, acl.get_recent_err_msg()
    outputs = {n: read_view(d) for n, d in dev.items()}
    if ws is not None:
        acl.rt.free(ws)
    return Result(ws_size, st1, st2, outputs, dev, before, ex if keep_executor else None, msg)


def release(res: Result) -> None:
    for d in res.device.values():
        free_device_tensor(d)


def to_f64(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).astype(np.float64)


TOL = {A.ACL_FLOAT: (1e-5, 1e-6), A.ACL_FLOAT16: (1e-3, 1e-3), A.ACL_BF16: (1e-2, 1e-2), A.ACL_DOUBLE: (1e-12, 1e-12),
       A.ACL_INT32: (0, 0), A.ACL_INT8: (0, 0), A.ACL_INT64: (0, 0), A.ACL_UINT8: (0, 0)}


def rounded_tolerance(dtype, scale: float = 1.0):
    rtol, atol = TOL[dtype]
    return rtol * scale, atol * scale


def assert_close(actual, expected, dtype, *, name="", scale=1.0):
    """Compare with the float64 reference; f16/bf16 outputs also carry their own rounding (one ulp)."""
    rtol, atol = rounded_tolerance(dtype, scale)
    a, e = to_f64(actual), to_f64(expected)
    if dtype in (A.ACL_FLOAT16, A.ACL_BF16):
        # the stored result is the f32 result rounded once more: allow its half-ulp on top
        eps = 2.0 ** -10 if dtype == A.ACL_FLOAT16 else 2.0 ** -7
        atol = atol + eps * np.abs(e)
    bad = ~(np.abs(a - e) <= atol + rtol * np.abs(e))
    bad &= ~(np.isnan(a) & np.isnan(e))
    if bad.any():
        i = np.argwhere(bad)[0]
        raise AssertionError(f"{name}: {int(bad.sum())}/{a.size} elements differ; first at {tuple(i)}: "
                             f"got {a[tuple(i)]!r}, expected {e[tuple(i)]!r} (rtol={rtol}, atol={np.max(atol):.3g}); "
                             f"max |err| {np.nanmax(np.abs(a - e)):.3g}")


BF16 = ml_dtypes.bfloat16


def samples_match_reference(reg, info, rng) -> int:
    """Run every sample of ``info`` through ``reg`` and compare each output with the float64 reference
    (the data dtype's tolerance); returns how many samples were checked. For tests that re-run an op
    family's database under another launch plan (the GPU's plans on the emulator)."""
    n = 0
    for sample in info.samples(rng):
        res = call_op(reg, sample)
        try:
            assert res.status1 == 0 and res.status2 == 0, res.message
            for name, exp in info.reference(sample).items():
                assert_close(res.outputs[name], exp, info.data_dtype(sample), name=f"{info.name}.{name}",
                             scale=info.tolerance_scale(sample))
            n += 1
        finally:
            release(res)
    return n


class Dev:
    """Device buffers (acl.rt memory) from NumPy arrays for the emulator's kernel tests: ``up`` copies
    an array in, ``down`` copies one out; the ``d`` fixture (conftest.py) frees what a test took."""

    def __init__(self):
        self.ptrs = []

    def up(self, a):
        a = np.ascontiguousarray(a)
        p, ret = acl.rt.malloc(max(a.nbytes, 1), 0)
        assert ret == 0
        assert acl.rt.memcpy(p, a.nbytes, a.ctypes.data, a.nbytes, 1) == 0
        self.ptrs.append(p)
        return p

    def zeros(self, n, dtype):
        return self.up(np.zeros(n, dtype))

    def empty(self, nbytes):
        p, ret = acl.rt.malloc(nbytes, 0)
        assert ret == 0
        self.ptrs.append(p)
        return p

    @staticmethod
    def put(p, a):
        a = np.ascontiguousarray(a)
        assert acl.rt.memcpy(p, a.nbytes, a.ctypes.data, a.nbytes, 1) == 0

    @staticmethod
    def down(p, n, dtype):
        out = np.empty(n, dtype)
        assert acl.rt.memcpy(out.ctypes.data, out.nbytes, p, out.nbytes, 2) == 0
        return out

    def free(self):
        for p in self.ptrs:
            acl.rt.free(p)
        self.ptrs.clear()


def sync_ok():
    """The device synchronises without an error (the error message otherwise)."""
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()

