#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// cub/block/block_exchange.cuh for the aclnn_py CPU emulator: cub::BlockExchange (rearranging items
// between blocked, striped and warp-striped arrangements through shared memory; data movement
// only, so results equal CUB's). Not NVIDIA's code; see cub/util_type.cuh.
//   blocked:      thread t holds items t*ITEMS_PER_THREAD + i
//   striped:      thread t holds items i*BLOCK_THREADS + t
//   warp-striped: lane l of warp w holds items w*32*ITEMS_PER_THREAD + i*32 + l
// Block-wide exchanges have one __syncthreads between the stores and the loads, warp-wide ones a
// __syncwarp, as CUB: call __syncthreads() before reusing the TempStorage.
#ifndef ACLNN_EMU_CUB_BLOCK_EXCHANGE_CUH
#define ACLNN_EMU_CUB_BLOCK_EXCHANGE_CUH
#include "../util_type.cuh"

CUB_NAMESPACE_BEGIN

template <typename InputT, int BLOCK_DIM_X, int ITEMS_PER_THREAD, bool WARP_TIME_SLICING = false, int BLOCK_DIM_Y = 1,
          int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockExchange {
    enum {
        BLOCK_THREADS = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z,
        WARP_THREADS = 32,
        WARPS = (BLOCK_THREADS + WARP_THREADS - 1) / WARP_THREADS,
        TILE_ITEMS = BLOCK_THREADS * ITEMS_PER_THREAD,
        WARP_TIME_SLICED_THREADS = CUB_MIN(BLOCK_THREADS, WARP_THREADS),
        WARP_TIME_SLICED_ITEMS = WARP_TIME_SLICED_THREADS * ITEMS_PER_THREAD,
        BUFF_ITEMS = CUB_MAX(TILE_ITEMS, WARPS * WARP_TIME_SLICED_ITEMS),
    };
    struct alignas(16) _TempStorage {
        InputT buff[BUFF_ITEMS];
    };
    __device__ __forceinline__ _TempStorage& PrivateStorage() {
        __shared__ _TempStorage private_storage;
        return private_storage;
    }
    _TempStorage& temp_storage;
    unsigned int linear_tid;
    unsigned int lane_id;
    unsigned int warp_id;
    unsigned int warp_offset;

public:
    struct TempStorage : Uninitialized<_TempStorage> {};
    __device__ __forceinline__ BlockExchange() : BlockExchange(PrivateStorage(), 0) {}
    __device__ __forceinline__ BlockExchange(TempStorage& temp_storage) : BlockExchange(temp_storage.Alias(), 0) {}

private:
    __device__ __forceinline__ BlockExchange(_TempStorage& storage, int)
        : temp_storage(storage), linear_tid(RowMajorTid(BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z)),
          lane_id(LaneId()), warp_id((WARPS == 1) ? 0 : linear_tid / WARP_THREADS),
          warp_offset(warp_id * WARP_TIME_SLICED_ITEMS) {}

public:
    template <typename OutputT>
    __device__ __forceinline__ void StripedToBlocked(const InputT (&input_items)[ITEMS_PER_THREAD],
                                                     OutputT (&output_items)[ITEMS_PER_THREAD]) {
        for (int i = 0; i < ITEMS_PER_THREAD; ++i) temp_storage.buff[i * BLOCK_THREADS + linear_tid] = input_items[i];
        __syncthreads();
        for (int i = 0; i < ITEMS_PER_THREAD; ++i) output_items[i] = temp_storage.buff[linear_tid * ITEMS_PER_THREAD + i];
    }
    template <typename OutputT>
    __device__ __forceinline__ void BlockedToStriped(const InputT (&input_items)[ITEMS_PER_THREAD],
                                                     OutputT (&output_items)[ITEMS_PER_THREAD]) {
        for (int i = 0; i < ITEMS_PER_THREAD; ++i) temp_storage.buff[linear_tid * ITEMS_PER_THREAD + i] = input_items[i];
        __syncthreads();
        for (int i = 0; i < ITEMS_PER_THREAD; ++i) output_items[i] = temp_storage.buff[i * BLOCK_THREADS + linear_tid];
    }
    template <typename OutputT>
    __device__ __forceinline__ void WarpStripedToBlocked(const InputT (&input_items)[ITEMS_PER_THREAD],
                                                         OutputT (&output_items)[ITEMS_PER_THREAD]) {
        for (int i = 0; i < ITEMS_PER_THREAD; ++i)
            temp_storage.buff[warp_offset + i * WARP_TIME_SLICED_THREADS + lane_id] = input_items[i];
        __syncwarp(0xffffffffu);
        for (int i = 0; i < ITEMS_PER_THREAD; ++i)
            output_items[i] = temp_storage.buff[warp_offset + lane_id * ITEMS_PER_THREAD + i];
        __syncwarp(0xffffffffu);   // converged-warp order for a reuse right after (see warp_scan.cuh)
    }
    template <typename OutputT>
    __device__ __forceinline__ void BlockedToWarpStriped(const InputT (&input_items)[ITEMS_PER_THREAD],
                                                         OutputT (&output_items)[ITEMS_PER_THREAD]) {
        for (int i = 0; i < ITEMS_PER_THREAD; ++i)
            temp_storage.buff[warp_offset + lane_id * ITEMS_PER_THREAD + i] = input_items[i];
        __syncwarp(0xffffffffu);
        for (int i = 0; i < ITEMS_PER_THREAD; ++i)
            output_items[i] = temp_storage.buff[warp_offset + i * WARP_TIME_SLICED_THREADS + lane_id];
        __syncwarp(0xffffffffu);
    }
    // items go to the tile positions in ranks[], then come back blocked / striped
    template <typename OutputT, typename OffsetT>
    __device__ __forceinline__ void ScatterToBlocked(const InputT (&input_items)[ITEMS_PER_THREAD],
                                                     OutputT (&output_items)[ITEMS_PER_THREAD],
                                                     OffsetT (&ranks)[ITEMS_PER_THREAD]) {
        for (int i = 0; i < ITEMS_PER_THREAD; ++i) temp_storage.buff[ranks[i]] = input_items[i];
        __syncthreads();
        for (int i = 0; i < ITEMS_PER_THREAD; ++i) output_items[i] = temp_storage.buff[linear_tid * ITEMS_PER_THREAD + i];
    }
    template <typename OutputT, typename OffsetT>
    __device__ __forceinline__ void ScatterToStriped(const InputT (&input_items)[ITEMS_PER_THREAD],
                                                     OutputT (&output_items)[ITEMS_PER_THREAD],
                                                     OffsetT (&ranks)[ITEMS_PER_THREAD]) {
        for (int i = 0; i < ITEMS_PER_THREAD; ++i) temp_storage.buff[ranks[i]] = input_items[i];
        __syncthreads();
        for (int i = 0; i < ITEMS_PER_THREAD; ++i) output_items[i] = temp_storage.buff[i * BLOCK_THREADS + linear_tid];
    }
    template <typename OutputT, typename OffsetT>
    __device__ __forceinline__ void ScatterToStripedGuarded(const InputT (&input_items)[ITEMS_PER_THREAD],
                                                            OutputT (&output_items)[ITEMS_PER_THREAD],
                                                            OffsetT (&ranks)[ITEMS_PER_THREAD]) {
        for (int i = 0; i < ITEMS_PER_THREAD; ++i)
            if (ranks[i] >= 0) temp_storage.buff[ranks[i]] = input_items[i];
        __syncthreads();
        for (int i = 0; i < ITEMS_PER_THREAD; ++i) output_items[i] = temp_storage.buff[i * BLOCK_THREADS + linear_tid];
    }
    template <typename OutputT, typename OffsetT, typename ValidFlag>
    __device__ __forceinline__ void ScatterToStripedFlagged(const InputT (&input_items)[ITEMS_PER_THREAD],
                                                            OutputT (&output_items)[ITEMS_PER_THREAD],
                                                            OffsetT (&ranks)[ITEMS_PER_THREAD],
                                                            ValidFlag (&is_valid)[ITEMS_PER_THREAD]) {
        for (int i = 0; i < ITEMS_PER_THREAD; ++i)
            if (is_valid[i]) temp_storage.buff[ranks[i]] = input_items[i];
        __syncthreads();
        for (int i = 0; i < ITEMS_PER_THREAD; ++i) output_items[i] = temp_storage.buff[i * BLOCK_THREADS + linear_tid];
    }
    // in-place forms (CUB 1.x API, still used)
    __device__ __forceinline__ void StripedToBlocked(InputT (&items)[ITEMS_PER_THREAD]) { StripedToBlocked(items, items); }
    __device__ __forceinline__ void BlockedToStriped(InputT (&items)[ITEMS_PER_THREAD]) { BlockedToStriped(items, items); }
    __device__ __forceinline__ void WarpStripedToBlocked(InputT (&items)[ITEMS_PER_THREAD]) { WarpStripedToBlocked(items, items); }
    __device__ __forceinline__ void BlockedToWarpStriped(InputT (&items)[ITEMS_PER_THREAD]) { BlockedToWarpStriped(items, items); }
    template <typename OffsetT>
    __device__ __forceinline__ void ScatterToBlocked(InputT (&items)[ITEMS_PER_THREAD], OffsetT (&ranks)[ITEMS_PER_THREAD]) {
        ScatterToBlocked(items, items, ranks);
    }
    template <typename OffsetT>
    __device__ __forceinline__ void ScatterToStriped(InputT (&items)[ITEMS_PER_THREAD], OffsetT (&ranks)[ITEMS_PER_THREAD]) {
        ScatterToStriped(items, items, ranks);
    }
    template <typename OffsetT>
    __device__ __forceinline__ void ScatterToStripedGuarded(InputT (&items)[ITEMS_PER_THREAD],
                                                            OffsetT (&ranks)[ITEMS_PER_THREAD]) {
        ScatterToStripedGuarded(items, items, ranks);
    }
    template <typename OffsetT, typename ValidFlag>
    __device__ __forceinline__ void ScatterToStripedFlagged(InputT (&items)[ITEMS_PER_THREAD], OffsetT (&ranks)[ITEMS_PER_THREAD],
                                                            ValidFlag (&is_valid)[ITEMS_PER_THREAD]) {
        ScatterToStripedFlagged(items, items, ranks, is_valid);
    }
};

CUB_NAMESPACE_END
#endif

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
