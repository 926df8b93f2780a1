// Emulator shim for <vector_types.h>: everything lives in cuda_emu.h (aclnn_py host CUDA emulator).
#include "cuda_emu.h"
