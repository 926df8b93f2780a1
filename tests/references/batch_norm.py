"""Independent float64 NumPy references for the BatchNorm family (aclnn / PyTorch / cuDNN / oneDNN
semantics). They know nothing about the kernels: no workspace, no splits, no masks layout.

Conventions
- Data tensors are NumPy arrays of any rank >= 2 in *logical* layout; ``axis`` names the channel
  axis (1 for NC..., -1 for N...C). Outputs come back in the input's layout, as float64.
- Per-channel tensors are 1-D of length C; ``None`` means absent (weight -> 1, bias -> 0).
- Statistics: mean over every axis but the channel axis; ``var`` is the biased variance,
  invstd = 1/sqrt(var + eps) (0 when var == 0 and eps == 0, as PyTorch's InvStd); running_var is
  updated with the unbiased variance var*n/(n-1), n = elements per channel (n == 1 -> NaN, the
  arithmetic of PyTorch's CUDA kernel: 0 * inf).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "batch_norm",
    "batch_norm_backward",
    "batch_norm_stats",
    "batch_norm_gather_stats_with_counts",
    "batch_norm_elemt",
    "batch_norm_reduce_backward",
    "batch_norm_elemt_backward",
    "batch_norm_training_backward_onednn",
    "batch_norm_fused_forward",
    "batch_norm_fused_backward",
    "activation_forward",
]


def _f64(a):
    return None if a is None else np.asarray(a, dtype=np.float64)


def _ncs(x, axis):
    """(N, C, S) float64 view of x with the channel axis moved to 1, and the inverse map."""
    x = np.asarray(x, dtype=np.float64)
    ax = axis % x.ndim
    xm = np.moveaxis(x, ax, 1)
    shape = xm.shape
    S = int(np.prod(shape[2:], dtype=np.int64)) if len(shape) > 2 else 1
    x3 = xm.reshape(shape[0], shape[1], S)

    def back(y3):
        return np.moveaxis(np.asarray(y3).reshape(shape), 1, ax)

    return x3, back


def _bc(v):
    """Per-channel vector -> broadcastable (1, C, 1)."""
    return np.asarray(v, dtype=np.float64).reshape(1, -1, 1)


def _invstd(var, eps):
    var = np.asarray(var, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = 1.0 / np.sqrt(var + eps)
    return np.where((var == 0) & (eps == 0), 0.0, out)


def _unbiased(var, n):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(var, dtype=np.float64) * (np.float64(n) / np.float64(n - 1))


def _channel_stats(x3):
    n = x3.shape[0] * x3.shape[2]
    mean = x3.mean(axis=(0, 2))
    mean = mean + (x3 - _bc(mean)).mean(axis=(0, 2))     # one correction pass: f64-exact when |mean| >> std
    var = ((x3 - _bc(mean)) ** 2).mean(axis=(0, 2))
    return mean, var, n


def _ones_like_c(C, v):
    return np.ones(C) if v is None else _f64(v)


def _zeros_like_c(C, v):
    return np.zeros(C) if v is None else _f64(v)


# ------------------------------------------------------------------------------------------------
def batch_norm(input, weight=None, bias=None, running_mean=None, running_var=None, training=True,
               momentum=0.1, eps=1e-5, axis=1):
    """aclnnBatchNorm. Returns dict(output, save_mean, save_invstd, running_mean, running_var).

    training: batch statistics; running stats (if given) are returned updated (new arrays).
    inference: running stats (absent -> mean 0, var 1) normalise; save_* are None.
    """
    x3, back = _ncs(input, axis)
    C = x3.shape[1]
    w = _ones_like_c(C, weight)
    b = _zeros_like_c(C, bias)
    rm, rv = _f64(running_mean), _f64(running_var)
    out = {"save_mean": None, "save_invstd": None, "running_mean": rm, "running_var": rv}
    if training:
        mean, var, n = _channel_stats(x3)
        invstd = _invstd(var, eps)
        out["save_mean"], out["save_invstd"] = mean, invstd
        if rm is not None:
            out["running_mean"] = (1.0 - momentum) * rm + momentum * mean
        if rv is not None:
            out["running_var"] = (1.0 - momentum) * rv + momentum * _unbiased(var, n)
    else:
        mean = np.zeros(C) if rm is None else rm
        invstd = _invstd(np.ones(C) if rv is None else rv, eps)
    out["output"] = back((x3 - _bc(mean)) * _bc(invstd) * _bc(w) + _bc(b))
    return out


def batch_norm_backward(grad_out, input, weight=None, running_mean=None, running_var=None, save_mean=None,
                        save_invstd=None, training=True, eps=1e-5, output_mask=(True, True, True), axis=1):
    """aclnnBatchNormBackward -> (grad_input, grad_weight, grad_bias), None where the mask is False.

    training: uses save_mean / save_invstd (1/sqrt(var+eps));
      dx = (dy - sum(dy)/n - (x-mean)*invstd^2*sum(dy*(x-mean))/n) * invstd * w.
    inference: mean = running_mean, invstd = 1/sqrt(running_var+eps); dx = dy*w*invstd.
    grad_weight = sum(dy*(x-mean))*invstd, grad_bias = sum(dy) in both modes.
    """
    dy3, back = _ncs(grad_out, axis)
    x3, _ = _ncs(input, axis)
    C = x3.shape[1]
    n = x3.shape[0] * x3.shape[2]
    w = _ones_like_c(C, weight)
    if training:
        mean, invstd = _f64(save_mean), _f64(save_invstd)
    else:
        mean = np.zeros(C) if running_mean is None else _f64(running_mean)
        invstd = _invstd(np.ones(C) if running_var is None else _f64(running_var), eps)
    xmu = x3 - _bc(mean)
    sum_dy = dy3.sum(axis=(0, 2))
    sum_dy_xmu = (dy3 * xmu).sum(axis=(0, 2))
    if training:
        gi = (dy3 - _bc(sum_dy / n) - xmu * _bc(invstd * invstd * sum_dy_xmu / n)) * _bc(invstd * w)
    else:
        gi = dy3 * _bc(w * invstd)
    return (back(gi) if output_mask[0] else None,
            sum_dy_xmu * invstd if output_mask[1] else None,
            sum_dy if output_mask[2] else None)


def batch_norm_stats(input, eps=1e-5, axis=1):
    """aclnnBatchNormStats -> (mean, invstd) with the biased variance."""
    x3, _ = _ncs(input, axis)
    mean, var, _ = _channel_stats(x3)
    return mean, _invstd(var, eps)


def batch_norm_gather_stats_with_counts(mean, invstd, counts, running_mean=None, running_var=None,
                                        momentum=0.1, eps=1e-5):
    """aclnnBatchNormGatherStatsWithCounts. mean/invstd: [world, C]; counts: [world].

    Ranks with count <= 0 are ignored. Returns (mean_all, invstd_all, running_mean, running_var);
    running stats updated with the unbiased variance of the union (total count n).
    """
    mean, invstd, counts = _f64(mean), _f64(invstd), _f64(counts).reshape(-1)
    keep = counts > 0
    m, istd, cnt = mean[keep], invstd[keep], counts[keep][:, None]
    n = cnt.sum()
    var_r = 1.0 / (istd * istd) - eps
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_all = (cnt * m).sum(axis=0) / n
        var = (cnt * (var_r + (m - mean_all) ** 2)).sum(axis=0) / n
    if n == 0:
        mean_all = np.zeros(mean.shape[1])
    invstd_all = _invstd(var, eps)
    rm, rv = _f64(running_mean), _f64(running_var)
    if n > 0:
        if rm is not None:
            rm = (1.0 - momentum) * rm + momentum * mean_all
        if rv is not None:
            rv = (1.0 - momentum) * rv + momentum * _unbiased(var, n)
    return mean_all, invstd_all, rm, rv


def batch_norm_elemt(input, weight, bias, mean, invstd, axis=1):
    """aclnnBatchNormElemt: y = (x - mean) * invstd * w + b."""
    x3, back = _ncs(input, axis)
    C = x3.shape[1]
    y = (x3 - _bc(mean)) * _bc(invstd) * _bc(_ones_like_c(C, weight)) + _bc(_zeros_like_c(C, bias))
    return back(y)


def batch_norm_reduce_backward(grad_out, input, mean, invstd, weight=None, input_g=True, weight_g=True,
                               bias_g=True, axis=1):
    """aclnnBatchNormReduceBackward -> (sum_dy, sum_dy_xmu, grad_weight, grad_bias) (sums, not means);
    sum_dy and sum_dy_xmu need input_g, grad_weight weight_g, grad_bias bias_g (else None)."""
    dy3, _ = _ncs(grad_out, axis)
    x3, _ = _ncs(input, axis)
    sum_dy = dy3.sum(axis=(0, 2))
    sum_dy_xmu = (dy3 * (x3 - _bc(mean))).sum(axis=(0, 2))
    return (sum_dy if input_g else None,
            sum_dy_xmu if input_g else None,
            sum_dy_xmu * _f64(invstd) if weight_g else None,
            sum_dy if bias_g else None)


def batch_norm_elemt_backward(grad_out, input, mean, invstd, weight, sum_dy, sum_dy_xmu, counter, axis=1):
    """aclnnBatchNormElemtBackward: N = sum of every entry of `counter`;
    dx = (dy - sum_dy/N - (x - mean) * invstd^2 * sum_dy_xmu/N) * invstd * w."""
    dy3, back = _ncs(grad_out, axis)
    x3, _ = _ncs(input, axis)
    C = x3.shape[1]
    n = np.asarray(counter, dtype=np.float64).sum()
    invstd = _f64(invstd)
    w = _ones_like_c(C, weight)
    gi = (dy3 - _bc(_f64(sum_dy) / n)
          - (x3 - _bc(mean)) * _bc(invstd * invstd * _f64(sum_dy_xmu) / n)) * _bc(invstd * w)
    return back(gi)


def batch_norm_training_backward_onednn(src, diff_dst, mean, variance, gamma=None, epsilon=1e-5,
                                        data_format="NXC", scale_shift_grads=True):
    """oneDNN graph BatchNormTrainingBackward -> (diff_src, diff_gamma, diff_beta).

    Takes the variance (not invstd). data_format NXC: channel axis last; NCX: axis 1. When no
    diff_gamma/diff_beta are requested (scale_shift_grads=False) gamma is ignored (treated as 1)
    and the two are returned as None.
    """
    axis = -1 if data_format == "NXC" else 1
    x3, back = _ncs(src, axis)
    dy3, _ = _ncs(diff_dst, axis)
    C = x3.shape[1]
    n = x3.shape[0] * x3.shape[2]
    invstd = _invstd(_f64(variance), epsilon)
    g = _ones_like_c(C, gamma if scale_shift_grads else None)
    xhat = (x3 - _bc(mean)) * _bc(invstd)
    dbeta = dy3.sum(axis=(0, 2))
    dgamma = (dy3 * xhat).sum(axis=(0, 2))
    dx = _bc(g * invstd) * (dy3 - _bc(dbeta / n) - xhat * _bc(dgamma / n))
    if not scale_shift_grads:
        return back(dx), None, None
    return back(dx), dgamma, dbeta


def activation_forward(v, activation="identity", ceiling=None):
    """(act(v), grad_passes) for identity, relu, clipped_relu (cuDNN: dy passes iff 0 < v < ceiling)."""
    v = np.asarray(v, dtype=np.float64)
    if activation == "identity":
        return v.copy(), np.ones(v.shape, dtype=bool)
    if activation == "relu":
        return np.where(v < 0, 0.0, v), v > 0
    if activation == "clipped_relu":
        return np.where(v < 0, 0.0, np.where(v > ceiling, ceiling, v)), (v > 0) & (v < ceiling)
    raise ValueError(activation)


def batch_norm_fused_forward(input, weight, bias, z=None, activation="identity", ceiling=None, training=True,
                             running_mean=None, running_var=None, momentum=0.1, eps=1e-5, axis=1):
    """cuDNN BatchNormalizationForwardTrainingEx / inference: y = act(BN(x) [+ z]).

    Returns batch_norm()'s dict plus 'mask' (bool, input layout): the activation passed the gradient.
    """
    out = batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, axis)
    v = out["output"] + (0.0 if z is None else np.asarray(z, dtype=np.float64))
    out["output"], out["mask"] = activation_forward(v, activation, ceiling)
    return out


def batch_norm_fused_backward(grad_out, input, weight, save_mean, save_invstd, mask=None, with_z=False,
                              axis=1):
    """cuDNN BatchNormalizationBackwardEx (training): dy' = dy where mask else 0 (mask None: identity),
    dz = dy' (if with_z), then BN backward on dy'. Returns (dx, dz, dscale, dbias)."""
    dy = np.asarray(grad_out, dtype=np.float64)
    if mask is not None:
        dy = np.where(np.asarray(mask, dtype=bool), dy, 0.0)
    dx, dscale, dbias = batch_norm_backward(dy, input, weight, None, None, save_mean, save_invstd, True,
                                            axis=axis)
    return dx, (dy.copy() if with_z else None), dscale, dbias
