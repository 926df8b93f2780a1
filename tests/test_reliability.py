"""Regression tests for issue 9: each class of broken promise, one test (or a few) that failed before the fix.

Crash-prone cases (impossible pointers, read-only memmaps) run in a child process, so a SIGSEGV is a
failed test and not a dead test run.
"""
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import aclnn_py as A
from aclnn_py import acl
from aclnn_py.acl.memory import registry
from aclnn_py.status import AclError, AclnnStatus

E = AclError
INVALID = AclnnStatus.ACLNN_ERR_PARAM_INVALID
OPS = A.opdef.REGISTRY
HOST = A.acl._state.state.backend.name == "host"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_child(code: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter with the runtime initialised (names: A, acl, np)."""
    prelude = ("import numpy as np, aclnn_py as A\nfrom aclnn_py import acl\n"
               "assert acl.init() == 0 and acl.rt.set_device(0) == 0\n")
    env = dict(os.environ, ACLNN_PY_STRICT="1", PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT)


def _dev(arr: np.ndarray) -> tuple[int, "A.aclTensor"]:
    """A device copy of ``arr`` and a tensor over it."""
    p, ret = acl.rt.malloc(arr.nbytes, 0)
    assert ret == 0
    assert acl.rt.memcpy(p, arr.nbytes, arr.ctypes.data, arr.nbytes, 1) == 0
    t = A.aclCreateTensor(arr.shape, A.aclDataType.ACL_FLOAT, None, 0, A.aclFormat.ACL_FORMAT_ND, arr.shape, p)
    return p, t


def _read(p: int, like: np.ndarray) -> np.ndarray:
    out = np.empty_like(like)
    assert acl.rt.memcpy(out.ctypes.data, out.nbytes, p, out.nbytes, 2) == 0, acl.get_recent_err_msg()
    return out


_GATE = r'''
extern "C" __global__ void gate(volatile int* flag) { while (*flag == 0) { } }
extern "C" __global__ void fill(int* buf, int n, int value) { for (int i = 0; i < n; ++i) buf[i] = value; }
'''


@pytest.fixture(scope="module")
def gate_kernels():
    mod = A.RawModule(code=_GATE)
    return mod.get_function("gate"), mod.get_function("fill")


# 1. use after free in phase 2 -----------------------------------------------------------------------

def test_phase2_refuses_a_freed_input_and_launches_nothing(stream):
    x = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    px, tx = _dev(x)
    py, ty = _dev(np.full_like(x, 7))
    ws, ex, ret = OPS["Relu"].get_workspace_size(tx, ty)
    assert ret == 0
    assert acl.rt.free(px) == 0
    assert OPS["Relu"].run(None, 0, ex, stream) == INVALID
    assert "not inside one live allocation" in acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream(stream) == 0
    assert np.all(_read(py, x) == 7)                 # nothing ran
    acl.rt.free(py)


def test_phase2_refuses_a_freed_output_and_rebinding_to_freed_memory(stream):
    x = np.ones((2, 8), np.float32)
    px, tx = _dev(x)
    py, ty = _dev(x)
    _, ex, ret = OPS["Relu"].get_workspace_size(tx, ty)
    assert ret == 0 and A.aclSetAclOpExecutorRepeatable(ex) == 0
    assert OPS["Relu"].run(None, 0, ex, stream) == 0
    pz, tz = _dev(x)
    assert acl.rt.free(pz) == 0
    assert A.aclSetOutputTensorAddr(ex, 0, ty, pz) == INVALID      # rebinding to freed memory
    assert acl.rt.free(py) == 0
    assert OPS["Relu"].run(None, 0, ex, stream) == INVALID         # the output was freed after phase 1
    assert acl.rt.synchronize_stream(stream) == 0
    A.aclDestroyAclOpExecutor(ex)
    acl.rt.free(px)


# 2. free while queued ---------------------------------------------------------------------------------

@pytest.mark.skipif(not HOST, reason="host emulator: the gate kernel needs host-visible memory")
def test_free_is_stream_ordered(stream, gate_kernels):
    gate, fill = gate_kernels
    flag, _ = acl.rt.malloc(4, 0)
    assert acl.rt.memset(flag, 4, 0, 4) == 0
    n = 4096
    b, _ = acl.rt.malloc(4 * n, 0)
    gate((1,), (1,), (flag,), stream=stream)                       # holds the stream
    fill((1,), (1,), (b, np.int32(n), np.int32(0x5A5A5A5A)), stream=stream)   # queued, uses b
    assert acl.rt.free(b) == 0                                     # returns at once, b dead for new work
    other, _ = acl.rt.create_stream()                              # (a synchronous call would wait for the gate)
    assert acl.rt.memset_async(b, 16, 0, 16, other) != 0
    fresh = [acl.rt.malloc(4 * n, 0)[0] for _ in range(8)]         # memory handed out meanwhile
    host = [np.full(n, 3, np.int32) for _ in range(8)]
    for p in fresh:
        assert acl.rt.memset_async(p, 4 * n, 0x11, 4 * n, other) == 0
    assert acl.rt.synchronize_stream(other) == 0
    acl.util.ptr_to_numpy(flag, (1,), np.int32)[0] = 1             # let the queued work run
    assert acl.rt.synchronize_stream(stream) == 0
    for p in fresh:
        assert np.all(_read(p, np.empty(n, np.int32)) == 0x11111111)
        acl.rt.free(p)
    assert all(np.all(h == 3) for h in host)
    acl.rt.free(flag)
    acl.rt.destroy_stream(other)


@pytest.mark.skipif(not HOST, reason="host emulator: the gate kernel needs host-visible memory")
def test_phase2_behind_an_event_wait_queues_instead_of_running_inline(stream, gate_kernels):
    """On the host an op's phase 2 runs on the calling thread only when its stream is idle. Here the
    stream waits for an event recorded after a gated copy on another stream: the op must queue behind
    the wait and read the copied input, not run at once on the poisoned buffer."""
    gate, _ = gate_kernels
    flag, _ = acl.rt.malloc(4, 0)
    assert acl.rt.memset(flag, 4, 0, 4) == 0
    x = np.arange(24, dtype=np.float32).reshape(4, 6) - 11
    px, tx = _dev(np.zeros_like(x))
    py, ty = _dev(np.full_like(x, 7))
    other, _ = acl.rt.create_stream()
    gate((1,), (1,), (flag,), stream=other)                                  # holds `other`
    assert acl.rt.memcpy_async(px, x.nbytes, x.ctypes.data, x.nbytes, 1, other) == 0   # queued behind it
    ev, _ = acl.rt.create_event()
    assert acl.rt.record_event(ev, other) == 0
    assert acl.rt.stream_wait_event(stream, ev) == 0
    try:
        ws, ex, ret = OPS["Relu"].get_workspace_size(tx, ty)
        assert ret == 0 and OPS["Relu"].run(None, 0, ex, stream) == 0         # must not run yet
        assert np.all(acl.util.ptr_to_numpy(py, x.shape, np.float32) == 7)   # nothing written so far
    finally:
        acl.util.ptr_to_numpy(flag, (1,), np.int32)[0] = 1                    # release the gate
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(_read(py, x), np.maximum(x, 0))
    assert acl.rt.synchronize_stream(other) == 0
    acl.rt.destroy_event(ev)
    acl.rt.destroy_stream(other)
    for p in (flag, px, py):
        acl.rt.free(p)


# 3. memcpy / memset overruns --------------------------------------------------------------------------

def test_memcpy_refuses_every_side_that_runs_past_a_known_buffer():
    d, _ = acl.rt.malloc(64, 0)
    acl.rt.memset(d, 64, 0, 64)
    src = np.arange(32, dtype=np.uint8)
    dst = np.zeros(64, np.uint8)
    H2D, D2H, DEF = 1, 2, acl.rt.ACL_MEMCPY_DEFAULT
    if HOST:      # host buffers are registered (known extents) only where they are device memory too
        t, ret = A.from_array(src)                                 # a registered host buffer of 32 bytes
        assert ret == 0
        assert acl.rt.memcpy(d, 64, src.ctypes.data, 64, H2D) == E.ACL_ERROR_INVALID_PARAM   # host source overrun
    assert acl.rt.memcpy(dst.ctypes.data, 64, d + 32, 64, DEF) == E.ACL_ERROR_INVALID_PARAM   # device src past end
    assert acl.rt.memcpy(d + 48, 64, src.ctypes.data, 32, DEF) == E.ACL_ERROR_INVALID_PARAM   # device dst past end
    assert acl.rt.memcpy(dst.ctypes.data, 8, d, 64, D2H) == E.ACL_ERROR_INVALID_PARAM         # count > dest_max
    assert acl.rt.memcpy(dst.ctypes.data, 64, d, 2 ** 64, D2H) == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.memset(d + 8, 64, 1, 64) != 0
    assert not dst.any() and not _read(d, np.zeros(64, np.uint8)).any()
    assert acl.rt.memcpy(dst.ctypes.data, 64, d, 64, DEF) == 0     # the valid forms still work
    if HOST:
        A.aclDestroyTensor(t)
    acl.rt.free(d)


# 4. impossible pointers ---------------------------------------------------------------------------------

def test_impossible_pointers_are_statuses_not_crashes():
    r = run_child("""
        import sys
        d, _ = acl.rt.malloc(64, 0)
        freed, _ = acl.rt.malloc(1 << 20, 0)
        assert acl.rt.free(freed) == 0
        x = np.zeros(64, np.uint8)
        bad = [8, -1, 2 ** 64, 2 ** 64 - 8, 2 ** 63, 4096, freed, freed + 64, 1.5, None, "0x1000", np.int64(8)]
        for p in bad:
            for kind in (0, 2, 4):
                st = acl.rt.memcpy(p, 64, d if kind == 2 else x.ctypes.data, 64, kind)
                assert st != 0, (p, kind)
                st = acl.rt.memcpy(x.ctypes.data, 64, p, 64, kind if kind != 2 else 0)
                assert st != 0, (p, kind)
            st = acl.rt.memset(p, 64, 0, 64)
            assert st != 0, p
            s, _ = acl.rt.create_stream()
            assert acl.rt.memcpy_async(p, 64, x.ctypes.data, 64, 0, s) != 0
            assert acl.rt.synchronize_stream(s) == 0 and acl.rt.destroy_stream(s) == 0
        assert not x.any()
        print("ok")
    """)
    assert r.returncode == 0 and "ok" in r.stdout, (r.returncode, r.stdout[-2000:], r.stderr[-4000:])


def test_util_pointer_helpers_refuse_impossible_pointers():
    """acl.util.ptr_to_numpy / ptr_to_bytes on a pointer this process cannot read: None and a message."""
    r = run_child("""
        freed, _ = acl.rt.malloc(1 << 20, 0)
        assert acl.rt.free(freed) == 0 and acl.rt.synchronize_device() == 0
        for p in (8, -1, 0, 2 ** 64, 4096, freed, 1.5, None, "0x1000"):
            assert acl.util.ptr_to_bytes(p, 16) is None, p
            assert acl.util.ptr_to_numpy(p, (4,), np.float32) is None, p
            assert acl.get_recent_err_msg()
        x = np.arange(4, dtype=np.float32)
        assert acl.util.ptr_to_bytes(acl.util.numpy_to_ptr(x), 16) == x.tobytes()
        assert (acl.util.ptr_to_numpy(acl.util.numpy_to_ptr(x), (2, 2), np.float32) == x.reshape(2, 2)).all()
        print("ok")
    """)
    assert r.returncode == 0 and "ok" in r.stdout, (r.returncode, r.stdout[-2000:], r.stderr[-4000:])


# 7. rebinding applies phase 1's overlap rules ----------------------------------------------------------

def test_rebinding_cannot_create_an_overlap_phase_1_refuses(stream):
    x = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8)
    big, _ = acl.rt.malloc(4 * 64 * 3, 0)
    assert acl.rt.memcpy(big, x.nbytes, x.ctypes.data, x.nbytes, 1) == 0
    mk = lambda p: A.aclCreateTensor((8, 8), A.aclDataType.ACL_FLOAT, None, 0, A.aclFormat.ACL_FORMAT_ND, (8, 8), p)
    tx, ty = mk(big), mk(big + 4 * 64)
    _, ex, ret = OPS["Relu"].get_workspace_size(tx, ty)
    assert ret == 0 and A.aclSetAclOpExecutorRepeatable(ex) == 0
    partial = big + 16                                            # overlaps x, not exactly x
    assert OPS["Relu"].get_workspace_size(tx, mk(partial))[2] == INVALID   # what phase 1 says
    assert A.aclSetOutputTensorAddr(ex, 0, mk(partial), partial) == INVALID
    assert "overlap" in acl.get_recent_err_msg()
    assert A.aclSetInputTensorAddr(ex, 0, mk(big + 4 * 64 + 8), big + 4 * 64 + 8) == INVALID   # input onto output
    assert A.aclSetOutputTensorAddr(ex, 0, mk(big), big) == 0     # exactly the input: Relu's in-place form
    assert OPS["Relu"].run(None, 0, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert np.array_equal(_read(big, x), np.maximum(x, 0))
    A.aclDestroyAclOpExecutor(ex)
    acl.rt.free(big)


# 8. workspace inside the op's own tensors ---------------------------------------------------------------

def test_workspace_overlapping_a_tensor_is_refused(stream):
    x = np.random.default_rng(0).random((4, 4, 8, 8), dtype=np.float32)
    px, _ = _dev(x)
    tx = A.aclCreateTensor(x.shape, A.aclDataType.ACL_FLOAT, None, 0, A.aclFormat.ACL_FORMAT_NCHW, x.shape, px)
    pm, tm = _dev(np.zeros(4, np.float32))
    pi, ti = _dev(np.zeros(4, np.float32))
    ws, ex, ret = OPS["BatchNormStats"].get_workspace_size(tx, 1e-5, tm, ti)
    assert ret == 0 and ws > 0
    assert OPS["BatchNormStats"].run(px, x.nbytes, ex, stream) == INVALID
    assert "overlaps" in acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream(stream) == 0
    assert np.array_equal(_read(px, x), x)
    for p in (px, pm, pi):
        acl.rt.free(p)


# 9. read-only buffers as outputs ------------------------------------------------------------------------

@pytest.mark.skipif(not HOST, reason="host buffers as tensors: the emulator (a GPU refuses them in from_array)")
def test_read_only_memory_is_registered_read_only_and_refused_as_output():
    x = np.ones((2, 4), np.float32)
    tx, _ = A.from_array(x)
    ro = np.zeros((2, 4), np.float32)
    ro.flags.writeable = False
    data = bytes(32)
    for obj in (ro, data):
        t, ret = A.from_array(obj if not isinstance(obj, bytes) else memoryview(obj).cast("f", (2, 4)))
        assert ret == 0
        assert registry.find(t.addr, 32).writable is False
        assert OPS["Relu"].get_workspace_size(tx, t)[2] == INVALID
        assert "read-only" in acl.get_recent_err_msg()
        assert OPS["Relu"].get_workspace_size(t, tx)[2] == 0           # as an input it is fine
        assert acl.rt.memcpy(t.addr, 32, x.ctypes.data, 32, 4) == E.ACL_ERROR_INVALID_PARAM
    assert data == bytes(32) and not ro.any()


@pytest.mark.skipif(not HOST, reason="host buffers as tensors: the emulator (a GPU refuses them in from_array)")
def test_read_only_memmap_output_is_refused_not_a_segfault(tmp_path):
    path = tmp_path / "ro.bin"
    np.zeros(64, np.float32).tofile(path)
    r = run_child(f"""
        m = np.memmap({str(path)!r}, dtype=np.float32, mode="r", shape=(8, 8))
        x = np.ones((8, 8), np.float32)
        tx, _ = A.from_array(x)
        tm, ret = A.from_array(m)
        assert ret == 0
        ws, ex, ret = A.aclnnReluGetWorkspaceSize(tx, tm)
        assert ret != 0, "accepted a read-only memmap as output"
        assert acl.rt.memcpy(m.ctypes.data, 256, x.ctypes.data, 256, 0) != 0
        d, _ = acl.rt.malloc(256, 0)
        assert acl.rt.memcpy(m.ctypes.data, 256, d, 256, 2) != 0
        print("ok")
    """)
    assert r.returncode == 0 and "ok" in r.stdout, (r.returncode, r.stdout[-2000:], r.stderr[-4000:])


# 10. deadlock: a synchronous call while another thread destroys a stream --------------------------------

def test_waiting_on_a_destroyed_stream_returns():
    be = A.acl._state.state.backend
    s = be.create_stream()
    be.destroy_stream(s)
    t = threading.Thread(target=s.synchronize if HOST else (lambda: None), daemon=True)
    t.start()
    t.join(10)
    assert not t.is_alive(), "synchronising a destroyed stream never returns"


def test_sync_calls_race_stream_destruction():
    d, _ = acl.rt.malloc(4096, 0)
    x = np.zeros(1024, np.int32)
    stop = threading.Event()
    errors = []

    def churn():
        while not stop.is_set():
            s, ret = acl.rt.create_stream()
            if ret == 0:
                acl.rt.memset_async(d, 4096, 1, 4096, s)
                if acl.rt.destroy_stream(s) != 0:
                    errors.append(acl.get_recent_err_msg())

    def syncs():
        for _ in range(300):
            for st in (acl.rt.memcpy(x.ctypes.data, 4096, d, 4096, 2), acl.rt.memset(d, 4096, 1, 4096),
                       acl.rt.synchronize_device()):
                if st != 0:
                    errors.append(acl.get_recent_err_msg())

    th = [threading.Thread(target=churn, daemon=True) for _ in range(2)]
    sy = threading.Thread(target=syncs, daemon=True)
    for t in th + [sy]:
        t.start()
    sy.join(60)
    stop.set()
    for t in th:
        t.join(10)
    assert not sy.is_alive() and not any(t.is_alive() for t in th), "deadlock"
    assert errors == []
    acl.rt.free(d)


# destroy_stream leak ------------------------------------------------------------------------------------

@pytest.mark.skipif(not HOST, reason="the emulator reports argument-size mismatches")
def test_destroy_stream_with_a_failed_kernel_ends_its_worker():
    mod = A.RawModule(code='extern "C" __global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }')
    k = mod.get_function("scale")
    d, _ = acl.rt.malloc(64, 0)
    s, _ = acl.rt.create_stream()
    backend_stream = A.acl._state.state.streams[s][1]
    k((1,), (4,), (d, 2.0), stream=s)                  # a Python float for a float: fails on the stream
    assert acl.rt.destroy_stream(s) == E.ACL_ERROR_RT_AICORE_EXCEPTION
    backend_stream._thread.join(10)
    assert not backend_stream._thread.is_alive()
    assert backend_stream not in A.acl._state.state.backend._streams
    assert acl.rt.synchronize_device() == 0
    acl.rt.free(d)


# executor from another op, workspace sizes, NumPy integers -----------------------------------------------

def test_executor_of_another_op_is_refused(stream):
    x = np.ones((2, 4), np.float32)
    px, tx = _dev(x)
    py, ty = _dev(np.full_like(x, 9))
    _, ex, ret = OPS["Sigmoid"].get_workspace_size(tx, ty)
    assert ret == 0
    assert OPS["Relu"].run(None, 0, ex, stream) == INVALID
    assert "aclnnSigmoidGetWorkspaceSize" in acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream(stream) == 0 and np.all(_read(py, x) == 9)
    acl.rt.free(px), acl.rt.free(py)


def test_workspace_size_beyond_uint64_and_numpy_integers(stream):
    x = np.random.default_rng(1).random((2, 4, 4, 4), dtype=np.float32)
    px, _ = _dev(x)
    tx = A.aclCreateTensor(x.shape, A.aclDataType.ACL_FLOAT, None, 0, A.aclFormat.ACL_FORMAT_NCHW, x.shape, px)
    pm, tm = _dev(np.zeros(4, np.float32))
    pi, ti = _dev(np.zeros(4, np.float32))
    op = OPS["BatchNormStats"]
    ws, ex, ret = op.get_workspace_size(tx, 1e-5, tm, ti)
    assert ret == 0 and ws > 0
    w, _ = acl.rt.malloc(np.int64(ws), np.int64(0))                # NumPy integers are integers
    assert w
    assert op.run(w, 2 ** 64 + ws, ex, stream) == INVALID
    _, ex, _ = op.get_workspace_size(tx, 1e-5, tm, ti)
    assert op.run(w, -1, ex, stream) == INVALID
    _, ex, _ = op.get_workspace_size(tx, 1e-5, tm, ti)
    assert op.run(np.uint64(w), np.int64(ws), ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    host = np.zeros(4, np.float32)
    assert acl.rt.memcpy(host.ctypes.data, np.int64(16), pm, np.uint32(16), np.int8(2)) == 0
    assert np.allclose(host, x.mean(axis=(0, 2, 3)), rtol=1e-5)
    assert acl.rt.set_device(np.int64(0)) == 0
    for p in (px, pm, pi, w):
        assert acl.rt.free(np.int64(p)) == 0


# exceptions escaping the meta, executor and runtime APIs --------------------------------------------------

def test_malformed_arguments_are_statuses_not_exceptions():
    T = A.aclDataType.ACL_FLOAT
    F = A.aclFormat.ACL_FORMAT_ND
    for dims in ([2 ** 62, 4], [-1], [2 ** 70], ["1"], 3, [1.5], [True]):
        assert A.aclCreateTensor(dims, T, None, 0, F, None, 0) is None and acl.get_recent_err_msg()
    assert A.aclCreateTensor([2], T, [2 ** 63], 0, F, [2], 0) is None
    assert A.aclCreateTensor([2], T, None, 2 ** 63, F, [2], 0) is None
    assert A.aclCreateTensor([2], T, None, 0, F, [2], 2 ** 64) is None
    assert A.aclCreateTensor([2], [T], None, 0, F, [2], 0) is None
    assert A.aclCreateScalar(10 ** 400, T) is None and A.aclCreateScalar(2 ** 64, A.aclDataType.ACL_INT64) is None
    assert A.aclCreateIntArray([2 ** 64]) is None and A.aclCreateFloatArray([10 ** 400]) is None
    assert A.aclCreateTensorList(np.int64(3)) is None
    for getter in (A.aclGetViewShape, A.aclGetViewStrides, A.aclGetViewOffset, A.aclGetStorageShape,
                   A.aclGetFormat, A.aclGetDataType, A.aclGetRawTensorAddr):
        assert getter([1, 2])[1] == INVALID
    assert A.aclSetRawTensorAddr(1, 2) == INVALID
    assert A.aclGetIntArraySize(5)[1] == INVALID and A.aclGetTensorListSize(1.5)[1] == INVALID
    assert A.aclDestroyTensorList([None]) == INVALID
    assert A.aclSetAclOpExecutorRepeatable("x") == INVALID
    assert A.aclDestroyAclOpExecutor(3) == INVALID
    assert A.aclSetInputTensorAddr(object(), 0, None, 0) != 0
    assert A.aclSetOutputTensorAddr(object(), "0", object(), 1) != 0
    assert OPS["Relu"].run(None, 0, object(), None) == INVALID
    assert acl.rt.malloc(1 << 64, 0)[1] == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.malloc(1 << 63, 0)[1] == E.ACL_ERROR_RT_MEMORY_ALLOCATION
    assert acl.rt.malloc(16, [0])[1] == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.reset_device([0]) == E.ACL_ERROR_RT_INVALID_DEVICEID
    assert acl.rt.synchronize_stream(np.array([1, 2])) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.destroy_event([1]) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.memset(16, 8, "x", 8) == E.ACL_ERROR_INVALID_PARAM
