/* Ordering points: what each CUDA call that can observe held work asks of the engine. */
/* Stream work and waits, synchronous copies, frees and context syncs, unloads, stream
 * destruction, captures. */
#include <pthread.h>

#include "policy/log.h"
#include "policy/stats.h"
#include "cache/engine.h"
#include "cache/flush.h"
#include "cache/internal.h"
#include "cache/selftime.h"
#include "cache/worker.h"

static CUresult order_stream(CUstream s, int ptsz, int take);

__attribute__((hot)) CUresult ag_order_stream(CUstream s, int ptsz)
{
    if (!ag_engine_started())
        return CUDA_SUCCESS;
    AG_SELF_BEGIN(AG_SELF_STREAM_ORDER);
    CUresult e = order_stream(s, ptsz, 1);
    AG_SELF_END(AG_SELF_STREAM_ORDER);
    return e;
}

/* An ordering point with nothing to do (counted: what resting and stateless streams cost is
 * what the report and the replay model charge them). */
static inline CUresult passed(void)
{
    ag_stat_inc(AG_ST_ORDER_PASSED);
    return CUDA_SUCCESS;
}

/* The ordering point; with `take`, returns (and clears) an error a held launch left on the
 * stream (an error there also keeps the rest paths below from passing: rest.h). */
static __attribute__((hot)) CUresult order_stream(CUstream s, int ptsz, int take)
{
    int captures = atomic_load_explicit(&ag_hot.captures, memory_order_acquire) != 0;
    if (!captures && ag_rest_token_covers(s))
        return passed();
    /* a stream never seen needs no state, unless the legacy rule may concern it */
    ag_stream *st = captures ? ag_stream_find(s, ptsz) : ag_stream_of(s, ptsz);
    if (!st)
        return passed();
    ag_cross_flush(st);
    if (ag_rest_order_passes(st))
        return passed();
    ag_lock(&st->mu);
    if (st->kind == AG_SK_PTDS)
        ag_ptds_join(st);
    if (st->kind != AG_SK_DEAD)
        ag_order_locked(st, AG_ST_FL_ORDER);
    CUresult e = take ? ag_stream_error_take(st, CUDA_SUCCESS) : CUDA_SUCCESS;
    ag_sync_open(st);
    ag_unlock(&st->mu);
    return e;
}

CUresult ag_order_result(CUstream s, int ptsz, CUresult r, CUresult pending)
{
    if (r == CUDA_SUCCESS || !pending)
        return r ? r : pending;
    /* the call failed on its own: the driver's answer first, the held launch's error stays
     * on the stream for its next call */
    ag_stream *st = ag_stream_find(s, ptsz);
    if (!st) /* a context-wide call that failed (no stream to keep it on): said, at least */
        ag_log(AG_LOG_WARN, "the error (%d) of a held launch is lost: the call that was to "
               "return it failed (%d)", (int)pending, (int)r);
    if (st) {
        ag_lock(&st->mu);
        if (!st->err && st->kind != AG_SK_DEAD)
            __atomic_store_n(&st->err, (uint16_t)pending, __ATOMIC_RELAXED);
        ag_rest_end(st);
        ag_unlock(&st->mu);
    }
    return r;
}

CUresult ag_order_sync_copy(int ptsz)
{
    return ag_order_stream(NULL, ptsz);
}

void ag_order_all(void)
{
    if (ag_engine_started())
        ag_flush_all(AG_ST_FL_ALL);
}

CUresult ag_order_all_call(void)
{
    return ag_engine_started() ? ag_flush_all_take() : CUDA_SUCCESS;
}


/* The first error a held launch left on a state being retired (the call retiring it returns
 * it: it is the last call that can). */
static void take_error(ag_stream *st, void *arg)
{
    CUresult *e = arg;
    if (st->kind == AG_SK_DEAD || !__atomic_load_n(&st->err, __ATOMIC_RELAXED))
        return;
    ag_lock(&st->mu);
    CUresult x = ag_stream_error_take(st, CUDA_SUCCESS);
    if (!*e)
        *e = x;
    ag_unlock(&st->mu);
}

CUresult ag_order_invalidate(void)
{
    if (!ag_engine_started())
        return CUDA_SUCCESS;
    ag_layout_drop_pending(); /* no build or probe may use what goes now */
    ag_worker_quiesce(1);
    ag_flush_all(AG_ST_FL_ALL);
    CUresult e = CUDA_SUCCESS;
    ag_streams_each(take_error, &e);
    ag_streams_retire_all(ag_stream_empty);
    ag_layout_invalidate();
    ag_stat_inc(AG_ST_INVALIDATIONS);
    ag_log(AG_LOG_DEBUG, "module unload or context teardown: caches dropped");
    return e;
}

CUresult ag_order_stream_destroy(CUstream s)
{
    if (!ag_engine_started() || s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
        return CUDA_SUCCESS;
    ag_stream *st = ag_stream_find(s, 0);
    if (!st)
        return CUDA_SUCCESS;
    ag_cross_flush(st);
    /* flushed as from any thread: the caller's current context need not be the stream's */
    CUresult e = CUDA_SUCCESS;
    ag_lock(&st->mu);
    if (st->kind != AG_SK_DEAD) {
        ag_flush_foreign(st, AG_ST_FL_ORDER, 0);
        e = ag_stream_error_take(st, CUDA_SUCCESS);
    }
    ag_unlock(&st->mu);
    ag_stream_retire(st, ag_stream_empty);
    return e;
}

/* The application captures: flush everything first, and hold nothing until it is done. */
#define MAX_CAPTURES 64
static struct {
    CUstream s;
    uint64_t thread;
} g_capturing[MAX_CAPTURES];
static pthread_mutex_t g_cap_mu = PTHREAD_MUTEX_INITIALIZER;

void ag_order_capture_begin(CUstream s, int ptsz)
{
    /* first an ordering point on the stream itself, outside the capture: a per-thread stream
     * joins its side stream now (inside the capture the join would invalidate it) */
    if (ag_engine_started())
        order_stream(s, ptsz, 0); /* an error left on it waits: the capture does begin */
    atomic_fetch_add(&ag_hot.captures, 1);
    if (ag_engine_started())
        ag_flush_all(AG_ST_FL_ORDER);
}

void ag_order_capture_begin_done(CUstream s, int ptsz, CUresult r)
{
    if (r != CUDA_SUCCESS) {
        atomic_fetch_sub(&ag_hot.captures, 1);
        return;
    }
    CUstream k = s ? s : (ptsz ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY);
    pthread_mutex_lock(&g_cap_mu);
    for (int i = 0; i < MAX_CAPTURES; i++)
        if (!g_capturing[i].s) {
            g_capturing[i].s = k;
            g_capturing[i].thread = k == CU_STREAM_PER_THREAD ? ag_thread_id() : 0;
            break;
        }
    /* no free slot: the count stays up and launches keep passing through -- safe */
    pthread_mutex_unlock(&g_cap_mu);
}

void ag_order_capture_end(CUstream s, int ptsz)
{
    if (ag_engine_started())
        order_stream(s, ptsz, 0); /* the graph is made: an error left waits for the next call */
}

void ag_order_capture_end_done(CUstream s, int ptsz)
{
    CUstream k = s ? s : (ptsz ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY);
    uint64_t th = k == CU_STREAM_PER_THREAD ? ag_thread_id() : 0;
    pthread_mutex_lock(&g_cap_mu);
    for (int i = 0; i < MAX_CAPTURES; i++)
        if (g_capturing[i].s == k && g_capturing[i].thread == th) {
            g_capturing[i].s = NULL;
            atomic_fetch_sub(&ag_hot.captures, 1);
            break;
        }
    pthread_mutex_unlock(&g_cap_mu);
}

/* ---- stream attributes ------------------------------------------------------------------- */

void ag_order_stream_attr_done(CUstream s, int ptsz, CUresult r)
{
    if (r != CUDA_SUCCESS || !ag_engine_started())
        return;
    ag_stream *st = ag_stream_find(s, ptsz); /* (ag_order_stream made it, when it matters) */
    if (!st)
        return;
    ag_lock(&st->mu);
    if (st->kind != AG_SK_DEAD && st->held) {
        /* while the application captures, the driver is asked nothing: taken as set until the
         * next change */
        if (atomic_load_explicit(&ag_hot.captures, memory_order_acquire))
            st->sattr = 1;
        else
            ag_stream_attrs_read(st);
    }
    ag_unlock(&st->mu);
}
