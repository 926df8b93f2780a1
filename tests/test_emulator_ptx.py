"""Inline PTX on the host emulator (aclnn_py/emulator/ptx.py + include/emu_ptx.h): the idioms public
kernels write (laneid/warpid helpers, vector ld/st with cache hints, atomics, carry chains, prmt,
lop3, bfe/bfi, cvt to f16x2, shfl.sync reductions, cp.async), each checked bit for bit against
NumPy / Python; instructions the emulator does not implement are compile errors naming the
instruction and the user's line."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import aclnn_py as A
from aclnn_py import acl
from harness import sync_ok as ok  # the device synchronises without an error

pytestmark = pytest.mark.skipif(
    acl._state.state.initialized and acl._state.state.backend.name != "host", reason="emulator run")


M32 = 0xFFFFFFFF


def u32(x):
    return np.asarray(x, dtype=np.uint64).astype(np.uint32) if np.ndim(x) else int(x) & M32


# ------------------------------------------------------------------------------------------------
# special registers
# ------------------------------------------------------------------------------------------------
SPECIAL = r"""
__device__ __forceinline__ unsigned lane_id() { unsigned r; asm volatile("mov.u32 %0, %%laneid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned warp_id() { unsigned r; asm volatile("mov.u32 %0, %%warpid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned lanemask(int k) {
    unsigned r = 0;
    switch (k) {
        case 0: asm("mov.u32 %0, %%lanemask_eq;" : "=r"(r)); break;
        case 1: asm("mov.u32 %0, %%lanemask_lt;" : "=r"(r)); break;
        case 2: asm("mov.u32 %0, %%lanemask_le;" : "=r"(r)); break;
        case 3: asm("mov.u32 %0, %%lanemask_gt;" : "=r"(r)); break;
        default: asm("mov.u32 %0, %%lanemask_ge;" : "=r"(r)); break;
    }
    return r;
}
extern "C" __global__ void special_regs(unsigned* out) {
    const unsigned lin = threadIdx.x + blockDim.x * threadIdx.y;
    const unsigned g = blockIdx.x * blockDim.x * blockDim.y + lin;
    unsigned* o = out + 16 * g;
    o[0] = lane_id();
    o[1] = warp_id();
    for (int k = 0; k < 5; ++k) o[2 + k] = lanemask(k);
    asm("mov.u32 %0, %%tid.x;" : "=r"(o[7]));
    asm("mov.u32 %0, %%tid.y;" : "=r"(o[8]));
    asm("mov.u32 %0, %%ntid.x;" : "=r"(o[9]));
    asm("mov.u32 %0, %%ntid.y;" : "=r"(o[10]));
    asm("mov.u32 %0, %%ctaid.x;" : "=r"(o[11]));
    asm("mov.u32 %0, %%nctaid.x;" : "=r"(o[12]));
    unsigned sm, nsm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    asm volatile("mov.u32 %0, %%nsmid;" : "=r"(nsm));
    o[13] = sm < nsm;
    unsigned long long c0, c1;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c0));
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(c1));
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c1));
    o[14] = c1 >= c0;
    unsigned dsz;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dsz));
    o[15] = dsz;
}
"""


def test_special_registers(d):
    mod = A.RawModule(code=SPECIAL)
    bx, by, nb = 8, 12, 3
    n = bx * by * nb
    po = d.zeros(16 * n, np.uint32)
    mod.get_function("special_regs")((nb,), (bx, by), (po,), shared_mem=40)
    ok()
    o = d.down(po, 16 * n, np.uint32).reshape(n, 16).astype(np.int64)
    for g in range(n):
        b, lin = divmod(g, bx * by)
        lane = lin % 32
        assert o[g, 0] == lane and o[g, 1] == lin // 32
        assert list(o[g, 2:7]) == [1 << lane, (1 << lane) - 1, (2 << lane) - 1 & M32,
                                   ~((2 << lane) - 1) & M32, ~((1 << lane) - 1) & M32]
        assert list(o[g, 7:13]) == [lin % bx, lin // bx, bx, by, b, nb]
        assert o[g, 13] == 1 and o[g, 14] == 1 and o[g, 15] == 40


def test_cuda_samples_style_laneid_in_plain_and_fiber_kernels(d):
    """%laneid in a kernel without any collective (plain loop) and with one (fibers) reads the same."""
    src = r"""
    extern "C" __global__ void k(int* o, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) { unsigned l; asm("mov.u32 %0, %%laneid;" : "=r"(l)); o[i] = l; }
    }
    extern "C" __global__ void k2(int* o, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        unsigned l; asm("mov.u32 %0, %%laneid;" : "=r"(l));
        __syncwarp();
        int l0 = __shfl_sync(0xffffffffu, (int)l, 0);
        if (i < n) o[i] = l + 100 * l0;
    }"""
    mod = A.RawModule(code=src)
    n = 200
    p1, p2 = d.zeros(n, np.int32), d.zeros(n, np.int32)
    mod.get_function("k")((4,), (64,), (p1, np.int32(n)))
    mod.get_function("k2")((4,), (64,), (p2, np.int32(n)))
    ok()
    assert (d.down(p1, n, np.int32) == np.arange(n) % 32).all()
    assert (d.down(p2, n, np.int32) == np.arange(n) % 32).all()


# ------------------------------------------------------------------------------------------------
# memory: vector loads/stores, qualifiers, shared addresses, atomics, cp.async
# ------------------------------------------------------------------------------------------------
MEM = r"""
extern "C" __global__ void ldst_vec(const float* in, float* out, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n4) return;
    float a, b, c, e;
    asm volatile("ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(a), "=f"(b), "=f"(c), "=f"(e) : "l"(in + 4 * i));
    asm volatile("st.global.cs.v4.f32 [%0], {%1, %2, %3, %4};" :: "l"(out + 4 * i), "f"(e), "f"(c), "f"(b), "f"(a) : "memory");
}
extern "C" __global__ void ldst_scalar(const unsigned char* in, int* out) {
    int i = threadIdx.x;
    int s8, u16, w, off, vol, acq;
    asm("ld.global.s8 %0, [%1];" : "=r"(s8) : "l"(in + i));
    asm("ld.global.nc.L1::no_allocate.u16 %0, [%1];" : "=r"(u16) : "l"(in + 2 * i));
    asm("ld.global.ca.b32 %0, [%1+4];" : "=r"(w) : "l"(in + 4 * i));
    asm("ld.global.cg.u32 %0, [%1+-4];" : "=r"(off) : "l"(in + 4 * i + 8));
    asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(vol) : "l"(in + 4 * i));
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(acq) : "l"(in + 4 * i));
    int* o = out + 8 * i;
    asm volatile("st.global.wt.s32 [%0], %1;" :: "l"(o), "r"(s8));
    asm volatile("st.relaxed.gpu.global.u32 [%0+4], %1;" :: "l"(o), "r"(u16));
    asm volatile("st.release.gpu.global.b32 [%0+8], %1;" :: "l"(o), "r"(w));
    o[3] = off; o[4] = vol; o[5] = acq;
    asm volatile("st.global.b8 [%0], %1;" :: "l"((unsigned char*)(o + 6)), "r"(0x1234u + i));
    asm volatile("st.global.b16 [%0+2], %1;" :: "l"((unsigned char*)(o + 6)), "h"((unsigned short)(0xbeef - i)));
    unsigned long long v64 = 0x0102030405060708ull * (i + 1);
    asm volatile("st.global.u64 [%0], %1;" :: "l"((unsigned long long*)(o + 6) + 0) , "l"(v64));
    unsigned long long r64;
    asm volatile("ld.global.u64 %0, [%1];" : "=l"(r64) : "l"(o + 6));
    asm volatile("prefetch.global.L2 [%0];" :: "l"(in));
    o[7] = (int)(r64 >> 32) ^ (int)r64;
}
extern "C" __global__ void shared_addr(const unsigned* in, unsigned* out) {
    __shared__ unsigned buf[64];
    extern __shared__ unsigned dyn[];
    const unsigned t = threadIdx.x;
    unsigned s = (unsigned)__cvta_generic_to_shared(&buf[t]);
    unsigned s2;
    asm("cvta.to.shared.u32 %0, %1;" : "=r"(s2) : "l"(&dyn[t]));
    asm volatile("st.shared.u32 [%0], %1;" :: "r"(s), "r"(in[t]));
    asm volatile("st.shared.u32 [%0+0], %1;" :: "r"(s2), "r"(in[t] * 3u));
    if (t == 0) buf[0] = 0;
    __syncthreads();
    asm volatile("bar.sync 0;" ::: "memory");
    unsigned v, w, old;
    unsigned other = (unsigned)__cvta_generic_to_shared(&buf[(t + 1) % 64]);
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(other));
    asm volatile("ld.shared.u32 %0, [%1+4];" : "=r"(w) : "r"(s2));
    asm volatile("barrier.sync 0;" ::: "memory");
    unsigned b0 = (unsigned)__cvta_generic_to_shared(&buf[0]);
    asm volatile("atom.shared.add.u32 %0, [%1], %2;" : "=r"(old) : "r"(b0), "r"(1u) : "memory");
    unsigned long long gen;
    asm("cvta.shared.u64 %0, %1;" : "=l"(gen) : "l"((unsigned long long)s2));
    unsigned viag;
    asm("ld.u32 %0, [%1];" : "=r"(viag) : "l"(gen));
    __syncthreads();
    out[4 * t] = v;
    out[4 * t + 1] = t < 63 ? w : 0;
    out[4 * t + 2] = viag;
    out[4 * t + 3] = (gen == (unsigned long long)&dyn[t]) + 2 * (buf[0] == 64) + 4 * (old < 64);
}
extern "C" __global__ void atomics(unsigned* cnt, float* fsum, int* imin, unsigned long long* c64, unsigned* lock_total,
                                   unsigned* wrap, unsigned* olds) {
    unsigned old;
    asm volatile("atom.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(cnt), "r"(1u) : "memory");
    olds[blockIdx.x * blockDim.x + threadIdx.x] = old;
    asm volatile("red.global.add.f32 [%0], %1;" :: "l"(fsum), "f"(0.5f) : "memory");
    asm volatile("red.relaxed.gpu.global.min.s32 [%0], %1;" :: "l"(imin), "r"((int)threadIdx.x - 100) : "memory");
    unsigned long long o64;
    asm volatile("atom.global.add.u64 %0, [%1], %2;" : "=l"(o64) : "l"(c64), "l"(1ull << 33) : "memory");
    unsigned o2;
    asm volatile("atom.global.inc.u32 %0, [%1], %2;" : "=r"(o2) : "l"(wrap), "r"(9u) : "memory");
    // a CAS loop adding the thread id
    unsigned cur = *(volatile unsigned*)lock_total, seen;
    for (;;) {
        asm volatile("atom.global.cas.b32 %0, [%1], %2, %3;" : "=r"(seen) : "l"(lock_total), "r"(cur), "r"(cur + threadIdx.x) : "memory");
        if (seen == cur) break;
        cur = seen;
    }
    asm volatile("membar.gl;" ::: "memory");
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
}
extern "C" __global__ void cp_async(const float4* in, float4* out) {
    __shared__ __align__(16) float4 tile[64];
    __shared__ float one[64];
    const unsigned t = threadIdx.x;
    unsigned s = (unsigned)__cvta_generic_to_shared(&tile[t]);
    int srcsize = (t % 4 == 3) ? 8 : 16;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(s), "l"(in + t), "r"(srcsize));
    unsigned s1 = (unsigned)__cvta_generic_to_shared(&one[t]);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(s1), "l"((const float*)(in + t) + 1));
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    __syncthreads();
    float4 v = tile[63 - t];
    v.x += one[63 - t];
    out[t] = v;
}
"""


def test_vector_loads_and_streaming_stores(d):
    mod = A.RawModule(code=MEM)
    rng = np.random.default_rng(1)
    x = rng.standard_normal(4 * 300).astype(np.float32)
    pi, po = d.up(x), d.zeros(x.size, np.float32)
    mod.get_function("ldst_vec")((3,), (128,), (pi, po, np.int32(300)))
    ok()
    y = d.down(po, x.size, np.float32)
    assert (y.view(np.uint32) == x.reshape(-1, 4)[:, ::-1].reshape(-1).view(np.uint32)).all()


def test_scalar_loads_stores_qualifiers(d):
    mod = A.RawModule(code=MEM)
    nt = 32
    raw = np.random.default_rng(2).integers(0, 256, 4 * nt + 16).astype(np.uint8)
    pi, po = d.up(raw), d.zeros(8 * nt, np.int32)
    mod.get_function("ldst_scalar")((1,), (nt,), (pi, po))
    ok()
    o = d.down(po, 8 * nt, np.int32).reshape(nt, 8)
    w32 = lambda k: int.from_bytes(raw[k:k + 4].tobytes(), "little")
    for i in range(nt):
        assert o[i, 0] == np.int8(raw[i])
        assert o[i, 1] == int.from_bytes(raw[2 * i:2 * i + 2].tobytes(), "little")
        assert u32(o[i, 2]) == w32(4 * i + 4)
        assert u32(o[i, 3]) == w32(4 * i + 4)
        assert u32(o[i, 4]) == w32(4 * i) and u32(o[i, 5]) == w32(4 * i)
        v64 = (0x0102030405060708 * (i + 1)) & (2**64 - 1)
        assert u32(o[i, 7]) == ((v64 >> 32) ^ v64) & M32


def test_shared_addresses_cvta_and_shared_atomics(d):
    mod = A.RawModule(code=MEM)
    x = np.arange(64, dtype=np.uint32) * 7 + 3
    pi, po = d.up(x), d.zeros(4 * 64, np.uint32)
    mod.get_function("shared_addr")((2,), (64,), (pi, po), shared_mem=64 * 4)
    ok()
    o = d.down(po, 4 * 64, np.uint32).reshape(64, 4)
    buf = x.copy()
    buf[0] = 0
    for t in range(64):
        assert o[t, 0] == buf[(t + 1) % 64]
        if t < 63:
            assert o[t, 1] == x[t + 1] * 3
        assert o[t, 2] == x[t] * 3
        assert o[t, 3] == 7


def test_atomics_via_asm(d):
    mod = A.RawModule(code=MEM)
    nb, nt = 4, 64
    pc, pf, pm = d.zeros(1, np.uint32), d.zeros(1, np.float32), d.up(np.array([7], np.int32))
    p64, pl, pw, pold = d.zeros(1, np.uint64), d.zeros(1, np.uint32), d.zeros(1, np.uint32), d.zeros(nb * nt, np.uint32)
    mod.get_function("atomics")((nb,), (nt,), (pc, pf, pm, p64, pl, pw, pold))
    ok()
    n = nb * nt
    assert d.down(pc, 1, np.uint32)[0] == n
    assert sorted(d.down(pold, n, np.uint32)) == list(range(n))
    assert d.down(pf, 1, np.float32)[0] == 0.5 * n
    assert d.down(pm, 1, np.int32)[0] == -100
    assert d.down(p64, 1, np.uint64)[0] == n << 33
    assert d.down(pl, 1, np.uint32)[0] == nb * sum(range(nt))
    assert d.down(pw, 1, np.uint32)[0] == n % 10      # inc wraps to 0 after 9


def test_cp_async_with_zero_fill(d):
    mod = A.RawModule(code=MEM)
    x = np.random.default_rng(3).standard_normal(4 * 64).astype(np.float32)
    pi, po = d.up(x), d.zeros(4 * 64, np.float32)
    mod.get_function("cp_async")((1,), (64,), (pi, po))
    ok()
    o = d.down(po, 4 * 64, np.float32).reshape(64, 4)
    xs = x.reshape(64, 4)
    for t in range(64):
        s = 63 - t
        exp = xs[s].copy()
        if s % 4 == 3:
            exp[2:] = 0
        exp[0] = np.float32(exp[0] + xs[s, 1])
        assert (o[t].view(np.uint32) == exp.view(np.uint32)).all(), (t, o[t], exp)


# ------------------------------------------------------------------------------------------------
# integer / bit instructions
# ------------------------------------------------------------------------------------------------
INTS = r"""
#define NOUT 40
extern "C" __global__ void ints(const unsigned* A, const unsigned* B, const unsigned* C, unsigned* O, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned a = A[i], b = B[i], c = C[i];
    unsigned* o = O + NOUT * i;
    // 96-bit add and subtract with carry chains
    asm("add.cc.u32 %0, %3, %6;\n\taddc.cc.u32 %1, %4, %7;\n\taddc.u32 %2, %5, %8;"
        : "=r"(o[0]), "=r"(o[1]), "=r"(o[2]) : "r"(a), "r"(b), "r"(c), "r"(c), "r"(a), "r"(b));
    asm("sub.cc.u32 %0, %3, %6;\n\t"
        "subc.cc.u32 %1, %4, %7;\n\t"
        "subc.u32 %2, %5, %8;"
        : "=r"(o[3]), "=r"(o[4]), "=r"(o[5]) : "r"(a), "r"(b), "r"(c), "r"(c), "r"(a), "r"(b));
    // 64-bit add from two 32-bit halves (the classic idiom)
    unsigned long long x = ((unsigned long long)b << 32) | a, y = ((unsigned long long)a << 32) | c, s;
    asm("{\n\t.reg .u32 lo, hi;\n\t"
        "add.cc.u32 lo, %1, %3;\n\taddc.u32 hi, %2, %4;\n\tmov.b64 %0, {lo, hi};\n\t}"
        : "=l"(s) : "r"((unsigned)x), "r"((unsigned)(x >> 32)), "r"((unsigned)y), "r"((unsigned)(y >> 32)));
    o[6] = (unsigned)s; o[7] = (unsigned)(s >> 32);
    asm("mul.hi.u32 %0, %1, %2;" : "=r"(o[8]) : "r"(a), "r"(b));
    asm("mul.hi.s32 %0, %1, %2;" : "=r"(o[9]) : "r"(a), "r"(b));
    unsigned long long wide;
    asm("mul.wide.u32 %0, %1, %2;" : "=l"(wide) : "r"(a), "r"(c));
    o[10] = (unsigned)wide; o[11] = (unsigned)(wide >> 32);
    asm("mad.lo.u32 %0, %1, %2, %3;" : "=r"(o[12]) : "r"(a), "r"(b), "r"(c));
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(o[13]) : "r"(a), "r"(b), "r"(c));
    asm("prmt.b32 %0, %1, 0, 0x0123;" : "=r"(o[14]) : "r"(a));          // byte swap
    asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(o[15]) : "r"(a), "r"(b), "r"(c));
    asm("lop3.b32 %0, %1, %2, %3, %4;" : "=r"(o[16]) : "r"(a), "r"(b), "r"(c), "n"(0xE8));
    asm("bfe.u32 %0, %1, %2, %3;" : "=r"(o[17]) : "r"(a), "r"(b & 0x3f), "r"(c & 0x3f));
    asm("bfe.s32 %0, %1, %2, %3;" : "=r"(o[18]) : "r"(a), "r"(b & 0x3f), "r"(c & 0x3f));
    asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(o[19]) : "r"(a), "r"(b), "r"(c & 0x3f), "r"((c >> 8) & 0x3f));
    asm("brev.b32 %0, %1;" : "=r"(o[20]) : "r"(a));
    asm("popc.b32 %0, %1;" : "=r"(o[21]) : "r"(b));
    asm("clz.b32 %0, %1;" : "=r"(o[22]) : "r"(c >> (a & 31)));
    asm("bfind.u32 %0, %1;" : "=r"(o[23]) : "r"(c >> (a & 31)));
    asm("bfind.s32 %0, %1;" : "=r"(o[24]) : "r"(b));
    asm("bfind.shiftamt.u32 %0, %1;" : "=r"(o[25]) : "r"(c >> (b & 31)));
    asm("shf.l.wrap.b32 %0, %1, %2, %3;" : "=r"(o[26]) : "r"(a), "r"(b), "r"(c));
    asm("shf.r.clamp.b32 %0, %1, %2, %3;" : "=r"(o[27]) : "r"(a), "r"(b), "r"(c & 63));
    asm("min.s32 %0, %1, %2;" : "=r"(o[28]) : "r"(a), "r"(b));
    asm("max.u32 %0, %1, %2;" : "=r"(o[29]) : "r"(a), "r"(b));
    asm("abs.s32 %0, %1;" : "=r"(o[30]) : "r"(a));
    asm("neg.s32 %0, %1;" : "=r"(o[31]) : "r"(b));
    asm("shl.b32 %0, %1, %2;" : "=r"(o[32]) : "r"(a), "r"(c & 63));
    asm("shr.s32 %0, %1, %2;" : "=r"(o[33]) : "r"(b), "r"(c & 63));
    asm("{\n\t.reg .pred p;\n\tsetp.lt.s32 p, %1, %2;\n\tselp.u32 %0, 1, 0, p;\n\t}" : "=r"(o[34]) : "r"(a), "r"(b));
    asm("{ .reg .pred p, q; setp.hi.u32 p|q, %1, %2; @q mov.u32 %0, 7; @p mov.u32 %0, 9; }" : "=r"(o[35]) : "r"(a), "r"(b));
    asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(o[36]) : "r"(a), "r"(b), "r"(c));
    asm("xor.b32 %0, %1, %2;\n\tnot.b32 %0, %0;" : "=r"(o[37]) : "r"(a), "r"(b));
    unsigned short h0, h1;
    asm("mov.b32 {%0, %1}, %2;" : "=h"(h0), "=h"(h1) : "r"(a));
    asm("mov.b32 %0, {%1, %2};" : "=r"(o[38]) : "h"(h1), "h"(h0));
    unsigned long long m64;
    asm("mad.wide.u32 %0, %1, %2, %3;" : "=l"(m64) : "r"(a), "r"(b), "l"(((unsigned long long)c << 32) | c));
    o[39] = (unsigned)(m64 >> 32) ^ (unsigned)m64;
}
"""


def _s32(v):
    v &= M32
    return v - (1 << 32) if v >> 31 else v


def _prmt(a, b, c):
    t = (b << 32) | a
    r = 0
    for i in range(4):
        s = (c >> (4 * i)) & 0xF
        byte = (t >> (8 * (s & 7))) & 0xFF
        if s & 8:
            byte = 0xFF if byte & 0x80 else 0
        r |= byte << (8 * i)
    return r


def _bfe(a, pos, ln, signed):
    bits = [(a >> k) & 1 for k in range(32)]
    sbit = bits[min(pos + ln - 1, 31)] if signed and ln else 0
    return sum(((bits[pos + k] if (k < ln and pos + k <= 31) else sbit) << k) for k in range(32))


def _bfind(a, signed):
    if signed and a >> 31:
        a = ~a & M32
    return a.bit_length() - 1 if a else M32


def _lop3(a, b, c, lut):
    r = 0
    for k in range(8):
        if lut >> k & 1:
            r |= (a if k & 4 else ~a) & (b if k & 2 else ~b) & (c if k & 1 else ~c)
    return r & M32


def _int_refs(a, b, c):
    r = [0] * 40
    s = (a + c) + ((b + a) << 32) + ((c + b) << 64)
    r[0], r[1], r[2] = s & M32, (s >> 32) & M32, (s >> 64) & M32
    x, y = a | (b << 32) | (c << 64), c | (a << 32) | (b << 64)
    dd = (x - y) & ((1 << 96) - 1)
    r[3], r[4], r[5] = dd & M32, (dd >> 32) & M32, (dd >> 64) & M32
    s64 = (((b << 32) | a) + ((a << 32) | c)) & (2**64 - 1)
    r[6], r[7] = s64 & M32, s64 >> 32
    r[8] = (a * b) >> 32
    r[9] = ((_s32(a) * _s32(b)) >> 32) & M32
    r[10], r[11] = (a * c) & M32, (a * c) >> 32
    r[12] = (a * b + c) & M32
    r[13] = _prmt(a, b, c)
    r[14] = int.from_bytes(a.to_bytes(4, "little"), "big")
    r[15] = a ^ b ^ c
    r[16] = (a & b) | (a & c) | (b & c)
    r[17] = _bfe(a, b & 0x3F, c & 0x3F, False)
    r[18] = _bfe(a, b & 0x3F, c & 0x3F, True)
    pos, ln = c & 0x3F, (c >> 8) & 0x3F
    f = b
    for k in range(ln):
        if pos + k > 31:
            break
        f = (f & ~(1 << (pos + k))) | (((a >> k) & 1) << (pos + k))
    r[19] = f
    r[20] = int(f"{a:032b}"[::-1], 2)
    r[21] = bin(b).count("1")
    v = c >> (a & 31)
    r[22] = 32 - v.bit_length()
    r[23] = _bfind(v, False)
    r[24] = _bfind(b, True)
    v2 = c >> (b & 31)
    r[25] = (31 - (v2.bit_length() - 1)) if v2 else M32
    n = c & 31
    r[26] = ((((b << 32) | a) << n) >> 32) & M32
    n2 = min(c & 63, 32)
    r[27] = (((b << 32) | a) >> n2) & M32
    r[28] = min(_s32(a), _s32(b)) & M32
    r[29] = max(a, b)
    r[30] = abs(_s32(a)) & M32
    r[31] = (-_s32(b)) & M32
    r[32] = (a << (c & 63)) & M32 if (c & 63) < 32 else 0
    sh = c & 63
    r[33] = (_s32(b) >> min(sh, 31)) & M32
    r[34] = int(_s32(a) < _s32(b))
    r[35] = 9 if a > b else 7
    sb = lambda w, k: ((w >> (8 * k)) & 0xFF) - (256 if (w >> (8 * k)) & 0x80 else 0)
    r[36] = (_s32(c) + sum(sb(a, k) * sb(b, k) for k in range(4))) & M32
    r[37] = ~(a ^ b) & M32
    r[38] = ((a & 0xFFFF) << 16) | (a >> 16)
    m = (a * b + ((c << 32) | c)) & (2**64 - 1)
    r[39] = (m >> 32) ^ (m & M32)
    return r


def test_integer_and_bit_instructions(d):
    mod = A.RawModule(code=INTS)
    rng = np.random.default_rng(4)
    n = 256
    a = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    c = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    a[:8] = [0, M32, 0x80000000, 1, M32, 0, 0x7FFFFFFF, 5]
    b[:8] = [0, M32, 0x7FFFFFFF, M32, 1, 0, 0x80000000, 5]
    c[:8] = [0, M32, 0x20, 0x1F1F, 0, 0x2020, 0x3F00, 5]
    po = d.zeros(40 * n, np.uint32)
    mod.get_function("ints")((2,), (128,), (d.up(a), d.up(b), d.up(c), po, np.int32(n)))
    ok()
    o = d.down(po, 40 * n, np.uint32).reshape(n, 40)
    for i in range(n):
        ref = _int_refs(int(a[i]), int(b[i]), int(c[i]))
        got = [int(v) for v in o[i]]
        bad = [(k, hex(got[k]), hex(ref[k])) for k in range(40) if got[k] != ref[k]]
        assert not bad, (i, hex(a[i]), hex(b[i]), hex(c[i]), bad)


# ------------------------------------------------------------------------------------------------
# conversions and floating point
# ------------------------------------------------------------------------------------------------
FLOATS = r"""
#define NOUT 24
extern "C" __global__ void floats(const float* X, const float* Y, const float* Z, const int* I, unsigned* O, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float x = X[i], y = Y[i], z = Z[i];
    const int k = I[i];
    unsigned* o = O + NOUT * i;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(o[0]) : "f"(x), "f"(y));
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(o[1]) : "f"(x), "f"(y));
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    float back;
    asm("cvt.f32.f16 %0, %1;" : "=f"(back) : "h"(h));
    o[2] = __float_as_uint(back);
    asm("cvt.rzi.s32.f32 %0, %1;" : "=r"(o[3]) : "f"(x * 1000.f));
    asm("cvt.rni.s32.f32 %0, %1;" : "=r"(o[4]) : "f"(x * 4.f));
    asm("cvt.rmi.s32.f32 %0, %1;" : "=r"(o[5]) : "f"(x * 1000.f));
    asm("cvt.rpi.u32.f32 %0, %1;" : "=r"(o[6]) : "f"(x * 1000.f));
    float f;
    asm("cvt.rn.f32.s32 %0, %1;" : "=f"(f) : "r"(k)); o[7] = __float_as_uint(f);
    asm("cvt.rz.f32.s32 %0, %1;" : "=f"(f) : "r"(k)); o[8] = __float_as_uint(f);
    asm("cvt.rm.f32.s32 %0, %1;" : "=f"(f) : "r"(k)); o[9] = __float_as_uint(f);
    asm("cvt.rp.f32.s32 %0, %1;" : "=f"(f) : "r"(k)); o[10] = __float_as_uint(f);
    asm("add.rz.f32 %0, %1, %2;" : "=f"(f) : "f"(x), "f"(y)); o[11] = __float_as_uint(f);
    asm("mul.rm.f32 %0, %1, %2;" : "=f"(f) : "f"(x), "f"(y)); o[12] = __float_as_uint(f);
    asm("fma.rn.f32 %0, %1, %2, %3;" : "=f"(f) : "f"(x), "f"(y), "f"(z)); o[13] = __float_as_uint(f);
    asm("fma.rp.f32 %0, %1, %2, %3;" : "=f"(f) : "f"(x), "f"(y), "f"(z)); o[14] = __float_as_uint(f);
    asm("div.rn.f32 %0, %1, %2;" : "=f"(f) : "f"(x), "f"(y)); o[15] = __float_as_uint(f);
    asm("sqrt.rn.f32 %0, %1;" : "=f"(f) : "f"(fabsf(x))); o[16] = __float_as_uint(f);
    asm("add.ftz.f32 %0, %1, %2;" : "=f"(f) : "f"(x * 1e-39f), "f"(0.0f)); o[17] = __float_as_uint(f);
    asm("min.f32 %0, %1, %2;" : "=f"(f) : "f"(x), "f"(__uint_as_float(0x7fc00000u))); o[18] = __float_as_uint(f);
    asm("max.f32 %0, %1, %2;" : "=f"(f) : "f"(x), "f"(y)); o[19] = __float_as_uint(f);
    asm("mov.b32 %0, 0f3F800000;\n\tadd.f32 %0, %0, %1;" : "=f"(f) : "f"(x)); o[20] = __float_as_uint(f);
    asm("neg.f32 %0, %1;" : "=f"(f) : "f"(x)); o[21] = __float_as_uint(f);
    asm("{ .reg .pred p; setp.gtu.f32 p, %1, %2; selp.b32 %0, 1, 0, p; }" : "=r"(o[22]) : "f"(x), "f"(y));
    double dd;
    asm("cvt.f64.f32 %0, %1;\n\tmul.rn.f64 %0, %0, %0;" : "=d"(dd) : "f"(x));
    asm("cvt.rz.f32.f64 %0, %1;" : "=f"(f) : "d"(dd)); o[23] = __float_as_uint(f);
}
"""


def _f32bits(v):
    return int(np.float32(v).view(np.uint32))


def _round_f32(x: Fraction, mode: str) -> int:
    """Bits of the float32 nearest to the exact x in a rounding mode (finite, normal range)."""
    if x == 0:
        return 0
    f = np.float32(float(x))
    lo = f if Fraction(float(f)) <= x else np.nextafter(f, np.float32(-np.inf))
    hi = lo if Fraction(float(lo)) == x else np.nextafter(lo, np.float32(np.inf))
    if lo == hi:
        return _f32bits(lo)
    if mode == "rm":
        r = lo
    elif mode == "rp":
        r = hi
    elif mode == "rz":
        r = lo if x > 0 else hi
    else:
        dl, dh = x - Fraction(float(lo)), Fraction(float(hi)) - x
        r = lo if dl < dh else hi if dh < dl else (lo if _f32bits(lo) % 2 == 0 else hi)
    return _f32bits(r)


def _bf16_rn(v):
    u = _f32bits(v)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF


def test_conversions_and_float_rounding(d):
    mod = A.RawModule(code=FLOATS)
    rng = np.random.default_rng(5)
    n = 128
    x = (rng.standard_normal(n) * 3).astype(np.float32)
    y = (rng.standard_normal(n) * 3).astype(np.float32)
    z = (rng.standard_normal(n) * 3).astype(np.float32)
    x[:4] = [0.125, 2.5, -2.5, 1000.0]
    k = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    k[:3] = [16777217, -16777219, 2**31 - 1]
    po = d.zeros(24 * n, np.uint32)
    mod.get_function("floats")((1,), (n,), (d.up(x), d.up(y), d.up(z), d.up(k), po, np.int32(n)))
    ok()
    o = d.down(po, 24 * n, np.uint32).reshape(n, 24)
    F = lambda v: Fraction(float(v))
    for i in range(n):
        xi, yi, zi, ki = x[i], y[i], z[i], int(k[i])
        h = lambda v: int(np.float16(v).view(np.uint16))
        ref = {
            0: (h(xi) << 16) | h(yi),
            1: (_bf16_rn(xi) << 16) | _bf16_rn(yi),
            2: _f32bits(np.float16(xi).astype(np.float32)),
            3: int(math.trunc(float(np.float32(xi * np.float32(1000))))) & M32,
            4: int(round(float(np.float32(xi * np.float32(4))))) & M32,
            5: math.floor(float(np.float32(xi * np.float32(1000)))) & M32,
            6: max(0, math.ceil(float(np.float32(xi * np.float32(1000))))),
            7: _round_f32(Fraction(ki), "rn"), 8: _round_f32(Fraction(ki), "rz"),
            9: _round_f32(Fraction(ki), "rm"), 10: _round_f32(Fraction(ki), "rp"),
            11: _round_f32(F(xi) + F(yi), "rz"), 12: _round_f32(F(xi) * F(yi), "rm"),
            13: _round_f32(F(xi) * F(yi) + F(zi), "rn"), 14: _round_f32(F(xi) * F(yi) + F(zi), "rp"),
            15: _round_f32(F(xi) / F(yi), "rn"),
            16: _f32bits(np.sqrt(np.abs(xi))),
            17: _f32bits(np.float32(0) if abs(np.float32(xi * np.float32(1e-39))) < np.finfo(np.float32).tiny
                         else np.float32(xi * np.float32(1e-39))),
            18: _f32bits(xi),
            19: _f32bits(max(xi, yi)),
            20: _f32bits(np.float32(1) + xi),
            21: _f32bits(xi) ^ 0x80000000,
            22: int(xi > yi),
            23: _round_f32(F(xi) * F(xi), "rz"),
        }
        for j, r in ref.items():
            assert int(o[i, j]) == r, (i, j, xi, yi, zi, ki, hex(int(o[i, j])), hex(r))


# ------------------------------------------------------------------------------------------------
# warp instructions
# ------------------------------------------------------------------------------------------------
WARP = r"""
__device__ __forceinline__ int warp_sum(int v) {
    for (int o = 16; o > 0; o >>= 1) {
        int t;
        asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(t) : "r"(v), "r"(o));
        v += t;
    }
    return v;
}
extern "C" __global__ void warp_ops(const int* in, int* out) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    const int v = in[t];
    int* o = out + 12 * t;
    o[0] = warp_sum(v);
    // inclusive scan in segments of 8 lanes: shfl.up with c = (32 - 8) << 8, and its predicate
    int s = v;
    for (int k = 1; k < 8; k <<= 1) {
        int u, ok;
        asm volatile("{ .reg .pred p; shfl.sync.up.b32 %0|p, %2, %3, %4, %5; selp.s32 %1, 1, 0, p; }"
                     : "=r"(u), "=r"(ok) : "r"(s), "r"(k), "r"(24 << 8), "r"(0xffffffffu));
        if (ok) s += u;
    }
    o[1] = s;
    asm volatile("shfl.sync.idx.b32 %0, %1, 3, 0x1f, 0xffffffff;" : "=r"(o[2]) : "r"(v));
    asm volatile("shfl.sync.down.b32 %0, %1, 5, 0x1f, 0xffffffff;" : "=r"(o[3]) : "r"(v));
    asm volatile("{ .reg .pred p; setp.gt.s32 p, %1, 0; vote.sync.ballot.b32 %0, p, 0xffffffff; }" : "=r"(o[4]) : "r"(v));
    asm volatile("{ .reg .pred p, q; setp.gt.s32 p, %1, -1000; vote.sync.all.pred q, p, 0xffffffff; selp.s32 %0, 1, 0, q; }"
                 : "=r"(o[5]) : "r"(v));
    asm volatile("{ .reg .pred p, q; setp.gt.s32 p, %1, 90; vote.sync.any.pred q, !p, 0xffffffff; selp.s32 %0, 1, 0, q; }"
                 : "=r"(o[6]) : "r"(v));
    asm volatile("match.any.sync.b32 %0, %1, 0xffffffff;" : "=r"(o[7]) : "r"(v & 3));
    asm volatile("redux.sync.add.u32 %0, %1, 0xffffffff;" : "=r"(o[8]) : "r"(v));
    asm volatile("redux.sync.min.s32 %0, %1, %2;" : "=r"(o[9]) : "r"(v), "r"(0xffffffffu));
    // width 16 with a lane mask of 16 (segment 1 reads segment 0 on a GPU), and a clamp of 7
    asm volatile("shfl.sync.bfly.b32 %0, %1, 16, 0x101f, 0xffffffff;" : "=r"(o[10]) : "r"(v));
    asm volatile("{ .reg .pred p; .reg .b32 r; shfl.sync.idx.b32 r|p, %1, %2, 7, 0xffffffff; "
                 "selp.b32 %0, r, -1, p; }" : "=r"(o[11]) : "r"(v), "r"(threadIdx.x * 5));
}
"""


def test_warp_shuffles_votes_and_reductions(d):
    mod = A.RawModule(code=WARP)
    rng = np.random.default_rng(6)
    n = 128
    v = rng.integers(-100, 100, n).astype(np.int32)
    po = d.zeros(12 * n, np.int32)
    mod.get_function("warp_ops")((2,), (64,), (d.up(v), po))
    ok()
    o = d.down(po, 12 * n, np.int32).reshape(n, 12)
    for t in range(n):
        w0, lane = t - t % 32, t % 32
        w = v[w0:w0 + 32]
        seg = v[t - t % 8:t + 1]
        assert o[t, 0] == w.sum()
        assert o[t, 1] == seg.sum()
        assert o[t, 2] == w[3]
        assert o[t, 3] == (w[lane + 5] if lane + 5 < 32 else v[t])
        assert u32(o[t, 4]) == sum(1 << j for j in range(32) if w[j] > 0)
        assert o[t, 5] == 1
        assert o[t, 6] == int(any(w <= 90))
        assert u32(o[t, 7]) == sum(1 << j for j in range(32) if (w[j] & 3) == (v[t] & 3))
        assert u32(o[t, 8]) == int(w.sum()) & M32
        assert o[t, 9] == w.min()
        # PTX ISA: bfly j = lane ^ 16, valid when j <= maxLane = (lane & 16) | 15
        j = lane ^ 16
        assert o[t, 10] == (w[j] if j <= ((lane & 16) | 15) else v[t])
        j = ((t % 64) * 5) & 31
        assert o[t, 11] == (w[j] if j <= 7 else -1)


# ------------------------------------------------------------------------------------------------
# refused instructions
# ------------------------------------------------------------------------------------------------
REFUSED = """extern "C" __global__ void k1(unsigned* p) {
    unsigned a, b, c, e;
    unsigned s = (unsigned)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(a), "=r"(b), "=r"(c), "=r"(e) : "r"(s));
    p[0] = a + b + c + e;
}
extern "C" __global__ void k2(float* p) {
    unsigned r;
    asm("testp.finite.f32 %0, %1;" : "=r"(r) : "f"(p[0]));
    p[1] = r;
}
extern "C" __global__ void k3(unsigned* p) {
    asm("addc.u32 %0, %0, %1;" : "+r"(p[0]) : "r"(p[1]));
}
extern "C" __global__ void k4(unsigned* p) {
    asm volatile("bar.sync 1, 64;");
}
"""


def test_unsupported_ptx_is_a_compile_error_naming_instruction_and_line():
    from aclnn_py.emulator import CompileException
    mod = A.RawModule(code=REFUSED)
    with pytest.raises(CompileException) as e:
        mod.get_function("k1")
    msg = str(e.value)
    lines = REFUSED.splitlines()
    for instr in ("ldmatrix.sync.aligned.m8n8.x4.shared.b16", "testp.finite.f32", "addc.u32", "bar.sync"):
        line = next(i + 1 for i, ln in enumerate(lines) if instr in ln)
        hit = [ln for ln in msg.splitlines() if f"inline PTX instruction '{instr}" in ln and f":{line}:" in ln]
        assert hit, (instr, line, msg)
    assert "carry chain split across asm statements" in msg, msg
    assert "note: inline PTX instruction 'testp.finite.f32' is not supported by the emulator" in msg, msg


def test_mma_ptx_is_refused_with_a_pointer_to_wmma():
    from aclnn_py.emulator import CompileException
    src = """extern "C" __global__ void k(float* d, const unsigned* a) {
    float c0 = 0, c1 = 0, c2 = 0, c3 = 0;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(a[4]), "r"(a[5]));
    d[0] = c0 + c1 + c2 + c3;
}"""
    with pytest.raises(CompileException) as e:
        A.RawModule(code=src).get_function("k")
    msg = str(e.value)
    assert "inline PTX instruction 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32'" in msg, msg
    assert "wmma" in msg and ":3:" in msg, msg


# ------------------------------------------------------------------------------------------------
# statement forms: __asm__ __volatile__, named operands, labels and branches, guards, register
# arrays, asm as the body of if/else, half arithmetic through the emulator's __hfma2 & co.
# ------------------------------------------------------------------------------------------------
FORMS = r"""
#include <cuda_fp16.h>
__device__ __forceinline__ unsigned pack_half2(float lo, float hi) {
    unsigned r;
    asm("{\n\t.reg .f16 low, high;\n\t"
        "cvt.rn.f16.f32 low, %1;\n\t"
        "cvt.rn.f16.f32 high, %2;\n\t"
        "mov.b32 %0, {low, high};\n\t}" : "=r"(r) : "f"(lo), "f"(hi));
    return r;
}
extern "C" __global__ void forms(const unsigned* in, unsigned* out) {
    const unsigned t = threadIdx.x, v = in[t];
    unsigned* o = out + 12 * t;
    // a loop in PTX: count the set bits one at a time (labels, @p bra, setp, %= unique labels)
    __asm__ __volatile__(
        "{\n\t.reg .pred p;\n\t.reg .b32 r<2>;\n\t"
        "mov.u32 r0, %[x];\n\tmov.u32 r1, 0;\n"
        "LOOP%=:\n\t"
        "setp.eq.u32 p, r0, 0;\n\t"
        "@p bra DONE%=;\n\t"
        "and.b32 %[cnt], r0, 1;\n\t"
        "add.u32 r1, r1, %[cnt];\n\t"
        "shr.u32 r0, r0, 1;\n\t"
        "bra LOOP%=;\n"
        "DONE%=:\n\t"
        "mov.u32 %[cnt], r1;\n\t}"
        : [cnt] "=&r"(o[0]) : [x] "r"(v));
    if (v & 1)
        asm("mov.u32 %0, 111;" : "=r"(o[1]));
    else
        asm("mov.u32 %0, 222;" : "=r"(o[1]));
    asm("{ .reg .pred p; setp.ne.u32 p, %1, 0; @!p mov.u32 %0, 5; @p mov.u32 %0, 6; }" : "=r"(o[2]) : "r"(v & 2));
    unsigned h2 = pack_half2((float)(v & 255) * 0.25f, -(float)(v >> 24));
    unsigned f;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(f) : "r"(h2), "r"(h2), "r"(0x3c003c00u));
    o[3] = h2;
    o[4] = f;
    unsigned short hs;
    asm("add.f16 %0, %1, %2;" : "=h"(hs) : "h"((unsigned short)h2), "h"((unsigned short)(h2 >> 16)));
    o[5] = hs;
    int sat;
    asm("cvt.rni.sat.s8.s32 %0, %1;" : "=r"(sat) : "r"((int)v >> 20));
    o[6] = sat;
    float rf;
    asm("cvt.rni.f32.f32 %0, %1;" : "=f"(rf) : "f"((float)(v & 0xffff) / 8.0f));
    o[7] = __float_as_uint(rf);
    asm volatile("griddepcontrol.wait;" ::: "memory");
    unsigned long long p64 = (unsigned long long)(in + t);
    unsigned lo32, hi32;
    asm("mov.b64 {%0, %1}, %2;" : "=r"(lo32), "=r"(hi32) : "l"(p64));
    o[8] = (lo32 == (unsigned)p64) && (hi32 == (unsigned)(p64 >> 32));
    asm("bfe.u32 %0, %1, 8, 8;\n\tshl.b32 %0, %0, 4;" : "=r"(o[9]) : "r"(v));
    asm("selp.b32 %0, %1, %2, 1;" : "=r"(o[10]) : "r"(v), "r"(~v));
    asm("{\n\t.reg .b64 t;\n\tmul.wide.s32 t, %1, -3;\n\tcvt.u32.u64 %0, t;\n\t}" : "=r"(o[11]) : "r"(v));
}
"""


def test_statement_forms_labels_guards_half(d):
    mod = A.RawModule(code=FORMS)
    v = np.random.default_rng(7).integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    v[:3] = [0, M32, 0x80000001]
    po = d.zeros(12 * 64, np.uint32)
    mod.get_function("forms")((1,), (64,), (d.up(v), po))
    ok()
    o = d.down(po, 12 * 64, np.uint32).reshape(64, 12)
    hb = lambda x: int(np.float16(x).view(np.uint16))
    for t in range(64):
        x = int(v[t])
        assert o[t, 0] == bin(x).count("1")
        assert o[t, 1] == (111 if x & 1 else 222)
        assert o[t, 2] == (6 if x & 2 else 5)
        lo, hi = np.float16((x & 255) * 0.25), np.float16(-float(x >> 24))
        assert o[t, 3] == hb(lo) | (hb(hi) << 16)
        fl = np.float16(np.float32(lo) * np.float32(lo) + 1)          # exact in float, then one rounding
        fh = np.float16(np.float32(hi) * np.float32(hi) + 1)
        assert o[t, 4] == hb(fl) | (hb(fh) << 16), (t, hex(o[t, 4]))
        assert o[t, 5] == hb(np.float32(lo) + np.float32(hi))
        assert u32(o[t, 6]) == u32(max(-128, min(127, _s32(x) >> 20)))
        assert o[t, 7] == _f32bits(np.float32(round((x & 0xFFFF) / 8.0)))
        assert o[t, 8] == 1
        assert o[t, 9] == ((x >> 8) & 255) << 4
        assert o[t, 10] == x
        assert o[t, 11] == (_s32(x) * -3) & M32


# guarded loads and cp.async as CUTLASS / FasterTransformer / TVM write them
GUARDED = r"""
struct alignas(16) U4 { unsigned x, y, z, w; };
__device__ __forceinline__ void global_load_u32(unsigned& data, const void* ptr, bool pred_guard) {
    asm volatile("{\n"
                 "  .reg .pred p;\n"
                 "  setp.ne.b32 p, %2, 0;\n"
                 "  mov.b32 %0, %3;\n"
                 "  @p ld.global.L2::128B.u32 %0, [%1];\n"
                 "}\n"
                 : "=r"(data)
                 : "l"(ptr), "r"((int)pred_guard), "r"(data));
}
__device__ __forceinline__ void loadg(unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3, const void* addr, bool g) {
    asm volatile(
        "{\n"
        "   .reg .pred p;\n"
        "   setp.ne.b32 p, %5, 0;\n"
        "   @p ld.global.v4.u32 {%0, %1, %2, %3}, [%4];\n"
        "   @!p mov.u32 %0, %6;\n"
        "   @!p mov.u32 %1, %6;\n"
        "   @!p mov.u32 %2, %6;\n"
        "   @!p mov.u32 %3, %6;\n"
        "}\n"
        : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
        : "l"(addr), "r"((int)g), "n"(0));
}
__device__ __forceinline__ void ldg16_nc(unsigned short& reg, const void* ptr, bool guard) {
    asm volatile("{.reg .pred p;\n"
                 " setp.ne.b32 p, %2, 0;\n"
                 " @p ld.global.nc.b16 %0, [%1];\n"
                 "}" : "=h"(reg) : "l"(ptr), "r"((int)guard));
}
template <int SizeInBytes>
__device__ __forceinline__ void cp_async_pred(void* smem_ptr, const void* global_ptr, bool pred_guard) {
    unsigned smem_int_ptr = (unsigned)__cvta_generic_to_shared(smem_ptr);
    asm volatile("{\n"
                 "  .reg .pred p;\n"
                 "  setp.ne.b32 p, %0, 0;\n"
                 "  @p cp.async.ca.shared.global [%1], [%2], %3;\n"
                 "}\n" ::"r"((int)pred_guard), "r"(smem_int_ptr), "l"(global_ptr), "n"(SizeInBytes));
}
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }
extern "C" __global__ void guarded(const unsigned* in, unsigned* out) {
    __shared__ U4 sm[32];
    const int t = threadIdx.x;
    unsigned d = 77;
    global_load_u32(d, in + t, t % 3 != 0);
    unsigned a, b, c, e;
    loadg(a, b, c, e, in + 4 * t, t % 2 == 0);
    unsigned short h = 5;
    ldg16_nc(h, (const unsigned short*)in + t, t < 16);
    sm[t] = U4{1u, 2u, 3u, 4u};
    __syncthreads();
    unsigned long long pol;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
    cp_async_pred<16>(&sm[t], in + 4 * (31 - t), t % 4 != 1);
    asm volatile("cp.async.commit_group;\n" ::);
    cp_async_wait<0>();
    __syncthreads();
    unsigned* o = out + 9 * t;
    o[0] = d; o[1] = a; o[2] = b; o[3] = c; o[4] = e; o[5] = h;
    o[6] = sm[t].x; o[7] = sm[t].w; o[8] = (unsigned)pol;
}
"""


def test_guarded_loads_and_predicated_cp_async(d):
    mod = A.RawModule(code=GUARDED)
    x = (np.arange(200, dtype=np.uint64) * 2654435761 % 2**32).astype(np.uint32)
    po = d.zeros(9 * 32, np.uint32)
    mod.get_function("guarded")((1,), (32,), (d.up(x), po))
    ok()
    o = d.down(po, 9 * 32, np.uint32).reshape(32, 9)
    xh = x.view(np.uint16)
    for t in range(32):
        assert o[t, 0] == (x[t] if t % 3 else 77)
        assert list(o[t, 1:5]) == (list(x[4 * t:4 * t + 4]) if t % 2 == 0 else [0] * 4)
        if t < 16:      # (a skipped "=h" output is undefined, on a GPU too)
            assert o[t, 5] == xh[t]
        if t % 4 != 1:
            assert o[t, 6] == x[4 * (31 - t)] and o[t, 7] == x[4 * (31 - t) + 3]
        else:
            assert o[t, 6] == 1 and o[t, 7] == 4
        assert o[t, 8] == 0


def test_more_refusals_name_the_instruction():
    from aclnn_py.emulator import CompileException
    src = """extern "C" __global__ void k(unsigned* p) {
    unsigned r;
    asm("mov.u32 %0, %%total_smem_size;" : "=r"(r));
    p[0] = r;
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(p[1]), "r"(32));
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(p[1]), "l"(p), "r"(0), "r"(0), "r"(p[2]) : "memory");
    asm volatile("st.async.b32 [%0], %1;" :: "r"(p[1]), "r"(1));
}"""
    with pytest.raises(CompileException) as e:
        A.RawModule(code=src).get_function("k")
    msg = str(e.value)
    for instr, line, extra in (("mov.u32", 3, "%total_smem_size"), ("mbarrier.init.shared.b64", 5, "mbarrier"),
                               ("cp.async.bulk.tensor.2d", 6, "TMA"), ("st.async.b32", 8, "")):
        hit = [ln for ln in msg.splitlines() if f"inline PTX instruction '{instr}" in ln and f":{line}:" in ln
               and extra in ln]
        assert hit, (instr, line, msg)


# multiword multiply with mad.lo.cc / madc.hi chains, CUTLASS's asm cvta path, ld.shared.v4,
# bar.sync with an "n" operand
MULTI = r"""
__device__ __forceinline__ unsigned smem_u32(const void* ptr) {
    unsigned r;
    asm("{ .reg .u64 u64addr; cvta.to.shared.u64 u64addr, %1; cvt.u32.u64 %0, u64addr; }" : "=r"(r) : "l"(ptr));
    return r;
}
// (a1:a0) * b -> (r2:r1:r0)
__device__ __forceinline__ void mul64x32(unsigned a0, unsigned a1, unsigned b, unsigned& r0, unsigned& r1, unsigned& r2) {
    asm("mul.lo.u32 %0, %3, %5;\n\t"
        "mul.hi.u32 %1, %3, %5;\n\t"
        "mad.lo.cc.u32 %1, %4, %5, %1;\n\t"
        "madc.hi.u32 %2, %4, %5, 0;"
        : "=r"(r0), "=r"(r1), "=r"(r2) : "r"(a0), "r"(a1), "r"(b));
}
extern "C" __global__ void multi(const unsigned* in, unsigned* out) {
    __shared__ __align__(16) unsigned tile[4 * 64];
    const unsigned t = threadIdx.x;
    for (int k = 0; k < 4; ++k) tile[4 * t + k] = in[4 * t + k];
    asm volatile("bar.sync %0;" :: "n"(0) : "memory");
    unsigned v0, v1, v2, v3;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v0), "=r"(v1), "=r"(v2), "=r"(v3)
                 : "r"(smem_u32(&tile[4 * (63 - t)])));
    unsigned* o = out + 7 * t;
    mul64x32(v0, v1, v2, o[0], o[1], o[2]);
    o[3] = v3;
    unsigned short h = 0x3c00;
    unsigned p;
    asm("mov.b32 %0, {%1, %1};" : "=r"(p) : "h"(h));
    o[4] = p;
    unsigned long long w;
    asm("mov.b64 %0, {%1, %2};" : "=l"(w) : "r"(v0), "r"(v3));
    o[5] = (unsigned)(w >> 32);
    __syncthreads();
    asm("st.shared.v2.u32 [%0], {%1, %2};" :: "r"(smem_u32(&tile[4 * t])), "r"(v3), "r"(v0) : "memory");
    o[6] = tile[4 * t] ^ tile[4 * t + 1];
}
"""


def test_multiword_mad_chain_and_shared_vectors(d):
    mod = A.RawModule(code=MULTI)
    x = np.random.default_rng(8).integers(0, 2**32, 4 * 64, dtype=np.uint64).astype(np.uint32)
    x[:4] = [M32, M32, M32, 7]
    po = d.zeros(7 * 64, np.uint32)
    mod.get_function("multi")((1,), (64,), (d.up(x), po))
    ok()
    o = d.down(po, 7 * 64, np.uint32).reshape(64, 7)
    for t in range(64):
        v = x[4 * (63 - t):4 * (63 - t) + 4].astype(np.int64)
        prod = (int(v[0]) | (int(v[1]) << 32)) * int(v[2])
        assert [int(o[t, k]) for k in range(3)] == [prod & M32, (prod >> 32) & M32, prod >> 64], t
        assert o[t, 3] == v[3] and o[t, 4] == 0x3C003C00 and o[t, 5] == v[3]
        assert o[t, 6] == v[3] ^ v[0]


def test_rewrite_keeps_lines_literals_and_other_names():
    """The rewrite (on preprocessed text, where cuda_emu.h has renamed `asm`) keeps the statement's
    newlines, leaves string literals and other identifiers alone, and reads __asm__ __volatile__."""
    from aclnn_py.emulator.ptx import rewrite_inline_asm
    src = ('int my_asm = 1; const char* s = "asm(\\"x\\")";\n'
           '__emu_inline_asm volatile("mov.u32 %0, %%laneid;"\n'
           '    : "=r"(v));\n'
           '__asm__ __volatile__("membar.gl;" ::: "memory"); int z;\n')
    out = rewrite_inline_asm(src)
    assert out.count("\n") == src.count("\n")
    assert out.startswith('int my_asm = 1; const char* s = "asm(\\"x\\")";\n')
    assert "::__emu::ptx::laneid()" in out and "__threadfence();" in out and out.rstrip().endswith("int z;")
    assert "__emu_inline_asm" not in out and "__asm__" not in out


def test_pre_volta_shfl_without_sync(d):
    """shfl.down.b32 / vote.ballot.b32 without .sync (sm_6x code): the warp's active lanes, as the
    emulator's pre-Volta __shfl_down; for sm_70 and later a compile error, as ptxas gives."""
    from aclnn_py.emulator import CompileException
    src = r"""extern "C" __global__ void k(int* p) {
    int v = threadIdx.x, r;
    unsigned b;
    asm("shfl.down.b32 %0, %1, 4, 0x1f;" : "=r"(r) : "r"(v));
    asm("{ .reg .pred q; setp.lt.s32 q, %1, 8; vote.ballot.b32 %0, q; }" : "=r"(b) : "r"(v));
    p[threadIdx.x] = r;
    p[32 + threadIdx.x] = (int)b;
}"""
    po = d.zeros(64, np.int32)
    A.RawModule(code=src, options=("-arch=sm_60",)).get_function("k")((1,), (32,), (po,))
    ok()
    o = d.down(po, 64, np.int32)
    assert list(o[:32]) == [t + 4 if t < 28 else t for t in range(32)]
    assert (o[32:] == 0xFF).all()
    with pytest.raises(CompileException) as e:
        A.RawModule(code=src).get_function("k")
    assert "inline PTX instruction 'shfl.down.b32'" in str(e.value) and ":4:" in str(e.value), str(e.value)
