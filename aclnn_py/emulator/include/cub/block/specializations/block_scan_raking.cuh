// aclnn_py emulator: <cub/block/specializations/block_scan_raking.cuh> -- provided by block_scan.cuh (next directory up).
#include "../block_scan.cuh"
