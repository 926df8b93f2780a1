// aclnn_py emulator: <cub/util_deprecated.cuh> -- everything it declares lives in cub/util_type.cuh.
#include "util_type.cuh"
