// aclnn_common.cuh — shared device helpers for every kernel family in kernels/.
//
// Compiled three ways: NVRTC (CuPy RawModule, -std=c++17, -ftz=true), nvcc (compile checks) and
// g++ through the host emulator (aclnn_py/emulator). Keep it plain CUDA C++17:
//   * no inline PTX, no CUB, no cooperative groups, no __CUDA_ARCH__ branches;
//   * warp collectives are the *_sync forms with an explicit full mask, and every helper below
//     that uses one must be called by all 32 lanes of the warp (documented per helper);
//   * no std headers (NVRTC has none); only cuda_fp16.h / cuda_bf16.h.
//
// Contents
//   conversions      to_f32 / from_f32<T> / to_f64 for float, double, int, __half, __nv_bfloat16
//   vectors          load_vec_f32<N> / store_vec_f32<N> (4/8/16-byte accesses), is_aligned,
//                    raw_bits / bits_to_f32
//   reductions       warp_sum / block_sum (fixed order: shfl_down trees, lane/thread 0 holds result)
//   Welford          Welford<F, I> with Chan's parallel merge; warp_welford (fixed order)
//   bit packing      warp_group_or (OR across aligned lane groups)
//   grid-stride      ACLNN_GRID_STRIDE_LOOP, global_thread_id, grid_threads
//
// Reproducibility: every reduction here combines in an order fixed by the lane / thread index
// only (never by arrival order), so results are bitwise identical run to run.
#pragma once

#include <cuda_fp16.h>
#include <cuda_bf16.h>

namespace aclnn {

// __launch_bounds__ where the compiler knows it (nvcc, NVRTC); empty elsewhere (host emulator).
#if defined(__CUDACC_RTC__) || defined(__launch_bounds__)
#define ACLNN_LAUNCH_BOUNDS(...) __launch_bounds__(__VA_ARGS__)
#else
#define ACLNN_LAUNCH_BOUNDS(...)
#endif

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarpSize = 32;

// ------------------------------------------------------------------------------------------------
// conversions (f16/bf16 are storage types; arithmetic is always f32 or f64)
// ------------------------------------------------------------------------------------------------
__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(double v) { return static_cast<float>(v); }
__device__ __forceinline__ float to_f32(int v) { return static_cast<float>(v); }
__device__ __forceinline__ float to_f32(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }

__device__ __forceinline__ double to_f64(float v) { return static_cast<double>(v); }
__device__ __forceinline__ double to_f64(double v) { return v; }
__device__ __forceinline__ double to_f64(int v) { return static_cast<double>(v); }
__device__ __forceinline__ double to_f64(__half v) { return static_cast<double>(__half2float(v)); }
__device__ __forceinline__ double to_f64(__nv_bfloat16 v) { return static_cast<double>(__bfloat162float(v)); }

template <typename T> __device__ __forceinline__ T from_f32(float v);
template <> __device__ __forceinline__ float from_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ double from_f32<double>(float v) { return static_cast<double>(v); }
template <> __device__ __forceinline__ __half from_f32<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// Round a double to T. f16/bf16 go through f32 (double rounding: at most one extra half-ulp of
// f32, far below the f16/bf16 ulp).
template <typename T> __device__ __forceinline__ T from_f64(double v) { return from_f32<T>(static_cast<float>(v)); }
template <> __device__ __forceinline__ double from_f64<double>(double v) { return v; }

template <typename T> __device__ __forceinline__ float load_f32(const T* p) { return to_f32(*p); }
template <typename T> __device__ __forceinline__ void store_f32(T* p, float v) { *p = from_f32<T>(v); }

// ------------------------------------------------------------------------------------------------
// vectors
// ------------------------------------------------------------------------------------------------
// Elements of T in one 16-byte vector (float: 4, __half / __nv_bfloat16: 8).
template <typename T>
struct Vec16 {
  static constexpr int value = 16 / static_cast<int>(sizeof(T));
};

__device__ __forceinline__ bool is_aligned(const void* p, unsigned long long bytes) {
  return (reinterpret_cast<unsigned long long>(p) & (bytes - 1ull)) == 0ull;
}

// Raw bits of one element, and back.
__device__ __forceinline__ unsigned raw_bits(float v) { return __float_as_uint(v); }
__device__ __forceinline__ unsigned raw_bits(__half v) { return __half_as_ushort(v); }
__device__ __forceinline__ unsigned raw_bits(__nv_bfloat16 v) { return __bfloat16_as_ushort(v); }

template <typename T> __device__ __forceinline__ float bits_to_f32(unsigned b);
template <> __device__ __forceinline__ float bits_to_f32<float>(unsigned b) { return __uint_as_float(b); }
template <> __device__ __forceinline__ float bits_to_f32<__half>(unsigned b) {
  return __half2float(__ushort_as_half(static_cast<unsigned short>(b & 0xffffu)));
}
template <> __device__ __forceinline__ float bits_to_f32<__nv_bfloat16>(unsigned b) { return __uint_as_float(b << 16); }

// 4-, 8- or 16-byte vector of raw 32-bit words.
template <int W> struct WordVec;
template <> struct WordVec<1> { using type = unsigned; };
template <> struct WordVec<2> { using type = uint2; };
template <> struct WordVec<4> { using type = uint4; };

// Vector load / store of N elements at base[idx .. idx+N). Requirements: `base` aligned to
// N*sizeof(T) bytes and idx % N == 0. The access is written as an index into a vector-typed base
// pointer (not as a cast of base + idx): nvcc keeps the vector width only in that form when the
// index comes from loop induction variables (a cast of a computed pointer was split into scalar
// stores in the NCX loops).
template <int N, typename T>
__device__ __forceinline__ void load_vec_f32(const T* __restrict__ base, long long idx, float (&f)[N]) {
  constexpr int kW = N * static_cast<int>(sizeof(T)) / 4;
  static_assert(kW == 1 || kW == 2 || kW == 4, "4-, 8- or 16-byte vectors");
  using V = typename WordVec<kW>::type;
  const V v = reinterpret_cast<const V*>(base)[static_cast<unsigned long long>(idx) / N];
  unsigned w[kW];
  if constexpr (kW == 4) {
    w[0] = v.x; w[1] = v.y; w[2] = v.z; w[3] = v.w;
  } else if constexpr (kW == 2) {
    w[0] = v.x; w[1] = v.y;
  } else {
    w[0] = v;
  }
  if constexpr (sizeof(T) == 4) {
#pragma unroll
    for (int i = 0; i < N; ++i) f[i] = bits_to_f32<T>(w[i]);
  } else {
    static_assert(sizeof(T) == 2, "2- or 4-byte element types");
#pragma unroll
    for (int i = 0; i < kW; ++i) {
      f[2 * i] = bits_to_f32<T>(w[i] & 0xffffu);
      f[2 * i + 1] = bits_to_f32<T>(w[i] >> 16);
    }
  }
}

template <int N, typename T>
__device__ __forceinline__ void store_vec_f32(T* __restrict__ base, long long idx, const float (&f)[N]) {
  constexpr int kW = N * static_cast<int>(sizeof(T)) / 4;
  static_assert(kW == 1 || kW == 2 || kW == 4, "4-, 8- or 16-byte vectors");
  using V = typename WordVec<kW>::type;
  unsigned w[kW];
  if constexpr (sizeof(T) == 4) {
#pragma unroll
    for (int i = 0; i < kW; ++i) w[i] = raw_bits(from_f32<T>(f[i]));
  } else {
    static_assert(sizeof(T) == 2, "2- or 4-byte element types");
#pragma unroll
    for (int i = 0; i < kW; ++i)
      w[i] = raw_bits(from_f32<T>(f[2 * i])) | (raw_bits(from_f32<T>(f[2 * i + 1])) << 16);
  }
  V v;
  if constexpr (kW == 4) {
    v.x = w[0]; v.y = w[1]; v.z = w[2]; v.w = w[3];
  } else if constexpr (kW == 2) {
    v.x = w[0]; v.y = w[1];
  } else {
    v = w[0];
  }
  reinterpret_cast<V*>(base)[static_cast<unsigned long long>(idx) / N] = v;
}

// ------------------------------------------------------------------------------------------------
// sums in a fixed order
// ------------------------------------------------------------------------------------------------
// All 32 lanes must call. Lane 0 receives the total (other lanes: partial sums).
template <typename A>
__device__ __forceinline__ A warp_sum(A v) {
#pragma unroll
  for (int o = kWarpSize / 2; o > 0; o >>= 1) v += __shfl_down_sync(kFullMask, v, o);
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

// Fold a chunk of `cnt` values (v[i] valid where ok[i]) into `w`, two-pass inside the chunk with
// the compensated correction  m2 = sum d^2 - (sum d)^2 / cnt  (d = v - chunk mean).
template <int K, typename F>
__device__ __forceinline__ void welford_add_chunk(Welford<F, int>& w, const F (&v)[K], const bool (&ok)[K]) {
  F s = F(0);
  int cnt = 0;
#pragma unroll
  for (int i = 0; i < K; ++i) {
    if (ok[i]) {
      s += v[i];
      ++cnt;
    }
  }
  if (cnt == 0) return;
  const F inv = F(1) / static_cast<F>(cnt);
  const F cm = s * inv;
  F q = F(0), e = F(0);
#pragma unroll
  for (int i = 0; i < K; ++i) {
    if (ok[i]) {
      const F d = v[i] - cm;
      q += d * d;
      e += d;
    }
  }
  Welford<F, int> c;
  c.mean = cm + e * inv;
  c.m2 = q - e * e * inv;
  if (c.m2 < F(0)) c.m2 = F(0);
  c.n = cnt;
  w = welford_merge(w, c);
}

// All 32 lanes must call. Lane 0 receives the merge of all lanes, in the fixed tree order
// (offsets 16, 8, 4, 2, 1).
template <typename F, typename I>
__device__ __forceinline__ Welford<F, I> warp_welford(Welford<F, I> w) {
#pragma unroll
  for (int o = kWarpSize / 2; o > 0; o >>= 1) {
    Welford<F, I> b;
    b.mean = __shfl_down_sync(kFullMask, w.mean, o);
    b.m2 = __shfl_down_sync(kFullMask, w.m2, o);
    b.n = __shfl_down_sync(kFullMask, w.n, o);
    w = welford_merge(w, b);
  }
  return w;
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

// ------------------------------------------------------------------------------------------------
// grid-stride helpers (1-D)
// ------------------------------------------------------------------------------------------------
__device__ __forceinline__ long long global_thread_id() {
  return static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ long long grid_threads() {
  return static_cast<long long>(gridDim.x) * blockDim.x;
}
#define ACLNN_GRID_STRIDE_LOOP(i, n) \
  for (long long i = ::aclnn::global_thread_id(); i < static_cast<long long>(n); i += ::aclnn::grid_threads())

}  // namespace aclnn
