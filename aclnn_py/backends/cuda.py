"""The CUDA backend: CuPy memory, streams, events and NVRTC RawModules (imported lazily).

Note [CUDA errors become statuses]
    Every call into CuPy goes through ``_call``: a ``CUDARuntimeError`` / ``CUDADriverError`` becomes a
    :class:`DeviceError` carrying the CUDA error number and the ``AclError`` the runtime returns for it
    (``_status_for``). The runtime (``acl.rt``) and phase 2 catch ``DeviceError`` only, so nothing CuPy
    raises reaches a caller of the ACL-style API as an exception.

    A *sticky* error (an illegal address, a trap, a misaligned access, a launch failure: the CUDA
    context is corrupt) is remembered: every later call fails at once with
    ACL_ERROR_RT_AICORE_EXCEPTION naming the first fault, as CUDA's own calls would, and
    ``acl.rt.reset_device`` / ``acl.finalize`` still succeed (they ignore device errors). The device
    stays unusable for the rest of the process, as in CUDA (a ``cudaDeviceReset`` would leave CuPy's
    memory pool and module caches dangling): start a new process.

Note [Streams]
    ``stream=None`` in a CuPy-style launch (``aclnn_py.RawKernel``) is CuPy's *current* stream
    (``cupy.cuda.get_current_stream()``, e.g. inside ``with cupy.cuda.Stream():``), as CuPy does; the
    ACL APIs' null stream is the legacy default stream. Streams we create are blocking streams
    (they order with the legacy default stream). Synchronous ``memcpy`` / ``memset`` (``stream=None``)
    are done when they return: the copy is queued on the legacy default stream and that stream is
    synchronised (a device-to-device ``cudaMemcpy`` and every ``cudaMemset`` may return early).
"""
from __future__ import annotations

import threading
from typing import Any, Sequence

from ..errors import DeviceError
from ..kernel_args import check_args
from ..status import AclError

# CUDA errors after which the context is unusable (cudaError_t == CUresult for these values)
STICKY_CODES = frozenset({
    214,   # cudaErrorECCUncorrectable
    700,   # cudaErrorIllegalAddress
    702,   # cudaErrorLaunchTimeout
    710,   # cudaErrorAssert
    714,   # cudaErrorHardwareStackError
    715,   # cudaErrorIllegalInstruction
    716,   # cudaErrorMisalignedAddress
    717,   # cudaErrorInvalidAddressSpace
    718,   # cudaErrorInvalidPc
    719,   # cudaErrorLaunchFailure
})
OUT_OF_MEMORY = 2              # cudaErrorMemoryAllocation == CUDA_ERROR_OUT_OF_MEMORY
NOT_READY = 600                # cudaErrorNotReady == CUDA_ERROR_NOT_READY
_PARAM_CODES = frozenset({1, 9, 11, 17, 21, 101, 400})   # invalid value/config/pitch/pointer/direction/device/handle


def _status_for(code: int | None):
    if code in STICKY_CODES:
        return AclError.ACL_ERROR_RT_AICORE_EXCEPTION
    if code == OUT_OF_MEMORY:
        return AclError.ACL_ERROR_RT_MEMORY_ALLOCATION
    if code == NOT_READY:
        return AclError.ACL_ERROR_RT_EVENT_NOT_COMPLETE
    if code in _PARAM_CODES:
        return AclError.ACL_ERROR_RT_PARAM_INVALID
    return AclError.ACL_ERROR_RT_AICORE_EXCEPTION


class CudaBackend:
    name = "cuda"

    def __init__(self, cupy_module=None):
        if cupy_module is None:
            import cupy as cupy_module
        cp = cupy_module
        self._cp = cp
        self._rt = cp.cuda.runtime
        errs = [getattr(getattr(cp.cuda, m, None), n, None)
                for m, n in (("runtime", "CUDARuntimeError"), ("driver", "CUDADriverError"))]
        self._errors = tuple(e for e in errs if isinstance(e, type) and issubclass(e, BaseException))
        self._modules: dict = {}
        self._sticky: DeviceError | None = None
        self._lock = threading.Lock()

    # errors --------------------------------------------------------------------------------
    def _device_error(self, what: str, e: BaseException) -> DeviceError:
        code = getattr(e, "status", None)
        code = code if isinstance(code, int) else None
        sticky = code in STICKY_CODES
        err = DeviceError(f"{what}: {type(e).__name__}: {e}", status=_status_for(code), code=code, sticky=sticky)
        if sticky:
            with self._lock:
                if self._sticky is None:
                    self._sticky = err
        return err

    def _check_sticky(self, what: str) -> None:
        s = self._sticky
        if s is not None:
            raise DeviceError(f"{what}: the device had an unrecoverable fault earlier ({s}); every call fails "
                              f"until the process ends (acl.finalize still succeeds)",
                              status=AclError.ACL_ERROR_RT_AICORE_EXCEPTION, code=s.code, sticky=True)

    def _call(self, what: str, fn, *a, **k):
        self._check_sticky(what)
        try:
            return fn(*a, **k)
        except self._errors as e:
            raise self._device_error(what, e) from e

    @property
    def sticky_error(self) -> DeviceError | None:
        """The first unrecoverable fault of this process, or None."""
        return self._sticky

    # devices -------------------------------------------------------------------------------
    def device_count(self) -> int:
        return self._call("cudaGetDeviceCount", self._rt.getDeviceCount)

    def activate(self, device: int) -> None:
        self._call("cudaSetDevice", self._rt.setDevice, device)

    def current_device(self) -> int:
        return self._call("cudaGetDevice", self._rt.getDevice)

    def pointer_device(self, ptr: int) -> int | None:
        """The device that owns device pointer ``ptr`` (None: not device memory CUDA knows)."""
        try:
            attrs = self._call("cudaPointerGetAttributes", self._rt.pointerGetAttributes, ptr)
        except DeviceError:
            if self._sticky is not None:
                raise
            return None
        mtype = getattr(attrs, "type", 2)
        if mtype not in (2, 3):              # cudaMemoryTypeDevice / Managed
            return None
        return int(attrs.device)

    # memory --------------------------------------------------------------------------------
    def _release_pools(self) -> None:
        """Give CuPy's cached blocks back to the driver (its memory pools keep freed arrays' memory)."""
        for getter in ("get_default_memory_pool", "get_default_pinned_memory_pool"):
            pool = getattr(self._cp, getter, None)
            if pool is not None:
                try:
                    pool().free_all_blocks()
                except Exception:    # a pool that cannot release now: the retry reports the real error
                    pass

    def malloc(self, nbytes: int) -> int:
        """cudaMalloc; on out-of-memory, free CuPy's pool caches and try once more (MemoryError if it
        still fails; any other CUDA error is a DeviceError)."""
        for attempt in (0, 1):
            try:
                return self._call("cudaMalloc", self._rt.malloc, nbytes)
            except DeviceError as e:
                if e.code != OUT_OF_MEMORY:
                    raise
                if attempt:
                    raise MemoryError(str(e)) from e
            self._release_pools()
        raise AssertionError("unreachable")

    def free(self, ptr: int) -> None:
        self._call("cudaFree", self._rt.free, ptr)

    def malloc_host(self, nbytes: int) -> int:
        for attempt in (0, 1):
            try:
                return self._call("cudaHostAlloc", self._rt.hostAlloc, nbytes, 0)
            except DeviceError as e:
                if e.code != OUT_OF_MEMORY:
                    raise
                if attempt:
                    raise MemoryError(str(e)) from e
            self._release_pools()
        raise AssertionError("unreachable")

    def free_host(self, ptr: int) -> None:
        self._call("cudaFreeHost", self._rt.freeHost, ptr)

    def memcpy(self, dst: int, src: int, nbytes: int, kind: int, stream) -> None:
        # cudaMemcpyDefault (4): unified addressing tells the direction
        if stream is None:          # synchronous: done when this returns (Note [Streams])
            self._call("cudaMemcpyAsync", self._rt.memcpyAsync, dst, src, nbytes, 4, 0)
            self._call("cudaStreamSynchronize", self._rt.streamSynchronize, 0)
        else:
            self._call("cudaMemcpyAsync", self._rt.memcpyAsync, dst, src, nbytes, 4, stream.ptr)

    def memset(self, ptr: int, value: int, nbytes: int, stream) -> None:
        if stream is None:
            self._call("cudaMemsetAsync", self._rt.memsetAsync, ptr, value, nbytes, 0)
            self._call("cudaStreamSynchronize", self._rt.streamSynchronize, 0)
        else:
            self._call("cudaMemsetAsync", self._rt.memsetAsync, ptr, value, nbytes, stream.ptr)

    # streams and events --------------------------------------------------------------------
    def create_stream(self):
        return self._call("cudaStreamCreate", self._cp.cuda.Stream, non_blocking=False)

    def default_stream(self):
        return self._cp.cuda.Stream.null

    def current_stream(self):
        """CuPy's current stream: where a CuPy-style launch with ``stream=None`` goes."""
        get = getattr(self._cp.cuda, "get_current_stream", None)
        return self._call("cupy.cuda.get_current_stream", get) if get is not None else self.default_stream()

    def destroy_stream(self, stream) -> None:
        self._call("cudaStreamSynchronize", stream.synchronize)

    def synchronize(self, stream) -> None:
        self._call("cudaStreamSynchronize", stream.synchronize)

    def synchronize_all(self) -> None:
        self._call("cudaDeviceSynchronize", self._rt.deviceSynchronize)

    def synchronize_external_stream(self, handle: int) -> None:
        """Wait for a producer's stream (``__cuda_array_interface__`` v3 ``stream``: 1 legacy default,
        2 per-thread default, else a ``cudaStream_t``)."""
        self._call("cudaStreamSynchronize", self._rt.streamSynchronize, handle)

    def create_event(self):
        return self._call("cudaEventCreate", self._cp.cuda.Event)

    def record_event(self, event, stream) -> None:
        self._call("cudaEventRecord", event.record, stream)

    def stream_wait_event(self, stream, event) -> None:
        self._call("cudaStreamWaitEvent", stream.wait_event, event)

    def synchronize_event(self, event) -> None:
        self._call("cudaEventSynchronize", event.synchronize)

    def query_event(self, event) -> bool:
        return bool(self._call("cudaEventQuery", lambda: event.done))

    def elapsed_ms(self, start, end) -> float:
        return float(self._call("cudaEventElapsedTime", self._cp.cuda.get_elapsed_time, start, end))

    # kernels -------------------------------------------------------------------------------
    def _compile(self, mod, code, options):
        """Build ``mod`` now (CuPy compiles lazily): a compiler error is an aclnn_py CompileException
        carrying NVRTC's log, a driver error (no binary for this GPU, ...) a DeviceError."""
        from ..emulator import CompileException
        compile_exc = getattr(getattr(self._cp.cuda, "compiler", None), "CompileException", None)
        try:
            self._call("nvrtc/cuModuleLoad", mod.compile)
        except Exception as e:
            if compile_exc is not None and isinstance(e, compile_exc):
                log = e.get_message() if hasattr(e, "get_message") else str(e)
                raise CompileException(log, code or "", getattr(e, "name", ""), tuple(options), "nvrtc") from e
            raise

    def load_module(self, code: str, options: Sequence[str], name_expressions, filename: str | None = None):
        key = (code, tuple(options), tuple(name_expressions or ()), self.current_device())
        mod = self._modules.get(key)
        if mod is None:
            self._check_sticky("RawModule")
            mod = self._cp.RawModule(code=code, options=tuple(options),
                                     name_expressions=list(name_expressions) if name_expressions else None)
            self._compile(mod, code, options)     # errors now, not at the first get_function / launch
            self._modules[key] = mod
        return mod

    def load_module_cooperative(self, code: str, options: Sequence[str], name_expressions):
        self._check_sticky("RawModule")
        mod = self._cp.RawModule(code=code, options=tuple(options), enable_cooperative_groups=True,
                                 name_expressions=list(name_expressions) if name_expressions else None)
        self._compile(mod, code, options)
        return mod

    def load_binary(self, path: str):
        """A cubin / ptx / fatbin file: ``cupy.RawModule(path=...)``, loaded now."""
        self._check_sticky("RawModule")
        mod = self._cp.RawModule(path=str(path))
        self._compile(mod, None, ())
        return mod

    def get_function(self, module, name: str):
        return self._call(f"cuModuleGetFunction({name})", module.get_function, name)

    def freeze_args(self, kernel, args: Sequence[Any]) -> tuple:
        """Phase 1: the constant arguments must be ones CuPy accepts (checked now, on both backends);
        CuPy marshals them at launch."""
        from ..launch import Slot, Ws
        check_args([a for a in args if type(a) not in (Slot, Ws)], getattr(kernel, "name", ""))
        return tuple(args)

    def _launch(self, kernel, grid, block, args, shared_mem, stream) -> None:
        self._check_sticky("cuLaunchKernel")
        try:
            kernel(grid, block, args, shared_mem=shared_mem, stream=stream)
        except self._errors as e:
            raise self._device_error("cuLaunchKernel", e) from e

    def launch_planned(self, kernel, grid, block, args: tuple, slot_addrs, workspace, shared_mem, stream) -> None:
        """Phase 2's launch. Anything the launch raises — a CUDA driver error, or a TypeError /
        ValueError / OverflowError from CuPy's argument marshalling — is a DeviceError here, which phase 2
        returns as ACLNN_ERR_RUNTIME_ERROR."""
        from ..launch import Slot, Ws
        resolved = tuple((slot_addrs[a.index] + a.byte_offset) if type(a) is Slot else
                         (workspace + a.byte_offset) if type(a) is Ws else a for a in args)
        try:
            self._launch(kernel, tuple(grid), tuple(block), resolved, shared_mem, stream)
        except (TypeError, ValueError, OverflowError) as e:
            raise DeviceError(f"cuLaunchKernel: {type(e).__name__}: {e}",
                              status=AclError.ACL_ERROR_RT_PARAM_INVALID) from e

    def launch(self, kernel, grid, block, args: Sequence[Any], shared_mem: int, stream) -> None:
        """A CuPy-style launch (``aclnn_py.RawKernel``): argument types CuPy refuses raise TypeError here
        as in CuPy (identical rules on the emulator); CUDA errors are DeviceErrors."""
        args = tuple(args)
        check_args(args, getattr(kernel, "name", ""))
        self._launch(kernel, tuple(grid), tuple(block), args, shared_mem, stream)

    def info(self) -> dict:
        from ..toolkit import cuda_report
        out = {"backend": "cuda (CuPy)"}
        try:
            dev = self._call("cudaGetDeviceProperties", self._rt.getDeviceProperties, self.current_device())
            name = dev["name"].decode() if isinstance(dev["name"], bytes) else dev["name"]
            out["gpu"] = f"{name} (sm_{dev['major']}{dev['minor']})"
        except (DeviceError, KeyError, TypeError) as e:
            out["gpu"] = f"unknown ({e})"
        out.update(cuda_report(self._cp).as_info())
        return out
