"""Every collective × dtype × op on the real ranks of ``mpiexec -n N``, against NumPy.

Every rank draws every rank's data from fixed seeds, so each one knows the expected result. The data
of each case is written with an async copy on the stream, the collective follows, the result is read
back with an async copy: nothing synchronises in between, so a collective that did not wait for the
work before it (or that the copy after it overtook) fails. Prints one line per failure and
``collectives: N cases, F failures`` at the end; exit status 1 on any failure.
"""
import functools
import sys

import ml_dtypes
import numpy as np

from aclnn_py import acl
import aclnn_py.hccl as hccl

print = functools.partial(print, flush=True)
H = hccl.HcclDataType
DTYPES = [d for d in H if d != H.HCCL_DATA_TYPE_INT128]
NP = {H.HCCL_DATA_TYPE_INT8: np.int8, H.HCCL_DATA_TYPE_INT16: np.int16, H.HCCL_DATA_TYPE_INT32: np.int32,
      H.HCCL_DATA_TYPE_FP16: np.float16, H.HCCL_DATA_TYPE_FP32: np.float32, H.HCCL_DATA_TYPE_INT64: np.int64,
      H.HCCL_DATA_TYPE_UINT64: np.uint64, H.HCCL_DATA_TYPE_UINT8: np.uint8, H.HCCL_DATA_TYPE_UINT16: np.uint16,
      H.HCCL_DATA_TYPE_UINT32: np.uint32, H.HCCL_DATA_TYPE_FP64: np.float64,
      H.HCCL_DATA_TYPE_BFP16: ml_dtypes.bfloat16}
OPS = {hccl.HCCL_REDUCE_SUM: np.add, hccl.HCCL_REDUCE_PROD: np.multiply, hccl.HCCL_REDUCE_MAX: np.maximum,
       hccl.HCCL_REDUCE_MIN: np.minimum}


def data(seed, n, dt, op=None):
    """Small integers (exact in every dtype, no overflow in a product over 3 ranks)."""
    rng = np.random.default_rng(seed)
    t = NP[dt]
    signed = np.dtype(t).kind in "if"
    if op == hccl.HCCL_REDUCE_PROD:
        v = rng.integers(1, 4, n) * (rng.choice([-1, 1], n) if signed else 1)
    else:
        v = rng.integers(-40 if signed else 0, 41, n)
    return v.astype(t)


class Bufs:
    def __init__(self, stream):
        self.stream, self.ptrs, self.keep = stream, [], []

    def dev(self, nbytes):
        p, ret = acl.rt.malloc(max(nbytes, 1), 0)
        assert ret == 0
        self.ptrs.append(p)
        return p

    def put(self, p, host):
        host = np.ascontiguousarray(host)
        self.keep.append(host)
        if host.nbytes:
            assert acl.rt.memcpy_async(p, host.nbytes, acl.util.numpy_to_ptr(host), host.nbytes, 1, self.stream) == 0

    def get(self, p, like):
        out = np.full_like(like, 0)
        self.keep.append(out)
        if out.nbytes:
            assert acl.rt.memcpy_async(acl.util.numpy_to_ptr(out), out.nbytes, p, out.nbytes, 2, self.stream) == 0
        return out

    def free(self):
        for p in self.ptrs:
            acl.rt.free(p)
        self.ptrs, self.keep = [], []


def main():
    from mpi4py import MPI
    acl.init()
    acl.rt.set_device(0)
    stream, _ = acl.rt.create_stream()
    w = MPI.COMM_WORLD
    rank, size = w.rank, w.size
    info = w.bcast(hccl.HcclGetRootInfo()[0] if rank == 0 else None)
    comm, ret = hccl.HcclCommInitRootInfo(size, info, rank)
    assert ret == 0, acl.get_recent_err_msg()
    assert hccl.HcclGetRankSize(comm) == (size, 0) and hccl.HcclGetRankId(comm) == (rank, 0)
    B = Bufs(stream)
    checks = []          # (name, got array (filled at sync), expected)
    n = 7
    case = 0
    for dt in DTYPES:
        t, isz = NP[dt], np.dtype(NP[dt]).itemsize
        for op, fn in OPS.items():
            case += 1
            per = [data(1000 * case + r, n, dt, op) for r in range(size)]
            want = functools.reduce(lambda a, b: fn(a.astype(np.float64), b.astype(np.float64)), per)
            # all-reduce, out of place and in place
            s, r_ = B.dev(n * isz), B.dev(n * isz)
            B.put(s, per[rank])
            assert hccl.HcclAllReduce(s, r_, n, dt, op, comm, stream) == 0, acl.get_recent_err_msg()
            checks.append((f"AllReduce {dt.name} {op.name}", B.get(r_, per[rank]), want))
            B.put(s, per[rank])
            assert hccl.HcclAllReduce(s, s, n, dt, op, comm, stream) == 0
            checks.append((f"AllReduce in place {dt.name} {op.name}", B.get(s, per[rank]), want))
            # reduce to root size-1
            root = size - 1
            s2, r2 = B.dev(n * isz), B.dev(n * isz)
            B.put(s2, per[rank])
            B.put(r2, np.zeros(n, t))
            assert hccl.HcclReduce(s2, r2, n, dt, op, root, comm, stream) == 0, acl.get_recent_err_msg()
            checks.append((f"Reduce {dt.name} {op.name}", B.get(r2, per[rank]),
                           want if rank == root else np.zeros(n)))
            # reduce-scatter: each rank sends size*n, gets its n
            full = [data(5000 * case + r, n * size, dt, op) for r in range(size)]
            fwant = functools.reduce(lambda a, b: fn(a.astype(np.float64), b.astype(np.float64)), full)
            s3, r3 = B.dev(n * size * isz), B.dev(n * isz)
            B.put(s3, full[rank])
            assert hccl.HcclReduceScatter(s3, r3, n, dt, op, comm, stream) == 0, acl.get_recent_err_msg()
            checks.append((f"ReduceScatter {dt.name} {op.name}", B.get(r3, per[rank]),
                           fwant[rank * n:(rank + 1) * n]))
        case += 1
        per = [data(1000 * case + r, n, dt) for r in range(size)]
        # all-gather, out of place and in place
        s, r_ = B.dev(n * isz), B.dev(n * size * isz)
        B.put(s, per[rank])
        assert hccl.HcclAllGather(s, r_, n, dt, comm, stream) == 0, acl.get_recent_err_msg()
        checks.append((f"AllGather {dt.name}", B.get(r_, np.concatenate(per)), np.concatenate(per)))
        r4 = B.dev(n * size * isz)
        B.put(r4 + rank * n * isz, per[rank])
        assert hccl.HcclAllGather(r4 + rank * n * isz, r4, n, dt, comm, stream) == 0, acl.get_recent_err_msg()
        checks.append((f"AllGather in place {dt.name}", B.get(r4, np.concatenate(per)), np.concatenate(per)))
        # broadcast from every root
        for root in range(size):
            b = B.dev(n * isz)
            B.put(b, per[rank])
            assert hccl.HcclBroadcast(b, n, dt, root, comm, stream) == 0, acl.get_recent_err_msg()
            checks.append((f"Broadcast {dt.name} root {root}", B.get(b, per[rank]), per[root]))
    # zero-element collectives and a barrier are legal
    z = B.dev(8)
    assert hccl.HcclAllReduce(z, z, 0, H.HCCL_DATA_TYPE_FP32, 0, comm, stream) == 0
    assert hccl.HcclAllGather(z, z, 0, H.HCCL_DATA_TYPE_FP32, comm, stream) == 0
    assert hccl.HcclBarrier(comm, stream) == 0
    ret = acl.rt.synchronize_stream(stream)
    fails = 0
    if ret != 0:
        print(f"rank {rank}: synchronize_stream {ret}: {acl.get_recent_err_msg()}")
        fails += 1
    for name, got, want in checks:
        if not np.array_equal(got.astype(np.float64), np.asarray(want, np.float64)):
            fails += 1
            print(f"rank {rank} FAIL {name}: got {got} want {want}")
    B.free()
    assert hccl.HcclCommDestroy(comm) == 0
    acl.rt.destroy_stream(stream)
    acl.finalize()
    print(f"rank {rank}: collectives: {len(checks)} cases, {fails} failures")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
