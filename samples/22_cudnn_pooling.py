"""cuDNN row 2017 through ``aclnn_py.cudnn``: a cuDNN program's pooling layers, forward and backward —
2-D max pooling (3x3, stride 2, padding 1) on an NHWC HALF batch, 2-D average pooling excluding the
padding with blending (y = 1·pool(x) + 0.5·y), and 3-D average pooling including the padding on an
NCDHW FLOAT volume; the pooling descriptor's output-dim queries size the outputs. cudnnPoolingBackward
is deterministic (the max pooling argmax is recomputed from x; a fixed-order gather, no atomics).
Each result is compared with a float64 NumPy reference. Run it: ``python samples/22_cudnn_pooling.py``.
"""
import itertools

import numpy as np

from aclnn_py import acl
from aclnn_py import cudnn as c
from acl_sample import CHECK_CUDNN, CHECK_RET, Verdicts, to_device, to_host

APIS = ["cudnnPoolingBackward", "aclnnMaxPool2dWithIndices", "aclnnMaxPool2dWithIndicesBackward", "aclnnAvgPool2d",
        "aclnnAvgPool2dBackward", "aclnnAvgPool3d", "aclnnAvgPool3dBackward"]


def pool_ref(x, win, pad, stride, mode, g):
    """cuDNN's pooling in float64 (NC + spatial order): y and the gradient dx of sum(g·y)."""
    sp = x.shape[2:]
    osp = [1 + (n + 2 * p - k) // s for n, k, p, s in zip(sp, win, pad, stride)]
    N, C = x.shape[:2]
    flat = x.reshape(N, C, -1)
    y, dx = np.zeros((N, C, *osp)), np.zeros_like(flat)
    for o in itertools.product(*map(range, osp)):
        starts = [oo * s - p for oo, s, p in zip(o, stride, pad)]
        ranges = [range(max(st, 0), min(st + k, n)) for st, k, n in zip(starts, win, sp)]
        w = [int(np.ravel_multi_index(q, sp)) for q in itertools.product(*ranges)]
        at = (slice(None), slice(None), *o)
        if mode == "max":
            arg = np.argmax(flat[:, :, w], 2)
            y[at] = np.take_along_axis(flat[:, :, w], arg[..., None], 2)[..., 0]
            for n, ch in itertools.product(range(N), range(C)):
                dx[n, ch, w[arg[n, ch]]] += g[at][n, ch]
        else:
            div = len(w) if mode == "avg_exclude" else int(np.prod(win))
            y[at] = flat[:, :, w].sum(2) / div
            dx[:, :, w] += g[at][..., None] / div
    return y, dx.reshape(x.shape)


def main() -> int:
    check = Verdicts(40)

    CHECK_RET(acl.init() == 0, "aclInit")
    CHECK_RET(acl.rt.set_device(0) == 0, "aclrtSetDevice")
    stream, ret = acl.rt.create_stream()
    CHECK_RET(ret == 0, "aclrtCreateStream")
    handle, st = c.cudnnCreate()
    CHECK_CUDNN(st, "cudnnCreate")
    CHECK_CUDNN(c.cudnnSetStream(handle, stream), "cudnnSetStream")
    rng = np.random.default_rng(22)
    pool, _ = c.cudnnCreatePoolingDescriptor()
    xDesc, yDesc = c.cudnnCreateTensorDescriptor()[0], c.cudnnCreateTensorDescriptor()[0]
    freed = []

    def layer(name, mode, cmode, shape, fmt, dtype, np_dt, win, pad, stride, beta, tol):
        S = len(win)
        CHECK_CUDNN(c.cudnnSetPoolingNdDescriptor(pool, cmode, c.CUDNN_NOT_PROPAGATE_NAN, S, win, pad, stride),
                    "cudnnSetPoolingNdDescriptor")
        CHECK_CUDNN(c.cudnnSetTensorNdDescriptorEx(xDesc, fmt, dtype, len(shape), shape), "SetTensorNdEx")
        odims, st = c.cudnnGetPoolingNdForwardOutputDim(pool, xDesc, len(shape))
        CHECK_CUDNN(st, "cudnnGetPoolingNdForwardOutputDim")
        CHECK_CUDNN(c.cudnnSetTensorNdDescriptorEx(yDesc, fmt, dtype, len(odims), odims), "SetTensorNdEx")
        perm = [0, *range(2, len(shape)), 1] if fmt == c.CUDNN_TENSOR_NHWC else list(range(len(shape)))
        x = rng.standard_normal(shape).astype(np_dt)
        g = rng.standard_normal(odims).astype(np_dt)
        y0 = np.ones(odims, np_dt)
        dev = {n: to_device(np.ascontiguousarray(v.transpose(perm))) for n, v in
               (("x", x), ("g", g), ("y", y0), ("dx", np.zeros_like(x)))}
        freed.extend(dev.values())
        CHECK_CUDNN(c.cudnnPoolingForward(handle, pool, 1.0, xDesc, dev["x"], beta, yDesc, dev["y"]),
                    "cudnnPoolingForward")
        CHECK_CUDNN(c.cudnnPoolingBackward(handle, pool, 1.0, yDesc, dev["y"], yDesc, dev["g"], xDesc, dev["x"], 0.0,
                                           xDesc, dev["dx"]), "cudnnPoolingBackward")
        CHECK_RET(acl.rt.synchronize_stream(stream) == 0, "aclrtSynchronizeStream")
        inv = np.argsort(perm)
        host = lambda d, like: to_host(d, np.ascontiguousarray(like.transpose(perm))).transpose(inv).astype(np.float64)  # noqa: E731
        y_ref, dx_ref = pool_ref(x.astype(np.float64), win, pad, stride, mode, g.astype(np.float64))
        check(f"{name} PoolingForward", host(dev["y"], y0), y_ref + beta * y0.astype(np.float64), tol)
        check(f"{name} PoolingBackward", host(dev["dx"], x), dx_ref, tol)

    layer("2-D max, NHWC HALF", "max", c.CUDNN_POOLING_MAX, [4, 8, 9, 9], c.CUDNN_TENSOR_NHWC, c.CUDNN_DATA_HALF,
          np.float16, [3, 3], [1, 1], [2, 2], 0.0, 4e-3)
    layer("2-D avg (exclude pad), blended", "avg_exclude", c.CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
          [2, 3, 7, 8], c.CUDNN_TENSOR_NCHW, c.CUDNN_DATA_FLOAT, np.float32, [2, 3], [1, 1], [2, 2], 0.5, 1e-5)
    layer("3-D avg (include pad)", "avg_include", c.CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, [1, 2, 5, 6, 7],
          c.CUDNN_TENSOR_NCHW, c.CUDNN_DATA_FLOAT, np.float32, [2, 2, 2], [1, 1, 1], [2, 2, 2], 0.0, 1e-5)

    for d in (xDesc, yDesc):
        CHECK_CUDNN(c.cudnnDestroyTensorDescriptor(d), "cudnnDestroyTensorDescriptor")
    CHECK_CUDNN(c.cudnnDestroyPoolingDescriptor(pool), "cudnnDestroyPoolingDescriptor")
    CHECK_CUDNN(c.cudnnDestroy(handle), "cudnnDestroy")
    for p in freed:
        CHECK_RET(acl.rt.free(p) == 0, "aclrtFree")
    CHECK_RET(acl.rt.destroy_stream(stream) == 0, "aclrtDestroyStream")
    CHECK_RET(acl.rt.reset_device(0) == 0, "aclrtResetDevice")
    CHECK_RET(acl.finalize() == 0, "aclFinalize")
    return 0 if check.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
