"""The cuDNN face (aclnn_py.cudnn): conventions, descriptors, tensor functions, and the batch-norm and
normalization rows (2001–2004, 2007–2012, 2014–2016) against float64 references and PyTorch.

Every buffer lives between guard bytes; a failing call must leave every buffer and guard as it was."""
from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

from aclnn_py import acl, cudnn as c
from harness import device_bytes

F32, F16, BF16, F64 = c.CUDNN_DATA_FLOAT, c.CUDNN_DATA_HALF, c.CUDNN_DATA_BFLOAT16, c.CUDNN_DATA_DOUBLE
NP = {F32: np.float32, F16: np.float16, BF16: ml_dtypes.bfloat16, F64: np.float64}
TOL = {F32: 2e-5, F16: 4e-3, BF16: 3e-2}
GUARD = 256
PATTERN = 0xA5
BAD, UNSUP, OK = c.CUDNN_STATUS_BAD_PARAM, c.CUDNN_STATUS_NOT_SUPPORTED, c.CUDNN_STATUS_SUCCESS
SPATIAL, PER_ACT, PERSIST = c.CUDNN_BATCHNORM_SPATIAL, c.CUDNN_BATCHNORM_PER_ACTIVATION, \
    c.CUDNN_BATCHNORM_SPATIAL_PERSISTENT


class Buf:
    """Device memory with guard bytes on both sides; ``data`` is the address handed to cuDNN."""

    def __init__(self, nbytes: int):
        self.nbytes = nbytes
        self.base, ret = acl.rt.malloc(nbytes + 2 * GUARD, 0)
        assert ret == 0
        acl.rt.memset(self.base, nbytes + 2 * GUARD, PATTERN, nbytes + 2 * GUARD)
        self.data = self.base + GUARD

    def raw(self) -> bytes:
        return device_bytes(self.base, self.nbytes + 2 * GUARD)

    def guards_intact(self) -> bool:
        r = self.raw()
        return set(r[:GUARD]) == {PATTERN} and set(r[-GUARD:]) == {PATTERN}

    def free(self):
        acl.rt.free(self.base)


class Tensor:
    """A strided device tensor in NCHW dim order: ``order`` is its memory order (outer -> inner)."""

    def __init__(self, values: np.ndarray, dtype, order=None, pad: int = 0):
        self.dtype = dtype
        self.dims = values.shape
        order = list(range(values.ndim)) if order is None else list(order)
        strides, acc = [0] * values.ndim, 1
        for k in reversed(order):
            strides[k] = acc
            acc *= values.shape[k] + (pad if k == order[-1] else 0)
        self.strides = tuple(strides)
        self.extent = acc
        self.buf = Buf(acc * np.dtype(NP[dtype]).itemsize)
        self.desc, _ = c.cudnnCreateTensorDescriptor()
        if values.ndim == 4:
            assert c.cudnnSetTensor4dDescriptorEx(self.desc, dtype, *self.dims, *self.strides) == OK
        else:
            assert c.cudnnSetTensorNdDescriptor(self.desc, dtype, values.ndim, self.dims, self.strides) == OK
        self.write(values)

    @property
    def ptr(self):
        return self.buf.data

    def write(self, values):
        host = np.zeros(self.extent, NP[self.dtype])
        np.lib.stride_tricks.as_strided(host, self.dims, [s * host.itemsize for s in self.strides])[...] = \
            np.asarray(values).astype(NP[self.dtype])
        acl.rt.memcpy(self.ptr, host.nbytes, acl.util.numpy_to_ptr(host), host.nbytes, 1)

    def read(self) -> np.ndarray:
        host = np.frombuffer(self.buf.raw()[GUARD:GUARD + self.buf.nbytes], NP[self.dtype])
        return np.lib.stride_tricks.as_strided(host, self.dims, [s * host.itemsize for s in self.strides]) \
            .astype(np.float64)

    def rounded(self, values):
        return np.asarray(values).astype(NP[self.dtype]).astype(np.float64)


@pytest.fixture(scope="module")
def handle():
    h, st = c.cudnnCreate()
    assert st == OK
    yield h
    assert c.cudnnDestroy(h) == OK


# conventions ---------------------------------------------------------------------------------------

def test_names_values_and_conventions():
    assert c.cudnnGetVersion() == 8907 and c.CUDNN_VERSION == 8907
    assert c.CUDNN_STATUS_SUCCESS == 0 and c.CUDNN_STATUS_BAD_PARAM == 3 and c.CUDNN_STATUS_NOT_SUPPORTED == 9
    assert c.CUDNN_STATUS_VERSION_MISMATCH == 14 and c.cudnnStatus_t(8).name == "CUDNN_STATUS_EXECUTION_FAILED"
    assert (c.CUDNN_DATA_FLOAT, c.CUDNN_DATA_DOUBLE, c.CUDNN_DATA_HALF, c.CUDNN_DATA_BFLOAT16) == (0, 1, 2, 9)
    assert (c.CUDNN_TENSOR_NCHW, c.CUDNN_TENSOR_NHWC) == (0, 1)
    assert (c.CUDNN_ACTIVATION_RELU, c.CUDNN_ACTIVATION_CLIPPED_RELU, c.CUDNN_ACTIVATION_SWISH) == (1, 3, 6)
    assert (c.CUDNN_BATCHNORM_PER_ACTIVATION, c.CUDNN_BATCHNORM_SPATIAL, c.CUDNN_BATCHNORM_SPATIAL_PERSISTENT) == (0, 1, 2)
    assert (c.CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION, c.CUDNN_NORM_PER_CHANNEL, c.CUDNN_NORM_ALGO_PERSIST) == (2, 1, 1)
    assert (c.CUDNN_SOFTMAX_LOG, c.CUDNN_POOLING_MAX_DETERMINISTIC, c.CUDNN_LRN_MAX_N) == (2, 3, 16)
    assert c.cudnnDataType_t.__name__ == "cudnnDataType_t" and c.cudnnBatchNormMode_t(1).name == "CUDNN_BATCHNORM_SPATIAL"
    assert c.cudnnGetErrorString(c.CUDNN_STATUS_BAD_PARAM) == "CUDNN_STATUS_BAD_PARAM"
    assert c.cudnnGetErrorString(99) == "CUDNN_UNKNOWN_STATUS"
    assert c.cudnnOpsTrainVersionCheck() == OK and c.cudnnOpsInferVersionCheck() == OK
    assert c.cudnnGetProperty(c.MAJOR_VERSION) == (8, OK)
    import inspect
    params = list(inspect.signature(c.cudnnBatchNormalizationBackward).parameters)
    assert params[:6] == ["handle", "mode", "alphaDataDiff", "betaDataDiff", "alphaParamDiff", "betaParamDiff"]
    assert params[-2:] == ["savedMean", "savedInvVariance"] and len(params) == 19
    assert len(inspect.signature(c.cudnnNormalizationBackward).parameters) == 33


def test_handle_and_stream(handle):
    s, st = c.cudnnGetStream(handle)
    assert (s, st) == (None, OK)
    stream, ret = acl.rt.create_stream()
    assert c.cudnnSetStream(handle, stream) == OK and c.cudnnGetStream(handle) == (stream, OK)
    assert c.cudnnSetStream(handle, 987654321) == BAD and c.cudnnGetStream(handle) == (stream, OK)
    assert c.cudnnSetStream(handle, None) == OK
    acl.rt.destroy_stream(stream)
    h2, _ = c.cudnnCreate()
    assert c.cudnnDestroy(h2) == OK
    assert c.cudnnSetStream(h2, None) == BAD and "destroyed" in acl.get_recent_err_msg()
    assert c.cudnnGetStream("not a handle") == (None, BAD)
    assert c.cudnnQueryRuntimeError(handle, c.CUDNN_ERRQUERY_BLOCKING) == (OK, OK)
    assert c.cudnnQueryRuntimeError(handle, 7)[1] == BAD


def test_wrong_arguments_are_statuses_not_exceptions(handle):
    assert c.cudnnSetTensor4dDescriptor(None, 0, 0, 1, 1, 1, 1) == BAD
    assert c.cudnnSetTensor4dDescriptor(handle, 0, 0, 1, 1, 1, 1) == BAD           # a handle is not a descriptor
    d, _ = c.cudnnCreateTensorDescriptor()
    assert c.cudnnSetTensor4dDescriptor(d, 0, 0, 1, 1, 1) == BAD                    # missing argument
    assert "signature" in acl.get_recent_err_msg()
    assert c.cudnnSetTensor4dDescriptor(d, 0, 0, 1, 1, 1, 1, bogus=1) == BAD
    assert c.cudnnSetTensor4dDescriptor(d, 7, 0, 1, 1, 1, 1) == BAD                 # bad format enumerant
    assert c.cudnnSetTensor4dDescriptor(d, 0, 99, 1, 1, 1, 1) == BAD                # bad data type
    assert c.cudnnSetTensor4dDescriptor(d, 0, 0, 1, 0, 1, 1) == BAD                 # zero dim
    assert c.cudnnSetTensor4dDescriptor(d, 0, 0, -1, 1, 1, 1) == BAD
    assert c.cudnnSetTensor4dDescriptor(d, 0, 0, 1.5, 1, 1, 1) == BAD
    assert c.cudnnSetTensor4dDescriptor(d, 0, 0, 1 << 16, 1 << 16, 1, 1) == UNSUP  # > 2 Giga-elements
    assert c.cudnnGetTensor4dDescriptor(d)[-1] == BAD                               # never set
    assert c.cudnnSetTensorNdDescriptor(d, F32, 9, [1] * 9, [1] * 9) == UNSUP
    assert c.cudnnSetTensorNdDescriptor(d, F32, 2, [2, 3], [3, 1]) == BAD
    assert c.cudnnSetTensorNdDescriptor(d, F32, 4, [2, 3, 4], [1, 1, 1]) == BAD     # dimA too short
    assert c.cudnnSetTensorNdDescriptor(d, F32, 3, [2, 3, 4], [12, 4, 0]) == BAD    # zero stride
    assert c.cudnnDestroyTensorDescriptor(d) == OK
    assert c.cudnnDestroyTensorDescriptor(d) == BAD and c.cudnnDestroyTensorDescriptor(None) == OK
    assert c.cudnnSetTensor4dDescriptor(d, 0, 0, 1, 1, 1, 1) == BAD and "destroyed" in acl.get_recent_err_msg()


def test_tensor_descriptors():
    d, st = c.cudnnCreateTensorDescriptor()
    assert st == OK
    assert c.cudnnSetTensor4dDescriptor(d, c.CUDNN_TENSOR_NHWC, F16, 2, 3, 4, 5) == OK
    assert c.cudnnGetTensor4dDescriptor(d) == (F16, 2, 3, 4, 5, 60, 1, 15, 3, OK)
    assert c.cudnnGetTensorSizeInBytes(d) == (240, OK)
    assert c.cudnnSetTensorNdDescriptorEx(d, c.CUDNN_TENSOR_NHWC, F32, 5, [2, 3, 4, 5, 6]) == OK
    assert c.cudnnGetTensorNdDescriptor(d, 8) == (F32, 5, [2, 3, 4, 5, 6], [360, 1, 90, 18, 3], OK)
    assert c.cudnnGetTensorNdDescriptor(d, 2) == (F32, 5, [2, 3], [360, 1], OK)
    assert c.cudnnGetTensor4dDescriptor(d)[-1] == BAD
    assert c.cudnnSetTensor4dDescriptorEx(d, F32, 2, 3, 4, 5, 100, 20, 5, 1) == OK
    assert c.cudnnGetTensorSizeInBytes(d) == ((1 + 100 + 40 + 15 + 4) * 4, OK)
    bn, _ = c.cudnnCreateTensorDescriptor()
    for mode, want in ((SPATIAL, (1, 3, 1, 1)), (PERSIST, (1, 3, 1, 1)), (PER_ACT, (1, 3, 4, 5))):
        assert c.cudnnDeriveBNTensorDescriptor(bn, d, mode) == OK
        assert c.cudnnGetTensorNdDescriptor(bn, 8)[2] == list(want)
    assert c.cudnnDeriveBNTensorDescriptor(bn, d, 3) == BAD
    assert c.cudnnSetTensor4dDescriptor(d, 0, F16, 2, 3, 4, 5) == OK
    assert c.cudnnDeriveBNTensorDescriptor(bn, d, SPATIAL) == OK and c.cudnnGetTensor4dDescriptor(bn)[0] == F32
    assert c.cudnnSetTensorNdDescriptorEx(d, 0, F64, 3, [2, 3, 4]) == OK
    assert c.cudnnDeriveBNTensorDescriptor(bn, d, SPATIAL) == BAD                   # 3-D
    mv, _ = c.cudnnCreateTensorDescriptor()
    assert c.cudnnSetTensorNdDescriptorEx(d, 0, F64, 5, [2, 3, 4, 5, 6]) == OK
    assert c.cudnnDeriveNormTensorDescriptor(bn, mv, d, c.CUDNN_NORM_PER_CHANNEL, 1) == OK
    assert c.cudnnGetTensorNdDescriptor(mv, 8)[:3] == (F64, 5, [1, 3, 1, 1, 1])
    assert c.cudnnDeriveNormTensorDescriptor(bn, mv, d, c.CUDNN_NORM_PER_CHANNEL, 2) == UNSUP


def test_activation_descriptor():
    a, st = c.cudnnCreateActivationDescriptor()
    assert st == OK and c.cudnnGetActivationDescriptor(a) == (c.CUDNN_ACTIVATION_RELU, 0, 0.0, OK)
    assert c.cudnnSetActivationDescriptor(a, c.CUDNN_ACTIVATION_CLIPPED_RELU, c.CUDNN_PROPAGATE_NAN, 6.0) == OK
    assert c.cudnnGetActivationDescriptor(a) == (3, 1, 6.0, OK)
    assert c.cudnnSetActivationDescriptorSwishBeta(a, 1.5) == OK and c.cudnnGetActivationDescriptorSwishBeta(a) == (1.5, OK)
    assert c.cudnnSetActivationDescriptor(a, 9, 0, 0.0) == BAD
    assert c.cudnnSetActivationDescriptor(a, 1, 2, 0.0) == BAD
    assert c.cudnnSetActivationDescriptor(a, 1, 0, float("nan")) == BAD
    assert c.cudnnDestroyActivationDescriptor(a) == OK and c.cudnnGetActivationDescriptor(a)[-1] == BAD


# tensor functions ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [F32, F16, BF16, F64])
def test_tensor_functions(handle, dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 4, 5))
    X = Tensor(x, dtype)
    Y = Tensor(np.full(x.shape, np.nan), dtype, order=(0, 2, 3, 1))              # NHWC
    tol = TOL.get(dtype, 1e-12) * 4
    assert c.cudnnTransformTensor(handle, 2.0, X.desc, X.ptr, 0.0, Y.desc, Y.ptr) == OK   # NaN must not leak
    np.testing.assert_allclose(Y.read(), 2 * X.rounded(x), rtol=tol, atol=tol)
    b = rng.standard_normal((1, 3, 1, 1))
    B = Tensor(b, dtype)
    before = Y.read()
    assert c.cudnnAddTensor(handle, 0.5, B.desc, B.ptr, 1.0, Y.desc, Y.ptr) == OK
    np.testing.assert_allclose(Y.read(), before + 0.5 * B.rounded(b), rtol=tol, atol=tol)
    assert c.cudnnScaleTensor(handle, Y.desc, Y.ptr, -1.0) == OK
    np.testing.assert_allclose(Y.read(), -(before + 0.5 * B.rounded(b)), rtol=tol, atol=tol)
    assert c.cudnnSetTensor(handle, Y.desc, Y.ptr, 0.25) == OK
    assert np.all(Y.read() == 0.25)
    # refused: nothing written, guards intact
    snap = Y.buf.raw()
    assert c.cudnnAddTensor(handle, 1.0, X.desc, X.ptr, 1.0, B.desc, B.ptr) == BAD       # A bigger than C
    assert c.cudnnTransformTensor(handle, 1.0, X.desc, None, 0.0, Y.desc, Y.ptr) == BAD
    assert c.cudnnSetTensor(handle, Y.desc, Y.ptr, None) == BAD
    assert Y.buf.raw() == snap and X.buf.guards_intact() and B.buf.guards_intact()


# batch norm: references -----------------------------------------------------------------------------

def _axes(x, per_act):
    return (0,) if per_act else (0, *range(2, x.ndim))


def bn_forward_ref(x, scale, bias, eps, per_act, z=None, act="identity", coef=0.0):
    ax = _axes(x, per_act)
    m = x.mean(ax, keepdims=True)
    v = x.var(ax, keepdims=True)
    inv = 1 / np.sqrt(v + eps)
    bn = (x - m) * inv * scale + bias
    if z is not None:
        bn = bn + z
    if act == "relu":
        out = np.maximum(bn, 0)
    elif act == "clipped_relu":
        out = np.clip(bn, 0, coef)
    else:
        out = bn
    M = np.prod([x.shape[a] for a in ax])
    return out, bn, m, v, inv, v * M / (M - 1)


def bn_backward_ref(x, dy, scale, eps, per_act, mask=None):
    ax = _axes(x, per_act)
    if mask is not None:
        dy = dy * mask
    m = x.mean(ax, keepdims=True)
    inv = 1 / np.sqrt(x.var(ax, keepdims=True) + eps)
    xh = (x - m) * inv
    M = np.prod([x.shape[a] for a in ax])
    db = dy.sum(ax, keepdims=True)
    dg = (dy * xh).sum(ax, keepdims=True)
    dx = scale * inv / M * (M * dy - db - xh * dg)
    return dx, dg, db, dy


LAYOUTS = {"nchw": (None, 0), "nhwc": ("cl", 0), "padded": (None, 3), "transposed": ("rev", 0)}


def _order(kind, nd):
    if kind == "cl":
        return [0, *range(2, nd), 1]
    if kind == "rev":
        return list(reversed(range(nd)))
    return None


def _param_desc(x_desc, mode):
    d, _ = c.cudnnCreateTensorDescriptor()
    assert c.cudnnDeriveBNTensorDescriptor(d, x_desc, mode) == OK
    return d


def _param(values, desc=None):
    t = Tensor(values, F32)
    if desc is not None:
        t.desc = desc
    return t


CASES = [(mode, dt, lay, shape) for mode, dt, lay, shape in itertools.product(
    (SPATIAL, PERSIST, PER_ACT), (F32, F16, BF16), ("nchw", "nhwc", "padded", "transposed"),
    ((3, 4, 5, 6), (2, 3, 2, 3, 4)))
    if not (lay == "transposed" and dt != F32)]


def _case_id(case):
    mode, dt, lay, shape = case
    return f"{c.cudnnBatchNormMode_t(mode).name[16:]}-{c.cudnnDataType_t(dt).name[11:]}-{lay}-{len(shape)}d"


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_batch_norm_training_step(handle, case):
    """ForwardTrainingEx -> BackwardEx (and the plain forms) against float64, with blending, every
    bnOps, NaN-filled destinations under beta = 0, and guard bytes."""
    mode, dt, lay, shape = case
    idx = CASES.index(case)
    rng = np.random.default_rng(100 + idx)
    per_act = mode == PER_ACT
    kind, pad = LAYOUTS[lay]
    order = _order(kind, len(shape))
    bn_ops = idx % 3                                     # BN, BN_ACTIVATION, BN_ADD_ACTIVATION in turn
    act_mode = (c.CUDNN_ACTIVATION_RELU, c.CUDNN_ACTIVATION_CLIPPED_RELU)[idx % 2]
    act = "identity" if bn_ops == 0 else ("relu" if act_mode == c.CUDNN_ACTIVATION_RELU else "clipped_relu")
    coef = 1.5
    alpha, beta = ((1.0, 0.0), (0.75, 0.5), (2.0, 0.0))[idx % 3]
    x = rng.standard_normal(shape) * 2 + 0.5
    X = Tensor(x, dt, order, pad)
    xr = X.rounded(x)
    y0 = rng.standard_normal(shape) if beta else np.full(shape, np.nan)
    Y = Tensor(y0, dt, order, pad)
    y0r = Y.rounded(y0)
    z = rng.standard_normal(shape) if bn_ops == 2 else None
    Z = Tensor(z, dt, order, pad) if z is not None else None
    pdesc = _param_desc(X.desc, mode)
    pshape = (1, *shape[1:]) if per_act else (1, shape[1], *[1] * (len(shape) - 2))
    g, b = rng.standard_normal(pshape), rng.standard_normal(pshape)
    G, B = _param(g, pdesc), _param(b, pdesc)
    rm0, rv0 = rng.standard_normal(pshape), rng.uniform(0.5, 2, pshape)
    RM, RV = _param(rm0, pdesc), _param(rv0, pdesc)
    SM, SI = _param(np.zeros(pshape), pdesc), _param(np.zeros(pshape), pdesc)
    A, st = c.cudnnCreateActivationDescriptor()
    assert c.cudnnSetActivationDescriptor(A, act_mode, 0, coef) == OK
    eps, factor = 1e-4, 0.25
    ws, st = c.cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
        handle, mode, bn_ops, X.desc, Z.desc if Z else None, Y.desc, pdesc, A)
    assert st == OK, acl.get_recent_err_msg()
    rs, st = c.cudnnGetBatchNormalizationTrainingExReserveSpaceSize(handle, mode, bn_ops, A, X.desc)
    assert st == OK and (rs == 0) == (bn_ops == 0)
    W, R = Buf(max(ws, 1)), Buf(max(rs, 1))
    st = c.cudnnBatchNormalizationForwardTrainingEx(
        handle, mode, bn_ops, alpha, beta, X.desc, X.ptr, Z.desc if Z else None, Z.ptr if Z else None, Y.desc, Y.ptr,
        pdesc, G.ptr, B.ptr, factor, RM.ptr, RV.ptr, eps, SM.ptr, SI.ptr, A, W.data if ws else None, ws,
        R.data if rs else None, rs)
    assert st == OK, acl.get_recent_err_msg()
    out, bnv, m, v, inv, vu = bn_forward_ref(xr, g, b, eps, per_act, Z.rounded(z) if Z else None, act, coef)
    tol = TOL[dt] * 4
    np.testing.assert_allclose(Y.read(), alpha * out + (beta * y0r if beta else 0), rtol=tol, atol=tol)
    np.testing.assert_allclose(SM.read(), m.reshape(pshape), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(SI.read(), inv.reshape(pshape), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(RM.read(), (1 - factor) * rm0 + factor * m.reshape(pshape), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(RV.read(), (1 - factor) * rv0 + factor * vu.reshape(pshape), rtol=1e-4, atol=1e-5)

    # backward with the forward's reserve and saved statistics (or recomputed ones)
    dy = rng.standard_normal(shape)
    DY = Tensor(dy, dt, order, pad)
    dyr = DY.rounded(dy)
    aD, bD, aP, bP = ((1.0, 0.0, 1.0, 0.0), (0.5, 0.25, 2.0, 1.0), (1.0, 0.0, 0.5, 0.0))[idx % 3]
    dx0 = rng.standard_normal(shape) if bD else np.full(shape, np.nan)
    DX = Tensor(dx0, dt, order, pad)
    DZ = Tensor(np.full(shape, np.nan), dt, order, pad) if bn_ops == 2 else None
    dg0, db0 = rng.standard_normal(pshape), rng.standard_normal(pshape)
    DG, DB = _param(dg0 if bP else np.full(pshape, np.nan), pdesc), _param(db0 if bP else np.full(pshape, np.nan), pdesc)
    bws, st = c.cudnnGetBatchNormalizationBackwardExWorkspaceSize(
        handle, mode, bn_ops, X.desc, Y.desc, DY.desc, DZ.desc if DZ else None, DX.desc, pdesc, A)
    assert st == OK, acl.get_recent_err_msg()
    W2 = Buf(max(bws, 1))
    saved = idx % 2 == 0
    st = c.cudnnBatchNormalizationBackwardEx(
        handle, mode, bn_ops, aD, bD, aP, bP, X.desc, X.ptr, Y.desc, Y.ptr, DY.desc, DY.ptr,
        DZ.desc if DZ else None, DZ.ptr if DZ else None, DX.desc, DX.ptr, pdesc, G.ptr, B.ptr, DG.ptr, DB.ptr, eps,
        SM.ptr if saved else None, SI.ptr if saved else None, A, W2.data if bws else None, bws,
        R.data if rs else None, rs)
    assert st == OK, acl.get_recent_err_msg()
    mask = None
    if act == "relu":
        mask = (bnv > 0)
    elif act == "clipped_relu":
        mask = (bnv > 0) & (bnv < coef)
    dxr, dgr, dbr, dyb = bn_backward_ref(xr, dyr, g, eps, per_act, mask)
    scale = 1 + np.abs(dxr).max()
    np.testing.assert_allclose(DX.read(), aD * dxr + (bD * DX.rounded(dx0) if bD else 0), rtol=tol * scale,
                               atol=tol * scale)
    pscale = 1 + max(np.abs(dgr).max(), np.abs(dbr).max())
    np.testing.assert_allclose(DG.read(), aP * dgr.reshape(pshape) + (bP * dg0 if bP else 0), rtol=1e-4 * pscale,
                               atol=tol * pscale)
    np.testing.assert_allclose(DB.read(), aP * dbr.reshape(pshape) + (bP * db0 if bP else 0), rtol=1e-4 * pscale,
                               atol=tol * pscale)
    if DZ is not None:
        np.testing.assert_allclose(DZ.read(), dyb, rtol=tol, atol=tol)
    for t in (X, Y, Z, G, B, RM, RV, SM, SI, DY, DX, DZ, DG, DB):
        if t is not None:
            assert t.buf.guards_intact()
            t.buf.free()
    for buf in (W, R, W2):
        assert buf.guards_intact()
        buf.free()


@pytest.mark.parametrize("per_act", [False, True])
def test_plain_forms_inference_and_normalization_api(handle, per_act):
    """ForwardTraining / Backward (non-Ex), ForwardInference, and the Normalization* twins agree."""
    rng = np.random.default_rng(7 + per_act)
    shape = (4, 3, 5, 2)
    mode = PER_ACT if per_act else SPATIAL
    nmode = c.CUDNN_NORM_PER_ACTIVATION if per_act else c.CUDNN_NORM_PER_CHANNEL
    x = rng.standard_normal(shape)
    X, Y, Y2 = Tensor(x, F32), Tensor(np.zeros(shape), F32), Tensor(np.zeros(shape), F32)
    pdesc = _param_desc(X.desc, mode)
    sb, mv = c.cudnnCreateTensorDescriptor()[0], c.cudnnCreateTensorDescriptor()[0]
    assert c.cudnnDeriveNormTensorDescriptor(sb, mv, X.desc, nmode, 1) == OK
    pshape = (1, *shape[1:]) if per_act else (1, 3, 1, 1)
    g, b = rng.standard_normal(pshape), rng.standard_normal(pshape)
    G, B = _param(g, pdesc), _param(b, pdesc)
    RM, RV = _param(np.zeros(pshape), pdesc), _param(np.ones(pshape), pdesc)
    RM2, RV2 = _param(np.zeros(pshape), pdesc), _param(np.ones(pshape), pdesc)
    SM, SI = _param(np.zeros(pshape), pdesc), _param(np.zeros(pshape), pdesc)
    assert c.cudnnBatchNormalizationForwardTraining(handle, mode, 1.0, 0.0, X.desc, X.ptr, Y.desc, Y.ptr, pdesc, G.ptr,
                                                    B.ptr, 1.0, RM.ptr, RV.ptr, 1e-5, SM.ptr, SI.ptr) == OK
    ws, st = c.cudnnGetNormalizationForwardTrainingWorkspaceSize(handle, nmode, 0, 0, X.desc, None, Y2.desc, sb, None,
                                                                 mv, 1)
    assert st == OK
    rs, st = c.cudnnGetNormalizationTrainingReserveSpaceSize(handle, nmode, 0, 1, None, X.desc, 1)
    assert (rs, st) == (0, OK)
    assert c.cudnnNormalizationForwardTraining(handle, nmode, 0, 1, 1.0, 0.0, X.desc, X.ptr, sb, G.ptr, B.ptr, 1.0, mv,
                                               RM2.ptr, RV2.ptr, 1e-5, None, None, None, None, None, Y2.desc, Y2.ptr,
                                               None, 0, None, 0, 1) == OK
    out, _, m, v, _, vu = bn_forward_ref(x.astype(np.float32).astype(np.float64), g, b, 1e-5, per_act)
    np.testing.assert_allclose(Y.read(), out, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(Y2.read(), Y.read())                 # same kernels, same bits
    np.testing.assert_allclose(RV.read(), vu.reshape(pshape), rtol=1e-5)    # factor 1: the batch's unbiased var
    np.testing.assert_array_equal(RV2.read(), RV.read())
    # inference with the running statistics
    assert c.cudnnBatchNormalizationForwardInference(handle, mode, 1.0, 0.0, X.desc, X.ptr, Y.desc, Y.ptr, pdesc,
                                                     G.ptr, B.ptr, RM.ptr, RV.ptr, 1e-5) == OK
    ref = (x - m.reshape(pshape)) / np.sqrt(vu.reshape(pshape) + 1e-5) * g + b
    np.testing.assert_allclose(Y.read(), ref, rtol=1e-4, atol=1e-5)
    assert c.cudnnNormalizationForwardInference(handle, nmode, 0, 0, 1.0, 0.0, X.desc, X.ptr, sb, G.ptr, B.ptr, mv,
                                                RM.ptr, RV.ptr, None, None, None, Y2.desc, Y2.ptr, 1e-5, 1) == OK
    np.testing.assert_array_equal(Y2.read(), Y.read())
    # backward, plain and normalization forms
    dy = rng.standard_normal(shape)
    DY, DX, DX2 = Tensor(dy, F32), Tensor(np.zeros(shape), F32), Tensor(np.zeros(shape), F32)
    DG, DB, DG2, DB2 = (_param(np.zeros(pshape), pdesc) for _ in range(4))
    assert c.cudnnBatchNormalizationBackward(handle, mode, 1.0, 0.0, 1.0, 0.0, X.desc, X.ptr, DY.desc, DY.ptr, DX.desc,
                                             DX.ptr, pdesc, G.ptr, DG.ptr, DB.ptr, 1e-5, SM.ptr, SI.ptr) == OK
    bws, st = c.cudnnGetNormalizationBackwardWorkspaceSize(handle, nmode, 0, 0, X.desc, None, DY.desc, None, DX2.desc,
                                                           sb, None, mv, 1)
    assert st == OK
    assert c.cudnnNormalizationBackward(handle, nmode, 0, 0, 1.0, 0.0, 1.0, 0.0, X.desc, X.ptr, None, None, DY.desc,
                                        DY.ptr, None, None, DX2.desc, DX2.ptr, sb, G.ptr, None, DG2.ptr, DB2.ptr, 1e-5,
                                        mv, SM.ptr, SI.ptr, None, None, 0, None, 0, 1) == OK
    dxr, dgr, dbr, _ = bn_backward_ref(x.astype(np.float32).astype(np.float64), dy.astype(np.float32), g, 1e-5, per_act)
    np.testing.assert_allclose(DX.read(), dxr, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(DG.read(), dgr.reshape(pshape), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(DB.read(), dbr.reshape(pshape), rtol=1e-4, atol=1e-4)
    for a, b2 in ((DX, DX2), (DG, DG2), (DB, DB2)):
        np.testing.assert_array_equal(a.read(), b2.read())


def test_matches_pytorch_autograd(handle):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    shape = (4, 3, 5, 6)
    x, dy = rng.standard_normal(shape), rng.standard_normal(shape)
    g, b = rng.standard_normal(3), rng.standard_normal(3)
    X, Y, DY, DX = Tensor(x, F32, (0, 2, 3, 1)), Tensor(np.zeros(shape), F32), Tensor(dy, F32), Tensor(np.zeros(shape), F32)
    pdesc = _param_desc(X.desc, PERSIST)
    G, B = _param(g.reshape(1, 3, 1, 1), pdesc), _param(b.reshape(1, 3, 1, 1), pdesc)
    RM, RV = _param(np.zeros((1, 3, 1, 1)), pdesc), _param(np.ones((1, 3, 1, 1)), pdesc)
    SM, SI, DG, DB = (_param(np.zeros((1, 3, 1, 1)), pdesc) for _ in range(4))
    assert c.cudnnBatchNormalizationForwardTrainingEx(
        handle, PERSIST, 0, 1.0, 0.0, X.desc, X.ptr, None, None, Y.desc, Y.ptr, pdesc, G.ptr, B.ptr, 0.1, RM.ptr,
        RV.ptr, 1e-5, SM.ptr, SI.ptr, None, None, 0, None, 0) == OK
    assert c.cudnnBatchNormalizationBackwardEx(
        handle, PERSIST, 0, 1.0, 0.0, 1.0, 0.0, X.desc, X.ptr, None, None, DY.desc, DY.ptr, None, None, DX.desc,
        DX.ptr, pdesc, G.ptr, None, DG.ptr, DB.ptr, 1e-5, SM.ptr, SI.ptr, None, None, 0, None, 0) == OK
    xt = torch.tensor(x.astype(np.float32).astype(np.float64), requires_grad=True)
    gt = torch.tensor(g.astype(np.float32).astype(np.float64), requires_grad=True)
    bt = torch.tensor(b.astype(np.float32).astype(np.float64), requires_grad=True)
    rm, rv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    yt = torch.nn.functional.batch_norm(xt, rm, rv, gt, bt, training=True, momentum=0.1, eps=1e-5)
    yt.backward(torch.tensor(dy.astype(np.float32).astype(np.float64)))
    np.testing.assert_allclose(Y.read(), yt.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(DX.read(), xt.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(DG.read().ravel(), gt.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(DB.read().ravel(), bt.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(RM.read().ravel(), rm.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(RV.read().ravel(), rv.numpy(), rtol=1e-5, atol=1e-6)


# DOUBLE: f64 compute end to end, against float64 references at ~1e-10 --------------------------------------

DOUBLE_CASES = [(mode, lay, bn_ops, shape) for mode, lay, bn_ops, shape in itertools.product(
    (SPATIAL, PER_ACT), ("nchw", "nhwc"), (0, 1, 2), ((3, 4, 5, 6), (2, 3, 2, 3, 4)))]


def _double_id(case):
    mode, lay, bn_ops, shape = case
    return f"{c.cudnnBatchNormMode_t(mode).name[16:]}-{lay}-ops{bn_ops}-{len(shape)}d"


@pytest.mark.parametrize("case", DOUBLE_CASES, ids=_double_id)
def test_batch_norm_double_training_step(handle, case):
    """DOUBLE x with DOUBLE statistics: ForwardTrainingEx -> BackwardEx with blending (alpha/beta on data
    and parameter gradients), saved or recomputed statistics, then ForwardInference, all against float64
    references with rtol 1e-10 — f32 arithmetic anywhere would miss by ~1e-7."""
    mode, lay, bn_ops, shape = case
    idx = DOUBLE_CASES.index(case)
    rng = np.random.default_rng(500 + idx)
    per_act = mode == PER_ACT
    order = _order(LAYOUTS[lay][0], len(shape))
    act_mode = (c.CUDNN_ACTIVATION_RELU, c.CUDNN_ACTIVATION_CLIPPED_RELU)[idx % 2]
    act = "identity" if bn_ops == 0 else ("relu" if act_mode == c.CUDNN_ACTIVATION_RELU else "clipped_relu")
    coef = 1.0 / 3.0                                     # not an f32 value: the ceiling must stay f64
    alpha, beta = ((1.0, 0.0), (0.75, 0.5), (2.0, 0.0))[idx % 3]
    x = rng.standard_normal(shape) * 2 + 0.5
    X = Tensor(x, F64, order)
    y0 = rng.standard_normal(shape) if beta else np.full(shape, np.nan)
    Y = Tensor(y0, F64, order)
    z = rng.standard_normal(shape) if bn_ops == 2 else None
    Z = Tensor(z, F64, order) if z is not None else None
    pdesc = _param_desc(X.desc, mode)
    assert c.cudnnGetTensorNdDescriptor(pdesc, 8)[0] == F64         # cudnnDeriveBNTensorDescriptor: DOUBLE
    pshape = (1, *shape[1:]) if per_act else (1, shape[1], *[1] * (len(shape) - 2))
    P = lambda v: Tensor(v, F64)                          # noqa: E731
    g, b = rng.standard_normal(pshape), rng.standard_normal(pshape)
    G, B = P(g), P(b)
    rm0, rv0 = rng.standard_normal(pshape), rng.uniform(0.5, 2, pshape)
    RM, RV, SM, SI = P(rm0), P(rv0), P(np.zeros(pshape)), P(np.zeros(pshape))
    for t in (G, B, RM, RV, SM, SI):
        t.desc = pdesc
    A, _ = c.cudnnCreateActivationDescriptor()
    assert c.cudnnSetActivationDescriptor(A, act_mode, 0, coef) == OK
    eps, factor = 1e-4 / 3.0, 0.1                         # neither is an f32 value
    ws, st = c.cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
        handle, mode, bn_ops, X.desc, Z.desc if Z else None, Y.desc, pdesc, A)
    assert st == OK, acl.get_recent_err_msg()
    rs, st = c.cudnnGetBatchNormalizationTrainingExReserveSpaceSize(handle, mode, bn_ops, A, X.desc)
    assert st == OK and (rs == 0) == (bn_ops == 0)
    W, R = Buf(max(ws, 1)), Buf(max(rs, 1))
    st = c.cudnnBatchNormalizationForwardTrainingEx(
        handle, mode, bn_ops, alpha, beta, X.desc, X.ptr, Z.desc if Z else None, Z.ptr if Z else None, Y.desc, Y.ptr,
        pdesc, G.ptr, B.ptr, factor, RM.ptr, RV.ptr, eps, SM.ptr, SI.ptr, A, W.data if ws else None, ws,
        R.data if rs else None, rs)
    assert st == OK, acl.get_recent_err_msg()
    out, bnv, m, v, inv, vu = bn_forward_ref(x, g, b, eps, per_act, z, act, coef)
    tol = 1e-10
    np.testing.assert_allclose(Y.read(), alpha * out + (beta * y0 if beta else 0), rtol=tol, atol=tol)
    np.testing.assert_allclose(SM.read(), m.reshape(pshape), rtol=tol, atol=tol)
    np.testing.assert_allclose(SI.read(), inv.reshape(pshape), rtol=tol, atol=tol)
    np.testing.assert_allclose(RM.read(), (1 - factor) * rm0 + factor * m.reshape(pshape), rtol=tol, atol=tol)
    np.testing.assert_allclose(RV.read(), (1 - factor) * rv0 + factor * vu.reshape(pshape), rtol=tol, atol=tol)

    dy = rng.standard_normal(shape)
    DY = Tensor(dy, F64, order)
    aD, bD, aP, bP = ((1.0, 0.0, 1.0, 0.0), (0.5, 0.25, 2.0, 1.0), (1.0, 0.0, 0.5, 0.0))[idx % 3]
    dx0 = rng.standard_normal(shape) if bD else np.full(shape, np.nan)
    DX = Tensor(dx0, F64, order)
    DZ = Tensor(np.full(shape, np.nan), F64, order) if bn_ops == 2 else None
    dg0, db0 = rng.standard_normal(pshape), rng.standard_normal(pshape)
    DG, DB = P(dg0 if bP else np.full(pshape, np.nan)), P(db0 if bP else np.full(pshape, np.nan))
    DG.desc = DB.desc = pdesc
    bws, st = c.cudnnGetBatchNormalizationBackwardExWorkspaceSize(
        handle, mode, bn_ops, X.desc, Y.desc, DY.desc, DZ.desc if DZ else None, DX.desc, pdesc, A)
    assert st == OK, acl.get_recent_err_msg()
    W2 = Buf(max(bws, 1))
    saved = idx % 2 == 0                                  # else recomputed (aclnnBatchNormStats in f64)
    st = c.cudnnBatchNormalizationBackwardEx(
        handle, mode, bn_ops, aD, bD, aP, bP, X.desc, X.ptr, Y.desc, Y.ptr, DY.desc, DY.ptr,
        DZ.desc if DZ else None, DZ.ptr if DZ else None, DX.desc, DX.ptr, pdesc, G.ptr, B.ptr, DG.ptr, DB.ptr, eps,
        SM.ptr if saved else None, SI.ptr if saved else None, A, W2.data if bws else None, bws,
        R.data if rs else None, rs)
    assert st == OK, acl.get_recent_err_msg()
    mask = None
    if act == "relu":
        mask = bnv > 0
    elif act == "clipped_relu":
        mask = (bnv > 0) & (bnv < coef)
    dxr, dgr, dbr, dyb = bn_backward_ref(x, dy, g, eps, per_act, mask)
    np.testing.assert_allclose(DX.read(), aD * dxr + (bD * dx0 if bD else 0), rtol=tol, atol=tol)
    np.testing.assert_allclose(DG.read(), aP * dgr.reshape(pshape) + (bP * dg0 if bP else 0), rtol=tol, atol=tol)
    np.testing.assert_allclose(DB.read(), aP * dbr.reshape(pshape) + (bP * db0 if bP else 0), rtol=tol, atol=tol)
    if DZ is not None:
        np.testing.assert_array_equal(DZ.read(), dyb)     # dz = dy masked: exact

    # inference with the updated running statistics (aclnnBatchNorm, training = false, in f64)
    YI = Tensor(np.full(shape, np.nan), F64, order)
    assert c.cudnnBatchNormalizationForwardInference(handle, mode, 1.0, 0.0, X.desc, X.ptr, YI.desc, YI.ptr, pdesc,
                                                     G.ptr, B.ptr, RM.ptr, RV.ptr, eps) == OK
    rm1, rv1 = RM.read(), RV.read()
    np.testing.assert_allclose(YI.read(), (x - rm1) / np.sqrt(rv1 + eps) * g + b, rtol=tol, atol=tol)
    for t in (X, Y, Z, G, B, RM, RV, SM, SI, DY, DX, DZ, DG, DB, YI):
        if t is not None:
            assert t.buf.guards_intact()
            t.buf.free()
    for buf in (W, R, W2):
        assert buf.guards_intact()
        buf.free()


@pytest.mark.parametrize("channels_last", [False, True], ids=["nchw", "nhwc"])
def test_double_matches_pytorch_float64_autograd(handle, channels_last):
    """DOUBLE batch norm (SPATIAL_PERSISTENT, blending off) against torch.nn.functional.batch_norm in
    float64 with autograd: y, dx, dscale, dbias, running statistics to ~1e-12."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(31 + channels_last)
    shape = (4, 3, 5, 6)
    x, dy = rng.standard_normal(shape) * 3 + 1.25, rng.standard_normal(shape)
    g, b = rng.standard_normal(3), rng.standard_normal(3)
    order = (0, 2, 3, 1) if channels_last else None
    X, Y = Tensor(x, F64, order), Tensor(np.zeros(shape), F64, order)
    DY, DX = Tensor(dy, F64, order), Tensor(np.zeros(shape), F64, order)
    pdesc = _param_desc(X.desc, PERSIST)
    P = [Tensor(v, F64) for v in (g.reshape(1, 3, 1, 1), b.reshape(1, 3, 1, 1), np.zeros((1, 3, 1, 1)),
                                  np.ones((1, 3, 1, 1)), *(np.zeros((1, 3, 1, 1)) for _ in range(4)))]
    for t in P:
        t.desc = pdesc
    G, B, RM, RV, SM, SI, DG, DB = P
    momentum, eps = 0.1, 1e-5
    assert c.cudnnBatchNormalizationForwardTrainingEx(
        handle, PERSIST, 0, 1.0, 0.0, X.desc, X.ptr, None, None, Y.desc, Y.ptr, pdesc, G.ptr, B.ptr, momentum, RM.ptr,
        RV.ptr, eps, SM.ptr, SI.ptr, None, None, 0, None, 0) == OK
    assert c.cudnnBatchNormalizationBackwardEx(
        handle, PERSIST, 0, 1.0, 0.0, 1.0, 0.0, X.desc, X.ptr, None, None, DY.desc, DY.ptr, None, None, DX.desc,
        DX.ptr, pdesc, G.ptr, None, DG.ptr, DB.ptr, eps, SM.ptr, SI.ptr, None, None, 0, None, 0) == OK
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    gt = torch.tensor(g, dtype=torch.float64, requires_grad=True)
    bt = torch.tensor(b, dtype=torch.float64, requires_grad=True)
    rm, rv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    yt = torch.nn.functional.batch_norm(xt, rm, rv, gt, bt, training=True, momentum=momentum, eps=eps)
    yt.backward(torch.tensor(dy, dtype=torch.float64))
    tol = dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(Y.read(), yt.detach().numpy(), **tol)
    np.testing.assert_allclose(DX.read(), xt.grad.numpy(), **tol)
    np.testing.assert_allclose(DG.read().ravel(), gt.grad.numpy(), **tol)
    np.testing.assert_allclose(DB.read().ravel(), bt.grad.numpy(), **tol)
    np.testing.assert_allclose(RM.read().ravel(), rm.numpy(), **tol)
    np.testing.assert_allclose(RV.read().ravel(), rv.numpy(), **tol)
    for t in (X, Y, DY, DX, *P):
        assert t.buf.guards_intact()
        t.buf.free()


# statuses: every documented BAD_PARAM / NOT_SUPPORTED writes nothing ---------------------------------------

def _fwd_setup():
    rng = np.random.default_rng(11)
    shape = (2, 3, 4, 5)
    x = rng.standard_normal(shape)
    X, Y = Tensor(x, F32), Tensor(np.full(shape, 7.0), F32)
    pdesc = _param_desc(X.desc, SPATIAL)
    P = {n: _param(rng.standard_normal((1, 3, 1, 1)), pdesc) for n in ("g", "b", "rm", "rv", "sm", "si")}
    A, _ = c.cudnnCreateActivationDescriptor()
    return X, Y, pdesc, P, A


def _fwd_args(h, X, Y, pdesc, P, A, **over):
    args = dict(handle=h, mode=SPATIAL, bnOps=0, alpha=1.0, beta=0.0, xDesc=X.desc, xData=X.ptr, zDesc=None,
                zData=None, yDesc=Y.desc, yData=Y.ptr, bnScaleBiasMeanVarDesc=pdesc, bnScale=P["g"].ptr,
                bnBias=P["b"].ptr, exponentialAverageFactor=0.1, resultRunningMean=P["rm"].ptr,
                resultRunningVariance=P["rv"].ptr, epsilon=1e-5, resultSaveMean=P["sm"].ptr,
                resultSaveInvVariance=P["si"].ptr, activationDesc=A, workspace=None, workSpaceSizeInBytes=0,
                reserveSpace=None, reserveSpaceSizeInBytes=0)
    args.update(over)
    return args


def _desc(dims, dtype=F32, strides=None):
    d, _ = c.cudnnCreateTensorDescriptor()
    if strides is None:
        assert c.cudnnSetTensorNdDescriptorEx(d, 0, dtype, len(dims), list(dims)) == OK
    else:
        assert c.cudnnSetTensorNdDescriptor(d, dtype, len(dims), list(dims), list(strides)) == OK
    return d


FWD_ERRORS = [
    ("handle NULL", BAD, "handle", dict(handle=None)),
    ("mode 7", BAD, "mode", dict(mode=7)),
    ("bnOps 3", BAD, "bnOps", dict(bnOps=3)),
    ("alpha NULL", BAD, "alpha", dict(alpha=None)),
    ("beta NULL", BAD, "beta", dict(beta=None)),
    ("x NULL", BAD, "x", dict(xData=None)),
    ("y NULL", BAD, "y", dict(yData=None)),
    ("bnScale NULL", BAD, "bnScale", dict(bnScale=None)),
    ("bnBias NULL", BAD, "bnBias", dict(bnBias=None)),
    ("xDesc NULL", BAD, "xDesc", dict(xDesc=None)),
    ("xDesc 3-D", BAD, "xDesc", dict(xDesc=_desc((2, 3, 20)), yDesc=_desc((2, 3, 20)))),
    ("yDesc dims differ", BAD, "yDesc", dict(yDesc=_desc((2, 3, 5, 4)))),
    ("yDesc dtype differs", BAD, "yDesc", dict(yDesc=_desc((2, 3, 4, 5), F16))),
    ("bn desc per-activation dims in spatial mode", BAD, "bnScaleBiasMeanVarDesc",
     dict(bnScaleBiasMeanVarDesc=_desc((1, 3, 4, 5)))),
    ("bn desc HALF", BAD, "bnScaleBiasMeanVarDesc", dict(bnScaleBiasMeanVarDesc=_desc((1, 3, 1, 1), F16))),
    ("one running NULL", BAD, "resultRunningMean", dict(resultRunningVariance=None)),
    ("one save NULL", BAD, "resultSaveMean", dict(resultSaveMean=None)),
    ("epsilon < 0", BAD, "epsilon", dict(epsilon=-1e-3)),
    ("epsilon NaN", BAD, "epsilon", dict(epsilon=float("nan"))),
    ("activation NULL with BN_ACTIVATION", BAD, "activationDesc", dict(bnOps=1, activationDesc=None)),
    ("reserve NULL with BN_ACTIVATION", BAD, "reserveSpace", dict(bnOps=1)),
    ("z NULL with BN_ADD_ACTIVATION", BAD, "zDesc", dict(bnOps=2, reserveSpace=1)),
    ("DOUBLE data, FLOAT params", BAD, "bnScaleBiasMeanVarDesc",
     dict(xDesc=_desc((2, 3, 4, 5), F64), yDesc=_desc((2, 3, 4, 5), F64))),
    ("FLOAT data, DOUBLE params", BAD, "bnScaleBiasMeanVarDesc", dict(bnScaleBiasMeanVarDesc=_desc((1, 3, 1, 1), F64))),
    ("INT8 data", UNSUP, "xDesc", dict(xDesc=_desc((2, 3, 4, 5), c.CUDNN_DATA_INT8),
                                       yDesc=_desc((2, 3, 4, 5), c.CUDNN_DATA_INT8))),
    ("workspace too small", BAD, "workSpaceSizeInBytes", dict(workspace="ws", workSpaceSizeInBytes=1)),
    ("x outside any allocation", BAD, "input", dict(xData=8 << 40)),
]


@pytest.mark.parametrize("note,status,name,over", FWD_ERRORS, ids=[e[0] for e in FWD_ERRORS])
def test_forward_errors_write_nothing(handle, note, status, name, over):
    X, Y, pdesc, P, A = _fwd_setup()
    W = Buf(4096)
    if over.get("workspace") == "ws":
        over = dict(over, workspace=W.data)
        assert c.cudnnSetTensor4dDescriptorEx(X.desc, F32, 2, 3, 4, 5, 60, 20, 5, 1) == OK
    if over.get("reserveSpace") == 1:
        over = dict(over, reserveSpace=W.data, reserveSpaceSizeInBytes=4096)
    if "handle" not in over:
        over = dict(over)
    bufs = [X, Y, *P.values()]
    snap = [t.buf.raw() for t in bufs]
    st = c.cudnnBatchNormalizationForwardTrainingEx(**_fwd_args(handle, X, Y, pdesc, P, A, **over))
    msg = acl.get_recent_err_msg() or ""
    assert st == status, msg
    assert name in msg, msg
    acl.rt.synchronize_device()
    assert [t.buf.raw() for t in bufs] == snap


BWD_ERRORS = [
    ("alphaDataDiff NULL", BAD, "alphaDataDiff", dict(alphaDataDiff=None)),
    ("betaParamDiff NULL", BAD, "betaParamDiff", dict(betaParamDiff=None)),
    ("dy NULL", BAD, "dy", dict(dy=None)),
    ("dx NULL", BAD, "dx", dict(dx=None)),
    ("dBnScaleResult NULL", BAD, "dBnScaleResult", dict(dBnScaleResult=None)),
    ("dBnBiasResult NULL", BAD, "dBnBiasResult", dict(dBnBiasResult=None)),
    ("bnScale NULL", BAD, "bnScale", dict(bnScale=None)),
    ("one saved NULL", BAD, "savedMean", dict(savedInvVariance=None)),
    ("dxDesc dims differ", BAD, "dxDesc", dict(dxDesc=_desc((2, 3, 5, 4)))),
    ("dyDesc dtype differs", BAD, "dyDesc", dict(dyDesc=_desc((2, 3, 4, 5), BF16))),
    ("dBnScaleBiasDesc wrong", BAD, "dBnScaleBiasDesc", dict(dBnScaleBiasDesc=_desc((1, 4, 1, 1)))),
    ("epsilon negative", BAD, "epsilon", dict(epsilon=-1.0)),
]


@pytest.mark.parametrize("note,status,name,over", BWD_ERRORS, ids=[e[0] for e in BWD_ERRORS])
def test_backward_errors_write_nothing(handle, note, status, name, over):
    X, Y, pdesc, P, _ = _fwd_setup()
    DX = Tensor(np.full(X.dims, 3.0), F32)
    args = dict(handle=handle, mode=SPATIAL, alphaDataDiff=1.0, betaDataDiff=0.0, alphaParamDiff=1.0,
                betaParamDiff=0.0, xDesc=X.desc, x=X.ptr, dyDesc=Y.desc, dy=Y.ptr, dxDesc=DX.desc, dx=DX.ptr,
                dBnScaleBiasDesc=pdesc, bnScale=P["g"].ptr, dBnScaleResult=P["rm"].ptr, dBnBiasResult=P["rv"].ptr,
                epsilon=1e-5, savedMean=P["sm"].ptr, savedInvVariance=P["si"].ptr)
    args.update(over)
    bufs = [X, Y, DX, *P.values()]
    snap = [t.buf.raw() for t in bufs]
    st = c.cudnnBatchNormalizationBackward(**args)
    msg = acl.get_recent_err_msg() or ""
    assert st == status and name in msg, msg
    assert [t.buf.raw() for t in bufs] == snap


def test_normalization_statuses(handle):
    X, Y, pdesc, P, A = _fwd_setup()
    snap = Y.buf.raw()
    common = (1.0, 0.0, X.desc, X.ptr, pdesc, P["g"].ptr, P["b"].ptr, 0.1, pdesc, P["rm"].ptr, P["rv"].ptr, 1e-5,
              None, None, None, None, None, Y.desc, Y.ptr, None, 0, None, 0)
    assert c.cudnnNormalizationForwardTraining(handle, 1, 0, 0, *common, 2) == UNSUP        # groupCnt 2
    assert c.cudnnNormalizationForwardTraining(handle, 2, 0, 0, *common, 1) == BAD          # mode
    assert c.cudnnNormalizationForwardTraining(handle, 1, 0, 5, *common, 1) == BAD          # algo
    assert c.cudnnNormalizationForwardTraining(handle, 1, 3, 0, *common, 1) == BAD          # normOps
    assert c.cudnnGetNormalizationTrainingReserveSpaceSize(handle, 1, 0, 0, None, X.desc, 0)[1] == UNSUP
    assert Y.buf.raw() == snap
    assert c.cudnnNormalizationForwardTraining(handle, 1, 0, 0, *common, 1) == OK


# activation (row 2000) ---------------------------------------------------------------------------------

def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


ACT_REF = {   # mode: (forward f(x), backward g(dy, x, y)), coef 0.8, swish beta 1.5
    c.CUDNN_ACTIVATION_SIGMOID: (_sigmoid, lambda dy, x, y: dy * y * (1 - y)),
    c.CUDNN_ACTIVATION_RELU: (lambda x: np.maximum(x, 0), lambda dy, x, y: dy * (x > 0)),
    c.CUDNN_ACTIVATION_TANH: (np.tanh, lambda dy, x, y: dy * (1 - y * y)),
    c.CUDNN_ACTIVATION_CLIPPED_RELU: (lambda x: np.clip(x, 0, 0.8), lambda dy, x, y: dy * ((x > 0) & (x < 0.8))),
    c.CUDNN_ACTIVATION_ELU: (lambda x: np.where(x > 0, x, 0.8 * np.expm1(x)),
                             lambda dy, x, y: np.where(x > 0, dy, dy * 0.8 * np.exp(x))),
    c.CUDNN_ACTIVATION_SWISH: (lambda x: x * _sigmoid(1.5 * x),
                               lambda dy, x, y: dy * (_sigmoid(1.5 * x) + 1.5 * x * _sigmoid(1.5 * x)
                                                      * (1 - _sigmoid(1.5 * x)))),
}


@pytest.mark.parametrize("mode", list(ACT_REF), ids=lambda m: c.cudnnActivationMode_t(m).name[17:])
@pytest.mark.parametrize("dt", [F32, F16, BF16, F64], ids=lambda d: c.cudnnDataType_t(d).name[11:])
def test_activation_forward_backward(handle, mode, dt):
    rng = np.random.default_rng(20 + mode)
    shape = (2, 3, 4, 5) if dt != F64 else (2, 3, 2, 3, 4)
    order = (0, 2, 3, 1) if dt == F16 else None
    x = rng.standard_normal(shape) * 2
    x[np.abs(x) < 1e-2] = 0.5                        # keep away from the kinks
    x[np.abs(x - 0.8) < 1e-2] = 0.5
    A, _ = c.cudnnCreateActivationDescriptor()
    assert c.cudnnSetActivationDescriptor(A, mode, c.CUDNN_NOT_PROPAGATE_NAN, 0.8) == OK
    assert c.cudnnSetActivationDescriptorSwishBeta(A, 1.5) == OK
    X, Y = Tensor(x, dt, order), Tensor(np.full(shape, np.nan), dt, order)
    xr = X.rounded(x)
    f, df = ACT_REF[mode]
    assert c.cudnnActivationForward(handle, A, 1.0, X.desc, X.ptr, 0.0, Y.desc, Y.ptr) == OK, acl.get_recent_err_msg()
    tol = TOL.get(dt, 1e-10) * 4
    np.testing.assert_allclose(Y.read(), f(xr), rtol=tol, atol=tol)
    y = Y.read()
    dy = rng.standard_normal(shape)
    DY = Tensor(dy, dt, order)
    dx0 = rng.standard_normal(shape)
    DX = Tensor(dx0, dt, order)
    assert c.cudnnActivationBackward(handle, A, 0.5, Y.desc, Y.ptr, DY.desc, DY.ptr, X.desc, X.ptr, 2.0, DX.desc,
                                     DX.ptr) == OK, acl.get_recent_err_msg()
    want = 0.5 * df(DY.rounded(dy), xr, y) + 2.0 * DX.rounded(dx0)
    np.testing.assert_allclose(DX.read(), want, rtol=tol * 4, atol=tol * 4)
    # in place dx = dy
    assert c.cudnnActivationBackward(handle, A, 1.0, Y.desc, Y.ptr, DY.desc, DY.ptr, X.desc, X.ptr, 0.0, DY.desc,
                                     DY.ptr) == OK
    np.testing.assert_allclose(DY.read(), df(DY.rounded(dy), xr, y), rtol=tol * 4, atol=tol * 4)
    for t in (X, Y, DY, DX):
        assert t.buf.guards_intact()


def test_activation_statuses(handle):
    rng = np.random.default_rng(5)
    shape = (2, 3, 4, 5)
    X, Y = Tensor(rng.standard_normal(shape), F32), Tensor(np.zeros(shape), F32)
    Xn = Tensor(rng.standard_normal(shape), F32, (0, 2, 3, 1))
    H = Tensor(rng.standard_normal(shape), F16)
    A, _ = c.cudnnCreateActivationDescriptor()
    I, _ = c.cudnnCreateActivationDescriptor()
    c.cudnnSetActivationDescriptor(I, c.CUDNN_ACTIVATION_IDENTITY, 0, 0.0)
    snap = Y.buf.raw()
    bwd = lambda **o: c.cudnnActivationBackward(**{**dict(   # noqa: E731
        handle=handle, activationDesc=A, alpha=1.0, yDesc=X.desc, y=X.ptr, dyDesc=X.desc, dy=X.ptr, xDesc=X.desc,
        x=X.ptr, beta=0.0, dxDesc=Y.desc, dx=Y.ptr), **o})
    assert bwd(activationDesc=I) == BAD
    assert bwd(activationDesc=None) == BAD
    assert bwd(alpha=None) == BAD
    assert bwd(dy=None) == BAD
    assert bwd(dxDesc=H.desc, dx=H.ptr) == UNSUP                     # data types differ
    assert bwd(xDesc=Xn.desc, x=Xn.ptr) == UNSUP                     # x and dx strides differ
    assert bwd(dyDesc=Xn.desc, dy=Xn.ptr) == UNSUP                   # y and dy strides differ
    assert bwd(dyDesc=Xn.desc, dy=Y.ptr, xDesc=Xn.desc, yDesc=Xn.desc) == BAD   # in place, strides differ
    assert Y.buf.raw() == snap


# softmax (row 2018) --------------------------------------------------------------------------------------

def _softmax_ref(x, instance, log):
    ax = tuple(range(1, x.ndim)) if instance else (1,)
    z = x - x.max(ax, keepdims=True)
    s = np.exp(z).sum(ax, keepdims=True)
    return (z - np.log(s), ax) if log else (np.exp(z) / s, ax)


@pytest.mark.parametrize("algo", [c.CUDNN_SOFTMAX_FAST, c.CUDNN_SOFTMAX_ACCURATE, c.CUDNN_SOFTMAX_LOG])
@pytest.mark.parametrize("mode", [c.CUDNN_SOFTMAX_MODE_INSTANCE, c.CUDNN_SOFTMAX_MODE_CHANNEL])
@pytest.mark.parametrize("lay", ["nchw", "nhwc"])
@pytest.mark.parametrize("dt", [F32, F16, BF16, F64], ids=lambda d: c.cudnnDataType_t(d).name[11:])
def test_softmax_forward_backward(handle, algo, mode, lay, dt):
    rng = np.random.default_rng(30 + algo * 7 + mode)
    shape = (2, 5, 3, 4)
    order = (0, 2, 3, 1) if lay == "nhwc" else None
    x = rng.standard_normal(shape) * 3
    X, Y = Tensor(x, dt, order), Tensor(np.full(shape, np.nan), dt, order)
    assert c.cudnnSoftmaxForward(handle, algo, mode, 1.0, X.desc, X.ptr, 0.0, Y.desc, Y.ptr) == OK, \
        acl.get_recent_err_msg()
    log = algo == c.CUDNN_SOFTMAX_LOG
    ref, ax = _softmax_ref(X.rounded(x), mode == c.CUDNN_SOFTMAX_MODE_INSTANCE, log)
    tol = TOL.get(dt, 1e-12) * 4            # DOUBLE: computed in f64, so ~1e-12 against the float64 reference
    np.testing.assert_allclose(Y.read(), ref, rtol=tol, atol=tol)
    y = Y.read()
    dy = rng.standard_normal(shape)
    DY, DX = Tensor(dy, dt, order), Tensor(np.ones(shape), dt)
    assert c.cudnnSoftmaxBackward(handle, algo, mode, 2.0, Y.desc, Y.ptr, DY.desc, DY.ptr, 0.5, DX.desc, DX.ptr) == OK, \
        acl.get_recent_err_msg()
    g = DY.rounded(dy)
    dxr = g - np.exp(y) * g.sum(ax, keepdims=True) if log else y * (g - (g * y).sum(ax, keepdims=True))
    np.testing.assert_allclose(DX.read(), 2 * dxr + 0.5, rtol=tol * 4, atol=tol * 4)
    for t in (X, Y, DY, DX):
        assert t.buf.guards_intact()


def test_softmax_statuses(handle):
    rng = np.random.default_rng(6)
    shape = (2, 3, 4, 5)
    Y, DY, DX = Tensor(rng.standard_normal(shape), F32), Tensor(rng.standard_normal(shape), F32), \
        Tensor(np.zeros(shape), F32)
    DYn = Tensor(rng.standard_normal(shape), F32, (0, 2, 3, 1))
    snap = DX.buf.raw()
    args = dict(handle=handle, algo=1, mode=1, alpha=1.0, yDesc=Y.desc, y=Y.ptr, dyDesc=DY.desc, dy=DY.ptr, beta=0.0,
                dxDesc=DX.desc, dx=DX.ptr)
    for over, want in ((dict(algo=3), BAD), (dict(mode=2), BAD), (dict(dyDesc=DYn.desc, dy=DYn.ptr), BAD),
                       (dict(dxDesc=_desc((2, 3, 5, 4))), BAD), (dict(dxDesc=_desc(shape, F16)), BAD),
                       (dict(yDesc=_desc(shape, c.CUDNN_DATA_INT8), dyDesc=_desc(shape, c.CUDNN_DATA_INT8),
                             dxDesc=_desc(shape, c.CUDNN_DATA_INT8)), UNSUP),
                       (dict(beta=None), BAD), (dict(y=None), BAD)):
        assert c.cudnnSoftmaxBackward(**{**args, **over}) == want, (over, acl.get_recent_err_msg())
    assert DX.buf.raw() == snap


# dropout (row 2006) -------------------------------------------------------------------------------------

@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
@pytest.mark.parametrize("dt", [F32, F16, BF16, F64], ids=lambda d: c.cudnnDataType_t(d).name[11:])
def test_dropout_forward_backward(handle, p, dt):
    rng = np.random.default_rng(40)
    shape = (3, 4, 5, 7)
    x = rng.standard_normal(shape)
    X, Y = Tensor(x, dt), Tensor(np.full(shape, np.nan), dt)
    D, _ = c.cudnnCreateDropoutDescriptor()
    ssize, st = c.cudnnDropoutGetStatesSize(handle)
    assert st == OK and ssize > 0
    S = Buf(ssize)
    assert c.cudnnSetDropoutDescriptor(D, handle, p, S.data, ssize, 1234) == OK
    assert c.cudnnGetDropoutDescriptor(D, handle) == (p, S.data, 1234, OK)
    rsize, st = c.cudnnDropoutGetReserveSpaceSize(X.desc)
    assert st == OK and rsize >= np.prod(shape) / 8
    R = Buf(rsize)
    assert c.cudnnDropoutForward(handle, D, X.desc, X.ptr, Y.desc, Y.ptr, R.data, rsize) == OK, acl.get_recent_err_msg()
    bits = np.unpackbits(np.frombuffer(R.raw()[GUARD:GUARD + rsize], np.uint8), bitorder="little")
    keep = bits[:x.size].reshape(shape).astype(bool)
    xr = X.rounded(x)
    scale = 0.0 if p == 1 else 1 / (1 - p)
    tol = TOL.get(dt, 1e-12)                         # DOUBLE: the multiply in f64 (by the f64 1/(1 - p))
    fscale = scale if dt == F64 else np.float32(scale)
    np.testing.assert_allclose(Y.read(), np.where(keep, xr * fscale, 0), rtol=tol * 2, atol=tol)
    if p == 0.3:
        assert abs(1 - keep.mean() - p) < 0.08
    elif p == 0.0:
        assert keep.all()
    else:
        assert not keep.any()
    dy = rng.standard_normal(shape)
    DY, DX = Tensor(dy, dt), Tensor(np.full(shape, np.nan), dt)
    assert c.cudnnDropoutBackward(handle, D, DY.desc, DY.ptr, DX.desc, DX.ptr, R.data, rsize) == OK
    np.testing.assert_allclose(DX.read(), np.where(keep, DY.rounded(dy) * scale, 0), rtol=tol * 2, atol=tol)
    # a second forward draws a fresh mask (the state advanced); re-setting the seed repeats the first
    first = R.raw()
    assert c.cudnnDropoutForward(handle, D, X.desc, X.ptr, Y.desc, Y.ptr, R.data, rsize) == OK
    if 0 < p < 1:
        assert R.raw() != first
    assert c.cudnnSetDropoutDescriptor(D, handle, p, S.data, ssize, 1234) == OK
    assert c.cudnnDropoutForward(handle, D, X.desc, X.ptr, Y.desc, Y.ptr, R.data, rsize) == OK
    assert R.raw() == first
    # restore: a second descriptor on the same states continues the sequence (no reset)
    assert c.cudnnDropoutForward(handle, D, X.desc, X.ptr, Y.desc, Y.ptr, R.data, rsize) == OK
    second = R.raw()
    assert c.cudnnSetDropoutDescriptor(D, handle, p, S.data, ssize, 1234) == OK
    assert c.cudnnDropoutForward(handle, D, X.desc, X.ptr, Y.desc, Y.ptr, R.data, rsize) == OK
    D2, _ = c.cudnnCreateDropoutDescriptor()
    assert c.cudnnRestoreDropoutDescriptor(D2, handle, p, S.data, ssize, 1234) == OK
    assert c.cudnnGetDropoutDescriptor(D2, handle) == (p, S.data, 1234, OK)
    assert c.cudnnDropoutForward(handle, D2, X.desc, X.ptr, Y.desc, Y.ptr, R.data, rsize) == OK
    assert R.raw() == second                       # the draw after the first one, as with D
    for b in (S, R, X.buf, Y.buf, DY.buf, DX.buf):
        assert b.guards_intact()


def test_dropout_statuses(handle):
    shape = (2, 3, 4, 5)
    X, Y = Tensor(np.ones(shape), F32), Tensor(np.zeros(shape), F32)
    D, _ = c.cudnnCreateDropoutDescriptor()
    R = Buf(256)
    snap = Y.buf.raw()
    assert c.cudnnDropoutBackward(handle, D, X.desc, X.ptr, Y.desc, Y.ptr, R.data, 256) == BAD   # no states yet
    assert "states" in acl.get_recent_err_msg()
    S = Buf(32)
    assert c.cudnnSetDropoutDescriptor(D, handle, 1.5, S.data, 32, 1) == BAD
    assert c.cudnnSetDropoutDescriptor(D, handle, 0.5, S.data, 8, 1) == BAD
    assert c.cudnnSetDropoutDescriptor(D, handle, 0.5, S.data, 32, 1) == OK
    assert c.cudnnDropoutBackward(handle, D, X.desc, X.ptr, Y.desc, Y.ptr, R.data, 1) == BAD     # reserve short
    assert c.cudnnDropoutBackward(handle, D, X.desc, X.ptr, _desc((2, 3, 4, 6)), Y.ptr, R.data, 256) == BAD
    assert c.cudnnDropoutBackward(handle, D, X.desc, X.ptr, _desc(shape, F16), Y.ptr, R.data, 256) == BAD
    I8 = c.CUDNN_DATA_INT8                                                                        # not a dropout type
    assert c.cudnnDropoutBackward(handle, D, _desc(shape, I8), X.ptr, _desc(shape, I8), Y.ptr, R.data, 256) == UNSUP
    assert c.cudnnDropoutForward(handle, D, _desc(shape, I8), X.ptr, _desc(shape, I8), Y.ptr, R.data, 256) == UNSUP
    assert c.cudnnDropoutBackward(handle, D, X.desc, X.ptr, Y.desc, Y.ptr, None, 256) == BAD
    assert Y.buf.raw() == snap


# LRN and divisive normalization (rows 2013, 2005) ---------------------------------------------------------

def _lrn_ref(x, n, alpha, beta, k):
    C = x.shape[1]
    lo = (n - 1) // 2
    sq = x * x
    s = np.zeros_like(x)
    for c_ in range(C):
        for j in range(c_ - lo, c_ - lo + n):
            if 0 <= j < C:
                s[:, c_] += sq[:, j]
    return k + alpha / n * s


def test_lrn_descriptor():
    d, st = c.cudnnCreateLRNDescriptor()
    assert st == OK and c.cudnnGetLRNDescriptor(d) == (5, 1e-4, 0.75, 2.0, OK)
    assert c.cudnnSetLRNDescriptor(d, 3, 0.5, 0.6, 1.5) == OK and c.cudnnGetLRNDescriptor(d) == (3, 0.5, 0.6, 1.5, OK)
    for bad_args in ((0, 1.0, 0.75, 2.0), (17, 1.0, 0.75, 2.0), (5, 1.0, 0.001, 2.0), (5, 1.0, 0.75, 1e-6),
                     (5, None, 0.75, 2.0)):
        assert c.cudnnSetLRNDescriptor(d, *bad_args) == BAD, bad_args
    assert c.cudnnGetLRNDescriptor(d) == (3, 0.5, 0.6, 1.5, OK)
    assert c.cudnnDestroyLRNDescriptor(d) == OK and c.cudnnSetLRNDescriptor(d, 3, 1.0, 1.0, 1.0) == BAD


@pytest.mark.parametrize("n", [1, 4, 5])
@pytest.mark.parametrize("dt", [F32, F16, F64], ids=lambda d: c.cudnnDataType_t(d).name[11:])
def test_lrn_cross_channel(handle, n, dt):
    rng = np.random.default_rng(50 + n)
    shape = (2, 7, 3, 4)
    alpha, beta, k = 0.8, 0.75, 1.5
    D, _ = c.cudnnCreateLRNDescriptor()
    assert c.cudnnSetLRNDescriptor(D, n, alpha, beta, k) == OK
    x = rng.standard_normal(shape)
    order = (0, 2, 3, 1) if dt == F16 else None
    X, Y = Tensor(x, dt, order), Tensor(np.full(shape, np.nan), dt, order)
    assert c.cudnnLRNCrossChannelForward(handle, D, 0, 1.0, X.desc, X.ptr, 0.0, Y.desc, Y.ptr) == OK, \
        acl.get_recent_err_msg()
    xr = X.rounded(x)
    s = _lrn_ref(xr, n, alpha, beta, k)
    tol = TOL.get(dt, 1e-10) * 4
    np.testing.assert_allclose(Y.read(), xr * s ** -beta, rtol=tol, atol=tol)
    if n % 2 and dt == F64:
        torch = pytest.importorskip("torch")
        t = torch.nn.functional.local_response_norm(torch.tensor(xr), n, alpha, beta, k).numpy()
        np.testing.assert_allclose(Y.read(), t, rtol=1e-10, atol=1e-12)
    y = Y.read()
    dy = rng.standard_normal(shape)
    DY, DX = Tensor(dy, dt, order), Tensor(np.ones(shape), dt, order)
    assert c.cudnnLRNCrossChannelBackward(handle, D, 0, 2.0, Y.desc, Y.ptr, DY.desc, DY.ptr, X.desc, X.ptr, 0.5,
                                          DX.desc, DX.ptr) == OK, acl.get_recent_err_msg()
    g = DY.rounded(dy)
    C, lo = shape[1], (n - 1) // 2
    t_ = g * y / s
    acc = np.zeros_like(xr)
    for i in range(C):
        for c_ in range(C):
            if c_ - lo <= i <= c_ - lo + n - 1:
                acc[:, i] += t_[:, c_]
    dxr = g * s ** -beta - 2 * alpha * beta / n * xr * acc
    np.testing.assert_allclose(DX.read(), 2 * dxr + 0.5, rtol=tol * 8, atol=tol * 8)
    if dt == F64:
        torch = pytest.importorskip("torch")
        xt = torch.tensor(xr, requires_grad=True)
        flip = n % 2 == 0            # PyTorch's even window is the mirror of cuDNN's
        src = xt.flip(1) if flip else xt
        out = torch.nn.functional.local_response_norm(src, n, alpha, beta, k)
        (out.flip(1) if flip else out).backward(torch.tensor(g))
        np.testing.assert_allclose(DX.read(), 2 * xt.grad.numpy() + 0.5, rtol=1e-9, atol=1e-10)
    # statuses
    snap = DX.buf.raw()
    assert c.cudnnLRNCrossChannelBackward(handle, D, 1, 1.0, Y.desc, Y.ptr, DY.desc, DY.ptr, X.desc, X.ptr, 0.0,
                                          DX.desc, DX.ptr) == BAD
    assert c.cudnnLRNCrossChannelBackward(handle, D, 0, 1.0, Y.desc, None, DY.desc, DY.ptr, X.desc, X.ptr, 0.0,
                                          DX.desc, DX.ptr) == BAD
    assert c.cudnnLRNCrossChannelBackward(handle, D, 0, 1.0, Y.desc, Y.ptr, DY.desc, DY.ptr, X.desc, X.ptr, 0.0,
                                          _desc((2, 7, 4, 3), dt), DX.ptr) == UNSUP
    assert DX.buf.raw() == snap


def _divnorm_ref(x, m, n, alpha, beta, k):
    u = x - m
    S = x.ndim - 2
    lo = (n - 1) // 2
    sq = np.pad(u * u, [(0, 0), (0, 0)] + [(lo, n - 1 - lo)] * S)
    s = np.zeros_like(u)
    for off in np.ndindex(*([n] * S)):
        s += sq[(slice(None), slice(None), *[slice(o, o + u.shape[2 + i]) for i, o in enumerate(off)])]
    return u * (k + alpha / n ** S * s) ** -beta


@pytest.mark.parametrize("shape", [(2, 3, 5, 6), (1, 2, 3, 4, 5)])
@pytest.mark.parametrize("with_means", [False, True])
def test_divisive_normalization(handle, shape, with_means):
    rng = np.random.default_rng(60 + len(shape))
    n, alpha, beta, k = 3, 0.9, 0.6, 1.2
    D, _ = c.cudnnCreateLRNDescriptor()
    assert c.cudnnSetLRNDescriptor(D, n, alpha, beta, k) == OK
    x, m = rng.standard_normal(shape), rng.standard_normal(shape) * 0.3
    X, M, Y = Tensor(x, F64), Tensor(m, F64), Tensor(np.full(shape, np.nan), F64)
    T1, T2 = Buf(X.buf.nbytes), Buf(X.buf.nbytes)
    mp = M.ptr if with_means else None
    assert c.cudnnDivisiveNormalizationForward(handle, D, 0, 1.0, X.desc, X.ptr, mp, T1.data, T2.data, 0.0, Y.desc,
                                               Y.ptr) == OK, acl.get_recent_err_msg()
    mm = m if with_means else 0 * m
    np.testing.assert_allclose(Y.read(), _divnorm_ref(x, mm, n, alpha, beta, k), rtol=1e-10, atol=1e-12)
    dy = rng.standard_normal(shape)
    DY, DX, DM = Tensor(dy, F64), Tensor(np.zeros(shape), F64), Tensor(np.zeros(shape), F64)
    assert c.cudnnDivisiveNormalizationBackward(handle, D, 0, 1.0, X.desc, X.ptr, mp, DY.ptr, T1.data, T2.data, 0.0,
                                                DX.desc, DX.ptr, DM.ptr) == OK, acl.get_recent_err_msg()
    # numerical gradient of sum(dy * f(x)) in float64
    eps = 1e-6
    num = np.zeros_like(x)
    for idx in [tuple(rng.integers(0, d) for d in shape) for _ in range(6)]:
        xp_, xm_ = x.copy(), x.copy()
        xp_[idx] += eps
        xm_[idx] -= eps
        num[idx] = (np.sum(dy * _divnorm_ref(xp_, mm, n, alpha, beta, k))
                    - np.sum(dy * _divnorm_ref(xm_, mm, n, alpha, beta, k))) / (2 * eps)
        assert abs(DX.read()[idx] - num[idx]) < 1e-6 * (1 + abs(num[idx]))
        assert abs(DM.read()[idx] + num[idx]) < 1e-6 * (1 + abs(num[idx]))
    snap = DX.buf.raw()
    assert c.cudnnDivisiveNormalizationBackward(handle, D, 0, 1.0, X.desc, X.ptr, mp, DY.ptr, None, T2.data, 0.0,
                                                DX.desc, DX.ptr, DM.ptr) == BAD
    assert c.cudnnDivisiveNormalizationBackward(handle, D, 1, 1.0, X.desc, X.ptr, mp, DY.ptr, T1.data, T2.data, 0.0,
                                                DX.desc, DX.ptr, DM.ptr) == BAD
    assert DX.buf.raw() == snap


# spatial transformer (rows 2019, 2020) -----------------------------------------------------------------

@pytest.mark.parametrize("dt", [F32, F64], ids=lambda d: c.cudnnDataType_t(d).name[11:])
def test_spatial_transformer_matches_pytorch(handle, dt):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(70)
    N, C, Hin, Win, H, W = 2, 3, 5, 6, 4, 7
    st, _ = c.cudnnCreateSpatialTransformerDescriptor()
    assert c.cudnnSetSpatialTransformerNdDescriptor(st, 0, dt, 4, [N, C, H, W]) == OK
    # generic values: no sampling point lands on a pixel boundary, where the gradient jumps (an f32 grid
    # may sit on the other side of it than PyTorch's f64 one)
    theta = np.array([[[0.913, 0.217, 0.1071], [-0.1523, 1.1037, -0.0519]],
                      [[1.2071, -0.3113, 0.2093], [0.2531, 0.8089, 0.1137]]])
    x = rng.standard_normal((N, C, Hin, Win))
    TH = Tensor(theta, dt)
    G = Buf(N * H * W * 2 * np.dtype(NP[dt]).itemsize)
    X, Y = Tensor(x, dt), Tensor(np.full((N, C, H, W), np.nan), dt)
    assert c.cudnnSpatialTfGridGeneratorForward(handle, st, TH.ptr, G.data) == OK, acl.get_recent_err_msg()
    gh = np.frombuffer(G.raw()[GUARD:-GUARD], NP[dt]).reshape(N, H, W, 2).astype(np.float64)
    tt = torch.tensor(TH.rounded(theta), requires_grad=True)
    gt = torch.nn.functional.affine_grid(tt, (N, C, H, W), align_corners=True)
    tol = 1e-5 if dt == F32 else 1e-12
    np.testing.assert_allclose(gh, gt.detach().numpy(), rtol=tol, atol=tol)
    assert c.cudnnSpatialTfSamplerForward(handle, st, 1.0, X.desc, X.ptr, G.data, 0.0, Y.desc, Y.ptr) == OK, \
        acl.get_recent_err_msg()
    xt = torch.tensor(X.rounded(x), requires_grad=True)
    gg = torch.tensor(gh, requires_grad=True)
    yt = torch.nn.functional.grid_sample(xt, gg, "bilinear", "zeros", align_corners=True)
    np.testing.assert_allclose(Y.read(), yt.detach().numpy(), rtol=tol * 10, atol=tol * 10)
    dy = rng.standard_normal((N, C, H, W))
    DY = Tensor(dy, dt)
    yt.backward(torch.tensor(DY.rounded(dy)))
    dx0 = rng.standard_normal(x.shape)
    DX = Tensor(dx0, dt)
    DG = Buf(G.nbytes)
    acl.rt.memset(DG.data, G.nbytes, 0, G.nbytes)
    assert c.cudnnSpatialTfSamplerBackward(handle, st, 1.0, X.desc, X.ptr, 0.5, DX.desc, DX.ptr, 2.0, DY.desc, DY.ptr,
                                           G.data, 0.0, DG.data) == OK, acl.get_recent_err_msg()
    np.testing.assert_allclose(DX.read(), xt.grad.numpy() + 0.5 * DX.rounded(dx0), rtol=tol * 20, atol=tol * 20)
    dg = np.frombuffer(DG.raw()[GUARD:-GUARD], NP[dt]).reshape(N, H, W, 2).astype(np.float64)
    np.testing.assert_allclose(dg, 2 * gg.grad.numpy(), rtol=tol * 20, atol=tol * 20)
    # generator backward: dtheta from dgrid
    DT = Tensor(np.zeros((N, 2, 3)), dt)
    assert c.cudnnSpatialTfGridGeneratorBackward(handle, st, DG.data, DT.ptr) == OK, acl.get_recent_err_msg()
    gt.backward(torch.tensor(dg))
    np.testing.assert_allclose(DT.read(), tt.grad.numpy(), rtol=tol * 50, atol=tol * 50)
    for b in (G, DG, X.buf, Y.buf, DX.buf, DY.buf, DT.buf, TH.buf):
        assert b.guards_intact()


def test_spatial_transformer_statuses(handle):
    st, _ = c.cudnnCreateSpatialTransformerDescriptor()
    assert c.cudnnSetSpatialTransformerNdDescriptor(st, 1, F32, 4, [1, 1, 2, 2]) == BAD       # sampler type
    assert c.cudnnSetSpatialTransformerNdDescriptor(st, 0, F32, 5, [1, 1, 2, 2, 2]) == UNSUP
    assert c.cudnnSetSpatialTransformerNdDescriptor(st, 0, F32, 4, None) == BAD
    assert c.cudnnSpatialTfGridGeneratorForward(handle, st, 1, 2) == BAD                      # never set
    assert c.cudnnSetSpatialTransformerNdDescriptor(st, 0, F32, 4, [2, 3, 4, 5]) == OK
    X, Y = Tensor(np.ones((2, 3, 6, 6)), F32), Tensor(np.zeros((2, 3, 4, 4)), F32)
    G = Buf(2 * 4 * 5 * 2 * 4)
    snap = Y.buf.raw()
    assert c.cudnnSpatialTfSamplerForward(handle, st, 1.0, X.desc, X.ptr, G.data, 0.0, Y.desc, Y.ptr) == BAD  # dims
    assert c.cudnnSpatialTfSamplerForward(handle, st, 1.0, X.desc, X.ptr, None, 0.0, Y.desc, Y.ptr) == BAD
    assert c.cudnnSpatialTfGridGeneratorBackward(handle, st, None, G.data) == BAD
    assert Y.buf.raw() == snap


# pooling (row 2017) ---------------------------------------------------------------------------------------

POOL_MODES = [c.CUDNN_POOLING_MAX, c.CUDNN_POOLING_MAX_DETERMINISTIC, c.CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
              c.CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING]


def test_pooling_descriptor():
    d, st = c.cudnnCreatePoolingDescriptor()
    assert st == OK
    assert c.cudnnSetPooling2dDescriptor(d, c.CUDNN_POOLING_MAX, 0, 3, 2, 1, 0, 2, 1) == OK
    assert c.cudnnGetPooling2dDescriptor(d) == (0, 0, 3, 2, 1, 0, 2, 1, OK)
    x = _desc((2, 3, 7, 8))
    assert c.cudnnGetPooling2dForwardOutputDim(d, x) == (2, 3, 4, 7, OK)
    assert c.cudnnGetPoolingNdForwardOutputDim(d, x, 4) == ([2, 3, 4, 7], OK)
    assert c.cudnnSetPoolingNdDescriptor(d, 2, 1, 3, [2, 2, 3], [0, 1, 1], [2, 2, 2]) == OK
    assert c.cudnnGetPoolingNdDescriptor(d, 3) == (2, 1, 3, [2, 2, 3], [0, 1, 1], [2, 2, 2], OK)
    assert c.cudnnGetPooling2dDescriptor(d)[-1] == BAD
    assert c.cudnnGetPoolingNdForwardOutputDim(d, _desc((1, 2, 4, 6, 5)), 5) == ([1, 2, 2, 4, 3], OK)
    for bad_args in ((7, 0, 2, 2, 0, 0, 1, 1), (0, 2, 2, 2, 0, 0, 1, 1), (0, 0, 0, 2, 0, 0, 1, 1),
                     (0, 0, 2, 2, -1, 0, 1, 1), (0, 0, 2, 2, 0, 0, 0, 1)):
        assert c.cudnnSetPooling2dDescriptor(d, *bad_args) == BAD, bad_args
    assert c.cudnnSetPoolingNdDescriptor(d, 0, 0, 4, [2] * 4, [0] * 4, [1] * 4) == BAD
    assert c.cudnnGetPoolingNdDescriptor(d, 3)[3] == [2, 2, 3]            # unchanged by the refused calls
    assert c.cudnnDestroyPoolingDescriptor(d) == OK and c.cudnnGetPoolingNdDescriptor(d, 2)[-1] == BAD


@pytest.mark.parametrize("mode", POOL_MODES, ids=lambda m: c.cudnnPoolingMode_t(m).name[14:])
@pytest.mark.parametrize("S", [2, 3])
@pytest.mark.parametrize("dt", [F32, F16, BF16, F64], ids=lambda d: c.cudnnDataType_t(d).name[11:])
def test_pooling_forward_backward_matches_pytorch(handle, mode, S, dt):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(80 + mode + 10 * S)
    shape = (2, 3, 7, 8) if S == 2 else (2, 2, 5, 6, 7)
    win, pad, stride = ((3, 2), (1, 1), (2, 1)) if S == 2 else ((3, 2, 2), (1, 0, 1), (2, 2, 1))
    D, _ = c.cudnnCreatePoolingDescriptor()
    assert c.cudnnSetPoolingNdDescriptor(D, mode, c.CUDNN_PROPAGATE_NAN, S, win, pad, stride) == OK
    order = [0, *range(2, S + 2), 1] if dt == F16 else None          # channels-last for the HALF cases
    x = rng.standard_normal(shape)
    X = Tensor(x, dt, order)
    odims, st = c.cudnnGetPoolingNdForwardOutputDim(D, X.desc, S + 2)
    assert st == OK
    Y = Tensor(np.full(odims, np.nan), dt, order)
    assert c.cudnnPoolingForward(handle, D, 1.0, X.desc, X.ptr, 0.0, Y.desc, Y.ptr) == OK, acl.get_recent_err_msg()
    xt = torch.tensor(X.rounded(x), requires_grad=True)
    F = torch.nn.functional
    if mode in (c.CUDNN_POOLING_MAX, c.CUDNN_POOLING_MAX_DETERMINISTIC):
        yt = (F.max_pool2d if S == 2 else F.max_pool3d)(xt, win, stride, pad)
    else:
        cip = mode == c.CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
        yt = (F.avg_pool2d if S == 2 else F.avg_pool3d)(xt, win, stride, pad, count_include_pad=cip)
    tol = TOL.get(dt, 1e-12) * 4                                       # DOUBLE: f64 compute vs torch float64
    np.testing.assert_allclose(Y.read(), yt.detach().numpy(), rtol=tol, atol=tol)
    dy = rng.standard_normal(odims)
    DY = Tensor(dy, dt, order)
    dx0 = rng.standard_normal(shape)
    DX = Tensor(dx0, dt, order)
    assert c.cudnnPoolingBackward(handle, D, 2.0, Y.desc, Y.ptr, DY.desc, DY.ptr, X.desc, X.ptr, 0.5, DX.desc,
                                  DX.ptr) == OK, acl.get_recent_err_msg()
    yt.backward(torch.tensor(DY.rounded(dy)))
    np.testing.assert_allclose(DX.read(), 2 * xt.grad.numpy() + 0.5 * DX.rounded(dx0), rtol=tol * 4, atol=tol * 4)
    runs = []
    for _ in range(2):                  # beta 0: the same bits twice (a fixed-order gather, no atomics)
        assert c.cudnnPoolingBackward(handle, D, 2.0, Y.desc, Y.ptr, DY.desc, DY.ptr, X.desc, X.ptr, 0.0, DX.desc,
                                      DX.ptr) == OK
        runs.append(DX.buf.raw())
    assert runs[0] == runs[1]
    np.testing.assert_allclose(DX.read(), 2 * xt.grad.numpy(), rtol=tol * 4, atol=tol * 4)
    for t in (X, Y, DY, DX):
        assert t.buf.guards_intact()


def test_pooling_statuses(handle):
    D, _ = c.cudnnCreatePoolingDescriptor()
    c.cudnnSetPooling2dDescriptor(D, 0, 0, 2, 2, 0, 0, 2, 2)
    X, DX = Tensor(np.ones((1, 2, 4, 4)), F32), Tensor(np.zeros((1, 2, 4, 4)), F32)
    Y, DY = Tensor(np.ones((1, 2, 2, 2)), F32), Tensor(np.ones((1, 2, 2, 2)), F32)
    Yn = Tensor(np.ones((1, 2, 2, 2)), F32, (0, 2, 3, 1))
    snap = DX.buf.raw()
    bwd = lambda **o: c.cudnnPoolingBackward(**{**dict(     # noqa: E731
        handle=handle, poolingDesc=D, alpha=1.0, yDesc=Y.desc, y=Y.ptr, dyDesc=DY.desc, dy=DY.ptr, xDesc=X.desc,
        x=X.ptr, beta=0.0, dxDesc=DX.desc, dx=DX.ptr), **o})
    assert bwd(dyDesc=Yn.desc, dy=Yn.ptr) == BAD                        # y and dy strides differ
    assert bwd(dxDesc=_desc((1, 2, 4, 5))) == BAD                        # x and dx dims differ
    assert bwd(yDesc=_desc((1, 2, 3, 3)), dyDesc=_desc((1, 2, 3, 3))) == BAD   # not the output dims
    assert bwd(dxDesc=_desc((1, 2, 4, 4), F16)) == BAD                   # data types differ
    I8 = c.CUDNN_DATA_INT8
    i8 = dict(yDesc=_desc((1, 2, 2, 2), I8), dyDesc=_desc((1, 2, 2, 2), I8), xDesc=_desc((1, 2, 4, 4), I8),
              dxDesc=_desc((1, 2, 4, 4), I8))
    assert bwd(**i8) == UNSUP                                            # INT8: not a pooling data type
    assert bwd(poolingDesc=None) == BAD and bwd(dx=None) == BAD and bwd(alpha=None) == BAD
    c.cudnnSetPooling2dDescriptor(D, 0, 0, 2, 2, 2, 0, 2, 2)
    assert bwd(yDesc=_desc((1, 2, 4, 2)), dyDesc=_desc((1, 2, 4, 2))) == UNSUP   # padding over half the window
    assert DX.buf.raw() == snap
