"""aclnnBatchNormElemt, in CANN's sample-program order: normalise with given statistics.

output = (input − mean)·invstd·weight + bias; every tensor has input's dtype (here FLOAT).
Run it: ``python samples/06_batch_norm_elemt.py``.
"""
import numpy as np

import aclnn_py as A
from aclnn_py import acl
from acl_sample import CHECK_RET, create_acl_tensor, to_host, run

APIS = ["aclnnBatchNormElemt"]


def main() -> int:
    device_id = 0
    # 1. init, device, stream
    CHECK_RET(acl.init() == 0, "aclInit")
    CHECK_RET(acl.rt.set_device(device_id) == 0, "aclrtSetDevice")
    stream, ret = acl.rt.create_stream()
    CHECK_RET(ret == 0, "aclrtCreateStream")

    # 2. host data: a (2, 3, 4, 4) NCHW batch and (e.g. gathered) per-channel statistics
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((2, 3, 4, 4)) * 2 + 1).astype(np.float32)
    mean = np.array([0.9, 1.1, 1.0], np.float32)
    invstd = np.array([0.5, 0.45, 0.55], np.float32)
    weight = np.array([1.0, 0.5, 2.0], np.float32)
    bias = np.array([0.0, 0.1, -0.2], np.float32)
    eps = 1e-5

    # 3. device buffers and tensors
    tensors = {}
    for name, arr, fmt in (("input", x, A.ACL_FORMAT_NCHW), ("weight", weight, A.ACL_FORMAT_ND),
                           ("bias", bias, A.ACL_FORMAT_ND), ("mean", mean, A.ACL_FORMAT_ND),
                           ("invstd", invstd, A.ACL_FORMAT_ND), ("output", np.zeros_like(x), A.ACL_FORMAT_NCHW)):
        tensors[name] = create_acl_tensor(arr, A.ACL_FLOAT, fmt)
    T = {k: v[0] for k, v in tensors.items()}

    # 4.-7. phase 1, workspace, phase 2, synchronize
    ws_size, executor, ret = A.aclnnBatchNormElemtGetWorkspaceSize(
        T["input"], T["weight"], T["bias"], T["mean"], T["invstd"], eps, T["output"])
    CHECK_RET(ret == 0, "aclnnBatchNormElemtGetWorkspaceSize")
    run("aclnnBatchNormElemt", ws_size, executor, stream)

    # 8. copy back and print
    y = to_host(tensors["output"][1], x)
    for i, v in enumerate(y.reshape(-1)[:8]):
        print(f"result[{i}] is: {v:.6f}")

    # float64 reference
    b = lambda v: v.astype(np.float64).reshape(1, -1, 1, 1)
    ref = (x.astype(np.float64) - b(mean)) * b(invstd) * b(weight) + b(bias)
    ok = np.allclose(y, ref, rtol=1e-5, atol=1e-6)
    print(f"max |error| vs float64 reference: {np.abs(y - ref).max():.3e} -> {'PASS' if ok else 'FAIL'}")

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
