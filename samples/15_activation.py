"""The activation family in CANN's sample-program order: a forward activation and its backward for
each of GELU (erf), SiLU, LeakyReLU (aclScalar slope of type DOUBLE), ELU (aclScalars of three
dtypes) and Softplus on a (2, 3, 4, 5) FLOAT batch, plus a broadcast backward: aclnnThresholdBackward
of a (2, 3, 4, 5) gradient against a per-channel (1, 3, 1, 1) saved tensor (ReLU's backward).

    y = gelu(x)          dx = g·(Φ(x) + x·φ(x))
    y = silu(x)          dx = g·σ(x)·(1 + x·(1 − σ(x)))
    ...

Each result is compared with a float64 NumPy reference. Run it: ``python samples/15_activation.py``.
"""
import math

import numpy as np

import aclnn_py as A
from aclnn_py import acl
from acl_sample import CHECK_RET, create_acl_tensor, to_host, run

APIS = ["aclnnGelu", "aclnnGeluBackward", "aclnnSilu", "aclnnSiluBackward", "aclnnLeakyRelu",
        "aclnnLeakyReluBackward", "aclnnElu", "aclnnEluBackward", "aclnnSoftplus", "aclnnSoftplusBackward",
        "aclnnThresholdBackward"]


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def main() -> int:
    device_id = 0
    # 1. init, device, stream
    CHECK_RET(acl.init() == 0, "aclInit")
    CHECK_RET(acl.rt.set_device(device_id) == 0, "aclrtSetDevice")
    stream, ret = acl.rt.create_stream()
    CHECK_RET(ret == 0, "aclrtCreateStream")

    # 2. host data
    rng = np.random.default_rng(15)
    shape = (2, 3, 4, 5)
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    t = rng.standard_normal((1, 3, 1, 1)).astype(np.float32)
    zeros = np.zeros(shape, np.float32)

    # 3. device buffers, tensors and scalars
    names = ["x", "g", "t", "y", "dx", "dthr"]
    vals = [x, g, t, zeros, zeros, zeros]
    tensors = {n: create_acl_tensor(v, A.ACL_FLOAT) for n, v in zip(names, vals)}
    T = {k: v[0] for k, v in tensors.items()}
    slope = A.aclCreateScalar(0.1, A.ACL_DOUBLE)
    alpha, scale, iscale = (A.aclCreateScalar(1.5, A.ACL_FLOAT), A.aclCreateScalar(2, A.ACL_INT32),
                            A.aclCreateScalar(0.5, A.ACL_FLOAT16))
    beta, thr = A.aclCreateScalar(2.0, A.ACL_FLOAT), A.aclCreateScalar(10.0, A.ACL_FLOAT)
    zero = A.aclCreateScalar(0.0, A.ACL_FLOAT)

    xd, gd = x.astype(np.float64), g.astype(np.float64)
    erfc = np.vectorize(math.erfc)
    cases = [   # (forward, its extra args, reference; backward, (args), reference)
        ("aclnnGelu", (), 0.5 * xd * erfc(-xd / math.sqrt(2)),
         "aclnnGeluBackward", lambda: (T["g"], T["x"], T["dx"]),
         gd * (0.5 * erfc(-xd / math.sqrt(2)) + xd * np.exp(-xd * xd / 2) / math.sqrt(2 * math.pi))),
        ("aclnnSilu", (), xd * sigmoid(xd),
         "aclnnSiluBackward", lambda: (T["g"], T["x"], T["dx"]),
         gd * sigmoid(xd) * (1 + xd * (1 - sigmoid(xd)))),
        ("aclnnLeakyRelu", (slope,), np.where(xd > 0, xd, 0.1 * xd),
         "aclnnLeakyReluBackward", lambda: (T["g"], T["x"], slope, False, T["dx"]), np.where(xd > 0, gd, 0.1 * gd)),
        ("aclnnElu", (alpha, scale, iscale), np.where(xd > 0, 2 * xd, 2 * 1.5 * np.expm1(0.5 * xd)),
         "aclnnEluBackward", lambda: (T["g"], alpha, scale, iscale, False, T["x"], T["dx"]),
         np.where(xd > 0, 2 * gd, gd * 0.5 * 1.5 * 2 * np.exp(0.5 * xd))),
        ("aclnnSoftplus", (beta, thr), np.where(2 * xd > 10, xd, np.logaddexp(0, 2 * xd) / 2),
         "aclnnSoftplusBackward", lambda: (T["g"], T["x"], beta, thr, T["dx"]),
         np.where(2 * xd > 10, gd, gd * sigmoid(2 * xd))),
    ]
    ok = True
    for fwd, extra, fref, bwd, bargs, bref in cases:
        # 4.-7. phase 1, workspace, phase 2, synchronize — forward, then backward
        ws, ex, ret = getattr(A, fwd + "GetWorkspaceSize")(T["x"], *extra, T["y"])
        CHECK_RET(ret == 0, fwd + "GetWorkspaceSize")
        run(fwd, ws, ex, stream)
        ws, ex, ret = getattr(A, bwd + "GetWorkspaceSize")(*bargs())
        CHECK_RET(ret == 0, bwd + "GetWorkspaceSize")
        run(bwd, ws, ex, stream)
        # 8. copy back, compare with the float64 references
        for api, dev, ref in ((fwd, tensors["y"][1], fref), (bwd, tensors["dx"][1], bref)):
            got = to_host(dev, zeros).astype(np.float64)
            good = np.allclose(got, ref, rtol=1e-5, atol=1e-6)
            ok &= good
            print(f"{api:<24} max |error| vs float64 reference: {np.abs(got - ref).max():.3e} -> "
                  f"{'PASS' if good else 'FAIL'}")

    # a broadcast backward: ReLU's gradient against a per-channel saved tensor
    ws, ex, ret = A.aclnnThresholdBackwardGetWorkspaceSize(T["g"], T["t"], zero, T["dthr"])
    CHECK_RET(ret == 0, "aclnnThresholdBackwardGetWorkspaceSize")
    run("aclnnThresholdBackward", ws, ex, stream)
    got = to_host(tensors["dthr"][1], zeros).astype(np.float64)
    ref = np.where(t.astype(np.float64) <= 0, 0.0, gd)
    good = np.array_equal(got, ref)
    ok &= good
    print(f"{'aclnnThresholdBackward':<24} (1,3,1,1) broadcast to {shape}: exact -> {'PASS' if good else 'FAIL'}")

    # 9. destroy everything, free memory, reset device, finalize
    for s in (slope, alpha, scale, iscale, beta, thr, zero):
        A.aclDestroyScalar(s)
    for tt, dev in tensors.values():
        A.aclDestroyTensor(tt)
        CHECK_RET(acl.rt.free(dev) == 0, "aclrtFree")
    CHECK_RET(acl.rt.destroy_stream(stream) == 0, "aclrtDestroyStream")
    CHECK_RET(acl.rt.reset_device(device_id) == 0, "aclrtResetDevice")
    CHECK_RET(acl.finalize() == 0, "aclFinalize")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
