/* Learning which launch sequences repeat on one stream. */
/* A stream's launches are cut into segments: at every ordering point, at every replayed
 * graph, and -- for streams that never synchronise -- every MAX_NODES launches, aligned to the
 * stream's repeating period once one is seen (A B C D A B C D ... is cut at the A's). Each
 * closed segment is fingerprinted (xxHash3 over its launches' shape fingerprints) and counted;
 * a segment seen MIN_REPEATS times becomes a template for a graph.
 *
 * Nothing here touches CUDA or clocks: the engine feeds shapes in and acts on what closes. */
#ifndef AG_LEARN_H
#define AG_LEARN_H

#include <stdint.h>
#include <uthash.h>

#include "cache/shape.h"

struct ag_tmpl;

typedef struct ag_sighting {
    uint64_t key;            /* fingerprint of the sequence of shape fingerprints */
    uint32_t count, len;
    struct ag_tmpl *tmpl;    /* the template made of it, once made */
    uint64_t last_end;       /* ag_closed.end when it last closed (the engine's: tmpl.c) */
    uint8_t barren;          /* its template is eager by policy: seeing it again is no fruit
                              * (the engine says so; a stream of such loops may rest) */
    UT_hash_handle hh;
} ag_sighting;

#define AG_LEARN_RING 4096   /* longest period detected: AG_LEARN_RING - 1 launches */
#define AG_LEARN_LAST 1024   /* slots of the shape -> last position table */
#define AG_LEARN_CHUNK 64    /* a periodic chunk's least length, in launches (cut_here) */

/* Resting (why and how: DESIGN.md, "Resting"): launches are judged in windows; a window in
 * which less than 1/AG_LEARN_FRUIT of the launches repeated begins a rest. */
#define AG_LEARN_WINDOW_SHORT 1024             /* a window while every stretch is short */
#define AG_LEARN_WINDOW (4 * AG_LEARN_RING)    /* once a long stretch shows: periods decide */
#define AG_LEARN_REST_FIRST 2048               /* the first rest */
#define AG_LEARN_REST_GROWTH 4                 /* each fruitless window after it: this longer */
#define AG_LEARN_REST_MAX (4 * AG_LEARN_WINDOW)
#define AG_LEARN_FRUIT 16
/* A short window ends early, fruitless, when AG_LEARN_EARLY launches in it closed at least
 * AG_LEARN_EARLY_SEGS segments and under 1/AG_LEARN_FRUIT of them were in repeated ones: a
 * stream of ordering points between launches that never repeat (P4c) pays for a quarter of a
 * window, not all of it; one long sequence of a few segments (a forward, a step) has not closed
 * so many. */
#define AG_LEARN_EARLY 256
#define AG_LEARN_EARLY_SEGS 32

/* Why the learner rests (the fates fate.rested_*, policy/stats.h, follow this order). */
enum ag_rest_why {
    AG_REST_NO_REPEAT,       /* a window bore no fruit (window_end) */
    AG_REST_BACKOFF,         /* the engine said nothing learned could be used (ag_learn_rest) */
};

typedef struct ag_learn {
    /* first what every launch and ordering point reads (the engine keeps these in the
     * stream state's first cache line) */
    uint32_t rest_left;      /* launches still to pass untouched (resting, below) */
    uint32_t len;            /* of the open segment */
    uint64_t since_order;    /* launches since the last ordering point */
    uint32_t max_nodes, min_len;
    /* then what every learning launch reads (the state's second line) */
    uint32_t min_repeats;
    uint32_t win_n, win_rep;  /* launches in this window; of them, in repeated segments */
    uint32_t win_len;         /* the window's length: short, or long once a long stretch shows */
    ag_shape *shapes;        /* the open segment: max_nodes */
    uint64_t *hashes;        /* max_nodes */
    int period_active;
    /* the rest */
    uint64_t t0;             /* the engine's clock at the segment's first launch */
    uint64_t shown;          /* launches shown (pushed, or replayed as graphs) */
    uint32_t win_segs;       /* segments closed in this window (AG_LEARN_EARLY) */
    uint32_t cap;            /* room in shapes / hashes: grows with the longest segment (a
                              * stream's first launch should not pay for MAX_NODES of it) */
    /* period detection over the whole stream */
    uint64_t pos;            /* launches seen */
    uint64_t start;          /* pos where this stretch's tracking began (older: stale) */
    uint64_t period, run, phase;
    uint64_t *ring;          /* AG_LEARN_RING shape fingerprints */
    struct { uint64_t hash, pos; } *last;  /* AG_LEARN_LAST */
    /* sightings */
    ag_sighting *sightings;
    uint32_t nsightings;
    /* resting (see above) */
    uint32_t rest_next;       /* length of the next rest */
    uint32_t rests;           /* rests begun */
    uint8_t rest_why;         /* enum ag_rest_why of the rest under way (written before the
                               * rest begins, read -- atomically -- by what passes in it) */
} ag_learn;

/* What a closed segment was. */
typedef struct ag_closed {
    ag_sighting *s;          /* its sighting, counted */
    const ag_shape *shapes;  /* its launches (valid until the next push) */
    const uint64_t *hashes;
    uint32_t len;
    uint64_t t0;
    uint64_t end;            /* launches shown when it closed: it began at end - len when
                              * nothing else came between */
} ag_closed;

int ag_learn_init(ag_learn *L, uint32_t max_nodes, uint32_t min_len, uint32_t min_repeats);
/* Keeps the memory of a first learner ready (spare.h): called once, as the engine starts. */
void ag_learn_spares(uint32_t max_nodes);
void ag_learn_free(ag_learn *L);

/* True when the next push starts a segment (the engine then passes its clock as t0). */
static inline int ag_learn_starting(const ag_learn *L) { return L->len == 0; }

/* Adds one launch. Returns 1 and fills *c when the segment closes after it (a chunk cut). */
int ag_learn_push(ag_learn *L, uint64_t hash, const ag_shape *shape, uint64_t t0, ag_closed *c);

/* An ordering point: closes the open segment. Returns 1 and fills *c when it was long enough
 * to count. */
int ag_learn_order(ag_learn *L, ag_closed *c);

/* A graph of n launches was replayed: the open segment ends without counting (it was the
 * graph's); the launches count as repeated ones for the window. */
void ag_learn_replayed(ag_learn *L, uint32_t n);

/* Rests for n launches now (capped at AG_LEARN_REST_MAX), whatever the window says: the
 * engine knows that nothing it learns meanwhile could be used (tmpl.c, rest_eager). Not
 * counted in `rests` (the caller counts it) and without effect on the next rest's length; its
 * cause is AG_REST_BACKOFF. Only when nothing is held (as a window's rest). */
void ag_learn_rest(ag_learn *L, uint32_t n);

/* Takes up to `want` launches off the rest at once (rest tokens, cache/rest.h); returns how many.
 * Acquire and release: see ag_learn_resting; the release also publishes what the caller wrote
 * before (that tokens are out, for instance). */
static inline uint32_t ag_learn_rest_take(ag_learn *L, uint32_t want)
{
    uint32_t v = __atomic_load_n(&L->rest_left, __ATOMIC_ACQUIRE);
    while (v) {
        uint32_t n = v < want ? v : want;
        if (__atomic_compare_exchange_n(&L->rest_left, &v, v - n, 1, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
            return n;
    }
    return 0;
}

/* True while the learner rests; the engine then passes the launch through untouched. Counts
 * the launch off the rest. Safe without the stream's lock: a rest begins only when nothing is
 * held (or, in a flush, once what was held has been issued), and a hold begins only after the
 * rest is over; the release store that begins a rest and the acquire here order the two. */
static inline int ag_learn_resting(ag_learn *L)
{
    return ag_learn_rest_take(L, 1) != 0;
}

/* Why the learner rests (enum ag_rest_why), for what passes in the rest; a rest that ended
 * meanwhile may answer for the next one. */
static inline unsigned ag_learn_rest_why(const ag_learn *L)
{
    return __atomic_load_n(&L->rest_why, __ATOMIC_RELAXED);
}

/* True while the learner rests (counts nothing): an ordering point then has nothing to end. */
static inline int ag_learn_rests(const ag_learn *L)
{
    return __atomic_load_n(&L->rest_left, __ATOMIC_ACQUIRE) != 0;
}

/* Forgets every sighting (and their template links). */
void ag_learn_forget(ag_learn *L);

/* The sighting for `key`, created as if seen min_repeats times (a template from elsewhere, such
 * as a profile, is adopted). NULL when out of memory. */
ag_sighting *ag_learn_adopt(ag_learn *L, uint64_t key, uint32_t len);

/* The sighting of a closed segment fingerprint, or NULL. */
ag_sighting *ag_learn_find(ag_learn *L, uint64_t key);

#endif
