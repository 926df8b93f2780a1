#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// aclnn_py emulator: the parts of CUB that the emulator does not provide, declared so that using
// them is a compile error that says so (instead of "not a member of cub").
//  * device-wide algorithms (cub::DeviceReduce, DeviceScan, DeviceRadixSort, ...): host APIs that
//    launch their own kernels; the emulator compiles device code only (like NVRTC).
//  * block/warp classes this implementation does not have.
#ifndef ACLNN_EMU_CUB_UNSUPPORTED_CUH
#define ACLNN_EMU_CUB_UNSUPPORTED_CUH
#include "../util_type.cuh"

#define ACLNN_EMU_CUB_DEVICE_MSG(name)                                                                         \
    "cub::" name " is a device-wide (host-launched) CUB algorithm: the aclnn_py CUDA emulator provides only "  \
    "CUB's block- and warp-level collectives (cub::BlockReduce, BlockScan, BlockLoad, BlockStore, "            \
    "BlockExchange, BlockRadixSort, BlockHistogram, BlockDiscontinuity, WarpReduce, WarpScan); launch a "      \
    "kernel that uses those, or compute the device-wide result on the host"
#define ACLNN_EMU_CUB_DEVICE_FN(cls, fn)                                                                       \
    template <typename... Args>                                                                                \
    static __host__ __device__ auto fn(Args&&...) {                                                           \
        static_assert(detail::emu_false<Args...>::value, ACLNN_EMU_CUB_DEVICE_MSG(#cls));                     \
        return 0;                                                                                              \
    }

CUB_NAMESPACE_BEGIN
struct DeviceReduce {
    ACLNN_EMU_CUB_DEVICE_FN(DeviceReduce, Sum) ACLNN_EMU_CUB_DEVICE_FN(DeviceReduce, Reduce)
    ACLNN_EMU_CUB_DEVICE_FN(DeviceReduce, Min) ACLNN_EMU_CUB_DEVICE_FN(DeviceReduce, Max)
    ACLNN_EMU_CUB_DEVICE_FN(DeviceReduce, ArgMin) ACLNN_EMU_CUB_DEVICE_FN(DeviceReduce, ArgMax)
    ACLNN_EMU_CUB_DEVICE_FN(DeviceReduce, ReduceByKey) ACLNN_EMU_CUB_DEVICE_FN(DeviceReduce, TransformReduce)
};
struct DeviceSegmentedReduce {
    ACLNN_EMU_CUB_DEVICE_FN(DeviceSegmentedReduce, Sum) ACLNN_EMU_CUB_DEVICE_FN(DeviceSegmentedReduce, Reduce)
    ACLNN_EMU_CUB_DEVICE_FN(DeviceSegmentedReduce, Min) ACLNN_EMU_CUB_DEVICE_FN(DeviceSegmentedReduce, Max)
    ACLNN_EMU_CUB_DEVICE_FN(DeviceSegmentedReduce, ArgMin) ACLNN_EMU_CUB_DEVICE_FN(DeviceSegmentedReduce, ArgMax)
};
struct DeviceScan {
    ACLNN_EMU_CUB_DEVICE_FN(DeviceScan, ExclusiveSum) ACLNN_EMU_CUB_DEVICE_FN(DeviceScan, InclusiveSum)
    ACLNN_EMU_CUB_DEVICE_FN(DeviceScan, ExclusiveScan) ACLNN_EMU_CUB_DEVICE_FN(DeviceScan, InclusiveScan)
    ACLNN_EMU_CUB_DEVICE_FN(DeviceScan, ExclusiveSumByKey) ACLNN_EMU_CUB_DEVICE_FN(DeviceScan, InclusiveSumByKey)
    ACLNN_EMU_CUB_DEVICE_FN(DeviceScan, ExclusiveScanByKey) ACLNN_EMU_CUB_DEVICE_FN(DeviceScan, InclusiveScanByKey)
    ACLNN_EMU_CUB_DEVICE_FN(DeviceScan, InclusiveScanInit)
};
#define ACLNN_EMU_CUB_SORT_FNS(cls)                                                                          \
    ACLNN_EMU_CUB_DEVICE_FN(cls, SortKeys) ACLNN_EMU_CUB_DEVICE_FN(cls, SortPairs)                            \
    ACLNN_EMU_CUB_DEVICE_FN(cls, SortKeysDescending) ACLNN_EMU_CUB_DEVICE_FN(cls, SortPairsDescending)        \
    ACLNN_EMU_CUB_DEVICE_FN(cls, StableSortKeys) ACLNN_EMU_CUB_DEVICE_FN(cls, StableSortPairs)                \
    ACLNN_EMU_CUB_DEVICE_FN(cls, StableSortKeysDescending) ACLNN_EMU_CUB_DEVICE_FN(cls, StableSortPairsDescending) \
    ACLNN_EMU_CUB_DEVICE_FN(cls, SortKeysCopy) ACLNN_EMU_CUB_DEVICE_FN(cls, SortPairsCopy)
struct DeviceRadixSort { ACLNN_EMU_CUB_SORT_FNS(DeviceRadixSort) };
struct DeviceSegmentedRadixSort { ACLNN_EMU_CUB_SORT_FNS(DeviceSegmentedRadixSort) };
struct DeviceMergeSort { ACLNN_EMU_CUB_SORT_FNS(DeviceMergeSort) };
struct DeviceSegmentedSort { ACLNN_EMU_CUB_SORT_FNS(DeviceSegmentedSort) };
struct DeviceSelect {
    ACLNN_EMU_CUB_DEVICE_FN(DeviceSelect, If) ACLNN_EMU_CUB_DEVICE_FN(DeviceSelect, Flagged)
    ACLNN_EMU_CUB_DEVICE_FN(DeviceSelect, FlaggedIf) ACLNN_EMU_CUB_DEVICE_FN(DeviceSelect, Unique)
    ACLNN_EMU_CUB_DEVICE_FN(DeviceSelect, UniqueByKey)
};
struct DevicePartition {
    ACLNN_EMU_CUB_DEVICE_FN(DevicePartition, If) ACLNN_EMU_CUB_DEVICE_FN(DevicePartition, Flagged)
};
struct DeviceHistogram {
    ACLNN_EMU_CUB_DEVICE_FN(DeviceHistogram, HistogramEven) ACLNN_EMU_CUB_DEVICE_FN(DeviceHistogram, HistogramRange)
    ACLNN_EMU_CUB_DEVICE_FN(DeviceHistogram, MultiHistogramEven)
    ACLNN_EMU_CUB_DEVICE_FN(DeviceHistogram, MultiHistogramRange)
};
struct DeviceRunLengthEncode {
    ACLNN_EMU_CUB_DEVICE_FN(DeviceRunLengthEncode, Encode) ACLNN_EMU_CUB_DEVICE_FN(DeviceRunLengthEncode, NonTrivialRuns)
};
struct DeviceAdjacentDifference {
    ACLNN_EMU_CUB_DEVICE_FN(DeviceAdjacentDifference, SubtractLeft)
    ACLNN_EMU_CUB_DEVICE_FN(DeviceAdjacentDifference, SubtractRight)
    ACLNN_EMU_CUB_DEVICE_FN(DeviceAdjacentDifference, SubtractLeftCopy)
    ACLNN_EMU_CUB_DEVICE_FN(DeviceAdjacentDifference, SubtractRightCopy)
};
struct DeviceSpmv { ACLNN_EMU_CUB_DEVICE_FN(DeviceSpmv, CsrMV) };
struct DeviceCopy { ACLNN_EMU_CUB_DEVICE_FN(DeviceCopy, Batched) };
struct DeviceMemcpy { ACLNN_EMU_CUB_DEVICE_FN(DeviceMemcpy, Batched) };
struct DeviceFor {
    ACLNN_EMU_CUB_DEVICE_FN(DeviceFor, ForEach) ACLNN_EMU_CUB_DEVICE_FN(DeviceFor, ForEachN)
    ACLNN_EMU_CUB_DEVICE_FN(DeviceFor, ForEachCopy) ACLNN_EMU_CUB_DEVICE_FN(DeviceFor, ForEachCopyN)
    ACLNN_EMU_CUB_DEVICE_FN(DeviceFor, Bulk)
};
#undef ACLNN_EMU_CUB_SORT_FNS

// Block / warp classes not provided: instantiating one is a static_assert naming it.
#define ACLNN_EMU_CUB_NOT_PROVIDED(name)                                                                       \
    "cub::" name " is not provided by the aclnn_py CUDA emulator, which implements CUB's BlockReduce, "        \
    "BlockScan, BlockLoad, BlockStore, BlockExchange, BlockRadixSort, BlockHistogram, BlockDiscontinuity, "    \
    "WarpReduce and WarpScan (bit-exact with CUB 2.x)"
enum WarpLoadAlgorithm { WARP_LOAD_DIRECT, WARP_LOAD_STRIPED, WARP_LOAD_VECTORIZE, WARP_LOAD_TRANSPOSE };
enum WarpStoreAlgorithm { WARP_STORE_DIRECT, WARP_STORE_STRIPED, WARP_STORE_VECTORIZE, WARP_STORE_TRANSPOSE };
enum WarpExchangeAlgorithm { WARP_EXCHANGE_SMEM, WARP_EXCHANGE_SHUFFLE };
template <typename T, int BLOCK_DIM_X, int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockShuffle { static_assert(detail::emu_false<T>::value, ACLNN_EMU_CUB_NOT_PROVIDED("BlockShuffle")); public: struct TempStorage {}; };
template <typename T, int BLOCK_DIM_X, int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockAdjacentDifference { static_assert(detail::emu_false<T>::value, ACLNN_EMU_CUB_NOT_PROVIDED("BlockAdjacentDifference")); public: struct TempStorage {}; };
template <typename KeyT, int BLOCK_DIM_X, int ITEMS_PER_THREAD, typename ValueT = NullType, int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1>
class BlockMergeSort { static_assert(detail::emu_false<KeyT>::value, ACLNN_EMU_CUB_NOT_PROVIDED("BlockMergeSort")); public: struct TempStorage {}; };
template <typename ItemT, int BLOCK_DIM_X, int RUNS_PER_THREAD, int DECODED_ITEMS_PER_THREAD, typename DecodedOffsetT = unsigned int, int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1>
class BlockRunLengthDecode { static_assert(detail::emu_false<ItemT>::value, ACLNN_EMU_CUB_NOT_PROVIDED("BlockRunLengthDecode")); public: struct TempStorage {}; };
template <typename InputT, int ITEMS_PER_THREAD, int LOGICAL_WARP_THREADS = 32, int LEGACY_PTX_ARCH = 0, WarpExchangeAlgorithm A = WARP_EXCHANGE_SMEM>
class WarpExchange { static_assert(detail::emu_false<InputT>::value, ACLNN_EMU_CUB_NOT_PROVIDED("WarpExchange")); public: struct TempStorage {}; };
template <typename InputT, int ITEMS_PER_THREAD, WarpLoadAlgorithm A = WARP_LOAD_DIRECT, int LOGICAL_WARP_THREADS = 32, int LEGACY_PTX_ARCH = 0>
class WarpLoad { static_assert(detail::emu_false<InputT>::value, ACLNN_EMU_CUB_NOT_PROVIDED("WarpLoad")); public: struct TempStorage {}; };
template <typename T, int ITEMS_PER_THREAD, WarpStoreAlgorithm A = WARP_STORE_DIRECT, int LOGICAL_WARP_THREADS = 32, int LEGACY_PTX_ARCH = 0>
class WarpStore { static_assert(detail::emu_false<T>::value, ACLNN_EMU_CUB_NOT_PROVIDED("WarpStore")); public: struct TempStorage {}; };
template <typename KeyT, int ITEMS_PER_THREAD, int LOGICAL_WARP_THREADS = 32, typename ValueT = NullType, int LEGACY_PTX_ARCH = 0>
class WarpMergeSort { static_assert(detail::emu_false<KeyT>::value, ACLNN_EMU_CUB_NOT_PROVIDED("WarpMergeSort")); public: struct TempStorage {}; };
CUB_NAMESPACE_END
#endif

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
