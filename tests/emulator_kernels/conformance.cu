// name_expressions: axpb<float>, axpb<__half>, axpb<__nv_bfloat16>, warp_sum_t<float>, warp_sum_t<__half>, warp_sum_t<__nv_bfloat16>, block_sum_t<float, 128>, block_sum_t<double, 256>, block_sum_t<float, 1024>
//
// Conformance kernels for the host CUDA emulator (tests/test_emulator.py). Every kernel here is
// valid CUDA: tests/test_nvrtc.py compiles this file with NVRTC for sm_80 and sm_90.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#define FULL_MASK 0xffffffffu

// ---- block reduction through shared memory (blockDim.x == 256) ----
extern "C" __global__ void block_reduce_sum(const float* __restrict__ x, float* __restrict__ out, int n) {
    __shared__ float s[256];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int o = blockDim.x / 2; o > 0; o >>= 1) {
        if (threadIdx.x < o) s[threadIdx.x] += s[threadIdx.x + o];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

// ---- warp reductions ----
__device__ __forceinline__ float warp_sum_xor(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
    return v;
}
__device__ __forceinline__ float warp_sum_down(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(FULL_MASK, v, o);
    return v;
}
extern "C" __global__ void warp_reduce(const float* x, float* out_xor, float* out_down) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float v = x[i];
    out_xor[i] = warp_sum_xor(v);    // every lane gets the warp's sum
    out_down[i] = warp_sum_down(v);  // lane 0 gets the warp's sum
}

// ---- a shuffle executed by only the lower half of each warp (divergence, mask 0x0000ffff) ----
extern "C" __global__ void half_warp_shuffle(const int* x, int* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x & 31;
    int v = x[i];
    if (lane < 16) {
        int s = v;
        for (int o = 8; o > 0; o >>= 1) s += __shfl_xor_sync(0x0000ffffu, s, o, 16);
        const int d = __shfl_down_sync(0x0000ffffu, v, 4, 16);  // lanes 12..15 keep their own value
        const int u = __shfl_up_sync(0x0000ffffu, v, 1, 16);    // lane 0 keeps its own value
        const int b = __shfl_sync(0x0000ffffu, v, 3, 16);       // broadcast of lane 3
        out[i] = s * 1000000 + (d - v) * 10000 + (u - v) * 100 + b;
    } else {
        out[i] = -v;
    }
}

// ---- threads that return before a __syncthreads the others reach ----
extern "C" __global__ void early_exit(const float* x, float* out, int* exited, int keep) {
    __shared__ float s[256];
    const int t = threadIdx.x;
    if (t >= keep) {
        atomicAdd(exited, 1);
        return;
    }
    s[t] = x[blockIdx.x * blockDim.x + t];
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = s[keep - 1 - t];
    __syncthreads();
    __syncthreads();
}

// ---- dynamic shared memory ----
extern "C" __global__ void dyn_smem_reverse(float* x, int n) {
    extern __shared__ float sdata[];
    const int t = threadIdx.x;
    float* base = x + blockIdx.x * n;
    for (int k = t; k < n; k += blockDim.x) sdata[k] = base[k];
    __syncthreads();
    for (int k = t; k < n; k += blockDim.x) base[k] = sdata[n - 1 - k];
}

extern __shared__ __align__(16) unsigned char g_smem_bytes[];  // namespace-scope, aligned form

extern "C" __global__ void dyn_smem_aligned(const float4* in, float4* out) {
    float4* s = reinterpret_cast<float4*>(g_smem_bytes);
    const int t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    const float4 v = s[blockDim.x - 1 - t];
    out[blockIdx.x * blockDim.x + t] = make_float4(v.w, v.z, v.y, v.x);
}

extern "C" __global__ void smem_alignment(unsigned long long* out) {
    extern __shared__ __align__(16) unsigned char smem_a[];
    extern __shared__ double smem_b[];
    if (threadIdx.x == 0) {
        out[0] = reinterpret_cast<unsigned long long>(smem_a) % 16;
        out[1] = reinterpret_cast<unsigned long long>(smem_a) == reinterpret_cast<unsigned long long>(smem_b);
        out[2] = reinterpret_cast<unsigned long long>(g_smem_bytes) == reinterpret_cast<unsigned long long>(smem_b);
    }
}

extern "C" __global__ void smem_poison(unsigned int* out, int n) {
    extern __shared__ unsigned int uninit[];
    if (threadIdx.x == 0)
        for (int k = 0; k < n; ++k) out[blockIdx.x * n + k] = uninit[k];  // read before any write
    __syncthreads();
    for (int k = threadIdx.x; k < n; k += blockDim.x) uninit[k] = k;  // dirty it for the next block
}

// ---- templates ----
template <typename T>
__global__ void axpb(const T* x, T* y, float a, float b, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = T(static_cast<float>(x[i]) * a + b);
}

template <typename T>
__global__ void warp_sum_t(const T* x, float* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    T v = x[i];
    float acc = static_cast<float>(v);
    for (int o = 16; o > 0; o >>= 1) v = __shfl_xor_sync(FULL_MASK, v, o);  // ends at lane ^ 31 (T itself)
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(FULL_MASK, acc, o);
    out[2 * i] = acc;
    out[2 * i + 1] = static_cast<float>(v);
}

template <typename T, int BLOCK>
__global__ void block_sum_t(const T* x, T* out) {
    __shared__ T s[BLOCK];
    s[threadIdx.x] = x[blockIdx.x * BLOCK + threadIdx.x];
    __syncthreads();
#pragma unroll
    for (int o = BLOCK / 2; o > 0; o >>= 1) {
        if (threadIdx.x < o) s[threadIdx.x] += s[threadIdx.x + o];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

// ---- atomics from many blocks (blocks run in parallel on the emulator's thread pool) ----
extern "C" __global__ void histogram(const int* bins, const float* w, float* hist, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&hist[bins[i]], w[i]);
}

extern "C" __global__ void atomics_misc(unsigned int* u, int* s, unsigned long long* ull, double* d, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomicInc(&u[0], 9u);            // wraps to 0 after 9
    atomicMax(&s[0], i);
    atomicMin(&s[1], -i);
    atomicAdd(&ull[0], 3ull);
    atomicAdd(d, 0.5);
    atomicOr(&u[1], 1u << (i % 32));
    atomicSub(&s[2], 2);
    atomicDec(&u[2], 4u);
    unsigned int old = atomicCAS(&u[3], 0u, static_cast<unsigned int>(i + 1));  // first one wins
    if (old == 0u) atomicExch(&u[4], static_cast<unsigned int>(i + 1));
}

// ---- votes ----
extern "C" __global__ void votes(const int* pred, unsigned int* ballot, int* any, int* all, unsigned int* active) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int p = pred[i];
    ballot[i] = __ballot_sync(FULL_MASK, p);
    any[i] = __any_sync(FULL_MASK, p);
    all[i] = __all_sync(FULL_MASK, p);
    active[i] = __activemask();
    const unsigned int c = __syncthreads_count(p);
    if (threadIdx.x == 0) ballot[i] = (ballot[i] & 0xffffu) | (c << 16);
}

// ---- shuffles with width < 32 ----
extern "C" __global__ void shfl_width(const int* x, int* out, int width) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int v = x[i];
    out[4 * i + 0] = __shfl_sync(FULL_MASK, v, 5, width);
    out[4 * i + 1] = __shfl_up_sync(FULL_MASK, v, 3, width);
    out[4 * i + 2] = __shfl_down_sync(FULL_MASK, v, 3, width);
    out[4 * i + 3] = __shfl_xor_sync(FULL_MASK, v, 6, width);
}

extern "C" __global__ void shfl_types(const double* d, const long long* l, double* od, long long* ol) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    od[i] = __shfl_xor_sync(FULL_MASK, d[i], 1);
    ol[i] = __shfl_down_sync(FULL_MASK, l[i], 2);
}

// ---- partial warps (blockDim not a multiple of 32) ----
extern "C" __global__ void partial_warp(const float* x, float* sum_down, unsigned int* ballot, int* all) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(FULL_MASK, v, o);
    sum_down[i] = v;
    ballot[i] = __ballot_sync(FULL_MASK, 1);
    all[i] = __all_sync(FULL_MASK, x[i] > 0.0f);
    __syncwarp();
}

// ---- a plain-loop kernel (no barrier, no collective) ----
__device__ float poly(float v) { return fmaf(v, v, 1.0f); }
extern "C" __global__ void saxpy_plain(float a, const float* x, float* y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = a * x[i] + poly(y[i]) - 1.0f - y[i] * y[i];
}

// a kernel whose barrier is two calls away, inside a functor: must run with fibers
struct BlockBarrier {
    __device__ void operator()() const { __syncthreads(); }
};
__device__ void deep_sync() { BlockBarrier()(); }
__device__ void via_helper(float* s, int t) {
    s[t] = static_cast<float>(t);
    deep_sync();
}
extern "C" __global__ void indirect_sync(float* out) {
    __shared__ float s[64];
    via_helper(s, threadIdx.x);
    out[threadIdx.x] = s[63 - threadIdx.x];
}

// 2D/3D blocks and grids
extern "C" __global__ void index_3d(int* out) {
    const int bx = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    const int tx = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const int nt = blockDim.x * blockDim.y * blockDim.z;
    out[bx * nt + tx] = bx * 10000 + tx;
}

// a struct parameter passed by value
struct Affine {
    float scale;
    float shift;
    int n;
};
extern "C" __global__ void affine(Affine p, const float* x, float* y) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n) y[i] = x[i] * p.scale + p.shift;
}

// math and intrinsics against NumPy
extern "C" __global__ void math_funcs(const float* x, float* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float v = x[i];
    float* o = out + 16 * i;
    o[0] = expf(v);
    o[1] = logf(fabsf(v) + 1.0f);
    o[2] = tanhf(v);
    o[3] = rsqrtf(fabsf(v) + 1.0f);
    o[4] = erff(v);
    o[5] = __expf(v);
    o[6] = __fdividef(v, 3.0f);
    o[7] = __saturatef(v);
    o[8] = static_cast<float>(__float2int_rn(v * 10.0f));
    o[9] = static_cast<float>(__popc(__float_as_uint(v)));
    o[10] = static_cast<float>(__clz(static_cast<int>(fabsf(v) * 1000.0f)));
    o[11] = fmaxf(v, 0.25f) + min(3, 4) + max(2.0f, 1.0f);
    o[12] = __int_as_float(__float_as_int(v));
    o[13] = static_cast<float>(__ffs(static_cast<int>(fabsf(v) * 1000.0f)));
    o[14] = copysignf(1.0f, v) * floorf(fabsf(v) * 4.0f);
    o[15] = static_cast<float>(__brev(static_cast<unsigned int>(i)) >> 24);
}

// assert inside a kernel
extern "C" __global__ void checked(const int* x, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) assert(x[i] >= 0);
}

// __activemask inside a divergent branch, then a reconverging __syncwarp
extern "C" __global__ void active_branch(const int* x, int* out, unsigned int* masks, int n) {
    const int i = threadIdx.x;
    if (i < n) {
        const unsigned int m = __activemask();
        int v = x[i];
        for (int o = 16; o > 0; o >>= 1) {
            // read only lanes named in the mask (a source outside it is undefined behaviour,
            // which the emulator reports: see errors.cu shfl_outside_mask)
            const int w = __shfl_sync(m, v, i + o < n ? i + o : i);
            if (i + o < n) v += w;
        }
        masks[i] = m;
        out[i] = v;
    }
    __syncwarp();
}

// the upper half-warp runs a shuffle of its own while the lower half already waits in a
// full-warp __syncwarp (legal with independent thread scheduling)
extern "C" __global__ void upper_half_then_syncwarp(const int* x, int* out) {
    const int lane = threadIdx.x & 31;
    int v = x[threadIdx.x];
    if (lane >= 16) v += __shfl_xor_sync(0xffff0000u, v, 1);
    __syncwarp();
    v += __shfl_xor_sync(0xffffffffu, v, 16);
    out[threadIdx.x] = v;
}
