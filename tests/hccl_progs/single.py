"""One rank without mpiexec (MPI singleton): argument checks, statuses and messages; prints OK."""
import sys

import numpy as np

from aclnn_py import acl
import aclnn_py.hccl as hccl

R, D = hccl.HcclResult, hccl.HcclDataType


def expect(got, want, what):
    if got != want:
        raise SystemExit(f"FAIL {what}: got {got!r}, want {want!r} ({acl.get_recent_err_msg()})")
    acl.get_recent_err_msg()


def main():
    # no device yet
    expect(hccl.HcclGetRootInfo(), (None, R.HCCL_E_RUNTIME), "root info before set_device")
    acl.init()
    acl.rt.set_device(0)
    stream, _ = acl.rt.create_stream()
    info, ret = hccl.HcclGetRootInfo()
    expect((ret, type(info), len(info)), (0, bytes, hccl.HCCL_ROOT_INFO_BYTES), "root info")
    expect(hccl.HcclGetRootInfo()[0] != info, True, "root infos are unique")
    expect(hccl.HcclCommInitRootInfo(1, b"x" * 10, 0), (None, R.HCCL_E_PARA), "short root info")
    expect(hccl.HcclCommInitRootInfo(1, bytes(4108), 0), (None, R.HCCL_E_PARA), "foreign root info")
    expect(hccl.HcclCommInitRootInfo(0, info, 0), (None, R.HCCL_E_PARA), "n_ranks 0")
    expect(hccl.HcclCommInitRootInfo(1, info, 1), (None, R.HCCL_E_PARA), "rank out of range")
    expect(hccl.HcclCommInitRootInfo(2, info, 0), (None, R.HCCL_E_PARA), "more ranks than processes")
    comm, ret = hccl.HcclCommInitRootInfo(1, info, 0)
    expect(ret, 0, "init")
    expect(hccl.HcclGetRankSize(comm), (1, 0), "rank size")
    expect(hccl.HcclGetRankId(comm), (0, 0), "rank id")
    expect(hccl.HcclGetRankSize(12345), (None, R.HCCL_E_PARA), "unknown comm")
    p, _ = acl.rt.malloc(64, 0)
    q, _ = acl.rt.malloc(64, 0)
    f32 = D.HCCL_DATA_TYPE_FP32
    cases = [
        (hccl.HcclAllReduce(p, q, 4, 99, 0, comm, stream), R.HCCL_E_PARA, "bad dtype"),
        (hccl.HcclAllReduce(p, q, 4, D.HCCL_DATA_TYPE_INT128, 0, comm, stream), R.HCCL_E_NOT_SUPPORT, "int128"),
        (hccl.HcclAllReduce(p, q, 4, f32, 7, comm, stream), R.HCCL_E_PARA, "bad op"),
        (hccl.HcclAllReduce(p, q, -1, f32, 0, comm, stream), R.HCCL_E_PARA, "negative count"),
        (hccl.HcclAllReduce(p, q, 4.0, f32, 0, comm, stream), R.HCCL_E_PARA, "float count"),
        (hccl.HcclAllReduce(None, q, 4, f32, 0, comm, stream), R.HCCL_E_PTR, "null send"),
        (hccl.HcclAllReduce(p, 0, 4, f32, 0, comm, stream), R.HCCL_E_PTR, "null recv"),
        (hccl.HcclAllReduce(p, q, 17, f32, 0, comm, stream), R.HCCL_E_PARA, "past the allocation"),
        (hccl.HcclAllReduce(p, p + 4, 4, f32, 0, comm, stream), R.HCCL_E_PARA, "partial overlap"),
        (hccl.HcclAllReduce(p, q, 4, f32, 0, comm, 999999), R.HCCL_E_PARA, "unknown stream"),
        (hccl.HcclAllReduce(p, q, 4, f32, 0, 777, stream), R.HCCL_E_PARA, "unknown comm"),
        (hccl.HcclBroadcast(p, 4, f32, 1, comm, stream), R.HCCL_E_PARA, "root out of range"),
        (hccl.HcclReduceScatter(p, p, 4, f32, 0, comm, stream), R.HCCL_E_PARA, "reduce-scatter in place"),
        (hccl.HcclAllGather(p, q, 17, f32, comm, stream), R.HCCL_E_PARA, "gather past the allocation"),
        (hccl.HcclAllReduce(p, q, 4, f32, None, comm, stream), R.HCCL_E_PARA, "op None"),
        (hccl.HcclBroadcast(p, 4, f32, None, comm, stream), R.HCCL_E_PARA, "root None"),
        (hccl.HcclReduce(p, q, 4, f32, 0, None, comm, stream), R.HCCL_E_PARA, "reduce root None"),
        (hccl.HcclAllReduce(p, q, 4, f32, 0, comm), R.HCCL_E_PARA, "missing stream"),
        (hccl.HcclAllReduce(p, q, 4, f32, 0, comm, stream, 5), R.HCCL_E_PARA, "one argument too many"),
        (hccl.HcclAllReduce(p, q, 4, f32, 0, comm, stream=stream, bogus=1), R.HCCL_E_PARA, "unknown keyword"),
        (hccl.HcclCommInitRootInfo(1, b"x"), (None, R.HCCL_E_PARA), "init without rank"),
        # accepted: CANN's parameter names as keywords, NumPy integers (a count from np.prod)
        (hccl.HcclAllReduce(sendBuf=p, recvBuf=q, count=4, dataType=f32, op=0, comm=comm, stream=stream), 0,
         "CANN keyword names"),
        (hccl.HcclAllReduce(np.int64(p), np.uint64(q), np.prod([2, 2]), np.int32(f32), np.int8(0), comm, stream), 0,
         "NumPy integers"),
    ]
    for got, want, what in cases:
        expect(got, want, what)
    # one rank: each collective is a copy (and runs in stream order)
    src = np.arange(16, dtype=np.float32)
    acl.rt.memcpy(p, 64, acl.util.numpy_to_ptr(src), 64, 1)
    expect(hccl.HcclAllReduce(p, q, 16, f32, hccl.HCCL_REDUCE_MAX, comm, stream), 0, "one-rank all-reduce")
    expect(hccl.HcclBarrier(comm, stream), 0, "barrier")
    expect(acl.rt.synchronize_stream(stream), 0, "sync")
    out = np.zeros(16, np.float32)
    acl.rt.memcpy(acl.util.numpy_to_ptr(out), 64, q, 64, 2)
    expect(out.tolist(), src.tolist(), "one-rank all-reduce result")
    expect(hccl.HcclGetCommAsyncError(comm), (R.HCCL_SUCCESS, 0), "no async error")
    expect(hccl.HcclGetErrorString(9), "timeout", "error string")
    expect(hccl.HcclCommDestroy(comm), 0, "destroy")
    expect(hccl.HcclCommDestroy(comm), R.HCCL_E_PARA, "destroy twice")
    expect(hccl.engine_name(), "MPI (mpi4py)", "engine")
    print("OK")


if __name__ == "__main__":
    sys.exit(main())
