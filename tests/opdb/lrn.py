"""OpInfos of the LRN family (aclnn-py extensions, cuDNN formulas: cudnn.md §4.4, §4.6):
aclnnpyLrnCrossChannel(+Backward) and aclnnpyDivisiveNormalization(+Backward).

Float64 NumPy references of cuDNN's formulas are here; where PyTorch is installed, LRN is also
checked against ``torch.nn.functional.local_response_norm`` (forward, and autograd for the
backward) — for even n through the mirror identity ours(x) = flip_C(torch(flip_C(x))) — and
divisive normalization against PyTorch autograd of the formula written with torch ops (conv with
a box of ones), which checks our hand-derived backward. Samples: every dtype (DOUBLE too), ranks
3–8 (LRN) / 4–5 (divisive), NCHW/NCDHW and NHWC/NDHWC formats, channels-last and other views,
odd/even/1/16 window sizes, windows wider than the tensor, empty tensors.
"""
from __future__ import annotations

import numpy as np

import aclnn_py as A
from harness import Sample, TensorSpec
from opdb import ErrorCase, OpInfo

F32, F16, BF16, F64, I32 = A.ACL_FLOAT, A.ACL_FLOAT16, A.ACL_BF16, A.ACL_DOUBLE, A.ACL_INT32
INVALID, NULLPTR = A.ACLNN_ERR_PARAM_INVALID, A.ACLNN_ERR_PARAM_NULLPTR
ND, NCHW, NHWC, NCDHW, NDHWC = A.ACL_FORMAT_ND, A.ACL_FORMAT_NCHW, A.ACL_FORMAT_NHWC, A.ACL_FORMAT_NCDHW, A.ACL_FORMAT_NDHWC
CL_FORMATS = (NHWC, NDHWC)
FLOATS = (F32, F16, BF16)


# float64 references (cuDNN's formulas) ----------------------------------------------------------

def _win(n):
    behind = (n - 1) // 2
    return behind, n - 1 - behind


def _axis(fmt, rank):
    return rank - 1 if fmt in CL_FORMATS else 1


def _chan_sum(a, behind, ahead):
    """Σ over the channel window [c − behind, c + ahead] (axis 1), zero outside."""
    C = a.shape[1]
    pad = [(0, 0)] * a.ndim
    pad[1] = (behind, ahead)
    p = np.pad(a, pad)
    return sum(p[:, j:j + C] for j in range(behind + ahead + 1))


def lrn_fwd(x, n, alpha, beta, k, ax=1):
    xc = np.moveaxis(x, ax, 1)
    s = k + alpha / n * _chan_sum(xc * xc, *_win(n))
    return np.moveaxis(xc * s ** -beta, 1, ax)


def lrn_bwd(dy, x, y, n, alpha, beta, k, ax=1):
    xc, yc, gc = (np.moveaxis(a, ax, 1) for a in (x, y, dy))
    behind, ahead = _win(n)
    s = k + alpha / n * _chan_sum(xc * xc, behind, ahead)
    acc = _chan_sum(gc * yc / s, ahead, behind)           # Σ over c with i in win(c): the mirrored window
    dx = gc * s ** -beta - 2 * alpha * beta / n * xc * acc
    return np.moveaxis(dx, 1, ax)


def _box_sum(a, behind, ahead):
    """Σ over the box [p − behind, p + ahead] in every dim from 2 on, zero outside."""
    S = a.ndim - 2
    pad = [(0, 0), (0, 0)] + [(behind, ahead)] * S
    p = np.pad(a, pad)
    out = np.zeros_like(a)
    for off in np.ndindex(*([behind + ahead + 1] * S)):
        out += p[(slice(None), slice(None), *[slice(o, o + d) for o, d in zip(off, a.shape[2:])])]
    return out


def _to_ncx(a, ax):
    return None if a is None else np.moveaxis(a, ax, 1)


def divnorm_fwd(x, m, n, alpha, beta, k, ax=1):
    u = _to_ncx(x, ax) - (0 if m is None else _to_ncx(m, ax))
    S = x.ndim - 2
    s = k + alpha / n ** S * _box_sum(u * u, *_win(n))
    return np.moveaxis(u * s ** -beta, 1, ax)


def divnorm_bwd(x, m, dy, n, alpha, beta, k, ax=1):
    u = _to_ncx(x, ax) - (0 if m is None else _to_ncx(m, ax))
    g = _to_ncx(dy, ax)
    S = x.ndim - 2
    behind, ahead = _win(n)
    an = alpha / n ** S
    s = k + an * _box_sum(u * u, behind, ahead)
    acc = _box_sum(g * u * s ** (-beta - 1), ahead, behind)
    dx = g * s ** -beta - 2 * an * beta * u * acc
    return np.moveaxis(dx, 1, ax)


# samples ----------------------------------------------------------------------------------------

def _spec(values, dtype, layout="contiguous", fmt=ND):
    return TensorSpec(np.asarray(values, np.float64), dtype, fmt, layout)


def _round(v, dtype):
    return _spec(v, dtype).rounded()


PARAMS = {"lrn_n": 5, "lrn_alpha": 1e-4, "lrn_beta": 0.75, "lrn_k": 2.0}     # cuDNN's defaults (Krizhevsky)


def _params(n=5, alpha=None, beta=0.75, k=2.0):
    return {"lrn_n": n, "lrn_alpha": 1e-4 if alpha is None else alpha, "lrn_beta": beta, "lrn_k": k}


def make_lrn_fwd(rng, shape, dtype=F32, *, layout="contiguous", out_layout=None, fmt=ND, note="", **kw):
    x = rng.standard_normal(shape) * 2
    return Sample({"self": _spec(x, dtype, layout, fmt), "out": _spec(np.zeros(shape), dtype, out_layout or layout, fmt)},
                  _params(**kw), note=note)


def make_lrn_bwd(rng, shape, dtype=F32, *, layout="contiguous", out_layout=None, fmt=ND, note="", **kw):
    p = _params(**kw)
    x = rng.standard_normal(shape) * 2
    xr = _round(x, dtype)
    y = lrn_fwd(xr, p["lrn_n"], p["lrn_alpha"], p["lrn_beta"], p["lrn_k"], _axis(fmt, len(shape))) if xr.size else xr
    g = rng.standard_normal(shape)
    return Sample({"grad_output": _spec(g, dtype, layout, fmt), "self": _spec(x, dtype, layout, fmt),
                   "output": _spec(y, dtype, layout, fmt),
                   "grad_input": _spec(np.zeros(shape), dtype, out_layout or layout, fmt)}, p, note=note)


def make_div_fwd(rng, shape, dtype=F32, *, layout="contiguous", out_layout=None, fmt=ND, note="", means=True, **kw):
    x = rng.standard_normal(shape) * 2
    m = rng.standard_normal(shape) * 0.5 if means else None
    return Sample({"self": _spec(x, dtype, layout, fmt), "means": None if m is None else _spec(m, dtype, layout, fmt),
                   "out": _spec(np.zeros(shape), dtype, out_layout or layout, fmt)}, _params(**kw), note=note)


def make_div_bwd(rng, shape, dtype=F32, *, layout="contiguous", out_layout=None, fmt=ND, note="", means=True,
                 dmeans=True, **kw):
    x = rng.standard_normal(shape) * 2
    m = rng.standard_normal(shape) * 0.5 if means else None
    g = rng.standard_normal(shape)
    ol = out_layout or layout
    return Sample({"self": _spec(x, dtype, layout, fmt), "means": None if m is None else _spec(m, dtype, layout, fmt),
                   "grad_output": _spec(g, dtype, layout, fmt), "grad_input": _spec(np.zeros(shape), dtype, ol, fmt),
                   "grad_means": _spec(np.zeros(shape), dtype, ol, fmt) if dmeans else None},
                  _params(**kw), note=note)


STRONG = {"alpha": 1.5, "beta": 0.75, "k": 1.0}          # a normalization that matters (cuDNN's alpha is tiny)


def lrn_samples(make):
    def samples(rng):
        out = [make(rng, (2, 5, 4, 3), note="4-D NCHW, cuDNN defaults"),
               make(rng, (2, 7, 3, 4), note="4-D, strong", **STRONG)]
        for dt, tag in ((F32, "f32"), (F16, "f16"), (BF16, "bf16"), (F64, "f64")):
            out += [make(rng, (2, 6, 3, 3), dt, note=f"{tag} n=3", n=3, **STRONG),
                    make(rng, (1, 9, 2, 5), dt, note=f"{tag} n=4 (even)", n=4, alpha=2.0, beta=0.5, k=1.5),
                    make(rng, (2, 4, 2, 2, 3), dt, note=f"{tag} 5-D", n=5, **STRONG)]
        for n in (1, 2, 6, 7, 15, 16):
            out.append(make(rng, (2, 10, 2, 3), note=f"n={n}", n=n, alpha=0.7, beta=1.3, k=1.0))
        out += [
            make(rng, (3, 5, 7), note="3-D (N, C, L)", **STRONG),
            make(rng, (1, 4, 2, 1, 2, 3), note="6-D", n=3, **STRONG),
            make(rng, (2, 3, 1, 1, 1, 1, 2, 2), note="8-D", n=2, **STRONG),
            make(rng, (2, 3, 4, 5), note="window wider than C (n=16, C=3)", n=16, **STRONG),
            make(rng, (2, 1, 3, 3), note="C = 1", n=5, **STRONG),
            make(rng, (2, 6, 3, 4), layout="channels_last", note="channels-last memory (NCHW dims)", **STRONG),
            make(rng, (2, 6, 2, 3, 4), F16, layout="channels_last", note="channels-last 5-D", n=4, **STRONG),
            make(rng, (2, 3, 4, 6), fmt=NHWC, note="NHWC format (channel = last dim)", n=3, **STRONG),
            make(rng, (1, 2, 3, 2, 5), fmt=NDHWC, note="NDHWC format", n=5, **STRONG),
            make(rng, (2, 5, 3, 4), fmt=NCHW, note="NCHW format", n=3, **STRONG),
            make(rng, (2, 5, 3, 4), layout="transposed", note="transposed memory", n=3, **STRONG),
            make(rng, (2, 5, 3, 4), layout="strided", note="strided views (copied)", n=3, **STRONG),
            make(rng, (2, 5, 3, 4), BF16, layout="offset", note="at an element offset", n=3, **STRONG),
            make(rng, (2, 5, 3, 4), out_layout="strided", note="contiguous in, strided out", n=5, **STRONG),
            make(rng, (2, 5, 3, 4), out_layout="channels_last", note="contiguous in, channels-last out", **STRONG),
            make(rng, (1, 40, 2, 2), note="long channel dim", n=11, alpha=3.0, beta=2.0, k=0.5),
            make(rng, (2, 6, 3, 3), note="beta = 0.01, k = 1e-5", n=3, alpha=1.0, beta=0.01, k=1e-5),
            make(rng, (2, 6, 3, 3), note="negative alpha", n=3, alpha=-0.05, beta=0.75, k=2.0),
            make(rng, (0, 3, 2, 2), note="empty batch"),
            make(rng, (2, 0, 3, 3), note="no channels"),
            make(rng, (2, 3, 0, 3), F16, note="empty spatial dim"),
        ]
        return out
    return samples


def div_samples(make, bwd=False):
    def samples(rng):
        out = [make(rng, (2, 3, 5, 4), note="4-D NCHW, cuDNN defaults"),
               make(rng, (2, 3, 5, 6), note="4-D, strong, n=3", n=3, **STRONG)]
        for dt, tag in ((F32, "f32"), (F16, "f16"), (BF16, "bf16"), (F64, "f64")):
            out += [make(rng, (2, 2, 4, 5), dt, note=f"{tag} n=3", n=3, **STRONG),
                    make(rng, (1, 2, 3, 4, 3), dt, note=f"{tag} 5-D n=2", n=2, **STRONG)]
        for n in (1, 2, 4, 5, 16):
            out.append(make(rng, (1, 2, 6, 7), note=f"n={n}", n=n, alpha=2.0, beta=0.6, k=1.0))
        out += [
            make(rng, (2, 2, 4, 5), means=False, note="means null (zero)", n=3, **STRONG),
            make(rng, (1, 2, 3, 4, 5), means=False, note="5-D, means null", n=3, **STRONG),
            make(rng, (2, 3, 4, 5), layout="channels_last", note="channels-last memory", n=3, **STRONG),
            make(rng, (1, 3, 2, 3, 4), F16, layout="channels_last", note="channels-last 5-D", n=2, **STRONG),
            make(rng, (2, 4, 5, 3), fmt=NHWC, note="NHWC format (channel = last dim)", n=3, **STRONG),
            make(rng, (1, 2, 3, 4, 2), fmt=NDHWC, note="NDHWC format", n=3, **STRONG),
            make(rng, (2, 3, 4, 5), fmt=NCHW, note="NCHW format", n=4, **STRONG),
            make(rng, (1, 2, 3, 3, 4), fmt=NCDHW, note="NCDHW format", n=3, **STRONG),
            make(rng, (2, 3, 4, 5), layout="transposed", note="transposed memory", n=3, **STRONG),
            make(rng, (2, 3, 4, 5), layout="strided", note="strided views (copied)", n=3, **STRONG),
            make(rng, (2, 3, 4, 5), BF16, layout="offset", note="at an element offset", n=3, **STRONG),
            make(rng, (2, 3, 4, 5), out_layout="strided", note="contiguous in, strided out", n=3, **STRONG),
            make(rng, (1, 1, 1, 1), note="all size 1", n=3, **STRONG),
            make(rng, (1, 2, 1, 9), note="H = 1", n=5, **STRONG),
            make(rng, (0, 3, 2, 2), note="empty batch"),
            make(rng, (2, 0, 3, 3), note="no channels"),
            make(rng, (2, 3, 0, 3), F16, note="empty spatial dim"),
        ]
        if bwd:
            out += [make(rng, (2, 3, 4, 5), dmeans=False, note="grad_means null", n=3, **STRONG),
                    make(rng, (2, 3, 4, 5), means=False, dmeans=True, note="means null, grad_means wanted", n=3,
                         **STRONG)]
        return out
    return samples


# references -------------------------------------------------------------------------------------

def _vals(s):
    return {k: v.rounded() for k, v in s.tensors.items() if v is not None}


def _p(s):
    a = s.attrs
    return a["lrn_n"], a["lrn_alpha"], a["lrn_beta"], a["lrn_k"]


def _ax(s, name):
    t = s.tensors[name]
    return _axis(t.format, np.ndim(t.values))


def ref_lrn_fwd(s):
    x = _vals(s)["self"]
    return {"out": lrn_fwd(x, *_p(s), _ax(s, "self"))} if x.size else {}


def ref_lrn_bwd(s):
    t = _vals(s)
    if not t["self"].size:
        return {}
    return {"grad_input": lrn_bwd(t["grad_output"], t["self"], t["output"], *_p(s), _ax(s, "self"))}


def ref_div_fwd(s):
    t = _vals(s)
    if not t["self"].size:
        return {}
    return {"out": divnorm_fwd(t["self"], t.get("means"), *_p(s), _ax(s, "self"))}


def ref_div_bwd(s):
    t = _vals(s)
    if not t["self"].size:
        return {}
    dx = divnorm_bwd(t["self"], t.get("means"), t["grad_output"], *_p(s), _ax(s, "self"))
    out = {"grad_input": dx}
    if s.tensors.get("grad_means") is not None:
        out["grad_means"] = -dx
    return out


# PyTorch ----------------------------------------------------------------------------------------

def _torch_lrn(torch, x, n, alpha, beta, k):
    """cuDNN's window through PyTorch's local_response_norm (axis 1); even n: the mirror identity."""
    F = torch.nn.functional
    if n % 2:
        return F.local_response_norm(x, n, alpha, beta, k)
    return F.local_response_norm(x.flip(1), n, alpha, beta, k).flip(1)


def _skip_torch(s, name):
    return s.tensors[name].dtype not in FLOATS or not np.size(s.tensors[name].values)


def torch_lrn_fwd(s):
    if _skip_torch(s, "self"):
        return {}
    import torch
    ax = _ax(s, "self")
    x = torch.from_numpy(np.moveaxis(_vals(s)["self"], ax, 1).copy())
    return {"out": np.moveaxis(_torch_lrn(torch, x, *_p(s)).numpy(), 1, ax)}


def torch_lrn_bwd(s):
    """PyTorch autograd of local_response_norm (it recomputes from self; ours uses the given output)."""
    if _skip_torch(s, "self"):
        return {}
    import torch
    ax = _ax(s, "self")
    t = _vals(s)
    x = torch.from_numpy(np.moveaxis(t["self"], ax, 1).copy()).requires_grad_(True)
    g = torch.from_numpy(np.moveaxis(t["grad_output"], ax, 1).copy())
    _torch_lrn(torch, x, *_p(s)).backward(g)
    return {"grad_input": np.moveaxis(x.grad.numpy(), 1, ax)}


def _torch_divnorm(torch, x, m, n, alpha, beta, k):
    """The formula with torch ops: the box sum is a per-channel conv with ones after cuDNN's padding."""
    F = torch.nn.functional
    u = x - m if m is not None else x
    S = x.dim() - 2
    behind, ahead = _win(n)
    sq = F.pad(u * u, [behind, ahead] * S)
    C = x.shape[1]
    w = torch.ones((C, 1) + (n,) * S, dtype=x.dtype)
    conv = F.conv2d if S == 2 else F.conv3d
    s = k + alpha / n ** S * conv(sq, w, groups=C)
    return u * s ** -beta


def torch_div_fwd(s):
    if _skip_torch(s, "self") or not s.tensors["self"].values.shape[1]:
        return {}
    import torch
    ax = _ax(s, "self")
    t = {k: torch.from_numpy(np.moveaxis(v, ax, 1).copy()) for k, v in _vals(s).items()}
    return {"out": np.moveaxis(_torch_divnorm(torch, t["self"], t.get("means"), *_p(s)).numpy(), 1, ax)}


def torch_div_bwd(s):
    if _skip_torch(s, "self") or not s.tensors["self"].values.shape[1]:
        return {}
    import torch
    ax = _ax(s, "self")
    t = {k: torch.from_numpy(np.moveaxis(v, ax, 1).copy()) for k, v in _vals(s).items()}
    x = t["self"].requires_grad_(True)
    m = t.get("means")
    m = torch.zeros_like(x) if m is None else m
    m.requires_grad_(True)
    _torch_divnorm(torch, x, m, *_p(s)).backward(t["grad_output"])
    out = {"grad_input": np.moveaxis(x.grad.numpy(), 1, ax)}
    if s.tensors.get("grad_means") is not None:
        out["grad_means"] = np.moveaxis(m.grad.numpy(), 1, ax)
    return out


# errors -----------------------------------------------------------------------------------------

def _errors(make, data, ins, outs, ranks, optional=()):
    def errors(rng):
        shape = (2, 3, 4, 5)

        def case(note, status, names, fn=None, shape=shape, **kw):
            s = make(rng, shape, note=note, **kw)
            if fn:
                fn(s)
            return ErrorCase(s, status, names)

        def null(n):
            return lambda s: s.tensors.__setitem__(n, None)

        def attr(k, v):
            return lambda s: s.attrs.__setitem__(k, v)

        def set_(n, **kv):
            return lambda s: [setattr(s.tensors[n], k, v) for k, v in kv.items()]

        out = [case(f"{n} null", NULLPTR, n, null(n)) for n in (*ins, *outs) if n not in optional]
        for k in ("lrn_n", "lrn_alpha", "lrn_beta", "lrn_k"):
            out.append(case(f"{k} null", NULLPTR, k, attr(k, None)))
        for k, bad in (("lrn_n", 0), ("lrn_n", 17), ("lrn_n", -1), ("lrn_n", 5.0), ("lrn_n", True),
                       ("lrn_k", 1e-6), ("lrn_k", 0.0), ("lrn_k", -1.0), ("lrn_k", float("nan")),
                       ("lrn_beta", 0.009), ("lrn_beta", -0.75), ("lrn_beta", float("nan")),
                       ("lrn_alpha", "1e-4"), ("lrn_beta", [0.75])):
            out.append(case(f"{k} = {bad!r}", INVALID, k, attr(k, bad)))
        for bad in (I32, A.ACL_INT8, A.ACL_BOOL):
            out.append(case(A.aclDataType(bad).name, INVALID, ins[0],
                            lambda s, bad=bad: [setattr(t, "dtype", bad) for t in s.tensors.values() if t is not None]))
        for n in (*ins[1:], *outs):
            out.append(case(f"{n} dtype differs", INVALID, n, set_(n, dtype=F16)))
            out.append(case(f"{n} shape differs", INVALID, n, set_(n, values=np.zeros((2, 3, 5, 4)))))
        lo, hi = ranks
        out.append(case(f"rank {lo - 1}", INVALID, ins[0], shape=(2, 3, 4, 5, 6, 7, 8)[:lo - 1]))
        out.append(case(f"rank {hi + 1}", INVALID, ins[0], shape=(1, 2, 1, 1, 1, 1, 1, 1, 2)[:hi + 1]))
        out.append(case("private format", INVALID, ins[0], set_(ins[0], format=A.ACL_FORMAT_NC1HWC0)))
        out.append(case("NCDHW format on rank 4", INVALID, ins[0],
                        lambda s: [setattr(t, "format", NCDHW) for t in s.tensors.values() if t is not None]))

        def overlap(d):
            d[outs[0]].tensor.addr = d[ins[-1]].tensor.addr + 4
            d[outs[0]].tensor.storage_dims = d[ins[-1]].tensor.storage_dims
        s = make(rng, shape, note="output overlaps an input")
        s.mutate = overlap
        out.append(ErrorCase(s, INVALID, outs[0]))
        return out
    return errors


def _dd(s):
    dt = next(t.dtype for t in s.tensors.values() if t is not None)
    return dt if dt in (F16, BF16) else F32       # DOUBLE: f32's (tighter than needed) tolerance


def _tol_fwd(s):
    return 4.0


def _tol_bwd(s):
    return 16.0       # two terms that cancel; the 16-bit types also carry the rounding of `output`


def bench_of(make):
    """An NCHW shape in NCHW or channels-last memory, cuDNN's default LRN parameters."""
    def bench(rng, shape, dtype, channels_last):
        return make(rng, tuple(shape), dtype, layout="channels_last" if channels_last else "contiguous", note="bench")
    return bench


def torch_lrn_gpu(s, device):
    import torch
    sp = s.tensors["self"]
    tdt = {F32: torch.float32, F16: torch.float16, BF16: torch.bfloat16, F64: torch.float64}[sp.dtype]
    x = torch.from_numpy(sp.rounded()).to(device=device, dtype=tdt)
    if sp.layout == "channels_last" and x.dim() == 4:
        x = x.contiguous(memory_format=torch.channels_last)
    n, alpha, beta, k = _p(s)
    return lambda: torch.nn.functional.local_response_norm(x, n, alpha, beta, k)


def _in_place_layouts(s):
    layouts = {t.layout for t in s.tensors.values() if t is not None}
    return len(layouts) == 1 and "strided" not in layouts


OPS = [
    OpInfo("pyLrnCrossChannel", lrn_samples(make_lrn_fwd), ref_lrn_fwd,
           _errors(make_lrn_fwd, "self", ("self",), ("out",), (3, 8)), ("out",), _tol_fwd,
           torch_reference=torch_lrn_fwd, data_dtype_of=_dd, zero_workspace=_in_place_layouts, data="self",
           bench=bench_of(make_lrn_fwd), torch_gpu=torch_lrn_gpu),
    OpInfo("pyLrnCrossChannelBackward", lrn_samples(make_lrn_bwd), ref_lrn_bwd,
           _errors(make_lrn_bwd, "self", ("grad_output", "self", "output"), ("grad_input",), (3, 8)),
           ("grad_input",), _tol_bwd, torch_reference=torch_lrn_bwd, data_dtype_of=_dd, data="self",
           bench=bench_of(make_lrn_bwd)),
    OpInfo("pyDivisiveNormalization", div_samples(make_div_fwd), ref_div_fwd,
           _errors(make_div_fwd, "self", ("self", "means"), ("out",), (4, 5), optional=("means",)), ("out",), _tol_fwd,
           torch_reference=torch_div_fwd, data_dtype_of=_dd, zero_workspace=_in_place_layouts, data="self",
           bench=bench_of(make_div_fwd)),
    OpInfo("pyDivisiveNormalizationBackward", div_samples(make_div_bwd, bwd=True), ref_div_bwd,
           _errors(make_div_bwd, "self", ("self", "means", "grad_output"), ("grad_input", "grad_means"), (4, 5),
                   optional=("means", "grad_means")),
           ("grad_input", "grad_means"), _tol_bwd, torch_reference=torch_div_bwd, data_dtype_of=_dd, data="self",
           bench=bench_of(make_div_bwd)),
]
