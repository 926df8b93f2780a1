"""Dropout masks: the Philox4x32-10 generator against Random123's known answers (Python reference and
the kernel itself), the mask equal to the documented function of (seed, offset, k) for any grid,
keep fractions within a binomial bound, reproducibility, fresh masks for new offsets/seeds,
independence across bytes and bits, and the p = 0 / p = 1 / train = false rules."""
from __future__ import annotations

import math

import numpy as np
import pytest

import aclnn_py as A
from aclnn_py import acl
from aclnn_py.backends import get_backend
from aclnn_py.kernel_cache import get_kernel
from aclnn_py.ops.dropout import FAMILY, keep_threshold, mask_bytes, philox4x32_10
from aclnn_py.plan import Plan

KAT = [  # Random123 kat_vectors: philox4x32 10 ctr[4] key[2] -> out[4]
    ((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
    ((0xffffffff,) * 4, (0xffffffff,) * 2, (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
    ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
     (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1)),
]


def _dev(host: np.ndarray) -> int:
    ptr, r = acl.rt.malloc(max(host.nbytes, 1), 0)
    assert r == 0
    assert acl.rt.memcpy(ptr, host.nbytes, host.ctypes.data, host.nbytes, 1) == 0
    return ptr


def _host(ptr: int, like: np.ndarray) -> np.ndarray:
    out = np.empty_like(like)
    assert acl.rt.memcpy(out.ctypes.data, out.nbytes, ptr, out.nbytes, 2) == 0
    return out


def test_python_philox_matches_random123():
    for ctr, key, want in KAT:
        assert tuple(philox4x32_10(ctr, key)) == want


def test_kernel_philox_matches_random123():
    inp = np.array([[*c, *k] for c, k, _ in KAT], np.uint32)
    out = np.zeros((len(KAT), 4), np.uint32)
    pi, po = _dev(inp), _dev(out)
    be = get_backend()
    stream = be.default_stream()
    be.launch(get_kernel(FAMILY, "philox_kat"), (1, 1, 1), (32, 1, 1), (np.uint64(pi), np.uint64(po), np.int32(len(KAT))),
              0, stream)
    be.synchronize(stream)
    got = _host(po, out)
    acl.rt.free(pi), acl.rt.free(po)
    assert [tuple(int(v) for v in r) for r in got] == [w for _, _, w in KAT]


def reference_mask(numel: int, prob: float, seed: int, offset: int) -> np.ndarray:
    """The documented mask, bit by bit, from the Python Philox."""
    thr = keep_threshold(prob)
    bits = np.zeros(mask_bytes(numel) * 8, np.uint8)
    s, o = seed & (2 ** 64 - 1), offset & (2 ** 64 - 1)
    for j in range(-(-numel // 4)):
        w = philox4x32_10((j & 0xFFFFFFFF, j >> 32, o & 0xFFFFFFFF, o >> 32), (s & 0xFFFFFFFF, s >> 32))
        for i in range(4):
            k = 4 * j + i
            if k < numel and w[i] >= thr:
                bits[k] = 1
    return np.packbits(bits, bitorder="little")


def gen_mask(shape, prob, seed, offset) -> np.ndarray:
    n = math.prod(shape)
    host = np.full(mask_bytes(n), 0xA5, np.uint8)
    ptr = _dev(host)
    t = A.aclCreateTensor(host.shape, A.ACL_UINT8, None, 0, A.ACL_FORMAT_ND, host.shape, ptr)
    ws, ex, ret = A.aclnnDropoutGenMaskGetWorkspaceSize(A.aclCreateIntArray(shape), prob, seed, offset, t)
    assert ret == 0, acl.get_recent_err_msg()
    assert A.aclnnDropoutGenMask(None, ws, ex, None) == 0
    assert acl.rt.synchronize_stream(None) == 0
    out = _host(ptr, host)
    A.aclDestroyTensor(t)
    acl.rt.free(ptr)
    return out


@pytest.mark.parametrize("shape,prob,seed,offset", [((1000,), 0.3, 42, 0), ((7, 13), 0.5, -1, 2 ** 40 + 3),
                                                    ((3, 5, 7), 0.9, 2 ** 63 - 1, 12), ((129,), 0.1, 0, 1)])
def test_mask_is_the_documented_function(shape, prob, seed, offset):
    n = math.prod(shape)
    got = gen_mask(shape, prob, seed, offset)
    assert np.array_equal(got, reference_mask(n, prob, seed, offset))
    assert not np.unpackbits(got, bitorder="little")[n:].any(), "padding bits must be 0"


def test_mask_does_not_depend_on_the_grid(monkeypatch):
    """Each mask byte is a function of (seed, offset, byte index) only: a plan with a tiny grid agrees."""
    import aclnn_py.ops.dropout as D
    base = gen_mask((5000,), 0.4, 7, 9)
    monkeypatch.setattr(D, "_grid", lambda n: (2, 1, 1))
    monkeypatch.setattr(D, "BLOCK", 32)
    D.DropoutGenMask.plan_cache._d.clear()
    assert np.array_equal(gen_mask((5000,), 0.4, 7, 9), base)


def _bits(m, n):
    return np.unpackbits(m, bitorder="little")[:n].astype(np.float64)


@pytest.mark.parametrize("prob", [0.0, 0.1, 0.5, 0.8, 1.0])
def test_keep_fraction_within_binomial_bound(prob):
    n = 200_000
    b = _bits(gen_mask((n,), prob, 123, 0), n)
    q = 1 - prob
    sd = math.sqrt(n * q * (1 - q))
    assert abs(b.sum() - n * q) <= 6 * sd + 1e-9, (b.sum(), n * q, sd)


def test_reproducible_and_fresh_for_new_offsets_and_seeds():
    n = 50_000
    a = gen_mask((n,), 0.5, 1, 0)
    assert np.array_equal(a, gen_mask((n,), 0.5, 1, 0))
    ba, sd = _bits(a, n), math.sqrt(n * 0.25)
    for other in (gen_mask((n,), 0.5, 1, 1), gen_mask((n,), 0.5, 1, 4), gen_mask((n,), 0.5, 2, 0)):
        bo = _bits(other, n)
        agree = (ba == bo).sum()
        assert abs(agree - n / 2) <= 6 * sd, "a new offset/seed must give an independent mask"


def test_independence_across_bits_and_bytes():
    n = 200_000
    b = _bits(gen_mask((n,), 0.5, 99, 5), n)
    for lag in (1, 4, 8, 16, 128):          # neighbouring bits, Philox words, bytes, 16-byte rows
        c = np.corrcoef(b[:-lag], b[lag:])[0, 1]
        assert abs(c) < 6 / math.sqrt(n), (lag, c)
    per_bit = b[: n // 8 * 8].reshape(-1, 8).mean(axis=0)      # every bit position keeps half
    assert np.all(np.abs(per_bit - 0.5) < 6 * math.sqrt(0.25 / (n // 8)))


def test_dropout_equals_genmask_then_domask():
    """aclnnDropout's mask and output are GenMask's mask and DoMask's output for the same (seed, offset)."""
    rng = np.random.default_rng(3)
    shape, p, seed, offset = (3, 50, 7), 0.35, 1234, 8
    n = math.prod(shape)
    x = rng.standard_normal(shape).astype(np.float32)
    mref = gen_mask(shape, p, seed, offset)
    px, py = _dev(x), _dev(np.zeros_like(x))
    mhost = np.zeros(mask_bytes(n), np.uint8)
    pm = _dev(mhost)
    tx = A.aclCreateTensor(shape, A.ACL_FLOAT, None, 0, A.ACL_FORMAT_ND, shape, px)
    ty = A.aclCreateTensor(shape, A.ACL_FLOAT, None, 0, A.ACL_FORMAT_ND, shape, py)
    tm = A.aclCreateTensor(mhost.shape, A.ACL_UINT8, None, 0, A.ACL_FORMAT_ND, mhost.shape, pm)
    ws, ex, ret = A.aclnnDropoutGetWorkspaceSize(tx, p, True, seed, offset, ty, tm)
    assert ret == 0, acl.get_recent_err_msg()
    assert A.aclnnDropout(None, ws, ex, None) == 0 and acl.rt.synchronize_stream(None) == 0
    m, y = _host(pm, mhost), _host(py, x)
    assert np.array_equal(m, mref)
    keep = _bits(m, n).reshape(shape).astype(bool)
    np.testing.assert_allclose(y, np.where(keep, x / np.float32(1 - p), 0), rtol=1e-6)
    for t in (tx, ty, tm):
        A.aclDestroyTensor(t)
    for q in (px, py, pm):
        acl.rt.free(q)
