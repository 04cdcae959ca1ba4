/* Where pipelined replay cuts a sequence (policy/pieces.c). */
#include "policy/pieces.h"
#include "check.h"

static int g_queued; /* the GPU is busy with earlier work when holds begin */

static uint32_t plan(uint32_t len, uint64_t held, uint64_t eager, uint64_t graph, uint64_t hold,
                     uint32_t *ends)
{
    ag_piece_costs c = { held, eager, graph, hold, g_queued };
    uint32_t n = ag_pieces_plan(len, &c, ends);
    CHECK(n >= 1 && n <= AG_MAX_PIECES);
    CHECK_EQ(ends[n - 1], len);
    for (uint32_t i = 1; i < n; i++)
        CHECK(ends[i] > ends[i - 1]);
    return n;
}

static void test_fast_host_one_piece(void)
{
    /* a C loop: 64 launches the host issues at 3 us eager, 0.1 us held: 6.4 us in all, under
     * four graph launches (10 us): cutting would cost more than it could overlap */
    uint32_t e[AG_MAX_PIECES];
    CHECK_EQ(plan(64, 100, 3000, 2500, 2000000, e), 1);
}

static void test_python_host_pipelined(void)
{
    /* a framework loop: 46 launches 16 us apart on the host when eager (13.2 us held);
     * eager launch 2.8 us, graph launch 2.5 us: smallest piece ceil(4 * 2.5 / 2.8) = 4, then
     * 8, 16, and the rest */
    uint32_t e[AG_MAX_PIECES];
    uint32_t n = plan(46, 13200, 2800, 2500, 2000000, e);
    CHECK_EQ(n, 4);
    CHECK_EQ(e[0], 18);
    CHECK_EQ(e[1], 34);
    CHECK_EQ(e[2], 42);
    CHECK_EQ(e[3], 46);
}

/* The longest piece of a plan of n pieces. */
static uint32_t longest(const uint32_t *e, uint32_t n)
{
    uint32_t most = e[0];
    for (uint32_t i = 1; i < n; i++)
        most = e[i] - e[i - 1] > most ? e[i] - e[i - 1] : most;
    return most;
}

static void test_fast_host_forwards(void)
{
    /* D1 on the H100: 292 launches held 0.4 us apart (faster than the GPU's ~1 us per node),
     * eager 4 us, graph launch 2.5 us, so m = ceil(4 * 2.5 / 4) = 3. The GPU is the
     * bottleneck once started: the smallest piece first, doubling, the rest last (3, 6, 12,
     * 24, 48, 96, and 103). With the last piece smallest (the plan for a slow host) the
     * first was 49 launches, 20 us the GPU waited; on the H100 forward pieces took P1 from
     * 83.3 to 78.6 us (hand graph 71.7) */
    uint32_t e[AG_MAX_PIECES];
    uint32_t n = plan(292, 400, 4000, 2500, 2000000, e);
    static const uint32_t want[] = { 3, 9, 21, 45, 93, 189, 292 };
    CHECK_EQ(n, 7);
    for (uint32_t i = 0; i < n && i < 7; i++)
        CHECK_EQ(e[i], want[i]);
    /* P1: 64 launches 0.6 us apart: 3, 6, 12, 24, and the rest (19) */
    n = plan(64, 600, 4000, 2500, 2000000, e);
    CHECK_EQ(n, 5);
    CHECK_EQ(e[0], 3);
    CHECK_EQ(e[3], 45);
    /* a rest under m joins the last piece: 3, 6, 12, then 24 + 2 */
    n = plan(47, 400, 4000, 2500, 2000000, e);
    CHECK_EQ(n, 4);
    CHECK_EQ(e[2], 21);
    /* pieces doubling forwards still stop at what MAX_HOLD allows: 0.9 us apart, MAX_HOLD
     * 40 us: no piece over 10 us / 0.9 us = 11 launches where 16 pieces can hold them all;
     * here they cannot, and the cap grows only until the last piece is no longer than the
     * others (3, 6, 12, then 21s) */
    n = plan(292, 900, 4000, 2500, 40000, e);
    CHECK_EQ(n, AG_MAX_PIECES);
    CHECK(longest(e, n) <= 21);
    n = plan(120, 900, 4000, 2500, 40000, e);
    CHECK(longest(e, n) <= 11 + 3); /* (+ a remainder under the smallest piece) */
}

static void test_fast_host_capped(void)
{
    /* 1-2 us apart (a host about as fast as the GPU's shortest nodes): the last pieces the
     * smallest, as for a slow host, but no piece longer than a sixth (49), so the first
     * does not leave the GPU waiting long */
    uint32_t e[AG_MAX_PIECES];
    uint32_t n = plan(292, 1500, 4000, 2500, 2000000, e);
    CHECK(longest(e, n) <= 49 + 2); /* (+ what is left under the smallest piece) */
    CHECK(e[n - 1] - e[n - 2] <= e[1] - e[0]);
    CHECK(n <= AG_MAX_PIECES);
    /* the same sequence from a Python host (13.2 us held): the GPU keeps up, doubling as
     * before, up to what MAX_HOLD allows at the mean host time (a quarter of it, for the
     * host's bursts: 0.5 ms / 13.2 us = 37 launches) */
    n = plan(292, 13200, 4000, 2500, 2000000, e);
    CHECK_EQ(longest(e, n), 37);
}

static void test_max_hold_caps_pieces(void)
{
    /* 1 ms of host time per launch, MAX_HOLD 2 ms: no piece may be held over 1 ms, except
     * that the smallest piece (m = 4 here) is never split further */
    uint32_t e[AG_MAX_PIECES];
    uint32_t n = plan(12, 997200, 2800, 2500, 2000000, e);
    CHECK_EQ(n, 3);
    CHECK_EQ(e[0], 4);
    CHECK_EQ(e[1], 8);
}

static void test_first_piece_capped_too(void)
{
    /* 290 launches from a slow (loaded) host, 61.6 us apart held, MAX_HOLD 2 ms: at most 16
     * launches a piece would fit (1 ms), but 16 pieces cannot hold 290 of them that way. The
     * first piece took what the others left (70 launches, 4.3 ms held: every hold timed out);
     * now no piece is longer than the fewest the count allows, ceil(290 / 16) = 19, plus what
     * the small last pieces leave */
    uint32_t e[AG_MAX_PIECES];
    uint32_t n = plan(290, 61600, 4600, 2500, 2000000, e);
    CHECK_EQ(n, AG_MAX_PIECES);
    CHECK(longest(e, n) <= 24);
    CHECK(e[0] <= longest(e, n));
    /* the last piece is still the smallest */
    CHECK(e[n - 1] - e[n - 2] <= e[1] - e[0]);
}

static void test_piece_count_bounded(void)
{
    uint32_t e[AG_MAX_PIECES];
    uint32_t n = plan(4000, 47200, 2800, 2500, 2000000, e);
    CHECK(n <= AG_MAX_PIECES);
    /* the last piece is the smallest */
    CHECK(e[n - 1] - e[n - 2] <= e[1] - e[0]);
}

static void test_unknown_costs(void)
{
    uint32_t e[AG_MAX_PIECES];
    CHECK_EQ(plan(50, 17200, 0, 2500, 2000000, e), 1);
    CHECK_EQ(plan(50, 17200, 2800, 0, 2000000, e), 1);
    CHECK_EQ(plan(1, 17200, 2800, 2500, 2000000, e), 1);
    /* the rest smaller than the smallest piece joins the next one */
    uint32_t n = plan(9, 13200, 2800, 2500, 2000000, e);
    CHECK_EQ(n, 2);
    CHECK_EQ(e[0], 5);
}

static void test_queued_one_piece(void)
{
    /* P3: 64 tiny launches per iteration, a sync every 100 iterations. Its creation-time plan
     * (the eager host time per launch, 1.65 us, taken for the program's own) cuts pieces; but
     * the host runs far ahead of the GPU, which is still busy with earlier iterations when a
     * hold begins: one piece. */
    uint32_t e[AG_MAX_PIECES];
    CHECK(plan(64, 1650, 2850, 2500, 2000000, e) > 1);
    g_queued = 1;
    CHECK_EQ(plan(64, 1650, 2850, 2500, 2000000, e), 1);
    CHECK_EQ(plan(46, 13200, 2800, 2500, 2000000, e), 1);
    g_queued = 0;
    /* P1 and a framework loop, the GPU waiting for the host: pieces as before */
    CHECK(plan(64, 1650, 2850, 2500, 2000000, e) > 1);
    CHECK_EQ(plan(46, 13200, 2800, 2500, 2000000, e), 4);
}

static void test_align_siblings(void)
{
    /* HF decode's step variants: 121 launches, the same first 79. This one planned 0-8, 9-60,
     * 61-92, ... on its own; its sibling cut at 28, 76, 100: within the common start the
     * sibling's ends, after it its own */
    static const uint32_t sib[] = { 28, 76, 100, 112, 118, 121 };
    uint32_t e[AG_MAX_PIECES] = { 9, 61, 93, 109, 117, 121 };
    uint32_t n = ag_pieces_align(sib, 6, 79, e, 6, 121);
    static const uint32_t want[] = { 28, 76, 93, 109, 117, 121 };
    CHECK_EQ(n, 6);
    for (uint32_t i = 0; i < n; i++)
        CHECK_EQ(e[i], want[i]);
    /* an own end right at the common start is dropped (the sibling has none there: a hold
     * that sent that piece could not go on as the sibling's) */
    uint32_t f[AG_MAX_PIECES] = { 40, 79, 100, 121 };
    static const uint32_t sib2[] = { 50, 90, 121 };
    n = ag_pieces_align(sib2, 3, 79, f, 4, 121);
    static const uint32_t want2[] = { 50, 100, 121 };
    CHECK_EQ(n, 3);
    for (uint32_t i = 0; i < n; i++)
        CHECK_EQ(f[i], want2[i]);
    /* nothing shared (or everything): the plan stays */
    uint32_t g[AG_MAX_PIECES] = { 10, 20 };
    CHECK_EQ(ag_pieces_align(sib2, 3, 1, g, 2, 20), 2);
    CHECK(g[0] == 10 && g[1] == 20);
    CHECK_EQ(ag_pieces_align(sib2, 3, 20, g, 2, 20), 2);
    CHECK(g[0] == 10 && g[1] == 20);
    /* never more than AG_MAX_PIECES, and the last end is the length */
    uint32_t many[AG_MAX_PIECES], h[AG_MAX_PIECES];
    for (uint32_t i = 0; i < AG_MAX_PIECES; i++) {
        many[i] = 2 * (i + 1);
        h[i] = 40 + 4 * (i + 1);
    }
    n = ag_pieces_align(many, AG_MAX_PIECES, 39, h, AG_MAX_PIECES, h[AG_MAX_PIECES - 1]);
    CHECK(n <= AG_MAX_PIECES);
    CHECK_EQ(h[n - 1], 40 + 4 * AG_MAX_PIECES);
    for (uint32_t i = 1; i < n; i++)
        CHECK(h[i] > h[i - 1]);
}

int main(void)
{
    test_align_siblings();
    test_queued_one_piece();
    test_fast_host_one_piece();
    test_python_host_pipelined();
    test_fast_host_forwards();
    test_fast_host_capped();
    test_max_hold_caps_pieces();
    test_first_piece_capped_too();
    test_piece_count_bounded();
    test_unknown_costs();
    return check_done("test_pieces");
}
