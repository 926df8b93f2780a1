#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// Emulator <cuda_fp8.h> (aclnn_py host CUDA emulator): the OCP FP8 formats E4M3 (bias 7, no infinity, NaN
// S.1111.111, largest 448) and E5M2 (bias 15, IEEE-like, largest 57344) as CUDA 12 declares them: the storage
// typedefs, __nv_saturation_t / __nv_fp8_interpretation_t, the __nv_cvt_* conversions and the
// __nv_fp8(x2/x4)_e4m3 / _e5m2 classes. Written from CUDA's documented behaviour: narrowing rounds to nearest
// even once (a float or half is exact in double); a value past the largest finite one (the midpoint rounds up
// to it) is the largest finite one under __NV_SATFINITE (infinities too), and NaN (E4M3) / infinity (E5M2)
// under __NV_NOSAT; a float NaN gives 0x7F, a double NaN keeps its sign. Widening is exact; a NaN widens to
// half's canonical 0x7FFF. The classes construct with __NV_SATFINITE and convert explicitly, as CUDA's do.
// Not provided: CUDA 12.8's E8M0 (`__nv_fp8_e8m0`, __NV_E8M0), <cuda_fp6.h>, <cuda_fp4.h>.
#ifndef ACLNN_EMU_CUDA_FP8_H
#define ACLNN_EMU_CUDA_FP8_H
#include "cuda_emu.h"

typedef unsigned char __nv_fp8_storage_t;
typedef unsigned short int __nv_fp8x2_storage_t;
typedef unsigned int __nv_fp8x4_storage_t;
typedef enum __nv_saturation_t { __NV_NOSAT, __NV_SATFINITE } __nv_saturation_t;
typedef enum __nv_fp8_interpretation_t { __NV_E4M3, __NV_E5M2 } __nv_fp8_interpretation_t;

namespace __emu {
namespace fp8 {
// one conversion, from the double's bits: m mantissa bits, bias b
static inline unsigned char from_double(double x, __nv_saturation_t sat, __nv_fp8_interpretation_t k) {
    const uint64_t bits = __builtin_bit_cast(uint64_t, x);
    const unsigned char sign = static_cast<unsigned char>((bits >> 63) << 7);
    const uint64_t a = bits & 0x7fffffffffffffffull;
    const bool e4 = k == __NV_E4M3;
    const int mb = e4 ? 3 : 2, bias = e4 ? 7 : 15;
    if (a > 0x7ff0000000000000ull)  // NaN: E4M3's only NaN; E5M2 a quiet NaN with the top payload bits
        return static_cast<unsigned char>(sign | (e4 ? 0x7f : (0x7c | 0x02 | ((bits >> 50) & 0x3))));
    const double ax = __builtin_bit_cast(double, a);
    const double maxf = e4 ? 448.0 : 57344.0;
    const double ulp_max = e4 ? 32.0 : 8192.0;  // spacing at the largest binade
    // past the largest finite value by half an ulp or more (E5M2: the midpoint rounds to even = infinity)
    if (e4 ? ax > maxf + ulp_max / 2 : ax >= maxf + ulp_max / 2) {
        if (sat == __NV_SATFINITE) return static_cast<unsigned char>(sign | (e4 ? 0x7e : 0x7b));
        return static_cast<unsigned char>(sign | (e4 ? 0x7f : 0x7c));
    }
    // E4M3 at exactly 448 + 16, the midpoint between 448 and 480 (NaN's encoding): to even, 448
    if (ax == 0.0) return sign;
    int e = static_cast<int>((a >> 52) & 0x7ff) - 1023;  // unbiased exponent (ax is normal in double here)
    if (e < 1 - bias) e = 1 - bias;                       // subnormal range: the fixed smallest exponent
    const double q = ax * __builtin_ldexp(1.0, mb - e);   // the value in units of the target's ulp at e
    double r = __builtin_floor(q);                        // to nearest, ties to even (whatever the FPU mode)
    const double rest = q - r;                            // exact: q has few significant bits above the point
    if (rest > 0.5 || (rest == 0.5 && __builtin_fmod(r, 2.0) != 0.0)) r += 1.0;
    uint64_t n = static_cast<uint64_t>(r);                // with the implicit bit: < 2^(mb+1), or == for a carry
    int ef = e + bias;                                    // biased exponent of the result
    if (n >= (1ull << (mb + 1))) { n >>= 1; ++ef; }
    unsigned char out;
    if (n < (1ull << mb)) out = static_cast<unsigned char>(n);  // subnormal (ef == 1 with no implicit bit)
    else out = static_cast<unsigned char>((ef << mb) | (n & ((1u << mb) - 1)));
    if (e4 && (out & 0x7f) == 0x7f) out = sat == __NV_SATFINITE ? 0x7e : 0x7f;
    return static_cast<unsigned char>(sign | out);
}
static inline float to_float(unsigned char v, __nv_fp8_interpretation_t k) {
    const bool neg = v & 0x80;
    const unsigned a = v & 0x7f;
    float f;
    if (k == __NV_E4M3) {
        if (a == 0x7f) return __builtin_bit_cast(float, 0x7fffffffu);  // through half's canonical NaN
        const unsigned ex = a >> 3, m = a & 7;
        f = ex ? __builtin_ldexpf(1.0f + m / 8.0f, static_cast<int>(ex) - 7) : __builtin_ldexpf(m / 8.0f, -6);
    } else {
        if (a > 0x7c) return __builtin_bit_cast(float, 0x7fffffffu);
        if (a == 0x7c) return neg ? -__builtin_inff() : __builtin_inff();
        const unsigned ex = a >> 2, m = a & 3;
        f = ex ? __builtin_ldexpf(1.0f + m / 4.0f, static_cast<int>(ex) - 15) : __builtin_ldexpf(m / 4.0f, -14);
    }
    return neg ? -f : f;
}
static inline unsigned short to_half_bits(unsigned char v, __nv_fp8_interpretation_t k) {
    const float f = to_float(v, k);
    if (f != f) return 0x7fffu;  // half's canonical NaN, sign dropped
    return ::__emu::fp::f2h(f);   // exact: every fp8 value is a half
}
static inline float nan_canonical(float x) { return x != x ? __builtin_bit_cast(float, 0x7fffffffu) : x; }
}  // namespace fp8
}  // namespace __emu

static inline __nv_fp8_storage_t __nv_cvt_double_to_fp8(const double x, const __nv_saturation_t saturate,
                                                        const __nv_fp8_interpretation_t fp8_interpretation) {
    return ::__emu::fp8::from_double(x, saturate, fp8_interpretation);
}
static inline __nv_fp8x2_storage_t __nv_cvt_double2_to_fp8x2(const double2 x, const __nv_saturation_t saturate,
                                                             const __nv_fp8_interpretation_t fp8_interpretation) {
    return static_cast<__nv_fp8x2_storage_t>(__nv_cvt_double_to_fp8(x.x, saturate, fp8_interpretation) |
                                             (__nv_cvt_double_to_fp8(x.y, saturate, fp8_interpretation) << 8));
}
static inline __nv_fp8_storage_t __nv_cvt_float_to_fp8(const float x, const __nv_saturation_t saturate,
                                                       const __nv_fp8_interpretation_t fp8_interpretation) {
    return ::__emu::fp8::from_double(static_cast<double>(::__emu::fp8::nan_canonical(x)), saturate,
                                     fp8_interpretation);
}
static inline __nv_fp8x2_storage_t __nv_cvt_float2_to_fp8x2(const float2 x, const __nv_saturation_t saturate,
                                                            const __nv_fp8_interpretation_t fp8_interpretation) {
    return static_cast<__nv_fp8x2_storage_t>(__nv_cvt_float_to_fp8(x.x, saturate, fp8_interpretation) |
                                             (__nv_cvt_float_to_fp8(x.y, saturate, fp8_interpretation) << 8));
}
static inline __nv_fp8_storage_t __nv_cvt_halfraw_to_fp8(const __half_raw x, const __nv_saturation_t saturate,
                                                         const __nv_fp8_interpretation_t fp8_interpretation) {
    return __nv_cvt_float_to_fp8(::__emu::fp::h2f(x.x), saturate, fp8_interpretation);
}
static inline __nv_fp8x2_storage_t __nv_cvt_halfraw2_to_fp8x2(const __half2_raw x, const __nv_saturation_t saturate,
                                                              const __nv_fp8_interpretation_t fp8_interpretation) {
    return static_cast<__nv_fp8x2_storage_t>(
        __nv_cvt_halfraw_to_fp8(__half_raw{x.x}, saturate, fp8_interpretation) |
        (__nv_cvt_halfraw_to_fp8(__half_raw{x.y}, saturate, fp8_interpretation) << 8));
}
static inline __nv_fp8_storage_t __nv_cvt_bfloat16raw_to_fp8(const __nv_bfloat16_raw x,
                                                             const __nv_saturation_t saturate,
                                                             const __nv_fp8_interpretation_t fp8_interpretation) {
    return __nv_cvt_float_to_fp8(::__emu::fp::bf2f(x.x), saturate, fp8_interpretation);
}
static inline __nv_fp8x2_storage_t __nv_cvt_bfloat16raw2_to_fp8x2(
    const __nv_bfloat162_raw x, const __nv_saturation_t saturate, const __nv_fp8_interpretation_t fp8_interpretation) {
    return static_cast<__nv_fp8x2_storage_t>(
        __nv_cvt_bfloat16raw_to_fp8(__nv_bfloat16_raw{x.x}, saturate, fp8_interpretation) |
        (__nv_cvt_bfloat16raw_to_fp8(__nv_bfloat16_raw{x.y}, saturate, fp8_interpretation) << 8));
}
static inline __half_raw __nv_cvt_fp8_to_halfraw(const __nv_fp8_storage_t x,
                                                 const __nv_fp8_interpretation_t fp8_interpretation) {
    return __half_raw{::__emu::fp8::to_half_bits(x, fp8_interpretation)};
}
static inline __half2_raw __nv_cvt_fp8x2_to_halfraw2(const __nv_fp8x2_storage_t x,
                                                     const __nv_fp8_interpretation_t fp8_interpretation) {
    return __half2_raw{::__emu::fp8::to_half_bits(static_cast<unsigned char>(x & 0xff), fp8_interpretation),
                       ::__emu::fp8::to_half_bits(static_cast<unsigned char>(x >> 8), fp8_interpretation)};
}

#define ACLNN_EMU_FP8_CLASS(NAME, KIND)                                                                          \
    struct __attribute__((aligned(1))) NAME {                                                                    \
        __nv_fp8_storage_t __x;                                                                                  \
        NAME() = default;                                                                                        \
        explicit NAME(const __half f) : __x(__nv_cvt_halfraw_to_fp8(static_cast<__half_raw>(f), __NV_SATFINITE, KIND)) {} \
        explicit NAME(const __nv_bfloat16 f)                                                                     \
            : __x(__nv_cvt_bfloat16raw_to_fp8(static_cast<__nv_bfloat16_raw>(f), __NV_SATFINITE, KIND)) {}      \
        explicit NAME(const float f) : __x(__nv_cvt_float_to_fp8(f, __NV_SATFINITE, KIND)) {}                    \
        explicit NAME(const double f) : __x(__nv_cvt_double_to_fp8(f, __NV_SATFINITE, KIND)) {}                  \
        explicit NAME(const unsigned short v) : NAME(static_cast<float>(v)) {}                                   \
        explicit NAME(const unsigned int v) : NAME(static_cast<float>(v)) {}                                     \
        explicit NAME(const unsigned long v) : NAME(static_cast<float>(v)) {}                                    \
        explicit NAME(const unsigned long long v) : NAME(static_cast<float>(v)) {}                               \
        explicit NAME(const short v) : NAME(static_cast<float>(v)) {}                                            \
        explicit NAME(const int v) : NAME(static_cast<float>(v)) {}                                              \
        explicit NAME(const long v) : NAME(static_cast<float>(v)) {}                                             \
        explicit NAME(const long long v) : NAME(static_cast<float>(v)) {}                                        \
        explicit operator __half() const { return static_cast<__half>(__nv_cvt_fp8_to_halfraw(__x, KIND)); }     \
        explicit operator float() const { return ::__emu::fp8::to_float(__x, KIND); }                            \
        explicit operator __nv_bfloat16() const { return __float2bfloat16(::__emu::fp8::to_float(__x, KIND)); }     \
        explicit operator double() const { return static_cast<double>(::__emu::fp8::to_float(__x, KIND)); }      \
        explicit operator signed char() const { return ::__emu::fp::to_int<signed char>(float(*this), ::__emu::fp::RZ); } \
        explicit operator unsigned char() const { return ::__emu::fp::to_int<unsigned char>(float(*this), ::__emu::fp::RZ); } \
        explicit operator char() const { return ::__emu::fp::to_int<char>(float(*this), ::__emu::fp::RZ); }      \
        explicit operator short() const { return ::__emu::fp::to_int<short>(float(*this), ::__emu::fp::RZ); }    \
        explicit operator unsigned short() const { return ::__emu::fp::to_int<unsigned short>(float(*this), ::__emu::fp::RZ); } \
        explicit operator int() const { return ::__emu::fp::to_int<int>(float(*this), ::__emu::fp::RZ); }        \
        explicit operator unsigned int() const { return ::__emu::fp::to_int<unsigned int>(float(*this), ::__emu::fp::RZ); } \
        explicit operator long() const { return ::__emu::fp::to_int<long>(float(*this), ::__emu::fp::RZ); }      \
        explicit operator unsigned long() const { return ::__emu::fp::to_int<unsigned long>(float(*this), ::__emu::fp::RZ); } \
        explicit operator long long() const { return ::__emu::fp::to_int<long long>(float(*this), ::__emu::fp::RZ); } \
        explicit operator unsigned long long() const { return ::__emu::fp::to_int<unsigned long long>(float(*this), ::__emu::fp::RZ); } \
        explicit operator bool() const { return (__x & 0x7fu) != 0u; }                                           \
    };
ACLNN_EMU_FP8_CLASS(__nv_fp8_e4m3, __NV_E4M3)
ACLNN_EMU_FP8_CLASS(__nv_fp8_e5m2, __NV_E5M2)
#undef ACLNN_EMU_FP8_CLASS

#define ACLNN_EMU_FP8X2_CLASS(NAME, KIND)                                                                        \
    struct __attribute__((aligned(2))) NAME {                                                                    \
        __nv_fp8x2_storage_t __x;                                                                                \
        NAME() = default;                                                                                        \
        explicit NAME(const __half2 f) : __x(__nv_cvt_halfraw2_to_fp8x2(static_cast<__half2_raw>(f), __NV_SATFINITE, KIND)) {} \
        explicit NAME(const __nv_bfloat162 f)                                                                    \
            : __x(__nv_cvt_bfloat16raw2_to_fp8x2(static_cast<__nv_bfloat162_raw>(f), __NV_SATFINITE, KIND)) {}   \
        explicit NAME(const float2 f) : __x(__nv_cvt_float2_to_fp8x2(f, __NV_SATFINITE, KIND)) {}                \
        explicit NAME(const double2 f) : __x(__nv_cvt_double2_to_fp8x2(f, __NV_SATFINITE, KIND)) {}              \
        explicit operator __half2() const { return static_cast<__half2>(__nv_cvt_fp8x2_to_halfraw2(__x, KIND)); } \
        explicit operator float2() const {                                                                       \
            return make_float2(::__emu::fp8::to_float(static_cast<unsigned char>(__x & 0xff), KIND),             \
                               ::__emu::fp8::to_float(static_cast<unsigned char>(__x >> 8), KIND));              \
        }                                                                                                        \
    };
ACLNN_EMU_FP8X2_CLASS(__nv_fp8x2_e4m3, __NV_E4M3)
ACLNN_EMU_FP8X2_CLASS(__nv_fp8x2_e5m2, __NV_E5M2)
#undef ACLNN_EMU_FP8X2_CLASS

#define ACLNN_EMU_FP8X4_CLASS(NAME, KIND)                                                                        \
    struct __attribute__((aligned(4))) NAME {                                                                    \
        __nv_fp8x4_storage_t __x;                                                                                \
        NAME() = default;                                                                                        \
        explicit NAME(const __half2 flo, const __half2 fhi)                                                      \
            : __x(__nv_cvt_halfraw2_to_fp8x2(static_cast<__half2_raw>(flo), __NV_SATFINITE, KIND) |              \
                  (static_cast<unsigned>(__nv_cvt_halfraw2_to_fp8x2(static_cast<__half2_raw>(fhi), __NV_SATFINITE, KIND)) << 16)) {} \
        explicit NAME(const __nv_bfloat162 flo, const __nv_bfloat162 fhi)                                        \
            : __x(__nv_cvt_bfloat16raw2_to_fp8x2(static_cast<__nv_bfloat162_raw>(flo), __NV_SATFINITE, KIND) |   \
                  (static_cast<unsigned>(__nv_cvt_bfloat16raw2_to_fp8x2(static_cast<__nv_bfloat162_raw>(fhi), __NV_SATFINITE, KIND)) << 16)) {} \
        explicit NAME(const float4 f)                                                                            \
            : __x(__nv_cvt_float2_to_fp8x2(make_float2(f.x, f.y), __NV_SATFINITE, KIND) |                        \
                  (static_cast<unsigned>(__nv_cvt_float2_to_fp8x2(make_float2(f.z, f.w), __NV_SATFINITE, KIND)) << 16)) {} \
        explicit NAME(const double4 f)                                                                           \
            : __x(__nv_cvt_double2_to_fp8x2(make_double2(f.x, f.y), __NV_SATFINITE, KIND) |                      \
                  (static_cast<unsigned>(__nv_cvt_double2_to_fp8x2(make_double2(f.z, f.w), __NV_SATFINITE, KIND)) << 16)) {} \
        explicit operator float4() const {                                                                       \
            return make_float4(::__emu::fp8::to_float(static_cast<unsigned char>(__x & 0xff), KIND),             \
                               ::__emu::fp8::to_float(static_cast<unsigned char>((__x >> 8) & 0xff), KIND),      \
                               ::__emu::fp8::to_float(static_cast<unsigned char>((__x >> 16) & 0xff), KIND),     \
                               ::__emu::fp8::to_float(static_cast<unsigned char>(__x >> 24), KIND));             \
        }                                                                                                        \
    };
ACLNN_EMU_FP8X4_CLASS(__nv_fp8x4_e4m3, __NV_E4M3)
ACLNN_EMU_FP8X4_CLASS(__nv_fp8x4_e5m2, __NV_E5M2)
#undef ACLNN_EMU_FP8X4_CLASS
#endif  // ACLNN_EMU_CUDA_FP8_H

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
