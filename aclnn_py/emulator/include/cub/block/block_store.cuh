#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// cub/block/block_store.cuh for the aclnn_py CPU emulator: cub::BlockStore and the StoreDirect*
// functions (data movement only, so results equal CUB's). Not NVIDIA's code; see cub/util_type.cuh.
// The items are in the blocked arrangement (BLOCK_STORE_STRIPED: striped); with valid_items only
// the first valid_items of the tile are written (the exchanging algorithms take thread 0's
// valid_items, as CUB does).
#ifndef ACLNN_EMU_CUB_BLOCK_STORE_CUH
#define ACLNN_EMU_CUB_BLOCK_STORE_CUH
#include "../util_type.cuh"
#include "block_exchange.cuh"

CUB_NAMESPACE_BEGIN

template <typename T, int ITEMS_PER_THREAD, typename OutputIteratorT>
__device__ __forceinline__ void StoreDirectBlocked(int linear_tid, OutputIteratorT block_itr, T (&items)[ITEMS_PER_THREAD]) {
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) block_itr[(linear_tid * ITEMS_PER_THREAD) + i] = items[i];
}
template <typename T, int ITEMS_PER_THREAD, typename OutputIteratorT>
__device__ __forceinline__ void StoreDirectBlocked(int linear_tid, OutputIteratorT block_itr, T (&items)[ITEMS_PER_THREAD],
                                                   int valid_items) {
    for (int i = 0; i < ITEMS_PER_THREAD; ++i)
        if (i + (linear_tid * ITEMS_PER_THREAD) < valid_items) block_itr[(linear_tid * ITEMS_PER_THREAD) + i] = items[i];
}
template <typename T, int ITEMS_PER_THREAD>
__device__ __forceinline__ void StoreDirectBlockedVectorized(int linear_tid, T* block_ptr, T (&items)[ITEMS_PER_THREAD]) {
    StoreDirectBlocked(linear_tid, block_ptr, items);
}
template <int BLOCK_THREADS, typename T, int ITEMS_PER_THREAD, typename OutputIteratorT>
__device__ __forceinline__ void StoreDirectStriped(int linear_tid, OutputIteratorT block_itr, T (&items)[ITEMS_PER_THREAD]) {
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) block_itr[(i * BLOCK_THREADS) + linear_tid] = items[i];
}
template <int BLOCK_THREADS, typename T, int ITEMS_PER_THREAD, typename OutputIteratorT>
__device__ __forceinline__ void StoreDirectStriped(int linear_tid, OutputIteratorT block_itr, T (&items)[ITEMS_PER_THREAD],
                                                   int valid_items) {
    for (int i = 0; i < ITEMS_PER_THREAD; ++i)
        if ((i * BLOCK_THREADS) + linear_tid < valid_items) block_itr[(i * BLOCK_THREADS) + linear_tid] = items[i];
}
template <typename T, int ITEMS_PER_THREAD, typename OutputIteratorT>
__device__ __forceinline__ void StoreDirectWarpStriped(int linear_tid, OutputIteratorT block_itr, T (&items)[ITEMS_PER_THREAD]) {
    const int tid = linear_tid & 31, wid = linear_tid >> 5, warp_offset = wid * 32 * ITEMS_PER_THREAD;
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) block_itr[warp_offset + tid + (i * 32)] = items[i];
}
template <typename T, int ITEMS_PER_THREAD, typename OutputIteratorT>
__device__ __forceinline__ void StoreDirectWarpStriped(int linear_tid, OutputIteratorT block_itr, T (&items)[ITEMS_PER_THREAD],
                                                       int valid_items) {
    const int tid = linear_tid & 31, wid = linear_tid >> 5, warp_offset = wid * 32 * ITEMS_PER_THREAD;
    for (int i = 0; i < ITEMS_PER_THREAD; ++i)
        if (warp_offset + tid + (i * 32) < valid_items) block_itr[warp_offset + tid + (i * 32)] = items[i];
}

enum BlockStoreAlgorithm {
    BLOCK_STORE_DIRECT,
    BLOCK_STORE_STRIPED,
    BLOCK_STORE_VECTORIZE,
    BLOCK_STORE_TRANSPOSE,
    BLOCK_STORE_WARP_TRANSPOSE,
    BLOCK_STORE_WARP_TRANSPOSE_TIMESLICED,
};

template <typename T, int BLOCK_DIM_X, int ITEMS_PER_THREAD, BlockStoreAlgorithm ALGORITHM = BLOCK_STORE_DIRECT,
          int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockStore {
    enum { BLOCK_THREADS = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z };
    static constexpr bool EXCHANGES = ALGORITHM == BLOCK_STORE_TRANSPOSE || ALGORITHM == BLOCK_STORE_WARP_TRANSPOSE ||
                                      ALGORITHM == BLOCK_STORE_WARP_TRANSPOSE_TIMESLICED;
    static constexpr bool WARP = ALGORITHM == BLOCK_STORE_WARP_TRANSPOSE || ALGORITHM == BLOCK_STORE_WARP_TRANSPOSE_TIMESLICED;
    static_assert(!WARP || BLOCK_THREADS % 32 == 0, "BLOCK_THREADS must be a multiple of the warp size");
    using Exchange = BlockExchange<T, BLOCK_DIM_X, ITEMS_PER_THREAD, ALGORITHM == BLOCK_STORE_WARP_TRANSPOSE_TIMESLICED,
                                   BLOCK_DIM_Y, BLOCK_DIM_Z>;
    struct ExchangeStorage : Exchange::TempStorage {
        int valid_items;
    };
    using _TempStorage = std::conditional_t<EXCHANGES, ExchangeStorage, NullType>;
    __device__ __forceinline__ _TempStorage& PrivateStorage() {
        __shared__ _TempStorage private_storage;
        return private_storage;
    }
    _TempStorage& temp_storage;
    int linear_tid;

public:
    struct TempStorage : Uninitialized<_TempStorage> {};
    __device__ __forceinline__ BlockStore() : temp_storage(PrivateStorage()), linear_tid(RowMajorTid(BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z)) {}
    __device__ __forceinline__ BlockStore(TempStorage& temp_storage)
        : temp_storage(temp_storage.Alias()), linear_tid(RowMajorTid(BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z)) {}

    template <typename OutputIteratorT>
    __device__ __forceinline__ void Store(OutputIteratorT block_itr, T (&items)[ITEMS_PER_THREAD]) {
        if constexpr (ALGORITHM == BLOCK_STORE_STRIPED) {
            StoreDirectStriped<BLOCK_THREADS>(linear_tid, block_itr, items);
        } else if constexpr (ALGORITHM == BLOCK_STORE_TRANSPOSE) {
            Exchange(temp_storage).BlockedToStriped(items, items);
            StoreDirectStriped<BLOCK_THREADS>(linear_tid, block_itr, items);
        } else if constexpr (WARP) {
            Exchange(temp_storage).BlockedToWarpStriped(items, items);
            StoreDirectWarpStriped(linear_tid, block_itr, items);
        } else {
            StoreDirectBlocked(linear_tid, block_itr, items);
        }
    }
    template <typename OutputIteratorT>
    __device__ __forceinline__ void Store(OutputIteratorT block_itr, T (&items)[ITEMS_PER_THREAD], int valid_items) {
        if constexpr (ALGORITHM == BLOCK_STORE_STRIPED) {
            StoreDirectStriped<BLOCK_THREADS>(linear_tid, block_itr, items, valid_items);
        } else if constexpr (EXCHANGES) {
            if constexpr (WARP) Exchange(temp_storage).BlockedToWarpStriped(items, items);
            else Exchange(temp_storage).BlockedToStriped(items, items);
            if (linear_tid == 0) temp_storage.valid_items = valid_items;   // thread 0's count, as CUB
            __syncthreads();
            if constexpr (WARP) StoreDirectWarpStriped(linear_tid, block_itr, items, temp_storage.valid_items);
            else StoreDirectStriped<BLOCK_THREADS>(linear_tid, block_itr, items, temp_storage.valid_items);
        } else {
            StoreDirectBlocked(linear_tid, block_itr, items, valid_items);
        }
    }
};

CUB_NAMESPACE_END
#endif

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
