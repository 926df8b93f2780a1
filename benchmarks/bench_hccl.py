"""HcclAllReduce of SyncBN's per-channel statistics vs a raw mpi4py Allreduce on the same buffers.

Run: ``mpiexec -n 2 python benchmarks/bench_hccl.py [--channels 64] [--iters 2000]``. Rank 0 prints
microseconds per all-reduce (median of 5 repeats) for:

  raw        mpi4py ``Comm.Allreduce`` on the device buffers (blocking, the caller's thread)
  pipelined  ``HcclAllReduce`` × iters on one stream, one synchronize (what SyncBN does)
  latency    ``HcclAllReduce`` + ``synchronize_stream`` per call (thread hand-off both ways)

each with the cross-rank signature check on (default) and off (``ACLNN_PY_HCCL_CHECK=0``), and the
overhead = ours − raw. On a GPU (NCCL engine) the raw reference is not measured here.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

from aclnn_py import acl
import aclnn_py.hccl as hccl


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--channels", type=int, default=64)
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args(argv)
    from mpi4py import MPI
    acl.init()
    acl.rt.set_device(0)
    stream, _ = acl.rt.create_stream()
    w = MPI.COMM_WORLD
    rank, size = w.rank, w.size
    info = w.bcast(hccl.HcclGetRootInfo()[0] if rank == 0 else None)
    comm, ret = hccl.HcclCommInitRootInfo(size, info, rank)
    assert ret == 0, acl.get_recent_err_msg()
    n = 4 * a.channels                       # sum_dy | sum_dy_xmu | grad_weight | grad_bias, FLOAT
    send, _ = acl.rt.malloc(n * 4, 0)
    recv, _ = acl.rt.malloc(n * 4, 0)
    host = np.arange(n, dtype=np.float32)
    acl.rt.memcpy(send, n * 4, acl.util.numpy_to_ptr(host), n * 4, 1)
    mem = MPI.memory.fromaddress if hasattr(MPI, "memory") else MPI.buffer.fromaddress
    sbuf, rbuf = [mem(send, n * 4), MPI.FLOAT], [mem(recv, n * 4), MPI.FLOAT]
    F32, SUM = hccl.HCCL_DATA_TYPE_FP32, hccl.HCCL_REDUCE_SUM

    def raw():
        for _ in range(a.iters):
            w.Allreduce(sbuf, rbuf, op=MPI.SUM)

    def pipelined():
        for _ in range(a.iters):
            hccl.HcclAllReduce(send, recv, n, F32, SUM, comm, stream)
        assert acl.rt.synchronize_stream(stream) == 0

    def latency():
        for _ in range(a.iters // 4):
            hccl.HcclAllReduce(send, recv, n, F32, SUM, comm, stream)
            acl.rt.synchronize_stream(stream)

    def timed(fn, iters):
        out = []
        for _ in range(a.repeats):
            w.Barrier()
            t = time.perf_counter()
            fn()
            dt = time.perf_counter() - t
            out.append(w.allreduce(dt, op=MPI.MAX) / iters * 1e6)
        return statistics.median(out)

    results = {}
    results["raw"] = timed(raw, a.iters)
    for check in ("1", "0"):
        os.environ["ACLNN_PY_HCCL_CHECK"] = check
        results[f"pipelined check={check}"] = timed(pipelined, a.iters)
        results[f"latency check={check}"] = timed(latency, a.iters // 4)
    out = np.empty(n, np.float32)
    acl.rt.memcpy(acl.util.numpy_to_ptr(out), n * 4, recv, n * 4, 2)
    correct = np.array_equal(out, host * size)
    if rank == 0:
        print(f"all-reduce of {n} FLOAT ({a.channels} channels × 4 sums), {size} ranks, engine "
              f"{hccl.engine_name()}, {a.iters} iterations, median of {a.repeats}; result correct: {correct}")
        base = results["raw"]
        for k, v in results.items():
            extra = "" if k == "raw" else f"   overhead {v - base:+7.1f} µs"
            print(f"  {k:<20} {v:8.1f} µs/all-reduce{extra}")
    hccl.HcclCommDestroy(comm)
    acl.rt.free(send)
    acl.rt.free(recv)
    acl.rt.destroy_stream(stream)
    acl.finalize()
    return 0 if correct else 1


if __name__ == "__main__":
    sys.exit(main())
