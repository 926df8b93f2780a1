"""aclnnBatchNormBackward, in CANN's sample-program order: training and inference backward.

training: grad_input = (grad_out − Σgrad_out/n − (x − save_mean)·save_invstd²·Σgrad_out·(x − save_mean)/n)
·save_invstd·weight, grad_weight = Σgrad_out·(x − save_mean)·save_invstd, grad_bias = Σgrad_out.
inference: grad_input = grad_out·weight/sqrt(running_var + eps); output_mask (1, 1, 0) with a null
grad_bias. The data is NHWC. Run it: ``python samples/03_batch_norm_backward.py``.
"""
import numpy as np

import aclnn_py as A
from aclnn_py import acl
from acl_sample import CHECK_RET, create_acl_tensor, to_host, run

APIS = ["aclnnBatchNormBackward"]


def main() -> int:
    device_id = 0
    # 1. init, device, stream
    CHECK_RET(acl.init() == 0, "aclInit")
    CHECK_RET(acl.rt.set_device(device_id) == 0, "aclrtSetDevice")
    stream, ret = acl.rt.create_stream()
    CHECK_RET(ret == 0, "aclrtCreateStream")

    # 2. host data: a (2, 4, 4, 3) NHWC batch (channel axis last), save_* as the forward made them
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((2, 4, 4, 3)) * 1.5 + 0.5).astype(np.float32)
    dy = rng.standard_normal((2, 4, 4, 3)).astype(np.float32)
    weight = np.array([1.0, -0.5, 2.0], np.float32)
    eps = 1e-5
    save_mean = x.mean(axis=(0, 1, 2)).astype(np.float32)
    save_invstd = (1 / np.sqrt(x.var(axis=(0, 1, 2)) + eps)).astype(np.float32)
    running_mean = np.array([0.1, 0.2, 0.3], np.float32)
    running_var = np.array([1.5, 0.8, 2.0], np.float32)
    C = 3

    # 3. device buffers and tensors
    tensors = {}
    for name, arr, fmt in (("grad_out", dy, A.ACL_FORMAT_NHWC), ("input", x, A.ACL_FORMAT_NHWC),
                           ("weight", weight, A.ACL_FORMAT_ND), ("running_mean", running_mean, A.ACL_FORMAT_ND),
                           ("running_var", running_var, A.ACL_FORMAT_ND), ("save_mean", save_mean, A.ACL_FORMAT_ND),
                           ("save_invstd", save_invstd, A.ACL_FORMAT_ND),
                           ("grad_input", np.zeros_like(x), A.ACL_FORMAT_NHWC),
                           ("grad_weight", np.zeros(C, np.float32), A.ACL_FORMAT_ND),
                           ("grad_bias", np.zeros(C, np.float32), A.ACL_FORMAT_ND)):
        tensors[name] = create_acl_tensor(arr, A.ACL_FLOAT, fmt)
    T = {k: v[0] for k, v in tensors.items()}
    output_mask = A.aclCreateBoolArray([True, True, True])

    # 4.-7. training backward: phase 1, workspace, phase 2, synchronize
    ws_size, executor, ret = A.aclnnBatchNormBackwardGetWorkspaceSize(
        T["grad_out"], T["input"], T["weight"], T["running_mean"], T["running_var"], T["save_mean"],
        T["save_invstd"], True, eps, output_mask, T["grad_input"], T["grad_weight"], T["grad_bias"])
    CHECK_RET(ret == 0, "aclnnBatchNormBackwardGetWorkspaceSize (training)")
    run("aclnnBatchNormBackward", ws_size, executor, stream)

    # 8. copy back and print
    gi = to_host(tensors["grad_input"][1], x)
    gw, gb = to_host(tensors["grad_weight"][1], weight), to_host(tensors["grad_bias"][1], weight)
    for c in range(C):
        print(f"channel {c}: grad_weight {gw[c]:.6f} grad_bias {gb[c]:.6f}")

    # inference backward: grad_input and grad_weight only (grad_bias null)
    infer_mask = A.aclCreateBoolArray([True, True, False])
    ws_size, executor, ret = A.aclnnBatchNormBackwardGetWorkspaceSize(
        T["grad_out"], T["input"], T["weight"], T["running_mean"], T["running_var"], T["save_mean"],
        T["save_invstd"], False, eps, infer_mask, T["grad_input"], T["grad_weight"], None)
    CHECK_RET(ret == 0, "aclnnBatchNormBackwardGetWorkspaceSize (inference)")
    run("aclnnBatchNormBackward", ws_size, executor, stream)
    gi_inf, gw_inf = to_host(tensors["grad_input"][1], x), to_host(tensors["grad_weight"][1], weight)

    # float64 reference (channel axis last: per-channel vectors broadcast as they are)
    xd, dyd = x.astype(np.float64), dy.astype(np.float64)
    m, inv, w = (v.astype(np.float64) for v in (save_mean, save_invstd, weight))
    n = x.size // C
    xmu = xd - m
    sum_dy, sum_dy_xmu = dyd.sum(axis=(0, 1, 2)), (dyd * xmu).sum(axis=(0, 1, 2))
    gi_ref = (dyd - sum_dy / n - xmu * inv ** 2 * sum_dy_xmu / n) * inv * w
    inv_r = 1 / np.sqrt(running_var.astype(np.float64) + eps)
    gi_inf_ref = dyd * w * inv_r
    gw_inf_ref = (dyd * (xd - running_mean)).sum(axis=(0, 1, 2)) * inv_r
    checks = [(gi, gi_ref), (gw, sum_dy_xmu * inv), (gb, sum_dy), (gi_inf, gi_inf_ref), (gw_inf, gw_inf_ref)]
    ok = all(np.allclose(a, e, rtol=1e-5, atol=1e-5) for a, e in checks)
    err = max(np.abs(a - e).max() for a, e in checks)
    print(f"max |error| vs float64 reference: {err:.3e} -> {'PASS' if ok else 'FAIL'}")
    A.aclDestroyBoolArray(output_mask)
    A.aclDestroyBoolArray(infer_mask)

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
