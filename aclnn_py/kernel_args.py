"""CuPy 14's rules for kernel launch arguments, shared by both backends.

Note [One set of argument rules]
    A launch that CuPy refuses must be refused by the emulator too, at the same moment (the call
    raises, nothing is queued), and a launch CuPy accepts must not be refused for its *types* by the
    emulator. This is ``cupy/cuda/function.pyx::_pointer`` + ``cupy/_core/_scalar.pyx::CScalar`` of
    CuPy 14, transcribed:

    ==============================  ==============================================================
    ``None``                        a null pointer
    a CuPy ndarray / MemoryPointer  its device pointer (only exists where CuPy is installed)
    ``numpy.ndarray`` of size 1     its bytes, by value (any other size: TypeError)
    ``bool``                        1 byte
    ``int`` (exactly ``int``)       int64; uint64 for values >= 2**63; OverflowError outside
                                    [-2**63, 2**64)
    ``float`` / ``complex``         float64 / complex128
    a NumPy scalar                  its bytes (``np.float32``, ``np.void`` structs, bfloat16, ...)
    anything else                   TypeError("Unsupported type ...") — ``IntEnum`` members,
                                    objects with ``__cuda_array_interface__`` or ``.ptr`` included
    ==============================  ==============================================================

    What CuPy cannot see — that an argument's size matches its parameter — the emulator checks
    when the kernel runs (stricter than a GPU, reported by the next synchronize; DESIGN §5).
    ``aclnn_py.RawKernel`` turns objects with ``__cuda_array_interface__`` into their data pointer
    before either backend sees them (a documented convenience, the same on both).
"""
from __future__ import annotations

import sys
from typing import Any, Sequence

import numpy as np

__all__ = ["check_args", "scalar_bytes", "is_cupy_pointer"]

_INT64_MIN, _UINT64_END = -(1 << 63), 1 << 64


def is_cupy_pointer(a: Any) -> bool:
    """A CuPy object CuPy passes as a device pointer (ndarray, MemoryPointer, CPointer, texture)."""
    if "cupy" not in sys.modules:
        return False
    mod = type(a).__module__ or ""
    return mod.startswith(("cupy.", "cupy_backends.")) or mod == "cupy"


def scalar_bytes(a: Any) -> bytes | None:
    """The bytes CuPy 14 passes for a by-value argument ``a`` (None for a CuPy pointer object).

    Raises ``TypeError`` / ``OverflowError`` exactly where CuPy does."""
    if a is None:
        return bytes(8)
    t = type(a)
    if t is bool:
        return b"\x01" if a else b"\x00"
    if t is int:
        if not _INT64_MIN <= a < _UINT64_END:
            raise OverflowError(f"Python int {a} too large to convert to a kernel argument (int64/uint64)")
        return (a & (_UINT64_END - 1)).to_bytes(8, "little")
    if t is float:
        return np.float64(a).tobytes()
    if t is complex:
        return np.complex128(a).tobytes()
    if isinstance(a, np.ndarray):
        if a.size != 1:
            raise TypeError(f"You are trying to pass a numpy.ndarray of shape {a.shape} as a kernel parameter. "
                            "Only numpy.ndarrays of size one can be passed by value. If you meant to pass a "
                            "pointer to __global__ memory, you need to pass a device pointer instead.")
        return a.tobytes()
    if isinstance(a, np.generic):
        if a.dtype.hasobject:
            raise TypeError(f"Unsupported type {t}")
        return a.tobytes()
    if is_cupy_pointer(a):
        return None
    raise TypeError(f"Unsupported type {t}")


def check_args(args: Sequence[Any], name: str = "") -> None:
    """Raise what CuPy 14 raises at launch for ``args`` (TypeError / OverflowError), naming the argument."""
    if not isinstance(args, (tuple, list)):
        raise TypeError(f"kernel arguments must be a tuple, got {type(args).__name__}")
    for i, a in enumerate(args):
        if type(a) is int or (isinstance(a, np.generic) and not a.dtype.hasobject):   # the common cases
            if type(a) is int and not _INT64_MIN <= a < _UINT64_END:
                raise OverflowError(f"kernel {name!r} argument {i}: Python int {a} does not fit int64/uint64")
            continue
        try:
            scalar_bytes(a)
        except (TypeError, OverflowError) as e:
            raise type(e)(f"kernel {name!r} argument {i}: {e}") from None
