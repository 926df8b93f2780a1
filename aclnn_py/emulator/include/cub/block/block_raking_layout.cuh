#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// cub/block/block_raking_layout.cuh for the aclnn_py CPU emulator: CUB's raking grid -- one slot per
// thread, SEGMENT_LENGTH consecutive slots raked by each of RAKING_THREADS (<= 32) threads, a padding
// slot after each segment when SEGMENT_LENGTH is even and > 2 (CUB 2.x layout; not NVIDIA's code).
#ifndef ACLNN_EMU_CUB_BLOCK_RAKING_LAYOUT_CUH
#define ACLNN_EMU_CUB_BLOCK_RAKING_LAYOUT_CUH
#include "../util_type.cuh"

CUB_NAMESPACE_BEGIN

template <typename T, int BLOCK_THREADS, int LEGACY_PTX_ARCH = 0>
struct BlockRakingLayout {
    enum {
        SHARED_ELEMENTS = BLOCK_THREADS,
        MAX_RAKING_THREADS = CUB_MIN(BLOCK_THREADS, 32),
        SEGMENT_LENGTH = (SHARED_ELEMENTS + MAX_RAKING_THREADS - 1) / MAX_RAKING_THREADS,
        RAKING_THREADS = (SHARED_ELEMENTS + SEGMENT_LENGTH - 1) / SEGMENT_LENGTH,
        HAS_CONFLICTS = (32 % SEGMENT_LENGTH == 0),
        CONFLICT_DEGREE = (HAS_CONFLICTS) ? (MAX_RAKING_THREADS * SEGMENT_LENGTH) / 32 : 1,
        USE_SEGMENT_PADDING = ((SEGMENT_LENGTH & 1) == 0) && (SEGMENT_LENGTH > 2),
        GRID_ELEMENTS = RAKING_THREADS * (SEGMENT_LENGTH + USE_SEGMENT_PADDING),
        UNGUARDED = (SHARED_ELEMENTS % RAKING_THREADS == 0),
    };
    struct alignas(16) _TempStorage {
        T buff[BlockRakingLayout::GRID_ELEMENTS];
    };
    struct TempStorage : Uninitialized<_TempStorage> {};
    // where thread linear_tid places its partial
    static __device__ __forceinline__ T* PlacementPtr(TempStorage& temp_storage, unsigned int linear_tid) {
        unsigned int offset = linear_tid;
        if (USE_SEGMENT_PADDING > 0) offset += offset / SEGMENT_LENGTH;
        return temp_storage.Alias().buff + offset;
    }
    // the segment raking thread linear_tid reads
    static __device__ __forceinline__ T* RakingPtr(TempStorage& temp_storage, unsigned int linear_tid) {
        return temp_storage.Alias().buff + (linear_tid * (SEGMENT_LENGTH + USE_SEGMENT_PADDING));
    }
};

CUB_NAMESPACE_END
#endif

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
