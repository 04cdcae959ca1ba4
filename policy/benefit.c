/* See benefit.h. */
#include "benefit.h"
#include "log.h"

#include <string.h>

#define MARGIN_PCT 2          /* graphs must beat eager by this much to stay on... */
#define MARGIN_SHORT_PCT 5    /* ...or by this much for sequences of one or two launches, where
                               * a graph launch saves at most one or two eager launches */
#define NOT_WORSE_PCT 2       /* the other measure may be worse by no more than noise */
#define CLEAR_LOSS_PCT 10     /* a trial losing by this much ends early and backs off more */
#define EARLY_SAMPLES 4       /* samples of each mode before a trial may end early */
#define EARLY_GPU_SAMPLES 3   /* ...of the GPU's, when the other measure is the one that wins
                               * (a probe before the trial carries 3: a 4th cost an eager
                               * occurrence more) */
#define CLEAR_WIN_PCT 10      /* every graph sample this much faster than every eager one: a
                               * trial may end early with graphs on (4 of each fully apart is
                               * 1 chance in 70 for equal modes; at 20% a CNN forward 25%
                               * faster as a graph, one sample slower, ran all 8 of each) */
#define RECHECK_FIRST 64      /* occurrences before the first re-check of a win... */
#define RECHECK_ON 4096       /* ...growing fourfold per confirmation up to this */
#define RECHECK_COST_PCT 2    /* ...and never so soon that a re-check's eager occurrences cost
                               * more than this share of the time it covers */
#define SECOND_OPINION 8      /* occurrences before a sequence's first trial, lost, is tried
                               * again (the back-off grows for the next loss as ever): a
                               * trial's first graph occurrences can be slow for a while after
                               * the build (ResNet-50's first graph block; a torch.compile
                               * forward on a fresh H100: graph 1425 us against eager 1044,
                               * then eager for the whole run; 602 against 724 in the next
                               * process) */
#define BACKOFF_FIRST 64
#define BACKOFF_MAX 16384
#define TRIAL_MAX_OCC 96      /* a trial that cannot collect its samples decides anyway */
#define PROBE_MAX_OCC 16      /* a probe that cannot look decides anyway (host-bound: a trial) */
#define GPU_SLOWER_PCT 150    /* a GPU interval this much of the host's: the queue grows */
#define MAX_ABORTS 4
#define ABORT_WINDOW 32       /* holds after which the abort and completion counts halve */
#define ABORT_BACKOFF_FIRST 64
#define ABORT_BACKOFF_MAX (1u << 20)

/* A new measurement (probe or trial): samples, marks and looks start over. */
static void start_measure(ag_benefit *b, uint8_t state)
{
    b->state = state;
    b->nocc = 0;
    b->ng = b->ne = b->ngg = b->nge = 0;
    b->nspg = b->nspe = 0;
    b->gpu_marked = 0;
    b->nmarked = 0;
    b->looks = b->behind = b->glooks = b->gbehind = 0;
    b->carried = 0;
    b->trial_id++;
    b->prev_t = 0;
}

static void start_trial(ag_benefit *b)
{
    start_measure(b, AG_BEN_TRIAL);
}

/* A probe's occurrences were eager, unheld and measured like a trial's eager ones, just
 * before: the trial keeps them as its first eager samples and begins by catching up with
 * graph ones (D1, a decode step 3.5x faster as a graph, paid 4 more eager occurrences per
 * trial without). GPU samples still to come of the probe's occurrences carry the probe's id
 * and are dropped. */
static void start_trial_after_probe(ag_benefit *b)
{
    uint8_t ne = b->ne, nge = b->nge, nspe = b->nspe; /* (start_measure clears the counts, not
                                                       * se[], ge[] and spe[]) */
    start_measure(b, AG_BEN_TRIAL);
    b->ne = ne;
    b->nge = nge;
    b->nspe = nspe;
    b->gpu_marked = nge > 0;
    b->carried = 1;
    b->carried_ne = ne;
}

static void start_probe(ag_benefit *b)
{
    start_measure(b, AG_BEN_PROBE);
    b->probes++;
}

void ag_benefit_init(ag_benefit *b, int always, uint32_t len)
{
    memset(b, 0, sizeof *b);
    b->always = (uint8_t)always;
    b->margin_pct = len <= 2 ? MARGIN_SHORT_PCT : MARGIN_PCT;
    b->backoff = BACKOFF_FIRST;
    b->recheck = RECHECK_FIRST;
    b->abort_backoff = ABORT_BACKOFF_FIRST;
    if (always) {
        b->state = AG_BEN_ON;
        b->wait = UINT32_MAX;
    } else
        start_probe(b);
}

int ag_benefit_want_graph(const ag_benefit *b)
{
    switch (b->state) {
    case AG_BEN_ON:
        return 1;
    case AG_BEN_OFF:
    case AG_BEN_PROBE:
        return 0;
    default:
        /* after a probe: graphs until their samples are as many as the probe's eager ones
         * (an occurrence that ran eagerly while its graph was built is neither)... */
        if (b->carried && (b->ng < b->ne || (b->gpu_marked && b->ngg < b->nge)))
            return 1;
        /* ...and one more before the trial's first eager occurrence, where an early end may
         * then allow one slow graph sample (separated, below) */
        if (b->carried && b->ne == b->carried_ne && b->ng == b->ne && b->ne >= EARLY_SAMPLES)
            return 1;
        /* blocks of graph, then eager, ...: the first block builds the graph */
        return (b->nocc / AG_BEN_BLOCK) % 2 == 0;
    }
}

/* Sorts v in place: n <= AG_BEN_SAMPLES. */
static uint64_t median(uint64_t *v, unsigned n)
{
    for (unsigned i = 1; i < n; i++) /* insertion sort: n <= 8 */
        for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint64_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The median of v, left as it is. */
static uint64_t med_of(const uint64_t *v, unsigned n)
{
    uint64_t c[AG_BEN_SAMPLES];
    memcpy(c, v, n * sizeof *v);
    return median(c, n);
}

/* The lower quartile of v, left as it is: for span samples (ag_benefit_span), whose upward
 * outliers are other work that happened to fall inside one occurrence (a collection in the
 * interpreter, an update path tried out) -- the lower quantile is the occurrence's own cost. */
static uint64_t q1_of(const uint64_t *v, unsigned n)
{
    uint64_t c[AG_BEN_SAMPLES];
    memcpy(c, v, n * sizeof *v);
    median(c, n); /* (sorts) */
    return c[n / 4];
}

/* The largest and smallest of v[0..n). */
static uint64_t max_of(const uint64_t *v, unsigned n)
{
    uint64_t m = 0;
    for (unsigned i = 0; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

static uint64_t min_of(const uint64_t *v, unsigned n)
{
    uint64_t m = UINT64_MAX;
    for (unsigned i = 0; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

/* The second largest of v[0..n) (n >= 2). */
static uint64_t max_but_one(const uint64_t *v, unsigned n)
{
    uint64_t a = 0, b = 0; /* the largest, the second */
    for (unsigned i = 0; i < n; i++) {
        if (v[i] > a) {
            b = a;
            a = v[i];
        } else if (v[i] > b) {
            b = v[i];
        }
    }
    return b;
}

/* Off for the current back-off; the next one is `growth` times longer (capped). */
static void turn_off(ag_benefit *b, uint32_t growth)
{
    b->state = AG_BEN_OFF;
    b->nocc = 0;
    b->wait = b->backoff;
    b->backoff = b->backoff >= BACKOFF_MAX / growth ? BACKOFF_MAX : b->backoff * growth;
    b->prev_t = 0;
}

/* Graph time g against eager time e: faster by more than pct percent / slower by at most. */
static int better(uint64_t g, uint64_t e, unsigned pct)
{
    return g * 100 < e * (100 - pct);
}

static int not_worse(uint64_t g, uint64_t e, unsigned pct)
{
    return g * 100 <= e * (100 + pct);
}

/* Occurrences before a winner's re-check: the fourfold-growing `recheck`, but no sooner than
 * its eager occurrences (about AG_BEN_SAMPLES, each slower than a graph one by e - g) cost
 * RECHECK_COST_PCT of the graph occurrences between (D1, a decode step 4x faster as a graph,
 * spent a fifth of its 100 steps eagerly in re-checks 64 and 256 occurrences apart). The win
 * is taken from the measure that gained more. */
static uint32_t recheck_wait(const ag_benefit *b, int gpu)
{
    uint64_t e = b->med_eager, g = b->med_graph;
    if (gpu && b->gpu_graph && g &&
        (double)b->gpu_eager / (double)b->gpu_graph > (double)e / (double)g) {
        e = b->gpu_eager;
        g = b->gpu_graph;
    }
    double w = b->recheck;
    if (g && e > g) {
        double need = (double)(e - g) / (double)g * AG_BEN_SAMPLES * 100.0 / RECHECK_COST_PCT;
        w = need > w ? need : w;
    }
    return w >= RECHECK_ON ? RECHECK_ON : (uint32_t)w;
}

/* Whether the trial decides on its span samples (ag_benefit_span): all of them are in, and the
 * intervals are too few to end the trial early. */
static int spans_instead(const ag_benefit *b)
{
    return b->nspg >= AG_BEN_SAMPLES && b->nspe >= AG_BEN_SAMPLES &&
           (b->ng < EARLY_SAMPLES || b->ne < EARLY_SAMPLES);
}

/* The host's intervals are a tie (graphs not worse, not better by the margin), there is no
 * GPU view, and the spans (q1) say graphs win by the margin: other sequences' trials in the
 * same loop fill the intervals with noise as large as the saving (a decode step's layer
 * blocks, each a part of a token's step). With a GPU view that is a tie too, the spans' saving
 * is host time the program does not wait for (a solver's 2-launch step before its read-back:
 * CuPy's CG 1.6% slower in the model when spans broke that tie). */
static int span_tiebreak(const ag_benefit *b, int gpu)
{
    return !gpu && b->nspg >= EARLY_SAMPLES && b->nspe >= EARLY_SAMPLES &&
           not_worse(b->med_graph, b->med_eager, NOT_WORSE_PCT) &&
           better(q1_of(b->spg, b->nspg), q1_of(b->spe, b->nspe), b->margin_pct);
}

/* Graphs stay on when one measure wins by the margin and the other is not worse; without GPU
 * samples, the host's measure alone decides. */
static void decide(ag_benefit *b)
{
    b->trials++;
    int spans = spans_instead(b);
    if (!spans && (!b->ng || !b->ne)) {
        turn_off(b, 2);
        return;
    }
    b->med_graph = spans ? q1_of(b->spg, b->nspg) : med_of(b->sg, b->ng);
    b->med_eager = spans ? q1_of(b->spe, b->nspe) : med_of(b->se, b->ne);
    int gpu = b->ngg && b->nge, on;
    b->gpu_graph = gpu ? med_of(b->gg, b->ngg) : 0;
    b->gpu_eager = gpu ? med_of(b->ge, b->nge) : 0;
    if (gpu)
        on = (better(b->med_graph, b->med_eager, b->margin_pct) &&
              not_worse(b->gpu_graph, b->gpu_eager, NOT_WORSE_PCT)) ||
             (better(b->gpu_graph, b->gpu_eager, b->margin_pct) &&
              not_worse(b->med_graph, b->med_eager, NOT_WORSE_PCT));
    else
        on = better(b->med_graph, b->med_eager, b->margin_pct);
    /* intervals that do not tell (not worse, not better by the margin), where the sequence's
     * own spans do: the spans break the tie */
    if (!on && !spans && span_tiebreak(b, gpu))
        on = 1;
    /* graph occurrences found the GPU still busy with earlier ones (or the GPU's interval
     * between them is clearly longer than the host's: its queue grows): no pieces. Looked
     * and never found so (a phase change): pieces again. Looks that all found the GPU idle
     * overrule the intervals, as in the probe: a queue that grew would have been seen, and a
     * loaded host delays the fake or real GPU's marks (P1, a sync every iteration, was once
     * planned as one piece by them). */
    int idle_seen = b->glooks >= AG_BEN_BEHIND && !b->gbehind;
    if (b->gbehind >= AG_BEN_BEHIND ||
        (gpu && !idle_seen && b->gpu_graph * 100 > b->med_graph * GPU_SLOWER_PCT))
        b->queued = 1;
    else if (b->glooks >= AG_BEN_BEHIND)
        b->queued = 0;
    if (on) {
        b->wins++;
        b->state = AG_BEN_ON;
        b->nocc = 0;
        b->wait = recheck_wait(b, gpu);
        b->recheck = b->recheck >= RECHECK_ON / 4 ? RECHECK_ON : b->recheck * 4;
        b->backoff = BACKOFF_FIRST;
    } else {
        b->recheck = RECHECK_FIRST;
        /* a clear loss on either measure: the next trial is much later */
        int clear = !not_worse(b->med_graph, b->med_eager, CLEAR_LOSS_PCT) ||
                    (gpu && !not_worse(b->gpu_graph, b->gpu_eager, CLEAR_LOSS_PCT));
        turn_off(b, clear ? 4 : 2);
        if (b->trials == 1 && !b->wins)
            b->wait = SECOND_OPINION;
    }
}

/* Whether the samples g beat the samples e beyond doubt: the largest of g (with more than
 * EARLY_SAMPLES of them, all but the largest) faster than the smallest of e by pct percent. */
static int separated(const uint64_t *g, unsigned ng, const uint64_t *e, unsigned ne,
                     unsigned pct)
{
    if (ng < EARLY_SAMPLES || ne < EARLY_SAMPLES)
        return 0;
    return better(ng > EARLY_SAMPLES ? max_but_one(g, ng) : max_of(g, ng), min_of(e, ne), pct);
}

/* A trial may end before all its samples are in when graphs already lose beyond doubt on one
 * measure (eager separated from graphs): every further graph occurrence would cost the
 * program. Medians do not end it: a trial's first block of graph occurrences can run slower
 * than the later ones (ResNet-50 on the H100, fourteenth session: the first 3-4 graph samples
 * 5.1-5.7 ms, the next ones 3.1-3.5, eager 4.3-4.9), and one process in six lost its graphs
 * for good on medians after 4 samples of each. */
static int clear_loss_so_far(const ag_benefit *b)
{
    return separated(b->se, b->ne, b->sg, b->ng, CLEAR_LOSS_PCT) ||
           separated(b->ge, b->nge, b->gg, b->ngg, CLEAR_LOSS_PCT);
}

/* ...and when graphs already win beyond doubt on one measure (graphs separated from eager)
 * while the other is not worse: every further eager occurrence would cost the program (a 4x
 * win paid ~4 eager occurrences more per trial). All but one graph sample, past
 * EARLY_SAMPLES: a trial's first graph occurrences can be slowed by the build just done
 * (ResNet-50 on the H100, thirteenth session: one slow graph sample made 2 of 3 processes run
 * all 8 of each, five more eager forwards), and a graph occurrence more costs the program
 * nothing. */
static int clear_win_so_far(const ag_benefit *b)
{
    if (!b->gpu_marked) /* no GPU view here: the host's alone */
        return separated(b->sg, b->ng, b->se, b->ne, CLEAR_WIN_PCT);
    int host_ok = b->ng >= EARLY_SAMPLES && b->ne >= EARLY_SAMPLES &&
                  not_worse(med_of(b->sg, b->ng), med_of(b->se, b->ne), NOT_WORSE_PCT);
    int gpu_ok = b->ngg >= EARLY_GPU_SAMPLES && b->nge >= EARLY_GPU_SAMPLES &&
                 not_worse(med_of(b->gg, b->ngg), med_of(b->ge, b->nge), NOT_WORSE_PCT);
    return (separated(b->sg, b->ng, b->se, b->ne, CLEAR_WIN_PCT) && gpu_ok) ||
           (separated(b->gg, b->ngg, b->ge, b->nge, CLEAR_WIN_PCT) && host_ok);
}

static int trial_done(const ag_benefit *b)
{
    if (b->nocc >= TRIAL_MAX_OCC || spans_instead(b))
        return 1;
    int host = b->ng >= AG_BEN_SAMPLES && b->ne >= AG_BEN_SAMPLES;
    int gpu = !b->gpu_marked || (b->ngg >= AG_BEN_GPU_SAMPLES && b->nge >= AG_BEN_GPU_SAMPLES);
    return (host && gpu) || clear_loss_so_far(b) || clear_win_so_far(b);
}

/* The probe found the GPU the bottleneck: eager, probed again after a back-off (a program's
 * phase can change). */
static void gpu_bound(ag_benefit *b)
{
    b->gpu_bound = 1;
    b->gpu_bounds++;
    turn_off(b, 2);
}

static int probe_done(const ag_benefit *b)
{
    return b->looks >= AG_BEN_PROBE_LOOKS || b->nocc >= PROBE_MAX_OCC ||
           (!b->nmarked && b->nocc >= 2); /* no marks (no timing events here): cannot tell */
}

/* GPU-bound when the GPU was behind at two looks or its interval is clearly longer than the
 * host's; otherwise the trial follows. */
static void probe_decide(ag_benefit *b)
{
    /* the intervals count only with a look that found the GPU behind: a GPU that caught up
     * with the host at every look is not the bottleneck, and its intervals alone are noisy
     * (a loaded host delays the marks' events: a sync-every-iteration loop was once called
     * GPU-bound by them) */
    if (b->behind >= AG_BEN_BEHIND ||
        (b->behind && b->ne >= 2 && b->nge >= 2 &&
         med_of(b->ge, b->nge) * 100 > med_of(b->se, b->ne) * GPU_SLOWER_PCT)) {
        gpu_bound(b);
        return;
    }
    b->gpu_bound = 0;
    start_trial_after_probe(b);
}

void ag_benefit_behind(ag_benefit *b, int graph, int behind)
{
    if (!ag_benefit_want_look(b, graph))
        return;
    if (!graph) {
        if (b->looks < UINT8_MAX)
            b->looks++;
        if (behind && ++b->behind >= AG_BEN_BEHIND)
            gpu_bound(b); /* at once: every further probe occurrence would add to the queue */
    } else {
        if (b->glooks < UINT8_MAX)
            b->glooks++;
        if (behind && b->gbehind < UINT8_MAX && ++b->gbehind >= AG_BEN_BEHIND)
            b->queued = 1;
    }
}

void ag_benefit_replanned(ag_benefit *b)
{
    if (b->state == AG_BEN_TRIAL)
        b->ng = b->ngg = 0; /* graph samples of the old cut no longer say anything */
}

void ag_benefit_set_need(ag_benefit *b, uint32_t seen, uint32_t need)
{
    if (b->always || b->probes > 1 || (b->state == AG_BEN_PROBE && b->nocc))
        return; /* measuring already */
    if (seen > b->seen)
        b->seen = seen;
    b->need = need;
}

/* Completions against aborts: both halve every ABORT_WINDOW holds. */
static void count_complete(ag_benefit *b)
{
    if (b->completes < UINT8_MAX && ++b->completes + b->aborts >= ABORT_WINDOW) {
        if (!b->aborts && b->abort_backoff > ABORT_BACKOFF_FIRST)
            b->abort_backoff /= 2; /* a clean window: breaking off is forgiven, slowly */
        b->completes /= 2;
        b->aborts /= 2;
    }
}

void ag_benefit_gate_occurred(ag_benefit *g, int graph)
{
    if (graph)
        count_complete(g);
    if (g->state == AG_BEN_OFF && ++g->nocc >= g->wait) {
        g->state = AG_BEN_PROBE; /* open again (its own probe is never run: only the state) */
        g->nocc = 0;
    }
}

void ag_benefit_occurred(ag_benefit *b, int graph, int build, uint64_t t)
{
    if (b->seen < UINT32_MAX)
        b->seen++;
    if (b->state == AG_BEN_PROBE && b->seen <= b->need) {
        b->prev_t = 0; /* dormant (ag_benefit_dormant): not yet worth a measurement */
        return;
    }
    if (graph)
        count_complete(b);
    if ((b->state == AG_BEN_TRIAL || b->state == AG_BEN_PROBE) && b->prev_t && t > b->prev_t &&
        !b->prev_build) {
        uint64_t d = t - b->prev_t;
        if (b->prev_graph && b->ng < AG_BEN_SAMPLES)
            b->sg[b->ng++] = d;
        else if (!b->prev_graph && b->ne < AG_BEN_SAMPLES)
            b->se[b->ne++] = d;
    }
    b->prev_t = t;
    b->prev_graph = (uint8_t)graph;
    b->prev_build = (uint8_t)build;
    b->nocc++;
    switch (b->state) {
    case AG_BEN_TRIAL:
        if (trial_done(b))
            decide(b);
        break;
    case AG_BEN_PROBE:
        if (probe_done(b))
            probe_decide(b);
        break;
    case AG_BEN_ON:
    case AG_BEN_OFF:
        if (b->nocc < b->wait)
            break;
        if (b->always) { /* back on after a failure's back-off; never measured */
            b->state = AG_BEN_ON;
            b->nocc = 0;
            b->wait = UINT32_MAX;
        } else if (b->state == AG_BEN_ON) {
            start_trial(b); /* a winner's re-check */
        } else {
            start_probe(b); /* off: is the stream host-bound now? */
        }
        break;
    }
}

void ag_benefit_span(ag_benefit *b, int graph, int build, uint64_t span)
{
    if (!ag_benefit_wants_span(b, graph, build) || !span)
        return; /* (a probe's eager spans are carried into its trial, as its intervals are) */
    if (graph && b->nspg < AG_BEN_SAMPLES)
        b->spg[b->nspg++] = span;
    else if (!graph && b->nspe < AG_BEN_SAMPLES)
        b->spe[b->nspe++] = span;
}

void ag_benefit_gpu(ag_benefit *b, uint32_t trial_id, int graph, int build, uint64_t ns)
{
    if ((b->state != AG_BEN_TRIAL && (b->state != AG_BEN_PROBE || graph)) ||
        trial_id != b->trial_id || build || !ns)
        return;
    if (graph && b->ngg < AG_BEN_SAMPLES)
        b->gg[b->ngg++] = ns;
    else if (!graph && b->nge < AG_BEN_SAMPLES)
        b->ge[b->nge++] = ns;
}

void ag_benefit_aborted(ag_benefit *b)
{
    b->prev_t = 0;
    if (b->always)
        return;
    if (b->aborts < UINT8_MAX)
        b->aborts++;
    if (b->aborts >= MAX_ABORTS && b->aborts > b->completes) {
        /* off for a back-off that doubles each time: a sequence that keeps breaking off pays
         * O(log n) aborted holds over n occurrences */
        b->state = AG_BEN_OFF;
        b->nocc = 0;
        b->wait = b->abort_backoff;
        b->abort_backoff =
            b->abort_backoff >= ABORT_BACKOFF_MAX / 2 ? ABORT_BACKOFF_MAX : b->abort_backoff * 2;
        b->aborts = b->completes = 0;
        b->abort_offs++;
    }
}

void ag_benefit_unsampled(ag_benefit *b)
{
    b->prev_t = 0;
}

void ag_benefit_rested(ag_benefit *b, uint32_t occ)
{
    if (b->state == AG_BEN_OFF)
        b->nocc = occ >= b->wait - b->nocc ? b->wait - 1 : b->nocc + occ;
    else if (!ag_benefit_dormant(b))
        return;
    else if (occ >= b->need - b->seen)
        occ = b->need - b->seen - 1; /* the occurrence after the rest is the last dormant one */
    if (b->seen <= UINT32_MAX - occ)
        b->seen += occ;
}

void ag_benefit_trust(ag_benefit *b)
{
    if (b->always)
        return;
    b->state = AG_BEN_ON;
    b->nocc = 0;
    b->wait = b->recheck;
    b->prev_t = 0;
}

void ag_benefit_failed(ag_benefit *b)
{
    b->prev_t = 0;
    turn_off(b, 2);
}

/* Appends " NAME [v0 v1 ...]" (us), when there are samples. */
static void put_samples(char *buf, size_t n, size_t *at, const char *name, const uint64_t *v,
                        unsigned k)
{
    if (!k)
        return;
    ag_log_put(buf, n, at, " %s [", name);
    for (unsigned i = 0; i < k; i++)
        ag_log_put(buf, n, at, "%s%.1f", i ? " " : "", (double)v[i] / 1e3);
    ag_log_put(buf, n, at, "]");
}

void ag_benefit_describe(const ag_benefit *b, char *buf, size_t n)
{
    size_t at = 0;
    if (!n)
        return;
    buf[0] = 0;
    static const char *const what[3] = { "host:", "gpu:", "spans:" };
    const uint64_t *g[3] = { b->sg, b->gg, b->spg }, *e[3] = { b->se, b->ge, b->spe };
    const unsigned ng[3] = { b->ng, b->ngg, b->nspg }, ne[3] = { b->ne, b->nge, b->nspe };
    for (int m = 0; m < 3; m++) {
        if (!ng[m] && !ne[m])
            continue;
        ag_log_put(buf, n, &at, "%s%s", at ? "; " : "", what[m]);
        put_samples(buf, n, &at, "graph", g[m], ng[m]);
        put_samples(buf, n, &at, "eager", e[m], ne[m]);
    }
}
