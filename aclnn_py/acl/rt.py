"""``acl.rt``: devices, streams, events and memory, pyACL style (values first, status last)."""
from __future__ import annotations

from ..backends import DeviceError
from ..errors import fail
from ..status import AclError
from ._state import require_device, require_init, resolve_stream, state
from .memory import Allocation, registry

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
    return fail(AclError.ACL_ERROR_RT_AICORE_EXCEPTION, f"{api}: {exc}")


# devices ---------------------------------------------------------------------------------------

def get_device_count():
    st = require_init("acl.rt.get_device_count")
    if st:
        return 0, st
    return state.backend.device_count(), OK


def set_device(device_id):
    st = require_init("acl.rt.set_device")
    if st:
        return st
    n = state.backend.device_count()
    if not isinstance(device_id, int) or not 0 <= device_id < n:
        return fail(AclError.ACL_ERROR_RT_INVALID_DEVICEID,
                    f"acl.rt.set_device: device id {device_id!r} out of range [0, {n})")
    state.backend.activate(device_id)
    with state.lock:
        state.active_devices.add(device_id)
        state.default_device = device_id
    state.local.device = device_id
    return OK


def reset_device(device_id):
    st = require_init("acl.rt.reset_device")
    if st:
        return st
    if device_id not in state.active_devices:
        return fail(AclError.ACL_ERROR_RT_INVALID_DEVICEID, f"acl.rt.reset_device: device {device_id!r} was not set")
    try:
        state.backend.synchronize_all()
    except DeviceError:
        pass  # reset discards pending errors, as aclrtResetDevice releases the context
    with state.lock:
        for h in [h for h, (d, _) in state.streams.items() if d == device_id]:
            state.backend.destroy_stream(state.streams.pop(h)[1])
        for h in [h for h, (d, _) in state.events.items() if d == device_id]:
            del state.events[h]
        state.active_devices.discard(device_id)
        if state.default_device == device_id:
            state.default_device = None
    if getattr(state.local, "device", None) == device_id:
        del state.local.device
    return OK


def get_device():
    dev, st = require_device("acl.rt.get_device")
    return (dev if dev is not None else -1), st


# streams ---------------------------------------------------------------------------------------

def create_stream():
    dev, st = require_device("acl.rt.create_stream")
    if st:
        return 0, st
    h = state.new_handle()
    state.streams[h] = (dev, state.backend.create_stream())
    return h, OK


def destroy_stream(stream):
    st = require_init("acl.rt.destroy_stream")
    if st:
        return st
    entry = state.streams.pop(stream, None) if isinstance(stream, int) else None
    if entry is None:
        return fail(AclError.ACL_ERROR_RT_INVALID_HANDLE, f"acl.rt.destroy_stream: unknown or destroyed stream {stream!r}")
    try:
        state.backend.destroy_stream(entry[1])
    except DeviceError as e:
        return _device_error("acl.rt.destroy_stream", e)
    return OK


def synchronize_stream(stream):
    s, st = resolve_stream("acl.rt.synchronize_stream", stream)
    if st:
        return st
    try:
        state.backend.synchronize(s)
    except DeviceError as e:
        return _device_error("acl.rt.synchronize_stream", e)
    return OK


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
    entry = state.events.get(event) if isinstance(event, int) else None
    if entry is None:
        return None, fail(AclError.ACL_ERROR_RT_INVALID_HANDLE, f"{api}: unknown or destroyed event {event!r}")
    return entry[1], OK


def create_event():
    dev, st = require_device("acl.rt.create_event")
    if st:
        return 0, st
    h = state.new_handle()
    state.events[h] = (dev, state.backend.create_event())
    return h, OK


def destroy_event(event):
    ev, st = _event("acl.rt.destroy_event", event)
    if st:
        return st
    del state.events[event]
    return OK


def record_event(event, stream):
    ev, st = _event("acl.rt.record_event", event)
    if st:
        return st
    s, st = resolve_stream("acl.rt.record_event", stream)
    if st:
        return st
    state.backend.record_event(ev, s)
    return OK


def stream_wait_event(stream, event):
    ev, st = _event("acl.rt.stream_wait_event", event)
    if st:
        return st
    s, st = resolve_stream("acl.rt.stream_wait_event", stream)
    if st:
        return st
    state.backend.stream_wait_event(s, ev)
    return OK


def synchronize_event(event):
    ev, st = _event("acl.rt.synchronize_event", event)
    if st:
        return st
    try:
        state.backend.synchronize_event(ev)
    except DeviceError as e:
        return _device_error("acl.rt.synchronize_event", e)
    return OK


def query_event_status(event):
    ev, st = _event("acl.rt.query_event_status", event)
    if st:
        return ACL_EVENT_RECORDED_STATUS_NOT_READY, st
    done = state.backend.query_event(ev)
    return (ACL_EVENT_RECORDED_STATUS_COMPLETE if done else ACL_EVENT_RECORDED_STATUS_NOT_READY), OK


def event_elapsed_time(start, end):
    a, st = _event("acl.rt.event_elapsed_time", start)
    if st:
        return 0.0, st
    b, st = _event("acl.rt.event_elapsed_time", end)
    if st:
        return 0.0, st
    if not (state.backend.query_event(a) and state.backend.query_event(b)):
        return 0.0, fail(AclError.ACL_ERROR_RT_EVENT_NOT_COMPLETE,
                         "acl.rt.event_elapsed_time: both events must be recorded and complete")
    try:
        return state.backend.elapsed_ms(a, b), OK
    except (TypeError, DeviceError):
        return 0.0, fail(AclError.ACL_ERROR_RT_EVENT_NOT_COMPLETE,
                         "acl.rt.event_elapsed_time: both events must have been recorded")


# memory ----------------------------------------------------------------------------------------

def _size_ok(api, size):
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        return fail(AclError.ACL_ERROR_INVALID_PARAM, f"{api}: size must be a positive int, got {size!r}")
    return OK


def malloc(size, policy=ACL_MEM_MALLOC_HUGE_FIRST):
    dev, st = require_device("acl.rt.malloc")
    if st or (st := _size_ok("acl.rt.malloc", size)):
        return 0, st
    if not isinstance(policy, int) or (policy & ~_POLICY_FLAGS) not in _POLICY_BASES:
        return 0, fail(AclError.ACL_ERROR_INVALID_PARAM, f"acl.rt.malloc: unknown memory policy {policy!r}")
    try:
        ptr = state.backend.malloc(size)
    except MemoryError as e:
        return 0, fail(AclError.ACL_ERROR_RT_MEMORY_ALLOCATION, f"acl.rt.malloc: out of memory for {size} bytes ({e})")
    registry.add(Allocation(ptr, size, dev, "device"))
    return ptr, OK


def free(dev_ptr):
    st = require_init("acl.rt.free")
    if st:
        return st
    alloc = registry.remove(dev_ptr, "device") if isinstance(dev_ptr, int) else None
    if alloc is None:
        return fail(AclError.ACL_ERROR_RT_MEMORY_FREE,
                    f"acl.rt.free: {dev_ptr!r} is not an address returned by acl.rt.malloc (unknown or already freed)")
    state.backend.free(dev_ptr)
    return OK


def malloc_host(size):
    st = require_init("acl.rt.malloc_host")
    if st or (st := _size_ok("acl.rt.malloc_host", size)):
        return 0, st
    try:
        ptr = state.backend.malloc_host(size)
    except MemoryError as e:
        return 0, fail(AclError.ACL_ERROR_RT_MEMORY_ALLOCATION, f"acl.rt.malloc_host: out of memory ({e})")
    registry.add(Allocation(ptr, size, None, "host"))
    return ptr, OK


def free_host(host_ptr):
    st = require_init("acl.rt.free_host")
    if st:
        return st
    alloc = registry.remove(host_ptr, "host") if isinstance(host_ptr, int) else None
    if alloc is None:
        return fail(AclError.ACL_ERROR_RT_MEMORY_FREE,
                    f"acl.rt.free_host: {host_ptr!r} is not an address returned by acl.rt.malloc_host")
    state.backend.free_host(host_ptr)
    return OK


def _on_device(ptr, nbytes):
    a = registry.find(ptr, nbytes)
    return a is not None and a.device is not None


def _copy_checks(api, dst, dst_max, src, count, kind):
    for name, v in (("dst", dst), ("src", src)):
        if not isinstance(v, int) or isinstance(v, bool) or v == 0:
            return fail(AclError.ACL_ERROR_INVALID_PARAM, f"{api}: {name} must be a non-null address, got {v!r}")
    for name, v in (("dest_max", dst_max), ("count", count)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            return fail(AclError.ACL_ERROR_INVALID_PARAM, f"{api}: {name} must be an int >= 0, got {v!r}")
    if count > dst_max:
        return fail(AclError.ACL_ERROR_INVALID_PARAM, f"{api}: count {count} exceeds dest_max {dst_max}; nothing copied")
    if kind not in (0, 1, 2, 3, 4):
        return fail(AclError.ACL_ERROR_INVALID_PARAM, f"{api}: unknown aclrtMemcpyKind {kind!r}")
    if count == 0:
        return OK
    dst_dev, src_dev = registry.find(dst, count), registry.find(src, count)
    dst_dev = dst_dev is not None and dst_dev.device is not None
    src_dev = src_dev is not None and src_dev.device is not None
    if kind == ACL_MEMCPY_DEFAULT:
        return OK
    want_dst, want_src = kind in (1, 3), kind in (2, 3)
    if want_dst != dst_dev or want_src != src_dev:
        side = lambda want, is_dev, p: (f"{'device' if want else 'host'} memory expected at 0x{p:x}, "
                                        f"found {'device allocation' if is_dev else 'no device allocation covering it'}")
        bad = [side(w, d, p) for w, d, p in ((want_dst, dst_dev, dst), (want_src, src_dev, src)) if w != d]
        return fail(AclError.ACL_ERROR_RT_INVALID_MEMORY_TYPE, f"{api}: kind {kind}: " + "; ".join(bad)
                    + f" (count {count} bytes must fit inside the allocation)")
    return OK


def memcpy(dst, dest_max, src, count, kind):
    st = require_device("acl.rt.memcpy")[1] or _copy_checks("acl.rt.memcpy", dst, dest_max, src, count, kind)
    if st or count == 0:
        return st
    try:
        state.backend.memcpy(dst, src, count, kind, None)
    except DeviceError as e:
        return _device_error("acl.rt.memcpy", e)
    return OK


def memcpy_async(dst, dest_max, src, count, kind, stream):
    st = _copy_checks("acl.rt.memcpy_async", dst, dest_max, src, count, kind) if state.initialized else None
    s, st2 = resolve_stream("acl.rt.memcpy_async", stream)
    st = st2 or st
    if st or count == 0:
        return st
    state.backend.memcpy(dst, src, count, kind, s)
    return OK


def _set_checks(api, dev_ptr, max_count, value, count):
    if not isinstance(dev_ptr, int) or dev_ptr == 0:
        return fail(AclError.ACL_ERROR_INVALID_PARAM, f"{api}: dev_ptr must be a non-null address, got {dev_ptr!r}")
    if not isinstance(count, int) or not isinstance(max_count, int) or count < 0 or count > max_count:
        return fail(AclError.ACL_ERROR_INVALID_PARAM, f"{api}: count {count!r} must be in [0, max_count={max_count!r}]")
    if not isinstance(value, int):
        return fail(AclError.ACL_ERROR_INVALID_PARAM, f"{api}: value must be an int, got {value!r}")
    if count and not _on_device(dev_ptr, count):
        return fail(AclError.ACL_ERROR_RT_INVALID_MEMORY_TYPE,
                    f"{api}: [0x{dev_ptr:x}, +{count}) is not inside a device allocation")
    return OK


def memset(dev_ptr, max_count, value, count):
    st = require_device("acl.rt.memset")[1] or _set_checks("acl.rt.memset", dev_ptr, max_count, value, count)
    if st or count == 0:
        return st
    try:
        state.backend.memset(dev_ptr, value & 0xFF, count, None)
    except DeviceError as e:
        return _device_error("acl.rt.memset", e)
    return OK


def memset_async(dev_ptr, max_count, value, count, stream):
    s, st = resolve_stream("acl.rt.memset_async", stream)
    st = st or _set_checks("acl.rt.memset_async", dev_ptr, max_count, value, count)
    if st or count == 0:
        return st
    state.backend.memset(dev_ptr, value & 0xFF, count, s)
    return OK

