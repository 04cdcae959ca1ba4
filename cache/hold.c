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
        n->lay = ag_layout_get(shapes[i].fn);
        if (!n->lay || n->lay->size != shapes[i].psize)
            goto fail;
        size_t sz = n->lay->size ? n->lay->size : 1;
        if (!(n->exec_vals = malloc(sz)) || !(n->graph_vals = malloc(sz)))
            goto fail;
    }
    ag_benefit_init(&T->ben, ag_opt(AG_OPT_BENEFIT) == AG_BENEFIT_ALWAYS);
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
    st->hold_t0 = now;
    atomic_fetch_add(&ag_nholding, 1);
    ag_watchdog_kick();
}

/* nheld and join_pending are written under the stream lock, and also read without it (the
 * watchdog, the capture path) as a hint that is checked again under the lock: the writes are
 * relaxed atomic stores, so such reads are not data races. */
void ag_hold_end(ag_stream *st)
{
    AG_ASSERT(ag_lock_held(&st->mu) && st->nheld > 0);
    __atomic_store_n(&st->nheld, 0, __ATOMIC_RELAXED);
    st->arena_used = 0;
    st->cand = NULL;
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
    /* what is held is a prefix of st->cand, and fits the held list */
    AG_ASSERT(ag_lock_held(&st->mu) && st->cand && st->held);
    AG_ASSERT(st->nheld < st->learn.max_nodes && st->nheld < st->cand->len);
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

/* Whether U's first k launches are the held ones. */
static int held_prefix_of(const ag_stream *st, const ag_tmpl *U, uint32_t k)
{
    if (U->len < k)
        return 0;
    for (uint32_t i = 0; i < k; i++)
        if (U->nodes[i].shape_hash != st->held[i].shape_hash ||
            !ag_shape_eq(&U->nodes[i].shape, &st->held[i].shape))
            return 0;
    return 1;
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
        if (U != st->cand && ag_node_matches(U, k, sh, h, at) && ag_benefit_want_graph(&U->ben) &&
            held_prefix_of(st, U, k))
            return U;
    return NULL;
}

/* A template that is exactly the held launches. */
ag_tmpl *ag_exact_template(ag_stream *st)
{
    if (st->cand->len == st->nheld)
        return st->cand;
    ag_bucket *b = bucket_of(st, st->cand->first_hash);
    for (ag_tmpl *U = b ? b->head : NULL; U; U = U->next_first)
        if (U->len == st->nheld && ag_benefit_want_graph(&U->ben) && held_prefix_of(st, U, U->len))
            return U;
    return NULL;
}

ag_tmpl *ag_find_start(ag_stream *st, const ag_shape *sh, uint64_t h,
                           const CUlaunchAttribute *at)
{
    if (!(st->first_bits[(h >> 6) & 3] & (1ull << (h & 63))))
        return NULL;
    ag_bucket *b = bucket_of(st, h);
    for (ag_tmpl *T = b ? b->head : NULL; T; T = T->next_first)
        if (ag_node_matches(T, 0, sh, h, at) && ag_benefit_want_graph(&T->ben))
            return T;
    return NULL;
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

/* The held launches are one whole occurrence of st->cand: replay it. */
void ag_complete(ag_stream *st)
{
    AG_ASSERT(ag_lock_held(&st->mu));
    ag_tmpl *T = st->cand;
    uint32_t n = st->nheld;
    int built = 0;
    if (T->prof && !(T = st->cand = adopt_provisional(st, T))) {
        ag_issue_held(st);
        ag_hold_end(st);
        ag_learn_replayed(&st->learn, n);
        return;
    }
    if (ag_tmpl_replay(st, T, &built) == 0) {
        T->replays++;
        occurred(T, 1, built, st->hold_t0);
    } else {
        ag_issue_held(st);
        T->eager_runs++;
        ag_benefit_failed(&T->ben);
    }
    ag_hold_end(st);
    if (st->held)
        ag_learn_replayed(&st->learn, n);
}

/* ---- learning --------------------------------------------------------------------------- */

void ag_on_closed(ag_stream *st, const ag_closed *c)
{
    ag_sighting *s = c->s;
    if (s->count == 1)
        ag_stat_inc(AG_ST_SEQ_SEEN);
    ag_tmpl *T = s->tmpl;
    if (T) {
        if (T->len != c->len)
            return;
        for (uint32_t i = 0; i < c->len; i++)
            if (!ag_shape_eq(&T->nodes[i].shape, &c->shapes[i]))
                return; /* a fingerprint collision: not an occurrence of T */
        T->eager_runs++;
        occurred(T, 0, 0, c->t0);
        return;
    }
    if (s->count < st->learn.min_repeats || st->ntmpl >= AG_MAX_TEMPLATES)
        return;
    T = ag_tmpl_new(s->key, c->shapes, c->hashes, c->len);
    if (!T)
        return;
    insert_template(st, T);
    s->tmpl = T;
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
    ag_sync_open(st);
    free(st->arena);
    free(st->ptrs);
    st->arena = NULL;
    st->ptrs = NULL;
    st->arena_cap = st->ptrs_cap = 0;
}
