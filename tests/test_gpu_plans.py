"""The launch plans a GPU gets, run on the emulator (CI has no GPU). Families whose plans differ on
the host (``aclnn_py.plan.on_host()``) are run here with the GPU's profile forced, on every sample of
their op database (dense, strided and offset views, odd sizes), against the float64 reference:

* activation: on the host each CUDA thread takes one long run; a GPU gives each thread one 16-byte
  vector per step, loaded and stored as one vector when the pointers allow
  (kernels/include/aclnn/elementwise.cuh);
* softmax: on the host rows of up to HOST_ROW_MAX elements take the per-thread column kernel (a
  warp's shuffles are fiber switches on the emulator); a GPU runs the warp-row kernel;
* grid_sampler: one warp per block on the host, 256-thread blocks on a GPU.

The BatchNorm family's GPU plans have their own file (tests/test_bn_gpu_plans.py)."""
from __future__ import annotations

import numpy as np
import pytest

from aclnn_py.opdef import REGISTRY
from aclnn_py.plan import force_profile
from harness import samples_match_reference
from opdb import OP_DB

FAMILIES = ("activation", "softmax", "grid_sampler")
INFOS = [i for i in OP_DB if REGISTRY[i.name].module in FAMILIES]


@pytest.fixture
def gpu_profile():
    force_profile("gpu")
    yield
    force_profile(None)


@pytest.mark.parametrize("info", INFOS, ids=lambda i: i.name)
def test_gpu_plans_match_the_reference(info, gpu_profile, monkeypatch):
    reg = REGISTRY[info.name]
    monkeypatch.setattr(reg.plan_cache, "_d", {})          # plans made with the host profile must not be reused
    assert samples_match_reference(reg, info, np.random.default_rng(13)) >= 10
