/* Does replaying this sequence as a graph pay? Measured, per sequence, on the program itself.
 *
 * The measure is the time from one occurrence of a sequence to the next (for a loop: one
 * iteration, its synchronisation and host work included), because that is what the program
 * feels. A trial alternates blocks of graph and eager occurrences (so drift cancels), then
 * compares the medians: graphs stay on only if they win by a clear margin. The decision is
 * re-checked now and then: rarely while graphs win, with a growing back-off while they lose.
 * Sequences that keep breaking off mid-way (divergence, hold timeouts) are turned off too.
 *
 * Pure logic on timestamps: no clocks, no CUDA. */
#ifndef AG_BENEFIT_H
#define AG_BENEFIT_H

#include <stdint.h>

#define AG_BEN_SAMPLES 8     /* samples of each mode a trial wants */
#define AG_BEN_BLOCK 4       /* occurrences per block of one mode in a trial */

enum ag_ben_state { AG_BEN_TRIAL, AG_BEN_ON, AG_BEN_OFF };

typedef struct ag_benefit {
    uint8_t state;
    uint8_t always;          /* AUTOGRAPH_BENEFIT=always: never measured, always on */
    uint8_t prev_graph;      /* mode of the previous occurrence */
    uint8_t prev_build;      /* the previous occurrence built the graph: not a fair sample */
    uint8_t ng, ne;          /* samples taken in this trial */
    uint8_t aborts;          /* occurrences broken off in a row */
    uint32_t nocc;           /* occurrences since the state began */
    uint32_t wait;           /* occurrences before the next trial */
    uint32_t backoff;        /* wait after the next losing trial */
    uint32_t recheck;        /* wait after the next winning trial: short at first, so that an
                              * early misjudgement (warm-up effects) is corrected soon */
    uint64_t prev_t;         /* start of the previous occurrence; 0: none to measure from */
    uint64_t sg[AG_BEN_SAMPLES], se[AG_BEN_SAMPLES];
    uint64_t med_graph, med_eager; /* medians of the last finished trial (for stats) */
    uint32_t trials, wins;
} ag_benefit;

void ag_benefit_init(ag_benefit *b, int always);

/* Whether the next occurrence should be replayed as a graph. Asking changes nothing. */
int ag_benefit_want_graph(const ag_benefit *b);

/* An occurrence began at time t (ns) in the given mode; `build`: its graph was built now. */
void ag_benefit_occurred(ag_benefit *b, int graph, int build, uint64_t t);

/* An occurrence that began was broken off (divergence, ordering point, timeout): no
 * interval can be measured across it; too many in a row turn graphs off for a while. */
void ag_benefit_aborted(ag_benefit *b);

/* Graphs won for this sequence before (a profile said so): on without a trial, re-checked
 * later like any winner. */
void ag_benefit_trust(ag_benefit *b);

/* Graph calls failed for this sequence: eager for a while, then try again. */
void ag_benefit_failed(ag_benefit *b);

#endif
