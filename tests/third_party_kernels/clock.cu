// NVIDIA/cuda-samples @ c94ff366 Samples/0_Introduction/clock/clock.cu
// Copyright (c) NVIDIA CORPORATION. BSD-3-Clause (licence text in the original file).
// timedReduction as published (+ its NUM_BLOCKS/NUM_THREADS); main and helper includes dropped.
// System includes
#include <assert.h>
#include <stdint.h>
#include <stdio.h>

// CUDA runtime
#include <cuda_runtime.h>


// This kernel computes a standard parallel reduction and evaluates the
// time it takes to do that for each block. The timing results are stored
// in device memory.
__global__ static void timedReduction(const float *input, float *output, clock_t *timer)
{
    // __shared__ float shared[2 * blockDim.x];
    extern __shared__ float shared[];

    const int tid = threadIdx.x;
    const int bid = blockIdx.x;

    if (tid == 0)
        timer[bid] = clock();

    // Copy input.
    shared[tid]              = input[tid];
    shared[tid + blockDim.x] = input[tid + blockDim.x];

    // Perform reduction to find minimum.
    for (int d = blockDim.x; d > 0; d /= 2) {
        __syncthreads();

        if (tid < d) {
            float f0 = shared[tid];
            float f1 = shared[tid + d];

            if (f1 < f0) {
                shared[tid] = f1;
            }
        }
    }

    // Write result.
    if (tid == 0)
        output[bid] = shared[0];

    __syncthreads();

    if (tid == 0)
        timer[bid + gridDim.x] = clock();
}

#define NUM_BLOCKS  64
#define NUM_THREADS 256
