#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// aclnn_py emulator: <cub/util_ptx.cuh> -- everything it declares lives in cub/util_type.cuh.
#include "util_type.cuh"

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
