"""With a GPU: the same kernels through the cuda backend give the emulator's answers (marker ``cuda``)."""
import numpy as np
import pytest

import aclnn_py as A
from aclnn_py import acl
from aclnn_py.emulator import compile_module

SRC = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
template <typename T>
__global__ void block_sum(const T* x, float* out, int n) {
    __shared__ float s[256];
    float v = 0.f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) v += float(x[i]);
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) s[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < (blockDim.x >> 5) ? s[threadIdx.x] : 0.f;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
        if (threadIdx.x == 0) out[blockIdx.x] = v;
    }
}
"""
NAMES = ["block_sum<float>", "block_sum<__half>", "block_sum<__nv_bfloat16>"]


@pytest.mark.cuda
@pytest.mark.parametrize("name,dtype", list(zip(NAMES, (np.float32, np.float16, "bfloat16"))))
def test_cuda_matches_emulator(name, dtype):
    import ml_dtypes
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    x = (np.random.default_rng(1).standard_normal(10_000)).astype(dt)
    n, blocks = x.size, 8
    # emulator, directly
    emu = compile_module(SRC, options=("-std=c++17",), name_expressions=NAMES).get_function(name)
    out_host = np.zeros(blocks, np.float32)
    emu.launch((blocks, 1, 1), (256, 1, 1), [x.ctypes.data.to_bytes(8, "little"),
                                             out_host.ctypes.data.to_bytes(8, "little"), np.int32(n).tobytes()])
    # the process backend (cuda here)
    dx, _ = acl.rt.malloc(x.nbytes, 0)
    dout, _ = acl.rt.malloc(blocks * 4, 0)
    assert acl.rt.memcpy(dx, x.nbytes, x.ctypes.data, x.nbytes, 1) == 0
    k = A.RawModule(code=SRC, options=("-std=c++17",), name_expressions=NAMES).get_function(name)
    k((blocks,), (256,), (dx, dout, np.int32(n)))
    assert acl.rt.synchronize_device() == 0
    out_dev = np.zeros(blocks, np.float32)
    assert acl.rt.memcpy(out_dev.ctypes.data, out_dev.nbytes, dout, out_dev.nbytes, 2) == 0
    np.testing.assert_allclose(out_dev, out_host, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(out_host.sum(), x.astype(np.float64).sum(), rtol=1e-4, atol=1e-2)
    acl.rt.free(dx)
    acl.rt.free(dout)
