// aclnn_py emulator: <cub/warp/specializations/warp_scan_shfl.cuh> -- provided by warp_scan.cuh (next directory up).
#include "../warp_scan.cuh"
