// aclnn/elementwise.cuh — one elementwise kernel template for every pointwise op family.
//
// An op is a functor `Op` built from `OpParams` (up to four scalar attributes, as double) with
//     template <typename C> C operator()(C x) const            (unary)
//     template <typename C> C operator()(C g, C x) const       (binary: gradient, saved tensor)
// where C is the compute type of the storage type T: float for float / __half / __nv_bfloat16,
// double for double, T itself for integer types. Loads and stores are in T.
//
// Kernels
//   ew_unary<T, Op>(x, y, n, chunk, p)           y[i] = op(x[i]), all dense in one order
//   ew_binary<T, Op>(a, b, y, n, chunk, p)       y[i] = op(a[i], b[i])
//   ew_binary_bcast<T, Op>(a, b, y, tile, geom, p)     y dense; a, b at per-dim strides (0 = broadcast)
// The flat kernels give each thread runs of `chunk` consecutive elements (grid-stride over runs):
// on a GPU chunk = one 16-byte vector per thread (neighbouring threads, neighbouring vectors); on
// the host emulator one long run per thread, so the inner loop is a plain contiguous loop (no
// barrier or warp collective anywhere here: the emulator runs these without fibers).
// A run of exactly one 16-byte vector of f32/f16/bf16 storage at 16-byte-aligned pointers is loaded
// and stored as one vector (ew_vec_*): element by element, a lane's accesses at a 16-byte stride
// left each warp access uncoalesced, and an H200 ran the activations at 34 % (f32) and 18 % (bf16)
// of its HBM bandwidth, 2.4-4.4x behind PyTorch.
// In place: y may be a (or b) exactly; every element is read by the thread that writes it.
#pragma once

#include "aclnn_common.cuh"

namespace aclnn {

struct OpParams {
  double a, b, c, d;
};

template <typename T> struct ComputeOf { using type = T; };
template <> struct ComputeOf<float> { using type = float; };
template <> struct ComputeOf<__half> { using type = float; };
template <> struct ComputeOf<__nv_bfloat16> { using type = float; };
template <> struct ComputeOf<double> { using type = double; };

template <typename T> __device__ __forceinline__ typename ComputeOf<T>::type ew_load(const T* p) { return *p; }
template <> __device__ __forceinline__ float ew_load<__half>(const __half* p) { return __half2float(*p); }
template <> __device__ __forceinline__ float ew_load<__nv_bfloat16>(const __nv_bfloat16* p) {
  return __bfloat162float(*p);
}
template <typename T, typename C> __device__ __forceinline__ void ew_store(T* p, C v) { *p = static_cast<T>(v); }
template <> __device__ __forceinline__ void ew_store<__half, float>(__half* p, float v) { *p = __float2half_rn(v); }
template <> __device__ __forceinline__ void ew_store<__nv_bfloat16, float>(__nv_bfloat16* p, float v) {
  *p = __float2bfloat16_rn(v);
}

// Storage types computed in f32 whose 16-byte vectors aclnn/vector.cuh loads and stores.
template <typename T> struct EwVec { static constexpr bool value = false; };
template <> struct EwVec<float> { static constexpr bool value = true; };
template <> struct EwVec<__half> { static constexpr bool value = true; };
template <> struct EwVec<__nv_bfloat16> { static constexpr bool value = true; };

// Broadcast geometry: dims in the computation's memory order (outer -> inner), already coalesced.
// y is dense in that order; a and b are read at their per-dim strides (elements; 0 = broadcast).
struct EwGeom {
  int rank;
  int pad;
  long long numel;
  long long sizes[8];
  long long sa[8];
  long long sb[8];
};

}  // namespace aclnn

template <typename T, typename Op>
__global__ void ew_unary(const T* x, T* y, long long n, long long chunk, aclnn::OpParams p) {
  using C = typename aclnn::ComputeOf<T>::type;
  const Op op(p);
  if constexpr (aclnn::EwVec<T>::value) {
    constexpr int V = aclnn::Vec16<T>::value;
    if (chunk == V && aclnn::is_aligned(x, 16) && aclnn::is_aligned(y, 16)) {
      const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
      const long long threads = (long long)gridDim.x * blockDim.x, full = n / V * V;
      for (long long s = first * V; s < full; s += threads * V) {
        float f[V];
        aclnn::load_vec_f32<V>(x, s, f);
        for (int k = 0; k < V; ++k) f[k] = op(f[k]);
        aclnn::store_vec_f32<V>(y, s, f);
      }
      for (long long i = full + first; i < n; i += threads) aclnn::ew_store<T, C>(y + i, op(aclnn::ew_load(x + i)));
      return;
    }
  }
  const long long step = (long long)gridDim.x * blockDim.x * chunk;
  for (long long s = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * chunk; s < n; s += step) {
    const long long e = s + chunk < n ? s + chunk : n;
    for (long long i = s; i < e; ++i) aclnn::ew_store<T, C>(y + i, op(aclnn::ew_load(x + i)));
  }
}

template <typename T, typename Op>
__global__ void ew_binary(const T* a, const T* b, T* y, long long n, long long chunk, aclnn::OpParams p) {
  using C = typename aclnn::ComputeOf<T>::type;
  const Op op(p);
  if constexpr (aclnn::EwVec<T>::value) {
    constexpr int V = aclnn::Vec16<T>::value;
    if (chunk == V && aclnn::is_aligned(a, 16) && aclnn::is_aligned(b, 16) && aclnn::is_aligned(y, 16)) {
      const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
      const long long threads = (long long)gridDim.x * blockDim.x, full = n / V * V;
      for (long long s = first * V; s < full; s += threads * V) {
        float fa[V], fb[V];
        aclnn::load_vec_f32<V>(a, s, fa);
        aclnn::load_vec_f32<V>(b, s, fb);
        for (int k = 0; k < V; ++k) fa[k] = op(fa[k], fb[k]);
        aclnn::store_vec_f32<V>(y, s, fa);
      }
      for (long long i = full + first; i < n; i += threads)
        aclnn::ew_store<T, C>(y + i, op(aclnn::ew_load(a + i), aclnn::ew_load(b + i)));
      return;
    }
  }
  const long long step = (long long)gridDim.x * blockDim.x * chunk;
  for (long long s = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * chunk; s < n; s += step) {
    const long long e = s + chunk < n ? s + chunk : n;
    for (long long i = s; i < e; ++i)
      aclnn::ew_store<T, C>(y + i, op(aclnn::ew_load(a + i), aclnn::ew_load(b + i)));
  }
}

template <typename T, typename Op>
__global__ void ew_binary_bcast(const T* a, const T* b, T* y, long long tile, aclnn::EwGeom g, aclnn::OpParams p) {
  using C = typename aclnn::ComputeOf<T>::type;
  const Op op(p);
  const long long inner = g.sizes[g.rank - 1], sai = g.sa[g.rank - 1], sbi = g.sb[g.rank - 1];
  // work unit = a tile of `tile` consecutive elements of one run of the innermost dim: the outer
  // index is unravelled once per tile, not per element
  const long long tpr = (inner + tile - 1) / tile, units = g.numel / inner * tpr;
  const long long step = (long long)gridDim.x * blockDim.x;
  for (long long u = (long long)blockIdx.x * blockDim.x + threadIdx.x; u < units; u += step) {
    const long long r = u / tpr, j0 = (u - r * tpr) * tile;
    const long long j1 = j0 + tile < inner ? j0 + tile : inner;
    long long q = r, oa = 0, ob = 0;
    for (int k = g.rank - 2; k >= 0; --k) {
      const long long idx = q % g.sizes[k];
      q /= g.sizes[k];
      oa += idx * g.sa[k];
      ob += idx * g.sb[k];
    }
    T* yr = y + r * inner;
    for (long long j = j0; j < j1; ++j)
      aclnn::ew_store<T, C>(yr + j, op(aclnn::ew_load(a + oa + j * sai), aclnn::ew_load(b + ob + j * sbi)));
  }
}
