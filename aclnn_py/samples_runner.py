"""``aclnn-py samples``: run every program in ``samples/`` on the default device, one verdict line each.

A sample is a standalone program in CANN's sample order (init → set_device → stream → host data →
malloc + memcpy → aclCreateTensor → phase 1 → workspace → phase 2 → synchronize → copy back →
print → destroy → reset device → finalize). It defines ``APIS`` (the APIs it exercises) and
``main(verbose=True) -> int`` (0 when every return code was 0 and the result matched its NumPy
reference).
"""
from __future__ import annotations

import importlib.util
import io
import sys
import time
import traceback
from contextlib import redirect_stdout
from pathlib import Path

from ._paths import samples_dir


def sample_paths() -> list[Path]:
    return sorted(p for p in samples_dir().glob("[0-9]*.py"))


def load_sample(path: Path):
    if str(path.parent) not in sys.path:    # samples import their shared helpers (acl_sample.py)
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(f"aclnn_py_sample_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_sample(path: Path, verbose: bool = False) -> tuple[bool, str, float]:
    """(passed, captured output, seconds)."""
    buf = io.StringIO()
    t0 = time.perf_counter()
    try:
        with redirect_stdout(buf if not verbose else sys.stdout):
            ok = load_sample(path).main() == 0
    except Exception:
        buf.write(traceback.format_exc())
        ok = False
        from . import acl
        if acl._state.state.initialized:   # a failed sample must not leave the runtime to the next one
            acl.finalize()
    return ok, buf.getvalue(), time.perf_counter() - t0


def _warm_kernels() -> None:
    """Build every kernel family first, in parallel (a cold cache on the emulator: ~35 s on 2 cores
    instead of each sample compiling its families one after another), with a progress line per
    family when it takes a while; a warm cache only loads them. A family that fails to build is left
    to the samples that need it (they report it)."""
    from . import kernel_cache
    t0 = time.perf_counter()

    def progress(done, n, fam, err):
        if err or time.perf_counter() - t0 > 1.0:
            print(f"  kernels {done}/{n}: {fam}{' FAILED' if err else ''} ({time.perf_counter() - t0:.1f} s)",
                  file=sys.stderr, flush=True)
    kernel_cache.compile_all(progress=progress)


def run_samples(names=(), verbose: bool = False) -> int:
    from .backends import get_backend
    paths = [p for p in sample_paths() if not names or p.stem in names or p.stem.split("_", 1)[-1] in names]
    print(f"aclnn-py samples on the {get_backend().name} backend ({len(paths)} programs)")
    _warm_kernels()
    failed = []
    for p in paths:
        ok, out, dt = run_sample(p, verbose)
        print(f"  {'PASS' if ok else 'FAIL'}  {p.stem:<45} {dt:6.2f} s")
        if not ok:
            failed.append(p.stem)
            print("    " + "\n    ".join(out.strip().splitlines()[-15:]))
    print(f"{len(paths) - len(failed)}/{len(paths)} samples passed" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed or not paths else 0
