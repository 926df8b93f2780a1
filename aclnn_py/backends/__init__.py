"""The two backends behind one small protocol.

A backend owns memory, streams, events and kernel modules of one kind of device:

=====================  ==========================================================
``cuda`` (cuda.py)     CuPy: device memory, CUDA streams/events, NVRTC RawModules
``host`` (host.py)     the emulator: host memory, FIFO streams served by worker
                       threads, the same ``.cu`` sources compiled by g++
=====================  ==========================================================

Device ids count CUDA GPUs when CuPy sees one, else device 0 is the host emulator;
``ACLNN_PY_DEVICE=host|cuda`` forces one. CuPy is imported lazily.
"""
from __future__ import annotations

import os
import threading
from typing import Any, Protocol, Sequence

from ..errors import DeviceError  # noqa: F401  (re-exported: the backends raise it)


class Backend(Protocol):
    name: str

    def device_count(self) -> int: ...
    def activate(self, device: int) -> None: ...
    def malloc(self, nbytes: int) -> int: ...
    def free(self, ptr: int) -> None: ...
    def malloc_host(self, nbytes: int) -> int: ...
    def free_host(self, ptr: int) -> None: ...
    def memcpy(self, dst: int, src: int, nbytes: int, kind: int, stream: Any | None) -> None: ...
    def memset(self, ptr: int, value: int, nbytes: int, stream: Any | None) -> None: ...
    def create_stream(self) -> Any: ...
    def default_stream(self) -> Any: ...
    def destroy_stream(self, stream: Any) -> None: ...
    def synchronize(self, stream: Any) -> None: ...            # raises DeviceError
    def create_event(self) -> Any: ...
    def record_event(self, event: Any, stream: Any) -> None: ...
    def stream_wait_event(self, stream: Any, event: Any) -> None: ...
    def synchronize_event(self, event: Any) -> None: ...
    def query_event(self, event: Any) -> bool: ...
    def elapsed_ms(self, start: Any, end: Any) -> float: ...
    def load_module(self, code: str, options: Sequence[str], name_expressions: Sequence[str] | None,
                    filename: str | None = None) -> Any: ...   # filename: only names the source in messages
    def get_function(self, module: Any, name: str) -> Any: ...
    def freeze_args(self, kernel: Any, args: Sequence[Any]) -> tuple: ...   # phase 1: marshal constants once
    def launch(self, kernel: Any, grid, block, args: Sequence[Any], shared_mem: int, stream: Any) -> None: ...
    def launch_planned(self, kernel: Any, grid, block, args: tuple, slot_addrs, workspace, shared_mem: int,
                       stream: Any) -> None: ...   # phase 2: resolves Slot/Ws references, then launches
    def info(self) -> dict: ...


_backend: Backend | None = None
_lock = threading.Lock()


def _cuda_available() -> bool:
    try:
        import cupy  # noqa: F401
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def get_backend() -> Backend:
    """The process's backend, chosen once: ``ACLNN_PY_DEVICE`` if set, else CUDA when a GPU is visible."""
    global _backend
    if _backend is not None:
        return _backend
    with _lock:                # two threads' first calls must not build two backends
        if _backend is not None:
            return _backend
        choice = os.environ.get("ACLNN_PY_DEVICE", "").strip().lower()
        if choice not in ("", "host", "cuda"):
            raise ValueError(f"ACLNN_PY_DEVICE must be 'host' or 'cuda', got {choice!r}")
        if choice == "cuda" or (choice == "" and _cuda_available()):
            from .cuda import CudaBackend
            _backend = CudaBackend()
        else:
            from .host import HostBackend
            _backend = HostBackend()
    return _backend
