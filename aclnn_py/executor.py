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

from .acl._state import as_int, resolve_stream, state
from .acl.memory import MAX_ADDRESS, registry
from .backends import DeviceError
from .errors import fail, guarded
from .launch import Launch, Slot, Ws  # noqa: F401  (re-exported)
from .views import overlap_error, slots_error
from .status import AclnnStatus

__all__ = ["aclOpExecutor", "Slot", "Ws", "Launch", "run_executor", "aclSetAclOpExecutorRepeatable",
           "aclDestroyAclOpExecutor", "aclSetInputTensorAddr", "aclSetOutputTensorAddr", "aclSetTensorAddr"]

OK = AclnnStatus.ACLNN_SUCCESS
NULLPTR = AclnnStatus.ACLNN_ERR_PARAM_NULLPTR
INVALID = AclnnStatus.ACLNN_ERR_PARAM_INVALID
INNER_NULLPTR = AclnnStatus.ACLNN_ERR_INNER_NULLPTR
INTERNAL = AclnnStatus.ACLNN_ERR_INNER


# Note [Phase 2 trusts nothing]
#     Memory can change between the phases: a buffer freed, an address rebound, a workspace that lies
#     inside the op's own tensors. Before it enqueues anything, phase 2 checks every tensor slot again
#     against the allocation registry (inside one live allocation; written slots in writable memory) and
#     the workspace (inside one live, writable allocation, sharing no byte with any tensor), under the
#     registry's launch lock so a concurrent free is either seen here or ordered after these launches
#     (stream-ordered free). Any failure returns 161002 with nothing launched. A repeatable executor
#     skips the slot checks while nothing was allocated or freed since its last successful check
#     (registry generation) and its addresses were not rebound.
#
# A span is (name, slot, byte offset of the lowest element from the address, bytes spanned, written?,
# the inputs it may be exactly): the same tuple phase 1 builds (opdef's ``_static_spans``).


def _spans_of(executor) -> tuple:
    """Spans of an executor made without them (not by phase 1): outputs count as written, no aliases."""
    spans = []
    for i, t in enumerate(executor.tensors):
        if t is None or t.numel == 0:
            continue
        lo, hi = t.element_span()
        isz = t.itemsize
        spans.append((f"tensor {i}", i, lo * isz, (hi - lo + 1) * isz, i >= executor.n_inputs, ()))
    return tuple(spans)


class aclOpExecutor:
    """The plan of one op call. Made by phase 1; run by phase 2."""

    __slots__ = ("op_name", "launches", "workspace_size", "tensors", "addrs", "n_inputs", "repeatable",
                 "consumed", "fresh", "_ptr_slots", "_spans", "_validated")

    def __init__(self, op_name: str, tensors: Sequence, n_inputs: int, launches: list[Launch], workspace_size: int,
                 spans: tuple | None = None):
        self.op_name = op_name
        self.launches = launches
        self.workspace_size = workspace_size
        self.tensors = list(tensors)                 # aclTensor or None, inputs then outputs
        self.addrs = [t.addr if t is not None else None for t in tensors]
        self.n_inputs = n_inputs
        self.repeatable = False
        self.consumed = False
        self.fresh = True                            # no phase 2 has run yet
        # The views as phase 1 accepted them: phase 1 passes its spans (free: they are cached with the
        # plan); else computed at the first phase 2 or rebinding.
        self._spans = spans
        self._validated = None                       # (registry generation, workspace) of the last good check

    @property
    def spans(self) -> tuple:
        sp = self._spans
        if sp is None:
            sp = self._spans = _spans_of(self)
        return sp

    def __repr__(self):
        return (f"aclOpExecutor({self.op_name}, {len(self.launches)} launches, workspace {self.workspace_size} B"
                f"{', repeatable' if self.repeatable else ''}{', consumed' if self.consumed else ''})")


def _workspace_error(spans, addrs, ws: int, need: int) -> str | None:
    a = registry.find(ws, need)
    if a is None:
        return f"workspace [0x{ws:x}, +{need}) is not inside one live allocation"
    if not a.writable:
        return f"workspace [0x{ws:x}, +{need}) is read-only memory"
    for name, slot, lo, nbytes, _, _ in spans:
        start = addrs[slot] + lo
        if start < ws + need and ws < start + nbytes:
            return f"workspace [0x{ws:x}, +{need}) overlaps {name} [0x{start:x}, +{nbytes}); it must be separate memory"
    return None


@guarded("phase 2", INTERNAL)
def run_executor(api: str, workspace, workspace_size, executor, stream):
    """The generic phase 2 of every op: check, bind addresses, enqueue, consume."""
    if executor is None:
        return fail(NULLPTR, f"{api}: executor is null")
    if not isinstance(executor, aclOpExecutor):
        return fail(INVALID, f"{api}: executor is not an aclOpExecutor: {type(executor).__name__}")
    if executor.op_name != api:
        return fail(INVALID, f"{api}: this executor was made by {executor.op_name}GetWorkspaceSize, not "
                             f"{api}GetWorkspaceSize; nothing launched")
    if executor.consumed:
        return fail(INVALID, f"{api}: this executor has already run (or was destroyed); call "
                             f"{executor.op_name}GetWorkspaceSize again, or make it repeatable with "
                             f"aclSetAclOpExecutorRepeatable right after phase 1")
    if not executor.repeatable:
        executor.consumed = True       # CANN deletes it whatever happens next
    executor.fresh = False
    need = executor.workspace_size
    ws_size = as_int(workspace_size)
    if ws_size is None or not 0 <= ws_size < MAX_ADDRESS:
        return fail(INVALID, f"{api}: workspace_size must be an int in [0, 2**64), got {workspace_size!r}")
    ws = None if workspace is None else as_int(workspace)
    if workspace is not None and (ws is None or not 0 <= ws < MAX_ADDRESS):
        return fail(INVALID, f"{api}: workspace must be an address (int) or None, got {workspace!r}")
    if need:
        if not ws:
            return fail(NULLPTR, f"{api}: workspace is null but the plan needs {need} bytes")
        if ws_size < need:
            return fail(INVALID, f"{api}: workspace_size {workspace_size!r} is smaller than the {need} bytes "
                                 f"returned by phase 1")
    s, st = resolve_stream(api, stream)
    if st:
        return AclnnStatus.ACLNN_ERR_RUNTIME_ERROR
    backend = state.backend
    addrs = executor.addrs
    spans = executor.spans
    with registry.launch_lock:        # a free is seen by these checks, or ordered after these launches
        key = (registry.generation, ws if need else None)
        if executor._validated != key:
            err = slots_error(spans, addrs) or (_workspace_error(spans, addrs, ws, need) if need else None)
            if err is not None:
                return fail(INVALID, f"{api}: {err}; nothing launched")
            executor._validated = key
        try:
            for ln in executor.launches:
                backend.launch_planned(ln.kernel, ln.grid, ln.block, ln.args, addrs, ws or 0, ln.shared_mem, s)
        except DeviceError as e:
            return fail(AclnnStatus.ACLNN_ERR_RUNTIME_ERROR, f"{api}: launch failed: {e}")
    return OK


@guarded("aclSetAclOpExecutorRepeatable", INTERNAL)
def aclSetAclOpExecutorRepeatable(executor):
    """Keep the executor after phase 2 (until aclDestroyAclOpExecutor). Only right after phase 1."""
    if executor is None:
        return fail(INNER_NULLPTR, "aclSetAclOpExecutorRepeatable: executor is null")
    if not isinstance(executor, aclOpExecutor):
        return fail(INVALID, f"aclSetAclOpExecutorRepeatable: not an aclOpExecutor: {type(executor).__name__}")
    if executor.consumed or not executor.fresh:
        return fail(INVALID, "aclSetAclOpExecutorRepeatable: must be called right after phase 1, before phase 2")
    executor.repeatable = True
    return OK


@guarded("aclDestroyAclOpExecutor", INTERNAL)
def aclDestroyAclOpExecutor(executor):
    if executor is None:
        return fail(INNER_NULLPTR, "aclDestroyAclOpExecutor: executor is null")
    if not isinstance(executor, aclOpExecutor):
        return fail(INVALID, f"aclDestroyAclOpExecutor: not an aclOpExecutor: {type(executor).__name__}")
    executor.consumed = True
    executor.launches = []
    return OK


def _rebind(api, executor, slot, tensor, addr):
    if executor is None or tensor is None:
        return fail(INNER_NULLPTR, f"{api}: {'executor' if executor is None else 'tensor'} is null")
    if not isinstance(executor, aclOpExecutor):
        return fail(INVALID, f"{api}: not an aclOpExecutor: {type(executor).__name__}")
    from .tensor import aclTensor
    if not isinstance(tensor, aclTensor):
        return fail(INVALID, f"{api}: not an aclTensor: {type(tensor).__name__}")
    if not executor.repeatable or executor.consumed:
        return fail(INVALID, f"{api}: the executor must be repeatable (aclSetAclOpExecutorRepeatable) and alive")
    if slot is None or not 0 <= slot < len(executor.tensors) or executor.tensors[slot] is None:
        return fail(INVALID, f"{api}: index out of range, or that tensor was null in phase 1")
    planned = executor.tensors[slot]
    if tuple(tensor.view_dims) != tuple(planned.view_dims) or tensor.data_type != planned.data_type:
        return fail(INVALID, f"{api}: tensor {tensor!r} does not match the planned {planned!r}")
    a = as_int(addr)
    if a is None or not 0 < a < MAX_ADDRESS:
        return fail(INVALID, f"{api}: addr must be a non-null address in (0, 2**64), got {addr!r}")
    addrs = list(executor.addrs)
    addrs[slot] = a
    span = next((sp for sp in executor.spans if sp[1] == slot), None)
    if span is not None:
        err = slots_error((span,), addrs) or overlap_error(executor.spans, executor.tensors, addrs)
        if err is not None:
            return fail(INVALID, f"{api}: {err}; not rebound")
    executor.addrs[slot] = a
    executor._validated = None
    tensor.addr = a
    return OK


def _index(v):
    i = as_int(v)
    return i if i is not None else -1


@guarded("aclSetInputTensorAddr", INTERNAL)
def aclSetInputTensorAddr(executor, index, tensor, addr):
    """Rebind input ``index`` (over all inputs of the signature) of a repeatable executor to ``addr``."""
    if isinstance(executor, aclOpExecutor) and not 0 <= _index(index) < executor.n_inputs:
        return fail(INVALID, f"aclSetInputTensorAddr: input index {index!r} out of range [0, {executor.n_inputs})")
    return _rebind("aclSetInputTensorAddr", executor, _index(index), tensor, addr)


@guarded("aclSetOutputTensorAddr", INTERNAL)
def aclSetOutputTensorAddr(executor, index, tensor, addr):
    """Rebind output ``index`` (over the outputs of the signature) of a repeatable executor to ``addr``."""
    index = _index(index)
    if isinstance(executor, aclOpExecutor):
        n_out = len(executor.tensors) - executor.n_inputs
        if not 0 <= index < n_out:
            return fail(INVALID, f"aclSetOutputTensorAddr: output index {index!r} out of range [0, {n_out})")
        index += executor.n_inputs
    return _rebind("aclSetOutputTensorAddr", executor, index, tensor, addr)


@guarded("aclSetTensorAddr", INTERNAL)
def aclSetTensorAddr(executor, index, tensor, addr):
    """Rebind tensor ``index`` (inputs then outputs) of a repeatable executor to ``addr``."""
    return _rebind("aclSetTensorAddr", executor, _index(index), tensor, addr)
