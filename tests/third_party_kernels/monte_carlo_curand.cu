// NVIDIA/cuda-samples @ c94ff366 Samples/5_Domain_Specific/MonteCarloMultiGPU/MonteCarlo_kernel.cu
// Copyright (c) NVIDIA CORPORATION. BSD-3-Clause (licence text in the original file).
// its includes (<helper_cuda.h> dropped) and rngSetupStates (curand_init on curandState); the option kernels need MonteCarlo_common.h / _reduction.cuh and are left out.
#include <cooperative_groups.h>
#include <stdio.h>
#include <stdlib.h>

namespace cg = cooperative_groups;
#include <curand_kernel.h>

static __global__ void rngSetupStates(curandState *rngState, int device_id)
{
    // determine global thread id
    int tid = threadIdx.x + blockIdx.x * blockDim.x;
    // Each threadblock gets different seed,
    // Threads within a threadblock get different sequence numbers
    curand_init(blockIdx.x + gridDim.x * device_id, threadIdx.x, 0, &rngState[tid]);
}
