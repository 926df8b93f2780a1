"""Side-by-side timings of every registered op. The cases come from the registry and the op database
(``tests/opdb``): each OpInfo's ``bench(rng, nchw_shape, dtype, channels_last)`` builds a valid call
of any size, so a new op family is benchmarked by adding its database entry — no table here.

Host overhead (always; median µs over many calls on a tiny input): phase 1, phase 2 (enqueue only)
and a repeatable-executor relaunch, with PyTorch's CPU op on the same tiny input where the OpInfo
names one (``torch_gpu`` run on the CPU tensors).

GPU (CUDA backend only): kernel time by CUDA events (median of repeated launches), achieved
bandwidth with the byte model "every tensor of the call read or written once" (a lower bound of
the traffic, so the roofline fraction is conservative), against the device's peak HBM bandwidth,
and PyTorch's CUDA op on the same shapes where the OpInfo gives one (``torch_gpu``). NCHW and NHWC,
f32/f16/bf16.

    python benchmarks/bench_ops.py            # or: aclnn-py bench
"""
from __future__ import annotations

import statistics
import sys
import time

import numpy as np

import aclnn_py as A
from aclnn_py import acl
from aclnn_py._paths import _find
from aclnn_py.backends import get_backend
from aclnn_py.opdef import REGISTRY

sys.path.insert(0, str(_find("tests")))
from harness import free_device_tensor, make_device_tensor  # noqa: E402
from opdb import OP_DB  # noqa: E402

INFOS = {i.name: i for i in OP_DB}
TINY = (2, 4, 3, 3)
SHAPES = [(32, 64, 112, 112), (32, 256, 56, 56), (256, 2048, 7, 7)]


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


class Call:
    """Device buffers and the phase-1 argument list of one sample (freed by ``close``)."""

    def __init__(self, reg, sample):
        self.reg = reg
        self.dev = {n: make_device_tensor(sp, sample.channel_axis) for n, sp in sample.tensors.items() if sp is not None}
        self.args = [self.dev[p.name].tensor if p.name in self.dev else
                     (None if p.name in sample.tensors else sample.attrs.get(p.name)) for p in reg.opdef.params]
        self.nbytes = sum(d.nbytes for d in self.dev.values())

    def phase1(self):
        ws, ex, ret = self.reg.get_workspace_size(*self.args)
        if ret != 0:
            raise RuntimeError(f"{self.reg.opdef.name}: phase 1 returned {ret}: {acl.get_recent_err_msg()}")
        return ws, ex

    def close(self):
        for d in self.dev.values():
            free_device_tensor(d)


def bench_cases():
    """(registered op, OpInfo) for every registered op that has a database entry."""
    return [(reg, INFOS[name]) for name, reg in REGISTRY.items() if name in INFOS]


def tiny_sample(info):
    """A small f32 call: the entry's bench builder, else its first contiguous non-empty f32 sample."""
    if info.bench is not None:
        return info.bench(np.random.default_rng(0), TINY, A.ACL_FLOAT, False)
    return next(s for s in info.samples(np.random.default_rng(0)) if s.tensors[info.data].layout == "contiguous"
                and info.data_dtype(s) == A.ACL_FLOAT and np.size(s.tensors[info.data].values))


def _check(reg, ret) -> None:
    """A benchmark of a failing call measures nothing: every phase 2 status is checked."""
    if ret != 0:
        raise RuntimeError(f"{reg.opdef.name}: phase 2 returned {ret}: {acl.get_recent_err_msg()}")


def torch_available(device: str) -> bool:
    """PyTorch is optional: the side-by-side columns are nan without it (or without its CUDA build)."""
    try:
        import torch
    except ImportError:
        return False
    return device != "cuda" or torch.cuda.is_available()


def host_overhead() -> list[tuple[str, float, float, float, float]]:
    """(op, phase 1 µs, phase 2 µs, relaunch µs, PyTorch CPU µs or nan) on a tiny f32 input."""
    rows = []
    stream, _ = acl.rt.create_stream()
    for reg, info in bench_cases():
        sample = tiny_sample(info)
        call = Call(reg, sample)
        ws_size, ex = call.phase1()
        A.aclDestroyAclOpExecutor(ex)
        ws = acl.rt.malloc(ws_size, 0)[0] if ws_size else None
        p1 = _median_us(lambda: A.aclDestroyAclOpExecutor(call.phase1()[1]), n=1000, warm=100)

        def p2():
            _, e = call.phase1()
            t = time.perf_counter()
            ret = reg.run(ws, ws_size, e, stream)
            dt = time.perf_counter() - t
            _check(reg, ret)
            return dt
        p2us = statistics.median(p2() for _ in range(500)) * 1e6
        acl.rt.synchronize_stream(stream)
        _, ex = call.phase1()
        A.aclSetAclOpExecutorRepeatable(ex)
        rl = _median_us(lambda: _check(reg, reg.run(ws, ws_size, ex, stream)), n=500, warm=50)
        assert acl.rt.synchronize_stream(stream) == 0, acl.get_recent_err_msg()
        A.aclDestroyAclOpExecutor(ex)
        torch_us = float("nan")
        if info.torch_gpu is not None:
            try:
                fn = info.torch_gpu(sample, "cpu")
                fn()
            except (ImportError, NotImplementedError, RuntimeError):   # no PyTorch, or no CPU kernel
                fn = None
            if fn is not None:
                torch_us = _median_us(fn, n=1000, warm=100)
        rows.append((f"aclnn{reg.opdef.name}", p1, p2us, rl, torch_us))
        if ws:
            acl.rt.free(ws)
        call.close()
    acl.rt.destroy_stream(stream)
    return rows


_SPIN = r"""
extern "C" __global__ void hold(long long ns) {
    long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
#if __CUDA_ARCH__ >= 700
        __nanosleep(1000);
#endif
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}
"""
_hold_kernel = []


def hold_gpu(cuda_stream_ptr: int, us: float = 500.0) -> None:
    """Queue a kernel that keeps the GPU busy for ``us`` on a CUDA stream, so that the event, the
    launches and the event queued behind it are timed as device time alone. Without it the events
    also time the host's launch cost in between: a 60 µs kernel then timed our Python phase 2."""
    import cupy
    if not _hold_kernel:
        _hold_kernel.append(cupy.RawKernel(_SPIN, "hold"))
    import warnings
    with warnings.catch_warnings():       # CuPy 14 deprecates ExternalStream (it still works, as measured)
        warnings.simplefilter("ignore", DeprecationWarning)
        external = cupy.cuda.ExternalStream(cuda_stream_ptr)
    with external:
        _hold_kernel[0]((1,), (1,), (np.int64(us * 1e3),))


def _cuda_stream_ptr(stream) -> int | None:
    if get_backend().name != "cuda":
        return None
    from aclnn_py.acl._state import resolve_stream
    s = resolve_stream("bench", stream)[0]
    return int(getattr(s, "ptr", s))


def time_call(call: Call, stream, reps=20) -> float:
    """Median µs of one phase 2 of ``call`` (repeatable executor; device time by events; on a GPU the
    stream is held busy first, so the host's launch cost is not in the time)."""
    ws_size, ex = call.phase1()
    A.aclSetAclOpExecutorRepeatable(ex)
    ws = acl.rt.malloc(ws_size, 0)[0] if ws_size else None
    e0, _ = acl.rt.create_event()
    e1, _ = acl.rt.create_event()
    cuda_stream = _cuda_stream_ptr(stream)
    times = []
    for _ in range(reps):
        if cuda_stream is not None:
            hold_gpu(cuda_stream)
        acl.rt.record_event(e0, stream)
        ret = call.reg.run(ws, ws_size, ex, stream)
        if ret != 0:
            raise RuntimeError(f"{call.reg.opdef.name}: phase 2 returned {ret}: {acl.get_recent_err_msg()}")
        acl.rt.record_event(e1, stream)
        acl.rt.synchronize_event(e1)
        times.append(acl.rt.event_elapsed_time(e0, e1)[0] * 1e3)
    if acl.rt.synchronize_stream(stream) != 0:
        raise RuntimeError(acl.get_recent_err_msg())
    A.aclDestroyAclOpExecutor(ex)
    for e in (e0, e1):
        acl.rt.destroy_event(e)
    if ws:
        acl.rt.free(ws)
    return statistics.median(times[max(1, reps // 4):])


def time_torch_cuda(fn, reps=20) -> float:
    import torch
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        hold_gpu(torch.cuda.current_stream().cuda_stream)      # the same rule as ours: device time alone
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e3)
    return statistics.median(times[max(1, reps // 4):])


def peak_bandwidth_gbs() -> float:
    try:
        import cupy as cp
        dev = cp.cuda.runtime.getDeviceProperties(0)
        return 2 * dev["memoryClockRate"] * 1e3 * dev["memoryBusWidth"] / 8 / 1e9
    except Exception:
        return float("nan")


def device_kernels(shapes=SHAPES, dtypes=(A.ACL_FLOAT, A.ACL_FLOAT16, A.ACL_BF16), reps=20, on_row=None) -> list[tuple]:
    """(op, shape, layout, dtype, ours µs, GB/s, torch µs or nan, roofline fraction) on the current device."""
    peak = peak_bandwidth_gbs()
    torch_device = "cuda" if get_backend().name == "cuda" and torch_available("cuda") else None
    stream, _ = acl.rt.create_stream()
    rows = []
    for reg, info in bench_cases():
        if info.bench is None:        # no builder of arbitrary sizes: host overhead only
            continue
        for shape in shapes:
            for dt in dtypes:
                for cl in (False, True):
                    sample = info.bench(np.random.default_rng(1), shape, dt, cl)
                    call = Call(reg, sample)
                    try:
                        us = time_call(call, stream, reps)
                    finally:
                        call.close()
                    t_us = float("nan")
                    if torch_device and info.torch_gpu is not None:
                        try:
                            t_us = time_torch_cuda(info.torch_gpu(sample, torch_device), reps)
                        except (ImportError, NotImplementedError) as e:      # no such PyTorch op here
                            print(f"# PyTorch side skipped for {reg.opdef.name}: {e}", file=sys.stderr)
                    gbs = call.nbytes / us / 1e3
                    rows.append((reg.opdef.name, "x".join(map(str, shape)), "NHWC" if cl else "NCHW",
                                 A.aclDataType(dt).name[4:], us, gbs, t_us, gbs / peak))
                    if on_row is not None:
                        on_row(rows[-1])
    acl.rt.destroy_stream(stream)
    return rows


def host_kernels(match: str = "", shape=(8, 32, 56, 56), reps: int = 5) -> list[tuple]:
    """(op, layout, ours ms, PyTorch CPU ms, ratio) on the host backend, f32, for the ops whose name
    contains ``match`` and whose database entry can build a call of any size and name PyTorch's op."""
    import time
    stream, _ = acl.rt.create_stream()
    rows = []
    for reg, info in bench_cases():
        if info.bench is None or info.torch_gpu is None or match not in reg.opdef.name:
            continue
        for cl in (False, True):
            sample = info.bench(np.random.default_rng(1), shape, A.ACL_FLOAT, cl)
            call = Call(reg, sample)
            try:
                us = time_call(call, stream, reps)
            finally:
                call.close()
            try:
                fn = info.torch_gpu(sample, "cpu")
                fn()
            except (ImportError, NotImplementedError, RuntimeError):
                continue
            t = time.perf_counter()
            for _ in range(reps):
                fn()
            t_us = (time.perf_counter() - t) / reps * 1e6
            rows.append((reg.opdef.name, "NHWC" if cl else "NCHW", us / 1e3, t_us / 1e3, us / t_us))
    acl.rt.destroy_stream(stream)
    return rows


def main(argv=None) -> int:
    """``--quick`` (the GPU smoke test): one large shape, f32 and bf16, ACLNN_PY_BENCH_REPS repetitions;
    ``--device-only``: no host-overhead table."""
    import os
    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    if "--host-kernels" in argv:          # the emulator against PyTorch CPU: --host-kernels [name filter]
        i = argv.index("--host-kernels")
        match = argv[i + 1] if i + 1 < len(argv) and not argv[i + 1].startswith("-") else ""
        if acl.init() == 0:
            acl.rt.set_device(0)
        print(f"{'host kernels, 8x32x56x56 f32':<40} {'layout':<6} {'ours ms':>9} {'torch CPU ms':>13} {'ratio':>7}")
        for name, lay, ms, tms, r in host_kernels(match):
            print(f"{name:<40} {lay:<6} {ms:9.2f} {tms:13.2f} {r:7.2f}", flush=True)
        return 0
    reps = int(os.environ.get("ACLNN_PY_BENCH_REPS", "20"))
    own = acl.init() == 0
    if own:
        acl.rt.set_device(0)
    print(f"backend: {get_backend().name}")
    print(f"\n{'host overhead, tiny 2x4x3x3 f32 (median µs)':<46} {'phase 1':>8} {'phase 2':>8} {'relaunch':>9} "
          f"{'torch CPU':>10}")
    for name, p1, p2, rl, t in ([] if "--device-only" in argv else host_overhead()):
        print(f"{name:<46} {p1:8.2f} {p2:8.2f} {rl:9.2f} {t:10.2f}")
    if get_backend().name == "cuda":
        print(f"\n{'GPU: op':<34} {'shape':<16} {'layout':<6} {'dtype':<7} {'ours µs':>9} {'GB/s':>7} "
              f"{'torch µs':>9} {'roofline':>8}")
        def row(r):
            name, shape, layout, dt, us, gbs, t_us, frac = r
            ratio = t_us / us if t_us == t_us else float("nan")
            print(f"{name:<34} {shape:<16} {layout:<6} {dt:<7} {us:9.1f} {gbs:7.0f} {t_us:9.1f} {frac:8.1%} "
                  f"{ratio:6.2f}x", flush=True)
        print(f"{'':<34} {'':<16} {'':<6} {'':<7} {'':>9} {'':>7} {'':>9} {'':>8} {'vs torch':>7}")
        if quick:
            device_kernels(shapes=[(32, 256, 56, 56)], dtypes=(A.ACL_FLOAT, A.ACL_BF16), reps=reps, on_row=row)
        else:
            device_kernels(reps=reps, on_row=row)
    if own:
        acl.finalize()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
