"""Realism sweep 11: legacy warp-synchronous code (pre-Volta volatile warp reductions and scans, no
__syncwarp). What the sweep found wrong in the emulator is pinned here by small kernels of our own
(third-party code is not kept in the repository)."""
from __future__ import annotations

import numpy as np
import pytest

import aclnn_py as A
from aclnn_py import acl

pytestmark = pytest.mark.skipif(
    acl._state.state.initialized and acl._state.state.backend.name != "host", reason="emulator behaviour")


# A volatile argmax tail: each step is an `if` whose condition compares two slots and whose body copies
# a value and its index. Lanes whose condition is false skipped the body and, the lockstep of volatile
# accesses counting accesses rather than statements, ran on into the next step among the lanes still
# in the body: lane 0 read s[8] before lane 8 stored its step-16 maximum there. A too-small maximum
# (and its index) in 20-40% of the blocks, silently. A warp reconverges where such an `if` ends now.
ARGMAX_SRC = r'''
__device__ void argmax_warp(volatile float* s, volatile int* id, int t) {
    if (s[t] < s[t + 32]) { s[t] = s[t + 32]; id[t] = id[t + 32]; }
    if (s[t] < s[t + 16]) { s[t] = s[t + 16]; id[t] = id[t + 16]; }
    if (s[t] < s[t +  8]) { s[t] = s[t +  8]; id[t] = id[t +  8]; }
    if (s[t] < s[t +  4]) { s[t] = s[t +  4]; id[t] = id[t +  4]; }
    if (s[t] < s[t +  2]) { s[t] = s[t +  2]; id[t] = id[t +  2]; }
    if (s[t] < s[t +  1]) { s[t] = s[t +  1]; id[t] = id[t +  1]; }
}
extern "C" __global__ void argmax64(const float* x, float* vmax, int* imax) {
    __shared__ float s[64];
    __shared__ int id[64];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * 64 + t];
    s[t + 32] = x[blockIdx.x * 64 + t + 32];
    id[t] = t;
    id[t + 32] = t + 32;
    __syncthreads();
    argmax_warp(s, id, t);
    if (t == 0) { vmax[blockIdx.x] = s[0]; imax[blockIdx.x] = id[0]; }
}
'''


def test_volatile_argmax_tail_reconverges_after_if(d):
    blocks = 200
    x = np.random.default_rng(0).standard_normal(blocks * 64).astype(np.float32)
    px, pv, pi = d.up(x), d.zeros(blocks, np.float32), d.zeros(blocks, np.int32)
    A.RawModule(code=ARGMAX_SRC).get_function("argmax64")((blocks,), (32,), (px, pv, pi))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    xs = x.reshape(blocks, 64)
    np.testing.assert_array_equal(d.down(pv, blocks, np.float32), xs.max(1))
    np.testing.assert_array_equal(d.down(pi, blocks, np.int32), xs.argmax(1))


# The pre-Volta warp scan (GPU Gems 3 ch. 39, the old CUDA SDK, many ports): `if (lane >= k) s[i] = v =
# v + s[i - k];` through a volatile pointer, called twice in a row (an inclusive and an exclusive scan of
# one value, as a public peptide-search kernel does). The low lanes skip the late steps: they ran on into
# the second call and stored their raw value over the slot the high lanes were still reading (37% of the
# inclusive sums wrong, 81% of the exclusive ones).
SCAN_SRC = r'''
__device__ unsigned warp_scan(unsigned v, volatile unsigned* s) {
    const unsigned i = threadIdx.x, lane = threadIdx.x & 31;
    s[i] = v;
    if (lane >=  1) s[i] = v = v + s[i -  1];
    if (lane >=  2) s[i] = v = v + s[i -  2];
    if (lane >=  4) s[i] = v = v + s[i -  4];
    if (lane >=  8) s[i] = v = v + s[i -  8];
    if (lane >= 16) s[i] = v = v + s[i - 16];
    return s[i];
}
extern "C" __global__ void warp_scan_k(const unsigned* x, unsigned* out, unsigned* excl) {
    __shared__ unsigned s[256];
    const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
    out[g] = warp_scan(x[g], s);
    excl[g] = warp_scan(x[g], s) - x[g];
}
'''


@pytest.mark.parametrize("block", [32, 96, 256])
def test_volatile_warp_scan_with_skipped_steps(d, block):
    n = block * 3
    x = np.random.default_rng(block).integers(0, 1000, n).astype(np.uint32)
    px, po, pe = d.up(x), d.zeros(n, np.uint32), d.zeros(n, np.uint32)
    A.RawModule(code=SCAN_SRC).get_function("warp_scan_k")((3,), (block,), (px, po, pe))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    want = np.cumsum(x.reshape(-1, 32), axis=1).astype(np.uint32).ravel()
    np.testing.assert_array_equal(d.down(po, n, np.uint32), want)
    np.testing.assert_array_equal(d.down(pe, n, np.uint32), want - x)


# The same `if` run again by the next call of a helper (a segmented warp scan, one call per offset, as in
# Sengupta, Harris and Garland's paper): a lane that left the first call's `if` must not wait for the
# lanes already in the second call's, nor they run on alone.
SEGSCAN_SRC = r'''
__device__ void seg_step(volatile int* p, volatile int* hd, unsigned t, unsigned off) {
    if ((t & 31) >= off) {
        p[t] = hd[t] ? p[t] : p[t - off] + p[t];
        hd[t] = hd[t - off] | hd[t];
    }
}
extern "C" __global__ void seg_scan(const int* x, const int* flags, int* out) {
    __shared__ int p[32], hd[32];
    unsigned t = threadIdx.x;
    p[t] = x[t];
    hd[t] = flags[t];
    __syncthreads();
    seg_step(p, hd, t, 1);
    seg_step(p, hd, t, 2);
    seg_step(p, hd, t, 4);
    seg_step(p, hd, t, 8);
    seg_step(p, hd, t, 16);
    out[t] = p[t];
}
'''


def test_volatile_segmented_scan_helper_called_per_step(d):
    rng = np.random.default_rng(3)
    mod = A.RawModule(code=SEGSCAN_SRC)
    for _ in range(4):
        x = rng.integers(0, 50, 32).astype(np.int32)
        fl = (rng.random(32) < 0.15).astype(np.int32)
        fl[0] = 1
        px, pf, po = d.up(x), d.up(fl), d.zeros(32, np.int32)
        mod.get_function("seg_scan")((1,), (32,), (px, pf, po))
        assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
        want = np.empty_like(x)
        for i in range(32):
            want[i] = x[i] if fl[i] else want[i - 1] + x[i]
        np.testing.assert_array_equal(d.down(po, 32, np.int32), want)
