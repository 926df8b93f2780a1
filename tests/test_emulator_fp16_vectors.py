"""The emulator's whole-vector __half / __nv_bfloat16 conversions (`__emu_halves_to_floats`,
`__emu_floats_to_halves`, `__emu_bfloat16s_to_floats`, `__emu_floats_to_bfloat16s`: an emulator extension
the project's kernels use under #ifdef __EMU_CPU__): the same bits as CUDA's pair conversions
(`__half22float2`, `__floats2half2_rn`, `__bfloat1622float2`, `__floats2bfloat162_rn`) for every 16-bit
pattern and for floats around every rounding case, NaNs included, with F16C and with the software ones."""
from __future__ import annotations

import numpy as np
import pytest

import aclnn_py as A
from aclnn_py import acl

pytestmark = pytest.mark.skipif(
    acl._state.state.initialized and acl._state.state.backend.name != "host", reason="emulator extension")

SRC = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
// every 16-bit pattern: whole 16-byte and 8-byte vectors against the pairs, element by element
#define TO_F32(NAME, H2, PAIR_TO_F2, WHOLE)                                                          \
extern "C" __global__ void NAME(const uint4* in, float* whole8, float* whole4, float* pairs, long long n) { \
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;                             \
  if (i >= n) return;                                                                                \
  const uint4 v = in[i];                                                                             \
  float f[8], g[4], q[4];                                                                            \
  WHOLE(v, f, true);  /* through memory, as the kernels' sums take it */                           \
  WHOLE(make_uint2(v.x, v.y), g);                                                                    \
  WHOLE(make_uint2(v.z, v.w), q);                                                                    \
  const H2* h = reinterpret_cast<const H2*>(&v);                                                     \
  for (int k = 0; k < 8; ++k) whole8[8 * i + k] = f[k];                                              \
  for (int k = 0; k < 4; ++k) {                                                                      \
    whole4[8 * i + k] = g[k];                                                                        \
    whole4[8 * i + 4 + k] = q[k];                                                                    \
    const float2 p = PAIR_TO_F2(h[k]);                                                               \
    pairs[8 * i + 2 * k] = p.x;                                                                      \
    pairs[8 * i + 2 * k + 1] = p.y;                                                                  \
  }                                                                                                  \
}
#define TO_16(NAME, H2, F2_TO_PAIR, WHOLE)                                                           \
extern "C" __global__ void NAME(const float* in, uint4* whole8, uint4* whole4, uint4* pairs, long long n) { \
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;                             \
  if (i >= n) return;                                                                                \
  float f[8], g[4], q[4];                                                                            \
  for (int k = 0; k < 8; ++k) f[k] = in[8 * i + k];                                                  \
  for (int k = 0; k < 4; ++k) {                                                                      \
    g[k] = f[k];                                                                                     \
    q[k] = f[4 + k];                                                                                 \
  }                                                                                                  \
  uint4 o;                                                                                           \
  WHOLE(f, o);                                                                                       \
  whole8[i] = o;                                                                                     \
  uint2 a, b;                                                                                        \
  WHOLE(g, a);                                                                                       \
  WHOLE(q, b);                                                                                       \
  whole4[i] = make_uint4(a.x, a.y, b.x, b.y);                                                        \
  H2 h[4];                                                                                           \
  for (int k = 0; k < 4; ++k) h[k] = F2_TO_PAIR(f[2 * k], f[2 * k + 1]);                             \
  pairs[i] = *reinterpret_cast<const uint4*>(h);                                                     \
}
TO_F32(to_f32_half, __half2, __half22float2, __emu_halves_to_floats)
TO_F32(to_f32_bf16, __nv_bfloat162, __bfloat1622float2, __emu_bfloat16s_to_floats)
TO_16(to_half, __half2, __floats2half2_rn, __emu_floats_to_halves)
TO_16(to_bf16, __nv_bfloat162, __floats2bfloat162_rn, __emu_floats_to_bfloat16s)
"""


def _floats_around_every_rounding_case(dtype) -> np.ndarray:
    """Every finite value of the 16-bit type, the float midway to its neighbour (ties to even) and one
    float ulp either side of each midpoint, values past the type's range, float subnormals, infinities
    and NaNs with payloads, plus random floats of every exponent."""
    if dtype == "half":
        h = np.arange(0, 0x7C00, dtype=np.uint16)                     # finite non-negative halves
        lo = h.view(np.float16).astype(np.float64)
        hi = (h + 1).view(np.float16).astype(np.float64)               # the last one: inf
        mid = ((lo + hi) / 2).astype(np.float32)
        mid = mid[np.isfinite(mid)]
        lo = lo.astype(np.float32)
    else:
        b = np.arange(0, 0x7F80, dtype=np.uint32)                      # finite non-negative bf16
        lo = (b << 16).view(np.float32)
        mid = ((b << 16) | 0x8000).view(np.float32)                    # exactly halfway
    near = np.concatenate([mid, np.nextafter(mid, np.float32(np.inf)), np.nextafter(mid, np.float32(-np.inf)), lo])
    rng = np.random.default_rng(7)
    rand = rng.integers(0, 2 ** 32, 1 << 16, dtype=np.uint64).astype(np.uint32).view(np.float32)
    special = np.array([0x7F800000, 0x7F800001, 0x7FC00000, 0x7FFFFFFF, 0x00000001, 0x007FFFFF, 0x7F7FFFFF,
                        0x7F7F8000, 0x7F7F7FFF, 0x477FF000, 0x477FEFFF, 0x477FF001, 0x47800000, 0x33000000,
                        0x33000001, 0x32FFFFFF, 0x387FC000], dtype=np.uint32).view(np.float32)
    x = np.concatenate([near, -near, rand, special, -special]).astype(np.float32)
    return np.concatenate([x, np.zeros((-x.size) % 8, np.float32)])


@pytest.mark.parametrize("dtype", ["half", "bf16"])
@pytest.mark.parametrize("f16c", [True, False], ids=["f16c", "software"])
def test_whole_vector_conversions_match_the_pairs(d, monkeypatch, f16c, dtype):
    import ml_dtypes
    np16 = np.float16 if dtype == "half" else ml_dtypes.bfloat16
    if not f16c:
        monkeypatch.setenv("ACLNN_PY_EMU_NO_F16C", "1")
    # a source of its own per variant: modules are also cached in the process by their source
    mod = A.RawModule(code=SRC + f"// {'f16c' if f16c else 'software'}\n", options=("-std=c++17",))

    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    n = bits.size // 8
    outs = [d.zeros(bits.size, np.float32) for _ in range(3)]
    mod.get_function(f"to_f32_{dtype}")(((n + 127) // 128,), (128,), (d.up(bits), *outs, np.int64(n)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    whole8, whole4, pairs = (d.down(o, bits.size, np.float32).view(np.uint32) for o in outs)
    np.testing.assert_array_equal(whole8, pairs)
    np.testing.assert_array_equal(whole4, pairs)
    want = bits.view(np16).astype(np.float32).view(np.uint32)
    nan = np.isnan(bits.view(np16).astype(np.float32))
    np.testing.assert_array_equal(pairs[~nan], want[~nan])   # exact for every non-NaN value
    if dtype == "half":
        assert (pairs[nan] == 0x7FFFFFFF).all()               # CUDA's canonical NaN
    else:
        np.testing.assert_array_equal(pairs[nan], bits[nan].astype(np.uint32) << 16)   # a shift

    x = _floats_around_every_rounding_case(dtype)
    n = x.size // 8
    outs = [d.zeros(x.size, np.uint16) for _ in range(3)]
    mod.get_function(f"to_{dtype}")(((n + 127) // 128,), (128,), (d.up(x), *outs, np.int64(n)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    whole8, whole4, pairs = (d.down(o, x.size, np.uint16) for o in outs)
    np.testing.assert_array_equal(whole8, pairs)
    np.testing.assert_array_equal(whole4, pairs)
    with np.errstate(over="ignore", invalid="ignore"):
        want = x.astype(np16).view(np.uint16)                 # round to nearest even
    nan = np.isnan(x)
    np.testing.assert_array_equal(pairs[~nan], want[~nan])
    assert (pairs[nan] == 0x7FFF).all()
