"""aclnnBatchNorm, in CANN's sample-program order: a training step, then inference.

training: output = (x − mean)·invstd·weight + bias with the batch statistics; save_mean,
save_invstd = 1/sqrt(var + eps); running_mean / running_var updated in place with momentum and
the unbiased variance. inference: the updated running statistics normalise.
Run it: ``python samples/02_batch_norm.py``.
"""
import numpy as np

import aclnn_py as A
from aclnn_py import acl
from acl_sample import CHECK_RET, create_acl_tensor, to_host, run

APIS = ["aclnnBatchNorm"]


def main() -> int:
    device_id = 0
    # 1. init, device, stream
    CHECK_RET(acl.init() == 0, "aclInit")
    CHECK_RET(acl.rt.set_device(device_id) == 0, "aclrtSetDevice")
    stream, ret = acl.rt.create_stream()
    CHECK_RET(ret == 0, "aclrtCreateStream")

    # 2. host data: a (4, 3, 5, 6) NCHW batch
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((4, 3, 5, 6)) * 2 + 1).astype(np.float32)
    weight = np.array([1.0, 0.5, 2.0], np.float32)
    bias = np.array([0.0, 0.1, -0.2], np.float32)
    running_mean = np.zeros(3, np.float32)
    running_var = np.ones(3, np.float32)
    momentum, eps = 0.1, 1e-5
    C = 3

    # 3. device buffers and tensors
    tensors = {}
    for name, arr, fmt in (("input", x, A.ACL_FORMAT_NCHW), ("weight", weight, A.ACL_FORMAT_ND),
                           ("bias", bias, A.ACL_FORMAT_ND), ("running_mean", running_mean, A.ACL_FORMAT_ND),
                           ("running_var", running_var, A.ACL_FORMAT_ND),
                           ("output", np.zeros_like(x), A.ACL_FORMAT_NCHW),
                           ("save_mean", np.zeros(C, np.float32), A.ACL_FORMAT_ND),
                           ("save_invstd", np.zeros(C, np.float32), A.ACL_FORMAT_ND)):
        tensors[name] = create_acl_tensor(arr, A.ACL_FLOAT, fmt)
    T = {k: v[0] for k, v in tensors.items()}

    # 4.-7. training: phase 1, workspace, phase 2, synchronize
    ws_size, executor, ret = A.aclnnBatchNormGetWorkspaceSize(
        T["input"], T["weight"], T["bias"], T["running_mean"], T["running_var"], True, momentum, eps,
        T["output"], T["save_mean"], T["save_invstd"])
    CHECK_RET(ret == 0, "aclnnBatchNormGetWorkspaceSize (training)")
    run("aclnnBatchNorm", ws_size, executor, stream)

    # 8. copy back and print
    y = to_host(tensors["output"][1], x)
    save_mean, save_invstd = to_host(tensors["save_mean"][1], weight), to_host(tensors["save_invstd"][1], weight)
    rm, rv = to_host(tensors["running_mean"][1], weight), to_host(tensors["running_var"][1], weight)
    for c in range(C):
        print(f"channel {c}: save_mean {save_mean[c]:.6f} save_invstd {save_invstd[c]:.6f} "
              f"running_mean {rm[c]:.6f} running_var {rv[c]:.6f}")

    # inference with the updated running statistics (output overwritten)
    ws_size, executor, ret = A.aclnnBatchNormGetWorkspaceSize(
        T["input"], T["weight"], T["bias"], T["running_mean"], T["running_var"], False, momentum, eps,
        T["output"], T["save_mean"], T["save_invstd"])
    CHECK_RET(ret == 0, "aclnnBatchNormGetWorkspaceSize (inference)")
    run("aclnnBatchNorm", ws_size, executor, stream)
    y_inf = to_host(tensors["output"][1], x)

    # float64 reference
    xd = x.astype(np.float64)
    b = lambda v: np.asarray(v, np.float64).reshape(1, -1, 1, 1)
    n = x.size // C
    mean = xd.mean(axis=(0, 2, 3))
    var = xd.var(axis=(0, 2, 3))
    invstd = 1 / np.sqrt(var + eps)
    y_ref = (xd - b(mean)) * b(invstd) * b(weight) + b(bias)
    rm_ref = (1 - momentum) * running_mean + momentum * mean
    rv_ref = (1 - momentum) * running_var + momentum * var * n / (n - 1)
    y_inf_ref = (xd - b(rm_ref)) / np.sqrt(b(rv_ref) + eps) * b(weight) + b(bias)
    checks = [(y, y_ref), (save_mean, mean), (save_invstd, invstd), (rm, rm_ref), (rv, rv_ref), (y_inf, y_inf_ref)]
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
