"""The recent error message (``aclGetRecentErrMsg``): thread local, newest first, cleared on read."""
from __future__ import annotations

import functools
import os
import threading

_local = threading.local()


class DeviceError(RuntimeError):
    """A failure reported by the device while running work (a kernel fault, an emulator error), or by
    a CUDA runtime/driver call (the CUDA backend turns every CuPy error into one).

    ``status``: the ``AclError`` the runtime returns for it (None: ACL_ERROR_RT_AICORE_EXCEPTION);
    ``code``: the CUDA error number when there is one; ``sticky``: the device context is unusable
    for the rest of the process (an illegal address, a trap, ...), as CUDA's sticky errors are."""

    def __init__(self, message: str = "", *, status=None, code: int | None = None, sticky: bool = False):
        super().__init__(message)
        self.status = status
        self.code = code
        self.sticky = sticky


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


STRICT = os.environ.get("ACLNN_PY_STRICT", "") not in ("", "0")   # tests: internal errors propagate


def guarded(api: str, status, *defaults):
    """Decorator, the last line of defence of a public API: an exception that escapes the function
    (a bug: every bad argument has its own check and message) becomes ``(*defaults, status)`` with a
    message naming the API. Under ``ACLNN_PY_STRICT=1`` (the tests, the fuzzers) it propagates."""
    def wrap(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except Exception as e:
                if STRICT:
                    raise
                record_error(f"{api}: internal error ({type(e).__name__}: {e}); please report it")
                return (*defaults, status) if defaults else status
        return inner
    return wrap
