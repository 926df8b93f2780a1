"""Phase 1's work area: a :class:`Plan` records the kernel launches and the workspace layout of one call.

An op's ``plan`` hook asks the plan for pointers to its tensors in the memory order its kernels
want (``read``/``write``/``update``): a tensor already dense in that order is used in place; any
other view is copied into the workspace first (ViewCopy, ``kernels/copy.cu``) and/or copied back
after the last launch. Nothing here knows about any op family: layouts are memory orders (a
permutation of the view's dims, outermost first), chosen by the op.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .backends import get_backend
from .dtypes import aclDataType, dtype_info
from .kernel_cache import declare, get_kernel, instantiate
from .launch import Launch, Slot, Ws
from .tensor import aclTensor

__all__ = ["Plan", "OpCheckError", "dense_strides", "is_dense", "memory_order", "view_params", "grid_for",
           "on_host", "force_profile"]

COPY = declare("copy", instantiate("strided_copy<{U}>", U=("unsigned char", "unsigned short", "unsigned int",
                                                          "unsigned long long")),
               instantiate("strided_fill<{U}>", U=("unsigned char", "unsigned short", "unsigned int",
                                                  "unsigned long long")))
_UINT = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}


class OpCheckError(Exception):
    """The one way an op's hooks (and the core) report a rule violation: ``OpCheckError(status, message)``.
    Any other exception raised in phase 1 is a bug."""

    def __init__(self, status, message):
        self.status, self.message = status, message
        super().__init__(message)


# layouts ---------------------------------------------------------------------------------------

def dense_strides(dims: Sequence[int], order: Sequence[int]) -> list[int]:
    """Strides (elements) per view dim of a dense buffer whose memory order is ``order`` (outer→inner)."""
    strides = [0] * len(dims)
    acc = 1
    for d in reversed(order):
        strides[d] = acc
        acc *= max(dims[d], 1)
    return strides


def is_dense(t: aclTensor, order: Sequence[int]) -> bool:
    """Whether view ``t`` is exactly a dense buffer laid out in ``order`` (size-1 dims' strides don't matter)."""
    ds = dense_strides(t.view_dims, order)
    return all(d == 1 or s == e for d, s, e in zip(t.view_dims, t.strides, ds))


def memory_order(t: aclTensor) -> list[int] | None:
    """The order (outer→inner) in which ``t`` is a dense buffer, or None when it is not dense in any.
    Size-1 dims keep their logical place; ties keep the logical order (stable), so a contiguous
    tensor gives ``range(rank)``."""
    big = sorted((d for d in range(t.rank) if t.view_dims[d] > 1), key=lambda d: -t.strides[d])
    order, it = [], iter(big)
    for d in range(t.rank):                       # re-insert size-1 dims where they are
        order.append(d if t.view_dims[d] <= 1 else next(it))
    return order if is_dense(t, order) else None


# struct ViewParams of kernels/copy.cu, passed by value as a structured NumPy scalar (CuPy's way)
VIEW_PARAMS = np.dtype([("rank", "<i4"), ("pad", "<i4"), ("numel", "<i8"), ("sizes", "<i8", 8),
                        ("src_strides", "<i8", 8), ("dst_strides", "<i8", 8)])


def view_params(sizes, src_strides, dst_strides) -> np.void:
    v = np.zeros((), VIEW_PARAMS)
    r = len(sizes)
    v["rank"], v["numel"] = r, math.prod(sizes)
    v["sizes"][:r], v["src_strides"][:r], v["dst_strides"][:r] = sizes, src_strides, dst_strides
    return v[()]


# Launch profiles. Kernels are the same source everywhere, but a plan sizes its launches for where
# they run: a GPU gets occupancy-sized grids of 256-thread blocks and one 16-byte vector per thread
# and step; the host emulator (each CUDA thread is plain CPU code, a block's threads run one after
# another) gets few, small blocks whose threads walk long runs. Every family asks ``on_host()``;
# tests run the GPU's plans on the emulator with ``force_profile("gpu")``.
_FORCED_PROFILE: str | None = None


def force_profile(name: str | None) -> None:
    """Use the ``"gpu"`` or ``"host"`` launch profile whatever the backend (None: follow the backend).
    For tests that run the GPU's plans on the emulator; callers must drop cached plans."""
    global _FORCED_PROFILE
    if name not in (None, "gpu", "host"):
        raise ValueError(f"unknown launch profile {name!r}")
    _FORCED_PROFILE = name


def on_host() -> bool:
    """Plan for the host emulator's profile (else a GPU's)."""
    if _FORCED_PROFILE is not None:
        return _FORCED_PROFILE == "host"
    try:
        return get_backend().name == "host"
    except Exception:      # no backend yet: plans are only made once one exists
        return False


def grid_for(n: int, block: int = 256, max_blocks: int = 65535) -> tuple[int, int, int]:
    return (max(1, min((n + block - 1) // block, max_blocks)), 1, 1)


def _launch(fn, grid, block, args, shared_mem=0) -> Launch:
    """A planned launch whose constant arguments are marshalled now, not at every phase 2."""
    return Launch(fn, grid, block, get_backend().freeze_args(fn, tuple(args)), shared_mem)


def _dim3(v) -> tuple[int, int, int]:
    t = (v,) if isinstance(v, int) else tuple(v)
    return t + (1,) * (3 - len(t))


class Plan:
    """Phase-1 state of one call: the validated arguments, the reference tensor and normalised axis,
    and the launches being planned. Op families may subclass it (``OpDef.plan_type``) to add their
    own vocabulary (e.g. N, C, S of a per-channel op)."""

    def __init__(self, op, api: str, values: dict[str, Any], tensor_names: Sequence[str]):
        self.op = op
        self.api = api
        self.values = values
        self.slot_of = {n: i for i, n in enumerate(tensor_names)}
        self.ref: aclTensor | None = None     # the op's reference tensor (OpDef.ref)
        self.axis: int | None = None          # the op's normalised axis (OpDef.axis), if it has one
        self.launches: list[Launch] = []
        self.ws_size = 0
        self._copy_back: list[Launch] = []

    # access --------------------------------------------------------------------------------------
    def __getitem__(self, name):
        return self.values[name]

    def dtype(self, name) -> aclDataType:
        return self.values[name].data_type

    def ctype(self, name_or_dtype) -> str:
        dt = name_or_dtype if isinstance(name_or_dtype, int) else self.values[name_or_dtype].data_type
        return dtype_info(dt).ctype

    def fail(self, status, message):
        raise OpCheckError(status, f"{self.api}: {message}")

    # workspace and launches ---------------------------------------------------------------------
    def alloc(self, nbytes: int, align: int = 256) -> Ws:
        off = (self.ws_size + align - 1) // align * align
        self.ws_size = off + nbytes
        return Ws(off)

    def launch(self, family: str, kernel: str, grid, block, args, shared_mem: int = 0) -> None:
        self.launches.append(_launch(get_kernel(family, kernel), _dim3(grid), _dim3(block), args, shared_mem))

    def _bind(self, name: str, order, read: bool, write: bool):
        """A pointer to tensor ``name`` dense in memory ``order``: the tensor itself when it already is,
        else a workspace buffer, filled from it first (``read``) and/or copied back after the last
        launch (``write``) by the ViewCopy kernel. None for a null tensor."""
        t = self.values[name]
        if t is None:
            return None
        order = range(t.rank) if order is None else order
        own = Slot(self.slot_of[name], t.offset * t.itemsize)
        if is_dense(t, order):
            return own
        ws = self.alloc(t.numel * t.itemsize)
        dense = dense_strides(t.view_dims, order)
        fn = get_kernel(COPY, f"strided_copy<{_UINT[t.itemsize]}>")
        if read:
            self.launches.append(_launch(fn, grid_for(t.numel), (256, 1, 1),
                                         (own, ws, view_params(t.view_dims, t.strides, dense))))
        if write:
            self._copy_back.append(_launch(fn, grid_for(t.numel), (256, 1, 1),
                                           (ws, own, view_params(t.view_dims, dense, t.strides))))
        return ws

    def read(self, name: str, order: Sequence[int] | None = None):
        """A pointer to input ``name`` dense in memory ``order`` (default: row-major)."""
        return self._bind(name, order, True, False)

    def write(self, name: str, order: Sequence[int] | None = None):
        """Where the kernels write output ``name`` dense in memory ``order`` (default: row-major)."""
        return self._bind(name, order, False, True)

    def update(self, name: str, order: Sequence[int] | None = None):
        """A tensor the kernels read and update in place (running statistics)."""
        return self._bind(name, order, True, True)

    def fill(self, name: str, value: float) -> None:
        """Fill output ``name`` (any strides) with ``value`` converted to its dtype."""
        t = self.values[name]
        if t is None or t.numel == 0:
            return
        info = dtype_info(t.data_type)
        bits = np.array([value], dtype=info.numpy).view(np.dtype(f"<u{info.itemsize}"))[0]
        fn = get_kernel(COPY, f"strided_fill<{_UINT[info.itemsize]}>")
        self.launches.append(_launch(fn, grid_for(t.numel), (256, 1, 1),
                                     (Slot(self.slot_of[name], t.offset * t.itemsize), bits,
                                      view_params(t.view_dims, t.strides, t.strides))))

    def finish(self) -> list[Launch]:
        return self.launches + self._copy_back
