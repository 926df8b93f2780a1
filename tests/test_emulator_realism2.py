"""Realism sweep 6 (issue 13): public half/fp8 kernels (LeetCUDA's reductions and most of its files) include
<cuda_fp8.h>; the emulator had no such header, so every one of them failed to compile ("No such file"). The
emulator now provides it: the E4M3/E5M2 storage types, the __nv_cvt_* conversions and the __nv_fp8*_e4m3/e5m2
classes, rounding as CUDA documents (checked here against ml_dtypes' float8_e4m3fn / float8_e5m2)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import aclnn_py as A
from aclnn_py import acl

pytestmark = pytest.mark.skipif(
    acl._state.state.initialized and acl._state.state.backend.name != "host", reason="emulator behaviour")

FP8_SRC = r'''
#include <cuda_fp8.h>
extern "C" __global__ void cvt(const float* x, unsigned char* e4n, unsigned char* e4s, unsigned char* e5n,
                               unsigned char* e5s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        e4n[i] = __nv_cvt_float_to_fp8(x[i], __NV_NOSAT, __NV_E4M3);
        e4s[i] = __nv_cvt_float_to_fp8(x[i], __NV_SATFINITE, __NV_E4M3);
        e5n[i] = __nv_cvt_float_to_fp8(x[i], __NV_NOSAT, __NV_E5M2);
        e5s[i] = __nv_cvt_float_to_fp8(x[i], __NV_SATFINITE, __NV_E5M2);
    }
}
extern "C" __global__ void widen(unsigned short* h4, unsigned short* h5, float* f4, float* f5, float* sum) {
    int i = threadIdx.x;  // 256 threads: every byte
    __nv_fp8_storage_t v = (__nv_fp8_storage_t)i;
    __half_raw a = __nv_cvt_fp8_to_halfraw(v, __NV_E4M3);
    h4[i] = a.x;
    h5[i] = __nv_cvt_fp8_to_halfraw(v, __NV_E5M2).x;
    __nv_fp8_e4m3 e4; e4.__x = v;
    __nv_fp8_e5m2 e5; e5.__x = v;
    f4[i] = float(e4);
    f5[i] = static_cast<float>(e5);
    __half acc = __float2half(0.f);
    acc += __nv_cvt_fp8_to_halfraw(v, __NV_E4M3);   // a __half_raw joins half arithmetic, as in CUDA
    if (i < 4) {
        __nv_fp8x2_e4m3 p(make_float2(1.5f, -3.0f));
        __nv_fp8x4_e5m2 q(make_float4(1.f, 2.f, 3.f, 1e9f));
        float2 pf = static_cast<float2>(p);
        float4 qf = static_cast<float4>(q);
        __nv_fp8_e4m3 big(1000.f);   // constructors saturate
        sum[i] = i == 0 ? pf.x + pf.y : i == 1 ? qf.x + qf.y + qf.z : i == 2 ? qf.w : float(big) + __half2float(acc) * 0.f;
    }
}
'''


def test_cuda_fp8_header_conversions_match_ml_dtypes(d):
    rng = np.random.default_rng(5)
    # every fp8 value, the midpoints between neighbours (ties), random values, specials and out-of-range ones
    e4 = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    e5 = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e5m2).astype(np.float64)
    fin4 = np.unique(e4[np.isfinite(e4)]); fin5 = np.unique(e5[np.isfinite(e5)])
    x = np.concatenate([fin4, fin5, (fin4[1:] + fin4[:-1]) / 2, (fin5[1:] + fin5[:-1]) / 2,
                        rng.standard_normal(3000) * 10.0 ** rng.integers(-6, 6, 3000),
                        [0.0, -0.0, 448.0, 463.9, 464.0, 464.1, 1e6, -1e6, 57344.0, 61439.0, 61440.0, np.inf, -np.inf,
                         2.0 ** -10, 2.0 ** -10 * 1.01, 2.0 ** -17, 2.0 ** -17 * 1.01, 3 * 2.0 ** -10]]).astype(np.float32)
    n = x.size
    outs = [d.zeros(n, np.uint8) for _ in range(4)]
    mod = A.RawModule(code=FP8_SRC)
    mod.get_function("cvt")(((n + 127) // 128,), (128,), (d.up(x), *outs, np.int32(n)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    e4n, e4s, e5n, e5s = (d.down(p, n, np.uint8) for p in outs)
    # __NV_NOSAT: ml_dtypes' conversions (round to nearest even; E4M3 overflow -> NaN 0x7F, E5M2 -> infinity)
    want4 = x.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    want5 = x.astype(ml_dtypes.float8_e5m2).view(np.uint8)
    np.testing.assert_array_equal(e4n, want4)
    np.testing.assert_array_equal(e5n, want5)
    # __NV_SATFINITE: the largest finite value (448 / 57344) instead of NaN / infinity, with the sign
    big4 = np.abs(x) > 464.0
    big5 = np.abs(x) >= 61440.0
    s = np.where(np.signbit(x), 0x80, 0).astype(np.uint8)
    np.testing.assert_array_equal(e4s, np.where(big4, s | 0x7E, want4))
    np.testing.assert_array_equal(e5s, np.where(big5, s | 0x7B, want5))


def test_cuda_fp8_header_widening_and_classes(d):
    h4, h5 = d.zeros(256, np.uint16), d.zeros(256, np.uint16)
    f4, f5, sm = d.zeros(256, np.float32), d.zeros(256, np.float32), d.zeros(4, np.float32)
    A.RawModule(code=FP8_SRC).get_function("widen")((1,), (256,), (h4, h5, f4, f5, sm))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    e4 = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    e5 = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e5m2).astype(np.float32)
    for got_h, got_f, want in ((h4, f4, e4), (h5, f5, e5)):
        hb = d.down(got_h, 256, np.uint16)
        nan = np.isnan(want)
        np.testing.assert_array_equal(hb[~nan], want[~nan].astype(np.float16).view(np.uint16))
        assert (hb[nan] == 0x7FFF).all()  # half's canonical NaN
        np.testing.assert_array_equal(d.down(got_f, 256, np.float32), want)
    np.testing.assert_array_equal(d.down(sm, 4, np.float32), [-1.5, 6.0, 57344.0, 448.0])


# Realism sweep 7: OneFlow's warp softmax (BBuf/how-to-optim-algorithm-in-cuda) gives each row to a group of
# 8 lanes and reduces with __shfl_xor_sync(0xffffffff, v, m) inside the group; lanes of a group without a row
# return first. CUDA only asks "all non-exited threads named in mask" to take part, so that is legal and a GPU
# gives the right softmax; the emulator reported every such launch as "mask names lane N, which has exited".
EXITED_LANES_SRC = r'''
extern "C" __global__ void group_sum(const float* x, float* out, int rows) {
    int row = (blockIdx.x * blockDim.x + threadIdx.x) / 8;   // 8 lanes a row
    if (row >= rows) return;                                  // a group without a row leaves
    float v = x[row * 8 + (threadIdx.x & 7)];
    for (int m = 4; m > 0; m /= 2) v += __shfl_xor_sync(0xffffffffu, v, m, 8);
    if ((threadIdx.x & 7) == 0) out[row] = v;
}
extern "C" __global__ void low_lanes_leave(unsigned* out) {
    if (threadIdx.x < 8) return;                              // the lanes named first leave first
    unsigned b = __ballot_sync(0xffffffffu, threadIdx.x & 1);
    int s = __shfl_down_sync(0xffffffffu, (int)threadIdx.x, 4, 8);
    out[threadIdx.x] = b + (unsigned)s * 0u + (unsigned)__any_sync(0xffffffffu, threadIdx.x == 31);
    out[32 + threadIdx.x] = s;
}
extern "C" __global__ void reads_exited(const float* x, float* out) {
    if ((threadIdx.x & 31) >= 8) return;
    out[threadIdx.x] = __shfl_down_sync(0xffffffffu, x[threadIdx.x], 1);   // lane 7 reads lane 8: gone
}
'''


def test_shuffle_mask_may_name_exited_lanes(d):
    mod = A.RawModule(code=EXITED_LANES_SRC)
    rows = 13                                   # 2 blocks of 64 threads = 16 groups: the last 3 have no row
    x = np.random.default_rng(7).standard_normal(rows * 8).astype(np.float32)
    px, po = d.up(x), d.zeros(rows, np.float32)
    mod.get_function("group_sum")((2,), (64,), (px, po, np.int32(rows)))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    np.testing.assert_allclose(d.down(po, rows, np.float32), x.reshape(rows, 8).sum(1), rtol=1e-5, atol=1e-5)
    pu = d.zeros(64, np.uint32)
    mod.get_function("low_lanes_leave")((1,), (32,), (pu,))
    assert acl.rt.synchronize_device() == 0, acl.get_recent_err_msg()
    got = d.down(pu, 64, np.uint32)
    lanes = np.arange(8, 32)
    odd = sum(1 << int(i) for i in lanes if i & 1)
    np.testing.assert_array_equal(got[8:32], np.full(24, odd + 1, np.uint32))   # the ballot leaves out lanes 0-7
    src = np.where((lanes & 7) + 4 <= 7, lanes + 4, lanes)                      # width 8: the top 4 keep their own
    np.testing.assert_array_equal(got[32 + 8:], src)


def test_shuffle_reading_an_exited_lane_is_reported(d):
    x = np.arange(32, dtype=np.float32)
    px, po = d.up(x), d.zeros(32, np.float32)
    A.RawModule(code=EXITED_LANES_SRC).get_function("reads_exited")((1,), (32,), (px, po))
    assert acl.rt.synchronize_device() != 0
    msg = acl.get_recent_err_msg()
    assert "reads lane 8, which has exited" in msg, msg
