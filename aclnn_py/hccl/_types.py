"""HCCL's enums with CANN's numbers (``inc/hccl/hccl_types.h``) and the root-info layout.

The numbers are HCCL's: ``HcclResult`` (HCCL_SUCCESS 0 … HCCL_E_SUSPENDING 22), ``HcclDataType``
(INT8 0 … INT128 12), ``HcclReduceOp`` (SUM 0, PROD 1, MAX 2, MIN 3) and ``HCCL_ROOT_INFO_BYTES``
(4108). The root info's *content* is ours (HCCL's is opaque too): a magic, the engine, a random
communicator id and, for NCCL, the ``ncclUniqueId``.
"""
from __future__ import annotations

import enum
import os
import struct

import ml_dtypes
import numpy as np

__all__ = ["HcclResult", "HcclDataType", "HcclReduceOp", "HCCL_ROOT_INFO_BYTES", "DTYPE_NUMPY",
           "DTYPE_SIZE", "ENGINE_MPI", "ENGINE_NCCL", "pack_root_info", "unpack_root_info"]


class HcclResult(enum.IntEnum):
    HCCL_SUCCESS = 0            # success
    HCCL_E_PARA = 1             # parameter error
    HCCL_E_PTR = 2              # empty pointer
    HCCL_E_MEMORY = 3           # memory error
    HCCL_E_INTERNAL = 4         # internal error
    HCCL_E_NOT_SUPPORT = 5      # not support feature
    HCCL_E_NOT_FOUND = 6        # not found specific resource
    HCCL_E_UNAVAIL = 7          # resource unavailable
    HCCL_E_SYSCALL = 8          # call system interface error
    HCCL_E_TIMEOUT = 9          # timeout
    HCCL_E_OPEN_FILE_FAILURE = 10
    HCCL_E_TCP_CONNECT = 11
    HCCL_E_ROCE_CONNECT = 12
    HCCL_E_TCP_TRANSFER = 13
    HCCL_E_ROCE_TRANSFER = 14
    HCCL_E_RUNTIME = 15         # call runtime api fail
    HCCL_E_DRV = 16
    HCCL_E_PROFILING = 17
    HCCL_E_CCE = 18
    HCCL_E_NETWORK = 19         # call network api fail
    HCCL_E_AGAIN = 20           # try again
    HCCL_E_REMOTE = 21          # error cqe (here: a peer rank failed or exited)
    HCCL_E_SUSPENDING = 22      # communicator suspending


class HcclDataType(enum.IntEnum):
    HCCL_DATA_TYPE_INT8 = 0
    HCCL_DATA_TYPE_INT16 = 1
    HCCL_DATA_TYPE_INT32 = 2
    HCCL_DATA_TYPE_FP16 = 3
    HCCL_DATA_TYPE_FP32 = 4
    HCCL_DATA_TYPE_INT64 = 5
    HCCL_DATA_TYPE_UINT64 = 6
    HCCL_DATA_TYPE_UINT8 = 7
    HCCL_DATA_TYPE_UINT16 = 8
    HCCL_DATA_TYPE_UINT32 = 9
    HCCL_DATA_TYPE_FP64 = 10
    HCCL_DATA_TYPE_BFP16 = 11
    HCCL_DATA_TYPE_INT128 = 12   # listed by HCCL, supported by no engine here (HCCL_E_NOT_SUPPORT)


class HcclReduceOp(enum.IntEnum):
    HCCL_REDUCE_SUM = 0
    HCCL_REDUCE_PROD = 1
    HCCL_REDUCE_MAX = 2
    HCCL_REDUCE_MIN = 3


HCCL_ROOT_INFO_BYTES = 4108

_D = HcclDataType

DTYPE_NUMPY = {
    _D.HCCL_DATA_TYPE_INT8: np.dtype(np.int8), _D.HCCL_DATA_TYPE_INT16: np.dtype(np.int16),
    _D.HCCL_DATA_TYPE_INT32: np.dtype(np.int32), _D.HCCL_DATA_TYPE_FP16: np.dtype(np.float16),
    _D.HCCL_DATA_TYPE_FP32: np.dtype(np.float32), _D.HCCL_DATA_TYPE_INT64: np.dtype(np.int64),
    _D.HCCL_DATA_TYPE_UINT64: np.dtype(np.uint64), _D.HCCL_DATA_TYPE_UINT8: np.dtype(np.uint8),
    _D.HCCL_DATA_TYPE_UINT16: np.dtype(np.uint16), _D.HCCL_DATA_TYPE_UINT32: np.dtype(np.uint32),
    _D.HCCL_DATA_TYPE_FP64: np.dtype(np.float64), _D.HCCL_DATA_TYPE_BFP16: np.dtype(ml_dtypes.bfloat16),
}
DTYPE_SIZE = {d: t.itemsize for d, t in DTYPE_NUMPY.items()}

ENGINE_MPI, ENGINE_NCCL = 1, 2
ENGINE_NAMES = {ENGINE_MPI: "MPI (mpi4py)", ENGINE_NCCL: "NCCL (CuPy)"}

_MAGIC = b"aclnn-py-hccl-v1"          # 16 bytes
_HEAD = struct.Struct("<16sII16sI")   # magic, version, engine, communicator id, payload length


def pack_root_info(engine: int, payload: bytes = b"") -> bytes:
    """A root info of exactly HCCL_ROOT_INFO_BYTES: header, random communicator id, engine payload."""
    head = _HEAD.pack(_MAGIC, 1, engine, os.urandom(16), len(payload))
    return (head + payload).ljust(HCCL_ROOT_INFO_BYTES, b"\0")


def unpack_root_info(info) -> tuple[int, bytes, bytes] | str:
    """(engine, communicator id, payload), or a sentence saying what is wrong with ``info``."""
    if isinstance(info, (bytearray, memoryview)):
        info = bytes(info)
    if not isinstance(info, bytes):
        return f"root_info must be the bytes HcclGetRootInfo returned, got {type(info).__name__}"
    if len(info) != HCCL_ROOT_INFO_BYTES:
        return f"root_info has {len(info)} bytes, HCCL_ROOT_INFO_BYTES is {HCCL_ROOT_INFO_BYTES}"
    magic, version, engine, uid, n = _HEAD.unpack_from(info)
    if magic != _MAGIC or version != 1 or engine not in ENGINE_NAMES or n > HCCL_ROOT_INFO_BYTES - _HEAD.size:
        return "root_info was not made by HcclGetRootInfo (bad magic, version or engine)"
    return engine, uid, info[_HEAD.size:_HEAD.size + n]
