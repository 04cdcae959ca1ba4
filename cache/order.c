/* Ordering points: what each CUDA call that can observe held work asks of the engine. */
/* Stream work and waits, synchronous copies, frees and context syncs, unloads, stream
 * destruction, captures. */
#include <pthread.h>

#include "policy/log.h"
#include "policy/stats.h"
#include "cache/engine.h"
#include "cache/internal.h"
#include "cache/selftime.h"

static void order_stream(CUstream s, int ptsz);

__attribute__((hot)) void ag_order_stream(CUstream s, int ptsz)
{
    if (!ag_engine_started())
        return;
    AG_SELF_BEGIN();
    order_stream(s, ptsz);
    AG_SELF_END(AG_SELF_STREAM_ORDER);
}

static __attribute__((hot)) void order_stream(CUstream s, int ptsz)
{
    int captures = atomic_load_explicit(&ag_hot.captures, memory_order_acquire) != 0;
    if (!captures && ag_rest_token_covers(s))
        return;
    /* a stream never seen needs no state, unless the legacy rule may concern it */
    ag_stream *st = captures ? ag_stream_find(s, ptsz) : ag_stream_of(s, ptsz);
    if (!st)
        return;
    ag_cross_flush(st);
    if (ag_rest_order_passes(st))
        return;
    ag_lock(&st->mu);
    if (st->kind == AG_SK_PTDS)
        ag_ptds_join(st);
    if (st->kind != AG_SK_DEAD)
        ag_order_locked(st, AG_ST_FL_ORDER);
    ag_sync_open(st);
    ag_unlock(&st->mu);
}

void ag_order_sync_copy(int ptsz)
{
    ag_order_stream(NULL, ptsz);
}

void ag_order_all(void)
{
    if (ag_engine_started())
        ag_flush_all(AG_ST_FL_ALL);
}


void ag_order_invalidate(void)
{
    if (!ag_engine_started())
        return;
    ag_flush_all(AG_ST_FL_ALL);
    ag_streams_retire_all(ag_stream_empty);
    ag_layout_invalidate();
    ag_stat_inc(AG_ST_INVALIDATIONS);
    ag_log(AG_LOG_DEBUG, "module unload or context teardown: caches dropped");
}

void ag_order_stream_destroy(CUstream s)
{
    if (!ag_engine_started() || s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
        return;
    ag_stream *st = ag_stream_find(s, 0);
    if (!st)
        return;
    ag_cross_flush(st);
    ag_stream_retire(st, ag_stream_empty);
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
    ag_order_stream(s, ptsz);
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
