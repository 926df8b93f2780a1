// grid_sampler.cu — the grid family: aclnnAffineGrid, aclnnpyAffineGridBackward (an aclnn-py
// extension: dtheta from dgrid, what cudnnSpatialTfGridGeneratorBackward needs),
// aclnnGridSampler2D and aclnnGridSampler2DBackward.
//
// Coordinates follow PyTorch's grid_sampler (aten/src/ATen/native/cuda/GridSampler.cuh):
//   unnormalize   align_corners: (g + 1)/2·(size − 1)     else ((g + 1)·size − 1)/2
//   padding       zeros: as is; border: clip to [0, size − 1]; reflection: reflect about the
//                 corner centres (align_corners) or the borders (not), then clip; finally any
//                 non-finite or out-of-int-range coordinate becomes −100 (out of bounds)
//   bilinear      the 4 neighbours, zero outside; nearest: nearbyint (half to even);
//   bicubic       the 4×4 neighbours with A = −0.75, padding applied to each tap coordinate
// and the backward computes grid gradients through the same chain (∂unnormalize · ∂reflect · ∂clip).
//
// Determinism (no float atomics anywhere):
//   * grid_grad: one thread per output point (n, h, w), looping over C in order.
//   * input_grad: the output points of each image are cut into K consecutive chunks (K from the
//     shapes only); thread (n, c, k) owns a private partial plane, walks chunk k in row-major order
//     adding each tap's contribution (the same taps as the forward), and a second kernel sums the K
//     partials of every element in k order (grid_sampler_2d_bwd_input_partial / _reduce). With
//     K = 1 one thread per (n, c) plane accumulates in place (grid_sampler_2d_bwd_input). A fixed
//     order per input element, no scatter between threads. Chosen over a per-input-pixel gather
//     (the inverse of an arbitrary grid has no bounded support) and over sort-based schemes
//     (simpler; the cost is K partial planes of workspace).
//   * AffineGridBackward: one block per (n, i, k) entry of dtheta, a fixed-order block sum over the
//     grid points.
//
// Tensors reach the kernels dense in their own memory order; the kernels take per-dim element
// strides, so NCHW and channels-last tensors are used in place. T = float, __half, __nv_bfloat16
// compute in f32; T = double in f64.
#include "aclnn_common.cuh"

using namespace aclnn;

// The sampler's geometry: sizes, per-tensor strides (n, c, h, w; grid-like tensors: n, h, w, k) and modes.
struct GridGeo {
  long long N, C, IH, IW, OH, OW;
  long long in_s[4];     // input / input_grad-reading strides
  long long grid_s[4];   // grid
  long long out_s[4];    // out (forward) / grad_output (backward)
  long long dgrid_s[4];  // grid_grad
  long long din_s[4];    // input_grad
  long long acc_s[4];    // the accumulation buffer of input_grad (== din_s when it is input_grad itself)
  int interp, padding, align, convert;
};

namespace {

template <typename T> struct Acc { typedef float type; };
template <> struct Acc<double> { typedef double type; };

template <typename T> __device__ __forceinline__ float ld(const T* p) { return load_f32(p); }
__device__ __forceinline__ double ld(const double* p) { return *p; }
template <typename T> __device__ __forceinline__ void st(T* p, float v) { store_f32(p, v); }
__device__ __forceinline__ void st(double* p, double v) { *p = v; }

__device__ __forceinline__ float xfloor(float v) { return floorf(v); }
__device__ __forceinline__ double xfloor(double v) { return floor(v); }
__device__ __forceinline__ float xrint(float v) { return rintf(v); }
__device__ __forceinline__ double xrint(double v) { return rint(v); }
__device__ __forceinline__ float xfmod(float a, float b) { return fmodf(a, b); }
__device__ __forceinline__ double xfmod(double a, double b) { return fmod(a, b); }
__device__ __forceinline__ float xabs(float v) { return fabsf(v); }
__device__ __forceinline__ double xabs(double v) { return fabs(v); }
__device__ __forceinline__ float xmin(float a, float b) { return fminf(a, b); }
__device__ __forceinline__ double xmin(double a, double b) { return fmin(a, b); }
__device__ __forceinline__ float xmax(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double xmax(double a, double b) { return fmax(a, b); }

enum { kBilinear = 0, kNearest = 1, kBicubic = 2 };
enum { kZeros = 0, kBorder = 1, kReflection = 2 };

template <typename A>
__device__ __forceinline__ A unnormalize(A g, long long size, int align, A* grad) {
  if (align) {
    *grad = A(size - 1) / A(2);
    return (g + A(1)) / A(2) * A(size - 1);
  }
  *grad = A(size) / A(2);
  return ((g + A(1)) * A(size) - A(1)) / A(2);
}

template <typename A>
__device__ __forceinline__ A clip_set_grad(A in, long long size, A* grad) {
  if (in <= A(0)) {
    *grad = A(0);
    return A(0);
  }
  const A hi = A(size - 1);
  if (in >= hi) {
    *grad = A(0);
    return hi;
  }
  *grad = A(1);
  return in;
}

template <typename A>
__device__ __forceinline__ A clip(A in, long long size) { return xmin(A(size - 1), xmax(in, A(0))); }

// reflect `in` into [twice_low/2, twice_high/2]; grad = d(out)/d(in) (±1)
template <typename A>
__device__ __forceinline__ A reflect_set_grad(A in, long long twice_low, long long twice_high, A* grad) {
  if (twice_low == twice_high) {
    *grad = A(0);
    return A(0);
  }
  const A mn = A(twice_low) / A(2), span = A(twice_high - twice_low) / A(2);
  A sign = A(1);
  in = in - mn;
  if (in < A(0)) {
    sign = A(-1);
    in = -in;
  }
  const A extra = xfmod(in, span);
  const long long flips = static_cast<long long>(xfloor(in / span));
  if (flips % 2 == 0) {
    *grad = sign;
    return extra + mn;
  }
  *grad = -sign;
  return span - extra + mn;
}

template <typename A>
__device__ __forceinline__ A safe_int_range(A x) {
  // -100 is out of bounds everywhere (PyTorch's safe_downgrade_to_int_range)
  if (!(x - x == A(0)) || x > A(2147483646.0) || x < A(-2147483648.0)) return A(-100);   // NaN, ±inf, huge
  return x;
}

// apply the padding mode to an unnormalized coordinate (with its gradient factor)
template <typename A>
__device__ __forceinline__ A pad_coord_set_grad(A c, long long size, int padding, int align, A* grad) {
  A g = A(1);
  if (padding == kBorder) {
    c = clip_set_grad(c, size, &g);
  } else if (padding == kReflection) {
    A gr, gc;
    c = align ? reflect_set_grad(c, 0, 2 * (size - 1), &gr) : reflect_set_grad(c, -1, 2 * size - 1, &gr);
    c = clip_set_grad(c, size, &gc);
    g = gr * gc;
  }
  *grad = g;
  return safe_int_range(c);
}

template <typename A>
__device__ __forceinline__ A pad_coord(A c, long long size, int padding, int align) {
  A g;
  return pad_coord_set_grad(c, size, padding, align, &g);
}

__device__ __forceinline__ bool inb(long long y, long long x, long long H, long long W) {
  return y >= 0 && y < H && x >= 0 && x < W;
}

// bicubic (A = -0.75, PyTorch's upsample coefficients)
template <typename A>
__device__ __forceinline__ void cubic_coeffs(A (&c)[4], A t) {
  const A a = A(-0.75);
  const A x1 = t, x2 = A(1) - t;
  c[0] = ((a * (x1 + A(1)) - A(5) * a) * (x1 + A(1)) + A(8) * a) * (x1 + A(1)) - A(4) * a;
  c[1] = ((a + A(2)) * x1 - (a + A(3))) * x1 * x1 + A(1);
  c[2] = ((a + A(2)) * x2 - (a + A(3))) * x2 * x2 + A(1);
  c[3] = ((a * (x2 + A(1)) - A(5) * a) * (x2 + A(1)) + A(8) * a) * (x2 + A(1)) - A(4) * a;
}

template <typename A>
__device__ __forceinline__ void cubic_coeffs_grad(A (&c)[4], A t) {
  const A a = A(-0.75);
  A x = -A(1) - t;
  c[0] = (-A(3) * a * x - A(10) * a) * x - A(8) * a;
  x = -t;
  c[1] = (-A(3) * (a + A(2)) * x - A(2) * (a + A(3))) * x;
  x = A(1) - t;
  c[2] = (A(3) * (a + A(2)) * x - A(2) * (a + A(3))) * x;
  x = A(2) - t;
  c[3] = (A(3) * a * x - A(10) * a) * x + A(8) * a;
}

template <typename A>
__device__ __forceinline__ A cubic_interp(A x0, A x1, A x2, A x3, A t) {
  A c[4];
  cubic_coeffs(c, t);
  return x0 * c[0] + x1 * c[1] + x2 * c[2] + x3 * c[3];
}

// the value at integer tap (x, y) of a plane after the padding mode (bicubic taps), 0 outside
template <typename T>
__device__ __forceinline__ typename Acc<T>::type tap_value(const T* plane, long long x, long long y, const GridGeo& g) {
  typedef typename Acc<T>::type A;
  const long long ix = static_cast<long long>(pad_coord(A(x), g.IW, g.padding, g.align));
  const long long iy = static_cast<long long>(pad_coord(A(y), g.IH, g.padding, g.align));
  return inb(iy, ix, g.IH, g.IW) ? ld(plane + iy * g.in_s[2] + ix * g.in_s[3]) : A(0);
}

// the sample point of output (n, h, w): the grid's (x, y)
template <typename T>
__device__ __forceinline__ void grid_xy(const T* grid, const GridGeo& g, long long n, long long h, long long w,
                                        typename Acc<T>::type* x, typename Acc<T>::type* y) {
  const T* p = grid + n * g.grid_s[0] + h * g.grid_s[1] + w * g.grid_s[2];
  *x = ld(p);
  *y = ld(p + g.grid_s[3]);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// affine grid
// ---------------------------------------------------------------------------------------------

namespace {
// PyTorch's linspace_from_neg_one: one step gives 0; else linspace(-1, 1, steps), scaled by
// (steps - 1)/steps without align_corners
template <typename A>
__device__ __forceinline__ A base_coord(long long i, long long steps, int align) {
  if (steps <= 1) return A(0);
  const A step = A(2) / A(steps - 1);
  A v = (i < steps / 2) ? A(-1) + step * A(i) : A(1) - step * A(steps - 1 - i);
  if (!align) v = v * A(steps - 1) / A(steps);
  return v;
}
}  // namespace

// theta (N, R, R + 1) with R = 2 (D == 1) or 3; grid (N, [D,] H, W, R), both dense row-major.
template <typename T>
__global__ void affine_grid_fwd(const T* __restrict__ theta, T* __restrict__ grid, long long N, long long D,
                                long long H, long long W, int R, int align) {
  typedef typename Acc<T>::type A;
  ACLNN_GRID_STRIDE_LOOP(i, N * D * H * W) {
    const long long w = i % W, h = (i / W) % H, d = (i / (W * H)) % D, n = i / (W * H * D);
    const A b[3] = {base_coord<A>(w, W, align), base_coord<A>(h, H, align), base_coord<A>(d, D, align)};
    const T* th = theta + n * R * (R + 1);
    for (int r = 0; r < R; ++r) {
      A v = A(0);
      for (int k = 0; k < R; ++k) v += ld(th + r * (R + 1) + k) * b[k];
      v += ld(th + r * (R + 1) + R);
      st(grid + i * R + r, v);
    }
  }
}

// dtheta[n, r, k] = Σ_points dgrid[n, p, r] · base[p, k] (base[p, R] = 1). One block per entry.
template <typename T>
__global__ void affine_grid_bwd(const T* __restrict__ dgrid, T* __restrict__ dtheta, long long N, long long D,
                                long long H, long long W, int R, int align) {
  typedef typename Acc<T>::type A;
  __shared__ A smem[32];
  const long long P = D * H * W;
  const long long entries = N * R * (R + 1);
  for (long long e = blockIdx.x; e < entries; e += gridDim.x) {
    const long long k = e % (R + 1), r = (e / (R + 1)) % R, n = e / (R * (R + 1));
    const T* dg = dgrid + n * P * R + r;
    A s = A(0);
    for (long long p = threadIdx.x; p < P; p += blockDim.x) {
      A b;
      if (k == R) b = A(1);
      else if (k == 0) b = base_coord<A>(p % W, W, align);
      else if (k == 1) b = base_coord<A>((p / W) % H, H, align);
      else b = base_coord<A>(p / (W * H), D, align);
      s += ld(dg + p * R) * b;
    }
    s = block_sum(s, smem);
    if (threadIdx.x == 0) st(dtheta + e, s);
  }
}

// ---------------------------------------------------------------------------------------------
// grid sampler 2-D: forward (one thread per output point, looping over C)
// ---------------------------------------------------------------------------------------------

template <typename T>
__global__ void grid_sampler_2d_fwd(const T* __restrict__ input, const T* __restrict__ grid, T* __restrict__ out,
                                    GridGeo g) {
  typedef typename Acc<T>::type A;
  ACLNN_GRID_STRIDE_LOOP(i, g.N * g.OH * g.OW) {
    const long long w = i % g.OW, h = (i / g.OW) % g.OH, n = i / (g.OW * g.OH);
    A gx, gy;
    grid_xy(grid, g, n, h, w, &gx, &gy);
    const T* inp = input + n * g.in_s[0];
    T* o = out + n * g.out_s[0] + h * g.out_s[2] + w * g.out_s[3];
    A gmx, gmy;
    if (g.interp == kBicubic) {
      const A ix = unnormalize(gx, g.IW, g.align, &gmx), iy = unnormalize(gy, g.IH, g.align, &gmy);
      const A fx = xfloor(ix), fy = xfloor(iy);
      const A tx = ix - fx, ty = iy - fy;
      const long long x0 = static_cast<long long>(fx), y0 = static_cast<long long>(fy);
      for (long long c = 0; c < g.C; ++c) {
        const T* plane = inp + c * g.in_s[1];
        A rows[4];
        for (int j = 0; j < 4; ++j)
          rows[j] = cubic_interp(tap_value(plane, x0 - 1, y0 - 1 + j, g), tap_value(plane, x0, y0 - 1 + j, g),
                                 tap_value(plane, x0 + 1, y0 - 1 + j, g), tap_value(plane, x0 + 2, y0 - 1 + j, g), tx);
        st(o + c * g.out_s[1], cubic_interp(rows[0], rows[1], rows[2], rows[3], ty));
      }
      continue;
    }
    const A ix = pad_coord(unnormalize(gx, g.IW, g.align, &gmx), g.IW, g.padding, g.align);
    const A iy = pad_coord(unnormalize(gy, g.IH, g.align, &gmy), g.IH, g.padding, g.align);
    if (g.interp == kNearest) {
      const long long xn = static_cast<long long>(xrint(ix)), yn = static_cast<long long>(xrint(iy));
      const bool ok = inb(yn, xn, g.IH, g.IW);
      for (long long c = 0; c < g.C; ++c)
        st(o + c * g.out_s[1], ok ? ld(inp + c * g.in_s[1] + yn * g.in_s[2] + xn * g.in_s[3]) : A(0));
      continue;
    }
    const A fx = xfloor(ix), fy = xfloor(iy);
    const long long xw = static_cast<long long>(fx), yn = static_cast<long long>(fy);
    const long long xe = xw + 1, ys = yn + 1;
    const A wnw = (A(xe) - ix) * (A(ys) - iy), wne = (ix - A(xw)) * (A(ys) - iy);
    const A wsw = (A(xe) - ix) * (iy - A(yn)), wse = (ix - A(xw)) * (iy - A(yn));
    const bool bnw = inb(yn, xw, g.IH, g.IW), bne = inb(yn, xe, g.IH, g.IW);
    const bool bsw = inb(ys, xw, g.IH, g.IW), bse = inb(ys, xe, g.IH, g.IW);
    for (long long c = 0; c < g.C; ++c) {
      const T* pl = inp + c * g.in_s[1];
      A v = A(0);
      if (bnw) v += ld(pl + yn * g.in_s[2] + xw * g.in_s[3]) * wnw;
      if (bne) v += ld(pl + yn * g.in_s[2] + xe * g.in_s[3]) * wne;
      if (bsw) v += ld(pl + ys * g.in_s[2] + xw * g.in_s[3]) * wsw;
      if (bse) v += ld(pl + ys * g.in_s[2] + xe * g.in_s[3]) * wse;
      st(o + c * g.out_s[1], v);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// backward: grid_grad (one thread per output point, looping over C)
// ---------------------------------------------------------------------------------------------

template <typename T>
__global__ void grid_sampler_2d_bwd_grid(const T* __restrict__ gout, const T* __restrict__ input,
                                         const T* __restrict__ grid, T* __restrict__ dgrid, GridGeo g) {
  typedef typename Acc<T>::type A;
  ACLNN_GRID_STRIDE_LOOP(i, g.N * g.OH * g.OW) {
    const long long w = i % g.OW, h = (i / g.OW) % g.OH, n = i / (g.OW * g.OH);
    A gx, gy;
    grid_xy(grid, g, n, h, w, &gx, &gy);
    const T* inp = input + n * g.in_s[0];
    const T* go = gout + n * g.out_s[0] + h * g.out_s[2] + w * g.out_s[3];
    T* dg = dgrid + n * g.dgrid_s[0] + h * g.dgrid_s[1] + w * g.dgrid_s[2];
    A gix = A(0), giy = A(0), mx, my;
    if (g.interp == kNearest) {
      st(dg, A(0));
      st(dg + g.dgrid_s[3], A(0));
      continue;
    }
    if (g.interp == kBicubic) {
      const A ix = unnormalize(gx, g.IW, g.align, &mx), iy = unnormalize(gy, g.IH, g.align, &my);
      const A fx = xfloor(ix), fy = xfloor(iy);
      const A tx = ix - fx, ty = iy - fy;
      const long long x0 = static_cast<long long>(fx), y0 = static_cast<long long>(fy);
      A xc[4], yc[4], xg[4], yg[4];
      cubic_coeffs(xc, tx);
      cubic_coeffs(yc, ty);
      cubic_coeffs_grad(xg, tx);
      cubic_coeffs_grad(yg, ty);
      for (long long c = 0; c < g.C; ++c) {
        const T* plane = inp + c * g.in_s[1];
        const A gv = ld(go + c * g.out_s[1]);
        for (int a = 0; a < 4; ++a)
          for (int b = 0; b < 4; ++b) {
            const A v = tap_value(plane, x0 - 1 + a, y0 - 1 + b, g);
            gix -= v * xg[a] * yc[b] * gv;
            giy -= v * yg[b] * xc[a] * gv;
          }
      }
    } else {
      A px, py;
      const A ix = pad_coord_set_grad(unnormalize(gx, g.IW, g.align, &mx), g.IW, g.padding, g.align, &px);
      const A iy = pad_coord_set_grad(unnormalize(gy, g.IH, g.align, &my), g.IH, g.padding, g.align, &py);
      mx *= px;
      my *= py;
      const long long xw = static_cast<long long>(xfloor(ix)), yn = static_cast<long long>(xfloor(iy));
      const long long xe = xw + 1, ys = yn + 1;
      const bool bnw = inb(yn, xw, g.IH, g.IW), bne = inb(yn, xe, g.IH, g.IW);
      const bool bsw = inb(ys, xw, g.IH, g.IW), bse = inb(ys, xe, g.IH, g.IW);
      for (long long c = 0; c < g.C; ++c) {
        const T* pl = inp + c * g.in_s[1];
        const A gv = ld(go + c * g.out_s[1]);
        if (bnw) {
          const A v = ld(pl + yn * g.in_s[2] + xw * g.in_s[3]);
          gix -= v * (A(ys) - iy) * gv;
          giy -= v * (A(xe) - ix) * gv;
        }
        if (bne) {
          const A v = ld(pl + yn * g.in_s[2] + xe * g.in_s[3]);
          gix += v * (A(ys) - iy) * gv;
          giy -= v * (ix - A(xw)) * gv;
        }
        if (bsw) {
          const A v = ld(pl + ys * g.in_s[2] + xw * g.in_s[3]);
          gix -= v * (iy - A(yn)) * gv;
          giy += v * (A(xe) - ix) * gv;
        }
        if (bse) {
          const A v = ld(pl + ys * g.in_s[2] + xe * g.in_s[3]);
          gix += v * (iy - A(yn)) * gv;
          giy += v * (ix - A(xw)) * gv;
        }
      }
    }
    st(dg, mx * gix);
    st(dg + g.dgrid_s[3], my * giy);
  }
}

// input_grad contributions of output point (n, h, w) (gradient go[h, w]) to the plane ap of its (n, c),
// element (y, x) at ap[y·sy + x·sx]: in a fixed order (bicubic's 16 taps, nearest's one, bilinear's 4),
// shared by the per-plane kernel and the chunked two-pass one, so both give the same bits per point.
template <typename T, typename A>
__device__ __forceinline__ void scatter_point(const T* grid, const T* go, const GridGeo& g, long long n, long long h,
                                              long long w, A* ap, long long sy, long long sx) {
#define ACLNN_GS_ADD(yy, xx, v)                                              \
  do {                                                                       \
    if (inb((yy), (xx), g.IH, g.IW)) ap[(yy) * sy + (xx) * sx] += (v);       \
  } while (0)
  A gx, gy, mx, my;
  grid_xy(grid, g, n, h, w, &gx, &gy);
  const A gv = ld(go + h * g.out_s[2] + w * g.out_s[3]);
  if (g.interp == kBicubic) {
    const A ix = unnormalize(gx, g.IW, g.align, &mx), iy = unnormalize(gy, g.IH, g.align, &my);
    const A fx = xfloor(ix), fy = xfloor(iy);
    const long long x0 = static_cast<long long>(fx), y0 = static_cast<long long>(fy);
    A xc[4], yc[4];
    cubic_coeffs(xc, ix - fx);
    cubic_coeffs(yc, iy - fy);
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) {
        const long long tx = static_cast<long long>(pad_coord(A(x0 - 1 + a), g.IW, g.padding, g.align));
        const long long ty = static_cast<long long>(pad_coord(A(y0 - 1 + b), g.IH, g.padding, g.align));
        ACLNN_GS_ADD(ty, tx, gv * xc[a] * yc[b]);
      }
    return;
  }
  const A ix = pad_coord(unnormalize(gx, g.IW, g.align, &mx), g.IW, g.padding, g.align);
  const A iy = pad_coord(unnormalize(gy, g.IH, g.align, &my), g.IH, g.padding, g.align);
  if (g.interp == kNearest) {
    const long long xn = static_cast<long long>(xrint(ix)), yn = static_cast<long long>(xrint(iy));
    ACLNN_GS_ADD(yn, xn, gv);
    return;
  }
  const long long xw = static_cast<long long>(xfloor(ix)), yn = static_cast<long long>(xfloor(iy));
  const long long xe = xw + 1, ys = yn + 1;
  ACLNN_GS_ADD(yn, xw, (A(xe) - ix) * (A(ys) - iy) * gv);
  ACLNN_GS_ADD(yn, xe, (ix - A(xw)) * (A(ys) - iy) * gv);
  ACLNN_GS_ADD(ys, xw, (A(xe) - ix) * (iy - A(yn)) * gv);
  ACLNN_GS_ADD(ys, xe, (ix - A(xw)) * (iy - A(yn)) * gv);
#undef ACLNN_GS_ADD
}

// ---------------------------------------------------------------------------------------------
// backward: input_grad (one thread per (n, c) plane; fixed order over the output points)
// ---------------------------------------------------------------------------------------------

template <typename T>
__global__ void grid_sampler_2d_bwd_input(const T* __restrict__ gout, const T* __restrict__ grid,
                                          typename Acc<T>::type* acc, T* din, GridGeo g) {
  typedef typename Acc<T>::type A;
  ACLNN_GRID_STRIDE_LOOP(pc, g.N * g.C) {
    const long long c = pc % g.C, n = pc / g.C;
    A* ap = acc + n * g.acc_s[0] + c * g.acc_s[1];
    for (long long y = 0; y < g.IH; ++y)
      for (long long x = 0; x < g.IW; ++x) ap[y * g.acc_s[2] + x * g.acc_s[3]] = A(0);
    const T* go = gout + n * g.out_s[0] + c * g.out_s[1];
    for (long long h = 0; h < g.OH; ++h)
      for (long long w = 0; w < g.OW; ++w) scatter_point(grid, go, g, n, h, w, ap, g.acc_s[2], g.acc_s[3]);
    if (g.convert) {
      T* dp = din + n * g.din_s[0] + c * g.din_s[1];
      for (long long y = 0; y < g.IH; ++y)
        for (long long x = 0; x < g.IW; ++x) st(dp + y * g.din_s[2] + x * g.din_s[3], ap[y * g.acc_s[2] + x * g.acc_s[3]]);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// backward: input_grad with more parallelism — two passes, still no atomics
// ---------------------------------------------------------------------------------------------
// Pass 1: the output points of an image are cut into K consecutive chunks; thread (n, c, k) owns
// a private dense plane part[(n·C + c)·K + k] (IH×IW, A-typed, in the workspace), zeroes it and adds
// the contributions of chunk k in row-major order. Pass 2: each input_grad element is the sum of
// its K partials in k order. K depends only on the shapes, so the bits are the same run to run.

template <typename T>
__global__ void grid_sampler_2d_bwd_input_partial(const T* __restrict__ gout, const T* __restrict__ grid,
                                                  typename Acc<T>::type* __restrict__ part, GridGeo g, long long K) {
  typedef typename Acc<T>::type A;
  const long long P = g.OH * g.OW, plane = g.IH * g.IW;
  ACLNN_GRID_STRIDE_LOOP(t, g.N * g.C * K) {
    const long long k = t % K, pc = t / K, c = pc % g.C, n = pc / g.C;
    A* ap = part + t * plane;
    for (long long e = 0; e < plane; ++e) ap[e] = A(0);
    const T* go = gout + n * g.out_s[0] + c * g.out_s[1];
    const long long p0 = P * k / K, p1 = P * (k + 1) / K;
    for (long long p = p0; p < p1; ++p) scatter_point(grid, go, g, n, p / g.OW, p % g.OW, ap, g.IW, 1LL);
  }
}

template <typename T>
__global__ void grid_sampler_2d_bwd_input_reduce(const typename Acc<T>::type* __restrict__ part, T* __restrict__ din,
                                                 GridGeo g, long long K) {
  typedef typename Acc<T>::type A;
  const long long plane = g.IH * g.IW;
  ACLNN_GRID_STRIDE_LOOP(i, g.N * g.C * plane) {
    const long long e = i % plane, pc = i / plane, c = pc % g.C, n = pc / g.C;
    const A* src = part + pc * K * plane + e;
    A s = A(0);
    for (long long k = 0; k < K; ++k) s += src[k * plane];
    const long long y = e / g.IW, x = e % g.IW;
    st(din + n * g.din_s[0] + c * g.din_s[1] + y * g.din_s[2] + x * g.din_s[3], s);
  }
}
