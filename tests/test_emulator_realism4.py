"""Realism sweep 9: public kernels (the rest of Rodinia and Parboil, cuda-samples not run before, PMPP and
CUDA by Example code) run unchanged against NumPy. What the sweep found wrong in the emulator is pinned here
by small kernels of our own (third-party code is not kept in the repository)."""
from __future__ import annotations

import numpy as np
import pytest

import aclnn_py as A
from aclnn_py import acl, emulator
from aclnn_py.emulator import CompileException

pytestmark = pytest.mark.skipif(
    acl._state.state.initialized and acl._state.state.backend.name != "host", reason="emulator behaviour")


# A `volatile __shared__` array (its elements are left to the statement convergence points) decays to a
# plain `volatile T*`; passed to a `volatile T*` parameter, which the loader rewrites to its lockstep
# proxy ::__emu::vptr<T>, it did not compile ("could not convert 'volatile unsigned int*' to
# '__emu::vptr<unsigned int>'": Rodinia hybridsort's histogram1024Kernel, `addData1024(s_Hist + warpBase,
# ...)`). Also through a local `volatile T*` initialised from the array.
VOLATILE_ARRAY_SRC = r'''
__device__ void bump(volatile unsigned int* row, int i) { row[i] = row[i] + 1u; }
extern "C" __global__ void volatile_array_arg(unsigned int* out) {
    volatile __shared__ unsigned int s[2 * 64];
    for (int i = threadIdx.x; i < 2 * 64; i += blockDim.x) s[i] = i;
    __syncthreads();
    volatile unsigned int* mine = s + (threadIdx.x >> 5) * 64;
    bump(s + (threadIdx.x >> 5) * 64, threadIdx.x & 31);    // the array itself, decayed
    bump(mine, 32 + (threadIdx.x & 31));                     // a local volatile pointer
    __syncthreads();
    for (int i = threadIdx.x; i < 2 * 64; i += blockDim.x) out[i] = s[i];
}
'''


def test_volatile_shared_array_to_volatile_pointer_parameter(d):
    po = d.zeros(128, np.uint32)
    mod = A.RawModule(code=VOLATILE_ARRAY_SRC)
    mod.get_function("volatile_array_arg")((1,), (64,), (po,))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(po, 128, np.uint32), np.arange(128) + 1)


# The pre-Volta shared-memory histogram: each warp has its own sub-histogram; a lane adds one to a bin by
# storing its count tagged with its lane number through a volatile pointer and retrying until it reads its
# own store back (when lanes of a warp hit the same bin, one store wins and the others retry). A GPU
# reconverges the warp where the retry loop ends: a lane that won waits there for the lanes still
# retrying. The emulator let the winner run on to its next element meanwhile; hitting the same bin again
# it stored over a loser's count, the loser then read a foreign tag, retried and counted once more: 100176
# counts for 100000 elements, silently (Rodinia hybridsort's histogram1024Kernel; its bucketcount's
# addOffset is the same loop); with few bins the losers could lose for ever (a livelock until the
# watchdog). Now a lane that leaves a loop in code written for a warp lets the lanes of
# its warp still iterating in that loop run first.
TAGGED_HIST_SRC = r'''
__device__ void add_tagged(volatile unsigned int* h, unsigned int bin, unsigned int tag) {
    unsigned int c;
    do {
        c = (h[bin] & 0x07FFFFFFu) + 1u;
        c |= tag;
        h[bin] = c;
    } while (h[bin] != c);
}
extern "C" __global__ void tagged_hist(const unsigned int* data, unsigned int* out, int n, int nbins) {
    volatile __shared__ unsigned int h[4 * 64];      // a sub-histogram per warp, up to 4 warps
    for (int i = threadIdx.x; i < 4 * 64; i += blockDim.x) h[i] = 0;
    __syncthreads();
    const unsigned int tag = threadIdx.x << 27;      // the lane number in the top 5 bits
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        add_tagged(h + (threadIdx.x >> 5) * 64, data[i] % nbins, tag);
    __syncthreads();
    for (int b = threadIdx.x; b < nbins; b += blockDim.x) {
        unsigned int s = 0;
        for (int w = 0; w < (int)(blockDim.x >> 5); ++w) s += h[w * 64 + b] & 0x07FFFFFFu;
        atomicAdd(out + b, s);
    }
}
'''


@pytest.mark.parametrize("n,nbins,blocks,threads", [(20000, 3, 4, 128), (12345, 64, 3, 96), (5000, 1, 2, 64)])
def test_lanes_reconverge_after_a_tagged_retry_loop(d, n, nbins, blocks, threads):
    rng = np.random.default_rng(n + nbins)
    x = rng.integers(0, 1 << 20, n).astype(np.uint32)
    px, po = d.up(x), d.zeros(nbins, np.uint32)
    mod = A.RawModule(code=TAGGED_HIST_SRC)
    emulator.set_watchdog(30)    # a livelock fails in seconds, not 300
    try:
        mod.get_function("tagged_hist")((blocks,), (threads,), (px, po, np.int32(n), np.int32(nbins)))
        assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    finally:
        emulator.set_watchdog(None)
    np.testing.assert_array_equal(d.down(po, nbins, np.uint32), np.bincount(x % nbins, minlength=nbins))


# A single-pass chained scan (decoupled look-back, as PMPP's "domino" scan): each block takes the next
# index from a counter, adds its sum to its predecessor's running total once the predecessor's flag is
# set, and spins on that flag meanwhile. A spinning block with nothing else to run started a block that
# had not run yet on an extra OS thread at once, though the block it waited for was running on the
# other one: each helper's block spun and started another, 64 helpers asked for 64 x 1024 fiber stacks
# of 128 KiB, and the launch failed ("cannot map 1024 fiber stacks ... the block did not run"). While
# other blocks run, a helper now starts only after the spin has lasted 20 ms.
CHAINED_SCAN_SRC = r'''
extern "C" __global__ void chained_sum(const int* x, int* y, int* totals, int* flags, int* counter, int n) {
    __shared__ int s[1024];
    __shared__ int bid_s, before;
    if (threadIdx.x == 0) bid_s = atomicAdd(counter, 1);
    __syncthreads();
    const int bid = bid_s, i = bid * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0;
    for (int k = 1; k < blockDim.x; k *= 2) {     // Hillis-Steele within the block
        __syncthreads();
        int v = threadIdx.x >= k ? s[threadIdx.x - k] : 0;
        __syncthreads();
        s[threadIdx.x] += v;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        int prev = 0;
        if (bid > 0) {
            while (atomicAdd(&flags[bid], 0) == 0) {}
            prev = totals[bid];
        }
        before = prev;
        totals[bid + 1] = prev + s[blockDim.x - 1];
        __threadfence();
        atomicExch(&flags[bid + 1], 1);
    }
    __syncthreads();
    if (i < n) y[i] = before + s[threadIdx.x];
}
'''


def test_spinning_block_waits_before_starting_helpers(d):
    nb, n = 512, 512 * 1024 - 300
    x = np.random.default_rng(5).integers(-50, 50, n).astype(np.int32)
    px, py = d.up(x), d.zeros(n, np.int32)
    pt, pf, pc = d.zeros(nb + 1, np.int32), d.zeros(nb + 1, np.int32), d.zeros(1, np.int32)
    mod = A.RawModule(code=CHAINED_SCAN_SRC)
    mod.get_function("chained_sum")((nb,), (1024,), (px, py, pt, pf, pc, np.int32(n)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(py, n, np.int32), np.cumsum(x))


# CUDA 12.4's `__maxnreg__(N)` (a register limit, as the CUDA C++ Programming Guide shows it next to
# `__launch_bounds__`) and a kernel's `__cluster_dims__(x, y, z)` did not compile: g++ saw a function
# named like the attribute ("variable or field '__maxnreg__' declared void", then errors about the
# loader's own glue code). Both are nothing to the emulator now: a kernel with a cluster shape and no
# cluster API runs as its blocks would; the cluster API itself (cg::this_cluster) is still a compile
# error with the note that clusters are not supported.
ATTRIBUTES_SRC = r'''
extern "C" __global__ void __launch_bounds__(128, 2, 1) lb3(float* y) { y[threadIdx.x] += 1.f; }
extern "C" __global__ void __maxnreg__(32) maxreg(float* y) { y[threadIdx.x] += 2.f; }
extern "C" __global__ void __cluster_dims__(2, 1, 1) clustered(float* y) {
    y[blockIdx.x * blockDim.x + threadIdx.x] += 4.f;
}
'''


def test_maxnreg_and_cluster_dims_attributes(d):
    py = d.zeros(256, np.float32)
    mod = A.RawModule(code=ATTRIBUTES_SRC)
    mod.get_function("lb3")((1,), (128,), (py,))
    mod.get_function("maxreg")((1,), (128,), (py,))
    mod.get_function("clustered")((2,), (128,), (py,))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(py, 256, np.float32), np.r_[np.full(128, 7.0), np.full(128, 4.0)])


def test_cluster_api_is_still_reported():
    src = r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void __cluster_dims__(2, 1, 1) k(int* out) {
    cg::cluster_group cluster = cg::this_cluster();
    out[blockIdx.x] = cluster.block_rank();
}
'''
    with pytest.raises(CompileException) as ei:
        A.RawModule(code=src).get_function("k")
    assert "thread-block clusters are not supported" in str(ei.value)
