"""The face's machinery: statuses, the ``@api`` guard, handles, descriptors, tensors made from
descriptors, and ``Call`` — one cuDNN call as a list of aclnn-py plans, all planned before any runs.

A cuDNN call is validated against cuDNN's own rules first (``bad``/``unsupported`` raise a
``CudnnFail`` that ``@api`` turns into the status and a message naming the argument); then every
aclnn-py op it needs is planned (phase 1); only when all plans exist is anything enqueued (phase 2,
on the handle's stream). So a failed call writes nothing. Results that must be blended
(``dst = alpha·result + beta·dst`` with (alpha, beta) != (1, 0)) or that cannot be written in place
are computed into the handle's scratch and blended by ``aclnnpyAxpby``.
"""
from __future__ import annotations

import csv
import functools
import inspect
import math
import numbers
import threading

from .. import acl
from .._paths import status_codes_dir
from ..dtypes import aclDataType, aclFormat
from ..errors import STRICT, get_recent_err_msg, record_error
from ..opdef import REGISTRY
from ..status import AclnnStatus
from ..tensor import aclTensor
from ._enums import cudnnDataType_t, cudnnStatus_t

SUCCESS = cudnnStatus_t.CUDNN_STATUS_SUCCESS
BAD_PARAM = cudnnStatus_t.CUDNN_STATUS_BAD_PARAM
NOT_SUPPORTED = cudnnStatus_t.CUDNN_STATUS_NOT_SUPPORTED
INTERNAL_ERROR = cudnnStatus_t.CUDNN_STATUS_INTERNAL_ERROR
ALLOC_FAILED = cudnnStatus_t.CUDNN_STATUS_ALLOC_FAILED
EXECUTION_FAILED = cudnnStatus_t.CUDNN_STATUS_EXECUTION_FAILED

FACE: dict[str, object] = {}          # every public function of the face, by name (the package exports it)


def _load_mapping() -> dict[int, cudnnStatus_t]:
    with open(status_codes_dir() / "cudnn_from_aclnn.csv", newline="") as f:
        rows = csv.DictReader(ln for ln in f if not ln.startswith("#"))
        return {int(AclnnStatus[r["aclnn"]]): cudnnStatus_t[r["cudnn"]] for r in rows}


FROM_ACLNN = _load_mapping()


def from_aclnn(ret) -> cudnnStatus_t:
    """The cuDNN status of an aclnn-py status (status_codes/cudnn_from_aclnn.csv; 561xxx: INTERNAL_ERROR)."""
    return FROM_ACLNN.get(int(ret), INTERNAL_ERROR)


class CudnnFail(Exception):
    def __init__(self, status, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def bad(message: str):
    raise CudnnFail(BAD_PARAM, message)


def unsupported(message: str):
    raise CudnnFail(NOT_SUPPORTED, message)


def api(*defaults):
    """Make ``fn`` a public face function: C argument names and order (a wrong count or an unknown
    keyword is BAD_PARAM), ``CudnnFail`` -> ``(*defaults, status)`` with the message recorded for
    ``acl.get_recent_err_msg()``, any other exception -> INTERNAL_ERROR (raised under
    ACLNN_PY_STRICT=1, as every API of the package). A function with output values returns them
    first and the status last; one without returns just the status."""
    def wrap(fn):
        name = fn.__name__
        sig = inspect.signature(fn)

        def failed(status, message):
            record_error(f"{name}: {message}")
            return (*defaults, status) if defaults else status

        @functools.wraps(fn)
        def inner(*args, **kwargs):
            try:
                sig.bind(*args, **kwargs)
            except TypeError as e:
                return failed(BAD_PARAM, f"bad arguments ({e}); the signature is {name}{sig}")
            try:
                return fn(*args, **kwargs)
            except CudnnFail as e:
                return failed(e.status, e.message)
            except Exception as e:
                if STRICT:
                    raise
                return failed(INTERNAL_ERROR, f"internal error ({type(e).__name__}: {e}); please report it")
        FACE[name] = inner
        return inner
    return wrap


# argument checks ---------------------------------------------------------------------------------

def number(v, name: str) -> float:
    """A host scaling factor (alpha, beta, a fill value): a real Python/NumPy number; None is NULL."""
    if v is None:
        bad(f"{name} is NULL")
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        bad(f"{name} must be a real number (a host scalar), got {type(v).__name__}")
    return float(v)


def finite_double(v, name: str) -> float:
    x = number(v, name)
    if math.isnan(x):
        bad(f"{name} is NaN")
    return x


def c_int(v, name: str, lo: int = -(1 << 31), hi: int = (1 << 31) - 1) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        bad(f"{name} must be an int, got {type(v).__name__}")
    v = int(v)
    if not lo <= v <= hi:
        bad(f"{name} = {v} is outside [{lo}, {hi}]")
    return v


def enum_arg(v, enum_type, name: str):
    """A C enum argument: an int that is one of ``enum_type``'s values, else BAD_PARAM."""
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        bad(f"{name} must be a {enum_type.__name__} value, got {v!r}")
    try:
        return enum_type(int(v))
    except ValueError:
        bad(f"{name} = {int(v)} is not a valid {enum_type.__name__}")


def pointer(v, name: str, required: bool = True) -> int | None:
    """A device pointer: an int address, or None (NULL)."""
    if v is None or (isinstance(v, numbers.Integral) and not isinstance(v, bool) and int(v) == 0):
        if required:
            bad(f"{name} is NULL")
        return None
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 0 < int(v) < (1 << 64):
        bad(f"{name} must be a device address (int) or None, got {v!r}")
    return int(v)


def size_arg(v, name: str) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 0 <= int(v) < (1 << 64):
        bad(f"{name} must be a size_t, got {v!r}")
    return int(v)


# handles ------------------------------------------------------------------------------------------

_ALIGN = 256


def _up(n: int) -> int:
    return (n + _ALIGN - 1) // _ALIGN * _ALIGN


class cudnnContext:
    """What ``cudnnHandle_t`` points to: the stream and the scratch memory of the face's calls.

    Scratch is per stream (work queued on one stream may still use it when the handle moves to
    another) and grows on demand; a buffer it replaces is released with ``acl.rt.free``, which waits
    for the work queued on it (stream-ordered free)."""

    def __init__(self):
        self.stream = None
        self.live = True
        self._scratch: dict = {}          # (stream, kind) -> (address, size)
        self._lock = threading.Lock()

    def scratch(self, kind: str, nbytes: int) -> int | None:
        if nbytes == 0:
            return None
        key = (self.stream, kind)
        with self._lock:
            addr, size = self._scratch.get(key, (None, 0))
            if size >= nbytes:
                return addr
            new, ret = acl.rt.malloc(_up(max(nbytes, 2 * size)), 0)
            if ret != 0 or not new:
                raise CudnnFail(ALLOC_FAILED, f"could not allocate {nbytes} bytes of scratch memory "
                                              f"(acl.rt.malloc returned {ret})")
            if addr:
                acl.rt.free(addr)
            self._scratch[key] = (new, _up(max(nbytes, 2 * size)))
            return new

    def release(self) -> None:
        with self._lock:
            for addr, _ in self._scratch.values():
                acl.rt.free(addr)
            self._scratch.clear()
            self.live = False

    def __repr__(self):
        return f"<cudnnHandle_t {'live' if self.live else 'destroyed'} at 0x{id(self):x}>"


def handle_of(h, name: str = "handle") -> cudnnContext:
    if h is None:
        bad(f"{name} is NULL")
    if not isinstance(h, cudnnContext):
        bad(f"{name} is not a cudnnHandle_t (got {type(h).__name__})")
    if not h.live:
        bad(f"{name} was destroyed")
    return h


# descriptors --------------------------------------------------------------------------------------

class Descriptor:
    """Base of every descriptor object; ``kind`` is the C typedef it stands for."""
    kind = "descriptor"

    def __init__(self):
        self.live = True
        self.is_set = False

    def __repr__(self):
        return f"<{self.kind} {'set' if self.is_set else 'unset'}{'' if self.live else ' destroyed'}>"


def desc_of(d, cls, name: str, *, required: bool = True, must_be_set: bool = True):
    """``d`` as a live descriptor of class ``cls``; None is NULL (BAD_PARAM unless not required)."""
    if d is None:
        if required:
            bad(f"{name} is NULL")
        return None
    if not isinstance(d, cls):
        bad(f"{name} is not a {cls.kind} (got {type(d).__name__})")
    if not d.live:
        bad(f"{name} ({cls.kind}) was destroyed")
    if must_be_set and not d.is_set:
        bad(f"{name} ({cls.kind}) was created but never set")
    return d


def destroy(d, cls, name: str):
    if d is None:
        return SUCCESS                    # cuDNN: destroying NULL is a no-op
    desc_of(d, cls, name, must_be_set=False)
    d.live = False
    return SUCCESS


ACL_OF = {cudnnDataType_t.CUDNN_DATA_FLOAT: aclDataType.ACL_FLOAT,
          cudnnDataType_t.CUDNN_DATA_DOUBLE: aclDataType.ACL_DOUBLE,
          cudnnDataType_t.CUDNN_DATA_HALF: aclDataType.ACL_FLOAT16,
          cudnnDataType_t.CUDNN_DATA_BFLOAT16: aclDataType.ACL_BF16,
          cudnnDataType_t.CUDNN_DATA_INT8: aclDataType.ACL_INT8,
          cudnnDataType_t.CUDNN_DATA_UINT8: aclDataType.ACL_UINT8,
          cudnnDataType_t.CUDNN_DATA_INT32: aclDataType.ACL_INT32,
          cudnnDataType_t.CUDNN_DATA_INT64: aclDataType.ACL_INT64,
          cudnnDataType_t.CUDNN_DATA_BOOLEAN: aclDataType.ACL_BOOL}
ITEMSIZE = {cudnnDataType_t.CUDNN_DATA_FLOAT: 4, cudnnDataType_t.CUDNN_DATA_DOUBLE: 8,
            cudnnDataType_t.CUDNN_DATA_HALF: 2, cudnnDataType_t.CUDNN_DATA_BFLOAT16: 2,
            cudnnDataType_t.CUDNN_DATA_INT8: 1, cudnnDataType_t.CUDNN_DATA_UINT8: 1,
            cudnnDataType_t.CUDNN_DATA_INT32: 4, cudnnDataType_t.CUDNN_DATA_INT64: 8,
            cudnnDataType_t.CUDNN_DATA_BOOLEAN: 1, cudnnDataType_t.CUDNN_DATA_INT8x4: 4,
            cudnnDataType_t.CUDNN_DATA_UINT8x4: 4, cudnnDataType_t.CUDNN_DATA_INT8x32: 32,
            cudnnDataType_t.CUDNN_DATA_FP8_E4M3: 1, cudnnDataType_t.CUDNN_DATA_FP8_E5M2: 1,
            cudnnDataType_t.CUDNN_DATA_FAST_FLOAT_FOR_FP8: 1}
FLOAT_TYPES = (cudnnDataType_t.CUDNN_DATA_FLOAT, cudnnDataType_t.CUDNN_DATA_HALF,
               cudnnDataType_t.CUDNN_DATA_BFLOAT16, cudnnDataType_t.CUDNN_DATA_DOUBLE)


class TensorDesc(Descriptor):
    kind = "cudnnTensorDescriptor_t"

    def __init__(self):
        super().__init__()
        self.dtype = cudnnDataType_t.CUDNN_DATA_FLOAT
        self.dims: tuple[int, ...] = ()
        self.strides: tuple[int, ...] = ()

    @property
    def nb_dims(self) -> int:
        return len(self.dims)

    @property
    def extent(self) -> int:
        """Elements from the first to one past the last element the descriptor reaches."""
        return 1 + sum((d - 1) * s for d, s in zip(self.dims, self.strides))

    @property
    def numel(self) -> int:
        return math.prod(self.dims)

    def __repr__(self):
        if not self.is_set:
            return super().__repr__()
        return f"<cudnnTensorDescriptor_t {self.dtype.name[11:]} dims {self.dims} strides {self.strides}>"


def dense_like(d: TensorDesc) -> tuple[int, ...]:
    """Dense strides for ``d``'s dims in ``d``'s memory order (its dims sorted by stride, outer first)."""
    order = sorted(range(d.nb_dims), key=lambda k: (-d.strides[k], k))
    st, acc = [0] * d.nb_dims, 1
    for k in reversed(order):
        st[k] = acc
        acc *= d.dims[k]
    return tuple(st)


def packed_strides(dims) -> tuple[int, ...]:
    st, acc = [], 1
    for d in reversed(dims):
        st.append(acc)
        acc *= d
    return tuple(reversed(st))


def _acl_format(rank: int):
    return {4: aclFormat.ACL_FORMAT_NCHW, 5: aclFormat.ACL_FORMAT_NCDHW}.get(rank, aclFormat.ACL_FORMAT_ND)


def tensor(desc: TensorDesc, addr: int | None, dims=None, strides=None) -> aclTensor:
    """An aclTensor over ``addr`` with the descriptor's dtype and (or the given) dims and strides, in
    the descriptor's own order (NCHW order: channel axis 1; the memory order follows the strides).
    ``addr`` None gives a description for a workspace query."""
    dims = desc.dims if dims is None else tuple(dims)
    strides = desc.strides if strides is None else tuple(strides)
    ext = 1 + sum((d - 1) * s for d, s in zip(dims, strides)) if all(dims) else 0
    return aclTensor(view_dims=dims, data_type=ACL_OF[desc.dtype], strides=strides, offset=0,
                     format=_acl_format(len(dims)), storage_dims=(ext,), addr=addr)


def bytes_tensor(addr: int | None, n: int) -> aclTensor:
    """A 1-D UINT8 tensor of ``n`` bytes at ``addr`` (reserve spaces, generator states)."""
    d = TensorDesc()
    d.dtype, d.dims, d.strides = cudnnDataType_t.CUDNN_DATA_UINT8, (n,), (1,)
    return tensor(d, addr)


def int_array(a, nb: int, name: str) -> list:
    """The first ``nb`` values of a C ``const int[]`` argument (a Python sequence; None is NULL)."""
    if a is None:
        bad(f"{name} is NULL")
    try:
        vals = list(a)
    except TypeError:
        bad(f"{name} must be a sequence of ints, got {type(a).__name__}")
    if len(vals) < nb:
        bad(f"{name} holds {len(vals)} values, nbDims is {nb}")
    return vals[:nb]


def flat_strides(dims, strides, first: int):
    """Dims ``first:`` merged into one: (size, stride), or None when their strides do not nest."""
    size = 1
    pairs = [(d, s) for d, s in zip(dims[first:], strides[first:]) if d != 1]
    if not pairs:
        return math.prod(dims[first:]), 1
    stride = pairs[-1][1]
    expect = stride
    for d, s in reversed(pairs):
        if s != expect:
            return None
        expect = s * d
        size *= d
    return size, stride


# one call = a list of plans ------------------------------------------------------------------------

class Call:
    """The aclnn-py ops of one cuDNN call. ``op(...)`` plans one (phase 1) at once; ``run()``
    enqueues them all in order on the handle's stream. If a plan fails, ``op`` raises a
    ``CudnnFail`` (mapped status, the op's message) and the plans made so far are dropped."""

    def __init__(self, handle: cudnnContext, workspace: int | None = None, workspace_size: int = 0):
        self.handle = handle
        self.steps: list = []
        self.user_ws, self.user_ws_size = workspace, workspace_size
        self.required_ws = 0              # what the size query promised the caller's workspace must hold
        self._n_temps = 0

    def temp(self, dtype, dims, like: TensorDesc | None = None) -> tuple[TensorDesc, int]:
        """A dense scratch buffer of ``dims`` x ``dtype`` — packed, or in the memory order of ``like``
        (so an op writes it exactly as it would write the caller's tensor): (its descriptor, its
        address). Each temp of a call has its own slot in the handle's scratch, reused by the calls
        that follow on the stream."""
        d = TensorDesc()
        d.dtype, d.dims, d.is_set = dtype, tuple(dims), True
        d.strides = packed_strides(d.dims) if like is None else dense_like(like)
        addr = self.handle.scratch(f"temp{self._n_temps}", max(1, d.numel) * ITEMSIZE[dtype])
        self._n_temps += 1
        return d, addr

    def op(*call_and_name, **args):
        self, name = call_and_name            # (positional only: an op may have an argument named `self`)
        reg = REGISTRY[name]
        # positional, in the op's order: phase 1's plan-cache fast path (a training loop re-plans nothing)
        ws, ex, ret = reg.get_workspace_size(*[args.pop(p.name, None) for p in reg.opdef.params])
        assert not args, f"aclnn{name} has no argument(s) {sorted(args)}"      # a bug in the face, not input
        if ret != 0:
            self.steps.clear()            # plans never run are simply dropped (not repeatable)
            raise CudnnFail(from_aclnn(ret), f"aclnn{name} refused the arguments: {_last_message(ret)}")
        self.steps.append((reg, ex))
        return ws

    def run(self) -> cudnnStatus_t:
        sizes = [_up(ex.workspace_size) for _, ex in self.steps]
        total = sum(sizes)
        if self.user_ws and self.user_ws_size < self.required_ws:
            self.steps.clear()
            bad(f"workSpaceSizeInBytes = {self.user_ws_size} is smaller than the {self.required_ws} bytes the "
                f"workspace size query returns for these arguments")
        if total and self.user_ws and self.user_ws_size >= total:
            base = self.user_ws               # the caller's workspace is really used
        else:
            base = self.handle.scratch("work", total)
        off = 0
        for (reg, ex), n in zip(self.steps, sizes):
            ws = None if not ex.workspace_size else base + off
            ret = reg.run(ws, ex.workspace_size, ex, self.handle.stream)
            off += n
            if ret != 0:           # a buffer freed since phase 1, a dead stream: the device side failed
                self.steps.clear()
                raise CudnnFail(EXECUTION_FAILED, f"enqueuing aclnn{reg.opdef.name} failed: {_last_message(ret)}")
        self.steps.clear()
        return SUCCESS

    def blend(self, result: aclTensor, alpha: float, beta: float, dst: aclTensor) -> None:
        """dst = alpha·result + beta·dst (beta == 0: dst is not used)."""
        self.op("pyAxpby", self=result, alpha=alpha, beta=beta, out=dst)


def _last_message(ret) -> str:
    msg = get_recent_err_msg()
    return msg.splitlines()[0] if msg else f"status {int(ret)}"
