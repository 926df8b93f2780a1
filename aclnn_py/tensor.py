"""The meta API (libnnopbase): aclTensor, aclScalar, aclIntArray/FloatArray/BoolArray, aclTensorList.

``aclCreateTensor(view_dims, data_type, strides, offset, format, storage_dims, addr)`` describes a
view (strides and offset in elements; ``strides=None`` means contiguous) over device memory at
``addr``. As in CANN nothing is checked against memory at creation: the ops check every view
against the allocation registry in phase 1. Getters return values first, status last.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import attrs
import numpy as np

from .acl.memory import Allocation, registry
from .dtypes import aclDataType, aclFormat, dtype_info, from_numpy_dtype
from .errors import fail, record_error
from .status import AclnnStatus

__all__ = [
    "aclTensor", "aclScalar", "aclIntArray", "aclFloatArray", "aclBoolArray", "aclTensorList",
    "aclCreateTensor", "aclInitTensor", "aclDestroyTensor", "aclGetViewShape", "aclGetViewStrides",
    "aclGetViewOffset", "aclGetStorageShape", "aclGetFormat", "aclGetDataType", "aclGetRawTensorAddr",
    "aclSetRawTensorAddr", "aclCreateScalar", "aclDestroyScalar", "aclCreateIntArray", "aclDestroyIntArray",
    "aclCreateFloatArray", "aclDestroyFloatArray", "aclCreateBoolArray", "aclDestroyBoolArray",
    "aclGetIntArraySize", "aclGetFloatArraySize", "aclGetBoolArraySize",
    "aclCreateTensorList", "aclDestroyTensorList", "aclGetTensorListSize", "from_array", "contiguous_strides",
]

OK = AclnnStatus.ACLNN_SUCCESS
NULLPTR = AclnnStatus.ACLNN_ERR_PARAM_NULLPTR


_DESC_FIELDS = frozenset({"view_dims", "strides", "offset", "data_type", "format", "storage_dims", "destroyed"})
_ITEMSIZE = {dt: info.itemsize for dt in aclDataType if (info := dtype_info(dt)) is not None}


def contiguous_strides(dims: Sequence[int]) -> tuple[int, ...]:
    strides, acc = [], 1
    for d in reversed(dims):
        strides.append(acc)
        acc *= max(d, 1)
    return tuple(reversed(strides))


@attrs.define(eq=False)
class aclTensor:
    """A view: ``view_dims`` with ``strides`` (elements) from element ``offset`` of the storage at ``addr``."""
    view_dims: tuple[int, ...]
    data_type: aclDataType
    strides: tuple[int, ...]
    offset: int
    format: aclFormat
    storage_dims: tuple[int, ...]
    addr: int | None
    destroyed: bool = False
    owner: Any = attrs.field(default=None, repr=False)   # an external buffer this view keeps alive
    _desc_key: tuple | None = attrs.field(default=None, init=False, repr=False)

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if name in _DESC_FIELDS:
            object.__setattr__(self, "_desc_key", None)

    @property
    def desc_key(self) -> tuple:
        """Everything about this view but its address (what a phase-1 plan depends on); cached until a
        field changes. A plain tuple: no process-wide table of descriptions to grow without bound."""
        k = self._desc_key
        if k is None:
            k = (self.view_dims, self.strides, self.offset, self.data_type, self.format, self.storage_dims,
                 self.destroyed)
            object.__setattr__(self, "_desc_key", k)
        return k

    @property
    def rank(self) -> int:
        return len(self.view_dims)

    @property
    def numel(self) -> int:
        return math.prod(self.view_dims)

    @property
    def itemsize(self) -> int:
        return _ITEMSIZE.get(self.data_type, 0)

    def element_span(self) -> tuple[int, int]:
        """(lowest, highest) element index the view touches, counted from ``addr``; needs numel > 0."""
        lo = hi = self.offset
        for d, s in zip(self.view_dims, self.strides):
            if s >= 0:
                hi += (d - 1) * s
            else:
                lo += (d - 1) * s
        return lo, hi

    def is_contiguous(self) -> bool:
        return all(d == 1 or s == cs for d, s, cs in zip(self.view_dims, self.strides, contiguous_strides(self.view_dims)))

    def __repr__(self) -> str:
        return (f"aclTensor(shape={self.view_dims}, dtype={aclDataType(self.data_type).name}, strides={self.strides}, "
                f"offset={self.offset}, format={aclFormat(self.format).name}, addr={self.addr and hex(self.addr)})")


def _int_tuple(v) -> tuple[int, ...] | None:
    try:
        t = tuple(v)
    except TypeError:
        return None
    if not all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in t):
        return None
    return tuple(int(x) for x in t)


def _make_fields(api, view_dims, data_type, strides, offset, format, storage_dims, addr):
    dims = _int_tuple(view_dims) if view_dims is not None else None
    if dims is None or any(d < 0 for d in dims):
        record_error(f"{api}: view_dims must be a sequence of non-negative ints, got {view_dims!r}")
        return None
    st = contiguous_strides(dims) if strides is None else _int_tuple(strides)
    if st is None or len(st) != len(dims):
        record_error(f"{api}: strides must be None or {len(dims)} ints (one per view dim), got {strides!r}")
        return None
    sdims = dims if storage_dims is None else _int_tuple(storage_dims)
    if sdims is None or any(d < 0 for d in sdims):
        record_error(f"{api}: storage_dims must be a sequence of non-negative ints, got {storage_dims!r}")
        return None
    try:
        dt, fmt = aclDataType(data_type), aclFormat(format)
    except ValueError:
        record_error(f"{api}: unknown data_type {data_type!r} or format {format!r}")
        return None
    if not isinstance(offset, (int, np.integer)) or offset < 0:
        record_error(f"{api}: offset must be an int >= 0, got {offset!r}")
        return None
    if addr is not None and (not isinstance(addr, (int, np.integer)) or addr < 0):
        record_error(f"{api}: addr must be an int address or None, got {addr!r}")
        return None
    return dict(view_dims=dims, data_type=dt, strides=st, offset=int(offset), format=fmt, storage_dims=sdims,
                addr=None if addr in (None, 0) else int(addr))


def aclCreateTensor(view_dims, data_type, strides, offset, format, storage_dims, addr):
    """A new aclTensor, or ``None`` (with a recorded message) when the description is malformed."""
    f = _make_fields("aclCreateTensor", view_dims, data_type, strides, offset, format, storage_dims, addr)
    return None if f is None else aclTensor(**f)


def aclInitTensor(tensor, view_dims, data_type, strides, offset, format, storage_dims, addr):
    if tensor is None:
        return fail(NULLPTR, "aclInitTensor: tensor is null")
    f = _make_fields("aclInitTensor", view_dims, data_type, strides, offset, format, storage_dims, addr)
    if f is None:
        return AclnnStatus.ACLNN_ERR_PARAM_INVALID
    for k, v in f.items():
        setattr(tensor, k, v)
    tensor.destroyed = False
    return OK


def _release_owner(t: aclTensor) -> None:
    if t.owner is not None:
        if t.owner[0] is not None:
            registry.remove(t.owner[0], "external")
        t.owner = None


def aclDestroyTensor(tensor):
    """Destroys the description (never the memory). ``None`` is fine, as in CANN."""
    if tensor is None:
        return OK
    if not isinstance(tensor, aclTensor):
        return fail(AclnnStatus.ACLNN_ERR_PARAM_INVALID, f"aclDestroyTensor: not an aclTensor: {tensor!r}")
    tensor.destroyed = True
    _release_owner(tensor)
    return OK


def _getter(api, tensor, fn, empty):
    if tensor is None:
        return empty, fail(NULLPTR, f"{api}: tensor is null")
    return fn(tensor), OK


def aclGetViewShape(tensor):
    return _getter("aclGetViewShape", tensor, lambda t: list(t.view_dims), [])


def aclGetViewStrides(tensor):
    return _getter("aclGetViewStrides", tensor, lambda t: list(t.strides), [])


def aclGetViewOffset(tensor):
    return _getter("aclGetViewOffset", tensor, lambda t: t.offset, 0)


def aclGetStorageShape(tensor):
    return _getter("aclGetStorageShape", tensor, lambda t: list(t.storage_dims), [])


def aclGetFormat(tensor):
    return _getter("aclGetFormat", tensor, lambda t: t.format, aclFormat.ACL_FORMAT_UNDEFINED)


def aclGetDataType(tensor):
    return _getter("aclGetDataType", tensor, lambda t: t.data_type, aclDataType.ACL_DT_UNDEFINED)


def aclGetRawTensorAddr(tensor):
    return _getter("aclGetRawTensorAddr", tensor, lambda t: t.addr or 0, 0)


def aclSetRawTensorAddr(tensor, addr):
    if tensor is None:
        return fail(NULLPTR, "aclSetRawTensorAddr: tensor is null")
    tensor.addr = None if addr in (None, 0) else int(addr)
    return OK


# scalars and arrays ------------------------------------------------------------------------------

@attrs.frozen
class aclScalar:
    value: np.generic
    data_type: aclDataType

    def to_float(self) -> float:
        return float(self.value)


def aclCreateScalar(value, data_type):
    """A scalar holding a copy of ``value`` converted to ``data_type``; ``None`` if it cannot."""
    info = dtype_info(data_type)
    if value is None or info is None:
        record_error(f"aclCreateScalar: need a value and a supported data_type, got {value!r}, {data_type!r}")
        return None
    try:
        v = np.asarray(value).astype(info.numpy).reshape(())[()]
    except (TypeError, ValueError) as e:
        record_error(f"aclCreateScalar: cannot convert {value!r} to {aclDataType(data_type).name}: {e}")
        return None
    return aclScalar(v, aclDataType(data_type))


def aclDestroyScalar(scalar):
    return OK


@attrs.frozen
class _Array:
    values: tuple

    def __len__(self):
        return len(self.values)

    def __iter__(self):
        return iter(self.values)

    def __getitem__(self, i):
        return self.values[i]


class aclIntArray(_Array):
    pass


class aclFloatArray(_Array):
    pass


class aclBoolArray(_Array):
    pass


def _create_array(cls, api, values, conv):
    if values is None:
        record_error(f"{api}: value is null")
        return None
    try:
        return cls(tuple(conv(v) for v in values))
    except (TypeError, ValueError) as e:
        record_error(f"{api}: {e}")
        return None


def aclCreateIntArray(values):
    return _create_array(aclIntArray, "aclCreateIntArray", values, lambda v: int(np.int64(v)))


def aclCreateFloatArray(values):
    return _create_array(aclFloatArray, "aclCreateFloatArray", values, lambda v: float(np.float32(v)))


def aclCreateBoolArray(values):
    return _create_array(aclBoolArray, "aclCreateBoolArray", values, bool)


def _destroy(_obj):
    return OK


aclDestroyIntArray = aclDestroyFloatArray = aclDestroyBoolArray = _destroy


def _size(api, obj):
    if obj is None:
        return 0, fail(NULLPTR, f"{api}: array is null")
    return len(obj), OK


def aclGetIntArraySize(a):
    return _size("aclGetIntArraySize", a)


def aclGetFloatArraySize(a):
    return _size("aclGetFloatArraySize", a)


def aclGetBoolArraySize(a):
    return _size("aclGetBoolArraySize", a)


@attrs.define(eq=False)
class aclTensorList:
    tensors: list

    def __len__(self):
        return len(self.tensors)

    def __iter__(self):
        return iter(self.tensors)

    def __getitem__(self, i):
        return self.tensors[i]


def aclCreateTensorList(tensors):
    if tensors is None:
        record_error("aclCreateTensorList: value is null")
        return None
    return aclTensorList(list(tensors))


def aclDestroyTensorList(tensor_list):
    """Destroys the list and the tensors in it (CANN: do not destroy them again)."""
    if tensor_list is None:
        return OK
    for t in tensor_list.tensors:
        aclDestroyTensor(t)
    tensor_list.tensors = []
    return OK


def aclGetTensorListSize(tensor_list):
    return _size("aclGetTensorListSize", tensor_list)


# interop -----------------------------------------------------------------------------------------

_FORMAT_BY_RANK = {2: aclFormat.ACL_FORMAT_NC, 3: aclFormat.ACL_FORMAT_NCL, 4: aclFormat.ACL_FORMAT_NCHW,
                   5: aclFormat.ACL_FORMAT_NCDHW}


def _describe(obj):
    """(data pointer, shape, byte strides, numpy dtype, is_device, keepalive) of an array-like, zero copy."""
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        dt = np.dtype(cai["typestr"])
        shape = tuple(cai["shape"])
        strides = cai.get("strides") or tuple(s * dt.itemsize for s in contiguous_strides(shape))
        return cai["data"][0], shape, tuple(strides), dt, True, obj
    if hasattr(obj, "__dlpack__"):
        dev = obj.__dlpack_device__()[0] if hasattr(obj, "__dlpack_device__") else 1
        if dev == 1:  # kDLCPU
            arr = np.from_dlpack(obj)
        else:
            import cupy
            arr = cupy.from_dlpack(obj)
            return _describe(arr)
    else:
        arr = np.asarray(memoryview(obj)) if not isinstance(obj, np.ndarray) else obj
    return arr.ctypes.data, arr.shape, arr.strides, arr.dtype, False, (obj, arr)


def from_array(obj, format=None):
    """``(tensor, ret)``: an aclTensor viewing ``obj``'s memory without copying.

    ``obj`` may expose ``__cuda_array_interface__`` (CuPy, PyTorch CUDA), ``__dlpack__`` or the buffer
    protocol (NumPy). Its extent is registered so phase-1 bounds checks know it; the tensor keeps
    ``obj`` alive until ``aclDestroyTensor``. Host buffers can only be used by the host backend.
    The format defaults to what torch_npu sets for the rank (NC/NCL/NCHW/NCDHW, else ND).
    """
    from .backends import get_backend
    try:
        ptr, shape, bstrides, dt, is_device, keep = _describe(obj)
    except Exception as e:
        return None, fail(AclnnStatus.ACLNN_ERR_PARAM_INVALID, f"from_array: cannot view {type(obj).__name__}: {e}")
    acl_dt = from_numpy_dtype(dt)
    if acl_dt is None:
        return None, fail(AclnnStatus.ACLNN_ERR_PARAM_INVALID, f"from_array: unsupported dtype {dt}")
    if not is_device and get_backend().name != "host":
        return None, fail(AclnnStatus.ACLNN_ERR_PARAM_INVALID,
                          "from_array: a host buffer cannot be used by the CUDA backend; copy it with acl.rt.memcpy")
    if any(s % dt.itemsize for s in bstrides):
        return None, fail(AclnnStatus.ACLNN_ERR_PARAM_INVALID, "from_array: strides are not multiples of the itemsize")
    strides = tuple(s // dt.itemsize for s in bstrides)
    numel = math.prod(shape)
    lo = sum((d - 1) * s for d, s in zip(shape, strides) if s < 0) if numel else 0
    hi = sum((d - 1) * s for d, s in zip(shape, strides) if s > 0) if numel else 0
    base = ptr + lo * dt.itemsize
    nbytes = (hi - lo + 1) * dt.itemsize if numel else dt.itemsize
    fmt = aclFormat(format) if format is not None else _FORMAT_BY_RANK.get(len(shape), aclFormat.ACL_FORMAT_ND)
    from .acl._state import state
    dev = state.current_device() if is_device else 0  # the host backend's "device" memory is host memory
    registered = None
    if base and registry.find(base, nbytes) is None:   # memory the runtime already knows needs no entry
        registry.add(Allocation(base, nbytes, dev, "external", owner=keep))
        registered = base
    t = aclTensor(tuple(shape), acl_dt, strides, -lo, fmt, (hi - lo + 1 if numel else 0,), base or None,
                  owner=(registered, keep))
    return t, OK
