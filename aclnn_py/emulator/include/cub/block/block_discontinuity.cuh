#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// cub/block/block_discontinuity.cuh for the aclnn_py CPU emulator: cub::BlockDiscontinuity (not
// NVIDIA's code; see cub/util_type.cuh). Items are blocked (thread t holds t*ITEMS_PER_THREAD + i).
//   head flag of item k = flag_op(item k-1, item k)   (item 0: 1, or compared with tile_predecessor)
//   tail flag of item k = flag_op(item k, item k+1)   (last item: 1, or compared with tile_successor)
// flag_op may also take the index of its second / first argument (flag_op(a, b, b_index)), as in CUB.
#ifndef ACLNN_EMU_CUB_BLOCK_DISCONTINUITY_CUH
#define ACLNN_EMU_CUB_BLOCK_DISCONTINUITY_CUH
#include "../util_type.cuh"

CUB_NAMESPACE_BEGIN

template <typename T, int BLOCK_DIM_X, int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockDiscontinuity {
    enum { BLOCK_THREADS = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z };
    struct _TempStorage {
        T first_items[BLOCK_THREADS];
        T last_items[BLOCK_THREADS];
    };
    __device__ __forceinline__ _TempStorage& PrivateStorage() {
        __shared__ _TempStorage private_storage;
        return private_storage;
    }
    _TempStorage& temp_storage;
    int linear_tid;

    template <typename FlagOp>
    static __device__ __forceinline__ bool ApplyOp(FlagOp& flag_op, const T& a, const T& b, int idx) {
        if constexpr (std::is_invocable<FlagOp&, const T&, const T&, int>::value) return flag_op(a, b, idx);
        else return flag_op(a, b);
    }
    template <int IPT, typename FlagT, typename FlagOp>
    __device__ __forceinline__ void Heads(FlagT (&head_flags)[IPT], T (&input)[IPT], FlagOp& flag_op) {
        for (int i = 1; i < IPT; ++i) head_flags[i] = ApplyOp(flag_op, input[i - 1], input[i], linear_tid * IPT + i);
    }
    template <int IPT, typename FlagT, typename FlagOp>
    __device__ __forceinline__ void Tails(FlagT (&tail_flags)[IPT], T (&input)[IPT], FlagOp& flag_op) {
        for (int i = 0; i < IPT - 1; ++i) tail_flags[i] = ApplyOp(flag_op, input[i], input[i + 1], linear_tid * IPT + i + 1);
    }

public:
    struct TempStorage : Uninitialized<_TempStorage> {};
    __device__ __forceinline__ BlockDiscontinuity()
        : temp_storage(PrivateStorage()), linear_tid(RowMajorTid(BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z)) {}
    __device__ __forceinline__ BlockDiscontinuity(TempStorage& temp_storage)
        : temp_storage(temp_storage.Alias()), linear_tid(RowMajorTid(BLOCK_DIM_X, BLOCK_DIM_Y, BLOCK_DIM_Z)) {}

    template <int IPT, typename FlagT, typename FlagOp>
    __device__ __forceinline__ void FlagHeads(FlagT (&head_flags)[IPT], T (&input)[IPT], FlagOp flag_op) {
        temp_storage.last_items[linear_tid] = input[IPT - 1];
        __syncthreads();
        head_flags[0] = (linear_tid == 0) ? 1 : ApplyOp(flag_op, temp_storage.last_items[linear_tid - 1], input[0], linear_tid * IPT);
        Heads(head_flags, input, flag_op);
    }
    template <int IPT, typename FlagT, typename FlagOp>
    __device__ __forceinline__ void FlagHeads(FlagT (&head_flags)[IPT], T (&input)[IPT], FlagOp flag_op, T tile_predecessor_item) {
        temp_storage.last_items[linear_tid] = input[IPT - 1];
        __syncthreads();
        T preceding = (linear_tid == 0) ? tile_predecessor_item : temp_storage.last_items[linear_tid - 1];
        head_flags[0] = ApplyOp(flag_op, preceding, input[0], linear_tid * IPT);
        Heads(head_flags, input, flag_op);
    }
    template <int IPT, typename FlagT, typename FlagOp>
    __device__ __forceinline__ void FlagTails(FlagT (&tail_flags)[IPT], T (&input)[IPT], FlagOp flag_op) {
        temp_storage.first_items[linear_tid] = input[0];
        __syncthreads();
        tail_flags[IPT - 1] = (linear_tid == BLOCK_THREADS - 1)
                                  ? 1 : ApplyOp(flag_op, input[IPT - 1], temp_storage.first_items[linear_tid + 1], (linear_tid + 1) * IPT);
        Tails(tail_flags, input, flag_op);
    }
    template <int IPT, typename FlagT, typename FlagOp>
    __device__ __forceinline__ void FlagTails(FlagT (&tail_flags)[IPT], T (&input)[IPT], FlagOp flag_op, T tile_successor_item) {
        temp_storage.first_items[linear_tid] = input[0];
        __syncthreads();
        T successor = (linear_tid == BLOCK_THREADS - 1) ? tile_successor_item : temp_storage.first_items[linear_tid + 1];
        tail_flags[IPT - 1] = ApplyOp(flag_op, input[IPT - 1], successor, (linear_tid + 1) * IPT);
        Tails(tail_flags, input, flag_op);
    }
    template <int IPT, typename FlagT, typename FlagOp>
    __device__ __forceinline__ void FlagHeadsAndTails(FlagT (&head_flags)[IPT], FlagT (&tail_flags)[IPT], T (&input)[IPT],
                                                      FlagOp flag_op) {
        FlagHeadsAndTailsImpl(head_flags, nullptr, tail_flags, nullptr, input, flag_op);
    }
    template <int IPT, typename FlagT, typename FlagOp>
    __device__ __forceinline__ void FlagHeadsAndTails(FlagT (&head_flags)[IPT], FlagT (&tail_flags)[IPT], T tile_successor_item,
                                                      T (&input)[IPT], FlagOp flag_op) {
        FlagHeadsAndTailsImpl(head_flags, nullptr, tail_flags, &tile_successor_item, input, flag_op);
    }
    template <int IPT, typename FlagT, typename FlagOp>
    __device__ __forceinline__ void FlagHeadsAndTails(FlagT (&head_flags)[IPT], T tile_predecessor_item, FlagT (&tail_flags)[IPT],
                                                      T (&input)[IPT], FlagOp flag_op) {
        FlagHeadsAndTailsImpl(head_flags, &tile_predecessor_item, tail_flags, nullptr, input, flag_op);
    }
    template <int IPT, typename FlagT, typename FlagOp>
    __device__ __forceinline__ void FlagHeadsAndTails(FlagT (&head_flags)[IPT], T tile_predecessor_item, FlagT (&tail_flags)[IPT],
                                                      T tile_successor_item, T (&input)[IPT], FlagOp flag_op) {
        FlagHeadsAndTailsImpl(head_flags, &tile_predecessor_item, tail_flags, &tile_successor_item, input, flag_op);
    }

private:
    template <int IPT, typename FlagT, typename FlagOp>
    __device__ __forceinline__ void FlagHeadsAndTailsImpl(FlagT (&head_flags)[IPT], const T* pred, FlagT (&tail_flags)[IPT],
                                                          const T* succ, T (&input)[IPT], FlagOp& flag_op) {
        temp_storage.first_items[linear_tid] = input[0];
        temp_storage.last_items[linear_tid] = input[IPT - 1];
        __syncthreads();
        if (linear_tid == 0) head_flags[0] = pred ? ApplyOp(flag_op, *pred, input[0], 0) : 1;
        else head_flags[0] = ApplyOp(flag_op, temp_storage.last_items[linear_tid - 1], input[0], linear_tid * IPT);
        if (linear_tid == BLOCK_THREADS - 1) tail_flags[IPT - 1] = succ ? ApplyOp(flag_op, input[IPT - 1], *succ, BLOCK_THREADS * IPT) : 1;
        else tail_flags[IPT - 1] = ApplyOp(flag_op, input[IPT - 1], temp_storage.first_items[linear_tid + 1], (linear_tid + 1) * IPT);
        Heads(head_flags, input, flag_op);
        Tails(tail_flags, input, flag_op);
    }
};

CUB_NAMESPACE_END
#endif

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
