// aclnn_py emulator: <cub/warp/specializations/warp_reduce_smem.cuh> -- provided by warp_reduce.cuh (next directory up).
#include "../warp_reduce.cuh"
