// NVIDIA/cuda-samples @ c94ff366 Samples/0_Introduction/simplePrintf/simplePrintf.cu
// Copyright (c) NVIDIA CORPORATION. BSD-3-Clause (licence text in the original file).
// testKernel as published; host code and <helper_cuda.h>/<helper_functions.h> dropped.
#include <assert.h>
#include <stdio.h>

// CUDA runtime
#include <cuda_runtime.h>

#ifndef MAX
#define MAX(a, b) (a > b ? a : b)
#endif

__global__ void testKernel(int val)
{
    printf("[%d, %d]:\t\tValue is:%d\n",
           blockIdx.y * gridDim.x + blockIdx.x,
           threadIdx.z * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x,
           val);
}
