"""``acl.rt``: devices, streams, events and memory, pyACL style (values first, status last)."""
from __future__ import annotations

from ..backends import DeviceError
from ..errors import fail, guarded
from ..status import AclError
from . import _hostmem
from ._state import as_int, require_device, require_init, resolve_stream, state
from .memory import MAX_ADDRESS, Allocation, registry

__all__ = [
    "get_device_count", "set_device", "reset_device", "get_device",
    "create_stream", "destroy_stream", "synchronize_stream", "synchronize_device",
    "create_event", "record_event", "stream_wait_event", "synchronize_event", "query_event_status",
    "event_elapsed_time", "destroy_event",
    "malloc", "free", "malloc_host", "free_host", "memcpy", "memcpy_async", "memset", "memset_async",
    "ACL_MEMCPY_HOST_TO_HOST", "ACL_MEMCPY_HOST_TO_DEVICE", "ACL_MEMCPY_DEVICE_TO_HOST",
    "ACL_MEMCPY_DEVICE_TO_DEVICE", "ACL_MEMCPY_DEFAULT", "ACL_MEM_MALLOC_HUGE_FIRST", "ACL_MEM_MALLOC_HUGE_ONLY",
    "ACL_MEM_MALLOC_NORMAL_ONLY", "ACL_EVENT_RECORDED_STATUS_NOT_READY", "ACL_EVENT_RECORDED_STATUS_COMPLETE",
]

OK = AclError.ACL_SUCCESS

# aclrtMemcpyKind (acl_rt.h)
ACL_MEMCPY_HOST_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 0, 1, 2
ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEFAULT = 3, 4
# aclrtMemMallocPolicy
ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE_ONLY, ACL_MEM_MALLOC_NORMAL_ONLY = 0, 1, 2
_POLICY_BASES = set(range(8))
_POLICY_FLAGS = 0x100 | 0x1000 | 0x100000
# aclrtEventRecordedStatus
ACL_EVENT_RECORDED_STATUS_NOT_READY, ACL_EVENT_RECORDED_STATUS_COMPLETE = 0, 1


def _device_error(api: str, exc: Exception):
    """The status of a failed backend call: the backend's own (a CUDA error number mapped by the CUDA
    backend), else ACL_ERROR_RT_AICORE_EXCEPTION (a kernel fault, an unusable device)."""
    status = getattr(exc, "status", None)
    return fail(status if status is not None else AclError.ACL_ERROR_RT_AICORE_EXCEPTION, f"{api}: {exc}")


# Note [Every backend call is wrapped]
#     Every call into the backend below sits in ``try ... except DeviceError`` and becomes a status:
#     the CUDA backend turns each CuPy error into a DeviceError (backends/cuda.py, Note [CUDA errors
#     become statuses]), and after a sticky fault every call returns ACL_ERROR_RT_AICORE_EXCEPTION.
#     Releasing calls (reset_device, finalize, destroy_*, free*) finish their bookkeeping first, so the
#     handle or pointer is gone even when the device reports an error.


# devices ---------------------------------------------------------------------------------------

@guarded("acl.rt.get_device_count", AclError.ACL_ERROR_INTERNAL_ERROR, 0)
def get_device_count():
    st = require_init("acl.rt.get_device_count")
    if st:
        return 0, st
    try:
        return state.backend.device_count(), OK
    except DeviceError as e:
        return 0, _device_error("acl.rt.get_device_count", e)


@guarded("acl.rt.set_device", AclError.ACL_ERROR_INTERNAL_ERROR)
def set_device(device_id):
    st = require_init("acl.rt.set_device")
    if st:
        return st
    try:
        n = state.backend.device_count()
    except DeviceError as e:
        return _device_error("acl.rt.set_device", e)
    device_id = as_int(device_id) if as_int(device_id) is not None else device_id
    if type(device_id) is not int or not 0 <= device_id < n:
        return fail(AclError.ACL_ERROR_RT_INVALID_DEVICEID,
                    f"acl.rt.set_device: device id {device_id!r} out of range [0, {n})")
    try:
        state.backend.activate(device_id)
    except DeviceError as e:
        return _device_error("acl.rt.set_device", e)
    with state.lock:
        state.active_devices.add(device_id)
        state.default_device = device_id
    state.local.device = device_id
    return OK


@guarded("acl.rt.reset_device", AclError.ACL_ERROR_INTERNAL_ERROR)
def reset_device(device_id):
    st = require_init("acl.rt.reset_device")
    if st:
        return st
    dev = as_int(device_id)
    if dev is None or dev not in state.active_devices:
        return fail(AclError.ACL_ERROR_RT_INVALID_DEVICEID, f"acl.rt.reset_device: device {device_id!r} was not set")
    device_id = dev
    try:
        state.backend.synchronize_all()
    except DeviceError:
        pass  # reset discards pending errors, as aclrtResetDevice releases the context
    with state.lock:
        for h in [h for h, (d, _) in state.streams.items() if d == device_id]:
            try:
                state.backend.destroy_stream(state.streams.pop(h)[1])
            except DeviceError:
                pass      # the stream is gone all the same; its pending error goes with the context
        for h in [h for h, (d, _) in state.events.items() if d == device_id]:
            del state.events[h]
            state.recorded_events.discard(h)
        state.active_devices.discard(device_id)
        if state.default_device == device_id:
            state.default_device = None
    if getattr(state.local, "device", None) == device_id:
        del state.local.device
    return OK


@guarded("acl.rt.get_device", AclError.ACL_ERROR_INTERNAL_ERROR, -1)
def get_device():
    dev, st = require_device("acl.rt.get_device")
    return (dev if dev is not None else -1), st


# streams ---------------------------------------------------------------------------------------

@guarded("acl.rt.create_stream", AclError.ACL_ERROR_INTERNAL_ERROR, 0)
def create_stream():
    dev, st = require_device("acl.rt.create_stream")
    if st:
        return 0, st
    try:
        s = state.backend.create_stream()
    except DeviceError as e:
        return 0, _device_error("acl.rt.create_stream", e)
    h = state.new_handle()
    state.streams[h] = (dev, s)
    return h, OK


@guarded("acl.rt.destroy_stream", AclError.ACL_ERROR_INTERNAL_ERROR)
def destroy_stream(stream):
    st = require_init("acl.rt.destroy_stream")
    if st:
        return st
    h = as_int(stream)
    with state.lock:
        entry = state.streams.pop(h, None) if h is not None else None
    if entry is None:
        return fail(AclError.ACL_ERROR_RT_INVALID_HANDLE, f"acl.rt.destroy_stream: unknown or destroyed stream {stream!r}")
    try:
        state.backend.destroy_stream(entry[1])
    except DeviceError as e:
        return _device_error("acl.rt.destroy_stream", e)
    return OK


@guarded("acl.rt.synchronize_stream", AclError.ACL_ERROR_INTERNAL_ERROR)
def synchronize_stream(stream):
    s, st = resolve_stream("acl.rt.synchronize_stream", stream)
    if st:
        return st
    try:
        state.backend.synchronize(s)
    except DeviceError as e:
        return _device_error("acl.rt.synchronize_stream", e)
    return OK


@guarded("acl.rt.synchronize_device", AclError.ACL_ERROR_INTERNAL_ERROR)
def synchronize_device():
    _, st = require_device("acl.rt.synchronize_device")
    if st:
        return st
    try:
        state.backend.synchronize_all()
    except DeviceError as e:
        return _device_error("acl.rt.synchronize_device", e)
    return OK


# events ----------------------------------------------------------------------------------------

def _event(api, event):
    st = require_init(api)
    if st:
        return None, st
    h = as_int(event)
    entry = state.events.get(h) if h is not None else None
    if entry is None:
        return None, fail(AclError.ACL_ERROR_RT_INVALID_HANDLE, f"{api}: unknown or destroyed event {event!r}")
    return entry[1], OK


@guarded("acl.rt.create_event", AclError.ACL_ERROR_INTERNAL_ERROR, 0)
def create_event():
    dev, st = require_device("acl.rt.create_event")
    if st:
        return 0, st
    try:
        ev = state.backend.create_event()
    except DeviceError as e:
        return 0, _device_error("acl.rt.create_event", e)
    h = state.new_handle()
    state.events[h] = (dev, ev)
    return h, OK


@guarded("acl.rt.destroy_event", AclError.ACL_ERROR_INTERNAL_ERROR)
def destroy_event(event):
    ev, st = _event("acl.rt.destroy_event", event)
    if st:
        return st
    state.events.pop(as_int(event), None)
    state.recorded_events.discard(as_int(event))
    return OK


@guarded("acl.rt.record_event", AclError.ACL_ERROR_INTERNAL_ERROR)
def record_event(event, stream):
    ev, st = _event("acl.rt.record_event", event)
    if st:
        return st
    s, st = resolve_stream("acl.rt.record_event", stream)
    if st:
        return st
    try:
        state.backend.record_event(ev, s)
    except DeviceError as e:
        return _device_error("acl.rt.record_event", e)
    state.recorded_events.add(as_int(event))
    return OK


@guarded("acl.rt.stream_wait_event", AclError.ACL_ERROR_INTERNAL_ERROR)
def stream_wait_event(stream, event):
    ev, st = _event("acl.rt.stream_wait_event", event)
    if st:
        return st
    s, st = resolve_stream("acl.rt.stream_wait_event", stream)
    if st:
        return st
    try:
        state.backend.stream_wait_event(s, ev)
    except DeviceError as e:
        return _device_error("acl.rt.stream_wait_event", e)
    return OK


@guarded("acl.rt.synchronize_event", AclError.ACL_ERROR_INTERNAL_ERROR)
def synchronize_event(event):
    ev, st = _event("acl.rt.synchronize_event", event)
    if st:
        return st
    try:
        state.backend.synchronize_event(ev)
    except DeviceError as e:
        return _device_error("acl.rt.synchronize_event", e)
    return OK


@guarded("acl.rt.query_event_status", AclError.ACL_ERROR_INTERNAL_ERROR, ACL_EVENT_RECORDED_STATUS_NOT_READY)
def query_event_status(event):
    ev, st = _event("acl.rt.query_event_status", event)
    if st:
        return ACL_EVENT_RECORDED_STATUS_NOT_READY, st
    try:
        done = state.backend.query_event(ev)
    except DeviceError as e:
        return ACL_EVENT_RECORDED_STATUS_NOT_READY, _device_error("acl.rt.query_event_status", e)
    return (ACL_EVENT_RECORDED_STATUS_COMPLETE if done else ACL_EVENT_RECORDED_STATUS_NOT_READY), OK


@guarded("acl.rt.event_elapsed_time", AclError.ACL_ERROR_INTERNAL_ERROR, 0.0)
def event_elapsed_time(start, end):
    a, st = _event("acl.rt.event_elapsed_time", start)
    if st:
        return 0.0, st
    b, st = _event("acl.rt.event_elapsed_time", end)
    if st:
        return 0.0, st
    sticky = getattr(state.backend, "sticky_error", None)
    if sticky is not None:
        return 0.0, _device_error("acl.rt.event_elapsed_time", sticky)
    missing = [n for n, h in (("start", start), ("end", end)) if as_int(h) not in state.recorded_events]
    if missing:        # cudaEventElapsedTime on a never-recorded event is an error, not a time
        return 0.0, fail(AclError.ACL_ERROR_RT_EVENT_NOT_COMPLETE,
                         f"acl.rt.event_elapsed_time: the {' and '.join(missing)} event was never recorded")
    try:
        if not (state.backend.query_event(a) and state.backend.query_event(b)):
            return 0.0, fail(AclError.ACL_ERROR_RT_EVENT_NOT_COMPLETE,
                             "acl.rt.event_elapsed_time: both events must be recorded and complete")
        return state.backend.elapsed_ms(a, b), OK
    except DeviceError as e:
        if getattr(e, "sticky", False):
            return 0.0, _device_error("acl.rt.event_elapsed_time", e)
        return 0.0, fail(AclError.ACL_ERROR_RT_EVENT_NOT_COMPLETE, f"acl.rt.event_elapsed_time: {e}")
    except TypeError:
        return 0.0, fail(AclError.ACL_ERROR_RT_EVENT_NOT_COMPLETE,
                         "acl.rt.event_elapsed_time: both events must have been recorded")


# memory ----------------------------------------------------------------------------------------
#
# Note [Memory checks]
#     Every address a copy or a fill touches is checked before anything is queued: integers only
#     (NumPy integers too), ranges inside [0, 2**64), ``count <= dest_max``. A side that touches a
#     known allocation must lie inside exactly one live allocation (a device range past its end, a
#     freed pointer, a read-only foreign buffer as destination are refused). A host side the runtime
#     does not know (``numpy_to_ptr``) must be memory of this process with the right permissions
#     (``_hostmem``). Failures return ACL_ERROR_INVALID_PARAM (a kind that names the wrong side of the
#     device/host divide: ACL_ERROR_RT_INVALID_MEMORY_TYPE) and copy nothing.

def _size_ok(api, size):
    n = as_int(size)
    if n is None or n <= 0 or n >= MAX_ADDRESS:
        return fail(AclError.ACL_ERROR_INVALID_PARAM, f"{api}: size must be a positive int below 2**64, got {size!r}")
    return OK


def _alloc(api, size, host):
    try:
        return (state.backend.malloc_host if host else state.backend.malloc)(size), OK
    except (MemoryError, ValueError, OverflowError) as e:
        return 0, fail(AclError.ACL_ERROR_RT_MEMORY_ALLOCATION, f"{api}: out of memory for {size} bytes ({e})")
    except DeviceError as e:
        return 0, _device_error(api, e)


@guarded("acl.rt.malloc", AclError.ACL_ERROR_INTERNAL_ERROR, 0)
def malloc(size, policy=ACL_MEM_MALLOC_HUGE_FIRST):
    dev, st = require_device("acl.rt.malloc")
    if st or (st := _size_ok("acl.rt.malloc", size)):
        return 0, st
    pol = as_int(policy)
    if pol is None or pol < 0 or (pol & ~_POLICY_FLAGS) not in _POLICY_BASES:
        return 0, fail(AclError.ACL_ERROR_INVALID_PARAM, f"acl.rt.malloc: unknown memory policy {policy!r}")
    size = as_int(size)
    ptr, st = _alloc("acl.rt.malloc", size, False)
    if not st:
        registry.add(Allocation(ptr, size, dev, "device"))
    return ptr, st


def _free(api, ptr, kind, backend_free):
    st = require_init(api)
    if st:
        return st
    p = as_int(ptr)
    err = None
    with registry.launch_lock:        # a phase 2 validating this pointer sees it live or freed, never half
        alloc = registry.remove(p, kind) if p is not None else None
        if alloc is not None:
            try:
                backend_free(p)       # stream-ordered: released after the work queued before this call
            except DeviceError as e:  # the pointer is dead all the same (a faulted device frees nothing)
                err = e
    if err is not None:
        return _device_error(api, err)
    if alloc is None:
        return fail(AclError.ACL_ERROR_RT_MEMORY_FREE,
                    f"{api}: {ptr!r} is not an address returned by acl.rt.{'malloc' if kind == 'device' else 'malloc_host'}"
                    f" (unknown or already freed)")
    return OK


@guarded("acl.rt.free", AclError.ACL_ERROR_INTERNAL_ERROR)
def free(dev_ptr):
    """``aclrtFree``: the pointer is dead at once for new work; its memory is released once the work
    already queued on every stream has run (stream-ordered), so queued kernels never write into memory
    handed out again."""
    return _free("acl.rt.free", dev_ptr, "device", lambda p: state.backend.free(p))


@guarded("acl.rt.malloc_host", AclError.ACL_ERROR_INTERNAL_ERROR, 0)
def malloc_host(size):
    st = require_init("acl.rt.malloc_host")
    if st or (st := _size_ok("acl.rt.malloc_host", size)):
        return 0, st
    size = as_int(size)
    ptr, st = _alloc("acl.rt.malloc_host", size, True)
    if not st:
        registry.add(Allocation(ptr, size, None, "host"))
    return ptr, st


@guarded("acl.rt.free_host", AclError.ACL_ERROR_INTERNAL_ERROR)
def free_host(host_ptr):
    return _free("acl.rt.free_host", host_ptr, "host", lambda p: state.backend.free_host(p))


def _on_device(ptr, nbytes):
    a = registry.find(ptr, nbytes)
    return a is not None and a.device is not None


def _side(api, name, ptr, n, write):
    """(allocation or None for unknown host memory, status): where one side of a copy lies."""
    known = registry.overlapping(ptr, n)
    if known:
        a = registry.find(ptr, n)
        if a is None:
            k = known[0]
            return None, fail(AclError.ACL_ERROR_INVALID_PARAM,
                              f"{api}: {name} range [0x{ptr:x}, +{n}) runs outside the allocation "
                              f"[0x{k.base:x}, +{k.size}) it touches; nothing copied")
        if write and not a.writable:
            return None, fail(AclError.ACL_ERROR_INVALID_PARAM,
                              f"{api}: {name} [0x{ptr:x}, +{n}) is read-only memory (registered from a read-only "
                              f"buffer); nothing copied")
        return a, OK
    dying = getattr(state.backend, "is_dying", None)
    if dying is not None and dying(ptr, n):
        return None, fail(AclError.ACL_ERROR_INVALID_PARAM,
                          f"{api}: {name} [0x{ptr:x}, +{n}) is freed device memory; nothing copied")
    if state.backend.name == "cuda" and _cuda_knows(ptr):
        return None, OK        # device memory of another allocator (CuPy, PyTorch): the driver checks it
    # anything else is host memory, which CUDA (like the emulator) touches from the CPU: an address that
    # is not mapped would be a SIGSEGV inside cudaMemcpy, so the operating system is asked first
    err = _hostmem.range_error(ptr, n, write)
    if err is not None:
        return None, fail(AclError.ACL_ERROR_INVALID_PARAM, f"{api}: {name} {err}; nothing copied")
    return None, OK


def _cuda_knows(ptr) -> bool:
    """Is ``ptr`` device (or managed) memory the CUDA driver knows?"""
    try:
        return state.backend.pointer_device(ptr) is not None
    except DeviceError:        # a broken context: the copy itself will report it
        return False


def _pointer(api, name, v):
    p = as_int(v)
    if p is None or p <= 0 or p >= MAX_ADDRESS:
        return None, fail(AclError.ACL_ERROR_INVALID_PARAM,
                          f"{api}: {name} must be a non-null address in (0, 2**64), got {v!r}")
    return p, OK


def _copy_checks(api, dst, dst_max, src, count, kind):
    """(dst, src, count) as ints, and the status."""
    bad = (None, None, 0)
    dst, st = _pointer(api, "dst", dst)
    if st:
        return (*bad, st)
    src, st = _pointer(api, "src", src)
    if st:
        return (*bad, st)
    vals = []
    for name, v in (("dest_max", dst_max), ("count", count)):
        n = as_int(v)
        if n is None or n < 0:
            return (*bad, fail(AclError.ACL_ERROR_INVALID_PARAM, f"{api}: {name} must be an int >= 0, got {v!r}"))
        vals.append(n)
    dst_max, count = vals
    if count > dst_max:
        return (*bad, fail(AclError.ACL_ERROR_INVALID_PARAM,
                           f"{api}: count {count} exceeds dest_max {dst_max}; nothing copied"))
    k = as_int(kind)
    if k not in (0, 1, 2, 3, 4):
        return (*bad, fail(AclError.ACL_ERROR_INVALID_PARAM, f"{api}: unknown aclrtMemcpyKind {kind!r}"))
    if count == 0:
        return dst, src, 0, OK
    for name, p in (("dst", dst), ("src", src)):
        if p + count > MAX_ADDRESS:
            return (*bad, fail(AclError.ACL_ERROR_INVALID_PARAM,
                               f"{api}: {name} range [0x{p:x}, +{count}) wraps past 2**64; nothing copied"))
    want_dst, want_src = k in (1, 3), k in (2, 3)
    found = []
    for name, p, write, want in (("dst", dst, True, want_dst), ("src", src, False, want_src)):
        a = registry.find(p, count)
        is_dev = a is not None and a.device is not None
        if k != ACL_MEMCPY_DEFAULT and want != is_dev:
            what = "device allocation" if is_dev else "no device allocation covering it"
            return (*bad, fail(AclError.ACL_ERROR_RT_INVALID_MEMORY_TYPE,
                               f"{api}: kind {k}: {name}: {'device' if want else 'host'} memory expected at "
                               f"0x{p:x}, found {what} (count {count} bytes must fit inside the allocation)"))
        a, st = _side(api, name, p, count, write)
        if st:
            return (*bad, st)
        found.append(a)
    return dst, src, count, OK


def _sync_first():
    """A synchronous copy waits for queued work (on every backend: the same rule on a GPU and on the
    emulator); waiting before taking the launch lock keeps the wait under the lock short (it only
    covers work queued meanwhile). The backend's synchronous copy is itself done when it returns."""
    try:
        state.backend.synchronize_all()
    except DeviceError as e:
        return e
    return None


@guarded("acl.rt.memcpy", AclError.ACL_ERROR_INTERNAL_ERROR)
def memcpy(dst, dest_max, src, count, kind):
    st = require_device("acl.rt.memcpy")[1]
    if st:
        return st
    err = _sync_first()
    if err is not None:
        return _device_error("acl.rt.memcpy", err)
    with registry.launch_lock:    # no free of these buffers can slip between the check and the copy
        dst, src, count, st = _copy_checks("acl.rt.memcpy", dst, dest_max, src, count, kind)
        if st or count == 0:
            return st
        try:
            state.backend.memcpy(dst, src, count, int(kind), None)
        except DeviceError as e:
            return _device_error("acl.rt.memcpy", e)
    return OK


@guarded("acl.rt.memcpy_async", AclError.ACL_ERROR_INTERNAL_ERROR)
def memcpy_async(dst, dest_max, src, count, kind, stream):
    s, st = resolve_stream("acl.rt.memcpy_async", stream)
    if st:
        return st
    with registry.launch_lock:    # checked and queued before any free of these buffers is ordered
        dst, src, count, st = _copy_checks("acl.rt.memcpy_async", dst, dest_max, src, count, kind)
        if st or count == 0:
            return st
        try:
            state.backend.memcpy(dst, src, count, int(kind), s)
        except DeviceError as e:
            return _device_error("acl.rt.memcpy_async", e)
    return OK


def _set_checks(api, dev_ptr, max_count, value, count):
    bad = (None, 0, 0)
    p, st = _pointer(api, "dev_ptr", dev_ptr)
    if st:
        return (*bad, st)
    n, m = as_int(count), as_int(max_count)
    if n is None or m is None or n < 0 or n > m:
        return (*bad, fail(AclError.ACL_ERROR_INVALID_PARAM,
                           f"{api}: count {count!r} must be an int in [0, max_count={max_count!r}]"))
    v = as_int(value)
    if v is None:
        return (*bad, fail(AclError.ACL_ERROR_INVALID_PARAM, f"{api}: value must be an int, got {value!r}"))
    if n and not _on_device(p, n):
        return (*bad, fail(AclError.ACL_ERROR_RT_INVALID_MEMORY_TYPE,
                           f"{api}: [0x{p:x}, +{n}) is not inside a live device allocation"))
    if n and not registry.writable(p, n):
        return (*bad, fail(AclError.ACL_ERROR_INVALID_PARAM, f"{api}: [0x{p:x}, +{n}) is read-only memory"))
    return p, v, n, OK


@guarded("acl.rt.memset", AclError.ACL_ERROR_INTERNAL_ERROR)
def memset(dev_ptr, max_count, value, count):
    st = require_device("acl.rt.memset")[1]
    if st:
        return st
    err = _sync_first()
    if err is not None:
        return _device_error("acl.rt.memset", err)
    with registry.launch_lock:
        p, v, n, st = _set_checks("acl.rt.memset", dev_ptr, max_count, value, count)
        if st or n == 0:
            return st
        try:
            state.backend.memset(p, v & 0xFF, n, None)
        except DeviceError as e:
            return _device_error("acl.rt.memset", e)
    return OK


@guarded("acl.rt.memset_async", AclError.ACL_ERROR_INTERNAL_ERROR)
def memset_async(dev_ptr, max_count, value, count, stream):
    s, st = resolve_stream("acl.rt.memset_async", stream)
    if st:
        return st
    with registry.launch_lock:
        p, v, n, st = _set_checks("acl.rt.memset_async", dev_ptr, max_count, value, count)
        if st or n == 0:
            return st
        try:
            state.backend.memset(p, v & 0xFF, n, s)
        except DeviceError as e:
            return _device_error("acl.rt.memset_async", e)
    return OK
