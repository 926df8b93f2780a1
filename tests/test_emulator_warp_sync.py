"""Warp-synchronous code through plain (non-volatile) shared memory in straight-line code, with no
__syncwarp: the unrolled `if (tid < 32) { s[tid] += s[tid + 32]; ... }` tail (float / int, 1-D and
2-D blocks, in a helper, on a volatile __shared__ array), a Parboil histo_prescan-like mean / standard
deviation tail, `s[lane] = v; w = s[lane ^ 1];`, a one-warp scan reading lower lanes, and loads of
slots that a lower thread overwrites a few statements later (PMPP's merge_tiled_kernel without its
second __syncthreads). A converged warp runs each statement for all its lanes before the next; the
emulator ran one lane's whole chain before the next lane began and gave other numbers, silently (every
kernel test here failed so before). The loader now puts statement convergence points there
(compiler._rewrite_warp_statements, cuda_emu.h stmt_tick). Every kernel is checked against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import aclnn_py as A
from aclnn_py import acl
from aclnn_py.emulator import compile_module
from aclnn_py.emulator import compiler as C

pytestmark = pytest.mark.skipif(
    acl._state.state.initialized and acl._state.state.backend.name != "host", reason="emulator behaviour")

TAILS = r"""
// the classic unrolled last-warp reduction, written without volatile and without __syncwarp
template <class T, int BS>
__global__ void tree_tail(const T* x, T* out, int n) {
    __shared__ T s[BS];
    const unsigned tid = threadIdx.x;
    const unsigned i = blockIdx.x * (BS * 2) + tid;
    T v = 0;
    if (i < n) v = x[i];
    if (i + BS < n) v += x[i + BS];
    s[tid] = v;
    __syncthreads();
    for (unsigned k = BS / 2; k > 32; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k];
        __syncthreads();
    }
    if (tid < 32) {
        s[tid] += s[tid + 32];
        s[tid] += s[tid + 16];
        s[tid] += s[tid + 8];
        s[tid] += s[tid + 4];
        s[tid] += s[tid + 2];
        s[tid] += s[tid + 1];
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}

// the same tail in a helper that takes the shared array as a plain pointer, the blockSize guards
// of the CUDA samples' reduce4 around each step
template <int BS>
__device__ void warp_reduce(int* sdata, unsigned tid) {
    if (BS >= 64) sdata[tid] += sdata[tid + 32];
    if (BS >= 32) sdata[tid] += sdata[tid + 16];
    if (BS >= 16) sdata[tid] += sdata[tid + 8];
    if (BS >= 8) sdata[tid] += sdata[tid + 4];
    if (BS >= 4) sdata[tid] += sdata[tid + 2];
    if (BS >= 2) sdata[tid] += sdata[tid + 1];
}
template <int BS>
__global__ void helper_tail(const int* x, int* out) {
    extern __shared__ int sdata[];
    const unsigned tid = threadIdx.x;
    sdata[tid] = x[blockIdx.x * BS + tid];
    __syncthreads();
    for (unsigned k = BS / 2; k > 32; k >>= 1) {
        if (tid < k) sdata[tid] += sdata[tid + k];
        __syncthreads();
    }
    if (tid < 32) warp_reduce<BS>(sdata, tid);
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

// a 2-D block (32 x 8): each row is a warp and reduces its own 32 values, `tx < 16` guards the tail
extern "C" __global__ void row_tails(const float* x, float* out) {
    __shared__ float s[8][32];
    const int tx = threadIdx.x, ty = threadIdx.y;
    s[ty][tx] = x[(blockIdx.x * 8 + ty) * 32 + tx];
    if (tx < 16) {
        s[ty][tx] += s[ty][tx + 16];
        s[ty][tx] += s[ty][tx + 8];
        s[ty][tx] += s[ty][tx + 4];
        s[ty][tx] += s[ty][tx + 2];
        s[ty][tx] += s[ty][tx + 1];
    }
    if (tx == 0) out[blockIdx.x * 8 + ty] = s[ty][0];
}

// a 2-D block (16 x 16) reduced over its flattened index: the last warp is rows 0 and 1
extern "C" __global__ void flat_tail(const float* x, float* out) {
    __shared__ float s[256];
    const unsigned tid = threadIdx.y * blockDim.x + threadIdx.x;
    s[tid] = x[blockIdx.x * 256 + tid];
    __syncthreads();
    for (unsigned k = 128; k > 32; k >>= 1) {
        if (tid < k) s[tid] = s[tid] + s[tid + k];
        __syncthreads();
    }
    if (tid < warpSize) {
        s[tid] = s[tid] + s[tid + 32];
        s[tid] = s[tid] + s[tid + 16];
        s[tid] = s[tid] + s[tid + 8];
        s[tid] = s[tid] + s[tid + 4];
        s[tid] = s[tid] + s[tid + 2];
        s[tid] = s[tid] + s[tid + 1];
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
"""

VOLATILE_ARRAY = r"""
// the tail through a shared array declared volatile (the loader's volatile rewrite covers pointers and
// references: an array's elements are plain volatile lvalues, run lane after lane like any other)
extern "C" __global__ void volatile_array_tail(const float* x, float* out, int n) {
    volatile __shared__ float s[128];
    const int tid = threadIdx.x, i = blockIdx.x * 256 + tid;
    s[tid] = (i < n ? x[i] : 0.0f) + (i + 128 < n ? x[i + 128] : 0.0f);
    __syncthreads();
    if (tid < 64) s[tid] += s[tid + 64];
    __syncthreads();
    if (tid < 32) {
        s[tid] += s[tid + 32];
        s[tid] += s[tid + 16];
        s[tid] += s[tid + 8];
        s[tid] += s[tid + 4];
        s[tid] += s[tid + 2];
        s[tid] += s[tid + 1];
    }
    if (tid == 0) atomicAdd(out, s[0]);
}
"""

TAIL_NAMES = [f"tree_tail<{t}, {bs}>" for t in ("float", "int") for bs in (64, 128, 256)] + \
             [f"helper_tail<{bs}>" for bs in (64, 128, 256)]


@pytest.fixture(scope="module")
def tails():
    return A.RawModule(code=TAILS, name_expressions=TAIL_NAMES)


@pytest.mark.parametrize("grid", [1, 3, 8])
@pytest.mark.parametrize("bs", [64, 128, 256])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_unrolled_tree_tail_without_volatile(tails, d, dtype, bs, grid):
    """Lane after lane, lane 0 summed its slots before lanes 16..31 had added theirs."""
    rng = np.random.default_rng(bs * 10 + grid)
    n = grid * 2 * bs - 5            # the last block reads a partial second half
    x = rng.integers(-1000, 1000, n).astype(dtype)   # integers: float sums are exact too
    po = d.zeros(grid, dtype)
    name = f"tree_tail<{'float' if dtype == np.float32 else 'int'}, {bs}>"
    tails.get_function(name)((grid,), (bs,), (d.up(x), po, np.int32(n)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    want = np.zeros(grid * 2 * bs, np.int64)
    want[:n] = x
    np.testing.assert_array_equal(d.down(po, grid, dtype), want.reshape(grid, 2 * bs).sum(1).astype(dtype))


@pytest.mark.parametrize("bs", [64, 128, 256])
def test_unrolled_tail_in_a_helper_through_a_plain_pointer(tails, d, bs):
    grid = 5
    x = np.random.default_rng(bs).integers(-99, 99, grid * bs).astype(np.int32)
    po = d.zeros(grid, np.int32)
    tails.get_function(f"helper_tail<{bs}>")((grid,), (bs,), (d.up(x), po), shared_mem=bs * 4)
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(po, grid, np.int32), x.reshape(grid, bs).sum(1))


def test_tail_through_a_volatile_shared_array(d):
    mod = A.RawModule(code=VOLATILE_ARRAY)
    x = np.random.default_rng(9).integers(-50, 50, 7 * 256 - 3).astype(np.float32)
    po = d.zeros(1, np.float32)
    mod.get_function("volatile_array_tail")((7,), (128,), (d.up(x), po, np.int32(x.size)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    assert d.down(po, 1, np.float32)[0] == x.sum()


@pytest.mark.parametrize("grid", [1, 4])
def test_tails_in_two_dimensional_blocks(tails, d, grid):
    rng = np.random.default_rng(40 + grid)
    x = rng.integers(-50, 50, grid * 256).astype(np.float32)
    po = d.zeros(grid * 8, np.float32)
    tails.get_function("row_tails")((grid,), (32, 8), (d.up(x), po))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(po, grid * 8, np.float32), x.reshape(grid * 8, 32).sum(1))
    po = d.zeros(grid, np.float32)
    tails.get_function("flat_tail")((grid,), (16, 16), (d.up(x), po))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(po, grid, np.float32), x.reshape(grid, 256).sum(1))


EXCHANGE = r"""
// lanes store, then read a neighbour's slot: no loop, no collective, no barrier between
extern "C" __global__ void xor_exchange(const float* x, float* out) {
    __shared__ float s[128];
    const int t = threadIdx.x, lane = t & 31;
    const float v = x[blockIdx.x * blockDim.x + t];
    s[t] = v;
    const float w = s[(t & ~31) | (lane ^ 1)];
    out[blockIdx.x * blockDim.x + t] = 3.0f * w + v;
}
// through a per-warp row pointer: the lane that stores is higher than the one that reads, and lower
extern "C" __global__ void mirror(const int* x, int* out) {
    __shared__ int buf[4 * 32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int* row = buf + warp * 32;
    row[lane] = x[blockIdx.x * blockDim.x + threadIdx.x];
    int a = row[31 - lane];
    int b = row[(lane + 1) % 32];
    out[blockIdx.x * blockDim.x + threadIdx.x] = a * 100 + b;
}
// a Hillis-Steele scan over one warp without volatile: `s[t] += s[t - k]` reads a LOWER lane's slot,
// which that lane overwrites in the same statement (a converged warp loads first)
extern "C" __global__ void warp_scan(const int* x, int* out) {
    __shared__ int s[64];
    const int t = threadIdx.x, lane = t & 31;
    s[t] = x[blockIdx.x * blockDim.x + t];
    if (lane >= 1) s[t] += s[t - 1];
    if (lane >= 2) s[t] += s[t - 2];
    if (lane >= 4) s[t] += s[t - 4];
    if (lane >= 8) s[t] += s[t - 8];
    if (lane >= 16) s[t] += s[t - 16];
    out[blockIdx.x * blockDim.x + t] = s[t];
}
// every thread loads its lower neighbour's slot, then stores its own: on a GPU the loads come first;
// lane after lane, thread t - 1 had already overwritten the slot thread t loads
extern "C" __global__ void shift_up(const int* x, int* out) {
    __shared__ int s[64];
    const int t = threadIdx.x;
    s[t] = x[blockIdx.x * blockDim.x + t];
    __syncthreads();
    const int left = t > 0 ? s[t - 1] : -1;
    s[t] = left;
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = s[t];
}
// the same scan as a loop (each pass: all loads, then all stores, then the next pass)
extern "C" __global__ void warp_scan_loop(const int* x, int* out) {
    __shared__ int s[64];
    const int t = threadIdx.x, lane = t & 31;
    s[t] = x[blockIdx.x * blockDim.x + t];
    for (int k = 1; k < 32; k *= 2)
        if (lane >= k) s[t] = s[t] + s[t - k];
    out[blockIdx.x * blockDim.x + t] = s[t];
}
"""


@pytest.mark.parametrize("grid", [1, 3])
def test_store_then_read_a_neighbours_slot(d, grid):
    mod = A.RawModule(code=EXCHANGE)
    rng = np.random.default_rng(7 + grid)
    x = rng.integers(-100, 100, grid * 128).astype(np.float32)
    po = d.zeros(x.size, np.float32)
    mod.get_function("xor_exchange")((grid,), (128,), (d.up(x), po))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    idx = np.arange(x.size)
    np.testing.assert_array_equal(d.down(po, x.size, np.float32), 3 * x[idx ^ 1] + x)

    xi = rng.integers(0, 100, grid * 128).astype(np.int32)
    po = d.zeros(xi.size, np.int32)
    mod.get_function("mirror")((grid,), (128,), (d.up(xi), po))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    r = xi.reshape(-1, 32)
    want = r[:, ::-1] * 100 + np.roll(r, -1, axis=1)
    np.testing.assert_array_equal(d.down(po, xi.size, np.int32), want.ravel())


def test_load_a_slot_a_lower_thread_then_overwrites(d):
    mod = A.RawModule(code=EXCHANGE)
    x = np.random.default_rng(4).integers(0, 1000, 2 * 64).astype(np.int32)
    po = d.zeros(x.size, np.int32)
    mod.get_function("shift_up")((2,), (64,), (d.up(x), po))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    want = np.concatenate([[-1], x[:63], [-1], x[64:127]])
    np.testing.assert_array_equal(d.down(po, x.size, np.int32), want)


@pytest.mark.parametrize("kernel", ["warp_scan", "warp_scan_loop"])
def test_warp_scan_reading_lower_lanes(d, kernel):
    mod = A.RawModule(code=EXCHANGE)
    x = np.random.default_rng(3).integers(-20, 20, 2 * 64).astype(np.int32)
    po = d.zeros(x.size, np.int32)
    mod.get_function(kernel)((2,), (64,), (d.up(x), po))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(po, x.size, np.int32), np.cumsum(x.reshape(-1, 32), axis=1).ravel())


PRESCAN = r"""
// shaped like Parboil histo's histo_prescan_kernel: per-thread mean and standard deviation of a sample,
// a tree over shared Avg[] / StdDev[] with a barrier per step down to 32, then straight-line steps of
// 16, 8, 4, 2 with no barrier, and thread 0 combines slots 0 and 1
#define THREADS 256
#define STEP(k) if (threadIdx.x < (k)) { Avg[threadIdx.x] += Avg[threadIdx.x + (k)]; \
                                         Dev[threadIdx.x] += Dev[threadIdx.x + (k)]; }
extern "C" __global__ void mean_dev_prescan(const unsigned* in, int per_block, float* out) {
    __shared__ float Avg[THREADS];
    __shared__ float Dev[THREADS];
    const int first = blockIdx.x * per_block + threadIdx.x, last = (blockIdx.x + 1) * per_block;
    float mean = 0.0f;
    int count = 0;
    for (int a = first; a < last; a += blockDim.x) { mean += in[a]; ++count; }
    mean /= count;
    Avg[threadIdx.x] = mean;
    float var = 0.0f;
    for (int a = first; a < last; a += blockDim.x) var += (in[a] - mean) * (in[a] - mean);
    var /= count;
    Dev[threadIdx.x] = sqrtf(var);
    for (int k = THREADS / 2; k >= 32; k >>= 1) {
        __syncthreads();
        STEP(k)
    }
    STEP(16)
    STEP(8)
    STEP(4)
    STEP(2)
    if (threadIdx.x == 0) {
        out[2 * blockIdx.x] = (Avg[0] + Avg[1]) / THREADS;
        out[2 * blockIdx.x + 1] = (Dev[0] + Dev[1]) / THREADS;
    }
}
"""


def test_histo_prescan_like_mean_and_deviation_tail(d):
    """Parboil histo_prescan gave about 0.11x the right mean here: each of the first 16 threads summed
    its slots before the threads above it had added theirs."""
    mod = A.RawModule(code=PRESCAN)
    grid, threads, per = 4, 256, 256 * 6
    x = np.random.default_rng(11).integers(0, 4096, grid * per).astype(np.uint32)
    po = d.zeros(2 * grid, np.float32)
    mod.get_function("mean_dev_prescan")((grid,), (threads,), (d.up(x), np.int32(per), po))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    samples = x.reshape(grid, per // threads, threads).astype(np.float64)   # [block, pass, thread]
    mean = samples.mean(1)
    dev = np.sqrt(((samples - mean[:, None, :]) ** 2).mean(1))
    got = d.down(po, 2 * grid, np.float32).reshape(grid, 2)
    np.testing.assert_allclose(got[:, 0], mean.mean(1), rtol=1e-5)
    np.testing.assert_allclose(got[:, 1], dev.mean(1), rtol=1e-4)


NOT_NEEDED = r"""
// a similar `if (tid < 32)` region in which every lane only touches its own slot: it needs no
// convergence point (and gets none: it keeps running as a plain loop, no fibers)
extern "C" __global__ void own_slots(const float* x, float* out) {
    __shared__ float s[64];
    const unsigned tid = threadIdx.x;
    if (tid < 32) {
        s[tid] = x[blockIdx.x * 32 + tid];
        s[tid] *= 2.0f;
        s[tid] += 1.0f;
        out[blockIdx.x * 32 + tid] = s[tid];
    }
}
"""


def test_a_tail_that_needs_no_convergence_point_gets_none(d):
    mod = compile_module(NOT_NEEDED, filename="own_slots.cu")
    fn = mod.get_function("own_slots")
    assert not fn.uses_sync                     # no point was added: still a plain loop
    x = np.random.default_rng(5).integers(-9, 9, 3 * 32).astype(np.float32)
    po = d.zeros(x.size, np.float32)
    A.RawModule(code=NOT_NEEDED).get_function("own_slots")((3,), (64,), (d.up(x), po))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(po, x.size, np.float32), 2 * x + 1)


def test_a_translation_unit_that_synchronises_explicitly_is_not_rewritten():
    """kernels/ declares __emu_explicit_warp_sync: its lanes are ordered by __syncwarp, so the loader
    adds no convergence point (no fibers for a kernel that has no barrier, no cost)."""
    body = EXCHANGE.split("// through a per-warp")[0]
    plain = compile_module(body, filename="exchange.cu").get_function("xor_exchange")
    assert plain.uses_sync                      # it got a convergence point: it runs on fibers
    opted = compile_module("#ifdef __EMU_CPU__\nconstexpr int __emu_explicit_warp_sync = 1;\n#endif\n" + body,
                           filename="exchange_explicit.cu").get_function("xor_exchange")
    assert not opted.uses_sync                  # left as written: a plain loop


def _points(code: str) -> list[str]:
    """The lines of `code` (a kernel source, preprocessed by hand) that get a convergence point."""
    for name, spelt in (("__shared__", "thread_local"), ("threadIdx", "(::__emu::dims.tid)"),
                        ("blockIdx", "(::__emu::dims.bid)"), ("blockDim", "(::__emu::dims.bdim)")):
        code = code.replace(name, spelt)   # as cuda_emu.h spells them
    text = '# 1 "kernel.cu"\n' + C._rewrite_volatile(C._rewrite_extern_shared(code))
    scan = C._Scan(text)
    cover = scan.tainted(C._SYNC_PRIMITIVES - C._STMT_COVER_EXCLUDE, record=False)
    out, _ = C._rewrite_warp_statements(text, cover)
    assert out.count("\n") == text.count("\n")
    return [line.strip() for line in out.splitlines() if "stmt_tick" in line]


def test_where_convergence_points_go():
    # the tail: after each step, and first in the body of the `if` in which thread 0 reads the sum (only
    # the threads that read pass that one: after every thread behind them)
    got = _points("""
__global__ void k(float* out) {
    __shared__ float s[64];
    const unsigned tid = threadIdx.x;
    s[tid] = out[tid];
    __syncthreads();
    if (tid < 32) {
        s[tid] += s[tid + 32];
        s[tid] += s[tid + 16];
    }
    if (tid == 0) out[0] = s[0];
}""")
    assert got == ["s[tid] += s[tid + 32]; ::__emu::stmt_tick(1);",
                   "if (tid == 0) { ::__emu::stmt_tick(2); out[0] = s[0]; }"], got
    # none: barriers between, own slots only, volatile (already lockstep), a tiled product, reads only
    assert _points("""
__global__ void k(const float* a, float* out, int n) {
    __shared__ float As[16][16], Bs[16][16];
    __shared__ float s[64];
    const int tx = threadIdx.x, ty = threadIdx.y, t = ty * 16 + tx;
    float sum = 0;
    for (int i = 0; i < n; i += 16) {
        As[ty][tx] = a[i + t];
        Bs[ty][tx] = a[i + t + 1];
        __syncthreads();
        for (int k = 0; k < 16; ++k) sum += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    s[t] = sum;
    s[t] *= 2;
    __syncthreads();
    for (int k = 32; k > 0; k >>= 1) { if (t < k) s[t] += s[t + k]; __syncthreads(); }
    if (t < 32) { volatile float* v = s; v[t] += v[t + 32]; v[t] += v[t + 16]; }
    float* p = &s[0];
    out[t] = p[0] + s[1];
}""") == []
    # statements that read a lower slot they overwrite are split: loads, a point, the store
    got = _points("""
__global__ void k(int* x) {
    __shared__ int s[32];
    const int t = threadIdx.x;
    s[t] = x[t];
    if (t >= 1) s[t] += s[t - 1];
    x[t] = s[t];
}""")
    assert len(got) == 1 and got[0].startswith("if (t >= 1) { ::__emu::stmt_tick(1); { auto&& __emu_r = (s[t] );") \
        and "__emu_v += (s[t - 1]); ::__emu::stmt_tick(2); __emu_r =" in got[0], got


@pytest.mark.parametrize("threads", [64, 1024])
def test_the_read_before_a_lower_thread_overwrites_after_a_barrier(d, threads):
    """PMPP's merge_tiled_kernel without its second __syncthreads: every thread reads two slots after
    a barrier, then thread 0 and 1 overwrite them loading the next tile. A GPU's warps read first;
    here thread 0 ran on to its stores before the others had read."""
    code = r"""
extern "C" __global__ void reads_then_reuse(const int* src, int* out) {
    extern __shared__ int tile[];
    int* bounds = &tile[0];
    if (threadIdx.x == 0) { bounds[0] = src[0]; bounds[1] = src[1]; }
    __syncthreads();
    const int lo = bounds[0];
    const int hi = bounds[1];
    for (int i = threadIdx.x; i < 2 * blockDim.x; i += blockDim.x) tile[i] = src[2 + i];
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = lo * 1000 + hi + tile[threadIdx.x];
}
"""
    mod = A.RawModule(code=code)
    src = np.arange(2 + 2 * threads, dtype=np.int32) + 7
    po = d.zeros(2 * threads, np.int32)
    mod.get_function("reads_then_reuse")((2,), (threads,), (d.up(src), po), shared_mem=2 * threads * 4)
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    want = np.tile(src[0] * 1000 + src[1] + src[2:2 + threads], 2)
    np.testing.assert_array_equal(d.down(po, 2 * threads, np.int32), want)


def test_a_module_the_points_break_is_built_without_them(d, monkeypatch, capfd, tmp_path):
    """A point the analysis put where g++ takes no statement must not turn valid CUDA into a compile
    error: the module is built as before the points, with a warning. Simulated by an analysis that
    returns text g++ rejects."""
    real = C._rewrite_warp_statements

    def broken(text, cover, split=True):
        out, ticked = real(text, cover, split)
        assert ticked, "the kernel below gets points"
        return out + "\nint __emu_bad_point = ;\n", ticked
    monkeypatch.setattr(C, "_rewrite_warp_statements", broken)
    monkeypatch.setenv("ACLNN_PY_CACHE_DIR", str(tmp_path))   # built here, not found in the cache
    code = r"""
extern "C" __global__ void tail(const float* x, float* out) {
    __shared__ float s[64];
    const unsigned t = threadIdx.x;
    s[t] = x[t];
    __syncthreads();
    if (t < 32) { s[t] += s[t + 32]; s[t] += s[t + 16]; s[t] += s[t + 8]; }
    if (t == 0) out[0] = s[0];
}
"""
    mod = A.RawModule(code=code)
    fn = mod.get_function("tail")
    err = capfd.readouterr().err
    assert "built without statement convergence points" in err, err
    x = np.arange(64, dtype=np.float32)
    po = d.zeros(1, np.float32)
    fn((1,), (64,), (d.up(x), po))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    # (without the points the tail's result depends on the emulator's thread order, as on a GPU with
    # independent thread scheduling: only that the module runs is checked here)
    assert np.isfinite(d.down(po, 1, np.float32)[0])
