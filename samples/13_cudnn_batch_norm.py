"""A cuDNN batch-norm training step ported line by line to ``aclnn_py.cudnn``: create the handle, the
descriptors, derive the BN descriptor, query workspace and reserve sizes, ForwardTrainingEx (BN +
ReLU) -> BackwardEx -> an SGD update of scale and bias with cudnnAddTensor; then the same layer
through the plain (non-Ex) calls and through the cuDNN 8 normalization API.

    C (cuDNN 8.9.7)                                   Python (aclnn_py.cudnn)
    cudnnCreate(&handle)                              handle, st = cudnnCreate()
    cudnnSetStream(handle, stream)                    st = cudnnSetStream(handle, stream)
    cudnnGet...WorkspaceSize(..., &size)              size, st = cudnnGet...WorkspaceSize(...)
    float alpha = 1, beta = 0; ...(&alpha, &beta)     ...(1.0, 0.0)
    void *x (cudaMalloc)                              x, ret = acl.rt.malloc(nbytes, 0)   (an int)

x is NHWC HALF (the layout of PyTorch's cuDNN path), statistics FLOAT. Every result is compared
with a float64 NumPy reference. Run it: ``python samples/13_cudnn_batch_norm.py``.
"""
import numpy as np

from aclnn_py import acl
from aclnn_py import cudnn as c
from acl_sample import CHECK_CUDNN, CHECK_RET, Verdicts, to_device, to_host

APIS = ["cudnnBatchNormalizationForwardTrainingEx", "cudnnBatchNormalizationBackwardEx",
        "cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize",
        "cudnnGetBatchNormalizationBackwardExWorkspaceSize", "cudnnGetBatchNormalizationTrainingExReserveSpaceSize",
        "cudnnBatchNormalizationForwardTraining", "cudnnBatchNormalizationBackward",
        "cudnnNormalizationForwardTraining", "cudnnNormalizationBackward",
        "cudnnGetNormalizationForwardTrainingWorkspaceSize", "cudnnGetNormalizationBackwardWorkspaceSize",
        "cudnnGetNormalizationTrainingReserveSpaceSize", "cudnnOpsTrainVersionCheck",
        "aclnnpyAxpby", "aclnnInplaceFillScalar"]     # the aclnn-py ops behind blending and cudnnSetTensor


def bn_reference(x, g, b, eps, dy=None, relu=False):
    """float64 forward (y, mean, invstd, unbiased var) and backward (dx, dg, db) over N, H, W (NCHW order)."""
    ax = (0, 2, 3)
    m, v = x.mean(ax, keepdims=True), x.var(ax, keepdims=True)
    inv = 1 / np.sqrt(v + eps)
    xh = (x - m) * inv
    y = xh * g.reshape(1, -1, 1, 1) + b.reshape(1, -1, 1, 1)
    if relu:
        y = np.maximum(y, 0)
    M = x.size // x.shape[1]
    if dy is None:
        return y, m.ravel(), inv.ravel(), v.ravel() * M / (M - 1)
    if relu:
        dy = dy * (y > 0)
    db, dg = dy.sum(ax), (dy * xh).sum(ax)
    dx = g.reshape(1, -1, 1, 1) * inv / M * (M * dy - db.reshape(1, -1, 1, 1) - xh * dg.reshape(1, -1, 1, 1))
    return dx, dg, db


def main() -> int:
    check = Verdicts(44)

    # 1. init, device, stream, cuDNN handle on that stream
    CHECK_RET(acl.init() == 0, "aclInit")
    CHECK_RET(acl.rt.set_device(0) == 0, "aclrtSetDevice")
    stream, ret = acl.rt.create_stream()
    CHECK_RET(ret == 0, "aclrtCreateStream")
    CHECK_CUDNN(c.cudnnOpsTrainVersionCheck(), "cudnnOpsTrainVersionCheck")
    handle, st = c.cudnnCreate()
    CHECK_CUDNN(st, "cudnnCreate")
    CHECK_CUDNN(c.cudnnSetStream(handle, stream), "cudnnSetStream")

    # 2. host data: an NHWC HALF batch, scale and bias, an upstream gradient
    N, C, H, W = 8, 16, 6, 6
    rng = np.random.default_rng(13)
    x_nhwc = (rng.standard_normal((N, H, W, C)) * 2 + 1).astype(np.float16)
    dy_nhwc = rng.standard_normal((N, H, W, C)).astype(np.float16)
    scale, bias = rng.uniform(0.5, 1.5, C).astype(np.float32), rng.standard_normal(C).astype(np.float32)
    eps, momentum, lr = 1e-5, 0.1, 0.01

    # 3. descriptors: x/y/dy/dx NHWC HALF, the derived BN descriptor (1xCx1x1 FLOAT), ReLU
    xDesc, _ = c.cudnnCreateTensorDescriptor()
    CHECK_CUDNN(c.cudnnSetTensor4dDescriptor(xDesc, c.CUDNN_TENSOR_NHWC, c.CUDNN_DATA_HALF, N, C, H, W), "SetTensor4d")
    bnDesc, _ = c.cudnnCreateTensorDescriptor()
    CHECK_CUDNN(c.cudnnDeriveBNTensorDescriptor(bnDesc, xDesc, c.CUDNN_BATCHNORM_SPATIAL_PERSISTENT), "DeriveBN")
    act, _ = c.cudnnCreateActivationDescriptor()
    CHECK_CUDNN(c.cudnnSetActivationDescriptor(act, c.CUDNN_ACTIVATION_RELU, c.CUDNN_NOT_PROPAGATE_NAN, 0.0), "act")

    # 4. device buffers
    x, dy = to_device(x_nhwc), to_device(dy_nhwc)
    y, dx = to_device(np.zeros_like(x_nhwc)), to_device(np.zeros_like(x_nhwc))
    g, b = to_device(scale), to_device(bias)
    zeros = np.zeros(C, np.float32)
    run_mean, run_var = to_device(zeros), to_device(np.ones(C, np.float32))
    save_mean, save_invstd, dg, db = (to_device(zeros) for _ in range(4))

    # 5. workspace and reserve sizes, then allocations
    mode, ops = c.CUDNN_BATCHNORM_SPATIAL_PERSISTENT, c.CUDNN_BATCHNORM_OPS_BN_ACTIVATION
    fwd_ws, st = c.cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(handle, mode, ops, xDesc, None, xDesc,
                                                                          bnDesc, act)
    CHECK_CUDNN(st, "cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize")
    bwd_ws, st = c.cudnnGetBatchNormalizationBackwardExWorkspaceSize(handle, mode, ops, xDesc, xDesc, xDesc, None,
                                                                   xDesc, bnDesc, act)
    CHECK_CUDNN(st, "cudnnGetBatchNormalizationBackwardExWorkspaceSize")
    rs_size, st = c.cudnnGetBatchNormalizationTrainingExReserveSpaceSize(handle, mode, ops, act, xDesc)
    CHECK_CUDNN(st, "cudnnGetBatchNormalizationTrainingExReserveSpaceSize")
    ws_size = max(fwd_ws, bwd_ws)
    workspace = acl.rt.malloc(ws_size, 0)[0] if ws_size else None
    reserve, _ = acl.rt.malloc(rs_size, 0)
    print(f"workspace: forward {fwd_ws} B, backward {bwd_ws} B; reserve space {rs_size} B")

    # 6. the training step: forward (BN + ReLU), backward, SGD update of scale and bias
    CHECK_CUDNN(c.cudnnBatchNormalizationForwardTrainingEx(
        handle, mode, ops, 1.0, 0.0, xDesc, x, None, None, xDesc, y, bnDesc, g, b, momentum, run_mean, run_var, eps,
        save_mean, save_invstd, act, workspace, ws_size, reserve, rs_size), "cudnnBatchNormalizationForwardTrainingEx")
    CHECK_CUDNN(c.cudnnBatchNormalizationBackwardEx(
        handle, mode, ops, 1.0, 0.0, 1.0, 0.0, xDesc, x, xDesc, y, xDesc, dy, None, None, xDesc, dx, bnDesc, g, b,
        dg, db, eps, save_mean, save_invstd, act, workspace, ws_size, reserve, rs_size),
        "cudnnBatchNormalizationBackwardEx")
    new_g, new_b = to_device(scale), to_device(bias)
    CHECK_CUDNN(c.cudnnAddTensor(handle, -lr, bnDesc, dg, 1.0, bnDesc, new_g), "cudnnAddTensor")
    CHECK_CUDNN(c.cudnnAddTensor(handle, -lr, bnDesc, db, 1.0, bnDesc, new_b), "cudnnAddTensor")
    CHECK_RET(acl.rt.synchronize_stream(stream) == 0, "aclrtSynchronizeStream")

    # 7. compare (NCHW order for the references)
    xr = x_nhwc.astype(np.float64).transpose(0, 3, 1, 2)
    dyr = dy_nhwc.astype(np.float64).transpose(0, 3, 1, 2)
    y_ref, m_ref, inv_ref, var_u = bn_reference(xr, scale, bias, eps, relu=True)
    dx_ref, dg_ref, db_ref = bn_reference(xr, scale, bias, eps, dyr, relu=True)
    nchw = lambda dev: to_host(dev, x_nhwc).astype(np.float64).transpose(0, 3, 1, 2)   # noqa: E731
    vec = lambda dev: to_host(dev, zeros).astype(np.float64)                          # noqa: E731
    check("ForwardTrainingEx y = relu(BN(x))", nchw(y), y_ref, 1e-2)
    check("ForwardTrainingEx saved mean / invstd", np.r_[vec(save_mean), vec(save_invstd)], np.r_[m_ref, inv_ref], 1e-4)
    check("ForwardTrainingEx running mean / variance", np.r_[vec(run_mean), vec(run_var)],
          np.r_[momentum * m_ref, 1 - momentum + momentum * var_u], 1e-4)
    check("BackwardEx dx", nchw(dx), dx_ref, 2e-2)
    check("BackwardEx dscale / dbias", np.r_[vec(dg), vec(db)], np.r_[dg_ref, db_ref], 1e-3 * (1 + np.abs(dg_ref).max()))
    check("SGD update (cudnnAddTensor)", np.r_[vec(new_g), vec(new_b)],
          np.r_[scale - lr * dg_ref, bias - lr * db_ref], 1e-4)

    # 8. the plain forms (no activation): ForwardTraining with blending, Backward without saved stats
    #    accumulating (betaParamDiff = 1) into gradients zeroed by cudnnSetTensor
    y_plain = to_device(np.ones_like(x_nhwc))
    CHECK_CUDNN(c.cudnnSetTensor(handle, bnDesc, dg, 0.0), "cudnnSetTensor")
    CHECK_CUDNN(c.cudnnSetTensor(handle, bnDesc, db, 0.0), "cudnnSetTensor")
    CHECK_CUDNN(c.cudnnBatchNormalizationForwardTraining(
        handle, mode, 1.0, 0.5, xDesc, x, xDesc, y_plain, bnDesc, g, b, momentum, None, None, eps, None, None),
        "cudnnBatchNormalizationForwardTraining")
    CHECK_CUDNN(c.cudnnBatchNormalizationBackward(
        handle, mode, 1.0, 0.0, 1.0, 1.0, xDesc, x, xDesc, dy, xDesc, dx, bnDesc, g, dg, db, eps, None, None),
        "cudnnBatchNormalizationBackward")
    CHECK_RET(acl.rt.synchronize_stream(stream) == 0, "aclrtSynchronizeStream")
    y_bn, *_ = bn_reference(xr, scale, bias, eps)
    dx_bn, dg_bn, db_bn = bn_reference(xr, scale, bias, eps, dyr)
    check("ForwardTraining y = BN(x) + 0.5*y", nchw(y_plain), y_bn + 0.5, 1e-2)
    check("Backward dx (statistics recomputed)", nchw(dx), dx_bn, 2e-2)
    check("Backward dscale / dbias", np.r_[vec(dg), vec(db)], np.r_[dg_bn, db_bn], 1e-3 * (1 + np.abs(dg_bn).max()))

    # 9. the cuDNN 8 normalization API: per-channel, NORM_ACTIVATION, PERSIST algo, groupCnt 1
    sbDesc, _ = c.cudnnCreateTensorDescriptor()
    mvDesc, _ = c.cudnnCreateTensorDescriptor()
    CHECK_CUDNN(c.cudnnDeriveNormTensorDescriptor(sbDesc, mvDesc, xDesc, c.CUDNN_NORM_PER_CHANNEL, 1), "DeriveNorm")
    nmode, nops, algo = c.CUDNN_NORM_PER_CHANNEL, c.CUDNN_NORM_OPS_NORM_ACTIVATION, c.CUDNN_NORM_ALGO_PERSIST
    nfw, st = c.cudnnGetNormalizationForwardTrainingWorkspaceSize(handle, nmode, nops, algo, xDesc, None, xDesc,
                                                                  sbDesc, act, mvDesc, 1)
    CHECK_CUDNN(st, "cudnnGetNormalizationForwardTrainingWorkspaceSize")
    nbw, st = c.cudnnGetNormalizationBackwardWorkspaceSize(handle, nmode, nops, algo, xDesc, xDesc, xDesc, None, xDesc,
                                                           sbDesc, act, mvDesc, 1)
    CHECK_CUDNN(st, "cudnnGetNormalizationBackwardWorkspaceSize")
    nrs, st = c.cudnnGetNormalizationTrainingReserveSpaceSize(handle, nmode, nops, algo, act, xDesc, 1)
    CHECK_CUDNN(st, "cudnnGetNormalizationTrainingReserveSpaceSize")
    nws_size = max(nfw, nbw)
    nws = acl.rt.malloc(nws_size, 0)[0] if nws_size else None
    nres, _ = acl.rt.malloc(nrs, 0)
    CHECK_CUDNN(c.cudnnNormalizationForwardTraining(
        handle, nmode, nops, algo, 1.0, 0.0, xDesc, x, sbDesc, g, b, 1.0, mvDesc, run_mean, run_var, eps, save_mean,
        save_invstd, act, None, None, xDesc, y, nws, nws_size, nres, nrs, 1), "cudnnNormalizationForwardTraining")
    CHECK_CUDNN(c.cudnnNormalizationBackward(
        handle, nmode, nops, algo, 1.0, 0.0, 1.0, 0.0, xDesc, x, xDesc, y, xDesc, dy, None, None, xDesc, dx, sbDesc,
        g, b, dg, db, eps, mvDesc, save_mean, save_invstd, act, nws, nws_size, nres, nrs, 1),
        "cudnnNormalizationBackward")
    CHECK_RET(acl.rt.synchronize_stream(stream) == 0, "aclrtSynchronizeStream")
    check("NormalizationForwardTraining y", nchw(y), y_ref, 1e-2)
    check("NormalizationForwardTraining running var (factor 1)", vec(run_var), var_u, 1e-4)
    check("NormalizationBackward dx", nchw(dx), dx_ref, 2e-2)

    # 10. destroy descriptors and handle, free memory, finalize
    for d in (xDesc, bnDesc, sbDesc, mvDesc):
        CHECK_CUDNN(c.cudnnDestroyTensorDescriptor(d), "cudnnDestroyTensorDescriptor")
    CHECK_CUDNN(c.cudnnDestroyActivationDescriptor(act), "cudnnDestroyActivationDescriptor")
    CHECK_CUDNN(c.cudnnDestroy(handle), "cudnnDestroy")
    for p in (x, dy, y, dx, g, b, run_mean, run_var, save_mean, save_invstd, dg, db, new_g, new_b, y_plain, reserve,
              nres, workspace, nws):
        if p is not None:
            CHECK_RET(acl.rt.free(p) == 0, "aclrtFree")
    CHECK_RET(acl.rt.destroy_stream(stream) == 0, "aclrtDestroyStream")
    CHECK_RET(acl.rt.reset_device(0) == 0, "aclrtResetDevice")
    CHECK_RET(acl.finalize() == 0, "aclFinalize")
    return 0 if check.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
