#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// cub/cub.cuh for the aclnn_py CPU emulator.
//
// This is not NVIDIA's CUB (which g++ cannot build for the host: inline PTX, NV_IF_TARGET,
// libcu++) but a small re-implementation of CUB's block- and warp-level collectives on the
// emulator's CUDA surface, API-compatible with CUB 2.x and bit-exact with its default algorithms
// on a GPU: floating-point reductions and scans combine values in the same order as CUB 2.x
// (as shipped with CUDA 12.0-12.8; checked against CCCL v2.3.2's sources).
//
// Provided:
//   cub::WarpReduce  (Sum / Max / Min / Reduce, with valid_items; Head/TailSegmentedSum/Reduce)
//   cub::WarpScan    (Inclusive/ExclusiveSum, Inclusive/ExclusiveScan, Scan, Broadcast)
//   cub::BlockReduce (BLOCK_REDUCE_WARP_REDUCTIONS, _RAKING, _RAKING_COMMUTATIVE_ONLY; one item,
//                     item arrays, num_valid; 1-, 2- and 3-D blocks)
//   cub::BlockScan   (BLOCK_SCAN_RAKING, _RAKING_MEMOIZE, _WARP_SCANS; aggregates, prefix
//                     callbacks, item arrays)
//   cub::BlockLoad / BlockStore (DIRECT, STRIPED, VECTORIZE, TRANSPOSE, WARP_TRANSPOSE(_TIMESLICED)),
//   cub::Load/StoreDirectBlocked/Striped/WarpStriped, cub::BlockExchange,
//   cub::BlockRadixSort (keys, key-value pairs, ascending/descending, blocked/striped output),
//   cub::BlockHistogram, cub::BlockDiscontinuity,
//   functors cub::Sum/Max/Min/ArgMax/ArgMin/..., cub::KeyValuePair, cub::Uninitialized,
//   cub::Traits, ShuffleUp/Down/Index, LaneId, RowMajorTid, the CUB_* macros, ThreadLoad/ThreadStore
//   (every cache modifier a plain access), Cache-Modified/Counting/Constant/TransformInputIterator.
// Not provided (compile errors that say so): device-wide algorithms (cub::DeviceReduce, DeviceScan,
// DeviceRadixSort, ... -- host APIs), grid-level classes, other iterators, BlockShuffle,
// BlockAdjacentDifference, BlockMergeSort, BlockRunLengthDecode, Warp{Load,Store,Exchange,MergeSort}.
#ifndef ACLNN_EMU_CUB_CUB_CUH
#define ACLNN_EMU_CUB_CUB_CUH
#include "util_type.cuh"
#include "warp/warp_reduce.cuh"
#include "warp/warp_scan.cuh"
#include "block/block_raking_layout.cuh"
#include "block/block_reduce.cuh"
#include "block/block_scan.cuh"
#include "block/block_exchange.cuh"
#include "block/block_load.cuh"
#include "block/block_store.cuh"
#include "block/block_radix_sort.cuh"
#include "block/block_histogram.cuh"
#include "block/block_discontinuity.cuh"
#include "thread/thread_load.cuh"
#include "iterator/emu_iterators.cuh"
#include "detail/emu_unsupported.cuh"
#endif

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
