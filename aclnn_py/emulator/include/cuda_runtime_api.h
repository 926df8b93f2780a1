// Emulator shim for <cuda_runtime_api.h>: everything lives in cuda_emu.h (aclnn_py host CUDA emulator).
#include "cuda_emu.h"
