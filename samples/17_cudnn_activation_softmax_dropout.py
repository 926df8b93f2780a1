"""cuDNN rows 2000, 2006 and 2018 through ``aclnn_py.cudnn``, as a cuDNN program writes them: a small
classifier head's forward and backward on an NCHW FLOAT batch —

    h = swish(x)  ->  d = dropout(h)  ->  p = softmax over C (CHANNEL mode)
    dp (given)  ->  dd = softmax backward  ->  dh = dropout backward  ->  dx = swish backward

— then CLIPPED_RELU with blending (dx = 0.5·grad + 1.0·dx) and log-softmax over C·H·W (INSTANCE).
Every result is compared with a float64 NumPy reference (the dropout mask is read back from the
reserve space). Run it: ``python samples/17_cudnn_activation_softmax_dropout.py``.
"""
import numpy as np

from aclnn_py import acl
from aclnn_py import cudnn as c
from acl_sample import CHECK_CUDNN, CHECK_RET, Verdicts, to_device, to_host

APIS = ["cudnnActivationBackward", "cudnnDropoutBackward", "cudnnSoftmaxBackward",
        "aclnnpyActivation", "aclnnpyActivationBackward", "aclnnpyDropoutStateSet", "aclnnpyDropoutStateAdvance",
        "aclnnpyDropoutStateful", "aclnnSoftmax", "aclnnSoftmaxBackward", "aclnnLogSoftmax",
        "aclnnLogSoftmaxBackward", "aclnnDropoutBackward"]


def sig(v):
    return 1 / (1 + np.exp(-v))


def main() -> int:
    verdicts = Verdicts(40)

    def check(name, got, ref, tol=2e-5):
        verdicts(name, got, ref, tol)

    # 1. init, device, stream, handle
    CHECK_RET(acl.init() == 0, "aclInit")
    CHECK_RET(acl.rt.set_device(0) == 0, "aclrtSetDevice")
    stream, ret = acl.rt.create_stream()
    CHECK_RET(ret == 0, "aclrtCreateStream")
    handle, st = c.cudnnCreate()
    CHECK_CUDNN(st, "cudnnCreate")
    CHECK_CUDNN(c.cudnnSetStream(handle, stream), "cudnnSetStream")

    # 2. host data and descriptors (NCHW FLOAT)
    N, C, H, W = 4, 10, 3, 3
    rng = np.random.default_rng(17)
    x_h = rng.standard_normal((N, C, H, W)).astype(np.float32)
    dp_h = rng.standard_normal((N, C, H, W)).astype(np.float32)
    zeros = np.zeros_like(x_h)
    desc, _ = c.cudnnCreateTensorDescriptor()
    CHECK_CUDNN(c.cudnnSetTensor4dDescriptor(desc, c.CUDNN_TENSOR_NCHW, c.CUDNN_DATA_FLOAT, N, C, H, W), "SetTensor4d")
    swish, _ = c.cudnnCreateActivationDescriptor()
    CHECK_CUDNN(c.cudnnSetActivationDescriptor(swish, c.CUDNN_ACTIVATION_SWISH, c.CUDNN_NOT_PROPAGATE_NAN, 0.0), "act")
    CHECK_CUDNN(c.cudnnSetActivationDescriptorSwishBeta(swish, 1.25), "swish beta")
    drop, _ = c.cudnnCreateDropoutDescriptor()
    states_size, st = c.cudnnDropoutGetStatesSize(handle)
    CHECK_CUDNN(st, "cudnnDropoutGetStatesSize")
    states, _ = acl.rt.malloc(states_size, 0)
    p = 0.25
    CHECK_CUDNN(c.cudnnSetDropoutDescriptor(drop, handle, p, states, states_size, 2026), "cudnnSetDropoutDescriptor")
    reserve_size, st = c.cudnnDropoutGetReserveSpaceSize(desc)
    CHECK_CUDNN(st, "cudnnDropoutGetReserveSpaceSize")
    reserve, _ = acl.rt.malloc(reserve_size, 0)
    x, dp = to_device(x_h), to_device(dp_h)
    h, d, prob, dd, dh, dx = (to_device(zeros) for _ in range(6))

    # 3. forward
    CHECK_CUDNN(c.cudnnActivationForward(handle, swish, 1.0, desc, x, 0.0, desc, h), "cudnnActivationForward")
    CHECK_CUDNN(c.cudnnDropoutForward(handle, drop, desc, h, desc, d, reserve, reserve_size), "cudnnDropoutForward")
    CHECK_CUDNN(c.cudnnSoftmaxForward(handle, c.CUDNN_SOFTMAX_ACCURATE, c.CUDNN_SOFTMAX_MODE_CHANNEL, 1.0, desc, d, 0.0,
                                      desc, prob), "cudnnSoftmaxForward")
    # 4. backward
    CHECK_CUDNN(c.cudnnSoftmaxBackward(handle, c.CUDNN_SOFTMAX_ACCURATE, c.CUDNN_SOFTMAX_MODE_CHANNEL, 1.0, desc, prob,
                                       desc, dp, 0.0, desc, dd), "cudnnSoftmaxBackward")
    CHECK_CUDNN(c.cudnnDropoutBackward(handle, drop, desc, dd, desc, dh, reserve, reserve_size), "cudnnDropoutBackward")
    CHECK_CUDNN(c.cudnnActivationBackward(handle, swish, 1.0, desc, h, desc, dh, desc, x, 0.0, desc, dx),
                "cudnnActivationBackward")
    CHECK_RET(acl.rt.synchronize_stream(stream) == 0, "aclrtSynchronizeStream")

    # 5. compare with float64
    xr, dpr = x_h.astype(np.float64), dp_h.astype(np.float64)
    mask = np.frombuffer(to_host(reserve, np.zeros(reserve_size, np.uint8)), np.uint8)
    keep = np.unpackbits(mask, bitorder="little")[:xr.size].reshape(xr.shape).astype(bool)
    scale = float(np.float32(1 / (1 - p)))
    h_ref = xr * sig(1.25 * xr)
    d_ref = np.where(keep, h_ref * scale, 0)
    z = d_ref - d_ref.max(1, keepdims=True)
    p_ref = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    dd_ref = p_ref * (dpr - (dpr * p_ref).sum(1, keepdims=True))
    dh_ref = np.where(keep, dd_ref * scale, 0)
    s = sig(1.25 * xr)
    dx_ref = dh_ref * (s + 1.25 * xr * s * (1 - s))
    host = lambda dev: to_host(dev, zeros).astype(np.float64)      # noqa: E731
    print(f"dropout kept {keep.mean():.3f} of the elements (p = {p})")
    check("ActivationForward (swish, beta 1.25)", host(h), h_ref)
    check("DropoutForward", host(d), d_ref)
    check("SoftmaxForward (CHANNEL)", host(prob), p_ref)
    check("SoftmaxBackward", host(dd), dd_ref)
    check("DropoutBackward", host(dh), dh_ref)
    check("ActivationBackward (swish)", host(dx), dx_ref)
    verdicts.ok &= 0.15 < 1 - keep.mean() < 0.35

    # 6. clipped ReLU with blending, log-softmax over C·H·W
    clip, _ = c.cudnnCreateActivationDescriptor()
    CHECK_CUDNN(c.cudnnSetActivationDescriptor(clip, c.CUDNN_ACTIVATION_CLIPPED_RELU, c.CUDNN_PROPAGATE_NAN, 1.0), "act")
    before = host(dx)
    CHECK_CUDNN(c.cudnnActivationBackward(handle, clip, 0.5, desc, h, desc, dp, desc, x, 1.0, desc, dx),
                "cudnnActivationBackward")
    CHECK_CUDNN(c.cudnnSoftmaxForward(handle, c.CUDNN_SOFTMAX_LOG, c.CUDNN_SOFTMAX_MODE_INSTANCE, 1.0, desc, x, 0.0,
                                      desc, prob), "cudnnSoftmaxForward")
    CHECK_CUDNN(c.cudnnSoftmaxBackward(handle, c.CUDNN_SOFTMAX_LOG, c.CUDNN_SOFTMAX_MODE_INSTANCE, 1.0, desc, prob,
                                       desc, dp, 0.0, desc, dd), "cudnnSoftmaxBackward")
    CHECK_RET(acl.rt.synchronize_stream(stream) == 0, "aclrtSynchronizeStream")
    check("ActivationBackward (clipped, blended)", host(dx), 0.5 * dpr * ((xr > 0) & (xr < 1)) + before)
    zz = xr - xr.max((1, 2, 3), keepdims=True)
    l_ref = zz - np.log(np.exp(zz).sum((1, 2, 3), keepdims=True))
    check("SoftmaxForward (LOG, INSTANCE)", host(prob), l_ref, 1e-5)
    check("SoftmaxBackward (LOG, INSTANCE)", host(dd), dpr - np.exp(host(prob)) * dpr.sum((1, 2, 3), keepdims=True),
          1e-5)

    # 7. destroy, free, finalize
    CHECK_CUDNN(c.cudnnDestroyTensorDescriptor(desc), "cudnnDestroyTensorDescriptor")
    for a in (swish, clip):
        CHECK_CUDNN(c.cudnnDestroyActivationDescriptor(a), "cudnnDestroyActivationDescriptor")
    CHECK_CUDNN(c.cudnnDestroyDropoutDescriptor(drop), "cudnnDestroyDropoutDescriptor")
    CHECK_CUDNN(c.cudnnDestroy(handle), "cudnnDestroy")
    for ptr in (x, dp, h, d, prob, dd, dh, dx, states, reserve):
        CHECK_RET(acl.rt.free(ptr) == 0, "aclrtFree")
    CHECK_RET(acl.rt.destroy_stream(stream) == 0, "aclrtDestroyStream")
    CHECK_RET(acl.rt.reset_device(0) == 0, "aclrtResetDevice")
    CHECK_RET(acl.finalize() == 0, "aclFinalize")
    return 0 if verdicts.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
