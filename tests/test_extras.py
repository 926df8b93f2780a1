"""Install extras (issue 14 item 1): each CUDA extra gives one consistent toolkit, the `test` extra
carries no CUDA wheel, CI installs what the suite needs.

The static checks read pyproject.toml; the resolver checks run pip's resolver in a dry run
(``pip install --dry-run --report``) on each extra's requirements and look at the CUDA major version of
every wheel it would install. They need a package index; without one they skip.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib
from pathlib import Path

import pytest

from aclnn_py.toolkit import wheel_cuda_major

ROOT = Path(__file__).resolve().parent.parent
EXTRAS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def _names(reqs) -> list[str]:
    return [re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower() for r in reqs]


def test_cuda_extras_take_cupys_own_toolkit():
    assert EXTRAS["cuda12"] == ["cupy-cuda12x[ctk]>=14"]
    assert EXTRAS["cuda13"] == ["cupy-cuda13x[ctk]>=14"]


def test_test_extra_has_no_cuda_wheels_and_nvrtc_has_its_own():
    assert not [n for n in _names(EXTRAS["test"]) if n.startswith(("nvidia-", "cuda-", "cupy"))], EXTRAS["test"]
    assert {"cuda-bindings", "nvidia-cuda-nvrtc", "nvidia-cuda-runtime"} <= set(_names(EXTRAS["nvrtc"]))
    assert all("<14" in r for r in EXTRAS["nvrtc"])          # one major version, never a future one


def test_ci_and_readme_install_what_the_suite_needs():
    ci = (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    cmd = 'pip install ".[test,nvrtc]" && python -m pytest -q'
    assert cmd in ci and cmd in readme


def _resolve(extras: tuple[str, ...]) -> dict[str, str]:
    reqs = [r for e in extras for r in EXTRAS[e]]
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                        "--no-input", "--report", "-", *reqs], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        if re.search(r"No matching distribution|Could not find a version|connection|Network|resolve",
                     r.stderr, re.I):
            pytest.skip(f"no package index reachable for {reqs}: {r.stderr.strip().splitlines()[-1:]}")
        pytest.fail(r.stderr)
    report = json.loads(r.stdout)
    return {i["metadata"]["name"].lower().replace("_", "-"): i["metadata"]["version"] for i in report["install"]}


@pytest.mark.slow
@pytest.mark.parametrize("extras,major", [(("cuda12",), 12), (("cuda13",), 13), (("cuda12", "test"), 12),
                                          (("cuda13", "test"), 13), (("test", "nvrtc"), 13)],
                         ids=lambda v: "+".join(v) if isinstance(v, tuple) else str(v))
def test_extras_resolve_to_one_cuda_major(extras, major):
    got = _resolve(extras)
    majors = {n: wheel_cuda_major(n, v) for n, v in got.items()}
    tagged = {n: m for n, m in majors.items() if m is not None}
    assert tagged and set(tagged.values()) == {major}, tagged
    if "cuda12" in extras or "cuda13" in extras:
        # the ctk extra brings NVRTC and the headers (cuda-runtime) of CuPy's major version
        assert any(n.startswith("nvidia-cuda-nvrtc") for n in got), sorted(got)
        assert any(n.startswith("nvidia-cuda-runtime") for n in got), sorted(got)
        assert int(got[f"cupy-cuda{major}x"].split(".")[0]) >= 14
