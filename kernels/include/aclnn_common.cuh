// aclnn_common.cuh — shared device helpers for every kernel family in kernels/.
//
// Compiled three ways: NVRTC (CuPy RawModule, -std=c++17, -ftz=true), nvcc (compile checks) and
// g++ through the host emulator (aclnn_py/emulator). Keep it plain CUDA C++17:
//   * no inline PTX, no CUB, no cooperative groups, no __CUDA_ARCH__ branches;
//   * warp collectives are the *_sync forms with an explicit full mask, and every helper below
//     that uses one must be called by all 32 lanes of the warp (documented per helper);
//   * no std headers (NVRTC has none); only cuda_fp16.h / cuda_bf16.h.
//
// The parts (each includes what it needs; include one, or this file for all):
//   conversions      to_f32 / from_f32<T> / to_f64 for float, double, int, __half, __nv_bfloat16
//   vectors          load_vec_f32<N> / store_vec_f32<N> (4/8/16-byte accesses), is_aligned,
//                    raw_bits / bits_to_f32
//   reductions       warp_sum / block_sum (fixed order: shfl_down trees, lane/thread 0 holds result)
//   Welford          Welford<F, I> with Chan's parallel merge; warp_welford (fixed order)
//   bit packing      warp_group_or (OR across aligned lane groups)
//   all-reduce       warp_allsum / warp_allmax / block_allreduce<MAX> (every lane gets the result)
//   grid-stride      ACLNN_GRID_STRIDE_LOOP, global_thread_id, grid_threads
//   random           philox4x32_10 (Philox4x32-10)
//
// Reproducibility: every reduction here combines in an order fixed by the lane / thread index
// only (never by arrival order), so results are bitwise identical run to run.
#pragma once

#include "aclnn/base.cuh"      // kFullMask, kWarpSize, ACLNN_LAUNCH_BOUNDS
#include "aclnn/convert.cuh"   // to_f32 / from_f32<T> / to_f64 / from_f64<T>, load_f32 / store_f32
#include "aclnn/vector.cuh"    // Vec16, load_vec_f32<N> / store_vec_f32<N>, is_aligned, raw_bits / bits_to_f32
#include "aclnn/reduce.cuh"    // warp_sum / block_sum, warp_allsum / warp_allmax / block_allreduce, Welford, warp_group_or
#include "aclnn/index.cuh"     // ACLNN_GRID_STRIDE_LOOP, global_thread_id, grid_threads
#include "aclnn/philox.cuh"    // philox4x32_10: counter-based RNG, identical on GPU and emulator
