/* The learner: segments at ordering points, chunk cuts, period alignment, sightings. */
#include <string.h>

#include "../cache/learn.h"
#include "check.h"

static ag_shape shape_of(int k)
{
    ag_shape s;
    memset(&s, 0, sizeof s);
    s.fn = (void *)(uintptr_t)(0x1000 + k);
    s.grid[0] = 16;
    s.block[0] = 256;
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
    for (int i = 0; i < 400; i++) {
        uint32_t n = push(&L, i % 5, &c);
        if (n && closed < 64) {
            lens[closed] = (int)n;
            keys[closed++] = c.s->key;
        }
    }
    CHECK(closed > 20);
    /* after the period is established, all chunks are equal and 15 long */
    int steady = 0;
    for (int i = closed - 10; i < closed; i++) {
        CHECK_EQ(lens[i], 15);
        CHECK(keys[i] == keys[closed - 1]);
        steady++;
    }
    CHECK_EQ(steady, 10);
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
    ag_learn_replayed(&L);
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

int main(void)
{
    test_ordering_segments();
    test_chunks_and_period();
    test_period_not_splitting_synced_loops();
    test_long_period();
    test_replay_resets();
    test_pruning();
    return check_done("test_learn");
}
