"""The spatial transformer: rows 2019 cudnnSpatialTfGridGeneratorBackward and 2020
cudnnSpatialTfSamplerBackward, their forwards and the descriptor, over aclnnAffineGrid,
aclnnpyAffineGridBackward (an aclnn-py extension), aclnnGridSampler2D and aclnnGridSampler2DBackward
with cuDNN's convention: align_corners = True (−1 and +1 are the centres of the corner pixels),
bilinear, zero padding.

The descriptor holds the sampler type (BILINEAR only), the data type and the dims of the transformed
(output) tensor (N, C, H, W): theta is N×2×3, grid N×H×W×2 (x then y), both packed in the data type.
Statuses (cudnn.md §4.9): a NULL pointer or descriptor, an invalid data or sampler type, tensors whose
dims differ from the descriptor's: BAD_PARAM; nbDims other than 4 (only 2-D transforms): NOT_SUPPORTED.
FLOAT, HALF, BFLOAT16 and DOUBLE (computed in f64).
The grid generator has no alpha/beta; the sampler backward blends dx with alpha/beta and dgrid with
alphaDgrid/betaDgrid. Both backward ops are deterministic (no float atomics, unlike cuDNN's).
"""
from __future__ import annotations

from ..tensor import aclCreateBoolArray, aclCreateIntArray
from ._core import (FLOAT_TYPES, SUCCESS, Call, Descriptor, TensorDesc, api, bad, c_int, desc_of, destroy, enum_arg,
                    handle_of, number, packed_strides, pointer, tensor, unsupported)
from ._enums import cudnnDataType_t, cudnnSamplerType_t
from .activation import _result
from .lrn import _staged
from .tensors import float_desc

__all__ = ["cudnnCreateSpatialTransformerDescriptor", "cudnnSetSpatialTransformerNdDescriptor",
           "cudnnDestroySpatialTransformerDescriptor", "cudnnSpatialTfGridGeneratorForward",
           "cudnnSpatialTfGridGeneratorBackward", "cudnnSpatialTfSamplerForward", "cudnnSpatialTfSamplerBackward"]


class SpatialTransformerDesc(Descriptor):
    kind = "cudnnSpatialTransformerDescriptor_t"

    def __init__(self):
        super().__init__()
        self.dtype = cudnnDataType_t.CUDNN_DATA_FLOAT
        self.dims = ()

    def packed(self, dims) -> TensorDesc:
        d = TensorDesc()
        d.dtype, d.dims, d.strides, d.is_set = self.dtype, tuple(dims), packed_strides(dims), True
        return d

    @property
    def theta(self) -> TensorDesc:
        return self.packed((self.dims[0], 2, 3))

    @property
    def grid(self) -> TensorDesc:
        return self.packed((self.dims[0], self.dims[2], self.dims[3], 2))

    def size(self):
        return aclCreateIntArray(list(self.dims))


@api(None)
def cudnnCreateSpatialTransformerDescriptor():
    return SpatialTransformerDesc(), SUCCESS


@api()
def cudnnSetSpatialTransformerNdDescriptor(stDesc, samplerType, dataType, nbDims, dimA):
    d = desc_of(stDesc, SpatialTransformerDesc, "stDesc", must_be_set=False)
    enum_arg(samplerType, cudnnSamplerType_t, "samplerType")
    dt = enum_arg(dataType, cudnnDataType_t, "dataType")
    if dt not in FLOAT_TYPES:
        bad(f"dataType {dt.name}: the spatial transformer takes FLOAT, HALF, BFLOAT16, DOUBLE")
    nb = c_int(nbDims, "nbDims")
    if dimA is None:
        bad("dimA is NULL")
    if nb != 4:
        (unsupported if nb > 4 else bad)(f"nbDims = {nb}: only 2-D transforms (nbDims 4: N, C, H, W) are supported")
    dims = [c_int(v, "dimA") for v in list(dimA)[:4]]
    if len(dims) < 4 or any(v <= 0 for v in dims):
        bad(f"dimA must hold 4 positive dims, got {list(dimA)}")
    d.dtype, d.dims, d.is_set = dt, tuple(dims), True
    return SUCCESS


@api()
def cudnnDestroySpatialTransformerDescriptor(stDesc):
    return destroy(stDesc, SpatialTransformerDesc, "stDesc")


@api()
def cudnnSpatialTfGridGeneratorForward(handle, stDesc, theta, grid):
    h = handle_of(handle)
    st = desc_of(stDesc, SpatialTransformerDesc, "stDesc")
    tp, gp = pointer(theta, "theta"), pointer(grid, "grid")
    call = Call(h)
    call.op("AffineGrid", theta=tensor(st.theta, tp), size=st.size(), align_corners=True, out=tensor(st.grid, gp))
    return call.run()


@api()
def cudnnSpatialTfGridGeneratorBackward(handle, stDesc, dgrid, dtheta):
    h = handle_of(handle)
    st = desc_of(stDesc, SpatialTransformerDesc, "stDesc")
    gp, tp = pointer(dgrid, "dgrid"), pointer(dtheta, "dtheta")
    call = Call(h)
    call.op("pyAffineGridBackward", grad_grid=tensor(st.grid, gp), size=st.size(), align_corners=True,
            grad_theta=tensor(st.theta, tp))
    return call.run()


def _io(st: SpatialTransformerDesc, d, name, *, output: bool):
    t = float_desc(desc_of(d, TensorDesc, name), name)
    if t.dtype != st.dtype:
        bad(f"{name} data type {t.dtype.name} differs from stDesc's {st.dtype.name}")
    if t.nb_dims != 4 or t.dims[:2] != st.dims[:2] or (output and t.dims != st.dims):
        want = st.dims if output else (*st.dims[:2], "H_in", "W_in")
        bad(f"{name} dims {t.dims} do not fit stDesc's {want}")
    return t


@api()
def cudnnSpatialTfSamplerForward(handle, stDesc, alpha, xDesc, x, grid, beta, yDesc, y):
    h = handle_of(handle)
    st = desc_of(stDesc, SpatialTransformerDesc, "stDesc")
    a, b = number(alpha, "alpha"), number(beta, "beta")
    xd, yd = _io(st, xDesc, "xDesc", output=False), _io(st, yDesc, "yDesc", output=True)
    xp, gp, yp = pointer(x, "x"), pointer(grid, "grid"), pointer(y, "y")
    call = Call(h)
    out, finish = _result(call, yd, yp, a, b)
    if out.addr in (xp, gp):
        out, finish = _staged(call, yd, yp, a, b)
    call.op("GridSampler2D", input=tensor(xd, xp), grid=tensor(st.grid, gp), interpolation_mode=0, padding_mode=0,
            align_corners=True, out=out)
    finish()
    return call.run()


@api()
def cudnnSpatialTfSamplerBackward(handle, stDesc, alpha, xDesc, x, beta, dxDesc, dx, alphaDgrid, dyDesc, dy, grid,
                                  betaDgrid, dgrid):
    h = handle_of(handle)
    st = desc_of(stDesc, SpatialTransformerDesc, "stDesc")
    a, b = number(alpha, "alpha"), number(beta, "beta")
    ag, bg = number(alphaDgrid, "alphaDgrid"), number(betaDgrid, "betaDgrid")
    xd, dxd = _io(st, xDesc, "xDesc", output=False), _io(st, dxDesc, "dxDesc", output=False)
    if xd.dims != dxd.dims:
        bad(f"xDesc dims {xd.dims} and dxDesc dims {dxd.dims} differ")
    dyd = _io(st, dyDesc, "dyDesc", output=True)
    xp, dxp, dyp, gp, dgp = (pointer(x, "x"), pointer(dx, "dx"), pointer(dy, "dy"), pointer(grid, "grid"),
                             pointer(dgrid, "dgrid"))
    ins = (xp, dyp, gp)
    call = Call(h)
    dx_t, fin_dx = _result(call, dxd, dxp, a, b)
    if dx_t.addr in ins:
        dx_t, fin_dx = _staged(call, dxd, dxp, a, b)
    g = st.grid
    dg_t, fin_dg = _result(call, g, dgp, ag, bg)
    if dg_t.addr in ins:
        dg_t, fin_dg = _staged(call, g, dgp, ag, bg)
    call.op("GridSampler2DBackward", grad_output=tensor(dyd, dyp), input=tensor(xd, xp), grid=tensor(g, gp),
            interpolation_mode=0, padding_mode=0, align_corners=True, output_mask=aclCreateBoolArray([True, True]),
            input_grad=dx_t, grid_grad=dg_t)
    fin_dx()
    fin_dg()
    return call.run()
