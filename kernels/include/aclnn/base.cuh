// aclnn/base.cuh — warp constants and the launch-bounds macro
//
// Part of the shared device code of kernels/ (see aclnn_common.cuh, which includes every part).
// Plain CUDA C++17 for NVRTC, nvcc and the host emulator: no std headers, no inline PTX.
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

#ifdef __EMU_CPU__
// Our kernels order every exchange between lanes with __syncwarp or a collective, so the host
// emulator need not make their lanes converge at each loop iteration (see the emulator's SUPPORT.md).
constexpr int __emu_explicit_warp_sync = 1;
#endif

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarpSize = 32;

// -inf as a float / double (NVRTC has no math.h, so no INFINITY macro).
__device__ __forceinline__ float neg_inf_f32() { return __uint_as_float(0xff800000u); }
__device__ __forceinline__ double neg_inf_f64() { return __longlong_as_double(static_cast<long long>(0xfff0000000000000ull)); }
}  // namespace aclnn
