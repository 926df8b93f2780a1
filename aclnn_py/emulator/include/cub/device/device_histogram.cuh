#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// aclnn_py emulator: <cub/device/device_histogram.cuh> -- device-wide CUB algorithms are host APIs that launch
// their own kernels, which the emulator (like NVRTC) cannot compile; see cub/cub.cuh.
#error "<cub/device/device_histogram.cuh>: device-wide CUB algorithms (cub::Device*) are host APIs and not supported by the aclnn_py CUDA emulator, which provides only CUB's block- and warp-level collectives (cub::BlockReduce, BlockScan, BlockLoad, BlockStore, BlockExchange, BlockRadixSort, BlockHistogram, BlockDiscontinuity, WarpReduce, WarpScan)"

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
