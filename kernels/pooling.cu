// pooling.cu — the pooling family: max (with indices), average and adaptive average pooling over 1 to 3
// spatial dims (2-D pooling is D = 1), forward and backward, for every tensor dense in NCDHW (CL = false)
// or NDHWC (CL = true, channels-last) memory order; the op module makes the views dense in the order of
// the input and passes the geometry.
//
//   pool_fwd<T, CL, MODE, I>   one thread per output element: its window, max (first maximum, NaN wins,
//                              as PyTorch; index = flat d·H·W + h·W + w in its (n, c) plane) or mean
//   pool_bwd<T, CL, MODE, I>   one thread per INPUT element: gathers, in a fixed order (od, oh, ow
//                              ascending), the gradients of the outputs whose window contains it
//                              (max: whose index names it) — no atomics, bitwise reproducible
//
// MODE 0 max, 1 average (count_include_pad, divisor_override, ceil mode as PyTorch: a window that
// starts in the right padding was dropped by the op's output size), 2 adaptive average
// (window [floor(o·I/O), ceil((o+1)·I/O))). Loads and stores in T, arithmetic in f32.
#include "aclnn_common.cuh"

using namespace aclnn;

struct PoolGeom {
  long long N, C;
  int D, H, W, OD, OH, OW;
  int kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw;
  int divisor;                 // divisor_override (0: not set)
  int count_include_pad;
};

namespace {

__device__ __forceinline__ long long in_off(const PoolGeom& g, bool cl, long long n, long long c, int d, int h, int w) {
  return cl ? (((n * g.D + d) * g.H + h) * (long long)g.W + w) * g.C + c
            : (((n * g.C + c) * g.D + d) * (long long)g.H + h) * g.W + w;
}

__device__ __forceinline__ long long out_off(const PoolGeom& g, bool cl, long long n, long long c, int d, int h, int w) {
  return cl ? (((n * g.OD + d) * g.OH + h) * (long long)g.OW + w) * g.C + c
            : (((n * g.C + c) * g.OD + d) * (long long)g.OH + h) * g.OW + w;
}

// (n, c, d, h, w) of element i of a dense (N, C, D, H, W) tensor in NCDHW or NDHWC order
__device__ __forceinline__ void unravel(long long i, long long C, int D, int H, int W, bool cl, long long& n,
                                        long long& c, int& d, int& h, int& w) {
  if (cl) {
    c = i % C; i /= C;
    w = (int)(i % W); i /= W;
    h = (int)(i % H); i /= H;
    d = (int)(i % D); n = i / D;
  } else {
    w = (int)(i % W); i /= W;
    h = (int)(i % H); i /= H;
    d = (int)(i % D); i /= D;
    c = i % C; n = i / C;
  }
}

// the average window of output o along one dim: [start, end) clipped to the input, and its padded size
__device__ __forceinline__ void avg_window(int o, int s, int p, int k, int in, int& lo, int& hi, int& padded) {
  int start = o * s - p;
  int end = min(start + k, in + p);
  padded = end - start;
  lo = max(start, 0);
  hi = min(end, in);
}

__device__ __forceinline__ void adaptive_window(int o, int in, int out, int& lo, int& hi) {
  lo = (int)(((long long)o * in) / out);
  hi = (int)((((long long)o + 1) * in + out - 1) / out);
}

// output indices o whose window [o·s − p + k'·dil] can contain input position i: [first, last]
__device__ __forceinline__ void candidates(int i, int s, int p, int k, int dil, int out, int& first, int& last) {
  const int lo = i + p - (k - 1) * dil;          // o·s >= lo
  first = lo <= 0 ? 0 : (lo + s - 1) / s;
  last = min(out - 1, (i + p) / s);
}

}  // namespace

template <typename T, bool CL, int MODE, typename I>
__global__ void pool_fwd(const T* __restrict__ x, T* __restrict__ y, I* __restrict__ idx, PoolGeom g) {
  const long long total = g.N * g.C * g.OD * (long long)g.OH * g.OW;
  ACLNN_GRID_STRIDE_LOOP(i, total) {
    long long n, c;
    int od, oh, ow;
    unravel(i, g.C, g.OD, g.OH, g.OW, CL, n, c, od, oh, ow);
    if (MODE == 0) {
      float best = 0.f;
      long long bidx = -1;
      for (int a = 0; a < g.kd; ++a) {
        const int id = od * g.sd - g.pd + a * g.dd;
        if (id < 0 || id >= g.D) continue;
        for (int b = 0; b < g.kh; ++b) {
          const int ih = oh * g.sh - g.ph + b * g.dh;
          if (ih < 0 || ih >= g.H) continue;
          for (int e = 0; e < g.kw; ++e) {
            const int iw = ow * g.sw - g.pw + e * g.dw;
            if (iw < 0 || iw >= g.W) continue;
            const float v = load_f32(x + in_off(g, CL, n, c, id, ih, iw));
            if (bidx < 0 || v > best || isnan(v)) {
              best = v;
              bidx = ((long long)id * g.H + ih) * g.W + iw;
            }
          }
        }
      }
      store_f32(y + i, best);
      idx[i] = (I)bidx;
    } else {
      int d0, d1, h0, h1, w0, w1, pdd, phh, pww;
      if (MODE == 1) {
        avg_window(od, g.sd, g.pd, g.kd, g.D, d0, d1, pdd);
        avg_window(oh, g.sh, g.ph, g.kh, g.H, h0, h1, phh);
        avg_window(ow, g.sw, g.pw, g.kw, g.W, w0, w1, pww);
      } else {
        adaptive_window(od, g.D, g.OD, d0, d1);
        adaptive_window(oh, g.H, g.OH, h0, h1);
        adaptive_window(ow, g.W, g.OW, w0, w1);
      }
      float s = 0.f;
      for (int id = d0; id < d1; ++id)
        for (int ih = h0; ih < h1; ++ih)
          for (int iw = w0; iw < w1; ++iw) s += load_f32(x + in_off(g, CL, n, c, id, ih, iw));
      const int cnt = (d1 - d0) * (h1 - h0) * (w1 - w0);
      const int div = MODE == 2 ? cnt : g.divisor ? g.divisor : g.count_include_pad ? pdd * phh * pww : cnt;
      store_f32(y + i, s / (float)div);
    }
  }
}

template <typename T, bool CL, int MODE, typename I>
__global__ void pool_bwd(const T* __restrict__ dy, const I* __restrict__ idx, T* __restrict__ dx, PoolGeom g) {
  const long long total = g.N * g.C * g.D * (long long)g.H * g.W;
  ACLNN_GRID_STRIDE_LOOP(i, total) {
    long long n, c;
    int id, ih, iw;
    unravel(i, g.C, g.D, g.H, g.W, CL, n, c, id, ih, iw);
    float s = 0.f;
    if (MODE == 2) {
      const int od0 = (int)(((long long)id * g.OD) / g.D), oh0 = (int)(((long long)ih * g.OH) / g.H);
      const int ow0 = (int)(((long long)iw * g.OW) / g.W);
      for (int od = od0; od < g.OD; ++od) {
        int d0, d1;
        adaptive_window(od, g.D, g.OD, d0, d1);
        if (d0 > id) break;
        if (id >= d1) continue;
        for (int oh = oh0; oh < g.OH; ++oh) {
          int h0, h1;
          adaptive_window(oh, g.H, g.OH, h0, h1);
          if (h0 > ih) break;
          if (ih >= h1) continue;
          for (int ow = ow0; ow < g.OW; ++ow) {
            int w0, w1;
            adaptive_window(ow, g.W, g.OW, w0, w1);
            if (w0 > iw) break;
            if (iw >= w1) continue;
            s += load_f32(dy + out_off(g, CL, n, c, od, oh, ow)) / (float)((d1 - d0) * (h1 - h0) * (w1 - w0));
          }
        }
      }
    } else {
      const int dil_d = MODE == 0 ? g.dd : 1, dil_h = MODE == 0 ? g.dh : 1, dil_w = MODE == 0 ? g.dw : 1;
      int od0, od1, oh0, oh1, ow0, ow1;
      candidates(id, g.sd, g.pd, g.kd, dil_d, g.OD, od0, od1);
      candidates(ih, g.sh, g.ph, g.kh, dil_h, g.OH, oh0, oh1);
      candidates(iw, g.sw, g.pw, g.kw, dil_w, g.OW, ow0, ow1);
      const long long me = ((long long)id * g.H + ih) * g.W + iw;
      for (int od = od0; od <= od1; ++od)
        for (int oh = oh0; oh <= oh1; ++oh)
          for (int ow = ow0; ow <= ow1; ++ow) {
            const long long o = out_off(g, CL, n, c, od, oh, ow);
            if (MODE == 0) {
              if ((long long)idx[o] == me) s += load_f32(dy + o);
            } else {
              int d0, d1, h0, h1, w0, w1, pdd, phh, pww;
              avg_window(od, g.sd, g.pd, g.kd, g.D, d0, d1, pdd);
              avg_window(oh, g.sh, g.ph, g.kh, g.H, h0, h1, phh);
              avg_window(ow, g.sw, g.pw, g.kw, g.W, w0, w1, pww);
              if (id < d0 || id >= d1 || ih < h0 || ih >= h1 || iw < w0 || iw >= w1) continue;
              const int cnt = (d1 - d0) * (h1 - h0) * (w1 - w0);
              const int div = g.divisor ? g.divisor : g.count_include_pad ? pdd * phh * pww : cnt;
              s += load_f32(dy + o) / (float)div;
            }
          }
    }
    store_f32(dx + i, s);
  }
}
