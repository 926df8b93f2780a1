#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// cub/warp/warp_reduce.cuh for the aclnn_py CPU emulator: cub::WarpReduce, combining values in the
// order of CUB 2.x's algorithms (not NVIDIA's code; see cub/util_type.cuh).
//  * power-of-two logical warps: WarpReduceShfl -- log2(N) shuffle-down steps with offsets 1, 2, 4,
//    ...; at each step lane i combines op(own, value of lane i+offset) when i+offset <= last_lane
//    (last valid lane, or the end of the segment for the segmented reductions), else keeps its own.
//    CUB's PTX specialisations for Sum (shfl + predicated add: other + own) add the same two
//    values; IEEE addition is commutative, so the bits are the same.
//  * other sizes: WarpReduceSmem -- the same offsets through shared memory, lane i combining
//    op(own, slot[i+offset]) when i+offset < valid_items.
// Results are defined in lane 0 of each logical warp only (as CUB documents).
#ifndef ACLNN_EMU_CUB_WARP_REDUCE_CUH
#define ACLNN_EMU_CUB_WARP_REDUCE_CUH
#include "../util_type.cuh"

CUB_NAMESPACE_BEGIN

template <typename T, int LOGICAL_WARP_THREADS, int LEGACY_PTX_ARCH = 0>
struct WarpReduceShfl {
    static_assert(PowerOfTwo<LOGICAL_WARP_THREADS>::VALUE, "LOGICAL_WARP_THREADS must be a power of two");
    enum {
        IS_ARCH_WARP = (LOGICAL_WARP_THREADS == 32),
        STEPS = Log2<LOGICAL_WARP_THREADS>::VALUE,
    };
    using TempStorage = NullType;
    int lane_id;
    int warp_id;
    unsigned int member_mask;

    __device__ __forceinline__ WarpReduceShfl(TempStorage&)
        : lane_id(static_cast<int>(LaneId())), warp_id(IS_ARCH_WARP ? 0 : (lane_id / LOGICAL_WARP_THREADS)),
          member_mask(WarpMask<LOGICAL_WARP_THREADS>(warp_id)) {
        if (!IS_ARCH_WARP) lane_id = lane_id % LOGICAL_WARP_THREADS;
    }
    // the shuffle-down tree (ReduceStep for STEP = 0 .. STEPS-1)
    template <typename ReductionOp>
    __device__ __forceinline__ T ReduceSteps(T output, ReductionOp reduction_op, int last_lane) {
#pragma GCC unroll 8
        for (int step = 0; step < STEPS; ++step) {
            const int offset = 1 << step;
            T temp = detail::emu_shfl<LOGICAL_WARP_THREADS, detail::EMU_DOWN>(output, offset, member_mask);
            if (offset + lane_id <= last_lane) output = reduction_op(output, temp);
        }
        return output;
    }
    template <bool ALL_LANES_VALID, typename ReductionOp>
    __device__ __forceinline__ T Reduce(T input, int valid_items, ReductionOp reduction_op) {
        return ReduceSteps(input, reduction_op, ALL_LANES_VALID ? LOGICAL_WARP_THREADS - 1 : valid_items - 1);
    }
    // last_lane = the next segment boundary at or after this lane (CUB's ballot / brev / clz)
    template <bool HEAD_SEGMENTED, typename FlagT, typename ReductionOp>
    __device__ __forceinline__ T SegmentedReduce(T input, FlagT flag, ReductionOp reduction_op) {
        int warp_flags = WARP_BALLOT(flag ? 1 : 0, member_mask);
        if (HEAD_SEGMENTED) warp_flags >>= 1;   // signed shift, as CUB's `int warp_flags`
        warp_flags &= LaneMaskGe();
        if (!IS_ARCH_WARP) warp_flags = (warp_flags & member_mask) >> (warp_id * LOGICAL_WARP_THREADS);
        warp_flags |= 1u << (LOGICAL_WARP_THREADS - 1);
        const int last_lane = __clz(__brev(warp_flags));
        return ReduceSteps(input, reduction_op, last_lane);
    }
};

template <typename T, int LOGICAL_WARP_THREADS, int LEGACY_PTX_ARCH = 0>
struct WarpReduceSmem {
    enum {
        IS_ARCH_WARP = (LOGICAL_WARP_THREADS == 32),
        IS_POW_OF_TWO = PowerOfTwo<LOGICAL_WARP_THREADS>::VALUE,
        STEPS = Log2<LOGICAL_WARP_THREADS>::VALUE,
        HALF_WARP_THREADS = 1 << (STEPS - 1),
        WARP_SMEM_ELEMENTS = LOGICAL_WARP_THREADS + HALF_WARP_THREADS,
    };
    struct _TempStorage {
        T reduce[WARP_SMEM_ELEMENTS];
        unsigned char flags[WARP_SMEM_ELEMENTS];
    };
    struct TempStorage : Uninitialized<_TempStorage> {};
    _TempStorage& temp_storage;
    unsigned int lane_id;
    unsigned int member_mask;

    explicit __device__ __forceinline__ WarpReduceSmem(TempStorage& temp_storage)
        : temp_storage(temp_storage.Alias()), lane_id(IS_ARCH_WARP ? LaneId() : LaneId() % LOGICAL_WARP_THREADS),
          member_mask(WarpMask<LOGICAL_WARP_THREADS>(LaneId() / LOGICAL_WARP_THREADS)) {}

    template <bool ALL_LANES_VALID, typename ReductionOp>
    __device__ __forceinline__ T Reduce(T input, int valid_items, ReductionOp reduction_op) {
        for (int step = 0; step < STEPS; ++step) {
            const int offset = 1 << step;
            temp_storage.reduce[lane_id] = input;
            __syncwarp(member_mask);
            if ((ALL_LANES_VALID && IS_POW_OF_TWO) || (static_cast<int>(lane_id) + offset < valid_items)) {
                T peer_addend = temp_storage.reduce[lane_id + offset];
                input = reduction_op(input, peer_addend);
            }
            __syncwarp(member_mask);
        }
        return input;
    }
    template <bool HEAD_SEGMENTED, typename FlagT, typename ReductionOp>
    __device__ __forceinline__ T SegmentedReduce(T input, FlagT flag, ReductionOp reduction_op) {
        int warp_flags = WARP_BALLOT(flag ? 1 : 0, member_mask);
        if (!HEAD_SEGMENTED) warp_flags <<= 1;
        warp_flags &= LaneMaskGt();
        if (!IS_ARCH_WARP) warp_flags >>= (LaneId() / LOGICAL_WARP_THREADS) * LOGICAL_WARP_THREADS;
        int next_flag = __clz(__brev(warp_flags));
        if (LOGICAL_WARP_THREADS != 32) next_flag = CUB_MIN(next_flag, LOGICAL_WARP_THREADS);
        for (int step = 0; step < STEPS; ++step) {
            const int offset = 1 << step;
            temp_storage.reduce[lane_id] = input;
            __syncwarp(member_mask);
            if (offset + static_cast<int>(lane_id) < next_flag) {
                T peer_addend = temp_storage.reduce[lane_id + offset];
                input = reduction_op(input, peer_addend);
            }
            __syncwarp(member_mask);
        }
        return input;
    }
};

template <typename T, int LOGICAL_WARP_THREADS = 32, int LEGACY_PTX_ARCH = 0>
class WarpReduce {
    static_assert(LOGICAL_WARP_THREADS >= 1 && LOGICAL_WARP_THREADS <= 32, "LOGICAL_WARP_THREADS must be in [1, 32]");

public:
    using InternalWarpReduce = std::conditional_t<PowerOfTwo<LOGICAL_WARP_THREADS>::VALUE,
                                                  WarpReduceShfl<T, LOGICAL_WARP_THREADS>,
                                                  WarpReduceSmem<T, LOGICAL_WARP_THREADS>>;

private:
    using _TempStorage = typename InternalWarpReduce::TempStorage;
    _TempStorage& temp_storage;

public:
    struct TempStorage : Uninitialized<_TempStorage> {};
    __device__ __forceinline__ WarpReduce(TempStorage& temp_storage) : temp_storage(temp_storage.Alias()) {}

    __device__ __forceinline__ T Sum(T input) {
        return InternalWarpReduce(temp_storage).template Reduce<true>(input, LOGICAL_WARP_THREADS, cub::Sum());
    }
    __device__ __forceinline__ T Sum(T input, int valid_items) {
        return InternalWarpReduce(temp_storage).template Reduce<false>(input, valid_items, cub::Sum());
    }
    __device__ __forceinline__ T Max(T input) {
        return InternalWarpReduce(temp_storage).template Reduce<true>(input, LOGICAL_WARP_THREADS, cub::Max());
    }
    __device__ __forceinline__ T Max(T input, int valid_items) {
        return InternalWarpReduce(temp_storage).template Reduce<false>(input, valid_items, cub::Max());
    }
    __device__ __forceinline__ T Min(T input) {
        return InternalWarpReduce(temp_storage).template Reduce<true>(input, LOGICAL_WARP_THREADS, cub::Min());
    }
    __device__ __forceinline__ T Min(T input, int valid_items) {
        return InternalWarpReduce(temp_storage).template Reduce<false>(input, valid_items, cub::Min());
    }
    template <typename FlagT>
    __device__ __forceinline__ T HeadSegmentedSum(T input, FlagT head_flag) {
        return HeadSegmentedReduce(input, head_flag, cub::Sum());
    }
    template <typename FlagT>
    __device__ __forceinline__ T TailSegmentedSum(T input, FlagT tail_flag) {
        return TailSegmentedReduce(input, tail_flag, cub::Sum());
    }
    template <typename ReductionOp>
    __device__ __forceinline__ T Reduce(T input, ReductionOp reduction_op) {
        return InternalWarpReduce(temp_storage).template Reduce<true>(input, LOGICAL_WARP_THREADS, reduction_op);
    }
    template <typename ReductionOp>
    __device__ __forceinline__ T Reduce(T input, ReductionOp reduction_op, int valid_items) {
        return InternalWarpReduce(temp_storage).template Reduce<false>(input, valid_items, reduction_op);
    }
    template <typename ReductionOp, typename FlagT>
    __device__ __forceinline__ T HeadSegmentedReduce(T input, FlagT head_flag, ReductionOp reduction_op) {
        return InternalWarpReduce(temp_storage).template SegmentedReduce<true>(input, head_flag, reduction_op);
    }
    template <typename ReductionOp, typename FlagT>
    __device__ __forceinline__ T TailSegmentedReduce(T input, FlagT tail_flag, ReductionOp reduction_op) {
        return InternalWarpReduce(temp_storage).template SegmentedReduce<false>(input, tail_flag, reduction_op);
    }
};

CUB_NAMESPACE_END
#endif

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
