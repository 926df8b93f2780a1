"""``acl.util``: host pointers from and to NumPy arrays and bytes (pyACL names)."""
from __future__ import annotations

import ctypes

import numpy as np

__all__ = ["numpy_to_ptr", "ptr_to_numpy", "bytes_to_ptr", "ptr_to_bytes"]


def numpy_to_ptr(array: np.ndarray) -> int:
    """The address of a C-contiguous array's data (the array must outlive the pointer)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"numpy_to_ptr expects a numpy.ndarray, got {type(array).__name__}")
    if not array.flags.c_contiguous:
        raise ValueError("numpy_to_ptr needs a C-contiguous array (use numpy.ascontiguousarray)")
    return array.ctypes.data


def ptr_to_numpy(ptr: int, shape, npy_type) -> np.ndarray:
    """A NumPy array viewing ``ptr`` (host memory; on the host backend device memory is host memory too).

    ``npy_type`` is a NumPy dtype or, as in pyACL, a NumPy type number (``np.dtype(np.float32).num``).
    """
    dtype = _dtype_from_num(npy_type) if isinstance(npy_type, int) else np.dtype(npy_type)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    buf = (ctypes.c_char * nbytes).from_address(ptr)
    return np.frombuffer(buf, dtype=dtype).reshape(shape)


def _dtype_from_num(num: int) -> np.dtype:
    for t in np.sctypeDict.values():
        d = np.dtype(t)
        if d.num == num:
            return d
    raise ValueError(f"unknown NumPy type number {num}")


def bytes_to_ptr(data: bytes) -> int:
    """The address of a bytes object's buffer (read only; the object must outlive the pointer)."""
    return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value


def ptr_to_bytes(ptr: int, size: int) -> bytes:
    return ctypes.string_at(ptr, size)
