"""BatchNorm-family tests beyond the generic ones in test_ops.py.

- PyTorch cross-checks (skipped without torch): aclnnBatchNorm vs torch.native_batch_norm /
  F.batch_norm (training with running-stat updates, inference), NCHW, NHWC and channels-last
  memory; aclnnBatchNormBackward vs autograd in float64; aclnnBatchNormElemtBackward fed with the
  batch statistics and sums equals the input gradient of F.batch_norm(training=True); the fused
  ops vs relu(F.batch_norm(x) + z) and its autograd.
- Welford: mean 1e4, std 1e-2 (f32, bf16) keeps the variance.
- Bitwise reproducibility of every op on a shape with several reduction splits.
- oneDNN's dtype combinations one by one.
- The fused ops' reserve mask round trip (forward -> backward) across layouts, and its size query.
- SyncBatchNorm (samples/08) equal to whole-batch BatchNorm, 2 and 3 ranks, an empty rank.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import aclnn_py as A
from aclnn_py.opdef import OPS
from aclnn_py.ops import _bn_plan as bp
from harness import Sample, TensorSpec, assert_close, call_op, release
from opdb import batch_norm as db
from references import batch_norm as R

F32, F16, BF16, U8, I32 = A.ACL_FLOAT, A.ACL_FLOAT16, A.ACL_BF16, A.ACL_UINT8, A.ACL_INT32
ROOT = Path(__file__).resolve().parent.parent


def run(name, sample):
    res = call_op(OPS[name], sample)
    assert res.status1 == 0 and res.status2 == 0, res.message
    return res


def outputs(name, sample):
    res = run(name, sample)
    try:
        return {k: v.copy() for k, v in res.outputs.items()}
    finally:
        release(res)


def f64(a):
    return np.asarray(a).astype(np.float64)


# ------------------------------------------------------------------------------------------------
# PyTorch cross-checks
# ------------------------------------------------------------------------------------------------
LAYOUTS = [((3, 4, 5, 6), False, "contiguous"), ((3, 5, 6, 4), True, "contiguous"),
           ((3, 4, 5, 6), False, "channels_last"), ((4, 7), False, "contiguous")]


def _torch_nc(t, v, ax):
    """A logical-layout array -> torch float64 tensor with the channel axis at dim 1."""
    return t.from_numpy(np.ascontiguousarray(np.moveaxis(f64(v), ax, 1)))


def _from_nc(t, ax):
    return np.moveaxis(t.detach().numpy(), 1, ax)


@pytest.mark.parametrize("shape,cl,layout", LAYOUTS, ids=["NCHW", "NHWC", "NCHW-view-CL-memory", "NC"])
@pytest.mark.parametrize("dtype", [F32, F16, BF16], ids=["f32", "f16", "bf16"])
def test_batch_norm_forward_vs_torch(shape, cl, layout, dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    s = db.make_bn(rng, shape, dtype, F32, channel_last=cl, layout=layout, momentum=0.3)
    ax, v = s.channel_axis, db._vals(s)
    out = outputs("BatchNorm", s)
    rm, rv = torch.from_numpy(v["running_mean"].copy()), torch.from_numpy(v["running_var"].copy())
    y, save_mean, save_rstd = torch.native_batch_norm(_torch_nc(torch, v["input"], ax), torch.from_numpy(v["weight"]),
                                                      torch.from_numpy(v["bias"]), rm, rv, True, 0.3, 1e-5)
    assert_close(out["output"], _from_nc(y, ax), dtype, name="output", scale=8)
    assert_close(out["save_mean"], save_mean.numpy(), F32, name="save_mean", scale=8)
    assert_close(out["save_invstd"], save_rstd.numpy(), F32, name="save_invstd", scale=8)
    assert_close(out["running_mean"], rm.numpy(), F32, name="running_mean (momentum)", scale=8)
    assert_close(out["running_var"], rv.numpy(), F32, name="running_var (unbiased)", scale=8)
    # inference with the updated running statistics, against F.batch_norm(training=False)
    s.attrs["training"] = False
    s.tensors["running_mean"].values, s.tensors["running_var"].values = out["running_mean"], out["running_var"]
    out2 = outputs("BatchNorm", s)
    yi = torch.nn.functional.batch_norm(_torch_nc(torch, v["input"], ax), torch.from_numpy(f64(out["running_mean"])),
                                        torch.from_numpy(f64(out["running_var"])), torch.from_numpy(v["weight"]),
                                        torch.from_numpy(v["bias"]), training=False, eps=1e-5)
    assert_close(out2["output"], _from_nc(yi, ax), dtype, name="inference output", scale=8)
    np.testing.assert_array_equal(out2["save_mean"], out["save_mean"] * 0)   # untouched (zeros) in inference


@pytest.mark.parametrize("shape,cl,layout", LAYOUTS, ids=["NCHW", "NHWC", "NCHW-view-CL-memory", "NC"])
@pytest.mark.parametrize("training", [True, False], ids=["training", "inference"])
def test_batch_norm_backward_vs_autograd(shape, cl, layout, training):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    s = db.make_bnb(rng, shape, F32, F32, channel_last=cl, layout=layout, training=training)
    ax, v = s.channel_axis, db._vals(s)
    x = _torch_nc(torch, v["input"], ax).requires_grad_()
    w = torch.from_numpy(v["weight"]).requires_grad_()
    b = torch.zeros_like(w).requires_grad_()
    rm, rv = torch.from_numpy(v["running_mean"].copy()), torch.from_numpy(v["running_var"].copy())
    y = torch.nn.functional.batch_norm(x, rm, rv, w, b, training=training, eps=1e-5)
    y.backward(_torch_nc(torch, v["grad_out"], ax))
    if training:   # the save_* of this batch, as the forward makes them
        x3 = np.moveaxis(v["input"], ax, 1).reshape(shape[0], shape[ax], -1)
        s.tensors["save_mean"].values = x3.mean(axis=(0, 2))
        s.tensors["save_invstd"].values = 1 / np.sqrt(x3.var(axis=(0, 2)) + 1e-5)
    out = outputs("BatchNormBackward", s)
    assert_close(out["grad_input"], _from_nc(x.grad, ax), F32, name="grad_input", scale=20)
    assert_close(out["grad_weight"], w.grad.numpy(), F32, name="grad_weight", scale=20)
    assert_close(out["grad_bias"], b.grad.numpy(), F32, name="grad_bias", scale=20)


@pytest.mark.parametrize("shape,cl", [((3, 4, 5, 6), False), ((3, 5, 6, 4), True)], ids=["NCHW", "NHWC"])
def test_elemt_backward_with_batch_sums_is_the_batch_norm_gradient(shape, cl):
    """Issue 3: mean/invstd = batch statistics, sum_dy = Σdy, sum_dy_xmu = Σdy·(x − mean), counter = [N]
    -> grad_input of F.batch_norm(training=True) (autograd, float64)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    ax = len(shape) - 1 if cl else 1
    C = shape[ax]
    x = rng.standard_normal(shape) * 2 + 0.5
    dy = rng.standard_normal(shape)
    w = rng.uniform(0.5, 1.5, C)
    x = x.astype(np.float32).astype(np.float64)
    dy = dy.astype(np.float32).astype(np.float64)
    w = w.astype(np.float32).astype(np.float64)
    x3 = np.moveaxis(x, ax, 1).reshape(shape[0], C, -1)
    d3 = np.moveaxis(dy, ax, 1).reshape(shape[0], C, -1)
    n = x3.shape[0] * x3.shape[2]
    mean = x3.mean(axis=(0, 2))
    invstd = 1 / np.sqrt(x3.var(axis=(0, 2)) + 1e-5)
    fmt = (A.ACL_FORMAT_NHWC if cl else A.ACL_FORMAT_NCHW)
    ch = lambda v: TensorSpec(v, F32)
    s = Sample({"grad_out": TensorSpec(dy, F32, fmt), "input": TensorSpec(x, F32, fmt), "mean": ch(mean),
                "invstd": ch(invstd), "weight": ch(w), "sum_dy": ch(d3.sum(axis=(0, 2))),
                "sum_dy_xmu": ch((d3 * (x3 - mean[None, :, None])).sum(axis=(0, 2))),
                "counter": TensorSpec(np.array([n]), I32), "grad_input": TensorSpec(np.zeros(shape), F32, fmt)},
               channel_axis=ax)
    out = outputs("BatchNormElemtBackward", s)
    xt = _torch_nc(torch, x, ax).requires_grad_()
    y = torch.nn.functional.batch_norm(xt, None, None, torch.from_numpy(w), None, training=True, eps=1e-5)
    y.backward(_torch_nc(torch, dy, ax))
    assert_close(out["grad_input"], _from_nc(xt.grad, ax), F32, name="grad_input", scale=20)


@pytest.mark.parametrize("act", ["identity", "relu", "clipped_relu"])
@pytest.mark.parametrize("shape,cl", [((2, 4, 5, 6), False), ((2, 5, 6, 4), True)], ids=["NCHW", "NHWC"])
def test_fused_vs_torch(act, shape, cl):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    rng = np.random.default_rng(4)
    s = db.make_ba(rng, shape, F32, channel_last=cl, act=act, ceiling=1.2, momentum=0.2)
    ax, v = s.channel_axis, db._vals(s)
    fwd = outputs("BatchNormActivation", s)
    x = _torch_nc(torch, v["input"], ax).requires_grad_()
    z = _torch_nc(torch, v["z"], ax).requires_grad_()
    w = torch.from_numpy(v["weight"]).requires_grad_()
    b = torch.from_numpy(v["bias"]).requires_grad_()
    rm, rv = torch.from_numpy(v["running_mean"].copy()), torch.from_numpy(v["running_var"].copy())
    u = F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.2, eps=1e-5) + z
    y = {"identity": u, "relu": F.relu(u), "clipped_relu": torch.clamp(u, 0.0, 1.2)}[act]
    assert_close(fwd["output"], _from_nc(y, ax), F32, name="output", scale=8)
    assert_close(fwd["running_mean"], rm.numpy(), F32, name="running_mean", scale=8)
    assert_close(fwd["running_var"], rv.numpy(), F32, name="running_var", scale=8)
    dy = rng.standard_normal(shape)
    y.backward(_torch_nc(torch, dy, ax))
    bs = Sample({"grad_out": TensorSpec(dy, F32, s.tensors["input"].format), "input": s.tensors["input"],
                 "weight": s.tensors["weight"], "bias": s.tensors["bias"],
                 "save_mean": TensorSpec(f64(fwd["save_mean"]), F32), "save_invstd": TensorSpec(f64(fwd["save_invstd"]), F32),
                 "reserve": TensorSpec(fwd["reserve"], U8) if act != "identity" else None,
                 "grad_input": TensorSpec(np.zeros(shape), F32, s.tensors["input"].format),
                 "grad_z": TensorSpec(np.zeros(shape), F32, s.tensors["input"].format),
                 "grad_weight": TensorSpec(np.zeros(shape[ax]), F32), "grad_bias": TensorSpec(np.zeros(shape[ax]), F32)},
                {"activation_mode": act, "ceiling": 1.2, "eps": 1e-5}, channel_axis=ax)
    bwd = outputs("BatchNormActivationBackward", bs)
    assert_close(bwd["grad_input"], _from_nc(x.grad, ax), F32, name="grad_input", scale=20)
    assert_close(bwd["grad_z"], _from_nc(z.grad, ax), F32, name="grad_z", scale=20)
    assert_close(bwd["grad_weight"], w.grad.numpy(), F32, name="grad_weight", scale=20)
    assert_close(bwd["grad_bias"], b.grad.numpy(), F32, name="grad_bias", scale=20)


# ------------------------------------------------------------------------------------------------
# Welford
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,std", [(F32, 1e-2), (BF16, 1e-2), (BF16, 100.0)], ids=["f32", "bf16", "bf16-wide"])
@pytest.mark.parametrize("cl", [False, True], ids=["NCX", "NXC"])
def test_welford_large_mean(dtype, std, cl):
    """mean 1e4, small spread: the variance of the values the device holds survives (shifted Welford)."""
    rng = np.random.default_rng(5)
    shape = (8, 6, 12, 12) if not cl else (8, 12, 12, 6)
    s = db.make_stats(rng, shape, dtype, channel_last=cl, loc=1e4, scale=std, eps=0.0)
    out = outputs("BatchNormStats", s)
    x = s.tensors["input"].rounded()
    mean, invstd = R.batch_norm_stats(x, 0.0, axis=s.channel_axis)
    np.testing.assert_allclose(f64(out["mean"]), mean, rtol=1e-7)
    if np.all(invstd == 0):     # bf16 at 1e4 rounds a 1e-2 spread away: variance exactly 0 (invstd 0 at eps 0)
        assert np.all(f64(out["invstd"]) == 0)
    else:
        assert np.all(invstd > 0)
        np.testing.assert_allclose(1 / f64(out["invstd"]) ** 2, 1 / invstd ** 2, rtol=1e-4)
    # aclnnBatchNorm's save_invstd agrees with BatchNormStats
    b = db.make_bn(rng, shape, dtype, F32, channel_last=cl, eps=0.0)
    b.tensors["input"] = s.tensors["input"]
    bo = outputs("BatchNorm", b)
    np.testing.assert_array_equal(bo["save_invstd"], out["invstd"])
    np.testing.assert_array_equal(bo["save_mean"], out["mean"])


# ------------------------------------------------------------------------------------------------
# bitwise reproducibility on a shape with several reduction splits
# ------------------------------------------------------------------------------------------------
MAKERS = {"BatchNorm": db.make_bn, "BatchNormBackward": db.make_bnb, "BatchNormStats": db.make_stats,
          "BatchNormGatherStatsWithCounts": db.make_gs, "BatchNormElemt": db.make_elemt,
          "BatchNormReduceBackward": db.make_rb, "BatchNormElemtBackward": None,
          "BatchNormTrainingBackward": db.make_tb, "BatchNormActivation": db.make_ba,
          "BatchNormActivationBackward": db.make_bab}


@pytest.mark.parametrize("name", list(MAKERS))
@pytest.mark.parametrize("cl", [False, True], ids=["NCX", "NXC"])
def test_bitwise_reproducible_with_splits(name, cl):
    shape = (128, 2, 48, 40) if not cl else (128, 48, 40, 2)
    N, C, S = 128, 2, 48 * 40
    assert bp.plan_reduction(N, C, S, cl)[2] > 1, "the shape must give several reduction splits"
    rng = np.random.default_rng(6)
    if name == "BatchNormElemtBackward":
        from opdb.batch_norm_elemt_backward import make
        s = make(rng, shape, F32, channel_last=cl)
    else:
        s = MAKERS[name](rng, shape, F32, F32, channel_last=cl)
    r1, r2 = outputs(name, s), outputs(name, s)
    for k in r1:
        assert r1[k].tobytes() == r2[k].tobytes(), k


# ------------------------------------------------------------------------------------------------
# oneDNN dtype combinations
# ------------------------------------------------------------------------------------------------
COMBOS = [(F32, F32, 0), (F32, BF16, 161002), (F32, F16, 161002), (BF16, F32, 0), (BF16, BF16, 0),
          (BF16, F16, 161002), (F16, F32, 0), (F16, BF16, 161002), (F16, F16, 161002)]


@pytest.mark.parametrize("src,stats,status", COMBOS, ids=[f"{db.DT_NAME[a]}-{db.DT_NAME[b]}" for a, b, _ in COMBOS])
@pytest.mark.parametrize("grads", [True, False], ids=["grads", "no-grads"])
def test_onednn_dtype_combinations(src, stats, status, grads):
    rng = np.random.default_rng(7)
    s = db.make_tb(rng, (2, 4, 5, 3), src, stats, channel_last=True, grads=grads)
    res = call_op(OPS["BatchNormTrainingBackward"], s)
    try:
        assert res.status1 == status, res.message
        if status:
            assert "BatchNormTrainingBackward" in res.message
        else:
            exp = db.ref_tb(s)
            for k, e in exp.items():
                assert_close(res.outputs[k], e, s.tensors[k].dtype, name=k, scale=8)
    finally:
        release(res)


def test_onednn_gamma_ignored_without_grads():
    rng = np.random.default_rng(8)
    s = db.make_tb(rng, (2, 3, 4, 5), F32, grads=False)
    a = outputs("BatchNormTrainingBackward", s)
    s.tensors["gamma"].values = s.tensors["gamma"].values * 3 + 1
    b = outputs("BatchNormTrainingBackward", s)
    assert a["diff_src"].tobytes() == b["diff_src"].tobytes()
    s.tensors["gamma"] = None
    c = outputs("BatchNormTrainingBackward", s)
    assert a["diff_src"].tobytes() == c["diff_src"].tobytes()


# ------------------------------------------------------------------------------------------------
# fused ops: reserve size and round trip
# ------------------------------------------------------------------------------------------------
RT_CASES = [((2, 3, 4, 5), "contiguous", False), ((2, 4, 5, 3), "contiguous", True),
            ((2, 3, 4, 5), "channels_last", False), ((2, 3, 7), "strided", False),
            ((2, 3, 4, 5), "transposed", False), ((3, 40, 7), "channels_last", False),
            ((5, 37), "contiguous", False), ((4, 1, 70), "contiguous", False)]


@pytest.mark.parametrize("shape,layout,cl", RT_CASES,
                         ids=["NCHW", "NHWC", "CL-memory", "strided", "transposed", "C40-CL", "S1", "C1"])
@pytest.mark.parametrize("act", ["relu", "clipped_relu"])
@pytest.mark.parametrize("rdtype", [U8, I32], ids=["u8", "i32"])
def test_fused_reserve_round_trip(shape, layout, cl, act, rdtype):
    rng = np.random.default_rng(9)
    s = db.make_ba(rng, shape, F32, channel_last=cl, layout=layout, act=act, ceiling=1.0, rdtype=rdtype)
    ax = s.channel_axis
    # the query gives exactly what the op needs for this input view
    mask_cl = db.spec_channels_last(s.tensors["input"], ax)
    N, C = shape[0], shape[ax]
    S = int(np.prod([d for i, d in enumerate(shape) if i not in (0, ax)]))
    need = bp.reserve_mask_bytes(N, C, S, mask_cl)
    t = A.aclCreateTensor(shape, F32, None, 0, s.tensors["input"].format, shape, None)
    size, ret = A.aclnnBatchNormActivationGetReserveSpaceSize(t, act)
    assert ret == 0 and (size == need if layout in ("contiguous",) else size > 0)
    A.aclDestroyTensor(t)
    fwd = run("BatchNormActivation", s)
    try:
        raw = fwd.outputs["reserve"].view(np.uint8).copy()
    finally:
        release(fwd)
    assert not raw[need:].any(), "the forward wrote past the mask"
    mask = db.unpack_mask(raw, shape, ax, mask_cl)
    v = db._vals(s)
    r = R.batch_norm_fused_forward(v["input"], v["weight"], v["bias"], v["z"], act, 1.0, True, axis=ax)
    pre = R.batch_norm(v["input"], v["weight"], v["bias"], axis=ax)["output"] + v["z"]   # the activation's input
    sure = (np.abs(pre) > 1e-4) & (np.abs(pre - 1.0) > 1e-4)                             # away from its kinks
    assert sure.mean() > 0.99
    assert np.array_equal(mask[sure], r["mask"][sure]), "reserve bits differ from the activation's gradient mask"
    # backward with that reserve, on the same input view
    dy = rng.standard_normal(shape)
    bs = Sample({"grad_out": TensorSpec(dy, F32, s.tensors["input"].format), "input": s.tensors["input"],
                 "weight": s.tensors["weight"], "bias": s.tensors["bias"],
                 "save_mean": TensorSpec(f64(r["save_mean"]), F32), "save_invstd": TensorSpec(f64(r["save_invstd"]), F32),
                 "reserve": TensorSpec(raw if rdtype == U8 else raw.view(np.int32), rdtype),
                 "grad_input": TensorSpec(np.zeros(shape), F32, s.tensors["input"].format),
                 "grad_z": TensorSpec(np.zeros(shape), F32, s.tensors["input"].format),
                 "grad_weight": TensorSpec(np.zeros(C), F32), "grad_bias": TensorSpec(np.zeros(C), F32)},
                {"activation_mode": act, "ceiling": 1.0, "eps": 1e-5}, channel_axis=ax)
    bwd = outputs("BatchNormActivationBackward", bs)
    bv = db._vals(bs)
    dx, dz, dw, dbias = R.batch_norm_fused_backward(bv["grad_out"], bv["input"], bv["weight"], bv["save_mean"],
                                                    bv["save_invstd"], mask, with_z=True, axis=ax)
    for k, e in (("grad_input", dx), ("grad_z", dz), ("grad_weight", dw), ("grad_bias", dbias)):
        assert_close(bwd[k], e, F32, name=k, scale=20)


def test_reserve_query_rules():
    t = A.aclCreateTensor((2, 3, 4, 5), F32, None, 0, A.ACL_FORMAT_NCHW, (2, 3, 4, 5), None)
    tl = A.aclCreateTensor((2, 4, 5, 3), F32, None, 0, A.ACL_FORMAT_NHWC, (2, 4, 5, 3), None)
    try:
        assert A.aclnnBatchNormActivationGetReserveSpaceSize(t, "identity") == (0, 0)
        assert A.aclnnBatchNormActivationGetReserveSpaceSize(t, "relu") == (4 * 2 * 3 * 1, 0)
        assert A.aclnnBatchNormActivationGetReserveSpaceSize(tl, "clipped_relu") == (4 * 2 * 20 * 1, 0)
        assert A.aclnnBatchNormActivationGetReserveSpaceSize(None, "relu")[1] == A.ACLNN_ERR_PARAM_NULLPTR
        assert A.aclnnBatchNormActivationGetReserveSpaceSize(t, "tanh")[1] == A.ACLNN_ERR_PARAM_INVALID
        assert "activation_mode" in A.get_recent_err_msg()
        bad = A.aclCreateTensor((6,), F32, None, 0, A.ACL_FORMAT_ND, (6,), None)
        assert A.aclnnBatchNormActivationGetReserveSpaceSize(bad, "relu")[1] == A.ACLNN_ERR_PARAM_INVALID
        A.aclDestroyTensor(bad)
    finally:
        A.aclDestroyTensor(t)
        A.aclDestroyTensor(tl)


def test_in_place_batch_norm():
    """output may alias input exactly (the kernels read each element before writing it)."""
    rng = np.random.default_rng(10)
    s = db.make_bn(rng, (2, 3, 4, 5), F32)
    expected = db.ref_bn(s)

    def alias(d):
        d["output"].tensor.addr = d["input"].tensor.addr
    s.mutate = alias
    res = run("BatchNorm", s)
    try:
        assert_close(res.outputs["input"], expected["output"], F32, name="in-place output", scale=8)
    finally:
        release(res)


# ------------------------------------------------------------------------------------------------
# SyncBatchNorm (samples/08_sync_batch_norm.py) equals whole-batch BatchNorm
# ------------------------------------------------------------------------------------------------
def _sample08():
    from aclnn_py.samples_runner import load_sample
    return load_sample(ROOT / "samples" / "08_sync_batch_norm.py")


@pytest.mark.parametrize("splits", [(5, 3), (8, 0), (0, 8), (3, 3, 2), (1, 7)], ids=str)
def test_sync_batch_norm_equals_whole_batch(splits, stream):
    m = _sample08()
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((8, 3, 4, 5)) * 2 + 0.5).astype(np.float32)
    dy = rng.standard_normal((8, 3, 4, 5)).astype(np.float32)
    w, b = rng.uniform(0.5, 1.5, 3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    rm, rv = np.zeros(3, np.float32), np.ones(3, np.float32)
    edges = np.cumsum((0,) + splits)
    xs = [x[a:e] for a, e in zip(edges[:-1], edges[1:])]
    dys = [dy[a:e] for a, e in zip(edges[:-1], edges[1:])]
    sync = m.sync_batch_norm(xs, dys, w, b, rm, rv, 0.1, 1e-5, stream)
    whole = m.whole_batch(x, dy, w, b, rm, rv, 0.1, 1e-5, stream)
    ref = m.reference(x, dy, w, b, rm, rv, 0.1, 1e-5)
    for k in ref:
        assert_close(sync[k], whole[k], F32, name=f"sync vs whole: {k}", scale=20)
        assert_close(sync[k], ref[k], F32, name=f"sync vs float64: {k}", scale=20)
