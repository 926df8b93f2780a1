"""Process state of the runtime: initialised or not, the current device, stream and event handles."""
from __future__ import annotations

import itertools
import threading

import numpy as np

from ..backends import get_backend
from ..errors import fail
from ..status import AclError


class State:
    def __init__(self):
        self.lock = threading.RLock()
        self.initialized = False
        self.active_devices: set[int] = set()
        self.default_device: int | None = None
        self.local = threading.local()
        self.streams: dict[int, tuple[int, object]] = {}   # handle -> (device, backend stream)
        self.events: dict[int, tuple[int, object]] = {}
        self.recorded_events: set[int] = set()              # event handles recorded at least once
        self._handles = itertools.count(0x1000)

    def new_handle(self) -> int:
        return next(self._handles)

    @property
    def backend(self):
        return get_backend()

    def current_device(self) -> int | None:
        return getattr(self.local, "device", self.default_device)


state = State()


def as_int(v) -> int | None:
    """``v`` as a Python int when it is an integer (``int`` or a NumPy integer, never ``bool``), else None."""
    if type(v) is int:
        return v
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        return None
    return int(v)


def require_init(api: str):
    """The status a runtime call returns when ``acl.init`` has not run (0 when it has)."""
    if not state.initialized:
        return fail(AclError.ACL_ERROR_UNINITIALIZE, f"{api}: acl.init() has not been called")
    return AclError.ACL_SUCCESS


def require_device(api: str):
    """(device, status): the calling thread's current device, or ACL_ERROR_RT_CONTEXT_NULL."""
    st = require_init(api)
    if st:
        return None, st
    dev = state.current_device()
    if dev is None or dev not in state.active_devices:
        return None, fail(AclError.ACL_ERROR_RT_CONTEXT_NULL, f"{api}: no current device; call acl.rt.set_device first")
    return dev, AclError.ACL_SUCCESS


def resolve_stream(api: str, stream):
    """(backend stream, status) for a stream handle; ``None``/0 is the current device's default stream."""
    dev, st = require_device(api)
    if st:
        return None, st
    h = as_int(stream)
    if stream is None or h == 0:
        return state.backend.default_stream(), AclError.ACL_SUCCESS
    entry = state.streams.get(h) if h is not None else None
    if entry is None:
        return None, fail(AclError.ACL_ERROR_RT_INVALID_HANDLE, f"{api}: unknown or destroyed stream {stream!r}")
    return entry[1], AclError.ACL_SUCCESS
