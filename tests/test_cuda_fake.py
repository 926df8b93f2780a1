"""The CUDA backend against a recording fake CuPy 14 (tests/fake_cupy.py): error mapping, stream rules,
synchronous copies, module building — everything issue 14 lists that a GPU-less machine can prove.

Each test swaps the process backend for ``CudaBackend(fake cupy)`` and restores the emulator after.
"""
import ctypes

import numpy as np
import pytest

import aclnn_py as A
import aclnn_py.backends as backends
from aclnn_py import acl, kernel_cache
from aclnn_py.acl._state import state
from aclnn_py.backends.cuda import CudaBackend
from aclnn_py.errors import DeviceError
from aclnn_py.opdef import REGISTRY
from aclnn_py.status import AclError, AclnnStatus

import fake_cupy

AICORE = AclError.ACL_ERROR_RT_AICORE_EXCEPTION


@pytest.fixture
def fake(monkeypatch):
    """(gpu controller, CudaBackend) installed as the process backend for one test."""
    gpu, cupy = fake_cupy.install(monkeypatch)
    be = CudaBackend(cupy)
    monkeypatch.setattr(backends, "_backend", be)
    # compiled families and cached plans hold the emulator's kernels: start empty, restore after
    monkeypatch.setattr(kernel_cache, "_modules", {})
    monkeypatch.setattr(kernel_cache, "_functions", {})
    for r in REGISTRY.values():
        r.plan_cache.clear()
    streams_before = set(state.streams)
    yield gpu, be
    for h in set(state.streams) - streams_before:      # what the test left behind lives on the fake
        state.streams.pop(h, None)
    for r in REGISTRY.values():
        r.plan_cache.clear()


def _malloc(n):
    p, ret = acl.rt.malloc(n, 0)
    assert ret == 0, acl.get_recent_err_msg()
    return p


# item 2: a compiler error in phase 1 is a status with the log ---------------------------------------

@pytest.mark.parametrize("where", ["compile", "get_function"])
def test_compile_exception_in_phase1_is_a_status_with_the_log(fake, where):
    gpu, be = fake
    log = "batch_norm.cu(12): error: identifier \"foo\" is undefined"
    exc = fake_cupy.CompileException(log, "src", "batch_norm.cu", ())
    gpu.fail[where] = exc
    x = _malloc(64)
    y = _malloc(64)
    tx = A.aclCreateTensor([2, 4, 1, 2], A.ACL_FLOAT, None, 0, A.ACL_FORMAT_NCHW, [2, 4, 1, 2], x)
    ty = A.aclCreateTensor([2, 4, 1, 2], A.ACL_FLOAT, None, 0, A.ACL_FORMAT_NCHW, [2, 4, 1, 2], y)
    ws, ex, ret = A.aclnnSoftmaxGetWorkspaceSize(tx, 1, ty)     # ACLNN_PY_STRICT=1: nothing may escape
    msg = acl.get_recent_err_msg() or ""
    assert ret == AclnnStatus.ACLNN_ERR_INNER_FIND_KERNEL_ERROR and ex is None
    assert log in msg, msg
    # nothing was cached: once the compiler is happy the same call succeeds
    ws, ex, ret = A.aclnnSoftmaxGetWorkspaceSize(tx, 1, ty)
    assert ret == 0, acl.get_recent_err_msg()
    A.aclDestroyAclOpExecutor(ex)
    for p in (x, y):
        assert acl.rt.free(p) == 0


def test_load_module_raises_aclnn_compile_exception_with_log(fake):
    gpu, be = fake
    from aclnn_py.raw import RawModule
    mod = RawModule(code="#error nope\n__global__ void k() {}", options=("-std=c++17",))
    with pytest.raises(A.raw.CompileException) as ei:
        mod.compile()
    assert "#error directive" in str(ei.value) and ei.value.backend == "nvrtc"


# item 3: launch errors in phase 2 are a status ----------------------------------------------------------

def _softmax_call():
    x, y = _malloc(64), _malloc(64)
    tx = A.aclCreateTensor([2, 4, 1, 2], A.ACL_FLOAT, None, 0, A.ACL_FORMAT_NCHW, [2, 4, 1, 2], x)
    ty = A.aclCreateTensor([2, 4, 1, 2], A.ACL_FLOAT, None, 0, A.ACL_FORMAT_NCHW, [2, 4, 1, 2], y)
    ws, ex, ret = A.aclnnSoftmaxGetWorkspaceSize(tx, 1, ty)
    assert ret == 0, acl.get_recent_err_msg()
    w = _malloc(ws) if ws else None
    return ex, ws, w, (x, y) + ((w,) if w else ())


@pytest.mark.parametrize("exc", [fake_cupy.CUDADriverError(701), TypeError("Unsupported type <class 'object'>"),
                                 fake_cupy.CUDADriverError(700)])
def test_launch_error_in_phase2_is_runtime_error(fake, exc):
    gpu, be = fake
    ex, ws, w, ptrs = _softmax_call()
    gpu.fail["launch"] = exc
    ret = A.aclnnSoftmax(w, ws, ex, None)
    assert ret == AclnnStatus.ACLNN_ERR_RUNTIME_ERROR, ret
    assert "launch failed" in acl.get_recent_err_msg()
    for p in ptrs:
        acl.rt.free(p)


# item 4: every runtime call returns a status; a sticky fault poisons all later calls, finalize works -----

def test_runtime_calls_map_cuda_errors(fake):
    gpu, be = fake
    gpu.fail["streamCreate"] = fake_cupy.CUDARuntimeError(fake_cupy.INVALID_VALUE)
    h, ret = acl.rt.create_stream()
    assert h == 0 and ret == AclError.ACL_ERROR_RT_PARAM_INVALID
    gpu.fail["eventCreate"] = fake_cupy.CUDARuntimeError(999)
    assert acl.rt.create_event()[1] == AICORE
    s, _ = acl.rt.create_stream()
    e, _ = acl.rt.create_event()
    gpu.fail["eventRecord"] = fake_cupy.CUDARuntimeError(fake_cupy.INVALID_HANDLE)
    assert acl.rt.record_event(e, s) == AclError.ACL_ERROR_RT_PARAM_INVALID
    gpu.fail["streamWaitEvent"] = fake_cupy.CUDARuntimeError(fake_cupy.INVALID_HANDLE)
    assert acl.rt.stream_wait_event(s, e) == AclError.ACL_ERROR_RT_PARAM_INVALID
    gpu.fail["eventQuery"] = fake_cupy.CUDARuntimeError(999)
    assert acl.rt.query_event_status(e)[1] == AICORE
    # elapsed time of an event never recorded: a status, never an exception
    e2, _ = acl.rt.create_event()
    assert acl.rt.event_elapsed_time(e, e2) == (0.0, AclError.ACL_ERROR_RT_EVENT_NOT_COMPLETE)
    p = _malloc(16)
    gpu.fail["memcpyAsync"] = fake_cupy.CUDARuntimeError(fake_cupy.INVALID_VALUE)
    assert acl.rt.memcpy_async(p, 16, p, 16, 3, s) == AclError.ACL_ERROR_RT_PARAM_INVALID
    gpu.fail["memsetAsync"] = fake_cupy.CUDARuntimeError(999)
    assert acl.rt.memset_async(p, 16, 0, 16, s) == AICORE
    gpu.fail["free"] = fake_cupy.CUDARuntimeError(999)
    assert acl.rt.free(p) == AICORE
    assert acl.rt.free(p) == AclError.ACL_ERROR_RT_MEMORY_FREE       # gone all the same
    for ev in (e, e2):
        assert acl.rt.destroy_event(ev) == 0
    assert acl.rt.destroy_stream(s) == 0


def test_sticky_fault_poisons_every_call_and_finalize_succeeds(fake):
    gpu, be = fake
    s, _ = acl.rt.create_stream()
    e, _ = acl.rt.create_event()
    p = _malloc(64)
    hp, ret = acl.rt.malloc_host(64)
    assert ret == 0
    ex, ws, w, ptrs = _softmax_call()
    assert A.aclnnSoftmax(w, ws, ex, s) == 0
    gpu.fault_next_sync(fake_cupy.ILLEGAL_ADDRESS)
    assert acl.rt.synchronize_stream(s) == AICORE
    assert "cudaErrorIllegalAddress" in acl.get_recent_err_msg()
    host = np.zeros(16, np.uint8)
    results = {
        "malloc": acl.rt.malloc(16, 0)[1], "malloc_host": acl.rt.malloc_host(16)[1],
        "free": acl.rt.free(p), "free_host": acl.rt.free_host(hp),
        "create_stream": acl.rt.create_stream()[1], "create_event": acl.rt.create_event()[1],
        "record_event": acl.rt.record_event(e, s), "stream_wait_event": acl.rt.stream_wait_event(s, e),
        "synchronize_event": acl.rt.synchronize_event(e), "query_event_status": acl.rt.query_event_status(e)[1],
        "event_elapsed_time": acl.rt.event_elapsed_time(e, e)[1],
        "memcpy": acl.rt.memcpy(host.ctypes.data, 16, ptrs[0], 16, 2),
        "memcpy_async": acl.rt.memcpy_async(ptrs[1], 16, ptrs[0], 16, 3, s),
        "memset": acl.rt.memset(ptrs[0], 16, 0, 16), "memset_async": acl.rt.memset_async(ptrs[0], 16, 0, 16, s),
        "synchronize_device": acl.rt.synchronize_device(), "destroy_stream": acl.rt.destroy_stream(s),
        "get_device_count": acl.rt.get_device_count()[1],
    }
    assert all(v == AICORE for v in results.values()), results
    ex2 = None
    x, y = ptrs[0], ptrs[1]
    tx = A.aclCreateTensor([2, 4, 1, 2], A.ACL_FLOAT, None, 0, A.ACL_FORMAT_NCHW, [2, 4, 1, 2], x)
    ty = A.aclCreateTensor([2, 4, 1, 2], A.ACL_FLOAT, None, 0, A.ACL_FORMAT_NCHW, [2, 4, 1, 2], y)
    _, ex2, ret = A.aclnnSoftmaxGetWorkspaceSize(tx, 1, ty)       # cached plan: phase 1 still answers
    assert ret == 0
    assert A.aclnnSoftmax(w, ws, ex2, None) == AclnnStatus.ACLNN_ERR_RUNTIME_ERROR
    # finalize (and reset_device) succeed; the process re-initialises; the device stays unusable
    assert acl.finalize() == 0
    assert acl.init() == 0
    assert acl.rt.set_device(0) == AICORE
    assert acl.rt.destroy_event(e) == AclError.ACL_ERROR_RT_INVALID_HANDLE      # finalize released it
    # device 0 current again, for the rest of the session (the emulator's, once the fixture restores it)
    state.active_devices.add(0)
    state.default_device = state.local.device = 0
    for q in ptrs:
        assert acl.rt.free(q) == AICORE        # the pointers die; the faulted device frees nothing


# item 7: the current stream, and one set of argument rules ------------------------------------------------

SRC = "extern \"C\" __global__ void k(float* x, float a, int n) {}"


def test_rawkernel_stream_none_uses_the_current_stream(fake):
    gpu, be = fake
    k = A.RawKernel(SRC, "k")
    cupy = __import__("cupy")
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        k((1,), (32,), (0, np.float32(1), np.int32(4)))
    assert gpu.launches[-1]["stream"] == s.ptr != 0
    k((1,), (32,), (0, np.float32(1), np.int32(4)))
    assert gpu.launches[-1]["stream"] == 0


BAD_ARGS = [object(), np.zeros(3, np.float32), 1 << 64, -(1 << 63) - 1, [1, 2], "x", b"\0\0\0\0"]


@pytest.mark.parametrize("bad", BAD_ARGS, ids=lambda v: type(v).__name__ + str(np.size(v)))
def test_argument_types_cupy_refuses_fail_identically_on_both_backends(fake, bad):
    """The same launch raises the same exception type on the CUDA backend (fake CuPy 14) and the emulator."""
    gpu, be = fake
    k = A.RawKernel(SRC, "k")
    with pytest.raises((TypeError, OverflowError)) as on_cuda:
        k((1,), (32,), (0, bad, np.int32(4)))
    assert gpu.launches == []
    backends._backend = None            # the emulator, for the same call
    try:
        from aclnn_py.backends.host import HostBackend
        backends._backend = HostBackend()
        host_mod = A.RawModule(code="extern \"C\" __global__ void k(float* x, float a, int n) {}")
        kh = host_mod.get_function("k")
        with pytest.raises((TypeError, OverflowError)) as on_host:
            kh((1,), (32,), (0, bad, np.int32(4)))
        assert type(on_host.value) is type(on_cuda.value) or isinstance(on_host.value, type(on_cuda.value))
    finally:
        backends._backend = be


@pytest.mark.parametrize("good", [np.float32(2), np.array([2.0], np.float32), None])
def test_argument_types_cupy_accepts_are_accepted_by_the_emulator(good):
    """On the emulator the launch is accepted (a size mismatch, if any, is reported at synchronize)."""
    k = A.RawModule(code="extern \"C\" __global__ void k(float* x, float a, int n) {}").get_function("k")
    s, _ = acl.rt.create_stream()
    k((1,), (32,), (None, good if good is not None else np.float32(0), np.int32(0)), stream=s)
    assert acl.rt.synchronize_stream(s) == 0, acl.get_recent_err_msg()
    acl.rt.destroy_stream(s)


def test_intenum_and_cai_objects_follow_cupy_rules_on_the_emulator():
    k = A.RawModule(code="extern \"C\" __global__ void k(float* x, float a, int n) {}").get_function("k")
    with pytest.raises(TypeError):          # CuPy 14: type(x) is not int -> Unsupported type
        k((1,), (32,), (None, np.float32(0), A.ACL_FLOAT))
    p = _malloc(16)

    class Cai:
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (p, False), "version": 3}
    k((1,), (32,), (Cai(), np.float32(0), np.int32(0)))      # RawKernel passes CAI objects as pointers
    acl.rt.free(p)


# item 8: synchronous memcpy / memset are done when they return ---------------------------------------

def test_sync_d2d_memcpy_and_memset_are_done_on_return(fake):
    gpu, be = fake
    a, b = _malloc(32), _malloc(32)
    src = np.arange(32, dtype=np.uint8)
    assert acl.rt.memcpy(a, 32, src.ctypes.data, 32, 1) == 0
    assert acl.rt.memcpy(b, 32, a, 32, 3) == 0                         # D2D
    assert ctypes.string_at(b, 32) == src.tobytes()                     # done, no synchronize in between
    assert acl.rt.memset(b, 32, 7, 32) == 0
    assert ctypes.string_at(b, 32) == bytes([7]) * 32
    assert gpu.pending == []
    # the async forms stay asynchronous
    s, _ = acl.rt.create_stream()
    assert acl.rt.memset_async(b, 32, 9, 32, s) == 0
    assert ctypes.string_at(b, 32) == bytes([7]) * 32
    assert acl.rt.synchronize_stream(s) == 0
    assert ctypes.string_at(b, 32) == bytes([9]) * 32
    acl.rt.destroy_stream(s)
    for p in (a, b):
        acl.rt.free(p)


def test_unmapped_host_pointers_are_statuses_not_a_segfault_inside_cudamemcpy(fake):
    """CUDA treats any address it does not know as pageable host memory and touches it from the CPU:
    an unmapped one was a SIGSEGV inside cudaMemcpy (seen on an H200). Such a side is now checked
    as host memory, as on the emulator; device memory of another allocator still passes."""
    gpu, be = fake
    d = _malloc(64)
    x = np.zeros(64, np.uint8)
    for p in (8, 4096, 1 << 46, (1 << 47) - 4096):
        for kind in (0, 2, 4):                      # host->host, device->host, default: p as destination
            st = acl.rt.memcpy(p, 64, d if kind == 2 else x.ctypes.data, 64, kind)
            assert st == AclError.ACL_ERROR_INVALID_PARAM, (p, kind, st)
            assert "nothing copied" in acl.get_recent_err_msg()
        for kind in (0, 1, 4):                      # p as source
            st = acl.rt.memcpy(d if kind == 1 else x.ctypes.data, 64, p, 64, kind)
            assert st == AclError.ACL_ERROR_INVALID_PARAM, (p, kind, st)
        s, _ = acl.rt.create_stream()
        assert acl.rt.memcpy_async(p, 64, x.ctypes.data, 64, 0, s) == AclError.ACL_ERROR_INVALID_PARAM
        assert acl.rt.synchronize_stream(s) == 0 and acl.rt.destroy_stream(s) == 0
    assert not x.any()
    other = (ctypes.c_char * 64)()                  # device memory some other allocator made
    op = ctypes.addressof(other)
    gpu.buffers[op], gpu.pointer_devices[op] = other, 0
    assert acl.rt.memcpy(op + 16, 32, x.ctypes.data, 32, 4) == 0
    acl.rt.free(d)


# item 10: out-of-memory retry, device of external arrays, cubin/ptx modules ---------------------------

def test_malloc_retries_after_freeing_cupys_pool_cache(fake):
    gpu, be = fake
    gpu.capacity = 1000
    gpu.pool_cached = 900            # freed CuPy arrays whose memory CuPy's pool keeps
    p = _malloc(500)
    assert ("free_all_blocks", ()) in gpu.log
    assert acl.rt.malloc(800, 0)[1] == AclError.ACL_ERROR_RT_MEMORY_ALLOCATION   # really full: a status
    acl.rt.free(p)


def test_external_array_on_another_device_is_refused(fake, monkeypatch):
    gpu, be = fake
    gpu.devices = 2
    p = _malloc(64)
    gpu.pointer_devices[p] = 1

    class Cai:
        __cuda_array_interface__ = {"shape": (16,), "typestr": "<f4", "data": (p, False), "version": 3,
                                    "stream": None}
    t, ret = A.from_array(Cai())
    assert t is None and ret == AclnnStatus.ACLNN_ERR_PARAM_INVALID
    assert "device 1" in acl.get_recent_err_msg()
    gpu.pointer_devices[p] = 0
    t, ret = A.from_array(Cai())
    assert ret == 0
    A.aclDestroyTensor(t)
    acl.rt.free(p)


def test_cai_v3_stream_is_synchronised_with(fake):
    gpu, be = fake
    p = _malloc(64)

    class Cai:
        __cuda_array_interface__ = {"shape": (16,), "typestr": "<f4", "data": (p, False), "version": 3,
                                    "stream": 0x7777}
    t, ret = A.from_array(Cai())
    assert ret == 0
    assert ("streamSynchronize", (0x7777,)) in gpu.log
    A.aclDestroyTensor(t)
    Cai.__cuda_array_interface__ = dict(Cai.__cuda_array_interface__, stream=0)     # disallowed by v3
    assert A.from_array(Cai())[1] == AclnnStatus.ACLNN_ERR_PARAM_INVALID
    acl.rt.free(p)


def test_rawmodule_path_loads_a_cubin(fake, tmp_path):
    gpu, be = fake
    cubin = tmp_path / "k.cubin"
    cubin.write_bytes(b"\x7fELF not really")
    mod = A.RawModule(path=str(cubin))
    assert mod.get_function("k").kernel.name == "k"
    assert ("RawModule", (None, str(cubin), ())) in gpu.log


@pytest.mark.skipif(backends.get_backend().name != "host", reason="the emulator's refusal (a GPU loads the module)")
def test_rawmodule_cubin_on_the_emulator_is_a_clear_error(tmp_path):
    cubin = tmp_path / "k.ptx"
    cubin.write_text("// ptx")
    with pytest.raises(RuntimeError, match="host emulator runs CUDA C source"):
        A.RawModule(path=str(cubin)).compile()


# item 6: a changed header changes what CuPy compiles ---------------------------------------------------

def test_user_rawmodule_header_change_reaches_cupy(fake, tmp_path):
    gpu, be = fake
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "my.cuh").write_text("#define SCALE 2\n")
    src = '#include "my.cuh"\nextern "C" __global__ void k(float* x) { x[0] *= SCALE; }\n'
    A.RawModule(code=src, options=(f"-I{inc}",)).compile()
    (inc / "my.cuh").write_text("#define SCALE 3\n")
    A.RawModule(code=src, options=(f"-I{inc}",)).compile()
    codes = [a[0] for n, a in gpu.log if n == "RawModule"]
    assert len(codes) == 2 and codes[0] != codes[1]          # CuPy's cache key (the source) differs


def test_kernel_family_source_reaching_cupy_carries_header_digest(fake):
    gpu, be = fake
    kernel_cache._module("softmax")
    code = next(a[0] for n, a in gpu.log if n == "RawModule")
    assert "// aclnn-py source digest: " in code


def test_device_error_carries_status():
    e = DeviceError("x", status=AICORE, code=700, sticky=True)
    assert e.status == AICORE and e.code == 700 and e.sticky


# the same rules on the real backend (the process backend: the emulator here, CuPy on a GPU) -----------

def test_real_compile_error_in_phase1_is_a_status_with_the_log(monkeypatch):
    """A kernel family that does not compile (on g++ here, NVRTC on a GPU): phase 1 returns 561003 with the
    compiler's message, and nothing broken is cached."""
    real = kernel_cache.kernel_source
    monkeypatch.setattr(kernel_cache, "_modules", {})
    monkeypatch.setattr(kernel_cache, "_functions", {})
    monkeypatch.setattr(kernel_cache, "kernel_source",
                        lambda fam: real(fam) + "\n#error aclnn_py_broken_on_purpose\n" if fam == "softmax" else real(fam))
    for r in REGISTRY.values():
        r.plan_cache.clear()
    x, y = _malloc(64), _malloc(64)
    tx = A.aclCreateTensor([2, 4, 1, 2], A.ACL_FLOAT, None, 0, A.ACL_FORMAT_NCHW, [2, 4, 1, 2], x)
    ty = A.aclCreateTensor([2, 4, 1, 2], A.ACL_FLOAT, None, 0, A.ACL_FORMAT_NCHW, [2, 4, 1, 2], y)
    try:
        _, ex, ret = A.aclnnSoftmaxGetWorkspaceSize(tx, 1, ty)
        msg = acl.get_recent_err_msg() or ""
        assert ret == AclnnStatus.ACLNN_ERR_INNER_FIND_KERNEL_ERROR and ex is None
        assert "aclnn_py_broken_on_purpose" in msg, msg
    finally:
        for r in REGISTRY.values():
            r.plan_cache.clear()
        for p in (x, y):
            acl.rt.free(p)


@pytest.mark.cuda
def test_real_sync_d2d_memcpy_and_memset_are_done_on_return():
    import cupy
    n = 256 << 20
    a, b = _malloc(n), _malloc(n)
    assert acl.rt.memset(a, n, 3, n) == 0
    assert cupy.cuda.Stream.null.done
    assert acl.rt.memcpy(b, n, a, n, 3) == 0
    assert cupy.cuda.Stream.null.done                # nothing of the copy left queued
    tail = np.empty(16, np.uint8)
    assert acl.rt.memcpy(tail.ctypes.data, 16, b + n - 16, 16, 2) == 0
    assert (tail == 3).all()
    for p in (a, b):
        acl.rt.free(p)


SPIN = r'''extern "C" __global__ void spin(long long cycles) {
    long long t0 = clock64(); while (clock64() - t0 < cycles) { } }'''


@pytest.mark.cuda
def test_real_rawkernel_stream_none_is_cupys_current_stream():
    import cupy
    k = A.RawKernel(SPIN, "spin")
    k((1,), (1,), (np.int64(10),))                  # compile outside the timed part
    cupy.cuda.Device().synchronize()
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        k((1,), (1,), (np.int64(2_000_000_000),))    # about a second
    assert not s.done                                # it went to the current stream s ...
    assert cupy.cuda.Stream.null.done                # ... not to the null stream
    s.synchronize()


STICKY_PROG = r'''
import numpy as np, aclnn_py as A
from aclnn_py import acl
assert acl.init() == 0 and acl.rt.set_device(0) == 0
k = A.RawKernel('extern "C" __global__ void bad(float* p) { p[threadIdx.x] = 1.f; }', "bad")
s, _ = acl.rt.create_stream()
k((1,), (32,), (16,), stream=s)                      # an illegal address
r = [int(acl.rt.synchronize_stream(s)), int(acl.rt.malloc(16, 0)[1]), int(acl.rt.create_stream()[1]),
     int(acl.rt.synchronize_device()), int(acl.rt.destroy_stream(s)), int(acl.finalize())]
print("RESULT", r)
'''


@pytest.mark.cuda
def test_real_sticky_fault_poisons_later_calls_and_finalize_succeeds(tmp_path):
    import subprocess
    import sys
    (tmp_path / "prog.py").write_text(STICKY_PROG)
    r = subprocess.run([sys.executable, str(tmp_path / "prog.py")], capture_output=True, text=True, timeout=300)
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("RESULT"))
    res = eval(line[len("RESULT"):])
    assert res[:5] == [int(AICORE)] * 5 and res[5] == 0, (res, r.stderr)
