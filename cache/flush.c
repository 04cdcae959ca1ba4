/* Flushes: held launches go out, as a graph or eagerly, from any thread; side streams. */
/* A per-thread default stream flushed by another thread sends its held work to a side stream
 * that the owner joins at its next call. */
#include <pthread.h>
#include <stdlib.h>

#include "policy/log.h"
#include "policy/stats.h"
#include "cache/copy.h"
#include "cache/driver.h"
#include "cache/internal.h"
#include "cache/profile.h"

/* ---- flushing (the stream's lock held) -------------------------------------------------- */

/* Issues one held launch as the application made it, on the stream's canonical handle. Nothing
 * is allocated here: a flush may come from the watchdog or an exiting thread, and a launch
 * must not be lost to a failed malloc (ag_hold_one reserved st->ptrs). */
static CUresult issue(ag_stream *st, const ag_rec *r)
{
    if (r->shape.kind == AG_KIND_COPY)
        return ag_copy_issue(st, r); /* a memset or copy (copy.c) */
    const ag_shape *s = &r->shape;
    void *ptrs_small[16], **ptrs = r->lay->nparams <= 16 ? ptrs_small : st->ptrs;
    if (r->lay->nparams > st->ptrs_cap && ptrs != ptrs_small)
        return CUDA_ERROR_OUT_OF_MEMORY; /* cannot happen: reserved when it was held */
    ag_params_ptrs(r->lay, st->arena + r->blob, ptrs);
    int attrs = s->kind == AG_KIND_ATTRS;
    const ag_dims *d = &r->dims;
    CUlaunchConfig c = { d->grid[0], d->grid[1], d->grid[2], d->block[0], d->block[1],
                         d->block[2], d->smem, st->issue,
                         attrs ? (CUlaunchAttribute *)(st->arena + r->attrs) : NULL,
                         attrs ? s->nattrs : 0 };
    ag_launch l = { (CUfunction)s->fn, { d->grid[0], d->grid[1], d->grid[2] },
                    { d->block[0], d->block[1], d->block[2] }, d->smem, st->issue, NULL, 0,
                    r->lay->nparams ? ptrs : NULL, NULL,
                    s->kind == AG_KIND_COOP ? AG_ENTRY_COOP : attrs ? AG_ENTRY_EX : AG_ENTRY_LAUNCH,
                    &c };
    return ag_launch_call(&l);
}

/* A held launch failed when it went out: the application was told CUDA_SUCCESS for it, so the
 * error stays on the stream and its next call returns it (ag_stream_error_take), as the driver
 * returns an earlier launch's error at a sync. The first error is kept. */
static void error_keep(ag_stream *st, CUresult r)
{
    if (!st->err)
        __atomic_store_n(&st->err, (uint16_t)(r > 0xffff ? CUDA_ERROR_UNKNOWN : r),
                         __ATOMIC_RELAXED);
    ag_rest_end(st); /* no call on it may pass on a rest token before the error is returned */
}

CUresult ag_stream_error_take(ag_stream *st, CUresult r)
{
    AG_ASSERT(ag_lock_held(&st->mu));
    CUresult e = (CUresult)st->err;
    if (AG_LIKELY(!e) || r != CUDA_SUCCESS)
        return r; /* the call's own error first; the held launch's comes at the next call */
    __atomic_store_n(&st->err, 0, __ATOMIC_RELAXED);
    return e;
}

void ag_issue_held(ag_stream *st)
{
    AG_ASSERT(ag_lock_held(&st->mu));
    for (uint32_t i = 0; i < st->nheld; i++) {
        CUresult r = issue(st, &st->held[i]);
        if (r != CUDA_SUCCESS) {
            ag_stat_inc(AG_ST_FAIL_EAGER);
            ag_log(AG_LOG_WARN, "held launch of %s failed on flush (%d): the next call on "
                   "stream %p returns the error", st->held[i].lay->name, (int)r,
                   (void *)st->handle);
            error_keep(st, r);
        }
    }
    ag_stat_add(AG_ST_FLUSHED, st->nheld);
}

void ag_flush_locked(ag_stream *st, enum ag_stat reason)
{
    AG_ASSERT(ag_lock_held(&st->mu));
    if (!st->cand)
        return;
    ag_stat_inc(reason);
    if (st->cand->prof) { /* a profile sequence that did not come whole this time */
        ag_issue_held(st);
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
    if (st->held && ag_learn_order(&st->learn, &c))
        ag_on_closed(st, &c);
}

/* ---- per-thread default streams --------------------------------------------------------- */

/* The owner thread, as a hold begins: marks what the stream holds so far, so that a flush from
 * another thread can order the side stream after it. */
int ag_ptds_mark(ag_stream *st)
{
    if (!st->ev_start && ag_drv.cuEventCreate(&st->ev_start, CU_EVENT_DISABLE_TIMING))
        return -1;
    return ag_drv.cuEventRecord(st->ev_start, CU_STREAM_PER_THREAD) ? -1 : 0;
}

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
    ag_flush_foreign(st, AG_ST_FL_EXIT, 0);
    ag_report_keep(st); /* its sequences stay in the stats report */
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
} stale_req;

static void flush_if_stale(ag_stream *st, void *arg)
{
    const stale_req *q = arg;
    if (!__atomic_load_n(&st->nheld, __ATOMIC_RELAXED))
        return;
    if (!ag_trylock(&st->mu))
        return; /* its owner is inside a call on it right now; look again next tick */
    if (st->nheld && st->kind != AG_SK_DEAD && q->now - st->hold_t0 > q->max_age) {
        ag_log(AG_LOG_DEBUG, "hold of %u launches on stream %p timed out", st->nheld,
               (void *)st->handle);
        ag_flush_foreign(st, AG_ST_FL_TIMEOUT, 0);
    }
    ag_unlock(&st->mu);
}

void ag_flush_stale(uint64_t now, uint64_t max_age)
{
    stale_req q = { now, max_age };
    ag_streams_each(flush_if_stale, &q);
}
