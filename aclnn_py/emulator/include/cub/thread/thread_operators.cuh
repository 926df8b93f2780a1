// aclnn_py emulator: <cub/thread/thread_operators.cuh> -- everything it declares lives in cub/util_type.cuh.
#include "../util_type.cuh"
