"""The grid family in CANN's sample-program order, as a spatial transformer's training step does it: aclnnAffineGrid turns a (2, 2, 3) FLOAT theta into a (2, 6, 7, 2) sampling grid (align_corners = True, cuDNN's convention), aclnnGridSampler2D samples a (2, 3, 5, 8) batch with it (bilinear, zeros padding), aclnnGridSampler2DBackward gives input_grad and grid_grad of an upstream gradient (output_mask [true, true]), and aclnnpyAffineGridBackward (an aclnn-py extension) turns grid_grad into theta's gradient; last, bicubic sampling with reflection padding.

Each result is compared with a float64 NumPy reference. Run it: ``python samples/20_grid_sampler.py``.
"""
import numpy as np

import aclnn_py as A
from aclnn_py import acl
from acl_sample import CHECK_RET, create_acl_tensor, to_host, run

APIS = ["aclnnAffineGrid", "aclnnGridSampler2D", "aclnnGridSampler2DBackward", "aclnnpyAffineGridBackward"]


def base_grid(H, W):
    """(H*W, 3) rows (x, y, 1), align_corners = True."""
    ys, xs = np.meshgrid(np.linspace(-1, 1, H), np.linspace(-1, 1, W), indexing="ij")
    return np.stack([xs.ravel(), ys.ravel(), np.ones(H * W)], 1)


def bilinear(x, grid, gout):
    """Bilinear, zeros padding, align_corners = True: (out, input_grad, grid_grad) in float64."""
    N, C, IH, IW = x.shape
    out = np.zeros((N, C) + grid.shape[1:3])
    dx, dg = np.zeros_like(x), np.zeros_like(grid)
    for n, h, w in np.ndindex(N, *grid.shape[1:3]):
        ix, iy = (grid[n, h, w, 0] + 1) / 2 * (IW - 1), (grid[n, h, w, 1] + 1) / 2 * (IH - 1)
        x0, y0 = int(np.floor(ix)), int(np.floor(iy))
        for yy, xx in ((y0, x0), (y0, x0 + 1), (y0 + 1, x0), (y0 + 1, x0 + 1)):
            if 0 <= yy < IH and 0 <= xx < IW:
                wx, wy = 1 - abs(ix - xx), 1 - abs(iy - yy)
                v, g = x[n, :, yy, xx], gout[n, :, h, w]
                out[n, :, h, w] += v * wx * wy
                dx[n, :, yy, xx] += g * wx * wy
                dg[n, h, w, 0] += (g * v).sum() * np.sign(xx - ix + 1e-300) * wy * (IW - 1) / 2
                dg[n, h, w, 1] += (g * v).sum() * np.sign(yy - iy + 1e-300) * wx * (IH - 1) / 2
    return out, dx, dg


def main() -> int:
    device_id = 0
    # 1. init, device, stream
    CHECK_RET(acl.init() == 0, "aclInit")
    CHECK_RET(acl.rt.set_device(device_id) == 0, "aclrtSetDevice")
    stream, ret = acl.rt.create_stream()
    CHECK_RET(ret == 0, "aclrtCreateStream")

    # 2. host data: a rotation + scale + shift per image, the input batch, an upstream gradient
    rng = np.random.default_rng(20)
    N, C, IH, IW, OH, OW = 2, 3, 5, 8, 6, 7
    a = np.array([0.3, -0.5])
    theta = np.stack([[[1.1 * np.cos(t), -np.sin(t), 0.1], [np.sin(t), 0.9 * np.cos(t), -0.2]] for t in a])
    theta = theta.astype(np.float32)
    x = rng.standard_normal((N, C, IH, IW)).astype(np.float32)
    gy = rng.standard_normal((N, C, OH, OW)).astype(np.float32)
    host = {"theta": theta, "x": x, "gy": gy, "grid": np.zeros((N, OH, OW, 2), np.float32),
            "y": np.zeros_like(gy), "dx": np.zeros_like(x), "dgrid": np.zeros((N, OH, OW, 2), np.float32),
            "dtheta": np.zeros_like(theta), "y3": np.zeros_like(gy)}

    # 3. device buffers and tensors
    tensors = {k: create_acl_tensor(v, A.ACL_FLOAT) for k, v in host.items()}
    T = {k: v[0] for k, v in tensors.items()}
    size = A.aclCreateIntArray([N, C, OH, OW])
    mask = A.aclCreateBoolArray([True, True])

    # 4.-7. phase 1, workspace, phase 2, synchronize — once per op
    ws, ex, ret = A.aclnnAffineGridGetWorkspaceSize(T["theta"], size, True, T["grid"])
    CHECK_RET(ret == 0, "aclnnAffineGridGetWorkspaceSize")
    run("aclnnAffineGrid", ws, ex, stream)
    ws, ex, ret = A.aclnnGridSampler2DGetWorkspaceSize(T["x"], T["grid"], 0, 0, True, T["y"])
    CHECK_RET(ret == 0, "aclnnGridSampler2DGetWorkspaceSize")
    run("aclnnGridSampler2D", ws, ex, stream)
    ws, ex, ret = A.aclnnGridSampler2DBackwardGetWorkspaceSize(T["gy"], T["x"], T["grid"], 0, 0, True, mask,
                                                               T["dx"], T["dgrid"])
    CHECK_RET(ret == 0, "aclnnGridSampler2DBackwardGetWorkspaceSize")
    run("aclnnGridSampler2DBackward", ws, ex, stream)
    ws, ex, ret = A.aclnnpyAffineGridBackwardGetWorkspaceSize(T["dgrid"], size, True, T["dtheta"])
    CHECK_RET(ret == 0, "aclnnpyAffineGridBackwardGetWorkspaceSize")
    run("aclnnpyAffineGridBackward", ws, ex, stream)

    # 8. copy back, compare with float64 references (each op on the device's float32 inputs)
    out = {k: to_host(tensors[k][1], host[k]).astype(np.float64) for k in ("grid", "y", "dx", "dgrid", "dtheta")}
    base = base_grid(OH, OW)
    grid_ref = np.einsum("pk,nrk->npr", base, theta.astype(np.float64)).reshape(N, OH, OW, 2)
    y_ref, dx_ref, dgrid_ref = bilinear(x.astype(np.float64), out["grid"], gy.astype(np.float64))
    dtheta_ref = np.einsum("npr,pk->nrk", out["dgrid"].reshape(N, -1, 2), base)
    refs = {"grid": grid_ref, "y": y_ref, "dx": dx_ref, "dgrid": dgrid_ref, "dtheta": dtheta_ref}
    ok = True
    for name, ref in refs.items():
        err = np.abs(out[name] - ref).max()
        good = np.allclose(out[name], ref, rtol=1e-4, atol=1e-4)
        ok &= good
        print(f"{name:<6} max |error| vs float64 reference: {err:.3e} -> {'PASS' if good else 'FAIL'}")
    # bicubic + reflection: a constant image stays constant (the cubic weights sum to 1; reflection never leaves it)
    ones = np.ones_like(x)
    CHECK_RET(acl.rt.memcpy(tensors["x"][1], ones.nbytes, acl.util.numpy_to_ptr(ones), ones.nbytes,
                            acl.rt.ACL_MEMCPY_HOST_TO_DEVICE) == 0, "aclrtMemcpy")
    ws, ex, ret = A.aclnnGridSampler2DGetWorkspaceSize(T["x"], T["grid"], 2, 2, False, T["y3"])
    CHECK_RET(ret == 0, "aclnnGridSampler2DGetWorkspaceSize")
    run("aclnnGridSampler2D", ws, ex, stream)
    y3 = to_host(tensors["y3"][1], host["y3"])
    good = np.allclose(y3, 1.0, atol=1e-5)
    ok &= good
    print(f"bicubic reflection of a constant image: max |y − 1| = {np.abs(y3 - 1).max():.3e} -> "
          f"{'PASS' if good else 'FAIL'}")

    # 9. destroy everything, free memory, reset device, finalize
    A.aclDestroyIntArray(size)
    A.aclDestroyBoolArray(mask)
    for t, dev in tensors.values():
        A.aclDestroyTensor(t)
        CHECK_RET(acl.rt.free(dev) == 0, "aclrtFree")
    CHECK_RET(acl.rt.destroy_stream(stream) == 0, "aclrtDestroyStream")
    CHECK_RET(acl.rt.reset_device(device_id) == 0, "aclrtResetDevice")
    CHECK_RET(acl.finalize() == 0, "aclFinalize")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
