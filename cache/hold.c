/* Holds: launches held as pieces of a template, matched launch by launch, replayed or issued. */
/* What a stream holds is a piece of one template (tmpl.c); a whole piece goes to the GPU as its
 * graph (graph.c), an occurrence broken off goes out eagerly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/log.h"
#include "policy/options.h"
#include "policy/stats.h"
#include "cache/clock.h"
#include "cache/copy.h"
#include "cache/gpumark.h"
#include "cache/internal.h"
#include "cache/profile.h"
#include "cache/selftime.h"
#include "cache/worker.h"

/* ---- holding ---------------------------------------------------------------------------- */

void ag_hold_begin(ag_stream *st, uint64_t now)
{
    AG_ASSERT(ag_lock_held(&st->mu) && st->nheld == 1 && st->cand);
    st->hold_t0 = st->occ_t0 = now;
    st->pos = st->piece = 0;
    st->occ_built = 0;
    if (!st->cand->prof)
        ag_mark_begin(st, st->cand, 1); /* nothing of the occurrence has gone out yet */
    atomic_fetch_add(&ag_nholding, 1);
    ag_watchdog_kick();
}

/* nheld and join_pending are written under the stream lock, and also read without it (the
 * watchdog, the capture path) as a hint that is checked again under the lock: the writes are
 * relaxed atomic stores, so such reads are not data races. */
void ag_hold_end(ag_stream *st)
{
    AG_ASSERT(ag_lock_held(&st->mu) && st->cand); /* nothing held between pieces */
    __atomic_store_n(&st->nheld, 0, __ATOMIC_RELAXED);
    st->arena_used = 0;
    st->cand = NULL;
    st->pos = st->piece = 0;
    atomic_fetch_sub(&ag_nholding, 1);
}

static uint8_t *arena_take(ag_stream *st, size_t n, uint32_t *off)
{
    size_t at = (st->arena_used + 15) & ~(size_t)15;
    if (at + n > st->arena_cap) {
        size_t cap = st->arena_cap ? st->arena_cap : 4096;
        while (cap < at + n)
            cap *= 2;
        uint8_t *a = realloc(st->arena, cap);
        if (!a)
            return NULL;
        st->arena = a;
        st->arena_cap = cap;
    }
    st->arena_used = at + n;
    *off = (uint32_t)at;
    return st->arena + at;
}

/* Deep-copies launch l onto the held list. */
int ag_hold_one(ag_stream *st, const ag_launch *l, const ag_layout *lay, const ag_shape *sh,
                    uint64_t h, const CUlaunchAttribute *at)
{
    AG_SELF_STATE(AG_SELF_L_HELD);
    /* what is held is a piece of st->cand, and fits the held list */
    AG_ASSERT(ag_lock_held(&st->mu) && st->cand && st->held);
    AG_ASSERT(st->pos + st->nheld < st->cand->len);
    if (st->nheld >= st->learn.max_nodes)
        return -1; /* never past the held array, whatever a template claims */
    if (AG_UNLIKELY(st->nheld == st->held_cap)) {
        uint32_t cap = st->held_cap * 2;
        if (cap > st->learn.max_nodes)
            cap = st->learn.max_nodes;
        ag_rec *h = realloc(st->held, cap * sizeof *h);
        if (!h)
            return -1;
        st->held = h;
        st->held_cap = cap;
    }
    if (lay->nparams > 16 && ag_stream_ptrs_reserve(st, lay->nparams))
        return -1; /* issuing it eagerly later must not need memory (flush.c: issue) */
    if (!st->nheld && st->pos)
        st->hold_t0 = ag_now_ns(); /* a new piece: its own hold, for the watchdog */
    ag_rec *r = &st->held[st->nheld];
    uint8_t *blob = arena_take(st, lay->size, &r->blob);
    if (!blob || ag_params_copy(lay, l->params, l->extra, blob))
        return -1;
    if (sh->nattrs) {
        uint8_t *a = arena_take(st, sh->nattrs * sizeof *at, &r->attrs);
        if (!a)
            return -1;
        memcpy(a, at, sh->nattrs * sizeof *at);
    }
    r->shape = *sh;
    r->shape_hash = h;
    r->lay = lay;
    ag_dims_of(l, &r->dims);
    __atomic_store_n(&st->nheld, st->nheld + 1, __ATOMIC_RELAXED);
    ag_stat_inc(AG_ST_HELD);
    return 0;
}

/* The piece of U that starts at launch `pos`, or -1 when none does. */
static int piece_at(const ag_tmpl *U, uint32_t pos)
{
    for (uint32_t p = 0; p < U->npieces; p++)
        if ((p ? U->ends[p - 1] : 0) == pos)
            return (int)p;
    return -1;
}

/* Whether U begins with the occurrence under way -- its template's first pos launches, then
 * the k held ones -- and has `more` launches after them, whatever U's pieces. */
static int shares_prefix(const ag_stream *st, const ag_tmpl *U, uint32_t k, uint32_t more)
{
    const ag_tmpl *T = st->cand;
    uint32_t pos = st->pos;
    if (U->len < pos + k + more)
        return 0;
    for (uint32_t i = 0; i < pos; i++)
        if (U->nodes[i].shape_hash != T->nodes[i].shape_hash ||
            !ag_shape_eq(&U->nodes[i].shape, &T->nodes[i].shape))
            return 0;
    for (uint32_t i = 0; i < k; i++)
        if (U->nodes[pos + i].shape_hash != st->held[i].shape_hash ||
            !ag_shape_eq(&U->nodes[pos + i].shape, &st->held[i].shape))
            return 0;
    return 1;
}

/* Whether U could take over the occurrence under way with k launches held, and `more` to be
 * held next: U begins with what went out already (whole pieces of st->cand), has a piece
 * starting there, and continues with the held launches -- all within that piece. (Templates
 * that share a beginning without one extending the other have the same pieces only within it
 * (ag_pieces_align, tmpl.c): U's piece may end before what st->cand held. A hold past a
 * piece's end would never send the piece, and its replay would run only the piece's launches:
 * the rest were lost.) */
static int held_prefix_of(const ag_stream *st, const ag_tmpl *U, uint32_t k, uint32_t more)
{
    int p = piece_at(U, st->pos);
    return p >= 0 && U->ends[p] >= st->pos + k + more && shares_prefix(st, U, k, more);
}

/* st->cand becomes U (held_prefix_of said it may): the piece being held is U's. */
void ag_hold_switch(ag_stream *st, ag_tmpl *U)
{
    st->cand = U;
    st->piece = (uint32_t)piece_at(U, st->pos);
}

/* Another template that the held launches begin and that continues with this launch. */
ag_tmpl *ag_switch_candidate(ag_stream *st, const ag_shape *sh, uint64_t h,
                                 const CUlaunchAttribute *at)
{
    uint32_t k = st->nheld;
    if (st->cand->prof)
        return NULL;
    ag_bucket *b = ag_bucket_of(st, st->cand->first_hash);
    for (ag_tmpl *U = b ? b->head : NULL; U; U = U->next_first)
        if (U != st->cand && ag_node_matches(U, st->pos + k, sh, h, at) &&
            ag_tmpl_wants_graph(U) && held_prefix_of(st, U, k, 1))
            return U;
    /* none to switch to; but when the launches so far begin another template all the same
     * (one eager now, or cut into other pieces), the occurrence was that one's: the stream runs
     * several sequences with a common start (a decode step's variants), which is no reason to
     * turn this one off */
    for (ag_tmpl *U = b ? b->head : NULL; U && !st->sibling; U = U->next_first)
        if (U != st->cand && ag_node_matches(U, st->pos + k, sh, h, at) &&
            shares_prefix(st, U, k, 1))
            st->sibling = U;
    return NULL;
}

/* A template whose last piece is exactly the held launches (after the pieces that went out). */
ag_tmpl *ag_exact_template(ag_stream *st)
{
    uint32_t n = st->pos + st->nheld;
    if (st->cand->len == n)
        return st->cand;
    ag_bucket *b = ag_bucket_of(st, st->cand->first_hash);
    for (ag_tmpl *U = b ? b->head : NULL; U; U = U->next_first)
        if (U->len == n && ag_tmpl_wants_graph(U) && held_prefix_of(st, U, st->nheld, 0) &&
            piece_at(U, st->pos) == (int)U->npieces - 1)
            return U;
    return NULL;
}

/* Held launches are not shown to the learner while they are held (most become a replay, which
 * ends the learner's segment anyway): when they go out eagerly instead, it sees them now. */
void ag_learn_held(ag_stream *st)
{
    for (uint32_t i = 0; i < st->nheld; i++)
        ag_learn_launch(st, st->held[i].shape_hash, &st->held[i].shape, i ? 0 : st->hold_t0);
}

/* ---- completing a hold ------------------------------------------------------------------ */

/* n launches of an occurrence of T went out (as graphs, or eagerly while the worker built
 * them): credit for false starts, up to two occurrences' worth (ag_hold_abort). */
static void tmpl_earn(ag_tmpl *T, uint32_t n)
{
    T = ag_tmpl_lead(T); /* (a variant group's credit is its first's) */
    uint64_t c = (uint64_t)T->credit + n, cap = 2 * (uint64_t)T->len;
    T->credit = (uint32_t)(c < cap ? c : cap);
}

/* A piece's graph failed: what is held goes out eagerly, the pieces before it are done, and
 * the occurrence ends (graphs off for T for a while). */
static void piece_failed(ag_stream *st, ag_tmpl *T, int rc)
{
    uint32_t n = st->pos;
    ag_issue_held(st, rc == AG_REPLAY_FULL ? AG_ST_FATE_CACHE_FULL : AG_ST_FATE_GRAPH_FAIL);
    T->eager_runs++;
    T->broken[AG_BREAK_GRAPH_API]++;
    ag_benefit_failed(T->bp);
    ag_mark_end(st, NULL, 0);
    ag_hold_end(st);
    if (n)
        ag_learn_replayed(&st->learn, n);
}

/* ---- building on the worker -------------------------------------------------------------- */

/* Whether T's pieces are built on the worker (a profile's sequences are not: they were saved to
 * be replayed from their first occurrence on). */
static int built_elsewhere(const ag_tmpl *T)
{
    return !T->from_profile && !T->build_here && ag_worker_on();
}

/* Hands piece p of T to the worker, to be built from the held launches from held[first] on
 * (unless it has its graph or is with the worker already). */
static void request(ag_stream *st, ag_tmpl *T, uint32_t p, uint32_t first)
{
    ag_piece *P = &T->pieces[p];
    if (P->exec || P->pending)
        return;
    ag_build_req *q = ag_build_snapshot(st, T, p, first);
    if (q && ag_worker_submit(q))
        ag_build_cancel_locked(q); /* (asked again at the next occurrence) */
}

/* The held launches end an occurrence of T whose last piece has no graph yet: the worker gets
 * it (and, T's first measured occurrence cutting it into pieces now, each new piece the held
 * launches cover), and they go out eagerly. Nothing of this occurrence counts as a sample for
 * T's policy. */
static void complete_elsewhere(ag_stream *st, ag_tmpl *T, uint64_t held_ns)
{
    AG_SELF_STATE(AG_SELF_L_SENT);
    uint32_t pos = st->pos, n = st->pos + st->nheld;
    if (!T->planned)
        ag_tmpl_plan(st, T, held_ns, 1);
    else if (T->plan_queued != T->bp->queued)
        ag_tmpl_plan(st, T, T->plan_held_ns, 1);
    for (uint32_t p = 0; p < T->npieces; p++) {
        uint32_t s = p ? T->ends[p - 1] : 0;
        if (s >= pos && T->ends[p] <= n)
            request(st, T, p, s - pos);
    }
    ag_log(AG_LOG_DEBUG, "sequence %016llx: held and issued eagerly while the worker builds its "
           "graph%s", (unsigned long long)T->key,
           ag_benefit_probing(T->bp) ? " (in its probe, for the trial to come)" : "");
    ag_issue_held(st, AG_ST_FATE_BUILDING);
    T->eager_runs++;
    tmpl_earn(T, n);
    ag_benefit_unsampled(T->bp);
    ag_mark_end(st, NULL, 0);
    ag_hold_end(st);
    if (st->held)
        ag_learn_replayed(&st->learn, n);
}

/* The held launches are a whole piece of st->cand, not its last: it goes to the GPU now (as
 * its graph; eagerly while the worker builds that), and the hold goes on with the next piece. */
static void piece_go(ag_stream *st)
{
    AG_SELF_STATE(AG_SELF_L_SENT);
    ag_tmpl *T = st->cand;
    int built = 0, rc;
    if (!T->pieces[st->piece].exec && built_elsewhere(T)) {
        request(st, T, st->piece, 0);
        ag_issue_held(st, AG_ST_FATE_BUILDING);
        built = 1; /* (an occurrence in part eager is no sample of either kind, as a build) */
    } else if ((rc = ag_tmpl_replay(st, T, st->piece, &built))) {
        piece_failed(st, T, rc);
        return;
    }
    st->occ_built |= (uint8_t)built;
    st->pos += st->nheld;
    st->piece++;
    __atomic_store_n(&st->nheld, 0, __ATOMIC_RELAXED);
    st->arena_used = 0;
    /* a per-thread stream: what another thread may flush of the next piece must follow this
     * piece, not only the occurrence's start (see ag_ptds_mark) */
    if (st->kind == AG_SK_PTDS && ag_ptds_mark(st)) {
        uint32_t n = st->pos;
        ag_mark_end(st, NULL, 0);
        ag_hold_end(st);
        ag_learn_replayed(&st->learn, n);
    }
}

/* The held launches end st->cand's last piece: it goes to the GPU, and the occurrence is
 * done. */
void ag_complete(ag_stream *st)
{
    AG_SELF_STATE(AG_SELF_L_SENT);
    AG_ASSERT(ag_lock_held(&st->mu));
    ag_tmpl *T = st->cand;
    int built = 0;
    if (T->prof && !(T = st->cand = ag_adopt_provisional(st, T))) {
        uint32_t n = st->nheld;
        ag_issue_held(st, AG_ST_FATE_GRAPH_FAIL); /* (its template could not be made) */
        ag_hold_end(st);
        ag_learn_replayed(&st->learn, n);
        return;
    }
    uint32_t n = st->pos + st->nheld;
    /* the host's time per held launch, before this replay's own work (a build, say) */
    uint64_t held_ns = T->planned ? 0 : (ag_now_ns() - st->occ_t0) / n;
    if (!T->pieces[st->piece].exec && built_elsewhere(T)) {
        complete_elsewhere(st, T, held_ns);
        return;
    }
    int rc;
    if ((rc = ag_tmpl_replay(st, T, st->piece, &built))) {
        piece_failed(st, T, rc);
        return;
    }
    T->replays++;
    tmpl_earn(T, n);
    ag_mark_end(st, T, st->occ_built | built);
    ag_tmpl_occurred(st, T, 1, st->occ_built | built, st->occ_t0);
    if (!T->planned) /* measured now: cut T into pieces */
        ag_tmpl_plan(st, T, held_ns, 0);
    else if (T->plan_queued != T->bp->queued) /* the GPU is (no longer) busy when holds begin */
        ag_tmpl_plan(st, T, T->plan_held_ns, 0);
    else if (T->plan_guessed && T->npieces == 1 && ag_graph_launch_ns() &&
             T->bp->state == AG_BEN_ON) /* one piece on a guess: the cost is measured now */
        ag_tmpl_plan(st, T, T->plan_held_ns, 0);
    ag_hold_end(st);
    if (st->held)
        ag_learn_replayed(&st->learn, n);
}

/* One more launch is held: a piece that is complete now goes to the GPU (the last one only
 * when no longer template could still follow). */
void ag_hold_advance(ag_stream *st)
{
    ag_tmpl *T = st->cand;
    uint32_t at = st->pos + st->nheld;
    AG_ASSERT(T->prof || at <= T->ends[st->piece]); /* held past the piece: never sent whole */
    if (T->prof) {
        if (at == T->len)
            ag_complete(st);
    } else if (at == T->ends[st->piece]) {
        if (at < T->len)
            piece_go(st);
        else if (!T->has_ext)
            ag_complete(st);
    }
}

/* The occurrence under way ends short of its template (an ordering point, a divergence, a
 * time-out): the held launches go out eagerly and are shown to the learner; the pieces that
 * went out before are done. */
void ag_hold_abort(ag_stream *st, enum ag_stat reason)
{
    ag_tmpl *T = st->cand;
    uint32_t pos = st->pos;
    if (!T->prof && reason == AG_ST_FL_DIVERGE)
        T->broken[AG_BREAK_DIVERGE]++;
    else if (!T->prof && reason == AG_ST_FL_TIMEOUT)
        T->broken[AG_BREAK_TIMEOUT]++;
    else if (!T->prof && reason == AG_ST_FL_COPY)
        T->broken[AG_BREAK_COPY]++;
    /* A divergence is no reason to turn T off when at least as many launches went out as
     * graphs as were held in vain, when the occurrence was another template's, when it came
     * at the second launch (one launch held: a decode loop's prefill starts as its steps do),
     * or when T's recent occurrences sent enough to pay for the launches held in vain: a
     * sequence whose first launches also come elsewhere (a decode step that starts with two
     * device copies, as its tail has three) starts false holds a few launches long, and they
     * must not turn off what replays in between */
    int late = reason == AG_ST_FL_DIVERGE &&
               (pos >= st->nheld || st->sibling || st->nheld <= 1);
    if (late)
        tmpl_earn(T, pos);
    else if ((reason == AG_ST_FL_DIVERGE || reason == AG_ST_FL_TIMEOUT) && !T->prof &&
             ag_tmpl_lead(T)->credit >= st->nheld) {
        ag_tmpl_lead(T)->credit -= st->nheld;
        late = 1;
    }
    if (reason == AG_ST_FL_DIVERGE && st->sibling && pos) {
        st->sib_done = st->sibling;
        st->sib_t0 = st->occ_t0;
        st->sib_pos = pos;
    }
    st->sibling = NULL;
    ag_issue_held(st, ag_fate_flushed(reason));
    if (!T->prof && late) {
        ag_benefit_unsampled(T->bp);
    } else if (!T->prof) {
        /* its own: a variant's breaking off shuts its own gate, not its group's policy */
        ag_benefit *b = &T->ben;
        uint32_t offs = b->abort_offs;
        if (b != T->bp)
            ag_benefit_unsampled(T->bp);
        ag_benefit_aborted(b);
        if (b->abort_offs != offs) {
            ag_stat_inc(AG_ST_POLICY_ABORT_OFF);
            ag_log(AG_LOG_DEBUG, "sequence %016llx: breaks off too often: eager for %u "
                   "occurrences", (unsigned long long)T->key, b->wait);
        }
    }
    ag_mark_end(st, NULL, 0);
    if (pos)
        ag_learn_replayed(&st->learn, pos); /* those launches went out as graphs */
    ag_learn_held(st);
    ag_hold_end(st);
}

