// NVIDIA/cuda-samples @ c94ff366 Samples/0_Introduction/simpleAssert/simpleAssert.cu
// Copyright (c) NVIDIA CORPORATION. BSD-3-Clause (licence text in the original file).
// testKernel as published; host code, <windows.h>/<sys/utsname.h> and helper includes dropped.
#include <cassert>
#include <stdio.h>
#include <cuda_runtime.h>

////////////////////////////////////////////////////////////////////////////////
// Kernels
////////////////////////////////////////////////////////////////////////////////
//! Tests assert function.
//! Thread whose id > N will print assertion failed error message.
////////////////////////////////////////////////////////////////////////////////
__global__ void testKernel(int N)
{
    int gtid = blockIdx.x * blockDim.x + threadIdx.x;
    assert(gtid < N);
}
