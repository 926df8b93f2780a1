#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// cub/block/block_histogram.cuh for the aclnn_py CPU emulator: cub::BlockHistogram (not NVIDIA's
// code; see cub/util_type.cuh). Counts are integers, so both algorithms (BLOCK_HISTO_SORT,
// BLOCK_HISTO_ATOMIC) give CUB's bins; here both add with shared-memory atomics.
// Histogram() zeroes the bins (InitHistogram: thread t zeroes bins t, t + BLOCK_THREADS, ...),
// synchronises, then adds (Composite). Composite adds to bins the caller already holds.
#ifndef ACLNN_EMU_CUB_BLOCK_HISTOGRAM_CUH
#define ACLNN_EMU_CUB_BLOCK_HISTOGRAM_CUH
#include "../util_type.cuh"

CUB_NAMESPACE_BEGIN

enum BlockHistogramAlgorithm { BLOCK_HISTO_SORT, BLOCK_HISTO_ATOMIC };

template <typename T, int BLOCK_DIM_X, int ITEMS_PER_THREAD, int BINS, BlockHistogramAlgorithm ALGORITHM = BLOCK_HISTO_SORT,
          int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockHistogram {
    enum { BLOCK_THREADS = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z };
    using _TempStorage = NullType;
    unsigned int linear_tid;

public:
    struct TempStorage : Uninitialized<_TempStorage> {};
    __device__ __forceinline__ BlockHistogram() : linear_tid(RowMajorTid(BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z)) {}
    __device__ __forceinline__ BlockHistogram(TempStorage&) : linear_tid(RowMajorTid(BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z)) {}

    template <typename CounterT>
    __device__ __forceinline__ void InitHistogram(CounterT histogram[BINS]) {
        int histo_offset = 0;
        for (; histo_offset + BLOCK_THREADS <= BINS; histo_offset += BLOCK_THREADS) histogram[histo_offset + linear_tid] = 0;
        if ((BINS % BLOCK_THREADS != 0) && (histo_offset + static_cast<int>(linear_tid) < BINS))
            histogram[histo_offset + linear_tid] = 0;
    }
    template <typename CounterT>
    __device__ __forceinline__ void Histogram(T (&items)[ITEMS_PER_THREAD], CounterT histogram[BINS]) {
        InitHistogram(histogram);
        __syncthreads();
        Composite(items, histogram);
    }
    template <typename CounterT>
    __device__ __forceinline__ void Composite(T (&items)[ITEMS_PER_THREAD], CounterT histogram[BINS]) {
        for (int i = 0; i < ITEMS_PER_THREAD; ++i) atomicAdd(histogram + items[i], CounterT(1));
    }
};

CUB_NAMESPACE_END
#endif

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
