"""aclnnBatchNormGatherStatsWithCounts, in CANN's sample-program order: combine per-rank statistics.

Three "ranks" computed mean/invstd of their part of a batch (the third holds no samples: count 0,
skipped on the device). The gathered mean_all / invstd_all equal the statistics of the whole batch,
and running_mean / running_var are updated with momentum and the unbiased variance.
Run it: ``python samples/05_batch_norm_gather_stats_with_counts.py``.
"""
import numpy as np

import aclnn_py as A
from aclnn_py import acl
from acl_sample import CHECK_RET, create_acl_tensor, to_host, run

APIS = ["aclnnBatchNormGatherStatsWithCounts"]


def main() -> int:
    device_id = 0
    # 1. init, device, stream
    CHECK_RET(acl.init() == 0, "aclInit")
    CHECK_RET(acl.rt.set_device(device_id) == 0, "aclrtSetDevice")
    stream, ret = acl.rt.create_stream()
    CHECK_RET(ret == 0, "aclrtCreateStream")

    # 2. host data: a (7, 3, 8) batch split 4 + 3 + 0 over three ranks; each rank's mean/invstd
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((7, 3, 8)) * 2 + 0.7).astype(np.float32)
    parts = [x[:4], x[4:], x[7:]]
    eps, momentum = 1e-5, 0.1
    C, world = 3, 3
    mean = np.zeros((world, C), np.float32)
    invstd = np.ones((world, C), np.float32)
    for r, p in enumerate(parts):
        if p.size:
            mean[r] = p.mean(axis=(0, 2))
            invstd[r] = 1 / np.sqrt(p.var(axis=(0, 2)) + eps)
    counts = np.array([p.shape[0] * p.shape[2] for p in parts], np.float32)   # FLOAT counts: [32, 24, 0]
    running_mean = np.zeros(C, np.float32)
    running_var = np.ones(C, np.float32)

    # 3. device buffers and tensors (input only gives C: this rank's local batch)
    tensors = {}
    for name, arr, fmt in (("input", parts[0], A.ACL_FORMAT_NCL), ("mean", mean, A.ACL_FORMAT_ND),
                           ("invstd", invstd, A.ACL_FORMAT_ND), ("running_mean", running_mean, A.ACL_FORMAT_ND),
                           ("running_var", running_var, A.ACL_FORMAT_ND), ("counts", counts, A.ACL_FORMAT_ND),
                           ("mean_all", np.zeros(C, np.float32), A.ACL_FORMAT_ND),
                           ("invstd_all", np.zeros(C, np.float32), A.ACL_FORMAT_ND)):
        tensors[name] = create_acl_tensor(arr, A.ACL_FLOAT, fmt)
    T = {k: v[0] for k, v in tensors.items()}

    # 4.-7. phase 1, workspace, phase 2, synchronize
    ws_size, executor, ret = A.aclnnBatchNormGatherStatsWithCountsGetWorkspaceSize(
        T["input"], T["mean"], T["invstd"], T["running_mean"], T["running_var"], momentum, eps, T["counts"],
        T["mean_all"], T["invstd_all"])
    CHECK_RET(ret == 0, "aclnnBatchNormGatherStatsWithCountsGetWorkspaceSize")
    run("aclnnBatchNormGatherStatsWithCounts", ws_size, executor, stream)

    # 8. copy back and print
    like = np.zeros(C, np.float32)
    mean_all, invstd_all = to_host(tensors["mean_all"][1], like), to_host(tensors["invstd_all"][1], like)
    rm, rv = to_host(tensors["running_mean"][1], like), to_host(tensors["running_var"][1], like)
    for c in range(C):
        print(f"channel {c}: mean_all {mean_all[c]:.6f} invstd_all {invstd_all[c]:.6f} "
              f"running_mean {rm[c]:.6f} running_var {rv[c]:.6f}")

    # float64 reference: the statistics of the whole batch
    xd = x.astype(np.float64)
    n = x.size // C
    m_ref, v_ref = xd.mean(axis=(0, 2)), xd.var(axis=(0, 2))
    checks = [(mean_all, m_ref), (invstd_all, 1 / np.sqrt(v_ref + eps)), (rm, momentum * m_ref),
              (rv, (1 - momentum) + momentum * v_ref * n / (n - 1))]
    ok = all(np.allclose(a, e, rtol=1e-5, atol=1e-5) for a, e in checks)
    err = max(np.abs(a - e).max() for a, e in checks)
    print(f"max |error| vs float64 reference: {err:.3e} -> {'PASS' if ok else 'FAIL'}")

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
