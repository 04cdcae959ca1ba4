/* The worker: a thread of the library that builds graphs while their sequences run eagerly. */
/* The launching thread never waits for it: it hands over a copy of a piece's launches
 * (ag_build_snapshot) and goes on eagerly; the worker makes the graph without any lock and
 * publishes it under the stream's lock (ag_build_finish), and the next occurrence replays it.
 * Its driver calls run in the RELAXED capture mode (they cannot invalidate an application's
 * capture on another thread) and only while no capture is under way anywhere; it uploads on a
 * non-blocking stream of its own per context, never on an application's stream. */
#include "cache/worker.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "policy/log.h"
#include "policy/options.h"
#include "cache/driver.h"
#include "cache/graph.h"
#include "cache/params.h"
#include "cache/process.h"
#include "cache/upload.h"

typedef struct job {
    ag_build_req *q;
    struct job *next;
} job;

/* The queue, and the worker's state: all under g_mu (taken briefly by either side; never
 * while holding it does anyone take a stream's lock). */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_work = PTHREAD_COND_INITIALIZER, g_idle = PTHREAD_COND_INITIALIZER;
static job *g_head, *g_tail;
static int g_started, g_stop, g_busy; /* g_busy: a request is out of the queue, not finished */
static int g_probes;                  /* layout probes due (params.c: ag_layout_async) */
static pthread_t g_thread;

/* Waits while any application capture is under way (the worker's calls could otherwise land
 * between its begin and end); false when the worker must stop instead. */
static int wait_no_capture(void)
{
    while (atomic_load_explicit(&ag_hot.captures, memory_order_acquire)) {
        if (__atomic_load_n(&g_stop, __ATOMIC_ACQUIRE))
            return 0;
        struct timespec ts = { 0, 200000 }; /* 0.2 ms: captures are short */
        nanosleep(&ts, NULL);
    }
    return 1;
}

static void run_one(ag_build_req *q)
{
    if (!wait_no_capture()) {
        ag_build_finish(q, 0);
        return;
    }
    CUcontext ctx = ag_build_ctx(q);
    if (ag_drv.cuCtxSetCurrent(ctx)) {
        ag_build_finish(q, 0);
        return;
    }
    ag_build_run(q, ag_upload_stream(ctx));
    ag_build_finish(q, 1);
}

static void *run(void *unused)
{
    (void)unused;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* the application's handlers never run here */
    if (ag_drv.cuThreadExchangeStreamCaptureMode) {
        CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
        ag_drv.cuThreadExchangeStreamCaptureMode(&m);
    }
    pthread_mutex_lock(&g_mu);
    for (;;) {
        while (!g_head && !g_probes && !__atomic_load_n(&g_stop, __ATOMIC_RELAXED))
            pthread_cond_wait(&g_work, &g_mu);
        if (__atomic_load_n(&g_stop, __ATOMIC_RELAXED))
            break;
        if (ag_layout_take_due()) /* (awake anyway) */
            g_probes = 1;
        if (g_probes) { /* a layout first: a template may be waiting for it */
            g_probes = 0;
            g_busy = 1;
            pthread_mutex_unlock(&g_mu);
            while (ag_layout_probe_pending())
                ;
            pthread_mutex_lock(&g_mu);
            g_busy = 0;
            pthread_cond_broadcast(&g_idle);
            continue;
        }
        job *j = g_head;
        g_head = j->next;
        if (!g_head)
            g_tail = NULL;
        g_busy = 1;
        pthread_mutex_unlock(&g_mu);
        run_one(j->q);
        free(j);
        pthread_mutex_lock(&g_mu);
        g_busy = 0;
        pthread_cond_broadcast(&g_idle);
    }
    g_busy = 0;
    pthread_cond_broadcast(&g_idle);
    pthread_mutex_unlock(&g_mu);
    return NULL;
}

static void (*g_arm)(void);            /* ag_worker_start's `arm` */

/* Layout probes are due (params.c). */
static void wake_for_probes(void)
{
    if (g_arm)
        g_arm();
    pthread_mutex_lock(&g_mu);
    g_probes = 1;
    pthread_cond_signal(&g_work);
    pthread_mutex_unlock(&g_mu);
}

/* Under g_mu. */
static int start_locked(void)
{
    int started = __atomic_load_n(&g_started, __ATOMIC_RELAXED);
    if (started)
        return started > 0;
    /* Cold work never takes the CPU from the application: a SCHED_BATCH thread does not
     * preempt the thread that woke it. On a CPU shared with the launching thread (a container
     * of one CPU, a pinned rank) a wake-up for a layout probe otherwise ran the probe, 50-300
     * us, inside the launch that asked for it (cuBLAS timed once on one CPU, H100 host,
     * selftime marks, 2026-11-25). Set, not inherited: a real-time caller's policy would be. */
    pthread_attr_t a;
    pthread_attr_init(&a);
    int r = pthread_create(&g_thread, &a, run, NULL);
    pthread_attr_destroy(&a);
    if (!r) { /* (glibc's thread attributes take no SCHED_BATCH: set once it runs) */
        struct sched_param none = { 0 };
        pthread_setschedparam(g_thread, SCHED_BATCH, &none);
        pthread_setname_np(g_thread, "ag-worker");
    }
    __atomic_store_n(&g_started, r ? -1 : 1, __ATOMIC_RELAXED); /* (read unlocked: worker_on) */
    if (!r)
        ag_layout_async(wake_for_probes); /* layouts are asked about here from now on */
    if (r)
        ag_log(AG_LOG_WARN, "cannot start the worker thread: graphs are built on the launching "
               "thread");
    return !r;
}

void ag_worker_start(void (*arm)(void))
{
#ifdef AG_SIM
    (void)arm;
    return; /* the model runs the engine on one thread (ag_worker_on) */
#endif
    g_arm = arm;
    pthread_mutex_lock(&g_mu);
    if (!__atomic_load_n(&g_stop, __ATOMIC_RELAXED))
        start_locked();
    pthread_mutex_unlock(&g_mu);
}

int ag_worker_on(void)
{
#ifdef AG_SIM
    return 0; /* the model runs the engine on one thread: builds happen where they are asked */
#else
    return ag_opt(AG_OPT_WORKER) && __atomic_load_n(&g_started, __ATOMIC_RELAXED) >= 0 &&
           !__atomic_load_n(&g_stop, __ATOMIC_RELAXED);
#endif
}

int ag_worker_submit(ag_build_req *q)
{
    job *j = malloc(sizeof *j);
    if (!j)
        return -1;
    j->q = q;
    j->next = NULL;
    if (g_arm)
        g_arm();
    pthread_mutex_lock(&g_mu);
    if (__atomic_load_n(&g_stop, __ATOMIC_RELAXED) || !start_locked()) {
        pthread_mutex_unlock(&g_mu);
        free(j);
        return -1;
    }
    if (g_tail)
        g_tail->next = j;
    else
        g_head = j;
    g_tail = j;
    pthread_cond_signal(&g_work);
    pthread_mutex_unlock(&g_mu);
    return 0;
}

/* Takes every queued request out (under g_mu). */
static job *take_all_locked(void)
{
    job *j = g_head;
    g_head = g_tail = NULL;
    return j;
}

static void drop(job *j)
{
    while (j) {
        job *next = j->next;
        ag_build_finish(j->q, 0);
        free(j);
        j = next;
    }
}

void ag_worker_quiesce(int forget_streams)
{
    pthread_mutex_lock(&g_mu);
    job *j = take_all_locked();
    while (g_busy)
        pthread_cond_wait(&g_idle, &g_mu);
    if (forget_streams) /* (the worker is idle and cannot take a job before g_mu is let go) */
        ag_upload_streams_forget();
    pthread_mutex_unlock(&g_mu);
    drop(j);
}

void ag_worker_stop(void)
{
    pthread_mutex_lock(&g_mu);
    int joinable = __atomic_load_n(&g_started, __ATOMIC_RELAXED) > 0 && !g_stop;
    __atomic_store_n(&g_stop, 1, __ATOMIC_RELEASE);
    ag_layout_async(NULL);
    job *j = take_all_locked();
    pthread_cond_broadcast(&g_work);
    pthread_mutex_unlock(&g_mu);
    drop(j);
    if (joinable)
        pthread_join(g_thread, NULL);
}

void ag_worker_forked(void)
{
    /* the child has no worker thread; its engine passes everything through (life.c) */
    pthread_mutex_init(&g_mu, NULL);
    pthread_cond_init(&g_work, NULL);
    pthread_cond_init(&g_idle, NULL);
    g_head = g_tail = NULL;
    ag_layout_async(NULL);
    __atomic_store_n(&g_started, 0, __ATOMIC_RELAXED);
    g_busy = 0;
    __atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
}
