"""``aclnn_py.hccl``: HCCL-style collectives (CANN's names and ``HcclResult`` statuses) on real engines.

Values first, status last; device pointers and communicators are ints; nothing raises for a bad
argument (the status is returned and ``acl.get_recent_err_msg()`` says why). Collectives are
**stream-ordered**: ``HcclAllReduce(..., comm, stream)`` is enqueued on ``stream`` after the work
queued before it and before the work queued after it, and returns at once; failures found while it
runs are reported by the stream's next synchronize and by ``HcclGetCommAsyncError``.

Engines (chosen by the backend; ``pip install 'aclnn-py[distributed]'``):

* host emulator: **MPI** via mpi4py + the MPICH wheel (``mpiexec -n 4 python prog.py``; ranks are
  processes on one or many machines) — see ``_mpi.py`` for the per-call signature check, dead-peer
  detection and ``HCCL_EXEC_TIMEOUT``;
* CUDA: **NCCL** via CuPy's binding (``_nccl.py``).

Typical use (every rank)::

    root_info, ret = hccl.HcclGetRootInfo() if rank == 0 else (None, 0)
    root_info = MPI.COMM_WORLD.bcast(root_info, root=0)          # or a file, or any channel
    comm, ret = hccl.HcclCommInitRootInfo(n_ranks, root_info, rank)
    ret = hccl.HcclAllReduce(send, recv, count, hccl.HCCL_DATA_TYPE_FP32, hccl.HCCL_REDUCE_SUM, comm, stream)
    ret = acl.rt.synchronize_stream(stream)

On MPI, ``HcclCommInitRootInfo`` is collective over the whole MPI job (like ``MPI_Comm_split``):
every process calls it at the same time, each with the root info of the communicator it joins.
"""
from __future__ import annotations

import functools
import inspect
import re
import threading

import numpy as np

from ..acl._state import resolve_stream
from ..acl.memory import registry
from ..errors import fail, guarded
from ..status import AclError
from ._types import (DTYPE_SIZE, ENGINE_MPI, ENGINE_NAMES, ENGINE_NCCL, HCCL_ROOT_INFO_BYTES, HcclDataType,
                     HcclReduceOp, HcclResult, pack_root_info, unpack_root_info)

__all__ = ["HcclResult", "HcclDataType", "HcclReduceOp", "HCCL_ROOT_INFO_BYTES",
           "HcclGetRootInfo", "HcclCommInitRootInfo", "HcclCommDestroy", "HcclGetRankSize", "HcclGetRankId",
           "HcclAllReduce", "HcclReduce", "HcclAllGather", "HcclBroadcast", "HcclReduceScatter", "HcclBarrier",
           "HcclGetCommAsyncError", "HcclGetErrorString", "engine_name"]

globals().update(HcclResult.__members__)
globals().update(HcclDataType.__members__)
globals().update(HcclReduceOp.__members__)
__all__ += list(HcclResult.__members__) + list(HcclDataType.__members__) + list(HcclReduceOp.__members__)

R = HcclResult
E = R.HCCL_E_INTERNAL

_comms: dict[int, tuple[object, object]] = {}      # handle -> (engine, engine communicator)
_lock = threading.Lock()
_next = [0x5000]
_engines: dict[str, object] = {}


def _engine():
    """(engine id, engine) for the process's backend: MPI on the host emulator, NCCL on CUDA."""
    from ..backends import get_backend
    name = get_backend().name
    eng = _engines.get(name)
    if eng is None:
        if name == "cuda":
            from ._nccl import NcclEngine
            eng = NcclEngine()
        else:
            from ._mpi import MpiEngine
            eng = MpiEngine()
        _engines[name] = eng
    return (ENGINE_NCCL if name == "cuda" else ENGINE_MPI), eng


def engine_name() -> str:
    """The engine collectives use in this process: 'MPI (mpi4py)' or 'NCCL (CuPy)'."""
    return ENGINE_NAMES[_engine()[0]]


def _device(api: str):
    from ..acl._state import require_device
    _, st = require_device(api)
    return fail(R.HCCL_E_RUNTIME, f"{api}: set a device first (acl.init, acl.rt.set_device)") if st else R.HCCL_SUCCESS


def _int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def _api(name: str, *defaults):
    """The public face of an HCCL call: ``guarded`` (a bug becomes a status), CANN's parameter names
    accepted as keywords too (``sendBuf=`` for ``send_buf=``), NumPy integers taken as ints (a count
    from ``np.prod``), and a call with missing or unknown arguments is HCCL_E_PARA naming them."""
    def wrap(fn):
        sig = inspect.signature(fn)
        body = guarded(name, E, *defaults)(fn)

        nparams = len(sig.parameters)

        @functools.wraps(fn)
        def inner(*args, **kwargs):
            if kwargs or len(args) != nparams:     # (binding costs microseconds: only off the plain path)
                kwargs = {k if k in sig.parameters else _snake(k): v for k, v in kwargs.items()}
                try:
                    args = sig.bind(*args, **kwargs).args
                except TypeError as e:
                    st = fail(R.HCCL_E_PARA, f"{name}{sig}: {e}")
                    return (*defaults, st) if defaults else st
            return body(*[int(v) if isinstance(v, np.integer) else v for v in args])
        return inner
    return wrap


@_api("HcclGetRootInfo", None)
def HcclGetRootInfo():
    """``root_info, ret``: HCCL_ROOT_INFO_BYTES (4108) bytes that every rank of the new communicator
    passes to ``HcclCommInitRootInfo``; hand them over by any means (mpi4py's bcast, a file)."""
    st = _device("HcclGetRootInfo")
    if st:
        return None, st
    eid, eng = _engine()
    payload = eng.root_payload()
    if isinstance(payload, tuple):
        return None, fail(payload[0], f"HcclGetRootInfo: {payload[1]}")
    return pack_root_info(eid, payload), R.HCCL_SUCCESS


@_api("HcclCommInitRootInfo", None)
def HcclCommInitRootInfo(n_ranks, root_info, rank):
    """``comm, ret``: join the communicator of ``n_ranks`` ranks described by ``root_info`` as ``rank``.
    Blocks until every rank has joined (``HCCL_CONNECT_TIMEOUT`` seconds at most on MPI)."""
    api = "HcclCommInitRootInfo"
    if not _int(n_ranks) or n_ranks < 1:
        return None, fail(R.HCCL_E_PARA, f"{api}: n_ranks must be a positive int, got {n_ranks!r}")
    if not _int(rank) or not 0 <= rank < n_ranks:
        return None, fail(R.HCCL_E_PARA, f"{api}: rank must be an int in [0, {n_ranks}), got {rank!r}")
    parsed = unpack_root_info(root_info)
    if isinstance(parsed, str):
        return None, fail(R.HCCL_E_PARA, f"{api}: {parsed}")
    st = _device(api)
    if st:
        return None, st
    engine, uid, payload = parsed
    eid, eng = _engine()
    if engine != eid:
        return None, fail(R.HCCL_E_PARA, f"{api}: root_info is for the {ENGINE_NAMES[engine]} engine, this "
                                         f"process uses {ENGINE_NAMES[eid]}")
    c, st, msg = eng.init_comm(n_ranks, uid, payload, rank)
    if st:
        return None, fail(st, f"{api}: {msg}")
    with _lock:
        h = _next[0]
        _next[0] += 1
        _comms[h] = (eng, c)
    return h, R.HCCL_SUCCESS


def _comm(api: str, comm):
    entry = _comms.get(comm) if _int(comm) else None
    if entry is None:
        return None, None, fail(R.HCCL_E_PARA, f"{api}: unknown or destroyed communicator {comm!r}")
    return entry[0], entry[1], R.HCCL_SUCCESS


@_api("HcclCommDestroy")
def HcclCommDestroy(comm):
    """``ret``: waits for the collectives queued on ``comm``, then releases it."""
    eng, c, st = _comm("HcclCommDestroy", comm)
    if st:
        return st
    with _lock:
        _comms.pop(comm, None)
    eng.destroy(c)
    return R.HCCL_SUCCESS


@_api("HcclGetRankSize", None)
def HcclGetRankSize(comm):
    """``rank_size, ret``."""
    _, c, st = _comm("HcclGetRankSize", comm)
    return (None, st) if st else (c.size, R.HCCL_SUCCESS)


@_api("HcclGetRankId", None)
def HcclGetRankId(comm):
    """``rank, ret``."""
    _, c, st = _comm("HcclGetRankId", comm)
    return (None, st) if st else (c.rank, R.HCCL_SUCCESS)


@_api("HcclGetCommAsyncError", None)
def HcclGetCommAsyncError(comm):
    """``async_error, ret``: the HcclResult of the latest collective on ``comm`` that failed while it
    ran (a peer lost, a timeout, mismatched arguments across ranks), HCCL_SUCCESS if none."""
    eng, c, st = _comm("HcclGetCommAsyncError", comm)
    return (None, st) if st else (HcclResult(eng.async_error(c)), R.HCCL_SUCCESS)


_STRINGS = {R.HCCL_SUCCESS: "success", R.HCCL_E_PARA: "parameter error", R.HCCL_E_PTR: "empty pointer",
            R.HCCL_E_MEMORY: "memory error", R.HCCL_E_INTERNAL: "internal error",
            R.HCCL_E_NOT_SUPPORT: "not support feature", R.HCCL_E_NOT_FOUND: "not found specific resource",
            R.HCCL_E_UNAVAIL: "resource unavailable", R.HCCL_E_SYSCALL: "call system interface error",
            R.HCCL_E_TIMEOUT: "timeout", R.HCCL_E_OPEN_FILE_FAILURE: "open file fail",
            R.HCCL_E_TCP_CONNECT: "tcp connect fail", R.HCCL_E_ROCE_CONNECT: "roce connect fail",
            R.HCCL_E_TCP_TRANSFER: "tcp transfer fail", R.HCCL_E_ROCE_TRANSFER: "roce transfer fail",
            R.HCCL_E_RUNTIME: "call runtime api fail", R.HCCL_E_DRV: "call driver api fail",
            R.HCCL_E_PROFILING: "call profiling api fail", R.HCCL_E_CCE: "call cce api fail",
            R.HCCL_E_NETWORK: "call network api fail", R.HCCL_E_AGAIN: "try again",
            R.HCCL_E_REMOTE: "error cqe", R.HCCL_E_SUSPENDING: "error communicator suspending"}


def HcclGetErrorString(code) -> str:
    """HCCL's one-line description of an HcclResult."""
    try:
        return _STRINGS[HcclResult(code)]
    except (ValueError, TypeError):
        return "unknown error"


# collectives ---------------------------------------------------------------------------------------
_ABSENT = object()   # the collective has no such argument (None from the user is a bad value)


def _collective(api: str, comm, stream, *, send=None, recv=None, count=0, dtype=None, op=_ABSENT, root=_ABSENT,
                send_n=None, recv_n=None):
    """Validate, then enqueue ``api``. ``send_n``/``recv_n``: elements each buffer holds (in units of count)."""
    eng, c, st = _comm(api, comm)
    if st:
        return st
    s, st = resolve_stream(api, stream)
    if st:
        # the peers must still hear of this call, or every later one pairs with the wrong partner: the
        # notice goes where this communicator's previous collective went (its order is kept)
        notice = getattr(c, "last_stream", None) or resolve_stream(api, None)[0]
        if notice is not None and c.broken is None:
            eng.enqueue(c, notice, api, {}, valid=False)
        return fail(R.HCCL_E_PARA if st == AclError.ACL_ERROR_RT_INVALID_HANDLE else R.HCCL_E_RUNTIME,
                    f"{api}: stream {stream!r} is not usable (see the message above)")
    if c.broken is not None:
        return fail(c.broken.status, f"{api}: the communicator is broken by an earlier failure ({c.broken})")
    args, st, msg = _check_args(api, eng, c, send, recv, count, dtype, op, root, send_n, recv_n)
    if st:
        eng.enqueue(c, s, api, {}, valid=False)     # tell the peers at once: they fail instead of waiting
        return fail(st, f"{api}: {msg}")
    ok, err = eng.enqueue(c, s, api, args, valid=True)
    if not ok:
        return fail(err[0], err[1])
    return R.HCCL_SUCCESS


def _check_args(api, eng, c, send, recv, count, dtype, op, root, send_n, recv_n):
    """(args dict, 0, '') or (None, status, message)."""
    if api == "HcclBarrier":
        return {}, R.HCCL_SUCCESS, ""
    if not _int(count) or count < 0 or count >= 1 << 62:
        return None, R.HCCL_E_PARA, f"count must be a non-negative int, got {count!r}"
    if not _int(dtype) or dtype not in HcclDataType._value2member_map_:
        return None, R.HCCL_E_PARA, f"data_type {dtype!r} is not an HcclDataType"
    if dtype not in DTYPE_SIZE:
        return None, R.HCCL_E_NOT_SUPPORT, f"{HcclDataType(dtype).name} is not supported"
    why = eng.unsupported(dtype)
    if why:
        return None, R.HCCL_E_NOT_SUPPORT, why
    if op is not _ABSENT and (not _int(op) or op not in HcclReduceOp._value2member_map_):
        return None, R.HCCL_E_PARA, f"op {op!r} is not an HcclReduceOp (SUM 0, PROD 1, MAX 2, MIN 3)"
    if root is not _ABSENT and (not _int(root) or not 0 <= root < c.size):
        return None, R.HCCL_E_PARA, f"root must be a rank in [0, {c.size}), got {root!r}"
    size = DTYPE_SIZE[dtype]
    args = {"send": send, "recv": recv, "count": count, "dtype": int(dtype),
            "op": -1 if op is _ABSENT else int(op), "root": -1 if root is _ABSENT else int(root)}
    if count == 0:
        return args, R.HCCL_SUCCESS, ""
    if send_n is None:       # HcclBroadcast: one buffer, written on every rank but the root
        bufs = [("buf", send, count * size, True)]
    else:
        bufs = [("send_buf", send, send_n * count * size, False)]
        if recv_n is not None:
            bufs.append(("recv_buf", recv, recv_n * count * size, True))
    for name, p, n, write in bufs:
        if p is None or p == 0:
            return None, R.HCCL_E_PTR, f"{name} is a null pointer"
        if not _int(p):
            return None, R.HCCL_E_PARA, f"{name} must be a device address (int), got {type(p).__name__}"
        a = registry.find(p, n)
        if a is None:
            return None, R.HCCL_E_PARA, (f"{name} [0x{p:x}, +{n}) is not inside one live allocation "
                                         f"(acl.rt.malloc) of the current device")
        if write and not a.writable:
            return None, R.HCCL_E_PARA, f"{name} [0x{p:x}, +{n}) is read-only memory"
    if recv_n is not None and send != recv:
        s0, s1 = send, send + send_n * count * size
        r0, r1 = recv, recv + recv_n * count * size
        in_place_gather = api == "HcclAllGather" and send == recv + c.rank * count * size
        if s0 < r1 and r0 < s1 and not in_place_gather:
            return None, R.HCCL_E_PARA, ("send_buf and recv_buf overlap partially (only send_buf == recv_buf, "
                                         "or for HcclAllGather send_buf == recv_buf + rank·count, is in place)")
    if api == "HcclReduceScatter" and send == recv:
        return None, R.HCCL_E_PARA, "HcclReduceScatter cannot run in place (send_buf == recv_buf)"
    return args, R.HCCL_SUCCESS, ""


@_api("HcclAllReduce")
def HcclAllReduce(send_buf, recv_buf, count, data_type, op, comm, stream):
    """``ret``: recv_buf[i] = op over ranks of send_buf[i], i < count (send_buf == recv_buf: in place)."""
    return _collective("HcclAllReduce", comm, stream, send=send_buf, recv=recv_buf, count=count, dtype=data_type,
                       op=op, send_n=1, recv_n=1)


@_api("HcclReduce")
def HcclReduce(send_buf, recv_buf, count, data_type, op, root, comm, stream):
    """``ret``: recv_buf on ``root`` = op over ranks of send_buf (recv_buf is not touched elsewhere)."""
    _, c, st = _comm("HcclReduce", comm)
    is_root = not st and _int(root) and c.rank == root
    return _collective("HcclReduce", comm, stream, send=send_buf, recv=recv_buf, count=count, dtype=data_type,
                       op=op, root=root, send_n=1, recv_n=1 if is_root else None)


@_api("HcclAllGather")
def HcclAllGather(send_buf, recv_buf, send_count, data_type, comm, stream):
    """``ret``: recv_buf (send_count × rank_size elements) = the ranks' send_buf in rank order."""
    _, c, st = _comm("HcclAllGather", comm)
    return _collective("HcclAllGather", comm, stream, send=send_buf, recv=recv_buf, count=send_count,
                       dtype=data_type, send_n=1, recv_n=c.size if not st else 1)


@_api("HcclBroadcast")
def HcclBroadcast(buf, count, data_type, root, comm, stream):
    """``ret``: buf on every rank = buf on ``root``."""
    return _collective("HcclBroadcast", comm, stream, send=buf, count=count, dtype=data_type, root=root)


@_api("HcclReduceScatter")
def HcclReduceScatter(send_buf, recv_buf, recv_count, data_type, op, comm, stream):
    """``ret``: rank r's recv_buf = op over ranks of send_buf[r·recv_count : (r+1)·recv_count]."""
    _, c, st = _comm("HcclReduceScatter", comm)
    return _collective("HcclReduceScatter", comm, stream, send=send_buf, recv=recv_buf, count=recv_count,
                       dtype=data_type, op=op, send_n=c.size if not st else 1, recv_n=1)


@_api("HcclBarrier")
def HcclBarrier(comm, stream):
    """``ret``: the stream's later work runs once every rank's stream has reached its barrier."""
    return _collective("HcclBarrier", comm, stream)
