#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// Emulator implementation of the cuRAND device API (<curand_kernel.h>) for the aclnn_py host CUDA emulator.
//
// Written for this project from the published algorithms (Marsaglia's xorwow, Salmon et al.'s Philox4x32-10
// from Random123, L'Ecuyer's MRG32k3a) and the documented cuRAND behaviour; no NVIDIA header text is used.
// The sequences are those of NVIDIA's cuRAND bit for bit (same seeding, same jumps, same conversions to
// float/double): checked against the real headers, see tests/test_emulator_curand.py.
//
// Supported: curandStateXORWOW_t (= curandState_t, curandState), curandStatePhilox4_32_10_t,
// curandStateMRG32k3a_t with curand_init, curand, curand4 (Philox), skipahead, skipahead_sequence,
// skipahead_subsequence (MRG32k3a), curand_uniform(_double), curand_uniform4 / curand_uniform2_double (Philox),
// curand_normal(2/4)(_double), curand_log_normal(2/4)(_double), curand_Philox4x32_10, curand_MRG32k3a.
// The jump matrices are not tables here: they are computed once, at the first curand_init / skipahead
// (GF(2) 160x160 squarings for XORWOW, 3x3 modular squarings for MRG32k3a), which gives the same states.
//
// Not supported (a compile error saying so): Sobol32/64 and their scrambled forms, MTGP32,
// curand_poisson(4), curand_discrete(4).
#ifndef ACLNN_EMU_CURAND_KERNEL_H
#define ACLNN_EMU_CURAND_KERNEL_H

#include "cuda_emu.h"
#include <math.h>
#include "curand.h"
#include <type_traits>

#define EXTRA_FLAG_NORMAL 0x00000001
#define EXTRA_FLAG_LOG_NORMAL 0x00000002

#define CURAND_2POW32 (4294967296.f)
#define CURAND_2POW32_DOUBLE (4294967296.)
#define CURAND_2POW32_INV (2.3283064e-10f)
#define CURAND_2POW32_INV_DOUBLE (2.3283064365386963e-10)
#define CURAND_2POW53_INV_DOUBLE (1.1102230246251565e-16)
#define CURAND_2POW32_INV_2PI (2.3283064e-10f * 6.2831855f)
#define CURAND_2PI (6.2831855f)
#define CURAND_2POW53_INV_2PI_DOUBLE (1.1102230246251565e-16 * 6.2831853071795860)
#define CURAND_PI_DOUBLE (3.1415926535897932)
#define CURAND_2PI_DOUBLE (6.2831853071795860)
#define CURAND_SQRT2 (-1.4142135f)
#define CURAND_SQRT2_DOUBLE (-1.4142135623730951)

#define MRG32K3A_MOD1 4294967087.
#define MRG32K3A_MOD2 4294944443.
#define MRG32K3A_A12 1403580.
#define MRG32K3A_A13N 810728.
#define MRG32K3A_A21 527612.
#define MRG32K3A_A23N 1370589.
#define MRG32K3A_NORM (2.3283065498378288e-10)
#define MRG32K3A_BITS_NORM 1.000000048662

#define PHILOX_W32_0 (0x9E3779B9)
#define PHILOX_W32_1 (0xBB67AE85)
#define PHILOX_M4x32_0 (0xD2511F53)
#define PHILOX_M4x32_1 (0xCD9E8D57)

#ifndef QUALIFIERS
#define QUALIFIERS static __forceinline__ __device__
#endif

// ---------------------------------------------------------------------------------------------- states
// Same members, order and therefore size/alignment as cuRAND's (arrays of states are allocated by the host).
struct curandStateXORWOW {
    unsigned int d, v[5];
    int boxmuller_flag;
    int boxmuller_flag_double;
    float boxmuller_extra;
    double boxmuller_extra_double;
};
typedef struct curandStateXORWOW curandStateXORWOW_t;
typedef struct curandStateXORWOW curandState_t;
typedef struct curandStateXORWOW curandState;

struct curandStatePhilox4_32_10 {
    uint4 ctr;
    uint4 output;
    uint2 key;
    unsigned int STATE;
    int boxmuller_flag;
    int boxmuller_flag_double;
    float boxmuller_extra;
    double boxmuller_extra_double;
};
typedef struct curandStatePhilox4_32_10 curandStatePhilox4_32_10_t;

struct curandStateMRG32k3a {
    unsigned int s1[3];
    unsigned int s2[3];
    int boxmuller_flag;
    int boxmuller_flag_double;
    float boxmuller_extra;
    double boxmuller_extra_double;
};
typedef struct curandStateMRG32k3a curandStateMRG32k3a_t;

namespace __emu_curand {

template <class T> inline constexpr bool unsupported_v = false;

// ------------------------------------------------------------------------------------------- XORWOW
// The five-word xorshift part is linear over GF(2): a jump of n steps is a 160x160 bit matrix. jump(i) is
// the matrix of 2^i steps (i = 0..130: offsets use 0..63, subsequences of 2^67 steps use 67..130).
// Row r (= bit r%32 of word r/32 of the state) holds the image of that basis vector in 5 words.
struct XorwowJumps {
    static constexpr int N = 131;
    unsigned int m[N][160 * 5];
    static void apply(const unsigned int* mat, unsigned int v[5]) {
        unsigned int r0 = 0, r1 = 0, r2 = 0, r3 = 0, r4 = 0;
        for (int w = 0; w < 5; ++w) {
            unsigned int bits = v[w];
            while (bits) {
                const int b = __builtin_ctz(bits);
                bits &= bits - 1;
                const unsigned int* row = mat + (w * 32 + b) * 5;
                r0 ^= row[0]; r1 ^= row[1]; r2 ^= row[2]; r3 ^= row[3]; r4 ^= row[4];
            }
        }
        v[0] = r0; v[1] = r1; v[2] = r2; v[3] = r3; v[4] = r4;
    }
    XorwowJumps() {
        for (int r = 0; r < 160; ++r) {  // one step of xorwow's xorshift on each basis vector
            unsigned int v[5] = {0, 0, 0, 0, 0};
            v[r / 32] = 1u << (r % 32);
            const unsigned int t = v[0] ^ (v[0] >> 2);
            const unsigned int n4 = (v[4] ^ (v[4] << 4)) ^ (t ^ (t << 1));
            unsigned int* row = m[0] + r * 5;
            row[0] = v[1]; row[1] = v[2]; row[2] = v[3]; row[3] = v[4]; row[4] = n4;
        }
        for (int i = 1; i < N; ++i)  // square: apply the previous jump twice to every basis vector
            for (int r = 0; r < 160; ++r) {
                unsigned int v[5];
                for (int k = 0; k < 5; ++k) v[k] = m[i - 1][r * 5 + k];
                apply(m[i - 1], v);
                for (int k = 0; k < 5; ++k) m[i][r * 5 + k] = v[k];
            }
    }
};
inline const XorwowJumps& xorwow_jumps() {
    static const XorwowJumps* j = new XorwowJumps();  // thread-safe one-time init (C++11 magic static)
    return *j;
}

// ------------------------------------------------------------------------------------------- MRG32k3a
// Each component is a 3x3 linear recurrence modulo m: jump(i) = A^(2^i) mod m, i = 0..190
// (offsets 0..63, subsequences of 2^76 steps 76..131, sequences of 2^127 steps 127..190).
struct MrgJumps {
    static constexpr int N = 191;
    static constexpr unsigned long long M1 = 4294967087ull, M2 = 4294944443ull;
    unsigned int a1[N][3][3], a2[N][3][3];
    static void mul(const unsigned int x[3][3], const unsigned int y[3][3], unsigned int o[3][3], unsigned long long m) {
        unsigned int t[3][3];
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                unsigned long long s = 0;
                for (int k = 0; k < 3; ++k) s = (s + (unsigned long long)x[i][k] * y[k][j] % m) % m;
                t[i][j] = (unsigned int)s;
            }
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) o[i][j] = t[i][j];
    }
    static void apply(const unsigned int a[3][3], unsigned int s[3], unsigned long long m) {
        unsigned int t[3];
        for (int i = 0; i < 3; ++i) {
            unsigned long long acc = 0;
            for (int k = 0; k < 3; ++k) acc = (acc + (unsigned long long)a[i][k] * s[k] % m) % m;
            t[i] = (unsigned int)acc;
        }
        s[0] = t[0]; s[1] = t[1]; s[2] = t[2];
    }
    MrgJumps() {
        const unsigned int b1[3][3] = {{0, 1, 0}, {0, 0, 1}, {(unsigned int)(M1 - 810728u), 1403580u, 0}};
        const unsigned int b2[3][3] = {{0, 1, 0}, {0, 0, 1}, {(unsigned int)(M2 - 1370589u), 0, 527612u}};
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) { a1[0][i][j] = b1[i][j]; a2[0][i][j] = b2[i][j]; }
        for (int i = 1; i < N; ++i) {
            mul(a1[i - 1], a1[i - 1], a1[i], M1);
            mul(a2[i - 1], a2[i - 1], a2[i], M2);
        }
    }
};
inline const MrgJumps& mrg_jumps() {
    static const MrgJumps* j = new MrgJumps();
    return *j;
}
inline void mrg_jump(curandStateMRG32k3a_t* s, unsigned long long n, int base) {
    const MrgJumps& J = mrg_jumps();
    for (int i = 0; n; ++i, n >>= 1)
        if (n & 1) {
            MrgJumps::apply(J.a1[base + i], s->s1, MrgJumps::M1);
            MrgJumps::apply(J.a2[base + i], s->s2, MrgJumps::M2);
        }
}

// ------------------------------------------------------------------------------------------- Philox
__forceinline__ uint4 philox_round(uint4 c, uint2 k) {
    const unsigned long long p0 = (unsigned long long)PHILOX_M4x32_0 * c.x;
    const unsigned long long p1 = (unsigned long long)PHILOX_M4x32_1 * c.z;
    uint4 r;
    r.x = (unsigned int)(p1 >> 32) ^ c.y ^ k.x;
    r.y = (unsigned int)p1;
    r.z = (unsigned int)(p0 >> 32) ^ c.w ^ k.y;
    r.w = (unsigned int)p0;
    return r;
}
__forceinline__ uint4 philox4x32_10(uint4 c, uint2 k) {
    for (int i = 0; i < 9; ++i) {
        c = philox_round(c, k);
        k.x += PHILOX_W32_0;
        k.y += PHILOX_W32_1;
    }
    return philox_round(c, k);
}
// Counter + n (cuRAND's carry handling, reproduced as it is: the carry out of the second word is found by
// comparing with the added high half).
__forceinline__ void philox_incr(curandStatePhilox4_32_10_t* s, unsigned long long n) {
    const unsigned int lo = (unsigned int)n;
    unsigned int hi = (unsigned int)(n >> 32);
    s->ctr.x += lo;
    if (s->ctr.x < lo) ++hi;
    s->ctr.y += hi;
    if (hi <= s->ctr.y) return;
    if (++s->ctr.z) return;
    ++s->ctr.w;
}
__forceinline__ void philox_incr1(curandStatePhilox4_32_10_t* s) {
    if (++s->ctr.x) return;
    if (++s->ctr.y) return;
    if (++s->ctr.z) return;
    ++s->ctr.w;
}
__forceinline__ void philox_incr_hi(curandStatePhilox4_32_10_t* s, unsigned long long n) {
    const unsigned int lo = (unsigned int)n;
    unsigned int hi = (unsigned int)(n >> 32);
    s->ctr.z += lo;
    if (s->ctr.z < lo) ++hi;
    s->ctr.w += hi;
}

// ------------------------------------------------------------------------------------------- conversions
__forceinline__ float u01(unsigned int x) { return x * CURAND_2POW32_INV + (CURAND_2POW32_INV / 2.0f); }
__forceinline__ double u01_double(unsigned int x) { return x * CURAND_2POW32_INV_DOUBLE + CURAND_2POW32_INV_DOUBLE; }
__forceinline__ double u01_double_hq(unsigned int x, unsigned int y) {
    const unsigned long long z = (unsigned long long)x ^ ((unsigned long long)y << (53 - 32));
    return z * CURAND_2POW53_INV_DOUBLE + (CURAND_2POW53_INV_DOUBLE / 2.0);
}
// Box-Muller as cuRAND's device code computes it (logf, __sincosf; sincospi for double).
__forceinline__ float2 box_muller(unsigned int x, unsigned int y) {
    float2 r;
    const float u = x * CURAND_2POW32_INV + (CURAND_2POW32_INV / 2);
    const float v = y * CURAND_2POW32_INV_2PI + (CURAND_2POW32_INV_2PI / 2);
    const float s = sqrtf(-2.0f * logf(u));
    __sincosf(v, &r.x, &r.y);
    r.x *= s;
    r.y *= s;
    return r;
}
__forceinline__ double2 box_muller_double(unsigned int x0, unsigned int x1, unsigned int y0, unsigned int y1) {
    double2 r;
    const unsigned long long zx = (unsigned long long)x0 ^ ((unsigned long long)x1 << (53 - 32));
    const double u = zx * CURAND_2POW53_INV_DOUBLE + (CURAND_2POW53_INV_DOUBLE / 2.0);
    const unsigned long long zy = (unsigned long long)y0 ^ ((unsigned long long)y1 << (53 - 32));
    const double v = zy * (CURAND_2POW53_INV_DOUBLE * 2.0) + CURAND_2POW53_INV_DOUBLE;
    const double s = sqrt(-2.0 * log(u));
    sincospi(v, &r.x, &r.y);
    r.x *= s;
    r.y *= s;
    return r;
}

}  // namespace __emu_curand

// =============================================================================================== XORWOW
QUALIFIERS unsigned int curand(curandStateXORWOW_t* state) {
    const unsigned int t = state->v[0] ^ (state->v[0] >> 2);
    state->v[0] = state->v[1];
    state->v[1] = state->v[2];
    state->v[2] = state->v[3];
    state->v[3] = state->v[4];
    state->v[4] = (state->v[4] ^ (state->v[4] << 4)) ^ (t ^ (t << 1));
    state->d += 362437;
    return state->v[4] + state->d;
}
static inline __device__ void skipahead(unsigned long long n, curandStateXORWOW_t* state) {
    if (n) {
        const __emu_curand::XorwowJumps& J = __emu_curand::xorwow_jumps();
        unsigned long long p = n;
        for (int i = 0; p; ++i, p >>= 1)
            if (p & 1) __emu_curand::XorwowJumps::apply(J.m[i], state->v);
    }
    state->d += 362437u * (unsigned int)n;
}
static inline __device__ void skipahead_sequence(unsigned long long n, curandStateXORWOW_t* state) {
    // a subsequence is 2^67 steps; d advances by a multiple of 2^32, i.e. not at all
    if (!n) return;
    const __emu_curand::XorwowJumps& J = __emu_curand::xorwow_jumps();
    for (int i = 0; n; ++i, n >>= 1)
        if (n & 1) __emu_curand::XorwowJumps::apply(J.m[67 + i], state->v);
}
static inline __device__ void curand_init(unsigned long long seed, unsigned long long subsequence,
                                          unsigned long long offset, curandStateXORWOW_t* state) {
    const unsigned int s0 = (unsigned int)seed ^ 0xaad26b49u;
    const unsigned int s1 = (unsigned int)(seed >> 32) ^ 0xf7dcefddu;
    const unsigned int t0 = 1099087573u * s0;
    const unsigned int t1 = 2591861531u * s1;
    state->d = 6615241u + t1 + t0;
    state->v[0] = 123456789u + t0;
    state->v[1] = 362436069u ^ t0;
    state->v[2] = 521288629u + t1;
    state->v[3] = 88675123u ^ t1;
    state->v[4] = 5783321u + t0;
    skipahead_sequence(subsequence, state);
    skipahead(offset, state);
    state->boxmuller_flag = 0;
    state->boxmuller_flag_double = 0;
    state->boxmuller_extra = 0.f;
    state->boxmuller_extra_double = 0.;
}

// =============================================================================================== Philox4_32_10
// The Philox4x32-10 bijection itself, under cuRAND's name
QUALIFIERS uint4 curand_Philox4x32_10(uint4 c, uint2 k) { return __emu_curand::philox4x32_10(c, k); }
QUALIFIERS unsigned int curand(curandStatePhilox4_32_10_t* state) {
    unsigned int ret;
    switch (state->STATE++) {
        default: ret = state->output.x; break;
        case 1: ret = state->output.y; break;
        case 2: ret = state->output.z; break;
        case 3: ret = state->output.w; break;
    }
    if (state->STATE == 4) {
        __emu_curand::philox_incr1(state);
        state->output = __emu_curand::philox4x32_10(state->ctr, state->key);
        state->STATE = 0;
    }
    return ret;
}
QUALIFIERS uint4 curand4(curandStatePhilox4_32_10_t* state) {
    const uint4 old = state->output;
    __emu_curand::philox_incr1(state);
    state->output = __emu_curand::philox4x32_10(state->ctr, state->key);
    const uint4 nw = state->output;
    uint4 r;
    switch (state->STATE) {
        case 1: r.x = old.y; r.y = old.z; r.z = old.w; r.w = nw.x; return r;
        case 2: r.x = old.z; r.y = old.w; r.z = nw.x; r.w = nw.y; return r;
        case 3: r.x = old.w; r.y = nw.x; r.z = nw.y; r.w = nw.z; return r;
        default: return old;
    }
}
QUALIFIERS void skipahead(unsigned long long n, curandStatePhilox4_32_10_t* state) {
    state->STATE += (unsigned int)(n & 3);
    n /= 4;
    if (state->STATE > 3) {
        n += 1;
        state->STATE -= 4;
    }
    __emu_curand::philox_incr(state, n);
    state->output = __emu_curand::philox4x32_10(state->ctr, state->key);
}
QUALIFIERS void skipahead_sequence(unsigned long long n, curandStatePhilox4_32_10_t* state) {
    __emu_curand::philox_incr_hi(state, n);
    state->output = __emu_curand::philox4x32_10(state->ctr, state->key);
}
QUALIFIERS void curand_init(unsigned long long seed, unsigned long long subsequence, unsigned long long offset,
                            curandStatePhilox4_32_10_t* state) {
    state->ctr = make_uint4(0, 0, 0, 0);
    state->key.x = (unsigned int)seed;
    state->key.y = (unsigned int)(seed >> 32);
    state->STATE = 0;
    state->boxmuller_flag = 0;
    state->boxmuller_flag_double = 0;
    state->boxmuller_extra = 0.f;
    state->boxmuller_extra_double = 0.;
    skipahead_sequence(subsequence, state);
    skipahead(offset, state);
}

// =============================================================================================== MRG32k3a
// One step of both components; returns p1 - p2 (mod m1) in (0, m1] as cuRAND's curand_MRG32k3a does.
QUALIFIERS double curand_MRG32k3a(curandStateMRG32k3a_t* state) {
    const long long m1 = 4294967087ll, m2 = 4294944443ll;
    long long p1 = (1403580ll * state->s1[1] - 810728ll * state->s1[0]) % m1;
    if (p1 < 0) p1 += m1;
    state->s1[0] = state->s1[1];
    state->s1[1] = state->s1[2];
    state->s1[2] = (unsigned int)p1;
    long long p2 = (527612ll * state->s2[2] - 1370589ll * state->s2[0]) % m2;
    if (p2 < 0) p2 += m2;
    state->s2[0] = state->s2[1];
    state->s2[1] = state->s2[2];
    state->s2[2] = (unsigned int)p2;
    long long r = p1 - p2;
    if (r <= 0) r += m1;
    return (double)r;
}
QUALIFIERS unsigned int curand(curandStateMRG32k3a_t* state) {
    const double d = curand_MRG32k3a(state) * (double)MRG32K3A_BITS_NORM;
    // r = m1 (p1 == p2) gives d just above 2^32 - 1: the GPU's cvt.rzi.u32.f64 saturates (written out:
    // the emulator traps an out-of-range conversion instead of computing x86's number)
    return d >= 4294967295.0 ? 4294967295u : (unsigned int)d;
}
static inline __device__ void skipahead(unsigned long long n, curandStateMRG32k3a_t* state) {
    __emu_curand::mrg_jump(state, n, 0);
}
static inline __device__ void skipahead_subsequence(unsigned long long n, curandStateMRG32k3a_t* state) {
    // cuRAND documents n < 2^51. Its table of subsequence jumps has room for 56 entries of which 51 are set (the
    // rest are zero matrices) and its loop does not mask n: a GPU turns the state into zeros for a bit 51..55 of n
    // (a constant stream follows), reproduced here; from 2^56 on it reads past the table, reported as an error.
    if (n >> 56)
        ::__emu::fail("curand_init/skipahead_subsequence on curandStateMRG32k3a_t: subsequence %llu >= 2^56 "
                      "(cuRAND allows < 2^51 and reads past its jump table from 2^56 on: not reproducible)", n);
    if (n >> 51) {
        for (int i = 0; i < 3; ++i) state->s1[i] = state->s2[i] = 0u;
        return;
    }
    __emu_curand::mrg_jump(state, n, 76);
}
static inline __device__ void skipahead_sequence(unsigned long long n, curandStateMRG32k3a_t* state) {
    __emu_curand::mrg_jump(state, n, 127);
}
static inline __device__ void curand_init(unsigned long long seed, unsigned long long subsequence,
                                          unsigned long long offset, curandStateMRG32k3a_t* state) {
    for (int i = 0; i < 3; ++i) state->s1[i] = state->s2[i] = 12345u;
    if (seed != 0ull) {
        const unsigned long long x1 = (unsigned int)seed ^ 0x55555555u;
        const unsigned long long x2 = (unsigned int)((seed >> 32) ^ 0xAAAAAAAAull);
        const unsigned long long m1 = 4294967087ull, m2 = 4294944443ull;
        state->s1[0] = (unsigned int)(x1 * 12345u % m1);
        state->s1[1] = (unsigned int)(x2 * 12345u % m1);
        state->s1[2] = (unsigned int)(x1 * 12345u % m1);
        state->s2[0] = (unsigned int)(x2 * 12345u % m2);
        state->s2[1] = (unsigned int)(x1 * 12345u % m2);
        state->s2[2] = (unsigned int)(x2 * 12345u % m2);
    }
    skipahead_subsequence(subsequence, state);
    skipahead(offset, state);
    state->boxmuller_flag = 0;
    state->boxmuller_flag_double = 0;
    state->boxmuller_extra = 0.f;
    state->boxmuller_extra_double = 0.;
}

// =============================================================================================== uniform
QUALIFIERS float curand_uniform(curandStateXORWOW_t* state) { return __emu_curand::u01(curand(state)); }
QUALIFIERS double curand_uniform_double(curandStateXORWOW_t* state) {
    const unsigned int x = curand(state);
    const unsigned int y = curand(state);
    return __emu_curand::u01_double_hq(x, y);
}
QUALIFIERS float curand_uniform(curandStatePhilox4_32_10_t* state) { return __emu_curand::u01(curand(state)); }
QUALIFIERS double curand_uniform_double(curandStatePhilox4_32_10_t* state) {
    return __emu_curand::u01_double(curand(state));
}
QUALIFIERS float4 curand_uniform4(curandStatePhilox4_32_10_t* state) {
    const uint4 x = curand4(state);
    float4 y;
    y.x = __emu_curand::u01(x.x);
    y.y = __emu_curand::u01(x.y);
    y.z = __emu_curand::u01(x.z);
    y.w = __emu_curand::u01(x.w);
    return y;
}
QUALIFIERS double2 curand_uniform2_double(curandStatePhilox4_32_10_t* state) {
    const uint4 x = curand4(state);
    double2 r;
    r.x = __emu_curand::u01_double_hq(x.x, x.y);
    r.y = __emu_curand::u01_double_hq(x.z, x.w);
    return r;
}
QUALIFIERS double4 curand_uniform4_double(curandStatePhilox4_32_10_t* state) {
    const uint4 x = curand4(state);
    const uint4 y = curand4(state);
    double4 r;
    r.x = __emu_curand::u01_double_hq(x.x, x.y);
    r.y = __emu_curand::u01_double_hq(x.z, x.w);
    r.z = __emu_curand::u01_double_hq(y.x, y.y);
    r.w = __emu_curand::u01_double_hq(y.z, y.w);
    return r;
}
QUALIFIERS float curand_uniform(curandStateMRG32k3a_t* state) {
    return (float)(curand_MRG32k3a(state) * MRG32K3A_NORM);
}
QUALIFIERS double curand_uniform_double(curandStateMRG32k3a_t* state) { return curand_MRG32k3a(state) * MRG32K3A_NORM; }

// =============================================================================================== normal
namespace __emu_curand {
template <class S>
__forceinline__ float2 box_muller_state(S* state) {
    const unsigned int x = curand(state);
    const unsigned int y = curand(state);
    return box_muller(x, y);
}
__forceinline__ float2 box_muller_state(curandStateMRG32k3a_t* state) {
    const float x = curand_uniform(state);
    const float y = curand_uniform(state) * CURAND_2PI;
    float2 r;
    const float s = sqrtf(-2.0f * logf(x));
    __sincosf(y, &r.x, &r.y);
    r.x *= s;
    r.y *= s;
    return r;
}
__forceinline__ double2 box_muller_double_state(curandStateXORWOW_t* state) {
    const unsigned int x0 = curand(state);
    const unsigned int x1 = curand(state);
    const unsigned int y0 = curand(state);
    const unsigned int y1 = curand(state);
    return box_muller_double(x0, x1, y0, y1);
}
__forceinline__ double2 box_muller_double_state(curandStatePhilox4_32_10_t* state) {
    const uint4 x = curand4(state);
    return box_muller_double(x.x, x.y, x.z, x.w);
}
__forceinline__ double2 box_muller_double_state(curandStateMRG32k3a_t* state) {
    const double x = curand_uniform_double(state);
    const double y = curand_uniform_double(state) * 2.0;
    double2 r;
    const double s = sqrt(-2.0 * log(x));
    sincospi(y, &r.x, &r.y);
    r.x *= s;
    r.y *= s;
    return r;
}
// curand_normal / curand_log_normal: one Box-Muller pair, the second value kept in the state with a flag
template <class S>
__forceinline__ float normal_cached(S* state) {
    if (state->boxmuller_flag != EXTRA_FLAG_NORMAL) {
        const float2 v = box_muller_state(state);
        state->boxmuller_extra = v.y;
        state->boxmuller_flag = EXTRA_FLAG_NORMAL;
        return v.x;
    }
    state->boxmuller_flag = 0;
    return state->boxmuller_extra;
}
template <class S>
__forceinline__ double normal_double_cached(S* state) {
    if (state->boxmuller_flag_double != EXTRA_FLAG_NORMAL) {
        const double2 v = box_muller_double_state(state);
        state->boxmuller_extra_double = v.y;
        state->boxmuller_flag_double = EXTRA_FLAG_NORMAL;
        return v.x;
    }
    state->boxmuller_flag_double = 0;
    return state->boxmuller_extra_double;
}
template <class S>
__forceinline__ float log_normal_cached(S* state, float mean, float stddev) {
    if (state->boxmuller_flag != EXTRA_FLAG_LOG_NORMAL) {
        const float2 v = box_muller_state(state);
        state->boxmuller_extra = expf(mean + (stddev * v.y));
        state->boxmuller_flag = EXTRA_FLAG_LOG_NORMAL;
        return expf(mean + (stddev * v.x));
    }
    state->boxmuller_flag = 0;
    return state->boxmuller_extra;
}
template <class S>
__forceinline__ double log_normal_double_cached(S* state, double mean, double stddev) {
    if (state->boxmuller_flag_double != EXTRA_FLAG_LOG_NORMAL) {
        const double2 v = box_muller_double_state(state);
        state->boxmuller_extra_double = exp(mean + (stddev * v.y));
        state->boxmuller_flag_double = EXTRA_FLAG_LOG_NORMAL;
        return exp(mean + (stddev * v.x));
    }
    state->boxmuller_flag_double = 0;
    return state->boxmuller_extra_double;
}
__forceinline__ float4 box_muller4(curandStatePhilox4_32_10_t* state) {
    const uint4 x = curand4(state);
    const float2 a = box_muller(x.x, x.y);
    const float2 b = box_muller(x.z, x.w);
    return make_float4(a.x, a.y, b.x, b.y);
}
__forceinline__ double4 box_muller4_double(curandStatePhilox4_32_10_t* state) {
    const uint4 x = curand4(state);
    const uint4 y = curand4(state);
    const double2 a = box_muller_double(x.x, x.y, x.z, x.w);
    const double2 b = box_muller_double(y.x, y.y, y.z, y.w);
    return make_double4(a.x, a.y, b.x, b.y);
}
}  // namespace __emu_curand

QUALIFIERS float curand_normal(curandStateXORWOW_t* state) { return __emu_curand::normal_cached(state); }
QUALIFIERS float curand_normal(curandStatePhilox4_32_10_t* state) { return __emu_curand::normal_cached(state); }
QUALIFIERS float curand_normal(curandStateMRG32k3a_t* state) { return __emu_curand::normal_cached(state); }
QUALIFIERS float2 curand_normal2(curandStateXORWOW_t* state) { return __emu_curand::box_muller_state(state); }
QUALIFIERS float2 curand_normal2(curandStatePhilox4_32_10_t* state) { return __emu_curand::box_muller_state(state); }
QUALIFIERS float2 curand_normal2(curandStateMRG32k3a_t* state) { return __emu_curand::box_muller_state(state); }
QUALIFIERS float4 curand_normal4(curandStatePhilox4_32_10_t* state) { return __emu_curand::box_muller4(state); }
QUALIFIERS double curand_normal_double(curandStateXORWOW_t* state) { return __emu_curand::normal_double_cached(state); }
QUALIFIERS double curand_normal_double(curandStatePhilox4_32_10_t* state) {
    return __emu_curand::normal_double_cached(state);
}
QUALIFIERS double curand_normal_double(curandStateMRG32k3a_t* state) { return __emu_curand::normal_double_cached(state); }
QUALIFIERS double2 curand_normal2_double(curandStateXORWOW_t* state) {
    return __emu_curand::box_muller_double_state(state);
}
QUALIFIERS double2 curand_normal2_double(curandStatePhilox4_32_10_t* state) {
    return __emu_curand::box_muller_double_state(state);
}
QUALIFIERS double2 curand_normal2_double(curandStateMRG32k3a_t* state) {
    return __emu_curand::box_muller_double_state(state);
}
QUALIFIERS double4 curand_normal4_double(curandStatePhilox4_32_10_t* state) {
    return __emu_curand::box_muller4_double(state);
}

// =============================================================================================== log-normal
QUALIFIERS float curand_log_normal(curandStateXORWOW_t* state, float mean, float stddev) {
    return __emu_curand::log_normal_cached(state, mean, stddev);
}
QUALIFIERS float curand_log_normal(curandStatePhilox4_32_10_t* state, float mean, float stddev) {
    return __emu_curand::log_normal_cached(state, mean, stddev);
}
QUALIFIERS float curand_log_normal(curandStateMRG32k3a_t* state, float mean, float stddev) {
    return __emu_curand::log_normal_cached(state, mean, stddev);
}
namespace __emu_curand {
template <class V>
__forceinline__ V exp2v(V v, float mean, float stddev) {
    v.x = expf(mean + (stddev * v.x));
    v.y = expf(mean + (stddev * v.y));
    return v;
}
template <class V>
__forceinline__ V exp2v_double(V v, double mean, double stddev) {
    v.x = exp(mean + (stddev * v.x));
    v.y = exp(mean + (stddev * v.y));
    return v;
}
}  // namespace __emu_curand
QUALIFIERS float2 curand_log_normal2(curandStateXORWOW_t* state, float mean, float stddev) {
    return __emu_curand::exp2v(__emu_curand::box_muller_state(state), mean, stddev);
}
QUALIFIERS float2 curand_log_normal2(curandStatePhilox4_32_10_t* state, float mean, float stddev) {
    return __emu_curand::exp2v(__emu_curand::box_muller_state(state), mean, stddev);
}
QUALIFIERS float2 curand_log_normal2(curandStateMRG32k3a_t* state, float mean, float stddev) {
    return __emu_curand::exp2v(__emu_curand::box_muller_state(state), mean, stddev);
}
QUALIFIERS float4 curand_log_normal4(curandStatePhilox4_32_10_t* state, float mean, float stddev) {
    float4 v = __emu_curand::box_muller4(state);
    v.x = expf(mean + (stddev * v.x));
    v.y = expf(mean + (stddev * v.y));
    v.z = expf(mean + (stddev * v.z));
    v.w = expf(mean + (stddev * v.w));
    return v;
}
QUALIFIERS double curand_log_normal_double(curandStateXORWOW_t* state, double mean, double stddev) {
    return __emu_curand::log_normal_double_cached(state, mean, stddev);
}
QUALIFIERS double curand_log_normal_double(curandStatePhilox4_32_10_t* state, double mean, double stddev) {
    return __emu_curand::log_normal_double_cached(state, mean, stddev);
}
QUALIFIERS double curand_log_normal_double(curandStateMRG32k3a_t* state, double mean, double stddev) {
    return __emu_curand::log_normal_double_cached(state, mean, stddev);
}
QUALIFIERS double2 curand_log_normal2_double(curandStateXORWOW_t* state, double mean, double stddev) {
    return __emu_curand::exp2v_double(__emu_curand::box_muller_double_state(state), mean, stddev);
}
QUALIFIERS double2 curand_log_normal2_double(curandStatePhilox4_32_10_t* state, double mean, double stddev) {
    return __emu_curand::exp2v_double(__emu_curand::box_muller_double_state(state), mean, stddev);
}
QUALIFIERS double2 curand_log_normal2_double(curandStateMRG32k3a_t* state, double mean, double stddev) {
    return __emu_curand::exp2v_double(__emu_curand::box_muller_double_state(state), mean, stddev);
}
QUALIFIERS double4 curand_log_normal4_double(curandStatePhilox4_32_10_t* state, double mean, double stddev) {
    double4 v = __emu_curand::box_muller4_double(state);
    v.x = exp(mean + (stddev * v.x));
    v.y = exp(mean + (stddev * v.y));
    v.z = exp(mean + (stddev * v.z));
    v.w = exp(mean + (stddev * v.w));
    return v;
}

// =============================================================================================== not supported
// Each use is a compile error (a static_assert with the message below) rather than a sequence a GPU would
// not give. The types exist so that code naming them only in declarations still compiles up to the use.
#define __EMU_CURAND_NO(what)                                                                                    \
    "the aclnn_py CUDA emulator does not support " what " of the cuRAND device API (supported: "             \
    "XORWOW/curandState_t, Philox4_32_10 and MRG32k3a with curand, curand_uniform*, curand_normal*, "           \
    "curand_log_normal*); generate these numbers on the host"

#define __EMU_CURAND_UNSUPPORTED_STATE(S, NAME)                                                                  \
    struct S {                                                                                                   \
        template <class __T = void>                                                                              \
        S() { static_assert(::__emu_curand::unsupported_v<__T>, __EMU_CURAND_NO(NAME)); }                        \
    };

__EMU_CURAND_UNSUPPORTED_STATE(curandStateSobol32, "the Sobol32 quasirandom generator (curandStateSobol32_t)")
__EMU_CURAND_UNSUPPORTED_STATE(curandStateScrambledSobol32,
                               "the scrambled Sobol32 quasirandom generator (curandStateScrambledSobol32_t)")
__EMU_CURAND_UNSUPPORTED_STATE(curandStateSobol64, "the Sobol64 quasirandom generator (curandStateSobol64_t)")
__EMU_CURAND_UNSUPPORTED_STATE(curandStateScrambledSobol64,
                               "the scrambled Sobol64 quasirandom generator (curandStateScrambledSobol64_t)")
__EMU_CURAND_UNSUPPORTED_STATE(curandStateMtgp32, "the MTGP32 generator (curandStateMtgp32_t)")
typedef struct curandStateSobol32 curandStateSobol32_t;
typedef struct curandStateScrambledSobol32 curandStateScrambledSobol32_t;
typedef struct curandStateSobol64 curandStateSobol64_t;
typedef struct curandStateScrambledSobol64 curandStateScrambledSobol64_t;
typedef struct curandStateMtgp32 curandStateMtgp32_t;
struct mtgp32_kernel_params;
typedef struct mtgp32_kernel_params mtgp32_kernel_params_t;

// Any call with an unsupported state: one catch-all template per API name, chosen only for those states
namespace __emu_curand {
template <class S> inline constexpr bool unsupported_state_v = false;
template <> inline constexpr bool unsupported_state_v<curandStateSobol32> = true;
template <> inline constexpr bool unsupported_state_v<curandStateScrambledSobol32> = true;
template <> inline constexpr bool unsupported_state_v<curandStateSobol64> = true;
template <> inline constexpr bool unsupported_state_v<curandStateScrambledSobol64> = true;
template <> inline constexpr bool unsupported_state_v<curandStateMtgp32> = true;
}  // namespace __emu_curand

#define __EMU_CURAND_STATE_MSG                                                                                   \
    __EMU_CURAND_NO("Sobol, scrambled Sobol and MTGP32 generators (curandStateSobol32/64_t, "                    \
                    "curandStateScrambledSobol32/64_t, curandStateMtgp32_t)")
template <class S, class... A>
    requires __emu_curand::unsupported_state_v<S>
unsigned int curand(S*, A...) { static_assert(__emu_curand::unsupported_v<S>, __EMU_CURAND_STATE_MSG); return 0; }
template <class S, class... A>
    requires __emu_curand::unsupported_state_v<S>
float curand_uniform(S*, A...) { static_assert(__emu_curand::unsupported_v<S>, __EMU_CURAND_STATE_MSG); return 0; }
template <class S, class... A>
    requires __emu_curand::unsupported_state_v<S>
double curand_uniform_double(S*, A...) {
    static_assert(__emu_curand::unsupported_v<S>, __EMU_CURAND_STATE_MSG);
    return 0;
}
template <class S, class... A>
    requires __emu_curand::unsupported_state_v<S>
float curand_normal(S*, A...) { static_assert(__emu_curand::unsupported_v<S>, __EMU_CURAND_STATE_MSG); return 0; }
template <class S, class... A>
    requires __emu_curand::unsupported_state_v<S>
double curand_normal_double(S*, A...) {
    static_assert(__emu_curand::unsupported_v<S>, __EMU_CURAND_STATE_MSG);
    return 0;
}
template <class S, class... A>
    requires __emu_curand::unsupported_state_v<S>
float curand_log_normal(S*, A...) { static_assert(__emu_curand::unsupported_v<S>, __EMU_CURAND_STATE_MSG); return 0; }
template <class S, class... A>
    requires __emu_curand::unsupported_state_v<S>
double curand_log_normal_double(S*, A...) {
    static_assert(__emu_curand::unsupported_v<S>, __EMU_CURAND_STATE_MSG);
    return 0;
}
template <class S>
    requires __emu_curand::unsupported_state_v<S>
void skipahead(unsigned long long, S*) { static_assert(__emu_curand::unsupported_v<S>, __EMU_CURAND_STATE_MSG); }
// Sobol initialisation: curand_init(direction_vectors, [scramble_c,] offset, state)
template <class V, class... A>
    requires(sizeof...(A) >= 1 && (__emu_curand::unsupported_state_v<std::remove_pointer_t<A>> || ...))
void curand_init(V, A...) { static_assert(__emu_curand::unsupported_v<V>, __EMU_CURAND_STATE_MSG); }
template <class S, class... A>
float curand_mtgp32_single(S*, A...) {
    static_assert(__emu_curand::unsupported_v<S>, __EMU_CURAND_NO("MTGP32 (curand_mtgp32_single)"));
    return 0;
}
template <class S, class... A>
float curand_mtgp32_single_specific(S*, A...) {
    static_assert(__emu_curand::unsupported_v<S>, __EMU_CURAND_NO("MTGP32 (curand_mtgp32_single_specific)"));
    return 0;
}
template <class S, class... A>
unsigned int curand_mtgp32_specific(S*, A...) {
    static_assert(__emu_curand::unsupported_v<S>, __EMU_CURAND_NO("MTGP32 (curand_mtgp32_specific)"));
    return 0;
}

// Poisson and discrete distributions: not reproduced bit for bit here, so not offered at all.
template <class S, class... A>
unsigned int curand_poisson(S*, A...) {
    static_assert(__emu_curand::unsupported_v<S>, __EMU_CURAND_NO("the Poisson distribution (curand_poisson)"));
    return 0;
}
template <class S, class... A>
uint4 curand_poisson4(S*, A...) {
    static_assert(__emu_curand::unsupported_v<S>, __EMU_CURAND_NO("the Poisson distribution (curand_poisson4)"));
    return uint4{};
}
template <class S, class... A>
unsigned int curand_discrete(S*, A...) {
    static_assert(__emu_curand::unsupported_v<S>, __EMU_CURAND_NO("discrete distributions (curand_discrete)"));
    return 0;
}
template <class S, class... A>
uint4 curand_discrete4(S*, A...) {
    static_assert(__emu_curand::unsupported_v<S>, __EMU_CURAND_NO("discrete distributions (curand_discrete4)"));
    return uint4{};
}

#endif  // ACLNN_EMU_CURAND_KERNEL_H

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
