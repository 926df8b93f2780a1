#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// aclnn_py emulator: <cub/warp/specializations/warp_reduce_shfl.cuh> -- provided by warp_reduce.cuh (next directory up).
#include "../warp_reduce.cuh"

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
