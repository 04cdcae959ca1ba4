/* Holds and templates: holding launches, matching them, and a template's whole life. */
/* A template is made from a learned (or profile) sequence, indexed by its first shape, matched
 * launch by launch while held, completed as a graph replay, and freed with its stream. */
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

/* Templates one stream may keep (graphs are limited separately by AUTOGRAPH_MAX_GRAPHS). */
#define AG_MAX_TEMPLATES 2048

/* ---- a template's making and freeing ---------------------------------------------------- */

ag_tmpl *ag_tmpl_new(uint64_t key, const ag_shape *shapes, const uint64_t *hashes, uint32_t len)
{
    ag_tmpl *T = calloc(1, sizeof *T);
    if (!T || !(T->nodes = calloc(len, sizeof *T->nodes)))
        goto fail;
    T->key = key;
    T->first_hash = hashes[0];
    T->len = len;
    for (uint32_t i = 0; i < len; i++) {
        ag_node *n = &T->nodes[i];
        n->shape = shapes[i];
        n->shape_hash = hashes[i];
        n->lay = shapes[i].kind == AG_KIND_COPY ? ag_copy_layout(shapes[i].fn) /* copy.h */
                                                : ag_layout_get(shapes[i].fn);
        if (!n->lay || !n->lay->graphable || n->lay->size > AG_MAX_PARAM_BYTES)
            goto fail;
        size_t sz = n->lay->size ? n->lay->size : 1;
        if (!(n->exec_vals = malloc(sz)) || !(n->graph_vals = malloc(sz)))
            goto fail;
    }
    ag_benefit_init(&T->ben, ag_opt(AG_OPT_BENEFIT) == AG_BENEFIT_ALWAYS, len);
    T->npieces = 1;
    T->ends[0] = len;
    return T;
fail:
    if (T && T->nodes)
        for (uint32_t i = 0; i < len; i++) {
            free(T->nodes[i].exec_vals);
            free(T->nodes[i].graph_vals);
        }
    if (T)
        free(T->nodes);
    free(T);
    return NULL;
}

void ag_tmpl_free(ag_stream *st, ag_tmpl *T)
{
    ag_tmpl_drop_graph(st, T);
    for (uint32_t i = 0; i < T->len; i++) {
        free(T->nodes[i].exec_vals);
        free(T->nodes[i].graph_vals);
    }
    free(T->nodes);
    free(T);
}

/* Cuts T into pieces for pipelined replay (policy/pieces.h), from the host's time per launch
 * while T's launches are held and the graph and eager launch costs measured in this process.
 * Until those are known T is one piece; a plan that changes the pieces drops T's graphs. */
static void plan(ag_stream *st, ag_tmpl *T, uint64_t held_ns)
{
    uint32_t ends[AG_MAX_PIECES], n = 1;
    ends[0] = T->len;
    ag_piece_costs c = { held_ns, ag_eager_launch_ns(), ag_graph_launch_ns(),
                         (uint64_t)ag_opt(AG_OPT_MAX_HOLD_US) * 1000 };
    uint32_t fixed = (uint32_t)ag_opt(AG_OPT_PIECE);
    if (!T->related && fixed) {
        for (n = 0; n < AG_MAX_PIECES - 1 && (n + 1) * fixed < T->len; n++)
            ends[n] = (n + 1) * fixed;
        ends[n++] = T->len;
        T->planned = 1;
    } else if (!T->related && c.eager_ns && c.graph_ns) {
        n = ag_pieces_plan(T->len, &c, ends);
        T->planned = 1;
    }
    if (n == T->npieces && !memcmp(ends, T->ends, n * sizeof *ends))
        return;
    ag_tmpl_drop_graph(st, T);
    T->npieces = n;
    memcpy(T->ends, ends, n * sizeof *ends);
    ag_log(AG_LOG_DEBUG, "sequence %016llx (%u launches, %.1f us apart when held): %u piece%s",
           (unsigned long long)T->key, T->len, (double)held_ns / 1e3, n, n > 1 ? "s" : "");
}

/* An occurrence of T, told to its policy; a finished trial is counted. */
static void occurred(ag_tmpl *T, int graph, int build, uint64_t t)
{
    int before = T->ben.state;
    ag_benefit_occurred(&T->ben, graph, build, t);
    if (before == AG_BEN_TRIAL && T->ben.state != AG_BEN_TRIAL) {
        int on = T->ben.state == AG_BEN_ON;
        ag_stat_inc(on ? AG_ST_POLICY_ON : AG_ST_POLICY_OFF);
        ag_log(AG_LOG_DEBUG, "sequence %016llx: %s (median %.1f us as a graph, %.1f us eager)",
               (unsigned long long)T->key, on ? "graphs pay" : "eager is as fast",
               T->ben.med_graph / 1e3, T->ben.med_eager / 1e3);
    }
}

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

static ag_bucket *bucket_of(ag_stream *st, uint64_t first_hash)
{
    ag_bucket *b;
    HASH_FIND(hh, st->buckets, &first_hash, sizeof first_hash, b);
    return b;
}

/* The piece of U that starts at launch `pos`, or -1 when none does. */
static int piece_at(const ag_tmpl *U, uint32_t pos)
{
    for (uint32_t p = 0; p < U->npieces; p++)
        if ((p ? U->ends[p - 1] : 0) == pos)
            return (int)p;
    return -1;
}

/* Whether U could take over the occurrence under way with k launches held: U begins with what
 * went out already (whole pieces of st->cand) and has a piece starting there, and continues
 * with the held launches. */
static int held_prefix_of(const ag_stream *st, const ag_tmpl *U, uint32_t k)
{
    const ag_tmpl *T = st->cand;
    uint32_t pos = st->pos;
    if (U->len < pos + k || piece_at(U, pos) < 0)
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
    ag_bucket *b = bucket_of(st, st->cand->first_hash);
    for (ag_tmpl *U = b ? b->head : NULL; U; U = U->next_first)
        if (U != st->cand && ag_node_matches(U, st->pos + k, sh, h, at) &&
            ag_benefit_want_graph(&U->ben) && held_prefix_of(st, U, k))
            return U;
    return NULL;
}

/* A template whose last piece is exactly the held launches (after the pieces that went out). */
ag_tmpl *ag_exact_template(ag_stream *st)
{
    uint32_t n = st->pos + st->nheld;
    if (st->cand->len == n)
        return st->cand;
    ag_bucket *b = bucket_of(st, st->cand->first_hash);
    for (ag_tmpl *U = b ? b->head : NULL; U; U = U->next_first)
        if (U->len == n && ag_benefit_want_graph(&U->ben) && held_prefix_of(st, U, st->nheld) &&
            piece_at(U, st->pos) == (int)U->npieces - 1)
            return U;
    return NULL;
}

/* The first template that starts with this launch and for which `want` says yes. */
static ag_tmpl *first_starting(ag_stream *st, const ag_shape *sh, uint64_t h,
                               const CUlaunchAttribute *at, int (*want)(const ag_benefit *))
{
    if (!(st->first_bits[(h >> 6) & 3] & (1ull << (h & 63))))
        return NULL;
    ag_bucket *b = bucket_of(st, h);
    for (ag_tmpl *T = b ? b->head : NULL; T; T = T->next_first)
        if (want(&T->ben) && ag_node_matches(T, 0, sh, h, at))
            return T;
    return NULL;
}

/* In a trial, and eager this time: its occurrence is marked on the GPU (gpumark.h). */
static int trial_eager(const ag_benefit *b)
{
    return ag_benefit_want_gpu_mark(b) && !ag_benefit_want_graph(b);
}

ag_tmpl *ag_find_trial_start(ag_stream *st, const ag_shape *sh, uint64_t h,
                             const CUlaunchAttribute *at)
{
    return first_starting(st, sh, h, at, trial_eager);
}

ag_tmpl *ag_find_start(ag_stream *st, const ag_shape *sh, uint64_t h,
                       const CUlaunchAttribute *at)
{
    return first_starting(st, sh, h, at, ag_benefit_want_graph);
}

/* Held launches are not shown to the learner while they are held (most become a replay, which
 * ends the learner's segment anyway): when they go out eagerly instead, it sees them now. */
void ag_learn_held(ag_stream *st)
{
    for (uint32_t i = 0; i < st->nheld; i++)
        ag_learn_launch(st, st->held[i].shape_hash, &st->held[i].shape, i ? 0 : st->hold_t0);
}

/* ---- the template index ----------------------------------------------------------------- */

static void insert_template(ag_stream *st, ag_tmpl *T)
{
    ag_bucket *b = bucket_of(st, T->first_hash);
    if (!b) {
        if (!(b = calloc(1, sizeof *b)))
            return;
        b->first_hash = T->first_hash;
        HASH_ADD(hh, st->buckets, first_hash, sizeof b->first_hash, b);
    }
    for (ag_tmpl *U = b->head; U; U = U->next_first) {
        uint32_t n = U->len < T->len ? U->len : T->len, i;
        for (i = 0; i < n && U->nodes[i].shape_hash == T->nodes[i].shape_hash; i++)
            ;
        if (i == n && U->len < T->len)
            U->has_ext = 1;
        else if (i == n && T->len < U->len)
            T->has_ext = 1;
        else
            continue;
        /* one extends the other: both are one piece, so that the hold can move from one to
         * the other at any point (see held_prefix_of) */
        T->related = 1;
        if (!U->related) {
            U->related = 1;
            if (U->npieces > 1)
                plan(st, U, 0);
        }
    }
    T->next_first = b->head;
    b->head = T;
    st->first_bits[(T->first_hash >> 6) & 3] |= 1ull << (T->first_hash & 63);
    T->next_all = st->tmpls;
    st->tmpls = T;
    st->ntmpl++;
}

/* ---- completing a hold ------------------------------------------------------------------ */

/* A provisional template (from the profile) has been held whole: it becomes a real template,
 * made of the launches actually held. Returns it, or NULL. */
static ag_tmpl *adopt_provisional(ag_stream *st, ag_tmpl *P)
{
    uint32_t n = st->nheld;
    ag_shape *shapes = malloc(n * sizeof *shapes);
    uint64_t *hashes = malloc(n * sizeof *hashes);
    ag_tmpl *T = NULL;
    if (shapes && hashes) {
        for (uint32_t i = 0; i < n; i++) {
            shapes[i] = st->held[i].shape;
            hashes[i] = st->held[i].shape_hash;
        }
        uint64_t key = ag_hash(hashes, n * sizeof *hashes);
        ag_sighting *s = ag_learn_adopt(&st->learn, key, n);
        if (s && s->tmpl) {
            T = s->tmpl; /* learned meanwhile */
        } else if (s && (T = ag_tmpl_new(key, shapes, hashes, n))) {
            insert_template(st, T);
            s->tmpl = T;
            ag_benefit_trust(&T->ben);
            ag_stat_inc(AG_ST_SEQ_TEMPLATES);
        }
    }
    free(shapes);
    free(hashes);
    if (T)
        ag_profile_used(P->prof);
    else
        ag_profile_failed(P->prof);
    free(P);
    return T;
}

/* A piece's graph failed: what is held goes out eagerly, the pieces before it are done, and
 * the occurrence ends (graphs off for T for a while). */
static void piece_failed(ag_stream *st, ag_tmpl *T)
{
    uint32_t n = st->pos;
    ag_issue_held(st);
    T->eager_runs++;
    T->broken[AG_BREAK_GRAPH_API]++;
    ag_benefit_failed(&T->ben);
    ag_mark_end(st, NULL, 0);
    ag_hold_end(st);
    if (n)
        ag_learn_replayed(&st->learn, n);
}

/* The held launches are a whole piece of st->cand, not its last: it goes to the GPU now, and
 * the hold goes on with the next piece. */
static void piece_go(ag_stream *st)
{
    ag_tmpl *T = st->cand;
    int built = 0;
    if (ag_tmpl_replay(st, T, st->piece, &built)) {
        piece_failed(st, T);
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
    AG_ASSERT(ag_lock_held(&st->mu));
    ag_tmpl *T = st->cand;
    int built = 0;
    if (T->prof && !(T = st->cand = adopt_provisional(st, T))) {
        uint32_t n = st->nheld;
        ag_issue_held(st);
        ag_hold_end(st);
        ag_learn_replayed(&st->learn, n);
        return;
    }
    uint32_t n = st->pos + st->nheld;
    /* the host's time per held launch, before this replay's own work (a build, say) */
    uint64_t held_ns = T->planned ? 0 : (ag_now_ns() - st->occ_t0) / n;
    if (ag_tmpl_replay(st, T, st->piece, &built)) {
        piece_failed(st, T);
        return;
    }
    T->replays++;
    ag_mark_end(st, T, st->occ_built | built);
    occurred(T, 1, st->occ_built | built, st->occ_t0);
    if (!T->planned) /* measured now: cut T into pieces */
        plan(st, T, held_ns);
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
    ag_issue_held(st);
    ag_benefit_aborted(&T->ben);
    ag_mark_end(st, NULL, 0);
    if (pos)
        ag_learn_replayed(&st->learn, pos); /* those launches went out as graphs */
    ag_learn_held(st);
    ag_hold_end(st);
}

/* ---- learning --------------------------------------------------------------------------- */

void ag_on_closed(ag_stream *st, const ag_closed *c)
{
    ag_sighting *s = c->s;
    if (s->count == 1)
        ag_stat_inc(AG_ST_SEQ_SEEN);
    ag_tmpl *T = s->tmpl;
    if (T) {
        int same = T->len == c->len;
        for (uint32_t i = 0; same && i < c->len; i++)
            same = ag_shape_eq(&T->nodes[i].shape, &c->shapes[i]); /* else a collision */
        if (st->marks)
            ag_mark_end(st, same ? T : NULL, 0);
        if (!same)
            return;
        T->eager_runs++;
        occurred(T, 0, 0, c->t0);
        /* graphs lost here: its occurrences should not keep the stream learning (resting) */
        s->barren = T->ben.state == AG_BEN_OFF;
        return;
    }
    if (st->marks)
        ag_mark_end(st, NULL, 0);
    if (s->count < st->learn.min_repeats || st->ntmpl >= AG_MAX_TEMPLATES)
        return;
    T = ag_tmpl_new(s->key, c->shapes, c->hashes, c->len);
    if (!T)
        return;
    insert_template(st, T);
    s->tmpl = T;
    if (c->t0 || ag_opt(AG_OPT_PIECE)) { /* the host's time per launch of this occurrence, less
                                          * the launches' own (or fixed pieces) */
        uint64_t host = (ag_now_ns() - c->t0) / c->len, eager = ag_eager_launch_ns();
        plan(st, T, host > 2 * eager ? host - eager : host / 2);
    }
    T->eager_runs++;
    occurred(T, 0, 0, c->t0);
    ag_stat_inc(AG_ST_SEQ_TEMPLATES);
    ag_log(AG_LOG_DEBUG, "sequence %016llx of %u launches (first %s) seen %u times: template",
           (unsigned long long)T->key, T->len, T->nodes[0].lay->name, s->count);
}

void ag_learn_launch(ag_stream *st, uint64_t h, const ag_shape *sh, uint64_t now)
{
    ag_closed c;
    uint32_t rests = st->learn.rests;
    /* a segment's start time serves the trials of templates; a stream without any (yet) has
     * no use for it, and an unknown start (0) only skips one sample */
    if (ag_learn_starting(&st->learn) && !now && st->ntmpl)
        now = ag_now_ns();
    if (ag_learn_push(&st->learn, h, sh, now, &c))
        ag_on_closed(st, &c);
    if (AG_UNLIKELY(st->learn.rests != rests)) {
        ag_stat_inc(AG_ST_RESTS);
        ag_log(AG_LOG_DEBUG, "stream %p: almost nothing repeated in the last window of "
               "launches; learning rests for %u launches", (void *)st->handle,
               __atomic_load_n(&st->learn.rest_left, __ATOMIC_RELAXED));
    }
}

/* A profile sequence that starts with this launch: held for the first time, its template is
 * made when it completes. */
ag_tmpl *ag_provisional(const ag_shape *sh, const ag_layout *lay, uint64_t h)
{
    ag_pshape ps;
    ag_pshape_of(sh, lay, &ps);
    ag_pseq *q = ag_profile_first(&ps);
    ag_tmpl *T = q ? calloc(1, sizeof *T) : NULL;
    if (T) {
        T->prof = q;
        T->len = ag_profile_len(q);
        T->first_hash = h;
        T->npieces = 1;
        T->ends[0] = T->len;
    }
    return T;
}

ag_tmpl *ag_discard_provisional(ag_tmpl *T)
{
    if (T && T->prof)
        free(T);
    return NULL;
}

/* ---- emptying a stream's state ---------------------------------------------------------- */

/* Everything a retired stream state holds goes: what is held (flushed), its templates and graphs,
 * what it learned (kept for the profile first). */
void ag_stream_empty(ag_stream *st)
{
    AG_ASSERT(ag_lock_held(&st->mu));
    ag_flush_locked(st, AG_ST_FL_ALL);
    ag_profile_keep(st); /* what it learned outlives it in the profile */
    for (ag_tmpl *T = st->tmpls, *next; T; T = next) {
        next = T->next_all;
        ag_tmpl_free(st, T);
    }
    st->tmpls = NULL;
    st->ntmpl = 0;
    ag_bucket *b, *tmp;
    HASH_ITER(hh, st->buckets, b, tmp) {
        HASH_DEL(st->buckets, b);
        free(b);
    }
    memset(st->first_bits, 0, sizeof st->first_bits);
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
