// NVIDIA/cuda-samples @ c94ff366 Samples/2_Concepts_and_Techniques/inlinePTX/inlinePTX.cu
// Copyright (c) NVIDIA CORPORATION. BSD-3-Clause (licence text in the original file).
// sequence_gpu (inline PTX reading %laneid) as published; host code and helper includes dropped.
// System includes
#include <assert.h>
#include <stdio.h>

// CUDA runtime
#include <cuda_runtime.h>

__global__ void sequence_gpu(int *d_ptr, int length)
{
    int elemID = blockIdx.x * blockDim.x + threadIdx.x;

    if (elemID < length) {
        unsigned int laneid;
        // This command gets the lane ID within the current warp
        asm("mov.u32 %0, %%laneid;" : "=r"(laneid));
        d_ptr[elemID] = laneid;
    }
}
