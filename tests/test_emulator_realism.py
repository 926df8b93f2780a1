"""Issue 13's realism items on the emulator: cooperative groups (tiles, coalesced and labeled
groups, cg::reduce, grid.sync with cooperative launches), __constant__ memory with get_global,
cuComplex.h, every extern-shared spelling, partial-mask shuffles (legal ones match a GPU, undefined
ones are reported), __CUDA_ARCH__, and one CompileException for compile errors."""
from __future__ import annotations

import ctypes
import re
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import aclnn_py as A
from aclnn_py import acl, emulator
from aclnn_py.status import AclError

SRC = (Path(__file__).parent / "emulator_kernels" / "cg" / "realism.cu").read_text()
NAMES = ["cg_block_sum<32>", "cg_block_sum<16>", "cg_block_sum<4>"]
BIG_TILES = [64, 128, 256]

pytestmark = pytest.mark.skipif(
    acl._state.state.initialized and acl._state.state.backend.name != "host", reason="emulator behaviour")


@pytest.fixture(scope="module")
def mod():
    return A.RawModule(code=SRC, options=("-std=c++17",),
                       name_expressions=NAMES + [f"cg_big_tile_collectives<{t}>" for t in BIG_TILES])


@pytest.mark.parametrize("name", NAMES)
def test_cg_tile_reduce_block_sum(mod, d, name):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(5000).astype(np.float32)
    px, po = d.up(x), d.zeros(3, np.float32)
    mod.get_function(name)((3,), (256,), (px, po, np.int32(x.size)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    got = d.down(po, 3, np.float32).astype(np.float64).sum()
    np.testing.assert_allclose(got, x.astype(np.float64).sum(), rtol=1e-5, atol=1e-3)


def test_cg_tile_collectives(mod, d):
    rng = np.random.default_rng(2)
    x = rng.integers(0, 200, 65).astype(np.int32)
    px = d.up(x)
    mx, mn, bal, aa = (d.zeros(8, np.int32), d.zeros(8, np.int32), d.zeros(8, np.uint32), d.zeros(8, np.int32))
    mod.get_function("cg_tile_ops")((1,), (64,), (px, mx, mn, bal, aa))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    t = x[:64].reshape(8, 8)
    np.testing.assert_array_equal(d.down(mx, 8, np.int32), t.max(1))
    np.testing.assert_array_equal(d.down(mn, 8, np.int32), t.min(1))
    want_bal = [sum(1 << j for j in range(8) if r[j] % 2 == 0) for r in t]
    np.testing.assert_array_equal(d.down(bal, 8, np.uint32), want_bal)
    want_aa = [2 * int((r > 100).any()) + int((r >= 0).all()) + 4 for r in t]
    np.testing.assert_array_equal(d.down(aa, 8, np.int32), want_aa)


def test_cg_tiles_larger_than_a_warp(mod, d):
    po = d.zeros(256, np.int32)
    mod.get_function("cg_big_tile")((1,), (256,), (po,))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    i = np.arange(256)
    want = (i // 64) * 64 + (63 - i % 64) + 1000 * (i // 64)
    np.testing.assert_array_equal(d.down(po, 256, np.int32), want)


@pytest.mark.parametrize("tile", BIG_TILES)
def test_cg_collectives_on_tiles_larger_than_a_warp(mod, d, tile):
    rng = np.random.default_rng(tile)
    x = rng.integers(0, 50, 256).astype(np.int32)
    x[tile // 2] = 7                                   # only the first tile holds a 7
    x[x == 7] = 8
    x[tile // 2] = 7
    x[-1] = -1                                         # the last tile holds a negative
    f = rng.standard_normal(256).astype(np.float32)
    outs = [d.zeros(256, t) for t in (np.int32, np.float32, np.int32, np.int32, np.int32, np.int32)]
    mod.get_function(f"cg_big_tile_collectives<{tile}>")((1,), (256,), (d.up(x), d.up(f), *outs))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    isum, fmax, incl, excl, sh, anyall = (d.down(p, 256, t) for p, t in zip(outs, (np.int32, np.float32, np.int32,
                                                                                    np.int32, np.int32, np.int32)))
    xt, ft = x.reshape(-1, tile), f.reshape(-1, tile)
    rep = lambda v: np.repeat(v, tile)                  # noqa: E731  (every member gets the tile's value)
    np.testing.assert_array_equal(isum, rep(xt.sum(1)))
    np.testing.assert_array_equal(fmax, rep(ft.max(1)))
    np.testing.assert_array_equal(incl, np.cumsum(xt, 1).ravel())
    np.testing.assert_array_equal(excl, (np.cumsum(xt, 1) - xt).ravel())
    np.testing.assert_array_equal(sh, np.roll(xt, -5, 1).ravel())
    np.testing.assert_array_equal(anyall, rep(2 * (xt == 7).any(1) + (xt >= 0).all(1)))


def test_coalesced_threads_warp_aggregated_atomics(mod, d):
    rng = np.random.default_rng(3)
    src = rng.integers(-5, 6, 1000).astype(np.int32)
    ps, pd, pn = d.up(src), d.zeros(1000, np.int32), d.zeros(1, np.int32)
    mod.get_function("filter_k")((4,), (256,), (pd, pn, ps, np.int32(src.size)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    n = int(d.down(pn, 1, np.int32)[0])
    pos = src[src > 0]
    assert n == pos.size
    np.testing.assert_array_equal(np.sort(d.down(pd, 1000, np.int32)[:n]), np.sort(pos))


def test_labeled_partition(mod, d):
    rng = np.random.default_rng(4)
    labels = rng.integers(0, 3, 32).astype(np.int32)
    vals = rng.integers(0, 10, 32).astype(np.int32)
    po = d.zeros(32, np.int32)
    mod.get_function("labeled_sums")((1,), (32,), (d.up(labels), d.up(vals), po))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    want = [vals[labels == l].sum() * 100 + (labels == l).sum() for l in labels]
    np.testing.assert_array_equal(d.down(po, 32, np.int32), want)


def test_grid_sync_with_a_cooperative_launch(d):
    k = A.RawKernel(SRC, "grid_two_phase", options=("-std=c++17",), enable_cooperative_groups=True)
    n = 3000
    pb, po = d.zeros(n, np.float32), d.zeros(n, np.float32)
    k((6,), (128,), (pb, po, np.int32(n)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(po, n, np.float32), np.full(n, n - 1, np.float32))


def test_grid_sync_without_a_cooperative_launch_is_an_error(mod, d):
    pb, po = d.zeros(64, np.float32), d.zeros(64, np.float32)
    from aclnn_py.status import AclError
    mod.get_function("grid_two_phase")((2,), (32,), (pb, po, np.int32(64)))
    assert acl.rt.synchronize_device() == AclError.ACL_ERROR_RT_AICORE_EXCEPTION
    assert "enable_cooperative_groups" in acl.get_recent_err_msg()


def test_cooperative_grid_limit_like_cupy(d):
    k = A.RawKernel(SRC, "grid_two_phase", options=("-std=c++17",), enable_cooperative_groups=True)
    limit = emulator.cooperative_max_blocks(256)
    pb, po = d.zeros(4096, np.float32), d.zeros(4096, np.float32)
    with pytest.raises(ValueError, match="exceeds the limit"):
        k((limit, 2), (256,), (pb, po, np.int32(4096)))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        k((limit + 5,), (256,), (pb, po, np.int32(4096)))   # 1-D: reduced with a warning, as CuPy does
    assert any("reduced" in str(x.message) for x in w)
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(po, 4096, np.float32), np.full(4096, 4095, np.float32))


def test_constant_memory_set_from_the_host(d):
    mod = A.RawModule(code=SRC, options=("-std=c++17",), name_expressions=NAMES)
    g = mod.get_global("c_scale")
    assert g.size == 16 and int(g) == g.ptr
    scale = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    g.copy_from_host(scale.ctypes.data, scale.nbytes)
    cnt = mod.get_global("d_counter")
    cnt.memset(0, 4)
    x = np.arange(10, dtype=np.float32)
    px, py = d.up(x), d.zeros(10, np.float32)
    mod.get_function("use_constants")((1,), (32,), (px, py, np.int32(10)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(py, 10, np.float32), x * scale[np.arange(10) % 4])
    back = np.zeros(1, np.int32)
    cnt.copy_to_host(back.ctypes.data, 4)
    assert back[0] == 1
    np.testing.assert_array_equal(g.as_numpy(np.float32), scale)
    with pytest.raises(ValueError):
        g.copy_from_host(scale.ctypes.data, 32)   # past the variable
    with pytest.raises(LookupError):
        mod.get_global("no_such_symbol")


def test_name_expressions_may_name_variables_like_cupy(d):
    """CuPy's way to reach a static or namespaced __device__ variable: a name expression, then
    get_global. It used to break the build (every name expression was taken for a kernel), and a
    static variable that only kernels write was not kept at all."""
    code = r"""
static __device__ float out[4];
namespace ns { __device__ int hits; }
__constant__ float scale;
extern "C" __global__ void k() { out[threadIdx.x] = (threadIdx.x + 1.f) * scale; atomicAdd(&ns::hits, 1); }
"""
    m = A.RawModule(code=code, name_expressions=["out", "ns::hits", "&scale"])
    a = np.array([3], np.float32)
    m.get_global("scale").copy_from_host(a.ctypes.data, 4)
    m.get_function("k")((1,), (4,), ())
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    o, h = np.zeros(4, np.float32), np.zeros(1, np.int32)
    g = m.get_global("out")
    assert g.size == 16
    g.copy_to_host(o.ctypes.data, 16)
    m.get_global("ns::hits").copy_to_host(h.ctypes.data, 4)
    np.testing.assert_array_equal(o, [3, 6, 9, 12])
    assert h[0] == 4
    with pytest.raises(LookupError, match="variable"):
        m.module.get_function("out")


def test_cucomplex(mod, d):
    rng = np.random.default_rng(5)
    n = 100
    a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    b = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    pc, pab = d.zeros(n, np.complex64), d.zeros(n, np.float32)
    mod.get_function("cmul")((1,), (128,), (d.up(a), d.up(b), pc, pab, np.int32(n)))
    az, bz = a.astype(np.complex128), b.astype(np.complex128)
    pz = d.zeros(n, np.complex128)
    mod.get_function("zmul")((1,), (128,), (d.up(az), d.up(bz), pz, np.int32(n)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_allclose(d.down(pc, n, np.complex64), a, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d.down(pab, n, np.float32), np.abs(a * b), rtol=1e-5)
    np.testing.assert_allclose(d.down(pz, n, np.complex128), az * bz + np.conj(az), rtol=1e-13)


@pytest.mark.parametrize("k", ["ext_shared_1", "ext_shared_2", "ext_shared_3", "ext_shared_4"])
def test_extern_shared_spellings(mod, d, k):
    po = d.zeros(64, np.float32)
    mod.get_function(k)((1,), (64,), (po,), shared_mem=64 * 4)
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(po, 64, np.float32), np.arange(63, -1, -1, dtype=np.float32))


SHARED_ALIGNAS = r"""
// alignas after __shared__ (nvcc accepts it; cuda-samples' globalToShmemAsyncCopy spells it so)
extern "C" __global__ void shared_alignas(float* out, unsigned long long* misalign) {
    __shared__ alignas(128) float s[64];
    static __shared__ alignas(alignof(float4)) float t[64];
    extern __shared__ alignas(16) float dyn[];
    s[threadIdx.x] = threadIdx.x;
    t[threadIdx.x] = 2 * threadIdx.x;
    dyn[threadIdx.x] = 3 * threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[63 - threadIdx.x] + t[63 - threadIdx.x] + dyn[63 - threadIdx.x];
    if (threadIdx.x == 0)
        *misalign = reinterpret_cast<unsigned long long>(s) % 128 + reinterpret_cast<unsigned long long>(t) % 16;
}
"""


def test_shared_alignas_after_the_qualifier(d):
    """It was g++'s "standard attributes in middle of decl-specifiers" (``__shared__`` reads
    ``thread_local`` on the emulator); the alignment must hold too."""
    k = A.RawModule(code=SHARED_ALIGNAS).get_function("shared_alignas")
    po, pm = d.zeros(64, np.float32), d.zeros(1, np.uint64)
    k((1,), (64,), (po, pm), shared_mem=64 * 4)
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(po, 64, np.float32), 6 * np.arange(63, -1, -1, dtype=np.float32))
    assert d.down(pm, 1, np.uint64)[0] == 0


STATIC_SHARED_ALIGN = r"""
__shared__ char pad0[3];
extern "C" __global__ void static_shared_align(const float* in, float* out, unsigned long long* addr) {
  __shared__ char pad1[5];
  __shared__ float tile[8][36];   // float4 loads through a cast, as llm.c's matmul_forward_kernel4
  __shared__ float c[7];
  pad0[threadIdx.x % 3] = 1; pad1[threadIdx.x % 5] = 1;
  for (int i = threadIdx.x; i < 8 * 36; i += blockDim.x) tile[i / 36][i % 36] = in[i];
  c[threadIdx.x % 7] = 0.f;
  __syncthreads();
  const int r = threadIdx.x / 8, q = threadIdx.x % 8;
  const float4 v = *reinterpret_cast<const float4*>(&tile[r][4 * q]);
  out[threadIdx.x] = v.x + 2.f * v.y + 3.f * v.z + 4.f * v.w;
  if (threadIdx.x == 0) {
    addr[0] = reinterpret_cast<unsigned long long>(&tile[0][0]);
    addr[1] = reinterpret_cast<unsigned long long>(&c[0]);
    addr[2] = reinterpret_cast<unsigned long long>(&pad0[0]);
    addr[3] = reinterpret_cast<unsigned long long>(&pad1[0]);
  }
}
"""


def test_static_shared_arrays_are_16_byte_aligned(d):
    """A GPU lays static ``__shared__`` arrays out 16-byte aligned in practice, and kernels load float4s
    from float arrays through a cast (llm.c matmul_forward_kernel4). On the emulator they got their
    element type's alignment (a float array at an address = 4 mod 16): g++'s aligned SSE load of such a
    cast faulted, reported as an illegal read at 0x0."""
    k = A.RawModule(code=STATIC_SHARED_ALIGN).get_function("static_shared_align")
    x = np.random.default_rng(41).random(8 * 36, dtype=np.float32)
    po, pa = d.zeros(64, np.float32), d.zeros(4, np.uint64)
    k((1,), (64,), (d.up(x), po, pa))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    t = x.reshape(8, 36)[:, :32].reshape(8, 8, 4)
    exp = (t[..., 0] + np.float32(2) * t[..., 1] + np.float32(3) * t[..., 2] + np.float32(4) * t[..., 3]).reshape(64)
    np.testing.assert_array_equal(d.down(po, 64, np.float32), exp)
    assert [int(a) % 16 for a in d.down(pa, 4, np.uint64)] == [0, 0, 0, 0]


def test_partial_mask_shuffle_matches_a_gpu(mod, d):
    x = np.arange(1, 33, dtype=np.int32)
    po = d.zeros(32, np.int32)
    mod.get_function("shfl_partial_ok")((1,), (32,), (d.up(x), po))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    got = d.down(po, 32, np.int32)
    assert got[0] == x[:16].sum()          # lane 0 of the 16-lane segment has the segment's sum
    np.testing.assert_array_equal(got[16:], x[16:])


def test_shuffle_from_a_live_lane_outside_the_mask_is_reported(mod, d):
    """CUDA's reduce7 pattern: the GPU returns an unsynchronised register; the emulator must not
    invent a number (it used to return the caller's own value: 4x the right sum)."""
    from aclnn_py.status import AclError
    po = d.zeros(32, np.int32)
    mod.get_function("shfl_outside_mask")((1,), (32,), (d.up(np.arange(32, dtype=np.int32)), po))
    assert acl.rt.synchronize_device() == AclError.ACL_ERROR_RT_AICORE_EXCEPTION
    msg = acl.get_recent_err_msg()
    assert "shfl_outside_mask" in msg and "not named in the mask" in msg and "0x000000ff" in msg


@pytest.mark.parametrize("opts,want", [(("-std=c++17",), 800), (("-std=c++17", "-arch=sm_90"), 900),
                                       (("--gpu-architecture=compute_75",), -750), (("-arch", "sm_60"), -600)])
def test_cuda_arch_follows_the_target(d, opts, want):
    mod = A.RawModule(code=SRC, options=opts, name_expressions=NAMES)
    po = d.zeros(1, np.int32)
    mod.get_function("arch_value")((1,), (1,), (po,))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    assert d.down(po, 1, np.int32)[0] == want


@pytest.mark.parametrize("src,needle", [
    ('extern "C" __global__ void k(int* p) {\n  p[0] = undeclared_thing;\n}', r"broken\.cu:2"),
    ('extern "C" __global__ void k(int* p) { p[0] = 1 }', r"broken\.cu:1"),
    ('#include <does_not_exist.h>\nextern "C" __global__ void k(int* p) {}', r"does_not_exist"),
])
def test_compile_errors_are_one_exception_with_the_log(src, needle):
    import re
    with pytest.raises(emulator.CompileException) as ei:
        emulator.compile_module(src, filename="broken.cu")
    e = ei.value
    assert re.search(needle, e.get_message()) and re.search(needle, str(e))
    assert e.source == src and e.name == "broken.cu"
    assert A.raw.CompileException is emulator.CompileException


def test_forceinline_is_inlined_and_a_recursive_one_still_builds(d):
    """__forceinline__ is g++'s always_inline (CUDA's meaning); a function g++ cannot inline (a
    non-tail recursion, which nvcc compiles with a warning) makes the loader build the module again
    with __forceinline__ as a plain inline, never a compile error."""
    code = r'''
__device__ __forceinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__device__ __forceinline__ float twice(float v) { return 2.0f * v; }
extern "C" __global__ void k(int* out, float* f) {
    out[threadIdx.x] = fib(threadIdx.x);
    f[threadIdx.x] = twice(static_cast<float>(threadIdx.x));
}
'''
    fn = A.RawModule(code=code).get_function("k")
    out, f = d.zeros(10, np.int32), d.zeros(10, np.float32)
    fn((1,), (10,), (out, f))
    assert acl.rt.synchronize_device() == 0
    np.testing.assert_array_equal(d.down(out, 10, np.int32), [0, 1, 1, 2, 3, 5, 8, 13, 21, 34])
    np.testing.assert_array_equal(d.down(f, 10, np.float32), 2.0 * np.arange(10, dtype=np.float32))


def test_user_names_the_emulator_must_not_take(d):
    """Names CUDA leaves to the user: a parameter called ``dim3`` (blockDim must still work in its
    scope) and a user ``lerp`` (llm.c's adamw; g++'s <math.h> would add C++20's std::lerp globally)."""
    code = r'''
__device__ inline float lerp(float start, float end, float weight) {
    return fma(weight, end, fma(-weight, start, start));
}
extern "C" __global__ void k(float* out, int dim1, int dim3) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < dim1 * dim3) out[idx] = lerp(1.0f, 3.0f, 0.25f) + idx + gridDim.x;
}
'''
    out = d.zeros(8, np.float32)
    A.RawModule(code=code).get_function("k")((1,), (8,), (out, np.int32(2), np.int32(3)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(out, 8, np.float32), [2.5 + i if i < 6 else 0 for i in range(8)])


WARP_SYNC = r'''
// M. Harris, "Optimizing Parallel Reduction in CUDA" (reduce6): the last warp without __syncwarp
template <unsigned int blockSize>
__device__ void warpReduce(volatile int* sdata, unsigned int tid) {
    if (blockSize >= 64) sdata[tid] += sdata[tid + 32];
    if (blockSize >= 32) sdata[tid] += sdata[tid + 16];
    if (blockSize >= 16) sdata[tid] += sdata[tid + 8];
    if (blockSize >= 8) sdata[tid] += sdata[tid + 4];
    if (blockSize >= 4) sdata[tid] += sdata[tid + 2];
    if (blockSize >= 2) sdata[tid] += sdata[tid + 1];
}
template <unsigned int blockSize>
__global__ void reduce6(const int* g_idata, int* g_odata, unsigned int n) {
    extern __shared__ int sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + tid;
    unsigned int gridSize = blockSize * 2 * gridDim.x;
    sdata[tid] = 0;
    while (i < n) { sdata[tid] += g_idata[i] + (i + blockSize < n ? g_idata[i + blockSize] : 0); i += gridSize; }
    __syncthreads();
    if (blockSize >= 128) { if (tid < 64) { sdata[tid] += sdata[tid + 64]; } __syncthreads(); }
    if (tid < 32) warpReduce<blockSize>(sdata, tid);
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
// the older cuda-samples form: a local volatile pointer, `mySum` kept in a register
extern "C" __global__ void reduce_samples(const float* x, float* out) {
    __shared__ float sdata[128];
    unsigned int tid = threadIdx.x;
    float mySum = x[blockIdx.x * 128 + tid];
    sdata[tid] = mySum;
    __syncthreads();
    if (tid < 64) sdata[tid] = mySum = mySum + sdata[tid + 64];
    __syncthreads();
    if (tid < 32) {
        volatile float* smem = sdata;
        smem[tid] = mySum = mySum + smem[tid + 32];
        smem[tid] = mySum = mySum + smem[tid + 16];
        smem[tid] = mySum = mySum + smem[tid + 8];
        smem[tid] = mySum = mySum + smem[tid + 4];
        smem[tid] = mySum = mySum + smem[tid + 2];
        smem[tid] = mySum = mySum + smem[tid + 1];
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}
// other spellings: a cast, `T volatile*`, reinterpret_cast, a prefix scan over one warp
extern "C" __global__ void warp_scan_spellings(const int* x, int* scan, int* total) {
    __shared__ int s[64];
    const int lane = threadIdx.x;
    s[lane] = 0;
    s[lane + 32] = x[lane];
    int* base = s + 32;
    for (int off = 1; off < 32; off *= 2)
        ((volatile int*)base)[lane] += ((volatile int*)base)[lane - off];   // Hillis-Steele, lockstep
    int volatile* v = base;
    scan[lane] = v[lane];
    volatile int* r = reinterpret_cast<volatile int*>(s);
    r[lane] = v[31];
    if (lane == 0) total[0] = r[lane] + r[31] - r[0];
}
'''


def test_implicit_warp_synchronous_code_sees_lockstep_lanes(d):
    """Warp-synchronous code through volatile pointers (no __syncwarp) gives what a converged warp
    gives: every lane's loads of a statement happen before any lane's store. Run lane after lane, the
    reductions below summed 4x too little (silently)."""
    mod = A.RawModule(code=WARP_SYNC, name_expressions=["reduce6<128>", "reduce6<64>"])
    rng = np.random.default_rng(21)
    x = rng.integers(-100, 100, 5000).astype(np.int32)
    for bs in (128, 64):
        po = d.zeros(8, np.int32)
        mod.get_function(f"reduce6<{bs}>")((8,), (bs,), (d.up(x), po, np.uint32(x.size)), shared_mem=bs * 4)
        assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
        assert d.down(po, 8, np.int32).sum() == x.sum()
    f = rng.standard_normal(128 * 4).astype(np.float32)
    po = d.zeros(4, np.float32)
    mod.get_function("reduce_samples")((4,), (128,), (d.up(f), po))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_allclose(d.down(po, 4, np.float32), f.reshape(4, 128).astype(np.float64).sum(1), rtol=1e-5,
                               atol=1e-5)
    xi = rng.integers(-9, 10, 32).astype(np.int32)
    ps, pt = d.zeros(32, np.int32), d.zeros(1, np.int32)
    mod.get_function("warp_scan_spellings")((1,), (32,), (d.up(xi), ps, pt))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(ps, 32, np.int32), np.cumsum(xi))
    assert d.down(pt, 1, np.int32)[0] == xi.sum()


WARP_PLAIN = r"""
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
// One warp per row. Lanes exchange through global memory with no __syncwarp, as llm.c's
// attention_forward_fused1 does: a race under CUDA's memory model that a converged warp gets right.
extern "C" __global__ void softmax_mix(const float* x, float* tmp, float* out, int n) {
    auto warp = cg::tiled_partition<32>(cg::this_thread_block());
    const int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    const float* xr = x + row * n;
    float* tr = tmp + row * (n + 1);
    float m = -INFINITY;
    for (int i = warp.thread_rank(); i < n; i += warp.size()) m = fmaxf(m, xr[i]);
    m = cg::reduce(warp, m, cg::greater<float>());
    float s = 0.f;
    for (int i = warp.thread_rank(); i < n; i += warp.size()) { float e = expf(xr[i] - m); tr[i] = e; s += e; }
    s = cg::reduce(warp, s, cg::plus<float>());
    if (warp.thread_rank() == 0) tr[n] = 1.f / s;         // the leader writes after the collective
    for (int j = warp.thread_rank(); j < n; j += warp.size()) {   // every lane reads every slot
        float acc = 0.f;
        for (int k = 0; k < n; ++k) acc += tr[k] * (float)((j + k) % 7);
        out[row * n + j] = acc * tr[n];
    }
}
// The leader stores right after a shuffle reduction; every lane reads it at once (no __syncwarp).
extern "C" __global__ void leader_broadcast(const float* x, float* out) {
    __shared__ float s[4];
    const int lane = threadIdx.x % 32, w = threadIdx.x / 32;
    float v = x[blockIdx.x * blockDim.x + threadIdx.x];
    for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (lane == 0) s[w] = 2.f * v;
    out[blockIdx.x * blockDim.x + threadIdx.x] = s[w] + lane;
}
// Lanes write their slots, then read the others' with no collective in between (tile indexing only).
extern "C" __global__ void write_then_read(const float* x, float* tmp, float* out, int n) {
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
    const int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    float* tr = tmp + row * n;
    int i = warp.thread_rank();
    while (i < n) { tr[i] = 2.f * x[row * n + i]; i += 32; }
    for (int j = warp.thread_rank(); j < n; j += 32) {
        float acc = 0.f;
        int k = 0;
        do { acc += tr[k] * (float)((j * k) % 5); } while (++k < n);
        out[row * n + j] = acc;
    }
}
"""


@pytest.mark.parametrize("n", [50, 70])
def test_warp_synchronous_exchange_through_plain_memory_sees_converged_lanes(d, n):
    """Lane after lane, the first kernel read the leader's 1/s before it was written and the second
    the other lanes' slots before they were written: wrong numbers, silently. The loader's
    convergence points (each loop test of a warp function lets the warp's other lanes catch up) give
    what a converged warp gives."""
    mod = A.RawModule(code=WARP_PLAIN)
    rng = np.random.default_rng(60 + n)
    rows = 8
    x = rng.standard_normal((rows, n)).astype(np.float32)
    px = d.up(x)
    po = d.zeros(rows * n, np.float32)
    mod.get_function("softmax_mix")((rows // 2,), (64,), (px, d.zeros(rows * (n + 1), np.float32), po, np.int32(n)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    x64 = x.astype(np.float64)
    p = np.exp(x64 - x64.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    w = (np.arange(n)[:, None] + np.arange(n)[None, :]) % 7
    np.testing.assert_allclose(d.down(po, rows * n, np.float32).reshape(rows, n), p @ w.T, rtol=1e-5, atol=1e-6)
    po = d.zeros(rows * n, np.float32)
    mod.get_function("write_then_read")((rows // 2,), (64,), (px, d.zeros(rows * n, np.float32), po, np.int32(n)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    w = (np.arange(n)[:, None] * np.arange(n)[None, :]) % 5
    np.testing.assert_allclose(d.down(po, rows * n, np.float32).reshape(rows, n), (2 * x64) @ w.T, rtol=1e-5,
                               atol=1e-5)
    # straight-line: the lane that completes a collective lets the lowest lane go first, as a converged
    # warp runs on in lane order (the others used to read the leader's slot before it was written)
    xs = rng.integers(-50, 50, 3 * 128).astype(np.float32)
    po = d.zeros(xs.size, np.float32)
    mod.get_function("leader_broadcast")((3,), (128,), (d.up(xs), po))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    want = 2 * xs.reshape(-1, 32).sum(1).repeat(32) + np.tile(np.arange(32), xs.size // 32)
    np.testing.assert_array_equal(d.down(po, xs.size, np.float32), want)


WARPS_SIDE_BY_SIDE = r"""
__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
// After a barrier every warp reads slot 0 (the block total, written by thread 0 before the barrier);
// a few shuffles later each warp's lane 0 reuses its own slot, slot 0 included, with no barrier in
// between (llm.c's softmax_forward_kernel4 does this with the broadcast max).
extern "C" __global__ void reuse_slot_after_barrier(const float* x, float* out) {
    __shared__ float s[32];
    const int lane = threadIdx.x % 32, w = threadIdx.x / 32;
    float v = warp_sum(x[blockIdx.x * blockDim.x + threadIdx.x]);
    if (lane == 0) s[w] = v;
    __syncthreads();
    if (threadIdx.x == 0) { float t = s[0]; for (int i = 1; i < blockDim.x / 32; i++) t += s[i]; s[0] = t; }
    __syncthreads();
    const float total = s[0];
    const float again = warp_sum(total);
    if (lane == 0) s[w] = again;
    out[blockIdx.x * blockDim.x + threadIdx.x] = total;
}
"""


@pytest.mark.parametrize("threads", [64, 256, 1024])
def test_warps_run_side_by_side_after_a_barrier(d, threads):
    """Thread 0 arrives last at the second barrier and used to run its warp on through the shuffles to
    its store into slot 0 before any other warp had read the slot: the other warps read 32x the total,
    silently. Warps now take turns at warp collectives (as they run side by side on a GPU), so every
    warp's first loads after the barrier come before that store."""
    mod = A.RawModule(code=WARPS_SIDE_BY_SIDE)
    rng = np.random.default_rng(threads)
    x = rng.integers(-20, 20, 3 * threads).astype(np.float32)
    po = d.zeros(x.size, np.float32)
    mod.get_function("reuse_slot_after_barrier")((3,), (threads,), (d.up(x), po))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    want = x.reshape(3, threads).sum(1).repeat(threads)
    np.testing.assert_array_equal(d.down(po, x.size, np.float32), want)


EVERY_WARP_READS_EVERY_SLOT = r"""
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
// llm.c attention_backward's kernel8 pattern: each warp writes its sum into its slot, block.sync(),
// every warp reads all the slots back with cg::reduce, and the next iteration writes the slot again
// with no second barrier. The last warp completes the barrier; it must not run a whole iteration
// before warp 0 has read the slots.
extern "C" __global__ void slots_every_iteration(const float* x, float* out, int iters) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    __shared__ float acc[32];
    const int nw = warp.meta_group_size(), w = warp.meta_group_rank(), lane = warp.thread_rank();
    for (int it = 0; it < iters; ++it) {
        acc[w] = cg::reduce(warp, x[(it * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x], cg::plus<float>{});
        block.sync();
        const float total = cg::reduce(warp, lane < nw ? acc[lane] : 0.f, cg::plus<float>{});
        if (lane == 0) out[(it * gridDim.x + blockIdx.x) * nw + w] = total;
    }
}
"""


@pytest.mark.parametrize("threads", [64, 256, 1024])
def test_every_warp_gets_a_turn_after_a_barrier(d, threads):
    """Only the next two warps used to get a turn at a collective: the last warp, which completes the
    barrier, ran a whole iteration and overwrote its slot before warp 0 read it (64 threads: 96 for 64,
    silently). Now every warp that can run gets a turn."""
    mod = A.RawModule(code=EVERY_WARP_READS_EVERY_SLOT)
    iters, blocks, nw = 4, 2, threads // 32
    x = np.random.default_rng(threads).integers(-20, 20, iters * blocks * threads).astype(np.float32)
    po = d.zeros(iters * blocks * nw, np.float32)
    mod.get_function("slots_every_iteration")((blocks,), (threads,), (d.up(x), po, np.int32(iters)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    want = x.reshape(iters * blocks, threads).sum(1).repeat(nw)
    np.testing.assert_array_equal(d.down(po, want.size, np.float32), want)


SPIN_WAITS = r"""
// A thread polls a flag another thread of the block sets later (no barrier): a GPU runs the setter
// meanwhile. And the classic lock of CUDA by Example's dot product: every warp's leader takes it.
extern "C" __global__ void wait_for_flag(int* flag, int* out, int waiter, int setter) {
    if (threadIdx.x == waiter) { while (atomicAdd(flag, 0) == 0) { } out[0] = 1; }
    if (threadIdx.x == setter) atomicExch(flag, 1);
}
extern "C" __global__ void locked_sum(int* mutex, const float* x, float* total) {
    __shared__ float part[8];
    float v = x[blockIdx.x * blockDim.x + threadIdx.x];
    for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (threadIdx.x % 32 == 0) {
        while (atomicCAS(mutex, 0, 1) != 0);
        *total += v;                       // plain read-modify-write inside the lock
        __threadfence();
        atomicExch(mutex, 0);
    }
}
extern "C" __global__ void wait_for_a_later_block(int* flag, int* out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) { while (atomicAdd(flag, 0) == 0) { } out[0] = 1; }
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) atomicExch(flag, 1);
}
// a software grid barrier (before cooperative groups): every block waits until all have arrived
extern "C" __global__ void soft_grid_barrier(int* count, int* out) {
    if (threadIdx.x == 0) {
        atomicAdd(count, 1);
        while (atomicAdd(count, 0) < (int)gridDim.x) { }
        out[blockIdx.x] = 1;
    }
}
"""


@pytest.mark.parametrize("waiter,setter", [(0, 32), (0, 1), (63, 0)])
def test_a_spin_wait_on_another_thread_of_the_block_ends(d, waiter, setter):
    """It ran until the watchdog (300 s): a thread spinning in a plain loop never let the setter run.
    A loop whose condition polls with an atomic and whose body does nothing now lets the block run."""
    k = A.RawModule(code=SPIN_WAITS).get_function("wait_for_flag")
    flag, out = d.zeros(1, np.int32), d.zeros(1, np.int32)
    t = time.perf_counter()
    k((1,), (64,), (flag, out, np.int32(waiter), np.int32(setter)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    assert d.down(out, 1, np.int32)[0] == 1
    assert time.perf_counter() - t < 30


def test_an_atomiccas_lock_serialises_a_read_modify_write(d):
    k = A.RawModule(code=SPIN_WAITS).get_function("locked_sum")
    x = np.random.default_rng(3).integers(-8, 8, 4 * 256).astype(np.float32)
    mutex, total = d.zeros(1, np.int32), d.zeros(1, np.float32)
    k((4,), (256,), (mutex, d.up(x), total))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    assert d.down(total, 1, np.float32)[0] == x.sum() and d.down(mutex, 1, np.int32)[0] == 0


@pytest.mark.parametrize("grid,block", [(2, 32), (40, 64)])
def test_a_spin_wait_on_a_later_block_ends(d, grid, block):
    """On a GPU a small grid's blocks are all resident; the emulator ran a few at a time, and block 0
    spun until the 300 s watchdog. A block whose spin-wait nothing in it can end now lets a block that
    has not started run on an OS thread of its own."""
    mod = A.RawModule(code=SPIN_WAITS)
    flag, out = d.zeros(1, np.int32), d.zeros(grid, np.int32)
    mod.get_function("wait_for_a_later_block")((grid,), (block,), (flag, out))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    assert d.down(out, 1, np.int32)[0] == 1
    count, out = d.zeros(1, np.int32), d.zeros(grid, np.int32)
    mod.get_function("soft_grid_barrier")((grid,), (block,), (count, out))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    assert (d.down(out, grid, np.int32) == 1).all()


def test_a_grid_wide_spin_wait_beyond_what_can_be_resident_is_a_livelock_report(d):
    """200 blocks waiting for each other: more than the pool and its 64 extra threads hold. It must say
    so in seconds (it ran until the 300 s watchdog), naming the cooperative launch to use."""
    k = A.RawModule(code=SPIN_WAITS).get_function("soft_grid_barrier")
    count, out = d.zeros(1, np.int32), d.zeros(200, np.int32)
    t = time.perf_counter()
    k((200,), (64,), (count, out))
    assert acl.rt.synchronize_device() == AclError.ACL_ERROR_RT_AICORE_EXCEPTION
    msg = acl.get_recent_err_msg()
    assert "livelock" in msg and "spin-wait" in msg and "cooperative launch" in msg, msg
    assert time.perf_counter() - t < 30


VOLATILE_SPIN_WAITS = r"""
// Parboil 2.5 bfs's start_global_barrier (abduld/Parboil @ a4c63da2, benchmarks/bfs/src/cuda/kernel.cu;
// University of Illinois/NCSA licence), as published: a volatile global polled with an empty body.
#define NUM_SM 14
volatile __device__ int count = 0;
__device__ void start_global_barrier(int fold){
  __syncthreads();
  if(threadIdx.x == 0){
    atomicAdd((int*)&count, 1);
    while( count < NUM_SM*fold){
      ;
    }
  }
  __syncthreads();
}
extern "C" __global__ void global_barrier(int* out, int* sum){   // (the test's: each block reads its neighbour's)
  if (threadIdx.x == 0) out[blockIdx.x] = blockIdx.x + 1;
  start_global_barrier(1);
  if (threadIdx.x == 0) sum[blockIdx.x] = out[blockIdx.x] + out[(blockIdx.x + 1) % NUM_SM];
}
// a flag another warp sets later, read through a volatile pointer
extern "C" __global__ void volatile_flag(int* flag_mem, int* out) {
    volatile int* flag = flag_mem;
    if (threadIdx.x == 0) { while (*flag == 0) ; out[0] = 1; }
    if (threadIdx.x == 32) *flag = 1;
}
"""


def test_a_spin_wait_through_a_volatile_name_ends(d):
    """Parboil bfs's software grid barrier polls a `volatile __device__ int` with an empty body: it ran
    until the 300 s watchdog (only atomic polls were recognised as spin-waits). A loop whose condition
    reads a name declared volatile and whose body does nothing now waits as an atomic poll does."""
    mod = A.RawModule(code=VOLATILE_SPIN_WAITS)
    out, total = d.zeros(14, np.int32), d.zeros(14, np.int32)
    t = time.perf_counter()
    mod.get_function("global_barrier")((14,), (64,), (out, total))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    b = np.arange(14)
    np.testing.assert_array_equal(d.down(total, 14, np.int32), (b + 1) + (b + 1) % 14 + 1)
    flag, o1 = d.zeros(1, np.int32), d.zeros(1, np.int32)
    mod.get_function("volatile_flag")((1,), (64,), (flag, o1))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    assert d.down(o1, 1, np.int32)[0] == 1
    assert time.perf_counter() - t < 30


def test_only_loops_that_wait_get_a_spin_tick():
    from aclnn_py.emulator import compiler as C
    waits = ["while (atomicCAS(m, 0, 1) != 0);", "while (atomicAdd(f, 0) == 0) { }",
             "while (atomicAdd(f, 0) == 0) { __threadfence(); }", "for (; atomicOr(f, 0) == 0; ) ;",
             "do { } while (atomicExch(m, 1) != 0);"]
    work = ["while ((i = atomicAdd(&next, 1)) < n) { out[i] = 1; }", "do { s++; } while (atomicAdd(&c, 1) < n);",
            "for (int i = atomicAdd(c, 1); i < n; i = atomicAdd(c, 1)) {}", "while (x < n) { atomicAdd(p, 1); }",
            "for (int v : {1, 2}) atomicAdd(p, v);"]
    waits += ["volatile __device__ int count;\nvoid f() { while (count < 14) { ; } }",
              "void f(::__emu::vptr<int> flag) { while (flag[0] == 0) {} }",
              "__shared__ volatile int done;\nvoid f() { while (!done); }"]
    work += ["void f(int* p) { while (p[0] == 0) {} }",   # a plain read: not a poll (a GPU may hoist it too)
             "volatile __device__ int count;\nvoid f() { while (count < 14) { count++; } }"]
    for src in waits:
        assert ") && ::__emu::spin_tick()" in C._rewrite_spin_loops(src), src
        assert C._rewrite_spin_loops(src).count("\n") == src.count("\n")
    for src in work:
        assert C._rewrite_spin_loops(src) == src, src


def test_convergence_points_go_only_into_warp_code():
    from aclnn_py.emulator import compiler as C
    code = """
__device__ int plain(const int* a, int n) { int s = 0; for (int i = 0; i < n; ++i) s += a[i]; return s; }
__device__ float warp_sum(float v) {
    for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__global__ void k(const int* a, float* out, int n) {
    for (int i = 0; i < n; ++i) out[i] = 0;
    for (;;) { if (n-- < 0) break; }
    while (int m = n) { n = m - 1; }
    for (int v : {1, 2}) out[v] = 1;
    int t = 0;
    do t++; while (t < n);
    out[0] = warp_sum(plain(a, n));
}
constexpr int twice(int n) { int s = 0; for (int i = 0; i < n; ++i) s += 2; return s; }
"""
    text = '# 1 "kernel.cu"\n' + code
    scan = C._Scan(code)
    funcs = scan.tainted(C._WARP_PRIMITIVES, record=False) - C._WARP_PRIMITIVES
    assert funcs == {"warp_sum", "k"}
    out = C._rewrite_warp_loops(text, funcs)
    got = [line.strip() for line in out.splitlines() if "loop_tick" in line]
    got = [re.sub(r"\(\d+u\)", "(N)", line) for line in got]   # a numbered loop: its token index
    assert got == [
        "for (int i = 0; (::__emu::loop_tick(N) && ( i < n) || ::__emu::loop_exit(N)); ++i) out[i] = 0;",
        "for (; ::__emu::loop_tick() ;) { if (n-- < 0) break; }",
        "do t++; while ( (::__emu::loop_tick(N) && (t < n) || ::__emu::loop_exit(N)));",
    ], got   # not: plain(), the shuffle loop, the declaring while, the range-for, twice()
    assert out.count("\n") == text.count("\n")
    # conditions that declare (skipped), a raw string (untouched), a user function named like a
    # primitive (still warp code), a while after an if-block (its own body decides)
    code2 = r"""
__device__ float reduce(float v) { for (int i = 0; i < 2; ++i) v += __shfl_xor_sync(0xffffffffu, v, 1); return v; }
__global__ void k2(float* out, int j, float* p) {
    const char* s = R"x(while (j < 3) {})x";
    while (decltype(j) x = j--) out[x] = 1;
    while (::size_t x = j--) out[x] = 2;
    for (int i = 0; float* const r = i < 2 ? p : nullptr; ++i) r[i] = 3;
    for (int i = 0; float* __restrict__ r = i < 2 ? p : nullptr; ++i) r[i] = 4;
    while ([[maybe_unused]] int x = j--) out[0] = 5;
    if (j) { out[1] = 0; }
    while (j-- > 0) { out[2] = __shfl_sync(0xffffffffu, out[2], 0); }
    out[3] = reduce(s[0]);
}
"""
    scan = C._Scan(code2)
    funcs = {n for n in scan.defs if n in scan.tainted(C._WARP_PRIMITIVES, record=False)}
    assert {"reduce", "k2"} <= funcs
    out2 = C._rewrite_warp_loops('# 1 "kernel.cu"\n' + code2, funcs)
    assert 'R"x(while (j < 3) {})x"' in out2
    assert [line.strip() for line in out2.splitlines() if "loop_tick" in line] == []
    mod2 = A.RawModule(code=code2.replace("__global__ void k2", 'extern "C" __global__ void k2'))
    mod2.get_function("k2")     # compiles
    # kernels/ opts out: its warps synchronise explicitly
    assert "__emu_explicit_warp_sync" in (Path(A.__file__).parent.parent / "kernels/include/aclnn/base.cuh").read_text()


def test_grid_sync_again_and_again_with_block_barriers_between(d):
    """Two grid syncs in a row used to hang (the first thread through found no runnable fiber in its
    block at the second one); here seven Jacobi steps with a __syncthreads between the grid syncs."""
    code = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void steps(float* a, float* b, int n, int iters, int* count) {
    cg::grid_group g = cg::this_grid();
    __shared__ float s[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int it = 0; it < iters; ++it) {
        float l = a[(i + n - 1) % n], v = a[i], r = a[(i + 1) % n];
        g.sync();
        s[threadIdx.x] = (l + v + r) / 3.f;
        __syncthreads();
        a[i] = s[threadIdx.x];
        g.sync();
    }
    if (threadIdx.x == 0) atomicAdd(count, 1);
    b[i] = a[i];
}
"""
    emulator.set_watchdog(60)
    try:
        k = A.RawKernel(code, "steps", enable_cooperative_groups=True)
        blocks, n = 4, 256
        x = np.random.default_rng(61).random(n, dtype=np.float32)
        pa, pb, pc = d.up(x), d.zeros(n, np.float32), d.zeros(1, np.int32)
        k((blocks,), (64,), (pa, pb, np.int32(n), np.int32(7), pc))
        assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    finally:
        emulator.set_watchdog(None)
    ref = x.copy()
    for _ in range(7):
        ref = ((np.roll(ref, 1) + ref + np.roll(ref, -1)) / np.float32(3)).astype(np.float32)
    np.testing.assert_array_equal(d.down(pb, n, np.float32), ref)
    assert d.down(pc, 1, np.int32)[0] == blocks


def test_a_volatile_pointer_template_parameter_that_must_be_deduced_is_a_clear_compile_error():
    code = r'''
template <class T> __device__ void wr(volatile T* s, int t) { s[t] += s[t + 1]; }
extern "C" __global__ void k(float* p) { wr(p, threadIdx.x); }
'''
    with pytest.raises(emulator.CompileException, match=r"give the template argument explicitly"):
        emulator.compile_module(code, filename="deduce.cu")


DISJOINT = r'''
// two data-dependent halves of a warp shuffle over their own masks, then the whole warp meets
#define SPLIT                                                        \
    int v = in[threadIdx.x];                                         \
    unsigned odd = __ballot_sync(0xffffffffu, v & 1);                \
    unsigned m = (v & 1) ? odd : ~odd;                               \
    int s = __shfl_sync(m, v, __ffs(m) - 1);
extern "C" __global__ void then_ballot(const int* in, int* out) {
    SPLIT out[threadIdx.x] = s + (int)(__ballot_sync(0xffffffffu, 1) != 0xffffffffu);
}
extern "C" __global__ void then_syncwarp_sites(const int* in, int* out) {
    int v = in[threadIdx.x];
    unsigned odd = __ballot_sync(0xffffffffu, v & 1);
    unsigned m = (v & 1) ? odd : ~odd;
    int s;
    if (v & 1) s = __shfl_sync(m, v, __ffs(m) - 1);
    else       s = __shfl_sync(m, v, __ffs(m) - 1);
    __syncwarp();
    out[threadIdx.x] = s;
}
// a real cycle: lane 0 needs lane 1, lane 1 needs lane 2, lane 2 needs lane 0
extern "C" __global__ void cycle(int* out) {
    const unsigned t = threadIdx.x;
    const unsigned m = t == 0 ? 0x3u : t == 1 ? 0x6u : 0x5u;
    out[t] = __shfl_sync(m, (int)t, t == 2 ? 0 : (int)t);
}
'''


def test_disjoint_collectives_then_the_whole_warp(d):
    """Lanes waiting in one collective while the warp's other lanes start another one that names
    them: valid CUDA when the first can still complete (it used to be reported as an error); a real
    cycle is a deadlock report, not a hang."""
    mod = A.RawModule(code=DISJOINT)
    x = np.random.default_rng(5).integers(0, 50, 32).astype(np.int32)
    odd = (x & 1).astype(bool)
    want = np.where(odd, x[odd][0], x[~odd][0])
    for k in ("then_ballot", "then_syncwarp_sites"):
        po = d.zeros(32, np.int32)
        mod.get_function(k)((1,), (32,), (d.up(x), po))
        assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
        np.testing.assert_array_equal(d.down(po, 32, np.int32), want)
    po = d.zeros(3, np.int32)
    mod.get_function("cycle")((1,), (3,), (po,))
    assert acl.rt.synchronize_device() == 507015
    assert "deadlock" in acl.get_recent_err_msg()


MISC = r'''
#include <cuda.h>
// directed-rounding arithmetic (cuda-samples "interval"), umin/umax (mergeSort), CUDA_VERSION (GLM)
extern "C" __global__ void rounding(const float* a, const float* b, float* f, const double* c, double* g) {
    const int i = threadIdx.x;
    f[8 * i + 0] = __fadd_rd(a[i], b[i]);  f[8 * i + 1] = __fadd_ru(a[i], b[i]);
    f[8 * i + 2] = __fmul_rz(a[i], b[i]);  f[8 * i + 3] = __fdiv_ru(a[i], b[i]);
    f[8 * i + 4] = __fsqrt_rd(a[i]);       f[8 * i + 5] = __fmaf_ru(a[i], b[i], 1.0f);
    f[8 * i + 6] = __int2float_rz(16777217 + i);  f[8 * i + 7] = __double2float_ru(c[i]);
    g[2 * i + 0] = __dadd_rd(c[i], 1e-30); g[2 * i + 1] = __dadd_ru(c[i], 1e-30);
}
extern "C" __global__ void misc(unsigned int* u, int* v) {
    u[threadIdx.x] = umin(threadIdx.x, 5u) + 100u * umax(threadIdx.x, 3u);
    if (threadIdx.x == 0) { v[0] = CUDA_VERSION; v[1] = CUDA_VERSION >= 9000; }
}
// a reference parameter is passed as a pointer (gsplat's `const float3& __restrict__ background`)
extern "C" __global__ void by_reference(const float3& __restrict__ bg, float* out) {
    out[threadIdx.x] = bg.x + 10.f * bg.y + 100.f * bg.z;
}
'''


def test_directed_rounding_umin_cuda_version_and_reference_parameters(d):
    mod = A.RawModule(code=MISC)
    a = np.array([1.0, 1.0, 3.0, -2.0], np.float32)
    b = np.array([1e-8, -1e-8, 7.0, 3.0], np.float32)
    c = np.array([1.0, 1 / 3, -1 / 3, 0.1])
    pf, pg = d.zeros(32, np.float32), d.zeros(8, np.float64)
    mod.get_function("rounding")((1,), (4,), (d.up(a), d.up(b), pf, d.up(c), pg))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    f = d.down(pf, 32, np.float32).reshape(4, 8)
    g = d.down(pg, 8, np.float64).reshape(4, 2)
    from fractions import Fraction as Q

    def directed(exact, dt):   # (round down, round up) of an exact rational in dtype dt
        near = dt(float(exact))
        lo = near if Q(float(near)) <= exact else np.nextafter(near, dt(-np.inf))
        hi = near if Q(float(near)) >= exact else np.nextafter(near, dt(np.inf))
        return lo, hi
    for i in range(4):
        A_, B_ = Q(float(a[i])), Q(float(b[i]))
        lo, hi = directed(A_ + B_, np.float32)
        assert (f[i, 0], f[i, 1]) == (lo, hi)
        lo, hi = directed(A_ * B_, np.float32)
        assert f[i, 2] == (lo if A_ * B_ >= 0 else hi)                       # toward zero
        assert f[i, 3] == directed(A_ / B_, np.float32)[1]
        if a[i] >= 0:
            s = np.sqrt(np.float64(a[i]))
            assert f[i, 4] <= s and np.nextafter(f[i, 4], np.float32(np.inf)) >= s
        assert f[i, 5] == directed(A_ * B_ + 1, np.float32)[1]
        assert f[i, 6] == np.float32((16777217 + i) & ~1)   # spacing 2 above 2^24: toward zero drops the odd 1
        assert f[i, 7] == directed(Q(c[i]), np.float32)[1]
        lo, hi = directed(Q(c[i]) + Q(1e-30), np.float64)
        assert (g[i, 0], g[i, 1]) == (lo, hi) and lo < hi
    pu, pv = d.zeros(8, np.uint32), d.zeros(2, np.int32)
    mod.get_function("misc")((1,), (8,), (pu, pv))
    pbg, po = d.up(np.array([1, 2, 3], np.float32)), d.zeros(2, np.float32)
    mod.get_function("by_reference")((1,), (2,), (pbg, po))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    t = np.arange(8)
    np.testing.assert_array_equal(d.down(pu, 8, np.uint32), np.minimum(t, 5) + 100 * np.maximum(t, 3))
    assert list(d.down(pv, 2, np.int32)) == [12040, 1]
    np.testing.assert_array_equal(d.down(po, 2, np.float32), [321, 321])


def test_legacy_warp_functions_exist_only_below_sm_70(d):
    """The pre-CUDA-9 __shfl_down & co. (no mask; NVIDIA's Kepler reduction blog) compile for -arch
    below sm_70, as NVRTC does, and are an error from sm_70 on."""
    code = r'''
__inline__ __device__ int warpReduceSum(int val) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) val += __shfl_down(val, offset);
  return val;
}
extern "C" __global__ void k(const int* in, int* out) {
  int v = warpReduceSum(in[threadIdx.x]);
  if (threadIdx.x == 0) *out = v + __any(v == 0) * 1000;
}
'''
    x = np.arange(32, dtype=np.int32)
    po = d.zeros(1, np.int32)
    A.RawModule(code=code, options=("-arch=sm_60",)).get_function("k")((1,), (32,), (d.up(x), po))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    assert d.down(po, 1, np.int32)[0] == x.sum()
    with pytest.raises(emulator.CompileException, match="__shfl_down"):
        A.RawModule(code=code, options=("-arch=sm_80",)).compile()


@pytest.mark.parametrize("src,note", [
    ("#include <curand_kernel.h>\nextern \"C\" __global__ void k(unsigned* o, curandStateMtgp32_t* s) "
     "{ o[0] = curand(s); }", "does not support Sobol, scrambled Sobol and MTGP32 generators"),
    ("#include <curand_kernel.h>\nextern \"C\" __global__ void k(unsigned* o, curandState* s) "
     "{ o[0] = curand_poisson(s, 4.0); }", "does not support the Poisson distribution"),
    ("__global__ void child(float* p) { p[0] = 1; }\nextern \"C\" __global__ void k(float* p) "
     "{ child<<<1, 1>>>(p); }", "dynamic parallelism"),
    ("#include <cuComplex.h>\nextern \"C\" __global__ void k(cuComplex* a) { a[0] = cuCadd(a[0], a[1]); }",
     "install CuPy"),
    ("extern \"C\" __global__ void k(float* o, cudaTextureObject_t t) { o[0] = tex2D<float>(t, 0.5f, 0.5f); }",
     "textures and surfaces"),
    ("texture<float, 1, cudaReadModeElementType> tx;\nextern \"C\" __global__ void k(float* o) "
     "{ o[threadIdx.x] = tex1Dfetch(tx, threadIdx.x); }", "textures and surfaces"),
])
def test_unsupported_features_are_clear_compile_errors(src, note):
    import importlib.util
    if note == "install CuPy" and importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed: its bridge header is found")
    mod = A.RawModule(code=src, translate_cucomplex=note == "install CuPy")
    with pytest.raises(emulator.CompileException, match=note):
        mod.compile()


def test_thrust_namespace_macros_stand_in_for_cccl(d, tmp_path):
    """CuPy's complex headers open thrust's namespace through CCCL's <thrust/detail/config/namespace.h>;
    the emulator provides that one header (CCCL's configuration does not build under g++)."""
    (tmp_path / "mycx.h").write_text("#include <thrust/detail/config/namespace.h>\nTHRUST_NAMESPACE_BEGIN\n"
                                     "template <class T> struct twice { T v; T get() const { return 2 * v; } };\n"
                                     "THRUST_NAMESPACE_END\n")
    code = ('#include "mycx.h"\nextern "C" __global__ void k(float* o) { o[threadIdx.x] = '
            'thrust::twice<float>{threadIdx.x + 0.5f}.get(); }')
    po = d.zeros(8, np.float32)
    A.RawModule(code=code, options=(f"-I{tmp_path}",)).get_function("k")((1,), (8,), (po,))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(po, 8, np.float32), 2 * (np.arange(8) + 0.5))


def test_cupy_complex_header_when_cupy_is_installed(d):
    pytest.importorskip("cupy", reason="CuPy's headers come with CuPy")
    code = r'''
#include <cupy/complex.cuh>
extern "C" __global__ void k(complex<float>* z, complex<double>* w) {
    int i = threadIdx.x;
    z[i] = z[i] * z[i] / (z[i] + complex<float>(1.f, 2.f)) + exp(z[i]) + sqrt(z[i]);
    w[i] = log(w[i]) * conj(w[i]) + pow(w[i], 2.5) + abs(w[i]) + atanh(w[i]);
}
'''
    rng = np.random.default_rng(40)
    z = (rng.standard_normal(64) + 1j * rng.standard_normal(64)).astype(np.complex64)
    w = rng.standard_normal(64) + 1j * rng.standard_normal(64)
    pz, pw = d.up(z), d.up(w)
    A.RawModule(code=code).get_function("k")((1,), (64,), (pz, pw))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    z64 = z.astype(np.complex128)
    np.testing.assert_allclose(d.down(pz, 64, np.complex64), z64 * z64 / (z64 + (1 + 2j)) + np.exp(z64) + np.sqrt(z64),
                               rtol=2e-6)
    np.testing.assert_allclose(d.down(pw, 64, np.complex128),
                               np.log(w) * np.conj(w) + w ** 2.5 + np.abs(w) + np.arctanh(w), rtol=1e-13)
    # CuPy's cuComplex.h bridge (translate_cucomplex=True) sits on the same header
    src = "#include <cuComplex.h>\nextern \"C\" __global__ void k(cuComplex* a) { a[0] = cuCmulf(cuCaddf(a[0], a[1]), a[1]); }"
    a = np.array([1 + 2j, 3 - 1j], np.complex64)
    pa = d.up(a)
    A.RawModule(code=src, translate_cucomplex=True).get_function("k")((1,), (1,), (pa,))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    assert d.down(pa, 2, np.complex64)[0] == (a[0] + a[1]) * a[1]


def test_rawkernel_source_attributes_and_compile_like_cupy():
    import io
    code = 'extern "C" __global__ void k(float* o) { o[threadIdx.x] = 1.f; }'
    k = A.RawKernel(code, "k", options=("-std=c++17",))
    assert (k.code, k.options, k.backend, k.name) == (code, ("-std=c++17",), "nvrtc", "k")
    log = io.StringIO()
    k.compile(log_stream=log)
    assert k._fn is not None and log.getvalue() == ""
    A.RawModule(code=code).compile(log_stream=log)
    with pytest.raises(LookupError, match="missing.*named symbol not found"):
        A.RawKernel(code, "missing").compile()
    with pytest.raises(LookupError, match="named symbol not found"):
        A.RawModule(code=code).get_function("missing")     # CuPy looks the kernel up here, not at launch
    with pytest.raises(emulator.CompileException):
        A.RawKernel(code + "\n#error broken", "k").compile()
    with pytest.raises(emulator.CompileException, match='cannot open source file "no/such.h"'):
        A.RawModule(code='#include "no/such.h"\n' + code).get_function("k")
    with pytest.raises(ValueError, match="nvrtc"):
        A.RawModule(code=code, backend="nvcc", name_expressions=["k"])


def test_the_host_isa_does_not_change_results(d, monkeypatch):
    """The module is built for the host's vector ISA (AVX-512 where the CPU has it, which brings FMA),
    yet a * b + c is rounded twice on every CPU (-ffp-contract=off): with a = b = 1 + 2^-12 and
    c = -(1 + 2^-11) the product rounds to 1 + 2^-11 (a tie to even), so the result is 0; a
    contracted FMA would give 2^-24."""
    from aclnn_py.emulator import compiler as C
    monkeypatch.setenv("ACLNN_PY_EMU_NO_AVX", "1")
    assert not any(f.startswith(("-mavx", "-mf16c")) for f in C._target_flags("g++"))
    monkeypatch.delenv("ACLNN_PY_EMU_NO_AVX")
    if C._cpu_has("avx512f"):
        assert "-mavx512f" in C._target_flags("g++")
    assert "-ffp-contract=off" in C._BASE_FLAGS
    code = 'extern "C" __global__ void k(const float* a, const float* b, const float* c, float* o) {' \
           ' int i = threadIdx.x; o[i] = a[i] * b[i] + c[i]; }'
    n = 64
    a = np.full(n, 1 + 2.0 ** -12, np.float32)
    c = np.full(n, -(1 + 2.0 ** -11), np.float32)
    po = d.zeros(n, np.float32)
    A.RawModule(code=code).get_function("k")((1,), (n,), (d.up(a), d.up(a), d.up(c), po))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(po, n, np.float32), (a * a) + c)   # NumPy rounds twice too
    assert (d.down(po, n, np.float32) == 0).all()


WMMA = r"""
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
using namespace nvcuda;
// C = alpha * A @ B + beta * C (A row-major M x K, B col-major, C row-major); one warp per 16x16 tile
extern "C" __global__ void gemm_h(const half* a, const half* b, float* c, int M, int N, int K, float alpha, float beta) {
    const int tm = (blockIdx.x * blockDim.x + threadIdx.x) / warpSize, tn = blockIdx.y;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc, fc;
    wmma::fill_fragment(acc, 0.0f);
    if (tm * 16 >= M) return;
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(fa, a + tm * 16 * K + k, K);
        wmma::load_matrix_sync(fb, b + tn * 16 * K + k, K);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::load_matrix_sync(fc, c + tm * 16 * N + tn * 16, N, wmma::mem_row_major);
    for (int i = 0; i < fc.num_elements; i++) fc.x[i] = alpha * acc.x[i] + beta * fc.x[i];
    wmma::store_matrix_sync(c + tm * 16 * N + tn * 16, fc, N, wmma::mem_row_major);
}
// 32x8x16, bf16 A col-major / B row-major, half accumulator stored column-major
extern "C" __global__ void gemm_bf16(const __nv_bfloat16* a, const __nv_bfloat16* b, half* c) {
    wmma::fragment<wmma::matrix_a, 32, 8, 16, __nv_bfloat16, wmma::col_major> fa;
    wmma::fragment<wmma::matrix_b, 32, 8, 16, __nv_bfloat16, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 32, 8, 16, half> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::load_matrix_sync(fa, a, 32);
    wmma::load_matrix_sync(fb, b, 8);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(c, acc, 32, wmma::mem_col_major);
}
// tf32 16x16x8 (inputs rounded with __float_to_tf32), double 8x8x4, s8 16x16x16, satf
extern "C" __global__ void gemm_misc(const float* af, const float* bf, float* cf, const double* ad, const double* bd,
                                     double* cd, const signed char* ai, const signed char* bi, int* ci, float* cs) {
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> ta;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> tb;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> tc;
    wmma::load_matrix_sync(ta, af, 8);
    wmma::load_matrix_sync(tb, bf, 16);
    for (int i = 0; i < ta.num_elements; i++) ta.x[i] = wmma::__float_to_tf32(ta.x[i]);
    for (int i = 0; i < tb.num_elements; i++) tb.x[i] = wmma::__float_to_tf32(tb.x[i]);
    wmma::fill_fragment(tc, 0.0f);
    wmma::mma_sync(tc, ta, tb, tc);
    wmma::store_matrix_sync(cf, tc, 16, wmma::mem_row_major);
    wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major> da;
    wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::col_major> db;
    wmma::fragment<wmma::accumulator, 8, 8, 4, double> dc;
    wmma::load_matrix_sync(da, ad, 4);
    wmma::load_matrix_sync(db, bd, 4);
    wmma::load_matrix_sync(dc, cd, 8, wmma::mem_row_major);
    wmma::mma_sync(dc, da, db, dc);
    wmma::store_matrix_sync(cd, dc, 8, wmma::mem_row_major);
    wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> ia;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::row_major> ib;
    wmma::fragment<wmma::accumulator, 16, 16, 16, int> ic;
    wmma::fill_fragment(ic, 7);
    wmma::load_matrix_sync(ia, ai, 16);
    wmma::load_matrix_sync(ib, bi, 16);
    wmma::mma_sync(ic, ia, ib, ic);
    wmma::store_matrix_sync(ci, ic, 16, wmma::mem_row_major);
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> big, bad;
    wmma::fill_fragment(big, __int_as_float(0x7f800000));   // satf: inf -> FLT_MAX, NaN -> +0
    wmma::fill_fragment(bad, __int_as_float(0x7fc00000));
    wmma::mma_sync(big, ta, tb, big, true);
    wmma::mma_sync(bad, ta, tb, bad, true);
    wmma::store_matrix_sync(cs, big, 16, wmma::mem_row_major);
    wmma::store_matrix_sync(cs + 256, bad, 16, wmma::mem_row_major);
}
"""


def _tf32(x):
    u = x.astype(np.float32).view(np.uint32)
    return ((u + np.uint32(0x1000)) & np.uint32(0xffffe000)).view(np.float32)


def test_multidimensional_dynamic_shared_memory(d):
    """`extern __shared__ T name[][N];` (cuda-samples' cudaTensorCoreGemm declares its staging buffer
    so): it was left as an undefined symbol, a link error."""
    code = r"""
extern "C" __global__ void transpose33(const float* in, float* out) {
    extern __shared__ float tile[][33];
    const int x = threadIdx.x, y = threadIdx.y;
    tile[y][x] = in[y * 32 + x];
    __syncthreads();
    out[y * 32 + x] = tile[x][y];
}
extern "C" __global__ void cube(int* out) {     // every extern __shared__ array starts at the same byte
    __shared__ extern int __align__(16) flags[][2][4];
    extern __shared__ int flat[];
    const int i = threadIdx.x;
    flags[i / 8][(i / 4) % 2][i % 4] = 3 * i;
    __syncthreads();
    out[i] = flat[i];
}
"""
    mod = A.RawModule(code=code)
    x = np.arange(32 * 32, dtype=np.float32)
    po = d.zeros(x.size, np.float32)
    mod.get_function("transpose33")((1,), (32, 32), (d.up(x), po), shared_mem=32 * 33 * 4)
    pi = d.zeros(32, np.int32)
    mod.get_function("cube")((1,), (32,), (pi,), shared_mem=32 * 4)
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(po, x.size, np.float32), x.reshape(32, 32).T.ravel())
    np.testing.assert_array_equal(d.down(pi, 32, np.int32), 3 * np.arange(32))


def test_wmma_tensor_core_fragments(d):
    """<mma.h> on the emulator: each lane holds the whole tile and the warp's first lane stores it,
    so a load-scale-store of C is applied once (with every lane storing, beta was applied 32 times)."""
    mod = A.RawModule(code=WMMA)
    rng = np.random.default_rng(70)
    M, N, K = 64, 48, 80
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = rng.standard_normal((M, N)).astype(np.float32)
    pc = d.up(c)
    mod.get_function("gemm_h")((M // 16 * 32 // 128, N // 16), (128,),
                               (d.up(a), d.up(np.ascontiguousarray(b.T)), pc, np.int32(M), np.int32(N), np.int32(K),
                                np.float32(1.5), np.float32(0.5)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    ref = 1.5 * (a.astype(np.float64) @ b.astype(np.float64)) + 0.5 * c
    np.testing.assert_allclose(d.down(pc, M * N, np.float32).reshape(M, N), ref, rtol=1e-5, atol=1e-4)

    import ml_dtypes
    ab = rng.standard_normal((32, 16)).astype(ml_dtypes.bfloat16)
    bb = rng.standard_normal((16, 8)).astype(ml_dtypes.bfloat16)
    ph = d.zeros(32 * 8, np.float16)
    mod.get_function("gemm_bf16")((1,), (32,), (d.up(np.ascontiguousarray(ab.T)), d.up(bb), ph))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    ref = ab.astype(np.float64) @ bb.astype(np.float64)
    np.testing.assert_allclose(d.down(ph, 256, np.float16).reshape(8, 32).T, ref, rtol=2e-3, atol=2e-3)

    af, bf = rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32)
    ad, bd, cd = (rng.standard_normal(s) for s in ((8, 4), (4, 8), (8, 8)))
    ai, bi = (rng.integers(-128, 128, (16, 16)).astype(np.int8) for _ in range(2))
    pcf, pcd, pci, pcs = d.zeros(256, np.float32), d.up(cd), d.zeros(256, np.int32), d.zeros(512, np.float32)
    mod.get_function("gemm_misc")((1,), (32,), (d.up(af), d.up(bf), pcf, d.up(ad), d.up(np.ascontiguousarray(bd.T)),
                                                 pcd, d.up(ai), d.up(bi), pci, pcs))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_allclose(d.down(pcf, 256, np.float32).reshape(16, 16),
                               _tf32(af).astype(np.float64) @ _tf32(bf).astype(np.float64), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(d.down(pcd, 64, np.float64).reshape(8, 8), ad @ bd + cd, rtol=1e-14, atol=1e-14)
    np.testing.assert_array_equal(d.down(pci, 256, np.int32).reshape(16, 16),
                                  ai.astype(np.int32) @ bi.astype(np.int32) + 7)
    sat = d.down(pcs, 512, np.float32)
    np.testing.assert_array_equal(sat[:256], np.finfo(np.float32).max)
    np.testing.assert_array_equal(sat[256:].view(np.uint32), 0)
    assert abs(_tf32(np.float32(1 + 2 ** -11))[()] - (1 + 2 ** -10)) == 0   # ties away from zero


def test_rawkernel_and_rawmodule_pickle_like_cupy(d):
    import pickle
    code = 'extern "C" __global__ void k(float* o, float v) { o[threadIdx.x] = v + threadIdx.x; }'
    k = A.RawKernel(code, "k")
    po = d.zeros(8, np.float32)
    k((1,), (8,), (po, np.float32(1)))          # built and used before pickling
    k2 = pickle.loads(pickle.dumps(k))
    m2 = pickle.loads(pickle.dumps(A.RawModule(code=code, options=("-std=c++17",))))
    assert (k2.name, k2.code, m2.options) == ("k", code, ("-std=c++17",))
    k2((1,), (8,), (po, np.float32(5)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(po, 8, np.float32), 5 + np.arange(8))
    m2.get_function("k")((1,), (8,), (po, np.float32(7)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(po, 8, np.float32), 7 + np.arange(8))


def test_wider_numpy_integers_for_narrower_parameters_like_a_gpu(d):
    """CuPy hands the driver a pointer to each argument and the driver copies the parameter's size:
    an np.int64 for an `int` reads its low bytes, which the emulator passes too (when the value fits,
    as for a Python int); a narrower integer than the parameter would read past it on a GPU: refused."""
    code = r'''
extern "C" __global__ void k(int n, unsigned int m, short s, long long big, float* out) {
    out[0] = n; out[1] = m; out[2] = s; out[3] = (float)big;
}
'''
    fn = A.RawModule(code=code).get_function("k")
    po = d.zeros(4, np.float32)
    fn((1,), (1,), (np.int64(-5), np.uint64(7), np.int32(-3), np.int64(1 << 40), po))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(po, 4, np.float32), [-5, 7, -3, float(1 << 40)])
    for bad, what in (((np.int64(1 << 40), np.uint32(1), np.int16(0), np.int64(0), po), "does not fit"),
                      ((np.int32(1), np.uint32(1), np.int16(0), np.int32(5), po), "4 bytes given for a 8-byte")):
        fn((1,), (1,), bad)     # a launch failure, reported by the next synchronize as on a GPU
        assert acl.rt.synchronize_device() == 507015
        assert what in acl.get_recent_err_msg()


_SIMD_BIN = """vadd vsub vaddss vsubss vaddus vsubus vabsdiffs vabsdiffu vavgs vavgu vhaddu vmaxs vmaxu vmins vminu
    vcmpeq vcmpne vcmpges vcmpgeu vcmpgts vcmpgtu vcmples vcmpleu vcmplts vcmpltu vseteq vsetne vsetges vsetgeu
    vsetgts vsetgtu vsetles vsetleu vsetlts vsetltu vsads vsadu""".split()
_SIMD_UN = "vabs vabsss vneg vnegss".split()


def _simd_ref(name, a, b, bits):
    """CUDA's SIMD-in-word intrinsics lane by lane, in plain Python ints."""
    m, n = (1 << bits) - 1, 32 // bits
    lanes = lambda x: [(x >> (bits * i)) & m for i in range(n)]            # noqa: E731
    sgn = lambda u: u - (1 << bits) if u >> (bits - 1) else u              # noqa: E731
    sat_s = lambda v: max(-(1 << (bits - 1)), min((1 << (bits - 1)) - 1, v))  # noqa: E731
    sat_u = lambda v: max(0, min(m, v))                                    # noqa: E731
    ua, ub = lanes(a), lanes(b)
    sa, sb = [sgn(u) for u in ua], [sgn(u) for u in ub]
    if name in ("vsads", "vsadu"):
        return sum(abs(x - y) for x, y in (zip(sa, sb) if name == "vsads" else zip(ua, ub)))
    cmp = {"eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "ge": lambda x, y: x >= y,
           "gt": lambda x, y: x > y, "le": lambda x, y: x <= y, "lt": lambda x, y: x < y}
    out = []
    for x, y, p, q in zip(ua, ub, sa, sb):
        if name.startswith(("vcmp", "vset")):
            op = name[4:6]
            use_s = name.endswith("s") and op not in ("eq", "ne")
            t = cmp[op](p, q) if use_s else cmp[op](x, y)
            v = (-1 if t else 0) if name.startswith("vcmp") else int(t)
        else:
            v = {"vadd": x + y, "vsub": x - y, "vaddss": sat_s(p + q), "vsubss": sat_s(p - q),
                 "vaddus": sat_u(x + y), "vsubus": sat_u(x - y), "vabsdiffs": abs(p - q), "vabsdiffu": abs(x - y),
                 "vavgs": (p + q + (p + q >= 0)) >> 1, "vavgu": (x + y + 1) >> 1, "vhaddu": (x + y) >> 1,
                 "vmaxs": max(p, q), "vmaxu": max(x, y), "vmins": min(p, q), "vminu": min(x, y),
                 "vabs": abs(p), "vabsss": sat_s(abs(p)), "vneg": -p, "vnegss": sat_s(-p)}[name]
        out.append(v & m)
    return sum(v << (bits * i) for i, v in enumerate(out))


def test_simd_in_word_intrinsics(d):
    calls = [f"__{nm}{w}(a[i], b[i])" for nm in _SIMD_BIN for w in (2, 4)] + \
            [f"__{nm}{w}(a[i])" for nm in _SIMD_UN for w in (2, 4)]
    body = "\n".join(f"    out[{k} * n + i] = {c};" for k, c in enumerate(calls))
    code = ('extern "C" __global__ void simd(const unsigned int* a, const unsigned int* b, unsigned int* out, int n) {\n'
            "    const int i = threadIdx.x;\n    if (i >= n) return;\n" + body + "\n}\n")
    rng = np.random.default_rng(31)
    edge = [0, 0xFFFFFFFF, 0x80808080, 0x7F7F7F7F, 0x80007FFF, 0x01FF80FE]
    a = np.array(edge + list(rng.integers(0, 1 << 32, 26, dtype=np.uint64)), np.uint32)
    b = np.array(edge[::-1] + list(rng.integers(0, 1 << 32, 26, dtype=np.uint64)), np.uint32)
    n = a.size
    po = d.zeros(len(calls) * n, np.uint32)
    A.RawModule(code=code).get_function("simd")((1,), (n,), (d.up(a), d.up(b), po, np.int32(n)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    got = d.down(po, len(calls) * n, np.uint32).reshape(len(calls), n)
    names = [(nm, w) for nm in _SIMD_BIN for w in (2, 4)] + [(nm, w) for nm in _SIMD_UN for w in (2, 4)]
    for k, (nm, w) in enumerate(names):
        want = [_simd_ref(nm, int(x), int(y), 32 // w) for x, y in zip(a, b)]
        assert got[k].tolist() == want, f"__{nm}{w}"


def test_watchdog_and_bounds_check_settings_read_the_environment_once(monkeypatch):
    """Read at the first launch (or after set_*(None)), not at every launch: 1.4 µs of a tiny launch."""
    from aclnn_py.emulator import compiler
    import os
    before = os.environ.get("ACLNN_PY_EMU_WATCHDOG_S"), os.environ.get("ACLNN_PY_EMU_CHECK_BOUNDS")
    monkeypatch.setenv("ACLNN_PY_EMU_WATCHDOG_S", "12.5")
    monkeypatch.setenv("ACLNN_PY_EMU_CHECK_BOUNDS", "1")
    try:
        emulator.set_watchdog(None)
        emulator.set_bounds_check(None)
        assert compiler.watchdog_seconds() == 12.5 and compiler._bounds_check_enabled()
        monkeypatch.setenv("ACLNN_PY_EMU_WATCHDOG_S", "7")
        assert compiler.watchdog_seconds() == 12.5                     # cached
        emulator.set_watchdog(3)
        assert compiler.watchdog_seconds() == 3                         # an explicit setting wins
        emulator.set_watchdog(None)
        assert compiler.watchdog_seconds() == 7                         # None reads the environment again
    finally:
        monkeypatch.undo()
        emulator.set_watchdog(None)
        emulator.set_bounds_check(None)
    if before == (None, None):
        assert compiler.watchdog_seconds() == 300 and not compiler._bounds_check_enabled()


def test_volatile_rewrite_leaves_string_literals_alone():
    from aclnn_py.emulator.compiler import _rewrite_volatile
    src = 'printf("volatile int* %d\\n", 1); volatile int* p = q; char c = \'"\'; float volatile *s;'
    out = _rewrite_volatile(src)
    assert '"volatile int* %d\\n"' in out and "char c = '\"'" in out
    flat = " ".join(out.split())
    assert "::__emu::vptr<int> p = q;" in flat and "::__emu::vptr<float> s;" in flat
    assert out.count("\n") == src.count("\n")


def test_pragma_unroll_becomes_gcc_unroll():
    from aclnn_py.emulator.compiler import _rewrite_unroll
    src = ("#pragma unroll\nfor(;;){}\n  #  pragma unroll 4\n  while (1);\n#pragma unroll 1\n# 7 \"k.cu\"\n\n do {} while (0);\n"
           "#pragma unroll (N)\nfor(;;);\n#pragma unrolled\nfor(;;);\n#pragma unroll\n s += 1;\n#pragma unroll\nformat(x);\n"
           "#pragma unroll\n#pragma unroll 2\nfor(;;);\n")
    out = _rewrite_unroll(src).splitlines()
    assert out[0] == "#pragma GCC unroll 16"            # count-less: small constant loops unroll fully
    assert out[2] == "  #pragma GCC unroll 4"
    assert out[4] == "#pragma GCC unroll 1"              # `1`: not unrolled, as on a GPU
    assert out[8] == "#pragma unroll (N)"                # a count expression is left to g++
    assert out[10] == "#pragma unrolled"
    # not before a loop: left alone (g++ rejects `#pragma GCC unroll` there; nvcc only warns)
    assert out[12] == "#pragma unroll" and out[14] == "#pragma unroll" and out[16] == "#pragma unroll"
    assert out[17] == "#pragma GCC unroll 2"
    assert len(out) == src.count("\n")


UNROLL_SRC = r'''
template <int N>
__device__ float dot(const float* a, const float* b) {
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < N; ++i) s += a[i] * b[i];
  return s;
}
extern "C" __global__ void unrolled(const float* a, const float* b, float* out, int n) {
  const int t = threadIdx.x;
  float r[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) r[k] = a[t * 8 + k];
  float v = dot<8>(r, b);
#pragma unroll 4
  for (int i = 0; i < n; ++i) v += a[i];          // a trip count known only at run time
#pragma unroll 1
  for (int i = 0; i < 3; ++i) v *= 0.5f;
#pragma unroll (2 + 1)
  for (int i = 0; i < 5; ++i) v += 1.f;
#pragma unroll
  out[t] = v;                                      // not a loop: nvcc warns, g++ must not fail
}
'''


@pytest.mark.parametrize("n", [0, 1, 7, 13])
def test_unrolled_loops_compute_the_same(d, n):
    mod = A.RawModule(code=UNROLL_SRC)
    rng = np.random.default_rng(n)
    a = rng.integers(-8, 8, 32 * 8).astype(np.float32)
    b = rng.integers(-8, 8, 8).astype(np.float32)
    pa, pb, po = d.up(a), d.up(b), d.up(np.zeros(32, np.float32))
    mod.get_function("unrolled")((1,), (32,), (pa, pb, po, np.int32(n)))
    assert acl.rt.synchronize_device() == 0
    ref = (a.reshape(32, 8) @ b + a[:n].sum()) * 0.125 + 5.0
    np.testing.assert_array_equal(d.down(po, 32, np.float32), ref.astype(np.float32))


PARAM_SRC = r'''
struct Pair { int a; float b; };
extern "C" __global__ void mutate_params(int n, Pair q, int* out) {   // plain loop: no barrier
  n += threadIdx.x;                   // a thread's parameters are its own copies, as on a GPU
  q.a *= 2;
  out[blockIdx.x * blockDim.x + threadIdx.x] = n + q.a;
}
'''


def test_a_thread_that_changes_its_parameters_changes_only_its_own_copy(d):
    mod = A.RawModule(code=PARAM_SRC)
    po = d.up(np.zeros(64, np.int32))
    q = np.zeros(1, dtype=[("a", np.int32), ("b", np.float32)])
    q["a"] = 5
    mod.get_function("mutate_params")((2,), (32,), (np.int32(100), q, po))
    assert acl.rt.synchronize_device() == 0
    want = 100 + np.tile(np.arange(32), 2) + 10
    np.testing.assert_array_equal(d.down(po, 64, np.int32), want.astype(np.int32))


# --- intrinsics a probe of the CUDA intrinsic list found missing: __dp4a / __dp2a_lo / __dp2a_hi (sm_61+
# integer dot products), __uni_sync, cyl_bessel_i0f / i1f, sm_90's float2 / float4 atomicAdd ---

INTRINSICS = r'''
extern "C" __global__ void dots(const int* a, const int* b, const int* c, int* out, unsigned* uout, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[4 * i] = __dp4a(a[i], b[i], c[i]);
    out[4 * i + 1] = __dp2a_lo(a[i], b[i], c[i]);
    out[4 * i + 2] = __dp2a_hi(a[i], b[i], c[i]);
    char4 ca = *reinterpret_cast<const char4*>(a + i), cb = *reinterpret_cast<const char4*>(b + i);
    out[4 * i + 3] = __dp4a(ca, cb, c[i]);
    const unsigned ua = a[i], ub = b[i], uc = c[i];
    uout[3 * i] = __dp4a(ua, ub, uc);
    uout[3 * i + 1] = __dp2a_lo(ua, ub, uc);
    uout[3 * i + 2] = __dp2a_hi(ua, ub, uc);
}
extern "C" __global__ void uni(const int* p, int* out) {
    int r = __uni_sync(0xffffffffu, p[threadIdx.x]);
    if (threadIdx.x < 16) r += 2 * __uni_sync(0x0000ffffu, p[threadIdx.x]);
    else r += 4 * __uni_sync(0xffff0000u, p[threadIdx.x]);
    out[threadIdx.x] = r;
}
extern "C" __global__ void bessel(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { out[2 * i] = cyl_bessel_i0f(x[i]); out[2 * i + 1] = cyl_bessel_i1f(x[i]); }
}
'''


def _dp_ref(a, b, c, signed):
    """__dp4a / __dp2a_lo / __dp2a_hi in int64, wrapped to 32 bits."""
    A8 = a.view(np.int8 if signed else np.uint8).reshape(-1, 4).astype(np.int64)
    B8 = b.view(np.int8 if signed else np.uint8).reshape(-1, 4).astype(np.int64)
    A16 = a.view(np.int16 if signed else np.uint16).reshape(-1, 2).astype(np.int64)
    c64 = c.view(np.int32 if signed else np.uint32).astype(np.int64)
    out = [c64 + (A8 * B8).sum(1), c64 + (A16 * B8[:, :2]).sum(1), c64 + (A16 * B8[:, 2:]).sum(1)]
    return [(o & 0xffffffff).astype(np.uint32).view(np.int32 if signed else np.uint32) for o in out]


def test_dp4a_and_dp2a_signed_and_unsigned(d):
    rng = np.random.default_rng(7)
    n = 1000
    a, b, c = (rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32) for _ in range(3))
    a[:4] = [-1, 0x7f7f7f7f, -0x7f7f7f80, 0x00ff00ff]   # extremes of every byte / halfword
    b[:4] = [-1, -0x7f7f7f80, 0x7f7f7f7f, -0x01000100]
    mod = A.RawModule(code=INTRINSICS)
    pa, pb, pc, po, pu = d.up(a), d.up(b), d.up(c), d.zeros(4 * n, np.int32), d.zeros(3 * n, np.uint32)
    mod.get_function("dots")((4,), (256,), (pa, pb, pc, po, pu, np.int32(n)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    got, ugot = d.down(po, 4 * n, np.int32).reshape(n, 4), d.down(pu, 3 * n, np.uint32).reshape(n, 3)
    s4, s2lo, s2hi = _dp_ref(a, b, c, True)
    u4, u2lo, u2hi = _dp_ref(a.view(np.uint32), b.view(np.uint32), c.view(np.uint32), False)
    np.testing.assert_array_equal(got[:, 0], s4)
    np.testing.assert_array_equal(got[:, 1], s2lo)
    np.testing.assert_array_equal(got[:, 2], s2hi)
    np.testing.assert_array_equal(got[:, 3], s4)       # the char4 overload
    np.testing.assert_array_equal(ugot[:, 0], u4)
    np.testing.assert_array_equal(ugot[:, 1], u2lo)
    np.testing.assert_array_equal(ugot[:, 2], u2hi)


def test_uni_sync_full_and_partial_masks(d):
    p = np.ones(32, np.int32)
    p[20] = 0   # lanes 0..15 agree, the whole warp does not
    mod = A.RawModule(code=INTRINSICS)
    pp, po = d.up(p), d.zeros(32, np.int32)
    mod.get_function("uni")((1,), (32,), (pp, po))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    got = d.down(po, 32, np.int32)
    np.testing.assert_array_equal(got[:16], 2)     # full mask: 0; lanes 0..15 agree: 1 (times 2)
    np.testing.assert_array_equal(got[16:], 0)     # lanes 16..31 do not (lane 20)
    p[20] = 1
    pp = d.up(p)
    mod.get_function("uni")((1,), (32,), (pp, po))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(po, 32, np.int32), [3] * 16 + [5] * 16)


def test_cyl_bessel_i0f_i1f_match_float64(d):
    x = np.concatenate([np.linspace(-20, 20, 801), [0.0, 1e-6, -1e-6, 50.0]]).astype(np.float32)
    mod = A.RawModule(code=INTRINSICS)
    px, po = d.up(x), d.zeros(2 * x.size, np.float32)
    mod.get_function("bessel")((4,), (256,), (px, po, np.int32(x.size)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    got = d.down(po, 2 * x.size, np.float32).reshape(-1, 2)
    x64 = x.astype(np.float64)
    i0 = np.i0(x64)
    # I1 by its power series (converges for every |x| here in float64 well below float32 rounding)
    k = np.arange(80, dtype=np.float64)
    from math import lgamma
    lg = np.array([lgamma(j + 1) + lgamma(j + 2) for j in k])
    with np.errstate(divide="ignore"):
        terms = np.exp((2 * k[None, :] + 1) * np.log(np.abs(x64[:, None]) / 2) - lg[None, :])
    i1 = np.sign(x64) * np.nan_to_num(terms).sum(1)
    np.testing.assert_allclose(got[:, 0], i0, rtol=4e-7)
    np.testing.assert_allclose(got[:, 1], i1, rtol=4e-7, atol=1e-30)


VEC_ATOMIC = r'''
extern "C" __global__ void vadd(float2* p2, float4* p4) {
    atomicAdd(p2, make_float2(1.f, 2.f));
    atomicAdd(p4 + (threadIdx.x & 1), make_float4(1.f, 2.f, 3.f, 4.f));
}
'''


def test_vector_atomic_add_needs_sm90_as_on_a_gpu(d):
    with pytest.raises(emulator.CompileException, match="atomicAdd"):
        A.RawModule(code=VEC_ATOMIC).get_function("vadd")   # sm_80 (the default): nvcc has no such overload
    mod = A.RawModule(code=VEC_ATOMIC, options=("-arch=sm_90",))
    p2, p4 = d.zeros(2, np.float32), d.zeros(8, np.float32)
    mod.get_function("vadd")((3,), (64,), (p2, p4))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(p2, 2, np.float32), [192, 384])
    np.testing.assert_array_equal(d.down(p4, 8, np.float32), [96, 192, 288, 384] * 2)


def test_address_space_predicates_are_a_clear_compile_error():
    code = 'extern "C" __global__ void k(float* p) { if (__isShared(p)) p[0] = 1.f; }'
    with pytest.raises(emulator.CompileException, match="address-space predicates"):
        A.RawModule(code=code).get_function("k")


VIDEO_PTX = r'''
#define V(name, ins) __device__ unsigned name(unsigned a, unsigned b, unsigned c) { \
    unsigned r; asm(ins " %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
V(sad4, "vabsdiff4.u32.u32.u32.add")
V(sad2, "vabsdiff2.u32.u32.u32.add")
V(ssad4, "vabsdiff4.u32.s32.s32.add")
V(add4, "vadd4.u32.u32.u32")
V(adds4, "vadd4.s32.s32.s32.sat")
V(addu4, "vadd4.u32.u32.u32.sat")
V(sub2, "vsub2.s32.s32.s32.sat")
V(avg4, "vavrg4.u32.u32.u32")
V(min4, "vmin4.s32.s32.s32")
V(max2, "vmax2.u32.u32.u32")
V(sum4, "vadd4.u32.u32.u32.add")
extern "C" __global__ void video(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* o, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned x = a[i], y = b[i], z = c[i];
    unsigned* r = o + 22 * i;
    r[0] = sad4(x, y, z);  r[1] = __vabsdiffu4(x, y);
    r[2] = sad2(x, y, z);  r[3] = __vabsdiffu2(x, y);
    r[4] = ssad4(x, y, z); r[5] = __vabsdiffs4(x, y);
    r[6] = add4(x, y, z);  r[7] = __vadd4(x, y);
    r[8] = adds4(x, y, z); r[9] = __vaddss4(x, y);
    r[10] = addu4(x, y, z); r[11] = __vaddus4(x, y);
    r[12] = sub2(x, y, z); r[13] = __vsubss2(x, y);
    r[14] = avg4(x, y, z); r[15] = __vavgu4(x, y);
    r[16] = min4(x, y, z); r[17] = __vmins4(x, y);
    r[18] = max2(x, y, z); r[19] = __vmaxu2(x, y);
    r[20] = sum4(x, y, z); r[21] = __vsadu4(x, y);
}
'''


def test_ptx_simd_video_instructions(d):
    """The SIMD video instructions in inline PTX (cuda-samples stereoDisparity's `__usad4` is
    `vabsdiff4.u32.u32.u32.add`; it was a compile error) give what the CUDA SIMD intrinsics give: the lanes
    wrapped, saturated, or (.add) summed into c; checked lane by lane against a NumPy model too."""
    mod = A.RawModule(code=VIDEO_PTX)
    rng = np.random.default_rng(77)
    n = 4096
    a, b, c = (rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32) for _ in range(3))
    a[:8] = [0, 0xFFFFFFFF, 0x80808080, 0x7F7F7F7F, 0xFF00FF00, 0x00FF00FF, 0x01020304, 0x80007FFF]
    b[:8] = [0xFFFFFFFF, 0, 0x7F7F7F7F, 0x80808080, 0x00FF00FF, 0xFF00FF00, 0x04030201, 0x7FFF8000]
    po = d.zeros(22 * n, np.uint32)
    mod.get_function("video")((n // 256,), (256,), (d.up(a), d.up(b), d.up(c), po, np.int32(n)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    r = d.down(po, 22 * n, np.uint32).reshape(n, 22).astype(np.int64)
    lanes = lambda v, k, s: (((v.astype(np.int64)[:, None] >> (32 // k * np.arange(k))) & (2 ** (32 // k) - 1))
                             if not s else (((v.astype(np.int64)[:, None] >> (32 // k * np.arange(k))) + 2 ** (32 // k - 1))
                                            & (2 ** (32 // k) - 1)) - 2 ** (32 // k - 1))
    pack = lambda l, k: ((l & (2 ** (32 // k) - 1)) << (32 // k * np.arange(k))).sum(1)
    ua4, ub4, sa4, sb4 = lanes(a, 4, 0), lanes(b, 4, 0), lanes(a, 4, 1), lanes(b, 4, 1)
    ua2, ub2, sa2, sb2 = lanes(a, 2, 0), lanes(b, 2, 0), lanes(a, 2, 1), lanes(b, 2, 1)
    cc = c.astype(np.int64)
    want = {0: (cc + np.abs(ua4 - ub4).sum(1)) & 0xFFFFFFFF, 2: (cc + np.abs(ua2 - ub2).sum(1)) & 0xFFFFFFFF,
            4: (cc + np.abs(sa4 - sb4).sum(1)) & 0xFFFFFFFF, 6: pack(ua4 + ub4, 4),
            8: pack(np.clip(sa4 + sb4, -128, 127), 4), 10: pack(np.clip(ua4 + ub4, 0, 255), 4),
            12: pack(np.clip(sa2 - sb2, -32768, 32767), 2), 14: pack((ua4 + ub4 + 1) >> 1, 4),
            16: pack(np.minimum(sa4, sb4), 4), 18: pack(np.maximum(ua2, ub2), 2),
            20: (cc + (ua4 + ub4).sum(1)) & 0xFFFFFFFF}
    for k, w in want.items():
        np.testing.assert_array_equal(r[:, k], w, err_msg=f"column {k}")
    # against the intrinsics: the .add forms with c as the lanes' plain sum
    np.testing.assert_array_equal(r[:, 0], (cc + lanes(r[:, 1].astype(np.uint32), 4, 0).sum(1)) & 0xFFFFFFFF)
    np.testing.assert_array_equal(r[:, 2], (cc + lanes(r[:, 3].astype(np.uint32), 2, 0).sum(1)) & 0xFFFFFFFF)
    for k in (6, 8, 10, 12, 14, 16, 18):
        np.testing.assert_array_equal(r[:, k], r[:, k + 1], err_msg=f"column {k}")


def test_ptx_video_lane_selectors_are_a_clear_compile_error():
    code = r'''extern "C" __global__ void k(unsigned* p) {
        unsigned r; asm("vabsdiff4.u32.u32.u32.add %0, %1.b0000, %2, %3;" : "=r"(r) : "r"(p[0]), "r"(p[1]), "r"(p[2]));
        p[3] = r; }'''
    with pytest.raises(emulator.CompileException, match="vabsdiff4"):
        A.RawModule(code=code).get_function("k")


def test_compile_log_stream_gets_the_unused_variable_warning(d):
    """CuPy's test_compile_kernel: NVRTC writes `variable "j" was declared but never referenced` to the log stream of
    compile(); the emulator writes g++'s warning for it (it wrote nothing before), and nothing for clean code or
    for its own headers."""
    import io
    code = r'''extern "C" __global__ void k(float* y) {
    int j;
    y[threadIdx.x] = 1.f;
}'''
    log = io.StringIO()
    A.RawKernel(code, "k").compile(log_stream=log)
    assert "kernel.cu:2:" in log.getvalue() and "warning" in log.getvalue() and "j" in log.getvalue(), log.getvalue()
    log = io.StringIO()
    A.RawModule(code=code.replace("    int j;\n", "")).compile(log_stream=log)
    assert log.getvalue() == "", log.getvalue()
    assert emulator.compile_log("__global__ void k(int* p) { int a = 3; p[0] = 1; }").count("warning") == 1


def test_cufft_header_gives_its_types(d):
    """<cufft.h> (cuda-samples' oceanFFT kernels include it for cufftComplex): cuFFT's device-side types, cufftComplex
    being float2 as in CUDA; it was "No such file" before."""
    code = r'''#include <cufft.h>
extern "C" __global__ void k(cufftComplex* c, cufftReal* r, int* info) {
    int i = threadIdx.x;
    c[i] = cuCmulf(c[i], make_cuFloatComplex(r[i], 0.f));
    if (i == 0) { info[0] = sizeof(cufftComplex); info[1] = sizeof(cufftDoubleComplex); info[2] = CUFFT_C2C;
                  info[3] = CUFFT_FORWARD; info[4] = (int)CUFFT_SUCCESS; }
}'''
    c = np.arange(16, dtype=np.float32).reshape(8, 2)
    r = np.arange(8, dtype=np.float32) + 1
    pc, pi = d.up(c), d.zeros(5, np.int32)
    A.RawModule(code=code).get_function("k")((1,), (8,), (pc, d.up(r), pi))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(pc, 16, np.float32).reshape(8, 2), c * r[:, None])
    np.testing.assert_array_equal(d.down(pi, 5, np.int32), [8, 16, 0x29, -1, 0])


def test_user_macros_do_not_reach_the_emulator_headers(d):
    """A -D option with a plain name (PolyBench's `-DN=83`, `-DM=...`) or a `#define N 64` before an #include of
    cooperative_groups.h / cub / curand / mma reached the emulator's headers, whose code uses such names (a
    template parameter N, a local `me`): g++ errors inside cuda_emu.h. Every emulator header now hides the
    user's macros on entry and restores them on exit; the kernel still sees them."""
    code = ('#define me 5\n#include <cooperative_groups.h>\n#include <cub/cub.cuh>\n#include <mma.h>\n'
            '#include <curand_kernel.h>\n'
            'extern "C" __global__ void k(int* o) { o[threadIdx.x] = N * 100 + M * 10 + me; }\n')
    mod = A.RawModule(code=code, options=("-DN=7", "-D", "M=3"))
    p = d.zeros(32, np.int32)
    mod.get_function("k")((1,), (32,), (p,))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(d.down(p, 32, np.int32), np.full(32, 735, np.int32))
