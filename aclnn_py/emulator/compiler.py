"""Compile CUDA C++ kernel sources with the host C++ compiler against the emulation header.

Pipeline of :func:`compile_module` (cache miss):

1. The glue source is ``#include "cuda_emu.h"`` (std headers, then the CUDA surface), the user's
   pre-includes, then the kernel source under ``#line 1 "<filename>"``.
2. ``g++ -E`` preprocesses it (include dirs: ours first, then the ``-I`` options except CUDA
   toolkit include dirs). In the preprocessed text of the user's own files:
   * ``extern __shared__ T name[];`` (now ``extern thread_local ...``) is rewritten to a reference
     to the per-block dynamic shared memory buffer;
   * ``__global__`` functions are found (the header spells ``__global__`` as a marker attribute);
   * warp-synchronous code written without ``__syncwarp`` gets convergence points: loop tests in
     warp code (_rewrite_warp_loops), statements around shared-memory exchanges
     (_rewrite_warp_statements);
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

import bisect
import ctypes
import fcntl
import functools
import hashlib
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import tempfile
import sys
import threading
import time
from typing import Sequence

from .ptx import rewrite_inline_asm as _rewrite_inline_asm   # inline PTX -> C++ (first in the rewrite chain)

__all__ = [
    "EmulatorError",
    "KernelError",
    "Module",
    "Function",
    "compile_log",
    "compile_module",
    "compiler_info",
    "cache_dir",
]

_EMU_VERSION = "aclnn-emu-10"   # bump when the loader's source rewriting changes (cache key)
_INCLUDE_DIR = pathlib.Path(__file__).resolve().parent / "include"
_BASE_FLAGS = (
    "-std=c++20",
    "-O3",  # -O2 leaves the kernels' small fixed loops (chunks, vector lanes, masks) rolled: 1.5-3x slower
    "-fPIC",
    "-pthread",
    "-fno-strict-aliasing",
    "-fno-math-errno",
    # CUDA has no floating-point traps. Under g++'s default -ftrapping-math an FP operation that could
    # trap may not run speculatively, so `x > 0 ? x : x * slope` stays a branch per element
    # (mispredicted half the time on signed data) instead of a select: Hardsigmoid 3.9 -> 0.15 ms,
    # LeakyRelu 2.2 -> 0.10 ms on 8x32x56x56. Results are the same bits (rounding, NaNs and signed
    # zeros are untouched: that would be -ffast-math / -ffinite-math-only).
    "-fno-trapping-math",
    # a*b+c rounded twice, as before, whatever the host ISA: with AVX-512 (which brings FMA) g++ would
    # otherwise contract where it sees fit, so a result would depend on the CPU. (The GPU contracts by
    # default, --fmad=true, in nvcc's places: the emulator matches a --fmad=false build; SUPPORT.md.)
    "-ffp-contract=off",
    # A CUDA thread's frame larger than a page (big local arrays: an unrolled WMMA tile loop needs
    # 128-160 KiB) moved the stack pointer past the fiber stack's guard page into the next fiber's
    # stack: another thread's locals were overwritten, then a wild "illegal memory write" was
    # reported. With the probes every page of a new frame is touched in order, so an overflow always
    # faults in the guard page and is reported as one (cost: a probe per page of large frames only).
    "-fstack-clash-protection",
    # Two operations C++ leaves undefined that a GPU defines: a float -> integer conversion the type
    # cannot hold (cvt.rzi saturates, NaN -> 0; x86 gives 0x80000000-style values) and a shift by a
    # negative count or by the operand's width or more (PTX shl/shr clamp the count: 1u << 32 is 0 on a
    # GPU, 1 on x86). Shifts the loader rewrites (_rewrite_shifts) get the GPU's result; a conversion,
    # and a shift left as written, become a check that traps (ud2, reported at the synchronize)
    # instead of a different number: found by running Rodinia's huffman and the CUDA SDK's
    # scanLargeArray (-DZERO_BANK_CONFLICTS), silently wrong before. No runtime library:
    # -fsanitize-undefined-trap-on-error needs none. Cost: a compare and a never-taken branch per
    # conversion from floating point and per shift left as written.
    # And an index out of a fixed-size array's bounds (a thread's local array, a static __shared__
    # one; -fsanitize=bounds): on a GPU the access lands in other locals or other shared variables
    # and the kernel runs on with other numbers (leimao's CUDA-GEMM-Optimization 06_* kernels index
    # their register tile `float a[1][8]` with a count meant for another dimension: silently wrong
    # here too before). Cost: a compare per index g++ cannot prove in range (BatchNorm kernels: none
    # measurable, kernel A/B).
    "-fsanitize=shift-exponent,float-cast-overflow,bounds",
    "-fsanitize-undefined-trap-on-error",
    "-fvisibility=hidden",
    "-fvisibility-inlines-hidden",
    "-U_FORTIFY_SOURCE",
    "-w",
)
_LINK_FLAGS = ("-Wl,--no-undefined",)
_DEFAULT_ARCH = 800
_MAX_BLOCK = (1024, 1024, 64)
_MAX_GRID = (2**31 - 1, 65535, 65535)
_MAX_DYN_SMEM = 232448

# Names whose use makes a kernel need fibers.
_SYNC_PRIMITIVES = frozenset(
    """__syncthreads __syncthreads_count __syncthreads_and __syncthreads_or __syncwarp
    __shfl_sync __shfl_up_sync __shfl_down_sync __shfl_xor_sync __ballot_sync __any_sync __all_sync __uni_sync
    __activemask __match_any_sync __match_all_sync __reduce_add_sync __reduce_min_sync
    __reduce_max_sync __reduce_and_sync __reduce_or_sync __reduce_xor_sync __nanosleep
    sync shfl shfl_up shfl_down shfl_xor ballot any all match_any match_all reduce inclusive_scan
    exclusive_scan coalesced_threads labeled_partition binary_partition wait wait_prior memcpy_async
    __emu_grid_sync __emu_tile_sync vptr vref vptr_cast spin_tick""".split()
)
# CUB's collectives (the emulator's include/cub/): a kernel that calls them reaches barriers and
# shuffles inside headers the scan does not read, so when a translation unit includes that CUB these
# class and member names count as sync primitives too (a kernel that names one runs on fibers; a
# user function of the same name only costs fibers, never a result).
_CUB_COLLECTIVES = frozenset(
    """BlockReduce WarpReduce BlockScan WarpScan BlockLoad BlockStore BlockExchange BlockRadixSort
    BlockHistogram BlockDiscontinuity TempStorage Sum Reduce Max Min InclusiveSum ExclusiveSum
    InclusiveScan ExclusiveScan Scan Broadcast HeadSegmentedSum TailSegmentedSum HeadSegmentedReduce
    TailSegmentedReduce Load Store StripedToBlocked BlockedToStriped WarpStripedToBlocked
    BlockedToWarpStriped ScatterToBlocked ScatterToStriped ScatterToStripedGuarded
    ScatterToStripedFlagged Sort SortDescending SortBlockedToStriped SortDescendingBlockedToStriped
    Histogram Composite InitHistogram FlagHeads FlagTails FlagHeadsAndTails ShuffleUp ShuffleDown
    ShuffleIndex CTA_SYNC WARP_SYNC WARP_BALLOT WARP_ANY WARP_ALL""".split()
)
_CUB_INCLUDED_RE = re.compile(r'^# \d+ "' + re.escape(str(_INCLUDE_DIR)) + r'/cub/', re.M)
_LOCKSTEP_TYPES = frozenset(("vptr", "vref"))   # the rewritten volatile pointers, see _rewrite_volatile
# What marks code written for a warp (see _rewrite_warp_loops): warp collectives, tiles, volatile
# lockstep pointers. Block-level barriers are not in it.
_WARP_PRIMITIVES = frozenset(
    """__syncwarp __shfl_sync __shfl_up_sync __shfl_down_sync __shfl_xor_sync __shfl __shfl_up __shfl_down
    __shfl_xor __ballot_sync __ballot __any_sync __all_sync __uni_sync __any __all __activemask __match_any_sync
    __match_all_sync __reduce_add_sync __reduce_min_sync __reduce_max_sync __reduce_and_sync __reduce_or_sync
    __reduce_xor_sync shfl shfl_up shfl_down shfl_xor ballot any all match_any match_all reduce inclusive_scan
    exclusive_scan coalesced_threads labeled_partition binary_partition tiled_partition thread_block_tile
    __emu_tile_sync vptr vref vptr_cast""".split()
)
# A translation unit that declares this name synchronises its warps explicitly (kernels/ does): its
# loops get no convergence points.
_EXPLICIT_WARP_SYNC = "__emu_explicit_warp_sync"
_KEYWORDS = frozenset(
    """if for while switch catch return sizeof alignof decltype typeid static_assert noexcept throw
    __attribute__ alignas __align__ __launch_bounds__ __maxnreg__ __cluster_dims__ do else case new delete constexpr consteval
    requires co_await co_return co_yield""".split()
)


# What cuda_emu.h expands __forceinline__ to (inlined as CUDA asks: -O3 alone leaves small helpers
# such as 16-byte vector loads as calls, and their stack arrays then stall on store forwarding).
_FORCEINLINE = "__inline__ __attribute__((always_inline))"


class EmulatorError(RuntimeError):
    """The emulator could not build a module (the message carries the compiler log)."""


class CompileException(EmulatorError):
    """A kernel source did not compile for the emulator: like ``cupy.cuda.compiler.CompileException``.

    ``str(e)`` and ``e.get_message()`` carry the compiler log (file:line of the user's source),
    ``e.source``, ``e.name`` and ``e.options`` what was compiled; ``e.dump(f)`` writes both.
    """

    def __init__(self, msg: str, source: str = "", name: str = "", options=(), backend: str = "emulator"):
        super().__init__(msg)
        self._msg = msg
        self.source = source
        self.name = name
        self.options = tuple(options)
        self.backend = backend

    @property
    def log(self) -> str:
        return self._msg

    def get_message(self) -> str:
        return self._msg

    def dump(self, f) -> None:
        lines = self.source.splitlines()
        width = len(str(len(lines)))
        f.write("==========\n")
        f.write(f"{self.name} ({self.backend}) options: {' '.join(self.options)}\n")
        for i, line in enumerate(lines, 1):
            f.write(f"{i:>{width}} {line}\n")
        f.write("==========\n")
        f.write(self._msg + "\n")


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


def _target_flags(cxx: str) -> tuple[str, ...]:
    """x86-64 with GCC. TLS descriptors: threadIdx/blockIdx & co. are thread-locals of a dlopen'd
    module; the default (global-dynamic) model calls __tls_get_addr on every access, a descriptor
    resolves to a constant offset (measured 1.8x on a one-element-per-thread elementwise kernel).
    Then the host's vector ISA (the module is built on, and cached for, the machine that runs it):
    F16C converts half <-> float in hardware; AVX2 + AVX-512 (F/VL/BW) let g++ vectorise a block's
    plain loop across CUDA threads with the kernel's bounds check `if (i < n)` as a masked store
    (AVX's vmaskmovps store is microcoded on AMD: axpy one element per thread 8-11 -> 41-47 GB/s).
    Results are the same bits: no contraction (-ffp-contract=off), no fast-math."""
    import platform
    if platform.machine() in ("x86_64", "AMD64") and "g++" in os.path.basename(cxx) and "clang" not in cxx:
        isa = ["-mtls-dialect=gnu2"]
        if _cpu_has("f16c"):
            isa.append("-mf16c")
        if _cpu_has("avx2"):
            isa.append("-mavx2")
            if all(_cpu_has(f) for f in ("avx512f", "avx512vl", "avx512bw")):
                isa += ["-mavx512f", "-mavx512vl", "-mavx512bw"]
        return tuple(isa)
    return ()


def _cpu_has(flag: str) -> bool:
    """Whether /proc/cpuinfo lists ``flag``. $ACLNN_PY_EMU_NO_F16C=1 turns F16C off (the software
    conversions: the same bits for every non-NaN value; NaNs always take the software path), and
    $ACLNN_PY_EMU_NO_AVX=1 every vector extension beyond the x86-64 baseline (F16C included)."""
    off = lambda var: os.environ.get(var, "") not in ("", "0")  # noqa: E731
    if off("ACLNN_PY_EMU_NO_AVX") or (flag == "f16c" and off("ACLNN_PY_EMU_NO_F16C")):
        return False
    return flag in _cpu_flags()


@functools.lru_cache(maxsize=1)
def _cpu_flags() -> frozenset[str]:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


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
        h.update((pathlib.Path(__file__).parent / "ptx.py").read_bytes())  # the inline-PTX translation
        for p in sorted(_INCLUDE_DIR.rglob("*")):
            if p.is_file():
                h.update(str(p.relative_to(_INCLUDE_DIR)).encode() + b"\0" + p.read_bytes() + b"\0")
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


def _arch_from_options(options: Sequence[str]) -> int:
    """``-arch=sm_86`` / ``--gpu-architecture=compute_90`` / ``-arch sm_75`` -> 860 / 900 / 750 (default 800)."""
    opts = [str(o) for o in options]
    arch = None
    for i, o in enumerate(opts):
        v = None
        for flag in ("-arch", "--gpu-architecture", "-gencode"):
            if o == flag and i + 1 < len(opts):
                v = opts[i + 1]
            elif o.startswith(flag + "="):
                v = o.split("=", 1)[1]
        if v:
            m = re.search(r"(?:sm|compute|lto)_(\d+)", v)
            if m:
                arch = int(m.group(1))
    if arch is None:
        return _DEFAULT_ARCH
    return arch * 10 if arch < 1000 else arch


def _cupy_include_dir() -> str | None:
    """CuPy's own headers (``<cupy/complex.cuh>``...), which CuPy puts on NVRTC's path, if CuPy is installed."""
    try:
        import importlib.util
        spec = importlib.util.find_spec("cupy")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    d = os.path.join(os.path.dirname(spec.origin), "_core", "include")
    return d if os.path.isdir(os.path.join(d, "cupy")) else None


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
_ATTR_RE = re.compile(r"\b(?:__attribute__|alignas|__declspec)\s*" + _PAREN)
_UNSIZED_END_RE = re.compile(r"\[\s*\]((?:\s*\[[^\[\];{}]*\])*)\s*;")   # name[] or name[][N]...;
_DECL_NAME_RE = re.compile(r"([A-Za-z_]\w*)\s*$")


_SHARED_ALIGNAS_RE = re.compile(r"\b((?:static\s+)?)thread_local(\s+)((?:__attribute__\s*" + _PAREN + r"\s*)*)"
                                r"((?:alignas\s*" + _PAREN + r"\s*)+)")


def _rewrite_shared_alignas(text: str) -> str:
    """``__shared__ alignas(16) T x[N];`` (nvcc accepts it; cuda-samples' globalToShmemAsyncCopy) reads
    ``thread_local __attribute__((aligned(16))) alignas(16) ...`` after preprocessing, which g++ rejects
    ("standard attributes in middle of decl-specifiers"): the alignas moves in front, where it means
    the same."""
    return _SHARED_ALIGNAS_RE.sub(
        lambda m: f"{m.group(4).rstrip()}{m.group(2)}{m.group(1)}thread_local {m.group(3)}", text)


def _rewrite_extern_shared(text: str) -> str:
    """``extern __shared__ T name[];`` in any spelling (``extern T __shared__ name[]``,
    ``__shared__ extern ...``, with alignment attributes, or multi-dimensional ``name[][N]``, as
    cuda-samples' cudaTensorCoreGemm declares it) becomes a reference to the block's dynamic shared
    memory. After preprocessing ``__shared__`` reads ``thread_local``."""
    out = []
    last = 0
    for m in _UNSIZED_END_RE.finditer(text):
        start = max(text.rfind(c, 0, m.start()) for c in ";{}") + 1
        if start < last:
            continue
        stmt = text[start:m.start()]
        # drop line markers / blank lines at the front, keep the newlines for line numbers
        body_lines = stmt.split("\n")
        lead = 0
        while lead < len(body_lines) - 1 and (not body_lines[lead].strip() or body_lines[lead].lstrip().startswith("#")):
            lead += 1
        decl = "\n".join(body_lines[lead:])
        words = set(re.findall(r"[A-Za-z_]\w*", _ATTR_RE.sub(" ", decl)))
        if "extern" not in words or "thread_local" not in words:
            continue
        nm = _DECL_NAME_RE.search(decl)
        if not nm:
            continue
        name = nm.group(1)
        typ = _ATTR_RE.sub(" ", decl[: nm.start()])
        typ = re.sub(r"\b(?:extern|thread_local|static)\b", " ", typ)
        typ = " ".join(typ.split())
        if not typ:
            continue
        nl = "\n" * (decl.count("\n") + m.group(0).count("\n"))
        prefix = "\n".join(body_lines[:lead]) + ("\n" if lead else "")
        out.append(text[last:start])
        dims = " ".join(m.group(1).split())   # the inner extents of a multi-dimensional one
        out.append(f"{prefix}static thread_local {typ} (&{name})[]{dims} = ::__emu::dyn_smem<decltype({name})>();{nl}")
        last = m.end()
    out.append(text[last:])
    return "".join(out)


# Volatile pointers in user code become ::__emu::vptr<T> (see cuda_emu.h, "implicit warp-synchronous
# code"): each access is a lockstep point of the warp, so `volatile T* s; s[tid] += s[tid + 16];`
# gives what a converged warp gives instead of one lane's view.
_NOT_TYPE = r"(?!(?:static|extern|thread_local|inline|return|register|typedef|constexpr|template|typename|" \
            r"volatile|const|__attribute__|else|case|do|goto|new|delete|sizeof)\b)"
_TNAME = _NOT_TYPE + r"(?:::\s*)?[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*(?:\s*<[^<>;{}()]*>)?"
_TYPE = rf"{_TNAME}(?:\s+{_TNAME})*?"
_VOLATILE_RES = (
    # reinterpret_cast<volatile T*>(x), reinterpret_cast<T volatile*>(x)
    (re.compile(rf"\breinterpret_cast\s*<\s*(?P<c>const\s+)?volatile\s+(?P<t>{_TYPE})\s*\*\s*>"), "::__emu::vptr_cast<{t}>"),
    (re.compile(rf"\breinterpret_cast\s*<\s*(?P<c>const\s+)?(?P<t>{_TYPE})\s+volatile\s*\*\s*>"), "::__emu::vptr_cast<{t}>"),
    # [const] volatile T *  /  [const] T volatile *
    (re.compile(rf"(?P<c>\bconst\s+)?\bvolatile\s+(?P<c2>const\s+)?(?P<t>{_TYPE})\s*\*(?!\s*volatile)"), "::__emu::vptr<{t}> "),
    (re.compile(rf"(?<![\w>])(?P<c>const\s+)?(?P<t>{_TYPE})\s+volatile\s*\*"), "::__emu::vptr<{t}> "),
    # volatile T & (a reference to a volatile element: a proxy by value)
    (re.compile(rf"(?P<c>\bconst\s+)?\bvolatile\s+(?P<c2>const\s+)?(?P<t>{_TYPE})\s*&(?!&)"), "::__emu::vref<{t}> "),
)


# CUDA's `#pragma unroll [N]` (g++ ignores it as an unknown pragma). Without a count nvcc unrolls a
# loop of constant trip count completely; g++ is told to unroll up to 16 (the small fixed loops of
# kernels: vector lanes, chunks, masks; left rolled they keep their arrays on the stack, where a
# 16-byte vector built from 4-byte stores stalls on store forwarding). A literal count is passed on;
# any other count expression is left to g++'s own judgement.
# Only a pragma whose next statement is a loop is rewritten: g++ rejects `#pragma GCC unroll` before
# anything else, where nvcc only warns.
_UNROLL_RE = re.compile(r"^([ \t]*)#[ \t]*pragma[ \t]+unroll\b[ \t]*(\S*)[ \t]*$", re.M)
_UNROLL_NEXT_RE = re.compile(r'(?:[ \t]*(?:#[ \t]*\d+[ \t]+"[^"\n]*"[^\n]*)?\n)*[ \t]*(?:for|while|do)\b')
_UNROLL_DEFAULT = 16


def _rewrite_unroll(text: str) -> str:
    if "unroll" not in text:
        return text

    def repl(m: re.Match) -> str:
        count = m.group(2)
        if not _UNROLL_NEXT_RE.match(text, m.end() + 1):
            return m.group(0)
        if not count:
            return f"{m.group(1)}#pragma GCC unroll {_UNROLL_DEFAULT}"
        if count.isdigit() and int(count) < 65535:
            return f"{m.group(1)}#pragma GCC unroll {int(count)}"
        return m.group(0)
    return _UNROLL_RE.sub(repl, text)


_LITERAL_RE = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')


def _rewrite_volatile(text: str) -> str:
    """Rewrite volatile pointers / references in user code to the emulator's lockstep proxies (a
    function that takes or uses one needs fibers: vptr / vref are sync primitives for the scan).
    String and character literals are left alone; newlines are kept."""
    if "volatile" not in text:
        return text

    def code(part: str) -> str:
        for rx, repl in _VOLATILE_RES:
            def sub(m, repl=repl):
                t = " ".join(m.group("t").split())
                if m.group("c") or (m.groupdict().get("c2")):
                    t = "const " + t
                return repl.format(t=t) + "\n" * m.group(0).count("\n")
            part = rx.sub(sub, part)
        return part
    out, last = [], 0
    for m in _LITERAL_RE.finditer(text):
        out.append(code(text[last:m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(code(text[last:]))
    return "".join(out)


_ASSIGN_BEFORE = frozenset("=!<>+-*/%&|^")


def _declares(cond: list[str]) -> bool:
    """Whether a loop condition's tokens declare a variable (`T* const p = f()`, `decltype(j) x = j`,
    `[[maybe_unused]] int x{...}`): its first top-level `=` (not `==`, `<=`, `+=`...) or `{` follows a
    name that follows a type-ish token. When in doubt, yes: the loop then just gets no tick."""
    depth = 0
    for j, t in enumerate(cond):
        if t in ("(", "["):
            depth += 1
        elif t in (")", "]"):
            depth -= 1
        elif depth == 0 and (t == "{" or (t == "=" and (j + 1 >= len(cond) or cond[j + 1] != "=")
                                           and (j == 0 or cond[j - 1] not in _ASSIGN_BEFORE))):
            name = cond[j - 1] if j >= 1 else ""
            before = cond[j - 2] if j >= 2 else ""
            ident = lambda x: bool(x) and (x[0].isalpha() or x[0] == "_")  # noqa: E731
            return ident(name) and (ident(before) or before in ("*", "&", ")", ">", "]"))
    return False


_SPIN_POLL_RE = re.compile(r"\batomic[A-Z]\w*\s*\(")   # atomicAdd(, atomicCAS(, atomicExch_system( ...
# Names the user declared volatile, after _rewrite_volatile: its lockstep pointers / references, and
# volatile objects (`volatile __device__ int count;`, `__shared__ volatile int flag;`), which it leaves.
_VOLATILE_NAME_RES = (
    re.compile(r"::__emu::v(?:ptr|ref)\s*<(?:[^<>;{}]|<[^<>;{}]*>)*>\s*(?:const\s+)?([A-Za-z_]\w*)"),
    re.compile(r"\bvolatile\b[^;{}()=]*?\b([A-Za-z_]\w*)\s*(?=[=;\[,])"),
)


def _loop_condition(words: list[str], toks: list[tuple[str, int, int]], k: int, close: int):
    """(start, end) character offsets of the condition of the loop at token k (`while` or `for`, its
    header closing at token `close`); None for a range-for."""
    if words[k] == "while":
        return toks[k + 1][2], toks[close][1]
    semis = []
    depth = 0
    for j in range(k + 2, close):
        depth += words[j] in ("(", "[", "{")
        depth -= words[j] in (")", "]", "}")
        if words[j] == ";" and depth == 0:
            semis.append(j)
    return (toks[semis[0]][2], toks[semis[1]][1]) if len(semis) == 2 else None


_FENCES = frozenset(("__threadfence", "__threadfence_block", "__threadfence_system", "(", ")", ";"))


def _idle_body(words: list[str], j: int) -> bool:
    """The loop body at token j does nothing but wait: `;`, `{}` or fences only. A loop that works in
    its body (`while ((i = atomicAdd(&next, 1)) < n) { ... }` takes work items) is not a spin-wait."""
    if j >= len(words):
        return False
    if words[j] == ";":
        return True
    if words[j] != "{":
        return False
    end = _match_fwd(words, j, "{", "}")
    return end > 0 and _FENCES.issuperset(words[j + 1:end])


def _rewrite_spin_loops(text: str) -> str:
    """A loop whose condition polls memory with an atomic or through a volatile name and whose body does
    nothing (``while (atomicCAS(lock, 0, 1) != 0);``, ``while (atomicAdd(flag, 0) == 0) {}``,
    ``while (count < n) ;`` with ``volatile __device__ int count``: Parboil bfs's grid barrier) waits for another
    thread, which a GPU runs meanwhile. Here
    a thread spinning in a plain loop would wait forever for a thread that runs after it: each poll
    that finds the wait not over (``(cond) && ::__emu::spin_tick()``) lets the rest of the block run
    first, and a wait nothing can end is reported as a livelock. The call also makes the function run
    on fibers (``spin_tick`` is a sync primitive for the scan). Newlines are kept."""
    toks = [(m.group(0), m.start(), m.end()) for m in _TOKEN_RE.finditer(text)]
    words = [t for t, _, _ in toks]
    volatile_names = {m.group(1) for rx in _VOLATILE_NAME_RES for m in rx.finditer(text)}
    edits: list[tuple[int, str]] = []
    for k, w in enumerate(words):
        if w not in ("while", "for") or k + 1 >= len(words) or words[k + 1] != "(":
            continue
        close = _match_fwd(words, k + 1, "(", ")")
        if close < 0:
            continue
        span = _loop_condition(words, toks, k, close)
        if span is None:
            continue  # range-for
        lo, hi = span
        cond = text[lo:hi]
        o = _match_back(words, k - 1, "{", "}") if w == "while" and k > 0 and words[k - 1] == "}" else -1
        body = o if o > 0 and words[o - 1] == "do" else close + 1     # do { ... } while (cond);
        polls = _SPIN_POLL_RE.search(cond) or not volatile_names.isdisjoint(_tokens(cond))
        if not polls or _declares(_tokens(cond)) or not _idle_body(words, body):
            continue
        edits.append((lo, " ("))
        edits.append((hi, ") && ::__emu::spin_tick() "))
    return _apply_edits(text, edits)


# ---- shifts with a GPU's result for any count ------------------------------------------------------
# C++ leaves `x << n` and `x >> n` undefined for n < 0 or n >= the width of x's promoted type; PTX
# shl/shr clamp the count, so a GPU gives 0 (or, for >> of a negative value, -1), where x86 takes the
# count mod 32 (or 64): `1 << tid` in cuda-samples' simpleAtomicIntrinsics (tid up to 255), Rodinia
# huffman's `(1 << bits) - 1` with bits = 32. The loader rewrites each shift whose operands it can
# delimit for certain into ::__emu::shl / shr (emu_shifts.h: the GPU's result, branch-free); a shift
# it cannot (next to a `<` or `>` that may be a template bracket, a chain `a << b << c`) stays as
# written, and the -fsanitize=shift-exponent check reports it if its count is out of range. A count
# that is an integer literal below 32 stays as written (always in range). If the rewritten module
# does not compile, it is built again without this rewrite (see _compile).
_MULTI_OPS = ("<<=", ">>=", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=", "*=", "/=", "%=",
              "&=", "|=", "^=", "++", "--", "->", "::")
_ASSIGN_OPS = frozenset(("=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="))
# tokens that end a shift's operand for certain (lower precedence, or a bracket / statement boundary)
_SHIFT_BOUNDS = frozenset(("(", "[", "{", ")", "]", "}", ";", ",", "?", ":", "==", "!=", "<=", ">=", "&&",
                           "||", "|", "^", "return", "case", "throw", "else", "do")) | _ASSIGN_OPS
_CLOSING = {"(": ")", "[": "]", "{": "}"}
_SHIFT_AMBIGUOUS = frozenset(("<", ">", "<<", ">>", "operator", "template", "#", "\\"))


def _op_tokens(text: str) -> list[tuple[str, int, int]]:
    """(token, start, end) with adjacent punctuation merged into C++'s multi-character operators."""
    raw = [(m.group(0), m.start(), m.end()) for m in _TOKEN_RE.finditer(text)]
    out: list[tuple[str, int, int]] = []
    i = 0
    while i < len(raw):
        t, a, b = raw[i]
        for op in _MULTI_OPS:
            n = len(op)
            if op[0] == t[0] and i + n <= len(raw) and all(
                    raw[i + j][0] == op[j] and (j == 0 or raw[i + j][1] == raw[i + j - 1][2]) for j in range(n)):
                out.append((op, a, raw[i + n - 1][2]))
                i += n
                break
        else:
            out.append((t, a, b))
            i += 1
    return out


def _operand_end(t: str) -> bool:
    return t in (")", "]") or t[0].isalnum() or t[0] in "_.'\"" and t not in _SHIFT_BOUNDS


def _template_closers(toks) -> set[int]:
    """Indices of the `>>` tokens that may close two template argument lists (`Foo<Bar<int>> x;`):
    at least two `<` not yet closed before them in the statement, at the same bracket depth (`<` of a
    comparison counts too: such a `>>` is then left alone, never misread)."""
    out: set[int] = set()
    opens = [0]
    for i, (t, _, _) in enumerate(toks):
        if t in ("(", "["):
            opens.append(0)
        elif t in (")", "]"):
            if len(opens) > 1:
                opens.pop()
        elif t in (";", "{", "}"):
            opens = [0]
        elif t == "<":
            opens[-1] += 1
        elif t == ">":
            opens[-1] = max(0, opens[-1] - 1)
        elif t == ">>":
            if opens[-1] >= 2:
                out.add(i)
            opens[-1] = max(0, opens[-1] - 2)
    return out


def _shift_left(toks, words: list[str], k: int, closers: set[int]):
    """Index of the first token of the left operand of the shift at k, or None if not certain."""
    j = k - 1
    while j >= 0:
        if j in closers:
            return None
        t = toks[j][0]
        if t in (")", "]"):
            j = _match_back(words, j, "(" if t == ")" else "[", t) - 1
            if j < -1:
                return None
            continue
        if t == "&":   # binary & (after an operand) binds looser than a shift: the operand starts after it
            if j > 0 and _operand_end(toks[j - 1][0]):
                break
            j -= 1
            continue
        if t in _SHIFT_BOUNDS or t == "<":   # a relational `<` and a template's `<` both end it
            break
        if t in ("<<", ">>"):   # a << b << c is (a << b) << c: the left operand runs on
            j -= 1
            continue
        if t in _SHIFT_AMBIGUOUS or t in ("{", "}"):   # `>`: a relational one ends it, a template's does not
            return None
        j -= 1
    first = j + 1
    return first if first < k else None


def _shift_right(toks, words: list[str], k: int):
    """Index one past the last token of the right operand of the shift at k, or None if not certain."""
    j = k + 1
    n = len(toks)
    while j < n:
        t = toks[j][0]
        if t in ("(", "[", "{"):
            j = _match_fwd(words, j, t, _CLOSING[t])
            if j < 0:
                return None
            j += 1
            continue
        if t == "&" and j > k + 1 and _operand_end(toks[j - 1][0]):
            break
        if t in _SHIFT_BOUNDS or t in ("<<", ">>", ">"):   # (a << b << c is (a << b) << c; a relational
            break                                            # `>` and a template's closing one both end it)
        if t in _SHIFT_AMBIGUOUS:   # `<`: a relational one ends it, a template's does not
            return None
        j += 1
    return j if j > k + 1 else None


def _small_literal(tok: str) -> bool:
    """An integer literal below 32 (a shift count in range for every type)."""
    m = re.fullmatch(r"(0[xX][0-9a-fA-F']+|0[bB][01']+|0[0-7']*|[1-9][0-9']*)[uUlLzZ]*", tok)
    if not m:
        return False
    d = m.group(1).replace("'", "")
    v = int(d, 16) if d[:2] in ("0x", "0X") else int(d[2:], 2) if d[:2] in ("0b", "0B") else int(d, 8) if d[0] == "0" else int(d)
    return v < 32


def _rewrite_shifts(text: str) -> str:
    """``a << b`` -> ``::__emu::shl(a, b)`` (and ``>>``, ``<<=``, ``>>=``) where the operands are certain;
    see the comment above. String literals are tokens of their own; newlines are kept."""
    if "<<" not in text and ">>" not in text:
        return text
    toks = _op_tokens(text)
    words = [t for t, _, _ in toks]
    closers = _template_closers(toks)
    edits: list[tuple] = []
    taken: list[tuple[int, int]] = []
    for k, (t, a, b) in enumerate(toks):
        if t not in ("<<", ">>", "<<=", ">>=") or k in closers:
            continue
        if k == 0 or k + 1 >= len(toks) or not _operand_end(toks[k - 1][0]) or toks[k + 1][0] in (">", "<"):
            continue
        name = "shl" if t[:2] == "<<" else "shr"
        if t in ("<<", ">>"):
            lo, hi = _shift_left(toks, words, k, closers), _shift_right(toks, words, k)
            if lo is None or hi is None:
                continue
            if hi == k + 2 and _small_literal(toks[k + 1][0]):
                continue   # a literal count below 32: in range for every type
            fn = f"::__emu::{name}("
        else:
            # `lvalue <<= count`: the lvalue is names, members and subscripts after a statement or
            # header boundary; the count runs to the end of the assignment expression
            lo = k - 1
            while lo >= 0:
                u = toks[lo][0]
                if u in ("]",):
                    lo = _match_back(words, lo, "[", "]") - 1
                    continue
                if u[0].isalpha() or u[0] == "_" or u in (".", "->", "::"):
                    lo -= 1
                    continue
                break
            if lo >= 0 and toks[lo][0] not in (";", "{", "}", "(", ",", ")", ":", "else", "do"):
                continue
            lo += 1
            hi = k + 1
            while hi < len(toks) and toks[hi][0] not in (";", ",", ")", "]", "}"):
                if toks[hi][0] in ("(", "[", "{"):
                    hi = _match_fwd(words, hi, toks[hi][0], _CLOSING[toks[hi][0]])
                    if hi < 0:
                        break
                hi += 1
            if hi < 0 or hi == k + 1 or lo >= k:
                continue
            fn = f"::__emu::{name}_assign("
        start, end = toks[lo][1], toks[hi - 1][2]
        # operands of different shifts may nest (a << (b << c)) but never overlap partially
        if any(s < start < e < end or start < s < end < e for s, e in taken):
            continue
        taken.append((start, end))
        # (position, order among insertions there, replaced end, text): at one position closing
        # parentheses come first (inner ones first), then openings, the outer shift's first
        edits += [(start, (1, -end), start, fn), (a, (2, 0), b, ","), (end, (0, -start), end, ")")]
    if not edits:
        return text
    out, last = [], 0
    for s, _, e, ins in sorted(edits):
        out.append(text[last:s])
        out.append(ins)
        last = max(last, e)
    out.append(text[last:])
    return "".join(out)


def _apply_edits(text: str, edits: list[tuple[int, str]]) -> str:
    """``text`` with each ``(offset, insertion)`` inserted at its offset."""
    out, last = [], 0
    for pos, ins in sorted(edits, key=lambda e: e[0]):
        out.append(text[last:pos])
        out.append(ins)
        last = pos
    out.append(text[last:])
    return "".join(out)


def _rewrite_warp_loops(text: str, warp_funcs: set[str]) -> str:
    """Convergence points for code written for a warp. A GPU runs a warp's lanes together, so lanes
    that store to memory and then read each other's slots without a __syncwarp (a data race under
    CUDA's memory model since Volta, but what a converged warp gets right, and real kernels do it:
    llm.c's attention_forward_fused1) see each other's stores; the emulator runs one lane after the
    other between collectives and would silently read stale memory. So in every function that uses
    warp-level primitives (directly or through its callees), each loop's condition first lets the
    other runnable lanes of the warp run up to their own next loop test (::__emu::loop_tick, round
    robin in lane order): lanes advance iteration by iteration, as a converged warp does. A loop
    whose body reaches a warp collective itself needs none (the collective gathers the lanes), nor
    does a range-for or a condition that declares a variable. Newlines are kept."""
    # (blank segments left out: the first, before the emulator's forced includes, would otherwise stretch
    # the scan over every header: 1 s of a 2.7 s compile)
    segs = [(a, b) for a, b in _user_segments(text) if text[a:b].strip()]
    if not segs:
        return text
    # One scan from the first user line to the last: g++ -E splits a function body wherever a macro
    # from a system header expands (INFINITY), so the user segments alone do not hold whole bodies.
    # Loops are edited only where they are the user's own text.
    base, stop = segs[0][0], segs[-1][1]
    region = text[base:stop]
    toks = [(m.group(0), m.start(), m.end()) for m in _TOKEN_RE.finditer(region)]
    scan = _Scan(region)
    words = [t for t, _, _ in toks]
    if words != scan.toks:  # the same tokenizer: cannot differ; be safe rather than misplace an edit
        return text
    starts = [a - base for a, _ in segs]
    ends = [b - base for _, b in segs]

    def user(pos: int) -> bool:
        i = bisect.bisect_right(starts, pos) - 1
        return i >= 0 and pos < ends[i]
    loops: set[int] = set()
    for name, a, b in scan.funcs:
        if name in warp_funcs:
            loops.update(k for k in range(a + 1, b)
                         if words[k] in ("for", "while") and words[k + 1] == "(" and user(toks[k][1]))
    # the `if`s of functions with volatile warp code (lockstep accesses): lanes reconverge where one ends
    ifs: set[int] = set()
    for name, a, b in scan.funcs:
        if name in warp_funcs and not _LOCKSTEP_TYPES.isdisjoint(words[scan._boundary(a):b]):
            ifs.update(k for k in range(a + 1, b) if words[k] == "if" and user(toks[k][1]))
    edits: list[tuple[int, str]] = []
    for k in sorted(loops):
        close = _match_fwd(words, k + 1, "(", ")")
        if close < 0:
            continue
        # the body: after the header, or (do ... while) the block before it
        o = _match_back(words, k - 1, "{", "}") if words[k] == "while" and words[k - 1] == "}" else -1
        if o > 0 and words[o - 1] == "do":
            body = words[o:k]
        elif close + 1 < len(words) and words[close + 1] == "{":
            end = _match_fwd(words, close + 1, "{", "}")
            body = words[close + 1:end if end > 0 else len(words)]
        else:
            end = close + 1
            depth = 0
            while end < len(words) and not (words[end] == ";" and depth == 0):
                depth += words[end] in ("(", "[", "{")
                depth -= words[end] in (")", "]", "}")
                end += 1
            body = words[close + 1:end]
        if not _WARP_PRIMITIVES.isdisjoint(body):
            continue
        span = _loop_condition(words, toks, k, close)
        if span is None:
            continue  # range-for
        lo, hi = span
        cond = region[lo:hi]
        if not cond.strip():
            edits.append((lo, " ::__emu::loop_tick() "))
        elif not _declares(_tokens(cond)):
            # numbered (the loop's token index + 1): a lane that leaves it waits for the lanes still
            # in it, as a warp reconverges after a divergent loop (cuda_emu.h, loop_exit)
            edits.append((lo, f" (::__emu::loop_tick({k + 1}u) && ("))
            edits.append((hi, f") || ::__emu::loop_exit({k + 1}u))"))
    # (position, 0 for an insertion after a token / 1 before one, order, text): at one position the
    # closings come first, an inner `if`'s before an outer one's, and the openings outer first
    ordered: list[tuple[int, int, int, str]] = [(pos, 1, 0, ins) for pos, ins in edits]
    n_w = len(words)
    for k in sorted(ifs):
        end = _stmt_end(words, k, n_w)   # (with its else; -1 when it cannot be delimited for certain)
        if end < 0 or not (user(toks[k][1]) and user(toks[end][1])):
            continue
        # the guard covers the condition too: a lane still evaluating it is in the `if`
        ordered.append((toks[k][1], 1, k, f"{{ {{ ::__emu::branch_guard __emu_bg({k + 1}u); "))
        ordered.append((toks[end][2], 0, -k, f" }} ::__emu::branch_leave({k + 1}u); }}"))
    if not ordered:
        return text
    out, last = [], 0
    for pos, _, _, ins in sorted(ordered, key=lambda e: e[:3]):
        out.append(region[last:pos])
        out.append(ins)
        last = pos
    out.append(region[last:])
    return text[:base] + "".join(out) + text[stop:]


# ---- statement convergence points (straight-line warp-synchronous code) ----------------------------
# A converged warp runs each statement for all its lanes before the next: `if (tid < 32) { s[tid] +=
# s[tid + 32]; s[tid] += s[tid + 16]; ... }` (the unrolled reduction tail without volatile), Parboil
# histo_prescan's SUM(16) ... SUM(2), `s[lane] = v; w = s[lane ^ 1];` with no __syncwarp. A race under
# CUDA's memory model since Volta, but a GPU gets it right and real kernels do it; here one lane ran
# its whole chain before the next began: another number, silently (histo_prescan: 0.11x the mean).
# So where a thread may store to shared memory in one statement what another loads in a later one, or
# load in one a slot many threads read (or a lower thread's) that another stores to in a later one
# (PMPP's merge_tiled_kernel without its second __syncthreads), with no barrier or collective
# between, the loader puts a convergence point, ::__emu::stmt_tick(n), between them: after the first,
# or first in the body of the second when it is a guarded `if` (then only the threads that enter it
# pass the point). At a point a thread lets every runnable thread of its block that is behind it run
# first (cuda_emu.h), so the block goes through such code statement by statement, in thread order. A
# statement that loads a slot of the array it stores to, other than its own or a higher one
# (`s[t] += s[t - 1]`, `s[t] = s[t ^ 1]`), is split into its loads, a point, and its store, since a
# GPU does every lane's loads before any lane's store (thread order is right for `s[t] += s[t + k]`
# where the stored slot's subscript grows with the thread index; not `s[31 - lane] += s[31 - lane + 1]`).
# Shared memory: names declared __shared__ (static or extern; a lambda sees its function's), local
# pointers initialised from them, and pointer parameters of user functions some call passes them to.
# Two statements need no point when they touch only the thread's own slot, row or column (the same
# subscript naming threadIdx or a variable computed from it, unchanged between them), only read, or
# only use atomics; nor do accesses that both go through pointers or helpers the array is passed to
# (no subscript to compare; two calls of a lambda that names the array are a pair). Code inside a loop
# that itself reaches a barrier or a collective, or strides by the block, is block-synchronous: its
# statements are paired within an iteration, not around the loop. Global memory (other pointer
# parameters) is looked at in straight-line code only, for a store and a later load of another lane's
# slot (see hazard). A region only one thread runs (`if (tid == 0)`) needs none inside. A switch
# body is a statement list whose case labels are labels; one that cannot be delimited for certain
# (try, asm) is left as written. Any point is a schedule a GPU may run: it cannot make a correct
# kernel wrong; it costs a context switch per thread that passes it, and the function runs on fibers.
_DIRECTIVE_LINE_RE = re.compile(r"^[ \t]*#[^\n]*", re.M)
_STMT_COVER_EXCLUDE = frozenset(("vptr", "vref", "vptr_cast", "spin_tick"))   # not convergence points
_COMPOUND_ASSIGN = frozenset("+-*/%&|^")
_STMT_OPENERS = frozenset(("(", "[", "{"))
_STMT_CLOSERS = frozenset((")", "]", "}"))
_NOT_STMT = frozenset(("try", "catch", "asm", "__asm__", "__asm", "co_return", "co_yield", "co_await"))
_ATTR_WORDS = frozenset(("__attribute__", "alignas", "__align__", "__declspec", "__launch_bounds__", "__maxnreg__",
                         "__cluster_dims__"))
_NOT_CALLS = _KEYWORDS | frozenset(("__emu", "static_cast", "reinterpret_cast", "const_cast", "dynamic_cast"))
_TID_WORDS = frozenset(("thread_rank", "laneid", "lane_id", "thread_index"))   # cg / helpers: a thread's own
_R, _W, _A = 1, 2, 4          # an access loads, stores, or is an atomic read-modify-write
_TICK = "\0T"                 # a point's number, given in text order once all edits are known
_STMT_REACH = 48              # how many later statements a statement is paired with


def _ident(t: str) -> bool:
    return bool(t) and (t[0].isalpha() or t[0] == "_")


def _stmt_end(w: list[str], i: int, stop: int) -> int:
    """Index of the last token of the statement that starts at token i, or -1 when it cannot be
    delimited for certain (a label, a case label, a switch, try, unbalanced brackets)."""
    if i >= stop:
        return -1
    t = w[i]
    if t == "{":
        e = _match_fwd(w, i, "{", "}")
        return e if 0 <= e < stop else -1
    if t == ";":
        return i
    if t == "if":
        j = i + 1
        if j < stop and w[j] == "constexpr":
            j += 1
        if j >= stop or w[j] != "(":
            return -1
        c = _match_fwd(w, j, "(", ")")
        if not 0 <= c < stop:
            return -1
        e = _stmt_end(w, c + 1, stop)
        if e >= 0 and e + 1 < stop and w[e + 1] == "else":
            return _stmt_end(w, e + 2, stop)
        return e
    if t in ("for", "while", "switch"):
        if i + 1 >= stop or w[i + 1] != "(":
            return -1
        c = _match_fwd(w, i + 1, "(", ")")
        return _stmt_end(w, c + 1, stop) if 0 <= c < stop else -1
    if t == "do":
        e = _stmt_end(w, i + 1, stop)
        if e < 0 or e + 2 >= stop or w[e + 1] != "while" or w[e + 2] != "(":
            return -1
        c = _match_fwd(w, e + 2, "(", ")")
        return c + 1 if 0 <= c and c + 1 < stop and w[c + 1] == ";" else -1
    if t in _NOT_STMT:
        return -1
    c = _label_end(w, i, stop)
    if c >= 0:   # a label (`done:`, `case 64:`, `default:`): it and the statement it labels
        return _stmt_end(w, c + 1, stop)
    return _top_level(w, i, stop, ";")


def _top_level(w: list[str], i: int, stop: int, end: str, fail: tuple[str, ...] = ()) -> int:
    """Index of the first `end` token outside brackets in w[i:stop], or -1 at a closer without its opener
    or at a token of `fail` (at any depth) first."""
    depth = 0
    for j in range(i, stop):
        x = w[j]
        if x in _STMT_OPENERS:
            depth += 1
        elif x in _STMT_CLOSERS:
            depth -= 1
            if depth < 0:
                return -1
        elif x in fail:
            return -1
        elif x == end and depth == 0:
            return j
    return -1


def _label_end(w: list[str], i: int, stop: int) -> int:
    """Index of the `:` that ends the label at token i (`name:`, `case <constant>:`, `default:`), or -1
    when no label starts there. A switch's body is a statement list like any other: its case labels
    are jump targets, as a plain label is, and a convergence point after a statement under one is
    passed by the threads that ran it (those that jump past it meet the others at the next)."""
    t = w[i]
    if t == "case":   # (a conditional in a case constant: not worth delimiting)
        return _top_level(w, i + 1, stop, ":", (";", "?"))
    if _ident(t) and i + 1 < stop and w[i + 1] == ":":
        return i + 1
    return -1


def _stmt_list(w: list[str], lo: int, hi: int) -> list[tuple[int, int]] | None:
    """The statements of the block whose tokens are w[lo:hi] as (first, last) token indices; None when
    one of them cannot be delimited for certain."""
    out = []
    i = lo
    try:
        while i < hi:
            e = _stmt_end(w, i, hi)
            if e < 0:
                return None
            out.append((i, e))
            i = e + 1
    except RecursionError:
        return None
    return out


def _split_top(w: list[str], lo: int, hi: int, sep: str = ",") -> list[tuple[int, int]]:
    """(lo, hi) ranges of w[lo:hi] split at its top-level `sep` tokens."""
    parts, depth, start = [], 0, lo
    for j in range(lo, hi):
        x = w[j]
        if x in _STMT_OPENERS:
            depth += 1
        elif x in _STMT_CLOSERS:
            depth -= 1
        elif x == sep and depth == 0:
            parts.append((start, j))
            start = j + 1
    parts.append((start, hi))
    return parts


def _split_top_semis(w: list[str], lo: int, hi: int) -> list[tuple[int, int]]:
    """The clauses of a for header w[lo:hi] (init; condition; step)."""
    return _split_top(w, lo, hi, ";")


def _declarator(w: list[str], lo: int, hi: int) -> tuple[str, bool] | None:
    """(name, is an array or a pointer) of one declarator `[type] name[N] ...`, `T* p`, `T (&name)[]`."""
    for j in range(lo, hi - 3):   # (&name) / (*name)
        if w[j] == "(" and w[j + 1] in ("&", "*") and _ident(w[j + 2]) and w[j + 3] == ")":
            return w[j + 2], True
    name, at, depth, ptr = None, -1, 0, False
    j = lo
    while j < hi:
        x = w[j]
        if depth == 0 and x in _ATTR_WORDS and j + 1 < hi and w[j + 1] == "(":
            c = _match_fwd(w, j + 1, "(", ")")
            if c < 0:
                return None
            j = c + 1
            continue
        if depth == 0 and x in ("[", "=", "{", "("):
            break
        if x in _STMT_OPENERS:
            depth += 1
        elif x in _STMT_CLOSERS:
            depth -= 1
        elif depth == 0 and _ident(x) and x not in _KEYWORDS:
            name, at = x, j
        elif depth == 0 and x == "*" and name is not None:
            ptr = True
        j += 1
    if name is None:
        return None
    return name, ptr or (at + 1 < hi and w[at + 1] == "[")


def _is_decl(w: list[str], lo: int, hi: int) -> bool:
    """Whether the simple statement w[lo:hi] declares a variable with an initialiser (`T* p = &s[k];`,
    `float v = s[t];`): its first top-level `=` follows a name that follows a type-ish token."""
    depth = 0
    for j in range(lo, hi):
        x = w[j]
        if x in _STMT_OPENERS:
            depth += 1
        elif x in _STMT_CLOSERS:
            depth -= 1
        elif x == "=" and depth == 0:
            if (j + 1 < hi and w[j + 1] == "=") or j - 2 < lo or w[j - 1] in _ASSIGN_BEFORE:
                return False
            return _ident(w[j - 1]) and ((_ident(w[j - 2]) and w[j - 2] not in ("return", "case"))
                                         or w[j - 2] in ("*", "&", ">"))
    return False


def _assign_kind(w: list[str], j: int, hi: int, prev: str, prev2: str) -> int:
    """What the operator at token j does to the lvalue before it (prev, prev2: the tokens before the
    lvalue): store (`=`), load and store (`+=`, `++`), or load."""
    op = w[j] if j < hi else ""
    op2 = w[j + 1] if j + 1 < hi else ""
    op3 = w[j + 2] if j + 2 < hi else ""
    if op == "=" and op2 != "=":
        return _W
    if (op in _COMPOUND_ASSIGN and op2 == "=") or (op in ("<", ">") and op2 == op and op3 == "="):
        return _R | _W
    if (op in ("+", "-") and op2 == op) or (prev in ("+", "-") and prev2 == prev):
        return _R | _W
    return _R


class _Access:
    # via: in a call of a user function that names the shared array itself (a lambda that captures it,
    # a function that touches a file-scope one), not one it is passed to
    __slots__ = ("kind", "name", "index", "pos", "root", "via")

    def __init__(self, kind, name, index, pos, root, via=False):
        self.kind, self.name, self.index, self.pos, self.root, self.via = kind, name, index, pos, root, via


def _call_at(w: list[str], lo: int, k: int) -> tuple[str, int] | None:
    """(callee, argument position) of the call whose argument list holds token k, if it is one; the
    callee is spelt `name/argument count` for a user function's summary."""
    depth, commas = 0, 0
    j = k - 1
    while j >= lo:
        x = w[j]
        if x in (")", "]", "}"):
            depth += 1
        elif x in ("(", "[", "{"):
            if depth == 0:
                if x != "(" or j == 0:
                    return None
                g = w[j - 1]
                if g == ">":   # f<64>(...)
                    m = j - 1
                    d = 0
                    while m > lo:
                        d += (w[m] == ">") - (w[m] == "<")
                        if d == 0:
                            break
                        m -= 1
                    g = w[m - 1] if m > lo else ""
                if not _ident(g) or g in _NOT_CALLS:
                    return None
                c = _match_fwd(w, j, "(", ")")
                nargs = len(_split_top(w, j + 1, c)) if c > j + 1 else 0
                return f"{g}/{nargs}", commas
            depth -= 1
        elif x == "," and depth == 0:
            commas += 1
        elif x == ";" or x == "{":
            return None
        j -= 1
    return None


def _accesses(w: list[str], lo: int, hi: int, shared: dict[str, bool], roots: dict[str, str],
              effects: dict[str, set[str]], summaries: dict[str, dict[int, int]],
              cover: set[str]) -> tuple[list[_Access], list[int]]:
    """The shared-memory accesses in w[lo:hi] (kind: _R / _W / _A bits; index: the subscript and
    member tokens after the name, None for somewhere in the array; root: the shared array a local
    pointer points into) and the positions of calls that are barriers or collectives. `shared` maps
    each shared name to whether it is an array or a pointer (else a scalar); `summaries`: what a user
    function does through each pointer parameter; `effects`: the file-scope shared arrays a user
    function touches."""
    acc: list[_Access] = []
    covers: list[int] = []
    k = lo
    while k < hi:
        t = w[k]
        nxt = w[k + 1] if k + 1 < hi else ""
        prev = w[k - 1] if k > lo else ""
        if t in cover and nxt in ("(", "<"):
            covers.append(k)
        if t in shared and prev not in (".", "->", "::") and nxt != "::":
            j = k + 1
            idx: list[str] = []
            while j < hi and w[j] in ("[", ".", "->"):
                if w[j] == "[":
                    c = _match_fwd(w, j, "[", "]")
                    if not 0 <= c < hi:
                        break
                    idx += w[j:c + 1]
                    j = c + 1
                elif j + 1 < hi:
                    idx += w[j:j + 2]
                    j += 2
                else:
                    break
            prev2 = w[k - 2] if k - 1 > lo else ""
            address = prev == "&" and not (_ident(prev2) or prev2 in (")", "]") or prev2[:1].isdigit())
            index: tuple | None = tuple(idx)
            if (shared[t] and (not idx or idx[0] != "[")) or address:
                # the array, a pointer or an element's address: passed to a call, or cast and
                # subscripted (`((uint*)s)[i] = 0`, `reinterpret_cast<float4*>(&s[i])[0] = v`)
                call = _call_at(w, lo, k)
                if call and call[0].startswith("atomic"):
                    kind = _A
                elif call:
                    # a user function: what it does through that parameter; one that synchronises (a
                    # block reduction) or that the scan cannot see into (a library's, a function
                    # pointer): nothing here (its own body is analysed where it is the user's)
                    g = call[0].split("/")[0]
                    kind = 0 if g in cover else summaries.get(call[0], {}).get(call[1], 0)
                    index = None
                else:
                    e = j
                    while e < hi and w[e] == ")":
                        e += 1
                    sub = e
                    while e < hi and w[e] == "[":
                        c = _match_fwd(w, e, "[", "]")
                        e = c + 1 if 0 <= c < hi else hi
                    # cast and subscripted: what the operator after it does; else a pointer value
                    kind = _assign_kind(w, e, hi, "", "") if e > sub else _R | _W
                    index = None
            elif not shared[t] and not idx and prev in ("(", ",") and nxt in (")", ","):
                call = _call_at(w, lo, k)     # f(x): a reference parameter may store
                kind = _A if call and call[0].startswith("atomic") else _R | _W
                index = None
            else:
                kind = _assign_kind(w, j, hi, prev, prev2)
            if kind:
                acc.append(_Access(kind, t, index, k, roots.get(t, t)))
            k = j
            continue
        if nxt == "(" and effects.get(t):   # a user function (a lambda) that touches shared memory it names
            acc.extend(_Access(_R | _W, x, None, k, x, True) for x in effects[t] if x in shared)
        k += 1
    return acc, covers


class _StmtInfo:
    __slots__ = ("lo", "hi", "acc", "covers", "simple", "roots", "stores")

    def __init__(self, lo, hi, acc, covers, simple):
        self.lo, self.hi, self.acc, self.covers, self.simple = lo, hi, acc, covers, simple
        self.roots = {a.root for a in acc}
        self.stores = any(a.kind & (_W | _A) for a in acc)


def _terms(sub: list[str]) -> list[tuple[str, list[str]]]:
    """The top-level terms of an expression's tokens with their signs: `t + 16 - k` -> [('+', ['t']),
    ('+', ['16']), ('-', ['k'])] (a unary sign is folded into its term's)."""
    out, depth, sign, cur = [], 0, "+", []
    for x in sub + ["+"]:
        if x in ("+", "-") and depth == 0:
            if cur:
                out.append((sign, cur))
                sign, cur = x, []
            else:   # a unary sign
                sign = "-" if (sign == "-") != (x == "-") else "+"
            continue
        depth += x in ("(", "[")
        depth -= x in (")", "]")
        cur.append(x)
    return out


def _affine(sub: list[str]) -> tuple[tuple, int] | None:
    """A subscript's terms as (the terms that are not integer literals, with their signs; the sum of
    the literals): `t + 16` -> ((('+', 't'),), 16), `si + 64 - 5` -> ((('+', 'si'),), 59)."""
    terms, c = [], 0
    for sign, cur in _terms(sub):
        lit = cur[0].rstrip("uUlL") if len(cur) == 1 else ""
        if lit.isdigit():
            c += int(lit) if sign == "+" else -int(lit)
        else:
            terms.append((sign, " ".join(cur)))
    return (tuple(sorted(terms)), c) if terms or c else None


# tokens that make a term naming a thread index other than increasing with it (`31 - lane`, `t ^ 1`,
# `(t + 1) % 32`, `~t`, `c ? t : -t`)
_NOT_RISING = frozenset(("-", "~", "^", "%", "?", "!"))


def _subscripts(index: tuple) -> list[tuple]:
    """An access's subscript and member tokens split into its parts: `[ t ] [ k ] . x` -> [('[', 't',
    ']'), ('[', 'k', ']'), ('.', 'x')]."""
    out, cur, depth = [], [], 0
    for t in index:
        if t in ("[", ".", "->") and depth == 0 and cur:
            out.append(tuple(cur))
            cur = []
        depth += t == "["
        depth -= t == "]"
        cur.append(t)
    if cur:
        out.append(tuple(cur))
    return out


def _ascending_safe(write: tuple, read: tuple, rising) -> bool:
    """Whether thread order gives a converged warp's result for a statement that stores to slot
    `write` and loads slot `read` of the same array: the same slot, or a higher one (`s[t]` and
    `s[t + k]`, `s[si - 4]` and `s[si + 59]`, `s[ty][tx]` and `s[ty + half][tx]`: a lower thread
    loads before the higher one stores) where the subscript that differs grows with the thread index
    in `write` (rising(tokens)): not where it counts down (`s[31 - lane]` and `s[31 - lane + 1]`: the
    slot above is a LOWER thread's, stored already). An added name (`+ k`, `+ stride`) is taken for a
    non-negative offset, as the loop tails that use one mean it."""
    if read == write:
        return True
    ws, rs = _subscripts(write), _subscripts(read)
    diff = [i for i, (x, y) in enumerate(zip(ws, rs)) if x != y]
    if len(ws) != len(rs) or len(diff) != 1:
        return False
    wg, rg = ws[diff[0]], rs[diff[0]]
    if wg[0] != "[" or rg[0] != "[" or wg[-1] != "]" or rg[-1] != "]":
        return False
    wsub, rsub = list(wg[1:-1]), list(rg[1:-1])
    if not rising(wsub):
        return False
    if len(rsub) > len(wsub) and rsub[:len(wsub)] == wsub and rsub[len(wsub)] == "+" and "[" not in rsub[len(wsub):]:
        return True   # `s[t + <anything but a load>]`
    a, b = _affine(wsub), _affine(rsub)
    if a is None or b is None or b[1] < a[1]:
        return False
    extra = list(b[0])
    for term in a[0]:   # the stored slot's terms, each in the loaded one's, and what is left added
        if term not in extra:
            return False
        extra.remove(term)
    return all(sign == "+" and _NOT_RISING.isdisjoint(t.split()) and "[" not in t for sign, t in extra)


def _other_lane(write: tuple, read: tuple) -> bool:
    """Whether slot `read` is one another lane of the warp that stores slot `write` may hold: the same
    subscripts but the last, whose terms are the same and whose literals differ by less than a warp
    (`g[t]`, `g[t + 16]`), or that swizzles with an xor (`g[i]`, `g[i ^ 1]`). Not `g[k + n]` after
    `g[k]` (a thread's own next element, n elements on)."""
    if write[-1] != "]" or read[-1] != "]":
        return False
    wo, ro = _match_back(list(write), len(write) - 1, "[", "]"), _match_back(list(read), len(read) - 1, "[", "]")
    if wo < 0 or ro < 0 or write[:wo] != read[:ro]:
        return False
    rs = list(read[ro + 1:-1])
    if "^" in rs:
        return True
    a, b = _affine(list(write[wo + 1:-1])), _affine(rs)
    return a is not None and b is not None and a[0] == b[0] and 0 < abs(b[1] - a[1]) < 32


def _rewrite_warp_statements(text: str, cover: set[str], split: bool = True) -> tuple[str, set[str]]:
    """Statement convergence points (see above) in the user's code of the preprocessed ``text``; returns
    the text and the names of the functions that got one (they run on fibers). Newlines are kept."""
    segs = [(a, b) for a, b in _user_segments(text) if text[a:b].strip()]   # (blank ones: see _rewrite_warp_loops)
    if not segs:
        return text, set()
    # from the first user line to the last (a function body may span segments: g++ -E splits it where
    # a macro from a system header expands); only the user's own functions and declarations count
    base, stop = segs[0][0], segs[-1][1]
    region = text[base:stop]
    raw = [(m.group(0), m.start(), m.end()) for m in _TOKEN_RE.finditer(region)]
    scan = _Scan(region)
    if [t for t, _, _ in raw] != scan.toks:
        return text, set()
    starts = [a - base for a, _ in segs]
    ends = [b - base for _, b in segs]

    def user(pos: int) -> bool:
        i = bisect.bisect_right(starts, pos) - 1
        return i >= 0 and pos < ends[i]

    # statements are parsed from the tokens outside directive lines (line markers, pragmas)
    dirs = [(m.start(), m.end()) for m in _DIRECTIVE_LINE_RE.finditer(region)]
    dstarts = [a for a, _ in dirs]
    fidx = [-1] * len(raw)
    toks: list[tuple[str, int, int]] = []
    for k, (t, a, b) in enumerate(raw):
        d = bisect.bisect_right(dstarts, a) - 1
        if d >= 0 and a < dirs[d][1]:
            continue
        fidx[k] = len(toks)
        toks.append((t, a, b))
    n_w = len(toks)
    w = [t for t, _, _ in toks] + [""] * 4   # (padding: look-ahead past the last token reads "")
    funcs = [(name, fidx[a], fidx[b], a) for name, a, b in scan.funcs
             if fidx[a] >= 0 and fidx[b] >= 0 and user(raw[a][1])]
    bodies = {fa: (name, fb) for name, fa, fb, _ in funcs}

    def owner(k: int) -> int | None:
        best = None
        for fa, (_, fb) in bodies.items():
            if fa < k < fb and (best is None or fa > best):
                best = fa
        return best

    # names declared __shared__ (`static thread_local` / `thread_local` after preprocessing)
    file_shared: dict[str, bool] = {}
    local_shared: dict[int, dict[str, bool]] = {}   # function '{' -> its own
    for k, t in enumerate(w):
        if t != "thread_local" or not user(toks[k][1]):
            continue
        lo = k
        while lo > 0 and w[lo - 1] not in (";", "{", "}"):
            lo -= 1
        hi = k
        depth = 0
        while hi < n_w and not (w[hi] == ";" and depth == 0):
            depth += w[hi] in _STMT_OPENERS
            depth -= w[hi] in _STMT_CLOSERS
            hi += 1
        names: dict[str, bool] = {}
        for a, b in _split_top(w, lo, hi):
            d = _declarator(w, a if a > lo else k + 1, b)
            if d:
                names[d[0]] = d[1]
        fa = owner(k)
        (file_shared if fa is None else local_shared.setdefault(fa, {})).update(names)

    # parameter names of the user's functions, and which are pointers
    fparams: dict[int, list[tuple[str, bool]]] = {}
    by_name: dict[str, list[int]] = {}
    stoks = scan.toks
    for name, fa, fb, sa in funcs:
        b0 = scan._boundary(sa)
        for j in range(b0, sa):
            if stoks[j] == "(" and j > 0 and stoks[j - 1] in (name, "]"):
                c = _match_fwd(stoks, j, "(", ")")
                if 0 < c < sa:
                    plist = []
                    for a, b in _split_top(stoks, j + 1, c):
                        p = stoks[a:b]
                        if "=" in p:
                            p = p[:p.index("=")]
                        ids = [x for x in p if _ident(x) and x not in _KEYWORDS]
                        plist.append((ids[-1] if len(ids) >= 2 else "", "*" in p or "[" in p))
                    fparams[fa] = plist
                    by_name.setdefault(name, []).append(fa)
                break
    if not file_shared and not local_shared and not any(p for pl in fparams.values() for _, p in pl):
        return text, set()   # (no shared memory, no pointer parameter)

    # the bodies around each body (a lambda's, stored in a variable: `auto step = [&](int k) {...};`)
    enclosing = {fa: [e for e, (_, eb) in bodies.items() if e < fa and fb < eb] for fa, (_, fb) in bodies.items()}

    # per function: its shared names (file scope, its own, pointer parameters some call passes a
    # shared name to, local pointers initialised from one: `T* row = s + 32 * warp;`), the array each
    # points into, and the names that hold a thread's own index (threadIdx, thread_rank(), a local
    # computed from one without a division, a parameter every call passes one to)
    shared_params: dict[str, set[int]] = {}
    tid_params: dict[str, set[int]] = {}
    down_params: dict[str, set[int]] = {}   # thread-index parameters some call passes a count-down one to

    def is_tid(expr: list[str], tids: set[str]) -> bool:
        """Whether expr is an index of a thread's own: it names threadIdx, thread_rank() or a name that
        holds one outside subscripts (a load, `x[t]`, is not one), and divides nothing (`t / 32`, `t >>
        5`) nor clears low bits (`t & ~31`): those are shared by the lanes of a warp."""
        depth, found = 0, False
        for j, x in enumerate(expr):
            if x == "[":
                depth += 1
            elif x == "]":
                depth -= 1
            elif x in ("/", "~") or (x == ">" and j + 1 < len(expr) and expr[j + 1] == ">"):
                # (the tokenizer gives `>>` as two `>`)
                return False
            elif depth <= 0 and (x in tids or x in _TID_WORDS or (x == "tid" and j >= 2 and expr[j - 1] == "."
                                                                  and expr[j - 2] == "dims")):
                found = True
        return found

    def rising(expr: list[str], tids: set[str], down: set[str]) -> bool:
        """Whether a subscript grows with the thread index: it names one, and each of its top-level terms
        that does is added and holds no `-`, `~`, `^`, `%`, `?`, `!` (`t`, `32 * warp + lane`, `t - 16`,
        `2 * t + 1`; not `31 - lane`, `blockDim.x - 1 - t`, `lane ^ 1`, nor a name defined so: `down`)."""
        found = False
        for sign, cur in _terms(expr):
            if not down.isdisjoint(cur):
                return False
            if is_tid(cur, tids):
                if sign == "-" or not _NOT_RISING.isdisjoint(cur):
                    return False
                found = True
        return found

    def local_view(fa: int) -> tuple[dict[str, bool], dict[str, str], set[str], set[str], set[str]]:
        name, fb = bodies[fa]
        plist = fparams.get(fa, [])
        sh = dict(file_shared)
        for e in enclosing[fa]:   # a lambda sees the __shared__ arrays of the functions around it
            sh.update(local_shared.get(e, {}))
        sh.update(local_shared.get(fa, {}))
        sh.update({plist[i][0]: True for i in shared_params.get(name, ()) if i < len(plist) and plist[i][1]
                   and plist[i][0]})
        # the other pointer parameters (global memory, as a rule) and local pointers initialised from
        # them: looked at in straight-line code only, for a store and a later load of another thread's
        # slot (see hazard)
        glob = {p for p, is_ptr in plist if is_ptr and p and p not in sh}
        sh.update({p: True for p in glob})
        ptids = {plist[i][0] for i in tid_params.get(name, ()) if i < len(plist) and plist[i][0]}
        pdown = {plist[i][0] for i in down_params.get(name, ()) if i < len(plist) and plist[i][0]}
        roots: dict[str, str] = {}
        defs: dict[str, list[list[str]]] = {}   # name -> what each `name = ...` assigns it
        for k in range(fa + 1, fb):
            x = w[k]
            if not _ident(x) or w[k - 1] in (".", "->", "::"):
                continue
            n1, n2 = w[k + 1], w[k + 2]
            if (n1 in ("*", "/", "%", "&", "|", "^") and n2 == "=") or (n1 in ("<", ">") and n2 == n1 and w[k + 3] == "="):
                defs.setdefault(x, []).append(["/"])   # x *= ..., x >>= ...: not a thread's own index
            if not (n1 == "=" and n2 != "="):
                continue
            e = k + 2
            depth = 0
            while e < fb and not (w[e] in (";", ",") and depth == 0):
                depth += w[e] in _STMT_OPENERS
                depth -= w[e] in _STMT_CLOSERS
                if depth < 0:
                    break
                e += 1
            init = w[k + 2:e]
            defs.setdefault(x, []).append(init)
            # a declaration `T* p = <shared ...>;` (not `T& r = ...`, nor a volatile one)
            lo = k
            while lo > fa + 1 and w[lo - 1] not in (";", "{", "}", ",", "("):
                lo -= 1
            decl = w[lo:k]
            if not decl or not (_ident(decl[-1]) or decl[-1] in ("*", ">")) or decl[-1] in ("return", "case"):
                continue
            if x in sh or "thread_local" in decl or "vptr" in decl or "vref" in decl or "&" in decl:
                continue
            hit = next((j for j, y in enumerate(init) if y in sh), -1)
            if hit < 0:
                continue
            after = init[hit + 1] if hit + 1 < len(init) else ""
            if "*" in decl or ("auto" in decl and sh[init[hit]] and after not in ("[", ".", "->")
                               and not (hit and init[hit - 1] == "*")):
                sh[x] = True
                if init[hit] in glob:
                    glob.add(x)
                # the same array when it points at its start (`int* p = &s[0];`, `(float*)smem`); a part
                # of it at an offset (`s + 2 * N`, a row) counts as an array of its own
                rest = init[hit + 1:]
                if not any(y in ("+", "-") for y in rest) and (not rest or rest[0] != "[" or rest[:3] == ["[", "0", "]"]):
                    roots[x] = roots.get(init[hit], init[hit])
        # a thread's own index: every assignment of it is one (`int t = threadIdx.x;`, `idx = threadIdx.x
        # - 16;`, `int lane = t & 31;`; not `int warp = t / 32;`), to a fixpoint from all candidates
        tids = ptids | set(defs)
        changed = True
        while changed:
            changed = False
            for x, rhss in defs.items():
                if x in tids and x not in ptids and not all(is_tid(r, tids - {x}) or (is_tid(r, tids) and x in r)
                                                           for r in rhss):
                    tids.discard(x)
                    changed = True
        # the thread indices that may count down (`int r = 31 - lane;`, a parameter some call passes
        # `blockDim.x - 1 - t`): thread order is not their slots' order (see _ascending_safe)
        down = pdown & tids
        changed = True
        while changed:
            changed = False
            for x, rhss in defs.items():
                if x in tids and x not in down and any(not rising(r, tids, down) for r in rhss):
                    down.add(x)
                    changed = True
        return sh, roots, tids, down, glob

    views = {fa: local_view(fa) for fa in bodies}
    for _ in range(8):   # to a fixpoint: calls that pass shared pointers / thread indices on
        changed = False
        for fa, (name, fb) in bodies.items():
            sh, _, tids, down, glob = views[fa]
            for k in range(fa + 1, fb - 1):
                g = w[k]
                if g not in by_name:
                    continue
                o = k + 1
                if w[o] == "<":   # f<64>(s, t)
                    depth = 0
                    while o < fb:
                        depth += (w[o] == "<") - (w[o] == ">")
                        if depth == 0 or w[o] in (";", "{", "}"):
                            break
                        o += 1
                    o += 1
                if o >= fb or w[o] != "(":
                    continue
                c = _match_fwd(w, o, "(", ")")
                if c < 0:
                    continue
                for i, (a, b) in enumerate(_split_top(w, o + 1, c)):
                    arg = w[a:b]
                    if any(x in sh and x not in glob for x in arg) and i not in shared_params.setdefault(g, set()):
                        shared_params[g].add(i)
                        changed = True
                    if is_tid(arg, tids) and i not in tid_params.setdefault(g, set()):
                        tid_params[g].add(i)
                        changed = True
                    if is_tid(arg, tids) and not rising(arg, tids, down) and i not in down_params.setdefault(g, set()):
                        down_params[g].add(i)
                        changed = True
        if not changed:
            break
        views = {fa: local_view(fa) for fa in bodies}

    # what each function does through its pointer parameters (_R / _W / _A), and the file-scope shared
    # arrays it touches, both through its callees too
    summaries: dict[str, dict[int, int]] = {}
    effects: dict[str, set[str]] = {}
    for fa, (name, fb) in bodies.items():
        seen = set(file_shared).union(*(local_shared.get(e, {}) for e in enclosing[fa]))
        effects.setdefault(name, set()).update(x for x in w[fa + 1:fb] if x in seen)
    for _ in range(8):
        changed = False
        for fa, (name, fb) in bodies.items():
            plist = fparams.get(fa, [])
            ptrs = {p: True for p, is_ptr in plist if is_ptr and p}
            if not ptrs:
                continue
            acc, _ = _accesses(w, fa + 1, fb, ptrs, {}, {}, summaries, set())
            mine = summaries.setdefault(f"{name}/{len(plist)}", {})
            for i, (p, _) in enumerate(plist):
                kind = 0
                for a in acc:
                    if a.name == p:
                        kind |= a.kind
                if kind and mine.get(i, 0) | kind != mine.get(i, 0):
                    mine[i] = mine.get(i, 0) | kind
                    changed = True
            for x in w[fa + 1:fb]:
                if x in effects and x != name and not effects[x] <= effects[name]:
                    effects[name] |= effects[x]
                    changed = True
        if not changed:
            break

    # (position, order, end, text): at one position, the points after the statements that end there
    # (inner ones first), then the brace that opens a wrapped body, then a split statement
    edits: list[tuple[int, int, int, str]] = []
    ticked: set[str] = set()

    def analyse(fa: int, fb: int, name: str) -> None:
        sh, roots, tids, down, glob = views[fa]
        groots = {roots.get(x, x) for x in glob}
        inner = [(e, eb) for e, (_, eb) in bodies.items() if fa < e and eb < fb]   # lambdas in it
        decl_cache: dict[int, tuple[bool, bool]] = {}
        assigned_at: dict[str, list[int]] = {}   # name -> where the function stores to it
        for k in range(fa + 1, fb):
            if _ident(w[k]) and w[k - 1] != "." and _assign_kind(w, k + 1, fb, w[k - 1], w[k - 2]) & _W:
                assigned_at.setdefault(w[k], []).append(k)

        def in_decl(k: int) -> tuple[bool, bool]:
            """Whether token k is in a __shared__ declaration; in a declaration with an initialiser."""
            lo = k
            while lo > fa + 1 and w[lo - 1] not in (";", "{", "}"):
                lo -= 1
                if w[lo] in (")", "]"):
                    m = _match_back(w, lo, "(" if w[lo] == ")" else "[", w[lo])
                    if m < 0:
                        break
                    lo = m
            if lo not in decl_cache:
                hi = lo
                depth = 0
                while hi < fb and not (w[hi] in (";", "{", "}") and depth == 0):
                    if w[hi] in ("(", "["):
                        depth += 1
                    elif w[hi] in (")", "]"):
                        depth -= 1
                    hi += 1
                decl_cache[lo] = ("thread_local" in w[lo:hi], _is_decl(w, lo, hi))
            return decl_cache[lo]

        def info(lo: int, hi: int) -> _StmtInfo:
            simple = w[lo] not in ("if", "for", "while", "do", "switch", "{", "case") and w[lo + 1] != ":"
            acc, cov = _accesses(w, lo, hi + 1, sh, roots, effects, summaries, cover)
            if any(lo < e < hi for e, _ in inner):   # (a lambda's body runs where it is called, not here)
                acc = [a for a in acc if not any(e < a.pos < eb for e, eb in inner)]
                cov = [k for k in cov if not any(e < k < eb for e, eb in inner)]
            keep = []
            for a in acc:   # a __shared__ declaration stores nothing; `T* p = &s[k];` neither
                shared_decl, init_decl = in_decl(a.pos)
                if not (shared_decl or (init_decl and a.index is None and a.kind == _R | _W)):
                    keep.append(a)
            return _StmtInfo(lo, hi, keep, cov, simple)

        subscripts = _subscripts

        def up(expr: list[str]) -> bool:
            return rising(expr, tids, down)

        def sub_tid(x: tuple) -> bool:
            return x[0] == "[" and is_tid(list(x[1:-1]), tids)

        def index_tid(index: tuple) -> bool:
            return any(sub_tid(x) for x in subscripts(index))

        def same_thread(p: _Access, q: _Access, lo: int, hi: int) -> bool:
            """Whether accesses p and q are to one thread's own slot, row or column: subscripts of one
            name where those that differ name no thread index, and one that names a thread index is the
            same in both (`s[tid]` and `s[tid]`, `col[i][idx]` and `col[j][idx]`; not `s[tid]` and
            `s[tid + 16]`, nor `s[ty][tx]` and `s[ty][tx + 1]`), its names not assigned in w[lo:hi]."""
            if p.name != q.name or p.index is None or q.index is None:
                return False
            ps, qs = subscripts(p.index), subscripts(q.index)
            if len(ps) != len(qs):
                return False
            own = [x for x, y in zip(ps, qs) if x == y and sub_tid(x)]
            if not own or any(x != y and (sub_tid(x) or sub_tid(y)) for x, y in zip(ps, qs)):
                return False
            for t in {t for x in own for t in x if _ident(t)}:
                at = assigned_at.get(t, ())
                k = bisect.bisect_left(at, lo)
                if k < len(at) and at[k] < hi:
                    return False
            return True

        def hazard(a: _StmtInfo, b: _StmtInfo, lo: int, hi: int, in_loop: bool) -> bool:
            """Whether a thread may store in `a` what another loads in the later `b` (or load in `a` a
            slot many threads read, which another stores to in `b`) with no barrier or collective
            between (lo, hi: the tokens from a to b)."""
            if not (a.stores or b.stores):
                return False
            for x in a.roots & b.roots:
                if x in groots:
                    # global memory: only a store of a thread's slot, then a load of another lane's
                    # (_other_lane: `g[t] += g[t + 16];` then `g[t] += g[t + 8];`, `g[i] = v; w = g[i ^
                    # 1];`) in straight-line code. Correct code does not do that (across warps it is a
                    # race), so a point there costs nothing elsewhere; loads of slots many threads
                    # read (`out[0]`), subscripts not seen to name a thread (`img[r * W + c]` with r =
                    # i / W), a thread's own other elements (llm.c's permute_kernel_backward: `dinp[i]
                    # += dq[k]; dinp[i + NH * d] += dk[k];`) and loops (`y[row * n + j] = y[row * n + j
                    # - 1] + ...`) are left as written
                    if in_loop:
                        continue
                    for p in a.acc:
                        if p.root != x or not p.kind & _W or p.index is None or not index_tid(p.index) or (
                                a.covers and max(a.covers) > p.pos):
                            continue
                        for q in b.acc:
                            if q.root == x and q.kind & _R and q.index is not None and index_tid(q.index) and not (
                                    b.covers and min(b.covers) < q.pos) and _other_lane(p.index, q.index):
                                return True
                    continue
                for p in a.acc:
                    if p.root != x or (a.covers and max(a.covers) > p.pos):
                        continue   # (a barrier after it)
                    for q in b.acc:
                        if q.root != x or (b.covers and min(b.covers) < q.pos):
                            continue   # (a barrier before it)
                        if p.index is None and q.index is None and not (p.via and q.via):
                            # both through pointers, casts, atomics or helpers the array is passed to:
                            # no sign of another thread's slot (cuda-samples' histogram64 calls
                            # `addByte(s_ThreadBase, ...)` three times a word on its own slots); but two
                            # calls of a lambda or function that names the array (`step(16); step(8);`,
                            # the lambda capturing `s`) touch what its body does, out of sight here
                            continue
                        store_load = (p.kind & (_W | _A) and q.kind & _R) or (p.kind & _W and q.kind & _A) \
                            or (p.kind & _A and q.kind & _W)
                        # a load, then a store: of a slot many threads read (`A_S[0]`, a scalar), or
                        # of one a lower thread may then overwrite (`x = s[t - 1]; ... s[t] = y;`; not
                        # `x = s[t + 1]`: thread order loads that one first anyway)
                        load_store = p.kind & _R and q.kind & (_W | _A) and p.index is not None and (
                            not index_tid(p.index) or q.index is None or not _ascending_safe(q.index, p.index, up))
                        if (store_load or load_store) and not same_thread(p, q, lo, hi):
                            return True
            return False

        def cond_of(s_lo: int) -> tuple[int, int]:
            j = s_lo + 1 + (w[s_lo + 1] == "constexpr")
            return j, _match_fwd(w, j, "(", ")")

        def thread_bound(lo: int, hi: int) -> str:
            """'warp' for a condition that keeps the thread index below a warp (`tid < 32`, `lane < 16`,
            `threadIdx.x < warpSize`), 'one' for one thread (`tid == 0`), else ''."""
            if "||" in "".join(w[lo:hi]):
                return ""
            for j in range(lo + 1, hi - 1):
                x, y = w[j], w[j + 1]
                left, right = w[j - 1], w[j + 2] if j + 2 < hi else ""
                left_tid = left in tids or (left in ("x", "y", "z") and w[j - 2] == "." and w[j - 3] == ")"
                                            and w[j - 4] == "tid") or (left == ")" and w[j - 2] == "("
                                                                       and w[j - 3] in _TID_WORDS)
                if x == "<" and y != "<" and left_tid:
                    lit = (y if y != "=" else right).rstrip("uUlL")
                    lim = 32 if y != "=" else 31
                    if lit == "warpSize" or (lit.isdigit() and 0 < int(lit) <= lim):
                        return "warp"
                if x == "=" and y == "=" and left_tid and right.rstrip("uUlL").isdigit():
                    return "one"
                if x == "=" and y == "=" and left.rstrip("uUlL").isdigit() and j + 2 < hi:
                    # `0 == threadIdx.x`, `0 == tid` (cuda-samples' eigenvalues kernels)
                    r = w[j + 2:hi]
                    if (r[0] in tids and (len(r) == 1 or r[1] in (")", "&"))) or (
                            r[:7] == ["(", "::", "__emu", "::", "dims", ".", "tid"] and r[7:9] == [")", "."]):
                        return "one"
            return ""

        def block(lo: int, hi: int, cyclic: bool, header_covers: bool, depth: int, wrap: bool,
                  in_loop: bool) -> None:
            """The statements w[lo:hi] of a block (a loop body when cyclic; wrap: an unbraced loop body,
            which gets braces if it needs a point). in_loop: inside a loop body (global memory is looked
            at in straight-line code only, see hazard)."""
            stmts = [(lo, hi - 1)] if wrap else _stmt_list(w, lo, hi)
            if stmts is None:
                return
            infos = [info(a, b) for a, b in stmts]
            n = len(infos)
            need = []   # (i, k): a point after one of the statements i..k
            entry: set[int] = set()   # guarded statements that get a point at the start of their body
            for i in range(n):
                if not infos[i].acc:
                    continue
                # (the statements after it, then around the loop; at most _STMT_REACH of them: pairs
                # further apart with no barrier between are left as written, which keeps the analysis
                # of long straight-line code linear)
                order = (list(range(i + 1, n)) + (list(range(0, i + 1)) if cyclic else []))[:_STMT_REACH]
                for pos, j in enumerate(order):
                    if cyclic and j <= i and pos == n - 1 - i and header_covers:
                        break   # the loop's own condition / increment synchronises
                    span = (infos[i].lo, infos[j].hi + 1) if j > i else (lo, hi)
                    if hazard(infos[i], infos[j], *span, in_loop):
                        if j > i and guarded(infos[j]):
                            # `if (tid == 0) out = s[0];`: the point goes first in its body, where only
                            # the threads that read pass it (after the threads behind them), not every
                            # thread of the block; later statements are looked at on their own
                            entry.add(j)
                        else:
                            need.append((i, j - 1 if j > i else n - 1))
                            break
                    if infos[j].covers:
                        break
            last = -1   # as few points as cover every pair: each as late as its pairs allow
            for i, k in sorted(need, key=lambda p: p[1]):
                while k >= i and w[infos[k].lo] in ("return", "break", "continue", "goto"):
                    k -= 1   # (a point after a jump would never run)
                if i <= k and last < i:
                    add_point(infos[k], depth, wrap)
                    last = k
            for j in sorted(entry):
                add_entry_point(infos[j], depth)
            for s in infos:
                sub(s, depth + 1, in_loop)

        def guarded(s: _StmtInfo) -> bool:
            """An `if` without else whose condition touches no shared memory (its body can hold a point)."""
            if w[s.lo] != "if":
                return False
            j, c = cond_of(s.lo)
            e = _stmt_end(w, c + 1, fb)
            return e == s.hi and not _accesses(w, j, c + 1, sh, roots, effects, summaries, cover)[0]

        def add_entry_point(s: _StmtInfo, depth: int) -> None:
            _, c = cond_of(s.lo)
            b, e = c + 1, s.hi
            if not (user(toks[b][1]) and user(toks[e][1])):
                return
            if w[b] == "{":
                edits.append((toks[b][2], 1500, toks[b][2], f" ::__emu::stmt_tick({_TICK});"))
            else:
                edits.append((toks[b][1], 1500, toks[b][1], f"{{ ::__emu::stmt_tick({_TICK}); "))
                edits.append((toks[e][2], 1000 - depth - 0.5, toks[e][2], " }"))
            ticked.add(name)

        def add_point(s: _StmtInfo, depth: int, wrap: bool) -> None:
            end = toks[s.hi]
            if not user(end[1]) or (wrap and not user(toks[s.lo][1])):
                return
            if wrap:
                edits.append((toks[s.lo][1], 2000 + depth, toks[s.lo][1], "{ "))
                edits.append((end[2], 1000 - depth, end[2], f" ::__emu::stmt_tick({_TICK}); }}"))
            else:
                edits.append((end[2], 1000 - depth, end[2], f" ::__emu::stmt_tick({_TICK});"))
            ticked.add(name)

        def body(i: int, depth: int, cyclic: bool, header: tuple[int, int], in_loop: bool) -> None:
            """The sub-statement starting at token i: the body of an if or a loop (cyclic)."""
            e = _stmt_end(w, i, fb)
            if e < 0:
                return
            hcov = False
            if cyclic:
                hcov = bool(_accesses(w, header[0], header[1], {}, {}, {}, {}, cover)[1])
                in_loop = True
                # A loop that reaches a barrier or a collective, or strides by the block or the grid
                # (`for (i = threadIdx.x; i < n; i += blockDim.x)`), is block-synchronous code: its
                # statements are paired within an iteration (between its barriers a thread that reads
                # what another stored relies on the warp: `if (wid == 0) { s[lane] += s[lane ^ 16];
                # ... }` as much as `if (tid < 32)`), not around the loop, where the analysis would see
                # a thread's next grid-stride item (cuda-samples' scalarProd) or a collective's result
                # stored after it (`acc[w] = cg::reduce(...)`) as another thread's
                parts = _split_top_semis(w, header[0] + 1, header[1] - 1)
                step = w[parts[2][0]:parts[2][1]] if len(parts) == 3 else []
                strided = any((step[m] == "dims" and step[m + 1] == "." and step[m + 2] in ("bdim", "gdim")) or
                              (step[m] in ("size", "num_threads") and step[m + 1] == "(") for m in range(len(step) - 2))
                if hcov or strided or _accesses(w, i, e + 1, {}, {}, {}, {}, cover)[1]:
                    cyclic = False
            if w[i] == "{":
                block(i + 1, e, cyclic, hcov, depth, False, in_loop)
            elif cyclic and w[i] != ";":
                block(i, e + 1, True, hcov, depth, True, in_loop)
            else:
                sub(info(i, e), depth, in_loop)

        def sub(s: _StmtInfo, depth: int, in_loop: bool) -> None:
            t = w[s.lo]
            c = _label_end(w, s.lo, s.hi + 1)
            if c >= 0:   # a label: the statement it labels
                sub(info(c + 1, s.hi), depth, in_loop)
            elif t == "{":
                block(s.lo + 1, s.hi, False, False, depth, False, in_loop)
            elif t == "if":
                j, c = cond_of(s.lo)
                if thread_bound(j, c) == "one":
                    return   # one thread: nothing to converge
                e = _stmt_end(w, c + 1, fb)
                body(c + 1, depth, False, (0, 0), in_loop)
                if e >= 0 and e + 1 <= s.hi and w[e + 1] == "else":
                    body(e + 2, depth, False, (0, 0), in_loop)
            elif t in ("for", "while"):
                c = _match_fwd(w, s.lo + 1, "(", ")")
                body(c + 1, depth, True, (s.lo + 1, c + 1), in_loop)
            elif t == "switch":   # (its body: a statement list with case labels)
                c = _match_fwd(w, s.lo + 1, "(", ")")
                body(c + 1, depth, False, (0, 0), in_loop)
            elif t == "do":
                e = _stmt_end(w, s.lo + 1, fb)
                body(s.lo + 1, depth, True, (e + 1, s.hi + 1), in_loop)
            elif s.simple and split:
                split_stmt(s, in_loop)

        def split_stmt(s: _StmtInfo, in_loop: bool) -> None:
            """`s[i] op= <loads of s[j]>;` with j neither i nor above it: its loads, a point, its store."""
            lo, hi = s.lo, s.hi
            x = w[lo]
            if x not in sh or w[hi] != ";":
                return
            stores = [a for a in s.acc if a.kind & (_W | _A)]
            if len(stores) != 1 or stores[0].pos != lo or stores[0].kind & _A or not stores[0].index:
                return
            wi = stores[0].index
            root = stores[0].root
            loads = [a for a in s.acc if a.root == root and a.pos != lo]
            if all(a.name == x and a.index is not None and (_ascending_safe(wi, a.index, up) or
                                                            same_thread(stores[0], a, lo, hi + 1)) for a in loads):
                return
            if root in groots and (in_loop or not index_tid(wi) or any(
                    a.index is None or not index_tid(a.index) or not _other_lane(wi, a.index)
                    for a in loads if a.index != wi)):
                return   # global memory: as in hazard, another thread's slot in straight-line code only
            if any(t in ("vptr", "vref", "vptr_cast") for t in w[lo:hi]):
                return
            j = lo + 1 + len(wi)          # the operator
            if w[j] == "=":
                op, rhs = "=", j + 1
            elif w[j] in _COMPOUND_ASSIGN and w[j + 1] == "=":
                op, rhs = w[j] + "=", j + 2
            elif w[j] in ("<", ">") and w[j + 1] == w[j] and w[j + 2] == "=":
                op, rhs = w[j] * 2 + "=", j + 3
            else:
                return
            if rhs >= hi or w[rhs] == "{" or len(_split_top(w, rhs, hi)) != 1:
                return
            a0, a1 = toks[lo][1], toks[hi][2]
            if not (user(a0) and user(toks[hi][1])) or \
                    bisect.bisect_right(starts, a0) != bisect.bisect_right(starts, toks[hi][1]):
                return
            lhs_t = region[a0:toks[j][1]]
            rhs_t = region[toks[rhs][1]:toks[hi][1]]
            if op == "=":
                new = (f"{{ auto&& __emu_r = ({lhs_t}); auto __emu_v = ({rhs_t}); ::__emu::stmt_tick({_TICK}); "
                       f"__emu_r = static_cast<decltype(__emu_v)&&>(__emu_v); }}")
            else:
                new = (f"{{ auto&& __emu_r = ({lhs_t}); auto __emu_v = __emu_r; __emu_v {op} ({rhs_t}); "
                       f"::__emu::stmt_tick({_TICK}); __emu_r = static_cast<decltype(__emu_v)&&>(__emu_v); }}")
            edits.append((a0, 3000, a1, new))
            ticked.add(name)

        try:
            block(fa + 1, fb, False, False, 0, False, False)
        except RecursionError:
            pass

    for fa, (name, fb) in sorted(bodies.items()):
        if any(x in views[fa][0] for x in w[fa + 1:fb]):
            analyse(fa, fb, name)
    if not edits:
        return text, set()
    out, last, n = [], 0, 0
    for pos, _, end, ins in sorted(edits, key=lambda e: (e[0], e[1])):
        if pos < last:
            continue   # inside a split statement (cannot happen: it holds no statement)
        out.append(region[last:pos])
        while _TICK in ins:
            n += 1
            ins = ins.replace(_TICK, str(n), 1)
        out.append(ins)
        last = max(last, end)
    out.append(region[last:])
    return text[:base] + "".join(out) + text[stop:], ticked

_TOKEN_RE = re.compile(
    r'(?:u8|[uUL])?R"([^()\\\s]{0,16})\([\s\S]*?\)\1"'    # a raw string literal, newlines and all
    r'|"(?:\\.|[^"\\\n])*"'
    r"|'(?:\\.|[^'\\\n])*'"
    r"|[A-Za-z_]\w*"
    r"|\.?\d(?:[eEpP][+-]|[\w.'])*"
    r"|::|->|[^\s\w]"
)
_GLOBAL_MARK = "__emu_global__"
_GLUE_FILE = "<aclnn-emulator-glue>"   # the file name g++ gives the glue appended to a module


def _tokens(text: str) -> list[str]:
    return [m.group(0) for m in _TOKEN_RE.finditer(text)]


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
        self.funcs: list[tuple[str, int, int]] = []  # (name, token index of '{', of '}')
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
                        if kind == "func":   # a volatile pointer parameter (a lockstep proxy) needs fibers too
                            ids.update(x for x in toks[self._boundary(start) : start] if x in _LOCKSTEP_TYPES)
                        self.defs.setdefault(name, set()).update(ids)
                        if kind == "func":
                            self.funcs.append((name, start, i))
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

    def tainted(self, seeds=_SYNC_PRIMITIVES, record: bool = True) -> set[str]:
        bad = set(seeds)
        changed = True
        while changed:
            changed = False
            for name, ids in self.defs.items():
                if name not in bad and not ids.isdisjoint(bad):
                    bad.add(name)
                    changed = True
        if record:
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

    def launch(self, grid, block, params: Sequence, shared_mem: int = 0, *, cooperative: bool = False) -> None:
        # Fast path (launch overhead, issue 13): a (grid, block) pair seen before was validated then;
        # its ctypes arrays are reused. Every check below still runs for anything not cached.
        try:
            dims = _dims_cache.get((grid, block))
        except TypeError:  # unhashable (a list)
            dims = None
        if dims is None:
            dims = self._check_dims(grid, block)
        cgrid, cblock, grid3, nthreads = dims
        name = self.name
        shared_mem = int(shared_mem)
        if shared_mem < 0 or shared_mem > _MAX_DYN_SMEM:
            raise KernelError(f"kernel '{name}': {shared_mem} bytes of dynamic shared memory (0 to {_MAX_DYN_SMEM} allowed)")
        sizes = self.param_sizes
        if len(params) != len(sizes):
            raise KernelError(f"kernel '{name}' takes {len(sizes)} argument(s), {len(params)} given")
        raw = params
        for i, p in enumerate(params):
            if type(p) is not bytes or len(p) != sizes[i]:
                raw = self._check_params(params)
                break
        self._launch_checked(cgrid, cblock, grid3, nthreads, raw, shared_mem, cooperative)

    def _check_dims(self, grid, block):
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
        dims = ((ctypes.c_uint * 3)(*grid3), (ctypes.c_uint * 3)(*block3), grid3, nthreads)
        try:
            if len(_dims_cache) >= 4096:
                _dims_cache.clear()
            _dims_cache[(grid, block)] = dims
        except TypeError:
            pass
        return dims

    def _check_params(self, params) -> list:
        name = self.name
        sizes = self.param_sizes
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
        return raw

    def _launch_checked(self, cgrid, cblock, grid3, nthreads, raw, shared_mem, cooperative) -> None:
        name = self.name
        if cooperative:
            limit = cooperative_max_blocks(nthreads, shared_mem)
            nb = grid3[0] * grid3[1] * grid3[2]
            if nb > limit:
                raise KernelError(f"kernel '{name}': cooperative launch of {nb} blocks exceeds the limit ({limit}): "
                                  "all blocks must be resident at once")
        shadows = None
        if _bounds_check_enabled():
            shadows = _Shadows(self, raw)
            raw = shadows.params
        arr = (ctypes.c_char_p * max(1, len(raw)))(*raw)
        err = getattr(_tl, "err", None)
        if err is None:
            err = _tl.err = ctypes.create_string_buffer(4096)
        err[0] = b"\0"
        try:
            rc = self._module._launch(
                self._index, cgrid, cblock, arr, shared_mem, err, 4096,
                1 if cooperative else 0, float(watchdog_seconds()),
            )
            msg = (err.value.decode("utf-8", "replace") or f"kernel '{name}' failed") if rc or shadows is not None else ""
            if shadows is not None:
                extra = shadows.finish(msg if rc else None)
                if extra and not rc:
                    rc, msg = 1, f"kernel '{name}': {extra}"
                elif extra:
                    msg = f"{msg} ({extra})"
        finally:
            if shadows is not None:
                shadows.release()
        if rc:
            raise KernelError(msg)


# --------------------------------------------------------------------------------------------
# Cooperative launches, watchdog, bounds-check debug mode
# --------------------------------------------------------------------------------------------
def emulated_sm_count() -> int:
    """The emulated device's multiprocessor count for cooperative launches ($ACLNN_PY_EMU_SM_COUNT, default 8)."""
    try:
        return max(1, int(os.environ.get("ACLNN_PY_EMU_SM_COUNT", "8")))
    except ValueError:
        return 8


def cooperative_max_blocks(threads_per_block: int, shared_mem: int = 0) -> int:
    """Blocks that may be co-resident: ``occupancy per SM x SMs`` of an sm_80-like device (2048 threads,
    32 blocks and 164 KiB of shared memory per SM), as CuPy computes it before a cooperative launch."""
    per_sm = min(32, 2048 // max(1, threads_per_block))
    if shared_mem > 0:
        per_sm = min(per_sm, (164 * 1024) // shared_mem)
    return max(0, per_sm) * emulated_sm_count()


# The watchdog and the bounds-check mode: set by the functions below, else read from the environment
# once, at the first launch after import or after the function was called with None (reading the
# environment at every launch cost 1.4 µs of a ~20 µs tiny-kernel launch).
_watchdog_override: float | None = None
_watchdog_env: float | None = None


def set_watchdog(seconds: float | None) -> None:
    """Per-launch time limit of the emulator (None: back to $ACLNN_PY_EMU_WATCHDOG_S, read again; default
    300 s; 0 disables it). A launch over the limit is stopped and reported as a kernel error."""
    global _watchdog_override, _watchdog_env
    _watchdog_override = None if seconds is None else float(seconds)
    _watchdog_env = None


def watchdog_seconds() -> float:
    global _watchdog_env
    if _watchdog_override is not None:
        return _watchdog_override
    if _watchdog_env is None:
        try:
            _watchdog_env = float(os.environ.get("ACLNN_PY_EMU_WATCHDOG_S", "300"))
        except ValueError:
            _watchdog_env = 300.0
    return _watchdog_env


_bounds_override: bool | None = None
_bounds_env: bool | None = None
_allocation_resolver = None


def set_bounds_check(enabled: bool | None) -> None:
    """Debug mode: every pointer argument that points into a known allocation runs on a private copy
    fenced by inaccessible pages, so a load or store past the end faults at once (reported with the
    argument and offset) and a store into the alignment slack before or after it is found by canary
    bytes after the launch. Costs two copies of every argument allocation and an mmap per launch.
    None: back to $ACLNN_PY_EMU_CHECK_BOUNDS (read again)."""
    global _bounds_override, _bounds_env
    _bounds_override = None if enabled is None else bool(enabled)
    _bounds_env = None


def _bounds_check_enabled() -> bool:
    global _bounds_env
    if _bounds_override is not None:
        return _bounds_override
    if _bounds_env is None:
        _bounds_env = os.environ.get("ACLNN_PY_EMU_CHECK_BOUNDS", "") not in ("", "0")
    return _bounds_env


def set_allocation_resolver(fn) -> None:
    """``fn(address) -> (base, nbytes) | None``: which allocation an argument points into (the host
    backend installs its ``allocation_of`` when it is created)."""
    global _allocation_resolver
    _allocation_resolver = fn


def _resolve_allocation(addr: int):
    """The allocation an argument points into, from the resolver the host backend installs (the
    emulator does not import the backends: they sit above it)."""
    return _allocation_resolver(addr) if _allocation_resolver is not None else None


_libc = None


def _c():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.mmap.restype = ctypes.c_void_p
        _libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
        _libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        _libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return _libc


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_GUARD = 16 * _PAGE
_CANARY = 0xA5


class _Shadows:
    """Private, fenced copies of the allocations a launch's pointer arguments point into."""

    def __init__(self, fn: "Function", raw: list[bytes]):
        self.fn = fn
        self.regions: list[dict] = []
        by_base: dict[int, dict] = {}
        params = list(raw)
        for i, (p, kind) in enumerate(zip(raw, fn.param_kinds)):
            if kind != "p" or len(p) != 8:
                continue
            addr = int.from_bytes(p, "little")
            if addr == 0:
                continue
            alloc = _resolve_allocation(addr)
            if not alloc:
                continue
            base, nbytes = alloc
            r = by_base.get(base)
            if r is None:
                r = self._map(base, nbytes)
                if r is None:
                    continue
                by_base[base] = r
                self.regions.append(r)
            r["args"].append(i)
            params[i] = (r["data"] + (addr - base)).to_bytes(8, "little")
        self.params = params

    @staticmethod
    def _map(base: int, nbytes: int):
        c = _c()
        body = -(-max(nbytes, 1) // 128) * 128          # keeps 128-byte alignment at the start
        pages = -(-body // _PAGE) * _PAGE
        total = _GUARD + pages + _GUARD
        m = c.mmap(None, total, 3, 0x22 | 0x4000, -1, 0)  # RW, MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE
        if m in (None, ctypes.c_void_p(-1).value) or m == 2**64 - 1:
            return None
        c.mprotect(m, _GUARD, 0)
        c.mprotect(m + _GUARD + pages, _GUARD, 0)
        data = m + _GUARD + pages - body
        lo, hi = m + _GUARD, m + _GUARD + pages
        ctypes.memset(lo, _CANARY, hi - lo)
        ctypes.memmove(data, base, nbytes)
        return {"map": m, "total": total, "lo": lo, "hi": hi, "data": data, "base": base, "nbytes": nbytes,
                "args": [], "guard_lo": m, "guard_hi": hi + _GUARD}

    def finish(self, fault_msg: str | None) -> str | None:
        """Copy results back; returns a description of an out-of-bounds access, if any."""
        notes = []
        if fault_msg:
            mm = re.search(r"at address 0x([0-9a-fA-F]+)", fault_msg)
            if mm:
                a = int(mm.group(1), 16)
                for r in self.regions:
                    if r["guard_lo"] <= a < r["guard_hi"]:
                        off = a - r["data"]
                        where = (f"{off - r['nbytes']} bytes past the end" if off >= r["nbytes"] else f"{-off} bytes before the start")
                        notes.append(f"out of bounds: {where} of the {r['nbytes']}-byte allocation passed as argument "
                                     f"{'/'.join(map(str, r['args']))} (address 0x{r['base'] + off:x} in the caller's memory)")
        for r in self.regions:
            front = ctypes.string_at(r["lo"], r["data"] - r["lo"])
            tail_start = r["data"] + r["nbytes"]
            tail = ctypes.string_at(tail_start, r["hi"] - tail_start)
            bad_f = [k for k, b in enumerate(front) if b != _CANARY]
            bad_t = [k for k, b in enumerate(tail) if b != _CANARY]
            what = []
            if bad_f:
                what.append(f"{len(front) - bad_f[0]} bytes before the start")
            if bad_t:
                what.append(f"{bad_t[-1] + 1} bytes past the end")
            if what:
                notes.append(f"out-of-bounds store: wrote up to {' and '.join(what)} of the {r['nbytes']}-byte "
                             f"allocation passed as argument {'/'.join(map(str, r['args']))}")
            ctypes.memmove(r["base"], r["data"], r["nbytes"])
        return "; ".join(notes) or None

    def release(self) -> None:
        c = _c()
        for r in self.regions:
            c.munmap(r["map"], r["total"])
        self.regions = []


# --------------------------------------------------------------------------------------------
# The process-wide runtime library (fault handlers, watchdog)
# --------------------------------------------------------------------------------------------
_rt_lock = threading.Lock()
_rt_state: list = []  # [api address or 0, CDLL]


def _rt_api() -> int:
    if _rt_state:
        return _rt_state[0]
    with _rt_lock:
        if _rt_state:
            return _rt_state[0]
        api = 0
        lib = None
        if os.environ.get("ACLNN_PY_EMU_NO_FAULT_HANDLER", "") in ("", "0"):
            try:
                lib = _build_rt()
                f = lib.aclnn_emu_rt_api
                f.restype = ctypes.c_void_p
                api = f() or 0
            except (OSError, EmulatorError, AttributeError) as e:
                sys.stderr.write(f"aclnn-py emulator: fault handling unavailable ({e}); a faulting kernel may "
                                 "kill the process\n")
        _rt_state[:] = [api, lib]
        return api


def _build_rt():
    cxx = _cxx()
    src = _INCLUDE_DIR / "emu_rt.cpp"
    h = hashlib.sha256()
    for p in (src, _INCLUDE_DIR / "emu_rt.h"):
        h.update(p.read_bytes())
    h.update(_compiler_identity(cxx).encode())
    out_dir = cache_dir() / "emulator"
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError:
        out_dir = pathlib.Path(tempfile.gettempdir()) / f"aclnn_py-{os.getuid()}" / "emulator"
        out_dir.mkdir(parents=True, exist_ok=True)
    so = out_dir / f"rt-{h.hexdigest()[:24]}.so"
    if not so.exists():
        fd, tmp = tempfile.mkstemp(prefix="rt.", suffix=".so", dir=out_dir)
        os.close(fd)
        try:
            r = _run([cxx, "-std=c++17", "-O2", "-fPIC", "-shared", "-pthread", "-U_FORTIFY_SOURCE", "-fvisibility=hidden",
                      "-I", str(_INCLUDE_DIR), str(src), "-o", tmp], "building the emulator runtime")
            if r.returncode != 0:
                raise CompileException("could not build the emulator runtime:\n" + r.stderr[-5000:])
            os.replace(tmp, so)
        finally:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return ctypes.CDLL(str(so))


class GlobalPointer:
    """Address of a module global (what ``RawModule.get_global`` returns on the emulator).

    Mirrors the parts of ``cupy.cuda.MemoryPointer`` that code uses on such a pointer: ``ptr``,
    ``int(p)``, ``p + offset``, ``copy_from_host(mem, size)``, ``copy_to_host(mem, size)``,
    ``copy_from_device(src, size)``, ``memset(value, size)`` (and their ``_async`` forms, which
    complete at once). ``size`` is the variable's size in bytes (CuPy cannot know it); copies past it
    are refused. ``as_numpy(dtype, shape)`` views it as a NumPy array.
    """

    def __init__(self, ptr: int, size: int, owner=None):
        self.ptr = int(ptr)
        self.size = int(size)
        self.device_id = 0
        self._owner = owner  # keeps the module loaded

    def __int__(self) -> int:
        return self.ptr

    __index__ = __int__

    def __repr__(self) -> str:
        return f"<emulated global at 0x{self.ptr:x}, {self.size} bytes>"

    def __add__(self, off: int) -> "GlobalPointer":
        return GlobalPointer(self.ptr + int(off), max(0, self.size - int(off)), self._owner)

    def _check(self, size: int) -> int:
        size = int(size)
        if size < 0 or size > self.size:
            raise ValueError(f"{size} bytes do not fit the {self.size}-byte global at 0x{self.ptr:x}")
        return size

    @staticmethod
    def _addr(mem) -> int:
        if isinstance(mem, int):
            return mem
        if isinstance(mem, ctypes.c_void_p):
            return mem.value or 0
        if hasattr(mem, "__array_interface__"):
            return int(mem.__array_interface__["data"][0])
        if hasattr(mem, "__cuda_array_interface__"):
            return int(mem.__cuda_array_interface__["data"][0])
        if hasattr(mem, "ptr"):
            return int(mem.ptr)
        return ctypes.cast(mem, ctypes.c_void_p).value or 0

    def copy_from_host(self, mem, size: int) -> None:
        ctypes.memmove(self.ptr, self._addr(mem), self._check(size))

    def copy_to_host(self, mem, size: int) -> None:
        ctypes.memmove(self._addr(mem), self.ptr, self._check(size))

    def copy_from_device(self, src, size: int) -> None:
        ctypes.memmove(self.ptr, self._addr(src), self._check(size))

    def copy_from(self, mem, size: int) -> None:
        self.copy_from_device(mem, size)

    def memset(self, value: int, size: int) -> None:
        ctypes.memset(self.ptr, int(value), self._check(size))

    def copy_from_host_async(self, mem, size: int, stream=None) -> None:
        self.copy_from_host(mem, size)

    def copy_to_host_async(self, mem, size: int, stream=None) -> None:
        self.copy_to_host(mem, size)

    def memset_async(self, value: int, size: int, stream=None) -> None:
        self.memset(value, size)

    def as_numpy(self, dtype, shape=None):
        import numpy as np
        dt = np.dtype(dtype)
        n = self.size // dt.itemsize
        arr = np.ctypeslib.as_array((ctypes.c_uint8 * (n * dt.itemsize)).from_address(self.ptr)).view(dt)
        return arr.reshape(shape) if shape is not None else arr


_dims_cache: dict = {}       # (grid, block) as given -> validated (c grid, c block, grid3, nthreads)
_tl = threading.local()      # per-thread error buffer of launch()


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
    """A compiled, loaded module: ``get_function(name)`` / ``get_global(name)`` like CuPy's RawModule."""

    def __init__(self, so_path: pathlib.Path, table: list[dict], globals_: dict | None = None):
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
            ctypes.c_int,
            ctypes.c_double,
        ]
        self._launch = f
        api = _rt_api()
        if api:
            setrt = self._lib.aclnn_emu_set_rt
            setrt.restype = ctypes.c_int
            setrt.argtypes = [ctypes.c_void_p]
            setrt(api)
        self._globals = dict(globals_ or {})
        launch_sym = self._globals.pop("\0launch", None)
        addr = ctypes.cast(self._lib.aclnn_emu_launch, ctypes.c_void_p).value
        self._base = (addr - launch_sym[0]) if launch_sym else None
        info = self._lib.aclnn_emu_kernel_info
        info.restype = ctypes.c_int
        info.argtypes = [
            ctypes.c_int,
            ctypes.POINTER(ctypes.c_uint),
            ctypes.POINTER(ctypes.POINTER(ctypes.c_uint)),
            ctypes.POINTER(ctypes.c_char_p),
        ]
        var_info = self._lib.aclnn_emu_var_info
        var_info.restype = ctypes.c_void_p
        var_info.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_size_t)]
        self._vars: dict[str, tuple[int, int]] = {}   # name expressions that name variables
        self._functions: dict[str, Function] = {}
        self._lookup: dict[str, int] = {}
        for idx, entry in enumerate(table):
            vsize = ctypes.c_size_t()
            vaddr = var_info(idx, ctypes.byref(vsize))
            if vaddr:
                for alias in [entry["name"], *entry.get("aliases", [])]:
                    self._vars[_norm(alias.lstrip("&").strip())] = (vaddr, vsize.value)
                continue
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
        self._by_index = {f._index: f for f in self._functions.values()}   # table index -> kernel

    @property
    def names(self) -> list[str]:
        return [f.name for f in self._by_index.values()]

    def get_global(self, name: str) -> "GlobalPointer":
        """The address of a module-scope ``__constant__`` / ``__device__`` variable, like CuPy's
        ``RawModule.get_global`` (CuPy returns a ``MemoryPointer``; this object has the same
        ``ptr`` / ``copy_from_host`` / ``copy_to_host`` / ``memset`` interface)."""
        var = self._vars.get(_norm(name.lstrip("&").strip()))
        if var is not None:   # named by a name expression (needed for static / namespaced variables, as in CuPy)
            return GlobalPointer(var[0], var[1], self)
        ent = self._globals.get(name)
        if ent is None:
            ent = self._globals.get(_norm(name).replace("::", "::"))
        if ent is None or self._base is None:
            cands = sorted(k for k in self._globals if not k.startswith("__"))
            raise LookupError(f"global symbol {name!r} not found in the emulated module (named symbol not found); "
                              f"it defines {cands[:20]}")
        return GlobalPointer(self._base + ent[0], ent[1], self)

    def get_function(self, name: str) -> Function:
        idx = self._lookup.get(name)
        if idx is None:
            idx = self._lookup.get(_norm(name.lstrip("&").strip()))
        if idx is None and _norm(name.lstrip("&").strip()) in self._vars:
            raise LookupError(f"{name!r} names a variable of the emulated module, not a kernel: use get_global")
        if idx is None:
            raise LookupError(
                f"kernel {name!r} not found in the emulated module (named symbol not found); it has "
                f"{sorted(self._functions)} "
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


# The warnings `compile_log` asks g++ for: those NVRTC gives by default on the same code (a variable
# declared or set but never used, #177-D / #550-D; an unused label; a non-void function without return).
_LOG_WARNINGS = ("-Wunused-variable", "-Wunused-but-set-variable", "-Wunused-label", "-Wreturn-type")
_logs: dict[tuple, str] = {}


def compile_log(code: str, *, options: Sequence[str] = (), filename: str | None = None) -> str:
    """The warnings on the user's code (and its own headers) that a compile of ``code`` gives, in g++'s
    words, one per line: what CuPy's ``compile(log_stream=...)`` gets from NVRTC's log (its tests check
    that a `declared but never referenced` variable is reported there). A g++ syntax pass over the source
    as written; errors are not repeated (the build reports them). Empty when there is nothing to say."""
    opts = tuple(str(o) for o in options)
    fname = filename or "kernel.cu"
    key = (code, opts, fname)
    if key in _logs:
        return _logs[key]
    incs, defs, pre = _build_options(opts)
    flags = [f for f in _BASE_FLAGS if f != "-w"] + list(_target_flags(_cxx()))
    fd, src = tempfile.mkstemp(suffix=".cpp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(_glue_head(code, fname, pre))
        inc_flags = _include_flags(incs, code, defs, src)
        r = _run([_cxx(), *flags, *inc_flags, *defs, "-fsyntax-only", *_LOG_WARNINGS, src], "warnings")
    finally:
        try:
            os.unlink(src)
        except OSError:
            pass
        shutil.rmtree(src + ".shield", ignore_errors=True)
    inc_dir = str(_INCLUDE_DIR)
    out = []
    keep = False
    for line in r.stderr.splitlines():
        if not line.startswith(" "):   # a diagnostic's first line (or "In function ...:" context)
            keep = "warning:" in line and not line.startswith((inc_dir, src, "/usr/"))
        if keep:
            out.append(line)
    _logs[key] = log = "\n".join(out) + ("\n" if out else "")
    return log


_MACRO_NAME_RE = re.compile(r"-[DU]\s*([A-Za-z_][A-Za-z0-9_]*)")
_HEADER_NAMES: tuple[set[str], set[str], set[str]] | None = None


def _header_names() -> tuple[set[str], set[str], set[str]]:
    """Of the emulator's headers: the names they test in #if / #ifdef / #ifndef / #elif / defined()
    (configuration macros, NDEBUG, __CUDA_NO_HALF_OPERATORS__, ..., a -D option is meant to reach), every
    identifier they use, and the macros they #define."""
    global _HEADER_NAMES
    if _HEADER_NAMES is None:
        cfg: set[str] = set()
        used: set[str] = set()
        defined: set[str] = set()
        cond = re.compile(r"^\s*#\s*(?:if|ifdef|ifndef|elif)\b(.*)$", re.M)
        ident = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
        for f in _INCLUDE_DIR.rglob("*"):
            if f.is_file() and f.suffix in (".h", ".cuh", ".hpp"):
                try:
                    text = f.read_text(errors="replace")
                except OSError:
                    continue
                for m in cond.finditer(text):
                    cfg.update(ident.findall(m.group(1)))
                used.update(ident.findall(text))
                defined.update(_USER_DEFINE_RE.findall(text))
        _HEADER_NAMES = (cfg, used, defined)
    return _HEADER_NAMES


_USER_DEFINE_RE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_][A-Za-z0-9_]*)", re.M)


def _shielded_macros(code: str, defs: Sequence[str]) -> list[str]:
    """The user's macro names to hide from the emulator's own headers: its -D / -U options and the names
    its source #defines. A command-line `-DN=1024` (PolyBench's sizes), or a `#define N 512` before
    `#include <cooperative_groups.h>`, reached the emulator's headers, whose code uses such plain names
    (a template parameter N, a local `me`), and broke the build with g++ errors inside them; a GPU's
    headers use reserved names only. Every header in include/ pushes and #undefs these names on entry and
    pops them on exit (aclnn_emu_shield_push/pop.h, written per build). Names the headers test as
    configuration (NDEBUG, __CUDA_NO_HALF_OPERATORS__, ...) still reach them."""
    out: list[str] = []
    cfg, used, defined = _header_names()
    names = [m.group(1) for m in map(_MACRO_NAME_RE.match, defs) if m] + _USER_DEFINE_RE.findall(code)
    for n in names:
        # only names the headers' code uses (a macro of the headers' own, or one they test, is left alone)
        if n in used and n not in cfg and n not in defined and not n.startswith(("ACLNN_EMU", "__")) and n not in out:
            out.append(n)
    return out


def _shield_flags(code: str, defs: Sequence[str], base: str) -> list[str]:
    """Writes the shield headers for this build into `base`.shield/ and returns the flag that finds them
    (-isystem: the preprocessed text marks them as system code, not the user's)."""
    names = _shielded_macros(code, defs)
    if not names:
        return []
    d = base + ".shield"
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "aclnn_emu_shield_push.h"), "w") as f:
        f.write("".join(f'#pragma push_macro("{n}")\n#undef {n}\n' for n in names))
    with open(os.path.join(d, "aclnn_emu_shield_pop.h"), "w") as f:
        f.write("".join(f'#pragma pop_macro("{n}")\n' for n in reversed(names)))
    return ["-isystem", d]


def _glue_head(code: str, fname: str, pre: list[str]) -> str:
    lines = ['#include "cuda_emu.h"']
    for p in pre:
        lines.append(f'#include "{p}"')
    esc = fname.replace("\\", "\\\\").replace('"', '\\"')
    lines.append(f'#line 1 "{esc}"')
    return "\n".join(lines) + "\n" + code + "\n"


def _build_options(opts: tuple[str, ...]) -> tuple[list[str], list[str], list[str]]:
    """The include dirs (CuPy's own when it is installed, as CuPy puts them on NVRTC's path), -D flags
    (with the architecture) and pre-included headers of a build with these options."""
    incs, defs, pre = _parse_options(opts)
    defs = defs + [f"-DACLNN_EMU_CUDA_ARCH={_arch_from_options(opts)}"]
    cupy_inc = _cupy_include_dir()
    if cupy_inc and cupy_inc not in incs:
        incs = incs + [cupy_inc]
    return incs, defs, pre


def _include_flags(incs: Sequence[str], code: str, defs: Sequence[str], base: str) -> list[str]:
    """-I flags: the emulator's headers first, the user's dirs, then the macro shield (see _shield_flags)."""
    flags = ["-I", str(_INCLUDE_DIR)]
    for d in incs:
        flags += ["-I", d]
    return flags + _shield_flags(code, defs, base)


def _build(code: str, opts: tuple[str, ...], names: tuple[str, ...], fname: str) -> Module:
    cxx = _cxx()
    incs, defs, pre = _build_options(opts)
    flags = _BASE_FLAGS + _target_flags(cxx) + _extra_flags()
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
            t0 = time.monotonic()
            quiet = os.environ.get("ACLNN_PY_EMU_QUIET", "") not in ("", "0")
            if not quiet:
                sys.stderr.write(f"aclnn-py emulator: compiling {fname} for the CPU (first use; cached afterwards)...\n")
                sys.stderr.flush()
            try:
                table = _compile(cxx, flags, code, fname, incs, defs, pre, names, so_path, meta_path, out_dir)
            except CompileException as e:
                e.source, e.name, e.options = code, fname, opts
                raise
            if not quiet:
                sys.stderr.write(f"aclnn-py emulator: compiled {fname} in {time.monotonic() - t0:.1f} s\n")
                sys.stderr.flush()
        finally:
            fcntl.flock(lf, fcntl.LOCK_UN)
    try:
        os.unlink(lock_path)
    except OSError:
        pass
    return _load(so_path, table, code, fname, opts)


def _load(so_path, table, code, fname, opts) -> "Module":
    try:
        meta_path = so_path.with_suffix(".json")
        glob = json.loads(meta_path.read_text()).get("globals", {})
        return Module(so_path, table, glob)
    except OSError as e:  # e.g. an undefined symbol: a compile error the linker did not catch
        raise CompileException(f"the emulated module for {fname} could not be loaded: {e}", code, fname, opts) from None


_NM_SKIP = re.compile(r"^(?:__emu|__gnu_cxx|std::|guard variable|typeinfo|vtable|VTT|construction vtable|_GLOBAL_|"
                      r"__dso_handle|__TMC_END__|__bss_start|_edata|_end|completed\.|__FRAME_END__|__emu_glue::|"
                      r"tile_bars|exec_holder|tls$|g_pool|g_rt)")


def _module_globals(so: str) -> dict:
    """Variables defined by the module (``__constant__`` / ``__device__`` globals): name -> [offset, size]."""
    out: dict = {}
    try:
        r = subprocess.run(["nm", "-C", "--defined-only", "-S", so], capture_output=True, text=True, check=False, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return out
    for line in r.stdout.splitlines():
        parts = line.split(None, 3)
        if len(parts) == 4 and len(parts[2]) == 1:
            val, size, typ, name = parts
        elif len(parts) >= 3 and len(parts[1]) == 1:
            val, typ, name = parts[0], parts[1], " ".join(parts[2:])
            size = "0"
        else:
            continue
        if name == "aclnn_emu_launch":
            out["\0launch"] = [int(val, 16), 0]
            continue
        if typ not in "bBdDrRgGsSvV" or "(" in name or _NM_SKIP.match(name):
            continue
        out.setdefault(name, [int(val, 16), int(size, 16)])
    return out


def _try_load(so_path: pathlib.Path, meta_path: pathlib.Path) -> Module | None:
    if not (so_path.exists() and meta_path.exists()):
        return None
    try:
        meta = json.loads(meta_path.read_text())
        table = meta["kernels"]
        if "globals" not in meta:
            return None
        return Module(so_path, table, meta["globals"])
    except (OSError, ValueError, KeyError, AttributeError):
        return None


def _run(cmd: list[str], what: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=900)
    except subprocess.TimeoutExpired as e:
        raise CompileException(f"{what} timed out after {e.timeout} s") from None


def _unfinished_source(log: str, code: str, fname: str) -> str | None:
    """The compile log for a source that ends inside a declaration or a block (a trailing prototype
    without its ';', a missing '}': a published file cut short): g++'s first error is then in the glue
    the loader appends after the user's code, about the glue's own names, which tell the user nothing.
    None when the first error is anywhere else."""
    first = re.search(r"^(.*?):\d+(?::\d+)?: (?:fatal )?error: (.*)$", log, re.M)
    if not first or first.group(1) != _GLUE_FILE or not re.search(r"expected|declared|end of input|not allowed here",
                                                                   first.group(2)):
        return None
    last = len(code.rstrip().splitlines()) or 1
    notes = [ln for ln in log.splitlines() if ln.startswith(f"{fname}:")][:20]
    return "\n".join([f"{fname}:{last}: error: the source ends inside an unfinished declaration or block (a missing "
                      "';' or '}' at its end?): it does not compile as a translation unit", *notes])


def _explain(log: str, code: str = "") -> str:
    hints = []
    for m in re.finditer(r"fatal error: ([^\n:]+): No such file or directory", log):
        # NVRTC's words too, which code ported from CuPy may look for
        hints.append(f'cannot open source file "{m.group(1).strip()}"')
    for m in re.finditer(r"inline PTX instruction '([^'\n]*)' is not supported by the emulator", log):
        if not any(f"'{m.group(1)}'" in h for h in hints):
            hints.append(f"inline PTX instruction '{m.group(1)}' is not supported by the emulator (inline PTX it "
                         "supports: see aclnn_py/emulator/SUPPORT.md); give the emulator a C++ path: "
                         "#ifdef __EMU_CPU__ <plain C++> #else asm(...) #endif (__CUDA_ARCH__ is defined here, as on a GPU)")
    if "__emu_inline_asm" in log or "__emu_unsupported_inline_asm_in_kernel_code" in log:
        hints.append("inline asm the emulator could not read (an asm statement outside a function, or a template "
                     "that is not string literals); give the emulator a C++ path: "
                     "#ifdef __EMU_CPU__ <plain C++> #else asm(...) #endif (__CUDA_ARCH__ is defined here, as on a GPU)")
    if re.search(r"cub/[^\n]*No such file", log):
        hints.append("the emulator provides only CUB's block- and warp-level collectives (<cub/cub.cuh>, <cub/block/...>, "
                     "<cub/warp/...>: BlockReduce, BlockScan, BlockLoad/Store/Exchange, BlockRadixSort, BlockHistogram, "
                     "BlockDiscontinuity, WarpReduce, WarpScan); this CUB header is not among them (device-wide "
                     "algorithms, agents and dispatch layers are host-side)")
    if re.search(r"(cuda_pipeline|cuda/std|cuda/|cuda_awbarrier|thrust/)[^\n]*No such file", log):
        hints.append("Thrust, cp.async pipelines and libcu++ (<cuda/...>) are not supported by the emulator "
                     "(WMMA, <mma.h>, and CUB's block/warp collectives are)")
    if re.search(r"curand[\w.]*\.h[^\n]*No such file", log):
        hints.append("of cuRAND the emulator provides <curand_kernel.h> (XORWOW/curandState_t, Philox4_32_10 and "
                     "MRG32k3a with curand, curand_uniform*, curand_normal*, curand_log_normal*: cuRAND's sequences "
                     "bit for bit) and <curand.h>'s types; its other headers (Sobol direction vectors, MTGP32, the "
                     "host API) are not supported: include <curand_kernel.h>, or generate the numbers on the host")
    if re.search(r">>>\s*\(", code) and "<<<" in code and "error" in log:
        hints.append("the source launches a kernel with <<<...>>>: the emulator, like NVRTC, compiles device code "
                     "only (launch from Python with RawKernel / Function.launch), and launching kernels from device "
                     "code (dynamic parallelism) is not supported")
    if re.search(r"cupy/[^\n]*No such file", log) and _cupy_include_dir() is None:
        hints.append("<cupy/...> headers come with CuPy: install CuPy (e.g. pip install cupy-cuda12x) and the "
                     "emulator puts them on the include path as CuPy does for NVRTC")
    if "__emu::vptr" in log or "__emu::vref" in log:
        hints.append("the emulator runs volatile pointers (`volatile T*`) as ::__emu::vptr<T>, so that warp-synchronous "
                     "code sees lockstep lanes; a template that must deduce T from a volatile pointer parameter "
                     "cannot: give the template argument explicitly")
    if re.search(r"\b__is(Global|Shared|Constant|Local|GridConstant)\b[^\n]*not declared", log):
        hints.append("the address-space predicates (__isGlobal, __isShared, __isConstant, __isLocal, __isGridConstant) "
                     "are not supported by the emulator: its shared, constant and local memory are host memory")
    if re.search(r"\b(cudaTextureObject_t|cudaSurfaceObject_t|tex[123]D\w*|texture|surf[123]D\w*|tex1Dfetch)\b[^\n]*"
                 r"(not declared|has not been declared|does not name a type|was not declared)", log):
        hints.append("textures and surfaces (cudaTextureObject_t, tex1D/2D/3D, tex1Dfetch, surf*D, texture<>) are not "
                     "supported by the emulator: read the data through a plain pointer (and interpolate in the kernel)")
    host_api = sorted(set(re.findall(r"[‘'`](cuda[A-Z]\w*)['’`] (?:was not declared|has not been declared|does not name a "
                                     r"type|is not a member)", log)) - {"cudaTextureObject_t", "cudaSurfaceObject_t"})
    if host_api:
        hints.append(f"{', '.join(host_api[:6])}: the CUDA runtime's host API (cudaMalloc, cudaMemcpy, streams, events, "
                     "cudaError_t, cudaDeviceSynchronize, ...) is not provided by the emulator, which, like NVRTC, "
                     "compiles device code only; allocate, copy and launch from Python (aclnn_py.acl.rt / RawKernel), "
                     "and leave host code out of the source (calling the runtime from device code is not supported)")
    if re.search(r"this_multi_grid|multi_grid_group|cluster_group|this_cluster", log):
        hints.append("multi-grid groups and thread-block clusters are not supported by the emulator")
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
        inc_flags = _include_flags(incs, code, defs, tmp_base)
        r = _run([cxx, *flags, *inc_flags, *defs, "-E", src, "-o", ii], "preprocessing")
        if r.returncode != 0:
            raise CompileException(f"g++ could not preprocess {fname} for the emulator:\n" + _explain(r.stderr[-30000:], code))
        pre_text = pathlib.Path(ii).read_text(errors="replace")
        segs = _user_segments(pre_text)
        asm_done = [_rewrite_inline_asm(pre_text[a:b]) for a, b in segs]

        def rewritten(shifts: bool) -> list[str]:
            """The user's segments rewritten (the shift rewrite on or off)."""
            return [_rewrite_spin_loops(_rewrite_unroll(_rewrite_volatile(_rewrite_extern_shared(
                _rewrite_shared_alignas(_rewrite_shifts(t) if shifts else t))))) for t in asm_done]

        def assemble(user: list[str], split: bool = True, points: bool = True) -> list[str]:
            """The preprocessed text with its user segments replaced by `user` (split: statements like
            `s[t] += s[t - 1]` may be split; points: statement convergence points at all; see
            _rewrite_warp_statements)."""
            out, last = [], 0
            for (a, b), t in zip(segs, user):
                out += [pre_text[last:a], t]
                last = b
            out.append(pre_text[last:])
            if implicit_warp_sync and points:
                # (functions that get statement convergence points switch threads: they run on fibers)
                try:
                    text, ticked = _rewrite_warp_statements("".join(out), cover, split)
                except Exception as e:   # a bug of the analysis: the source as before, and a word on it
                    if os.environ.get("ACLNN_PY_STRICT", "") not in ("", "0"):
                        raise
                    sys.stderr.write(f"aclnn-py emulator: warning: {fname}: no statement convergence points "
                                     f"(internal error {type(e).__name__}: {e}; please report it)\n")
                    text, ticked = "".join(out), set()
                stmt_funcs.update(ticked)
                out = [text]
            if warp_funcs:   # (their loops switch lanes: they run on fibers)
                out = [_rewrite_warp_loops("".join(out), warp_funcs)]
            return out

        user_text = rewritten(shifts=True)
        scan = _Scan("\n".join(user_text))   # (the shift calls the rewrite adds are not sync primitives)
        warp_funcs: set[str] = set()
        stmt_funcs: set[str] = set()
        cub = _CUB_INCLUDED_RE.search(pre_text)
        implicit_warp_sync = _EXPLICIT_WARP_SYNC not in scan.toks
        if implicit_warp_sync:
            warp = scan.tainted(_WARP_PRIMITIVES, record=False)
            warp_funcs = {name for name in scan.defs if name in warp}   # the user's own (a `reduce` too)
            # what synchronises threads, for the statement convergence points: barriers, collectives
            # and the user's functions that reach one
            cover = scan.tainted((_SYNC_PRIMITIVES - _STMT_COVER_EXCLUDE) | (_CUB_COLLECTIVES if cub else frozenset()),
                                 record=False)
        pieces = assemble(user_text)
        seeds = _SYNC_PRIMITIVES | warp_funcs | stmt_funcs
        if cub:
            seeds |= _CUB_COLLECTIVES
        tainted = scan.tainted(seeds)
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
        reg = ["", f'# 1 "{_GLUE_FILE}"', "namespace __emu_glue {"]
        for i, e in enumerate(exprs):
            # `k<float>` -> &k<float>; `&k<float>` or a cast expression yielding the pointer as is
            ptr_expr = e if e.startswith(("&", "(")) or e.endswith(")") else f"&{e}"
            # (a reserved name: the user's own kernel may be called k0, and `constexpr auto k0 = &k0;`
            # here named itself)
            reg.append(f"constexpr auto __emu_entry_{i} = {ptr_expr};")
        descs = ", ".join(f"::__emu::entry_desc<__emu_entry_{i}>()" for i in range(len(exprs))) or "{}"
        reg.append(f"static const ::__emu::KernelDesc descs[] = {{{descs}}};")
        cnames = ", ".join(json.dumps(t["name"]) for t in table) or '""'
        reg.append(f"static const char* const names[] = {{{cnames}}};")
        syncs = ", ".join("true" if t["uses_sync"] else "false" for t in table) or "false"
        reg.append(f"static const bool fibers[] = {{{syncs}}};")
        reg.append(f"static constexpr int count = {len(exprs)};")
        reg.append("}  // namespace __emu_glue")
        reg.append(
            'extern "C" __attribute__((visibility("default"))) int aclnn_emu_launch(int k, const unsigned* grid, '
            "const unsigned* block, void** params, size_t shmem, char* err, size_t errlen, int flags, double wd) {\n"
            "    if (k < 0 || k >= __emu_glue::count) return 2;\n"
            "    return ::__emu::launch_entry(__emu_glue::descs[k], __emu_glue::names[k], __emu_glue::fibers[k], "
            "grid, block, params, shmem, err, errlen, flags, wd);\n}"
        )
        reg.append(
            'extern "C" __attribute__((visibility("default"))) int aclnn_emu_set_rt(const EmuRtApi* api) {\n'
            "    if (!api || api->version != ::__emu::kRtVersion) return 1;\n"
            "    ::__emu::g_rt = api;\n    return 0;\n}"
        )
        reg.append(
            'extern "C" __attribute__((visibility("default"))) int aclnn_emu_kernel_info(int k, unsigned* n, '
            "const unsigned** sizes, const char** kinds) {\n"
            "    if (k < 0 || k >= __emu_glue::count) return 1;\n"
            "    *n = __emu_glue::descs[k].nparams; *sizes = __emu_glue::descs[k].sizes; *kinds = __emu_glue::descs[k].kinds;\n"
            "    return 0;\n}"
        )
        reg.append(
            'extern "C" __attribute__((visibility("default"))) const void* aclnn_emu_var_info(int k, size_t* size) {\n'
            "    if (k < 0 || k >= __emu_glue::count) return nullptr;\n"
            "    *size = __emu_glue::descs[k].var_size;\n    return __emu_glue::descs[k].var;\n}"
        )

        def build(text: str):
            """g++ on the module's text with the glue appended."""
            with open(ii, "w") as f:
                f.write(text)
                f.write("\n".join(reg) + "\n")
            return _run([cxx, *flags, "-shared", ii, "-o", tmp_so, *_LINK_FLAGS], "compilation")

        r = build("".join(pieces))
        if r.returncode != 0 and (plain := assemble(rewritten(shifts=False), split=False)) != pieces:
            # the shift rewrite or a split statement met code it got wrong (or the source has an error of
            # its own): build the text as written (its shifts keep the -fsanitize=shift-exponent check),
            # with the statement convergence points but no statement split
            pieces = plain
            r = build("".join(pieces))
        if r.returncode != 0 and stmt_funcs and (plain := assemble(rewritten(shifts=False), split=False,
                                                                   points=False)) != pieces:
            # a statement convergence point the analysis put where g++ does not take a statement: the
            # module as before the points (a compile error of valid CUDA would be worse than the race
            # they emulate), said on stderr when that builds (else the source has an error of its own)
            pieces = plain
            r = build("".join(pieces))
            if r.returncode == 0:
                sys.stderr.write(f"aclnn-py emulator: warning: {fname}: built without statement convergence "
                                 "points (the module did not compile with them; please report it)\n")
        if r.returncode != 0 and _FORCEINLINE in "".join(pieces) and "always_inline" in r.stderr:
            # CUDA's __forceinline__ is a strong request that nvcc may decline (a recursive function:
            # a warning, then a call); g++ refuses to build what it cannot inline. Build again with
            # __forceinline__ as a plain inline.
            r = build("".join(pieces).replace(_FORCEINLINE, "__inline__"))
        if r.returncode != 0:
            log = _unfinished_source(r.stderr, code, fname) or r.stderr[-30000:]
            raise CompileException(f"g++ could not compile {fname} for the emulator:\n" + _explain(log, code))
        with open(tmp_meta, "w") as f:
            json.dump({"kernels": table, "version": _EMU_VERSION, "globals": _module_globals(tmp_so)}, f)
        os.replace(tmp_meta, meta_path)
        os.replace(tmp_so, so_path)
        return table
    finally:
        for p in (tmp_base, src, ii, tmp_so, tmp_meta):
            try:
                os.unlink(p)
            except OSError:
                pass
        shutil.rmtree(tmp_base + ".shield", ignore_errors=True)
