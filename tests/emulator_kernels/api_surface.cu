// name_expressions: generic_ops<float>, generic_ops<double>, generic_ops<__half>, generic_ops<__nv_bfloat16>
//
// API surface: one use of (almost) everything the emulation header provides. It must compile
// unchanged with NVRTC (tests/test_nvrtc.py) and with g++ against the emulator
// (tests/test_emulator.py::test_api_surface_compiles_and_runs), and run without errors.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

struct __align__(16) Packed {
    float a;
    int b;
    double c;
};

__constant__ float c_table[4] = {1.0f, 2.0f, 3.0f, 4.0f};
__device__ int g_counter;

__device__ __forceinline__ float fi(float v) { return v * 2.0f; }
__device__ __noinline__ float ni(float v) { return v + 1.0f; }
__host__ __device__ inline int hd(int v) { return v - 1; }

extern "C" __global__ void __launch_bounds__(128) math_surface(const float* __restrict__ in, float* __restrict__ out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float x = in[i];
    const double d = static_cast<double>(x);
    float acc = 0.0f;
    acc += expf(x) + exp2f(x) + exp10f(x) + expm1f(x) + logf(fabsf(x) + 1) + log2f(fabsf(x) + 1);
    acc += log10f(fabsf(x) + 1) + log1pf(fabsf(x)) + powf(fabsf(x), 1.5f) + sqrtf(fabsf(x)) + rsqrtf(fabsf(x) + 1);
    acc += cbrtf(x) + rcbrtf(x + 10) + tanhf(x) + sinhf(x) + coshf(x) + sinf(x) + cosf(x) + tanf(x) + asinf(x / 10);
    acc += acosf(x / 10) + atanf(x) + atan2f(x, 2.0f) + asinhf(x) + acoshf(fabsf(x) + 1) + atanhf(x / 10);
    float s, c;
    sincosf(x, &s, &c);
    acc += s + c + sinpif(x) + cospif(x) + erff(x) + erfcf(x) + erfinvf(x / 10) + erfcinvf(0.5f) + lgammaf(fabsf(x) + 1);
    acc += tgammaf(fabsf(x) + 1) + normcdff(x) + normcdfinvf(0.3f) + hypotf(x, 1) + rhypotf(x, 1) + norm3df(x, 1, 2);
    acc += fmaxf(x, 0) + fminf(x, 0) + fmaf(x, x, 1) + floorf(x) + ceilf(x) + roundf(x) + truncf(x) + rintf(x);
    acc += nearbyintf(x) + copysignf(1, x) + fmodf(x, 0.7f) + remainderf(x, 0.7f) + ldexpf(x, 2) + fdimf(x, 0);
    int e;
    acc += frexpf(x, &e);
    acc += static_cast<float>(e) + scalbnf(x, 1) + static_cast<float>(ilogbf(fabsf(x) + 1)) + logbf(x + 10);
    acc += static_cast<float>(isnan(x)) + static_cast<float>(isinf(x)) + static_cast<float>(isfinite(x));
    acc += static_cast<float>(signbit(x)) + static_cast<float>(lrintf(x)) + static_cast<float>(llrintf(x));
    acc += static_cast<float>(lroundf(x)) + modff(x, &s) + fabsf(x) + fdividef(x, 3);
    acc += __expf(x) + __exp10f(x) + __logf(fabsf(x) + 1) + __log2f(fabsf(x) + 1) + __log10f(fabsf(x) + 1);
    acc += __powf(fabsf(x), 0.5f) + __sinf(x) + __cosf(x) + __tanf(x) + __fdividef(x, 3) + __frcp_rn(x + 10);
    acc += __fsqrt_rn(fabsf(x)) + __frsqrt_rn(fabsf(x) + 1) + __fadd_rn(x, 1) + __fsub_rn(x, 1) + __fmul_rn(x, 2);
    acc += __fmaf_rn(x, 2, 1) + __fdiv_rn(x, 3) + __saturatef(x);
    __sincosf(x, &s, &c);
    acc += s + c;
    double dacc = exp(d) + log(fabs(d) + 1) + sqrt(fabs(d)) + rsqrt(fabs(d) + 1) + pow(fabs(d), 1.5) + tanh(d) + erf(d);
    dacc += fma(d, d, 1.0) + fmax(d, 0.0) + fmin(d, 0.0) + floor(d) + ceil(d) + round(d) + trunc(d) + rint(d);
    dacc += cbrt(d) + rcbrt(d + 10) + sinpi(d) + cospi(d) + normcdf(d) + erfinv(d / 10) + __dadd_rn(d, 1);
    dacc += __dmul_rn(d, 2) + __ddiv_rn(d, 3) + __fma_rn(d, d, 1) + __dsqrt_rn(fabs(d)) + __drcp_rn(d + 10);
    acc += static_cast<float>(dacc);
    acc += min(1, 2) + max(1u, 2u) + min(1.0f, 2.0f) + max(1.0, 2.0) + min(3LL, 4LL) + max(5ULL, 6ULL);
    acc += static_cast<float>(min(-1, 2u)) * 0.0f;
    acc += __int_as_float(__float_as_int(x)) + __uint_as_float(__float_as_uint(x));
    acc += static_cast<float>(__longlong_as_double(__double_as_longlong(d)));
    acc += static_cast<float>(__float2int_rn(x) + __float2int_rz(x) + __float2int_rd(x) + __float2int_ru(x));
    acc += static_cast<float>(__float2uint_rn(fabsf(x)) + __float2ll_rn(x) + __float2ull_rz(fabsf(x)));
    acc += static_cast<float>(__double2int_rn(d) + __double2ll_rz(d)) + __int2float_rn(3) + __uint2float_rn(3u);
    acc += __ll2float_rn(3LL) + __ull2float_rn(3ULL) + __double2float_rn(d) + static_cast<float>(__int2double_rn(2));
    const unsigned u = __float_as_uint(x);
    acc += static_cast<float>(__popc(u) + __popcll(0xffULL) + __clz(static_cast<int>(u)) + __clzll(1LL) + __ffs(static_cast<int>(u)));
    acc += static_cast<float>(__ffsll(16LL) + (__brev(u) & 1u) + (__brevll(1ULL) >> 63) + (__byte_perm(u, 0u, 0x3210u) & 1u));
    acc += static_cast<float>((__umulhi(u, u) & 1u) + (__mulhi(3, 4)) + (__mul24(3, 4)) + (__umul24(3u, 4u)));
    acc += static_cast<float>((__umul64hi(1ULL << 40, 1ULL << 40)) + __mul64hi(1LL << 40, 1LL << 40));
    acc += static_cast<float>(__funnelshift_l(u, u, 3) & 1u) + static_cast<float>(__funnelshift_r(u, u, 3) & 1u);
    acc += static_cast<float>(__sad(1, 3, 0u) + __usad(1u, 3u, 0u) + __hadd(4, 6) + __rhadd(4, 5));
    acc += __ldg(&in[i]) + __ldcs(&in[i]) + __ldcg(&in[i]) + __ldca(&in[i]) + __ldlu(&in[i]) + __ldcv(&in[i]);
    acc += c_table[i & 3] + fi(x) + ni(x) + static_cast<float>(hd(1));
    const float2 f2 = make_float2(x, 1.0f);
    const float4 f4 = make_float4(x, 1, 2, 3);
    const int2 i2 = make_int2(1, 2);
    const int4 i4 = make_int4(1, 2, 3, 4);
    const uint3 u3 = make_uint3(1, 2, 3);
    const double2 d2 = make_double2(1.0, 2.0);
    const char4 c4 = make_char4(1, 2, 3, 4);
    const uchar4 uc4 = make_uchar4(1, 2, 3, 4);
    const short2 s2 = make_short2(1, 2);
    const longlong2 l2 = make_longlong2(1, 2);
    const ulonglong2 ul2 = make_ulonglong2(1, 2);
    const dim3 dd(2, 3);
    acc += f2.x + f4.w + static_cast<float>(i2.y + i4.w + u3.z + c4.w + uc4.x + s2.y + l2.y + ul2.x + dd.x + dd.z);
    acc += static_cast<float>(d2.y);
    acc += static_cast<float>(clock64() >= 0) + static_cast<float>(clock() >= 0);
    static_assert(sizeof(float4) == 16 && alignof(float4) == 16, "float4");
    static_assert(sizeof(float2) == 8 && alignof(float2) == 8, "float2");
    static_assert(sizeof(float3) == 12 && alignof(float3) == 4, "float3");
    static_assert(alignof(double2) == 16 && alignof(int2) == 8 && alignof(short4) == 8 && alignof(char2) == 2, "align");
    static_assert(sizeof(Packed) == 16 && alignof(Packed) == 16, "Packed");
    static_assert(sizeof(__half) == 2 && sizeof(__half2) == 4 && alignof(__half2) == 4, "half");
    static_assert(sizeof(__nv_bfloat16) == 2 && sizeof(__nv_bfloat162) == 4, "bf16");
    acc += static_cast<float>(warpSize) + static_cast<float>(blockDim.y + gridDim.z);
    __threadfence();
    __threadfence_block();
    atomicAdd(&g_counter, 1);
    out[i] = isfinite(acc) ? 1.0f : 0.0f;
}

template <typename T>
__global__ void generic_ops(const T* in, T* out, float* fout, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    T v = in[i];
    T w = v * v + v - T(1) / (v + T(2.0f));
    w += v;
    w -= T(0.5f);
    w *= T(1);
    w /= T(1);
    const bool cmp = (v < w) || (v > w) || (v == w) || (v != w) || (v <= w) || (v >= w);
    out[i] = cmp ? w : v;
    fout[i] = static_cast<float>(w);
}

extern "C" __global__ void half_surface(const __half* h, const __nv_bfloat16* b, float* out, unsigned* uout) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const __half x = h[i];
    const __nv_bfloat16 y = b[i];
    __half r = __hadd(x, x) + __hsub(x, x) + __hmul(x, x) + __hdiv(x, __float2half(2.0f)) + __hfma(x, x, x);
    r += __hneg(x) + __habs(x) + __hmax(x, x) + __hmin(x, x) + hexp(x) + hlog(__habs(x)) + hsqrt(__habs(x));
    r += hrsqrt(__habs(x)) + htanh(x) + hexp2(x) + hlog2(__habs(x)) + hrcp(x) + hfloor(x) + hceil(x) + htrunc(x);
    r += hrint(x) + hsin(x) + hcos(x) + __hadd_sat(x, x) + __hfma_relu(x, x, x) + __hmax_nan(x, x);
    r += __float2half_rn(1.0f) + __float2half_rz(1.0f) + __double2half(1.0) + __int2half_rn(3) + __uint2half_rn(3u);
    r += __short2half_rn(3) + __ll2half_rn(3LL) + __ushort_as_half(__half_as_ushort(x)) + __short_as_half(__half_as_short(x));
    __nv_bfloat16 q = __hadd(y, y) + __hsub(y, y) + __hmul(y, y) + __hdiv(y, __float2bfloat16(2.0f)) + __hfma(y, y, y);
    q += __hneg(y) + __habs(y) + __hmax(y, y) + __hmin(y, y) + hexp(y) + hlog(__habs(y)) + hsqrt(__habs(y));
    q += __float2bfloat16_rn(1.0f) + __double2bfloat16(1.0) + __int2bfloat16_rn(3) + __ushort_as_bfloat16(__bfloat16_as_ushort(y));
    const __half2 h2 = __halves2half2(x, r), h2b = __floats2half2_rn(1.0f, 2.0f), h2c = __float2half2_rn(3.0f);
    const __half2 h2d = __hadd2(h2, h2b) * h2c - __hmul2(h2, h2) + __hfma2(h2, h2b, h2c) + __h2div(h2, h2c);
    const __half2 h2e = __hmax2(h2d, __hneg2(h2d)) + __habs2(h2d) + __half2half2(x) + __lowhigh2highlow(h2d);
    const float2 f2 = __half22float2(h2e);
    const __half2 back = __float22half2_rn(f2);
    const __nv_bfloat162 b2 = __halves2bfloat162(y, q), b2b = __floats2bfloat162_rn(1.0f, 2.0f);
    const __nv_bfloat162 b2c = __hadd2(b2, b2b) * __float2bfloat162_rn(2.0f) + __bfloat162bfloat162(y);
    const float2 g2 = __bfloat1622float2(b2c);
    float acc = __half2float(r) + __bfloat162float(q) + __low2float(back) + __high2float(back) + f2.x + g2.y;
    acc += __half2float(__low2half(h2e)) + __half2float(__high2half(h2e)) + __bfloat162float(__low2bfloat16(b2c));
    acc += __bfloat162float(__high2bfloat16(b2c)) + static_cast<float>(__half2int_rn(x) + __half2int_rz(x));
    acc += static_cast<float>(__bfloat162int_rn(y)) + static_cast<float>(__hisnan(x)) + static_cast<float>(__hisinf(y));
    acc += static_cast<float>(__heq(x, x) + __hne(x, x) + __hlt(x, x) + __hle(x, x) + __hgt(x, x) + __hge(x, x));
    acc += static_cast<float>(__hbeq2(h2, h2)) + __low2float(__heq2(h2, h2)) + static_cast<float>(__hisnan2(h2).x);
    const half hh = x;
    const nv_bfloat16 bb = y;
    const half2 hh2 = h2;
    float fx = x;
    float fy = y;
    const int ix = static_cast<int>(x);
    acc += static_cast<float>(hh) + static_cast<float>(bb) + __low2float(hh2) + fx + fy + static_cast<float>(ix);
    acc += static_cast<float>(__half(1.0f) < __half(2.0f)) + static_cast<float>(static_cast<bool>(x));
    __half mut = x;
    mut++;
    --mut;
    mut = 2.0f;
    mut = 3;
    acc += static_cast<float>(mut);
    const __half_raw raw = static_cast<__half_raw>(x);
    const __half fromraw = raw;
    acc += __half2float(fromraw);
    acc += __half2float(__shfl_sync(0xffffffffu, x, 0)) + __bfloat162float(__shfl_xor_sync(0xffffffffu, y, 1));
    acc += __low2float(__shfl_down_sync(0xffffffffu, h2, 1)) + __low2float(__shfl_up_sync(0xffffffffu, b2, 1));
    out[i] = isfinite(acc) || isnan(acc) ? 1.0f : 0.0f;
    __half* hp = reinterpret_cast<__half*>(out + 64);
    atomicAdd(hp, __float2half(1.0f));
    atomicAdd(reinterpret_cast<__nv_bfloat16*>(out + 65), __float2bfloat16(1.0f));
    atomicAdd(reinterpret_cast<__half2*>(out + 66), __floats2half2_rn(1.0f, 1.0f));
    atomicAdd(reinterpret_cast<double*>(out + 68), 1.0);
    atomicCAS(reinterpret_cast<unsigned short*>(uout), static_cast<unsigned short>(0), static_cast<unsigned short>(1));
    atomicExch(uout + 1, 5u);
    atomicAnd(uout + 2, 0xffu);
    atomicXor(uout + 3, 1u);
    atomicMax(reinterpret_cast<unsigned long long*>(uout + 4), 7ULL);
    atomicMin(reinterpret_cast<long long*>(uout + 6), -7LL);
    atomicAdd_block(uout + 8, 1u);
    atomicAdd_system(uout + 9, 1u);
    const unsigned am = __activemask();
    const unsigned mm = __match_any_sync(0xffffffffu, threadIdx.x & 1);
    int pred = 0;
    const unsigned ma = __match_all_sync(0xffffffffu, 5, &pred);
    const unsigned ra = __reduce_add_sync(0xffffffffu, 1u);
    const int rm = __reduce_max_sync(0xffffffffu, static_cast<int>(threadIdx.x));
    const unsigned ro = __reduce_or_sync(0xffffffffu, 1u << (threadIdx.x & 31));
    if (threadIdx.x == 0) {
        uout[10] = am;
        uout[11] = mm;
        uout[12] = ma + static_cast<unsigned>(pred);
        uout[13] = ra;
        uout[14] = static_cast<unsigned>(rm);
        uout[15] = ro;
    }
    __syncwarp();
    __syncthreads();
    const int all = __syncthreads_and(1) + __syncthreads_or(0) + __syncthreads_count(1);
    if (threadIdx.x == 0) uout[16] = static_cast<unsigned>(all);
}
