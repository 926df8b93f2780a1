#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// cuda_emu_fp16.h -- __half, __half2, __nv_bfloat16, __nv_bfloat162 for the CPU emulator.
// Included by cuda_emu.h (do not include directly). The class interfaces mirror CUDA 12/13's
// cuda_fp16.h / cuda_bf16.h (same constructors and conversion operators, so the same expressions
// are valid or ambiguous on both sides). Conversions round to nearest even exactly like CUDA
// (NaN -> canonical 0x7FFF / 0x7FFFFFFF, subnormals kept); arithmetic is done in float and rounded
// once, which is correctly rounded for + - * / sqrt (float has >= 2p+2 bits for both formats).
#ifndef ACLNN_PY_CUDA_EMU_FP16_H
#define ACLNN_PY_CUDA_EMU_FP16_H

struct __half_raw { unsigned short x; };
struct __half2_raw { unsigned short x, y; };
struct __nv_bfloat16_raw { unsigned short x; };
struct __nv_bfloat162_raw { unsigned short x, y; };
struct __half;
struct __nv_bfloat16;

namespace __emu {
namespace fp {
enum { RN = 0, RZ = 1, RD = 2, RU = 3 };

// Rounds a double to a binary format with E exponent and M mantissa bits (IEEE-style, with
// subnormals); NaN -> 0x7FFF like CUDA's conversions.
template <int E, int M>
static inline unsigned short round_double(double d, int mode) {
    constexpr int bias = (1 << (E - 1)) - 1;
    constexpr int emin = 1 - bias;
    constexpr unsigned inf = ((1u << E) - 1u) << M;
    constexpr unsigned maxf = inf - 1u;
    const uint64_t u = __builtin_bit_cast(uint64_t, d);
    const unsigned sign = static_cast<unsigned>(u >> 63);
    const unsigned sbit = sign << (E + M);
    const uint64_t au = u & 0x7fffffffffffffffull;
    if (au > 0x7ff0000000000000ull) return 0x7fff;
    if (au == 0x7ff0000000000000ull) return static_cast<unsigned short>(sbit | inf);
    if (au == 0) return static_cast<unsigned short>(sbit);
    int e = static_cast<int>(au >> 52) - 1023;
    uint64_t mant = au & 0xfffffffffffffull;
    if (e == -1023) e = -1022;
    else mant |= 1ull << 52;
    const int q = (e > emin ? e : emin) - M;  // exponent of the target ulp
    const int shift = 52 + q - e;             // >= 52 - M
    uint64_t kept;
    bool nz, gt_half, eq_half;
    if (shift >= 64) {
        kept = 0;
        nz = true;
        gt_half = eq_half = false;
    } else {
        kept = mant >> shift;
        const uint64_t rem = mant & ((1ull << shift) - 1), half = 1ull << (shift - 1);
        nz = rem != 0;
        gt_half = rem > half;
        eq_half = rem == half;
    }
    bool up;
    switch (mode) {
        case RN: up = gt_half || (eq_half && (kept & 1)); break;
        case RZ: up = false; break;
        case RD: up = nz && sign; break;
        default: up = nz && !sign; break;
    }
    kept += up;
    uint64_t bits;
    if (e < emin) bits = kept;  // subnormal; may round up into the smallest normal
    else bits = (static_cast<uint64_t>(e + bias) << M) + kept - (1ull << M);
    if (bits >= inf) {
        const bool to_inf = mode == RN || (mode == RU && !sign) || (mode == RD && sign);
        bits = to_inf ? inf : maxf;
    }
    return static_cast<unsigned short>(sbit | bits);
}

typedef float emu_v4sf __attribute__((vector_size(16)));
typedef short emu_v8hi __attribute__((vector_size(16)));
typedef int emu_v4si __attribute__((vector_size(16)));
#if defined(__F16C__) && !defined(ACLNN_EMU_NO_F16C)
// Hardware conversion (F16C, -mf16c when the CPU has it): IEEE round-to-nearest-even, identical to
// round_double<5, 10>(f, RN) for every non-NaN float (subnormals, overflow to inf included). NaNs
// keep the software result (CUDA's canonical 0x7FFF), never the x86 payload-preserving one.
static inline unsigned short f2h(float f, int mode = RN) {
    if (mode == RN && f == f) {
        const emu_v8hi r = __builtin_ia32_vcvtps2ph(emu_v4sf{f, 0.f, 0.f, 0.f}, 0);
        return static_cast<unsigned short>(r[0]);
    }
    return round_double<5, 10>(static_cast<double>(f), mode);
}
#define ACLNN_EMU_HW_H2F 1
#else
static inline unsigned short f2h(float f, int mode = RN) { return round_double<5, 10>(static_cast<double>(f), mode); }
#endif
static inline unsigned short d2h(double d, int mode = RN) { return round_double<5, 10>(d, mode); }
// RN, NaN -> CUDA's canonical 0x7FFF: a select, not a branch, so that g++ can vectorise it.
static inline unsigned short f2bf(float f) {
    const uint32_t u = __builtin_bit_cast(uint32_t, f);
    const uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    return static_cast<unsigned short>((u & 0x7fffffffu) > 0x7f800000u ? 0x7fffu : r);
}
static inline unsigned short f2bf(float f, int mode) {
    return mode == RN ? f2bf(f) : round_double<8, 7>(static_cast<double>(f), mode);
}
static inline unsigned short d2bf(double d, int mode = RN) { return round_double<8, 7>(d, mode); }
static inline float h2f(unsigned short h) {
#ifdef ACLNN_EMU_HW_H2F
    if ((h & 0x7fffu) <= 0x7c00u) {  // not a NaN: exact in hardware
        const emu_v4sf r = __builtin_ia32_vcvtph2ps(emu_v8hi{static_cast<short>(h), 0, 0, 0, 0, 0, 0, 0});
        return r[0];
    }
#endif
    const unsigned sign = (h >> 15) & 1u, ex = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    uint32_t u;
    if (ex == 0x1f) {
        u = m ? 0x7fffffffu : ((sign << 31) | 0x7f800000u);
    } else if (ex == 0) {
        if (!m) {
            u = sign << 31;
        } else {
            const float f = static_cast<float>(m) * 0x1p-24f;
            return sign ? -f : f;
        }
    } else {
        u = (sign << 31) | ((ex + 112u) << 23) | (m << 13);
    }
    return __builtin_bit_cast(float, u);
}
// Two halves <-> two floats in one instruction (the __half2 conversions, and the kernels' 16-byte
// vector loads/stores that go through them): a lone conversion is port-bound at ~2 per element.
// Same bits as the scalar functions, NaNs included (CUDA's canonical NaN, patched in without a
// branch: a mispredicted NaN test per pair cost more than the conversion).
static inline void h2f_pair(uint32_t w, float& lo, float& hi) {
#ifdef ACLNN_EMU_HW_H2F
    const emu_v4sf r = __builtin_ia32_vcvtph2ps(reinterpret_cast<emu_v8hi>(emu_v4si{static_cast<int>(w), 0, 0, 0}));
    const emu_v4si nan = r != r;
    const emu_v4sf c = reinterpret_cast<emu_v4sf>((reinterpret_cast<emu_v4si>(r) & ~nan) | (nan & 0x7fffffff));
    lo = c[0];
    hi = c[1];
#else
    lo = h2f(static_cast<unsigned short>(w & 0xffffu));
    hi = h2f(static_cast<unsigned short>(w >> 16));
#endif
}
static inline uint32_t f2h_pair(float a, float b) {
#ifdef ACLNN_EMU_HW_H2F
    // the NaN lanes as a 16-bit mask by a vector compare and a pack (scalar `a != a` tests cost a
    // compare and a cmov per element: f16 elementwise kernels 1.3x slower)
    const emu_v4sf v = {a, b, 0.f, 0.f};
    const emu_v8hi r = __builtin_ia32_vcvtps2ph(v, 0);
    const emu_v8hi nan = __builtin_ia32_packssdw128(v != v, v != v);
    const emu_v8hi c = (r & ~nan) | (nan & 0x7fff);
    return static_cast<uint32_t>(reinterpret_cast<emu_v4si>(c)[0]);
#else
    return static_cast<uint32_t>(f2h(a)) | (static_cast<uint32_t>(f2h(b)) << 16);
#endif
}
static inline float bf2f(unsigned short b) { return __builtin_bit_cast(float, static_cast<uint32_t>(b) << 16); }

template <class I>
static inline I to_int(float f, int mode) {  // saturating, NaN -> 0
    if (f != f) return 0;
    double r = static_cast<double>(f);
    r = mode == RN ? nearbyint(r) : mode == RZ ? trunc(r) : mode == RD ? floor(r) : ceil(r);
    if (r <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
    if (r >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
    return static_cast<I>(r);
}
}  // namespace fp
}  // namespace __emu

// ---------------------------------------------------------------------------------------------
// The classes
// ---------------------------------------------------------------------------------------------
#define EMU_LP_CLASS(H, RAW, F2, D2, TOF, OTHER)                                                                 \
    struct __attribute__((aligned(2))) H {                                                                       \
        unsigned short __x;                                                                                      \
        H() = default;                                                                                           \
        constexpr H(const RAW& r) : __x(r.x) {}                                                                  \
        H& operator=(const RAW& r) { __x = r.x; return *this; }                                                  \
        volatile H& operator=(const RAW& r) volatile { __x = r.x; return *this; }                                \
        volatile H& operator=(const volatile RAW& r) volatile { __x = r.x; return *this; }                       \
        operator RAW() const { return RAW{__x}; }                                                                \
        operator RAW() const volatile { return RAW{__x}; }                                                       \
        EMU_LP_CONVERSIONS(H, F2, D2, TOF, OTHER)                                                                \
    };

#define EMU_LP_CONVERSIONS_BODY(H, F2, D2, TOF, OTHER)                                                           \
    explicit H(const OTHER f);                                                                                   \
    H(const float f) : __x(F2(f)) {}                                                                             \
    H(const double f) : __x(D2(f)) {}                                                                            \
    operator float() const { return TOF(__x); }                                                                  \
    H& operator=(const float f) { __x = F2(f); return *this; }                                                   \
    H& operator=(const double f) { __x = D2(f); return *this; }                                                  \
    H(const short v) : __x(D2(static_cast<double>(v))) {}                                                        \
    H(const unsigned short v) : __x(D2(static_cast<double>(v))) {}                                               \
    H(const int v) : __x(D2(static_cast<double>(v))) {}                                                          \
    H(const unsigned int v) : __x(D2(static_cast<double>(v))) {}                                                 \
    H(const long v) : __x(D2(static_cast<double>(v))) {}                                                         \
    H(const unsigned long v) : __x(D2(static_cast<double>(v))) {}                                                \
    H(const long long v) : __x(D2(static_cast<double>(v))) {}                                                    \
    H(const unsigned long long v) : __x(D2(static_cast<double>(v))) {}                                           \
    operator signed char() const { return ::__emu::fp::to_int<signed char>(TOF(__x), ::__emu::fp::RZ); }        \
    operator unsigned char() const { return ::__emu::fp::to_int<unsigned char>(TOF(__x), ::__emu::fp::RZ); }     \
    operator char() const { return ::__emu::fp::to_int<char>(TOF(__x), ::__emu::fp::RZ); }                      \
    operator short() const { return ::__emu::fp::to_int<short>(TOF(__x), ::__emu::fp::RZ); }                    \
    operator unsigned short() const { return ::__emu::fp::to_int<unsigned short>(TOF(__x), ::__emu::fp::RZ); }  \
    operator int() const { return ::__emu::fp::to_int<int>(TOF(__x), ::__emu::fp::RZ); }                        \
    operator unsigned int() const { return ::__emu::fp::to_int<unsigned int>(TOF(__x), ::__emu::fp::RZ); }      \
    operator long() const { return ::__emu::fp::to_int<long>(TOF(__x), ::__emu::fp::RZ); }                      \
    operator unsigned long() const { return ::__emu::fp::to_int<unsigned long>(TOF(__x), ::__emu::fp::RZ); }    \
    operator long long() const { return ::__emu::fp::to_int<long long>(TOF(__x), ::__emu::fp::RZ); }            \
    operator unsigned long long() const { return ::__emu::fp::to_int<unsigned long long>(TOF(__x), ::__emu::fp::RZ); } \
    H& operator=(const short v) { __x = D2(static_cast<double>(v)); return *this; }                              \
    H& operator=(const unsigned short v) { __x = D2(static_cast<double>(v)); return *this; }                     \
    H& operator=(const int v) { __x = D2(static_cast<double>(v)); return *this; }                                \
    H& operator=(const unsigned int v) { __x = D2(static_cast<double>(v)); return *this; }                       \
    H& operator=(const long long v) { __x = D2(static_cast<double>(v)); return *this; }                          \
    H& operator=(const unsigned long long v) { __x = D2(static_cast<double>(v)); return *this; }                 \
    operator bool() const { return (__x & 0x7fffu) != 0; }

#define EMU_F2H_RN(f) ::__emu::fp::f2h(f)
#define EMU_D2H_RN(d) ::__emu::fp::d2h(d)
#define EMU_F2BF_RN(f) ::__emu::fp::f2bf(f)
#define EMU_D2BF_RN(d) ::__emu::fp::d2bf(d)

#if !defined(__CUDA_NO_HALF_CONVERSIONS__)
#define EMU_LP_CONVERSIONS(H, F2, D2, TOF, OTHER) EMU_LP_CONVERSIONS_BODY(H, F2, D2, TOF, OTHER)
#else
#define EMU_LP_CONVERSIONS(H, F2, D2, TOF, OTHER)
#endif
EMU_LP_CLASS(__half, __half_raw, EMU_F2H_RN, EMU_D2H_RN, ::__emu::fp::h2f, __nv_bfloat16)
#undef EMU_LP_CONVERSIONS
#if !defined(__CUDA_NO_BFLOAT16_CONVERSIONS__)
#define EMU_LP_CONVERSIONS(H, F2, D2, TOF, OTHER) EMU_LP_CONVERSIONS_BODY(H, F2, D2, TOF, OTHER)
#else
#define EMU_LP_CONVERSIONS(H, F2, D2, TOF, OTHER)
#endif
EMU_LP_CLASS(__nv_bfloat16, __nv_bfloat16_raw, EMU_F2BF_RN, EMU_D2BF_RN, ::__emu::fp::bf2f, __half)
#undef EMU_LP_CONVERSIONS
#undef EMU_LP_CONVERSIONS_BODY
#undef EMU_LP_CLASS

#if !defined(__CUDA_NO_HALF_CONVERSIONS__)
inline __half::__half(const __nv_bfloat16 f) : __x(::__emu::fp::f2h(::__emu::fp::bf2f(f.__x))) {}
#endif
#if !defined(__CUDA_NO_BFLOAT16_CONVERSIONS__)
inline __nv_bfloat16::__nv_bfloat16(const __half f) : __x(::__emu::fp::f2bf(::__emu::fp::h2f(f.__x))) {}
#endif

#define EMU_LP2_CLASS(H2, H, RAW2, RAW)                                                                          \
    struct __attribute__((aligned(4))) H2 {                                                                      \
        H x, y;                                                                                                  \
        H2() = default;                                                                                          \
        constexpr H2(const H& a, const H& b) : x(a), y(b) {}                                                     \
        H2(const RAW2& r) : x(RAW{r.x}), y(RAW{r.y}) {}                                                          \
        H2& operator=(const RAW2& r) { x = RAW{r.x}; y = RAW{r.y}; return *this; }                               \
        operator RAW2() const { return RAW2{x.__x, y.__x}; }                                                     \
    };
EMU_LP2_CLASS(__half2, __half, __half2_raw, __half_raw)
EMU_LP2_CLASS(__nv_bfloat162, __nv_bfloat16, __nv_bfloat162_raw, __nv_bfloat16_raw)
#undef EMU_LP2_CLASS

typedef __half half;
typedef __half2 half2;
typedef __half __nv_half;
typedef __half2 __nv_half2;
typedef __half_raw __nv_half_raw;
typedef __half2_raw __nv_half2_raw;
typedef __half nv_half;
typedef __half2 nv_half2;
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

namespace __emu {
namespace fp {
static inline float tof(__half h) { return h2f(h.__x); }
static inline float tof(__nv_bfloat16 h) { return bf2f(h.__x); }
template <class H> static inline H mk(unsigned short b) { H h; h.__x = b; return h; }
template <class H> static inline H fromf(float f, int mode = RN);
template <> inline __half fromf<__half>(float f, int mode) { return mk<__half>(f2h(f, mode)); }
template <> inline __nv_bfloat16 fromf<__nv_bfloat16>(float f, int mode) { return mk<__nv_bfloat16>(f2bf(f, mode)); }
template <class H> static inline H fromd(double d, int mode = RN);
template <> inline __half fromd<__half>(double d, int mode) { return mk<__half>(d2h(d, mode)); }
template <> inline __nv_bfloat16 fromd<__nv_bfloat16>(double d, int mode) { return mk<__nv_bfloat16>(d2bf(d, mode)); }
template <class H> static inline bool isnan_(H h);
template <> inline bool isnan_<__half>(__half h) { return (h.__x & 0x7fffu) > 0x7c00u; }
template <> inline bool isnan_<__nv_bfloat16>(__nv_bfloat16 h) { return (h.__x & 0x7fffu) > 0x7f80u; }
template <class H> static inline unsigned short inf_bits();
template <> inline unsigned short inf_bits<__half>() { return 0x7c00u; }
template <> inline unsigned short inf_bits<__nv_bfloat16>() { return 0x7f80u; }
template <class H> static inline unsigned short one_bits();
template <> inline unsigned short one_bits<__half>() { return 0x3c00u; }
template <> inline unsigned short one_bits<__nv_bfloat16>() { return 0x3f80u; }
// Pairs (the __half2 / __nv_bfloat162 conversions): __half through h2f_pair / f2h_pair. A bf16 pair is
// two scalar conversions into the two fields: g++ then vectorises a kernel's 16-byte vector of pairs
// (a combined 32-bit word split into the fields kept the bf16 elementwise kernels scalar, 2x slower).
template <class H2> static inline float2 to_pair(const H2& a) { return make_float2(tof(a.x), tof(a.y)); }
template <> inline float2 to_pair<__half2>(const __half2& a) {
    float lo, hi;
    h2f_pair(static_cast<uint32_t>(a.x.__x) | (static_cast<uint32_t>(a.y.__x) << 16), lo, hi);
    return make_float2(lo, hi);
}
template <class H2, class H> static inline H2 from_pair(float a, float b) { return H2(fromf<H>(a), fromf<H>(b)); }
template <> inline __half2 from_pair<__half2, __half>(float a, float b) {
    const uint32_t w = f2h_pair(a, b);
    return __half2(mk<__half>(static_cast<unsigned short>(w & 0xffffu)), mk<__half>(static_cast<unsigned short>(w >> 16)));
}
static inline float sat(float f) { return f >= 1.0f ? 1.0f : (f > 0.0f ? f : 0.0f); }  // NaN -> 0
}  // namespace fp
}  // namespace __emu

// ---------------------------------------------------------------------------------------------
// Functions shared (overloaded) by __half and __nv_bfloat16
// ---------------------------------------------------------------------------------------------
#define EMU_LP_FUNCS(H, H2)                                                                                      \
    static inline H __hadd(const H a, const H b) { return ::__emu::fp::fromf<H>(::__emu::fp::tof(a) + ::__emu::fp::tof(b)); } \
    static inline H __hsub(const H a, const H b) { return ::__emu::fp::fromf<H>(::__emu::fp::tof(a) - ::__emu::fp::tof(b)); } \
    static inline H __hmul(const H a, const H b) { return ::__emu::fp::fromf<H>(::__emu::fp::tof(a) * ::__emu::fp::tof(b)); } \
    static inline H __hdiv(const H a, const H b) { return ::__emu::fp::fromf<H>(::__emu::fp::tof(a) / ::__emu::fp::tof(b)); } \
    static inline H __hadd_rn(const H a, const H b) { return __hadd(a, b); }                                     \
    static inline H __hsub_rn(const H a, const H b) { return __hsub(a, b); }                                     \
    static inline H __hmul_rn(const H a, const H b) { return __hmul(a, b); }                                     \
    static inline H __hadd_sat(const H a, const H b) { return ::__emu::fp::fromf<H>(::__emu::fp::sat(::__emu::fp::tof(__hadd(a, b)))); } \
    static inline H __hsub_sat(const H a, const H b) { return ::__emu::fp::fromf<H>(::__emu::fp::sat(::__emu::fp::tof(__hsub(a, b)))); } \
    static inline H __hmul_sat(const H a, const H b) { return ::__emu::fp::fromf<H>(::__emu::fp::sat(::__emu::fp::tof(__hmul(a, b)))); } \
    static inline H __hfma(const H a, const H b, const H c) {                                                    \
        return ::__emu::fp::fromd<H>(fma(static_cast<double>(::__emu::fp::tof(a)), static_cast<double>(::__emu::fp::tof(b)), \
                                         static_cast<double>(::__emu::fp::tof(c))));                             \
    }                                                                                                            \
    static inline H __hfma_sat(const H a, const H b, const H c) {                                                \
        return ::__emu::fp::fromf<H>(::__emu::fp::sat(::__emu::fp::tof(__hfma(a, b, c))));                       \
    }                                                                                                            \
    static inline H __hfma_relu(const H a, const H b, const H c) {                                               \
        H r = __hfma(a, b, c);                                                                                   \
        if (::__emu::fp::isnan_(r)) return ::__emu::fp::mk<H>(0x7fffu);                                          \
        return (r.__x & 0x8000u) ? ::__emu::fp::mk<H>(0) : r;                                                    \
    }                                                                                                            \
    static inline H __hneg(const H a) { return ::__emu::fp::mk<H>(a.__x ^ 0x8000u); }                            \
    static inline H __habs(const H a) { return ::__emu::fp::mk<H>(a.__x & 0x7fffu); }                            \
    static inline bool __hisnan(const H a) { return ::__emu::fp::isnan_(a); }                                    \
    static inline int __hisinf(const H a) {                                                                      \
        return (a.__x & 0x7fffu) == ::__emu::fp::inf_bits<H>() ? ((a.__x & 0x8000u) ? -1 : 1) : 0;               \
    }                                                                                                            \
    static inline bool __heq(const H a, const H b) { return ::__emu::fp::tof(a) == ::__emu::fp::tof(b); }       \
    static inline bool __hne(const H a, const H b) { float x = ::__emu::fp::tof(a), y = ::__emu::fp::tof(b); return x < y || x > y; } \
    static inline bool __hle(const H a, const H b) { return ::__emu::fp::tof(a) <= ::__emu::fp::tof(b); }       \
    static inline bool __hge(const H a, const H b) { return ::__emu::fp::tof(a) >= ::__emu::fp::tof(b); }       \
    static inline bool __hlt(const H a, const H b) { return ::__emu::fp::tof(a) < ::__emu::fp::tof(b); }        \
    static inline bool __hgt(const H a, const H b) { return ::__emu::fp::tof(a) > ::__emu::fp::tof(b); }        \
    static inline bool __hequ(const H a, const H b) { return !__hne(a, b); }                                     \
    static inline bool __hneu(const H a, const H b) { return !__heq(a, b); }                                     \
    static inline bool __hleu(const H a, const H b) { return !__hgt(a, b); }                                     \
    static inline bool __hgeu(const H a, const H b) { return !__hlt(a, b); }                                     \
    static inline bool __hltu(const H a, const H b) { return !__hge(a, b); }                                     \
    static inline bool __hgtu(const H a, const H b) { return !__hle(a, b); }                                     \
    static inline H __hmax(const H a, const H b) {                                                               \
        bool na = __hisnan(a), nb = __hisnan(b);                                                                 \
        if (na && nb) return ::__emu::fp::mk<H>(0x7fffu);                                                        \
        if (na) return b;                                                                                        \
        if (nb) return a;                                                                                        \
        if (__heq(a, b)) return (a.__x > b.__x) ? b : a;                                                         \
        return __hgt(a, b) ? a : b;                                                                              \
    }                                                                                                            \
    static inline H __hmin(const H a, const H b) {                                                               \
        bool na = __hisnan(a), nb = __hisnan(b);                                                                 \
        if (na && nb) return ::__emu::fp::mk<H>(0x7fffu);                                                        \
        if (na) return b;                                                                                        \
        if (nb) return a;                                                                                        \
        if (__heq(a, b)) return (a.__x > b.__x) ? a : b;                                                         \
        return __hlt(a, b) ? a : b;                                                                              \
    }                                                                                                            \
    static inline H __hmax_nan(const H a, const H b) {                                                           \
        if (__hisnan(a) || __hisnan(b)) return ::__emu::fp::mk<H>(0x7fffu);                                      \
        return __hmax(a, b);                                                                                     \
    }                                                                                                            \
    static inline H __hmin_nan(const H a, const H b) {                                                           \
        if (__hisnan(a) || __hisnan(b)) return ::__emu::fp::mk<H>(0x7fffu);                                      \
        return __hmin(a, b);                                                                                     \
    }                                                                                                            \
    static inline H hexp(const H a) { return ::__emu::fp::fromf<H>(expf(::__emu::fp::tof(a))); }                 \
    static inline H hexp2(const H a) { return ::__emu::fp::fromf<H>(exp2f(::__emu::fp::tof(a))); }               \
    static inline H hexp10(const H a) { return ::__emu::fp::fromf<H>(static_cast<float>(pow(10.0, ::__emu::fp::tof(a)))); } \
    static inline H hlog(const H a) { return ::__emu::fp::fromf<H>(logf(::__emu::fp::tof(a))); }                 \
    static inline H hlog2(const H a) { return ::__emu::fp::fromf<H>(log2f(::__emu::fp::tof(a))); }               \
    static inline H hlog10(const H a) { return ::__emu::fp::fromf<H>(log10f(::__emu::fp::tof(a))); }             \
    static inline H hsqrt(const H a) { return ::__emu::fp::fromf<H>(sqrtf(::__emu::fp::tof(a))); }               \
    static inline H hrsqrt(const H a) { return ::__emu::fp::fromd<H>(1.0 / sqrt(static_cast<double>(::__emu::fp::tof(a)))); } \
    static inline H hrcp(const H a) { return ::__emu::fp::fromf<H>(1.0f / ::__emu::fp::tof(a)); }                \
    static inline H hsin(const H a) { return ::__emu::fp::fromf<H>(sinf(::__emu::fp::tof(a))); }                 \
    static inline H hcos(const H a) { return ::__emu::fp::fromf<H>(cosf(::__emu::fp::tof(a))); }                 \
    static inline H htanh(const H a) { return ::__emu::fp::fromf<H>(tanhf(::__emu::fp::tof(a))); }               \
    static inline H htanh_approx(const H a) { return htanh(a); }                                                 \
    static inline H hfloor(const H a) { return ::__emu::fp::fromf<H>(floorf(::__emu::fp::tof(a))); }             \
    static inline H hceil(const H a) { return ::__emu::fp::fromf<H>(ceilf(::__emu::fp::tof(a))); }               \
    static inline H htrunc(const H a) { return ::__emu::fp::fromf<H>(truncf(::__emu::fp::tof(a))); }             \
    static inline H hrint(const H a) { return ::__emu::fp::fromf<H>(nearbyintf(::__emu::fp::tof(a))); }          \
    /* two-lane versions */                                                                                      \
    static inline H2 __hadd2(const H2 a, const H2 b) { return H2(__hadd(a.x, b.x), __hadd(a.y, b.y)); }          \
    static inline H2 __hsub2(const H2 a, const H2 b) { return H2(__hsub(a.x, b.x), __hsub(a.y, b.y)); }          \
    static inline H2 __hmul2(const H2 a, const H2 b) { return H2(__hmul(a.x, b.x), __hmul(a.y, b.y)); }          \
    static inline H2 __h2div(const H2 a, const H2 b) { return H2(__hdiv(a.x, b.x), __hdiv(a.y, b.y)); }          \
    static inline H2 __hadd2_rn(const H2 a, const H2 b) { return __hadd2(a, b); }                                \
    static inline H2 __hsub2_rn(const H2 a, const H2 b) { return __hsub2(a, b); }                                \
    static inline H2 __hmul2_rn(const H2 a, const H2 b) { return __hmul2(a, b); }                                \
    static inline H2 __hadd2_sat(const H2 a, const H2 b) { return H2(__hadd_sat(a.x, b.x), __hadd_sat(a.y, b.y)); } \
    static inline H2 __hsub2_sat(const H2 a, const H2 b) { return H2(__hsub_sat(a.x, b.x), __hsub_sat(a.y, b.y)); } \
    static inline H2 __hmul2_sat(const H2 a, const H2 b) { return H2(__hmul_sat(a.x, b.x), __hmul_sat(a.y, b.y)); } \
    static inline H2 __hfma2(const H2 a, const H2 b, const H2 c) { return H2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); } \
    static inline H2 __hfma2_sat(const H2 a, const H2 b, const H2 c) { return H2(__hfma_sat(a.x, b.x, c.x), __hfma_sat(a.y, b.y, c.y)); } \
    static inline H2 __hfma2_relu(const H2 a, const H2 b, const H2 c) { return H2(__hfma_relu(a.x, b.x, c.x), __hfma_relu(a.y, b.y, c.y)); } \
    static inline H2 __hcmadd(const H2 a, const H2 b, const H2 c) {                                              \
        float ar = ::__emu::fp::tof(a.x), ai = ::__emu::fp::tof(a.y), br = ::__emu::fp::tof(b.x), bi = ::__emu::fp::tof(b.y); \
        return H2(::__emu::fp::fromf<H>(fmaf(ar, br, fmaf(-ai, bi, ::__emu::fp::tof(c.x)))),                     \
                  ::__emu::fp::fromf<H>(fmaf(ar, bi, fmaf(ai, br, ::__emu::fp::tof(c.y)))));                     \
    }                                                                                                            \
    static inline H2 __hneg2(const H2 a) { return H2(__hneg(a.x), __hneg(a.y)); }                                \
    static inline H2 __habs2(const H2 a) { return H2(__habs(a.x), __habs(a.y)); }                                \
    static inline H2 __hmax2(const H2 a, const H2 b) { return H2(__hmax(a.x, b.x), __hmax(a.y, b.y)); }          \
    static inline H2 __hmin2(const H2 a, const H2 b) { return H2(__hmin(a.x, b.x), __hmin(a.y, b.y)); }          \
    static inline H2 __hmax2_nan(const H2 a, const H2 b) { return H2(__hmax_nan(a.x, b.x), __hmax_nan(a.y, b.y)); } \
    static inline H2 __hmin2_nan(const H2 a, const H2 b) { return H2(__hmin_nan(a.x, b.x), __hmin_nan(a.y, b.y)); } \
    static inline H2 __hisnan2(const H2 a) {                                                                     \
        return H2(::__emu::fp::mk<H>(__hisnan(a.x) ? ::__emu::fp::one_bits<H>() : 0),                           \
                  ::__emu::fp::mk<H>(__hisnan(a.y) ? ::__emu::fp::one_bits<H>() : 0));                           \
    }                                                                                                            \
    static inline float __low2float(const H2 a) { return ::__emu::fp::tof(a.x); }                                \
    static inline float __high2float(const H2 a) { return ::__emu::fp::tof(a.y); }                               \
    static inline H2 __lowhigh2highlow(const H2 a) { return H2(a.y, a.x); }                                      \
    EMU_LP_CMP2(H, H2, eq) EMU_LP_CMP2(H, H2, ne) EMU_LP_CMP2(H, H2, le) EMU_LP_CMP2(H, H2, ge)                  \
    EMU_LP_CMP2(H, H2, lt) EMU_LP_CMP2(H, H2, gt) EMU_LP_CMP2(H, H2, equ) EMU_LP_CMP2(H, H2, neu)                \
    EMU_LP_CMP2(H, H2, leu) EMU_LP_CMP2(H, H2, geu) EMU_LP_CMP2(H, H2, ltu) EMU_LP_CMP2(H, H2, gtu)              \
    EMU_LP_MATH2(H, H2, exp) EMU_LP_MATH2(H, H2, exp2) EMU_LP_MATH2(H, H2, exp10) EMU_LP_MATH2(H, H2, log)       \
    EMU_LP_MATH2(H, H2, log2) EMU_LP_MATH2(H, H2, log10) EMU_LP_MATH2(H, H2, sqrt) EMU_LP_MATH2(H, H2, rsqrt)    \
    EMU_LP_MATH2(H, H2, rcp) EMU_LP_MATH2(H, H2, sin) EMU_LP_MATH2(H, H2, cos) EMU_LP_MATH2(H, H2, tanh)         \
    EMU_LP_MATH2(H, H2, tanh_approx) EMU_LP_MATH2(H, H2, floor) EMU_LP_MATH2(H, H2, ceil)                        \
    EMU_LP_MATH2(H, H2, trunc) EMU_LP_MATH2(H, H2, rint)

#define EMU_LP_CMP2(H, H2, C)                                                                                    \
    static inline H2 __h##C##2(const H2 a, const H2 b) {                                                         \
        return H2(::__emu::fp::mk<H>(__h##C(a.x, b.x) ? ::__emu::fp::one_bits<H>() : 0),                         \
                  ::__emu::fp::mk<H>(__h##C(a.y, b.y) ? ::__emu::fp::one_bits<H>() : 0));                        \
    }                                                                                                            \
    static inline bool __hb##C##2(const H2 a, const H2 b) { return __h##C(a.x, b.x) && __h##C(a.y, b.y); }       \
    static inline unsigned __h##C##2_mask(const H2 a, const H2 b) {                                              \
        return (__h##C(a.x, b.x) ? 0xffffu : 0u) | (__h##C(a.y, b.y) ? 0xffff0000u : 0u);                        \
    }
#define EMU_LP_MATH2(H, H2, F) static inline H2 h2##F(const H2 a) { return H2(h##F(a.x), h##F(a.y)); }

EMU_LP_FUNCS(__half, __half2)
EMU_LP_FUNCS(__nv_bfloat16, __nv_bfloat162)
#undef EMU_LP_FUNCS
#undef EMU_LP_CMP2
#undef EMU_LP_MATH2

// ---------------------------------------------------------------------------------------------
// Type-specific conversion functions (N = half / bfloat16)
// ---------------------------------------------------------------------------------------------
#define EMU_LP_CONV(H, H2, N)                                                                                    \
    static inline float __##N##2float(const H a) { return ::__emu::fp::tof(a); }                                 \
    static inline H __float2##N(const float a) { return ::__emu::fp::fromf<H>(a); }                              \
    static inline H __float2##N##_rn(const float a) { return ::__emu::fp::fromf<H>(a); }                         \
    static inline H __float2##N##_rz(const float a) { return ::__emu::fp::fromf<H>(a, ::__emu::fp::RZ); }        \
    static inline H __float2##N##_rd(const float a) { return ::__emu::fp::fromf<H>(a, ::__emu::fp::RD); }        \
    static inline H __float2##N##_ru(const float a) { return ::__emu::fp::fromf<H>(a, ::__emu::fp::RU); }        \
    static inline H __double2##N(const double a) { return ::__emu::fp::fromd<H>(a); }                            \
    EMU_LP_I2H(H, N, int, int) EMU_LP_I2H(H, N, uint, unsigned int) EMU_LP_I2H(H, N, short, short)               \
    EMU_LP_I2H(H, N, ushort, unsigned short) EMU_LP_I2H(H, N, ll, long long) EMU_LP_I2H(H, N, ull, unsigned long long) \
    EMU_LP_H2I(H, N, int, int) EMU_LP_H2I(H, N, uint, unsigned int) EMU_LP_H2I(H, N, short, short)               \
    EMU_LP_H2I(H, N, ushort, unsigned short) EMU_LP_H2I(H, N, ll, long long) EMU_LP_H2I(H, N, ull, unsigned long long) \
    static inline signed char __##N##2char_rz(const H a) { return ::__emu::fp::to_int<signed char>(::__emu::fp::tof(a), ::__emu::fp::RZ); } \
    static inline unsigned char __##N##2uchar_rz(const H a) { return ::__emu::fp::to_int<unsigned char>(::__emu::fp::tof(a), ::__emu::fp::RZ); } \
    static inline short __##N##_as_short(const H a) { return static_cast<short>(a.__x); }                        \
    static inline unsigned short __##N##_as_ushort(const H a) { return a.__x; }                                 \
    static inline H __short_as_##N(const short a) { return ::__emu::fp::mk<H>(static_cast<unsigned short>(a)); } \
    static inline H __ushort_as_##N(const unsigned short a) { return ::__emu::fp::mk<H>(a); }                    \
    static inline H2 __halves2##N##2(const H a, const H b) { return H2(a, b); }                                  \
    static inline H2 __##N##2##N##2(const H a) { return H2(a, a); }                                              \
    static inline H2 make_##N##2(const H a, const H b) { return H2(a, b); }                                      \
    static inline H2 __floats2##N##2_rn(const float a, const float b) { return ::__emu::fp::from_pair<H2, H>(a, b); } \
    static inline H2 __float2##N##2_rn(const float a) { H h = __float2##N(a); return H2(h, h); }                 \
    static inline float2 __##N##22float2(const H2 a) { return ::__emu::fp::to_pair(a); }                         \
    static inline H2 __float22##N##2_rn(const float2 a) { return ::__emu::fp::from_pair<H2, H>(a.x, a.y); }     \
    static inline H __low2##N(const H2 a) { return a.x; }                                                        \
    static inline H __high2##N(const H2 a) { return a.y; }                                                       \
    static inline H2 __lows2##N##2(const H2 a, const H2 b) { return H2(a.x, b.x); }                              \
    static inline H2 __highs2##N##2(const H2 a, const H2 b) { return H2(a.y, b.y); }                             \
    static inline H2 __low2##N##2(const H2 a) { return H2(a.x, a.x); }                                           \
    static inline H2 __high2##N##2(const H2 a) { return H2(a.y, a.y); }

#define EMU_LP_I2H(H, N, S, T)                                                                                   \
    static inline H __##S##2##N##_rn(const T v) { return ::__emu::fp::fromd<H>(static_cast<double>(v)); }        \
    static inline H __##S##2##N##_rz(const T v) { return ::__emu::fp::fromd<H>(static_cast<double>(v), ::__emu::fp::RZ); } \
    static inline H __##S##2##N##_rd(const T v) { return ::__emu::fp::fromd<H>(static_cast<double>(v), ::__emu::fp::RD); } \
    static inline H __##S##2##N##_ru(const T v) { return ::__emu::fp::fromd<H>(static_cast<double>(v), ::__emu::fp::RU); }
#define EMU_LP_H2I(H, N, S, T)                                                                                   \
    static inline T __##N##2##S##_rn(const H a) { return ::__emu::fp::to_int<T>(::__emu::fp::tof(a), ::__emu::fp::RN); } \
    static inline T __##N##2##S##_rz(const H a) { return ::__emu::fp::to_int<T>(::__emu::fp::tof(a), ::__emu::fp::RZ); } \
    static inline T __##N##2##S##_rd(const H a) { return ::__emu::fp::to_int<T>(::__emu::fp::tof(a), ::__emu::fp::RD); } \
    static inline T __##N##2##S##_ru(const H a) { return ::__emu::fp::to_int<T>(::__emu::fp::tof(a), ::__emu::fp::RU); }

EMU_LP_CONV(__half, __half2, half)
EMU_LP_CONV(__nv_bfloat16, __nv_bfloat162, bfloat16)
#undef EMU_LP_CONV
#undef EMU_LP_I2H
#undef EMU_LP_H2I

// ---------------------------------------------------------------------------------------------
// Operators
// ---------------------------------------------------------------------------------------------
#define EMU_LP_OPS(H)                                                                                            \
    static inline H operator+(const H& a, const H& b) { return __hadd(a, b); }                                   \
    static inline H operator-(const H& a, const H& b) { return __hsub(a, b); }                                   \
    static inline H operator*(const H& a, const H& b) { return __hmul(a, b); }                                   \
    static inline H operator/(const H& a, const H& b) { return __hdiv(a, b); }                                   \
    static inline H& operator+=(H& a, const H& b) { a = __hadd(a, b); return a; }                                \
    static inline H& operator-=(H& a, const H& b) { a = __hsub(a, b); return a; }                                \
    static inline H& operator*=(H& a, const H& b) { a = __hmul(a, b); return a; }                                \
    static inline H& operator/=(H& a, const H& b) { a = __hdiv(a, b); return a; }                                \
    static inline H& operator++(H& h) { h = __hadd(h, ::__emu::fp::mk<H>(::__emu::fp::one_bits<H>())); return h; } \
    static inline H& operator--(H& h) { h = __hsub(h, ::__emu::fp::mk<H>(::__emu::fp::one_bits<H>())); return h; } \
    static inline H operator++(H& h, const int) { H r = h; ++h; return r; }                                      \
    static inline H operator--(H& h, const int) { H r = h; --h; return r; }                                      \
    static inline H operator+(const H& h) { return h; }                                                          \
    static inline H operator-(const H& h) { return __hneg(h); }                                                  \
    static inline bool operator==(const H& a, const H& b) { return __heq(a, b); }                                \
    static inline bool operator!=(const H& a, const H& b) { return __hneu(a, b); }                               \
    static inline bool operator>(const H& a, const H& b) { return __hgt(a, b); }                                 \
    static inline bool operator<(const H& a, const H& b) { return __hlt(a, b); }                                 \
    static inline bool operator>=(const H& a, const H& b) { return __hge(a, b); }                                \
    static inline bool operator<=(const H& a, const H& b) { return __hle(a, b); }
#define EMU_LP2_OPS(H2, ONE)                                                                                     \
    static inline H2 operator+(const H2& a, const H2& b) { return __hadd2(a, b); }                               \
    static inline H2 operator-(const H2& a, const H2& b) { return __hsub2(a, b); }                               \
    static inline H2 operator*(const H2& a, const H2& b) { return __hmul2(a, b); }                               \
    static inline H2 operator/(const H2& a, const H2& b) { return __h2div(a, b); }                               \
    static inline H2& operator+=(H2& a, const H2& b) { a = __hadd2(a, b); return a; }                            \
    static inline H2& operator-=(H2& a, const H2& b) { a = __hsub2(a, b); return a; }                            \
    static inline H2& operator*=(H2& a, const H2& b) { a = __hmul2(a, b); return a; }                            \
    static inline H2& operator/=(H2& a, const H2& b) { a = __h2div(a, b); return a; }                            \
    static inline H2& operator++(H2& h) { h = __hadd2(h, H2(ONE, ONE)); return h; }                              \
    static inline H2& operator--(H2& h) { h = __hsub2(h, H2(ONE, ONE)); return h; }                              \
    static inline H2 operator++(H2& h, const int) { H2 r = h; ++h; return r; }                                   \
    static inline H2 operator--(H2& h, const int) { H2 r = h; --h; return r; }                                   \
    static inline H2 operator+(const H2& h) { return h; }                                                        \
    static inline H2 operator-(const H2& h) { return __hneg2(h); }                                               \
    static inline bool operator==(const H2& a, const H2& b) { return __hbeq2(a, b); }                            \
    static inline bool operator!=(const H2& a, const H2& b) { return __hbneu2(a, b); }                           \
    static inline bool operator>(const H2& a, const H2& b) { return __hbgt2(a, b); }                             \
    static inline bool operator<(const H2& a, const H2& b) { return __hblt2(a, b); }                             \
    static inline bool operator>=(const H2& a, const H2& b) { return __hbge2(a, b); }                            \
    static inline bool operator<=(const H2& a, const H2& b) { return __hble2(a, b); }
#if !defined(__CUDA_NO_HALF_OPERATORS__)
EMU_LP_OPS(__half)
#endif
#if !defined(__CUDA_NO_HALF2_OPERATORS__)
EMU_LP2_OPS(__half2, ::__emu::fp::mk<__half>(0x3c00u))
#endif
#if !defined(__CUDA_NO_BFLOAT16_OPERATORS__)
EMU_LP_OPS(__nv_bfloat16)
#endif
#if !defined(__CUDA_NO_BFLOAT162_OPERATORS__)
EMU_LP2_OPS(__nv_bfloat162, ::__emu::fp::mk<__nv_bfloat16>(0x3f80u))
#endif
#undef EMU_LP_OPS
#undef EMU_LP2_OPS

#define CUDART_INF_FP16 __ushort_as_half((unsigned short)0x7C00U)
#define CUDART_NAN_FP16 __ushort_as_half((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_FP16 __ushort_as_half((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half((unsigned short)0x7BFFU)
#define CUDART_NEG_ZERO_FP16 __ushort_as_half((unsigned short)0x8000U)
#define CUDART_ZERO_FP16 __ushort_as_half((unsigned short)0x0000U)
#define CUDART_ONE_FP16 __ushort_as_half((unsigned short)0x3C00U)
#define CUDART_INF_BF16 __ushort_as_bfloat16((unsigned short)0x7F80U)
#define CUDART_NAN_BF16 __ushort_as_bfloat16((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_BF16 __ushort_as_bfloat16((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_BF16 __ushort_as_bfloat16((unsigned short)0x7F7FU)
#define CUDART_NEG_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x8000U)
#define CUDART_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x0000U)
#define CUDART_ONE_BF16 __ushort_as_bfloat16((unsigned short)0x3F80U)

// ---------------------------------------------------------------------------------------------
// Emulator extension (no CUDA counterpart: use under #ifdef __EMU_CPU__): a whole 8- or 16-byte
// vector of __half <-> 4 or 8 floats, element i of the vector in f[i]. The bits are those of
// __half22float2 / __floats2half2_rn on each pair (RN; a NaN gives CUDA's canonical 0x7FFFFFFF /
// 0x7FFF). With F16C it is one vcvtph2ps / vcvtps2ph for the whole vector: g++ 12 never merges
// the four pair conversions of a 16-byte vector into one, so kernels that go through the pairs
// keep their f32 math between a load and a store scalar (a 16-byte f16 vector y = a*x + b
// 0.92 -> 0.20 ms per 1.6 M elements, standalone).
// ---------------------------------------------------------------------------------------------
namespace __emu {
namespace fp {
typedef float emu_v8sf __attribute__((vector_size(32)));
typedef int emu_v8si __attribute__((vector_size(32)));
template <int N>
static inline void halves_to_floats(const void* bits, float (&f)[N]) {
#ifdef ACLNN_EMU_HW_H2F
    // the vector built from whole words (an 8-byte copy into a zeroed 16-byte local was read back
    // before its store had retired: a store-forwarding stall per vector, 4x slower)
    typedef long long emu_v2di __attribute__((vector_size(16)));
    unsigned long long w[2] = {0, 0};
    memcpy(w, bits, 2 * N);
    const emu_v8hi h = reinterpret_cast<emu_v8hi>(emu_v2di{static_cast<long long>(w[0]), static_cast<long long>(w[1])});
    if constexpr (N == 8) {
        const emu_v8sf r = __builtin_ia32_vcvtph2ps256(h);
        const emu_v8si nan = r != r;
        const emu_v8sf c = reinterpret_cast<emu_v8sf>((reinterpret_cast<emu_v8si>(r) & ~nan) | (nan & 0x7fffffff));
        memcpy(f, &c, sizeof(c));
    } else {
        static_assert(N == 4, "4 or 8 halves");
        const emu_v4sf r = __builtin_ia32_vcvtph2ps(h);
        const emu_v4si nan = r != r;
        const emu_v4sf c = reinterpret_cast<emu_v4sf>((reinterpret_cast<emu_v4si>(r) & ~nan) | (nan & 0x7fffffff));
        memcpy(f, &c, sizeof(c));
    }
#else
    unsigned short h[N];
    memcpy(h, bits, sizeof(h));
    for (int i = 0; i < N; ++i) f[i] = h2f(h[i]);
#endif
}
template <int N>
static inline void floats_to_halves(const float (&f)[N], void* bits) {
#ifdef ACLNN_EMU_HW_H2F
    if constexpr (N == 8) {
        emu_v8sf v;
        memcpy(&v, f, sizeof(v));
        const emu_v8hi r = __builtin_ia32_vcvtps2ph256(v, 0);
        const emu_v8si n = v != v;
        const emu_v4si lo = __builtin_shufflevector(n, n, 0, 1, 2, 3), hi = __builtin_shufflevector(n, n, 4, 5, 6, 7);
        const emu_v8hi nan = __builtin_ia32_packssdw128(lo, hi);
        const emu_v8hi c = (r & ~nan) | (nan & 0x7fff);
        memcpy(bits, &c, sizeof(c));
    } else {
        static_assert(N == 4, "4 or 8 halves");
        emu_v4sf v;
        memcpy(&v, f, sizeof(v));
        const emu_v8hi r = __builtin_ia32_vcvtps2ph(v, 0);
        const emu_v8hi nan = __builtin_ia32_packssdw128(v != v, v != v);
        const emu_v8hi c = (r & ~nan) | (nan & 0x7fff);
        memcpy(bits, &c, 8);
    }
#else
    unsigned short h[N];
    for (int i = 0; i < N; ++i) h[i] = f2h(f[i]);
    memcpy(bits, h, sizeof(h));
#endif
}
// bf16: widening is a shift, narrowing f2bf's integer rounding, on the whole vector
typedef unsigned short emu_v4hu __attribute__((vector_size(8)));
typedef unsigned short emu_v8hu __attribute__((vector_size(16)));
typedef unsigned emu_v4su __attribute__((vector_size(16)));
typedef unsigned emu_v8su __attribute__((vector_size(32)));
template <class VH, class VW, int N>
static inline void bf16s_to_floats(const void* bits, float (&f)[N]) {
    if constexpr (N == 4) {
        // each bf16 into the high half of a zero word: one unpack (a convert of the 8-byte vector
        // was two loads, two widenings and a merge)
        typedef long long v2di __attribute__((vector_size(16)));
        unsigned long long w;
        memcpy(&w, bits, 8);
        const emu_v8hu h = reinterpret_cast<emu_v8hu>(v2di{static_cast<long long>(w), 0});
        const emu_v8hu z = {};
        const emu_v8hu r = __builtin_shufflevector(z, h, 0, 8, 1, 9, 2, 10, 3, 11);
        memcpy(f, &r, sizeof(r));
    } else {
        VH h;
        memcpy(&h, bits, sizeof(h));
        const VW w = __builtin_convertvector(h, VW) << 16;
        memcpy(f, &w, sizeof(w));
    }
}
template <class VH, class VW, int N>
static inline void floats_to_bf16s(const float (&f)[N], void* bits) {
    VW u;
    memcpy(&u, f, sizeof(u));
    const VW r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const VW nan = (u & 0x7fffffffu) > 0x7f800000u;
    const VH c = __builtin_convertvector((r & ~nan) | (nan & 0x7fffu), VH);
    memcpy(bits, &c, sizeof(c));
}
}  // namespace fp
}  // namespace __emu
// through_memory: the floats are stored and read back (a compiler barrier, no instruction): a reduction
// over them then vectorises where g++ 12 otherwise builds its lanes from the conversion's register
// element by element (f16 BatchNorm NCHW statistics 8x64x56x56 1.93 -> 0.84 ms, backward reduce
// 1.25 -> 1.01), while elementwise code is faster without (apply 0.36 -> 0.28 ms).
#define EMU_WHOLE_VECTOR_TO_FLOATS(NAME, FN, V, N)                                                               \
    static inline void NAME(const V& v, float (&f)[N], bool through_memory = false) {                          \
        FN(&v, f);                                                                                               \
        if (through_memory) __asm__("" : "+m"(f));                                                               \
    }
EMU_WHOLE_VECTOR_TO_FLOATS(__emu_halves_to_floats, (::__emu::fp::halves_to_floats<4>), uint2, 4)
EMU_WHOLE_VECTOR_TO_FLOATS(__emu_halves_to_floats, (::__emu::fp::halves_to_floats<8>), uint4, 8)
EMU_WHOLE_VECTOR_TO_FLOATS(__emu_bfloat16s_to_floats, (::__emu::fp::bf16s_to_floats<::__emu::fp::emu_v4hu, ::__emu::fp::emu_v4su>), uint2, 4)
EMU_WHOLE_VECTOR_TO_FLOATS(__emu_bfloat16s_to_floats, (::__emu::fp::bf16s_to_floats<::__emu::fp::emu_v8hu, ::__emu::fp::emu_v8su>), uint4, 8)
#undef EMU_WHOLE_VECTOR_TO_FLOATS
static inline void __emu_floats_to_bfloat16s(const float (&f)[4], uint2& v) { ::__emu::fp::floats_to_bf16s<::__emu::fp::emu_v4hu, ::__emu::fp::emu_v4su>(f, &v); }
static inline void __emu_floats_to_bfloat16s(const float (&f)[8], uint4& v) { ::__emu::fp::floats_to_bf16s<::__emu::fp::emu_v8hu, ::__emu::fp::emu_v8su>(f, &v); }
static inline void __emu_floats_to_halves(const float (&f)[4], uint2& v) { ::__emu::fp::floats_to_halves<4>(f, &v); }
static inline void __emu_floats_to_halves(const float (&f)[8], uint4& v) { ::__emu::fp::floats_to_halves<8>(f, &v); }

#endif  // ACLNN_PY_CUDA_EMU_FP16_H

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
