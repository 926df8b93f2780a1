"""The pooling family in CANN's sample-program order: max pooling with indices (2-D and 3-D), average
pooling (2-D and 3-D) and adaptive average pooling, each forward then backward on the forward's
results, on a (2, 3, 9, 10) FLOAT16 batch (a (2, 2, 5, 6, 7) FLOAT one for 3-D pooling).

    MaxPool2dWithIndices   k (3, 3), stride (2, 2), padding (1, 1), dilation (1, 1), ceil_mode: INT64 indices
    AvgPool2d              k (3, 2), strides () (= kernel), paddings (1, 1), ceil_mode, count_include_pad off
    MaxPool3dWithArgmax    k 2, stride 2, padding 1, INT32 indices;   AvgPool3d  k 3, stride 2, padding 1
    AdaptiveAvgPool2d      output (4, 3)

Backward ops gather per input element (no atomics: bitwise reproducible). Each result is compared
with a float64 NumPy reference. Run it: ``python samples/18_pooling.py``.
"""
import itertools

import numpy as np

import aclnn_py as A
from aclnn_py import acl
from acl_sample import CHECK_RET, create_acl_tensor, to_host, run

APIS = ["aclnnMaxPool2dWithIndices", "aclnnMaxPool2dWithIndicesBackward", "aclnnAvgPool2d", "aclnnAvgPool2dBackward",
        "aclnnMaxPool3dWithArgmax", "aclnnMaxPool3dWithArgmaxBackward", "aclnnAvgPool3d", "aclnnAvgPool3dBackward",
        "aclnnAdaptiveAvgPool2d", "aclnnAdaptiveAvgPool2dBackward"]


def out_size(i, k, s, p, d=1, ceil=False):
    o = (i + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    return o - 1 if ceil and (o - 1) * s >= i + p else o


def windows(insz, k, s, p, ceil):
    """Per output position: (the in-bounds slices, the padded window size), PyTorch's rule."""
    osz = [out_size(i, kk, ss, pp, 1, ceil) for i, kk, ss, pp in zip(insz, k, s, p)]
    for o in itertools.product(*map(range, osz)):
        st = [oo * ss - pp for oo, ss, pp in zip(o, s, p)]
        en = [min(a + kk, i + pp) for a, kk, i, pp in zip(st, k, insz, p)]
        sl = tuple(slice(max(a, 0), min(b, i)) for a, b, i in zip(st, en, insz))
        yield o, sl, int(np.prod([b - a for a, b in zip(st, en)])), osz


def max_ref(x, k, s, p, ceil):
    nd = len(k)
    insz = x.shape[-nd:]
    osz = next(windows(insz, k, s, p, ceil))[3]
    y, idx = np.zeros(x.shape[:-nd] + tuple(osz)), np.zeros(x.shape[:-nd] + tuple(osz), np.int64)
    for o, sl, _, _ in windows(insz, k, s, p, ceil):
        win = x[(Ellipsis, *sl)].reshape(*x.shape[:-nd], -1)
        j = win.argmax(axis=-1)                        # first maximum
        y[(Ellipsis, *o)] = win.max(axis=-1)
        local = np.unravel_index(j, [b.stop - b.start for b in sl])
        idx[(Ellipsis, *o)] = np.ravel_multi_index([l + b.start for l, b in zip(local, sl)], insz)
    return y, idx


def max_bwd_ref(g, idx, shape, nd):
    gx = np.zeros((int(np.prod(shape[:-nd])), int(np.prod(shape[-nd:]))))
    gf, jf = g.reshape(gx.shape[0], -1), idx.reshape(gx.shape[0], -1)
    for q in range(gf.shape[1]):
        gx[np.arange(gx.shape[0]), jf[:, q]] += gf[:, q]
    return gx.reshape(shape)


def avg_ref(x, k, s, p, ceil, cip):
    nd = len(k)
    osz = next(windows(x.shape[-nd:], k, s, p, ceil))[3]
    y = np.zeros(x.shape[:-nd] + tuple(osz))
    for o, sl, pool, _ in windows(x.shape[-nd:], k, s, p, ceil):
        n = pool if cip else int(np.prod([b.stop - b.start for b in sl]))
        y[(Ellipsis, *o)] = x[(Ellipsis, *sl)].sum(axis=tuple(range(-nd, 0))) / n
    return y


def avg_bwd_ref(g, shape, k, s, p, ceil, cip):
    nd = len(k)
    gx = np.zeros(shape)
    for o, sl, pool, _ in windows(shape[-nd:], k, s, p, ceil):
        n = pool if cip else int(np.prod([b.stop - b.start for b in sl]))
        gx[(Ellipsis, *sl)] += (g[(Ellipsis, *o)] / n)[(Ellipsis,) + (None,) * nd]
    return gx


def adaptive_ref(x, osz, g=None):
    out = np.zeros(x.shape[:-2] + tuple(osz)) if g is None else np.zeros(x.shape)
    for o in itertools.product(*map(range, osz)):
        sl = tuple(slice(oo * i // on, -(-(oo + 1) * i // on)) for oo, on, i in zip(o, osz, x.shape[-2:]))
        if g is None:
            out[(Ellipsis, *o)] = x[(Ellipsis, *sl)].mean(axis=(-2, -1))
        else:
            n = (sl[0].stop - sl[0].start) * (sl[1].stop - sl[1].start)
            out[(Ellipsis, *sl)] += (g[(Ellipsis, *o)] / n)[..., None, None]
    return out


def main() -> int:
    device_id = 0
    # 1. init, device, stream
    CHECK_RET(acl.init() == 0, "aclInit")
    CHECK_RET(acl.rt.set_device(device_id) == 0, "aclrtSetDevice")
    stream, ret = acl.rt.create_stream()
    CHECK_RET(ret == 0, "aclrtCreateStream")

    # 2. host data
    rng = np.random.default_rng(18)
    x2 = rng.standard_normal((2, 3, 9, 10)).astype(np.float16)
    x3 = rng.standard_normal((2, 2, 5, 6, 7)).astype(np.float32)
    IA = A.aclCreateIntArray
    mk, ms, mp = [3, 3], [2, 2], [1, 1]                       # MaxPool2dWithIndices, ceil_mode
    ak, ap = [3, 2], [1, 1]                                   # AvgPool2d, strides () = kernel, ceil_mode
    x2d = x2.astype(np.float64)
    x3d = x3.astype(np.float64)
    ym2, im2 = max_ref(x2d, mk, ms, mp, True)
    ya2 = avg_ref(x2d, ak, ak, ap, True, False)
    ym3, im3 = max_ref(x3d, [2] * 3, [2] * 3, [1] * 3, False)
    ya3 = avg_ref(x3d, [3] * 3, [2] * 3, [1] * 3, False, True)
    yad = adaptive_ref(x2d, (4, 3))
    g = {n: rng.standard_normal(v.shape).astype(x.dtype) for n, v, x in
         (("m2", ym2, x2), ("a2", ya2, x2), ("m3", ym3, x3), ("a3", ya3, x3), ("ad", yad, x2))}

    # 3. device buffers and tensors
    host = {"x2": x2, "x3": x3, "ym2": np.zeros(ym2.shape, np.float16), "im2": np.zeros(ym2.shape, np.int64),
            "ya2": np.zeros(ya2.shape, np.float16), "ym3": np.zeros(ym3.shape, np.float32),
            "im3": np.zeros(ym3.shape, np.int32), "ya3": np.zeros(ya3.shape, np.float32),
            "yad": np.zeros(yad.shape, np.float16),
            **{f"g{n}": v for n, v in g.items()},
            **{f"dx{n}": np.zeros((x2 if n in ("m2", "a2", "ad") else x3).shape,
                                  np.float16 if n in ("m2", "a2", "ad") else np.float32) for n in g}}
    dt = {np.dtype(np.float16): A.ACL_FLOAT16, np.dtype(np.float32): A.ACL_FLOAT, np.dtype(np.int64): A.ACL_INT64,
          np.dtype(np.int32): A.ACL_INT32}
    tensors = {n: create_acl_tensor(v, dt[v.dtype], A.ACL_FORMAT_NCHW if v.ndim == 4 else A.ACL_FORMAT_ND)
               for n, v in host.items()}
    T = {k: v[0] for k, v in tensors.items()}

    # 4.-7. phase 1, workspace, phase 2, synchronize — once per op, forward before backward
    calls = [
        ("aclnnMaxPool2dWithIndices", (T["x2"], IA(mk), IA(ms), IA(mp), IA([1, 1]), True, T["ym2"], T["im2"])),
        ("aclnnMaxPool2dWithIndicesBackward", (T["gm2"], T["x2"], T["im2"], IA(mk), IA(ms), IA(mp), IA([1, 1]), True,
                                               T["dxm2"])),
        ("aclnnAvgPool2d", (T["x2"], IA(ak), IA([]), IA(ap), True, False, 0, 0, T["ya2"])),
        ("aclnnAvgPool2dBackward", (T["ga2"], T["x2"], IA(ak), IA([]), IA(ap), True, False, 0, 0, T["dxa2"])),
        ("aclnnMaxPool3dWithArgmax", (T["x3"], IA([2]), IA([2]), IA([1]), IA([1]), False, T["ym3"], T["im3"])),
        ("aclnnMaxPool3dWithArgmaxBackward", (T["gm3"], T["x3"], T["im3"], IA([2]), IA([2]), IA([1]), IA([1]), False,
                                              T["dxm3"])),
        ("aclnnAvgPool3d", (T["x3"], IA([3]), IA([2]), IA([1]), False, True, 0, T["ya3"])),
        ("aclnnAvgPool3dBackward", (T["ga3"], T["x3"], IA([3]), IA([2]), IA([1]), False, True, 0, T["dxa3"])),
        ("aclnnAdaptiveAvgPool2d", (T["x2"], IA([4, 3]), T["yad"])),
        ("aclnnAdaptiveAvgPool2dBackward", (T["gad"], T["x2"], T["dxad"])),
    ]
    for name, args in calls:
        ws, ex, ret = getattr(A, name + "GetWorkspaceSize")(*args)
        CHECK_RET(ret == 0, name + "GetWorkspaceSize")
        run(name, ws, ex, stream)

    # 8. copy back, compare with float64 references
    out = {n: to_host(tensors[n][1], host[n]) for n in host if n[0] in "yid"}
    gd = {n: v.astype(np.float64) for n, v in g.items()}
    refs = {"ym2": ym2, "im2": im2, "ya2": ya2, "ym3": ym3, "im3": im3, "ya3": ya3, "yad": yad,
            "dxm2": max_bwd_ref(gd["m2"], out["im2"], x2.shape, 2),
            "dxa2": avg_bwd_ref(gd["a2"], x2.shape, ak, ak, ap, True, False),
            "dxm3": max_bwd_ref(gd["m3"], out["im3"], x3.shape, 3),
            "dxa3": avg_bwd_ref(gd["a3"], x3.shape, [3] * 3, [2] * 3, [1] * 3, False, True),
            "dxad": adaptive_ref(x2d, (4, 3), gd["ad"])}
    ok = True
    for n, ref in refs.items():
        got = out[n].astype(np.float64)
        tol = 2e-3 if out[n].dtype == np.float16 else 1e-5
        good = got.shape == ref.shape and np.allclose(got, ref, rtol=tol, atol=tol)
        ok &= good
        err = np.abs(got - ref).max() if got.shape == ref.shape else np.inf
        print(f"{n:<5} {str(got.shape):<18} max |error| vs float64 reference: {err:.3e} -> {'PASS' if good else 'FAIL'}")
    print(f"max-pool 2-D indices of the first plane: {out['im2'][0, 0].tolist()}")

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
