// aclnn_py emulator: <cub/util_debug.cuh> -- everything it declares lives in cub/util_type.cuh.
#include "util_type.cuh"
