"""OpInfo of aclnnBatchNormElemtBackward (reference: aclnn.md §4.7, PyTorch batch_norm_backward_elemt)."""
from __future__ import annotations

import numpy as np

import aclnn_py as A
from harness import Sample, TensorSpec
from opdb import OpInfo
from opdb.batch_norm import bench_of, torch_of

F32, F16, BF16, I32 = A.ACL_FLOAT, A.ACL_FLOAT16, A.ACL_BF16, A.ACL_INT32
NCHW, NHWC, ND, NCL, NC, NCDHW, NDHWC = (A.ACL_FORMAT_NCHW, A.ACL_FORMAT_NHWC, A.ACL_FORMAT_ND, A.ACL_FORMAT_NCL,
                                        A.ACL_FORMAT_NC, A.ACL_FORMAT_NCDHW, A.ACL_FORMAT_NDHWC)
INVALID, NULLPTR = A.ACLNN_ERR_PARAM_INVALID, A.ACLNN_ERR_PARAM_NULLPTR
FORMAT_FOR_RANK = {2: NC, 3: NCL, 4: NCHW, 5: NCDHW}


def make(rng, shape, dtype=F32, pdtype=None, *, fmt=None, layout="contiguous", out_layout=None, weight=True,
         counter=(I32, 2), channel_last=False, note=""):
    """A valid call: x, dy random; statistics and sums consistent with a batch (any values are valid)."""
    pdtype = pdtype or F32
    rank = len(shape)
    ax = rank - 1 if channel_last else 1
    C = shape[ax]
    fmt = fmt if fmt is not None else ((NHWC if rank == 4 else NDHWC) if channel_last else FORMAT_FOR_RANK.get(rank, ND))
    x = rng.standard_normal(shape) * 2 + 0.5
    dy = rng.standard_normal(shape)
    ch = lambda v: TensorSpec(np.asarray(v, np.float64), pdtype)
    cdt, world = counter
    per_rank = max(int(np.prod(shape)) // max(C, 1), 1)
    cnt = np.full(world, per_rank / world if cdt != I32 else per_rank // world or 1)
    return Sample({
        "grad_out": TensorSpec(dy, dtype, fmt, layout),
        "input": TensorSpec(x, dtype, fmt, layout),
        "mean": ch(rng.standard_normal(C) * 0.3 + 0.5),
        "invstd": ch(rng.uniform(0.5, 2.0, C)),
        "weight": ch(rng.uniform(-1.5, 1.5, C)) if weight else None,
        "sum_dy": ch(rng.standard_normal(C) * per_rank ** 0.5),
        "sum_dy_xmu": ch(rng.standard_normal(C) * per_rank ** 0.5),
        "counter": TensorSpec(cnt, cdt),
        "grad_input": TensorSpec(np.zeros(shape), dtype, fmt, out_layout or layout),
    }, note=note, channel_axis=ax)


def samples(rng) -> list[Sample]:
    out = []
    for dt in (F32, F16, BF16):
        for pdt in {F32, dt}:
            out.append(make(rng, (2, 3, 4, 5), dt, pdt, note=f"NCHW {dt} {pdt}"))
            out.append(make(rng, (2, 4, 5, 3), dt, pdt, channel_last=True, note="NHWC"))
            out.append(make(rng, (3, 5, 4, 4), dt, pdt, layout="channels_last", note="NCHW view, channels-last memory"))
    for r in range(2, 9):   # ranks 2..8
        shape = (2, 3) + (2,) * (r - 2) if r > 2 else (5, 7)
        out.append(make(rng, shape, F32, note=f"rank {r}"))
    out += [
        make(rng, (2, 3, 5), F32, layout="strided", note="strided input and output"),
        make(rng, (2, 3, 4, 5), F16, layout="transposed", note="transposed views"),
        make(rng, (2, 3, 4, 5), F32, layout="offset", note="views at an element offset"),
        make(rng, (2, 3, 4, 5), F32, out_layout="strided", note="contiguous in, strided out"),
        make(rng, (2, 3, 4, 5), F32, out_layout="channels_last", note="NCX in, NXC out"),
        make(rng, (2, 3, 4, 4, 3), BF16, channel_last=True, note="NDHWC"),
        make(rng, (1, 1, 1, 1), F32, note="all size 1"),
        make(rng, (7, 1, 9), F32, note="C = 1"),
        make(rng, (4, 37), F16, note="NC, S = 1"),
        make(rng, (3, 70, 33), F32, note="odd S"),
        make(rng, (2, 3, 4, 5), F32, weight=False, note="no weight"),
        make(rng, (2, 3, 4, 5), F32, counter=(F16, 3), note="f16 counter"),
        make(rng, (2, 3, 4, 5), BF16, counter=(F32, 1), note="f32 counter"),
        make(rng, (0, 3, 4, 5), F32, note="empty N"),
        make(rng, (2, 3, 0, 5), F16, note="empty spatial"),
    ]
    # mixed layouts: grad_out channels-last, input not
    s = make(rng, (2, 5, 3, 4), F32, note="grad_out channels-last, input NCX")
    s.tensors["grad_out"].layout = "channels_last"
    out.append(s)
    return out


def _bc(v, shape, ax):
    sh = [1] * len(shape)
    sh[ax] = -1
    return np.asarray(v).reshape(sh)


def reference(s: Sample) -> dict[str, np.ndarray]:
    t = {k: (v.rounded() if v is not None else None) for k, v in s.tensors.items()}
    shape, ax = t["input"].shape, s.channel_axis
    n = t["counter"].sum()
    w = t["weight"] if t["weight"] is not None else np.ones(shape[ax])
    b = lambda v: _bc(v, shape, ax)
    gi = (t["grad_out"] - b(t["sum_dy"]) / n - (t["input"] - b(t["mean"])) * b(t["invstd"]) ** 2
          * b(t["sum_dy_xmu"]) / n) * b(t["invstd"]) * b(w)
    return {"grad_input": gi}


def errors(rng) -> list[tuple[Sample, int]]:
    out = []
    base = lambda **kw: make(rng, (2, 3, 4, 5), **kw)
    for name in ("grad_out", "input", "mean", "invstd", "sum_dy", "sum_dy_xmu", "counter", "grad_input"):
        s = base(note=f"{name} null")
        s.tensors[name] = None
        out.append((s, NULLPTR))

    def with_(note, status, **changes):
        s = base(note=note)
        for k, fn in changes.items():
            fn(s.tensors[k])
        out.append((s, status))

    def set_(attr, value):
        return lambda t: setattr(t, attr, value)
    with_("input INT32", INVALID, input=set_("dtype", I32), grad_out=set_("dtype", I32), grad_input=set_("dtype", I32))
    with_("input DOUBLE", INVALID, input=set_("dtype", A.ACL_DOUBLE), grad_out=set_("dtype", A.ACL_DOUBLE),
          grad_input=set_("dtype", A.ACL_DOUBLE))
    with_("grad_out dtype differs", INVALID, grad_out=set_("dtype", F16))
    with_("grad_input dtype differs", INVALID, grad_input=set_("dtype", BF16))
    with_("mean DOUBLE", INVALID, mean=set_("dtype", A.ACL_DOUBLE))
    with_("mean f16 with f32 data", INVALID, mean=set_("dtype", F16))
    with_("counter INT64", INVALID, counter=set_("dtype", A.ACL_INT64))
    with_("counter BF16", INVALID, counter=set_("dtype", BF16))
    with_("private format", INVALID, input=set_("format", A.ACL_FORMAT_NC1HWC0))
    with_("private format on grad_input", INVALID, grad_input=set_("format", A.ACL_FORMAT_FRACTAL_NZ))
    with_("NCL format on 4-D", INVALID, input=set_("format", NCL))
    # per-channel tensors of different dtypes (kernels take one P)
    s = make(rng, (2, 3, 4, 5), F16, F16, note="mixed per-channel dtypes")
    s.tensors["invstd"].dtype = F32
    out.append((s, INVALID))
    # shapes
    s = make(rng, (2, 3, 4, 5), note="mean length C-1")
    s.tensors["mean"].values = s.tensors["mean"].values[:2]
    out.append((s, INVALID))
    s = make(rng, (2, 3, 4, 5), note="weight 2-D")
    s.tensors["weight"].values = s.tensors["weight"].values.reshape(1, 3)
    out.append((s, INVALID))
    s = make(rng, (2, 3, 4, 5), note="sum_dy_xmu too long")
    s.tensors["sum_dy_xmu"].values = np.ones(4)
    out.append((s, INVALID))
    s = make(rng, (2, 3, 4, 5), note="grad_out shape")
    s.tensors["grad_out"].values = np.ones((2, 3, 5, 4))
    out.append((s, INVALID))
    s = make(rng, (2, 3, 4, 5), note="grad_input shape")
    s.tensors["grad_input"].values = np.ones((2, 3, 4, 6))
    out.append((s, INVALID))
    out.append((make(rng, (2, 0, 4), note="C = 0"), INVALID))
    s = make(rng, (2, 3), note="rank 1")
    for k in ("input", "grad_out", "grad_input"):
        s.tensors[k].values = np.ones(6)
        s.tensors[k].format = ND
    out.append((s, INVALID))
    out.append((make(rng, (1, 2, 1, 1, 1, 1, 1, 1, 2), note="rank 9"), INVALID))
    s = make(rng, (2, 3, 4, 5), note="counter rank 9")
    s.tensors["counter"].values = np.ones((1,) * 9)
    out.append((s, INVALID))
    s = make(rng, (2, 3, 4, 5), note="counter rank 0")
    s.tensors["counter"].values = np.array(4.0)
    out.append((s, INVALID))

    # memory: views outside their allocation / storage, overlapping outputs
    def shrink_storage(d):
        d["input"].tensor.storage_dims = (d["input"].storage_numel - 1,)
    s = base(note="view beyond storage_dims")
    s.mutate = shrink_storage
    out.append((s, INVALID))

    def shift_addr(d):
        d["grad_out"].tensor.addr += 2 * 256 + 4   # past the guard bytes: outside the allocation
    s = base(note="view beyond its allocation")
    s.mutate = shift_addr
    out.append((s, INVALID))

    def null_addr(d):
        d["mean"].tensor.addr = None
    s = base(note="null data address")
    s.mutate = null_addr
    out.append((s, INVALID))

    def unknown_addr(d):
        d["sum_dy"].tensor.addr = 0x10
    s = base(note="address unknown to the runtime")
    s.mutate = unknown_addr
    out.append((s, INVALID))

    def overlap(d):
        d["grad_input"].tensor.addr = d["grad_out"].tensor.addr + 4
        d["grad_input"].tensor.storage_dims = d["grad_out"].tensor.storage_dims
    s = base(note="grad_input overlaps grad_out")
    s.mutate = overlap
    out.append((s, INVALID))
    return out


def tolerance_scale(s: Sample) -> float:
    return 4.0


OPS = [OpInfo("BatchNormElemtBackward", samples, reference, errors, ("grad_input",), tolerance_scale,
              bench=bench_of(make), torch_gpu=torch_of("BatchNormElemtBackward"))]
