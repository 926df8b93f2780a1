"""aclOpExecutor: the plan phase 1 makes and the one generic phase 2 that runs it.

Note [The plan]
    An executor holds an ordered list of kernel launches. Their pointer arguments are
    references, resolved only in phase 2: ``Slot(i, byte_offset)`` is the i-th tensor of the op's
    signature (inputs, then outputs, null ones included, CANN's index rule), ``Ws(byte_offset)`` is
    the caller's workspace. The addresses of the slots are captured in phase 1 and can be rebound on
    a repeatable executor (``aclSetInputTensorAddr`` & co), so a training loop pays phase 1 once.
    The workspace layout depends only on shapes, dtypes and attributes, never on data.

Note [Lifetime] (CANN's CommonOpExecutorRun)
    Phase 2 consumes the executor, even when the run fails, unless it was made repeatable right
    after phase 1; a repeatable executor lives until ``aclDestroyAclOpExecutor``. A consumed
    executor is refused, so a plan never runs twice by accident.
"""
from __future__ import annotations

from typing import Sequence

from .acl._state import resolve_stream, state
from .acl.memory import registry
from .backends import DeviceError
from .errors import fail
from .launch import Launch, Slot, Ws  # noqa: F401  (re-exported)
from .status import AclnnStatus

__all__ = ["aclOpExecutor", "Slot", "Ws", "Launch", "run_executor", "aclSetAclOpExecutorRepeatable",
           "aclDestroyAclOpExecutor", "aclSetInputTensorAddr", "aclSetOutputTensorAddr", "aclSetTensorAddr"]

OK = AclnnStatus.ACLNN_SUCCESS
NULLPTR = AclnnStatus.ACLNN_ERR_PARAM_NULLPTR
INVALID = AclnnStatus.ACLNN_ERR_PARAM_INVALID
INNER_NULLPTR = AclnnStatus.ACLNN_ERR_INNER_NULLPTR


class aclOpExecutor:
    """The plan of one op call. Made by phase 1; run by phase 2."""

    __slots__ = ("op_name", "launches", "workspace_size", "tensors", "addrs", "n_inputs", "repeatable",
                 "consumed", "fresh", "_ptr_slots")

    def __init__(self, op_name: str, tensors: Sequence, n_inputs: int, launches: list[Launch], workspace_size: int):
        self.op_name = op_name
        self.launches = launches
        self.workspace_size = workspace_size
        self.tensors = list(tensors)                 # aclTensor or None, inputs then outputs
        self.addrs = [t.addr if t is not None else None for t in tensors]
        self.n_inputs = n_inputs
        self.repeatable = False
        self.consumed = False
        self.fresh = True                            # no phase 2 has run yet

    def __repr__(self):
        return (f"aclOpExecutor({self.op_name}, {len(self.launches)} launches, workspace {self.workspace_size} B"
                f"{', repeatable' if self.repeatable else ''}{', consumed' if self.consumed else ''})")


def run_executor(api: str, workspace, workspace_size, executor, stream):
    """The generic phase 2 of every op: check, bind addresses, enqueue, consume."""
    if executor is None:
        return fail(NULLPTR, f"{api}: executor is null")
    if not isinstance(executor, aclOpExecutor):
        return fail(INVALID, f"{api}: executor is not an aclOpExecutor: {executor!r}")
    if executor.consumed:
        return fail(INVALID, f"{api}: this executor has already run (or was destroyed); call "
                             f"{executor.op_name}GetWorkspaceSize again, or make it repeatable with "
                             f"aclSetAclOpExecutorRepeatable right after phase 1")
    if not executor.repeatable:
        executor.consumed = True       # CANN deletes it whatever happens next
    executor.fresh = False
    need = executor.workspace_size
    if need:
        if workspace is None or workspace == 0:
            return fail(NULLPTR, f"{api}: workspace is null but the plan needs {need} bytes")
        if not isinstance(workspace_size, int) or workspace_size < need:
            return fail(INVALID, f"{api}: workspace_size {workspace_size!r} is smaller than the {need} bytes "
                                 f"returned by phase 1")
        if registry.find(workspace, need) is None:
            return fail(INVALID, f"{api}: workspace [0x{workspace:x}, +{need}) is not inside one allocation")
    s, st = resolve_stream(api, stream)
    if st:
        return AclnnStatus.ACLNN_ERR_RUNTIME_ERROR
    backend = state.backend
    addrs = executor.addrs
    try:
        for ln in executor.launches:
            backend.launch_planned(ln.kernel, ln.grid, ln.block, ln.args, addrs, workspace, ln.shared_mem, s)
    except DeviceError as e:
        return fail(AclnnStatus.ACLNN_ERR_RUNTIME_ERROR, f"{api}: launch failed: {e}")
    return OK


def aclSetAclOpExecutorRepeatable(executor):
    """Keep the executor after phase 2 (until aclDestroyAclOpExecutor). Only right after phase 1."""
    if executor is None:
        return fail(INNER_NULLPTR, "aclSetAclOpExecutorRepeatable: executor is null")
    if executor.consumed or not executor.fresh:
        return fail(INVALID, "aclSetAclOpExecutorRepeatable: must be called right after phase 1, before phase 2")
    executor.repeatable = True
    return OK


def aclDestroyAclOpExecutor(executor):
    if executor is None:
        return fail(INNER_NULLPTR, "aclDestroyAclOpExecutor: executor is null")
    executor.consumed = True
    executor.launches = []
    return OK


def _rebind(api, executor, slot, tensor, addr):
    if executor is None or tensor is None:
        return fail(INNER_NULLPTR, f"{api}: {'executor' if executor is None else 'tensor'} is null")
    if not executor.repeatable or executor.consumed:
        return fail(INVALID, f"{api}: the executor must be repeatable (aclSetAclOpExecutorRepeatable) and alive")
    if not 0 <= slot < len(executor.tensors) or executor.tensors[slot] is None:
        return fail(INVALID, f"{api}: index out of range, or that tensor was null in phase 1")
    planned = executor.tensors[slot]
    if tuple(tensor.view_dims) != tuple(planned.view_dims) or tensor.data_type != planned.data_type:
        return fail(INVALID, f"{api}: tensor {tensor!r} does not match the planned {planned!r}")
    if not isinstance(addr, int) or addr <= 0:
        return fail(INVALID, f"{api}: addr must be a non-null address, got {addr!r}")
    if planned.numel:
        lo, hi = planned.element_span()
        isz = planned.itemsize
        if registry.find(addr + lo * isz, (hi - lo + 1) * isz) is None:
            return fail(INVALID, f"{api}: the view {planned.view_dims} at 0x{addr:x} does not fit inside one allocation")
    executor.addrs[slot] = addr
    tensor.addr = addr
    return OK


def aclSetInputTensorAddr(executor, index, tensor, addr):
    """Rebind input ``index`` (over all inputs of the signature) of a repeatable executor to ``addr``."""
    if executor is not None and not 0 <= index < executor.n_inputs:
        return fail(INVALID, f"aclSetInputTensorAddr: input index {index} out of range [0, {executor.n_inputs})")
    return _rebind("aclSetInputTensorAddr", executor, index, tensor, addr)


def aclSetOutputTensorAddr(executor, index, tensor, addr):
    """Rebind output ``index`` (over the outputs of the signature) of a repeatable executor to ``addr``."""
    if executor is not None:
        n_out = len(executor.tensors) - executor.n_inputs
        if not 0 <= index < n_out:
            return fail(INVALID, f"aclSetOutputTensorAddr: output index {index} out of range [0, {n_out})")
        index += executor.n_inputs
    return _rebind("aclSetOutputTensorAddr", executor, index, tensor, addr)


def aclSetTensorAddr(executor, index, tensor, addr):
    """Rebind tensor ``index`` (inputs then outputs) of a repeatable executor to ``addr``."""
    return _rebind("aclSetTensorAddr", executor, index, tensor, addr)
