"""The op framework itself, with throw-away ops declared here: check order, attributes, axes, ranks,
ops without a tensor input, internal errors, generated signatures, the plan cache."""
from __future__ import annotations

import inspect
import threading

import numpy as np
import pytest

import aclnn_py as A
from aclnn_py import acl, opdef
from aclnn_py.opdef import AttrParam, Along, OpDef, Same, TensorParam, register, unregister
from harness import TensorSpec, free_device_tensor, make_device_tensor, read_storage

INVALID, NULLPTR = A.ACLNN_ERR_PARAM_INVALID, A.ACLNN_ERR_PARAM_NULLPTR


@pytest.fixture
def toy():
    """register(OpDef) for the test; the ops are removed afterwards (the registry stays the real one)."""
    names = []

    def make(**kw):
        kw.setdefault("plan", lambda plan: None)
        reg = register(OpDef(**kw))
        names.append(kw["name"])
        return reg
    yield make
    for n in names:
        unregister(n)


def _t(shape, dtype=A.ACL_FLOAT, **kw):
    return make_device_tensor(TensorSpec(np.zeros(shape), dtype, **kw))


def test_attributes_are_checked_before_the_axis_hook(toy):
    seen = []

    def axis(plan):
        seen.append(plan["k"])
        return plan["k"] % plan.ref.rank      # would raise TypeError on a str
    reg = toy(name="ToyAxis", params=(TensorParam("x"), AttrParam("k", int), TensorParam("y", out=True)), axis=axis)
    x, y = _t((2, 3)), _t((2, 3))
    try:
        _, ex, ret = reg.get_workspace_size(x.tensor, "1", y.tensor)
        assert ret == INVALID and ex is None and seen == []
        assert "k must be int" in acl.get_recent_err_msg()
        assert reg.get_workspace_size(x.tensor, 5, y.tensor)[2] == 0 and seen == [5]
    finally:
        free_device_tensor(x), free_device_tensor(y)


@pytest.mark.parametrize("dim,ok", [(0, True), (-1, True), (1, False), (-2, False), (0.0, False), (np.int64(0), True),
                                    (True, False), (2 ** 70, False)])
def test_dim_of_a_rank_0_tensor(toy, dim, ok):
    reg = toy(name="ToyDim", params=(TensorParam("x"), AttrParam("dim", int, dim_of="x"), TensorParam("y", out=True)),
              axis="dim")
    x, y = _t(()), _t(())
    try:
        ret = reg.get_workspace_size(x.tensor, dim, y.tensor)[2]
        assert ret == (0 if ok else INVALID), acl.get_recent_err_msg()
    finally:
        free_device_tensor(x), free_device_tensor(y)


def test_rank_ranges_and_formats(toy):
    reg = toy(name="ToyRank", params=(TensorParam("x"), TensorParam("y", out=True)), ranks=(1, 3),
              formats=frozenset({A.ACL_FORMAT_ND, A.ACL_FORMAT_NCL}))
    for shape, fmt, want in [((), A.ACL_FORMAT_ND, INVALID), ((4,), A.ACL_FORMAT_ND, 0), ((1, 2, 3), A.ACL_FORMAT_NCL, 0),
                             ((1, 2, 3, 4), A.ACL_FORMAT_ND, INVALID), ((1, 2, 3), A.ACL_FORMAT_NCHW, INVALID),
                             ((2, 3), A.ACL_FORMAT_NCL, INVALID)]:
        x, y = _t(shape, format=fmt), _t(shape, format=fmt)
        try:
            assert reg.get_workspace_size(x.tensor, y.tensor)[2] == want, (shape, fmt, acl.get_recent_err_msg())
        finally:
            free_device_tensor(x), free_device_tensor(y)


def test_an_op_without_a_tensor_input(toy):
    """Like aclnnDropoutGenMask: only a shape attribute and an output; the output is not 'the reference'."""
    planned = []
    reg = toy(name="ToyGen", params=(AttrParam("shape", A.aclIntArray, length=(1, 8)), AttrParam("seed", int),
                                     TensorParam("out", out=True, dtypes=frozenset({A.ACL_UINT8}),
                                                 shape=opdef.Rank(1, 1))),
              plan=lambda plan: planned.append(tuple(plan["shape"])))
    out = _t((16,), A.ACL_UINT8)
    try:
        ws, ex, ret = reg.get_workspace_size(A.aclCreateIntArray([2, 3]), 7, out.tensor)
        assert ret == 0 and ws == 0 and planned == [(2, 3)], acl.get_recent_err_msg()
        assert reg.run(None, 0, ex, None) == 0
        assert reg.get_workspace_size(A.aclCreateIntArray([]), 7, out.tensor)[2] == INVALID
        assert reg.get_workspace_size(None, 7, out.tensor)[2] == NULLPTR
    finally:
        free_device_tensor(out)


def test_a_bug_in_a_hook_is_an_exception_in_tests_and_561003_for_users(toy, monkeypatch):
    def plan(p):
        raise ZeroDivisionError("oops")
    reg = toy(name="ToyBug", params=(TensorParam("x"), TensorParam("y", out=True)), plan=plan)
    x, y = _t((2, 2)), _t((2, 2))
    try:
        with pytest.raises(ZeroDivisionError):
            reg.get_workspace_size(x.tensor, y.tensor)
        monkeypatch.setattr(opdef, "STRICT", False)
        ws, ex, ret = reg.get_workspace_size(x.tensor, y.tensor)
        assert (ws, ex, ret) == (0, None, A.ACLNN_ERR_INNER_FIND_KERNEL_ERROR)
        msg = acl.get_recent_err_msg()
        assert "ZeroDivisionError" in msg and "oops" in msg
    finally:
        free_device_tensor(x), free_device_tensor(y)


def test_an_undeclared_kernel_is_561003(toy):
    reg = toy(name="ToyKernel", params=(TensorParam("x"), TensorParam("y", out=True)),
              plan=lambda p: p.launch("no_such_family", "k<float>", 1, 1, ()))
    x, y = _t((2, 2)), _t((2, 2))
    try:
        assert reg.get_workspace_size(x.tensor, y.tensor)[2] == A.ACLNN_ERR_INNER_FIND_KERNEL_ERROR
        assert "no_such_family" in acl.get_recent_err_msg()
    finally:
        free_device_tensor(x), free_device_tensor(y)


def test_generated_signature_and_keywords(toy):
    reg = toy(name="ToySig", params=(TensorParam("x"), AttrParam("alpha", float), TensorParam("y", out=True)))
    assert list(inspect.signature(reg.get_workspace_size).parameters) == ["x", "alpha", "y"]
    assert reg.get_workspace_size.__name__ == "aclnnToySigGetWorkspaceSize"
    assert "aclnnToySigGetWorkspaceSize" in opdef.EXPORTS and "aclnnToySig" in opdef.EXPORTS
    x, y = _t((3,)), _t((3,))
    try:
        assert reg.get_workspace_size(y=y.tensor, alpha=0.5, x=x.tensor)[2] == 0
        assert reg.get_workspace_size(x.tensor, 0.5, y.tensor, z=1)[2] == INVALID
        assert reg.get_workspace_size(x.tensor, 10 ** 400, y.tensor)[2] == INVALID     # no OverflowError
        assert reg.get_workspace_size(x.tensor, 0.5, y.tensor, 1)[2] == INVALID         # too many
    finally:
        free_device_tensor(x), free_device_tensor(y)


def test_shape_rules(toy):
    reg = toy(name="ToyShape", params=(TensorParam("x"), TensorParam("w", shape=Along(axis=1)),
                                       TensorParam("z", shape=opdef.Broadcast("x")),
                                       TensorParam("y", out=True, shape=Same("x"))))
    cases = [((2, 3), (3,), (1, 3), (2, 3), 0), ((2, 3), (2,), (1, 3), (2, 3), INVALID),
             ((2, 3), (3,), (2, 1), (2, 3), 0), ((2, 3), (3,), (4, 3), (2, 3), INVALID),
             ((2, 3), (3,), (3,), (3, 2), INVALID)]
    for xs, ws, zs, ys, want in cases:
        ts = [_t(s) for s in (xs, ws, zs, ys)]
        try:
            assert reg.get_workspace_size(*(t.tensor for t in ts))[2] == want, (xs, ws, zs, ys)
        finally:
            for t in ts:
                free_device_tensor(t)


def test_self_overlapping_output_is_refused(toy):
    reg = toy(name="ToyZeroStride", params=(TensorParam("x"), TensorParam("y", out=True)))
    x, y = _t((4, 3)), _t((4, 3))
    before = read_storage(y)
    try:
        y.tensor.strides = (0, 1)         # every row on the same memory
        assert reg.get_workspace_size(x.tensor, y.tensor)[2] == INVALID
        assert "overlaps itself" in acl.get_recent_err_msg()
        x.tensor.strides = (0, 1)         # a broadcast input is fine
        y.tensor.strides = (3, 1)
        assert reg.get_workspace_size(x.tensor, y.tensor)[2] == 0
        assert np.array_equal(read_storage(y), before)
    finally:
        free_device_tensor(x), free_device_tensor(y)


def test_plan_cache_is_a_bounded_lru(toy, monkeypatch):
    monkeypatch.setattr(opdef, "PLAN_CACHE_SIZE", 4)
    reg = toy(name="ToyLRU", params=(TensorParam("x"), TensorParam("y", out=True)))
    ts = [(_t((n,)), _t((n,))) for n in range(1, 11)]
    try:
        for x, y in ts:
            assert reg.get_workspace_size(x.tensor, y.tensor)[2] == 0
        assert len(reg.plan_cache) == 4
    finally:
        for x, y in ts:
            free_device_tensor(x), free_device_tensor(y)


def test_phase1_from_many_threads(toy):
    """Shared caches (plans, kernels, descriptions) under concurrent phase 1 of one op."""
    reg = toy(name="ToyThreads", params=(TensorParam("x"), TensorParam("y", out=True)),
              plan=lambda p: (p.read("x"), p.write("y")))
    shapes = [(2, 3), (3, 4, 5), (7,), (2, 2, 2, 2)]
    errors = []

    def work(i):
        try:
            for k in range(40):
                shape = shapes[(i + k) % len(shapes)]
                x, y = _t(shape, layout="transposed"), _t(shape, layout="strided")
                ws, ex, ret = reg.get_workspace_size(x.tensor, y.tensor)
                if ret != 0 or (len(shape) > 1 and not ws):
                    errors.append((ret, ws, acl.get_recent_err_msg()))
                A.aclDestroyAclOpExecutor(ex)
                free_device_tensor(x), free_device_tensor(y)
        except Exception as e:          # any exception is a failure of the test
            errors.append(repr(e))
    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_a_cached_plan_revalidates_after_a_free(toy):
    """The cached fast path skips the address checks only while the same buffers stay allocated."""
    reg = toy(name="ToyFree", params=(TensorParam("x"), TensorParam("y", out=True)))
    x, y = _t((5, 3)), _t((5, 3))
    try:
        for _ in range(3):
            assert reg.get_workspace_size(x.tensor, y.tensor)[2] == 0
        assert acl.rt.free(y.base) == 0                    # same descriptions, same addresses: now dangling
        assert reg.get_workspace_size(x.tensor, y.tensor)[2] == INVALID
        assert "not inside one live allocation" in acl.get_recent_err_msg()
    finally:
        free_device_tensor(x)
        A.aclDestroyTensor(y.tensor)


@pytest.mark.parametrize("field,value", [("view_dims", (-1, -3)), ("view_dims", (2, 2 ** 62, 4)), ("strides", (1,)),
                                         ("strides", (1.5, 1)), ("offset", 2 ** 70), ("storage_dims", (-4,)),
                                         ("view_dims", "ab"), ("strides", None)])
def test_a_description_edited_into_nonsense_is_refused(toy, field, value):
    reg = toy(name="ToyNonsense", params=(TensorParam("x"), TensorParam("y", out=True)))
    x, y = _t((2, 3)), _t((2, 3))
    try:
        setattr(x.tensor, field, value)
        assert reg.get_workspace_size(x.tensor, y.tensor)[2] == INVALID
        assert "well-formed" in acl.get_recent_err_msg()
    finally:
        free_device_tensor(x), free_device_tensor(y)
