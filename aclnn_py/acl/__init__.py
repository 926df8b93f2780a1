"""pyACL-compatible runtime: ``acl.init``, ``acl.rt.*``, ``acl.util.*``, ``acl.get_recent_err_msg``.

Values first, status last: ``stream, ret = acl.rt.create_stream()``; calls that produce nothing
return just ``ret``. Nothing raises for a bad argument: it returns the status and records a
message that :func:`get_recent_err_msg` returns (thread local, cleared on read).
"""
from __future__ import annotations

from ..backends import DeviceError
from ..errors import fail, get_recent_err_msg, guarded
from ..status import AclError
from . import rt, util
from ._state import state

__all__ = ["init", "finalize", "get_recent_err_msg", "rt", "util"]


@guarded("acl.init", AclError.ACL_ERROR_INTERNAL_ERROR)
def init(config_path: str | None = None):
    """``aclInit``: once per process (a second call returns ACL_ERROR_REPEAT_INITIALIZE)."""
    with state.lock:
        if state.initialized:
            return fail(AclError.ACL_ERROR_REPEAT_INITIALIZE, "acl.init: already initialised")
        try:
            state.backend  # choose the backend now, so a broken environment shows here
        except Exception as e:  # pragma: no cover - depends on the machine
            return fail(AclError.ACL_ERROR_INTERNAL_ERROR, f"acl.init: no usable backend: {e}")
        state.initialized = True
    return AclError.ACL_SUCCESS


@guarded("acl.finalize", AclError.ACL_ERROR_INTERNAL_ERROR)
def finalize():
    """``aclFinalize``: waits for all work, releases streams and events; init may be called again."""
    with state.lock:
        if not state.initialized:
            return fail(AclError.ACL_ERROR_REPEAT_FINALIZE, "acl.finalize: not initialised (or already finalised)")
        for dev in list(state.active_devices):
            rt.reset_device(dev)
        try:
            state.backend.synchronize_all()
        except DeviceError:
            pass
        state.initialized = False
    return AclError.ACL_SUCCESS
