"""The softmax plans a GPU gets, run on the emulator. On the host, rows of up to HOST_ROW_MAX elements
take the per-thread column kernel (the emulator runs warp shuffles as fiber switches); the warp-row
kernel — what a GPU runs for those rows — is then exercised here, with the host shortcut switched off,
on every sample of the softmax family's op database."""
from __future__ import annotations

import numpy as np
import pytest

from aclnn_py.opdef import REGISTRY
from aclnn_py.ops import softmax as softmax_ops
from harness import samples_match_reference
from opdb import OP_DB

INFOS = [i for i in OP_DB if REGISTRY[i.name].module == "softmax"]


@pytest.mark.parametrize("info", INFOS, ids=lambda i: i.name)
def test_gpu_row_plans_match_the_reference(info, monkeypatch):
    monkeypatch.setattr(softmax_ops, "HOST_ROW_MAX", 0)
    reg = REGISTRY[info.name]
    monkeypatch.setattr(reg.plan_cache, "_d", {})          # plans made with the host shortcut must not be reused
    assert samples_match_reference(reg, info, np.random.default_rng(12)) >= 20
