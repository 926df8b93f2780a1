#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// cub/block/block_scan.cuh for the aclnn_py CPU emulator: cub::BlockScan with CUB 2.x's algorithms,
// combining values in the same order (not NVIDIA's code; see cub/util_type.cuh).
//  * BLOCK_SCAN_RAKING (default) and BLOCK_SCAN_RAKING_MEMOIZE (same results): every thread places
//    its value in the raking grid; each of RAKING_THREADS (<= 32) threads folds its segment left to
//    right (upsweep), the raking threads run a WarpScan of those partials (warp_scan.cuh), and each
//    scans its segment seeded with its exclusive partial (downsweep). A block that is a single
//    raking warp (<= 32 threads) is one WarpScan.
//  * BLOCK_SCAN_WARP_SCANS (block size a multiple of 32, else RAKING, as in CUB): a WarpScan per
//    warp, then every thread folds the warp aggregates left to right to get its warp's prefix.
//  * items arrays: each thread folds its items left to right, the block scans those, and each
//    thread scans its items seeded with its exclusive prefix.
//  * prefix callback: called by the first warp with the block aggregate; lane 0's return value is
//    the prefix of the whole block.
#ifndef ACLNN_EMU_CUB_BLOCK_SCAN_CUH
#define ACLNN_EMU_CUB_BLOCK_SCAN_CUH
#include "../util_type.cuh"
#include "../warp/warp_scan.cuh"
#include "block_raking_layout.cuh"

CUB_NAMESPACE_BEGIN

enum BlockScanAlgorithm { BLOCK_SCAN_RAKING, BLOCK_SCAN_RAKING_MEMOIZE, BLOCK_SCAN_WARP_SCANS };

template <typename T, int BLOCK_DIM_X, int BLOCK_DIM_Y, int BLOCK_DIM_Z, bool MEMOIZE, int LEGACY_PTX_ARCH = 0>
struct BlockScanRaking {
    enum { BLOCK_THREADS = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z };
    using Layout = BlockRakingLayout<T, BLOCK_THREADS>;
    enum {
        RAKING_THREADS = Layout::RAKING_THREADS,
        SEGMENT_LENGTH = Layout::SEGMENT_LENGTH,
        WARP_SYNCHRONOUS = (int(BLOCK_THREADS) == int(RAKING_THREADS)),
    };
    using WarpScanT = WarpScan<T, RAKING_THREADS>;
    struct _TempStorage {
        typename WarpScanT::TempStorage warp_scan;
        typename Layout::TempStorage raking_grid;
        T block_aggregate;
    };
    struct TempStorage : Uninitialized<_TempStorage> {};
    _TempStorage& temp_storage;
    unsigned int linear_tid;
    T cached_segment[SEGMENT_LENGTH];

    __device__ __forceinline__ BlockScanRaking(TempStorage& temp_storage)
        : temp_storage(temp_storage.Alias()), linear_tid(RowMajorTid(BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z)) {}

    // fold of this raking thread's segment (slots past the block are skipped)
    template <typename ScanOp>
    __device__ __forceinline__ T Upsweep(ScanOp scan_op) {
        T* smem_raking_ptr = Layout::RakingPtr(temp_storage.raking_grid, linear_tid);
        for (int i = 0; i < SEGMENT_LENGTH; ++i) cached_segment[i] = smem_raking_ptr[i];
        T raking_partial = cached_segment[0];
#pragma GCC unroll 32
        for (int i = 1; i < SEGMENT_LENGTH; ++i)
            if (Layout::UNGUARDED || (static_cast<int>(linear_tid * SEGMENT_LENGTH) + i < BLOCK_THREADS))
                raking_partial = scan_op(raking_partial, cached_segment[i]);
        return raking_partial;
    }
    template <typename ScanOp>
    __device__ __forceinline__ void ExclusiveDownsweep(ScanOp scan_op, T raking_partial, bool apply_prefix = true) {
        T* smem_raking_ptr = Layout::RakingPtr(temp_storage.raking_grid, linear_tid);
        if (!MEMOIZE)
            for (int i = 0; i < SEGMENT_LENGTH; ++i) cached_segment[i] = smem_raking_ptr[i];
        internal::ThreadScanExclusive(cached_segment, cached_segment, scan_op, raking_partial, apply_prefix);
        for (int i = 0; i < SEGMENT_LENGTH; ++i) smem_raking_ptr[i] = cached_segment[i];
    }
    template <typename ScanOp>
    __device__ __forceinline__ void InclusiveDownsweep(ScanOp scan_op, T raking_partial, bool apply_prefix = true) {
        T* smem_raking_ptr = Layout::RakingPtr(temp_storage.raking_grid, linear_tid);
        if (!MEMOIZE)
            for (int i = 0; i < SEGMENT_LENGTH; ++i) cached_segment[i] = smem_raking_ptr[i];
        internal::ThreadScanInclusive(cached_segment, cached_segment, scan_op, raking_partial, apply_prefix);
        for (int i = 0; i < SEGMENT_LENGTH; ++i) smem_raking_ptr[i] = cached_segment[i];
    }
    __device__ __forceinline__ T* Place(T input) {
        T* placement_ptr = Layout::PlacementPtr(temp_storage.raking_grid, linear_tid);
        *placement_ptr = input;
        __syncthreads();
        return placement_ptr;
    }

    template <typename ScanOp>
    __device__ __forceinline__ void ExclusiveScan(T input, T& exclusive_output, ScanOp scan_op) {
        if (WARP_SYNCHRONOUS) {
            WarpScanT(temp_storage.warp_scan).ExclusiveScan(input, exclusive_output, scan_op);
        } else {
            T* placement_ptr = Place(input);
            if (linear_tid < RAKING_THREADS) {
                T upsweep_partial = Upsweep(scan_op);
                T exclusive_partial;
                WarpScanT(temp_storage.warp_scan).ExclusiveScan(upsweep_partial, exclusive_partial, scan_op);
                ExclusiveDownsweep(scan_op, exclusive_partial, (linear_tid != 0));
            }
            __syncthreads();
            exclusive_output = *placement_ptr;
        }
    }
    template <typename ScanOp>
    __device__ __forceinline__ void ExclusiveScan(T input, T& output, const T& initial_value, ScanOp scan_op) {
        if (WARP_SYNCHRONOUS) {
            WarpScanT(temp_storage.warp_scan).ExclusiveScan(input, output, initial_value, scan_op);
        } else {
            T* placement_ptr = Place(input);
            if (linear_tid < RAKING_THREADS) {
                T upsweep_partial = Upsweep(scan_op);
                T exclusive_partial;
                WarpScanT(temp_storage.warp_scan).ExclusiveScan(upsweep_partial, exclusive_partial, initial_value, scan_op);
                ExclusiveDownsweep(scan_op, exclusive_partial);
            }
            __syncthreads();
            output = *placement_ptr;
        }
    }
    template <typename ScanOp>
    __device__ __forceinline__ void ExclusiveScan(T input, T& output, ScanOp scan_op, T& block_aggregate) {
        if (WARP_SYNCHRONOUS) {
            WarpScanT(temp_storage.warp_scan).ExclusiveScan(input, output, scan_op, block_aggregate);
        } else {
            T* placement_ptr = Place(input);
            if (linear_tid < RAKING_THREADS) {
                T upsweep_partial = Upsweep(scan_op);
                T inclusive_partial, exclusive_partial;
                WarpScanT(temp_storage.warp_scan).Scan(upsweep_partial, inclusive_partial, exclusive_partial, scan_op);
                ExclusiveDownsweep(scan_op, exclusive_partial, (linear_tid != 0));
                if (linear_tid == RAKING_THREADS - 1) temp_storage.block_aggregate = inclusive_partial;
            }
            __syncthreads();
            output = *placement_ptr;
            block_aggregate = temp_storage.block_aggregate;
        }
    }
    template <typename ScanOp>
    __device__ __forceinline__ void ExclusiveScan(T input, T& output, const T& initial_value, ScanOp scan_op,
                                                  T& block_aggregate) {
        if (WARP_SYNCHRONOUS) {
            WarpScanT(temp_storage.warp_scan).ExclusiveScan(input, output, initial_value, scan_op, block_aggregate);
        } else {
            T* placement_ptr = Place(input);
            if (linear_tid < RAKING_THREADS) {
                T upsweep_partial = Upsweep(scan_op);
                T exclusive_partial;
                WarpScanT(temp_storage.warp_scan)
                    .ExclusiveScan(upsweep_partial, exclusive_partial, initial_value, scan_op, block_aggregate);
                ExclusiveDownsweep(scan_op, exclusive_partial);
                if (linear_tid == 0) temp_storage.block_aggregate = block_aggregate;
            }
            __syncthreads();
            output = *placement_ptr;
            block_aggregate = temp_storage.block_aggregate;
        }
    }
    template <typename ScanOp, typename BlockPrefixCallbackOp>
    __device__ __forceinline__ void ExclusiveScan(T input, T& output, ScanOp scan_op,
                                                  BlockPrefixCallbackOp& block_prefix_callback_op) {
        if (WARP_SYNCHRONOUS) {
            T block_aggregate;
            WarpScanT warp_scan(temp_storage.warp_scan);
            warp_scan.ExclusiveScan(input, output, scan_op, block_aggregate);
            T block_prefix = block_prefix_callback_op(block_aggregate);
            block_prefix = warp_scan.Broadcast(block_prefix, 0);
            output = scan_op(block_prefix, output);
            if (linear_tid == 0) output = block_prefix;
        } else {
            T* placement_ptr = Place(input);
            if (linear_tid < RAKING_THREADS) {
                WarpScanT warp_scan(temp_storage.warp_scan);
                T upsweep_partial = Upsweep(scan_op);
                T exclusive_partial, block_aggregate;
                warp_scan.ExclusiveScan(upsweep_partial, exclusive_partial, scan_op, block_aggregate);
                T block_prefix = block_prefix_callback_op(block_aggregate);
                block_prefix = warp_scan.Broadcast(block_prefix, 0);
                T downsweep_prefix = scan_op(block_prefix, exclusive_partial);
                if (linear_tid == 0) downsweep_prefix = block_prefix;
                ExclusiveDownsweep(scan_op, downsweep_prefix);
            }
            __syncthreads();
            output = *placement_ptr;
        }
    }
    template <typename ScanOp>
    __device__ __forceinline__ void InclusiveScan(T input, T& output, ScanOp scan_op) {
        if (WARP_SYNCHRONOUS) {
            WarpScanT(temp_storage.warp_scan).InclusiveScan(input, output, scan_op);
        } else {
            T* placement_ptr = Place(input);
            if (linear_tid < RAKING_THREADS) {
                T upsweep_partial = Upsweep(scan_op);
                T exclusive_partial;
                WarpScanT(temp_storage.warp_scan).ExclusiveScan(upsweep_partial, exclusive_partial, scan_op);
                InclusiveDownsweep(scan_op, exclusive_partial, (linear_tid != 0));
            }
            __syncthreads();
            output = *placement_ptr;
        }
    }
    template <typename ScanOp>
    __device__ __forceinline__ void InclusiveScan(T input, T& output, ScanOp scan_op, T& block_aggregate) {
        if (WARP_SYNCHRONOUS) {
            WarpScanT(temp_storage.warp_scan).InclusiveScan(input, output, scan_op, block_aggregate);
        } else {
            T* placement_ptr = Place(input);
            if (linear_tid < RAKING_THREADS) {
                T upsweep_partial = Upsweep(scan_op);
                T inclusive_partial, exclusive_partial;
                WarpScanT(temp_storage.warp_scan).Scan(upsweep_partial, inclusive_partial, exclusive_partial, scan_op);
                InclusiveDownsweep(scan_op, exclusive_partial, (linear_tid != 0));
                if (linear_tid == RAKING_THREADS - 1) temp_storage.block_aggregate = inclusive_partial;
            }
            __syncthreads();
            output = *placement_ptr;
            block_aggregate = temp_storage.block_aggregate;
        }
    }
    template <typename ScanOp, typename BlockPrefixCallbackOp>
    __device__ __forceinline__ void InclusiveScan(T input, T& output, ScanOp scan_op,
                                                  BlockPrefixCallbackOp& block_prefix_callback_op) {
        if (WARP_SYNCHRONOUS) {
            T block_aggregate;
            WarpScanT warp_scan(temp_storage.warp_scan);
            warp_scan.InclusiveScan(input, output, scan_op, block_aggregate);
            T block_prefix = block_prefix_callback_op(block_aggregate);
            block_prefix = warp_scan.Broadcast(block_prefix, 0);
            output = scan_op(block_prefix, output);
        } else {
            T* placement_ptr = Place(input);
            if (linear_tid < RAKING_THREADS) {
                WarpScanT warp_scan(temp_storage.warp_scan);
                T upsweep_partial = Upsweep(scan_op);
                T exclusive_partial, block_aggregate;
                warp_scan.ExclusiveScan(upsweep_partial, exclusive_partial, scan_op, block_aggregate);
                T block_prefix = block_prefix_callback_op(block_aggregate);
                block_prefix = warp_scan.Broadcast(block_prefix, 0);
                T downsweep_prefix = scan_op(block_prefix, exclusive_partial);
                if (linear_tid == 0) downsweep_prefix = block_prefix;
                InclusiveDownsweep(scan_op, downsweep_prefix);
            }
            __syncthreads();
            output = *placement_ptr;
        }
    }
};

template <typename T, int BLOCK_DIM_X, int BLOCK_DIM_Y, int BLOCK_DIM_Z, int LEGACY_PTX_ARCH = 0>
struct BlockScanWarpScans {
    enum {
        WARP_THREADS = 32,
        BLOCK_THREADS = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z,
        WARPS = (BLOCK_THREADS + WARP_THREADS - 1) / WARP_THREADS,
    };
    using WarpScanT = WarpScan<T, WARP_THREADS>;
    struct alignas(32) _TempStorage {
        T warp_aggregates[WARPS];
        typename WarpScanT::TempStorage warp_scan[WARPS];
        T block_prefix;
    };
    struct TempStorage : Uninitialized<_TempStorage> {};
    _TempStorage& temp_storage;
    unsigned int linear_tid;
    unsigned int warp_id;
    unsigned int lane_id;

    __device__ __forceinline__ BlockScanWarpScans(TempStorage& temp_storage)
        : temp_storage(temp_storage.Alias()), linear_tid(RowMajorTid(BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z)),
          warp_id((WARPS == 1) ? 0 : linear_tid / WARP_THREADS), lane_id(LaneId()) {}

    // every thread: block_aggregate = ((w0 op w1) op w2) ...; warp_prefix = the fold before its warp
    template <typename ScanOp>
    __device__ __forceinline__ T ComputeWarpPrefix(ScanOp scan_op, T warp_aggregate, T& block_aggregate) {
        if (lane_id == WARP_THREADS - 1) temp_storage.warp_aggregates[warp_id] = warp_aggregate;
        __syncthreads();
        T warp_prefix;
        block_aggregate = temp_storage.warp_aggregates[0];
#pragma GCC unroll 32
        for (int w = 1; w < WARPS; ++w) {
            if (warp_id == static_cast<unsigned>(w)) warp_prefix = block_aggregate;
            T addend = temp_storage.warp_aggregates[w];
            block_aggregate = scan_op(block_aggregate, addend);
        }
        return warp_prefix;
    }
    template <typename ScanOp>
    __device__ __forceinline__ T ComputeWarpPrefix(ScanOp scan_op, T warp_aggregate, T& block_aggregate,
                                                   const T& initial_value) {
        T warp_prefix = ComputeWarpPrefix(scan_op, warp_aggregate, block_aggregate);
        warp_prefix = scan_op(initial_value, warp_prefix);
        if (warp_id == 0) warp_prefix = initial_value;
        return warp_prefix;
    }
    template <typename ScanOp>
    __device__ __forceinline__ void ExclusiveScan(T input, T& exclusive_output, ScanOp scan_op) {
        T block_aggregate;
        ExclusiveScan(input, exclusive_output, scan_op, block_aggregate);
    }
    template <typename ScanOp>
    __device__ __forceinline__ void ExclusiveScan(T input, T& exclusive_output, const T& initial_value, ScanOp scan_op) {
        T block_aggregate;
        ExclusiveScan(input, exclusive_output, initial_value, scan_op, block_aggregate);
    }
    template <typename ScanOp>
    __device__ __forceinline__ void ExclusiveScan(T input, T& exclusive_output, ScanOp scan_op, T& block_aggregate) {
        T inclusive_output;
        WarpScanT(temp_storage.warp_scan[warp_id]).Scan(input, inclusive_output, exclusive_output, scan_op);
        T warp_prefix = ComputeWarpPrefix(scan_op, inclusive_output, block_aggregate);
        if (warp_id != 0) {
            exclusive_output = scan_op(warp_prefix, exclusive_output);
            if (lane_id == 0) exclusive_output = warp_prefix;
        }
    }
    template <typename ScanOp>
    __device__ __forceinline__ void ExclusiveScan(T input, T& exclusive_output, const T& initial_value, ScanOp scan_op,
                                                  T& block_aggregate) {
        T inclusive_output;
        WarpScanT(temp_storage.warp_scan[warp_id]).Scan(input, inclusive_output, exclusive_output, scan_op);
        T warp_prefix = ComputeWarpPrefix(scan_op, inclusive_output, block_aggregate, initial_value);
        exclusive_output = scan_op(warp_prefix, exclusive_output);
        if (lane_id == 0) exclusive_output = warp_prefix;
    }
    template <typename ScanOp, typename BlockPrefixCallbackOp>
    __device__ __forceinline__ void ExclusiveScan(T input, T& exclusive_output, ScanOp scan_op,
                                                  BlockPrefixCallbackOp& block_prefix_callback_op) {
        T block_aggregate;
        ExclusiveScan(input, exclusive_output, scan_op, block_aggregate);
        if (warp_id == 0) {
            T block_prefix = block_prefix_callback_op(block_aggregate);
            if (lane_id == 0) {
                temp_storage.block_prefix = block_prefix;
                exclusive_output = block_prefix;
            }
        }
        __syncthreads();
        T block_prefix = temp_storage.block_prefix;
        if (linear_tid > 0) exclusive_output = scan_op(block_prefix, exclusive_output);
    }
    template <typename ScanOp>
    __device__ __forceinline__ void InclusiveScan(T input, T& inclusive_output, ScanOp scan_op) {
        T block_aggregate;
        InclusiveScan(input, inclusive_output, scan_op, block_aggregate);
    }
    template <typename ScanOp>
    __device__ __forceinline__ void InclusiveScan(T input, T& inclusive_output, ScanOp scan_op, T& block_aggregate) {
        WarpScanT(temp_storage.warp_scan[warp_id]).InclusiveScan(input, inclusive_output, scan_op);
        T warp_prefix = ComputeWarpPrefix(scan_op, inclusive_output, block_aggregate);
        if (warp_id != 0) inclusive_output = scan_op(warp_prefix, inclusive_output);
    }
    template <typename ScanOp, typename BlockPrefixCallbackOp>
    __device__ __forceinline__ void InclusiveScan(T input, T& exclusive_output, ScanOp scan_op,
                                                  BlockPrefixCallbackOp& block_prefix_callback_op) {
        T block_aggregate;
        InclusiveScan(input, exclusive_output, scan_op, block_aggregate);
        if (warp_id == 0) {
            T block_prefix = block_prefix_callback_op(block_aggregate);
            if (lane_id == 0) temp_storage.block_prefix = block_prefix;
        }
        __syncthreads();
        T block_prefix = temp_storage.block_prefix;
        exclusive_output = scan_op(block_prefix, exclusive_output);
    }
};

template <typename T, int BLOCK_DIM_X, BlockScanAlgorithm ALGORITHM = BLOCK_SCAN_RAKING, int BLOCK_DIM_Y = 1,
          int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockScan {
    enum { BLOCK_THREADS = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z };
    static constexpr BlockScanAlgorithm SAFE_ALGORITHM =
        ((ALGORITHM == BLOCK_SCAN_WARP_SCANS) && (BLOCK_THREADS % 32 != 0)) ? BLOCK_SCAN_RAKING : ALGORITHM;
    using InternalBlockScan = std::conditional_t<
        SAFE_ALGORITHM == BLOCK_SCAN_WARP_SCANS, BlockScanWarpScans<T, BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z>,
        BlockScanRaking<T, BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z, (SAFE_ALGORITHM == BLOCK_SCAN_RAKING_MEMOIZE)>>;
    using _TempStorage = typename InternalBlockScan::TempStorage;
    _TempStorage& temp_storage;
    unsigned int linear_tid;
    __device__ __forceinline__ _TempStorage& PrivateStorage() {
        __shared__ _TempStorage private_storage;
        return private_storage;
    }

public:
    struct TempStorage : Uninitialized<_TempStorage> {};
    __device__ __forceinline__ BlockScan()
        : temp_storage(PrivateStorage()), linear_tid(RowMajorTid(BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z)) {}
    __device__ __forceinline__ BlockScan(TempStorage& temp_storage)
        : temp_storage(temp_storage.Alias()), linear_tid(RowMajorTid(BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z)) {}

    // ---- exclusive sums
    __device__ __forceinline__ void ExclusiveSum(T input, T& output) {
        T initial_value{};
        ExclusiveScan(input, output, initial_value, cub::Sum());
    }
    __device__ __forceinline__ void ExclusiveSum(T input, T& output, T& block_aggregate) {
        T initial_value{};
        ExclusiveScan(input, output, initial_value, cub::Sum(), block_aggregate);
    }
    template <typename BlockPrefixCallbackOp>
    __device__ __forceinline__ void ExclusiveSum(T input, T& output, BlockPrefixCallbackOp& block_prefix_callback_op) {
        ExclusiveScan(input, output, cub::Sum(), block_prefix_callback_op);
    }
    template <int ITEMS_PER_THREAD>
    __device__ __forceinline__ void ExclusiveSum(T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD]) {
        T initial_value{};
        ExclusiveScan(input, output, initial_value, cub::Sum());
    }
    template <int ITEMS_PER_THREAD>
    __device__ __forceinline__ void ExclusiveSum(T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD],
                                                 T& block_aggregate) {
        T initial_value{};
        ExclusiveScan(input, output, initial_value, cub::Sum(), block_aggregate);
    }
    template <int ITEMS_PER_THREAD, typename BlockPrefixCallbackOp>
    __device__ __forceinline__ void ExclusiveSum(T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD],
                                                 BlockPrefixCallbackOp& block_prefix_callback_op) {
        ExclusiveScan(input, output, cub::Sum(), block_prefix_callback_op);
    }

    // ---- exclusive scans
    template <typename ScanOp>
    __device__ __forceinline__ void ExclusiveScan(T input, T& output, T initial_value, ScanOp scan_op) {
        InternalBlockScan(temp_storage).ExclusiveScan(input, output, initial_value, scan_op);
    }
    template <typename ScanOp>
    __device__ __forceinline__ void ExclusiveScan(T input, T& output, T initial_value, ScanOp scan_op, T& block_aggregate) {
        InternalBlockScan(temp_storage).ExclusiveScan(input, output, initial_value, scan_op, block_aggregate);
    }
    template <typename ScanOp, typename BlockPrefixCallbackOp>
    __device__ __forceinline__ void ExclusiveScan(T input, T& output, ScanOp scan_op,
                                                  BlockPrefixCallbackOp& block_prefix_callback_op) {
        InternalBlockScan(temp_storage).ExclusiveScan(input, output, scan_op, block_prefix_callback_op);
    }
    template <int ITEMS_PER_THREAD, typename ScanOp>
    __device__ __forceinline__ void ExclusiveScan(T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD],
                                                  T initial_value, ScanOp scan_op) {
        T thread_prefix = internal::ThreadReduce(input, scan_op);
        ExclusiveScan(thread_prefix, thread_prefix, initial_value, scan_op);
        internal::ThreadScanExclusive(input, output, scan_op, thread_prefix);
    }
    template <int ITEMS_PER_THREAD, typename ScanOp>
    __device__ __forceinline__ void ExclusiveScan(T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD],
                                                  T initial_value, ScanOp scan_op, T& block_aggregate) {
        T thread_prefix = internal::ThreadReduce(input, scan_op);
        ExclusiveScan(thread_prefix, thread_prefix, initial_value, scan_op, block_aggregate);
        internal::ThreadScanExclusive(input, output, scan_op, thread_prefix);
    }
    template <int ITEMS_PER_THREAD, typename ScanOp, typename BlockPrefixCallbackOp>
    __device__ __forceinline__ void ExclusiveScan(T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD],
                                                  ScanOp scan_op, BlockPrefixCallbackOp& block_prefix_callback_op) {
        T thread_prefix = internal::ThreadReduce(input, scan_op);
        ExclusiveScan(thread_prefix, thread_prefix, scan_op, block_prefix_callback_op);
        internal::ThreadScanExclusive(input, output, scan_op, thread_prefix);
    }
    // without an initial value (thread 0's output undefined, as in CUB)
    template <typename ScanOp>
    __device__ __forceinline__ void ExclusiveScan(T input, T& output, ScanOp scan_op) {
        InternalBlockScan(temp_storage).ExclusiveScan(input, output, scan_op);
    }
    template <typename ScanOp>
    __device__ __forceinline__ void ExclusiveScan(T input, T& output, ScanOp scan_op, T& block_aggregate) {
        InternalBlockScan(temp_storage).ExclusiveScan(input, output, scan_op, block_aggregate);
    }
    template <int ITEMS_PER_THREAD, typename ScanOp>
    __device__ __forceinline__ void ExclusiveScan(T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD],
                                                  ScanOp scan_op) {
        T thread_partial = internal::ThreadReduce(input, scan_op);
        ExclusiveScan(thread_partial, thread_partial, scan_op);
        internal::ThreadScanExclusive(input, output, scan_op, thread_partial, (linear_tid != 0));
    }
    template <int ITEMS_PER_THREAD, typename ScanOp>
    __device__ __forceinline__ void ExclusiveScan(T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD],
                                                  ScanOp scan_op, T& block_aggregate) {
        T thread_partial = internal::ThreadReduce(input, scan_op);
        ExclusiveScan(thread_partial, thread_partial, scan_op, block_aggregate);
        internal::ThreadScanExclusive(input, output, scan_op, thread_partial, (linear_tid != 0));
    }

    // ---- inclusive sums
    __device__ __forceinline__ void InclusiveSum(T input, T& output) { InclusiveScan(input, output, cub::Sum()); }
    __device__ __forceinline__ void InclusiveSum(T input, T& output, T& block_aggregate) {
        InclusiveScan(input, output, cub::Sum(), block_aggregate);
    }
    template <typename BlockPrefixCallbackOp>
    __device__ __forceinline__ void InclusiveSum(T input, T& output, BlockPrefixCallbackOp& block_prefix_callback_op) {
        InclusiveScan(input, output, cub::Sum(), block_prefix_callback_op);
    }
    template <int ITEMS_PER_THREAD>
    __device__ __forceinline__ void InclusiveSum(T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD]) {
        if (ITEMS_PER_THREAD == 1) {
            InclusiveSum(input[0], output[0]);
        } else {
            cub::Sum scan_op;
            T thread_prefix = internal::ThreadReduce(input, scan_op);
            ExclusiveSum(thread_prefix, thread_prefix);
            internal::ThreadScanInclusive(input, output, scan_op, thread_prefix, (linear_tid != 0));
        }
    }
    template <int ITEMS_PER_THREAD>
    __device__ __forceinline__ void InclusiveSum(T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD],
                                                 T& block_aggregate) {
        if (ITEMS_PER_THREAD == 1) {
            InclusiveSum(input[0], output[0], block_aggregate);
        } else {
            cub::Sum scan_op;
            T thread_prefix = internal::ThreadReduce(input, scan_op);
            ExclusiveSum(thread_prefix, thread_prefix, block_aggregate);
            internal::ThreadScanInclusive(input, output, scan_op, thread_prefix, (linear_tid != 0));
        }
    }
    template <int ITEMS_PER_THREAD, typename BlockPrefixCallbackOp>
    __device__ __forceinline__ void InclusiveSum(T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD],
                                                 BlockPrefixCallbackOp& block_prefix_callback_op) {
        if (ITEMS_PER_THREAD == 1) {
            InclusiveSum(input[0], output[0], block_prefix_callback_op);
        } else {
            cub::Sum scan_op;
            T thread_prefix = internal::ThreadReduce(input, scan_op);
            ExclusiveSum(thread_prefix, thread_prefix, block_prefix_callback_op);
            internal::ThreadScanInclusive(input, output, scan_op, thread_prefix);
        }
    }

    // ---- inclusive scans
    template <typename ScanOp>
    __device__ __forceinline__ void InclusiveScan(T input, T& output, ScanOp scan_op) {
        InternalBlockScan(temp_storage).InclusiveScan(input, output, scan_op);
    }
    template <typename ScanOp>
    __device__ __forceinline__ void InclusiveScan(T input, T& output, ScanOp scan_op, T& block_aggregate) {
        InternalBlockScan(temp_storage).InclusiveScan(input, output, scan_op, block_aggregate);
    }
    template <typename ScanOp, typename BlockPrefixCallbackOp>
    __device__ __forceinline__ void InclusiveScan(T input, T& output, ScanOp scan_op,
                                                  BlockPrefixCallbackOp& block_prefix_callback_op) {
        InternalBlockScan(temp_storage).InclusiveScan(input, output, scan_op, block_prefix_callback_op);
    }
    template <int ITEMS_PER_THREAD, typename ScanOp>
    __device__ __forceinline__ void InclusiveScan(T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD],
                                                  ScanOp scan_op) {
        if (ITEMS_PER_THREAD == 1) {
            InclusiveScan(input[0], output[0], scan_op);
        } else {
            T thread_prefix = internal::ThreadReduce(input, scan_op);
            ExclusiveScan(thread_prefix, thread_prefix, scan_op);
            internal::ThreadScanInclusive(input, output, scan_op, thread_prefix, (linear_tid != 0));
        }
    }
    template <int ITEMS_PER_THREAD, typename ScanOp>
    __device__ __forceinline__ void InclusiveScan(T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD],
                                                  ScanOp scan_op, T& block_aggregate) {
        if (ITEMS_PER_THREAD == 1) {
            InclusiveScan(input[0], output[0], scan_op, block_aggregate);
        } else {
            T thread_prefix = internal::ThreadReduce(input, scan_op);
            ExclusiveScan(thread_prefix, thread_prefix, scan_op, block_aggregate);
            internal::ThreadScanInclusive(input, output, scan_op, thread_prefix, (linear_tid != 0));
        }
    }
    template <int ITEMS_PER_THREAD, typename ScanOp, typename BlockPrefixCallbackOp>
    __device__ __forceinline__ void InclusiveScan(T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD],
                                                  ScanOp scan_op, BlockPrefixCallbackOp& block_prefix_callback_op) {
        if (ITEMS_PER_THREAD == 1) {
            InclusiveScan(input[0], output[0], scan_op, block_prefix_callback_op);
        } else {
            T thread_prefix = internal::ThreadReduce(input, scan_op);
            ExclusiveScan(thread_prefix, thread_prefix, scan_op, block_prefix_callback_op);
            internal::ThreadScanInclusive(input, output, scan_op, thread_prefix);
        }
    }
};

CUB_NAMESPACE_END
#endif

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
