/* See benefit.h. */
#include "benefit.h"

#include <string.h>

#define MARGIN_PCT 2          /* graphs must beat eager by this much to stay on... */
#define MARGIN_SHORT_PCT 5    /* ...or by this much for sequences of one or two launches, where
                               * a graph launch saves at most one or two eager launches */
#define NOT_WORSE_PCT 2       /* the other measure may be worse by no more than noise */
#define CLEAR_LOSS_PCT 10     /* a trial losing by this much ends early and backs off more */
#define EARLY_SAMPLES 4       /* samples of each mode before a trial may end early */
#define RECHECK_FIRST 64      /* occurrences before the first re-check of a win... */
#define RECHECK_ON 4096       /* ...growing fourfold per confirmation up to this */
#define BACKOFF_FIRST 64
#define BACKOFF_MAX 16384
#define TRIAL_MAX_OCC 96      /* a trial that cannot collect its samples decides anyway */
#define MAX_ABORTS 4

static void start_trial(ag_benefit *b)
{
    b->state = AG_BEN_TRIAL;
    b->nocc = 0;
    b->ng = b->ne = b->ngg = b->nge = 0;
    b->gpu_marked = 0;
    b->trial_id++;
    b->prev_t = 0;
}

void ag_benefit_init(ag_benefit *b, int always, uint32_t len)
{
    memset(b, 0, sizeof *b);
    b->always = (uint8_t)always;
    b->margin_pct = len <= 2 ? MARGIN_SHORT_PCT : MARGIN_PCT;
    b->backoff = BACKOFF_FIRST;
    b->recheck = RECHECK_FIRST;
    if (always) {
        b->state = AG_BEN_ON;
        b->wait = UINT32_MAX;
    } else
        start_trial(b);
}

int ag_benefit_want_graph(const ag_benefit *b)
{
    switch (b->state) {
    case AG_BEN_ON:
        return 1;
    case AG_BEN_OFF:
        return 0;
    default: /* blocks of graph, then eager, ...: the first block builds the graph */
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

/* Graphs stay on when one measure wins by the margin and the other is not worse; without GPU
 * samples, the host's measure alone decides. */
static void decide(ag_benefit *b)
{
    b->trials++;
    if (!b->ng || !b->ne) {
        turn_off(b, 2);
        return;
    }
    b->med_graph = med_of(b->sg, b->ng);
    b->med_eager = med_of(b->se, b->ne);
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
    if (on) {
        b->wins++;
        b->state = AG_BEN_ON;
        b->nocc = 0;
        b->wait = b->recheck;
        b->recheck = b->recheck >= RECHECK_ON / 4 ? RECHECK_ON : b->recheck * 4;
        b->backoff = BACKOFF_FIRST;
    } else {
        b->recheck = RECHECK_FIRST;
        /* a clear loss on either measure: the next trial is much later */
        int clear = !not_worse(b->med_graph, b->med_eager, CLEAR_LOSS_PCT) ||
                    (gpu && !not_worse(b->gpu_graph, b->gpu_eager, CLEAR_LOSS_PCT));
        turn_off(b, clear ? 4 : 2);
    }
}

/* A trial may end before all its samples are in when graphs already lose clearly on one
 * measure: every further graph occurrence would cost the program. */
static int clear_loss_so_far(const ag_benefit *b)
{
    return (b->ng >= EARLY_SAMPLES && b->ne >= EARLY_SAMPLES &&
            !not_worse(med_of(b->sg, b->ng), med_of(b->se, b->ne), CLEAR_LOSS_PCT)) ||
           (b->ngg >= EARLY_SAMPLES && b->nge >= EARLY_SAMPLES &&
            !not_worse(med_of(b->gg, b->ngg), med_of(b->ge, b->nge), CLEAR_LOSS_PCT));
}

static int trial_done(const ag_benefit *b)
{
    if (b->nocc >= TRIAL_MAX_OCC)
        return 1;
    int host = b->ng >= AG_BEN_SAMPLES && b->ne >= AG_BEN_SAMPLES;
    int gpu = !b->gpu_marked || (b->ngg >= AG_BEN_GPU_SAMPLES && b->nge >= AG_BEN_GPU_SAMPLES);
    return (host && gpu) || clear_loss_so_far(b);
}

void ag_benefit_occurred(ag_benefit *b, int graph, int build, uint64_t t)
{
    b->aborts = 0;
    if (b->state == AG_BEN_TRIAL && b->prev_t && t > b->prev_t && !b->prev_build) {
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
    case AG_BEN_ON:
    case AG_BEN_OFF:
        if (b->nocc < b->wait)
            break;
        if (b->always) { /* back on after a failure's back-off; never measured */
            b->state = AG_BEN_ON;
            b->nocc = 0;
            b->wait = UINT32_MAX;
        } else {
            start_trial(b);
        }
        break;
    }
}

void ag_benefit_gpu(ag_benefit *b, uint32_t trial_id, int graph, int build, uint64_t ns)
{
    if (b->state != AG_BEN_TRIAL || trial_id != b->trial_id || build || !ns)
        return;
    if (graph && b->ngg < AG_BEN_SAMPLES)
        b->gg[b->ngg++] = ns;
    else if (!graph && b->nge < AG_BEN_SAMPLES)
        b->ge[b->nge++] = ns;
}

void ag_benefit_aborted(ag_benefit *b)
{
    b->prev_t = 0;
    if (++b->aborts >= MAX_ABORTS && !b->always) {
        b->aborts = 0;
        turn_off(b, 2);
    }
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
