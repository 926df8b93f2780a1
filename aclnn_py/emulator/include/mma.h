#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// Emulator shim for <mma.h>: the warp matrix functions (nvcuda::wmma) on the CPU.
//
// CUDA leaves the mapping of a fragment's elements to the lanes of the warp unspecified; code may
// only touch `frag.x[i]` for i < frag.num_elements uniformly (scale, convert, activate). Here every
// lane's fragment holds the whole tile in row-major order, so the warp-wide load / mma / store need
// no exchange between lanes: each lane loads and multiplies the whole tile, and the warp's first lane
// stores it. Element-wise code over x[] gives the same tile as on a GPU.
//
// Numbers: half and bf16 products are exact in float; mma_sync accumulates them in float, k in
// order, onto the accumulator (a tensor core adds in an order and with an internal precision of its
// own: results may differ from a GPU's in the last bits of float, as any two GEMMs do). tf32 inputs
// keep their top 19 bits (the low 13 mantissa bits are ignored, as the hardware does; round them
// with __float_to_tf32 first, as CUDA asks). double (m8n8k4) accumulates with fma, k in order.
// Integer (s8/u8, int accumulator) products and sums are exact. Sub-byte types (s4/u4/b1) are not
// provided: a compile error names them.
#pragma once
#include "cuda_emu.h"

namespace nvcuda {
namespace wmma {

struct row_major {};
struct col_major {};
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
enum layout_t { mem_row_major, mem_col_major };
namespace precision {
struct tf32 {};
}
namespace experimental {
namespace precision {
struct s4;
struct u4;
struct b1;
}  // namespace precision
}  // namespace experimental

namespace detail {
template <class T> struct storage { using type = T; };
template <> struct storage<precision::tf32> { using type = float; };
template <class Use, int M, int N, int K> struct shape;
template <int M, int N, int K> struct shape<matrix_a, M, N, K> { static constexpr int rows = M, cols = K; };
template <int M, int N, int K> struct shape<matrix_b, M, N, K> { static constexpr int rows = K, cols = N; };
template <int M, int N, int K> struct shape<accumulator, M, N, K> { static constexpr int rows = M, cols = N; };

template <class T> inline float widen(T v) { return static_cast<float>(v); }
inline float widen(__half v) { return __half2float(v); }
inline float widen(__nv_bfloat16 v) { return __bfloat162float(v); }
inline double widen(double v) { return v; }
inline int widen(signed char v) { return v; }
inline int widen(unsigned char v) { return v; }
inline int widen(int v) { return v; }
template <class In, class V> inline V tf32_input(V v) {
    if constexpr (std::is_same_v<In, precision::tf32>) {
        const uint32_t u = __builtin_bit_cast(uint32_t, v);
        return (u & 0x7f800000u) == 0x7f800000u ? v : __builtin_bit_cast(float, u & 0xffffe000u);
    } else {
        return v;
    }
}
template <class E> inline auto max_finite() { return std::numeric_limits<decltype(widen(E{}))>::max(); }
template <> inline auto max_finite<__half>() { return 65504.0f; }
template <> inline auto max_finite<__nv_bfloat16>() { return 3.3895313892515355e38f; }
template <class T, class F> inline T narrow(F v) { return static_cast<T>(v); }
// offset of element (r, c) of a tile in memory with leading dimension ldm
inline size_t at(int r, int c, unsigned ldm, bool row_major) {
    return row_major ? static_cast<size_t>(r) * ldm + c : static_cast<size_t>(c) * ldm + r;
}
template <> inline __half narrow<__half, float>(float v) { return __float2half_rn(v); }
template <> inline __nv_bfloat16 narrow<__nv_bfloat16, float>(float v) { return __float2bfloat16_rn(v); }
}  // namespace detail

template <class Use, int M, int N, int K, class T, class Layout = void>
class fragment {
    static_assert(!std::is_same_v<T, experimental::precision::s4> && !std::is_same_v<T, experimental::precision::u4> &&
                      !std::is_same_v<T, experimental::precision::b1>,
                  "the emulator's WMMA has no sub-byte types (s4/u4/b1)");

  public:
    using element_type = typename detail::storage<T>::type;
    using storage_element_type = element_type;
    static constexpr int rows = detail::shape<Use, M, N, K>::rows;
    static constexpr int cols = detail::shape<Use, M, N, K>::cols;
    static constexpr int num_elements = rows * cols;
    static constexpr int num_storage_elements = num_elements;
    element_type x[num_elements];
};

template <class Use, int M, int N, int K, class T, class L, class V>
inline void fill_fragment(fragment<Use, M, N, K, T, L>& f, const V& v) {
    using E = typename fragment<Use, M, N, K, T, L>::element_type;
    const E e = static_cast<E>(v);
    for (int i = 0; i < f.num_elements; ++i) f.x[i] = e;
}

// matrix_a / matrix_b: the layout is part of the fragment's type
template <class Use, int M, int N, int K, class T, class L, class P>
inline void load_matrix_sync(fragment<Use, M, N, K, T, L>& f, const P* p, unsigned ldm) {
    static_assert(!std::is_same_v<Use, accumulator>, "an accumulator load needs a layout_t argument");
    using Fr = fragment<Use, M, N, K, T, L>;
    constexpr bool rowm = std::is_same_v<L, row_major>;
    for (int r = 0; r < Fr::rows; ++r)
        for (int c = 0; c < Fr::cols; ++c)
            f.x[r * Fr::cols + c] = p[detail::at(r, c, ldm, rowm)];
}

template <int M, int N, int K, class T, class P>
inline void load_matrix_sync(fragment<accumulator, M, N, K, T, void>& f, const P* p, unsigned ldm, layout_t layout) {
    for (int r = 0; r < M; ++r)
        for (int c = 0; c < N; ++c)
            f.x[r * N + c] = p[detail::at(r, c, ldm, layout == mem_row_major)];
}

// Only the warp's first lane writes the tile. Every lane holds the whole tile, and the lanes run one
// after another here, where a GPU's converged warp loads before it stores: with all lanes storing,
// a load-scale-store of C (`load C; c = alpha*acc + beta*c; store C`) would be applied once per lane.
// The first lane runs first, so it reads memory as the warp would.
template <int M, int N, int K, class T, class P>
inline void store_matrix_sync(P* p, const fragment<accumulator, M, N, K, T, void>& f, unsigned ldm, layout_t layout) {
    const uint3 t = ::__emu::dims.tid, b = ::__emu::dims.bdim;
    if (((t.z * b.y + t.y) * b.x + t.x) % 32u != 0u) return;
    for (int r = 0; r < M; ++r)
        for (int c = 0; c < N; ++c)
            p[detail::at(r, c, ldm, layout == mem_row_major)] = f.x[r * N + c];
}

template <int M, int N, int K, class TA, class LA, class TB, class LB, class TC, class TD>
inline void mma_sync(fragment<accumulator, M, N, K, TD, void>& d, const fragment<matrix_a, M, N, K, TA, LA>& a,
                     const fragment<matrix_b, M, N, K, TB, LB>& b, const fragment<accumulator, M, N, K, TC, void>& c,
                     bool satf = false) {
    using Acc = decltype(detail::widen(c.x[0]));
    Acc out[M * N];
    for (int i = 0; i < M * N; ++i) out[i] = detail::widen(c.x[i]);
    for (int i = 0; i < M; ++i)  // each sum runs k in order; the inner loop over j vectorises
        for (int k = 0; k < K; ++k) {
            const auto av = detail::tf32_input<TA>(detail::widen(a.x[i * K + k]));
            for (int j = 0; j < N; ++j) {
                const auto bv = detail::tf32_input<TB>(detail::widen(b.x[k * N + j]));
                if constexpr (std::is_same_v<Acc, double>) out[i * N + j] = fma(av, bv, out[i * N + j]);
                else out[i * N + j] += static_cast<Acc>(av * bv);
            }
        }
    using E = typename fragment<accumulator, M, N, K, TD, void>::element_type;
    for (int i = 0; i < M * N; ++i) {
        E e = detail::narrow<E>(out[i]);
        if constexpr (!std::is_integral_v<E>) {
            // satf (saturate to finite): +-inf -> +-the type's largest finite value, NaN -> +0
            const auto w = detail::widen(e);
            if (satf && w != w) e = detail::narrow<E>(decltype(w)(0));
            else if (satf && (w == std::numeric_limits<decltype(w)>::infinity() ||
                              w == -std::numeric_limits<decltype(w)>::infinity()))
                e = detail::narrow<E>(w > 0 ? detail::max_finite<E>() : -detail::max_finite<E>());
        }
        d.x[i] = e;
    }
}

// tf32 rounding (cvt.rna.tf32.f32: to nearest, ties away from zero; NaN and inf kept), in
// nvcuda::wmma as in CUDA (`wmma::__float_to_tf32(x)`)
inline float __float_to_tf32(float v) {
    uint32_t u = __builtin_bit_cast(uint32_t, v);
    if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u;
    return __builtin_bit_cast(float, u);
}

}  // namespace wmma
}  // namespace nvcuda

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
