"""Status codes: ``AclnnStatus``, ``AclError`` and ``CudnnStatus``, built from ``status_codes/*.csv``.

The CSV files are the single source of truth; these IntEnums are generated from them at import time,
so ``ret == 0`` is success and ``AclnnStatus(161002).name == "ACLNN_ERR_PARAM_INVALID"``.
"""
from __future__ import annotations

import csv
import enum

from ._paths import status_codes_dir

__all__ = ["AclnnStatus", "AclError", "CudnnStatus", "load_status_table", "AclnnError", "check"]


def load_status_table(stem: str) -> list[tuple[str, int, str]]:
    """Rows ``(name, value, meaning)`` of ``status_codes/<stem>.csv``."""
    path = status_codes_dir() / f"{stem}.csv"
    with open(path, newline="") as f:
        lines = [ln for ln in f if not ln.startswith("#")]
    return [(r["name"], int(r["value"]), r["meaning"]) for r in csv.DictReader(lines)]


def _make(enum_name: str, stem: str) -> type[enum.IntEnum]:
    return enum.IntEnum(enum_name, [(n, v) for n, v, _ in load_status_table(stem)], module=__name__)


AclnnStatus = _make("AclnnStatus", "aclnn_status")
AclError = _make("AclError", "acl_error")
CudnnStatus = _make("CudnnStatus", "cudnn_status")


class AclnnError(RuntimeError):
    """Raised by :func:`check` (and by CuPy-style kernel launches); carries ``.status``."""

    def __init__(self, status: int, message: str = ""):
        self.status = status
        super().__init__(f"{_status_name(status)} ({int(status)}): {message}" if message else _status_name(status))


def _status_name(status: int) -> str:
    for e in (AclnnStatus, AclError, CudnnStatus):
        try:
            return e(status).name
        except ValueError:
            pass
    return f"status {int(status)}"


def check(ret):
    """For those who prefer exceptions: ``value = check(acl.rt.malloc(n, 0))``.

    Accepts a bare status or a pyACL tuple ``(values..., ret)``; raises :class:`AclnnError` with
    the recent error message when the status is not 0, else returns the values (one, a tuple, or None).
    """
    from .errors import get_recent_err_msg

    values, status = ((), ret) if not isinstance(ret, tuple) else (ret[:-1], ret[-1])
    if status != 0:
        raise AclnnError(status, get_recent_err_msg() or "")
    if not values:
        return None
    return values[0] if len(values) == 1 else values
