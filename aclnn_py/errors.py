"""The recent error message (``aclGetRecentErrMsg``): thread local, newest first, cleared on read."""
from __future__ import annotations

import threading

_local = threading.local()


class DeviceError(RuntimeError):
    """A failure reported by the device while running work (a kernel fault, an emulator error)."""


def record_error(message: str) -> None:
    """Remember ``message`` for this thread's next ``get_recent_err_msg()``."""
    msgs = getattr(_local, "msgs", None)
    if msgs is None:
        msgs = _local.msgs = []
    msgs.insert(0, message)
    del msgs[16:]


def fail(status, message: str):
    """Record ``message`` and return ``status``: the one-liner every failing API path uses."""
    record_error(message)
    return status


def get_recent_err_msg() -> str | None:
    """The messages of this thread's failed calls since the last read, newest first; ``None`` if none."""
    msgs = getattr(_local, "msgs", None)
    if not msgs:
        return None
    _local.msgs = []
    return "\n".join(msgs)
