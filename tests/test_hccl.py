"""aclnn_py.hccl: real multi-process runs under MPICH's ``mpiexec`` (programs in tests/hccl_progs/),
HCCL's enum values, the missing-engine status, and the NCCL engine's mapping against a fake ``nccl``
(no GPU here: the real NCCL path is not run by this suite).
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import aclnn_py.hccl as hccl
from aclnn_py.hccl import _types

ROOT = Path(__file__).resolve().parents[1]
PROGS = ROOT / "tests" / "hccl_progs"
SAMPLE = ROOT / "samples" / "11_sync_batch_norm_distributed.py"
HAVE_MPI4PY = importlib.util.find_spec("mpi4py") is not None


def _mpiexec():
    local = Path(sys.executable).parent / "mpiexec"
    return str(local) if local.exists() else shutil.which("mpiexec")


needs_mpi = pytest.mark.skipif(not HAVE_MPI4PY or _mpiexec() is None,
                               reason="needs mpi4py and MPICH's mpiexec: pip install 'aclnn-py[distributed]'")


def _env(**extra):
    env = {**os.environ, "ACLNN_PY_DEVICE": "host", "HCCL_EXEC_TIMEOUT": "30", "HCCL_CONNECT_TIMEOUT": "30", **extra}
    env.pop("ACLNN_PY_STRICT", None)
    return env


def mpirun(n, *args, timeout=90, flags=(), **env):
    cmd = [_mpiexec(), *flags, "-n", str(n), sys.executable, *map(str, args)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=_env(**env))
    return r, r.stdout + r.stderr


# HCCL's numbers (hccl_types.h) ---------------------------------------------------------------------
def test_enum_values_are_hcclsits():
    R, D, O = hccl.HcclResult, hccl.HcclDataType, hccl.HcclReduceOp
    assert (R.HCCL_SUCCESS, R.HCCL_E_PARA, R.HCCL_E_PTR, R.HCCL_E_MEMORY, R.HCCL_E_INTERNAL) == (0, 1, 2, 3, 4)
    assert (R.HCCL_E_NOT_SUPPORT, R.HCCL_E_UNAVAIL, R.HCCL_E_TIMEOUT, R.HCCL_E_RUNTIME) == (5, 7, 9, 15)
    assert (R.HCCL_E_NETWORK, R.HCCL_E_AGAIN, R.HCCL_E_REMOTE, R.HCCL_E_SUSPENDING) == (19, 20, 21, 22)
    assert [D.HCCL_DATA_TYPE_INT8, D.HCCL_DATA_TYPE_INT16, D.HCCL_DATA_TYPE_INT32, D.HCCL_DATA_TYPE_FP16,
            D.HCCL_DATA_TYPE_FP32, D.HCCL_DATA_TYPE_INT64, D.HCCL_DATA_TYPE_UINT64, D.HCCL_DATA_TYPE_UINT8,
            D.HCCL_DATA_TYPE_FP64, D.HCCL_DATA_TYPE_BFP16] == [0, 1, 2, 3, 4, 5, 6, 7, 10, 11]
    assert (O.HCCL_REDUCE_SUM, O.HCCL_REDUCE_PROD, O.HCCL_REDUCE_MAX, O.HCCL_REDUCE_MIN) == (0, 1, 2, 3)
    assert hccl.HCCL_ROOT_INFO_BYTES == 4108
    assert hccl.HCCL_E_TIMEOUT == 9 and hccl.HCCL_DATA_TYPE_BFP16 == 11   # flat names too
    assert hccl.HcclGetErrorString(1) == "parameter error" and hccl.HcclGetErrorString(999) == "unknown error"


def test_root_info_round_trip_and_rejects():
    info = _types.pack_root_info(_types.ENGINE_NCCL, bytes(range(128)))
    assert len(info) == 4108
    engine, uid, payload = _types.unpack_root_info(bytearray(info))
    assert engine == _types.ENGINE_NCCL and len(uid) == 16 and payload == bytes(range(128))
    assert isinstance(_types.unpack_root_info(info[:-1]), str)
    assert isinstance(_types.unpack_root_info(b"\0" * 4108), str)
    assert isinstance(_types.unpack_root_info("text"), str)


def test_missing_engine_is_a_status_naming_the_extra():
    code = ("import sys; sys.modules['mpi4py'] = None\n"
            "from aclnn_py import acl; import aclnn_py.hccl as h\n"
            "acl.init(); acl.rt.set_device(0)\n"
            "info, ret = h.HcclGetRootInfo(); print(int(ret)); print(acl.get_recent_err_msg())")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=_env())
    lines = r.stdout.splitlines()
    assert r.returncode == 0 and lines[0] == str(int(hccl.HCCL_E_UNAVAIL)), r.stdout + r.stderr
    assert "pip install 'aclnn-py[distributed]'" in r.stdout


# one rank (MPI singleton, no mpiexec) ----------------------------------------------------------------
@needs_mpi
def test_single_rank_statuses():
    r = subprocess.run([sys.executable, str(PROGS / "single.py")], capture_output=True, text=True, timeout=60,
                       cwd=ROOT, env=_env())
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), r.stdout + r.stderr


# real ranks --------------------------------------------------------------------------------------------
@needs_mpi
@pytest.mark.parametrize("n", [2, 3])
def test_every_collective_dtype_op(n):
    r, out = mpirun(n, PROGS / "collectives.py")
    assert r.returncode == 0, out
    # whole-output matching: MPICH forwards the ranks' output in chunks that may interleave mid-line
    assert len(re.findall(r"collectives: \d+ cases, 0 failures", out)) == n, out
    assert " FAIL " not in out, out


@needs_mpi
@pytest.mark.parametrize("n", [3, 4])
def test_sync_batch_norm_sample(n, tmp_path):
    # one output file per rank: MPICH forwards the ranks' stdout in chunks that may interleave mid-line
    # HCCL_EXEC_TIMEOUT above a cold compile of batch_norm.cu (23-35 s per rank, all ranks compiling at once on
    # 2 cores): a rank at its first all-gather waits for the others' compile (the tests' 30 s made this flaky)
    r, out = mpirun(n, SAMPLE, timeout=180, flags=["-outfile-pattern", str(tmp_path / "out.%r")],
                    HCCL_EXEC_TIMEOUT="150")
    files = [tmp_path / f"out.{k}" for k in range(n)]
    outs = [f.read_text() if f.exists() else f"(no output file: rank {k} wrote nothing)" for k, f in enumerate(files)]
    everything = out + "".join(f"\n--- rank {k}:\n{o}" for k, o in enumerate(outs))
    assert r.returncode == 0, everything
    assert all(o.count("all ranks: PASS") == 4 and "FAIL" not in o for o in outs), everything
    assert outs[1].count("rank 1/") == 4 and outs[1].count("(0 samples") == 4, everything  # rank 1: no samples


@needs_mpi
def test_sync_batch_norm_checks_can_fail():
    r, out = mpirun(3, PROGS / "syncbn_control.py", timeout=150, HCCL_EXEC_TIMEOUT="120")   # cold compile: see above
    assert r.returncode == 0 and out.count("without the all-reduce detected") == 3, out


@needs_mpi
def test_mismatched_count_and_dtype_are_statuses_on_every_rank():
    r, out = mpirun(3, PROGS / "failures.py", "mismatch", timeout=60)
    assert r.returncode == 0, out
    for what, field in (("count", "the count"), ("dtype", "the data type")):
        got = re.findall(rf"mismatch {what} enqueue=0 sync=(\d+) async=(\w+) after [\d.]+ s msg=[^\[]*"
                         rf"ranks disagree on {field} ", out)
        assert len(got) == 3 and all(g == ("507015", "HCCL_E_PARA") for g in got), out
    assert out.count("matching all-reduce OK") == 3, out


@needs_mpi
def test_invalid_arguments_on_one_rank_fail_the_others_at_once():
    r, out = mpirun(3, PROGS / "failures.py", "invalid", timeout=60)
    assert r.returncode == 0, out
    assert "rank 1: invalid enqueue=2 (HCCL_E_PTR)" in out and "rank 1: invalid own stream sync=0" in out, out
    peers = re.findall(r"invalid peer enqueue=0 sync=\d+ async=HCCL_E_PARA after [\d.]+ s msg=[^\[]*another rank "
                       r"passed invalid", out)
    assert len(peers) == 2, out


@needs_mpi
def test_a_rank_that_dies_gives_statuses_not_a_hang():
    r, out = mpirun(3, PROGS / "failures.py", "die", flags=["-disable-auto-cleanup"], timeout=60)
    # each survivor names a peer that is gone: rank 1 (the one that died), or the other survivor when that
    # one already reported and exited before this one noticed (a race, and a true statement either way)
    lost = re.findall(r"die lost-peer enqueue=0 sync=\d+ async=HCCL_E_REMOTE after ([\d.]+) s msg=[^\[]*rank \d \(pid",
                      out)
    assert len(lost) == 2 and all(float(t) < 5 for t in lost), out
    assert out.count("die next-call enqueue=21 (HCCL_E_REMOTE)") == 2, out


@needs_mpi
def test_a_killed_rank_ends_the_job_not_a_hang():
    """SIGKILL: MPICH's mpiexec ends the job (even with -disable-auto-cleanup); nothing is left running."""
    r, out = mpirun(3, PROGS / "failures.py", "kill", timeout=60)
    assert r.returncode != 0, out


@needs_mpi
def test_a_rank_that_raises_says_goodbye_and_the_job_ends():
    """An uncaught exception (or sys.exit) in one rank: it tells its peers as it exits, so they fail at
    once with HCCL_E_REMOTE instead of waiting HCCL_EXEC_TIMEOUT, and nobody hangs in MPI_Finalize
    (it used to: the whole job under -disable-auto-cleanup)."""
    r, out = mpirun(3, PROGS / "failures.py", "raise", flags=["-disable-auto-cleanup"], timeout=60,
                    HCCL_EXEC_TIMEOUT="30")
    got = re.findall(r"raise left-peer enqueue=0 sync=\d+ async=HCCL_E_REMOTE after ([\d.]+) s msg=[^\[]*rank 1 is "
                     r"leaving", out)
    assert len(got) == 2 and all(float(t) < 10 for t in got), out
    assert "rank 1 fails on purpose" in out, out


@needs_mpi
def test_exiting_without_destroy_ends_normally():
    r, out = mpirun(3, PROGS / "failures.py", "nodestroy", timeout=60)
    assert r.returncode == 0 and out.count("nodestroy sync=0") == 3, out


@needs_mpi
def test_a_bad_stream_on_one_rank_still_tells_the_peers():
    r, out = mpirun(3, PROGS / "failures.py", "badstream", timeout=60)
    assert r.returncode == 0, out
    assert "rank 1: badstream enqueue=1 (HCCL_E_PARA)" in out, out
    assert len(re.findall(r"badstream peer enqueue=0 sync=507015 async=HCCL_E_PARA after [\d.]+ s msg=[^\[]*another "
                          r"rank passed invalid", out)) == 2, out
    assert out.count("badstream then matching all-reduce OK") == 3, out


@needs_mpi
def test_a_late_peer_does_not_hold_the_callers():
    """A collective on an idle stream starts on the caller's thread but holds it at most ~50 µs: with
    rank 1 half a second late, the others' calls return at once, and stream order still holds."""
    r, out = mpirun(3, PROGS / "failures.py", "late", timeout=60)
    assert r.returncode == 0, out
    got = dict(re.findall(r"rank (\d): late call=([\d.]+) s result OK", out))
    assert sorted(got) == ["0", "1", "2"], out
    assert float(got["0"]) < 0.2 and float(got["2"]) < 0.2, out


@needs_mpi
def test_an_absent_rank_is_a_timeout():
    r, out = mpirun(2, PROGS / "failures.py", "absent", flags=["-disable-auto-cleanup"], timeout=60,
                    HCCL_EXEC_TIMEOUT="1")
    got = re.findall(r"rank 0: absent timeout enqueue=0 sync=\d+ async=HCCL_E_TIMEOUT after ([\d.]+) s "
                     r"msg=[^\[]*HCCL_EXEC_TIMEOUT=1 s", out)
    assert len(got) == 1 and 0.9 < float(got[0]) < 5, out


# the NCCL engine, against a fake nccl module ---------------------------------------------------------------
class FakeNcclError(Exception):
    def __init__(self, status):
        self.status = status
        super().__init__(f"NCCL error {status}")


class FakeComm:
    def __init__(self, n, uid, rank):
        self.args, self.calls, self.fail = (n, uid, rank), [], None

    def _call(self, name, *a):
        if self.fail is not None:
            raise FakeNcclError(self.fail)
        self.calls.append((name, *a))

    def allReduce(self, *a):
        self._call("allReduce", *a)

    def reduce(self, *a):
        self._call("reduce", *a)

    def allGather(self, *a):
        self._call("allGather", *a)

    def broadcast(self, *a):
        self._call("broadcast", *a)

    def reduceScatter(self, *a):
        self._call("reduceScatter", *a)

    def destroy(self):
        self.calls.append(("destroy",))

    def check_async_error(self):
        if self.fail is not None:
            raise FakeNcclError(self.fail)


class FakeNccl:
    """CuPy 13's binding: the unique id is a tuple of 128 C chars."""
    made: list = []

    @staticmethod
    def get_unique_id():
        return tuple((i * 37 % 256) - 128 for i in range(128))

    @classmethod
    def NcclCommunicator(cls, n, uid, rank):
        if not isinstance(uid, tuple):            # Cython's typed argument
            raise TypeError(f"Argument 'commId' has incorrect type (expected tuple, got {type(uid).__name__})")
        c = FakeComm(n, uid, rank)
        cls.made.append(c)
        return c


class FakeNccl14(FakeNccl):
    """CuPy 14's binding: the unique id is 128 bytes (seen on an H200 with cupy-cuda13x 14.2)."""
    made: list = []

    @staticmethod
    def get_unique_id():
        return bytes(i * 37 % 256 for i in range(128))

    @classmethod
    def NcclCommunicator(cls, n, uid, rank):
        if not isinstance(uid, bytes):
            raise TypeError(f"Argument 'commId' has incorrect type (expected bytes, got {type(uid).__name__})")
        c = FakeComm(n, uid, rank)
        cls.made.append(c)
        return c


class FakeStream:
    ptr = 0xABC


@pytest.mark.parametrize("lib", [FakeNccl, FakeNccl14], ids=["cupy13", "cupy14"])
def test_nccl_engine_mapping_with_a_fake(lib):
    from aclnn_py.hccl._nccl import NcclEngine
    D, R = hccl.HcclDataType, hccl.HcclResult
    eng = NcclEngine(nccl=lib, scratch_alloc=lambda n: 0x5000)
    payload = eng.root_payload()
    info = _types.pack_root_info(_types.ENGINE_NCCL, payload)
    engine, uid, got = _types.unpack_root_info(info)
    c, st, msg = eng.init_comm(4, uid, got, 2)
    assert st == 0 and c.size == 4 and c.rank == 2, msg
    fake = lib.made[-1]
    assert fake.args == (4, lib.get_unique_id(), 2)            # the unique id survives the root info
    s = FakeStream()
    a = dict(send=0x100, recv=0x200, count=10, dtype=int(D.HCCL_DATA_TYPE_BFP16), op=2, root=-1)
    assert eng.enqueue(c, s, "HcclAllReduce", a, True) == (True, None)
    assert fake.calls[-1] == ("allReduce", 0x100, 0x200, 10, 9, 2, 0xABC)
    a.update(dtype=int(D.HCCL_DATA_TYPE_FP16), op=1, root=3)
    eng.enqueue(c, s, "HcclReduce", a, True)
    assert fake.calls[-1] == ("reduce", 0x100, 0x200, 10, 6, 1, 3, 0xABC)
    a.update(dtype=int(D.HCCL_DATA_TYPE_INT8))
    eng.enqueue(c, s, "HcclAllGather", a, True)
    assert fake.calls[-1] == ("allGather", 0x100, 0x200, 10, 0, 0xABC)
    a.update(dtype=int(D.HCCL_DATA_TYPE_UINT64), root=1)
    eng.enqueue(c, s, "HcclBroadcast", a, True)
    assert fake.calls[-1] == ("broadcast", 0x100, 0x100, 10, 5, 1, 0xABC)
    a.update(dtype=int(D.HCCL_DATA_TYPE_FP64), op=3)
    eng.enqueue(c, s, "HcclReduceScatter", a, True)
    assert fake.calls[-1] == ("reduceScatter", 0x100, 0x200, 10, 8, 3, 0xABC)
    eng.enqueue(c, s, "HcclBarrier", {}, True)
    assert fake.calls[-1] == ("allReduce", 0x5000, 0x5000, 1, 7, 0, 0xABC)
    assert eng.unsupported(int(D.HCCL_DATA_TYPE_INT16)) and eng.unsupported(int(D.HCCL_DATA_TYPE_UINT16))
    assert eng.unsupported(int(D.HCCL_DATA_TYPE_FP32)) is None
    fake.fail = 6                                             # ncclRemoteError
    ok, (st, msg) = eng.enqueue(c, s, "HcclAllReduce", a, True)
    assert not ok and st == R.HCCL_E_REMOTE and "NCCL failed" in msg
    assert eng.async_error(c) == R.HCCL_E_REMOTE
    fake.fail = None
    eng.destroy(c)
    assert fake.calls[-1] == ("destroy",)
    assert eng.init_comm(2, uid, b"short", 0)[1] == R.HCCL_E_PARA


def test_nccl_engine_without_cupy_is_a_status():
    from aclnn_py.hccl import _nccl
    eng = _nccl.NcclEngine()
    eng._lib = lambda: "the NCCL engine needs ... pip install 'aclnn-py[distributed]'"
    st, msg = eng.root_payload()
    assert st == hccl.HCCL_E_UNAVAIL and "pip install" in msg
