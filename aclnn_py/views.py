"""The memory rules of a call, shared by phase 1, phase 2 and address rebinding.

A *span* is what a tensor's check needs that does not depend on its address (phase 1 computes
them once and caches them with the plan; the executor keeps them):
``(name, slot, byte offset of its lowest element from addr, bytes spanned, written?, aliases)``
where aliases are the inputs a written tensor may be exactly (CANN's in-place forms).

The rules: every view lies inside one live allocation the runtime knows (``acl.rt.malloc``,
``from_array``), written views in writable memory; a written tensor overlaps no other tensor,
except an input it may alias when it is exactly that view. A plain module of functions over
tuples: phase 1 of a cached plan is mostly this loop.
"""
from __future__ import annotations

from typing import Sequence

from .acl.memory import registry

__all__ = ["slots_error", "overlap_error", "address_error"]


def slots_error(spans: tuple, addrs: Sequence) -> str | None:
    """The first view outside a live allocation (or written into read-only memory), as a message."""
    find = registry.find
    for name, slot, lo, nbytes, written, _ in spans:
        addr = addrs[slot]
        if type(addr) is not int and (not isinstance(addr, int) or isinstance(addr, bool)):
            return f"{name} has a null or invalid data address ({addr!r})"
        a = find(addr + lo, nbytes)
        if a is None:
            return (f"{name} view [0x{addr + lo:x}, +{nbytes} bytes) is not inside one live allocation known to "
                    f"the runtime (acl.rt.malloc or from_array; freed, or rebound outside it?)")
        if written and not getattr(a, "writable", True):
            return f"{name} is written but [0x{addr + lo:x}, +{nbytes} bytes) is read-only memory"
    return None


def _same_view(ta, addr_a, tb, addr_b) -> bool:
    return (addr_a, ta.offset, ta.strides, ta.view_dims, ta.data_type) == (addr_b, tb.offset, tb.strides,
                                                                           tb.view_dims, tb.data_type)


def overlap_error(spans: tuple, tensors: Sequence, addrs: Sequence) -> str | None:
    """A written tensor that overlaps another one (other than as an exact declared alias), as a message."""
    placed = [(addrs[sp[1]] + sp[2], addrs[sp[1]] + sp[2] + sp[3], sp) for sp in spans]
    for ws, we, sp in placed:                      # each written tensor against every other one
        if not sp[4]:
            continue
        for os_, oe, sp2 in placed:
            if sp2 is sp or not (os_ < we and ws < oe):
                continue
            if not sp2[4] and sp2[0] in sp[5] and _same_view(tensors[sp[1]], addrs[sp[1]],
                                                             tensors[sp2[1]], addrs[sp2[1]]):
                continue
            allowed = f" (it may only be exactly {', '.join(sp[5])})" if sp[5] else ""
            return f"{sp[0]} overlaps {sp2[0]} in memory; outputs must not overlap other tensors{allowed}"
    return None


def address_error(spans: tuple, tensors: Sequence, addrs: Sequence) -> str | None:
    return slots_error(spans, addrs) or overlap_error(spans, tensors, addrs)
