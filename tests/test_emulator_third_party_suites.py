"""Benchmark-suite CUDA kernels (Rodinia 3.1, Parboil 2.5, ...; tests/third_party_kernels/rodinia_*.cu,
parboil_*.cu, origins in its README) run unchanged through aclnn_py.RawModule on the emulator, with the
launch configuration of each benchmark's host code, checked against NumPy references written from
the benchmarks' CPU code. Where the kernel's arithmetic can be replayed in float32/float64 in the
same order, the result must be bit-identical (the emulator computes as a --fmad=false GPU build)."""
from __future__ import annotations

from collections import deque
from pathlib import Path

import numpy as np
import pytest

import aclnn_py as A
from aclnn_py import acl
from aclnn_py.emulator import CompileException
from harness import sync_ok as ok  # the device synchronises without an error

DIR = Path(__file__).parent / "third_party_kernels"
F32, F64 = np.float32, np.float64
pytestmark = pytest.mark.skipif(
    acl._state.state.initialized and acl._state.state.backend.name != "host", reason="emulator run")


def src(name):
    return (DIR / name).read_text()


def set_constant(mod, name, a):
    a = np.ascontiguousarray(a)
    mod.get_global(name).copy_from_host(a.ctypes.data, a.nbytes)


# ----------------------------------------------------------------------------------------- Rodinia


def test_rodinia_hotspot(d):
    """hotspot.cu's compute_tran_temp: pyramid of 2 steps per launch, 16x16 blocks with halos. The
    kernel mixes float and double (`2.0*temp`), so the float64 reference differs by rounding only:
    10 steps of ~6 roundings on values ~330 (ulp 3e-5) stay far below rtol 2e-6 (6.6e-4)."""
    k = A.RawModule(code=src("rodinia_hotspot.cu")).get_function("calculate_temp")
    rng = np.random.default_rng(1)
    row = col = 64
    total, pyr, bs = 10, 2, 16
    temp = (rng.random(row * col) * 20 + 320).astype(F32)
    power = (rng.random(row * col) * 1e-3).astype(F32)
    t_chip, chip = 0.0005, 0.016
    gh = float(F32(chip / row))
    gw = float(F32(chip / col))
    cap = F32(0.5 * 1.75e6 * t_chip * gw * gh)
    rx = F32(gw / (2.0 * 100 * t_chip * gh))
    ry = F32(gh / (2.0 * 100 * t_chip * gw))
    rz = F32(t_chip / (100 * gh * gw))
    step = F32(0.001 / float(F32(3.0e6 / (0.5 * t_chip * 1.75e6))))
    small = bs - 2 * pyr
    grid = (col // small + (col % small != 0), row // small + (row % small != 0))
    bufs, pp = [d.up(temp), d.up(temp)], d.up(power)
    s, dst, t = 1, 0, 0
    while t < total:
        s, dst = dst, s
        k(grid, (bs, bs), (np.int32(min(pyr, total - t)), pp, bufs[s], bufs[dst], np.int32(col), np.int32(row),
                           np.int32(pyr), np.int32(pyr), cap, rx, ry, rz, step, F32(0.001)))
        t += pyr
    ok()
    out = d.down(bufs[dst], row * col, F32).reshape(row, col)
    T, P = temp.astype(F64).reshape(row, col), power.astype(F64).reshape(row, col)
    sdc = float(step) / float(cap)
    for _ in range(total):
        tp = np.pad(T, 1, mode="edge")
        T = T + sdc * (P + (tp[2:, 1:-1] + tp[:-2, 1:-1] - 2 * T) / float(ry)
                       + (tp[1:-1, 2:] + tp[1:-1, :-2] - 2 * T) / float(rx) + (80.0 - T) / float(rz))
    assert np.abs(T - temp.reshape(row, col)).max() > 0.1   # the stencil did move the field
    np.testing.assert_allclose(out, T, rtol=2e-6)


def test_rodinia_pathfinder(d):
    """Dynamic programming on ints: exact. Includes pyramid heights that do not divide rows-1."""
    k = A.RawModule(code=src("rodinia_pathfinder.cu")).get_function("dynproc_kernel")
    rng = np.random.default_rng(2)
    for rows, cols, pyr in ((20, 1000, 4), (23, 700, 5), (9, 300, 1)):
        data = rng.integers(0, 10, (rows, cols)).astype(np.int32)
        bs = 256
        small = bs - 2 * pyr
        res, wall = [d.up(data[0]), d.zeros(cols, np.int32)], d.up(data[1:])
        s, dst = 1, 0
        for t in range(0, rows - 1, pyr):
            s, dst = dst, s
            k((cols // small + (cols % small != 0),), (bs,),
              (np.int32(min(pyr, rows - t - 1)), wall, res[s], res[dst], np.int32(cols), np.int32(rows),
               np.int32(t), np.int32(pyr)))
        ok()
        ref = data[0].astype(np.int64)
        for r in range(1, rows):
            p = np.pad(ref, 1, mode="edge")
            ref = np.minimum(np.minimum(p[:-2], p[1:-1]), p[2:]) + data[r]
        np.testing.assert_array_equal(d.down(res[dst], cols, np.int32), ref)


def test_rodinia_needleman_wunsch(d):
    mod = A.RawModule(code=src("rodinia_nw.cu"))
    k1, k2 = mod.get_function("needle_cuda_shared_1"), mod.get_function("needle_cuda_shared_2")
    rng = np.random.default_rng(3)
    n, pen = 16 * 9, 10
    R = C = n + 1
    ref = np.zeros((R, C), np.int32)
    ref[1:, 1:] = rng.integers(-4, 12, (n, n))
    M = np.zeros((R, C), np.int32)
    M[1:, 0] = -np.arange(1, R) * pen
    M[0, 1:] = -np.arange(1, C) * pen
    pr, pm = d.up(ref), d.up(M)
    bw = (C - 1) // 16
    for i in range(1, bw + 1):
        k1((i,), (16,), (pr, pm, np.int32(C), np.int32(pen), np.int32(i), np.int32(bw)))
    for i in range(bw - 1, 0, -1):
        k2((i,), (16,), (pr, pm, np.int32(C), np.int32(pen), np.int32(i), np.int32(bw)))
    ok()
    E = M.astype(np.int64)
    for i in range(1, R):
        for j in range(1, C):
            E[i, j] = max(E[i - 1, j - 1] + ref[i, j], E[i, j - 1] - pen, E[i - 1, j] - pen)
    np.testing.assert_array_equal(d.down(pm, R * C, np.int32).reshape(R, C), E)


def test_rodinia_lud(d):
    """Blocked LU without pivoting of diagonally dominant matrices: float32 elimination against a
    float64 Doolittle; the growth is bounded by the dominance, so relative errors stay ~1e-7."""
    mod = A.RawModule(code=src("rodinia_lud.cu"))
    kd, kp, ki = (mod.get_function(n) for n in ("lud_diagonal", "lud_perimeter", "lud_internal"))
    rng = np.random.default_rng(4)
    bs = 16
    for n in (16, 48, 96):
        a = rng.random((n, n)).astype(F32) + np.eye(n, dtype=F32) * n
        pm = d.up(a)
        i = 0
        while i < n - bs:
            kd((1,), (bs,), (pm, np.int32(n), np.int32(i)))
            kp(((n - i) // bs - 1,), (2 * bs,), (pm, np.int32(n), np.int32(i)))
            g = (n - i) // bs - 1
            ki((g, g), (bs, bs), (pm, np.int32(n), np.int32(i)))
            i += bs
        kd((1,), (bs,), (pm, np.int32(n), np.int32(i)))
        ok()
        U, L = a.astype(F64), np.eye(n)
        for c in range(n):
            L[c + 1:, c] = U[c + 1:, c] / U[c, c]
            U[c + 1:, c:] -= np.outer(L[c + 1:, c], U[c, c:])
        np.testing.assert_allclose(d.down(pm, n * n, F32).reshape(n, n), np.triu(U) + np.tril(L, -1),
                                   rtol=1e-5, atol=1e-6)


def test_rodinia_backprop(d):
    """Layer-forward tree reduction and weight adjustment, replayed exactly (float32 tree in the
    kernel's order; the adjust kernel's double arithmetic in float64)."""
    mod = A.RawModule(code=src("rodinia_backprop.cu"))
    kf, ka = mod.get_function("bpnn_layerforward_CUDA"), mod.get_function("bpnn_adjust_weights_cuda")
    rng = np.random.default_rng(5)
    n_in, hid = 16 * 20, 16
    nb = n_in // 16
    x = rng.random(n_in + 1).astype(F32)
    W = rng.random((n_in + 1, hid + 1)).astype(F32)
    pw, pps = d.up(W), d.zeros(nb * 16, F32)
    kf((1, nb), (16, 16), (d.up(x), d.zeros(hid + 1, F32), pw, pps, np.int32(n_in), np.int32(hid)))
    ok()
    T = W[1:, 1:].reshape(nb, 16, hid) * x[1:].reshape(nb, 16, 1)
    for i in range(1, 5):
        p = 2 ** i
        for ty in range(0, 16, p):
            T[:, ty] = T[:, ty] + T[:, ty + p // 2]
    ref = W.copy()
    ref[1:, 1:] = T.reshape(n_in, hid)
    np.testing.assert_array_equal(d.down(pw, W.size, F32).reshape(W.shape), ref)
    np.testing.assert_array_equal(d.down(pps, nb * 16, F32).reshape(nb, 16), T[:, 0, :])

    delta = rng.standard_normal(hid + 1).astype(F32)
    ly = rng.random(n_in + 1).astype(F32)
    W = rng.random((n_in + 1, hid + 1)).astype(F32)
    OW = (rng.random((n_in + 1, hid + 1)) * 0.1).astype(F32)
    pw, pow_ = d.up(W), d.up(OW)
    ka((1, nb), (16, 16), (d.up(delta), np.int32(hid), d.up(ly), np.int32(n_in), pw, pow_))
    ok()
    ch = 0.3 * F64(delta)[None, 1:] * F64(ly)[1:, None] + 0.3 * F64(OW[1:, 1:])
    rw, ro = W.copy(), OW.copy()
    rw[1:, 1:], ro[1:, 1:] = (F64(W[1:, 1:]) + ch).astype(F32), ch.astype(F32)
    c0 = 0.3 * F64(delta[1:]) + 0.3 * F64(OW[0, 1:])
    rw[0, 1:], ro[0, 1:] = (F64(W[0, 1:]) + c0).astype(F32), c0.astype(F32)
    np.testing.assert_array_equal(d.down(pw, W.size, F32).reshape(W.shape), rw)
    np.testing.assert_array_equal(d.down(pow_, W.size, F32).reshape(W.shape), ro)


def test_rodinia_gaussian(d):
    """ForwardSub's Fan1/Fan2 loop, replayed in float32 in the kernel's order: bit-identical."""
    mod = A.RawModule(code=src("rodinia_gaussian.cu"))
    f1, f2 = mod.get_function("Fan1"), mod.get_function("Fan2")
    rng = np.random.default_rng(7)
    for S in (5, 37, 64):
        a = (rng.random((S, S)) * 2 - 1).astype(F32) + np.eye(S, dtype=F32) * 4
        b = rng.random(S).astype(F32)
        pm, pa, pb = d.zeros(S * S, F32), d.up(a), d.up(b)
        g1, g2 = S // 512 + (S % 512 != 0), S // 4 + (S % 4 != 0)
        for t in range(S - 1):
            f1((g1,), (512,), (pm, pa, np.int32(S), np.int32(t)))
            f2((g2, g2), (4, 4), (pm, pa, pb, np.int32(S), np.int32(S - t), np.int32(t)))
        ok()
        M, Aa, B = np.zeros((S, S), F32), a.copy(), b.copy()
        for t in range(S - 1):
            M[t + 1:, t] = Aa[t + 1:, t] / Aa[t, t]
            Aa[t + 1:, t:] -= M[t + 1:, t:t + 1] * Aa[t, t:][None, :]
            B[t + 1:] -= M[t + 1:, t] * B[t]
        np.testing.assert_array_equal(d.down(pm, S * S, F32), M.ravel())
        np.testing.assert_array_equal(d.down(pa, S * S, F32), Aa.ravel())
        np.testing.assert_array_equal(d.down(pb, S, F32), B)


def _srad_coeffs(n, s, w, e, jc, q):
    """srad's diffusion coefficient, in the kernels' precision (float, with double subexpressions)."""
    g2 = (n * n + s * s + w * w + e * e) / (jc * jc)
    lap = (n + s + w + e) / jc
    num = (0.5 * F64(g2) - (1.0 / 16.0) * F64(lap * lap)).astype(F32)
    den = (1 + 0.25 * F64(lap)).astype(F32)
    qs = num / (den * den)
    den = (qs - q) / (q * (F32(1) + q))
    return np.clip((1.0 / (1.0 + F64(den))).astype(F32), 0, 1)


def test_rodinia_srad_v2(d):
    """srad.cu's loop (q0sqr of the ROI on the host, srad_cuda_1 + srad_cuda_2), replayed in float32
    as the CPU branch of srad.cu computes it: bit-identical for 3 iterations."""
    mod = A.RawModule(code=src("rodinia_srad_v2.cu"))
    k1, k2 = mod.get_function("srad_cuda_1"), mod.get_function("srad_cuda_2")
    rng = np.random.default_rng(8)
    rows, cols, lam = 64, 48, F32(0.5)
    J = np.exp(rng.random((rows, cols))).astype(F32)
    E, W, N, S = (d.zeros(rows * cols, F32) for _ in range(4))
    # the image and the coefficients inside one row of margin on each side: srad_cuda_1 reads a row
    # before and after J, srad_cuda_2 a row after C (discarded values; on a GPU that memory is mapped,
    # see the next test), here too whatever allocations surround them
    pJ, C = (d.zeros((rows + 2) * cols, F32) + cols * 4 for _ in range(2))
    for _ in range(3):
        roi = J[:32, :32].ravel()
        s = s2 = F32(0)
        for t in roi:
            s, s2 = F32(s + t), F32(s2 + F32(t * t))
        mean = F32(s / F32(roi.size))
        q = F32(F32(F32(s2 / F32(roi.size)) - F32(mean * mean)) / F32(mean * mean))
        d.put(pJ, J)
        grid = (cols // 16, rows // 16)
        k1(grid, (16, 16), (E, W, N, S, pJ, C, np.int32(cols), np.int32(rows), q))
        k2(grid, (16, 16), (E, W, N, S, pJ, C, np.int32(cols), np.int32(rows), lam, q))
        ok()
        Jp = np.pad(J, 1, mode="edge")
        n, s_, w, e = Jp[:-2, 1:-1] - J, Jp[2:, 1:-1] - J, Jp[1:-1, :-2] - J, Jp[1:-1, 2:] - J
        c = _srad_coeffs(n, s_, w, e, J, q)
        cp = np.pad(c, ((0, 1), (0, 1)), mode="edge")
        D = c * n + cp[1:, :-1] * s_ + c * w + cp[:-1, 1:] * e
        ref = (F64(J) + 0.25 * F64(lam) * F64(D)).astype(F32)
        J = d.down(pJ, rows * cols, F32).reshape(rows, cols)
        np.testing.assert_array_equal(J, ref)


def test_rodinia_srad_v2_out_of_bounds_halo_reads_are_reported_in_bounds_mode(d):
    """srad_cuda_1 loads J_cuda[index_n] / J_cuda[index_s] (the rows above and below the block) in
    every block and only then replaces them for the top / bottom row of blocks: reads one row
    (192 bytes, cols = 48) before or past the image, whose values are discarded. A GPU does not
    fault (the pages are mapped); the bounds-check mode names the first one it meets."""
    from aclnn_py import emulator
    k1 = A.RawModule(code=src("rodinia_srad_v2.cu")).get_function("srad_cuda_1")
    rows, cols = 32, 48
    bufs = [d.zeros(rows * cols, F32) for _ in range(4)]
    pJ, pC = d.up(np.ones(rows * cols, F32)), d.zeros(rows * cols, F32)
    emulator.set_bounds_check(True)
    try:
        k1((cols // 16, rows // 16), (16, 16), (*bufs, pJ, pC, np.int32(cols), np.int32(rows), F32(0.1)))
        st = acl.rt.synchronize_device()
    finally:
        emulator.set_bounds_check(False)
    assert st != 0
    msg = acl.get_recent_err_msg()
    assert "srad_cuda_1" in msg and "illegal memory read" in msg and "argument 4" in msg, msg
    assert "192 bytes before the start of the 6144-byte allocation" in msg or \
        "bytes past the end of the 6144-byte allocation" in msg, msg


def test_rodinia_srad_v1(d):
    """main.cu's sequence: extract, then per iteration prepare + the multi-level reduce, srad, srad2,
    then compress. The image has 2000 elements (4 blocks: the second reduce level has a power-of-two
    count; with 3 blocks the published reduce sums the wrong elements in its remainder loop, which
    reads d_sums[i] without the d_mul stride, on a GPU as here)."""
    mod = A.RawModule(code=src("rodinia_srad_v1.cu"))
    K = {n: mod.get_function(n) for n in ("extract", "prepare", "reduce", "srad", "srad2", "compress")}
    rng = np.random.default_rng(9)
    Nr, Nc, lam, NT = 40, 50, F32(0.5), 512
    Ne = Nr * Nc
    nb = Ne // NT + (Ne % NT != 0)
    img = (rng.random(Ne) * 255).astype(F32)   # column-major: ei = row + Nr * col
    iN = np.maximum(np.arange(Nr) - 1, 0).astype(np.int32)
    iS = np.minimum(np.arange(Nr) + 1, Nr - 1).astype(np.int32)
    jW = np.maximum(np.arange(Nc) - 1, 0).astype(np.int32)
    jE = np.minimum(np.arange(Nc) + 1, Nc - 1).astype(np.int32)
    pI, piN, piS, pjE, pjW = d.up(img), d.up(iN), d.up(iS), d.up(jE), d.up(jW)
    ps, ps2, pdN, pdS, pdW, pdE, pc = (d.zeros(Ne, F32) for _ in range(7))
    ne = np.int64(Ne)   # `long d_Ne`
    K["extract"]((nb,), (NT,), (ne, pI))
    ok()
    J = d.down(pI, Ne, F32)
    np.testing.assert_allclose(J, np.exp(F64(img) / 255), rtol=2e-7)   # expf: within an ulp or two
    for _ in range(2):
        K["prepare"]((nb,), (NT,), (ne, pI, ps, ps2))
        b2, no, mul = nb, Ne, 1
        while b2:
            K["reduce"]((b2,), (NT,), (ne, np.int32(no), np.int32(mul), ps, ps2))
            no = b2
            if b2 == 1:
                b2 = 0
            else:
                mul *= NT
                b2 = b2 // NT + (b2 % NT != 0)
        ok()
        tot, tot2 = d.down(ps, 1, F32)[0], d.down(ps2, 1, F32)[0]
        # float32 tree + sequential remainder over 2000 terms: a few ulps of the total
        np.testing.assert_allclose([tot, tot2], [F64(J).sum(), (F64(J) ** 2).sum()], rtol=1e-6)
        mean = F32(tot / F32(Ne))
        m2 = F32(mean * mean)
        q = F32(F32(F32(tot2 / F32(Ne)) - m2) / m2)
        args = (lam, np.int32(Nr), np.int32(Nc), ne, piN, piS, pjE, pjW, pdN, pdS, pdW, pdE)
        K["srad"]((nb,), (NT,), args + (q, pc, pI))
        K["srad2"]((nb,), (NT,), args + (pc, pI))
        ok()
        X = J.reshape(Nc, Nr).T
        n, s, w, e = X[iN, :] - X, X[iS, :] - X, X[:, jW] - X, X[:, jE] - X
        c = _srad_coeffs(n, s, w, e, X, q)
        D = c * n + c[iS, :] * s + c * w + c[:, jE] * e
        ref = (F64(X) + 0.25 * F64(lam) * F64(D)).astype(F32).T.ravel()
        J = d.down(pI, Ne, F32)
        np.testing.assert_array_equal(J, ref)
    K["compress"]((nb,), (NT,), (ne, pI))
    ok()
    np.testing.assert_allclose(d.down(pI, Ne, F32), np.log(F64(J)) * 255, rtol=2e-7, atol=1e-4)


def test_rodinia_hotspot3d(d):
    """hotspot_opt1's loop (block (64, 4), z marched per thread), replayed in float32: exact."""
    k = A.RawModule(code=src("rodinia_hotspot3d.cu")).get_function("hotspotOpt1")
    rng = np.random.default_rng(10)
    nx = ny = 64
    nz, it = 8, 3
    t_chip, chip = F32(0.0005), F32(0.016)
    dx, dy, dz = F32(chip / ny), F32(chip / nx), F32(t_chip / nz)
    cap = F32(0.5 * 1.75e6 * float(t_chip) * float(dx) * float(dy))
    rx = F32(float(dy) / (2.0 * 100 * float(t_chip) * float(dx)))
    ry = F32(float(dx) / (2.0 * 100 * float(t_chip) * float(dy)))
    rz = F32(float(dz) / (100 * float(dx) * float(dy)))
    dt = F32(0.001 / float(F32(3.0e6 / (0.5 * float(t_chip) * 1.75e6))))
    sdc = F32(dt / cap)
    ce = cw = F32(sdc / rx)
    cn = cs = F32(sdc / ry)
    ct = cb = F32(sdc / rz)
    cc = F32(1.0 - (2.0 * float(ce) + 2.0 * float(cn) + 3.0 * float(ct)))
    T = (rng.random((nz, ny, nx)) * 20 + 320).astype(F32)
    P = (rng.random((nz, ny, nx)) * 1e-3).astype(F32)
    pi, po, pp = d.up(T), d.zeros(T.size, F32), d.up(P)
    for _ in range(it):
        k((nx // 64, ny // 4), (64, 4), (pp, pi, po, sdc, np.int32(nx), np.int32(ny), np.int32(nz),
                                         ce, cw, cn, cs, ct, cb, cc))
        pi, po = po, pi
    ok()
    R = T.copy()
    for _ in range(it):
        p = np.pad(R, 1, mode="edge")
        R = (cc * R + cw * p[1:-1, 1:-1, :-2] + ce * p[1:-1, 1:-1, 2:] + cs * p[1:-1, 2:, 1:-1]
             + cn * p[1:-1, :-2, 1:-1] + cb * p[:-2, 1:-1, 1:-1] + ct * p[2:, 1:-1, 1:-1] + sdc * P + ct * F32(80.0))
    np.testing.assert_array_equal(d.down(pi, T.size, F32).reshape(T.shape), R)


def test_rodinia_kmeans_legacy_textures_are_a_compile_error():
    """kmeans_cuda_kernel.cu declares `texture<float, 1, cudaReadModeElementType>` references
    (removed in CUDA 12) and reads them with tex1Dfetch: a CompileException with the note."""
    with pytest.raises(CompileException) as ei:
        A.RawModule(code=src("rodinia_kmeans.cu")).get_function("kmeansPoint")
    msg = str(ei.value)
    assert "textures and surfaces" in msg and "not supported by the emulator" in msg
    assert "tex1Dfetch" in msg


def test_rodinia_nn(d):
    """euclid over a 2-D grid (the host's gridX/gridY split, with a small maxGridX); the file's own
    `min(a, b)` macro comes before the emulator's glue. sqrt is correctly rounded: exact."""
    k = A.RawModule(code=src("rodinia_nn.cu")).get_function("euclid")
    rng = np.random.default_rng(11)
    n = 5000
    loc = np.stack([rng.random(n) * 180 - 90, rng.random(n) * 360 - 180], 1).astype(F32)
    lat, lng = F32(30.0), F32(90.0)
    tpb = 256
    blocks = (n + tpb - 1) // tpb
    gy = (blocks + 7) // 8
    gx = (blocks + gy - 1) // gy
    pd = d.zeros(n, F32)
    k((gx, gy), (tpb,), (d.up(loc), pd, np.int32(n), lat, lng))
    ok()
    dl, dn = lat - loc[:, 0], lng - loc[:, 1]
    np.testing.assert_array_equal(d.down(pd, n, F32), np.sqrt(dl * dl + dn * dn))


def test_rodinia_streamcluster(d):
    """kernel_compute_cost with the Point struct (float, pointer, long, float: 32 bytes) as a NumPy
    structured array; float32 replay: exact."""
    k = A.RawModule(code=src("rodinia_streamcluster.cu")).get_function("kernel_compute_cost")
    rng = np.random.default_rng(12)
    num, dim, K, x = 1500, 5, 7, 123
    stride = K + 1
    coord = rng.random((dim, num)).astype(F32)
    pt = np.dtype([("weight", "f4"), ("coord", "u8"), ("assign", "i8"), ("cost", "f4")], align=True)
    assert pt.itemsize == 32
    p = np.zeros(num, pt)
    p["weight"] = rng.random(num) + 0.5
    p["assign"] = rng.integers(0, num, num)
    p["cost"] = rng.random(num) * 2
    ctab = rng.integers(0, K, num).astype(np.int32)
    pw, psw = d.zeros(stride * (num + 1), F32), d.zeros(num, np.bool_)
    nb = (num + 511) // 512
    nby = (nb + 65535) // 65536
    k(((nb + nby - 1) // nby, nby), (512,), (np.int32(num), np.int32(dim), np.int64(x), d.up(p), np.int32(K),
                                             np.int32(stride), d.up(coord), pw, d.up(ctab), psw))
    ok()
    dist = np.zeros(num, F32)
    for i in range(dim):
        t = coord[i] - coord[i, x]
        dist = dist + t * t
    xc = dist * p["weight"]
    sw = xc < p["cost"]
    RW = np.zeros((num + 1, stride), F32)
    RW[np.nonzero(sw)[0], K] = (xc - p["cost"])[sw]
    ns = np.nonzero(~sw)[0]
    RW[ns, ctab[p["assign"][ns]]] = (p["cost"] - xc)[ns]
    assert 0 < sw.sum() < num
    np.testing.assert_array_equal(d.down(pw, stride * (num + 1), F32).reshape(num + 1, stride), RW)
    np.testing.assert_array_equal(d.down(psw, num, np.bool_), sw)


def test_rodinia_lavamd(d):
    """kernel_gpu_cuda takes two structs by value (par_str, dim_str: passed as NumPy structured
    scalars) and box_str[] with 26 nei_str each; double precision, 2x2x2 boxes of 100 particles.
    The reference sums in another order (NumPy's pairwise sums): rtol 1e-12."""
    k = A.RawModule(code=src("rodinia_lavamd.cu")).get_function("kernel_gpu_cuda")
    rng = np.random.default_rng(13)
    B1, NP = 2, 100
    NB = B1 ** 3
    nei = np.dtype([("x", "i4"), ("y", "i4"), ("z", "i4"), ("number", "i4"), ("offset", "i8")], align=True)
    box = np.dtype([("x", "i4"), ("y", "i4"), ("z", "i4"), ("number", "i4"), ("offset", "i8"), ("nn", "i4"),
                    ("nei", nei, (26,))], align=True)
    dimt = np.dtype([("cur_arg", "i4"), ("arch_arg", "i4"), ("cores_arg", "i4"), ("boxes1d_arg", "i4"),
                     ("number_boxes", "i8"), ("box_mem", "i8"), ("space_elem", "i8"), ("space_mem", "i8"),
                     ("space_mem2", "i8")], align=True)
    boxes = np.zeros(NB, box)
    nh = 0
    for i in range(B1):              # main.c's box setup, z / y / x
        for j in range(B1):
            for kk in range(B1):
                b = boxes[nh]
                b["x"], b["y"], b["z"], b["number"], b["offset"] = kk, j, i, nh, nh * NP
                nn = 0
                for l in (-1, 0, 1):
                    for m in (-1, 0, 1):
                        for n in (-1, 0, 1):
                            if 0 <= i + l < B1 and 0 <= j + m < B1 and 0 <= kk + n < B1 and not l == m == n == 0:
                                num = (i + l) * B1 * B1 + (j + m) * B1 + kk + n
                                b["nei"][nn] = (kk + n, j + m, i + l, num, num * NP)
                                nn += 1
                b["nn"] = nn
                nh += 1
    rv = (rng.integers(0, 10, (NB * NP, 4)) + 1) / 10.0
    qv = (rng.integers(0, 10, NB * NP) + 1) / 10.0
    dm = np.zeros((), dimt)
    dm["boxes1d_arg"], dm["number_boxes"], dm["space_elem"] = B1, NB, NB * NP
    par = np.zeros((), np.dtype([("alpha", "f8")]))
    par["alpha"] = 0.5
    pf = d.zeros(NB * NP * 4, F64)
    k((NB,), (128,), (par[()], dm[()], d.up(boxes), d.up(rv), d.up(qv), pf))
    ok()
    ref = np.zeros((NB * NP, 4))
    a2 = 2.0 * 0.5 * 0.5
    for b in range(NB):
        A_ = rv[b * NP:(b + 1) * NP]
        for kidx in range(1 + boxes[b]["nn"]):
            p = b if kidx == 0 else boxes[b]["nei"][kidx - 1]["number"]
            Bv, q = rv[p * NP:(p + 1) * NP], qv[p * NP:(p + 1) * NP]
            r2 = A_[:, None, 0] + Bv[None, :, 0] - (A_[:, None, 1] * Bv[None, :, 1] + A_[:, None, 2] * Bv[None, :, 2]
                                                      + A_[:, None, 3] * Bv[None, :, 3])
            vij = np.exp(-(a2 * r2))
            ref[b * NP:(b + 1) * NP, 0] += (q * vij).sum(1)
            for c in (1, 2, 3):
                ref[b * NP:(b + 1) * NP, c] += (q * (2 * vij * (A_[:, None, c] - Bv[None, :, c]))).sum(1)
    np.testing.assert_allclose(d.down(pf, NB * NP * 4, F64).reshape(-1, 4), ref, rtol=1e-12, atol=1e-12)


def _btree_knodes(keys, vals, leaf_size, fanout, order):
    """A B+ tree over sorted keys, laid out in `knode`s as main.c's transform_to_cuda does (BFS
    numbering, keys[0] = INT_MIN, keys[num_keys-1] = INT_MAX, leaf indices = record numbers)."""
    kn = np.dtype([("location", "i4"), ("indices", "i4", (order + 1,)), ("keys", "i4", (order + 1,)),
                   ("is_leaf", "?"), ("num_keys", "i4")], align=True)
    level = [dict(leaf=True, keys=list(keys[s:s + leaf_size]), vals=list(vals[s:s + leaf_size]))
             for s in range(0, len(keys), leaf_size)]

    def first(n):
        return n["keys"][0] if n["leaf"] else first(n["ch"][0])
    height = 0
    while len(level) > 1:
        level = [dict(leaf=False, ch=level[s:s + fanout], keys=[first(c) for c in level[s + 1:s + fanout]])
                 for s in range(0, len(level), fanout)]
        height += 1
    K = np.zeros(4 * len(keys) // leaf_size + 8, kn)
    recs, queue, nodeindex, qi = [], [level[0]], 1, 0
    imin, imax = -2 ** 31, 2 ** 31 - 1
    while queue:
        n = queue.pop(0)
        k = K[qi]
        k["location"] = qi
        qi += 1
        k["is_leaf"] = n["leaf"]
        nk = len(n["keys"]) + 2
        k["num_keys"] = nk
        k["keys"][0], k["keys"][nk - 1] = imin, imax
        k["keys"][nk:order] = imax
        if not n["leaf"]:
            k["indices"][0] = nodeindex
            nodeindex += 1
            for i in range(1, nk - 1):
                k["keys"][i] = n["keys"][i - 1]
                queue.append(n["ch"][i - 1])
                k["indices"][i] = nodeindex
                nodeindex += 1
            queue.append(n["ch"][nk - 2])
        else:
            for i in range(1, nk - 1):
                k["keys"][i] = n["keys"][i - 1]
                k["indices"][i] = len(recs)
                recs.append(n["vals"][i - 1])
        k["indices"][nk - 1] = qi
    return K[:qi], np.array(recs, np.int32), height


def test_rodinia_btree_find_k_and_range(d):
    """findK / findRangeK (one block per query, `order` = 256 threads) on a 3-level tree."""
    mod = A.RawModule(code=src("rodinia_btree.cu"))
    fk, fr = mod.get_function("findK"), mod.get_function("findRangeK")
    rng = np.random.default_rng(14)
    order, size, count = 256, 3000, 200
    keys = np.sort(rng.choice(100000, size, replace=False)).astype(np.int32)
    vals = rng.integers(0, 1 << 30, size).astype(np.int32)
    K, recs, h = _btree_knodes(keys, vals, 60, 6, order)
    assert K.dtype.itemsize == 2068 and h == 3
    qk = np.where(rng.random(count) < 0.7, keys[rng.integers(0, size, count)],
                  rng.integers(0, 100000, count)).astype(np.int32)
    pK, pans = d.up(K), d.up(np.full(count, -1, np.int32))
    fk((count,), (order,), (np.int64(h), pK, np.int64(len(K)), d.up(recs), d.zeros(count, np.int64),
                            d.zeros(count, np.int64), d.up(qk), pans))
    ok()
    pos = np.minimum(np.searchsorted(keys, qk), size - 1)
    found = keys[pos] == qk
    assert 0 < found.sum() < count
    np.testing.assert_array_equal(d.down(pans, count, np.int32), np.where(found, vals[pos], -1))
    a = rng.integers(0, size, count)
    b = np.minimum(a + rng.integers(0, 500, count), size - 1)
    prs, prl = d.zeros(count, np.int32), d.zeros(count, np.int32)
    z = [d.zeros(count, np.int64) for _ in range(4)]
    fr((count,), (order,), (np.int64(h), pK, np.int64(len(K)), *z, d.up(keys[a]), d.up(keys[b]), prs, prl))
    ok()
    np.testing.assert_array_equal(d.down(prs, count, np.int32), a)
    np.testing.assert_array_equal(d.down(prl, count, np.int32), b - a + 1)


def test_rodinia_particlefilter_one_block(d):
    """particleFilter's per-frame sequence (likelihood, sum, normalize_weights, find_index) over 3
    frames with 400 particles (one block). The LCG wraps in int as on a GPU; cos/log/sqrt/exp of
    double may differ from the GPU's in the last ulp: rtol 1e-12. (With more than one block,
    normalize_weights_kernel races between blocks: block 0's thread 0 builds the CDF over all the
    weights while the other blocks are still dividing theirs, and they read u[0] before it may be
    written: no defined result, on a GPU or here.)"""
    mod = A.RawModule(code=src("rodinia_particlefilter.cu"))
    kl, ks, kn, kf = (mod.get_function(n) for n in ("likelihood_kernel", "sum_kernel", "normalize_weights_kernel",
                                                      "find_index_kernel"))
    rng = np.random.default_rng(15)
    N, frames = 400, 3
    isz, nfr = 64, frames + 1
    max_size = isz * isz * nfr
    video = np.where(rng.random(max_size) < 0.3, 228, 100).astype(np.uint8)
    objxy = np.array([(x, y) for x in range(-3, 4) for y in range(-3, 4) if x * x + y * y <= 9], np.int32).ravel()
    cnt = objxy.size // 2
    seed = (np.arange(N, dtype=np.int64) * 1234567 % 2 ** 31).astype(np.int32)
    g = {n: d.zeros(N, F64) for n in ("aX", "aY", "CDF", "u", "lik", "w")}
    pxj, pyj = d.up(np.full(N, 32.0)), d.up(np.full(N, 32.0))
    pind, pobj, pI, pseed, pps = d.zeros(N * cnt, np.int32), d.up(objxy), d.up(video), d.up(seed), d.zeros(1, F64)
    for k in range(1, nfr):
        kl((1,), (512,), (g["aX"], g["aY"], pxj, pyj, g["CDF"], pind, pobj, g["lik"], pI, g["u"], g["w"], np.int32(N),
                          np.int32(cnt), np.int32(max_size), np.int32(k), np.int32(isz), np.int32(nfr), pseed, pps))
        ks((1,), (512,), (pps, np.int32(N)))
        kn((1,), (512,), (g["w"], np.int32(N), pps, g["CDF"], g["u"], pseed))
        kf((1,), (512,), (g["aX"], g["aY"], g["CDF"], g["u"], pxj, pyj, g["w"], np.int32(N)))
    ok()
    S = seed.astype(np.int64)

    def randu(i):
        num = (1103515245 * int(S[i]) + 12345 + 2 ** 31) % 2 ** 32 - 2 ** 31   # int arithmetic wraps
        rem = abs(num) % (2 ** 31 - 1) * (1 if num >= 0 else -1)               # C's % truncates
        S[i] = rem
        return abs(rem / (2 ** 31 - 1))

    def randn(i):
        u, v = randu(i), randu(i)
        return np.sqrt(-2 * np.log(u)) * np.cos(2 * 3.14159265358979323846 * v)
    X, Y = np.full(N, 32.0), np.full(N, 32.0)
    for k in range(1, nfr):
        aX, aY = X.copy(), Y.copy()
        for i in range(N):
            aX[i] = aX[i] + 1.0 + 5.0 * randn(i)
            aY[i] = aY[i] - 2.0 + 2.0 * randn(i)
        ix = np.trunc(aX).astype(np.int64)[:, None] + objxy[1::2][None, :]   # dev_round_double == (int)
        iy = np.trunc(aY).astype(np.int64)[:, None] + objxy[0::2][None, :]
        ind = np.abs(ix * isz * nfr + iy * nfr + k)
        ind[ind >= max_size] = 0
        v = video[ind].astype(F64)
        w = np.full(N, 1 / N) * np.exp((((v - 100) ** 2 - (v - 228) ** 2) / 50.0).sum(1) / cnt)
        buf = np.zeros(512)
        buf[:N] = w
        s = 256
        while s:
            buf[:s] += buf[s:2 * s]
            s //= 2
        w = w / buf[0]
        cdf = np.cumsum(w)
        u = (1 / N) * randu(0) + np.arange(N) / N
        idx = np.array([np.argmax(cdf >= uu) if (cdf >= uu).any() else N - 1 for uu in u])
        X, Y = aX[idx], aY[idx]
    np.testing.assert_array_equal(d.down(pseed, N, np.int32), S)
    np.testing.assert_allclose(d.down(g["w"], N, F64), w, rtol=1e-12)
    np.testing.assert_allclose(d.down(g["CDF"], N, F64), cdf, rtol=1e-12)
    np.testing.assert_allclose(d.down(pxj, N, F64), X, rtol=1e-12)
    np.testing.assert_allclose(d.down(pyj, N, F64), Y, rtol=1e-12)


def test_rodinia_huffman_vlc_encode(d):
    """vlc_encode_kernel_sm64huff (256 threads, 4 symbols each, CACHECWLUT shared layout) with codes
    of at most 8 bits, against a bit-string reference encoder. (Codes of 9..16 bits, which the kernel
    is written for, can make `(1<<wrbits)-1` shift by 32: see the report in the README row.)"""
    k = A.RawModule(code=src("rodinia_huffman_vlc.cu")).get_function("vlc_encode_kernel_sm64huff")
    rng = np.random.default_rng(16)
    cl = rng.integers(1, 9, 256).astype(np.uint32)
    cw = np.array([rng.integers(0, 1 << int(L)) for L in cl], np.uint32)
    nt, nb = 256, 4
    data = rng.integers(0, 2 ** 32, nt * nb, dtype=np.uint64).astype(np.uint32)
    po, pidx, z = d.zeros(nt * nb, np.uint32), d.zeros(nb, np.uint32), d.zeros(nt * nb, np.uint32)
    k((nb,), (nt,), (d.up(data), d.up(cw), d.up(cl), z, z, z, po, pidx), shared_mem=2 * 256 * 4 + nt * 4)
    ok()
    out, idx = d.down(po, nt * nb, np.uint32).reshape(nb, nt), d.down(pidx, nb, np.uint32)
    for b in range(nb):
        bits = "".join(format(int(cw[s]), "0%db" % cl[s]) for v in data[b * nt:(b + 1) * nt]
                       for s in (int(v) >> 24, (int(v) >> 16) & 255, (int(v) >> 8) & 255, int(v) & 255))
        assert idx[b] == len(bits)
        bits += "0" * (-len(bits) % 32)
        words = [int(bits[j:j + 32], 2) for j in range(0, len(bits), 32)]
        np.testing.assert_array_equal(out[b, :len(words)], words)


def test_rodinia_dwt2d_fdwt53(d):
    """dwt_cuda::fdwt53Kernel<64, 8> (a C++ class object as a static __shared__ variable in a
    template's static member function, __launch_bounds__ with a sizeof expression), launched as
    launchFDWT53Kernel does; one level of the integer 5/3 lifting DWT with mirrored edges against a
    NumPy lifting (C's truncating division), the four bands stored one after the other: exact."""
    mod = A.RawModule(code=src("rodinia_dwt2d_fdwt53.cu"), name_expressions=["dwt_cuda::fdwt53Kernel<64, 8>"])
    k = mod.get_function("dwt_cuda::fdwt53Kernel<64, 8>")

    def tdiv(a, b):
        q = np.abs(a) // b
        return np.where(a < 0, -q, q)

    def lift(x):   # along axis 0
        x, n = x.copy(), x.shape[0]
        for i in range(1, n, 2):
            x[i] = x[i] - tdiv(x[i - 1] + (x[i + 1] if i + 1 < n else x[i - 1]), 2)
        for i in range(0, n, 2):
            x[i] = x[i] + tdiv((x[i - 1] if i > 0 else x[i + 1]) + (x[i + 1] if i + 1 < n else x[i - 1]) + 2, 4)
        return x
    rng = np.random.default_rng(23)
    for sx, sy in ((64, 64), (100, 36), (128, 200), (192, 48)):
        img = rng.integers(0, 256, (sy, sx)).astype(np.int32)
        steps = -(-sy // (15 * 8))
        po = d.zeros(sx * sy, np.int32)
        k((-(-sx // 64), -(-sy // (8 * steps))), (64,), (d.up(img), po, np.int32(sx), np.int32(sy), np.int32(steps)))
        ok()
        h = lift(lift(img.astype(np.int64)).T).T
        ref = np.concatenate([h[0::2, 0::2].ravel(), h[0::2, 1::2].ravel(), h[1::2, 0::2].ravel(), h[1::2, 1::2].ravel()])
        np.testing.assert_array_equal(d.down(po, sx * sy, np.int32), ref)


def _cfd_state(rho, m, de):
    """euler3d.cu's compute_velocity / speed_sqd / pressure / speed_of_sound / flux_contribution,
    in float32 and in the source's operation order."""
    v = [m[c] / rho for c in range(3)]
    ssq = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
    p = (F32(1.4) - F32(1.0)) * (de - F32(0.5) * rho * ssq)
    sos = np.sqrt(F32(1.4) * p / rho)
    fx = [v[0] * m[0] + p, v[0] * m[1], v[0] * m[2]]
    fy = [fx[1], v[1] * m[1] + p, v[1] * m[2]]
    fz = [fx[2], fy[2], v[2] * m[2] + p]
    dep = de + p
    return ssq, p, sos, fx, fy, fz, [v[0] * dep, v[1] * dep, v[2] * dep]


def test_rodinia_cfd_euler3d(d):
    """One Runge-Kutta iteration of euler3d.cu's main loop (step factor, then RK = 3 times flux +
    time step, 192-thread blocks) on a random unstructured mesh with wing (-1) and far-field (-2)
    faces; the float3 __constant__ far-field values set with get_global. float32 replay: exact."""
    mod = A.RawModule(code=src("rodinia_cfd.cu"))
    K = {n: mod.get_function(n) for n in ("cuda_initialize_variables", "cuda_compute_step_factor",
                                          "cuda_compute_flux", "cuda_time_step")}
    rng = np.random.default_rng(24)
    nelr, nnb, nvar = 192 * 4, 4, 5
    ff = np.array([1.4, 1.2, 0.1, -0.05, 2.9], F32)
    _, _, _, ffx, ffy, ffz, ffde = _cfd_state(ff[0:1], ff[1:4, None], ff[4:5])   # the host's far-field set-up
    ffx, ffy, ffz, ffde = (np.array(a, F32).ravel() for a in (ffx, ffy, ffz, ffde))
    for name, val in (("ff_variable", ff), ("ff_flux_contribution_momentum_x", ffx), ("ff_flux_contribution_momentum_y", ffy),
                      ("ff_flux_contribution_momentum_z", ffz), ("ff_flux_contribution_density_energy", ffde)):
        set_constant(mod, name, val)
    grid, block, i32 = (nelr // 192,), (192,), np.int32
    pv = d.zeros(nelr * nvar, F32)
    K["cuda_initialize_variables"](grid, block, (i32(nelr), pv))
    ok()
    np.testing.assert_array_equal(d.down(pv, nelr * nvar, F32).reshape(nvar, nelr), np.repeat(ff[:, None], nelr, 1))
    rho = (rng.random(nelr) + 1).astype(F32)
    m = (rng.random((3, nelr)) - 0.5).astype(F32)
    de = ((rng.random(nelr) + 1) / 0.4 + 0.5 * rho * ((m / rho) ** 2).sum(0)).astype(F32)
    var = np.concatenate([rho[None], m, de[None]])
    nb = rng.integers(0, nelr, (nnb, nelr)).astype(np.int32)
    r = rng.random((nnb, nelr))
    nb[r < 0.15], nb[r > 0.85] = -1, -2
    normals = (rng.standard_normal((3, nnb, nelr)) * 0.3).astype(F32)
    areas = (rng.random(nelr) * 0.5 + 0.1).astype(F32)
    pvar, pold, pnb, pn, psf, pfl = d.up(var), d.up(var), d.up(nb), d.up(normals), d.zeros(nelr, F32), d.zeros(nelr * nvar, F32)
    K["cuda_compute_step_factor"](grid, block, (i32(nelr), pvar, d.up(areas), psf))
    for j in range(3):
        K["cuda_compute_flux"](grid, block, (i32(nelr), pnb, pn, pvar, pfl))
        K["cuda_time_step"](grid, block, (i32(j), i32(nelr), pold, pvar, psf, pfl))
    ok()
    V = var.copy()
    ssq, _, sos, *_ = _cfd_state(V[0], V[1:4], V[4])
    sf = F32(0.5) / (np.sqrt(areas) * (np.sqrt(ssq) + sos))
    for j in range(3):
        rho_i, m_i, de_i = V[0], V[1:4], V[4]
        ssq_i, p_i, sos_i, fx_i, fy_i, fz_i, fde_i = _cfd_state(rho_i, m_i, de_i)
        sp_i = np.sqrt(ssq_i)
        fd, fe, fm = np.zeros(nelr, F32), np.zeros(nelr, F32), [np.zeros(nelr, F32) for _ in range(3)]
        for jj in range(nnb):
            n_, nrm = nb[jj], normals[:, jj]
            nl = np.sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2])
            idx = np.where(n_ >= 0, n_, 0)
            rho_n, m_n, de_n = V[0][idx], V[1:4][:, idx], V[4][idx]
            ssq_n, _, sos_n, fx_n, fy_n, fz_n, fde_n = _cfd_state(rho_n, m_n, de_n)
            inner, wing, far = n_ >= 0, n_ == -1, n_ == -2
            with np.errstate(all="ignore"):
                fac = (-nl) * F32(0.2) * F32(0.5) * (sp_i + np.sqrt(ssq_n) + sos_i + sos_n)
                fd = np.where(inner, fd + fac * (rho_i - rho_n), fd)
                fe = np.where(inner, fe + fac * (de_i - de_n), fe)
                fm = [np.where(inner, fm[c] + fac * (m_i[c] - m_n[c]), fm[c]) for c in range(3)]
                for c in range(3):
                    fac = F32(0.5) * nrm[c]
                    fd = np.where(inner, fd + fac * (m_n[c] + m_i[c]), fd)
                    fe = np.where(inner, fe + fac * (fde_n[c] + fde_i[c]), fe)
                    fm = [np.where(inner, fm[q] + fac * (f_n[c] + f_i[c]), fm[q])
                          for q, (f_n, f_i) in enumerate(((fx_n, fx_i), (fy_n, fy_i), (fz_n, fz_i)))]
                fm = [np.where(wing, fm[c] + nrm[c] * p_i, fm[c]) for c in range(3)]
                for c in range(3):
                    fac = F32(0.5) * nrm[c]
                    fd = np.where(far, fd + fac * (ff[1 + c] + m_i[c]), fd)
                    fe = np.where(far, fe + fac * (ffde[c] + fde_i[c]), fe)
                    fm = [np.where(far, fm[q] + fac * (f_ff[c] + f_i[c]), fm[q])
                          for q, (f_ff, f_i) in enumerate(((ffx, fx_i), (ffy, fy_i), (ffz, fz_i)))]
        V = (var + (sf / F32(3 + 1 - j)) * np.stack([fd, fm[0], fm[1], fm[2], fe])).astype(F32)
    np.testing.assert_array_equal(d.down(pvar, nelr * nvar, F32).reshape(nvar, nelr), V)


# ----------------------------------------------------------------------------------------- Parboil


def test_parboil_sgemm(d):
    """mysgemmNT, C = A * B^T (column-major), replayed in float32 in the kernel's k order: exact.
    C is zeroed first: the benchmark passes beta = 0 on freshly cudaMalloc'd C, and 0 * x is NaN
    when x is NaN, as the emulator's fresh memory (0xFF bytes) reads."""
    k = A.RawModule(code=src("parboil_sgemm.cu")).get_function("mysgemmNT")
    rng = np.random.default_rng(17)
    m, n, kk = 256, 64, 48
    Acm = rng.standard_normal((kk, m)).astype(F32)
    Bt = rng.standard_normal((kk, n)).astype(F32)
    pc = d.zeros(m * n, F32)
    k((m // 128, n // 16), (16, 8), (d.up(Acm), np.int32(m), d.up(Bt), np.int32(n), pc, np.int32(m), np.int32(kk),
                                     F32(1.0), F32(0.0)))
    ok()
    R = np.zeros((n, m), F32)
    for j in range(kk):
        R += np.outer(Bt[j], Acm[j]).astype(F32)
    np.testing.assert_array_equal(d.down(pc, m * n, F32).reshape(n, m), R)


def test_parboil_stencil(d):
    """block2D_hybrid_coarsen_x, 3 Jacobi iterations on 100x30x10 (nx not a multiple of 64), float32
    replay in the kernel's summation order: exact."""
    k = A.RawModule(code=src("parboil_stencil.cu")).get_function("block2D_hybrid_coarsen_x")
    rng = np.random.default_rng(18)
    nx, ny, nz, it = 100, 30, 10, 3
    c0, c1 = F32(1.0 / 6.0), F32(1.0 / 6.0 / 6.0)
    A0 = rng.random((nz, ny, nx)).astype(F32)
    pa, pn = d.up(A0), d.up(A0)
    for _ in range(it):
        k(((nx + 63) // 64, (ny + 3) // 4), (32, 4), (c0, c1, pa, pn, np.int32(nx), np.int32(ny), np.int32(nz)),
          shared_mem=2 * 32 * 4 * 4)
        pa, pn = pn, pa
    ok()
    R = A0.copy()
    for _ in range(it):
        N = R.copy()
        N[1:-1, 1:-1, 1:-1] = (R[2:, 1:-1, 1:-1] + R[:-2, 1:-1, 1:-1] + R[1:-1, 2:, 1:-1] + R[1:-1, :-2, 1:-1]
                               + R[1:-1, 1:-1, 2:] + R[1:-1, 1:-1, :-2]) * c1 - R[1:-1, 1:-1, 1:-1] * c0
        R = N
    np.testing.assert_array_equal(d.down(pa, A0.size, F32).reshape(A0.shape), R)


def test_parboil_spmv_jds(d):
    """spmv_jds on a JDS matrix (rows sorted by length, one 32-thread block per warp of rows, the
    diagonal offsets and per-warp lengths in __constant__ memory set with get_global): exact. As
    published, the header's unused `texture<float,1>` reference is a compile error with the note."""
    code = src("parboil_spmv.cu")
    with pytest.raises(CompileException, match="textures and surfaces"):
        A.RawModule(code=code.replace("// texture<float,1> tex_x_float;", "texture<float,1> tex_x_float;")
                    ).get_function("spmv_jds")
    mod = A.RawModule(code=code)
    k = mod.get_function("spmv_jds")
    rng = np.random.default_rng(19)
    dim = 300
    nnz = rng.integers(1, 20, dim)
    nnz[::37] = 0
    cols = [np.sort(rng.choice(dim, c, replace=False)) for c in nnz]
    vals = [rng.standard_normal(c).astype(F32) for c in nnz]
    x = rng.standard_normal(dim).astype(F32)
    perm = np.argsort(-nnz, kind="stable").astype(np.int32)
    dimp = (dim + 31) // 32 * 32
    nw, depth = dimp // 32, int(nnz.max())
    pn = np.zeros(dimp, int)
    pn[:dim] = nnz[perm]
    zc = np.maximum([pn[w * 32:(w + 1) * 32].max() for w in range(nw)], 1).astype(np.int32)
    ptr = (np.arange(depth) * dimp).astype(np.int32)
    data, idx = np.zeros(depth * dimp, F32), np.zeros(depth * dimp, np.int32)
    for r in range(dim):
        for j in range(nnz[perm[r]]):
            data[ptr[j] + r], idx[ptr[j] + r] = vals[perm[r]][j], cols[perm[r]][j]
    set_constant(mod, "jds_ptr_int", ptr)
    set_constant(mod, "sh_zcnt_int", zc)
    py = d.zeros(dim, F32)
    k((nw,), (32,), (py, d.up(data), d.up(idx), d.up(perm), d.up(x), d.up(zc), np.int32(dim)))
    ok()
    R = np.zeros(dim, F32)
    for r in range(dim):
        s = F32(0)
        for j in range(zc[r // 32]):
            s = F32(s + F32(data[ptr[j] + r] * x[idx[ptr[j] + r]]))
        R[perm[r]] = s
    np.testing.assert_array_equal(d.down(py, dim, F32), R)


def test_parboil_mri_q(d):
    """ComputePhiMag_GPU (exact) and ComputeQ_GPU, one launch per 1024 k-space values in
    `__constant__ __device__ kValues ck[]` (set with get_global, as computeQ_GPU's
    cudaMemcpyToSymbol). Q sums numK float32 terms PhiMag*cos/sin: the sequential-summation bound
    numK * 2^-23 * sum(PhiMag) (plus an ulp of cosf/sinf per term) bounds the difference from the
    float64 reference. numK is even or <= 1024: for an odd numK over 1024 the kernel reads ck[1024],
    past the array, in the first launch."""
    mod = A.RawModule(code=src("parboil_mri_q.cu"))
    kp, kq = mod.get_function("ComputePhiMag_GPU"), mod.get_function("ComputeQ_GPU")
    rng = np.random.default_rng(20)
    for numK, numX in ((1001, 512), (2048, 256)):
        kx, ky, kz = (rng.random(numK).astype(F32) - F32(0.5) for _ in range(3))
        phiR, phiI = rng.random(numK).astype(F32), rng.random(numK).astype(F32)
        x, y, z = (rng.random(numX).astype(F32) * 4 for _ in range(3))
        pm = d.zeros(numK, F32)
        kp(((numK + 511) // 512,), (512,), (d.up(phiR), d.up(phiI), pm, np.int32(numK)))
        ok()
        phi = d.down(pm, numK, F32)
        np.testing.assert_array_equal(phi, phiR * phiR + phiI * phiI)
        kv = np.stack([kx, ky, kz, phi], 1)
        pQr, pQi, px, py, pz = d.zeros(numX, F32), d.zeros(numX, F32), d.up(x), d.up(y), d.up(z)
        for g in range((numK + 1023) // 1024):
            set_constant(mod, "ck", kv[g * 1024:(g + 1) * 1024])
            kq((numX // 256,), (256,), (np.int32(numK), np.int32(g * 1024), px, py, pz, pQr, pQi))
        ok()
        arg = 2 * np.pi * (np.outer(x, kx).astype(F64) + np.outer(y, ky) + np.outer(z, kz))
        tol = numK * 2.0 ** -23 * F64(phi).sum()
        np.testing.assert_allclose(d.down(pQr, numX, F32), (phi * np.cos(arg)).sum(1), rtol=0, atol=tol)
        np.testing.assert_allclose(d.down(pQi, numX, F32), (phi * np.sin(arg)).sum(1), rtol=0, atol=tol)


def test_parboil_tpacf_up_to_one_tile(d):
    """gen_hists (grid NUM_SETS*2+1, 256 threads; dev_binb set with get_global): DD, RR and DR
    angular histograms, exact. NUM_ELEMENTS <= 256: with more, the kernel reloads data_s[] at the
    top of its next tile with no barrier after the previous tile's reads (a write-after-read race
    between warps; the emulator's schedule then gives other counts, undetected; a
    __syncthreads() there makes them exact)."""
    mod = A.RawModule(code=src("parboil_tpacf.cu"))
    k = mod.get_function("gen_hists")
    nbins = 20
    binb = np.array([np.cos(10.0 ** (kk / 5) / 60.0 * (np.pi / 180.0)) for kk in range(nbins + 1)]).astype(F32)
    set_constant(mod, "dev_binb", binb)
    rng = np.random.default_rng(21)
    ne, ns = 200, 2
    pts = rng.standard_normal((ns + 1, ne, 3)) * 0.02 + np.array([0, 0, 1.0])   # angles of ~1 to 200 arcmin
    pts = (pts / np.linalg.norm(pts, axis=2, keepdims=True)).astype(F32)
    xyz = np.concatenate([pts[..., 0].ravel(), pts[..., 1].ravel(), pts[..., 2].ravel()])
    base = int(d.up(xyz))
    ph = d.zeros(nbins * (2 * ns + 1), np.uint64)
    k((2 * ns + 1,), (256,), (ph, base, base + 4 * xyz.size // 3, base + 8 * xyz.size // 3, np.int32(ns), np.int32(ne)))
    ok()

    def hist(a, b, self_pairs):
        dd = (a[:, None, 0] * b[None, :, 0] + a[:, None, 1] * b[None, :, 1]) + a[:, None, 2] * b[None, :, 2]
        dd = dd[np.triu_indices(len(a), 1)] if self_pairs else dd.ravel()
        m = np.searchsorted(-binb, -dd, side="left") - 1
        return np.bincount(m[(m >= 0) & (m < nbins)], minlength=nbins)
    R = np.array([hist(pts[s], pts[s], True) for s in range(ns + 1)] + [hist(pts[0], pts[s], False) for s in range(1, ns + 1)])
    assert R.sum() > 10000
    np.testing.assert_array_equal(d.down(ph, nbins * (2 * ns + 1), np.uint64).reshape(-1, nbins), R)
