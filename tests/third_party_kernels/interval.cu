// Origin: NVIDIA/cuda-samples @ c94ff366, Samples/2_Concepts_and_Techniques/interval/{interval.h,cuda_interval_rounded_arith.h,cuda_interval_lib.h,cuda_interval.h} (BSD-3-Clause, each carries the notice below); concatenated in include order, their #include "..." lines dropped.
/* Copyright (c) 2022, NVIDIA CORPORATION. All rights reserved.
 *
 * Redistribution and use in source and binary forms, with or without
 * modification, are permitted provided that the following conditions
 * are met:
 *  * Redistributions of source code must retain the above copyright
 *    notice, this list of conditions and the following disclaimer.
 *  * Redistributions in binary form must reproduce the above copyright
 *    notice, this list of conditions and the following disclaimer in the
 *    documentation and/or other materials provided with the distribution.
 *  * Neither the name of NVIDIA CORPORATION nor the names of its
 *    contributors may be used to endorse or promote products derived
 *    from this software without specific prior written permission.
 *
 * THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS ``AS IS'' AND ANY
 * EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
 * IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR
 * PURPOSE ARE DISCLAIMED.  IN NO EVENT SHALL THE COPYRIGHT OWNER OR
 * CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL,
 * EXEMPLARY, OR CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO,
 * PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES; LOSS OF USE, DATA, OR
 * PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY
 * OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT
 * (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE
 * OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
 */

#ifndef INTERVAL_H
#define INTERVAL_H

#define DEVICE   0
#define TYPE     double
#define NUM_RUNS (100)

typedef TYPE T;

int const BLOCK_SIZE   = 64;
int const GRID_SIZE    = 1024;
int const THREADS      = GRID_SIZE * BLOCK_SIZE;
int const DEPTH_RESULT = 128;

#define CHECKED_CALL(func)                                                                                            \
    do {                                                                                                              \
        cudaError_t err = (func);                                                                                     \
        if (err != cudaSuccess) {                                                                                     \
            printf(                                                                                                   \
                "%s(%d): ERROR: %s returned %s (err#%d)\n", __FILE__, __LINE__, #func, cudaGetErrorString(err), err); \
            exit(EXIT_FAILURE);                                                                                       \
        }                                                                                                             \
    } while (0)

#endif
// Type-specific implementation of rounded arithmetic operators.
// Thin layer over the CUDA intrinsics.

#ifndef CUDA_INTERVAL_ROUNDED_ARITH_H
#define CUDA_INTERVAL_ROUNDED_ARITH_H

// Generic class, no actual implementation yet
template <class T> struct rounded_arith
{
    __device__ T add_down(const T &x, const T &y);
    __device__ T add_up(const T &x, const T &y);
    __device__ T sub_down(const T &x, const T &y);
    __device__ T sub_up(const T &x, const T &y);
    __device__ T mul_down(const T &x, const T &y);
    __device__ T mul_up(const T &x, const T &y);
    __device__ T div_down(const T &x, const T &y);
    __device__ T div_up(const T &x, const T &y);
    __device__ T median(const T &x, const T &y);
    __device__ T sqrt_down(const T &x);
    __device__ T sqrt_up(const T &x);
    __device__ T int_down(const T &x);
    __device__ T int_up(const T &x);

    __device__ T          pos_inf();
    __device__ T          neg_inf();
    __device__ __host__ T nan();
    __device__ T          min(T const &x, T const &y);
    __device__ T          max(T const &x, T const &y);
};

// Specialization for float
template <> struct rounded_arith<float>
{
    __device__ float add_down(const float &x, const float &y) { return __fadd_rd(x, y); }

    __device__ float add_up(const float &x, const float &y) { return __fadd_ru(x, y); }

    __device__ float sub_down(const float &x, const float &y) { return __fadd_rd(x, -y); }

    __device__ float sub_up(const float &x, const float &y) { return __fadd_ru(x, -y); }

    __device__ float mul_down(const float &x, const float &y) { return __fmul_rd(x, y); }

    __device__ float mul_up(const float &x, const float &y) { return __fmul_ru(x, y); }

    __device__ float div_down(const float &x, const float &y) { return __fdiv_rd(x, y); }

    __device__ float div_up(const float &x, const float &y) { return __fdiv_ru(x, y); }

    __device__ float median(const float &x, const float &y) { return (x + y) * .5f; }

    __device__ float sqrt_down(const float &x) { return __fsqrt_rd(x); }

    __device__ float sqrt_up(const float &x) { return __fsqrt_ru(x); }

    __device__ float int_down(const float &x) { return floorf(x); }

    __device__ float int_up(const float &x) { return ceilf(x); }

    __device__ float neg_inf() { return __int_as_float(0xff800000); }

    __device__ float pos_inf() { return __int_as_float(0x7f800000); }

    __device__ __host__ float nan() { return nanf(""); }

    __device__ float min(float const &x, float const &y) { return fminf(x, y); }

    __device__ float max(float const &x, float const &y) { return fmaxf(x, y); }
};

// Specialization for double
template <> struct rounded_arith<double>
{
    __device__ double add_down(const double &x, const double &y) { return __dadd_rd(x, y); }

    __device__ double add_up(const double &x, const double &y) { return __dadd_ru(x, y); }

    __device__ double sub_down(const double &x, const double &y) { return __dadd_rd(x, -y); }

    __device__ double sub_up(const double &x, const double &y) { return __dadd_ru(x, -y); }

    __device__ double mul_down(const double &x, const double &y) { return __dmul_rd(x, y); }

    __device__ double mul_up(const double &x, const double &y) { return __dmul_ru(x, y); }

    __device__ double div_down(const double &x, const double &y) { return __ddiv_rd(x, y); }

    __device__ double div_up(const double &x, const double &y) { return __ddiv_ru(x, y); }
    __device__ double median(const double &x, const double &y) { return (x + y) * .5; }

    __device__ double sqrt_down(const double &x) { return __dsqrt_rd(x); }

    __device__ double sqrt_up(const double &x) { return __dsqrt_ru(x); }

    __device__ double int_down(const double &x) { return floor(x); }

    __device__ double int_up(const double &x) { return ceil(x); }

    __device__ double neg_inf() { return __longlong_as_double(0xfff0000000000000ull); }

    __device__ double          pos_inf() { return __longlong_as_double(0x7ff0000000000000ull); }
    __device__ __host__ double nan() { return ::nan(""); }

    __device__ double min(double const &x, double const &y) { return fmin(x, y); }

    __device__ double max(double const &x, double const &y) { return fmax(x, y); }
};

#endif
#ifndef CUDA_INTERVAL_LIB_H
#define CUDA_INTERVAL_LIB_H


// Interval template class and basic operations
// Interface inspired from the Boost Interval library (www.boost.org)

template <class T> class interval_gpu
{
public:
    __device__ __host__ interval_gpu();
    __device__ __host__ interval_gpu(T const &v);
    __device__ __host__ interval_gpu(T const &l, T const &u);

    __device__ __host__ T const &lower() const;
    __device__ __host__ T const &upper() const;

    static __device__ __host__ interval_gpu empty();

private:
    T low;
    T up;
};

// Constructors
template <class T> inline __device__ __host__ interval_gpu<T>::interval_gpu() {}

template <class T>
inline __device__ __host__ interval_gpu<T>::interval_gpu(T const &l, T const &u)
    : low(l)
    , up(u)
{
}

template <class T>
inline __device__ __host__ interval_gpu<T>::interval_gpu(T const &v)
    : low(v)
    , up(v)
{
}

template <class T> inline __device__ __host__ T const &interval_gpu<T>::lower() const { return low; }

template <class T> inline __device__ __host__ T const &interval_gpu<T>::upper() const { return up; }

template <class T> inline __device__ __host__ interval_gpu<T> interval_gpu<T>::empty()
{
    rounded_arith<T> rnd;
    return interval_gpu<T>(rnd.nan(), rnd.nan());
}

template <class T> inline __device__ __host__ bool empty(interval_gpu<T> x)
{
    T hash = x.lower() + x.upper();
    return (hash != hash);
}

template <class T> inline __device__ T width(interval_gpu<T> x)
{
    if (empty(x))
        return 0;

    rounded_arith<T> rnd;
    return rnd.sub_up(x.upper(), x.lower());
}

// Arithmetic operations

// Unary operators
template <class T> inline __device__ interval_gpu<T> const &operator+(interval_gpu<T> const &x) { return x; }

template <class T> inline __device__ interval_gpu<T> operator-(interval_gpu<T> const &x)
{
    return interval_gpu<T>(-x.upper(), -x.lower());
}

// Binary operators
template <class T> inline __device__ interval_gpu<T> operator+(interval_gpu<T> const &x, interval_gpu<T> const &y)
{
    rounded_arith<T> rnd;
    return interval_gpu<T>(rnd.add_down(x.lower(), y.lower()), rnd.add_up(x.upper(), y.upper()));
}

template <class T> inline __device__ interval_gpu<T> operator-(interval_gpu<T> const &x, interval_gpu<T> const &y)
{
    rounded_arith<T> rnd;
    return interval_gpu<T>(rnd.sub_down(x.lower(), y.upper()), rnd.sub_up(x.upper(), y.lower()));
}

inline __device__ float min4(float a, float b, float c, float d) { return fminf(fminf(a, b), fminf(c, d)); }

inline __device__ float max4(float a, float b, float c, float d) { return fmaxf(fmaxf(a, b), fmaxf(c, d)); }

inline __device__ double min4(double a, double b, double c, double d) { return fmin(fmin(a, b), fmin(c, d)); }

inline __device__ double max4(double a, double b, double c, double d) { return fmax(fmax(a, b), fmax(c, d)); }

template <class T> inline __device__ interval_gpu<T> operator*(interval_gpu<T> const &x, interval_gpu<T> const &y)
{
    // Textbook implementation: 14 flops, but no branch.
    rounded_arith<T> rnd;
    return interval_gpu<T>(min4(rnd.mul_down(x.lower(), y.lower()),
                                rnd.mul_down(x.lower(), y.upper()),
                                rnd.mul_down(x.upper(), y.lower()),
                                rnd.mul_down(x.upper(), y.upper())),
                           max4(rnd.mul_up(x.lower(), y.lower()),
                                rnd.mul_up(x.lower(), y.upper()),
                                rnd.mul_up(x.upper(), y.lower()),
                                rnd.mul_up(x.upper(), y.upper())));
}

// Center of an interval
// Typically used for bisection
template <class T> inline __device__ T median(interval_gpu<T> const &x)
{
    rounded_arith<T> rnd;
    return rnd.median(x.lower(), x.upper());
}

// Intersection between two intervals (can be empty)
template <class T> inline __device__ interval_gpu<T> intersect(interval_gpu<T> const &x, interval_gpu<T> const &y)
{
    rounded_arith<T> rnd;
    T const         &l = rnd.max(x.lower(), y.lower());
    T const         &u = rnd.min(x.upper(), y.upper());

    if (l <= u)
        return interval_gpu<T>(l, u);
    else
        return interval_gpu<T>::empty();
}

// Division by an interval which does not contain 0.
// GPU-optimized implementation assuming division is expensive
template <class T> inline __device__ interval_gpu<T> div_non_zero(interval_gpu<T> const &x, interval_gpu<T> const &y)
{
    rounded_arith<T>        rnd;
    typedef interval_gpu<T> I;
    T                       xl, yl, xu, yu;

    if (y.upper() < 0) {
        xl = x.upper();
        xu = x.lower();
    }
    else {
        xl = x.lower();
        xu = x.upper();
    }

    if (x.upper() < 0) {
        yl = y.lower();
        yu = y.upper();
    }
    else if (x.lower() < 0) {
        if (y.upper() < 0) {
            yl = y.upper();
            yu = y.upper();
        }
        else {
            yl = y.lower();
            yu = y.lower();
        }
    }
    else {
        yl = y.upper();
        yu = y.lower();
    }

    return I(rnd.div_down(xl, yl), rnd.div_up(xu, yu));
}

template <class T> inline __device__ interval_gpu<T> div_positive(interval_gpu<T> const &x, T const &yu)
{
    // assert(yu > 0);
    if (x.lower() == 0 && x.upper() == 0)
        return x;

    rounded_arith<T>        rnd;
    typedef interval_gpu<T> I;
    const T                &xl = x.lower();
    const T                &xu = x.upper();

    if (xu < 0)
        return I(rnd.neg_inf(), rnd.div_up(xu, yu));
    else if (xl < 0)
        return I(rnd.neg_inf(), rnd.pos_inf());
    else
        return I(rnd.div_down(xl, yu), rnd.pos_inf());
}

template <class T> inline __device__ interval_gpu<T> div_negative(interval_gpu<T> const &x, T const &yl)
{
    // assert(yu > 0);
    if (x.lower() == 0 && x.upper() == 0)
        return x;

    rounded_arith<T>        rnd;
    typedef interval_gpu<T> I;
    const T                &xl = x.lower();
    const T                &xu = x.upper();

    if (xu < 0)
        return I(rnd.div_down(xu, yl), rnd.pos_inf());
    else if (xl < 0)
        return I(rnd.neg_inf(), rnd.pos_inf());
    else
        return I(rnd.neg_inf(), rnd.div_up(xl, yl));
}

template <class T>
inline __device__ interval_gpu<T> div_zero_part1(interval_gpu<T> const &x, interval_gpu<T> const &y, bool &b)
{
    if (x.lower() == 0 && x.upper() == 0) {
        b = false;
        return x;
    }

    rounded_arith<T>        rnd;
    typedef interval_gpu<T> I;
    const T                &xl = x.lower();
    const T                &xu = x.upper();
    const T                &yl = y.lower();
    const T                &yu = y.upper();

    if (xu < 0) {
        b = true;
        return I(rnd.neg_inf(), rnd.div_up(xu, yu));
    }
    else if (xl < 0) {
        b = false;
        return I(rnd.neg_inf(), rnd.pos_inf());
    }
    else {
        b = true;
        return I(rnd.neg_inf(), rnd.div_up(xl, yl));
    }
}

template <class T> inline __device__ interval_gpu<T> div_zero_part2(interval_gpu<T> const &x, interval_gpu<T> const &y)
{
    rounded_arith<T>        rnd;
    typedef interval_gpu<T> I;
    const T                &xl = x.lower();
    const T                &xu = x.upper();
    const T                &yl = y.lower();
    const T                &yu = y.upper();

    if (xu < 0)
        return I(rnd.div_down(xu, yl), rnd.pos_inf());
    else
        return I(rnd.div_down(xl, yu), rnd.pos_inf());
}

template <class T>
inline __device__ interval_gpu<T> division_part1(interval_gpu<T> const &x, interval_gpu<T> const &y, bool &b)
{
    b = false;

    if (y.lower() <= 0 && y.upper() >= 0)
        if (y.lower() != 0)
            if (y.upper() != 0)
                return div_zero_part1(x, y, b);
            else
                return div_negative(x, y.lower());
        else if (y.upper() != 0)
            return div_positive(x, y.upper());
        else
            return interval_gpu<T>::empty();
    else
        return div_non_zero(x, y);
}

template <class T>
inline __device__ interval_gpu<T> division_part2(interval_gpu<T> const &x, interval_gpu<T> const &y, bool b = true)
{
    if (!b)
        return interval_gpu<T>::empty();

    return div_zero_part2(x, y);
}

template <class T> inline __device__ interval_gpu<T> square(interval_gpu<T> const &x)
{
    typedef interval_gpu<T> I;
    rounded_arith<T>        rnd;
    const T                &xl = x.lower();
    const T                &xu = x.upper();

    if (xl >= 0)
        return I(rnd.mul_down(xl, xl), rnd.mul_up(xu, xu));
    else if (xu <= 0)
        return I(rnd.mul_down(xu, xu), rnd.mul_up(xl, xl));
    else
        return I(static_cast<T>(0), rnd.max(rnd.mul_up(xl, xl), rnd.mul_up(xu, xu)));
}

#endif
#ifndef CUDA_INTERVAL_H
#define CUDA_INTERVAL_H


// Stack in local memory. Managed independently for each thread.
template <class T, int N> class local_stack
{
private:
    T   buf[N];
    int tos;

public:
    __device__ local_stack()
        : tos(-1)
    {
    }
    __device__ T const &top() const { return buf[tos]; }
    __device__ T       &top() { return buf[tos]; }
    __device__ void     push(T const &v) { buf[++tos] = v; }
    __device__ T        pop() { return buf[tos--]; }
    __device__ bool     full() { return tos == (N - 1); }
    __device__ bool     empty() { return tos == -1; }
};

// Stacks in global memory.
// Same function as local_stack, but accessible from the host.
// Interleaved between threads by blocks of THREADS elements.
// Independent stack for each thread, no sharing of data between threads.
template <class T, int N, int THREADS> class global_stack
{
private:
    T  *buf;
    int free_index;

public:
    // buf should point to an allocated global buffer of
    // size N * THREADS * sizeof(T)
    __device__ global_stack(T *buf, int thread_id)
        : buf(buf)
        , free_index(thread_id)
    {
    }

    __device__ void push(T const &v)
    {
        buf[free_index] = v;
        free_index += THREADS;
    }
    __device__ T pop()
    {
        free_index -= THREADS;
        return buf[free_index];
    }
    __device__ bool full() { return free_index >= N * THREADS; }
    __device__ bool empty() { return free_index < THREADS; }
    __device__ int  size() { return free_index / THREADS; }
};

// The function F of which we want to find roots, defined on intervals
// Should typically depend on thread_id (indexing an array of coefficients...)
template <class T> __device__ interval_gpu<T> f(interval_gpu<T> const &x, int thread_id)
{
    typedef interval_gpu<T> I;
    T                       alpha = -T(thread_id) / T(THREADS);
    return square(x - I(1)) + I(alpha) * x;
}

// First derivative of F, also defined on intervals
template <class T> __device__ interval_gpu<T> fd(interval_gpu<T> const &x, int thread_id)
{
    typedef interval_gpu<T> I;
    T                       alpha = -T(thread_id) / T(THREADS);
    return I(2) * x + I(alpha - 2);
}

// Is this interval small enough to stop iterating?
template <class T> __device__ bool is_minimal(interval_gpu<T> const &x, int thread_id)
{
    T const epsilon_x = 1e-6f;
    T const epsilon_y = 1e-6f;
    return !empty(x) && (width(x) <= epsilon_x * abs(median(x)) || width(f(x, thread_id)) <= epsilon_y);
}

// In some cases, Newton iterations converge slowly.
// Bisecting the interval accelerates convergence.
template <class T>
__device__ bool should_bisect(interval_gpu<T> const &x, interval_gpu<T> const &x1, interval_gpu<T> const &x2, T alpha)
{
    T wmax = alpha * width(x);
    return (!empty(x1) && width(x1) > wmax) || (!empty(x2) && width(x2) > wmax);
}

// Main interval Newton loop.
// Keep refining a list of intervals stored in a stack.
// Always keep the next interval to work on in registers
// (avoids excessive spilling to local mem)
template <class T, int THREADS, int DEPTH_RESULT>
__device__ void
newton_interval(global_stack<interval_gpu<T>, DEPTH_RESULT, THREADS> &result, interval_gpu<T> const &ix0, int thread_id)
{
    typedef interval_gpu<T> I;
    int const               DEPTH_WORK = 128;

    T const alpha = .99f; // Threshold before switching to bisection

    // Intervals to be processed
    local_stack<I, DEPTH_WORK> work;

    // We start with the whole domain
    I ix = ix0;

    while (true) {
        // Compute (x - F({x})/F'(ix)) inter ix
        // -> may yield 0, 1 or 2 intervals
        T x  = median(ix);
        I iq = f(I(x), thread_id);
        I id = fd(ix, thread_id);

        bool has_part2;
        I    part1, part2 = I::empty();
        part1 = division_part1(iq, id, has_part2);
        part1 = intersect(I(x) - part1, ix);

        if (has_part2) {
            part2 = division_part2(iq, id);
            part2 = intersect(I(x) - part2, ix);
        }

        // Do we have small-enough intervals?
        if (is_minimal(part1, thread_id)) {
            result.push(part1);
            part1 = I::empty();
        }

        if (has_part2 && is_minimal(part2, thread_id)) {
            result.push(part2);
            part2 = I::empty();
        }

        if (should_bisect(ix, part1, part2, alpha)) {
            // Not so good improvement
            // Switch to bisection method for this step
            part1     = I(ix.lower(), x);
            part2     = I(x, ix.upper());
            has_part2 = true;
        }

        if (!empty(part1)) {
            // At least 1 solution
            // We will compute part1 next
            ix = part1;

            if (has_part2 && !empty(part2)) {
                // 2 solutions
                // Save the second solution for later
                work.push(part2);
            }
        }
        else if (has_part2 && !empty(part2)) {
            // 1 solution
            // Work on that next
            ix = part2;
        }
        else {
            // No solution
            // Do we still have work to do in the stack?
            if (work.empty()) // If not, we are done
                break;
            else
                ix = work.pop(); // Otherwise, pick an interval to work on
        }
    }
}

// Recursive implementation
template <class T, int THREADS, int DEPTH_RESULT>
__device__ void newton_interval_rec(global_stack<interval_gpu<T>, DEPTH_RESULT, THREADS> &result,
                                    interval_gpu<T> const                                &ix,
                                    int                                                   thread_id)
{
    typedef interval_gpu<T> I;
    T const                 alpha = .99f; // Threshold before switching to bisection

    if (is_minimal(ix, thread_id)) {
        result.push(ix);
        return;
    }

    // Compute (x - F({x})/F'(ix)) inter ix
    // -> may yield 0, 1 or 2 intervals
    T x  = median(ix);
    I iq = f(I(x), thread_id);
    I id = fd(ix, thread_id);

    bool has_part2;
    I    part1, part2 = I::empty();
    part1 = division_part1(iq, id, has_part2);
    part1 = intersect(I(x) - part1, ix);

    if (has_part2) {
        part2 = division_part2(iq, id);
        part2 = intersect(I(x) - part2, ix);
    }

    if (should_bisect(ix, part1, part2, alpha)) {
        // Not so good improvement
        // Switch to bisection method for this step
        part1     = I(ix.lower(), x);
        part2     = I(x, ix.upper());
        has_part2 = true;
    }

    if (has_part2 && !empty(part2)) {
        newton_interval_rec<T, THREADS, DEPTH_RESULT>(result, part2, thread_id);
    }

    if (!empty(part1)) {
        newton_interval_rec<T, THREADS, DEPTH_RESULT>(result, part1, thread_id);
    }
}

// Naive implementation, no attempt to keep the top of the stack in registers
template <class T, int THREADS, int DEPTH_RESULT>
__device__ void newton_interval_naive(global_stack<interval_gpu<T>, DEPTH_RESULT, THREADS> &result,
                                      interval_gpu<T> const                                &ix0,
                                      int                                                   thread_id)
{
    typedef interval_gpu<T> I;
    int const               DEPTH_WORK = 128;
    T const                 alpha      = .99f; // Threshold before switching to bisection

    // Intervals to be processed
    local_stack<I, DEPTH_WORK> work;

    // We start with the whole domain
    work.push(ix0);

    while (!work.empty()) {
        I ix = work.pop();

        if (is_minimal(ix, thread_id)) {
            result.push(ix);
        }
        else {
            // Compute (x - F({x})/F'(ix)) inter ix
            // -> may yield 0, 1 or 2 intervals
            T x  = median(ix);
            I iq = f(I(x), thread_id);
            I id = fd(ix, thread_id);

            bool has_part2;
            I    part1, part2 = I::empty();
            part1 = division_part1(iq, id, has_part2);
            part1 = intersect(I(x) - part1, ix);

            if (has_part2) {
                part2 = division_part2(iq, id);
                part2 = intersect(I(x) - part2, ix);
            }

            if (should_bisect(ix, part1, part2, alpha)) {
                // Not so good improvement
                // Switch to bisection method for this step
                part1     = I(ix.lower(), x);
                part2     = I(x, ix.upper());
                has_part2 = true;
            }

            if (!empty(part1)) {
                work.push(part1);
            }

            if (has_part2 && !empty(part2)) {
                work.push(part2);
            }
        }
    }
}

template <class T>
__global__ void
test_interval_newton(interval_gpu<T> *buffer, int *nresults, interval_gpu<T> i, int implementation_choice)
{
    int                     thread_id = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    typedef interval_gpu<T> I;

    // Intervals to return
    global_stack<I, DEPTH_RESULT, THREADS> result(buffer, thread_id);

    switch (implementation_choice) {
    case 0:
        newton_interval_naive<T, THREADS>(result, i, thread_id);
        break;

    case 1:
        newton_interval<T, THREADS>(result, i, thread_id);
        break;

#if (__CUDA_ARCH__ >= 200)

    case 2:
        newton_interval_rec<T, THREADS>(result, i, thread_id);
        break;
#endif

    default:
        newton_interval_naive<T, THREADS>(result, i, thread_id);
    }

    nresults[thread_id] = result.size();
}

#endif
