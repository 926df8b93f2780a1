#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// cub/util_type.cuh for the aclnn_py CPU emulator: the configuration macros, types, traits, PTX-level
// helpers and functors that CUB's block/warp collectives (and kernels using them) rely on.
//
// This is not NVIDIA's CUB: it is a small re-implementation of CUB's block- and warp-level
// collectives on the emulator's CUDA surface (shuffles, __syncwarp, __syncthreads, shared memory
// through TempStorage). Every collective combines values in the order of CUB's default
// algorithms, as shipped with CUDA 12.0-12.8 (CUB 2.x; checked against CCCL v2.3.2), so float
// results are bit-identical to a GPU's. See cub/cub.cuh for the list of what is provided.
#ifndef ACLNN_EMU_CUB_UTIL_TYPE_CUH
#define ACLNN_EMU_CUB_UTIL_TYPE_CUH

#include <cuda_runtime.h>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

// ---- configuration / version / namespace macros (cub/config.cuh, version.cuh, util_namespace.cuh)
#define CUB_VERSION 200302
#define CUB_MAJOR_VERSION 2
#define CUB_MINOR_VERSION 3
#define CUB_SUBMINOR_VERSION 2
#define CUB_PATCH_NUMBER 0
#define CUB_NAMESPACE_BEGIN namespace cub {
#define CUB_NAMESPACE_END }
#define CUB_NS_PREFIX
#define CUB_NS_POSTFIX
#define CUB_NS_QUALIFIER ::cub
#ifndef CUB_PTX_ARCH
#define CUB_PTX_ARCH __CUDA_ARCH__
#endif
#define CUB_IS_DEVICE_CODE 1
#define CUB_IS_HOST_CODE 0
#define CUB_INCLUDE_DEVICE_CODE 1
#define CUB_INCLUDE_HOST_CODE 0
#define CUB_RUNTIME_FUNCTION __host__ __device__
#define CUB_RUNTIME_ENABLED
#define CUB_CPP_DIALECT 2017
#define CUB_STDERR
#define CUB_LOG_WARP_THREADS(unused) 5
#define CUB_WARP_THREADS(unused) 32
#define CUB_PTX_WARP_THREADS 32
#define CUB_PTX_LOG_WARP_THREADS 5
#define CUB_LOG_SMEM_BANKS(unused) 5
#define CUB_SMEM_BANKS(unused) 32
#define CUB_PTX_SMEM_BANKS 32
#define CUB_PTX_LOG_SMEM_BANKS 5
#define CUB_MAX_DEVICES 128
#define CUB_MAX(a, b) (((b) > (a)) ? (b) : (a))
#define CUB_MIN(a, b) (((b) < (a)) ? (b) : (a))
#define CUB_QUOTIENT_FLOOR(x, y) ((x) / (y))
#define CUB_QUOTIENT_CEILING(x, y) (((x) + (y) - 1) / (y))
#define CUB_ROUND_UP_NEAREST(x, y) ((((x) + (y) - 1) / (y)) * y)
#define CUB_ROUND_DOWN_NEAREST(x, y) (((x) / (y)) * y)
#define CUB_CAT_(a, b) a##b
#define CUB_CAT(a, b) CUB_CAT_(a, b)
#define CUB_STATIC_ASSERT(cond, msg) static_assert(cond, #msg)
#define CUB_DEFINE_DETECT_NESTED_TYPE(name, nested)                                                  \
    template <typename T, typename = void> struct name : std::false_type {};                        \
    template <typename T> struct name<T, std::void_t<typename T::nested>> : std::true_type {};
#ifndef CubDebug
#define CubDebug(e) (e)
#endif
#ifndef CubDebugExit
#define CubDebugExit(e) (e)
#endif
#ifndef _CubLog
#define _CubLog(format, ...) printf(format, __VA_ARGS__)
#endif
#define CUB_DEPRECATED

CUB_NAMESPACE_BEGIN

// ---- small metaprogramming helpers (util_type.cuh) ----------------------------------------------
struct NullType {
    using type = NullType;
    template <typename T> __host__ __device__ NullType& operator=(const T&) { return *this; }
    friend __host__ __device__ bool operator==(const NullType&, const NullType&) { return true; }
    friend __host__ __device__ bool operator!=(const NullType&, const NullType&) { return false; }
};
template <int A> struct Int2Type { enum { VALUE = A }; };
template <bool IF, typename ThenType, typename ElseType> struct If { using Type = std::conditional_t<IF, ThenType, ElseType>; };
template <typename A, typename B> struct Equals { enum { VALUE = std::is_same<A, B>::value ? 1 : 0, NEGATE = VALUE ? 0 : 1 }; };
// Log2<N>::VALUE = ceil(log2(N)) (CUB's definition: Log2<24>::VALUE == 5)
template <int N, int CURRENT_VAL = N, int COUNT = 0> struct Log2 { enum { VALUE = Log2<N, (CURRENT_VAL >> 1), COUNT + 1>::VALUE }; };
template <int N, int COUNT> struct Log2<N, 0, COUNT> { enum { VALUE = (1 << (COUNT - 1) < N) ? COUNT : COUNT - 1 }; };
template <int N> struct PowerOfTwo { enum { VALUE = ((N & (N - 1)) == 0) }; };
template <typename T> struct RemoveQualifiers { using Type = std::remove_cv_t<T>; };
template <typename T> struct IsPointer { enum { VALUE = std::is_pointer<T>::value }; };
template <typename T> struct IsVolatile { enum { VALUE = std::is_volatile<T>::value }; };
template <typename T> struct AlignBytes { enum { ALIGN_BYTES = alignof(T) }; using Type = T; };
template <typename T, int COUNT> struct ArrayWrapper { T array[COUNT]; };

namespace detail {
template <bool Test, class T1, class T2> using conditional_t = std::conditional_t<Test, T1, T2>;
template <typename... > struct emu_false : std::false_type {};
}  // namespace detail

// Storage for a T without constructing it (what every TempStorage is: __shared__ unions of them
// must be trivially constructible).
template <typename T>
struct Uninitialized {
    alignas(T) unsigned char storage[sizeof(T)];
    __host__ __device__ __forceinline__ T& Alias() { return reinterpret_cast<T&>(*this); }
};

// Key-value pair (util_type.cuh); key first, as CUB declares it.
template <typename _Key, typename _Value>
struct KeyValuePair {
    using Key = _Key;
    using Value = _Value;
    Key key;
    Value value;
    __host__ __device__ __forceinline__ KeyValuePair() {}
    __host__ __device__ __forceinline__ KeyValuePair(Key const& key, Value const& value) : key(key), value(value) {}
    __host__ __device__ __forceinline__ bool operator!=(const KeyValuePair& b) { return (value != b.value) || (key != b.key); }
};

// Double buffer of pointers (used by radix sorts).
template <typename T>
struct DoubleBuffer {
    T* d_buffers[2];
    int selector;
    __host__ __device__ __forceinline__ DoubleBuffer() : d_buffers{nullptr, nullptr}, selector(0) {}
    __host__ __device__ __forceinline__ DoubleBuffer(T* d_current, T* d_alternate) : d_buffers{d_current, d_alternate}, selector(0) {}
    __host__ __device__ __forceinline__ T* Current() { return d_buffers[selector]; }
    __host__ __device__ __forceinline__ T* Alternate() { return d_buffers[selector ^ 1]; }
};

// ---- numeric traits (Traits<T>: category, primitive, radix-sort bit twiddling) --------------------
enum Category { NOT_A_NUMBER, SIGNED_INTEGER, UNSIGNED_INTEGER, FLOATING_POINT };

namespace detail {
template <size_t N> struct emu_uint_of;
template <> struct emu_uint_of<1> { using type = unsigned char; };
template <> struct emu_uint_of<2> { using type = unsigned short; };
template <> struct emu_uint_of<4> { using type = unsigned int; };
template <> struct emu_uint_of<8> { using type = unsigned long long; };
template <class T> constexpr bool emu_is_float_v = std::is_floating_point<T>::value ||
    std::is_same<std::remove_cv_t<T>, __half>::value || std::is_same<std::remove_cv_t<T>, __nv_bfloat16>::value;
}  // namespace detail

template <typename T, typename = void>
struct Traits {
    static constexpr Category CATEGORY = NOT_A_NUMBER;
    enum { PRIMITIVE = false, NULL_TYPE = std::is_same<std::remove_cv_t<T>, NullType>::value };
};
template <typename T>
struct Traits<T, std::enable_if_t<std::is_integral<T>::value || detail::emu_is_float_v<T>>> {
    static constexpr Category CATEGORY = detail::emu_is_float_v<T> ? FLOATING_POINT
                                         : std::is_same<std::remove_cv_t<T>, bool>::value || std::is_unsigned<T>::value
                                             ? UNSIGNED_INTEGER : SIGNED_INTEGER;
    enum { PRIMITIVE = true, NULL_TYPE = false };
    using UnsignedBits = typename detail::emu_uint_of<sizeof(T)>::type;
    static constexpr UnsignedBits HIGH_BIT = UnsignedBits(UnsignedBits(1) << (sizeof(T) * 8 - 1));
    static constexpr UnsignedBits LOWEST_KEY = CATEGORY == UNSIGNED_INTEGER ? UnsignedBits(0)
                                               : CATEGORY == SIGNED_INTEGER ? HIGH_BIT : UnsignedBits(~HIGH_BIT);
    static constexpr UnsignedBits MAX_KEY = CATEGORY == UNSIGNED_INTEGER ? UnsignedBits(~UnsignedBits(0))
                                            : CATEGORY == SIGNED_INTEGER ? UnsignedBits(~HIGH_BIT) : UnsignedBits(~LOWEST_KEY);
    // radix-sort order: flip the sign bit of signed integers, all bits of negative floats
    static __host__ __device__ __forceinline__ UnsignedBits TwiddleIn(UnsignedBits key) {
        if (CATEGORY == UNSIGNED_INTEGER) return key;
        if (CATEGORY == SIGNED_INTEGER) return key ^ HIGH_BIT;
        UnsignedBits mask = (key & HIGH_BIT) ? UnsignedBits(-1) : HIGH_BIT;
        return key ^ mask;
    }
    static __host__ __device__ __forceinline__ UnsignedBits TwiddleOut(UnsignedBits key) {
        if (CATEGORY == UNSIGNED_INTEGER) return key;
        if (CATEGORY == SIGNED_INTEGER) return key ^ HIGH_BIT;
        UnsignedBits mask = (key & HIGH_BIT) ? HIGH_BIT : UnsignedBits(-1);
        return key ^ mask;
    }
};
template <typename T> struct NumericTraits : Traits<T> {};

// ---- functors (thread/thread_operators.cuh) -------------------------------------------------------
struct Sum {
    template <typename T, typename U>
    __host__ __device__ __forceinline__ auto operator()(T&& t, U&& u) const -> decltype(std::forward<T>(t) + std::forward<U>(u)) {
        return std::forward<T>(t) + std::forward<U>(u);
    }
};
struct Difference {
    template <typename T, typename U>
    __host__ __device__ __forceinline__ auto operator()(T&& t, U&& u) const -> decltype(std::forward<T>(t) - std::forward<U>(u)) {
        return std::forward<T>(t) - std::forward<U>(u);
    }
};
struct Division {
    template <typename T, typename U>
    __host__ __device__ __forceinline__ auto operator()(T&& t, U&& u) const -> decltype(std::forward<T>(t) / std::forward<U>(u)) {
        return std::forward<T>(t) / std::forward<U>(u);
    }
};
struct Equality {
    template <typename T, typename U>
    __host__ __device__ __forceinline__ bool operator()(T&& t, U&& u) const { return std::forward<T>(t) == std::forward<U>(u); }
};
struct Inequality {
    template <typename T, typename U>
    __host__ __device__ __forceinline__ bool operator()(T&& t, U&& u) const { return std::forward<T>(t) != std::forward<U>(u); }
};
template <typename EqualityOp>
struct InequalityWrapper {
    EqualityOp op;
    __host__ __device__ __forceinline__ InequalityWrapper(EqualityOp op) : op(op) {}
    template <typename T, typename U>
    __host__ __device__ __forceinline__ bool operator()(T&& t, U&& u) { return !op(std::forward<T>(t), std::forward<U>(u)); }
};
// CUB_MAX / CUB_MIN order: the second operand wins only when strictly greater / smaller
struct Max {
    template <typename T, typename U>
    __host__ __device__ __forceinline__ std::common_type_t<T, U> operator()(T&& t, U&& u) const { return CUB_MAX(t, u); }
};
struct Min {
    template <typename T, typename U>
    __host__ __device__ __forceinline__ std::common_type_t<T, U> operator()(T&& t, U&& u) const { return CUB_MIN(t, u); }
};
struct ArgMax {
    template <typename T, typename OffsetT>
    __host__ __device__ __forceinline__ KeyValuePair<OffsetT, T> operator()(const KeyValuePair<OffsetT, T>& a,
                                                                             const KeyValuePair<OffsetT, T>& b) const {
        if ((b.value > a.value) || ((a.value == b.value) && (b.key < a.key))) return b;
        return a;
    }
};
struct ArgMin {
    template <typename T, typename OffsetT>
    __host__ __device__ __forceinline__ KeyValuePair<OffsetT, T> operator()(const KeyValuePair<OffsetT, T>& a,
                                                                             const KeyValuePair<OffsetT, T>& b) const {
        if ((b.value < a.value) || ((a.value == b.value) && (b.key < a.key))) return b;
        return a;
    }
};
template <typename B>
struct CastOp {
    template <typename A>
    __host__ __device__ __forceinline__ B operator()(A&& a) const { return (B)a; }
};
template <typename ScanOp>
class SwizzleScanOp {
    ScanOp scan_op;
public:
    __host__ __device__ __forceinline__ SwizzleScanOp(ScanOp scan_op) : scan_op(scan_op) {}
    template <typename T>
    __host__ __device__ __forceinline__ T operator()(const T& a, const T& b) { T _a(a), _b(b); return scan_op(_b, _a); }
};
template <typename ReductionOpT>
struct ReduceBySegmentOp {
    ReductionOpT op;
    __host__ __device__ __forceinline__ ReduceBySegmentOp() {}
    __host__ __device__ __forceinline__ ReduceBySegmentOp(ReductionOpT op) : op(op) {}
    template <typename KeyValuePairT>
    __host__ __device__ __forceinline__ KeyValuePairT operator()(const KeyValuePairT& first, const KeyValuePairT& second) {
        KeyValuePairT retval;
        retval.key = first.key + second.key;
        retval.value = (second.key) ? second.value : op(first.value, second.value);
        return retval;
    }
};
template <typename ReductionOpT>
struct ReduceByKeyOp {
    ReductionOpT op;
    __host__ __device__ __forceinline__ ReduceByKeyOp() {}
    __host__ __device__ __forceinline__ ReduceByKeyOp(ReductionOpT op) : op(op) {}
    template <typename KeyValuePairT>
    __host__ __device__ __forceinline__ KeyValuePairT operator()(const KeyValuePairT& first, const KeyValuePairT& second) {
        KeyValuePairT retval = second;
        if (first.key == second.key) retval.value = op(first.value, retval.value);
        return retval;
    }
};
template <typename BinaryOpT>
struct BinaryFlip {
    BinaryOpT binary_op;
    __host__ __device__ explicit BinaryFlip(BinaryOpT binary_op) : binary_op(binary_op) {}
    template <typename T, typename U>
    __device__ auto operator()(T&& t, U&& u) -> decltype(binary_op(std::forward<U>(u), std::forward<T>(t))) {
        return binary_op(std::forward<U>(u), std::forward<T>(t));
    }
};
template <typename BinaryOpT>
__host__ __device__ BinaryFlip<BinaryOpT> MakeBinaryFlip(BinaryOpT binary_op) { return BinaryFlip<BinaryOpT>(binary_op); }

// ---- PTX-level helpers (util_ptx.cuh) -------------------------------------------------------------
__device__ __forceinline__ int RowMajorTid(int block_dim_x, int block_dim_y, int block_dim_z) {
    return ((block_dim_z == 1) ? 0 : (threadIdx.z * block_dim_x * block_dim_y)) +
           ((block_dim_y == 1) ? 0 : (threadIdx.y * block_dim_x)) + threadIdx.x;
}
// hardware lane / warp of the calling thread (%laneid, %warpid as a linear-id quotient)
__device__ __forceinline__ unsigned int LaneId() {
    return (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u;
}
__device__ __forceinline__ unsigned int WarpId() {
    return (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) >> 5;
}
__device__ __forceinline__ unsigned int LaneMaskLt() { return (1u << LaneId()) - 1u; }
__device__ __forceinline__ unsigned int LaneMaskLe() { return ((1u << LaneId()) << 1) - 1u; }
__device__ __forceinline__ unsigned int LaneMaskGt() { return ~LaneMaskLe(); }
__device__ __forceinline__ unsigned int LaneMaskGe() { return ~LaneMaskLt(); }
// lanes of logical warp `warp_id` (CUB: shifted only for power-of-two sub-warps)
template <int LOGICAL_WARP_THREADS, int LEGACY_PTX_ARCH = 0>
__host__ __device__ __forceinline__ unsigned int WarpMask(unsigned int warp_id) {
    unsigned int member_mask = 0xFFFFFFFFu >> (32 - LOGICAL_WARP_THREADS);
    if (PowerOfTwo<LOGICAL_WARP_THREADS>::VALUE && LOGICAL_WARP_THREADS != 32) member_mask <<= warp_id * LOGICAL_WARP_THREADS;
    return member_mask;
}
__device__ __forceinline__ void CTA_SYNC() { __syncthreads(); }
__device__ __forceinline__ int CTA_SYNC_AND(int p) { return __syncthreads_and(p); }
__device__ __forceinline__ int CTA_SYNC_OR(int p) { return __syncthreads_or(p); }
__device__ __forceinline__ void WARP_SYNC(unsigned int member_mask) { __syncwarp(member_mask); }
__device__ __forceinline__ int WARP_ANY(int predicate, unsigned int member_mask) { return __any_sync(member_mask, predicate); }
__device__ __forceinline__ int WARP_ALL(int predicate, unsigned int member_mask) { return __all_sync(member_mask, predicate); }
__device__ __forceinline__ int WARP_BALLOT(int predicate, unsigned int member_mask) { return __ballot_sync(member_mask, predicate); }
template <typename UnsignedBits>
__device__ __forceinline__ unsigned int BFE(UnsignedBits source, unsigned int bit_start, unsigned int num_bits) {
    return static_cast<unsigned int>((source >> bit_start) & ((num_bits >= 32 ? 0xFFFFFFFFull : ((1ull << num_bits) - 1))));
}
__device__ __forceinline__ void BFI(unsigned int& ret, unsigned int x, unsigned int y, unsigned int bit_start, unsigned int num_bits) {
    const unsigned int mask = (num_bits >= 32 ? 0xFFFFFFFFu : ((1u << num_bits) - 1u)) << bit_start;
    ret = (x & ~mask) | ((y << bit_start) & mask);
}
__device__ __forceinline__ unsigned int SHR_ADD(unsigned int x, unsigned int shift, unsigned int addend) { return (x >> shift) + addend; }
__device__ __forceinline__ unsigned int SHL_ADD(unsigned int x, unsigned int shift, unsigned int addend) { return (x << shift) + addend; }
__device__ __forceinline__ int PRMT(unsigned int a, unsigned int b, unsigned int index) {
    const unsigned long long ab = (static_cast<unsigned long long>(b) << 32) | a;
    unsigned int r = 0;
    for (int i = 0; i < 4; ++i) {
        const unsigned sel = (index >> (4 * i)) & 0xF;
        unsigned byte = (ab >> (8 * (sel & 7))) & 0xFF;
        if (sel & 8) byte = (byte & 0x80) ? 0xFF : 0;
        r |= byte << (8 * i);
    }
    return static_cast<int>(r);
}

namespace detail {
// Shuffles of any trivially copyable T, one 32-bit word at a time (as CUB's ShuffleUp/Down/Index).
enum EmuShfl { EMU_UP, EMU_DOWN, EMU_IDX };
template <int WIDTH, EmuShfl KIND, typename T>
__device__ __forceinline__ T emu_shfl(T input, int arg, unsigned int member_mask) {
    static_assert(std::is_trivially_copyable<T>::value, "CUB shuffles need a trivially copyable type");
    constexpr int WORDS = (sizeof(T) + 3) / 4;
    unsigned int in[WORDS] = {}, out[WORDS];
    memcpy(in, &input, sizeof(T));
    for (int i = 0; i < WORDS; ++i) {
        if (KIND == EMU_UP) out[i] = __shfl_up_sync(member_mask, in[i], arg, WIDTH);
        else if (KIND == EMU_DOWN) out[i] = __shfl_down_sync(member_mask, in[i], arg, WIDTH);
        else out[i] = __shfl_sync(member_mask, in[i], arg, WIDTH);
    }
    T r;
    memcpy(&r, out, sizeof(T));
    return r;
}
}  // namespace detail

// CUB's public shuffles: the source lane is clamped to [first_thread, ...] / [..., last_thread] of
// the logical warp (segment-relative), else the caller's own value.
template <int LOGICAL_WARP_THREADS, typename T>
__device__ __forceinline__ T ShuffleUp(T input, int src_offset, int first_thread, unsigned int member_mask) {
    T r = detail::emu_shfl<LOGICAL_WARP_THREADS, detail::EMU_UP>(input, src_offset, member_mask);
    const int lane = static_cast<int>(LaneId() % LOGICAL_WARP_THREADS);
    return (lane - src_offset >= first_thread) ? r : input;
}
template <int LOGICAL_WARP_THREADS, typename T>
__device__ __forceinline__ T ShuffleDown(T input, int src_offset, int last_thread, unsigned int member_mask) {
    T r = detail::emu_shfl<LOGICAL_WARP_THREADS, detail::EMU_DOWN>(input, src_offset, member_mask);
    const int lane = static_cast<int>(LaneId() % LOGICAL_WARP_THREADS);
    return (lane + src_offset <= last_thread) ? r : input;
}
template <int LOGICAL_WARP_THREADS, typename T>
__device__ __forceinline__ T ShuffleIndex(T input, int src_lane, unsigned int member_mask) {
    return detail::emu_shfl<LOGICAL_WARP_THREADS, detail::EMU_IDX>(input, src_lane, member_mask);
}

// ---- thread-level reduce / scan (thread/thread_reduce.cuh, thread_scan.cuh; CUB 2.x: sequential) ---
namespace internal {
// ((prefix op in[0]) op in[1]) op ...  (a left fold, as CUB 2.x's ThreadReduce)
template <int LENGTH, typename T, typename ReductionOp, typename PrefixT>
__device__ __forceinline__ PrefixT ThreadReduce(T* input, ReductionOp reduction_op, PrefixT prefix) {
    PrefixT retval = prefix;
#pragma GCC unroll 16
    for (int i = 0; i < LENGTH; ++i) retval = reduction_op(retval, input[i]);
    return retval;
}
template <int LENGTH, typename T, typename ReductionOp>
__device__ __forceinline__ T ThreadReduce(T* input, ReductionOp reduction_op) {
    T prefix = input[0];
    return ThreadReduce<LENGTH - 1>(input + 1, reduction_op, prefix);
}
template <int LENGTH, typename T, typename ReductionOp, typename PrefixT>
__device__ __forceinline__ PrefixT ThreadReduce(T (&input)[LENGTH], ReductionOp reduction_op, PrefixT prefix) {
    return ThreadReduce<LENGTH>(static_cast<T*>(input), reduction_op, prefix);
}
template <int LENGTH, typename T, typename ReductionOp>
__device__ __forceinline__ T ThreadReduce(T (&input)[LENGTH], ReductionOp reduction_op) {
    return ThreadReduce<LENGTH>(static_cast<T*>(input), reduction_op);
}
// exclusive scan of a thread's items seeded with prefix (applied to item 0 only if apply_prefix)
template <int LENGTH, typename T, typename ScanOp>
__device__ __forceinline__ T ThreadScanExclusive(T* input, T* output, ScanOp scan_op, T prefix, bool apply_prefix = true) {
    T inclusive = input[0];
    if (apply_prefix) inclusive = scan_op(prefix, inclusive);
    output[0] = prefix;
    T exclusive = inclusive;
#pragma GCC unroll 16
    for (int i = 1; i < LENGTH; ++i) {
        inclusive = scan_op(exclusive, input[i]);
        output[i] = exclusive;
        exclusive = inclusive;
    }
    return inclusive;
}
template <int LENGTH, typename T, typename ScanOp>
__device__ __forceinline__ T ThreadScanExclusive(T (&input)[LENGTH], T (&output)[LENGTH], ScanOp scan_op, T prefix,
                                                 bool apply_prefix = true) {
    return ThreadScanExclusive<LENGTH>(static_cast<T*>(input), static_cast<T*>(output), scan_op, prefix, apply_prefix);
}
template <int LENGTH, typename T, typename ScanOp>
__device__ __forceinline__ T ThreadScanInclusive(T* input, T* output, ScanOp scan_op) {
    T inclusive = input[0];
    output[0] = inclusive;
#pragma GCC unroll 16
    for (int i = 1; i < LENGTH; ++i) {
        inclusive = scan_op(inclusive, input[i]);
        output[i] = inclusive;
    }
    return inclusive;
}
template <int LENGTH, typename T, typename ScanOp>
__device__ __forceinline__ T ThreadScanInclusive(T (&input)[LENGTH], T (&output)[LENGTH], ScanOp scan_op) {
    return ThreadScanInclusive<LENGTH>(static_cast<T*>(input), static_cast<T*>(output), scan_op);
}
template <int LENGTH, typename T, typename ScanOp>
__device__ __forceinline__ T ThreadScanInclusive(T* input, T* output, ScanOp scan_op, T prefix, bool apply_prefix = true) {
    T inclusive = input[0];
    if (apply_prefix) inclusive = scan_op(prefix, inclusive);
    output[0] = inclusive;
#pragma GCC unroll 16
    for (int i = 1; i < LENGTH; ++i) {
        inclusive = scan_op(inclusive, input[i]);
        output[i] = inclusive;
    }
    return inclusive;
}
template <int LENGTH, typename T, typename ScanOp>
__device__ __forceinline__ T ThreadScanInclusive(T (&input)[LENGTH], T (&output)[LENGTH], ScanOp scan_op, T prefix,
                                                 bool apply_prefix = true) {
    return ThreadScanInclusive<LENGTH>(static_cast<T*>(input), static_cast<T*>(output), scan_op, prefix, apply_prefix);
}
}  // namespace internal
// CUB 2.x also exposes the thread-level helpers at namespace scope
using internal::ThreadReduce;
using internal::ThreadScanExclusive;
using internal::ThreadScanInclusive;

CUB_NAMESPACE_END

#endif

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
