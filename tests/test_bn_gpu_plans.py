"""The BatchNorm plans a GPU gets, run on the emulator. On the host the BatchNorm family launches its
kernels with one warp per block and few blocks (``_bn_plan``'s host profile); what a GPU runs —
256-thread blocks, occupancy-sized grids, many reduction splits — is exercised here, with the GPU
profile forced, on every sample of the family's op database."""
from __future__ import annotations

import numpy as np
import pytest

from aclnn_py.opdef import REGISTRY
from aclnn_py.ops import _bn_plan
from harness import samples_match_reference
from opdb import OP_DB

INFOS = [i for i in OP_DB if REGISTRY[i.name].module == "batch_norm"]


@pytest.fixture
def gpu_profile(monkeypatch):
    _bn_plan.force_profile("gpu")
    for info in INFOS:  # plans made with the host profile must not be reused, nor these kept
        monkeypatch.setattr(REGISTRY[info.name].plan_cache, "_d", {})
    yield
    _bn_plan.force_profile(None)


def test_profiles_differ():
    """The host profile is not the GPU's (else this file tests nothing new)."""
    shape = (8, 64, 3136)
    _bn_plan.force_profile("gpu")
    try:
        gpu = _bn_plan.plan_reduction(*shape, False), _bn_plan.plan_elementwise(*shape, True)
    finally:
        _bn_plan.force_profile("host")
    try:
        host = _bn_plan.plan_reduction(*shape, False), _bn_plan.plan_elementwise(*shape, True)
    finally:
        _bn_plan.force_profile(None)
    assert gpu[0][1] == (256, 1, 1) and host[0][1] == (4, 8, 1)
    assert gpu[1][1] == (16, 16, 1) and host[1][1] == (16, 2, 1)
    assert gpu != host
    with pytest.raises(ValueError):
        _bn_plan.force_profile("tpu")


@pytest.mark.parametrize("info", INFOS, ids=lambda i: i.name)
def test_gpu_plans_match_the_reference(info, gpu_profile):
    assert samples_match_reference(REGISTRY[info.name], info, np.random.default_rng(13)) >= 10
