// aclnn/index.cuh — 1-D grid-stride helpers
//
// Part of the shared device code of kernels/ (see aclnn_common.cuh, which includes every part).
// Plain CUDA C++17 for NVRTC, nvcc and the host emulator: no std headers, no inline PTX.
#pragma once

#include "base.cuh"

namespace aclnn {
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
