/* The process's life: the engine's start on first use, its state, exit and fork. */
#include <pthread.h>
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

/* The exit handler is registered after cudart's own, so that it runs before cudart's
 * teardown, while the driver still takes what is held: before anything is held, before the
 * worker is first woken (it must be stopped before the driver goes: ag_worker_start), when a
 * stream first learns with a profile to save, or at the first launch recorded in a trace (the
 * recorder reads the GPU's timings at exit). Otherwise an exit needs only the report
 * (at_unload). Never in cuInit (cudart registers its own later), nor in the first launch or the
 * first learning one: glibc's atexit, run cold there, took 1.8-2.4 us of a 4 us first launch on
 * the H100 host (selftime marks, 2026-11-25), and 1.1-2.6 us of the first learning launch of a
 * cuBLAS loop timed once (G2, seventeenth session), which never holds. */
atomic_int ag_exit_armed;

void ag_engine_arm_exit(void)
{
    int no = 0;
    if (!atomic_load_explicit(&ag_exit_armed, memory_order_relaxed) &&
        atomic_compare_exchange_strong(&ag_exit_armed, &no, 1)) {
        atexit(at_exit);
        ag_log(AG_LOG_DEBUG, "exit handler registered (%s)",
               g_tracing ? "a launch recorded" : "a hold, the worker or a profile");
    }
}

void ag_engine_first_learning(void)
{
    if (*ag_opt_str(AG_OPT_PROFILE)) /* (saved at exit) */
        ag_engine_arm_exit();
}

__attribute__((destructor)) static void at_unload(void)
{
    int s = atomic_load(&ag_hot.state);
    if (!atomic_load(&ag_exit_armed) && s != AG_ENGINE_UNINIT && s != AG_ENGINE_FORKED)
        ag_report_stats();
}

/* The engine's start, at cuInit (or, where that was not seen, the first launch): options read,
 * the fork handlers, the trace file, the profile, the worker; then launches may be held. All
 * of it outside whatever the program times later: a first launch that started the engine paid
 * 1.6-2.1 us more for this code's first run (selftime marks, H100 host, 2026-11-25). */
static void prepare(void)
{
    pthread_atfork(before_fork, NULL, in_child);
    g_tracing = ag_tr_prepare();
    /* this thread's counters (usually the first launch's), whatever the engine does: every
     * launch counts, and a disabled engine's first launch made them in its timed region
     * (C1 with AUTOGRAPH_DISABLE=1: 0.818x, H200, twenty-eighth session) */
    if (!ag_tstats)
        ag_stats_thread_block();
    if (ag_opt(AG_OPT_DISABLE) || g_tracing) {
        /* a recording run records the program's own eager behaviour: nothing is held */
        set_state(AG_ENGINE_DISABLED);
        ag_log(AG_LOG_INFO, "disabled by %s: launches pass through",
               g_tracing ? "AUTOGRAPH_TRACE (recording a trace)" : "AUTOGRAPH_DISABLE");
        return;
    }
    if (ag_opt_launch_blocking()) { /* (options.h: why; a debugging run, so said aloud) */
        set_state(AG_ENGINE_DISABLED);
        ag_log(AG_LOG_WARN, "CUDA_LAUNCH_BLOCKING is set: every launch passes through, "
                            "nothing is graphed");
        return;
    }
    ag_profile_load();
    /* the exit handler waits (above), but the first registration's cost need not: glibc makes
     * room for more handlers then (2.5 us in a first launch on the H100 host, selftime marks) */
    atexit(exit_room);
    ag_stream_spares();
    ag_layout_spares();
    ag_watchdog_init(ag_flush_stale);
    if (ag_opt(AG_OPT_WORKER))
        ag_worker_start(ag_engine_arm_exit);
    set_state(AG_ENGINE_ON);
    ag_log(AG_LOG_INFO, "active (min repeats %lld, max nodes %lld, max hold %lld us)",
           ag_opt(AG_OPT_MIN_REPEATS), ag_opt(AG_OPT_MAX_NODES), ag_opt(AG_OPT_MAX_HOLD_US));
}

void ag_engine_prepare(void)
{
    pthread_once(&g_prepare_once, prepare);
}

int ag_engine_init(void)
{
    ag_engine_prepare();
    AG_SELF_MARK(AG_SM_INIT);
    return atomic_load(&ag_hot.state);
}
