"""The command line (info, samples, support) and the wheel installed into a fresh virtual environment."""
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(args, cwd=None, env=None, timeout=900):
    e = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.run(args, cwd=cwd, env=e, capture_output=True, text=True, timeout=timeout)


def test_info():
    r = _run([sys.executable, "-m", "aclnn_py.cli", "info"])
    assert r.returncode == 0, r.stderr
    assert "devices: 1" in r.stdout or "devices:" in r.stdout
    assert "kernel cache" in r.stdout or "cupy" in r.stdout


def test_samples_all_pass():
    r = _run([sys.executable, "-m", "aclnn_py.cli", "samples"])
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [ln for ln in r.stdout.splitlines() if ln.strip().startswith(("PASS", "FAIL"))]
    assert lines and all(ln.strip().startswith("PASS") for ln in lines), r.stdout
    assert "samples passed" in r.stdout


def test_support_table_is_live():
    r = _run([sys.executable, "-m", "aclnn_py.cli", "support", "--format", "md"])
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "PhOS Support: cuDNN 8.0 - Operations Training (" in out
    assert "| 2000 | `cudnnActivationBackward` |" in out and "| 2020 | `cudnnSpatialTfSamplerBackward` |" in out
    row = next(ln for ln in out.splitlines() if "`aclnnBatchNormElemtBackward`" in ln)
    assert row.count("☑") == 2, row          # supported, and its conformance check passed just now


@pytest.mark.slow
def test_wheel_installs_into_a_fresh_venv(tmp_path):
    """Build the wheel, install it non-editable into a new venv, run ``aclnn-py info`` elsewhere."""
    wheel_dir = tmp_path / "wheel"
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(wheel_dir), str(ROOT)],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    wheel = next(wheel_dir.glob("aclnn_py-*.whl"))
    import zipfile
    names = zipfile.ZipFile(wheel).namelist()
    for must in ("aclnn_py/_data/kernels/batch_norm.cu", "aclnn_py/_data/kernels/include/aclnn_common.cuh",
                 "aclnn_py/_data/status_codes/aclnn_status.csv", "aclnn_py/emulator/include/cuda_emu.h",
                 "aclnn_py/_data/samples/01_batch_norm_elemt_backward.py"):
        assert must in names, must
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", str(wheel)], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["ACLNN_PY_CACHE_DIR"] = str(tmp_path / "cache")
    r = subprocess.run([str(env_dir / "bin" / "aclnn-py"), "info"], cwd=elsewhere, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "_data/kernels" in r.stdout          # found inside the installed package, not the checkout
    r = subprocess.run([str(env_dir / "bin" / "aclnn-py"), "samples", "01_batch_norm_elemt_backward"], cwd=elsewhere,
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr


def test_benchmark_paths_run_on_tiny_shapes():
    """The benchmark's own code (argument builders, event timing) runs for every op and layout."""
    import importlib.util
    import aclnn_py as A
    from aclnn_py import acl
    from aclnn_py.opdef import OPS
    spec = importlib.util.spec_from_file_location("bench_bn", ROOT / "benchmarks" / "bench_batch_norm.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    stream, _ = acl.rt.create_stream()
    for name, reg in OPS.items():
        for dt in (A.ACL_FLOAT, A.ACL_BF16):
            for cl in (False, True):
                us = bench.time_op(reg, (2, 3, 3, 4) if cl else (2, 4, 3, 3), dt, cl, stream, reps=2)
                assert us >= 0, name
    acl.rt.destroy_stream(stream)
