#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// Emulator shim for <device_functions.h>: everything lives in cuda_emu.h (aclnn_py host CUDA emulator).
#include "cuda_emu.h"

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
