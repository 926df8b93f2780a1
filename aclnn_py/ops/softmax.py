"""The softmax family (kernels/softmax.cu): aclnnSoftmax, aclnnLogSoftmax and their backward ops.

    aclnnSoftmax(self, dim, out)                              out = exp(x - max) / Σ exp(x - max)
    aclnnLogSoftmax(self, dim, out)                           out = x - max - log Σ exp(x - max)
    aclnnSoftmaxBackward(grad_output, output, dim, out)       out = y·(g − Σ g·y)
    aclnnLogSoftmaxBackward(grad_output, output, dim, out)    out = g − exp(y)·Σ g

FLOAT, FLOAT16, BF16 (f32 arithmetic inside) and DOUBLE (f64 arithmetic inside); all tensors of one call
share the dtype; any format;
ranks 0–8 (LogSoftmaxBackward 1–8, as CANN); ``dim`` in [−rank, rank) (rank 0 counts as 1);
empty tensors succeed with nothing launched. The reduction runs over ``dim`` in the tensors'
memory order: when ``self`` (or ``output``) is dense in any order — contiguous, channels-last,
transposed — nothing is copied, and a row is walked by a warp (the reduced dim innermost in
memory) or a column by a thread (otherwise). Other views are copied into the workspace first.
``out`` may be ``self`` (forward) or ``grad_output`` (backward), exactly: the in-place forms.
Deterministic: fixed-order reductions, bitwise identical run to run. cuDNN's
``cudnnSoftmaxBackward`` (ACCURATE and LOG modes) is built on the backward ops.

DOUBLE is an aclnn-py extension: CANN documents FP16, FP32 and BF16 for these ops (the reference,
aclnn.md's Softmax table, names no DOUBLE for any SoC; other out dtypes go through an auto-cast); it is
accepted so that cuDNN's cudnnSoftmaxForward / cudnnSoftmaxBackward take CUDNN_DATA_DOUBLE, computed
in double as cuDNN does. The kernels are the same templates with compute type f64 for double.
"""
from __future__ import annotations

import math

import numpy as np

from ..dtypes import aclDataType
from ..kernel_cache import BOOLS, FLOAT_CTYPES, declare, instantiate
from ..opdef import AttrParam as A, FLOATS, OpDef, TensorParam as T, register
from ..plan import Plan, grid_for, memory_order, on_host

_KINDS = ("rows", "block", "cols")
_CTYPES = (*FLOAT_CTYPES, "double")     # double: compute type f64 (the others f32)
FAMILY = declare("softmax", *(instantiate(f"softmax_{d}_{k}<{{T}}, {{LOG}}>", T=_CTYPES, LOG=BOOLS)
                              for d in ("fwd", "bwd") for k in _KINDS))
GROUP = "Softmax"
FLOATS_D = FLOATS | {aclDataType.ACL_DOUBLE}   # DOUBLE: an aclnn-py extension (CANN lists FP16/FP32/BF16)

WARP_ROW_MAX = 1024          # longest row one warp walks; longer rows get a block
HOST_ROW_MAX = 256           # on the host emulator, rows up to this long take the per-thread column kernel
ROWS_PER_BLOCK = 4           # kRowsPerBlock in softmax.cu
BLOCK = 256


def _geometry(plan: Plan, like: str) -> tuple[list[int], int, int, int]:
    """The memory order to compute in (that of tensor ``like`` when it is dense in one, else row-major)
    and the [outer, D, inner] view of it around the reduced dim ``plan.axis``."""
    t = plan[like]
    dims = t.view_dims
    if not dims:                                   # a scalar: a row of one
        return [], 1, 1, 1
    order = memory_order(t) or list(range(t.rank))
    k = order.index(plan.axis)
    return (order, math.prod(dims[d] for d in order[:k]), dims[plan.axis],
            math.prod(dims[d] for d in order[k + 1:]))


def _launch(plan: Plan, direction: str, log: bool, ptrs: tuple, outer: int, D: int, inner: int, dtype: str) -> None:
    tmpl = f"<{plan.ctype(dtype)}, {'true' if log else 'false'}>"
    n64 = np.int64
    if inner == 1 and D <= HOST_ROW_MAX and on_host():
        # the emulator runs warp shuffles as fiber switches (µs per row): a short row is cheaper walked by one
        # thread (the column kernel with inner = 1 runs as a plain loop); a GPU given this plan gives these bits
        plan.launch(FAMILY, f"softmax_{direction}_cols{tmpl}", grid_for(outer, BLOCK), BLOCK,
                    (*ptrs, n64(outer), n64(D), n64(1)))
    elif inner == 1 and D <= WARP_ROW_MAX:
        grid = min(-(-outer // ROWS_PER_BLOCK), 65535)
        plan.launch(FAMILY, f"softmax_{direction}_rows{tmpl}", grid, 32 * ROWS_PER_BLOCK, (*ptrs, n64(outer), n64(D)))
    elif inner == 1:
        plan.launch(FAMILY, f"softmax_{direction}_block{tmpl}", min(outer, 65535), BLOCK, (*ptrs, n64(outer), n64(D)))
    else:
        plan.launch(FAMILY, f"softmax_{direction}_cols{tmpl}", grid_for(outer * inner, BLOCK), BLOCK,
                    (*ptrs, n64(outer), n64(D), n64(inner)))


def _plan_forward(log: bool):
    def plan(p: Plan) -> None:
        order, outer, D, inner = _geometry(p, "self")
        _launch(p, "fwd", log, (p.read("self", order), p.write("out", order)), outer, D, inner, "self")
    return plan


def _plan_backward(log: bool):
    def plan(p: Plan) -> None:
        order, outer, D, inner = _geometry(p, "output")
        ptrs = (p.read("grad_output", order), p.read("output", order), p.write("out", order))
        _launch(p, "bwd", log, ptrs, outer, D, inner, "output")
    return plan


def _forward(name: str, log: bool, formula: str) -> OpDef:
    return OpDef(
        name=name,
        params=(T("self", dtypes=FLOATS_D), A("dim", int, dim_of="self"),
                T("out", out=True, dtypes=FLOATS_D, match="self", alias=("self",))),
        axis="dim", plan=_plan_forward(log), group=GROUP,
        doc=f"out = {formula} over dim. FLOAT/FLOAT16/BF16 (f32 math), DOUBLE (f64 math; an aclnn-py extension, "
            f"not in CANN's list); out has self's dtype; ranks 0–8, dim in [−rank, rank). out may be self (in "
            f"place). Empty: nothing launched. Deterministic.")


def _backward(name: str, log: bool, formula: str, ranks: tuple[int, int]) -> OpDef:
    return OpDef(
        name=name,
        params=(T("grad_output", dtypes=FLOATS_D), T("output", dtypes=FLOATS_D, match="grad_output"),
                A("dim", int, dim_of="grad_output"),
                T("out", out=True, dtypes=FLOATS_D, match="grad_output", alias=("grad_output",))),
        axis="dim", ranks=ranks, plan=_plan_backward(log), group=GROUP, cudnn=("cudnnSoftmaxBackward",),
        doc=f"out = {formula} (g = grad_output, y = output of the forward). FLOAT/FLOAT16/BF16 (f32 math), "
            f"DOUBLE (f64 math; an aclnn-py extension, not in CANN's list), one dtype for all, ranks "
            f"{ranks[0]}–{ranks[1]}, same shapes, dim in [−rank, rank). out may be grad_output "
            f"(in place). Empty: nothing launched. Deterministic.")


Softmax = register(_forward("Softmax", False, "exp(self − max) / Σ exp(self − max)"), globals())
LogSoftmax = register(_forward("LogSoftmax", True, "self − max − log Σ exp(self − max)"), globals())
SoftmaxBackward = register(_backward("SoftmaxBackward", False, "y·(g − Σ g·y)", (0, 8)), globals())
LogSoftmaxBackward = register(_backward("LogSoftmaxBackward", True, "g − exp(y)·Σ g", (1, 8)), globals())
