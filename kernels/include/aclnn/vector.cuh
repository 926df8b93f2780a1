// aclnn/vector.cuh — 16-byte vector loads/stores of N elements as f32, alignment and raw bits
//
// Part of the shared device code of kernels/ (see aclnn_common.cuh, which includes every part).
// Plain CUDA C++17 for NVRTC, nvcc and the host emulator: no std headers, no inline PTX.
#pragma once

#include "convert.cuh"

namespace aclnn {
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

}  // namespace aclnn
