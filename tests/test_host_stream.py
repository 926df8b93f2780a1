"""HostStream.run_now, start and enqueue: work begins on the caller's thread when the stream is idle, in
stream order otherwise, and its failure is reported by the next synchronize either way."""
from __future__ import annotations

import threading
import time

import pytest

from aclnn_py.backends.host import HostStream
from aclnn_py.errors import DeviceError


@pytest.fixture
def stream():
    s = HostStream("test-run-now")
    yield s
    s.close()


def test_idle_stream_runs_inline(stream):
    where = []
    assert stream.run_now(lambda: where.append(threading.current_thread()))
    assert where == [threading.current_thread()]
    stream.synchronize()


def test_busy_stream_keeps_order(stream):
    gate = threading.Event()
    order = []
    stream.submit(lambda: (gate.wait(5), order.append("queued first")))
    t = threading.Thread(target=lambda: stream.run_now(lambda: order.append(("now", threading.current_thread()))))
    t.start()
    time.sleep(0.05)
    assert order == []            # run_now waits behind the queued task
    gate.set()
    t.join(5)
    assert order[0] == "queued first" and order[1][0] == "now"
    assert order[1][1] is not t   # it ran on the worker, not inline


def test_work_submitted_during_an_inline_task_waits_for_it(stream):
    started, release = threading.Event(), threading.Event()
    order = []

    def slow():
        started.set()
        release.wait(5)
        order.append("inline")
    t = threading.Thread(target=lambda: stream.run_now(slow))
    t.start()
    assert started.wait(5)
    stream.submit(lambda: order.append("after"))
    time.sleep(0.05)
    assert order == []            # the worker waits for the execution lock
    release.set()
    t.join(5)
    stream.synchronize()
    assert order == ["inline", "after"]


def test_inline_failure_is_reported_at_synchronize(stream):
    def boom():
        raise RuntimeError("kernel fault")
    assert stream.run_now(boom)           # no exception at the call
    with pytest.raises(DeviceError, match="kernel fault"):
        stream.synchronize()
    stream.synchronize()                  # reported once


def test_closed_stream_refuses(stream):
    stream.close()
    ran = []
    assert not stream.run_now(lambda: ran.append(1))
    assert ran == []


# HostStream.start: begin on the caller's thread, hand the rest to the worker ----------------------
def test_start_on_idle_stream_runs_inline_and_finishes_there(stream):
    where = []
    assert stream.start(lambda: where.append(threading.current_thread()))
    assert where == [threading.current_thread()]
    stream.synchronize()


def test_start_hands_its_rest_to_the_worker_ahead_of_later_work(stream):
    """The caller returns at once; the rest runs next on the worker, before work queued meanwhile,
    and the stream is busy until it has."""
    gate = threading.Event()
    order = []

    def rest():
        gate.wait(5)
        order.append(("rest", threading.current_thread()))

    def task():
        order.append(("start", threading.current_thread()))
        stream.submit(lambda: order.append(("later", None)))   # queued while the task holds the stream
        return rest
    assert stream.start(task)
    assert order == [("start", threading.current_thread())]    # returned before the rest ran
    time.sleep(0.05)
    assert len(order) == 1                                      # "later" waits behind the rest
    gate.set()
    stream.synchronize()
    assert [o[0] for o in order] == ["start", "rest", "later"]
    assert order[1][1] is not threading.current_thread()


def test_start_on_busy_stream_runs_task_and_rest_on_the_worker_in_order(stream):
    gate = threading.Event()
    order = []
    stream.submit(lambda: (gate.wait(5), order.append("first")))
    stream.start(lambda: (order.append("task"), lambda: order.append("rest"))[1])
    stream.submit(lambda: order.append("after"))
    assert order == []
    gate.set()
    stream.synchronize()
    assert order == ["first", "task", "rest", "after"]


@pytest.mark.parametrize("where", ["task", "rest"])
def test_start_failure_is_reported_by_synchronize(stream, where):
    def boom():
        raise RuntimeError(f"failed in the {where}")
    stream.start(boom if where == "task" else (lambda: boom))
    with pytest.raises(DeviceError, match=f"failed in the {where}"):
        stream.synchronize()
    ran = []
    stream.start(lambda: ran.append(1))     # the stream goes on
    stream.synchronize()
    assert ran == [1]


def test_start_rest_runs_even_when_the_stream_is_closed_meanwhile(stream):
    order = []

    def task():
        stream.close()
        return lambda: order.append("rest")
    assert stream.start(task)
    stream._thread.join(5)
    assert order == ["rest"] and not stream._thread.is_alive()


def test_submit_unless_idle_queues_only_behind_work(stream):
    """free()'s stream-ordered release: an idle stream has nothing the release must wait for (no
    thread hand-off); a busy one runs it after what was queued before."""
    ran = []
    assert stream.submit(lambda: ran.append("idle"), unless_idle=True) is False and ran == []
    gate = threading.Event()
    stream.submit(lambda: gate.wait(5))
    assert stream.submit(lambda: ran.append("after the gate"), unless_idle=True) is True
    time.sleep(0.05)
    assert ran == []
    gate.set()
    stream.synchronize()
    assert ran == ["after the gate"]
    stream.close()
    assert stream.submit(lambda: ran.append("closed"), unless_idle=True) is False


# HostStream.enqueue (kernel launches, copies): inline on an idle stream, queued on a busy one ------
def test_enqueue_on_idle_stream_runs_inline_before_returning(stream):
    where = []
    assert stream.enqueue(lambda: where.append(threading.current_thread()))
    assert where == [threading.current_thread()]   # done at return: synchronize has nothing to wait for
    stream.synchronize()


def test_enqueue_on_busy_stream_queues_in_order_and_returns_at_once(stream):
    gate = threading.Event()
    order = []
    stream.submit(lambda: (gate.wait(5), order.append("first")))
    assert stream.enqueue(lambda: order.append(("second", threading.current_thread())))
    assert order == []            # returned without running: it waits behind the queued task
    gate.set()
    stream.synchronize()
    assert order[0] == "first" and order[1][0] == "second"
    assert order[1][1] is not threading.current_thread()   # the worker ran it


def test_enqueue_inline_failure_is_reported_at_synchronize(stream):
    def boom():
        raise RuntimeError("illegal address")
    assert stream.enqueue(boom)
    assert stream.enqueue(lambda: None)   # the stream goes on (CUDA: sticky only at sync)
    with pytest.raises(DeviceError, match="illegal address"):
        stream.synchronize()
    stream.synchronize()


def test_enqueue_on_closed_stream_refuses(stream):
    stream.close()
    ran = []
    assert not stream.enqueue(lambda: ran.append(1))
    assert ran == []


def test_phase_two_on_an_idle_stream_is_done_when_it_returns():
    """aclnn phase 2 on the host emulator: the launches ran on the caller's thread when the stream was
    idle, so the outputs are there before synchronize (which still reports nothing new)."""
    import ctypes

    import numpy as np

    import aclnn_py as A
    from aclnn_py import acl
    acl.init()
    acl.rt.set_device(0)
    st, _ = acl.rt.create_stream()
    x = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    nb = x.nbytes
    px, py = acl.rt.malloc(nb, 0)[0], acl.rt.malloc(nb, 0)[0]
    try:
        assert acl.rt.memcpy(px, nb, x.ctypes.data, nb, 1) == 0
        tx = A.aclCreateTensor(list(x.shape), A.ACL_FLOAT, None, 0, A.ACL_FORMAT_ND, list(x.shape), px)
        ty = A.aclCreateTensor(list(x.shape), A.ACL_FLOAT, None, 0, A.ACL_FORMAT_ND, list(x.shape), py)
        ws, ex, ret = A.aclnnSoftmaxGetWorkspaceSize(tx, -1, ty)
        assert ret == 0 and ws == 0
        assert A.aclnnSoftmax(None, 0, ex, st) == 0
        out = np.empty_like(x)
        ctypes.memmove(out.ctypes.data, py, nb)     # read the "device" memory directly, before any sync
        e = np.exp(x - x.max(-1, keepdims=True))
        np.testing.assert_allclose(out, e / e.sum(-1, keepdims=True), rtol=1e-6)
        assert acl.rt.synchronize_stream(st) == 0
    finally:
        acl.rt.free(px)
        acl.rt.free(py)
        acl.rt.destroy_stream(st)

