#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// emu_rt.h -- the interface between emulated kernel modules and the process-wide emulator
// runtime library (aclnn_py/emulator/rt.cpp, built once and loaded once per process).
//
// One library owns the signal handlers (SIGSEGV, SIGBUS, SIGFPE, SIGILL and the watchdog signal)
// and the watchdog thread, so that any number of kernel modules can be loaded without chaining
// handlers through each other. A module arms a per-OS-thread EmuFault while it runs user code;
// a fault (or a watchdog expiry) while armed siglongjmps back to the module's block loop, which
// records the error for the next synchronize; a fault while not armed goes to the handler that
// was installed before (Python's faulthandler, or the default action).
#ifndef ACLNN_PY_EMU_RT_H
#define ACLNN_PY_EMU_RT_H
#include <setjmp.h>
#include <signal.h>
#include <pthread.h>
#include <stddef.h>

struct EmuFault {
    sigjmp_buf jb;
    volatile sig_atomic_t armed;  // 1 while user kernel code may run on this thread
    volatile sig_atomic_t sig;    // the signal that fired
    int code;                     // si_code
    void* addr;                   // si_addr
    void* sp;                     // stack pointer at the fault (stack-overflow detection)
    int write;                    // 1 when the page fault was a write (x86-64 error code), -1 unknown
    volatile int* cancel;         // the launch's watchdog flag: the watchdog signal only acts when set
};

struct EmuRtApi {
    int version;
    void (*install)();                                           // (re)install the handlers if replaced
    EmuFault* (*enter)(EmuFault*);                                 // arm on this thread; returns the previous
    void (*leave)(EmuFault* prev);
    long (*watch)(double seconds, void (*cb)(void*), void* arg);  // cb runs on the watchdog thread
    void (*unwatch)(long id);                                     // after it returns cb is not running
    int (*kill_thread)(pthread_t t);                              // sends the watchdog signal
    // Fiber stacks of `len` bytes (the first page a guard), cached for every module of the process:
    // stacks_get fills out[0..n) and returns how many it could (mapping what the cache lacks),
    // stacks_put takes them back (beyond the cache's bound they are unmapped).
    unsigned (*stacks_get)(size_t len, unsigned n, void** out);
    void (*stacks_put)(size_t len, unsigned n, void* const* in);
};

#define EMU_RT_VERSION 2
#endif

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
