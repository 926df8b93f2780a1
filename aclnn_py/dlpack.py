"""DLPack both ways, with the stream protocol, without CuPy's or NumPy's help (so bfloat16 and device
memory work on both backends).

Import (``from_array(obj)`` with ``obj.__dlpack__``): we are the consumer. We call
``obj.__dlpack__(stream=S, max_version=(1, 0))`` where ``S`` is the stream our work on the tensor will
be ordered with: on CUDA the legacy default stream (1; every stream we create is a blocking stream,
so it orders with it), on the host no stream (``None``: the producer synchronises). The capsule is
renamed ``used_dltensor[_versioned]`` and its deleter runs when the aclTensor lets go of it.

Export (``aclTensor.__dlpack__``): we are the producer. Unless the consumer passes ``stream=-1`` (it
orders the work itself), the work queued on every stream of the device is waited for before the
capsule is handed over (we do not track which stream last wrote a tensor; waiting for all of them is
the conservative reading of the protocol). ``__dlpack_device__`` is ``(kDLCUDA, device)`` on a GPU,
``(kDLCPU, 0)`` on the emulator.
"""
from __future__ import annotations

import ctypes
import threading

import ml_dtypes
import numpy as np

__all__ = ["consume", "export", "KDL_CPU", "KDL_CUDA", "KDL_CUDA_HOST", "KDL_CUDA_MANAGED"]

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13
_READ_ONLY = 1


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


_api = ctypes.pythonapi
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_Destructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _Destructor]
# raw-address variants, for the destructor (the capsule is being freed: no Python reference to it)
_name_of = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.c_void_p)(("PyCapsule_GetName", _api))
_pointer_of = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_GetPointer", _api))

# names must outlive every capsule that points at them: module constants
_DLTENSOR, _USED = ctypes.c_char_p(b"dltensor"), ctypes.c_char_p(b"used_dltensor")
_DLTENSOR_V, _USED_V = ctypes.c_char_p(b"dltensor_versioned"), ctypes.c_char_p(b"used_dltensor_versioned")

_CODES = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}


def _numpy_dtype(code: int, bits: int, lanes: int) -> np.dtype:
    if lanes != 1:
        raise BufferError(f"DLPack dtype with {lanes} lanes is not supported")
    if code == 4 and bits == 16:           # kDLBfloat
        return np.dtype(ml_dtypes.bfloat16)
    if code == 6 and bits == 8:            # kDLBool
        return np.dtype(np.bool_)
    kind = _CODES.get(code)
    if kind is None or bits % 8:
        raise BufferError(f"DLPack dtype (code {code}, {bits} bits) is not supported")
    return np.dtype(f"{kind}{bits // 8}")


def _dl_dtype(dt: np.dtype) -> tuple[int, int]:
    dt = np.dtype(dt)
    if dt == np.dtype(ml_dtypes.bfloat16):
        return 4, 16
    if dt == np.bool_:
        return 6, 8
    code = {"i": 0, "u": 1, "f": 2, "c": 5}.get(dt.kind)
    if code is None:
        raise BufferError(f"dtype {dt} cannot be exported through DLPack")
    return code, dt.itemsize * 8


class _Owner:
    """Holds a consumed DLManagedTensor[Versioned]; runs its deleter once, when dropped."""

    def __init__(self, addr: int, deleter):
        self._addr, self._deleter = addr, deleter

    def __del__(self):
        d, self._deleter = self._deleter, None
        if d:
            d(self._addr)


def consume(obj, stream):
    """``(data pointer, shape, byte strides, numpy dtype, (device_type, device_id), writable, owner)`` of an
    object with ``__dlpack__``, zero copy; ``owner`` must be kept alive while the memory is used."""
    try:
        cap = obj.__dlpack__(stream=stream, max_version=(1, 0))
    except TypeError:                       # a producer of the pre-1.0 signature
        cap = obj.__dlpack__(stream=stream) if stream is not None else obj.__dlpack__()
    if _api.PyCapsule_IsValid(cap, _DLTENSOR_V):
        addr = _api.PyCapsule_GetPointer(cap, _DLTENSOR_V)
        m = DLManagedTensorVersioned.from_address(addr)
        if m.version.major > 1:
            raise BufferError(f"DLPack {m.version.major}.{m.version.minor} is newer than the 1.x we read")
        t, writable = m.dl_tensor, not (m.flags & _READ_ONLY)
        _api.PyCapsule_SetName(cap, _USED_V)
    elif _api.PyCapsule_IsValid(cap, _DLTENSOR):
        addr = _api.PyCapsule_GetPointer(cap, _DLTENSOR)
        m = DLManagedTensor.from_address(addr)
        t, writable = m.dl_tensor, True
        _api.PyCapsule_SetName(cap, _USED)
    else:
        raise BufferError("__dlpack__ did not return a DLPack capsule (or it was used already)")
    owner = _Owner(addr, m.deleter if m.deleter else None)
    nd = t.ndim
    dt = _numpy_dtype(t.dtype.code, t.dtype.bits, t.dtype.lanes)
    shape = tuple(int(t.shape[i]) for i in range(nd))
    if t.strides:
        strides = tuple(int(t.strides[i]) * dt.itemsize for i in range(nd))
    else:
        acc, st = dt.itemsize, []
        for d in reversed(shape):
            st.append(acc)
            acc *= max(d, 1)
        strides = tuple(reversed(st))
    ptr = (t.data or 0) + int(t.byte_offset)
    return ptr, shape, strides, dt, (int(t.device.device_type), int(t.device.device_id)), writable, owner


# export ----------------------------------------------------------------------------------------

_live: dict[int, tuple] = {}      # address of a DLManagedTensor we made -> what it keeps alive
_live_lock = threading.Lock()


@_Deleter
def _delete_managed(addr):
    with _live_lock:
        _live.pop(addr, None)


@_Destructor
def _capsule_destructor(cap_addr):
    # a capsule nobody consumed still owns its tensor (the name was not changed to used_dltensor)
    if _name_of(cap_addr) == b"dltensor":
        addr = _pointer_of(cap_addr, _DLTENSOR)
        if addr:
            _delete_managed(addr)


def export(ptr: int, shape, strides_elems, dtype, device: tuple[int, int], keep):
    """A legacy ``dltensor`` capsule for memory at ``ptr`` (element strides); ``keep`` stays alive until
    the consumer calls the deleter."""
    code, bits = _dl_dtype(dtype)
    nd = len(shape)
    shp = (ctypes.c_int64 * max(nd, 1))(*shape)
    std = (ctypes.c_int64 * max(nd, 1))(*strides_elems)
    m = DLManagedTensor()
    m.dl_tensor.data = ptr
    m.dl_tensor.device = DLDevice(*device)
    m.dl_tensor.ndim = nd
    m.dl_tensor.dtype = DLDataType(code, bits, 1)
    m.dl_tensor.shape = ctypes.cast(shp, ctypes.POINTER(ctypes.c_int64))
    m.dl_tensor.strides = ctypes.cast(std, ctypes.POINTER(ctypes.c_int64))
    m.dl_tensor.byte_offset = 0
    m.manager_ctx = None
    m.deleter = _delete_managed
    addr = ctypes.addressof(m)
    with _live_lock:
        _live[addr] = (m, shp, std, keep)
    return _api.PyCapsule_New(addr, _DLTENSOR, _capsule_destructor)
