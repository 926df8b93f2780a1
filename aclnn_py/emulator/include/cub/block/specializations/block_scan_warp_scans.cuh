// aclnn_py emulator: <cub/block/specializations/block_scan_warp_scans.cuh> -- provided by block_scan.cuh (next directory up).
#include "../block_scan.cuh"
