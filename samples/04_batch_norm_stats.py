"""aclnnBatchNormStats, in CANN's sample-program order: per-channel mean and invstd of a FLOAT16 batch.

mean = Σx/n, invstd = 1/sqrt(Σ(x − mean)²/n + eps) (biased variance), both FLOAT of length C
(Welford partials combined in float64: exact even when |mean| ≫ std).
Run it: ``python samples/04_batch_norm_stats.py``.
"""
import numpy as np

import aclnn_py as A
from aclnn_py import acl
from acl_sample import CHECK_RET, create_acl_tensor, to_host, run

APIS = ["aclnnBatchNormStats"]


def main() -> int:
    device_id = 0
    # 1. init, device, stream
    CHECK_RET(acl.init() == 0, "aclInit")
    CHECK_RET(acl.rt.set_device(device_id) == 0, "aclrtSetDevice")
    stream, ret = acl.rt.create_stream()
    CHECK_RET(ret == 0, "aclrtCreateStream")

    # 2. host data: a (3, 4, 50) NCL FLOAT16 batch whose mean (100) is large next to its spread
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((3, 4, 50)) * 0.5 + 100).astype(np.float16)
    eps = 1e-5
    C = 4

    # 3. device buffers and tensors
    tensors = {"input": create_acl_tensor(x, A.ACL_FLOAT16, A.ACL_FORMAT_NCL),
               "mean": create_acl_tensor(np.zeros(C, np.float32), A.ACL_FLOAT),
               "invstd": create_acl_tensor(np.zeros(C, np.float32), A.ACL_FLOAT)}
    T = {k: v[0] for k, v in tensors.items()}

    # 4.-7. phase 1, workspace, phase 2, synchronize
    ws_size, executor, ret = A.aclnnBatchNormStatsGetWorkspaceSize(T["input"], eps, T["mean"], T["invstd"])
    CHECK_RET(ret == 0, "aclnnBatchNormStatsGetWorkspaceSize")
    run("aclnnBatchNormStats", ws_size, executor, stream)

    # 8. copy back and print
    mean = to_host(tensors["mean"][1], np.zeros(C, np.float32))
    invstd = to_host(tensors["invstd"][1], np.zeros(C, np.float32))
    for c in range(C):
        print(f"channel {c}: mean {mean[c]:.6f} invstd {invstd[c]:.6f}")

    # float64 reference on the FLOAT16 values the device holds
    xd = x.astype(np.float64)
    mean_ref = xd.mean(axis=(0, 2))
    invstd_ref = 1 / np.sqrt(xd.var(axis=(0, 2)) + eps)
    ok = np.allclose(mean, mean_ref, rtol=1e-6, atol=1e-6) and np.allclose(invstd, invstd_ref, rtol=1e-5, atol=1e-6)
    err = max(np.abs(mean - mean_ref).max(), np.abs(invstd - invstd_ref).max())
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
