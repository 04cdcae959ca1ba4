/* Does replaying this sequence as a graph pay? Measured, per sequence, on the program itself.
 *
 * Two measures of one occurrence of a sequence, each from its start to the next occurrence's
 * start: on the host (for a loop: one iteration, its synchronisation and host work included),
 * and on the GPU (events the engine records at occurrence starts). Where the host waits for
 * the GPU the two agree; in an asynchronous loop whose GPU is the bottleneck the host runs
 * ahead and only the GPU's measure tells whether graphs help or harm the program. A trial
 * alternates blocks of graph and eager occurrences (so drift cancels), then compares medians:
 * graphs stay on only if one measure wins by a clear margin and the other is not worse. The
 * decision is re-checked now and then: rarely while graphs win, with a growing back-off while
 * they lose. Sequences that keep breaking off mid-way (divergence, hold timeouts) are turned
 * off too.
 *
 * Pure logic on timestamps: no clocks, no CUDA. */
#ifndef AG_BENEFIT_H
#define AG_BENEFIT_H

#include <stdint.h>

#define AG_BEN_SAMPLES 8     /* host samples of each mode a trial wants */
#define AG_BEN_GPU_SAMPLES 4 /* GPU samples of each mode a trial waits for, when marked */
#define AG_BEN_BLOCK 4       /* occurrences per block of one mode in a trial */

enum ag_ben_state { AG_BEN_TRIAL, AG_BEN_ON, AG_BEN_OFF };

typedef struct ag_benefit {
    uint8_t state;
    uint8_t always;          /* AUTOGRAPH_BENEFIT=always: never measured, always on */
    uint8_t prev_graph;      /* mode of the previous occurrence */
    uint8_t prev_build;      /* the previous occurrence built the graph: not a fair sample */
    uint8_t ng, ne;          /* host samples taken in this trial */
    uint8_t ngg, nge;        /* GPU samples taken in this trial */
    uint8_t aborts;          /* occurrences broken off in a row */
    uint8_t margin_pct;      /* by how much graphs must win (more for very short sequences) */
    uint8_t gpu_marked;      /* the engine marks occurrences on the GPU in this trial */
    uint32_t trial_id;       /* GPU samples carry the id of the trial they were marked in */
    uint32_t nocc;           /* occurrences since the state began */
    uint32_t wait;           /* occurrences before the next trial */
    uint32_t backoff;        /* wait after the next losing trial */
    uint32_t recheck;        /* wait after the next winning trial: short at first, so that an
                              * early misjudgement (warm-up effects) is corrected soon */
    uint64_t prev_t;         /* start of the previous occurrence; 0: none to measure from */
    uint64_t sg[AG_BEN_SAMPLES], se[AG_BEN_SAMPLES];
    uint64_t gg[AG_BEN_SAMPLES], ge[AG_BEN_SAMPLES];
    /* medians of the last finished trial (for stats); GPU ones 0 when not measured */
    uint64_t med_graph, med_eager, gpu_graph, gpu_eager;
    uint32_t trials, wins;
} ag_benefit;

/* `len`: the sequence's length (sequences of one or two launches must win by more). */
void ag_benefit_init(ag_benefit *b, int always, uint32_t len);

/* Whether the next occurrence should be replayed as a graph. Asking changes nothing. */
int ag_benefit_want_graph(const ag_benefit *b);

/* Whether the engine should mark the next occurrence's start on the GPU (during trials). */
static inline int ag_benefit_want_gpu_mark(const ag_benefit *b)
{
    return b->state == AG_BEN_TRIAL && !b->always;
}

/* The engine marked an occurrence on the GPU: the trial waits for GPU samples (up to its
 * occurrence limit), since in an asynchronous loop they arrive late. */
static inline void ag_benefit_marked(ag_benefit *b)
{
    b->gpu_marked = 1;
}

/* An occurrence began at time t (ns) in the given mode; `build`: its graph was built now. */
void ag_benefit_occurred(ag_benefit *b, int graph, int build, uint64_t t);

/* The GPU's time from the start of one occurrence (mode `graph`, marked in trial `trial_id`)
 * to the start of the next, ns. Samples of another trial, or of an occurrence that built its
 * graph, are ignored. */
void ag_benefit_gpu(ag_benefit *b, uint32_t trial_id, int graph, int build, uint64_t ns);

/* An occurrence that began was broken off (divergence, ordering point, timeout): no
 * interval can be measured across it; too many in a row turn graphs off for a while. */
void ag_benefit_aborted(ag_benefit *b);

/* Graphs won for this sequence before (a profile said so): on without a trial, re-checked
 * later like any winner. */
void ag_benefit_trust(ag_benefit *b);

/* Graph calls failed for this sequence: eager for a while, then try again. */
void ag_benefit_failed(ag_benefit *b);

#endif
