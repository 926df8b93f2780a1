"""Host CUDA emulator vs PyTorch CPU, side by side in one run (issue 13). Ratios, never asserts.

* BatchNorm family (every registered op with a ``bench`` builder in the op database whose name
  starts with ``BatchNorm``) end to end: phase 1 + phase 2 + synchronize, on 8x64x56x56 and
  32x256x14x14, NCHW and NHWC, f32 (and f16/bf16 with ``--all-dtypes``), against PyTorch's CPU op on
  the same tensors (``OpInfo.torch_gpu(sample, "cpu")``); target <= 3x (f32), 5x (f16/bf16).
* A plain elementwise kernel (y = a*x + y, f32) in GB/s against a NumPy copy of the same bytes
  (the machine's practical memory bandwidth); target >= 50 %.
* Launch overhead of a tiny kernel: ``Function.launch`` (the emulator itself) and a CuPy-style
  ``RawKernel`` call on the default stream; target <= 20 us. And a call's own cost: BatchNorm and
  BatchNormBackward end to end on a tiny 2x4x3x3 f32 input.
* The bounds-check debug mode's cost on the elementwise kernel.
* ``--kernels``: instead of the above, each BatchNorm-family launch sequence kernel by kernel (the
  fastest of the runs of each launch, in ms): the view to compare two builds
  of the kernels with (A/B in the same minute; this VM's speed drifts by 2x between minutes).

    python benchmarks/bench_emulator.py [--all-dtypes] [--quick] [--kernels]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

import aclnn_py as A
from aclnn_py import acl, emulator
from aclnn_py.backends import get_backend

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from bench_ops import Call, bench_cases  # noqa: E402

SHAPES = [(8, 64, 56, 56), (32, 256, 14, 14)]
AXPY = r'''
extern "C" __global__ void axpy(float a, const float* x, float* y, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (; i < n; i += stride) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void axpy1(float a, const float* x, float* y, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void tiny(int* p) { if (threadIdx.x == 0) p[0] += 1; }
'''


_BEST: dict = {}  # id(fn) -> best time of the last med() call (a shared, loaded VM makes medians noisy)


def med(fn, reps):
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    _BEST["last"] = min(ts)
    return statistics.median(ts)


def end_to_end_us(call: Call, stream, reps: int) -> float:
    def once():
        ws_size, ex = call.phase1()
        ws = acl.rt.malloc(ws_size, 0)[0] if ws_size else None
        ret = call.reg.run(ws, ws_size, ex, stream)
        if ret != 0:
            raise RuntimeError(acl.get_recent_err_msg())
        if acl.rt.synchronize_stream(stream) != 0:
            raise RuntimeError(acl.get_recent_err_msg())
        if ws:
            acl.rt.free(ws)
    once()
    m = med(once, reps) * 1e6
    _BEST["ours"] = _BEST["last"] * 1e6
    return m


def bn_cases(dtypes):
    """Every BatchNorm-family bench case: (registered op, OpInfo, sample, row label (op, shape,
    layout, dtype)), in one fixed order."""
    for reg, info in bench_cases():
        if info.bench is None or not reg.opdef.name.startswith("BatchNorm"):
            continue
        for shape in SHAPES:
            for dt in dtypes:
                for cl in (False, True):
                    yield reg, info, info.bench(np.random.default_rng(1), shape, dt, cl), (
                        reg.opdef.name, "x".join(map(str, shape)), "NHWC" if cl else "NCHW", A.aclDataType(dt).name[4:])


def batchnorm_rows(dtypes, reps):
    import torch
    torch.set_num_threads(max(1, torch.get_num_threads()))
    stream, _ = acl.rt.create_stream()
    rows = []
    no_cpu_op = set()   # ops whose PyTorch call failed once: said once, not tried again
    for reg, info, sample, label in bn_cases(dtypes):
        if info.torch_gpu is None:
            continue
        call = Call(reg, sample)
        try:
            ours = end_to_end_us(call, stream, reps)
        finally:
            call.close()
        theirs = best = float("nan")
        if reg.opdef.name not in no_cpu_op:
            try:
                tfn = info.torch_gpu(sample, "cpu")
                tfn()
                theirs = med(tfn, reps) * 1e6
                best = _BEST["ours"] / (_BEST["last"] * 1e6)
            except Exception as e:  # an op PyTorch has no CPU kernel for (e.g. cuDNN-only)
                no_cpu_op.add(reg.opdef.name)
                print(f"  ({reg.opdef.name}: PyTorch CPU has no equivalent: {str(e).splitlines()[0][:80]})")
        rows.append((*label, ours, theirs, ours / theirs, best))
    acl.rt.destroy_stream(stream)
    return rows


def kernel_rows(dtypes, reps):
    """(op, shape, layout, dtype, [(kernel, fastest ms)]) for every BatchNorm-family bench case."""
    from aclnn_py.emulator import compiler
    best: dict = {}
    launch = compiler.Function.launch

    def timed(self, *args, **kwargs):
        t = time.perf_counter()
        launch(self, *args, **kwargs)
        dt = time.perf_counter() - t
        best[self.name] = min(best.get(self.name, dt), dt)

    stream, _ = acl.rt.create_stream()
    rows = []
    compiler.Function.launch = timed
    try:
        for reg, _, sample, label in bn_cases(dtypes):
            call = Call(reg, sample)
            try:
                end_to_end_us(call, stream, reps)
            finally:
                call.close()
            rows.append((*label, [(k.split("<")[0], v * 1e3) for k, v in best.items()]))
            best.clear()
    finally:
        compiler.Function.launch = launch
        acl.rt.destroy_stream(stream)
    return rows


def bandwidth(reps):
    from aclnn_py.emulator import compile_module
    mod = compile_module(AXPY, filename="bench_axpy.cu")
    fn = mod.get_function("axpy")
    n = 1 << 24  # 64 MiB per array
    x = np.random.default_rng(0).random(n, dtype=np.float32)
    y = np.zeros(n, np.float32)
    params = [np.float32(2.0).tobytes(), np.uint64(x.ctypes.data).tobytes(), np.uint64(y.ctypes.data).tobytes(),
              np.int64(n).tobytes()]
    grid = (64, 1, 1)
    fn.launch(grid, (256, 1, 1), params)
    t_k = med(lambda: fn.launch(grid, (256, 1, 1), params), reps)
    kernel_gbs = 3 * x.nbytes / t_k / 1e9            # read x, read y, write y
    # the same computation, one element per thread (grid n/256): the emulator's plain loop walks
    # memory in order, where the grid-stride form above makes each CUDA thread stride by 64 KiB
    fn1 = mod.get_function("axpy1")
    grid1 = ((n + 255) // 256, 1, 1)
    fn1.launch(grid1, (256, 1, 1), params)
    t_1 = med(lambda: fn1.launch(grid1, (256, 1, 1), params), reps)
    kernel1_gbs = 3 * x.nbytes / t_1 / 1e9
    dst = np.empty_like(x)
    np.copyto(dst, x)
    t_c = med(lambda: np.copyto(dst, x), reps)
    copy_gbs = 2 * x.nbytes / t_c / 1e9               # read + write
    emulator.set_bounds_check(True)
    try:
        # pointers into acl.rt memory are the ones the debug mode fences
        px, _ = acl.rt.malloc(x.nbytes, 0)
        py, _ = acl.rt.malloc(y.nbytes, 0)
        acl.rt.memcpy(px, x.nbytes, x.ctypes.data, x.nbytes, 1)
        acl.rt.memcpy(py, y.nbytes, y.ctypes.data, y.nbytes, 1)
        p2 = [params[0], np.uint64(px).tobytes(), np.uint64(py).tobytes(), params[3]]
        t_b = med(lambda: fn.launch(grid, (256, 1, 1), p2), max(3, reps // 3))
        acl.rt.free(px)
        acl.rt.free(py)
    finally:
        emulator.set_bounds_check(None)
    return kernel_gbs, kernel1_gbs, copy_gbs, t_k * 1e3, t_b * 1e3


def launch_overhead():
    from aclnn_py.emulator import compile_module
    mod = compile_module(AXPY, filename="bench_axpy.cu")
    fn = mod.get_function("tiny")
    buf = np.zeros(1, np.int32)
    p = [np.uint64(buf.ctypes.data).tobytes()]
    for _ in range(200):
        fn.launch((1, 1, 1), (32, 1, 1), p)
    n = 5000
    t = time.perf_counter()
    for _ in range(n):
        fn.launch((1, 1, 1), (32, 1, 1), p)
    direct = (time.perf_counter() - t) / n * 1e6
    k = A.RawModule(code=AXPY).get_function("tiny")
    d, _ = acl.rt.malloc(4, 0)
    for _ in range(100):
        k((1,), (32,), (d,))
    t = time.perf_counter()
    for _ in range(2000):
        k((1,), (32,), (d,))
    raw = (time.perf_counter() - t) / 2000 * 1e6
    acl.rt.free(d)
    return direct, raw


def call_overhead(reps: int) -> list[tuple[str, float]]:
    """End to end (phase 1 + workspace malloc + phase 2 + synchronize + free) of the BatchNorm family's
    forward and backward on a tiny 2x4x3x3 f32 input: what a call costs besides its kernels' work."""
    stream, _ = acl.rt.create_stream()
    out = []
    for reg, info in bench_cases():
        if reg.opdef.name in ("BatchNorm", "BatchNormBackward"):
            call = Call(reg, info.bench(np.random.default_rng(1), (2, 4, 3, 3), A.ACL_FLOAT, False))
            end_to_end_us(call, stream, 20)
            out.append((reg.opdef.name, end_to_end_us(call, stream, 100 * reps)))
    acl.rt.destroy_stream(stream)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--all-dtypes", action="store_true")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--kernels", action="store_true")
    a = ap.parse_args()
    assert acl.init() == 0 and acl.rt.set_device(0) == 0
    if get_backend().name != "host":
        print("bench_emulator: the current backend is not the host emulator; nothing to do")
        return 0
    reps = 3 if a.quick else 7
    dtypes = (A.ACL_FLOAT, A.ACL_FLOAT16, A.ACL_BF16) if a.all_dtypes else (A.ACL_FLOAT,)
    if a.kernels:
        for op, shape, lay, dt, ks in kernel_rows(dtypes, 3 * reps):
            print(f"{op:<30} {shape:<13} {lay:<5} {dt:<7} " + "  ".join(f"{k} {ms:.2f}" for k, ms in ks))
        print("(fastest launch of each kernel, ms)")
        return 0
    import os
    print(f"host emulator, {os.cpu_count()} CPU(s), pool threads ACLNN_PY_EMU_THREADS="
          f"{os.environ.get('ACLNN_PY_EMU_THREADS', 'default')}")
    direct, raw = launch_overhead()
    print(f"launch overhead, tiny kernel: Function.launch {direct:.1f} us, RawKernel (default stream) {raw:.1f} us "
          f"(target <= 20 us)")
    print("per-call overhead, tiny 2x4x3x3 f32, end to end: " +
          ", ".join(f"{op} {us:.0f} us" for op, us in call_overhead(reps)))
    kg, k1, cg, tk, tb = bandwidth(reps)
    print(f"elementwise axpy 64 MiB x 3, one element per thread (grid n/256): {k1:.1f} GB/s vs NumPy copy "
          f"{cg:.1f} GB/s = {k1 / cg:.0%} (target >= 50%)")
    print(f"elementwise axpy 64 MiB x 3, grid-stride loop on 64 blocks: {kg:.1f} GB/s = {kg / cg:.0%} of the copy")
    print(f"bounds-check debug mode on the same launch: {tk:.1f} ms -> {tb:.1f} ms ({tb / tk:.1f}x)")
    rows = batchnorm_rows(dtypes, reps)
    print(f"\n{'op':<34} {'shape':<14} {'layout':<6} {'dtype':<7} {'emulator ms':>11} {'torch ms':>9} {'ratio':>7} "
          f"{'best/best':>9}")
    for op, shape, lay, dt, ours, theirs, r, best in rows:
        print(f"{op:<34} {shape:<14} {lay:<6} {dt:<7} {ours / 1e3:>11.2f} {theirs / 1e3:>9.2f} {r:>6.1f}x {best:>8.1f}x")
    print("(medians; best/best = fastest emulator run / fastest PyTorch run, less sensitive to a loaded machine)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
