"""Side-by-side timings of the BatchNorm family: host overhead (always) and GPU kernels (with a GPU).

Host overhead (median µs over many calls, tiny tensors): phase 1, phase 2 (enqueue only), and a
repeatable-executor relaunch, next to PyTorch's whole ``native_batch_norm_backward`` on the same tiny
tensors on the CPU (when PyTorch is installed).

GPU (CUDA backend only): kernel time by CUDA events (median of repeated launches) and achieved
bandwidth (model bytes / time) against ``torch.batch_norm_backward_elemt`` on the same device, NCHW
and NHWC, f32/f16/bf16; and the roofline fraction against the device's peak HBM bandwidth.

    python benchmarks/bench_batch_norm.py            # or: aclnn-py bench
"""
from __future__ import annotations

import statistics
import time

import numpy as np

import aclnn_py as A
from aclnn_py import acl
from aclnn_py.backends import get_backend


def _median_us(fn, n=2000, warm=200):
    for _ in range(warm):
        fn()
    samples = []
    for _ in range(n // 100):
        t = time.perf_counter()
        for _ in range(100):
            fn()
        samples.append((time.perf_counter() - t) / 100 * 1e6)
    return statistics.median(samples)


def _tensor(shape, dtype=A.ACL_FLOAT, fmt=A.ACL_FORMAT_ND, fill=None):
    info = A.dtypes.dtype_info(dtype)
    n = max(int(np.prod(shape)), 1) * info.itemsize
    p, ret = acl.rt.malloc(n, 0)
    assert ret == 0
    host = (np.random.default_rng(0).standard_normal(max(int(np.prod(shape)), 1)) if fill is None
            else np.full(max(int(np.prod(shape)), 1), fill)).astype(info.numpy)
    acl.rt.memcpy(p, n, host.ctypes.data, n, 1)
    return A.aclCreateTensor(shape, dtype, None, 0, fmt, shape, p), p


def elemt_backward_args(shape, dtype=A.ACL_FLOAT, channels_last=False):
    C = shape[-1] if channels_last else shape[1]
    fmt = A.ACL_FORMAT_NHWC if channels_last else A.ACL_FORMAT_NCHW
    ts = [_tensor(shape, dtype, fmt), _tensor(shape, dtype, fmt)]
    ts += [_tensor((C,), A.ACL_FLOAT, fill=f) for f in (0.1, 1.5, 1.0, 0.3, 0.2)]
    ts += [_tensor((1,), A.ACL_INT32, fill=int(np.prod(shape)) // C), _tensor(shape, dtype, fmt)]
    return [t for t, _ in ts], [p for _, p in ts]


# the free-shaped tensors of each op, for a tiny (2, 4, 3, 3) input with C = 4 and two "ranks"
_FREE = {"save_mean": ((4,), A.ACL_FLOAT, 0.0), "save_invstd": ((4,), A.ACL_FLOAT, 1.0),
         "counter": ((1,), A.ACL_INT32, 18), "counts": ((2,), A.ACL_FLOAT, 9.0),
         "mean": ((2, 4), A.ACL_FLOAT, 0.0), "invstd": ((2, 4), A.ACL_FLOAT, 1.0)}
_ATTRS = {"training": True, "momentum": 0.1, "eps": 1e-5, "epsilon": 1e-5, "output_mask": [True, True, True],
          "input_g": True, "weight_g": True, "bias_g": True, "data_format": "NCX", "activation_mode": "relu",
          "ceiling": None}


def op_args(reg, shape=(2, 4, 3, 3), dtype=A.ACL_FLOAT, channels_last=False):
    """A valid argument list for any registered op of the family (and the pointers to free)."""
    from aclnn_py.opdef import AttrParam
    C = shape[-1] if channels_last else shape[1]
    fmt = A.ACL_FORMAT_NHWC if channels_last else A.ACL_FORMAT_NCHW
    args, ptrs = [], []
    for p in reg.opdef.params:
        if isinstance(p, AttrParam):
            v = _ATTRS[p.name]
            if p.name == "output_mask":
                v = A.aclCreateBoolArray(v)
            if p.name == "data_format" and channels_last:
                v = "NXC"
            args.append(v)
            continue
        if p.name == "reserve":
            n, _ = A.aclnnBatchNormActivationGetReserveSpaceSize(args[0], "relu")
            t, ptr = _tensor((n,), A.ACL_UINT8, fill=255)
        elif p.kind == "data":
            t, ptr = _tensor(shape, dtype, fmt)
        elif p.kind == "channel":
            t, ptr = _tensor((C,), A.ACL_FLOAT, fill=1.0)
        else:
            sh, dt, fill = _FREE[p.name]
            t, ptr = _tensor(tuple(C if d == 4 else d for d in sh), dt, fill=fill)
        args.append(t)
        ptrs.append(ptr)
    return args, ptrs


def host_overhead_all() -> list[tuple[str, float, float, float]]:
    """(op, phase 1 µs, phase 2 µs, relaunch µs) for every op of the family on a tiny input."""
    from aclnn_py.opdef import OPS
    rows = []
    stream, _ = acl.rt.create_stream()
    for name, reg in OPS.items():
        args, ptrs = op_args(reg)
        ws_size, ex, ret = reg.get_workspace_size(*args)
        assert ret == 0, (name, acl.get_recent_err_msg())
        ws = acl.rt.malloc(ws_size, 0)[0] if ws_size else None
        p1 = _median_us(lambda: reg.get_workspace_size(*args), n=1000, warm=100)

        def p2():
            _, e, _ = reg.get_workspace_size(*args)
            t = time.perf_counter()
            reg.run(ws, ws_size, e, stream)
            return time.perf_counter() - t
        p2us = statistics.median(p2() for _ in range(500)) * 1e6
        acl.rt.synchronize_stream(stream)
        _, ex, _ = reg.get_workspace_size(*args)
        A.aclSetAclOpExecutorRepeatable(ex)
        rl = _median_us(lambda: reg.run(ws, ws_size, ex, stream), n=500, warm=50)
        acl.rt.synchronize_stream(stream)
        A.aclDestroyAclOpExecutor(ex)
        rows.append((f"aclnn{name}", p1, p2us, rl))
        for p in ptrs + ([ws] if ws else []):
            acl.rt.free(p)
    acl.rt.destroy_stream(stream)
    return rows


def host_overhead() -> list[tuple[str, float]]:
    rows = []
    args, ptrs = elemt_backward_args((2, 4, 3, 3))
    f1, f2 = A.aclnnBatchNormElemtBackwardGetWorkspaceSize, A.aclnnBatchNormElemtBackward
    stream, _ = acl.rt.create_stream()
    rows.append(("aclnnBatchNormElemtBackward phase 1 (2x4x3x3 f32)", _median_us(lambda: f1(*args))))

    ws_size = f1(*args)[0]
    ws = acl.rt.malloc(ws_size, 0)[0] if ws_size else None

    def p2():
        _, ex, _ = f1(*args)
        t = time.perf_counter()
        ret = f2(ws, ws_size, ex, stream)
        dt = time.perf_counter() - t
        assert ret == 0
        return dt
    for _ in range(200):
        p2()
    acl.rt.synchronize_stream(stream)
    rows.append(("aclnnBatchNormElemtBackward phase 2 (enqueue)", statistics.median(p2() for _ in range(2000)) * 1e6))
    acl.rt.synchronize_stream(stream)
    _, ex, _ = f1(*args)
    A.aclSetAclOpExecutorRepeatable(ex)
    rows.append(("aclnnBatchNormElemtBackward repeatable relaunch", _median_us(lambda: f2(ws, ws_size, ex, stream))))
    acl.rt.synchronize_stream(stream)
    A.aclDestroyAclOpExecutor(ex)
    try:
        import torch
        x = torch.randn(2, 4, 3, 3); g = torch.randn(2, 4, 3, 3); w = torch.randn(4)
        sm = x.mean((0, 2, 3)); si = 1 / (x.var((0, 2, 3), unbiased=False) + 1e-5).sqrt()
        nb = torch.ops.aten.native_batch_norm_backward
        rows.append(("torch native_batch_norm_backward, CPU (whole op)",
                     _median_us(lambda: nb(g, x, w, None, None, sm, si, True, 1e-5, [True, True, True]))))
    except ImportError:
        rows.append(("torch native_batch_norm_backward, CPU (PyTorch not installed)", float("nan")))
    acl.rt.synchronize_stream(stream)
    for p in ptrs + ([ws] if ws else []):
        acl.rt.free(p)
    acl.rt.destroy_stream(stream)
    return rows


def gpu_kernels() -> list[tuple]:
    """Kernel time (µs) and GB/s of aclnnBatchNormElemtBackward vs torch.batch_norm_backward_elemt."""
    import cupy as cp
    import torch
    rows = []
    peak = None
    try:
        dev = cp.cuda.runtime.getDeviceProperties(0)
        peak = 2 * dev["memoryClockRate"] * 1e3 * dev["memoryBusWidth"] / 8 / 1e9
    except Exception:
        pass
    stream, _ = acl.rt.create_stream()
    s = acl._state.state.streams[stream][1]
    for dt, tdt in ((A.ACL_FLOAT, torch.float32), (A.ACL_FLOAT16, torch.float16), (A.ACL_BF16, torch.bfloat16)):
        for cl in (False, True):
            N, C, H, W = 32, 256, 56, 56
            shape = (N, H, W, C) if cl else (N, C, H, W)
            args, ptrs = elemt_backward_args(shape, dt, cl)
            ws, ex, ret = A.aclnnBatchNormElemtBackwardGetWorkspaceSize(*args)
            A.aclSetAclOpExecutorRepeatable(ex)
            wsp = acl.rt.malloc(ws, 0)[0] if ws else None
            e0, e1 = cp.cuda.Event(), cp.cuda.Event()
            times = []
            for _ in range(30):
                e0.record(s)
                A.aclnnBatchNormElemtBackward(wsp, ws, ex, stream)
                e1.record(s)
                e1.synchronize()
                times.append(cp.cuda.get_elapsed_time(e0, e1) * 1e3)
            ours = statistics.median(times[5:])
            nbytes = 3 * N * C * H * W * A.dtypes.dtype_info(dt).itemsize
            mf = torch.channels_last if cl else torch.contiguous_format
            x = torch.randn(N, C, H, W, device="cuda", dtype=tdt).to(memory_format=mf)
            g = torch.randn_like(x)
            mean = torch.zeros(C, device="cuda"); inv = torch.ones(C, device="cuda"); w = torch.ones(C, device="cuda")
            sdy = torch.zeros(C, device="cuda"); sdx = torch.zeros(C, device="cuda")
            cnt = torch.tensor([N * H * W], device="cuda", dtype=torch.int32)
            ts = []
            for _ in range(30):
                a0, a1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a0.record()
                torch.batch_norm_backward_elemt(g, x, mean, inv, w, sdy, sdx, cnt)
                a1.record()
                a1.synchronize()
                ts.append(a0.elapsed_time(a1) * 1e3)
            theirs = statistics.median(ts[5:])
            name = f"elemt_backward {'NHWC' if cl else 'NCHW'} 32x256x56x56 {A.aclDataType(dt).name[4:]}"
            rows.append((name, ours, nbytes / ours / 1e3, theirs, nbytes / theirs / 1e3,
                         (nbytes / ours / 1e3) / peak if peak else float("nan")))
            A.aclDestroyAclOpExecutor(ex)
            for p in ptrs + ([wsp] if wsp else []):
                acl.rt.free(p)
    return rows


def main() -> int:
    own = acl.init() == 0
    if own:
        acl.rt.set_device(0)
    print(f"backend: {get_backend().name}")
    print(f"{'host overhead (median)':<58} {'µs':>8}")
    for name, us in host_overhead():
        print(f"{name:<58} {us:8.2f}")
    print(f"\n{'every op, tiny 2x4x3x3 f32 input (median µs)':<46} {'phase 1':>8} {'phase 2':>8} {'relaunch':>9}")
    for name, p1, p2, rl in host_overhead_all():
        print(f"{name:<46} {p1:8.2f} {p2:8.2f} {rl:9.2f}")
    if get_backend().name == "cuda":
        print(f"\n{'GPU kernel':<40} {'ours µs':>9} {'GB/s':>7} {'torch µs':>9} {'GB/s':>7} {'roofline':>8}")
        for name, ours, bw, theirs, tbw, frac in gpu_kernels():
            print(f"{name:<40} {ours:9.1f} {bw:7.0f} {theirs:9.1f} {tbw:7.0f} {frac:8.1%}")
    if own:
        acl.finalize()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
