"""cuDNN rows 2005, 2013, 2019 and 2020 through ``aclnn_py.cudnn``: an AlexNet-style LRN layer, a
divisive (local contrast) normalization layer and a spatial transformer, forward and backward, as a
cuDNN program writes them (LRN descriptor, spatial-transformer descriptor, alpha/beta blending).

    y = LRN(x)                      dx = LRNCrossChannelBackward(y, dy, x)
    v = DivisiveNormalization(x, means)   dv, dmeans = DivisiveNormalizationBackward(...)
    grid = GridGenerator(theta)     z = Sampler(x, grid)
    dx, dgrid = SamplerBackward(...)      dtheta = GridGeneratorBackward(dgrid)

Each result is compared with a float64 NumPy reference (gradients by central differences of the
float64 forward). Run it: ``python samples/21_cudnn_lrn_spatial_transformer.py``.
"""
import numpy as np

from aclnn_py import acl
from aclnn_py import cudnn as c
from acl_sample import CHECK_CUDNN, CHECK_RET, Verdicts, to_device, to_host

APIS = ["cudnnLRNCrossChannelBackward", "cudnnDivisiveNormalizationBackward", "cudnnSpatialTfGridGeneratorBackward",
        "cudnnSpatialTfSamplerBackward", "aclnnpyLrnCrossChannel", "aclnnpyLrnCrossChannelBackward",
        "aclnnpyDivisiveNormalization", "aclnnpyDivisiveNormalizationBackward", "aclnnAffineGrid",
        "aclnnpyAffineGridBackward", "aclnnGridSampler2D", "aclnnGridSampler2DBackward"]


def lrn(x, n, a, b, k):
    lo, C = (n - 1) // 2, x.shape[1]
    s = np.zeros_like(x)
    for ch in range(C):
        for j in range(max(0, ch - lo), min(C, ch - lo + n)):
            s[:, ch] += x[:, j] ** 2
    return x * (k + a / n * s) ** -b


def divnorm(x, m, n, a, b, k):
    u = x - m
    lo = (n - 1) // 2
    sq = np.pad(u * u, [(0, 0), (0, 0), (lo, n - 1 - lo), (lo, n - 1 - lo)])
    s = sum(sq[:, :, i:i + u.shape[2], j:j + u.shape[3]] for i in range(n) for j in range(n))
    return u * (k + a / n ** 2 * s) ** -b


def bilinear(x, grid):
    """cuDNN's sampler (align corners, zero padding) in float64."""
    N, C, Hin, Win = x.shape
    out = np.zeros((N, C, *grid.shape[1:3]))
    for n_ in range(N):
        for h in range(grid.shape[1]):
            for w in range(grid.shape[2]):
                ix, iy = (grid[n_, h, w, 0] + 1) / 2 * (Win - 1), (grid[n_, h, w, 1] + 1) / 2 * (Hin - 1)
                x0, y0 = int(np.floor(ix)), int(np.floor(iy))
                for yy, xx, wt in ((y0, x0, (x0 + 1 - ix) * (y0 + 1 - iy)), (y0, x0 + 1, (ix - x0) * (y0 + 1 - iy)),
                                   (y0 + 1, x0, (x0 + 1 - ix) * (iy - y0)), (y0 + 1, x0 + 1, (ix - x0) * (iy - y0))):
                    if 0 <= yy < Hin and 0 <= xx < Win:
                        out[n_, :, h, w] += wt * x[n_, :, yy, xx]
    return out


def num_grad(f, x, dy, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = np.sum(dy * (f(xp) - f(xm))) / (2 * eps)
    return g


def main() -> int:
    check = Verdicts(42)

    CHECK_RET(acl.init() == 0, "aclInit")
    CHECK_RET(acl.rt.set_device(0) == 0, "aclrtSetDevice")
    stream, ret = acl.rt.create_stream()
    CHECK_RET(ret == 0, "aclrtCreateStream")
    handle, st = c.cudnnCreate()
    CHECK_CUDNN(st, "cudnnCreate")
    CHECK_CUDNN(c.cudnnSetStream(handle, stream), "cudnnSetStream")
    rng = np.random.default_rng(21)
    N, C, H, W = 2, 6, 5, 5
    x_h = rng.standard_normal((N, C, H, W)).astype(np.float32)
    dy_h = rng.standard_normal((N, C, H, W)).astype(np.float32)
    m_h = (rng.standard_normal((N, C, H, W)) * 0.2).astype(np.float32)
    xr, dyr, mr = (v.astype(np.float64) for v in (x_h, dy_h, m_h))
    desc, _ = c.cudnnCreateTensorDescriptor()
    CHECK_CUDNN(c.cudnnSetTensor4dDescriptor(desc, c.CUDNN_TENSOR_NCHW, c.CUDNN_DATA_FLOAT, N, C, H, W), "SetTensor4d")
    x, dy, means = to_device(x_h), to_device(dy_h), to_device(m_h)
    zeros = np.zeros_like(x_h)
    y, dx, temp, temp2, dmeans = (to_device(zeros) for _ in range(5))
    host = lambda dev, like=zeros: to_host(dev, like).astype(np.float64)     # noqa: E731

    # 1. LRN across channels (AlexNet's n = 5, alpha = 1e-4·n... here a visible alpha)
    lrn_desc, _ = c.cudnnCreateLRNDescriptor()
    n, a, b, k = 5, 0.5, 0.75, 2.0
    CHECK_CUDNN(c.cudnnSetLRNDescriptor(lrn_desc, n, a, b, k), "cudnnSetLRNDescriptor")
    mode = c.CUDNN_LRN_CROSS_CHANNEL_DIM1
    CHECK_CUDNN(c.cudnnLRNCrossChannelForward(handle, lrn_desc, mode, 1.0, desc, x, 0.0, desc, y), "LRN forward")
    CHECK_CUDNN(c.cudnnLRNCrossChannelBackward(handle, lrn_desc, mode, 1.0, desc, y, desc, dy, desc, x, 0.0, desc, dx),
                "cudnnLRNCrossChannelBackward")
    CHECK_RET(acl.rt.synchronize_stream(stream) == 0, "sync")
    check("LRNCrossChannelForward", host(y), lrn(xr, n, a, b, k), 1e-5)
    check("LRNCrossChannelBackward", host(dx), num_grad(lambda v: lrn(v, n, a, b, k), xr, dyr), 1e-4)

    # 2. divisive normalization with precomputed means (3x3 window), both gradients
    CHECK_CUDNN(c.cudnnSetLRNDescriptor(lrn_desc, 3, 0.9, 0.5, 1.0), "cudnnSetLRNDescriptor")
    dmode = c.CUDNN_DIVNORM_PRECOMPUTED_MEANS
    CHECK_CUDNN(c.cudnnDivisiveNormalizationForward(handle, lrn_desc, dmode, 1.0, desc, x, means, temp, temp2, 0.0,
                                                    desc, y), "cudnnDivisiveNormalizationForward")
    CHECK_CUDNN(c.cudnnDivisiveNormalizationBackward(handle, lrn_desc, dmode, 1.0, desc, x, means, dy, temp, temp2,
                                                     0.0, desc, dx, dmeans), "cudnnDivisiveNormalizationBackward")
    CHECK_RET(acl.rt.synchronize_stream(stream) == 0, "sync")
    f = lambda v: divnorm(v, mr, 3, 0.9, 0.5, 1.0)      # noqa: E731
    check("DivisiveNormalizationForward", host(y), f(xr), 1e-5)
    gx = num_grad(f, xr, dyr)
    check("DivisiveNormalizationBackward dx", host(dx), gx, 1e-4)
    check("DivisiveNormalizationBackward dmeans", host(dmeans), -gx, 1e-4)

    # 3. spatial transformer: theta -> grid -> sample; backward to dx, dgrid, dtheta
    Ho, Wo = 4, 6
    st_desc, _ = c.cudnnCreateSpatialTransformerDescriptor()
    CHECK_CUDNN(c.cudnnSetSpatialTransformerNdDescriptor(st_desc, c.CUDNN_SAMPLER_BILINEAR, c.CUDNN_DATA_FLOAT, 4,
                                                         [N, C, Ho, Wo]), "cudnnSetSpatialTransformerNdDescriptor")
    out_desc, _ = c.cudnnCreateTensorDescriptor()
    CHECK_CUDNN(c.cudnnSetTensor4dDescriptor(out_desc, c.CUDNN_TENSOR_NCHW, c.CUDNN_DATA_FLOAT, N, C, Ho, Wo), "desc")
    theta_h = np.array([[[0.83, 0.21, 0.071], [-0.17, 0.94, -0.053]],
                        [[1.07, -0.13, -0.12], [0.11, 0.77, 0.093]]], np.float32)
    theta = to_device(theta_h)
    gshape = np.zeros((N, Ho, Wo, 2), np.float32)
    zshape = np.zeros((N, C, Ho, Wo), np.float32)
    grid, dgrid, dtheta = to_device(gshape), to_device(gshape), to_device(np.zeros_like(theta_h))
    z = to_device(zshape)
    dz_h = rng.standard_normal(zshape.shape).astype(np.float32)
    dz = to_device(dz_h)
    CHECK_CUDNN(c.cudnnSpatialTfGridGeneratorForward(handle, st_desc, theta, grid), "GridGeneratorForward")
    CHECK_CUDNN(c.cudnnSpatialTfSamplerForward(handle, st_desc, 1.0, desc, x, grid, 0.0, out_desc, z), "SamplerForward")
    CHECK_CUDNN(c.cudnnSpatialTfSamplerBackward(handle, st_desc, 1.0, desc, x, 0.0, desc, dx, 1.0, out_desc, dz, grid,
                                                0.0, dgrid), "cudnnSpatialTfSamplerBackward")
    CHECK_CUDNN(c.cudnnSpatialTfGridGeneratorBackward(handle, st_desc, dgrid, dtheta),
                "cudnnSpatialTfGridGeneratorBackward")
    CHECK_RET(acl.rt.synchronize_stream(stream) == 0, "sync")
    th = theta_h.astype(np.float64)
    xs, ys = np.linspace(-1, 1, Wo), np.linspace(-1, 1, Ho)
    base = np.stack(np.broadcast_arrays(xs[None, :], ys[:, None], np.ones((Ho, Wo))), -1)   # (Ho, Wo, 3)
    gen = lambda t: np.einsum("hwk,nik->nhwi", base, t)                                    # noqa: E731
    g_ref = gen(th)
    dzr = dz_h.astype(np.float64)
    check("SpatialTfGridGeneratorForward", host(grid, gshape), g_ref, 1e-5)
    check("SpatialTfSamplerForward", host(z, zshape), bilinear(xr, g_ref), 1e-5)
    check("SpatialTfSamplerBackward dx", host(dx), num_grad(lambda v: bilinear(v, g_ref), xr, dzr), 1e-4)
    dg_ref = num_grad(lambda g: bilinear(xr, g), g_ref, dzr)
    check("SpatialTfSamplerBackward dgrid", host(dgrid, gshape), dg_ref, 1e-3)
    check("SpatialTfGridGeneratorBackward dtheta", host(dtheta, theta_h),
          np.einsum("hwk,nhwi->nik", base, host(dgrid, gshape)), 1e-4)

    for d in (desc, out_desc):
        CHECK_CUDNN(c.cudnnDestroyTensorDescriptor(d), "cudnnDestroyTensorDescriptor")
    CHECK_CUDNN(c.cudnnDestroyLRNDescriptor(lrn_desc), "cudnnDestroyLRNDescriptor")
    CHECK_CUDNN(c.cudnnDestroySpatialTransformerDescriptor(st_desc), "cudnnDestroySpatialTransformerDescriptor")
    CHECK_CUDNN(c.cudnnDestroy(handle), "cudnnDestroy")
    for p in (x, dy, means, y, dx, temp, temp2, dmeans, theta, grid, dgrid, dtheta, z, dz):
        CHECK_RET(acl.rt.free(p) == 0, "aclrtFree")
    CHECK_RET(acl.rt.destroy_stream(stream) == 0, "aclrtDestroyStream")
    CHECK_RET(acl.rt.reset_device(0) == 0, "aclrtResetDevice")
    CHECK_RET(acl.finalize() == 0, "aclFinalize")
    return 0 if check.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
