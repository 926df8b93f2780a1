"""OpInfos of the pooling family (aclnn_py/ops/pooling.py): max pooling with indices, average and
adaptive average pooling, 2-D and 3-D, forward and backward.

The float64 references are NumPy (windows by kernel offset over a padded input; max: first maximum,
NaN wins, PyTorch's rule); PyTorch (max_pool2d_with_indices / max_pool3d_with_indices, avg_pool2d/3d,
adaptive_avg_pool2d, with autograd in float64) cross-checks where installed. Samples: every dtype,
3-D/4-D (4-D/5-D) inputs, every layout, kernel/stride/padding/dilation of each documented length
(stride empty = kernel), ceil_mode (with the dropped last window), count_include_pad,
divisor_override, INT32 and INT64 indices, ties and NaN; errors name the argument.
"""
from __future__ import annotations

import itertools

import numpy as np

import aclnn_py as A
from harness import Sample, TensorSpec
from opdb import ErrorCase, OpInfo

F32, F16, BF16, I32, I64 = A.ACL_FLOAT, A.ACL_FLOAT16, A.ACL_BF16, A.ACL_INT32, A.ACL_INT64
INVALID, NULLPTR = A.ACLNN_ERR_PARAM_INVALID, A.ACLNN_ERR_PARAM_NULLPTR
ND, NCHW = A.ACL_FORMAT_ND, A.ACL_FORMAT_NCHW
IA = A.aclCreateIntArray


def out_size(i, k, s, p, d, ceil):
    num = i + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    o = num // s + 1
    if ceil and (o - 1) * s >= i + p:
        o -= 1
    return o


def _full(v, S):
    v = list(v)
    return v * S if len(v) == 1 else v


def _params(S, k, s, p, d):
    k = _full(k, S)
    s = _full(s, S) if len(s) else list(k)
    return k, s, _full(p, S), _full(d, S)


# float64 references ----------------------------------------------------------------------------------

def _as_batched(x, S):
    return (x[None], True) if x.ndim == S + 1 else (x, False)


def _windows(x, S, k, s, p, d, ceil):
    """For each kernel offset: (values, valid mask, flat input index) over the output grid."""
    sp = x.shape[2:]
    osp = [out_size(i, kk, ss, pp, dd, ceil) for i, kk, ss, pp, dd in zip(sp, k, s, p, d)]
    for off in itertools.product(*[range(kk) for kk in k]):
        pos = [np.arange(o) * ss - pp + a * dd for o, ss, pp, a, dd in zip(osp, s, p, off, d)]
        valid = np.ones(osp, bool)
        idx = [np.clip(q, 0, n - 1) for q, n in zip(pos, sp)]
        for ax, (q, n) in enumerate(zip(pos, sp)):
            shape = [1] * S
            shape[ax] = len(q)
            valid &= ((q >= 0) & (q < n)).reshape(shape)
        grids = np.meshgrid(*idx, indexing="ij")
        vals = x[(slice(None), slice(None), *grids)]
        flat = np.zeros(osp, np.int64)
        for g, n in zip(grids, sp):
            flat = flat * n + g
        yield off, vals, valid, flat, osp


def max_pool(x, S, k, s, p, d, ceil):
    xb, unb = _as_batched(x, S)
    best = bidx = None
    for _, v, valid, flat, osp in _windows(xb, S, k, s, p, d, ceil):
        if best is None:
            best = np.zeros(xb.shape[:2] + tuple(osp))
            bidx = np.full(best.shape, -1, np.int64)
        with np.errstate(invalid="ignore"):
            take = valid & ((bidx < 0) | (v > best) | np.isnan(v))
        best = np.where(take, v, best)
        bidx = np.where(take, np.broadcast_to(flat, best.shape), bidx)
    return (best[0], bidx[0]) if unb else (best, bidx)


def max_pool_backward(g, x, idx, S):
    gb, unb = _as_batched(g, S)
    xb, _ = _as_batched(x, S)
    ib, _ = _as_batched(idx, S)
    N, C = xb.shape[:2]
    dx = np.zeros((N, C, int(np.prod(xb.shape[2:]))))
    for n in range(N):
        for c in range(C):
            np.add.at(dx[n, c], ib[n, c].ravel(), gb[n, c].ravel())
    dx = dx.reshape(xb.shape)
    return dx[0] if unb else dx


def _avg_div(S, k, s, p, osp, sp, valid_count, cip, divisor):
    if divisor:
        return np.full(osp, float(divisor))
    if not cip:
        return valid_count
    size = np.ones(osp)
    for ax, (o, ss, pp, kk, n) in enumerate(zip(osp, s, p, k, sp)):
        start = np.arange(o) * ss - pp
        end = np.minimum(start + kk, n + pp)
        shape = [1] * S
        shape[ax] = o
        size = size * (end - start).reshape(shape)
    return size


def avg_pool(x, S, k, s, p, ceil, cip, divisor):
    xb, unb = _as_batched(x, S)
    tot = cnt = None
    for _, v, valid, flat, osp in _windows(xb, S, k, s, p, [1] * S, ceil):
        if tot is None:
            tot, cnt = np.zeros(xb.shape[:2] + tuple(osp)), np.zeros(osp)
        tot += np.where(valid, v, 0)
        cnt += valid
    div = _avg_div(S, k, s, p, tot.shape[2:], xb.shape[2:], cnt, cip, divisor)
    y = tot / div
    return y[0] if unb else y


def avg_pool_backward(g, x, S, k, s, p, ceil, cip, divisor):
    gb, unb = _as_batched(g, S)
    xb, _ = _as_batched(x, S)
    N, C = xb.shape[:2]
    dx = np.zeros((N, C, int(np.prod(xb.shape[2:]))))
    wins = list(_windows(xb, S, k, s, p, [1] * S, ceil))
    cnt = sum(w[2].astype(float) for w in wins)
    div = _avg_div(S, k, s, p, gb.shape[2:], xb.shape[2:], cnt, cip, divisor)
    q = gb / div
    for _, _, valid, flat, _ in wins:
        for n in range(N):
            for c in range(C):
                np.add.at(dx[n, c], flat[valid], q[n, c][valid])
    dx = dx.reshape(xb.shape)
    return dx[0] if unb else dx


def _adaptive_bounds(o, n, on):
    return (o * n) // on, -(-((o + 1) * n) // on)


def adaptive_avg(x, osz):
    xb, unb = _as_batched(x, 2)
    H, W = xb.shape[2:]
    y = np.zeros(xb.shape[:2] + tuple(osz))
    for oh in range(osz[0]):
        h0, h1 = _adaptive_bounds(oh, H, osz[0])
        for ow in range(osz[1]):
            w0, w1 = _adaptive_bounds(ow, W, osz[1])
            y[:, :, oh, ow] = xb[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    return y[0] if unb else y


def adaptive_avg_backward(g, x):
    gb, unb = _as_batched(g, 2)
    xb, _ = _as_batched(x, 2)
    H, W = xb.shape[2:]
    OH, OW = gb.shape[2:]
    dx = np.zeros(xb.shape)
    for oh in range(OH):
        h0, h1 = _adaptive_bounds(oh, H, OH)
        for ow in range(OW):
            w0, w1 = _adaptive_bounds(ow, W, OW)
            dx[:, :, h0:h1, w0:w1] += gb[:, :, oh:oh + 1, ow:ow + 1] / ((h1 - h0) * (w1 - w0))
    return dx[0] if unb else dx


# samples ------------------------------------------------------------------------------------------------

def _ts(v, dt, layout="contiguous", fmt=None):
    v = np.asarray(v, np.float64)
    return TensorSpec(v, dt, fmt if fmt is not None else (NCHW if v.ndim == 4 else ND), layout)


def _round(v, dt):
    return _ts(v, dt).rounded()


def make_max(S, bwd):
    def make(rng, shape, k=(2,), s=(), p=(0,), d=(1,), ceil=False, dt=F32, idt=I64, *, layout="contiguous",
             values=None, note=""):
        x = rng.standard_normal(shape) if values is None else np.asarray(values, np.float64)
        kk, ss, pp, dd = _params(S, k, s, p, d)
        xr = _round(x, dt)
        y, idx = max_pool(xr, S, kk, ss, pp, dd, ceil)
        attrs = {"kernel_size": IA(list(k)), "stride": IA(list(s)), "padding": IA(list(p)), "dilation": IA(list(d)),
                 "ceil_mode": ceil}
        if not bwd:
            return Sample({"self": _ts(x, dt, layout), "out": _ts(np.zeros(y.shape), dt, layout),
                           "indices": _ts(np.zeros(y.shape), idt, layout)}, attrs, note=note)
        return Sample({"grad_output": _ts(rng.standard_normal(y.shape), dt, layout), "self": _ts(x, dt, layout),
                       # integer values: the generic tests perturb float ones (indices must name window members)
                       "indices": TensorSpec(idx.astype(np.int64), idt, NCHW if idx.ndim == 4 else ND, layout),
                       "grad_input": _ts(np.zeros(x.shape), dt, layout)},
                      attrs, note=note)
    return make


def make_avg(S, bwd):
    two = S == 2
    st, pd = ("strides", "paddings") if two and not bwd else ("stride", "padding")
    out = ("grad_input" if two else "output") if bwd else "out"

    def make(rng, shape, k=(2,), s=(), p=(0,), ceil=False, cip=True, divisor=0, dt=F32, *, layout="contiguous",
             values=None, note=""):
        x = rng.standard_normal(shape) if values is None else np.asarray(values, np.float64)
        kk, ss, pp, _ = _params(S, k, s, p, (1,))
        y = avg_pool(_round(x, dt), S, kk, ss, pp, ceil, cip, divisor)
        attrs = {"kernel_size": IA(list(k)), st: IA(list(s)), pd: IA(list(p)), "ceil_mode": ceil,
                 "count_include_pad": cip, "divisor_override": divisor}
        if two:
            attrs["cube_math_type"] = 1
        if not bwd:
            return Sample({"self": _ts(x, dt, layout), out: _ts(np.zeros(y.shape), dt, layout)}, attrs, note=note)
        return Sample({"grad_output": _ts(rng.standard_normal(y.shape), dt, layout), "self": _ts(x, dt, layout),
                       out: _ts(np.zeros(x.shape), dt, layout)}, attrs, note=note)
    return make


def make_adaptive(bwd):
    def make(rng, shape, osz=(2, 3), dt=F32, *, layout="contiguous", note=""):
        x = rng.standard_normal(shape)
        y = adaptive_avg(_round(x, dt), list(osz) * (2 // len(osz)))
        if not bwd:
            return Sample({"self": _ts(x, dt, layout), "out": _ts(np.zeros(y.shape), dt, layout)},
                          {"output_size": IA(list(osz))}, note=note)
        return Sample({"grad_output": _ts(rng.standard_normal(y.shape), dt, layout), "self": _ts(x, dt, layout),
                       "out": _ts(np.zeros(x.shape), dt, layout)}, {}, note=note)
    return make


def max_samples(S, bwd):
    m = make_max(S, bwd)
    big, small = ((2, 3, 7, 8), (3, 6, 5)) if S == 2 else ((2, 2, 5, 6, 7), (2, 4, 5, 6))

    def samples(rng):
        out = [m(rng, big, (3,), (2,), (1,), note="k3 s2 p1"), m(rng, small, (2,), note="unbatched, k2")]
        for dt in (F32, F16, BF16):
            out += [m(rng, big, (3,), (2,), (1,), dt=dt, note=f"{A.aclDataType(dt).name}"),
                    m(rng, big, (2,), (1,), dt=dt, layout="channels_last", note=f"{A.aclDataType(dt).name} NHWC")]
        k3 = (2, 3) if S == 2 else (2, 3, 2)
        out += [
            m(rng, big, k3, (1,) * 1, (1,), note="rectangular kernel, stride 1"),
            m(rng, big, (3,), (2,), (1,), ceil=True, note="ceil mode"),
            m(rng, (1, 2, *([5] * S)), (2,), (2,), (1,), ceil=True, note="ceil mode: last window dropped"),
            m(rng, big, (2,), (2,), (0,), (2,), note="dilation 2"),
            m(rng, big, (3,), (2,), (1,), idt=I32, note="INT32 indices"),
            m(rng, big, (3,), (3,), (1,), layout="strided", note="strided views"),
            m(rng, big, (2,), layout="offset", note="offset views"),
            m(rng, big, (2,), layout="transposed", note="transposed"),
            m(rng, big, (3,), (1,), (1,), values=np.round(rng.standard_normal(big)), note="ties: the first max"),
            m(rng, big, (2,), values=np.where(rng.random(big) < 0.1, np.nan, rng.standard_normal(big)), note="NaN wins"),
            m(rng, big, (1,), note="kernel 1"),
        ]
        if not bwd:
            out.append(m(rng, (0, 3, *([4] * S)), (2,), note="empty batch"))
        return out
    return samples


def avg_samples(S, bwd):
    m = make_avg(S, bwd)
    big, small = ((2, 3, 7, 8), (3, 6, 5)) if S == 2 else ((2, 2, 5, 6, 7), (2, 4, 5, 6))

    def samples(rng):
        out = [m(rng, big, (3,), (2,), (1,), note="k3 s2 p1"), m(rng, small, (2,), note="unbatched")]
        for dt in (F32, F16, BF16):
            out += [m(rng, big, (3,), (2,), (1,), dt=dt, note=f"{A.aclDataType(dt).name}"),
                    m(rng, big, (2,), (1,), dt=dt, layout="channels_last", note=f"{A.aclDataType(dt).name} NHWC")]
        out += [
            m(rng, big, (3,), (2,), (1,), cip=False, note="count_include_pad false"),
            m(rng, big, (3,), (2,), (1,), ceil=True, note="ceil mode"),
            m(rng, big, (3,), (2,), (1,), ceil=True, cip=False, note="ceil, exclude pad"),
            m(rng, big, (2,), (2,), (1,), divisor=3, note="divisor_override 3"),
            m(rng, big, (2,), (2,), (1,), divisor=-2, note="negative divisor_override"),
            m(rng, big, (2,) * S if S == 2 else (2, 1, 3), (1,), note="rectangular kernel"),
            m(rng, big, (3,), (3,), (1,), layout="strided", note="strided"),
            m(rng, big, (2,), layout="offset", note="offset"),
        ]
        if not bwd:
            out.append(m(rng, (0, 3, *([4] * S)), (2,), note="empty batch"))
        return out
    return samples


def adaptive_samples(bwd):
    m = make_adaptive(bwd)

    def samples(rng):
        out = [m(rng, (2, 3, 7, 9), (3, 4), note="7x9 -> 3x4"), m(rng, (3, 5, 5), (2,), note="unbatched, one size")]
        for dt in (F32, F16, BF16):
            out += [m(rng, (2, 3, 6, 6), (4, 5), dt, note=f"{A.aclDataType(dt).name} overlapping windows"),
                    m(rng, (2, 4, 5, 7), (2, 3), dt, layout="channels_last", note=f"{A.aclDataType(dt).name} NHWC")]
        out += [m(rng, (1, 2, 4, 4), (1,), note="global"), m(rng, (1, 2, 3, 3), (5, 5), note="upsampling windows"),
                m(rng, (2, 3, 7, 9), (3, 4), layout="strided", note="strided")]
        if not bwd:
            out.append(m(rng, (0, 3, 4, 4), (2,), note="empty batch"))
        return out
    return samples


# references per op --------------------------------------------------------------------------------------

def _vals(s):
    return {k: v.rounded() for k, v in s.tensors.items() if v is not None}


def _attr_list(s, name):
    return list(s.attrs[name])


def max_ref(S, bwd):
    def ref(s):
        t = _vals(s)
        x = t["self"]
        if x.size == 0:
            return {}
        k, st, p, d = _params(S, _attr_list(s, "kernel_size"), _attr_list(s, "stride"), _attr_list(s, "padding"),
                              _attr_list(s, "dilation"))
        if not bwd:
            y, idx = max_pool(x, S, k, st, p, d, s.attrs["ceil_mode"])
            return {"out": y, "indices": idx.astype(np.float64)}
        return {"grad_input": max_pool_backward(t["grad_output"], x, t["indices"].astype(np.int64), S)}
    return ref


def avg_ref(S, bwd):
    two = S == 2
    st_n, pd_n = ("strides", "paddings") if two and not bwd else ("stride", "padding")
    out = ("grad_input" if two else "output") if bwd else "out"

    def ref(s):
        t = _vals(s)
        x = t["self"]
        if x.size == 0:
            return {}
        k, st, p, _ = _params(S, _attr_list(s, "kernel_size"), _attr_list(s, st_n), _attr_list(s, pd_n), [1])
        a = s.attrs
        if not bwd:
            return {out: avg_pool(x, S, k, st, p, a["ceil_mode"], a["count_include_pad"], a["divisor_override"])}
        return {out: avg_pool_backward(t["grad_output"], x, S, k, st, p, a["ceil_mode"], a["count_include_pad"],
                                       a["divisor_override"])}
    return ref


def adaptive_ref(bwd):
    def ref(s):
        t = _vals(s)
        if t["self"].size == 0:
            return {}
        if not bwd:
            osz = _attr_list(s, "output_size")
            return {"out": adaptive_avg(t["self"], osz * (2 // len(osz)))}
        return {"out": adaptive_avg_backward(t["grad_output"], t["self"])}
    return ref


# PyTorch ------------------------------------------------------------------------------------------------

def torch_max(S, bwd):
    def ref(s):
        import torch
        t = _vals(s)
        x = torch.tensor(t["self"], requires_grad=True)
        k, st, p, d = _params(S, _attr_list(s, "kernel_size"), _attr_list(s, "stride"), _attr_list(s, "padding"),
                              _attr_list(s, "dilation"))
        fn = torch.nn.functional.max_pool2d_with_indices if S == 2 else torch.nn.functional.max_pool3d_with_indices
        if np.isnan(t["self"]).any():
            return {}
        y, idx = fn(x, k, st, p, d, ceil_mode=s.attrs["ceil_mode"])
        if not bwd:
            return {"out": y.detach().numpy(), "indices": idx.numpy().astype(np.float64)}
        if not np.array_equal(idx.numpy(), t["indices"].astype(np.int64)):
            return {}                  # the sample's indices come from our reference (ties): compare elsewhere
        y.backward(torch.tensor(t["grad_output"]))
        return {"grad_input": x.grad.numpy()}
    return ref


def torch_avg(S, bwd):
    two = S == 2
    st_n, pd_n = ("strides", "paddings") if two and not bwd else ("stride", "padding")
    out = ("grad_input" if two else "output") if bwd else "out"

    def ref(s):
        import torch
        t = _vals(s)
        a = s.attrs
        k, st, p, _ = _params(S, _attr_list(s, "kernel_size"), _attr_list(s, st_n), _attr_list(s, pd_n), [1])
        x = torch.tensor(t["self"], requires_grad=True)
        fn = torch.nn.functional.avg_pool2d if two else torch.nn.functional.avg_pool3d
        y = fn(x, k, st, p, a["ceil_mode"], a["count_include_pad"], a["divisor_override"] or None)
        if not bwd:
            return {out: y.detach().numpy()}
        y.backward(torch.tensor(t["grad_output"]))
        return {out: x.grad.numpy()}
    return ref


def torch_adaptive(bwd):
    def ref(s):
        import torch
        t = _vals(s)
        x = torch.tensor(t["self"], requires_grad=True)
        osz = list(t["grad_output"].shape[-2:]) if bwd else _attr_list(s, "output_size")
        osz = osz * (2 // len(osz))
        y = torch.nn.functional.adaptive_avg_pool2d(x, osz)
        if not bwd:
            return {"out": y.detach().numpy()}
        y.backward(torch.tensor(t["grad_output"]))
        return {"out": x.grad.numpy()}
    return ref


# errors -------------------------------------------------------------------------------------------------

def _set_attr(name, v):
    return lambda s: s.attrs.__setitem__(name, v)


def _set_t(name, **kv):
    return lambda s: [setattr(s.tensors[name], k, v) for k, v in kv.items()]


def max_errors(S, bwd):
    m = make_max(S, bwd)
    shape = (2, 3, 7, 8) if S == 2 else (2, 2, 5, 6, 7)
    first = "grad_output" if bwd else "self"
    out = "grad_input" if bwd else "out"

    def errors(rng):
        def case(note, status, name, fn):
            s = m(rng, shape, (3,), (2,), (1,), note=note)
            fn(s)
            return ErrorCase(s, status, name)
        return [
            case("self null", NULLPTR, "self", lambda s: s.tensors.__setitem__("self", None)),
            case("indices null", NULLPTR, "indices", lambda s: s.tensors.__setitem__("indices", None)),
            case(f"{out} null", NULLPTR, out, lambda s: s.tensors.__setitem__(out, None)),
            case("kernel_size null", NULLPTR, "kernel_size", _set_attr("kernel_size", None)),
            case("kernel of 0", INVALID, "kernel_size", _set_attr("kernel_size", IA([0]))),
            case(f"kernel of {S + 1} values", INVALID, "kernel_size", _set_attr("kernel_size", IA([2] * (S + 1)))),
            case("stride 0", INVALID, "stride", _set_attr("stride", IA([0]))),
            case(f"stride of {S + 1} values", INVALID, "stride", _set_attr("stride", IA([1] * (S + 1)))),
            case("padding over half the kernel", INVALID, "padding", _set_attr("padding", IA([2]))),
            case("negative padding", INVALID, "padding", _set_attr("padding", IA([-1]))),
            case("empty padding", INVALID, "padding", _set_attr("padding", IA([]))),
            case("dilation 0", INVALID, "dilation", _set_attr("dilation", IA([0]))),
            case("kernel larger than the padded input", INVALID, "kernel_size",
                 _set_attr("kernel_size", IA([11] * S))),
            case("INT32 data", INVALID, "self", _set_t("self", dtype=I32)),
            case("FLOAT indices", INVALID, "indices", _set_t("indices", dtype=F32)),
            case(f"{out} dtype differs", INVALID, out, _set_t(out, dtype=F16)),
            case("out shape wrong" if not bwd else "grad_output shape wrong", INVALID, "out" if not bwd else first,
                 _set_t("out" if not bwd else first, values=np.zeros((2, 3, *([1] * S))))),
            case("rank too small", INVALID, "rank", lambda s: [setattr(s.tensors[n], "values", np.zeros((4,) * S))
                                                               for n in s.tensors if s.tensors[n] is not None]),
        ]
    return errors


def avg_errors(S, bwd):
    m = make_avg(S, bwd)
    shape = (2, 3, 7, 8) if S == 2 else (2, 2, 5, 6, 7)
    two = S == 2
    st_n, pd_n = ("strides", "paddings") if two and not bwd else ("stride", "padding")
    out = ("grad_input" if two else "output") if bwd else "out"

    def errors(rng):
        def case(note, status, name, fn):
            s = m(rng, shape, (3,), (2,), (1,), note=note)
            fn(s)
            return ErrorCase(s, status, name)
        cases = [
            case("self null", NULLPTR, "self", lambda s: s.tensors.__setitem__("self", None)),
            case(f"{out} null", NULLPTR, out, lambda s: s.tensors.__setitem__(out, None)),
            case("kernel of 0", INVALID, "kernel_size", _set_attr("kernel_size", IA([0]))),
            case(f"{st_n} of {S + 1} values", INVALID, st_n, _set_attr(st_n, IA([1] * (S + 1)))),
            case("padding over half the kernel", INVALID, pd_n, _set_attr(pd_n, IA([2]))),
            case("divisor_override beyond int32", INVALID, "divisor_override", _set_attr("divisor_override", 2 ** 40)),
            case("INT32 data", INVALID, "self", _set_t("self", dtype=I32)),
            case(f"{out} dtype differs", INVALID, out, _set_t(out, dtype=BF16)),
        ]
        if two:
            cases.append(case("cube_math_type 7", INVALID, "cube_math_type", _set_attr("cube_math_type", 7)))
        if bwd:
            s = m(rng, (0, 3, 7, 8) if two else (0, 2, 5, 6, 7), (3,), (2,), (1,), note="empty tensors")
            cases.append(ErrorCase(s, INVALID, "grad_output"))
        return cases
    return errors


def adaptive_errors(bwd):
    m = make_adaptive(bwd)

    def errors(rng):
        def case(note, status, name, fn):
            s = m(rng, (2, 3, 7, 9), (3, 4), note=note)
            fn(s)
            return ErrorCase(s, status, name)
        cases = [case("self null", NULLPTR, "self", lambda s: s.tensors.__setitem__("self", None)),
                 case("out null", NULLPTR, "out", lambda s: s.tensors.__setitem__("out", None)),
                 case("out dtype differs", INVALID, "out", _set_t("out", dtype=F16)),
                 case("INT32", INVALID, "self", _set_t("self", dtype=I32))]
        if not bwd:
            cases += [case("output_size 0", INVALID, "output_size", _set_attr("output_size", IA([0, 2]))),
                      case("output_size of 3", INVALID, "output_size", _set_attr("output_size", IA([1, 2, 3]))),
                      case("out shape wrong", INVALID, "out", _set_t("out", values=np.zeros((2, 3, 4, 4))))]
        else:
            cases.append(case("grad_output batch differs", INVALID, "grad_output",
                              _set_t("grad_output", values=np.zeros((3, 3, 3, 4)))))
        return cases
    return errors


def _in_place_layouts(s):
    layouts = {t.layout for t in s.tensors.values() if t is not None}
    return len(layouts) == 1 and layouts <= {"contiguous", "channels_last", "offset"}


def _dd(s):
    return next(t.dtype for n, t in s.tensors.items() if t is not None and n != "indices")


OPS = []
for _S, _mx, _av in ((2, "MaxPool2dWithIndices", "AvgPool2d"), (3, "MaxPool3dWithArgmax", "AvgPool3d")):
    OPS += [
        OpInfo(_mx, max_samples(_S, False), max_ref(_S, False), max_errors(_S, False), ("out", "indices"),
               torch_reference=torch_max(_S, False), data_dtype_of=_dd, zero_workspace=_in_place_layouts, data="self"),
        OpInfo(_mx + "Backward", max_samples(_S, True), max_ref(_S, True), max_errors(_S, True), ("grad_input",),
               torch_reference=torch_max(_S, True), data_dtype_of=_dd, zero_workspace=_in_place_layouts, data="self"),
        OpInfo(_av, avg_samples(_S, False), avg_ref(_S, False), avg_errors(_S, False), ("out",),
               torch_reference=torch_avg(_S, False), zero_workspace=_in_place_layouts, data="self"),
        OpInfo(_av + "Backward", avg_samples(_S, True), avg_ref(_S, True), avg_errors(_S, True),
               ("grad_input" if _S == 2 else "output",), torch_reference=torch_avg(_S, True),
               zero_workspace=_in_place_layouts, data="self"),
    ]
OPS += [
    OpInfo("AdaptiveAvgPool2d", adaptive_samples(False), adaptive_ref(False), adaptive_errors(False), ("out",),
           torch_reference=torch_adaptive(False), zero_workspace=_in_place_layouts, data="self"),
    OpInfo("AdaptiveAvgPool2dBackward", adaptive_samples(True), adaptive_ref(True), adaptive_errors(True), ("out",),
           torch_reference=torch_adaptive(True), zero_workspace=_in_place_layouts, data="self"),
]


# benchmarks (benchmarks/bench_ops.py): calls of any NCHW shape, NCHW or channels-last --------------

_TDT = {F32: "float32", F16: "float16", BF16: "bfloat16"}


def _bench_shape(S, shape):
    return tuple(shape) if S == 2 else (shape[0], shape[1], 4, max(shape[2] // 2, 2), max(shape[3] // 2, 2))


def bench_max(S, bwd):
    def bench(rng, shape, dt, cl):
        return make_max(S, bwd)(rng, _bench_shape(S, shape), (3,), (2,), (1,), dt=dt,
                                layout="channels_last" if cl else "contiguous", note="bench")
    return bench


def bench_avg(S, bwd):
    def bench(rng, shape, dt, cl):
        return make_avg(S, bwd)(rng, _bench_shape(S, shape), (3,), (2,), (1,), dt=dt,
                                layout="channels_last" if cl else "contiguous", note="bench")
    return bench


def _torch_tensors(s, device):
    import torch
    return {n: torch.from_numpy(t.rounded()).to(device=device, dtype=getattr(torch, _TDT.get(t.dtype, "int64")))
            for n, t in s.tensors.items() if t is not None}


def torch_gpu_max(S, bwd):
    def make(s, device):
        import torch
        t = _torch_tensors(s, device)
        k, st, p, d = _params(S, _attr_list(s, "kernel_size"), _attr_list(s, "stride"), _attr_list(s, "padding"),
                              _attr_list(s, "dilation"))
        if not bwd:
            fn = torch.nn.functional.max_pool2d_with_indices if S == 2 else torch.nn.functional.max_pool3d_with_indices
            return lambda: fn(t["self"], k, st, p, d)
        op = torch.ops.aten.max_pool2d_with_indices_backward if S == 2 else torch.ops.aten.max_pool3d_with_indices_backward
        return lambda: op(t["grad_output"], t["self"], k, st, p, d, False, t["indices"])
    return make


def torch_gpu_avg(S, bwd):
    def make(s, device):
        import torch
        t = _torch_tensors(s, device)
        two = S == 2
        st_n, pd_n = ("strides", "paddings") if two and not bwd else ("stride", "padding")
        k, st, p, _ = _params(S, _attr_list(s, "kernel_size"), _attr_list(s, st_n), _attr_list(s, pd_n), [1])
        if not bwd:
            fn = torch.nn.functional.avg_pool2d if two else torch.nn.functional.avg_pool3d
            return lambda: fn(t["self"], k, st, p)
        op = torch.ops.aten.avg_pool2d_backward if two else torch.ops.aten.avg_pool3d_backward
        return lambda: op(t["grad_output"], t["self"], k, st, p, False, True, None)
    return make


for _info in OPS:
    _S = 3 if "3d" in _info.name else 2
    _bwd = _info.name.endswith("Backward")
    if _info.name.startswith("MaxPool"):
        _info.bench, _info.torch_gpu = bench_max(_S, _bwd), torch_gpu_max(_S, _bwd)
    elif _info.name.startswith("AvgPool"):
        _info.bench, _info.torch_gpu = bench_avg(_S, _bwd), torch_gpu_avg(_S, _bwd)
