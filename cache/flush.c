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

/* Issues one held launch as the application made it, on the stream's canonical handle. */
static CUresult issue(ag_stream *st, const ag_rec *r)
{
    if (r->shape.kind == AG_KIND_COPY)
        return ag_copy_issue(st, r); /* a memset or copy (copy.c) */
    const ag_shape *s = &r->shape;
    void *ptrs_small[16], **ptrs = ptrs_small;
    if (r->lay->nparams > 16 && !(ptrs = malloc(r->lay->nparams * sizeof *ptrs)))
        return CUDA_ERROR_OUT_OF_MEMORY;
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
    CUresult res = ag_launch_call(&l);
    if (ptrs != ptrs_small)
        free(ptrs);
    return res;
}

void ag_issue_held(ag_stream *st)
{
    AG_ASSERT(ag_lock_held(&st->mu));
    for (uint32_t i = 0; i < st->nheld; i++) {
        CUresult r = issue(st, &st->held[i]);
        if (r != CUDA_SUCCESS) {
            ag_stat_inc(AG_ST_FAIL_EAGER);
            ag_log(AG_LOG_WARN, "held launch of %s failed on flush (%d)", st->held[i].lay->name,
                   (int)r);
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
    const flush_req *q = arg;
    if (q->ci && st->ci != q->ci)
        return;
    if (q->blocking_only && (st->kind == AG_SK_LEGACY || !st->blocking ||
                             !__atomic_load_n(&st->open, __ATOMIC_RELAXED)))
        return;
    if (st->kind == AG_SK_DEAD)
        return;
    ag_lock(&st->mu);
    ag_flush_foreign(st, q->reason, 1);
    ag_unlock(&st->mu);
}

void ag_flush_all(enum ag_stat reason)
{
    flush_req q = { NULL, 0, reason };
    ag_streams_each(flush_each, &q);
}

__attribute__((noinline)) void ag_cross_flush_slow(ag_stream *st)
{
    ag_ctxinfo *ci = st->ci;
    if (st->kind == AG_SK_LEGACY) {
        flush_req q = { ci, 1, AG_ST_FL_CROSS };
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
