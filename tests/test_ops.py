"""Generic tests over the op database: reference, errors, layouts, workspace, executor lifetime, determinism."""
from __future__ import annotations

import numpy as np
import pytest

import aclnn_py as A
from aclnn_py import acl
from aclnn_py.opdef import OPS
from harness import (GUARD, assert_close, call_op, free_device_tensor, make_device_tensor, read_storage, read_view, release,
                     untouched_outside_view)
from opdb import OP_DB

SEED = 20261122


def _cases(kind):
    out = []
    for info in OP_DB:
        rng = np.random.default_rng(SEED)
        items = info.samples(rng) if kind == "samples" else info.errors(rng)
        for i, item in enumerate(items):
            s = item if kind == "samples" else item[0]
            out.append(pytest.param(info, item, id=f"{info.name}-{i}-{s.note}"))
    return out


def _check_untouched(res, names):
    for n in names:
        d = res.device[n]
        assert np.array_equal(read_storage(d), res.before[n]), f"{n} was modified"


@pytest.mark.parametrize("info,sample", _cases("samples"))
def test_matches_reference(info, sample):
    reg = OPS[info.name]
    res = call_op(reg, sample)
    try:
        assert res.status1 == 0, res.message
        assert res.status2 == 0, res.message
        expected = info.reference(sample)
        dt = info.data_dtype_of(sample)
        for name, exp in expected.items():
            out_dt = sample.tensors[name].dtype
            assert_close(res.outputs[name], exp, out_dt if out_dt in (A.ACL_FLOAT, A.ACL_FLOAT16, A.ACL_BF16) else dt,
                         name=f"{info.name}.{name}", scale=info.tolerance_scale(sample))
        # nothing outside the written views changes; inputs are bitwise unchanged
        written = set(info.outputs)
        for name, d in res.device.items():
            if name in written:
                assert untouched_outside_view(d, res.before[name]), f"{name}: write outside its view or guard"
            else:
                assert np.array_equal(read_storage(d), res.before[name]), f"input {name} was modified"
        empty = sample.tensors["input"].values.size == 0
        if empty:
            assert res.ws_size == 0
    finally:
        release(res)


@pytest.mark.parametrize("info,case", _cases("errors"))
def test_error_status_and_nothing_written(info, case):
    sample, status = case
    reg = OPS[info.name]
    res = call_op(reg, sample)
    try:
        assert res.status1 == status, f"expected {status}, got {res.status1}: {res.message}"
        assert res.message and f"aclnn{info.name}" in res.message
        _check_untouched(res, res.device)
    finally:
        release(res)


def _first_sample(info, pred=lambda s: True):
    rng = np.random.default_rng(SEED)
    return next(s for s in info.samples(rng) if pred(s) and s.tensors["input"].values.size)


def _phase1(info, sample):
    reg = OPS[info.name]
    dev = {n: make_device_tensor(sp, sample.channel_axis) for n, sp in sample.tensors.items() if sp is not None}
    args = [dev[p.name].tensor if p.name in dev else (None if p.name in sample.tensors else sample.attrs.get(p.name))
            for p in reg.opdef.params]
    ws, ex, ret = reg.get_workspace_size(*args)
    assert ret == 0, acl.get_recent_err_msg()
    return reg, dev, ws, ex


def _alloc_ws(size):
    if not size:
        return None
    p, r = acl.rt.malloc(size, 0)
    assert r == 0
    return p


@pytest.mark.parametrize("info", OP_DB, ids=lambda i: i.name)
def test_workspace_and_executor_rules(info, stream):
    # a non-contiguous layout forces a real workspace (copies)
    sample = _first_sample(info, lambda s: s.tensors["input"].layout in ("strided", "transposed"))
    reg, dev, ws_size, ex = _phase1(info, sample)
    assert ws_size > 0
    outs = info.outputs
    before = {n: read_storage(dev[n]) for n in dev}
    assert reg.run(None, 0, None, stream) == A.ACLNN_ERR_PARAM_NULLPTR
    assert reg.run(None, ws_size, ex, stream) == A.ACLNN_ERR_PARAM_NULLPTR        # consumes it (CANN)
    assert reg.run(_alloc_ws(ws_size), ws_size, ex, stream) == A.ACLNN_ERR_PARAM_INVALID  # consumed: refused
    assert acl.rt.synchronize_stream(stream) == 0
    for n in dev:
        assert np.array_equal(read_storage(dev[n]), before[n]), f"{n} written by a refused phase 2"
    # short workspace
    reg, dev2, ws_size, ex = _phase1(info, sample)
    before2 = {n: read_storage(dev2[n]) for n in dev2}
    ws = _alloc_ws(ws_size)
    assert reg.run(ws, ws_size - 1, ex, stream) == A.ACLNN_ERR_PARAM_INVALID
    assert acl.rt.synchronize_stream(stream) == 0
    for n in dev2:
        assert np.array_equal(read_storage(dev2[n]), before2[n]), f"{n} written by a short-workspace phase 2"
    # a consumed executor never runs twice
    reg, dev3, ws_size, ex = _phase1(info, sample)
    assert reg.run(ws, ws_size, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    first = {n: read_storage(dev3[n]) for n in outs}
    for n in outs:
        assert acl.rt.memset(dev3[n].data, dev3[n].nbytes, 0, dev3[n].nbytes) == 0
    assert reg.run(ws, ws_size, ex, stream) == A.ACLNN_ERR_PARAM_INVALID
    assert acl.rt.synchronize_stream(stream) == 0
    for n in outs:
        assert not read_storage(dev3[n])[GUARD:GUARD + dev3[n].nbytes].any(), "a consumed executor ran again"
    assert first
    acl.rt.free(ws)
    for d in (*dev.values(), *dev2.values(), *dev3.values()):
        free_device_tensor(d)


@pytest.mark.parametrize("info", OP_DB, ids=lambda i: i.name)
def test_repeatable_executor_with_rebinding(info, stream):
    sample = _first_sample(info)
    reg, dev, ws_size, ex = _phase1(info, sample)
    assert A.aclSetAclOpExecutorRepeatable(ex) == 0
    ws = _alloc_ws(ws_size)
    for _ in range(2):
        assert reg.run(ws, ws_size, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    expected = info.reference(sample)
    dt = info.data_dtype_of(sample)
    for n, e in expected.items():
        if n in info.outputs and n not in ("running_mean", "running_var"):
            assert_close(read_view(dev[n]), e, dt, name=n, scale=info.tolerance_scale(sample))
    # rebind every tensor to fresh buffers holding a second sample's data
    sample2 = _first_sample(info)
    rng = np.random.default_rng(SEED + 1)
    for sp in sample2.tensors.values():
        if sp is not None and sp.values.dtype.kind == "f" and sp.values.size:
            sp.values = sp.values + rng.uniform(-0.25, 0.25, sp.values.shape) * (np.abs(sp.values) + 1) * 0.1
            if np.all(np.asarray(sample.tensors[[k for k, v in sample2.tensors.items() if v is sp][0]].values) > 0):
                sp.values = np.abs(sp.values)
    dev2 = {n: make_device_tensor(sp, sample2.channel_axis) for n, sp in sample2.tensors.items() if sp is not None}
    tparams = [p for p in reg.opdef.params if hasattr(p, "kind") and not p.out] + \
              [p for p in reg.opdef.params if hasattr(p, "kind") and p.out]
    n_in = sum(1 for p in tparams if not p.out)
    for i, p in enumerate(tparams):
        if p.name not in dev:
            assert A.aclSetTensorAddr(ex, i, dev2[next(iter(dev2))].tensor, 0x1234) == A.ACLNN_ERR_PARAM_INVALID
            continue
        t = dev[p.name].tensor
        if i < n_in:
            assert A.aclSetInputTensorAddr(ex, i, t, dev2[p.name].data) == 0
        else:
            assert A.aclSetOutputTensorAddr(ex, i - n_in, t, dev2[p.name].data) == 0
    assert A.aclSetInputTensorAddr(ex, 999, dev[next(iter(dev))].tensor, dev2[next(iter(dev2))].data) \
        == A.ACLNN_ERR_PARAM_INVALID
    assert A.aclSetTensorAddr(None, 0, dev[next(iter(dev))].tensor, 0) == A.ACLNN_ERR_INNER_NULLPTR
    # an address whose view would leave its allocation is refused
    some = next(iter(dev2.values()))
    assert A.aclSetTensorAddr(ex, 0, dev[tparams[0].name].tensor, some.data + some.nbytes + 4096 * 1024) \
        in (A.ACLNN_ERR_PARAM_INVALID,)
    assert reg.run(ws, ws_size, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    expected2 = info.reference(sample2)
    for n, e in expected2.items():
        if n in info.outputs and n not in ("running_mean", "running_var"):
            assert_close(read_view(dev2[n]), e, dt, name=n, scale=info.tolerance_scale(sample))
    assert A.aclDestroyAclOpExecutor(ex) == 0
    assert reg.run(ws, ws_size, ex, stream) == A.ACLNN_ERR_PARAM_INVALID
    assert A.aclDestroyAclOpExecutor(None) == A.ACLNN_ERR_INNER_NULLPTR
    if ws:
        acl.rt.free(ws)
    for d in (*dev.values(), *dev2.values()):
        free_device_tensor(d)


@pytest.mark.parametrize("info", [i for i in OP_DB if i.deterministic], ids=lambda i: i.name)
def test_bitwise_reproducible(info):
    for pred in (lambda s: s.tensors["input"].layout == "contiguous", lambda s: s.tensors["input"].format
                 in (A.ACL_FORMAT_NHWC, A.ACL_FORMAT_NDHWC)):
        sample = _first_sample(info, pred)
        r1 = call_op(OPS[info.name], sample)
        r2 = call_op(OPS[info.name], sample)
        try:
            for n in info.outputs:
                if n in r1.outputs:
                    assert r1.outputs[n].tobytes() == r2.outputs[n].tobytes(), n
        finally:
            release(r1)
            release(r2)


@pytest.mark.parametrize("info", OP_DB, ids=lambda i: i.name)
def test_noncontiguous_equals_contiguous(info):
    rng = np.random.default_rng(SEED)
    base = next(s for s in info.samples(rng) if s.tensors["input"].layout == "contiguous"
                and s.tensors["input"].values.size and s.tensors["input"].dtype == A.ACL_FLOAT)
    ref = call_op(OPS[info.name], base)
    try:
        for layout in ("strided", "transposed", "offset", "channels_last"):
            for sp in base.tensors.values():
                if sp is not None and sp.values.ndim == sp_ndim(base):
                    sp.layout = layout
            res = call_op(OPS[info.name], base)
            try:
                for n in info.outputs:
                    if n in ref.outputs:
                        np.testing.assert_allclose(res.outputs[n].astype(np.float64),
                                                   ref.outputs[n].astype(np.float64), rtol=1e-6, atol=1e-6,
                                                   err_msg=f"{n} with {layout}")
            finally:
                release(res)
    finally:
        release(ref)


def sp_ndim(sample):
    return sample.tensors["input"].values.ndim
