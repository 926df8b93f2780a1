// Emulator shim for <sm_60_atomic_functions.h>: everything lives in cuda_emu.h (aclnn_py host CUDA emulator).
#include "cuda_emu.h"
