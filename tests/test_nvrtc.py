"""Compile-only check of every kernel source with NVRTC (no GPU or driver needed).

Every ``kernels/*.cu`` (include dir ``kernels/include``) and every
``tests/emulator_kernels/*.cu`` is compiled for sm_80 and sm_90 with CuPy's option set
(``-std=c++17 -ftz=true --device-as-default-execution-space -I kernels/include -I <CUDA include>``).
Template kernels are instantiated through their name expressions, exactly like
``RawModule(name_expressions=...)``: for ``kernels/<family>.cu`` the instantiations its ops module
declares (``aclnn_py.kernel_cache.instances``, the registry), for the tests' own kernel files the
names in their ``// name_expressions: ...`` comment line. Every header of ``kernels/include`` also
compiles on its own.

NVRTC comes from the pip packages ``cuda-bindings`` + ``nvidia-cuda-nvrtc``; the CUDA headers
(cuda_fp16.h, ...) from ``nvidia-cuda-runtime`` or ``/usr/local/cuda/include``. Without NVRTC the
test falls back to ``nvcc --cubin`` when it is on PATH, and is skipped only if neither exists.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import aclnn_py  # noqa: F401  (the ops modules declare their kernel families)
from aclnn_py.kernel_cache import family_names, instances

ROOT = Path(__file__).resolve().parent.parent
KERNEL_INCLUDE = ROOT / "kernels" / "include"
ARCHS = ("sm_80", "sm_90")


def _sources() -> list[Path]:
    files = sorted((ROOT / "kernels").glob("*.cu")) + sorted((ROOT / "tests" / "emulator_kernels").glob("*.cu"))
    return files + sorted(KERNEL_INCLUDE.rglob("*.cuh"))


def name_expressions(path: Path) -> list[str]:
    if path.parent == ROOT / "kernels":
        return list(instances(path.stem))
    return family_names(path.read_text())


def _unit(path: Path) -> str:
    """The source NVRTC compiles: a kernel file, or a one-line unit including a header."""
    if path.suffix == ".cuh":
        return f'#include "{path.relative_to(KERNEL_INCLUDE).as_posix()}"\n'
    return path.read_text()


@functools.lru_cache(maxsize=None)
def cuda_include_dir() -> str | None:
    """The CUDA headers: the nvidia-cuda-runtime wheel's include dir, else a toolkit's."""
    try:
        import importlib.metadata as md

        for dist in ("nvidia-cuda-runtime", "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime-cu13"):
            try:
                files = md.files(dist) or []
            except md.PackageNotFoundError:
                continue
            for f in files:
                if str(f).endswith("include/cuda_fp16.h"):
                    return str(Path(f.locate()).resolve().parent)
    except Exception:  # pragma: no cover - metadata quirks
        pass
    for d in (os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if d and (Path(d) / "include" / "cuda_fp16.h").exists():
            return str(Path(d) / "include")
    return None


@functools.lru_cache(maxsize=None)
def nvrtc_module():
    try:
        from cuda.bindings import nvrtc
    except ImportError:
        try:
            from cuda import nvrtc  # older cuda-python layout
        except ImportError:
            return None
    try:
        err, *_ = nvrtc.nvrtcVersion()
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            return None
    except Exception:  # libnvrtc.so not found
        return None
    return nvrtc


def _options(arch: str) -> list[str]:
    opts = ["-std=c++17", "-ftz=true", "--device-as-default-execution-space", f"-arch={arch}", f"-I{KERNEL_INCLUDE}"]
    inc = cuda_include_dir()
    if inc:
        opts.append(f"-I{inc}")
    return opts


def compile_nvrtc(nvrtc, path: Path, arch: str) -> tuple[bool, str]:
    src = _unit(path)
    names = name_expressions(path)
    unit_name = path.name if path.suffix == ".cu" else f"{path.stem}_unit.cu"   # a header must not include itself
    err, prog = nvrtc.nvrtcCreateProgram(src.encode(), unit_name.encode(), 0, [], [])
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, err
    try:
        for n in names:
            (err,) = nvrtc.nvrtcAddNameExpression(prog, n.encode())
            assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, (n, err)
        opts = [o.encode() for o in _options(arch)]
        (res,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        _, size = nvrtc.nvrtcGetProgramLogSize(prog)
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(prog, log)
        text = log.decode(errors="replace").rstrip("\x00 \n")
        if res != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            return False, text
        for n in names:  # every name expression was instantiated
            err, lowered = nvrtc.nvrtcGetLoweredName(prog, n.encode())
            if err != nvrtc.nvrtcResult.NVRTC_SUCCESS or not lowered:
                return False, f"name expression {n!r} has no lowered name ({err})\n{text}"
        err, cubin_size = nvrtc.nvrtcGetCUBINSize(prog)
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS or (cubin_size == 0 and path.suffix == ".cu"):
            return False, f"no cubin produced ({err})\n{text}"
        return True, text
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def compile_nvcc(nvcc: str, path: Path, arch: str, tmp: Path) -> tuple[bool, str]:
    src = _unit(path)
    names = name_expressions(path)
    unit = tmp / (path.stem + ".cu")
    # instantiate the name expressions through pointers, so templates really compile
    inst = "".join(f"\nstatic void* __nvrtc_check_{i} = (void*)&{n};" for i, n in enumerate(names))
    unit.write_text(src + inst + "\n")
    cmd = [nvcc, f"-arch={arch}", "--cubin", "-std=c++17", "-ftz=true", f"-I{KERNEL_INCLUDE}", "-o",
           str(tmp / (path.stem + f"_{arch}.cubin")), str(unit)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("path", _sources(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_kernel_source_compiles(path: Path, arch: str, tmp_path: Path):
    nvrtc = nvrtc_module()
    if nvrtc is not None:
        if cuda_include_dir() is None:
            pytest.fail("NVRTC found but no CUDA headers (pip install nvidia-cuda-runtime, or set CUDA_PATH)")
        ok, log = compile_nvrtc(nvrtc, path, arch)
    else:
        nvcc = shutil.which("nvcc")
        if nvcc is None:
            pytest.skip("neither NVRTC (pip install cuda-bindings nvidia-cuda-nvrtc nvidia-cuda-runtime) nor nvcc is available")
        ok, log = compile_nvcc(nvcc, path, arch, tmp_path)
    assert ok, f"{path.name} does not compile for {arch}:\n{log}"


def test_there_are_sources():
    assert any(p.parent.name == "emulator_kernels" for p in _sources())


def test_every_kernel_file_is_a_declared_family():
    """kernels/<family>.cu exists for each declared family and declares instantiations (no stale files)."""
    from aclnn_py.kernel_cache import families
    stems = {p.stem for p in (ROOT / "kernels").glob("*.cu")}
    assert stems == set(families()), (stems, sorted(families()))
    assert all(families().values())
