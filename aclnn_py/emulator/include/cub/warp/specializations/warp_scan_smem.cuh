// aclnn_py emulator: <cub/warp/specializations/warp_scan_smem.cuh> -- provided by warp_scan.cuh (next directory up).
#include "../warp_scan.cuh"
