"""The value types of a launch plan, below the backends and the executor (no imports of ours).

A planned kernel launch refers to memory that is only known in phase 2: ``Slot(i, byte_offset)``
is the i-th tensor of the op's signature (inputs, then outputs), ``Ws(byte_offset)`` the caller's
workspace. Backends resolve them when they launch (``launch_planned``); the executor rebinds slots.
"""
from __future__ import annotations

from typing import Any

import attrs

__all__ = ["Slot", "Ws", "Launch"]


@attrs.frozen(slots=True)
class Slot:
    """Pointer argument: the storage address of tensor slot ``index`` plus ``byte_offset``."""
    index: int
    byte_offset: int = 0


@attrs.frozen(slots=True)
class Ws:
    """Pointer argument: the workspace base plus ``byte_offset``."""
    byte_offset: int


@attrs.frozen(slots=True)
class Launch:
    kernel: Any                       # the backend's function object
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    args: tuple                       # Slot / Ws / NumPy scalars / bytes-like values
    shared_mem: int = 0
