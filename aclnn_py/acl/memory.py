"""The registry of every allocation the runtime knows: what validation uses to reject out-of-bounds views.

Note [What the registry answers]
    ``registry.find(start, nbytes)`` is the one question validation asks (phase 1 for every view,
    phase 2 again before it launches, rebinding, memcpy/memset): the allocation holding all of
    ``[start, start + nbytes)``, or ``None``. The answer is an :class:`Allocation`; its ``writable``
    says whether an output may live there (foreign memory registered from a read-only NumPy array,
    ``bytes`` or a read-only memmap is not). ``registry.overlapping(start, nbytes)`` lists the
    allocations a range touches, so a copy that runs past a known buffer is refused even when it starts
    outside every one. A freed allocation leaves the registry at once (so no new work can use it);
    its memory is released only when the work queued before the free has run (stream-ordered free).
"""
from __future__ import annotations

import bisect
import threading
from typing import Any

import attrs

__all__ = ["Allocation", "Registry", "registry", "MAX_ADDRESS"]

MAX_ADDRESS = 1 << 64        # an address is an unsigned 64-bit value; a range must end at or below this


@attrs.frozen
class Allocation:
    base: int
    size: int
    device: int | None          # None: host memory (malloc_host, or an external host buffer)
    kind: str                   # "device" | "host" | "external"
    owner: Any = attrs.field(default=None, eq=False, repr=False)  # keeps an external buffer alive
    writable: bool = True       # False: foreign read-only memory (never an output, never a copy's destination)

    @property
    def end(self) -> int:
        return self.base + self.size


class Registry:
    def __init__(self):
        self._lock = threading.Lock()
        self._bases: list[int] = []
        self._by_base: dict[int, Allocation] = {}
        self._refs: dict[int, int] = {}   # external registrations are reference-counted
        self._found: dict[tuple[int, int], Allocation | None] = {}  # lookups since the last change
        self._max_size = 0      # the largest allocation registered so far (bounds overlapping())
        self.generation = 0     # bumped by every add/remove: a plan's address checks stay valid while it holds
        # Held by phase 2 across "validate the addresses, enqueue the launches" and by free across "leave
        # the registry, post the stream-ordered release": a free is either seen by the validation, or
        # ordered after the launches it raced with.
        self.launch_lock = threading.RLock()

    def add(self, alloc: Allocation) -> None:
        with self._lock:
            self._found.clear()
            self.generation += 1
            if alloc.kind == "external" and alloc.writable:
                outer = self._find(alloc.base, alloc.size)
                if outer is not None and not outer.writable:   # a writable view of read-only memory is not
                    alloc = attrs.evolve(alloc, writable=False)
            old = self._by_base.get(alloc.base)
            if old is not None:
                if alloc.kind == "external" and old.kind == "external":
                    self._max_size = max(self._max_size, alloc.size)
                    if alloc.size > old.size or alloc.writable != old.writable:
                        self._by_base[alloc.base] = attrs.evolve(
                            max(alloc, old, key=lambda a: a.size), writable=alloc.writable and old.writable)
                    self._refs[alloc.base] += 1
                    return
                raise ValueError(f"address 0x{alloc.base:x} is already registered")
            self._max_size = max(self._max_size, alloc.size)
            bisect.insort(self._bases, alloc.base)
            self._by_base[alloc.base] = alloc
            self._refs[alloc.base] = 1

    def remove(self, base: int, kind: str | None = None) -> Allocation | None:
        with self._lock:
            self._found.clear()
            self.generation += 1
            alloc = self._by_base.get(base)
            if alloc is None or (kind is not None and alloc.kind != kind):
                return None
            self._refs[base] -= 1
            if self._refs[base] == 0:
                del self._by_base[base], self._refs[base]
                self._bases.remove(base)
            return alloc

    def get(self, base: int) -> Allocation | None:
        return self._by_base.get(base)

    def find(self, addr: int, nbytes: int = 1) -> Allocation | None:
        """The (innermost) allocation holding all of ``[addr, addr + nbytes)``, or None.

        Phase 1 asks ``registry.find(start, nbytes).writable`` whether an output may be written there."""
        hit = self._found.get((addr, nbytes), False)
        if hit is not False:
            return hit
        if type(addr) is not int or type(nbytes) is not int:
            return None
        with self._lock:
            found = self._find(addr, nbytes)
            if len(self._found) > 65536:
                self._found.clear()
            self._found[(addr, nbytes)] = found
            return found

    def writable(self, addr: int, nbytes: int) -> bool:
        """Whether ``[addr, addr + nbytes)`` lies inside one known allocation that may be written."""
        a = self.find(addr, nbytes)
        return a is not None and a.writable

    def _find(self, addr: int, nbytes: int) -> Allocation | None:
        if nbytes < 0 or addr < 0:
            return None
        i = bisect.bisect_right(self._bases, addr) - 1
        while i >= 0:
            a = self._by_base[self._bases[i]]
            if a.base <= addr and addr + nbytes <= a.base + a.size:
                return a
            if a.kind != "external":   # only an external view can sit inside an earlier allocation
                return None
            i -= 1
        return None

    def overlapping(self, addr: int, nbytes: int) -> list[Allocation]:
        """Every allocation that shares at least one byte with ``[addr, addr + nbytes)``."""
        end = addr + max(nbytes, 1)
        with self._lock:
            out = []
            i = bisect.bisect_left(self._bases, end) - 1
            reach = self._max_size
            while i >= 0:
                base = self._bases[i]
                if base + reach <= addr:       # nothing this far below can reach the range
                    break
                a = self._by_base[base]
                if a.base + a.size > addr:
                    out.append(a)
                i -= 1
            return out

    def __len__(self) -> int:
        return len(self._by_base)


registry = Registry()
