// aclnn/convert.cuh — f16/bf16/f32/f64 conversions: storage types in, f32 (or f64) arithmetic
//
// Part of the shared device code of kernels/ (see aclnn_common.cuh, which includes every part).
// Plain CUDA C++17 for NVRTC, nvcc and the host emulator: no std headers, no inline PTX.
#pragma once

#include "base.cuh"

namespace aclnn {
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

}  // namespace aclnn
