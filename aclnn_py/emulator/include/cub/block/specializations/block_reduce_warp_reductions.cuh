// aclnn_py emulator: <cub/block/specializations/block_reduce_warp_reductions.cuh> -- provided by block_reduce.cuh (next directory up).
#include "../block_reduce.cuh"
