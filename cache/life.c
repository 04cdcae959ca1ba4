/* The process's life: the engine's start on first use, its state, exit and fork. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "policy/log.h"
#include "policy/options.h"
#include "policy/stats.h"
#include "cache/internal.h"
#include "cache/life.h"
#include "cache/process.h"
#include "cache/selftime.h"
#include "cache/tracerec.h"
#include "cache/worker.h"

ag_hot_t ag_hot __attribute__((aligned(64))) = { .registry_gen = 1 };
static pthread_once_t g_prepare_once = PTHREAD_ONCE_INIT;
static int g_tracing; /* AUTOGRAPH_TRACE is set: the engine stays disabled (tracerec.h) */

/* The engine's state only moves forward: UNINIT, then ON or DISABLED, then EXITING; any state
 * may become FORKED (in a fork child). */
static void set_state(enum ag_engine_state to)
{
#ifdef AG_DEBUG
    int from = atomic_load(&ag_hot.state);
    AG_ASSERT(to == AG_ENGINE_FORKED ||
              (from == AG_ENGINE_UNINIT && (to == AG_ENGINE_ON || to == AG_ENGINE_DISABLED)) ||
              ((from == AG_ENGINE_ON || from == AG_ENGINE_DISABLED) && to == AG_ENGINE_EXITING));
#endif
    atomic_store(&ag_hot.state, to);
}

static void at_exit(void)
{
    if (atomic_load(&ag_hot.state) == AG_ENGINE_FORKED)
        return;
    int was_on = ag_engine_on();
    ag_worker_stop(); /* (before the state changes: a build under way finishes normally) */
    set_state(AG_ENGINE_EXITING);
    if (was_on)
        ag_flush_all(AG_ST_FL_EXIT);
    if (!g_tracing) /* (a recording run learns nothing: the profile stays as it was) */
        ag_profile_save();
    ag_report_stats();
    ag_tr_finish();
}

static void exit_room(void)
{
}

static void before_fork(void)
{
    if (ag_engine_started()) { /* (never starts it: registered at cuInit, before any launch) */
        ag_worker_quiesce(0);
        ag_flush_all(AG_ST_FL_EXIT);
    }
    ag_tr_before_fork();
}

static void in_child(void)
{
    /* The child must never touch the parent's graphs or locks: pass everything through. */
    set_state(AG_ENGINE_FORKED);
    ag_worker_forked();
    ag_tr_in_child();
}

/* What can be done before the first launch: options read, the fork handlers, the trace file,
 * the profile. */
static void prepare(void)
{
    pthread_atfork(before_fork, NULL, in_child);
    g_tracing = ag_tr_prepare();
    if (!ag_opt(AG_OPT_DISABLE) && !g_tracing) {
        ag_profile_load();
        if (!ag_tstats)
            ag_stats_thread_block(); /* this thread's counters (usually the first launch's) */
        /* the exit handler must wait for the first launch (below, init), but the first
         * registration's cost need not: glibc makes room for more handlers then (2.5 us in a
         * first launch on the H100 host, selftime marks) */
        atexit(exit_room);
        ag_watchdog_init(ag_flush_stale);
        if (ag_opt(AG_OPT_WORKER))
            ag_worker_start();
    }
}

void ag_engine_prepare(void)
{
    pthread_once(&g_prepare_once, prepare);
}

static void init(void)
{
    atexit(at_exit); /* registered after cudart's own: runs before its teardown */
    AG_SELF_MARK(AG_SM_ATEXIT);
    ag_engine_prepare();
    if (ag_opt(AG_OPT_DISABLE) || g_tracing) {
        /* a recording run records the program's own eager behaviour: nothing is held */
        set_state(AG_ENGINE_DISABLED);
        ag_log(AG_LOG_INFO, "disabled by %s: launches pass through",
               g_tracing ? "AUTOGRAPH_TRACE (recording a trace)" : "AUTOGRAPH_DISABLE");
        return;
    }
    set_state(AG_ENGINE_ON);
    ag_log(AG_LOG_INFO, "active (min repeats %lld, max nodes %lld, max hold %lld us)",
           ag_opt(AG_OPT_MIN_REPEATS), ag_opt(AG_OPT_MAX_NODES), ag_opt(AG_OPT_MAX_HOLD_US));
}

/* Once, without pthread_once: glibc's wakes waiters with a futex system call whether there
 * are any or not, 2.5 us inside a program's first launch on the H100 host (selftime marks,
 * 2026-11-24). A thread that loses the race waits for the winner (init is short). */
static atomic_int g_init_done; /* 0: not begun, 1: under way, 2: done */

int ag_engine_init(void)
{
    int s = atomic_load_explicit(&g_init_done, memory_order_acquire);
    if (s != 2) {
        int none = 0;
        if (s == 0 && atomic_compare_exchange_strong(&g_init_done, &none, 1)) {
            init();
            atomic_store_explicit(&g_init_done, 2, memory_order_release);
        } else {
            while (atomic_load_explicit(&g_init_done, memory_order_acquire) != 2)
                sched_yield();
        }
    }
    return atomic_load(&ag_hot.state);
}
