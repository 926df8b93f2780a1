"""Realism sweep 8: public kernels (Professional CUDA C Programming, the OLCF CUDA training series, Rodinia
and Parboil kernels not run before) run unchanged against NumPy. What the sweep found wrong in the emulator
is pinned here by small kernels of our own (third-party code is not kept in the repository)."""
from __future__ import annotations

import numpy as np
import pytest

import aclnn_py as A
from aclnn_py import acl
from aclnn_py.emulator import CompileException

pytestmark = pytest.mark.skipif(
    acl._state.state.initialized and acl._state.state.backend.name != "host", reason="emulator behaviour")

# The unrolled last-warp reduction with a __syncthreads between its steps and no volatile (Professional
# CUDA C Programming's reduceCompleteUnrollWarps8Sync does this on global memory): each guarded step
# `s[t] += s[t + k]` reads a slot a higher lane of the same warp stores in the same statement. A converged
# warp loads for every lane before any lane stores, so lane 0 reads lane 16's old value. The emulator runs
# such a statement in thread order (right for a stored slot that grows with the thread index), but after
# a barrier the thread that completed it (the last to arrive: lane 31 of the last warp) ran on first and
# added s[47] into s[31] before lane 15 read it: a silently wrong sum in every block.
TAIL_SRC = r'''
extern "C" __global__ void tail_global(int* g, int* out, int nlive) {
    unsigned tid = threadIdx.x;
    int* s = g + blockIdx.x * blockDim.x;
    if (tid >= nlive) return;
    __syncthreads();
    if (tid < 32) s[tid] += s[tid + 32];
    __syncthreads();
    if (tid < 32)
        s[tid] += s[tid + 16];
    __syncthreads();
    if (tid < 32)
        s[tid] += s[tid + 8];
    __syncthreads();
    if (tid < 32) s[tid] += s[tid + 4];
    __syncthreads();
    if (tid < 32) s[tid] += s[tid + 2];
    __syncthreads();
    if (tid < 32) s[tid] += s[tid + 1];
    if (tid == 0) out[blockIdx.x] = s[0];
}
extern "C" __global__ void tail_shared(const float* x, float* out) {
    __shared__ float s[64];
    unsigned tid = threadIdx.x;
    s[tid] = x[blockIdx.x * 64 + tid];
    __syncthreads();
    for (int k = 32; k > 0; k >>= 1) {
        if (tid < 32) s[tid] += s[tid + k];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
'''


@pytest.mark.parametrize("block,nlive", [(64, 64), (128, 128), (64, 48), (256, 200)])
def test_block_leaves_a_barrier_in_thread_order(d, block, nlive):
    rng = np.random.default_rng(block + nlive)
    nb = 5
    x = rng.integers(-1000, 1000, nb * block).astype(np.int32)
    px, po = d.up(x), d.zeros(nb, np.int32)
    mod = A.RawModule(code=TAIL_SRC)
    mod.get_function("tail_global")((nb,), (block,), (px, po, np.int32(nlive)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    # lanes 0..63 of each block: the sum of the live ones (a dead slot still holds its input)
    want = x.reshape(nb, block)[:, :64].sum(1)
    np.testing.assert_array_equal(d.down(po, nb, np.int32), want)


def test_block_leaves_a_barrier_in_thread_order_shared(d):
    rng = np.random.default_rng(3)
    nb = 7
    x = rng.integers(-64, 64, nb * 64).astype(np.float32)   # small integers: any order sums them exactly
    px, po = d.up(x), d.zeros(nb, np.float32)
    mod = A.RawModule(code=TAIL_SRC)
    mod.get_function("tail_shared")((nb,), (64,), (px, po))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(po, nb, np.float32), x.reshape(nb, 64).sum(1))


# A cooperative launch in which one block fails: the report must name that block's cause. Reports keep the
# lowest block's, and block 0, waiting at grid.sync() for the failed block, recorded "stopped at grid.sync():
# another block of the cooperative launch failed", which replaced the cause (the OLCF training series'
# my_remove_if with a grid-stride loop around a block barrier: block 1 deadlocked, block 0's note was all
# the user saw).
COOP_FAIL_SRC = r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void coop_fail(int* out, int n) {
    cg::grid_group grid = cg::this_grid();
    cg::thread_block block = cg::this_thread_block();
    if (blockIdx.x == 1) {
        // a block barrier in a loop whose trip count differs between the block's threads
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
            out[i] = i;
            block.sync();
        }
    }
    grid.sync();
    out[blockIdx.x] += 1;
}
'''


def test_cooperative_launch_reports_the_failing_blocks_cause(d):
    mod = A.RawModule(code=COOP_FAIL_SRC, enable_cooperative_groups=True)
    po = d.zeros(256, np.int32)
    mod.get_function("coop_fail")((2,), (64,), (po, np.int32(100)))
    assert acl.rt.synchronize_device() != 0
    msg = acl.get_recent_err_msg()
    assert "block (1,0,0)" in msg and "deadlock" in msg, msg
    assert "another block" not in msg, msg


# The CUDA runtime's host API named in the source (a host struct with a cudaStream_t, cudaMalloc in a kernel,
# cudaError_t): g++'s "was not declared" / "does not name a type" alone (with "did you mean 'calloc'?"); now a
# note says that the emulator, like NVRTC, compiles device code only (Professional CUDA C's crypt.flexible).
@pytest.mark.parametrize("body,name", [
    ("typedef struct { cudaStream_t* streams; int n; } ctx;\n"
     "extern \"C\" __global__ void k(float* x) { x[0] = 1.f; }", "cudaStream_t"),
    ("extern \"C\" __global__ void k(float* x) { float* p; cudaMalloc((void**)&p, 16); x[0] = 1.f; }", "cudaMalloc"),
    ("extern \"C\" __global__ void k(float* x) { cudaError_t e = cudaGetLastError(); x[0] = e; }", "cudaError_t"),
])
def test_host_runtime_api_names_get_a_note(body, name):
    with pytest.raises(CompileException) as ei:
        A.RawModule(code="#include <cuda_runtime.h>\n" + body).get_function("k")
    msg = str(ei.value)
    assert f"note: {name}" in msg and "host API" in msg and "device code only" in msg, msg
    assert f"‘{name}’" in msg or f"'{name}'" in msg, msg   # g++'s own line is still there
