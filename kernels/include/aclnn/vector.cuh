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

// Both 16-bit elements of a 32-bit word (low first) as f32, and back: the __half2 / __nv_bfloat162
// conversions (one cvt.rn.f16x2.f32 / bf16x2 for the store on sm_80+; on the host emulator one
// F16C instruction per pair instead of one per element).
template <typename T> __device__ __forceinline__ void word_to_f32x2(unsigned w, float& lo, float& hi);
template <> __device__ __forceinline__ void word_to_f32x2<__half>(unsigned w, float& lo, float& hi) {
  const float2 p = __half22float2(*reinterpret_cast<const __half2*>(&w));
  lo = p.x;
  hi = p.y;
}
template <> __device__ __forceinline__ void word_to_f32x2<__nv_bfloat16>(unsigned w, float& lo, float& hi) {
  lo = __uint_as_float(w << 16);
  hi = __uint_as_float(w & 0xffff0000u);
}
template <typename T> __device__ __forceinline__ unsigned f32x2_to_word(float lo, float hi);
// The word is assembled from the pair's raw halves, not read through a cast pointer: the same code on
// a GPU (the two halves are one register), and on the host g++ then vectorises the bf16 elementwise
// kernels' full steps (through the pointer it kept every element scalar: 2x slower).
template <> __device__ __forceinline__ unsigned f32x2_to_word<__half>(float lo, float hi) {
  const __half2_raw r = __floats2half2_rn(lo, hi);
  return static_cast<unsigned>(r.x) | (static_cast<unsigned>(r.y) << 16);
}
template <> __device__ __forceinline__ unsigned f32x2_to_word<__nv_bfloat16>(float lo, float hi) {
  const __nv_bfloat162_raw r = __floats2bfloat162_rn(lo, hi);
  return static_cast<unsigned>(r.x) | (static_cast<unsigned>(r.y) << 16);
}

// Whether the host emulator converts a whole vector of T at once: for __half and __nv_bfloat16 it offers
// that as an extension (`__emu_halves_to_floats` / `__emu_floats_to_halves`, one F16C instruction per
// vector, and `__emu_bfloat16s_to_floats` / `__emu_floats_to_bfloat16s`, vector shifts and integer
// rounding; see the emulator's SUPPORT.md), bit for bit what the pair conversions above give. g++ never
// merges the F16C pair conversions of one vector into one, and builds bf16 vectors from the pairs only
// now and then, so through the pairs the f32 math between a load and a store often stays scalar:
// 8x64x56x56 f16 apply 1.31 -> 0.28 ms, backward elementwise 2.02 -> 0.36 ms; bf16 NHWC statistics
// 1.04 -> 0.71 ms, backward reduce 1.65 -> 0.94 ms (one emulator thread). A GPU converts pairs.
template <typename T> struct EmuWholeVector { static constexpr bool value = false; };
#ifdef __EMU_CPU__
template <> struct EmuWholeVector<__half> { static constexpr bool value = true; };
template <> struct EmuWholeVector<__nv_bfloat16> { static constexpr bool value = true; };
// through_memory: for the lanes of a sum (see load_vec_f32_split)
template <typename V, int N>
__device__ __forceinline__ void emu_vector_to_f32(const V& v, float (&f)[N], __half, bool through_memory) {
  __emu_halves_to_floats(v, f, through_memory);
}
template <typename V, int N>
__device__ __forceinline__ void emu_vector_to_f32(const V& v, float (&f)[N], __nv_bfloat16,
                                                  bool through_memory) {
  __emu_bfloat16s_to_floats(v, f, through_memory);
}
template <typename V, int N>
__device__ __forceinline__ void emu_f32_to_vector(const float (&f)[N], V& v, __half) { __emu_floats_to_halves(f, v); }
template <typename V, int N>
__device__ __forceinline__ void emu_f32_to_vector(const float (&f)[N], V& v, __nv_bfloat16) {
  __emu_floats_to_bfloat16s(f, v);
}
#endif

// 4-, 8- or 16-byte vector of raw 32-bit words.
template <int W> struct WordVec;
template <> struct WordVec<1> { using type = unsigned; };
template <> struct WordVec<2> { using type = uint2; };
template <> struct WordVec<4> { using type = uint4; };
template <int W> struct FloatVec;
template <> struct FloatVec<1> { using type = float; };
template <> struct FloatVec<2> { using type = float2; };
template <> struct FloatVec<4> { using type = float4; };

// Word i of a vector of N elements as f32 (f[i], or f[2i], f[2i+1] for 2-byte types), and back.
// Each word is read and written by name (v.x, v.y, ...), never through a local array: the host
// emulator's compiler does not always unroll the word loop, and a 16-byte vector assembled from
// four 4-byte stack stores stalls on store forwarding.
template <typename T, int N>
__device__ __forceinline__ void word_to_f32(unsigned w, int i, float (&f)[N]) {
  if constexpr (sizeof(T) == 4) {
    f[i] = bits_to_f32<T>(w);
  } else {
    static_assert(sizeof(T) == 2, "2- or 4-byte element types");
    word_to_f32x2<T>(w, f[2 * i], f[2 * i + 1]);
  }
}
template <typename T, int N>
__device__ __forceinline__ unsigned f32_to_word(const float (&f)[N], int i) {
  if constexpr (sizeof(T) == 4) {
    return raw_bits(from_f32<T>(f[i]));
  } else {
    static_assert(sizeof(T) == 2, "2- or 4-byte element types");
    return f32x2_to_word<T>(f[2 * i], f[2 * i + 1]);
  }
}

// Vector load / store of N elements at base[idx .. idx+N). Requirements: `base` aligned to
// N*sizeof(T) bytes and idx % N == 0. The access is written as an index into a vector-typed base
// pointer (not as a cast of base + idx): nvcc keeps the vector width only in that form when the
// index comes from loop induction variables (a cast of a computed pointer was split into scalar
// stores in the NCX loops). FOR_SUMS: the lanes of a sum (load_vec_f32_split), which the host
// emulator converts through memory.
template <int N, typename T, bool FOR_SUMS = false>
__device__ __forceinline__ void load_vec_f32(const T* __restrict__ base, long long idx, float (&f)[N]) {
  constexpr int kW = N * static_cast<int>(sizeof(T)) / 4;
  static_assert(kW == 1 || kW == 2 || kW == 4, "4-, 8- or 16-byte vectors");
  if constexpr (sizeof(T) == 4) {
    // float: the vector's members read as floats through a reference (nvcc still emits one
    // ld.global.nc.v4.f32, checked in the PTX). A vector copied into a local first (uint4 or float4)
    // was split by the host emulator's g++ into two 8-byte integer loads, and every element moved
    // through an integer register: NCHW f32 backward reduce 8x64x56x56 0.97 -> 0.59 ms. (The 2-byte
    // types keep the copy: through a reference nvcc split their uint4 loads into four u32.)
    using V = typename FloatVec<kW>::type;
    const V& v = reinterpret_cast<const V*>(base)[static_cast<unsigned long long>(idx) / N];
    if constexpr (kW == 4) {
      f[0] = v.x;
      f[1] = v.y;
      f[2] = v.z;
      f[3] = v.w;
    } else if constexpr (kW == 2) {
      f[0] = v.x;
      f[1] = v.y;
    } else {
      f[0] = v;
    }
    return;
  }
  using V = typename WordVec<kW>::type;
  const V v = reinterpret_cast<const V*>(base)[static_cast<unsigned long long>(idx) / N];
#ifdef __EMU_CPU__
  if constexpr (EmuWholeVector<T>::value && kW >= 2) {
    emu_vector_to_f32(v, f, T{}, FOR_SUMS);
    return;
  }
#endif
  if constexpr (kW == 4) {
    word_to_f32<T>(v.x, 0, f);
    word_to_f32<T>(v.y, 1, f);
    word_to_f32<T>(v.z, 2, f);
    word_to_f32<T>(v.w, 3, f);
  } else if constexpr (kW == 2) {
    word_to_f32<T>(v.x, 0, f);
    word_to_f32<T>(v.y, 1, f);
  } else {
    word_to_f32<T>(v, 0, f);
  }
}

// The same N elements in an order the host emulator's g++ can vectorise, for sums whose order is the
// caller's choice (the lanes of a reduction): a 16-byte vector of bf16 gives its words' low halves
// first, then their high halves (f[i] = element 2i, f[4 + i] = element 2i + 1): one shift and one mask
// of the whole vector, where the element order needs a shuffle per pair (NCHW bf16 statistics
// 8x64x56x56 1.20 -> 0.68 ms, one emulator thread; 8-byte vectors measured no better this way). With
// SPLIT_ORDER = false, and for every other vector, __half's included (the emulator converts it whole,
// see EmuWholeVector, and the split order would cost it a shuffle): load_vec_f32's order, on the host
// through memory (bf16's two-stream backward sums: 8x64x56x56 NCHW 1.56 -> 0.85 ms without the split
// order, one emulator thread, since the emulator converts bf16 vectors whole).
template <typename T> struct SplitOrder { static constexpr bool value = false; };
template <> struct SplitOrder<__nv_bfloat16> { static constexpr bool value = true; };
template <int N, typename T, bool SPLIT_ORDER = true>
__device__ __forceinline__ void load_vec_f32_split(const T* __restrict__ base, long long idx, float (&f)[N]) {
  if constexpr (SPLIT_ORDER && SplitOrder<T>::value && N == 8) {
    const uint4 v = reinterpret_cast<const uint4*>(base)[static_cast<unsigned long long>(idx) / N];
    word_to_f32x2<T>(v.x, f[0], f[4]);
    word_to_f32x2<T>(v.y, f[1], f[5]);
    word_to_f32x2<T>(v.z, f[2], f[6]);
    word_to_f32x2<T>(v.w, f[3], f[7]);
    return;
  }
  // on the host the converted vector goes through memory: g++ 12 then vectorises the sums over it (f16
  // NCHW statistics 8x64x56x56 1.93 -> 0.84 ms, backward reduce 1.25 -> 1.01 ms, one emulator thread)
  load_vec_f32<N, T, true>(base, idx, f);
}

template <int N, typename T>
__device__ __forceinline__ void store_vec_f32(T* __restrict__ base, long long idx, const float (&f)[N]) {
  constexpr int kW = N * static_cast<int>(sizeof(T)) / 4;
  static_assert(kW == 1 || kW == 2 || kW == 4, "4-, 8- or 16-byte vectors");
  using V = typename WordVec<kW>::type;
  V v;
#ifdef __EMU_CPU__
  if constexpr (EmuWholeVector<T>::value && kW >= 2) {
    emu_f32_to_vector(f, v, T{});
    reinterpret_cast<V*>(base)[static_cast<unsigned long long>(idx) / N] = v;
    return;
  }
#endif
  if constexpr (kW == 4) {
    v.x = f32_to_word<T>(f, 0);
    v.y = f32_to_word<T>(f, 1);
    v.z = f32_to_word<T>(f, 2);
    v.w = f32_to_word<T>(f, 3);
  } else if constexpr (kW == 2) {
    v.x = f32_to_word<T>(f, 0);
    v.y = f32_to_word<T>(f, 1);
  } else {
    v = f32_to_word<T>(f, 0);
  }
  reinterpret_cast<V*>(base)[static_cast<unsigned long long>(idx) / N] = v;
}

}  // namespace aclnn
