"""The softmax family in CANN's sample-program order: aclnnSoftmax and aclnnLogSoftmax forward, then
aclnnSoftmaxBackward and aclnnLogSoftmaxBackward on their outputs, over dim 1 of a (4, 10, 6)
FLOAT16 batch (the reduced dim is not the innermost one: no transpose is made).

    y = softmax(x, dim)          dx = y·(g − Σ g·y)
    l = log_softmax(x, dim)      dx = g − exp(l)·Σ g

Each result is compared with a float64 NumPy reference. Run it: ``python samples/12_softmax.py``.
"""
import numpy as np

import aclnn_py as A
from aclnn_py import acl
from acl_sample import CHECK_RET, create_acl_tensor, to_host, run

APIS = ["aclnnSoftmax", "aclnnLogSoftmax", "aclnnSoftmaxBackward", "aclnnLogSoftmaxBackward"]


def main() -> int:
    device_id = 0
    # 1. init, device, stream
    CHECK_RET(acl.init() == 0, "aclInit")
    CHECK_RET(acl.rt.set_device(device_id) == 0, "aclrtSetDevice")
    stream, ret = acl.rt.create_stream()
    CHECK_RET(ret == 0, "aclrtCreateStream")

    # 2. host data: logits and an upstream gradient
    rng = np.random.default_rng(12)
    shape, dim = (4, 10, 6), 1
    x = (rng.standard_normal(shape) * 4).astype(np.float16)
    g = rng.standard_normal(shape).astype(np.float16)
    zeros = np.zeros(shape, np.float16)

    # 3. device buffers and tensors
    names = ("x", "g", "y", "l", "dx_soft", "dx_log")
    tensors = {n: create_acl_tensor(v, A.ACL_FLOAT16) for n, v in zip(names, (x, g, zeros, zeros, zeros, zeros))}
    T = {k: v[0] for k, v in tensors.items()}

    # 4.-7. phase 1, workspace, phase 2, synchronize — once per op
    ws, ex, ret = A.aclnnSoftmaxGetWorkspaceSize(T["x"], dim, T["y"])
    CHECK_RET(ret == 0, "aclnnSoftmaxGetWorkspaceSize")
    run("aclnnSoftmax", ws, ex, stream)
    ws, ex, ret = A.aclnnLogSoftmaxGetWorkspaceSize(T["x"], dim, T["l"])
    CHECK_RET(ret == 0, "aclnnLogSoftmaxGetWorkspaceSize")
    run("aclnnLogSoftmax", ws, ex, stream)
    ws, ex, ret = A.aclnnSoftmaxBackwardGetWorkspaceSize(T["g"], T["y"], dim, T["dx_soft"])
    CHECK_RET(ret == 0, "aclnnSoftmaxBackwardGetWorkspaceSize")
    run("aclnnSoftmaxBackward", ws, ex, stream)
    ws, ex, ret = A.aclnnLogSoftmaxBackwardGetWorkspaceSize(T["g"], T["l"], dim, T["dx_log"])
    CHECK_RET(ret == 0, "aclnnLogSoftmaxBackwardGetWorkspaceSize")
    run("aclnnLogSoftmaxBackward", ws, ex, stream)

    # 8. copy back, compare with float64 references (computed on the FLOAT16 values the device holds)
    out = {n: to_host(tensors[n][1], zeros).astype(np.float64) for n in ("y", "l", "dx_soft", "dx_log")}
    xd, gd = x.astype(np.float64), g.astype(np.float64)
    z = xd - xd.max(axis=dim, keepdims=True)
    y_ref = np.exp(z) / np.exp(z).sum(axis=dim, keepdims=True)
    l_ref = z - np.log(np.exp(z).sum(axis=dim, keepdims=True))
    yd, ld = out["y"], out["l"]        # the backward ops saw the FLOAT16 forward outputs
    refs = {"y": y_ref, "l": l_ref,
            "dx_soft": yd * (gd - (gd * yd).sum(axis=dim, keepdims=True)),
            "dx_log": gd - np.exp(ld) * gd.sum(axis=dim, keepdims=True)}
    ok = True
    for n, ref in refs.items():
        err = np.abs(out[n] - ref).max()
        good = np.allclose(out[n], ref, rtol=2e-3, atol=2e-3)
        ok &= good
        print(f"{n:<8} max |error| vs float64 reference: {err:.3e} -> {'PASS' if good else 'FAIL'}")
    print(f"row sums of softmax: {np.round(out['y'].sum(axis=dim)[0], 3)}")

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
