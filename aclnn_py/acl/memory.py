"""The registry of every allocation the runtime knows: what validation uses to reject out-of-bounds views."""
from __future__ import annotations

import bisect
import threading
from typing import Any

import attrs


@attrs.frozen
class Allocation:
    base: int
    size: int
    device: int | None          # None: host memory (malloc_host, or an external host buffer)
    kind: str                   # "device" | "host" | "external"
    owner: Any = attrs.field(default=None, eq=False, repr=False)  # keeps an external buffer alive


class Registry:
    def __init__(self):
        self._lock = threading.Lock()
        self._bases: list[int] = []
        self._by_base: dict[int, Allocation] = {}
        self._refs: dict[int, int] = {}   # external registrations are reference-counted
        self._found: dict[tuple[int, int], Allocation | None] = {}  # lookups since the last change
        self.generation = 0     # bumped by every add/remove: a plan's address checks stay valid while it holds

    def add(self, alloc: Allocation) -> None:
        with self._lock:
            self._found.clear()
            self.generation += 1
            old = self._by_base.get(alloc.base)
            if old is not None:
                if alloc.kind == "external" and old.kind == "external":
                    if alloc.size > old.size:
                        self._by_base[alloc.base] = alloc
                    self._refs[alloc.base] += 1
                    return
                raise ValueError(f"address 0x{alloc.base:x} is already registered")
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
        """The allocation holding all of ``[addr, addr + nbytes)``, or None."""
        hit = self._found.get((addr, nbytes), False)
        if hit is not False:
            return hit
        with self._lock:
            found = self._find(addr, nbytes)
            if len(self._found) > 65536:
                self._found.clear()
            self._found[(addr, nbytes)] = found
            return found

    def _find(self, addr: int, nbytes: int) -> Allocation | None:
        i = bisect.bisect_right(self._bases, addr) - 1
        while i >= 0:
            a = self._by_base[self._bases[i]]
            if a.base <= addr and addr + nbytes <= a.base + a.size:
                return a
            if a.kind != "external":   # only an external view can sit inside an earlier allocation
                return None
            i -= 1
        return None

    def __len__(self) -> int:
        return len(self._by_base)


registry = Registry()
