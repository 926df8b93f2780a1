"""Compile CUDA C++ kernel sources with the host C++ compiler against the emulation header.

Pipeline of :func:`compile_module` (cache miss):

1. The glue source is ``#include "cuda_emu.h"`` (std headers, then the CUDA surface), the user's
   pre-includes, then the kernel source under ``#line 1 "<filename>"``.
2. ``g++ -E`` preprocesses it (include dirs: ours first, then the ``-I`` options except CUDA
   toolkit include dirs). In the preprocessed text of the user's own files:
   * ``extern __shared__ T name[];`` (now ``extern thread_local ...``) is rewritten to a reference
     to the per-block dynamic shared memory buffer;
   * ``__global__`` functions are found (the header spells ``__global__`` as a marker attribute);
   * a crude call graph decides, per kernel, whether anything reachable from it can use a barrier
     or a warp collective (then its threads run as fibers, otherwise as a plain loop).
3. A registration per kernel (``&EXPR`` instantiates templates like nvrtcAddNameExpression) and
   the extern "C" entry points are appended; ``g++ -O2 -shared`` builds the module into the
   cache (temp file + ``os.replace``), next to a JSON side file with the kernel table.

The cache key hashes the source, options, name expressions, every header the source may include
from the ``-I`` directories, the emulator headers, the compiler flags and the compiler binary's
identity, so a cache hit runs no compiler at all.
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
from typing import Sequence

__all__ = [
    "EmulatorError",
    "KernelError",
    "Module",
    "Function",
    "compile_module",
    "compiler_info",
    "cache_dir",
]

_EMU_VERSION = "aclnn-emu-1"
_INCLUDE_DIR = pathlib.Path(__file__).resolve().parent / "include"
_BASE_FLAGS = (
    "-std=c++20",
    "-O2",
    "-fPIC",
    "-pthread",
    "-fno-strict-aliasing",
    "-fno-math-errno",
    "-fvisibility=hidden",
    "-fvisibility-inlines-hidden",
    "-w",
)
_MAX_BLOCK = (1024, 1024, 64)
_MAX_GRID = (2**31 - 1, 65535, 65535)
_MAX_DYN_SMEM = 232448

# Names whose use makes a kernel need fibers.
_SYNC_PRIMITIVES = frozenset(
    """__syncthreads __syncthreads_count __syncthreads_and __syncthreads_or __syncwarp
    __shfl_sync __shfl_up_sync __shfl_down_sync __shfl_xor_sync __ballot_sync __any_sync __all_sync
    __activemask __match_any_sync __match_all_sync __reduce_add_sync __reduce_min_sync
    __reduce_max_sync __reduce_and_sync __reduce_or_sync __reduce_xor_sync __nanosleep""".split()
)
_KEYWORDS = frozenset(
    """if for while switch catch return sizeof alignof decltype typeid static_assert noexcept throw
    __attribute__ alignas __align__ __launch_bounds__ do else case new delete""".split()
)


class EmulatorError(RuntimeError):
    """The emulator could not build a module (the message carries the compiler log)."""


class KernelError(EmulatorError):
    """A launch was refused or a kernel failed while running (names the kernel and block)."""


# --------------------------------------------------------------------------------------------
# Paths, compiler identity
# --------------------------------------------------------------------------------------------
def cache_dir() -> pathlib.Path:
    """``$ACLNN_PY_CACHE_DIR`` or ``~/.cache/aclnn_py`` (the emulator uses its ``emulator/`` subdir)."""
    env = os.environ.get("ACLNN_PY_CACHE_DIR")
    if env:
        return pathlib.Path(env).expanduser()
    return pathlib.Path.home() / ".cache" / "aclnn_py"


def _cxx() -> str:
    name = os.environ.get("ACLNN_PY_EMU_CXX", "g++")
    path = shutil.which(name)
    if not path:
        raise EmulatorError(f"the host CUDA emulator needs a C++ compiler: {name!r} was not found on PATH")
    return path


def _extra_flags() -> tuple[str, ...]:
    return tuple(shlex.split(os.environ.get("ACLNN_PY_EMU_CXXFLAGS", "")))


def _compiler_identity(path: str) -> str:
    real = os.path.realpath(path)
    st = os.stat(real)
    return f"{real}:{st.st_size}:{st.st_mtime_ns}"


_info_lock = threading.Lock()
_info_cache: dict[str, str] = {}


def compiler_info() -> str:
    """First line of ``g++ --version``, e.g. ``g++ (Debian 12.2.0-14+deb12u1) 12.2.0``."""
    path = _cxx()
    with _info_lock:
        if path not in _info_cache:
            out = subprocess.run([path, "--version"], capture_output=True, text=True, check=False).stdout
            _info_cache[path] = (out.splitlines() or ["unknown compiler"])[0].strip()
        return _info_cache[path]


_header_hash: str | None = None


def _headers_digest() -> str:
    global _header_hash
    if _header_hash is None:
        h = hashlib.sha256()
        h.update(pathlib.Path(__file__).read_bytes())  # the scanner decides fibers vs plain loop
        for p in sorted(_INCLUDE_DIR.iterdir()):
            if p.is_file():
                h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
        _header_hash = h.hexdigest()
    return _header_hash


# --------------------------------------------------------------------------------------------
# Options
# --------------------------------------------------------------------------------------------
def _is_cuda_include_dir(d: str) -> bool:
    return any(os.path.exists(os.path.join(d, f)) for f in ("cuda_runtime_api.h", "cuda_fp16.hpp", "crt"))


def _parse_options(options: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
    """CuPy/NVRTC-style options -> (include dirs, -D/-U flags, pre-include files)."""
    incs: list[str] = []
    defs: list[str] = []
    pre: list[str] = []
    opts = list(options)
    i = 0
    while i < len(opts):
        o = str(opts[i])
        nxt = str(opts[i + 1]) if i + 1 < len(opts) else None
        if o in ("-I", "--include-path", "-isystem"):
            if nxt is not None:
                incs.append(nxt)
                i += 1
        elif o.startswith("--include-path="):
            incs.append(o.split("=", 1)[1])
        elif o.startswith("-I"):
            incs.append(o[2:])
        elif o in ("-D", "--define-macro"):
            if nxt is not None:
                defs.append("-D" + nxt)
                i += 1
        elif o.startswith("--define-macro="):
            defs.append("-D" + o.split("=", 1)[1])
        elif o.startswith("-D"):
            defs.append(o)
        elif o in ("-U", "--undefine-macro"):
            if nxt is not None:
                defs.append("-U" + nxt)
                i += 1
        elif o.startswith("--undefine-macro="):
            defs.append("-U" + o.split("=", 1)[1])
        elif o.startswith("-U"):
            defs.append(o)
        elif o in ("-include", "--pre-include"):
            if nxt is not None:
                pre.append(nxt)
                i += 1
        elif o.startswith("--pre-include="):
            pre.append(o.split("=", 1)[1])
        # everything else (-std, -arch, -ftz, --use_fast_math, -lineinfo, ...) is ignored
        i += 1
    incs = [os.path.abspath(d) for d in incs]
    incs = [d for d in incs if os.path.isdir(d) and not _is_cuda_include_dir(d)]
    return incs, defs, pre


_INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.M)


def _dependency_digest(code: str, incs: list[str], pre: list[str]) -> str:
    """Hash of every file the source may include from the user include dirs (over-approximated)."""
    h = hashlib.sha256()
    seen: set[str] = set()
    todo: list[tuple[str, str | None]] = [(code, None)]
    for p in pre:
        todo.append((f'#include "{p}"', None))
    while todo:
        text, cur_dir = todo.pop()
        for m in _INCLUDE_RE.finditer(text):
            name = m.group(2).strip()
            cands = []
            if os.path.isabs(name):
                cands.append(name)
            else:
                if m.group(1) == '"':
                    cands.append(os.path.join(cur_dir or os.getcwd(), name))
                cands += [os.path.join(d, name) for d in incs]
            for c in cands:
                c = os.path.normpath(c)
                if c in seen or not os.path.isfile(c):
                    continue
                seen.add(c)
                try:
                    data = pathlib.Path(c).read_bytes()
                except OSError:
                    continue
                h.update(c.encode() + b"\0" + data + b"\0")
                todo.append((data.decode("utf-8", "replace"), os.path.dirname(c)))
    return h.hexdigest()


# --------------------------------------------------------------------------------------------
# Scanning the preprocessed source
# --------------------------------------------------------------------------------------------
_LINEMARKER_RE = re.compile(r'^# (\d+) "((?:[^"\\]|\\.)*)"(.*)$')


def _user_segments(pre_text: str) -> list[tuple[int, int]]:
    """Character ranges of the preprocessed text that come from the user's files."""
    inc = str(_INCLUDE_DIR)
    segs: list[tuple[int, int]] = []
    pos = 0
    start: int | None = None
    for line in pre_text.splitlines(keepends=True):
        if line.startswith("# "):
            m = _LINEMARKER_RE.match(line.rstrip("\n"))
            if m:
                fname, flags = m.group(2), m.group(3).split()
                user = not (
                    "3" in flags
                    or fname.startswith(inc)
                    or fname.startswith("<")
                    or fname.startswith("/usr/")
                )
                if start is not None:
                    segs.append((start, pos))
                    start = None
                if user:
                    start = pos + len(line)
        pos += len(line)
    if start is not None:
        segs.append((start, pos))
    return segs


_PAREN = r"\((?:[^()]|\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\))*\)"  # balanced, 4 levels
_EXTERN_SHARED_RE = re.compile(
    r"\b(?:extern\s+thread_local|thread_local\s+extern)\s+"
    r"((?:[^;{}()\[\]]|" + _PAREN + r")*?)\s*\b([A-Za-z_]\w*)\s*\[\s*\]\s*;"
)
_ATTR_RE = re.compile(r"\b(?:__attribute__|alignas|__declspec)\s*" + _PAREN)


def _rewrite_extern_shared(text: str) -> str:
    def repl(m: re.Match) -> str:
        typ = " ".join(_ATTR_RE.sub(" ", m.group(1)).split())
        name = m.group(2)
        nl = "\n" * m.group(0).count("\n")
        return f"static thread_local {typ} (&{name})[] = ::__emu::dyn_smem<decltype({name})>();{nl}"

    return _EXTERN_SHARED_RE.sub(repl, text)


_TOKEN_RE = re.compile(
    r'"(?:\\.|[^"\\\n])*"'
    r"|'(?:\\.|[^'\\\n])*'"
    r"|[A-Za-z_]\w*"
    r"|\.?\d(?:[eEpP][+-]|[\w.'])*"
    r"|::|->|[^\s\w]"
)
_GLOBAL_MARK = "__emu_global__"


def _tokens(text: str) -> list[str]:
    return _TOKEN_RE.findall(text)


def _match_back(toks: list[str], j: int, open_: str, close: str) -> int:
    depth = 0
    while j >= 0:
        t = toks[j]
        if t == close:
            depth += 1
        elif t == open_:
            depth -= 1
            if depth == 0:
                return j
        j -= 1
    return -1


def _match_fwd(toks: list[str], j: int, open_: str, close: str) -> int:
    depth = 0
    while j < len(toks):
        t = toks[j]
        if t == open_:
            depth += 1
        elif t == close:
            depth -= 1
            if depth == 0:
                return j
        j += 1
    return -1


class _Scan:
    """Crude structure of the user's code: function/class bodies, namespaces, kernels."""

    def __init__(self, text: str):
        self.toks = toks = _tokens(text)
        self.defs: dict[str, set[str]] = {}
        self.kernels: list[tuple[str, bool, bool]] = []  # (qualified name, is_template, has_body)
        self.free_operator_sync = False
        self.free_ops: set[str] = set()
        n = len(toks)
        scopes: list[tuple[str, str, int]] = []  # kind, name, token index of '{'
        i = 0
        while i < n:
            t = toks[i]
            if t == "{":
                scopes.append(self._classify(i) + (i,))
            elif t == "}":
                if scopes:
                    kind, name, start = scopes.pop()
                    if kind in ("func", "class") and name:
                        ids = {x for x in toks[start + 1 : i] if x[0].isalpha() or x[0] == "_"}
                        self.defs.setdefault(name, set()).update(ids)
                        if kind == "func" and name.startswith("operator"):
                            if not any(s[0] == "class" for s in scopes):
                                self.free_ops.add(name)
            elif t == _GLOBAL_MARK:
                self._kernel_at(i, [s[1] for s in scopes if s[0] == "ns"])
            i += 1

    def _boundary(self, i: int) -> int:
        """Index just after the previous statement boundary (; { }) at the same nesting."""
        toks = self.toks
        j = i - 1
        while j >= 0:
            t = toks[j]
            if t in (";", "{", "}"):
                return j + 1
            if t == ")":
                j = _match_back(toks, j, "(", ")")
                if j < 0:
                    return 0
            elif t == "]":
                j = _match_back(toks, j, "[", "]")
                if j < 0:
                    return 0
            j -= 1
        return 0

    def _classify(self, i: int) -> tuple[str, str]:
        toks = self.toks
        b = self._boundary(i)
        win = toks[b:i]
        if not win:
            return ("block", "")
        if win[0] == "inline" and len(win) > 1 and win[1] == "namespace":
            win = win[1:]
        if win[0] == "namespace":
            name = win[1] if len(win) > 1 and (win[1][0].isalpha() or win[1][0] == "_") else ""
            return ("ns", name)
        if win[0] == "extern" and len(win) == 2 and win[1].startswith('"'):
            return ("link", "")
        if win[-1] in ("=", ",", "(", "return") or win[0] in ("else", "do", "try"):
            return ("block", "")
        # skip template parameter lists
        k = 0
        while k < len(win) and win[k] == "template":
            if k + 1 < len(win) and win[k + 1] == "<":
                depth = 0
                m = k + 1
                while m < len(win):
                    if win[m] == "<":
                        depth += 1
                    elif win[m] == ">":
                        depth -= 1
                        if depth == 0:
                            break
                    m += 1
                k = m + 1
            else:
                k += 1
        # a lambda stored in a variable: `auto name = [...](...) {`
        if "=" in win and "[" in win and win.index("=") < win.index("["):
            eq = win.index("=")
            name = win[eq - 1] if eq > 0 else ""
            if name and (name[0].isalpha() or name[0] == "_"):
                return ("func", name)
        # first top-level parenthesis group whose preceding token is a name
        while k < len(win):
            t = win[k]
            if t == "(":
                prev = win[k - 1] if k > 0 else ""
                end = k + _match_fwd(win[k:], 0, "(", ")")
                if prev in ("__attribute__", "alignas", "__align__", "decltype", "noexcept", "throw", "__declspec"):
                    k = end + 1 if end >= k else len(win)
                    continue
                for back in (1, 2, 3):  # operator(), operator+, operator==, operator float
                    if k - back >= 0 and win[k - back] == "operator":
                        return ("func", "operator" + "".join(win[k - back + 1 : k]))
                if prev and (prev[0].isalpha() or prev[0] == "_") and prev not in _KEYWORDS:
                    return ("func", prev)
                return ("block", "")
            if t in ("struct", "class", "union", "enum"):
                rest = [x for x in win[k + 1 :] if x not in ("class", "struct")]
                name = ""
                m = 0
                while m < len(rest):
                    x = rest[m]
                    if x in ("__attribute__", "alignas", "__align__") and m + 1 < len(rest) and rest[m + 1] == "(":
                        m = m + 1 + _match_fwd(rest[m + 1 :], 0, "(", ")") + 1
                        continue
                    if x[0].isalpha() or x[0] == "_":
                        name = x
                    break
                return ("class", name)
            k += 1
        return ("block", "")

    def _kernel_at(self, i: int, ns: list[str]) -> None:
        toks = self.toks
        n = len(toks)
        # the marker is inside __attribute__((__emu_global__)); find the function name
        j = i + 1
        while j < n and toks[j] == ")":
            j += 1
        name = ""
        while j < n:
            t = toks[j]
            if t == "(":
                prev = toks[j - 1]
                if prev in ("__attribute__", "alignas", "__align__", "decltype", "noexcept"):
                    j = _match_fwd(toks, j, "(", ")")
                    if j < 0:
                        return
                    j += 1
                    continue
                name = prev
                break
            if t in (";", "{", "}"):
                return
            j += 1
        if not name or not (name[0].isalpha() or name[0] == "_"):
            return
        # qualified name written at the definition (e.g. ns::k) and enclosing namespaces
        q = name
        k = j - 2
        while k >= 1 and toks[k] == "::" and (toks[k - 1][0].isalpha() or toks[k - 1][0] == "_"):
            q = toks[k - 1] + "::" + q
            k -= 2
        prefix = "::".join(x for x in ns if x)
        qual = f"{prefix}::{q}" if prefix else q
        close = _match_fwd(toks, j, "(", ")")
        if close < 0:
            return
        m = close + 1
        while m < n and toks[m] not in ("{", ";", "="):
            m += 1
        has_body = m < n and toks[m] == "{"
        b = self._boundary(i)
        is_template = "template" in toks[b:i]
        self.kernels.append((qual, is_template, has_body))

    def tainted(self) -> set[str]:
        bad = set(_SYNC_PRIMITIVES)
        changed = True
        while changed:
            changed = False
            for name, ids in self.defs.items():
                if name not in bad and not ids.isdisjoint(bad):
                    bad.add(name)
                    changed = True
        self.free_operator_sync = not self.free_ops.isdisjoint(bad)
        return bad

    def uses_sync(self, expr: str, tainted: set[str]) -> bool:
        if self.free_operator_sync:
            return True
        ids = set(re.findall(r"[A-Za-z_]\w*", expr))
        base = re.split(r"[<(]", expr, maxsplit=1)[0].strip().split("::")[-1].strip()
        body = self.defs.get(base)
        if body is None:
            return True  # when in doubt, fibers
        return not (body | ids).isdisjoint(tainted)


# --------------------------------------------------------------------------------------------
# Module / Function
# --------------------------------------------------------------------------------------------
class Function:
    """One kernel of a compiled module; ``launch`` runs it CuPy-style (blocking)."""

    __slots__ = ("name", "param_sizes", "param_kinds", "uses_sync", "_module", "_index", "_cname")

    def __init__(self, module: "Module", index: int, name: str, sizes, kinds, uses_sync: bool):
        self._module = module
        self._index = index
        self.name = name
        self._cname = name.encode()
        self.param_sizes = tuple(sizes)
        self.param_kinds = tuple(kinds)
        self.uses_sync = bool(uses_sync)

    def __repr__(self) -> str:
        return f"<emulated kernel {self.name!r} params={self.param_sizes} fibers={self.uses_sync}>"

    def launch(self, grid, block, params: Sequence, shared_mem: int = 0) -> None:
        grid3 = _dim3(grid)
        block3 = _dim3(block)
        name = self.name
        if grid3 is None or block3 is None:
            raise KernelError(f"kernel '{name}': grid and block must be 1 to 3 positive integers, got {grid!r}, {block!r}")
        for what, d, lim in (("grid", grid3, _MAX_GRID), ("block", block3, _MAX_BLOCK)):
            for axis, v, m in zip("xyz", d, lim):
                if v <= 0:
                    raise KernelError(f"kernel '{name}': {what}.{axis} is {v}; every dimension must be >= 1")
                if v > m:
                    raise KernelError(f"kernel '{name}': {what}.{axis} is {v}; the maximum is {m}")
        nthreads = block3[0] * block3[1] * block3[2]
        if nthreads > 1024:
            raise KernelError(f"kernel '{name}': block {block3} has {nthreads} threads; the maximum is 1024")
        shared_mem = int(shared_mem)
        if shared_mem < 0 or shared_mem > _MAX_DYN_SMEM:
            raise KernelError(f"kernel '{name}': {shared_mem} bytes of dynamic shared memory (0 to {_MAX_DYN_SMEM} allowed)")
        sizes = self.param_sizes
        if len(params) != len(sizes):
            raise KernelError(f"kernel '{name}' takes {len(sizes)} argument(s), {len(params)} given")
        raw = []
        for i, p in enumerate(params):
            if not isinstance(p, bytes):
                try:
                    p = bytes(memoryview(p))
                except TypeError:
                    raise KernelError(
                        f"kernel '{name}' argument {i}: expected the raw argument bytes, got {type(p).__name__}"
                    ) from None
            if len(p) != sizes[i]:
                raise KernelError(
                    f"kernel '{name}' argument {i}: {len(p)} bytes given for a {sizes[i]}-byte parameter"
                )
            raw.append(p)
        arr = (ctypes.c_char_p * max(1, len(raw)))(*raw)
        err = ctypes.create_string_buffer(4096)
        rc = self._module._launch(
            self._index, (ctypes.c_uint * 3)(*grid3), (ctypes.c_uint * 3)(*block3), arr, shared_mem, err, 4096
        )
        if rc:
            raise KernelError(err.value.decode("utf-8", "replace") or f"kernel '{name}' failed")


def _dim3(d) -> tuple[int, int, int] | None:
    if isinstance(d, int):
        d = (d,)
    try:
        t = tuple(int(x) for x in d)
    except TypeError:
        return None
    if not 1 <= len(t) <= 3:
        return None
    return t + (1,) * (3 - len(t))  # type: ignore[return-value]


class Module:
    """A compiled, loaded module: ``get_function(name)`` like CuPy's RawModule."""

    def __init__(self, so_path: pathlib.Path, table: list[dict]):
        self.path = so_path
        self._lib = ctypes.CDLL(str(so_path))
        f = self._lib.aclnn_emu_launch
        f.restype = ctypes.c_int
        f.argtypes = [
            ctypes.c_int,
            ctypes.POINTER(ctypes.c_uint),
            ctypes.POINTER(ctypes.c_uint),
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_char_p,
            ctypes.c_size_t,
        ]
        self._launch = f
        info = self._lib.aclnn_emu_kernel_info
        info.restype = ctypes.c_int
        info.argtypes = [
            ctypes.c_int,
            ctypes.POINTER(ctypes.c_uint),
            ctypes.POINTER(ctypes.POINTER(ctypes.c_uint)),
            ctypes.POINTER(ctypes.c_char_p),
        ]
        self._functions: dict[str, Function] = {}
        self._lookup: dict[str, int] = {}
        for idx, entry in enumerate(table):
            n = ctypes.c_uint()
            sizes = ctypes.POINTER(ctypes.c_uint)()
            kinds = ctypes.c_char_p()
            if info(idx, ctypes.byref(n), ctypes.byref(sizes), ctypes.byref(kinds)) != 0:
                raise EmulatorError(f"emulated module {so_path} has no kernel {idx}")
            fn = Function(
                self, idx, entry["name"], [sizes[i] for i in range(n.value)], kinds.value.decode(), entry["uses_sync"]
            )
            for alias in [entry["name"], *entry.get("aliases", [])]:
                self._lookup.setdefault(alias, idx)
                self._lookup.setdefault(_norm(alias), idx)
            self._functions[entry["name"]] = fn
        self._by_index = list(self._functions.values())

    @property
    def names(self) -> list[str]:
        return [f.name for f in self._by_index]

    def get_function(self, name: str) -> Function:
        idx = self._lookup.get(name)
        if idx is None:
            idx = self._lookup.get(_norm(name.lstrip("&").strip()))
        if idx is None:
            raise LookupError(
                f"kernel {name!r} not found in the emulated module; it has {sorted(self._functions)} "
                "(template kernels need a name expression given at compile time)"
            )
        return self._by_index[idx]


def _norm(s: str) -> str:
    return re.sub(r"\s+", "", s)


# --------------------------------------------------------------------------------------------
# compile_module
# --------------------------------------------------------------------------------------------
_modules: dict[tuple, Module] = {}
_modules_lock = threading.Lock()
_key_locks: dict[tuple, threading.Lock] = {}


def compile_module(
    code: str,
    *,
    options: tuple[str, ...] | Sequence[str] = (),
    name_expressions: Sequence[str] | None = None,
    filename: str | None = None,
) -> Module:
    """Compile (or fetch from the caches) the emulated module for a CUDA C++ source.

    ``options`` are CuPy/NVRTC style: ``-I<dir>``/``-I <dir>``, ``-D<NAME>[=<v>]``, ``-U``,
    ``-include``; everything else (``-std``, ``-arch``, ``-ftz``, ``--use_fast_math``...) is
    ignored. ``name_expressions`` instantiate templates (``"k<float, 128>"``). ``filename`` only
    names the source in messages (default ``kernel.cu``).
    """
    if not isinstance(code, str):
        raise TypeError("code must be a str")
    names = tuple(str(n) for n in (name_expressions or ()))
    opts = tuple(str(o) for o in options)
    fname = filename or "kernel.cu"
    pkey = (code, opts, names, fname)
    mod = _modules.get(pkey)
    if mod is not None:
        return mod
    with _modules_lock:
        lock = _key_locks.setdefault(pkey, threading.Lock())
    with lock:
        mod = _modules.get(pkey)
        if mod is None:
            mod = _build(code, opts, names, fname)
            _modules[pkey] = mod
    return mod


def _glue_head(code: str, fname: str, pre: list[str]) -> str:
    lines = ['#include "cuda_emu.h"']
    for p in pre:
        lines.append(f'#include "{p}"')
    esc = fname.replace("\\", "\\\\").replace('"', '\\"')
    lines.append(f'#line 1 "{esc}"')
    return "\n".join(lines) + "\n" + code + "\n"


def _build(code: str, opts: tuple[str, ...], names: tuple[str, ...], fname: str) -> Module:
    cxx = _cxx()
    incs, defs, pre = _parse_options(opts)
    flags = _BASE_FLAGS + _extra_flags()
    key_src = json.dumps(
        {
            "v": _EMU_VERSION,
            "code": code,
            "file": fname,
            "incs": incs,
            "defs": defs,
            "pre": pre,
            "names": list(names),
            "flags": list(flags),
            "headers": _headers_digest(),
            "deps": _dependency_digest(code, incs, pre),
            "cxx": _compiler_identity(cxx),
        },
        sort_keys=True,
    )
    key = hashlib.sha256(key_src.encode()).hexdigest()[:40]
    out_dir = cache_dir() / "emulator"
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        if not os.access(out_dir, os.W_OK):
            raise PermissionError(str(out_dir))
    except OSError:  # read-only home: a private temp dir still gives a per-machine cache
        out_dir = pathlib.Path(tempfile.gettempdir()) / f"aclnn_py-{os.getuid()}" / "emulator"
        out_dir.mkdir(parents=True, exist_ok=True)
    so_path = out_dir / f"{key}.so"
    meta_path = out_dir / f"{key}.json"
    mod = _try_load(so_path, meta_path)
    if mod is not None:
        return mod
    lock_path = out_dir / f"{key}.lock"
    with open(lock_path, "a+") as lf:
        fcntl.flock(lf, fcntl.LOCK_EX)  # another process may be compiling the same module
        try:
            mod = _try_load(so_path, meta_path)
            if mod is not None:
                return mod
            table = _compile(cxx, flags, code, fname, incs, defs, pre, names, so_path, meta_path, out_dir)
        finally:
            fcntl.flock(lf, fcntl.LOCK_UN)
    try:
        os.unlink(lock_path)
    except OSError:
        pass
    return Module(so_path, table)


def _try_load(so_path: pathlib.Path, meta_path: pathlib.Path) -> Module | None:
    if not (so_path.exists() and meta_path.exists()):
        return None
    try:
        table = json.loads(meta_path.read_text())["kernels"]
        return Module(so_path, table)
    except (OSError, ValueError, KeyError, AttributeError):
        return None


def _run(cmd: list[str], what: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=900)
    except subprocess.TimeoutExpired as e:
        raise EmulatorError(f"{what} timed out after {e.timeout} s") from None


def _explain(log: str) -> str:
    hints = []
    if "__emu_unsupported_inline_asm_in_kernel_code" in log:
        hints.append("inline asm (PTX) cannot be emulated on the CPU; guard it with #ifdef __CUDA_ARCH__ or avoid it")
    if re.search(r"(cooperative_groups|cub/|mma\.h|cuda_pipeline|cuda/std|cuda_awbarrier)[^\n]*No such file", log):
        hints.append("CUB, cooperative groups, WMMA/MMA, cp.async pipelines and libcu++ are not supported by the emulator")
    return ("".join(f"note: {h}\n" for h in hints)) + log


def _compile(cxx, flags, code, fname, incs, defs, pre, names, so_path, meta_path, out_dir) -> list[dict]:
    fd, tmp_base = tempfile.mkstemp(prefix=so_path.stem + ".", dir=out_dir)
    os.close(fd)
    src = tmp_base + ".cpp"
    ii = tmp_base + ".ii"
    tmp_so = tmp_base + ".so"
    tmp_meta = tmp_base + ".json"
    try:
        with open(src, "w") as f:
            f.write(_glue_head(code, fname, pre))
        inc_flags = ["-I", str(_INCLUDE_DIR)]
        for d in incs:
            inc_flags += ["-I", d]
        r = _run([cxx, *flags, *inc_flags, *defs, "-E", src, "-o", ii], "preprocessing")
        if r.returncode != 0:
            raise EmulatorError(f"g++ could not preprocess {fname} for the emulator:\n" + _explain(r.stderr[-30000:]))
        pre_text = pathlib.Path(ii).read_text(errors="replace")
        segs = _user_segments(pre_text)
        pieces = []
        user_text = []
        last = 0
        for a, b in segs:
            pieces.append(pre_text[last:a])
            seg = _rewrite_extern_shared(pre_text[a:b])
            pieces.append(seg)
            user_text.append(seg)
            last = b
        pieces.append(pre_text[last:])
        scan = _Scan("\n".join(user_text))
        tainted = scan.tainted()
        table: list[dict] = []
        exprs: list[str] = []
        index: dict[str, int] = {}
        for expr in names:
            e = expr.strip()
            if e.startswith("&") and "(" not in e:
                e = e[1:].strip()
            if _norm(e) in index:
                table[index[_norm(e)]]["aliases"].append(expr)
                continue
            index[_norm(e)] = len(table)
            table.append({"name": expr, "aliases": [e] if e != expr else [], "uses_sync": scan.uses_sync(e, tainted)})
            exprs.append(e)
        bodies: dict[str, int] = {}
        for qual, is_template, has_body in scan.kernels:
            if has_body and not is_template:
                bodies[qual] = bodies.get(qual, 0) + 1
        for qual, is_template, has_body in scan.kernels:
            if is_template or not has_body or bodies.get(qual, 0) != 1:
                continue  # templates and overloaded kernels need a name expression
            plain = qual.split("::")[-1]
            if _norm(qual) in index:
                t = table[index[_norm(qual)]]
                if plain not in t["aliases"] and plain != t["name"]:
                    t["aliases"].append(plain)
                continue
            index[_norm(qual)] = len(table)
            aliases = [qual] if plain != qual else []
            table.append({"name": plain, "aliases": aliases, "uses_sync": scan.uses_sync(qual, tainted)})
            exprs.append(qual)
        reg = ["", '# 1 "<aclnn-emulator-glue>"', "namespace __emu_glue {"]
        for i, e in enumerate(exprs):
            # `k<float>` -> &k<float>; `&k<float>` or a cast expression yielding the pointer as is
            ptr_expr = e if e.startswith(("&", "(")) or e.endswith(")") else f"&{e}"
            reg.append(f"constexpr auto k{i} = {ptr_expr};")
        descs = ", ".join(f"::__emu::KernelImpl<k{i}>::desc()" for i in range(len(exprs))) or "{}"
        reg.append(f"static const ::__emu::KernelDesc descs[] = {{{descs}}};")
        cnames = ", ".join(json.dumps(t["name"]) for t in table) or '""'
        reg.append(f"static const char* const names[] = {{{cnames}}};")
        syncs = ", ".join("true" if t["uses_sync"] else "false" for t in table) or "false"
        reg.append(f"static const bool fibers[] = {{{syncs}}};")
        reg.append(f"static constexpr int count = {len(exprs)};")
        reg.append("}  // namespace __emu_glue")
        reg.append(
            'extern "C" __attribute__((visibility("default"))) int aclnn_emu_launch(int k, const unsigned* grid, '
            "const unsigned* block, void** params, size_t shmem, char* err, size_t errlen) {\n"
            "    if (k < 0 || k >= __emu_glue::count) return 2;\n"
            "    return ::__emu::launch_entry(__emu_glue::descs[k], __emu_glue::names[k], __emu_glue::fibers[k], "
            "grid, block, params, shmem, err, errlen);\n}"
        )
        reg.append(
            'extern "C" __attribute__((visibility("default"))) int aclnn_emu_kernel_info(int k, unsigned* n, '
            "const unsigned** sizes, const char** kinds) {\n"
            "    if (k < 0 || k >= __emu_glue::count) return 1;\n"
            "    *n = __emu_glue::descs[k].nparams; *sizes = __emu_glue::descs[k].sizes; *kinds = __emu_glue::descs[k].kinds;\n"
            "    return 0;\n}"
        )
        with open(ii, "w") as f:
            f.write("".join(pieces))
            f.write("\n".join(reg) + "\n")
        r = _run([cxx, *flags, "-shared", ii, "-o", tmp_so], "compilation")
        if r.returncode != 0:
            raise EmulatorError(f"g++ could not compile {fname} for the emulator:\n" + _explain(r.stderr[-30000:]))
        with open(tmp_meta, "w") as f:
            json.dump({"kernels": table, "version": _EMU_VERSION}, f)
        os.replace(tmp_meta, meta_path)
        os.replace(tmp_so, so_path)
        return table
    finally:
        for p in (tmp_base, src, ii, tmp_so, tmp_meta):
            try:
                os.unlink(p)
            except OSError:
                pass
