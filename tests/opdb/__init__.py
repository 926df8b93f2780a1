"""The op database (OpInfo-style). Every generic test in ``test_ops.py`` parametrises over ``OP_DB``.

One :class:`OpInfo` per op: its valid samples (every dtype, ranks 2–8, NCHW and NHWC, non-contiguous
views, size-1 and empty dims), its error samples with the exact expected status, and an independent
float64 NumPy reference. Family modules (``tests/opdb/<family>.py``) define ``OPS: list[OpInfo]``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from harness import Sample


@dataclass
class OpInfo:
    name: str                                                  # registered name: "BatchNormElemtBackward"
    samples: Callable[[np.random.Generator], list[Sample]]      # valid calls
    reference: Callable[[Sample], dict[str, np.ndarray]]        # float64 expected values of written tensors
    errors: Callable[[np.random.Generator], list[tuple[Sample, int]]]  # (bad call, exact expected status)
    outputs: tuple[str, ...]                                   # tensors the op writes (outputs, in-place inputs)
    tolerance_scale: Callable[[Sample], float] = lambda s: 1.0
    torch_reference: Callable[[Sample], dict[str, np.ndarray]] | None = None  # PyTorch's values, float64
    data_dtype_of: Callable[[Sample], int] = field(default=lambda s: s.tensors["input"].dtype)
    deterministic: bool = True


FAMILIES = ("batch_norm_elemt_backward", "batch_norm")


def _collect() -> list[OpInfo]:
    import importlib
    import importlib.util
    ops: list[OpInfo] = []
    for fam in FAMILIES:
        if importlib.util.find_spec(f"{__name__}.{fam}") is not None:
            ops += importlib.import_module(f"{__name__}.{fam}").OPS
    return ops


OP_DB: list[OpInfo] = _collect()
