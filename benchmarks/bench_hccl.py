"""HcclAllReduce of SyncBN's per-channel statistics vs the raw engine call on the same buffers.

Run: ``mpiexec -n 2 python benchmarks/bench_hccl.py [--channels 64] [--iters 2000]`` (without
``mpiexec``, or without mpi4py, it is one rank). Rank 0 prints microseconds per all-reduce (median of
5 repeats) for:

  raw        host (MPI engine): mpi4py ``Comm.Allreduce`` on the device buffers (blocking, the
             caller's thread). GPU (NCCL engine): CuPy's ``NcclCommunicator.allReduce`` on the same
             buffers and CUDA stream, × iters, one synchronize
  raw latency  (GPU only) the raw NCCL call + a stream synchronize per call
  pipelined  ``HcclAllReduce`` × iters on one stream, one synchronize (what SyncBN does)
  latency    ``HcclAllReduce`` + ``synchronize_stream`` per call

each with the cross-rank signature check on (default) and off (``ACLNN_PY_HCCL_CHECK=0``; the check
exists on MPI only), and the overhead = ours − raw (pipelined against raw, latency against raw
latency where measured).
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
    try:
        from mpi4py import MPI
        w = MPI.COMM_WORLD
    except ImportError:                      # one rank: the NCCL engine on one GPU needs no MPI
        MPI, w = None, OneRank()
    acl.init()
    acl.rt.set_device(0)
    stream, _ = acl.rt.create_stream()
    rank, size = w.rank, w.size
    info = w.bcast(hccl.HcclGetRootInfo()[0] if rank == 0 else None)
    comm, ret = hccl.HcclCommInitRootInfo(size, info, rank)
    assert ret == 0, acl.get_recent_err_msg()
    n = 4 * a.channels                       # sum_dy | sum_dy_xmu | grad_weight | grad_bias, FLOAT
    send, _ = acl.rt.malloc(n * 4, 0)
    recv, _ = acl.rt.malloc(n * 4, 0)
    host = np.arange(n, dtype=np.float32)
    acl.rt.memcpy(send, n * 4, acl.util.numpy_to_ptr(host), n * 4, 1)
    F32, SUM = hccl.HCCL_DATA_TYPE_FP32, hccl.HCCL_REDUCE_SUM
    nccl = hccl.engine_name().startswith("NCCL")
    if nccl:                                 # the engine's own communicator and our stream's CUDA stream
        from aclnn_py.acl._state import resolve_stream
        from aclnn_py.hccl import _comms
        from aclnn_py.hccl._nccl import NCCL_DTYPE
        raw_comm = _comms[comm][1].comm
        cuda_stream = resolve_stream("bench", stream)[0]
        sp = getattr(cuda_stream, "ptr", cuda_stream)

        def raw():
            for _ in range(a.iters):
                raw_comm.allReduce(send, recv, n, NCCL_DTYPE[F32], 0, sp)
            cuda_stream.synchronize()

        def raw_latency():
            for _ in range(a.iters // 4):
                raw_comm.allReduce(send, recv, n, NCCL_DTYPE[F32], 0, sp)
                cuda_stream.synchronize()
    else:
        mem = MPI.memory.fromaddress if hasattr(MPI, "memory") else MPI.buffer.fromaddress
        sbuf, rbuf = [mem(send, n * 4), MPI.FLOAT], [mem(recv, n * 4), MPI.FLOAT]

        def raw():
            for _ in range(a.iters):
                w.Allreduce(sbuf, rbuf, op=MPI.SUM)
        raw_latency = None

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
            out.append(w.allreduce(dt, op=MPI.MAX if MPI else None) / iters * 1e6)
        return statistics.median(out)

    results = {}
    results["raw"] = timed(raw, a.iters)
    if raw_latency is not None:
        results["raw latency"] = timed(raw_latency, a.iters // 4)
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
        for k, v in results.items():
            base = results.get("raw latency", results["raw"]) if k.startswith("latency") else results["raw"]
            extra = "" if k.startswith("raw") else f"   overhead {v - base:+7.1f} µs"
            print(f"  {k:<20} {v:8.1f} µs/all-reduce{extra}")
    hccl.HcclCommDestroy(comm)
    acl.rt.free(send)
    acl.rt.free(recv)
    acl.rt.destroy_stream(stream)
    acl.finalize()
    return 0 if correct else 1


class OneRank:
    """COMM_WORLD's few calls used here, for a single process without mpi4py."""
    rank, size = 0, 1

    def bcast(self, v, root=0):
        return v

    def Barrier(self):
        pass

    def allreduce(self, v, op=None):
        return v


if __name__ == "__main__":
    sys.exit(main())
