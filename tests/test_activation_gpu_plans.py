"""The elementwise plans a GPU gets, run on the emulator. On the host the activation family gives each
CUDA thread one long run; a GPU gives each thread one 16-byte vector per step, which the kernels load
and store as one vector when the pointers allow (kernels/include/aclnn/elementwise.cuh). Here every
sample of the family's op database (dense, strided and offset views, odd sizes with a tail) runs with
the GPU's profile forced, against the float64 reference."""
from __future__ import annotations

import numpy as np
import pytest

from aclnn_py.opdef import REGISTRY
from aclnn_py.plan import force_profile
from harness import samples_match_reference
from opdb import OP_DB

INFOS = [i for i in OP_DB if REGISTRY[i.name].module == "activation"]


@pytest.fixture
def gpu_profile():
    force_profile("gpu")
    yield
    force_profile(None)


@pytest.mark.parametrize("info", INFOS, ids=lambda i: i.name)
def test_gpu_vector_plans_match_the_reference(info, gpu_profile, monkeypatch):
    reg = REGISTRY[info.name]
    monkeypatch.setattr(reg.plan_cache, "_d", {})          # plans made with the host profile must not be reused
    assert samples_match_reference(reg, info, np.random.default_rng(13)) >= 10
