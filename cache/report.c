/* The stats report's sequences: the most replayed templates of all streams, and the time saved. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "policy/stats.h"
#include "cache/internal.h"

#define TOP 10
typedef struct {
    ag_seq_report top[TOP];
    int n;
    uint64_t nseq;
    double saved_us;
} top_acc;

/* Sequences of the per-thread streams of threads that exited (their states are retired then):
 * still the process's sequences. */
static top_acc g_gone;
static pthread_mutex_t g_gone_mu = PTHREAD_MUTEX_INITIALIZER;

static void collect_locked(ag_stream *st, top_acc *a);

/* T's estimated saving: its trial's median gain per occurrence times its replays, at most the
 * eager launches a replay stands in for (their host time, ag_eager_launch_ns). A trial's
 * intervals can span what is not the sequence's (F4 on the H100: a 10-launch sequence that
 * starts each token had eager intervals of 61.5 ms, across generate calls, against a token's
 * 3.7 ms), and the report then claimed 38 s saved in a 5 s run. */
static uint64_t tmpl_saved_ns(const ag_tmpl *T)
{
    if (!T->bp->med_graph || T->bp->med_eager <= T->bp->med_graph)
        return 0;
    uint64_t per = T->bp->med_eager - T->bp->med_graph, eager = ag_eager_launch_ns();
    if (eager && per > T->len * eager) /* (no eager launch timed yet: no bound) */
        per = T->len * eager;
    return per * T->replays;
}

/* The same sequence kept before (learned again after an invalidation): its counts add up, and
 * it moves up to its place. 1 when merged. */
static int merge(top_acc *a, const ag_tmpl *T)
{
    int i = 0;
    while (i < a->n && a->top[i].key != T->key)
        i++;
    if (i == a->n)
        return 0;
    a->nseq--; /* (one sequence, not two) */
    a->top[i].replays += T->replays;
    a->top[i].eager_runs += T->eager_runs;
    a->top[i].saved_ns += tmpl_saved_ns(T);
    for (; i > 0 && a->top[i - 1].replays < a->top[i].replays; i--) {
        ag_seq_report t = a->top[i - 1];
        a->top[i - 1] = a->top[i];
        a->top[i] = t;
    }
    return 1;
}

void ag_report_keep(ag_stream *st)
{
    pthread_mutex_lock(&g_gone_mu);
    collect_locked(st, &g_gone);
    pthread_mutex_unlock(&g_gone_mu);
}

static void collect_top(ag_stream *st, void *arg)
{
    ag_lock(&st->mu);
    collect_locked(st, arg);
    ag_unlock(&st->mu);
}

static void collect_locked(ag_stream *st, top_acc *a)
{
    for (ag_tmpl *T = st->tmpls; T; T = T->next_all) {
        a->nseq++;
        a->saved_us += (double)tmpl_saved_ns(T) / 1e3;
        if (merge(a, T))
            continue;
        int pos = a->n;
        while (pos > 0 && a->top[pos - 1].replays < T->replays)
            pos--;
        if (pos >= TOP)
            continue;
        if (a->n < TOP)
            a->n++;
        memmove(&a->top[pos + 1], &a->top[pos], (size_t)(a->n - 1 - pos) * sizeof a->top[0]);
        ag_seq_report *r = &a->top[pos];
        memset(r, 0, sizeof *r);
        r->key = T->key;
        r->len = T->len;
        r->replays = T->replays;
        r->eager_runs = T->eager_runs;
        r->state = T->bp->state == AG_BEN_ON ? "graph" : T->bp->state == AG_BEN_OFF ? "eager" : "trial";
        r->med_graph_ns = T->bp->med_graph;
        r->med_eager_ns = T->bp->med_eager;
        r->saved_ns = tmpl_saved_ns(T);
        /* schema 2: what became of it, and why */
        int broke = T->broken[AG_BREAK_DIVERGE] + T->broken[AG_BREAK_TIMEOUT] +
                    T->broken[AG_BREAK_GRAPH_API] > T->replays;
        r->status = T->bp->state == AG_BEN_ON     ? AG_SEQ_GRAPHED
                    : T->bp->state == AG_BEN_TRIAL || T->bp->state == AG_BEN_PROBE
                        ? AG_SEQ_TRIAL
                    : broke                        ? AG_SEQ_OFF_FAILURES
                                                   : AG_SEQ_EAGER_POLICY;
        r->why[AG_WHY_DIVERGENCE] = T->broken[AG_BREAK_DIVERGE];
        r->why[AG_WHY_HOLD_TIMEOUT] = T->broken[AG_BREAK_TIMEOUT];
        r->why[AG_WHY_COPY] = T->broken[AG_BREAK_COPY];
        r->why[AG_WHY_GRAPH_API] = T->broken[AG_BREAK_GRAPH_API];
        r->why[AG_WHY_EAGER_FASTER] = /* (a variant group's trials: its first's) */
            T->bp == &T->ben ? T->bp->trials - T->bp->wins : 0;
        r->why[AG_WHY_ATTR_CHURN] = T->attr_offs;
        r->host_graph_ns = T->bp->med_graph;
        r->host_eager_ns = T->bp->med_eager;
        r->gpu_graph_ns = T->bp->gpu_graph;
        r->gpu_eager_ns = T->bp->gpu_eager;
        for (uint32_t i = 0; i < T->len && r->nkernels < AG_SEQ_KERNELS; i++)
            if (!i || strcmp(T->nodes[i].lay->name, T->nodes[i - 1].lay->name))
                r->kernel[r->nkernels++] = T->nodes[i].lay->name;
        size_t used = 0;
        for (uint32_t i = 0; i < T->len && used + 4 < sizeof r->names; i++) {
            if (i && !strcmp(T->nodes[i].lay->name, T->nodes[i - 1].lay->name))
                continue;
            int w = snprintf(r->names + used, sizeof r->names - used, "%s%s", used ? "," : "",
                             T->nodes[i].lay->name);
            if (w < 0)
                break;
            used += (size_t)w;
        }
    }
}

void ag_report_stats(void)
{
    top_acc a;
    pthread_mutex_lock(&g_gone_mu);
    a = g_gone;
    pthread_mutex_unlock(&g_gone_mu);
    if (atomic_load(&ag_hot.state) != AG_ENGINE_DISABLED)
        ag_streams_each(collect_top, &a);
    ag_stats_report(a.top, a.n, a.nseq, a.saved_us);
}
