"""The grid family (kernels/grid_sampler.cu): aclnnAffineGrid, aclnnGridSampler2D,
aclnnGridSampler2DBackward (CANN, aclnn.md §5 "Grid sampler / affine grid") and
aclnnpyAffineGridBackward (an **aclnn-py extension**: CANN has no AffineGrid backward; it gives
dtheta from dgrid, what cuDNN's ``cudnnSpatialTfGridGeneratorBackward`` computes).

    aclnnAffineGrid(theta, size, align_corners, out)
        theta (N, 2, 3), size (N, C, H, W) → out (N, H, W, 2);
        theta (N, 3, 4), size (N, C, D, H, W) → out (N, D, H, W, 3);
        out[n, ..., r] = Σ_k theta[n, r, k]·base[..., k], base = (x_w, y_h[, z_d], 1) with PyTorch's
        linspace_from_neg_one (align_corners: −1..1 at the corner centres; else scaled by (s − 1)/s;
        a size of 1 gives 0). FLOAT, FLOAT16, BF16; N, (D,) H, W in (0, 100000], size[0] = theta's N.
    aclnnpyAffineGridBackward(grad_grid, size, align_corners, grad_theta)
        grad_theta[n, r, k] = Σ_points grad_grid[n, p, r]·base[p, k] (the transpose of the forward).
        FLOAT, FLOAT16, BF16, DOUBLE; shapes as the forward's out and theta.
    aclnnGridSampler2D(input, grid, interpolation_mode, padding_mode, align_corners, out)
        input (N, C, Hin, Win), grid (N, Hout, Wout, 2) (x indexes W, y indexes H), out (N, C, Hout, Wout).
    aclnnGridSampler2DBackward(grad_output, input, grid, interpolation_mode, padding_mode, align_corners,
                               output_mask, input_grad, grid_grad)
        output_mask [input_grad wanted, grid_grad wanted]; a masked-off output may be null and is
        not written; a wanted one must not be null (161001).
        interpolation_mode 0 bilinear, 1 nearest, 2 bicubic; padding_mode 0 zeros, 1 border,
        2 reflection (other values: 161002). FLOAT, FLOAT16, BF16, DOUBLE, one dtype for all; 4-D
        ND/NCHW; Hin, Win ≠ 0 (161002). Empty N, C, Hout or Wout: success; the backward zero-fills
        a wanted output that is not empty (grid_grad when C = 0, input_grad when Hout·Wout = 0).

Coordinates, padding and bicubic coefficients follow PyTorch's grid_sampler exactly (see the
kernel file). Deterministic, no float atomics: grid_grad is one thread per output point looping
over C; input_grad cuts each image's output points into K consecutive chunks (K from the shapes
only: about 8192 threads, at most 64 chunks, partial planes ≤ 256 MiB) and thread (n, c, k) adds
chunk k, in row-major order, into its own partial plane in the workspace; a second kernel sums the K
partials of each element in chunk order. With K = 1 (N·C ≥ 8192, or one output point) one thread per
(n, c) plane accumulates directly (in input_grad for FLOAT/DOUBLE, in f32 workspace planes for the
16-bit types). AffineGridBackward is one block per dtheta entry with a
fixed-order block sum. All tensors are used in their own memory order when they are dense in one
(NCHW or channels-last input, any dense grid): no copies.

cuDNN's spatial transformer is these ops with align_corners = True, bilinear, zeros:
``cudnnSpatialTfGridGeneratorForward`` = aclnnAffineGrid(theta, (N, C, H, W), True, grid),
``...GridGeneratorBackward`` = aclnnpyAffineGridBackward(dgrid, (N, C, H, W), True, dtheta),
``cudnnSpatialTfSamplerForward`` = aclnnGridSampler2D(x, grid, 0, 0, True, y),
``...SamplerBackward`` = aclnnGridSampler2DBackward(dy, x, grid, 0, 0, True, [True, True], dx, dgrid).
"""
from __future__ import annotations

import numpy as np

from ..dtypes import aclDataType, aclFormat
from ..kernel_cache import declare, instantiate
from ..opdef import INVALID, NULLPTR, AttrParam as A, OpDef, TensorParam as T, register
from ..plan import Plan, dense_strides, grid_for, memory_order, on_host
from ..tensor import aclBoolArray, aclIntArray

F32, F16, BF16, F64 = aclDataType.ACL_FLOAT, aclDataType.ACL_FLOAT16, aclDataType.ACL_BF16, aclDataType.ACL_DOUBLE
GRID_DTYPES = frozenset({F32, F16, BF16, F64})              # aclnnAffineGrid: CANN's three + DOUBLE (extension)
SAMPLER_DTYPES = frozenset({F32, F16, BF16, F64})           # aclnnGridSampler2D(Backward)
CTYPES = ("float", "__half", "__nv_bfloat16", "double")
FAMILY = declare("grid_sampler", *(instantiate(k + "<{T}>", T=CTYPES) for k in (
    "affine_grid_fwd", "affine_grid_bwd", "grid_sampler_2d_fwd", "grid_sampler_2d_bwd_grid",
    "grid_sampler_2d_bwd_input", "grid_sampler_2d_bwd_input_partial", "grid_sampler_2d_bwd_input_reduce")))
GROUP = "Grid sampler / affine grid"
BLOCK = 256
MAX_SIZE = 100000
# input_grad: output points cut into K chunks so that about this many threads work (K = 1: one
# thread per (n, c) plane, no partials); the partial planes are capped at this many bytes
TARGET_THREADS = 8192
MAX_CHUNKS = 64
MAX_PARTIAL_BYTES = 256 << 20
_FMT = frozenset({aclFormat.ACL_FORMAT_ND, aclFormat.ACL_FORMAT_NCHW})

# struct GridGeo of kernels/grid_sampler.cu, passed by value
GRID_GEO = np.dtype([("N", "<i8"), ("C", "<i8"), ("IH", "<i8"), ("IW", "<i8"), ("OH", "<i8"), ("OW", "<i8"),
                     ("in_s", "<i8", 4), ("grid_s", "<i8", 4), ("out_s", "<i8", 4), ("dgrid_s", "<i8", 4),
                     ("din_s", "<i8", 4), ("acc_s", "<i8", 4),
                     ("interp", "<i4"), ("padding", "<i4"), ("align", "<i4"), ("convert", "<i4")])


def _shape(t) -> str:
    return str(tuple(t.view_dims))


# affine grid ------------------------------------------------------------------------------------

def _grid_shape_of_size(p: Plan) -> tuple[int, ...]:
    size = list(p["size"])
    return (size[0], size[2], size[3], 2) if len(size) == 4 else (size[0], size[2], size[3], size[4], 3)


def _check_size(p: Plan, theta_name: str) -> None:
    size = list(p["size"])
    th = p[theta_name]
    R = len(size) - 2
    want = (R, R + 1)
    if th.rank != 3 or tuple(th.view_dims[1:]) != want:
        p.fail(INVALID, f"{theta_name} must be (N, {R}, {R + 1}) for a size of length {len(size)}, got shape {_shape(th)}")
    names = ("N", "C", "D", "H", "W") if R == 3 else ("N", "C", "H", "W")
    for nm, v in zip(names, size):
        if nm != "C" and not 0 < v <= MAX_SIZE:
            p.fail(INVALID, f"size {nm} must be in (0, {MAX_SIZE}], got {v} (size {tuple(size)})")
        if nm == "C" and v < 0:
            p.fail(INVALID, f"size C must be >= 0, got {v}")
    if size[0] != th.view_dims[0]:
        p.fail(INVALID, f"size[0] (N = {size[0]}) must equal {theta_name}'s N = {th.view_dims[0]}")


def _grid_out_shape(grid_name: str, theta_name: str):
    def rule(p: Plan, name: str, t) -> None:
        _check_size(p, theta_name)
        want = _grid_shape_of_size(p)
        if tuple(t.view_dims) != want:
            p.fail(INVALID, f"{name} must have shape {want} (from size {tuple(p['size'])}), got {_shape(t)}")
    return rule


def _theta_shape(grid_name: str, theta_name: str):
    def rule(p: Plan, name: str, t) -> None:
        _check_size(p, theta_name)
        g = p[grid_name]
        want = _grid_shape_of_size(p)
        if tuple(g.view_dims) != want:
            p.fail(INVALID, f"{grid_name} must have shape {want} (from size {tuple(p['size'])}), got {_shape(g)}")
    return rule


def _affine_dims(p: Plan) -> tuple[int, int, int, int, int]:
    size = list(p["size"])
    if len(size) == 4:
        return size[0], 1, size[2], size[3], 2
    return size[0], size[2], size[3], size[4], 3


def _plan_affine_grid(p: Plan) -> None:
    N, D, H, W, R = _affine_dims(p)
    p.launch(FAMILY, f"affine_grid_fwd<{p.ctype('theta')}>", grid_for(N * D * H * W, BLOCK), BLOCK,
             (p.read("theta"), p.write("out"), np.int64(N), np.int64(D), np.int64(H), np.int64(W), np.int32(R),
              np.int32(bool(p["align_corners"]))))


def _plan_affine_grid_bwd(p: Plan) -> None:
    N, D, H, W, R = _affine_dims(p)
    entries = N * R * (R + 1)
    # one warp per entry on the host: the block sum of 256 threads ran as fibers (a tiny call took 0.5 ms)
    block = 32 if on_host() else BLOCK
    p.launch(FAMILY, f"affine_grid_bwd<{p.ctype('grad_grid')}>", min(entries, 65535), block,
             (p.read("grad_grid"), p.write("grad_theta"), np.int64(N), np.int64(D), np.int64(H), np.int64(W),
              np.int32(R), np.int32(bool(p["align_corners"]))))


_BASE_DOC = ("base = (x_w, y_h[, z_d], 1) with PyTorch's linspace_from_neg_one (align_corners: −1 and 1 at the "
             "corner centres; else scaled by (s − 1)/s; a size of 1 gives 0)")

AffineGrid = register(OpDef(
    name="AffineGrid",
    params=(T("theta", dtypes=GRID_DTYPES), A("size", aclIntArray, length=(4, 5)), A("align_corners", bool),
            T("out", out=True, dtypes=GRID_DTYPES, match="theta", shape=_grid_out_shape("out", "theta"))),
    ranks=(3, 3), plan=_plan_affine_grid, group=GROUP,
    doc=f"theta (N, 2, 3) with size (N, C, H, W) → out (N, H, W, 2); theta (N, 3, 4) with size (N, C, D, H, W) → "
        f"out (N, D, H, W, 3); out = theta·base, {_BASE_DOC}. FLOAT/FLOAT16/BF16 (CANN's list) and DOUBLE (an aclnn-py "
        f"extension, f64: the cuDNN face's DOUBLE grids), out has theta's dtype; N, (D,) H, "
        f"W in (0, 100000], size[0] = N. cuDNN's grid generator is align_corners = True."), globals())

AffineGridBackward = register(OpDef(
    name="pyAffineGridBackward",
    params=(T("grad_grid", dtypes=SAMPLER_DTYPES), A("size", aclIntArray, length=(4, 5)), A("align_corners", bool),
            T("grad_theta", out=True, dtypes=SAMPLER_DTYPES, match="grad_grid",
              shape=_theta_shape("grad_grid", "grad_theta"))),
    ref="grad_grid", ranks=(4, 5), plan=_plan_affine_grid_bwd, group=GROUP,
    cudnn=("cudnnSpatialTfGridGeneratorBackward",),
    doc=f"aclnn-py extension (CANN has no AffineGrid backward): grad_theta[n, r, k] = Σ_points grad_grid[n, p, r]·"
        f"base[p, k], {_BASE_DOC}. grad_grid (N, H, W, 2) with size (N, C, H, W) → grad_theta (N, 2, 3); (N, D, H, "
        f"W, 3) with size (N, C, D, H, W) → (N, 3, 4). FLOAT/FLOAT16/BF16/DOUBLE, one dtype. One block per "
        f"grad_theta entry, fixed-order sum: deterministic. cuDNN's cudnnSpatialTfGridGeneratorBackward is "
        f"align_corners = True."), globals())


# grid sampler -----------------------------------------------------------------------------------

def _dims_of(p: Plan):
    x, g = p["input"], p["grid"]
    N, C, IH, IW = x.view_dims
    _, OH, OW, _ = g.view_dims
    return N, C, IH, IW, OH, OW


def _check_grid(p: Plan, name: str, t) -> None:
    x = p["input"]
    if t.rank != 4 or t.view_dims[3] != 2 or t.view_dims[0] != x.view_dims[0]:
        p.fail(INVALID, f"{name} must be (N, Hout, Wout, 2) with N = {x.view_dims[0]} (input's), got {_shape(t)}")


def _nchw_like_out(p: Plan, name: str, t) -> None:
    N, C, _, _ = p["input"].view_dims
    g = p["grid"]
    _check_grid(p, "grid", g)
    want = (N, C, g.view_dims[1], g.view_dims[2])
    if tuple(t.view_dims) != want:
        p.fail(INVALID, f"{name} must have shape {want} (N, C of input; Hout, Wout of grid), got {_shape(t)}")


def _same_as_grid(p: Plan, name: str, t) -> None:
    if tuple(t.view_dims) != tuple(p["grid"].view_dims):
        p.fail(INVALID, f"{name} shape must equal grid's {_shape(p['grid'])}, got {_shape(t)}")


def _check_sampler(p: Plan) -> None:
    x = p["input"]
    if x.view_dims[2] == 0 or x.view_dims[3] == 0:
        p.fail(INVALID, f"input must have non-empty spatial dims (Hin, Win ≠ 0), got {_shape(x)}")
    mask = p.values.get("output_mask")
    if mask is not None:
        for flag, name in zip(mask, ("input_grad", "grid_grad")):
            if bool(flag) and p[name] is None:
                p.fail(NULLPTR, f"{name} must not be null when its output_mask entry is true")


def _order(t) -> list[int]:
    return memory_order(t) or list(range(t.rank))


def _bind(p: Plan, name: str, write: bool = False):
    """(pointer, per-dim element strides) of tensor ``name`` dense in its own memory order."""
    t = p[name]
    order = _order(t)
    ptr = p.write(name, order) if write else p.read(name, order)
    return ptr, dense_strides(t.view_dims, order)


def _geo(p: Plan, **strides) -> np.void:
    g = np.zeros((), GRID_GEO)
    g["N"], g["C"], g["IH"], g["IW"], g["OH"], g["OW"] = _dims_of(p)
    for k, v in strides.items():
        g[k] = v
    g["interp"], g["padding"] = p["interpolation_mode"], p["padding_mode"]
    g["align"] = int(bool(p["align_corners"]))
    return g


def _plan_sampler_fwd(p: Plan) -> None:
    N, C, IH, IW, OH, OW = _dims_of(p)
    if N * C * OH * OW == 0:
        return
    x, xs = _bind(p, "input")
    g, gs = _bind(p, "grid")
    o, os_ = _bind(p, "out", write=True)
    geo = _geo(p, in_s=xs, grid_s=gs, out_s=os_)
    p.launch(FAMILY, f"grid_sampler_2d_fwd<{p.ctype('input')}>", grid_for(N * OH * OW, BLOCK), BLOCK,
             (x, g, o, geo[()]))


def _chunks(planes: int, points: int, plane_bytes: int) -> int:
    """K, the chunks of output points per (n, c) plane: enough threads, bounded partial planes; shapes only."""
    k = min(max(1, -(-TARGET_THREADS // max(planes, 1))), MAX_CHUNKS, max(points, 1))
    while k > 1 and planes * k * plane_bytes > MAX_PARTIAL_BYTES:
        k //= 2
    return k


def _plan_sampler_bwd(p: Plan) -> None:
    N, C, IH, IW, OH, OW = _dims_of(p)
    mask = [bool(v) for v in p["output_mask"]]
    ct = p.ctype("input")
    want_dx = mask[0] and p["input_grad"].numel > 0
    want_dg = mask[1] and p["grid_grad"].numel > 0
    if want_dg and C == 0:
        p.fill("grid_grad", 0.0)
        want_dg = False
    if not (want_dx or want_dg):
        return
    go, gos = _bind(p, "grad_output")
    g, gs = _bind(p, "grid")
    if want_dg:
        x, xs = _bind(p, "input")
        dg, dgs = _bind(p, "grid_grad", write=True)
        geo = _geo(p, in_s=xs, grid_s=gs, out_s=gos, dgrid_s=dgs)
        p.launch(FAMILY, f"grid_sampler_2d_bwd_grid<{ct}>", grid_for(N * OH * OW, BLOCK), BLOCK, (go, x, g, dg, geo[()]))
    if want_dx:
        dx, dxs = _bind(p, "input_grad", write=True)
        asz = 8 if p.dtype("input") == F64 else 4
        K = _chunks(N * C, OH * OW, IH * IW * asz)
        if K > 1:                                   # partial planes per chunk, summed in chunk order
            part = p.alloc(N * C * K * IH * IW * asz)
            geo = _geo(p, grid_s=gs, out_s=gos, din_s=dxs)
            p.launch(FAMILY, f"grid_sampler_2d_bwd_input_partial<{ct}>", grid_for(N * C * K, 64), 64,
                     (go, g, part, geo[()], np.int64(K)))
            p.launch(FAMILY, f"grid_sampler_2d_bwd_input_reduce<{ct}>", grid_for(N * C * IH * IW, BLOCK), BLOCK,
                     (part, dx, geo[()], np.int64(K)))
            return
        if p.dtype("input") in (F32, F64):          # accumulate in input_grad itself
            acc, accs, convert = dx, dxs, 0
        else:                                       # f32 planes in the workspace, converted at the end
            acc, accs, convert = p.alloc(N * C * IH * IW * 4), dense_strides((N, C, IH, IW), range(4)), 1
        geo = _geo(p, grid_s=gs, out_s=gos, din_s=dxs, acc_s=accs)
        geo["convert"] = convert
        p.launch(FAMILY, f"grid_sampler_2d_bwd_input<{ct}>", grid_for(N * C, 64), 64, (go, g, acc, dx, geo[()]))


_MODES = ("interpolation_mode 0 bilinear / 1 nearest / 2 bicubic, padding_mode 0 zeros / 1 border / 2 reflection, "
          "coordinates as PyTorch's grid_sampler")
_SAMPLER_ATTRS = (A("interpolation_mode", int, choices=(0, 1, 2)), A("padding_mode", int, choices=(0, 1, 2)),
                  A("align_corners", bool))

GridSampler2D = register(OpDef(
    name="GridSampler2D",
    params=(T("input", dtypes=SAMPLER_DTYPES), T("grid", dtypes=SAMPLER_DTYPES, match="input", shape=_check_grid),
            *_SAMPLER_ATTRS,
            T("out", out=True, dtypes=SAMPLER_DTYPES, match="input", shape=_nchw_like_out)),
    ranks=(4, 4), formats=_FMT, check=_check_sampler, plan=_plan_sampler_fwd, plan_empty=_plan_sampler_fwd,
    group=GROUP,
    doc=f"out[n, c, h, w] = input sampled at grid[n, h, w] = (x, y) ∈ [−1, 1]² ({_MODES}). input (N, C, Hin, Win), "
        f"grid (N, Hout, Wout, 2), out (N, C, Hout, Wout); FLOAT/FLOAT16/BF16/DOUBLE, one dtype; ND/NCHW; Hin, Win "
        f"≠ 0. Empty N, C, Hout or Wout: nothing launched. cuDNN's sampler is bilinear, zeros, align_corners = True."),
    globals())

GridSampler2DBackward = register(OpDef(
    name="GridSampler2DBackward",
    params=(T("grad_output", dtypes=SAMPLER_DTYPES, match="input", shape=_nchw_like_out),
            T("input", dtypes=SAMPLER_DTYPES), T("grid", dtypes=SAMPLER_DTYPES, match="input", shape=_check_grid),
            *_SAMPLER_ATTRS, A("output_mask", aclBoolArray, length=2),
            T("input_grad", out=True, optional=True, dtypes=SAMPLER_DTYPES, match="input"),
            T("grid_grad", out=True, optional=True, dtypes=SAMPLER_DTYPES, match="input", shape=_same_as_grid)),
    ref="input", ranks=(4, 4), formats=_FMT, check=_check_sampler, plan=_plan_sampler_bwd,
    plan_empty=_plan_sampler_bwd, group=GROUP, cudnn=("cudnnSpatialTfSamplerBackward",),
    doc=f"input_grad = ∂L/∂input, grid_grad = ∂L/∂grid of aclnnGridSampler2D ({_MODES}; nearest: grid_grad = 0). "
        f"output_mask [input_grad, grid_grad]: a masked-off output may be null and is not written. Empty: a wanted "
        f"non-empty output is zero-filled. Deterministic without atomics: grid_grad one thread per output point "
        f"(loop over C); input_grad: per (n, c, chunk of output points) a private partial plane in the workspace, "
        f"walked in row-major order, then the chunks summed in order (chunk count from the shapes only; f32 "
        f"accumulation, f64 for DOUBLE). cuDNN's cudnnSpatialTfSamplerBackward is bilinear, "
        f"zeros, align_corners = True, mask [True, True]."), globals())
