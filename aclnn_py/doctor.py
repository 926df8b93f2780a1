"""``aclnn-py doctor``: the first command on a new machine. One verdict per item, with the fix for each
failure:

* the toolkit (aclnn_py.toolkit): NVIDIA driver, CuPy, driver vs CuPy, NVRTC, one CUDA major version,
  the CUDA headers; a GPU CuPy can see;
* the host emulator's C++ compiler;
* every kernel file (``kernels/*.cu``) compiled on each backend, and every registered op run once on
  each backend with a small input (the op database's tiny case), results compared host vs CUDA.

Each backend runs in a child process (``ACLNN_PY_DEVICE=host|cuda``), so one crashing backend cannot
take the report down. Without a GPU the CUDA items say *unavailable*, and that is not a failure.
Exit status: 0 when nothing failed, 1 otherwise.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

OK, FAIL, NA = "ok", "FAIL", "n/a"
_TOL = {"float32": (1e-4, 1e-5), "float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1.6e-2)}


def _child(out: str) -> int:
    """Run in a child: compile every family and run every op's tiny case on this process's backend."""
    import aclnn_py  # noqa: F401  (the ops declare their kernel families)
    from aclnn_py import acl, kernel_cache
    from aclnn_py._paths import _find
    from aclnn_py.backends import get_backend
    from aclnn_py.opdef import REGISTRY
    res: dict = {"backend": get_backend().name, "families": {}, "ops": {}}
    arrays: dict[str, np.ndarray] = {}
    try:
        assert acl.init() == 0, acl.get_recent_err_msg()
        assert acl.rt.set_device(0) == 0, acl.get_recent_err_msg()
        res["families"] = kernel_cache.compile_all(progress=lambda *a: None)
        sys.path.insert(0, str(_find("tests")))
        from harness import call_op, release  # noqa: E402
        from opdb import OP_DB  # noqa: E402
        infos = {i.name: i for i in OP_DB}
        stream, _ = acl.rt.create_stream()
        for name, reg in REGISTRY.items():
            info = infos.get(name)
            entry = res["ops"][name] = {"family": reg.module, "status": None, "error": None, "outputs": []}
            if info is None:
                entry["error"] = "no op-database entry"
                continue
            try:
                sample = _tiny(info)
                r = call_op(reg, sample, stream)
                entry["status"] = [int(r.status1), None if r.status2 is None else int(r.status2)]
                if r.status1 or r.status2:
                    entry["error"] = r.message
                else:
                    for p in reg.opdef.params:
                        if getattr(p, "out", False) and p.name in r.outputs:
                            a = r.outputs[p.name]
                            arrays[f"{name}.{p.name}"] = np.asarray(a, dtype=np.float64) if a.dtype.kind in "fV" \
                                else np.asarray(a)
                            entry["outputs"].append([p.name, str(a.dtype)])
                release(r)
            except Exception as e:    # a failing op is a verdict, not the end of the report
                entry["error"] = f"{type(e).__name__}: {e}"
        acl.rt.destroy_stream(stream)
        acl.rt.reset_device(0)
        acl.finalize()
    except Exception as e:
        res["fatal"] = f"{type(e).__name__}: {e}"
    np.savez(out + ".npz", **arrays)
    Path(out).write_text(json.dumps(res))
    return 0


def _tiny(info):
    import aclnn_py as A
    rng = np.random.default_rng(0)
    if info.bench is not None:
        return info.bench(rng, (2, 4, 3, 5), A.ACL_FLOAT, False)
    return next(s for s in info.samples(rng) if s.tensors[info.data].layout == "contiguous"
                and info.data_dtype(s) == A.ACL_FLOAT and np.size(s.tensors[info.data].values))


def _run_backend(device: str, timeout: float = 900) -> dict:
    with tempfile.TemporaryDirectory() as d:
        out = str(Path(d) / f"{device}.json")
        env = dict(os.environ, ACLNN_PY_DEVICE=device, ACLNN_PY_STRICT="0")
        try:
            r = subprocess.run([sys.executable, "-m", "aclnn_py.doctor", "--child", out], env=env,
                               capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"fatal": f"the {device} run took longer than {timeout:.0f} s"}
        if not Path(out).exists():
            tail = (r.stderr or r.stdout).strip().splitlines()[-3:]
            return {"fatal": f"the {device} run ended with status {r.returncode}: {' | '.join(tail)}"}
        res = json.loads(Path(out).read_text())
        with np.load(out + ".npz") as z:
            res["arrays"] = {k: z[k] for k in z.files}
        return res


def _line(verdict: str, item: str, detail: str, fix: str = "") -> str:
    s = f"  [{verdict:^4}] {item}: {detail}"
    return s + (f"\n         fix: {fix}" if fix and verdict == FAIL else "")


def report(run_cuda: bool | None = None, out=print) -> int:
    """Print the verdicts; returns the exit status (1 when any item failed)."""
    from . import __version__
    from .toolkit import cuda_report
    failures = 0
    out(f"aclnn-py {__version__} doctor (python {sys.version.split()[0]})")
    out("toolkit:")
    tk = cuda_report()
    for f in tk.findings():
        v = OK if f.ok else (NA if f.ok is None else FAIL)
        failures += v == FAIL
        out(_line(v, f.item, f.detail + (" — unavailable on this machine" if v == NA else ""), f.fix))
    gpu_count, gpu_detail = 0, "no CuPy"
    if tk.cupy is not None:
        try:
            import cupy
            gpu_count = cupy.cuda.runtime.getDeviceCount()
            gpu_detail = f"{gpu_count} GPU(s) visible to CuPy"
        except Exception as e:
            gpu_detail = f"CuPy sees no GPU ({type(e).__name__}: {e})"
    v = OK if gpu_count else (NA if tk.driver is None else FAIL)
    failures += v == FAIL
    out(_line(v, "gpu", gpu_detail + (" — the GPU parts are unavailable, not failed" if v == NA else ""),
              "check nvidia-smi, CUDA_VISIBLE_DEVICES, and that the driver fits CuPy (above)"))
    from .emulator import compiler_info
    try:
        out(_line(OK, "host compiler", str(compiler_info())))
    except Exception as e:
        failures += 1
        out(_line(FAIL, "host compiler", f"{type(e).__name__}: {e}", "apt-get install g++ (C++17)"))

    run_cuda = gpu_count > 0 if run_cuda is None else run_cuda
    out("running every kernel file and every op once (small inputs) on each backend ...")
    runs = {"host": _run_backend("host")}
    runs["cuda"] = _run_backend("cuda") if run_cuda else {"unavailable": gpu_detail}
    import aclnn_py  # noqa: F401
    from .kernel_cache import families
    from .opdef import REGISTRY
    out("kernel files (host emulator | CUDA):")
    for fam in sorted(families()):
        cells, fam_fail = [], False
        for be in ("host", "cuda"):
            r = runs[be]
            if "unavailable" in r:
                cells.append(f"{be}: unavailable ({r['unavailable']})")
                continue
            if "fatal" in r:
                cells.append(f"{be}: did not run ({r['fatal']})")
                fam_fail = True
                continue
            err = r["families"].get(fam)
            ops = [n for n, o in r["ops"].items() if o["family"] == fam]
            bad = [f"{n}: {r['ops'][n]['error']}" for n in ops if r["ops"][n]["error"]]
            if err:
                cells.append(f"{be}: does not build: {err.splitlines()[0][:300]}")
                fam_fail = True
            elif bad:
                cells.append(f"{be}: built; {len(bad)}/{len(ops)} ops failed: {'; '.join(b[:200] for b in bad)}")
                fam_fail = True
            else:
                cells.append(f"{be}: built" + (f", {len(ops)} ops ran" if ops else ""))
        failures += fam_fail
        fix = ("the compiler log above names the file and line; NVRTC: `python -m pytest tests/test_nvrtc.py`"
               if fam_fail else "")
        out(_line(FAIL if fam_fail else OK, f"kernels/{fam}.cu", " | ".join(cells), fix))
    out("host vs CUDA results (each op's small case):")
    h, c = runs["host"], runs["cuda"]
    if "unavailable" in c or "fatal" in c or "fatal" in h:
        out(_line(NA, "comparison", "needs both backends: " + (c.get("unavailable") or c.get("fatal")
                                                             or h.get("fatal", ""))))
    else:
        for name in REGISTRY:
            ho, co = h["ops"].get(name), c["ops"].get(name)
            if not ho or not co or ho["error"] or co["error"]:
                out(_line(NA, f"aclnn{name}", "did not run on both backends (see above)"))
                continue
            worst = []
            for oname, dt in ho["outputs"]:
                a, b = h["arrays"].get(f"{name}.{oname}"), c["arrays"].get(f"{name}.{oname}")
                rtol, atol = _TOL.get(dt, (0, 0))
                if a is None or b is None or a.shape != b.shape or \
                        not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
                    diff = np.nanmax(np.abs(a - b)) if a is not None and b is not None and a.shape == b.shape else "shape"
                    worst.append(f"{oname} differs (max |diff| {diff})")
            v = FAIL if worst else OK
            failures += v == FAIL
            out(_line(v, f"aclnn{name}", "; ".join(worst) or "host == CUDA",
                      "a kernel that differs between the GPU and the emulator: run "
                      "`python -m pytest -m cuda -k " + name + "` and compute-sanitizer (benchmarks/gpu_smoke.sh)"))
    out(f"verdict: {'all good' if not failures else f'{failures} item(s) failed'}"
        + ("" if run_cuda else " (GPU parts unavailable on this machine: not measured, not failed)"))
    return 1 if failures else 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        return _child(argv[1])
    return report()


if __name__ == "__main__":
    sys.exit(main())
