// activation.cu — the activation family: one functor per activation (forward and backward), run by
// the shared elementwise kernels of aclnn/elementwise.cuh (ew_unary / ew_binary / ew_binary_bcast).
// A new activation is a functor here and a line in aclnn_py/ops/activation.py, never a new kernel.
//
// Functors compute in C = float (f32/f16/bf16 storage) or double (double storage); integer storage
// (Relu, ThresholdBackward) computes in the integer type itself. Scalar attributes arrive as double
// in OpParams {a, b, c, d} and are rounded to C once.
//
// Accuracy at the extremes (all in C, no cancellation, no spurious overflow):
//   sigmoid(x)   1/(1+e^-x) for x >= 0, e^x/(1+e^x) below (no exp overflow, tiny results kept)
//   softplus     max(z,0) + log1p(e^-|z|) with z = βx (exact tails; threshold → x)
//   GELU (erf)   ½·x·erfc(−x/√2) (the negative tail has no 1 + erf cancellation)
//   GELU (tanh)  x·sigmoid(2u), u = √(2/π)(x + 0.044715x³) (= ½x(1 + tanh u) without cancellation)
//   GELU' tanh   1 − tanh² u = 4s(1 − s), s = sigmoid(2u)
//   ELU / SELU   expm1 (accurate near 0)
//   SiLU / Mish  through the stable sigmoid / softplus
// NaN propagates where PyTorch propagates it (comparisons are written so NaN takes the value path).
#include "aclnn/elementwise.cuh"

using aclnn::OpParams;

namespace {

__device__ __forceinline__ float m_exp(float x) { return expf(x); }
__device__ __forceinline__ double m_exp(double x) { return exp(x); }
__device__ __forceinline__ float m_expm1(float x) { return expm1f(x); }
__device__ __forceinline__ double m_expm1(double x) { return expm1(x); }
__device__ __forceinline__ float m_log1p(float x) { return log1pf(x); }
__device__ __forceinline__ double m_log1p(double x) { return log1p(x); }
__device__ __forceinline__ float m_tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double m_tanh(double x) { return tanh(x); }
__device__ __forceinline__ float m_erfc(float x) { return erfcf(x); }
__device__ __forceinline__ double m_erfc(double x) { return erfc(x); }
__device__ __forceinline__ float m_abs(float x) { return fabsf(x); }
__device__ __forceinline__ double m_abs(double x) { return fabs(x); }

template <typename C> __device__ __forceinline__ C sigm(C x) {
  if (x >= C(0)) return C(1) / (C(1) + m_exp(-x));
  const C e = m_exp(x);
  return e / (C(1) + e);
}

// log(1 + e^z) without overflow or loss in either tail
template <typename C> __device__ __forceinline__ C softplus0(C z) {
  return (z > C(0) ? z : C(0)) + m_log1p(m_exp(-m_abs(z)));
}

constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kGeluTanhB = 0.044715;
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

}  // namespace

#define ACLNN_NO_PARAMS(Name) __device__ explicit Name(const OpParams&) {}

// ---------------------------------------------------------------------------------------------
// forward: y = f(x)
// ---------------------------------------------------------------------------------------------
struct Relu {
  ACLNN_NO_PARAMS(Relu)
  template <typename C> __device__ C operator()(C x) const { return x < C(0) ? C(0) : x; }
};
struct Sigmoid {
  ACLNN_NO_PARAMS(Sigmoid)
  template <typename C> __device__ C operator()(C x) const { return sigm(x); }
};
struct Tanh {
  ACLNN_NO_PARAMS(Tanh)
  template <typename C> __device__ C operator()(C x) const { return m_tanh(x); }
};
struct Hardtanh {                       // a = min, b = max (clamp: min first, then max, as PyTorch)
  double lo, hi;
  __device__ explicit Hardtanh(const OpParams& p) : lo(p.a), hi(p.b) {}
  template <typename C> __device__ C operator()(C x) const {
    const C v = x < C(lo) ? C(lo) : x;
    return v > C(hi) ? C(hi) : v;
  }
};
struct Elu {                            // a = alpha, b = scale, c = inputScale
  double alpha, scale, iscale;
  __device__ explicit Elu(const OpParams& p) : alpha(p.a), scale(p.b), iscale(p.c) {}
  template <typename C> __device__ C operator()(C x) const {
    return x > C(0) ? C(scale) * x : C(scale) * C(alpha) * m_expm1(x * C(iscale));
  }
};
struct Selu {
  ACLNN_NO_PARAMS(Selu)
  template <typename C> __device__ C operator()(C x) const {
    return x > C(0) ? C(kSeluScale) * x : C(kSeluScale) * C(kSeluAlpha) * m_expm1(x);
  }
};
struct Silu {
  ACLNN_NO_PARAMS(Silu)
  template <typename C> __device__ C operator()(C x) const { return x * sigm(x); }
};
struct GeluErf {
  ACLNN_NO_PARAMS(GeluErf)
  template <typename C> __device__ C operator()(C x) const { return C(0.5) * x * m_erfc(-x * C(kSqrt1_2)); }
};
struct GeluTanh {
  ACLNN_NO_PARAMS(GeluTanh)
  template <typename C> __device__ C operator()(C x) const {
    const C u = C(kSqrt2OverPi) * (x + C(kGeluTanhB) * x * x * x);
    return x * sigm(C(2) * u);
  }
};
struct LeakyRelu {                      // a = negativeSlope
  double slope;
  __device__ explicit LeakyRelu(const OpParams& p) : slope(p.a) {}
  template <typename C> __device__ C operator()(C x) const { return x > C(0) ? x : x * C(slope); }
};
struct Softplus {                       // a = beta, b = threshold
  double beta, thr;
  __device__ explicit Softplus(const OpParams& p) : beta(p.a), thr(p.b) {}
  template <typename C> __device__ C operator()(C x) const {
    const C z = x * C(beta);
    return z > C(thr) ? x : softplus0(z) / C(beta);
  }
};
struct Hardswish {
  ACLNN_NO_PARAMS(Hardswish)
  template <typename C> __device__ C operator()(C x) const {
    C r = x + C(3);
    r = r < C(0) ? C(0) : r;
    r = r > C(6) ? C(6) : r;
    return x * r / C(6);
  }
};
struct Hardsigmoid {
  ACLNN_NO_PARAMS(Hardsigmoid)
  template <typename C> __device__ C operator()(C x) const {
    C r = x + C(3);
    r = r < C(0) ? C(0) : r;
    r = r > C(6) ? C(6) : r;
    return r / C(6);
  }
};
struct Swish {                          // a = beta (cuDNN's CUDNN_ACTIVATION_SWISH): x·σ(βx)
  double beta;
  __device__ explicit Swish(const OpParams& p) : beta(p.a) {}
  template <typename C> __device__ C operator()(C x) const { return x * sigm(C(beta) * x); }
};
struct Mish {
  ACLNN_NO_PARAMS(Mish)
  template <typename C> __device__ C operator()(C x) const { return x * m_tanh(softplus0(x)); }
};

// ---------------------------------------------------------------------------------------------
// backward: dx = f'(g, saved) — saved is the forward's input or output as the op says
// ---------------------------------------------------------------------------------------------
struct ThresholdBwd {                   // a = threshold; saved = self
  double thr;
  __device__ explicit ThresholdBwd(const OpParams& p) : thr(p.a) {}
  template <typename C> __device__ C operator()(C g, C x) const {
    return static_cast<double>(x) <= thr ? C(0) : g;
  }
};
struct SigmoidBwd {                     // saved = output
  ACLNN_NO_PARAMS(SigmoidBwd)
  template <typename C> __device__ C operator()(C g, C y) const { return g * (C(1) - y) * y; }
};
struct TanhBwd {                        // saved = output
  ACLNN_NO_PARAMS(TanhBwd)
  template <typename C> __device__ C operator()(C g, C y) const { return g * (C(1) - y * y); }
};
struct HardtanhBwd {                    // a = min, b = max; saved = self
  double lo, hi;
  __device__ explicit HardtanhBwd(const OpParams& p) : lo(p.a), hi(p.b) {}
  template <typename C> __device__ C operator()(C g, C x) const {
    return (x <= C(lo) || x >= C(hi)) ? C(0) : g;
  }
};
template <bool IS_RESULT>
struct EluBwd {                         // a = alpha, b = scale, c = inputScale; saved = self or result
  double alpha, scale, iscale;
  __device__ explicit EluBwd(const OpParams& p) : alpha(p.a), scale(p.b), iscale(p.c) {}
  template <typename C> __device__ C operator()(C g, C x) const {
    if (!(x <= C(0))) return g * C(scale);
    if (IS_RESULT) return g * C(iscale) * (x + C(alpha) * C(scale));
    return g * C(iscale) * C(alpha) * C(scale) * m_exp(x * C(iscale));
  }
};
struct SeluBwd {                        // saved = result
  ACLNN_NO_PARAMS(SeluBwd)
  template <typename C> __device__ C operator()(C g, C y) const {
    return y <= C(0) ? g * (y + C(kSeluAlpha) * C(kSeluScale)) : g * C(kSeluScale);
  }
};
struct SiluBwd {
  ACLNN_NO_PARAMS(SiluBwd)
  template <typename C> __device__ C operator()(C g, C x) const {
    const C s = sigm(x);
    return g * s * (C(1) + x * (C(1) - s));
  }
};
struct GeluErfBwd {
  ACLNN_NO_PARAMS(GeluErfBwd)
  template <typename C> __device__ C operator()(C g, C x) const {
    const C cdf = C(0.5) * m_erfc(-x * C(kSqrt1_2));
    const C pdf = m_exp(C(-0.5) * x * x) * C(kInvSqrt2Pi);
    return g * (cdf + x * pdf);
  }
};
struct GeluTanhBwd {
  ACLNN_NO_PARAMS(GeluTanhBwd)
  template <typename C> __device__ C operator()(C g, C x) const {
    const C x2 = x * x;
    const C u = C(kSqrt2OverPi) * (x + C(kGeluTanhB) * x2 * x);
    const C s = sigm(C(2) * u);                              // ½(1 + tanh u)
    const C ds = s * (C(1) - s);                             // ¼(1 − tanh² u)
    const C right = ds == C(0) ? C(0) : C(2) * x * ds * C(kSqrt2OverPi) * (C(1) + C(3 * kGeluTanhB) * x2);
    return g * (s + right);
  }
};
struct LeakyReluBwd {                   // a = negativeSlope; saved = self or result (same sign)
  double slope;
  __device__ explicit LeakyReluBwd(const OpParams& p) : slope(p.a) {}
  template <typename C> __device__ C operator()(C g, C x) const { return x > C(0) ? g : g * C(slope); }
};
struct SoftplusBwd {                    // a = beta, b = threshold; saved = self
  double beta, thr;
  __device__ explicit SoftplusBwd(const OpParams& p) : beta(p.a), thr(p.b) {}
  template <typename C> __device__ C operator()(C g, C x) const {
    const C z = x * C(beta);
    return z > C(thr) ? g : g * sigm(z);
  }
};
struct HardswishBwd {
  ACLNN_NO_PARAMS(HardswishBwd)
  template <typename C> __device__ C operator()(C g, C x) const {
    if (x <= C(-3)) return C(0);                               // PyTorch's boundaries
    return x < C(3) ? g * (x / C(3) + C(0.5)) : g;
  }
};
struct HardsigmoidBwd {
  ACLNN_NO_PARAMS(HardsigmoidBwd)
  template <typename C> __device__ C operator()(C g, C x) const {
    return (x > C(-3) && x < C(3)) ? g / C(6) : C(0);
  }
};
struct SwishBwd {                       // a = beta; saved = x: σ(βx) + βx·σ(βx)(1 − σ(βx))
  double beta;
  __device__ explicit SwishBwd(const OpParams& p) : beta(p.a) {}
  template <typename C> __device__ C operator()(C g, C x) const {
    const C bx = C(beta) * x, s = sigm(bx);
    return g * (s + bx * s * (C(1) - s));
  }
};
struct MishBwd {
  ACLNN_NO_PARAMS(MishBwd)
  template <typename C> __device__ C operator()(C g, C x) const {
    const C t = m_tanh(softplus0(x));
    return g * (t + x * sigm(x) * (C(1) - t * t));
  }
};
