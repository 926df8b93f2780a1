"""OpInfos of the pooling family (aclnn.md §5 Pooling): max pooling with indices (2-D, 3-D), average
pooling (2-D, 3-D), adaptive average pooling (2-D), forward and backward.

The float64 references here are written from the definitions (PyTorch's CPU semantics: first
maximum in window order, NaN wins, flat plane indices; average windows clipped at input + pad for
the count_include_pad divisor; adaptive windows [⌊o·I/O⌋, ⌈(o+1)·I/O⌉)), loop by loop, with their
own output-size formula: nothing is imported from the ops module. Backward references scatter (the
kernels gather). Samples cover every dtype (DOUBLE, an aclnn-py extension, with values f32 cannot hold), INT32 and INT64 indices, 3-D/4-D (4-D/5-D) inputs,
NCHW/ND/NCL and NHWC formats, every layout the harness builds (channels-last strides are computed
in place: no workspace), kernel/stride/padding/dilation arrays of every documented length, stride
length 0, ceil_mode with and without the last-window rule firing, count_include_pad,
divisor_override, cube_math_type, size-1 and empty dims, NaN/−inf/ties; error cases name the
argument and the exact status.
"""
from __future__ import annotations

import itertools

import numpy as np

import aclnn_py as A
from harness import Sample, TensorSpec
from opdb import ErrorCase, OpInfo

F32, F16, BF16, I32, I64 = A.ACL_FLOAT, A.ACL_FLOAT16, A.ACL_BF16, A.ACL_INT32, A.ACL_INT64
F64 = A.ACL_DOUBLE
INVALID, NULLPTR = A.ACLNN_ERR_PARAM_INVALID, A.ACLNN_ERR_PARAM_NULLPTR
ND, NCHW, NHWC, NCL, NCDHW, NDHWC = (A.ACL_FORMAT_ND, A.ACL_FORMAT_NCHW, A.ACL_FORMAT_NHWC, A.ACL_FORMAT_NCL,
                                     A.ACL_FORMAT_NCDHW, A.ACL_FORMAT_NDHWC)
IA = A.aclCreateIntArray
CL_FORMATS = (NHWC, NDHWC)


# geometry (PyTorch's pooling_output_shape, written out again here) ------------------------------

def out_size(i, k, s, p, d=1, ceil=False):
    num = i + 2 * p - d * (k - 1) - 1
    o = (num + (s - 1 if ceil else 0)) // s + 1
    if ceil and (o - 1) * s >= i + p:
        o -= 1
    return o


def norm(v, nd, default=None):
    v = list(v)
    if not v:
        return list(default)
    return v * nd if len(v) == 1 else v


def _cf(x, fmt):
    """The array with channels at dim 1 (NHWC/NDHWC data is (N, spatial..., C))."""
    return np.moveaxis(x, -1, 1) if fmt in CL_FORMATS else x


def _uncf(x, fmt):
    return np.moveaxis(x, 1, -1) if fmt in CL_FORMATS else x


# float64 references (channels-first arrays: leading dims, then nd spatial dims) -----------------

def _positions(o, k, s, p, d, insz):
    """Valid input positions of window o, per axis, in window order."""
    return [[st + j * dd for j in range(kk) if 0 <= st + j * dd < i]
            for st, kk, dd, i in zip((oo * ss - pp for oo, ss, pp in zip(o, s, p)), k, d, insz)]


def max_pool_ref(x, nd, k, s, p, d, ceil):
    sp = x.shape[-nd:]
    lead = x.shape[:-nd]
    xf = x.reshape(-1, *sp)
    B = xf.shape[0]
    osz = [out_size(i, kk, ss, pp, dd, ceil) for i, kk, ss, pp, dd in zip(sp, k, s, p, d)]
    y = np.zeros((B, *osz))
    idx = np.zeros((B, *osz), np.int64)
    for o in np.ndindex(*osz):
        pos = _positions(o, k, s, p, d, sp)
        m = np.full(B, -np.inf)
        best = None
        for q in itertools.product(*pos):
            flat = int(np.ravel_multi_index(q, sp))
            if best is None:
                best = np.full(B, flat, np.int64)
            v = xf[(slice(None), *q)]
            upd = (v > m) | np.isnan(v)
            m = np.where(upd, v, m)
            best = np.where(upd, flat, best)
        if best is None:                  # a window wholly in the padding (pad = kernel): PyTorch's index
            first = [st + (-st + dd - 1) // dd * dd if st < 0 else st
                     for st, dd in zip((oo * ss - pp for oo, ss, pp in zip(o, s, p)), d)]
            best = np.full(B, int(np.dot(first, np.cumprod((1,) + tuple(sp[::-1]))[:-1][::-1])), np.int64)
        y[(slice(None), *o)] = m
        idx[(slice(None), *o)] = best
    return y.reshape(*lead, *osz), idx.reshape(*lead, *osz)


def max_pool_bwd_ref(gy, idx, in_shape, nd, k, s, p, d):
    """PyTorch's scatter (in its order), except that an index outside its own window is not followed
    (only a window wholly in the padding, pad = kernel, has one: its gradient has no input to go to)."""
    sp = in_shape[-nd:]
    P = int(np.prod(sp))
    osz = gy.shape[-nd:]
    gyf = gy.reshape(-1, int(np.prod(osz)))
    idf = idx.reshape(gyf.shape)
    gx = np.zeros((gyf.shape[0], P))
    rows = np.arange(gyf.shape[0])
    for q, o in enumerate(np.ndindex(*osz)):            # PyTorch's scatter order
        coords = np.unravel_index(np.clip(idf[:, q], 0, P - 1), sp)
        inside = (idf[:, q] >= 0) & (idf[:, q] < P)
        for c, oo, kk, ss, pp, dd in zip(coords, o, k, s, p, d):
            off = c - (oo * ss - pp)
            inside &= (off >= 0) & (off % dd == 0) & (off // dd < kk)
        np.add.at(gx, (rows[inside], idf[inside, q]), gyf[inside, q])
    return gx.reshape(in_shape)


def _avg_window(o, k, s, p, insz, cip, div):
    st = [oo * ss - pp for oo, ss, pp in zip(o, s, p)]
    en = [min(a + kk, i + pp) for a, kk, i, pp in zip(st, k, insz, p)]
    pool = int(np.prod([b - a for a, b in zip(st, en)]))
    stc = [max(a, 0) for a in st]
    enc = [min(b, i) for b, i in zip(en, insz)]
    if any(a >= b for a, b in zip(stc, enc)):
        return None, None
    sl = tuple(slice(a, b) for a, b in zip(stc, enc))
    divisor = div if div else (pool if cip else int(np.prod([b - a for a, b in zip(stc, enc)])))
    return sl, divisor


def avg_pool_ref(x, nd, k, s, p, ceil, cip, div):
    sp = x.shape[-nd:]
    osz = [out_size(i, kk, ss, pp, 1, ceil) for i, kk, ss, pp in zip(sp, k, s, p)]
    y = np.zeros((*x.shape[:-nd], *osz))
    for o in np.ndindex(*osz):
        sl, dv = _avg_window(o, k, s, p, sp, cip, div)
        if sl is not None:
            y[(Ellipsis, *o)] = x[(Ellipsis, *sl)].sum(axis=tuple(range(-nd, 0))) / dv
    return y


def avg_pool_bwd_ref(gy, in_shape, nd, k, s, p, ceil, cip, div):
    sp = in_shape[-nd:]
    gx = np.zeros(in_shape)
    for o in np.ndindex(*gy.shape[-nd:]):
        sl, dv = _avg_window(o, k, s, p, sp, cip, div)
        if sl is not None:
            gx[(Ellipsis, *sl)] += (gy[(Ellipsis, *o)] / dv)[(Ellipsis,) + (None,) * nd]
    return gx


def _adaptive_sl(o, osz, insz):
    return tuple(slice(oo * i // on, -(-(oo + 1) * i // on)) for oo, on, i in zip(o, osz, insz))


def adaptive_ref(x, osz):
    y = np.zeros((*x.shape[:-2], *osz))
    for o in np.ndindex(*osz):
        y[(Ellipsis, *o)] = x[(Ellipsis, *_adaptive_sl(o, osz, x.shape[-2:]))].mean(axis=(-2, -1))
    return y


def adaptive_bwd_ref(gy, in_shape):
    gx = np.zeros(in_shape)
    osz = gy.shape[-2:]
    for o in np.ndindex(*osz):
        sl = _adaptive_sl(o, osz, in_shape[-2:])
        n = np.prod([b.stop - b.start for b in sl])
        gx[(Ellipsis, *sl)] += (gy[(Ellipsis, *o)] / n)[..., None, None]
    return gx


# samples ----------------------------------------------------------------------------------------

def _spec(values, dtype, fmt=ND, layout="contiguous"):
    return TensorSpec(np.asarray(values), dtype, fmt, layout)


def _rounded(values, dtype):
    return _spec(values, dtype).rounded()


class Win:
    """Window attributes as the caller passes them (arrays of any documented length)."""

    def __init__(self, k, s=(), p=(0,), d=(1,), ceil=False):
        self.k, self.s, self.p, self.d, self.ceil = list(k), list(s), list(p), list(d), ceil

    def full(self, nd):
        k = norm(self.k, nd)
        return k, norm(self.s, nd, k), norm(self.p, nd), norm(self.d, nd)

    def __repr__(self):
        return f"k{self.k} s{self.s} p{self.p} d{self.d}{' ceil' if self.ceil else ''}"


def _pooled_shape(shape, fmt, nd, osz):
    cf = list(np.moveaxis(np.empty(shape, np.int8), -1, 1).shape) if fmt in CL_FORMATS else list(shape)
    cf[-nd:] = osz
    return tuple(np.moveaxis(np.empty(cf, np.int8), 1, -1).shape) if fmt in CL_FORMATS else tuple(cf)


def _data(rng, shape, values=None):
    return rng.standard_normal(shape) if values is None else np.asarray(values, np.float64)


def make_max(nd, backward):
    def make(rng, shape, w: Win, dtype=F32, idx_dtype=I64, *, fmt=ND, layout="contiguous", out_layout=None,
             values=None, note=""):
        x = _data(rng, shape, values)
        k, s, p, d = w.full(nd)
        xr = _cf(_rounded(x, dtype), fmt)
        y, idx = max_pool_ref(xr, nd, k, s, p, d, w.ceil) if xr.size else (None, None)
        osz = [out_size(i, kk, ss, pp, dd, w.ceil) for i, kk, ss, pp, dd in zip(xr.shape[-nd:], k, s, p, d)]
        oshape = _pooled_shape(shape, fmt, nd, osz)
        if idx is None:
            idx = np.zeros(oshape, np.int64)
        else:
            idx = _uncf(idx, fmt)
        attrs = {"kernel_size": IA(w.k), "stride": IA(w.s), "padding": IA(w.p), "dilation": IA(w.d),
                 "ceil_mode": w.ceil}
        ol = out_layout or layout
        if not backward:
            return Sample({"self": _spec(x, dtype, fmt, layout), "out": _spec(np.zeros(oshape), dtype, fmt, ol),
                           "indices": _spec(np.zeros(oshape, np.int64), idx_dtype, fmt, ol)}, attrs,
                          note=f"{note} {w}")
        g = rng.standard_normal(oshape)
        return Sample({"grad_output": _spec(g, dtype, fmt, layout), "self": _spec(x, dtype, fmt, layout),
                       "indices": _spec(idx, idx_dtype, fmt, layout),
                       "grad_input": _spec(np.zeros(shape), dtype, fmt, ol)}, attrs, note=f"{note} {w}")
    return make


def make_avg(nd, backward, names, cube):
    kn, sn, pn = names

    def make(rng, shape, w: Win, dtype=F32, *, cip=True, div=0, cmt=0, fmt=ND, layout="contiguous", out_layout=None,
             values=None, note=""):
        x = _data(rng, shape, values)
        k, s, p, _ = w.full(nd)
        osz = [out_size(i, kk, ss, pp, 1, w.ceil) for i, kk, ss, pp in zip(np.shape(x)[-nd:], k, s, p)]
        oshape = _pooled_shape(shape, fmt, nd, osz)
        attrs = {kn: IA(w.k), sn: IA(w.s), pn: IA(w.p), "ceil_mode": w.ceil, "count_include_pad": cip,
                 "divisor_override": div}
        if cube:
            attrs["cube_math_type"] = cmt
        ol = out_layout or layout
        tag = f"{note} {w}{' cip' if cip else ''}{f' div={div}' if div else ''}"
        if not backward:
            return Sample({"self": _spec(x, dtype, fmt, layout), "out": _spec(np.zeros(oshape), dtype, fmt, ol)},
                          attrs, note=tag)
        out_name = "grad_input" if nd == 2 else "output"
        return Sample({"grad_output": _spec(rng.standard_normal(oshape), dtype, fmt, layout),
                       "self": _spec(x, dtype, fmt, layout), out_name: _spec(np.zeros(shape), dtype, fmt, ol)},
                      attrs, note=tag)
    return make


def make_adaptive(backward):
    def make(rng, shape, osz, dtype=F32, *, fmt=ND, layout="contiguous", out_layout=None, values=None, note=""):
        x = _data(rng, shape, values)
        full = list(osz) * 2 if len(osz) == 1 else list(osz)
        oshape = tuple(shape[:-2]) + tuple(full)
        ol = out_layout or layout
        if not backward:
            return Sample({"self": _spec(x, dtype, fmt, layout), "out": _spec(np.zeros(oshape), dtype, fmt, ol)},
                          {"output_size": IA(osz)}, note=f"{note} out {osz}")
        return Sample({"grad_output": _spec(rng.standard_normal(oshape), dtype, fmt, layout),
                       "self": _spec(x, dtype, fmt, layout), "out": _spec(np.zeros(shape), dtype, fmt, ol)}, {},
                      note=f"{note} out {osz}")
    return make


# sample sets ------------------------------------------------------------------------------------

def _nan_ties(rng, shape):
    x = rng.standard_normal(shape)
    flat = x.reshape(-1)
    flat[::7] = 1.0                       # ties
    flat[3] = np.nan
    flat[10] = -np.inf
    return x


def max_samples(nd, backward):
    make = make_max(nd, backward)

    def samples(rng):
        if nd == 2:
            S4, S3, CL = (2, 3, 7, 8), (3, 9, 10), (2, 6, 7, 3)
            W = [Win([3], [2], [1]), Win([2, 3], [2, 1], [1, 1]), Win([3, 2], [], [1, 0]), Win([2], [1], [0]),
                 Win([3, 3], [2, 2], [1, 1], [2, 1]), Win([2, 3], [1, 2], [1], [1, 2], True),
                 Win([3], [2], [0], ceil=True), Win([2], [2], [1], ceil=True)]
            one, wide, big = (1, 1, 1, 1), (1, 2, 5, 5), (2, 4, 16, 16)
            fmts = [(NCHW, S4), (NHWC, CL)]
            empties = [(0, 3, 5, 5)]
        else:
            S4, S3, CL = (2, 2, 5, 6, 5), (3, 4, 5, 6), None
            W = [Win([2], [2], [1]), Win([2, 3, 2], [1, 2, 2], [1, 1, 0]), Win([3, 2, 2], [], [1, 0, 1]),
                 Win([2], [1], [0], [2, 1, 1]), Win([3], [2], [1], [1, 2, 1], True), Win([2], [2], [1], ceil=True)]
            one, wide, big = (1, 1, 1, 1, 1), (1, 2, 5, 5, 5), (1, 4, 8, 9, 10)
            fmts = [(NCDHW, S4)]
            empties = [(0, 2, 4, 4, 4)]
        out = [make(rng, S4, W[0], note="first")]
        for dt, tag in ((F32, "f32"), (F16, "f16"), (BF16, "bf16"), (F64, "f64")):
            for it in (I32, I64):
                out.append(make(rng, S4, W[1], dt, it, note=f"{tag} idx {A.aclDataType(it).name}"))
        for w in W:
            out.append(make(rng, S4, w, note="window"))
            out.append(make(rng, S3, w, F32, I32, note="unbatched"))
        out.append(make(rng, wide, Win([2], [2], [1], ceil=True), note="last window dropped (ceil rule)"))
        out.append(make(rng, big, Win([3], [2], [1]), F16, note="bigger"))
        for fmt, shape in fmts:
            out.append(make(rng, shape, W[1], fmt=fmt, note=f"format {A.aclFormat(fmt).name}"))
            out.append(make(rng, shape, W[4], BF16, I32, fmt=fmt, note=f"format {A.aclFormat(fmt).name} bf16"))
        for lay in ("channels_last", "transposed", "strided", "offset"):
            out.append(make(rng, S4, W[1], layout=lay, note=f"{lay} views"))
        out.append(make(rng, S4, W[0], out_layout="strided", note="contiguous in, strided outputs"))
        out.append(make(rng, S4, W[0], out_layout="channels_last", note="contiguous in, channels-last outputs"))
        out.append(make(rng, S4, W[0], F16, layout="channels_last", out_layout="contiguous", note="cl in, plain out"))
        out += [make(rng, one, Win([1]), note="all size 1"),
                make(rng, S4, Win(list(S4[-nd:]), [1], [0]), note="global window"),
                make(rng, S4, Win([2], [1], [1]), values=_nan_ties(rng, S4), note="NaN, -inf, ties"),
                make(rng, S4, Win([2], [1], [1]), values=np.full(S4, -2.5), note="constant: all ties"),
                make(rng, S4, Win([3], [1], [1]), F16, values=np.round(rng.standard_normal(S4)), note="f16 ties"),
                # DOUBLE (an aclnn-py extension, f64 compute): NaN/-inf/ties, values f32 cannot tell apart
                make(rng, S4, Win([2], [1], [1]), F64, I32, values=_nan_ties(rng, S4), note="f64 NaN, -inf, ties"),
                make(rng, S4, Win([3], [1], [1]), F64, values=1.0 + rng.integers(0, 4, S4) * 2.0 ** -40,
                     note="f64 values 2^-40 apart"),
                make(rng, S4, W[4], F64, layout="channels_last", note="f64 channels_last views")]
        if CL is not None:
            out.append(make(rng, CL, W[1], F64, fmt=NHWC, note="format NHWC f64"))
            out.append(make(rng, CL, W[0], F16, fmt=NHWC, layout="strided", note="NHWC strided"))
        if backward:                 # indices not from a forward: never followed outside their window
            bad = make(rng, S4, W[0], note="some indices out of the plane (ignored)")
            iv = bad.tensors["indices"].values
            P = int(np.prod(S4[-nd:]))
            junk = rng.choice([-1, -7, P, P + 3, 2 ** 31 - 1], size=iv.shape)
            bad.tensors["indices"].values = np.where(rng.random(iv.shape) < 0.3, junk, iv)
            out.append(bad)
        if backward and nd == 2:     # aclnn.md §5: this backward takes kernel/2 < pad <= kernel (PyTorch does not)
            x_pad = rng.standard_normal(S4)
            out.append(make(rng, S4, Win([3], [1], [2]), note="padding > kernel/2"))
            out.append(make(rng, S4, Win([3], [2], [2, 3]), note="padding up to the kernel", values=x_pad))
        for e in empties:
            out.append(make(rng, e, W[0], note="empty"))
        return out
    return samples


def avg_samples(nd, backward, names, cube, empty_ok):
    make = make_avg(nd, backward, names, cube)

    def samples(rng):
        if nd == 2:
            S4, S3 = (2, 3, 7, 8), (3, 9, 10)
            W = [Win([3], [2], [1]), Win([2, 3], [2, 1], [1, 1]), Win([3, 2], [], [1, 0]), Win([2], [1], [0]),
                 Win([3], [2], [1], ceil=True), Win([2, 3], [1, 2], [1], ceil=True), Win([4, 5], [3], [2, 1], ceil=True)]
            fmts = [(NCHW, S4), (NCL, S3)]
            one, big = (1, 1, 1, 1), (2, 4, 16, 16)
            empties = [(0, 3, 5, 5)]
        else:
            S4, S3 = (2, 2, 5, 6, 5), (3, 4, 5, 6)
            W = [Win([2], [2], [1]), Win([2, 3, 2], [1, 2, 2], [1, 1, 0]), Win([3, 2, 2], [], [1, 0, 1]),
                 Win([3], [2], [1], ceil=True), Win([2], [2], [1], ceil=True), Win([3, 2, 3], [2], [1], ceil=True)]
            fmts = [(NCDHW, S4)]
            one, big = (1, 1, 1, 1, 1), (1, 4, 8, 9, 10)
            empties = [(0, 2, 4, 4, 4)]
        out = [make(rng, S4, W[0], note="first")]
        for dt, tag in ((F32, "f32"), (F16, "f16"), (BF16, "bf16"), (F64, "f64")):
            out.append(make(rng, S4, W[1], dt, note=tag))
            out.append(make(rng, S4, W[4], dt, cip=False, note=f"{tag} exclude pad"))
        for w in W:
            for cip in (True, False):
                out.append(make(rng, S4, w, cip=cip, note="window"))
            out.append(make(rng, S3, w, cip=False, note="unbatched"))
        for div in (3, -2, 1):
            out.append(make(rng, S4, W[4], div=div, note="divisor_override"))
        if cube:
            for cmt in (1, 2, 3):
                out.append(make(rng, S4, W[0], F16, cmt=cmt, note=f"cube_math_type {cmt}"))
        for fmt, shape in fmts:
            out.append(make(rng, shape, W[1], fmt=fmt, note=f"format {A.aclFormat(fmt).name}"))
        for lay in ("channels_last", "transposed", "strided", "offset"):
            out.append(make(rng, S4, W[4], cip=False, layout=lay, note=f"{lay} views"))
        out.append(make(rng, S4, W[0], out_layout="strided", note="contiguous in, strided out"))
        out.append(make(rng, S4, W[0], BF16, layout="channels_last", out_layout="contiguous", note="cl in, plain out"))
        out += [make(rng, one, Win([1]), note="all size 1"),
                make(rng, S4, Win(list(S4[-nd:]), [1], [0]), note="global window"),
                make(rng, big, Win([3], [1], [1]), F16, cip=False, note="bigger"),
                make(rng, S4, Win([2], [1], [1]), values=rng.standard_normal(S4) * 1e3, note="large values"),
                # DOUBLE (an aclnn-py extension, f64 compute)
                make(rng, S4, Win([2], [1], [1]), F64, values=1.0 + rng.standard_normal(S4) * 1e-9,
                     note="f64 values f32 cannot hold"),
                make(rng, S4, W[4], F64, div=3, layout="channels_last", note="f64 channels_last divisor_override"),
                make(rng, S3, W[5], F64, cip=False, note="f64 unbatched exclude pad")]
        if empty_ok:
            for e in empties:
                out.append(make(rng, e, W[0], note="empty"))
        return out
    return samples


def adaptive_samples(backward):
    make = make_adaptive(backward)

    def samples(rng):
        S4, S3 = (2, 3, 7, 9), (3, 10, 6)
        out = [make(rng, S4, [3, 4], note="first")]
        for dt, tag in ((F32, "f32"), (F16, "f16"), (BF16, "bf16"), (F64, "f64")):
            out.append(make(rng, S4, [4, 5], dt, note=tag))
        for osz in ([1, 1], [7, 9], [2], [5, 3], [9, 12], [1, 9]):
            out.append(make(rng, S4, osz, note="sizes"))
            out.append(make(rng, S3, osz, note="unbatched"))
        out.append(make(rng, S4, [3, 4], fmt=NCHW, note="NCHW"))
        out.append(make(rng, S3, [4, 4], fmt=NCL, note="NCL"))
        for lay in ("channels_last", "transposed", "strided", "offset"):
            out.append(make(rng, S4, [3, 4], layout=lay, note=f"{lay} views"))
        out.append(make(rng, S4, [3, 4], out_layout="strided", note="strided out"))
        out.append(make(rng, S4, [5, 3], F64, layout="channels_last", note="f64 channels_last views"))
        out.append(make(rng, S3, [4, 4], F64, values=1.0 + rng.standard_normal(S3) * 1e-9,
                        note="f64 values f32 cannot hold"))
        out.append(make(rng, (1, 1, 1, 1), [1], note="all size 1"))
        out.append(make(rng, (0, 3, 5, 5), [2, 2], note="empty batch"))
        return out
    return samples


# references per op --------------------------------------------------------------------------------

def _vals(s):
    return {k: v.rounded() for k, v in s.tensors.items() if v is not None}


def _win(s, nd, names=("kernel_size", "stride", "padding")):
    k = norm(s.attrs[names[0]].values, nd)
    st = norm(s.attrs[names[1]].values, nd, k)
    p = norm(s.attrs[names[2]].values, nd)
    d = norm(s.attrs["dilation"].values, nd) if "dilation" in s.attrs else [1] * nd
    return k, st, p, d, s.attrs["ceil_mode"]


def ref_max(nd, backward):
    def ref(s):
        t = _vals(s)
        fmt = s.tensors["self"].format
        if not t["self"].size:
            return {}
        k, st, p, d, ceil = _win(s, nd)
        if not backward:
            y, idx = max_pool_ref(_cf(t["self"], fmt), nd, k, st, p, d, ceil)
            return {"out": _uncf(y, fmt), "indices": _uncf(idx, fmt)}
        gx = max_pool_bwd_ref(_cf(t["grad_output"], fmt), _cf(t["indices"], fmt), _cf(t["self"], fmt).shape, nd,
                              k, st, p, d)
        return {"grad_input": _uncf(gx, fmt)}
    return ref


def ref_avg(nd, backward, names):
    def ref(s):
        t = _vals(s)
        fmt = s.tensors["self"].format
        if not t["self"].size:
            return {}
        k, st, p, _, ceil = _win(s, nd, names)
        cip, div = s.attrs["count_include_pad"], s.attrs["divisor_override"]
        if not backward:
            return {"out": _uncf(avg_pool_ref(_cf(t["self"], fmt), nd, k, st, p, ceil, cip, div), fmt)}
        gx = avg_pool_bwd_ref(_cf(t["grad_output"], fmt), _cf(t["self"], fmt).shape, nd, k, st, p, ceil, cip, div)
        return {("grad_input" if nd == 2 else "output"): _uncf(gx, fmt)}
    return ref


def ref_adaptive(backward):
    def ref(s):
        t = _vals(s)
        if not t["self"].size:
            return {}
        if not backward:
            return {"out": adaptive_ref(t["self"], s.tensors["out"].values.shape[-2:])}
        return {"out": adaptive_bwd_ref(t["grad_output"], t["self"].shape)}
    return ref


# PyTorch (float64, CPU) ------------------------------------------------------------------------------

def _torch_in(s, name):
    import torch
    v = _vals(s)[name]
    return torch.from_numpy(_cf(v, s.tensors["self"].format).copy())


def torch_max(nd, backward):
    def ref(s):
        import torch
        import torch.nn.functional as Fn
        fmt = s.tensors["self"].format
        k, st, p, d, ceil = _win(s, nd)
        if any(2 * pp > kk for pp, kk in zip(p, k)):
            return {}                          # PyTorch refuses pad > kernel/2 (CANN's backward takes it)
        if backward:
            iv, P = s.tensors["indices"].values, int(np.prod(_cf(s.tensors["self"].values, fmt).shape[-nd:]))
            if np.any((iv < 0) | (iv >= P)):
                return {}                      # PyTorch would write out of bounds
        x = _torch_in(s, "self")
        if not backward:
            fn = Fn.max_pool2d if nd == 2 else Fn.max_pool3d
            y, i = fn(x, k, st, p, d, ceil, return_indices=True)
            return {"out": _uncf(y.numpy(), fmt), "indices": _uncf(i.numpy(), fmt)}
        gy, idx = _torch_in(s, "grad_output"), _torch_in(s, "indices").long()
        op = torch.ops.aten.max_pool2d_with_indices_backward if nd == 2 else \
            torch.ops.aten.max_pool3d_with_indices_backward
        return {"grad_input": _uncf(op(gy, x, k, st, p, d, ceil, idx).numpy(), fmt)}
    return ref


def torch_avg(nd, backward, names):
    def ref(s):
        import torch
        import torch.nn.functional as Fn
        fmt = s.tensors["self"].format
        k, st, p, _, ceil = _win(s, nd, names)
        cip, div = s.attrs["count_include_pad"], s.attrs["divisor_override"] or None
        x = _torch_in(s, "self")
        if not backward:
            fn = Fn.avg_pool2d if nd == 2 else Fn.avg_pool3d
            return {"out": _uncf(fn(x, k, st, p, ceil, cip, div).numpy(), fmt)}
        op = torch.ops.aten.avg_pool2d_backward if nd == 2 else torch.ops.aten.avg_pool3d_backward
        gx = op(_torch_in(s, "grad_output"), x, k, st, p, ceil, cip, div)
        return {("grad_input" if nd == 2 else "output"): _uncf(gx.numpy(), fmt)}
    return ref


def torch_adaptive(backward):
    def ref(s):
        import torch
        x = _torch_in(s, "self")
        if not backward:
            return {"out": torch.nn.functional.adaptive_avg_pool2d(x, s.tensors["out"].values.shape[-2:]).numpy()}
        return {"out": torch.ops.aten._adaptive_avg_pool2d_backward(_torch_in(s, "grad_output"), x).numpy()}
    return ref


# errors -------------------------------------------------------------------------------------------

def _set(name, **kv):
    return lambda s: [setattr(s.tensors[name], k, v) for k, v in kv.items()]


def _attr(name, v):
    return lambda s: s.attrs.__setitem__(name, v)


def _null(name):
    return lambda s: s.tensors.__setitem__(name, None)


def _window_errors(nd, names, has_dilation, pad_limit_kernel=False):
    kn, sn, pn = names
    big = [3] * (nd + 1)
    cases = [
        (f"{kn} null", NULLPTR, kn, _attr(kn, None)),
        (f"{kn} of {nd + 1}", INVALID, kn, _attr(kn, IA(big))),
        (f"{kn} empty", INVALID, kn, _attr(kn, IA([]))),
        (f"{kn} 0", INVALID, kn, _attr(kn, IA([0]))),
        (f"{kn} negative", INVALID, kn, _attr(kn, IA([2] * (nd - 1) + [-1]))),
        (f"{kn} a list", INVALID, kn, _attr(kn, [2] * nd)),
        (f"{sn} null", NULLPTR, sn, _attr(sn, None)),
        (f"{sn} of {nd + 1}", INVALID, sn, _attr(sn, IA(big))),
        (f"{sn} 0", INVALID, sn, _attr(sn, IA([0]))),
        (f"{pn} null", NULLPTR, pn, _attr(pn, None)),
        (f"{pn} empty", INVALID, pn, _attr(pn, IA([]))),
        (f"{pn} of {nd + 1}", INVALID, pn, _attr(pn, IA([0] * (nd + 1)))),
        (f"{pn} negative", INVALID, pn, _attr(pn, IA([-1]))),
        (f"{pn} > kernel", INVALID, pn, _attr(pn, IA([4]))),
        ("ceil_mode null", NULLPTR, "ceil_mode", _attr("ceil_mode", None)),
        ("ceil_mode an int", INVALID, "ceil_mode", _attr("ceil_mode", 1)),
    ]
    if not pad_limit_kernel:
        cases.append((f"{pn} > kernel/2", INVALID, pn, _attr(pn, IA([2]))))
    if has_dilation:
        cases += [("dilation null", NULLPTR, "dilation", _attr("dilation", None)),
                  ("dilation 0", INVALID, "dilation", _attr("dilation", IA([0]))),
                  ("dilation empty", INVALID, "dilation", _attr("dilation", IA([]))),
                  (f"dilation of {nd + 1}", INVALID, "dilation", _attr("dilation", IA([1] * (nd + 1))))]
    return cases


def max_errors(nd, backward):
    make = make_max(nd, backward)
    S = (2, 3, 6, 6) if nd == 2 else (2, 2, 5, 6, 5)

    def errors(rng):
        def case(note, status, names, fn=None, shape=S, w=None, **kw):
            s = make(rng, shape, w or Win([3], [2], [1]), note=note, **kw)
            if fn:
                fn(s)
            return ErrorCase(s, status, names)
        data = "grad_output" if backward else "self"
        outn = "grad_input" if backward else "out"
        tens = ("grad_output", "self", "indices", "grad_input") if backward else ("self", "out", "indices")
        out = [case(f"{n} null", NULLPTR, n, _null(n)) for n in tens]
        out += [case(*c) for c in _window_errors(nd, ("kernel_size", "stride", "padding"), True,
                                                 pad_limit_kernel=backward and nd == 2)]
        out += [
            case("INT32 data", INVALID, data, lambda s: [setattr(s.tensors[n], "dtype", I32) for n in tens
                                                          if n != "indices"]),
            case("INT8 data", INVALID, data, lambda s: [setattr(s.tensors[n], "dtype", A.ACL_INT8) for n in tens
                                                         if n != "indices"]),
            case(f"{outn} dtype differs", INVALID, outn, _set(outn, dtype=F16)),
            case("indices FLOAT", INVALID, "indices", _set("indices", dtype=F32)),
            case("indices INT16", INVALID, "indices", _set("indices", dtype=A.ACL_INT16)),
            case("private format", INVALID, "self", _set("self", format=A.ACL_FORMAT_NC1HWC0)),
            case("rank too low", INVALID, "self", shape=S[2:]),
            case("rank too high", INVALID, "self", shape=(1,) + S),
            case("output size 0 (kernel larger than input)", INVALID, "self",
                 w=Win([7 if nd == 2 else 6], [1], [0])),
            case("indices shape wrong", INVALID, "indices",
                 _set("indices", values=np.zeros(S[:-1] + (5,), np.int64))),
        ]
        out.append(case("empty channels", INVALID, "self", shape=(2, 0) + S[2:]))
        out.append(case("empty spatial dim (padding would give an output)", INVALID, "self",
                        shape=S[:-1] + (0,), w=Win([2], [1], [1])))
        if nd == 2:
            out.append(case("NCL format", INVALID, "self", _set("self", format=NCL), shape=(3, 6, 6)))
            out.append(case("NHWC on rank 3", INVALID, "self", _set("self", format=NHWC), shape=(3, 6, 6)))
        else:
            out.append(case("NDHWC format", INVALID, "self", lambda s: [setattr(s.tensors[n], "format", NDHWC)
                                                                        for n in tens]))
        if backward:
            out += [case("self dtype differs", INVALID, "self", _set("self", dtype=F16)),
                    case("grad_output shape wrong", INVALID, "grad_output",
                         _set("grad_output", values=np.zeros(S[:-1] + (2,)))),
                    case("grad_input shape wrong", INVALID, "grad_input",
                         _set("grad_input", values=np.zeros(S[:-1] + (S[-1] + 1,))))]
        else:
            out += [case("out shape wrong", INVALID, "out", _set("out", values=np.zeros(S[:-1] + (2,)))),
                    case("out format differs", INVALID, "out", _set("out", format=NCHW if nd == 2 else NCDHW))]

        def overlap(d):
            d[outn].tensor.addr = d["self"].tensor.addr + 4
            d[outn].tensor.storage_dims = d["self"].tensor.storage_dims
        s = make(rng, S, Win([3], [2], [1]), note="output overlaps self")
        s.mutate = overlap
        out.append(ErrorCase(s, INVALID, outn))
        return out
    return errors


def avg_errors(nd, backward, names, cube, empty_ok):
    make = make_avg(nd, backward, names, cube)
    S = (2, 3, 6, 6) if nd == 2 else (2, 2, 5, 6, 5)

    def errors(rng):
        def case(note, status, nm, fn=None, shape=S, w=None, **kw):
            s = make(rng, shape, w or Win([3], [2], [1]), note=note, **kw)
            if fn:
                fn(s)
            return ErrorCase(s, status, nm)
        data = "grad_output" if backward else "self"
        outn = ("grad_input" if nd == 2 else "output") if backward else "out"
        tens = ("grad_output", "self", outn) if backward else ("self", "out")
        out = [case(f"{n} null", NULLPTR, n, _null(n)) for n in tens]
        out += [case(*c) for c in _window_errors(nd, names, False)]
        out += [
            case("count_include_pad null", NULLPTR, "count_include_pad", _attr("count_include_pad", None)),
            case("count_include_pad an int", INVALID, "count_include_pad", _attr("count_include_pad", 0)),
            case("divisor_override null", NULLPTR, "divisor_override", _attr("divisor_override", None)),
            case("divisor_override a float", INVALID, "divisor_override", _attr("divisor_override", 2.0)),
            case("INT32 data", INVALID, data, lambda s: [setattr(s.tensors[n], "dtype", I32) for n in tens]),
            case("INT8 data", INVALID, data, lambda s: [setattr(s.tensors[n], "dtype", A.ACL_INT8) for n in tens]),
            case(f"{outn} dtype differs", INVALID, outn, _set(outn, dtype=BF16)),
            case("private format", INVALID, "self", _set("self", format=A.ACL_FORMAT_NC1HWC0)),
            case("rank too low", INVALID, "self", shape=S[2:]),
            case("rank too high", INVALID, "self", shape=(1,) + S),
            case("output size 0", INVALID, "self", w=Win([7 if nd == 2 else 6], [1], [0])),
        ]
        if nd == 2:
            out.append(case("NHWC format (not allowed)", INVALID, "self",
                            lambda s: [setattr(s.tensors[n], "format", NHWC) for n in tens]))
        else:
            out.append(case("NDHWC format", INVALID, "self",
                            lambda s: [setattr(s.tensors[n], "format", NDHWC) for n in tens]))
        if cube:
            out += [case("cube_math_type 4", INVALID, "cube_math_type", _attr("cube_math_type", 4)),
                    case("cube_math_type -1", INVALID, "cube_math_type", _attr("cube_math_type", -1)),
                    case("cube_math_type null", NULLPTR, "cube_math_type", _attr("cube_math_type", None))]
        out.append(case("empty channels", INVALID, "self", shape=(2, 0) + S[2:]))
        out.append(case("empty spatial dim", INVALID, "self", shape=S[:-1] + (0,), w=Win([2], [1], [1])))
        if not empty_ok:
            out.append(case("empty batch", INVALID, "self", shape=(0,) + S[1:]))
        if backward:
            out += [case("self dtype differs", INVALID, "self", _set("self", dtype=F16)),
                    case("grad_output shape wrong", INVALID, "grad_output",
                         _set("grad_output", values=np.zeros(S[:-1] + (2,)))),
                    case(f"{outn} shape wrong", INVALID, outn, _set(outn, values=np.zeros(S[:-1] + (S[-1] + 1,))))]
        else:
            out += [case("out shape wrong", INVALID, "out", _set("out", values=np.zeros(S[:-1] + (2,)))),
                    case("out format differs", INVALID, "out", _set("out", format=NCHW if nd == 2 else NCDHW))]

        def overlap(d):
            d[outn].tensor.addr = d[data].tensor.addr + 4
            d[outn].tensor.storage_dims = d[data].tensor.storage_dims
        s = make(rng, S, Win([3], [2], [1]), note="output overlaps an input")
        s.mutate = overlap
        out.append(ErrorCase(s, INVALID, outn))
        return out
    return errors


def adaptive_errors(backward):
    make = make_adaptive(backward)
    S = (2, 3, 7, 9)

    def errors(rng):
        def case(note, status, nm, fn=None, shape=S, osz=(3, 4)):
            s = make(rng, shape, list(osz), note=note)
            if fn:
                fn(s)
            return ErrorCase(s, status, nm)
        tens = ("grad_output", "self", "out") if backward else ("self", "out")
        data = tens[0]
        out = [case(f"{n} null", NULLPTR, n, _null(n)) for n in tens]
        out += [case("INT32 data", INVALID, data, lambda s: [setattr(s.tensors[n], "dtype", I32) for n in tens]),
                case("out dtype differs", INVALID, "out", _set("out", dtype=F16)),
                case("rank 2", INVALID, "self", shape=(7, 9), osz=(3, 4)),
                case("rank 5", INVALID, "self", shape=(1, 2, 3, 7, 9)),
                case("NHWC format", INVALID, "self", lambda s: [setattr(s.tensors[n], "format", NHWC) for n in tens]),
                case("empty H", INVALID, "self", shape=(2, 3, 0, 9), osz=(3, 4)),
                case("empty channels", INVALID, "self", shape=(2, 0, 7, 9), osz=(3, 4)),
                case("out shape wrong", INVALID, "out", _set("out", values=np.zeros((2, 3, 7, 8))))]
        if backward:
            out += [case("grad_output rank 3", INVALID, "grad_output",
                         _set("grad_output", values=np.zeros((3, 3, 4)))),
                    case("grad_output channels differ", INVALID, "grad_output",
                         _set("grad_output", values=np.zeros((2, 4, 3, 4)))),
                    case("grad_output empty spatial", INVALID, "grad_output",
                         _set("grad_output", values=np.zeros((2, 3, 0, 4)))),
                    case("self dtype differs", INVALID, "self", _set("self", dtype=BF16))]
        else:
            out += [case("output_size null", NULLPTR, "output_size", _attr("output_size", None)),
                    case("output_size of 3", INVALID, "output_size", _attr("output_size", IA([1, 2, 3]))),
                    case("output_size empty", INVALID, "output_size", _attr("output_size", IA([]))),
                    case("output_size 0", INVALID, "output_size", _attr("output_size", IA([0, 4])))]
        return out
    return errors


# registration ---------------------------------------------------------------------------------------

def _tol(s):
    return 4.0


def _in_place_layouts(s):
    """Every dense layout is computed at its own strides: no workspace unless a view has gaps."""
    return all(t.layout != "strided" for t in s.tensors.values() if t is not None)


def bench_max(nd, backward):
    make = make_max(nd, backward)

    def bench(rng, shape, dtype, channels_last):
        shape = tuple(shape) if nd == 2 else tuple(shape[:2]) + (8,) + tuple(shape[2:])
        return make(rng, shape, Win([3], [2], [1]), dtype, layout="channels_last" if channels_last else "contiguous",
                    note="bench")
    return bench


def bench_avg(nd, backward, names, cube):
    make = make_avg(nd, backward, names, cube)

    def bench(rng, shape, dtype, channels_last):
        shape = tuple(shape) if nd == 2 else tuple(shape[:2]) + (8,) + tuple(shape[2:])
        return make(rng, shape, Win([3], [2], [1]), dtype, layout="channels_last" if channels_last else "contiguous",
                    note="bench")
    return bench


def bench_adaptive(backward):
    make = make_adaptive(backward)

    def bench(rng, shape, dtype, channels_last):
        return make(rng, tuple(shape), [max(shape[2] // 2, 1), max(shape[3] // 2, 1)], dtype,
                    layout="channels_last" if channels_last else "contiguous", note="bench")
    return bench


def torch_of(kind, nd):
    """PyTorch's op on tensors of the sample's shape, dtype and memory format (for the benchmarks)."""
    def make(s, device):
        import torch
        dt = {F32: torch.float32, F16: torch.float16, BF16: torch.bfloat16}
        mf = torch.channels_last if nd == 2 else torch.channels_last_3d

        def t(n):
            sp = s.tensors[n]
            v = torch.from_numpy(_cf(sp.rounded(), sp.format).copy())
            if sp.dtype in dt:
                v = v.to(dt[sp.dtype])
            v = v.to(device)
            if sp.layout == "channels_last" and v.dim() == nd + 2:
                v = v.contiguous(memory_format=mf)
            return v
        x = t("self")
        if kind in ("max", "maxb"):
            k, st, p, d, ceil = _win(s, nd)
            if kind == "max":
                fn = torch.nn.functional.max_pool2d if nd == 2 else torch.nn.functional.max_pool3d
                return lambda: fn(x, k, st, p, d, ceil, return_indices=True)
            gy, idx = t("grad_output"), t("indices").long()
            op = torch.ops.aten.max_pool2d_with_indices_backward if nd == 2 else \
                torch.ops.aten.max_pool3d_with_indices_backward
            return lambda: op(gy, x, k, st, p, d, ceil, idx)
        if kind in ("avg", "avgb"):
            nm = ("kernel_size", "strides", "paddings") if "strides" in s.attrs else ("kernel_size", "stride", "padding")
            k, st, p, _, ceil = _win(s, nd, nm)
            cip, div = s.attrs["count_include_pad"], s.attrs["divisor_override"] or None
            if kind == "avg":
                fn = torch.nn.functional.avg_pool2d if nd == 2 else torch.nn.functional.avg_pool3d
                return lambda: fn(x, k, st, p, ceil, cip, div)
            gy = t("grad_output")
            op = torch.ops.aten.avg_pool2d_backward if nd == 2 else torch.ops.aten.avg_pool3d_backward
            return lambda: op(gy, x, k, st, p, ceil, cip, div)
        if kind == "ada":
            osz = s.tensors["out"].values.shape[-2:]
            return lambda: torch.nn.functional.adaptive_avg_pool2d(x, osz)
        gy = t("grad_output")
        return lambda: torch.ops.aten._adaptive_avg_pool2d_backward(gy, x)
    return make


_AVG2D = ("kernel_size", "strides", "paddings")
_AVGB = ("kernel_size", "stride", "padding")

OPS = [
    OpInfo("MaxPool2dWithIndices", max_samples(2, False), ref_max(2, False), max_errors(2, False),
           ("out", "indices"), _tol, torch_reference=torch_max(2, False), zero_workspace=_in_place_layouts,
           data="self", bench=bench_max(2, False), torch_gpu=torch_of("max", 2)),
    OpInfo("MaxPool2dWithIndicesBackward", max_samples(2, True), ref_max(2, True), max_errors(2, True),
           ("grad_input",), _tol, torch_reference=torch_max(2, True), zero_workspace=_in_place_layouts,
           data="grad_output", bench=bench_max(2, True), torch_gpu=torch_of("maxb", 2)),
    OpInfo("AvgPool2d", avg_samples(2, False, _AVG2D, True, False), ref_avg(2, False, _AVG2D),
           avg_errors(2, False, _AVG2D, True, False), ("out",), _tol, torch_reference=torch_avg(2, False, _AVG2D),
           zero_workspace=_in_place_layouts, data="self", bench=bench_avg(2, False, _AVG2D, True), torch_gpu=torch_of("avg", 2)),
    OpInfo("AvgPool2dBackward", avg_samples(2, True, _AVGB, True, False), ref_avg(2, True, _AVGB),
           avg_errors(2, True, _AVGB, True, False), ("grad_input",), _tol, torch_reference=torch_avg(2, True, _AVGB),
           zero_workspace=_in_place_layouts, data="grad_output", bench=bench_avg(2, True, _AVGB, True), torch_gpu=torch_of("avgb", 2)),
    OpInfo("AvgPool3d", avg_samples(3, False, _AVGB, False, True), ref_avg(3, False, _AVGB),
           avg_errors(3, False, _AVGB, False, True), ("out",), _tol, torch_reference=torch_avg(3, False, _AVGB),
           zero_workspace=_in_place_layouts, data="self", bench=bench_avg(3, False, _AVGB, False), torch_gpu=torch_of("avg", 3)),
    OpInfo("AvgPool3dBackward", avg_samples(3, True, _AVGB, False, True), ref_avg(3, True, _AVGB),
           avg_errors(3, True, _AVGB, False, True), ("output",), _tol, torch_reference=torch_avg(3, True, _AVGB),
           zero_workspace=_in_place_layouts, data="grad_output", bench=bench_avg(3, True, _AVGB, False), torch_gpu=torch_of("avgb", 3)),
    OpInfo("MaxPool3dWithArgmax", max_samples(3, False), ref_max(3, False), max_errors(3, False),
           ("out", "indices"), _tol, torch_reference=torch_max(3, False), zero_workspace=_in_place_layouts,
           data="self", bench=bench_max(3, False), torch_gpu=torch_of("max", 3)),
    OpInfo("MaxPool3dWithArgmaxBackward", max_samples(3, True), ref_max(3, True), max_errors(3, True),
           ("grad_input",), _tol, torch_reference=torch_max(3, True), zero_workspace=_in_place_layouts,
           data="grad_output", bench=bench_max(3, True), torch_gpu=torch_of("maxb", 3)),
    OpInfo("AdaptiveAvgPool2d", adaptive_samples(False), ref_adaptive(False), adaptive_errors(False), ("out",), _tol,
           torch_reference=torch_adaptive(False), zero_workspace=_in_place_layouts, data="self",
           bench=bench_adaptive(False), torch_gpu=torch_of("ada", 2)),
    OpInfo("AdaptiveAvgPool2dBackward", adaptive_samples(True), ref_adaptive(True), adaptive_errors(True), ("out",),
           _tol, torch_reference=torch_adaptive(True), zero_workspace=_in_place_layouts, data="grad_output",
           bench=bench_adaptive(True), torch_gpu=torch_of("adab", 2)),
]
