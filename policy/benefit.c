/* See benefit.h. */
#include "benefit.h"

#include <string.h>

#define MARGIN_PCT 2          /* graphs must beat eager by this much to stay on */
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
    b->ng = b->ne = 0;
    b->prev_t = 0;
}

void ag_benefit_init(ag_benefit *b, int always)
{
    memset(b, 0, sizeof *b);
    b->always = (uint8_t)always;
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

static void turn_off(ag_benefit *b)
{
    b->state = AG_BEN_OFF;
    b->nocc = 0;
    b->wait = b->backoff;
    b->backoff = b->backoff >= BACKOFF_MAX / 2 ? BACKOFF_MAX : b->backoff * 2;
    b->prev_t = 0;
}

static void decide(ag_benefit *b)
{
    b->trials++;
    if (!b->ng || !b->ne) {
        turn_off(b);
        return;
    }
    b->med_graph = median(b->sg, b->ng);
    b->med_eager = median(b->se, b->ne);
    if (b->med_graph * 100 < b->med_eager * (100 - MARGIN_PCT)) {
        b->wins++;
        b->state = AG_BEN_ON;
        b->nocc = 0;
        b->wait = b->recheck;
        b->recheck = b->recheck >= RECHECK_ON / 4 ? RECHECK_ON : b->recheck * 4;
        b->backoff = BACKOFF_FIRST;
    } else {
        b->recheck = RECHECK_FIRST;
        turn_off(b);
    }
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
        if ((b->ng >= AG_BEN_SAMPLES && b->ne >= AG_BEN_SAMPLES) || b->nocc >= TRIAL_MAX_OCC)
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

void ag_benefit_aborted(ag_benefit *b)
{
    b->prev_t = 0;
    if (++b->aborts >= MAX_ABORTS && !b->always) {
        b->aborts = 0;
        turn_off(b);
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
    turn_off(b);
}
