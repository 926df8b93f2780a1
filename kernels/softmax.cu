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
// Numerics: loads and stores in T, everything else in f32. Forward subtracts the row max before
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

}  // namespace

// ---------------------------------------------------------------------------------------------
// forward
// ---------------------------------------------------------------------------------------------

template <typename T, bool LOG>
__global__ void softmax_fwd_rows(const T* x, T* y, long long rows, long long D) {
  const int lane = threadIdx.x & (kWarpSize - 1);
  for (long long r = (long long)blockIdx.x * kRowsPerBlock + threadIdx.x / kWarpSize; r < rows;
       r += (long long)gridDim.x * kRowsPerBlock) {
    const T* xr = x + r * D;
    T* yr = y + r * D;
    float m = neg_inf_f32();
    for (long long j = lane; j < D; j += kWarpSize) m = fmaxf(m, load_f32(xr + j));
    m = warp_allmax(m);
    float s = 0.f;
    for (long long j = lane; j < D; j += kWarpSize) s += expf(load_f32(xr + j) - m);
    s = warp_allsum(s);
    const float logs = logf(s), inv = 1.f / s;
    for (long long j = lane; j < D; j += kWarpSize) {
      const float z = load_f32(xr + j) - m;     // (x - m) - log s: no cancellation near the max
      store_f32(yr + j, LOG ? z - logs : expf(z) * inv);
    }
  }
}

template <typename T, bool LOG>
__global__ void softmax_fwd_block(const T* x, T* y, long long rows, long long D) {
  __shared__ float smem[kWarpSize];
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * D;
    T* yr = y + r * D;
    float m = neg_inf_f32();
    for (long long j = threadIdx.x; j < D; j += blockDim.x) m = fmaxf(m, load_f32(xr + j));
    m = block_allreduce<true>(m, smem);
    float s = 0.f;
    for (long long j = threadIdx.x; j < D; j += blockDim.x) s += expf(load_f32(xr + j) - m);
    s = block_allreduce<false>(s, smem);
    const float logs = logf(s), inv = 1.f / s;
    for (long long j = threadIdx.x; j < D; j += blockDim.x) {
      const float z = load_f32(xr + j) - m;
      store_f32(yr + j, LOG ? z - logs : expf(z) * inv);
    }
  }
}

template <typename T, bool LOG>
__global__ void softmax_fwd_cols(const T* x, T* y, long long outer, long long D,
                                 long long inner) {
  const long long cols = outer * inner;
  for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += (long long)gridDim.x * blockDim.x) {
    const long long o = c / inner, i = c - o * inner;
    const T* xc = x + o * D * inner + i;
    T* yc = y + o * D * inner + i;
    float m = neg_inf_f32();
    for (long long j = 0; j < D; ++j) m = fmaxf(m, load_f32(xc + j * inner));
    float s = 0.f;
    for (long long j = 0; j < D; ++j) s += expf(load_f32(xc + j * inner) - m);
    const float logs = logf(s), inv = 1.f / s;
    for (long long j = 0; j < D; ++j) {
      const float z = load_f32(xc + j * inner) - m;
      store_f32(yc + j * inner, LOG ? z - logs : expf(z) * inv);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// backward: g = grad_output, y = the forward's output
// ---------------------------------------------------------------------------------------------

// the per-element term of the row sum: g*y (softmax) or g (log-softmax)
template <bool LOG>
__device__ __forceinline__ float bwd_term(float g, float y) { return LOG ? g : g * y; }

template <bool LOG>
__device__ __forceinline__ float bwd_out(float g, float y, float sum) { return LOG ? g - expf(y) * sum : y * (g - sum); }

template <typename T, bool LOG>
__global__ void softmax_bwd_rows(const T* g, const T* __restrict__ y, T* dx, long long rows,
                                 long long D) {
  const int lane = threadIdx.x & (kWarpSize - 1);
  for (long long r = (long long)blockIdx.x * kRowsPerBlock + threadIdx.x / kWarpSize; r < rows;
       r += (long long)gridDim.x * kRowsPerBlock) {
    const long long base = r * D;
    float s = 0.f;
    for (long long j = lane; j < D; j += kWarpSize) s += bwd_term<LOG>(load_f32(g + base + j), load_f32(y + base + j));
    s = warp_allsum(s);   // also orders every read of the row before the first write (dx may be g)
    for (long long j = lane; j < D; j += kWarpSize)
      store_f32(dx + base + j, bwd_out<LOG>(load_f32(g + base + j), load_f32(y + base + j), s));
  }
}

template <typename T, bool LOG>
__global__ void softmax_bwd_block(const T* g, const T* __restrict__ y, T* dx, long long rows,
                                  long long D) {
  __shared__ float smem[kWarpSize];
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const long long base = r * D;
    float s = 0.f;
    for (long long j = threadIdx.x; j < D; j += blockDim.x)
      s += bwd_term<LOG>(load_f32(g + base + j), load_f32(y + base + j));
    s = block_allreduce<false>(s, smem);
    for (long long j = threadIdx.x; j < D; j += blockDim.x)
      store_f32(dx + base + j, bwd_out<LOG>(load_f32(g + base + j), load_f32(y + base + j), s));
  }
}

template <typename T, bool LOG>
__global__ void softmax_bwd_cols(const T* g, const T* __restrict__ y, T* dx, long long outer,
                                 long long D, long long inner) {
  const long long cols = outer * inner;
  for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += (long long)gridDim.x * blockDim.x) {
    const long long o = c / inner, i = c - o * inner;
    const long long base = o * D * inner + i;
    float s = 0.f;
    for (long long j = 0; j < D; ++j) s += bwd_term<LOG>(load_f32(g + base + j * inner), load_f32(y + base + j * inner));
    for (long long j = 0; j < D; ++j)
      store_f32(dx + base + j * inner, bwd_out<LOG>(load_f32(g + base + j * inner), load_f32(y + base + j * inner), s));
  }
}
