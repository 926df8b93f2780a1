"""Is a host address range real memory? The check behind memcpy's host sides (never a SIGSEGV).

A host pointer the runtime did not allocate or register (``acl.util.numpy_to_ptr``, ``bytes_to_ptr``)
can only be judged by the operating system. On Linux, ``process_vm_readv`` on our own process touches
one byte of every page of the range inside the kernel, which answers EFAULT instead of faulting:
read probes copy those bytes to a scratch buffer, write probes copy each byte onto itself (the value
is unchanged; the destination is about to be overwritten by the copy anyway). Where that syscall is
not allowed (seccomp), ``mincore`` (mapped?) and ``/proc/self/maps`` (permissions) answer instead.
Elsewhere than Linux only the plausibility bounds apply. A probe costs about 7 us per 1024 pages.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import errno
import mmap
import re
import sys

__all__ = ["MIN_ADDRESS", "MAX_USER_ADDRESS", "range_error"]

PAGE = mmap.PAGESIZE
MIN_ADDRESS = 1 << 16                      # below Linux's default vm.mmap_min_addr nothing is ever mapped
MAX_USER_ADDRESS = 1 << 57                 # above any user-space address (5-level paging included)
_CHUNK = 1 << 30                           # mincore checks at most this many bytes per call

_libc = None
if sys.platform.startswith("linux"):
    try:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        _libc.mincore.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)
        _libc.mincore.restype = ctypes.c_int
    except (OSError, AttributeError):   # pragma: no cover - exotic libc
        _libc = None

class _IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


_IOV_MAX = 1024
_vm_readv = None
if _libc is not None:
    try:
        _vm_readv = _libc.process_vm_readv
        _vm_readv.restype = ctypes.c_ssize_t
        _vm_readv.argtypes = (ctypes.c_int, ctypes.POINTER(_IoVec), ctypes.c_ulong, ctypes.POINTER(_IoVec),
                              ctypes.c_ulong, ctypes.c_ulong)
    except AttributeError:   # pragma: no cover - old libc
        _vm_readv = None


def _probe(ptr: int, nbytes: int, write: bool) -> bool | None:
    """True/False: every page of the range is readable (writable); None: the probe is unavailable."""
    import os

    import numpy as np
    pid = os.getpid()
    first, last = ptr & ~(PAGE - 1), (ptr + nbytes - 1) & ~(PAGE - 1)
    scratch = ctypes.create_string_buffer(_IOV_MAX)
    scratch_iov = _IoVec(ctypes.addressof(scratch), 0)
    iov = np.empty((_IOV_MAX, 2), np.uint64)
    iov[:, 1] = 1
    iov_p = ctypes.cast(iov.ctypes.data, ctypes.POINTER(_IoVec))
    page = first
    while page <= last:
        n = min(_IOV_MAX, (last - page) // PAGE + 1)
        iov[:n, 0] = np.arange(page, page + n * PAGE, PAGE, dtype=np.uint64)
        if page == first:
            iov[0, 0] = ptr
        scratch_iov.len = n
        local = iov_p if write else ctypes.pointer(scratch_iov)
        got = _vm_readv(pid, local, n if write else 1, iov_p, n, 0)
        if got != n:
            if got < 0 and ctypes.get_errno() in (errno.ENOSYS, errno.EPERM):
                return None
            return False
        page += n * PAGE
    return True


_MAPS_RE = re.compile(rb"^([0-9a-f]+)-([0-9a-f]+) (.)(.)", re.M)


def _all_mapped(ptr: int, nbytes: int) -> bool:
    start = ptr & ~(PAGE - 1)
    end = ptr + nbytes
    vec = ctypes.create_string_buffer(min(end - start, _CHUNK) // PAGE + 2)
    while start < end:
        n = min(end - start, _CHUNK)
        if _libc.mincore(start, n, vec) != 0:
            return ctypes.get_errno() not in (errno.ENOMEM, errno.EINVAL)   # EAGAIN etc.: do not refuse
        start += n
    return True


def _permitted(ptr: int, nbytes: int, write: bool) -> bool:
    """Every byte of the range lies in mappings that allow reading (and writing, if ``write``)."""
    try:
        with open("/proc/self/maps", "rb") as f:
            text = f.read()
    except OSError:   # pragma: no cover - no procfs: mincore's answer stands
        return True
    pos, end = ptr, ptr + nbytes
    for lo, hi, r, w in _MAPS_RE.findall(text):      # sorted by address
        lo, hi = int(lo, 16), int(hi, 16)
        if hi <= pos:
            continue
        if lo > pos or r != b"r" or (write and w != b"w"):
            return False
        pos = hi
        if pos >= end:
            return True
    return False


def range_error(ptr: int, nbytes: int, write: bool) -> str | None:
    """Why ``[ptr, ptr + nbytes)`` cannot be host memory this process may read (or write), or None."""
    if ptr < MIN_ADDRESS or ptr + nbytes > MAX_USER_ADDRESS:
        return f"[0x{ptr:x}, +{nbytes}) cannot be a valid host address range"
    if _libc is None or nbytes == 0:
        return None
    ok = _probe(ptr, nbytes, write) if _vm_readv is not None else None
    if ok is not None:
        return None if ok else (f"[0x{ptr:x}, +{nbytes}) is not {'writable' if write else 'readable'} "
                                f"memory of this process")
    if not _all_mapped(ptr, nbytes):
        return f"[0x{ptr:x}, +{nbytes}) is not mapped memory of this process"
    if not _permitted(ptr, nbytes, write):
        return f"[0x{ptr:x}, +{nbytes}) is not {'writable' if write else 'readable'} memory of this process"
    return None
