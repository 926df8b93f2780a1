"""Warp-synchronous patterns from public code, second round (see test_emulator_warp_sync.py for the
first): Mark Harris's reduce6 with its `warpReduce(volatile T* sdata, unsigned tid)` helper, the
unrolled tail as a loop without volatile, count-down thread indices, a tail unrolled with a
`switch`, warp scans (Hillis-Steele, Blelloch) and a bitonic sort in shared memory, a transpose
within a warp, and exchanges through global memory. Each kernel's result is what a converged warp
of 32 lanes gives (every statement for all lanes, a statement's loads before its stores) and is
checked against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import aclnn_py as A
from aclnn_py import acl
from aclnn_py.emulator import compiler as C
from test_emulator_warp_sync import _points  # the lines that get a convergence point

pytestmark = pytest.mark.skipif(
    acl._state.state.initialized and acl._state.state.backend.name != "host", reason="emulator behaviour")


def _run(d, mod, name, grid, block, args, out, n, dtype, shared_mem=0):
    mod.get_function(name)((grid,), block if isinstance(block, tuple) else (block,), args, shared_mem=shared_mem)
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    return d.down(out, n, dtype)


HARRIS = r"""
// Mark Harris, "Optimizing Parallel Reduction in CUDA", reduce6, as published (a volatile helper)
template <unsigned int blockSize>
__device__ void warpReduce(volatile int* sdata, unsigned int tid) {
    if (blockSize >= 64) sdata[tid] += sdata[tid + 32];
    if (blockSize >= 32) sdata[tid] += sdata[tid + 16];
    if (blockSize >= 16) sdata[tid] += sdata[tid + 8];
    if (blockSize >= 8) sdata[tid] += sdata[tid + 4];
    if (blockSize >= 4) sdata[tid] += sdata[tid + 2];
    if (blockSize >= 2) sdata[tid] += sdata[tid + 1];
}
template <unsigned int blockSize>
__global__ void reduce6(int* g_idata, int* g_odata, unsigned int n) {
    extern __shared__ int sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + tid;
    unsigned int gridSize = blockSize * 2 * gridDim.x;
    sdata[tid] = 0;
    while (i < n) {
        sdata[tid] += g_idata[i];
        if (i + blockSize < n) sdata[tid] += g_idata[i + blockSize];
        i += gridSize;
    }
    __syncthreads();
    if (blockSize >= 512) { if (tid < 256) { sdata[tid] += sdata[tid + 256]; } __syncthreads(); }
    if (blockSize >= 256) { if (tid < 128) { sdata[tid] += sdata[tid + 128]; } __syncthreads(); }
    if (blockSize >= 128) { if (tid < 64) { sdata[tid] += sdata[tid + 64]; } __syncthreads(); }
    if (tid < 32) warpReduce<blockSize>(sdata, tid);
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// the same helper on a type parameter, given explicitly (as the CUDA samples' reduce kernels do)
template <class T, unsigned int blockSize>
__device__ void warpReduceT(volatile T* sdata, unsigned int tid) {
    if (blockSize >= 64) sdata[tid] += sdata[tid + 32];
    if (blockSize >= 32) sdata[tid] += sdata[tid + 16];
    if (blockSize >= 16) sdata[tid] += sdata[tid + 8];
    if (blockSize >= 8) sdata[tid] += sdata[tid + 4];
    if (blockSize >= 4) sdata[tid] += sdata[tid + 2];
    if (blockSize >= 2) sdata[tid] += sdata[tid + 1];
}
// the older CUDA samples' reduce4 tail: `smem[tid] = mySum = mySum + smem[tid + 32];` through a
// volatile pointer, and the same without volatile
template <class T, unsigned int blockSize, bool vol>
__global__ void reduce4(const T* g_idata, T* g_odata, unsigned int n) {
    __shared__ T sdata[blockSize];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + threadIdx.x;
    T mySum = (i < n) ? g_idata[i] : 0;
    if (i + blockSize < n) mySum += g_idata[i + blockSize];
    sdata[tid] = mySum;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] = mySum = mySum + sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        if (vol) {
            warpReduceT<T, blockSize>(sdata, tid);
        } else {
            if (blockSize >= 64) sdata[tid] = mySum = mySum + sdata[tid + 32];
            if (blockSize >= 32) sdata[tid] = mySum = mySum + sdata[tid + 16];
            if (blockSize >= 16) sdata[tid] = mySum = mySum + sdata[tid + 8];
            if (blockSize >= 8) sdata[tid] = mySum = mySum + sdata[tid + 4];
            if (blockSize >= 4) sdata[tid] = mySum = mySum + sdata[tid + 2];
            if (blockSize >= 2) sdata[tid] = mySum = mySum + sdata[tid + 1];
        }
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
"""

HARRIS_NAMES = [f"reduce6<{bs}>" for bs in (64, 128, 256, 512)] + \
    [f"reduce4<{t}, {bs}, {v}>" for t in ("int", "float") for bs in (64, 256) for v in ("true", "false")]


@pytest.fixture(scope="module")
def harris():
    return A.RawModule(code=HARRIS, name_expressions=HARRIS_NAMES)


@pytest.mark.parametrize("bs", [64, 128, 256, 512])
def test_harris_reduce6_with_a_volatile_warp_reduce_helper(harris, d, bs):
    grid = 3
    n = grid * 2 * bs * 2 - 7     # each block loops twice, the last pass partial
    x = np.random.default_rng(bs).integers(-1000, 1000, n).astype(np.int32)
    po = d.zeros(grid, np.int32)
    got = _run(d, harris, f"reduce6<{bs}>", grid, bs, (d.up(x), po, np.uint32(n)), po, grid, np.int32,
               shared_mem=bs * 4)
    assert got.sum() == x.sum()
    idx = np.arange(n)
    want = [x[((idx // bs) // 2) % grid == b].sum() for b in range(grid)]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("vol", ["true", "false"])
@pytest.mark.parametrize("bs", [64, 256])
@pytest.mark.parametrize("t", ["int", "float"])
def test_samples_reduce4_tail_chained_assignment(harris, d, t, bs, vol):
    dtype = np.int32 if t == "int" else np.float32
    grid = 4
    n = grid * 2 * bs - 3
    x = np.random.default_rng(bs + 1).integers(-500, 500, n).astype(dtype)
    po = d.zeros(grid, dtype)
    got = _run(d, harris, f"reduce4<{t}, {bs}, {vol}>", grid, bs, (d.up(x), po, np.uint32(n)), po, grid, dtype)
    want = np.zeros(grid * 2 * bs, np.int64)
    want[:n] = x
    np.testing.assert_array_equal(got, want.reshape(grid, -1).sum(1).astype(dtype))


def test_a_volatile_helper_whose_type_must_be_deduced_is_a_clear_compile_error():
    """`template <class T> void warpReduce(volatile T* s, int t)` called as `warpReduce(s, t)`: the
    volatile rewrite makes the parameter a lockstep proxy, from which g++ cannot deduce T. Not a silent
    wrong number: a compile error that says to give T explicitly."""
    code = r"""
template <class T> __device__ void warpReduce(volatile T* s, int t) { s[t] += s[t + 16]; s[t] += s[t + 8]; }
extern "C" __global__ void k(float* out) {
    __shared__ float s[64];
    s[threadIdx.x] = out[threadIdx.x];
    __syncthreads();
    if (threadIdx.x < 32) warpReduce(s, threadIdx.x);
    out[threadIdx.x] = s[threadIdx.x];
}
"""
    with pytest.raises(C.CompileException) as e:
        A.RawModule(code=code).get_function("k")
    assert "explicit" in str(e.value), str(e.value)[-2000:]


LOOP_TAILS = r"""
// the unrolled tail written as a loop, no volatile, no __syncwarp
extern "C" __global__ void loop_tail(const int* x, int* out) {
    __shared__ int s[256];
    const unsigned tid = threadIdx.x;
    s[tid] = x[blockIdx.x * 256 + tid];
    __syncthreads();
    for (unsigned k = 128; k > 32; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k];
        __syncthreads();
    }
    if (tid < 32) {
        for (int off = 32; off > 0; off >>= 1) s[tid] += s[tid + off];
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
// each warp reduces its own 32 slots: `if (lane < off)` inside the loop, a row pointer per warp
extern "C" __global__ void loop_tail_guarded(const float* x, float* out) {
    __shared__ float s[128];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    float* row = s + 32 * warp;
    row[lane] = x[blockIdx.x * 128 + threadIdx.x];
    for (int off = 16; off > 0; off >>= 1) {
        if (lane < off) row[lane] += row[lane + off];
    }
    if (lane == 0) out[blockIdx.x * 4 + warp] = row[0];
}
// the last warp reads the partial sums of all warps: a barrier, then a loop tail on its own
extern "C" __global__ void loop_tail_in_barrier_loop(const int* x, int* out, int rounds) {
    __shared__ int s[64];
    const int t = threadIdx.x;
    int acc = 0;
    for (int r = 0; r < rounds; ++r) {
        s[t] = x[(blockIdx.x * rounds + r) * 64 + t];
        __syncthreads();
        if (t < 32) {
            for (int off = 32; off > 0; off >>= 1) s[t] += s[t + off];
            if (t == 0) acc += s[0];
        }
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = acc;
}
"""


@pytest.mark.parametrize("grid", [1, 3])
def test_unrolled_tail_as_a_loop_without_volatile(d, grid):
    mod = A.RawModule(code=LOOP_TAILS)
    x = np.random.default_rng(grid).integers(-1000, 1000, grid * 256).astype(np.int32)
    po = d.zeros(grid, np.int32)
    got = _run(d, mod, "loop_tail", grid, 256, (d.up(x), po), po, grid, np.int32)
    np.testing.assert_array_equal(got, x.reshape(grid, 256).sum(1))

    xf = np.random.default_rng(grid + 5).integers(-1000, 1000, grid * 128).astype(np.float32)
    po = d.zeros(grid * 4, np.float32)
    got = _run(d, mod, "loop_tail_guarded", grid, 128, (d.up(xf), po), po, grid * 4, np.float32)
    np.testing.assert_array_equal(got, xf.reshape(-1, 32).sum(1))

    rounds = 3
    x = np.random.default_rng(grid + 9).integers(-1000, 1000, grid * rounds * 64).astype(np.int32)
    po = d.zeros(grid, np.int32)
    got = _run(d, mod, "loop_tail_in_barrier_loop", grid, 64, (d.up(x), po, np.int32(rounds)), po, grid, np.int32)
    np.testing.assert_array_equal(got, x.reshape(grid, -1).sum(1))


COUNT_DOWN = r"""
// count-down indices: the warp's values stored in reverse (lane l at slot 31 - l), then a
// Hillis-Steele scan in lane order: lane l adds the slot of lane l - k, which is slot 31 - l + k
extern "C" __global__ void reversed_scan(const int* x, int* out) {
    __shared__ int s[32];
    const int lane = threadIdx.x;
    const int r = 31 - lane;
    s[r] = x[blockIdx.x * 32 + lane];
    if (lane >= 1) s[r] += s[r + 1];
    if (lane >= 2) s[r] += s[r + 2];
    if (lane >= 4) s[r] += s[r + 4];
    if (lane >= 8) s[r] += s[r + 8];
    if (lane >= 16) s[r] += s[r + 16];
    out[blockIdx.x * 32 + lane] = s[r];
}
// the same through `blockDim.x - 1 - threadIdx.x` spelt out in every subscript
extern "C" __global__ void reversed_scan_inline(const int* x, int* out) {
    __shared__ int s[32];
    s[blockDim.x - 1 - threadIdx.x] = x[blockIdx.x * 32 + threadIdx.x];
    if (threadIdx.x >= 1) s[blockDim.x - 1 - threadIdx.x] += s[blockDim.x - 1 - threadIdx.x + 1];
    if (threadIdx.x >= 2) s[blockDim.x - 1 - threadIdx.x] += s[blockDim.x - 1 - threadIdx.x + 2];
    if (threadIdx.x >= 4) s[blockDim.x - 1 - threadIdx.x] += s[blockDim.x - 1 - threadIdx.x + 4];
    if (threadIdx.x >= 8) s[blockDim.x - 1 - threadIdx.x] += s[blockDim.x - 1 - threadIdx.x + 8];
    if (threadIdx.x >= 16) s[blockDim.x - 1 - threadIdx.x] += s[blockDim.x - 1 - threadIdx.x + 16];
    out[blockIdx.x * 32 + threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}
// a reduction towards the top slot: lane l (l < 16) adds slot 15 - l into slot 31 - l, ...
extern "C" __global__ void reduce_to_top(const int* x, int* out) {
    __shared__ int s[64];
    const unsigned t = threadIdx.x;
    s[t] = x[blockIdx.x * 64 + t];
    __syncthreads();
    if (t < 32) {
        const unsigned r = 63 - t;
        s[r] += s[r - 32];
        s[r] += s[r - 16];
        s[r] += s[r - 8];
        s[r] += s[r - 4];
        s[r] += s[r - 2];
        s[r] += s[r - 1];
    }
    if (t == 0) out[blockIdx.x] = s[63];
}
// a load of the slot a lower thread then overwrites, through a count-down index: thread t loads slot
// 31 - t + 1 (thread t - 1's), then stores its own slot 31 - t
extern "C" __global__ void reversed_shift(const int* x, int* out) {
    __shared__ int s[33];
    const int t = threadIdx.x;
    const int r = 31 - t;
    s[r + 1] = x[blockIdx.x * 32 + t];
    if (t == 0) s[0] = -1;
    __syncthreads();
    const int v = s[r + 1];
    s[r] = v * 2;
    __syncthreads();
    out[blockIdx.x * 32 + t] = s[r + 1];
}
"""


def _hs_scan(x):
    return np.cumsum(x.reshape(-1, 32), axis=1).ravel()


@pytest.mark.parametrize("kernel", ["reversed_scan", "reversed_scan_inline"])
def test_count_down_indices_scan(d, kernel):
    """Thread order is a GPU's order for `s[t] += s[t + k]` (the higher slot's lane stores later), not
    when the index counts down: lane l read slot 31 - l + 1 after lane l - 1 had stored to it."""
    mod = A.RawModule(code=COUNT_DOWN)
    x = np.random.default_rng(1).integers(-100, 100, 3 * 32).astype(np.int32)
    po = d.zeros(x.size, np.int32)
    got = _run(d, mod, kernel, 3, 32, (d.up(x), po), po, x.size, np.int32)
    np.testing.assert_array_equal(got, _hs_scan(x))


def test_count_down_indices_reduction_and_shift(d):
    mod = A.RawModule(code=COUNT_DOWN)
    x = np.random.default_rng(2).integers(-100, 100, 2 * 64).astype(np.int32)
    po = d.zeros(2, np.int32)
    got = _run(d, mod, "reduce_to_top", 2, 64, (d.up(x), po), po, 2, np.int32)
    np.testing.assert_array_equal(got, x.reshape(2, 64).sum(1))

    x = np.random.default_rng(3).integers(0, 100, 2 * 32).astype(np.int32)
    po = d.zeros(x.size, np.int32)
    got = _run(d, mod, "reversed_shift", 2, 32, (d.up(x), po), po, x.size, np.int32)
    # slot 31 - t + 1 held thread t's value; thread t stores 2 * (its value) into slot 31 - t, which
    # thread t + 1 reads back as slot 31 - (t + 1) + 1: out[t] = 2 * x[t - 1] for t >= 1, and thread
    # 0 reads slot 32, which nobody overwrote
    r = x.reshape(2, 32)
    want = np.concatenate([r[:, :1], 2 * r[:, :-1]], axis=1)
    np.testing.assert_array_equal(got, want.ravel())


SWITCH = r"""
// a tail unrolled with a switch on the block size (falls through), no volatile
extern "C" __global__ void switch_tail(const int* x, int* out) {
    extern __shared__ int s[];
    const unsigned tid = threadIdx.x;
    s[tid] = x[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 32; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k];
        __syncthreads();
    }
    if (tid < 32) {
        switch (blockDim.x) {
        default:
        case 64: s[tid] += s[tid + 32];
        case 32: s[tid] += s[tid + 16];
        case 16: s[tid] += s[tid + 8];
        case 8: s[tid] += s[tid + 4];
        case 4: s[tid] += s[tid + 2];
        case 2: s[tid] += s[tid + 1];
        }
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
// a switch that picks what each lane does: exchange with the lane above or the lane below
extern "C" __global__ void switch_exchange(const int* x, int* out, int mode) {
    __shared__ int s[64];
    const int t = threadIdx.x;
    int v = x[blockIdx.x * 64 + t];
    switch (mode) {
    case 0:
        s[t] = v;
        v += 1000 * s[t ^ 1];
        break;
    case 1: {
        s[t] = v;
        v += 1000 * s[(t + 1) & 63];
        break;
    }
    }
    out[blockIdx.x * 64 + t] = v;
}
"""


@pytest.mark.parametrize("bs", [64, 256])
def test_tail_unrolled_with_a_switch(d, bs):
    mod = A.RawModule(code=SWITCH)
    x = np.random.default_rng(bs).integers(-1000, 1000, 3 * bs).astype(np.int32)
    po = d.zeros(3, np.int32)
    got = _run(d, mod, "switch_tail", 3, bs, (d.up(x), po), po, 3, np.int32, shared_mem=bs * 4)
    np.testing.assert_array_equal(got, x.reshape(3, bs).sum(1))


def test_exchange_inside_a_switch(d):
    mod = A.RawModule(code=SWITCH)
    x = np.random.default_rng(4).integers(0, 1000, 2 * 64).astype(np.int32)
    po = d.zeros(x.size, np.int32)
    got = _run(d, mod, "switch_exchange", 2, 32, (d.up(x), po, np.int32(0)), po, x.size, np.int32)
    # only 32 threads a block: lanes 0..31 of 64 slots
    r = x.reshape(2, 64)[:, :32]
    want = r + 1000 * r[:, np.arange(32) ^ 1]
    np.testing.assert_array_equal(got.reshape(2, 64)[:, :32], want)
    po = d.zeros(x.size, np.int32)
    got = _run(d, mod, "switch_exchange", 2, 64, (d.up(x), po, np.int32(1)), po, x.size, np.int32)
    r = x.reshape(2, 64)
    # lane 31 of warp 0 reads slot 32, written by warp 1: a race between warps (any value a GPU may
    # give); every other lane reads its own warp's neighbour
    g = got.reshape(2, 64)
    want = r + 1000 * np.roll(r, -1, axis=1)
    mask = np.ones(64, bool)
    mask[[31, 63]] = False
    np.testing.assert_array_equal(g[:, mask], want[:, mask])


SCANS = r"""
// Hillis-Steele inclusive warp scan in shared memory, a loop with a temporary, no __syncwarp
extern "C" __global__ void hs_scan_loop(const int* x, int* out) {
    __shared__ int s[128];
    const int t = threadIdx.x, lane = t & 31;
    s[t] = x[blockIdx.x * 128 + t];
    for (int k = 1; k < 32; k <<= 1) {
        const int v = lane >= k ? s[t - k] : 0;
        s[t] += v;
    }
    out[blockIdx.x * 128 + t] = s[t];
}
// Hillis-Steele in the padded form of the CUDA samples' scan (a half-warp of zeros below each warp,
// no guard): `idx = 2 * t - lane`, `s[idx] += s[idx - k]` for k = 1..16, straight-line
extern "C" __global__ void hs_scan_padded(const int* x, int* out) {
    __shared__ int s[256];
    const int t = threadIdx.x, lane = t & 31;
    const int idx = 2 * t - lane;
    s[idx] = 0;
    s[idx + 32] = x[blockIdx.x * 128 + t];
    const int pos = idx + 32;
    s[pos] += s[pos - 1];
    s[pos] += s[pos - 2];
    s[pos] += s[pos - 4];
    s[pos] += s[pos - 8];
    s[pos] += s[pos - 16];
    out[blockIdx.x * 128 + t] = s[pos];
}
// Blelloch exclusive scan of 64 values by one warp (each lane two), up-sweep and down-sweep
extern "C" __global__ void blelloch_warp(const int* x, int* out) {
    __shared__ int s[64];
    const int lane = threadIdx.x;
    s[2 * lane] = x[blockIdx.x * 64 + 2 * lane];
    s[2 * lane + 1] = x[blockIdx.x * 64 + 2 * lane + 1];
    int offset = 1;
    for (int dd = 32; dd > 0; dd >>= 1) {
        if (lane < dd) {
            const int ai = offset * (2 * lane + 1) - 1;
            const int bi = offset * (2 * lane + 2) - 1;
            s[bi] += s[ai];
        }
        offset *= 2;
    }
    if (lane == 0) s[63] = 0;
    for (int dd = 1; dd < 64; dd *= 2) {
        offset >>= 1;
        if (lane < dd) {
            const int ai = offset * (2 * lane + 1) - 1;
            const int bi = offset * (2 * lane + 2) - 1;
            const int tmp = s[ai];
            s[ai] = s[bi];
            s[bi] += tmp;
        }
    }
    out[blockIdx.x * 64 + 2 * lane] = s[2 * lane];
    out[blockIdx.x * 64 + 2 * lane + 1] = s[2 * lane + 1];
}
// a bitonic sort of 32 keys by one warp in shared memory, no __syncwarp
extern "C" __global__ void bitonic_warp(const float* x, float* out) {
    __shared__ float s[128];
    const int t = threadIdx.x, lane = t & 31, base = t - lane;
    s[t] = x[blockIdx.x * 128 + t];
    for (int k = 2; k <= 32; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            const int ixj = lane ^ j;
            if (ixj > lane) {
                const float a = s[base + lane], b = s[base + ixj];
                const bool up = (lane & k) == 0;
                if ((a > b) == up) {
                    s[base + lane] = b;
                    s[base + ixj] = a;
                }
            }
        }
    }
    out[blockIdx.x * 128 + t] = s[t];
}
// a 32 x 32 transpose by one warp through shared memory: rows in, columns out, no barrier
extern "C" __global__ void warp_transpose(const int* x, int* out) {
    __shared__ int tile[32][33];
    const int lane = threadIdx.x;
    const int* in = x + blockIdx.x * 1024;
    for (int i = 0; i < 32; ++i) tile[i][lane] = in[i * 32 + lane];
    for (int i = 0; i < 32; ++i) out[blockIdx.x * 1024 + i * 32 + lane] = tile[lane][i];
}
// a histogram's exclusive prefix over 32 bins: per-thread counts by atomics, a barrier, then the
// first warp scans the bins without one
extern "C" __global__ void histo_prefix(const unsigned* keys, int n, int* offsets) {
    __shared__ int hist[32];
    __shared__ int scan[32];
    if (threadIdx.x < 32) hist[threadIdx.x] = 0;
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x) atomicAdd(&hist[keys[i] & 31], 1);
    __syncthreads();
    if (threadIdx.x < 32) {
        const int lane = threadIdx.x;
        const int c = hist[lane];
        scan[lane] = c;
        if (lane >= 1) scan[lane] += scan[lane - 1];
        if (lane >= 2) scan[lane] += scan[lane - 2];
        if (lane >= 4) scan[lane] += scan[lane - 4];
        if (lane >= 8) scan[lane] += scan[lane - 8];
        if (lane >= 16) scan[lane] += scan[lane - 16];
        offsets[lane] = scan[lane] - c;
    }
}
"""


@pytest.fixture(scope="module")
def scans():
    return A.RawModule(code=SCANS)


@pytest.mark.parametrize("kernel", ["hs_scan_loop", "hs_scan_padded"])
def test_hillis_steele_warp_scans(scans, d, kernel):
    x = np.random.default_rng(7).integers(-100, 100, 2 * 128).astype(np.int32)
    po = d.zeros(x.size, np.int32)
    got = _run(d, scans, kernel, 2, 128, (d.up(x), po), po, x.size, np.int32)
    np.testing.assert_array_equal(got, _hs_scan(x))


def test_blelloch_warp_scan(scans, d):
    x = np.random.default_rng(8).integers(-100, 100, 3 * 64).astype(np.int32)
    po = d.zeros(x.size, np.int32)
    got = _run(d, scans, "blelloch_warp", 3, 32, (d.up(x), po), po, x.size, np.int32)
    r = x.reshape(3, 64)
    want = np.concatenate([np.zeros((3, 1), np.int64), np.cumsum(r, axis=1)[:, :-1]], axis=1)
    np.testing.assert_array_equal(got, want.ravel())


def test_bitonic_sort_within_a_warp(scans, d):
    x = np.random.default_rng(9).permutation(2 * 128).astype(np.float32)
    po = d.zeros(x.size, np.float32)
    got = _run(d, scans, "bitonic_warp", 2, 128, (d.up(x), po), po, x.size, np.float32)
    np.testing.assert_array_equal(got, np.sort(x.reshape(-1, 32), axis=1).ravel())


def test_transpose_within_a_warp(scans, d):
    x = np.arange(2 * 1024, dtype=np.int32)
    po = d.zeros(x.size, np.int32)
    got = _run(d, scans, "warp_transpose", 2, 32, (d.up(x), po), po, x.size, np.int32)
    np.testing.assert_array_equal(got, x.reshape(2, 32, 32).transpose(0, 2, 1).ravel())


def test_histogram_prefix_tail(scans, d):
    keys = np.random.default_rng(10).integers(0, 1 << 20, 5000).astype(np.uint32)
    po = d.zeros(32, np.int32)
    got = _run(d, scans, "histo_prefix", 1, 256, (d.up(keys), np.int32(keys.size), po), po, 32, np.int32)
    h = np.bincount(keys & 31, minlength=32)
    np.testing.assert_array_equal(got, np.concatenate([[0], np.cumsum(h)[:-1]]))


GLOBAL = r"""
// the unrolled tail on a global scratch buffer (each block its own part), no volatile
extern "C" __global__ void global_tail(const int* x, int* scratch, int* out) {
    int* g = scratch + blockIdx.x * 64;
    const unsigned tid = threadIdx.x;
    g[tid] = x[blockIdx.x * 64 + tid];
    __syncthreads();
    if (tid < 32) {
        g[tid] += g[tid + 32];
        g[tid] += g[tid + 16];
        g[tid] += g[tid + 8];
        g[tid] += g[tid + 4];
        g[tid] += g[tid + 2];
        g[tid] += g[tid + 1];
    }
    if (tid == 0) out[blockIdx.x] = g[0];
}
// the same on the kernel's parameter itself
extern "C" __global__ void global_tail_param(int* data, int* out) {
    const unsigned tid = threadIdx.x, i = blockIdx.x * 64 + tid;
    if (tid < 32) {
        data[i] += data[i + 32];
        data[i] += data[i + 16];
        data[i] += data[i + 8];
        data[i] += data[i + 4];
        data[i] += data[i + 2];
        data[i] += data[i + 1];
    }
    if (tid == 0) out[blockIdx.x] = data[i];
}
// lanes exchange through global memory
extern "C" __global__ void global_xor(const float* x, float* scratch, float* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    scratch[i] = x[i];
    out[i] = scratch[i ^ 1];
}
"""


def test_warp_synchronous_tail_through_global_memory(d):
    mod = A.RawModule(code=GLOBAL)
    x = np.random.default_rng(12).integers(-1000, 1000, 3 * 64).astype(np.int32)
    po = d.zeros(3, np.int32)
    got = _run(d, mod, "global_tail", 3, 64, (d.up(x), d.zeros(x.size, np.int32), po), po, 3, np.int32)
    np.testing.assert_array_equal(got, x.reshape(3, 64).sum(1))
    po = d.zeros(3, np.int32)
    got = _run(d, mod, "global_tail_param", 3, 64, (d.up(x), po), po, 3, np.int32)
    np.testing.assert_array_equal(got, x.reshape(3, 64).sum(1))


def test_exchange_through_global_memory(d):
    mod = A.RawModule(code=GLOBAL)
    x = np.random.default_rng(13).integers(-1000, 1000, 2 * 128).astype(np.float32)
    po = d.zeros(x.size, np.float32)
    got = _run(d, mod, "global_xor", 2, 128, (d.up(x), d.zeros(x.size, np.float32), po), po, x.size, np.float32)
    np.testing.assert_array_equal(got, x[np.arange(x.size) ^ 1])


MISC = r"""
// a tail stepped by a lambda that captures the shared array
extern "C" __global__ void lambda_tail(const int* x, int* out) {
    __shared__ int s[64];
    const int t = threadIdx.x;
    s[t] = x[blockIdx.x * 64 + t];
    __syncthreads();
    auto step = [&](int k) { s[t] += s[t + k]; };
    if (t < 32) {
        step(32); step(16); step(8); step(4); step(2); step(1);
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
// the loop tail under #pragma unroll
extern "C" __global__ void pragma_tail(const int* x, int* out) {
    __shared__ int s[64];
    const int t = threadIdx.x;
    s[t] = x[blockIdx.x * 64 + t];
    __syncthreads();
    if (t < 32) {
#pragma unroll
        for (int off = 32; off > 0; off /= 2) s[t] += s[t + off];
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
// inside a loop that synchronises: the first warp (`wid == 0`) reduces the block's 32 partial sums
extern "C" __global__ void warp0_in_barrier_loop(const int* x, int* out, int rounds) {
    __shared__ int s[32];
    const int t = threadIdx.x, lane = t & 31, wid = t >> 5;
    int acc = 0;
    for (int r = 0; r < rounds; ++r) {
        if (lane == 0) s[wid] = 0;
        __syncthreads();
        atomicAdd(&s[wid], x[(blockIdx.x * rounds + r) * 1024 + t]);
        __syncthreads();
        if (wid == 0) {
            s[lane] += s[lane ^ 16];
            s[lane] += s[lane ^ 8];
            s[lane] += s[lane ^ 4];
            s[lane] += s[lane ^ 2];
            s[lane] += s[lane ^ 1];
            if (lane == 0) acc += s[0];
        }
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = acc;
}
// inside a loop that synchronises, no guard: lanes exchange with their neighbour between barriers
extern "C" __global__ void exchange_in_barrier_loop(const int* x, int* out, int rounds) {
    __shared__ int s[128];
    const int t = threadIdx.x;
    int v = x[blockIdx.x * 128 + t];
    for (int r = 0; r < rounds; ++r) {
        __syncthreads();
        s[t] = v;
        v = v + s[t ^ 1];
    }
    out[blockIdx.x * 128 + t] = v;
}
"""


@pytest.mark.parametrize("kernel", ["lambda_tail", "pragma_tail"])
def test_lambda_and_pragma_tails(d, kernel):
    mod = A.RawModule(code=MISC)
    x = np.random.default_rng(14).integers(-1000, 1000, 3 * 64).astype(np.int32)
    po = d.zeros(3, np.int32)
    got = _run(d, mod, kernel, 3, 64, (d.up(x), po), po, 3, np.int32)
    np.testing.assert_array_equal(got, x.reshape(3, 64).sum(1))


def test_first_warp_reduces_inside_a_loop_that_synchronises(d):
    mod = A.RawModule(code=MISC)
    rounds = 2
    x = np.random.default_rng(15).integers(-100, 100, 2 * rounds * 1024).astype(np.int32)
    po = d.zeros(2, np.int32)
    got = _run(d, mod, "warp0_in_barrier_loop", 2, 1024, (d.up(x), po, np.int32(rounds)), po, 2, np.int32)
    # every lane ends with the sum of its warp's 32 partial sums (an xor butterfly: all lanes agree)
    np.testing.assert_array_equal(got, x.reshape(2, -1).sum(1))


def test_exchange_between_barriers_inside_a_loop(d):
    mod = A.RawModule(code=MISC)
    x = np.random.default_rng(16).integers(-100, 100, 2 * 128).astype(np.int64)
    rounds = 3
    po = d.zeros(x.size, np.int32)
    got = _run(d, mod, "exchange_in_barrier_loop", 2, 128, (d.up(x.astype(np.int32)), po, np.int32(rounds)), po,
               x.size, np.int32)
    v = x.copy()
    for _ in range(rounds):
        v = v + v[np.arange(v.size) ^ 1]
    np.testing.assert_array_equal(got, v)


GLOBAL_MORE = r"""
// a Hillis-Steele scan of each warp's 32 values in place in global memory, no __syncwarp
extern "C" __global__ void global_scan(int* g) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
    if (lane >= 1) g[i] = g[i] + g[i - 1];
    if (lane >= 2) g[i] = g[i] + g[i - 2];
    if (lane >= 4) g[i] = g[i] + g[i - 4];
    if (lane >= 8) g[i] = g[i] + g[i - 8];
    if (lane >= 16) g[i] = g[i] + g[i - 16];
}
// each thread updates three elements of its own (llm.c's permute_kernel_backward): no point needed
extern "C" __global__ void own_elements(float* dinp, const float* dq, int n) {
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) {
        const int i = 3 * idx;
        dinp[i] += dq[idx];
        dinp[i + n] += 2.0f * dq[idx];
        dinp[i + 2 * n] += dinp[i];
    }
}
"""


def test_warp_scan_in_place_in_global_memory(d):
    x = np.random.default_rng(17).integers(-100, 100, 4 * 64).astype(np.int32)
    p = d.up(x)
    mod = A.RawModule(code=GLOBAL_MORE)
    got = _run(d, mod, "global_scan", 4, 64, (p,), p, x.size, np.int32)
    np.testing.assert_array_equal(got, _hs_scan(x))


def test_a_threads_own_global_elements_get_no_point(d):
    fn = C.compile_module(GLOBAL_MORE, filename="own_elements.cu").get_function("own_elements")
    assert not fn.uses_sync          # no point: it runs as a plain loop over the threads
    assert C.compile_module(GLOBAL_MORE, filename="own_elements.cu").get_function("global_scan").uses_sync


def test_where_the_new_points_go():
    # a count-down index is split (lane l reads the slot of lane l - 1); a count-up one is not
    got = _points("""
__global__ void k(int* x) {
    __shared__ int s[32];
    const int lane = threadIdx.x, r = 31 - lane;
    s[r] = x[lane];
    s[r] += s[r + 1];
    s[lane] += s[lane + 1];
    x[lane] = s[lane];
}""")
    assert len(got) == 2 and got[0] == "s[r] = x[lane]; ::__emu::stmt_tick(1);" \
        and got[1].startswith("{ auto&& __emu_r = (s[r] ); auto __emu_v = __emu_r; __emu_v += (s[r + 1]); "
                              "::__emu::stmt_tick(2);") and got[1].endswith("::__emu::stmt_tick(3);"), got
    # a warp index (`t >> 5`) is not a thread's own: `if (wid == 0)` is a warp's region, not one thread's,
    # and inside a loop that synchronises its statements are paired within the iteration; the
    # grid-stride loop gets no point around it (its next item is not another thread's slot)
    got = _points("""
__global__ void k(const int* x, int* out, int n) {
    __shared__ int s[32];
    const int t = threadIdx.x, lane = t & 31, wid = t >> 5;
    for (int i = blockIdx.x; i < n; i += gridDim.x) {
        if (lane == 0) s[wid] = x[i * 32 + wid];
        __syncthreads();
        if (wid == 0) {
            s[lane] += s[lane ^ 16];
            s[lane] += s[lane ^ 8];
        }
        __syncthreads();
        if (t == 0) out[i] = s[0];
    }
}""")
    assert len(got) == 2 and all("__emu_v += (s[lane ^" in g for g in got) and got[0].endswith("::__emu::stmt_tick(2);"), got
    got = _points("""
__global__ void k(int* x) {
    __shared__ int s[64];
    const int t = threadIdx.x;
    s[t] = x[t];
    __syncthreads();
    if (t < 32) {
        switch (blockDim.x) {
        case 64: s[t] += s[t + 32];
        case 32: s[t] += s[t + 16];
        default: break;
        }
    }
    x[t] = s[t];
}""")
    # a switch body: after a case's statement that another lane reads from in the next (none after the
    # last: every lane then reads its own slot)
    assert got == ["case 64: s[t] += s[t + 32]; ::__emu::stmt_tick(1);"], got
