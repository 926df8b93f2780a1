#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// emu_shifts.h -- integer shifts with a GPU's result for any count.
//
// C++ leaves `x << n` and `x >> n` undefined when n is negative or not below the width of x's
// promoted type. PTX shl/shr clamp the count to the width, so on a GPU such a shift gives 0 (or, for
// >> of a negative signed value, all sign bits: -1); x86 takes the count modulo 32 or 64. The loader
// (compiler.py, _rewrite_shifts) turns each shift of the user's code whose operands it can delimit
// for certain into these calls. They are constexpr (shifts appear in template arguments, array
// bounds, case labels) and branch-free after inlining; a class type's operator<< / >> (a stream, a
// proxy) is called as written.
#pragma once
#include <type_traits>

namespace __emu {
template <class T> using shift_plain_t = std::remove_cv_t<std::remove_reference_t<T>>;

template <class A, class B>
__attribute__((always_inline)) constexpr bool shift_in_range(const B& b) {
    using P = decltype(std::declval<shift_plain_t<A>>() << std::declval<shift_plain_t<B>>());
    if constexpr (std::is_signed_v<shift_plain_t<B>>)
        if (b < 0) return false;   // read as unsigned by shl/shr: beyond any width
    return static_cast<unsigned long long>(b) < sizeof(P) * 8ull;
}

template <class A, class B>
__attribute__((always_inline)) constexpr decltype(auto) shl(A&& a, B&& b) {
    using TA = shift_plain_t<A>;
    using TB = shift_plain_t<B>;
    if constexpr (std::is_integral_v<TA> && std::is_integral_v<TB>) {
        using P = decltype(std::declval<TA>() << std::declval<TB>());
        return shift_in_range<A, B>(b) ? static_cast<P>(static_cast<P>(a) << b) : P(0);
    } else {
        return static_cast<A&&>(a) << static_cast<B&&>(b);
    }
}

template <class A, class B>
__attribute__((always_inline)) constexpr decltype(auto) shr(A&& a, B&& b) {
    using TA = shift_plain_t<A>;
    using TB = shift_plain_t<B>;
    if constexpr (std::is_integral_v<TA> && std::is_integral_v<TB>) {
        using P = decltype(std::declval<TA>() >> std::declval<TB>());
        if (shift_in_range<A, B>(b)) return static_cast<P>(static_cast<P>(a) >> b);
        if constexpr (std::is_signed_v<P>) return static_cast<P>(a) < 0 ? P(-1) : P(0);
        return P(0);
    } else {
        return static_cast<A&&>(a) >> static_cast<B&&>(b);
    }
}

template <class A, class B>
__attribute__((always_inline)) constexpr decltype(auto) shl_assign(A&& a, B&& b) {
    if constexpr (std::is_integral_v<shift_plain_t<A>> && std::is_integral_v<shift_plain_t<B>>) {
        a = static_cast<shift_plain_t<A>>(shl(a, b));
        return static_cast<A&&>(a);
    } else {
        return static_cast<A&&>(a) <<= static_cast<B&&>(b);
    }
}

template <class A, class B>
__attribute__((always_inline)) constexpr decltype(auto) shr_assign(A&& a, B&& b) {
    if constexpr (std::is_integral_v<shift_plain_t<A>> && std::is_integral_v<shift_plain_t<B>>) {
        a = static_cast<shift_plain_t<A>>(shr(a, b));
        return static_cast<A&&>(a);
    } else {
        return static_cast<A&&>(a) >>= static_cast<B&&>(b);
    }
}
}  // namespace __emu

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
