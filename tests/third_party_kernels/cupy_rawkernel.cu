// Origin: cupy/cupy tests/cupy_tests/core_tests/test_raw.py (MIT): the kernel strings of its
// RawKernel/RawModule tests (test_sum, test_multiply, the cooperative grid-sync test, and module
// globals read through get_global), as published.
extern "C"{

__global__ void test_sum(const float* x1, const float* x2, float* y, \
                         unsigned int N)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < N)
    {
        y[tid] = x1[tid] + x2[tid];
    }
}

__global__ void test_multiply(const float* x1, const float* x2, float* y, \
                              unsigned int N)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < N)
    {
        y[tid] = x1[tid] * x2[tid];
    }
}

__device__ float some_array[100];
__device__ int some_int = 0;
__constant__ double some_const[8];

__global__ void test_read_globals(float* out, double* dout, int* iout)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < 100) out[tid] = some_array[tid] * 2.0f;
    if (tid < 8) dout[tid] = some_const[tid] + 1.0;
    if (tid == 0) iout[0] = some_int;
}

}

#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void test_grid_sync(const float* x1, const float* x2, float* y, int n) {
    cg::grid_group grid = cg::this_grid();
    int size = gridDim.x * blockDim.x;
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    for (int i = tid; i < n; i += size) {
        y[i] = x1[i];
    }
    cg::sync(grid);
    for (int i = n - 1 - tid; i >= 0; i -= size) {
        y[i] += x2[i];
    }
}
