"""Kernels that misbehave on the emulator (issue 9, item 11): a null write, an integer division by
zero, unbounded recursion and an infinite loop are caught on the worker and reported at the next
synchronize as ACL_ERROR_RT_AICORE_EXCEPTION (507015) with the kernel, the block, the thread and the
address; the process stays usable. Out-of-bounds accesses are found in the bounds-check debug mode."""
from __future__ import annotations

import ctypes
import re
import time
from pathlib import Path

import numpy as np
import pytest

import aclnn_py as A
from aclnn_py import acl, emulator
from aclnn_py.status import AclError as E

pytestmark = pytest.mark.skipif(A.acl._state.state.backend.name != "host" if A.acl._state.state.initialized else False,
                                reason="emulator only")

SRC = (Path(__file__).parent / "emulator_kernels" / "faults.cu").read_text()


@pytest.fixture(scope="module")
def mod():
    return A.RawModule(code=SRC, options=("-std=c++17",))


@pytest.fixture
def stream():
    s, ret = acl.rt.create_stream()
    assert ret == 0
    yield s
    assert acl.rt.destroy_stream(s) == 0


def dev(nbytes: int) -> int:
    p, ret = acl.rt.malloc(nbytes, 0)
    assert ret == 0
    return p


def upload(a: np.ndarray) -> int:
    p = dev(a.nbytes)
    assert acl.rt.memcpy(p, a.nbytes, a.ctypes.data, a.nbytes, 1) == 0
    return p


def download(p: int, like: np.ndarray) -> np.ndarray:
    out = np.empty_like(like)
    assert acl.rt.memcpy(out.ctypes.data, out.nbytes, p, out.nbytes, 2) == 0
    return out


def expect_fault(stream, *patterns: str) -> str:
    assert acl.rt.synchronize_stream(stream) == E.ACL_ERROR_RT_AICORE_EXCEPTION
    msg = acl.get_recent_err_msg()
    for p in patterns:
        assert re.search(p, msg), (p, msg)
    assert acl.rt.synchronize_stream(stream) == 0   # reported once
    return msg


def still_usable(mod, stream):
    x = np.arange(64, dtype=np.float32)
    px, py = upload(x), dev(x.nbytes)
    mod.get_function("in_bounds")((1,), (64,), (px, py, np.int32(64)), stream=stream)
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(download(py, x), 2 * x)
    acl.rt.free(px)
    acl.rt.free(py)


def test_null_pointer_write(mod, stream):
    p = dev(64 * 4)
    mod.get_function("null_write")((2,), (64,), (p, np.int32(0)), stream=stream)
    expect_fault(stream, r"null_write", r"block \(1,0,0\)", r"thread \(3,0,0\)",
                 r"illegal memory write at address 0x0000000000000000", "SIGSEGV")
    still_usable(mod, stream)
    acl.rt.free(p)


def test_a_trap_in_a_vectorised_plain_loop_names_its_thread(mod, stream):
    """g++ vectorises this block's loop across CUDA threads (threadIdx is not stored per thread):
    the emulator runs the faulting block again thread by thread to name the thread."""
    n = 3 * 256
    x = np.arange(n, dtype=np.float32)
    px, py = upload(x), upload(np.zeros(n, np.float32))
    mod.get_function("axpy_one_bad")((3,), (256,), (np.float32(2), px, py, np.int32(n), np.int32(2 * 256 + 77)),
                                     stream=stream)
    expect_fault(stream, r"axpy_one_bad", r"block \(2,0,0\)", r"thread \(77,0,0\)", r"illegal memory read", "SIGSEGV")
    still_usable(mod, stream)
    acl.rt.free(px)
    acl.rt.free(py)


def test_the_rerun_that_names_the_thread_reports_nothing_of_its_own(mod, stream):
    flag, out, bad = dev(64 * 4), dev(64 * 4), upload(np.zeros(1, np.uint64))
    assert acl.rt.memset(flag, 64 * 4, 0, 64 * 4) == 0
    mod.get_function("assert_then_fault")((1,), (64,), (flag, out, bad), stream=stream)
    # thread 37's own flag may be set already (the first run was vectorised), so the re-run's assert
    # stops it before its load: then the thread stays unnamed, but the fault is still the report
    msg = expect_fault(stream, r"assert_then_fault",
                       r"illegal memory read at address 0x0+ in (thread \(37,0,0\)|one of its threads)")
    assert "assertion" not in msg
    for p in (flag, out, bad):
        acl.rt.free(p)


def test_a_trap_that_does_not_recur_is_reported_without_a_thread(mod, stream):
    p = dev(64 * 4)
    mod.get_function("trap_once")((1,), (64,), (p,), stream=stream)
    msg = expect_fault(stream, r"trap_once", r"block \(0,0,0\)", r"illegal memory write at address 0x0+14 in one "
                       r"of its threads \(the trap did not recur")
    assert "thread (" not in msg
    still_usable(mod, stream)
    acl.rt.free(p)


def test_integer_division_by_zero(mod, stream):
    a = np.arange(1, 33, dtype=np.int32)
    pa, po = upload(a), dev(a.nbytes)
    mod.get_function("int_div_zero")((1,), (32,), (pa, po, np.int32(1)), stream=stream)
    expect_fault(stream, r"int_div_zero", r"integer division by zero", r"thread \(5,0,0\)")
    still_usable(mod, stream)


UNDEFINED_OPS = r"""
extern "C" __global__ void mask_bits(const unsigned* bits, unsigned* out) {    // Rodinia huffman's (1 << n) - 1
    const int i = threadIdx.x;
    out[i] = (1u << bits[i]) - 1u;
}
extern "C" __global__ void shr_signed(const int* v, const int* s, int* out) {
    const int i = threadIdx.x;
    out[i] = v[i] >> s[i];
}
extern "C" __global__ void chained(const unsigned* s, unsigned* out) {  // (a << b) << c, both rewritten
    const int i = threadIdx.x;
    out[i] = 1u << 1u << s[i];
}
template <int K> struct Plus { static __device__ unsigned of(unsigned v) { return v + K; } };
extern "C" __global__ void next_to_a_template(const unsigned* s, unsigned* out) {
    // a `<` right of the shift may open a template's arguments: the loader leaves this shift as written
    out[threadIdx.x] = 1u << Plus<0>::of(s[threadIdx.x]);
}
extern "C" __global__ void to_unsigned(const float* x, unsigned* out) { out[threadIdx.x] = (unsigned)x[threadIdx.x]; }
extern "C" __global__ void to_int(const float* x, int* out) { out[threadIdx.x] = static_cast<int>(x[threadIdx.x]); }
extern "C" __global__ void to_uchar(const float* x, unsigned char* out) { out[threadIdx.x] = x[threadIdx.x]; }  // implicit
extern "C" __global__ void saturating(const float* x, int* out) { out[threadIdx.x] = __float2int_rz(x[threadIdx.x]); }
"""


@pytest.fixture(scope="module")
def ub():
    return A.RawModule(code=UNDEFINED_OPS)


@pytest.mark.parametrize("kernel,args,bad", [
    ("next_to_a_template", [np.array([1, 2, 3, 4, 40, 0, 5, 7], np.uint32)], 4),   # left as written: checked
    ("to_unsigned", [np.array([0.5, 7, 1e9, 5e9, 1, 2, -5.0, 3], np.float32)], 3),      # 5e9 > UINT_MAX
    ("to_unsigned", [np.array([0.5, 7, 1e9, 4, 1, 2, -5.0, 3], np.float32)], 6),        # -5.0: 0 on a GPU
    ("to_int", [np.array([0, 1, 2, 3, 4, np.nan, 6, 7], np.float32)], 5),              # NaN: 0 on a GPU
    ("to_int", [np.array([0, 1, 3e9, 3, 4, 5, 6, 7], np.float32)], 2),
    ("to_uchar", [np.array([0, 255.5, 256.0, 3, 4, 5, 6, 7], np.float32)], 2),         # implicit conversion
])
def test_conversions_and_unrewritten_shifts_a_gpu_defines_are_reported_not_computed(ub, stream, kernel, args, bad):
    """C++ leaves a float -> integer conversion out of range (NaN too), and a shift by a negative count
    or by the width or more, undefined; a GPU saturates the conversion (cvt.rzi) and clamps the shift
    (shl/shr), x86 computes other numbers ((int)NaN == INT_MIN; 1u << 32 == 1). Shifts the loader
    rewrites get the GPU's result (next test); a conversion, and a shift it leaves as written (a
    chain), stop the launch at the first such operation, naming the thread."""
    ptrs = [upload(a) for a in args]
    po = dev(64)
    ub.get_function(kernel)((1,), (8,), (*ptrs, po), stream=stream)
    expect_fault(stream, kernel, r"undefined operation in thread \(%d,0,0\)" % bad, r"A GPU clamps such a shift",
                 r"saturates such a conversion")
    for p in (*ptrs, po):
        acl.rt.free(p)


def test_shifts_give_a_gpus_result_for_any_count(ub, stream):
    """`(1u << n) - 1` for n = 0..40 (Rodinia huffman's mask with 32-bit codes; cuda-samples'
    simpleAtomicIntrinsics ORs `1 << tid` for tid up to 255) and `v >> n` for negative and too large
    counts: PTX shl/shr clamp the count (0, or -1 for >> of a negative value); x86 took it mod 32."""
    bits = np.arange(41, dtype=np.uint32)
    pb, po = upload(bits), dev(4 * 64)
    ub.get_function("mask_bits")((1,), (41,), (pb, po), stream=stream)
    assert acl.rt.synchronize_stream(stream) == 0, acl.get_recent_err_msg()
    want = np.where(bits < 32, (1 << np.minimum(bits, 31).astype(np.uint64)) - 1, 0xFFFFFFFF).astype(np.uint32)
    np.testing.assert_array_equal(download(po, want), want)
    v = np.array([-8, 8, -1, 5, -8, 8, 7, -7, 1, -1], np.int32)
    n = np.array([1, 2, 3, -1, 32, 32, 33, 100, 31, -5], np.int32)
    pv, pn = upload(v), upload(n)
    ub.get_function("shr_signed")((1,), (10,), (pv, pn, po), stream=stream)
    assert acl.rt.synchronize_stream(stream) == 0, acl.get_recent_err_msg()
    inr = (n >= 0) & (n < 32)
    want = np.where(inr, v >> np.clip(n, 0, 31), np.where(v < 0, -1, 0)).astype(np.int32)
    np.testing.assert_array_equal(download(po, want), want)
    ub.get_function("chained")((1,), (41,), (pb, po), stream=stream)   # (1u << 1u) << n
    assert acl.rt.synchronize_stream(stream) == 0, acl.get_recent_err_msg()
    want = np.where(bits < 31, 2 << np.minimum(bits, 30).astype(np.uint64), 0).astype(np.uint32)
    np.testing.assert_array_equal(download(po, want), want)
    for p in (pb, po, pv, pn):
        acl.rt.free(p)


def test_shifts_and_conversions_in_range_and_the_saturating_intrinsics_run(ub, stream):
    bits = np.arange(32, dtype=np.uint32)
    pb, po = upload(bits), dev(128)
    ub.get_function("mask_bits")((1,), (32,), (pb, po), stream=stream)
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(download(po, bits), ((1 << bits.astype(np.uint64)) - 1).astype(np.uint32))
    x = np.array([0.5, -2.5, np.nan, 3e9, -3e9, np.inf, -np.inf, 7.9], np.float32)
    px = upload(x)
    ub.get_function("saturating")((1,), (8,), (px, po), stream=stream)
    assert acl.rt.synchronize_stream(stream) == 0
    want = np.array([0, -2, 0, 2**31 - 1, -2**31, 2**31 - 1, -2**31, 7], np.int32)
    np.testing.assert_array_equal(download(po, want), want)
    for p in (pb, po, px):
        acl.rt.free(p)


BIG_FRAME = r"""
// Per-thread locals larger than the emulator's fiber stack (128 KiB): legal CUDA (local memory), and what
// an unrolled WMMA tile loop needs (cuda-samples dmmaTensorCoreGemm's compute_dgemm, 128-160 KiB).
template <int N>
__global__ void big_frame(float* out) {
    volatile float buf[N];
    for (int i = 0; i < 64; i++) buf[i] = threadIdx.x * 1000 + i;
    __syncthreads();                                  // fibers: each thread on its own stack
    float s = 0;
    for (int i = 0; i < 64; i++) s += buf[i] - (threadIdx.x * 1000 + i);
    out[threadIdx.x] = s;
}
"""


@pytest.mark.parametrize("floats", [34000, 70000])
def test_a_frame_past_the_stack_is_a_stack_overflow_not_a_wild_write(stream, floats):
    """A frame of 133 (275) KiB moved the stack pointer past the one guard page: the stores landed in the
    next fiber's stack (another thread's locals) and the report was an "illegal memory write ... address
    not mapped" naming a wrong thread. The emulator now probes every page of a large frame in order."""
    name = f"big_frame<{floats}>"
    mod = A.RawModule(code=BIG_FRAME, name_expressions=[name])
    p = dev(32 * 4)
    mod.get_function(name)((1,), (32,), (p,), stream=stream)
    expect_fault(stream, r"stack overflow in thread \(0,0,0\)", r"ACLNN_PY_EMU_STACK_KB")
    acl.rt.free(p)


@pytest.mark.parametrize("kernel", ["deep_recursion", "deep_recursion_fibers"])
def test_unbounded_recursion_is_a_stack_overflow(mod, stream, kernel):
    p = upload(np.zeros(64, np.int32))
    emulator.set_watchdog(60)
    try:
        mod.get_function(kernel)((1,), (32,), (p,), stream=stream)
        expect_fault(stream, kernel, r"stack overflow")
    finally:
        emulator.set_watchdog(None)
    still_usable(mod, stream)


@pytest.mark.parametrize("kernel", ["forever", "forever_fibers"])
def test_infinite_loop_is_stopped_by_the_watchdog(mod, stream, kernel):
    flag = upload(np.zeros(1, np.int32))
    out = upload(np.zeros(64, np.int32))
    emulator.set_watchdog(0.5)
    try:
        t0 = time.monotonic()
        mod.get_function(kernel)((4,), (32,), (flag, out), stream=stream)
        msg = expect_fault(stream, kernel, r"watchdog")
        assert time.monotonic() - t0 < 30
        assert "0.5 s" in msg
    finally:
        emulator.set_watchdog(None)
    still_usable(mod, stream)


def test_watchdog_default_is_generous():
    assert emulator.watchdog_seconds() >= 60


def test_fault_with_default_stream_raw_kernel(mod):
    """CuPy-style use (stream=None): the fault is reported by synchronize_device, as a status."""
    p = dev(64 * 4)
    mod.get_function("null_write")((2,), (64,), (p, np.int32(0)))
    assert acl.rt.synchronize_device() == E.ACL_ERROR_RT_AICORE_EXCEPTION
    assert "null_write" in acl.get_recent_err_msg()
    assert acl.rt.synchronize_device() == 0
    acl.rt.free(p)


# ---- bounds-check debug mode ------------------------------------------------------------------
@pytest.fixture
def bounds():
    emulator.set_bounds_check(True)
    yield
    emulator.set_bounds_check(None)


def test_store_one_past_the_end_is_found(mod, stream, bounds):
    n = 100
    x = np.zeros(n, np.float32)
    p = upload(x)
    mod.get_function("store_past_end")((1,), (128,), (p, np.int32(n)), stream=stream)
    expect_fault(stream, r"store_past_end", r"out-of-bounds store", r"past the end", r"400-byte allocation",
                 r"argument 0")
    # the in-bounds part was still written back
    np.testing.assert_array_equal(download(p, x), np.ones(n, np.float32))


def test_store_before_the_start_is_found(mod, stream, bounds):
    p = upload(np.zeros(64, np.float32))
    mod.get_function("store_before_start")((1,), (64,), (p, np.int32(64)), stream=stream)
    expect_fault(stream, r"store_before_start", r"before the start")


def test_load_far_past_the_end_faults_with_the_argument(mod, stream, bounds):
    n = 1024
    px, py = upload(np.ones(n, np.float32)), dev(n * 4)
    mod.get_function("load_past_end")((4,), (256,), (px, py, np.int32(n), np.int32(4096)), stream=stream)
    expect_fault(stream, r"load_past_end", r"illegal memory read", r"past the end of the 4096-byte allocation",
                 r"argument 0")


def test_without_debug_mode_a_one_element_overrun_is_silent(mod, stream):
    """Documents the cost/benefit: the overrun lands in the allocation's slack and is not seen."""
    p = upload(np.zeros(100, np.float32))
    mod.get_function("store_past_end")((1,), (128,), (p, np.int32(100)), stream=stream)
    assert acl.rt.synchronize_stream(stream) == 0


def test_bounds_mode_gives_the_same_results(mod, stream, bounds):
    still_usable(mod, stream)


def test_bounds_check_asks_the_process_backend_not_the_newest_one(mod, stream, bounds):
    """A throw-away HostBackend (a tool, a test) must not take over the bounds check's allocation lookup."""
    from aclnn_py.backends.host import HostBackend
    HostBackend()
    p = upload(np.zeros(64, np.float32))
    mod.get_function("store_before_start")((1,), (64,), (p, np.int32(64)), stream=stream)
    expect_fault(stream, r"store_before_start", r"before the start")


FIXED_SIZE_ARRAYS = r"""
// leimao's CUDA-GEMM-Optimization 06_* kernels, reduced: a thread's register tile `float a[1][8]`
// indexed with a count meant for another dimension. On a GPU the stores land in other locals (or
// nowhere) and the numbers come out silently wrong; the emulator stops at the first such index.
template <int TM>
__device__ void tile_sum(const float* x, float* out, int rows) {
    float a[TM][8];
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < 8; ++j) a[i][j] = x[i * 8 + j];
    float s = 0.f;
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < 8; ++j) s += a[i][j];
    out[threadIdx.x] = s;
}
extern "C" __global__ void register_tile(const float* x, float* out, int rows) { tile_sum<1>(x, out, rows); }
extern "C" __global__ void shared_past_its_end(const float* x, float* out, int n) {
    __shared__ float s[64];
    s[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x + n];
}
"""


@pytest.fixture(scope="module")
def arrays():
    return A.RawModule(code=FIXED_SIZE_ARRAYS)


def test_a_fixed_size_array_indexed_past_its_bounds_is_reported(arrays, stream):
    """A local or static shared array indexed out of its declared bounds is undefined behaviour a GPU
    runs on with other numbers (a sweep found leimao's 06_* GEMM kernels doing it, silently wrong here
    too); g++'s -fsanitize=bounds check stops the launch there, naming the thread. In-bounds runtime
    indices are unaffected."""
    x = np.arange(64, dtype=np.float32)
    px, po = upload(x), dev(64 * 4)
    arrays.get_function("register_tile")((1,), (4,), (px, po, np.int32(1)), stream=stream)
    assert acl.rt.synchronize_stream(stream) == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(download(po, x)[:4], np.full(4, x[:8].sum(), np.float32))
    arrays.get_function("register_tile")((1,), (4,), (px, po, np.int32(2)), stream=stream)
    expect_fault(stream, r"register_tile", r"undefined operation in thread \(0,0,0\)", r"out of its bounds")
    arrays.get_function("shared_past_its_end")((1,), (64,), (px, po, np.int32(0)), stream=stream)
    assert acl.rt.synchronize_stream(stream) == 0, acl.get_recent_err_msg()
    np.testing.assert_array_equal(download(po, x), x)
    arrays.get_function("shared_past_its_end")((1,), (64,), (px, po, np.int32(1)), stream=stream)   # s[64]
    expect_fault(stream, r"shared_past_its_end", r"undefined operation in thread \(63,0,0\)", r"out of its bounds")
    for p in (px, po):
        acl.rt.free(p)
