// rt.cpp -- process-wide runtime of the aclnn_py CPU emulator: fault handlers and the watchdog.
// Built once (cached like kernel modules) and loaded once per process; kernel modules receive
// the EmuRtApi table at load time. See include/emu_rt.h.
#include "emu_rt.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/mman.h>

#include <map>

namespace {

const int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
struct sigaction g_prev[NSIG];
pthread_mutex_t g_install = PTHREAD_MUTEX_INITIALIZER;
thread_local EmuFault* t_fault = nullptr;

int watchdog_signal() { return SIGRTMIN + 5; }

struct AltStack {
    void* mem = nullptr;
    ~AltStack() {
        if (mem) {
            stack_t ss;
            memset(&ss, 0, sizeof ss);
            ss.ss_flags = SS_DISABLE;
            sigaltstack(&ss, nullptr);
            free(mem);
        }
    }
};
thread_local AltStack t_alt;

void ensure_altstack() {
    if (t_alt.mem) return;
    stack_t cur;
    if (sigaltstack(nullptr, &cur) == 0 && !(cur.ss_flags & SS_DISABLE) && cur.ss_size >= 32768) {
        t_alt.mem = nullptr;  // someone else's alternate stack is fine; do not replace it
        static thread_local bool foreign = true;
        (void)foreign;
        return;
    }
    const size_t sz = 128 * 1024;
    void* m = malloc(sz);
    if (!m) return;
    stack_t ss;
    ss.ss_sp = m;
    ss.ss_size = sz;
    ss.ss_flags = 0;
    if (sigaltstack(&ss, nullptr) == 0) t_alt.mem = m;
    else free(m);
}

void chain(int sig, siginfo_t* si, void* uc) {
    struct sigaction& p = g_prev[sig];
    if (p.sa_flags & SA_SIGINFO) {
        if (p.sa_sigaction) {
            p.sa_sigaction(sig, si, uc);
            return;
        }
    } else if (p.sa_handler == SIG_IGN) {
        return;
    } else if (p.sa_handler != SIG_DFL && p.sa_handler != nullptr) {
        p.sa_handler(sig);
        return;
    }
    // default action: restore it; the faulting instruction runs again and the process dies as
    // it would have without us (for a raised signal, raise it again)
    struct sigaction d;
    memset(&d, 0, sizeof d);
    d.sa_handler = SIG_DFL;
    sigaction(sig, &d, nullptr);
    if (si == nullptr || si->si_code <= 0) raise(sig);
}

void on_fault(int sig, siginfo_t* si, void* ucv) {
    EmuFault* f = t_fault;
    if (f && f->armed) {
        f->armed = 0;
        f->sig = sig;
        f->code = si ? si->si_code : 0;
        f->addr = si ? si->si_addr : nullptr;
        f->sp = nullptr;
        f->write = -1;
#if defined(__x86_64__)
        if (ucv) {
            ucontext_t* uc = static_cast<ucontext_t*>(ucv);
            f->sp = reinterpret_cast<void*>(uc->uc_mcontext.gregs[REG_RSP]);
            if (sig == SIGSEGV) f->write = (uc->uc_mcontext.gregs[REG_ERR] & 2) ? 1 : 0;
        }
#endif
        siglongjmp(f->jb, 1);
    }
    chain(sig, si, ucv);
}

void on_watchdog(int sig, siginfo_t*, void*) {
    EmuFault* f = t_fault;
    if (f && f->armed && f->cancel && *f->cancel) {
        f->armed = 0;
        f->sig = sig;
        f->code = 0;
        f->addr = nullptr;
        f->sp = nullptr;
        f->write = -1;
        siglongjmp(f->jb, 1);
    }
}

void install_impl() {
    pthread_mutex_lock(&g_install);
    for (int s : kSignals) {
        struct sigaction cur;
        if (sigaction(s, nullptr, &cur) != 0) continue;
        if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_fault) continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fault;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        if (sigaction(s, &sa, &g_prev[s]) != 0) continue;
    }
    struct sigaction cur;
    if (sigaction(watchdog_signal(), nullptr, &cur) == 0 && !((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_watchdog)) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_watchdog;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaction(watchdog_signal(), &sa, nullptr);
    }
    pthread_mutex_unlock(&g_install);
}

void rt_install() {
    struct sigaction cur;
    if (sigaction(SIGSEGV, nullptr, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_fault) return;
    install_impl();
}

EmuFault* rt_enter(EmuFault* f) {
    ensure_altstack();
    EmuFault* prev = t_fault;
    t_fault = f;
    return prev;
}

void rt_leave(EmuFault* prev) { t_fault = prev; }

// ---- watchdog --------------------------------------------------------------------------------
struct Watch {
    int64_t deadline;
    void (*cb)(void*);
    void* arg;
};
pthread_mutex_t g_wm = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_wcv;
bool g_wstarted = false;
long g_wnext = 1;
std::map<long, Watch>* g_watches = nullptr;
int64_t g_wake = 0;  // when the watchdog thread wakes next (INT64_MAX: only when signalled); under g_wm

int64_t now_ns() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

void* watchdog_main(void*) {
    pthread_mutex_lock(&g_wm);
    for (;;) {
        int64_t t = now_ns();
        int64_t next = INT64_MAX;
        for (auto it = g_watches->begin(); it != g_watches->end();) {
            if (it->second.deadline <= t) {
                Watch w = it->second;
                it = g_watches->erase(it);
                w.cb(w.arg);  // under g_wm: unwatch() waits for it
            } else {
                next = next < it->second.deadline ? next : it->second.deadline;
                ++it;
            }
        }
        g_wake = next;
        if (next == INT64_MAX) {
            pthread_cond_wait(&g_wcv, &g_wm);
        } else {
            int64_t wait = next - now_ns();
            if (wait > 0) {
                struct timespec ts;
                ts.tv_sec = static_cast<time_t>(next / 1000000000LL);
                ts.tv_nsec = static_cast<long>(next % 1000000000LL);
                pthread_cond_timedwait(&g_wcv, &g_wm, &ts);
            }
        }
    }
    return nullptr;
}

void start_watchdog_locked() {
    if (g_wstarted) return;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g_wcv, &ca);
    pthread_condattr_destroy(&ca);
    g_watches = new std::map<long, Watch>();
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    // the watchdog thread never runs kernels: block the watchdog signal there
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    if (pthread_create(&t, &at, watchdog_main, nullptr) == 0) g_wstarted = true;
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    pthread_attr_destroy(&at);
}

long rt_watch(double seconds, void (*cb)(void*), void* arg) {
    if (!(seconds > 0)) return 0;
    pthread_mutex_lock(&g_wm);
    start_watchdog_locked();
    if (!g_wstarted) {
        pthread_mutex_unlock(&g_wm);
        return 0;
    }
    long id = g_wnext++;
    double ns = seconds * 1e9;
    if (ns > 9e18) ns = 9e18;
    const int64_t deadline = now_ns() + static_cast<int64_t>(ns);
    (*g_watches)[id] = Watch{deadline, cb, arg};
    // Wake the watchdog thread only when it would sleep past this deadline: it re-reads every
    // deadline each time it wakes, so a later one is seen in time (saves a thread switch a launch).
    if (deadline < g_wake) {
        g_wake = deadline;
        pthread_cond_signal(&g_wcv);
    }
    pthread_mutex_unlock(&g_wm);
    return id;
}

void rt_unwatch(long id) {
    if (!id) return;
    pthread_mutex_lock(&g_wm);
    if (g_watches) g_watches->erase(id);
    pthread_mutex_unlock(&g_wm);
}

int rt_kill(pthread_t t) { return pthread_kill(t, watchdog_signal()); }

// Fiber stacks, shared by every kernel module of the process. Each module's executor used to keep
// the stacks of its largest block on every OS thread that ran it, for the life of the process: two
// memory mappings each (the stack and its guard page), so a process that loaded a few hundred
// modules (the test suite: CUB, cuRAND, PTX tests with 1024-thread blocks) reached the kernel's
// limit of 65530 mappings and the next mmap failed (the module aborted). An executor now takes its
// stacks from here for a launch and gives them back after it.
constexpr unsigned kMaxCachedStacks = 8192;  // 16384 mappings at most
pthread_mutex_t g_sm = PTHREAD_MUTEX_INITIALIZER;
void* g_stacks[kMaxCachedStacks];
unsigned g_nstacks = 0;
size_t g_stack_len = 0;

unsigned rt_stacks_get(size_t len, unsigned n, void** out) {
    unsigned got = 0;
    pthread_mutex_lock(&g_sm);
    if (g_stack_len == len)
        while (got < n && g_nstacks) out[got++] = g_stacks[--g_nstacks];
    pthread_mutex_unlock(&g_sm);
    const size_t ps = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    for (; got < n; ++got) {
        void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) break;
        if (mprotect(p, ps, PROT_NONE) != 0) {  // guard page: a stack overflow is a clean SIGSEGV
            munmap(p, len);
            break;
        }
        out[got] = p;
    }
    return got;
}

void rt_stacks_put(size_t len, unsigned n, void* const* in) {
    unsigned i = 0;
    pthread_mutex_lock(&g_sm);
    if (g_stack_len != len) {  // another stack size (ACLNN_PY_EMU_STACK_KB differs): the cache restarts
        for (unsigned k = 0; k < g_nstacks; ++k) munmap(g_stacks[k], g_stack_len);
        g_nstacks = 0;
        g_stack_len = len;
    }
    for (; i < n && g_nstacks < kMaxCachedStacks; ++i) g_stacks[g_nstacks++] = in[i];
    pthread_mutex_unlock(&g_sm);
    for (; i < n; ++i) munmap(in[i], len);
}

const EmuRtApi g_api = {EMU_RT_VERSION, rt_install, rt_enter, rt_leave, rt_watch, rt_unwatch, rt_kill,
                        rt_stacks_get, rt_stacks_put};

void after_fork_child() {
    // the watchdog thread does not exist in a forked child
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    memcpy(static_cast<void*>(&g_wm), &m, sizeof m);
    g_wstarted = false;
    g_watches = nullptr;
    g_wake = 0;
    memcpy(static_cast<void*>(&g_sm), &m, sizeof m);  // (the cached stacks are the child's mappings too)
}

__attribute__((constructor)) void rt_init() { pthread_atfork(nullptr, nullptr, after_fork_child); }

}  // namespace

extern "C" __attribute__((visibility("default"))) const EmuRtApi* aclnn_emu_rt_api() { return &g_api; }
