#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// cub/block/block_radix_sort.cuh for the aclnn_py CPU emulator: cub::BlockRadixSort (not NVIDIA's
// code; see cub/util_type.cuh). Same passes as CUB 2.x: keys are mapped to their radix order
// (Traits<KeyT>::TwiddleIn; floats: -0.0 ranks as +0.0, as CUB's digit extractor does), then
// RADIX_BITS bits per pass from begin_bit to end_bit, each pass a stable ranking (by digit, then by
// blocked position t*ITEMS_PER_THREAD + i; digits reversed when descending) and a scatter through
// shared memory. A stable sort has one result, so keys and values come out as CUB's.
// The ranking counts digits per thread and scans the (digit, thread) counters in shared memory.
#ifndef ACLNN_EMU_CUB_BLOCK_RADIX_SORT_CUH
#define ACLNN_EMU_CUB_BLOCK_RADIX_SORT_CUH
#include "../util_type.cuh"
#include "block_exchange.cuh"
#include "block_scan.cuh"

CUB_NAMESPACE_BEGIN

template <typename KeyT, int BLOCK_DIM_X, int ITEMS_PER_THREAD, typename ValueT = NullType, int RADIX_BITS = 4,
          bool MEMOIZE_OUTER_SCAN = true, BlockScanAlgorithm INNER_SCAN_ALGORITHM = BLOCK_SCAN_WARP_SCANS,
          int SMEM_CONFIG = 0, int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockRadixSort {
    enum {
        BLOCK_THREADS = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z,
        RADIX_DIGITS = 1 << RADIX_BITS,
        KEYS_ONLY = std::is_same<ValueT, NullType>::value,
    };
    static_assert(Traits<KeyT>::PRIMITIVE, "BlockRadixSort (emulator): keys must be arithmetic types");
    using KeyTraits = Traits<KeyT>;
    using UnsignedBits = typename KeyTraits::UnsignedBits;
    using ExchangeKeys = BlockExchange<KeyT, BLOCK_DIM_X, ITEMS_PER_THREAD, false, BLOCK_DIM_Y, BLOCK_DIM_Z>;
    using ExchangeValues = BlockExchange<ValueT, BLOCK_DIM_X, ITEMS_PER_THREAD, false, BLOCK_DIM_Y, BLOCK_DIM_Z>;
    union _TempStorage {
        int counters[RADIX_DIGITS * BLOCK_THREADS];   // [digit][thread], then their exclusive scan
        typename ExchangeKeys::TempStorage exchange_keys;
        typename ExchangeValues::TempStorage exchange_values;
    };
    _TempStorage& temp_storage;
    unsigned int linear_tid;
    __device__ __forceinline__ _TempStorage& PrivateStorage() {
        __shared__ _TempStorage private_storage;
        return private_storage;
    }

    static __device__ __forceinline__ UnsignedBits Ordered(KeyT key) {
        UnsignedBits bits;
        memcpy(&bits, &key, sizeof(KeyT));
        bits = KeyTraits::TwiddleIn(bits);
        if (KeyTraits::CATEGORY == FLOATING_POINT && bits == KeyTraits::TwiddleIn(KeyTraits::HIGH_BIT))
            bits = KeyTraits::TwiddleIn(UnsignedBits(0));   // -0.0 sorts as +0.0
        return bits;
    }
    // ranks[i] = position of item i in the stable order of this pass
    template <bool DESCENDING>
    __device__ __forceinline__ void RankKeys(KeyT (&keys)[ITEMS_PER_THREAD], int (&ranks)[ITEMS_PER_THREAD], int begin_bit,
                                             int pass_bits) {
        int digits[ITEMS_PER_THREAD];
        int local[RADIX_DIGITS] = {};
        for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
            int digit = static_cast<int>(BFE(Ordered(keys[i]), begin_bit, pass_bits));
            if (DESCENDING) digit = RADIX_DIGITS - digit - 1;
            digits[i] = digit;
            ranks[i] = local[digit]++;   // same digit earlier in this thread
        }
        for (int d = 0; d < RADIX_DIGITS; ++d) temp_storage.counters[d * BLOCK_THREADS + linear_tid] = local[d];
        __syncthreads();
        if (linear_tid == 0) {
            int running = 0;
            for (int k = 0; k < RADIX_DIGITS * BLOCK_THREADS; ++k) {
                const int c = temp_storage.counters[k];
                temp_storage.counters[k] = running;
                running += c;
            }
        }
        __syncthreads();
        for (int i = 0; i < ITEMS_PER_THREAD; ++i) ranks[i] += temp_storage.counters[digits[i] * BLOCK_THREADS + linear_tid];
        __syncthreads();
    }
    template <bool DESCENDING, bool TO_STRIPED>
    __device__ __forceinline__ void SortImpl(KeyT (&keys)[ITEMS_PER_THREAD], ValueT (&values)[ITEMS_PER_THREAD],
                                             int begin_bit, int end_bit) {
        while (true) {
            const int pass_bits = CUB_MIN(RADIX_BITS, end_bit - begin_bit);
            int ranks[ITEMS_PER_THREAD];
            RankKeys<DESCENDING>(keys, ranks, begin_bit, pass_bits);
            begin_bit += RADIX_BITS;
            const bool last = begin_bit >= end_bit;
            if (TO_STRIPED && last) {
                ExchangeKeys(temp_storage.exchange_keys).ScatterToStriped(keys, ranks);
                if (!KEYS_ONLY) {
                    __syncthreads();
                    ExchangeValues(temp_storage.exchange_values).ScatterToStriped(values, ranks);
                }
            } else {
                ExchangeKeys(temp_storage.exchange_keys).ScatterToBlocked(keys, ranks);
                if (!KEYS_ONLY) {
                    __syncthreads();
                    ExchangeValues(temp_storage.exchange_values).ScatterToBlocked(values, ranks);
                }
            }
            if (last) break;
            __syncthreads();
        }
    }

public:
    struct TempStorage : Uninitialized<_TempStorage> {};
    __device__ __forceinline__ BlockRadixSort()
        : temp_storage(PrivateStorage()), linear_tid(RowMajorTid(BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z)) {}
    __device__ __forceinline__ BlockRadixSort(TempStorage& temp_storage)
        : temp_storage(temp_storage.Alias()), linear_tid(RowMajorTid(BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z)) {}

    __device__ __forceinline__ void Sort(KeyT (&keys)[ITEMS_PER_THREAD], int begin_bit = 0, int end_bit = sizeof(KeyT) * 8) {
        ValueT values[ITEMS_PER_THREAD];
        SortImpl<false, false>(keys, values, begin_bit, end_bit);
    }
    __device__ __forceinline__ void Sort(KeyT (&keys)[ITEMS_PER_THREAD], ValueT (&values)[ITEMS_PER_THREAD],
                                         int begin_bit = 0, int end_bit = sizeof(KeyT) * 8) {
        SortImpl<false, false>(keys, values, begin_bit, end_bit);
    }
    __device__ __forceinline__ void SortDescending(KeyT (&keys)[ITEMS_PER_THREAD], int begin_bit = 0,
                                                   int end_bit = sizeof(KeyT) * 8) {
        ValueT values[ITEMS_PER_THREAD];
        SortImpl<true, false>(keys, values, begin_bit, end_bit);
    }
    __device__ __forceinline__ void SortDescending(KeyT (&keys)[ITEMS_PER_THREAD], ValueT (&values)[ITEMS_PER_THREAD],
                                                   int begin_bit = 0, int end_bit = sizeof(KeyT) * 8) {
        SortImpl<true, false>(keys, values, begin_bit, end_bit);
    }
    __device__ __forceinline__ void SortBlockedToStriped(KeyT (&keys)[ITEMS_PER_THREAD], int begin_bit = 0,
                                                         int end_bit = sizeof(KeyT) * 8) {
        ValueT values[ITEMS_PER_THREAD];
        SortImpl<false, true>(keys, values, begin_bit, end_bit);
    }
    __device__ __forceinline__ void SortBlockedToStriped(KeyT (&keys)[ITEMS_PER_THREAD], ValueT (&values)[ITEMS_PER_THREAD],
                                                         int begin_bit = 0, int end_bit = sizeof(KeyT) * 8) {
        SortImpl<false, true>(keys, values, begin_bit, end_bit);
    }
    __device__ __forceinline__ void SortDescendingBlockedToStriped(KeyT (&keys)[ITEMS_PER_THREAD], int begin_bit = 0,
                                                                   int end_bit = sizeof(KeyT) * 8) {
        ValueT values[ITEMS_PER_THREAD];
        SortImpl<true, true>(keys, values, begin_bit, end_bit);
    }
    __device__ __forceinline__ void SortDescendingBlockedToStriped(KeyT (&keys)[ITEMS_PER_THREAD],
                                                                   ValueT (&values)[ITEMS_PER_THREAD], int begin_bit = 0,
                                                                   int end_bit = sizeof(KeyT) * 8) {
        SortImpl<true, true>(keys, values, begin_bit, end_bit);
    }
};

CUB_NAMESPACE_END
#endif

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
