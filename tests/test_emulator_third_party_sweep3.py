"""Third realism sweep: more public CUDA kernels (tests/third_party_kernels/, origins in its README) run
unchanged through aclnn_py.RawModule on the emulator, each result checked against NumPy. A kernel the
emulator cannot run must fail with a clear error; one that runs must give the right numbers."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import aclnn_py as A
from aclnn_py import acl
from aclnn_py.emulator import CompileException
from harness import sync_ok as ok  # the device synchronises without an error

DIR = Path(__file__).parent / "third_party_kernels"
pytestmark = pytest.mark.skipif(
    acl._state.state.initialized and acl._state.state.backend.name != "host", reason="emulator run")


def src(name):
    return (DIR / name).read_text()


# ---------------------------------------------------------------- NVIDIA/cuda-samples @ c94ff366

def test_cs_vector_add(d):
    """vectorAdd: 50000 elements, 256 threads per block, as the sample launches it."""
    mod = A.RawModule(code=src("cs_vector_add.cu"))
    rng = np.random.default_rng(300)
    n = 50000
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    pc = d.zeros(n, np.float32)
    mod.get_function("vectorAdd")(((n + 255) // 256,), (256,), (d.up(a), d.up(b), pc, np.int32(n)))
    ok()
    np.testing.assert_array_equal(d.down(pc, n, np.float32), a + b)


def test_cs_scalar_prod(d):
    """scalarProd: scalarProdGPU<<<128, 256>>> over 256 vectors of 4096 elements (__mul24, 1024 accumulators, a
    tree in shared memory with cg::sync); replayed in float32 in the kernel's order: bit-exact."""
    mod = A.RawModule(code=src("cs_scalar_prod.cu"))
    rng = np.random.default_rng(301)
    vn, en, accum = 256, 4096, 1024
    a = rng.random(vn * en, dtype=np.float32)
    b = rng.random(vn * en, dtype=np.float32)
    pc = d.zeros(vn, np.float32)
    mod.get_function("scalarProdGPU")((128,), (256,), (pc, d.up(a), d.up(b), np.int32(vn), np.int32(en)))
    ok()
    prod = (a * b).reshape(vn, en // accum, accum)
    acc = np.zeros((vn, accum), np.float32)
    for j in range(en // accum):
        acc = acc + prod[:, j, :]
    s = accum // 2
    while s > 0:
        acc = acc[:, :s] + acc[:, s:2 * s]
        s //= 2
    np.testing.assert_array_equal(d.down(pc, vn, np.float32), acc[:, 0])


def test_cs_simple_cooperative_groups(d, capfd):
    """simpleCooperativeGroups: cgkernel<<<1, 64, 64 * sizeof(int)>>>: sumReduction over a type-erased
    cg::thread_group (the block, then tiled_partition<16>), results printed."""
    mod = A.RawModule(code=src("cs_simple_cooperative_groups.cu"))
    capfd.readouterr()
    mod.get_function("cgkernel")((1,), (64,), (), shared_mem=64 * 4)
    ok()
    out = capfd.readouterr().out
    assert "Sum of all ranks 0..63 in threadBlockGroup is 2016 (expected 2016)" in out, out
    assert "Now creating 4 groups, each of size 16 threads:" in out, out
    lines = [l for l in out.splitlines() if "tiledPartition16 group is" in l]
    assert len(lines) == 4 and all("is 120 (expected 120)" in l for l in lines), out


ALIGNED = [("uint8", 1, 1), ("uint16", 2, 2), ("RGBA8_misaligned", 4, 4), ("LA32_misaligned", 8, 8),
           ("RGB32_misaligned", 12, 12), ("RGBA32_misaligned", 16, 16), ("RGBA8", 4, 4), ("I32", 4, 4),
           ("LA32", 8, 8), ("RGB32", 12, 16), ("RGBA32", 16, 16), ("RGBA32_2", 32, 32)]


def test_cs_aligned_types(d):
    """alignedTypes: testKernel<TData><<<64, 256>>> copies an array of each (mis)aligned struct (__align__(4/8/16),
    RGB32 padded to 16 bytes); the sample's testCPU compares the packed bytes of each element."""
    names = [f"testKernel<{t}>" for t, _, _ in ALIGNED]
    mod = A.RawModule(code=src("cs_aligned_types.cu"), name_expressions=names)
    rng = np.random.default_rng(302)
    size = 1 << 16
    x = rng.integers(0, 256, size, dtype=np.uint8)
    pi = d.up(x)
    for (t, packed, sz), name in zip(ALIGNED, names):
        po = d.up(np.zeros(size, np.uint8))
        n = size // sz
        mod.get_function(name)((64,), (256,), (po, pi, np.int32(n)))
        ok()
        y = d.down(po, size, np.uint8)
        got = y[:n * sz].reshape(n, sz)[:, :packed]
        want = x[:n * sz].reshape(n, sz)[:, :packed]
        np.testing.assert_array_equal(got, want, err_msg=t)


def _check_sorted_run(res):
    """newdelete's checkResult: sorted, the values that are not -1 run 0, 1, 2, ..."""
    v = np.sort(res)
    v = v[v != -1]
    np.testing.assert_array_equal(v, np.arange(v.size))
    return v.size


def test_cs_newdelete(d):
    """newdelete: a Vector<int> made with device `new` (virtual push/pop through a Container<int>*) filled by one
    kernel, drained by another, deleted by a third; placement new of a Vector in shared memory (int and struct)."""
    mod = A.RawModule(code=src("cs_newdelete.cu"))
    blocks, threads = 64, 256
    pcont = d.zeros(1, np.uint64)
    mod.get_function("vectorCreate")((1,), (1,), (pcont, np.int32(blocks * threads)))
    mod.get_function("containerFill")((blocks,), (threads,), (pcont,))
    pres = d.up(np.full(blocks * threads, -7, np.int32))
    mod.get_function("containerConsume")((blocks,), (threads,), (pcont, pres))
    mod.get_function("containerDelete")((1,), (1,), (pcont,))
    ok()
    assert _check_sorted_run(d.down(pres, blocks * threads, np.int32)) == blocks
    for k in ("placementNew", "complexVector"):
        pr = d.up(np.full(threads, -7, np.int32))
        mod.get_function(k)((1,), (threads,), (pr,))
        ok()
        assert _check_sorted_run(d.down(pr, threads, np.int32)) == threads // 2, k


def test_cs_sobol_qrng(d):
    """SobolQRNG: sobolGPU_kernel on a grid (32, n_dimensions) x 64 as sobolGPU sets it up (8 SMs); each output is
    the XOR of the direction numbers picked by the Gray code of its index, times 2^-32 (exact in float)."""
    mod = A.RawModule(code=src("cs_sobol_qrng.cu"))
    rng = np.random.default_rng(303)
    nv, nd = 10000, 5
    dirs = rng.integers(0, 2 ** 32, (nd, 32), dtype=np.uint64).astype(np.uint32)
    dirs[0] = (1 << (31 - np.arange(32))).astype(np.uint32)
    po = d.zeros(nv * nd, np.float32)
    mod.get_function("sobolGPU_kernel")((32, nd), (64,), (np.uint32(nv), np.uint32(nd), d.up(dirs), po))
    ok()
    i = np.arange(nv, dtype=np.uint32)
    g = i ^ (i >> 1)
    want = np.zeros((nd, nv), np.uint32)
    for k in range(32):
        bit = ((g >> k) & 1).astype(bool)
        want[:, bit] ^= dirs[:, k:k + 1]
    np.testing.assert_array_equal(d.down(po, nv * nd, np.float32).reshape(nd, nv),
                                  want.astype(np.float32) * np.float32(2.3283064E-10))


CS_COMMON = ("-I", str(DIR / "cs_common"))   # cuda-samples' Common/helper_math.h (float4 operators)


def _fdtd_step(inp, c, dx, dy, dz, R=4):
    """FiniteDifferencesKernel's arithmetic on the whole inner volume, in its order, float32."""
    out = inp.copy()
    zs, ys, xs = slice(R, R + dz), slice(R, R + dy), slice(R, R + dx)
    cur = inp[zs, ys, xs]
    v = c[0] * cur
    for i in range(1, R + 1):
        t = inp[R + i:R + i + dz, ys, xs] + inp[R - i:R - i + dz, ys, xs]
        t = t + inp[zs, R - i:R - i + dy, xs]
        t = t + inp[zs, R + i:R + i + dy, xs]
        t = t + inp[zs, ys, R - i:R - i + dx]
        t = t + inp[zs, ys, R + i:R + i + dx]
        v = v + c[i] * t
    out[zs, ys, xs] = v
    return out


def test_cs_fdtd3d(d):
    """FDTD3d: FiniteDifferencesKernel (radius-4 stencil in __constant__, a 2-D shared tile with halos, registers
    streaming through z with cg::sync), 32x16 blocks, three time steps ping-ponging two buffers that start 128-byte
    aligned past a padding as fdtdGPU lays them out; replayed in float32: bit-exact."""
    mod = A.RawModule(code=src("cs_fdtd3d.cu"))
    rng = np.random.default_rng(304)
    R, dx, dy, dz = 4, 64, 32, 10
    vol = rng.random((dz + 2 * R, dy + 2 * R, dx + 2 * R), dtype=np.float32)
    coeff = (rng.random(R + 1, dtype=np.float32) * 0.2).astype(np.float32)
    mod.get_global("stencil").copy_from_host(coeff.ctypes.data, coeff.nbytes)
    pad = 128 // 4 - R
    bufs = [np.concatenate([np.zeros(pad, np.float32), vol.ravel()]) for _ in range(2)]
    pin, pout = d.up(bufs[0]), d.up(bufs[1])
    k = mod.get_function("FiniteDifferencesKernel")
    src_p, dst_p = pin + pad * 4, pout + pad * 4
    want = vol
    for _ in range(3):
        k((dx // 32, dy // 16), (32, 16), (dst_p, src_p, np.int32(dx), np.int32(dy), np.int32(dz)))
        src_p, dst_p = dst_p, src_p
        want = _fdtd_step(want, coeff, dx, dy, dz)
    ok()
    final = pout if src_p == pout + pad * 4 else pin
    got = d.down(final, pad + vol.size, np.float32)[pad:].reshape(vol.shape)
    np.testing.assert_array_equal(got, want)


def _rgba_to_f(c):
    return np.stack([((c >> (8 * k)) & 0xFF).astype(np.float32) / np.float32(255) for k in range(4)])


def _f_to_rgba(f):
    f = np.clip(f, np.float32(0), np.float32(1))
    u = (f * np.float32(255)).astype(np.uint32)
    return u[0] | (u[1] << 8) | (u[2] << 16) | (u[3] << 24)


def _rg_columns(img, a0, a1, a2, a3, b1, b2, cp, cn):
    """d_recursiveGaussian_rgba over every column of img (h, w), float32 as the kernel computes it."""
    f32 = np.float32
    h = img.shape[0]
    out = np.zeros_like(img)
    xp = _rgba_to_f(img[0])
    yb = cp * xp
    yp = yb
    for y in range(h):
        xc = _rgba_to_f(img[y])
        yc = a0 * xc + a1 * xp - b1 * yp - b2 * yb
        out[y] = _f_to_rgba(yc)
        xp, yb, yp = xc, yp, yc
    xn = xa = _rgba_to_f(img[h - 1])
    yn = cn * xn
    ya = yn
    for y in range(h - 1, -1, -1):
        xc = _rgba_to_f(img[y])
        yc = a2 * xn + a3 * xa - b1 * yn - b2 * ya
        xa, xn, ya, yn = xn, xc, yn, yc
        out[y] = _f_to_rgba(_rgba_to_f(out[y]) + yc)
    assert all(isinstance(v, f32) for v in (a0, a1, a2, a3, b1, b2, cp, cn))
    return out


def test_cs_recursive_gaussian(d):
    """recursiveGaussian: gaussianFilterRGBA's order-0 pipeline (d_recursiveGaussian_rgba over columns, d_transpose
    with a padded shared tile, again over the rows, transpose back) on RGBA8 packed in uint, float4 arithmetic of
    helper_math.h (found with -I); then d_simpleRecursive_rgba; replayed in float32: bit-exact."""
    mod = A.RawModule(code=src("cs_recursive_gaussian.cu"), options=CS_COMMON)
    rng = np.random.default_rng(305)
    w, h, nthreads = 72, 40, 64
    img = rng.integers(0, 2 ** 32, (h, w), dtype=np.uint64).astype(np.uint32)
    f32 = np.float32
    sigma = f32(3.0)
    alpha = f32(f32(1.695) / sigma)
    ema = f32(np.exp(-np.float64(alpha)))
    ema2 = f32(np.exp(-2 * np.float64(alpha)))
    b1, b2 = f32(-2) * ema, ema2
    k = (f32(1) - ema) * (f32(1) - ema) / (f32(1) + f32(2) * alpha * ema - ema2)
    a0, a1, a2, a3 = k, k * (alpha - f32(1)) * ema, k * (alpha + f32(1)) * ema, -k * ema2
    cp = (a0 + a1) / (f32(1) + b1 + b2)
    cn = (a2 + a3) / (f32(1) + b1 + b2)
    ps, pd, pt = d.up(img), d.zeros(w * h, np.uint32), d.zeros(w * h, np.uint32)
    rg, tr = mod.get_function("d_recursiveGaussian_rgba"), mod.get_function("d_transpose")
    args = tuple(np.float32(v) for v in (a0, a1, a2, a3, b1, b2, cp, cn))
    rg(((w + nthreads - 1) // nthreads,), (nthreads,), (ps, pt, np.int32(w), np.int32(h)) + args)
    tr(((w + 15) // 16, (h + 15) // 16), (16, 16), (pd, pt, np.int32(w), np.int32(h)))
    rg(((h + nthreads - 1) // nthreads,), (nthreads,), (pd, pt, np.int32(h), np.int32(w)) + args)
    tr(((h + 15) // 16, (w + 15) // 16), (16, 16), (pd, pt, np.int32(h), np.int32(w)))
    ok()
    want = _rg_columns(_rg_columns(img, a0, a1, a2, a3, b1, b2, cp, cn).T.copy(), a0, a1, a2, a3, b1, b2, cp, cn).T
    np.testing.assert_array_equal(d.down(pd, w * h, np.uint32).reshape(h, w), want)
    # the simple first-order filter (USE_SIMPLE_FILTER) over the columns
    po = d.zeros(w * h, np.uint32)
    mod.get_function("d_simpleRecursive_rgba")(((w + nthreads - 1) // nthreads,), (nthreads,),
                                               (ps, po, np.int32(w), np.int32(h), ema))
    ok()
    out = np.zeros_like(img)
    yp = _rgba_to_f(img[0])
    for y in range(h):
        xc = _rgba_to_f(img[y])
        yc = xc + ema * (yp - xc)
        out[y] = _f_to_rgba(yc)
        yp = yc
    yp = _rgba_to_f(img[h - 1])
    for y in range(h - 1, -1, -1):
        xc = _rgba_to_f(img[y])
        yc = xc + ema * (yp - xc)
        out[y] = _f_to_rgba((_rgba_to_f(out[y]) + yc) * f32(0.5))
        yp = yc
    np.testing.assert_array_equal(d.down(po, w * h, np.uint32).reshape(h, w), out)


def test_cs_fp16_scalar_product(d):
    """fp16ScalarProduct: scalarProductKernel_native (half2 operators) and _intrinsics (__hfma2, __hadd2,
    __low2float) <<<128, 128>>> over 128*128*16 half2 pairs (the sample's index i = threadIdx.x + blockDim.x +
    blockIdx.x kept); replayed in float16 (exact rounding per operation): bit-exact."""
    mod = A.RawModule(code=src("cs_fp16_scalar_product.cu"))
    rng = np.random.default_rng(306)
    nb = nt = 128
    size = nb * nt * 16
    for ints in (True, False):
        if ints:   # the sample's generateInput: x = rand() % 4, y = rand() % 2
            a = np.stack([rng.integers(0, 4, size), rng.integers(0, 2, size)], 1).astype(np.float16)
            b = np.stack([rng.integers(0, 4, size), rng.integers(0, 2, size)], 1).astype(np.float16)
        else:
            a = (rng.random((size, 2)) * 0.25).astype(np.float16)
            b = (rng.random((size, 2)) * 0.25).astype(np.float16)
        pa, pb = d.up(a), d.up(b)
        for name in ("scalarProductKernel_native", "scalarProductKernel_intrinsics"):
            pr = d.zeros(nb, np.float32)
            mod.get_function(name)((nb,), (nt,), (pa, pb, pr, np.uint64(size)))
            ok()
            stride = nb * nt
            acc = np.zeros((nb, nt, 2), np.float16)
            base = np.arange(nt)[None, :] + nt + np.arange(nb)[:, None]
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            it = 0
            while True:
                idx = base + it * stride
                if not (idx < size).any():
                    break
                m = (idx < size)[..., None]
                ii = np.minimum(idx, size - 1)
                if name.endswith("native"):
                    new = (a[ii] * b[ii]).astype(np.float16) + acc
                else:
                    new = (a64[ii] * b64[ii] + acc.astype(np.float64)).astype(np.float16)
                acc = np.where(m, new, acc)
                it += 1
            n = nt
            while n > 1:
                n //= 2
                acc = acc[:, :n] + acc[:, n:2 * n]
            r = acc[:, 0].astype(np.float32)
            want = r[:, 1] + r[:, 0] if name.endswith("native") else r[:, 0] + r[:, 1]
            np.testing.assert_array_equal(d.down(pr, nb, np.float32), want, err_msg=f"{name} ints={ints}")


def test_cs_simple_occupancy(d):
    """simpleOccupancy: square<<<ceil(n/32), 32>>> (manualBlockSize) with an unused extern __shared__ array, then
    with a 1024-thread block and dynamic shared memory, as the occupancy-API launch does."""
    mod = A.RawModule(code=src("cs_simple_occupancy.cu"))
    n = 100000
    x = np.arange(n, dtype=np.int32) % 40000 - 20000
    p = d.up(x)
    k = mod.get_function("square")
    k(((n + 31) // 32,), (32,), (p, np.int32(n)))
    k(((n + 1023) // 1024,), (1024,), (p, np.int32(n)), shared_mem=1024 * 4)
    ok()
    np.testing.assert_array_equal(d.down(p, n, np.int32), (x.astype(np.int64) ** 4).astype(np.int32))


def test_cs_simple_awbarrier_is_a_clear_compile_error():
    """simpleAWBarrier: cuda::barrier<thread_scope_block> from <cuda/barrier> (libcu++) with a grid sync: libcu++ is
    not provided, the CompileException names the header and says so."""
    with pytest.raises(CompileException) as e:
        A.RawModule(code=src("cs_simple_awbarrier.cu")).get_function("normVecByDotProductAWBarrier")
    msg = str(e.value)
    assert "cuda/barrier" in msg, msg


def test_cs_tf32_tensor_core_gemm_is_a_clear_compile_error():
    """tf32TensorCoreGemm: its device code includes <cuda/pipeline> (compute_tf32gemm_async_copy): a CompileException
    naming the header."""
    with pytest.raises(CompileException) as e:
        A.RawModule(code=src("cs_tf32_tensor_core_gemm.cu")).get_function("simple_wmma_tf32gemm")
    assert "cuda/pipeline" in str(e.value), str(e.value)


def test_cs_cuda_tensor_core_gemm_simple_wmma(d):
    """cudaTensorCoreGemm: the whole device code compiles (compute_gemm's 2-D extern __shared__ half array, int4
    copies, wmma on shared memory); simple_wmma_gemm (wmma 16x16x16 half -> float, A row-major, B col-major) runs as
    main launches it, blockDim (128, 4), on 96x80x64 with the sample's rand() % 3 data and alpha 1.1, beta 1.2;
    integer products and sums are exact, the epilogue replayed in float32: bit-exact."""
    mod = A.RawModule(code=src("cs_cuda_tensor_core_gemm.cu"))
    rng = np.random.default_rng(307)
    M, N, K = 96, 80, 64
    a = rng.integers(0, 3, (M, K)).astype(np.float16)
    bt = rng.integers(0, 3, (N, K)).astype(np.float16)     # B col-major: row n holds column n
    c = rng.integers(0, 3, (M, N)).astype(np.float32)
    pd_ = d.zeros(M * N, np.float32)
    gx = (M + (16 * 128 // 32 - 1)) // (16 * 128 // 32)
    gy = (N + 16 * 4 - 1) // (16 * 4)
    mod.get_function("simple_wmma_gemm")((gx, gy), (128, 4), (d.up(a), d.up(bt), d.up(c), pd_, np.int32(M), np.int32(N),
                                                             np.int32(K), np.float32(1.1), np.float32(1.2)))
    ok()
    acc = (a.astype(np.float64) @ bt.astype(np.float64).T).astype(np.float32)
    want = np.float32(1.1) * acc + np.float32(1.2) * c
    np.testing.assert_array_equal(d.down(pd_, M * N, np.float32).reshape(M, N), want)


def test_cs_imma_tensor_core_gemm_simple_wmma(d):
    """immaTensorCoreGemm: device code compiles (compute_gemm_imma); simple_wmma_gemm_imma (u8 x u8 -> int wmma,
    lda = m_ld as published, so square) on 96x96x96 uint8 with alpha = beta = 1 as main uses: exact."""
    mod = A.RawModule(code=src("cs_imma_tensor_core_gemm.cu"))
    rng = np.random.default_rng(308)
    M = N = K = 96
    a = rng.integers(0, 256, (M, K), dtype=np.uint8)
    bt = rng.integers(0, 256, (N, K), dtype=np.uint8)
    c = rng.integers(-1000, 1000, (M, N)).astype(np.int32)
    pd_ = d.zeros(M * N, np.int32)
    gx = (M + (16 * 128 // 32 - 1)) // (16 * 128 // 32)
    gy = (N + 16 * 4 - 1) // (16 * 4)
    mod.get_function("simple_wmma_gemm_imma")((gx, gy), (128, 4), (d.up(a), d.up(bt), d.up(c), pd_, np.int32(M),
                                                                  np.int32(N), np.int32(K), np.int32(1), np.int32(1)))
    ok()
    want = a.astype(np.int64) @ bt.astype(np.int64).T + c
    np.testing.assert_array_equal(d.down(pd_, M * N, np.int32).reshape(M, N), want.astype(np.int32))


def _tridiag(rng, n):
    """genTridiag's CSR tridiagonal matrix (random values drawn here)."""
    diag = rng.random(n, dtype=np.float32) + np.float32(10)
    off = rng.random(n - 1, dtype=np.float32)
    I, J, V = [0], [], []
    for i in range(n):
        for j in (i - 1, i, i + 1):
            if 0 <= j < n:
                J.append(j)
                V.append(diag[i] if j == i else off[min(i, j)])
        I.append(len(J))
    dense = np.diag(diag.astype(np.float64)) + np.diag(off.astype(np.float64), 1) + np.diag(off.astype(np.float64), -1)
    return np.array(I, np.int32), np.array(J, np.int32), np.array(V, np.float32), dense


def test_cs_conjugate_gradient_multiblock_cg(d):
    """conjugateGradientMultiBlockCG: gpuConjugateGradient under a cooperative launch (grid.sync() ~6 times per
    iteration, cg::reduce of doubles over tiled_partition<32>, atomicAdd on a double, extern __shared__ double),
    512 threads per block, sMemSize as main computes it, on a 6000-row tridiagonal system with rhs = 1, tol 1e-5;
    the solution is checked against NumPy's solve (the cross-block atomic order makes the bits vary)."""
    k = A.RawKernel(src("cs_conjugate_gradient_mbcg.cu"), "gpuConjugateGradient", enable_cooperative_groups=True)
    rng = np.random.default_rng(309)
    n = 6000
    I, J, V, dense = _tridiag(rng, n)
    px, pr = d.zeros(n, np.float32), d.up(np.ones(n, np.float32))
    pAx, pp, pdot = d.zeros(n, np.float32), d.zeros(n, np.float32), d.zeros(1, np.float64)
    blocks = 4
    k((blocks,), (512,), (d.up(I), d.up(J), d.up(V), px, pAx, pp, pr, pdot, np.int32(V.size), np.int32(n),
                          np.float32(1e-5)), shared_mem=8 * (512 // 32 + 1))
    ok()
    x = d.down(px, n, np.float32)
    np.testing.assert_allclose(x, np.linalg.solve(dense, np.ones(n)), rtol=1e-5, atol=1e-7)
    assert np.abs(dense @ x - 1).max() < 1e-4   # the sample's own check (rsum vs rhs)


def test_cs_eigenvalues_bisect_small(d):
    """eigenvalues: bisectKernel (bisect_kernel_small.cuh with config.h, util.h's templated min/max, bisect_util.cu,
    found with -I as published) <<<1, 512>>> on a 400x400 symmetric tridiagonal matrix (main's random data, g_s one
    past a leading 0), interval from computeGerschgorin, precision 1e-5; eigenvalues placed by left_count as
    processResultSmallMatrix does, compared with numpy.linalg.eigvalsh."""
    code = '#include "bisect_kernel_small.cuh"\n'
    mod = A.RawModule(code=code, options=("-I", str(DIR / "cs_eigenvalues")))
    rng = np.random.default_rng(310)
    n = 400
    a = (2 * (rng.random(n) - 0.5)).astype(np.float32)
    b = (2 * (rng.random(n) - 0.5)).astype(np.float32)
    b[0] = 0
    s = b[1:]
    # computeGerschgorin, in float32
    f32, eps = np.float32, np.finfo(np.float32).eps
    lg, ug = f32(np.finfo(np.float32).max), f32(-np.finfo(np.float32).max)
    for i in range(1, n - 1):
        sa = abs(s[i - 1]) + abs(s[i])
        lg, ug = min(lg, a[i] - sa), max(ug, a[i] + sa)
    lg, ug = min(lg, a[0] - abs(s[0])), max(ug, a[0] + abs(s[0]))
    lg, ug = min(lg, a[n - 1] - abs(s[n - 2])), max(ug, a[n - 1] + abs(s[n - 2]))
    bnorm = max(abs(ug), abs(lg))
    psi = f32(11) * eps * bnorm
    lg = lg - bnorm * f32(2) * f32(n) * eps - psi
    ug = ug + bnorm * f32(2) * f32(n) * eps + psi
    pa, pb = d.up(a), d.up(b)
    pl, pr = d.zeros(n, np.float32), d.zeros(n, np.float32)
    plc, prc = d.zeros(n, np.uint32), d.zeros(n, np.uint32)
    mod.get_function("bisectKernel")((1,), (512,), (pa, pb + 4, np.uint32(n), pl, pr, plc, prc, f32(lg), f32(ug),
                                                    np.uint32(0), np.uint32(n), f32(1e-5)))
    ok()
    left, lc = d.down(pl, n, np.float32), d.down(plc, n, np.uint32)
    assert sorted(lc.tolist()) == list(range(n))
    eig = np.empty(n, np.float32)
    eig[lc] = left
    dense = np.diag(a.astype(np.float64)) + np.diag(s.astype(np.float64), 1) + np.diag(s.astype(np.float64), -1)
    np.testing.assert_allclose(eig, np.linalg.eigvalsh(dense), atol=5e-5)


def _dct_matrix():
    k = np.arange(8)[:, None]
    n = np.arange(8)[None, :]
    c = np.cos((2 * n + 1) * k * np.pi / 16) * np.sqrt(2 / 8)
    c[0] /= np.sqrt(2)
    return c


def _blocks_apply(img, m):
    h, w = img.shape
    b = img.reshape(h // 8, 8, w // 8, 8).transpose(0, 2, 1, 3)
    out = m @ b @ m.T
    return out.transpose(0, 2, 1, 3).reshape(h, w)


DCT_Q = np.array([32, 33, 51, 81, 66, 39, 34, 17, 33, 36, 48, 47, 28, 23, 12, 12, 51, 48, 47, 28, 23, 12,
                  12, 12, 81, 47, 28, 23, 12, 12, 12, 12, 66, 28, 23, 12, 12, 12, 12, 12, 39, 23, 12, 12,
                  12, 12, 12, 12, 34, 12, 12, 12, 12, 12, 12, 12, 17, 12, 12, 12, 12, 12, 12, 12], np.int64).reshape(8, 8)


def test_cs_dct8x8(d):
    """dct8x8: the kernels dct8x8.cu includes (Common.h without its helper includes): CUDAkernel2DCT / 2IDCT (float,
    8 threads per 8x8 block, 32x16 tiles in shared memory), CUDAkernelShortDCT / ShortIDCT (16-bit fixed point, shorts
    moved as int pairs and transformed through unsigned int* views), both quantization kernels (__constant__ short Q,
    roundf), launched as WrapperCUDA2 / WrapperCUDAshort do on a 128x96 image centred at 128. Float DCT against an
    orthonormal 8x8 DCT-II in float64; the short DCT within 2 units of it; quantizations exact."""
    code = '#include "dct8x8_kernel2.cuh"\n#include "dct8x8_kernel_quantization.cuh"\n#include "dct8x8_kernel_short.cuh"\n'
    mod = A.RawModule(code=code, options=("-I", str(DIR / "cs_dct8x8")))
    rng = np.random.default_rng(311)
    h, w = 96, 128
    img = rng.integers(0, 256, (h, w)).astype(np.float32) - 128
    C = _dct_matrix()
    want = _blocks_apply(img.astype(np.float64), C)
    # float: 2DCT, quantization, 2IDCT
    ps, pd_ = d.up(img), d.zeros(h * w, np.float32)
    gf, tf = (w // 32, h // 16, 1), (8, 32 // 8, 16 // 8)
    mod.get_function("CUDAkernel2DCT")(gf, tf, (pd_, ps, np.int32(w)))
    ok()
    coef = d.down(pd_, h * w, np.float32).reshape(h, w)
    np.testing.assert_allclose(coef, want, atol=2e-3)
    mod.get_function("CUDAkernelQuantizationFloat")((w // 8, h // 8), (8, 8), (pd_, np.int32(w)))
    ok()
    qf = d.down(pd_, h * w, np.float32).reshape(h, w)
    q = np.tile(DCT_Q, (h // 8, w // 8)).astype(np.float32)
    r = coef / q
    np.testing.assert_array_equal(qf, np.where(r < 0, -np.floor(-r + 0.5), np.floor(r + 0.5)).astype(np.float32) * q)
    mod.get_function("CUDAkernel2IDCT")(gf, tf, (ps, pd_, np.int32(w)))
    ok()
    np.testing.assert_allclose(d.down(ps, h * w, np.float32).reshape(h, w), _blocks_apply(qf.astype(np.float64), C.T),
                               atol=2e-3)
    # short: ShortDCT, QuantizationShort, ShortIDCT in place
    img_s = img.astype(np.int16)
    pss = d.up(img_s)
    gs, ts = (w // 32, h // 32, 1), (8, 32 // 8, 32 // 8)
    mod.get_function("CUDAkernelShortDCT")(gs, ts, (pss, np.int32(w)))
    ok()
    cs = d.down(pss, h * w, np.int16).reshape(h, w)
    err = np.abs(cs.astype(np.float64) - want)
    assert err.max() <= 2.0 and err.mean() < 0.6, (err.max(), err.mean())
    mod.get_function("CUDAkernelQuantizationShort")((w // 8, h // 8), (8, 8), (pss, np.int32(w)))
    ok()
    qs = d.down(pss, h * w, np.int16).reshape(h, w).astype(np.int64)
    qi = np.tile(DCT_Q, (h // 8, w // 8))
    c64 = cs.astype(np.int64)
    mag = (np.abs(c64) + (qi >> 1)) // qi
    np.testing.assert_array_equal(qs, np.where(c64 < 0, -mag, mag) * qi)
    mod.get_function("CUDAkernelShortIDCT")(gs, ts, (pss, np.int32(w)))
    ok()
    back = d.down(pss, h * w, np.int16).reshape(h, w).astype(np.float64)
    err = np.abs(back - _blocks_apply(qs.astype(np.float64), C.T))
    assert err.max() <= 2.0 and err.mean() < 0.6, (err.max(), err.mean())


def test_cs_jacobi_cuda_graphs(d):
    """jacobiCudaGraphs: JacobiMethod (static __global__, 512-double shared copy of x, tiled_partition<32>.shfl_down
    of doubles, shared-memory atomicAdd on doubles, a tiled_partition<8> made by 8 threads only) and finalError
    (extern __shared__ double per warp) on the sample's system (A = 1 + (N+1) on the diagonal, b = 2N), 66 x 256 as
    JacobiMethodGpu launches them, ping-ponging x and x_new; every step's sum of |dx| and x checked against NumPy's
    float64 Jacobi step (summation and atomic order are the GPU's own: 1e-12 absolute)."""
    mod = A.RawModule(code=src("cs_jacobi_cuda_graphs.cu"))
    n = 512
    Am = np.ones((n, n), np.float32)
    np.fill_diagonal(Am, n + 1.0)
    b = np.full(n, 2.0 * n)
    pA, pb = d.up(Am), d.up(b)
    px, pxn, psum = d.zeros(n, np.float64), d.zeros(n, np.float64), d.zeros(1, np.float64)
    jac, fin = mod.get_function("JacobiMethod"), mod.get_function("finalError")
    x = np.zeros(n)
    A64 = Am.astype(np.float64)
    for k in range(12):
        d.put(psum, np.zeros(1))
        src_p, dst_p = (px, pxn) if k % 2 == 0 else (pxn, px)
        jac((n // 8 + 2,), (256,), (pA, pb, np.float32(1e-4), src_p, dst_p, psum))
        ok()
        dx = (b - A64 @ x) / np.diag(A64)
        x = x + dx
        np.testing.assert_allclose(d.down(dst_p, n, np.float64), x, rtol=0, atol=1e-12)
        np.testing.assert_allclose(d.down(psum, 1, np.float64)[0], np.abs(dx).sum(), rtol=1e-9)
    d.put(psum, np.zeros(1))
    fin((n // 8 + 2,), (256,), (dst_p, psum), shared_mem=8 * 8)
    ok()
    np.testing.assert_allclose(d.down(psum, 1, np.float64)[0], np.abs(x - 1).sum(), rtol=1e-6, atol=1e-12)


# -------------------------------------------------- NVIDIA-developer-blog/code-samples @ 72d62ec4

def test_blog_coalescing_offset_stride(d):
    """coalescing-global: offset<T> / stride<T> (a[i] = a[i] + 1 at i = gid + s or gid * s) for float and double,
    every offset 0..32 and stride 1..32 on a buffer 33x the grid, as runTest launches them (blockSize 256)."""
    mod = A.RawModule(code=src("blog_coalescing.cu"), name_expressions=[
        "offset<float>", "stride<float>", "offset<double>", "stride<double>"])
    n = 256 * 16
    for t, name in ((np.float32, "float"), (np.float64, "double")):
        p = d.zeros(n * 33, t)
        want = np.zeros(n * 33, t)
        for s in range(33):
            mod.get_function(f"offset<{name}>")((n // 256,), (256,), (p, np.int32(s)))
            want[np.arange(n) + s] += 1
        for s in range(1, 33):
            mod.get_function(f"stride<{name}>")((n // 256,), (256,), (p, np.int32(s)))
            want[np.arange(n) * s] += 1
        ok()
        np.testing.assert_array_equal(d.down(p, n * 33, t), want)


def test_blog_overlap_data_transfers_kernel(d):
    """overlap-data-transfers: kernel(a, offset) (a[i] += sqrtf(sinf(i)^2 + cosf(i)^2)) over 4 stream-sized chunks
    on a zeroed array, as the sample's loops launch it; its maxError check (|a - 1|) stays within float rounding."""
    mod = A.RawModule(code=src("blog_overlap_async.cu"))
    bs, ns = 256, 4
    n = 4 * 1024 * bs * ns // 16
    ss = n // ns
    p = d.zeros(n, np.float32)
    for i in range(ns):
        mod.get_function("kernel")((ss // bs,), (bs,), (p, np.int32(i * ss)))
    ok()
    x = np.arange(n, dtype=np.float32)
    s, c = np.sin(x.astype(np.float64)).astype(np.float32), np.cos(x.astype(np.float64)).astype(np.float32)
    want = np.sqrt(s * s + c * c)
    got = d.down(p, n, np.float32)
    np.testing.assert_allclose(got, want, rtol=2e-7)
    assert np.abs(got - 1).max() < 1e-6


@pytest.mark.parametrize("arch", [None, "sm_52"])
def test_blog_haxpy(d, arch):
    """mixed-precision haxpy: `half a` passed by value; __hfma2 over half2 pairs plus __hfma for the odd tail
    (sm_53+), or the float path (-arch=sm_52); n = 101 (odd) with the post's data (x = 1, y = i, a = 2) and random
    halves: exact against NumPy's float16 rounding of the fused (sm_53+) or float (sm_52) result."""
    opts = () if arch is None else (f"-arch={arch}",)
    mod = A.RawModule(code=src("blog_haxpy.cu"), options=opts)
    rng = np.random.default_rng(312)
    for data in ("post", "random"):
        n = 101
        if data == "post":
            a, x, y = np.float16(2.0), np.ones(n, np.float16), np.arange(n).astype(np.float16)
        else:
            a = np.float16(rng.standard_normal())
            x, y = rng.standard_normal(n).astype(np.float16), rng.standard_normal(n).astype(np.float16)
        py = d.up(y)
        mod.get_function("haxpy")(((n + 255) // 256,), (256,), (np.int32(n), a, d.up(x), py))
        ok()
        if arch is None:
            want = (np.float64(a) * x.astype(np.float64) + y.astype(np.float64)).astype(np.float16)
        else:
            want = (np.float32(a) * x.astype(np.float32) + y.astype(np.float32)).astype(np.float16)
        np.testing.assert_array_equal(d.down(py, n, np.float16), want, err_msg=data)


def _gups_sequence(count):
    poly, top, mask = 7, 1 << 63, (1 << 64) - 1
    out = np.empty(count, np.uint64)
    r = 1   # HPCC_starts(0)
    for k in range(count):
        r = ((r << 1) & mask) ^ (poly if r & top else 0)
        out[k] = r
    return out


def test_blog_gups(d):
    """gups: static __constant__ c_m2 set as starts() computes it (get_global with name_expressions), d_init,
    d_bench<UPDATE> (HPCC RandomAccess stream from d_starts with __clzll, atomicCAS loops on 64-bit words),
    d_check counting words that differ from their index; one UPDATE pass checked word for word against NumPy's
    XOR of the HPCC sequence, a second pass undoes it (d_check: 0 errors), as the benchmark's check does."""
    mod = A.RawModule(code=src("blog_gups.cu"), name_expressions=[
        "c_m2", "d_init", "d_bench<UPDATE>", "d_check", "d_bench<UPDATE_NO_LOOP>"])
    poly, mask = 7, (1 << 64) - 1
    m2, t = [], 1
    for _ in range(64):
        m2.append(t)
        for _ in range(2):
            t = ((t << 1) & mask) ^ (poly if t >> 63 else 0)
    m2 = np.array(m2, np.uint64)
    mod.get_global("c_m2").copy_from_host(m2.ctypes.data, m2.nbytes)
    ws, acc = 1 << 13, 8
    grid, thr = 4, 1024
    pt, perr = d.zeros(ws, np.uint64), d.zeros(1, np.uint32)
    mod.get_function("d_init")((grid,), (thr,), (np.uint64(ws), pt))
    mod.get_function("d_bench<UPDATE>")((grid,), (thr,), (np.uint64(ws), np.uint64(ws), pt, np.int32(acc)))
    ok()
    seq = _gups_sequence(acc * ws)
    want = np.arange(ws, dtype=np.uint64)
    np.bitwise_xor.at(want, (seq & np.uint64(ws - 1)).astype(np.int64), seq)
    np.testing.assert_array_equal(d.down(pt, ws, np.uint64), want)
    mod.get_function("d_bench<UPDATE>")((grid,), (thr,), (np.uint64(ws), np.uint64(ws), pt, np.int32(acc)))
    mod.get_function("d_check")((grid,), (thr,), (np.uint64(ws), pt, perr))
    ok()
    assert d.down(perr, 1, np.uint32)[0] == 0


CPP11_RANGE = ("-I", str(DIR / "cpp11_range"))


def test_blog_cpp11_cuda_as_published_is_a_clear_compile_error():
    """c++11_cuda as published includes <thrust/device_ptr.h> & co. (used only by #if 0 code): Thrust is not
    provided, the CompileException names the header."""
    with pytest.raises(CompileException) as e:
        A.RawModule(code=src("blog_cpp11_cuda.cu"), options=CPP11_RANGE).get_function("xyzw_frequency")
    assert "thrust/" in str(e.value), str(e.value)


def test_blog_cpp11_cuda_without_thrust_includes(d):
    """c++11_cuda with its three (unused) Thrust includes taken out: xyzw_frequency<<<8, 256>>> (a grid-stride
    range-for over harrism/cpp11-range's step range, a lambda capturing a local char array by reference, a range-for
    over that array, atomicAdd) counts 'x', 'y', 'z', 'w' in 1 MB of text."""
    code = "\n".join(l for l in src("blog_cpp11_cuda.cu").splitlines() if not l.startswith("#include <thrust/"))
    mod = A.RawModule(code=code, options=CPP11_RANGE)
    rng = np.random.default_rng(313)
    text = rng.integers(32, 127, 1 << 20).astype(np.uint8)
    pc = d.zeros(1, np.int32)
    mod.get_function("xyzw_frequency")((8,), (256,), (pc, d.up(text), np.int32(text.size)))
    ok()
    assert d.down(pc, 1, np.int32)[0] == np.isin(text, np.frombuffer(b"xyzw", np.uint8)).sum()


def test_blog_cuda_aware_mpi_jacobi_kernels(d):
    """cuda-aware-mpi-example Device.cu (Jacobi.h's constants inlined; real = double as published): JacobiComputeKernel
    (int4 bounds and int stride by value, AtomicMax<double> through an atomicCAS loop on unsigned long long),
    CopyBlockKernel, HaloToBufferKernel / BufferToHaloKernel (int2 by value); 16x16 blocks on a 61x45 block with a
    one-element halo, 30 iterations; bit-exact (the maximum does not depend on the order)."""
    mod = A.RawModule(code=src("blog_cuda_aware_mpi_jacobi.cu"))
    rng = np.random.default_rng(314)
    nx, ny = 61, 45
    blk = np.zeros((ny + 2, nx + 2))
    blk[0, :] = 1.0
    blk[1:-1, 1:-1] = rng.random((ny, nx))
    p0, p1, pres = d.up(blk), d.up(blk), d.zeros(1, np.float64)
    # vector types by value, as CuPy takes them: a one-element structured array
    b4 = np.array([(0, 0, nx - 1, ny - 1)], [("x", "<i4"), ("y", "<i4"), ("z", "<i4"), ("w", "<i4")])
    grid = ((nx + 15) // 16, (ny + 15) // 16)
    jac, cp = mod.get_function("JacobiComputeKernel"), mod.get_function("CopyBlockKernel")
    want = blk.copy()
    for _ in range(30):
        d.put(pres, np.zeros(1))
        jac(grid, (16, 16), (p0, p1, b4, np.int32(nx), pres))
        cp(grid, (16, 16), (p1, p0, b4, np.int32(nx)))
        ok()
        new = want.copy()
        new[1:-1, 1:-1] = 0.25 * (((want[1:-1, :-2] + want[1:-1, 2:]) + want[:-2, 1:-1]) + want[2:, 1:-1])
        res = np.abs(new[1:-1, 1:-1] - want[1:-1, 1:-1]).max()
        want = new
        assert d.down(pres, 1, np.float64)[0] == res
    np.testing.assert_array_equal(d.down(p0, blk.size, np.float64).reshape(blk.shape), want)
    # halo packing / unpacking with int2 size by value
    size2 = np.array([(nx, ny)], [("x", "<i4"), ("y", "<i4")])
    hl, hr = rng.random(ny), rng.random(ny)
    mod.get_function("HaloToBufferKernel")(((ny + 63) // 64,), (64,), (p0, d.up(hl), d.up(hr), size2, np.int32(1),
                                                                        np.int32(1)))
    pl, pr = d.zeros(ny, np.float64), d.zeros(ny, np.float64)
    mod.get_function("BufferToHaloKernel")(((ny + 63) // 64,), (64,), (p0, pl, pr, size2, np.int32(1), np.int32(1)))
    ok()
    got = d.down(p0, blk.size, np.float64).reshape(blk.shape)
    want[1:-1, 0], want[1:-1, -1] = hl, hr
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(d.down(pl, ny, np.float64), hl)
    np.testing.assert_array_equal(d.down(pr, ny, np.float64), hr)


# ------------------------------------------------------------------ found by this sweep

# A published file cut short: a trailing prototype without its ';', or a function without its last '}'.
# g++'s first error was in the glue the loader appends after the user's code, about the glue's names.
@pytest.mark.parametrize("tail", ["\n__device__ float scale(float x)\n", "\n__device__ float scale(float x) {\n  return x;\n"])
def test_source_ending_in_an_unfinished_declaration_is_reported_at_the_users_line(tail):
    code = src("cs_vector_add.cu") + tail
    with pytest.raises(CompileException) as e:
        A.RawModule(code=code).get_function("vectorAdd")
    msg = str(e.value)
    assert "__emu_glue" not in msg and "aclnn-emulator-glue" not in msg, msg
    last = len(code.rstrip().splitlines())
    assert f"kernel.cu:{last}: error: the source ends inside an unfinished declaration or block" in msg, msg
