"""aclnnBatchNormTrainingBackward (oneDNN graph semantics), in CANN's sample-program order.

Takes the *variance* (not invstd) and data_format "NXC" (oneDNN's default, channels last) or
"NCX": invstd = 1/sqrt(variance + epsilon), x̂ = (src − mean)·invstd, diff_beta = Σdiff_dst,
diff_gamma = Σdiff_dst·x̂, diff_src = gamma·invstd·(diff_dst − diff_beta/n − x̂·diff_gamma/n).
A second call without diff_gamma/diff_beta ignores gamma. Run it:
``python samples/09_batch_norm_training_backward_onednn.py``.
"""
import numpy as np

import aclnn_py as A
from aclnn_py import acl
from acl_sample import CHECK_RET, create_acl_tensor, to_host, run

APIS = ["aclnnBatchNormTrainingBackward"]


def main() -> int:
    device_id = 0
    # 1. init, device, stream
    CHECK_RET(acl.init() == 0, "aclInit")
    CHECK_RET(acl.rt.set_device(device_id) == 0, "aclrtSetDevice")
    stream, ret = acl.rt.create_stream()
    CHECK_RET(ret == 0, "aclrtCreateStream")

    # 2. host data: a (2, 3, 5, 4) batch in NXC order (N, H, W, C), ND format, C = 4
    rng = np.random.default_rng(6)
    src = (rng.standard_normal((2, 3, 5, 4)) * 1.5 + 0.2).astype(np.float32)
    diff_dst = rng.standard_normal((2, 3, 5, 4)).astype(np.float32)
    mean = src.mean(axis=(0, 1, 2)).astype(np.float32)
    variance = src.var(axis=(0, 1, 2)).astype(np.float32)
    gamma = np.array([1.0, 0.5, -2.0, 1.5], np.float32)
    epsilon = 1e-5
    C = 4

    # 3. device buffers and tensors
    tensors = {}
    for name, arr in (("src", src), ("diff_dst", diff_dst), ("mean", mean), ("variance", variance),
                      ("gamma", gamma), ("diff_src", np.zeros_like(src)), ("diff_gamma", np.zeros(C, np.float32)),
                      ("diff_beta", np.zeros(C, np.float32))):
        tensors[name] = create_acl_tensor(arr, A.ACL_FLOAT)
    T = {k: v[0] for k, v in tensors.items()}

    # 4.-7. phase 1 (data_format None = "NXC"), workspace, phase 2, synchronize
    ws_size, executor, ret = A.aclnnBatchNormTrainingBackwardGetWorkspaceSize(
        T["src"], T["diff_dst"], T["mean"], T["variance"], T["gamma"], epsilon, None, T["diff_src"],
        T["diff_gamma"], T["diff_beta"])
    CHECK_RET(ret == 0, "aclnnBatchNormTrainingBackwardGetWorkspaceSize")
    run("aclnnBatchNormTrainingBackward", ws_size, executor, stream)

    # 8. copy back and print
    dx = to_host(tensors["diff_src"][1], src)
    dg = to_host(tensors["diff_gamma"][1], gamma)
    db = to_host(tensors["diff_beta"][1], gamma)
    for c in range(C):
        print(f"channel {c}: diff_gamma {dg[c]:.6f} diff_beta {db[c]:.6f}")

    # without diff_gamma / diff_beta: gamma is ignored (treated as 1)
    ws_size, executor, ret = A.aclnnBatchNormTrainingBackwardGetWorkspaceSize(
        T["src"], T["diff_dst"], T["mean"], T["variance"], T["gamma"], epsilon, "NXC", T["diff_src"], None, None)
    CHECK_RET(ret == 0, "aclnnBatchNormTrainingBackwardGetWorkspaceSize (no scale/shift grads)")
    run("aclnnBatchNormTrainingBackward", ws_size, executor, stream)
    dx_plain = to_host(tensors["diff_src"][1], src)

    # float64 reference
    xd, dyd = src.astype(np.float64), diff_dst.astype(np.float64)
    n = src.size // C
    invstd = 1 / np.sqrt(variance.astype(np.float64) + epsilon)
    xhat = (xd - mean) * invstd
    db_ref, dg_ref = dyd.sum(axis=(0, 1, 2)), (dyd * xhat).sum(axis=(0, 1, 2))
    core = dyd - db_ref / n - xhat * dg_ref / n
    checks = [(dx, gamma * invstd * core), (dg, dg_ref), (db, db_ref), (dx_plain, invstd * core)]
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
