"""HostStream.run_now: a synchronous launch runs on the caller's thread when the stream is idle, in
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
