"""CuPy-shaped kernel launching on the current device's backend: ``RawModule`` / ``RawKernel``.

A CuPy RawKernel ports unchanged and runs on a machine with no GPU::

    mod = aclnn_py.RawModule(code=src, options=("-std=c++17",), name_expressions=["scale<float>"])
    k = mod.get_function("scale<float>")
    k((blocks,), (256,), (x_ptr, y_ptr, np.float32(2.0), np.int32(n)))   # stream=None: default stream

Arguments follow CuPy's rules (ints are int64, floats float64, NumPy scalars by value, pointers as
ints or objects with ``__cuda_array_interface__``). Launches are asynchronous on an explicit stream
(on the emulator a ``stream=None`` launch has finished when the call returns); a fault
inside the kernel, or an argument whose size does not match its parameter, is reported by the next
``acl.rt.synchronize_stream`` / ``synchronize_device`` / ``memcpy`` as ACL_ERROR_RT_AICORE_EXCEPTION
with a message (``acl.get_recent_err_msg()``) naming the kernel and the block.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Sequence

from .backends import get_backend

__all__ = ["RawModule", "RawKernel"]


def _dim3(v) -> tuple[int, int, int]:
    t = (v,) if isinstance(v, int) else tuple(int(x) for x in v)
    if not 1 <= len(t) <= 3:
        raise ValueError(f"grid/block must have 1 to 3 dimensions, got {v!r}")
    return t + (1,) * (3 - len(t))


def _stream(stream):
    """The backend stream for a launch: an acl stream handle, or None for the default stream."""
    from .acl._state import state, resolve_stream
    if stream is None and not state.initialized:
        return get_backend().default_stream()  # CuPy-style use without acl.init
    s, st = resolve_stream("RawKernel launch", stream)
    if st:
        from .errors import get_recent_err_msg
        raise ValueError(get_recent_err_msg())
    return s


class RawModule:
    """``cupy.RawModule`` look-alike: compiled lazily, once per process backend."""

    def __init__(self, *, code: str | None = None, path: str | None = None, options: Sequence[str] = (),
                 backend: str = "nvrtc", translate_cucomplex: bool = False, enable_cooperative_groups: bool = False,
                 name_expressions: Sequence[str] | None = None, jitify: bool = False):
        if (code is None) == (path is None):
            raise TypeError("exactly one of code= and path= must be given")
        if enable_cooperative_groups:
            raise NotImplementedError("cooperative launches are not supported")
        self.code = code if code is not None else Path(path).read_text()
        self.options = tuple(options)
        self.name_expressions = tuple(name_expressions) if name_expressions else None
        self._module = None
        self._lock = threading.Lock()
        self._functions: dict[str, RawKernel] = {}

    @property
    def module(self):
        if self._module is None:
            with self._lock:
                if self._module is None:
                    self._module = get_backend().load_module(self.code, self.options, self.name_expressions)
        return self._module

    def compile(self):
        """Compile now (CuPy compiles on first use)."""
        _ = self.module

    def get_function(self, name: str) -> RawKernel:
        k = self._functions.get(name)
        if k is None:
            k = RawKernel._bound(self, name)
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

    @property
    def kernel(self):
        """The backend's function object (compiles the module on first use)."""
        if self._fn is None:
            self._fn = get_backend().get_function(self._raw_module.module, self.name)
        return self._fn

    def __call__(self, grid, block, args, *, shared_mem: int = 0, stream=None):
        backend = get_backend()
        s = _stream(stream)
        backend.launch(self.kernel, _dim3(grid), _dim3(block), tuple(args), int(shared_mem), s)
        if stream is None and backend.name == "host":
            # The default stream on the emulator completes a launch before returning, so code ported
            # from CuPy may read its results at once; explicit streams stay asynchronous. A failure is
            # still reported by the next synchronize, as on a GPU.
            s.wait_idle()
