// Origin: karpathy/llm.c, train_gpt2.cu (MIT): layernorm_forward_kernel3 as published, and the
// warp-per-row softmax of its attention (softmax_forward_kernel5 style: warp max and sum with
// cg::reduce and cg::greater / cg::plus). extern "C" added for lookup by name.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

extern "C" __global__ void layernorm_forward_kernel3(float* __restrict__ out, float* __restrict__ mean, float* __restrict__ rstd,
                                    const float*  __restrict__ inp, const float*  __restrict__ weight,
                                    const float* __restrict__ bias, int N, int C) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int idx = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    if(idx >= N) {
        return;
    }

    // the row of input that this group of threads is responsible for
    const float* x = inp + idx * C;

    // mean
    float sum = 0.0f;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) {
        sum += x[i];
    }
    sum = cg::reduce(warp, sum, cg::plus<float>{});
    float m = sum / C;
    if(warp.thread_rank() == 0 && mean != nullptr) {
        __stcs(mean + idx, m);
    }

    // rstd
    sum = 0.0f;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) {
        float diff = x[i] - m;
        sum += diff * diff;
    }
    sum = cg::reduce(warp, sum, cg::plus<float>{});
    float s = rsqrtf(sum / C + 1e-5f);
    if(warp.thread_rank() == 0 && rstd != nullptr) {
        __stcs(rstd + idx, s);
    }

    // final normalization and scaling by weight/bias
    float* o = out + idx * C;
    for (int c = warp.thread_rank(); c < C; c += warp.size()) {
        // load and store using the .cs "streaming" hint to the compiler,
        // indicating that this data will not be reused soon, and can be streamed through the caches
        // this allows the threads to get more cache-hits for the (shared) weight and bias parameters
        float n = s * (__ldcs(x+c) - m);
        __stcs(o + c, n * weight[c] + bias[c]);
    }
}

extern "C" __global__ void softmax_rows_warp(float* out, const float* inp, int N, int C) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int idx = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    if (idx >= N) return;
    const float* x = inp + idx * C;
    float maxval = -INFINITY;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) maxval = fmaxf(maxval, x[i]);
    maxval = cg::reduce(warp, maxval, cg::greater<float>{});
    float sumval = 0.0f;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) sumval += expf(x[i] - maxval);
    sumval = cg::reduce(warp, sumval, cg::plus<float>{});
    for (int i = warp.thread_rank(); i < C; i += warp.size()) out[idx * C + i] = expf(x[i] - maxval) / sumval;
}
