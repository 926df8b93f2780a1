#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// cuda_emu.h -- host (CPU) emulation of the CUDA C++ device language for aclnn_py.
//
// The loader (aclnn_py/emulator/compiler.py) compiles a generated translation unit
//     #include "cuda_emu.h"   <- this file: std headers, then the CUDA surface
//     <the kernel source, user includes inlined, `extern __shared__` rewritten>
//     <one registration per kernel / name expression>
// with `g++ -std=c++20 -O2 -fPIC -shared -pthread -fno-strict-aliasing -fvisibility=hidden`.
//
// Execution model
//  * One block runs at a time on an OS thread; blocks are spread over a small pthread pool.
//  * A kernel that (per the loader's static scan) may reach a barrier or a warp collective runs
//    each CUDA thread as a fiber (own stack, x86-64 asm context switch, ucontext elsewhere);
//    all other kernels run as a plain loop over the block's threads (no fibers).
//  * __syncthreads is a barrier of the block's live (non-exited) threads, with a strict
//    same-call-site check; warp collectives gather all lanes named in the mask and compute the
//    results in one step. Deadlocks and misuse are reported as errors, never hangs.
//
// Rules chosen where CUDA leaves things undefined (the emulator is stricter than a GPU):
//  * a warp is 32 consecutive linear thread ids of the block; in a partial last warp the missing
//    lanes do not exist: a mask naming them (0xffffffff) is accepted, they are not waited for, and
//    a shuffle whose source lane does not exist -- or is outside the segment, or not in the mask --
//    returns the caller's own value;
//  * a collective completes when every existing lane named in the mask has arrived; errors: a
//    named lane has exited, the caller is not in its own mask, lanes named in one mask arrive at
//    different collectives (kind, operand size or width), a named lane waits at a barrier;
//  * __syncthreads: threads of one barrier round must arrive from the same call site; exited
//    threads drop out (PTX semantics); no runnable thread left -> "deadlock" error; a thread that
//    keeps spinning on warp collectives / __nanosleep (ACLNN_PY_EMU_SPIN_LIMIT, default 2^20)
//    while the rest of the block waits at a barrier or cannot run -> "livelock" error (see
//    spin_check for the timing rules);
//  * dynamic shared memory is filled with 0xFF bytes (NaN) before every block; static __shared__
//    variables are per-OS-thread `thread_local`s and are NOT re-poisoned between blocks;
//  * a spin-wait on memory without any warp collective or __nanosleep never yields and hangs (as
//    it may on a GPU).
// Environment: ACLNN_PY_EMU_THREADS (block pool size, default min(CPUs, 8)), ACLNN_PY_EMU_STACK_KB
// (fiber stack, default 128), ACLNN_PY_EMU_FORCE_FIBERS=1 (no plain-loop kernels),
// ACLNN_PY_EMU_SPIN_LIMIT, ACLNN_PY_EMU_SPIN_TIMEOUT_S.
//
// Macros: __EMU_CPU__ is defined (1). __CUDA_ARCH__ (the -arch the user gives, default 800) and
// __CUDACC__ are defined at the END of this header, as NVRTC defines them, so user code takes its
// device paths; __NVCC__ and __CUDACC_RTC__ are not defined.
#ifndef ACLNN_PY_CUDA_EMU_H
#define ACLNN_PY_CUDA_EMU_H

#if !defined(__cplusplus) || __cplusplus < 202002L
#error "cuda_emu.h needs C++20 (g++ -std=c++20)"
#endif
#if defined(__CUDA_ARCH__)
#error "the CPU emulator must be compiled without __CUDA_ARCH__"
#endif

// ---------------------------------------------------------------------------------------------
// 1. Every standard header first: libstdc++ uses __attribute__((__noinline__)) & co, so no CUDA
//    keyword macro may be defined before them.
// ---------------------------------------------------------------------------------------------
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <cstdarg>
// libstdc++'s <math.h> puts C++20's std::lerp in the global namespace, where CUDA code defines its
// own (llm.c, helper_math.h): an ambiguous call. Under this name it stays out of the user's way.
#define lerp __emu_std_lerp
#include <cmath>
#include <math.h>
#undef lerp
#include <cfenv>
#include <climits>
#include <cfloat>
#include <cassert>
#include <cerrno>
#include <ctime>
#include <new>
#include <limits>
#include <utility>
#include <tuple>
#include <type_traits>
#include <initializer_list>
#include <atomic>
#include <algorithm>
#include <sys/mman.h>
#include <unistd.h>
#include <sched.h>
#include <pthread.h>
#include <time.h>
#include <setjmp.h>
#include <signal.h>
#include "emu_rt.h"
#if !defined(__x86_64__) || defined(EMU_USE_UCONTEXT)
#include <ucontext.h>
#endif

#define __EMU_CPU__ 1

// ---------------------------------------------------------------------------------------------
// 2. CUDA keywords
// ---------------------------------------------------------------------------------------------
#pragma GCC diagnostic ignored "-Wattributes"
#define __global__ __attribute__((__emu_global__)) /* marker for the loader; ignored by g++ */
#define __device__
#define __host__
#define __forceinline__ __inline__ __attribute__((always_inline)) /* the loader retries as plain inline if g++ cannot */
#define __noinline__ /* empty: keeps a later __attribute__((__noinline__)) in std headers valid */
#define __launch_bounds__(...)
#define __maxnreg__(...)       /* CUDA 12.4: a register limit, nothing to the emulator */
#define __cluster_dims__(...)  /* thread-block clusters: the cluster API is reported (no cluster_group) */
#define __align__(n) __attribute__((aligned(n)))
#define __builtin_align__(n) __attribute__((aligned(n)))
#define __constant__ __attribute__((used)) /* kept and never constant-folded: set from the host */
#define __managed__
#define __grid_constant__
#define __device_builtin__
// __shared__: block scope (implies static), one block per OS thread. 16-byte aligned as a GPU lays
// static shared arrays out in practice: kernels load float4s from float arrays through a cast (llm.c's
// matmul_forward_kernel4), which g++ may compile to an aligned SSE load (a float array got 4 bytes).
#define __shared__ thread_local __attribute__((aligned(16)))
#define __CUDA_ALIGN__(n) __attribute__((aligned(n)))
#ifndef __builtin_assume
#define __builtin_assume(x) ((void)0)
#endif

// ---------------------------------------------------------------------------------------------
// 3. Vector types (CUDA's sizes and alignments) and dim3
// ---------------------------------------------------------------------------------------------
#define EMU_VEC1(T, N) struct N##1 { T x; };
#define EMU_VEC2(T, N, A) struct __attribute__((aligned(A))) N##2 { T x, y; };
#define EMU_VEC2N(T, N) struct N##2 { T x, y; };
#define EMU_VEC3(T, N) struct N##3 { T x, y, z; };
#define EMU_VEC4(T, N, A) struct __attribute__((aligned(A))) N##4 { T x, y, z, w; };
#define EMU_VEC4N(T, N) struct N##4 { T x, y, z, w; };
EMU_VEC1(signed char, char) EMU_VEC2(signed char, char, 2) EMU_VEC3(signed char, char) EMU_VEC4(signed char, char, 4)
EMU_VEC1(unsigned char, uchar) EMU_VEC2(unsigned char, uchar, 2) EMU_VEC3(unsigned char, uchar) EMU_VEC4(unsigned char, uchar, 4)
EMU_VEC1(short, short) EMU_VEC2(short, short, 4) EMU_VEC3(short, short) EMU_VEC4(short, short, 8)
EMU_VEC1(unsigned short, ushort) EMU_VEC2(unsigned short, ushort, 4) EMU_VEC3(unsigned short, ushort) EMU_VEC4(unsigned short, ushort, 8)
EMU_VEC1(int, int) EMU_VEC2(int, int, 8) EMU_VEC3(int, int) EMU_VEC4(int, int, 16)
EMU_VEC1(unsigned int, uint) EMU_VEC2(unsigned int, uint, 8) EMU_VEC3(unsigned int, uint) EMU_VEC4(unsigned int, uint, 16)
EMU_VEC1(long, long) EMU_VEC2(long, long, 16) EMU_VEC3(long, long) EMU_VEC4(long, long, 16)
EMU_VEC1(unsigned long, ulong) EMU_VEC2(unsigned long, ulong, 16) EMU_VEC3(unsigned long, ulong) EMU_VEC4(unsigned long, ulong, 16)
EMU_VEC1(long long, longlong) EMU_VEC2(long long, longlong, 16) EMU_VEC3(long long, longlong) EMU_VEC4(long long, longlong, 16)
EMU_VEC1(unsigned long long, ulonglong) EMU_VEC2(unsigned long long, ulonglong, 16) EMU_VEC3(unsigned long long, ulonglong) EMU_VEC4(unsigned long long, ulonglong, 16)
EMU_VEC1(float, float) EMU_VEC2(float, float, 8) EMU_VEC3(float, float) EMU_VEC4(float, float, 16)
EMU_VEC1(double, double) EMU_VEC2(double, double, 16) EMU_VEC3(double, double) EMU_VEC4(double, double, 16)
struct __attribute__((aligned(16))) long4_16a { long x, y, z, w; };
struct __attribute__((aligned(32))) long4_32a { long x, y, z, w; };
struct __attribute__((aligned(16))) ulong4_16a { unsigned long x, y, z, w; };
struct __attribute__((aligned(32))) ulong4_32a { unsigned long x, y, z, w; };
struct __attribute__((aligned(16))) longlong4_16a { long long x, y, z, w; };
struct __attribute__((aligned(32))) longlong4_32a { long long x, y, z, w; };
struct __attribute__((aligned(16))) ulonglong4_16a { unsigned long long x, y, z, w; };
struct __attribute__((aligned(32))) ulonglong4_32a { unsigned long long x, y, z, w; };
struct __attribute__((aligned(16))) double4_16a { double x, y, z, w; };
struct __attribute__((aligned(32))) double4_32a { double x, y, z, w; };
#undef EMU_VEC1
#undef EMU_VEC2
#undef EMU_VEC2N
#undef EMU_VEC3
#undef EMU_VEC4
#undef EMU_VEC4N

#define EMU_MK1(N, T) static inline N##1 make_##N##1(T x) { N##1 r; r.x = x; return r; }
#define EMU_MK2(N, T) static inline N##2 make_##N##2(T x, T y) { N##2 r; r.x = x; r.y = y; return r; }
#define EMU_MK3(N, T) static inline N##3 make_##N##3(T x, T y, T z) { N##3 r; r.x = x; r.y = y; r.z = z; return r; }
#define EMU_MK4(N, T) static inline N##4 make_##N##4(T x, T y, T z, T w) { N##4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }
#define EMU_MKALL(N, T) EMU_MK1(N, T) EMU_MK2(N, T) EMU_MK3(N, T) EMU_MK4(N, T)
EMU_MKALL(char, signed char) EMU_MKALL(uchar, unsigned char) EMU_MKALL(short, short) EMU_MKALL(ushort, unsigned short)
EMU_MKALL(int, int) EMU_MKALL(uint, unsigned int) EMU_MKALL(long, long) EMU_MKALL(ulong, unsigned long)
EMU_MKALL(longlong, long long) EMU_MKALL(ulonglong, unsigned long long) EMU_MKALL(float, float) EMU_MKALL(double, double)
#define EMU_MK4A(N, T) static inline N make_##N(T x, T y, T z, T w) { N r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }
EMU_MK4A(long4_16a, long) EMU_MK4A(long4_32a, long) EMU_MK4A(ulong4_16a, unsigned long) EMU_MK4A(ulong4_32a, unsigned long)
EMU_MK4A(longlong4_16a, long long) EMU_MK4A(longlong4_32a, long long) EMU_MK4A(ulonglong4_16a, unsigned long long)
EMU_MK4A(ulonglong4_32a, unsigned long long) EMU_MK4A(double4_16a, double) EMU_MK4A(double4_32a, double)
#undef EMU_MK1
#undef EMU_MK2
#undef EMU_MK3
#undef EMU_MK4
#undef EMU_MKALL
#undef EMU_MK4A

struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};

// ---------------------------------------------------------------------------------------------
// 4. The runtime: fibers, block scheduler, barrier, warp collectives, thread pool
// ---------------------------------------------------------------------------------------------
#ifndef ACLNN_EMU_CUDA_ARCH  // the -arch the user targets (the compiler passes it; see the end of the file)
#define ACLNN_EMU_CUDA_ARCH 800
#endif
namespace __emu {

enum : unsigned char { ST_READY = 0, ST_BAR = 1, ST_WARP = 2, ST_EXITED = 3, ST_AMASK = 4, ST_GRID = 5 };

enum : unsigned char {
    OP_NONE = 0, OP_SYNCWARP, OP_SHFL_IDX, OP_SHFL_UP, OP_SHFL_DOWN, OP_SHFL_XOR, OP_BALLOT, OP_ANY,
    OP_ALL, OP_MATCH_ANY, OP_MATCH_ALL, OP_RED_ADD, OP_RED_MIN, OP_RED_MAX, OP_RED_UMIN, OP_RED_UMAX,
    OP_RED_AND, OP_RED_OR, OP_RED_XOR, OP_UNI, OP_COUNT
};

static inline const char* op_name(unsigned op) {
    static const char* const names[] = {"?", "__syncwarp", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
        "__shfl_xor_sync", "__ballot_sync", "__any_sync", "__all_sync", "__match_any_sync", "__match_all_sync",
        "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync", "__reduce_min_sync", "__reduce_max_sync",
        "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync", "__uni_sync"};
    return op < OP_COUNT ? names[op] : "?";
}
static inline const char* bar_name(int kind) {
    static const char* const names[] = {"__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or"};
    return names[kind & 3];
}
static inline const char* base_name(const char* file) {
    if (!file) return "?";
    const char* s = strrchr(file, '/');
    return s ? s + 1 : file;
}

// ---- context switch ------------------------------------------------------------------------
#if defined(__x86_64__) && !defined(EMU_USE_UCONTEXT)
#define EMU_ASM_SWITCH 1
struct Ctx { void* sp; };
extern "C" void __emu_ctx_switch(void** save_sp, void* new_sp);
extern "C" void __emu_ctx_trampoline();
// Saves the callee-saved registers, MXCSR and the x87 control word on the current stack, stores
// the stack pointer in *save_sp, switches to new_sp and restores the same from there.
__asm__(
    ".text\n"
    ".globl __emu_ctx_switch\n"
    ".hidden __emu_ctx_switch\n"
    ".type __emu_ctx_switch,@function\n"
    ".p2align 4\n"
    "__emu_ctx_switch:\n"
    "    pushq %rbp\n"
    "    pushq %rbx\n"
    "    pushq %r12\n"
    "    pushq %r13\n"
    "    pushq %r14\n"
    "    pushq %r15\n"
    "    subq $8, %rsp\n"
    "    stmxcsr (%rsp)\n"
    "    fnstcw 4(%rsp)\n"
    "    movq %rsp, (%rdi)\n"
    "    movq %rsi, %rsp\n"
    "    ldmxcsr (%rsp)\n"
    "    fldcw 4(%rsp)\n"
    "    addq $8, %rsp\n"
    "    popq %r15\n"
    "    popq %r14\n"
    "    popq %r13\n"
    "    popq %r12\n"
    "    popq %rbx\n"
    "    popq %rbp\n"
    "    ret\n"
    ".size __emu_ctx_switch, .-__emu_ctx_switch\n"
    ".globl __emu_ctx_trampoline\n"
    ".hidden __emu_ctx_trampoline\n"
    ".type __emu_ctx_trampoline,@function\n"
    ".p2align 4\n"
    "__emu_ctx_trampoline:\n"
    "    .cfi_startproc\n"
    "    .cfi_undefined rip\n"
    "    movq %r12, %rdi\n"
    "    callq *%r13\n"
    "    ud2\n"
    "    .cfi_endproc\n"
    ".size __emu_ctx_trampoline, .-__emu_ctx_trampoline\n");
static inline void ctx_swap(Ctx* from, Ctx* to) { __emu_ctx_switch(&from->sp, to->sp); }
static inline void ctx_make(Ctx* c, unsigned char* stack_lo, size_t len, void (*entry)(void*), void* arg) {
    uintptr_t top = (reinterpret_cast<uintptr_t>(stack_lo) + len) & ~static_cast<uintptr_t>(15);
    uint64_t* sp = reinterpret_cast<uint64_t*>(top - 64);
    uint32_t mx;
    uint16_t cw;
    __asm__ volatile("stmxcsr %0" : "=m"(mx));
    __asm__ volatile("fnstcw %0" : "=m"(cw));
    sp[0] = static_cast<uint64_t>(mx) | (static_cast<uint64_t>(cw) << 32);
    sp[1] = 0;                                           // r15
    sp[2] = 0;                                           // r14
    sp[3] = reinterpret_cast<uint64_t>(entry);           // r13
    sp[4] = reinterpret_cast<uint64_t>(arg);             // r12
    sp[5] = 0;                                           // rbx
    sp[6] = 0;                                           // rbp
    sp[7] = reinterpret_cast<uint64_t>(&__emu_ctx_trampoline);  // return address
    c->sp = sp;
}
#else
struct Ctx { ucontext_t uc; };
static inline void ctx_swap(Ctx* from, Ctx* to) { swapcontext(&from->uc, &to->uc); }
static void ctx_entry_uc(unsigned hi, unsigned lo, unsigned ehi, unsigned elo) {
    void* arg = reinterpret_cast<void*>((static_cast<uintptr_t>(hi) << 32) | lo);
    auto entry = reinterpret_cast<void (*)(void*)>((static_cast<uintptr_t>(ehi) << 32) | elo);
    entry(arg);
    abort();
}
static inline void ctx_make(Ctx* c, unsigned char* stack_lo, size_t len, void (*entry)(void*), void* arg) {
    getcontext(&c->uc);
    c->uc.uc_stack.ss_sp = stack_lo;
    c->uc.uc_stack.ss_size = len;
    c->uc.uc_link = nullptr;
    uintptr_t a = reinterpret_cast<uintptr_t>(arg), e = reinterpret_cast<uintptr_t>(entry);
    makecontext(&c->uc, reinterpret_cast<void (*)()>(ctx_entry_uc), 4, static_cast<unsigned>(a >> 32),
                static_cast<unsigned>(a), static_cast<unsigned>(e >> 32), static_cast<unsigned>(e));
}
#endif

// ---- data structures -----------------------------------------------------------------------
struct Launch;

struct Fiber {
    Ctx ctx;
    unsigned char* map = nullptr;  // mmap base (guard page first)
    size_t map_len = 0;
    uint3 tid;
    unsigned linear = 0;
    unsigned char state = ST_EXITED;
    bool parked = false;  // suspended at the top of its loop: can start a new CUDA thread
    unsigned char cop = 0;
    int carg = 0;
    // where the thread last passed a statement convergence point (stmt_tick): (pass << 32) | point
    // number; 0 after a barrier and at the thread's start (see stmt_tick). On the cache line of
    // `state`, which a barrier's release writes too.
    uint64_t tick = 0;
    uint64_t cval = 0, cres = 0;
    uint64_t gwait = 0;  // the grid-barrier generation it waits on (state ST_GRID)
    const char* cfile = nullptr;
    int cline = 0;
    unsigned spin = 0;      // warp collectives / __nanosleep since the last barrier arrival
    int64_t spin_t0 = 0;    // when a possible livelock was first seen (other blocks running)
    int bar_res = 0;
    unsigned loop = 0;      // the warp-code loop it last ticked in and has not left (see loop_exit)
    unsigned branch[4] = {};   // the `if`s of volatile warp code it is inside, innermost last (branch_guard)
    uint64_t bstamp[4] = {};   // when it entered each (Executor::bseq)
    uint64_t bleft = 0;        // when it last left one
    unsigned bdepth = 0;       // how many (deeper ones than 4 are counted, not kept)
    int64_t help_t0 = 0;    // when its spin-wait last considered starting a pending block (help_pending_blocks)
    unsigned help_spin = 0; // its `spin` count then (a smaller one since: the spin began again)
};

struct Group {
    uint32_t mask, given, arrived;
    unsigned char op, size;
    int width;
    const char* file;
    int line;
};

struct Warp {
    uint32_t exist, exited, waiting;
    int ngroups;
    Group g[32];
};

struct ThreadStop {};  // unwinds a plain-loop thread after an error was recorded

struct Executor {  // per OS thread (and per module): fibers, stacks, block state
    Fiber* fibers = nullptr;
    unsigned nfib = 0;
    Ctx sched;
    Warp* warps = nullptr;
    unsigned nthreads = 0, live = 0, bar_count = 0, bar_acc = 0, bar_first = 0;
    int bar_kind = 0, bar_line = 0, bar_result = 0;
    const char* bar_file = nullptr;
    bool aborted = false;
    bool bar_released = false;  // a block barrier was released since the scheduler last looked: rescan from thread 0
    Launch* L = nullptr;
    uint3 bid;
    uint3 tid_dims{0, 0, 0};
    unsigned grid_waiting = 0;  // threads of this block waiting in grid.sync()
    unsigned char* dsmem = nullptr;
    size_t dsmem_len = 0;
    // statement convergence points (stmt_tick): bumped whenever a waiting thread becomes runnable; the
    // last full check found no runnable thread behind (go_key, go_next - 1) while ready_gen was go_gen.
    // (Last: in front of dsmem they made a kernel with barriers and no such point 8% slower.)
    uint64_t ready_gen = 0, go_gen = ~0ull, go_key = 0;
    unsigned go_next = ~0u;
    uint64_t bseq = 0;   // a clock for the `if`s of volatile warp code (branch_guard): entries and exits
    ~Executor();
};

struct Launch {
    const char* name;
    void (*thread_fn)(const void* args);
    void (*block_fn)(const void* args);
    const void* args;
    uint3 grid, block;
    size_t shmem;
    unsigned nthreads;
    uint64_t nblocks;
    bool fibers;
    unsigned spin_limit;
    // the next block to claim, on a cache line of its own: every claim writes it, and a line shared
    // with what the pool's threads read per block (failed) bounced between cores on every block
    alignas(64) std::atomic<uint64_t> next{0};
    uint64_t chunk = 1;             // blocks claimed at once (plain-loop launches, see run_blocks)
    alignas(64) std::atomic<int> active{0};  // fiber blocks running right now (spin_check)
    std::atomic<int> failed{0};
    char msg[4096];
    // the reported error is the one of the lowest-numbered failing block, whatever ran first on the
    // pool's threads: the same message on every run and every machine
    pthread_mutex_t em = PTHREAD_MUTEX_INITIALIZER;
    uint64_t failed_block = ~uint64_t(0);
    // cooperative launches (grid.sync): every block on its own OS thread, all resident at once
    bool coop = false;
    pthread_mutex_t gm = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t gcv = PTHREAD_COND_INITIALIZER;
    uint64_t grid_live = 0, grid_arrived = 0, grid_gen = 0;
    // the OS threads running blocks of this launch (the watchdog signals them)
    pthread_mutex_t tm = PTHREAD_MUTEX_INITIALIZER;
    pthread_t* thr = nullptr;
    unsigned char* thr_live = nullptr;
    unsigned nthr = 0, maxthr = 0;
    volatile int cancel = 0;
    double watchdog_s = 0;
    // extra OS threads started for blocks that have not run yet, when a block's spin-wait cannot end
    // without them (see help_pending_blocks); joined at the end of the launch
    static constexpr unsigned kMaxHelpers = 64;
    std::atomic<unsigned> nhelpers{0};
    pthread_t helper[kMaxHelpers];
    bool helper_started[kMaxHelpers] = {};
};

// The built-in variables live apart from the runtime's state, and nothing takes their address
// (blockDim is a dim3 here, not a cast of a uint3's address): g++ then knows that the kernel's own
// stores through pointers cannot change them, keeps blockIdx/blockDim in registers across a block's
// plain loop and may vectorise that loop across CUDA threads (axpy one element per thread: each
// thread had reloaded blockIdx.x and blockDim.x after the previous thread's store).
struct Dims {  // constant-initialised: no TLS guard
    uint3 tid{}, bid{};
    dim3 bdim, gdim;
};
static thread_local Dims dims;

struct Tls {  // trivially constructible: zero-initialised per OS thread, no TLS guard
    unsigned long long serial;  // one per block run on this OS thread (tile barriers)
    EmuFault* fault;            // armed while the kernel runs (faults, watchdog)
    Fiber* cur;
    Executor* ex;
    Launch* L;
    unsigned char* dsmem;
    bool quiet;                 // a block re-run to name a trapping thread: its own errors are not reports
};
static thread_local Tls tls;

static constexpr size_t kMaxDynSmem = 232448;  // 227 KiB, sm_90
static constexpr unsigned kMaxFibers = 1024;

static inline size_t page_size() {
    static size_t ps = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return ps;
}
static inline size_t env_size(const char* name, size_t dflt) {
    const char* s = getenv(name);
    if (!s || !*s) return dflt;
    char* end = nullptr;
    unsigned long long v = strtoull(s, &end, 10);
    return (end && *end == 0 && v > 0) ? static_cast<size_t>(v) : dflt;
}

// ---- errors --------------------------------------------------------------------------------
static inline void vrecord(Launch* L, const uint3 bid, const char* fmt, va_list ap) {
    if (tls.quiet) return;
    const uint64_t b = bid.x + static_cast<uint64_t>(L->grid.x) * (bid.y + static_cast<uint64_t>(L->grid.y) * bid.z);
    pthread_mutex_lock(&L->em);
    if (b < L->failed_block) {  // (a watchdog report sets failed_block to 0: it stays)
        L->failed.store(1, std::memory_order_relaxed);
        L->failed_block = b;
        int n = snprintf(L->msg, sizeof L->msg, "kernel '%s' block (%u,%u,%u): ", L->name, bid.x, bid.y, bid.z);
        if (n < 0) n = 0;
        if (static_cast<size_t>(n) < sizeof L->msg) vsnprintf(L->msg + n, sizeof L->msg - n, fmt, ap);
        L->failed.store(2, std::memory_order_release);
    }
    pthread_mutex_unlock(&L->em);
}
static inline void record(Launch* L, const uint3& bid, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
static inline void record(Launch* L, const uint3& bid, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vrecord(L, bid, fmt, ap);
    va_end(ap);
}

// Records an error for the current block and stops the calling CUDA thread (and its block).
[[noreturn]] static void fail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// Stops the calling CUDA thread (and its block) without recording anything (fail records first): for a thread that stops
// because another block already failed, whose report must stand (a lower block's "stopped" note would
// replace it: reports keep the lowest block's).
[[noreturn]] static void stop_quietly() {
    if (tls.cur) {
        Executor& ex = *tls.ex;
        ex.aborted = true;
        ctx_swap(&tls.cur->ctx, &ex.sched);  // never resumed
        __builtin_trap();
    }
    throw ThreadStop{};
}

[[noreturn]] static void fail(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (tls.L) vrecord(tls.L, dims.bid, fmt, ap);
    va_end(ap);
    stop_quietly();
}

[[noreturn]] static inline void plain_mode_fail(const char* what, const char* file, int line) {
    fail("%s (%s:%d) reached in plain-loop mode: the emulator's static scan found no barrier or warp "
         "collective reachable from this kernel (set ACLNN_PY_EMU_FORCE_FIBERS=1 to work around it, and report it)",
         what, base_name(file), line);
}

// ---- fibers --------------------------------------------------------------------------------
static void fiber_main(void* arg);

static inline size_t fiber_stack_size() {
    static size_t sz = [] {
        size_t kb = env_size("ACLNN_PY_EMU_STACK_KB", 128);
        size_t ps = page_size();
        return ((kb * 1024 + ps - 1) / ps) * ps;
    }();
    return sz;
}

static inline void fiber_reset(Fiber& f) {
    size_t ps = page_size();
    ctx_make(&f.ctx, f.map + ps, f.map_len - ps, &fiber_main, &f);
    f.parked = true;
}

inline Executor::~Executor() {
    if (fibers) {
        for (unsigned i = 0; i < nfib; ++i)
            if (fibers[i].map) munmap(fibers[i].map, fibers[i].map_len);
        delete[] fibers;
    }
    delete[] warps;
    if (dsmem) munmap(dsmem, dsmem_len);
}

struct ExecHolder {
    Executor* ex = nullptr;
    ~ExecHolder() { delete ex; }
};
static thread_local ExecHolder exec_holder;

static inline Executor& executor() {
    Executor* ex = exec_holder.ex;
    if (!ex) {
        ex = new Executor();
        ex->fibers = new Fiber[kMaxFibers];
        ex->warps = new Warp[kMaxFibers / 32];
        exec_holder.ex = ex;
    }
    return *ex;
}

static inline unsigned char* dyn_smem_base() {
    unsigned char* p = tls.dsmem;
    if (!p) {
        Executor& ex = executor();
        if (!ex.dsmem) {
            size_t ps = page_size();
            size_t len = ((kMaxDynSmem + 256 + ps - 1) / ps) * ps;
            void* m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (m == MAP_FAILED) {
                fprintf(stderr, "aclnn_py emulator: cannot map dynamic shared memory\n");
                abort();
            }
            ex.dsmem = static_cast<unsigned char*>(m);
            ex.dsmem_len = len;
        }
        p = tls.dsmem = ex.dsmem;
    }
    return p;
}
// `extern __shared__ T name[];` is rewritten by the loader to
// `static thread_local T (&name)[] = ::__emu::dyn_smem<decltype(name)>();`
template <class R>
static inline R dyn_smem() {
    using A = std::remove_reference_t<R>;
    return *reinterpret_cast<A*>(dyn_smem_base());
}

// ---- waiting ------------------------------------------------------------------------------
// A thread that must wait (barrier, warp collective) hands the CPU straight to the next READY
// thread of its block instead of going through the scheduler: one context switch instead of two.
// The scheduler loop still visits every thread; this only changes which READY thread runs first
// (any order is a legal schedule). The scan is bounded; with nothing found, back to the scheduler.
// Fiber f hands the CPU to fiber n of its block; f resumes when someone switches back to it (and
// that one sets tls.cur / dims.tid for f, as this does for n).
static inline void switch_to(Fiber* f, Fiber& n) {
    tls.cur = &n;
    dims.tid = n.tid;
    ctx_swap(&f->ctx, &n.ctx);
}
static inline void wait_switch(Executor& ex, Fiber* f) {
    Fiber* fb = ex.fibers;
    const unsigned n = ex.nthreads, end = std::min(n, f->linear + 65);
    for (unsigned j = f->linear + 1; j < end; ++j) {
        if (fb[j].state == ST_READY) {
            switch_to(f, fb[j]);
            return;
        }
    }
    ctx_swap(&f->ctx, &ex.sched);
}

// ---- barrier -------------------------------------------------------------------------------
static inline void release_barrier(Executor& ex) {
    int res = 0;
    switch (ex.bar_kind) {
        case 1: res = static_cast<int>(ex.bar_acc); break;
        case 2: res = ex.bar_acc == ex.bar_count; break;
        case 3: res = ex.bar_acc != 0; break;
        default: break;
    }
    ex.bar_result = res;
    ex.ready_gen++;
    ex.bar_released = true;
    Fiber* fb = ex.fibers;
    for (unsigned i = 0, n = ex.nthreads; i < n; ++i)
        if (fb[i].state == ST_BAR) {
            fb[i].state = ST_READY;
            fb[i].bar_res = res;
            fb[i].tick = 0;  // the block is together again: statement convergence points count afresh
        }
    ex.bar_count = 0;
    ex.bar_acc = 0;
}

static inline const Group* group_naming(const Warp& w, uint32_t bit) {
    for (int i = 0; i < w.ngroups; ++i)
        if (w.g[i].mask & bit) return &w.g[i];
    return nullptr;
}

static int bar_sync(int kind, int pred, const char* file, int line) {
    Fiber* f = tls.cur;
    if (!f) plain_mode_fail(bar_name(kind), file, line);
    Executor& ex = *tls.ex;
    const Warp& w = ex.warps[f->linear >> 5];
    if (w.ngroups) {
        if (const Group* g = group_naming(w, 1u << (f->linear & 31)))
            fail("deadlock: thread (%u,%u,%u) reaches %s (%s:%d) while lanes of its warp wait for it in %s (%s:%d) "
                 "with mask 0x%08x", f->tid.x, f->tid.y, f->tid.z, bar_name(kind), base_name(file), line,
                 op_name(g->op), base_name(g->file), g->line, g->given);
    }
    if (ex.grid_waiting)
        fail("deadlock: thread (%u,%u,%u) reaches %s (%s:%d) while %u thread(s) of its block wait in grid.sync()",
             f->tid.x, f->tid.y, f->tid.z, bar_name(kind), base_name(file), line, ex.grid_waiting);
    if (ex.bar_count == 0) {
        ex.bar_file = file;
        ex.bar_line = line;
        ex.bar_kind = kind;
        ex.bar_first = f->linear;
    } else if (kind != ex.bar_kind ||
               (ACLNN_EMU_CUDA_ARCH < 700 && (line != ex.bar_line || (file != ex.bar_file && strcmp(file, ex.bar_file) != 0)))) {
        // From sm_70 on, a block barrier counts the threads that arrive, whichever __syncthreads they
        // execute (independent thread scheduling): siboehm's SGEMM kernel 11 splits its warps between
        // two __syncthreads and runs on every GPU since Volta. Before sm_70 (-arch=sm_6x) the threads of
        // a warp had to meet at the same one: reported. Different kinds (__syncthreads_count vs
        // __syncthreads_or ...) never combine.
        const Fiber& o = ex.fibers[ex.bar_first];
        if (kind != ex.bar_kind)
            fail("different block barriers meet: %s (%s:%d) and %s (%s:%d): thread (%u,%u,%u) waits at the first, "
                 "thread (%u,%u,%u) arrives at the second", bar_name(ex.bar_kind), base_name(ex.bar_file), ex.bar_line,
                 bar_name(kind), base_name(file), line, o.tid.x, o.tid.y, o.tid.z, f->tid.x, f->tid.y, f->tid.z);
        fail("%s reached from different call sites (%s:%d vs %s:%d): thread (%u,%u,%u) waits at the first, "
             "thread (%u,%u,%u) arrives at the second (before sm_70, -arch=sm_%d here, a block's threads must meet "
             "at one barrier)", bar_name(kind), base_name(ex.bar_file), ex.bar_line,
             base_name(file), line, o.tid.x, o.tid.y, o.tid.z, f->tid.x, f->tid.y, f->tid.z, ACLNN_EMU_CUDA_ARCH / 10);
    }
    ex.bar_count++;
    ex.bar_acc += (pred != 0);
    f->spin = 0;
    f->spin_t0 = 0;
    if (ex.bar_count == ex.live) {
        release_barrier(ex);
        f->tick = 0;   // as release_barrier does for the waiters: statement convergence points count afresh
        const int res = ex.bar_result;
        // The block leaves the barrier together and runs on in thread order, lowest first, as a warp's
        // lanes do after it: the thread that completed it (the last to arrive, usually the highest)
        // must not run ahead of the lanes below it in its warp. `if (tid < 32) s[tid] += s[tid + 16];`
        // between barriers (global or shared, no volatile) reads lane 16's old slot on a GPU, where all
        // lanes load before any stores; lane 31 running first had already added s[47] into s[31]
        // (Professional CUDA C's reduceCompleteUnrollWarps8Sync: silently wrong sums). The lowest
        // runnable thread goes first; this one follows in its turn (wait_switch scans upwards).
        Fiber* fb = ex.fibers;
        for (unsigned j = 0; j < f->linear; ++j)
            if (fb[j].state == ST_READY) {
                switch_to(f, fb[j]);
                break;
            }
        return res;
    }
    f->state = ST_BAR;
    f->cfile = file;
    f->cline = line;
    wait_switch(ex, f);
    return f->bar_res;
}

// ---- warp collectives ----------------------------------------------------------------------
static inline bool same_bits(uint64_t a, uint64_t b, unsigned size) {
    return size >= 8 ? a == b : ((a ^ b) & ((uint64_t(1) << (size * 8)) - 1)) == 0;
}

static void complete_group(Executor& ex, const Group& g, unsigned base) {
    Fiber* fb = ex.fibers + base;
    const uint32_t mask = g.mask;
    uint32_t ballot = 0;
    if (g.op == OP_BALLOT || g.op == OP_ANY || g.op == OP_ALL || g.op == OP_UNI) {
        for (uint32_t m = mask; m; m &= m - 1) {
            unsigned i = __builtin_ctz(m);
            if (fb[i].cval) ballot |= 1u << i;
        }
    }
    uint64_t red = 0;
    if (g.op >= OP_RED_ADD && g.op <= OP_RED_XOR) {
        bool first = true;
        for (uint32_t m = mask; m; m &= m - 1) {
            uint32_t v = static_cast<uint32_t>(fb[__builtin_ctz(m)].cval);
            uint32_t r = static_cast<uint32_t>(red);
            if (first) { r = v; first = false; }
            else switch (g.op) {
                case OP_RED_ADD: r += v; break;
                case OP_RED_MIN: r = static_cast<uint32_t>(std::min(static_cast<int32_t>(r), static_cast<int32_t>(v))); break;
                case OP_RED_MAX: r = static_cast<uint32_t>(std::max(static_cast<int32_t>(r), static_cast<int32_t>(v))); break;
                case OP_RED_UMIN: r = std::min(r, v); break;
                case OP_RED_UMAX: r = std::max(r, v); break;
                case OP_RED_AND: r &= v; break;
                case OP_RED_OR: r |= v; break;
                default: r ^= v; break;
            }
            red = r;
        }
    }
    bool all_equal = true;
    if (g.op == OP_MATCH_ALL) {
        uint64_t v0 = fb[__builtin_ctz(mask)].cval;
        for (uint32_t m = mask; m; m &= m - 1)
            if (!same_bits(fb[__builtin_ctz(m)].cval, v0, g.size)) all_equal = false;
    }
    const int width = g.width;
    for (uint32_t m = mask; m; m &= m - 1) {
        const int i = __builtin_ctz(m);
        Fiber& fi = fb[i];
        uint64_t r = 0;
        switch (g.op) {
            case OP_SYNCWARP: break;
            case OP_BALLOT: r = ballot; break;
            case OP_ANY: r = ballot != 0; break;
            case OP_ALL: r = ballot == mask; break;
            case OP_UNI: r = ballot == 0 || ballot == mask; break;
            case OP_SHFL_IDX: case OP_SHFL_UP: case OP_SHFL_DOWN: case OP_SHFL_XOR: {
                const long seg = i & ~(width - 1), seg_end = seg + width - 1;
                long j;
                bool ok;
                if (g.op == OP_SHFL_IDX) { j = seg + (fi.carg & (width - 1)); ok = true; }
                else if (g.op == OP_SHFL_UP) { j = static_cast<long>(i) - static_cast<long>(static_cast<unsigned>(fi.carg)); ok = j >= seg; }
                else if (g.op == OP_SHFL_DOWN) { j = static_cast<long>(i) + static_cast<long>(static_cast<unsigned>(fi.carg)); ok = j <= seg_end; }
                else { j = static_cast<long>(static_cast<unsigned>(i) ^ static_cast<unsigned>(fi.carg)); ok = j <= seg_end; }
                // Sources outside the segment or non-existent (partial last warp): the caller's own
                // value. A source lane that exists and has not exited but is not named in the mask
                // is undefined behaviour: a GPU returns whatever that lane's register holds, which
                // the emulator cannot know, so it reports the shuffle instead of inventing a value.
                if (ok && j >= 0 && j < 32 && ((mask >> j) & 1u)) r = fb[j].cval;
                else if (ok && j >= 0 && j < 32 && ((ex.warps[base >> 5].exited >> j) & 1u))
                    fail("%s (%s:%d) with mask 0x%08x: lane %d of warp %u reads lane %ld, which has exited (a GPU "
                         "returns an undefined value)", op_name(g.op), base_name(g.file), g.line, g.given, i,
                         base >> 5, j);
                else if (ok && j >= 0 && j < 32 && ((ex.warps[base >> 5].exist >> j) & 1u))
                    fail("%s (%s:%d) with mask 0x%08x: lane %d of warp %u reads lane %ld, which is live but not "
                         "named in the mask; a GPU returns that lane's unsynchronised register value (undefined "
                         "behaviour), so the emulator reports it instead of returning a number (name the lane "
                         "in the mask, or keep the source inside it)", op_name(g.op), base_name(g.file), g.line,
                         g.given, i, base >> 5, j);
                else r = fi.cval;
                break;
            }
            case OP_MATCH_ANY: {
                uint32_t mm = 0;
                for (uint32_t k = mask; k; k &= k - 1) {
                    unsigned jj = __builtin_ctz(k);
                    if (same_bits(fb[jj].cval, fi.cval, g.size)) mm |= 1u << jj;
                }
                r = mm;
                break;
            }
            case OP_MATCH_ALL: r = all_equal ? (uint64_t(mask) | (uint64_t(1) << 32)) : 0; break;
            default: r = red; break;
        }
        fi.cres = r;
        if (fi.state == ST_WARP) fi.state = ST_READY;
    }
    ex.ready_gen++;
}

static inline int64_t now_ns() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

// Called every 1024 warp collectives / __nanosleep calls of a thread: lets the rest of the block
// run, then looks for a livelock once the thread has spun ACLNN_PY_EMU_SPIN_LIMIT times since its
// last barrier. Reported at once when the rest of the block waits at a barrier or cannot run and
// no other block is running (nothing can ever change); after 0.5 s of spinning when other blocks
// run (they might set a flag); after ACLNN_PY_EMU_SPIN_TIMEOUT_S (5) s otherwise.
static void spin_check(Fiber* f, Executor& ex, const char* what, const char* file, int line) {
    ctx_swap(&f->ctx, &ex.sched);  // stays READY: a legal scheduling point
    Launch& L = *ex.L;
    if (f->spin < L.spin_limit) return;
    bool others_ready = false;
    for (unsigned i = 0; i < ex.nthreads; ++i)
        if (&ex.fibers[i] != f && (ex.fibers[i].state == ST_READY || ex.fibers[i].state == ST_AMASK)) {
            others_ready = true;
            break;
        }
    const bool stuck = ex.bar_count > 0 || !others_ready;
    if (!(stuck && L.active.load(std::memory_order_relaxed) <= 1)) {
        const int64_t t = now_ns();
        if (!f->spin_t0) f->spin_t0 = t;
        const int64_t limit = stuck ? 500000000LL
                                    : static_cast<int64_t>(env_size("ACLNN_PY_EMU_SPIN_TIMEOUT_S", 5)) * 1000000000LL;
        if (t - f->spin_t0 < limit) return;
    }
    char last[256];  // what, at its call site (none for a call the loader put in: spin_tick)
    if (line > 0) snprintf(last, sizeof last, "%s at %s:%d", what, base_name(file), line);
    else snprintf(last, sizeof last, "%s", what);
    if (ex.bar_count) {
        const Fiber& o = ex.fibers[ex.bar_first];
        fail("livelock: thread (%u,%u,%u) ran %u warp collectives / __nanosleep calls / spin-wait polls (last: %s) "
             "without reaching a barrier while thread (%u,%u,%u) and %u other(s) wait at %s (%s:%d) "
             "(limit: ACLNN_PY_EMU_SPIN_LIMIT=%u)", f->tid.x, f->tid.y, f->tid.z, f->spin, last,
             o.tid.x, o.tid.y, o.tid.z, ex.bar_count - 1, bar_name(ex.bar_kind), base_name(ex.bar_file), ex.bar_line,
             L.spin_limit);
    }
    fail("livelock: thread (%u,%u,%u) ran %u warp collectives / __nanosleep calls / spin-wait polls (last: %s) %s%s "
         "(limit: ACLNN_PY_EMU_SPIN_LIMIT=%u)", f->tid.x, f->tid.y, f->tid.z, f->spin, last,
         others_ready ? "without reaching a barrier for too long" : "while no other thread of the block can run",
         line > 0 || others_ready ? ""
                                  : "; if it waits for another block: the emulator runs a grid's blocks a few at a "
                                    "time, not all at once (a grid-wide wait needs a cooperative launch and "
                                    "cg::this_grid().sync())",
         L.spin_limit);
}

static uint64_t warp_collective(unsigned char op, unsigned char size, unsigned mask, uint64_t val, int arg,
                                int width, const char* file, int line) {
    Fiber* f = tls.cur;
    if (!f) plain_mode_fail(op_name(op), file, line);
    Executor& ex = *tls.ex;
    const unsigned lane = f->linear & 31, warp = f->linear >> 5;
    Warp& w = ex.warps[warp];
    const uint32_t me = 1u << lane;
    if (!(mask & me))
        fail("%s (%s:%d) called by thread (%u,%u,%u) (warp %u, lane %u), which is not in its own mask 0x%08x",
             op_name(op), base_name(file), line, f->tid.x, f->tid.y, f->tid.z, warp, lane, mask);
    if (width < 1 || width > 32 || (width & (width - 1)))
        fail("%s (%s:%d): width %d is not a power of two between 1 and 32", op_name(op), base_name(file), line, width);
    // CUDA: "all non-exited threads named in mask must execute the same intrinsic": a mask may name
    // lanes that have exited (OneFlow's softmax shuffles with 0xffffffff in 8-lane groups after the
    // lanes of a group without a row have returned). They take no part; reading one is reported below.
    const uint32_t eff = mask & w.exist & ~w.exited;
    if ((++f->spin & 1023u) == 0) spin_check(f, ex, op_name(op), file, line);
    const unsigned base = warp * 32;
    Group* g = nullptr;
    for (int i = 0; i < w.ngroups; ++i)
        if (w.g[i].mask == eff) { g = &w.g[i]; break; }
    if (g) {
        if (g->op != op || g->size != size || g->width != width)
            fail("lanes of warp %u named in mask 0x%08x arrive at different warp collectives: %s (%s:%d) and %s (%s:%d)%s",
                 warp, mask, op_name(g->op), base_name(g->file), g->line, op_name(op), base_name(file), line,
                 g->op == op ? " (different operand size or width)" : "");
    } else {
        // A named lane that waits in another collective is fine: that one may still complete (its other
        // lanes are runnable: two halves of a warp shuffle over their own masks, then the whole warp
        // meets), and so may a pending group naming this lane (the lane may run collectives with
        // disjoint masks first, e.g. inside a branch). Real cycles leave no runnable thread: the
        // scheduler reports them as deadlocks.
        for (uint32_t m = eff & ~me; m; m &= m - 1) {
            unsigned j = __builtin_ctz(m);
            const Fiber& o = ex.fibers[base + j];
            if (o.state == ST_BAR)
                fail("deadlock: %s (%s:%d) by thread (%u,%u,%u) with mask 0x%08x needs lane %u of warp %u, which waits "
                     "at %s (%s:%d)", op_name(op), base_name(file), line, f->tid.x, f->tid.y, f->tid.z, mask, j, warp,
                     bar_name(ex.bar_kind), base_name(o.cfile), o.cline);
        }
        g = &w.g[w.ngroups++];
        g->mask = eff;
        g->given = mask;
        g->arrived = 0;
        g->op = op;
        g->size = size;
        g->width = width;
        g->file = file;
        g->line = line;
    }
    f->cval = val;
    f->carg = arg;
    f->cop = op;
    g->arrived |= me;
    if (g->arrived != g->mask) {
        w.waiting |= me;
        f->state = ST_WARP;
        f->cfile = file;
        f->cline = line;
        wait_switch(ex, f);
        return f->cres;
    }
    // Warps of a block run side by side on a GPU, not one after another: before this warp leaves the
    // collective, every other warp that can run gets one turn (its READY threads run up to their own
    // next wait), the warps after this one first, then those before it. So after a barrier every
    // warp's loads before its first collective come before any warp leaves that collective, and
    // before a store one warp makes a few collectives later. Races a GPU wins in practice, that a
    // warp running ahead lost here, silently: llm.c's softmax_forward_kernel4 reads shared[0], the
    // broadcast max, after __syncthreads while warp 0 reuses the slot for its partial sum once it has
    // shuffled; attention_backward's kernel8 reads every warp's slot after block.sync() while each warp
    // writes its own again one iteration later (when only the next two warps got a turn, the last
    // warp, which completes the barrier, ran a whole iteration before warp 0 read). The completing
    // lane stays READY with its group complete-but-unreleased, and releases it when it runs again
    // after the turns (one per warp: a warp that spins on __nanosleep cannot hold it back).
    {
        const unsigned nw = (ex.nthreads + 31) / 32;
        bool switched = false;
        for (unsigned k = 1; k < nw; ++k) {
            const unsigned wj = warp + k < nw ? warp + k : warp + k - nw;
            const Warp& o = ex.warps[wj];
            if (!(o.exist & ~o.exited & ~o.waiting)) continue;   // every lane exited or waits in a collective
            const unsigned b = wj * 32, e = std::min(ex.nthreads, b + 32);
            for (unsigned j = b; j < e; ++j) {
                if (ex.fibers[j].state != ST_READY) continue;
                switch_to(f, ex.fibers[j]);
                switched = true;
                break;
            }
        }
        if (switched) {
            g = nullptr;   // groups of this warp may have moved in w.g meanwhile: find it again
            for (int i = 0; i < w.ngroups; ++i)
                if (w.g[i].mask == eff) { g = &w.g[i]; break; }
            if (!g) fail("internal: warp %u lost its pending %s group (mask 0x%08x)", warp, op_name(op), eff);
        }
    }
    complete_group(ex, *g, base);
    w.waiting &= ~g->mask;
    const unsigned lead = base + __builtin_ctz(g->mask);
    *g = w.g[--w.ngroups];
    // A converged warp leaves a collective together and runs on in lane order, so a leader's store
    // right after it (`if (lane == 0) s = v;`, then every lane reads s, no __syncwarp) comes before
    // the other lanes' loads. The lane that completed the collective (the last to arrive) lets the
    // group's lowest lane run first; the others follow in order (wait_switch scans upwards).
    if (lead != f->linear && ex.fibers[lead].state == ST_READY) switch_to(f, ex.fibers[lead]);
    return f->cres;
}

// __activemask(): the lanes of the warp that are converged at this call. The caller waits until
// no other lane of its warp is runnable (the others have exited, or wait at a barrier, in a
// collective or at an __activemask); the result is the set of lanes waiting at the same
// __activemask call site. In convergent code that is every non-exited lane.
static unsigned activemask_impl(const char* file, int line) {
    Fiber* f = tls.cur;
    if (!f) plain_mode_fail("__activemask", file, line);
    Executor& ex = *tls.ex;
    const unsigned base = f->linear & ~31u;
    Warp& w = ex.warps[f->linear >> 5];
    Fiber* fb = ex.fibers + base;
    f->state = ST_AMASK;
    f->cfile = file;
    f->cline = line;
    f->cop = 0;
    for (;;) {
        if (f->cop == 1) break;  // released by another lane of the same group
        bool running = false;
        const uint32_t alive = w.exist & ~w.exited;
        for (uint32_t m = alive; m; m &= m - 1)
            if (fb[__builtin_ctz(m)].state == ST_READY) { running = true; break; }
        if (!running) {
            uint32_t group = 0;
            for (uint32_t m = alive; m; m &= m - 1) {
                const Fiber& o = fb[__builtin_ctz(m)];
                if (o.state == ST_AMASK && o.cline == line && (o.cfile == file || strcmp(o.cfile, file) == 0))
                    group |= 1u << __builtin_ctz(m);
            }
            for (uint32_t m = group; m; m &= m - 1) {
                Fiber& o = fb[__builtin_ctz(m)];
                o.cres = group;
                o.cop = 1;
                o.state = ST_READY;
            }
            ex.ready_gen++;
            break;
        }
        ctx_swap(&f->ctx, &ex.sched);  // ST_AMASK fibers are resumed by the scheduler to re-check
    }
    f->state = ST_READY;
    ex.ready_gen++;
    f->cop = 0;
    return static_cast<unsigned>(f->cres);
}

static inline void nanosleep_impl(const char* file, int line, const char* what = "__nanosleep") {
    Fiber* f = tls.cur;
    if (!f) return;
    Executor& ex = *tls.ex;
    if ((++f->spin & 1023u) == 0) spin_check(f, ex, what, file, line);
    else ctx_swap(&f->ctx, &ex.sched);  // stays READY: lets the other threads of the block run
}

static void run_blocks(Launch& L, bool single);
static void* helper_thread(void* arg) {
    run_blocks(*static_cast<Launch*>(arg), false);
    return nullptr;
}

// A GPU keeps a small grid's blocks resident at once, so a block may spin until a later block sets a
// flag (a single-kernel radix sort waits on the grid's last block; a software grid barrier waits on
// all). The emulator runs a few blocks at a time: when a spinning thread's block has nothing else to
// run and blocks of the launch have not started, one more OS thread starts taking them (at most
// Launch::kMaxHelpers per launch; beyond that the livelock report stands). While other blocks of
// the launch run, the one it waits for may be among them (a decoupled look-back scan waits on the
// block before it, which runs on the other OS thread): then a helper starts only after the spin has
// lasted kHelpDelayNs since this thread last considered one. Started at once, every helper took a
// later block that spun too and started another: PMPP's domino scan, 1024 blocks of 1024 threads,
// had 64 helpers ask for 64 x 1024 fiber stacks and failed ("cannot map 1024 fiber stacks").
static constexpr int64_t kHelpDelayNs = 20000000;   // 20 ms
static void help_pending_blocks(Fiber* f, Executor& ex) {
    Launch& L = *ex.L;
    if (L.coop || L.next.load(std::memory_order_relaxed) >= L.nblocks) return;
    for (unsigned i = 0; i < ex.nthreads; ++i)
        if (&ex.fibers[i] != f && (ex.fibers[i].state == ST_READY || ex.fibers[i].state == ST_AMASK)) return;
    if (L.active.load(std::memory_order_relaxed) > 1) {
        const int64_t t = now_ns();
        if (!f->help_t0 || f->spin < f->help_spin) {   // first sight of this spin
            f->help_t0 = t;
            f->help_spin = f->spin;
            return;
        }
        if (t - f->help_t0 < kHelpDelayNs) return;
        f->help_t0 = t;
        f->help_spin = f->spin;
    }
    unsigned h = L.nhelpers.load(std::memory_order_relaxed);
    if (h >= Launch::kMaxHelpers || !L.nhelpers.compare_exchange_strong(h, h + 1)) return;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, 1 << 20);
    L.helper_started[h] = pthread_create(&L.helper[h], &at, helper_thread, &L) == 0;
    pthread_attr_destroy(&at);
}

static void join_helpers(Launch& L) {
    for (unsigned i = 0; i < L.nhelpers.load(); ++i)   // re-read: a running helper may start another
        if (L.helper_started[i]) pthread_join(L.helper[i], nullptr);
}

// A poll in the condition of a loop that waits on memory with an atomic found the wait not over (the
// loader writes `(cond) && ::__emu::spin_tick()`, see _rewrite_spin_loops in compiler.py): the rest of
// the block runs before the next poll, as it does on a GPU meanwhile; every 256th failed poll in a
// block that has nothing else to run lets a block that has not started run on an OS thread of its
// own; a wait that nothing can end is a livelock report, as for __nanosleep.
static inline bool spin_tick() {
    if (Fiber* f = tls.cur) {
        // a spinning thread is no longer behind at a statement convergence point (stmt_tick): the
        // threads there must not wait for it, it may wait for them
        f->tick = ~0ull;
        if ((f->spin & 255u) == 255u) help_pending_blocks(f, *tls.ex);
    }
    nanosleep_impl(nullptr, 0, "a spin-wait (a loop whose condition polls with atomic*())");
    return true;
}

// ---- thread exit ---------------------------------------------------------------------------
static void grid_thread_exit(Launch& L);
static void thread_exit(Fiber* f) {
    Executor& ex = *tls.ex;
    Warp& w = ex.warps[f->linear >> 5];
    const uint32_t me = 1u << (f->linear & 31);
    f->state = ST_EXITED;
    ex.live--;
    w.exited |= me;
    // A pending collective whose mask names this lane goes on without it (CUDA's rule: the mask's
    // non-exited lanes take part), and completes if every other lane of it has arrived.
    for (int gi = 0; gi < w.ngroups;) {
        Group& g = w.g[gi];
        if (!(g.mask & me)) { ++gi; continue; }
        g.mask &= ~me;
        if (g.arrived != g.mask) { ++gi; continue; }
        complete_group(ex, g, f->linear & ~31u);
        w.waiting &= ~g.mask;
        g = w.g[--w.ngroups];
    }
    if (ex.bar_count && ex.bar_count == ex.live) release_barrier(ex);
    if (ex.L->coop) grid_thread_exit(*ex.L);
}

// A fiber runs CUDA threads until one of them has to wait. When its thread exits and the next
// thread of the block has not started yet, the same stack runs that thread at once: the untouched
// stack parked in the next slot moves to the finished slot, so a kernel that (for this
// instantiation, these arguments, this block) never reaches a barrier or a warp collective costs
// no context switch per thread. The static scan can only say "may synchronise" per kernel name;
// this makes the price of that answer depend on what the threads really do.
static inline Fiber* take_over_next(Executor& ex, Fiber* f) {
    const unsigned nx = f->linear + 1;
    if (nx >= ex.nthreads || ex.aborted) return nullptr;
    Fiber* n = &ex.fibers[nx];
    if (!(n->parked && n->state == ST_READY)) return nullptr;  // started already (waits or ran)
    std::swap(f->map, n->map);
    std::swap(f->map_len, n->map_len);
    fiber_reset(*f);  // f's slot now holds the parked stack (its thread has exited)
    n->parked = false;
    tls.cur = n;
    dims.tid = n->tid;
    return n;
}

static void fiber_main(void*) {
    for (;;) {
        Fiber* f = tls.cur;  // whoever switched to this stack set tls.cur / dims.tid
        for (;;) {
            f->parked = false;
            Launch* L = tls.L;
            bool escaped = false;
            try {
                L->thread_fn(L->args);
            } catch (...) {
                escaped = true;
            }
            if (escaped) fail("a C++ exception escaped the kernel in thread (%u,%u,%u)", f->tid.x, f->tid.y, f->tid.z);
            thread_exit(f);
            Fiber* n = take_over_next(*tls.ex, f);
            if (!n) break;
            f = n;
        }
        f->parked = true;
        ctx_swap(&f->ctx, &tls.ex->sched);
    }
}

// ---- deadlock report -----------------------------------------------------------------------
static void report_deadlock(Executor& ex, Launch& L) {
    char buf[2048];
    size_t n = 0;
    auto put = [&](const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
        if (n >= sizeof buf) return;
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(buf + n, sizeof buf - n, fmt, ap);
        va_end(ap);
        if (k > 0) n += static_cast<size_t>(k);
    };
    put("deadlock: no thread can proceed;");
    if (ex.bar_count)
        put(" %u thread(s) wait at %s (%s:%d);", ex.bar_count, bar_name(ex.bar_kind), base_name(ex.bar_file), ex.bar_line);
    unsigned shown = 0;
    for (unsigned wi = 0; wi * 32 < ex.nthreads && shown < 4; ++wi) {
        const Warp& w = ex.warps[wi];
        for (int gi = 0; gi < w.ngroups && shown < 4; ++gi, ++shown) {
            const Group& g = w.g[gi];
            uint32_t missing = g.mask & ~g.arrived;
            put(" warp %u: %d lane(s) wait in %s (%s:%d) with mask 0x%08x", wi, __builtin_popcount(g.arrived),
                op_name(g.op), base_name(g.file), g.line, g.given);
            if (missing) {
                unsigned j = __builtin_ctz(missing);
                const Fiber& o = ex.fibers[wi * 32 + j];
                put(" for lane %u, which %s;", j,
                    o.state == ST_BAR ? "waits at a barrier" : o.state == ST_WARP ? "waits in another collective" : "cannot arrive");
            } else {
                put(";");
            }
        }
    }
    record(&L, ex.bid, "%s", buf);
}

// ---- running blocks ------------------------------------------------------------------------
static constexpr int kRtVersion = EMU_RT_VERSION;
static const EmuRtApi* g_rt = nullptr;  // the process-wide runtime (faults, watchdog); set at load

// Fiber stacks (the first page a guard: a stack overflow is a clean SIGSEGV) come from the
// process-wide runtime's cache for a launch and go back after it (give_back_stacks; see emu_rt.cpp:
// kept per module and thread they exhausted the process's memory mappings). Without the runtime
// (ACLNN_PY_EMU_NO_FAULT_HANDLER=1) they are mapped here and kept by the executor.
static bool take_stacks(Executor& ex, unsigned N) {
    if (ex.nfib >= N) return true;
    const size_t ps = page_size(), len = fiber_stack_size() + ps;
    void* got[kMaxFibers];
    const unsigned want = N - ex.nfib;
    unsigned n = 0;
    if (g_rt) {
        n = g_rt->stacks_get(len, want, got);
    } else {
        for (; n < want; ++n) {
            void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (p == MAP_FAILED) break;
            mprotect(p, ps, PROT_NONE);
            got[n] = p;
        }
    }
    for (unsigned i = 0; i < n; ++i) {
        Fiber& f = ex.fibers[ex.nfib + i];
        f.map = static_cast<unsigned char*>(got[i]);
        f.map_len = len;
        f.parked = false;
    }
    ex.nfib += n;
    return n == want;
}

static void give_back_stacks(Executor& ex) {
    if (!g_rt || ex.nfib == 0) return;
    void* maps[kMaxFibers];
    for (unsigned i = 0; i < ex.nfib; ++i) {
        maps[i] = ex.fibers[i].map;
        ex.fibers[i].map = nullptr;
        ex.fibers[i].parked = false;
    }
    g_rt->stacks_put(ex.fibers[0].map_len, ex.nfib, maps);
    ex.nfib = 0;
}

static void run_block_fibers(Executor& ex, Launch& L) {
    const unsigned N = L.nthreads;
    if (!take_stacks(ex, N)) {
        record(&L, ex.bid, "cannot map %u fiber stacks of %zu KiB (the process's limit of memory mappings, "
               "vm.max_map_count, or address space); the block did not run", N, fiber_stack_size() / 1024);
        return;
    }
    Fiber* fb = ex.fibers;
    const uint3 bd = L.block;
    if (ex.tid_dims.x != bd.x || ex.tid_dims.y != bd.y || ex.tid_dims.z != bd.z) {
        for (unsigned i = 0; i < N; ++i) {
            fb[i].linear = i;
            fb[i].tid = uint3{i % bd.x, (i / bd.x) % bd.y, i / (bd.x * bd.y)};
        }
        ex.tid_dims = bd;
    }
    for (unsigned i = 0; i < N; ++i) {
        Fiber& f = fb[i];
        if (!f.parked) fiber_reset(f);
        f.state = ST_READY;
        f.spin = 0;
        f.spin_t0 = 0;
        f.help_t0 = 0;
        f.tick = 0;
        f.loop = 0;
        f.bdepth = 0;
    }
    const unsigned nw = (N + 31) / 32;
    for (unsigned wi = 0; wi < nw; ++wi) {
        Warp& w = ex.warps[wi];
        unsigned cnt = N - wi * 32;
        w.exist = cnt >= 32 ? 0xffffffffu : ((1u << cnt) - 1);
        w.exited = 0;
        w.waiting = 0;
        w.ngroups = 0;
    }
    ex.nthreads = N;
    ex.live = N;
    ex.bar_count = 0;
    ex.bar_acc = 0;
    ex.aborted = false;
    ex.ready_gen++;
    ex.go_next = ~0u;
    for (;;) {
        bool progressed = false;
        for (unsigned i = 0; i < N; ++i) {
            if (fb[i].state != ST_READY && fb[i].state != ST_AMASK && fb[i].state != ST_GRID) continue;
            progressed = true;
            tls.cur = &fb[i];
            dims.tid = fb[i].tid;
            ex.bar_released = false;
            ctx_swap(&ex.sched, &fb[i].ctx);
            if (ex.aborted) break;
            if (ex.bar_released) i = ~0u;   // a barrier released meanwhile: its threads resume from thread 0 on
        }
        if (ex.aborted || ex.live == 0) break;
        if (!progressed) {
            report_deadlock(ex, L);
            ex.aborted = true;
            break;
        }
    }
    tls.cur = nullptr;
    if (ex.aborted)
        for (unsigned i = 0; i < N; ++i)
            if (!(fb[i].state == ST_EXITED && fb[i].parked)) fb[i].parked = false;  // reset before reuse
}

static unsigned register_thread(Launch& L) {
    unsigned slot = ~0u;
    pthread_mutex_lock(&L.tm);
    if (L.nthr < L.maxthr) {
        slot = L.nthr++;
        L.thr[slot] = pthread_self();
        L.thr_live[slot] = 1;
    }
    pthread_mutex_unlock(&L.tm);
    return slot;
}
static void unregister_thread(Launch& L, unsigned slot) {
    if (slot == ~0u) return;
    pthread_mutex_lock(&L.tm);
    L.thr_live[slot] = 0;
    pthread_mutex_unlock(&L.tm);
}

// Runs on the runtime's watchdog thread when a launch outlives its limit.
static void watchdog_fire(void* arg) {
    Launch& L = *static_cast<Launch*>(arg);
    pthread_mutex_lock(&L.em);
    if (L.failed.load(std::memory_order_relaxed) == 0) {
        L.failed.store(1, std::memory_order_relaxed);
        L.failed_block = 0;
        snprintf(L.msg, sizeof L.msg,
                 "kernel '%s': watchdog: the launch was still running after %.3g s and was stopped (an infinite "
                 "loop, or a spin-wait on memory that no running thread writes?); the limit is "
                 "ACLNN_PY_EMU_WATCHDOG_S / aclnn_py.emulator.set_watchdog()", L.name, L.watchdog_s);
        L.failed.store(2, std::memory_order_release);
    }
    pthread_mutex_unlock(&L.em);
    L.cancel = 1;
    pthread_mutex_lock(&L.tm);
    for (unsigned i = 0; i < L.nthr; ++i)
        if (L.thr_live[i] && g_rt) g_rt->kill_thread(L.thr[i]);
    pthread_mutex_unlock(&L.tm);
}

static inline bool is_trap(const EmuFault& fa) {
    return fa.sig == SIGSEGV || fa.sig == SIGBUS || fa.sig == SIGFPE || fa.sig == SIGILL;
}

// A plain-loop block may run vectorised across its CUDA threads (threadIdx is then not stored per
// thread), so a trap there does not say which thread took it. The block runs again one thread at a
// time through the kernel's out-of-line entry, threadIdx stored before each call, until the trap
// recurs: that thread is reported (the first in thread order, as the plain loop meets them). The
// launch has failed already and its memory is undefined, as after a fault on a GPU. Returns
// whether the trap recurred (`fa` then describes the new one, `t` is its thread); if not, `fa`
// keeps the first report and the thread stays unnamed.
static bool pinpoint_thread(Launch& L, EmuFault& fa, uint3& t) {
    const int sig = fa.sig, code = fa.code, write = fa.write;
    void* const addr = fa.addr;
    void* const sp = fa.sp;
    const uint3 bd = L.block;
    const unsigned n = bd.x * bd.y * bd.z;
    volatile unsigned i = 0;
    tls.quiet = true;  // an assert or __trap met on the way (memory is not what it was) reports nothing
    if (sigsetjmp(fa.jb, 1) == 0) {
        fa.armed = 1;
        for (; i < n; ++i) {
            dims.tid = uint3{i % bd.x, (i / bd.x) % bd.y, i / (bd.x * bd.y)};
            try {
                L.thread_fn(L.args);
            } catch (...) {  // that thread stopped (assert, __trap): on to the next
            }
        }
        fa.armed = 0;
    } else if (is_trap(fa)) {
        tls.quiet = false;
        t = dims.tid;
        return true;
    }
    tls.quiet = false;
    fa.sig = sig;
    fa.code = code;
    fa.write = write;
    fa.addr = addr;
    fa.sp = sp;
    return false;
}

static void record_fault(Launch& L, EmuFault& fa) {
    const uint3 bid = dims.bid;
    if (!is_trap(fa)) {
        const uint3 t = dims.tid;
        if (!L.failed.load()) record(&L, bid, "stopped by the watchdog in thread (%u,%u,%u)", t.x, t.y, t.z);
        return;
    }
    uint3 t = dims.tid;
    char who[80];
    if (!L.fibers && !pinpoint_thread(L, fa, t))
        snprintf(who, sizeof who, "one of its threads (the trap did not recur when run thread by thread)");
    else
        snprintf(who, sizeof who, "thread (%u,%u,%u)", t.x, t.y, t.z);
    const uintptr_t addr = reinterpret_cast<uintptr_t>(fa.addr);
    if (fa.sig == SIGSEGV || fa.sig == SIGBUS) {
        bool overflow = false;
        if (Fiber* f = tls.cur) {
            const uintptr_t lo = reinterpret_cast<uintptr_t>(f->map);
            overflow = f->map && addr >= lo && addr < lo + page_size();
        } else if (fa.sp) {
            const uintptr_t sp = reinterpret_cast<uintptr_t>(fa.sp);
            overflow = (addr <= sp + 4096 && addr + 65536 >= sp);
        }
        if (overflow) {
            record(&L, bid, "stack overflow in %s (unbounded or too deep recursion, or large local arrays?); the "
                   "emulator gives each CUDA thread ACLNN_PY_EMU_STACK_KB=%zu KiB of stack (raise it for large "
                   "frames)", who, fiber_stack_size() / 1024);
            return;
        }
        record(&L, bid, "illegal memory %s at address 0x%016llx in %s (%s%s)",
               fa.write == 1 ? "write" : fa.write == 0 ? "read" : "access", static_cast<unsigned long long>(addr),
               who, fa.sig == SIGBUS ? "SIGBUS" : "SIGSEGV",
               fa.sig == SIGSEGV ? (fa.code == SEGV_MAPERR ? ": address not mapped" : ": no access permission") : "");
        return;
    }
    if (fa.sig == SIGFPE) {
        record(&L, bid, "%s in %s (SIGFPE); a GPU does not trap here but returns an unspecified value",
               fa.code == FPE_INTDIV ? "integer division by zero" : fa.code == FPE_INTOVF ? "integer overflow in a division (INT_MIN / -1)" : "arithmetic exception",
               who);
        return;
    }
    const unsigned char* pc = static_cast<const unsigned char*>(fa.addr);
    if (pc && pc[0] == 0x0f && pc[1] == 0x0b) {  // ud2: a check of -fsanitize=shift-exponent,float-cast-overflow,bounds
        record(&L, bid, "undefined operation in %s: an integer shift by a negative count or by the operand's width "
               "or more (x << 32), a floating-point value converted to an integer type that cannot hold it (NaN, "
               "(unsigned)-1.0f, (int)3e9f, (unsigned char)300.0f), or an index of a fixed-size array (a local "
               "array, a static __shared__ one, any dimension of float a[1][8]) out of its bounds. A GPU clamps such "
               "a shift (result 0, or the sign bits for >> of a negative value) and saturates such a conversion "
               "(NaN -> 0); the CPU computes other numbers, and an out-of-bounds index reads or writes other "
               "variables on both, so the emulator stops here instead. Keep the count below the width / clamp the "
               "value, or use __float2int_rz & co., which saturate as on a GPU; keep indices inside the array", who);
        return;
    }
    record(&L, bid, "illegal instruction at 0x%016llx in %s (SIGILL)", static_cast<unsigned long long>(addr), who);
}

static void run_blocks(Launch& L, bool single = false) {
    Executor& ex = executor();
    ex.L = &L;
    ex.grid_waiting = 0;
    tls.ex = &ex;
    tls.L = &L;
    dims.bdim = L.block;
    dims.gdim = L.grid;
    tls.cur = nullptr;
    unsigned char* smem = L.shmem ? dyn_smem_base() : nullptr;
    const uint64_t gx = L.grid.x, gxy = static_cast<uint64_t>(L.grid.x) * L.grid.y;
    const unsigned slot = register_thread(L);
    EmuFault fa;
    fa.armed = 0;
    fa.cancel = &L.cancel;
    EmuFault* prev = g_rt ? g_rt->enter(&fa) : nullptr;
    tls.fault = g_rt ? &fa : nullptr;
    volatile bool in_block = false;
    if (sigsetjmp(fa.jb, 1)) {
        // a fault or the watchdog stopped this thread inside the kernel
        record_fault(L, fa);
        if (L.fibers) {
            for (unsigned i = 0; i < ex.nfib; ++i) ex.fibers[i].parked = false;  // reset before reuse
        }
        tls.cur = nullptr;
        if (in_block && L.fibers) L.active.fetch_sub(1, std::memory_order_relaxed);
        if (L.coop) {
            pthread_mutex_lock(&L.gm);
            pthread_cond_broadcast(&L.gcv);
            pthread_mutex_unlock(&L.gm);
        }
    } else {
        fa.armed = 1;
        // Plain-loop blocks are claimed L.chunk at a time (one atomic per chunk, not per block: with
        // one per block, axpy one element per thread ran at 8-15 GB/s on two threads and 39 on one);
        // fiber blocks one at a time, in order, since a block may wait on a later one (spin_tick).
        uint64_t b = 0, bend = 0;
        for (;; ++b) {
            if (L.failed.load(std::memory_order_relaxed)) break;
            if (b >= bend) {
                b = L.next.fetch_add(L.chunk, std::memory_order_relaxed);
                if (b >= L.nblocks) break;
                bend = std::min(b + L.chunk, L.nblocks);
            }
            uint3 bid{static_cast<unsigned>(b % gx), static_cast<unsigned>((b / gx) % L.grid.y), static_cast<unsigned>(b / gxy)};
            dims.bid = bid;
            tls.serial++;
            ex.bid = bid;
            if (smem) memset(smem, 0xFF, L.shmem);  // poison: uninitialised floats read as NaN
            if (L.fibers) L.active.fetch_add(1, std::memory_order_relaxed);
            in_block = true;
            if (L.fibers) {
                run_block_fibers(ex, L);
            } else {
                try {
                    L.block_fn(L.args);
                } catch (ThreadStop&) {
                } catch (...) {
                    record(&L, bid, "a C++ exception escaped the kernel");
                }
            }
            in_block = false;
            if (L.fibers) L.active.fetch_sub(1, std::memory_order_relaxed);
            if (single) break;
        }
    }
    fa.armed = 0;
    tls.fault = nullptr;
    if (g_rt) g_rt->leave(prev);
    unregister_thread(L, slot);
    if (L.fibers) give_back_stacks(ex);
    tls.L = nullptr;
    tls.ex = nullptr;
}

// ---- cooperative groups: grid-wide and large-tile barriers -----------------------------------
// A released grid barrier: this block's other waiters may run again. They would see the new
// generation themselves when next resumed, but nothing resumes a fiber that is not runnable: the
// thread that passes first could reach the next grid.sync() and wait there with no runnable fiber
// in its block (two grid syncs in a row hung).
static inline void grid_wake_block(Executor& ex) {
    const uint64_t now = __atomic_load_n(&ex.L->grid_gen, __ATOMIC_RELAXED);
    for (unsigned i = 0; i < ex.nthreads; ++i)
        if (ex.fibers[i].state == ST_GRID && ex.fibers[i].gwait != now) {  // released, not a later sync
            ex.fibers[i].state = ST_READY;
            ex.grid_waiting--;  // counted here: a __syncthreads right after the grid sync must not see them
            ex.ready_gen++;
        }
}

static void grid_sync_impl(const char* file, int line) {
    Fiber* f = tls.cur;
    if (!f) plain_mode_fail("grid_group::sync", file, line);
    Executor& ex = *tls.ex;
    Launch& L = *ex.L;
    if (!L.coop)
        fail("this_grid().sync() (%s:%d) in a launch that is not cooperative: launch the kernel with "
             "enable_cooperative_groups=True (RawKernel / RawModule), as CUDA requires cudaLaunchCooperativeKernel",
             base_name(file), line);
    if (ex.bar_count)
        fail("deadlock: thread (%u,%u,%u) reaches grid.sync() (%s:%d) while %u thread(s) of its block wait at %s (%s:%d)",
             f->tid.x, f->tid.y, f->tid.z, base_name(file), line, ex.bar_count, bar_name(ex.bar_kind),
             base_name(ex.bar_file), ex.bar_line);
    f->spin = 0;
    pthread_mutex_lock(&L.gm);
    const uint64_t gen = L.grid_gen;
    if (++L.grid_arrived == L.grid_live) {
        L.grid_arrived = 0;
        L.grid_gen++;
        pthread_cond_broadcast(&L.gcv);
        pthread_mutex_unlock(&L.gm);
        grid_wake_block(ex);
        return;
    }
    pthread_mutex_unlock(&L.gm);
    f->state = ST_GRID;
    f->gwait = gen;
    f->cfile = file;
    f->cline = line;
    ex.grid_waiting++;
    for (;;) {
        bool others = false;
        for (unsigned i = 0; i < ex.nthreads; ++i)
            if (ex.fibers[i].state == ST_READY || ex.fibers[i].state == ST_AMASK) { others = true; break; }
        bool released;
        pthread_mutex_lock(&L.gm);
        released = L.grid_gen != gen;
        if (!released && !others && !L.failed.load(std::memory_order_relaxed)) {
            EmuFault* fa = tls.fault;
            if (fa) fa->armed = 0;  // never jump out of a condition wait
            struct timespec dl;
            clock_gettime(CLOCK_REALTIME, &dl);
            dl.tv_nsec += 20000000L;
            if (dl.tv_nsec >= 1000000000L) { dl.tv_sec++; dl.tv_nsec -= 1000000000L; }
            pthread_cond_timedwait(&L.gcv, &L.gm, &dl);
            if (fa) fa->armed = 1;
            released = L.grid_gen != gen;
        }
        pthread_mutex_unlock(&L.gm);
        if (released) break;
        if (L.failed.load(std::memory_order_relaxed)) {
            if (f->state == ST_GRID) ex.grid_waiting--;
            f->state = ST_READY;
            ex.ready_gen++;
            // The failing block's report stands (it named the cause); block 0 waiting here used to replace
            // it with "stopped at grid.sync(): another block failed", the lowest block's report winning.
            stop_quietly();
        }
        if (others) ctx_swap(&f->ctx, &ex.sched);
    }
    if (f->state == ST_GRID) ex.grid_waiting--;  // else a sibling woke it (and counted it)
    f->state = ST_READY;
    ex.ready_gen++;
    grid_wake_block(ex);
}

static void grid_thread_exit(Launch& L) {
    pthread_mutex_lock(&L.gm);
    L.grid_live--;
    if (L.grid_arrived && L.grid_arrived == L.grid_live) {
        L.grid_arrived = 0;
        L.grid_gen++;
        pthread_cond_broadcast(&L.gcv);
    }
    pthread_mutex_unlock(&L.gm);
}

struct TileBar {
    unsigned long long serial;
    unsigned count, gen;
};
static thread_local TileBar tile_bars[kMaxFibers / 32];

// thread_block_tile<N>::sync() for N > 32: a barrier of the tile's threads (livelock-checked).
static void tile_sync_impl(unsigned n, const char* file, int line) {
    Fiber* f = tls.cur;
    if (!f) plain_mode_fail("thread_block_tile::sync", file, line);
    Executor& ex = *tls.ex;
    const unsigned idx = f->linear / n;
    TileBar& b = tile_bars[idx];
    if (b.serial != tls.serial) b = TileBar{tls.serial, 0, 0};
    const unsigned members = std::min(n, ex.nthreads - idx * n);
    const unsigned gen = b.gen;
    f->spin = 0;
    if (++b.count == members) {
        b.count = 0;
        b.gen++;
        return;
    }
    while (b.gen == gen) {
        if ((++f->spin & 1023u) == 0) spin_check(f, ex, "thread_block_tile::sync", file, line);
        else ctx_swap(&f->ctx, &ex.sched);
    }
}

static void* coop_thread(void* arg) {
    run_blocks(*static_cast<Launch*>(arg), true);
    return nullptr;
}

// ---- thread pool (pthreads; fork-safe: the child starts with an empty pool) ------------------
struct Pool {
    pthread_mutex_t m;
    pthread_cond_t cv;
    pthread_cond_t cv_done;
    pthread_mutex_t launch_m;
    Launch* job;
    uint64_t gen;
    int workers, busy, wanted;
};
static Pool g_pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
                      PTHREAD_MUTEX_INITIALIZER, nullptr, 0, 0, 0, 0};

static void pool_after_fork_child() {
    Pool fresh = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
                  PTHREAD_MUTEX_INITIALIZER, nullptr, 0, 0, 0, 0};
    memcpy(static_cast<void*>(&g_pool), &fresh, sizeof fresh);
}
__attribute__((constructor)) static void pool_register_atfork() { pthread_atfork(nullptr, nullptr, pool_after_fork_child); }

static void* pool_worker(void*) {
    Pool& p = g_pool;
    pthread_mutex_lock(&p.m);
    uint64_t seen = 0;
    for (;;) {
        while (!(p.job && p.gen != seen && p.wanted > 0)) {
            struct timespec dl;
            clock_gettime(CLOCK_REALTIME, &dl);
            dl.tv_sec += 2;
            int rc = pthread_cond_timedwait(&p.cv, &p.m, &dl);
            if (rc == ETIMEDOUT && !(p.job && p.gen != seen && p.wanted > 0)) {
                p.workers--;
                pthread_mutex_unlock(&p.m);
                return nullptr;
            }
        }
        seen = p.gen;
        p.wanted--;
        p.busy++;
        Launch* J = p.job;
        pthread_mutex_unlock(&p.m);
        run_blocks(*J);
        pthread_mutex_lock(&p.m);
        if (--p.busy == 0) pthread_cond_broadcast(&p.cv_done);
    }
}

static inline unsigned pool_threads() {  // $ACLNN_PY_EMU_THREADS, else min(usable CPUs, 8)
    size_t v = env_size("ACLNN_PY_EMU_THREADS", 0);
    if (v) return static_cast<unsigned>(std::min<size_t>(v, 256));
    static const unsigned ncpu = [] {
        cpu_set_t set;
        unsigned n = 1;
        if (sched_getaffinity(0, sizeof set, &set) == 0) n = static_cast<unsigned>(CPU_COUNT(&set));
        else n = static_cast<unsigned>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
        return std::max(1u, std::min(n, 8u));
    }();
    return ncpu;
}

static void run_grid(Launch& L) {
    if (L.coop) {  // every block resident at once: one OS thread per block
        L.grid_live = L.nblocks * L.nthreads;
        const uint64_t nb = L.nblocks;
        pthread_t* ts = new pthread_t[nb];
        uint64_t started = 0;
        for (uint64_t i = 1; i < nb; ++i) {
            pthread_attr_t at;
            pthread_attr_init(&at);
            pthread_attr_setstacksize(&at, 1 << 20);
            int rc = pthread_create(&ts[i], &at, coop_thread, &L);
            pthread_attr_destroy(&at);
            if (rc != 0) {
                record(&L, uint3{0, 0, 0}, "cannot start %llu threads for a cooperative launch (%llu started)",
                       static_cast<unsigned long long>(nb), static_cast<unsigned long long>(started + 1));
                break;
            }
            started = i;
        }
        run_blocks(L, true);
        for (uint64_t i = 1; i <= started; ++i) pthread_join(ts[i], nullptr);
        delete[] ts;
        return;
    }
    unsigned nthr = pool_threads();
    if (L.nblocks < nthr) nthr = static_cast<unsigned>(L.nblocks);
    // Waking the pool costs tens of microseconds: small grids run on the calling thread. Thread count
    // is the proxy for work (128: e.g. 4 one-warp blocks whose threads walk long loops), and a grid of
    // 32 blocks or more is worth the pool whatever their size (a host plan's one-thread blocks each
    // walk thousands of rows: the NHWC BatchNorm statistics' 49 such blocks ran on one core).
    const bool parallel = nthr > 1 && (L.nblocks * L.nthreads >= 128 || L.nblocks >= 32);
    // at least 16 claims per thread keep the threads' shares even; 64 blocks bound a claim's work
    if (!L.fibers && parallel) L.chunk = std::max<uint64_t>(1, std::min<uint64_t>(64, L.nblocks / (16ull * nthr)));
    Pool& p = g_pool;
    if (!parallel || pthread_mutex_trylock(&p.launch_m) != 0) {
        run_blocks(L);
        join_helpers(L);
        return;
    }
    pthread_mutex_lock(&p.m);
    p.job = &L;
    p.gen++;
    p.wanted = static_cast<int>(nthr) - 1;
    while (p.workers < p.wanted) {
        pthread_t t;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&t, &at, pool_worker, nullptr);
        pthread_attr_destroy(&at);
        if (rc != 0) break;
        p.workers++;
    }
    pthread_cond_broadcast(&p.cv);
    pthread_mutex_unlock(&p.m);
    run_blocks(L);
    pthread_mutex_lock(&p.m);
    p.job = nullptr;
    p.wanted = 0;
    while (p.busy > 0) pthread_cond_wait(&p.cv_done, &p.m);
    pthread_mutex_unlock(&p.m);
    pthread_mutex_unlock(&p.launch_m);
    join_helpers(L);
}

}  // namespace __emu

// ---------------------------------------------------------------------------------------------
// 5. Built-in variables
// ---------------------------------------------------------------------------------------------
#define threadIdx (::__emu::dims.tid)
#define blockIdx (::__emu::dims.bid)
#define blockDim (::__emu::dims.bdim)
#define gridDim (::__emu::dims.gdim)
static constexpr int warpSize = 32;

// ---------------------------------------------------------------------------------------------
// 6. __half / __nv_bfloat16
// ---------------------------------------------------------------------------------------------
#include "cuda_emu_fp16.h"

// ---------------------------------------------------------------------------------------------
// 7. Synchronisation and warp functions (call sites come from __builtin_FILE/__builtin_LINE)
// ---------------------------------------------------------------------------------------------
#define EMU_SITE const char* __emu_file = __builtin_FILE(), int __emu_line = __builtin_LINE()
#define EMU_AT __emu_file, __emu_line

static inline void __syncthreads(EMU_SITE) { ::__emu::bar_sync(0, 0, EMU_AT); }
static inline int __syncthreads_count(int pred, EMU_SITE) { return ::__emu::bar_sync(1, pred, EMU_AT); }
static inline int __syncthreads_and(int pred, EMU_SITE) { return ::__emu::bar_sync(2, pred, EMU_AT); }
static inline int __syncthreads_or(int pred, EMU_SITE) { return ::__emu::bar_sync(3, pred, EMU_AT); }
static inline void __syncwarp(unsigned mask = 0xffffffffu, EMU_SITE) {
    ::__emu::warp_collective(::__emu::OP_SYNCWARP, 0, mask, 0, 0, 32, EMU_AT);
}
static inline unsigned __ballot_sync(unsigned mask, int pred, EMU_SITE) {
    return static_cast<unsigned>(::__emu::warp_collective(::__emu::OP_BALLOT, 4, mask, pred != 0, 0, 32, EMU_AT));
}
static inline int __any_sync(unsigned mask, int pred, EMU_SITE) {
    return static_cast<int>(::__emu::warp_collective(::__emu::OP_ANY, 4, mask, pred != 0, 0, 32, EMU_AT));
}
static inline int __all_sync(unsigned mask, int pred, EMU_SITE) {
    return static_cast<int>(::__emu::warp_collective(::__emu::OP_ALL, 4, mask, pred != 0, 0, 32, EMU_AT));
}
// Whether `pred` is the same in every lane of `mask`.
static inline int __uni_sync(unsigned mask, int pred, EMU_SITE) {
    return static_cast<int>(::__emu::warp_collective(::__emu::OP_UNI, 4, mask, pred != 0, 0, 32, EMU_AT));
}
static inline unsigned __activemask(EMU_SITE) { return ::__emu::activemask_impl(EMU_AT); }
static inline void __nanosleep(unsigned, EMU_SITE) { ::__emu::nanosleep_impl(EMU_AT); }

namespace __emu {
template <class T>
static inline uint64_t to_bits(const T& v) {
    static_assert(sizeof(T) <= 8, "warp shuffle of a type wider than 8 bytes");
    uint64_t b = 0;
    memcpy(&b, &v, sizeof(T));
    return b;
}
template <class T>
static inline T from_bits(uint64_t b) {
    T v;
    memcpy(static_cast<void*>(&v), &b, sizeof(T));
    return v;
}
template <class T>
static inline T shfl(unsigned char op, unsigned mask, const T& var, int arg, int width, const char* file, int line) {
    return from_bits<T>(warp_collective(op, sizeof(T), mask, to_bits(var), arg, width, file, line));
}
}  // namespace __emu

#define EMU_SHFL(T)                                                                                              \
    static inline T __shfl_sync(unsigned mask, T var, int srcLane, int width = 32, EMU_SITE) {                   \
        return ::__emu::shfl<T>(::__emu::OP_SHFL_IDX, mask, var, srcLane, width, EMU_AT);                        \
    }                                                                                                            \
    static inline T __shfl_up_sync(unsigned mask, T var, unsigned int delta, int width = 32, EMU_SITE) {         \
        return ::__emu::shfl<T>(::__emu::OP_SHFL_UP, mask, var, static_cast<int>(delta), width, EMU_AT);         \
    }                                                                                                            \
    static inline T __shfl_down_sync(unsigned mask, T var, unsigned int delta, int width = 32, EMU_SITE) {       \
        return ::__emu::shfl<T>(::__emu::OP_SHFL_DOWN, mask, var, static_cast<int>(delta), width, EMU_AT);       \
    }                                                                                                            \
    static inline T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = 32, EMU_SITE) {              \
        return ::__emu::shfl<T>(::__emu::OP_SHFL_XOR, mask, var, laneMask, width, EMU_AT);                       \
    }
EMU_SHFL(int)
EMU_SHFL(unsigned int)
EMU_SHFL(long)
EMU_SHFL(unsigned long)
EMU_SHFL(long long)
EMU_SHFL(unsigned long long)
EMU_SHFL(float)
EMU_SHFL(double)
EMU_SHFL(__half)
EMU_SHFL(__half2)
EMU_SHFL(__nv_bfloat16)
EMU_SHFL(__nv_bfloat162)
#undef EMU_SHFL

#define EMU_MATCH(T)                                                                                             \
    static inline unsigned __match_any_sync(unsigned mask, T value, EMU_SITE) {                                  \
        return static_cast<unsigned>(::__emu::warp_collective(::__emu::OP_MATCH_ANY, sizeof(T), mask,            \
                                                              ::__emu::to_bits(value), 0, 32, EMU_AT));          \
    }                                                                                                            \
    static inline unsigned __match_all_sync(unsigned mask, T value, int* pred, EMU_SITE) {                       \
        uint64_t r = ::__emu::warp_collective(::__emu::OP_MATCH_ALL, sizeof(T), mask, ::__emu::to_bits(value),   \
                                              0, 32, EMU_AT);                                                    \
        *pred = static_cast<int>(r >> 32);                                                                       \
        return static_cast<unsigned>(r);                                                                         \
    }
EMU_MATCH(int)
EMU_MATCH(unsigned int)
EMU_MATCH(long)
EMU_MATCH(unsigned long)
EMU_MATCH(long long)
EMU_MATCH(unsigned long long)
EMU_MATCH(float)
EMU_MATCH(double)
#undef EMU_MATCH

#define EMU_RED(NAME, OPU, OPI)                                                                                  \
    static inline unsigned NAME(unsigned mask, unsigned value, EMU_SITE) {                                       \
        return static_cast<unsigned>(::__emu::warp_collective(OPU, 4, mask, value, 0, 32, EMU_AT));              \
    }                                                                                                            \
    static inline int NAME(unsigned mask, int value, EMU_SITE) {                                                 \
        return static_cast<int>(::__emu::warp_collective(OPI, 4, mask, static_cast<unsigned>(value), 0, 32, EMU_AT)); \
    }
EMU_RED(__reduce_add_sync, ::__emu::OP_RED_ADD, ::__emu::OP_RED_ADD)
EMU_RED(__reduce_min_sync, ::__emu::OP_RED_UMIN, ::__emu::OP_RED_MIN)
EMU_RED(__reduce_max_sync, ::__emu::OP_RED_UMAX, ::__emu::OP_RED_MAX)
#undef EMU_RED
static inline unsigned __reduce_and_sync(unsigned mask, unsigned value, EMU_SITE) {
    return static_cast<unsigned>(::__emu::warp_collective(::__emu::OP_RED_AND, 4, mask, value, 0, 32, EMU_AT));
}
static inline unsigned __reduce_or_sync(unsigned mask, unsigned value, EMU_SITE) {
    return static_cast<unsigned>(::__emu::warp_collective(::__emu::OP_RED_OR, 4, mask, value, 0, 32, EMU_AT));
}
static inline unsigned __reduce_xor_sync(unsigned mask, unsigned value, EMU_SITE) {
    return static_cast<unsigned>(::__emu::warp_collective(::__emu::OP_RED_XOR, 4, mask, value, 0, 32, EMU_AT));
}
#undef EMU_SITE
#undef EMU_AT

// ---------------------------------------------------------------------------------------------
// 7b. Implicit warp-synchronous code: volatile pointers
// ---------------------------------------------------------------------------------------------
// Code written for lockstep warps (the classic reductions: `volatile float* s = sdata;
// s[tid] += s[tid + 16]; ...` with no __syncwarp) relies on every lane of a converged warp doing a
// statement's loads before any lane does its store. A GPU gives that in practice; running one lane
// after the other would silently give another sum. So the loader rewrites every volatile pointer in
// user code (`volatile T*`, `T volatile*`, `reinterpret_cast<volatile T*>`, `volatile T&`) to
// ::__emu::vptr<T> / vref<T>, and each access through one first lets the other runnable lanes of the
// warp run up to their own next volatile access (round robin in lane order). Straight-line
// warp-synchronous code then sees what a converged warp sees; a kernel that reaches such code
// runs on fibers.
namespace __emu {
static inline void lockstep() {
    Fiber* f = tls.cur;
    if (!f) return;
    Executor& ex = *tls.ex;
    const unsigned lane = f->linear & 31u, base = f->linear - lane;
    for (unsigned k = 1; k < 32; ++k) {
        const unsigned j = base + ((lane + k) & 31u);
        if (j < ex.nthreads && ex.fibers[j].state == ST_READY) {
            switch_to(f, ex.fibers[j]);
            return;
        }
    }
}

// A convergence point the loader puts in the loop conditions of code written for a warp (see
// _rewrite_warp_loops in compiler.py): the lanes advance one loop iteration at a time, as a converged
// warp does. Visibly true, so g++ still knows a loop's trip count; nothing at compile time.
constexpr bool loop_tick() {
    if (!std::is_constant_evaluated()) lockstep();
    return true;
}
// The same, for a loop the loader numbered (id > 0): the thread is inside loop `id` until loop_exit.
constexpr bool loop_tick(unsigned id) {
    if (!std::is_constant_evaluated()) {
        if (Fiber* f = tls.cur) f->loop = id;
        lockstep();
    }
    return true;
}
// A loop's exit in code written for a warp (the loader makes a numbered loop's condition
// `loop_tick(id) && (cond) || loop_exit(id)`): a GPU reconverges a warp where a divergent loop ends,
// so the lanes that leave it first wait there while the others still iterate. Without it a lane
// that left ran on into its next iteration of an outer loop among the lanes still in the inner one:
// the pre-Volta shared-memory histogram (a tagged `do { c = s[b] + 1 | tag; s[b] = c; } while (s[b] !=
// c);` through a volatile pointer, Rodinia hybridsort's histogram1024Kernel) then saw a winner's
// second increment as a lost write and counted it twice. The thread lets every runnable lane of its
// warp whose last loop tick was this loop's run first, a bounded number of times (a lane that left
// by `break` or `return` still looks inside): never a wait that could block, only an order.
// Always false, so the condition stays the user's.
static inline bool loop_leave(unsigned id) {
    Fiber* f = tls.cur;
    if (!f) return false;
    f->loop = 0;
    Executor& ex = *tls.ex;
    const unsigned lane = f->linear & 31u, base = f->linear - lane;
    for (unsigned round = 0; round < 4096; ++round) {
        Fiber* next = nullptr;
        for (unsigned k = 1; k < 32; ++k) {
            const unsigned j = base + ((lane + k) & 31u);
            if (j < ex.nthreads && ex.fibers[j].state == ST_READY && ex.fibers[j].loop == id) {
                next = &ex.fibers[j];
                break;
            }
        }
        if (!next) break;
        switch_to(f, *next);
    }
    return false;
}
constexpr bool loop_exit(unsigned id) {
    if (!std::is_constant_evaluated()) return loop_leave(id);
    return false;
}

// Reconvergence after an `if` in volatile warp code (see _rewrite_warp_loops in compiler.py): a
// GPU runs a divergent branch's lanes while the others wait where the `if` ends. The lockstep of
// volatile accesses (vref) counts accesses, not statements: a lane that skipped a branch ran on
// into the next statement among the lanes still in the branch, and read their slots before they
// stored to them (a volatile argmax tail, `if (s[t] < s[t + 16]) { s[t] = s[t + 16]; i[t] = i[t +
// 16]; }` and so on, lost the maximum: too small a value, silently). The loader puts a guard in
// each branch of such an `if` (the lane is inside it until the guard goes out of scope, also by
// return or break) and a branch_leave after it: a lane there lets every runnable lane of its warp
// still inside that `if` run first, a bounded number of times (never a wait that could block).
struct branch_guard {
    Fiber* f = nullptr;
    constexpr explicit branch_guard(unsigned id) {
        if (!std::is_constant_evaluated()) {
            f = tls.cur;
            if (f) {
                if (f->bdepth < 4) {
                    f->branch[f->bdepth] = id;
                    f->bstamp[f->bdepth] = ++tls.ex->bseq;
                }
                ++f->bdepth;
                // the lanes enter together, as they evaluate the condition together: a lane that
                // leaves at once (its condition false, no volatile access in it) waits for them
                lockstep();
            }
        }
    }
    branch_guard(const branch_guard&) = delete;
    branch_guard& operator=(const branch_guard&) = delete;
    constexpr ~branch_guard() {
        if (!std::is_constant_evaluated() && f && f->bdepth) {
            --f->bdepth;
            f->bleft = ++tls.ex->bseq;
        }
    }
};
// inside that `if` since before `before` (not in a later run of it, a helper's next call)
static inline bool in_branch(const Fiber& o, unsigned id, uint64_t before) {
    const unsigned n = o.bdepth < 4 ? o.bdepth : 4;
    for (unsigned i = 0; i < n; ++i)
        if (o.branch[i] == id && o.bstamp[i] < before) return true;
    return false;
}
static inline void branch_reconverge(unsigned id) {
    Fiber* f = tls.cur;
    if (!f) return;
    Executor& ex = *tls.ex;
    const unsigned lane = f->linear & 31u, base = f->linear - lane;
    const uint64_t left = f->bleft;
    for (unsigned round = 0; round < 4096; ++round) {
        // while a lane is still in it, hand over as lockstep() does, to the next runnable lane in
        // lane order (not straight to a lane inside: that gave it a second turn before the lanes
        // that left the previous `if` had reached this one)
        Fiber* next = nullptr;
        bool inside = false;
        for (unsigned k = 1; k < 32; ++k) {
            const unsigned j = base + ((lane + k) & 31u);
            if (j >= ex.nthreads || ex.fibers[j].state != ST_READY) continue;
            if (!next) next = &ex.fibers[j];
            if (in_branch(ex.fibers[j], id, left)) {
                inside = true;
                break;
            }
        }
        if (!inside) break;
        switch_to(f, *next);
    }
}
constexpr void branch_leave(unsigned id) {
    if (!std::is_constant_evaluated()) branch_reconverge(id);
}

// A statement convergence point: the loader puts one between two statements of user code where a
// thread may store to shared memory what another loads in the later one (or load a slot another
// stores to in the later one) with no barrier or collective between, and between the loads and the
// store of a statement like `s[t] += s[t - 1]` (see _rewrite_warp_statements in compiler.py).
// Warp-synchronous code written without volatile or __syncwarp (the unrolled `if (tid < 32)
// { s[tid] += s[tid + 32]; s[tid] += s[tid + 16]; ... }` tail, `s[lane] = v; w = s[lane ^ 1];`)
// relies on a converged warp running each statement for all its lanes before the next; run one lane
// after the other, lane 0 would read its neighbours' slots before they were written: a different
// number, silently. Each point has a number, increasing in source order; a thread that reaches point
// n waits (stays runnable, hands the CPU over) while any runnable thread of its block is behind it:
// at a smaller (pass, number), or at the same one with a smaller index. So the threads go through
// such a region statement by statement, in thread order (a statement's loads of slots that higher
// threads overwrite come first, as on a GPU), the threads of all warps side by side (PMPP's
// merge_tiled_kernel reads a slot after a barrier that a lower thread overwrites a few statements
// later), and threads that skip a guarded statement wait at the next point for the others (they
// reconverge, as a warp does after a branch). A point numbered at or below the thread's last one
// starts a new pass (a loop's next iteration, a helper called again); a barrier starts afresh. It
// never blocks (it only chooses who runs next), so it cannot deadlock a correct program, and any
// such schedule is one a GPU may run. Cost: a context switch per point per thread.
static inline void stmt_converge(unsigned n) {
    Fiber* f = tls.cur;
    if (!f) return;
    uint64_t pass = f->tick == ~0ull ? 0 : f->tick >> 32;   // (~0: it spun since, see spin_tick)
    if (f->tick != ~0ull && n <= static_cast<uint32_t>(f->tick)) ++pass;
    const uint64_t key = (pass << 32) | n;
    f->tick = key;
    Executor& ex = *tls.ex;
    const unsigned N = ex.nthreads, me = f->linear;
    for (;;) {
        // the thread before this one passed this point after a full check, and no waiting thread has
        // become runnable since: none is behind this one either (threads at this point pass in index
        // order without each scanning the block again: a block's exit after a point was quadratic)
        if (ex.go_next == me && ex.go_key == key && ex.go_gen == ex.ready_gen) {
            ex.go_next = me + 1;
            return;
        }
        Fiber* next = nullptr;
        for (unsigned k = 1; k < N; ++k) {  // round robin from the next thread: usually it is the one behind
            unsigned j = me + k;
            if (j >= N) j -= N;
            const Fiber& o = ex.fibers[j];
            if (o.state == ST_READY && (o.tick < key || (o.tick == key && j < me))) {
                next = &ex.fibers[j];
                break;
            }
        }
        if (!next) {
            ex.go_key = key;
            ex.go_next = me + 1;
            ex.go_gen = ex.ready_gen;
            return;
        }
        switch_to(f, *next);
    }
}
// (nothing at compile time: a constexpr helper that got one still is one)
constexpr void stmt_tick(unsigned n) {
    if (!std::is_constant_evaluated()) stmt_converge(n);
}

template <class T> struct vptr;
// one volatile element: every read and write is a lockstep point
template <class T>
struct vref {
    T* p;
    explicit vref(T* q) : p(q) {}
    vref(T& r) : p(&r) {}
    vref(const vref& o) : p(o.p) {}  // user-provided: passing one through printf's ... is a compile error, not garbage
    T load() const {
        lockstep();
        if constexpr (std::is_scalar_v<std::remove_cv_t<T>>) return *const_cast<const volatile T*>(p);
        else return *p;
    }
    operator T() const { return load(); }
    const vref& store(std::remove_cv_t<T> v) const {  // by value: the source may be volatile itself
        lockstep();
        if constexpr (std::is_scalar_v<std::remove_cv_t<T>>) *const_cast<volatile T*>(p) = v;
        else *p = v;
        return *this;
    }
    const vref& operator=(std::remove_cv_t<T> v) const { return store(v); }
    const vref& operator=(const vref& o) const { return store(o.load()); }
    template <class U> const vref& operator+=(const U& u) const { auto v = load(); v += u; return store(v); }
    template <class U> const vref& operator-=(const U& u) const { auto v = load(); v -= u; return store(v); }
    template <class U> const vref& operator*=(const U& u) const { auto v = load(); v *= u; return store(v); }
    template <class U> const vref& operator/=(const U& u) const { auto v = load(); v /= u; return store(v); }
    template <class U> const vref& operator%=(const U& u) const { auto v = load(); v %= u; return store(v); }
    template <class U> const vref& operator&=(const U& u) const { auto v = load(); v &= u; return store(v); }
    template <class U> const vref& operator|=(const U& u) const { auto v = load(); v |= u; return store(v); }
    template <class U> const vref& operator^=(const U& u) const { auto v = load(); v ^= u; return store(v); }
    template <class U> const vref& operator<<=(const U& u) const { auto v = load(); v <<= u; return store(v); }
    template <class U> const vref& operator>>=(const U& u) const { auto v = load(); v >>= u; return store(v); }
    const vref& operator++() const { auto v = load(); ++v; return store(v); }
    const vref& operator--() const { auto v = load(); --v; return store(v); }
    T operator++(int) const { auto v = load(); auto r = v; ++v; store(v); return r; }
    T operator--(int) const { auto v = load(); auto r = v; --v; store(v); return r; }
    vptr<T> operator&() const { return vptr<T>(p); }
};

// a pointer to volatile T: same size and bits as T*, so a kernel may take one as a parameter
template <class T>
struct vptr {
    T* p;
    vptr() = default;
    vptr(T* q) : p(q) {}
    vptr(std::nullptr_t) : p(nullptr) {}
    // a `volatile T x[N]` array (a `volatile __shared__` one: the rewrite leaves arrays alone) decays to a
    // plain `volatile T*`, passed to a `volatile T*` parameter (Rodinia hybridsort's addData1024)
    template <class U, class = std::enable_if_t<std::is_same_v<U, volatile T>>>
    vptr(U* q) : p(const_cast<T*>(q)) {}
    template <class U, class = std::enable_if_t<std::is_convertible_v<U*, T*>>>
    vptr(vptr<U> o) : p(o.p) {}
    explicit vptr(void* q) : p(static_cast<T*>(q)) {}
    explicit vptr(const void* q) : p(static_cast<T*>(const_cast<void*>(q))) {}
    vref<T> operator[](long long i) const { return vref<T>(p + i); }
    vref<T> operator*() const { return vref<T>(p); }
    T* operator->() const { return p; }
    explicit operator bool() const { return p != nullptr; }
    explicit operator T*() const { return p; }
    explicit operator void*() const { return const_cast<void*>(static_cast<const volatile void*>(p)); }
    template <class I, class = std::enable_if_t<std::is_integral_v<I>>> vptr operator+(I i) const { return vptr(p + i); }
    template <class I, class = std::enable_if_t<std::is_integral_v<I>>> vptr operator-(I i) const { return vptr(p - i); }
    template <class I, class = std::enable_if_t<std::is_integral_v<I>>> friend vptr operator+(I i, vptr a) { return vptr(a.p + i); }
    long long operator-(vptr o) const { return p - o.p; }
    template <class I> vptr& operator+=(I i) { p += i; return *this; }
    template <class I> vptr& operator-=(I i) { p -= i; return *this; }
    vptr& operator++() { ++p; return *this; }
    vptr& operator--() { --p; return *this; }
    vptr operator++(int) { vptr r = *this; ++p; return r; }
    vptr operator--(int) { vptr r = *this; --p; return r; }
    friend bool operator==(vptr a, vptr b) { return a.p == b.p; }
    friend bool operator!=(vptr a, vptr b) { return a.p != b.p; }
    friend bool operator<(vptr a, vptr b) { return a.p < b.p; }
    friend bool operator>(vptr a, vptr b) { return a.p > b.p; }
    friend bool operator<=(vptr a, vptr b) { return a.p <= b.p; }
    friend bool operator>=(vptr a, vptr b) { return a.p >= b.p; }
};
// reinterpret_cast<volatile T*>(x)
template <class T, class U>
static inline vptr<T> vptr_cast(U u) {
    if constexpr (std::is_pointer_v<U>) return vptr<T>((T*)(u));
    else if constexpr (std::is_integral_v<U>) return vptr<T>(reinterpret_cast<T*>(u));
    else return vptr<T>((T*)(u.p));
}
template <class T> struct is_vptr : std::false_type {};
template <class T> struct is_vptr<vptr<T>> : std::true_type {};
}  // namespace __emu

// ---------------------------------------------------------------------------------------------
// 8. Atomics (real across OS threads: std::atomic_ref, relaxed) and fences
// ---------------------------------------------------------------------------------------------
namespace __emu {
template <class T>
static inline std::atomic_ref<T> aref(T* p) { return std::atomic_ref<T>(*p); }
template <class S, class T, class F>
static inline T cas_loop(T* p, F f) {  // T is stored in S-sized bits
    std::atomic_ref<S> a(*reinterpret_cast<S*>(p));
    S old = a.load(std::memory_order_relaxed), nw;
    do {
        T o = from_bits<T>(static_cast<uint64_t>(old));
        T n = f(o);
        nw = static_cast<S>(to_bits(n));
    } while (!a.compare_exchange_weak(old, nw, std::memory_order_relaxed));
    return from_bits<T>(static_cast<uint64_t>(old));
}
}  // namespace __emu

#define EMU_ATOMIC_INT(T)                                                                                        \
    static inline T atomicAdd(T* p, T v) { return ::__emu::aref(p).fetch_add(v, std::memory_order_relaxed); }    \
    static inline T atomicExch(T* p, T v) { return ::__emu::aref(p).exchange(v, std::memory_order_relaxed); }    \
    static inline T atomicAnd(T* p, T v) { return ::__emu::aref(p).fetch_and(v, std::memory_order_relaxed); }    \
    static inline T atomicOr(T* p, T v) { return ::__emu::aref(p).fetch_or(v, std::memory_order_relaxed); }      \
    static inline T atomicXor(T* p, T v) { return ::__emu::aref(p).fetch_xor(v, std::memory_order_relaxed); }    \
    static inline T atomicCAS(T* p, T cmp, T v) {                                                                \
        ::__emu::aref(p).compare_exchange_strong(cmp, v, std::memory_order_relaxed);                             \
        return cmp;                                                                                              \
    }
#define EMU_ATOMIC_MINMAX(T)                                                                                     \
    static inline T atomicMin(T* p, T v) {                                                                       \
        auto a = ::__emu::aref(p);                                                                               \
        T old = a.load(std::memory_order_relaxed);                                                               \
        while (v < old && !a.compare_exchange_weak(old, v, std::memory_order_relaxed)) {}                        \
        return old;                                                                                              \
    }                                                                                                            \
    static inline T atomicMax(T* p, T v) {                                                                       \
        auto a = ::__emu::aref(p);                                                                               \
        T old = a.load(std::memory_order_relaxed);                                                               \
        while (v > old && !a.compare_exchange_weak(old, v, std::memory_order_relaxed)) {}                        \
        return old;                                                                                              \
    }
EMU_ATOMIC_INT(int)
EMU_ATOMIC_INT(unsigned int)
EMU_ATOMIC_INT(unsigned long long)
EMU_ATOMIC_MINMAX(int)
EMU_ATOMIC_MINMAX(unsigned int)
EMU_ATOMIC_MINMAX(long long)
EMU_ATOMIC_MINMAX(unsigned long long)
#undef EMU_ATOMIC_INT
#undef EMU_ATOMIC_MINMAX
static inline int atomicSub(int* p, int v) { return ::__emu::aref(p).fetch_sub(v, std::memory_order_relaxed); }
static inline unsigned int atomicSub(unsigned int* p, unsigned int v) { return ::__emu::aref(p).fetch_sub(v, std::memory_order_relaxed); }
static inline unsigned long long atomicSub(unsigned long long* p, unsigned long long v) { return ::__emu::aref(p).fetch_sub(v, std::memory_order_relaxed); }
static inline long long atomicAnd(long long* p, long long v) { return ::__emu::aref(p).fetch_and(v, std::memory_order_relaxed); }
static inline long long atomicOr(long long* p, long long v) { return ::__emu::aref(p).fetch_or(v, std::memory_order_relaxed); }
static inline long long atomicXor(long long* p, long long v) { return ::__emu::aref(p).fetch_xor(v, std::memory_order_relaxed); }
static inline float atomicAdd(float* p, float v) { return ::__emu::aref(p).fetch_add(v, std::memory_order_relaxed); }
static inline double atomicAdd(double* p, double v) { return ::__emu::aref(p).fetch_add(v, std::memory_order_relaxed); }
static inline float atomicExch(float* p, float v) { return ::__emu::aref(p).exchange(v, std::memory_order_relaxed); }
static inline unsigned short atomicCAS(unsigned short* p, unsigned short cmp, unsigned short v) {
    ::__emu::aref(p).compare_exchange_strong(cmp, v, std::memory_order_relaxed);
    return cmp;
}
static inline unsigned int atomicInc(unsigned int* p, unsigned int val) {
    return ::__emu::cas_loop<unsigned int, unsigned int>(p, [val](unsigned int o) { return o >= val ? 0u : o + 1u; });
}
static inline unsigned int atomicDec(unsigned int* p, unsigned int val) {
    return ::__emu::cas_loop<unsigned int, unsigned int>(p, [val](unsigned int o) { return (o == 0u || o > val) ? val : o - 1u; });
}
static inline __half atomicAdd(__half* p, __half v) {
    return ::__emu::cas_loop<unsigned short, __half>(p, [v](__half o) { return __hadd(o, v); });
}
static inline __nv_bfloat16 atomicAdd(__nv_bfloat16* p, __nv_bfloat16 v) {
    return ::__emu::cas_loop<unsigned short, __nv_bfloat16>(p, [v](__nv_bfloat16 o) { return __hadd(o, v); });
}
static inline __half2 atomicAdd(__half2* p, __half2 v) {
    return ::__emu::cas_loop<unsigned int, __half2>(p, [v](__half2 o) { return __hadd2(o, v); });
}
static inline __nv_bfloat162 atomicAdd(__nv_bfloat162* p, __nv_bfloat162 v) {
    return ::__emu::cas_loop<unsigned int, __nv_bfloat162>(p, [v](__nv_bfloat162 o) { return __hadd2(o, v); });
}
#if ACLNN_EMU_CUDA_ARCH >= 900
// sm_90's vector atomicAdd: each component is atomic on its own (CUDA does not make the vector one access).
static inline float2 atomicAdd(float2* p, float2 v) { return make_float2(atomicAdd(&p->x, v.x), atomicAdd(&p->y, v.y)); }
static inline float4 atomicAdd(float4* p, float4 v) {
    return make_float4(atomicAdd(&p->x, v.x), atomicAdd(&p->y, v.y), atomicAdd(&p->z, v.z), atomicAdd(&p->w, v.w));
}
#endif
#define EMU_SCOPED(NAME)                                                                                         \
    template <class... A>                                                                                        \
    static inline auto NAME##_block(A... a) -> decltype(NAME(a...)) { return NAME(a...); }                       \
    template <class... A>                                                                                        \
    static inline auto NAME##_system(A... a) -> decltype(NAME(a...)) { return NAME(a...); }
EMU_SCOPED(atomicAdd) EMU_SCOPED(atomicSub) EMU_SCOPED(atomicExch) EMU_SCOPED(atomicMin) EMU_SCOPED(atomicMax)
EMU_SCOPED(atomicInc) EMU_SCOPED(atomicDec) EMU_SCOPED(atomicCAS) EMU_SCOPED(atomicAnd) EMU_SCOPED(atomicOr)
EMU_SCOPED(atomicXor)
#undef EMU_SCOPED

static inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
static inline void __threadfence_block() { std::atomic_thread_fence(std::memory_order_seq_cst); }
static inline void __threadfence_system() { std::atomic_thread_fence(std::memory_order_seq_cst); }

// ---------------------------------------------------------------------------------------------
// 9. Math, intrinsics, bit manipulation
// ---------------------------------------------------------------------------------------------
// min/max as CUDA's math_functions.hpp declares them
#define EMU_MINMAX(R, A, B)                                                                                      \
    static inline R min(A a, B b) { return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b); } \
    static inline R max(A a, B b) { return static_cast<R>(a) > static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b); }
EMU_MINMAX(int, int, int)
EMU_MINMAX(unsigned int, unsigned int, unsigned int)
EMU_MINMAX(unsigned int, int, unsigned int)
EMU_MINMAX(unsigned int, unsigned int, int)
EMU_MINMAX(long, long, long)
EMU_MINMAX(unsigned long, unsigned long, unsigned long)
EMU_MINMAX(unsigned long, long, unsigned long)
EMU_MINMAX(unsigned long, unsigned long, long)
EMU_MINMAX(long long, long long, long long)
EMU_MINMAX(unsigned long long, unsigned long long, unsigned long long)
EMU_MINMAX(unsigned long long, long long, unsigned long long)
EMU_MINMAX(unsigned long long, unsigned long long, long long)
#undef EMU_MINMAX
static inline unsigned int umin(unsigned int a, unsigned int b) { return a < b ? a : b; }
static inline unsigned int umax(unsigned int a, unsigned int b) { return a > b ? a : b; }
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }
static inline double min(float a, double b) { return fmin(a, b); }
static inline double max(float a, double b) { return fmax(a, b); }
static inline double min(double a, float b) { return fmin(a, b); }
static inline double max(double a, float b) { return fmax(a, b); }
static inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
static inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
static inline long long llmin(long long a, long long b) { return a < b ? a : b; }
static inline long long llmax(long long a, long long b) { return a > b ? a : b; }

static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
static inline double rcbrt(double x) { return 1.0 / cbrt(x); }
static inline float sinpif(float x) { return static_cast<float>(sin(M_PI * static_cast<double>(x))); }
static inline float cospif(float x) { return static_cast<float>(cos(M_PI * static_cast<double>(x))); }
static inline double sinpi(double x) { return sin(M_PI * x); }
static inline double cospi(double x) { return cos(M_PI * x); }
static inline void sincospif(float x, float* s, float* c) { *s = sinpif(x); *c = cospif(x); }
static inline void sincospi(double x, double* s, double* c) { *s = sinpi(x); *c = cospi(x); }
static inline float rhypotf(float a, float b) { return 1.0f / hypotf(a, b); }
static inline double rhypot(double a, double b) { return 1.0 / hypot(a, b); }
static inline float norm3df(float a, float b, float c) { return static_cast<float>(sqrt(double(a) * a + double(b) * b + double(c) * c)); }
static inline float rnorm3df(float a, float b, float c) { return 1.0f / norm3df(a, b, c); }
static inline float norm4df(float a, float b, float c, float d) { return static_cast<float>(sqrt(double(a) * a + double(b) * b + double(c) * c + double(d) * d)); }
static inline float rnorm4df(float a, float b, float c, float d) { return 1.0f / norm4df(a, b, c, d); }
static inline double norm3d(double a, double b, double c) { return sqrt(a * a + b * b + c * c); }
static inline double rnorm3d(double a, double b, double c) { return 1.0 / norm3d(a, b, c); }
static inline float normf(int n, const float* a) { double s = 0; for (int i = 0; i < n; ++i) s += double(a[i]) * a[i]; return static_cast<float>(sqrt(s)); }
static inline float rnormf(int n, const float* a) { return 1.0f / normf(n, a); }
static inline double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
static inline float normcdff(float x) { return static_cast<float>(normcdf(x)); }
static inline double erfinv(double y) {
    if (y <= -1.0) return y == -1.0 ? -HUGE_VAL : NAN;
    if (y >= 1.0) return y == 1.0 ? HUGE_VAL : NAN;
    if (y != y) return y;
    // Giles' single-precision approximation as the start, then Newton steps in double
    double w = -log((1.0 - y) * (1.0 + y)), x;
    if (w < 5.0) {
        w -= 2.5;
        x = 2.81022636e-08; x = 3.43273939e-07 + x * w; x = -3.5233877e-06 + x * w; x = -4.39150654e-06 + x * w;
        x = 0.00021858087 + x * w; x = -0.00125372503 + x * w; x = -0.00417768164 + x * w; x = 0.246640727 + x * w;
        x = 1.50140941 + x * w;
    } else {
        w = sqrt(w) - 3.0;
        x = -0.000200214257; x = 0.000100950558 + x * w; x = 0.00134934322 + x * w; x = -0.00367342844 + x * w;
        x = 0.00573950773 + x * w; x = -0.0076224613 + x * w; x = 0.00943887047 + x * w; x = 1.00167406 + x * w;
        x = 2.83297682 + x * w;
    }
    x *= y;
    for (int i = 0; i < 3; ++i) x -= (erf(x) - y) / (M_2_SQRTPI * exp(-x * x));
    return x;
}
static inline float erfinvf(float y) { return static_cast<float>(erfinv(y)); }
static inline double erfcinv(double y) { return erfinv(1.0 - y); }
static inline float erfcinvf(float y) { return static_cast<float>(erfcinv(y)); }
static inline double normcdfinv(double p) { return -M_SQRT2 * erfcinv(2.0 * p); }
static inline float normcdfinvf(float p) { return static_cast<float>(normcdfinv(p)); }
static inline double erfcx(double x) { return x < 25.0 ? exp(x * x) * erfc(x) : 1.0 / (x * 1.7724538509055160273) * (1.0 - 0.5 / (x * x)); }
static inline float erfcxf(float x) { return static_cast<float>(erfcx(x)); }
// Modified Bessel functions of the first kind, orders 0 and 1 (libstdc++'s C++17 special functions, in
// double: within CUDA's documented error bounds for the float forms).
static inline double cyl_bessel_i0(double x) { return std::cyl_bessel_i(0.0, fabs(x)); }
static inline double cyl_bessel_i1(double x) { const double r = std::cyl_bessel_i(1.0, fabs(x)); return x < 0 ? -r : r; }
static inline float cyl_bessel_i0f(float x) { return static_cast<float>(cyl_bessel_i0(x)); }
static inline float cyl_bessel_i1f(float x) { return static_cast<float>(cyl_bessel_i1(x)); }
static inline float fdividef(float a, float b) { return a / b; }

// fast-math intrinsics -> the accurate functions (inside the GPU's error bounds)
// glibc declares (but does not export) __expf & co. with C linkage: define them with that linkage
#define EMU_CFN extern "C" __attribute__((visibility("hidden"))) inline
EMU_CFN float __expf(float x) noexcept { return expf(x); }
EMU_CFN float __exp10f(float x) noexcept { return static_cast<float>(pow(10.0, static_cast<double>(x))); }
EMU_CFN float __logf(float x) noexcept { return logf(x); }
EMU_CFN float __log2f(float x) noexcept { return log2f(x); }
EMU_CFN float __log10f(float x) noexcept { return log10f(x); }
EMU_CFN float __powf(float a, float b) noexcept { return powf(a, b); }
EMU_CFN float __sinf(float x) noexcept { return sinf(x); }
EMU_CFN float __cosf(float x) noexcept { return cosf(x); }
EMU_CFN float __tanf(float x) noexcept { return tanf(x); }
EMU_CFN void __sincosf(float x, float* s, float* c) noexcept { *s = sinf(x); *c = cosf(x); }
#undef EMU_CFN
static inline float __fdividef(float a, float b) { return a / b; }
static inline float __saturatef(float x) { return x >= 1.0f ? 1.0f : (x > 0.0f ? x : 0.0f); }  // NaN -> 0
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline float __fsqrt_rn(float x) { return sqrtf(x); }
static inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline float __fmaf_ieee_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dsub_rn(double a, double b) { return a - b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __ddiv_rn(double a, double b) { return a / b; }
static inline double __drcp_rn(double x) { return 1.0 / x; }
static inline double __dsqrt_rn(double x) { return sqrt(x); }
static inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }

// Directed rounding (_rz / _ru / _rd): one operation with the host FPU in that mode. g++ does not
// model the rounding mode, so operands and result pass through volatile: the operation cannot move
// out of the fesetround window.
namespace __emu {
template <class F, class Op>
__attribute__((noinline)) static F rounded(int mode, Op op) {
    const int old = fegetround();
    fesetround(mode);
    volatile F r = op();
    fesetround(old);
    return r;
}
}  // namespace __emu
#define EMU_DIR1(NAME, T, EXPR)                                                                                  \
    static inline T NAME##_rz(T a) { return ::__emu::rounded<T>(FE_TOWARDZERO, [&] { volatile T x = a; return EXPR; }); } \
    static inline T NAME##_ru(T a) { return ::__emu::rounded<T>(FE_UPWARD, [&] { volatile T x = a; return EXPR; }); }     \
    static inline T NAME##_rd(T a) { return ::__emu::rounded<T>(FE_DOWNWARD, [&] { volatile T x = a; return EXPR; }); }
#define EMU_DIR2(NAME, T, OP)                                                                                    \
    static inline T NAME##_rz(T a, T b) { return ::__emu::rounded<T>(FE_TOWARDZERO, [&] { volatile T x = a, y = b; return x OP y; }); } \
    static inline T NAME##_ru(T a, T b) { return ::__emu::rounded<T>(FE_UPWARD, [&] { volatile T x = a, y = b; return x OP y; }); }     \
    static inline T NAME##_rd(T a, T b) { return ::__emu::rounded<T>(FE_DOWNWARD, [&] { volatile T x = a, y = b; return x OP y; }); }
#define EMU_DIR3(NAME, T, FN)                                                                                    \
    static inline T NAME##_rz(T a, T b, T c) { return ::__emu::rounded<T>(FE_TOWARDZERO, [&] { volatile T x = a, y = b, z = c; return FN(x, y, z); }); } \
    static inline T NAME##_ru(T a, T b, T c) { return ::__emu::rounded<T>(FE_UPWARD, [&] { volatile T x = a, y = b, z = c; return FN(x, y, z); }); }     \
    static inline T NAME##_rd(T a, T b, T c) { return ::__emu::rounded<T>(FE_DOWNWARD, [&] { volatile T x = a, y = b, z = c; return FN(x, y, z); }); }
#define EMU_CVT(NAME, FROM, TO)                                                                                  \
    static inline TO NAME##_rz(FROM a) { return ::__emu::rounded<TO>(FE_TOWARDZERO, [&] { volatile FROM x = a; return static_cast<TO>(x); }); } \
    static inline TO NAME##_ru(FROM a) { return ::__emu::rounded<TO>(FE_UPWARD, [&] { volatile FROM x = a; return static_cast<TO>(x); }); }     \
    static inline TO NAME##_rd(FROM a) { return ::__emu::rounded<TO>(FE_DOWNWARD, [&] { volatile FROM x = a; return static_cast<TO>(x); }); }
EMU_DIR2(__fadd, float, +) EMU_DIR2(__fsub, float, -) EMU_DIR2(__fmul, float, *) EMU_DIR2(__fdiv, float, /)
EMU_DIR2(__dadd, double, +) EMU_DIR2(__dsub, double, -) EMU_DIR2(__dmul, double, *) EMU_DIR2(__ddiv, double, /)
EMU_DIR1(__fsqrt, float, sqrtf(x)) EMU_DIR1(__frcp, float, 1.0f / x) EMU_DIR1(__dsqrt, double, sqrt(x)) EMU_DIR1(__drcp, double, 1.0 / x)
EMU_DIR3(__fmaf, float, fmaf) EMU_DIR3(__fma, double, fma)
EMU_CVT(__int2float, int, float) EMU_CVT(__uint2float, unsigned int, float) EMU_CVT(__ll2float, long long, float)
EMU_CVT(__ull2float, unsigned long long, float) EMU_CVT(__ll2double, long long, double)
EMU_CVT(__ull2double, unsigned long long, double)
static inline float __double2float_ru(double a) { return ::__emu::rounded<float>(FE_UPWARD, [&] { volatile double x = a; return static_cast<float>(x); }); }
static inline float __double2float_rd(double a) { return ::__emu::rounded<float>(FE_DOWNWARD, [&] { volatile double x = a; return static_cast<float>(x); }); }
#undef EMU_DIR1
#undef EMU_DIR2
#undef EMU_DIR3
#undef EMU_CVT

// type punning
static inline float __int_as_float(int x) { return __builtin_bit_cast(float, x); }
static inline int __float_as_int(float x) { return __builtin_bit_cast(int, x); }
static inline float __uint_as_float(unsigned int x) { return __builtin_bit_cast(float, x); }
static inline unsigned int __float_as_uint(float x) { return __builtin_bit_cast(unsigned int, x); }
static inline double __longlong_as_double(long long x) { return __builtin_bit_cast(double, x); }
static inline long long __double_as_longlong(double x) { return __builtin_bit_cast(long long, x); }
static inline int __double2hiint(double x) { return static_cast<int>(__builtin_bit_cast(unsigned long long, x) >> 32); }
static inline int __double2loint(double x) { return static_cast<int>(__builtin_bit_cast(unsigned long long, x)); }
static inline double __hiloint2double(int hi, int lo) {
    return __builtin_bit_cast(double, (static_cast<unsigned long long>(static_cast<unsigned>(hi)) << 32) | static_cast<unsigned>(lo));
}

// float/double -> integer (saturating, NaN -> 0, like cvt.*) in every rounding mode (integer ->
// float/double in directed modes: above, with the arithmetic)
namespace __emu {
template <class I, class F>
static inline I cvt_sat(F r) {
    if (r != r) return 0;
    if (r <= static_cast<F>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
    if (r >= static_cast<F>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
    return static_cast<I>(r);
}
}  // namespace __emu
#define EMU_F2I(SRC, NAME, I)                                                                                    \
    static inline I __##SRC##2##NAME##_rn(SRC x) { return ::__emu::cvt_sat<I, SRC>(nearbyint(x)); }              \
    static inline I __##SRC##2##NAME##_rz(SRC x) { return ::__emu::cvt_sat<I, SRC>(trunc(x)); }                  \
    static inline I __##SRC##2##NAME##_rd(SRC x) { return ::__emu::cvt_sat<I, SRC>(floor(x)); }                  \
    static inline I __##SRC##2##NAME##_ru(SRC x) { return ::__emu::cvt_sat<I, SRC>(ceil(x)); }
EMU_F2I(float, int, int) EMU_F2I(float, uint, unsigned int) EMU_F2I(float, ll, long long) EMU_F2I(float, ull, unsigned long long)
EMU_F2I(double, int, int) EMU_F2I(double, uint, unsigned int) EMU_F2I(double, ll, long long) EMU_F2I(double, ull, unsigned long long)
#undef EMU_F2I
static inline float __int2float_rn(int x) { return static_cast<float>(x); }
static inline float __uint2float_rn(unsigned int x) { return static_cast<float>(x); }
static inline float __ll2float_rn(long long x) { return static_cast<float>(x); }
static inline float __ull2float_rn(unsigned long long x) { return static_cast<float>(x); }
static inline double __int2double_rn(int x) { return static_cast<double>(x); }
static inline double __uint2double_rn(unsigned int x) { return static_cast<double>(x); }
static inline double __ll2double_rn(long long x) { return static_cast<double>(x); }
static inline double __ull2double_rn(unsigned long long x) { return static_cast<double>(x); }
static inline float __double2float_rn(double x) { return static_cast<float>(x); }
static inline float __double2float_rz(double x) {
    float f = static_cast<float>(x);
    if (std::isfinite(x) && std::fabs(static_cast<double>(f)) > std::fabs(x)) f = nextafterf(f, 0.0f);
    return f;
}

// integer intrinsics
static inline int __popc(unsigned int x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x ? __builtin_clz(static_cast<unsigned>(x)) : 32; }
static inline int __clzll(long long x) { return x ? __builtin_clzll(static_cast<unsigned long long>(x)) : 64; }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned int __brev(unsigned int x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(x);
}
static inline unsigned long long __brevll(unsigned long long x) {
    return (static_cast<unsigned long long>(__brev(static_cast<unsigned>(x))) << 32) | __brev(static_cast<unsigned>(x >> 32));
}
// SIMD-in-word intrinsics (__vadd4, __vabsdiffu2, __vsetgts4, ...): 2 lanes of 16 bits or 4 of 8,
// each lane computed alone; `us`/`ss`: unsigned/signed saturation; __vcmp* give all-ones lanes,
// __vset* give 1; __vavgs rounds half away from zero ((a + b + (a + b >= 0)) >> 1), __vavgu rounds
// half up, __vhaddu truncates (the semantics of NVIDIA's simd_functions.h).
namespace __emu {
namespace simd {
template <int B>
struct Lane {
    static constexpr unsigned mask = (1u << B) - 1u;
    static constexpr int smin = -(1 << (B - 1)), smax = (1 << (B - 1)) - 1;
    static int sat_s(int v) { return v < smin ? smin : v > smax ? smax : v; }
    static int sat_u(int v) { return v < 0 ? 0 : v > static_cast<int>(mask) ? static_cast<int>(mask) : v; }
};
template <int B, class F>
static inline unsigned map(unsigned a, unsigned b, F f) {
    unsigned r = 0;
    for (int sh = 0; sh < 32; sh += B) {
        const unsigned ua = (a >> sh) & Lane<B>::mask, ub = (b >> sh) & Lane<B>::mask;
        const int sa = static_cast<int>(ua << (32 - B)) >> (32 - B), sb = static_cast<int>(ub << (32 - B)) >> (32 - B);
        r |= (static_cast<unsigned>(f(static_cast<int>(ua), static_cast<int>(ub), sa, sb)) & Lane<B>::mask) << sh;
    }
    return r;
}
template <int B, bool S>
static inline unsigned sad(unsigned a, unsigned b) {
    unsigned r = 0;
    map<B>(a, b, [&](int ua, int ub, int sa, int sb) { r += static_cast<unsigned>(S ? abs(sa - sb) : abs(ua - ub)); return 0; });
    return r;
}
}  // namespace simd
}  // namespace __emu
#define EMU_SIMD(NAME, EXPR)                                                                                     \
    static inline unsigned int NAME##2(unsigned int a, unsigned int b) {                                          \
        using L = ::__emu::simd::Lane<16>;                                                                        \
        return ::__emu::simd::map<16>(a, b, [](int ua, int ub, int sa, int sb) { (void)ua; (void)ub; (void)sa; (void)sb; return (EXPR); }); \
    }                                                                                                             \
    static inline unsigned int NAME##4(unsigned int a, unsigned int b) {                                          \
        using L = ::__emu::simd::Lane<8>;                                                                         \
        return ::__emu::simd::map<8>(a, b, [](int ua, int ub, int sa, int sb) { (void)ua; (void)ub; (void)sa; (void)sb; return (EXPR); }); \
    }
#define EMU_SIMD1(NAME, EXPR)                                                                                    \
    static inline unsigned int NAME##2(unsigned int a) {                                                          \
        using L = ::__emu::simd::Lane<16>;                                                                        \
        return ::__emu::simd::map<16>(a, 0u, [](int ua, int, int sa, int) { (void)ua; return (EXPR); });          \
    }                                                                                                             \
    static inline unsigned int NAME##4(unsigned int a) {                                                          \
        using L = ::__emu::simd::Lane<8>;                                                                         \
        return ::__emu::simd::map<8>(a, 0u, [](int ua, int, int sa, int) { (void)ua; return (EXPR); });           \
    }
EMU_SIMD(__vadd, ua + ub) EMU_SIMD(__vsub, ua - ub)
EMU_SIMD(__vaddss, L::sat_s(sa + sb)) EMU_SIMD(__vsubss, L::sat_s(sa - sb))
EMU_SIMD(__vaddus, L::sat_u(ua + ub)) EMU_SIMD(__vsubus, L::sat_u(ua - ub))
EMU_SIMD(__vabsdiffs, abs(sa - sb)) EMU_SIMD(__vabsdiffu, abs(ua - ub))
EMU_SIMD(__vavgs, (sa + sb + (sa + sb >= 0)) >> 1) EMU_SIMD(__vavgu, (ua + ub + 1) >> 1) EMU_SIMD(__vhaddu, (ua + ub) >> 1)
EMU_SIMD(__vmaxs, sa > sb ? sa : sb) EMU_SIMD(__vmaxu, ua > ub ? ua : ub)
EMU_SIMD(__vmins, sa < sb ? sa : sb) EMU_SIMD(__vminu, ua < ub ? ua : ub)
EMU_SIMD(__vcmpeq, ua == ub ? -1 : 0) EMU_SIMD(__vcmpne, ua != ub ? -1 : 0)
EMU_SIMD(__vcmpges, sa >= sb ? -1 : 0) EMU_SIMD(__vcmpgeu, ua >= ub ? -1 : 0)
EMU_SIMD(__vcmpgts, sa > sb ? -1 : 0) EMU_SIMD(__vcmpgtu, ua > ub ? -1 : 0)
EMU_SIMD(__vcmples, sa <= sb ? -1 : 0) EMU_SIMD(__vcmpleu, ua <= ub ? -1 : 0)
EMU_SIMD(__vcmplts, sa < sb ? -1 : 0) EMU_SIMD(__vcmpltu, ua < ub ? -1 : 0)
EMU_SIMD(__vseteq, ua == ub) EMU_SIMD(__vsetne, ua != ub)
EMU_SIMD(__vsetges, sa >= sb) EMU_SIMD(__vsetgeu, ua >= ub) EMU_SIMD(__vsetgts, sa > sb) EMU_SIMD(__vsetgtu, ua > ub)
EMU_SIMD(__vsetles, sa <= sb) EMU_SIMD(__vsetleu, ua <= ub) EMU_SIMD(__vsetlts, sa < sb) EMU_SIMD(__vsetltu, ua < ub)
EMU_SIMD1(__vabs, sa < 0 ? -sa : sa) EMU_SIMD1(__vabsss, L::sat_s(sa < 0 ? -sa : sa))
EMU_SIMD1(__vneg, -sa) EMU_SIMD1(__vnegss, L::sat_s(-sa))
#undef EMU_SIMD
#undef EMU_SIMD1
static inline unsigned int __vsads2(unsigned int a, unsigned int b) { return ::__emu::simd::sad<16, true>(a, b); }
static inline unsigned int __vsads4(unsigned int a, unsigned int b) { return ::__emu::simd::sad<8, true>(a, b); }
static inline unsigned int __vsadu2(unsigned int a, unsigned int b) { return ::__emu::simd::sad<16, false>(a, b); }
static inline unsigned int __vsadu4(unsigned int a, unsigned int b) { return ::__emu::simd::sad<8, false>(a, b); }
static inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
    unsigned long long v = (static_cast<unsigned long long>(y) << 32) | x;
    unsigned int r = 0;
    for (int i = 0; i < 4; ++i) r |= static_cast<unsigned>((v >> (((s >> (4 * i)) & 7u) * 8)) & 0xffu) << (8 * i);
    return r;
}
static inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned>((v << (s & 31)) >> 32);
}
static inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned>((v << std::min(s, 32u)) >> 32);
}
static inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned>(v >> (s & 31));
}
static inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned>(v >> std::min(s, 32u));
}
static inline int __mulhi(int a, int b) { return static_cast<int>((static_cast<long long>(a) * b) >> 32); }
static inline unsigned int __umulhi(unsigned int a, unsigned int b) { return static_cast<unsigned>((static_cast<unsigned long long>(a) * b) >> 32); }
static inline long long __mul64hi(long long a, long long b) { return static_cast<long long>((static_cast<__int128>(a) * b) >> 64); }
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) { return static_cast<unsigned long long>((static_cast<unsigned __int128>(a) * b) >> 64); }
static inline int __mul24(int a, int b) { return static_cast<int>(static_cast<unsigned>((a << 8) >> 8) * static_cast<unsigned>((b << 8) >> 8)); }
static inline unsigned int __umul24(unsigned int a, unsigned int b) { return (a & 0xffffffu) * (b & 0xffffffu); }
static inline int __hadd(int a, int b) { return static_cast<int>((static_cast<long long>(a) + b) >> 1); }
static inline int __rhadd(int a, int b) { return static_cast<int>((static_cast<long long>(a) + b + 1) >> 1); }
static inline unsigned int __uhadd(unsigned int a, unsigned int b) { return static_cast<unsigned>((static_cast<unsigned long long>(a) + b) >> 1); }
static inline unsigned int __urhadd(unsigned int a, unsigned int b) { return static_cast<unsigned>((static_cast<unsigned long long>(a) + b + 1) >> 1); }
static inline unsigned int __sad(int a, int b, unsigned int c) { return static_cast<unsigned>(a > b ? static_cast<long long>(a) - b : static_cast<long long>(b) - a) + c; }
static inline unsigned int __usad(unsigned int a, unsigned int b, unsigned int c) { return (a > b ? a - b : b - a) + c; }
// sm_61+ dot products of packed bytes / halfwords, accumulated into c (32-bit wrap-around, as dp4a/dp2a).
namespace __emu {
template <bool S>
static inline unsigned dp4a(unsigned a, unsigned b, unsigned c) {
    unsigned r = c;
    for (int i = 0; i < 4; ++i) {
        const int x = S ? static_cast<int>(static_cast<signed char>(a >> (8 * i))) : static_cast<int>((a >> (8 * i)) & 0xffu);
        const int y = S ? static_cast<int>(static_cast<signed char>(b >> (8 * i))) : static_cast<int>((b >> (8 * i)) & 0xffu);
        r += static_cast<unsigned>(x * y);
    }
    return r;
}
template <bool S>
static inline unsigned dp2a(unsigned a, unsigned b, unsigned c, int hi) {  // a: 2 halfwords, b: bytes 2*hi, 2*hi+1
    unsigned r = c;
    for (int i = 0; i < 2; ++i) {
        const int x = S ? static_cast<int>(static_cast<short>(a >> (16 * i))) : static_cast<int>((a >> (16 * i)) & 0xffffu);
        const unsigned bb = b >> (8 * (2 * hi + i));
        const int y = S ? static_cast<int>(static_cast<signed char>(bb)) : static_cast<int>(bb & 0xffu);
        r += static_cast<unsigned>(x * y);
    }
    return r;
}
template <class V> static inline unsigned pack4(V v) {
    return static_cast<unsigned char>(v.x) | static_cast<unsigned char>(v.y) << 8 | static_cast<unsigned char>(v.z) << 16 |
           static_cast<unsigned>(static_cast<unsigned char>(v.w)) << 24;
}
template <class V> static inline unsigned pack2(V v) {
    return static_cast<unsigned short>(v.x) | static_cast<unsigned>(static_cast<unsigned short>(v.y)) << 16;
}
}  // namespace __emu
static inline int __dp4a(int a, int b, int c) { return static_cast<int>(::__emu::dp4a<true>(a, b, c)); }
static inline unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c) { return ::__emu::dp4a<false>(a, b, c); }
static inline int __dp4a(char4 a, char4 b, int c) { return __dp4a(static_cast<int>(::__emu::pack4(a)), static_cast<int>(::__emu::pack4(b)), c); }
static inline unsigned int __dp4a(uchar4 a, uchar4 b, unsigned int c) { return __dp4a(::__emu::pack4(a), ::__emu::pack4(b), c); }
static inline int __dp2a_lo(int a, int b, int c) { return static_cast<int>(::__emu::dp2a<true>(a, b, c, 0)); }
static inline unsigned int __dp2a_lo(unsigned int a, unsigned int b, unsigned int c) { return ::__emu::dp2a<false>(a, b, c, 0); }
static inline int __dp2a_hi(int a, int b, int c) { return static_cast<int>(::__emu::dp2a<true>(a, b, c, 1)); }
static inline unsigned int __dp2a_hi(unsigned int a, unsigned int b, unsigned int c) { return ::__emu::dp2a<false>(a, b, c, 1); }
static inline int __dp2a_lo(short2 a, char4 b, int c) { return __dp2a_lo(static_cast<int>(::__emu::pack2(a)), static_cast<int>(::__emu::pack4(b)), c); }
static inline unsigned int __dp2a_lo(ushort2 a, uchar4 b, unsigned int c) { return __dp2a_lo(::__emu::pack2(a), ::__emu::pack4(b), c); }
static inline int __dp2a_hi(short2 a, char4 b, int c) { return __dp2a_hi(static_cast<int>(::__emu::pack2(a)), static_cast<int>(::__emu::pack4(b)), c); }
static inline unsigned int __dp2a_hi(ushort2 a, uchar4 b, unsigned int c) { return __dp2a_hi(::__emu::pack2(a), ::__emu::pack4(b), c); }
static inline void __prof_trigger(int) {}  // a profiler counter: nothing counts here
static inline void __assume(bool) {}

// loads/stores with cache hints: plain accesses
template <class T> static inline T __ldg(const T* p) { return *p; }
template <class T> static inline T __ldca(const T* p) { return *p; }
template <class T> static inline T __ldcg(const T* p) { return *p; }
template <class T> static inline T __ldcs(const T* p) { return *p; }
template <class T> static inline T __ldlu(const T* p) { return *p; }
template <class T> static inline T __ldcv(const T* p) { return *p; }
template <class T> static inline void __stwb(T* p, T v) { *p = v; }
template <class T> static inline void __stcg(T* p, T v) { *p = v; }
template <class T> static inline void __stcs(T* p, T v) { *p = v; }
template <class T> static inline void __stwt(T* p, T v) { *p = v; }

static inline long long clock64() {
#if defined(__x86_64__)
    return static_cast<long long>(__builtin_ia32_rdtsc());
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
#endif
}
static inline unsigned long long __globaltimer() {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<unsigned long long>(ts.tv_sec) * 1000000000ULL + ts.tv_nsec;
}
[[noreturn]] static inline void __trap() { ::__emu::fail("__trap() called"); }
[[noreturn]] static inline void __brkpt() { ::__emu::fail("__brkpt() called"); }

#ifndef CUDART_INF_F
#define CUDART_INF_F __builtin_huge_valf()
#define CUDART_NAN_F __builtin_bit_cast(float, 0x7fffffffu)
#define CUDART_MIN_DENORM_F __builtin_bit_cast(float, 0x00000001u)
#define CUDART_MAX_NORMAL_F __builtin_bit_cast(float, 0x7f7fffffu)
#define CUDART_NEG_ZERO_F __builtin_bit_cast(float, 0x80000000u)
#define CUDART_ZERO_F 0.0f
#define CUDART_ONE_F 1.0f
#define CUDART_SQRT_HALF_F 0.707106781f
#define CUDART_SQRT_TWO_F 1.414213562f
#define CUDART_THIRD_F 0.333333333f
#define CUDART_PI_F 3.141592654f
#define CUDART_PIO2_F 1.570796327f
#define CUDART_2_OVER_PI_F 0.636619772f
#define CUDART_LN2_F 0.693147181f
#define CUDART_L2E_F 1.442695041f
#define CUDART_INF __builtin_huge_val()
#define CUDART_NAN __builtin_bit_cast(double, 0xfff8000000000000ull)
#define CUDART_NEG_ZERO __builtin_bit_cast(double, 0x8000000000000000ull)
#define CUDART_MIN_DENORM __builtin_bit_cast(double, 0x0000000000000001ull)
#define CUDART_ZERO 0.0
#define CUDART_ONE 1.0
#define CUDART_PI 3.1415926535897931e+0
#define CUDART_PIO2 1.5707963267948966e+0
#define CUDART_SQRT_2PI 2.5066282746310002e+0
#define CUDART_SQRT_HALF 7.0710678118654757e-1
#define CUDART_LN2 6.9314718055994529e-1
#define CUDART_L2E 1.4426950408889634e+0
#endif

// ---------------------------------------------------------------------------------------------
// 10. assert (records an error and ends the thread), unsupported constructs
// ---------------------------------------------------------------------------------------------
namespace __emu {
[[noreturn]] static inline void assert_fail(const char* expr, const char* file, int line) {
    const uint3 t = dims.tid;
    fail("assertion `%s` failed at %s:%d in thread (%u,%u,%u)", expr, base_name(file), line, t.x, t.y, t.z);
}
}  // namespace __emu
#define __EMU_ASSERT_READY 1
#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e) ((e) ? (void)0 : ::__emu::assert_fail(#e, __FILE__, __LINE__))
#endif

// ---------------------------------------------------------------------------------------------
// 11. Kernel registration and the launch entry used by the generated glue
// ---------------------------------------------------------------------------------------------
namespace __emu {
template <class T>
struct alignas(alignof(T)) RawArg {
    unsigned char b[sizeof(T)];
};
template <class T>
static constexpr char kind_of() {
    if constexpr (std::is_pointer_v<T> || std::is_null_pointer_v<T> || is_vptr<T>::value) return 'p';
    else if constexpr (std::is_integral_v<T> || std::is_enum_v<T>) return 'i';
    else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>) return 'f';
    else return 'o';
}

// What the launch passes for a kernel parameter of type A: its value, or for a reference parameter
// (`const float3& bg`, as gsplat's kernels take) the address, as nvcc lowers it (.param .u64).
template <class A>
using Passed = std::conditional_t<std::is_reference_v<A>, std::remove_reference_t<A>*, std::decay_t<A>>;
// What a block hands the kernel for parameter A, from the launch's copy: the referenced object, or
// the copy by const reference (the call's by-value parameter is then the thread's one copy).
template <class A>
static inline decltype(auto) from_passed(const Passed<A>& p) {
    if constexpr (std::is_reference_v<A>) return static_cast<A>(*p);
    else return (p);
}
template <class A>
static inline decltype(auto) unpass(const unsigned char* b) {
    return from_passed<A>(*reinterpret_cast<const Passed<A>*>(b));
}

template <class Sig> struct KSig;
template <class... A>
struct KSig<void (*)(A...)> {
    using Tuple = std::tuple<RawArg<Passed<A>>...>;
    static constexpr unsigned N = sizeof...(A);
    static constexpr unsigned sizes[N + 1] = {static_cast<unsigned>(sizeof(Passed<A>))..., 0u};
    static constexpr char kinds[N + 1] = {kind_of<Passed<A>>()..., 0};
    template <class K, size_t... I>
    static inline void call(K k, const Tuple& t, std::index_sequence<I...>) {
        k(unpass<A>(std::get<I>(t).b)...);
    }
    // A plain-loop block: the parameters are read out of the launch's byte storage once, into
    // locals (which no store of the kernel can alias, as the byte storage can under
    // -fno-strict-aliasing), and each CUDA thread still gets its own by-value copies. The kernel
    // is a template argument, so the call is direct and g++ may inline the kernel into the loop
    // (a 296-byte parameter struct is then not copied per thread: 2-D pooling backward 19 -> 9-11 ms).
    template <auto k, size_t... I>
    static inline void call_block(const Tuple& t, const uint3 bd, std::index_sequence<I...>) {
        loop_block<k>(bd, *reinterpret_cast<const Passed<A>*>(std::get<I>(t).b)...);
    }
    template <auto k>
    static inline void loop_block(const uint3 bd, const Passed<A>... p) {
        for (unsigned z = 0; z < bd.z; ++z)
            for (unsigned y = 0; y < bd.y; ++y)
                for (unsigned x = 0; x < bd.x; ++x) {
                    dims.tid = uint3{x, y, z};
                    k(from_passed<A>(p)...);
                }
    }
    template <size_t... I>
    static inline void pack(Tuple& t, void* const* params, std::index_sequence<I...>) {
        (memcpy(std::get<I>(t).b, params[I], sizeof(Passed<A>)), ...);
    }
};
template <class... A>
struct KSig<void (*)(A...) noexcept> : KSig<void (*)(A...)> {};

struct KernelDesc {
    unsigned nparams;
    const unsigned* sizes;
    const char* kinds;
    size_t args_size, args_align;
    void (*pack)(void* storage, void* const* params);
    void (*thread_fn)(const void* args);
    void (*block_fn)(const void* args);
    const void* var = nullptr;  // a name expression naming a variable (CuPy's get_global): its address
    size_t var_size = 0;
};

template <auto F>
struct KernelImpl {
    using S = KSig<decltype(F)>;
    using Tuple = typename S::Tuple;
    static void pack(void* storage, void* const* params) {
        Tuple* t = new (storage) Tuple;
        S::pack(*t, params, std::make_index_sequence<S::N>{});
    }
    static void thread_fn(const void* args) {
        S::call(F, *static_cast<const Tuple*>(args), std::make_index_sequence<S::N>{});
    }
    static void block_fn(const void* args) {  // plain loop over the block's threads
        S::template call_block<F>(*static_cast<const Tuple*>(args), dims.bdim, std::make_index_sequence<S::N>{});
    }
    static constexpr KernelDesc desc() {
        return KernelDesc{S::N, S::sizes, S::kinds, sizeof(Tuple), alignof(Tuple), &pack, &thread_fn, &block_fn};
    }
};

// One entry of a module's table: a kernel, or (a name expression may name one, as in CuPy) a
// __device__ / __constant__ variable, whose address get_global then returns; taking it keeps a
// static variable that only kernels write.
template <auto F>
constexpr KernelDesc entry_desc() {
    if constexpr (std::is_function_v<std::remove_pointer_t<decltype(F)>>) {
        return KernelImpl<F>::desc();
    } else {
        static_assert(std::is_pointer_v<decltype(F)>, "a name expression must name a kernel or a variable");
        return KernelDesc{0, nullptr, "", 0, 1, nullptr, nullptr, nullptr, F, sizeof(*F)};
    }
}

static inline int launch_entry(const KernelDesc& d, const char* name, bool fibers, const unsigned* grid,
                               const unsigned* block, void** params, size_t shmem, char* errbuf, size_t errlen,
                               int flags, double watchdog_s) {
    auto err = [&](const char* fmt, auto... a) {
        if (errbuf && errlen) snprintf(errbuf, errlen, fmt, a...);
        return 1;
    };
    if (block[0] == 0 || block[1] == 0 || block[2] == 0 || grid[0] == 0 || grid[1] == 0 || grid[2] == 0)
        return err("kernel '%s': zero grid or block dimension", name);
    uint64_t nthreads = static_cast<uint64_t>(block[0]) * block[1] * block[2];
    if (nthreads > kMaxFibers || block[2] > 64) return err("kernel '%s': block (%u,%u,%u) too large", name, block[0], block[1], block[2]);
    if (shmem > kMaxDynSmem) return err("kernel '%s': %zu bytes of dynamic shared memory (max %zu)", name, shmem, kMaxDynSmem);
    const char* fs = getenv("ACLNN_PY_EMU_FORCE_FIBERS");
    const bool force = fs && *fs && *fs != '0';
    alignas(64) unsigned char small[1024];
    unsigned char* storage = small;
    void* heap = nullptr;
    if (d.args_size > sizeof small || d.args_align > 64) {
        heap = aligned_alloc(std::max<size_t>(64, d.args_align), (d.args_size + 63) / 64 * 64);
        storage = static_cast<unsigned char*>(heap);
    }
    d.pack(storage, params);
    Launch* L = new Launch;  // not on the stack: large and shared with the pool threads
    L->name = name;
    L->thread_fn = d.thread_fn;
    L->block_fn = d.block_fn;
    L->args = storage;
    L->grid = uint3{grid[0], grid[1], grid[2]};
    L->block = uint3{block[0], block[1], block[2]};
    L->shmem = shmem;
    L->nthreads = static_cast<unsigned>(nthreads);
    L->nblocks = static_cast<uint64_t>(grid[0]) * grid[1] * grid[2];
    L->fibers = fibers || force;
    L->spin_limit = static_cast<unsigned>(env_size("ACLNN_PY_EMU_SPIN_LIMIT", 1u << 20));
    L->msg[0] = 0;
    L->coop = (flags & 1) != 0;
    if (L->coop) L->fibers = true;  // grid.sync needs every thread as a fiber
    L->watchdog_s = watchdog_s;
    L->maxthr = L->coop ? static_cast<unsigned>(std::min<uint64_t>(L->nblocks, 1u << 20))
                        : pool_threads() + 1 + Launch::kMaxHelpers;
    L->thr = new pthread_t[L->maxthr];
    L->thr_live = new unsigned char[L->maxthr]();
    if (g_rt) g_rt->install();
    const long wid = (g_rt && watchdog_s > 0) ? g_rt->watch(watchdog_s, watchdog_fire, L) : 0;
    run_grid(*L);
    if (g_rt) g_rt->unwatch(wid);
    fflush(stdout);
    int rc = 0;
    if (L->failed.load(std::memory_order_acquire)) {
        rc = 1;
        if (errbuf && errlen) snprintf(errbuf, errlen, "%s", L->msg);
    }
    delete[] L->thr;
    delete[] L->thr_live;
    delete L;
    free(heap);
    return rc;
}
}  // namespace __emu

// Inline PTX: the loader (ptx.py) rewrites each `asm(...)` / `__asm__(...)` statement of the user's
// code into C++ calling the helpers of emu_ptx.h; an instruction it does not know is a static_assert
// naming it. Only `asm` is renamed (to a marker the loader looks for) so that std headers included
// later (they use __asm__) work; a statement the loader left alone fails on the undeclared marker.
#include "emu_ptx.h"
#define asm __emu_inline_asm
// Shifts with a GPU's result for any count: the loader rewrites the user's `a << n` into these.
#include "emu_shifts.h"

// The architecture the user targets (-arch=sm_XX, default sm_80), as NVRTC defines it, so that
// `#if __CUDA_ARCH__ >= 700` branches are taken as on the GPU. Defined last: every header above
// (and the std headers) must not see it. Inline PTX that code then reaches is translated (emu_ptx.h).
#ifndef ACLNN_EMU_CUDA_ARCH
#define ACLNN_EMU_CUDA_ARCH 800
#endif
#define __CUDA_ARCH__ ACLNN_EMU_CUDA_ARCH
#define __CUDACC__ 1
#ifndef __CUDACC_VER_MAJOR__
#define __CUDACC_VER_MAJOR__ 12
#define __CUDACC_VER_MINOR__ 4
#define __CUDACC_VER_BUILD__ 0
#endif
#ifndef CUDART_VERSION
#define CUDART_VERSION 12040
#endif
#ifndef CUDA_VERSION
#define CUDA_VERSION 12040   // <cuda.h>'s: GLM and others test it
#endif
// Before sm_70, CUDA still offers the pre-9.0 warp functions without a mask (all active lanes);
// NVRTC refuses them for sm_70 and later, and so does the emulator.
#if ACLNN_EMU_CUDA_ARCH < 700
#define __shfl(v, ...) __shfl_sync(__activemask(), v, __VA_ARGS__)
#define __shfl_up(v, ...) __shfl_up_sync(__activemask(), v, __VA_ARGS__)
#define __shfl_down(v, ...) __shfl_down_sync(__activemask(), v, __VA_ARGS__)
#define __shfl_xor(v, ...) __shfl_xor_sync(__activemask(), v, __VA_ARGS__)
#define __ballot(p) __ballot_sync(__activemask(), p)
#define __any(p) __any_sync(__activemask(), p)
#define __all(p) __all_sync(__activemask(), p)
#endif

#endif  // ACLNN_PY_CUDA_EMU_H

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
