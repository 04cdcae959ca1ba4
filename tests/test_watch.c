/* The watch's filter of (stream, function) pairs (cache/watch.h): how often a process's first N
 * new pairs on one stream meet one that looks seen already (a false positive makes the stream's
 * state early: no harm to results, a cost the watch exists to spare). Function handles are
 * modelled as the heap gives them: one random page base per process, then a fixed stride. */
#include <stdint.h>
#include <string.h>

#include "tests/check.h"
#include "cache/watch.h"

static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

/* Processes (of `trials`) in which one of n new pairs on stream `id` looked seen already. */
static long false_positives(uint64_t id, int n, uint64_t stride, long trials)
{
    static uint64_t words[AG_WATCH_PAIR_WORDS];
    long fp = 0;
    for (long t = 0; t < trials; t++) {
        memset(words, 0, sizeof words);
        uint64_t base = (0x550000000ull + rnd() % 0x10000000ull) << 12 | 0x2a0;
        for (int k = 0; k < n; k++) {
            unsigned w;
            uint64_t m = ag_watch_pair_bits(id, (const void *)(uintptr_t)(base + k * stride), &w);
            if ((words[w] & m) == m) {
                fp++;
                break;
            }
            words[w] |= m;
        }
    }
    return fp;
}

int main(void)
{
    /* 50 kernels once on the legacy stream (C2's shape, bats/cpu_harness_watch.bats): two bits
     * a pair gave 0.24% of processes a state (2432 of a million), three bits 0.026% */
    long trials = 200000;
    CHECK(false_positives(1, 50, 0x60, trials) * 1000 < trials); /* < 0.1% */
    CHECK(false_positives(1, 50, 0x1000, trials) * 1000 < trials);
    /* a created stream's handle as the id; 200 kernels */
    CHECK(false_positives(0x5600deadbe00ull, 200, 0x60, trials / 4) * 100 < trials / 4); /* < 1% */
    /* the same pair always maps to the same bits, and a pair differs from its neighbours */
    unsigned w1, w2;
    uint64_t m1 = ag_watch_pair_bits(1, (const void *)0x1000, &w1);
    CHECK(w1 < AG_WATCH_PAIR_WORDS && m1);
    CHECK(m1 == ag_watch_pair_bits(1, (const void *)0x1000, &w2));
    CHECK_EQ(w1, w2);
    return check_done("test_watch");
}
