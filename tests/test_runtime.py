"""The pyACL-style runtime: every call's success and error statuses, the allocation registry, streams, events."""
import threading

import numpy as np
import pytest

import aclnn_py as A
from aclnn_py import acl
from aclnn_py.status import AclError

E = AclError


@pytest.fixture
def fresh_runtime():
    """Finalise the session runtime for the test, and bring it back afterwards."""
    assert acl.rt.synchronize_device() == 0
    assert acl.finalize() == 0
    yield
    if not acl._state.state.initialized:
        assert acl.init() == 0
    assert acl.rt.set_device(0) == 0


def test_init_finalize_statuses(fresh_runtime):
    assert acl.rt.malloc(16, 0) == (0, E.ACL_ERROR_UNINITIALIZE)
    assert "acl.init" in acl.get_recent_err_msg()
    assert acl.get_recent_err_msg() is None  # cleared on read
    assert acl.rt.set_device(0) == E.ACL_ERROR_UNINITIALIZE
    assert acl.rt.create_stream() == (0, E.ACL_ERROR_UNINITIALIZE)
    assert acl.finalize() == E.ACL_ERROR_REPEAT_FINALIZE
    assert acl.init() == 0
    assert acl.init() == E.ACL_ERROR_REPEAT_INITIALIZE
    # initialised but no device set
    assert acl.rt.get_device() == (-1, E.ACL_ERROR_RT_CONTEXT_NULL)
    assert acl.rt.malloc(16, 0)[1] == E.ACL_ERROR_RT_CONTEXT_NULL
    n, ret = acl.rt.get_device_count()
    assert ret == 0 and n >= 1
    assert acl.rt.set_device(n) == E.ACL_ERROR_RT_INVALID_DEVICEID
    assert acl.rt.set_device(-1) == E.ACL_ERROR_RT_INVALID_DEVICEID
    assert acl.rt.set_device(0) == 0
    assert acl.rt.get_device() == (0, 0)
    assert acl.rt.reset_device(0) == 0
    assert acl.rt.reset_device(0) == E.ACL_ERROR_RT_INVALID_DEVICEID


def test_recent_err_msg_is_thread_local():
    acl.rt.free(12345)
    seen = []
    t = threading.Thread(target=lambda: seen.append(acl.get_recent_err_msg()))
    t.start(); t.join()
    assert seen == [None]
    msg = acl.get_recent_err_msg()
    assert msg and "acl.rt.free" in msg


def test_malloc_free_registry():
    for bad in (0, -1, 2.5, None, True):
        ptr, ret = acl.rt.malloc(bad, 0)
        assert (ptr, ret) == (0, E.ACL_ERROR_INVALID_PARAM), bad
        assert acl.get_recent_err_msg()
    assert acl.rt.malloc(16, 99)[1] == E.ACL_ERROR_INVALID_PARAM
    ptr, ret = acl.rt.malloc(100, acl.rt.ACL_MEM_MALLOC_NORMAL_ONLY)
    assert ret == 0 and ptr % 64 == 0
    assert acl.rt.free(ptr) == 0
    assert acl.rt.free(ptr) == E.ACL_ERROR_RT_MEMORY_FREE            # double free
    assert "already freed" in acl.get_recent_err_msg()
    assert acl.rt.free(0xDEAD0) == E.ACL_ERROR_RT_MEMORY_FREE          # unknown pointer
    assert acl.rt.free(None) == E.ACL_ERROR_RT_MEMORY_FREE
    h, ret = acl.rt.malloc_host(64)
    assert ret == 0
    assert acl.rt.free(h) == E.ACL_ERROR_RT_MEMORY_FREE               # host pointer to device free
    assert acl.rt.free_host(h) == 0
    assert acl.rt.free_host(h) == E.ACL_ERROR_RT_MEMORY_FREE
    assert acl.rt.malloc_host(0)[1] == E.ACL_ERROR_INVALID_PARAM


def test_memcpy_kinds_and_overflow():
    x = np.arange(16, dtype=np.float32)
    d, _ = acl.rt.malloc(64, 0)
    d2, _ = acl.rt.malloc(64, 0)
    assert acl.rt.memcpy(d, 64, x.ctypes.data, 64, acl.rt.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    y = np.zeros(16, np.float32)
    # count > dest_max: error, nothing copied
    assert acl.rt.memcpy(y.ctypes.data, 32, d, 64, acl.rt.ACL_MEMCPY_DEVICE_TO_HOST) == E.ACL_ERROR_INVALID_PARAM
    assert not y.any()
    assert acl.rt.memcpy(d2, 64, d, 64, acl.rt.ACL_MEMCPY_DEVICE_TO_DEVICE) == 0
    assert acl.rt.memcpy(y.ctypes.data, 64, d2, 64, acl.rt.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    assert np.array_equal(x, y)
    z = np.zeros(16, np.float32)
    assert acl.rt.memcpy(z.ctypes.data, 64, y.ctypes.data, 64, acl.rt.ACL_MEMCPY_HOST_TO_HOST) == 0
    assert np.array_equal(z, x)
    assert acl.rt.memcpy(z.ctypes.data, 64, d, 64, acl.rt.ACL_MEMCPY_DEFAULT) == 0
    # wrong kinds: a host buffer where device memory is expected and vice versa
    assert acl.rt.memcpy(y.ctypes.data, 64, x.ctypes.data, 64, 1) == E.ACL_ERROR_RT_INVALID_MEMORY_TYPE
    assert acl.rt.memcpy(d, 64, x.ctypes.data, 64, 2) == E.ACL_ERROR_RT_INVALID_MEMORY_TYPE
    # a device range that runs past its allocation
    assert acl.rt.memcpy(d + 32, 64, x.ctypes.data, 64, 1) == E.ACL_ERROR_RT_INVALID_MEMORY_TYPE
    assert acl.rt.memcpy(d, 64, x.ctypes.data, 64, 9) == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.memcpy(0, 64, x.ctypes.data, 64, 1) == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.memcpy(d, 64, x.ctypes.data, 0, 1) == 0
    # memset
    assert acl.rt.memset(d, 64, 0, 64) == 0
    assert acl.rt.memcpy(y.ctypes.data, 64, d, 64, 2) == 0 and not y.any()
    assert acl.rt.memset(d, 32, 0, 64) == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.memset(x.ctypes.data, 64, 0, 64) == E.ACL_ERROR_RT_INVALID_MEMORY_TYPE
    for p in (d, d2):
        assert acl.rt.free(p) == 0


def test_util_pointers():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    p = acl.util.numpy_to_ptr(x)
    v = acl.util.ptr_to_numpy(p, (2, 3), np.dtype(np.float32).num)
    assert np.array_equal(v, x)
    v[0, 0] = 42
    assert x[0, 0] == 42
    b = b"abcdef"
    assert acl.util.ptr_to_bytes(acl.util.bytes_to_ptr(b), 6) == b
    with pytest.raises(ValueError):
        acl.util.numpy_to_ptr(x.T)


def _sleep_kernel():
    return A.RawModule(code=r'''
extern "C" __global__ void spin(long long* out, long long iters) {
    long long acc = 0;
    for (long long i = 0; i < iters; ++i) acc += i ^ (acc >> 3);
    out[threadIdx.x] = acc;
}
extern "C" __global__ void put(int* buf, int index, int value) { buf[index] = value; }
extern "C" __global__ void gate(volatile int* flag) { while (*flag == 0) { } }
extern "C" __global__ void copy_plus(const int* src, int* dst, int index, int add) { dst[index] = src[index] + add; }
''').get_function


def test_stream_is_asynchronous_and_fifo(stream):
    get = _sleep_kernel()
    ev, _ = acl.rt.create_event()
    host_backend = A.acl._state.state.backend.name == "host"
    if host_backend:
        # the kernel waits for a flag only this thread sets after the query: no timing involved
        flag, _ = acl.rt.malloc(4, 0)
        assert acl.rt.memset(flag, 4, 0, 4) == 0
        get("gate")((1,), (1,), (flag,), stream=stream)
    else:
        out, _ = acl.rt.malloc(8 * 32, 0)
        get("spin")((1,), (32,), (out, np.int64(10 ** 8)), stream=stream)
    assert acl.rt.record_event(ev, stream) == 0
    status, ret = acl.rt.query_event_status(ev)
    assert ret == 0 and status == acl.rt.ACL_EVENT_RECORDED_STATUS_NOT_READY  # still running: async
    if host_backend:
        acl.util.ptr_to_numpy(flag, (1,), np.int32)[0] = 1
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.rt.query_event_status(ev) == (acl.rt.ACL_EVENT_RECORDED_STATUS_COMPLETE, 0)
    acl.rt.free(flag if host_backend else out)
    # FIFO: many puts to one slot; the last one wins
    buf, _ = acl.rt.malloc(4 * 4, 0)
    for v in range(50):
        get("put")((1,), (1,), (buf, np.int32(0), np.int32(v)), stream=stream)
    assert acl.rt.synchronize_stream(stream) == 0
    host = np.zeros(4, np.int32)
    assert acl.rt.memcpy(host.ctypes.data, 16, buf, 16, 2) == 0
    assert host[0] == 49
    assert acl.rt.destroy_event(ev) == 0
    assert acl.rt.destroy_event(ev) == E.ACL_ERROR_RT_INVALID_HANDLE
    acl.rt.free(buf)


def test_stream_wait_event_orders_streams():
    get = _sleep_kernel()
    s1, _ = acl.rt.create_stream()
    s2, _ = acl.rt.create_stream()
    a, _ = acl.rt.malloc(16, 0)
    b, _ = acl.rt.malloc(16, 0)
    scratch, _ = acl.rt.malloc(8 * 32, 0)
    assert acl.rt.memset(a, 16, 0, 16) == 0 and acl.rt.memset(b, 16, 0, 16) == 0
    ev, _ = acl.rt.create_event()
    big = np.int64(2_000_000 if A.acl._state.state.backend.name == "host" else 10 ** 8)
    get("spin")((1,), (32,), (scratch, big), stream=s1)          # keeps s1 busy
    get("put")((1,), (1,), (a, np.int32(0), np.int32(7)), stream=s1)
    assert acl.rt.record_event(ev, s1) == 0
    assert acl.rt.stream_wait_event(s2, ev) == 0
    get("copy_plus")((1,), (1,), (a, b, np.int32(0), np.int32(1)), stream=s2)   # must see a[0] == 7
    assert acl.rt.synchronize_stream(s2) == 0
    host = np.zeros(4, np.int32)
    acl.rt.memcpy(host.ctypes.data, 16, b, 16, 2)
    assert host[0] == 8
    t0, _ = acl.rt.create_event()
    assert acl.rt.record_event(t0, s1) == 0
    assert acl.rt.synchronize_event(t0) == 0
    ms, ret = acl.rt.event_elapsed_time(ev, t0)
    assert ret == 0 and ms >= 0
    for e in (ev, t0):
        acl.rt.destroy_event(e)
    for s in (s1, s2):
        assert acl.rt.destroy_stream(s) == 0
    assert acl.rt.destroy_stream(s1) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.synchronize_stream(s1) == E.ACL_ERROR_RT_INVALID_HANDLE
    for p in (a, b, scratch):
        acl.rt.free(p)


def test_async_copies_and_memset(stream):
    x = np.arange(32, dtype=np.int32)
    d, _ = acl.rt.malloc(128, 0)
    y = np.zeros(32, np.int32)
    assert acl.rt.memcpy_async(d, 128, x.ctypes.data, 128, 1, stream) == 0
    assert acl.rt.memset_async(d, 128, 0, 8, stream) == 0
    assert acl.rt.memcpy_async(y.ctypes.data, 128, d, 128, 2, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert np.array_equal(y[2:], x[2:]) and not y[:2].any()
    assert acl.rt.memcpy_async(y.ctypes.data, 64, d, 128, 2, stream) == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.memcpy_async(d, 128, x.ctypes.data, 128, 1, 777) == E.ACL_ERROR_RT_INVALID_HANDLE
    acl.rt.free(d)


@pytest.mark.skipif(A.acl._state.state.backend.name != "host", reason="a GPU does not check argument sizes")
def test_kernel_fault_is_a_status_at_synchronize(stream):
    mod = A.RawModule(code='extern "C" __global__ void scale(float* x, float a, int n) '
                           '{ int i = threadIdx.x; if (i < n) x[i] *= a; }')
    k = mod.get_function("scale")
    d, _ = acl.rt.malloc(64, 0)
    k((1,), (16,), (d, 2.0, np.int32(16)), stream=stream)   # a Python float for a float parameter
    assert acl.rt.synchronize_stream(stream) == E.ACL_ERROR_RT_AICORE_EXCEPTION
    msg = acl.get_recent_err_msg()
    assert "scale" in msg and "argument 1" in msg
    assert acl.rt.synchronize_stream(stream) == 0    # reported once
    acl.rt.free(d)
