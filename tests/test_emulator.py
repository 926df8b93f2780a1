"""Conformance tests of the host CUDA emulator (aclnn_py.emulator), driven directly through
compile_module with NumPy arrays as device memory. Kernels: tests/emulator_kernels/*.cu."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from aclnn_py.kernel_cache import family_names

from aclnn_py.emulator import EmulatorError, KernelError, cache_dir, compile_module, compiler_info

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - ml_dtypes is a project dependency
    ml_dtypes = None

KDIR = Path(__file__).resolve().parent / "emulator_kernels"
FULL = 0xFFFFFFFF


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------
def name_expressions(src: str) -> list[str]:
    return family_names(src)


def load(name: str):
    src = (KDIR / name).read_text()
    return compile_module(src, options=("-std=c++17",), name_expressions=name_expressions(src), filename=name)


def ptr(a: np.ndarray) -> bytes:
    assert a.flags.c_contiguous
    return np.uint64(a.ctypes.data).tobytes()


def i32(v) -> bytes:
    return np.int32(v).tobytes()


def f32(v) -> bytes:
    return np.float32(v).tobytes()


def guarded(fn, *args, limit: float = 20.0, **kw):
    """Runs fn in a daemon thread; a hang fails the test instead of blocking the run."""
    box: dict = {}

    def target():
        try:
            box["value"] = fn(*args, **kw)
        except BaseException as e:  # noqa: BLE001 - re-raised below
            box["error"] = e

    t = threading.Thread(target=target, daemon=True)
    t0 = time.perf_counter()
    t.start()
    t.join(limit)
    if t.is_alive():
        pytest.fail(f"{getattr(fn, '__name__', fn)} did not return within {limit} s (hang)")
    box["elapsed"] = time.perf_counter() - t0
    return box


def expect_kernel_error(fn, grid, block, params, shared_mem=0, *, kernel: str, block_idx: str = "(0,0,0)",
                        match: str = ""):
    box = guarded(fn.launch, grid, block, params, shared_mem)
    err = box.get("error")
    assert isinstance(err, KernelError), f"expected KernelError, got {err!r}"
    msg = str(err)
    assert f"kernel '{kernel}'" in msg, msg
    assert f"block {block_idx}" in msg, msg
    if match:
        assert re.search(match, msg), msg
    assert box["elapsed"] < 1.0, f"error reported after {box['elapsed']:.2f} s"
    return msg


def bf16_ref(x64: np.ndarray) -> np.ndarray:
    return round_ref(x64, 7, -126, 127)


def round_ref(x64: np.ndarray, mbits: int, emin: int, emax: int) -> np.ndarray:
    """Round float64 values once, to nearest even, into a binary format (returns float64)."""
    x = np.asarray(x64, np.float64)
    out = np.empty_like(x)
    fin = np.isfinite(x) & (x != 0)
    _, e = np.frexp(np.where(fin, x, 1.0))
    lead = np.maximum(e - 1, emin)
    q = np.ldexp(1.0, lead - mbits)
    r = np.rint(x / q) * q
    maxf = (2.0 - 2.0 ** -mbits) * 2.0 ** emax
    r = np.where(np.abs(r) > maxf, np.copysign(np.inf, x), r)
    out[fin] = r[fin]
    out[~fin] = x[~fin]
    return out


def bf16_bits(x64: np.ndarray) -> np.ndarray:
    """float64 values exactly representable in bf16 -> their bit patterns."""
    return (np.asarray(x64, np.float64).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


# ------------------------------------------------------------------------------------------------
# fixtures
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def conf():
    return load("conformance.cu")


@pytest.fixture(scope="module")
def errs():
    return load("errors.cu")


@pytest.fixture(scope="module")
def errs60():
    """errors.cu for sm_60: before Volta the threads of a block must meet at one __syncthreads."""
    src = (KDIR / "errors.cu").read_text()
    return compile_module(src, options=("-std=c++17", "-arch=sm_60"), name_expressions=name_expressions(src),
                          filename="errors.cu")


@pytest.fixture(scope="module")
def conv():
    return load("conversions.cu")


# ------------------------------------------------------------------------------------------------
# barriers, shared memory
# ------------------------------------------------------------------------------------------------
def test_block_reduce_shared_memory(conf):
    fn = conf.get_function("block_reduce_sum")
    assert fn.uses_sync and fn.param_sizes == (8, 8, 4) and fn.param_kinds == ("p", "p", "i")
    rng = np.random.default_rng(1)
    n = 256 * 37 + 100
    x = rng.standard_normal(n).astype(np.float32)
    nb = (n + 255) // 256
    out = np.zeros(nb, np.float32)
    fn.launch((nb, 1, 1), (256, 1, 1), [ptr(x), ptr(out), i32(n)])
    ref = np.add.reduceat(x.astype(np.float64), np.arange(0, n, 256))
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def test_early_return_before_barrier(conf):
    fn = conf.get_function("early_exit")
    nb, keep = 3, 100
    x = np.arange(nb * 256, dtype=np.float32)
    out = np.full(nb * 256, -1.0, np.float32)
    count = np.zeros(1, np.int32)
    fn.launch((nb, 1, 1), (256, 1, 1), [ptr(x), ptr(out), ptr(count), i32(keep)])
    assert count[0] == nb * (256 - keep)
    o, xx = out.reshape(nb, 256), x.reshape(nb, 256)
    np.testing.assert_array_equal(o[:, :keep], xx[:, keep - 1 :: -1][:, :keep])
    assert np.all(o[:, keep:] == -1.0)


def test_dynamic_shared_memory(conf):
    n, nb = 300, 3
    x = np.arange(nb * n, dtype=np.float32)
    conf.get_function("dyn_smem_reverse").launch((nb, 1, 1), (128, 1, 1), [ptr(x), i32(n)], shared_mem=n * 4)
    np.testing.assert_array_equal(x.reshape(nb, n), np.arange(nb * n, dtype=np.float32).reshape(nb, n)[:, ::-1])

    a = np.arange(2 * 64 * 4, dtype=np.float32)
    b = np.zeros_like(a)
    conf.get_function("dyn_smem_aligned").launch((2, 1, 1), (64, 1, 1), [ptr(a), ptr(b)], shared_mem=64 * 16)
    exp = a.reshape(2, 64, 4)[:, ::-1, ::-1]
    np.testing.assert_array_equal(b.reshape(2, 64, 4), exp)

    info = np.full(3, 99, np.uint64)
    conf.get_function("smem_alignment").launch((1, 1, 1), (32, 1, 1), [ptr(info)], shared_mem=64)
    assert list(info) == [0, 1, 1]  # 16-byte aligned; every extern __shared__ array is the same buffer


def test_dynamic_shared_memory_is_poisoned_per_block(conf):
    n, nb = 16, 4
    out = np.zeros(nb * n, np.uint32)
    conf.get_function("smem_poison").launch((nb, 1, 1), (32, 1, 1), [ptr(out), i32(n)], shared_mem=n * 4)
    assert np.all(out == 0xFFFFFFFF)  # a NaN pattern for floats, before each block


def test_barrier_in_called_functor_runs_with_fibers(conf):
    fn = conf.get_function("indirect_sync")
    assert fn.uses_sync
    out = np.zeros(64, np.float32)
    fn.launch((1, 1, 1), (64, 1, 1), [ptr(out)])
    np.testing.assert_array_equal(out, np.arange(63, -1, -1, dtype=np.float32))


def test_large_block_1024_threads(conf):
    fn = conf.get_function("block_sum_t<float, 1024>")
    x = np.random.default_rng(2).integers(-50, 50, 4 * 1024).astype(np.float32)
    out = np.zeros(4, np.float32)
    fn.launch((4, 1, 1), (1024, 1, 1), [ptr(x), ptr(out)])
    np.testing.assert_array_equal(out, x.reshape(4, 1024).sum(1))


# ------------------------------------------------------------------------------------------------
# warp collectives
# ------------------------------------------------------------------------------------------------
def test_warp_shuffle_reductions(conf):
    rng = np.random.default_rng(3)
    x = rng.integers(-100, 100, 4 * 128).astype(np.float32)  # exact sums in any order
    ox = np.zeros_like(x)
    od = np.zeros_like(x)
    conf.get_function("warp_reduce").launch((4, 1, 1), (128, 1, 1), [ptr(x), ptr(ox), ptr(od)])
    sums = x.reshape(-1, 32).sum(1)
    np.testing.assert_array_equal(ox.reshape(-1, 32), np.repeat(sums[:, None], 32, 1))
    np.testing.assert_array_equal(od.reshape(-1, 32)[:, 0], sums)


def test_half_warp_shuffle_under_divergence(conf):
    rng = np.random.default_rng(4)
    x = rng.integers(0, 10, 2 * 64).astype(np.int32)
    out = np.zeros_like(x)
    conf.get_function("half_warp_shuffle").launch((2, 1, 1), (64, 1, 1), [ptr(x), ptr(out)])
    exp = np.empty_like(x)
    for w in range(x.size // 32):
        v = x[32 * w : 32 * w + 32]
        for lane in range(32):
            if lane < 16:
                s = v[:16].sum()
                d = v[lane + 4] if lane + 4 < 16 else v[lane]
                u = v[lane - 1] if lane >= 1 else v[lane]
                exp[32 * w + lane] = s * 1000000 + (d - v[lane]) * 10000 + (u - v[lane]) * 100 + v[3]
            else:
                exp[32 * w + lane] = -v[lane]
    np.testing.assert_array_equal(out, exp)


def shfl_ref(v: np.ndarray, mode: str, b: int, width: int) -> np.ndarray:
    out = np.empty_like(v)
    for lane in range(32):
        seg = lane & ~(width - 1)
        if mode == "idx":
            j, ok = seg + (b & (width - 1)), True
        elif mode == "up":
            j = lane - b
            ok = j >= seg
        elif mode == "down":
            j = lane + b
            ok = j <= seg + width - 1
        else:
            j = lane ^ b
            ok = j <= seg + width - 1
        out[lane] = v[j] if ok else v[lane]
    return out


@pytest.mark.parametrize("width", [1, 2, 4, 8, 16, 32])
def test_shuffle_width(conf, width):
    x = np.arange(64, dtype=np.int32) * 3 + 1
    out = np.zeros(4 * 64, np.int32)
    conf.get_function("shfl_width").launch((1, 1, 1), (64, 1, 1), [ptr(x), ptr(out), i32(width)])
    o = out.reshape(64, 4)
    for w in range(2):
        v = x[32 * w : 32 * w + 32]
        for k, (mode, b) in enumerate((("idx", 5), ("up", 3), ("down", 3), ("xor", 6))):
            np.testing.assert_array_equal(o[32 * w : 32 * w + 32, k], shfl_ref(v, mode, b, width), err_msg=f"{mode}")


def test_shuffle_64bit_types(conf):
    d = np.random.default_rng(5).standard_normal(64)
    ll = np.arange(64, dtype=np.int64) * (1 << 40)
    od = np.zeros_like(d)
    ol = np.zeros_like(ll)
    conf.get_function("shfl_types").launch((1, 1, 1), (64, 1, 1), [ptr(d), ptr(ll), ptr(od), ptr(ol)])
    idx = np.arange(64)
    np.testing.assert_array_equal(od, d[idx ^ 1])
    lane = idx % 32
    np.testing.assert_array_equal(ol, np.where(lane + 2 < 32, ll[np.minimum(idx + 2, 63)], ll))


def test_ballot_any_all_count(conf):
    rng = np.random.default_rng(6)
    pred = rng.integers(0, 2, 128).astype(np.int32)
    pred[32:64] = 1  # one warp all true
    pred[64:96] = 0  # one warp all false
    ballot = np.zeros(128, np.uint32)
    anyv = np.zeros(128, np.int32)
    allv = np.zeros(128, np.int32)
    active = np.zeros(128, np.uint32)
    conf.get_function("votes").launch((2, 1, 1), (64, 1, 1), [ptr(pred), ptr(ballot), ptr(anyv), ptr(allv), ptr(active)])
    for w in range(4):
        p = pred[32 * w : 32 * w + 32]
        bits = int(sum(int(b) << i for i, b in enumerate(p)))
        for lane in range(32):
            i = 32 * w + lane
            if i % 64 == 0:
                assert ballot[i] == (bits & 0xFFFF) | (int(pred[i : i + 64].sum()) << 16)
            else:
                assert ballot[i] == bits
        assert np.all(anyv[32 * w : 32 * w + 32] == int(p.any()))
        assert np.all(allv[32 * w : 32 * w + 32] == int(p.all()))
    assert np.all(active == FULL)


def test_activemask_in_divergent_branch(conf):
    n = 20
    x = np.arange(1, 33, dtype=np.int32)
    out = np.zeros(32, np.int32)
    masks = np.zeros(32, np.uint32)
    conf.get_function("active_branch").launch((1, 1, 1), (32, 1, 1), [ptr(x), ptr(out), ptr(masks), i32(n)])
    assert np.all(masks[:n] == (1 << n) - 1) and np.all(masks[n:] == 0)
    v = x[:n].astype(np.int64)
    for o in (16, 8, 4, 2, 1):
        v = v + np.array([v[i + o] if i + o < n else 0 for i in range(n)])
    np.testing.assert_array_equal(out[:n], v)
    assert out[0] == x[:n].sum() and np.all(out[n:] == 0)


def test_subset_collective_while_others_wait_in_syncwarp(conf):
    x = np.arange(64, dtype=np.int32)
    out = np.zeros(64, np.int32)
    conf.get_function("upper_half_then_syncwarp").launch((1, 1, 1), (64, 1, 1), [ptr(x), ptr(out)])
    v = x.copy()
    lane = np.arange(64) % 32
    up = lane >= 16
    v = np.where(up, v + x[np.arange(64) ^ 1], v)
    v = v + v[np.arange(64) ^ 16]
    np.testing.assert_array_equal(out, v)


def test_partial_warps(conf):
    """blockDim 40: warp 1 has 8 lanes. The full mask is accepted (non-existent lanes are not
    required) and a shuffle whose source lane does not exist returns the caller's own value."""
    bd, nb = 40, 2
    x = np.random.default_rng(7).integers(1, 20, bd * nb).astype(np.float32)
    x[bd + 35] = -1.0  # makes __all_sync false for warp 1 of block 1
    s = np.zeros_like(x)
    ballot = np.zeros(bd * nb, np.uint32)
    allv = np.zeros(bd * nb, np.int32)
    conf.get_function("partial_warp").launch((nb, 1, 1), (bd, 1, 1), [ptr(x), ptr(s), ptr(ballot), ptr(allv)])
    for b in range(nb):
        for w0 in (0, 32):
            lanes = min(32, bd - w0)
            v = x[b * bd + w0 : b * bd + w0 + lanes].astype(np.float64)
            for o in (16, 8, 4, 2, 1):
                v = v + np.array([v[lane + o] if lane + o < lanes else v[lane] for lane in range(lanes)])
            np.testing.assert_array_equal(s[b * bd + w0 : b * bd + w0 + lanes], v.astype(np.float32))
            assert np.all(ballot[b * bd + w0 : b * bd + w0 + lanes] == (1 << lanes) - 1)
            seg = x[b * bd + w0 : b * bd + w0 + lanes]
            assert np.all(allv[b * bd + w0 : b * bd + w0 + lanes] == int(np.all(seg > 0)))


# ------------------------------------------------------------------------------------------------
# templates and 16-bit types
# ------------------------------------------------------------------------------------------------
def lowp_types():
    types = [("float", np.float32), ("__half", np.float16)]
    if ml_dtypes is not None:
        types.append(("__nv_bfloat16", ml_dtypes.bfloat16))
    return types


@pytest.mark.parametrize("cname,dtype", lowp_types())
def test_template_kernel_types(conf, cname, dtype):
    n = 1000
    rng = np.random.default_rng(8)
    x = (rng.standard_normal(n) * 4).astype(dtype)
    y = np.zeros(n, dtype)
    a, b = np.float32(1.37), np.float32(-0.21)
    fn = conf.get_function(f"axpb<{cname}>")
    assert not fn.uses_sync
    fn.launch((4, 1, 1), (256, 1, 1), [ptr(x), ptr(y), f32(a), f32(b), i32(n)])
    ref = (x.astype(np.float32) * a + b).astype(dtype)
    bits = np.uint32 if dtype is np.float32 else np.uint16
    np.testing.assert_array_equal(y.view(bits), ref.view(bits))

    xs = (rng.standard_normal(128)).astype(dtype)
    out = np.zeros(256, np.float32)
    conf.get_function(f"warp_sum_t<{cname}>").launch((1, 1, 1), (128, 1, 1), [ptr(xs), ptr(out)])
    xf = xs.astype(np.float32)
    np.testing.assert_allclose(out[0::2], np.repeat(xf.reshape(4, 32).astype(np.float64).sum(1), 32), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out[1::2], xf[np.arange(128) ^ 31])


def test_template_non_type_parameter(conf):
    x = np.random.default_rng(9).standard_normal(3 * 256)
    out = np.zeros(3)
    conf.get_function("block_sum_t<double, 256>").launch((3, 1, 1), (256, 1, 1), [ptr(x), ptr(out)])
    np.testing.assert_allclose(out, x.reshape(3, 256).sum(1), rtol=1e-12)
    xf = np.arange(2 * 128, dtype=np.float32)
    of = np.zeros(2, np.float32)
    conf.get_function("block_sum_t<float,128>").launch((2, 1, 1), (128, 1, 1), [ptr(xf), ptr(of)])
    np.testing.assert_array_equal(of, xf.reshape(2, 128).sum(1))


def test_half_bits_to_float_exhaustive(conv):
    bits = np.arange(65536, dtype=np.uint16)
    out = np.zeros(65536, np.float32)
    conv.get_function("half_bits_to_float").launch((64, 1, 1), (256, 1, 1), [ptr(bits), ptr(out), i32(65536)])
    ref = bits.view(np.float16).astype(np.float32)
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(out), nan)
    np.testing.assert_array_equal(out[~nan].view(np.uint32), ref[~nan].view(np.uint32))
    assert np.all(out[nan].view(np.uint32) == 0x7FFFFFFF)  # CUDA's canonical NaN


@pytest.mark.skipif(ml_dtypes is None, reason="ml_dtypes not installed")
def test_bf16_bits_to_float_exhaustive(conv):
    bits = np.arange(65536, dtype=np.uint16)
    out = np.zeros(65536, np.float32)
    conv.get_function("bf16_bits_to_float").launch((64, 1, 1), (256, 1, 1), [ptr(bits), ptr(out), i32(65536)])
    ref = bits.view(ml_dtypes.bfloat16).astype(np.float32)
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(out), nan)
    np.testing.assert_array_equal(out[~nan].view(np.uint32), ref[~nan].view(np.uint32))


def float_samples(grid_dtype) -> np.ndarray:
    """Random floats plus every tie and near-tie between neighbouring values of the 16-bit grid."""
    rng = np.random.default_rng(10)
    parts = [
        rng.standard_normal(20000).astype(np.float32) * np.float32(10.0) ** rng.integers(-12, 8, 20000).astype(np.float32),
        rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32),
        np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 65504, 65519.996, 65520, -65520, 1e-8, 6e-8, 5.96e-8,
                  2.98e-8, 2.9802322e-08, 3.4e38, 1e-45, -1e-45, 1.17549435e-38], np.float32),
    ]
    with np.errstate(invalid="ignore"):
        grid = np.arange(65536, dtype=np.uint16).view(grid_dtype).astype(np.float64)
    grid = np.sort(grid[np.isfinite(grid)])
    grid = np.unique(grid)
    mid = ((grid[1:] + grid[:-1]) / 2).astype(np.float32)  # exact ties
    parts += [mid, np.nextafter(mid, np.float32(np.inf)), np.nextafter(mid, np.float32(-np.inf))]
    return np.concatenate(parts).astype(np.float32)


def test_float_to_half_rounding(conv):
    x = float_samples(np.float16)
    n = x.size
    h = np.zeros(n, np.uint16)
    hc = np.zeros(n, np.uint16)
    conv.get_function("float_to_half_bits").launch((128, 1, 1), (256, 1, 1), [ptr(x), ptr(h), ptr(hc), i32(n)])
    with np.errstate(over="ignore"):
        ref = x.astype(np.float16).view(np.uint16)
    nan = np.isnan(x)
    np.testing.assert_array_equal(h[~nan], ref[~nan])
    assert np.all(h[nan] == 0x7FFF)
    np.testing.assert_array_equal(hc, h)


def test_half2_pair_conversions_match_the_scalar_ones(conv):
    """__half22float2 / __floats2half2_rn / __float22half2_rn (one F16C instruction per pair on the
    emulator) give the scalar conversions' bits in both lanes, NaN on either side included."""
    x = float_samples(np.float16)
    n = x.size
    rng = np.random.default_rng(21)
    assert n > 65536
    bits = np.concatenate([np.arange(65536, dtype=np.uint16), rng.integers(0, 65536, n - 65536).astype(np.uint16)])
    f = np.zeros(2 * n, np.float32)
    h = np.zeros(2 * n, np.uint16)
    h2 = np.zeros(2 * n, np.uint16)
    conv.get_function("half2_pairs").launch((128, 1, 1), (256, 1, 1), [ptr(bits), ptr(x), ptr(f), ptr(h), ptr(h2), i32(n)])
    pb = np.stack([bits, bits[::-1]], 1).reshape(-1)
    with np.errstate(invalid="ignore"):
        fref = pb.view(np.float16).astype(np.float32)
    nan = np.isnan(fref)
    assert nan.any() and not nan.all()
    np.testing.assert_array_equal(f[~nan].view(np.uint32), fref[~nan].view(np.uint32))
    assert np.all(f[nan].view(np.uint32) == 0x7FFFFFFF)
    for out, px in ((h, np.stack([x, x[::-1]], 1).reshape(-1)), (h2, np.stack([x[::-1], x], 1).reshape(-1))):
        with np.errstate(over="ignore"):
            ref = px.astype(np.float16).view(np.uint16)
        xn = np.isnan(px)
        assert xn.any()
        np.testing.assert_array_equal(out[~xn], ref[~xn])
        assert np.all(out[xn] == 0x7FFF)


@pytest.mark.skipif(ml_dtypes is None, reason="ml_dtypes not installed")
def test_float_to_bf16_rounding(conv):
    x = float_samples(ml_dtypes.bfloat16)
    n = x.size
    b = np.zeros(n, np.uint16)
    bc = np.zeros(n, np.uint16)
    conv.get_function("float_to_bf16_bits").launch((128, 1, 1), (256, 1, 1), [ptr(x), ptr(b), ptr(bc), i32(n)])
    with np.errstate(invalid="ignore", over="ignore"):
        ref = x.astype(ml_dtypes.bfloat16).view(np.uint16)
    nan = np.isnan(x)
    np.testing.assert_array_equal(b[~nan], ref[~nan])
    assert np.all(b[nan] == 0x7FFF)
    np.testing.assert_array_equal(bc, b)


@pytest.mark.skipif(ml_dtypes is None, reason="ml_dtypes not installed")
def test_bf16_pair_conversion_matches_the_scalar_one(conv):
    """__floats2bfloat162_rn (branch-free in both lanes on the emulator) gives the scalar conversion's
    bits in each lane, NaN on either side (CUDA's canonical 0x7FFF)."""
    x = float_samples(ml_dtypes.bfloat16)
    n = x.size
    w = np.zeros(n, np.uint32)
    conv.get_function("float_to_bf162_bits").launch((128, 1, 1), (256, 1, 1), [ptr(x), ptr(w), i32(n)])
    for lane, px in ((w & 0xFFFF, x), (w >> 16, x[::-1])):
        with np.errstate(invalid="ignore", over="ignore"):
            ref = px.astype(ml_dtypes.bfloat16).view(np.uint16)
        xn = np.isnan(px)
        assert xn.any() and not xn.all()
        np.testing.assert_array_equal(lane[~xn], ref[~xn])
        assert np.all(lane[xn] == 0x7FFF)


def test_double_to_half_and_bf16_single_rounding(conv):
    rng = np.random.default_rng(11)
    hgrid = np.unique(np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float64))
    hgrid = hgrid[np.isfinite(hgrid)]
    hmid = (hgrid[1:] + hgrid[:-1]) / 2
    bgrid = np.unique(np.arange(65536, dtype=np.uint16).view(np.uint16).astype(np.uint32) << 16).astype(np.uint32)
    with np.errstate(invalid="ignore"):
        bgrid = bgrid.view(np.float32).astype(np.float64)
    bgrid = np.unique(bgrid[np.isfinite(bgrid)])
    bmid = (bgrid[1:] + bgrid[:-1]) / 2
    x = np.concatenate([
        rng.standard_normal(20000) * 10.0 ** rng.integers(-40, 40, 20000),
        hmid, np.nextafter(hmid, np.inf), np.nextafter(hmid, -np.inf),
        bmid, bmid + np.abs(bmid) * 2.0**-40, bmid - np.abs(bmid) * 2.0**-40,  # not representable in float
        [0.0, -0.0, np.inf, -np.inf, 1e300, -1e300, 5e-324, 65520.0, 65519.999999],
    ])
    n = x.size
    h = np.zeros(n, np.uint16)
    b = np.zeros(n, np.uint16)
    conv.get_function("double_to_lowp_bits").launch((128, 1, 1), (256, 1, 1), [ptr(x), ptr(h), ptr(b), i32(n)])
    with np.errstate(over="ignore"):
        href = round_ref(x, 10, -14, 15).astype(np.float16).view(np.uint16)
        np.testing.assert_array_equal(href, x.astype(np.float16).view(np.uint16))  # the reference agrees with NumPy
    np.testing.assert_array_equal(h, href)
    np.testing.assert_array_equal(b, bf16_bits(bf16_ref(x)))


def lowp_arith_check(conv, kernel: str, to_f32, from_f64_bits):
    rng = np.random.default_rng(12)
    n = 30000
    a = rng.integers(0, 65536, n, dtype=np.uint32).astype(np.uint16)
    bb = rng.integers(0, 65536, n, dtype=np.uint32).astype(np.uint16)
    c = rng.integers(0, 65536, n, dtype=np.uint32).astype(np.uint16)
    out = np.zeros(8 * n, np.uint16)
    conv.get_function(kernel).launch((64, 1, 1), (256, 1, 1), [ptr(a), ptr(bb), ptr(c), ptr(out), i32(n)])
    o = out.reshape(n, 8)
    x, y, z = to_f32(a), to_f32(bb), to_f32(c)
    with np.errstate(all="ignore"):
        refs = [
            from_f64_bits(x.astype(np.float32) + y),
            from_f64_bits(x * y),
            from_f64_bits(x / y),
            from_f64_bits(x.astype(np.float64) * y + z),
            from_f64_bits(np.sqrt(np.abs(x))),
            from_f64_bits(x.astype(np.float32) + y),  # low lane of __hadd2((x, y), (y, z))
            from_f64_bits(y * z),  # high lane of __hmul2((x, y), (y, z))
        ]
    for k, ref in enumerate(refs):
        got = o[:, k]
        val = np.isnan(to_f32(ref))
        assert np.array_equal(np.isnan(to_f32(got)), val), f"op {k}: NaN mismatch"
        np.testing.assert_array_equal(got[~val], ref[~val], err_msg=f"op {k}")
    # __hmax: NaN-ignoring maximum, +0 > -0
    fin = ~np.isnan(x) & ~np.isnan(y)
    mx = o[fin, 7]
    ref = np.where(x[fin] > y[fin], a[fin], np.where(x[fin] < y[fin], bb[fin], np.minimum(a[fin], bb[fin])))
    np.testing.assert_array_equal(mx, ref)


def test_half_arithmetic_correctly_rounded(conv):
    def to_f32(bits):
        return bits.view(np.float16).astype(np.float32)

    def from_f(v):
        return round_ref(np.asarray(v, np.float64), 10, -14, 15).astype(np.float16).view(np.uint16)

    lowp_arith_check(conv, "half_arith", to_f32, from_f)


@pytest.mark.skipif(ml_dtypes is None, reason="ml_dtypes not installed")
def test_bf16_arithmetic_correctly_rounded(conv):
    def to_f32(bits):
        return bits.view(ml_dtypes.bfloat16).astype(np.float32)

    def from_f(v):
        return bf16_bits(bf16_ref(np.asarray(v, np.float64)))

    lowp_arith_check(conv, "bf16_arith", to_f32, from_f)


def test_half_integer_conversions(conv):
    rng = np.random.default_rng(13)
    v = np.concatenate([rng.integers(-(2**31), 2**31 - 1, 5000), np.arange(-3000, 3000), [65504, 65519, 65520, 2049, 2051]]).astype(np.int32)
    hb = rng.integers(0, 65536, v.size, dtype=np.uint32).astype(np.uint16)
    th = np.zeros(v.size, np.uint16)
    ti = np.zeros(4 * v.size, np.int32)
    conv.get_function("half_int_conv").launch((16, 1, 1), (256, 1, 1), [ptr(v), ptr(hb), ptr(th), ptr(ti), i32(v.size)])
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(th, round_ref(v.astype(np.float64), 10, -14, 15).astype(np.float16).view(np.uint16))
    hf = hb.view(np.float16).astype(np.float64)
    t = ti.reshape(-1, 4)
    for k, f in enumerate((np.rint, np.trunc, np.floor, np.ceil)):
        with np.errstate(invalid="ignore"):
            r = np.clip(f(np.nan_to_num(hf, nan=0.0)), -(2.0**31), 2.0**31 - 1).astype(np.int64)
        np.testing.assert_array_equal(t[:, k], r)


# ------------------------------------------------------------------------------------------------
# atomics, parallel blocks, plain-loop kernels, misc
# ------------------------------------------------------------------------------------------------
def test_float_atomic_add_histogram_parallel_blocks(conf, monkeypatch):
    monkeypatch.setenv("ACLNN_PY_EMU_THREADS", "4")  # blocks on 4 OS threads even on a 2-core machine
    rng = np.random.default_rng(14)
    n = 200_000
    bins = rng.integers(0, 64, n).astype(np.int32)
    w = rng.choice(np.array([0.5, 1.0, 2.0], np.float32), n)  # exact sums in any order
    hist = np.zeros(64, np.float32)
    fn = conf.get_function("histogram")
    assert not fn.uses_sync
    fn.launch((96, 1, 1), (256, 1, 1), [ptr(bins), ptr(w), ptr(hist), i32(n)])
    np.testing.assert_array_equal(hist, np.bincount(bins, weights=w, minlength=64).astype(np.float32))


@pytest.mark.parametrize("threads", ["1", "2", "3", "8"])
@pytest.mark.parametrize("grid", [(1, 1, 1), (5, 1, 1), (4093, 1, 1), (37, 29, 3), (1000, 1, 7)])
def test_plain_loop_blocks_are_claimed_in_chunks_each_exactly_once(monkeypatch, threads, grid):
    """A plain-loop launch hands out its blocks in chunks of up to 64 per claim (one atomic per
    chunk): every block must run once, whatever the grid's shape, the thread count, or a last
    chunk that the grid's size cuts short."""
    monkeypatch.setenv("ACLNN_PY_EMU_THREADS", threads)
    mod = compile_module(textwrap.dedent("""
        extern "C" __global__ void count_blocks(unsigned* hits) {
            const unsigned long long b = blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
            atomicAdd(&hits[b], 1u);
        }"""), filename="count_blocks.cu")
    fn = mod.get_function("count_blocks")
    assert not fn.uses_sync
    hits = np.zeros(int(np.prod(grid)), np.uint32)
    fn.launch(grid, (32, 1, 1), [ptr(hits)])
    np.testing.assert_array_equal(hits, np.full_like(hits, 32))


def test_which_shifts_the_loader_rewrites():
    """Shifts get a GPU's result through ::__emu::shl / shr where the loader can delimit both operands for
    certain; anything next to a possible template bracket stays as written (and is checked at run time)."""
    from aclnn_py.emulator import compiler as C
    cases = {
        "out[i] = (1u << s[i]) - 1u;": "out[i] = (::__emu::shl(1u , s[i])) - 1u;",
        "x = a - b << c + d;": "x = ::__emu::shl(a - b , c + d);",          # + binds tighter than <<
        "a = b & c << d;": "a = b & ::__emu::shl(c , d);",                  # & binds looser
        "z = a << b >> c;": "z = ::__emu::shr(::__emu::shl(a , b) , c);",   # left-associative
        "if (i < n << k) f();": "if (i < ::__emu::shl(n , k)) f();",
        "y = v << n > m;": "y = ::__emu::shl(v , n) > m;",
        "Foo<(1 << n)> t;": "Foo<(::__emu::shl(1 , n))> t;",
        "x <<= s + 1;": "::__emu::shl_assign(x , s + 1);",
        "if (c) p[i] >>= s;": "if (c) ::__emu::shr_assign(p[i] , s);",
        "return ((i) >> 4 + (i) >> (2*4));": "return (::__emu::shr(::__emu::shr((i) , 4 + (i)) , (2*4)));",
    }
    unchanged = ["y = v >> 3;", "t = (x >> 16) & 0xffff;", "m = x << 0x1f;",     # literal counts below 32
                 "Foo<Bar<int>> x;", "static_cast<Vec<int>>(v) << s;",         # template brackets
                 "y = v << Foo<3>::x;", "x = a > b << c;", "k<<<1, 2>>>(p);", 'p("a << b");']
    for src, want in cases.items():
        assert C._rewrite_shifts(src) == want, src
    for src in unchanged:
        assert C._rewrite_shifts(src) == src, src


def test_a_module_the_shift_rewrite_breaks_is_built_as_written():
    """A bit-field cannot bind to ::__emu::shl's reference parameters: the rewritten text does not
    compile, so the module is built as written (its in-range shifts give the same numbers)."""
    mod = compile_module(textwrap.dedent("""
        struct Packed { unsigned lo : 4, hi : 28; };
        extern "C" __global__ void pack(unsigned* out, int s) {
            Packed p{5u, 3u};
            out[threadIdx.x] = p.lo << s | p.hi >> (s - 1);
        }"""), filename="bitfield_shift.cu")
    out = np.zeros(2, np.uint32)
    mod.get_function("pack").launch((1, 1, 1), (2, 1, 1), [ptr(out), i32(3)])
    np.testing.assert_array_equal(out, [(5 << 3) | (3 >> 2)] * 2)


def test_kernels_may_be_named_like_the_loaders_own_table_entries():
    """The loader's table of a module's kernels named its entries k0, k1, ...: a user kernel called k0
    (common in small examples) failed to compile ("use of '__emu_glue::k0' before deduction of 'auto'")."""
    mod = compile_module(textwrap.dedent("""
        extern "C" __global__ void k0(int* p) { p[threadIdx.x] = 10 + threadIdx.x; }
        extern "C" __global__ void k1(int* p) { p[threadIdx.x] += 1; }
        extern "C" __global__ void count(int* p) { p[threadIdx.x] *= 2; }"""), filename="glue_names.cu")
    out = np.zeros(4, np.int32)
    for name in ("k0", "k1", "count"):
        mod.get_function(name).launch((1, 1, 1), (4, 1, 1), [ptr(out)])
    np.testing.assert_array_equal(out, 2 * (np.arange(4) + 11))


def test_fiber_stacks_are_shared_by_modules_not_kept_by_each(monkeypatch):
    """Every module's executor kept its largest block's fiber stacks (two memory mappings each) on every
    OS thread for the life of the process: a test process that loaded a few hundred modules with
    1024-thread blocks hit the kernel's 65530-mapping limit and aborted in mmap. Stacks now come from
    the process-wide runtime's cache for a launch and go back after it: more modules, no more mappings."""
    monkeypatch.setenv("ACLNN_PY_EMU_THREADS", "1")   # one executor per module: the count is exact

    def maps():
        with open("/proc/self/maps") as f:
            return sum(1 for _ in f)

    def launch(i):
        mod = compile_module(textwrap.dedent(f"""
            extern "C" __global__ void k{i}(int* out) {{
                __shared__ int s[1024];
                s[threadIdx.x] = threadIdx.x;
                __syncthreads();
                out[threadIdx.x] = s[1023 - threadIdx.x] + {i};
            }}"""), filename=f"stacks{i}.cu")
        fn = mod.get_function(f"k{i}")
        assert fn.uses_sync
        out = np.zeros(1024, np.int32)
        fn.launch((2, 1, 1), (1024, 1, 1), [ptr(out)])
        np.testing.assert_array_equal(out, np.arange(1023, -1, -1) + i)

    launch(0)
    before = maps()
    for i in range(1, 5):
        launch(i)
    assert maps() - before < 4 * 60, "each module still maps its own 2 x 1024 stacks"


def test_integer_and_double_atomics(conf):
    u = np.zeros(5, np.uint32)
    s = np.array([-1, 0, 0], np.int32)
    ull = np.zeros(1, np.uint64)
    d = np.zeros(1, np.float64)
    conf.get_function("atomics_misc").launch((1, 1, 1), (128, 1, 1), [ptr(u), ptr(s), ptr(ull), ptr(d), i32(100)])
    assert u[0] == 100 % 10  # atomicInc wraps at 9
    assert s[0] == 99 and s[1] == -99 and s[2] == -200
    assert ull[0] == 300 and d[0] == 50.0
    assert u[1] == 0xFFFFFFFF
    assert u[2] == 0  # atomicDec from 0 with limit 4: 4,3,2,1,0,4,...
    assert u[3] == u[4] and 1 <= u[3] <= 100


def test_plain_loop_kernel(conf):
    fn = conf.get_function("saxpy_plain")
    assert fn.uses_sync is False
    assert fn.param_kinds == ("f", "p", "p", "i")
    n = 100_003
    rng = np.random.default_rng(15)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    y0 = y.copy()
    fn.launch((50, 1, 1), (256, 1, 1), [f32(2.5), ptr(x), ptr(y), i32(n)])
    ref = np.float32(2.5) * x + (y0 * y0 + np.float32(1)) - np.float32(1) - y0 * y0
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)


def test_3d_grid_and_block(conf):
    g, b = (2, 3, 2), (4, 2, 3)
    nb, nt = 12, 24
    out = np.full(nb * nt, -1, np.int32)
    conf.get_function("index_3d").launch(g, b, [ptr(out)])
    exp = (np.arange(nb)[:, None] * 10000 + np.arange(nt)[None, :]).ravel()
    np.testing.assert_array_equal(out, exp)


def test_struct_parameter(conf):
    fn = conf.get_function("affine")
    assert fn.param_sizes == (12, 8, 8) and fn.param_kinds == ("o", "p", "p")
    n = 300
    p = np.array([(2.0, 0.5, n)], dtype=[("scale", "<f4"), ("shift", "<f4"), ("n", "<i4")])
    x = np.arange(512, dtype=np.float32)
    y = np.zeros(512, np.float32)
    fn.launch((2, 1, 1), (256, 1, 1), [p.tobytes(), ptr(x), ptr(y)])
    np.testing.assert_array_equal(y[:n], x[:n] * 2 + 0.5)
    assert np.all(y[n:] == 0)


def test_math_functions(conf):
    x = np.linspace(-3, 3, 257).astype(np.float32)
    n = x.size
    out = np.zeros(16 * n, np.float32)
    conf.get_function("math_funcs").launch((2, 1, 1), (256, 1, 1), [ptr(x), ptr(out), i32(n)])
    o = out.reshape(n, 16)
    x64 = x.astype(np.float64)
    close = dict(rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(o[:, 0], np.exp(x64), **close)
    np.testing.assert_allclose(o[:, 1], np.log(np.abs(x64) + 1), **close)
    np.testing.assert_allclose(o[:, 2], np.tanh(x64), **close)
    np.testing.assert_allclose(o[:, 3], 1 / np.sqrt(np.abs(x64) + 1), **close)
    import math

    np.testing.assert_allclose(o[:, 4], [math.erf(v) for v in x64], **close)
    np.testing.assert_allclose(o[:, 5], np.exp(x64), **close)
    np.testing.assert_allclose(o[:, 6], x64 / 3, **close)
    np.testing.assert_array_equal(o[:, 7], np.clip(x, 0, 1))
    np.testing.assert_array_equal(o[:, 8], np.rint(x * np.float32(10)))
    np.testing.assert_array_equal(o[:, 9], [bin(int(v)).count("1") for v in x.view(np.uint32)])
    iv = (np.abs(x) * np.float32(1000)).astype(np.int32)
    np.testing.assert_array_equal(o[:, 10], [32 - int(v).bit_length() for v in iv])
    np.testing.assert_array_equal(o[:, 11], np.maximum(x, 0.25) + 3 + 2)
    np.testing.assert_array_equal(o[:, 12], x)
    np.testing.assert_array_equal(o[:, 13], [(int(v) & -int(v)).bit_length() for v in iv])
    np.testing.assert_array_equal(o[:, 14], np.copysign(1, x) * np.floor(np.abs(x) * 4))
    np.testing.assert_array_equal(o[:, 15], [int(f"{i:032b}"[::-1], 2) >> 24 for i in range(n)])


def test_concurrent_launches_from_python_threads(conf):
    fn = conf.get_function("histogram")
    rng = np.random.default_rng(16)
    n = 100_000
    bins = rng.integers(0, 32, n).astype(np.int32)
    w = np.ones(n, np.float32)
    ref = np.bincount(bins, minlength=32).astype(np.float32)
    results = [np.zeros(32, np.float32) for _ in range(4)]

    def work(h):
        for _ in range(3):
            h[:] = 0
            fn.launch((64, 1, 1), (128, 1, 1), [ptr(bins), ptr(w), ptr(h), i32(n)])

    threads = [threading.Thread(target=work, args=(h,)) for h in results]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for h in results:
        np.testing.assert_array_equal(h, ref)


def test_launch_releases_the_gil(conf):
    fn = conf.get_function("block_sum_t<float, 1024>")
    nb = 256
    x = np.ones(nb * 1024, np.float32)
    out = np.zeros(nb, np.float32)
    t = threading.Thread(target=fn.launch, args=((nb, 1, 1), (1024, 1, 1), [ptr(x), ptr(out)]))
    ticks = 0
    t.start()
    while t.is_alive():
        ticks += 1
        time.sleep(0.0005)
    t.join()
    assert np.all(out == 1024)
    assert ticks >= 3  # the main thread kept running during the (tens of ms long) launch


def test_assert_in_kernel_reports_an_error(conf, errs):
    x = np.arange(128, dtype=np.int32) + 100
    conf.get_function("checked").launch((2, 1, 1), (64, 1, 1), [ptr(x), i32(128)])
    x[77] = 7
    expect_kernel_error(errs.get_function("failing_assert"), (4, 1, 1), (32, 1, 1), [ptr(x)], kernel="failing_assert",
                        block_idx="(2,0,0)", match=r"assertion .* failed at errors\.cu:\d+ in thread \(13,0,0\)")


# ------------------------------------------------------------------------------------------------
# errors: strictness, never a hang
# ------------------------------------------------------------------------------------------------
def test_mismatched_barrier_call_sites_before_sm70(errs60):
    x = np.zeros(64, np.float32)
    expect_kernel_error(errs60.get_function("bad_barrier"), (2, 1, 1), (64, 1, 1), [ptr(x)], kernel="bad_barrier",
                        match=r"__syncthreads reached from different call sites \(errors\.cu:\d+ vs errors\.cu:\d+\)"
                              r".*before sm_70, -arch=sm_60")


def test_barriers_at_different_call_sites_count_arrivals_from_sm70(errs):
    """From Volta on a block barrier counts arriving threads whichever __syncthreads they run (siboehm's
    SGEMM kernel 11 splits its warps between two): the same kernel runs, and the barrier holds."""
    src = r"""
    extern "C" __global__ void split_barrier(const float* x, float* out) {
        __shared__ float s[256];
        const int t = threadIdx.x;
        if (t < 128) { s[t] = 2 * x[t]; __syncthreads(); out[t] = s[255 - t]; }
        else         { s[t] = 3 * x[t]; __syncthreads(); out[t] = s[255 - t]; }
    }
    """
    k = compile_module(src, options=("-std=c++17",)).get_function("split_barrier")
    x = np.arange(256, dtype=np.float32)
    out = np.zeros(256, np.float32)
    k.launch((3, 1, 1), (256, 1, 1), [ptr(x), ptr(out)])
    want = np.where(np.arange(256) < 128, 2, 3) * x
    np.testing.assert_array_equal(out, want[::-1])
    y = np.zeros(64, np.float32)
    errs.get_function("bad_barrier").launch((2, 1, 1), (64, 1, 1), [ptr(y)])    # sm_80: no error
    np.testing.assert_array_equal(y, np.where(np.arange(64) < 16, 1, 2))


def test_different_barrier_kinds_never_combine(errs):
    src = r"""
    extern "C" __global__ void kinds(int* out) {
        if (threadIdx.x < 32) out[threadIdx.x] = __syncthreads_count(1);
        else { __syncthreads(); out[threadIdx.x] = 0; }
    }
    """
    out = np.zeros(64, np.int32)
    k = compile_module(src, options=("-std=c++17",)).get_function("kinds")
    expect_kernel_error(k, (1, 1, 1), (64, 1, 1), [ptr(out)], kernel="kinds",
                        match=r"different block barriers meet: __syncthreads(_count)? \(")


def test_the_lowest_failing_block_is_reported(errs60):
    """Every block fails; blocks run in parallel on the pool's threads, and whichever records first,
    the report names block (0,0,0) on every run."""
    x = np.zeros(64, np.float32)
    for _ in range(20):
        expect_kernel_error(errs60.get_function("bad_barrier"), (64, 1, 1), (64, 1, 1), [ptr(x)], kernel="bad_barrier")


def test_shuffle_mask_names_exited_lane(errs):
    x = np.zeros(64, np.float32)
    expect_kernel_error(errs.get_function("bad_shuffle"), (1, 1, 1), (64, 1, 1), [ptr(x), ptr(x)], kernel="bad_shuffle",
                        match=r"exited")


def test_caller_not_in_mask(errs):
    out = np.zeros(32, np.int32)
    expect_kernel_error(errs.get_function("not_in_mask"), (1, 1, 1), (32, 1, 1), [ptr(out)], kernel="not_in_mask",
                        match=r"not in its own mask 0x0000ffff")


def test_lanes_at_different_collectives(errs):
    out = np.zeros(32, np.int32)
    expect_kernel_error(errs.get_function("mixed_collectives"), (1, 1, 1), (32, 1, 1), [ptr(out)],
                        kernel="mixed_collectives", match=r"different warp collectives")


def test_deadlock_is_reported(errs):
    x = np.zeros(64, np.float32)
    expect_kernel_error(errs.get_function("deadlock"), (1, 1, 1), (64, 1, 1), [ptr(x)], kernel="deadlock",
                        match=r"deadlock")


def test_barrier_in_loop_with_spinning_thread(errs):
    flag = np.zeros(1, np.int32)
    expect_kernel_error(errs.get_function("loop_barrier_spin"), (1, 1, 1), (64, 1, 1), [ptr(flag), i32(4)],
                        kernel="loop_barrier_spin", match=r"livelock")


def test_spinning_collective_is_reported(errs):
    flag = np.zeros(1, np.int32)
    expect_kernel_error(errs.get_function("spin_forever"), (1, 1, 1), (64, 1, 1), [ptr(flag)], kernel="spin_forever",
                        match=r"livelock")
    flag[0] = 1  # with the flag set the same kernel is fine
    errs.get_function("spin_forever").launch((2, 1, 1), (64, 1, 1), [ptr(flag)])


def test_barrier_missed_by_static_scan_is_reported(errs, monkeypatch):
    fn = errs.get_function("hidden_barrier")
    assert not fn.uses_sync  # reached through a function pointer: invisible to the scan
    out = np.zeros(64, np.float32)
    expect_kernel_error(fn, (1, 1, 1), (64, 1, 1), [ptr(out)], kernel="hidden_barrier",
                        match=r"__syncthreads \(errors\.cu:\d+\) reached in plain-loop mode")
    monkeypatch.setenv("ACLNN_PY_EMU_FORCE_FIBERS", "1")
    fn.launch((1, 1, 1), (64, 1, 1), [ptr(out)])
    np.testing.assert_array_equal(out, np.arange(63, -1, -1, dtype=np.float32))


def test_module_still_works_after_errors(conf, errs60):
    x = np.zeros(64, np.float32)
    for _ in range(3):
        with pytest.raises(KernelError):
            errs60.get_function("bad_barrier").launch((1, 1, 1), (64, 1, 1), [ptr(x)])
    test_block_reduce_shared_memory(conf)
    test_warp_shuffle_reductions(conf)


def test_argument_checks(conf):
    fn = conf.get_function("axpb<float>")
    x = np.zeros(4, np.float32)
    good = [ptr(x), ptr(x), f32(1), f32(0), i32(4)]
    with pytest.raises(KernelError, match=r"kernel 'axpb<float>' argument 2: 8 bytes given for a 4-byte parameter"):
        fn.launch((1, 1, 1), (32, 1, 1), [ptr(x), ptr(x), np.float64(1).tobytes(), f32(0), i32(4)])
    with pytest.raises(KernelError, match=r"kernel 'axpb<float>' takes 5 argument\(s\), 4 given"):
        fn.launch((1, 1, 1), (32, 1, 1), good[:4])
    for grid, block in [((1, 1, 1), (1025, 1, 1)), ((1, 1, 1), (32, 32, 2)), ((0, 1, 1), (32, 1, 1)),
                        ((1, 65536, 1), (32, 1, 1)), ((1, 1, 1), (1, 1, 65)), ((1, 1, 1), (0, 1, 1))]:
        with pytest.raises(KernelError, match=r"kernel 'axpb<float>'"):
            fn.launch(grid, block, good)
    with pytest.raises(KernelError, match="shared memory"):
        fn.launch((1, 1, 1), (32, 1, 1), good, shared_mem=1 << 20)
    fn.launch((1, 1, 1), (32, 1, 1), good)  # still fine


def test_get_function_lookup(conf):
    assert conf.get_function("axpb<__half>") is conf.get_function("axpb<__half>")
    assert conf.get_function("block_sum_t<float,128>").name == "block_sum_t<float, 128>"
    with pytest.raises(LookupError, match="no_such_kernel"):
        conf.get_function("no_such_kernel")
    with pytest.raises(LookupError, match=r"axpb<double>"):
        conf.get_function("axpb<double>")


# ------------------------------------------------------------------------------------------------
# compilation: options, caches, unsupported constructs
# ------------------------------------------------------------------------------------------------
def test_api_surface_compiles_and_runs():
    mod = load("api_surface.cu")
    x = np.linspace(-2, 2, 128).astype(np.float32)
    out = np.zeros(128, np.float32)
    mod.get_function("math_surface").launch((1, 1, 1), (128, 1, 1), [ptr(x), ptr(out)])
    assert np.all(out == 1.0)
    h = np.linspace(-2, 2, 64).astype(np.float16)
    b = (np.linspace(-2, 2, 64).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    out = np.zeros(72, np.float32)
    u = np.zeros(20, np.uint32)
    mod.get_function("half_surface").launch((1, 1, 1), (64, 1, 1), [ptr(h), ptr(b), ptr(out), ptr(u)])
    assert np.all(out[:64] == 1.0)
    assert out[64:65].view(np.float16)[0] == 64 and out[65:66].view(np.uint16)[0] == 0x4280  # 64 in bf16
    assert list(out[66:67].view(np.float16)) == [64, 64] and out[68:70].view(np.float64)[0] == 64
    assert list(u[:17]) == [1, 5, 0, 0, 7, 0, 0xFFFFFFF9, 0xFFFFFFFF, 64, 64, FULL, 0x55555555, 0, 32, 31, FULL, 65]
    for cname, dt in lowp_types() + [("double", np.float64)]:
        a = np.linspace(0.5, 2, 32).astype(dt)
        o = np.zeros(32, dt)
        fo = np.zeros(32, np.float32)
        mod.get_function(f"generic_ops<{cname}>").launch((1, 1, 1), (32, 1, 1), [ptr(a), ptr(o), ptr(fo), i32(32)])
        v = a.astype(np.float64)
        np.testing.assert_allclose(fo, (v * v + v - 1 / (v + 2)) + v - 0.5, rtol=1e-2 if dt != np.float32 and dt != np.float64 else 1e-6)


def test_std_headers_after_the_emulator_header():
    src = textwrap.dedent("""
        #include <memory>
        #include <functional>
        #include <array>
        #include <bit>
        #include <assert.h>
        extern "C" __global__ void k(int* p) {
            std::array<int, 2> a{1, 2};
            p[threadIdx.x] = a[1] + std::popcount(4u);
            assert(p[threadIdx.x] == 3);
        }
    """)
    mod = compile_module(src)
    out = np.zeros(4, np.int32)
    mod.get_function("k").launch((1, 1, 1), (4, 1, 1), [ptr(out)])
    assert np.all(out == 3)


def test_compile_options_include_and_define(tmp_path):
    inc = tmp_path / "inc"
    (inc / "sub").mkdir(parents=True)
    (inc / "sub" / "helpers.cuh").write_text('#pragma once\n#include "consts.cuh"\n__device__ int twice(int v) { return 2 * v + OFFSET; }\n')
    (inc / "sub" / "consts.cuh").write_text("#pragma once\n#define OFFSET 1\n")
    (inc / "extra.cuh").write_text('extern __shared__ int helper_smem[];\n')
    src = textwrap.dedent("""
        #include <cuda_fp16.h>
        #include "sub/helpers.cuh"
        #include "extra.cuh"
        extern "C" __global__ void k(int* out) {
            helper_smem[threadIdx.x] = twice(threadIdx.x) * SCALE;
            __syncthreads();
            out[threadIdx.x] = helper_smem[31 - threadIdx.x];
        }
    """)
    mod = compile_module(src, options=("-std=c++17", f"-I{inc}", "-D", "SCALE=3", "-ftz=true", "--use_fast_math",
                                       "-arch=sm_90"))
    out = np.zeros(32, np.int32)
    mod.get_function("k").launch((1, 1, 1), (32, 1, 1), [ptr(out)], shared_mem=128)
    np.testing.assert_array_equal(out, (2 * np.arange(31, -1, -1) + 1) * 3)
    # an edited header means a different module
    (inc / "sub" / "consts.cuh").write_text("#pragma once\n#define OFFSET 5\n")
    mod2 = compile_module(src + "\n", options=("-std=c++17", f"-I {inc}".split()[0], str(inc), "-DSCALE=3"))
    mod2.get_function("k").launch((1, 1, 1), (32, 1, 1), [ptr(out)], shared_mem=128)
    np.testing.assert_array_equal(out, (2 * np.arange(31, -1, -1) + 5) * 3)


def test_in_process_cache_returns_same_module():
    src = 'extern "C" __global__ void same(int* p) { p[threadIdx.x] = 1; }\n'
    assert compile_module(src) is compile_module(src)
    assert compile_module(src, options=("-DX=1",)) is not compile_module(src)


def test_disk_cache_hit_runs_no_compiler(tmp_path):
    src = 'extern "C" __global__ void cached_kernel(int* p) { p[threadIdx.x] = threadIdx.x * 7; }\n'
    script = textwrap.dedent(f"""
        import subprocess, numpy as np
        import aclnn_py.emulator.compiler as c
        calls = []
        real = subprocess.run
        def spy(*a, **k):
            calls.append(a[0])
            return real(*a, **k)
        c.subprocess.run = spy
        mod = c.compile_module({src!r})
        out = np.zeros(8, np.int32)
        mod.get_function("cached_kernel").launch((1, 1, 1), (8, 1, 1), [np.uint64(out.ctypes.data).tobytes()])
        assert list(out) == [7 * i for i in range(8)], out
        print("CALLS", len(calls))
    """)
    env = dict(os.environ, ACLNN_PY_CACHE_DIR=str(tmp_path / "cache"))
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    # preprocess + compile + nm (module globals for get_global) + the once-per-cache runtime library
    assert "CALLS 4" in runs[0].stdout
    assert "CALLS 0" in runs[1].stdout  # cache hit: no g++ at all
    assert list((tmp_path / "cache" / "emulator").glob("*.so"))


def test_compile_errors_carry_the_log():
    with pytest.raises(EmulatorError, match=r"not_declared_anywhere"):
        compile_module('extern "C" __global__ void k(int* p) { p[0] = not_declared_anywhere; }\n', filename="broken.cu")


@pytest.mark.parametrize("src,match", [
    ('extern "C" __global__ void k(int* p) { int v; asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, '
     '[%1];" : "=r"(v) : "r"(0)); p[0] = v; }', "inline PTX instruction 'ldmatrix"),
    ('#include <cub/device/device_reduce.cuh>\nextern "C" __global__ void k(int* p) { p[0] = 1; }', "CUB"),
    ('#include <cupy/complex.cuh>\nextern "C" __global__ void k(int* p) { p[0] = 1; }', "install CuPy"),
    ('#include <cuda_pipeline.h>\nextern "C" __global__ void k(int* p) { p[0] = 1; }', "pipelines"),
    ('extern "C" __global__ void k(int* p) { p[0] = __shfl(p[0], 1); }', "__shfl"),
])
def test_unsupported_constructs_fail_to_compile(src, match):
    import importlib.util
    if match == "install CuPy" and importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed: its headers are found (tests/test_emulator_realism.py runs them)")
    with pytest.raises(EmulatorError, match=match):
        compile_module(src + "\n")


def test_fork_safety(conf):
    """A child forked after the block pool has started can still launch multi-block kernels."""
    fn = conf.get_function("histogram")
    bins = np.arange(10000, dtype=np.int32) % 16
    w = np.ones(10000, np.float32)
    h = np.zeros(16, np.float32)
    fn.launch((32, 1, 1), (128, 1, 1), [ptr(bins), ptr(w), ptr(h), i32(10000)])  # pool threads exist now
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        code = 1
        try:
            h[:] = 0
            fn.launch((32, 1, 1), (128, 1, 1), [ptr(bins), ptr(w), ptr(h), i32(10000)])
            code = 0 if np.all(h == 625) else 2
        finally:
            os._exit(code)
    deadline = time.time() + 30
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.time() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("forked child hung")
        time.sleep(0.01)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_compiler_info_and_cache_dir(monkeypatch, tmp_path):
    assert "g++" in compiler_info() or "GCC" in compiler_info()
    monkeypatch.setenv("ACLNN_PY_CACHE_DIR", str(tmp_path))
    assert cache_dir() == tmp_path
    monkeypatch.delenv("ACLNN_PY_CACHE_DIR")
    assert cache_dir() == Path.home() / ".cache" / "aclnn_py"
