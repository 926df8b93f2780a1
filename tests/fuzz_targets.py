"""Fuzz targets, run in a child process by tests/test_fuzz.py (a crash or hang fails the test, not the run).

    python tests/fuzz_targets.py <target> [op name]

Hypothesis drives each target with a fixed seed (``ACLNN_PY_FUZZ_SEED``, default 0) for
``ACLNN_PY_FUZZ_EXAMPLES`` examples (default: a small CI budget per target). Invariants: no API raises
(``ACLNN_PY_STRICT=1``: internal errors propagate), every status is an int enum, a failed call writes
nothing (every buffer, guard bytes included, byte-identical), a successful call writes nothing
outside its outputs.
"""
from __future__ import annotations

import os
import sys

os.environ.setdefault("ACLNN_PY_STRICT", "1")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import aclnn_py as A  # noqa: E402
from aclnn_py import acl  # noqa: E402
from aclnn_py.opdef import AttrParam, TensorParam  # noqa: E402

EXAMPLES = int(os.environ.get("ACLNN_PY_FUZZ_EXAMPLES", "40"))
SEED = int(os.environ.get("ACLNN_PY_FUZZ_SEED", "0"))
GUARD = 64
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=False,
                    suppress_health_check=list(HealthCheck), print_blob=True)

WEIRD = st.sampled_from([None, 0, -1, 1, 8, 2 ** 63, 2 ** 64, -2 ** 63 - 1, 10 ** 30, 1.5, float("nan"), True,
                         "x", b"xy", [], [1, 2], (3,), object(), np.int64(4), np.float32(2), np.array([1, 2])])


HOST_GUARD = 2048


class Arena:
    """Device buffers with guard bytes around the part handed out, and a byte-exact snapshot of all of them."""

    def __init__(self, sizes):
        self.bufs = []
        for n in sizes:
            p, ret = acl.rt.malloc(n + 2 * GUARD, 0)
            assert ret == 0
            data = np.random.default_rng(n).integers(0, 256, n + 2 * GUARD, dtype=np.uint8)
            assert acl.rt.memcpy(p, data.nbytes, data.ctypes.data, data.nbytes, 1) == 0
            self.bufs.append((p, n))
        # host arrays nobody registers: the runtime can only probe them, and takes a copy into any mapped
        # host memory (as ACL does); each sits inside a larger array of this process, so the pointers
        # the runtime fuzzer builds around them (offsets -8..300, counts <= 1300) never reach memory
        # the process does not own
        self._backing = [np.zeros(256 + 2 * HOST_GUARD, np.uint8) for _ in range(3)]
        self.host = [b[HOST_GUARD:HOST_GUARD + 256] for b in self._backing]
        for i, h in enumerate(self.host):
            h[:] = np.random.default_rng(7 + i).integers(0, 256, 256, dtype=np.uint8)

    def ptr(self, i, off=0):
        p, n = self.bufs[i % len(self.bufs)]
        return p + GUARD + off

    def snapshot(self):
        assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
        out = []
        for p, n in self.bufs:
            h = np.empty(n + 2 * GUARD, np.uint8)
            assert acl.rt.memcpy(h.ctypes.data, h.nbytes, p, h.nbytes, 2) == 0
            out.append(h)
        return out + [h.copy() for h in self.host]

    def free(self):
        for p, _ in self.bufs:
            acl.rt.free(p)


def _status(ret):
    assert isinstance(ret, int) and not isinstance(ret, bool), f"status {ret!r} is not an int"
    return ret


# runtime ---------------------------------------------------------------------------------------------

def target_runtime():
    arena = Arena([64, 256, 1024])
    freed, _ = acl.rt.malloc(4096, 0)
    acl.rt.free(freed)
    ptrs = st.one_of(st.builds(lambda i, o: arena.ptr(i, o), st.integers(0, 2), st.integers(-80, 1100)),
                     st.builds(lambda i, o: arena.host[i].ctypes.data + o, st.integers(0, 2), st.integers(-8, 300)),
                     st.sampled_from([freed, freed + 64, 8, 4096, 2 ** 64 - 8, 2 ** 47]), WEIRD)
    sizes = st.one_of(st.integers(0, 1300), st.sampled_from([2 ** 63, 2 ** 64, -1]), WEIRD)
    streams = []

    @SETTINGS
    @seed(SEED)
    @given(st.lists(st.tuples(st.integers(0, 9), ptrs, ptrs, sizes, sizes, st.integers(-1, 5)), min_size=1, max_size=8))
    def run(calls):
        before = arena.snapshot()
        shadow = [b.copy() for b in before]

        def locate(p, n):
            # the runtime takes NumPy integers as Python ints (never bool): so does the shadow model
            if any(isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) for v in (p, n)):
                return None
            p, n = int(p), int(n)
            for k, (base, size) in enumerate(arena.bufs):
                if base <= p and p + n <= base + size + 2 * GUARD:
                    return k, p - base
            for k, h in enumerate(arena.host):
                if h.ctypes.data <= p and p + n <= h.ctypes.data + h.nbytes:
                    return len(arena.bufs) + k, p - h.ctypes.data
            return None

        unknown = []   # (buffer index, lo, hi): bytes an accepted call set from memory the model does not hold

        def unmodelled(p, n, written):
            """An accepted range outside the model: host memory nobody registered, which the runtime can only
            probe (documented: a host-to-host copy into any mapped host memory is the caller's business, as in
            ACL). It must not touch the device buffers the runtime knows; what it writes into a host array
            is taken from the real bytes after the run."""
            p, n = int(p), int(n)
            for base, size in arena.bufs:
                assert p + n <= base or base + size + 2 * GUARD <= p, (
                    f"accepted a range overlapping a known device buffer without fitting in it: {p:#x} +{n}")
            if written:
                for k, h in enumerate(arena.host):
                    lo, hi = max(p, h.ctypes.data), min(p + n, h.ctypes.data + h.nbytes)
                    if lo < hi:
                        unknown.append((len(arena.bufs) + k, lo - h.ctypes.data, hi - h.ctypes.data))

        for op, p, q, n, m, kind in calls:
            s = streams[0] if streams else None
            if op in (0, 1):
                f = acl.rt.memcpy if op == 0 else (lambda *a: acl.rt.memcpy_async(*a, s))
                ret = _status(f(p, m, q, n, kind))
                if ret == 0 and n:
                    d, sv = locate(p, n), locate(q, n)
                    if sv is None:
                        unmodelled(q, n, False)
                    if d is None:
                        unmodelled(p, n, True)
                    elif sv is None:             # known destination, bytes from unmodelled host memory
                        unknown.append((d[0], d[1], d[1] + int(n)))
                    else:
                        tmp = shadow[sv[0]][sv[1]:sv[1] + n].copy()
                        shadow[d[0]][d[1]:d[1] + n] = tmp
            elif op in (2, 3):
                f = acl.rt.memset if op == 2 else (lambda *a: acl.rt.memset_async(*a, s))
                ret = _status(f(p, m, kind, n))
                if ret == 0 and n:
                    d = locate(p, n)
                    if d is None:
                        unmodelled(p, n, True)
                    else:
                        shadow[d[0]][d[1]:d[1] + n] = kind & 0xFF
            elif op == 4:
                ptr, ret = acl.rt.malloc(n, kind)
                if _status(ret) == 0:
                    assert _status(acl.rt.free(ptr)) == 0
            elif op == 5:
                _status(acl.rt.free(p))
            elif op == 6:
                h, ret = acl.rt.create_stream()
                if _status(ret) == 0:
                    streams.append(h)
            elif op == 7 and streams:
                _status(acl.rt.destroy_stream(streams.pop(0)))
            elif op == 8:
                _status(acl.rt.synchronize_stream(p if kind else (streams[0] if streams else None)))
            else:
                ev, ret = acl.rt.create_event()
                _status(acl.rt.record_event(ev, s))
                _status(acl.rt.stream_wait_event(q, ev))
                _status(acl.rt.synchronize_event(ev))
                _status(acl.rt.destroy_event(ev))
            acl.get_recent_err_msg()
        after = arena.snapshot()
        for k, lo, hi in unknown:
            shadow[k][lo:hi] = after[k][lo:hi]
        for k, (a, b) in enumerate(zip(after, shadow)):
            assert np.array_equal(a, b), f"buffer {k}: bytes changed that no accepted call wrote"
        for k, h in enumerate(arena.host):     # the model is the new truth
            h[:] = shadow[len(arena.bufs) + k]

    run()


# meta API ----------------------------------------------------------------------------------------------

def target_meta():
    ints = st.one_of(st.integers(-3, 8), st.sampled_from([2 ** 62, 2 ** 63, 2 ** 64, -2 ** 63]))
    dims = st.one_of(st.lists(ints, max_size=9), WEIRD)

    @SETTINGS
    @seed(SEED)
    @given(dims, st.one_of(st.integers(-2, 40), WEIRD), st.one_of(st.none(), dims), st.one_of(ints, WEIRD),
           st.one_of(st.integers(-2, 40), WEIRD), st.one_of(st.none(), dims), st.one_of(ints, WEIRD), WEIRD,
           st.one_of(st.floats(allow_nan=True), st.integers(), WEIRD))
    def run(d, dt, strides, off, fmt, sd, addr, other, value):
        t = A.aclCreateTensor(d, dt, strides, off, fmt, sd, addr)
        if t is None:
            assert acl.get_recent_err_msg()
        for obj in (t, other):
            for g in (A.aclGetViewShape, A.aclGetViewStrides, A.aclGetViewOffset, A.aclGetStorageShape,
                      A.aclGetFormat, A.aclGetDataType, A.aclGetRawTensorAddr):
                _status(g(obj)[-1])
            _status(A.aclSetRawTensorAddr(obj, addr))
            _status(A.aclInitTensor(obj, d, dt, strides, off, fmt, sd, addr))
        for mk, size in ((A.aclCreateIntArray, A.aclGetIntArraySize), (A.aclCreateFloatArray, A.aclGetFloatArraySize),
                         (A.aclCreateBoolArray, A.aclGetBoolArraySize)):
            arr = mk(d)
            _status(size(arr)[-1])
            _status(size(other)[-1])
        A.aclCreateScalar(value, dt)
        tl = A.aclCreateTensorList(other if other is not None else [t])
        _status(A.aclGetTensorListSize(tl)[-1])
        _status(A.aclDestroyTensorList(tl))
        _status(A.aclDestroyTensor(t))
        _status(A.aclDestroyTensor(other))
        acl.get_recent_err_msg()

    run()


# executor APIs --------------------------------------------------------------------------------------------

def target_executor():
    arena = Arena([512, 512, 512])
    op = A.opdef.REGISTRY["Relu"]
    mk = lambda p, off=0: A.aclCreateTensor((4, 8), A.aclDataType.ACL_FLOAT, None, off, A.aclFormat.ACL_FORMAT_ND,
                                            (4, 8), p)
    ptrs = st.one_of(st.builds(lambda i, o: arena.ptr(i, o), st.integers(0, 2), st.integers(-64, 200)), WEIRD)

    @SETTINGS
    @seed(SEED)
    @given(st.lists(st.tuples(st.integers(0, 5), st.one_of(st.integers(-2, 3), WEIRD), ptrs, ptrs,
                              st.one_of(st.integers(0, 4096), WEIRD)), min_size=1, max_size=6))
    def run(calls):
        tx, ty = mk(arena.ptr(0)), mk(arena.ptr(1))
        _, ex, ret = op.get_workspace_size(tx, ty)
        assert ret == 0
        _status(A.aclSetAclOpExecutorRepeatable(ex))
        outs = {arena.ptr(1)}     # every address the output was ever bound to (a run may have written it)
        out_now = arena.ptr(1)    # where it is bound now
        before = arena.snapshot()
        for kind, index, p, w, size in calls:
            if kind == 0:
                if _status(A.aclSetInputTensorAddr(ex, index, mk(p), p)) == 0:
                    # onto an output only as its declared exact alias (Relu's out may be exactly self:
                    # the same 4x8 view here); a partial overlap must be refused
                    assert type(p) is not int or p == out_now or abs(p - out_now) >= 128, (
                        f"input rebound to {p!r}, partly over the output at {out_now!r}")
            elif kind == 1:
                if _status(A.aclSetOutputTensorAddr(ex, index, mk(p), p)) == 0:
                    outs.add(p)
                    out_now = p
            elif kind == 2:       # index over inputs then outputs: Relu's 0 = self, 1 = out
                if _status(A.aclSetTensorAddr(ex, index, mk(p), p)) == 0 and index == 1:
                    outs.add(p)
                    out_now = p
            elif kind == 3:
                _status(op.run(w, size, ex, None))
            elif kind == 4:
                _status(op.run(w, size, index, p))
            else:
                _status(A.aclSetAclOpExecutorRepeatable(index))
                _status(A.aclDestroyAclOpExecutor(index))
            acl.get_recent_err_msg()
        after = arena.snapshot()
        for k, (a, b) in enumerate(zip(after, before)):
            if k < len(arena.bufs):
                base = arena.bufs[k][0]
                for o in sorted(outs):      # bytes of any accepted output may change; nothing else
                    if type(o) is int and base <= o < base + arena.bufs[k][1] + 2 * GUARD:
                        lo = o - base
                        a[lo:lo + 128] = b[lo:lo + 128]
            assert np.array_equal(a, b), f"buffer {k} written outside the outputs"
        A.aclDestroyAclOpExecutor(ex)

    run()


# phase 1 (and 2) of a registered op --------------------------------------------------------------------------

DTYPES = [A.aclDataType.ACL_FLOAT, A.aclDataType.ACL_FLOAT16, A.aclDataType.ACL_BF16, A.aclDataType.ACL_INT32,
          A.aclDataType.ACL_UINT8, A.aclDataType.ACL_BOOL, A.aclDataType.ACL_DOUBLE, 999]
FORMATS = [A.aclFormat.ACL_FORMAT_ND, A.aclFormat.ACL_FORMAT_NCHW, A.aclFormat.ACL_FORMAT_NHWC,
           A.aclFormat.ACL_FORMAT_NC1HWC0, A.aclFormat.ACL_FORMAT_NCL, A.aclFormat.ACL_FORMAT_NC]


def target_op(name: str):
    reg = A.opdef.REGISTRY[name]
    params = reg.opdef.params
    arena = Arena([8192] * 4)

    @st.composite
    def tensor(draw, shape):
        if draw(st.integers(0, 9)) == 0:
            return draw(st.sampled_from([None, 3, "t", object()]))
        if draw(st.booleans()):
            shape = tuple(draw(st.lists(st.integers(0, 4), min_size=0, max_size=5)))
        elif draw(st.integers(0, 3)) == 0:
            shape = (shape[1],) if len(shape) > 1 else (2,)
        dt = draw(st.sampled_from(DTYPES[:1] * 6 + DTYPES))
        fmt = draw(st.sampled_from(FORMATS[:2] * 3 + FORMATS))
        strides = None
        if draw(st.integers(0, 3)) == 0:
            strides = [draw(st.integers(-2, 40)) for _ in shape]
        off = draw(st.sampled_from([0, 0, 0, 1, 5, 2 ** 40]))
        storage = draw(st.sampled_from([None, None, (4096,), (1,)]))
        buf = draw(st.integers(0, 3))
        where = draw(st.sampled_from([0, 0, 0, 4, 256, 8000, -16]))
        t = A.aclCreateTensor(shape, dt, strides, off, fmt, storage if storage or not shape else
                              (max(1, int(np.prod(shape))) + 64,), arena.ptr(buf, where))
        return t

    @st.composite
    def attr(draw, p: AttrParam):
        return draw(st.one_of(st.sampled_from([None, 0, 1, -1, 0.5, 1e-5, 10 ** 400, float("nan"), True, False,
                                               "x", np.int64(1), np.float32(0.1), 2 ** 63]),
                              st.builds(A.aclCreateIntArray, st.lists(st.integers(-3, 3), max_size=3)),
                              st.builds(A.aclCreateScalar, st.floats(-3, 3), st.just(A.aclDataType.ACL_FLOAT))))

    @st.composite
    def call(draw):
        shape = tuple(draw(st.lists(st.integers(1, 3), min_size=2, max_size=4)))
        args = []
        for p in params:
            args.append(draw(tensor(shape)) if isinstance(p, TensorParam) else draw(attr(p)))
        if draw(st.integers(0, 5)) == 0 and len(args) > 1:   # an alias
            i, j = draw(st.integers(0, len(args) - 1)), draw(st.integers(0, len(args) - 1))
            args[i] = args[j]
        return args

    @SETTINGS
    @seed(SEED)
    @given(call())
    def run(args):
        before = arena.snapshot()
        ws, ex, ret = reg.get_workspace_size(*args)
        _status(ret)
        if ret != 0:
            assert ex is None and acl.get_recent_err_msg()
            assert all(np.array_equal(a, b) for a, b in zip(arena.snapshot(), before)), "phase 1 failed but wrote"
            return
        w = None
        if ws:
            w, r = acl.rt.malloc(ws, 0)
            assert r == 0
        st2 = _status(reg.run(w, ws, ex, None))
        sync = _status(acl.rt.synchronize_device())
        acl.get_recent_err_msg()
        after = arena.snapshot()
        if w:
            acl.rt.free(w)
        # nothing outside the outputs: every byte that changed lies in a written tensor's span
        spans = []
        for sp in ex.spans:
            if sp[4]:
                t = ex.tensors[sp[1]]
                spans.append((t.addr + sp[2], t.addr + sp[2] + sp[3]))
        for k, (a, b) in enumerate(zip(after, before)):
            changed = np.flatnonzero(a != b)
            if k >= len(arena.bufs) or not changed.size:
                continue
            if st2 != 0:
                raise AssertionError(f"phase 2 failed ({st2}) but buffer {k} changed")
            base = arena.bufs[k][0]
            for c in changed[:: max(1, changed.size // 64)]:
                addr = base + int(c)
                assert any(lo <= addr < hi for lo, hi in spans), f"byte 0x{addr:x} written outside the outputs"
        assert sync in (0, A.AclError.ACL_ERROR_RT_AICORE_EXCEPTION)

    run()


def main(argv):
    assert acl.init() == 0 and acl.rt.set_device(0) == 0
    target = argv[1]
    if target == "op":
        target_op(argv[2])
    elif target == "ops":              # every registered op in one process; argv[2:]: ops allowed to fail
        global EXAMPLES, SETTINGS
        EXAMPLES = int(os.environ.get("ACLNN_PY_FUZZ_OP_EXAMPLES", "8"))
        SETTINGS = settings(SETTINGS, max_examples=EXAMPLES)
        bad = []
        for name in A.opdef.REGISTRY:
            try:
                target_op(name)
            except Exception as e:    # an assertion or an escaped exception: report, go on
                print(f"FAIL {name}: {type(e).__name__}: {str(e)[:2000]}")
                if name not in argv[2:]:
                    bad.append(name)
        if bad:
            print("unexpected failures:", *bad)
            sys.exit(1)
    else:
        globals()[f"target_{target}"]()
    print("fuzz ok", target, *argv[2:])


if __name__ == "__main__":
    main(sys.argv)
