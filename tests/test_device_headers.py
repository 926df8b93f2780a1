"""Shared device code (kernels/include): Philox4x32-10 against Random123's known answers and a NumPy
model, the all-reduce helpers, and compiled-kernel caches keyed by every included header."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import aclnn_py
from aclnn_py import acl, kernel_cache

ROOT = Path(__file__).resolve().parent.parent

PHILOX_KAT = [   # Random123 kat_vectors, philox4x32 10 rounds: counter (4), key (2) -> output (4)
    ((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
    ((0xffffffff,) * 4, (0xffffffff,) * 2, (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
    ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
     (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1)),
]


def philox_numpy(ctr, key):
    """An independent Philox4x32-10 in Python integers."""
    M0, M1, W0, W1, mask = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85, 0xFFFFFFFF
    c0, c1, c2, c3 = ctr
    k0, k1 = key
    for r in range(10):
        if r:
            k0, k1 = (k0 + W0) & mask, (k1 + W1) & mask
        p0, p1 = M0 * c0, M1 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & mask, p1 & mask, ((p0 >> 32) ^ c3 ^ k1) & mask, p0 & mask
    return c0, c1, c2, c3


KERNELS = r'''
#include "aclnn_common.cuh"
using namespace aclnn;
extern "C" __global__ void philox(const unsigned* in, unsigned* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const unsigned* c = in + 6 * i;
    const uint4 r = philox4x32_10(make_uint4(c[0], c[1], c[2], c[3]), make_uint2(c[4], c[5]));
    out[4 * i] = r.x; out[4 * i + 1] = r.y; out[4 * i + 2] = r.z; out[4 * i + 3] = r.w;
  }
}
template <typename F>
__device__ void allreduce_t(const F* x, F* out) {   // one block of 128 threads
  __shared__ F smem[32];
  const F v = x[threadIdx.x];
  const F ws = warp_allsum(v), wm = warp_allmax(v);
  const F bs = block_allreduce<false>(v, smem), bm = block_allreduce<true>(v, smem);
  out[4 * threadIdx.x] = ws; out[4 * threadIdx.x + 1] = wm;
  out[4 * threadIdx.x + 2] = bs; out[4 * threadIdx.x + 3] = bm;
}
extern "C" __global__ void allreduce(const float* x, float* out) { allreduce_t(x, out); }
extern "C" __global__ void allreduce_f64(const double* x, double* out) { allreduce_t(x, out); }
'''


@pytest.fixture(scope="module")
def module():
    return aclnn_py.RawModule(code=KERNELS, options=kernel_cache.compile_options())


def _dev(a):
    p, r = acl.rt.malloc(a.nbytes, 0)
    assert r == 0
    assert acl.rt.memcpy(p, a.nbytes, a.ctypes.data, a.nbytes, 1) == 0
    return p


def _host(p, like):
    out = np.empty_like(like)
    assert acl.rt.memcpy(out.ctypes.data, out.nbytes, p, out.nbytes, 2) == 0
    return out


def test_philox_known_answers_and_numpy_model(module):
    rng = np.random.default_rng(4)
    cases = [(c, k) for c, k, _ in PHILOX_KAT] + [
        (tuple(int(v) for v in rng.integers(0, 2 ** 32, 4)), tuple(int(v) for v in rng.integers(0, 2 ** 32, 2)))
        for _ in range(200)]
    for (c, k), (_, _, want) in zip(cases, PHILOX_KAT):
        assert philox_numpy(c, k) == want
    inp = np.array([[*c, *k] for c, k in cases], np.uint32)
    out = np.zeros((len(cases), 4), np.uint32)
    pi, po = _dev(inp), _dev(out)
    module.get_function("philox")((2,), (64,), (pi, po, np.int32(len(cases))))
    assert acl.rt.synchronize_stream(None) == 0
    got = _host(po, out)
    assert [tuple(int(v) for v in row) for row in got] == [philox_numpy(c, k) for c, k in cases]
    acl.rt.free(pi), acl.rt.free(po)


@pytest.mark.parametrize("kernel,dtype,tol", [("allreduce", np.float32, 1e-5), ("allreduce_f64", np.float64, 1e-13)])
def test_all_reduce_helpers_give_every_lane_the_same_fixed_order_result(module, kernel, dtype, tol):
    """float and double (the helpers are templated on the type; softmax's f64 path uses the double ones)."""
    x = np.random.default_rng(5).standard_normal(128).astype(dtype)
    out = np.zeros((128, 4), dtype)
    px, po = _dev(x), _dev(out)
    module.get_function(kernel)((1,), (128,), (px, po))
    assert acl.rt.synchronize_stream(None) == 0
    got = _host(po, out)
    warps = x.reshape(4, 32)
    w_bytes = x.itemsize
    for w in range(4):
        rows = got[32 * w:32 * w + 32]
        col = rows[:, 0].tobytes()
        assert len(set(col[i:i + w_bytes] for i in range(0, len(col), w_bytes))) == 1   # one value per warp
        np.testing.assert_allclose(rows[:, 0], warps[w].astype(np.float64).sum(), rtol=tol, atol=tol)
        assert (rows[:, 1] == warps[w].max()).all()
    assert len(set(got[:, 2].tolist())) == 1 and (got[:, 3] == x.max()).all()
    np.testing.assert_allclose(got[0, 2], x.astype(np.float64).sum(), rtol=tol, atol=tol)
    acl.rt.free(px), acl.rt.free(po)


def test_a_header_change_changes_the_source_digest(tmp_path, monkeypatch):
    """The compiled-kernel caches key on kernel_source(): any included header changes it."""
    kdir = tmp_path / "kernels"
    shutil.copytree(ROOT / "kernels", kdir)
    monkeypatch.setattr(kernel_cache, "kernels_dir", lambda: kdir)
    monkeypatch.setattr(kernel_cache, "kernels_include_dir", lambda: kdir / "include")
    before = kernel_cache.kernel_source("softmax")
    assert before.startswith((kdir / "softmax.cu").read_text())
    assert kernel_cache.kernel_source("softmax") == before                       # deterministic
    philox = kdir / "include" / "aclnn" / "philox.cuh"                           # included via aclnn_common.cuh
    philox.write_text(philox.read_text() + "\n// changed\n")
    after = kernel_cache.kernel_source("softmax")
    assert after != before and after.splitlines()[:-1] == before.splitlines()[:-1]
