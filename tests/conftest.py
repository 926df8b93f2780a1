import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# an exception inside phase 1 is a bug: let it fail the test instead of becoming status 561003
os.environ.setdefault("ACLNN_PY_STRICT", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from aclnn_py import acl  # noqa: E402
from aclnn_py.backends import get_backend  # noqa: E402


def pytest_report_header(config):
    be = get_backend()
    return f"aclnn-py backend: {be.name} ({', '.join(f'{k}={v}' for k, v in be.info().items())})"


def pytest_collection_modifyitems(config, items):
    if get_backend().name != "cuda":
        skip = pytest.mark.skip(reason="needs a CUDA GPU (CuPy); this run uses the host emulator")
        for item in items:
            if "cuda" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def acl_runtime():
    """The runtime, initialised once: device 0 (a GPU when present, else the host emulator)."""
    assert acl.init() == 0, acl.get_recent_err_msg()
    assert acl.rt.set_device(0) == 0, acl.get_recent_err_msg()
    yield
    acl.rt.reset_device(0)
    acl.finalize()


@pytest.fixture
def stream():
    s, ret = acl.rt.create_stream()
    assert ret == 0
    yield s
    assert acl.rt.destroy_stream(s) == 0


@pytest.fixture
def d(acl_runtime):
    """Device buffers for a kernel test (harness.Dev), freed after it."""
    from harness import Dev
    dv = Dev()
    yield dv
    dv.free()

