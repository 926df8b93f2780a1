"""OpInfos of the dropout family (aclnn.md §5 Dropout): DropoutGenMask, DropoutDoMask, DropoutBackward, Dropout.

References: the mask is recomputed in NumPy from the documented definition (Philox4x32-10 on
(seed, offset, k), vectorised here; the Python scalar version in aclnn_py.ops.dropout is checked
against Random123's known answers in tests/test_dropout_mask.py); outputs are float64 products.
Samples cover every dtype (DOUBLE — an aclnn-py extension, f64 multiply — in DoMask, Backward and
pyDropoutStateful, with values f32 cannot hold; Dropout refuses it), ranks, layouts, p = 0 / p = 1 / train =
false, scale 0 / 1 / > 1, negative and 64-bit seeds and offsets, empty tensors where allowed; errors name the
argument.
"""
from __future__ import annotations

import math

import numpy as np

import aclnn_py as A
from harness import Sample, TensorSpec
from opdb import ErrorCase, OpInfo

F32, F16, BF16, U8, I8, I32 = A.ACL_FLOAT, A.ACL_FLOAT16, A.ACL_BF16, A.ACL_UINT8, A.ACL_INT8, A.ACL_INT32
INVALID, NULLPTR = A.ACLNN_ERR_PARAM_INVALID, A.ACLNN_ERR_PARAM_NULLPTR
ND = A.ACL_FORMAT_ND
F64 = A.ACL_DOUBLE
FLOATS = (F32, F16, BF16)
_M = np.uint64(0xFFFFFFFF)


def mask_bytes(n):
    return -(-n // 128) * 16


def philox_np(c0, c1, c2, c3, k0, k1):
    """Philox4x32-10 on arrays of uint64 holding 32-bit words."""
    c0, c1, c2, c3 = (np.asarray(v, np.uint64) & _M for v in (c0, c1, c2, c3))
    k0, k1 = np.uint64(k0) & _M, np.uint64(k1) & _M
    for r in range(10):
        if r:
            k0, k1 = (k0 + np.uint64(0x9E3779B9)) & _M, (k1 + np.uint64(0xBB67AE85)) & _M
        p0, p1 = np.uint64(0xD2511F53) * c0, np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ k0) & _M, p1 & _M, ((p0 >> np.uint64(32)) ^ c3 ^ k1) & _M, p0 & _M
    return c0, c1, c2, c3


def keep_bits(n, prob, seed, offset):
    """The keep bit of each of n elements (bool array), as the kernels define it."""
    if n == 0:
        return np.zeros(0, bool)
    s, o = int(seed) & (2 ** 64 - 1), int(offset) & (2 ** 64 - 1)
    j = np.arange(-(-n // 4), dtype=np.uint64)
    w = philox_np(j & _M, j >> np.uint64(32), np.full_like(j, o & 0xFFFFFFFF), np.full_like(j, o >> 32),
                  s & 0xFFFFFFFF, s >> 32)
    words = np.stack(w, axis=1).reshape(-1)[:n]
    return words >= np.uint64(min(int(round(prob * 2.0 ** 32)), 1 << 32))


def pack(bits, n):
    b = np.zeros(mask_bytes(n) * 8, np.uint8)
    b[:n] = bits
    return np.packbits(b, bitorder="little")


def unpack(mask, n):
    return np.unpackbits(np.asarray(mask, np.uint8), bitorder="little")[:n].astype(bool)


def _ts(values, dtype, layout="contiguous"):
    return TensorSpec(np.asarray(values, np.float64), dtype, ND, layout)


def _mask_spec(rng, n, layout="contiguous", bits=None):
    bits = rng.random(n) < 0.6 if bits is None else bits
    return TensorSpec(pack(bits, n).astype(np.float64), U8, ND, layout)


def _vals(s):
    return {k: v.rounded() for k, v in s.tensors.items() if v is not None}


def _dd(s):
    dt = next((t.dtype for t in s.tensors.values() if t is not None and t.dtype in (*FLOATS, F64)), F32)
    return dt


# DropoutGenMask ---------------------------------------------------------------------------------

def make_gen(rng, shape, prob=0.5, seed=1, offset=0, *, layout="contiguous", note=""):
    n = math.prod(shape)
    return Sample({"out": TensorSpec(np.zeros(mask_bytes(n)), U8, ND, layout)},
                  {"shape": A.aclCreateIntArray(shape), "prob": prob, "seed": seed, "offset": offset}, note=note)


def gen_samples(rng):
    out = [make_gen(rng, (2, 3, 40), note="3-D"), make_gen(rng, (1000,), 0.3, 42, 7, note="1-D, 1000")]
    for prob in (0.0, 0.1, 0.9, 1.0):
        out.append(make_gen(rng, (300,), prob, 5, 3, note=f"prob {prob}"))
    out += [make_gen(rng, (), note="shape () (one element)"), make_gen(rng, (0, 5), note="no elements"),
            make_gen(rng, (128,), note="exactly 128"), make_gen(rng, (129,), note="129: a second 16-byte row"),
            make_gen(rng, (2, 1, 3, 1, 2, 1, 3, 2), 0.25, -7, -3, note="rank 8, negative seed and offset"),
            make_gen(rng, (77,), 0.5, 2 ** 63 - 1, 2 ** 62 + 5, note="64-bit seed and offset"),
            make_gen(rng, (500,), layout="strided", note="strided out (copied back)"),
            make_gen(rng, (500,), layout="offset", note="out at an offset")]
    return out


def gen_ref(s):
    shape = tuple(s.attrs["shape"])
    n = math.prod(shape)
    return {"out": pack(keep_bits(n, s.attrs["prob"], s.attrs["seed"], s.attrs["offset"]), n).astype(np.float64)}


def torch_gen(s):     # PyTorch has no such generator; its bernoulli keep fraction is what tests/test_dropout_mask checks
    return {}


def gen_errors(rng):
    def case(note, status, names, fn=None, shape=(2, 3, 4)):
        s = make_gen(rng, shape, note=note)
        if fn:
            fn(s)
        return ErrorCase(s, status, names)

    def attr(n, v):
        return lambda s: s.attrs.__setitem__(n, v)
    out = [case("out null", NULLPTR, "out", lambda s: s.tensors.__setitem__("out", None))]
    for n in ("shape", "prob", "seed", "offset"):
        out.append(case(f"{n} null", NULLPTR, n, attr(n, None)))
    out += [case("prob -0.1", INVALID, "prob", attr("prob", -0.1)), case("prob 1.5", INVALID, "prob", attr("prob", 1.5)),
            case("prob nan", INVALID, "prob", attr("prob", float("nan"))),
            case("prob a string", INVALID, "prob", attr("prob", "0.5")),
            case("seed a float", INVALID, "seed", attr("seed", 1.5)), case("offset a bool", INVALID, "offset", attr("offset", True)),
            case("shape a tuple, not aclIntArray", INVALID, "shape", attr("shape", (2, 3))),
            case("negative dim", INVALID, "shape", attr("shape", A.aclCreateIntArray((2, -3)))),
            case("9 dims", INVALID, "shape", attr("shape", A.aclCreateIntArray((1,) * 9))),
            case("out too short", INVALID, "out", lambda s: setattr(s.tensors["out"], "values", np.zeros(8))),
            case("out too long", INVALID, "out", lambda s: setattr(s.tensors["out"], "values", np.zeros(32))),
            case("out 2-D", INVALID, "out", lambda s: setattr(s.tensors["out"], "values", np.zeros((1, 16)))),
            case("out FLOAT", INVALID, "out", lambda s: setattr(s.tensors["out"], "dtype", F32)),
            case("out INT8", INVALID, "out", lambda s: setattr(s.tensors["out"], "dtype", I8))]

    def null_addr(d):
        d["out"].tensor.addr = None

    def zero_stride(d):
        d["out"].tensor.strides = (0,)
    out += [case("null address", INVALID, "out", lambda s: setattr(s, "mutate", null_addr)),
            case("out overlaps itself", INVALID, "out", lambda s: setattr(s, "mutate", zero_stride))]
    return out


# DropoutDoMask / DropoutBackward ----------------------------------------------------------------

def make_apply(kind):
    x, attr = ("self", "prob") if kind == "do" else ("grad_output", "scale")

    def make(rng, shape, dtype=F32, value=None, *, layout="contiguous", out_layout=None, mask_layout="contiguous",
             values=None, note=""):
        n = math.prod(shape)
        v = rng.standard_normal(shape) * 2 if values is None else values
        if value is None:
            value = 0.25 if kind == "do" else 1.5
        return Sample({x: _ts(v, dtype, layout), "mask": _mask_spec(rng, n, mask_layout),
                       "out": _ts(np.zeros(shape), dtype, out_layout or layout)}, {attr: value}, note=note)
    return make


def apply_samples(kind):
    make = make_apply(kind)
    lo = 0 if kind == "do" else 1

    def samples(rng):
        out = [make(rng, (3, 4, 5), note="3-D"), make(rng, (2, 3, 4), note="3-D small")]
        for dt in FLOATS:
            out += [make(rng, (4, 70), dt, note=f"{A.aclDataType(dt).name}"),
                    make(rng, (5, 9), dt, layout="transposed", note=f"{A.aclDataType(dt).name} transposed")]
        for r in range(lo, 9):
            out.append(make(rng, tuple([2, 3, 1, 2, 3, 2, 1, 2][:r]), note=f"rank {r}"))
        vals = (0.0, 0.5, 0.9, 1.0) if kind == "do" else (0.0, 1.0, 2.0, 1.25, 10.0)
        for v in vals:
            out.append(make(rng, (4, 33), F32, v, note=f"{'prob' if kind == 'do' else 'scale'} {v}"))
        out += [make(rng, (2, 3, 4, 5), layout="channels_last", note="channels-last (copied: row-major mask)"),
                make(rng, (3, 5, 6), layout="strided", note="strided views"),
                make(rng, (3, 5, 6), F16, layout="offset", note="offset"),
                make(rng, (3, 5, 6), out_layout="strided", note="strided out"),
                make(rng, (130,), mask_layout="strided", note="strided mask"),
                make(rng, (1,), note="one element"), make(rng, (2000,), BF16, note="long bf16")]
        # DOUBLE (an aclnn-py extension): the multiply in f64, on values f32 cannot hold
        fine = 1.0 + rng.standard_normal((4, 70)) * 1e-9
        out += [make(rng, (4, 70), F64, note="DOUBLE"),
                make(rng, (5, 9), F64, layout="transposed", note="DOUBLE transposed"),
                make(rng, (4, 70), F64, 0.3 if kind == "do" else 1.0 / 0.7, values=fine, note="DOUBLE fine values"),
                make(rng, (2, 3, 4, 5), F64, layout="channels_last", note="DOUBLE channels-last")]
        if kind == "do":
            out += [make(rng, (0, 3), note="empty"), make(rng, (2, 0), F16, note="empty f16")]
        return out
    return samples


def apply_ref(kind):
    x, attr = ("self", "prob") if kind == "do" else ("grad_output", "scale")

    def ref(s):
        t = _vals(s)
        v = t[x]
        if not v.size:
            return {}
        keep = unpack(s.tensors["mask"].values.astype(np.uint8), v.size).reshape(v.shape)
        a = s.attrs[attr]
        if kind == "do":
            mult = 0.0 if a >= 1 else 1 / (1 - a)
        else:
            mult = a
        return {"out": np.where(keep, v * mult, 0.0) if mult else np.zeros(v.shape)}
    return ref


def apply_torch(kind):
    x, attr = ("self", "prob") if kind == "do" else ("grad_output", "scale")

    def ref(s):
        import torch
        t = _vals(s)
        v = torch.from_numpy(t[x])
        keep = torch.from_numpy(unpack(s.tensors["mask"].values.astype(np.uint8), v.numel()).reshape(v.shape))
        a = s.attrs[attr]
        scale = (0.0 if a >= 1 else 1 / (1 - a)) if kind == "do" else a
        return {"out": torch.ops.aten.native_dropout_backward(v, keep, scale).numpy()}
    return ref


def apply_errors(kind):
    make = make_apply(kind)
    x, attr = ("self", "prob") if kind == "do" else ("grad_output", "scale")

    def errors(rng):
        def case(note, status, names, fn=None, shape=(2, 3, 4)):
            s = make(rng, shape, note=note)
            if fn:
                fn(s)
            return ErrorCase(s, status, names)

        def set_(n, **kv):
            return lambda s: [setattr(s.tensors[n], k, v) for k, v in kv.items()]
        out = [case(f"{n} null", NULLPTR, n, lambda s, n=n: s.tensors.__setitem__(n, None)) for n in (x, "mask", "out")]
        out.append(case(f"{attr} null", NULLPTR, attr, lambda s: s.attrs.__setitem__(attr, None)))
        bad = (-0.5, 1.01, float("nan")) if kind == "do" else (0.5, -1.0, 0.999, float("nan"), float("inf"))
        for b in bad:
            out.append(case(f"{attr} {b}", INVALID, attr, lambda s, b=b: s.attrs.__setitem__(attr, b)))
        out += [case(f"{x} INT32", INVALID, x, set_(x, dtype=I32)),
                case("out dtype differs", INVALID, "out", set_("out", dtype=F16)),
                case("mask INT8", INVALID, "mask", set_("mask", dtype=I8)),
                case("mask too short", INVALID, "mask", set_("mask", values=np.zeros(8))),
                case("mask 2-D", INVALID, "mask", set_("mask", values=np.zeros((1, 16)))),
                case("out shape differs", INVALID, "out", set_("out", values=np.zeros((2, 4, 3)))),
                case("rank 9", INVALID, x, shape=(1, 2, 1, 1, 1, 1, 1, 1, 2)),
                case("private format", INVALID, x, set_(x, format=A.ACL_FORMAT_NC1HWC0))]
        if kind == "bwd":
            out += [case("rank 0", INVALID, x, shape=()), case("empty", INVALID, x, shape=(2, 0))]

        def overlap(d):
            d["out"].tensor.addr = d[x].tensor.addr + 4
            d["out"].tensor.storage_dims = d[x].tensor.storage_dims

        def on_mask(d):
            d["out"].tensor.addr = d["mask"].tensor.addr
        out += [case("out overlaps input", INVALID, "out", lambda s: setattr(s, "mutate", overlap)),
                case("out on the mask", INVALID, "out", lambda s: setattr(s, "mutate", on_mask))]
        return out
    return errors


# Dropout ----------------------------------------------------------------------------------------

def make_drop(rng, shape, dtype=F32, p=0.4, train=True, seed=11, offset=0, *, layout="contiguous", out_layout=None,
              values=None, note=""):
    n = math.prod(shape)
    v = rng.standard_normal(shape) * 2 if values is None else values
    return Sample({"input": _ts(v, dtype, layout), "out": _ts(np.zeros(shape), dtype, out_layout or layout),
                   "mask_out": TensorSpec(np.zeros(mask_bytes(n)), U8, ND, "contiguous")},
                  {"p": p, "train": train, "seed": seed, "offset": offset}, note=note)


def drop_samples(rng):
    out = [make_drop(rng, (3, 4, 5), note="3-D"), make_drop(rng, (2, 3, 4), note="3-D small")]
    for dt in FLOATS:
        out += [make_drop(rng, (4, 70), dt, note=A.aclDataType(dt).name),
                make_drop(rng, (5, 9), dt, layout="transposed", note=f"{A.aclDataType(dt).name} transposed")]
    for r in range(0, 9):
        out.append(make_drop(rng, tuple([2, 3, 1, 2, 3, 2, 1, 2][:r]), note=f"rank {r}"))
    for p, train in ((0.0, True), (1.0, True), (0.5, False), (0.0, False), (0.9, True), (0.05, True)):
        out.append(make_drop(rng, (4, 33), F32, p, train, note=f"p {p}, train {train}"))
    out += [make_drop(rng, (300,), F32, 0.5, True, -5, 2 ** 40, note="negative seed, large offset"),
            make_drop(rng, (300,), F32, 0.5, True, -5, 2 ** 40 + 1, note="next offset"),
            make_drop(rng, (2, 3, 4, 5), layout="channels_last", note="channels-last"),
            make_drop(rng, (3, 5, 6), layout="strided", note="strided"),
            make_drop(rng, (3, 5, 6), F16, layout="offset", note="offset"),
            make_drop(rng, (3, 5, 6), out_layout="strided", note="strided out"),
            make_drop(rng, (0, 3), note="empty"), make_drop(rng, (2, 0), F16, p=0.0, note="empty, p 0")]
    s = make_drop(rng, (4, 5), F32, 0.0, False, note="eval, mask_out null")
    s.tensors["mask_out"] = None
    out.append(s)
    return out


def drop_ref(s):
    t = _vals(s)
    x = t["input"]
    a = s.attrs
    res = {}
    if s.tensors["mask_out"] is not None:
        res["mask_out"] = t["mask_out"]                # untouched unless a mask is drawn
    if not x.size:
        return res
    if not a["train"] or a["p"] == 0:
        res["out"] = x
    elif a["p"] >= 1:
        res["out"] = np.zeros(x.shape)
    else:
        keep = keep_bits(x.size, a["p"], a["seed"], a["offset"])
        res["mask_out"] = pack(keep, x.size).astype(np.float64)
        res["out"] = np.where(keep.reshape(x.shape), x / (1 - a["p"]), 0.0)
    return res


def drop_torch(s):
    """PyTorch's native_dropout_backward on our mask reproduces out (torch's own RNG differs by design)."""
    import torch
    a, t = s.attrs, _vals(s)
    x = torch.from_numpy(t["input"])
    if not (a["train"] and 0 < a["p"] < 1) or not x.numel():
        return {}
    keep = torch.from_numpy(keep_bits(x.numel(), a["p"], a["seed"], a["offset"]).reshape(tuple(x.shape)))
    return {"out": torch.ops.aten.native_dropout_backward(x, keep, 1 / (1 - a["p"])).numpy()}


def drop_errors(rng):
    def case(note, status, names, fn=None, shape=(2, 3, 4)):
        s = make_drop(rng, shape, note=note)
        if fn:
            fn(s)
        return ErrorCase(s, status, names)

    def attr(n, v):
        return lambda s: s.attrs.__setitem__(n, v)

    def set_(n, **kv):
        return lambda s: [setattr(s.tensors[n], k, v) for k, v in kv.items()]
    out = [case(f"{n} null", NULLPTR, n, lambda s, n=n: s.tensors.__setitem__(n, None)) for n in ("input", "out", "mask_out")]
    for n in ("p", "train", "seed", "offset"):
        out.append(case(f"{n} null", NULLPTR, n, attr(n, None)))
    out += [case("p -0.1", INVALID, "p", attr("p", -0.1)), case("p 2", INVALID, "p", attr("p", 2.0)),
            case("train an int", INVALID, "train", attr("train", 1)), case("seed a float", INVALID, "seed", attr("seed", 0.5)),
            case("input INT32", INVALID, "input", set_("input", dtype=I32)),
            case("DOUBLE data (not taken by aclnnDropout)", INVALID, "input",
                 lambda s: [setattr(s.tensors[n], "dtype", F64) for n in ("input", "out")]),
            case("out dtype differs", INVALID, "out", set_("out", dtype=BF16)),
            case("mask_out FLOAT", INVALID, "mask_out", set_("mask_out", dtype=F32)),
            case("mask_out too short", INVALID, "mask_out", set_("mask_out", values=np.zeros(15))),
            case("out shape differs", INVALID, "out", set_("out", values=np.zeros((2, 4, 3)))),
            case("rank 9", INVALID, "input", shape=(1, 2, 1, 1, 1, 1, 1, 1, 2))]

    def overlap(d):
        d["mask_out"].tensor.addr = d["out"].tensor.addr
    out.append(case("mask_out overlaps out", INVALID, "mask_out", lambda s: setattr(s, "mutate", overlap)))
    return out


def _in_place_layouts(s):
    layouts = {t.layout for t in s.tensors.values() if t is not None}
    return layouts <= {"contiguous", "offset"}


def bench_apply(kind):
    def bench(rng, shape, dtype, channels_last):
        return make_apply(kind)(rng, tuple(shape), dtype, note="bench")
    return bench


def bench_drop(rng, shape, dtype, channels_last):
    return make_drop(rng, tuple(shape), dtype, note="bench")


def torch_gpu_apply(kind):
    x, attr = ("self", "prob") if kind == "do" else ("grad_output", "scale")

    def make(s, device):
        import torch
        dt = {F32: torch.float32, F16: torch.float16, BF16: torch.bfloat16}[s.tensors[x].dtype]
        v = torch.from_numpy(s.tensors[x].rounded()).to(device=device, dtype=dt)
        keep = torch.from_numpy(unpack(s.tensors["mask"].values.astype(np.uint8), v.numel()).reshape(tuple(v.shape)))
        keep = keep.to(device)
        a = s.attrs[attr]
        scale = (0.0 if a >= 1 else 1 / (1 - a)) if kind == "do" else a
        return lambda: torch.ops.aten.native_dropout_backward(v, keep, scale)
    return make


def torch_gpu_drop(s, device):
    import torch
    x = torch.from_numpy(s.tensors["input"].rounded()).to(device=device, dtype={F32: torch.float32, F16: torch.float16,
                                                                              BF16: torch.bfloat16}[s.tensors["input"].dtype])
    return lambda: torch.native_dropout(x, s.attrs["p"], True)


# the cuDNN face's stateful dropout (aclnnpyDropoutStateSet / StateAdvance / Stateful) -------------

MAGIC = 0x41434C4E44524F50


def state_bytes(seed, offset, magic=MAGIC):
    return np.array([magic, seed & (2 ** 64 - 1), offset & (2 ** 64 - 1), 0], "<u8").view(np.uint8).astype(np.float64)


def _state_spec(seed=5, offset=0, layout="contiguous"):
    return TensorSpec(state_bytes(seed, offset), U8, ND, layout)


def make_state_set(rng, seed=7, note=""):
    return Sample({"states": TensorSpec(rng.integers(0, 256, 32).astype(np.float64), U8, ND)}, {"seed": seed},
                  note=note)


def state_set_samples(rng):
    return [make_state_set(rng, 7, note="seed 7"), make_state_set(rng, 0, note="seed 0"),
            make_state_set(rng, -1, note="seed -1 (an int64: the u64 2**64 - 1)")]


def state_set_ref(s):
    return {"states": state_bytes(s.attrs["seed"], 0)}


def state_set_errors(rng):
    a = make_state_set(rng, note="states null")
    a.tensors["states"] = None
    b = make_state_set(rng, note="16 bytes")
    b.tensors["states"] = TensorSpec(np.zeros(16), U8, ND)
    c = make_state_set(rng, note="FLOAT states")
    c.tensors["states"] = TensorSpec(np.zeros(32), F32, ND)
    d = make_state_set(rng, note="seed not an int")
    d.attrs["seed"] = 1.5
    e = make_state_set(rng, note="misaligned view")
    e.tensors["states"].layout = "offset"
    return [ErrorCase(a, NULLPTR, "states"), ErrorCase(b, INVALID, "states"), ErrorCase(c, INVALID, "states"),
            ErrorCase(d, INVALID, "seed"), ErrorCase(e, INVALID, "states")]


def make_advance(rng, seed=3, offset=0, note=""):
    return Sample({"states": _state_spec(seed, offset)}, {}, note=note)


def advance_samples(rng):
    return [make_advance(rng, 3, 0, note="offset 0"), make_advance(rng, 9, 41, note="offset 41"),
            make_advance(rng, 1, 2 ** 64 - 1, note="offset wraps")]


def advance_ref(s):
    w = s.tensors["states"].values.astype(np.uint8).view("<u8")
    return {"states": state_bytes(int(w[1]), int(w[2]) + 1, int(w[0]))}


def advance_errors(rng):
    a = make_advance(rng, note="null")
    a.tensors["states"] = None
    b = make_advance(rng, note="33 bytes")
    b.tensors["states"] = TensorSpec(np.zeros(33), U8, ND)
    return [ErrorCase(a, NULLPTR, "states"), ErrorCase(b, INVALID, "states")]


def make_stateful(rng, shape, dtype=F32, p=0.4, seed=21, offset=3, *, layout="contiguous", note=""):
    n = math.prod(shape)
    return Sample({"input": _ts(rng.standard_normal(shape), dtype, layout), "states": _state_spec(seed, offset),
                   "out": _ts(np.zeros(shape), dtype, layout),
                   "mask": TensorSpec(np.zeros(mask_bytes(n)), U8, ND)}, {"p": p}, note=note)


def stateful_samples(rng):
    out = [make_stateful(rng, (4, 33), note="2-D")]
    for dt in (*FLOATS, F64):
        out += [make_stateful(rng, (3, 5, 7), dt, note=f"{A.aclDataType(dt).name}"),
                make_stateful(rng, (2, 3, 4, 5), dt, layout="channels_last", note=f"{A.aclDataType(dt).name} NHWC")]
    out += [make_stateful(rng, (1000,), p=0.0, note="p 0: all kept"), make_stateful(rng, (300,), p=1.0, note="p 1"),
            make_stateful(rng, (3, 5, 6), layout="strided", note="strided"),
            make_stateful(rng, (257,), seed=2 ** 64 - 1, offset=2 ** 40, note="large seed and offset"),
            make_stateful(rng, (0, 3), note="empty"),
            make_stateful(rng, (3, 50), F64, p=0.3, note="DOUBLE fine values, p 0.3"),
            make_stateful(rng, (1000,), F64, p=0.0, note="DOUBLE p 0"),
            make_stateful(rng, (300,), F64, p=1.0, note="DOUBLE p 1")]
    out[-3].tensors["input"].values = 1.0 + rng.standard_normal((3, 50)) * 1e-9
    return out


def stateful_ref(s):
    t = _vals(s)
    x = t["input"]
    w = s.tensors["states"].values.astype(np.uint8).view("<u8")
    n = x.size
    p = s.attrs["p"]
    if n == 0:
        return {}
    keep = keep_bits(n, p, int(w[1]), int(w[2]))
    scale = 0.0 if p >= 1 else 1 / (1 - p)
    if s.tensors["input"].dtype != F64:
        scale = float(np.float32(scale))           # the f32 kernels' mult; DOUBLE multiplies by the f64 value
    return {"out": np.where(keep.reshape(x.shape), x * scale, 0.0), "mask": pack(keep, n).astype(np.float64)}


def stateful_errors(rng):
    def case(note, status, name, fn):
        s = make_stateful(rng, (3, 40), note=note)
        fn(s)
        return ErrorCase(s, status, name)
    return [
        case("input null", NULLPTR, "input", lambda s: s.tensors.__setitem__("input", None)),
        case("states null", NULLPTR, "states", lambda s: s.tensors.__setitem__("states", None)),
        case("mask null", NULLPTR, "mask", lambda s: s.tensors.__setitem__("mask", None)),
        case("p 1.5", INVALID, "p", lambda s: s.attrs.__setitem__("p", 1.5)),
        case("mask too short", INVALID, "mask", lambda s: s.tensors.__setitem__("mask", TensorSpec(np.zeros(8), U8, ND))),
        case("states 16 bytes", INVALID, "states",
             lambda s: s.tensors.__setitem__("states", TensorSpec(np.zeros(16), U8, ND))),
        case("INT32 input", INVALID, "input", lambda s: [setattr(s.tensors[k], "dtype", A.ACL_INT32) for k in ("input", "out")]),
    ]


OPS = [
    OpInfo("pyDropoutStateSet", state_set_samples, state_set_ref, state_set_errors, ("states",),
           data_dtype_of=lambda s: F32, data="states", workspace_free=True, layout_fixed=("states",)),
    OpInfo("pyDropoutStateAdvance", advance_samples, advance_ref, advance_errors, ("states",),
           data_dtype_of=lambda s: F32, data="states", workspace_free=True, layout_fixed=("states",)),
    OpInfo("pyDropoutStateful", stateful_samples, stateful_ref, stateful_errors, ("out", "mask"), data_dtype_of=_dd,
           zero_workspace=_in_place_layouts, data="input", layout_fixed=("states",)),
    OpInfo("DropoutGenMask", gen_samples, gen_ref, gen_errors, ("out",), torch_reference=None,
           data_dtype_of=lambda s: F32, data="out", bench=lambda rng, shape, dtype, cl: make_gen(rng, tuple(shape))),
    OpInfo("DropoutDoMask", apply_samples("do"), apply_ref("do"), apply_errors("do"), ("out",),
           torch_reference=apply_torch("do"), data_dtype_of=_dd, zero_workspace=_in_place_layouts, data="self",
           bench=bench_apply("do"), torch_gpu=torch_gpu_apply("do")),
    OpInfo("DropoutBackward", apply_samples("bwd"), apply_ref("bwd"), apply_errors("bwd"), ("out",),
           torch_reference=apply_torch("bwd"), data_dtype_of=_dd, zero_workspace=_in_place_layouts, data="grad_output",
           bench=bench_apply("bwd"), torch_gpu=torch_gpu_apply("bwd")),
    OpInfo("Dropout", drop_samples, drop_ref, drop_errors, ("out", "mask_out"), torch_reference=drop_torch,
           data_dtype_of=_dd, zero_workspace=_in_place_layouts, data="input", bench=bench_drop,
           torch_gpu=torch_gpu_drop),
]
