// Origin: NVIDIA/cuda-samples, Samples/2_Concepts_and_Techniques/reductionMultiBlockCG/
// reductionMultiBlockCG.cu (BSD-3-Clause). Device code as published (comments shortened); the
// kernel got extern "C" linkage for lookup by name.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

__device__ void reduceBlock(double *sdata, const cg::thread_block &cta) {
  const unsigned int tid = cta.thread_rank();
  cg::thread_block_tile<32> tile32 = cg::tiled_partition<32>(cta);

  sdata[tid] = cg::reduce(tile32, sdata[tid], cg::plus<double>());
  cg::sync(cta);

  double beta = 0.0;
  if (cta.thread_rank() == 0) {
    beta = 0;
    for (int i = 0; i < blockDim.x; i += tile32.size()) {
      beta += sdata[i];
    }
    sdata[0] = beta;
  }
  cg::sync(cta);
}

extern "C" __global__ void reduceSinglePassMultiBlockCG(const float *g_idata,
                                                        float *g_odata,
                                                        unsigned int n) {
  // Handle to thread block group
  cg::thread_block block = cg::this_thread_block();
  cg::grid_group grid = cg::this_grid();

  extern double __shared__ sdata[];

  // Stride over grid and add the values to a shared memory buffer
  sdata[block.thread_rank()] = 0;

  for (int i = grid.thread_rank(); i < n; i += grid.size()) {
    sdata[block.thread_rank()] += g_idata[i];
  }

  cg::sync(block);

  // Reduce each block (called once per block)
  reduceBlock(sdata, block);
  // Write out the result to global memory
  if (block.thread_rank() == 0) {
    g_odata[blockIdx.x] = sdata[0];
  }
  cg::sync(grid);

  if (grid.thread_rank() == 0) {
    for (int block = 1; block < gridDim.x; block++) {
      g_odata[0] += g_odata[block];
    }
  }
}
