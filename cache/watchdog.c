/* The hold watchdog: a thread that has any hold older than AUTOGRAPH_MAX_HOLD_US flushed. */
/* A program that launches a kernel and then spins on host-mapped memory that kernel writes, or
 * does long host work in the middle of a sequence, makes no further CUDA call that could flush
 * it: this thread does, through the tick the engine gave it at its start (ag_flush_stale: the
 * watchdog itself knows nothing of streams). It sleeps on a condition variable while nothing is
 * held, and otherwise until the oldest hold would outlive the period (at least an eighth of
 * it): a loop whose holds come and go wakes it about once per period, not four times. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

#include "policy/log.h"
#include "policy/options.h"
#include "policy/stats.h"
#include "cache/clock.h"
#include "cache/internal.h"
#include "cache/nap.h"

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static atomic_int g_sleeping;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static uint64_t (*g_tick)(uint64_t now, uint64_t max_age); /* set before the first kick */

static void *run(void *unused)
{
    (void)unused;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* the application's handlers never run here */
    /* named for debuggers and top; its policy stays the caller's (unlike the worker's): a stale
     * hold must go out promptly */
    pthread_setname_np(pthread_self(), "ag-watchdog");
    /* nothing held yet: asleep until the first hold's kick. Counting 64 idle naps first, it
     * woke every quarter period for the first 32 ms of every process, inside the short timed
     * regions that come right after a program's set-up (46 wakes in `phases`, which never
     * holds; one in G2's shape) */
    int idle = 64;
    uint64_t nap = (uint64_t)ag_opt(AG_OPT_MAX_HOLD_US) * 250u; /* ns: the first, a quarter */
    for (;;) {
        int state = atomic_load(&ag_hot.state);
        if (state != AG_ENGINE_ON && state != AG_ENGINE_UNINIT) /* (started before the engine) */
            return NULL;
        if (!atomic_load(&ag_nholding)) {
            if (++idle > 64) {
                pthread_mutex_lock(&g_mu);
                atomic_store(&g_sleeping, 1);
                while (!atomic_load(&ag_nholding) &&
                       (atomic_load(&ag_hot.state) == AG_ENGINE_ON ||
                        atomic_load(&ag_hot.state) == AG_ENGINE_UNINIT))
                    pthread_cond_wait(&g_cv, &g_mu);
                atomic_store(&g_sleeping, 0);
                pthread_mutex_unlock(&g_mu);
                idle = 0;
            }
        } else {
            idle = 0;
        }
        struct timespec ts = { (time_t)(nap / 1000000000u), (long)(nap % 1000000000u) };
        nanosleep(&ts, NULL);
        uint64_t max_age = (uint64_t)ag_opt(AG_OPT_MAX_HOLD_US) * 1000u, now = ag_now_ns();
        uint64_t oldest = g_tick(now, max_age);
        ag_stat_inc(AG_ST_WATCHDOG_TICKS);
        nap = ag_watchdog_nap(oldest, now, max_age); /* (a hold begun meanwhile is due later) */
    }
}

static void start(void)
{
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &a, run, NULL))
        ag_log(AG_LOG_WARN, "cannot start the hold watchdog: holds end only at the next call");
    pthread_attr_destroy(&a);
}

void ag_watchdog_init(uint64_t (*tick)(uint64_t now, uint64_t max_age))
{
    g_tick = tick;
    pthread_once(&g_once, start); /* now, not in a launch: a thread's creation costs tens of us */
}

void ag_watchdog_kick(void)
{
    if (!g_tick)
        return; /* (the engine's start sets it, before anything can be held) */
    pthread_once(&g_once, start);
    if (atomic_load(&g_sleeping)) {
        pthread_mutex_lock(&g_mu);
        pthread_cond_signal(&g_cv);
        pthread_mutex_unlock(&g_mu);
    }
}
