#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// cooperative_groups.h for the aclnn_py CPU emulator: CUDA 12's cooperative groups on top of the
// emulator's barriers and warp collectives (same checks: masks, exited lanes, deadlocks).
//
// Supported: this_thread_block(), this_grid() (grid.sync() needs a cooperative launch:
// RawKernel(..., enable_cooperative_groups=True)), thread_block_tile<N> via tiled_partition<N>
// (N = 1..32 with shfl/shfl_up/shfl_down/shfl_xor/ballot/any/all/match_any/match_all, and
// N = 64..1024 with sync, ranks, shfl, any, all, reduce and scans, with or without
// block_tile_memory), tiled_partition(parent, n), coalesced_threads(),
// labeled_partition(), binary_partition(), cg::reduce / inclusive_scan / exclusive_scan with
// plus/less/greater/bit_and/bit_or/bit_xor or any functor, cg::sync(g), memcpy_async + wait,
// invoke_one / invoke_one_broadcast.
// Not supported (compile errors): multi-grid groups, clusters, cuda::barrier.
#ifndef ACLNN_PY_EMU_COOPERATIVE_GROUPS_H
#define ACLNN_PY_EMU_COOPERATIVE_GROUPS_H
#include "cuda_emu.h"

#define EMU_SITE const char* __emu_file = __builtin_FILE(), int __emu_line = __builtin_LINE()
#define EMU_AT __emu_file, __emu_line

namespace __emu {
namespace cgd {
static inline unsigned linear_tid() {
    const uint3 t = dims.tid, b = dims.bdim;
    return t.x + b.x * (t.y + b.y * t.z);
}
static inline unsigned block_threads() { return dims.bdim.x * dims.bdim.y * dims.bdim.z; }

// Shuffle of any trivially copyable type (split into 8-byte words, like CUDA's cg shuffles).
template <class T>
static inline T shfl_any(unsigned char op, unsigned mask, const T& v, int arg, int width, const char* file, int line) {
    static_assert(std::is_trivially_copyable_v<T>, "cooperative groups shuffle needs a trivially copyable type");
    constexpr size_t W = (sizeof(T) + 7) / 8;
    uint64_t in[W] = {};
    memcpy(in, &v, sizeof(T));
    uint64_t out[W];
    for (size_t i = 0; i < W; ++i)
        out[i] = warp_collective(op, sizeof(T) < 8 ? static_cast<unsigned char>(sizeof(T)) : 8, mask, in[i], arg,
                                 width, file, line);
    alignas(T) unsigned char buf[sizeof(T)];
    memcpy(buf, out, sizeof(T));
    return *std::launder(reinterpret_cast<T*>(buf));
}
static inline unsigned lanemask_lt() { return (1u << (linear_tid() & 31)) - 1u; }
// i-th set bit of m (0-based), 32 if none
static inline int nth_lane(unsigned m, unsigned i) {
    for (unsigned k = 0; m; m &= m - 1, ++k)
        if (k == i) return __builtin_ctz(m);
    return 32;
}
// Multi-warp tiles (N > 32) exchange values through per-thread slots of the block, as CUDA's
// exchange through block_tile_memory: one slot of kTileSlot bytes per thread, per OS thread (one
// block per OS thread), allocated once. Different tiles use disjoint slots; every exchange ends
// with a tile barrier, so the next one may overwrite them.
static constexpr size_t kTileSlot = 128;
static inline unsigned char* tile_slots() {
    static thread_local unsigned char* slots = nullptr;
    if (!slots) slots = static_cast<unsigned char*>(aligned_alloc(64, kMaxFibers * kTileSlot));
    return slots;
}
template <class T>
static inline void slot_put(unsigned i, const T& v) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= kTileSlot,
                  "collectives of tiles larger than 32 need a trivially copyable type of at most 128 bytes");
    memcpy(tile_slots() + static_cast<size_t>(i) * kTileSlot, &v, sizeof(T));
}
template <class T>
static inline T slot_get(unsigned i) {
    alignas(T) unsigned char buf[sizeof(T)];
    memcpy(buf, tile_slots() + static_cast<size_t>(i) * kTileSlot, sizeof(T));
    return *std::launder(reinterpret_cast<T*>(buf));
}
// op over a tile of N > 32 threads, CUDA's scheme: a butterfly in each warp, then a butterfly over
// the warps' results; every member gets the same value.
template <unsigned N, class T, class Op>
static inline T big_tile_reduce(T val, Op op, const char* file, int line) {
    for (unsigned off = 16; off > 0; off /= 2) val = op(val, shfl_any<T>(OP_SHFL_XOR, 0xffffffffu, val, off, 32, file, line));
    const unsigned lin = linear_tid(), base = lin & ~(N - 1u);
    if ((lin & 31u) == 0) slot_put(lin, val);
    tile_sync_impl(N, file, line);
    const unsigned nw = (std::min(N, block_threads() - base) + 31u) / 32u;
    T acc = slot_get<T>(base);
    if (nw == N / 32u) {
        T part[N / 32u];
        for (unsigned w = 0; w < nw; ++w) part[w] = slot_get<T>(base + 32u * w);
        for (unsigned off = nw / 2; off > 0; off /= 2)
            for (unsigned i = 0; i < off; ++i) part[i] = op(part[i], part[i + off]);
        acc = part[0];
    } else {  // a partial last tile
        for (unsigned w = 1; w < nw; ++w) acc = op(acc, slot_get<T>(base + 32u * w));
    }
    tile_sync_impl(N, file, line);
    return acc;
}
// value of tile rank `src` for every member of a tile of N > 32 threads
template <unsigned N, class T>
static inline T big_tile_shfl(const T& v, unsigned src, const char* file, int line) {
    const unsigned lin = linear_tid();
    slot_put(lin, v);
    tile_sync_impl(N, file, line);
    const T r = slot_get<T>((lin & ~(N - 1u)) + src % N);
    tile_sync_impl(N, file, line);
    return r;
}
// inclusive scan over a tile of N > 32 threads (rank order)
template <unsigned N, class T, class Op>
static inline T big_tile_scan(const T& v, Op op, const char* file, int line) {
    const unsigned lin = linear_tid(), base = lin & ~(N - 1u);
    slot_put(lin, v);
    tile_sync_impl(N, file, line);
    T acc = slot_get<T>(base);
    for (unsigned i = base + 1; i <= lin; ++i) acc = op(acc, slot_get<T>(i));
    tile_sync_impl(N, file, line);
    return acc;
}
struct logical_or { int operator()(int a, int b) const { return a || b; } };
struct logical_and { int operator()(int a, int b) const { return a && b; } };

static inline unsigned pack_lanes(unsigned bits, unsigned mask) {  // pext
    unsigned r = 0, k = 0;
    for (unsigned m = mask; m; m &= m - 1, ++k)
        if (bits & (1u << __builtin_ctz(m))) r |= 1u << k;
    return r;
}
}  // namespace cgd
}  // namespace __emu

namespace cooperative_groups {
namespace __v1 {}
using namespace __v1;

class thread_group {  // type-erased group (tiled_partition(parent, n) / coalesced_threads())
   public:
    unsigned _mask;   // lanes of the caller's warp (size <= 32 groups)
    unsigned _size;   // number of threads
    unsigned _rank;   // caller's rank
    unsigned _tile;   // tile size for tiles > 32 (0 otherwise)
    thread_group(unsigned mask, unsigned size, unsigned rank, unsigned tile = 0)
        : _mask(mask), _size(size), _rank(rank), _tile(tile) {}
    unsigned long long size() const { return _size; }
    unsigned long long num_threads() const { return _size; }
    unsigned long long thread_rank() const { return _rank; }
    void sync(EMU_SITE) const {
        if (_tile == ~0u) ::__emu::bar_sync(0, 0, EMU_AT);
        else if (_tile) ::__emu::tile_sync_impl(_tile, EMU_AT);
        else __syncwarp(_mask, EMU_AT);
    }
};

class thread_block {
   public:
    thread_block() = default;
    static void sync(EMU_SITE) { ::__emu::bar_sync(0, 0, EMU_AT); }
    static void barrier_wait(EMU_SITE) { ::__emu::bar_sync(0, 0, EMU_AT); }
    static unsigned thread_rank() { return ::__emu::cgd::linear_tid(); }
    static unsigned size() { return ::__emu::cgd::block_threads(); }
    static unsigned num_threads() { return ::__emu::cgd::block_threads(); }
    static dim3 group_index() { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
    static dim3 thread_index() { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
    static dim3 group_dim() { return blockDim; }
    static dim3 dim_threads() { return blockDim; }
    operator thread_group() const { return thread_group(0xffffffffu, size(), thread_rank(), ~0u); }
};
static inline thread_block this_thread_block() { return thread_block(); }
// CUDA 11/12's scratch for tiles larger than 32 (needed below sm_80): the emulator keeps its own
template <unsigned int MaxBlockSize = 1024>
struct block_tile_memory { alignas(16) unsigned char _emu_unused[16]; };
template <unsigned int MaxBlockSize>
static inline thread_block this_thread_block(block_tile_memory<MaxBlockSize>&) { return thread_block(); }
namespace experimental {
template <unsigned int TileCommunicationSize = 8, unsigned int MaxBlockSize = 1024>
struct block_tile_memory { alignas(16) unsigned char _emu_unused[16]; };
template <unsigned int C, unsigned int M>
static inline thread_block this_thread_block(block_tile_memory<C, M>&) { return thread_block(); }
}  // namespace experimental

class grid_group {
   public:
    static void sync(EMU_SITE) { ::__emu::grid_sync_impl(EMU_AT); }
    static bool is_valid() { return ::__emu::tls.L && ::__emu::tls.L->coop; }
    static unsigned long long size() {
        return static_cast<unsigned long long>(::__emu::cgd::block_threads()) * gridDim.x * gridDim.y * gridDim.z;
    }
    static unsigned long long num_threads() { return size(); }
    static unsigned long long block_rank() {
        return blockIdx.x + static_cast<unsigned long long>(gridDim.x) * (blockIdx.y + static_cast<unsigned long long>(gridDim.y) * blockIdx.z);
    }
    static unsigned long long thread_rank() {
        return block_rank() * ::__emu::cgd::block_threads() + ::__emu::cgd::linear_tid();
    }
    static unsigned long long num_blocks() { return static_cast<unsigned long long>(gridDim.x) * gridDim.y * gridDim.z; }
    static dim3 group_dim() { return gridDim; }
    static dim3 dim_blocks() { return gridDim; }
    static dim3 block_index() { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
    static dim3 group_index() { return block_index(); }
    static dim3 dim_threads() { return blockDim; }
};
static inline grid_group this_grid() { return grid_group(); }

template <unsigned N, class ParentT = void>
class thread_block_tile;

namespace __emu_detail {
template <unsigned N>
class tile_base {
    static_assert(N >= 1 && N <= 1024 && (N & (N - 1)) == 0, "thread_block_tile size must be a power of two <= 1024");

   public:
    static constexpr unsigned numThreads = N;
    static unsigned mask() {
        if constexpr (N >= 32) return 0xffffffffu;
        else return ((1u << N) - 1u) << ((::__emu::cgd::linear_tid() & 31u) & ~(N - 1u));
    }
    static unsigned thread_rank() { return ::__emu::cgd::linear_tid() & (N - 1u); }
    static constexpr unsigned size() { return N; }
    static constexpr unsigned num_threads() { return N; }
    static unsigned meta_group_rank() { return ::__emu::cgd::linear_tid() / N; }
    static unsigned meta_group_size() { return (::__emu::cgd::block_threads() + N - 1) / N; }
    static void sync(EMU_SITE) {
        if constexpr (N > 32) ::__emu::tile_sync_impl(N, EMU_AT);
        else __syncwarp(mask(), EMU_AT);
    }
    template <class T>
    static T shfl(T v, int src, EMU_SITE) {
        if constexpr (N > 32) return ::__emu::cgd::big_tile_shfl<N>(v, static_cast<unsigned>(src), EMU_AT);
        else return ::__emu::cgd::shfl_any<T>(::__emu::OP_SHFL_IDX, mask(), v, src, N, EMU_AT);
    }
    template <class T>
    static T shfl_up(T v, unsigned d, EMU_SITE) {
        static_assert(N <= 32, "shuffles need a tile of at most 32 threads");
        return ::__emu::cgd::shfl_any<T>(::__emu::OP_SHFL_UP, mask(), v, static_cast<int>(d), N, EMU_AT);
    }
    template <class T>
    static T shfl_down(T v, unsigned d, EMU_SITE) {
        static_assert(N <= 32, "shuffles need a tile of at most 32 threads");
        return ::__emu::cgd::shfl_any<T>(::__emu::OP_SHFL_DOWN, mask(), v, static_cast<int>(d), N, EMU_AT);
    }
    template <class T>
    static T shfl_xor(T v, unsigned m, EMU_SITE) {
        static_assert(N <= 32, "shuffles need a tile of at most 32 threads");
        return ::__emu::cgd::shfl_any<T>(::__emu::OP_SHFL_XOR, mask(), v, static_cast<int>(m), N, EMU_AT);
    }
    static unsigned ballot(int pred, EMU_SITE) {
        static_assert(N <= 32, "ballot needs a tile of at most 32 threads");
        const unsigned b = __ballot_sync(mask(), pred, EMU_AT);
        return N == 32 ? b : (b >> ((::__emu::cgd::linear_tid() & 31u) & ~(N - 1u))) & ((1u << N) - 1u);
    }
    static bool any(int pred, EMU_SITE) {
        if constexpr (N > 32) return ::__emu::cgd::big_tile_reduce<N>(pred != 0, ::__emu::cgd::logical_or(), EMU_AT);
        else return __any_sync(mask(), pred, EMU_AT) != 0;
    }
    static bool all(int pred, EMU_SITE) {
        if constexpr (N > 32) return ::__emu::cgd::big_tile_reduce<N>(pred != 0, ::__emu::cgd::logical_and(), EMU_AT);
        else return __all_sync(mask(), pred, EMU_AT) != 0;
    }
    template <class T>
    static unsigned match_any(T v, EMU_SITE) {
        static_assert(N <= 32, "match_any needs a tile of at most 32 threads");
        const unsigned b = static_cast<unsigned>(::__emu::warp_collective(::__emu::OP_MATCH_ANY, sizeof(T), mask(),
                                                                           ::__emu::to_bits(v), 0, 32, EMU_AT));
        return N == 32 ? b : (b >> ((::__emu::cgd::linear_tid() & 31u) & ~(N - 1u))) & ((1u << N) - 1u);
    }
    template <class T>
    static unsigned match_all(T v, int& pred, EMU_SITE) {
        static_assert(N <= 32, "match_all needs a tile of at most 32 threads");
        const uint64_t r = ::__emu::warp_collective(::__emu::OP_MATCH_ALL, sizeof(T), mask(), ::__emu::to_bits(v), 0,
                                                    32, EMU_AT);
        pred = static_cast<int>(r >> 32);
        const unsigned b = static_cast<unsigned>(r);
        return N == 32 ? b : (b >> ((::__emu::cgd::linear_tid() & 31u) & ~(N - 1u))) & ((1u << N) - 1u);
    }
    operator thread_group() const { return thread_group(N <= 32 ? mask() : 0xffffffffu, N, thread_rank(), N > 32 ? N : 0); }
};
}  // namespace __emu_detail

template <unsigned N, class ParentT>
class thread_block_tile : public __emu_detail::tile_base<N> {
   public:
    thread_block_tile() = default;
    operator thread_block_tile<N, void>() const { return thread_block_tile<N, void>(); }
};
template <unsigned N>
class thread_block_tile<N, void> : public __emu_detail::tile_base<N> {
   public:
    thread_block_tile() = default;
};

template <unsigned N, class ParentT>
static inline thread_block_tile<N, ParentT> tiled_partition(const ParentT&) {
    return thread_block_tile<N, ParentT>();
}

class coalesced_group {
   public:
    unsigned _mask;
    explicit coalesced_group(unsigned m) : _mask(m) {}
    unsigned mask_() const { return _mask; }
    unsigned long long size() const { return __builtin_popcount(_mask); }
    unsigned long long num_threads() const { return size(); }
    unsigned long long thread_rank() const { return __builtin_popcount(_mask & ::__emu::cgd::lanemask_lt()); }
    unsigned meta_group_rank() const { return 0; }
    unsigned meta_group_size() const { return 1; }
    void sync(EMU_SITE) const { __syncwarp(_mask, EMU_AT); }
    template <class T>
    T shfl(T v, int src_rank, EMU_SITE) const {
        const unsigned n = static_cast<unsigned>(size());
        const int lane = ::__emu::cgd::nth_lane(_mask, static_cast<unsigned>(src_rank) % n);
        return ::__emu::cgd::shfl_any<T>(::__emu::OP_SHFL_IDX, _mask, v, lane, 32, EMU_AT);
    }
    template <class T>
    T shfl_up(T v, unsigned d, EMU_SITE) const {
        if (_mask == 0xffffffffu) return ::__emu::cgd::shfl_any<T>(::__emu::OP_SHFL_UP, _mask, v, static_cast<int>(d), 32, EMU_AT);
        const long r = static_cast<long>(thread_rank()) - static_cast<long>(d);
        const int lane = r >= 0 ? ::__emu::cgd::nth_lane(_mask, static_cast<unsigned>(r)) : static_cast<int>(::__emu::cgd::linear_tid() & 31u);
        return ::__emu::cgd::shfl_any<T>(::__emu::OP_SHFL_IDX, _mask, v, lane, 32, EMU_AT);
    }
    template <class T>
    T shfl_down(T v, unsigned d, EMU_SITE) const {
        if (_mask == 0xffffffffu) return ::__emu::cgd::shfl_any<T>(::__emu::OP_SHFL_DOWN, _mask, v, static_cast<int>(d), 32, EMU_AT);
        const unsigned long long r = thread_rank() + d;
        const int lane = r < size() ? ::__emu::cgd::nth_lane(_mask, static_cast<unsigned>(r)) : static_cast<int>(::__emu::cgd::linear_tid() & 31u);
        return ::__emu::cgd::shfl_any<T>(::__emu::OP_SHFL_IDX, _mask, v, lane, 32, EMU_AT);
    }
    unsigned ballot(int pred, EMU_SITE) const {
        return ::__emu::cgd::pack_lanes(__ballot_sync(_mask, pred, EMU_AT), _mask);
    }
    bool any(int pred, EMU_SITE) const { return __any_sync(_mask, pred, EMU_AT) != 0; }
    bool all(int pred, EMU_SITE) const { return __all_sync(_mask, pred, EMU_AT) != 0; }
    template <class T>
    unsigned match_any(T v, EMU_SITE) const {
        return ::__emu::cgd::pack_lanes(static_cast<unsigned>(::__emu::warp_collective(
            ::__emu::OP_MATCH_ANY, sizeof(T), _mask, ::__emu::to_bits(v), 0, 32, EMU_AT)), _mask);
    }
    template <class T>
    unsigned match_all(T v, int& pred, EMU_SITE) const {
        const uint64_t r = ::__emu::warp_collective(::__emu::OP_MATCH_ALL, sizeof(T), _mask, ::__emu::to_bits(v), 0, 32, EMU_AT);
        pred = static_cast<int>(r >> 32);
        return ::__emu::cgd::pack_lanes(static_cast<unsigned>(r), _mask);
    }
    operator thread_group() const { return thread_group(_mask, size(), thread_rank(), 0); }
};

static inline coalesced_group coalesced_threads(EMU_SITE) { return coalesced_group(__activemask(EMU_AT)); }

// dynamic tiles
static inline thread_group tiled_partition(const thread_group& parent, unsigned n) {
    const unsigned lin = ::__emu::cgd::linear_tid();
    if (n == 0 || (n & (n - 1)) || n > 1024) ::__emu::fail("tiled_partition: tile size %u is not a power of two <= 1024", n);
    if (n > 32) return thread_group(0xffffffffu, n, lin % n, n);
    (void)parent;
    const unsigned base = (lin & 31u) & ~(n - 1u);
    return thread_group(n == 32 ? 0xffffffffu : (((1u << n) - 1u) << base), n, lin & (n - 1u), 0);
}
static inline thread_group tiled_partition(const thread_block& b, unsigned n) { return tiled_partition(thread_group(b), n); }

// labeled / binary partitions of a warp-sized group
template <class Label>
static inline coalesced_group labeled_partition(const coalesced_group& g, Label label, EMU_SITE) {
    const unsigned m = static_cast<unsigned>(
        ::__emu::warp_collective(::__emu::OP_MATCH_ANY, sizeof(Label), g._mask, ::__emu::to_bits(label), 0, 32, EMU_AT));
    return coalesced_group(m);
}
template <unsigned N, class P, class Label>
static inline coalesced_group labeled_partition(const thread_block_tile<N, P>& t, Label label, EMU_SITE) {
    static_assert(N <= 32, "labeled_partition needs a tile of at most 32 threads");
    const unsigned m = static_cast<unsigned>(::__emu::warp_collective(::__emu::OP_MATCH_ANY, sizeof(Label), t.mask(),
                                                                      ::__emu::to_bits(label), 0, 32, EMU_AT));
    return coalesced_group(m);
}
static inline coalesced_group binary_partition(const coalesced_group& g, bool pred, EMU_SITE) {
    const unsigned b = __ballot_sync(g._mask, pred, EMU_AT);
    return coalesced_group(pred ? b : (g._mask & ~b));
}
template <unsigned N, class P>
static inline coalesced_group binary_partition(const thread_block_tile<N, P>& t, bool pred, EMU_SITE) {
    static_assert(N <= 32, "binary_partition needs a tile of at most 32 threads");
    const unsigned m = t.mask();
    const unsigned b = __ballot_sync(m, pred, EMU_AT);
    return coalesced_group(pred ? b : (m & ~b));
}

// free functions
template <class G>
static inline void sync(const G& g, EMU_SITE) { g.sync(EMU_AT); }
template <class G>
static inline unsigned long long thread_rank(const G& g) { return g.thread_rank(); }
template <class G>
static inline unsigned long long group_size(const G& g) { return g.size(); }

// functors of <cooperative_groups/reduce.h>
template <class T> struct plus { T operator()(const T& a, const T& b) const { return a + b; } };
template <class T> struct less { T operator()(const T& a, const T& b) const { return b < a ? b : a; } };
template <class T> struct greater { T operator()(const T& a, const T& b) const { return a < b ? b : a; } };
template <class T> struct bit_and { T operator()(const T& a, const T& b) const { return a & b; } };
template <class T> struct bit_or { T operator()(const T& a, const T& b) const { return a | b; } };
template <class T> struct bit_xor { T operator()(const T& a, const T& b) const { return a ^ b; } };

namespace __emu_detail {
template <class G> struct is_small_tile : std::false_type {};
template <unsigned N, class P> struct is_small_tile<thread_block_tile<N, P>> : std::bool_constant<(N <= 32)> {};
template <class G> struct big_tile_size : std::integral_constant<unsigned, 0> {};
template <unsigned N, class P> struct big_tile_size<thread_block_tile<N, P>> : std::integral_constant<unsigned, (N > 32 ? N : 0)> {};
}  // namespace __emu_detail

// cg::reduce: every thread of the group gets op over all members (butterfly order for tiles,
// like CUDA's tile reduction; rank order for coalesced groups)
template <class G, class T, class Op>
static inline T reduce(const G& g, T val, Op op, EMU_SITE) {
    using D = std::decay_t<G>;
    if constexpr (__emu_detail::is_small_tile<D>::value) {
        for (unsigned off = D::numThreads / 2; off > 0; off /= 2) val = op(val, g.shfl_xor(val, off, EMU_AT));
        return val;
    } else if constexpr (__emu_detail::big_tile_size<D>::value != 0) {
        return ::__emu::cgd::big_tile_reduce<D::numThreads>(val, op, EMU_AT);
    } else if constexpr (std::is_same_v<D, coalesced_group>) {
        const unsigned n = static_cast<unsigned>(g.size());
        if ((n & (n - 1)) == 0 && g._mask == 0xffffffffu) {
            for (unsigned off = 16; off > 0; off /= 2) val = op(val, __shfl_xor_sync(g._mask, val, off, 32, EMU_AT));
            return val;
        }
        // gather in rank order, combine left to right, broadcast
        T acc = g.shfl(val, 0, EMU_AT);
        for (unsigned r = 1; r < n; ++r) acc = op(acc, g.shfl(val, static_cast<int>(r), EMU_AT));
        return acc;
    } else {
        static_assert(__emu_detail::is_small_tile<D>::value || std::is_same_v<D, coalesced_group>,
                      "cg::reduce needs a thread_block_tile or a coalesced_group");
        return val;
    }
}

template <class G, class T, class Op>
static inline T inclusive_scan(const G& g, T val, Op op, EMU_SITE) {
    if constexpr (__emu_detail::big_tile_size<std::decay_t<G>>::value != 0) {
        return ::__emu::cgd::big_tile_scan<std::decay_t<G>::numThreads>(val, op, EMU_AT);
    } else {
        const unsigned n = static_cast<unsigned>(g.size());
        const unsigned r = static_cast<unsigned>(g.thread_rank());
        for (unsigned off = 1; off < n; off *= 2) {
            T o = g.shfl_up(val, off, EMU_AT);
            if (r >= off) val = op(o, val);
        }
        return val;
    }
}
template <class G, class T>
static inline T inclusive_scan(const G& g, T val, EMU_SITE) { return inclusive_scan(g, val, plus<T>(), EMU_AT); }
template <class G, class T, class Op>
static inline T exclusive_scan(const G& g, T val, Op op, EMU_SITE) {
    if constexpr (__emu_detail::big_tile_size<std::decay_t<G>>::value != 0) {
        constexpr unsigned N = std::decay_t<G>::numThreads;
        T inc = ::__emu::cgd::big_tile_scan<N>(val, op, EMU_AT);
        T prev = ::__emu::cgd::big_tile_shfl<N>(inc, (static_cast<unsigned>(g.thread_rank()) + N - 1u) % N, EMU_AT);
        return g.thread_rank() == 0 ? T{} : prev;
    } else {
        T inc = inclusive_scan(g, val, op, EMU_AT);
        T prev = g.shfl_up(inc, 1, EMU_AT);
        return g.thread_rank() == 0 ? T{} : prev;
    }
}
template <class G, class T>
static inline T exclusive_scan(const G& g, T val, EMU_SITE) { return exclusive_scan(g, val, plus<T>(), EMU_AT); }

// memcpy_async: a cooperative copy by the group's threads, completed by wait(group)
template <class G>
static inline void memcpy_async(const G& g, void* dst, const void* src, size_t bytes) {
    const size_t n = static_cast<size_t>(g.size()), r = static_cast<size_t>(g.thread_rank());
    unsigned char* d = static_cast<unsigned char*>(dst);
    const unsigned char* s = static_cast<const unsigned char*>(src);
    for (size_t i = r; i < bytes; i += n) d[i] = s[i];
}
template <class G, class T>
static inline void memcpy_async(const G& g, T* dst, const T* src, size_t bytes) {
    memcpy_async(g, static_cast<void*>(dst), static_cast<const void*>(src), bytes);
}
template <class G>
static inline void wait(const G& g, EMU_SITE) { g.sync(EMU_AT); }
template <unsigned K, class G>
static inline void wait_prior(const G& g, EMU_SITE) { g.sync(EMU_AT); }

// invoke_one (CUDA 12.1): one member calls fn; invoke_one_broadcast gives its result to all
template <class G, class Fn, class... Args>
static inline void invoke_one(const G& g, Fn&& fn, Args&&... args) {
    if (g.thread_rank() == 0) static_cast<Fn&&>(fn)(static_cast<Args&&>(args)...);
}
template <class G, class Fn, class... Args>
static inline auto invoke_one_broadcast(const G& g, Fn&& fn, Args&&... args) {
    using R = decltype(static_cast<Fn&&>(fn)(static_cast<Args&&>(args)...));
    R r{};
    if (g.thread_rank() == 0) r = static_cast<Fn&&>(fn)(static_cast<Args&&>(args)...);
    return g.shfl(r, 0);
}

namespace details {}
namespace experimental {
template <unsigned N, class ParentT>
static inline thread_block_tile<N, ParentT> tiled_partition(const ParentT& p) { return cooperative_groups::tiled_partition<N>(p); }
}  // namespace experimental
}  // namespace cooperative_groups

#undef EMU_SITE
#undef EMU_AT
#endif  // ACLNN_PY_EMU_COOPERATIVE_GROUPS_H

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
