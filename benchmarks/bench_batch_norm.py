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
    from aclnn_py.opdef import Along, AttrParam, Same
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
        elif p.shape is None or isinstance(p.shape, Same):
            t, ptr = _tensor(shape, dtype, fmt)
        elif isinstance(p.shape, Along):
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
        if reg.module != "batch_norm":
            continue
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


# byte model per op (reads + writes of the big tensors, in units of numel x itemsize)
_PASSES = {"BatchNorm": 3, "BatchNormBackward": 5, "BatchNormStats": 1, "BatchNormGatherStatsWithCounts": 0,
           "BatchNormElemt": 2, "BatchNormReduceBackward": 2, "BatchNormElemtBackward": 3,
           "BatchNormTrainingBackward": 5, "BatchNormActivation": 3, "BatchNormActivationBackward": 5}
SHAPES = [(32, 64, 112, 112), (32, 256, 56, 56), (256, 2048, 7, 7)]


def time_op(reg, shape, dtype, channels_last, stream, reps=20) -> float:
    """Median µs of one phase 2 of ``reg`` (repeatable executor; device time by events on CUDA)."""
    args, ptrs = op_args(reg, shape, dtype, channels_last)
    ws_size, ex, ret = reg.get_workspace_size(*args)
    assert ret == 0, (reg.opdef.name, acl.get_recent_err_msg())
    A.aclSetAclOpExecutorRepeatable(ex)
    ws = acl.rt.malloc(ws_size, 0)[0] if ws_size else None
    e0, _ = acl.rt.create_event()
    e1, _ = acl.rt.create_event()
    times = []
    for _ in range(reps):
        acl.rt.record_event(e0, stream)
        reg.run(ws, ws_size, ex, stream)
        acl.rt.record_event(e1, stream)
        acl.rt.synchronize_event(e1)
        times.append(acl.rt.event_elapsed_time(e0, e1)[0] * 1e3)
    assert acl.rt.synchronize_stream(stream) == 0, acl.get_recent_err_msg()
    A.aclDestroyAclOpExecutor(ex)
    for e in (e0, e1):
        acl.rt.destroy_event(e)
    for p in ptrs + ([ws] if ws else []):
        acl.rt.free(p)
    return statistics.median(times[max(1, reps // 4):])


def torch_counterparts(shape, tdt, channels_last):
    """{op name: callable} running PyTorch's CUDA op on the same shape (for side-by-side timing)."""
    import torch
    C = shape[1]
    mf = torch.channels_last if channels_last else torch.contiguous_format
    x = torch.randn(*shape, device="cuda", dtype=tdt).to(memory_format=mf)
    g = torch.randn_like(x)
    f = dict(device="cuda", dtype=torch.float32)
    w, b, rm, rv = torch.ones(C, **f), torch.zeros(C, **f), torch.zeros(C, **f), torch.ones(C, **f)
    mean, inv = torch.zeros(C, **f), torch.ones(C, **f)
    cnt = torch.tensor([x.numel() // C], device="cuda", dtype=torch.int32)
    return {
        "BatchNorm": lambda: torch.native_batch_norm(x, w, b, rm, rv, True, 0.1, 1e-5),
        "BatchNormBackward": lambda: torch.ops.aten.native_batch_norm_backward(
            g, x, w, rm, rv, mean, inv, True, 1e-5, [True, True, True]),
        "BatchNormStats": lambda: torch.batch_norm_stats(x, 1e-5),
        "BatchNormElemt": lambda: torch.batch_norm_elemt(x, w, b, mean, inv, 1e-5),
        "BatchNormReduceBackward": lambda: torch.batch_norm_backward_reduce(g, x, mean, inv, w, True, True, True),
        "BatchNormElemtBackward": lambda: torch.batch_norm_backward_elemt(g, x, mean, inv, w, mean, mean, cnt),
    }


def time_torch(fn, reps=20) -> float:
    import torch
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e3)
    return statistics.median(times[max(1, reps // 4):])


def gpu_kernels(shapes=SHAPES, dtypes=(A.ACL_FLOAT, A.ACL_FLOAT16, A.ACL_BF16)) -> list[tuple]:
    """(op, shape, layout, dtype, ours µs, GB/s, torch µs or nan, roofline fraction) on the GPU."""
    import cupy as cp
    import torch
    from aclnn_py.opdef import OPS
    peak = float("nan")
    try:
        dev = cp.cuda.runtime.getDeviceProperties(0)
        peak = 2 * dev["memoryClockRate"] * 1e3 * dev["memoryBusWidth"] / 8 / 1e9
    except Exception:
        pass
    tdts = {A.ACL_FLOAT: torch.float32, A.ACL_FLOAT16: torch.float16, A.ACL_BF16: torch.bfloat16}
    stream, _ = acl.rt.create_stream()
    rows = []
    for shape in shapes:
        for dt in dtypes:
            for cl in (False, True):
                ours_shape = (shape[0], *shape[2:], shape[1]) if cl else shape
                theirs = torch_counterparts(shape, tdts[dt], cl)
                for name, reg in OPS.items():
                    us = time_op(reg, ours_shape, dt, cl, stream)
                    nbytes = _PASSES[name] * int(np.prod(shape)) * A.dtypes.dtype_info(dt).itemsize
                    t_us = time_torch(theirs[name]) if name in theirs else float("nan")
                    gbs = nbytes / us / 1e3 if nbytes else float("nan")
                    rows.append((name, "x".join(map(str, shape)), "NHWC" if cl else "NCHW",
                                 A.aclDataType(dt).name[4:], us, gbs, t_us, gbs / peak))
    acl.rt.destroy_stream(stream)
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
        print(f"\n{'GPU: op':<34} {'shape':<16} {'layout':<6} {'dtype':<7} {'ours µs':>9} {'GB/s':>7} "
              f"{'torch µs':>9} {'roofline':>8}")
        for name, shape, layout, dt, us, gbs, t_us, frac in gpu_kernels():
            print(f"{name:<34} {shape:<16} {layout:<6} {dt:<7} {us:9.1f} {gbs:7.0f} {t_us:9.1f} {frac:8.1%}")
    if own:
        acl.finalize()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
