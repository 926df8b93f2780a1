"""OpInfos of the grid family (aclnn.md §5 "Grid sampler / affine grid"): aclnnAffineGrid,
aclnnpyAffineGridBackward (extension), aclnnGridSampler2D, aclnnGridSampler2DBackward.

The float64 NumPy references are written here from PyTorch's documented coordinate rules (a
per-point loop: taps with their weights and weight derivatives), and PyTorch itself
(``affine_grid``, ``grid_sample`` and autograd, float64 on the rounded inputs) checks them where
installed. Samples: every (interpolation, padding, align_corners) combination, every dtype,
channels-last and other views of input/grid/outputs, grids reaching outside [−1, 1], exact corner
coordinates, size-1 inputs, 2-D and 3-D affine grids, output masks, empty tensors.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

import aclnn_py as A
from harness import Sample, TensorSpec
from opdb import ErrorCase, OpInfo

F32, F16, BF16, F64, I32 = A.ACL_FLOAT, A.ACL_FLOAT16, A.ACL_BF16, A.ACL_DOUBLE, A.ACL_INT32
INVALID, NULLPTR = A.ACLNN_ERR_PARAM_INVALID, A.ACLNN_ERR_PARAM_NULLPTR
ND = A.ACL_FORMAT_ND
FLOATS = (F32, F16, BF16)
MODES = ("bilinear", "nearest", "bicubic")
PADS = ("zeros", "border", "reflection")


# float64 references -----------------------------------------------------------------------------

def base_lin(steps, align):
    """PyTorch's linspace_from_neg_one."""
    if steps <= 1:
        return np.zeros(max(steps, 1))
    v = np.linspace(-1.0, 1.0, steps)
    return v if align else v * (steps - 1) / steps


def base_grid(size, align):
    """(points, R + 1): (x, y[, z], 1) per output point in (D,) H, W row-major order."""
    if len(size) == 4:
        _, _, H, W = size
        y, x = np.meshgrid(base_lin(H, align), base_lin(W, align), indexing="ij")
        return np.stack([x.ravel(), y.ravel(), np.ones(H * W)], 1)
    _, _, D, H, W = size
    z, y, x = np.meshgrid(base_lin(D, align), base_lin(H, align), base_lin(W, align), indexing="ij")
    return np.stack([x.ravel(), y.ravel(), z.ravel(), np.ones(D * H * W)], 1)


def affine_grid(theta, size, align):
    b = base_grid(size, align)
    out = np.einsum("pk,nrk->npr", b, theta)
    return out.reshape((size[0], *size[2:], len(size) - 2))


def affine_grid_backward(dgrid, size, align):
    b = base_grid(size, align)
    N, R = size[0], len(size) - 2
    return np.einsum("npr,pk->nrk", dgrid.reshape(N, -1, R), b)


def _unnorm(g, size, align):
    return ((g + 1) / 2 * (size - 1), (size - 1) / 2) if align else (((g + 1) * size - 1) / 2, size / 2)


def _clip(c, size):
    if c <= 0:
        return 0.0, 0.0
    if c >= size - 1:
        return float(size - 1), 0.0
    return c, 1.0


def _reflect(c, tl, th):
    if tl == th:
        return 0.0, 0.0
    mn, span = tl / 2, (th - tl) / 2
    c, sign = c - mn, 1.0
    if c < 0:
        c, sign = -c, -1.0
    extra, flips = math.fmod(c, span), math.floor(c / span)
    return (extra + mn, sign) if flips % 2 == 0 else (span - extra + mn, -sign)


def _pad(c, size, pad, align):
    g = 1.0
    if pad == 1:
        c, g = _clip(c, size)
    elif pad == 2:
        c, gr = _reflect(c, 0, 2 * (size - 1)) if align else _reflect(c, -1, 2 * size - 1)
        c, gc = _clip(c, size)
        g = gr * gc
    if not math.isfinite(c) or c > 2 ** 31 - 2 or c < -2 ** 31:
        c = -100.0
    return c, g


def _cubic(t):
    a = -0.75

    def c1(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def c2(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    def d1(x):
        return 3 * (a + 2) * x * x - 2 * (a + 3) * x

    def d2(x):
        return 3 * a * x * x - 10 * a * x + 8 * a
    w = [c2(t + 1), c1(t), c1(1 - t), c2(2 - t)]
    dw = [d2(t + 1), d1(t), -d1(1 - t), -d2(2 - t)]      # d/dt
    return w, dw


def _taps(gx, gy, IH, IW, interp, pad, align):
    """[(iy, ix, weight, dweight/dgx, dweight/dgy)] of one sample point."""
    if interp == 2:
        ix, mx = _unnorm(gx, IW, align)
        iy, my = _unnorm(gy, IH, align)
        fx, fy = math.floor(ix), math.floor(iy)
        wx, dwx = _cubic(ix - fx)
        wy, dwy = _cubic(iy - fy)
        out = []
        for a in range(4):
            for b in range(4):
                tx = int(_pad(float(fx - 1 + a), IW, pad, align)[0])
                ty = int(_pad(float(fy - 1 + b), IH, pad, align)[0])
                out.append((ty, tx, wx[a] * wy[b], mx * dwx[a] * wy[b], my * wx[a] * dwy[b]))
        return out
    ix, mx = _unnorm(gx, IW, align)
    iy, my = _unnorm(gy, IH, align)
    ix, px = _pad(ix, IW, pad, align)
    iy, py = _pad(iy, IH, pad, align)
    mx, my = mx * px, my * py
    if interp == 1:
        return [(int(np.rint(iy)), int(np.rint(ix)), 1.0, 0.0, 0.0)]
    x0, y0 = math.floor(ix), math.floor(iy)
    x1, y1 = x0 + 1, y0 + 1
    return [(y0, x0, (x1 - ix) * (y1 - iy), -mx * (y1 - iy), -my * (x1 - ix)),
            (y0, x1, (ix - x0) * (y1 - iy), mx * (y1 - iy), -my * (ix - x0)),
            (y1, x0, (x1 - ix) * (iy - y0), -mx * (iy - y0), my * (x1 - ix)),
            (y1, x1, (ix - x0) * (iy - y0), mx * (iy - y0), my * (ix - x0))]


def grid_sample(x, grid, interp, pad, align, gout=None):
    """(out, input_grad, grid_grad); the gradients only with gout."""
    N, C, IH, IW = x.shape
    _, OH, OW, _ = grid.shape
    out = np.zeros((N, C, OH, OW))
    dx, dg = np.zeros_like(x), np.zeros_like(grid)
    for n in range(N):
        for h in range(OH):
            for w in range(OW):
                for iy, ix, wt, dwx, dwy in _taps(grid[n, h, w, 0], grid[n, h, w, 1], IH, IW, interp, pad, align):
                    if not (0 <= iy < IH and 0 <= ix < IW):
                        continue
                    v = x[n, :, iy, ix]
                    out[n, :, h, w] += v * wt
                    if gout is not None:
                        g = gout[n, :, h, w]
                        dx[n, :, iy, ix] += g * wt
                        dg[n, h, w, 0] += np.sum(g * v) * dwx
                        dg[n, h, w, 1] += np.sum(g * v) * dwy
    return out, dx, dg


# samples ----------------------------------------------------------------------------------------

def _spec(values, dtype, layout="contiguous"):
    return TensorSpec(np.asarray(values, np.float64), dtype, ND, layout)


def make_affine(rng, size, dtype=F32, align=True, *, layout="contiguous", note=""):
    R = len(size) - 2
    theta = rng.standard_normal((size[0], R, R + 1))
    return Sample({"theta": _spec(theta, dtype, layout), "out": _spec(np.zeros((size[0], *size[2:], R)), dtype)},
                  {"size": A.aclCreateIntArray(list(size)), "align_corners": align}, note=note)


def make_affine_bwd(rng, size, dtype=F32, align=True, *, layout="contiguous", note=""):
    R = len(size) - 2
    g = rng.standard_normal((size[0], *size[2:], R))
    return Sample({"grad_grid": _spec(g, dtype, layout), "grad_theta": _spec(np.zeros((size[0], R, R + 1)), dtype)},
                  {"size": A.aclCreateIntArray(list(size)), "align_corners": align}, note=note)


def affine_samples(make):
    def samples(rng):
        out = [make(rng, (2, 3, 4, 5), note="2-D, align_corners"), make(rng, (2, 3, 4, 5), align=False, note="2-D")]
        for dt, tag in ((F32, "f32"), (F16, "f16"), (BF16, "bf16"), (F64, "f64")):
            out += [make(rng, (3, 1, 5, 7), dt, align=True, note=f"{tag} 2-D"),
                    make(rng, (2, 2, 3, 4, 5), dt, align=False, note=f"{tag} 3-D")]
        out += [make(rng, (1, 1, 2, 3, 4), align=True, note="3-D, align_corners"),
                make(rng, (2, 3, 1, 6), align=True, note="H = 1 (base 0)"),
                make(rng, (2, 3, 6, 1), align=False, note="W = 1"),
                make(rng, (1, 1, 1, 1), align=True, note="one point"),
                make(rng, (1, 2, 1, 3, 1), align=False, note="3-D with size-1 dims"),
                make(rng, (2, 3, 20, 30), align=False, note="600 points (several warps per block)"),
                make(rng, (2, 3, 4, 5), layout="strided", note="strided view (copied)"),
                make(rng, (2, 3, 4, 5), layout="transposed", note="transposed view (copied)"),
                make(rng, (2, 3, 4, 5), F16, layout="offset", note="at an element offset")]
        return out
    return samples


def _grid_values(rng, shape, spread=1.2):
    return rng.uniform(-spread, spread, shape)


def make_gs(rng, N=2, C=3, IH=5, IW=6, OH=4, OW=3, dtype=F32, interp=0, pad=0, align=False, *, layout="contiguous",
            out_layout=None, grid=None, note=""):
    x = rng.standard_normal((N, C, IH, IW))
    g = _grid_values(rng, (N, OH, OW, 2)) if grid is None else grid
    return Sample({"input": _spec(x, dtype, layout), "grid": _spec(g, dtype, layout),
                   "out": _spec(np.zeros((N, C, OH, OW)), dtype, out_layout or layout)},
                  {"interpolation_mode": interp, "padding_mode": pad, "align_corners": align}, note=note)


def make_gs_bwd(rng, N=2, C=3, IH=5, IW=6, OH=4, OW=3, dtype=F32, interp=0, pad=0, align=False, *,
                layout="contiguous", out_layout=None, grid=None, mask=(True, True), note=""):
    x = rng.standard_normal((N, C, IH, IW))
    g = _grid_values(rng, (N, OH, OW, 2)) if grid is None else grid
    go = rng.standard_normal((N, C, OH, OW))
    ol = out_layout or layout
    return Sample({"grad_output": _spec(go, dtype, layout), "input": _spec(x, dtype, layout),
                   "grid": _spec(g, dtype, layout),
                   "input_grad": _spec(np.zeros(x.shape), dtype, ol) if mask[0] else None,
                   "grid_grad": _spec(np.zeros(g.shape), dtype, ol) if mask[1] else None},
                  {"interpolation_mode": interp, "padding_mode": pad, "align_corners": align,
                   "output_mask": A.aclCreateBoolArray(list(mask))}, note=note)


def _corner_grid():
    v = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    gy, gx = np.meshgrid(v, v, indexing="ij")
    return np.stack([gx, gy], -1)[None]           # (1, 5, 5, 2)


def sampler_samples(make, bwd=False):
    def samples(rng):
        out = [make(rng, note="bilinear zeros"), make(rng, align=True, note="bilinear zeros align_corners")]
        for i in range(3):
            for p in range(3):
                for al in (False, True):
                    out.append(make(rng, interp=i, pad=p, align=al, note=f"{MODES[i]} {PADS[p]} align={al}"))
        for dt, tag in ((F16, "f16"), (BF16, "bf16"), (F64, "f64")):
            out += [make(rng, dtype=dt, interp=0, pad=1, align=False, note=f"{tag} bilinear border"),
                    make(rng, dtype=dt, interp=2, pad=2, align=True, note=f"{tag} bicubic reflection"),
                    make(rng, dtype=dt, interp=1, pad=0, align=False, note=f"{tag} nearest zeros")]
        out += [
            make(rng, N=1, C=2, IH=4, IW=4, OH=5, OW=5, grid=_corner_grid(), note="exact corners, bilinear"),
            make(rng, N=1, C=2, IH=4, IW=4, OH=5, OW=5, grid=_corner_grid(), interp=2, align=True,
                 note="exact corners, bicubic align"),
            make(rng, N=1, C=2, IH=4, IW=5, OH=5, OW=5, grid=_corner_grid(), interp=1, pad=2,
                 note="exact corners, nearest reflection"),
            make(rng, N=2, C=1, IH=5, IW=5, OH=3, OW=4, grid=_grid_values(rng, (2, 3, 4, 2), 4.0), pad=2,
                 note="reflection, grid far outside (several flips)"),
            make(rng, N=2, C=1, IH=5, IW=5, OH=3, OW=4, grid=_grid_values(rng, (2, 3, 4, 2), 4.0), interp=2, pad=2,
                 align=True, note="bicubic reflection, far outside"),
            make(rng, N=1, C=2, IH=1, IW=1, OH=2, OW=3, pad=2, align=True, note="1x1 input, reflection align"),
            make(rng, N=1, C=2, IH=1, IW=4, OH=2, OW=3, pad=1, note="Hin = 1, border"),
            make(rng, N=1, C=2, IH=1, IW=4, OH=2, OW=3, interp=2, pad=2, note="Hin = 1, bicubic reflection"),
            make(rng, N=1, C=5, IH=7, IW=3, OH=6, OW=5, note="C = 5, tall input"),
            make(rng, N=2, C=3, IH=4, IW=5, OH=1, OW=1, interp=2, pad=2, note="one output point (backward: K = 1)"),
            make(rng, N=2, C=3, IH=4, IW=5, OH=1, OW=1, dtype=F16, note="f16, one output point (K = 1)"),
            make(rng, N=2, C=3, IH=4, IW=5, OH=1, OW=1, dtype=F64, interp=0, pad=1, note="f64, one output point"),
            make(rng, N=1, C=2, IH=6, IW=7, OH=24, OW=30, interp=0, pad=2, align=True,
                 note="720 output points (many chunks)"),
            make(rng, layout="channels_last", note="channels-last input, grid and out (no copies)"),
            make(rng, interp=2, pad=1, layout="channels_last", note="channels-last bicubic"),
            make(rng, dtype=F16, interp=0, pad=0, layout="channels_last", note="channels-last f16"),
            make(rng, layout="transposed", note="transposed memory"),
            make(rng, layout="strided", note="strided views (copied)"),
            make(rng, dtype=BF16, layout="offset", note="at an element offset"),
            make(rng, out_layout="strided", note="contiguous in, strided out"),
            make(rng, out_layout="channels_last", note="contiguous in, channels-last out"),
            make(rng, N=0, note="empty batch"),
            make(rng, C=0, note="no channels"),
            make(rng, OH=0, note="empty output height"),
            make(rng, OW=0, dtype=F16, note="empty output width"),
        ]
        if bwd:
            out += [make(rng, mask=(True, False), note="output_mask [1, 0]: grid_grad null"),
                    make(rng, mask=(False, True), interp=2, note="output_mask [0, 1]: input_grad null"),
                    make(rng, mask=(True, False), dtype=F16, note="f16, input_grad only")]
        return out
    return samples


# references -------------------------------------------------------------------------------------

def _vals(s):
    return {k: v.rounded() for k, v in s.tensors.items() if v is not None}


def _size(s):
    return tuple(s.attrs["size"].values)


def ref_affine(s):
    return {"out": affine_grid(_vals(s)["theta"], _size(s), s.attrs["align_corners"])}


def ref_affine_bwd(s):
    return {"grad_theta": affine_grid_backward(_vals(s)["grad_grid"], _size(s), s.attrs["align_corners"])}


def _gs_args(s):
    a = s.attrs
    return a["interpolation_mode"], a["padding_mode"], a["align_corners"]


def ref_gs(s):
    t = _vals(s)
    if not t["out"].size:
        return {}
    return {"out": grid_sample(t["input"], t["grid"], *_gs_args(s))[0]}


def ref_gs_bwd(s):
    t = _vals(s)
    _, dx, dg = grid_sample(t["input"], t["grid"], *_gs_args(s), gout=t["grad_output"])
    out = {}
    if s.tensors["input_grad"] is not None:
        out["input_grad"] = dx
    if s.tensors["grid_grad"] is not None:
        out["grid_grad"] = dg
    return out


def _torch_ok(s, name):
    return s.tensors[name].dtype in FLOATS


def torch_affine(s):
    if not _torch_ok(s, "theta"):
        return {}
    import torch
    th = torch.from_numpy(_vals(s)["theta"])
    with warnings.catch_warnings():             # "affine_grid behavior has changed for unit-size grids": known
        warnings.simplefilter("ignore")
        return {"out": torch.nn.functional.affine_grid(th, list(_size(s)),
                                                       align_corners=s.attrs["align_corners"]).numpy()}


def torch_affine_bwd(s):
    if not _torch_ok(s, "grad_grid"):
        return {}
    import torch
    size = _size(s)
    R = len(size) - 2
    th = torch.zeros((size[0], R, R + 1), dtype=torch.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = torch.nn.functional.affine_grid(th, list(size), align_corners=s.attrs["align_corners"])
    g.backward(torch.from_numpy(_vals(s)["grad_grid"]))
    return {"grad_theta": th.grad.numpy()}


def _torch_gs(torch, x, g, s):
    i, p, al = _gs_args(s)
    return torch.nn.functional.grid_sample(x, g, mode=MODES[i], padding_mode=PADS[p], align_corners=al)


def torch_gs(s):
    if not _torch_ok(s, "input") or not s.tensors["out"].values.size:
        return {}
    import torch
    t = _vals(s)
    return {"out": _torch_gs(torch, torch.from_numpy(t["input"]), torch.from_numpy(t["grid"]), s).numpy()}


def torch_gs_bwd(s):
    if not _torch_ok(s, "input") or not s.tensors["input"].values.size:
        return {}
    import torch
    t = _vals(s)
    x = torch.from_numpy(t["input"]).requires_grad_(True)
    g = torch.from_numpy(t["grid"]).requires_grad_(True)
    y = _torch_gs(torch, x, g, s)
    dx, dg = torch.autograd.grad(y, (x, g), torch.from_numpy(t["grad_output"]), allow_unused=True)
    out = {}
    if s.tensors["input_grad"] is not None:
        out["input_grad"] = np.zeros(x.shape) if dx is None else dx.numpy()
    if s.tensors["grid_grad"] is not None:
        out["grid_grad"] = np.zeros(g.shape) if dg is None else dg.numpy()
    return out


# errors -----------------------------------------------------------------------------------------

def _null(n):
    return lambda s: s.tensors.__setitem__(n, None)


def _attr(k, v):
    return lambda s: s.attrs.__setitem__(k, v)


def _set(n, **kv):
    return lambda s: [setattr(s.tensors[n], k, v) for k, v in kv.items()]


def _all_dtype(dt):
    return lambda s: [setattr(t, "dtype", dt) for t in s.tensors.values() if t is not None]


def _overlap(out, src):
    def mutate(d):
        d[out].tensor.addr = d[src].tensor.addr + 4
        d[out].tensor.storage_dims = d[src].tensor.storage_dims
    return mutate


def affine_errors(make, th, out, bwd=False):
    def errors(rng):
        def case(note, status, names, fn=None, size=(2, 3, 4, 5), **kw):
            s = make(rng, size, note=note, **kw)
            if fn:
                fn(s)
            return ErrorCase(s, status, names)
        ia = A.aclCreateIntArray
        res = [case(f"{th} null", NULLPTR, th, _null(th)), case(f"{out} null", NULLPTR, out, _null(out)),
               case("size null", NULLPTR, "size", _attr("size", None)),
               case("align_corners null", NULLPTR, "align_corners", _attr("align_corners", None)),
               case("align_corners int", INVALID, "align_corners", _attr("align_corners", 1)),
               case("size a list", INVALID, "size", _attr("size", [2, 3, 4, 5])),
               case("size of 3", INVALID, "size", _attr("size", ia([2, 3, 4]))),
               case("size of 6", INVALID, "size", _attr("size", ia([2, 3, 4, 5, 6, 7]))),
               case("size N differs", INVALID, "size", _attr("size", ia([3, 3, 4, 5]))),
               case("H = 0", INVALID, "size", _attr("size", ia([2, 3, 0, 5]))),
               case("W = 100001", INVALID, "size", _attr("size", ia([2, 3, 4, 100001]))),
               case("N = 0", INVALID, "size", _attr("size", ia([0, 3, 4, 5])), size=(2, 3, 4, 5)),
               case("D = 0 (3-D)", INVALID, "size", _attr("size", ia([2, 3, 0, 4, 5])), size=(2, 3, 1, 4, 5)),
               case("INT32", INVALID, th, _all_dtype(I32)),
               case(f"{out} dtype differs", INVALID, out, _set(out, dtype=F16)),
               case(f"{out} shape wrong", INVALID, out,
                    _set(out, values=np.zeros((2, 5, 4, 2) if not bwd else (2, 3, 2)))),
               case(f"{out} 3-D shape for 2-D size", INVALID, out,
                    _set(out, values=np.zeros((2, 4, 5, 3) if not bwd else (2, 3, 4)))),
               case("private format", INVALID, th, _set(th, format=A.ACL_FORMAT_NC1HWC0))]
        if not bwd:
            res += [case("theta (N, 3, 4) with a 2-D size", INVALID, "theta", _set("theta", values=np.zeros((2, 3, 4)))),
                    case("theta rank 2", INVALID, "theta", _set("theta", values=np.zeros((2, 6)))),
                    case("INT32", INVALID, "theta", _all_dtype(I32))]
        else:
            res += [case("grad_grid shape wrong", INVALID, "grad_grid", _set("grad_grid", values=np.zeros((2, 4, 4, 2)))),
                    case("grad_grid rank 3", INVALID, "grad_grid", _set("grad_grid", values=np.zeros((2, 20, 2))))]
        s = make(rng, (2, 3, 4, 5), note="output overlaps the input")
        s.mutate = _overlap(out, th)
        res.append(ErrorCase(s, INVALID, out))
        return res
    return errors


def sampler_errors(make, bwd=False):
    def errors(rng):
        def case(note, status, names, fn=None, **kw):
            s = make(rng, note=note, **kw)
            if fn:
                fn(s)
            return ErrorCase(s, status, names)
        ins = ("grad_output", "input", "grid") if bwd else ("input", "grid")
        outs = ("input_grad", "grid_grad") if bwd else ("out",)
        res = [case(f"{n} null", NULLPTR, n, _null(n)) for n in ins]
        if not bwd:
            res.append(case("out null", NULLPTR, "out", _null("out")))
        else:
            res += [case("input_grad null while wanted", NULLPTR, "input_grad", _null("input_grad")),
                    case("grid_grad null while wanted", NULLPTR, "grid_grad", _null("grid_grad")),
                    case("output_mask null", NULLPTR, "output_mask", _attr("output_mask", None)),
                    case("output_mask of 3", INVALID, "output_mask",
                         _attr("output_mask", A.aclCreateBoolArray([True, True, True]))),
                    case("output_mask a list", INVALID, "output_mask", _attr("output_mask", [True, True])),
                    case("grad_output shape wrong", INVALID, "grad_output",
                         _set("grad_output", values=np.zeros((2, 3, 3, 4))))]
        for k in ("interpolation_mode", "padding_mode", "align_corners"):
            res.append(case(f"{k} null", NULLPTR, k, _attr(k, None)))
        res += [case("interpolation_mode 3", INVALID, "interpolation_mode", _attr("interpolation_mode", 3)),
                case("interpolation_mode -1", INVALID, "interpolation_mode", _attr("interpolation_mode", -1)),
                case("padding_mode 3", INVALID, "padding_mode", _attr("padding_mode", 3)),
                case("padding_mode 1.0", INVALID, "padding_mode", _attr("padding_mode", 1.0)),
                case("align_corners 1", INVALID, "align_corners", _attr("align_corners", 1)),
                case("INT32", INVALID, ins[0], _all_dtype(I32)),
                case("grid dtype differs", INVALID, "grid", _set("grid", dtype=F16)),
                case(f"{outs[0]} dtype differs", INVALID, outs[0], _set(outs[0], dtype=BF16)),
                case("input rank 3", INVALID, "input", _set("input", values=np.zeros((2, 3, 5)))),
                case("input rank 5", INVALID, "input", _set("input", values=np.zeros((2, 3, 5, 6, 1)))),
                case("grid last dim 3", INVALID, "grid", _set("grid", values=np.zeros((2, 4, 3, 3)))),
                case("grid rank 3", INVALID, "grid", _set("grid", values=np.zeros((2, 12, 2)))),
                case("grid N differs", INVALID, "grid", _set("grid", values=np.zeros((1, 4, 3, 2)))),
                case("Hin = 0", INVALID, "input", IH=0),
                case("Win = 0", INVALID, "input", IW=0),
                case("NHWC input format", INVALID, "input", _set("input", format=A.ACL_FORMAT_NHWC)),
                case("private format", INVALID, "input", _set("input", format=A.ACL_FORMAT_NC1HWC0))]
        if not bwd:
            res.append(case("out shape wrong", INVALID, "out", _set("out", values=np.zeros((2, 3, 3, 4)))))
        else:
            res += [case("input_grad shape wrong", INVALID, "input_grad", _set("input_grad", values=np.zeros((2, 3, 6, 5)))),
                    case("grid_grad shape wrong", INVALID, "grid_grad", _set("grid_grad", values=np.zeros((2, 3, 4, 2))))]
        s = make(rng, note="output overlaps an input")
        s.mutate = _overlap(outs[0], "input")
        res.append(ErrorCase(s, INVALID, outs[0]))
        return res
    return errors


def _dd(name):
    def dd(s):
        dt = s.tensors[name].dtype
        return dt if dt in (F16, BF16) else F32          # DOUBLE: f32's (tighter than needed) tolerance
    return dd


def _tol(s):
    return 8.0


# benchmarks (benchmarks/bench_ops.py) --------------------------------------------------------------

def bench_gs(bwd):
    """input (N, C, H, W) in NCHW or channels-last memory, a contiguous grid (N, H, W, 2) of the same H, W."""
    def bench(rng, shape, dtype, channels_last):
        N, C, H, W = shape
        lay = "channels_last" if channels_last else "contiguous"
        x = rng.standard_normal(shape)
        g = _grid_values(rng, (N, H, W, 2), 1.1)
        if not bwd:
            return Sample({"input": _spec(x, dtype, lay), "grid": _spec(g, dtype),
                           "out": _spec(np.zeros(shape), dtype, lay)},
                          {"interpolation_mode": 0, "padding_mode": 0, "align_corners": False}, note="bench")
        return Sample({"grad_output": _spec(rng.standard_normal(shape), dtype, lay), "input": _spec(x, dtype, lay),
                       "grid": _spec(g, dtype), "input_grad": _spec(np.zeros(shape), dtype, lay),
                       "grid_grad": _spec(np.zeros(g.shape), dtype)},
                      {"interpolation_mode": 0, "padding_mode": 0, "align_corners": False,
                       "output_mask": A.aclCreateBoolArray([True, True])}, note="bench")
    return bench


def torch_gs_gpu(bwd):
    def make(s, device):
        import torch
        tdt = {F32: torch.float32, F16: torch.float16, BF16: torch.bfloat16, F64: torch.float64}
        sp = s.tensors["input"]
        cl = sp.layout == "channels_last"

        def t(name):
            v = torch.from_numpy(s.tensors[name].rounded()).to(device=device, dtype=tdt[sp.dtype])
            return v.contiguous(memory_format=torch.channels_last) if cl and v.dim() == 4 and name != "grid" else v
        x, g = t("input"), t("grid")
        i, p, al = _gs_args(s)
        if not bwd:
            return lambda: torch.grid_sampler_2d(x, g, i, p, al)
        go = t("grad_output")
        return lambda: torch.ops.aten.grid_sampler_2d_backward(go, x, g, i, p, al, [True, True])
    return make


def _in_place_layouts(s):
    layouts = {t.layout for t in s.tensors.values() if t is not None}
    return len(layouts) == 1 and "strided" not in layouts


OPS = [
    OpInfo("AffineGrid", affine_samples(make_affine), ref_affine, affine_errors(make_affine, "theta", "out"), ("out",),
           _tol, torch_reference=torch_affine, data_dtype_of=_dd("theta"), data="theta"),
    OpInfo("pyAffineGridBackward", affine_samples(make_affine_bwd), ref_affine_bwd,
           affine_errors(make_affine_bwd, "grad_grid", "grad_theta", bwd=True), ("grad_theta",), _tol,
           torch_reference=torch_affine_bwd, data_dtype_of=_dd("grad_grid"), data="grad_grid"),
    OpInfo("GridSampler2D", sampler_samples(make_gs), ref_gs, sampler_errors(make_gs), ("out",), _tol,
           torch_reference=torch_gs, data_dtype_of=_dd("input"), zero_workspace=_in_place_layouts, data="input",
           bench=bench_gs(False), torch_gpu=torch_gs_gpu(False)),
    OpInfo("GridSampler2DBackward", sampler_samples(make_gs_bwd, bwd=True), ref_gs_bwd,
           sampler_errors(make_gs_bwd, bwd=True), ("input_grad", "grid_grad"), _tol,
           torch_reference=torch_gs_bwd, data_dtype_of=_dd("input"), data="input",
           bench=bench_gs(True), torch_gpu=torch_gs_gpu(True)),
]
