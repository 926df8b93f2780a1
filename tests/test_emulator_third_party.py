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
from harness import sync_ok as ok  # the device synchronises without an error

DIR = Path(__file__).parent / "third_party_kernels"
LLMC = ("-I", str(DIR / "llmc"))   # llm.c's dev/cuda kernels #include "common.h" (its device part lives there)
pytestmark = pytest.mark.skipif(
    acl._state.state.initialized and acl._state.state.backend.name != "host", reason="emulator run")


def src(name):
    return (DIR / name).read_text()


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


# --- regression tests for emulator fixes found by running these kernels (tests/third_party_kernels/README.md) ---

def test_cuda_samples_reduction_all_kernels(d):
    """cuda-samples reduction_kernel.cu as published (it compiles only with cg::block_tile_memory and
    cg::reduce on 64+-thread tiles, which multi_warp_cg_reduce uses): reduce0..reduce6, cg_reduce and
    multi_warp_cg_reduce<T, B, B/2> with the sample's getNumBlocksAndThreads (maxThreads 128, maxBlocks 4)."""
    def next_pow2(x):
        return 1 << (int(x) - 1).bit_length()

    def launch_shape(k, n, max_threads=128, max_blocks=4):
        if k < 3:
            threads = next_pow2(n) if n < max_threads else max_threads
            blocks = (n + threads - 1) // threads
        else:
            threads = next_pow2((n + 1) // 2) if n < max_threads * 2 else max_threads
            blocks = (n + threads * 2 - 1) // (threads * 2)
        if k >= 6:
            blocks = min(max_blocks, blocks)
        return blocks, threads

    def kernel_name(k, t, threads, n):
        if k <= 3:
            return f"reduce{k}<{t}>"
        if k in (4, 5):
            return f"reduce{k}<{t}, {threads}>"
        if k == 6:
            return f"reduce6<{t}, {threads}, {'true' if n & (n - 1) == 0 else 'false'}>"
        if k == 8:
            return f"cg_reduce<{t}>"
        return f"multi_warp_cg_reduce<{t}, {threads}, {threads // 2}>"

    types = {"int": np.int32, "float": np.float32, "double": np.float64}
    sizes = (1 << 12, 1000, 77)              # 77: 64-thread blocks for kernels 3..9 (a 32-thread tile in kernel 9)
    runs = [(k, t, n, *launch_shape(k, n)) for t in types for k in (0, 1, 2, 3, 4, 5, 6, 8, 9) for n in sizes]
    names = list(dict.fromkeys(kernel_name(k, t, th, n) for k, t, n, _, th in runs))
    assert "multi_warp_cg_reduce<float, 128, 64>" in names
    mod = A.RawModule(code=src("reduction_kernel.cu"), name_expressions=names)
    rng = np.random.default_rng(20)
    inputs = {(t, n): (rng.integers(-50, 50, n) if t == "int" else rng.random(n) * 10).astype(types[t])
              for t in types for n in sizes}
    pin = {key: d.up(x) for key, x in inputs.items()}
    wrong = []
    for k, t, n, blocks, threads in runs:
        x = inputs[t, n]
        smem = 2 * threads * x.itemsize if threads <= 32 else threads * x.itemsize
        if k == 9:
            smem = 2 * x.itemsize              # the sample's numOfMultiWarpGroups * sizeof(T)
        po = d.zeros(blocks, x.dtype)
        name = kernel_name(k, t, threads, n)
        mod.get_function(name)((blocks,), (threads,), (pin[t, n], po, np.uint32(n)), shared_mem=smem)
        ok()
        got = d.down(po, blocks, x.dtype).astype(np.float64).sum()   # the sample's CPU final pass
        want = x.astype(np.float64).sum()
        if not np.isclose(got, want, rtol={"int": 0, "float": 1e-5, "double": 1e-12}[t], atol=0):
            wrong.append(f"{name} n={n} grid={blocks} block={threads}: {got} != {want}")
    assert not wrong, "\n".join(wrong)


def test_cuda_samples_mergesort(d):
    """cuda-samples mergeSort (umin in its binary searches), driven as the sample's host mergeSort():
    shared-memory sort of 1024-key tiles, then merge stages; stable, keys with duplicates."""
    SSL, SS = 1024, 128                      # SHARED_SIZE_LIMIT, SAMPLE_STRIDE
    names = [f"{k}<{s}U>" for k in ("mergeSortSharedKernel", "generateSampleRanksKernel",
                                     "mergeElementaryIntervalsKernel") for s in (0, 1)]
    mod = A.RawModule(code=src("mergesort.cu"), name_expressions=names)
    u = np.uint32

    def div_up(a, b):
        return -(-a // b)

    rng = np.random.default_rng(21)
    ranks_a, ranks_b, limits_a, limits_b = (d.zeros(32768, u) for _ in range(4))   # MAX_SAMPLE_COUNT
    for N, sort_dir in ((3 * SSL, 1), (4 * SSL, 0)):
        keys = rng.integers(0, 1 << 10, N).astype(u)                 # many duplicates: stability matters
        src_k, src_v = d.up(keys), d.up(np.arange(N, dtype=u))
        dst_k, dst_v, buf_k, buf_v = (d.zeros(N, u) for _ in range(4))
        stages, stride = 0, SSL
        while stride < N:
            stride <<= 1
            stages += 1
        ik, iv, ok_, ov = (buf_k, buf_v, dst_k, dst_v) if stages & 1 else (dst_k, dst_v, buf_k, buf_v)
        mod.get_function(f"mergeSortSharedKernel<{sort_dir}U>")((N // SSL,), (SSL // 2,), (ik, iv, src_k, src_v, u(SSL)))
        stride = SSL
        while stride < N:
            last = N % (2 * stride)
            tc = (N + 2 * stride - last) // (2 * SS) if last > stride else (N - last) // (2 * SS)
            mod.get_function(f"generateSampleRanksKernel<{sort_dir}U>")(
                (div_up(tc, 256),), (256,), (ranks_a, ranks_b, ik, u(stride), u(N), u(tc)))
            for lim, rk in ((limits_a, ranks_a), (limits_b, ranks_b)):
                mod.get_function("mergeRanksAndIndicesKernel")((div_up(tc, 256),), (256,), (lim, rk, u(stride), u(N), u(tc)))
            pairs = div_up(N, SS) if last > stride else (N - last) // SS
            mod.get_function(f"mergeElementaryIntervalsKernel<{sort_dir}U>")(
                (pairs,), (SS,), (ok_, ov, ik, iv, limits_a, limits_b, u(stride), u(N)))
            if last <= stride:                # the last segment is passed through (cudaMemcpy D2D)
                off = (N - last) * 4
                for a, b in ((ok_, ik), (ov, iv)):
                    assert acl.rt.memcpy(a + off, last * 4, b + off, last * 4, 3) == 0
            ik, ok_, iv, ov = ok_, ik, ov, iv
            stride <<= 1
        ok()
        order = np.argsort(keys if sort_dir else -keys.astype(np.int64), kind="stable")
        np.testing.assert_array_equal(d.down(dst_k, N, u), keys[order], err_msg=f"keys N={N} dir={sort_dir}")
        np.testing.assert_array_equal(d.down(dst_v, N, u), order, err_msg=f"values (stable) N={N} dir={sort_dir}")


def test_cuda_samples_binary_partition_cg(d):
    """cuda-samples binaryPartitionCG at the sample's size (1024 * 100 ints in 0..49): each warp splits into
    two data-dependent groups that shuffle (cg::reduce) at the same time, then cg::sync(tile32) names the
    whole warp while lanes may still wait in the other group's reduce (was a false error)."""
    k = A.RawModule(code=src("binary_partition_cg.cu")).get_function("oddEvenCountAndSumCG")
    rng = np.random.default_rng(22)
    size = 1024 * 100
    for blocks, threads in ((25, 1024), (50, 256)):     # grid sizes dividing the array: 4 and 8 rounds per thread
        x = rng.integers(0, 50, size).astype(np.int32)
        pn, ps = d.zeros(1, np.int32), d.zeros(2, np.int32)
        k((blocks,), (threads,), (d.up(x), pn, ps, np.uint32(size)))
        ok()
        odd = x[x & 1 == 1]
        assert d.down(pn, 1, np.int32)[0] == odd.size
        np.testing.assert_array_equal(d.down(ps, 2, np.int32), [odd.sum(), x[x & 1 == 0].sum()])


# A test-only kernel over the sample's own interval_gpu<T> arithmetic (which calls __fadd_rd/_ru,
# __fmul_rd/_ru, __fdiv_rd/_ru, __fsqrt_rd/_ru and the __d* forms): point intervals in, results out.
_INTERVAL_HARNESS = r"""
template <class T>
__global__ void interval_ops_harness(const T *a, const T *b, interval_gpu<T> *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    typedef interval_gpu<T> I;
    rounded_arith<T> rnd;
    I x(a[i]), y(b[i]);
    out[5 * i + 0] = x + y;
    out[5 * i + 1] = x - y;
    out[5 * i + 2] = x * y;
    out[5 * i + 3] = div_non_zero(x, y);
    out[5 * i + 4] = I(rnd.sqrt_down(abs(a[i])), rnd.sqrt_up(abs(a[i])));
}
"""


def test_cuda_samples_interval_directed_rounding(d):
    """cuda-samples interval: the interval Newton kernel (all three implementations, incl. device recursion)
    encloses every root, and the sample's rounded arithmetic is directed: lower <= exact <= upper, and the
    two are adjacent floats when the exact value is not representable (round-to-nearest would give lower == upper)."""
    from decimal import Decimal, getcontext
    from fractions import Fraction as F

    names = ["test_interval_newton<double>", "interval_ops_harness<float>", "interval_ops_harness<double>"]
    mod = A.RawModule(code=src("interval.cu") + _INTERVAL_HARNESS, name_expressions=names)
    rng = np.random.default_rng(23)
    n = 256
    for t in (np.float32, np.float64):
        a = (rng.standard_normal(n) * 10).astype(t)
        b = (rng.standard_normal(n) * 10).astype(t)
        b[np.abs(b) < 1e-3] = 1                        # div_non_zero
        a[:8], b[:8] = [1.5, 0.25, 3, -2, 0.5, 4, 9, 1e3], [0.5, 0.125, -1, 4, 2, 0.5, 3, 8]   # exact cases too
        po = d.zeros(5 * n * 2, t)
        cname = "float" if t == np.float32 else "double"
        mod.get_function(f"interval_ops_harness<{cname}>")((n // 64,), (64,), (d.up(a), d.up(b), po, np.int32(n)))
        ok()
        out = d.down(po, 5 * n * 2, t).reshape(n, 5, 2)
        bad = []
        for i in range(n):
            fa, fb = F(float(a[i])), F(float(b[i]))
            exact = (fa + fb, fa - fb, fa * fb, fa / fb)
            for j, (lo, hi) in enumerate(out[i]):
                if j < 4:
                    inside, hit = F(float(lo)) <= exact[j] <= F(float(hi)), F(float(lo)) == exact[j]
                else:                               # sqrt(|a|): compare the squares exactly
                    inside = F(float(lo)) ** 2 <= abs(fa) <= F(float(hi)) ** 2
                    hit = F(float(lo)) ** 2 == abs(fa)
                tight = hi == lo if hit else hi == np.nextafter(lo, t(np.inf))
                if not (inside and tight):
                    bad.append(f"{cname} op {j} a={a[i]!r} b={b[i]!r}: [{lo!r}, {hi!r}]")
        assert not bad, f"{len(bad)} wrong:\n" + "\n".join(bad[:10])

    # the sample's kernel: roots of (x - 1)^2 - (t / THREADS) x on [0.01, 4] for the first 128 threads
    THREADS, DEPTH = 1024 * 64, 128                  # the sample's GRID_SIZE * BLOCK_SIZE and DEPTH_RESULT
    blocks = 2
    nthr = blocks * 64
    interval = np.dtype([("low", np.float64), ("up", np.float64)])
    ival = np.array([(0.01, 4.0)], interval)[0]
    getcontext().prec = 50
    roots = []
    for tid in range(nthr):
        bq = 2 + Decimal(tid) / THREADS
        disc = (bq * bq - 4).sqrt()
        roots.append(sorted({(bq - disc) / 2, (bq + disc) / 2}))
    for impl in (0, 1, 2):
        pbuf = d.empty(THREADS * DEPTH * 16)          # the sample's buffer: stacks interleaved by THREADS
        pn = d.zeros(nthr, np.int32)
        mod.get_function("test_interval_newton<double>")((blocks,), (64,), (pbuf, pn, ival, np.int32(impl)))
        ok()
        counts = d.down(pn, nthr, np.int32)
        assert 1 <= counts.min() and counts.max() <= 8, counts
        found = np.stack([d.down(pbuf + r * THREADS * 16, nthr * 2, np.float64).reshape(nthr, 2)
                          for r in range(counts.max())], axis=1)       # (thread, result, lo/up)
        for tid in range(nthr):
            got = [(Decimal(float(lo)), Decimal(float(hi))) for lo, hi in found[tid, :counts[tid]]]
            for r in roots[tid]:
                assert any(lo <= r <= hi for lo, hi in got), f"impl {impl} thread {tid}: root {r} not in {got}"
            assert all(Decimal("0.01") <= lo <= hi <= 4 for lo, hi in got), f"impl {impl} thread {tid}: {got}"


def test_llmc_adamw_kernels(d):
    """llm.c dev/cuda/adamw.cu: adamw_kernel2 calls the file's own lerp() (was ambiguous with C++20's std::lerp),
    launched as the file's host code does (block 512, a long num_parameters)."""
    mod = A.RawModule(code=src("llmc_adamw.cu"), options=LLMC)
    rng = np.random.default_rng(24)
    n = 3000
    p0, g = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    m0, v0 = (rng.standard_normal(n) * .1).astype(np.float32), (rng.random(n) * .1).astype(np.float32)
    lr, b1, b2, eps, wd, t = 1e-3, 0.9, 0.999, 1e-8, 0.01, 3
    c1, c2 = 1 - b1 ** t, 1 - b2 ** t
    g64 = g.astype(np.float64)
    m = b1 * m0.astype(np.float64) + (1 - b1) * g64
    v = b2 * v0.astype(np.float64) + (1 - b2) * g64 ** 2
    p = p0 - lr * ((m / c1) / (np.sqrt(v / c2) + eps) + wd * p0.astype(np.float64))
    f32 = np.float32
    for name in ("adamw_kernel1", "adamw_kernel2"):
        pp, pm, pv = d.up(p0), d.up(m0), d.up(v0)
        mod.get_function(name)(((n + 511) // 512,), (512,), (pp, d.up(g), pm, pv, np.int64(n), f32(lr), f32(b1), f32(b2),
                                                             f32(c1), f32(c2), f32(eps), f32(wd)))
        ok()
        np.testing.assert_allclose(d.down(pm, n, f32), m, rtol=1e-5, atol=1e-6, err_msg=name)
        np.testing.assert_allclose(d.down(pv, n, f32), v, rtol=1e-5, atol=1e-7, err_msg=name)
        np.testing.assert_allclose(d.down(pp, n, f32), p, rtol=1e-6, atol=1e-7, err_msg=name)
        assert not np.array_equal(d.down(pp, n, f32), p0)


def test_llmc_permute_kernel_parameter_named_dim3(d):
    """llm.c dev/cuda/permute.cu: permute_kernel's parameters are named dim1..dim4, so `int dim3` shadows
    the CUDA type inside the kernel (blockDim must still work)."""
    mod = A.RawModule(code=src("llmc_permute.cu"), options=LLMC)
    d1, d2, d3, d4 = 4, 6, 5, 7
    x = np.random.default_rng(25).standard_normal((d1, d2, d3, d4)).astype(np.float32)
    po = d.zeros(x.size, np.float32)
    mod.get_function("permute_kernel")(((x.size + 255) // 256,), (256,),
                                       (d.up(x), po, np.int32(d1), np.int32(d2), np.int32(d3), np.int32(d4)))
    ok()
    np.testing.assert_array_equal(d.down(po, x.size, np.float32).reshape(d4, d3, d1, d2), x.transpose(3, 2, 0, 1))


def test_cuda_samples_threadfence_reduction(d):
    """cuda-samples threadFenceReduction: reduceSinglePass's last block (atomicInc ticket on a __device__
    counter after __threadfence) sums the partial sums and resets the counter, so a second launch works too;
    reduceBlock works on volatile shared memory."""
    cfgs = [(1 << 14, 128, 16), (10007, 256, 8), (3000, 64, 5)]
    names = []
    for n, threads, _ in cfgs:
        p2 = "true" if n & (n - 1) == 0 else "false"
        names += [f"reduceMultiPass<{threads}, {p2}>", f"reduceSinglePass<{threads}, {p2}>"]
    mod = A.RawModule(code=src("threadfence_reduction.cu"), name_expressions=names)
    rng = np.random.default_rng(26)
    for (n, threads, blocks), multi, single in zip(cfgs, names[::2], names[1::2]):
        x = rng.random(n, dtype=np.float32)
        want = x.astype(np.float64).sum()
        pin = d.up(x)
        po = d.zeros(blocks, np.float32)
        mod.get_function(multi)((blocks,), (threads,), (pin, po, np.uint32(n)), shared_mem=threads * 4)
        ok()
        np.testing.assert_allclose(d.down(po, blocks, np.float32).astype(np.float64).sum(), want, rtol=1e-5)
        for rep in range(2):
            po = d.zeros(blocks, np.float32)
            mod.get_function(single)((blocks,), (threads,), (pin, po, np.uint32(n)), shared_mem=threads * 4)
            ok()
            np.testing.assert_allclose(d.down(po, 1, np.float32)[0], want, rtol=1e-5, err_msg=f"{single} run {rep}")


def test_cuda_samples_shfl_scan_and_integral_image(d):
    """cuda-samples shfl_scan: the block scan with __shfl_up_sync (the sample's three-launch host sequence,
    the second launch on a 16-thread block), and the integral image of a 1920 x 1080 byte image (rows: blocks
    of 120 threads, the last warp partial, tile.shfl_up / shfl_xor on uint4; columns: 135 steps of 8 rows)."""
    mod = A.RawModule(code=src("shfl_scan.cu"))
    rng = np.random.default_rng(27)
    n, block = 4096, 256                                 # the sample uses 65536
    grid, warps = n // block, block // 32
    x = rng.integers(-10, 10, n).astype(np.int32)
    pd, pp = d.up(x), d.zeros(grid, np.int32)
    p_block = min(grid, block)
    scan = mod.get_function("shfl_scan_test")
    scan((grid,), (block,), (pd, np.int32(32), pp), shared_mem=warps * 4)
    scan(((grid + p_block - 1) // p_block,), (p_block,), (pp, np.int32(32), np.uint64(0)), shared_mem=warps * 4)
    mod.get_function("uniform_add")((grid - 1,), (block,), (pd + block * 4, pp, np.int32(n)))
    ok()
    np.testing.assert_array_equal(d.down(pd, n, np.int32), np.cumsum(x))

    w, h = 1920, 1080                                    # fixed by the kernels (120 uint4 per row, 135 steps)
    img = rng.integers(0, 256, (h, w)).astype(np.uint8)
    pint = d.zeros(h * w, np.uint32)
    mod.get_function("shfl_intimage_rows")((h,), (w // 16,), (d.up(img), pint))
    ok()
    rows = np.cumsum(img.astype(np.uint32), axis=1)
    np.testing.assert_array_equal(d.down(pint, h * w, np.uint32).reshape(h, w), rows, err_msg="rows")
    mod.get_function("shfl_vertical_shfl")((w // 32, 1), (32, 8), (pint, np.int32(w), np.int32(h)))
    ok()
    np.testing.assert_array_equal(d.down(pint, h * w, np.uint32).reshape(h, w), np.cumsum(rows, axis=0), err_msg="columns")


def test_blog_kepler_reduction_legacy_shfl_below_sm70(d):
    """NVIDIA blog "Faster Parallel Reductions on Kepler": the pre-CUDA-9 mask-less __shfl_down, which
    NVRTC (and the emulator) accept below sm_70; the 12 kernels launched as the blog's host wrappers do."""
    mod = A.RawModule(code=src("blog_kepler_reduction.cu"), options=("-arch=sm_60",))
    rng = np.random.default_rng(28)
    N = 30011                                           # odd: the vector kernels' scalar tail is used
    x = rng.integers(-100, 100, N).astype(np.int32)
    px, want = d.up(x), int(x.sum())
    got = {}
    for kind in ("atomic", "warp_atomic", "block_atomic"):
        for suffix, per in (("", 1), ("_vector2", 2), ("_vector4", 4)):
            name = f"device_reduce_{kind}_kernel{suffix}"
            po = d.zeros(1, np.int32)
            mod.get_function(name)((min((N // per + 255) // 256, 2048),), (256,), (px, po, np.int32(N)))
            ok()
            got[name] = int(d.down(po, 1, np.int32)[0])
    for suffix, per in (("", 1), ("_vector2", 2), ("_vector4", 4)):
        blocks = min((N // per + 511) // 512, 1024)
        po = d.zeros(blocks, np.int32)
        mod.get_function("device_reduce_stable_kernel" + suffix)((blocks,), (512,), (px, po, np.int32(N)))
        mod.get_function("device_reduce_stable_kernel")((1,), (1024,), (po, po, np.int32(blocks)))
        ok()
        got["device_reduce_stable_kernel" + suffix] = int(d.down(po, 1, np.int32)[0])
    assert len(got) == 12 and got == dict.fromkeys(got, want), (want, got)


def test_cuda_samples_simple_atomic_intrinsics(d):
    """cuda-samples simpleAtomicIntrinsics: every thread applies atomicAdd/Sub/Exch/Max/Min/Inc/Dec/CAS/And/Or/Xor
    to one of 11 ints (the sample's 64 x 256 launch and its 0xff seeds, and a 7 x 100 launch); checked as the
    sample's computeGold does, with atomicInc/atomicDec's wrap-around (modulo 18, 138) followed step by step."""
    mod = A.RawModule(code=src("simple_atomic_intrinsics.cu"), name_expressions=["testKernel"])
    for blocks, threads in ((64, 256), (7, 100)):
        n = blocks * threads
        init = np.zeros(11, np.int32)
        init[8] = init[10] = 0xff
        po = d.up(init)
        mod.get_function("testKernel")((blocks,), (threads,), (po,))
        ok()
        g = d.down(po, 11, np.int32)
        inc = dec = 0
        for _ in range(n):
            inc = 0 if inc >= 17 else inc + 1
            dec = 137 if dec == 0 or dec > 137 else dec - 1
        and_ = 0xff
        for i in range(n):
            and_ &= 2 * i + 7
        xor = 0xff
        for i in range(n):
            xor ^= i
        assert g[0] == 10 * n and g[1] == -10 * n, g
        assert 0 <= g[2] < n and g[3] == n - 1 and g[4] == 0, g
        assert g[5] == inc and g[6] == dec, (g, inc, dec)
        assert 1 <= g[7] < n, g                            # thread 1's CAS (0 -> 1) always succeeds
        assert g[8] == and_ and g[9] == -1 and g[10] == xor, g   # 1 << tid: bits 0..31 set (tid >= 32 adds none)


def test_cuda_samples_histogram64_and_histogram256(d):
    """cuda-samples histogram: histogram64Kernel (per-thread uchar counters in shared memory, bank-permuted
    thread positions, uint4 loads, 32-bit clearing of the byte array) + mergeHistogram64Kernel, and
    histogram256Kernel (per-warp shared sub-histograms with shared atomicAdd) + mergeHistogram256Kernel,
    launched as the sample's host code does; random bytes and a constant input that drives every used
    uchar counter to 252."""
    mod = A.RawModule(code=src("histogram.cu"), name_expressions=[
        "histogram64Kernel", "mergeHistogram64Kernel", "histogram256Kernel", "mergeHistogram256Kernel"])
    rng = np.random.default_rng(29)
    byte_count = 64 * 252 * 5 + 16 * 7                 # the last partial histogram only partly filled
    for data in (rng.integers(0, 256, byte_count).astype(np.uint8), np.full(byte_count, 0xAB, np.uint8)):
        pdata = d.up(data)
        hc = -(-byte_count // (64 * 252))              # iDivUp(byteCount, 64 * iSnapDown(255, 16))
        ppart, ph = d.zeros(hc * 64, np.uint32), d.zeros(64, np.uint32)
        mod.get_function("histogram64Kernel")((hc,), (64,), (ppart, pdata, np.uint32(byte_count // 16)))
        mod.get_function("mergeHistogram64Kernel")((64,), (256,), (ph, ppart, np.uint32(hc)))
        ok()
        np.testing.assert_array_equal(d.down(ph, 64, np.uint32), np.bincount(data >> 2, minlength=64), err_msg="64")
        ppart, ph = d.zeros(240 * 256, np.uint32), d.zeros(256, np.uint32)
        mod.get_function("histogram256Kernel")((240,), (192,), (ppart, pdata, np.uint32(byte_count // 4)))
        mod.get_function("mergeHistogram256Kernel")((256,), (256,), (ph, ppart, np.uint32(240)))
        ok()
        np.testing.assert_array_equal(d.down(ph, 256, np.uint32), np.bincount(data, minlength=256), err_msg="256")


def test_cuda_samples_scan_exclusive_short_and_large(d):
    """cuda-samples scan: scanExclusiveShared (uint4 per thread, a block scan through `volatile uint *` shared
    memory with cg::sync between the loads and the stores), scanExclusiveShared2 and uniformUpdate, launched
    as scanExclusiveShort / scanExclusiveLarge do; full-range uint32 values, so sums wrap modulo 2^32."""
    mod = A.RawModule(code=src("scan.cu"), name_expressions=["scanExclusiveShared", "scanExclusiveShared2", "uniformUpdate"])
    rng = np.random.default_rng(30)
    TB = 256

    def want(x, length):
        r = x.reshape(-1, length).astype(np.uint64)
        return ((np.cumsum(r, axis=1) - r) % (1 << 32)).astype(np.uint32).ravel()

    for batch, length in ((256, 4), (16, 64), (3, 1024)):      # scanExclusiveShort
        x = rng.integers(0, 1 << 32, batch * length, dtype=np.uint64).astype(np.uint32)
        pdst = d.zeros(x.size, np.uint32)
        mod.get_function("scanExclusiveShared")((x.size // (4 * TB),), (TB,), (pdst, d.up(x), np.uint32(length)))
        ok()
        np.testing.assert_array_equal(d.down(pdst, x.size, np.uint32), want(x, length), err_msg=f"short {length}")
    for batch, length in ((3, 8192), (1, 2048)):               # scanExclusiveLarge
        x = rng.integers(0, 1 << 32, batch * length, dtype=np.uint64).astype(np.uint32)
        psrc, pdst = d.up(x), d.zeros(x.size, np.uint32)
        nb = x.size // (4 * TB)
        pbuf = d.zeros(nb, np.uint32)
        mod.get_function("scanExclusiveShared")((nb,), (TB,), (pdst, psrc, np.uint32(4 * TB)))
        mod.get_function("scanExclusiveShared2")((-(-nb // TB),), (TB,), (pbuf, pdst, psrc, np.uint32(nb),
                                                                          np.uint32(length // (4 * TB))))
        mod.get_function("uniformUpdate")((nb,), (TB,), (pdst, pbuf))
        ok()
        np.testing.assert_array_equal(d.down(pdst, x.size, np.uint32), want(x, length), err_msg=f"large {length}")


def test_cuda_samples_convolution_separable_constant_kernel(d):
    """cuda-samples convolutionSeparable: the 17-tap filter lives in `__constant__ float c_Kernel[]`, set from the
    host through get_global (the sample's cudaMemcpyToSymbol); row pass (16 x 4 blocks, 2-D shared array,
    zero halos at the image's left/right edges) then column pass (16 x 8 blocks, padded shared rows)."""
    mod = A.RawModule(code=src("convolution_separable.cu"), name_expressions=["convolutionRowsKernel", "convolutionColumnsKernel"])
    rng = np.random.default_rng(31)
    W, H, R = 256, 128, 8                               # the sample uses 3072 x 3072
    img = rng.random((H, W), dtype=np.float32)
    kern = rng.random(2 * R + 1, dtype=np.float32)
    mod.get_global("c_Kernel").copy_from_host(kern.ctypes.data, kern.nbytes)
    psrc, pbuf, pdst = d.up(img), d.zeros(W * H, np.float32), d.zeros(W * H, np.float32)
    mod.get_function("convolutionRowsKernel")((W // (8 * 16), H // 4), (16, 4), (pbuf, psrc, np.int32(W), np.int32(H), np.int32(W)))
    mod.get_function("convolutionColumnsKernel")((W // 16, H // (8 * 8)), (16, 8), (pdst, pbuf, np.int32(W), np.int32(H), np.int32(W)))
    ok()
    k64 = kern.astype(np.float64)

    def conv(a, axis):                                  # dst[x] = sum_j k[R - j] * src[x + j], zeros outside
        p = np.pad(a, [(R, R) if ax == axis else (0, 0) for ax in range(2)])
        n = a.shape[axis]
        return sum(k64[R - j] * np.take(p, np.arange(R + j, R + j + n), axis=axis) for j in range(-R, R + 1))

    rows = conv(img.astype(np.float64), 1)
    np.testing.assert_allclose(d.down(pbuf, W * H, np.float32).reshape(H, W), rows, rtol=1e-5, err_msg="rows")
    np.testing.assert_allclose(d.down(pdst, W * H, np.float32).reshape(H, W), conv(rows, 0), rtol=1e-5, err_msg="columns")


def test_llmc_softmax_forward_kernels(d):
    """llm.c dev/cuda/softmax_forward.cu: the 8 kernels (block reductions, warp shuffles, cg::reduce of the
    8-byte SumMax struct with a plain function as operator, __ldcs/__stcs, kernel7's early return of threads
    past C before its __syncthreads) launched as the file's softmax_forwardN launchers do, on its kind of input
    (random values with 3 outliers x 20 per row)."""
    names = ["softmax_forward_kernel1", "softmax_forward_kernel2", "softmax_forward_kernel3", "softmax_forward_kernel4",
             "softmax_forward_online_kernel1", "softmax_forward_online_kernel2", "softmax_forward_kernel7",
             "softmax_forward_online_kernel8"]
    mod = A.RawModule(code=src("llmc_softmax_forward.cu"), options=LLMC, name_expressions=names)
    rng = np.random.default_rng(32)
    f32 = np.float32
    cdiv = lambda a, b: -(-a // b)
    launch = {   # kernel number -> (grid, block, shared bytes), as softmax_forwardN
        1: lambda N, bs: (cdiv(N, bs), bs, 0), 2: lambda N, bs: (N, bs, bs * 4), 3: lambda N, bs: (N, 32, 32 * 4),
        4: lambda N, bs: (N, bs, bs // 32 * 4), 5: lambda N, bs: (cdiv(N, bs), bs, 0),
        6: lambda N, bs: (cdiv(N * 32, bs), bs, 0), 7: lambda N, bs: (N, bs, 2 * bs // 32 * 4),
        8: lambda N, bs: (cdiv(N * 32, bs), bs, 0)}
    for N, C, sizes in ((12, 1000, (32, 128, 256)), (5, 64, (64, 128))):
        x = (rng.random((N, C)) * 2 - 1).astype(f32)
        for k in range(3):
            x[np.arange(N), rng.integers(0, C, N)] *= 20
        x64 = x.astype(np.float64)
        e = np.exp(x64 - x64.max(axis=1, keepdims=True))
        want = e / e.sum(axis=1, keepdims=True)
        px = d.up(x)
        for num, name in enumerate(names, 1):
            for bs in sizes:
                if num == 8 and C < bs:
                    continue    # kernel8 returns threads with tid >= C: whole rows (warps) of its block would be skipped
                grid, block, shm = launch[num](N, bs)
                po = d.up(np.full(N * C, np.nan, f32))
                mod.get_function(name)((grid,), (block,), (po, px, np.int32(N), np.int32(C)), shared_mem=shm)
                ok()
                np.testing.assert_allclose(d.down(po, N * C, f32).reshape(N, C), want, rtol=2e-5, atol=1e-8,
                                           err_msg=f"{name} block {bs} C {C}")
    # kernel7 with C = 1000 < block 1024: threads 1000.. return, and warp 31's full-mask shuffles name exited lanes
    # (undefined on a GPU): reported, never a number
    mod.get_function("softmax_forward_kernel7")((12,), (1024,), (po, d.up(np.zeros((12, 1000), f32)), np.int32(12),
                                                                 np.int32(1000)), shared_mem=2 * 1024 // 32 * 4)
    assert acl.rt.synchronize_device() == AclError.ACL_ERROR_RT_AICORE_EXCEPTION
    assert "has exited" in acl.get_recent_err_msg()


def test_llmc_softmax_forward_kernel4_shared_slot_race(d):
    """llm.c dev/cuda/softmax_forward.cu softmax_forward_kernel4 with more than one warp, launched as softmax_forward4
    (its main() validates block sizes 32..1024 on a GPU). It reuses shared[0], the broadcast max, for warp 0's partial
    sum with no barrier after the other warps read it: a race a GPU wins in practice (the other warps load shared[0]
    right after the barrier; warp 0 first streams its row and shuffles). On the emulator warp 0 (thread 0 last at the
    barrier) used to run ahead and the other warps read its sum as the max: a silently wrong softmax. Warps now take
    turns at warp collectives: the right softmax (or, were the race ever reported, an error), never a wrong number."""
    mod = A.RawModule(code=src("llmc_softmax_forward.cu"), options=LLMC, name_expressions=["softmax_forward_kernel4"])
    rng = np.random.default_rng(34)
    N, C = 4, 256
    x = (rng.random((N, C)) * 2 - 1).astype(np.float32)
    e = np.exp(x - x.astype(np.float64).max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    for bs in (64, 128, 1024):
        po = d.zeros(N * C, np.float32)
        mod.get_function("softmax_forward_kernel4")((N,), (bs,), (po, d.up(x), np.int32(N), np.int32(C)), shared_mem=bs // 32 * 4)
        st = acl.rt.synchronize_device()
        if st == 0:   # only acceptable if the numbers are right
            np.testing.assert_allclose(d.down(po, N * C, np.float32).reshape(N, C), want, rtol=2e-5, atol=1e-8, err_msg=f"block {bs}")
        else:
            assert st == AclError.ACL_ERROR_RT_AICORE_EXCEPTION, st


def test_flash_attention_minimal_forward_kernel(d):
    """tspeterkim/flash-attention-minimal flash.cu forward_kernel: tiled online-softmax attention (Bc = Br = 32
    threads, dynamic shared Q/K/V/S tiles, __expf, l = 0 and m = -inf from the host), launched as its forward()
    does over a (batch, heads) grid, against softmax(Q K^T / sqrt(d)) V in float64."""
    k = A.RawModule(code=src("flash_attn_minimal.cu"), name_expressions=["forward_kernel"]).get_function("forward_kernel")
    rng = np.random.default_rng(33)
    B, nh, N, dh, Bc, Br = 2, 3, 96, 16, 32, 32
    q, kk, v = (rng.standard_normal((B, nh, N, dh)).astype(np.float32) for _ in range(3))
    Tc = Tr = -(-N // Bc)
    scale = 1.0 / np.sqrt(dh)
    pl, pm = d.zeros(B * nh * N, np.float32), d.up(np.full(B * nh * N, -np.inf, np.float32))
    po = d.zeros(q.size, np.float32)
    sram = 3 * Bc * dh * 4 + Bc * Br * 4
    k((B, nh), (Bc,), (d.up(q), d.up(kk), d.up(v), np.int32(N), np.int32(dh), np.int32(Tc), np.int32(Tr), np.int32(Bc),
                       np.int32(Br), np.float32(scale), pl, pm, po), shared_mem=sram)
    ok()
    s = np.einsum("bhid,bhjd->bhij", q.astype(np.float64), kk.astype(np.float64)) * scale
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    l = p.sum(axis=-1, keepdims=True)
    want = (p / l) @ v.astype(np.float64)
    np.testing.assert_allclose(d.down(po, q.size, np.float32).reshape(q.shape), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(d.down(pm, B * nh * N, np.float32), s.max(axis=-1).ravel(), rtol=1e-5)
    np.testing.assert_allclose(d.down(pl, B * nh * N, np.float32), l.ravel(), rtol=1e-5)


def _bf16(x):
    """float -> bfloat16 bits (round to nearest even), as __float2bfloat16 / (__nv_bfloat16)f."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def _bf16_f64(h):
    return (np.asarray(h, np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def _layernorm_backward_ref(dout, inp, weight, mean, rstd):
    """layernorm_backward_cpu in float64 on the values the kernels get (dinp starts at zero)."""
    norm = (inp - mean[:, None]) * rstd[:, None]
    dnorm = weight[None, :] * dout
    dinp = (dnorm - dnorm.mean(axis=1, keepdims=True) - norm * (dnorm * norm).mean(axis=1, keepdims=True)) * rstd[:, None]
    return dinp, (norm * dout).sum(axis=0), dout.sum(axis=0)


def test_llmc_layernorm_backward_kernels(d):
    """llm.c dev/cuda/layernorm_backward.cu, launched as its layernorm_backwardN launchers do (cuda_num_SMs = 4):
    kernel1 (global atomics), the templates 2/3/5/6 instantiated for float (cg warp tiles, cg::reduce, float atomicAdd
    on shared memory, kernel5/6's last-block-done flag through atomicAdd + __threadfence), and in bf16 (the file's
    ENABLE_BF16 floatX) kernel4 (bf16x2 atomicCAS loops), 7, 8 (x128 loads, atomicInc flag), 9 (warps 1.. hand their
    values to warp 0 through shared memory between two barriers inside the loop) and 10 (f128 shared stores)."""
    names = ["layernorm_backward_kernel1", "layernorm_backward_kernel2<float, float, float, float>",
             "copy_to_dweight_dbias<float>", "layernorm_backward_kernel3<float, float, float, float>",
             "layernorm_backward_kernel5<float, float, float, float>", "layernorm_backward_kernel6<float, float, float, float>",
             "layernorm_backward_kernel4<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16>",
             "layernorm_backward_kernel7", "layernorm_backward_kernel8", "layernorm_backward_kernel9", "layernorm_backward_kernel10"]
    mod = A.RawModule(code=src("llmc_layernorm_backward.cu"), options=LLMC, name_expressions=names)
    rng = np.random.default_rng(35)
    SMS, B, T = 4, 2, 128
    N = B * T
    i32 = np.int32
    cdiv = lambda a, b: -(-a // b)

    def inputs(C, bf16):
        inp = rng.random((N, C)) * 2 - 1
        weight, dout = rng.random(C) * 2 - 1, rng.random((N, C)) * 2 - 1
        mean = inp.mean(axis=1)
        rstd = 1 / np.sqrt(((inp - mean[:, None]) ** 2).mean(axis=1) + 1e-5)
        if bf16:
            raw = [_bf16(a) for a in (dout, inp, weight, mean, rstd)]
            return raw, [_bf16_f64(a) for a in raw]
        raw = [np.asarray(a, np.float32) for a in (dout, inp, weight, mean, rstd)]
        return raw, [a.astype(np.float64) for a in raw]

    # float kernels
    C = 320
    raw, vals = inputs(C, False)
    want = _layernorm_backward_ref(*vals)
    pdout, pinp, pw, pmean, prstd = (d.up(a) for a in raw)
    f32 = np.float32
    for num in (1, 2, 3, 5, 6):
        for bs in (32, 256, 1024):
            pdinp, pdw, pdb = d.zeros(N * C, f32), d.zeros(C, f32), d.zeros(C, f32)
            pscratch = d.zeros(32 * SMS * (2 * C + 1), f32)
            rest = (pdout, pinp, pw, pmean, prstd, i32(B), i32(T), i32(C))
            if num == 1:
                mod.get_function(names[0])((cdiv(N, bs),), (bs,), (pdinp, pdw, pdb) + rest)
            elif num == 2:
                pwt, pbt = d.zeros(C, f32), d.zeros(C, f32)
                mod.get_function(names[1])((cdiv(32 * N, bs),), (bs,), (pdinp, pdw, pdb) + rest + (pwt, pbt), shared_mem=2 * C * 4)
                mod.get_function(names[2])((1,), (512,), (i32(C), pdw, pdb, pwt, pbt))
            elif num == 3:
                mod.get_function(names[3])(((1024 // bs) * SMS,), (bs,), (pdinp, pdw, pdb) + rest, shared_mem=2 * C * 4)
            else:
                grid = SMS if num == 5 else (1024 // bs) * SMS
                mod.get_function(names[num - 1])((grid,), (bs,), (pdinp, pdw, pdb, pscratch) + rest, shared_mem=(2 * C + 1) * 4)
            ok()
            got = [d.down(pdinp, N * C, f32).reshape(N, C), d.down(pdw, C, f32), d.down(pdb, C, f32)]
            for g, w, what in zip(got, want, ("dinp", "dweight", "dbias")):
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * np.abs(w).max(), err_msg=f"kernel{num} block {bs} {what}")

    # bf16 kernels (floatX = __nv_bfloat16): C a multiple of 32 * x128::size = 256 as kernels 8 and 9 need; 10 also 1600
    u16 = np.uint16
    for C, nums in ((512, (4, 7, 8, 9, 10)), (1600, (10,))):
        raw, vals = inputs(C, True)
        want = _layernorm_backward_ref(*vals)
        pdout, pinp, pw, pmean, prstd = (d.up(a) for a in raw)
        for num in nums:
            for bs in (32, 256, 1024):
                if num == 10 and bs == 1024:
                    bs = 512
                grid = (1024 // bs) * SMS
                pdinp, pdw, pdb = d.zeros(N * C, u16), d.zeros(C, u16), d.zeros(C, u16)
                pscratch = d.zeros(32 * SMS * (2 * C + 1), f32)
                rest = (pdout, pinp, pw, pmean, prstd, i32(B), i32(T), i32(C))
                rounded = cdiv(C, 256) * 256
                shm = {4: 2 * C, 7: 2 * C + 1, 8: 2 * C + 1, 9: 2 * C + 2 * bs + 1, 10: 2 * rounded + 2 * (bs - 32) * 4}[num] * 4
                args = (pdinp, pdw, pdb) + rest if num == 4 else (pdinp, pdw, pdb, pscratch) + rest
                mod.get_function(names[num] if num != 4 else names[6])((grid,), (bs,), args, shared_mem=shm)
                ok()
                got = [_bf16_f64(d.down(pdinp, N * C, u16)).reshape(N, C), _bf16_f64(d.down(pdw, C, u16)), _bf16_f64(d.down(pdb, C, u16))]
                for g, w, what in zip(got, want, ("dinp", "dweight", "dbias")):
                    # one bf16 rounding of a float sum (kernel4's dweight/dbias: a bf16 sum of one partial per block)
                    tol = (grid / 2 if num == 4 and what != "dinp" else 2) * 2.0 ** -8
                    np.testing.assert_allclose(g, w, rtol=tol, atol=tol * np.abs(w).max(), err_msg=f"kernel{num} C {C} block {bs} {what}")


def test_llmc_global_norm_kernels(d):
    """llm.c dev/cuda/global_norm.cu: norm_kernel1/2 (cg::reduce on warp tiles, per-block shared gather, float
    atomicAdd), norm_kernel3 (common.h's blockReduce<warpReduceSum>), norm_kernel4 + global_norm_aggregate_kernel
    (one partial per block, then a 1024-thread block reduces them), grid-stride loops over size_t counts, for
    T = float and T = __nv_bfloat16 (the file's floatX); grids as global_normN (2048 threads per SM, 2 SMs)."""
    types = {"float": np.float32, "__nv_bfloat16": np.uint16}
    names = [f"norm_kernel{k}<{t}>" for t in types for k in (1, 2, 3, 4)]
    mod = A.RawModule(code=src("llmc_global_norm.cu"), options=LLMC, name_expressions=names + ["global_norm_aggregate_kernel"])
    rng = np.random.default_rng(36)
    count = 100_003
    x = (rng.random(count) * 2 - 1).astype(np.float32)
    for t, dt in types.items():
        data = _bf16(x) if dt is np.uint16 else x
        vals = _bf16_f64(data) if dt is np.uint16 else x.astype(np.float64)
        want = (vals * vals).sum()
        pdata = d.up(data)
        for k in (1, 2, 3, 4):
            for bs in (32, 128, 512, 1024):
                if k == 4 and bs <= 64:
                    bs = 128
                grid = 2048 * 2 // bs
                pout = d.zeros(max(grid, 1), np.float32)
                mod.get_function(f"norm_kernel{k}<{t}>")((grid,), (bs,), (pout, pdata, np.uint64(count)))
                if k == 4:
                    mod.get_function("global_norm_aggregate_kernel")((1,), (1024,), (pout, np.uint64(grid)))
                ok()
                np.testing.assert_allclose(d.down(pout, 1, np.float32)[0], want, rtol=1e-5, err_msg=f"norm_kernel{k}<{t}> block {bs}")


def test_llmc_matmul_forward_kernels(d):
    """llm.c dev/cuda/matmul_forward.cu: matmul_forward_kernel1 (2-D blocks of sqrt_block_size^2 threads, 4..32, with
    and without bias: NULL passed as 0) and matmul_forward_kernel4 (__launch_bounds__(256), 16 x 16 threads computing
    8 x 8 outputs each, float4 loads/stores through reinterpret_cast into 2-D shared tiles [128][32]), as
    matmul_forward1/4 launch them; add_bias's grid-stride loop."""
    mod = A.RawModule(code=src("llmc_matmul_forward.cu"), options=LLMC, name_expressions=["matmul_forward_kernel1", "add_bias", "matmul_forward_kernel4"])
    rng = np.random.default_rng(37)
    B, T, C, OC = 2, 128, 96, 384
    BT = B * T
    inp, weight, bias = ((rng.random(s) * 2 - 1).astype(np.float32) for s in ((BT, C), (OC, C), (OC,)))
    pinp, pw, pb = d.up(inp), d.up(weight), d.up(bias)
    ref = inp.astype(np.float64) @ weight.astype(np.float64).T
    cdiv = lambda a, b: -(-a // b)
    for sq in (4, 8, 16, 32):
        for with_bias in (True, False):
            po = d.up(np.full(BT * OC, np.nan, np.float32))
            mod.get_function("matmul_forward_kernel1")((cdiv(BT, sq), cdiv(OC, sq)), (sq, sq),
                                                        (po, pinp, pw, pb if with_bias else 0, np.int32(BT), np.int32(C), np.int32(OC)))
            ok()
            np.testing.assert_allclose(d.down(po, BT * OC, np.float32).reshape(BT, OC), ref + bias if with_bias else ref,
                                       rtol=1e-5, atol=1e-5, err_msg=f"kernel1 {sq}x{sq} bias {with_bias}")
    po = d.up(np.full(BT * OC, np.nan, np.float32))
    mod.get_function("matmul_forward_kernel4")((cdiv(BT, 128), cdiv(OC, 128)), (16, 16), (po, pinp, pw, pb, np.int32(C), np.int32(OC)))
    ok()
    np.testing.assert_allclose(d.down(po, BT * OC, np.float32).reshape(BT, OC), ref + bias, rtol=1e-5, atol=1e-5, err_msg="kernel4")
    po = d.up(ref.astype(np.float32))
    mod.get_function("add_bias")((7,), (128,), (po, pb, np.int32(B), np.int32(T), np.int32(OC)))
    ok()
    np.testing.assert_allclose(d.down(po, BT * OC, np.float32).reshape(BT, OC), ref + bias, rtol=1e-6, atol=1e-6, err_msg="add_bias")


def test_cuda_samples_sorting_networks(d):
    """cuda-samples sortingNetworks: bitonicSortShared (arrays <= 1024 keys, 512 threads, cg::sync between compare
    steps on shared key/value arrays), bitonicSortShared1 + bitonicMergeGlobal + bitonicMergeShared (longer arrays),
    oddEvenMergeSortShared (comparators only for offset >= stride) + oddEvenMergeGlobal, launched as bitonicSort() /
    oddEvenMergeSort() do, both directions; values carry the source index (sorting networks are not stable)."""
    mod = A.RawModule(code=src("sorting_networks.cu"), name_expressions=[
        "bitonicSortShared", "bitonicSortShared1", "bitonicMergeGlobal", "bitonicMergeShared", "oddEvenMergeSortShared",
        "oddEvenMergeGlobal"])
    rng = np.random.default_rng(38)
    u = np.uint32
    L = 1024                                                       # SHARED_SIZE_LIMIT
    for batch, length in ((32, 64), (2, 1024), (1, 2048), (2, 4096)):
        n = batch * length
        keys = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(u)
        keys[rng.integers(0, n, n // 8)] = keys[0]                 # some equal keys
        idx = np.arange(n, dtype=u)
        for algo in ("bitonic", "oddeven"):
            for dr in (0, 1):
                pk, pv = d.zeros(n, u), d.zeros(n, u)
                sk, sv = d.up(keys), d.up(idx)
                blocks, threads = n // L, L // 2
                if length <= L:
                    name = "bitonicSortShared" if algo == "bitonic" else "oddEvenMergeSortShared"
                    mod.get_function(name)((blocks,), (threads,), (pk, pv, sk, sv, u(length), u(dr)))
                elif algo == "bitonic":
                    mod.get_function("bitonicSortShared1")((blocks,), (threads,), (pk, pv, sk, sv))
                    size = 2 * L
                    while size <= length:
                        stride = size // 2
                        while stride > 0:
                            if stride >= L:
                                mod.get_function("bitonicMergeGlobal")((n // 512,), (256,), (pk, pv, pk, pv, u(length), u(size), u(stride), u(dr)))
                            else:
                                mod.get_function("bitonicMergeShared")((blocks,), (threads,), (pk, pv, pk, pv, u(length), u(size), u(dr)))
                                break
                            stride //= 2
                        size *= 2
                else:
                    mod.get_function("oddEvenMergeSortShared")((blocks,), (threads,), (pk, pv, sk, sv, u(L), u(dr)))
                    size = 2 * L
                    while size <= length:
                        stride = size // 2
                        while stride > 0:
                            mod.get_function("oddEvenMergeGlobal")((n // 512,), (256,), (pk, pv, pk, pv, u(length), u(size), u(stride), u(dr)))
                            stride //= 2
                        size *= 2
                ok()
                gk, gv = d.down(pk, n, u).reshape(batch, length), d.down(pv, n, u).reshape(batch, length)
                want = np.sort(keys.reshape(batch, length), axis=1)
                if not dr:
                    want = want[:, ::-1]
                msg = f"{algo} batch {batch} length {length} dir {dr}"
                np.testing.assert_array_equal(gk, want, err_msg=msg)
                np.testing.assert_array_equal(np.sort(gv, axis=1), idx.reshape(batch, length), err_msg=msg)
                np.testing.assert_array_equal(keys[gv], gk, err_msg=msg)


def _walsh_hadamard(x):
    """Unnormalised Walsh-Hadamard transform in natural (Sylvester) order along the last axis, float64."""
    y = x.astype(np.float64).copy()
    n, h = y.shape[-1], 1
    while h < n:
        y = y.reshape(y.shape[:-1] + (n // (2 * h), 2, h))
        a, b = y[..., 0, :].copy(), y[..., 1, :].copy()
        y[..., 0, :], y[..., 1, :] = a + b, a - b
        y = y.reshape(y.shape[:-3] + (n,))
        h *= 2
    return y


def test_cuda_samples_fast_walsh_transform(d):
    """cuda-samples fastWalshTransform: fwtBatch2Kernel global radix-4 passes for log2N > 11, then fwtBatch1Kernel
    (N/4 threads, radix-4 stages in dynamic shared memory with cg::sync, a radix-2 stage for odd log2N), as
    fwtBatchGPU launches them in place; then the sample's dyadic convolution (fwt, modulateKernel, fwt). Integer
    data: every sum is exact in float32, so the transform must match bit for bit."""
    mod = A.RawModule(code=src("fast_walsh_transform.cu"), name_expressions=["fwtBatch1Kernel", "fwtBatch2Kernel", "modulateKernel"])
    rng = np.random.default_rng(39)

    def fwt_gpu(p, M, log2N):                                       # fwtBatchGPU
        N = 1 << log2N
        grid = ((1 << log2N) // (4 * 256), M)
        while log2N > 11:
            mod.get_function("fwtBatch2Kernel")(grid, (256,), (p, p, np.int32(N // 4)))
            log2N, N, M = log2N - 2, N >> 2, M << 2
        mod.get_function("fwtBatch1Kernel")((M,), (N // 4,), (p, p, np.int32(log2N)), shared_mem=N * 4)

    for M, log2N in ((3, 11), (2, 10), (4, 5), (1, 14), (2, 13)):
        x = rng.integers(-8, 9, (M, 1 << log2N)).astype(np.float32)
        p = d.up(x)
        fwt_gpu(p, M, log2N)
        ok()
        np.testing.assert_array_equal(d.down(p, x.size, np.float32).reshape(x.shape), _walsh_hadamard(x), err_msg=f"M {M} log2N {log2N}")
    log2N = 12
    N = 1 << log2N
    data, kern = rng.random(N, dtype=np.float32), np.zeros(N, np.float32)
    kern[:64] = rng.random(64, dtype=np.float32)
    pd_, pk = d.up(data), d.up(kern)
    fwt_gpu(pd_, 1, log2N)
    fwt_gpu(pk, 1, log2N)
    mod.get_function("modulateKernel")((128,), (256,), (pd_, pk, np.int32(N)))
    fwt_gpu(pd_, 1, log2N)
    ok()
    i = np.arange(N)
    want = np.array([(data.astype(np.float64) * kern.astype(np.float64)[i ^ j]).sum() for j in range(N)])
    np.testing.assert_allclose(d.down(pd_, N, np.float32), want, rtol=1e-4, atol=1e-4 * np.abs(want).max(), err_msg="dyadic convolution")


def test_cuda_samples_matrix_mul(d):
    """cuda-samples matrixMul: MatrixMulCUDA<16> and <32> (2-D __shared__ tiles declared inside the loop, 2-D blocks of
    256 / 1024 threads, #pragma unroll followed by a blank line), grid (wB / bs, hA / bs) as MatrixMultiply launches it."""
    mod = A.RawModule(code=src("matrix_mul.cu"), name_expressions=["MatrixMulCUDA<16>", "MatrixMulCUDA<32>"])
    rng = np.random.default_rng(40)
    for bs in (16, 32):
        hA, wA, wB = 3 * bs, 4 * bs, 2 * bs
        a, b = (rng.random(s, dtype=np.float32) for s in ((hA, wA), (wA, wB)))
        pc = d.up(np.full(hA * wB, np.nan, np.float32))
        mod.get_function(f"MatrixMulCUDA<{bs}>")((wB // bs, hA // bs), (bs, bs), (pc, d.up(a), d.up(b), np.int32(wA), np.int32(wB)))
        ok()
        np.testing.assert_allclose(d.down(pc, hA * wB, np.float32).reshape(hA, wB), a.astype(np.float64) @ b.astype(np.float64),
                                   rtol=1e-5, err_msg=f"block {bs}")


def test_cuda_samples_simple_vote_intrinsics(d):
    """cuda-samples simpleVoteIntrinsics: VoteAnyKernel1 / VoteAllKernel2 over 4 warps (one 128-thread block, the
    sample's genVoteTestPattern: a zero warp, two mixed warps, an all-ones warp), VoteAnyKernel3 (96 threads: __any_sync
    / __all_sync of tx >= 48, i.e. false / half / all true per warp, results as bools at info[tx * 3 + 0..2])."""
    mod = A.RawModule(code=src("simple_vote_intrinsics.cu"))
    size = 4 * 32
    pat = np.zeros(size, np.uint32)
    i = np.arange(size)
    pat[size // 4:size // 2] = np.where(i[size // 4:size // 2] & 1, i[size // 4:size // 2], 0)
    pat[size // 2:3 * size // 4] = np.where(i[size // 2:3 * size // 4] & 1, 0, i[size // 2:3 * size // 4])
    pat[3 * size // 4:] = 0xFFFFFFFF
    rng = np.random.default_rng(41)
    pin = d.up(pat)
    for name, red in (("VoteAnyKernel1", np.any), ("VoteAllKernel2", np.all)):
        pres = d.up(np.full(size, 7, np.uint32))
        mod.get_function(name)((1, 1), (size, 1), (pin, pres, np.int32(size)))
        ok()
        want = np.repeat([int(red(w != 0)) for w in pat.reshape(4, 32)], 32)
        np.testing.assert_array_equal(d.down(pres, size, np.uint32) != 0, want != 0, err_msg=name)
    # a random pattern, one lane set in some warps
    pat2 = np.zeros(size, np.uint32)
    pat2[rng.integers(0, 32)] = 5
    pat2[64:96] = rng.integers(1, 9, 32)
    pat2[64 + rng.integers(0, 32)] = 0
    pin2 = d.up(pat2)
    for name, red in (("VoteAnyKernel1", np.any), ("VoteAllKernel2", np.all)):
        pres = d.up(np.full(size, 7, np.uint32))
        mod.get_function(name)((1,), (size,), (pin2, pres, np.int32(size)))
        ok()
        want = np.repeat([int(red(w != 0)) for w in pat2.reshape(4, 32)], 32)
        np.testing.assert_array_equal(d.down(pres, size, np.uint32) != 0, want != 0, err_msg=name + " random")
    pinfo = d.zeros(32 * 3 * 3, np.bool_)
    mod.get_function("VoteAnyKernel3")((1,), (32 * 3,), (pinfo, np.int32(32)))
    ok()
    info = d.down(pinfo, 32 * 3 * 3, np.bool_)[:96 * 3].reshape(96, 3)
    tx = np.arange(96)
    warp_any = np.repeat([(w >= 48).any() for w in tx.reshape(3, 32)], 32)
    warp_all = np.repeat([(w >= 48).all() for w in tx.reshape(3, 32)], 32)
    np.testing.assert_array_equal(info[:, 0], warp_any)
    np.testing.assert_array_equal(info[:, 1], tx >= 48)
    np.testing.assert_array_equal(info[:, 2], warp_all)


def test_cuda_samples_warp_aggregated_atomics_cg(d):
    """cuda-samples warpAggregatedAtomicsCG: filter_arr (atomicAggInc over cg::coalesced_threads() inside a divergent
    branch), mapToBuckets (cg::labeled_partition of the coalesced group by bucket, leader atomicAdd, shfl broadcast;
    cg::this_grid() for thread_rank/size in an ordinary launch, no grid.sync) and calculateMaxInEachBuckets
    (cg::reduce with cg::greater on labeled groups, atomicMax), 512-thread blocks as the sample launches them."""
    mod = A.RawModule(code=src("warp_aggregated_atomics_cg.cu"))
    rng = np.random.default_rng(42)
    n, nb_threads = 20000, 512
    for num_buckets in (5, 3):
        src_arr = rng.integers(0, 5, n).astype(np.int32)          # rand() % numOfBuckets, and values past the buckets
        psrc = d.up(src_arr)
        pdst, pn = d.zeros(n, np.int32), d.zeros(1, np.int32)
        mod.get_function("filter_arr")((n // nb_threads + 1,), (nb_threads,), (pdst, pn, psrc, np.int32(n)))
        ok()
        cnt = d.down(pn, 1, np.int32)[0]
        assert cnt == (src_arr > 0).sum()
        np.testing.assert_array_equal(np.sort(d.down(pdst, n, np.int32)[:cnt]), np.sort(src_arr[src_arr > 0]))

        counters = (np.arange(num_buckets) * n).astype(np.int32)
        pidx, pcnt = d.up(np.full(n * num_buckets, -1, np.int32)), d.up(counters)
        mod.get_function("mapToBuckets")((n // nb_threads,), (nb_threads,), (psrc, pidx, pcnt, np.int32(n), np.int32(num_buckets)))
        ok()
        got_cnt = d.down(pcnt, num_buckets, np.int32) - counters
        idx = d.down(pidx, n * num_buckets, np.int32).reshape(num_buckets, n)
        covered = src_arr                                         # grid-stride loop over grid.size() threads
        for b in range(num_buckets):
            want = np.flatnonzero(covered == b)
            assert got_cnt[b] == want.size, (num_buckets, b)
            np.testing.assert_array_equal(np.sort(idx[b, :want.size]), want, err_msg=f"bucket {b}")
            assert (idx[b, want.size:] == -1).all()

        vals = rng.integers(0, 2**31 - 1, n).astype(np.int32)
        pmax = d.zeros(num_buckets, np.int32)
        mod.get_function("calculateMaxInEachBuckets")((n // nb_threads,), (nb_threads,), (psrc, d.up(vals), pmax, np.int32(n),
                                                                                          np.int32(num_buckets)))
        ok()
        want = [vals[covered == b].max() for b in range(num_buckets)]
        np.testing.assert_array_equal(d.down(pmax, num_buckets, np.int32), want)


def _haar(x):
    out = np.zeros(x.size)
    a = x.astype(np.float64)
    while a.size > 1:
        det = (a[0::2] - a[1::2]) / np.sqrt(2)
        a = (a[0::2] + a[1::2]) / np.sqrt(2)
        out[a.size:2 * a.size] = det
    out[0] = a[0]
    return out


def test_cuda_samples_dwt_haar1d(d):
    """cuda-samples dwtHaar1D: the host loop of the sample (initValue, then dwtHaar1D with dynamic shared memory padded
    against bank conflicts, up to 10 levels per launch, a second launch over the blocks' approx_final after a
    device-to-device copy), on one block (2^8, 2^10 samples: 128 / 512 threads) and on 2^14 samples (16 blocks of 512,
    then one block of 8 threads for the last 4 levels), against a float64 Haar transform."""
    mod = A.RawModule(code=src("dwt_haar1d.cu"))
    rng = np.random.default_rng(43)
    for log2 in (8, 10, 14):
        slength = 1 << log2
        sig = rng.standard_normal(slength).astype(np.float32)
        pin, pout, papprox = d.up(sig), d.zeros(slength, np.float32), d.zeros(slength, np.float32)
        left = slength // 2
        dlevels_step = dlevels_left = log2
        grid = 1
        if log2 <= 10:
            block, approx_is_input = left, 0
        else:
            grid, block, dlevels_step, approx_is_input = left // 512, 512, 10, 1
            dlevels_left -= 10
        mod.get_function("initValue")((grid,), (block,), (pout, np.float32(0)))
        while left != 0:
            mem = 2 * block * 4 + (2 * block) // 16 * 4
            mod.get_function("dwtHaar1D")((grid,), (block,), (pin, pout, papprox, np.uint32(dlevels_step), np.uint32(left),
                                                              np.int32(block)), shared_mem=mem)
            ok()
            dst = pin if approx_is_input else pout
            assert acl.rt.memcpy(dst, grid * 4, papprox, grid * 4, 3) == 0
            if dlevels_left < 10:
                approx_is_input = 0
            dlevels_step = dlevels_left - 10 if dlevels_left > 10 else dlevels_left
            dlevels_left -= 10
            left >>= 10
            grid = 1                                   # the sample's (... ) ? 1 : 0 precedence
            if grid <= 1:
                block = left
        ok()
        np.testing.assert_allclose(d.down(pout, slength, np.float32), _haar(sig), rtol=1e-5, atol=1e-5, err_msg=f"2^{log2}")


def test_cuda_samples_black_scholes(d):
    """cuda-samples BlackScholes: BlackScholesGPU (__launch_bounds__(128) before __global__, float2 *__restrict
    parameters, two options per thread, __fdividef/__logf/__expf/rsqrtf), grid DIV_UP(optN / 2, 128) x 128 as the
    sample, against the same formula (polynomial CND, as BlackScholes_gold.cpp) in float64."""
    mod = A.RawModule(code=src("black_scholes.cu"))
    rng = np.random.default_rng(44)
    optN, R, V = 10000, 0.02, 0.30
    S = rng.uniform(5, 30, optN).astype(np.float32)
    X = rng.uniform(1, 100, optN).astype(np.float32)
    T = rng.uniform(0.25, 10, optN).astype(np.float32)
    pc, pp = d.up(np.full(optN, np.nan, np.float32)), d.up(np.full(optN, np.nan, np.float32))
    mod.get_function("BlackScholesGPU")((-(-(optN // 2) // 128),), (128,), (pc, pp, d.up(S), d.up(X), d.up(T), np.float32(R),
                                                                             np.float32(V), np.int32(optN)))
    ok()

    def cnd(x):
        k = 1 / (1 + 0.2316419 * np.abs(x))
        c = 0.39894228040143267793994605993438 * np.exp(-0.5 * x * x) * (
            k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429)))))
        return np.where(x > 0, 1 - c, c)

    s, x, t = (a.astype(np.float64) for a in (S, X, T))
    d1 = (np.log(s / x) + (R + 0.5 * V * V) * t) / (V * np.sqrt(t))
    d2 = d1 - V * np.sqrt(t)
    ert = np.exp(-R * t)
    call = s * cnd(d1) - x * ert * cnd(d2)
    put = x * ert * (1 - cnd(d2)) - s * (1 - cnd(d1))
    np.testing.assert_allclose(d.down(pc, optN, np.float32), call, rtol=1e-5, atol=5e-5, err_msg="call")
    np.testing.assert_allclose(d.down(pp, optN, np.float32), put, rtol=1e-5, atol=5e-5, err_msg="put")


def test_blog_finite_difference_constant_coefficients(d):
    """NVIDIA developer blog "Finite Difference Methods in CUDA C/C++": derivative_x/y/z and their lPencils variants
    (2-D __shared__ tiles with a 4-wide periodic halo filled by the first 4 threads, 8th-order stencil with
    12 __constant__ coefficients set from the host through get_global, the post's cudaMemcpyToSymbol), on the 64^3
    grid with the post's launch shapes, against a float64 periodic stencil (period m - 1, as the halo copies)."""
    names = ["derivative_x", "derivative_x_lPencils", "derivative_y", "derivative_y_lPencils", "derivative_z",
             "derivative_z_lPencils"]
    mod = A.RawModule(code=src("finite_difference.cu"))
    m, sP, lP = 64, 4, 32
    coef = {}
    for ax in "xyz":
        ds = np.float32(m - 1)
        for c, w in zip("abcd", (4 / 5, -1 / 5, 4 / 105, -1 / 280)):
            v = np.array([np.float32(w) * ds], np.float32)          # 4.f / 5.f * dsinv in float
            mod.get_global(f"c_{c}{ax}").copy_from_host(v.ctypes.data, 4)
            coef[c + ax] = float(v[0])
    launch = {"derivative_x": ((m // sP, m), (m, sP)), "derivative_x_lPencils": ((m // lP, m), (m, sP)),
              "derivative_y": ((m // sP, m), (sP, m)), "derivative_y_lPencils": ((m // lP, m), (lP, m * sP // lP)),
              "derivative_z": ((m // sP, m), (sP, m)), "derivative_z_lPencils": ((m // lP, m), (lP, m * sP // lP))}
    rng = np.random.default_rng(45)
    f = rng.random((m, m, m), dtype=np.float32)                   # [k][j][i]
    pf = d.up(f)
    f64 = f.astype(np.float64)
    for name in names:
        ax = name[len("derivative_")]
        axis = {"x": 2, "y": 1, "z": 0}[ax]
        pdf = d.up(np.full(f.size, np.nan, np.float32))
        grid, block = launch[name]
        mod.get_function(name)(grid, block, (pf, pdf))
        ok()
        p = np.concatenate([np.take(f64, range(m - 5, m - 1), axis), f64, np.take(f64, range(1, 5), axis)], axis)
        sl = lambda o: np.take(p, range(4 + o, 4 + o + m), axis)
        want = sum(coef[c + ax] * (sl(o) - sl(-o)) for c, o in zip("abcd", (1, 2, 3, 4)))
        np.testing.assert_allclose(d.down(pdf, f.size, np.float32).reshape(f.shape), want, rtol=1e-5, atol=2e-4, err_msg=name)


def test_llmc_classifier_fused_kernels(d):
    """llm.c dev/cuda/classifier_fused.cu: fused softmax + cross-entropy + logit gradients, kernels 1..5 launched as
    the file's fused_classifierN (kernel1: one warp per row with cg::reduce, meta_group_rank; 2/3: block-wide
    reductions through two __shared__ arrays of 32 with float4 loads / __ldcs; 4: Packed128 load128cs/store128;
    5<true,false>: blockReduce<warpReduceMax/Sum> with the unaligned tail loop, __launch_bounds__(1024,
    MAX_1024_THREADS_BLOCKS)), logits padded V -> P with NaN bytes (the file's cudaMemset 0xff), NULL probs."""
    names = ["fused_classifier_kernel1", "fused_classifier_kernel2", "fused_classifier_kernel3", "fused_classifier_kernel4",
             "fused_classifier_kernel5<true,false>"]
    mod = A.RawModule(code=src("llmc_classifier_fused.cu"), options=LLMC, name_expressions=names)
    rng = np.random.default_rng(46)
    B, T, V = 4, 8, 1003
    P = (V + 63) & ~63
    N = B * T
    logits = (rng.random((N, V)) * 2 - 1).astype(np.float32)
    for k in range(3):
        logits[np.arange(N), rng.integers(0, V, N)] *= 20
    dlosses = (rng.random(N) * 2 - 1).astype(np.float32)
    targets = rng.integers(0, V, N).astype(np.int32)
    padded = np.full((N, P), np.uint32(0xFFFFFFFF)).view(np.float32)
    padded[:, :V] = logits
    x64 = logits.astype(np.float64)
    e = np.exp(x64 - x64.max(1, keepdims=True))
    probs = e / e.sum(1, keepdims=True)
    want_loss = -np.log(probs[np.arange(N), targets])
    onehot = np.zeros((N, V))
    onehot[np.arange(N), targets] = 1
    want_dl = (probs - onehot) * dlosses[:, None]
    plog, pdl, ptg = d.up(padded), d.up(dlosses), d.up(targets)
    args = lambda pdlog, ploss, *probs_: (pdlog, ploss, *probs_, plog, pdl, ptg, np.int32(B), np.int32(T), np.int32(V), np.int32(P))
    for num, name in enumerate(names, 1):
        for bs in (32, 128, 1024):
            pdlog, ploss = d.up(np.full(N * P, np.nan, np.float32)), d.up(np.full(N, np.nan, np.float32))
            if num == 1:
                mod.get_function(name)((N // (bs // 32),), (bs,), args(pdlog, ploss))
            else:
                mod.get_function(name)((N,), (bs,), args(pdlog, ploss, np.uint64(0)))
            ok()
            np.testing.assert_allclose(d.down(ploss, N, np.float32), want_loss, rtol=2e-5, err_msg=f"{name} block {bs} losses")
            np.testing.assert_allclose(d.down(pdlog, N * P, np.float32).reshape(N, P)[:, :V], want_dl, rtol=2e-5, atol=1e-8,
                                       err_msg=f"{name} block {bs} dlogits")
    # the probs output (debugging path) of kernels 2 and 3
    for name in names[1:3]:
        pprobs = d.up(np.full(N * P, np.nan, np.float32))
        mod.get_function(name)((N,), (256,), (d.zeros(N * P, np.float32), d.zeros(N, np.float32), pprobs, plog, pdl, ptg,
                                              np.int32(B), np.int32(T), np.int32(V), np.int32(P)))
        ok()
        np.testing.assert_allclose(d.down(pprobs, N * P, np.float32).reshape(N, P)[:, :V], probs, rtol=2e-5, atol=1e-10,
                                   err_msg=f"{name} probs")


def test_blog_shared_memory_static_and_dynamic_reverse(d):
    """NVIDIA developer blog "Using Shared Memory in CUDA C/C++": staticReverse (__shared__ int s[64]) and
    dynamicReverse (extern __shared__, n * sizeof(int) bytes) reversing 64 ints in place, <<<1, n>>> (two warps) as the
    post's main, then dynamicReverse over a full 1024-thread block."""
    mod = A.RawModule(code=src("blog_shared_memory_reverse.cu"))
    rng = np.random.default_rng(47)
    for name, n in (("staticReverse", 64), ("dynamicReverse", 64), ("dynamicReverse", 1024)):
        a = rng.integers(-10**6, 10**6, n).astype(np.int32)
        p = d.up(a)
        mod.get_function(name)((1,), (n,), (p, np.int32(n)), shared_mem=0 if name == "staticReverse" else n * 4)
        ok()
        np.testing.assert_array_equal(d.down(p, n, np.int32), a[::-1], err_msg=f"{name} n {n}")


def test_cuda_samples_simple_printf(d, capfd):
    """cuda-samples simplePrintf: testKernel<<<dim3(2, 2), dim3(2, 2, 2)>>>(10); every one of the 32 threads prints
    its block and thread index once (in any order, as a GPU's printf buffer)."""
    mod = A.RawModule(code=src("simple_printf.cu"))
    capfd.readouterr()
    mod.get_function("testKernel")((2, 2), (2, 2, 2), (np.int32(10),))
    ok()
    out = capfd.readouterr().out
    lines = [l for l in out.splitlines() if "Value is" in l]
    want = sorted(f"[{b}, {t}]:\t\tValue is:10" for b in range(4) for t in range(8))
    assert sorted(lines) == want, out


def test_cuda_samples_simple_assert_is_reported(d):
    """cuda-samples simpleAssert: testKernel<<<2, 32>>>(60) fails assert(gtid < N) in threads 60..63: the launch is
    reported at synchronize (the GPU's cudaErrorAssert), naming the assertion; N = 64 passes, and the process stays
    usable."""
    mod = A.RawModule(code=src("simple_assert.cu"))
    k = mod.get_function("testKernel")
    k((2,), (32,), (np.int32(64),))
    ok()
    k((2,), (32,), (np.int32(60),))
    st = acl.rt.synchronize_device()
    assert st == AclError.ACL_ERROR_RT_AICORE_EXCEPTION
    msg = acl.get_recent_err_msg()
    assert "gtid < N" in msg and "assert" in msg, msg
    k((2,), (32,), (np.int32(64),))
    ok()


def test_cuda_samples_clock_timed_reduction(d):
    """cuda-samples clock: timedReduction<<<NUM_BLOCKS=64, NUM_THREADS=256, 2 * 256 * 4>>>: each block finds the minimum of
    the same 512 inputs (the sample's input has 2 * NUM_THREADS floats) and stores clock() before and after; the sample's
    average (end - start) must be non-negative and the minimum exact."""
    mod = A.RawModule(code=src("clock.cu"))
    rng = np.random.default_rng(48)
    nb, nt = 64, 256
    x = rng.random(2 * nt).astype(np.float32)
    po, pt = d.up(np.full(nb, np.nan, np.float32)), d.zeros(2 * nb, np.int64)
    mod.get_function("timedReduction")((nb,), (nt,), (d.up(x), po, pt), shared_mem=2 * nt * 4)
    ok()
    np.testing.assert_array_equal(d.down(po, nb, np.float32), np.full(nb, x.min()))
    t = d.down(pt, 2 * nb, np.int64)
    assert (t[:nb] >= 0).all() and (t[nb:] >= t[:nb]).all(), t
    assert (t[nb:] - t[:nb]).mean() >= 0


@pytest.mark.parametrize("name,dt", [("testKernel<float>", np.float32), ("testKernel<int>", np.int32),
                                      ("testKernel<double>", np.float64), ("testKernel<unsigned char>", np.uint8)])
def test_cuda_samples_simple_templates(d, name, dt):
    """cuda-samples simpleTemplates: testKernel<T> with SharedMemory<T> (one extern __shared__ array per specialisation,
    the unspecialised getPointer calling an undefined extern __device__ error()), <<<1, len, sizeof(float) * len>>>,
    g_odata[tid] = len * g_idata[tid]; the sample runs float and int with len 64."""
    mod = A.RawModule(code=src("simple_templates.cu"), name_expressions=[name])
    rng = np.random.default_rng(49)
    n = 64
    x = rng.integers(0, 4 if dt == np.uint8 else 1000, n).astype(dt)
    po = d.zeros(n, dt)
    mod.get_function(name)((1,), (n,), (d.up(x), po), shared_mem=4 * n)
    ok()
    want = (x.astype(np.float64) * n).astype(dt)
    np.testing.assert_array_equal(d.down(po, n, dt), want)


def test_cuda_samples_cpp_overload(d):
    """cuda-samples cppOverload (removed in 8e03cbfc; kernel header of its parent): three overloaded __global__
    simple_kernel, picked by CuPy/NVRTC name expressions with a cast, <<<DIV_UP(N, THREAD_N), THREAD_N>>>, N = 1024."""
    sigs = {1: "(void(*)(const int*, int*, int))simple_kernel",
            2: "(void(*)(const int2*, int*, int))simple_kernel",
            3: "(void(*)(const int*, const int*, int*, int))simple_kernel"}
    mod = A.RawModule(code=src("cpp_overload.cu"), name_expressions=list(sigs.values()))
    rng = np.random.default_rng(50)
    n, a = 1024, 3
    x = rng.integers(-1000, 1000, 2 * n).astype(np.int32)
    px = d.up(x)
    tid = np.arange(n, dtype=np.int64)
    x64 = x.astype(np.int64)
    want = {1: x64[:n] * a + tid, 2: (x64[0::2] + x64[1::2]) * a + tid, 3: (x64[:n] + x64[n:]) * a + tid}
    for i, sig in sigs.items():
        po = d.up(np.full(n, -7, np.int32))
        args = (px, po, np.int32(a)) if i < 3 else (px, px + 4 * n, po, np.int32(a))
        mod.get_function(sig)((n // 256,), (256,), args)
        ok()
        np.testing.assert_array_equal(d.down(po, n, np.int32), want[i], err_msg=sig)


def test_cuda_samples_system_wide_atomics(d):
    """cuda-samples systemWideAtomics: atomicKernel (atomicAdd/Exch/Max/Min/Inc/Dec/CAS/And/Or/Xor_system, LOOP_NUM = 50
    each) on 10 ints starting at 0 with [7] = [9] = 0xff, checked as the sample's verify() with len = the GPU threads
    (the sample adds a CPU pass on managed memory; here the device part alone, 4 x 64 threads)."""
    mod = A.RawModule(code=src("system_wide_atomics.cu"))
    nb, nt, loop = 4, 64, 50
    n = nb * nt
    a = np.zeros(10, np.int32)
    a[7] = a[9] = 0xFF
    p = d.up(a)
    mod.get_function("atomicKernel")((nb,), (nt,), (p,))
    ok()
    r = d.down(p, 10, np.int32)
    inc = dec = 0
    for _ in range(n * loop):
        inc = 0 if inc >= 17 else inc + 1
        dec = 137 if (dec == 0 or dec > 137) else dec - 1
    andv = 0xFF
    for i in range(n):
        andv &= 2 * i + 7
    assert r[0] == 10 * n * loop
    assert 0 <= r[1] < n
    assert r[2] == n - 1 and r[3] == 0
    assert r[4] == inc and r[5] == dec
    assert 0 <= r[6] < n
    assert r[7] == andv
    assert r[8] == -1            # bits 0..31 from threads 0..31 (1 << tid for tid >= 32: clamped on a GPU)
    assert r[9] == 0xFF          # each thread xors its id an even number of times


def test_cuda_samples_inline_ptx(d):
    """cuda-samples inlinePTX: sequence_gpu reads %laneid with asm("mov.u32 %0, %%laneid;") (the emulator
    translates the PTX); checked as the sample's CPU reference sequence_cpu computes it: h_ptr[i] = i % 32
    (the sample's N = 1000 elements, 256 threads per block, so the last block is partial)."""
    mod = A.RawModule(code=src("inline_ptx.cu"))
    n, threads = 1000, 256
    p = d.up(np.full(n, -1, np.int32))
    mod.get_function("sequence_gpu")(((n + threads - 1) // threads,), (threads,), (p, np.int32(n)))
    ok()
    assert (d.down(p, n, np.int32) == np.arange(n) % 32).all()


def test_cuda_samples_simple_texture_is_a_compile_error():
    """cuda-samples simpleTexture: transformKernel fetches with tex2D<float>(cudaTextureObject_t, ...): textures are
    not emulated, a CompileException naming tex2D / the texture object, with the emulator's note saying so."""
    from aclnn_py.emulator import CompileException
    mod = A.RawModule(code=src("simple_texture.cu"))
    with pytest.raises(CompileException) as e:
        mod.get_function("transformKernel")
    msg = str(e.value)
    assert "tex2D" in msg or "cudaTextureObject_t" in msg, msg
    assert "note: textures and surfaces" in msg and "not supported by the emulator" in msg, msg


def test_cuda_samples_monte_carlo_curand(d):
    """cuda-samples MonteCarloMultiGPU (MonteCarlo_kernel.cu): rngSetupStates seeds one curandState (XORWOW) per
    thread with curand_init(blockIdx.x + gridDim.x * device, threadIdx.x, 0); MonteCarloOneBlockPerOption then prices
    one European call per block from curand_normal paths (__expf, a shared-memory + tile32 reduction). The prices,
    discounted as the sample's closeMonteCarloGPU does, must match Black-Scholes within the Monte Carlo error."""
    from math import erf, exp, log, sqrt
    mod = A.RawModule(code=src("monte_carlo_curand.cu"))
    grid, threads, opt_n, path_n = 8, 256, 8, 1 << 16
    rng = np.random.default_rng(52)   # the sample's ranges: S 5..50, X 10..25, T 1..5, R 0.06, V 0.10
    S, X, T = rng.uniform(5, 50, opt_n), rng.uniform(10, 25, opt_n), rng.uniform(1, 5, opt_n)
    S[:4], X[:4] = [20, 25, 30, 40], [20, 20, 25, 25]   # some well in the money, where paths count
    R, V = 0.06, 0.10
    states = d.empty(grid * threads * 48)              # sizeof(curandState) is 48, as on a GPU
    mod.get_function("rngSetupStates")((grid,), (threads,), (states, np.int32(0)))
    ok()
    opt = np.stack([S, X, (R - 0.5 * V * V) * T, V * np.sqrt(T)], 1).astype(np.float32)
    out = d.zeros(2 * opt_n, np.float32)
    mod.get_function("MonteCarloOneBlockPerOption")((grid,), (threads,),
                                                    (states, d.up(opt), out, np.int32(path_n), np.int32(opt_n)))
    ok()
    res = d.down(out, 2 * opt_n, np.float32).reshape(opt_n, 2).astype(np.float64)
    for i in range(opt_n):
        s, s2 = res[i]
        disc = exp(-R * T[i])
        price = disc * s / path_n
        std = sqrt(max(path_n * s2 - s * s, 0.0) / (path_n * (path_n - 1)))
        conf = disc * 1.96 * std / sqrt(path_n)          # the sample's 95% confidence half-width
        sq = V * sqrt(T[i])
        d1 = (log(S[i] / X[i]) + (R + 0.5 * V * V) * T[i]) / sq
        cnd = lambda z: 0.5 * (1 + erf(z / sqrt(2)))
        bs = S[i] * cnd(d1) - X[i] * exp(-R * T[i]) * cnd(d1 - sq)
        assert abs(price - bs) <= max(2.5 * conf, 1e-4 * S[i]), (i, price, bs, conf)
        if bs > 0.5:
            assert conf < 0.02 * bs, (i, conf, bs)   # the paths really were random and many


def test_cuda_samples_quasirandom_generator(d):
    """cuda-samples quasirandomGenerator: quasirandomGeneratorKernel<<<128, dim3(128, QRNG_DIMENSIONS)>>> XORs the
    static __constant__ c_Table[3][31] rows (a non-const pointer into __constant__, __umul24) for the set bits of
    seed + pos (the table, set by the test with get_global, is random here), and inverseCNDKernel<<<128, 128>>>
    (Moro's inverse normal, __logf) on its own uniform grid and on given inputs."""
    import statistics
    mod = A.RawModule(code=src("quasirandom_generator.cu"), name_expressions=["c_Table"])
    rng = np.random.default_rng(51)
    table = rng.integers(0, 2**31, (3, 31), dtype=np.uint32)
    mod.get_global("c_Table").copy_from_host(table.ctypes.data, table.nbytes)
    n, seed = 20000, (1 << 30) | 12345   # bits 0..30 of seed + pos all in play
    po = d.zeros(3 * n, np.float32)
    mod.get_function("quasirandomGeneratorKernel")((128,), (128, 3), (po, np.uint32(seed), np.uint32(n)))
    ok()
    data = seed + np.arange(n, dtype=np.uint64)
    res = np.zeros((3, n), np.uint64)
    for bit in range(31):
        on = ((data >> np.uint64(bit)) & np.uint64(1)).astype(bool)
        res[:, on] ^= table[:, bit:bit + 1].astype(np.uint64)
    want = ((res + 1) & 0xFFFFFFFF).astype(np.float64) * (1.0 / 2147483649.0)
    np.testing.assert_allclose(d.down(po, 3 * n, np.float32).reshape(3, n), want, rtol=1e-6)
    nd = statistics.NormalDist()
    for given in (False, True):
        m = 4096
        if given:
            u = rng.integers(1, 2**32 - 1, m, dtype=np.uint64).astype(np.uint32)
            pin = d.up(u)
        else:
            u = ((np.arange(m, dtype=np.uint64) + 1) * ((2**32 - 1) // (m + 1))).astype(np.uint32)
            pin = np.uint64(0)
        pz = d.zeros(m, np.float32)
        mod.get_function("inverseCNDKernel")((128,), (128,), (pz, pin, np.uint32(m)))
        ok()
        p = (u.astype(np.float64) + 0.5) / 4294967295.0
        want = np.array([nd.inv_cdf(v) for v in p])
        np.testing.assert_allclose(d.down(pz, m, np.float32), want, rtol=1e-5, atol=1e-6, err_msg=f"given {given}")


def test_cuda_samples_binomial_options(d):
    """cuda-samples binomialOptions: binomialOptionsKernel<<<optN, THREADBLOCK_SIZE = 128>>> prices European calls on a
    NUM_STEPS = 2048 binomial tree (16 nodes per thread in registers, an exchange through __shared__ with two cg::sync
    per step) from the static __constant__ d_OptionData[] into the static __device__ d_CallValue[]; the option data are
    prepared as the sample's host binomialOptionsGPU does (set and read with get_global); reference: the same tree in
    float64 from the same (float) parameters."""
    mod = A.RawModule(code=src("binomial_options.cu"), name_expressions=["d_OptionData", "d_CallValue"])
    rng = np.random.default_rng(52)
    opt, steps = 6, 2048
    S = rng.uniform(5, 30, opt); X = rng.uniform(1, 100, opt); Tm = rng.uniform(0.25, 10, opt)
    R, V = 0.06, 0.10
    dt = Tm / steps
    vDt = V * np.sqrt(dt)
    rDt = R * dt
    u, dn = np.exp(vDt), np.exp(-vDt)
    pu = (np.exp(rDt) - dn) / (u - dn)
    Df = np.exp(-rDt)
    rec = np.stack([S, X, vDt, pu * Df, (1 - pu) * Df], 1).astype(np.float32)   # __TOptionData {S, X, vDt, puByDf, pdByDf}
    mod.get_global("d_OptionData").copy_from_host(rec.ctypes.data, rec.nbytes)
    mod.get_function("binomialOptionsKernel")((opt,), (128,), ())
    ok()
    out = np.empty(opt, np.float32)
    mod.get_global("d_CallValue").copy_to_host(out.ctypes.data, out.nbytes)
    r = rec.astype(np.float64)
    want = np.empty(opt)
    for k in range(opt):
        call = np.maximum(r[k, 0] * np.exp(r[k, 2] * (2.0 * np.arange(steps + 1) - steps)) - r[k, 1], 0)
        for _ in range(steps):
            call = r[k, 3] * call[1:] + r[k, 4] * call[:-1]
        want[k] = call[0]
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)
    assert (want > 0.1).sum() >= 2   # not all worthless


# siboehm/SGEMM_CUDA kernels 1-11, each instantiated and launched as src/runner.cu's run_* function does:
# number -> (name expression, grid(M, N), block, two (M, N, K) the kernel supports).  Kernels 1/2 guard their edges
# (one ragged size); 3/4 need M, N, K multiples of the tile; 5..11 run the runner's BM = BN = 128 branch when
# M, N >= 128 (kernel 5's 64 x 64 branch as well: with BM = 64 only 64 threads load the 128 float4 of kernels 6..8's
# A tile, so the runner's small branch of 6..8 is broken on a GPU too and not tested); 11 needs BN = 256 and runs one
# size with K = 3 * BK (its odd last half-step).
_CD = lambda a, b: (a + b - 1) // b
SGEMM = {
    1: ("sgemm_naive", lambda M, N: (_CD(M, 32), _CD(N, 32)), (32, 32), [(128, 128, 128), (100, 72, 40)]),
    2: ("sgemm_global_mem_coalesce<32>", lambda M, N: (_CD(M, 32), _CD(N, 32)), (32 * 32,),
        [(128, 128, 128), (100, 72, 40)]),
    3: ("sgemm_shared_mem_block<32>", lambda M, N: (_CD(M, 32), _CD(N, 32)), (32 * 32,), [(128, 128, 128), (64, 96, 64)]),
    4: ("sgemm1DBlocktiling<64, 64, 8, 8>", lambda M, N: (_CD(N, 64), _CD(M, 64)), (64 * 64 // 8,),
        [(128, 128, 128), (256, 192, 64)]),
    5: ("sgemm2DBlocktiling<128, 128, 8, 8, 8>", lambda M, N: (_CD(N, 128), _CD(M, 128)), (128 * 128 // 64,),
        [(128, 128, 128), (256, 384, 64)]),
    "5 (M < 128)": ("sgemm2DBlocktiling<64, 64, 8, 8, 8>", lambda M, N: (_CD(N, 64), _CD(M, 64)), (64 * 64 // 64,),
                    [(64, 64, 32), (64, 192, 64)]),
    6: ("sgemmVectorize<128, 128, 8, 8, 8>", lambda M, N: (_CD(N, 128), _CD(M, 128)), (256,),
        [(128, 128, 128), (256, 384, 64)]),
    7: ("sgemmResolveBankConflicts<128, 128, 8, 8, 8>", lambda M, N: (_CD(N, 128), _CD(M, 128)), (256,),
        [(128, 128, 128), (256, 384, 64)]),
    8: ("sgemmResolveBankExtraCol<128, 128, 8, 8, 8>", lambda M, N: (_CD(N, 128), _CD(M, 128)), (256,),
        [(128, 128, 128), (256, 384, 64)]),
    9: ("sgemmAutotuned<128, 128, 16, 8, 8>", lambda M, N: (_CD(N, 128), _CD(M, 128)), (256,),   # K9_NUM_THREADS
        [(128, 128, 128), (256, 384, 64)]),
    10: ("sgemmWarptiling<128, 128, 16, 64, 64, 4, 8, 4, 128>", lambda M, N: (_CD(N, 128), _CD(M, 128)), (128,),
         [(128, 128, 128), (256, 384, 64)]),
    11: ("sgemmDoubleBuffering<128, 256, 16, 128, 32, 1, 8, 8, 256>", lambda M, N: (_CD(N, 256), _CD(M, 128)), (256,),
         [(128, 256, 128), (256, 512, 48)]),
}


@pytest.fixture(scope="module")
def sgemm_mod():
    return A.RawModule(code=src("sgemm_cuda.cu"), name_expressions=[v[0] for v in SGEMM.values()])


@pytest.mark.parametrize("kernel", list(SGEMM))
def test_siboehm_sgemm(d, sgemm_mod, kernel):
    """siboehm/SGEMM_CUDA (the "How to optimize a CUDA matmul kernel" worklog) kernels 1..11, C = alpha A @ B + beta C on
    row-major float32, each with the template parameters and launch geometry of src/runner.cu, at two sizes. Kernel 11
    (sgemmDoubleBuffering) splits the block into two 128-thread halves that reach __syncthreads() from different call
    sites (if (doubleBufferIdx == 0) {... __syncthreads() ...} else {...}): Volta and later count barrier arrivals per
    warp, so it runs on the default sm_80 as on the GPUs the repo benchmarks. Tolerance: K float32 products of N(0, 1)
    summed in order, |error| <= K * eps32 * sqrt(K) ~ 1e-4 at K = 128 (1e-5 seen)."""
    name, grid, block, sizes = SGEMM[kernel]
    rng = np.random.default_rng(60)
    alpha, beta = 0.5, 0.25
    for M, N, K in sizes:
        a = rng.standard_normal((M, K)).astype(np.float32)
        b = rng.standard_normal((K, N)).astype(np.float32)
        c = rng.standard_normal((M, N)).astype(np.float32)
        pc = d.up(c)
        sgemm_mod.get_function(name)(grid(M, N), block, (np.int32(M), np.int32(N), np.int32(K), np.float32(alpha),
                                                          d.up(a), d.up(b), np.float32(beta), pc))
        ok()
        want = alpha * (a.astype(np.float64) @ b.astype(np.float64)) + beta * c.astype(np.float64)
        np.testing.assert_allclose(d.down(pc, M * N, np.float32).reshape(M, N), want, rtol=0,
                                   atol=K * np.sqrt(K) * np.finfo(np.float32).eps, err_msg=f"{name} {M}x{N}x{K}")


def test_llmc_attention_backward_softmax(d):
    """llm.c dev/cuda/attention_backward.cu: the autoregressive softmax backward dpreatt = scale * att * (datt -
    sum_t2<=t att * datt) on (B, NH, T, T), by softmax_autoregressive_backward_kernel1 (one thread per t3, looping over
    b, h), kernel3 (a warp per t3, cg::reduce), kernel7<BlockSize> and kernel8<BlockSize> (a block per row / per 4 rows:
    warp sums into __shared__ block_acc[32], block.sync(), every warp cg::reduce's the slots back; kernel8 then rewrites
    its slot for the next row with no second barrier) launched as the file's launch_softmax_1/3/7/8 with the block
    sizes of its dispatch_launch. Kernel 8 with 64..1024 threads used to come back silently wrong (a warp ran a whole
    row ahead and overwrote block_acc before the others had read it). Only t3 <= t may be written: the rest of the
    NaN-filled output must stay NaN. (Kernels 4 and 6 write/read outside the row for some T and are left out.)"""
    mod = A.RawModule(code=src("llmc_attention_backward.cu"), options=LLMC,
                      name_expressions=[f"softmax_autoregressive_backward_kernel{k}<{b}>" for k in (7, 8)
                                        for b in (32, 64, 256, 1024)])
    rng = np.random.default_rng(61)
    I = np.int32
    for B, T, C, NH in ((2, 36, 48, 3), (1, 128, 64, 2)):
        hs = C // NH
        scale = np.float32(1.0) / np.sqrt(np.float32(hs))
        mask = np.broadcast_to(np.tril(np.ones((T, T), bool)), (B, NH, T, T))
        pre = np.where(mask, rng.standard_normal((B, NH, T, T)), -np.inf)
        att = np.exp(pre - pre.max(-1, keepdims=True))
        att = (att / att.sum(-1, keepdims=True)).astype(np.float32)
        datt = rng.standard_normal((B, NH, T, T)).astype(np.float32)
        a64, d64 = att.astype(np.float64), datt.astype(np.float64)
        want = scale * a64 * (d64 - np.where(mask, a64 * d64, 0).sum(-1, keepdims=True))
        patt, pdatt = d.up(att), d.up(datt)
        runs = [("softmax_autoregressive_backward_kernel1", (_CD(T, 32), B * NH), 32),
                ("softmax_autoregressive_backward_kernel3", (_CD(32 * T, 256), B * NH), 256)]
        runs += [(f"softmax_autoregressive_backward_kernel{k}<{bs}>", (T if k == 7 else T // 4, B * NH), bs)
                 for k in (7, 8) for bs in (32, 64, 256, 1024)]
        for name, grid, bs in runs:
            pd = d.up(np.full(B * NH * T * T, np.nan, np.float32))
            args = (I(B), I(T), I(C), I(NH)) if "<" not in name else (I(B), I(T), I(C), scale)
            mod.get_function(name)(grid, (bs,), (pd, pdatt, patt) + args)
            ok()
            got = d.down(pd, B * NH * T * T, np.float32).reshape(B, NH, T, T)
            assert np.isnan(got[~mask]).all(), f"{name} wrote above the diagonal"
            # |want| <= scale * (|datt| + |sum|) ~ 1; float32 sums of <= T terms
            np.testing.assert_allclose(got[mask], want[mask], rtol=0, atol=1e-6, err_msg=f"{name} B,T,C,NH={B},{T},{C},{NH}")
        # permute_kernel_backward / unpermute_kernel_backward: the += scatters of dq/dk/dv and dout (launcher block 256)
        dq, dk, dv = (rng.standard_normal((B, NH, T, hs)).astype(np.float32) for _ in range(3))
        dinp = rng.standard_normal((B, T, 3, NH, hs)).astype(np.float32)
        pdinp = d.up(dinp)
        n = B * T * C
        mod.get_function("permute_kernel_backward")((_CD(n, 256),), (256,), (pdinp, d.up(dq), d.up(dk), d.up(dv),
                                                                             I(B), I(T), I(NH), I(hs)))
        dout = rng.standard_normal((B, T, NH, hs)).astype(np.float32)
        dv0 = rng.standard_normal((B, NH, T, hs)).astype(np.float32)
        pdv = d.up(dv0)
        mod.get_function("unpermute_kernel_backward")((_CD(n, 256),), (256,), (pdv, d.up(dout), I(B), I(T), I(NH), I(hs)))
        ok()
        want_inp = dinp + np.stack([x.transpose(0, 2, 1, 3) for x in (dq, dk, dv)], 2)
        np.testing.assert_array_equal(d.down(pdinp, 3 * n, np.float32).reshape(B, T, 3, NH, hs), want_inp)
        np.testing.assert_array_equal(d.down(pdv, n, np.float32).reshape(B, NH, T, hs), dv0 + dout.transpose(0, 2, 1, 3))


def test_cuda_samples_transpose(d):
    """cuda-samples transpose: all 8 kernels with TILE_DIM 32, BLOCK_ROWS 16, grid (W / 32, H / 32), block (32, 16) as the
    sample's main, on a square 256 x 256 matrix (the sample's case; it checks copy/copySharedMem against the input and
    the rest against the transpose, the partial fine-/coarse-grained ones only for speed: here they are checked as what
    they do: transpose inside each tile / move whole tiles) and on a 512 x 96 one (transposeDiagonal's non-square
    block mapping; copySharedMem's guard xIndex < height && yIndex < width, written for square matrices, then leaves
    part of the output alone)."""
    mod = A.RawModule(code=src("transpose.cu"))
    rng = np.random.default_rng(62)
    TD, BR = 32, 16
    for W, H in ((256, 256), (512, 96)):
        a = rng.random((H, W), dtype=np.float32)
        pi = d.up(a)
        r = np.arange(H)[:, None]
        x = np.arange(W)[None, :]
        want = {"copy": a, "copySharedMem": np.where((x < H) & ((r // TD) * TD + (r % TD) % BR < W), a, -1),
                "transposeNaive": a.T, "transposeCoalesced": a.T, "transposeNoBankConflicts": a.T,
                "transposeDiagonal": a.T}
        if W == H:
            want["transposeFineGrained"] = a.reshape(H // TD, TD, W // TD, TD).transpose(0, 3, 2, 1).reshape(H, W)
            want["transposeCoarseGrained"] = a.reshape(H // TD, TD, W // TD, TD).transpose(2, 1, 0, 3).reshape(W, H)
        for name, w in want.items():
            po = d.up(np.full(W * H, -1, np.float32))
            mod.get_function(name)((W // TD, H // TD), (TD, BR), (po, pi, np.int32(W), np.int32(H)))
            ok()
            np.testing.assert_array_equal(d.down(po, W * H, np.float32), np.asarray(w, np.float32).reshape(-1),
                                          err_msg=f"{name} {W}x{H}")


def test_cuda_samples_nbody_integrate_bodies(d):
    """cuda-samples nbody: integrateBodies<float><<<n / blockSize, blockSize, blockSize * 4 * sizeof(float)>>> as the
    sample's integrateNbodySystem (one device, numTiles = n / blockSize: each tile of float4 positions staged in
    SharedMemory<float4> between two cg::sync, all-pairs accelerations with rsqrtf and the __constant__
    softeningSquared, set with get_global), ping-ponging the position buffers; demo 0's timestep 0.016 and softening
    0.1, damping 0.995. First step from rest (v = a * dt * damping, so the accelerations are compared directly), then
    two more steps. Reference: the same update in float64; float32 sums of n terms (up to ~60 each for close pairs)
    that cancel to |a| ~ 10..100 are good to ~1e-6 of the largest |v| (seen), compared at 2e-5; positions at 1e-6."""
    mod = A.RawModule(code=src("nbody.cu"), name_expressions=["integrateBodies<float>", "softeningSquared"])
    soft2 = np.array([0.1 * 0.1], np.float32)
    mod.get_global("softeningSquared").copy_from_host(soft2.ctypes.data, soft2.nbytes)
    k = mod.get_function("integrateBodies<float>")
    rng = np.random.default_rng(63)
    dt, damp = np.float32(0.016), np.float32(0.995)

    def step64(p, v):
        r = p[None, :, :3] - p[:, None, :3]
        s = p[None, :, 3] / ((r * r).sum(-1) + float(soft2[0])) ** 1.5
        v = v.copy()
        p = p.copy()
        v[:, :3] = (v[:, :3] + (r * s[..., None]).sum(1) * float(dt)) * float(damp)
        p[:, :3] += v[:, :3] * float(dt)
        return p, v

    for n, bs in ((1024, 256), (384, 128)):
        pos = np.concatenate([rng.standard_normal((n, 3)) * 1.54, rng.uniform(0.5, 1.5, (n, 1))], 1).astype(np.float32)
        vel = np.zeros((n, 4), np.float32)
        pp, pv = [d.up(pos), d.up(pos)], d.up(vel)
        p64, v64 = pos.astype(np.float64), vel.astype(np.float64)
        cur = 0
        for st in range(3):
            k((n // bs,), (bs,), (pp[1 - cur], pp[cur], pv, np.uint32(0), np.uint32(n), dt, damp, np.int32(n // bs)),
              shared_mem=bs * 4 * 4)
            ok()
            cur = 1 - cur
            p64, v64 = step64(p64, v64)
            gv = d.down(pv, 4 * n, np.float32).reshape(n, 4)
            gp = d.down(pp[cur], 4 * n, np.float32).reshape(n, 4)
            msg = f"n {n} block {bs} step {st}"
            np.testing.assert_allclose(gv[:, :3], v64[:, :3], rtol=0, atol=2e-5 * np.abs(v64[:, :3]).max(), err_msg=msg)
            np.testing.assert_array_equal(gv[:, 3], vel[:, 3], err_msg=msg)
            np.testing.assert_allclose(gp, p64, rtol=0, atol=1e-6 * np.abs(p64).max(), err_msg=msg)
