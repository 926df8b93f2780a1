"""CUB's block- and warp-level collectives on the host emulator (aclnn_py/emulator/include/cub/).

Kernels are written the way real code uses CUB. Float results are checked BIT-EXACT against a NumPy
re-enactment of the order in which CUB 2.x's default algorithms combine values (the `ref_*`
functions below, written from CCCL v2.3.2's sources: warp_reduce_shfl/_smem, block_reduce_warp_reductions,
block_reduce_raking(_commutative_only), warp_scan_shfl/_smem, block_scan_raking, block_scan_warp_scans,
thread_reduce/thread_scan), with np.float32 arithmetic; integer and data-movement results against NumPy."""
from __future__ import annotations

import math

import numpy as np
import pytest

import aclnn_py as A
from aclnn_py import acl
from aclnn_py.emulator import CompileException
from harness import Dev, sync_ok as ok  # the device synchronises without an error

pytestmark = pytest.mark.skipif(
    acl._state.state.initialized and acl._state.state.backend.name != "host", reason="emulator run")


f32 = np.float32


def add(a, b):
    return f32(f32(a) + f32(b))


def fmax(a, b):          # cub::Max: (b > a) ? b : a
    return b if b > a else a


def bits(a):
    return np.asarray(a, np.float32).view(np.uint32)


def assert_bits(got, exp):
    got, exp = np.atleast_1d(np.asarray(got, np.float32)), np.atleast_1d(np.asarray(exp, np.float32))
    bad = np.nonzero(bits(got) != bits(exp))[0]
    assert bad.size == 0, f"{bad.size} differ, first at {bad[:5]}: got {got[bad[:5]]}, expected {exp[bad[:5]]}"


def log2c(n):
    return max(0, math.ceil(math.log2(n)))


# ---- re-enactments of CUB 2.x's combination orders -------------------------------------------------
def ref_warp_reduce(v, op, last_lane, width):
    """WarpReduceShfl / WarpReduceSmem: offsets 1, 2, 4, ...; lane i takes op(own, lane i+off) if
    i+off <= last_lane. Returns every lane's value (lane 0's is the result)."""
    v = list(v)
    for s in range(log2c(width)):
        off = 1 << s
        v = [op(v[i], v[i + off]) if i + off <= last_lane else v[i] for i in range(len(v))]
    return v


def fold(items, op, prefix=None):
    """CUB 2.x ThreadReduce: a left fold."""
    acc = items[0] if prefix is None else op(prefix, items[0])
    for it in items[1:]:
        acc = op(acc, it)
    return acc


def ref_block_reduce(x, op, alg, num_valid=None):
    """Thread 0's BlockReduce result; x holds one partial per thread (linear order)."""
    bt = len(x)
    full = num_valid is None or num_valid >= bt
    nv = bt if num_valid is None else num_valid
    if alg == "WARP_REDUCTIONS":
        lw = min(bt, 32)
        even = bt % lw == 0
        aggs = []
        for w in range((bt + 31) // 32):
            lanes = x[w * 32:(w + 1) * 32]
            if (full and even) or w * lw + lw <= nv:
                last = lw - 1
            else:
                last = nv - w * lw - 1
            aggs.append(ref_warp_reduce(lanes, op, last, lw)[0])
        acc = aggs[0]
        for w in range(1, len(aggs)):
            if full or w * lw < nv:
                acc = op(acc, aggs[w])
        return acc
    if alg == "RAKING_COMMUTATIVE_ONLY" and full and bt % 32 == 0 and bt > 32:
        seg = (bt - 32) // 32
        parts = [fold(x[32 + t * seg: 32 + (t + 1) * seg], op, x[t]) if seg else x[t] for t in range(32)]
        return ref_warp_reduce(parts, op, 31, 32)[0]
    # RAKING (and the commutative-only fallback)
    maxr = min(bt, 32)
    seg = (bt + maxr - 1) // maxr
    r = (bt + seg - 1) // seg
    if r == bt:
        return ref_warp_reduce(x, op, (bt - 1) if full else nv - 1, r)[0]
    unguarded = bt % r == 0
    parts = []
    for t in range(r):
        p = x[t * seg]
        for i in range(1, seg):
            if (full and unguarded) or t * seg + i < nv:
                p = op(p, x[t * seg + i])
        parts.append(p)
    valid_r = r if full else (nv + seg - 1) // seg
    return ref_warp_reduce(parts, op, valid_r - 1, r)[0]


def ref_warp_inclusive(v, op, identity=None):
    """WarpScanShfl / WarpScanSmem (identity: the Smem Sum path adds 0 below the offset)."""
    v = list(v)
    for s in range(log2c(len(v))):
        off = 1 << s
        v = [op(v[i - off], v[i]) if i >= off else (op(identity, v[i]) if identity is not None else v[i])
             for i in range(len(v))]
    return v


def warp_identity(width, op):
    return f32(0) if (op is add and width & (width - 1)) else None   # WarpScanSmem with cub::Sum


def ref_warp_exclusive_init(v, op, init):
    """WarpScan::ExclusiveScan(input, out, init, op[, aggregate]) -> (exclusive, aggregate)."""
    inc = ref_warp_inclusive(v, op, warp_identity(len(v), op))
    agg = inc[-1]
    inc = [op(init, a) for a in inc]
    return [init] + inc[:-1], agg


def ref_warp_exclusive(v, op):
    """WarpScan::Scan without init -> (inclusive, exclusive (lane 0: undefined, own inclusive here), aggregate)."""
    inc = ref_warp_inclusive(v, op, warp_identity(len(v), op))
    return inc, [inc[0]] + inc[:-1], inc[-1]


def scan_excl(seg, op, prefix, apply=True):   # ThreadScanExclusive
    out = []
    inc = op(prefix, seg[0]) if apply else seg[0]
    out.append(prefix)
    exc = inc
    for s in seg[1:]:
        inc = op(exc, s)
        out.append(exc)
        exc = inc
    return out


def scan_incl(seg, op, prefix, apply=True):   # ThreadScanInclusive with prefix
    out = []
    inc = op(prefix, seg[0]) if apply else seg[0]
    out.append(inc)
    for s in seg[1:]:
        inc = op(inc, s)
        out.append(inc)
    return out


def ref_block_scan(x, op, alg, kind, init=None):
    """BlockScan of one item per thread. kind: 'excl_init' (ExclusiveScan with init / ExclusiveSum),
    'incl' (InclusiveScan / InclusiveSum). Returns (outputs, block_aggregate)."""
    bt = len(x)
    if alg == "WARP_SCANS" and bt % 32 == 0:
        warps = [x[w:w + 32] for w in range(0, bt, 32)]
        incs, excs, aggs = zip(*[ref_warp_exclusive(w, op) for w in warps])
        block_agg, prefixes = aggs[0], [None]
        for w in range(1, len(aggs)):
            prefixes.append(block_agg)
            block_agg = op(block_agg, aggs[w])
        out = []
        for w in range(len(warps)):
            if kind == "incl":
                out += list(incs[w]) if w == 0 else [op(prefixes[w], a) for a in incs[w]]
            else:
                wp = init if w == 0 else op(init, prefixes[w])
                out += [wp] + [op(wp, a) for a in excs[w][1:]]
        return out, block_agg
    maxr = min(bt, 32)
    seg = (bt + maxr - 1) // maxr
    r = (bt + seg - 1) // seg
    if r == bt:   # one raking warp: a WarpScan
        if kind == "incl":
            inc = ref_warp_inclusive(x, op, warp_identity(bt, op))
            return inc, inc[-1]
        return ref_warp_exclusive_init(x, op, init)
    segs = [x[t * seg:(t + 1) * seg] for t in range(r)]
    parts = [fold(s, op) for s in segs]           # (slots past the block are skipped)
    out = []
    if kind == "incl":
        _, excl, agg = ref_warp_exclusive(parts, op)
        for t in range(r):
            out += scan_incl(segs[t], op, excl[t], apply=(t != 0))
    else:
        excl, agg = ref_warp_exclusive_init(parts, op, init)
        for t in range(r):
            out += scan_excl(segs[t], op, excl[t])
    return out[:bt], agg


_modules: dict = {}


def run(code, name, grid, block, args, shared_mem=0, names=None):
    """Launch `name` from `code`; `names`: every name expression of the module (one compile for a
    parametrized family: the emulator's cache key includes them)."""
    key = (code, tuple(names or ()))
    if key not in _modules:
        _modules[key] = A.RawModule(code=code, options=("-std=c++17",), name_expressions=list(names or ()))
    _modules[key].get_function(name)(grid, block, args, shared_mem=shared_mem)
    ok()


# ---- BlockReduce ------------------------------------------------------------------------------------
BLOCK_SUM_ATOMIC = r"""
#include <cub/cub.cuh>
// a block sum of 256 floats per block, then one atomicAdd per block (the CUB docs' pattern)
extern "C" __global__ void block_sum(const float* in, float* block_sums, float* total, int n) {
    typedef cub::BlockReduce<float, 256> BlockReduce;
    __shared__ typename BlockReduce::TempStorage temp_storage;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    float s = BlockReduce(temp_storage).Sum(v);
    if (threadIdx.x == 0) {
        block_sums[blockIdx.x] = s;
        atomicAdd(total, s);
    }
}
"""


def test_block_reduce_sum_then_atomic_add(d):
    rng = np.random.default_rng(1)
    n, nb = 256 * 6 - 37, 6
    x = rng.standard_normal(n).astype(np.float32)
    ps, pt = d.zeros(nb, np.float32), d.zeros(1, np.float32)
    run(BLOCK_SUM_ATOMIC, "block_sum", (nb,), (256,), (d.up(x), ps, pt, np.int32(n)))
    xp = np.concatenate([x, np.zeros(nb * 256 - n, np.float32)])
    exp = [ref_block_reduce(list(xp[b * 256:(b + 1) * 256]), add, "WARP_REDUCTIONS") for b in range(nb)]
    assert_bits(Dev.down(ps, nb, np.float32), exp)
    np.testing.assert_allclose(Dev.down(pt, 1, np.float32)[0], x.astype(np.float64).sum(), rtol=1e-5, atol=1e-4)


REDUCE_ALGOS = r"""
#include <cub/block/block_reduce.cuh>
// per block: [Sum(x), Sum(items[3]), Sum(x, num_valid), Reduce(x, Max), Reduce(items, Sum, num_valid=...)...]
template <cub::BlockReduceAlgorithm ALG, int BX, int BY, int BZ>
__global__ void reduce_all(const float* in, float* out, int num_valid) {
    typedef cub::BlockReduce<float, BX, ALG, BY, BZ> BR;
    __shared__ typename BR::TempStorage temp;
    const int bt = BX * BY * BZ;
    const int tid = threadIdx.x + BX * (threadIdx.y + BY * threadIdx.z);
    const float* x = in + blockIdx.x * bt * 4;
    float v = x[tid];
    float items[3] = {x[bt + 3 * tid], x[bt + 3 * tid + 1], x[bt + 3 * tid + 2]};
    float r0 = BR(temp).Sum(v);
    __syncthreads();
    float r1 = BR(temp).Sum(items);
    __syncthreads();
    float r2 = BR(temp).Sum(v, num_valid);
    __syncthreads();
    float r3 = BR(temp).Reduce(v, cub::Max());
    __syncthreads();
    float r4 = BR(temp).Reduce(v, cub::Sum(), bt);
    if (tid == 0) {
        float* o = out + blockIdx.x * 5;
        o[0] = r0; o[1] = r1; o[2] = r2; o[3] = r3; o[4] = r4;
    }
}
"""

REDUCE_CASES = [  # (algorithm, (BX, BY, BZ), num_valid)
    ("WARP_REDUCTIONS", (256, 1, 1), 77), ("WARP_REDUCTIONS", (96, 1, 1), 65), ("WARP_REDUCTIONS", (200, 1, 1), 199),
    ("WARP_REDUCTIONS", (24, 1, 1), 13), ("WARP_REDUCTIONS", (16, 8, 1), 100), ("WARP_REDUCTIONS", (8, 4, 3), 40),
    ("RAKING", (256, 1, 1), 130), ("RAKING", (96, 1, 1), 33), ("RAKING", (200, 1, 1), 101), ("RAKING", (24, 1, 1), 5),
    ("RAKING", (1024, 1, 1), 1000), ("RAKING", (16, 8, 1), 1), ("RAKING", (120, 1, 1), 61),
    ("WARP_REDUCTIONS", (40, 1, 1), 35), ("RAKING_COMMUTATIVE_ONLY", (64, 1, 1), 64),
    ("RAKING_COMMUTATIVE_ONLY", (256, 1, 1), 190), ("RAKING_COMMUTATIVE_ONLY", (96, 1, 1), 64),
    ("RAKING_COMMUTATIVE_ONLY", (200, 1, 1), 150), ("RAKING_COMMUTATIVE_ONLY", (32, 2, 2), 128),
]
REDUCE_NAMES = [f"reduce_all<cub::BLOCK_REDUCE_{a}, {x}, {y}, {z}>" for a, (x, y, z), _ in REDUCE_CASES]


@pytest.mark.parametrize("alg,dims,nv", REDUCE_CASES)
def test_block_reduce_algorithms_bit_exact(d, alg, dims, nv):
    bt = dims[0] * dims[1] * dims[2]
    nb = 3
    rng = np.random.default_rng(bt + len(alg))
    x = (rng.standard_normal(nb * bt * 4) * rng.choice([1e-3, 1.0, 1e3], nb * bt * 4)).astype(np.float32)
    po = d.zeros(nb * 5, np.float32)
    name = f"reduce_all<cub::BLOCK_REDUCE_{alg}, {dims[0]}, {dims[1]}, {dims[2]}>"
    run(REDUCE_ALGOS, name, (nb,), dims, (d.up(x), po, np.int32(nv)), names=REDUCE_NAMES)
    got = Dev.down(po, nb * 5, np.float32).reshape(nb, 5)
    for b in range(nb):
        xb = list(x[b * bt * 4:(b + 1) * bt * 4])
        v = xb[:bt]
        items = [fold(xb[bt + 3 * t: bt + 3 * t + 3], add) for t in range(bt)]
        exp = [ref_block_reduce(v, add, alg), ref_block_reduce(items, add, alg),
               ref_block_reduce(v, add, alg, nv), ref_block_reduce(v, fmax, alg), ref_block_reduce(v, add, alg, bt)]
        assert_bits(got[b], exp)
    # and the numbers are sums / maxima at all
    assert got[0, 3] == x[:bt].max()
    np.testing.assert_allclose(got[0, 2], x[:nv].astype(np.float64).sum(), rtol=1e-3, atol=1e-2 * np.abs(x[:nv]).max())


def test_block_reduce_int_and_argmax_private_storage(d):
    code = r"""
#include <cub/cub.cuh>
extern "C" __global__ void k(const int* in, int* out) {
    // default-constructed (private shared storage), integer Sum / Min, and ArgMax over KeyValuePair
    typedef cub::KeyValuePair<int, float> KV;
    int v = in[blockIdx.x * 160 + threadIdx.x];
    int s = cub::BlockReduce<int, 160>().Sum(v);
    __syncthreads();
    int m = cub::BlockReduce<int, 160, cub::BLOCK_REDUCE_RAKING>().Reduce(v, cub::Min());
    __syncthreads();
    KV kv(threadIdx.x, (float)(v % 97));
    KV am = cub::BlockReduce<KV, 160>().Reduce(kv, cub::ArgMax());
    if (threadIdx.x == 0) { out[blockIdx.x * 4] = s; out[blockIdx.x * 4 + 1] = m;
                            out[blockIdx.x * 4 + 2] = am.key; out[blockIdx.x * 4 + 3] = (int)am.value; }
}
"""
    rng = np.random.default_rng(3)
    x = rng.integers(-1000, 1000, 160 * 4).astype(np.int32)
    po = d.zeros(16, np.int32)
    run(code, "k", (4,), (160,), (d.up(x), po))
    got = Dev.down(po, 16, np.int32).reshape(4, 4)
    for b in range(4):
        xb = x[b * 160:(b + 1) * 160]
        vals = np.fmod(xb, 97).astype(np.int64)   # C remainder
        assert got[b, 0] == xb.sum() and got[b, 1] == xb.min()
        assert got[b, 2] == int(np.argmax(vals)) and got[b, 3] == vals.max()   # first index of the max


# ---- WarpReduce -------------------------------------------------------------------------------------
WARP_REDUCE = r"""
#include <cub/warp/warp_reduce.cuh>
template <int L>
__global__ void warp_red(const float* in, float* out, int valid) {
    typedef cub::WarpReduce<float, L> WR;
    __shared__ typename WR::TempStorage temp[1024 / L];
    const int w = threadIdx.x / L, lane = threadIdx.x % L;
    float v = in[threadIdx.x];
    float s = WR(temp[w]).Sum(v);
    float sv = WR(temp[w]).Sum(v, valid);
    float mx = WR(temp[w]).Reduce(v, cub::Max());
    float hs = WR(temp[w]).HeadSegmentedSum(v, lane % 7 == 0 || lane == 3);
    float ts = WR(temp[w]).TailSegmentedSum(v, lane % 5 == 4);
    out[threadIdx.x * 5 + 0] = s; out[threadIdx.x * 5 + 1] = sv; out[threadIdx.x * 5 + 2] = mx;
    out[threadIdx.x * 5 + 3] = hs; out[threadIdx.x * 5 + 4] = ts;
}
"""


def ref_segmented_lane(v, op, last_lanes):
    """Shuffle steps where every lane has its own last_lane (as CUB's segmented reductions)."""
    v = list(v)
    n = len(v)
    for s in range(log2c(n)):
        off = 1 << s
        v = [op(v[i], v[i + off]) if i + off <= last_lanes[i] else v[i] for i in range(n)]
    return v


WARP_REDUCE_CASES = [(32, 96, 19), (16, 64, 9), (8, 32, 8), (24, 24, 11)]
WARP_REDUCE_NAMES = [f"warp_red<{w}>" for w, _, _ in WARP_REDUCE_CASES]


@pytest.mark.parametrize("width,threads,valid", WARP_REDUCE_CASES)
def test_warp_reduce_bit_exact(d, width, threads, valid):
    rng = np.random.default_rng(width)
    x = rng.standard_normal(threads).astype(np.float32) * f32(10)
    po = d.zeros(threads * 5, np.float32)
    name = f"warp_red<{width}>"
    run(WARP_REDUCE, name, (1,), (threads,), (d.up(x), po, np.int32(valid)), names=WARP_REDUCE_NAMES)
    got = Dev.down(po, threads * 5, np.float32).reshape(threads, 5)
    for w in range(threads // width):
        v = list(x[w * width:(w + 1) * width])
        lane0 = w * width
        assert_bits(got[lane0, :3], [ref_warp_reduce(v, add, width - 1, width)[0],
                                     ref_warp_reduce(v, add, valid - 1, width)[0],
                                     ref_warp_reduce(v, fmax, width - 1, width)[0]])
        assert got[lane0, 2] == max(v)
        if width & (width - 1):
            continue   # (non-power-of-two segmented reductions: WarpReduceSmem, checked for sums below)
        # segmented: every lane's last_lane = the lane before the next head / the next tail at or after it
        hflags = [lane % 7 == 0 or lane == 3 for lane in range(width)]
        tflags = [lane % 5 == 4 for lane in range(width)]
        hl = [next((j - 1 for j in range(i + 1, width) if hflags[j]), width - 1) for i in range(width)]
        tl = [next((j for j in range(i, width) if tflags[j]), width - 1) for i in range(width)]
        hs, ts = ref_segmented_lane(v, add, hl), ref_segmented_lane(v, add, tl)
        heads = [0] + [i for i in range(1, width) if hflags[i]]
        assert_bits(got[lane0 + np.array(heads), 3], [hs[i] for i in heads])
        assert_bits(got[lane0, 4], ts[0])
        np.testing.assert_allclose(got[lane0 + 3, 3], np.sum(np.array(v[3:7], np.float64)), rtol=1e-5)


def test_warp_reduce_max_int(d):
    code = r"""
#include <cub/cub.cuh>
extern "C" __global__ void warp_max(const int* in, int* out) {
    typedef cub::WarpReduce<int> WarpReduce;
    __shared__ typename WarpReduce::TempStorage temp_storage[4];
    int warp_id = threadIdx.x / 32;
    int m = WarpReduce(temp_storage[warp_id]).Reduce(in[blockIdx.x * 128 + threadIdx.x], cub::Max());
    if (threadIdx.x % 32 == 0) out[blockIdx.x * 4 + warp_id] = m;
}
"""
    rng = np.random.default_rng(5)
    x = rng.integers(-10**6, 10**6, 128 * 3).astype(np.int32)
    po = d.zeros(12, np.int32)
    run(code, "warp_max", (3,), (128,), (d.up(x), po))
    np.testing.assert_array_equal(Dev.down(po, 12, np.int32), x.reshape(12, 32).max(axis=1))


# ---- BlockScan / WarpScan ---------------------------------------------------------------------------
BLOCK_SCAN = r"""
#include <cub/block/block_scan.cuh>
struct RunningPrefix {   // the CUB docs' block prefix callback: a running total over tiles
    float total;
    __device__ RunningPrefix(float t) : total(t) {}
    __device__ float operator()(float block_aggregate) { float old = total; total += block_aggregate; return old; }
};
template <cub::BlockScanAlgorithm ALG, int BX, int BY>
__global__ void scan_all(const float* in, float* out, float* aggs, int tiles) {
    typedef cub::BlockScan<float, BX, ALG, BY> BS;
    __shared__ typename BS::TempStorage temp;
    const int bt = BX * BY, tid = threadIdx.x + BX * threadIdx.y;
    float v = in[tid], r, agg;
    BS(temp).ExclusiveSum(v, r);                       out[tid] = r;            __syncthreads();
    BS(temp).InclusiveSum(v, r, agg);                  out[bt + tid] = r;       __syncthreads();
    if (tid == 0) aggs[0] = agg;
    BS(temp).ExclusiveScan(v, r, -5.0f, cub::Max());   out[2 * bt + tid] = r;   __syncthreads();
    BS(temp).InclusiveScan(v, r, cub::Max());          out[3 * bt + tid] = r;   __syncthreads();
    BS(temp).ExclusiveSum(v, r, agg);                  out[4 * bt + tid] = r;   __syncthreads();
    if (tid == 0) aggs[1] = agg;
    // items arrays (blocked: thread t holds 4t .. 4t+3)
    float items[4], o[4];
    for (int i = 0; i < 4; ++i) items[i] = in[bt + 4 * tid + i];
    BS(temp).ExclusiveSum(items, o);  for (int i = 0; i < 4; ++i) out[5 * bt + 4 * tid + i] = o[i];  __syncthreads();
    BS(temp).InclusiveSum(items, o);  for (int i = 0; i < 4; ++i) out[9 * bt + 4 * tid + i] = o[i];  __syncthreads();
    // tiles with a running prefix (one item per thread per tile)
    RunningPrefix prefix(0.0f);
    for (int t = 0; t < tiles; ++t) {
        float x = in[5 * bt + t * bt + tid];
        BS(temp).InclusiveSum(x, r, prefix);
        out[13 * bt + t * bt + tid] = r;
        __syncthreads();
    }
}
"""

SCAN_CASES = [("RAKING", 256, 1), ("RAKING", 200, 1), ("RAKING", 96, 1), ("RAKING", 24, 1), ("RAKING", 32, 1),
              ("RAKING_MEMOIZE", 128, 1), ("WARP_SCANS", 256, 1), ("WARP_SCANS", 96, 1), ("WARP_SCANS", 200, 1),
              ("RAKING", 16, 8), ("WARP_SCANS", 32, 4), ("RAKING", 1024, 1)]
SCAN_NAMES = [f"scan_all<cub::BLOCK_SCAN_{a}, {x}, {y}>" for a, x, y in SCAN_CASES]


@pytest.mark.parametrize("alg,bx,by", SCAN_CASES)
def test_block_scan_bit_exact(d, alg, bx, by):
    bt, tiles = bx * by, 3
    rng = np.random.default_rng(bt * 7 + len(alg))
    x = (rng.standard_normal((5 + tiles) * bt) * rng.choice([1e-2, 1.0, 1e2], (5 + tiles) * bt)).astype(np.float32)
    po, pa = d.zeros((13 + tiles) * bt, np.float32), d.zeros(2, np.float32)
    name = f"scan_all<cub::BLOCK_SCAN_{alg}, {bx}, {by}>"
    run(BLOCK_SCAN, name, (1,), (bx, by), (d.up(x), po, pa, np.int32(tiles)), names=SCAN_NAMES)
    got = Dev.down(po, (13 + tiles) * bt, np.float32)
    aggs = Dev.down(pa, 2, np.float32)
    ralg = "RAKING" if alg == "RAKING_MEMOIZE" else alg
    v = list(x[:bt])
    ex, _ = ref_block_scan(v, add, ralg, "excl_init", f32(0))
    inc, agg = ref_block_scan(v, add, ralg, "incl")
    exm, _ = ref_block_scan(v, fmax, ralg, "excl_init", f32(-5))
    incm, _ = ref_block_scan(v, fmax, ralg, "incl")
    ex2, agg2 = ref_block_scan(v, add, ralg, "excl_init", f32(0))
    assert_bits(got[:bt], ex)
    assert_bits(got[bt:2 * bt], inc)
    assert_bits(got[2 * bt:3 * bt], exm)
    assert_bits(got[3 * bt:4 * bt], incm)
    assert_bits(got[4 * bt:5 * bt], ex2)
    assert_bits(aggs, [agg, agg2])
    np.testing.assert_allclose(got[bt:2 * bt], np.cumsum(np.array(v, np.float64)), rtol=1e-4, atol=1e-2)
    np.testing.assert_array_equal(got[3 * bt:4 * bt], np.maximum.accumulate(np.array(v)))
    # items arrays: per-thread fold, block ExclusiveSum of those, then a seeded thread scan
    items = x[bt:5 * bt].reshape(bt, 4)
    tp = [fold(list(items[t]), add) for t in range(bt)]
    tex, _ = ref_block_scan(tp, add, ralg, "excl_init", f32(0))
    exp_ex = sum((scan_excl(list(items[t]), add, tex[t]) for t in range(bt)), [])
    exp_in = sum((scan_incl(list(items[t]), add, tex[t], apply=(t != 0)) for t in range(bt)), [])
    assert_bits(got[5 * bt:9 * bt], exp_ex)
    assert_bits(got[9 * bt:13 * bt], exp_in)
    # running prefix over tiles
    total = f32(0)
    for t in range(tiles):
        xt = list(x[(5 + t) * bt:(6 + t) * bt])
        if ralg == "WARP_SCANS" and bt % 32 == 0:
            inc_t, agg_t = ref_block_scan(xt, add, ralg, "incl")
            exp = [add(total, a) for a in inc_t]
        else:
            exp, agg_t = ref_block_scan_prefix_incl(xt, add, total)
        assert_bits(got[(13 + t) * bt:(14 + t) * bt], exp)
        total = add(total, agg_t)


def ref_block_scan_prefix_incl(x, op, block_prefix):
    """BlockScanRaking::InclusiveScan with a prefix callback (returns outputs, aggregate)."""
    bt = len(x)
    maxr = min(bt, 32)
    seg = (bt + maxr - 1) // maxr
    r = (bt + seg - 1) // seg
    if r == bt:
        inc = ref_warp_inclusive(x, op, warp_identity(bt, op))
        return [op(block_prefix, a) for a in inc], inc[-1]
    segs = [x[t * seg:(t + 1) * seg] for t in range(r)]
    _, excl, agg = ref_warp_exclusive([fold(s, op) for s in segs], op)
    out = []
    for t in range(r):
        out += scan_incl(segs[t], op, block_prefix if t == 0 else op(block_prefix, excl[t]))
    return out[:bt], agg


def test_block_scan_stream_compaction(d):
    code = r"""
#include <cub/cub.cuh>
// keep the positive values of each 128-item tile (4 per thread), in order, with the tile's count
extern "C" __global__ void compact(const int* in, int* out, int* counts, int n) {
    typedef cub::BlockLoad<int, 32, 4, cub::BLOCK_LOAD_TRANSPOSE> Load;
    typedef cub::BlockScan<int, 32> Scan;
    __shared__ union { typename Load::TempStorage load; typename Scan::TempStorage scan; } temp;
    int tile = blockIdx.x * 128, valid = min(128, n - tile);
    int items[4], flags[4], pos[4], kept;
    Load(temp.load).Load(in + tile, items, valid, -1);
    __syncthreads();
    for (int i = 0; i < 4; ++i) flags[i] = items[i] > 0;
    Scan(temp.scan).ExclusiveSum(flags, pos, kept);
    for (int i = 0; i < 4; ++i) if (flags[i]) out[tile + pos[i]] = items[i];
    if (threadIdx.x == 0) counts[blockIdx.x] = kept;
}
"""
    rng = np.random.default_rng(9)
    n = 128 * 5 - 50
    x = rng.integers(-50, 50, n).astype(np.int32)
    po, pc = d.up(np.zeros(640, np.int32)), d.zeros(5, np.int32)
    run(code, "compact", (5,), (32,), (d.up(x), po, pc, np.int32(n)))
    got, counts = Dev.down(po, 640, np.int32), Dev.down(pc, 5, np.int32)
    for b in range(5):
        keep = x[b * 128:(b + 1) * 128]
        keep = keep[keep > 0]
        assert counts[b] == keep.size
        np.testing.assert_array_equal(got[b * 128:b * 128 + keep.size], keep)


WARP_SCAN = r"""
#include <cub/warp/warp_scan.cuh>
template <int L>
__global__ void warp_scan(const float* in, float* out) {
    typedef cub::WarpScan<float, L> WS;
    __shared__ typename WS::TempStorage temp[1024 / L];
    const int w = threadIdx.x / L, n = blockDim.x;
    float v = in[threadIdx.x], r, agg;
    WS(temp[w]).InclusiveSum(v, r);               out[threadIdx.x] = r;
    WS(temp[w]).ExclusiveSum(v, r, agg);          out[n + threadIdx.x] = r;  out[5 * n + threadIdx.x] = agg;
    WS(temp[w]).ExclusiveScan(v, r, 0.5f, cub::Max()); out[2 * n + threadIdx.x] = r;
    WS(temp[w]).InclusiveScan(v, r, cub::Max());  out[3 * n + threadIdx.x] = r;
    out[4 * n + threadIdx.x] = WS(temp[w]).Broadcast(v, L - 1);
}
"""


WARP_SCAN_CASES = [(32, 64), (16, 64), (4, 32), (24, 24), (12, 12)]
WARP_SCAN_NAMES = [f"warp_scan<{w}>" for w, _ in WARP_SCAN_CASES]


@pytest.mark.parametrize("width,threads", WARP_SCAN_CASES)
def test_warp_scan_bit_exact(d, width, threads):
    rng = np.random.default_rng(width * 3)
    x = rng.standard_normal(threads).astype(np.float32)
    po = d.zeros(6 * threads, np.float32)
    name = f"warp_scan<{width}>"
    run(WARP_SCAN, name, (1,), (threads,), (d.up(x), po), names=WARP_SCAN_NAMES)
    got = Dev.down(po, 6 * threads, np.float32).reshape(6, threads)
    for w in range(threads // width):
        s = slice(w * width, (w + 1) * width)
        v = list(x[s])
        ident = warp_identity(width, add)
        ex, agg = ref_warp_exclusive_init(v, add, f32(0))
        exm, _ = ref_warp_exclusive_init(v, fmax, f32(0.5))
        assert_bits(got[0, s], ref_warp_inclusive(v, add, ident))
        assert_bits(got[1, s], ex)
        assert_bits(got[5, s], [agg] * width)
        assert_bits(got[2, s], exm)
        assert_bits(got[3, s], ref_warp_inclusive(v, fmax))
        assert_bits(got[4, s], [v[-1]] * width)


def test_warp_scan_int_exclusive_sum_allocation(d):
    code = r"""
#include <cub/cub.cuh>
// each lane asks for in[i] slots; lanes get their offsets, lane 0 reserves the warp's total
extern "C" __global__ void alloc(const int* in, int* offsets, int* counter) {
    typedef cub::WarpScan<int> WarpScan;
    __shared__ typename WarpScan::TempStorage temp[2];
    int w = threadIdx.x / 32, off, total, base = 0;
    WarpScan(temp[w]).ExclusiveSum(in[threadIdx.x], off, total);
    if (threadIdx.x % 32 == 0) base = atomicAdd(counter, total);
    base = __shfl_sync(0xffffffff, base, 0);
    offsets[threadIdx.x] = base + off;
}
"""
    x = np.random.default_rng(4).integers(0, 9, 64).astype(np.int32)
    po, pc = d.zeros(64, np.int32), d.zeros(1, np.int32)
    run(code, "alloc", (1,), (64,), (d.up(x), po, pc))
    got = Dev.down(po, 64, np.int32)
    assert Dev.down(pc, 1, np.int32)[0] == x.sum()
    for w in range(2):
        g, xs = got[w * 32:(w + 1) * 32], x[w * 32:(w + 1) * 32]
        np.testing.assert_array_equal(g - g[0], np.concatenate([[0], np.cumsum(xs)[:-1]]))


# ---- BlockLoad / BlockStore / BlockExchange ---------------------------------------------------------
LOAD_STORE = r"""
#include <cub/block/block_load.cuh>
#include <cub/block/block_store.cuh>
template <cub::BlockLoadAlgorithm LA, cub::BlockStoreAlgorithm SA, int BT, int IPT>
__global__ void round_trip(const int* in, int* out, int* blocked, int valid) {
    typedef cub::BlockLoad<int, BT, IPT, LA> Load;
    typedef cub::BlockStore<int, BT, IPT, SA> Store;
    __shared__ union { typename Load::TempStorage load; typename Store::TempStorage store; } temp;
    int items[IPT];
    const int tile = blockIdx.x * BT * IPT;
    if (valid < 0) Load(temp.load).Load(in + tile, items);
    else Load(temp.load).Load(in + tile, items, valid, -7);
    for (int i = 0; i < IPT; ++i) blocked[tile + threadIdx.x * IPT + i] = items[i];
    for (int i = 0; i < IPT; ++i) items[i] += 1;
    __syncthreads();
    if (valid < 0) Store(temp.store).Store(out + tile, items);
    else Store(temp.store).Store(out + tile, items, valid);
}
"""


LOAD_STORE_CASES = [
    ("TRANSPOSE", "TRANSPOSE", 128, 4), ("WARP_TRANSPOSE", "WARP_TRANSPOSE", 64, 5), ("DIRECT", "DIRECT", 96, 3),
    ("VECTORIZE", "VECTORIZE", 32, 4), ("STRIPED", "STRIPED", 96, 2), ("TRANSPOSE", "WARP_TRANSPOSE_TIMESLICED", 64, 8),
    ("WARP_TRANSPOSE_TIMESLICED", "STRIPED", 64, 3), ("TRANSPOSE", "DIRECT", 200, 3)]
LOAD_STORE_NAMES = [f"round_trip<cub::BLOCK_LOAD_{la}, cub::BLOCK_STORE_{sa}, {bt}, {ipt}>"
                    for la, sa, bt, ipt in LOAD_STORE_CASES]


@pytest.mark.parametrize("la,sa,bt,ipt", LOAD_STORE_CASES)
def test_block_load_store_round_trip(d, la, sa, bt, ipt):
    nb, tile = 3, bt * ipt
    x = np.arange(nb * tile, dtype=np.int32) * 3 + 1
    name = f"round_trip<cub::BLOCK_LOAD_{la}, cub::BLOCK_STORE_{sa}, {bt}, {ipt}>"
    for valid in (-1, tile - bt - 3):
        pin, pout, pbl = d.up(x), d.zeros(nb * tile, np.int32), d.zeros(nb * tile, np.int32)
        run(LOAD_STORE, name, (nb,), (bt,), (pin, pout, pbl, np.int32(valid)), names=LOAD_STORE_NAMES)
        out, blk = Dev.down(pout, nb * tile, np.int32), Dev.down(pbl, nb * tile, np.int32)
        xs = x.reshape(nb, tile)
        if la == "STRIPED":   # thread t holds items i*BT + t
            exp_blk = xs.reshape(nb, ipt, bt).transpose(0, 2, 1).reshape(nb, tile).copy()
            exp_pos = np.arange(tile).reshape(ipt, bt).T.reshape(tile)
        else:
            exp_blk, exp_pos = xs.copy(), np.arange(tile)
        if valid >= 0:
            exp_blk[:, exp_pos >= valid] = -7
        np.testing.assert_array_equal(blk.reshape(nb, tile), exp_blk)
        # stores put item (blocked position p) back at p (STRIPED: the striped position)
        if sa == "STRIPED":
            stored_pos = np.arange(tile).reshape(ipt, bt).T.reshape(tile)
        else:
            stored_pos = np.arange(tile)
        exp_out = np.zeros((nb, tile), np.int32)
        exp_out[:, stored_pos] = exp_blk + 1
        if valid >= 0:
            exp_out[:, valid:] = 0
        np.testing.assert_array_equal(out.reshape(nb, tile), exp_out)


def test_block_exchange_and_direct_functions(d):
    code = r"""
#include <cub/cub.cuh>
extern "C" __global__ void k(const float* in, float* out) {
    typedef cub::BlockExchange<float, 64, 3> Ex;
    __shared__ typename Ex::TempStorage temp;
    float items[3];
    cub::LoadDirectStriped<64>(threadIdx.x, in, items);
    Ex(temp).StripedToBlocked(items);               // now blocked
    __syncthreads();
    int ranks[3];
    for (int i = 0; i < 3; ++i) ranks[i] = 191 - (threadIdx.x * 3 + i);   // reverse the tile
    Ex(temp).ScatterToBlocked(items, ranks);
    cub::StoreDirectBlocked(threadIdx.x, out, items);
}
"""
    x = np.random.default_rng(2).standard_normal(192).astype(np.float32)
    po = d.zeros(192, np.float32)
    run(code, "k", (1,), (64,), (d.up(x), po))
    np.testing.assert_array_equal(Dev.down(po, 192, np.float32), x[::-1])


def test_block_load_from_iterators(d):
    code = r"""
#include <cub/cub.cuh>
struct Square { __device__ float operator()(float v) const { return v * v; } };
extern "C" __global__ void k(const float* in, float* out, int n) {
    typedef cub::BlockLoad<float, 64, 4, cub::BLOCK_LOAD_WARP_TRANSPOSE> LoadF;
    typedef cub::BlockLoad<int, 64, 4> LoadI;
    typedef cub::BlockReduce<float, 64> Red;
    __shared__ union { typename LoadF::TempStorage f; typename LoadI::TempStorage i; typename Red::TempStorage r; } t;
    float a[4], b[4]; int c[4];
    cub::CacheModifiedInputIterator<cub::LOAD_LDG, float> ldg(in);
    LoadF(t.f).Load(ldg + blockIdx.x * 256, a, n - blockIdx.x * 256, 0.0f);
    __syncthreads();
    cub::TransformInputIterator<float, Square, const float*> sq(in + blockIdx.x * 256, Square());
    LoadF(t.f).Load(sq, b);
    __syncthreads();
    LoadI(t.i).Load(cub::CountingInputIterator<int>(blockIdx.x * 256), c);
    __syncthreads();
    float s = Red(t.r).Sum(a);
    for (int i = 0; i < 4; ++i) { out[blockIdx.x * 512 + threadIdx.x * 4 + i] = b[i];
                                  out[blockIdx.x * 512 + 256 + threadIdx.x * 4 + i] = (float)c[i]; }
    if (threadIdx.x == 0) out[1024 + blockIdx.x] = s;
}
"""
    rng = np.random.default_rng(12)
    x = rng.standard_normal(512).astype(np.float32)
    po = d.zeros(1026, np.float32)
    run(code, "k", (2,), (64,), (d.up(x), po, np.int32(500)))
    got = Dev.down(po, 1026, np.float32)
    for b in range(2):
        xb = x[b * 256:(b + 1) * 256].copy()
        assert_bits(got[b * 512:b * 512 + 256], xb * xb)
        np.testing.assert_array_equal(got[b * 512 + 256:(b + 1) * 512], np.arange(b * 256, (b + 1) * 256))
        xb[max(0, 500 - b * 256):] = 0
        items = [fold(list(xb[4 * t:4 * t + 4]), add) for t in range(64)]
        assert_bits(got[1024 + b], ref_block_reduce(items, add, "WARP_REDUCTIONS"))


# ---- BlockRadixSort / BlockHistogram / BlockDiscontinuity -------------------------------------------
RADIX = r"""
#include <cub/block/block_radix_sort.cuh>
template <typename K, int BT, int IPT>
__global__ void sort_kv(const K* keys_in, K* keys_out, int* vals_out, int mode, int begin_bit, int end_bit) {
    typedef cub::BlockRadixSort<K, BT, IPT, int> Sort;
    __shared__ typename Sort::TempStorage temp;
    K keys[IPT]; int vals[IPT];
    for (int i = 0; i < IPT; ++i) { keys[i] = keys_in[threadIdx.x * IPT + i]; vals[i] = threadIdx.x * IPT + i; }
    if (mode == 0) Sort(temp).Sort(keys, vals, begin_bit, end_bit);
    else if (mode == 1) Sort(temp).SortDescending(keys, vals, begin_bit, end_bit);
    else if (mode == 2) Sort(temp).SortBlockedToStriped(keys, vals, begin_bit, end_bit);
    else Sort(temp).SortDescendingBlockedToStriped(keys, vals, begin_bit, end_bit);
    for (int i = 0; i < IPT; ++i) {
        int p = mode < 2 ? threadIdx.x * IPT + i : i * BT + threadIdx.x;
        keys_out[p] = keys[i]; vals_out[p] = vals[i];
    }
}
"""


def ordered_key(k, dtype):
    """CUB's radix order: unsigned bits, sign flipped (ints) / all bits of negatives (floats); -0.0 as +0.0."""
    k = np.asarray(k, dtype)
    if dtype == np.float32:
        b = k.view(np.uint32).astype(np.uint64)
        b = np.where(b & 0x80000000, b ^ 0xFFFFFFFF, b ^ 0x80000000)
        b = np.where(b == (0x80000000 ^ 0xFFFFFFFF), 0x80000000, b)
        return b
    if dtype == np.int32:
        return (k.view(np.uint32) ^ np.uint32(0x80000000)).astype(np.uint64)
    return k.astype(np.uint64)


RADIX_CASES = [(np.float32, "float"), (np.int32, "int"), (np.uint32, "unsigned int")]
RADIX_NAMES = [f"sort_kv<{c}, 64, 3>" for _, c in RADIX_CASES]


@pytest.mark.parametrize("dtype,ctype", RADIX_CASES)
def test_block_radix_sort_pairs(d, dtype, ctype):
    bt, ipt = 64, 3
    n = bt * ipt
    rng = np.random.default_rng(8)
    if dtype == np.float32:
        keys = rng.choice(np.array([-2.5, -0.0, 0.0, 1.0, 3.25, -1e30, 7.0], np.float32), n)
        keys[::7] = rng.standard_normal(keys[::7].size).astype(np.float32)
    elif dtype == np.int32:
        keys = rng.integers(-20, 20, n).astype(np.int32)
    else:
        keys = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    name = f"sort_kv<{ctype}, {bt}, {ipt}>"
    for mode, (b0, b1) in [(0, (0, 32)), (1, (0, 32)), (2, (0, 32)), (3, (0, 32)), (0, (4, 13))]:
        pk, pv = d.zeros(n, dtype), d.zeros(n, np.int32)
        run(RADIX, name, (1,), (bt,), (d.up(keys), pk, pv, np.int32(mode), np.int32(b0), np.int32(b1)), names=RADIX_NAMES)
        ok_ = ordered_key(keys, dtype)
        sub = (ok_ >> np.uint64(b0)) & np.uint64((1 << (b1 - b0)) - 1)
        order = np.argsort(-sub.astype(np.float64) if mode in (1, 3) else sub, kind="stable")
        got_k, got_v = Dev.down(pk, n, dtype), Dev.down(pv, n, np.int32)
        np.testing.assert_array_equal(got_v, order)
        np.testing.assert_array_equal(got_k.view(np.uint32), keys[order].view(np.uint32))


def test_block_histogram_and_discontinuity(d):
    code = r"""
#include <cub/cub.cuh>
struct NotEqual { __device__ bool operator()(const int& a, const int& b) const { return a != b; } };
extern "C" __global__ void k(const unsigned char* samples, unsigned int* hist_out, const int* runs, int* heads, int* tails) {
    typedef cub::BlockHistogram<unsigned char, 128, 4, 256> Hist;
    typedef cub::BlockDiscontinuity<int, 128> Disc;
    __shared__ typename Hist::TempStorage htemp;
    __shared__ typename Disc::TempStorage dtemp;
    __shared__ unsigned int smem_histogram[256];
    unsigned char s[4];
    for (int i = 0; i < 4; ++i) s[i] = samples[threadIdx.x * 4 + i];
    Hist(htemp).Histogram(s, smem_histogram);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += 128) hist_out[b] = smem_histogram[b];
    int r[4], h[4], t[4];
    for (int i = 0; i < 4; ++i) r[i] = runs[threadIdx.x * 4 + i];
    Disc(dtemp).FlagHeadsAndTails(h, t, r, NotEqual());
    for (int i = 0; i < 4; ++i) { heads[threadIdx.x * 4 + i] = h[i]; tails[threadIdx.x * 4 + i] = t[i]; }
}
"""
    rng = np.random.default_rng(6)
    samples = rng.integers(0, 256, 512).astype(np.uint8)
    runs = np.repeat(rng.integers(0, 5, 200), rng.integers(1, 6, 200))[:512].astype(np.int32)
    ph, phd, ptl = d.zeros(256, np.uint32), d.zeros(512, np.int32), d.zeros(512, np.int32)
    run(code, "k", (1,), (128,), (d.up(samples), ph, d.up(runs), phd, ptl))
    np.testing.assert_array_equal(Dev.down(ph, 256, np.uint32), np.bincount(samples, minlength=256))
    exp_h = np.concatenate([[1], runs[1:] != runs[:-1]]).astype(np.int32)
    exp_t = np.concatenate([runs[:-1] != runs[1:], [1]]).astype(np.int32)
    np.testing.assert_array_equal(Dev.down(phd, 512, np.int32), exp_h)
    np.testing.assert_array_equal(Dev.down(ptl, 512, np.int32), exp_t)


# ---- how code usually spells it; what is refused ----------------------------------------------------
def test_typedef_at_file_scope_and_using_namespace(d):
    """The kernel body names only a typedef, TempStorage and Sum: it must still run on fibers."""
    code = r"""
#include <cub/block/block_reduce.cuh>
using namespace cub;
typedef BlockReduce<double, 64, BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY> BR;
__device__ double helper(BR::TempStorage& t, double v) { return BR(t).Sum(v); }
extern "C" __global__ void k(const double* in, double* out) {
    __shared__ BR::TempStorage t;
    double s = helper(t, in[threadIdx.x]);
    if (threadIdx.x == 0) *out = s;
}
"""
    x = np.random.default_rng(7).standard_normal(64)
    po = d.zeros(1, np.float64)
    run(code, "k", (1,), (64,), (d.up(x), po))
    parts = [x[t] + x[32 + t] for t in range(32)]   # fold: own + segment (one item)
    v = parts
    for off in (1, 2, 4, 8, 16):
        v = [v[i] + v[i + off] if i + off < 32 else v[i] for i in range(32)]
    assert Dev.down(po, 1, np.float64)[0] == v[0]


@pytest.mark.parametrize("src,needle", [
    ("#include <cub/cub.cuh>\nextern \"C\" __global__ void k(float* x) {\n"
     "  size_t bytes = 0; cub::DeviceReduce::Sum(nullptr, bytes, x, x + 1, 10);\n}\n",
     "cub::DeviceReduce is a device-wide"),
    ("#include <cub/device/device_scan.cuh>\nextern \"C\" __global__ void k(float* x) {}\n",
     "device-wide CUB algorithms (cub::Device*) are host APIs"),
    ("#include <cub/cub.cuh>\nextern \"C\" __global__ void k(float* x) {\n"
     "  __shared__ cub::BlockShuffle<float, 128>::TempStorage t;\n}\n",
     "cub::BlockShuffle is not provided by the aclnn_py CUDA emulator"),
])
def test_unprovided_parts_are_clear_compile_errors(src, needle):
    with pytest.raises(CompileException) as e:
        A.RawModule(code=src).get_function("k")
    assert needle in str(e.value)
