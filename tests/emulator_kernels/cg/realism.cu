// In a subdirectory: the NVRTC compile check (tests/test_nvrtc.py) globs emulator_kernels/*.cu and has
// no CCCL headers (<nv/target>), which CUDA 13's cooperative_groups.h needs; CuPy adds them itself.
// Features real third-party kernels use (tests/test_emulator_realism.py).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuComplex.h>
namespace cg = cooperative_groups;

__constant__ float c_scale[4];
__device__ int d_counter;

// block sum: tile reduce with cg::reduce, then the tiles' partials through shared memory
template <int TILE>
__global__ void cg_block_sum(const float* x, float* out, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<TILE> tile = cg::tiled_partition<TILE>(block);
    __shared__ float partial[1024 / TILE];
    float v = 0.f;
    for (int i = block.group_index().x * block.size() + block.thread_rank(); i < n; i += block.size() * gridDim.x) v += x[i];
    v = cg::reduce(tile, v, cg::plus<float>());
    if (tile.thread_rank() == 0) partial[tile.meta_group_rank()] = v;
    block.sync();
    if (block.thread_rank() == 0) {
        float s = 0.f;
        for (unsigned t = 0; t < tile.meta_group_size(); ++t) s += partial[t];
        out[blockIdx.x] = s;
    }
}
template __global__ void cg_block_sum<32>(const float*, float*, int);
template __global__ void cg_block_sum<16>(const float*, float*, int);
template __global__ void cg_block_sum<4>(const float*, float*, int);

// tile max / min with shfl_down and less/greater, ballot/any/all
extern "C" __global__ void cg_tile_ops(const int* x, int* mx, int* mn, unsigned* bal, int* anyall) {
    auto tile = cg::tiled_partition<8>(cg::this_thread_block());
    int v = x[threadIdx.x];
    int a = cg::reduce(tile, v, cg::greater<int>());
    int b = cg::reduce(tile, v, cg::less<int>());
    unsigned bb = tile.ballot(v % 2 == 0);
    int an = tile.any(v > 100), al = tile.all(v >= 0);
    int down = tile.shfl_down(v, 1);
    if (tile.thread_rank() == 0) {
        mx[tile.meta_group_rank()] = a;
        mn[tile.meta_group_rank()] = b;
        bal[tile.meta_group_rank()] = bb;
        anyall[tile.meta_group_rank()] = an * 2 + al + 4 * (down == x[threadIdx.x + 1]);
    }
}

// 64-thread tiles: sync + ranks
extern "C" __global__ void cg_big_tile(int* out) {
    auto tile = cg::tiled_partition<64>(cg::this_thread_block());
    __shared__ int s[256];
    s[threadIdx.x] = threadIdx.x;
    tile.sync();
    int base = tile.meta_group_rank() * 64;
    out[threadIdx.x] = s[base + (63 - tile.thread_rank())] + 1000 * tile.meta_group_rank();
}

// tiles of 64..256 threads with collectives: cg::reduce, scans, shfl, any/all, the form of the
// cuda-samples reduction's multi_warp_cg_reduce (block_tile_memory scratch, then tiled_partition)
template <unsigned TILE>
__global__ void cg_big_tile_collectives(const int* x, const float* f, int* isum, float* fmax, int* incl, int* excl,
                                        int* sh, int* anyall) {
    __shared__ cg::block_tile_memory<256> scratch;
    cg::thread_block block = cg::this_thread_block(scratch);
    auto tile = cg::tiled_partition<TILE>(block);
    const unsigned t = block.thread_rank();
    isum[t] = cg::reduce(tile, x[t], cg::plus<int>());
    fmax[t] = cg::reduce(tile, f[t], cg::greater<float>());
    incl[t] = cg::inclusive_scan(tile, x[t]);
    excl[t] = cg::exclusive_scan(tile, x[t], cg::plus<int>());
    sh[t] = tile.shfl(x[t], (tile.thread_rank() + 5) % TILE);
    anyall[t] = 2 * tile.any(x[t] == 7) + tile.all(x[t] >= 0);
}

// coalesced_threads: warp-aggregated atomic increment (NVIDIA developer blog pattern)
__device__ int atomicAggInc(int* ctr) {
    auto g = cg::coalesced_threads();
    int warp_res;
    if (g.thread_rank() == 0) warp_res = atomicAdd(ctr, static_cast<int>(g.size()));
    return g.shfl(warp_res, 0) + g.thread_rank();
}
extern "C" __global__ void filter_k(int* dst, int* nres, const int* src, int n) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < n && src[i] > 0) dst[atomicAggInc(nres)] = src[i];
}

// labeled_partition: per-label sums inside a warp
extern "C" __global__ void labeled_sums(const int* labels, const int* vals, int* out) {
    auto warp = cg::tiled_partition<32>(cg::this_thread_block());
    auto g = cg::labeled_partition(warp, labels[threadIdx.x]);
    int s = cg::reduce(g, vals[threadIdx.x], cg::plus<int>());
    out[threadIdx.x] = s * 100 + static_cast<int>(g.size());
}

// grid-wide sync: two phases over the whole grid (cooperative launch)
extern "C" __global__ void grid_two_phase(float* buf, float* out, int n) {
    cg::grid_group grid = cg::this_grid();
    for (unsigned long long i = grid.thread_rank(); i < (unsigned long long)n; i += grid.size()) buf[i] = static_cast<float>(i);
    grid.sync();
    for (unsigned long long i = grid.thread_rank(); i < (unsigned long long)n; i += grid.size()) out[i] = buf[n - 1 - i] + buf[i];
}

// constant memory set from the host
extern "C" __global__ void use_constants(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * c_scale[i % 4];
    if (i == 0) atomicAdd(&d_counter, 1);
}

// complex arithmetic with cuComplex.h
extern "C" __global__ void cmul(const cuFloatComplex* a, const cuFloatComplex* b, cuFloatComplex* c, float* absout, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        cuFloatComplex p = cuCmulf(a[i], b[i]);
        c[i] = cuCaddf(cuCdivf(p, b[i]), make_cuFloatComplex(0.f, 0.f));
        absout[i] = cuCabsf(p);
    }
}
extern "C" __global__ void zmul(const cuDoubleComplex* a, const cuDoubleComplex* b, cuDoubleComplex* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = cuCfma(a[i], b[i], cuConj(a[i]));
}

// every spelling of dynamic shared memory
extern "C" __global__ void ext_shared_1(float* out) { extern __shared__ float a[]; a[threadIdx.x] = threadIdx.x; __syncthreads(); out[threadIdx.x] = a[blockDim.x - 1 - threadIdx.x]; }
extern "C" __global__ void ext_shared_2(float* out) { extern float __shared__ a[]; a[threadIdx.x] = threadIdx.x; __syncthreads(); out[threadIdx.x] = a[blockDim.x - 1 - threadIdx.x]; }
extern "C" __global__ void ext_shared_3(float* out) { __shared__ extern float a[]; a[threadIdx.x] = threadIdx.x; __syncthreads(); out[threadIdx.x] = a[blockDim.x - 1 - threadIdx.x]; }
extern "C" __global__ void ext_shared_4(float* out) {
    extern __shared__ __align__(16) unsigned char raw[];
    float* a = reinterpret_cast<float*>(raw);
    a[threadIdx.x] = threadIdx.x; __syncthreads(); out[threadIdx.x] = a[blockDim.x - 1 - threadIdx.x];
}

// partial-mask shuffles: legal (sources inside the mask) and undefined (a live lane outside it)
extern "C" __global__ void shfl_partial_ok(const int* x, int* out) {
    int v = x[threadIdx.x];
    if (threadIdx.x < 16) {
        for (int o = 8; o > 0; o >>= 1) v += __shfl_down_sync(0x0000ffffu, v, o, 16);
    }
    out[threadIdx.x] = v;
}
extern "C" __global__ void shfl_outside_mask(const int* x, int* out) {
    int v = x[threadIdx.x];
    if (threadIdx.x < 8) {
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0x000000ffu, v, o);   // lane 0 reads lane 16
    }
    out[threadIdx.x] = v;
}

// __CUDA_ARCH__ branches
extern "C" __global__ void arch_value(int* out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    out[0] = __CUDA_ARCH__;
#elif defined(__CUDA_ARCH__)
    out[0] = -__CUDA_ARCH__;
#else
    out[0] = 0;
#endif
}
