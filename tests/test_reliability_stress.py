"""Concurrency stress (issue 9): threads with their own streams, events across streams, frees and stream
destruction racing with queued work; every result equals the serial run."""
import threading

import numpy as np

import aclnn_py as A
from aclnn_py import acl

OPS = A.opdef.REGISTRY
N_THREADS, ROUNDS = 4, 12


def _chain(x: np.ndarray, s1: int, s2: int) -> np.ndarray:
    """x -> Relu on s1 -> (event) -> Sigmoid on s2 -> host; frees its buffers while work is queued."""
    n = x.nbytes
    px, _ = acl.rt.malloc(n, 0)
    py, _ = acl.rt.malloc(n, 0)
    pz, _ = acl.rt.malloc(n, 0)
    mk = lambda p: A.aclCreateTensor(x.shape, A.aclDataType.ACL_FLOAT, None, 0, A.aclFormat.ACL_FORMAT_ND, x.shape, p)
    assert acl.rt.memcpy_async(px, n, x.ctypes.data, n, 1, s1) == 0
    _, ex, ret = OPS["Relu"].get_workspace_size(mk(px), mk(py))
    assert ret == 0 and OPS["Relu"].run(None, 0, ex, s1) == 0
    assert acl.rt.free(px) == 0                       # queued work still reads it: stream-ordered free
    ev, _ = acl.rt.create_event()
    assert acl.rt.record_event(ev, s1) == 0 and acl.rt.stream_wait_event(s2, ev) == 0
    _, ex, ret = OPS["Sigmoid"].get_workspace_size(mk(py), mk(pz))
    assert ret == 0 and OPS["Sigmoid"].run(None, 0, ex, s2) == 0
    out = np.empty_like(x)
    assert acl.rt.memcpy_async(out.ctypes.data, n, pz, n, 2, s2) == 0
    assert acl.rt.free(py) == 0 and acl.rt.free(pz) == 0
    assert acl.rt.synchronize_stream(s2) == 0
    acl.rt.destroy_event(ev)
    return out


def test_threads_streams_events_frees_match_the_serial_run():
    rng = np.random.default_rng(1234)
    inputs = [rng.standard_normal((16, 33), dtype=np.float32) for _ in range(N_THREADS * ROUNDS)]
    s1, _ = acl.rt.create_stream()
    s2, _ = acl.rt.create_stream()
    serial = [_chain(x, s1, s2) for x in inputs]
    acl.rt.destroy_stream(s1), acl.rt.destroy_stream(s2)
    results = [None] * len(inputs)
    errors = []

    def worker(t):
        try:
            for r in range(ROUNDS):
                a, _ = acl.rt.create_stream()
                b, _ = acl.rt.create_stream()
                i = t * ROUNDS + r
                results[i] = _chain(inputs[i], a, b)
                assert acl.rt.destroy_stream(a) == 0      # streams die while other threads queue work
                assert acl.rt.destroy_stream(b) == 0
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(repr(e) + " " + str(acl.get_recent_err_msg()))

    def churn(stop):
        while not stop.is_set():           # unrelated frees and syncs racing with everything
            p, _ = acl.rt.malloc(4096, 0)
            acl.rt.memset(p, 4096, 0, 4096)
            acl.rt.free(p)
            acl.rt.synchronize_device()

    stop = threading.Event()
    ch = threading.Thread(target=churn, args=(stop,), daemon=True)
    ths = [threading.Thread(target=worker, args=(t,), daemon=True) for t in range(N_THREADS)]
    ch.start()
    for t in ths:
        t.start()
    for t in ths:
        t.join(120)
    stop.set()
    ch.join(30)
    assert not any(t.is_alive() for t in ths) and not ch.is_alive(), "hang"
    assert errors == []
    for got, want in zip(results, serial):
        assert np.array_equal(got, want)
    assert np.allclose(serial[0], 1 / (1 + np.exp(-np.maximum(inputs[0], 0))), rtol=1e-5)
