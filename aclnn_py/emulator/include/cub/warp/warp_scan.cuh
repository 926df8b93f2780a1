#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// cub/warp/warp_scan.cuh for the aclnn_py CPU emulator: cub::WarpScan in the order of CUB 2.x's
// algorithms (not NVIDIA's code; see cub/util_type.cuh).
//  * power-of-two logical warps: WarpScanShfl -- Kogge-Stone: log2(N) shuffle-up steps with
//    offsets 1, 2, 4, ...; lane i takes op(value of lane i-offset, own) when i >= offset.
//  * other sizes: WarpScanSmem -- the same steps through shared memory (for cub::Sum on primitive
//    types, lanes below the offset add the identity 0, as CUB does).
//  * exclusive results: the inclusive result of the lane below (shuffle up by 1); for integer sums
//    inclusive - input, as CUB; with an initial value: inclusive = op(init, inclusive) first, and
//    lane 0 gets init. Aggregates are the last lane's inclusive result before init is applied.
#ifndef ACLNN_EMU_CUB_WARP_SCAN_CUH
#define ACLNN_EMU_CUB_WARP_SCAN_CUH
#include "../util_type.cuh"

CUB_NAMESPACE_BEGIN

namespace detail {
template <typename T, typename ScanOp>
constexpr bool emu_int_sum_v = (Traits<T>::CATEGORY == SIGNED_INTEGER || Traits<T>::CATEGORY == UNSIGNED_INTEGER) &&
                               std::is_same<std::remove_cv_t<ScanOp>, cub::Sum>::value;
}

template <typename T, int LOGICAL_WARP_THREADS, int LEGACY_PTX_ARCH = 0>
struct WarpScanShfl {
    enum { IS_ARCH_WARP = (LOGICAL_WARP_THREADS == 32), STEPS = Log2<LOGICAL_WARP_THREADS>::VALUE };
    struct TempStorage {};
    unsigned int lane_id;
    unsigned int warp_id;
    unsigned int member_mask;

    explicit __device__ __forceinline__ WarpScanShfl(TempStorage&)
        : lane_id(LaneId()), warp_id(IS_ARCH_WARP ? 0 : (lane_id / LOGICAL_WARP_THREADS)),
          member_mask(WarpMask<LOGICAL_WARP_THREADS>(warp_id)) {
        if (!IS_ARCH_WARP) lane_id = lane_id % LOGICAL_WARP_THREADS;
    }
    __device__ __forceinline__ T Broadcast(T input, int src_lane) {
        return ShuffleIndex<LOGICAL_WARP_THREADS>(input, src_lane, member_mask);
    }
    template <typename ScanOp>
    __device__ __forceinline__ void InclusiveScan(T input, T& inclusive_output, ScanOp scan_op) {
        inclusive_output = input;
#pragma GCC unroll 8
        for (int step = 0; step < STEPS; ++step) {
            const int offset = 1 << step;
            T temp = detail::emu_shfl<LOGICAL_WARP_THREADS, detail::EMU_UP>(inclusive_output, offset, member_mask);
            if (static_cast<int>(lane_id) >= offset) inclusive_output = scan_op(temp, inclusive_output);
        }
    }
    template <typename ScanOp>
    __device__ __forceinline__ void InclusiveScan(T input, T& inclusive_output, ScanOp scan_op, T& warp_aggregate) {
        InclusiveScan(input, inclusive_output, scan_op);
        warp_aggregate = ShuffleIndex<LOGICAL_WARP_THREADS>(inclusive_output, LOGICAL_WARP_THREADS - 1, member_mask);
    }
    // exclusive from inclusive (no initial value)
    template <typename ScanOp>
    __device__ __forceinline__ void Update(T input, T& inclusive, T& exclusive, ScanOp) {
        if constexpr (detail::emu_int_sum_v<T, ScanOp>) exclusive = inclusive - input;
        else exclusive = ShuffleUp<LOGICAL_WARP_THREADS>(inclusive, 1, 0, member_mask);
    }
    // exclusive from inclusive with an initial value
    template <typename ScanOp>
    __device__ __forceinline__ void UpdateInit(T input, T& inclusive, T& exclusive, ScanOp scan_op, T initial_value) {
        inclusive = scan_op(initial_value, inclusive);
        if constexpr (detail::emu_int_sum_v<T, ScanOp>) {
            exclusive = inclusive - input;
        } else {
            exclusive = ShuffleUp<LOGICAL_WARP_THREADS>(inclusive, 1, 0, member_mask);
            if (lane_id == 0) exclusive = initial_value;
        }
    }
    template <typename ScanOp>
    __device__ __forceinline__ void Update(T input, T& inclusive, T& exclusive, T& warp_aggregate, ScanOp scan_op) {
        warp_aggregate = ShuffleIndex<LOGICAL_WARP_THREADS>(inclusive, LOGICAL_WARP_THREADS - 1, member_mask);
        Update(input, inclusive, exclusive, scan_op);
    }
    template <typename ScanOp>
    __device__ __forceinline__ void UpdateInit(T input, T& inclusive, T& exclusive, T& warp_aggregate, ScanOp scan_op,
                                               T initial_value) {
        warp_aggregate = ShuffleIndex<LOGICAL_WARP_THREADS>(inclusive, LOGICAL_WARP_THREADS - 1, member_mask);
        UpdateInit(input, inclusive, exclusive, scan_op, initial_value);
    }
};

template <typename T, int LOGICAL_WARP_THREADS, int LEGACY_PTX_ARCH = 0>
struct WarpScanSmem {
    enum {
        IS_ARCH_WARP = (LOGICAL_WARP_THREADS == 32),
        STEPS = Log2<LOGICAL_WARP_THREADS>::VALUE,
        HALF_WARP_THREADS = 1 << (STEPS - 1),
        WARP_SMEM_ELEMENTS = LOGICAL_WARP_THREADS + HALF_WARP_THREADS,
    };
    using _TempStorage = T[WARP_SMEM_ELEMENTS];
    struct TempStorage : Uninitialized<_TempStorage> {};
    _TempStorage& temp_storage;
    unsigned int lane_id;
    unsigned int member_mask;

    explicit __device__ __forceinline__ WarpScanSmem(TempStorage& temp_storage)
        : temp_storage(temp_storage.Alias()), lane_id(IS_ARCH_WARP ? LaneId() : LaneId() % LOGICAL_WARP_THREADS),
          member_mask(WarpMask<LOGICAL_WARP_THREADS>(LaneId() / LOGICAL_WARP_THREADS)) {}

    // CUB ends these operations with loads and no __syncwarp: a converged warp has done all its
    // loads before any lane reaches the next call's first store (CUB's docs ask for a __syncwarp
    // before reusing the TempStorage; code often relies on convergence instead). The emulator's
    // lanes run one after another, so they meet here first (an ordering point, no arithmetic).
    __device__ __forceinline__ void Converge() { __syncwarp(member_mask); }
    template <bool HAS_IDENTITY, typename ScanOp>
    __device__ __forceinline__ void ScanSteps(T& partial, ScanOp scan_op) {
        for (int step = 0; step < STEPS; ++step) {
            const int offset = 1 << step;
            temp_storage[HALF_WARP_THREADS + lane_id] = partial;
            __syncwarp(member_mask);
            if (HAS_IDENTITY || (static_cast<int>(lane_id) >= offset)) {
                T addend = temp_storage[HALF_WARP_THREADS + lane_id - offset];
                partial = scan_op(addend, partial);
            }
            __syncwarp(member_mask);
        }
    }
    template <typename ScanOp>
    __device__ __forceinline__ void InclusiveScan(T input, T& output, ScanOp scan_op) {
        if constexpr (std::is_same<std::remove_cv_t<ScanOp>, cub::Sum>::value && Traits<T>::PRIMITIVE) {
            temp_storage[lane_id] = T(0);   // identity below the data: lanes < offset add 0
            __syncwarp(member_mask);
            output = input;
            ScanSteps<true>(output, scan_op);
        } else {
            output = input;
            ScanSteps<false>(output, scan_op);
        }
    }
    __device__ __forceinline__ T Broadcast(T input, unsigned int src_lane) {
        if (lane_id == src_lane) temp_storage[0] = input;
        __syncwarp(member_mask);
        T r = temp_storage[0];
        Converge();
        return r;
    }
    template <typename ScanOp>
    __device__ __forceinline__ void InclusiveScan(T input, T& inclusive_output, ScanOp scan_op, T& warp_aggregate) {
        InclusiveScan(input, inclusive_output, scan_op);
        temp_storage[HALF_WARP_THREADS + lane_id] = inclusive_output;
        __syncwarp(member_mask);
        warp_aggregate = temp_storage[WARP_SMEM_ELEMENTS - 1];
        __syncwarp(member_mask);
    }
    template <typename ScanOp>
    __device__ __forceinline__ void Update(T input, T& inclusive, T& exclusive, ScanOp) {
        if constexpr (detail::emu_int_sum_v<T, ScanOp>) {
            exclusive = inclusive - input;
        } else {
            temp_storage[HALF_WARP_THREADS + lane_id] = inclusive;
            __syncwarp(member_mask);
            exclusive = temp_storage[HALF_WARP_THREADS + lane_id - 1];
            Converge();
        }
    }
    template <typename ScanOp>
    __device__ __forceinline__ void UpdateInit(T input, T& inclusive, T& exclusive, ScanOp scan_op, T initial_value) {
        inclusive = scan_op(initial_value, inclusive);
        if constexpr (detail::emu_int_sum_v<T, ScanOp>) {
            exclusive = inclusive - input;
        } else {
            temp_storage[HALF_WARP_THREADS + lane_id] = inclusive;
            __syncwarp(member_mask);
            exclusive = temp_storage[HALF_WARP_THREADS + lane_id - 1];
            if (lane_id == 0) exclusive = initial_value;
            Converge();
        }
    }
    template <typename ScanOp>
    __device__ __forceinline__ void Update(T input, T& inclusive, T& exclusive, T& warp_aggregate, ScanOp) {
        temp_storage[HALF_WARP_THREADS + lane_id] = inclusive;
        __syncwarp(member_mask);
        if constexpr (detail::emu_int_sum_v<T, ScanOp>) {
            warp_aggregate = temp_storage[WARP_SMEM_ELEMENTS - 1];
            exclusive = inclusive - input;
        } else {
            exclusive = temp_storage[HALF_WARP_THREADS + lane_id - 1];
            warp_aggregate = temp_storage[WARP_SMEM_ELEMENTS - 1];
        }
        Converge();
    }
    template <typename ScanOp>
    __device__ __forceinline__ void UpdateInit(T, T& inclusive, T& exclusive, T& warp_aggregate, ScanOp scan_op,
                                               T initial_value) {
        // (CUB 2.x uses this one for integer sums too)
        temp_storage[HALF_WARP_THREADS + lane_id] = inclusive;
        __syncwarp(member_mask);
        warp_aggregate = temp_storage[WARP_SMEM_ELEMENTS - 1];
        __syncwarp(member_mask);
        inclusive = scan_op(initial_value, inclusive);
        temp_storage[HALF_WARP_THREADS + lane_id - 1] = inclusive;
        __syncwarp(member_mask);
        exclusive = temp_storage[HALF_WARP_THREADS + lane_id - 2];
        if (lane_id == 0) exclusive = initial_value;
        Converge();
    }
};

template <typename T, int LOGICAL_WARP_THREADS = 32, int LEGACY_PTX_ARCH = 0>
class WarpScan {
    static_assert(LOGICAL_WARP_THREADS >= 1 && LOGICAL_WARP_THREADS <= 32, "LOGICAL_WARP_THREADS must be in [1, 32]");
    enum { IS_ARCH_WARP = (LOGICAL_WARP_THREADS == 32) };

public:
    using InternalWarpScan = std::conditional_t<PowerOfTwo<LOGICAL_WARP_THREADS>::VALUE,
                                                WarpScanShfl<T, LOGICAL_WARP_THREADS>,
                                                WarpScanSmem<T, LOGICAL_WARP_THREADS>>;

private:
    using _TempStorage = typename InternalWarpScan::TempStorage;
    _TempStorage& temp_storage;
    unsigned int lane_id;

public:
    struct TempStorage : Uninitialized<_TempStorage> {};
    __device__ __forceinline__ WarpScan(TempStorage& temp_storage)
        : temp_storage(temp_storage.Alias()), lane_id(IS_ARCH_WARP ? LaneId() : LaneId() % LOGICAL_WARP_THREADS) {}

    __device__ __forceinline__ void InclusiveSum(T input, T& inclusive_output) {
        InclusiveScan(input, inclusive_output, cub::Sum());
    }
    __device__ __forceinline__ void InclusiveSum(T input, T& inclusive_output, T& warp_aggregate) {
        InclusiveScan(input, inclusive_output, cub::Sum(), warp_aggregate);
    }
    __device__ __forceinline__ void ExclusiveSum(T input, T& exclusive_output) {
        T initial_value{};
        ExclusiveScan(input, exclusive_output, initial_value, cub::Sum());
    }
    __device__ __forceinline__ void ExclusiveSum(T input, T& exclusive_output, T& warp_aggregate) {
        T initial_value{};
        ExclusiveScan(input, exclusive_output, initial_value, cub::Sum(), warp_aggregate);
    }
    template <typename ScanOp>
    __device__ __forceinline__ void InclusiveScan(T input, T& inclusive_output, ScanOp scan_op) {
        InternalWarpScan(temp_storage).InclusiveScan(input, inclusive_output, scan_op);
    }
    template <typename ScanOp>
    __device__ __forceinline__ void InclusiveScan(T input, T& inclusive_output, ScanOp scan_op, T& warp_aggregate) {
        InternalWarpScan(temp_storage).InclusiveScan(input, inclusive_output, scan_op, warp_aggregate);
    }
    template <typename ScanOp>
    __device__ __forceinline__ void ExclusiveScan(T input, T& exclusive_output, ScanOp scan_op) {
        InternalWarpScan internal(temp_storage);
        T inclusive_output;
        internal.InclusiveScan(input, inclusive_output, scan_op);
        internal.Update(input, inclusive_output, exclusive_output, scan_op);
    }
    template <typename ScanOp>
    __device__ __forceinline__ void ExclusiveScan(T input, T& exclusive_output, T initial_value, ScanOp scan_op) {
        InternalWarpScan internal(temp_storage);
        T inclusive_output;
        internal.InclusiveScan(input, inclusive_output, scan_op);
        internal.UpdateInit(input, inclusive_output, exclusive_output, scan_op, initial_value);
    }
    template <typename ScanOp>
    __device__ __forceinline__ void ExclusiveScan(T input, T& exclusive_output, ScanOp scan_op, T& warp_aggregate) {
        InternalWarpScan internal(temp_storage);
        T inclusive_output;
        internal.InclusiveScan(input, inclusive_output, scan_op);
        internal.Update(input, inclusive_output, exclusive_output, warp_aggregate, scan_op);
    }
    template <typename ScanOp>
    __device__ __forceinline__ void ExclusiveScan(T input, T& exclusive_output, T initial_value, ScanOp scan_op,
                                                  T& warp_aggregate) {
        InternalWarpScan internal(temp_storage);
        T inclusive_output;
        internal.InclusiveScan(input, inclusive_output, scan_op);
        internal.UpdateInit(input, inclusive_output, exclusive_output, warp_aggregate, scan_op, initial_value);
    }
    template <typename ScanOp>
    __device__ __forceinline__ void Scan(T input, T& inclusive_output, T& exclusive_output, ScanOp scan_op) {
        InternalWarpScan internal(temp_storage);
        internal.InclusiveScan(input, inclusive_output, scan_op);
        internal.Update(input, inclusive_output, exclusive_output, scan_op);
    }
    template <typename ScanOp>
    __device__ __forceinline__ void Scan(T input, T& inclusive_output, T& exclusive_output, T initial_value,
                                         ScanOp scan_op) {
        InternalWarpScan internal(temp_storage);
        internal.InclusiveScan(input, inclusive_output, scan_op);
        internal.UpdateInit(input, inclusive_output, exclusive_output, scan_op, initial_value);
    }
    __device__ __forceinline__ T Broadcast(T input, unsigned int src_lane) {
        return InternalWarpScan(temp_storage).Broadcast(input, src_lane);
    }
};

CUB_NAMESPACE_END
#endif

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
