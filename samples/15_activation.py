"""The activation family in CANN's sample-program order: every forward activation and its backward
(14 pairs, 28 APIs) on a (2, 3, 4, 5) FLOAT batch — the backward ops that take the forward output
(Sigmoid, Tanh, SELU) get the device's forward result — with aclScalar attributes of several
dtypes (DOUBLE slope, INT32 scale, FLOAT16 input scale), plus a broadcast backward:
aclnnThresholdBackward of a (2, 3, 4, 5) gradient against a per-channel (1, 3, 1, 1) saved tensor.

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

PAIRS = [("Relu", "ThresholdBackward"), ("Sigmoid", "SigmoidBackward"), ("Tanh", "TanhBackward"),
         ("Hardtanh", "HardtanhBackward"), ("Elu", "EluBackward"), ("Silu", "SiluBackward"), ("Gelu", "GeluBackward"),
         ("GeluV2", "GeluBackwardV2"), ("LeakyRelu", "LeakyReluBackward"), ("Softplus", "SoftplusBackward"),
         ("Hardswish", "HardswishBackward"), ("Hardsigmoid", "HardsigmoidBackward"), ("Selu", "SeluBackward"),
         ("Mish", "MishBackward")]
APIS = [f"aclnn{n}" for pair in PAIRS for n in pair]


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

    lo, hi = A.aclCreateScalar(-1.0, A.ACL_FLOAT), A.aclCreateScalar(2, A.ACL_INT64)

    xd, gd = x.astype(np.float64), g.astype(np.float64)
    erfc = np.vectorize(math.erfc)
    sa, ss = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    k = math.sqrt(2 / math.pi)
    u = k * (xd + 0.044715 * xd ** 3)
    sg = sigmoid(2 * u)                      # ½(1 + tanh u)
    sp = np.logaddexp(0, xd)
    # forward extra args, forward reference (of x), backward args (y = the device's forward output),
    # backward reference (of x and the device's y)
    cases = {
        "Relu": ((), np.maximum(xd, 0), lambda: (T["g"], T["x"], zero, T["dx"]), lambda y: np.where(xd <= 0, 0, gd)),
        "Sigmoid": ((), sigmoid(xd), lambda: (T["g"], T["y"], T["dx"]), lambda y: gd * y * (1 - y)),
        "Tanh": ((), np.tanh(xd), lambda: (T["g"], T["y"], T["dx"]), lambda y: gd * (1 - y * y)),
        "Hardtanh": ((lo, hi), np.clip(xd, -1, 2), lambda: (T["g"], T["x"], lo, hi, T["dx"]),
                     lambda y: np.where((xd <= -1) | (xd >= 2), 0, gd)),
        "Elu": ((alpha, scale, iscale), np.where(xd > 0, 2 * xd, 2 * 1.5 * np.expm1(0.5 * xd)),
                lambda: (T["g"], alpha, scale, iscale, False, T["x"], T["dx"]),
                lambda y: np.where(xd > 0, 2 * gd, gd * 0.5 * 1.5 * 2 * np.exp(0.5 * xd))),
        "Silu": ((), xd * sigmoid(xd), lambda: (T["g"], T["x"], T["dx"]),
                 lambda y: gd * sigmoid(xd) * (1 + xd * (1 - sigmoid(xd)))),
        "Gelu": ((), 0.5 * xd * erfc(-xd / math.sqrt(2)), lambda: (T["g"], T["x"], T["dx"]),
                 lambda y: gd * (0.5 * erfc(-xd / math.sqrt(2)) + xd * np.exp(-xd * xd / 2) / math.sqrt(2 * math.pi))),
        "GeluV2": ((1,), xd * sg, lambda: (T["g"], T["x"], "tanh", T["dx"]),
                   lambda y: gd * (sg + 2 * xd * sg * (1 - sg) * k * (1 + 3 * 0.044715 * xd * xd))),
        "LeakyRelu": ((slope,), np.where(xd > 0, xd, 0.1 * xd), lambda: (T["g"], T["x"], slope, False, T["dx"]),
                      lambda y: np.where(xd > 0, gd, 0.1 * gd)),
        "Softplus": ((beta, thr), np.where(2 * xd > 10, xd, np.logaddexp(0, 2 * xd) / 2),
                     lambda: (T["g"], T["x"], beta, thr, T["dx"]), lambda y: np.where(2 * xd > 10, gd, gd * sigmoid(2 * xd))),
        "Hardswish": ((), xd * np.clip(xd + 3, 0, 6) / 6, lambda: (T["g"], T["x"], T["dx"]),
                      lambda y: np.where(xd <= -3, 0, np.where(xd < 3, gd * (xd / 3 + 0.5), gd))),
        "Hardsigmoid": ((), np.clip(xd + 3, 0, 6) / 6, lambda: (T["g"], T["x"], T["dx"]),
                        lambda y: np.where((xd > -3) & (xd < 3), gd / 6, 0)),
        "Selu": ((), ss * np.where(xd > 0, xd, sa * np.expm1(np.minimum(xd, 0))), lambda: (T["g"], T["y"], T["dx"]),
                 lambda y: np.where(y <= 0, gd * (y + sa * ss), gd * ss)),
        "Mish": ((), xd * np.tanh(sp), lambda: (T["g"], T["x"], T["dx"]),
                 lambda y: gd * (np.tanh(sp) + xd * sigmoid(xd) * (1 - np.tanh(sp) ** 2))),
    }
    ok = True
    for fwd, bwd in PAIRS:
        extra, fref, bargs, bref = cases[fwd]
        fwd, bwd = "aclnn" + fwd, "aclnn" + bwd
        # 4.-7. phase 1, workspace, phase 2, synchronize — forward, then backward
        ws, ex, ret = getattr(A, fwd + "GetWorkspaceSize")(T["x"], *extra, T["y"])
        CHECK_RET(ret == 0, fwd + "GetWorkspaceSize")
        run(fwd, ws, ex, stream)
        ws, ex, ret = getattr(A, bwd + "GetWorkspaceSize")(*bargs())
        CHECK_RET(ret == 0, bwd + "GetWorkspaceSize")
        run(bwd, ws, ex, stream)
        # 8. copy back, compare with the float64 references
        y = to_host(tensors["y"][1], zeros).astype(np.float64)
        for api, got, ref in ((fwd, y, fref), (bwd, to_host(tensors["dx"][1], zeros).astype(np.float64), bref(y))):
            good = np.allclose(got, ref, rtol=1e-5, atol=1e-6)
            ok &= good
            print(f"{api:<26} max |error| vs float64 reference: {np.abs(got - ref).max():.3e} -> "
                  f"{'PASS' if good else 'FAIL'}")

    # a broadcast backward: ReLU's gradient against a per-channel saved tensor
    ws, ex, ret = A.aclnnThresholdBackwardGetWorkspaceSize(T["g"], T["t"], zero, T["dthr"])
    CHECK_RET(ret == 0, "aclnnThresholdBackwardGetWorkspaceSize")
    run("aclnnThresholdBackward", ws, ex, stream)
    got = to_host(tensors["dthr"][1], zeros).astype(np.float64)
    ref = np.where(t.astype(np.float64) <= 0, 0.0, gd)
    good = np.array_equal(got, ref)
    ok &= good
    print(f"{'aclnnThresholdBackward':<26} (1,3,1,1) broadcast to {shape}: exact -> {'PASS' if good else 'FAIL'}")

    # 9. destroy everything, free memory, reset device, finalize
    for s in (slope, alpha, scale, iscale, beta, thr, zero, lo, hi):
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
