// lrn.cu — the LRN family (aclnn-py extensions, cuDNN formulas; cudnn.md §4.4, §4.6):
// aclnnpyLrnCrossChannel / aclnnpyLrnCrossChannelBackward and
// aclnnpyDivisiveNormalization / aclnnpyDivisiveNormalizationBackward.
//
// Window (cuDNN): lookBehind = floor((n - 1) / 2), lookAhead = n - lookBehind - 1, so the window of
// position c is [c - lookBehind, c + lookAhead]; positions outside the tensor contribute 0 and the
// divisor stays n (cross-channel) or n^S (divisive, S spatial dims).
//
//   LRN       s_c = k + (alpha / n) * sum_{j in win(c)} x_j^2          y_c = x_c * s_c^-beta
//             dx_i = dy_i * s_i^-beta - (2 alpha beta / n) * x_i * sum_{c : i in win(c)} dy_c * y_c / s_c
//   divisive  u = x - means (means null = 0), box = the window in every spatial dim,
//             s_p = k + (alpha / n^S) * sum_{q in box(p)} u_q^2         y_p = u_p * s_p^-beta
//             g_i = dy_i * s_i^-beta - (2 alpha beta / n^S) * u_i * sum_{p : i in box(p)} dy_p * u_p * s_p^(-beta-1)
//             dx = g, dMeans = -g
//
// The backward ops run in two passes: pass 1 writes the per-position term t (dy*y/s, or
// dy*u*s^(-beta-1)) into an A-typed workspace buffer; pass 2 gathers t over the mirrored window of
// each element (no scatter, no atomics) and recomputes s_i. Every sum runs in a fixed order (window
// offsets ascending), so each op is bitwise reproducible run to run, for any grid.
//
// LRN sees its tensors in their memory order as [outer, C, inner] (C the channel dim); divisive
// normalization takes the five logical dims (N, C, D, H, W; D = 1 for 4-D) with their element
// strides in one dense buffer (NCHW, NHWC, ... all without a copy).
//
// Numerics: T = float, __half, __nv_bfloat16 compute in f32; T = double computes in f64 (A = Acc<T>).
// The double parameters (alpha, beta, k) are cast to A once.
#include "aclnn_common.cuh"

using namespace aclnn;

namespace {

template <typename T> struct Acc { typedef float type; };
template <> struct Acc<double> { typedef double type; };

template <typename T> __device__ __forceinline__ float ld(const T* p) { return load_f32(p); }
__device__ __forceinline__ double ld(const double* p) { return *p; }
template <typename T> __device__ __forceinline__ void st(T* p, float v) { store_f32(p, v); }
__device__ __forceinline__ void st(double* p, double v) { *p = v; }

__device__ __forceinline__ float xpow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double xpow(double a, double b) { return pow(a, b); }

__device__ __forceinline__ long long lmax(long long a, long long b) { return a > b ? a : b; }
__device__ __forceinline__ long long lmin(long long a, long long b) { return a < b ? a : b; }

// sum of x^2 over the channel window [c - behind, c + ahead] clipped to [0, C)
template <typename T, typename A>
__device__ __forceinline__ A lrn_window_sq(const T* xcol, long long c, long long C, long long inner, int behind,
                                           int ahead) {
  A s = A(0);
  const long long lo = lmax(c - behind, 0), hi = lmin(c + ahead, C - 1);
  for (long long j = lo; j <= hi; ++j) {
    const A v = ld(xcol + j * inner);
    s += v * v;
  }
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// LRN across channels
// ---------------------------------------------------------------------------------------------

template <typename T>
__global__ void lrn_fwd(const T* __restrict__ x, T* __restrict__ y, long long outer, long long C,
                        long long inner, int n, double alpha, double beta, double k) {
  typedef typename Acc<T>::type A;
  const int behind = (n - 1) / 2, ahead = n - 1 - behind;
  const A an = static_cast<A>(alpha / n), b = static_cast<A>(beta), kk = static_cast<A>(k);
  ACLNN_GRID_STRIDE_LOOP(i, outer * C * inner) {
    const long long in = i % inner, t = i / inner, c = t % C, o = t / C;
    const T* xcol = x + o * C * inner + in;
    const A s = kk + an * lrn_window_sq<T, A>(xcol, c, C, inner, behind, ahead);
    st(y + i, ld(x + i) * xpow(s, -b));
  }
}

// pass 1: t_c = dy_c * y_c / s_c
template <typename T>
__global__ void lrn_bwd_term(const T* __restrict__ x, const T* __restrict__ y, const T* dy,
                             typename Acc<T>::type* __restrict__ t, long long outer, long long C, long long inner,
                             int n, double alpha, double k) {
  typedef typename Acc<T>::type A;
  const int behind = (n - 1) / 2, ahead = n - 1 - behind;
  const A an = static_cast<A>(alpha / n), kk = static_cast<A>(k);
  ACLNN_GRID_STRIDE_LOOP(i, outer * C * inner) {
    const long long in = i % inner, q = i / inner, c = q % C, o = q / C;
    const A s = kk + an * lrn_window_sq<T, A>(x + o * C * inner + in, c, C, inner, behind, ahead);
    t[i] = ld(dy + i) * ld(y + i) / s;
  }
}

// pass 2: dx_i = dy_i * s_i^-beta - (2 alpha beta / n) x_i sum_{c in [i - ahead, i + behind]} t_c.
// dx may be dy (in place): element i reads dy_i only, after pass 1 has read every dy.
template <typename T>
__global__ void lrn_bwd_dx(const T* __restrict__ x, const T* dy, const typename Acc<T>::type* __restrict__ t,
                           T* dx, long long outer, long long C, long long inner, int n, double alpha, double beta,
                           double k) {
  typedef typename Acc<T>::type A;
  const int behind = (n - 1) / 2, ahead = n - 1 - behind;
  const A an = static_cast<A>(alpha / n), b = static_cast<A>(beta), kk = static_cast<A>(k);
  const A coef = static_cast<A>(2.0 * alpha * beta / n);
  ACLNN_GRID_STRIDE_LOOP(i, outer * C * inner) {
    const long long in = i % inner, q = i / inner, c = q % C, o = q / C;
    const long long col = o * C * inner + in;
    const A s = kk + an * lrn_window_sq<T, A>(x + col, c, C, inner, behind, ahead);
    A acc = A(0);
    const long long lo = lmax(c - ahead, 0), hi = lmin(c + behind, C - 1);
    for (long long j = lo; j <= hi; ++j) acc += t[col + j * inner];
    const A xi = ld(x + i);
    st(dx + i, ld(dy + i) * xpow(s, -b) - coef * xi * acc);
  }
}

// ---------------------------------------------------------------------------------------------
// divisive normalization
// ---------------------------------------------------------------------------------------------

// The five logical dims N, C, D, H, W (4-D tensors: D = 1) and their element strides.
struct Geo5 {
  long long dim[5];
  long long stride[5];
};

namespace {

__device__ __forceinline__ void unravel5(long long i, const Geo5& g, long long (&ix)[5]) {
  for (int d = 4; d >= 0; --d) {
    ix[d] = i % g.dim[d];
    i /= g.dim[d];
  }
}

__device__ __forceinline__ long long offset5(const Geo5& g, const long long (&ix)[5]) {
  long long o = 0;
  for (int d = 0; d < 5; ++d) o += ix[d] * g.stride[d];
  return o;
}

// u = x - means at offset o (means null: 0)
template <typename T>
__device__ __forceinline__ typename Acc<T>::type centred(const T* x, const T* m, long long o) {
  typedef typename Acc<T>::type A;
  return m ? ld(x + o) - ld(m + o) : ld(x + o);
}

// the spatial box of a position: per spatial dim d (2..4) the offsets [lo_d, hi_d] clipped to the
// dim; `mirror` gives the box of the positions whose box contains it ([p - ahead, p + behind]).
// Dims 2..4-S are padding (size 1): their offset range is [0, 0].
__device__ __forceinline__ void box5(const Geo5& g, const long long (&ix)[5], int S, int behind, int ahead,
                                     bool mirror, long long (&lo)[5], long long (&hi)[5]) {
  const int bk = mirror ? ahead : behind, fw = mirror ? behind : ahead;
  for (int d = 2; d < 5; ++d) {
    if (d < 5 - S) {
      lo[d] = hi[d] = ix[d];
    } else {
      lo[d] = lmax(ix[d] - bk, 0);
      hi[d] = lmin(ix[d] + fw, g.dim[d] - 1);
    }
  }
}

template <typename T>
__device__ __forceinline__ typename Acc<T>::type box_sq(const T* x, const T* m, const Geo5& g,
                                                        const long long (&ix)[5], int S, int behind, int ahead) {
  typedef typename Acc<T>::type A;
  long long lo[5], hi[5];
  box5(g, ix, S, behind, ahead, false, lo, hi);
  const long long base = ix[0] * g.stride[0] + ix[1] * g.stride[1];
  A s = A(0);
  for (long long a = lo[2]; a <= hi[2]; ++a)
    for (long long b = lo[3]; b <= hi[3]; ++b)
      for (long long c = lo[4]; c <= hi[4]; ++c) {
        const A u = centred(x, m, base + a * g.stride[2] + b * g.stride[3] + c * g.stride[4]);
        s += u * u;
      }
  return s;
}

}  // namespace

template <typename T>
__global__ void divnorm_fwd(const T* __restrict__ x, const T* __restrict__ m, T* __restrict__ y, Geo5 g, int S,
                            int n, double alpha, double beta, double k) {
  typedef typename Acc<T>::type A;
  const int behind = (n - 1) / 2, ahead = n - 1 - behind;
  const A an = static_cast<A>(alpha / pow(static_cast<double>(n), S)), b = static_cast<A>(beta),
          kk = static_cast<A>(k);
  const long long total = g.dim[0] * g.dim[1] * g.dim[2] * g.dim[3] * g.dim[4];
  ACLNN_GRID_STRIDE_LOOP(i, total) {
    long long ix[5];
    unravel5(i, g, ix);
    const long long o = offset5(g, ix);
    const A s = kk + an * box_sq(x, m, g, ix, S, behind, ahead);
    st(y + o, centred(x, m, o) * xpow(s, -b));
  }
}

// pass 1: t_p = dy_p * u_p * s_p^(-beta-1), stored at p's offset in the dense buffer
template <typename T>
__global__ void divnorm_bwd_term(const T* __restrict__ x, const T* __restrict__ m, const T* __restrict__ dy,
                                 typename Acc<T>::type* __restrict__ t, Geo5 g, int S, int n, double alpha,
                                 double beta, double k) {
  typedef typename Acc<T>::type A;
  const int behind = (n - 1) / 2, ahead = n - 1 - behind;
  const A an = static_cast<A>(alpha / pow(static_cast<double>(n), S)), b = static_cast<A>(beta),
          kk = static_cast<A>(k);
  const long long total = g.dim[0] * g.dim[1] * g.dim[2] * g.dim[3] * g.dim[4];
  ACLNN_GRID_STRIDE_LOOP(i, total) {
    long long ix[5];
    unravel5(i, g, ix);
    const long long o = offset5(g, ix);
    const A s = kk + an * box_sq(x, m, g, ix, S, behind, ahead);
    t[o] = ld(dy + o) * centred(x, m, o) * xpow(s, -b - A(1));
  }
}

// pass 2: g_i = dy_i s_i^-beta - (2 alpha beta / n^S) u_i sum_{p in mirrored box(i)} t_p; dx = g, dmeans = -g
template <typename T>
__global__ void divnorm_bwd_dx(const T* __restrict__ x, const T* __restrict__ m, const T* __restrict__ dy,
                               const typename Acc<T>::type* __restrict__ t, T* __restrict__ dx,
                               T* __restrict__ dmeans, Geo5 g, int S, int n, double alpha, double beta, double k) {
  typedef typename Acc<T>::type A;
  const int behind = (n - 1) / 2, ahead = n - 1 - behind;
  const double an_d = alpha / pow(static_cast<double>(n), S);
  const A an = static_cast<A>(an_d), b = static_cast<A>(beta), kk = static_cast<A>(k),
          coef = static_cast<A>(2.0 * an_d * beta);
  const long long total = g.dim[0] * g.dim[1] * g.dim[2] * g.dim[3] * g.dim[4];
  ACLNN_GRID_STRIDE_LOOP(i, total) {
    long long ix[5];
    unravel5(i, g, ix);
    const long long o = offset5(g, ix);
    const A s = kk + an * box_sq(x, m, g, ix, S, behind, ahead);
    long long lo[5], hi[5];
    box5(g, ix, S, behind, ahead, true, lo, hi);
    const long long base = ix[0] * g.stride[0] + ix[1] * g.stride[1];
    A acc = A(0);
    for (long long a = lo[2]; a <= hi[2]; ++a)
      for (long long bb = lo[3]; bb <= hi[3]; ++bb)
        for (long long c = lo[4]; c <= hi[4]; ++c) acc += t[base + a * g.stride[2] + bb * g.stride[3] + c * g.stride[4]];
    const A gi = ld(dy + o) * xpow(s, -b) - coef * centred(x, m, o) * acc;
    if (dx) st(dx + o, gi);
    if (dmeans) st(dmeans + o, -gi);
  }
}
