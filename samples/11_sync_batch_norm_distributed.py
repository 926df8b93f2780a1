"""SyncBatchNorm across processes: the aclnn BatchNorm family + HCCL collectives on real ranks.

Run it on 4 ranks: ``mpiexec -n 4 python samples/11_sync_batch_norm_distributed.py`` (MPICH's
``mpiexec`` comes with ``pip install 'aclnn-py[distributed]'``; on several machines add
``-f hostfile``). Without ``mpiexec`` it is one rank. The ranks hold uneven parts of one batch,
rank 1 none at all (PyTorch issue #78656: the count-weighted gather must still be right).

Every rank, all on one stream, one synchronize at the end (the collectives are stream-ordered):

forward   aclnnBatchNormStats → mean, invstd and the count packed in one FLOAT [2C+1] buffer
          HcclAllGather       → [world, 2C+1]; strided views give means, invstds [world, C], counts [world]
          aclnnBatchNormGatherStatsWithCounts → global mean, invstd; running stats updated on every rank
          aclnnBatchNormElemt → output (FLOAT statistics and parameters with FLOAT/FLOAT16/BF16 data)
backward  aclnnBatchNormReduceBackward → sum_dy, sum_dy_xmu, grad_weight, grad_bias in one FLOAT [4C] buffer
          HcclAllReduce (sum, in place)
          aclnnBatchNormElemtBackward → grad_input

Each rank checks its output and grad_input, and the shared grad_weight, grad_bias, mean, invstd and
running statistics, against float64 BatchNorm of the whole concatenated batch; the verdicts are
combined with an HcclAllReduce (MIN) so every rank prints the same result.
"""
import numpy as np

import aclnn_py as A
from aclnn_py import acl
from acl_sample import CHECK_RET

import aclnn_py.hccl as hccl

APIS = ["HcclGetRootInfo", "HcclCommInitRootInfo", "HcclAllGather", "HcclAllReduce", "HcclCommDestroy",
        "aclnnBatchNormStats", "aclnnBatchNormGatherStatsWithCounts", "aclnnBatchNormElemt",
        "aclnnBatchNormReduceBackward", "aclnnBatchNormElemtBackward"]

F32 = A.ACL_FLOAT
NP = {A.ACL_FLOAT: np.float32, A.ACL_FLOAT16: np.float16}
try:
    import ml_dtypes
    NP[A.ACL_BF16] = ml_dtypes.bfloat16
except ImportError:   # pragma: no cover - ml_dtypes is a dependency
    pass


def hccl_ok(ret, what):
    CHECK_RET(ret == 0, f"{what} (HcclResult {int(ret)}: {hccl.HcclGetErrorString(ret)})")


class Device:
    """Device buffers and tensors of one rank; ``free`` releases them all."""

    def __init__(self):
        self.ptrs, self.tensors = [], []

    def alloc(self, nbytes):
        p, ret = acl.rt.malloc(max(nbytes, 64), acl.rt.ACL_MEM_MALLOC_HUGE_FIRST)
        CHECK_RET(ret == 0, "aclrtMalloc")
        self.ptrs.append(p)
        return p

    def upload(self, host):
        p = self.alloc(host.nbytes)
        if host.nbytes:
            CHECK_RET(acl.rt.memcpy(p, host.nbytes, acl.util.numpy_to_ptr(np.ascontiguousarray(host)), host.nbytes,
                                    acl.rt.ACL_MEMCPY_HOST_TO_DEVICE) == 0, "aclrtMemcpy")
        return p

    def download(self, p, like):
        out = np.empty_like(like)
        if out.nbytes:
            CHECK_RET(acl.rt.memcpy(acl.util.numpy_to_ptr(out), out.nbytes, p, out.nbytes,
                                    acl.rt.ACL_MEMCPY_DEVICE_TO_HOST) == 0, "aclrtMemcpy")
        return out

    def tensor(self, addr, shape, dtype=F32, fmt=A.ACL_FORMAT_ND, strides=None, offset=0, storage=None):
        t = A.aclCreateTensor(list(shape), dtype, strides, offset, fmt, list(storage or shape), addr)
        CHECK_RET(t is not None, "aclCreateTensor")
        self.tensors.append(t)
        return t

    def free(self):
        for t in self.tensors:
            A.aclDestroyTensor(t)
        for p in self.ptrs:
            CHECK_RET(acl.rt.free(p) == 0, "aclrtFree")
        self.ptrs, self.tensors = [], []


def enqueue(api, stream, *args):
    """Phase 1, workspace, phase 2 — no synchronize (the free of the workspace is stream-ordered)."""
    ws_size, executor, ret = getattr(A, api + "GetWorkspaceSize")(*args)
    CHECK_RET(ret == 0, api + "GetWorkspaceSize")
    ws = None
    if ws_size:
        ws, ret = acl.rt.malloc(ws_size, acl.rt.ACL_MEM_MALLOC_HUGE_FIRST)
        CHECK_RET(ret == 0, "allocate workspace")
    CHECK_RET(getattr(A, api)(ws, ws_size, executor, stream) == 0, api)
    if ws is not None:
        CHECK_RET(acl.rt.free(ws) == 0, "free workspace")


class SyncBatchNorm:
    """SyncBatchNorm of one rank: the exact sequence of aclnn calls and collectives, nothing else.

    ``x``, ``dy``: this rank's device tensors (any N, 0 included); weight, bias, running_mean,
    running_var: FLOAT [C] device tensors (running stats updated in place on every rank)."""

    def __init__(self, comm, stream, world, channels, momentum=0.1, eps=1e-5):
        self.comm, self.stream, self.world, self.C = comm, stream, world, channels
        self.momentum, self.eps = momentum, eps
        self.dev = Device()
        C, W = channels, 2 * channels + 1
        # forward: [mean | invstd | count] of this rank, and the gathered [world, 2C+1]
        self.local = self.dev.alloc(W * 4)
        self.gathered = self.dev.alloc(world * W * 4)
        self.mean = self.dev.tensor(self.local, [C])
        self.invstd = self.dev.tensor(self.local + C * 4, [C])
        store = [world * W]
        self.means = self.dev.tensor(self.gathered, [world, C], strides=[W, 1], storage=store)
        self.invstds = self.dev.tensor(self.gathered, [world, C], strides=[W, 1], offset=C, storage=store)
        self.counts = self.dev.tensor(self.gathered, [world], strides=[W], offset=2 * C, storage=store)
        self.mean_all_p, self.invstd_all_p = self.dev.alloc(C * 4), self.dev.alloc(C * 4)
        self.mean_all = self.dev.tensor(self.mean_all_p, [C])
        self.invstd_all = self.dev.tensor(self.invstd_all_p, [C])
        # backward: [sum_dy | sum_dy_xmu | grad_weight | grad_bias], all-reduced in place
        self.sums = self.dev.alloc(4 * C * 4)
        self.sum_dy, self.sum_dy_xmu, self.grad_weight, self.grad_bias = (
            self.dev.tensor(self.sums + k * C * 4, [C]) for k in range(4))
        self._count_host = np.zeros(1, np.float32)

    def forward(self, x, n_local, weight, bias, running_mean, running_var, y):
        """``n_local``: elements per channel on this rank (N·H·W); y = SyncBN(x)."""
        s, C = self.stream, self.C
        self._count_host[0] = n_local
        CHECK_RET(acl.rt.memcpy_async(self.local + 2 * C * 4, 4, acl.util.numpy_to_ptr(self._count_host), 4,
                                      acl.rt.ACL_MEMCPY_HOST_TO_DEVICE, s) == 0, "aclrtMemcpyAsync count")
        enqueue("aclnnBatchNormStats", s, x, self.eps, self.mean, self.invstd)
        hccl_ok(hccl.HcclAllGather(self.local, self.gathered, 2 * C + 1, hccl.HCCL_DATA_TYPE_FP32, self.comm, s),
                "HcclAllGather")
        enqueue("aclnnBatchNormGatherStatsWithCounts", s, x, self.means, self.invstds, running_mean, running_var,
                self.momentum, self.eps, self.counts, self.mean_all, self.invstd_all)
        enqueue("aclnnBatchNormElemt", s, x, weight, bias, self.mean_all, self.invstd_all, self.eps, y)

    def backward(self, dy, x, weight, dx):
        """dx = grad_input; afterwards ``self.grad_weight`` / ``self.grad_bias`` hold the global sums."""
        s = self.stream
        enqueue("aclnnBatchNormReduceBackward", s, dy, x, self.mean_all, self.invstd_all, weight, True, True, True,
                self.sum_dy, self.sum_dy_xmu, self.grad_weight, self.grad_bias)
        hccl_ok(hccl.HcclAllReduce(self.sums, self.sums, 4 * self.C, hccl.HCCL_DATA_TYPE_FP32,
                                   hccl.HCCL_REDUCE_SUM, self.comm, s), "HcclAllReduce")
        enqueue("aclnnBatchNormElemtBackward", s, dy, x, self.mean_all, self.invstd_all, weight, self.sum_dy,
                self.sum_dy_xmu, self.counts, dx)

    def free(self):
        self.dev.free()


def reference(x, dy, weight, bias, running_mean, running_var, momentum, eps, ax):
    """float64 BatchNorm (training) of the whole batch, channel axis ``ax``."""
    xd, dyd = x.astype(np.float64), dy.astype(np.float64)
    red = tuple(i for i in range(x.ndim) if i != ax)
    shape = [1] * x.ndim
    shape[ax] = -1
    b = lambda v: np.asarray(v, np.float64).reshape(shape)
    n = x.size // x.shape[ax]
    mean, var = xd.mean(axis=red), xd.var(axis=red)
    invstd = 1 / np.sqrt(var + eps)
    xmu = xd - b(mean)
    sdy, sdx = dyd.sum(axis=red), (dyd * xmu).sum(axis=red)
    return {"output": xmu * b(invstd) * b(weight) + b(bias),
            "grad_input": (dyd - b(sdy / n) - xmu * b(invstd ** 2 * sdx / n)) * b(invstd * weight),
            "mean": mean, "invstd": invstd, "running_mean": (1 - momentum) * running_mean + momentum * mean,
            "running_var": (1 - momentum) * running_var + momentum * var * n / (n - 1),
            "grad_weight": sdx * invstd, "grad_bias": sdy}


def split_sizes(world):
    """Uneven batch sizes; rank 1 holds no samples when there are 2 ranks or more."""
    if world == 1:
        return [5]
    return [0 if r == 1 else 2 * r + 1 + (r % 2) for r in range(world)]


def run_case(comm, stream, rank, world, dtype, fmt, seed):
    """One SyncBN forward + backward; returns (passed, worst error relative to the tolerance)."""
    sizes = split_sizes(world)
    C, H, W = 3, 4, 5
    nhwc = fmt == A.ACL_FORMAT_NHWC
    ax = 3 if nhwc else 1
    shape = lambda n: (n, H, W, C) if nhwc else (n, C, H, W)
    rng = np.random.default_rng(seed)                     # every rank draws the whole batch
    x = (rng.standard_normal(shape(sum(sizes))) * 2 + 0.5).astype(NP[dtype])
    dy = rng.standard_normal(shape(sum(sizes))).astype(NP[dtype])
    weight = np.array([1.0, 0.5, 2.0], np.float32)
    bias = np.array([0.0, 0.1, -0.2], np.float32)
    rmean, rvar = np.array([0.1, -0.2, 0.0], np.float32), np.array([1.0, 2.0, 0.5], np.float32)
    momentum, eps = 0.1, 1e-5
    lo, hi = sum(sizes[:rank]), sum(sizes[:rank + 1])
    xl, dyl = x[lo:hi], dy[lo:hi]

    dev = Device()
    x_t = dev.tensor(dev.upload(xl), xl.shape, dtype, fmt)
    dy_t = dev.tensor(dev.upload(dyl), dyl.shape, dtype, fmt)
    y_p, dx_p = dev.alloc(xl.nbytes), dev.alloc(xl.nbytes)
    y_t, dx_t = dev.tensor(y_p, xl.shape, dtype, fmt), dev.tensor(dx_p, xl.shape, dtype, fmt)
    w_t, b_t = dev.tensor(dev.upload(weight), [C]), dev.tensor(dev.upload(bias), [C])
    rm_p, rv_p = dev.upload(rmean), dev.upload(rvar)
    rm_t, rv_t = dev.tensor(rm_p, [C]), dev.tensor(rv_p, [C])

    bn = SyncBatchNorm(comm, stream, world, C, momentum, eps)
    bn.forward(x_t, xl.size // C, w_t, b_t, rm_t, rv_t, y_t)
    bn.backward(dy_t, x_t, w_t, dx_t)
    CHECK_RET(acl.rt.synchronize_stream(stream) == 0, "aclrtSynchronizeStream")
    vec = np.zeros(C, np.float32)
    got = {"output": dev.download(y_p, xl), "grad_input": dev.download(dx_p, xl),
           "mean": dev.download(bn.mean_all_p, vec), "invstd": dev.download(bn.invstd_all_p, vec),
           "running_mean": dev.download(rm_p, vec), "running_var": dev.download(rv_p, vec)}
    sums = dev.download(bn.sums, np.zeros(4 * C, np.float32))
    got["grad_weight"], got["grad_bias"] = sums[2 * C:3 * C], sums[3 * C:]
    bn.free()
    dev.free()

    ref = reference(x, dy, weight, bias, rmean, rvar, momentum, eps, ax)
    ref["output"], ref["grad_input"] = ref["output"][lo:hi], ref["grad_input"][lo:hi]
    # FLOAT data: float32 rounding; half data: one rounding of the output, sums accumulated in float32
    tol = {A.ACL_FLOAT: 1e-4, A.ACL_FLOAT16: 4e-3, A.ACL_BF16: 3e-2}[dtype]
    worst = 0.0
    for k, r in ref.items():
        g = got[k].astype(np.float64)
        scale = tol * (1 + np.abs(r).max()) if r.size else tol
        err = np.abs(g - r).max() if r.size else 0.0
        if not np.isfinite(err):
            err = np.inf
        worst = max(worst, err / scale)
    return worst <= 1.0, worst


def main() -> int:
    try:
        from mpi4py import MPI   # only to hand the root info over; the collectives are HCCL's
    except ImportError:
        print("SKIPPED: needs the distributed extra: pip install 'aclnn-py[distributed]' (mpi4py + mpich)")
        return 0
    device_id = 0
    # 1. init, device, stream
    CHECK_RET(acl.init() == 0, "aclInit")
    CHECK_RET(acl.rt.set_device(device_id) == 0, "aclrtSetDevice")
    stream, ret = acl.rt.create_stream()
    CHECK_RET(ret == 0, "aclrtCreateStream")

    # 2. the communicator: rank 0 makes the root info, MPI hands it to everyone
    world_comm = MPI.COMM_WORLD
    rank, world = world_comm.Get_rank(), world_comm.Get_size()
    root_info, ret = hccl.HcclGetRootInfo() if rank == 0 else (None, 0)
    hccl_ok(ret, "HcclGetRootInfo")
    root_info = world_comm.bcast(root_info, root=0)
    comm, ret = hccl.HcclCommInitRootInfo(world, root_info, rank)
    hccl_ok(ret, "HcclCommInitRootInfo")

    # 3. SyncBatchNorm forward + backward per dtype / layout vs float64 BatchNorm of the whole batch
    verdict_host = np.ones(1, np.int32)
    verdict = acl.rt.malloc(4, acl.rt.ACL_MEM_MALLOC_HUGE_FIRST)[0]
    all_ok = True
    cases = [("FLOAT", A.ACL_FLOAT, A.ACL_FORMAT_NCHW), ("FLOAT", A.ACL_FLOAT, A.ACL_FORMAT_NHWC),
             ("FLOAT16", A.ACL_FLOAT16, A.ACL_FORMAT_NCHW), ("BF16", A.ACL_BF16, A.ACL_FORMAT_NCHW)]
    for i, (name, dtype, fmt) in enumerate(cases):
        ok, worst = run_case(comm, stream, rank, world, dtype, fmt, seed=11 + i)
        verdict_host[0] = int(ok)
        CHECK_RET(acl.rt.memcpy(verdict, 4, acl.util.numpy_to_ptr(verdict_host), 4,
                                acl.rt.ACL_MEMCPY_HOST_TO_DEVICE) == 0, "aclrtMemcpy")
        hccl_ok(hccl.HcclAllReduce(verdict, verdict, 1, hccl.HCCL_DATA_TYPE_INT32, hccl.HCCL_REDUCE_MIN, comm,
                                   stream), "HcclAllReduce verdict")
        CHECK_RET(acl.rt.synchronize_stream(stream) == 0, "aclrtSynchronizeStream")
        CHECK_RET(acl.rt.memcpy(acl.util.numpy_to_ptr(verdict_host), 4, verdict, 4,
                                acl.rt.ACL_MEMCPY_DEVICE_TO_HOST) == 0, "aclrtMemcpy")
        fmt_name = "NHWC" if fmt == A.ACL_FORMAT_NHWC else "NCHW"
        print(f"rank {rank}/{world} ({split_sizes(world)[rank]} samples of {split_sizes(world)}) {name:<7} "
              f"{fmt_name}: worst error {worst:.3f} of the tolerance -> {'PASS' if ok else 'FAIL'}; "
              f"all ranks: {'PASS' if verdict_host[0] else 'FAIL'}", flush=True)
        all_ok = all_ok and ok and bool(verdict_host[0])

    # 4. destroy everything, reset device, finalize
    CHECK_RET(acl.rt.free(verdict) == 0, "aclrtFree")
    hccl_ok(hccl.HcclCommDestroy(comm), "HcclCommDestroy")
    CHECK_RET(acl.rt.destroy_stream(stream) == 0, "aclrtDestroyStream")
    CHECK_RET(acl.rt.reset_device(device_id) == 0, "aclrtResetDevice")
    CHECK_RET(acl.finalize() == 0, "aclFinalize")
    return 0 if all_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
