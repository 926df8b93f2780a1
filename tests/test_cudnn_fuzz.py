"""Fuzz the cuDNN face the way a hostile port would: every public function, random arguments from a
pool of plausible and absurd values (NULLs, wrong descriptor kinds, destroyed handles, huge and
negative ints, NaN, strings, pointers to small buffers). Every call must return a status (never
raise: the tests run with ACLNN_PY_STRICT=1, so an internal error would surface as an exception)
and must not write outside the buffers it was given (guard bytes)."""
from __future__ import annotations

import inspect
import os

import numpy as np
import pytest

from aclnn_py import acl, cudnn as c
from harness import device_bytes

GUARD = 256
N_CALLS = int(os.environ.get("ACLNN_PY_FUZZ_EXAMPLES", "40"))


def _functions():
    out = []
    for name in sorted(c.__all__):
        fn = getattr(c, name)
        if callable(fn) and name.startswith("cudnn") and not isinstance(fn, type):
            out.append(name)
    return out


@pytest.fixture(scope="module")
def pool():
    h, _ = c.cudnnCreate()
    dead, _ = c.cudnnCreate()
    c.cudnnDestroy(dead)
    bufs = []
    for n in (64, 4096, 1 << 16):
        base, _ = acl.rt.malloc(n + 2 * GUARD, 0)
        acl.rt.memset(base, n + 2 * GUARD, 0xA5, n + 2 * GUARD)
        bufs.append((base, n))
    t4, _ = c.cudnnCreateTensorDescriptor()
    c.cudnnSetTensor4dDescriptor(t4, 0, 0, 2, 3, 4, 5)
    t4h, _ = c.cudnnCreateTensorDescriptor()
    c.cudnnSetTensor4dDescriptor(t4h, 1, 2, 1, 2, 2, 2)
    bn, _ = c.cudnnCreateTensorDescriptor()
    c.cudnnDeriveBNTensorDescriptor(bn, t4, 1)
    unset, _ = c.cudnnCreateTensorDescriptor()
    gone, _ = c.cudnnCreateTensorDescriptor()
    c.cudnnDestroyTensorDescriptor(gone)
    act, _ = c.cudnnCreateActivationDescriptor()
    lrn, _ = c.cudnnCreateLRNDescriptor()
    drop, _ = c.cudnnCreateDropoutDescriptor()
    st, _ = c.cudnnCreateSpatialTransformerDescriptor()
    c.cudnnSetSpatialTransformerNdDescriptor(st, 0, 0, 4, [2, 3, 4, 5])
    values = [None, 0, 1, 2, 3, -1, 7, 2 ** 31, 2 ** 64 + 5, -2 ** 70, 0.5, 1.0, float("nan"), float("inf"), "x",
              True, [1, 2], (2, 3, 4, 5), h, dead, t4, t4h, bn, unset, gone, act, lrn, drop, st,
              *[b + GUARD for b, _ in bufs], bufs[0][0] + GUARD + 60, 8]
    yield h, values, bufs
    for b, n in bufs:
        acl.rt.free(b)
    c.cudnnDestroy(h)


@pytest.mark.parametrize("name", _functions())
def test_face_function_survives_hostile_arguments(pool, name):
    h, values, bufs = pool
    fn = getattr(c, name)
    nparams = len(inspect.signature(fn).parameters)
    rng = np.random.default_rng(sum(map(ord, name)))            # fixed per function, not hash()
    statuses = set(int(s) for s in c.cudnnStatus_t)
    no_status = name in ("cudnnGetErrorString", "cudnnGetVersion", "cudnnGetMaxDeviceVersion",
                         "cudnnGetCudartVersion", "cudnnOpsTrainVersionCheck", "cudnnOpsInferVersionCheck")
    for _ in range(N_CALLS):
        # a wrong argument count: BAD_PARAM from every function with a status (the others are plain Python
        # functions of fixed arity, as C's prototypes are)
        k = nparams if no_status or rng.random() < 0.85 else int(rng.integers(0, nparams + 2))
        args = [values[int(rng.integers(0, len(values)))] for _ in range(k)]
        if args and rng.random() < 0.7:
            # get past the handle check often (cudnnDestroy gets a handle of its own: the pool's must live)
            args[0] = c.cudnnCreate()[0] if name == "cudnnDestroy" else h
        r = fn(*args)
        st = r[-1] if isinstance(r, tuple) else r
        if name == "cudnnGetErrorString":
            assert isinstance(r, str)
            continue
        if name in ("cudnnGetVersion", "cudnnGetMaxDeviceVersion", "cudnnGetCudartVersion"):
            assert isinstance(r, int)
            continue
        assert int(st) in statuses, (name, args, r)
        assert int(st) != c.CUDNN_STATUS_INTERNAL_ERROR, (name, args, acl.get_recent_err_msg())
    acl.rt.synchronize_device()
    for base, n in bufs:
        raw = device_bytes(base, n + 2 * GUARD)
        assert set(raw[:GUARD]) == {0xA5} and set(raw[-GUARD:]) == {0xA5}, f"{name} wrote outside a buffer"


# mutation fuzzing: a valid call, one argument replaced ----------------------------------------------

class _Env:
    """Valid descriptors and guarded buffers for one call of every compute function."""

    def __init__(self, h):
        self.h = h
        self.bufs = []
        d = lambda: c.cudnnCreateTensorDescriptor()[0]          # noqa: E731
        self.x = d()
        c.cudnnSetTensor4dDescriptor(self.x, 0, 0, 2, 3, 4, 5)
        self.bn = d()
        c.cudnnDeriveBNTensorDescriptor(self.bn, self.x, 1)
        self.out = d()
        c.cudnnSetTensor4dDescriptor(self.out, 0, 0, 2, 3, 2, 3)
        self.act, _ = c.cudnnCreateActivationDescriptor()
        self.lrn, _ = c.cudnnCreateLRNDescriptor()
        self.drop, _ = c.cudnnCreateDropoutDescriptor()
        self.st, _ = c.cudnnCreateSpatialTransformerDescriptor()
        c.cudnnSetSpatialTransformerNdDescriptor(self.st, 0, 0, 4, [2, 3, 2, 3])
        states = self.buf(32)
        c.cudnnSetDropoutDescriptor(self.drop, h, 0.5, states, 32, 3)

    def buf(self, n, fill=None):
        base, _ = acl.rt.malloc(n + 2 * GUARD, 0)
        acl.rt.memset(base, n + 2 * GUARD, 0xA5, n + 2 * GUARD)
        rng = np.random.default_rng(n)
        vals = (rng.standard_normal(n // 4) if fill is None else np.full(n // 4, fill)).astype(np.float32)
        acl.rt.memcpy(base + GUARD, n, acl.util.numpy_to_ptr(vals), n, 1)
        self.bufs.append((base, n))
        return base + GUARD

    def calls(self):
        h, x, bn, o = self.h, self.x, self.bn, self.out
        X, Y, DY, DX, Z = (self.buf(480) for _ in range(5))
        P = [self.buf(12, 1.0) for _ in range(8)]
        W, R = self.buf(1 << 14), self.buf(1 << 12)
        G, DG, TH, DT, O = self.buf(96), self.buf(96), self.buf(48), self.buf(48), self.buf(144)
        return {
            "cudnnBatchNormalizationForwardTrainingEx": [h, 1, 2, 1.0, 0.0, x, X, x, Z, x, Y, bn, P[0], P[1], 0.1, P[2],
                                                         P[3], 1e-5, P[4], P[5], self.act, W, 1 << 14, R, 1 << 12],
            "cudnnBatchNormalizationBackwardEx": [h, 1, 1, 1.0, 0.0, 1.0, 0.0, x, X, x, Y, x, DY, None, None, x, DX, bn,
                                                  P[0], P[1], P[6], P[7], 1e-5, None, None, self.act, W, 1 << 14, R,
                                                  1 << 12],
            "cudnnBatchNormalizationForwardInference": [h, 1, 1.0, 0.5, x, X, x, Y, bn, P[0], P[1], P[2], P[3], 1e-5],
            "cudnnActivationBackward": [h, self.act, 1.0, x, Y, x, DY, x, X, 0.0, x, DX],
            "cudnnSoftmaxBackward": [h, 2, 0, 1.0, x, Y, x, DY, 0.0, x, DX],
            "cudnnDropoutBackward": [h, self.drop, x, DY, x, DX, R, 1 << 12],
            "cudnnDropoutForward": [h, self.drop, x, X, x, Y, R, 1 << 12],
            "cudnnLRNCrossChannelBackward": [h, self.lrn, 0, 1.0, x, Y, x, DY, x, X, 0.0, x, DX],
            "cudnnDivisiveNormalizationBackward": [h, self.lrn, 0, 1.0, x, X, None, DY, W, W, 0.0, x, DX, None],
            "cudnnSpatialTfGridGeneratorForward": [h, self.st, TH, G],
            "cudnnSpatialTfGridGeneratorBackward": [h, self.st, DG, DT],
            "cudnnSpatialTfSamplerBackward": [h, self.st, 1.0, x, X, 0.0, x, DX, 1.0, o, O, G, 0.0, DG],
            "cudnnAddTensor": [h, 1.0, bn, P[0], 1.0, x, Y],
            "cudnnTransformTensor": [h, 2.0, x, X, 0.0, x, Y],
        }

    def snapshot(self):
        acl.rt.synchronize_device()
        return [device_bytes(b, n + 2 * GUARD) for b, n in self.bufs]


MUTATED = ["cudnnBatchNormalizationForwardTrainingEx", "cudnnBatchNormalizationBackwardEx",
           "cudnnBatchNormalizationForwardInference", "cudnnActivationBackward", "cudnnSoftmaxBackward",
           "cudnnDropoutBackward", "cudnnDropoutForward", "cudnnLRNCrossChannelBackward",
           "cudnnDivisiveNormalizationBackward", "cudnnSpatialTfGridGeneratorForward",
           "cudnnSpatialTfGridGeneratorBackward", "cudnnSpatialTfSamplerBackward",
           "cudnnAddTensor", "cudnnTransformTensor"]


@pytest.mark.parametrize("name", MUTATED)
def test_one_bad_argument_in_a_valid_call(pool, name):
    """The valid call succeeds; with any one argument replaced by a pool value, the call returns a status,
    and when that status is an error nothing at all was written."""
    _, values, _ = pool
    h, _ = c.cudnnCreate()
    env = _Env(h)
    fn = getattr(c, name)
    args = env.calls()[name]
    assert fn(*args) == c.CUDNN_STATUS_SUCCESS, acl.get_recent_err_msg()
    rng = np.random.default_rng(sum(map(ord, name)) + 1)
    for _ in range(max(N_CALLS // 2, 10)):
        bad = list(args)
        i = int(rng.integers(0, len(args)))
        bad[i] = values[int(rng.integers(0, len(values)))]
        before = env.snapshot()
        st = fn(*bad)
        after = env.snapshot()
        assert int(st) != c.CUDNN_STATUS_INTERNAL_ERROR, (name, i, bad[i], acl.get_recent_err_msg())
        for (b0, b1) in zip(before, after):
            assert b0[:GUARD] == b1[:GUARD] and b0[-GUARD:] == b1[-GUARD:], (name, i, bad[i], "guard overwritten")
        if st != c.CUDNN_STATUS_SUCCESS:
            assert before == after, (name, i, bad[i], st, "a failed call wrote")
    for b, _ in env.bufs:
        acl.rt.free(b)
    c.cudnnDestroy(h)
