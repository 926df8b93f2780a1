#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// cuComplex.h for the aclnn_py CPU emulator: CUDA's single/double complex helpers (float2/double2),
// with the same algorithms as CUDA's header (scaled division and modulus), so results match.
#ifndef ACLNN_PY_EMU_CUCOMPLEX_H
#define ACLNN_PY_EMU_CUCOMPLEX_H
#include "cuda_emu.h"

typedef float2 cuFloatComplex;
typedef double2 cuDoubleComplex;
typedef cuFloatComplex cuComplex;

static inline float cuCrealf(cuFloatComplex x) { return x.x; }
static inline float cuCimagf(cuFloatComplex x) { return x.y; }
static inline cuFloatComplex make_cuFloatComplex(float r, float i) { cuFloatComplex res; res.x = r; res.y = i; return res; }
static inline cuFloatComplex cuConjf(cuFloatComplex x) { return make_cuFloatComplex(cuCrealf(x), -cuCimagf(x)); }
static inline cuFloatComplex cuCaddf(cuFloatComplex x, cuFloatComplex y) {
    return make_cuFloatComplex(cuCrealf(x) + cuCrealf(y), cuCimagf(x) + cuCimagf(y));
}
static inline cuFloatComplex cuCsubf(cuFloatComplex x, cuFloatComplex y) {
    return make_cuFloatComplex(cuCrealf(x) - cuCrealf(y), cuCimagf(x) - cuCimagf(y));
}
static inline cuFloatComplex cuCmulf(cuFloatComplex x, cuFloatComplex y) {
    return make_cuFloatComplex((cuCrealf(x) * cuCrealf(y)) - (cuCimagf(x) * cuCimagf(y)),
                               (cuCrealf(x) * cuCimagf(y)) + (cuCimagf(x) * cuCrealf(y)));
}
// robust division: scale by 1 / (|re(y)| + |im(y)|) first
static inline cuFloatComplex cuCdivf(cuFloatComplex x, cuFloatComplex y) {
    float s = fabsf(cuCrealf(y)) + fabsf(cuCimagf(y));
    float oos = 1.0f / s;
    float ars = cuCrealf(x) * oos, ais = cuCimagf(x) * oos;
    float brs = cuCrealf(y) * oos, bis = cuCimagf(y) * oos;
    s = (brs * brs) + (bis * bis);
    oos = 1.0f / s;
    return make_cuFloatComplex(((ars * brs) + (ais * bis)) * oos, ((ais * brs) - (ars * bis)) * oos);
}
// modulus without undue overflow/underflow
static inline float cuCabsf(cuFloatComplex x) {
    float a = fabsf(cuCrealf(x)), b = fabsf(cuCimagf(x));
    float v, w, t;
    if (a > b) { v = a; w = b; } else { v = b; w = a; }
    t = w / v;
    t = 1.0f + t * t;
    t = v * sqrtf(t);
    if ((v == 0.0f) || (v > 3.402823466e38f) || (w > 3.402823466e38f)) t = v + w;
    return t;
}

static inline double cuCreal(cuDoubleComplex x) { return x.x; }
static inline double cuCimag(cuDoubleComplex x) { return x.y; }
static inline cuDoubleComplex make_cuDoubleComplex(double r, double i) { cuDoubleComplex res; res.x = r; res.y = i; return res; }
static inline cuDoubleComplex cuConj(cuDoubleComplex x) { return make_cuDoubleComplex(cuCreal(x), -cuCimag(x)); }
static inline cuDoubleComplex cuCadd(cuDoubleComplex x, cuDoubleComplex y) {
    return make_cuDoubleComplex(cuCreal(x) + cuCreal(y), cuCimag(x) + cuCimag(y));
}
static inline cuDoubleComplex cuCsub(cuDoubleComplex x, cuDoubleComplex y) {
    return make_cuDoubleComplex(cuCreal(x) - cuCreal(y), cuCimag(x) - cuCimag(y));
}
static inline cuDoubleComplex cuCmul(cuDoubleComplex x, cuDoubleComplex y) {
    return make_cuDoubleComplex((cuCreal(x) * cuCreal(y)) - (cuCimag(x) * cuCimag(y)),
                                (cuCreal(x) * cuCimag(y)) + (cuCimag(x) * cuCreal(y)));
}
static inline cuDoubleComplex cuCdiv(cuDoubleComplex x, cuDoubleComplex y) {
    double s = fabs(cuCreal(y)) + fabs(cuCimag(y));
    double oos = 1.0 / s;
    double ars = cuCreal(x) * oos, ais = cuCimag(x) * oos;
    double brs = cuCreal(y) * oos, bis = cuCimag(y) * oos;
    s = (brs * brs) + (bis * bis);
    oos = 1.0 / s;
    return make_cuDoubleComplex(((ars * brs) + (ais * bis)) * oos, ((ais * brs) - (ars * bis)) * oos);
}
static inline double cuCabs(cuDoubleComplex x) {
    double a = fabs(cuCreal(x)), b = fabs(cuCimag(x));
    double v, w, t;
    if (a > b) { v = a; w = b; } else { v = b; w = a; }
    t = w / v;
    t = 1.0 + t * t;
    t = v * sqrt(t);
    if ((v == 0.0) || (v > 1.79769313486231570e+308) || (w > 1.79769313486231570e+308)) t = v + w;
    return t;
}

static inline cuComplex make_cuComplex(float x, float y) { return make_cuFloatComplex(x, y); }
static inline cuDoubleComplex cuComplexFloatToDouble(cuFloatComplex c) {
    return make_cuDoubleComplex(static_cast<double>(cuCrealf(c)), static_cast<double>(cuCimagf(c)));
}
static inline cuFloatComplex cuComplexDoubleToFloat(cuDoubleComplex c) {
    return make_cuFloatComplex(static_cast<float>(cuCreal(c)), static_cast<float>(cuCimag(c)));
}
static inline cuComplex cuCfmaf(cuComplex x, cuComplex y, cuComplex d) {
    float real_res = (cuCrealf(x) * cuCrealf(y)) + cuCrealf(d);
    float imag_res = (cuCrealf(x) * cuCimagf(y)) + cuCimagf(d);
    real_res = -(cuCimagf(x) * cuCimagf(y)) + real_res;
    imag_res = (cuCimagf(x) * cuCrealf(y)) + imag_res;
    return make_cuComplex(real_res, imag_res);
}
static inline cuDoubleComplex cuCfma(cuDoubleComplex x, cuDoubleComplex y, cuDoubleComplex d) {
    double real_res = (cuCreal(x) * cuCreal(y)) + cuCreal(d);
    double imag_res = (cuCreal(x) * cuCimag(y)) + cuCimag(d);
    real_res = -(cuCimag(x) * cuCimag(y)) + real_res;
    imag_res = (cuCimag(x) * cuCreal(y)) + imag_res;
    return make_cuDoubleComplex(real_res, imag_res);
}
#endif

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
