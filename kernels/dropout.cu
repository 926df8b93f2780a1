// dropout.cu — the dropout family: aclnnDropoutGenMask / DoMask / Backward / Dropout and the cuDNN
// dropout rows built on them.
//
// Mask convention (CANN's): a UINT8 buffer of align(numel, 128) / 8 bytes; element k (the row-major
// index of the logical tensor) is kept iff bit (k % 8) of byte k / 8 is 1. Padding bits and bytes
// (k >= numel) are 0.
//
// Random numbers: Philox4x32-10 (Salmon et al., SC'11), counter-based: the 4 words of block
// j = k / 4 are philox(counter = (lo(j), hi(j), lo(offset), hi(offset)), key = (lo(seed), hi(seed)));
// element k uses word k % 4 and is kept iff word >= thr, thr = round(p * 2^32) (an exact integer
// compare: P(keep) = 1 - p). So a mask depends on (seed, offset, k) only — the same on the GPU and on
// the emulator, for any grid — and PyTorch-style advancing of `offset` between calls (like
// curand_init(seed, subsequence, offset)) draws fresh, independent masks.
//
// Kernels (grid-stride; one thread per mask byte = 8 elements for the generating kernels):
//   dropout_gen_mask(mask, nbytes, numel, thr, seed, offset)
//   dropout_do_mask<T>(x, mask, y, n, mult)            y = x * mult where the bit is 1, else 0
//   dropout_fused<T>(x, y, mask, n, nbytes, thr, seed, offset, mult)   mask and y in one pass
//   dropout_fused_state<T>(x, y, mask, n, nbytes, thr, states, mult)   the same, (seed, offset) from states
//   dropout_scale<T>(x, y, n, mult)                    y = x * mult (the identity of p = 0 / eval)
// T in {float, __half, __nv_bfloat16} (f32 multiply: mult is a float) and double (f64 multiply: mult
// is a double) — the compute type A = acc_t<T>. The mask bits do not depend on T. The ops module
// instantiates double for dropout_do_mask and dropout_fused_state (the cuDNN face's DOUBLE dropout).
#include "aclnn_common.cuh"

using namespace aclnn;

namespace {

// Compute type: f32 for float / __half / __nv_bfloat16 (exactly load_f32 / store_f32), f64 for double.
template <typename T> struct Acc { using type = float; };
template <> struct Acc<double> { using type = double; };
template <typename T> using acc_t = typename Acc<T>::type;

template <typename T>
__device__ __forceinline__ acc_t<T> load_a(const T* p) {
  if constexpr (sizeof(T) == 8) return *p;
  else return load_f32(p);
}
template <typename T>
__device__ __forceinline__ void store_a(T* p, acc_t<T> v) {
  if constexpr (sizeof(T) == 8) *p = v;
  else store_f32(p, v);
}

// philox4x32_10 comes from aclnn/philox.cuh (via aclnn_common.cuh).

// the 8 keep bits of mask byte b (elements 8b .. 8b+7; bits of elements >= numel are 0)
__device__ __forceinline__ unsigned keep_byte(long long b, long long numel, unsigned long long thr,
                                              unsigned long long seed, unsigned long long offset) {
  unsigned bits = 0u;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const unsigned long long j = 2ull * static_cast<unsigned long long>(b) + h;   // Philox block
    const uint4 r = philox4x32_10(make_uint4(static_cast<unsigned>(j), static_cast<unsigned>(j >> 32),
                                             static_cast<unsigned>(offset), static_cast<unsigned>(offset >> 32)),
                                  make_uint2(static_cast<unsigned>(seed), static_cast<unsigned>(seed >> 32)));
    const unsigned w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const long long k = 8 * b + 4 * h + i;
      if (k < numel && static_cast<unsigned long long>(w[i]) >= thr) bits |= 1u << (4 * h + i);
    }
  }
  return bits;
}

}  // namespace

__global__ void dropout_gen_mask(unsigned char* __restrict__ mask, long long nbytes, long long numel,
                                 unsigned long long thr, unsigned long long seed, unsigned long long offset) {
  ACLNN_GRID_STRIDE_LOOP(b, nbytes) {
    mask[b] = 8 * b < numel ? static_cast<unsigned char>(keep_byte(b, numel, thr, seed, offset)) : 0;
  }
}

template <typename T>
__global__ void dropout_do_mask(const T* x, const unsigned char* __restrict__ mask, T* y, long long n,
                                acc_t<T> mult) {
  ACLNN_GRID_STRIDE_LOOP(k, n) {
    const bool keep = (mask[k >> 3] >> (k & 7)) & 1u;
    store_a(y + k, keep ? load_a(x + k) * mult : acc_t<T>(0));
  }
}

template <typename T>
__global__ void dropout_fused(const T* x, T* y, unsigned char* __restrict__ mask, long long n, long long nbytes,
                              unsigned long long thr, unsigned long long seed, unsigned long long offset,
                              acc_t<T> mult) {
  ACLNN_GRID_STRIDE_LOOP(b, nbytes) {
    const unsigned bits = 8 * b < n ? keep_byte(b, n, thr, seed, offset) : 0u;
    mask[b] = static_cast<unsigned char>(bits);
    for (int i = 0; i < 8; ++i) {
      const long long k = 8 * b + i;
      if (k >= n) break;
      store_a(y + k, (bits >> i) & 1u ? load_a(x + k) * mult : acc_t<T>(0));
    }
  }
}

// The cuDNN face's generator state: a states buffer of 4 u64 words {kDropoutStateMagic, seed, offset,
// 0} in device memory (the one the user allocated for cudnnSetDropoutDescriptor). The stateful forward
// reads (seed, offset) from it at run time; dropout_state_advance then bumps offset (a separate launch,
// so every thread of the forward saw the old value), so successive forwards draw fresh masks.
constexpr unsigned long long kDropoutStateMagic = 0x41434C4E44524F50ull;   // "ACLNDROP"

__global__ void dropout_state_set(unsigned long long* st, unsigned long long seed) {
  if (global_thread_id() == 0) {
    st[0] = kDropoutStateMagic;
    st[1] = seed;
    st[2] = 0ull;
    st[3] = 0ull;
  }
}

__global__ void dropout_state_advance(unsigned long long* st) {
  if (global_thread_id() == 0) st[2] += 1ull;
}

template <typename T>
__global__ void dropout_fused_state(const T* x, T* y, unsigned char* __restrict__ mask, long long n, long long nbytes,
                                    unsigned long long thr, const unsigned long long* __restrict__ st,
                                    acc_t<T> mult) {
  const unsigned long long seed = st[1], offset = st[2];
  ACLNN_GRID_STRIDE_LOOP(b, nbytes) {
    const unsigned bits = 8 * b < n ? keep_byte(b, n, thr, seed, offset) : 0u;
    mask[b] = static_cast<unsigned char>(bits);
    for (int i = 0; i < 8; ++i) {
      const long long k = 8 * b + i;
      if (k >= n) break;
      store_a(y + k, (bits >> i) & 1u ? load_a(x + k) * mult : acc_t<T>(0));
    }
  }
}

// y = x * mult (train = false or p = 0: mult = 1, an exact copy)
template <typename T>
__global__ void dropout_scale(const T* x, T* y, long long n, acc_t<T> mult) {
  ACLNN_GRID_STRIDE_LOOP(k, n) { store_a(y + k, load_a(x + k) * mult); }
}

// the raw generator, for the known-answer test: out[4*i ..] = philox(ctr[i], key[i])
__global__ void philox_kat(const unsigned* __restrict__ in, unsigned* __restrict__ out, int n) {
  ACLNN_GRID_STRIDE_LOOP(i, n) {
    const unsigned* c = in + 6 * i;
    const uint4 r = philox4x32_10(make_uint4(c[0], c[1], c[2], c[3]), make_uint2(c[4], c[5]));
    out[4 * i] = r.x;
    out[4 * i + 1] = r.y;
    out[4 * i + 2] = r.z;
    out[4 * i + 3] = r.w;
  }
}
