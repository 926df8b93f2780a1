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
import ml_dtypes
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

    # DLPack export (aclnn_py.dlpack): torch.from_dlpack(t), cupy.from_dlpack(t), np.from_dlpack(t)
    def __dlpack_device__(self) -> tuple[int, int]:
        from .acl._state import state
        from .backends import get_backend
        from .dlpack import KDL_CPU, KDL_CUDA
        if get_backend().name == "cuda":
            return KDL_CUDA, state.current_device() or 0
        return KDL_CPU, 0

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule viewing this tensor (no copy). ``stream``: the consumer's stream; unless it is
        -1 the work queued on the device is finished first (aclnn_py.dlpack)."""
        from .backends import DeviceError, get_backend
        from .dlpack import export
        if copy is True:
            raise BufferError("aclTensor.__dlpack__: copy=True is not supported (it is a view)")
        dev = self.__dlpack_device__()
        if dl_device is not None and tuple(dl_device) != dev:
            raise BufferError(f"aclTensor.__dlpack__: the tensor is on {dev}, not {tuple(dl_device)}")
        if self.addr is None or self.destroyed:
            raise BufferError("aclTensor.__dlpack__: a null or destroyed tensor has no memory to export")
        info = dtype_info(self.data_type)
        if info is None:
            raise BufferError(f"aclTensor.__dlpack__: dtype {self.data_type!r} cannot be exported")
        if stream != -1:
            try:
                get_backend().synchronize_all()
            except DeviceError as e:
                raise BufferError(f"aclTensor.__dlpack__: the device reported an error: {e}") from e
        return export(self.addr + self.offset * self.itemsize, self.view_dims, self.strides, info.numpy, dev,
                      (self, self.owner))

    def __repr__(self) -> str:
        return (f"aclTensor(shape={self.view_dims}, dtype={aclDataType(self.data_type).name}, strides={self.strides}, "
                f"offset={self.offset}, format={aclFormat(self.format).name}, addr={self.addr and hex(self.addr)})")


_I64 = 1 << 63


def _int_tuple(v, lo: int = -_I64, hi: int = _I64) -> tuple[int, ...] | None:
    """``v`` as a tuple of ints in [lo, hi) (NumPy integers accepted, bools and floats not), or None."""
    if isinstance(v, (str, bytes, dict)) or v is None:
        return None
    try:
        t = tuple(v)
    except TypeError:
        return None
    if len(t) > 64 or not all(isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)) for x in t):
        return None
    t = tuple(int(x) for x in t)
    return t if all(lo <= x < hi for x in t) else None


def _as_int(v) -> int | None:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        return None
    return int(v)


def _make_fields(api, view_dims, data_type, strides, offset, format, storage_dims, addr):
    """The fields of a tensor description, or None (message recorded). Every integer must be an
    int64 (CANN's C types: ``const int64_t*`` dims and strides, ``int64_t`` offset), the element counts
    of the view and of the storage must fit an int64 too, and an address is an unsigned 64-bit value."""
    dims = _int_tuple(view_dims, 0) if view_dims is not None else None
    if dims is None:
        record_error(f"{api}: view_dims must be a sequence of at most 64 ints in [0, 2**63), got {view_dims!r}")
        return None
    if math.prod(dims) >= _I64:
        record_error(f"{api}: view_dims {dims} hold {math.prod(dims)} elements, more than an int64 can count")
        return None
    st = contiguous_strides(dims) if strides is None else _int_tuple(strides)
    if st is None or len(st) != len(dims) or any(abs(x) >= _I64 for x in st):
        record_error(f"{api}: strides must be None or {len(dims)} int64s (one per view dim), got {strides!r}")
        return None
    sdims = dims if storage_dims is None else _int_tuple(storage_dims, 0)
    if sdims is None or math.prod(sdims) >= _I64:
        record_error(f"{api}: storage_dims must be a sequence of at most 64 ints in [0, 2**63) whose product "
                     f"fits an int64, got {storage_dims!r}")
        return None
    dt_i, fmt_i = _as_int(data_type), _as_int(format)
    try:
        dt, fmt = aclDataType(dt_i), aclFormat(fmt_i)
    except ValueError:
        record_error(f"{api}: unknown data_type {data_type!r} or format {format!r}")
        return None
    off = _as_int(offset)
    if off is None or not 0 <= off < _I64:
        record_error(f"{api}: offset must be an int in [0, 2**63), got {offset!r}")
        return None
    a = None if addr is None else _as_int(addr)
    if addr is not None and (a is None or not 0 <= a < (1 << 64)):
        record_error(f"{api}: addr must be an int address in [0, 2**64) or None, got {addr!r}")
        return None
    return dict(view_dims=dims, data_type=dt, strides=st, offset=off, format=fmt, storage_dims=sdims,
                addr=None if not a else a)


def aclCreateTensor(view_dims, data_type, strides, offset, format, storage_dims, addr):
    """A new aclTensor, or ``None`` (with a recorded message) when the description is malformed."""
    f = _make_fields("aclCreateTensor", view_dims, data_type, strides, offset, format, storage_dims, addr)
    return None if f is None else aclTensor(**f)


def aclInitTensor(tensor, view_dims, data_type, strides, offset, format, storage_dims, addr):
    if tensor is None:
        return fail(NULLPTR, "aclInitTensor: tensor is null")
    if not isinstance(tensor, aclTensor):
        return fail(AclnnStatus.ACLNN_ERR_PARAM_INVALID, f"aclInitTensor: not an aclTensor: {tensor!r}")
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
    if not isinstance(tensor, aclTensor):
        return empty, fail(AclnnStatus.ACLNN_ERR_PARAM_INVALID, f"{api}: not an aclTensor: {type(tensor).__name__}")
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
    if not isinstance(tensor, aclTensor):
        return fail(AclnnStatus.ACLNN_ERR_PARAM_INVALID, f"aclSetRawTensorAddr: not an aclTensor: {tensor!r}")
    a = None if addr is None else _as_int(addr)
    if addr is not None and (a is None or not 0 <= a < (1 << 64)):
        return fail(AclnnStatus.ACLNN_ERR_PARAM_INVALID,
                    f"aclSetRawTensorAddr: addr must be an int address in [0, 2**64) or None, got {addr!r}")
    tensor.addr = a or None
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
    info = dtype_info(data_type) if _as_int(data_type) is not None else None
    if value is None or info is None:
        record_error(f"aclCreateScalar: need a value and a supported data_type, got {value!r}, {data_type!r}")
        return None
    try:
        src = np.asarray(value)
        if src.shape != () or src.dtype.kind not in "biuf":
            raise TypeError(f"a real number is expected, got {type(value).__name__}")
        with np.errstate(all="ignore"):
            v = src.astype(info.numpy).reshape(())[()]
        if src.dtype.kind in "biu" and np.dtype(info.numpy).kind in "biu" and int(v) != int(src):
            raise ValueError("out of range")
        if np.isfinite(src) and not np.isfinite(v):
            raise ValueError("out of range (it would become infinite)")
    except (TypeError, ValueError, OverflowError) as e:
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
        if isinstance(values, (str, bytes, dict)):
            raise TypeError(f"a sequence of numbers is expected, got {type(values).__name__}")
        return cls(tuple(conv(v) for v in values))
    except (TypeError, ValueError, OverflowError) as e:
        record_error(f"{api}: {e}")
        return None


def _to_int64(v) -> int:
    i = _as_int(v)
    if i is None or not -_I64 <= i < _I64:
        raise ValueError(f"int64 values expected, got {v!r}")
    return i


def _to_float32(v) -> float:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"real numbers expected, got {v!r}")
    with np.errstate(all="ignore"):
        f = np.float32(v)
    if np.isfinite(v) and not np.isfinite(f):
        raise ValueError(f"{v!r} overflows float32")
    return float(f)


def _to_bool(v) -> bool:
    if not isinstance(v, (bool, np.bool_, int, np.integer)):
        raise TypeError(f"bools expected, got {v!r}")
    return bool(v)


def aclCreateIntArray(values):
    return _create_array(aclIntArray, "aclCreateIntArray", values, _to_int64)


def aclCreateFloatArray(values):
    return _create_array(aclFloatArray, "aclCreateFloatArray", values, _to_float32)


def aclCreateBoolArray(values):
    return _create_array(aclBoolArray, "aclCreateBoolArray", values, _to_bool)


def _destroy(_obj):
    return OK


aclDestroyIntArray = aclDestroyFloatArray = aclDestroyBoolArray = _destroy


def _size(api, obj, cls):
    if obj is None:
        return 0, fail(NULLPTR, f"{api}: array is null")
    if not isinstance(obj, cls):
        return 0, fail(AclnnStatus.ACLNN_ERR_PARAM_INVALID, f"{api}: not an {cls.__name__}: {type(obj).__name__}")
    return len(obj), OK


def aclGetIntArraySize(a):
    return _size("aclGetIntArraySize", a, aclIntArray)


def aclGetFloatArraySize(a):
    return _size("aclGetFloatArraySize", a, aclFloatArray)


def aclGetBoolArraySize(a):
    return _size("aclGetBoolArraySize", a, aclBoolArray)


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
    try:
        items = list(tensors) if not isinstance(tensors, (str, bytes, dict, aclTensor)) else None
    except TypeError:
        items = None
    if items is None or not all(t is None or isinstance(t, aclTensor) for t in items):
        record_error(f"aclCreateTensorList: a sequence of aclTensor (or None) is expected, got {tensors!r}")
        return None
    return aclTensorList(items)


def aclDestroyTensorList(tensor_list):
    """Destroys the list and the tensors in it (CANN: do not destroy them again)."""
    if tensor_list is None:
        return OK
    if not isinstance(tensor_list, aclTensorList):
        return fail(AclnnStatus.ACLNN_ERR_PARAM_INVALID, f"aclDestroyTensorList: not an aclTensorList: {tensor_list!r}")
    for t in tensor_list.tensors:
        aclDestroyTensor(t)
    tensor_list.tensors = []
    return OK


def aclGetTensorListSize(tensor_list):
    return _size("aclGetTensorListSize", tensor_list, aclTensorList)


# interop -----------------------------------------------------------------------------------------

_FORMAT_BY_RANK = {2: aclFormat.ACL_FORMAT_NC, 3: aclFormat.ACL_FORMAT_NCL, 4: aclFormat.ACL_FORMAT_NCHW,
                   5: aclFormat.ACL_FORMAT_NCDHW}


def _is_bf16_name(x) -> bool:
    return str(x).rsplit(".", 1)[-1] == "bfloat16"


def _cai_dtype(cai, obj) -> np.dtype:
    """The dtype of a ``__cuda_array_interface__``: bfloat16 has no typestr of its own; CuPy (ml_dtypes)
    exports it as ``<V2`` (a plain 2-byte void is ``|V2``), some producers name it in ``descr``; the
    object's own ``dtype`` settles the rest."""
    typestr = cai["typestr"]
    descr = cai.get("descr") or ()
    named = any(_is_bf16_name(f[0]) for f in descr if isinstance(f, (tuple, list)) and f)
    if typestr == "<V2" or (np.dtype(typestr).itemsize == 2 and (named or _is_bf16_name(getattr(obj, "dtype", "")))):
        return np.dtype(ml_dtypes.bfloat16)
    dt = np.dtype(typestr)
    if dt.kind == "V":
        raise ValueError(f"typestr {typestr!r} (descr {descr!r}) is not a dtype aclnn-py knows")
    return dt


@attrs.frozen
class _Described:
    ptr: int
    shape: tuple
    strides: tuple          # bytes
    dtype: np.dtype
    is_device: bool
    keep: Any
    writable: bool
    stream: int | None = None      # CAI v3: the producer's stream to synchronise with
    device: int | None = None      # the device id the producer says the memory is on


def _describe(obj, backend_name: str) -> _Described:
    """How an array-like lays out its memory, zero copy: ``__cuda_array_interface__`` (v3 stream field
    honoured), ``__dlpack__`` (with the stream protocol, aclnn_py.dlpack), else the buffer protocol."""
    cai_error = None
    try:
        cai = getattr(obj, "__cuda_array_interface__", None)
    except Exception as e:          # e.g. a producer that cannot export this dtype through CAI: try DLPack
        cai, cai_error = None, e
    if cai is not None:
        if cai.get("mask") is not None:
            raise ValueError("masked arrays (__cuda_array_interface__ mask) are not supported")
        dt = _cai_dtype(cai, obj)
        shape = tuple(int(d) for d in cai["shape"])
        strides = cai.get("strides") or tuple(s * dt.itemsize for s in contiguous_strides(shape))
        stream = cai.get("stream") if int(cai.get("version", 0)) >= 3 else None
        if stream is not None and (isinstance(stream, bool) or not isinstance(stream, int) or stream <= 0):
            raise ValueError(f"__cuda_array_interface__ stream {stream!r} is not allowed (v3: None, 1 = legacy "
                             f"default, 2 = per-thread default, or a cudaStream_t; 0 is disallowed)")
        return _Described(int(cai["data"][0] or 0), shape, tuple(int(s) for s in strides), dt, True, obj,
                          not cai["data"][1], stream)
    if hasattr(obj, "__dlpack__"):
        from .dlpack import KDL_CPU, KDL_CUDA, KDL_CUDA_MANAGED, consume
        dev = tuple(obj.__dlpack_device__()) if hasattr(obj, "__dlpack_device__") else (KDL_CPU, 0)
        on_gpu = dev[0] in (KDL_CUDA, KDL_CUDA_MANAGED)
        # the consumer's stream: the legacy default stream on a GPU (our streams are blocking streams and
        # order with it); host memory has no stream
        stream = 1 if on_gpu and backend_name == "cuda" else None
        ptr, shape, strides, dt, (dtype_, did), writable, owner = consume(obj, stream)
        return _Described(ptr, shape, strides, dt, on_gpu, (obj, owner), writable, None, did if on_gpu else None)
    if cai_error is not None:
        raise cai_error
    arr = np.asarray(memoryview(obj)) if not isinstance(obj, np.ndarray) else obj
    return _Described(arr.ctypes.data, arr.shape, arr.strides, arr.dtype, False, (obj, arr),
                      bool(arr.flags.writeable))


def from_array(obj, format=None):
    """``(tensor, ret)``: an aclTensor viewing ``obj``'s memory without copying.

    ``obj`` may expose ``__cuda_array_interface__`` (CuPy, PyTorch CUDA), ``__dlpack__`` or the buffer
    protocol (NumPy). Its extent is registered so phase-1 bounds checks know it; the tensor keeps
    ``obj`` alive until ``aclDestroyTensor``. Host buffers can only be used by the host backend.
    The format defaults to what torch_npu sets for the rank (NC/NCL/NCHW/NCDHW, else ND).
    Read-only memory (a read-only NumPy array or memmap, ``bytes``, a read-only CUDA array interface)
    is registered as such: phase 1 refuses it as an output, memcpy/memset as a destination.
    """
    from .backends import DeviceError, get_backend
    from .acl._state import state
    backend = get_backend()
    try:
        d = _describe(obj, backend.name)
    except Exception as e:
        return None, fail(AclnnStatus.ACLNN_ERR_PARAM_INVALID, f"from_array: cannot view {type(obj).__name__}: {e}")
    ptr, shape, bstrides, dt, is_device, keep, writable = d.ptr, d.shape, d.strides, d.dtype, d.is_device, d.keep, \
        d.writable
    if format is not None:
        try:
            format = aclFormat(_as_int(format))
        except ValueError:
            return None, fail(AclnnStatus.ACLNN_ERR_PARAM_INVALID, f"from_array: unknown format {format!r}")
    acl_dt = from_numpy_dtype(dt)
    if acl_dt is None:
        return None, fail(AclnnStatus.ACLNN_ERR_PARAM_INVALID, f"from_array: unsupported dtype {dt}")
    if not is_device and backend.name != "host":
        return None, fail(AclnnStatus.ACLNN_ERR_PARAM_INVALID,
                          "from_array: a host buffer cannot be used by the CUDA backend; copy it with acl.rt.memcpy")
    if is_device and backend.name == "cuda" and ptr:
        cur = state.current_device()
        try:
            where = d.device if d.device is not None else backend.pointer_device(ptr)
        except DeviceError as e:
            return None, fail(AclnnStatus.ACLNN_ERR_RUNTIME_ERROR, f"from_array: {e}")
        if where is not None and cur is not None and where != cur:
            return None, fail(AclnnStatus.ACLNN_ERR_PARAM_INVALID,
                              f"from_array: the array is on device {where} but the current device is {cur}; "
                              f"call acl.rt.set_device({where}) first (or copy it)")
    if d.stream is not None and hasattr(backend, "synchronize_external_stream"):
        try:              # CAI v3: the producer's work on the array must be done before ours can start
            backend.synchronize_external_stream(d.stream)
        except DeviceError as e:
            return None, fail(AclnnStatus.ACLNN_ERR_RUNTIME_ERROR,
                              f"from_array: synchronising with the producer's stream {d.stream:#x} failed: {e}")
    if any(s % dt.itemsize for s in bstrides):
        return None, fail(AclnnStatus.ACLNN_ERR_PARAM_INVALID, "from_array: strides are not multiples of the itemsize")
    strides = tuple(s // dt.itemsize for s in bstrides)
    numel = math.prod(shape)
    lo = sum((d - 1) * s for d, s in zip(shape, strides) if s < 0) if numel else 0
    hi = sum((d - 1) * s for d, s in zip(shape, strides) if s > 0) if numel else 0
    base = ptr + lo * dt.itemsize
    nbytes = (hi - lo + 1) * dt.itemsize if numel else dt.itemsize
    fmt = aclFormat(format) if format is not None else _FORMAT_BY_RANK.get(len(shape), aclFormat.ACL_FORMAT_ND)
    dev = state.current_device() if is_device else 0  # the host backend's "device" memory is host memory
    registered = None
    if base and registry.find(base, nbytes) is None:   # memory the runtime already knows needs no entry
        registry.add(Allocation(base, nbytes, dev, "external", owner=keep, writable=writable))
        registered = base
    t = aclTensor(tuple(shape), acl_dt, strides, -lo, fmt, (hi - lo + 1 if numel else 0,), base or None,
                  owner=(registered, keep))
    return t, OK
