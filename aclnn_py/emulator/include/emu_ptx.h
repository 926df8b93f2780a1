#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// emu_ptx.h -- helpers for inline PTX in user code (aclnn_py/emulator/ptx.py).
//
// The loader rewrites each `asm("<ptx>" : outputs : inputs : clobbers)` statement of the user's
// source into a C++ block that computes what the PTX computes (ptx.py parses the template); that
// block calls the helpers below, in ::__emu::ptx. Registers are plain C++ variables holding bits
// (uint8/16/32/64_t, float, double, bool for predicates); an instruction of type T reads a register
// as the low sizeof(T) bytes of its bits and writes T back, sign- or zero-extended to the register's
// width (PTX's rules for ld/st/cvt with wider registers).
// Included at the end of cuda_emu.h, after the whole CUDA surface.
#ifndef ACLNN_PY_EMU_PTX_H
#define ACLNN_PY_EMU_PTX_H

namespace __emu {
namespace ptx {

static constexpr int kArch = ACLNN_EMU_CUDA_ARCH;  // the -arch the user compiles for (sm_80 -> 800)

// ---- registers and operands ------------------------------------------------------------------
template <class PtxT, class PtxR>
static inline PtxT rd(const PtxR& r) {
    if constexpr (std::is_same_v<PtxR, bool>) {
        return static_cast<PtxT>(r);
    } else {
        uint64_t b = 0;
        memcpy(&b, &r, sizeof(PtxR));
        if constexpr (std::is_same_v<PtxT, bool>) {
            return b != 0;
        } else {
            PtxT v;
            memcpy(&v, &b, sizeof(PtxT));
            return v;
        }
    }
}
template <class PtxT, class PtxR>
static inline void wr(PtxR& r, PtxT v) {
    if constexpr (std::is_same_v<PtxR, bool>) {
        r = static_cast<bool>(v);
    } else {
        uint64_t b = 0;
        if constexpr (std::is_integral_v<PtxT> && std::is_signed_v<PtxT>) b = static_cast<uint64_t>(static_cast<int64_t>(v));
        else if constexpr (std::is_integral_v<PtxT>) b = static_cast<uint64_t>(v);
        else memcpy(&b, &v, sizeof(PtxT));
        memcpy(&r, &b, sizeof(PtxR));
    }
}
// A C++ operand into a PTX register of type PtxR ("r" -> uint32_t, "l" -> uint64_t, "f" -> float ...):
// arithmetic values and pointers convert by value, a struct of the register's size (__half) by bits.
template <class PtxR, class PtxX>
static inline PtxR in(const PtxX& x) {
    using PtxU = std::remove_cv_t<PtxX>;
    if constexpr (std::is_arithmetic_v<PtxU> || std::is_enum_v<PtxU>) {
        return static_cast<PtxR>(x);
    } else if constexpr (std::is_pointer_v<PtxU>) {
        return static_cast<PtxR>(reinterpret_cast<uintptr_t>(x));
    } else {
        static_assert(sizeof(PtxU) == sizeof(PtxR), "inline PTX operand: a C++ type whose size does not match its constraint");
        PtxR r;
        memcpy(&r, &x, sizeof(PtxR));
        return r;
    }
}
template <class PtxX, class PtxR>
static inline void out(PtxX& x, const PtxR& v) {
    using PtxU = std::remove_cv_t<PtxX>;
    if constexpr (std::is_arithmetic_v<PtxU> || std::is_enum_v<PtxU>) {
        x = static_cast<PtxU>(v);
    } else if constexpr (std::is_pointer_v<PtxU>) {
        x = reinterpret_cast<PtxU>(static_cast<uintptr_t>(v));
    } else {
        static_assert(sizeof(PtxU) == sizeof(PtxR), "inline PTX operand: a C++ type whose size does not match its constraint");
        memcpy(static_cast<void*>(&x), &v, sizeof(PtxR));
    }
}
template <class PtxX, class PtxR>
static inline void out(PtxX&& x, const PtxR& v) {  // a proxy object (rvalue) that assigns
    x = v;
}
template <class PtxT>
static inline PtxT bits(uint64_t b) {
    PtxT v;
    memcpy(&v, &b, sizeof(PtxT));
    return v;
}

// ---- special registers -------------------------------------------------------------------------
static inline uint32_t linear_tid() {
    return dims.tid.x + dims.bdim.x * (dims.tid.y + dims.bdim.y * dims.tid.z);
}
static inline uint32_t laneid() { return linear_tid() & 31u; }
static inline uint32_t warpid() { return linear_tid() >> 5; }
static inline uint32_t nwarpid() {  // the most warps an SM of the target architecture holds
#if ACLNN_EMU_CUDA_ARCH == 750
    return 32;
#elif ACLNN_EMU_CUDA_ARCH == 860 || ACLNN_EMU_CUDA_ARCH == 870 || ACLNN_EMU_CUDA_ARCH == 890
    return 48;
#else
    return 64;
#endif
}
static inline uint32_t nsmid() {  // ACLNN_PY_EMU_SM_COUNT, as aclnn_py.emulator.emulated_sm_count()
    static uint32_t n = [] {
        const char* s = getenv("ACLNN_PY_EMU_SM_COUNT");
        long v = (s && *s) ? strtol(s, nullptr, 10) : 0;
        return v > 0 ? static_cast<uint32_t>(v) : 8u;
    }();
    return n;
}
static inline uint32_t smid() {
    const uint64_t b = dims.bid.x + static_cast<uint64_t>(dims.gdim.x) * (dims.bid.y + static_cast<uint64_t>(dims.gdim.y) * dims.bid.z);
    return static_cast<uint32_t>(b % nsmid());
}
static inline uint64_t gridid() { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(tls.L)); }
static inline uint32_t lanemask_eq() { return 1u << laneid(); }
static inline uint32_t lanemask_lt() { return (1u << laneid()) - 1u; }
static inline uint32_t lanemask_le() { return static_cast<uint32_t>((2ull << laneid()) - 1u); }
static inline uint32_t lanemask_ge() { return ~lanemask_lt(); }
static inline uint32_t lanemask_gt() { return ~lanemask_le(); }
static inline uint32_t dynamic_smem_size() { return tls.L ? static_cast<uint32_t>(tls.L->shmem) : 0u; }

// ---- shared-memory window ----------------------------------------------------------------------
// On a GPU a .shared address is a 32-bit offset in the block's shared window. Here shared memory is
// host memory (static __shared__: thread_locals of the block's OS thread; dynamic: the executor's
// mapping), so a 32-bit shared address is a handle: its top 8 bits name a 16 MiB slot that this OS
// thread maps to a 16 MiB-aligned chunk of host memory, its low 24 bits the offset in the chunk.
// A new chunk is given 4 consecutive slots (that chunk and the next 3), so arithmetic on a shared
// address that walks into the following chunk still lands where it should.
struct ShWin {
    uintptr_t chunk[256];
    unsigned n;
};
static thread_local ShWin shwin;
static inline uint32_t to_shared(uint64_t p) {
    const uintptr_t c = static_cast<uintptr_t>(p >> 24);
    for (unsigned i = 1; i < shwin.n; ++i)
        if (shwin.chunk[i] == c) return static_cast<uint32_t>((i << 24) | (p & 0xffffffu));
    if (shwin.n == 0) shwin.n = 1;  // slot 0: never handed out (shared address 0 faults)
    if (shwin.n + 4 > 256) fail("inline PTX: the emulator's shared-address window is full (cvta.to.shared)");
    const unsigned i = shwin.n;
    for (unsigned k = 0; k < 4; ++k) shwin.chunk[i + k] = c + k;
    shwin.n += 4;
    return static_cast<uint32_t>((i << 24) | (p & 0xffffffu));
}
static inline uint64_t from_shared(uint64_t a) {
    const unsigned i = static_cast<unsigned>(a >> 24);
    if ((a >> 32) != 0 || i == 0 || i >= shwin.n)
        fail("inline PTX: .shared access at 0x%llx, which is not a shared address this block made "
             "(cvta.to.shared / __cvta_generic_to_shared)", static_cast<unsigned long long>(a));
    return (static_cast<uint64_t>(shwin.chunk[i]) << 24) | (a & 0xffffffu);
}
template <class PtxT>
static inline PtxT* ptr(uint64_t a) { return reinterpret_cast<PtxT*>(static_cast<uintptr_t>(a)); }

// ---- memory ------------------------------------------------------------------------------------
// kind: 0 plain, 1 volatile, 2 relaxed, 3 acquire (loads) / release (stores)
template <class PtxT>
static inline PtxT ld(uint64_t a, int kind) {
    PtxT* p = ptr<PtxT>(a);
    if (kind == 0) return *p;
    if (kind == 1) return *const_cast<volatile PtxT*>(p);
    PtxT v;
    __atomic_load(p, &v, kind == 3 ? __ATOMIC_ACQUIRE : __ATOMIC_RELAXED);
    return v;
}
template <class PtxT>
static inline void st(uint64_t a, PtxT v, int kind) {
    PtxT* p = ptr<PtxT>(a);
    if (kind == 0) *p = v;
    else if (kind == 1) *const_cast<volatile PtxT*>(p) = v;
    else __atomic_store(p, &v, kind == 3 ? __ATOMIC_RELEASE : __ATOMIC_RELAXED);
}

// atomics (seq_cst: at least as strong as any .sem the PTX asks for)
enum { A_ADD, A_MIN, A_MAX, A_INC, A_DEC, A_AND, A_OR, A_XOR, A_EXCH };
template <class PtxT>
static inline PtxT atom(uint64_t a, int op, PtxT v) {
    PtxT* p = ptr<PtxT>(a);
    if constexpr (std::is_floating_point_v<PtxT>) {
        std::atomic_ref<PtxT> r(*p);
        if (op == A_ADD) return r.fetch_add(v);
        if (op == A_EXCH) return r.exchange(v);
        PtxT old = r.load();
        for (;;) {  // min/max: NaN and signed zeros as min.f32/max.f32
            PtxT nv;
            if (op == A_MIN) nv = (old != old) ? v : (v != v) ? old : (v < old || (v == old && std::signbit(v))) ? v : old;
            else nv = (old != old) ? v : (v != v) ? old : (v > old || (v == old && !std::signbit(v))) ? v : old;
            if (r.compare_exchange_weak(old, nv)) return old;
        }
    } else {
        switch (op) {
            case A_ADD: return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
            case A_AND: return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);
            case A_OR: return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);
            case A_XOR: return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST);
            case A_EXCH: return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
            default: break;
        }
        PtxT old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
        for (;;) {
            PtxT nv;
            if (op == A_MIN) nv = v < old ? v : old;
            else if (op == A_MAX) nv = v > old ? v : old;
            else if (op == A_INC) nv = old >= v ? PtxT(0) : PtxT(old + 1);
            else nv = (old == 0 || old > v) ? v : PtxT(old - 1);  // A_DEC
            if (__atomic_compare_exchange_n(p, &old, nv, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return old;
        }
    }
}
template <class PtxT>
static inline PtxT atom_cas(uint64_t a, PtxT cmp, PtxT v) {
    PtxT* p = ptr<PtxT>(a);
    __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return cmp;  // the old value either way
}
// atom.add.noftz.f16 / .bf16 (and the x2 forms): the emulator's atomicAdd on __half / __nv_bfloat16
template <class PtxH>
static inline uint16_t atom_add_h(uint64_t a, uint16_t v) {
    PtxH hv;
    memcpy(static_cast<void*>(&hv), &v, 2);
    PtxH old = atomicAdd(ptr<PtxH>(a), hv);
    uint16_t r;
    memcpy(&r, static_cast<const void*>(&old), 2);
    return r;
}

// cp.async: copied at once (a legal schedule: wait_group only has to make it visible by then);
// bytes past src_size are zero-filled
static inline void cp_async(uint64_t dst, uint64_t src, uint32_t cp_size, uint32_t src_size) {
    if (src_size > cp_size) src_size = cp_size;
    if (src_size) memcpy(ptr<unsigned char>(dst), ptr<const unsigned char>(src), src_size);
    if (src_size < cp_size) memset(ptr<unsigned char>(dst) + src_size, 0, cp_size - src_size);
}

// ---- integer -------------------------------------------------------------------------------------
template <class PtxT>
static inline PtxT mulhi(PtxT a, PtxT b) {
    if constexpr (sizeof(PtxT) == 8) {
        using PtxW = std::conditional_t<std::is_signed_v<PtxT>, __int128, unsigned __int128>;
        return static_cast<PtxT>((static_cast<PtxW>(a) * static_cast<PtxW>(b)) >> 64);
    } else {
        using PtxW = std::conditional_t<std::is_signed_v<PtxT>, int64_t, uint64_t>;
        return static_cast<PtxT>((static_cast<PtxW>(a) * static_cast<PtxW>(b)) >> (8 * sizeof(PtxT)));
    }
}
template <class PtxT>
static inline auto mulwide(PtxT a, PtxT b) {
    if constexpr (sizeof(PtxT) == 2) {
        using PtxW = std::conditional_t<std::is_signed_v<PtxT>, int32_t, uint32_t>;
        return static_cast<PtxW>(static_cast<PtxW>(a) * static_cast<PtxW>(b));
    } else {
        using PtxW = std::conditional_t<std::is_signed_v<PtxT>, int64_t, uint64_t>;
        return static_cast<PtxW>(static_cast<PtxW>(a) * static_cast<PtxW>(b));
    }
}
template <class PtxT>
static inline PtxT sat_add_s32(PtxT a, PtxT b) {
    int64_t r = static_cast<int64_t>(a) + b;
    return static_cast<PtxT>(r > INT32_MAX ? INT32_MAX : r < INT32_MIN ? INT32_MIN : r);
}
template <class PtxT>
static inline PtxT sat_sub_s32(PtxT a, PtxT b) {
    int64_t r = static_cast<int64_t>(a) - b;
    return static_cast<PtxT>(r > INT32_MAX ? INT32_MAX : r < INT32_MIN ? INT32_MIN : r);
}
template <class PtxT>
static inline PtxT shl(PtxT a, uint32_t n) { return n >= 8 * sizeof(PtxT) ? PtxT(0) : static_cast<PtxT>(a << n); }
template <class PtxT>
static inline PtxT shr(PtxT a, uint32_t n) {
    if (n >= 8 * sizeof(PtxT)) return std::is_signed_v<PtxT> ? static_cast<PtxT>(a < 0 ? -1 : 0) : PtxT(0);
    return static_cast<PtxT>(a >> n);
}
template <class PtxT>
static inline PtxT brev(PtxT a) {
    using PtxU = std::make_unsigned_t<PtxT>;
    PtxU x = static_cast<PtxU>(a), r = 0;
    for (unsigned i = 0; i < 8 * sizeof(PtxT); ++i) r |= static_cast<PtxU>(((x >> i) & 1u)) << (8 * sizeof(PtxT) - 1 - i);
    return static_cast<PtxT>(r);
}
template <class PtxT>
static inline uint32_t popc(PtxT a) { return static_cast<uint32_t>(__builtin_popcountll(static_cast<uint64_t>(static_cast<std::make_unsigned_t<PtxT>>(a)))); }
template <class PtxT>
static inline uint32_t clz(PtxT a) {
    const uint64_t x = static_cast<uint64_t>(static_cast<std::make_unsigned_t<PtxT>>(a));
    return x ? static_cast<uint32_t>(__builtin_clzll(x) - (64 - 8 * sizeof(PtxT))) : static_cast<uint32_t>(8 * sizeof(PtxT));
}
template <class PtxT>
static inline uint32_t bfind(PtxT a, bool shiftamt) {
    const int msb = 8 * sizeof(PtxT) - 1;
    using PtxU = std::make_unsigned_t<PtxT>;
    PtxU x = static_cast<PtxU>(a);
    if (std::is_signed_v<PtxT> && ((x >> msb) & 1u)) x = static_cast<PtxU>(~x);
    uint32_t d = 0xffffffffu;
    for (int i = msb; i >= 0; --i)
        if ((x >> i) & 1u) { d = static_cast<uint32_t>(i); break; }
    if (shiftamt && d != 0xffffffffu) d = static_cast<uint32_t>(msb) - d;
    return d;
}
template <class PtxT>
static inline PtxT bfe(PtxT a, uint32_t b, uint32_t c) {
    const unsigned msb = 8 * sizeof(PtxT) - 1;
    using PtxU = std::make_unsigned_t<PtxT>;
    const PtxU x = static_cast<PtxU>(a);
    const unsigned pos = b & 0xff, len = c & 0xff;
    PtxU sbit = 0;
    if (std::is_signed_v<PtxT> && len != 0) sbit = (x >> std::min(pos + len - 1, msb)) & 1u;
    PtxU d = 0;
    for (unsigned i = 0; i <= msb; ++i) {
        const PtxU bit = (i < len && pos + i <= msb) ? static_cast<PtxU>((x >> (pos + i)) & 1u) : sbit;
        d |= static_cast<PtxU>(bit << i);
    }
    return static_cast<PtxT>(d);
}
template <class PtxT>
static inline PtxT bfi(PtxT a, PtxT b, uint32_t c, uint32_t d) {
    const unsigned msb = 8 * sizeof(PtxT) - 1;
    using PtxU = std::make_unsigned_t<PtxT>;
    PtxU f = static_cast<PtxU>(b);
    const PtxU x = static_cast<PtxU>(a);
    const unsigned pos = c & 0xff, len = d & 0xff;
    for (unsigned i = 0; i < len && pos + i <= msb; ++i) {
        f = static_cast<PtxU>(f & ~(PtxU(1) << (pos + i)));
        f = static_cast<PtxU>(f | (((x >> i) & PtxU(1)) << (pos + i)));
    }
    return static_cast<PtxT>(f);
}
// prmt.b32{.mode}: mode 0 = generic, 1 f4e, 2 b4e, 3 rc8, 4 ecl, 5 ecr, 6 rc16
static inline uint32_t prmt(uint32_t a, uint32_t b, uint32_t c, int mode) {
    const uint64_t t = (static_cast<uint64_t>(b) << 32) | a;
    auto byte = [&](unsigned i) { return static_cast<uint32_t>((t >> (8 * (i & 7))) & 0xff); };
    uint32_t sel[4];
    if (mode == 0) {
        uint32_t d = 0;
        for (int i = 0; i < 4; ++i) {
            const uint32_t s = (c >> (4 * i)) & 0xf;
            uint32_t v = byte(s & 7);
            if (s & 8) v = (v & 0x80) ? 0xff : 0;
            d |= v << (8 * i);
        }
        return d;
    }
    static const unsigned char tab[6][4][4] = {  // [mode-1][c & 3][d.b0 .. d.b3]
        {{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}},  // f4e
        {{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}},  // b4e
        {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}},  // rc8
        {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}},  // ecl
        {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}},  // ecr
        {{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}},  // rc16
    };
    for (int i = 0; i < 4; ++i) sel[i] = tab[mode - 1][c & 3][i];
    return byte(sel[0]) | (byte(sel[1]) << 8) | (byte(sel[2]) << 16) | (byte(sel[3]) << 24);
}
static inline uint32_t shf(uint32_t a, uint32_t b, uint32_t c, bool left, bool wrap) {
    const uint32_t n = wrap ? (c & 31u) : (c < 32u ? c : 32u);
    const uint64_t v = (static_cast<uint64_t>(b) << 32) | a;
    return left ? static_cast<uint32_t>((v << n) >> 32) : static_cast<uint32_t>(v >> n);
}
static inline uint32_t lop3(uint32_t a, uint32_t b, uint32_t c, uint32_t lut) {
    uint32_t r = 0;
    for (int i = 0; i < 8; ++i)
        if ((lut >> i) & 1u) r |= ((i & 4) ? a : ~a) & ((i & 2) ? b : ~b) & ((i & 1) ? c : ~c);
    return r;
}
// SIMD video instructions (vadd4 ... vabsdiff2): Lanes lanes of 32 / Lanes bits; each lane's result is
// computed exactly from the lanes of a and b (signed or not); Mode 0 keeps its low bits (wrap), 1
// saturates it to d's lane range, 2 (.add) sums the lanes' results into c.
enum class Video { add, sub, avrg, absdiff, min, max };
template <int Lanes, Video Op, bool SD, bool SA, bool SB, int Mode>
static inline uint32_t video(uint32_t a, uint32_t b, uint32_t c) {
    constexpr int W = 32 / Lanes;
    constexpr uint32_t M = (W == 32) ? 0xffffffffu : ((1u << W) - 1u);
    int64_t acc = 0;
    uint32_t r = 0;
    for (int i = 0; i < Lanes; ++i) {
        const uint32_t ua = (a >> (W * i)) & M, ub = (b >> (W * i)) & M;
        const int64_t x = SA ? static_cast<int64_t>(static_cast<int32_t>(ua << (32 - W)) >> (32 - W)) : static_cast<int64_t>(ua);
        const int64_t y = SB ? static_cast<int64_t>(static_cast<int32_t>(ub << (32 - W)) >> (32 - W)) : static_cast<int64_t>(ub);
        int64_t v = 0;
        switch (Op) {
            case Video::add: v = x + y; break;
            case Video::sub: v = x - y; break;
            case Video::avrg: v = (x + y + 1) >> 1; break;
            case Video::absdiff: v = x > y ? x - y : y - x; break;
            case Video::min: v = x < y ? x : y; break;
            case Video::max: v = x > y ? x : y; break;
        }
        if (Mode == 2) { acc += v; continue; }
        if (Mode == 1) {
            const int64_t lo = SD ? -(int64_t(1) << (W - 1)) : 0;
            const int64_t hi = SD ? (int64_t(1) << (W - 1)) - 1 : int64_t(M);
            v = v < lo ? lo : v > hi ? hi : v;
        }
        r |= (static_cast<uint32_t>(v) & M) << (W * i);
    }
    return Mode == 2 ? static_cast<uint32_t>(c + static_cast<uint64_t>(acc)) : r;
}
template <bool PtxSA, bool PtxSB>
static inline uint32_t dp4a(uint32_t a, uint32_t b, uint32_t c) {
    int64_t s = 0;
    for (int i = 0; i < 4; ++i) {
        const uint32_t x = (a >> (8 * i)) & 0xff, y = (b >> (8 * i)) & 0xff;
        const int64_t xv = PtxSA ? static_cast<int8_t>(x) : static_cast<int64_t>(x);
        const int64_t yv = PtxSB ? static_cast<int8_t>(y) : static_cast<int64_t>(y);
        s += xv * yv;
    }
    return static_cast<uint32_t>(c + static_cast<uint64_t>(s));
}
template <bool PtxSA, bool PtxSB>
static inline uint32_t dp2a(uint32_t a, uint32_t b, uint32_t c, bool hi) {
    int64_t s = 0;
    for (int i = 0; i < 2; ++i) {
        const uint32_t x = (a >> (16 * i)) & 0xffff, y = (b >> (8 * (i + (hi ? 2 : 0)))) & 0xff;
        const int64_t xv = PtxSA ? static_cast<int16_t>(x) : static_cast<int64_t>(x);
        const int64_t yv = PtxSB ? static_cast<int8_t>(y) : static_cast<int64_t>(y);
        s += xv * yv;
    }
    return static_cast<uint32_t>(c + static_cast<uint64_t>(s));
}
template <class PtxT>
static inline PtxT iabs(PtxT a) { return a < 0 ? static_cast<PtxT>(PtxT(0) - static_cast<std::make_unsigned_t<PtxT>>(a)) : a; }

// ---- floating point ------------------------------------------------------------------------------
static inline float ftz(float x) { return (std::fpclassify(x) == FP_SUBNORMAL) ? std::copysign(0.0f, x) : x; }
static inline double ftz(double x) { return x; }  // .ftz applies to .f32 only
template <class PtxT>
static inline PtxT fsat(PtxT x) { return x != x ? PtxT(0) : x < PtxT(0) ? PtxT(0) : x > PtxT(1) ? PtxT(1) : x; }
template <class PtxT>
static inline PtxT fmin(PtxT a, PtxT b) {  // min.f32/f64: NaN -> the other operand, -0 < +0; both NaN -> canonical NaN
    if (a != a && b != b) return bits<PtxT>(sizeof(PtxT) == 4 ? 0x7fffffffull : 0x7fffffffffffffffull);
    if (a != a) return b;
    if (b != b) return a;
    if (a == b) return std::signbit(a) ? a : b;
    return a < b ? a : b;
}
template <class PtxT>
static inline PtxT fmax(PtxT a, PtxT b) {
    if (a != a && b != b) return bits<PtxT>(sizeof(PtxT) == 4 ? 0x7fffffffull : 0x7fffffffffffffffull);
    if (a != a) return b;
    if (b != b) return a;
    if (a == b) return std::signbit(a) ? b : a;
    return a > b ? a : b;
}
template <class PtxT>
static inline PtxT fneg(PtxT a) {
    if constexpr (sizeof(PtxT) == 4) return bits<PtxT>(rd<uint32_t>(a) ^ 0x80000000u);
    else return bits<PtxT>(rd<uint64_t>(a) ^ 0x8000000000000000ull);
}
template <class PtxT>
static inline PtxT fabs_(PtxT a) {
    if constexpr (sizeof(PtxT) == 4) return bits<PtxT>(rd<uint32_t>(a) & 0x7fffffffu);
    else return bits<PtxT>(rd<uint64_t>(a) & 0x7fffffffffffffffull);
}
// mode: 0 rn, 1 rz, 2 rm, 3 rp (FE_* for ::__emu::rounded)
static inline int fe(int mode) {
    return mode == 1 ? FE_TOWARDZERO : mode == 2 ? FE_DOWNWARD : mode == 3 ? FE_UPWARD : FE_TONEAREST;
}
template <class PtxT>
static inline PtxT fadd(PtxT a, PtxT b, int m) {
    if (m == 0) return a + b;
    return ::__emu::rounded<PtxT>(fe(m), [&] { volatile PtxT x = a, y = b; return x + y; });
}
template <class PtxT>
static inline PtxT fsub(PtxT a, PtxT b, int m) {
    if (m == 0) return a - b;
    return ::__emu::rounded<PtxT>(fe(m), [&] { volatile PtxT x = a, y = b; return x - y; });
}
template <class PtxT>
static inline PtxT fmul(PtxT a, PtxT b, int m) {
    if (m == 0) return a * b;
    return ::__emu::rounded<PtxT>(fe(m), [&] { volatile PtxT x = a, y = b; return x * y; });
}
template <class PtxT>
static inline PtxT fdiv(PtxT a, PtxT b, int m) {
    if (m == 0) return a / b;
    return ::__emu::rounded<PtxT>(fe(m), [&] { volatile PtxT x = a, y = b; return x / y; });
}
template <class PtxT>
static inline PtxT ffma(PtxT a, PtxT b, PtxT c, int m) {
    if (m == 0) return std::fma(a, b, c);
    return ::__emu::rounded<PtxT>(fe(m), [&] { volatile PtxT x = a, y = b, z = c; return std::fma(static_cast<PtxT>(x), static_cast<PtxT>(y), static_cast<PtxT>(z)); });
}
template <class PtxT>
static inline PtxT fsqrt(PtxT a, int m) {
    if (m == 0) return std::sqrt(a);
    return ::__emu::rounded<PtxT>(fe(m), [&] { volatile PtxT x = a; return std::sqrt(static_cast<PtxT>(x)); });
}
template <class PtxT>
static inline PtxT frcp(PtxT a, int m) { return fdiv(PtxT(1), a, m); }

// conversions. Float -> integer: round (0 rni, 1 rzi, 2 rmi, 3 rpi), saturate, NaN -> 0 (cvt's rules)
template <class PtxI, class PtxF>
static inline PtxI f2i(PtxF x, int m) {
    PtxF r = m == 0 ? std::nearbyint(x) : m == 1 ? std::trunc(x) : m == 2 ? std::floor(x) : std::ceil(x);
    return ::__emu::cvt_sat<PtxI, PtxF>(r);
}
template <class PtxF>
static inline PtxF fround(PtxF x, int m) {  // cvt.rni.f32.f32 & co: round to an integral value
    return m == 0 ? std::nearbyint(x) : m == 1 ? std::trunc(x) : m == 2 ? std::floor(x) : std::ceil(x);
}
template <class PtxF, class PtxI>
static inline PtxF i2f(PtxI v, int m) {
    if (m == 0) return static_cast<PtxF>(v);
    return ::__emu::rounded<PtxF>(fe(m), [&] { volatile PtxI x = v; return static_cast<PtxF>(x); });
}
// integer -> double rounded to odd: exact, or a value whose last bit records the inexactness, so that
// one more rounding to a narrower format (f16, bf16: far fewer than 53 - 2 bits) is correctly rounded
template <class PtxI>
static inline double i2d_odd(PtxI v) {
    if constexpr (sizeof(PtxI) < 8) {
        return static_cast<double>(v);
    } else {
        double d = ::__emu::rounded<double>(FE_TOWARDZERO, [&] { volatile PtxI x = v; return static_cast<double>(x); });
        long double back = static_cast<long double>(d);
        if (back != static_cast<long double>(v)) d = bits<double>(rd<uint64_t>(d) | 1u);
        return d;
    }
}
static inline float d2f(double x, int m) {
    if (m == 0) return static_cast<float>(x);
    return ::__emu::rounded<float>(fe(m), [&] { volatile double v = x; return static_cast<float>(v); });
}
static inline int fpm(int m) {  // ptx rounding index -> ::__emu::fp mode
    return m == 1 ? ::__emu::fp::RZ : m == 2 ? ::__emu::fp::RD : m == 3 ? ::__emu::fp::RU : ::__emu::fp::RN;
}
static inline uint16_t f2h(double x, int m) { return ::__emu::fp::d2h(x, fpm(m)); }
static inline uint16_t f2h(float x, int m) { return ::__emu::fp::f2h(x, fpm(m)); }
static inline uint16_t f2bf(double x, int m) { return ::__emu::fp::d2bf(x, fpm(m)); }
static inline uint16_t f2bf(float x, int m) { return ::__emu::fp::f2bf(x, fpm(m)); }
static inline float h2f(uint16_t h) { return ::__emu::fp::h2f(h); }
static inline float bf2f(uint16_t h) { return ::__emu::fp::bf2f(h); }
static inline uint16_t relu16(uint16_t h, bool bf) {  // .relu: negative -> +0, NaN -> canonical NaN
    const bool nan = bf ? ((h & 0x7fffu) > 0x7f80u) : ((h & 0x7fffu) > 0x7c00u);
    if (nan) return 0x7fffu;
    return (h & 0x8000u) ? 0 : h;
}

static inline void bar_id0(uint32_t id) {
    if (id != 0) fail("inline PTX bar.sync %u: only barrier 0 (= __syncthreads) is emulated", id);
}

// ---- warp ----------------------------------------------------------------------------------------
// shfl.sync: the source lane of the calling lane, computed as the PTX ISA defines it from b (lane,
// delta or mask), c (clamp in bits 0-4, segment mask in bits 8-12) and the mode (0 up, 1 down, 2 bfly,
// 3 idx); *valid is the instruction's predicate output (false: the lane reads its own value). The
// exchange itself is __shfl_sync from that lane, so every encoding of c is exact.
static inline int shfl_src(int mode, uint32_t b, uint32_t c, bool* valid) {
    const int32_t lane = static_cast<int32_t>(laneid()), bval = static_cast<int32_t>(b & 0x1f);
    const int32_t cval = static_cast<int32_t>(c & 0x1f), segmask = static_cast<int32_t>((c >> 8) & 0x1f);
    const int32_t maxl = (lane & segmask) | (cval & ~segmask), minl = lane & segmask;
    int32_t j;
    bool p;
    switch (mode) {
        case 0: j = lane - bval; p = j >= maxl; break;
        case 1: j = lane + bval; p = j <= maxl; break;
        case 2: j = lane ^ bval; p = j <= maxl; break;
        default: j = minl | (bval & ~segmask); p = j <= maxl; break;
    }
    if (!p) j = lane;
    *valid = p;
    return j;
}

}  // namespace ptx
}  // namespace __emu

// CUDA's address-space conversion intrinsics (the shared addresses of the window above)
static inline size_t __cvta_generic_to_shared(const void* p) { return ::__emu::ptx::to_shared(reinterpret_cast<uintptr_t>(p)); }
static inline void* __cvta_shared_to_generic(size_t a) { return reinterpret_cast<void*>(static_cast<uintptr_t>(::__emu::ptx::from_shared(a))); }
static inline size_t __cvta_generic_to_global(const void* p) { return reinterpret_cast<uintptr_t>(p); }
static inline void* __cvta_global_to_generic(size_t a) { return reinterpret_cast<void*>(static_cast<uintptr_t>(a)); }

#endif  // ACLNN_PY_EMU_PTX_H

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
