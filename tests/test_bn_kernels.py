"""BatchNorm-family kernels (kernels/batch_norm.cu) run directly on the host emulator against the
float64 references in tests/references/batch_norm.py (which are themselves checked against
PyTorch autograd and against each other at the end of this file).

Every kernel; float / __half / __nv_bfloat16 data; NCX and NXC; odd sizes (C=1, 3, 37, S=1, N=1,
S > 4096 so planes are cut into segments); misaligned pointers (scalar fallback) next to aligned
ones (16-byte vector path); guard bytes around every buffer (no write outside an output); Welford
stress; bitwise run-to-run reproducibility; reductions with empty and uneven splits.

Memory is NumPy buffers; pointers are their addresses. The launch sequences below are the ones
the op framework issues (see the header comment of batch_norm.cu).
"""

from __future__ import annotations

import math
import zlib
from pathlib import Path

import numpy as np
import pytest

import aclnn_py  # noqa: F401  (declares the kernel families)
from aclnn_py.kernel_cache import instances, kernel_source

from aclnn_py.ops import _bn_plan as plan
from aclnn_py.plan import force_profile, on_host
from tests.references import batch_norm as ref

ROOT = Path(__file__).resolve().parents[1]
KERNEL = ROOT / "kernels" / "batch_norm.cu"
INCLUDE = ROOT / "kernels" / "include"


def _name_expressions():
    return list(instances("batch_norm"))


NAMES = _name_expressions()


@pytest.fixture(scope="module")
def mod():
    emulator = pytest.importorskip("aclnn_py.emulator")
    return emulator.compile_module(kernel_source("batch_norm"), options=("-std=c++17", f"-I{INCLUDE}"),
                                   name_expressions=NAMES)


# ------------------------------------------------------------------------------------------------
# dtypes
# ------------------------------------------------------------------------------------------------
TYPES = ["float", "__half", "__nv_bfloat16"]
STORAGE = {"float": np.float32, "__half": np.float16, "__nv_bfloat16": np.uint16, "int": np.int32}
TOL = {"float": (1e-5, 1e-6), "__half": (1e-3, 1e-3), "__nv_bfloat16": (1e-2, 1e-2)}


def _bf16_bits(a):
    a = np.ascontiguousarray(a, dtype=np.float32)
    u = a.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF
    return np.where(np.isnan(a), 0x7FC0, r).astype(np.uint16)


def _bf16_value(bits):
    return (np.asarray(bits, dtype=np.uint32) << 16).view(np.float32).astype(np.float64)


def to_storage(x, T):
    x = np.asarray(x, dtype=np.float64)
    if T == "__nv_bfloat16":
        return _bf16_bits(x.astype(np.float32))
    return x.astype(STORAGE[T])


def from_storage(a, T):
    if T == "__nv_bfloat16":
        return _bf16_value(a)
    return np.asarray(a).astype(np.float64)


def rounded(x, T):
    """x rounded to T, as float64 (the values the kernel sees)."""
    return from_storage(to_storage(x, T), T)


def check(got, want, T, scale=1.0, what=""):
    rtol, atol = TOL[T]
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    bad = ~(np.abs(got - want) <= atol * scale + rtol * np.abs(want))
    bad &= ~(np.isnan(got) & np.isnan(want))
    if bad.any():
        i = np.argwhere(bad)[0]
        raise AssertionError(f"{what}: {bad.sum()} of {bad.size} differ; first at {tuple(i)}: "
                             f"got {got[tuple(i)]!r} want {want[tuple(i)]!r} ({T}, scale {scale})")


# ------------------------------------------------------------------------------------------------
# memory with guard bytes
# ------------------------------------------------------------------------------------------------
GUARD = 64


class Buf:
    """A payload aligned to 128 bytes (+ misalign) with guard bytes on both sides."""

    def __init__(self, nbytes, misalign=0, fill=0xA5):
        self.nbytes = int(nbytes)
        self.raw = np.full(self.nbytes + 2 * GUARD + 256, fill, dtype=np.uint8)
        base = self.raw.ctypes.data
        self.start = (-(base + GUARD)) % 128 + GUARD + misalign
        self.pristine = self.raw.copy()

    @property
    def ptr(self):
        return self.raw.ctypes.data + self.start

    def view(self, dtype):
        return self.raw[self.start:self.start + self.nbytes].view(dtype)

    def guards_ok(self):
        lo = np.array_equal(self.raw[:self.start], self.pristine[:self.start])
        hi = np.array_equal(self.raw[self.start + self.nbytes:], self.pristine[self.start + self.nbytes:])
        return lo and hi


class Mem:
    def __init__(self):
        self.bufs = []

    def buf(self, nbytes, misalign=0):
        b = Buf(nbytes, misalign)
        self.bufs.append(b)
        return b

    def data(self, x3, T, cl, misalign=0):
        """Dense (N, C, S) tensor in NCX or NXC order; returns (buf, values-as-seen float64)."""
        st = to_storage(x3, T)
        flat = (st.transpose(0, 2, 1) if cl else st).ravel()
        b = self.buf(flat.nbytes, misalign)
        b.view(flat.dtype)[:] = flat
        return b, from_storage(st, T)

    def empty_data(self, shape3, T, misalign=0):
        return self.buf(int(np.prod(shape3)) * np.dtype(STORAGE[T]).itemsize, misalign)

    def vec(self, v, P):
        if v is None:
            return None, None
        st = to_storage(v, P)
        b = self.buf(st.nbytes)
        b.view(st.dtype)[:] = st.ravel()
        return b, from_storage(st, P)

    def out_vec(self, C, P):
        return self.buf(C * np.dtype(STORAGE[P]).itemsize)

    def f32(self, n):
        return self.buf(4 * n)

    def check_guards(self):
        assert all(b.guards_ok() for b in self.bufs), "a kernel wrote outside a buffer"


def read_data(b, N, C, S, T, cl):
    a = from_storage(b.view(STORAGE[T]), T)
    return a.reshape(N, S, C).transpose(0, 2, 1) if cl else a.reshape(N, C, S)


def read_vec(b, P):
    return from_storage(b.view(STORAGE[P]), P)


# ------------------------------------------------------------------------------------------------
# launching
# ------------------------------------------------------------------------------------------------
def P_(b, off=0):
    if b is None:
        return np.uint64(0).tobytes()
    addr = b if isinstance(b, int) else b.ptr
    return np.uint64(addr + off).tobytes()


def I64(v):
    return np.int64(v).tobytes()


def I32(v):
    return np.int32(v).tobytes()


def F32(v):
    return np.float32(v).tobytes()


def launch(mod, name, grid, block, *args):
    assert name in NAMES, name
    fn = mod.get_function(name)
    sizes = tuple(len(a) for a in args)
    assert tuple(fn.param_sizes) == sizes, (name, fn.param_sizes, sizes)
    fn.launch(tuple(grid), tuple(block), list(args), 0)


def B(v):
    return "true" if v else "false"


# ------------------------------------------------------------------------------------------------
# the launch sequences of the ops
# ------------------------------------------------------------------------------------------------
def stats(mod, mem, x, N, C, S, T, cl, splits=None, whole_rows=None):
    """bn_stats_partial, planned as the ops plan it (whole rows for f32) unless told; returns
    (workspace buf, splits)."""
    whole_rows = T == "float" if whole_rows is None else whole_rows
    grid, block, sp, wsf = plan.plan_reduction(N, C, S, cl, whole_rows=whole_rows)
    if splits is not None:
        sp = splits
        grid = (grid[0], sp, 1)
        wsf = 3 * sp * C + C
    ws = mem.f32(wsf)
    launch(mod, f"bn_stats_partial<{T}, {B(cl)}>", grid, block, P_(x), P_(ws), I64(N), I64(C), I64(S))
    return ws, sp


def finalize_stats(mod, mem, ws, splits, C, P, eps, momentum, w=None, b=None, rm=None, rv=None, save=True,
                   coef=True):
    sm = mem.out_vec(C, P) if save else None
    si = mem.out_vec(C, P) if save else None
    cf = mem.f32(3 * C) if coef else None
    g, bl = plan.plan_finalize(C)
    launch(mod, f"bn_stats_finalize<{P}>", g, bl, P_(ws), I64(splits), I64(C), F32(eps), F32(momentum),
           P_(w), P_(b), P_(sm), P_(si), P_(rm), P_(rv),
           P_(cf), P_(cf, 4 * C) if cf else P_(None), P_(cf, 8 * C) if cf else P_(None))
    return sm, si, cf


def prep(mod, mem, C, P, mean=None, stat=None, stat_is_var=False, eps=0.0, w=None, b=None):
    """bn_prep -> f32 [mean, invstd, w, scale, shift] (5*C)."""
    out = mem.f32(5 * C)
    g, bl = plan.plan_per_channel(C)
    launch(mod, f"bn_prep<{P}>", g, bl, P_(mean), P_(stat), I32(int(stat_is_var)), F32(eps), P_(w), P_(b),
           I64(C), *(P_(out, 4 * C * i) for i in range(5)))
    return out


def _shrink(g, cl, blocks):
    return g if blocks is None else ((g[0], blocks, 1) if cl else (blocks, 1, 1))


def apply(mod, mem, x, N, C, S, T, cl, mean_f, scale_f, shift_f, z=None, act=0, ceiling=0.0, fused=False,
          mask=False, misalign=0, blocks=None):
    y = mem.empty_data((N, C, S), T, misalign)
    mk = mem.buf(plan.reserve_mask_bytes(N, C, S, cl)) if mask else None
    g, bl = plan.plan_elementwise(N, C, S, cl, fused=fused)
    g = _shrink(g, cl, blocks)
    launch(mod, f"bn_apply<{T}, {B(cl)}, {B(fused)}>", g, bl, P_(x), P_(z), P_(mean_f), P_(scale_f), P_(shift_f),
           P_(y), P_(mk), I64(N), I64(C), I64(S), I32(act), F32(ceiling))
    return y, mk


def bwd_reduce(mod, mem, dy, x, mean_f, N, C, S, T, cl, mask=None, splits=None):
    grid, block, sp, wsf = plan.plan_reduction(N, C, S, cl)
    if splits is not None:
        sp = splits
        grid = (grid[0], sp, 1)
        wsf = 3 * sp * C + C
    ws = mem.f32(wsf)
    launch(mod, f"bn_bwd_reduce_partial<{T}, {B(cl)}, {B(mask is not None)}>", grid, block, P_(dy), P_(x),
           P_(mask), P_(mean_f), P_(ws), I64(N), I64(C), I64(S))
    return ws, sp


def bwd_finalize(mod, mem, ws, splits, C, count, P, invstd_f, w_f, outs=(True, True, True, True), coef=True):
    o = [mem.out_vec(C, P) if want else None for want in outs]
    cf = mem.f32(3 * C) if coef else None
    g, bl = plan.plan_finalize(C)
    launch(mod, f"bn_bwd_reduce_finalize<{P}>", g, bl, P_(ws), I64(splits), I64(C), I64(count), P_(invstd_f),
           P_(w_f), *(P_(b) for b in o),
           P_(cf), P_(cf, 4 * C) if cf else P_(None), P_(cf, 8 * C) if cf else P_(None))
    return o, cf


def bwd_elemt(mod, mem, dy, x, N, C, S, T, cl, mode, mean_f, a_f, k_f, g_f, mask=None, want_dz=False,
              misalign=0, blocks=None):
    dx = mem.empty_data((N, C, S), T, misalign)
    dz = mem.empty_data((N, C, S), T, misalign) if want_dz else None
    g, bl = plan.plan_elementwise(N, C, S, cl, fused=False)
    g = _shrink(g, cl, blocks)
    launch(mod, f"bn_bwd_elemt<{T}, {B(cl)}, {mode}>", g, bl, P_(dy), P_(x), P_(mask), P_(mean_f), P_(a_f),
           P_(k_f), P_(g_f), P_(dx), P_(dz), I64(N), I64(C), I64(S))
    return dx, dz


def unpack_mask(mk, N, C, S, cl):
    words = mk.view(np.uint32)
    if cl:
        W = -(-C // 32)
        bits = ((words.reshape(N * S, W)[:, :, None] >> np.arange(32, dtype=np.uint32)) & 1).reshape(N * S, W * 32)
        assert not bits[:, C:].any(), "padding bits set"
        return bits[:, :C].reshape(N, S, C).transpose(0, 2, 1).astype(bool)
    W = -(-S // 32)
    bits = ((words.reshape(N * C, W)[:, :, None] >> np.arange(32, dtype=np.uint32)) & 1).reshape(N * C, W * 32)
    assert not bits[:, S:].any(), "padding bits set"
    return bits[:, :S].reshape(N, C, S).astype(bool)


def rng_for(*key):
    """A generator seeded by the key's text: the same in every process (hash() of a str is not)."""
    return np.random.default_rng(zlib.crc32(repr(tuple(str(k) for k in key)).encode()))


# (N, C, S): odd S, C=37 (NXC over several 32-channel words), C=1, S=1, N=1, vector-friendly
# sizes, S % 8 == 4 (14x14: 8-byte vectors for f16/bf16 in NCX), and S > 4096 (NCX planes cut into
# two segments).
SHAPES = [(2, 3, 50), (3, 37, 7), (4, 1, 33), (5, 16, 1), (1, 4, 40), (2, 8, 64), (3, 5, 196), (2, 2, 5000),
          (2, 24, 9), (3, 12, 5)]


def _misalign(shape, T):
    """Bytes to shift the data buffers by: 2 makes (2, 8, 64) take the scalar fallback next to the
    vector path, 8 makes f16/bf16 (1, 4, 40) take the 8-byte vectors (8- but not 16-byte aligned), and
    f16/bf16 NXC (2, 24, 9) the host's whole-rows walk in groups of 4 channels instead of 8 (C % 8 == 0
    but 8- not 16-byte aligned); (3, 12, 5) takes groups of 4 there by C % 8 == 4."""
    if T == "float":
        return 0
    return {(2, 8, 64): 2, (1, 4, 40): 8, (2, 24, 9): 8}.get(shape, 0)
LAYOUTS = [False, True]


def _aligned_ok(shape, cl):
    return True


# ------------------------------------------------------------------------------------------------
# tests: plan and source
# ------------------------------------------------------------------------------------------------
def test_name_expressions_cover_every_kernel():
    src = KERNEL.read_text()
    kernels = {n.split("<")[0] for n in NAMES}
    for k in kernels:
        assert f" {k}(" in src
    # 75 for float / __half / __nv_bfloat16, + 19 double instantiations (stats_partial 2, stats_finalize 1,
    # prep 1, apply 4, bwd_reduce_partial 4, bwd_reduce_finalize 1, bwd_elemt 6) for the DOUBLE ops
    assert len(NAMES) == len(set(NAMES)) == 94
    assert sum("double" in n for n in NAMES) == 19


@pytest.fixture(autouse=True, params=["host", "gpu"])
def profile(request):
    """Every kernel test runs the host emulator's launch profile (one warp per block or one thread, few blocks)
    and the GPU's (256 threads per block, occupancy-sized grids): the same kernels must be right
    for both, and on the emulator only a forced profile exercises the GPU's."""
    force_profile(request.param)
    yield request.param
    force_profile(None)


def test_plan_is_pure_and_bounded(profile):
    threads = plan.HOST_THREADS if profile == "host" else plan.THREADS
    for N, C, S in [(1, 1, 1), (256, 64, 3136), (32, 2048, 49), (1, 3, 10 ** 6), (8, 100000, 1)]:
        for cl in LAYOUTS:
            a = plan.plan_reduction(N, C, S, cl)
            assert a == plan.plan_reduction(N, C, S, cl)
            grid, block, splits, wsf = a
            assert grid[1] == splits and 1 <= splits <= 65535
            assert wsf == 3 * splits * C + C
            # (the host's NCX reductions: one thread per block walks its split of the channel's planes)
            one = profile == "host" and not cl
            assert block == (1, 1, 1) if one else (block[0] * block[1] == threads and block[2] == 1)
            # the statistics' plan: on the host, NXC with more than 4 channels, one thread per split
            # walking whole rows (nxc_stats_rows); else the reductions' plan
            grid, block, splits, wsf = plan.plan_reduction(N, C, S, cl, whole_rows=True)
            whole = profile == "host" and cl and C > plan.CPT
            assert (block == (1, 1, 1) and grid[0] == 1) if whole else (grid, block, splits, wsf) == a
            assert grid[1] == splits and 1 <= splits <= 65535 and wsf == 3 * splits * C + C
            for fused in (False, True):
                eg, eb = plan.plan_elementwise(N, C, S, cl, fused=fused)
                assert eb[0] * eb[1] == threads and 1 <= eg[0] and 1 <= eg[1] <= 65535
    assert plan.ncx_geometry(5000) == (2528, 2) and plan.ncx_geometry(49) == (64, 1)
    assert plan.reserve_mask_words(2, 37, 5, True) == 2 * 5 * 2
    assert plan.reserve_mask_words(2, 37, 5, False) == 2 * 37 * 1
    assert plan.preferred_channels_last(8, 16, 1, False) is True
    assert plan.preferred_channels_last(8, 1, 16, True) is False


# ------------------------------------------------------------------------------------------------
# forward
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("T", TYPES)
@pytest.mark.parametrize("cl", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES)
def test_forward_training(mod, T, cl, shape):
    N, C, S = shape
    r = rng_for("fwd", T, cl, shape)
    mem = Mem()
    misalign = _misalign(shape, T)
    x, xv = mem.data(r.normal(0.5, 2.0, (N, C, S)), T, cl, misalign)
    P = "float" if T == "float" or (N + C) % 2 else T
    w, wv = mem.vec(r.normal(1.0, 0.3, C), P)
    b, bv = mem.vec(r.normal(0.0, 0.3, C), P) if C != 3 else (None, None)
    rm, rmv = mem.vec(r.normal(0.0, 1.0, C), P)
    rv, rvv = mem.vec(r.uniform(0.5, 2.0, C), P)
    eps, mom = 1e-5, 0.1
    ws, sp = stats(mod, mem, x, N, C, S, T, cl)
    sm, si, cf = finalize_stats(mod, mem, ws, sp, C, P, eps, mom, w, b, rm, rv)
    y, _ = apply(mod, mem, x, N, C, S, T, cl, cf, cf.ptr + 4 * C, cf.ptr + 8 * C, misalign=misalign)
    want = ref.batch_norm(xv, wv, bv, rmv, rvv, True, mom, eps)
    n = N * S
    check(read_vec(sm, P), want["save_mean"], P, what="save_mean")
    check(read_vec(si, P), want["save_invstd"], P, what="save_invstd")
    check(read_vec(rm, P), want["running_mean"], P, what="running_mean")
    if n > 1:
        check(read_vec(rv, P), want["running_var"], P, what="running_var")
    else:
        assert np.isnan(read_vec(rv, P)).all()
    check(read_data(y, N, C, S, T, cl), want["output"], T, scale=4, what="output")
    mem.check_guards()


@pytest.mark.parametrize("T", TYPES)
@pytest.mark.parametrize("cl", LAYOUTS)
def test_batch_norm_stats_float_outputs(mod, T, cl):
    N, C, S = 3, 5, 21
    r = rng_for("stats", T, cl)
    mem = Mem()
    x, xv = mem.data(r.normal(-3.0, 0.5, (N, C, S)), T, cl)
    ws, sp = stats(mod, mem, x, N, C, S, T, cl)
    sm, si, _ = finalize_stats(mod, mem, ws, sp, C, "float", 1e-3, 0.0, coef=False)
    mean, invstd = ref.batch_norm_stats(xv, 1e-3)
    check(read_vec(sm, "float"), mean, "float", what="mean")
    check(read_vec(si, "float"), invstd, "float", what="invstd")
    mem.check_guards()


@pytest.mark.parametrize("T", TYPES)
@pytest.mark.parametrize("cl", LAYOUTS)
@pytest.mark.parametrize("shape", [(2, 3, 50), (3, 37, 7), (2, 8, 64)])
def test_forward_inference_and_elemt(mod, T, cl, shape):
    N, C, S = shape
    r = rng_for("inf", T, cl, shape)
    mem = Mem()
    x, xv = mem.data(r.normal(0.0, 1.0, (N, C, S)), T, cl)
    P = T
    rm, rmv = mem.vec(r.normal(0.0, 0.5, C), P)
    rv, rvv = mem.vec(r.uniform(0.5, 2.0, C), P)
    w, wv = mem.vec(r.normal(1.0, 0.3, C), P)
    b, bv = mem.vec(r.normal(0.0, 0.3, C), P)
    eps = 1e-3
    # inference from running stats (variance -> invstd in the prep kernel)
    pc = prep(mod, mem, C, P, rm, rv, True, eps, w, b)
    y, _ = apply(mod, mem, x, N, C, S, T, cl, pc, pc.ptr + 12 * C, pc.ptr + 16 * C)
    want = ref.batch_norm(xv, wv, bv, rmv, rvv, False, 0.1, eps)["output"]
    check(read_data(y, N, C, S, T, cl), want, T, scale=4, what="inference output")
    # aclnnBatchNormElemt: mean / invstd given
    iv, ivv = mem.vec(r.uniform(0.5, 2.0, C), P)
    pc2 = prep(mod, mem, C, P, rm, iv, False, 0.0, None, b)
    y2, _ = apply(mod, mem, x, N, C, S, T, cl, pc2, pc2.ptr + 12 * C, pc2.ptr + 16 * C)
    want2 = ref.batch_norm_elemt(xv, None, bv, rmv, ivv)
    check(read_data(y2, N, C, S, T, cl), want2, T, scale=4, what="elemt output")
    mem.check_guards()


# ------------------------------------------------------------------------------------------------
# backward
# ------------------------------------------------------------------------------------------------
def _saved_stats(r, xv, P):
    mean, invstd = ref.batch_norm_stats(xv, 1e-5)
    mean = mean + r.normal(0, 0.01, mean.shape)  # not exactly the batch statistics: any values work
    return mean, invstd


@pytest.mark.parametrize("T", TYPES)
@pytest.mark.parametrize("cl", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES)
def test_backward_training(mod, T, cl, shape):
    N, C, S = shape
    r = rng_for("bwd", T, cl, shape)
    mem = Mem()
    misalign = _misalign(shape, T)
    x, xv = mem.data(r.normal(1.0, 2.0, (N, C, S)), T, cl, misalign)
    dy, dyv = mem.data(r.normal(0.0, 1.0, (N, C, S)), T, cl, misalign)
    P = "float" if T == "float" or (N + S) % 2 else T
    mean, invstd = _saved_stats(r, xv, P)
    smb, smv = mem.vec(mean, P)
    sib, siv = mem.vec(invstd, P)
    w, wv = mem.vec(r.normal(1.0, 0.3, C), P) if C != 37 else (None, None)
    pc = prep(mod, mem, C, P, smb, sib, False, 0.0, w)
    ws, sp = bwd_reduce(mod, mem, dy, x, pc, N, C, S, T, cl)
    (sdy, sdx, gw, gb), cf = bwd_finalize(mod, mem, ws, sp, C, N * S, P, pc.ptr + 4 * C, pc.ptr + 8 * C)
    dx, _ = bwd_elemt(mod, mem, dy, x, N, C, S, T, cl, 1, pc, cf, cf.ptr + 4 * C, cf.ptr + 8 * C,
                      misalign=misalign)
    gi, gwr, gbr = ref.batch_norm_backward(dyv, xv, wv, None, None, smv, siv, True)
    _, sdxr, _, _ = ref.batch_norm_reduce_backward(dyv, xv, smv, siv, wv)
    sc = 4 * math.sqrt(N * S) * 4
    check(read_vec(gb, P), gbr, P, scale=sc, what="grad_bias")
    check(read_vec(sdy, P), gbr, P, scale=sc, what="sum_dy")
    check(read_vec(sdx, P), sdxr, P, scale=sc, what="sum_dy_xmu")
    check(read_vec(gw, P), gwr, P, scale=sc, what="grad_weight")
    check(read_data(dx, N, C, S, T, cl), gi, T, scale=8, what="grad_input")
    mem.check_guards()


def _random_shapes(T, k=6):
    """k seeded (N, C, S) with S of every residue mod 8, so NCX planes start at every offset from a
    16-byte boundary: the elementwise kernels and the statistics peel each tile's head up to one
    (with_ncx_width / ncx_head), the backward reduce does not."""
    r = rng_for("shapes", T)
    return [(int(r.integers(1, 5)), int(r.integers(1, 13)), int(r.integers(2, 40)) * 8 + int(res))
            for res in r.permutation(8)[:k]]


@pytest.mark.parametrize("T", TYPES)
@pytest.mark.parametrize("cl", LAYOUTS)
def test_training_on_random_shapes(mod, T, cl):
    """Forward and backward training, 16-byte aligned buffers, S of six residues mod 8: every head a
    peeling loop can take (a head counted twice or skipped changes the sums and the outputs)."""
    for N, C, S in _random_shapes(T):
        r = rng_for("rand", T, cl, N, C, S)
        mem = Mem()
        x, xv = mem.data(r.normal(0.5, 2.0, (N, C, S)), T, cl)
        dy, dyv = mem.data(r.normal(0.0, 1.0, (N, C, S)), T, cl)
        w, wv = mem.vec(r.normal(1.0, 0.3, C), "float")
        b, bv = mem.vec(r.normal(0.0, 0.3, C), "float")
        ws, sp = stats(mod, mem, x, N, C, S, T, cl)
        sm, si, cf = finalize_stats(mod, mem, ws, sp, C, "float", 1e-5, 0.0, w, b)
        y, _ = apply(mod, mem, x, N, C, S, T, cl, cf, cf.ptr + 4 * C, cf.ptr + 8 * C)
        want = ref.batch_norm(xv, wv, bv, None, None, True, 0.0, 1e-5)
        what = f"{(N, C, S)} "
        check(read_vec(sm, "float"), want["save_mean"], "float", scale=4, what=what + "save_mean")
        check(read_data(y, N, C, S, T, cl), want["output"], T, scale=4, what=what + "output")
        mean, invstd = read_vec(sm, "float"), read_vec(si, "float")
        pc = prep(mod, mem, C, "float", sm, si, False, 0.0, w)
        ws, sp = bwd_reduce(mod, mem, dy, x, pc, N, C, S, T, cl)
        (sdy, _, gw, gb), bc = bwd_finalize(mod, mem, ws, sp, C, N * S, "float", pc.ptr + 4 * C, pc.ptr + 8 * C)
        dx, _ = bwd_elemt(mod, mem, dy, x, N, C, S, T, cl, 1, pc, bc, bc.ptr + 4 * C, bc.ptr + 8 * C)
        gi, gwr, gbr = ref.batch_norm_backward(dyv, xv, wv, None, None, mean, invstd, True)
        sc = 16 * math.sqrt(N * S)
        check(read_vec(gb, "float"), gbr, "float", scale=sc, what=what + "grad_bias")
        check(read_vec(gw, "float"), gwr, "float", scale=sc, what=what + "grad_weight")
        check(read_data(dx, N, C, S, T, cl), gi, T, scale=8, what=what + "grad_input")
        mem.check_guards()


@pytest.mark.parametrize("T", TYPES)
@pytest.mark.parametrize("cl", LAYOUTS)
def test_backward_inference(mod, T, cl):
    N, C, S = 3, 6, 30
    r = rng_for("bwdinf", T, cl)
    mem = Mem()
    x, xv = mem.data(r.normal(0.0, 1.0, (N, C, S)), T, cl)
    dy, dyv = mem.data(r.normal(0.0, 1.0, (N, C, S)), T, cl)
    P = T
    rm, rmv = mem.vec(r.normal(0.0, 0.5, C), P)
    rv, rvv = mem.vec(r.uniform(0.5, 2.0, C), P)
    w, wv = mem.vec(r.normal(1.0, 0.3, C), P)
    eps = 1e-5
    pc = prep(mod, mem, C, P, rm, rv, True, eps, w)
    dx, _ = bwd_elemt(mod, mem, dy, x, N, C, S, T, cl, 0, None, None, None, pc.ptr + 12 * C)
    ws, sp = bwd_reduce(mod, mem, dy, x, pc, N, C, S, T, cl)
    (_, _, gw, gb), _ = bwd_finalize(mod, mem, ws, sp, C, N * S, P, pc.ptr + 4 * C, None,
                                     outs=(False, False, True, True), coef=False)
    gi, gwr, gbr = ref.batch_norm_backward(dyv, xv, wv, rmv, rvv, None, None, False, eps)
    check(read_data(dx, N, C, S, T, cl), gi, T, scale=4, what="grad_input")
    check(read_vec(gw, P), gwr, P, scale=40, what="grad_weight")
    check(read_vec(gb, P), gbr, P, scale=40, what="grad_bias")
    mem.check_guards()


@pytest.mark.parametrize("T", TYPES)
@pytest.mark.parametrize("cl", LAYOUTS)
@pytest.mark.parametrize("Q", ["int", "__half", "float"])
def test_sync_bn_reduce_and_elemt_backward(mod, T, cl, Q):
    N, C, S = 2, 37, 9
    r = rng_for("sync", T, cl, Q)
    mem = Mem()
    x, xv = mem.data(r.normal(0.0, 1.0, (N, C, S)), T, cl)
    dy, dyv = mem.data(r.normal(0.0, 1.0, (N, C, S)), T, cl)
    P = T
    mb, mv = mem.vec(r.normal(0.0, 0.2, C), P)
    ib, iv = mem.vec(r.uniform(0.5, 2.0, C), P)
    # aclnnBatchNormReduceBackward (weight absent -> ones)
    pc = prep(mod, mem, C, P, mb, ib, False, 0.0, None)
    ws, sp = bwd_reduce(mod, mem, dy, x, pc, N, C, S, T, cl)
    (sdy, sdx, gw, gb), _ = bwd_finalize(mod, mem, ws, sp, C, N * S, P, pc.ptr + 4 * C, pc.ptr + 8 * C, coef=False)
    rs = ref.batch_norm_reduce_backward(dyv, xv, mv, iv, None)
    for got, want, nm in zip((sdy, sdx, gw, gb), rs, ("sum_dy", "sum_dy_xmu", "grad_weight", "grad_bias")):
        check(read_vec(got, P), want, P, scale=20, what=nm)
    # aclnnBatchNormElemtBackward with the (rounded) sums and a per-rank counter on the device
    sdv, sxv = read_vec(sdy, P), read_vec(sdx, P)
    counter = np.array([N * S, 13, 0, 7], dtype=np.float64)
    cb = mem.buf(counter.size * np.dtype(STORAGE[Q]).itemsize)
    cb.view(STORAGE[Q])[:] = counter.astype(STORAGE[Q])
    w, wv = mem.vec(r.normal(1.0, 0.3, C), P)
    coef = mem.f32(4 * C)
    g, bl = plan.plan_per_channel(C)
    launch(mod, f"bn_prep_elemt_bwd<{P}, {Q}>", g, bl, P_(mb), P_(ib), P_(w), P_(sdy), P_(sdx), P_(cb),
           I64(counter.size), I64(C), *(P_(coef, 4 * C * i) for i in range(4)))
    dx, _ = bwd_elemt(mod, mem, dy, x, N, C, S, T, cl, 1, coef, coef.ptr + 4 * C, coef.ptr + 8 * C,
                      coef.ptr + 12 * C)
    want = ref.batch_norm_elemt_backward(dyv, xv, mv, iv, wv, sdv, sxv, counter)
    check(read_data(dx, N, C, S, T, cl), want, T, scale=4, what="grad_input")
    mem.check_guards()


@pytest.mark.parametrize("T,P", [("float", "float"), ("__nv_bfloat16", "float"), ("__nv_bfloat16", "__nv_bfloat16"),
                                 ("__half", "float")])
@pytest.mark.parametrize("cl", LAYOUTS)
@pytest.mark.parametrize("affine", [True, False])
def test_onednn_training_backward(mod, T, P, cl, affine):
    N, C, S = 3, 5, 24
    r = rng_for("onednn", T, P, cl, affine)
    mem = Mem()
    x, xv = mem.data(r.normal(0.0, 1.5, (N, C, S)), T, cl)
    dy, dyv = mem.data(r.normal(0.0, 1.0, (N, C, S)), T, cl)
    xs = xv.transpose(0, 2, 1) if cl else xv  # oneDNN NXC: channel axis last
    dys = dyv.transpose(0, 2, 1) if cl else dyv
    mb, mv = mem.vec(xv.mean(axis=(0, 2)), P)
    vb, vv = mem.vec(xv.var(axis=(0, 2)), P)
    gb_, gv = mem.vec(r.normal(1.0, 0.3, C), P)
    eps = 1e-4
    pc = prep(mod, mem, C, P, mb, vb, True, eps, gb_ if affine else None)
    ws, sp = bwd_reduce(mod, mem, dy, x, pc, N, C, S, T, cl)
    (_, _, dg, dbt), cf = bwd_finalize(mod, mem, ws, sp, C, N * S, P, pc.ptr + 4 * C, pc.ptr + 8 * C,
                                       outs=(False, False, affine, affine))
    dx, _ = bwd_elemt(mod, mem, dy, x, N, C, S, T, cl, 1, pc, cf, cf.ptr + 4 * C, cf.ptr + 8 * C)
    fmt = "NXC" if cl else "NCX"
    dxr, dgr, dbr = ref.batch_norm_training_backward_onednn(xs, dys, mv, vv, gv, eps, fmt, affine)
    got = read_data(dx, N, C, S, T, cl)
    check(got.transpose(0, 2, 1) if cl else got, dxr, T, scale=4, what="diff_src")
    if affine:
        check(read_vec(dg, P), dgr, P, scale=20, what="diff_gamma")
        check(read_vec(dbt, P), dbr, P, scale=20, what="diff_beta")
    mem.check_guards()


# ------------------------------------------------------------------------------------------------
# fused forward / backward (cuDNN BN-Ex): y = act(BN(x) [+ z]), reserve bit mask
# ------------------------------------------------------------------------------------------------
FUSED_CASES = [
    # (shape, act, with_z, misalign): tx < 32 and >= 32, vector and scalar, segments, odd C
    ((2, 3, 50), "relu", True, 0),
    ((2, 4, 64), "clipped_relu", False, 0),
    ((2, 4, 64), "relu", True, 2),
    ((1, 3, 1000), "clipped_relu", True, 0),
    ((1, 3, 1000), "relu", False, 2),
    ((2, 2, 5000), "relu", True, 0),
    ((3, 37, 5), "identity", True, 0),
    ((2, 40, 3), "relu", False, 2),
    ((2, 3, 196), "clipped_relu", True, 0),   # f16/bf16: 8-byte vectors (S % 8 == 4), mask words of 8 lanes
    ((2, 4, 64), "relu", True, 8),            # f16/bf16: 8-byte vectors (8- but not 16-byte aligned)
    ((2, 40, 3), "clipped_relu", True, 8),    # f16/bf16 NXC on the host: groups of 4 channels (8-byte aligned)
    ((3, 48, 2), "relu", True, 0),            # f16/bf16 NXC on the host: groups of 8, a mask word of 32 + 16 bits
]


def fused_backward(mod, mem, dy, x, N, C, S, T, cl, P, save_mean, save_invstd, w, mask, want_dz, misalign=0):
    """The fused backward's launches (prep -> reduce with the reserve mask -> finalize -> elemt MODE 2):
    (grad_weight, grad_bias, dx, dz) buffers."""
    pc = prep(mod, mem, C, P, save_mean, save_invstd, False, 0.0, w)
    ws, sp = bwd_reduce(mod, mem, dy, x, pc, N, C, S, T, cl, mask=mask)
    (_, _, gw, gb), cf = bwd_finalize(mod, mem, ws, sp, C, N * S, P, pc.ptr + 4 * C, pc.ptr + 8 * C,
                                      outs=(False, False, True, True))
    dx, dz = bwd_elemt(mod, mem, dy, x, N, C, S, T, cl, 2, pc, cf, cf.ptr + 4 * C, cf.ptr + 8 * C, mask=mask,
                       want_dz=want_dz, misalign=misalign)
    return gw, gb, dx, dz


@pytest.mark.parametrize("T", TYPES)
@pytest.mark.parametrize("cl", LAYOUTS)
@pytest.mark.parametrize("case", FUSED_CASES, ids=lambda c: f"{c[0]}-{c[1]}-z{int(c[2])}-m{c[3]}")
def test_fused_forward_backward(mod, T, cl, case):
    (N, C, S), act, with_z, mis = case
    if T == "float" and mis:
        mis = 4  # misaligned for the 16-byte path but still element-aligned
    r = rng_for("fused", T, cl, case)
    mem = Mem()
    x, xv = mem.data(r.normal(0.3, 1.5, (N, C, S)), T, cl, mis)
    z, zv = mem.data(r.normal(0.0, 1.0, (N, C, S)), T, cl, mis) if with_z else (None, None)
    P = "float"
    w, wv = mem.vec(r.normal(1.0, 0.3, C), P)
    b, bv = mem.vec(r.normal(0.2, 0.3, C), P)
    ceiling = 0.8
    actid = {"identity": 0, "relu": 1, "clipped_relu": 2}[act]
    eps = 1e-5
    ws, sp = stats(mod, mem, x, N, C, S, T, cl)
    sm, si, cf = finalize_stats(mod, mem, ws, sp, C, P, eps, 0.0, w, b)
    y, mk = apply(mod, mem, x, N, C, S, T, cl, cf, cf.ptr + 4 * C, cf.ptr + 8 * C, z=z, act=actid,
                  ceiling=ceiling, fused=True, mask=True, misalign=mis)
    want = ref.batch_norm_fused_forward(xv, wv, bv, zv, act, ceiling, True, eps=eps)
    check(read_data(y, N, C, S, T, cl), want["output"], T, scale=4, what="y")
    got_mask = unpack_mask(mk, N, C, S, cl)
    pre = want["output"] if act == "identity" else (
        ref.batch_norm(xv, wv, bv, eps=eps)["output"] + (0 if zv is None else zv))
    near = (np.abs(pre) < 1e-4) | (np.abs(pre - ceiling) < 1e-4)
    assert np.array_equal(got_mask | near, want["mask"] | near), "reserve mask"
    # backward with the forward's saved statistics and mask
    dy, dyv = mem.data(r.normal(0.0, 1.0, (N, C, S)), T, cl, mis)
    smv, siv = read_vec(sm, P), read_vec(si, P)
    gw, gb, dx, dz = fused_backward(mod, mem, dy, x, N, C, S, T, cl, P, sm, si, w, mk, with_z, mis)
    dxr, dzr, dsr, dbr = ref.batch_norm_fused_backward(dyv, xv, wv, smv, siv, got_mask, with_z)
    sc = 4 * math.sqrt(N * S) * 4
    check(read_data(dx, N, C, S, T, cl), dxr, T, scale=8, what="dx")
    if with_z:
        check(read_data(dz, N, C, S, T, cl), dzr, T, what="dz")
    check(read_vec(gw, P), dsr, P, scale=sc, what="dscale")
    check(read_vec(gb, P), dbr, P, scale=sc, what="dbias")
    mem.check_guards()


@pytest.mark.parametrize("T", TYPES)
@pytest.mark.parametrize("cl", LAYOUTS)
@pytest.mark.parametrize("shape", [(3, 5, 50), (2, 37, 9)])
def test_fused_backward_drops_masked_nonfinite_dy(mod, T, cl, shape):
    """Where the reserve mask's bit is clear the gradient is exactly +0 whatever dy holds there (inf,
    NaN): the kernels zero it by a bitwise AND (keep_if), not by multiplying by the bit (NaN * 0 = NaN)."""
    N, C, S = shape
    r = rng_for("fused-nonfinite", T, cl, shape)
    mem = Mem()
    x, xv = mem.data(r.normal(0.0, 1.5, (N, C, S)), T, cl)
    P = "float"
    w, wv = mem.vec(r.normal(1.0, 0.3, C), P)
    b, bv = mem.vec(r.normal(0.0, 0.3, C), P)
    ws, sp = stats(mod, mem, x, N, C, S, T, cl)
    sm, si, cf = finalize_stats(mod, mem, ws, sp, C, P, 1e-5, 0.0, w, b)
    y, mk = apply(mod, mem, x, N, C, S, T, cl, cf, cf.ptr + 4 * C, cf.ptr + 8 * C, act=1, fused=True, mask=True)
    got_mask = unpack_mask(mk, N, C, S, cl)
    assert 0 < got_mask.sum() < got_mask.size
    d = r.normal(0.0, 1.0, (N, C, S))
    off = np.flatnonzero(~got_mask)
    d.flat[off[0::3]] = np.inf
    d.flat[off[1::3]] = -np.inf
    d.flat[off[2::3]] = np.nan
    dy, dyv = mem.data(d, T, cl)
    dyv = np.where(got_mask, dyv, 0.0)  # what the gradient is: dy where the activation passed
    smv, siv = read_vec(sm, P), read_vec(si, P)
    gw, gb, dx, dz = fused_backward(mod, mem, dy, x, N, C, S, T, cl, P, sm, si, w, mk, True)
    dxr, dzr, dsr, dbr = ref.batch_norm_fused_backward(dyv, xv, wv, smv, siv, got_mask, True)
    got_dz = read_data(dz, N, C, S, T, cl)
    assert np.all(np.isfinite(got_dz)) and np.all(got_dz[~got_mask] == 0) and not np.signbit(got_dz[~got_mask]).any()
    check(got_dz, dzr, T, what="dz")
    check(read_data(dx, N, C, S, T, cl), dxr, T, scale=8, what="dx")
    sc = 16 * math.sqrt(N * S)
    check(read_vec(gw, P), dsr, P, scale=sc, what="dscale")
    check(read_vec(gb, P), dbr, P, scale=sc, what="dbias")
    mem.check_guards()


# ------------------------------------------------------------------------------------------------
# gather stats with counts
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("P", TYPES)
@pytest.mark.parametrize("Q", TYPES)
def test_gather_stats_with_counts(mod, P, Q):
    world, C = 4, 37
    r = rng_for("gather", P, Q)
    mem = Mem()
    mb, mv = mem.vec(r.normal(0.0, 1.0, (world, C)), P)
    ib, iv = mem.vec(r.uniform(0.5, 2.0, (world, C)), P)
    counts = np.array([30.0, 0.0, 50.0, 20.0])
    cb, cv = mem.vec(counts, Q)
    rm, rmv = mem.vec(r.normal(0.0, 1.0, C), P)
    rv, rvv = mem.vec(r.uniform(0.5, 2.0, C), P)
    mo, mi = mem.out_vec(C, P), mem.out_vec(C, P)
    eps, mom = 1e-5, 0.1
    g, bl = plan.plan_per_channel(C)
    launch(mod, f"bn_gather_stats<{P}, {Q}>", g, bl, P_(mb), P_(ib), P_(cb), I64(world), I64(C), F32(eps),
           F32(mom), P_(rm), P_(rv), P_(mo), P_(mi))
    wm, wi, wrm, wrv = ref.batch_norm_gather_stats_with_counts(mv, iv, cv, rmv, rvv, mom, eps)
    check(read_vec(mo, P), wm, P, what="mean_all")
    check(read_vec(mi, P), wi, P, what="invstd_all")
    check(read_vec(rm, P), wrm, P, what="running_mean")
    check(read_vec(rv, P), wrv, P, what="running_var")
    mem.check_guards()


# ------------------------------------------------------------------------------------------------
# numerics and determinism
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cl", LAYOUTS)
def test_welford_stress_f32(mod, cl):
    """mean 1e4, std 1e-2 in f32: E[x^2]-E[x]^2 in f32 loses everything, Welford keeps the variance."""
    N, C, S = 4, 3, 300
    r = rng_for("stress", cl)
    mem = Mem()
    x, xv = mem.data(r.normal(1e4, 1e-2, (N, C, S)), "float", cl)
    ws, sp = stats(mod, mem, x, N, C, S, "float", cl)
    sm, si, _ = finalize_stats(mod, mem, ws, sp, C, "float", 0.0, 0.0, coef=False)
    mean, invstd = ref.batch_norm_stats(xv, 0.0)
    var_ref = 1.0 / invstd ** 2
    var_got = 1.0 / read_vec(si, "float") ** 2
    assert np.all(np.abs(var_got / var_ref - 1.0) < 1e-4), (var_got, var_ref)
    check(read_vec(sm, "float"), mean, "float", what="mean")
    x32 = xv.astype(np.float32)  # the naive formula in f32 for comparison
    naive = (x32 ** 2).mean(axis=(0, 2), dtype=np.float32) - x32.mean(axis=(0, 2), dtype=np.float32) ** 2
    assert np.all(np.abs(naive / var_ref - 1.0) > 0.05)


@pytest.mark.parametrize("cl", LAYOUTS)
def test_welford_stress_bf16(mod, cl):
    """bf16 at mean 1e4: std 1e-2 rounds every value to 9984 (exactly zero variance expected);
    std 1e2 keeps ~64-spaced values whose variance must come out to f32 accuracy."""
    N, C, S = 2, 3, 200
    r = rng_for("stressbf", cl)
    mem = Mem()
    x, xv = mem.data(r.normal(1e4, 1e-2, (N, C, S)), "__nv_bfloat16", cl)
    assert np.all(xv == xv.flat[0])
    ws, sp = stats(mod, mem, x, N, C, S, "__nv_bfloat16", cl)
    sm, si, _ = finalize_stats(mod, mem, ws, sp, C, "float", 1e-5, 0.0, coef=False)
    assert np.all(read_vec(sm, "float") == xv.flat[0])
    assert np.allclose(read_vec(si, "float"), 1.0 / math.sqrt(1e-5), rtol=1e-6)
    x2, xv2 = mem.data(r.normal(1e4, 1e2, (N, C, S)), "__nv_bfloat16", cl)
    ws2, sp2 = stats(mod, mem, x2, N, C, S, "__nv_bfloat16", cl)
    _, si2, _ = finalize_stats(mod, mem, ws2, sp2, C, "float", 0.0, 0.0, coef=False)
    _, invstd = ref.batch_norm_stats(xv2, 0.0)
    assert np.all(np.abs((invstd / read_vec(si2, "float")) ** 2 - 1.0) < 1e-5)


@pytest.mark.parametrize("cl", LAYOUTS)
def test_bitwise_reproducible(mod, cl):
    N, C, S = 64, 3, 260  # several splits per channel
    r = rng_for("repro", cl)
    mem = Mem()
    x, xv = mem.data(r.normal(0.0, 1.0, (N, C, S)), "float", cl)
    dy, _ = mem.data(r.normal(0.0, 1.0, (N, C, S)), "float", cl)
    assert plan.plan_reduction(N, C, S, cl)[2] > 1
    outs = []
    for _ in range(2):
        ws, sp = stats(mod, mem, x, N, C, S, "float", cl)
        sm, si, cf = finalize_stats(mod, mem, ws, sp, C, "float", 1e-5, 0.0)
        y, _ = apply(mod, mem, x, N, C, S, "float", cl, cf, cf.ptr + 4 * C, cf.ptr + 8 * C)
        ws2, sp2 = bwd_reduce(mod, mem, dy, x, cf, N, C, S, "float", cl)
        (_, _, gw, gb), cf2 = bwd_finalize(mod, mem, ws2, sp2, C, N * S, "float", si.ptr, None,
                                           outs=(False, False, True, True))
        dx, _ = bwd_elemt(mod, mem, dy, x, N, C, S, "float", cl, 1, cf, cf2, cf2.ptr + 4 * C, cf2.ptr + 8 * C)
        outs.append([b.view(np.uint8).tobytes() for b in (sm, si, y, gw, gb, dx)])
    assert outs[0] == outs[1]


@pytest.mark.parametrize("cl", LAYOUTS)
@pytest.mark.parametrize("T", ["float", "__half"])
def test_splits_uneven_and_empty(mod, cl, T):
    """Any split count works: uneven splits, and splits that get no rows (count 0) are ignored."""
    N, C, S = 130, 2, 20
    r = rng_for("splits", cl, T)
    mem = Mem()
    x, xv = mem.data(r.normal(2.0, 1.0, (N, C, S)), T, cl)
    dy, dyv = mem.data(r.normal(0.0, 1.0, (N, C, S)), T, cl)
    mean, invstd = ref.batch_norm_stats(xv, 1e-5)
    _, block, _, _ = plan.plan_reduction(N, C, S, cl)
    rows_per_split_step = block[1] * (plan.RPT if cl else 1)
    units = -(-N * S // rows_per_split_step) if cl else -(-N // block[1])
    mb = mem.f32(C)
    mb.view(np.float32)[:] = mean.astype(np.float32)
    for splits in sorted({1, 3, units, units + 1, units + 4}):
        ws, sp = stats(mod, mem, x, N, C, S, T, cl, splits=splits)
        counts = ws.view(np.int32)[2 * sp * C:3 * sp * C].reshape(sp, C)
        assert counts.sum(axis=0).tolist() == [N * S] * C
        if splits > units:
            assert (counts[units:] == 0).all()
        sm, si, _ = finalize_stats(mod, mem, ws, sp, C, "float", 1e-5, 0.0, coef=False)
        check(read_vec(sm, "float"), mean, "float", what=f"mean splits={splits}")
        check(read_vec(si, "float"), invstd, "float", what=f"invstd splits={splits}")
        ws2, sp2 = bwd_reduce(mod, mem, dy, x, mb, N, C, S, T, cl, splits=splits)
        (sdy, sdx, _, _), _ = bwd_finalize(mod, mem, ws2, sp2, C, N * S, "float", None, None,
                                           outs=(True, True, False, False), coef=False)
        mr = mb.view(np.float32).astype(np.float64)
        rs = ref.batch_norm_reduce_backward(dyv, xv, mr, np.ones(C))
        check(read_vec(sdy, "float"), rs[0], "float", scale=200, what=f"sum_dy splits={splits}")
        check(read_vec(sdx, "float"), rs[1], "float", scale=200, what=f"sum_dy_xmu splits={splits}")
    mem.check_guards()


@pytest.mark.parametrize("T", ["float", "__half", "__nv_bfloat16"])
@pytest.mark.parametrize("C", [5, 8, 67])
def test_whole_row_statistics_any_split(mod, T, C):
    """The host's NXC statistics plan (one thread per split walking whole rows, nxc_stats_rows): 4-row
    chunks, the rows past the last full chunk one at a time, C % 4 != 0 (scalar channel groups),
    splits that get no rows; every channel's count is the row count and the statistics match."""
    N, S = 13, 7  # 91 rows: 22 full chunks of 4 and 3 rows after them
    r = rng_for("wholerows", T, C)
    mem = Mem()
    x, xv = mem.data(r.normal(3.0, 2.0, (N, C, S)), T, True)
    mean, invstd = ref.batch_norm_stats(xv, 1e-5)
    grid, block, _, _ = plan.plan_reduction(N, C, S, True, whole_rows=True)
    assert (block == (1, 1, 1) and grid[0] == 1) == on_host()  # the GPU profile: the reductions' plan
    chunks = -(-N * S // plan.RPT)
    for splits in (1, 2, 5, chunks - 1, chunks, chunks + 3):
        ws, sp = stats(mod, mem, x, N, C, S, T, True, splits=splits, whole_rows=True)
        counts = ws.view(np.int32)[2 * sp * C:3 * sp * C].reshape(sp, C)
        assert counts.sum(axis=0).tolist() == [N * S] * C, splits
        assert (counts == counts[:, :1]).all()  # one count per split, for all its channels
        sm, si, _ = finalize_stats(mod, mem, ws, sp, C, "float", 1e-5, 0.0, coef=False)
        check(read_vec(sm, "float"), mean, "float", what=f"mean splits={splits}")
        check(read_vec(si, "float"), invstd, "float", what=f"invstd splits={splits}")
    mem.check_guards()


@pytest.mark.parametrize("cl", LAYOUTS)
@pytest.mark.parametrize("T", ["float", "__half"])
@pytest.mark.parametrize("shape", [(3, 5, 5000), (40, 5, 50), (9, 37, 3)])
@pytest.mark.parametrize("blocks", [1, 3])
def test_grid_stride_small_grids(mod, cl, T, shape, blocks):
    """Fewer blocks / splits than the plan: every loop advances its (plane, segment, channel) or
    row-chunk position several times (fused forward with mask, training backward with mask)."""
    N, C, S = shape
    r = rng_for("gridstride", cl, T, shape, blocks)
    mem = Mem()
    x, xv = mem.data(r.normal(0.5, 1.0, (N, C, S)), T, cl)
    z, zv = mem.data(r.normal(0.0, 1.0, (N, C, S)), T, cl)
    dy, dyv = mem.data(r.normal(0.0, 1.0, (N, C, S)), T, cl)
    w, wv = mem.vec(r.normal(1.0, 0.3, C), "float")
    b, bv = mem.vec(r.normal(0.0, 0.3, C), "float")
    ws, sp = stats(mod, mem, x, N, C, S, T, cl, splits=blocks)
    sm, si, cf = finalize_stats(mod, mem, ws, sp, C, "float", 1e-5, 0.0, w, b)
    y, mk = apply(mod, mem, x, N, C, S, T, cl, cf, cf.ptr + 4 * C, cf.ptr + 8 * C, z=z, act=1, fused=True,
                  mask=True, blocks=blocks)
    y2, _ = apply(mod, mem, x, N, C, S, T, cl, cf, cf.ptr + 4 * C, cf.ptr + 8 * C, blocks=blocks)
    want = ref.batch_norm_fused_forward(xv, wv, bv, zv, "relu", None, True)
    check(read_data(y, N, C, S, T, cl), want["output"], T, scale=4, what="y fused")
    check(read_data(y2, N, C, S, T, cl), ref.batch_norm(xv, wv, bv)["output"], T, scale=4, what="y")
    got_mask = unpack_mask(mk, N, C, S, cl)
    pre = ref.batch_norm(xv, wv, bv)["output"] + zv
    near = np.abs(pre) < 1e-4
    assert np.array_equal(got_mask | near, want["mask"] | near)
    smv, siv = read_vec(sm, "float"), read_vec(si, "float")
    pc = prep(mod, mem, C, "float", sm, si, False, 0.0, w)
    ws2, sp2 = bwd_reduce(mod, mem, dy, x, pc, N, C, S, T, cl, mask=mk, splits=blocks)
    (_, _, gw, gb), cf2 = bwd_finalize(mod, mem, ws2, sp2, C, N * S, "float", pc.ptr + 4 * C, pc.ptr + 8 * C,
                                       outs=(False, False, True, True))
    dx, dz = bwd_elemt(mod, mem, dy, x, N, C, S, T, cl, 2, pc, cf2, cf2.ptr + 4 * C, cf2.ptr + 8 * C, mask=mk,
                       want_dz=True, blocks=blocks)
    dx0, _ = bwd_elemt(mod, mem, dy, x, N, C, S, T, cl, 0, None, None, None, pc.ptr + 12 * C, blocks=blocks)
    dxr, dzr, dsr, dbr = ref.batch_norm_fused_backward(dyv, xv, wv, smv, siv, got_mask, True)
    sc = 4 * math.sqrt(N * S) * 4
    check(read_data(dx, N, C, S, T, cl), dxr, T, scale=8, what="dx")
    check(read_data(dz, N, C, S, T, cl), dzr, T, what="dz")
    check(read_data(dx0, N, C, S, T, cl), dyv * (wv * siv).reshape(1, -1, 1), T, scale=4, what="dx inference")
    check(read_vec(gw, "float"), dsr, "float", scale=sc, what="dscale")
    check(read_vec(gb, "float"), dbr, "float", scale=sc, what="dbias")
    mem.check_guards()


# ------------------------------------------------------------------------------------------------
# the references themselves: against PyTorch (CPU, float64) where it has the op, and identities
# ------------------------------------------------------------------------------------------------
def _torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("channels_last", [False, True])
def test_reference_batch_norm_matches_torch(training, channels_last):
    torch = _torch()
    F = torch.nn.functional
    r = np.random.default_rng(1)
    x = r.normal(0.5, 2.0, (3, 4, 5, 6))
    dy = r.normal(0.0, 1.0, x.shape)
    w, b = r.normal(1.0, 0.3, 4), r.normal(0.0, 0.3, 4)
    rm, rv = r.normal(0.0, 1.0, 4), r.uniform(0.5, 2.0, 4)
    eps, mom = 1e-3, 0.2
    tx = torch.tensor(x, requires_grad=True)
    tw, tb = torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True)
    trm, trv = torch.tensor(rm), torch.tensor(rv)
    y = F.batch_norm(tx, trm, trv, tw, tb, training, mom, eps)
    y.backward(torch.tensor(dy))
    axis = 1
    xr, dyr = x, dy
    if channels_last:  # the reference on an N...C array with axis=-1 must agree
        xr, dyr, axis = np.moveaxis(x, 1, -1), np.moveaxis(dy, 1, -1), -1
    out = ref.batch_norm(xr, w, b, rm, rv, training, mom, eps, axis=axis)
    yr = np.moveaxis(out["output"], -1, 1) if channels_last else out["output"]
    np.testing.assert_allclose(yr, y.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out["running_mean"], trm.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out["running_var"], trv.numpy(), rtol=1e-12, atol=1e-12)
    gi, gw, gb = ref.batch_norm_backward(dyr, xr, w, rm, rv, out["save_mean"], out["save_invstd"], training,
                                         eps, axis=axis)
    gi = np.moveaxis(gi, -1, 1) if channels_last else gi
    np.testing.assert_allclose(gi, tx.grad.numpy(), rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(gw, tw.grad.numpy(), rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(gb, tb.grad.numpy(), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("act", ["identity", "relu", "clipped_relu"])
@pytest.mark.parametrize("with_z", [False, True])
def test_reference_fused_matches_torch(act, with_z):
    torch = _torch()
    F = torch.nn.functional
    r = np.random.default_rng(2)
    x = r.normal(0.3, 1.5, (2, 3, 7))
    z = r.normal(0.0, 1.0, x.shape) if with_z else None
    dy = r.normal(0.0, 1.0, x.shape)
    w, b = r.normal(1.0, 0.3, 3), r.normal(0.2, 0.3, 3)
    ceiling = 0.8
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    tz = torch.tensor(z, requires_grad=True) if with_z else None
    v = F.batch_norm(tx, None, None, tw, tb, True, 0.1, 1e-5)
    if with_z:
        v = v + tz
    y = {"identity": v, "relu": torch.relu(v), "clipped_relu": torch.clamp(v, 0.0, ceiling)}[act]
    y.backward(torch.tensor(dy))
    out = ref.batch_norm_fused_forward(x, w, b, z, act, ceiling, True)
    np.testing.assert_allclose(out["output"], y.detach().numpy(), rtol=1e-12, atol=1e-12)
    dx, dz, ds, db = ref.batch_norm_fused_backward(dy, x, w, out["save_mean"], out["save_invstd"], out["mask"],
                                                   with_z)
    np.testing.assert_allclose(dx, tx.grad.numpy(), rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(ds, tw.grad.numpy(), rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(db, tb.grad.numpy(), rtol=1e-9, atol=1e-11)
    if with_z:
        np.testing.assert_allclose(dz, tz.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_reference_sync_bn_identities():
    """SyncBN pieces recombine into plain BatchNorm: per-rank stats gathered with counts (one empty
    rank) = stats of the whole batch; reduce + elemt backward with the counter = full backward;
    oneDNN's variance form = invstd form."""
    r = np.random.default_rng(3)
    x = r.normal(1.0, 2.0, (7, 5, 6))
    dy = r.normal(0.0, 1.0, x.shape)
    w = r.normal(1.0, 0.3, 5)
    rm, rv = r.normal(0.0, 1.0, 5), r.uniform(0.5, 2.0, 5)
    eps, mom = 1e-5, 0.1
    parts = [x[:3], x[3:3], x[3:]]
    means, invstds, counts = [], [], []
    for p in parts:
        if p.shape[0]:
            m, i = ref.batch_norm_stats(p, eps)
        else:
            m, i = np.full(5, 123.0), np.full(5, 7.0)  # garbage: count 0 must be ignored
        means.append(m)
        invstds.append(i)
        counts.append(p.shape[0] * p.shape[2])
    ma, ia, rma, rva = ref.batch_norm_gather_stats_with_counts(np.array(means), np.array(invstds),
                                                               np.array(counts), rm, rv, mom, eps)
    full = ref.batch_norm(x, None, None, rm, rv, True, mom, eps)
    np.testing.assert_allclose(ma, full["save_mean"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ia, full["save_invstd"], rtol=1e-10)
    np.testing.assert_allclose(rma, full["running_mean"], rtol=1e-12)
    np.testing.assert_allclose(rva, full["running_var"], rtol=1e-10)
    sm, si = full["save_mean"], full["save_invstd"]
    sdy, sdx, gw, gb = ref.batch_norm_reduce_backward(dy, x, sm, si, w)
    gi = ref.batch_norm_elemt_backward(dy, x, sm, si, w, sdy, sdx, np.array(counts, dtype=np.int32))
    gi_full, gw_full, gb_full = ref.batch_norm_backward(dy, x, w, None, None, sm, si, True)
    np.testing.assert_allclose(gi, gi_full, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gw, gw_full, rtol=1e-12)
    np.testing.assert_allclose(gb, gb_full, rtol=1e-12)
    var = x.var(axis=(0, 2))
    xs, dys = np.moveaxis(x, 1, -1), np.moveaxis(dy, 1, -1)
    dxo, dgo, dbo = ref.batch_norm_training_backward_onednn(xs, dys, sm, var, w, eps, "NXC")
    np.testing.assert_allclose(np.moveaxis(dxo, -1, 1), gi_full, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dgo, gw_full, rtol=1e-10)
    np.testing.assert_allclose(dbo, gb_full, rtol=1e-12)
    dxn, dgn, dbn = ref.batch_norm_training_backward_onednn(x, dy, sm, var, w, eps, "NCX", False)
    assert dgn is None and dbn is None  # gamma ignored without scale/shift gradients
    np.testing.assert_allclose(dxn, ref.batch_norm_backward(dy, x, None, None, None, sm, si, True)[0],
                               rtol=1e-10, atol=1e-12)
