"""aclnnBatchNormElemtBackward, in CANN's sample-program order.

grad_input = (grad_out − sum_dy/N − (input − mean)·invstd²·sum_dy_xmu/N)·invstd·weight,
N = Σ counter. Run it: ``python samples/01_batch_norm_elemt_backward.py``.
"""
import numpy as np

import aclnn_py as A
from aclnn_py import acl
from acl_sample import CHECK_RET, create_acl_tensor

APIS = ["aclnnBatchNormElemtBackward"]


def main() -> int:
    device_id = 0
    # 1. init, device, stream
    CHECK_RET(acl.init() == 0, "aclInit")
    CHECK_RET(acl.rt.set_device(device_id) == 0, "aclrtSetDevice")
    stream, ret = acl.rt.create_stream()
    CHECK_RET(ret == 0, "aclrtCreateStream")

    # 2. host data: a (2, 3, 4) NCL batch, per-channel statistics and sums as SyncBatchNorm makes them
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    dy = rng.standard_normal((2, 3, 4)).astype(np.float32)
    mean = x.mean(axis=(0, 2)).astype(np.float32)
    invstd = (1 / np.sqrt(x.var(axis=(0, 2)) + 1e-5)).astype(np.float32)
    weight = np.array([1.0, 0.5, 2.0], np.float32)
    sum_dy = dy.sum(axis=(0, 2)).astype(np.float32)
    sum_dy_xmu = (dy * (x - mean[None, :, None])).sum(axis=(0, 2)).astype(np.float32)
    counter = np.array([4, 4], np.int32)        # two ranks of 4 elements per channel: N = 8
    out = np.zeros_like(x)

    # 3. device buffers and tensors
    tensors = {}
    for name, arr, dt in (("grad_out", dy, A.ACL_FLOAT), ("input", x, A.ACL_FLOAT), ("mean", mean, A.ACL_FLOAT),
                          ("invstd", invstd, A.ACL_FLOAT), ("weight", weight, A.ACL_FLOAT),
                          ("sum_dy", sum_dy, A.ACL_FLOAT), ("sum_dy_xmu", sum_dy_xmu, A.ACL_FLOAT),
                          ("counter", counter, A.ACL_INT32), ("grad_input", out, A.ACL_FLOAT)):
        tensors[name] = create_acl_tensor(arr, dt, A.ACL_FORMAT_NCL if arr.ndim == 3 else A.ACL_FORMAT_ND)
    T = {k: v[0] for k, v in tensors.items()}

    # 4. phase 1
    ws_size, executor, ret = A.aclnnBatchNormElemtBackwardGetWorkspaceSize(
        T["grad_out"], T["input"], T["mean"], T["invstd"], T["weight"], T["sum_dy"], T["sum_dy_xmu"],
        T["counter"], T["grad_input"])
    CHECK_RET(ret == 0, "aclnnBatchNormElemtBackwardGetWorkspaceSize")
    # 5. workspace
    workspace = None
    if ws_size > 0:
        workspace, ret = acl.rt.malloc(ws_size, acl.rt.ACL_MEM_MALLOC_HUGE_FIRST)
        CHECK_RET(ret == 0, "allocate workspace")
    # 6. phase 2, 7. synchronize
    CHECK_RET(A.aclnnBatchNormElemtBackward(workspace, ws_size, executor, stream) == 0, "aclnnBatchNormElemtBackward")
    CHECK_RET(acl.rt.synchronize_stream(stream) == 0, "aclrtSynchronizeStream")

    # 8. copy back and print
    result = np.zeros_like(x)
    ret = acl.rt.memcpy(acl.util.numpy_to_ptr(result), result.nbytes, tensors["grad_input"][1], result.nbytes,
                        acl.rt.ACL_MEMCPY_DEVICE_TO_HOST)
    CHECK_RET(ret == 0, "copy result from device to host")
    for i, v in enumerate(result.reshape(-1)):
        print(f"result[{i}] is: {v:.6f}")

    # reference (float64)
    xd, dyd = x.astype(np.float64), dy.astype(np.float64)
    m, inv, w = (a.astype(np.float64)[None, :, None] for a in (mean, invstd, weight))
    n = counter.sum()
    ref = (dyd - sum_dy.astype(np.float64)[None, :, None] / n
           - (xd - m) * inv ** 2 * sum_dy_xmu.astype(np.float64)[None, :, None] / n) * inv * w
    ok = np.allclose(result, ref, rtol=1e-5, atol=1e-6)
    print(f"max |error| vs float64 reference: {np.abs(result - ref).max():.3e} -> {'PASS' if ok else 'FAIL'}")

    # 9. destroy everything, free memory, reset device, finalize
    for t, dev in tensors.values():
        A.aclDestroyTensor(t)
        CHECK_RET(acl.rt.free(dev) == 0, "aclrtFree")
    if workspace is not None:
        CHECK_RET(acl.rt.free(workspace) == 0, "free workspace")
    CHECK_RET(acl.rt.destroy_stream(stream) == 0, "aclrtDestroyStream")
    CHECK_RET(acl.rt.reset_device(device_id) == 0, "aclrtResetDevice")
    CHECK_RET(acl.finalize() == 0, "aclFinalize")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
