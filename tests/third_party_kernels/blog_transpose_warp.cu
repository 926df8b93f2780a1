// Origin: NVIDIA developer blog "An Efficient Matrix Transpose in CUDA C/C++" (Mark Harris):
// transposeNoBankConflicts with TILE_DIM 32 / BLOCK_ROWS 8, and "Using CUDA Warp-Level
// Primitives" (Yuan Lin, Vinod Grover): the __shfl_down_sync warp reduction. As published,
// extern "C" added.
const int TILE_DIM = 32;
const int BLOCK_ROWS = 8;

extern "C" __global__ void transposeNoBankConflicts(float *odata, const float *idata)
{
  __shared__ float tile[TILE_DIM][TILE_DIM+1];

  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  int width = gridDim.x * TILE_DIM;

  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
     tile[threadIdx.y+j][threadIdx.x] = idata[(y+j)*width + x];

  __syncthreads();

  x = blockIdx.y * TILE_DIM + threadIdx.x;  // transpose block offset
  y = blockIdx.x * TILE_DIM + threadIdx.y;

  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
     odata[(y+j)*width + x] = tile[threadIdx.x][threadIdx.y + j];
}

#define FULL_MASK 0xffffffff
extern "C" __global__ void warp_sums(const float* in, float* out)
{
  float val = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int offset = 16; offset > 0; offset /= 2)
      val += __shfl_down_sync(FULL_MASK, val, offset);
  if ((threadIdx.x & 31) == 0) out[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = val;
}
