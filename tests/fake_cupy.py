"""A small recording stand-in for CuPy 14, so the CUDA backend's error mapping and stream rules run on a
machine with no GPU.

It models what the backend relies on, with CUDA's semantics where they matter:

* memory is host memory (so copies can be checked byte for byte); ``runtime.malloc`` fails with
  cudaErrorMemoryAllocation (2) beyond ``gpu.capacity`` bytes, counting CuPy's pool cache
  (``gpu.pool_cached``) until ``get_default_memory_pool().free_all_blocks()`` gives it back;
* work is asynchronous: ``memcpyAsync`` / ``memsetAsync`` / a device-to-device ``memcpy`` / every
  ``memset`` / kernel launches are queued and only happen when a synchronise runs them (a real
  ``cudaMemcpy`` D2D and ``cudaMemset`` may return before they are done);
* a sticky fault: ``gpu.fault_next_sync(700)`` makes the next synchronise raise cudaErrorIllegalAddress,
  and from then on every runtime / driver call raises it, as a corrupt CUDA context does;
* ``gpu.fail[name] = exception``: the named call raises once (``"launch"``, ``"compile"``,
  ``"get_function"``, ``"streamCreate"``, ...);
* launches follow CuPy 14's argument rules (cupy/cuda/function.pyx ``_pointer``), and ``stream=None``
  launches on the *current* stream;
* every call is appended to ``gpu.log`` as ``(name, args)``.

``install(monkeypatch)`` puts it in ``sys.modules`` as ``cupy`` and returns the controller ``gpu``.
"""
from __future__ import annotations

import ctypes
import itertools
import sys
import types

import numpy as np

ILLEGAL_ADDRESS, OUT_OF_MEMORY, INVALID_VALUE, NOT_READY, INVALID_HANDLE = 700, 2, 1, 600, 400
_NAMES = {700: "cudaErrorIllegalAddress", 2: "cudaErrorMemoryAllocation", 1: "cudaErrorInvalidValue",
          600: "cudaErrorNotReady", 400: "cudaErrorInvalidResourceHandle", 719: "cudaErrorLaunchFailure",
          701: "cudaErrorLaunchOutOfResources"}


class CUDARuntimeError(RuntimeError):
    def __init__(self, status):
        self.status = status
        super().__init__(f"{_NAMES.get(status, 'cudaError')}: error {status}")


class CUDADriverError(RuntimeError):
    def __init__(self, status):
        self.status = status
        super().__init__(f"CUDA_ERROR {status}")


class CompileException(Exception):
    """cupy.cuda.compiler.CompileException (its str is the NVRTC log)."""

    def __init__(self, msg, source, name, options, backend="nvrtc"):
        self._msg, self.source, self.name, self.options, self.backend = msg, source, name, options, backend
        super().__init__()

    def __str__(self):
        return self._msg

    def get_message(self):
        return self._msg


class FakeGPU:
    def __init__(self):
        self.log: list[tuple[str, tuple]] = []
        self.fail: dict[str, BaseException] = {}
        self.sticky: int | None = None
        self._fault_on_sync: int | None = None
        self.buffers: dict[int, ctypes.Array] = {}
        self.pending: list = []               # (stream ptr, description, callable) in issue order
        self.capacity = 1 << 30
        self.pool_cached = 0
        self.device = 0
        self.devices = 1
        self.current_stream_ptr = 0
        self.launches: list[dict] = []
        self.nvrtc_version = (12, 9)
        self.runtime_version = 12090
        self.driver_version = 12040
        self.pointer_devices: dict[int, int] = {}   # ptr -> device, for pointerGetAttributes

    # fault injection --------------------------------------------------------------------------
    def fault_next_sync(self, code: int = ILLEGAL_ADDRESS) -> None:
        self._fault_on_sync = code

    def _enter(self, name: str, *args, driver: bool = False):
        self.log.append((name, args))
        if self.sticky is not None:
            raise (CUDADriverError if driver else CUDARuntimeError)(self.sticky)
        exc = self.fail.pop(name, None)
        if exc is not None:
            if getattr(exc, "status", None) in (700, 719):
                self.sticky = exc.status
            raise exc

    def run_pending(self, upto=None) -> None:
        if self._fault_on_sync is not None and self.pending:
            code, self._fault_on_sync = self._fault_on_sync, None
            self.pending.clear()
            self.sticky = code
            raise CUDARuntimeError(code)
        while self.pending:
            _, _, fn = self.pending.pop(0)
            fn()

    def used(self) -> int:
        return sum(len(b) for b in self.buffers.values()) + self.pool_cached

    def names(self) -> list[str]:
        return [n for n, _ in self.log]


def _build(gpu: FakeGPU):
    cupy = types.ModuleType("cupy")
    cupy.__version__ = "14.2.0"
    cuda = types.ModuleType("cupy.cuda")
    runtime = types.ModuleType("cupy.cuda.runtime")
    driver = types.ModuleType("cupy.cuda.driver")
    compiler = types.ModuleType("cupy.cuda.compiler")
    nvrtc = types.ModuleType("cupy.cuda.nvrtc")
    cupy.cuda, cuda.runtime, cuda.driver, cuda.compiler, cuda.nvrtc = cuda, runtime, driver, compiler, nvrtc
    runtime.CUDARuntimeError, driver.CUDADriverError, compiler.CompileException = (CUDARuntimeError, CUDADriverError,
                                                                                  CompileException)
    runtime.streamLegacy, runtime.streamPerThread = 1, 2
    nvrtc.getVersion = lambda: gpu.nvrtc_version

    # runtime -----------------------------------------------------------------------------------
    def rt(name):
        def deco(fn):
            def call(*a, **k):
                gpu._enter(name, *a)
                return fn(*a, **k)
            call.__name__ = name
            setattr(runtime, name, call)
            return call
        return deco

    @rt("getDeviceCount")
    def _(): return gpu.devices

    @rt("setDevice")
    def _(d): gpu.device = d

    @rt("getDevice")
    def _(): return gpu.device

    @rt("runtimeGetVersion")
    def _(): return gpu.runtime_version

    @rt("driverGetVersion")
    def _(): return gpu.driver_version

    @rt("getDeviceProperties")
    def _(d): return {"name": b"Fake H100", "major": 9, "minor": 0, "memoryClockRate": 2_619_000,
                      "memoryBusWidth": 5120}

    @rt("malloc")
    def _(n):
        if gpu.used() + n > gpu.capacity:
            raise CUDARuntimeError(OUT_OF_MEMORY)
        buf = (ctypes.c_char * max(n, 1))()
        p = ctypes.addressof(buf)
        gpu.buffers[p] = buf
        gpu.pointer_devices[p] = gpu.device
        return p

    @rt("free")
    def _(p):
        gpu.buffers.pop(p)

    @rt("hostAlloc")
    def _(n, flags):
        buf = (ctypes.c_char * max(n, 1))()
        p = ctypes.addressof(buf)
        gpu.buffers[p] = buf
        return p

    @rt("freeHost")
    def _(p):
        gpu.buffers.pop(p)

    def on_device(p):
        return any(b <= p < b + len(buf) for b, buf in gpu.buffers.items())

    @rt("memcpy")
    def _(dst, src, n, kind):
        if on_device(dst) and on_device(src):           # D2D: may return before it is done
            gpu.pending.append((0, "memcpy D2D", lambda: ctypes.memmove(dst, src, n)))
        else:
            gpu.run_pending()
            ctypes.memmove(dst, src, n)

    @rt("memcpyAsync")
    def _(dst, src, n, kind, stream):
        gpu.pending.append((stream, "memcpyAsync", lambda: ctypes.memmove(dst, src, n)))

    @rt("memset")
    def _(p, v, n):
        gpu.pending.append((0, "memset", lambda: ctypes.memset(p, v, n)))

    @rt("memsetAsync")
    def _(p, v, n, stream):
        gpu.pending.append((stream, "memsetAsync", lambda: ctypes.memset(p, v, n)))

    @rt("deviceSynchronize")
    def _(): gpu.run_pending()

    @rt("streamSynchronize")
    def _(s): gpu.run_pending()

    @rt("deviceReset")
    def _(): pass

    class PointerAttributes:
        def __init__(self, device, ptr):
            self.device, self.devicePointer, self.hostPointer, self.type = device, ptr, 0, 2

    @rt("pointerGetAttributes")
    def _(p):
        # CUDA >= 11: any address inside a device allocation is device memory; any other address is
        # cudaMemoryTypeUnregistered (0), not an error
        for base, dev in gpu.pointer_devices.items():
            if base in gpu.buffers and base <= p < base + len(gpu.buffers[base]):
                return PointerAttributes(dev, p)
        attrs = PointerAttributes(-2, p)
        attrs.type = 0
        return attrs

    # streams and events ------------------------------------------------------------------------
    ptrs = itertools.count(0x7000)

    class Stream:
        null = None

        def __init__(self, null=False, non_blocking=False, ptds=False):
            if not null:
                gpu._enter("streamCreate", non_blocking)
            self.ptr = 0 if null else next(ptrs)
            self.non_blocking = non_blocking

        def synchronize(self):
            gpu._enter("streamSynchronize", self.ptr)
            gpu.run_pending()

        def wait_event(self, event):
            gpu._enter("streamWaitEvent", self.ptr, event)

        def record(self, event=None):
            event = event or Event()
            event.record(self)
            return event

        def use(self):
            gpu.current_stream_ptr = self.ptr
            _current[0] = self
            return self

        def __enter__(self):
            self._prev = _current[0]
            return self.use()

        def __exit__(self, *exc):
            self._prev.use()

        @property
        def done(self):
            gpu._enter("streamQuery", self.ptr)
            return not gpu.pending

    Stream.null = Stream(null=True)
    _current = [Stream.null]

    class Event:
        def __init__(self, block=False, disable_timing=False, interprocess=False):
            gpu._enter("eventCreate")
            self.recorded = False
            self.time = None
            self.ptr = next(ptrs)

        def record(self, stream=None):
            gpu._enter("eventRecord", self.ptr, getattr(stream, "ptr", None))
            self.recorded = True
            self.pending = True

            def fire():
                self.pending = False
                self.time = len(gpu.log)
            gpu.pending.append((getattr(stream, "ptr", 0), "event", fire))

        def synchronize(self):
            gpu._enter("eventSynchronize", self.ptr)
            gpu.run_pending()

        @property
        def done(self):
            gpu._enter("eventQuery", self.ptr)
            return not getattr(self, "pending", False)

    def get_elapsed_time(a, b):
        gpu._enter("eventElapsedTime", a.ptr, b.ptr)
        if not (a.recorded and b.recorded):
            raise CUDARuntimeError(INVALID_HANDLE)
        if getattr(a, "pending", False) or getattr(b, "pending", False):
            raise CUDARuntimeError(NOT_READY)
        return float(b.time - a.time)

    cuda.Stream, cuda.Event, cuda.get_elapsed_time = Stream, Event, get_elapsed_time
    cuda.get_current_stream = lambda: _current[0]

    # pools ---------------------------------------------------------------------------------------
    class Pool:
        def free_all_blocks(self):
            gpu.log.append(("free_all_blocks", ()))
            gpu.pool_cached = 0

    _pool = Pool()
    cupy.get_default_memory_pool = lambda: _pool
    cupy.get_default_pinned_memory_pool = lambda: Pool()

    # modules and launches --------------------------------------------------------------------------
    _pointer_numpy_ok = (np.generic,)

    def cupy_pointer(x):
        """cupy/cuda/function.pyx _pointer + _scalar.CScalar of CuPy 14."""
        if x is None:
            return
        if isinstance(x, np.ndarray):
            if x.size == 1:
                return
            raise TypeError(f"You are trying to pass a numpy.ndarray of shape {x.shape} as a kernel parameter.")
        t = type(x)
        if t in (bool, float, complex):
            return
        if t is int:
            if not -(1 << 63) <= x < (1 << 64):
                raise OverflowError("Python int too large to convert to C long")
            return
        if isinstance(x, _pointer_numpy_ok):
            return
        raise TypeError(f"Unsupported type {t}")

    class Function:
        def __init__(self, module, name):
            self.module, self.name = module, name

        def __call__(self, grid, block, args, shared_mem=0, stream=None, enable_cooperative_groups=False):
            if not isinstance(grid, tuple) or not isinstance(block, tuple):
                raise TypeError("grid and block must be tuples")
            for a in args:
                cupy_pointer(a)
            gpu._enter("launch", self.name, driver=True)
            sptr = _current[0].ptr if stream is None else stream.ptr
            rec = {"name": self.name, "grid": grid, "block": block, "args": tuple(args), "shared_mem": shared_mem,
                   "stream": sptr}
            gpu.launches.append(rec)
            gpu.pending.append((sptr, f"kernel {self.name}", lambda: None))

    class RawModule:
        def __init__(self, *, code=None, path=None, options=(), backend="nvrtc", translate_cucomplex=False,
                     enable_cooperative_groups=False, name_expressions=None, jitify=None):
            if (code is None) == (path is None):
                raise TypeError("Exactly one of `code` and `path` keyword arguments must be given.")
            if not isinstance(options, tuple):
                raise TypeError("options must be a tuple")
            self.code, self.path, self.options = code, path, options
            self.name_expressions = tuple(name_expressions) if name_expressions else None
            self.enable_cooperative_groups = enable_cooperative_groups
            self._compiled = False
            gpu.log.append(("RawModule", (code, path, options)))

        def compile(self, log_stream=None):
            if self._compiled:
                return
            gpu._enter("compile", self.path, driver=True)
            if self.code is not None and "#error" in self.code:
                line = self.code[:self.code.index("#error")].count("\n") + 1
                raise CompileException(f"kernel.cu({line}): error: #error directive", self.code, "kernel.cu",
                                       self.options)
            self._compiled = True

        def get_function(self, name):
            self.compile()
            gpu._enter("get_function", name, driver=True)
            if self.name_expressions is not None and name not in self.name_expressions:
                raise CUDADriverError(500)          # CUDA_ERROR_NOT_FOUND
            return Function(self, name)

        def get_global(self, name):
            raise NotImplementedError

    cupy.RawModule = RawModule
    cupy.cuda.Function = Function
    return cupy


def install(monkeypatch) -> tuple[FakeGPU, types.ModuleType]:
    """Put a fresh fake CuPy in ``sys.modules`` (restored by ``monkeypatch``); returns (gpu, cupy)."""
    gpu = FakeGPU()
    cupy = _build(gpu)
    for name, mod in (("cupy", cupy), ("cupy.cuda", cupy.cuda), ("cupy.cuda.runtime", cupy.cuda.runtime),
                      ("cupy.cuda.driver", cupy.cuda.driver), ("cupy.cuda.compiler", cupy.cuda.compiler),
                      ("cupy.cuda.nvrtc", cupy.cuda.nvrtc)):
        monkeypatch.setitem(sys.modules, name, mod)
    return gpu, cupy
