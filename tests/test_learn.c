/* The learner: segments at ordering points, chunk cuts, period alignment, sightings. */
#include <stdlib.h>
#include <string.h>

#include "cache/learn.h"
#include "cache/spare.h"
#include "check.h"

static ag_shape shape_of(int k)
{
    ag_shape s;
    memset(&s, 0, sizeof s);
    s.fn = (void *)(uintptr_t)(0x1000 + k);
    s.dims.grid[0] = 16;
    s.dims.block[0] = 256;
    return s;
}

/* Pushes kernel k; returns the closed segment's length (0 when none closed). */
static uint32_t push(ag_learn *L, int k, ag_closed *c)
{
    ag_shape s = shape_of(k);
    return ag_learn_push(L, ag_shape_hash(&s), &s, 1, c) ? c->len : 0;
}

static void test_ordering_segments(void)
{
    ag_learn L;
    ag_closed c;
    CHECK_EQ(ag_learn_init(&L, 128, 2, 3), 0);
    uint64_t key = 0;
    for (int it = 0; it < 5; it++) {
        for (int k = 0; k < 10; k++)
            CHECK_EQ(push(&L, k % 4, &c), 0);
        CHECK(ag_learn_order(&L, &c));
        CHECK_EQ(c.len, 10);
        CHECK_EQ(c.s->count, it + 1);
        if (it)
            CHECK(c.s->key == key); /* the same sequence, the same fingerprint */
        key = c.s->key;
    }
    /* a different sequence is a different sighting */
    push(&L, 3, &c);
    push(&L, 2, &c);
    CHECK(ag_learn_order(&L, &c));
    CHECK(c.s->key != key);
    CHECK_EQ(c.s->count, 1);
    /* too short to count */
    push(&L, 1, &c);
    CHECK(!ag_learn_order(&L, &c));
    /* an empty segment closes nothing */
    CHECK(!ag_learn_order(&L, &c));
    ag_learn_free(&L);
}

static void test_chunks_and_period(void)
{
    ag_learn L;
    ag_closed c;
    ag_learn_init(&L, 16, 2, 3);
    /* a stream that never synchronises, period 5 (A B C D E): cuts must be aligned so that
     * every chunk is the same sequence: 15 launches (3 periods <= 16) */
    int closed = 0, lens[64];
    uint64_t keys[64];
    uint32_t counts[64];
    for (int i = 0; i < 400; i++) {
        uint32_t n = push(&L, i % 5, &c);
        if (n && closed < 64) {
            lens[closed] = (int)n;
            counts[closed] = c.s->count;
            keys[closed++] = c.s->key;
        }
    }
    CHECK(closed > 20);
    CHECK_EQ(L.period, 5); /* the learner found the period */
    /* after the period is established, all chunks are equal and 15 long, and the learner
     * counts each as one more sighting of the same sequence */
    for (int i = closed - 10; i < closed; i++) {
        CHECK_EQ(lens[i], 15);
        CHECK(keys[i] == keys[closed - 1]);
        CHECK_EQ(counts[i], counts[i - 1] + 1);
    }
    /* the learner's own count of that sequence is every chunk of it that closed */
    uint32_t same = 0;
    for (int i = 0; i < closed; i++)
        same += keys[i] == keys[closed - 1];
    ag_sighting *last = ag_learn_find(&L, keys[closed - 1]);
    CHECK(last != NULL);
    if (last) {
        CHECK_EQ(last->count, same);
        CHECK_EQ(last->len, 15);
    }
    ag_learn_free(&L);

    /* without a period, chunks are max_nodes long */
    ag_learn_init(&L, 16, 2, 3);
    uint32_t x = 12345;
    int cuts = 0;
    for (int i = 0; i < 160; i++) {
        x = x * 1103515245u + 12345u;
        uint32_t n = push(&L, (int)(x >> 16) % 1000, &c);
        if (n) {
            CHECK_EQ(n, 16);
            cuts++;
        }
    }
    CHECK_EQ(cuts, 10);
    ag_learn_free(&L);
}

/* The launch indices after which chunks are cut in a stream of period 3 that never
 * synchronises, its shapes' fingerprints given (max_nodes 8: chunks of two periods). */
static int cuts_of(const uint64_t h[3], int *at, int max)
{
    ag_learn L;
    ag_closed c;
    ag_learn_init(&L, 8, 2, 3);
    int n = 0;
    for (int i = 0; i < 120; i++) {
        ag_shape s = shape_of(i % 3);
        if (ag_learn_push(&L, h[i % 3], &s, 1, &c) && n < max)
            at[n++] = i;
    }
    ag_learn_free(&L);
    return n;
}

static void test_period_phase_despite_collisions(void)
{
    /* Two of a period's fingerprints that share a slot of the last-seen table (the slot is
     * h ^ h >> 29 modulo AG_LEARN_LAST; a process's pointers decide which shapes collide) find
     * the period one launch late. The chunks must still be cut where they are without the
     * collision: else the same program learns other sequences from one process to the next
     * (the random harness, seed 4 with MAX_NODES=8, one run in a few hundred). */
    const uint64_t apart[3] = { 0x10, 0x11, 0x20 };
    const uint64_t collide[3] = { 0x10, 0x10 + AG_LEARN_LAST, 0x20 };
    int a[64], b[64];
    int na = cuts_of(apart, a, 64), nb = cuts_of(collide, b, 64);
    CHECK(na > 10);
    CHECK_EQ(na, nb);
    for (int i = 0; i < na && i < nb; i++)
        CHECK_EQ(a[i], b[i]);
}

static void test_period_cut_at_unique_shape(void)
{
    /* Period 6, A B A C A D: A comes three times in it. Cut before an A, every later A
     * would begin a hold that breaks off a launch later (tmpl.c holds from a template's first
     * shape on): the chunks must begin with a shape the period has once (B, C or D) -- the
     * first such after where the first whole copy began. */
    static const int seq[6] = { 0, 1, 0, 2, 0, 3 };
    ag_learn L;
    ag_closed c;
    ag_learn_init(&L, 16, 2, 3);
    int closed = 0, first = -1;
    for (int i = 0; i < 600; i++) {
        if (!push(&L, seq[i % 6], &c) || i < 100)
            continue;
        int k = (int)((uintptr_t)c.shapes[0].fn - 0x1000);
        CHECK(k != 0);
        CHECK_EQ(c.len, 12); /* two whole periods (AG_LEARN_CHUNK is over max_nodes) */
        if (first < 0)
            first = k;
        CHECK_EQ(k, first); /* and always the same one */
        closed++;
    }
    CHECK_EQ(L.period, 6);
    CHECK(closed > 30);
    ag_learn_free(&L);
}

/* The chunk length in a long stretch of period p with max_nodes m: the last cut's length. */
static int chunk_of(int p, uint32_t m)
{
    ag_learn L;
    ag_closed c;
    ag_learn_init(&L, m, 2, 3);
    int last = 0;
    for (int i = 0; i < 20 * (int)m; i++) {
        uint32_t n = push(&L, i % p, &c);
        if (n)
            last = (int)n;
    }
    ag_learn_free(&L);
    return last;
}

static void test_chunk_length(void)
{
    /* the fewest whole periods of at least AG_LEARN_CHUNK launches, not as many as fit in
     * max_nodes: a sync every N iterations cuts fewer occurrences short (P3) */
    CHECK_EQ(AG_LEARN_CHUNK, 64);
    CHECK_EQ(chunk_of(8, 1024), 64);
    CHECK_EQ(chunk_of(5, 1024), 65);
    CHECK_EQ(chunk_of(64, 1024), 64);
    CHECK_EQ(chunk_of(100, 1024), 100);
    CHECK_EQ(chunk_of(30, 1024), 90);
    CHECK_EQ(chunk_of(5, 16), 15); /* bounded by max_nodes */
}

static void test_period_not_splitting_synced_loops(void)
{
    /* A loop of 7 launches + ordering point: the period is seen, but cuts must come only from
     * the ordering points, never from the period (it would split the iterations). */
    ag_learn L;
    ag_closed c;
    ag_learn_init(&L, 16, 2, 3);
    for (int it = 0; it < 50; it++) {
        for (int k = 0; k < 7; k++)
            CHECK_EQ(push(&L, k, &c), 0);
        CHECK(ag_learn_order(&L, &c));
        CHECK_EQ(c.len, 7);
    }
    ag_learn_free(&L);
}

static void test_long_period(void)
{
    /* period 40 > max_nodes 16, no ordering points: cuts at period start + 16, + 32, + 40 */
    ag_learn L;
    ag_closed c;
    ag_learn_init(&L, 16, 2, 3);
    int last[8], n = 0;
    for (int i = 0; i < 40 * 30; i++) {
        uint32_t len = push(&L, i % 40, &c);
        if (len) {
            for (int j = 0; j < 7; j++)
                last[j] = last[j + 1];
            last[7] = (int)len;
            n++;
        }
    }
    CHECK(n > 30);
    /* the steady pattern repeats 16,16,8 */
    int pattern = (last[7] == 16 || last[7] == 8);
    CHECK(pattern);
    int sum = last[5] + last[6] + last[7];
    CHECK_EQ(sum, 40);
    ag_learn_free(&L);
}

static void test_replay_resets(void)
{
    ag_learn L;
    ag_closed c;
    ag_learn_init(&L, 16, 2, 3);
    push(&L, 1, &c);
    push(&L, 2, &c);
    ag_learn_replayed(&L, 2);
    CHECK(ag_learn_starting(&L));
    CHECK(!ag_learn_order(&L, &c)); /* the replayed launches were not counted */
    CHECK_EQ(L.nsightings, 0);
    ag_learn_free(&L);
}

static void test_pruning(void)
{
    /* an irregular stream never repeats: the table must not grow without bound */
    ag_learn L;
    ag_closed c;
    ag_learn_init(&L, 16, 2, 3);
    for (int i = 0; i < 20000; i++) {
        push(&L, i * 2, &c);
        push(&L, i * 2 + 1, &c);
        ag_learn_order(&L, &c);
    }
    CHECK(L.nsightings <= 4096);
    ag_learn_free(&L);
}

/* Drives the learner as the engine does: a resting learner is not shown the launch. Kernel
 * k(i) for launch i, an ordering point after launch i when sync(i). Returns launches rested. */
static long drive(ag_learn *L, long from, long n, int (*k)(long), int (*sync)(long))
{
    ag_closed c;
    long rested = 0;
    for (long i = from; i < from + n; i++) {
        if (ag_learn_resting(L)) {
            rested++;
            continue;
        }
        push(L, k(i), &c);
        if (sync(i))
            ag_learn_order(L, &c);
    }
    return rested;
}

static uint64_t rng(long i)
{
    uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    return x ^ (x >> 29);
}
static int k_random(long i) { return (int)(rng(i) % 384); }
static int sync_random(long i) { return rng(i + 1000000007) % 5 == 0; }
static int k_loop10(long i) { return (int)(i % 10); }
static int sync_loop10(long i) { return i % 10 == 9; }
static int k_period4000(long i) { return (int)(i % 4000); }
static int k_period4095(long i) { return (int)(i % 4095); }
static int sync_never(long i) { (void)i; return 0; }

static void test_rest_when_nothing_repeats(void)
{
    ag_learn L;
    ag_learn_init(&L, 128, 2, 3);
    const long E = AG_LEARN_EARLY, R = AG_LEARN_REST_FIRST, G = AG_LEARN_REST_GROWTH;
    const long S = AG_LEARN_WINDOW_SHORT;
    /* synchronising often, nothing repeating: short windows, each ended early (dozens of
     * segments closed, none seen before). The first one learns, then the learner rests R,
     * learns a window, rests R*G, ... */
    CHECK_EQ(drive(&L, 0, E, k_random, sync_random), 0);
    CHECK_EQ(L.rests, 1);
    CHECK(ag_learn_starting(&L)); /* the open segment was dropped */
    long at = E;
    CHECK_EQ(drive(&L, at, R, k_random, sync_random), R);
    at += R;
    CHECK_EQ(drive(&L, at, E, k_random, sync_random), 0);
    at += E;
    CHECK_EQ(L.rests, 2);
    CHECK_EQ(drive(&L, at, R * G, k_random, sync_random), R * G);
    at += R * G;
    /* the rest grows to its cap and no further */
    long total = at, rested = R + R * G, n = 64 * AG_LEARN_REST_MAX;
    rested += drive(&L, total, n, k_random, sync_random);
    total += n;
    CHECK(L.rest_next == AG_LEARN_REST_MAX);
    CHECK(rested * 100 > total * 98); /* learning for about 1/64 of the launches */
    /* a stream that turns regular is learned again within a rest and a window, and rests no
     * more */
    drive(&L, total, AG_LEARN_REST_MAX + 2 * S, k_loop10, sync_loop10);
    uint32_t rests = L.rests;
    CHECK_EQ(drive(&L, 0, 64 * S, k_loop10, sync_loop10), 0);
    CHECK_EQ(L.rests, rests);
    CHECK_EQ(L.rest_next, AG_LEARN_REST_FIRST);
    ag_learn_free(&L);

    /* never synchronising: long windows (periods need them) */
    ag_learn_init(&L, 128, 2, 3);
    CHECK_EQ(drive(&L, 0, AG_LEARN_WINDOW, k_random, sync_never), 0);
    CHECK_EQ(L.rests, 1);
    CHECK_EQ(drive(&L, AG_LEARN_WINDOW, R, k_random, sync_never), R);
    CHECK_EQ(drive(&L, AG_LEARN_WINDOW + R, AG_LEARN_WINDOW, k_random, sync_never), 0);
    CHECK_EQ(L.rests, 2);
    ag_learn_free(&L);
}

/* Why the learner rests (what passes in the rest is counted by it: fate.rested_*): a window
 * without fruit, or the engine's back-off (ag_learn_rest); a later rest says its own cause. */
static void test_rest_why(void)
{
    ag_learn L;
    ag_learn_init(&L, 128, 2, 3);
    const long S = AG_LEARN_EARLY, R = AG_LEARN_REST_FIRST; /* (windows ended early) */
    CHECK_EQ(drive(&L, 0, S, k_random, sync_random), 0);
    CHECK(ag_learn_rests(&L));
    CHECK_EQ(ag_learn_rest_why(&L), AG_REST_NO_REPEAT);
    CHECK_EQ(drive(&L, S, R, k_random, sync_random), R);
    CHECK(!ag_learn_rests(&L));
    ag_learn_rest(&L, 100); /* the engine's back-off */
    CHECK_EQ(ag_learn_rest_why(&L), AG_REST_BACKOFF);
    ag_learn_rest(&L, 5000); /* while resting: no change */
    CHECK_EQ(drive(&L, S + R, 100, k_random, sync_random), 100);
    CHECK(!ag_learn_rests(&L));
    CHECK_EQ(drive(&L, S + R + 100, S, k_random, sync_random), 0);
    CHECK(ag_learn_rests(&L));
    CHECK_EQ(ag_learn_rest_why(&L), AG_REST_NO_REPEAT);
    ag_learn_free(&L);
}

static int sync_every16(long i) { return i % 16 == 15; }

/* Whether a fresh learner shown launches k(i) with ordering points sync(i) first rests at its
 * launch `at`: no rest before it, one after it. */
static int first_rest_at(long at, int (*k)(long), int (*sync)(long))
{
    ag_learn L;
    ag_learn_init(&L, 128, 2, 3);
    int ok = drive(&L, 0, at - 1, k, sync) == 0 && L.rests == 0 &&
             drive(&L, at - 1, 1, k, sync) == 0 && L.rests == 1;
    ag_learn_free(&L);
    return ok;
}

/* A short window ends early only when it closed many segments and under 1/16 of its launches
 * repeated (a random stream of ordering points, P4c); one of few, long segments that do not
 * repeat runs the whole window (a forward of a few hundred launches is seen twice within it). */
static void test_rest_early_needs_many_segments(void)
{
    CHECK(first_rest_at(AG_LEARN_EARLY, k_random, sync_random));
    /* AG_LEARN_EARLY / 16 < AG_LEARN_EARLY_SEGS segments by the early point: the whole window */
    CHECK(AG_LEARN_EARLY / 16 < AG_LEARN_EARLY_SEGS);
    CHECK(first_rest_at(AG_LEARN_WINDOW_SHORT, k_random, sync_every16));
    /* many segments, but repeated ones among them (a loop of 10 with a sync each): no rest */
    ag_learn L;
    ag_learn_init(&L, 128, 2, 3);
    CHECK_EQ(drive(&L, 0, 4 * AG_LEARN_WINDOW_SHORT, k_loop10, sync_loop10), 0);
    CHECK_EQ(L.rests, 0);
    ag_learn_free(&L);
}

static int k_period3000(long i) { return (int)(i % 3000); }
static int sync_every10(long i) { return i % 3000 % 10 == 9; }

static void test_long_synced_period_learned_across_rests(void)
{
    /* a loop of 3000 launches with a synchronisation every 10: its segments only repeat after
     * 3000 launches, later than the first short window ends. The learner may rest a few times
     * (parts of the loop first seen after a rest look new), but sightings outlive rests: the
     * windows that follow see the segments again, and once every part has been seen it learns
     * on without resting. */
    ag_learn L;
    ag_learn_init(&L, 128, 2, 3);
    drive(&L, 0, 10 * 3000, k_period3000, sync_every10);
    CHECK(L.rests <= 3);
    uint32_t rests = L.rests;
    CHECK_EQ(drive(&L, 10 * 3000, 100 * 3000, k_period3000, sync_every10), 0);
    CHECK_EQ(L.rests, rests);
    ag_learn_free(&L);
}

static void test_no_rest_when_repeating(void)
{
    ag_learn L;
    /* a synchronised loop, and loops that never synchronise with periods up to the longest
     * one detected (AG_LEARN_RING - 1): none may ever rest */
    ag_learn_init(&L, 128, 2, 3);
    CHECK_EQ(drive(&L, 0, 8 * AG_LEARN_WINDOW, k_loop10, sync_loop10), 0);
    CHECK_EQ(L.rests, 0);
    ag_learn_free(&L);
    ag_learn_init(&L, 128, 2, 3);
    CHECK_EQ(drive(&L, 0, 8 * AG_LEARN_WINDOW, k_period4000, sync_never), 0);
    CHECK_EQ(L.rests, 0);
    ag_learn_free(&L);
    ag_learn_init(&L, 128, 2, 3);
    CHECK_EQ(drive(&L, 0, 8 * AG_LEARN_WINDOW, k_period4095, sync_never), 0);
    CHECK_EQ(L.rests, 0);
    ag_learn_free(&L);
    /* replayed graphs are fruit too: a stream that mostly replays never rests */
    ag_learn_init(&L, 128, 2, 3);
    ag_closed c;
    for (int i = 0; i < 100000; i++) {
        CHECK(!ag_learn_resting(&L));
        push(&L, i % 7, &c); /* one eager launch between replays of 20 */
        ag_learn_replayed(&L, 20);
    }
    CHECK_EQ(L.rests, 0);
    ag_learn_free(&L);
}

/* A loop whose sequence the engine turned eager (graphs lost its trial): seeing it again is
 * no reason to keep learning, so the stream rests; while it is wanted, it never does. */
static void test_rest_when_only_barren_sequences(void)
{
    ag_learn L;
    ag_closed c;
    ag_learn_init(&L, 128, 2, 3);
    CHECK_EQ(drive(&L, 0, 3 * AG_LEARN_WINDOW_SHORT, k_loop10, sync_loop10), 0);
    CHECK_EQ(L.rests, 0);
    ag_sighting *s = NULL;
    ag_learn_order(&L, &c); /* the drive ended inside an iteration */
    for (int k = 0; k < 10; k++)
        push(&L, k, &c);
    CHECK(ag_learn_order(&L, &c));
    s = c.s;
    CHECK(s && s->count > 3);
    s->barren = 1;
    long rested = drive(&L, 0, 4 * AG_LEARN_WINDOW_SHORT, k_loop10, sync_loop10);
    CHECK(L.rests >= 1);
    CHECK(rested >= AG_LEARN_REST_FIRST);
    ag_learn_free(&L);
}

static void test_shape_fingerprint(void)
{
    /* every single-bit change of a shape changes its fingerprint, and equal shapes agree */
    ag_shape a = shape_of(7), b;
    a.ctx = (CUcontext)(uintptr_t)0x7f0012345000ull;
    uint64_t ha = ag_shape_hash(&a);
    b = a;
    CHECK(ag_shape_hash(&b) == ha);
    int same = 0;
    for (unsigned bit = 0; bit < 8 * sizeof a; bit++) {
        b = a;
        ((uint8_t *)&b)[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        same += ag_shape_hash(&b) == ha;
    }
    CHECK_EQ(same, 0);
    /* grids 1..64 x blocks 32..1024 of 8 kernels: no two fingerprints collide */
    enum { N = 8 * 64 * 32 };
    static uint64_t h[N];
    int n = 0;
    for (int k = 0; k < 8; k++)
        for (unsigned g = 1; g <= 64; g++)
            for (unsigned t = 1; t <= 32; t++) {
                b = shape_of(k);
                b.dims.grid[0] = g;
                b.dims.block[0] = 32 * t;
                h[n++] = ag_shape_hash(&b);
            }
    int collisions = 0;
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            collisions += h[i] == h[j];
    CHECK_EQ(collisions, 0);
}

/* A learner made first takes the memory kept ready for it at the engine's start (spare.h), and
 * only the first: a second learner allocates its own. */
static void test_spares(void)
{
    const uint32_t max = 128, cap = 32;
    ag_learn_spares(max);
    ag_learn L, M;
    CHECK_EQ(ag_learn_init(&L, max, 2, 3), 0);
    CHECK(ag_spare_take(cap * sizeof(ag_shape)) == NULL);  /* L took them */
    CHECK(ag_spare_take(cap * sizeof(uint64_t)) == NULL);
    CHECK_EQ(ag_learn_init(&M, max, 2, 3), 0);
    CHECK(M.shapes && M.hashes && M.shapes != L.shapes);
    ag_closed c;
    for (int it = 0; it < 3; it++) { /* the kept blocks work as the learner's own: grown too */
        for (int k = 0; k < 40; k++)
            push(&L, k, &c);
        CHECK(ag_learn_order(&L, &c));
        CHECK_EQ(c.len, 40);
    }
    CHECK_EQ(c.s->count, 3);
    ag_learn_free(&L);
    ag_learn_free(&M);

    /* the store itself: a block of exactly the size kept, zeroed, once */
    ag_spare_keep(100, 0);
    ag_spare_keep(256, 64);
    CHECK(ag_spare_take(99) == NULL);
    unsigned char *a = ag_spare_take(100), *b = ag_spare_take(256);
    CHECK(a && b);
    CHECK(((uintptr_t)b & 63) == 0);
    int zero = 1;
    for (int i = 0; i < 100; i++)
        zero &= a[i] == 0;
    CHECK(zero);
    CHECK(ag_spare_take(100) == NULL);
    free(a);
    free(b);
}

int main(void)
{
    test_spares();
    test_shape_fingerprint();
    test_ordering_segments();
    test_chunks_and_period();
    test_chunk_length();
    test_period_phase_despite_collisions();
    test_period_cut_at_unique_shape();
    test_period_not_splitting_synced_loops();
    test_long_period();
    test_replay_resets();
    test_pruning();
    test_rest_when_nothing_repeats();
    test_rest_why();
    test_rest_early_needs_many_segments();
    test_no_rest_when_repeating();
    test_rest_when_only_barren_sequences();
    test_long_synced_period_learned_across_rests();
    return check_done("test_learn");
}
