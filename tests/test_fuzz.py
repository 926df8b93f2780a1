"""The fuzz suite (issue 9): hypothesis-driven, seeded, each target in a child process so a crash or a
hang is a failed test. Targets live in ``tests/fuzz_targets.py``.

CI budget: ``ACLNN_PY_FUZZ_EXAMPLES`` examples per target (default 25 here: a few seconds in all).
Run longer, e.g. ``ACLNN_PY_FUZZ_EXAMPLES=2000 ACLNN_PY_FUZZ_SEED=7 python -m pytest tests/test_fuzz.py``.
"""
import os
import subprocess
import sys

import pytest

import aclnn_py as A

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.environ.get("ACLNN_PY_FUZZ_EXAMPLES", "25")


def _run(*args, timeout=300):
    env = dict(os.environ, ACLNN_PY_STRICT="1", ACLNN_PY_FUZZ_EXAMPLES=EXAMPLES)
    r = subprocess.run([sys.executable, os.path.join(HERE, "fuzz_targets.py"), *args], capture_output=True,
                       text=True, timeout=timeout, env=env)
    assert r.returncode == 0 and "fuzz ok" in r.stdout, (
        f"fuzz target {args} exited with {r.returncode} (negative: killed by a signal)\n"
        f"{r.stdout[-3000:]}\n{r.stderr[-6000:]}")


@pytest.mark.parametrize("target", ["runtime", "meta", "executor"])
def test_fuzz_api(target):
    _run(target)


def test_fuzz_every_op_phase1_and_phase2():
    """All registered ops in one child (``ACLNN_PY_FUZZ_OP_EXAMPLES`` calls each, default 8)."""
    _run("ops")
