// NVIDIA/cuda-samples @ 9d8f6143 Samples/0_Introduction/cppOverload/cppOverload_kernel.cuh (+ THREAD_N/N/DIV_UP of cppOverload.cu)
// Copyright (c) NVIDIA CORPORATION. BSD-3-Clause (licence text in the original file).
// the sample was removed from the repository in 8e03cbfc; this is its parent commit. Three overloaded __global__ simple_kernel.
#define THREAD_N 256
#define N 1024
#define DIV_UP(a, b) (((a) + (b) - 1) / (b))
__global__ void simple_kernel(const int *pIn, int *pOut, int a) {
  __shared__ int sData[THREAD_N];
  int tid = threadIdx.x + blockDim.x * blockIdx.x;

  sData[threadIdx.x] = pIn[tid];
  __syncthreads();

  pOut[tid] = sData[threadIdx.x] * a + tid;
  ;
}

__global__ void simple_kernel(const int2 *pIn, int *pOut, int a) {
  __shared__ int2 sData[THREAD_N];
  int tid = threadIdx.x + blockDim.x * blockIdx.x;

  sData[threadIdx.x] = pIn[tid];
  __syncthreads();

  pOut[tid] = (sData[threadIdx.x].x + sData[threadIdx.x].y) * a + tid;
  ;
}

__global__ void simple_kernel(const int *pIn1, const int *pIn2, int *pOut,
                              int a) {
  __shared__ int sData1[THREAD_N];
  __shared__ int sData2[THREAD_N];
  int tid = threadIdx.x + blockDim.x * blockIdx.x;

  sData1[threadIdx.x] = pIn1[tid];
  sData2[threadIdx.x] = pIn2[tid];
  __syncthreads();

  pOut[tid] = (sData1[threadIdx.x] + sData2[threadIdx.x]) * a + tid;
}
