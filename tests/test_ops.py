"""Generic tests over the op database: reference, errors, layouts, workspace, executor lifetime, determinism,
in-place aliases. They know no op's parameters: tensor roles come from the registry (``opdef.tensors``),
the data tensor of a sample from its OpInfo (``info.data``)."""
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
        items = info.samples(rng) if kind == "samples" else info.error_cases(rng)
        for i, item in enumerate(items):
            s = item if kind == "samples" else item.sample
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
        dt = info.data_dtype(sample)
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
        if sample.tensors[info.data].values.size == 0 or (info.zero_workspace and info.zero_workspace(sample)):
            assert res.ws_size == 0, "planned a workspace (a copy) where none is needed"
    finally:
        release(res)


@pytest.mark.parametrize("info,sample", [c for c in _cases("samples") if c.values[0].torch_reference])
def test_matches_pytorch(info, sample):
    """PyTorch's own implementation (CPU, float64, on the same rounded inputs) where it is installed."""
    pytest.importorskip("torch")
    res = call_op(OPS[info.name], sample)
    try:
        assert res.status1 == 0 and res.status2 == 0, res.message
        for name, exp in info.torch_reference(sample).items():
            assert_close(res.outputs[name], exp, sample.tensors[name].dtype, name=f"{info.name}.{name} vs torch",
                         scale=info.tolerance_scale(sample))
    finally:
        release(res)


@pytest.mark.parametrize("info,case", _cases("errors"))
def test_error_status_and_nothing_written(info, case):
    reg = OPS[info.name]
    res = call_op(reg, case.sample)
    try:
        assert res.status1 == case.status, f"expected {case.status}, got {res.status1}: {res.message}"
        assert res.message and f"aclnn{info.name}" in res.message
        if case.names:
            assert case.names in res.message, f"the message must name {case.names!r}: {res.message}"
        _check_untouched(res, res.device)
    finally:
        release(res)


def _first_sample(info, pred=lambda s: True, fallback=False):
    """The first non-empty sample matching ``pred`` (``fallback``: else the first non-empty one — an
    op whose tensors have one fixed layout, a generator state, has no other)."""
    rng = np.random.default_rng(SEED)
    found = next((s for s in info.samples(rng) if pred(s) and s.tensors[info.data].values.size), None)
    return found if found is not None or not fallback else _first_sample(info)


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


def _check_workspace_rules(info, sample, reg, dev, ws_size, ex, stream, before):
    """A null or short workspace is refused and writes nothing; returns (a workspace, the tensors made)."""
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
    return ws, dev2


@pytest.mark.parametrize("info", OP_DB, ids=lambda i: i.name)
def test_workspace_and_executor_rules(info, stream):
    # a view with gaps is dense in no order: it forces a real workspace (copies)
    sample = _first_sample(info, lambda s: info.workspace_free or s.tensors[info.data].layout == "strided")
    reg, dev, ws_size, ex = _phase1(info, sample)
    assert (ws_size == 0) if info.workspace_free else (ws_size > 0)
    outs = info.outputs
    before = {n: read_storage(dev[n]) for n in dev}
    assert reg.run(None, 0, None, stream) == A.ACLNN_ERR_PARAM_NULLPTR
    if info.workspace_free:     # no workspace to get wrong: it runs without one, once
        assert reg.run(None, 0, ex, stream) == 0
        assert reg.run(None, 0, ex, stream) == A.ACLNN_ERR_PARAM_INVALID
        assert acl.rt.synchronize_stream(stream) == 0
        ws, dev2 = None, {}
    else:
        ws, dev2 = _check_workspace_rules(info, sample, reg, dev, ws_size, ex, stream, before)
    # a consumed executor never runs twice
    reg, dev3, ws_size, ex = _phase1(info, sample)
    fresh = {n: read_storage(dev3[n]) for n in outs if n in dev3}
    assert reg.run(ws, ws_size, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert any(not np.array_equal(read_storage(dev3[n]), b) for n, b in fresh.items()), "the first run wrote nothing"
    for n in outs:
        assert acl.rt.memset(dev3[n].data, dev3[n].nbytes, 0, dev3[n].nbytes) == 0
    assert reg.run(ws, ws_size, ex, stream) == A.ACLNN_ERR_PARAM_INVALID
    assert acl.rt.synchronize_stream(stream) == 0
    for n in outs:
        assert not read_storage(dev3[n])[GUARD:GUARD + dev3[n].nbytes].any(), "a consumed executor ran again"
    if ws:
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
    dt = info.data_dtype(sample)
    updated = {p.name for p in reg.opdef.tensors if p.written}    # running twice updates them twice
    for n, e in expected.items():
        if n in info.outputs and n not in updated:
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
    tparams = reg.opdef.tensors
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
    # an address whose view would leave its allocation is refused: it starts 4 bytes before the end of
    # a live allocation (storage + the harness's guard bytes); an address some way past the end could
    # land in another live allocation
    some = next(iter(dev2.values()))
    alloc_end = some.data + some.nbytes + GUARD
    assert A.aclSetTensorAddr(ex, 0, dev[tparams[0].name].tensor, alloc_end - 4) == A.ACLNN_ERR_PARAM_INVALID
    assert reg.run(ws, ws_size, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    expected2 = info.reference(sample2)
    for n, e in expected2.items():
        if n in info.outputs and n not in updated:
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
    for pred in (lambda s: s.tensors[info.data].layout == "contiguous",
                 lambda s: s.tensors[info.data].format in (A.ACL_FORMAT_NHWC, A.ACL_FORMAT_NDHWC)
                 or s.tensors[info.data].layout != "contiguous"):
        sample = _first_sample(info, pred, fallback=True)
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
    plain = [s for s in info.samples(rng) if s.tensors[info.data].layout == "contiguous"
             and s.tensors[info.data].values.size]
    base = next((s for s in plain if s.tensors[info.data].dtype == A.ACL_FLOAT), plain[0])
    ref = call_op(OPS[info.name], base)
    try:
        for layout in ("strided", "transposed", "offset", "channels_last"):
            for n, sp in base.tensors.items():
                if sp is not None and sp.values.ndim == base.tensors[info.data].values.ndim \
                        and n not in info.layout_fixed:
                    sp.layout = layout
            res = call_op(OPS[info.name], base)
            try:
                assert res.status1 == 0, f"{layout}: {res.message}"
                for n in info.outputs:
                    if n in ref.outputs:
                        np.testing.assert_allclose(res.outputs[n].astype(np.float64),
                                                   ref.outputs[n].astype(np.float64), rtol=1e-6, atol=1e-6,
                                                   err_msg=f"{n} with {layout}")
            finally:
                release(res)
    finally:
        release(ref)



def test_every_registered_op_is_in_the_database():
    """The registry is the list of ops: each one needs samples, error cases and a reference here."""
    infos = {i.name: i for i in OP_DB}
    assert sorted(OPS) == sorted(infos), "ops without an OpInfo (or OpInfos of no op)"
    for name, info in infos.items():
        rng = np.random.default_rng(SEED)
        samples, errors = info.samples(rng), info.error_cases(rng)
        assert any(s.tensors[info.data].values.size for s in samples), f"{name}: no non-empty sample"
        assert errors, f"{name}: no error cases"
        assert set(info.outputs) <= {p.name for p in OPS[name].opdef.tensors if p.out or p.written}, name


def _alias_cases():
    """Every exact in-place alias an op declares (TensorParam.alias), from the registry."""
    return [pytest.param(info, p.name, src, id=f"{info.name}-{p.name}={src}") for info in OP_DB
            for p in OPS[info.name].opdef.tensors if p.out for src in p.alias]


def _alias_sample(info, out, src):
    return _first_sample(info, lambda s: s.tensors[src] is not None and s.tensors[out] is not None
                         and s.tensors[src].layout == s.tensors[out].layout == "contiguous"
                         and np.shape(s.tensors[src].values) == np.shape(s.tensors[out].values)
                         and s.tensors[src].dtype == s.tensors[out].dtype)


@pytest.mark.parametrize("info,out,src", _alias_cases())
def test_allowed_in_place_alias_equals_out_of_place(info, out, src):
    sample = _alias_sample(info, out, src)
    reg = OPS[info.name]
    ref = call_op(reg, sample)
    try:
        assert ref.status1 == 0 and ref.status2 == 0, ref.message

        def alias(d):
            d[out].tensor = d[src].tensor            # the very same view: CANN's in-place form
        sample.mutate = alias
        res = call_op(reg, sample)
        try:
            assert res.status1 == 0 and res.status2 == 0, res.message
            assert res.outputs[src].tobytes() == ref.outputs[out].tobytes(), f"in-place {out}={src} differs"
            for n in info.outputs:                   # the other outputs are as out of place
                if n not in (out, src) and n in ref.outputs:
                    assert res.outputs[n].tobytes() == ref.outputs[n].tobytes(), n
        finally:
            release(res)
    finally:
        release(ref)


def _undeclared_alias_cases():
    out = []
    for info in OP_DB:
        tensors = OPS[info.name].opdef.tensors
        sample = _first_sample(info, lambda s: s.tensors[info.data].layout == "contiguous")
        for p in tensors:
            for q in tensors:
                if (p.out and not q.out and q.name not in p.alias and sample.tensors.get(p.name) is not None
                        and sample.tensors.get(q.name) is not None and sample.tensors[q.name].values.size):
                    out.append(pytest.param(info, p.name, q.name, id=f"{info.name}-{p.name}={q.name}"))
                    break
    return out


@pytest.mark.parametrize("info,out,src", _undeclared_alias_cases())
def test_undeclared_alias_is_refused(info, out, src):
    """An output placed exactly on an input it may not alias: 161002, naming it, nothing written."""
    sample = _first_sample(info, lambda s: s.tensors[info.data].layout == "contiguous")

    def alias(d):
        t = d[out].tensor
        t.addr, t.offset, t.storage_dims = d[src].tensor.addr, d[src].tensor.offset, d[src].tensor.storage_dims
    sample.mutate = alias
    res = call_op(OPS[info.name], sample)
    try:
        assert res.status1 == A.ACLNN_ERR_PARAM_INVALID, res.message
        assert out in res.message
        _check_untouched(res, res.device)
    finally:
        release(res)


@pytest.mark.parametrize("info", OP_DB, ids=lambda i: i.name)
def test_cached_plan_still_checks_addresses(info):
    """The second call with the same descriptions reuses the plan, never the address checks."""
    sample = _first_sample(info, lambda s: s.tensors[info.data].layout == "contiguous")
    reg = OPS[info.name]
    first = call_op(reg, sample, run=False)
    release(first)
    outs = [p.name for p in reg.opdef.tensors if (p.out or p.written) and sample.tensors.get(p.name) is not None]
    ins = [p.name for p in reg.opdef.tensors if not (p.out or p.written) and sample.tensors.get(p.name) is not None]

    def overlap(d):
        if ins:
            d[outs[0]].tensor.addr = d[ins[0]].tensor.addr + 4
            d[outs[0]].tensor.storage_dims = d[ins[0]].tensor.storage_dims
        else:                   # an op without inputs: the output moved past the end of its allocation
            d[outs[0]].tensor.addr += d[outs[0]].nbytes + 2 * 256
    sample.mutate = overlap
    res = call_op(reg, sample)
    try:
        assert res.status1 == A.ACLNN_ERR_PARAM_INVALID, res.message
        _check_untouched(res, res.device)
    finally:
        release(res)


_MEMORY_FAULTS = ("view beyond its storage_dims", "view beyond its allocation", "null address",
                  "written view overlapping itself")


def _memory_fault_cases():
    out = []
    for info in OP_DB:
        for fault in _MEMORY_FAULTS:
            out.append(pytest.param(info, fault, id=f"{info.name}-{fault}"))
    return out


@pytest.mark.parametrize("info,fault", _memory_fault_cases())
def test_memory_faults_derived_from_any_sample(info, fault):
    """The memory rules hold for every op without listing them per op: a sample's first non-empty
    tensor (or output) is broken one way; 161002 naming it, and every buffer byte-identical."""
    sample = _first_sample(info, lambda s: s.tensors[info.data].layout == "contiguous")
    reg = OPS[info.name]
    present = [p for p in reg.opdef.tensors
               if sample.tensors.get(p.name) is not None and np.size(sample.tensors[p.name].values)]
    if fault == "written view overlapping itself":
        present = [p for p in present if (p.out or p.written)
                   and max(np.shape(sample.tensors[p.name].values), default=1) > 1]
        if not present:
            pytest.skip("no written tensor with a dim of size > 1")
    elif fault == "null address":
        present = [p for p in present if p.out] or present
    name = present[0].name

    def mutate(d):
        t = d[name].tensor
        if fault == "view beyond its storage_dims":
            t.storage_dims = (d[name].storage_numel - 1,)
        elif fault == "view beyond its allocation":
            # straddle the allocation's end by 16 bytes: a range wholly past it could lie inside the next
            # live allocation (CuPy's pool packs them back to back), which is legal memory
            t.addr += GUARD + 16
        elif fault == "null address":
            t.addr = None
        else:
            big = max(range(t.rank), key=lambda i: t.view_dims[i])
            t.strides = tuple(0 if i == big else s for i, s in enumerate(t.strides))
    sample.mutate = mutate
    res = call_op(reg, sample)
    try:
        assert res.status1 == A.ACLNN_ERR_PARAM_INVALID, (fault, res.status1, res.message)
        assert name in res.message, res.message
        _check_untouched(res, res.device)
    finally:
        release(res)
