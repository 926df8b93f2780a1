"""Public third-party CUDA kernels (tests/third_party_kernels/, origins in its README) run unchanged
through aclnn_py.RawModule on the emulator, results checked against NumPy. A kernel that relies on
undefined behaviour must be reported, never give a wrong number."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import aclnn_py as A
from aclnn_py import acl
from aclnn_py.status import AclError

DIR = Path(__file__).parent / "third_party_kernels"
pytestmark = pytest.mark.skipif(
    acl._state.state.initialized and acl._state.state.backend.name != "host", reason="emulator run")


def src(name):
    return (DIR / name).read_text()


class Dev:
    def __init__(self):
        self.ptrs = []

    def up(self, a):
        a = np.ascontiguousarray(a)
        p, ret = acl.rt.malloc(max(a.nbytes, 1), 0)
        assert ret == 0
        assert acl.rt.memcpy(p, a.nbytes, a.ctypes.data, a.nbytes, 1) == 0
        self.ptrs.append(p)
        return p

    def zeros(self, n, dtype):
        return self.up(np.zeros(n, dtype))

    @staticmethod
    def down(p, n, dtype):
        out = np.empty(n, dtype)
        assert acl.rt.memcpy(out.ctypes.data, out.nbytes, p, out.nbytes, 2) == 0
        return out


@pytest.fixture
def d():
    dv = Dev()
    yield dv
    for p in dv.ptrs:
        acl.rt.free(p)


def ok():
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()


def test_cg_blog_block_reduce(d):
    mod = A.RawModule(code=src("cg_blog.cu"))
    rng = np.random.default_rng(10)
    n = 1 << 14
    x = rng.integers(-100, 100, n).astype(np.int32)
    ps = d.zeros(1, np.int32)
    mod.get_function("sum_kernel_block")((8,), (256,), (ps, d.up(x), np.int32(n)), shared_mem=256 * 4)
    ok()
    assert d.down(ps, 1, np.int32)[0] == x.sum()


def test_cg_blog_aggregated_atomics(d):
    mod = A.RawModule(code=src("cg_blog.cu"))
    rng = np.random.default_rng(11)
    x = rng.integers(-3, 4, 2000).astype(np.int32)
    pd, pn = d.zeros(2000, np.int32), d.zeros(1, np.int32)
    mod.get_function("filter_arr")((8,), (256,), (pd, pn, d.up(x), np.int32(x.size)))
    ok()
    n = d.down(pn, 1, np.int32)[0]
    assert n == (x > 0).sum()
    np.testing.assert_array_equal(np.sort(d.down(pd, 2000, np.int32)[:n]), np.sort(x[x > 0]))


def test_cuda_samples_reduction_multiblock_cg(d):
    k = A.RawKernel(src("reduction_multiblock_cg.cu"), "reduceSinglePassMultiBlockCG", enable_cooperative_groups=True)
    rng = np.random.default_rng(12)
    n = 1 << 16
    x = rng.random(n, dtype=np.float32)
    blocks, threads = 8, 128
    po = d.zeros(blocks, np.float32)
    k((blocks,), (threads,), (d.up(x), po, np.uint32(n)), shared_mem=threads * 8)
    ok()
    np.testing.assert_allclose(d.down(po, 1, np.float32)[0], x.astype(np.float64).sum(), rtol=1e-5)


def test_cuda_samples_reduce7_is_reported_not_wrong(d):
    """reduce7's final warp shuffles read lanes outside their ballot mask (undefined behaviour):
    the emulator reports it; it used to return 4x the sum silently."""
    mod = A.RawModule(code=src("reduction_reduce7.cu"), name_expressions=["reduce7<float, 256, false>",
                                                                          "reduce7<int, 256, false>"])
    rng = np.random.default_rng(13)
    n = 10000
    for t, name in ((np.float32, "reduce7<float, 256, false>"), (np.int32, "reduce7<int, 256, false>")):
        x = (rng.random(n) * 10).astype(t)
        po = d.zeros(4, t)
        mod.get_function(name)((4,), (256,), (d.up(x), po, np.uint32(n)), shared_mem=256 * 4)
        st = acl.rt.synchronize_device()
        if st == 0:   # only acceptable if the number is right
            np.testing.assert_allclose(d.down(po, 4, t).astype(np.float64).sum(), x.astype(np.float64).sum(), rtol=1e-5)
        else:
            assert st == AclError.ACL_ERROR_RT_AICORE_EXCEPTION
            assert "not named in the mask" in acl.get_recent_err_msg()


def test_llmc_layernorm_and_softmax(d):
    mod = A.RawModule(code=src("llmc_layernorm.cu"))
    rng = np.random.default_rng(14)
    N, C = 37, 96
    x = rng.standard_normal((N, C)).astype(np.float32)
    w = rng.standard_normal(C).astype(np.float32)
    b = rng.standard_normal(C).astype(np.float32)
    po, pm, pr = d.zeros(N * C, np.float32), d.zeros(N, np.float32), d.zeros(N, np.float32)
    block = 128
    grid = (N * 32 + block - 1) // block
    mod.get_function("layernorm_forward_kernel3")((grid,), (block,), (po, pm, pr, d.up(x), d.up(w), d.up(b),
                                                                       np.int32(N), np.int32(C)))
    ps = d.zeros(N * C, np.float32)
    mod.get_function("softmax_rows_warp")((grid,), (block,), (ps, d.up(x), np.int32(N), np.int32(C)))
    ok()
    x64 = x.astype(np.float64)
    m = x64.mean(1)
    r = 1 / np.sqrt(x64.var(1) + 1e-5)
    np.testing.assert_allclose(d.down(pm, N, np.float32), m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d.down(pr, N, np.float32), r, rtol=1e-5)
    np.testing.assert_allclose(d.down(po, N * C, np.float32).reshape(N, C), (x64 - m[:, None]) * r[:, None] * w + b,
                               rtol=1e-4, atol=1e-5)
    e = np.exp(x64 - x64.max(1, keepdims=True))
    np.testing.assert_allclose(d.down(ps, N * C, np.float32).reshape(N, C), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_cupy_rawkernel_strings(d):
    mod = A.RawModule(code=src("cupy_rawkernel.cu"))
    rng = np.random.default_rng(15)
    n = 1000
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    pa, pb, py = d.up(a), d.up(b), d.zeros(n, np.float32)
    mod.get_function("test_sum")((8,), (128,), (pa, pb, py, np.uint32(n)))
    ok()
    np.testing.assert_array_equal(d.down(py, n, np.float32), a + b)
    mod.get_function("test_multiply")((8,), (128,), (pa, pb, py, np.uint32(n)))
    ok()
    np.testing.assert_array_equal(d.down(py, n, np.float32), a * b)
    # globals set from the host, as CuPy's get_global tests do
    arr = np.arange(100, dtype=np.float32)
    mod.get_global("some_array").copy_from_host(arr.ctypes.data, arr.nbytes)
    consts = np.linspace(0, 1, 8)
    mod.get_global("some_const").copy_from_host(consts.ctypes.data, consts.nbytes)
    iv = np.array([42], np.int32)
    mod.get_global("some_int").copy_from_host(iv.ctypes.data, 4)
    po, pdo, pio = d.zeros(100, np.float32), d.zeros(8, np.float64), d.zeros(1, np.int32)
    mod.get_function("test_read_globals")((1,), (128,), (po, pdo, pio))
    ok()
    np.testing.assert_array_equal(d.down(po, 100, np.float32), arr * 2)
    np.testing.assert_array_equal(d.down(pdo, 8, np.float64), consts + 1)
    assert d.down(pio, 1, np.int32)[0] == 42
    # the cooperative grid-sync kernel
    k = A.RawKernel(src("cupy_rawkernel.cu"), "test_grid_sync", enable_cooperative_groups=True)
    k((4,), (64,), (pa, pb, py, np.int32(n)))
    ok()
    np.testing.assert_array_equal(d.down(py, n, np.float32), a + b)


def test_blog_transpose_and_warp_reduce(d):
    mod = A.RawModule(code=src("blog_transpose_warp.cu"))
    rng = np.random.default_rng(16)
    M = 64
    x = rng.random((M, M), dtype=np.float32)
    po = d.zeros(M * M, np.float32)
    mod.get_function("transposeNoBankConflicts")((M // 32, M // 32), (32, 8), (po, d.up(x)))
    ok()
    np.testing.assert_array_equal(d.down(po, M * M, np.float32).reshape(M, M), x.T)
    v = rng.random(256, dtype=np.float32)
    pw = d.zeros(8, np.float32)
    mod.get_function("warp_sums")((2,), (128,), (d.up(v), pw))
    ok()
    np.testing.assert_allclose(d.down(pw, 8, np.float32), v.reshape(8, 32).astype(np.float64).sum(1), rtol=1e-6)
