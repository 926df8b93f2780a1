"""The GPU engine: NCCL through CuPy's binding (``cupy.cuda.nccl``, the ``nvidia-nccl-cu*`` wheel).

NCCL is stream-ordered by itself: a collective is enqueued on the caller's CUDA stream and returns
at once. The ``ncclUniqueId`` (128 bytes) travels inside the root info. NCCL has no INT16/UINT16
(``HCCL_E_NOT_SUPPORT``) and no barrier (HcclBarrier is a one-element all-reduce on a scratch
buffer). There is no cross-rank signature check here: it would need a host round trip per call,
and NCCL itself does not check; a dead peer surfaces through ``ncclCommGetAsyncError``
(``HcclGetCommAsyncError``), as with HCCL on NPUs.

Not run by this project's CI (no GPU there): the argument mapping is unit-tested with a fake
``nccl`` module (tests/test_hccl.py).
"""
from __future__ import annotations

import threading

from ._types import HcclDataType, HcclResult

R = HcclResult
_D = HcclDataType

# ncclDataType_t (nccl.h): ncclInt8 0, ncclUint8 1, ncclInt32 2, ncclUint32 3, ncclInt64 4, ncclUint64 5,
# ncclFloat16 6, ncclFloat32 7, ncclFloat64 8, ncclBfloat16 9
NCCL_DTYPE = {_D.HCCL_DATA_TYPE_INT8: 0, _D.HCCL_DATA_TYPE_UINT8: 1, _D.HCCL_DATA_TYPE_INT32: 2,
              _D.HCCL_DATA_TYPE_UINT32: 3, _D.HCCL_DATA_TYPE_INT64: 4, _D.HCCL_DATA_TYPE_UINT64: 5,
              _D.HCCL_DATA_TYPE_FP16: 6, _D.HCCL_DATA_TYPE_FP32: 7, _D.HCCL_DATA_TYPE_FP64: 8,
              _D.HCCL_DATA_TYPE_BFP16: 9}
# ncclRedOp_t: ncclSum 0, ncclProd 1, ncclMax 2, ncclMin 3 — HCCL's numbers
NCCL_OP = {0: 0, 1: 1, 2: 2, 3: 3}
# ncclResult_t -> HcclResult
NCCL_STATUS = {0: R.HCCL_SUCCESS, 1: R.HCCL_E_RUNTIME, 2: R.HCCL_E_SYSCALL, 3: R.HCCL_E_INTERNAL,
               4: R.HCCL_E_PARA, 5: R.HCCL_E_PARA, 6: R.HCCL_E_REMOTE, 7: R.HCCL_E_AGAIN}


def load_nccl():
    try:
        from cupy.cuda import nccl
        if not getattr(nccl, "available", True):
            raise ImportError("cupy.cuda.nccl.available is False")
        nccl.get_version()
        return nccl
    except Exception as e:
        return (f"the NCCL engine needs CuPy's NCCL binding and the NCCL library ({type(e).__name__}: {e}); "
                f"install them with: pip install 'aclnn-py[distributed]' nvidia-nccl-cu12 (or -cu13)")


def _status_of(exc) -> HcclResult:
    return NCCL_STATUS.get(getattr(exc, "status", 3), R.HCCL_E_INTERNAL)


class NcclComm:
    def __init__(self, comm, rank: int, size: int, scratch):
        self.comm, self.rank, self.size = comm, rank, size
        self.scratch = scratch           # device memory for the barrier (kept alive with the comm)
        self.broken = None
        self.async_error = R.HCCL_SUCCESS
        self.lock = threading.Lock()


class NcclEngine:
    name = "NCCL (CuPy)"

    def __init__(self, nccl=None, scratch_alloc=None):
        self._nccl = nccl                  # a fake in the unit tests
        self._scratch_alloc = scratch_alloc

    def _lib(self):
        if self._nccl is None:
            m = load_nccl()
            if isinstance(m, str):
                return m
            self._nccl = m
        return self._nccl

    def root_payload(self):
        lib = self._lib()
        if isinstance(lib, str):
            return R.HCCL_E_UNAVAIL, lib
        try:
            uid = lib.get_unique_id()        # CuPy 14: 128 bytes; CuPy 13: a tuple of 128 C chars (-128..127)
        except Exception as e:
            return _status_of(e), f"ncclGetUniqueId failed: {e}"
        return bytes(v & 0xFF for v in uid)

    def init_comm(self, n_ranks: int, uid: bytes, payload: bytes, rank: int):
        lib = self._lib()
        if isinstance(lib, str):
            return None, R.HCCL_E_UNAVAIL, lib
        if len(payload) != 128:
            return None, R.HCCL_E_PARA, "root_info carries no ncclUniqueId (made by another engine?)"
        # CuPy 14 takes the id as the bytes get_unique_id returns; CuPy 13 as a tuple of 128 C chars
        spellings = (bytes(payload), tuple(b - 256 if b > 127 else b for b in payload))
        for unique_id in spellings:
            try:
                comm = lib.NcclCommunicator(n_ranks, unique_id, rank)
                break
            except TypeError as e:           # the argument's type, not NCCL: try the other spelling
                wrong_type = e
            except Exception as e:
                return None, _status_of(e), f"ncclCommInitRank failed: {e}"
        else:
            return None, R.HCCL_E_INTERNAL, f"ncclCommInitRank failed: {wrong_type}"
        if self._scratch_alloc is not None:
            scratch = self._scratch_alloc(4)
        else:
            import cupy
            scratch = cupy.zeros(1, cupy.float32)
        return NcclComm(comm, rank, n_ranks, scratch), R.HCCL_SUCCESS, ""

    def destroy(self, c: NcclComm) -> None:
        c.comm.destroy()

    def async_error(self, c: NcclComm) -> HcclResult:
        try:
            c.comm.check_async_error()
        except Exception as e:
            c.async_error = _status_of(e)
        return c.async_error

    def unsupported(self, dtype: int) -> str | None:
        if dtype not in NCCL_DTYPE:
            return f"NCCL has no {HcclDataType(dtype).name}"
        return None

    def enqueue(self, c: NcclComm, stream, api: str, a: dict, valid: bool):
        """Enqueue on the CuPy ``stream``; (True, None) or (False, (status, message))."""
        if not valid:
            return True, None      # no cross-rank check on NCCL: the peers are not told
        s = getattr(stream, "ptr", stream) or 0
        comm = c.comm
        try:
            if api == "HcclBarrier":
                p = c.scratch.data.ptr if hasattr(c.scratch, "data") else int(c.scratch)
                comm.allReduce(p, p, 1, NCCL_DTYPE[_D.HCCL_DATA_TYPE_FP32], 0, s)
                return True, None
            t, n = NCCL_DTYPE[a["dtype"]], a["count"]
            if api == "HcclAllReduce":
                comm.allReduce(a["send"], a["recv"], n, t, NCCL_OP[a["op"]], s)
            elif api == "HcclReduce":
                comm.reduce(a["send"], a["recv"], n, t, NCCL_OP[a["op"]], a["root"], s)
            elif api == "HcclAllGather":
                comm.allGather(a["send"], a["recv"], n, t, s)
            elif api == "HcclBroadcast":
                comm.broadcast(a["send"], a["send"], n, t, a["root"], s)
            elif api == "HcclReduceScatter":
                comm.reduceScatter(a["send"], a["recv"], n, t, NCCL_OP[a["op"]], s)
            else:
                return False, (R.HCCL_E_NOT_SUPPORT, f"{api} is not available on NCCL")
        except Exception as e:
            st = _status_of(e)
            c.async_error = st
            return False, (st, f"{api}: NCCL failed: {e}")
        return True, None
