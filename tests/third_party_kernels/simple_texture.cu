// NVIDIA/cuda-samples @ c94ff366 Samples/0_Introduction/simpleTexture/simpleTexture.cu
// Copyright (c) NVIDIA CORPORATION. BSD-3-Clause (licence text in the original file).
// transformKernel (tex2D<float> on a cudaTextureObject_t) as published; host code and helper includes dropped.
// Includes, system
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


// Includes CUDA
#include <cuda_runtime.h>

////////////////////////////////////////////////////////////////////////////////
//! Transform an image using texture lookups
//! @param outputData  output data in global memory
////////////////////////////////////////////////////////////////////////////////
__global__ void transformKernel(float *outputData, int width, int height, float theta, cudaTextureObject_t tex)
{
    // calculate normalized texture coordinates
    unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;

    float u  = (float)x - (float)width / 2;
    float v  = (float)y - (float)height / 2;
    float tu = u * cosf(theta) - v * sinf(theta);
    float tv = v * cosf(theta) + u * sinf(theta);

    tu /= (float)width;
    tv /= (float)height;

    // read from texture and write to global memory
    outputData[y * width + x] = tex2D<float>(tex, tu + 0.5f, tv + 0.5f);
}
