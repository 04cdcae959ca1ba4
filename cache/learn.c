/* Learning which launch sequences repeat on one stream (see learn.h). */
#include "cache/learn.h"

#include "cache/compiler.h"
#include "cache/spare_uthash.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIGHTINGS 4096

/* rest_left is also read and counted down without the stream's lock (ag_learn_resting): every
 * write to it is atomic */
_Static_assert(offsetof(ag_learn, rest_left) == 0 && offsetof(ag_learn, len) == 4,
               "rest_left comes first, alone");
static void clear(ag_learn *L)
{
    __atomic_store_n(&L->rest_left, 0, __ATOMIC_RELAXED);
    memset(&L->len, 0, sizeof *L - offsetof(ag_learn, len));
}

/* Room for a segment at first: small, as most streams' segments are short (the period
 * tracker's tables are made when a long stretch without an ordering point first shows:
 * track_period). */
static uint32_t first_cap(uint32_t max_nodes)
{
    return max_nodes < 32 ? max_nodes : 32;
}

int ag_learn_init(ag_learn *L, uint32_t max_nodes, uint32_t min_len, uint32_t min_repeats)
{
    clear(L);
    L->max_nodes = max_nodes;
    L->min_len = min_len;
    L->min_repeats = min_repeats;
    L->rest_next = AG_LEARN_REST_FIRST;
    L->win_len = AG_LEARN_WINDOW_SHORT;
    L->cap = first_cap(max_nodes);
    if (!(L->shapes = ag_spare_take(L->cap * sizeof *L->shapes)))
        L->shapes = malloc(L->cap * sizeof *L->shapes);
    if (!(L->hashes = ag_spare_take(L->cap * sizeof *L->hashes)))
        L->hashes = malloc(L->cap * sizeof *L->hashes);
    if (!L->shapes || !L->hashes) {
        ag_learn_free(L);
        return -1;
    }
    return 0;
}

void ag_learn_spares(uint32_t max_nodes)
{
    uint32_t cap = first_cap(max_nodes);
    ag_spare_keep(cap * sizeof(ag_shape), 0);
    ag_spare_keep(cap * sizeof(uint64_t), 0);
    /* the first segment's close: its sighting and the sightings' table (fresh heap there, a
     * page fault in G2's first ordering point of its region, 4-6 us on the H100 host) */
    ag_spare_keep(sizeof(ag_sighting), 0);
    ag_spare_keep_uthash();
}

void ag_learn_forget(ag_learn *L)
{
    ag_sighting *s, *tmp;
    HASH_ITER(hh, L->sightings, s, tmp) {
        HASH_DEL(L->sightings, s);
        free(s);
    }
    L->nsightings = 0;
}

void ag_learn_free(ag_learn *L)
{
    ag_learn_forget(L);
    free(L->shapes);
    free(L->hashes);
    free(L->ring);
    free(L->last);
    clear(L);
}

ag_sighting *ag_learn_find(ag_learn *L, uint64_t key)
{
    ag_sighting *s;
    HASH_FIND(hh, L->sightings, &key, sizeof key, s);
    return s;
}

/* A new sighting of `key` (never seen yet), or NULL when out of memory. */
static ag_sighting *sighting_new(ag_learn *L, uint64_t key, uint32_t len)
{
    ag_sighting *s = ag_spare_calloc(sizeof *s);
    if (!s)
        return NULL;
    s->key = key;
    s->len = len;
    HASH_ADD(hh, L->sightings, key, sizeof s->key, s);
    L->nsightings++;
    return s;
}

ag_sighting *ag_learn_adopt(ag_learn *L, uint64_t key, uint32_t len)
{
    ag_sighting *s = ag_learn_find(L, key);
    if (!s && !(s = sighting_new(L, key, len)))
        return NULL;
    if (s->count < L->min_repeats)
        s->count = L->min_repeats;
    return s;
}

/* Irregular streams would grow the table forever: when full, forget what never repeated. */
static void prune(ag_learn *L)
{
    ag_sighting *s, *tmp;
    HASH_ITER(hh, L->sightings, s, tmp) {
        if (!s->tmpl && s->count < L->min_repeats) {
            HASH_DEL(L->sightings, s);
            free(s);
            L->nsightings--;
        }
    }
}

static int close_segment(ag_learn *L, ag_closed *c)
{
    uint32_t len = L->len;
    L->len = 0;
    L->win_segs++;
    if (len < L->min_len)
        return 0;
    uint64_t key = ag_hash(L->hashes, len * sizeof *L->hashes);
    ag_sighting *s = ag_learn_find(L, key);
    if (!s) {
        if (L->nsightings >= MAX_SIGHTINGS)
            prune(L);
        if (L->nsightings >= MAX_SIGHTINGS || !(s = sighting_new(L, key, len)))
            return 0;
    }
    if (s->count < UINT32_MAX)
        s->count++;
    if (s->count > 1 && !s->barren)
        L->win_rep += len;
    c->s = s;
    c->shapes = L->shapes;
    c->hashes = L->hashes;
    c->len = len;
    c->t0 = L->t0;
    c->end = L->shown;
    return 1;
}

/* The launches up to x that equal the one p before, counted back over the ring (to where this
 * stretch's tracking began, or the ring's oldest). A candidate period is found at a later
 * launch than its first repeat when the last-seen table lost an entry to another shape (its
 * slots are a hash of shapes that carry pointers: which ones collide changes from process to
 * process); counted from there, the run, and so the phase that places the cuts, would follow
 * the table. Counted back, they are the stretch's own. */
static uint64_t run_back(const ag_learn *L, uint64_t x, uint64_t p)
{
    uint64_t lo = x + 1 > AG_LEARN_RING ? x + 1 - AG_LEARN_RING : 0;
    if (lo < L->start)
        lo = L->start;
    uint64_t y = x;
    while (y > lo + p && L->ring[(y - 1) % AG_LEARN_RING] == L->ring[(y - 1 - p) % AG_LEARN_RING])
        y--;
    return x - y + 1;
}

/* Where in the period [at, at + p) of the ring the cuts go: the first launch whose shape is
 * there once, when the one at `at` is not (0: it is, or none is). A template is held from its
 * first launch's shape on (tmpl.c, first_starting); cut where that shape comes back within the
 * period, every other coming of it began an occurrence that broke off a few launches later (a
 * UNet's 381-launch step cut at one of its 9 same-shaped layout conversions: 471 breaks, the
 * template turned off, F23). Once per period found: the period's shapes counted in an
 * open-addressed table of twice its size (sorting them took 238 us at p = 4096). */
static uint64_t unique_start(const ag_learn *L, uint64_t at, uint64_t p)
{
    uint64_t cap = 16;
    while (cap < 2 * p)
        cap *= 2;
    struct slot { uint64_t h; uint32_t n; } *t = calloc(cap, sizeof *t);
    if (!t)
        return 0;
    for (uint64_t i = 0; i < p; i++) {
        uint64_t h = L->ring[(at + i) % AG_LEARN_RING];
        uint64_t k = (h ^ (h >> 31)) & (cap - 1);
        while (t[k].n && t[k].h != h)
            k = (k + 1) & (cap - 1);
        t[k].h = h;
        t[k].n++;
    }
    uint64_t j = 0;
    for (; j < p; j++) {
        uint64_t h = L->ring[(at + j) % AG_LEARN_RING];
        uint64_t k = (h ^ (h >> 31)) & (cap - 1);
        while (t[k].h != h) /* (every shape of the period is in the table) */
            k = (k + 1) & (cap - 1);
        if (t[k].n == 1)
            break;
    }
    free(t);
    return j < p ? j : 0;
}

/* Finds the smallest repeating period: a candidate p comes from the last time this shape was
 * seen; it holds while every launch equals the one p before, and is trusted once two whole
 * copies are seen. */
static void track_period(ag_learn *L, uint64_t h)
{
    if (AG_UNLIKELY(!L->ring)) {
        L->ring = calloc(AG_LEARN_RING, sizeof *L->ring);
        L->last = calloc(AG_LEARN_LAST, sizeof *L->last);
        if (!L->ring || !L->last) { /* no tracking: chunks are cut at max_nodes */
            free(L->ring);
            free(L->last);
            L->ring = NULL;
            L->last = NULL;
            return;
        }
    }
    uint64_t x = L->pos++;
    L->ring[x % AG_LEARN_RING] = h;
    if (L->period) {
        if (L->ring[(x - L->period) % AG_LEARN_RING] == h) {
            L->run++;
        } else {
            L->period = L->run = 0;
            L->period_active = 0;
        }
    }
    unsigned slot = (unsigned)(h ^ (h >> 29)) & (AG_LEARN_LAST - 1);
    if (!L->period && L->last[slot].hash == h && L->last[slot].pos < x &&
        x - L->last[slot].pos < AG_LEARN_RING) {
        L->period = x - L->last[slot].pos;
        L->run = run_back(L, x, L->period);
    }
    L->last[slot].hash = h;
    L->last[slot].pos = x;
    if (L->period && !L->period_active && L->run >= L->period) {
        L->period_active = 1;
        L->phase = x + 1 - L->run - L->period; /* where the first whole copy began */
        L->phase += unique_start(L, L->phase, L->period);
    }
}

/* Whether to cut after launch number pos-1. Periodic cuts only in long stretches without an
 * ordering point, so that they never split segments that ordering points already delimit.
 * A chunk is the fewest whole periods of at least AG_LEARN_CHUNK launches: a graph launch
 * saves little over fewer, and the longer a chunk, the likelier an ordering point (a sync
 * every N iterations) cuts an occurrence short, which then goes out eagerly (P3: chunks of
 * 1024 against a sync every 6400 launches left 0.16 of the hand-written graph's gain). */
static int cut_here(const ag_learn *L)
{
    if (L->len >= L->max_nodes)
        return 1;
    if (!L->period_active || L->since_order <= L->max_nodes)
        return 0;
    uint64_t at = L->pos - L->phase, p = L->period, m = L->max_nodes;
    if (p <= m) {
        uint64_t k = (AG_LEARN_CHUNK + p - 1) / p;
        if (k > m / p)
            k = m / p;
        return at % (p * k) == 0;
    }
    uint64_t r = at % p;
    return r == 0 || r % m == 0;
}

/* Forgets the period and makes every remembered position stale: what comes next is not
 * contiguous with what came before. */
static void period_restart(ag_learn *L)
{
    L->period = L->run = 0;
    L->period_active = 0;
    L->pos += AG_LEARN_RING;
    L->start = L->pos;
}

/* The end of a window: rest when it bore no fruit. */
static void window_end(ag_learn *L)
{
    int fruitless = (uint64_t)L->win_rep * AG_LEARN_FRUIT < L->win_n;
    L->win_n = L->win_rep = L->win_segs = 0;
    L->win_len = AG_LEARN_WINDOW_SHORT;
    if (!fruitless) {
        L->rest_next = AG_LEARN_REST_FIRST;
        return;
    }
    __atomic_store_n(&L->rest_why, AG_REST_NO_REPEAT, __ATOMIC_RELAXED);
    /* release: whoever passes a launch because of this rest (without the lock) comes after
     * all this thread did before, the issue of anything it held included */
    __atomic_store_n(&L->rest_left, L->rest_next, __ATOMIC_RELEASE);
    L->rest_next = L->rest_next >= AG_LEARN_REST_MAX / AG_LEARN_REST_GROWTH
                       ? AG_LEARN_REST_MAX
                       : L->rest_next * AG_LEARN_REST_GROWTH;
    L->rests++;
    L->len = 0; /* the open segment is dropped: its continuation will not be seen */
    L->since_order = 0;
    period_restart(L);
}

void ag_learn_rest(ag_learn *L, uint32_t n)
{
    if (!n || ag_learn_rests(L))
        return;
    if (n > AG_LEARN_REST_MAX)
        n = AG_LEARN_REST_MAX;
    __atomic_store_n(&L->rest_why, AG_REST_BACKOFF, __ATOMIC_RELAXED);
    __atomic_store_n(&L->rest_left, n, __ATOMIC_RELEASE); /* release: as in window_end */
    L->len = 0;
    L->since_order = 0;
    L->win_n = L->win_rep = L->win_segs = 0;
    L->win_len = AG_LEARN_WINDOW_SHORT;
    period_restart(L);
}

/* Room for a longer segment (doubling, up to max_nodes); -1 when out of memory. */
static int grow(ag_learn *L)
{
    uint32_t cap = L->cap * 2 < L->max_nodes ? L->cap * 2 : L->max_nodes;
    ag_shape *s = realloc(L->shapes, cap * sizeof *s);
    if (s)
        L->shapes = s;
    uint64_t *h = s ? realloc(L->hashes, cap * sizeof *h) : NULL;
    if (!h)
        return -1;
    L->hashes = h;
    L->cap = cap;
    return 0;
}

int ag_learn_push(ag_learn *L, uint64_t hash, const ag_shape *shape, uint64_t t0, ag_closed *c)
{
    if (L->len == 0)
        L->t0 = t0;
    if (AG_UNLIKELY(L->len == L->cap) && grow(L)) {
        L->len = 0; /* out of memory: this segment is dropped */
        return 0;
    }
    L->shapes[L->len] = *shape;
    L->hashes[L->len] = hash;
    L->len++;
    L->shown++;
    L->since_order++;
    /* periods only ever decide cuts in long stretches without an ordering point (cut_here):
     * streams that synchronise often skip the tracking altogether */
    if (L->since_order > L->max_nodes / 2) {
        track_period(L, hash);
        L->win_len = AG_LEARN_WINDOW; /* a long stretch: periods need the long window */
    }
    int closed = cut_here(L) ? close_segment(L, c) : 0;
    if (++L->win_n >= L->win_len ||
        (L->win_n == AG_LEARN_EARLY && L->win_len == AG_LEARN_WINDOW_SHORT &&
         L->win_rep * AG_LEARN_FRUIT < AG_LEARN_EARLY && L->win_segs >= AG_LEARN_EARLY_SEGS))
        window_end(L); /* (early: learn.h, AG_LEARN_EARLY) */
    return closed;
}

int ag_learn_order(ag_learn *L, ag_closed *c)
{
    if (L->since_order > L->max_nodes / 2)
        period_restart(L); /* tracking stops here and starts afresh in the next long stretch */
    L->since_order = 0;
    return L->len ? close_segment(L, c) : 0;
}

void ag_learn_replayed(ag_learn *L, uint32_t n)
{
    L->len = 0;
    L->shown += n;
    L->win_n += n;
    L->win_rep += n;
    if (L->win_n >= L->win_len)
        window_end(L);
}
