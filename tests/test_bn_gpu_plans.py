"""The BatchNorm plans a GPU gets, run on the emulator. On the host the BatchNorm family launches its
kernels with one warp per block (one thread for the NCHW reductions) and few blocks (``_bn_plan``'s
host profile); what a GPU runs — 256-thread blocks, occupancy-sized grids, many reduction splits — is exercised here, with the GPU
profile forced, on every sample of the family's op database."""
from __future__ import annotations

import numpy as np
import pytest

from aclnn_py.opdef import REGISTRY
from aclnn_py.ops import _bn_plan
from aclnn_py.plan import force_profile
from harness import samples_match_reference
from opdb import OP_DB

INFOS = [i for i in OP_DB if REGISTRY[i.name].module == "batch_norm"]


@pytest.fixture
def gpu_profile(monkeypatch):
    force_profile("gpu")
    for info in INFOS:  # plans made with the host profile must not be reused, nor these kept
        monkeypatch.setattr(REGISTRY[info.name].plan_cache, "_d", {})
    yield
    force_profile(None)


def test_profiles_differ():
    """The host profile is not the GPU's (else this file tests nothing new)."""
    shape = (8, 64, 3136)
    force_profile("gpu")
    try:
        gpu = _bn_plan.plan_reduction(*shape, False), _bn_plan.plan_elementwise(*shape, True, fused=False)
    finally:
        force_profile("host")
    try:
        host = _bn_plan.plan_reduction(*shape, False), _bn_plan.plan_elementwise(*shape, True, fused=False)
    finally:
        force_profile(None)
    assert gpu[0][1] == (256, 1, 1) and host[0][1] == (1, 1, 1)    # host NCX reductions: one thread per block
    assert gpu[1][1] == (16, 16, 1) and host[1][1] == (1, 32, 1)   # host NHWC elementwise: whole rows per thread
    assert gpu != host
    with pytest.raises(ValueError):
        force_profile("tpu")


@pytest.mark.parametrize("info", INFOS, ids=lambda i: i.name)
def test_gpu_plans_match_the_reference(info, gpu_profile):
    assert samples_match_reference(REGISTRY[info.name], info, np.random.default_rng(13)) >= 10


@pytest.mark.parametrize("N,C,S", [(32, 256, 196), (8, 64, 3136), (2, 3, 5), (1, 8, 1)])
def test_host_nxc_reductions_keep_each_block_cache_sized(N, C, S):
    """On the host a reduction block's 32 threads each walk all of its rows: the host profile splits
    NXC rows so that one block covers about HOST_NXC_BLOCK_ELEMS elements (never fewer rows than a
    chunk of the block's), where the GPU profile sizes the grid by SMs."""
    force_profile("host")
    try:
        grid, block, splits, ws = _bn_plan.plan_reduction(N, C, S, True)
    finally:
        force_profile(None)
    cx, cy, _ = block
    M, per_block_channels = N * S, min(C, 4 * cx)
    assert grid[1] == splits and ws == 3 * splits * C + C
    assert splits <= -(-M // (4 * cy))                       # every split has rows to walk
    rows = -(-M // splits)
    assert rows * per_block_channels <= _bn_plan.HOST_NXC_BLOCK_ELEMS or rows <= 4 * cy
    if M * per_block_channels > 2 * _bn_plan.HOST_NXC_BLOCK_ELEMS:
        assert rows * per_block_channels > _bn_plan.HOST_NXC_BLOCK_ELEMS // 2   # not needlessly many blocks
