"""Kernel families (``kernels/<family>.cu``): which instantiations each provides, compiled once per process.

An ops module declares its family and every template instantiation its ops launch::

    FAMILY = declare("softmax", instantiate("softmax_rows<{T}, {LOG}>", T=FLOAT_CTYPES, LOG=BOOLS))

That list is the family's ``name_expressions`` for NVRTC (CuPy) and the emulator: the registry, not
a comment in the ``.cu`` file, says what is compiled. ``get_kernel`` compiles a family on first use
(thread-safe) and refuses names the family did not declare (:class:`KernelUnavailable`).
"""
from __future__ import annotations

import hashlib
import itertools
import re
import threading

from ._paths import kernels_dir, kernels_include_dir
from .backends import get_backend

__all__ = ["declare", "instantiate", "instances", "families", "get_kernel", "KernelUnavailable", "compile_options",
           "kernel_source", "source_with_header_digest", "include_dirs",
           "FLOAT_CTYPES", "BOOLS", "family_names", "compile_all"]

FLOAT_CTYPES = ("float", "__half", "__nv_bfloat16")
BOOLS = ("false", "true")

_lock = threading.Lock()
_declared: dict[str, tuple[str, ...]] = {}
_modules: dict[str, tuple] = {}
_functions: dict[tuple[str, str], object] = {}


class KernelUnavailable(LookupError):
    """A kernel that is not declared, or a family that does not compile or load on this backend."""


def instantiate(template: str, **axes) -> list[str]:
    """Every instantiation of ``template`` over the product of ``axes``:
    ``instantiate("k<{T}, {CL}>", T=("float", "__half"), CL=BOOLS)`` -> 4 names."""
    keys = list(axes)
    return [template.format(**dict(zip(keys, combo))) for combo in itertools.product(*(axes[k] for k in keys))]


def declare(family: str, *name_lists) -> str:
    """Declare the instantiations family ``family`` provides (more may be added by later declarations
    before it is first compiled). Returns ``family``, so a module can write ``FAMILY = declare(...)``."""
    names = [n for lst in name_lists for n in lst]
    with _lock:
        if family in _modules or family in _compiling:
            raise RuntimeError(f"kernel family {family!r} is already compiled; declare its kernels at import time")
        old = _declared.get(family, ())
        _declared[family] = old + tuple(n for n in names if n not in old)
    return family


def instances(family: str) -> tuple[str, ...]:
    """The declared instantiations of ``family``."""
    return _declared.get(family, ())


def families() -> dict[str, tuple[str, ...]]:
    """Every declared family and its instantiations (import ``aclnn_py`` first: the ops declare them)."""
    return dict(_declared)


_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.M)


def _digest(code: str, here, include_dirs) -> tuple[str, int]:
    """sha256 of ``code`` and of every header it includes with ``#include "..."``, transitively, found
    beside the including file or in ``include_dirs``; and how many headers were found."""
    from pathlib import Path
    h = hashlib.sha256(code.encode())
    seen, todo = set(), [(code, Path(here) if here is not None else None)]
    dirs = [Path(d) for d in include_dirs]
    while todo:
        text, where = todo.pop()
        for name in _INCLUDE.findall(text):
            for cand in ([where / name] if where is not None else []) + [d / name for d in dirs]:
                if cand.is_file():
                    cand = cand.resolve()
                    if cand not in seen:
                        seen.add(cand)
                        body = cand.read_text()
                        h.update(f"\0{cand.name}\0".encode() + body.encode())
                        todo.append((body, cand.parent))
                    break
    return h.hexdigest(), len(seen)


def kernel_source(family: str) -> str:
    """``kernels/<family>.cu`` with a last line naming the digest of its text and of every header it
    includes, transitively, from ``kernels/include`` (or beside the including file). Both caches
    key on the source text — CuPy's RawModule disk cache and the emulator's — so a changed header
    can never run a stale kernel."""
    path = kernels_dir() / f"{family}.cu"
    code = path.read_text()
    digest, _ = _digest(code, path.parent, [kernels_include_dir()])
    return f"{code}\n// aclnn-py source digest: {digest}\n"      # last: compiler line numbers stay right


def include_dirs(options) -> list[str]:
    """The directories of ``-I<dir>`` / ``-I <dir>`` / ``--include-path=<dir>`` options."""
    out, opts = [], list(options)
    for i, o in enumerate(opts):
        if o in ("-I", "--include-path") and i + 1 < len(opts):
            out.append(opts[i + 1])
        elif o.startswith("--include-path="):
            out.append(o.split("=", 1)[1])
        elif o.startswith("-I") and len(o) > 2:
            out.append(o[2:])
    return out


def source_with_header_digest(code: str, options) -> str:
    """A user's ``RawModule`` source with a last comment line naming the digest of the headers it
    includes from its ``-I`` directories (CuPy's compile cache keys on the source and the options, not
    on header contents: without this an edited header would run the old kernel). Unchanged when it
    includes none."""
    dirs = include_dirs(options)
    if not dirs or '#include' not in code:
        return code
    digest, n = _digest(code, None, dirs)
    return code if n == 0 else f"{code}\n// aclnn-py header digest: {digest}\n"


def compile_options() -> tuple[str, ...]:
    return ("-std=c++17", f"-I{kernels_include_dir()}")


_family_locks: dict[str, threading.Lock] = {}
_compiling: set[str] = set()


def _module(family: str):
    entry = _modules.get(family)
    if entry is None:
        # one lock per family: different families compile at the same time (g++ / NVRTC run outside
        # the GIL); the global lock only guards the tables
        with _lock:
            flock = _family_locks.setdefault(family, threading.Lock())
        with flock:
            entry = _modules.get(family)
            if entry is None:
                with _lock:
                    names = _declared.get(family)
                    if names:
                        _compiling.add(family)
                if not names:
                    raise KernelUnavailable(f"kernel family {family!r} is not declared by any ops module")
                try:
                    code = kernel_source(family)
                    mod = get_backend().load_module(code, compile_options(), list(names), filename=f"{family}.cu")
                except Exception as e:   # a compiler error, a missing file: the caller maps it to a status
                    raise KernelUnavailable(f"kernels/{family}.cu failed to build: {type(e).__name__}: {e}") from e
                finally:
                    with _lock:
                        _compiling.discard(family)
                with _lock:
                    entry = _modules[family] = (mod, frozenset(names))
    return entry


def compile_all(selected=None, workers: int | None = None, progress=None) -> dict[str, str | None]:
    """Compile every declared family (or ``selected``) in parallel, ``workers`` at a time (default:
    the CPU count). ``progress(done, total, family, error_or_None)`` is called as each finishes
    (default: a line on stderr). Returns ``{family: None | error message}``."""
    import os
    import sys
    import time
    from concurrent.futures import ThreadPoolExecutor, as_completed
    fams = list(selected) if selected is not None else sorted(_declared)
    total = len(fams)
    if progress is None:
        t0 = time.monotonic()

        def progress(done, n, fam, err):
            sys.stderr.write(f"aclnn-py: compiled kernel families {done}/{n} ({fam}{': FAILED' if err else ''}, "
                             f"{time.monotonic() - t0:.1f} s)\n")
            sys.stderr.flush()

    def one(fam):
        try:
            _module(fam)
            return fam, None
        except KernelUnavailable as e:
            return fam, str(e)

    out: dict[str, str | None] = {}
    with ThreadPoolExecutor(max_workers=max(1, workers or os.cpu_count() or 1)) as ex:
        futs = [ex.submit(one, f) for f in fams]
        for i, fut in enumerate(as_completed(futs), 1):
            fam, err = fut.result()
            out[fam] = err
            progress(i, total, fam, err)
    return out


def get_kernel(family: str, name: str):
    """The backend function for ``name`` in ``kernels/<family>.cu`` (compiling the family on first use)."""
    fn = _functions.get((family, name))
    if fn is None:
        mod, names = _module(family)
        if name not in names:
            raise KernelUnavailable(f"kernel {name!r} is not declared for kernels/{family}.cu "
                                    f"({len(names)} declared instantiations)")
        try:
            fn = get_backend().get_function(mod, name)
        except Exception as e:
            raise KernelUnavailable(f"kernel {name!r} of kernels/{family}.cu could not be loaded: {e}") from e
        with _lock:
            fn = _functions.setdefault((family, name), fn)
    return fn


def family_names(code: str) -> list[str]:
    """The names of every ``// name_expressions: a<float>, b<__half, 128>`` line of a kernel source
    (commas inside <> kept): how the tests' own kernel files list their instantiations."""
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
