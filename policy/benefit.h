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
 * off too, for a back-off that doubles each time (a sequence that keeps diverging costs
 * O(log n) holds over n occurrences, not O(n)).
 *
 * Before any trial, a *probe* of a few eager occurrences asks whether graphs could help at all.
 * Graphs only save host time; a stream whose GPU is the bottleneck (the host runs ahead and
 * the queue grows) cannot gain from them, while a trial there costs graph builds and
 * occurrences run as graphs, which can be slower on the GPU. So the engine marks eager
 * occurrences on the GPU (cheap: no hold) and looks, when the next occurrence starts on the
 * host, whether the GPU has reached the previous occurrence's start yet (the queue is more
 * than a whole occurrence deep when it has not); it also compares the GPU's start-to-start
 * interval with the host's. The GPU behind twice, or behind once with a GPU interval clearly
 * longer than the host's: "GPU-bound", the sequence stays eager (no graph is built, no trial is spent) and is
 * probed again after a back-off. Otherwise the trial follows. During a trial, the same look
 * at the start of graph occurrences says whether the GPU still has earlier work queued when a
 * hold begins (`queued`): then holding delays nothing on the GPU, and cutting the graph into
 * pieces (policy/pieces.h) would only add graph launches, so the sequence goes as one graph.
 *
 * Pure logic on timestamps: no clocks, no CUDA. */
#ifndef AG_BENEFIT_H
#define AG_BENEFIT_H

#include <stddef.h>
#include <stdint.h>

#define AG_BEN_SAMPLES 8     /* host samples of each mode a trial wants */
#define AG_BEN_GPU_SAMPLES 4 /* GPU samples of each mode a trial waits for, when marked */
#define AG_BEN_BLOCK 4       /* occurrences per block of one mode in a trial */

#define AG_BEN_PROBE_LOOKS 4 /* looks a probe wants before it calls a stream host-bound */
#define AG_BEN_BEHIND 2      /* looks that find the GPU behind: GPU-bound (or, in a trial's
                              * graph occurrences: work queued ahead of the hold) */

enum ag_ben_state { AG_BEN_TRIAL, AG_BEN_ON, AG_BEN_OFF, AG_BEN_PROBE };

typedef struct ag_benefit {
    uint8_t state;
    uint8_t always;          /* AUTOGRAPH_BENEFIT=always: never measured, always on */
    uint8_t prev_graph;      /* mode of the previous occurrence */
    uint8_t prev_build;      /* the previous occurrence built the graph: not a fair sample */
    uint8_t ng, ne;          /* host samples taken in this trial */
    uint8_t ngg, nge;        /* GPU samples taken in this trial */
    uint8_t aborts;          /* holds broken off (decayed with `completes`: see aborted) */
    uint8_t completes;       /* holds completed as a graph (decayed) */
    uint8_t margin_pct;      /* by how much graphs must win (more for very short sequences) */
    uint8_t gpu_marked;      /* the engine marks occurrences on the GPU in this trial */
    uint8_t looks, behind;   /* probe: occurrence starts at which the engine looked whether
                              * the GPU had reached the previous one's start; of them, not */
    uint8_t glooks, gbehind; /* trial: the same at graph occurrences (after a graph one) */
    uint8_t gpu_bound;       /* the last probe found the GPU the bottleneck */
    uint8_t queued;          /* graph occurrences find earlier work still queued on the GPU:
                              * no pieces (the engine's plan reads it) */
    uint8_t carried;         /* this trial began with its probe's eager samples... */
    uint8_t carried_ne;      /* ...this many of the host's */
    uint8_t nspg, nspe;      /* span samples taken in this trial (ag_benefit_span) */
    uint16_t nmarked;        /* occurrences marked in this probe or trial */
    uint32_t trial_id;       /* GPU samples carry the id of the trial they were marked in */
    uint32_t nocc;           /* occurrences since the state began */
    uint32_t wait;           /* occurrences before the next trial */
    uint32_t backoff;        /* wait after the next losing trial */
    uint32_t recheck;        /* wait after the next winning trial: short at first, so that an
                              * early misjudgement (warm-up effects) is corrected soon */
    uint64_t prev_t;         /* start of the previous occurrence; 0: none to measure from */
    uint64_t sg[AG_BEN_SAMPLES], se[AG_BEN_SAMPLES];
    uint64_t gg[AG_BEN_SAMPLES], ge[AG_BEN_SAMPLES];
    uint64_t spg[AG_BEN_SAMPLES], spe[AG_BEN_SAMPLES];
    /* medians of the last finished trial (for stats); GPU ones 0 when not measured */
    uint64_t med_graph, med_eager, gpu_graph, gpu_eager;
    uint32_t abort_backoff;  /* wait after the next turn-off for breaking off: doubles */
    uint32_t trials, wins;
    uint32_t probes, gpu_bounds, abort_offs; /* for stats */
    uint32_t seen;           /* occurrences of the sequence seen (the engine may start it at
                              * the sightings that made the template) */
    uint32_t need;           /* occurrences to have been seen before the first probe (the
                              * engine's payback estimate, ag_benefit_set_need): until then
                              * the sequence is eager, unmarked, unmeasured */
} ag_benefit;

/* `len`: the sequence's length (sequences of one or two launches must win by more). */
void ag_benefit_init(ag_benefit *b, int always, uint32_t len);

/* Whether the next occurrence should be replayed as a graph. Asking changes nothing. */
int ag_benefit_want_graph(const ag_benefit *b);

/* Start cheap, measure only when the answer can change something (issue 20). A graph costs
 * its trial (the build -- a process's first instantiation included --, the marks, the graph
 * occurrences that may lose) before it saves anything, and saves at most the launches' host
 * time per occurrence; a sequence seen n times is expected to come about n times more. So a
 * new sequence is probed (and then tried) only once it has been seen `need` times, the
 * engine's estimate of the occurrences that pay for the trial (cache/tmpl.c,
 * payback_need): until then it runs eagerly, with no mark, no look and no sample. A short
 * timed region of a few occurrences (30 sgemm timed once) is never spent on a trial. */
static inline int ag_benefit_dormant(const ag_benefit *b)
{
    return b->state == AG_BEN_PROBE && b->seen < b->need;
}

/* In a probe that measures (not dormant): a trial is likely to follow. */
static inline int ag_benefit_probing(const ag_benefit *b)
{
    return b->state == AG_BEN_PROBE && !ag_benefit_dormant(b);
}

/* The engine's payback estimate (above): `seen` occurrences so far (0: unchanged), `need`
 * before the first probe. Only before the first probe has begun measuring. */
void ag_benefit_set_need(ag_benefit *b, uint32_t seen, uint32_t need);

/* Whether the engine should mark the next occurrence's start on the GPU (during probes and
 * trials). Bounded by the occurrences that completed: starts that keep breaking off (an
 * irregular stream) do not each pay for a mark. */
static inline int ag_benefit_want_gpu_mark(const ag_benefit *b)
{
    return (b->state == AG_BEN_TRIAL || b->state == AG_BEN_PROBE) && !b->always &&
           !ag_benefit_dormant(b) && b->nmarked < 2 * b->nocc + 8;
}

/* The engine marked an occurrence on the GPU: the trial waits for GPU samples (up to its
 * occurrence limit), since in an asynchronous loop they arrive late. */
static inline void ag_benefit_marked(ag_benefit *b)
{
    b->gpu_marked = 1;
    if (b->nmarked < UINT16_MAX)
        b->nmarked++;
}

/* Whether the engine should look, as an occurrence in mode `graph` starts, whether the GPU
 * has reached the previous occurrence's start (ag_benefit_behind): eager ones in a probe,
 * graph ones in a trial. */
static inline int ag_benefit_want_look(const ag_benefit *b, int graph)
{
    return !b->always && !ag_benefit_dormant(b) &&
           (graph ? b->state == AG_BEN_TRIAL : b->state == AG_BEN_PROBE);
}

/* The engine looked as an occurrence in mode `graph` began: `behind`, the GPU had not yet
 * reached the start of the previous occurrence (of the same mode). In a probe, twice behind
 * ends the probe: GPU-bound, eager for a back-off. In a trial's graph occurrences, twice
 * behind sets `queued` (one piece). */
void ag_benefit_behind(ag_benefit *b, int graph, int behind);

/* The engine cut the sequence into other pieces (its graphs are rebuilt): a trial's graph
 * samples start over. */
void ag_benefit_replanned(ag_benefit *b);

/* An occurrence began at time t (ns) in the given mode; `build`: its graph was built now. */
void ag_benefit_occurred(ag_benefit *b, int graph, int build, uint64_t t);

/* An occurrence took `span` ns from its first launch to its end (an ordering point, or its
 * last launch; told before ag_benefit_occurred). A trial's host samples are the times
 * from one occurrence to the next; where other sequences run between them (a decode step's
 * variants take turns, and their breaking off resets the interval) a trial can end with none,
 * and then decides on the spans, once it has AG_BEN_SAMPLES of each mode, rather than turning
 * graphs off unmeasured. */
void ag_benefit_span(ag_benefit *b, int graph, int build, uint64_t span);

/* Whether such a span would be taken (the engine reads the clock for it only then). */
static inline int ag_benefit_wants_span(const ag_benefit *b, int graph, int build)
{
    return !build && (b->state == AG_BEN_TRIAL || (b->state == AG_BEN_PROBE && !graph));
}

/* The GPU's time from the start of one occurrence (mode `graph`, marked in trial `trial_id`)
 * to the start of the next, ns. Samples of another trial, or of an occurrence that built its
 * graph, are ignored. */
void ag_benefit_gpu(ag_benefit *b, uint32_t trial_id, int graph, int build, uint64_t ns);

/* A hold that began was broken off (divergence, ordering point, timeout): no interval can be
 * measured across it. Four or more, and more than the holds that completed (both decay by
 * half every 32), turn graphs off for a back-off that doubles each time (and halves after 32
 * holds with no break). */
void ag_benefit_aborted(ag_benefit *b);
/* An occurrence that is no sample and no break: it diverged after pieces of it went out as
 * graphs (a decode step whose variant kernels differ from the template's past a point), or it
 * went out eagerly while its graph was built. No interval is measured across it (D1's trial
 * once took a replay, a build occurrence and the next replay for one graph interval, 2.6 ms
 * against 0.25 ms, and lost its early win to it). */
void ag_benefit_unsampled(ag_benefit *b);

/* A template that follows its variant group's policy (cache/tmpl.c, join_variants) keeps its
 * own breaking off apart: its own ag_benefit is only a gate. ag_benefit_aborted turns the gate
 * shut (state OFF) as it would turn a sequence off, so a variant that keeps diverging pays
 * O(log n) holds without turning its group off; this counts an occurrence of the variant
 * (`graph`: completed as a graph) towards the gate's back-off and its completions. */
void ag_benefit_gate_occurred(ag_benefit *g, int graph);

/* The gate is shut: the variant is not held, whatever its group's policy says. */
static inline int ag_benefit_gate_shut(const ag_benefit *g)
{
    return g->state == AG_BEN_OFF;
}

/* Off, or dormant (eager by policy): the engine let `occ` occurrences pass unseen (its stream
 * rested through them): they count towards the back-off, or as seen (short of the last
 * dormant one). */
void ag_benefit_rested(ag_benefit *b, uint32_t occ);

/* Graphs won for this sequence before (a profile said so): on without a trial, re-checked
 * later like any winner. */
void ag_benefit_trust(ag_benefit *b);

/* Graph calls failed for this sequence: eager for a while, then try again. */
void ag_benefit_failed(ag_benefit *b);

/* The samples of the trial just decided (or under way), in the order they were taken, in us:
 * "host: graph [a b ...] eager [...]; gpu: ...; spans: ..." (measures without samples left
 * out), for the debug log's decision line: a trial decided by a noisy stretch shows it. */
void ag_benefit_describe(const ag_benefit *b, char *buf, size_t n);

#endif
