/* The launch path: one kernel launch from the hook to being passed, held or replayed. */
/* DESIGN.md, "One launch, step by step", names the steps in order. */
#include <stdlib.h>

#include "policy/log.h"
#include "policy/stats.h"
#include "cache/clock.h"
#include "cache/driver.h"
#include "cache/engine.h"
#include "cache/flush.h"
#include "cache/internal.h"
#include "cache/life.h"
#include "cache/profile.h"
#include "cache/selftime.h"
#include "cache/watch.h"
#include "cache/tracerec.h"

__thread ag_rest_token ag_t_token __attribute__((tls_model("initial-exec")));

/* ---- passing through -------------------------------------------------------------------- */

/* The launch as the application made it (timed as the driver's in a selftime build). */
static inline CUresult pass_timed(const ag_launch *l)
{
    AG_DRV_BEGIN();
    CUresult r = ag_launch_call(l);
    AG_DRV_END();
    return r;
}

/* Every launch passed as the application made it counts its fate (policy/stats.h, AG_FATES:
 * launches.eager is their sum). */
static __attribute__((hot)) CUresult passthrough(const ag_launch *l, enum ag_stat fate)
{
    ag_stat_inc(fate);
    return pass_timed(l);
}

/* With the engine off (a function of the launch alone, for the trace recorder). */
static CUresult pass_off(const ag_launch *l)
{
    return passthrough(l, AG_ST_FATE_OFF);
}

/* One launch in 16 on the learning path is timed, a clock read on each side, for the eager
 * launch estimate (issue.c, ag_eager_sample). */
static __thread unsigned t_sample __attribute__((tls_model("initial-exec")));

static CUresult pass_sampled(const ag_launch *l, enum ag_stat fate)
{
    AG_SELF_STATE(AG_SELF_L_LEARNING);
    if (AG_LIKELY(++t_sample & 15))
        return passthrough(l, fate);
    uint64_t t0 = ag_now_ns();
    CUresult r = passthrough(l, fate);
    ag_eager_sample(ag_now_ns() - t0);
    return r;
}

/* A launch passed while learning rests, for `why` (enum ag_rest_why): its fate (summed into
 * launches.learning_rested and launches.eager). */
static inline CUresult pass_rested(const ag_launch *l, unsigned why)
{
    AG_SELF_STATE(AG_SELF_L_RESTED);
    ag_stat_inc((enum ag_stat)(AG_ST_FATE_REST_NO_REPEAT + why));
    return pass_timed(l);
}

int ag_launched;

/* A launch on a stream without state whose function was not seen there before (watch.h). */
static __attribute__((noinline)) CUresult pass_watched(const ag_launch *l)
{
    if (AG_UNLIKELY(!__atomic_load_n(&ag_launched, __ATOMIC_RELAXED)))
        __atomic_store_n(&ag_launched, 1, __ATOMIC_RELAXED);
    AG_SELF_STATE(AG_SELF_L_WATCHED);
    ag_stat_inc(AG_ST_WATCHED);
    return passthrough(l, AG_ST_FATE_EAGER_LEARNING);
}

/* ---- the launch, step by step ----------------------------------------------------------- */

static CUresult launch_kernel(const ag_launch *l);

/* ---- at cuInit: the first launch's path rehearsed ---------------------------------------- */

/* A process's first launch is often timed alone (C1), and its path found our code and data
 * outside the CPU's caches: 0.5-1 us of misses in a 1.2-1.4 us watched launch (selftime marks,
 * H100 host and fake driver). cuInit, outside the timed region, runs the same steps once on a
 * stream no program has -- each of them only reads -- and pulls the lines of the steps that
 * would act (the pass, the counters, the filter) into the cache. */
void ag_launch_rehearse(void)
{
    static const char nobody;
    const CUstream s = (CUstream)(uintptr_t)&nobody;
    if (!ag_engine_on() || ag_holds_barred())
        return;
    (void)ag_rest_token_covers(s);
    if (!ag_stream_last_hit(s))
        (void)ag_stream_lookup(s, 0, AG_LOOKUP_FIND);
    ag_watch_rehearse();
    if (ag_tstats)
        ag_prefetch(ag_tstats->c, sizeof ag_tstats->c, 1);
    /* the code, with its length (about: the launch path's blocks are spread over ~2 KiB) */
    ag_prefetch((const void *)(uintptr_t)ag_launch_kernel, 2304, 0);
    ag_prefetch((const void *)(uintptr_t)pass_watched, 256, 0);
    ag_prefetch((const void *)(uintptr_t)passthrough, 128, 0);
    ag_prefetch((const void *)(uintptr_t)ag_stream_lookup, 512, 0);
    ag_log(AG_LOG_DEBUG, "the first launch's path rehearsed");
}

__attribute__((hot)) CUresult ag_launch_kernel(const ag_launch *l)
{
    AG_SELF_BEGIN(AG_SELF_LAUNCH);
    CUresult r = launch_kernel(l);
    AG_SELF_END(AG_SELF_LAUNCH);
    return r;
}

static CUresult launch_barred(const ag_launch *l, int ptsz);
static CUresult launch_locked(ag_stream *st, const ag_launch *l);

/* A launch on the legacy stream while the one context's legacy state rests (rest.h): out of
 * line, so that a created stream's path stays as short as it was. */
static __attribute__((noinline)) int pass_legacy_rested(const ag_launch *l, CUresult *r)
{
    ag_stream *st = ag_rest_legacy_one(l->stream, 0);
    if (!st)
        return 0;
    ag_cross_flush(st);
    if (__atomic_load_n(&st->err, __ATOMIC_RELAXED) || !ag_learn_resting(&st->learn))
        return 0;
    *r = pass_rested(l, ag_learn_rest_why(&st->learn));
    return 1;
}

static inline CUresult launch_kernel(const ag_launch *l)
{
    ag_stat_inc((enum ag_stat)l->entry);
    AG_SELF_MARK(AG_SM_STATS);
    if (AG_UNLIKELY(!ag_engine_on())) { /* (recording a trace keeps the engine disabled) */
        if (AG_LIKELY(!ag_tr_active()))
            return pass_off(l);
        ag_engine_arm_exit();
        return ag_tr_rec_launch(l, pass_off);
    }
    AG_SELF_MARK(AG_SM_ENGINE);
    int ptsz = ag_entry_ptsz(l->entry);
    if (AG_UNLIKELY(ag_holds_barred()))
        return launch_barred(l, ptsz);
    if (ag_rest_token_spend(l->stream))
        return pass_rested(l, ag_t_token.why);
    unsigned long gen = atomic_load_explicit(&ag_hot.registry_gen, memory_order_acquire);
    unsigned long epoch = atomic_load_explicit(&ag_hot.rest_epoch, memory_order_acquire);
    CUresult r;
    if (AG_UNLIKELY(ag_watch_is_legacy(l->stream, ptsz)) && pass_legacy_rested(l, &r))
        return r;
    ag_stream *st = ag_stream_last_hit(l->stream);
    if (!st && !(st = ag_stream_lookup(l->stream, ptsz, AG_LOOKUP_FIND))) {
        if (ag_watch_launch(l->stream, ptsz, l->f)) {
            AG_SELF_MARK(AG_SM_LOOKUP);
            return pass_watched(l);
        }
        if (!(st = ag_stream_lookup(l->stream, ptsz, AG_LOOKUP_MAKE)))
            return passthrough(l, AG_ST_FATE_NO_STATE);
    }
    AG_SELF_MARK(AG_SM_LOOKUP);
    ag_cross_flush(st);
    if (ag_rest_take_unlocked(st, l->stream, gen, epoch))
        return pass_rested(l, ag_learn_rest_why(&st->learn));
    ag_lock(&st->mu);
    AG_SELF_MARK(AG_SM_LOCKED);
    r = launch_locked(st, l);
    if (AG_UNLIKELY(st->err)) /* a held launch failed when it went out */
        r = ag_stream_error_take(st, r);
    ag_sync_open(st);
    ag_unlock(&st->mu);
    return r;
}

/* The application is capturing somewhere, or has paused the library: hold nothing, learn
 * nothing, ask the driver nothing (a question about a capturing stream can invalidate the
 * capture). */
static __attribute__((noinline, cold)) CUresult launch_barred(const ag_launch *l, int ptsz)
{
    ag_stream *st = ag_stream_find(l->stream, ptsz);
    if (st && (__atomic_load_n(&st->nheld, __ATOMIC_RELAXED) ||
               __atomic_load_n(&st->join_pending, __ATOMIC_RELAXED))) {
        /* held before the capture began (this thread raced the capture's flush): what is held
         * goes first, never overtaken */
        ag_lock(&st->mu);
        if (st->kind == AG_SK_PTDS)
            ag_ptds_join(st);
        ag_flush_locked(st, AG_ST_FL_ORDER);
        ag_sync_open(st);
        ag_unlock(&st->mu);
    }
    if (atomic_load_explicit(&ag_hot.captures, memory_order_acquire)) {
        ag_stat_inc(AG_ST_CAPTURED);
        return passthrough(l, AG_ST_FATE_CAPTURE);
    }
    ag_stat_inc(AG_ST_PAUSED);
    return passthrough(l, AG_ST_FATE_PAUSED);
}

static CUresult launch_learning(ag_stream *st, const ag_launch *l);

/* Whether the function has launched successfully in this process. A profile sequence is held
 * only once each of its launches has: a launch held is reported done, and one whose like never
 * ran here (other dimensions the kernel cannot take, say) might fail when it goes out. */
static inline int layout_ran(const ag_layout *lay)
{
    return __atomic_load_n(&lay->ran, __ATOMIC_RELAXED);
}

static inline void layout_mark_ran(const ag_layout *lay)
{
    if (AG_UNLIKELY(!layout_ran(lay)))
        __atomic_store_n(&((ag_layout *)lay)->ran, 1, __ATOMIC_RELAXED);
}

/* Whether the driver would take a launch on st now: a created stream's context must be the
 * calling thread's current one (else the launch fails with CUDA_ERROR_INVALID_CONTEXT, which
 * the application must get at the launch, not a hold that fails when it goes out). Asked when
 * an occurrence begins, one driver call per hold; a default stream's state is that of the
 * current context already. */
static int context_current(const ag_stream *st)
{
    CUcontext cur = NULL;
    return st->kind != AG_SK_REGULAR || (!ag_drv.cuCtxGetCurrent(&cur) && cur == st->ctx);
}

/* The part every launch runs: kept small, so that a launch that passes while learning rests
 * touches few lines of code (see process.h); the rest is out of line. */
static inline CUresult launch_locked(ag_stream *st, const ag_launch *l)
{
    if (AG_UNLIKELY(st->kind == AG_SK_DEAD))
        return passthrough(l, AG_ST_FATE_NO_STATE); /* retired meanwhile */
    if (st->kind == AG_SK_PTDS)
        ag_ptds_join(st);
    if (ag_rest_take_locked(st))
        return pass_rested(l, ag_learn_rest_why(&st->learn));
    ag_rest_end(st);
    return launch_learning(st, l);
}

static __attribute__((noinline)) CUresult launch_learning(ag_stream *st, const ag_launch *l)
{
    if (AG_UNLIKELY(!__atomic_load_n(&ag_launched, __ATOMIC_RELAXED)))
        __atomic_store_n(&ag_launched, 1, __ATOMIC_RELAXED); /* (a profile: nothing watched) */
    AG_ASSERT(ag_lock_held(&st->mu) && st->kind != AG_SK_DEAD);
    AG_SELF_MARK(AG_SM_LEARNS);
    if (ag_stream_learns(st))
        return passthrough(l, AG_ST_FATE_NO_STATE);
    AG_SELF_MARK(AG_SM_PREPARE);
    st->last_thread = ag_thread_id(); /* whose frees end its segments (flush.c) */
    ag_shape sh;
    CUlaunchAttribute at[AG_MAX_ATTRS];
    int first = 0;
    /* the parameter layout: asked of the driver the second time a function is seen, so a
     * kernel launched once never pays for it (it can be in no template yet anyway) -- unless a
     * profile may hold it from its very first launch */
    const ag_layout *lay =
        ag_profile_active() ? ag_layout_get(l->f) : ag_layout_get_seen(l->f, st->ctx, &first);
    enum ag_stat why = (l->entry >= AG_ENTRY_EX && l->entry <= AG_ENTRY_EX_PTSZ && !l->config)
                           ? AG_ST_UNG_ATTR
                       : st->sattr /* a stream attribute nodes would not inherit */
                           ? AG_ST_UNG_ATTR
                       : first                                ? AG_ST_COUNT
                       : !lay                                 ? AG_ST_UNG_LAYOUT
                       : !lay->graphable                      ? AG_ST_UNG_DENIED
                       : lay->size > AG_MAX_PARAM_BYTES       ? AG_ST_UNG_PSIZE
                                                              : AG_ST_COUNT;
    AG_SELF_MARK(AG_SM_LAYOUT);
    if (why == AG_ST_COUNT && ag_shape_make(l, lay, st->ctx, &sh, at))
        why = AG_ST_UNG_ATTR;
    if (why != AG_ST_COUNT) {
        ag_stat_inc(AG_ST_OPAQUE);
        ag_stat_inc(why);
        ag_order_locked(st, AG_ST_FL_DIVERGE);
        return passthrough(l, AG_ST_FATE_UNGRAPHABLE);
    }
    uint64_t h = ag_shape_hash(&sh), now = 0;
    AG_SELF_MARK(AG_SM_SHAPE);

    if (st->cand && !lay) { /* seen for the first time: no template holds it */
        ag_flush_locked(st, AG_ST_FL_DIVERGE);
    } else if (st->cand) { /* an occurrence is under way: does this launch continue it? */
        int ok;
        if (st->cand->prof) {
            ag_pshape ps;
            ag_pshape_of(&sh, lay, &ps);
            ok = layout_ran(lay) && ag_profile_node_is(st->cand->prof, st->nheld, &ps);
        } else {
            ok = ag_node_matches(st->cand, st->pos + st->nheld, &sh, h, at);
        }
        if (!ok) {
            ag_tmpl *U = ag_switch_candidate(st, &sh, h, at);
            if (U) {
                ag_hold_switch(st, U);
            } else {
                ag_flush_locked(st, AG_ST_FL_DIVERGE);
                goto idle;
            }
        }
        if (ag_hold_one(st, l, lay, &sh, h, at)) {
            ag_order_locked(st, AG_ST_FL_DIVERGE);
            return passthrough(l, AG_ST_FATE_NOT_HELD);
        }
        ag_hold_advance(st);
        return CUDA_SUCCESS;
    }
idle:;
    /* an application capture (or a pause) may have begun since the caller looked: then hold
     * nothing (its flush of every stream waits for this lock, so nothing held can be missed) */
    ag_tmpl *T = !lay || ag_holds_barred()
                     ? NULL
                     : ag_find_start(st, &sh, h, at);
    if (!T && lay && layout_ran(lay) &&
        !ag_holds_barred() && ag_profile_active())
        T = ag_provisional(&sh, lay, h);
    enum ag_stat fate = T ? AG_ST_FATE_NOT_HELD : AG_ST_COUNT; /* if it is not held after all */
    if (T && !context_current(st))
        T = ag_discard_provisional(T); /* passes through, and gets the driver's error */
    if (T && st->kind == AG_SK_PTDS && ag_ptds_mark(st))
        T = ag_discard_provisional(T);
    if (T) {
        ag_engine_will_hold();
        now = ag_now_ns();
        st->cand = T;
        if (ag_hold_one(st, l, lay, &sh, h, at) == 0) {
            ag_hold_begin(st, now);
            ag_hold_advance(st); /* a piece of one launch */
            return CUDA_SUCCESS;
        }
        st->cand = NULL;
        ag_discard_provisional(T);
    }
    /* an occurrence of a template in its trial, eager this time: marked on the GPU */
    ag_tmpl *U = st->ntmpl && ag_learn_starting(&st->learn) &&
                         !ag_holds_barred()
                     ? ag_find_trial_start(st, &sh, h, at)
                     : NULL;
    if (U)
        ag_mark_begin(st, U, 0);
    AG_SELF_MARK(AG_SM_FIND);
    if (fate == AG_ST_COUNT)
        fate = ag_fate_eager(st, &sh, h, at);
    CUresult r = pass_sampled(l, fate);
    AG_SELF_MARK(AG_SM_PASS);
    if (r == CUDA_SUCCESS) {
        if (lay)
            layout_mark_ran(lay);
        ag_learn_launch(st, h, &sh, now);
        AG_SELF_MARK(AG_SM_LEARN);
    } else {
        ag_order_locked(st, AG_ST_FL_DIVERGE);
    }
    return r;
}
