"""The host engine: MPI through mpi4py (MPICH's wheel gives ``mpiexec``); ranks are processes.

A collective is a task on the caller's host stream, run after the kernels queued before it and
before those queued after it. On an idle stream it starts on the caller's thread and goes on there
for at most 100 µs per exchange (``_INLINE_S``): in a training step the peers are usually there
already, and two thread hand-offs cost more than the exchange; whatever is not done by then is
finished by the stream's worker, so the call still returns at once when peers are late. It is two
non-blocking MPI collectives, each polled until done:

1. a *signature check*: an ``Iallreduce(MAX)`` of ``[v, -v]`` where ``v`` = (arguments valid,
   collective kind, count, dtype, op, root, sequence number). Every rank learns the min and max of
   each field, so a mismatched count, dtype, op, root or call order is an ``HCCL_E_PARA`` on every
   rank (naming the field) and the data collective is not started: nothing hangs, nothing is
   truncated, the communicator stays usable. ``ACLNN_PY_HCCL_CHECK=0`` skips it (one round trip less).
2. the data collective (``Iallreduce``, ``Iallgather``, ``Ibcast``, ``Ireduce_scatter_block``,
   ``Ireduce``, ``Ibarrier``) straight on the device memory (host memory on this backend).

While polling, a rank checks every 0.1 s that the peers on its own host are alive (their pids are
exchanged at init) and gives up after ``HCCL_EXEC_TIMEOUT`` seconds (HCCL's variable; default 300
here): a lost peer is ``HCCL_E_REMOTE``, a timeout ``HCCL_E_TIMEOUT``. Either one breaks the
communicator (later collectives on it fail at once) and is reported on the stream (its next
synchronize returns an error status with the message) and by ``HcclGetCommAsyncError``. MPI cannot
finalise once a peer is gone (``MPI_Finalize`` waits for it forever), so a process whose
communicator broke leaves at exit without ``MPI_Finalize`` (``os._exit(1)`` after flushing stdio).
With MPICH's default ``mpiexec`` a rank that dies makes the launcher end the whole job; run
``mpiexec -disable-auto-cleanup`` for the survivors to see the statuses.

FLOAT16 and BF16 reductions use a user-defined MPI op (NumPy / ml_dtypes, combined in float32 and
rounded each step); every other dtype uses MPI's predefined types and ops.
"""
from __future__ import annotations

import atexit
import os
import socket
import sys
import threading
import time

import numpy as np

from ._types import DTYPE_NUMPY, DTYPE_SIZE, HcclDataType, HcclResult

R = HcclResult
_D = HcclDataType

KINDS = {"HcclAllReduce": 1, "HcclAllGather": 2, "HcclBroadcast": 3, "HcclReduceScatter": 4,
         "HcclBarrier": 5, "HcclReduce": 6}
_FIELDS = ("arguments valid", "collective", "count", "data type", "reduce op", "root", "call sequence number")

_broken_any = False          # a communicator lost a peer or timed out: skip MPI_Finalize at exit
_exit_lock = threading.Lock()
_MPI = None


_BYE = 0x4879   # tag of the "this process is leaving" message on a communicator's control channel
_live: set = set()   # communicators not destroyed yet


def _exit_guard():
    if _broken_any:
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except Exception:
                pass
        os._exit(1)
    # Leaving with live communicators (an uncaught exception, sys.exit, or no HcclCommDestroy): the
    # peers may be waiting in a collective this process will never join, and MPI_Finalize would wait
    # for them. Tell them, so that they fail with HCCL_E_REMOTE at once instead of timing out.
    for c in list(_live):
        c.say_goodbye()


def load_mpi():
    """mpi4py's MPI module (initialised with MPI_THREAD_MULTIPLE), or a sentence saying what is missing."""
    global _MPI
    if _MPI is not None:
        return _MPI
    try:
        import mpi4py
        mpi4py.rc.thread_level = "multiple"     # no effect when the user imported mpi4py.MPI first
        from mpi4py import MPI
    except Exception as e:   # ImportError, or an MPI library that cannot start
        return (f"the MPI engine needs mpi4py and an MPI library ({type(e).__name__}: {e}); "
                f"install them with: pip install 'aclnn-py[distributed]' (mpi4py + the mpich wheel)")
    if MPI.Query_thread() < MPI.THREAD_MULTIPLE:
        return ("the MPI engine needs MPI_THREAD_MULTIPLE (collectives run on stream worker threads), but "
                f"MPI was initialised with thread level {MPI.Query_thread()}: import aclnn_py.hccl before "
                "mpi4py.MPI or leave mpi4py.rc.thread_level at 'multiple'")
    with _exit_lock:
        if _MPI is None:
            atexit.register(_exit_guard)   # runs before mpi4py's MPI_Finalize
            _MPI = MPI
    return _MPI


def exec_timeout() -> float:
    try:
        return float(os.environ.get("HCCL_EXEC_TIMEOUT", "300"))
    except ValueError:
        return 300.0


def connect_timeout() -> float:
    try:
        return float(os.environ.get("HCCL_CONNECT_TIMEOUT", "120"))
    except ValueError:
        return 120.0


_INLINE_S = 100e-6   # how long each exchange of a collective started on an idle stream may hold the caller


def _check_enabled() -> bool:
    return os.environ.get("ACLNN_PY_HCCL_CHECK", "1") != "0"


_PREDEFINED = None


def _predefined(MPI):
    """(HcclDataType -> MPI datatype, HcclReduceOp -> MPI op), built once."""
    global _PREDEFINED
    if _PREDEFINED is None:
        _PREDEFINED = ({0: MPI.INT8_T, 1: MPI.INT16_T, 2: MPI.INT32_T, 3: MPI.UINT16_T, 4: MPI.FLOAT, 5: MPI.INT64_T,
                        6: MPI.UINT64_T, 7: MPI.UINT8_T, 8: MPI.UINT16_T, 9: MPI.UINT32_T, 10: MPI.DOUBLE,
                        11: MPI.UINT16_T},
                       {0: MPI.SUM, 1: MPI.PROD, 2: MPI.MAX, 3: MPI.MIN})
    return _PREDEFINED


class CollectiveError(RuntimeError):
    """Raised on the stream worker: the stream keeps it for its next synchronize."""

    def __init__(self, status: HcclResult, message: str):
        self.status = status
        super().__init__(f"{message} [{status.name}]")


class PeerLeft(CollectiveError):
    """A peer said goodbye (its process is exiting) instead of taking part."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:   # a killed process the launcher has not reaped yet is a zombie: gone for us
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return True


class MpiComm:
    def __init__(self, mpi_comm, rank: int, size: int, peers, ctrl=None):
        self.comm, self.rank, self.size = mpi_comm, rank, size
        # control channel (a duplicate of the communicator): a peer that leaves sends a goodbye there
        self.ctrl = ctrl
        self.bye_buf = np.zeros(1, np.int32)
        self.bye = ctrl.Irecv(self.bye_buf, source=_MPI.ANY_SOURCE, tag=_BYE) if ctrl is not None else None
        self.bye_from = None            # (rank, when seen) of a peer that left
        host = socket.gethostname()
        self.local_peers = [(r, pid) for r, (h, pid) in enumerate(peers) if h == host and r != rank]
        self.seq = 0
        self.lock = threading.Lock()
        self.broken: CollectiveError | None = None
        self.async_error = R.HCCL_SUCCESS
        self.pending = 0
        self.last_stream = None        # where the latest collective went (a failed call's notice follows it)
        self.idle = threading.Condition(self.lock)
        self.scratch = np.zeros(1, np.int8)     # the barrier's dummy buffer

    def peer_left(self):
        """(rank, seconds since its goodbye) of a peer whose process is leaving, or None."""
        if self.bye_from is None and self.bye is not None:
            st = _MPI.Status()
            if self.bye.Test(st):
                self.bye = None
                self.bye_from = (st.Get_source(), time.monotonic())
        return None if self.bye_from is None else (self.bye_from[0], time.monotonic() - self.bye_from[1])

    def stop_listening(self) -> None:
        if self.bye is not None:
            self.bye.Cancel()
            self.bye.Wait()
            self.bye = None

    def say_goodbye(self) -> None:
        if self.ctrl is None or self.broken is not None:
            return
        try:
            self.stop_listening()
            msg = np.array([self.rank], np.int32)
            reqs = [self.ctrl.Isend(msg, dest=r, tag=_BYE) for r in range(self.size) if r != self.rank]
            end = time.monotonic() + 1.0      # small messages go out at once (eager)
            while not _MPI.Request.Testall(reqs) and time.monotonic() < end:
                time.sleep(1e-3)
        except Exception:
            pass

    def break_(self, err: CollectiveError, peer_finalizes: bool = False) -> CollectiveError:
        """Break the communicator. ``peer_finalizes``: the peer that is missing said goodbye and will
        call MPI_Finalize itself, so this process may too (a dead peer never will)."""
        global _broken_any
        with self.lock:
            if self.broken is None:
                self.broken = err
            self.async_error = err.status
        if not peer_finalizes:
            _broken_any = True
        return err


class MpiEngine:
    name = "MPI (mpi4py)"

    def __init__(self):
        self._init_lock = threading.Lock()
        self._ops = {}

    # communicators -------------------------------------------------------------------------
    def root_payload(self):
        m = load_mpi()
        return (R.HCCL_E_UNAVAIL, m) if isinstance(m, str) else b""

    def init_comm(self, n_ranks: int, uid: bytes, payload: bytes, rank: int):
        """(MpiComm, 0) or (None, status, message). Collective over MPI_COMM_WORLD, like MPI_Comm_split."""
        MPI = load_mpi()
        if isinstance(MPI, str):
            return None, R.HCCL_E_UNAVAIL, MPI
        world = MPI.COMM_WORLD
        if n_ranks > world.size:
            return None, R.HCCL_E_PARA, (f"n_ranks={n_ranks} but this MPI job has {world.size} process(es): "
                                         f"run it with mpiexec -n {n_ranks} (or more)")
        with self._init_lock:
            req = world.Ibarrier()     # everyone has arrived before the blocking split
            st = self._poll(req, None, time.monotonic() + connect_timeout(), "HcclCommInitRootInfo", init=True)
            if st is not None:
                return None, st.status, str(st)
            color = int.from_bytes(uid[:4], "little") & 0x7FFFFFFF
            comm = world.Split(color, rank)
            me = (uid, n_ranks, rank, socket.gethostname(), os.getpid())
            everyone = comm.allgather(me)
            ctrl = comm.Dup()
        problem = None
        if any(e[0] != uid for e in everyone):
            problem = "two communicators' root infos collided; call HcclGetRootInfo again"
        elif comm.size != n_ranks or any(e[1] != n_ranks for e in everyone):
            problem = (f"{comm.size} process(es) joined with this root info, n_ranks says "
                       f"{sorted({e[1] for e in everyone})}")
        elif [e[2] for e in everyone] != list(range(n_ranks)):
            problem = f"the ranks given are {sorted(e[2] for e in everyone)}, not 0..{n_ranks - 1} once each"
        if problem:
            ctrl.Free()
            comm.Free()
            return None, R.HCCL_E_PARA, problem
        c = MpiComm(comm, rank, n_ranks, [(e[3], e[4]) for e in everyone], ctrl)
        _live.add(c)
        return c, R.HCCL_SUCCESS, ""

    def destroy(self, c: MpiComm) -> None:
        with c.lock:
            deadline = time.monotonic() + exec_timeout() + 5
            while c.pending and time.monotonic() < deadline:
                c.idle.wait(0.1)
            broken = c.broken is not None or c.pending
        _live.discard(c)
        if not broken:
            c.stop_listening()
            c.ctrl.Free()
            c.comm.Free()

    # collectives ---------------------------------------------------------------------------
    def unsupported(self, dtype: int) -> str | None:
        return None if dtype in DTYPE_NUMPY else f"the MPI engine has no {HcclDataType(dtype).name}"

    def async_error(self, c: MpiComm) -> HcclResult:
        return c.async_error

    def enqueue(self, c: MpiComm, stream, api: str, args: dict, valid: bool):
        """Queue ``api`` on the host ``stream``: (True, None), or (False, (status, message)).

        ``args``: send, recv (addresses), count, dtype, op, root. ``valid`` False queues only the
        signature check (so the peers fail at once instead of waiting): this rank already returned
        its status."""
        with c.lock:
            seq = c.seq
            c.seq += 1
            c.pending += 1
            c.last_stream = stream
        sig = [int(valid), KINDS[api], args.get("count", 0), args.get("dtype", -1), args.get("op", -1),
               args.get("root", -1), seq]

        steps = self._steps(c, api, sig, args, valid, _check_enabled())

        def done():
            with c.lock:
                c.pending -= 1
                c.idle.notify_all()

        def task():
            """Caller's thread on an idle stream (else the worker): run the steps whose requests
            complete within _INLINE_S; the rest, if any, goes to the worker."""
            deadline = time.monotonic() + exec_timeout()
            try:
                rest = self._advance(c, api, steps, deadline, _INLINE_S)
            except BaseException:
                done()
                raise
            if rest is None:
                done()
                return None

            def finish():
                try:
                    self._advance(c, api, steps, deadline, None, rest)
                finally:
                    done()
            return finish
        if not stream.start(task):
            done()
            return False, (R.HCCL_E_RUNTIME, f"{api}: the stream was destroyed while this call was enqueued")
        return True, None

    def _advance(self, c: MpiComm, api: str, steps, deadline: float, budget: float | None, req=None):
        """Drive ``steps`` (a generator of MPI requests). ``budget`` None: wait for each request
        (peer checks, timeout) and return None at the end. Otherwise poll each one for at most
        ``budget`` seconds and return the first request still unfinished (the caller hands it and
        ``steps`` on), or None."""
        MPI = _MPI
        try:
            if req is None:
                req = next(steps)
            while True:
                if budget is None:
                    err = self._poll(req, c, deadline, api)
                    if err is not None:
                        raise c.break_(err, isinstance(err, PeerLeft))
                else:
                    test = req.Test
                    end = time.perf_counter() + budget   # each exchange gets the whole budget
                    while not test():
                        if time.perf_counter() > end:
                            return req
                req = steps.send(None)
        except StopIteration:
            return None
        except MPI.Exception as e:
            raise c.break_(CollectiveError(R.HCCL_E_REMOTE, f"{api}: MPI reported {e}"))

    def _steps(self, c: MpiComm, api: str, sig, args, valid: bool, check: bool):
        """The collective as a generator: yields each MPI request it must wait for, in order."""
        if c.broken is not None:
            raise CollectiveError(c.broken.status, f"{api}: the communicator is broken by an earlier failure "
                                                   f"({c.broken})")
        MPI = _MPI
        if not valid and not check:
            return   # without the check the peers post no signature exchange: they time out, never pair wrongly
        if check:
            # (plain lists and one small array: this round trip is on every collective's path)
            both = np.array(sig + [-v for v in sig], np.int64)
            out = np.empty(14, np.int64)
            yield c.comm.Iallreduce(both, out, op=MPI.MAX)
            o = out.tolist()
            hi, lo = o[:7], [-v for v in o[7:]]
            if not valid:
                return
            if hi != lo:
                i = next(k for k in range(7) if hi[k] != lo[k])
                if i == 0:
                    msg = f"{api} #{sig[6]}: another rank passed invalid arguments to its matching call"
                else:
                    msg = (f"{api} #{sig[6]}: the ranks disagree on the {_FIELDS[i]} (min {lo[i]}, max {hi[i]}; "
                           f"this rank: {sig[i]}); nothing was exchanged")
                err = CollectiveError(R.HCCL_E_PARA, msg)
                with c.lock:
                    c.async_error = R.HCCL_E_PARA
                raise err
        try:
            req = self._start(MPI, c, api, args)
        except MPI.Exception as e:
            raise c.break_(CollectiveError(R.HCCL_E_INTERNAL, f"{api}: MPI refused the call: {e}"))
        yield req

    def _poll(self, req, c: MpiComm | None, deadline: float, api: str, init: bool = False):
        """Wait for ``req``; None when done, else the CollectiveError (peer lost, timeout, MPI error)."""
        MPI = _MPI
        test = req.Test
        try:
            now = time.monotonic()
            spin_until, next_look, nap, i = now + 0.005, now + 0.1, 0.0, 0
            while not test():
                i += 1
                if i & 31:                 # spin: a peer that is a few µs late costs only that
                    continue
                now = time.monotonic()
                if now < spin_until:
                    time.sleep(0)          # let this process's other threads run meanwhile
                    continue
                if now >= next_look and c is not None:
                    next_look = now + 0.1
                    dead = [(r, pid) for r, pid in c.local_peers if not _alive(pid)]
                    if dead:
                        return CollectiveError(R.HCCL_E_REMOTE, f"{api}: rank {dead[0][0]} (pid {dead[0][1]}, "
                                                                f"this host) exited before taking part")
                    left = c.peer_left()
                    if left is not None and left[1] > 1.0:   # (its last messages may still be on the way)
                        return PeerLeft(R.HCCL_E_REMOTE, f"{api}: rank {left[0]} is leaving (its process "
                                                                f"exits: an uncaught exception, sys.exit, or no "
                                                                f"HcclCommDestroy) and will not take part")
                if now >= deadline:
                    what = "HCCL_CONNECT_TIMEOUT" if init else "HCCL_EXEC_TIMEOUT"
                    global _broken_any
                    _broken_any = True
                    return CollectiveError(R.HCCL_E_TIMEOUT, f"{api}: the other ranks did not take part within "
                                                             f"{what}={connect_timeout() if init else exec_timeout():g} s")
                time.sleep(nap)            # then back off to 1 ms naps (a long wait costs no CPU)
                nap = min(nap * 2 + 2e-5, 1e-3)
        except MPI.Exception as e:
            return CollectiveError(R.HCCL_E_REMOTE, f"{api}: MPI reported {e}")
        return None

    def _op(self, MPI, dtype: int, op: int):
        if dtype in (_D.HCCL_DATA_TYPE_FP16, _D.HCCL_DATA_TYPE_BFP16):
            key = (dtype, op)
            o = self._ops.get(key)
            if o is None:
                np_t = DTYPE_NUMPY[HcclDataType(dtype)]
                fn = {0: np.add, 1: np.multiply, 2: np.maximum, 3: np.minimum}[op]

                def reduce(inbuf, inoutbuf, datatype, np_t=np_t, fn=fn):
                    a = np.frombuffer(inbuf, np_t)
                    b = np.frombuffer(inoutbuf, np_t)
                    b[...] = fn(a.astype(np.float32), b.astype(np.float32)).astype(np_t)
                o = self._ops[key] = MPI.Op.Create(reduce, commute=True)
            return o
        return _predefined(MPI)[1][op]

    @staticmethod
    def _type(MPI, dtype: int):
        return _predefined(MPI)[0][dtype]

    def _start(self, MPI, c: MpiComm, api: str, a):
        if api == "HcclBarrier":
            return c.comm.Ibarrier()
        t = self._type(MPI, a["dtype"])
        size = DTYPE_SIZE[a["dtype"]]
        n = a["count"]
        mem = MPI.memory.fromaddress

        def buf(addr, count):
            # [memory, type]: mpi4py derives the count (per rank for the gather / scatter sides)
            return [mem(addr, count * size) if count else mem(0, 0), t]
        if api == "HcclAllReduce":
            send = MPI.IN_PLACE if a["send"] == a["recv"] else buf(a["send"], n)
            return c.comm.Iallreduce(send, buf(a["recv"], n), op=self._op(MPI, a["dtype"], a["op"]))
        if api == "HcclReduce":
            send = MPI.IN_PLACE if a["send"] == a["recv"] and c.rank == a["root"] else buf(a["send"], n)
            recv = buf(a["recv"], n) if c.rank == a["root"] else None
            return c.comm.Ireduce(send, recv, op=self._op(MPI, a["dtype"], a["op"]), root=a["root"])
        if api == "HcclAllGather":
            in_place = a["send"] == a["recv"] + c.rank * n * size
            send = MPI.IN_PLACE if in_place else buf(a["send"], n)
            return c.comm.Iallgather(send, buf(a["recv"], n * c.size))
        if api == "HcclBroadcast":
            return c.comm.Ibcast(buf(a["send"], n), root=a["root"])
        if api == "HcclReduceScatter":
            return c.comm.Ireduce_scatter_block(buf(a["send"], n * c.size), buf(a["recv"], n),
                                                op=self._op(MPI, a["dtype"], a["op"]))
        raise ValueError(api)
