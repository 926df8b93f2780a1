"""The host backend: the CUDA emulator behind the same protocol as CuPy.

Device memory is host memory; a stream is a FIFO served by its own worker thread, so kernel
launches and async copies return at once and run in order; events order work across streams.
Kernels are the project's ``.cu`` sources compiled by g++ against ``aclnn_py/emulator``.
"""
from __future__ import annotations

import ctypes
import mmap
import queue
import threading
import time
from typing import Any, Sequence

import numpy as np


from ..errors import DeviceError
from ..kernel_args import check_args, scalar_bytes
from ..launch import Slot, Ws      # (imported here, not per launch: an import statement costs µs)

_POISON = 0xFF  # fresh "device" memory reads as NaN / -1, never as plausible zeros

_libc = ctypes.CDLL(None, use_errno=True)
_mmap = _libc.mmap
_mmap.restype = ctypes.c_void_p
_mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
_munmap = _libc.munmap
_munmap.restype = ctypes.c_int
_munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
_PROT_RW = mmap.PROT_READ | mmap.PROT_WRITE
_MAP_FLAGS = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
_MAP_FIXED = 0x10                    # Linux
_MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000)
_MAX_RESERVED = 4096                 # released address ranges kept reserved (each is one mapping)
_MAP_FAILED = (1 << (8 * ctypes.sizeof(ctypes.c_void_p))) - 1


class HostStream:
    """A FIFO of callables run by one daemon worker thread; the first failure is kept for ``synchronize``.

    Once closed, a stream accepts nothing more (``submit`` returns False) and waiting on it means
    waiting for its worker to finish what was queued before the close: a thread that synchronises
    while another destroys the stream never waits on a queue that nobody serves.
    """

    def __init__(self, name: str):
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._lock = threading.Lock()
        self._exec = threading.Lock()    # held while a task runs (on the worker or inline)
        self._pending = 0                # submitted, not finished
        self._front = None               # the rest of a task started inline (``start``): runs first
        self.closed = False
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def submit(self, task, *, unless_idle: bool = False) -> bool:
        """Queue ``task``; False (not queued: the caller runs it) on a closed stream, and with
        ``unless_idle`` on an idle one too (nothing queued or running: what ``task`` waits for has
        already happened). A closed stream has run everything it had."""
        with self._lock:
            if self.closed or (unless_idle and self._pending == 0):
                return False
            self._pending += 1
            self._queue.put(task)
        return True

    def enqueue(self, task) -> bool:
        """Queue ``task`` — work that never waits for the host (an aclnn op's planned launches, an
        async copy): on an idle stream it runs on the calling thread before this returns. The host
        is the device: the hand-off to the worker and back costs more than most launches (a tiny
        BatchNorm forward, 3 launches + synchronize: 250-280 -> 110 us end to end), and the caller's
        thread does the work the worker would have done on the same cores. A busy stream queues
        ``task`` behind its work, as ``submit``; work submitted meanwhile queues behind ``task``.
        Its failure stays for ``synchronize``, as on the worker. False (nothing ran) on a closed
        stream. A user's RawKernel launch is ``submit``ted: it may spin on a flag the host sets
        after the launch returns."""
        claimed = self._claim(task)
        if claimed:
            try:
                self._run(task)
            finally:
                self._exec.release()
        return claimed is not None

    def _claim(self, queued):
        """Count one more piece of work. On an idle stream take the execution lock and return True (the
        caller runs the work now, then releases the lock); on a busy one queue ``queued`` and return
        False; on a closed one None (nothing counted)."""
        with self._lock:
            if self.closed:
                return None
            inline = self._pending == 0 and self._exec.acquire(blocking=False)
            self._pending += 1
            if not inline:
                self._queue.put(queued)
            return inline

    def run_now(self, task) -> bool:
        """Run ``task`` in stream order and return when it has run (its failure stays for
        ``synchronize``). On an idle stream it runs on the calling thread: the caller waits anyway,
        and two thread hand-offs cost more than a tiny kernel (a synchronous launch on the default
        stream: 55-100 -> 23-45 us end to end). Work submitted meanwhile queues behind it (the worker waits for the
        execution lock), so the order is the stream's."""
        with self._lock:
            if self.closed:
                return False
            inline = self._pending == 0 and self._exec.acquire(blocking=False)
            if inline:
                self._pending += 1
        if not inline:
            if not self.submit(task):
                return False
            self.wait_idle()
            return True
        try:
            self._run(task)
        finally:
            self._exec.release()
        return True

    def start(self, task) -> bool:
        """Queue ``task``, starting it on the calling thread when the stream is idle.

        ``task()`` returns None when it has finished, or a callable that finishes it (e.g. waits
        for a network request the caller should not block on): the worker runs that next, before
        anything queued meanwhile, and the stream stays busy until it has. A collective on an idle
        stream thus starts without two thread hand-offs, and still returns at once when its peers
        are late. On a busy stream ``task`` and its rest run on the worker in order."""
        claimed = self._claim(lambda: _run_to_end(task))
        if not claimed:
            return claimed is not None
        rest = None
        try:
            rest = self._run(task, may_continue=True)
        finally:
            if rest is not None:
                with self._lock:      # ahead of whatever was queued while ``task`` ran
                    self._front = rest
                    self._queue.put(_WAKE)
            self._exec.release()
        return True

    def _run(self, task, may_continue: bool = False):
        """Run ``task``; its failure is kept for ``synchronize``. Returns what it returned. The
        stream's count of unfinished work drops unless ``may_continue`` and ``task`` returned the
        rest of its work (``start``)."""
        result = None
        try:
            result = task()
        except BaseException as exc:  # a kernel error belongs to the stream, reported at sync
            with self._lock:
                if self._error is None:
                    self._error = exc
            result = None
        finally:
            if not (may_continue and result is not None):
                with self._lock:
                    self._pending -= 1
        return result

    def _serve(self) -> None:
        while True:
            task = self._queue.get()
            with self._exec:
                if self._front is not None:
                    front, self._front = self._front, None
                    self._run(front)
                if task is None:
                    return
                if task is not _WAKE:
                    self._run(task)

    def wait_idle(self) -> None:
        """Wait until everything submitted so far has run; failures stay for ``synchronize``."""
        with self._lock:
            if self._pending == 0:   # idle: nothing to hand to the worker and wait for
                return
        done = threading.Event()
        if self.submit(done.set):
            done.wait()
        elif self._thread is not threading.current_thread():
            self._thread.join()

    def synchronize(self) -> None:
        self.wait_idle()
        with self._lock:
            err, self._error = self._error, None
        if err is not None:
            raise DeviceError(str(err)) from err

    def close(self) -> None:
        with self._lock:
            if self.closed:
                return
            self.closed = True
            self._queue.put(None)


_WAKE = object()   # a queue entry that only makes the worker look at ``HostStream._front``


def _run_to_end(task) -> None:
    rest = task()
    if rest is not None:
        rest()


def _refused() -> None:
    raise DeviceError("the stream was destroyed while this work was being enqueued; nothing was queued")


def _enqueue(stream: HostStream, task) -> None:
    if not stream.enqueue(task):
        _refused()


class HostEvent:
    """Each record makes a fresh flag; a wait captures the flag of the latest record (CUDA semantics)."""

    def __init__(self):
        self.flag = threading.Event()
        self.flag.set()  # never recorded: complete, as cudaEventQuery says
        self.time: float | None = None

    def record(self, stream: HostStream) -> None:
        flag = threading.Event()
        self.flag = flag

        def fire():
            self.time = time.perf_counter()
            flag.set()
        if not stream.submit(fire):   # a destroyed stream has nothing left to run: complete now
            fire()


def _process_allocation_of(addr: int):
    """The allocation holding ``addr`` in the *process* backend — not in whichever HostBackend was
    created last (a test or a tool may make a throw-away one)."""
    from . import _backend
    return _backend.allocation_of(addr) if isinstance(_backend, HostBackend) else None


class HostBackend:
    name = "host"

    def __init__(self):
        self._buffers: dict[int, int] = {}    # live allocations: address -> mapped size
        self._dying: dict[int, int] = {}      # freed, released once the streams drained
        self._reserved: dict[int, list[int]] = {}   # released ranges kept PROT_NONE, by size, for reuse
        self._n_reserved = 0
        self._streams: list[HostStream] = []
        self._default: HostStream | None = None
        self._lock = threading.Lock()
        from ..emulator import set_allocation_resolver
        set_allocation_resolver(_process_allocation_of)  # the emulator's bounds-check mode asks the backend

    # devices -------------------------------------------------------------------------------
    def device_count(self) -> int:
        return 1

    def activate(self, device: int) -> None:
        pass

    # memory --------------------------------------------------------------------------------
    # Note [Host "device" memory]
    #     Every allocation is its own anonymous mapping (mmap), never heap memory shared with Python
    #     objects: once released it is unmapped, so a stale pointer faults in no one else's data and
    #     the runtime's host-range probe refuses it. A freed allocation is "dying" until the work queued
    #     before the free has run (stream-ordered free); ``is_dying`` lets the runtime refuse it too.

    def malloc(self, nbytes: int) -> int:
        size = max(nbytes, 1)
        ptr = None
        with self._lock:
            spare = self._reserved.get(size)
            if spare:
                ptr = spare.pop()
                self._n_reserved -= 1
        if ptr is not None:       # a released range of the same size: map fresh pages over it
            got = _mmap(ptr, size, _PROT_RW, _MAP_FLAGS | _MAP_FIXED, -1, 0)
            if got != ptr:
                _munmap(ptr, size)
                ptr = None
        if ptr is None:
            ptr = _mmap(None, size, _PROT_RW, _MAP_FLAGS, -1, 0)
        if ptr is None or ptr == _MAP_FAILED:
            raise MemoryError(f"mmap of {nbytes} bytes failed (errno {ctypes.get_errno()})")
        ctypes.memset(ptr, _POISON, nbytes)
        with self._lock:
            self._buffers[ptr] = size
        return ptr

    def free(self, ptr: int) -> None:
        """Stream-ordered release (aclrtFree / cudaFree semantics without blocking the caller): the
        memory stays mapped until every stream has run the work queued before this call, so a queued
        kernel or copy that still uses it never writes into memory handed out again."""
        with self._lock:
            size = self._buffers.pop(ptr)
            self._dying[ptr] = size
            streams = [s for s in self._streams if not s.closed]
        left = [len(streams)]
        lock = threading.Lock()

        def drained():
            with lock:
                left[0] -= 1
                last = left[0] == 0
            if last:
                self._release(ptr, size)

        if not streams:
            left[0] = 1
            drained()
        for s in streams:
            if not s.submit(drained, unless_idle=True):
                drained()                 # idle (no thread hand-off) or closed meanwhile: it ran everything it had

    malloc_host = malloc
    free_host = free

    def _release(self, ptr: int, size: int) -> None:
        """Give the pages back but keep the address range reserved (PROT_NONE): a stale pointer then
        faults, is refused by the runtime's host-range probe, and never lands in someone else's memory.
        Reserved ranges are reused by later allocations of the same size; beyond _MAX_RESERVED of them
        the oldest is unmapped."""
        got = _mmap(ptr, size, 0, _MAP_FLAGS | _MAP_FIXED | _MAP_NORESERVE, -1, 0)
        drop = []
        with self._lock:
            self._dying.pop(ptr, None)
            if got == ptr:
                self._reserved.setdefault(size, []).append(ptr)
                self._n_reserved += 1
                while self._n_reserved > _MAX_RESERVED:
                    k = next(iter(self._reserved))
                    drop.append((self._reserved[k].pop(0), k))
                    if not self._reserved[k]:
                        del self._reserved[k]
                    self._n_reserved -= 1
            else:
                drop.append((ptr, size))
        for p, n in drop:
            _munmap(p, n)

    def allocation_of(self, addr: int):
        """``(base, nbytes)`` of the live allocation holding ``addr``, or None (the emulator's bounds check)."""
        with self._lock:
            items = list(self._buffers.items())
        for base, size in items:
            if base <= addr < base + size:
                return base, size
        return None

    def is_dying(self, ptr: int, nbytes: int) -> bool:
        """Whether ``[ptr, ptr + nbytes)`` touches freed memory not yet released (queued work may still use it)."""
        with self._lock:
            return any(p < ptr + max(nbytes, 1) and ptr < p + n for p, n in self._dying.items())

    def memcpy(self, dst: int, src: int, nbytes: int, kind: int, stream: HostStream | None) -> None:
        if stream is None:
            self.synchronize_all()
            ctypes.memmove(dst, src, nbytes)
        else:
            _enqueue(stream, lambda: ctypes.memmove(dst, src, nbytes))

    def memset(self, ptr: int, value: int, nbytes: int, stream: HostStream | None) -> None:
        if stream is None:
            self.synchronize_all()
            ctypes.memset(ptr, value, nbytes)
        else:
            _enqueue(stream, lambda: ctypes.memset(ptr, value, nbytes))

    # streams and events --------------------------------------------------------------------
    def create_stream(self) -> HostStream:
        s = HostStream(f"aclnn-py-stream-{len(self._streams)}")
        with self._lock:
            self._streams.append(s)
        return s

    def current_stream(self) -> HostStream:
        """The stream a CuPy-style launch with ``stream=None`` uses: the emulator has no "current
        stream" of its own, so it is the default stream."""
        return self.default_stream()

    def default_stream(self) -> HostStream:
        if self._default is None:
            with self._lock:
                if self._default is None:
                    self._default = HostStream("aclnn-py-default-stream")
                    self._streams.append(self._default)
        return self._default

    def destroy_stream(self, stream: HostStream) -> None:
        """Waits for the stream's work, then ends its worker thread, even when that work failed
        (the failure is raised after the stream is gone, as aclrtDestroyStream reports it)."""
        try:
            stream.synchronize()
        finally:
            with self._lock:
                if stream in self._streams:
                    self._streams.remove(stream)
            stream.close()

    def synchronize(self, stream: HostStream) -> None:
        stream.synchronize()

    def synchronize_all(self) -> None:
        errors = []
        for s in list(self._streams):
            try:
                s.synchronize()
            except DeviceError as e:
                errors.append(str(e))
        if errors:
            raise DeviceError("; ".join(errors))

    def create_event(self) -> HostEvent:
        return HostEvent()

    def record_event(self, event: HostEvent, stream: HostStream) -> None:
        event.record(stream)

    def stream_wait_event(self, stream: HostStream, event: HostEvent) -> None:
        stream.submit(event.flag.wait)

    def synchronize_event(self, event: HostEvent) -> None:
        event.flag.wait()

    def query_event(self, event: HostEvent) -> bool:
        return event.flag.is_set()

    def elapsed_ms(self, start: HostEvent, end: HostEvent) -> float:
        return (end.time - start.time) * 1e3

    # kernels -------------------------------------------------------------------------------
    def load_module(self, code: str, options: Sequence[str], name_expressions, filename: str | None = None):
        from ..emulator import compile_module
        return compile_module(code, options=tuple(options), name_expressions=name_expressions, filename=filename)

    def get_function(self, module, name: str):
        return module.get_function(name)

    def freeze_args(self, kernel, args: Sequence[Any]) -> tuple:
        """Marshal a planned launch's constant arguments once (phase 1); pointer references stay."""
        check_args([a for a in args if type(a) not in (Slot, Ws)], kernel.name)
        frozen = []
        for i, a in enumerate(args):
            if type(a) in (Slot, Ws):
                frozen.append(a)
            else:
                one = _FakeKernel(kernel, i)
                frozen.append(marshal_args(one, (a,))[0])
        return tuple(frozen)

    def launch_planned(self, kernel, grid, block, args: tuple, slot_addrs, workspace, shared_mem, stream) -> None:
        """Phase 2's launch: constants were marshalled in phase 1; only pointer references remain."""
        params = [a if type(a) is bytes else
                  ((slot_addrs[a.index] if type(a) is Slot else workspace) + a.byte_offset).to_bytes(8, "little")
                  for a in args]
        _enqueue(stream, lambda: kernel.launch(grid, block, params, shared_mem))

    def launch(self, kernel, grid, block, args: Sequence[Any], shared_mem: int, stream: HostStream,
               wait: bool = False) -> None:
        """Queue a launch on ``stream``; ``wait``: return when it has run (the default stream's CuPy-style
        synchronous launch)."""
        check_args(args, kernel.name)    # what CuPy refuses raises here, on both backends (nothing queued)
        put = stream.run_now if wait else stream.submit   # a user kernel may wait for the host: never inline
        try:
            params = marshal_args(kernel, args)
        except Exception as exc:
            # an argument the kernel cannot take is a launch failure reported on the stream,
            # in order with the rest of its work, exactly like a fault inside the kernel
            def task(exc=exc):
                raise exc
        else:
            def task():
                kernel.launch(grid, block, params, shared_mem)
        if not put(task):
            _refused()

    def info(self) -> dict:
        from ..emulator import cache_dir, compiler_info
        return {"backend": "host (CUDA emulator)", "compiler": compiler_info(), "kernel cache": str(cache_dir())}


class ArgumentError(TypeError):
    pass


def marshal_args(kernel, args: Sequence[Any]) -> list[bytes]:
    """Turn launch arguments into the bytes a GPU would receive, following CuPy 14's conversion rules
    (:mod:`aclnn_py.kernel_args`: ``int`` → int64, ``float`` → float64, ``complex`` → complex128,
    ``bool`` → bool, ``None`` → a null pointer, NumPy scalars and size-1 arrays by value; anything else
    is a TypeError, as in CuPy). An ``int`` or a wider NumPy integer for a narrower integer parameter is
    passed in that parameter's size when it fits (the driver copies the parameter's size from the
    argument: a GPU reads its low bytes). The emulator then
    refuses any other size mismatch (a Python float for a ``float`` parameter is garbage on a GPU).
    ``bytes`` are arguments already marshalled by ``freeze_args``.
    """
    sizes, kinds = kernel.param_sizes, kernel.param_kinds
    name = kernel.name
    if len(args) != len(sizes):
        raise ArgumentError(f"kernel {name!r}: {len(args)} arguments given, the kernel takes {len(sizes)}")
    out = []
    first = getattr(kernel, "first_index", 0)
    for i, (a, size, kind) in enumerate(zip(args, sizes, kinds), start=first):
        ta = type(a)
        if ta is bytes:                       # already marshalled (a frozen planned argument)
            if len(a) != size:
                raise ArgumentError(f"kernel {name!r} argument {i}: {len(a)} bytes given for a {size}-byte parameter")
            out.append(a)
            continue
        if ta is not int and kind == "i" and size < 8 and isinstance(a, np.integer) and a.itemsize > size:
            a = int(a)     # a wider NumPy integer: a GPU reads its low bytes, as for a Python int below
            ta = int
        if ta is int:
            if size == 8 or kind != "i":
                b = scalar_bytes(a)
            else:
                lo, hi = -(1 << (8 * size - 1)), (1 << (8 * size)) - 1
                if not lo <= a <= hi:
                    raise ArgumentError(f"kernel {name!r} argument {i}: {a} does not fit a {size}-byte parameter")
                b = (a & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
        else:
            try:
                b = scalar_bytes(a)
            except TypeError as e:
                raise ArgumentError(f"kernel {name!r} argument {i}: {e}") from None
            if b is None:                      # a CuPy pointer object (never on the emulator's memory)
                raise ArgumentError(f"kernel {name!r} argument {i}: a CuPy device object cannot be used by the "
                                    f"host emulator")
        if len(b) != size:
            raise ArgumentError(f"kernel {name!r} argument {i}: {len(b)} bytes given for a {size}-byte parameter"
                                + (" (a Python float is passed as float64; use numpy.float32)" if ta is float else ""))
        out.append(b)
    return out


class _FakeKernel:
    """One parameter of a kernel, so marshal_args can check a single argument."""

    def __init__(self, kernel, i):
        self.name, self.first_index = kernel.name, i
        self.param_sizes, self.param_kinds = kernel.param_sizes[i:i + 1], kernel.param_kinds[i:i + 1]
