/* libautograph's own time per call, in a selftime build only (see selftime.h). */
#include "cache/selftime.h"

#ifdef AG_SELFTIME
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

__thread uint64_t ag_self_drv __attribute__((tls_model("initial-exec")));
__thread uint8_t ag_self_state __attribute__((tls_model("initial-exec")));
__thread uint64_t ag_self_marks[AG_SM_COUNT] __attribute__((tls_model("initial-exec")));

/* The slowest launch of each state, with its marks (relative to its start), any thread's. */
static pthread_mutex_t g_slow_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_slow[AG_SELF_KINDS], g_slow_marks[AG_SELF_KINDS][AG_SM_COUNT];
static atomic_ullong g_ticks[AG_SELF_KINDS], g_calls[AG_SELF_KINDS], g_first[AG_SELF_KINDS],
    g_max[AG_SELF_KINDS];
static atomic_long g_first_faults[AG_SELF_KINDS];
/* Per state: each phase's ticks (from a mark to the next one set, or to the end), summed over
 * its launches, and the driver's ticks (inside the phase that passed the launch) */
static atomic_ullong g_phase[AG_SELF_KINDS][AG_SM_COUNT], g_drv[AG_SELF_KINDS];

static long faults_now(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_THREAD, &ru) ? 0 : ru.ru_minflt + ru.ru_majflt;
}

long ag_selftime_faults(enum ag_selftime_kind k)
{
    return atomic_load_explicit(&g_calls[k], memory_order_relaxed) ? 0 : faults_now();
}
static uint64_t g_ticks0, g_ns0;

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void ag_selftime_add(enum ag_selftime_kind k, uint64_t ticks, long faults0)
{
    long faults = faults0 ? faults_now() - faults0 : 0;
    atomic_fetch_add_explicit(&g_ticks[k], ticks, memory_order_relaxed);
    if (!atomic_fetch_add_explicit(&g_calls[k], 1, memory_order_relaxed)) {
        atomic_store(&g_first[k], ticks); /* the first call: what a program's first timed launch pays */
        atomic_store(&g_first_faults[k], faults);
    }
    unsigned long long m = atomic_load_explicit(&g_max[k], memory_order_relaxed);
    while (ticks > m && !atomic_compare_exchange_weak(&g_max[k], &m, ticks))
        ;
}

void ag_selftime_end(enum ag_selftime_kind k, uint64_t ticks, uint64_t drv, long faults0)
{
    ag_selftime_add(k, ticks, faults0);
    int st = k == AG_SELF_LAUNCH ? ag_self_state : (int)k; /* an ordering point: its own marks */
    if (k == AG_SELF_LAUNCH)
        ag_selftime_add((enum ag_selftime_kind)st, ticks, 0);
    uint64_t end = ag_ticks();
    /* each phase runs to the next mark in time (a call sets them in any order of the enum:
     * an ordering point closing a segment passes through a layout's marks) */
    for (int m = 0; m < AG_SM_COUNT; m++) {
        uint64_t t = ag_self_marks[m], next = end;
        if (!t)
            continue;
        for (int o = 0; o < AG_SM_COUNT; o++)
            if (ag_self_marks[o] > t && ag_self_marks[o] < next)
                next = ag_self_marks[o];
        atomic_fetch_add_explicit(&g_phase[st][m], next - t, memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&g_drv[st], drv, memory_order_relaxed);
    if (ticks <= __atomic_load_n(&g_slow[st], __ATOMIC_RELAXED))
        return;
    /* each mark as the time from it to the call's end (the driver's time included) */
    pthread_mutex_lock(&g_slow_mu);
    if (ticks > g_slow[st]) {
        g_slow[st] = ticks;
        for (int m = 0; m < AG_SM_COUNT; m++)
            g_slow_marks[st][m] = ag_self_marks[m] ? end - ag_self_marks[m] : 0;
    }
    pthread_mutex_unlock(&g_slow_mu);
}

static double g_overhead; /* ticks one empty measurement reports */

/* What the measuring itself adds to each call: the same macros around nothing. */
static void __attribute__((noinline)) empty_call(void)
{
    AG_DRV_BEGIN();
    __asm__ volatile("" ::: "memory");
    AG_DRV_END();
}

__attribute__((constructor)) static void start(void)
{
    g_ns0 = now_ns();
    g_ticks0 = ag_ticks();
    uint64_t sum = 0;
    for (int i = 0; i < 100000; i++) {
        const uint64_t t0 = ag_ticks(), d0 = ag_self_drv;
        empty_call();
        sum += ag_ticks() - t0 - (ag_self_drv - d0);
    }
    g_overhead = (double)sum / 100000;
    ag_self_drv = 0;
}

static atomic_ullong g_call_n[AG_SC_COUNT], g_call_t[AG_SC_COUNT];

void ag_selftime_call(enum ag_self_call c, uint64_t ticks)
{
    atomic_fetch_add_explicit(&g_call_n[c], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&g_call_t[c], ticks, memory_order_relaxed);
}

__attribute__((destructor)) static void report(void)
{
    /* ticks per ns, from the whole run */
    double per_ns = (double)(ag_ticks() - g_ticks0) / (double)(now_ns() - g_ns0);
    static const char *const names[AG_SELF_KINDS] = {
        "launch", "stream ordering point", "launch (other: off, capture, ungraphable)",
        "launch (watched)", "launch (rested)", "launch (learning)", "launch (held)",
        "launch (held, a piece sent)"
    };
    for (int k = 0; k < AG_SELF_KINDS; k++) {
        unsigned long long n = atomic_load(&g_calls[k]), t = atomic_load(&g_ticks[k]);
        if (!n && k > AG_SELF_STREAM_ORDER)
            continue;
        fprintf(stderr, "autograph-selftime: %s: %llu calls, %.1f ns of libautograph's own time "
                        "per call (measuring overhead subtracted); first %.1f us (%ld page faults, "
                        "the driver's included), longest %.1f us\n",
                names[k], n, n ? ((double)t / (double)n - g_overhead) / per_ns : 0.0,
                (double)atomic_load(&g_first[k]) / per_ns / 1e3, atomic_load(&g_first_faults[k]),
                (double)atomic_load(&g_max[k]) / per_ns / 1e3);
    }
    static const char *const marks[AG_SM_COUNT] = {
        "begun", "counted", "init", "engine on", "stream found", "locked", "to learn",
        "exit armed", "learner made", "prepared", "layout found", "context asked",
        "probe queued", "layout", "shape", "piece to send", "piece updated", "piece launched",
        "template looked up", "passed", "learned", "legacy rule", "segment ended",
        "closed seen" };
    for (int k = AG_SELF_STREAM_ORDER; k < AG_SELF_KINDS; k++) {
        if (!g_slow[k])
            continue;
        fprintf(stderr, "autograph-selftime: slowest %s: %.1f us own; marks (us before the "
                        "call returned, the driver's time included):", names[k],
                (double)g_slow[k] / per_ns / 1e3);
        for (int m = 0; m < AG_SM_COUNT; m++)
            if (g_slow_marks[k][m])
                fprintf(stderr, " %s %.1f", marks[m], (double)g_slow_marks[k][m] / per_ns / 1e3);
        fprintf(stderr, "\n");
    }
    for (int k = AG_SELF_STREAM_ORDER; k < AG_SELF_KINDS; k++) {
        unsigned long long n = atomic_load(&g_calls[k]);
        if (!n)
            continue;
        fprintf(stderr, "autograph-selftime: mean phases of %s (ns, from each mark to the next; "
                        "the driver's %.0f in the one that passed it):", names[k],
                (double)atomic_load(&g_drv[k]) / (double)n / per_ns);
        for (int m = 0; m < AG_SM_COUNT; m++) {
            unsigned long long t = atomic_load(&g_phase[k][m]);
            if (t)
                fprintf(stderr, " %s %.0f", marks[m], (double)t / (double)n / per_ns);
        }
        fprintf(stderr, "\n");
    }
    static const char *const calls[AG_SC_COUNT] = { "cuGraphExecKernelNodeSetParams",
                                                    "cuGraphExecUpdate", "cuGraphLaunch" };
    for (int c = 0; c < AG_SC_COUNT; c++) {
        unsigned long long n = atomic_load(&g_call_n[c]);
        if (n)
            fprintf(stderr, "autograph-selftime: the engine's %s: %llu calls, %.1f ns each\n",
                    calls[c], n, (double)atomic_load(&g_call_t[c]) / (double)n / per_ns);
    }
    fprintf(stderr, "autograph-selftime: measuring overhead %.1f ns per call (subtracted)\n",
            g_overhead / per_ns);
}
#endif
