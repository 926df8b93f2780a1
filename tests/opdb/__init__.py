"""The op database (OpInfo-style). Every generic test in ``test_ops.py`` parametrises over ``OP_DB``.

One :class:`OpInfo` per registered op: its valid samples (every dtype, its rank range, NCHW and NHWC
where they matter, non-contiguous views, size-1 and empty dims), its error samples with the exact
expected status (and, where given, the argument the message must name), and an independent float64
NumPy reference of everything it writes (auxiliary outputs included). Each family module
``tests/opdb/<family>.py`` defines ``OPS: list[OpInfo]``; the modules are discovered, not listed.
Generic tests never name an op's parameters: ``data`` names the tensor that decides the layout
variants and emptiness of a sample.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import Callable

import numpy as np

from harness import Sample


@dataclass(frozen=True)
class ErrorCase:
    """A bad call: the exact status phase 1 must return and the argument its message must name."""
    sample: Sample
    status: int
    names: str | None = None


@dataclass
class OpInfo:
    name: str                                                  # registered name: "BatchNormElemtBackward"
    samples: Callable[[np.random.Generator], list[Sample]]      # valid calls
    reference: Callable[[Sample], dict[str, np.ndarray]]        # float64 expected values of written tensors
    errors: Callable[[np.random.Generator], list]               # ErrorCase or (bad call, exact status)
    outputs: tuple[str, ...]                                   # tensors the op writes (outputs, in-place inputs)
    tolerance_scale: Callable[[Sample], float] = lambda s: 1.0
    torch_reference: Callable[[Sample], dict[str, np.ndarray]] | None = None  # PyTorch's values, float64
    data_dtype_of: Callable[[Sample], int] | None = None       # default: the data tensor's dtype
    deterministic: bool = True
    zero_workspace: Callable[[Sample], bool] | None = None     # samples that must need no workspace (no copies)
    bench: Callable[..., Sample] | None = None                 # (rng, nchw_shape, dtype, channels_last): a call of any size
    torch_gpu: Callable[[Sample, str], Callable] | None = None  # (sample, device): PyTorch's op on tensors of its shape
    data: str = "input"                                        # the tensor whose layout/emptiness a sample varies
    layout_fixed: tuple[str, ...] = ()                         # tensors whose layout the op fixes (a generator state)
    workspace_free: bool = False                               # never needs a workspace, whatever the views (a fill)

    def data_dtype(self, s: Sample) -> int:
        return self.data_dtype_of(s) if self.data_dtype_of else s.tensors[self.data].dtype

    def error_cases(self, rng) -> list[ErrorCase]:
        return [e if isinstance(e, ErrorCase) else ErrorCase(*e) for e in self.errors(rng)]


def _collect() -> list[OpInfo]:
    ops: list[OpInfo] = []
    for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not m.name.startswith("_"):
            ops += importlib.import_module(f"{__name__}.{m.name}").OPS
    return ops


OP_DB: list[OpInfo] = _collect()
