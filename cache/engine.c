/* The engine: holds launches that continue a known sequence, replays completed sequences as
 * graphs, and flushes what it holds -- in order -- before every ordering point.
 *
 * Invariant: what a stream holds is always a prefix of one template, in the application's
 * order; it leaves either as that template's graph (when the prefix is a whole template) or
 * as eager launches, before anything else can observe the stream. Held launches return
 * CUDA_SUCCESS: only launches whose exact shape already ran successfully are ever held. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../policy/log.h"
#include "../policy/options.h"
#include "../policy/stats.h"
#include "clock.h"
#include "driver.h"
#include "engine.h"
#include "graph.h"
#include "internal.h"
#include "profile.h"
#include "registry.h"
#include "selftime.h"

/* Larger argument blocks pass through: copying them costs more than a launch saves. */
#define AG_MAX_PARAM_BYTES 4096
/* Templates one stream may keep (graphs are limited separately by AUTOGRAPH_MAX_GRAPHS). */
#define AG_MAX_TEMPLATES 2048

ag_hot_t ag_hot __attribute__((aligned(64))) = { .registry_gen = 1 };
static pthread_once_t g_init_once = PTHREAD_ONCE_INIT;

/* ---- passing through ------------------------------------------------------------------ */

static CUresult passthrough_call(const ag_launch *l);

/* The launch as the application made it (timed as the driver's in a selftime build). */
static inline CUresult pass_timed(const ag_launch *l)
{
    AG_DRV_BEGIN();
    CUresult r = passthrough_call(l);
    AG_DRV_END();
    return r;
}

static __attribute__((hot)) CUresult passthrough(const ag_launch *l)
{
    ag_stat_inc(AG_ST_PASSED);
    return pass_timed(l);
}

/* A launch passed while learning rests (counted in launches.eager too, when summed). */
static inline CUresult pass_rested(const ag_launch *l)
{
    ag_stat_inc(AG_ST_RESTED);
    return pass_timed(l);
}

static __attribute__((hot)) CUresult passthrough_call(const ag_launch *l)
{
    switch (l->entry) {
    case AG_ENTRY_LAUNCH:
    case AG_ENTRY_LAUNCH_PTSZ: {
        CUresult (*fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       unsigned, CUstream, void **, void **) =
            l->entry == AG_ENTRY_LAUNCH ? ag_drv.cuLaunchKernel : ag_drv.cuLaunchKernel_ptsz;
        return fn(l->f, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
                  l->block[2], l->smem, l->stream, l->params, l->extra);
    }
    case AG_ENTRY_EX:
        return ag_drv.cuLaunchKernelEx(l->config, l->f, l->params, l->extra);
    case AG_ENTRY_EX_PTSZ:
        return ag_drv.cuLaunchKernelEx_ptsz(l->config, l->f, l->params, l->extra);
    case AG_ENTRY_COOP:
        return ag_drv.cuLaunchCooperativeKernel(l->f, l->grid[0], l->grid[1], l->grid[2],
                                                l->block[0], l->block[1], l->block[2], l->smem,
                                                l->stream, l->params);
    default:
        return ag_drv.cuLaunchCooperativeKernel_ptsz(l->f, l->grid[0], l->grid[1], l->grid[2],
                                                     l->block[0], l->block[1], l->block[2],
                                                     l->smem, l->stream, l->params);
    }
}

/* Issues one held launch as the application made it, on the stream's canonical handle. */
static CUresult issue(ag_stream *st, const ag_rec *r)
{
    const ag_shape *s = &r->shape;
    void *ptrs_small[16], **ptrs = ptrs_small;
    if (r->lay->nparams > 16 && !(ptrs = malloc(r->lay->nparams * sizeof *ptrs)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    ag_params_ptrs(r->lay, st->arena + r->blob, ptrs);
    void **kp = r->lay->nparams ? ptrs : NULL;
    CUresult res;
    if (s->kind == AG_KIND_COOP) {
        res = ag_drv.cuLaunchCooperativeKernel((CUfunction)s->fn, s->grid[0], s->grid[1],
                                               s->grid[2], s->block[0], s->block[1], s->block[2],
                                               s->smem, st->issue, kp);
    } else if (s->kind == AG_KIND_ATTRS) {
        CUlaunchConfig c = { s->grid[0], s->grid[1], s->grid[2], s->block[0], s->block[1],
                             s->block[2], s->smem, st->issue,
                             (CUlaunchAttribute *)(st->arena + r->attrs), s->nattrs };
        res = ag_drv.cuLaunchKernelEx(&c, (CUfunction)s->fn, kp, NULL);
    } else {
        res = ag_drv.cuLaunchKernel((CUfunction)s->fn, s->grid[0], s->grid[1], s->grid[2],
                                    s->block[0], s->block[1], s->block[2], s->smem, st->issue,
                                    kp, NULL);
    }
    if (ptrs != ptrs_small)
        free(ptrs);
    return res;
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

static void hold_begin(ag_stream *st, uint64_t now)
{
    st->hold_t0 = now;
    atomic_fetch_add(&ag_nholding, 1);
    ag_watchdog_kick();
}

/* nheld and join_pending are written under the stream lock, and also read without it (the
 * watchdog, the capture path) as a hint that is checked again under the lock: the writes are
 * relaxed atomic stores, so such reads are not data races. */
static void hold_end(ag_stream *st)
{
    __atomic_store_n(&st->nheld, 0, __ATOMIC_RELAXED);
    st->arena_used = 0;
    st->cand = NULL;
    atomic_fetch_sub(&ag_nholding, 1);
}

/* Publishes whether st is open (holds, or has a learning segment under way), for the legacy
 * stream rule of the other side. Called with st->mu held, after every change. */
static inline void sync_open(ag_stream *st)
{
    uint8_t open = st->nheld > 0 || (st->held && st->learn.len > 0);
    if (__builtin_expect(open == st->open, 1) || st->kind == AG_SK_DEAD ||
        (!st->blocking && st->kind != AG_SK_LEGACY))
        return;
    __atomic_store_n(&st->open, open, __ATOMIC_RELAXED); /* read unlocked by flush_each */
    if (st->kind == AG_SK_LEGACY) {
        /* the process-wide count first when opening, last when closing: whoever sees the
         * context's flag set also sees the count (cross_flush reads the count first) */
        if (open)
            atomic_fetch_add(&ag_hot.legacy_open_any, 1);
        atomic_store(&st->ci->legacy_open, open);
        if (!open)
            atomic_fetch_sub(&ag_hot.legacy_open_any, 1);
    } else
        atomic_fetch_add(&st->ci->blocking_open, open ? 1 : -1);
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
static int hold_one(ag_stream *st, const ag_launch *l, const ag_layout *lay, const ag_shape *sh,
                    uint64_t h, const CUlaunchAttribute *at)
{
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

static int node_matches(const ag_tmpl *T, uint32_t k, const ag_shape *sh, uint64_t h,
                        const CUlaunchAttribute *at)
{
    if (k >= T->len || T->nodes[k].shape_hash != h || !ag_shape_eq(&T->nodes[k].shape, sh))
        return 0;
    /* attributes are fingerprinted in the shape; a built node knows them exactly */
    return sh->kind != AG_KIND_ATTRS || !T->exec ||
           !memcmp(T->nodes[k].attrs, at, sh->nattrs * sizeof *at);
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
static ag_tmpl *switch_candidate(ag_stream *st, const ag_shape *sh, uint64_t h,
                                 const CUlaunchAttribute *at)
{
    uint32_t k = st->nheld;
    if (st->cand->prof)
        return NULL;
    ag_bucket *b = bucket_of(st, st->cand->first_hash);
    for (ag_tmpl *U = b ? b->head : NULL; U; U = U->next_first)
        if (U != st->cand && node_matches(U, k, sh, h, at) && ag_benefit_want_graph(&U->ben) &&
            held_prefix_of(st, U, k))
            return U;
    return NULL;
}

/* A template that is exactly the held launches. */
static ag_tmpl *exact_template(ag_stream *st)
{
    if (st->cand->len == st->nheld)
        return st->cand;
    ag_bucket *b = bucket_of(st, st->cand->first_hash);
    for (ag_tmpl *U = b ? b->head : NULL; U; U = U->next_first)
        if (U->len == st->nheld && ag_benefit_want_graph(&U->ben) && held_prefix_of(st, U, U->len))
            return U;
    return NULL;
}

static ag_tmpl *find_start(ag_stream *st, const ag_shape *sh, uint64_t h,
                           const CUlaunchAttribute *at)
{
    if (!(st->first_bits[(h >> 6) & 3] & (1ull << (h & 63))))
        return NULL;
    ag_bucket *b = bucket_of(st, h);
    for (ag_tmpl *T = b ? b->head : NULL; T; T = T->next_first)
        if (node_matches(T, 0, sh, h, at) && ag_benefit_want_graph(&T->ben))
            return T;
    return NULL;
}

static void learn_push(ag_stream *st, uint64_t h, const ag_shape *sh, uint64_t now);

/* Held launches are not shown to the learner while they are held (most become a replay, which
 * ends the learner's segment anyway): when they go out eagerly instead, it sees them now. */
static void learn_held(ag_stream *st)
{
    for (uint32_t i = 0; i < st->nheld; i++)
        learn_push(st, st->held[i].shape_hash, &st->held[i].shape, i ? 0 : st->hold_t0);
}

static void issue_held(ag_stream *st)
{
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

static void insert_template(ag_stream *st, ag_tmpl *T);

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
static void complete(ag_stream *st)
{
    ag_tmpl *T = st->cand;
    uint32_t n = st->nheld;
    int built = 0;
    if (T->prof && !(T = st->cand = adopt_provisional(st, T))) {
        issue_held(st);
        hold_end(st);
        ag_learn_replayed(&st->learn, n);
        return;
    }
    if (ag_tmpl_replay(st, T, &built) == 0) {
        T->replays++;
        occurred(T, 1, built, st->hold_t0);
    } else {
        issue_held(st);
        T->eager_runs++;
        ag_benefit_failed(&T->ben);
    }
    hold_end(st);
    if (st->held)
        ag_learn_replayed(&st->learn, n);
}

void ag_flush_locked(ag_stream *st, enum ag_stat reason)
{
    if (!st->nheld)
        return;
    ag_stat_inc(reason);
    if (st->cand->prof) { /* a profile sequence that did not come whole this time */
        issue_held(st);
        learn_held(st);
        ag_profile_failed(st->cand->prof);
        free(st->cand);
        hold_end(st);
        return;
    }
    ag_tmpl *T = exact_template(st);
    if (T) {
        st->cand = T;
        complete(st);
        return;
    }
    ag_log(AG_LOG_TRACE, "flushing %u held launches of sequence %016llx eagerly (%s)", st->nheld,
           (unsigned long long)st->cand->key, ag_stat_names[reason]);
    issue_held(st);
    learn_held(st);
    ag_benefit_aborted(&st->cand->ben);
    hold_end(st);
}

/* ---- learning --------------------------------------------------------------------------- */

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

static void on_closed(ag_stream *st, const ag_closed *c)
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

static void learn_push(ag_stream *st, uint64_t h, const ag_shape *sh, uint64_t now)
{
    ag_closed c;
    uint32_t rests = st->learn.rests;
    /* a segment's start time serves the trials of templates; a stream without any (yet) has
     * no use for it, and an unknown start (0) only skips one sample */
    if (ag_learn_starting(&st->learn) && !now && st->ntmpl)
        now = ag_now_ns();
    if (ag_learn_push(&st->learn, h, sh, now, &c))
        on_closed(st, &c);
    if (__builtin_expect(st->learn.rests != rests, 0)) {
        ag_stat_inc(AG_ST_RESTS);
        ag_log(AG_LOG_DEBUG, "stream %p: almost nothing repeated in the last window of "
               "launches; learning rests for %u launches", (void *)st->handle,
               __atomic_load_n(&st->learn.rest_left, __ATOMIC_RELAXED));
    }
}

void ag_order_locked(ag_stream *st, enum ag_stat reason)
{
    ag_flush_locked(st, reason);
    ag_closed c;
    if (st->held && ag_learn_order(&st->learn, &c))
        on_closed(st, &c);
}

/* ---- per-thread default streams ---------------------------------------------------------- */

/* The owner thread, before anything else on its per-thread stream: if another thread flushed
 * held work to the side stream, later work must wait for it. */
static void ptds_join(ag_stream *st)
{
    if (st->join_pending) {
        ag_drv.cuStreamWaitEvent(CU_STREAM_PER_THREAD, st->ev_side, 0);
        __atomic_store_n(&st->join_pending, 0, __ATOMIC_RELAXED);
    }
}

/* The owner thread, as a hold begins: marks what the stream holds so far, so that a flush from
 * another thread can order the side stream after it. */
static int ptds_mark(ag_stream *st)
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

/* ---- the launch path -------------------------------------------------------------------- */

/* Work on a blocking stream waits for the legacy default stream of its context and vice
 * versa: so before anything is issued or held on one side, the other side must not hold. */
static void cross_flush_slow(ag_stream *st);

static inline void cross_flush(ag_stream *st)
{
    ag_ctxinfo *ci = st->ci;
    /* a blocking stream looks at its context only when some legacy stream is open at all:
     * one line fewer to read on the common path (see hot.h) */
    if (st->kind == AG_SK_LEGACY
            ? atomic_load_explicit(&ci->blocking_open, memory_order_acquire) != 0
            : st->blocking && atomic_load_explicit(&ag_hot.legacy_open_any, memory_order_acquire) &&
                  atomic_load_explicit(&ci->legacy_open, memory_order_acquire))
        cross_flush_slow(st);
}

/* A profile sequence that starts with this launch: held for the first time, its template is
 * made when it completes. */
static ag_tmpl *provisional(const ag_shape *sh, const ag_layout *lay, uint64_t h)
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

static ag_tmpl *discard_provisional(ag_tmpl *T)
{
    if (T && T->prof)
        free(T);
    return NULL;
}

/* ---- rest tokens ------------------------------------------------------------------------ */

/* A thread that launches on a resting created stream takes a batch of the rest's launches at
 * once and keeps them here; its next launches and ordering points on that stream then pass
 * without touching the stream's state at all (on a real host each line we touch between two
 * driver calls is a cache miss, see hot.h). Tokens are void when the registry generation moves
 * (the stream was destroyed; its handle may be reused) or when the rest epoch moves: a stream
 * whose tokens are out bumps it before it learns again, so before it can hold anything, and a
 * thread that comes after that (in the application's own order) sees its tokens void. */
#define AG_REST_BATCH 64

typedef struct ag_rest_token {
    CUstream stream;
    unsigned long gen, epoch;
    uint32_t units;
    uint8_t blocking;
} ag_rest_token;

static __thread ag_rest_token t_token __attribute__((tls_model("initial-exec")));

/* Whether this thread's token lets a call on stream s pass untouched. A blocking stream must
 * still obey the legacy rule: while any legacy stream is open, it takes the long way. */
static inline int token_valid(CUstream s)
{
    const ag_rest_token *t = &t_token;
    return t->units && t->stream == s &&
           t->gen == atomic_load_explicit(&ag_hot.registry_gen, memory_order_acquire) &&
           t->epoch == atomic_load_explicit(&ag_hot.rest_epoch, memory_order_acquire) &&
           !(t->blocking && atomic_load_explicit(&ag_hot.legacy_open_any, memory_order_acquire));
}

/* Takes one launch off st's rest, and a batch more for this thread's token when st is a
 * created stream. gen and epoch: as read before st was looked up. */
static inline int rest_take(ag_stream *st, CUstream s, unsigned long gen, unsigned long epoch)
{
    if (__atomic_load_n(&st->kind, __ATOMIC_RELAXED) != AG_SK_REGULAR)
        return ag_learn_resting(&st->learn);
    if (!__atomic_load_n(&st->learn.rest_left, __ATOMIC_RELAXED))
        return 0;
    __atomic_store_n(&st->tokens_out, 1, __ATOMIC_RELAXED); /* published by the CAS */
    uint32_t n = ag_learn_rest_take(&st->learn, AG_REST_BATCH + 1);
    if (!n)
        return 0;
    ag_rest_token *t = &t_token;
    t->stream = s;
    t->gen = gen;
    t->epoch = epoch;
    t->units = n - 1;
    t->blocking = st->blocking;
    return 1;
}

/* st stops resting (its lock held): void every thread's tokens for it. */
static void tokens_void(ag_stream *st)
{
    __atomic_store_n(&st->tokens_out, 0, __ATOMIC_RELAXED);
    atomic_fetch_add_explicit(&ag_hot.rest_epoch, 1, memory_order_acq_rel);
}

static CUresult launch_learning(ag_stream *st, const ag_launch *l);

/* The part every launch runs: kept small, so that a launch that passes while learning rests
 * touches few lines of code (see hot.h); the rest is out of line. */
static inline CUresult launch_locked(ag_stream *st, const ag_launch *l)
{
    if (__builtin_expect(st->kind == AG_SK_DEAD, 0))
        return passthrough(l);
    if (st->kind == AG_SK_PTDS)
        ptds_join(st);
    if (!st->nheld && ag_learn_resting(&st->learn))
        return pass_rested(l);
    /* learning again (and so perhaps holding): first void the tokens of the rest */
    if (__builtin_expect(__atomic_load_n(&st->tokens_out, __ATOMIC_ACQUIRE), 0))
        tokens_void(st);
    return launch_learning(st, l);
}

static __attribute__((noinline)) CUresult launch_learning(ag_stream *st, const ag_launch *l)
{
    if (ag_stream_prepare(st))
        return passthrough(l);
    const ag_layout *lay = ag_layout_get(l->f);
    ag_shape sh;
    CUlaunchAttribute at[AG_MAX_ATTRS];
    if (!lay || !lay->graphable || lay->size > AG_MAX_PARAM_BYTES ||
        (l->entry >= AG_ENTRY_EX && l->entry <= AG_ENTRY_EX_PTSZ && !l->config) ||
        ag_shape_make(l, lay, st->ctx, &sh, at)) {
        ag_stat_inc(AG_ST_OPAQUE);
        ag_order_locked(st, AG_ST_FL_DIVERGE);
        return passthrough(l);
    }
    uint64_t h = ag_shape_hash(&sh), now = 0;

    if (st->nheld) {
        int ok;
        if (st->cand->prof) {
            ag_pshape ps;
            ag_pshape_of(&sh, lay, &ps);
            ok = ag_profile_node_is(st->cand->prof, st->nheld, &ps);
        } else {
            ok = node_matches(st->cand, st->nheld, &sh, h, at);
        }
        if (!ok) {
            ag_tmpl *U = switch_candidate(st, &sh, h, at);
            if (U) {
                st->cand = U;
            } else {
                ag_flush_locked(st, AG_ST_FL_DIVERGE);
                goto idle;
            }
        }
        if (hold_one(st, l, lay, &sh, h, at)) {
            ag_order_locked(st, AG_ST_FL_DIVERGE);
            return passthrough(l);
        }
        if (st->nheld == st->cand->len && !st->cand->has_ext)
            complete(st);
        return CUDA_SUCCESS;
    }
idle:;
    /* an application capture may have begun since the caller looked: then hold nothing (the
     * capture's flush of every stream waits for this lock, so nothing held can be missed) */
    ag_tmpl *T = atomic_load_explicit(&ag_hot.captures, memory_order_acquire) ? NULL
                                                                         : find_start(st, &sh, h, at);
    if (!T && !atomic_load_explicit(&ag_hot.captures, memory_order_acquire) && ag_profile_active())
        T = provisional(&sh, lay, h);
    if (T && st->kind == AG_SK_PTDS && ptds_mark(st))
        T = discard_provisional(T);
    if (T) {
        now = ag_now_ns();
        st->cand = T;
        if (hold_one(st, l, lay, &sh, h, at) == 0) {
            hold_begin(st, now);
            return CUDA_SUCCESS;
        }
        st->cand = NULL;
        discard_provisional(T);
    }
    CUresult r = passthrough(l);
    if (r == CUDA_SUCCESS)
        learn_push(st, h, &sh, now);
    else
        ag_order_locked(st, AG_ST_FL_DIVERGE);
    return r;
}

static CUresult launch_kernel(const ag_launch *l);

__attribute__((hot)) CUresult ag_launch_kernel(const ag_launch *l)
{
    AG_SELF_BEGIN();
    CUresult r = launch_kernel(l);
    AG_SELF_END(AG_SELF_LAUNCH);
    return r;
}

/* The application is capturing somewhere: hold nothing, learn nothing, ask the driver
 * nothing (a question about a capturing stream can invalidate the capture). */
static __attribute__((noinline, cold)) CUresult launch_in_capture(const ag_launch *l, int ptsz)
{
    ag_stream *st = ag_stream_find(l->stream, ptsz);
    if (st && (__atomic_load_n(&st->nheld, __ATOMIC_RELAXED) ||
               __atomic_load_n(&st->join_pending, __ATOMIC_RELAXED))) {
        /* held before the capture began (this thread raced the capture's flush): what is held
         * goes first, never overtaken */
        ag_lock(&st->mu);
        if (st->kind == AG_SK_PTDS)
            ptds_join(st);
        ag_flush_locked(st, AG_ST_FL_ORDER);
        sync_open(st);
        ag_unlock(&st->mu);
    }
    ag_stat_inc(AG_ST_CAPTURED);
    return passthrough(l);
}

static inline CUresult launch_kernel(const ag_launch *l)
{
    ag_stat_inc((enum ag_stat)l->entry);
    if (__builtin_expect(!ag_engine_on(), 0))
        return passthrough(l);
    int ptsz = ag_entry_ptsz(l->entry);
    if (__builtin_expect(atomic_load_explicit(&ag_hot.captures, memory_order_acquire) != 0, 0))
        return launch_in_capture(l, ptsz);
    if (token_valid(l->stream)) { /* learning rests on this stream: see "rest tokens" */
        t_token.units--;
        return pass_rested(l);
    }
    unsigned long gen = atomic_load_explicit(&ag_hot.registry_gen, memory_order_acquire);
    unsigned long epoch = atomic_load_explicit(&ag_hot.rest_epoch, memory_order_acquire);
    ag_stream *st = ag_stream_of(l->stream, ptsz);
    if (!st)
        return passthrough(l);
    cross_flush(st);
    /* learning rests: pass straight through, without the lock (see ag_learn_resting). Not on
     * a per-thread stream, whose owner must first join what another thread flushed to its
     * side stream -- and that flush may be what began the rest. */
    if (__atomic_load_n(&st->kind, __ATOMIC_RELAXED) != AG_SK_PTDS &&
        rest_take(st, l->stream, gen, epoch))
        return pass_rested(l);
    ag_lock(&st->mu);
    CUresult r = launch_locked(st, l);
    sync_open(st);
    ag_unlock(&st->mu);
    return r;
}

/* ---- ordering points -------------------------------------------------------------------- */

typedef struct {
    ag_ctxinfo *ci;       /* only this context; NULL: all */
    int blocking_only;    /* only blocking, non-legacy streams */
    enum ag_stat reason;
} flush_req;

void ag_flush_foreign(ag_stream *st, enum ag_stat reason, int order)
{
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
    sync_open(st);
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

static __attribute__((noinline)) void cross_flush_slow(ag_stream *st)
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
    if (!captures && token_valid(s))
        return; /* learning rests on s: nothing held, nothing to end (see "rest tokens") */
    /* a stream never seen needs no state, unless the legacy rule may concern it */
    ag_stream *st = captures ? ag_stream_find(s, ptsz) : ag_stream_of(s, ptsz);
    if (!st)
        return;
    cross_flush(st);
    /* learning rests: nothing is held and no segment is open, so there is nothing to end (see
     * ag_learn_resting; per-thread streams may have a side stream to join) */
    if (__atomic_load_n(&st->kind, __ATOMIC_RELAXED) != AG_SK_PTDS && ag_learn_rests(&st->learn))
        return;
    ag_lock(&st->mu);
    if (st->kind == AG_SK_PTDS)
        ptds_join(st);
    if (st->kind != AG_SK_DEAD)
        ag_order_locked(st, AG_ST_FL_ORDER);
    sync_open(st);
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

static void empty_state(ag_stream *st)
{
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
    sync_open(st);
    free(st->arena);
    free(st->ptrs);
    st->arena = NULL;
    st->ptrs = NULL;
    st->arena_cap = st->ptrs_cap = 0;
}

void ag_order_invalidate(void)
{
    if (!ag_engine_started())
        return;
    ag_flush_all(AG_ST_FL_ALL);
    ag_streams_retire_all(empty_state);
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
    cross_flush(st);
    ag_stream_retire(st, empty_state);
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

/* ---- life cycle ------------------------------------------------------------------------- */

static void collect_top(ag_stream *st, void *arg);

static void at_exit(void)
{
    if (atomic_load(&ag_hot.state) == AG_ENGINE_FORKED)
        return;
    int was_on = ag_engine_on();
    atomic_store(&ag_hot.state, AG_ENGINE_EXITING);
    if (was_on)
        ag_flush_all(AG_ST_FL_EXIT);
    ag_profile_save();
    ag_report_stats();
}

static void before_fork(void)
{
    if (ag_engine_on())
        ag_flush_all(AG_ST_FL_EXIT);
}

static void in_child(void)
{
    /* The child must never touch the parent's graphs or locks: pass everything through. */
    atomic_store(&ag_hot.state, AG_ENGINE_FORKED);
}

static void init(void)
{
    atexit(at_exit); /* registered after cudart's own: runs before its teardown */
    pthread_atfork(before_fork, NULL, in_child);
    if (ag_opt(AG_OPT_DISABLE)) {
        atomic_store(&ag_hot.state, AG_ENGINE_DISABLED);
        ag_log(AG_LOG_INFO, "disabled by AUTOGRAPH_DISABLE: launches pass through");
        return;
    }
    ag_profile_load();
    atomic_store(&ag_hot.state, AG_ENGINE_ON);
    ag_log(AG_LOG_INFO, "active (min repeats %lld, max nodes %lld, max hold %lld us)",
           ag_opt(AG_OPT_MIN_REPEATS), ag_opt(AG_OPT_MAX_NODES), ag_opt(AG_OPT_MAX_HOLD_US));
}

int ag_engine_on(void)
{
    int s = atomic_load_explicit(&ag_hot.state, memory_order_acquire);
    if (__builtin_expect(s == AG_ENGINE_UNINIT, 0)) {
        pthread_once(&g_init_once, init);
        s = atomic_load(&ag_hot.state);
    }
    return s == AG_ENGINE_ON;
}

int ag_engine_started(void)
{
    return atomic_load_explicit(&ag_hot.state, memory_order_acquire) == AG_ENGINE_ON;
}

/* ---- the report ------------------------------------------------------------------------- */

#define TOP 10
typedef struct {
    ag_seq_report top[TOP];
    int n;
    uint64_t nseq;
    double saved_us;
} top_acc;

static void collect_top(ag_stream *st, void *arg)
{
    top_acc *a = arg;
    ag_lock(&st->mu);
    for (ag_tmpl *T = st->tmpls; T; T = T->next_all) {
        a->nseq++;
        if (T->ben.med_eager > T->ben.med_graph && T->ben.med_graph)
            a->saved_us += (double)(T->ben.med_eager - T->ben.med_graph) * (double)T->replays / 1e3;
        int pos = a->n;
        while (pos > 0 && a->top[pos - 1].replays < T->replays)
            pos--;
        if (pos >= TOP)
            continue;
        if (a->n < TOP)
            a->n++;
        memmove(&a->top[pos + 1], &a->top[pos], (size_t)(a->n - 1 - pos) * sizeof a->top[0]);
        ag_seq_report *r = &a->top[pos];
        memset(r, 0, sizeof *r);
        r->key = T->key;
        r->len = T->len;
        r->replays = T->replays;
        r->eager_runs = T->eager_runs;
        r->state = T->ben.state == AG_BEN_ON ? "graph" : T->ben.state == AG_BEN_OFF ? "eager" : "trial";
        r->med_graph_ns = T->ben.med_graph;
        r->med_eager_ns = T->ben.med_eager;
        size_t used = 0;
        for (uint32_t i = 0; i < T->len && used + 4 < sizeof r->names; i++) {
            if (i && !strcmp(T->nodes[i].lay->name, T->nodes[i - 1].lay->name))
                continue;
            int w = snprintf(r->names + used, sizeof r->names - used, "%s%s", used ? "," : "",
                             T->nodes[i].lay->name);
            if (w < 0)
                break;
            used += (size_t)w;
        }
    }
    ag_unlock(&st->mu);
}

void ag_report_stats(void)
{
    top_acc a;
    memset(&a, 0, sizeof a);
    if (atomic_load(&ag_hot.state) != AG_ENGINE_DISABLED)
        ag_streams_each(collect_top, &a);
    ag_stats_report(a.top, a.n, a.nseq, a.saved_us);
}
