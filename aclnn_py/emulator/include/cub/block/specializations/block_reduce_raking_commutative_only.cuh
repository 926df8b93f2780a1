// aclnn_py emulator: <cub/block/specializations/block_reduce_raking_commutative_only.cuh> -- provided by block_reduce.cuh (next directory up).
#include "../block_reduce.cuh"
