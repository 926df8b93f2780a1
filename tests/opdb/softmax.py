"""OpInfos of the softmax family (aclnn.md §5 Softmax): aclnnSoftmax, aclnnLogSoftmax and their backward ops.

The float64 references are here (they are four lines each). Samples cover every dtype (DOUBLE, an
aclnn-py extension, at the harness's 1e-12 tolerance), every rank
0–8 with every dim (positive and negative), the reduced dim innermost in memory and not (warp rows,
block rows beyond 1024, columns), views of every layout, size-1 and empty dims, and large or
infinite logits; error cases name the argument the message must mention.
"""
from __future__ import annotations

import numpy as np

import aclnn_py as A
from harness import Sample, TensorSpec
from opdb import ErrorCase, OpInfo

F32, F16, BF16, I32, F64 = A.ACL_FLOAT, A.ACL_FLOAT16, A.ACL_BF16, A.ACL_INT32, A.ACL_DOUBLE
INVALID, NULLPTR = A.ACLNN_ERR_PARAM_INVALID, A.ACLNN_ERR_PARAM_NULLPTR
ND = A.ACL_FORMAT_ND


# float64 references -----------------------------------------------------------------------------

def softmax(x, dim, log=False):
    if x.ndim == 0:
        return np.zeros(()) if log else np.ones(())
    m = np.max(x, axis=dim, keepdims=True) if x.size else 0
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        z = x - m
        s = np.sum(np.exp(z), axis=dim, keepdims=True)
        return z - np.log(s) if log else np.exp(z) / s


def softmax_backward(g, y, dim, log=False):
    ax = dim if y.ndim else None
    if log:
        return g - np.exp(y) * np.sum(g, axis=ax, keepdims=y.ndim > 0)
    return y * (g - np.sum(g * y, axis=ax, keepdims=y.ndim > 0))


# samples ----------------------------------------------------------------------------------------

def _spec(values, dtype, layout="contiguous"):
    return TensorSpec(np.asarray(values, np.float64), dtype, ND, layout)


def _logits(rng, shape, scale=3.0):
    return rng.standard_normal(shape) * scale


def make_fwd(rng, shape, dim, dtype=F32, *, layout="contiguous", out_layout=None, values=None, note=""):
    x = _logits(rng, shape) if values is None else values
    return Sample({"self": _spec(x, dtype, layout), "out": _spec(np.zeros(shape), dtype, out_layout or layout)},
                  {"dim": dim}, note=note)


def make_bwd(log):
    def make(rng, shape, dim, dtype=F32, *, layout="contiguous", out_layout=None, values=None, note=""):
        z = _logits(rng, shape) if values is None else values
        y = softmax(z, dim % max(len(shape), 1), log)
        g = rng.standard_normal(shape)
        return Sample({"grad_output": _spec(g, dtype, layout), "output": _spec(y, dtype, layout),
                       "out": _spec(np.zeros(shape), dtype, out_layout or layout)}, {"dim": dim}, note=note)
    return make


def sample_set(make, min_rank=0):
    def samples(rng):
        out = [make(rng, (3, 4, 5), 1, note="3-D, middle dim"),           # first: contiguous, float, rank 3
               make(rng, (3, 4, 5), -1, note="3-D, last dim")]
        for dt, tag in ((F32, "f32"), (F16, "f16"), (BF16, "bf16"), (F64, "f64")):
            out += [make(rng, (4, 7), -1, dt, note=f"{tag} rows"), make(rng, (6, 5, 3), 1, dt, note=f"{tag} columns"),
                    make(rng, (2, 1100), 1, dt, note=f"{tag} rows longer than a warp walks")]
        for r in range(max(min_rank, 0), 9):                       # every dim of every rank
            shape = tuple([2, 3, 1, 2, 3, 2, 1, 2][:r])
            for d in range(-max(r, 1), max(r, 1)):
                out.append(make(rng, shape, d, note=f"rank {r}, dim {d}"))
        out += [
            make(rng, (2, 3, 4, 5), 1, layout="channels_last", note="channels-last memory, dim 1 innermost"),
            make(rng, (2, 3, 4, 5), 3, layout="channels_last", note="channels-last memory, dim 3"),
            make(rng, (3, 4, 5), 0, layout="transposed", note="transposed: dim 0 innermost in memory"),
            make(rng, (3, 4, 5), 2, layout="transposed", note="transposed, dim 2 outermost"),
            make(rng, (3, 5, 6), 2, layout="strided", note="strided views (copied)"),
            make(rng, (3, 5, 6), 1, F16, layout="offset", note="at an element offset"),
            make(rng, (3, 5, 6), -1, out_layout="strided", note="contiguous in, strided out"),
            make(rng, (4, 3), 0, out_layout="transposed", note="contiguous in, transposed out"),
            make(rng, (2, 3, 40), 1, note="columns, inner 40"),
            make(rng, (1, 1, 1), 2, note="all size 1"),
            make(rng, (5, 1), 1, note="reduced dim of size 1"),
            make(rng, (3, 2000), 0, note="long columns (D = 3, inner 2000)"),
            make(rng, (2, 3000), 1, F32, values=_logits(rng, (2, 3000), 40.0), note="large logits, block rows"),
            make(rng, (0, 4), 1, note="empty rows"),
            make(rng, (3, 0), 1, note="empty reduced dim"),
            make(rng, (2, 0, 3), -1, F16, note="empty middle dim"),
            # DOUBLE (f64 compute, an aclnn-py extension): every kernel shape and layout
            make(rng, (2, 3, 4, 5), 1, F64, layout="channels_last", note="f64 channels-last, dim 1 innermost"),
            make(rng, (2, 3, 4, 5), 1, F64, note="f64 NCHW columns (inner 20)"),
            make(rng, (3, 4, 5), 0, F64, layout="transposed", note="f64 transposed"),
            make(rng, (3, 5, 6), 2, F64, layout="strided", note="f64 strided views (copied)"),
            make(rng, (3, 2000), 0, F64, note="f64 long columns (D = 3, inner 2000)"),
            make(rng, (2, 2500), 1, F64, note="f64 block rows (D = 2500)"),
            make(rng, (2, 3000), 1, F64, values=_logits(rng, (2, 3000), 40.0), note="f64 large logits, block rows"),
            make(rng, (5, 300), -1, F64, note="f64 warp rows (D = 300)"),
            make(rng, (3, 0), 1, F64, note="f64 empty reduced dim"),
        ]
        return out
    return samples


def _fwd_samples(log):
    base = sample_set(make_fwd)

    def samples(rng):
        out = base(rng)
        x = _logits(rng, (3, 6))
        x[0, 1] = x[1, 5] = -np.inf
        if not log:   # exp(-inf) = 0 is a valid probability; log-softmax would be -inf (compared separately)
            out.append(make_fwd(rng, (3, 6), 1, values=x, note="-inf logits"))
        out.append(make_fwd(rng, (4, 9), 1, values=_logits(rng, (4, 9), 1e4), note="logits of 1e4 (max shift)"))
        out.append(make_fwd(rng, (4, 9), 1, F64, values=_logits(rng, (4, 9), 1e4), note="f64 logits of 1e4"))
        return out
    return samples


def _vals(s):
    return {k: v.rounded() for k, v in s.tensors.items() if v is not None}


def ref_fwd(log):
    def ref(s):
        x = _vals(s)["self"]
        return {"out": softmax(x, s.attrs["dim"] % max(x.ndim, 1), log)} if x.size else {}
    return ref


def ref_bwd(log):
    def ref(s):
        t = _vals(s)
        y = t["output"]
        return {"out": softmax_backward(t["grad_output"], y, s.attrs["dim"] % max(y.ndim, 1), log)} if y.size else {}
    return ref


def torch_fwd(log):
    def ref(s):
        import torch
        x = torch.from_numpy(_vals(s)["self"])
        fn = torch.log_softmax if log else torch.softmax
        return {"out": fn(x, s.attrs["dim"]).numpy()}
    return ref


def torch_bwd(log):
    def ref(s):
        import torch
        t = _vals(s)
        g, y = torch.from_numpy(t["grad_output"]), torch.from_numpy(t["output"])
        fn = torch._log_softmax_backward_data if log else torch._softmax_backward_data
        return {"out": fn(g, y, s.attrs["dim"], torch.float64).numpy()}
    return ref


# errors -----------------------------------------------------------------------------------------

def _errors(make, data, ins, min_rank=0):
    def errors(rng):
        def case(note, status, names, fn=None, shape=(2, 3, 4), dim=1, dtype=F32):
            s = make(rng, shape, dim, dtype, note=note)
            if fn:
                fn(s)
            return ErrorCase(s, status, names)

        def null(n):
            return lambda s: s.tensors.__setitem__(n, None)

        def attr(v):
            return lambda s: s.attrs.__setitem__("dim", v)

        def set_(n, **kv):
            return lambda s: [setattr(s.tensors[n], k, v) for k, v in kv.items()]
        out = [case(f"{n} null", NULLPTR, n, null(n)) for n in (*ins, "out")]
        out.append(case("dim null", NULLPTR, "dim", attr(None)))
        for bad in (3, -4, 7, 2 ** 63, -2 ** 70):
            out.append(case(f"dim {bad} on rank 3", INVALID, "dim", attr(bad)))
        for bad in (1.0, "1", True, np.float32(1), [1]):
            out.append(case(f"dim {bad!r}", INVALID, "dim", attr(bad)))
        if min_rank == 0:
            out.append(case("dim 1 of a rank-0 tensor", INVALID, "dim", shape=(), dim=1))
        else:
            out.append(case("rank 0", INVALID, data, shape=(), dim=0))
        for bad in (I32, A.ACL_INT64, A.ACL_INT8):
            out.append(case(f"{A.aclDataType(bad).name}", INVALID, ins[0],
                            lambda s, bad=bad: [setattr(t, "dtype", bad) for t in s.tensors.values()]))
        out.append(case("out dtype differs", INVALID, "out", set_("out", dtype=F16)))
        if len(ins) > 1:
            out.append(case(f"{ins[1]} dtype differs", INVALID, ins[1], set_(ins[1], dtype=BF16)))
            out.append(case(f"{ins[1]} shape differs", INVALID, ins[1], set_(ins[1], values=np.zeros((2, 3, 5)))))
        out.append(case("out shape differs", INVALID, "out", set_("out", values=np.zeros((2, 4, 3)))))
        out.append(case("rank 9", INVALID, data, shape=(1, 2, 1, 1, 1, 1, 1, 1, 2)))
        out.append(case("private format", INVALID, ins[0], set_(ins[0], format=A.ACL_FORMAT_NC1HWC0)))
        out.append(case("NCHW format on rank 3", INVALID, "out", set_("out", format=A.ACL_FORMAT_NCHW)))

        def overlap(d):              # the generic tests break storage, allocation, address and strides
            d["out"].tensor.addr = d[ins[-1]].tensor.addr + 4
            d["out"].tensor.storage_dims = d[ins[-1]].tensor.storage_dims
        s = make(rng, (2, 3, 4), 1, note="out overlaps an input")
        s.mutate = overlap
        out.append(ErrorCase(s, INVALID, "out"))
        return out
    return errors


def _tol(s):
    return 4.0


def bench_of(make, dim=1):
    """Benchmark calls over dim 1 of an NCHW shape; channels-last memory makes it the innermost dim."""
    def bench(rng, shape, dtype, channels_last):
        return make(rng, tuple(shape), dim, dtype, layout="channels_last" if channels_last else "contiguous",
                    note="bench")
    return bench


def torch_of(kind):
    def make(s, device):
        import torch
        t = {n: torch.from_numpy(v.rounded()).to(device=device, dtype=_TORCH[s.tensors[n].dtype])
             for n, v in s.tensors.items() if v is not None and n != "out"}
        dim = s.attrs["dim"]
        return {"Softmax": lambda: torch.softmax(t["self"], dim),
                "LogSoftmax": lambda: torch.log_softmax(t["self"], dim),
                "SoftmaxBackward": lambda: torch._softmax_backward_data(t["grad_output"], t["output"], dim,
                                                                        t["output"].dtype),
                "LogSoftmaxBackward": lambda: torch._log_softmax_backward_data(t["grad_output"], t["output"], dim,
                                                                               t["output"].dtype)}[kind]
    return make


def _torch_dtypes():
    try:
        import torch
        return {F32: torch.float32, F16: torch.float16, BF16: torch.bfloat16, F64: torch.float64}
    except ImportError:
        return {}


_TORCH = _torch_dtypes()


def _in_place_layouts(s):
    """Every tensor dense in one shared order: the kernels run on them directly, no workspace."""
    layouts = {t.layout for t in s.tensors.values() if t is not None}
    return len(layouts) == 1 and "strided" not in layouts


OPS = [
    OpInfo("Softmax", _fwd_samples(False), ref_fwd(False), _errors(make_fwd, "self", ("self",)), ("out",), _tol,
           torch_reference=torch_fwd(False), zero_workspace=_in_place_layouts, data="self",
           bench=bench_of(make_fwd), torch_gpu=torch_of("Softmax")),
    OpInfo("LogSoftmax", _fwd_samples(True), ref_fwd(True), _errors(make_fwd, "self", ("self",)), ("out",), _tol,
           torch_reference=torch_fwd(True), zero_workspace=_in_place_layouts, data="self",
           bench=bench_of(make_fwd), torch_gpu=torch_of("LogSoftmax")),
    OpInfo("SoftmaxBackward", sample_set(make_bwd(False)), ref_bwd(False),
           _errors(make_bwd(False), "grad_output", ("grad_output", "output")), ("out",), _tol,
           torch_reference=torch_bwd(False), zero_workspace=_in_place_layouts,
           data="grad_output", bench=bench_of(make_bwd(False)), torch_gpu=torch_of("SoftmaxBackward")),
    OpInfo("LogSoftmaxBackward", sample_set(make_bwd(True), min_rank=1), ref_bwd(True),
           _errors(make_bwd(True), "grad_output", ("grad_output", "output"), min_rank=1), ("out",), _tol,
           torch_reference=torch_bwd(True), zero_workspace=_in_place_layouts,
           data="grad_output", bench=bench_of(make_bwd(True)), torch_gpu=torch_of("LogSoftmaxBackward")),
]
