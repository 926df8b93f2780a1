"""What CUDA toolkit this process would use, and whether its pieces fit: the NVIDIA driver, CuPy,
NVRTC, the CUDA headers and the ``nvidia-*`` wheels. Used by ``aclnn-py info`` and ``aclnn-py doctor``;
needs no GPU and imports CuPy only when it is installed.

Note [One CUDA major version]
    CuPy 14 takes NVRTC and the CUDA headers from the ``cupy-cuda12x[ctk]`` / ``cupy-cuda13x[ctk]``
    wheels (``cuda-toolkit`` and the ``nvidia-*`` packages it pulls). A second major version in the
    same environment (e.g. ``nvidia-cuda-nvrtc`` 13 next to ``cupy-cuda12x``) can be the one that
    is loaded, and kernels then fail to compile or to load. The driver must support the CUDA major
    version CuPy was built for (a 12.x driver cannot run CUDA 13 code).
"""
from __future__ import annotations

import ctypes
import importlib.metadata as md
import os
import re
from pathlib import Path

import attrs

__all__ = ["Finding", "Report", "cuda_report", "driver_version", "cuda_include_dir", "cuda_wheels",
           "wheel_cuda_major", "fmt_version"]

# wheels whose version's major number is the CUDA major version they belong to
_VERSIONED_LIKE_CUDA = ("nvidia-cuda-nvrtc", "nvidia-cuda-runtime", "nvidia-nvjitlink", "nvidia-cuda-cccl",
                        "nvidia-cuda-nvcc", "cuda-toolkit", "cuda-bindings")


def fmt_version(v: int | None) -> str:
    """12040 -> '12.4' (CUDA's encoding: 1000 * major + 10 * minor)."""
    return "none" if v is None else f"{v // 1000}.{(v % 1000) // 10}"


def wheel_cuda_major(name: str, version: str) -> int | None:
    """The CUDA major version an installed wheel belongs to, when its name or version says it."""
    n = name.lower().replace("_", "-")
    m = re.search(r"-cu(\d{2,3})$", n) or re.match(r"cupy-cuda(\d{2,3})x$", n)
    if m:
        return int(m.group(1)[:2])
    if n in _VERSIONED_LIKE_CUDA:
        try:
            return int(version.split(".")[0])
        except ValueError:
            return None
    return None


def cuda_wheels() -> dict[str, str]:
    """Installed CUDA-related distributions: name -> version."""
    out = {}
    for d in md.distributions():
        name = (d.metadata["Name"] or "").lower().replace("_", "-")
        if name.startswith(("nvidia-", "cupy", "cuda-")):
            out[name] = d.version
    return out


def driver_version() -> int | None:
    """``cuDriverGetVersion`` through libcuda (no CuPy, no GPU needed): None when no driver is installed."""
    for lib in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
        try:
            cuda = ctypes.CDLL(lib)
        except OSError:
            continue
        v = ctypes.c_int(0)
        try:
            # a stub libcuda (no driver behind it) answers success with version 0
            if cuda.cuDriverGetVersion(ctypes.byref(v)) == 0 and v.value > 0:
                return v.value
        except AttributeError:
            pass
    return None


def cuda_include_dir(cp=None) -> str | None:
    """A directory holding ``cuda_fp16.h``: CuPy's CUDA path, the ``nvidia-cuda-runtime`` wheels, else a
    toolkit (``CUDA_PATH`` / ``CUDA_HOME`` / ``/usr/local/cuda``)."""
    cands: list[Path] = []
    if cp is not None:
        try:
            from cupy import _environment
            p = _environment.get_cuda_path()
            if p:
                cands.append(Path(p) / "include")
        except Exception:
            pass
    for dist in ("nvidia-cuda-runtime", "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime-cu13"):
        try:
            for f in md.files(dist) or []:
                if str(f).endswith("include/cuda_fp16.h"):
                    cands.append(Path(f.locate()).resolve().parent)
        except md.PackageNotFoundError:
            continue
    for d in (os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if d:
            cands.append(Path(d) / "include")
    for c in cands:
        if (c / "cuda_fp16.h").is_file():
            return str(c)
    return None


def _nvrtc_version(cp) -> tuple[tuple[int, int] | None, str]:
    if cp is not None:
        try:
            return tuple(cp.cuda.nvrtc.getVersion()), "CuPy's NVRTC"
        except Exception as e:
            return None, f"CuPy's NVRTC did not load ({type(e).__name__}: {e})"
    try:
        from cuda.bindings import nvrtc
        err, major, minor = nvrtc.nvrtcVersion()
        if err == nvrtc.nvrtcResult.NVRTC_SUCCESS:
            return (major, minor), "cuda-bindings (compile-only check)"
    except Exception:
        pass
    return None, "not found"


@attrs.frozen
class Finding:
    """One verdict: ``ok`` True (good), False (a problem, with ``fix``), None (not applicable here)."""
    item: str
    ok: bool | None
    detail: str
    fix: str = ""


@attrs.frozen
class Report:
    driver: int | None
    cupy: str | None               # CuPy's version, None when not installed
    cupy_package: str | None
    cupy_cuda_major: int | None
    cupy_error: str | None
    runtime: int | None
    nvrtc: tuple[int, int] | None
    nvrtc_source: str
    headers: str | None
    wheels: dict

    def findings(self) -> list[Finding]:
        out = []
        if self.driver is None:
            out.append(Finding("driver", None, "no NVIDIA driver (libcuda) on this machine: the GPU parts are "
                               "unavailable, the host emulator runs everything",
                               "on a GPU machine install the NVIDIA driver"))
        else:
            out.append(Finding("driver", True, f"NVIDIA driver supporting CUDA {fmt_version(self.driver)}"))
        if self.cupy is None:
            out.append(Finding("cupy", None if self.driver is None else False,
                               self.cupy_error or "CuPy is not installed",
                               "pip install 'aclnn-py[cuda12]' (driver for CUDA 12) or 'aclnn-py[cuda13]'"))
        else:
            major = int(self.cupy.split(".")[0]) if self.cupy.split(".")[0].isdigit() else 0
            ok = major >= 14
            out.append(Finding("cupy", ok, f"CuPy {self.cupy} ({self.cupy_package or 'source build'}, CUDA "
                               f"{self.cupy_cuda_major or '?'})", "" if ok else
                               "CuPy >= 14 is needed (struct/bfloat16 kernel arguments): pip install -U "
                               "'aclnn-py[cuda12]' or '[cuda13]'"))
        if self.driver is not None and self.cupy_cuda_major is not None:
            ok = self.driver // 1000 >= self.cupy_cuda_major
            out.append(Finding("driver fits CuPy", ok,
                               f"driver CUDA {fmt_version(self.driver)} vs CuPy built for CUDA {self.cupy_cuda_major}",
                               "" if ok else f"upgrade the driver to one for CUDA {self.cupy_cuda_major}, or use "
                               f"'aclnn-py[cuda{self.driver // 1000}]' (pip uninstall {self.cupy_package} first)"))
        if self.nvrtc is None:
            out.append(Finding("nvrtc", None if self.cupy is None else False, f"NVRTC: {self.nvrtc_source}",
                               "pip install 'cupy-cuda12x[ctk]' / 'cupy-cuda13x[ctk]' (the aclnn-py cuda12/cuda13 "
                               "extras); for the compile-only check without a GPU: 'aclnn-py[nvrtc]'"))
        else:
            want = self.cupy_cuda_major
            ok = want is None or self.nvrtc[0] == want
            out.append(Finding("nvrtc", ok, f"NVRTC {self.nvrtc[0]}.{self.nvrtc[1]} ({self.nvrtc_source})",
                               "" if ok else f"NVRTC {self.nvrtc[0]} next to CuPy for CUDA {want}: pip install "
                               f"'cupy-cuda{want}x[ctk]' and uninstall the CUDA {self.nvrtc[0]} NVRTC wheel"))
        majors: dict[int, list[str]] = {}
        for n, v in sorted(self.wheels.items()):
            m = wheel_cuda_major(n, v)
            if m is not None:
                majors.setdefault(m, []).append(f"{n} {v}")
        if len(majors) > 1:
            keep = self.cupy_cuda_major
            drop = [w.split()[0] for m, ws in majors.items() if m != keep for w in ws] if keep else []
            out.append(Finding("one CUDA version", False, "CUDA wheels of several major versions are installed: " +
                               "; ".join(f"CUDA {m}: {', '.join(ws)}" for m, ws in sorted(majors.items())),
                               f"pip uninstall {' '.join(drop)}" if drop else
                               "keep the wheels of one CUDA major version only"))
        else:
            out.append(Finding("one CUDA version", True if majors else None,
                               f"CUDA {next(iter(majors))} wheels only" if majors else "no CUDA wheels installed"))
        if self.headers is None:
            out.append(Finding("headers", None if self.cupy is None and self.nvrtc is None else False,
                               "cuda_fp16.h not found", "install the [ctk] CuPy wheel (aclnn-py[cuda12]/[cuda13]) or "
                               "set CUDA_PATH to a CUDA toolkit"))
        else:
            out.append(Finding("headers", True, f"CUDA headers in {self.headers}"))
        return out

    @property
    def fits(self) -> bool:
        return not any(f.ok is False for f in self.findings())

    def as_info(self) -> dict:
        rows = {
            "cupy": f"{self.cupy} ({self.cupy_package or 'source build'}, built for CUDA {self.cupy_cuda_major})"
                    if self.cupy else f"not found ({self.cupy_error or 'not installed'})",
            "cuda driver": f"{fmt_version(self.driver)}" if self.driver else "not found (no NVIDIA driver)",
            "cuda runtime": fmt_version(self.runtime) if self.runtime else "none",
            "nvrtc": f"{self.nvrtc[0]}.{self.nvrtc[1]} ({self.nvrtc_source})" if self.nvrtc else self.nvrtc_source,
            "cuda headers": self.headers or "not found",
        }
        bad = [f for f in self.findings() if f.ok is False]
        rows["toolkit fit"] = "ok" if not bad else "NO: " + "; ".join(f"{f.item}: {f.detail} -> {f.fix}" for f in bad)
        if not bad and self.cupy is None:
            rows["toolkit fit"] = "no CuPy (host emulator only)"
        return rows


def _import_cupy():
    try:
        import cupy
        return cupy, None
    except Exception as e:     # not installed, or a broken install (its message says why)
        return None, f"{type(e).__name__}: {e}".splitlines()[0]


def cuda_report(cp=None) -> Report:
    """Probe the toolkit (``cp``: an imported CuPy module, else imported here when installed)."""
    wheels = cuda_wheels()
    err = None
    if cp is None:
        if any(n.startswith("cupy") for n in wheels):
            cp, err = _import_cupy()
        else:
            err = "CuPy is not installed"
    pkg = next((n for n in wheels if re.match(r"cupy(-cuda\d+x)?$", n)), None)
    version = getattr(cp, "__version__", None) if cp is not None else (wheels.get(pkg) if pkg else None)
    runtime = None
    major = wheel_cuda_major(pkg, wheels.get(pkg, "")) if pkg else None
    if cp is not None:
        try:
            runtime = int(cp.cuda.runtime.runtimeGetVersion())
            major = major or runtime // 1000
        except Exception:
            pass
    drv = None
    if cp is not None:
        try:
            drv = int(cp.cuda.runtime.driverGetVersion())
        except Exception:
            drv = None
    if drv is None:
        drv = driver_version()
    nv, src = _nvrtc_version(cp)
    return Report(driver=drv, cupy=version, cupy_package=pkg, cupy_cuda_major=major, cupy_error=err,
                  runtime=runtime, nvrtc=nv, nvrtc_source=src, headers=cuda_include_dir(cp), wheels=wheels)
