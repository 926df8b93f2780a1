"""Kernel families (``kernels/<family>.cu``) compiled once per process backend and looked up by name.

Each file lists the instantiations it provides in its first line,
``// name_expressions: k<float>, k<__half>`` — they are passed to NVRTC (CuPy) or to the emulator as
``name_expressions``, so a family is one module with every template instantiation the ops use.
"""
from __future__ import annotations

import re
import threading

from ._paths import kernels_dir, kernels_include_dir
from .backends import get_backend

_lock = threading.Lock()
_modules: dict[str, tuple] = {}
_functions: dict[tuple[str, str], object] = {}


def family_names(code: str) -> list[str]:
    """The names of every ``// name_expressions: a<float>, b<__half, 128>`` line (commas inside <> kept)."""
    names: list[str] = []
    for m in re.finditer(r"^\s*//\s*name_expressions:(.*)$", code, re.M):
        depth, cur = 0, ""
        for ch in m.group(1):
            depth += (ch == "<") - (ch == ">")
            if ch == "," and depth == 0:
                names.append(cur.strip())
                cur = ""
            else:
                cur += ch
        names.append(cur.strip())
    return [n for n in names if n]


def compile_options() -> tuple[str, ...]:
    return ("-std=c++17", f"-I{kernels_include_dir()}")


def _module(family: str):
    entry = _modules.get(family)
    if entry is None:
        with _lock:
            entry = _modules.get(family)
            if entry is None:
                code = (kernels_dir() / f"{family}.cu").read_text()
                names = family_names(code)
                mod = get_backend().load_module(code, compile_options(), names)
                entry = _modules[family] = (mod, frozenset(names))
    return entry


def get_kernel(family: str, name: str):
    """The backend function for ``name`` in ``kernels/<family>.cu`` (compiling the family on first use)."""
    fn = _functions.get((family, name))
    if fn is None:
        mod, names = _module(family)
        if name not in names:
            raise LookupError(f"kernel {name!r} is not instantiated by kernels/{family}.cu (name_expressions: "
                              f"{', '.join(sorted(names))})")
        fn = _functions[(family, name)] = get_backend().get_function(mod, name)
    return fn
