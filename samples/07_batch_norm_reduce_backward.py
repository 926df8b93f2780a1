"""aclnnBatchNormReduceBackward, in CANN's sample-program order: the per-channel sums of a backward.

sum_dy = Σgrad_out, sum_dy_xmu = Σgrad_out·(input − mean) (sums, not means: input_g),
grad_weight = sum_dy_xmu·invstd (weight_g), grad_bias = sum_dy (bias_g).
Run it: ``python samples/07_batch_norm_reduce_backward.py``.
"""
import numpy as np

import aclnn_py as A
from aclnn_py import acl
from acl_sample import CHECK_RET, create_acl_tensor, to_host, run

APIS = ["aclnnBatchNormReduceBackward"]


def main() -> int:
    device_id = 0
    # 1. init, device, stream
    CHECK_RET(acl.init() == 0, "aclInit")
    CHECK_RET(acl.rt.set_device(device_id) == 0, "aclrtSetDevice")
    stream, ret = acl.rt.create_stream()
    CHECK_RET(ret == 0, "aclrtCreateStream")

    # 2. host data: a (3, 4, 6) NCL batch, its gradient and the forward's statistics
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((3, 4, 6)) + 0.3).astype(np.float32)
    dy = rng.standard_normal((3, 4, 6)).astype(np.float32)
    mean = x.mean(axis=(0, 2)).astype(np.float32)
    invstd = (1 / np.sqrt(x.var(axis=(0, 2)) + 1e-5)).astype(np.float32)
    weight = np.array([1.0, 0.5, 2.0, -1.0], np.float32)
    C = 4

    # 3. device buffers and tensors
    tensors = {}
    for name, arr, fmt in (("grad_out", dy, A.ACL_FORMAT_NCL), ("input", x, A.ACL_FORMAT_NCL),
                           ("mean", mean, A.ACL_FORMAT_ND), ("invstd", invstd, A.ACL_FORMAT_ND),
                           ("weight", weight, A.ACL_FORMAT_ND)):
        tensors[name] = create_acl_tensor(arr, A.ACL_FLOAT, fmt)
    for name in ("sum_dy", "sum_dy_xmu", "grad_weight", "grad_bias"):
        tensors[name] = create_acl_tensor(np.zeros(C, np.float32), A.ACL_FLOAT)
    T = {k: v[0] for k, v in tensors.items()}

    # 4.-7. phase 1, workspace, phase 2, synchronize
    ws_size, executor, ret = A.aclnnBatchNormReduceBackwardGetWorkspaceSize(
        T["grad_out"], T["input"], T["mean"], T["invstd"], T["weight"], True, True, True, T["sum_dy"],
        T["sum_dy_xmu"], T["grad_weight"], T["grad_bias"])
    CHECK_RET(ret == 0, "aclnnBatchNormReduceBackwardGetWorkspaceSize")
    run("aclnnBatchNormReduceBackward", ws_size, executor, stream)

    # 8. copy back and print
    got = {n: to_host(tensors[n][1], np.zeros(C, np.float32)) for n in ("sum_dy", "sum_dy_xmu", "grad_weight",
                                                                        "grad_bias")}
    for c in range(C):
        print(f"channel {c}: " + " ".join(f"{n} {v[c]:.6f}" for n, v in got.items()))

    # float64 reference
    dyd = dy.astype(np.float64)
    sdy = dyd.sum(axis=(0, 2))
    sdx = (dyd * (x.astype(np.float64) - mean.astype(np.float64)[None, :, None])).sum(axis=(0, 2))
    ref = {"sum_dy": sdy, "sum_dy_xmu": sdx, "grad_weight": sdx * invstd, "grad_bias": sdy}
    ok = all(np.allclose(got[n], ref[n], rtol=1e-5, atol=1e-5) for n in ref)
    err = max(np.abs(got[n] - ref[n]).max() for n in ref)
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
