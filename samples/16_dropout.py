"""The dropout family in CANN's sample-program order, as a training step does it:
aclnnDropoutGenMask draws the keep mask of a (4, 100) FLOAT16 activation (p = 0.3, seed 2026,
offset 0), aclnnDropoutDoMask applies it, aclnnDropoutBackward applies it to the gradient (scale =
1/(1 − p)), and aclnnDropout draws the mask and applies it in one call with the same (seed, offset),
then with the next offset (a fresh mask), and in eval mode (train = false: a copy).

Mask convention: UINT8, align(numel, 128)/8 bytes; element k is kept iff bit k % 8 of byte k // 8 is 1.
Run it: ``python samples/16_dropout.py``.
"""
import numpy as np

import aclnn_py as A
from aclnn_py import acl
from acl_sample import CHECK_RET, create_acl_tensor, to_host, run

APIS = ["aclnnDropoutGenMask", "aclnnDropoutDoMask", "aclnnDropoutBackward", "aclnnDropout"]


def main() -> int:
    device_id = 0
    # 1. init, device, stream
    CHECK_RET(acl.init() == 0, "aclInit")
    CHECK_RET(acl.rt.set_device(device_id) == 0, "aclrtSetDevice")
    stream, ret = acl.rt.create_stream()
    CHECK_RET(ret == 0, "aclrtCreateStream")

    # 2. host data
    rng = np.random.default_rng(16)
    shape, p, seed = (4, 100), 0.3, 2026
    n = int(np.prod(shape))
    nbytes = -(-n // 128) * 16                         # align(numel, 128) / 8
    x = rng.standard_normal(shape).astype(np.float16)
    g = rng.standard_normal(shape).astype(np.float16)
    zeros, zmask = np.zeros(shape, np.float16), np.zeros(nbytes, np.uint8)

    # 3. device buffers and tensors
    tensors = {k: create_acl_tensor(v, A.ACL_FLOAT16) for k, v in
               (("x", x), ("g", g), ("y", zeros), ("dx", zeros), ("y2", zeros), ("y3", zeros), ("y4", zeros))}
    tensors.update({k: create_acl_tensor(zmask, A.ACL_UINT8) for k in ("mask", "mask2", "mask3")})
    T = {k: v[0] for k, v in tensors.items()}
    dims = A.aclCreateIntArray(shape)

    # 4.-7. phase 1, workspace, phase 2, synchronize — once per call
    calls = [("aclnnDropoutGenMask", (dims, p, seed, 0, T["mask"])),
             ("aclnnDropoutDoMask", (T["x"], T["mask"], p, T["y"])),
             ("aclnnDropoutBackward", (T["g"], T["mask"], 1 / (1 - p), T["dx"])),
             ("aclnnDropout", (T["x"], p, True, seed, 0, T["y2"], T["mask2"])),
             ("aclnnDropout", (T["x"], p, True, seed, 1, T["y3"], T["mask3"])),
             ("aclnnDropout", (T["x"], p, False, seed, 2, T["y4"], None))]
    for api, args in calls:
        ws, ex, ret = getattr(A, api + "GetWorkspaceSize")(*args)
        CHECK_RET(ret == 0, api + "GetWorkspaceSize")
        run(api, ws, ex, stream)

    # 8. copy back and check
    host = {k: to_host(tensors[k][1], zmask if k.startswith("mask") else zeros) for k in tensors if k not in ("x", "g")}
    keep = np.unpackbits(host["mask"], bitorder="little")[:n].reshape(shape).astype(bool)
    xd, gd = x.astype(np.float64), g.astype(np.float64)
    checks = {
        "keep fraction near 1 - p": abs(keep.mean() - (1 - p)) < 0.1,
        "padding bits are 0": not np.unpackbits(host["mask"], bitorder="little")[n:].any(),
        "DoMask = x/(1-p) where kept": np.allclose(host["y"], np.where(keep, xd / (1 - p), 0), rtol=2e-3, atol=1e-3),
        "Backward = g/(1-p) where kept": np.allclose(host["dx"], np.where(keep, gd / (1 - p), 0), rtol=2e-3, atol=1e-3),
        "Dropout: same (seed, offset) -> same mask": np.array_equal(host["mask2"], host["mask"]),
        "Dropout: out = DoMask's out": np.array_equal(host["y2"], host["y"]),
        "Dropout: next offset -> a fresh mask": not np.array_equal(host["mask3"], host["mask"]),
        "Dropout, train = false: a copy": np.array_equal(host["y4"], x),
    }
    for what, good in checks.items():
        print(f"{what:<45} {'PASS' if good else 'FAIL'}")
    print(f"kept {keep.sum()} of {n} elements; first mask bytes: {host['mask'][:6]}")

    # 9. destroy everything, free memory, reset device, finalize
    A.aclDestroyIntArray(dims)
    for t, dev in tensors.values():
        A.aclDestroyTensor(t)
        CHECK_RET(acl.rt.free(dev) == 0, "aclrtFree")
    CHECK_RET(acl.rt.destroy_stream(stream) == 0, "aclrtDestroyStream")
    CHECK_RET(acl.rt.reset_device(device_id) == 0, "aclrtResetDevice")
    CHECK_RET(acl.finalize() == 0, "aclFinalize")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
