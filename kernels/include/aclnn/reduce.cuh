// aclnn/reduce.cuh — warp and block reductions in a fixed order (bitwise reproducible), Welford/Chan, lane-group OR
//
// Part of the shared device code of kernels/ (see aclnn_common.cuh, which includes every part).
// Plain CUDA C++17 for NVRTC, nvcc and the host emulator: no std headers, no inline PTX.
#pragma once

#include "base.cuh"
#include "convert.cuh"

namespace aclnn {
// ------------------------------------------------------------------------------------------------
// sums in a fixed order
// ------------------------------------------------------------------------------------------------
// All 32 lanes must call. Lane 0 receives the total (other lanes: partial sums).
// `active` (the same on every lane): only lanes [0, active) hold values, the others hold +0.0 (a sum
// that starts at +0.0 is never -0.0, so v + 0.0 == v bitwise). A round whose sources all lie at or
// beyond `active` then changes no lane below it and is skipped: the same bits, fewer shuffles.
template <typename A>
__device__ __forceinline__ A warp_sum(A v, int active = kWarpSize) {
#pragma unroll
  for (int o = kWarpSize / 2; o > 0; o >>= 1)
    if (o < active) v += __shfl_down_sync(kFullMask, v, o);
  return v;
}

// Sum over the whole block (any 1-, 2- or 3-D shape whose thread count is a multiple of 32 and
// at most 1024). Every thread of the block must call it (it contains __syncthreads). `smem` must
// hold blockDim.x*blockDim.y*blockDim.z/32 elements. Thread (0,0,0) receives the total.
template <typename A>
__device__ __forceinline__ A block_sum(A v, A* smem) {
  const int tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int nwarps = (blockDim.x * blockDim.y * blockDim.z) / kWarpSize;
  v = warp_sum(v);
  __syncthreads();  // smem may still be read by a previous call
  if ((tid & (kWarpSize - 1)) == 0) smem[tid / kWarpSize] = v;
  __syncthreads();
  if (tid == 0) {
    A t = smem[0];
    for (int w = 1; w < nwarps; ++w) t += smem[w];
    v = t;
  }
  return v;
}

// ------------------------------------------------------------------------------------------------
// Welford / Chan
// ------------------------------------------------------------------------------------------------
// mean and m2 = sum of squared deviations from mean, over n elements. F = float or double,
// I = int or long long. merge() is Chan et al.'s pairwise update; n == 0 on either side is exact.
template <typename F, typename I>
struct Welford {
  F mean;
  F m2;
  I n;
};

template <typename F, typename I>
__device__ __forceinline__ Welford<F, I> welford_merge(Welford<F, I> a, const Welford<F, I>& b) {
  if (b.n == 0) return a;
  if (a.n == 0) return b;
  const I n = a.n + b.n;
  const F fb = static_cast<F>(b.n) / static_cast<F>(n);
  const F delta = b.mean - a.mean;
  a.mean = a.mean + delta * fb;
  a.m2 = a.m2 + b.m2 + delta * delta * static_cast<F>(a.n) * fb;
  a.n = n;
  return a;
}

// Fold one value into `w` (Welford's update; the tails of the chunked loops).
template <typename F>
__device__ __forceinline__ void welford_add_one(Welford<F, int>& w, F v) {
  w.n += 1;
  const F delta = v - w.mean;
  w.mean += delta / static_cast<F>(w.n);
  w.m2 += delta * (v - w.mean);
}

// Sum of K values in one fixed order: L interleaved partial sums (partial l adds v[l], v[l+L],
// v[l+2L], ... in order), then a fixed tree over the partials. A plain running sum is one chain of
// K dependent adds (the host emulator's CPU thread runs it at the add latency: NCX backward
// partials 2.3 -> 1.5 ms on 8x64x56x56); L independent chains overlap, on a GPU too.
template <int K, typename F>
__device__ __forceinline__ F chunk_sum(const F (&v)[K]) {
  constexpr int L = (K % 4 == 0) ? 4 : ((K % 2 == 0) ? 2 : 1);
  F p[L];
#pragma unroll
  for (int l = 0; l < L; ++l) p[l] = v[l];
#pragma unroll
  for (int i = L; i < K; ++i) p[i % L] += v[i];
  if constexpr (L == 4) return (p[0] + p[1]) + (p[2] + p[3]);
  else if constexpr (L == 2) return p[0] + p[1];
  else return p[0];
}

// The statistics of one chunk of `cnt` values (v[i] valid where ok[i]; cnt > 0, inv = 1 / cnt):
// two-pass inside the chunk with the compensated correction  m2 = sum d^2 - (sum d)^2 / cnt
// (d = v - chunk mean), every sum in chunk_sum's order.
template <int K, typename F>
__device__ __forceinline__ void chunk_moments(const F (&v)[K], const bool (&ok)[K], F inv, F& mean, F& m2) {
  F x[K];
#pragma unroll
  for (int i = 0; i < K; ++i) x[i] = ok[i] ? v[i] : F(0);
  const F cm = chunk_sum(x) * inv;
  F d[K], dd[K];
#pragma unroll
  for (int i = 0; i < K; ++i) {
    d[i] = ok[i] ? v[i] - cm : F(0);
    dd[i] = d[i] * d[i];
  }
  const F e = chunk_sum(d);
  mean = cm + e * inv;
  m2 = chunk_sum(dd) - e * e * inv;
  if (m2 < F(0)) m2 = F(0);
}

// 1 / cnt for a chunk of cnt of K values: a full chunk (the common case) divides by the constant K,
// folded at compile time (the same bits).
template <int K, typename F>
__device__ __forceinline__ F chunk_inv(int cnt) {
  return cnt == K ? F(1) / static_cast<F>(K) : F(1) / static_cast<F>(cnt);
}

template <int K>
__device__ __forceinline__ int count_true(const bool (&ok)[K]) {
  int cnt = 0;
#pragma unroll
  for (int i = 0; i < K; ++i) cnt += ok[i] ? 1 : 0;
  return cnt;
}

// Fold a chunk of values (v[i] valid where ok[i]) into `w` (Chan's merge of chunk_moments).
template <int K, typename F>
__device__ __forceinline__ void welford_add_chunk(Welford<F, int>& w, const F (&v)[K], const bool (&ok)[K]) {
  const int cnt = count_true(ok);
  if (cnt == 0) return;
  const F inv = chunk_inv<K, F>(cnt);
  Welford<F, int> c;
  chunk_moments(v, ok, inv, c.mean, c.m2);
  c.n = cnt;
  w = welford_merge(w, c);
}

// ------------------------------------------------------------------------------------------------
// G series in lock step ("lanes")
// ------------------------------------------------------------------------------------------------
// A thread that reduces G series at once (NHWC: its 4 channels; NCHW: 4 interleaved sub-series of one
// channel, folded at the end) keeps them as plain arrays (mean[G], m2[G], one count n; sums s[G]) and
// updates them with loops over the series that have no branch. On a GPU these are G independent
// chains; the host emulator's g++ keeps the G series in one SIMD register. (An array of Welford
// structs, a per-series `if`, or a `x < 0 ? 0 : x` per series made g++ 12 emit one scalar chain per
// series. Statistics partials on 8x64x56x56 f32, host emulator: NCHW 0.93 -> 0.42 ms, NHWC 1.12 -> 0.90.)

// s[k] = sum over the R rows of v[j][k], in a fixed tree ((0+1)+(2+3) for R = 4).
template <int R, int G, typename F>
__device__ __forceinline__ void row_sums(const F (&v)[R][G], F (&s)[G]) {
  if constexpr (R == 4) {
#pragma unroll
    for (int k = 0; k < G; ++k) s[k] = (v[0][k] + v[1][k]) + (v[2][k] + v[3][k]);
  } else if constexpr (R == 2) {
#pragma unroll
    for (int k = 0; k < G; ++k) s[k] = v[0][k] + v[1][k];
  } else {
#pragma unroll
    for (int k = 0; k < G; ++k) s[k] = v[0][k];
#pragma unroll
    for (int j = 1; j < R; ++j)
#pragma unroll
      for (int k = 0; k < G; ++k) s[k] += v[j][k];
  }
}

// Fold R rows of G series (every row valid) into (mean, m2, n): per series the chunk's two-pass
// moments with the compensated correction (chunk_moments), then Chan's merge with the shared count.
// The chunk's m2 may come out below zero by a rounding (sum d^2 - (sum d)^2/R): it is not clamped here
// (a per-series select); the caller clamps the thread's final m2 once (welford_lanes_get).
// n == 0 before: fb = 1 and n_a = 0, so mean = the chunk's mean and m2 = its m2 (welford_merge's b).
template <int R, int G, typename F>
__device__ __forceinline__ void welford_lanes_add(F (&mean)[G], F (&m2)[G], int& n, const F (&v)[R][G]) {
  const F inv = F(1) / static_cast<F>(R);
  const int nn = n + R;
  const F fb = static_cast<F>(R) / static_cast<F>(nn);
  const F nafb = static_cast<F>(n) * fb;
  F s[G], cm[G], e[G], q[G], d[R][G], dd[R][G];
  row_sums(v, s);
#pragma unroll
  for (int k = 0; k < G; ++k) cm[k] = s[k] * inv;
#pragma unroll
  for (int j = 0; j < R; ++j)
#pragma unroll
    for (int k = 0; k < G; ++k) d[j][k] = v[j][k] - cm[k];
#pragma unroll
  for (int j = 0; j < R; ++j)
#pragma unroll
    for (int k = 0; k < G; ++k) dd[j][k] = d[j][k] * d[j][k];
  row_sums(d, e);
  row_sums(dd, q);
#pragma unroll
  for (int k = 0; k < G; ++k) {
    const F cmean = cm[k] + e[k] * inv;
    const F cm2 = q[k] - e[k] * e[k] * inv;
    const F delta = cmean - mean[k];
    mean[k] = mean[k] + delta * fb;
    m2[k] = m2[k] + cm2 + delta * delta * nafb;
  }
  n = nn;
}

// Series k of a lanes state as one Welford, its m2 clamped at zero (see welford_lanes_add).
template <int G, typename F>
__device__ __forceinline__ Welford<F, int> welford_lanes_get(const F (&mean)[G], const F (&m2)[G], int n, int k) {
  Welford<F, int> w;
  w.mean = mean[k];
  w.m2 = m2[k] < F(0) ? F(0) : m2[k];
  w.n = n;
  return w;
}

// Fold R rows of G series (v[j][k]: row j of series k; row j valid where ok[j]) into a lanes state
// (mean[G], m2[G], n; see welford_lanes_add): the series see the same rows, so they share one count and
// one merge factor (one division per chunk for all G; NHWC statistics partials 3.4 -> 1.4-1.7 ms on
// 8x64x56x56, host emulator). All rows valid (the common case): welford_lanes_add; else the valid rows
// per series (chunk_moments), same formulas as welford_merge.
template <int R, int G, typename F>
__device__ __forceinline__ void welford_add_rows(F (&mean)[G], F (&m2)[G], int& n, const F (&v)[R][G],
                                                 const bool (&ok)[R]) {
  const int cnt = count_true(ok);
  if (cnt == R) {
    welford_lanes_add(mean, m2, n, v);
    return;
  }
  if (cnt == 0) return;
  const F inv = F(1) / static_cast<F>(cnt);
  const int nn = n + cnt;
  const F fb = static_cast<F>(cnt) / static_cast<F>(nn);
  const F na = static_cast<F>(n);
#pragma unroll
  for (int k = 0; k < G; ++k) {
    F col[R];
#pragma unroll
    for (int j = 0; j < R; ++j) col[j] = v[j][k];
    F cmean, cm2;
    chunk_moments(col, ok, inv, cmean, cm2);
    const F delta = cmean - mean[k];
    mean[k] = mean[k] + delta * fb;
    m2[k] = m2[k] + cm2 + delta * delta * na * fb;
  }
  n = nn;
}

// All 32 lanes must call. Lane 0 receives the merge of all lanes, in the fixed tree order
// (offsets 16, 8, 4, 2, 1). `active` as in warp_sum: lanes at or beyond it hold n == 0, which a
// merge leaves unchanged, so the rounds that only read such lanes are skipped (same bits).
template <typename F, typename I>
__device__ __forceinline__ Welford<F, I> warp_welford(Welford<F, I> w, int active = kWarpSize) {
#pragma unroll
  for (int o = kWarpSize / 2; o > 0; o >>= 1) {
    if (o >= active) continue;
    Welford<F, I> b;
    if constexpr (sizeof(F) == 4) {  // float: mean and m2 travel in one 64-bit shuffle (same bits)
      const unsigned long long q = __shfl_down_sync(
          kFullMask, (static_cast<unsigned long long>(__float_as_uint(w.m2)) << 32) | __float_as_uint(w.mean), o);
      b.mean = __uint_as_float(static_cast<unsigned>(q));
      b.m2 = __uint_as_float(static_cast<unsigned>(q >> 32));
    } else {
      b.mean = __shfl_down_sync(kFullMask, w.mean, o);
      b.m2 = __shfl_down_sync(kFullMask, w.m2, o);
    }
    b.n = __shfl_down_sync(kFullMask, w.n, o);
    w = welford_merge(w, b);
  }
  return w;
}

// ------------------------------------------------------------------------------------------------
// all-reduce: every lane / thread gets the result
// ------------------------------------------------------------------------------------------------
// An xor butterfly: every lane ends with the bitwise same value (at each step lane i computes
// v_i + v_{i^o} and lane i^o computes v_{i^o} + v_i, equal since + is commutative), in an order fixed
// by the lane index. All 32 lanes must call. A = float or double (max: fmaxf / fmax).
__device__ __forceinline__ float all_max2(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double all_max2(double a, double b) { return fmax(a, b); }

template <typename A>
__device__ __forceinline__ A warp_allsum(A v) {
#pragma unroll
  for (int o = kWarpSize / 2; o > 0; o >>= 1) v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}

template <typename A>
__device__ __forceinline__ A warp_allmax(A v) {
#pragma unroll
  for (int o = kWarpSize / 2; o > 0; o >>= 1) v = all_max2(v, __shfl_xor_sync(kFullMask, v, o));
  return v;
}

// Sum (MAX = false) or max (MAX = true) over a 1-D block of a multiple of 32 threads (at most
// 1024); every thread gets the result: warps first (butterfly), then the warp results in warp-index
// order. Every thread must call (it contains __syncthreads); `smem` holds 32 elements of A (float or
// double) and is free again when the call returns.
template <bool MAX, typename A>
__device__ __forceinline__ A block_allreduce(A v, A* smem) {
  const int lane = threadIdx.x & (kWarpSize - 1), warp = threadIdx.x / kWarpSize;
  const int nwarps = blockDim.x / kWarpSize;
  v = MAX ? warp_allmax(v) : warp_allsum(v);
  __syncthreads();                        // a previous call may still read smem
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  A t = smem[0];
  for (int w = 1; w < nwarps; ++w) t = MAX ? all_max2(t, smem[w]) : t + smem[w];
  return t;
}

// ------------------------------------------------------------------------------------------------
// bit packing
// ------------------------------------------------------------------------------------------------
// OR of `bits` over aligned groups of `group` lanes (group: power of two, 1..32). All 32 lanes
// must call with the same `group`. Every lane of a group receives the group's OR.
__device__ __forceinline__ unsigned warp_group_or(unsigned bits, int group) {
  for (int o = group >> 1; o > 0; o >>= 1) bits |= __shfl_xor_sync(kFullMask, bits, o);
  return bits;
}
}  // namespace aclnn
