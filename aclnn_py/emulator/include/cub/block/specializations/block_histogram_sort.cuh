// aclnn_py emulator: <cub/block/specializations/block_histogram_sort.cuh> -- provided by block_histogram.cuh (next directory up).
#include "../block_histogram.cuh"
