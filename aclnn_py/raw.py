"""CuPy-shaped kernel launching on the current device's backend: ``RawModule`` / ``RawKernel``.

A CuPy RawKernel ports unchanged and runs on a machine with no GPU::

    mod = aclnn_py.RawModule(code=src, options=("-std=c++17",), name_expressions=["scale<float>"])
    k = mod.get_function("scale<float>")
    k((blocks,), (256,), (x_ptr, y_ptr, np.float32(2.0), np.int32(n)))   # stream=None: default stream

Arguments follow CuPy 14's rules on both backends (``aclnn_py.kernel_args``: ints are int64, floats
float64, NumPy scalars and size-1 arrays by value; a type CuPy refuses raises TypeError at the call);
objects with ``__cuda_array_interface__`` are passed as their data pointer. ``stream=None`` launches on
CuPy's *current* stream (``cupy.cuda.get_current_stream()``), as CuPy does; on the emulator that is the
default stream, and such a launch has finished when the call returns. Launches are asynchronous on an
explicit stream (an acl stream handle). ``RawModule(path=...)`` loads a cubin/ptx/fatbin on a GPU
(a ``.cu`` path is read as source, on both backends). A fault
inside the kernel, or an argument whose size does not match its parameter, is reported by the next
``acl.rt.synchronize_stream`` / ``synchronize_device`` / ``memcpy`` as ACL_ERROR_RT_AICORE_EXCEPTION
with a message (``acl.get_recent_err_msg()``) naming the kernel and the block.
"""
from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Sequence

import numpy as np

from .backends import get_backend
from .kernel_args import is_cupy_pointer
from .kernel_cache import source_with_header_digest

_SOURCE_SUFFIXES = (".cu", ".cuh", ".c", ".cpp", ".cc", ".h", ".hpp", ".txt")

__all__ = ["RawModule", "RawKernel", "CompileException"]


def __getattr__(name):
    if name == "CompileException":  # the emulator's; CuPy raises cupy.cuda.compiler.CompileException
        from .emulator import CompileException
        return CompileException
    raise AttributeError(name)


def _dim3(v) -> tuple[int, int, int]:
    if type(v) is int:
        return (v, 1, 1)
    t = tuple(map(int, v))
    if not 1 <= len(t) <= 3:
        raise ValueError(f"grid/block must have 1 to 3 dimensions, got {v!r}")
    return t + (1,) * (3 - len(t))


def _stream(stream):
    """The backend stream for a launch: an acl stream handle, or None for CuPy's current stream."""
    if stream is None:
        return get_backend().current_stream()    # as CuPy: the current stream, not Stream.null
    from .acl._state import resolve_stream
    if type(stream).__module__.startswith("cupy") and hasattr(stream, "ptr"):
        return stream                            # a cupy.cuda.Stream, as CuPy accepts
    s, st = resolve_stream("RawKernel launch", stream)
    if st:
        from .errors import get_recent_err_msg
        raise ValueError(get_recent_err_msg())
    return s


_CUCOMPLEX_INCLUDE = re.compile(r"^\s*#\s*include\s*<\s*cuComplex\.h\s*>.*$", re.M)


def _translate_cucomplex(code: str) -> str:
    """CuPy's ``translate_cucomplex=True``: ``#include <cuComplex.h>`` becomes CuPy's bridge, which maps
    the cuComplex API onto CuPy's ``complex<T>`` (so ``cuCadd`` works on both precisions). Needs CuPy's
    headers (on the emulator too: without CuPy the compile error says to install it)."""
    return _CUCOMPLEX_INCLUDE.sub("#include <cupy/complex.cuh>\n#include <cupy/cuComplex_bridge.h>  // translate_cucomplex",
                                  code)


class RawModule:
    """``cupy.RawModule`` look-alike: compiled lazily, once per process backend."""

    def __init__(self, *, code: str | None = None, path: str | None = None, options: Sequence[str] = (),
                 backend: str = "nvrtc", translate_cucomplex: bool = False, enable_cooperative_groups: bool = False,
                 name_expressions: Sequence[str] | None = None, jitify: bool = False):
        if (code is None) == (path is None):
            raise TypeError("exactly one of code= and path= must be given")
        if name_expressions and backend != "nvrtc":
            raise ValueError(f"name_expressions need the 'nvrtc' backend, not {backend!r} (as in CuPy)")
        self.enable_cooperative_groups = bool(enable_cooperative_groups)
        self.backend = backend
        self.translate_cucomplex = translate_cucomplex
        self.path = None
        if path is not None and Path(path).suffix not in _SOURCE_SUFFIXES:
            self.path = str(path)       # a cubin / ptx / fatbin: CuPy loads it as is (GPU only)
            code = None
        elif path is not None:
            code = Path(path).read_text()
        if translate_cucomplex and code is not None:
            code = _translate_cucomplex(code)
        self.code = code
        self.options = tuple(options)
        self.name_expressions = tuple(name_expressions) if name_expressions else None
        self._module = None
        self._lock = threading.Lock()
        self._functions: dict[str, RawKernel] = {}

    def __getstate__(self):   # picklable like CuPy's: the source and options travel, not the build
        state = self.__dict__.copy()
        for k in ("_module", "_lock", "_functions"):
            state.pop(k, None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._module = None
        self._lock = threading.Lock()
        self._functions = {}

    @property
    def module(self):
        if self._module is None:
            with self._lock:
                if self._module is None:
                    backend = get_backend()
                    if self.path is not None:
                        if not hasattr(backend, "load_binary"):
                            raise RuntimeError(f"RawModule(path={self.path!r}): the host emulator runs CUDA C "
                                               f"source, not a compiled cubin/ptx; pass code=... (or a .cu path)")
                        self._module = backend.load_binary(self.path)
                        return self._module
                    code = source_with_header_digest(self.code, self.options)
                    if self.enable_cooperative_groups and hasattr(backend, "load_module_cooperative"):
                        self._module = backend.load_module_cooperative(code, self.options, self.name_expressions)
                    else:
                        self._module = backend.load_module(code, self.options, self.name_expressions)
        return self._module

    def compile(self, log_stream=None):
        """Compile now (CuPy compiles on first use). ``log_stream`` (CuPy's: where NVRTC's log goes): on the
        emulator it gets the warnings NVRTC gives by default (an unused variable, ...) in g++'s words
        (``emulator.compile_log``)."""
        _ = self.module
        self._write_log(log_stream)

    def _write_log(self, log_stream):
        if log_stream is None or self.code is None or get_backend().name != "host":
            return
        from .emulator import compile_log
        log = compile_log(self.code, options=self.options)
        if log:
            log_stream.write(log)

    def get_global(self, name: str):
        """Pointer to a module global such as ``__constant__ float arr[10]`` (CuPy's ``get_global``):
        set it from the host with ``ptr.copy_from_host(numpy_array.ctypes.data, nbytes)``."""
        return self.module.get_global(name)

    def get_function(self, name: str) -> RawKernel:
        """The kernel ``name`` (compiles the module first, as CuPy does: a compile error or a missing
        kernel raises here, not at the first launch)."""
        k = self._functions.get(name)
        if k is None:
            k = RawKernel._bound(self, name)
            _ = k.kernel
            self._functions[name] = k
        return k


class RawKernel:
    """``cupy.RawKernel`` look-alike: ``kernel(grid, block, args, shared_mem=0, stream=None)``."""

    def __init__(self, code: str, name: str, options: Sequence[str] = (), backend: str = "nvrtc", **kwargs):
        self._init(RawModule(code=code, options=options, backend=backend, **kwargs), name)

    @classmethod
    def _bound(cls, module: RawModule, name: str) -> RawKernel:
        self = cls.__new__(cls)
        self._init(module, name)
        return self

    def _init(self, module: RawModule, name: str):
        self.name = name
        self._raw_module = module
        self._fn = None

    def __getstate__(self):
        return {"name": self.name, "_raw_module": self._raw_module}

    def __setstate__(self, state):
        self._init(state["_raw_module"], state["name"])

    @property
    def kernel(self):
        """The backend's function object (compiles the module on first use)."""
        if self._fn is None:
            self._fn = get_backend().get_function(self._raw_module.module, self.name)
        return self._fn

    @property
    def enable_cooperative_groups(self) -> bool:
        return self._raw_module.enable_cooperative_groups

    # CuPy's RawKernel attributes that describe the source
    code = property(lambda self: self._raw_module.code)
    options = property(lambda self: self._raw_module.options)
    backend = property(lambda self: self._raw_module.backend)

    def compile(self, log_stream=None):
        """Compile the module and look the kernel up now (CuPy compiles on first use); the warnings are
        written to ``log_stream`` (see RawModule.compile)."""
        _ = self.kernel
        self._raw_module._write_log(log_stream)

    def __call__(self, grid, block, args, *, shared_mem: int = 0, stream=None, enable_cooperative_groups=None):
        backend = get_backend()
        s = _stream(stream)
        args = _pointers(args)
        grid3, block3 = _dim3(grid), _dim3(block)
        coop = self.enable_cooperative_groups if enable_cooperative_groups is None else bool(enable_cooperative_groups)
        if coop:
            if backend.name != "host":
                # the CuPy module was built with enable_cooperative_groups=True: CuPy checks the grid
                # and calls cuLaunchCooperativeKernel
                backend.launch(self.kernel, grid3, block3, tuple(args), int(shared_mem), s)
                return
            grid3 = _cooperative_grid(self.name, grid3, block3, int(shared_mem))
            kernel = _Cooperative(self.kernel)
            backend.launch(kernel, grid3, block3, tuple(args), int(shared_mem), s)
            if stream is None:
                s.wait_idle()
            return
        if stream is None and backend.name == "host":
            # The default stream on the emulator completes a launch before returning, so code ported
            # from CuPy may read its results at once; explicit streams stay asynchronous. A failure is
            # still reported by the next synchronize, as on a GPU.
            backend.launch(self.kernel, grid3, block3, tuple(args), int(shared_mem), s, wait=True)
        else:
            backend.launch(self.kernel, grid3, block3, tuple(args), int(shared_mem), s)


def _pointers(args) -> tuple:
    """``args`` as a tuple, objects with ``__cuda_array_interface__`` replaced by their data pointer (CuPy
    14 would refuse them; on both backends we pass the pointer)."""
    if not isinstance(args, (tuple, list)):
        raise TypeError(f"args must be a tuple, got {type(args).__name__}")
    out = []
    for a in args:
        if not isinstance(a, (int, float, complex, np.generic, np.ndarray)) and a is not None \
                and not is_cupy_pointer(a) and hasattr(a, "__cuda_array_interface__"):
            a = int(a.__cuda_array_interface__["data"][0])
        out.append(a)
    return tuple(out)


def _cooperative_grid(name, grid3, block3, shared_mem):
    """CuPy's check before a cooperative launch: a 1-D grid over the limit is reduced (with a
    warning), any other is refused with ValueError."""
    from .emulator import cooperative_max_blocks
    limit = cooperative_max_blocks(block3[0] * block3[1] * block3[2], shared_mem)
    if grid3[0] * grid3[1] * grid3[2] > limit:
        if grid3[1] == grid3[2] == 1:
            import warnings
            warnings.warn(f"The grid size will be reduced from {grid3[0]} to {limit}, as the specified grid size "
                          "exceeds the limit.")
            return (limit, 1, 1)
        raise ValueError(f"The specified grid size ({grid3[0]} * {grid3[1]} * {grid3[2]}) exceeds the limit ({limit}).")
    return grid3


class _Cooperative:
    """An emulated kernel whose launches are cooperative (all blocks resident, grid.sync allowed)."""

    def __init__(self, fn):
        self._fn = fn
        self.name, self.param_sizes, self.param_kinds = fn.name, fn.param_sizes, fn.param_kinds

    def launch(self, grid, block, params, shared_mem=0):
        self._fn.launch(grid, block, params, shared_mem, cooperative=True)
