#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// cub/block/block_reduce.cuh for the aclnn_py CPU emulator: cub::BlockReduce with CUB 2.x's three
// algorithms, combining values in the same order (not NVIDIA's code; see cub/util_type.cuh).
// The result is defined in thread 0 only (linear thread id, row-major over BLOCK_DIM_X/Y/Z).
//  * BLOCK_REDUCE_WARP_REDUCTIONS (default): each warp reduces its 32 values with WarpReduce
//    (shuffle tree, see warp_reduce.cuh; logical warp = min(block, 32) threads); lane 0 stores the
//    warp aggregate; after a barrier thread 0 folds them left to right: ((w0 op w1) op w2) ...
//  * BLOCK_REDUCE_RAKING: partials go to the raking grid (block_raking_layout.cuh); each of the
//    RAKING_THREADS threads folds its segment left to right, then WarpReduce over the raking
//    threads. A block of at most 32 threads (RAKING_THREADS == block) is one WarpReduce.
//  * BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY: for full tiles of a multiple of 32 threads (> 32): threads
//    32.. place their partials; thread t < 32 folds op(own, its segment...) and a full-warp
//    WarpReduce ends it; otherwise (partial tiles, other sizes) exactly BLOCK_REDUCE_RAKING.
// Items arrays are first folded per thread, left to right (CUB 2.x ThreadReduce).
#ifndef ACLNN_EMU_CUB_BLOCK_REDUCE_CUH
#define ACLNN_EMU_CUB_BLOCK_REDUCE_CUH
#include "../util_type.cuh"
#include "../warp/warp_reduce.cuh"
#include "block_raking_layout.cuh"

CUB_NAMESPACE_BEGIN

enum BlockReduceAlgorithm { BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY, BLOCK_REDUCE_RAKING, BLOCK_REDUCE_WARP_REDUCTIONS };

template <typename T, int BLOCK_DIM_X, int BLOCK_DIM_Y, int BLOCK_DIM_Z, int LEGACY_PTX_ARCH = 0>
struct BlockReduceWarpReductions {
    enum {
        BLOCK_THREADS = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z,
        WARP_THREADS = 32,
        WARPS = (BLOCK_THREADS + WARP_THREADS - 1) / WARP_THREADS,
        LOGICAL_WARP_SIZE = CUB_MIN(BLOCK_THREADS, WARP_THREADS),
        EVEN_WARP_MULTIPLE = (BLOCK_THREADS % LOGICAL_WARP_SIZE == 0),
    };
    using WarpReduceT = typename WarpReduce<T, LOGICAL_WARP_SIZE>::InternalWarpReduce;
    struct _TempStorage {
        typename WarpReduceT::TempStorage warp_reduce[WARPS];
        T warp_aggregates[WARPS];
        T block_prefix;
    };
    struct TempStorage : Uninitialized<_TempStorage> {};
    _TempStorage& temp_storage;
    int linear_tid;
    int warp_id;
    int lane_id;

    __device__ __forceinline__ BlockReduceWarpReductions(TempStorage& temp_storage)
        : temp_storage(temp_storage.Alias()), linear_tid(RowMajorTid(BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z)),
          warp_id((WARPS == 1) ? 0 : linear_tid / WARP_THREADS), lane_id(static_cast<int>(LaneId())) {}

    template <bool FULL_TILE, typename ReductionOp>
    __device__ __forceinline__ T ApplyWarpAggregates(ReductionOp reduction_op, T warp_aggregate, int num_valid) {
        if (lane_id == 0) temp_storage.warp_aggregates[warp_id] = warp_aggregate;
        __syncthreads();
        if (linear_tid == 0) {
#pragma GCC unroll 32
            for (int successor = 1; successor < WARPS; ++successor)
                if (FULL_TILE || (successor * LOGICAL_WARP_SIZE < num_valid)) {
                    T addend = temp_storage.warp_aggregates[successor];
                    warp_aggregate = reduction_op(warp_aggregate, addend);
                }
        }
        return warp_aggregate;
    }
    template <bool FULL_TILE, typename ReductionOp>
    __device__ __forceinline__ T Reduce(T input, int num_valid, ReductionOp reduction_op) {
        const int warp_offset = warp_id * LOGICAL_WARP_SIZE;
        const int warp_num_valid = ((FULL_TILE && EVEN_WARP_MULTIPLE) || (warp_offset + LOGICAL_WARP_SIZE <= num_valid))
                                       ? LOGICAL_WARP_SIZE : num_valid - warp_offset;
        T warp_aggregate = WarpReduceT(temp_storage.warp_reduce[warp_id])
                               .template Reduce<(FULL_TILE && EVEN_WARP_MULTIPLE)>(input, warp_num_valid, reduction_op);
        return ApplyWarpAggregates<FULL_TILE>(reduction_op, warp_aggregate, num_valid);
    }
    template <bool FULL_TILE>
    __device__ __forceinline__ T Sum(T input, int num_valid) { return Reduce<FULL_TILE>(input, num_valid, cub::Sum()); }
};

template <typename T, int BLOCK_DIM_X, int BLOCK_DIM_Y, int BLOCK_DIM_Z, int LEGACY_PTX_ARCH = 0>
struct BlockReduceRaking {
    enum { BLOCK_THREADS = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z };
    using Layout = BlockRakingLayout<T, BLOCK_THREADS>;
    using WarpReduceT = typename WarpReduce<T, Layout::RAKING_THREADS>::InternalWarpReduce;
    enum {
        RAKING_THREADS = Layout::RAKING_THREADS,
        SEGMENT_LENGTH = Layout::SEGMENT_LENGTH,
        WARP_SYNCHRONOUS = (int(RAKING_THREADS) == int(BLOCK_THREADS)),
        WARP_SYNCHRONOUS_UNGUARDED = PowerOfTwo<RAKING_THREADS>::VALUE,
        RAKING_UNGUARDED = Layout::UNGUARDED,
    };
    union _TempStorage {
        typename WarpReduceT::TempStorage warp_storage;
        typename Layout::TempStorage raking_grid;
    };
    struct TempStorage : Uninitialized<_TempStorage> {};
    _TempStorage& temp_storage;
    unsigned int linear_tid;

    __device__ __forceinline__ BlockReduceRaking(TempStorage& temp_storage)
        : temp_storage(temp_storage.Alias()), linear_tid(RowMajorTid(BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z)) {}

    template <bool IS_FULL_TILE, typename ReductionOp>
    __device__ __forceinline__ T Reduce(T partial, int num_valid, ReductionOp reduction_op) {
        if (WARP_SYNCHRONOUS) {
            partial = WarpReduceT(temp_storage.warp_storage).template Reduce<IS_FULL_TILE>(partial, num_valid, reduction_op);
        } else {
            *Layout::PlacementPtr(temp_storage.raking_grid, linear_tid) = partial;
            __syncthreads();
            if (linear_tid < RAKING_THREADS) {
                T* raking_segment = Layout::RakingPtr(temp_storage.raking_grid, linear_tid);
                partial = raking_segment[0];
#pragma GCC unroll 32
                for (int i = 1; i < SEGMENT_LENGTH; ++i)
                    if ((IS_FULL_TILE && RAKING_UNGUARDED) || (static_cast<int>(linear_tid * SEGMENT_LENGTH) + i < num_valid)) {
                        T addend = raking_segment[i];
                        partial = reduction_op(partial, addend);
                    }
                // The shared-memory WarpReduce (RAKING_THREADS not a power of two) reuses the raking
                // grid (a union, as in CUB): a converged warp has read every segment before its first
                // store; the emulator's lanes need this __syncwarp to see the same (no arithmetic).
                if (!PowerOfTwo<RAKING_THREADS>::VALUE) __syncwarp(0xFFFFFFFFu >> (32 - RAKING_THREADS));
                const int valid_raking_threads = IS_FULL_TILE ? RAKING_THREADS : (num_valid + SEGMENT_LENGTH - 1) / SEGMENT_LENGTH;
                partial = WarpReduceT(temp_storage.warp_storage)
                              .template Reduce<IS_FULL_TILE && RAKING_UNGUARDED>(partial, valid_raking_threads, reduction_op);
            }
        }
        return partial;
    }
    template <bool IS_FULL_TILE>
    __device__ __forceinline__ T Sum(T partial, int num_valid) { return Reduce<IS_FULL_TILE>(partial, num_valid, cub::Sum()); }
};

template <typename T, int BLOCK_DIM_X, int BLOCK_DIM_Y, int BLOCK_DIM_Z, int LEGACY_PTX_ARCH = 0>
struct BlockReduceRakingCommutativeOnly {
    enum { BLOCK_THREADS = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z };
    using FallBack = BlockReduceRaking<T, BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z>;
    enum {
        WARP_THREADS = 32,
        USE_FALLBACK = ((BLOCK_THREADS % WARP_THREADS != 0) || (BLOCK_THREADS <= WARP_THREADS)),
        RAKING_THREADS = WARP_THREADS,
        SHARING_THREADS = CUB_MAX(1, BLOCK_THREADS - RAKING_THREADS),
        SEGMENT_LENGTH = SHARING_THREADS / WARP_THREADS,
    };
    using WarpReduceT = WarpReduce<T, RAKING_THREADS>;
    using Layout = BlockRakingLayout<T, SHARING_THREADS>;
    union _TempStorage {
        struct DefaultStorage {
            typename WarpReduceT::TempStorage warp_storage;
            typename Layout::TempStorage raking_grid;
        } default_storage;
        typename FallBack::TempStorage fallback_storage;
    };
    struct TempStorage : Uninitialized<_TempStorage> {};
    _TempStorage& temp_storage;
    unsigned int linear_tid;

    __device__ __forceinline__ BlockReduceRakingCommutativeOnly(TempStorage& temp_storage)
        : temp_storage(temp_storage.Alias()), linear_tid(RowMajorTid(BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z)) {}

    template <bool FULL_TILE, typename ReductionOp>
    __device__ __forceinline__ T Reduce(T partial, int num_valid, ReductionOp reduction_op) {
        if (USE_FALLBACK || !FULL_TILE)
            return FallBack(temp_storage.fallback_storage).template Reduce<FULL_TILE>(partial, num_valid, reduction_op);
        if (linear_tid >= RAKING_THREADS)
            *Layout::PlacementPtr(temp_storage.default_storage.raking_grid, linear_tid - RAKING_THREADS) = partial;
        __syncthreads();
        if (linear_tid < RAKING_THREADS) {
            T* raking_segment = Layout::RakingPtr(temp_storage.default_storage.raking_grid, linear_tid);
            partial = internal::ThreadReduce<SEGMENT_LENGTH>(raking_segment, reduction_op, partial);
            partial = WarpReduceT(temp_storage.default_storage.warp_storage).Reduce(partial, reduction_op);
        }
        return partial;
    }
    template <bool FULL_TILE>
    __device__ __forceinline__ T Sum(T partial, int num_valid) { return Reduce<FULL_TILE>(partial, num_valid, cub::Sum()); }
};

template <typename T, int BLOCK_DIM_X, BlockReduceAlgorithm ALGORITHM = BLOCK_REDUCE_WARP_REDUCTIONS,
          int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockReduce {
    enum { BLOCK_THREADS = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z };
    using InternalBlockReduce = std::conditional_t<
        ALGORITHM == BLOCK_REDUCE_WARP_REDUCTIONS, BlockReduceWarpReductions<T, BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z>,
        std::conditional_t<ALGORITHM == BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY,
                           BlockReduceRakingCommutativeOnly<T, BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z>,
                           BlockReduceRaking<T, BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z>>>;
    using _TempStorage = typename InternalBlockReduce::TempStorage;
    __device__ __forceinline__ _TempStorage& PrivateStorage() {
        __shared__ _TempStorage private_storage;
        return private_storage;
    }
    _TempStorage& temp_storage;
    unsigned int linear_tid;

public:
    struct TempStorage : Uninitialized<_TempStorage> {};
    __device__ __forceinline__ BlockReduce()
        : temp_storage(PrivateStorage()), linear_tid(RowMajorTid(BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z)) {}
    __device__ __forceinline__ BlockReduce(TempStorage& temp_storage)
        : temp_storage(temp_storage.Alias()), linear_tid(RowMajorTid(BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z)) {}

    template <typename ReductionOp>
    __device__ __forceinline__ T Reduce(T input, ReductionOp reduction_op) {
        return InternalBlockReduce(temp_storage).template Reduce<true>(input, BLOCK_THREADS, reduction_op);
    }
    template <int ITEMS_PER_THREAD, typename ReductionOp>
    __device__ __forceinline__ T Reduce(T (&inputs)[ITEMS_PER_THREAD], ReductionOp reduction_op) {
        T partial = internal::ThreadReduce(inputs, reduction_op);
        return Reduce(partial, reduction_op);
    }
    template <typename ReductionOp>
    __device__ __forceinline__ T Reduce(T input, ReductionOp reduction_op, int num_valid) {
        if (num_valid >= BLOCK_THREADS)
            return InternalBlockReduce(temp_storage).template Reduce<true>(input, num_valid, reduction_op);
        return InternalBlockReduce(temp_storage).template Reduce<false>(input, num_valid, reduction_op);
    }
    __device__ __forceinline__ T Sum(T input) {
        return InternalBlockReduce(temp_storage).template Sum<true>(input, BLOCK_THREADS);
    }
    template <int ITEMS_PER_THREAD>
    __device__ __forceinline__ T Sum(T (&inputs)[ITEMS_PER_THREAD]) {
        T partial = internal::ThreadReduce(inputs, cub::Sum());
        return Sum(partial);
    }
    __device__ __forceinline__ T Sum(T input, int num_valid) {
        if (num_valid >= BLOCK_THREADS) return InternalBlockReduce(temp_storage).template Sum<true>(input, num_valid);
        return InternalBlockReduce(temp_storage).template Sum<false>(input, num_valid);
    }
};

CUB_NAMESPACE_END
#endif

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
