// pooling.cu — the pooling family: max pooling with indices, average pooling and adaptive average
// pooling, 2-D and 3-D, forward and backward (aclnnMaxPool2dWithIndices, aclnnMaxPool3dWithArgmax,
// aclnnAvgPool2d/3d, aclnnAdaptiveAvgPool2d and their backward ops).
//
// One geometry for every op: a tensor is seen as [N, C, D, H, W] (2-D pooling: D = 1, kd = 1) at
// arbitrary element strides per axis (PoolGeom::xs for the input-sized tensor, ys for the
// output-sized one, is for indices). The ops module passes the strides of each tensor's own memory
// order, so contiguous (NCHW), channels-last (NHWC, or an NCHW view with channels-last strides)
// and any other dense layout are computed in place. Threads walk the tensor they write in its
// memory order (`cl`: channels innermost, else W innermost), so neighbouring threads write
// neighbouring addresses.
//
//   forward:  one thread per output element: the window in (d, h, w) order, arithmetic in the
//             compute type A = acc_t<T>: float for float / __half / __nv_bfloat16 (f16/bf16 widened
//             on load, rounded once on store), double for double (every step f64).
//   backward: one thread per INPUT element, gathering over the output windows that can contain it
//             in a fixed order (od, oh, ow ascending — the order PyTorch's scatter adds them in):
//             no atomics, every result bitwise reproducible run to run. Max backward adds
//             grad_output[o] where indices[o] is this element's flat index; an index that points
//             outside its own window (or outside the plane) is never followed, so garbage indices
//             cannot write out of bounds — they contribute nothing.
//
// Semantics follow PyTorch's CPU kernels: max keeps the first maximum in window order and lets a
// NaN win (the last NaN); indices are flat over the input plane (d·H·W + h·W + w); average windows
// are clipped at H + pad before the count_include_pad divisor is taken and at H after; a window
// with no element gives 0; divisor_override (non-zero) replaces the divisor. The max comparisons
// (v > m || v != v) and the -inf start are the same in A = double.
//
// T in {float, __half, __nv_bfloat16, double}; I (indices) in {int, long long}.
#include "aclnn_common.cuh"

using namespace aclnn;

struct PoolGeom {
  long long N, C;                    // batch and channel extents (unbatched input: N = 1)
  long long ID, IH, IW;              // input spatial extents
  long long OD, OH, OW;              // output spatial extents
  long long kd, kh, kw;              // window
  long long sd, sh, sw;              // stride
  long long pd, ph, pw;              // padding
  long long dd, dh, dw;              // dilation (max pooling)
  long long xs[5];                   // input-sized tensor strides: n, c, d, h, w
  long long ys[5];                   // output-sized tensor strides
  long long is[5];                   // indices strides
  long long cl;                      // 1: the walked tensor has channels innermost
  long long count_include_pad;       // average pooling
  long long divisor;                 // average pooling: 0 = none, else divisor_override
};

namespace {

// Compute type: f32 for float / __half / __nv_bfloat16 (exactly load_f32 / store_f32), f64 for double.
template <typename T> struct Acc { using type = float; };
template <> struct Acc<double> { using type = double; };
template <typename T> using acc_t = typename Acc<T>::type;

template <typename T>
__device__ __forceinline__ acc_t<T> ld(const T* p) {
  if constexpr (sizeof(T) == 8) return *p;
  else return load_f32(p);
}
template <typename T>
__device__ __forceinline__ void st(T* p, acc_t<T> v) {
  if constexpr (sizeof(T) == 8) *p = v;
  else store_f32(p, v);
}
template <typename A> __device__ __forceinline__ A neg_inf();
template <> __device__ __forceinline__ float neg_inf<float>() { return neg_inf_f32(); }
template <> __device__ __forceinline__ double neg_inf<double>() {
  return __longlong_as_double(static_cast<long long>(0xfff0000000000000ull));
}

// Unravel linear element e of an [N, C, D, H, W] walk: channels innermost (cl) or W innermost.
struct Pos {
  long long n, c, d, h, w;
};

__device__ __forceinline__ Pos unravel(long long e, long long N, long long C, long long D, long long H, long long W,
                                       bool cl) {
  Pos p;
  if (cl) {
    p.c = e % C; e /= C;
    p.w = e % W; e /= W;
    p.h = e % H; e /= H;
    p.d = e % D; e /= D;
  } else {
    p.w = e % W; e /= W;
    p.h = e % H; e /= H;
    p.d = e % D; e /= D;
    p.c = e % C; e /= C;
  }
  p.n = e;
  (void)N;
  return p;
}

__device__ __forceinline__ long long at(const long long* s, const Pos& p) {
  return p.n * s[0] + p.c * s[1] + p.d * s[2] + p.h * s[3] + p.w * s[4];
}

__device__ __forceinline__ long long at_out(const long long* s, long long n, long long c, long long d, long long h,
                                            long long w) {
  return n * s[0] + c * s[1] + d * s[2] + h * s[3] + w * s[4];
}

__device__ __forceinline__ long long min_ll(long long a, long long b) { return a < b ? a : b; }
__device__ __forceinline__ long long max_ll(long long a, long long b) { return a > b ? a : b; }

// The first window position start + j*dil (j >= 0) that is >= 0.
__device__ __forceinline__ long long first_inside(long long start, long long dil) {
  return start >= 0 ? start : start + ((-start - 1) / dil + 1) * dil;
}

// Outputs o in [0, O) whose window [o*s - p, o*s - p + span) contains input position i:
// lo = ceil((i + p - span + 1) / s), hi = floor((i + p) / s), clipped.
__device__ __forceinline__ void window_range(long long i, long long s, long long p, long long span, long long O,
                                             long long& lo, long long& hi) {
  const long long a = i + p - span + 1;
  lo = a <= 0 ? 0 : (a - 1) / s + 1;      // ceil(a / s) without overflow for any stride
  hi = min_ll((i + p) / s, O - 1);
}

// The divisor of average window (od, oh, ow), PyTorch's rule, in the compute type A.
template <typename A>
__device__ __forceinline__ A avg_divisor(const PoolGeom& g, long long d0, long long h0, long long w0) {
  if (g.divisor != 0) return static_cast<A>(g.divisor);
  long long d1 = min_ll(d0 + g.kd, g.ID + g.pd), h1 = min_ll(h0 + g.kh, g.IH + g.ph), w1 = min_ll(w0 + g.kw, g.IW + g.pw);
  // products in A: exact for any real window, and no int64 overflow for absurd attributes
  if (g.count_include_pad)
    return static_cast<A>(d1 - d0) * static_cast<A>(h1 - h0) * static_cast<A>(w1 - w0);
  d0 = max_ll(d0, 0); h0 = max_ll(h0, 0); w0 = max_ll(w0, 0);
  d1 = min_ll(d1, g.ID); h1 = min_ll(h1, g.IH); w1 = min_ll(w1, g.IW);
  return static_cast<A>(d1 - d0) * static_cast<A>(h1 - h0) * static_cast<A>(w1 - w0);
}

__device__ __forceinline__ long long adaptive_start(long long o, long long I, long long O) { return (o * I) / O; }
__device__ __forceinline__ long long adaptive_end(long long o, long long I, long long O) {
  return ((o + 1) * I + O - 1) / O;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// max pooling
// ---------------------------------------------------------------------------------------------

template <typename T, typename I>
__global__ void max_pool_fwd(const T* __restrict__ x, T* __restrict__ y, I* __restrict__ idx, PoolGeom g) {
  const long long total = g.N * g.C * g.OD * g.OH * g.OW;
  ACLNN_GRID_STRIDE_LOOP(e, total) {
    const Pos o = unravel(e, g.N, g.C, g.OD, g.OH, g.OW, g.cl != 0);
    long long d0 = o.d * g.sd - g.pd, h0 = o.h * g.sh - g.ph, w0 = o.w * g.sw - g.pw;
    const long long d1 = min_ll(d0 + (g.kd - 1) * g.dd + 1, g.ID);
    const long long h1 = min_ll(h0 + (g.kh - 1) * g.dh + 1, g.IH);
    const long long w1 = min_ll(w0 + (g.kw - 1) * g.dw + 1, g.IW);
    d0 = first_inside(d0, g.dd);   // PyTorch's `while (x0 < 0) x0 += dilation`, in closed form
    h0 = first_inside(h0, g.dh);
    w0 = first_inside(w0, g.dw);
    const T* xp = x + o.n * g.xs[0] + o.c * g.xs[1];
    long long best = (d0 * g.IH + h0) * g.IW + w0;
    acc_t<T> m = neg_inf<acc_t<T>>();
    for (long long d = d0; d < d1; d += g.dd)
      for (long long h = h0; h < h1; h += g.dh)
        for (long long w = w0; w < w1; w += g.dw) {
          const acc_t<T> v = ld(xp + d * g.xs[2] + h * g.xs[3] + w * g.xs[4]);
          if (v > m || v != v) {
            m = v;
            best = (d * g.IH + h) * g.IW + w;
          }
        }
    st(y + at(g.ys, o), m);
    idx[at(g.is, o)] = static_cast<I>(best);
  }
}

// gx[n, c, d, h, w] = Σ gy[o] over the windows o that can contain (d, h, w) and whose index names it.
template <typename T, typename I>
__global__ void max_pool_bwd(const T* __restrict__ gy, const I* __restrict__ idx, T* __restrict__ gx, PoolGeom g) {
  const long long total = g.N * g.C * g.ID * g.IH * g.IW;
  ACLNN_GRID_STRIDE_LOOP(e, total) {
    const Pos p = unravel(e, g.N, g.C, g.ID, g.IH, g.IW, g.cl != 0);
    long long dlo, dhi, hlo, hhi, wlo, whi;
    window_range(p.d, g.sd, g.pd, (g.kd - 1) * g.dd + 1, g.OD, dlo, dhi);
    window_range(p.h, g.sh, g.ph, (g.kh - 1) * g.dh + 1, g.OH, hlo, hhi);
    window_range(p.w, g.sw, g.pw, (g.kw - 1) * g.dw + 1, g.OW, wlo, whi);
    const long long flat = (p.d * g.IH + p.h) * g.IW + p.w;
    acc_t<T> acc = 0;
    for (long long od = dlo; od <= dhi; ++od)
      for (long long oh = hlo; oh <= hhi; ++oh)
        for (long long ow = wlo; ow <= whi; ++ow) {
          if (static_cast<long long>(idx[at_out(g.is, p.n, p.c, od, oh, ow)]) == flat)
            acc += ld(gy + at_out(g.ys, p.n, p.c, od, oh, ow));
        }
    st(gx + at(g.xs, p), acc);
  }
}

// ---------------------------------------------------------------------------------------------
// average pooling
// ---------------------------------------------------------------------------------------------

template <typename T>
__global__ void avg_pool_fwd(const T* __restrict__ x, T* __restrict__ y, PoolGeom g) {
  const long long total = g.N * g.C * g.OD * g.OH * g.OW;
  ACLNN_GRID_STRIDE_LOOP(e, total) {
    const Pos o = unravel(e, g.N, g.C, g.OD, g.OH, g.OW, g.cl != 0);
    const long long d0 = o.d * g.sd - g.pd, h0 = o.h * g.sh - g.ph, w0 = o.w * g.sw - g.pw;
    const long long ds = max_ll(d0, 0), hs = max_ll(h0, 0), ws = max_ll(w0, 0);
    const long long de = min_ll(d0 + g.kd, g.ID), he = min_ll(h0 + g.kh, g.IH), we = min_ll(w0 + g.kw, g.IW);
    acc_t<T> r = 0;
    if (ds < de && hs < he && ws < we) {
      const T* xp = x + o.n * g.xs[0] + o.c * g.xs[1];
      acc_t<T> s = 0;
      for (long long d = ds; d < de; ++d)
        for (long long h = hs; h < he; ++h)
          for (long long w = ws; w < we; ++w) s += ld(xp + d * g.xs[2] + h * g.xs[3] + w * g.xs[4]);
      r = s / avg_divisor<acc_t<T>>(g, d0, h0, w0);
    }
    st(y + at(g.ys, o), r);
  }
}

template <typename T>
__global__ void avg_pool_bwd(const T* __restrict__ gy, T* __restrict__ gx, PoolGeom g) {
  const long long total = g.N * g.C * g.ID * g.IH * g.IW;
  ACLNN_GRID_STRIDE_LOOP(e, total) {
    const Pos p = unravel(e, g.N, g.C, g.ID, g.IH, g.IW, g.cl != 0);
    long long dlo, dhi, hlo, hhi, wlo, whi;
    window_range(p.d, g.sd, g.pd, g.kd, g.OD, dlo, dhi);
    window_range(p.h, g.sh, g.ph, g.kh, g.OH, hlo, hhi);
    window_range(p.w, g.sw, g.pw, g.kw, g.OW, wlo, whi);
    acc_t<T> acc = 0;
    for (long long od = dlo; od <= dhi; ++od)
      for (long long oh = hlo; oh <= hhi; ++oh)
        for (long long ow = wlo; ow <= whi; ++ow) {
          const acc_t<T> div = avg_divisor<acc_t<T>>(g, od * g.sd - g.pd, oh * g.sh - g.ph, ow * g.sw - g.pw);
          acc += ld(gy + at_out(g.ys, p.n, p.c, od, oh, ow)) / div;
        }
    st(gx + at(g.xs, p), acc);
  }
}

// ---------------------------------------------------------------------------------------------
// adaptive average pooling: window o spans [floor(o·I/O), ceil((o+1)·I/O)) per spatial axis
// ---------------------------------------------------------------------------------------------

template <typename T>
__global__ void adaptive_avg_fwd(const T* __restrict__ x, T* __restrict__ y, PoolGeom g) {
  const long long total = g.N * g.C * g.OD * g.OH * g.OW;
  ACLNN_GRID_STRIDE_LOOP(e, total) {
    const Pos o = unravel(e, g.N, g.C, g.OD, g.OH, g.OW, g.cl != 0);
    const long long ds = adaptive_start(o.d, g.ID, g.OD), de = adaptive_end(o.d, g.ID, g.OD);
    const long long hs = adaptive_start(o.h, g.IH, g.OH), he = adaptive_end(o.h, g.IH, g.OH);
    const long long ws = adaptive_start(o.w, g.IW, g.OW), we = adaptive_end(o.w, g.IW, g.OW);
    const T* xp = x + o.n * g.xs[0] + o.c * g.xs[1];
    acc_t<T> s = 0;
    for (long long d = ds; d < de; ++d)
      for (long long h = hs; h < he; ++h)
        for (long long w = ws; w < we; ++w) s += ld(xp + d * g.xs[2] + h * g.xs[3] + w * g.xs[4]);
    st(y + at(g.ys, o), s / static_cast<acc_t<T>>((de - ds) * (he - hs) * (we - ws)));
  }
}

template <typename T>
__global__ void adaptive_avg_bwd(const T* __restrict__ gy, T* __restrict__ gx, PoolGeom g) {
  const long long total = g.N * g.C * g.ID * g.IH * g.IW;
  ACLNN_GRID_STRIDE_LOOP(e, total) {
    const Pos p = unravel(e, g.N, g.C, g.ID, g.IH, g.IW, g.cl != 0);
    // the outputs whose window contains i: floor(i·O/I) .. ceil((i+1)·O/I) - 1, each checked
    const long long dlo = (p.d * g.OD) / g.ID, dhi = min_ll(((p.d + 1) * g.OD + g.ID - 1) / g.ID, g.OD) - 1;
    const long long hlo = (p.h * g.OH) / g.IH, hhi = min_ll(((p.h + 1) * g.OH + g.IH - 1) / g.IH, g.OH) - 1;
    const long long wlo = (p.w * g.OW) / g.IW, whi = min_ll(((p.w + 1) * g.OW + g.IW - 1) / g.IW, g.OW) - 1;
    acc_t<T> acc = 0;
    for (long long od = dlo; od <= dhi; ++od) {
      const long long ds = adaptive_start(od, g.ID, g.OD), de = adaptive_end(od, g.ID, g.OD);
      if (p.d < ds || p.d >= de) continue;
      for (long long oh = hlo; oh <= hhi; ++oh) {
        const long long hs = adaptive_start(oh, g.IH, g.OH), he = adaptive_end(oh, g.IH, g.OH);
        if (p.h < hs || p.h >= he) continue;
        for (long long ow = wlo; ow <= whi; ++ow) {
          const long long ws = adaptive_start(ow, g.IW, g.OW), we = adaptive_end(ow, g.IW, g.OW);
          if (p.w < ws || p.w >= we) continue;
          acc += ld(gy + at_out(g.ys, p.n, p.c, od, oh, ow)) /
                 static_cast<acc_t<T>>((de - ds) * (he - hs) * (we - ws));
        }
      }
    }
    st(gx + at(g.xs, p), acc);
  }
}
