/* An async memset or copy offered to the engine: held, issued as part of a sequence, or left
 * to the caller as an ordering point (copy.h, ag_copy_offer). The same level as the launch
 * path (launch.c): records, shapes and nodes of copies are below, in copy.c. */
#include <stdatomic.h>
#include <string.h>

#include "policy/options.h"
#include "policy/stats.h"
#include "cache/clock.h"
#include "cache/copy.h"
#include "cache/driver.h"
#include "cache/flush.h"
#include "cache/gpumark.h"
#include "cache/internal.h"
#include "cache/life.h"
#include "cache/tracerec.h"

/* ---- the rules --------------------------------------------------------------------------- */

/* Whether an operation with these kinds may be a graph node under mode. */
static int may_hold(int mode, int entry, int dk, int sk)
{
    if (dk == AG_MEM_MANAGED || sk == AG_MEM_MANAGED)
        return 0; /* migrations and faults: not graphed */
    if (ag_copy_is_memset(entry))
        return dk == AG_MEM_DEVICE;
    /* the driver reads a pageable source when the call is made (the program may overwrite it
     * as soon as the call returns): holding such a copy would read it later */
    if (sk == AG_MEM_PAGEABLE)
        return 0;
    if (dk == AG_MEM_PAGEABLE)
        return mode == AG_COPY_ALL; /* a graph node into pageable memory: see CONFIG.md */
    return 1;
}

/* A copy into pageable host memory returns only once it is done (drivers make it so, and
 * programs read the result right after the call), so such a copy ends its sequence: what is
 * held goes out with it -- as the template's graph when it completes one -- and the call waits
 * for the stream before it returns, as the driver's own call would. */
static int waits(int entry, int dk)
{
    return !ag_copy_is_memset(entry) && dk == AG_MEM_PAGEABLE;
}

/* After op went out or was held (st->mu held): a copy that waits ends the segment, sends what
 * is held and waits for the stream; r (the call's own result) or the error it meets. */
static CUresult end_if_waits(ag_stream *st, const ag_copy *op, int dk, CUresult r)
{
    if (!waits(op->entry, dk))
        return r;
    ag_order_locked(st, AG_ST_FL_COPY);
    CUresult w = ag_drv.cuStreamSynchronize(st->issue);
    if (r == CUDA_SUCCESS)
        r = w;
    return st->err ? ag_stream_error_take(st, r) : r;
}

/* ---- the offer --------------------------------------------------------------------------- */

/* Whether the driver gives us everything a copy node needs. */
static int have_driver(void)
{
    return ag_drv.cuPointerGetAttribute && ag_drv.cuGraphAddMemsetNode &&
           ag_drv.cuGraphAddMemcpyNode && ag_drv.cuGraphMemsetNodeSetParams &&
           ag_drv.cuGraphMemcpyNodeSetParams && ag_drv.cuGraphExecMemsetNodeSetParams &&
           ag_drv.cuGraphExecMemcpyNodeSetParams;
}

/* A copy's shape has no attributes (never read: its kind is not AG_KIND_ATTRS). */
static const CUlaunchAttribute no_attrs[1];

/* Holds op (the record's values copied now; host data never is). */
static int hold(ag_stream *st, const ag_copy *op, const ag_shape *sh, uint64_t h)
{
    uint64_t value = op->value, dst = op->dst, src = op->src, n = op->n;
    void *params[4] = { &dst, &src, &value, &n };
    ag_launch l;
    memset(&l, 0, sizeof l);
    l.params = params;
    int r = ag_hold_one(st, &l, ag_copy_layout(sh->fn), sh, h, no_attrs);
    if (!r)
        ag_stat_inc(AG_ST_COPY_HELD); /* not a launch: counted apart (launches.held too) */
    return r;
}

/* Under st->mu: the copy joins the occurrence under way, starts one, or goes out now as a
 * record the learner sees. 0: not dealt with (nothing was changed). */
static int offer_locked(ag_stream *st, const ag_copy *op, const ag_shape *sh, uint64_t h,
                        int dk, CUresult *res)
{
    if (st->kind == AG_SK_DEAD)
        return 0;
    if (st->kind == AG_SK_PTDS)
        ag_ptds_join(st);
    if (!st->cand && ag_learn_rests(&st->learn))
        return 0; /* resting: an ordering point has nothing to end */
    ag_rest_end(st);
    if (ag_stream_learns(st))
        return 0;
    if (st->cand) {
        if (st->cand->prof) { /* profile sequences are of kernels only */
            ag_flush_locked(st, AG_ST_FL_DIVERGE);
            goto idle;
        }
        if (!ag_node_matches(st->cand, st->pos + st->nheld, sh, h, no_attrs)) {
            ag_tmpl *U = ag_switch_candidate(st, sh, h, no_attrs);
            if (!U) {
                ag_flush_locked(st, AG_ST_FL_DIVERGE);
                goto idle;
            }
            ag_hold_switch(st, U);
        }
        if (hold(st, op, sh, h)) {
            ag_order_locked(st, AG_ST_FL_DIVERGE);
            return 0;
        }
        ag_hold_advance(st);
        *res = end_if_waits(st, op, dk, CUDA_SUCCESS);
        return 1;
    }
idle:;
    int barred = ag_holds_barred() != 0;
    ag_tmpl *T = barred ? NULL : ag_find_start(st, sh, h, no_attrs);
    if (T && st->kind == AG_SK_PTDS && ag_ptds_mark(st))
        T = NULL;
    if (T) {
        ag_engine_will_hold();
        uint64_t now = ag_now_ns();
        st->cand = T;
        if (hold(st, op, sh, h) == 0) {
            ag_hold_begin(st, now);
            ag_hold_advance(st);
            *res = end_if_waits(st, op, dk, CUDA_SUCCESS);
            return 1;
        }
        st->cand = NULL;
    }
    ag_tmpl *U = st->ntmpl && ag_learn_starting(&st->learn) && !barred
                     ? ag_find_trial_start(st, sh, h, no_attrs)
                     : NULL;
    if (U)
        ag_mark_begin(st, U, 0);
    /* nothing is held here: the copy goes out now, in order, as the application made it, and
     * stays in the learner's sequence (no ordering point: the sequence goes on) */
    CUresult r = ag_copy_call(op);
    if (r == CUDA_SUCCESS) {
        ag_fate_eager(st, sh, h, no_attrs); /* (a copy has no fate: the launches' follow it) */
        ag_learn_launch(st, h, sh, 0);
        if (waits(op->entry, dk))
            ag_order_locked(st, AG_ST_FL_COPY); /* done already: the driver's call waited */
    } else {
        ag_order_locked(st, AG_ST_FL_DIVERGE);
    }
    *res = r;
    return 1;
}

int ag_copy_offer(const ag_copy *op, CUresult *res)
{
    if (AG_UNLIKELY(ag_tr_active())) /* recording a trace (the engine is disabled) */
        return ag_tr_rec_copy(op, res);
    int mode = (int)ag_opt(AG_OPT_COPY_NODES);
    if (mode == AG_COPY_OFF || !op->n || op->entry >= AG_CP_COUNT || !ag_engine_on() ||
        ag_holds_barred() || ag_rest_token_covers(op->stream) || !have_driver())
        return 0;
    ag_stream *st = ag_stream_of(op->stream, op->ptsz);
    if (!st || ag_rest_order_passes(st))
        return 0;
    int dk = ag_copy_mem_kind(op->dst);
    int sk = ag_copy_is_memset(op->entry) ? AG_MEM_NONE : ag_copy_mem_kind(op->src);
    if (!may_hold(mode, op->entry, dk, sk))
        return 0;
    ag_shape sh;
    ag_copy_shape(op, st->ctx, dk, sk, &sh);
    uint64_t h = ag_shape_hash(&sh);
    ag_cross_flush(st);
    ag_lock(&st->mu);
    int took = offer_locked(st, op, &sh, h, dk, res);
    ag_sync_open(st);
    ag_unlock(&st->mu);
    return took;
}
