"""``acl.util``: host pointers from and to NumPy arrays and bytes (pyACL names)."""
from __future__ import annotations

import ctypes

import numpy as np

from ..errors import record_error
from ._hostmem import range_error

__all__ = ["numpy_to_ptr", "ptr_to_numpy", "bytes_to_ptr", "ptr_to_bytes"]


def numpy_to_ptr(array: np.ndarray) -> int:
    """The address of a C-contiguous array's data (the array must outlive the pointer)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"numpy_to_ptr expects a numpy.ndarray, got {type(array).__name__}")
    if not array.flags.c_contiguous:
        raise ValueError("numpy_to_ptr needs a C-contiguous array (use numpy.ascontiguousarray)")
    return array.ctypes.data


def ptr_to_numpy(ptr: int, shape, npy_type) -> np.ndarray | None:
    """A NumPy array viewing ``ptr`` (host memory; on the host backend device memory is host memory too).

    ``npy_type`` is a NumPy dtype or, as in pyACL, a NumPy type number (``np.dtype(np.float32).num``).
    A bad pointer, shape or type gives None and a message (``acl.get_recent_err_msg()``), never a fault.
    """
    try:
        dtype = _dtype_from_num(npy_type) if isinstance(npy_type, int) else np.dtype(npy_type)
        shape = (shape,) if isinstance(shape, int) else tuple(int(d) for d in shape)
        if any(d < 0 for d in shape):
            raise ValueError(f"negative dimension in {shape}")
        nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
        err = _readable(ptr, nbytes)
        if err is not None:
            raise ValueError(err)
        if nbytes == 0:
            return np.zeros(shape, dtype)
        buf = (ctypes.c_char * nbytes).from_address(ptr)
        return np.frombuffer(buf, dtype=dtype).reshape(shape)
    except (TypeError, ValueError, OverflowError) as e:
        record_error(f"ptr_to_numpy: {e}")
        return None


def _readable(ptr, nbytes: int) -> str | None:
    if isinstance(ptr, bool) or not isinstance(ptr, (int, np.integer)):
        return f"ptr must be an int address, got {type(ptr).__name__}"
    ptr = int(ptr)
    if nbytes and not 0 < ptr < 2 ** 64 - nbytes:
        return f"[0x{ptr:x}, +{nbytes}) is not an address range"
    return range_error(ptr, nbytes, False) if nbytes else None


def _dtype_from_num(num: int) -> np.dtype:
    for t in np.sctypeDict.values():
        d = np.dtype(t)
        if d.num == num:
            return d
    raise ValueError(f"unknown NumPy type number {num}")


def bytes_to_ptr(data: bytes) -> int:
    """The address of a bytes object's buffer (read only; the object must outlive the pointer)."""
    return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value


def ptr_to_bytes(ptr: int, size: int) -> bytes | None:
    """A copy of ``size`` bytes at ``ptr``; None and a message for a range this process cannot read."""
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
        record_error(f"ptr_to_bytes: size must be a non-negative int, got {size!r}")
        return None
    err = _readable(ptr, int(size))
    if err is not None:
        record_error(f"ptr_to_bytes: {err}")
        return None
    return ctypes.string_at(int(ptr), int(size)) if size else b""
