"""SyncBatchNorm from the aclnn building blocks, in CANN's sample-program order.

Two "ranks" in one process hold parts of one batch (unequal sizes; then a variant where one rank
holds no samples). Forward: aclnnBatchNormStats per rank → gather (concatenate: the stand-in for
all-gather) → aclnnBatchNormGatherStatsWithCounts → aclnnBatchNormElemt. Backward:
aclnnBatchNormReduceBackward per rank → sum over ranks (the stand-in for all-reduce) →
aclnnBatchNormElemtBackward. The result equals aclnnBatchNorm / aclnnBatchNormBackward on the whole
batch, and a NumPy float64 reference. Run it: ``python samples/08_sync_batch_norm.py``.
"""
import numpy as np

import aclnn_py as A
from aclnn_py import acl
from acl_sample import CHECK_RET, create_acl_tensor, to_host, run

APIS = ["aclnnBatchNormStats", "aclnnBatchNormGatherStatsWithCounts", "aclnnBatchNormElemt", "aclnnBatchNormReduceBackward", "aclnnBatchNormElemtBackward", "aclnnBatchNorm", "aclnnBatchNormBackward"]


class Tensors:
    """Device tensors of one flow: create from host arrays, read back, destroy."""

    def __init__(self):
        self.items = {}

    def new(self, name, host, dtype=A.ACL_FLOAT, fmt=A.ACL_FORMAT_ND):
        if host.size:
            self.items[name] = (*create_acl_tensor(host, dtype, fmt), host)
        else:   # a rank without samples: an empty view on a small allocation
            dev, ret = acl.rt.malloc(64, acl.rt.ACL_MEM_MALLOC_HUGE_FIRST)
            CHECK_RET(ret == 0, "aclrtMalloc")
            t = A.aclCreateTensor(host.shape, dtype, None, 0, fmt, host.shape, dev)
            CHECK_RET(t is not None, "aclCreateTensor")
            self.items[name] = (t, dev, host)
        return self.items[name][0]

    def __getitem__(self, name):
        return self.items[name][0]

    def read(self, name):
        _, dev, like = self.items[name]
        return to_host(dev, like) if like.size else like.copy()

    def write(self, name, host):
        _, dev, like = self.items[name]
        CHECK_RET(acl.rt.memcpy(dev, like.nbytes, acl.util.numpy_to_ptr(np.ascontiguousarray(host, like.dtype)),
                                like.nbytes, acl.rt.ACL_MEMCPY_HOST_TO_DEVICE) == 0, "aclrtMemcpy")

    def copy_into(self, dst, row, src):
        """Device-to-device copy of 1-D ``src`` into row ``row`` of the 2-D ``dst`` (the all-gather)."""
        _, ddev, dlike = self.items[dst]
        _, sdev, slike = self.items[src]
        CHECK_RET(acl.rt.memcpy(ddev + row * slike.nbytes, slike.nbytes, sdev, slike.nbytes,
                                acl.rt.ACL_MEMCPY_DEVICE_TO_DEVICE) == 0, "aclrtMemcpy device to device")

    def destroy(self):
        for t, dev, _ in self.items.values():
            A.aclDestroyTensor(t)
            CHECK_RET(acl.rt.free(dev) == 0, "aclrtFree")
        self.items = {}


def call(api, stream, *args):
    """Phase 1 + workspace + phase 2 + synchronize of ``api``."""
    ws_size, executor, ret = getattr(A, api + "GetWorkspaceSize")(*args)
    CHECK_RET(ret == 0, api + "GetWorkspaceSize")
    run(api, ws_size, executor, stream)


def sync_batch_norm(x_parts, dy_parts, weight, bias, running_mean, running_var, momentum, eps, stream):
    """SyncBatchNorm forward + backward over ranks holding ``x_parts`` (NCHW FLOAT, any N each).

    Returns dict(output, grad_input (concatenated over ranks), mean, invstd, running_mean,
    running_var (rank 0's), grad_weight, grad_bias)."""
    world, C = len(x_parts), x_parts[0].shape[1]
    T = Tensors()
    fmt = A.ACL_FORMAT_NCHW
    vec = lambda: np.zeros(C, np.float32)
    # forward 1: local statistics on every rank
    for r, x in enumerate(x_parts):
        T.new(f"x{r}", x, fmt=fmt)
        T.new(f"dy{r}", dy_parts[r], fmt=fmt)
        T.new(f"mean{r}", vec())
        T.new(f"invstd{r}", vec())
        call("aclnnBatchNormStats", stream, T[f"x{r}"], eps, T[f"mean{r}"], T[f"invstd{r}"])
    # all-gather: rows of [world, C]; counts = elements per channel on each rank
    T.new("means", np.zeros((world, C), np.float32))
    T.new("invstds", np.zeros((world, C), np.float32))
    for r in range(world):
        T.copy_into("means", r, f"mean{r}")
        T.copy_into("invstds", r, f"invstd{r}")
    counts = np.array([x.size // C for x in x_parts], np.float32)
    T.new("counts", counts)
    T.new("weight", weight)
    T.new("bias", bias)
    outputs, grads = [], []
    for r, x in enumerate(x_parts):
        # forward 2: global statistics (every rank computes the same), then normalise the local part
        T.new(f"running_mean{r}", running_mean.copy())
        T.new(f"running_var{r}", running_var.copy())
        T.new(f"mean_all{r}", vec())
        T.new(f"invstd_all{r}", vec())
        call("aclnnBatchNormGatherStatsWithCounts", stream, T[f"x{r}"], T["means"], T["invstds"],
             T[f"running_mean{r}"], T[f"running_var{r}"], momentum, eps, T["counts"], T[f"mean_all{r}"],
             T[f"invstd_all{r}"])
        T.new(f"y{r}", np.zeros_like(x), fmt=fmt)
        call("aclnnBatchNormElemt", stream, T[f"x{r}"], T["weight"], T["bias"], T[f"mean_all{r}"],
             T[f"invstd_all{r}"], eps, T[f"y{r}"])
        outputs.append(T.read(f"y{r}"))
    # backward 1: local sums on every rank (a rank without samples contributes zeros)
    sums = np.zeros((4, C))
    for r in range(world):
        for n in ("sum_dy", "sum_dy_xmu", "grad_weight", "grad_bias"):
            T.new(f"{n}{r}", vec())
        call("aclnnBatchNormReduceBackward", stream, T[f"dy{r}"], T[f"x{r}"], T[f"mean_all{r}"], T[f"invstd_all{r}"],
             T["weight"], True, True, True, T[f"sum_dy{r}"], T[f"sum_dy_xmu{r}"], T[f"grad_weight{r}"],
             T[f"grad_bias{r}"])
        sums += np.stack([T.read(f"{n}{r}") for n in ("sum_dy", "sum_dy_xmu", "grad_weight", "grad_bias")])
    # all-reduce (sum over ranks), then backward 2 on every rank
    T.new("sum_dy", sums[0].astype(np.float32))
    T.new("sum_dy_xmu", sums[1].astype(np.float32))
    T.new("counter", counts.astype(np.int32), A.ACL_INT32)
    for r, x in enumerate(x_parts):
        T.new(f"dx{r}", np.zeros_like(x), fmt=fmt)
        call("aclnnBatchNormElemtBackward", stream, T[f"dy{r}"], T[f"x{r}"], T[f"mean_all{r}"], T[f"invstd_all{r}"],
             T["weight"], T["sum_dy"], T["sum_dy_xmu"], T["counter"], T[f"dx{r}"])
        grads.append(T.read(f"dx{r}"))
    out = {"output": np.concatenate(outputs), "grad_input": np.concatenate(grads), "mean": T.read("mean_all0"),
           "invstd": T.read("invstd_all0"), "running_mean": T.read("running_mean0"),
           "running_var": T.read("running_var0"), "grad_weight": sums[2], "grad_bias": sums[3]}
    T.destroy()
    return out


def whole_batch(x, dy, weight, bias, running_mean, running_var, momentum, eps, stream):
    """aclnnBatchNorm + aclnnBatchNormBackward (training) on the whole batch: the same dict."""
    C = x.shape[1]
    T = Tensors()
    fmt = A.ACL_FORMAT_NCHW
    vec = lambda: np.zeros(C, np.float32)
    for n, v in (("x", x), ("dy", dy), ("y", np.zeros_like(x)), ("dx", np.zeros_like(x))):
        T.new(n, v, fmt=fmt)
    for n, v in (("weight", weight), ("bias", bias), ("running_mean", running_mean.copy()),
                 ("running_var", running_var.copy()), ("save_mean", vec()), ("save_invstd", vec()),
                 ("grad_weight", vec()), ("grad_bias", vec())):
        T.new(n, v)
    call("aclnnBatchNorm", stream, T["x"], T["weight"], T["bias"], T["running_mean"], T["running_var"], True,
         momentum, eps, T["y"], T["save_mean"], T["save_invstd"])
    mask = A.aclCreateBoolArray([True, True, True])
    call("aclnnBatchNormBackward", stream, T["dy"], T["x"], T["weight"], T["running_mean"], T["running_var"],
         T["save_mean"], T["save_invstd"], True, eps, mask, T["dx"], T["grad_weight"], T["grad_bias"])
    A.aclDestroyBoolArray(mask)
    out = {"output": T.read("y"), "grad_input": T.read("dx"), "mean": T.read("save_mean"),
           "invstd": T.read("save_invstd"), "running_mean": T.read("running_mean"),
           "running_var": T.read("running_var"), "grad_weight": T.read("grad_weight"),
           "grad_bias": T.read("grad_bias")}
    T.destroy()
    return out


def reference(x, dy, weight, bias, running_mean, running_var, momentum, eps):
    """NumPy float64 SyncBatchNorm = BatchNorm on the whole batch: the same dict."""
    xd, dyd = x.astype(np.float64), dy.astype(np.float64)
    C = x.shape[1]
    b = lambda v: np.asarray(v, np.float64).reshape(1, -1, 1, 1)
    n = x.size // C
    mean, var = xd.mean(axis=(0, 2, 3)), xd.var(axis=(0, 2, 3))
    invstd = 1 / np.sqrt(var + eps)
    xmu = xd - b(mean)
    sdy, sdx = dyd.sum(axis=(0, 2, 3)), (dyd * xmu).sum(axis=(0, 2, 3))
    return {"output": xmu * b(invstd) * b(weight) + b(bias),
            "grad_input": (dyd - b(sdy / n) - xmu * b(invstd ** 2 * sdx / n)) * b(invstd * weight),
            "mean": mean, "invstd": invstd, "running_mean": (1 - momentum) * running_mean + momentum * mean,
            "running_var": (1 - momentum) * running_var + momentum * var * n / (n - 1),
            "grad_weight": sdx * invstd, "grad_bias": sdy}


def main() -> int:
    device_id = 0
    # 1. init, device, stream
    CHECK_RET(acl.init() == 0, "aclInit")
    CHECK_RET(acl.rt.set_device(device_id) == 0, "aclrtSetDevice")
    stream, ret = acl.rt.create_stream()
    CHECK_RET(ret == 0, "aclrtCreateStream")

    # 2. host data: a (8, 3, 4, 5) NCHW batch and its gradient; the ranks' splits
    rng = np.random.default_rng(8)
    x = (rng.standard_normal((8, 3, 4, 5)) * 2 + 0.5).astype(np.float32)
    dy = rng.standard_normal((8, 3, 4, 5)).astype(np.float32)
    weight = np.array([1.0, 0.5, 2.0], np.float32)
    bias = np.array([0.0, 0.1, -0.2], np.float32)
    running_mean, running_var = np.zeros(3, np.float32), np.ones(3, np.float32)
    momentum, eps = 0.1, 1e-5
    tensors = {}     # every flow frees its own tensors

    # 3.-8. SyncBatchNorm over two ranks (5 + 3 samples, then 8 + 0) vs the whole batch
    ok = True
    whole = whole_batch(x, dy, weight, bias, running_mean, running_var, momentum, eps, stream)
    ref = reference(x, dy, weight, bias, running_mean, running_var, momentum, eps)
    for split in (5, 8):
        sync = sync_batch_norm([x[:split], x[split:]], [dy[:split], dy[split:]], weight, bias, running_mean,
                               running_var, momentum, eps, stream)
        err_whole = max(np.abs(sync[k] - whole[k]).max() for k in ref)
        err_ref = max(np.abs(sync[k] - ref[k]).max() for k in ref)
        good = all(np.allclose(sync[k], whole[k], rtol=1e-5, atol=1e-5) and
                   np.allclose(sync[k], ref[k], rtol=1e-5, atol=1e-5) for k in ref)
        print(f"ranks of {split} + {8 - split} samples: max |sync - whole batch| {err_whole:.3e}, "
              f"max |sync - float64 reference| {err_ref:.3e} -> {'PASS' if good else 'FAIL'}")
        ok = ok and good
    ok = ok and all(np.allclose(whole[k], ref[k], rtol=1e-5, atol=1e-5) for k in ref)
    for c in range(3):
        print(f"channel {c}: mean {whole['mean'][c]:.6f} invstd {whole['invstd'][c]:.6f} "
              f"grad_weight {whole['grad_weight'][c]:.6f} grad_bias {whole['grad_bias'][c]:.6f}")

    # 9. destroy everything, free memory, reset device, finalize
    for t, dev in tensors.values():
        A.aclDestroyTensor(t)
        CHECK_RET(acl.rt.free(dev) == 0, "aclrtFree")
    CHECK_RET(acl.rt.destroy_stream(stream) == 0, "aclrtDestroyStream")
    CHECK_RET(acl.rt.reset_device(device_id) == 0, "aclrtResetDevice")
    CHECK_RET(acl.finalize() == 0, "aclFinalize")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
