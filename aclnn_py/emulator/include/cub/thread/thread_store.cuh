// aclnn_py emulator: <cub/thread/thread_store.cuh> -- see thread_load.cuh.
#include "thread_load.cuh"
