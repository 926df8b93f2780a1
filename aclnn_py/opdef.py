"""One way to declare an op: an :class:`OpDef` becomes the pair ``aclnnXxxGetWorkspaceSize`` / ``aclnnXxx``.

An op lists its parameters in CANN's order (tensors with their role, dtypes and shape rule,
attributes), an optional ``check`` for what is specific to it, and a ``plan`` that records kernel
launches into a :class:`Plan`. Everything else is generic and runs in CANN's fixed order
(DESIGN §4): null → dtype → format → rank/channel/shape → op check → bounds/overlap → empty → plan.
The first failure is returned with a message naming the op and the argument.

Phase 2 is :func:`aclnn_py.executor.run_executor` for every op.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import attrs
import numpy as np

from .acl.memory import registry
from .backends import get_backend
from .dtypes import (CHANNELS_LAST_FORMATS, FORMAT_RANK, PRIVATE_FORMATS, aclDataType, aclFormat, dtype_info)
from .errors import record_error
from .executor import aclOpExecutor, run_executor
from .launch import Launch, Slot, Ws
from .kernel_cache import get_kernel
from .status import AclnnStatus
from .tensor import aclTensor

__all__ = ["TensorParam", "AttrParam", "OpDef", "Plan", "register", "OPS", "FLOATS", "PARAM", "OpCheckError"]

OK = AclnnStatus.ACLNN_SUCCESS
NULLPTR = AclnnStatus.ACLNN_ERR_PARAM_NULLPTR
INVALID = AclnnStatus.ACLNN_ERR_PARAM_INVALID

F32, F16, BF16 = aclDataType.ACL_FLOAT, aclDataType.ACL_FLOAT16, aclDataType.ACL_BF16
FLOATS = frozenset({F32, F16, BF16})
PARAM = "FLOAT or the data dtype"      # dtype rule of per-channel tensors
_ND = aclFormat.ACL_FORMAT_ND


class OpCheckError(Exception):
    """Raised by an op's ``check``/``plan`` hook: ``OpCheckError(status, message)``."""

    def __init__(self, status, message):
        self.status, self.message = status, message
        super().__init__(message)


@attrs.frozen
class TensorParam:
    """A tensor parameter.

    kind: ``"data"`` (same shape as the op's reference tensor; the first data input is the
    reference: rank 2–8, channel axis of size C ≥ 1), ``"channel"`` (1-D of length C) or ``"free"``
    (rank in ``ranks``; the op's check does the rest).
    """
    name: str
    out: bool = False
    optional: bool = False
    kind: str = "data"
    dtypes: Any = FLOATS            # a set of aclDataType, or PARAM
    match: str | None = None        # must have the same dtype as this tensor
    ranks: tuple[int, int] = (2, 8)
    written: bool = False           # an input the op updates in place (running stats)


@attrs.frozen
class AttrParam:
    name: str
    type: Any                       # float, int, bool, str, aclBoolArray
    optional: bool = False
    length: int | None = None       # for arrays
    choices: tuple | None = None


@attrs.frozen
class OpDef:
    name: str                                     # CANN name without the aclnn prefix
    params: tuple
    plan: Callable[["Plan"], None]
    check: Callable[["Plan"], None] | None = None
    channel_axis: Callable[["Plan"], int] | None = None   # default: from the reference tensor's format
    plan_empty: Callable[["Plan"], None] | None = None    # what an empty input does (default: nothing)
    doc: str = ""


OPS: dict[str, "RegisteredOp"] = {}


@attrs.frozen
class RegisteredOp:
    opdef: OpDef
    get_workspace_size: Callable
    run: Callable


# layouts ---------------------------------------------------------------------------------------

def dense_strides(dims: Sequence[int], order: Sequence[int]) -> list[int]:
    """Strides (elements) per view dim of a dense buffer whose memory order is ``order`` (outer→inner)."""
    strides = [0] * len(dims)
    acc = 1
    for d in reversed(order):
        strides[d] = acc
        acc *= max(dims[d], 1)
    return strides


def _is_dense(t: aclTensor, order) -> bool:
    ds = dense_strides(t.view_dims, order)
    return all(d == 1 or s == e for d, s, e in zip(t.view_dims, t.strides, ds))


# struct ViewParams of kernels/copy.cu, passed by value as a structured NumPy scalar (CuPy's way)
VIEW_PARAMS = np.dtype([("rank", "<i4"), ("pad", "<i4"), ("numel", "<i8"), ("sizes", "<i8", 8),
                        ("src_strides", "<i8", 8), ("dst_strides", "<i8", 8)])


def view_params(sizes, src_strides, dst_strides) -> np.void:
    v = np.zeros((), VIEW_PARAMS)
    r = len(sizes)
    v["rank"], v["numel"] = r, math.prod(sizes)
    v["sizes"][:r], v["src_strides"][:r], v["dst_strides"][:r] = sizes, src_strides, dst_strides
    return v[()]


_UINT = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}


def grid_for(n: int, block: int = 256, max_blocks: int = 65535) -> tuple[int, int, int]:
    return (max(1, min((n + block - 1) // block, max_blocks)), 1, 1)


def _launch(fn, grid, block, args, shared_mem=0) -> Launch:
    """A planned launch whose constant arguments are marshalled now, not at every phase 2."""
    return Launch(fn, grid, block, get_backend().freeze_args(fn, tuple(args)), shared_mem)


# phase 1 ---------------------------------------------------------------------------------------

class Plan:
    """Phase-1 state of one call: the validated arguments, the layout, and the launches being planned."""

    def __init__(self, opdef: OpDef, api: str, values: dict[str, Any], tensor_params: list[TensorParam]):
        self.op = opdef
        self.api = api
        self.values = values
        self.tparams = tensor_params
        self.slot_of = {p.name: i for i, p in enumerate(tensor_params)}
        self.launches: list[Launch] = []
        self.ws_size = 0
        self._copy_back: list[Launch] = []
        self.ref: aclTensor | None = None
        self.axis = 1
        self.channels_last = False

    # access --------------------------------------------------------------------------------------
    def __getitem__(self, name):
        return self.values[name]

    def dtype(self, name) -> aclDataType:
        return self.values[name].data_type

    def ctype(self, name_or_dtype) -> str:
        dt = name_or_dtype if isinstance(name_or_dtype, int) else self.values[name_or_dtype].data_type
        return dtype_info(dt).ctype

    @property
    def N(self) -> int:
        return self.ref.view_dims[0]

    @property
    def C(self) -> int:
        return self.ref.view_dims[self.axis]

    @property
    def S(self) -> int:
        """Elements per (n, c) pair: the product of the dims other than N and the channel axis."""
        return math.prod(x for i, x in enumerate(self.ref.view_dims) if i not in (0, self.axis))

    def fail(self, status, message):
        raise OpCheckError(status, f"{self.api}: {message}")

    # workspace and launches ---------------------------------------------------------------------
    def alloc(self, nbytes: int, align: int = 256) -> Ws:
        off = (self.ws_size + align - 1) // align * align
        self.ws_size = off + nbytes
        return Ws(off)

    def launch(self, family: str, kernel: str, grid, block, args, shared_mem: int = 0) -> None:
        fn = get_kernel(family, kernel)
        g = (grid,) if isinstance(grid, int) else tuple(grid)
        b = (block,) if isinstance(block, int) else tuple(block)
        self.launches.append(_launch(fn, g + (1,) * (3 - len(g)), b + (1,) * (3 - len(b)), args, shared_mem))

    def _order(self, t: aclTensor, channels_last: bool):
        r = t.rank
        others = [d for d in range(1, r) if d != self.axis]
        return [0, *others, self.axis] if channels_last else [0, self.axis, *others]

    def _bind(self, name: str, order, read: bool, write: bool):
        """A pointer to tensor ``name`` dense in memory ``order``: the tensor itself when it already is,
        else a workspace buffer, filled from it first (``read``) and/or copied back after the last
        launch (``write``) by the ViewCopy kernel. None for a null tensor."""
        t = self.values[name]
        if t is None:
            return None
        own = Slot(self.slot_of[name], t.offset * t.itemsize)
        if _is_dense(t, order):
            return own
        ws = self.alloc(t.numel * t.itemsize)
        dense = dense_strides(t.view_dims, order)
        fn = get_kernel("copy", f"strided_copy<{_UINT[t.itemsize]}>")
        if read:
            self.launches.append(_launch(fn, grid_for(t.numel), (256, 1, 1),
                                         (own, ws, view_params(t.view_dims, t.strides, dense))))
        if write:
            self._copy_back.append(_launch(fn, grid_for(t.numel), (256, 1, 1),
                                           (ws, own, view_params(t.view_dims, dense, t.strides))))
        return ws

    def data_in(self, name: str):
        """A pointer to data tensor ``name`` dense in the compute layout (NCX or NXC)."""
        t = self.values[name]
        return t and self._bind(name, self._order(t, self.channels_last), True, False)

    def data_out(self, name: str):
        """Where to write data tensor ``name`` dense in the compute layout."""
        t = self.values[name]
        return t and self._bind(name, self._order(t, self.channels_last), False, True)

    def vector_in(self, name: str):
        """A pointer to a contiguous (row-major) ``name``: per-channel and other small tensors."""
        t = self.values[name]
        return t and self._bind(name, range(t.rank), True, False)

    def vector_out(self, name: str):
        t = self.values[name]
        return t and self._bind(name, range(t.rank), False, True)

    def vector_inout(self, name: str):
        """A tensor the kernels read and update in place (running stats)."""
        t = self.values[name]
        return t and self._bind(name, range(t.rank), True, True)

    def choose_layout(self, name: str | None = None) -> bool:
        """Pick the compute layout from tensor ``name`` (default: the reference tensor), as phase 1
        does before ``plan``: NXC when it is channels-last in memory, else NCX."""
        _choose_layout(self, self.values[name] if name else self.ref)
        return self.channels_last

    def fill(self, name: str, value: float) -> None:
        """Fill output ``name`` (any strides) with ``value`` converted to its dtype."""
        t = self.values[name]
        if t is None or t.numel == 0:
            return
        info = dtype_info(t.data_type)
        bits = np.array([value], dtype=info.numpy).view(np.dtype(f"<u{info.itemsize}"))[0]
        fn = get_kernel("copy", f"strided_fill<{_UINT[info.itemsize]}>")
        self.launches.append(_launch(fn, grid_for(t.numel), (256, 1, 1),
                                     (Slot(self.slot_of[name], t.offset * t.itemsize), bits,
                                      view_params(t.view_dims, t.strides, t.strides))))

    def finish(self) -> list[Launch]:
        return self.launches + self._copy_back


def _fmt_shape(t: aclTensor) -> str:
    return str(tuple(t.view_dims))


def _validate(plan: Plan) -> None:
    """Generic checks in CANN's order; raises OpCheckError with the first failure."""
    op, v = plan.op, plan.values
    tps = plan.tparams
    # 1. nulls
    for p in tps:
        t = v[p.name]
        if t is None:
            if not p.optional:
                plan.fail(NULLPTR, f"{p.name} must not be null")
        elif not isinstance(t, aclTensor):
            plan.fail(INVALID, f"{p.name} must be an aclTensor, got {type(t).__name__}")
        elif t.destroyed:
            plan.fail(INVALID, f"{p.name} was destroyed (aclDestroyTensor) before use")
    for a in op.params:
        if isinstance(a, AttrParam) and v[a.name] is None and not a.optional:
            plan.fail(NULLPTR, f"{a.name} must not be null")
    ref_p = next(p for p in tps if p.kind == "data" and not p.out)
    ref = plan.ref = v[ref_p.name]
    # 2. dtypes
    ref_dt = ref.data_type
    for p in tps:
        t = v[p.name]
        if t is None:
            continue
        allowed = (F32, ref_dt) if p.dtypes is PARAM else p.dtypes
        if t.data_type not in allowed:
            names = ", ".join(sorted(aclDataType(x).name for x in set(allowed)))
            plan.fail(INVALID, f"{p.name} dtype must be one of {{{names}}}, got {_dt_name(t.data_type)}")
        if p.match is not None and v[p.match] is not None and t.data_type != v[p.match].data_type:
            plan.fail(INVALID, f"{p.name} dtype must equal {p.match}'s ({_dt_name(v[p.match].data_type)}), "
                               f"got {_dt_name(t.data_type)}")
    # 3. formats
    for p in tps:
        t = v[p.name]
        if t is None:
            continue
        if t.format in PRIVATE_FORMATS:
            plan.fail(INVALID, f"{p.name} has private format {aclFormat(t.format).name}, which this op does not take")
        if p.kind == "data":
            want = FORMAT_RANK.get(t.format)
            if t.format == aclFormat.ACL_FORMAT_HWCN:
                plan.fail(INVALID, f"{p.name} format HWCN is not supported (the channel axis must be dim 1 or last)")
            if want is not None and want != t.rank:
                plan.fail(INVALID, f"{p.name} format {aclFormat(t.format).name} needs rank {want}, got rank {t.rank}")
    # 4. rank, channel axis, shapes
    if not 2 <= ref.rank <= 8:
        plan.fail(INVALID, f"{ref_p.name} rank must be in [2, 8], got {ref.rank} (shape {_fmt_shape(ref)})")
    plan.axis = op.channel_axis(plan) if op.channel_axis else (
        ref.rank - 1 if ref.format in CHANNELS_LAST_FORMATS else 1)
    C = ref.view_dims[plan.axis]
    if C == 0:
        plan.fail(INVALID, f"{ref_p.name} channel axis (dim {plan.axis}) has size 0 (shape {_fmt_shape(ref)})")
    for p in tps:
        t = v[p.name]
        if t is None or t is ref:
            continue
        if p.kind == "data":
            if t.view_dims != ref.view_dims:
                plan.fail(INVALID, f"{p.name} shape must equal {ref_p.name}'s {_fmt_shape(ref)}, got {_fmt_shape(t)}")
        elif p.kind == "channel":
            if t.view_dims != (C,):
                plan.fail(INVALID, f"{p.name} must be 1-D of length C={C} (dim {plan.axis} of {ref_p.name}), "
                                   f"got shape {_fmt_shape(t)}")
        elif not p.ranks[0] <= t.rank <= p.ranks[1]:
            plan.fail(INVALID, f"{p.name} rank must be in [{p.ranks[0]}, {p.ranks[1]}], got {t.rank}")
    # attributes
    for a in op.params:
        if isinstance(a, AttrParam) and v[a.name] is not None:
            _check_attr(plan, a, v[a.name])
    # op-specific
    if op.check is not None:
        op.check(plan)


def _static_spans(plan: Plan) -> tuple:
    """Per tensor, what its memory check needs that does not depend on its address (cached with the plan):
    (name, slot, byte offset of its lowest element, bytes spanned, written?). Fails if a view leaves its storage."""
    v = plan.values
    spans = []
    for i, p in enumerate(plan.tparams):
        t = v[p.name]
        if t is None or t.numel == 0:
            continue
        lo, hi = t.element_span()
        if lo < 0 or hi >= math.prod(t.storage_dims):
            plan.fail(INVALID, f"{p.name} view (shape {_fmt_shape(t)}, strides {t.strides}, offset {t.offset}) "
                               f"reaches outside its storage of {math.prod(t.storage_dims)} elements")
        isz = t.itemsize
        spans.append((p.name, i, lo * isz, (hi - lo + 1) * isz, p.out or p.written))
    return tuple(spans)


def _validate_memory(plan: Plan, spans: tuple) -> None:
    """Step 5, per call (addresses change between calls with the same plan): every view lies inside
    one known allocation; outputs overlap no input (an exact in-place alias of an input is fine)."""
    v = plan.values
    tensors = [v[p.name] for p in plan.tparams]
    placed = []
    for name, slot, lo_b, nbytes, written in spans:
        addr = tensors[slot].addr
        if addr is None:
            plan.fail(INVALID, f"{name} has a null data address")
        start = addr + lo_b
        if registry.find(start, nbytes) is None:
            plan.fail(INVALID, f"{name} view [0x{start:x}, +{nbytes} bytes) is not inside one allocation "
                               f"known to the runtime (acl.rt.malloc or from_array)")
        placed.append((name, start, start + nbytes, written, tensors[slot]))
    for wn, ws, we, w_written, wt in placed:
        if not w_written:
            continue
        for n, s, e, is_w, t in placed:
            if n == wn or e <= ws or we <= s:
                continue
            same_view = (t.addr, t.offset, t.strides, t.view_dims, t.data_type) == \
                        (wt.addr, wt.offset, wt.strides, wt.view_dims, wt.data_type)
            if is_w or not same_view:
                plan.fail(INVALID, f"{wn} overlaps {n} in memory; outputs must not overlap inputs or each other "
                                   f"(an exact in-place alias of an input is allowed)")


def _dt_name(dt) -> str:
    try:
        return aclDataType(dt).name
    except ValueError:
        return str(dt)


def _check_attr(plan: Plan, a: AttrParam, val) -> None:
    if a.type is float:
        ok = isinstance(val, (int, float, np.floating, np.integer)) and not isinstance(val, bool)
    elif a.type is int:
        ok = isinstance(val, (int, np.integer)) and not isinstance(val, bool)
    elif a.type is bool:
        ok = isinstance(val, (bool, np.bool_))
    else:
        ok = isinstance(val, a.type)
    if not ok:
        plan.fail(INVALID, f"{a.name} must be {getattr(a.type, '__name__', a.type)}, got {type(val).__name__}")
    if a.length is not None and len(val) != a.length:
        plan.fail(INVALID, f"{a.name} must have {a.length} elements, got {len(val)}")
    if a.choices is not None and val not in a.choices:
        plan.fail(INVALID, f"{a.name} must be one of {a.choices}, got {val!r}")


def _choose_layout(plan: Plan, ref: aclTensor | None = None) -> None:
    """Compute layout from ``ref`` (the reference tensor): NXC when it is channels-last in memory, else NCX."""
    ref = ref if ref is not None else plan.ref
    ax = plan.axis
    r = ref.rank
    others = [d for d in range(1, r) if d != ax]
    if _is_dense(ref, [0, ax, *others]):
        plan.channels_last = False
    elif _is_dense(ref, [0, *others, ax]):
        plan.channels_last = True
    else:   # a general view: copy it in whichever order keeps the channel axis where it mostly is
        plan.channels_last = ref.strides[ax] == min(abs(s) for d, s in zip(ref.view_dims, ref.strides) if d > 1) \
            if ref.numel else False


def _plan_key(args: tuple, t_pos: tuple, a_pos: tuple):
    """Everything phase 1's static checks and the plan depend on — not the addresses — or None."""
    try:
        k = (*[-1 if args[i] is None else args[i].desc_id for i in t_pos], *[(type(args[i]), args[i]) for i in a_pos])
        hash(k)
        return k
    except (TypeError, AttributeError):
        return None


def _addresses_ok(tensors, spans) -> bool:
    """The per-call part of phase 1 for a cached plan: every view inside one allocation, no overlap."""
    placed = []
    for name, slot, lo_b, nbytes, written in spans:
        t = tensors[slot]
        if t.addr is None or registry.find(t.addr + lo_b, nbytes) is None:
            return False
        placed.append((t.addr + lo_b, t.addr + lo_b + nbytes, written, t))
    for ws, we, w_written, wt in placed:
        if w_written:
            for s, e, is_w, t in placed:
                if t is not wt and s < we and ws < e and (is_w or (t.addr, t.offset, t.strides) !=
                                                            (wt.addr, wt.offset, wt.strides)):
                    return False
    return True


def register(opdef: OpDef, namespace: dict | None = None) -> RegisteredOp:
    """Make ``aclnn<Name>GetWorkspaceSize`` and ``aclnn<Name>`` from ``opdef`` (and put them in ``namespace``)."""
    api1 = f"aclnn{opdef.name}GetWorkspaceSize"
    api2 = f"aclnn{opdef.name}"
    names = [p.name for p in opdef.params]
    tparams = [p for p in opdef.params if isinstance(p, TensorParam) and not p.out] + \
              [p for p in opdef.params if isinstance(p, TensorParam) and p.out]
    n_inputs = sum(1 for p in tparams if not p.out)
    t_pos = tuple(names.index(p.name) for p in tparams)
    a_pos = tuple(i for i, p in enumerate(opdef.params) if not isinstance(p, TensorParam))

    cache: dict = {}     # description of every argument -> (launches, workspace size): phase 1 is pure

    def get_workspace_size(*args, **kwargs):
        if not kwargs and len(args) == len(names):   # the fast path: a plan made before for these views
            key = _plan_key(args, t_pos, a_pos)
            hit = cache.get(key) if key is not None else None
            if hit is not None:
                tensors = [args[i] for i in t_pos]
                if _addresses_ok(tensors, hit[2]):
                    return hit[1], aclOpExecutor(api2, tensors, n_inputs, hit[0], hit[1]), OK
        if len(args) > len(names):
            record_error(f"{api1}: takes {len(names)} arguments ({', '.join(names)}), got {len(args)}")
            return 0, None, INVALID
        values = dict(zip(names, args))
        for k, val in kwargs.items():
            if k not in names or k in values:
                record_error(f"{api1}: unexpected or repeated argument {k!r}")
                return 0, None, INVALID
            values[k] = val
        for p in opdef.params:
            values.setdefault(p.name, None)
        plan = Plan(opdef, api2, values, tparams)
        key = _plan_key(tuple(values[n] for n in names), t_pos, a_pos)
        try:
            _validate(plan)
            spans = _static_spans(plan)
            _validate_memory(plan, spans)
            if plan.ref.numel == 0:
                if opdef.plan_empty is not None:
                    opdef.plan_empty(plan)
            else:
                _choose_layout(plan)
                opdef.plan(plan)
            launches, ws_size = plan.finish(), plan.ws_size
            if key is not None:
                if len(cache) > 4096:
                    cache.clear()
                cache[key] = (launches, ws_size, spans)
        except OpCheckError as e:
            record_error(e.message)
            return 0, None, e.status
        except (LookupError, RuntimeError, OSError) as e:   # kernel compile / lookup failures
            record_error(f"{api1}: kernel unavailable: {e}")
            return 0, None, AclnnStatus.ACLNN_ERR_INNER_FIND_KERNEL_ERROR
        ex = aclOpExecutor(api2, [values[p.name] for p in tparams], n_inputs, launches, ws_size)
        return ws_size, ex, OK

    def run(workspace, workspace_size, executor, stream):
        return run_executor(api2, workspace, workspace_size, executor, stream)

    sig = ", ".join(names)
    get_workspace_size.__name__ = get_workspace_size.__qualname__ = api1
    get_workspace_size.__doc__ = f"{api1}({sig}) -> (workspace_size, executor, ret)\n\n{opdef.doc}"
    run.__name__ = run.__qualname__ = api2
    run.__doc__ = f"{api2}(workspace, workspace_size, executor, stream) -> ret\n\nPhase 2 of {opdef.name}."
    reg = RegisteredOp(opdef, get_workspace_size, run)
    OPS[opdef.name] = reg
    if namespace is not None:
        namespace[api1] = get_workspace_size
        namespace[api2] = run
    return reg
