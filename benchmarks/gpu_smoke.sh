#!/usr/bin/env bash
# The GPU smoke test: the one command to run on a machine with an NVIDIA GPU (issue 14).
#
#   bash benchmarks/gpu_smoke.sh [cuda12|cuda13]      # default: the extra that fits the driver
#   GPU_SMOKE_OFFLINE=1 bash benchmarks/gpu_smoke.sh   # no package index: use the CuPy already there
#
# 1. installs aclnn-py with the CUDA extra (CuPy 14 + its own toolkit wheels) and the test extra
#    (offline: runs from this checkout with PYTHONPATH, on the CuPy, pytest and NCCL already installed)
# 2. aclnn-py doctor: driver / CuPy / NVRTC / headers, every kernel file on both backends, compared
# 3. the whole test suite on the GPU (conftest picks the CUDA backend; the `cuda`-marked tests run,
#    tests/test_hccl_nccl.py among them: HCCL on real NCCL); pytest-xdist spreads it when installed
# 4. compute-sanitizer memcheck and racecheck over every kernel file (every op's small case)
# 5. `aclnn-py samples` on the GPU (every sample, the support table)
# 6. the GPU benchmarks: kernel time, GB/s vs the HBM roofline, PyTorch CUDA side by side, NCHW/NHWC;
#    HcclAllReduce on NCCL vs the raw NCCL call on the same buffers
#
# Everything goes to gpu_smoke_out/ (one log per step, and summary.txt); each step has its own time
# limit, so the whole run stays under 11 minutes (GPU_SMOKE_LIMITS scales them; GPU_SMOKE_PYTEST_ARGS
# adds pytest arguments, e.g. --ignore=...). A step past its limit gets SIGINT first, so pytest still
# prints its summary of what ran. Exit status: 0 only if every step passed.
# Seen on a cold H200 machine (16 cores): the doctor needs over a minute (both backends compile every
# kernel file); the suite with 14 workers ran in 148 s.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${GPU_SMOKE_OUT:-gpu_smoke_out}
mkdir -p "$OUT"
SUMMARY="$OUT/summary.txt"
: > "$SUMMARY"
status=0
SCALE=${GPU_SMOKE_LIMITS:-1}
step() {      # step NAME SECONDS CMD...: run with a time limit, log, record the verdict
  local name=$1 limit; limit=$(python3 -c "print(max(10, int($2 * $SCALE)))"); shift 2
  local t0=$SECONDS
  echo "== $name (limit ${limit}s): $*"
  timeout -s INT --kill-after=20 "$limit" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  local verdict=PASS
  [ $rc -eq 0 ] || { verdict="FAIL (exit $rc$([ $rc -eq 124 ] && echo ', time limit'))"; status=1; }
  echo "$name: $verdict in $((SECONDS - t0)) s" | tee -a "$SUMMARY"
  tail -n 5 "$OUT/$name.log"
}

EXTRA=${1:-}
if [ -z "$EXTRA" ]; then
  drv=$(python3 -c "from aclnn_py.toolkit import driver_version as d; v=d(); print(v//1000 if v else 0)" 2>/dev/null \
        || python3 - <<'EOF'
import ctypes
try:
    v = ctypes.c_int(); ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(v)); print(v.value // 1000)
except OSError:
    print(0)
EOF
)
  case "$drv" in 0) echo "no NVIDIA driver: this script needs a GPU"; exit 2 ;; 12) EXTRA=cuda12 ;; *) EXTRA=cuda13 ;; esac
fi
echo "extra: $EXTRA" | tee -a "$SUMMARY"

if [ "${GPU_SMOKE_OFFLINE:-0}" = 1 ]; then
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
  step install 30 python3 -c "import aclnn_py, cupy; from cupy.cuda import nccl; print('aclnn_py', aclnn_py.__file__, 'cupy', cupy.__version__, 'nccl', nccl.get_version())"
else
  step install 90 python3 -m pip install -q ".[$EXTRA,test]"
fi
step doctor 120 python3 -m aclnn_py.cli doctor
XDIST=()
python3 -c "import xdist" 2>/dev/null && XDIST=(-n "$(( $(nproc) > 12 ? 12 : $(nproc) ))")
python3 -c "import pytest_timeout" 2>/dev/null && XDIST+=(--timeout=150)
step pytest 210 env ACLNN_PY_DEVICE=cuda python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -m "not slow" \
  "${XDIST[@]}" ${GPU_SMOKE_PYTEST_ARGS:-}

SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null \
      || python3 -c "import glob,sys,site; print(next(iter(glob.glob(site.getsitepackages()[0]+'/nvidia/**/compute-sanitizer', recursive=True)), ''))")
if [ -n "$SAN" ]; then
  for tool in memcheck racecheck; do
    # every kernel file: the doctor's child builds every family and runs every op once on the GPU
    step "sanitizer-$tool" 60 "$SAN" --tool "$tool" --error-exitcode 3 --target-processes all \
      env ACLNN_PY_DEVICE=cuda python3 -m aclnn_py.doctor --child "$OUT/sanitizer-$tool.json"
  done
else
  echo "compute-sanitizer: FAIL (not found; install the CUDA toolkit's compute-sanitizer)" | tee -a "$SUMMARY"
  status=1
fi

step samples 60 env ACLNN_PY_DEVICE=cuda python3 -m aclnn_py.cli samples
step bench 90 env ACLNN_PY_DEVICE=cuda ACLNN_PY_BENCH_REPS=10 python3 benchmarks/bench_ops.py --quick
cp "$OUT/bench.log" "$OUT/bench_table.txt" 2>/dev/null
step bench-hccl 30 env ACLNN_PY_DEVICE=cuda python3 benchmarks/bench_hccl.py --iters 4000
echo "== summary"; cat "$SUMMARY"
exit $status
