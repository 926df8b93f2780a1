"""Softmax: row 2018 cudnnSoftmaxBackward and its forward cudnnSoftmaxForward, over aclnnSoftmax,
aclnnLogSoftmax and their backward ops.

CUDNN_SOFTMAX_MODE_CHANNEL normalises over dim 1 (C) for every (N, spatial...) position;
CUDNN_SOFTMAX_MODE_INSTANCE over C and the spatial dims together for every N: the tensor is seen as
(N, C·H·W) — in place when its non-N dims nest, else packed into scratch first. Algorithms FAST and
ACCURATE both compute the max-shifted (accurate) softmax; LOG computes log-softmax as (x − m) − log Σ.
Backward: FAST/ACCURATE dx = y·(dy − Σ dy·y); LOG dx = dy − exp(y)·Σ dy. Statuses as cudnn.md §4.8:
invalid algo or mode, dims or data types of the tensors differ, strides of y and dy differ:
BAD_PARAM; dx may be dy (identical descriptors). FLOAT, HALF, BFLOAT16 (computed in f32) and DOUBLE
(computed in f64, as cuDNN; the aclnn ops take DOUBLE as an aclnn-py extension); any other data type:
NOT_SUPPORTED.
"""
from __future__ import annotations

import math

from ._core import (Call, TensorDesc, api, bad, desc_of, enum_arg, flat_strides, handle_of, number, pointer, tensor,
                    unsupported)
from ._enums import cudnnDataType_t, cudnnSoftmaxAlgorithm_t, cudnnSoftmaxMode_t

__all__ = ["cudnnSoftmaxForward", "cudnnSoftmaxBackward"]

_DT = (cudnnDataType_t.CUDNN_DATA_FLOAT, cudnnDataType_t.CUDNN_DATA_HALF, cudnnDataType_t.CUDNN_DATA_BFLOAT16,
       cudnnDataType_t.CUDNN_DATA_DOUBLE)


def _desc(d, name: str) -> TensorDesc:
    t = desc_of(d, TensorDesc, name)
    if t.dtype not in _DT:
        unsupported(f"{name} data type {t.dtype.name}: softmax computes FLOAT, HALF, BFLOAT16, DOUBLE")
    return t


def _check_same(descs):
    (a, an), *rest = descs
    for b, bn in rest:
        if a.dims != b.dims:
            bad(f"{an} dims {a.dims} and {bn} dims {b.dims} differ")
        if a.dtype != b.dtype:
            bad(f"{an} ({a.dtype.name}) and {bn} ({b.dtype.name}) data types differ")


class _View:
    """The tensors as the softmax op sees them: (tensor, dim) with packing for INSTANCE mode views
    whose non-N dims do not nest."""

    def __init__(self, call: Call, instance: bool):
        self.call, self.instance = call, instance
        self.after = []

    def input(self, d: TensorDesc, addr: int):
        if not self.instance:
            return tensor(d, addr)
        fl = flat_strides(d.dims, d.strides, 1)
        if fl is not None:
            return tensor(d, addr, (d.dims[0], fl[0]), (d.strides[0], fl[1]))
        td, taddr = self.call.temp(d.dtype, d.dims)
        self.call.blend(tensor(d, addr), 1.0, 0.0, tensor(td, taddr))
        return self._flat(td, taddr)

    def output(self, d: TensorDesc, addr: int, alpha: float, beta: float, must_copy: bool):
        fl = flat_strides(d.dims, d.strides, 1) if self.instance else (None, None)
        direct = (alpha, beta) == (1.0, 0.0) and not must_copy and fl is not None
        if direct:
            return tensor(d, addr, (d.dims[0], fl[0]), (d.strides[0], fl[1])) if self.instance else tensor(d, addr)
        td, taddr = self.call.temp(d.dtype, d.dims, like=None if self.instance and fl is None else d)
        self.after.append((tensor(td, taddr), alpha, beta, tensor(d, addr)))
        return self._flat(td, taddr) if self.instance else tensor(td, taddr)

    def _flat(self, td: TensorDesc, taddr: int):
        _, stride = flat_strides(td.dims, td.strides, 1)
        return tensor(td, taddr, (td.dims[0], math.prod(td.dims[1:])), (td.strides[0], stride))

    def finish(self):
        for tmp, a, b, dst in self.after:
            self.call.blend(tmp, a, b, dst)


@api()
def cudnnSoftmaxForward(handle, algo, mode, alpha, xDesc, x, beta, yDesc, y):
    h = handle_of(handle)
    alg = enum_arg(algo, cudnnSoftmaxAlgorithm_t, "algo")
    m = enum_arg(mode, cudnnSoftmaxMode_t, "mode")
    a, b = number(alpha, "alpha"), number(beta, "beta")
    xd, yd = _desc(xDesc, "xDesc"), _desc(yDesc, "yDesc")
    _check_same([(xd, "xDesc"), (yd, "yDesc")])
    xp, yp = pointer(x, "x"), pointer(y, "y")
    call = Call(h)
    v = _View(call, m == cudnnSoftmaxMode_t.CUDNN_SOFTMAX_MODE_INSTANCE)
    xin = v.input(xd, xp)
    out = v.output(yd, yp, a, b, must_copy=xp == yp and xd.strides != yd.strides)
    name = "LogSoftmax" if alg == cudnnSoftmaxAlgorithm_t.CUDNN_SOFTMAX_LOG else "Softmax"
    call.op(name, self=xin, dim=1, out=out)
    v.finish()
    return call.run()


@api()
def cudnnSoftmaxBackward(handle, algo, mode, alpha, yDesc, y, dyDesc, dy, beta, dxDesc, dx):
    h = handle_of(handle)
    alg = enum_arg(algo, cudnnSoftmaxAlgorithm_t, "algo")
    m = enum_arg(mode, cudnnSoftmaxMode_t, "mode")
    a, b = number(alpha, "alpha"), number(beta, "beta")
    yd, dyd, dxd = _desc(yDesc, "yDesc"), _desc(dyDesc, "dyDesc"), _desc(dxDesc, "dxDesc")
    _check_same([(yd, "yDesc"), (dyd, "dyDesc"), (dxd, "dxDesc")])
    if yd.strides != dyd.strides:
        bad(f"yDesc strides {yd.strides} and dyDesc strides {dyd.strides} differ")
    yp, dyp, dxp = pointer(y, "y"), pointer(dy, "dy"), pointer(dx, "dx")
    if dxp == dyp and dxd.strides != dyd.strides:
        bad("in place (dx == dy) needs identical dyDesc and dxDesc strides")
    call = Call(h)
    v = _View(call, m == cudnnSoftmaxMode_t.CUDNN_SOFTMAX_MODE_INSTANCE)
    yin, dyin = v.input(yd, yp), v.input(dyd, dyp)
    out = v.output(dxd, dxp, a, b, must_copy=dxp == yp)
    name = "LogSoftmaxBackward" if alg == cudnnSoftmaxAlgorithm_t.CUDNN_SOFTMAX_LOG else "SoftmaxBackward"
    call.op(name, grad_output=dyin, output=yin, dim=1, out=out)
    v.finish()
    return call.run()
