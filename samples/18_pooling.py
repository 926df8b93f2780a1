"""The pooling family in CANN's sample-program order, as a CNN training step uses it: on a (2, 4, 9, 10)
FLOAT batch, aclnnMaxPool2dWithIndices (3x3, stride 2, padding 1, ceil mode, INT64 indices) and its
backward, aclnnAvgPool2d (2x2, count_include_pad false) and its backward, aclnnAdaptiveAvgPool2d to
3x3 and its backward; then 3-D: aclnnMaxPool3dWithArgmax and aclnnAvgPool3d with their backward ops
on a (1, 2, 5, 6, 7) volume. Every backward is deterministic (a fixed-order gather, no atomics).
Each result is compared with a float64 NumPy reference. Run it: ``python samples/18_pooling.py``.
"""
import itertools

import numpy as np

import aclnn_py as A
from aclnn_py import acl
from acl_sample import CHECK_RET, create_acl_tensor, to_host, run

APIS = ["aclnnMaxPool2dWithIndices", "aclnnMaxPool2dWithIndicesBackward", "aclnnAvgPool2d", "aclnnAvgPool2dBackward",
        "aclnnAdaptiveAvgPool2d", "aclnnAdaptiveAvgPool2dBackward", "aclnnMaxPool3dWithArgmax",
        "aclnnMaxPool3dWithArgmaxBackward", "aclnnAvgPool3d", "aclnnAvgPool3dBackward"]


def out_len(i, k, s, p, ceil):
    o = (i + 2 * p - k + (s - 1 if ceil else 0)) // s + 1
    return o - 1 if ceil and (o - 1) * s >= i + p else o


def windows(x, k, s, p, ceil):
    """Per output position: the list of flat input indices of its window (inside the input)."""
    sp = x.shape[2:]
    osp = [out_len(i, kk, ss, pp, ceil) for i, kk, ss, pp in zip(sp, k, s, p)]
    win = {}
    for o in itertools.product(*map(range, osp)):
        ranges = [range(max(oo * ss - pp, 0), min(oo * ss - pp + kk, n)) for oo, ss, pp, kk, n in zip(o, s, p, k, sp)]
        padded = [min(oo * ss - pp + kk, n + pp) - (oo * ss - pp) for oo, ss, pp, kk, n in zip(o, s, p, k, sp)]
        win[o] = ([int(np.ravel_multi_index(q, sp)) for q in itertools.product(*ranges)], int(np.prod(padded)))
    return osp, win


def ref_max(x, k, s, p, ceil, g):
    osp, win = windows(x, k, s, p, ceil)
    N, C = x.shape[:2]
    flat = x.reshape(N, C, -1)
    y, idx, dx = np.zeros((N, C, *osp)), np.zeros((N, C, *osp), np.int64), np.zeros_like(flat)
    for o, (w, _) in win.items():
        vals = flat[:, :, w]
        arg = np.argmax(vals, axis=2)             # the first maximum
        y[(slice(None), slice(None), *o)] = np.take_along_axis(vals, arg[..., None], 2)[..., 0]
        idx[(slice(None), slice(None), *o)] = np.asarray(w)[arg]
    for n, c in itertools.product(range(N), range(C)):
        np.add.at(dx[n, c], idx[n, c].ravel(), g[n, c].ravel())
    return y, idx, dx.reshape(x.shape)


def ref_avg(x, k, s, p, ceil, cip, g):
    osp, win = windows(x, k, s, p, ceil)
    N, C = x.shape[:2]
    flat = x.reshape(N, C, -1)
    y, dx = np.zeros((N, C, *osp)), np.zeros_like(flat)
    for o, (w, padded) in win.items():
        div = padded if cip else len(w)
        y[(slice(None), slice(None), *o)] = flat[:, :, w].sum(2) / div
        dx[:, :, w] += g[(slice(None), slice(None), *o)][..., None] / div
    return y, dx.reshape(x.shape)


def ref_adaptive(x, osz, g):
    H, W = x.shape[2:]
    y, dx = np.zeros((*x.shape[:2], *osz)), np.zeros_like(x)
    for oh, ow in itertools.product(range(osz[0]), range(osz[1])):
        h0, h1 = oh * H // osz[0], -(-(oh + 1) * H // osz[0])
        w0, w1 = ow * W // osz[1], -(-(ow + 1) * W // osz[1])
        y[:, :, oh, ow] = x[:, :, h0:h1, w0:w1].mean((2, 3))
        dx[:, :, h0:h1, w0:w1] += g[:, :, oh:oh + 1, ow:ow + 1] / ((h1 - h0) * (w1 - w0))
    return y, dx


def main() -> int:
    ok = True

    def check(name, got, ref, tol=1e-5):
        nonlocal ok
        err = np.abs(got - ref).max()
        good = bool(np.allclose(got, ref, rtol=tol, atol=tol))
        ok &= good
        print(f"{name:<36} max |error| vs float64: {err:.2e} -> {'PASS' if good else 'FAIL'}")

    # 1. init, device, stream
    CHECK_RET(acl.init() == 0, "aclInit")
    CHECK_RET(acl.rt.set_device(0) == 0, "aclrtSetDevice")
    stream, ret = acl.rt.create_stream()
    CHECK_RET(ret == 0, "aclrtCreateStream")
    rng = np.random.default_rng(18)
    ia = A.aclCreateIntArray
    tensors = []

    def tensor(host, dt=A.ACL_FLOAT):
        t = create_acl_tensor(host, dt, A.ACL_FORMAT_NCHW if host.ndim == 4 else A.ACL_FORMAT_ND)
        tensors.append(t)
        return t

    # 2. 2-D: max pooling with indices, ceil mode, and its backward
    x = rng.standard_normal((2, 4, 9, 10)).astype(np.float32)
    k, s, p = [3, 3], [2, 2], [1, 1]
    g_shape = (2, 4, out_len(9, 3, 2, 1, True), out_len(10, 3, 2, 1, True))
    g = rng.standard_normal(g_shape).astype(np.float32)
    X, G = tensor(x), tensor(g)
    Y, I, DX = tensor(np.zeros(g_shape, np.float32)), tensor(np.zeros(g_shape, np.int64), A.ACL_INT64), \
        tensor(np.zeros_like(x))
    ws, ex, ret = A.aclnnMaxPool2dWithIndicesGetWorkspaceSize(X[0], ia(k), ia(s), ia(p), ia([1, 1]), True, Y[0], I[0])
    CHECK_RET(ret == 0, "aclnnMaxPool2dWithIndicesGetWorkspaceSize")
    run("aclnnMaxPool2dWithIndices", ws, ex, stream)
    ws, ex, ret = A.aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(G[0], X[0], I[0], ia(k), ia(s), ia(p), ia([1, 1]),
                                                                      True, DX[0])
    CHECK_RET(ret == 0, "aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize")
    run("aclnnMaxPool2dWithIndicesBackward", ws, ex, stream)
    y_ref, i_ref, dx_ref = ref_max(x.astype(np.float64), k, s, p, True, g.astype(np.float64))
    check("MaxPool2dWithIndices out", to_host(Y[1], np.zeros(g_shape, np.float32)), y_ref)
    check("MaxPool2dWithIndices indices", to_host(I[1], np.zeros(g_shape, np.int64)), i_ref, 0)
    check("MaxPool2dWithIndicesBackward", to_host(DX[1], x), dx_ref)

    # 3. 2-D average pooling (2x2, no padding counted) and adaptive average pooling to 3x3
    ka, sa, pa = [2, 2], [2, 2], [1, 1]
    a_shape = (2, 4, out_len(9, 2, 2, 1, False), out_len(10, 2, 2, 1, False))
    ga = rng.standard_normal(a_shape).astype(np.float32)
    YA, GA = tensor(np.zeros(a_shape, np.float32)), tensor(ga)
    ws, ex, ret = A.aclnnAvgPool2dGetWorkspaceSize(X[0], ia(ka), ia(sa), ia(pa), False, False, 0, 0, YA[0])
    CHECK_RET(ret == 0, "aclnnAvgPool2dGetWorkspaceSize")
    run("aclnnAvgPool2d", ws, ex, stream)
    ws, ex, ret = A.aclnnAvgPool2dBackwardGetWorkspaceSize(GA[0], X[0], ia(ka), ia(sa), ia(pa), False, False, 0, 0,
                                                           DX[0])
    CHECK_RET(ret == 0, "aclnnAvgPool2dBackwardGetWorkspaceSize")
    run("aclnnAvgPool2dBackward", ws, ex, stream)
    ya_ref, dxa_ref = ref_avg(x.astype(np.float64), ka, sa, pa, False, False, ga.astype(np.float64))
    check("AvgPool2d out", to_host(YA[1], np.zeros(a_shape, np.float32)), ya_ref)
    check("AvgPool2dBackward", to_host(DX[1], x), dxa_ref)
    gq = rng.standard_normal((2, 4, 3, 3)).astype(np.float32)
    YQ, GQ = tensor(np.zeros((2, 4, 3, 3), np.float32)), tensor(gq)
    ws, ex, ret = A.aclnnAdaptiveAvgPool2dGetWorkspaceSize(X[0], ia([3, 3]), YQ[0])
    CHECK_RET(ret == 0, "aclnnAdaptiveAvgPool2dGetWorkspaceSize")
    run("aclnnAdaptiveAvgPool2d", ws, ex, stream)
    ws, ex, ret = A.aclnnAdaptiveAvgPool2dBackwardGetWorkspaceSize(GQ[0], X[0], DX[0])
    CHECK_RET(ret == 0, "aclnnAdaptiveAvgPool2dBackwardGetWorkspaceSize")
    run("aclnnAdaptiveAvgPool2dBackward", ws, ex, stream)
    yq_ref, dxq_ref = ref_adaptive(x.astype(np.float64), (3, 3), gq.astype(np.float64))
    check("AdaptiveAvgPool2d out", to_host(YQ[1], np.zeros((2, 4, 3, 3), np.float32)), yq_ref)
    check("AdaptiveAvgPool2dBackward", to_host(DX[1], x), dxq_ref)

    # 4. 3-D: max pooling with argmax and average pooling (2x2x2, stride 2, padding 1)
    v = rng.standard_normal((1, 2, 5, 6, 7)).astype(np.float32)
    k3, s3, p3 = [2, 2, 2], [2, 2, 2], [1, 1, 1]
    o3 = (1, 2, *[out_len(n, 2, 2, 1, False) for n in (5, 6, 7)])
    g3 = rng.standard_normal(o3).astype(np.float32)
    V, G3 = tensor(v), tensor(g3)
    Y3, I3, DV = tensor(np.zeros(o3, np.float32)), tensor(np.zeros(o3, np.int32), A.ACL_INT32), tensor(np.zeros_like(v))
    ws, ex, ret = A.aclnnMaxPool3dWithArgmaxGetWorkspaceSize(V[0], ia(k3), ia(s3), ia(p3), ia([1]), False, Y3[0], I3[0])
    CHECK_RET(ret == 0, "aclnnMaxPool3dWithArgmaxGetWorkspaceSize")
    run("aclnnMaxPool3dWithArgmax", ws, ex, stream)
    ws, ex, ret = A.aclnnMaxPool3dWithArgmaxBackwardGetWorkspaceSize(G3[0], V[0], I3[0], ia(k3), ia(s3), ia(p3), ia([1]),
                                                                     False, DV[0])
    CHECK_RET(ret == 0, "aclnnMaxPool3dWithArgmaxBackwardGetWorkspaceSize")
    run("aclnnMaxPool3dWithArgmaxBackward", ws, ex, stream)
    y3_ref, _, dv_ref = ref_max(v.astype(np.float64), k3, s3, p3, False, g3.astype(np.float64))
    check("MaxPool3dWithArgmax out", to_host(Y3[1], np.zeros(o3, np.float32)), y3_ref)
    check("MaxPool3dWithArgmaxBackward", to_host(DV[1], v), dv_ref)
    ws, ex, ret = A.aclnnAvgPool3dGetWorkspaceSize(V[0], ia(k3), ia(s3), ia(p3), False, True, 0, Y3[0])
    CHECK_RET(ret == 0, "aclnnAvgPool3dGetWorkspaceSize")
    run("aclnnAvgPool3d", ws, ex, stream)
    ws, ex, ret = A.aclnnAvgPool3dBackwardGetWorkspaceSize(G3[0], V[0], ia(k3), ia(s3), ia(p3), False, True, 0, DV[0])
    CHECK_RET(ret == 0, "aclnnAvgPool3dBackwardGetWorkspaceSize")
    run("aclnnAvgPool3dBackward", ws, ex, stream)
    y3a_ref, dva_ref = ref_avg(v.astype(np.float64), k3, s3, p3, False, True, g3.astype(np.float64))
    check("AvgPool3d out", to_host(Y3[1], np.zeros(o3, np.float32)), y3a_ref)
    check("AvgPool3dBackward", to_host(DV[1], v), dva_ref)

    # 5. destroy everything, free memory, reset device, finalize
    for t, dev in tensors:
        A.aclDestroyTensor(t)
        CHECK_RET(acl.rt.free(dev) == 0, "aclrtFree")
    CHECK_RET(acl.rt.destroy_stream(stream) == 0, "aclrtDestroyStream")
    CHECK_RET(acl.rt.reset_device(0) == 0, "aclrtResetDevice")
    CHECK_RET(acl.finalize() == 0, "aclFinalize")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
