"""The LRN family (aclnn-py extensions with cuDNN's formulas, not CANN APIs) in CANN's sample-program order: aclnnpyLrnCrossChannel and its backward on a (2, 8, 5, 5) FLOAT batch (n = 5, alpha = 1, beta = 0.75, k = 2), then aclnnpyDivisiveNormalization and its backward (3×3 spatial window, precomputed means) on a (2, 3, 6, 6) FLOAT batch.

    LRN       y = x / (k + alpha/n · Σ_{c−2..c+2} x²)^beta
    divisive  u = x − means, y = u / (k + alpha/n² · Σ_{3×3 box} u²)^beta

Each result is compared with a float64 NumPy reference. Run it: ``python samples/19_lrn.py``.
"""
import numpy as np

import aclnn_py as A
from aclnn_py import acl
from acl_sample import CHECK_RET, create_acl_tensor, to_host, run

APIS = ["aclnnpyLrnCrossChannel", "aclnnpyLrnCrossChannelBackward", "aclnnpyDivisiveNormalization",
        "aclnnpyDivisiveNormalizationBackward"]


def shifted_sum(a, behind, ahead, axes):
    """Σ of a over the window [p − behind, p + ahead] along each of ``axes`` (zero outside)."""
    for ax in axes:
        pad = [(0, 0)] * a.ndim
        pad[ax] = (behind, ahead)
        p = np.pad(a, pad)
        a = sum(np.take(p, range(j, j + a.shape[ax]), axis=ax) for j in range(behind + ahead + 1))
    return a


def main() -> int:
    device_id = 0
    # 1. init, device, stream
    CHECK_RET(acl.init() == 0, "aclInit")
    CHECK_RET(acl.rt.set_device(device_id) == 0, "aclrtSetDevice")
    stream, ret = acl.rt.create_stream()
    CHECK_RET(ret == 0, "aclrtCreateStream")

    # 2. host data
    rng = np.random.default_rng(19)
    n, alpha, beta, k = 5, 1.0, 0.75, 2.0
    x = rng.standard_normal((2, 8, 5, 5)).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    dn, dalpha, dbeta, dk = 3, 2.0, 0.5, 1.0
    xd = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    md = (0.3 * rng.standard_normal(xd.shape)).astype(np.float32)
    gd = rng.standard_normal(xd.shape).astype(np.float32)

    # 3. device buffers and tensors
    host = {"x": x, "g": g, "y": np.zeros_like(x), "dx": np.zeros_like(x),
            "xd": xd, "md": md, "gd": gd, "yd": np.zeros_like(xd), "dxd": np.zeros_like(xd), "dmd": np.zeros_like(xd)}
    tensors = {k_: create_acl_tensor(v, A.ACL_FLOAT) for k_, v in host.items()}
    T = {k_: v[0] for k_, v in tensors.items()}

    # 4.-7. phase 1, workspace, phase 2, synchronize — once per op
    ws, ex, ret = A.aclnnpyLrnCrossChannelGetWorkspaceSize(T["x"], n, alpha, beta, k, T["y"])
    CHECK_RET(ret == 0, "aclnnpyLrnCrossChannelGetWorkspaceSize")
    run("aclnnpyLrnCrossChannel", ws, ex, stream)
    ws, ex, ret = A.aclnnpyLrnCrossChannelBackwardGetWorkspaceSize(T["g"], T["x"], T["y"], n, alpha, beta, k, T["dx"])
    CHECK_RET(ret == 0, "aclnnpyLrnCrossChannelBackwardGetWorkspaceSize")
    run("aclnnpyLrnCrossChannelBackward", ws, ex, stream)
    ws, ex, ret = A.aclnnpyDivisiveNormalizationGetWorkspaceSize(T["xd"], T["md"], dn, dalpha, dbeta, dk, T["yd"])
    CHECK_RET(ret == 0, "aclnnpyDivisiveNormalizationGetWorkspaceSize")
    run("aclnnpyDivisiveNormalization", ws, ex, stream)
    ws, ex, ret = A.aclnnpyDivisiveNormalizationBackwardGetWorkspaceSize(T["xd"], T["md"], T["gd"], dn, dalpha, dbeta,
                                                                         dk, T["dxd"], T["dmd"])
    CHECK_RET(ret == 0, "aclnnpyDivisiveNormalizationBackwardGetWorkspaceSize")
    run("aclnnpyDivisiveNormalizationBackward", ws, ex, stream)

    # 8. copy back, compare with float64 references
    out = {k_: to_host(tensors[k_][1], host[k_]).astype(np.float64) for k_ in ("y", "dx", "yd", "dxd", "dmd")}
    x64, g64 = x.astype(np.float64), g.astype(np.float64)
    behind, ahead = (n - 1) // 2, n - 1 - (n - 1) // 2
    s = k + alpha / n * shifted_sum(x64 ** 2, behind, ahead, (1,))
    y_ref = x64 * s ** -beta
    dx_ref = g64 * s ** -beta - 2 * alpha * beta / n * x64 * shifted_sum(g64 * y_ref / s, ahead, behind, (1,))
    u = xd.astype(np.float64) - md
    db, da = (dn - 1) // 2, dn - 1 - (dn - 1) // 2
    an = dalpha / dn ** 2
    sd = dk + an * shifted_sum(u ** 2, db, da, (2, 3))
    yd_ref = u * sd ** -dbeta
    dxd_ref = gd * sd ** -dbeta - 2 * an * dbeta * u * shifted_sum(gd * u * sd ** (-dbeta - 1), da, db, (2, 3))
    refs = {"y": y_ref, "dx": dx_ref, "yd": yd_ref, "dxd": dxd_ref, "dmd": -dxd_ref}
    ok = True
    for name, ref in refs.items():
        err = np.abs(out[name] - ref).max()
        good = np.allclose(out[name], ref, rtol=1e-4, atol=1e-5)
        ok &= good
        print(f"{name:<4} max |error| vs float64 reference: {err:.3e} -> {'PASS' if good else 'FAIL'}")

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
