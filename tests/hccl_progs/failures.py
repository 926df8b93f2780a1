"""Failure modes under ``mpiexec``: each rank prints ``rank R: <mode> <what happened>`` lines.

python failures.py MODE, MODE one of
  mismatch  rank 1 passes a different count, then a different dtype: every rank's stream reports
            HCCL_E_PARA (nothing exchanged), then a matching all-reduce still works
  invalid   rank 1 passes a null pointer (HCCL_E_PTR at once): the others fail at once (HCCL_E_PARA)
  kill      rank 1 kills itself (SIGKILL) after init: the others get HCCL_E_REMOTE, not a hang
  die       rank 1 exits (os._exit(3)) after init: the same
  absent    rank 1 sleeps past HCCL_EXEC_TIMEOUT: the others get HCCL_E_TIMEOUT
  raise     rank 1 raises an uncaught exception after init: it says goodbye as it exits, the others get
            HCCL_E_REMOTE at once (not after HCCL_EXEC_TIMEOUT) and the job ends
  nodestroy every rank exits without HcclCommDestroy after a collective: the job ends normally
  badstream rank 1 passes an unknown stream: it gets HCCL_E_PARA, the others' matching call fails at
            once, and the next collective pairs up right on every rank
  late      rank 1 joins an all-reduce 0.5 s late: the others' calls return at once (the exchange
            started on the caller's thread goes on on the stream's worker), a copy queued after
            it sees its result, and a second all-reduce right after it queues behind it
"""
import functools
import os
import signal
import sys
import time

import numpy as np

from aclnn_py import acl
import aclnn_py.hccl as hccl

_print = functools.partial(print, flush=True)


def print(line):
    """stdout and, with HCCL_TEST_LOG set, ``$HCCL_TEST_LOG.<pid>``: once a rank is killed by a signal,
    MPICH's mpiexec exits and the survivors' stdout is gone, but they go on (and must end)."""
    log = os.environ.get("HCCL_TEST_LOG")
    if log:
        with open(f"{log}.{os.getpid()}", "a") as f:
            f.write(line + "\n")
    try:
        _print(line)
    except OSError:
        pass
FP32, SUM = hccl.HCCL_DATA_TYPE_FP32, hccl.HCCL_REDUCE_SUM


def main(mode):
    from mpi4py import MPI
    acl.init()
    acl.rt.set_device(0)
    stream, _ = acl.rt.create_stream()
    w = MPI.COMM_WORLD
    rank, size = w.rank, w.size
    info = w.bcast(hccl.HcclGetRootInfo()[0] if rank == 0 else None)
    comm, ret = hccl.HcclCommInitRootInfo(size, info, rank)
    assert ret == 0, acl.get_recent_err_msg()
    n = 4
    buf, _ = acl.rt.malloc(64, 0)
    host = np.full(16, rank + 1, np.float32)
    acl.rt.memcpy(buf, 64, acl.util.numpy_to_ptr(host), 64, 1)

    def report(what, t0):
        st = acl.rt.synchronize_stream(stream)
        msg = (acl.get_recent_err_msg() or "").replace("\n", " | ")
        err, _ = hccl.HcclGetCommAsyncError(comm)
        print(f"rank {rank}: {mode} {what} enqueue=0 sync={int(st)} async={err.name} after {time.monotonic() - t0:.2f} s"
              f" msg={msg}")
        return st, err

    if mode == "mismatch":
        t0 = time.monotonic()
        ret = hccl.HcclAllReduce(buf, buf, n + (rank == 1), FP32, SUM, comm, stream)
        assert ret == 0
        report("count", t0)
        ret = hccl.HcclAllReduce(buf, buf, n, hccl.HCCL_DATA_TYPE_INT32 if rank == 1 else FP32, SUM, comm, stream)
        assert ret == 0
        report("dtype", t0)
        assert hccl.HcclAllReduce(buf, buf, n, FP32, SUM, comm, stream) == 0
        st = acl.rt.synchronize_stream(stream)
        acl.rt.memcpy(acl.util.numpy_to_ptr(host), 64, buf, 64, 2)
        ok = st == 0 and np.all(host[:n] == size * (size + 1) / 2) and np.all(host[n:] == rank + 1)
        print(f"rank {rank}: mismatch then matching all-reduce {'OK' if ok else 'WRONG'} {host[:n]}")
    elif mode == "invalid":
        t0 = time.monotonic()
        ret = hccl.HcclAllReduce(None if rank == 1 else buf, buf, n, FP32, SUM, comm, stream)
        if rank == 1:
            print(f"rank {rank}: invalid enqueue={int(ret)} ({hccl.HcclResult(ret).name})")
            st = acl.rt.synchronize_stream(stream)
            print(f"rank {rank}: invalid own stream sync={int(st)}")
        else:
            report("peer", t0)
    elif mode in ("kill", "die"):
        w.Barrier()
        if rank == 1:
            if mode == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            os._exit(3)
        time.sleep(0.3)
        t0 = time.monotonic()
        assert hccl.HcclAllReduce(buf, buf, n, FP32, SUM, comm, stream) == 0
        report("lost-peer", t0)
        ret = hccl.HcclAllReduce(buf, buf, n, FP32, SUM, comm, stream)
        print(f"rank {rank}: {mode} next-call enqueue={int(ret)} ({hccl.HcclResult(ret).name})")
    elif mode == "absent":
        t0 = time.monotonic()
        if rank == 1:
            time.sleep(float(os.environ["HCCL_EXEC_TIMEOUT"]) + 2)
        assert hccl.HcclAllReduce(buf, buf, n, FP32, SUM, comm, stream) == 0
        report("timeout", t0)
    elif mode == "raise":
        w.Barrier()
        if rank == 1:
            raise RuntimeError("rank 1 fails on purpose")
        t0 = time.monotonic()
        assert hccl.HcclAllReduce(buf, buf, n, FP32, SUM, comm, stream) == 0
        report("left-peer", t0)
    elif mode == "nodestroy":
        assert hccl.HcclAllReduce(buf, buf, n, FP32, SUM, comm, stream) == 0
        st = acl.rt.synchronize_stream(stream)
        print(f"rank {rank}: nodestroy sync={int(st)}")
        return 0                   # no HcclCommDestroy, no acl.finalize
    elif mode == "badstream":
        ret = hccl.HcclBarrier(comm, 999999 if rank == 1 else stream)
        if rank == 1:
            print(f"rank {rank}: badstream enqueue={int(ret)} ({hccl.HcclResult(ret).name})")
            acl.rt.synchronize_stream(stream)
        else:
            report("peer", time.monotonic())
        assert hccl.HcclAllReduce(buf, buf, n, FP32, SUM, comm, stream) == 0
        st = acl.rt.synchronize_stream(stream)
        acl.rt.memcpy(acl.util.numpy_to_ptr(host), 64, buf, 64, 2)
        ok = st == 0 and np.all(host[:n] == size * (size + 1) / 2)
        print(f"rank {rank}: badstream then matching all-reduce {'OK' if ok else 'WRONG'} {host[:n]}")
    elif mode == "late":
        w.Barrier()
        if rank == 1:
            time.sleep(0.5)
        t0 = time.monotonic()
        assert hccl.HcclAllReduce(buf, buf, n, FP32, SUM, comm, stream) == 0
        call = time.monotonic() - t0
        out = np.zeros(16, np.float32)
        acl.rt.memcpy_async(acl.util.numpy_to_ptr(out), 64, buf, 64, 2, stream)
        assert hccl.HcclAllReduce(buf, buf, n, FP32, SUM, comm, stream) == 0
        st = acl.rt.synchronize_stream(stream)
        acl.rt.memcpy(acl.util.numpy_to_ptr(host), 64, buf, 64, 2)
        s1 = size * (size + 1) / 2
        ok = (st == 0 and np.all(out[:n] == s1) and np.all(host[:n] == s1 * size) and np.all(out[n:] == rank + 1))
        print(f"rank {rank}: late call={call:.3f} s result {'OK' if ok else f'WRONG {out} {host}'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
