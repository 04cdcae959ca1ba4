/* What the engine's files ask of each other, grouped by the file that defines it. */
#ifndef AG_INTERNAL_H
#define AG_INTERNAL_H

#include <stdatomic.h>

#include "policy/stats.h"
#include "cache/compiler.h"
#include "cache/debug.h"
#include "cache/driver.h"
#include "cache/graph.h"
#include "cache/process.h"
#include "cache/rest.h"
#include "cache/stream.h"

enum ag_engine_state {
    AG_ENGINE_UNINIT,
    AG_ENGINE_ON,
    AG_ENGINE_DISABLED,   /* AUTOGRAPH_DISABLE: count and pass through */
    AG_ENGINE_EXITING,    /* after our atexit handler: pass through */
    AG_ENGINE_FORKED,     /* a fork child: pass through, touch nothing */
};

/* True when the engine runs (never initialises: ordering points before any launch hold
 * nothing). */
static inline int ag_engine_started(void)
{
    return atomic_load_explicit(&ag_hot.state, memory_order_acquire) == AG_ENGINE_ON;
}

/* Larger argument blocks pass through: copying them costs more than a launch saves. */
#define AG_MAX_PARAM_BYTES 4096

/* ---- issue.c: issuing records eagerly -------------------------------------------------- */

/* Calls the driver's launch function for l's entry point (the plain, Ex and cooperative forms),
 * with l's arguments: both for a launch passed through and for a held launch issued. */
CUresult ag_launch_call(const ag_launch *l);
/* The driver's time for one eager launch, sampled in this process (EWMA); 0 before the
 * first sample. */
uint64_t ag_eager_launch_ns(void);
/* One eager launch took d ns (the launch path samples one in 16). */
void ag_eager_sample(uint64_t d);

/* Issues the held launches eagerly, in order; a launch the driver refuses leaves its error
 * on the stream (st->err). `fate` (AG_ST_FATE_*): why, counted for each held kernel launch. */
void ag_issue_held(ag_stream *st, enum ag_stat fate);
/* The same for the held launches from held[first] on. */
void ag_issue_held_from(ag_stream *st, uint32_t first, enum ag_stat fate);
/* What a call on st returns (st->mu held), given r, the call's own result: an error a held
 * launch left on st, once, when the call itself succeeded; else r. */
CUresult ag_stream_error_take(ag_stream *st, CUresult r);
/* Per-thread default streams: the owner marks what the stream holds so far as a hold begins
 * (a flush from another thread orders the side stream after it: flush.c). */
int ag_ptds_mark(ag_stream *st);

/* ---- tmpl.c: templates ------------------------------------------------------------------ */

/* A new template for a sequence of shapes (not yet built). NULL when out of memory or when a
 * launch cannot go into a graph (unknown layout, name filtered, parameters too large). */
ag_tmpl *ag_tmpl_new(uint64_t key, const ag_shape *shapes, const uint64_t *hashes,
                     uint32_t len);
void ag_tmpl_free(ag_stream *st, ag_tmpl *T);
/* Cuts T into pieces from the host's time per held launch (ns) and the launch costs measured in
 * this process (`guess`: a graph launch's cost, if not measured yet, is guessed: the worker is
 * about to build T's pieces); a plan that changes the pieces drops T's graphs. */
void ag_tmpl_plan(ag_stream *st, ag_tmpl *T, uint64_t held_ns, int guess);
/* An occurrence of T (graph or eager) on st began at t: told to its policy, a finished probe or
 * trial counted (a won trial is its variants' too). */
void ag_tmpl_occurred(ag_stream *st, ag_tmpl *T, int graph, int build, uint64_t t);
/* The templates of st that start with the shape fingerprint first_hash. */
ag_bucket *ag_bucket_of(ag_stream *st, uint64_t first_hash);
/* A provisional template held whole becomes a real one, made of the held launches (P is
 * freed); NULL when it cannot. */
ag_tmpl *ag_adopt_provisional(ag_stream *st, ag_tmpl *P);

/* A template in a trial, wanted eager now, that starts with this launch, or NULL. */
ag_tmpl *ag_find_trial_start(ag_stream *st, const ag_shape *sh, uint64_t h,
                             const CUlaunchAttribute *at);
/* A template to hold that starts with this launch (wanted as a graph, or its launches wanted
 * by the worker to build its graph from), or NULL. */
ag_tmpl *ag_find_start(ag_stream *st, const ag_shape *sh, uint64_t h,
                       const CUlaunchAttribute *at);
/* A provisional template for a profile sequence that starts with this launch, or NULL;
 * ag_discard_provisional frees T when it is one (returns NULL). */
ag_tmpl *ag_provisional(const ag_shape *sh, const ag_layout *lay, uint64_t h);
ag_tmpl *ag_discard_provisional(ag_tmpl *T);
/* Shows one launch that went out eagerly to the learner (templates are made here). */
void ag_learn_launch(ag_stream *st, uint64_t h, const ag_shape *sh, uint64_t now);
/* A segment closed: counts it, and makes a template of it when it repeated enough. */
void ag_on_closed(ag_stream *st, const ag_closed *c);

/* Frees every template of st, and their graphs (st->mu held). */
void ag_tmpls_free(ag_stream *st);

/* ---- hold.c: holds --------------------------------------------------------------------- */

/* A hold begins (at `now`) or ends (what was held has gone out). */
void ag_hold_begin(ag_stream *st, uint64_t now);
void ag_hold_end(ag_stream *st);
/* Deep-copies launch l onto the held list; -1 when out of memory. */
int ag_hold_one(ag_stream *st, const ag_launch *l, const ag_layout *lay, const ag_shape *sh,
                uint64_t h, const CUlaunchAttribute *at);

/* Whether node k of T is this launch (inline: asked for every held launch). */
static inline int ag_node_matches(const ag_tmpl *T, uint32_t k, const ag_shape *sh, uint64_t h,
                                  const CUlaunchAttribute *at)
{
    if (k >= T->len || T->nodes[k].shape_hash != h || !ag_shape_eq(&T->nodes[k].shape, sh))
        return 0;
    /* attributes are fingerprinted in the shape; a built node knows them exactly */
    return sh->kind != AG_KIND_ATTRS || !T->nodes[k].node ||
           !memcmp(T->nodes[k].attrs, at, sh->nattrs * sizeof *at);
}

/* Another template that the held launches begin and that continues with this launch. */
ag_tmpl *ag_switch_candidate(ag_stream *st, const ag_shape *sh, uint64_t h,
                             const CUlaunchAttribute *at);
/* A template that is exactly the held launches, or NULL. */
ag_tmpl *ag_exact_template(ag_stream *st);
/* st->cand becomes U, which the held launches begin (ag_switch_candidate, ag_exact_template). */
void ag_hold_switch(ag_stream *st, ag_tmpl *U);
/* After a launch was held: a whole piece goes to the GPU, or the whole occurrence completes. */
void ag_hold_advance(ag_stream *st);
/* The occurrence under way ends short of its template: held launches go out eagerly;
 * `reason` (a flushes.* statistic) is counted for the template. */
void ag_hold_abort(ag_stream *st, enum ag_stat reason);
enum ag_tmpl_break { AG_BREAK_DIVERGE, AG_BREAK_TIMEOUT, AG_BREAK_COPY, AG_BREAK_GRAPH_API };

/* The held launches end st->cand's last piece: replays it (or issues them). */
void ag_complete(ag_stream *st);

/* Shows the held launches to the learner, once they went out eagerly. */
void ag_learn_held(ag_stream *st);

/* ---- flush.c: flushes and per-thread side streams --------------------------------------- */

/* Flushes what st holds (st->mu held by the caller). */
void ag_flush_locked(ag_stream *st, enum ag_stat reason);
/* Flushes and ends st's learning segment: an ordering point on st. */
void ag_order_locked(ag_stream *st, enum ag_stat reason);
/* Flushes every stream (AG_ST_FL_ALL, a free or context-wide sync: ends the learning segments
 * of the streams the calling thread launched on last only). */
void ag_flush_all(enum ag_stat reason);
/* The same for AG_ST_FL_ALL, and returns (and clears) an error a held launch left on a stream
 * the calling thread launched on last. */
CUresult ag_flush_all_take(void);
/* ag_flush_locked (order 0) or ag_order_locked (order 1) from any thread: switches to the
 * stream's context for what it issues. */
void ag_flush_foreign(ag_stream *st, enum ag_stat reason, int order);
/* The hold watchdog's one call: flushes every hold that began more than max_age ns before
 * `now` (a stream whose owner is inside a call right now is left for the next tick). Returns
 * when the oldest hold left began (a stream left for the next tick: a quarter period from
 * now), 0 when none is left. */
uint64_t ag_flush_stale(uint64_t now, uint64_t max_age);
/* Empties a retired stream state (st->mu held): flushes it, frees its templates. */
void ag_stream_empty(ag_stream *st);

/* The owner thread, before anything else on its per-thread stream: if another thread flushed
 * held work to the side stream, later work must wait for it (inline: every launch on a
 * per-thread stream asks). */
static inline void ag_ptds_join(ag_stream *st)
{
    AG_ASSERT(ag_lock_held(&st->mu));
    if (st->join_pending) {
        ag_drv.cuStreamWaitEvent(CU_STREAM_PER_THREAD, st->ev_side, 0);
        __atomic_store_n(&st->join_pending, 0, __ATOMIC_RELAXED);
    }
}

/* Publishes whether st is open (holds, or has a learning segment under way), for the legacy
 * stream rule of the other side. Called with st->mu held, after every change. */
static inline void ag_sync_open(ag_stream *st)
{
    /* held launches belong to an occurrence; between its pieces it holds nothing */
    AG_ASSERT(ag_lock_held(&st->mu) && (st->nheld == 0 || st->cand != NULL));
    uint8_t open = st->nheld > 0 || (st->held && st->learn.len > 0);
    if (AG_LIKELY(open == st->open) || st->kind == AG_SK_DEAD ||
        (!st->blocking && st->kind != AG_SK_LEGACY))
        return;
    __atomic_store_n(&st->open, open, __ATOMIC_RELAXED); /* read unlocked by flush_each */
    if (st->kind == AG_SK_LEGACY) {
        /* the process-wide count first when opening, last when closing: whoever sees the
         * context's flag set also sees the count (ag_cross_flush reads the count first) */
        if (open)
            atomic_fetch_add(&ag_hot.legacy_open_any, 1);
        atomic_store(&st->ci->legacy_open, open);
        if (!open)
            atomic_fetch_sub(&ag_hot.legacy_open_any, 1);
    } else
        atomic_fetch_add(&st->ci->blocking_open, open ? 1 : -1);
}

/* ---- fate.c: where every launch went (policy/stats.h, AG_FATES) --------------------------- */

/* The fate of held launches flushed eagerly for `reason` (a flushes.* statistic). */
static inline enum ag_stat ag_fate_flushed(enum ag_stat reason)
{
    return reason == AG_ST_FL_DIVERGE ? AG_ST_FATE_DIVERGED
           : reason == AG_ST_FL_TIMEOUT ? AG_ST_FATE_TIMEOUT
                                        : AG_ST_FATE_ORDER; /* a stream's, a copy's, another
                                                             * stream's, a free's, exit */
}

/* The fate of a launch (or, fate ignored, a copy) that goes out eagerly on the learning path,
 * nothing held and no template wanting a graph starting with it: part of an eager occurrence
 * of a template (AG_ST_FATE_EAGER_POLICY) or not (AG_ST_FATE_EAGER_LEARNING). Called before
 * the learner is shown the launch. */
enum ag_stat ag_fate_eager(ag_stream *st, const ag_shape *sh, uint64_t h,
                           const CUlaunchAttribute *at);

/* ---- watchdog.c ------------------------------------------------------------------------- */

/* The function the watchdog calls when the oldest hold it knows of would have outlived the hold
 * period (set once, at the engine's start): it says when the oldest hold left began. */
void ag_watchdog_init(uint64_t (*tick)(uint64_t now, uint64_t max_age));
/* Told when a hold begins. */
void ag_watchdog_kick(void);

/* ---- profile.c: AUTOGRAPH_PROFILE ------------------------------------------------------- */

void ag_profile_load(void);
void ag_profile_save(void);
/* Keeps what a stream learned for the profile before the stream's state is emptied. */
void ag_profile_keep(ag_stream *st);

/* ---- report.c --------------------------------------------------------------------------- */

/* The stats report, with the most replayed sequences of all streams. */
void ag_report_stats(void);
/* A state about to be retired with its thread (st->mu held): its sequences stay in the stats
 * report. */
void ag_report_keep(ag_stream *st);

#endif
