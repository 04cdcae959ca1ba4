/* Flushes: held launches go out, as a graph or eagerly, from any thread; side streams. */
/* A per-thread default stream flushed by another thread sends its held work to a side stream
 * that the owner joins at its next call. */
#include <pthread.h>
#include <stdlib.h>

#include "policy/log.h"
#include "policy/stats.h"
#include "cache/copy.h"
#include "cache/driver.h"
#include "cache/flush.h"
#include "cache/selftime.h"
#include "cache/internal.h"
#include "cache/profile.h"

/* ---- flushing (the stream's lock held) -------------------------------------------------- */

void ag_flush_locked(ag_stream *st, enum ag_stat reason)
{
    AG_ASSERT(ag_lock_held(&st->mu));
    if (!st->cand)
        return;
    ag_stat_inc(reason);
    if (st->cand->prof) { /* a profile sequence that did not come whole this time */
        ag_issue_held(st, ag_fate_flushed(reason));
        ag_learn_held(st);
        ag_profile_failed(st->cand->prof);
        free(st->cand);
        ag_hold_end(st);
        return;
    }
    ag_tmpl *T = st->nheld ? ag_exact_template(st) : NULL;
    if (T) {
        ag_hold_switch(st, T);
        ag_complete(st);
        return;
    }
    ag_log(AG_LOG_TRACE, "flushing %u held launches of sequence %016llx eagerly (%s)", st->nheld,
           (unsigned long long)st->cand->key, ag_stat_names[reason]);
    ag_hold_abort(st, reason);
}

void ag_order_locked(ag_stream *st, enum ag_stat reason)
{
    AG_ASSERT(ag_lock_held(&st->mu));
    ag_flush_locked(st, reason);
    ag_closed c;
    int closed = st->held && ag_learn_order(&st->learn, &c);
    AG_SELF_MARK(AG_SM_O_FLUSHED);
    if (closed) {
        ag_on_closed(st, &c);
        AG_SELF_MARK(AG_SM_O_CLOSED);
    }
}

/* ---- per-thread default streams --------------------------------------------------------- */

/* Another thread flushes st (a per-thread stream that is not its own): the held work goes to
 * a side stream ordered after the hold's start, and the owner joins it at its next call. */
static int ptds_redirect_begin(ag_stream *st)
{
    if ((!st->side && ag_drv.cuStreamCreate(&st->side, 0)) ||
        (!st->ev_side && ag_drv.cuEventCreate(&st->ev_side, CU_EVENT_DISABLE_TIMING)) ||
        ag_drv.cuStreamWaitEvent(st->side, st->ev_start, 0))
        return -1;
    st->issue = st->side;
    return 0;
}

static void ptds_redirect_end(ag_stream *st)
{
    st->issue = st->handle;
    if (ag_drv.cuEventRecord(st->ev_side, st->side) == CUDA_SUCCESS)
        __atomic_store_n(&st->join_pending, 1, __ATOMIC_RELAXED);
    else /* cannot happen short of a dead context; the owner then waits for everything */
        ag_drv.cuStreamSynchronize(st->side);
    ag_stat_inc(AG_ST_FL_REDIRECT);
}

/* ---- flushing from any thread ----------------------------------------------------------- */

typedef struct {
    ag_ctxinfo *ci;       /* only this context; NULL: all */
    int blocking_only;    /* only blocking, non-legacy streams */
    enum ag_stat reason;
    uint64_t own;         /* nonzero: end the learning segments of this thread's streams
                           * only (the others are flushed), and take an error a held launch
                           * left on one of them */
    int take;
    CUresult err;
} flush_req;

void ag_flush_foreign(ag_stream *st, enum ag_stat reason, int order)
{
    AG_ASSERT(ag_lock_held(&st->mu));
    /* Called from a thread whose current context may not be the stream's (a free in another
     * context, the watchdog, exit): what we issue must go to the stream's context. */
    CUcontext cur = NULL;
    int sw = st->nheld && !ag_drv.cuCtxGetCurrent(&cur) && cur != st->ctx &&
             !ag_drv.cuCtxSetCurrent(st->ctx);
    int redirect = st->kind == AG_SK_PTDS && st->nheld && st->key.thread != ag_thread_id();
    if (redirect && ptds_redirect_begin(st)) {
        /* nowhere safe to put it: the owner's next call (or exit) flushes it */
        ag_log(AG_LOG_WARN, "cannot flush another thread's per-thread stream; left held");
    } else {
        if (order)
            ag_order_locked(st, reason);
        else
            ag_flush_locked(st, reason);
        if (redirect)
            ptds_redirect_end(st);
    }
    ag_sync_open(st);
    if (sw)
        ag_drv.cuCtxSetCurrent(cur);
}

static void flush_each(ag_stream *st, void *arg)
{
    flush_req *q = arg;
    if (q->ci && st->ci != q->ci)
        return;
    if (q->blocking_only && (st->kind == AG_SK_LEGACY || !st->blocking ||
                             !__atomic_load_n(&st->open, __ATOMIC_RELAXED)))
        return;
    if (st->kind == AG_SK_DEAD)
        return;
    ag_lock(&st->mu);
    int own = q->own && st->last_thread == q->own;
    ag_flush_foreign(st, q->reason, !q->own || own);
    if (own && q->take && st->err && !q->err)
        q->err = ag_stream_error_take(st, CUDA_SUCCESS);
    ag_unlock(&st->mu);
}

static CUresult flush_all(enum ag_stat reason, int take)
{
    /* A free or a context-wide sync is a fixed point in the program order of the thread that
     * makes it, and so in that of the streams it launches on: their segments end there, as at
     * any ordering point (a loop that frees mid-way is learned as the parts between frees).
     * To another thread's streams it comes at any moment: ending their segments there would
     * cut their sequences at random places, and they would never repeat. */
    flush_req q = { NULL, 0, reason, reason == AG_ST_FL_ALL ? ag_thread_id() : 0, take, 0 };
    ag_streams_each(flush_each, &q);
    return q.err;
}

void ag_flush_all(enum ag_stat reason)
{
    flush_all(reason, 0);
}

CUresult ag_flush_all_take(void)
{
    return flush_all(AG_ST_FL_ALL, 1);
}

/* ---- a thread that exits ---------------------------------------------------------------- */

static void exit_flush(ag_stream *st)
{
    ag_flush_foreign(st, AG_ST_FL_EXIT, 0); /* (its sequences stay in the report: empty) */
}

void ag_ptds_thread_exit(void *unused)
{
    (void)unused;
    if (!ag_engine_started())
        return;
    /* the owner itself flushes what its per-thread streams hold, onto them, before they go */
    int n = ag_streams_retire_thread(ag_thread_id(), exit_flush, ag_stream_empty);
    if (n)
        ag_log(AG_LOG_DEBUG, "thread %llu exits: %d per-thread stream state%s retired",
               (unsigned long long)ag_thread_id(), n, n > 1 ? "s" : "");
}

__attribute__((noinline)) void ag_cross_flush_slow(ag_stream *st)
{
    ag_ctxinfo *ci = st->ci;
    if (st->kind == AG_SK_LEGACY) {
        flush_req q = { ci, 1, AG_ST_FL_CROSS, 0, 0, 0 };
        ag_streams_each(flush_each, &q);
    } else {
        pthread_mutex_lock(&ag_registry_mu); /* keeps ci->legacy alive */
        ag_stream *lg = ci->legacy;
        if (lg) {
            ag_lock(&lg->mu);
            ag_flush_foreign(lg, AG_ST_FL_CROSS, 1);
            ag_unlock(&lg->mu);
        }
        pthread_mutex_unlock(&ag_registry_mu);
    }
}

/* ---- the hold watchdog's call ----------------------------------------------------------- */

typedef struct {
    uint64_t now, max_age;
    uint64_t oldest; /* the oldest hold left began then (0: none) */
} stale_req;

static void left(stale_req *q, uint64_t t0)
{
    if (!q->oldest || t0 < q->oldest)
        q->oldest = t0;
}

static void flush_if_stale(ag_stream *st, void *arg)
{
    stale_req *q = arg;
    if (!__atomic_load_n(&st->nheld, __ATOMIC_RELAXED))
        return;
    if (!ag_trylock(&st->mu)) {
        /* its owner is inside a call on it right now; look again in a quarter period */
        left(q, q->now - q->max_age + q->max_age / 4);
        return;
    }
    if (st->nheld && st->kind != AG_SK_DEAD && q->now - st->hold_t0 > q->max_age) {
        ag_log(AG_LOG_DEBUG, "hold of %u launches on stream %p timed out", st->nheld,
               (void *)st->handle);
        ag_flush_foreign(st, AG_ST_FL_TIMEOUT, 0);
    }
    if (st->nheld && st->kind != AG_SK_DEAD)
        left(q, st->hold_t0);
    ag_unlock(&st->mu);
}

uint64_t ag_flush_stale(uint64_t now, uint64_t max_age)
{
    stale_req q = { now, max_age, 0 };
    ag_streams_each(flush_if_stale, &q);
    return q.oldest;
}

/* ---- emptying a stream's state ---------------------------------------------------------- */

/* Everything a retired stream state holds goes: what is held (flushed), its templates and graphs,
 * what it learned (kept for the profile first). */
void ag_stream_empty(ag_stream *st)
{
    AG_ASSERT(ag_lock_held(&st->mu));
    ag_flush_locked(st, AG_ST_FL_ALL);
    ag_profile_keep(st); /* what it learned outlives it in the profile */
    ag_report_keep(st);  /* ... and in the stats report (a destroyed stream's, an unload's) */
    ag_tmpls_free(st);
    if (st->held) {
        ag_learn_free(&st->learn);
        free(st->held);
        st->held = NULL;
    }
    ag_marks_free(st);
    ag_sync_open(st);
    free(st->arena);
    free(st->ptrs);
    st->arena = NULL;
    st->ptrs = NULL;
    st->arena_cap = st->ptrs_cap = 0;
}
