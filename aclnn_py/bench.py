"""``aclnn-py bench``: the benchmarks in ``benchmarks/`` (shipped in the wheel too)."""
from __future__ import annotations

import importlib.util

from ._paths import _find


def main() -> int:
    path = _find("benchmarks") / "bench_ops.py"
    spec = importlib.util.spec_from_file_location("aclnn_py_bench_ops", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.main()
