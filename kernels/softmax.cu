// softmax.cu — the softmax family: aclnnSoftmax / aclnnLogSoftmax and their backward ops.
//
// The tensor is seen in its memory order as [outer, D, inner] with D the reduced dim (the op plans
// that view; no transpose copy when the tensor is dense in some order). Two shapes of work:
//
//   *_rows   inner == 1 (the reduced dim is innermost in memory): one warp per row when D <= 1024,
//            one block per row (*_block) beyond; lanes stride the row, so loads are coalesced.
//   *_cols   inner > 1: one thread per (outer, inner) column walking D with stride `inner`;
//            neighbouring threads read neighbouring addresses.
//
// In place: y may be x (forward) and dx may be g (backward): every element is read by the thread
// that writes it, and a row's reductions finish before its first write, so no __restrict__ there.
//
// Numerics: loads and stores in T, everything else in the compute type A = acc_t<T> (f32 for
// float / __half / __nv_bfloat16, f64 for double). Forward subtracts the row max before
// exp (no overflow) and log-softmax is (x - max) - log(sum exp(x - max)) (log-sum-exp, in that
// order: x - max is exact near the max, so no cancellation). Reductions
// use a fixed order: per-lane strided partials, then an xor butterfly (every lane ends with the
// bitwise same value, since a + b == b + a), then, for blocks, warps combined in index order.
// So every op is bitwise reproducible run to run.
//
//   forward:   y = exp(x - m) / s                 (LOG: y = x - m - log s)
//   backward:  dx = y * (g - sum(g * y))          (LOG: dx = g - exp(y) * sum(g))
#include "aclnn_common.cuh"

using namespace aclnn;

namespace {

constexpr int kRowsPerBlock = 4;          // warps (rows) per 128-thread block of the *_rows kernels

// The compute type A = acc_t<T>: float for float / __half / __nv_bfloat16, double for double (the
// batch_norm.cu rule). Loads convert T to A, stores round A to T; the math below picks the f32 or
// f64 function by overload, so the f32 instantiations are the f32 code they always were.
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

__device__ __forceinline__ float a_exp(float v) { return expf(v); }
__device__ __forceinline__ double a_exp(double v) { return exp(v); }
__device__ __forceinline__ float a_log(float v) { return logf(v); }
__device__ __forceinline__ double a_log(double v) { return log(v); }
__device__ __forceinline__ float a_max(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double a_max(double a, double b) { return fmax(a, b); }
template <typename A> __device__ __forceinline__ A a_neg_inf();
template <> __device__ __forceinline__ float a_neg_inf<float>() { return neg_inf_f32(); }
template <> __device__ __forceinline__ double a_neg_inf<double>() { return neg_inf_f64(); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// forward
// ---------------------------------------------------------------------------------------------

template <typename T, bool LOG>
__global__ void softmax_fwd_rows(const T* x, T* y, long long rows, long long D) {
  using A = acc_t<T>;
  const int lane = threadIdx.x & (kWarpSize - 1);
  for (long long r = (long long)blockIdx.x * kRowsPerBlock + threadIdx.x / kWarpSize; r < rows;
       r += (long long)gridDim.x * kRowsPerBlock) {
    const T* xr = x + r * D;
    T* yr = y + r * D;
    A m = a_neg_inf<A>();
    for (long long j = lane; j < D; j += kWarpSize) m = a_max(m, ld(xr + j));
    m = warp_allmax(m);
    A s = A(0);
    for (long long j = lane; j < D; j += kWarpSize) s += a_exp(ld(xr + j) - m);
    s = warp_allsum(s);
    const A logs = a_log(s), inv = A(1) / s;
    for (long long j = lane; j < D; j += kWarpSize) {
      const A z = ld(xr + j) - m;     // (x - m) - log s: no cancellation near the max
      st(yr + j, LOG ? z - logs : a_exp(z) * inv);
    }
  }
}

template <typename T, bool LOG>
__global__ void softmax_fwd_block(const T* x, T* y, long long rows, long long D) {
  using A = acc_t<T>;
  __shared__ A smem[kWarpSize];
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * D;
    T* yr = y + r * D;
    A m = a_neg_inf<A>();
    for (long long j = threadIdx.x; j < D; j += blockDim.x) m = a_max(m, ld(xr + j));
    m = block_allreduce<true>(m, smem);
    A s = A(0);
    for (long long j = threadIdx.x; j < D; j += blockDim.x) s += a_exp(ld(xr + j) - m);
    s = block_allreduce<false>(s, smem);
    const A logs = a_log(s), inv = A(1) / s;
    for (long long j = threadIdx.x; j < D; j += blockDim.x) {
      const A z = ld(xr + j) - m;
      st(yr + j, LOG ? z - logs : a_exp(z) * inv);
    }
  }
}

template <typename T, bool LOG>
__global__ void softmax_fwd_cols(const T* x, T* y, long long outer, long long D,
                                 long long inner) {
  using A = acc_t<T>;
  const long long cols = outer * inner;
  for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += (long long)gridDim.x * blockDim.x) {
    const long long o = c / inner, i = c - o * inner;
    const T* xc = x + o * D * inner + i;
    T* yc = y + o * D * inner + i;
    A m = a_neg_inf<A>();
    for (long long j = 0; j < D; ++j) m = a_max(m, ld(xc + j * inner));
    A s = A(0);
    for (long long j = 0; j < D; ++j) s += a_exp(ld(xc + j * inner) - m);
    const A logs = a_log(s), inv = A(1) / s;
    for (long long j = 0; j < D; ++j) {
      const A z = ld(xc + j * inner) - m;
      st(yc + j * inner, LOG ? z - logs : a_exp(z) * inv);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// backward: g = grad_output, y = the forward's output
// ---------------------------------------------------------------------------------------------

// the per-element term of the row sum: g*y (softmax) or g (log-softmax)
template <bool LOG, typename A>
__device__ __forceinline__ A bwd_term(A g, A y) { return LOG ? g : g * y; }

template <bool LOG, typename A>
__device__ __forceinline__ A bwd_out(A g, A y, A sum) { return LOG ? g - a_exp(y) * sum : y * (g - sum); }

template <typename T, bool LOG>
__global__ void softmax_bwd_rows(const T* g, const T* __restrict__ y, T* dx, long long rows,
                                 long long D) {
  using A = acc_t<T>;
  const int lane = threadIdx.x & (kWarpSize - 1);
  for (long long r = (long long)blockIdx.x * kRowsPerBlock + threadIdx.x / kWarpSize; r < rows;
       r += (long long)gridDim.x * kRowsPerBlock) {
    const long long base = r * D;
    A s = A(0);
    for (long long j = lane; j < D; j += kWarpSize) s += bwd_term<LOG>(ld(g + base + j), ld(y + base + j));
    s = warp_allsum(s);   // also orders every read of the row before the first write (dx may be g)
    for (long long j = lane; j < D; j += kWarpSize)
      st(dx + base + j, bwd_out<LOG>(ld(g + base + j), ld(y + base + j), s));
  }
}

template <typename T, bool LOG>
__global__ void softmax_bwd_block(const T* g, const T* __restrict__ y, T* dx, long long rows,
                                  long long D) {
  using A = acc_t<T>;
  __shared__ A smem[kWarpSize];
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const long long base = r * D;
    A s = A(0);
    for (long long j = threadIdx.x; j < D; j += blockDim.x)
      s += bwd_term<LOG>(ld(g + base + j), ld(y + base + j));
    s = block_allreduce<false>(s, smem);
    for (long long j = threadIdx.x; j < D; j += blockDim.x)
      st(dx + base + j, bwd_out<LOG>(ld(g + base + j), ld(y + base + j), s));
  }
}

template <typename T, bool LOG>
__global__ void softmax_bwd_cols(const T* g, const T* __restrict__ y, T* dx, long long outer,
                                 long long D, long long inner) {
  using A = acc_t<T>;
  const long long cols = outer * inner;
  for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += (long long)gridDim.x * blockDim.x) {
    const long long o = c / inner, i = c - o * inner;
    const long long base = o * D * inner + i;
    A s = A(0);
    for (long long j = 0; j < D; ++j) s += bwd_term<LOG>(ld(g + base + j * inner), ld(y + base + j * inner));
    for (long long j = 0; j < D; ++j)
      st(dx + base + j * inner, bwd_out<LOG>(ld(g + base + j * inner), ld(y + base + j * inner), s));
  }
}
