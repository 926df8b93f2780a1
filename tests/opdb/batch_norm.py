"""OpInfos of the BatchNorm family (aclnn.md §4, cuDNN BN-Ex, oneDNN BatchNormTrainingBackward).

References: ``tests/references/batch_norm.py`` (float64, on the values rounded to each dtype).
Every op gets the standard sample set (every dtype and per-channel dtype, ranks 2–8, NCHW, NHWC,
channels-last memory behind NCHW views, strided / transposed / offset views, strided outputs,
NDHWC, size-1 dims, C = 1, S = 1, odd S, planes cut into segments, empty N and empty spatial
dims) plus its own variants, and an error table with the exact statuses.

oneDNN's op names its data tensor ``src``: its OpInfo says so (``data="src"``).

The fused backward's ``reserve`` is packed in the layout the op uses for ``input`` (NCX or NXC,
``_reserve_channels_last``). The generic "non-contiguous equals contiguous" test changes that
layout under the same reserve bytes, so the first contiguous float sample of that op carries an
all-pass mask (every word 0xFFFFFFFF, valid in either layout); the mask round trip across layouts
is in test_batch_norm.py.
"""
from __future__ import annotations

import math

import numpy as np

import aclnn_py as A
from aclnn_py.ops import _bn_plan as bp
from aclnn_py.ops.batch_norm import _reserve_channels_last
from harness import Sample, TensorSpec, _layout_strides
from opdb import OpInfo
from references import batch_norm as R

F32, F16, BF16, I32, U8, F64 = A.ACL_FLOAT, A.ACL_FLOAT16, A.ACL_BF16, A.ACL_INT32, A.ACL_UINT8, A.ACL_DOUBLE
NCHW, NHWC, ND, NCL, NC, NCDHW, NDHWC = (A.ACL_FORMAT_NCHW, A.ACL_FORMAT_NHWC, A.ACL_FORMAT_ND, A.ACL_FORMAT_NCL,
                                        A.ACL_FORMAT_NC, A.ACL_FORMAT_NCDHW, A.ACL_FORMAT_NDHWC)
INVALID, NULLPTR = A.ACLNN_ERR_PARAM_INVALID, A.ACLNN_ERR_PARAM_NULLPTR
FORMAT_FOR_RANK = {2: NC, 3: NCL, 4: NCHW, 5: NCDHW}
DT_NAME = {F32: "f32", F16: "f16", BF16: "bf16", F64: "f64"}


def geom(shape, channel_last):
    rank = len(shape)
    ax = rank - 1 if channel_last else 1
    fmt = (NHWC if rank == 4 else NDHWC if rank == 5 else ND) if channel_last else FORMAT_FOR_RANK.get(rank, ND)
    return ax, shape[ax], fmt


def bool_array(*v):
    return A.aclCreateBoolArray(list(v))


def _vals(s: Sample) -> dict:
    return {k: (v.rounded() if v is not None else None) for k, v in s.tensors.items()}


class Maker:
    """Builds the tensors of one sample: data tensors share shape/format/layout, per-channel ones are 1-D."""

    def __init__(self, rng, shape, dtype, pdtype, channel_last, layout, out_layout, playout, fmt=None):
        self.rng, self.shape, self.dtype = rng, tuple(shape), dtype
        self.pdtype = pdtype or F32
        self.ax, self.C, f = geom(shape, channel_last)
        self.fmt = f if fmt is None else fmt
        self.layout, self.out_layout, self.playout = layout, out_layout or layout, playout
        self.n = max(math.prod(shape) // max(self.C, 1), 1)

    def data(self, values=None, *, out=False, scale=1.0, shift=0.0):
        v = np.zeros(self.shape) if values is None and out else (
            self.rng.standard_normal(self.shape) * scale + shift if values is None else values)
        return TensorSpec(v, self.dtype, self.fmt, self.out_layout if out else self.layout)

    def ch(self, values=None, *, lo=None, hi=None, dtype=None, out=False):
        if values is None:
            values = np.zeros(self.C) if out else (self.rng.uniform(lo, hi, self.C) if lo is not None
                                                  else self.rng.standard_normal(self.C))
        return TensorSpec(np.asarray(values, np.float64), dtype or self.pdtype, ND, self.playout)


def standard(make, rng, pairs=lambda dt: sorted({F32, dt}), *, big=False, dtypes=(F32, F16, BF16)):
    """The sample set every op gets; ``make(rng, shape, dtype, pdtype, **kw)`` builds one sample."""
    out = []
    p16 = F16 if F16 in pairs(F16) else F32
    for dt in dtypes:
        for pdt in pairs(dt):
            tag = f"{DT_NAME[dt]}/{DT_NAME[pdt]}"
            out.append(make(rng, (2, 3, 4, 5), dt, pdt, note=f"NCHW {tag}"))
            out.append(make(rng, (2, 4, 5, 3), dt, pdt, channel_last=True, note=f"NHWC {tag}"))
            out.append(make(rng, (3, 5, 4, 4), dt, pdt, layout="channels_last",
                            note=f"NCHW view, channels-last memory {tag}"))
    for r in range(2, 9):
        shape = (2, 3) + (2,) * (r - 2) if r > 2 else (5, 7)
        out.append(make(rng, shape, F32, F32, note=f"rank {r}"))
    out += [
        make(rng, (2, 3, 5), F32, F32, layout="strided", note="strided views"),
        make(rng, (2, 3, 4, 5), F16, F32, layout="transposed", note="transposed views"),
        make(rng, (2, 3, 4, 5), F32, F32, layout="offset", note="views at an element offset"),
        make(rng, (2, 3, 4, 5), F32, F32, out_layout="strided", note="contiguous in, strided out"),
        make(rng, (2, 3, 4, 5), F32, F32, out_layout="channels_last", note="NCX in, NXC out"),
        make(rng, (2, 3, 4, 5), F32, F32, playout="strided", note="strided per-channel tensors"),
        make(rng, (2, 3, 4, 4, 3), BF16, F32, channel_last=True, note="NDHWC"),
        make(rng, (2, 3, 4, 4, 3), F32, F32, channel_last=True, fmt=ND, note="ND, channels last by data_format")
        if make is make_tb_nxc else make(rng, (2, 3, 2, 2, 3), F32, F32, note="NCDHW"),
        make(rng, (1, 1, 1, 1), F32, F32, note="all size 1"),
        make(rng, (7, 1, 9), F32, F32, note="C = 1"),
        make(rng, (4, 37), F16, p16, note="NC, S = 1"),
        make(rng, (3, 70, 33), F32, F32, note="odd S"),
        make(rng, (1, 2, 2, 2), F32, F32, note="N = 1"),
        make(rng, (0, 3, 4, 5), F32, F32, note="empty N"),
        make(rng, (2, 3, 0, 5), F16, p16, note="empty spatial"),
    ]
    if big:
        out.append(make(rng, (2, 3, 4100), F32, F32, note="planes cut into segments (S > 4096)"))
        out.append(make(rng, (40, 70), F32, F32, channel_last=True, note="NC, many rows"))
    return out


def doubles(make, rng, **kw):
    """DOUBLE data with DOUBLE per-channel tensors (the ops that take DOUBLE compute it in f64: the harness's
    DOUBLE tolerance, 1e-12 scaled by the op's factor): both layouts, vector and scalar paths (odd S,
    C % 4 != 0), planes cut into segments, S = 1, shifted data (|mean| >> std)."""
    return [
        make(rng, (2, 3, 4, 5), F64, F64, note="NCHW f64/f64", **kw),
        make(rng, (2, 4, 5, 3), F64, F64, channel_last=True, note="NHWC f64/f64", **kw),
        make(rng, (3, 5, 4, 4), F64, F64, layout="channels_last", note="NCHW view, channels-last memory f64", **kw),
        make(rng, (3, 6, 33), F64, F64, note="odd S f64 (scalar NCX path)", **kw),
        make(rng, (3, 37, 5), F64, F64, layout="channels_last", note="C = 37 NXC f64 (scalar NXC path)", **kw),
        make(rng, (2, 3, 4100), F64, F64, note="planes cut into segments f64", **kw),
        make(rng, (6, 37), F64, F64, note="NC, S = 1 f64", **kw),
        make(rng, (2, 3, 4, 5), F64, F64, layout="strided", note="strided views f64", **kw),
        make(rng, (0, 3, 4, 5), F64, F64, note="empty N f64", **kw),
    ]


def common_errors(make, rng, out_name, in_names, *, channel_last=False):
    """Errors every op with data tensors has: dtypes, formats, ranks, C = 0, shapes, memory."""
    out = []

    def base(note, **kw):
        return make(rng, (2, 3, 4, 5) if not channel_last else (2, 4, 5, 3), F32, F32, note=note,
                    channel_last=channel_last, **kw)

    data_names = (*in_names, out_name)
    for bad, tag in ((I32, "INT32"), (A.ACL_DOUBLE, "DOUBLE")):
        s = base(f"data {tag}")
        for k in data_names:
            s.tensors[k].dtype = bad
        out.append((s, INVALID))
    s = base(f"{out_name} dtype differs")
    s.tensors[out_name].dtype = F16
    out.append((s, INVALID))
    if len(in_names) > 1:
        s = base(f"{in_names[0]} dtype differs")
        s.tensors[in_names[0]].dtype = BF16
        out.append((s, INVALID))
    s = base("private format")
    s.tensors[in_names[-1]].format = A.ACL_FORMAT_NC1HWC0
    out.append((s, INVALID))
    s = base(f"private format on {out_name}")
    s.tensors[out_name].format = A.ACL_FORMAT_FRACTAL_NZ
    out.append((s, INVALID))
    s = base("NCL format on 4-D")
    s.tensors[in_names[-1]].format = NCL
    out.append((s, INVALID))
    s = base("HWCN format")
    s.tensors[in_names[-1]].format = A.ACL_FORMAT_HWCN
    out.append((s, INVALID))
    s = base(f"{out_name} shape")
    s.tensors[out_name].values = np.zeros((2, 3, 4, 6) if not channel_last else (2, 4, 6, 3))
    out.append((s, INVALID))
    if len(in_names) > 1:
        s = base(f"{in_names[0]} shape")
        s.tensors[in_names[0]].values = np.ones((2, 3, 5, 4) if not channel_last else (2, 5, 4, 3))
        out.append((s, INVALID))
    out.append((make(rng, (2, 0, 4) if not channel_last else (2, 4, 0), F32, F32, channel_last=channel_last,
                     note="C = 0"), INVALID))
    s = make(rng, (2, 3), F32, F32, channel_last=channel_last, note="rank 1")
    for k in data_names:
        s.tensors[k].values = np.ones(6)
        s.tensors[k].format = ND
    out.append((s, INVALID))
    out.append((make(rng, (1, 2, 1, 1, 1, 1, 1, 1, 2), F32, F32, channel_last=channel_last, note="rank 9"),
                INVALID))

    def shrink_storage(d):
        d[in_names[-1]].tensor.storage_dims = (d[in_names[-1]].storage_numel - 1,)
    s = base("view beyond storage_dims")
    s.mutate = shrink_storage
    out.append((s, INVALID))

    def shift_addr(d):
        d[in_names[0]].tensor.addr += 2 * 256 + 4
    s = base("view beyond its allocation")
    s.mutate = shift_addr
    out.append((s, INVALID))

    def null_addr(d):
        d[out_name].tensor.addr = None
    s = base("null data address")
    s.mutate = null_addr
    out.append((s, INVALID))

    def overlap(d):
        d[out_name].tensor.addr = d[in_names[-1]].tensor.addr + 4
        d[out_name].tensor.storage_dims = d[in_names[-1]].tensor.storage_dims
    s = base(f"{out_name} overlaps {in_names[-1]}")
    s.mutate = overlap
    out.append((s, INVALID))
    return out


def nulls(make, rng, names, status=NULLPTR, **kw):
    out = []
    for n in names:
        s = make(rng, (2, 3, 4, 5), F32, F32, note=f"{n} null", **kw)
        s.tensors[n] = None
        out.append((s, status))
    return out


def with_(make, rng, note, status, fn, shape=(2, 3, 4, 5), dtype=F32, pdtype=F32, **kw):
    s = make(rng, shape, dtype, pdtype, note=note, **kw)
    fn(s)
    return s, status


def set_(name, **attrs):
    def f(s):
        for k, v in attrs.items():
            setattr(s.tensors[name], k, v)
    return f


def attr(**kv):
    def f(s):
        s.attrs.update(kv)
    return f


def channel_errors(make, rng, names, **kw):
    """Per-channel tensors: wrong length, 2-D, DOUBLE, f16 with f32 data, mixed dtypes."""
    out = []
    for n in names:
        out.append(with_(make, rng, f"{n} length C-1", INVALID,
                         lambda s, n=n: setattr(s.tensors[n], "values", s.tensors[n].values[:-1]), **kw))
    n0 = names[0]
    out.append(with_(make, rng, f"{n0} 2-D", INVALID,
                     lambda s: setattr(s.tensors[n0], "values", s.tensors[n0].values.reshape(1, -1)), **kw))
    out.append(with_(make, rng, f"{n0} DOUBLE", INVALID, set_(n0, dtype=A.ACL_DOUBLE), **kw))
    out.append(with_(make, rng, f"{n0} f16 with f32 data", INVALID, set_(n0, dtype=F16), **kw))
    out.append(with_(make, rng, f"{names[-1]} f32 while others f16 (one P)", INVALID, set_(names[-1], dtype=F32),
                     dtype=F16, pdtype=F16, **kw))
    return out


def double_errors(make, rng, names, **kw):
    """DOUBLE data takes DOUBLE per-channel tensors only (FLOAT ones are 161002); DOUBLE per-channel tensors
    with FLOAT data are 161002 too (channel_errors)."""
    out = []
    for n in names:
        out.append(with_(make, rng, f"f64 data, {n} FLOAT", INVALID, set_(n, dtype=F32), dtype=F64, pdtype=F64, **kw))
    out.append(with_(make, rng, "f64 data, all per-channel FLOAT", INVALID, lambda s: None, dtype=F64, pdtype=F32,
                     **kw))
    return out


# aclnnBatchNorm --------------------------------------------------------------------------------

def make_bn(rng, shape, dtype=F32, pdtype=F32, *, channel_last=False, layout="contiguous", out_layout=None,
            playout="contiguous", fmt=None, training=True, affine=True, running=True, save=True, save_len=None,
            momentum=0.1, eps=1e-5, loc=0.5, scale=2.0, note=""):
    m = Maker(rng, shape, dtype, pdtype, channel_last, layout, out_layout, playout, fmt)
    C = m.C
    save_spec = (lambda: m.ch(np.zeros(C if save_len is None else save_len), out=True)) if save else (lambda: None)
    return Sample({
        "input": m.data(scale=scale, shift=loc),
        "weight": m.ch(lo=0.5, hi=1.5) if affine else None,
        "bias": m.ch() if affine else None,
        "running_mean": m.ch() if running else None,
        "running_var": m.ch(lo=0.5, hi=2.0) if running else None,
        "output": m.data(out=True),
        "save_mean": save_spec(),
        "save_invstd": save_spec(),
    }, {"training": training, "momentum": momentum, "eps": eps}, note=note, channel_axis=m.ax)


def samples_bn(rng):
    out = standard(make_bn, rng, big=True)
    out += [
        make_bn(rng, (2, 3, 4, 5), F32, note="inference", training=False),
        make_bn(rng, (2, 4, 5, 3), BF16, BF16, channel_last=True, training=False, note="inference NHWC bf16"),
        make_bn(rng, (2, 3, 4, 5), F16, F32, training=False, save=False, note="inference, save_* null"),
        make_bn(rng, (2, 3, 4, 5), F32, training=False, save_len=0, note="inference, save_* of length 0"),
        make_bn(rng, (0, 3, 4), F32, training=False, note="inference, empty"),
        make_bn(rng, (2, 3, 4, 5), F32, affine=False, note="no weight, bias"),
        make_bn(rng, (2, 3, 4, 5), F32, running=False, note="no running stats"),
        make_bn(rng, (2, 3, 4, 5), F32, momentum=1.0, eps=0.0, note="momentum 1, eps 0"),
        make_bn(rng, (2, 3, 4, 5), F16, F16, playout="strided", note="strided running stats, f16"),
    ]
    out += doubles(make_bn, rng)
    out += [
        make_bn(rng, (2, 3, 4, 5), F64, F64, training=False, note="inference f64"),
        make_bn(rng, (2, 4, 5, 3), F64, F64, channel_last=True, training=False, note="inference NHWC f64"),
        make_bn(rng, (4, 6, 8), F64, F64, loc=100.0, scale=0.1, note="mean 100, std 0.1 f64 (shifted data)"),
        make_bn(rng, (2, 3, 4, 5), F64, F64, momentum=1.0 / 3.0, eps=1e-7, note="f64 momentum 1/3 (not an f32 value)"),
    ]
    return out


def ref_bn(s: Sample) -> dict:
    t = _vals(s)
    a = s.attrs
    if t["input"].size == 0:
        return {"save_mean": np.zeros(t["save_mean"].shape), "save_invstd": np.full(t["save_invstd"].shape, np.nan)} \
            if a["training"] else {}
    r = R.batch_norm(t["input"], t["weight"], t["bias"], t["running_mean"], t["running_var"], a["training"],
                     a["momentum"], a["eps"], axis=s.channel_axis)
    out = {"output": r["output"]}
    if a["training"]:
        out.update(save_mean=r["save_mean"], save_invstd=r["save_invstd"])
        if t["running_mean"] is not None:
            out.update(running_mean=r["running_mean"], running_var=r["running_var"])
    return out


def errors_bn(rng):
    out = nulls(make_bn, rng, ("input", "output", "save_mean", "save_invstd"))
    out += nulls(make_bn, rng, ("running_mean", "running_var"), training=False)
    out.append(with_(make_bn, rng, "training missing", NULLPTR, attr(training=None)))
    out.append(with_(make_bn, rng, "eps missing", NULLPTR, attr(eps=None)))
    out.append(with_(make_bn, rng, "momentum a string", INVALID, attr(momentum="0.1")))
    out.append(with_(make_bn, rng, "training an int", INVALID, attr(training=1)))
    out += common_errors(make_bn, rng, "output", ("input",))
    out += channel_errors(make_bn, rng, ("weight", "bias", "running_mean", "running_var", "save_mean", "save_invstd"))
    out.append(with_(make_bn, rng, "save_mean length 0 in training", INVALID,
                     lambda s: setattr(s.tensors["save_mean"], "values", np.zeros(0))))
    out.append(with_(make_bn, rng, "save_invstd 2-D", INVALID,
                     lambda s: setattr(s.tensors["save_invstd"], "values", np.zeros((1, 3)))))
    out += double_errors(make_bn, rng, ("weight", "bias", "running_mean", "running_var", "save_mean", "save_invstd"))

    def alias_running(d):
        d["running_var"].tensor.addr = d["running_mean"].tensor.addr
    s = make_bn(rng, (2, 3, 4, 5), note="running_var aliases running_mean")
    s.mutate = alias_running
    out.append((s, INVALID))
    return out


# aclnnBatchNormBackward ------------------------------------------------------------------------

def make_bnb(rng, shape, dtype=F32, pdtype=F32, *, channel_last=False, layout="contiguous", out_layout=None,
             playout="contiguous", fmt=None, training=True, weight=True, running=True, save=True, save_len=None,
             mask=(True, True, True), null_masked=False, eps=1e-5, note=""):
    m = Maker(rng, shape, dtype, pdtype, channel_last, layout, out_layout, playout, fmt)
    x = m.data(scale=2.0, shift=0.5)
    xv = np.moveaxis(x.values, m.ax, 1).reshape(shape[0], m.C, -1) if x.values.size else None
    mean = xv.mean(axis=(0, 2)) + 0.05 * rng.standard_normal(m.C) if xv is not None else rng.standard_normal(m.C)
    invstd = 1 / np.sqrt(xv.var(axis=(0, 2)) + eps) if xv is not None and xv[0].size > 1 and m.n > 1 \
        else rng.uniform(0.5, 2.0, m.C)
    C = m.C
    sl = C if save_len is None else save_len
    outs = {"grad_input": m.data(out=True), "grad_weight": m.ch(out=True), "grad_bias": m.ch(out=True)}
    if null_masked:
        for k, flag in zip(outs, mask):
            if not flag:
                outs[k] = None
    return Sample({
        "grad_out": m.data(),
        "input": x,
        "weight": m.ch(lo=-1.5, hi=1.5) if weight else None,
        "running_mean": m.ch() if running else None,
        "running_var": m.ch(lo=0.5, hi=2.0) if running else None,
        "save_mean": m.ch(mean[:sl] if sl else np.zeros(0)) if save else None,
        "save_invstd": m.ch(np.asarray(invstd)[:sl] if sl else np.zeros(0)) if save else None,
        **outs,
    }, {"training": training, "eps": eps, "output_mask": bool_array(*mask)}, note=note, channel_axis=m.ax)


def samples_bnb(rng):
    out = standard(make_bnb, rng, big=True)
    out += [
        make_bnb(rng, (2, 3, 4, 5), F32, training=False, note="inference"),
        make_bnb(rng, (2, 4, 5, 3), F16, F16, channel_last=True, training=False, note="inference NHWC f16"),
        make_bnb(rng, (2, 3, 4, 5), F32, training=False, save=False, note="inference, save_* null"),
        make_bnb(rng, (2, 3, 4, 5), BF16, F32, training=False, save_len=0, note="inference, save_* length 0"),
        make_bnb(rng, (2, 3, 4, 5), F32, training=False, mask=(True, False, False), null_masked=True,
                 note="inference, grad_input only"),
        make_bnb(rng, (2, 3, 4, 5), F32, training=False, mask=(False, True, True), null_masked=True,
                 note="inference, grads only"),
        make_bnb(rng, (2, 3, 4, 5), F32, weight=False, note="no weight"),
        make_bnb(rng, (2, 3, 4, 5), F32, running=False, note="training without running stats"),
        make_bnb(rng, (2, 3, 4, 5), F32, mask=(True, False, False), null_masked=True, note="mask 100, nulls"),
        make_bnb(rng, (2, 3, 4, 5), F32, mask=(False, True, False), note="mask 010, outputs given, not written"),
        make_bnb(rng, (2, 4, 5, 3), F32, channel_last=True, mask=(False, False, True), null_masked=True,
                 note="mask 001 NHWC"),
        make_bnb(rng, (2, 3, 4, 5), F32, mask=(False, False, False), null_masked=True, note="mask 000"),
    ]
    out += doubles(make_bnb, rng)
    out += [
        make_bnb(rng, (2, 3, 4, 5), F64, F64, training=False, note="inference f64"),
        make_bnb(rng, (2, 4, 5, 3), F64, F64, channel_last=True, training=False, mask=(False, True, True),
                 null_masked=True, note="inference NHWC f64, grads only"),
    ]
    return out


def ref_bnb(s: Sample) -> dict:
    t = _vals(s)
    a = s.attrs
    mask = tuple(a["output_mask"])
    if t["input"].size == 0:
        return {}
    gi, gw, gb = R.batch_norm_backward(t["grad_out"], t["input"], t["weight"], t["running_mean"], t["running_var"],
                                       t["save_mean"], t["save_invstd"], a["training"], a["eps"], mask,
                                       axis=s.channel_axis)
    out = {}
    for name, v in (("grad_input", gi), ("grad_weight", gw), ("grad_bias", gb)):
        if v is not None and t[name] is not None:
            out[name] = v
    for name, flag in zip(("grad_input", "grad_weight", "grad_bias"), mask):
        if not flag and t[name] is not None:
            out[name] = t[name]              # given but masked off: untouched
    return out


def errors_bnb(rng):
    out = nulls(make_bnb, rng, ("grad_out", "input", "grad_input", "grad_weight", "grad_bias", "save_mean",
                                "save_invstd"))
    out += nulls(make_bnb, rng, ("running_mean", "running_var"), training=False)
    out.append(with_(make_bnb, rng, "output_mask missing", NULLPTR, attr(output_mask=None)))
    out.append(with_(make_bnb, rng, "output_mask of 2", INVALID, attr(output_mask=bool_array(True, True))))
    out.append(with_(make_bnb, rng, "output_mask a tuple", INVALID, attr(output_mask=(True, True, True))))
    out += common_errors(make_bnb, rng, "grad_input", ("grad_out", "input"))
    out += channel_errors(make_bnb, rng, ("weight", "running_mean", "running_var", "save_mean", "save_invstd",
                                          "grad_weight", "grad_bias"))
    out.append(with_(make_bnb, rng, "save_mean length 0 in training", INVALID,
                     lambda s: setattr(s.tensors["save_mean"], "values", np.zeros(0))))
    out += double_errors(make_bnb, rng, ("weight", "save_mean", "grad_weight"))
    return out


# aclnnBatchNormStats ---------------------------------------------------------------------------

def make_stats(rng, shape, dtype=F32, pdtype=F32, *, channel_last=False, layout="contiguous", out_layout=None,
               playout="contiguous", fmt=None, eps=1e-5, loc=0.5, scale=2.0, note=""):
    m = Maker(rng, shape, dtype, F64 if dtype == F64 else F32, channel_last, layout, out_layout, playout, fmt)
    return Sample({"input": m.data(scale=scale, shift=loc), "mean": m.ch(out=True), "invstd": m.ch(out=True)},
                  {"eps": eps}, note=note, channel_axis=m.ax)


def samples_stats(rng):
    out = standard(make_stats, rng, pairs=lambda dt: [F32], big=True)
    out += [make_stats(rng, (4, 6, 8), F32, loc=1e4, scale=1e-2, note="mean 1e4, std 1e-2 (Welford)"),
            make_stats(rng, (2, 3, 4), F32, eps=0.0, scale=0.0, note="constant input, eps 0: invstd 0")]
    out += doubles(make_stats, rng)
    out += [make_stats(rng, (4, 6, 8), F64, loc=1e6, scale=1e-3, note="mean 1e6, std 1e-3 f64 (Welford)"),
            make_stats(rng, (2, 3, 4), F64, eps=0.0, scale=0.0, note="constant f64 input, eps 0: invstd 0")]
    return out


def ref_stats(s: Sample) -> dict:
    t = _vals(s)
    if t["input"].size == 0:
        return {"mean": np.zeros(t["mean"].shape), "invstd": np.full(t["invstd"].shape, np.nan)}
    mean, invstd = R.batch_norm_stats(t["input"], s.attrs["eps"], axis=s.channel_axis)
    return {"mean": mean, "invstd": invstd}


def errors_stats(rng):
    out = nulls(make_stats, rng, ("input", "mean", "invstd"))
    out.append(with_(make_stats, rng, "eps missing", NULLPTR, attr(eps=None)))
    out += common_errors(make_stats, rng, "mean", ("input",))[:1]
    for n in ("mean", "invstd"):
        out.append(with_(make_stats, rng, f"{n} f16", INVALID, set_(n, dtype=F16), dtype=F16))
        out.append(with_(make_stats, rng, f"{n} length C+1", INVALID,
                         lambda s, n=n: setattr(s.tensors[n], "values", np.zeros(4))))
        out.append(with_(make_stats, rng, f"{n} 2-D", INVALID,
                         lambda s, n=n: setattr(s.tensors[n], "values", np.zeros((1, 3)))))
    out.append(with_(make_stats, rng, "input private format", INVALID, set_("input", format=A.ACL_FORMAT_NC1HWC0)))
    for n in ("mean", "invstd"):
        out.append(with_(make_stats, rng, f"f64 input, {n} FLOAT", INVALID, set_(n, dtype=F32), dtype=F64))
        out.append(with_(make_stats, rng, f"f32 input, {n} DOUBLE", INVALID, set_(n, dtype=F64)))
    out.append((make_stats(rng, (2, 0, 4), note="C = 0"), INVALID))
    out.append((make_stats(rng, (1, 2, 1, 1, 1, 1, 1, 1, 2), note="rank 9"), INVALID))
    s = make_stats(rng, (2, 3), note="rank 1")
    s.tensors["input"].values = np.ones(6)
    out.append((s, INVALID))
    return out


# aclnnBatchNormGatherStatsWithCounts -----------------------------------------------------------

def make_gs(rng, shape, dtype=F32, pdtype=F32, *, channel_last=False, layout="contiguous", out_layout=None,
            playout="contiguous", fmt=None, counts=(30.0, 0.0, 50.0, 20.0), cdtype=F32, running=True,
            momentum=0.1, eps=1e-5, note=""):
    m = Maker(rng, shape, dtype, pdtype, channel_last, layout, out_layout, playout, fmt)
    world = len(counts)
    C = m.C
    st = lambda v: TensorSpec(np.asarray(v, np.float64), m.pdtype, ND, layout)
    return Sample({
        "input": m.data(),
        "mean": st(rng.standard_normal((world, C)) * 0.5 + 0.3),
        "invstd": st(rng.uniform(0.5, 2.0, (world, C))),
        "running_mean": m.ch() if running else None,
        "running_var": m.ch(lo=0.5, hi=2.0) if running else None,
        "counts": TensorSpec(np.asarray(counts, np.float64), cdtype),
        "mean_all": m.ch(out=True),
        "invstd_all": m.ch(out=True),
    }, {"momentum": momentum, "eps": eps}, note=note, channel_axis=m.ax)


def samples_gs(rng):
    out = standard(make_gs, rng)
    out += [
        make_gs(rng, (2, 5, 3), F32, counts=(7.0,), note="one rank"),
        make_gs(rng, (2, 5, 3), F16, F16, counts=(4.0, 6.0), cdtype=F16, note="f16 counts"),
        make_gs(rng, (2, 5, 3), BF16, F32, counts=(4.0, 6.0, 2.0), cdtype=BF16, note="bf16 counts"),
        make_gs(rng, (2, 5, 3), F32, counts=(0.0, 0.0), note="every count 0: mean 0, invstd NaN, running kept"),
        make_gs(rng, (2, 5, 3), F32, counts=(), note="world 0"),
        make_gs(rng, (2, 5, 3), F32, counts=(1.0, 1.0), note="counts of 1"),
        make_gs(rng, (2, 5, 3), F32, running=False, note="no running stats"),
        make_gs(rng, (0, 5, 3), F32, counts=(3.0, 5.0), note="this rank has no samples (empty input)"),
    ]
    return out


def ref_gs(s: Sample) -> dict:
    t = _vals(s)
    a = s.attrs
    C = t["mean_all"].shape[0]
    if t["counts"].size == 0:
        ma, ia, rm, rv = np.zeros(C), np.full(C, np.nan), t["running_mean"], t["running_var"]
    else:
        with np.errstate(all="ignore"):
            ma, ia, rm, rv = R.batch_norm_gather_stats_with_counts(t["mean"], t["invstd"], t["counts"],
                                                                   t["running_mean"], t["running_var"],
                                                                   a["momentum"], a["eps"])
        if not (t["counts"] > 0).any():
            ia = np.full(C, np.nan)
    out = {"mean_all": ma, "invstd_all": ia}
    if rm is not None:
        out.update(running_mean=rm, running_var=rv)
    return out


def errors_gs(rng):
    out = nulls(make_gs, rng, ("input", "mean", "invstd", "counts", "mean_all", "invstd_all"))
    out.append(with_(make_gs, rng, "counts INT32", INVALID, set_("counts", dtype=I32)))
    out.append(with_(make_gs, rng, "counts DOUBLE", INVALID, set_("counts", dtype=A.ACL_DOUBLE)))
    out.append(with_(make_gs, rng, "input INT32", INVALID, set_("input", dtype=I32)))
    out.append(with_(make_gs, rng, "mean f16 with f32 input", INVALID, set_("mean", dtype=F16)))
    out.append(with_(make_gs, rng, "invstd_all f32 while others f16", INVALID, set_("invstd_all", dtype=F32),
                     dtype=F16, pdtype=F16))
    out.append(with_(make_gs, rng, "mean 1-D", INVALID,
                     lambda s: setattr(s.tensors["mean"], "values", s.tensors["mean"].values[0])))
    out.append(with_(make_gs, rng, "mean [world, C+1]", INVALID,
                     lambda s: setattr(s.tensors["mean"], "values", np.ones((4, 4)))))
    out.append(with_(make_gs, rng, "invstd [world-1, C]", INVALID,
                     lambda s: setattr(s.tensors["invstd"], "values", np.ones((3, 3)))))
    out.append(with_(make_gs, rng, "counts length world+1", INVALID,
                     lambda s: setattr(s.tensors["counts"], "values", np.ones(5))))
    out.append(with_(make_gs, rng, "counts 2-D", INVALID,
                     lambda s: setattr(s.tensors["counts"], "values", np.ones((1, 4)))))
    out.append(with_(make_gs, rng, "mean_all length C-1", INVALID,
                     lambda s: setattr(s.tensors["mean_all"], "values", np.ones(2))))
    out.append(with_(make_gs, rng, "running_var length C+1", INVALID,
                     lambda s: setattr(s.tensors["running_var"], "values", np.ones(4))))
    out.append((make_gs(rng, (2, 0, 4), note="C = 0"), INVALID))
    out.append((make_gs(rng, (1, 2, 1, 1, 1, 1, 1, 1, 2), note="input rank 9"), INVALID))

    def overlap(d):
        d["mean_all"].tensor.addr = d["mean"].tensor.addr
    s = make_gs(rng, (2, 3, 4, 5), note="mean_all overlaps mean")
    s.mutate = overlap
    out.append((s, INVALID))
    return out


# aclnnBatchNormElemt ---------------------------------------------------------------------------

def make_elemt(rng, shape, dtype=F32, pdtype=None, *, channel_last=False, layout="contiguous", out_layout=None,
               playout="contiguous", fmt=None, affine=True, eps=1e-5, note=""):
    m = Maker(rng, shape, dtype, pdtype or dtype, channel_last, layout, out_layout, playout, fmt)
    return Sample({
        "input": m.data(scale=2.0, shift=0.5),
        "weight": m.ch(lo=-1.5, hi=1.5) if affine else None,
        "bias": m.ch() if affine else None,
        "mean": m.ch(),
        "invstd": m.ch(lo=0.5, hi=2.0),
        "output": m.data(out=True),
    }, {"eps": eps}, note=note, channel_axis=m.ax)


def samples_elemt(rng):
    out = standard(make_elemt, rng)     # FLOAT per-channel tensors with f16/bf16 data: the extension
    out.append(make_elemt(rng, (2, 3, 4, 5), F32, affine=False, note="no weight, bias"))
    return out


def ref_elemt(s: Sample) -> dict:
    t = _vals(s)
    if t["input"].size == 0:
        return {}
    return {"output": R.batch_norm_elemt(t["input"], t["weight"], t["bias"], t["mean"], t["invstd"],
                                         axis=s.channel_axis)}


def errors_elemt(rng):
    out = nulls(make_elemt, rng, ("input", "mean", "invstd", "output"))
    out += common_errors(make_elemt, rng, "output", ("input",))
    out += channel_errors(make_elemt, rng, ("weight", "bias", "mean", "invstd"))
    for n in ("weight", "bias", "mean", "invstd"):
        out.append(with_(make_elemt, rng, f"{n} length C+1", INVALID,
                         lambda s, n=n: setattr(s.tensors[n], "values", np.ones(4))))
    return out


# aclnnBatchNormReduceBackward ------------------------------------------------------------------

def make_rb(rng, shape, dtype=F32, pdtype=F32, *, channel_last=False, layout="contiguous", out_layout=None,
            playout="contiguous", fmt=None, weight=True, flags=(True, True, True), null_masked=False, note=""):
    m = Maker(rng, shape, dtype, pdtype, channel_last, layout, out_layout, playout, fmt)
    outs = {"sum_dy": m.ch(out=True), "sum_dy_xmu": m.ch(out=True), "grad_weight": m.ch(out=True),
            "grad_bias": m.ch(out=True)}
    if null_masked:
        for k, flag in zip(outs, (flags[0], flags[0], flags[1], flags[2])):
            if not flag:
                outs[k] = None
    return Sample({
        "grad_out": m.data(),
        "input": m.data(scale=2.0, shift=0.5),
        "mean": m.ch(),
        "invstd": m.ch(lo=0.5, hi=2.0),
        "weight": m.ch(lo=-1.5, hi=1.5) if weight else None,
        **outs,
    }, dict(zip(("input_g", "weight_g", "bias_g"), flags)), note=note, channel_axis=m.ax)


def samples_rb(rng):
    out = standard(make_rb, rng, big=True)
    out += [
        make_rb(rng, (2, 3, 4, 5), F32, weight=False, note="no weight"),
        make_rb(rng, (2, 3, 4, 5), F32, flags=(True, False, False), null_masked=True, note="input_g only"),
        make_rb(rng, (2, 4, 5, 3), F16, F16, channel_last=True, flags=(False, True, True), null_masked=True,
                note="weight_g, bias_g NHWC"),
        make_rb(rng, (2, 3, 4, 5), F32, flags=(False, False, True), note="bias_g, others given, not written"),
        make_rb(rng, (2, 3, 4, 5), F32, flags=(False, False, False), null_masked=True, note="nothing"),
        make_rb(rng, (0, 3, 4, 5), F32, flags=(True, False, True), note="empty, some flags: zero-filled"),
    ]
    return out


def ref_rb(s: Sample) -> dict:
    t = _vals(s)
    a = s.attrs
    flags = (a["input_g"], a["weight_g"], a["bias_g"])
    vals = R.batch_norm_reduce_backward(t["grad_out"], t["input"], t["mean"], t["invstd"], t["weight"], *flags,
                                        axis=s.channel_axis)
    out = {}
    for name, v, flag in zip(("sum_dy", "sum_dy_xmu", "grad_weight", "grad_bias"), vals,
                             (flags[0], flags[0], flags[1], flags[2])):
        if t[name] is not None:
            out[name] = v if flag else t[name]
    return out


def errors_rb(rng):
    out = nulls(make_rb, rng, ("grad_out", "input", "mean", "invstd", "sum_dy", "sum_dy_xmu", "grad_weight",
                               "grad_bias"))
    out.append(with_(make_rb, rng, "weight_g missing", NULLPTR, attr(weight_g=None)))
    out += common_errors(make_rb, rng, "grad_out", ("input",))[:6]
    out += channel_errors(make_rb, rng, ("mean", "invstd", "weight", "sum_dy", "sum_dy_xmu", "grad_weight",
                                         "grad_bias"))
    out.append(with_(make_rb, rng, "input shape", INVALID,
                     lambda s: setattr(s.tensors["input"], "values", np.ones((2, 3, 5, 4)))))
    out.append((make_rb(rng, (2, 0, 4), note="C = 0"), INVALID))
    out.append((make_rb(rng, (1, 2, 1, 1, 1, 1, 1, 1, 2), note="rank 9"), INVALID))

    def overlap(d):
        d["sum_dy"].tensor.addr = d["sum_dy_xmu"].tensor.addr
    s = make_rb(rng, (2, 3, 4, 5), note="sum_dy overlaps sum_dy_xmu")
    s.mutate = overlap
    out.append((s, INVALID))
    return out


# aclnnBatchNormTrainingBackward (oneDNN) -------------------------------------------------------

def _tb_pairs(dt):
    return [F32, BF16] if dt == BF16 else [F32]


def make_tb(rng, shape, dtype=F32, pdtype=F32, *, channel_last=False, layout="contiguous", out_layout=None,
            playout="contiguous", fmt=None, data_format="auto", gamma=True, grads=True, eps=1e-5, note=""):
    """channel_last picks data_format "NXC" (default "auto"); data_format None passes None (= "NXC")."""
    m = Maker(rng, shape, dtype, pdtype, channel_last, layout, out_layout, playout, fmt)
    df = ("NXC" if channel_last else "NCX") if data_format == "auto" else data_format
    x = m.data(scale=2.0, shift=0.5)
    return Sample({
        "src": x,
        "diff_dst": m.data(),
        "mean": m.ch(),
        "variance": m.ch(lo=0.3, hi=3.0),
        "gamma": m.ch(lo=-1.5, hi=1.5) if gamma else None,
        "diff_src": m.data(out=True),
        "diff_gamma": m.ch(out=True) if grads else None,
        "diff_beta": m.ch(out=True) if grads else None,
    }, {"epsilon": eps, "data_format": df}, note=note, channel_axis=m.ax)


def make_tb_nxc(rng, shape, dtype=F32, pdtype=F32, **kw):
    """NXC by default (oneDNN's default data_format): channel_last unless told otherwise."""
    kw.setdefault("channel_last", True)
    return make_tb(rng, shape, dtype, pdtype, **kw)


def samples_tb(rng):
    out = standard(make_tb, rng, pairs=_tb_pairs, dtypes=(F32, BF16, F16))
    out += standard(make_tb_nxc, rng, pairs=_tb_pairs, dtypes=(F32,))
    out += [
        make_tb(rng, (2, 4, 5, 3), F32, channel_last=True, data_format=None, note="data_format None = NXC"),
        make_tb(rng, (2, 3, 4, 5), F32, grads=False, note="no diff_gamma/diff_beta: gamma ignored"),
        make_tb(rng, (2, 3, 4, 5), BF16, BF16, grads=False, gamma=False, note="no gamma, no grads"),
        make_tb(rng, (2, 3, 4, 5), F32, gamma=False, note="grads without gamma (gamma = 1)"),
        make_tb(rng, (2, 3, 4, 5), F16, F32, fmt=ND, note="ND NCX f16"),
    ]
    return out


def ref_tb(s: Sample) -> dict:
    t = _vals(s)
    if t["src"].size == 0:
        return {k: np.zeros(t[k].shape) for k in ("diff_gamma", "diff_beta") if t[k] is not None}
    grads = t["diff_gamma"] is not None
    dx, dg, db = R.batch_norm_training_backward_onednn(t["src"], t["diff_dst"], t["mean"], t["variance"], t["gamma"],
                                                       s.attrs["epsilon"], s.attrs["data_format"] or "NXC",
                                                       scale_shift_grads=grads)
    out = {"diff_src": dx}
    if grads:
        out.update(diff_gamma=dg, diff_beta=db)
    return out


def errors_tb(rng):
    out = nulls(make_tb, rng, ("src", "diff_dst", "mean", "variance", "diff_src"))
    out.append(with_(make_tb, rng, "epsilon missing", NULLPTR, attr(epsilon=None)))
    out.append(with_(make_tb, rng, "data_format 'NHWC'", INVALID, attr(data_format="NHWC")))
    out.append(with_(make_tb, rng, "data_format an int", INVALID, attr(data_format=1)))
    out.append(with_(make_tb, rng, "diff_gamma alone", INVALID, lambda s: s.tensors.__setitem__("diff_beta", None)))
    out.append(with_(make_tb, rng, "diff_beta alone", INVALID, lambda s: s.tensors.__setitem__("diff_gamma", None)))
    # the dtype table, one combination at a time
    for dt, pdt in ((F32, BF16), (F16, BF16), (F16, F16), (F32, F16), (BF16, F16)):
        out.append(with_(make_tb, rng, f"src {DT_NAME[dt]} with {DT_NAME[pdt]} stats", INVALID, lambda s: None,
                         dtype=dt, pdtype=pdt))
    out.append(with_(make_tb, rng, "variance bf16, mean f32 (one T2)", INVALID, set_("variance", dtype=BF16),
                     dtype=BF16))
    out.append(with_(make_tb, rng, "NHWC tensor with data_format NCX", INVALID, attr(data_format="NCX"),
                     shape=(2, 4, 5, 3), channel_last=True))
    out.append(with_(make_tb, rng, "NCHW tensor with data_format NXC", INVALID, attr(data_format="NXC")))
    out += common_errors(make_tb, rng, "diff_src", ("diff_dst", "src"))
    out += common_errors(make_tb, rng, "diff_src", ("diff_dst", "src"), channel_last=True)[9:12]
    for n in ("mean", "variance", "gamma", "diff_gamma", "diff_beta"):
        out.append(with_(make_tb, rng, f"{n} length C+1", INVALID,
                         lambda s, n=n: setattr(s.tensors[n], "values", np.ones(4))))
    out.append(with_(make_tb, rng, "NXC: mean of length dim 1", INVALID,
                     lambda s: setattr(s.tensors["mean"], "values", np.ones(4)), shape=(2, 4, 5, 3),
                     channel_last=True))
    return out


# aclnnBatchNormActivation / aclnnBatchNormActivationBackward -----------------------------------

def _reserve_max_bytes(shape, ax):
    N = shape[0]
    C = shape[ax]
    S = math.prod(d for i, d in enumerate(shape) if i not in (0, ax))
    return max(bp.reserve_mask_bytes(N, C, S, False), bp.reserve_mask_bytes(N, C, S, True), 4)


def make_ba(rng, shape, dtype=F32, pdtype=F32, *, channel_last=False, layout="contiguous", out_layout=None,
            playout="contiguous", fmt=None, act="relu", ceiling=1.0, z=True, affine=True, running=True, save=True,
            rdtype=U8, momentum=0.1, eps=1e-5, note=""):
    m = Maker(rng, shape, dtype, pdtype, channel_last, layout, out_layout, playout, fmt)
    nbytes = _reserve_max_bytes(shape, m.ax)
    reserve = TensorSpec(np.zeros(nbytes if rdtype == U8 else nbytes // 4, np.int64), rdtype) if act != "identity" \
        else None
    return Sample({
        "input": m.data(scale=2.0, shift=0.5),
        "z": m.data(scale=0.5) if z else None,
        "weight": m.ch(lo=0.5, hi=1.5) if affine else None,
        "bias": m.ch() if affine else None,
        "running_mean": m.ch() if running else None,
        "running_var": m.ch(lo=0.5, hi=2.0) if running else None,
        "output": m.data(out=True),
        "save_mean": m.ch(out=True) if save else None,
        "save_invstd": m.ch(out=True) if save else None,
        "reserve": reserve,
    }, {"momentum": momentum, "eps": eps, "activation_mode": act, "ceiling": ceiling}, note=note, channel_axis=m.ax)


def samples_ba(rng):
    # first: a sample without reserve (its layout follows the input's memory order, which the
    # generic layout test changes under the same bytes)
    out = [make_ba(rng, (2, 3, 4, 5), F32, act="identity", note="identity + z, no reserve")]
    out += standard(make_ba, rng)
    out += [
        make_ba(rng, (2, 3, 4, 5), F32, act="identity", z=False, note="identity, no z (plain BN)"),
        make_ba(rng, (2, 3, 4, 5), F32, act="identity", note="identity + z"),
        make_ba(rng, (2, 3, 4, 5), F32, act="relu", z=False, note="relu, no z"),
        make_ba(rng, (2, 4, 5, 3), F16, F32, channel_last=True, act="clipped_relu", ceiling=0.7, note="clipped NHWC"),
        make_ba(rng, (2, 3, 4, 5), BF16, BF16, act="clipped_relu", ceiling=2.0, rdtype=I32, note="INT32 reserve"),
        make_ba(rng, (2, 3, 4, 5), F32, affine=False, running=False, save=False, note="bare"),
    ]
    out += doubles(make_ba, rng)
    out += [
        make_ba(rng, (2, 3, 4, 5), F64, F64, act="identity", note="identity + z f64"),
        make_ba(rng, (2, 4, 5, 3), F64, F64, channel_last=True, act="clipped_relu", ceiling=0.7, rdtype=I32,
                note="clipped NHWC f64, INT32 reserve"),
        make_ba(rng, (2, 3, 4, 5), F64, F64, act="clipped_relu", ceiling=1.0 / 3.0, note="clipped f64, ceiling 1/3"),
        make_ba(rng, (2, 3, 4, 5), F64, F64, affine=False, running=False, save=False, z=False, note="bare f64"),
        make_ba(rng, (2, 3, 4, 5), F64, F64, momentum=1.0 / 3.0, note="f64 momentum 1/3"),
    ]
    s = make_ba(rng, (2, 3, 4, 5), F32, note="activation_mode None = identity")
    s.attrs["activation_mode"] = None
    s.tensors["reserve"] = None
    out.append(s)
    return out


def ref_ba(s: Sample) -> dict:
    t = _vals(s)
    a = s.attrs
    if t["input"].size == 0:
        return {k: (np.zeros(t[k].shape) if k == "save_mean" else np.full(t[k].shape, np.nan))
                for k in ("save_mean", "save_invstd") if t[k] is not None}
    r = R.batch_norm_fused_forward(t["input"], t["weight"], t["bias"], t["z"], a["activation_mode"] or "identity",
                                   a["ceiling"], True, t["running_mean"], t["running_var"], a["momentum"], a["eps"],
                                   axis=s.channel_axis)
    out = {"output": r["output"]}
    for k in ("save_mean", "save_invstd", "running_mean", "running_var"):
        if t[k] is not None:
            out[k] = r[k]
    return out


def errors_ba(rng):
    out = nulls(make_ba, rng, ("input", "output", "reserve"))
    out += nulls(make_ba, rng, ("running_mean", "running_var", "save_mean", "save_invstd"))
    out.append(with_(make_ba, rng, "clipped_relu without ceiling", NULLPTR,
                     attr(activation_mode="clipped_relu", ceiling=None)))
    out.append(with_(make_ba, rng, "activation_mode 'tanh'", INVALID, attr(activation_mode="tanh")))
    out.append(with_(make_ba, rng, "reserve FLOAT", INVALID, set_("reserve", dtype=F32)))
    out.append(with_(make_ba, rng, "reserve too small", INVALID,
                     lambda s: setattr(s.tensors["reserve"], "values", np.zeros(4, np.int64))))
    out.append(with_(make_ba, rng, "reserve strided", INVALID, set_("reserve", layout="strided")))
    out.append(with_(make_ba, rng, "reserve at a 1-byte offset", INVALID, set_("reserve", layout="offset")))
    out.append(with_(make_ba, rng, "z dtype differs", INVALID, set_("z", dtype=F16)))
    out.append(with_(make_ba, rng, "z shape", INVALID,
                     lambda s: setattr(s.tensors["z"], "values", np.ones((2, 3, 5, 4)))))
    out += common_errors(make_ba, rng, "output", ("z", "input"))
    out += channel_errors(make_ba, rng, ("weight", "bias", "running_mean", "running_var", "save_mean",
                                         "save_invstd"))

    def overlap(d):
        d["reserve"].tensor.addr = d["input"].tensor.addr
    out += double_errors(make_ba, rng, ("weight", "running_var", "save_invstd"))
    out.append(with_(make_ba, rng, "z f32 with f64 input", INVALID, set_("z", dtype=F32), dtype=F64, pdtype=F64))
    s = make_ba(rng, (2, 3, 4, 5), note="reserve overlaps input")
    s.mutate = overlap
    out.append((s, INVALID))
    return out


def pack_mask(mask: np.ndarray, axis: int, channels_last: bool) -> np.ndarray:
    """Bool mask (logical shape) -> reserve bytes in the op's layout (uint32 words, rows padded)."""
    x = np.moveaxis(mask, axis, 1)
    N, C = x.shape[:2]
    rows = x.reshape(N, C, -1)
    rows = rows.transpose(0, 2, 1).reshape(-1, C) if channels_last else rows.reshape(N * C, -1)
    L = rows.shape[1]
    W = -(-L // 32)
    padded = np.zeros((rows.shape[0], W * 32), bool)
    padded[:, :L] = rows
    return np.packbits(padded, axis=1, bitorder="little").reshape(-1)


def unpack_mask(reserve_bytes: np.ndarray, shape, axis: int, channels_last: bool) -> np.ndarray:
    """Reserve bytes -> bool mask in the logical shape (inverse of pack_mask)."""
    shp = list(shape)
    N, C = shp[0], shp[axis]
    S = math.prod(d for i, d in enumerate(shp) if i not in (0, axis))
    L, R_ = (C, N * S) if channels_last else (S, N * C)
    W = -(-L // 32)
    bits = np.unpackbits(np.asarray(reserve_bytes, np.uint8)[:R_ * W * 4].reshape(R_, W * 4), axis=1,
                         bitorder="little")[:, :L]
    m3 = bits.reshape(N, S, C).transpose(0, 2, 1) if channels_last else bits.reshape(N, C, S)
    moved = [N, C] + [d for i, d in enumerate(shp) if i not in (0, axis)]
    return np.moveaxis(m3.reshape(moved).astype(bool), 1, axis)


def spec_channels_last(spec: TensorSpec, axis: int) -> bool:
    """The reserve layout the fused ops use for a tensor made from ``spec`` (same strides as the harness)."""
    shape = tuple(np.shape(spec.values))
    strides, offset, storage = _layout_strides(shape, spec.layout, axis)
    t = A.aclCreateTensor(shape, spec.dtype, strides, offset, spec.format, (max(storage, 1),), None)
    try:
        return _reserve_channels_last(t)
    finally:
        A.aclDestroyTensor(t)


def make_bab(rng, shape, dtype=F32, pdtype=F32, *, channel_last=False, layout="contiguous", out_layout=None,
             playout="contiguous", fmt=None, act="relu", ceiling=1.0, all_pass=False, grad_z=True, grads=True,
             weight=True, rdtype=U8, eps=1e-5, note=""):
    m = Maker(rng, shape, dtype, pdtype, channel_last, layout, out_layout, playout, fmt)
    x = m.data(scale=2.0, shift=0.5)
    reserve, mask = None, None
    if act != "identity":
        nbytes = _reserve_max_bytes(shape, m.ax)
        if all_pass:
            raw = np.full(nbytes, 0xFF, np.uint8)
            mask = np.ones(shape, bool)
        else:
            mask = rng.random(shape) < 0.6
            raw = np.zeros(nbytes, np.uint8)
            if mask.size:
                packed = pack_mask(mask, m.ax, spec_channels_last(x, m.ax))
                raw[:packed.size] = packed
        reserve = TensorSpec(raw if rdtype == U8 else raw.view(np.int32), rdtype)
    return Sample({
        "grad_out": m.data(),
        "input": x,
        "weight": m.ch(lo=-1.5, hi=1.5) if weight else None,
        "bias": m.ch(),
        "save_mean": m.ch(),
        "save_invstd": m.ch(lo=0.5, hi=2.0),
        "reserve": reserve,
        "grad_input": m.data(out=True),
        "grad_z": m.data(out=True) if grad_z else None,
        "grad_weight": m.ch(out=True) if grads else None,
        "grad_bias": m.ch(out=True) if grads else None,
    }, {"activation_mode": act, "ceiling": ceiling, "eps": eps, "_mask": mask}, note=note, channel_axis=m.ax)


def samples_bab(rng):
    out = [make_bab(rng, (2, 3, 4, 5), F32, all_pass=True, note="relu, all-pass mask (layout independent)")]
    out += standard(make_bab, rng)
    out += [
        make_bab(rng, (2, 3, 4, 5), F32, act="identity", note="identity, grad_z"),
        make_bab(rng, (2, 3, 4, 5), F32, act="identity", grad_z=False, note="identity, no grad_z"),
        make_bab(rng, (2, 4, 5, 3), F16, F16, channel_last=True, act="clipped_relu", rdtype=I32,
                 note="clipped NHWC, INT32 reserve"),
        make_bab(rng, (2, 3, 4, 5), F32, grads=False, grad_z=False, note="grad_input only"),
        make_bab(rng, (2, 3, 4, 5), BF16, F32, weight=False, note="no weight"),
        make_bab(rng, (3, 40, 7), F32, layout="channels_last", note="C > 32 (multi-word NXC rows)"),
    ]
    out += doubles(make_bab, rng)
    out += [
        make_bab(rng, (2, 3, 4, 5), F64, F64, act="identity", note="identity, grad_z f64"),
        make_bab(rng, (2, 4, 5, 3), F64, F64, channel_last=True, act="clipped_relu", rdtype=I32,
                 note="clipped NHWC f64, INT32 reserve"),
        make_bab(rng, (3, 40, 7), F64, F64, layout="channels_last", note="C > 32 f64 (multi-word NXC rows)"),
        make_bab(rng, (2, 3, 4, 5), F64, F64, weight=False, grads=False, note="no weight, grad_input only f64"),
    ]
    return out


def ref_bab(s: Sample) -> dict:
    t = _vals(s)
    if t["input"].size == 0:
        return {k: np.zeros(t[k].shape) for k in ("grad_weight", "grad_bias") if t[k] is not None}
    dx, dz, dw, db = R.batch_norm_fused_backward(t["grad_out"], t["input"], t["weight"], t["save_mean"],
                                                 t["save_invstd"], s.attrs["_mask"], with_z=True, axis=s.channel_axis)
    out = {"grad_input": dx}
    for k, v in (("grad_z", dz), ("grad_weight", dw), ("grad_bias", db)):
        if t[k] is not None:
            out[k] = v
    return out


def errors_bab(rng):
    out = nulls(make_bab, rng, ("grad_out", "input", "save_mean", "save_invstd", "reserve", "grad_input"))
    out.append(with_(make_bab, rng, "clipped_relu without ceiling", NULLPTR,
                     attr(activation_mode="clipped_relu", ceiling=None)))
    out.append(with_(make_bab, rng, "activation_mode 'elu'", INVALID, attr(activation_mode="elu")))
    out.append(with_(make_bab, rng, "reserve too small", INVALID,
                     lambda s: setattr(s.tensors["reserve"], "values", np.zeros(8, np.uint8))))
    out.append(with_(make_bab, rng, "reserve INT64", INVALID, set_("reserve", dtype=A.ACL_INT64)))
    out.append(with_(make_bab, rng, "grad_z dtype differs", INVALID, set_("grad_z", dtype=BF16)))
    out += common_errors(make_bab, rng, "grad_input", ("grad_out", "input"))
    out += channel_errors(make_bab, rng, ("weight", "bias", "save_mean", "save_invstd", "grad_weight", "grad_bias"))
    out += double_errors(make_bab, rng, ("bias", "save_mean", "grad_bias"))
    out.append(with_(make_bab, rng, "grad_out f32 with f64 input", INVALID, set_("grad_out", dtype=F32), dtype=F64,
                     pdtype=F64))
    return out


def bench_of(make):
    """Benchmark calls of any size: an NCHW logical shape, laid out channels-last on request."""
    def bench(rng, shape, dtype, channels_last):
        logical = (shape[0], *shape[2:], shape[1]) if channels_last else tuple(shape)
        return make(rng, logical, dtype, F32, channel_last=channels_last, note="bench")
    return bench


def torch_of(name):
    """PyTorch's counterpart of op ``name`` on tensors shaped like the sample's data (timing only)."""
    def make(s: Sample, device: str):
        import torch
        data = s.tensors["src" if "src" in s.tensors else "input"]
        shape = np.shape(data.values)
        cl = s.channel_axis == len(shape) - 1 and len(shape) > 2
        nchw = (shape[0], shape[-1], *shape[1:-1]) if cl else shape
        tdt = {F32: torch.float32, F16: torch.float16, BF16: torch.bfloat16}[data.dtype]
        x = torch.randn(*nchw, device=device, dtype=tdt)
        if cl and len(nchw) == 4:
            x = x.to(memory_format=torch.channels_last)
        g = torch.randn_like(x)
        C = nchw[1]
        f = dict(device=device, dtype=torch.float32)
        w, b, rm, rv, mean, inv = (torch.ones(C, **f), torch.zeros(C, **f), torch.zeros(C, **f), torch.ones(C, **f),
                                   torch.zeros(C, **f), torch.ones(C, **f))
        cnt = torch.tensor([x.numel() // C], device=device, dtype=torch.int32)
        fns = {
            "BatchNorm": lambda: torch.native_batch_norm(x, w, b, rm, rv, True, 0.1, 1e-5),
            "BatchNormBackward": lambda: torch.ops.aten.native_batch_norm_backward(
                g, x, w, rm, rv, mean, inv, True, 1e-5, [True, True, True]),
            "BatchNormStats": lambda: torch.batch_norm_stats(x, 1e-5),
            "BatchNormElemt": lambda: torch.batch_norm_elemt(x, w, b, mean, inv, 1e-5),
            "BatchNormReduceBackward": lambda: torch.batch_norm_backward_reduce(g, x, mean, inv, w, True, True, True),
            "BatchNormElemtBackward": lambda: torch.batch_norm_backward_elemt(g, x, mean, inv, w, mean, mean, cnt),
        }
        return fns[name]
    return make if name in ("BatchNorm", "BatchNormBackward", "BatchNormStats", "BatchNormElemt",
                            "BatchNormReduceBackward", "BatchNormElemtBackward") else None


def _tol(scale):
    return lambda s: scale


OPS = [
    OpInfo("BatchNorm", samples_bn, ref_bn, errors_bn,
           ("output", "save_mean", "save_invstd", "running_mean", "running_var"), _tol(8.0)),
    OpInfo("BatchNormBackward", samples_bnb, ref_bnb, errors_bnb, ("grad_input", "grad_weight", "grad_bias"),
           _tol(8.0)),
    OpInfo("BatchNormStats", samples_stats, ref_stats, errors_stats, ("mean", "invstd"), _tol(8.0)),
    OpInfo("BatchNormGatherStatsWithCounts", samples_gs, ref_gs, errors_gs,
           ("mean_all", "invstd_all", "running_mean", "running_var"), _tol(4.0)),
    OpInfo("BatchNormElemt", samples_elemt, ref_elemt, errors_elemt, ("output",), _tol(4.0)),
    OpInfo("BatchNormReduceBackward", samples_rb, ref_rb, errors_rb,
           ("sum_dy", "sum_dy_xmu", "grad_weight", "grad_bias"), _tol(8.0)),
    OpInfo("BatchNormTrainingBackward", samples_tb, ref_tb, errors_tb, ("diff_src", "diff_gamma", "diff_beta"),
           _tol(8.0), data="src"),
    OpInfo("BatchNormActivation", samples_ba, ref_ba, errors_ba,
           ("output", "save_mean", "save_invstd", "running_mean", "running_var", "reserve"), _tol(8.0)),
    OpInfo("BatchNormActivationBackward", samples_bab, ref_bab, errors_bab,
           ("grad_input", "grad_z", "grad_weight", "grad_bias"), _tol(8.0)),
]
_MAKERS = {"BatchNorm": make_bn, "BatchNormBackward": make_bnb, "BatchNormStats": make_stats,
           "BatchNormGatherStatsWithCounts": make_gs, "BatchNormElemt": make_elemt, "BatchNormReduceBackward": make_rb,
           "BatchNormTrainingBackward": make_tb, "BatchNormActivation": make_ba, "BatchNormActivationBackward": make_bab}
for _info in OPS:
    _info.bench, _info.torch_gpu = bench_of(_MAKERS[_info.name]), torch_of(_info.name)
