"""aclnnBatchNormActivation + aclnnBatchNormActivationBackward (cuDNN BN-Ex, add + activation), in
CANN's sample-program order.

Forward (training): output = relu(BN(input) + z); the reserve (its size from
aclnnBatchNormActivationGetReserveSpaceSize) receives one bit per element: the activation passed
the gradient. Backward: dy' = grad_out where the bit is set, grad_z = dy', then the BN backward of
dy' gives grad_input, grad_weight, grad_bias. Run it: ``python samples/10_batch_norm_activation.py``.
"""
import numpy as np

import aclnn_py as A
from aclnn_py import acl
from acl_sample import CHECK_RET, create_acl_tensor, to_host, run

APIS = ["aclnnBatchNormActivation", "aclnnBatchNormActivationBackward", "aclnnBatchNormActivationGetReserveSpaceSize"]


def main() -> int:
    device_id = 0
    # 1. init, device, stream
    CHECK_RET(acl.init() == 0, "aclInit")
    CHECK_RET(acl.rt.set_device(device_id) == 0, "aclrtSetDevice")
    stream, ret = acl.rt.create_stream()
    CHECK_RET(ret == 0, "aclrtCreateStream")

    # 2. host data: a (2, 4, 4, 3) NHWC batch, the residual z, an upstream gradient
    rng = np.random.default_rng(7)
    shape = (2, 4, 4, 3)
    x = (rng.standard_normal(shape) * 2 + 0.5).astype(np.float32)
    z = (rng.standard_normal(shape) * 0.5).astype(np.float32)
    dy = rng.standard_normal(shape).astype(np.float32)
    weight = np.array([1.0, 0.5, 2.0], np.float32)
    bias = np.array([0.0, 0.1, -0.2], np.float32)
    running_mean, running_var = np.zeros(3, np.float32), np.ones(3, np.float32)
    momentum, eps, C = 0.1, 1e-5, 3
    fmt = A.ACL_FORMAT_NHWC

    # 3. device buffers and tensors; the reserve sized by the query
    tensors = {}
    for name, arr, f in (("input", x, fmt), ("z", z, fmt), ("weight", weight, A.ACL_FORMAT_ND),
                         ("bias", bias, A.ACL_FORMAT_ND), ("running_mean", running_mean, A.ACL_FORMAT_ND),
                         ("running_var", running_var, A.ACL_FORMAT_ND), ("output", np.zeros_like(x), fmt),
                         ("save_mean", np.zeros(C, np.float32), A.ACL_FORMAT_ND),
                         ("save_invstd", np.zeros(C, np.float32), A.ACL_FORMAT_ND), ("grad_out", dy, fmt),
                         ("grad_input", np.zeros_like(x), fmt), ("grad_z", np.zeros_like(x), fmt),
                         ("grad_weight", np.zeros(C, np.float32), A.ACL_FORMAT_ND),
                         ("grad_bias", np.zeros(C, np.float32), A.ACL_FORMAT_ND)):
        tensors[name] = create_acl_tensor(arr, A.ACL_FLOAT, f)
    T = {k: v[0] for k, v in tensors.items()}
    reserve_size, ret = A.aclnnBatchNormActivationGetReserveSpaceSize(T["input"], "relu")
    CHECK_RET(ret == 0, "aclnnBatchNormActivationGetReserveSpaceSize")
    tensors["reserve"] = create_acl_tensor(np.zeros(reserve_size, np.uint8), A.ACL_UINT8)
    T["reserve"] = tensors["reserve"][0]
    print(f"reserve: {reserve_size} bytes")

    # 4.-7. forward: phase 1, workspace, phase 2, synchronize
    ws_size, executor, ret = A.aclnnBatchNormActivationGetWorkspaceSize(
        T["input"], T["z"], T["weight"], T["bias"], T["running_mean"], T["running_var"], momentum, eps, "relu", None,
        T["output"], T["save_mean"], T["save_invstd"], T["reserve"])
    CHECK_RET(ret == 0, "aclnnBatchNormActivationGetWorkspaceSize")
    run("aclnnBatchNormActivation", ws_size, executor, stream)

    # backward with the forward's save_mean, save_invstd and reserve
    ws_size, executor, ret = A.aclnnBatchNormActivationBackwardGetWorkspaceSize(
        T["grad_out"], T["input"], T["weight"], T["bias"], T["save_mean"], T["save_invstd"], T["reserve"], "relu",
        None, eps, T["grad_input"], T["grad_z"], T["grad_weight"], T["grad_bias"])
    CHECK_RET(ret == 0, "aclnnBatchNormActivationBackwardGetWorkspaceSize")
    run("aclnnBatchNormActivationBackward", ws_size, executor, stream)

    # 8. copy back and print
    y = to_host(tensors["output"][1], x)
    gi, gz = to_host(tensors["grad_input"][1], x), to_host(tensors["grad_z"][1], x)
    gw, gb = to_host(tensors["grad_weight"][1], weight), to_host(tensors["grad_bias"][1], weight)
    for c in range(C):
        print(f"channel {c}: grad_weight {gw[c]:.6f} grad_bias {gb[c]:.6f}")

    # float64 reference (channel axis last)
    xd, zd, dyd = x.astype(np.float64), z.astype(np.float64), dy.astype(np.float64)
    n = x.size // C
    mean, var = xd.mean(axis=(0, 1, 2)), xd.var(axis=(0, 1, 2))
    invstd = 1 / np.sqrt(var + eps)
    v = (xd - mean) * invstd * weight + bias + zd
    y_ref = np.maximum(v, 0)
    dyp = np.where(v > 0, dyd, 0.0)
    xmu = xd - mean
    sdy, sdx = dyp.sum(axis=(0, 1, 2)), (dyp * xmu).sum(axis=(0, 1, 2))
    gi_ref = (dyp - sdy / n - xmu * invstd ** 2 * sdx / n) * invstd * weight
    checks = [(y, y_ref), (gz, dyp), (gi, gi_ref), (gw, sdx * invstd), (gb, sdy)]
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
