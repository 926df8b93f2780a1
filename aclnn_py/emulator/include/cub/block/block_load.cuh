#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// cub/block/block_load.cuh for the aclnn_py CPU emulator: cub::BlockLoad and the LoadDirect*
// functions (data movement only, so results equal CUB's). Not NVIDIA's code; see cub/util_type.cuh.
// Every algorithm returns the blocked arrangement (thread t gets items t*ITEMS_PER_THREAD + i) except
// BLOCK_LOAD_STRIPED (striped: items i*BLOCK_THREADS + t). With valid_items, items past the end are
// not read (left as they were, or set to oob_default when one is given). VECTORIZE loads like
// DIRECT (the same values); TRANSPOSE / WARP_TRANSPOSE(_TIMESLICED) load striped / warp-striped
// and exchange through shared memory (block_exchange.cuh).
#ifndef ACLNN_EMU_CUB_BLOCK_LOAD_CUH
#define ACLNN_EMU_CUB_BLOCK_LOAD_CUH
#include "../util_type.cuh"
#include "block_exchange.cuh"

CUB_NAMESPACE_BEGIN

template <typename InputT, int ITEMS_PER_THREAD, typename InputIteratorT>
__device__ __forceinline__ void LoadDirectBlocked(int linear_tid, InputIteratorT block_itr, InputT (&items)[ITEMS_PER_THREAD]) {
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) items[i] = block_itr[(linear_tid * ITEMS_PER_THREAD) + i];
}
template <typename InputT, int ITEMS_PER_THREAD, typename InputIteratorT>
__device__ __forceinline__ void LoadDirectBlocked(int linear_tid, InputIteratorT block_itr, InputT (&items)[ITEMS_PER_THREAD],
                                                  int valid_items) {
    for (int i = 0; i < ITEMS_PER_THREAD; ++i)
        if ((linear_tid * ITEMS_PER_THREAD) + i < valid_items) items[i] = block_itr[(linear_tid * ITEMS_PER_THREAD) + i];
}
template <typename InputT, typename DefaultT, int ITEMS_PER_THREAD, typename InputIteratorT>
__device__ __forceinline__ void LoadDirectBlocked(int linear_tid, InputIteratorT block_itr, InputT (&items)[ITEMS_PER_THREAD],
                                                  int valid_items, DefaultT oob_default) {
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) items[i] = oob_default;
    LoadDirectBlocked(linear_tid, block_itr, items, valid_items);
}
template <typename T, int ITEMS_PER_THREAD>
__device__ __forceinline__ void LoadDirectBlockedVectorized(int linear_tid, T* block_ptr, T (&items)[ITEMS_PER_THREAD]) {
    LoadDirectBlocked(linear_tid, block_ptr, items);
}
template <int BLOCK_THREADS, typename InputT, int ITEMS_PER_THREAD, typename InputIteratorT>
__device__ __forceinline__ void LoadDirectStriped(int linear_tid, InputIteratorT block_itr, InputT (&items)[ITEMS_PER_THREAD]) {
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) items[i] = block_itr[linear_tid + i * BLOCK_THREADS];
}
template <int BLOCK_THREADS, typename InputT, int ITEMS_PER_THREAD, typename InputIteratorT>
__device__ __forceinline__ void LoadDirectStriped(int linear_tid, InputIteratorT block_itr, InputT (&items)[ITEMS_PER_THREAD],
                                                  int valid_items) {
    for (int i = 0; i < ITEMS_PER_THREAD; ++i)
        if (linear_tid + (i * BLOCK_THREADS) < valid_items) items[i] = block_itr[linear_tid + i * BLOCK_THREADS];
}
template <int BLOCK_THREADS, typename InputT, typename DefaultT, int ITEMS_PER_THREAD, typename InputIteratorT>
__device__ __forceinline__ void LoadDirectStriped(int linear_tid, InputIteratorT block_itr, InputT (&items)[ITEMS_PER_THREAD],
                                                  int valid_items, DefaultT oob_default) {
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) items[i] = oob_default;
    LoadDirectStriped<BLOCK_THREADS>(linear_tid, block_itr, items, valid_items);
}
template <typename InputT, int ITEMS_PER_THREAD, typename InputIteratorT>
__device__ __forceinline__ void LoadDirectWarpStriped(int linear_tid, InputIteratorT block_itr, InputT (&items)[ITEMS_PER_THREAD]) {
    const int tid = linear_tid & 31, wid = linear_tid >> 5, warp_offset = wid * 32 * ITEMS_PER_THREAD;
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) items[i] = block_itr[warp_offset + tid + (i * 32)];
}
template <typename InputT, int ITEMS_PER_THREAD, typename InputIteratorT>
__device__ __forceinline__ void LoadDirectWarpStriped(int linear_tid, InputIteratorT block_itr, InputT (&items)[ITEMS_PER_THREAD],
                                                      int valid_items) {
    const int tid = linear_tid & 31, wid = linear_tid >> 5, warp_offset = wid * 32 * ITEMS_PER_THREAD;
    for (int i = 0; i < ITEMS_PER_THREAD; ++i)
        if (warp_offset + tid + (i * 32) < valid_items) items[i] = block_itr[warp_offset + tid + (i * 32)];
}
template <typename InputT, typename DefaultT, int ITEMS_PER_THREAD, typename InputIteratorT>
__device__ __forceinline__ void LoadDirectWarpStriped(int linear_tid, InputIteratorT block_itr, InputT (&items)[ITEMS_PER_THREAD],
                                                      int valid_items, DefaultT oob_default) {
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) items[i] = oob_default;
    LoadDirectWarpStriped(linear_tid, block_itr, items, valid_items);
}

enum BlockLoadAlgorithm {
    BLOCK_LOAD_DIRECT,
    BLOCK_LOAD_STRIPED,
    BLOCK_LOAD_VECTORIZE,
    BLOCK_LOAD_TRANSPOSE,
    BLOCK_LOAD_WARP_TRANSPOSE,
    BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED,
};

template <typename InputT, int BLOCK_DIM_X, int ITEMS_PER_THREAD, BlockLoadAlgorithm ALGORITHM = BLOCK_LOAD_DIRECT,
          int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockLoad {
    enum { BLOCK_THREADS = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z };
    static constexpr bool EXCHANGES = ALGORITHM == BLOCK_LOAD_TRANSPOSE || ALGORITHM == BLOCK_LOAD_WARP_TRANSPOSE ||
                                      ALGORITHM == BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED;
    static constexpr bool WARP = ALGORITHM == BLOCK_LOAD_WARP_TRANSPOSE || ALGORITHM == BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED;
    static_assert(!WARP || BLOCK_THREADS % 32 == 0, "BLOCK_THREADS must be a multiple of the warp size");
    using Exchange = BlockExchange<InputT, BLOCK_DIM_X, ITEMS_PER_THREAD, ALGORITHM == BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED,
                                   BLOCK_DIM_Y, BLOCK_DIM_Z>;
    using _TempStorage = std::conditional_t<EXCHANGES, typename Exchange::TempStorage, NullType>;
    __device__ __forceinline__ _TempStorage& PrivateStorage() {
        __shared__ _TempStorage private_storage;
        return private_storage;
    }
    _TempStorage& temp_storage;
    int linear_tid;

    template <typename... Guard>
    __device__ __forceinline__ void LoadImpl(InputT (&items)[ITEMS_PER_THREAD], auto block_itr, Guard... guard) {
        if constexpr (ALGORITHM == BLOCK_LOAD_STRIPED) {
            LoadDirectStriped<BLOCK_THREADS>(linear_tid, block_itr, items, guard...);
        } else if constexpr (ALGORITHM == BLOCK_LOAD_TRANSPOSE) {
            LoadDirectStriped<BLOCK_THREADS>(linear_tid, block_itr, items, guard...);
            Exchange(temp_storage).StripedToBlocked(items, items);
        } else if constexpr (WARP) {
            LoadDirectWarpStriped(linear_tid, block_itr, items, guard...);
            Exchange(temp_storage).WarpStripedToBlocked(items, items);
        } else {
            LoadDirectBlocked(linear_tid, block_itr, items, guard...);
        }
    }

public:
    struct TempStorage : Uninitialized<_TempStorage> {};
    __device__ __forceinline__ BlockLoad() : temp_storage(PrivateStorage()), linear_tid(RowMajorTid(BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z)) {}
    __device__ __forceinline__ BlockLoad(TempStorage& temp_storage)
        : temp_storage(temp_storage.Alias()), linear_tid(RowMajorTid(BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z)) {}

    template <typename InputIteratorT>
    __device__ __forceinline__ void Load(InputIteratorT block_itr, InputT (&items)[ITEMS_PER_THREAD]) {
        LoadImpl(items, block_itr);
    }
    template <typename InputIteratorT>
    __device__ __forceinline__ void Load(InputIteratorT block_itr, InputT (&items)[ITEMS_PER_THREAD], int valid_items) {
        LoadImpl(items, block_itr, valid_items);
    }
    template <typename InputIteratorT, typename DefaultT>
    __device__ __forceinline__ void Load(InputIteratorT block_itr, InputT (&items)[ITEMS_PER_THREAD], int valid_items,
                                         DefaultT oob_default) {
        LoadImpl(items, block_itr, valid_items, oob_default);
    }
};

CUB_NAMESPACE_END
#endif

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
