"""The CUDA backend: CuPy memory, streams, events and NVRTC RawModules (imported lazily)."""
from __future__ import annotations

from typing import Any, Sequence

from ..errors import DeviceError


class CudaBackend:
    name = "cuda"

    def __init__(self):
        import cupy
        self._cp = cupy
        self._rt = cupy.cuda.runtime
        self._modules: dict = {}

    def _wrap(self, fn, *a):
        try:
            return fn(*a)
        except self._cp.cuda.runtime.CUDARuntimeError as e:
            raise DeviceError(str(e)) from e

    def device_count(self) -> int:
        return self._rt.getDeviceCount()

    def activate(self, device: int) -> None:
        self._rt.setDevice(device)

    def malloc(self, nbytes: int) -> int:
        try:
            return self._rt.malloc(nbytes)
        except self._cp.cuda.runtime.CUDARuntimeError as e:
            raise MemoryError(str(e)) from e

    def free(self, ptr: int) -> None:
        self._rt.free(ptr)

    def malloc_host(self, nbytes: int) -> int:
        return self._rt.hostAlloc(nbytes, 0)

    def free_host(self, ptr: int) -> None:
        self._rt.freeHost(ptr)

    def memcpy(self, dst: int, src: int, nbytes: int, kind: int, stream) -> None:
        # cudaMemcpyDefault (4): unified addressing tells the direction
        if stream is None:
            self._wrap(self._rt.memcpy, dst, src, nbytes, 4)
        else:
            self._wrap(self._rt.memcpyAsync, dst, src, nbytes, 4, stream.ptr)

    def memset(self, ptr: int, value: int, nbytes: int, stream) -> None:
        if stream is None:
            self._wrap(self._rt.memset, ptr, value, nbytes)
        else:
            self._wrap(self._rt.memsetAsync, ptr, value, nbytes, stream.ptr)

    def create_stream(self):
        return self._cp.cuda.Stream(non_blocking=False)

    def default_stream(self):
        return self._cp.cuda.Stream.null

    def destroy_stream(self, stream) -> None:
        self._wrap(stream.synchronize)

    def synchronize(self, stream) -> None:
        self._wrap(stream.synchronize)

    def synchronize_all(self) -> None:
        self._wrap(self._rt.deviceSynchronize)

    def create_event(self):
        return self._cp.cuda.Event()

    def record_event(self, event, stream) -> None:
        event.record(stream)

    def stream_wait_event(self, stream, event) -> None:
        stream.wait_event(event)

    def synchronize_event(self, event) -> None:
        self._wrap(event.synchronize)

    def query_event(self, event) -> bool:
        return bool(event.done)

    def elapsed_ms(self, start, end) -> float:
        return float(self._cp.cuda.get_elapsed_time(start, end))

    def load_module(self, code: str, options: Sequence[str], name_expressions):
        key = (code, tuple(options), tuple(name_expressions or ()), self._rt.getDevice())
        mod = self._modules.get(key)
        if mod is None:
            mod = self._cp.RawModule(code=code, options=tuple(options),
                                     name_expressions=list(name_expressions) if name_expressions else None)
            self._modules[key] = mod
        return mod

    def get_function(self, module, name: str):
        return module.get_function(name)

    def freeze_args(self, kernel, args: Sequence[Any]) -> tuple:
        return tuple(args)   # CuPy marshals at launch

    def launch_planned(self, kernel, grid, block, args: tuple, slot_addrs, workspace, shared_mem, stream) -> None:
        from ..launch import Slot, Ws
        resolved = tuple((slot_addrs[a.index] + a.byte_offset) if type(a) is Slot else
                         (workspace + a.byte_offset) if type(a) is Ws else a for a in args)
        kernel(grid, block, resolved, shared_mem=shared_mem, stream=stream)

    def launch(self, kernel, grid, block, args: Sequence[Any], shared_mem: int, stream) -> None:
        kernel(tuple(grid), tuple(block), tuple(args), shared_mem=shared_mem, stream=stream)

    def info(self) -> dict:
        cp = self._cp
        dev = self._rt.getDeviceProperties(self._rt.getDevice())
        name = dev["name"].decode() if isinstance(dev["name"], bytes) else dev["name"]
        return {"backend": "cuda (CuPy)", "cupy": cp.__version__, "cuda runtime": self._rt.runtimeGetVersion(),
                "cuda driver": self._rt.driverGetVersion(), "gpu": name}
