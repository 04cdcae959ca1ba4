/* See stats.h. */
#include "stats.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "options.h"

const char *const ag_stat_names[AG_ST_COUNT] = {
#define AG_STAT_NAME(id, name, doc) name,
    AG_STATS(AG_STAT_NAME)
#undef AG_STAT_NAME
};
const char *const ag_stat_docs[AG_ST_COUNT] = {
#define AG_STAT_DOC(id, name, doc) doc,
    AG_STATS(AG_STAT_DOC)
#undef AG_STAT_DOC
};

__thread ag_stat_block *ag_tstats __attribute__((tls_model("initial-exec")));

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static ag_stat_block *g_blocks;     /* live threads */
static ag_stat_block g_retired;     /* sums of threads that have exited */
static pthread_key_t g_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;

static void retire(void *p)
{
    ag_stat_block *b = p;
    pthread_mutex_lock(&g_mu);
    for (ag_stat_block **pp = &g_blocks; *pp; pp = &(*pp)->next)
        if (*pp == b) {
            *pp = b->next;
            break;
        }
    for (int i = 0; i < AG_ST_COUNT; i++)
        g_retired.c[i] += b->c[i];
    pthread_mutex_unlock(&g_mu);
    ag_tstats = NULL;
    free(b);
}

static void make_key(void)
{
    pthread_key_create(&g_key, retire);
}

ag_stat_block *ag_stats_thread_block(void)
{
    pthread_once(&g_key_once, make_key);
    ag_stat_block *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    /* Written now: calloc leaves fresh pages untouched, and the first counter a launch
     * incremented took the page fault (the first launch's selftime line counted one in two of
     * three processes on the H100 host, none since; its own time went from 4.0-4.9 us to
     * 3.7-4.0 us: the rest is the first execution of cold code, 2026-11-25). Atomic stores:
     * a compiler drops plain ones after calloc. */
    for (int i = 0; i < AG_ST_COUNT; i++)
        __atomic_store_n(&b->c[i], 0, __ATOMIC_RELAXED);
    pthread_mutex_lock(&g_mu);
    b->next = g_blocks;
    g_blocks = b;
    pthread_mutex_unlock(&g_mu);
    pthread_setspecific(g_key, b);
    ag_tstats = b;
    ag_log(AG_LOG_DEBUG, "this thread's counters made");
    return b;
}

void ag_stats_sum(uint64_t out[AG_ST_COUNT])
{
    pthread_mutex_lock(&g_mu);
    for (int i = 0; i < AG_ST_COUNT; i++) {
        out[i] = g_retired.c[i];
        for (ag_stat_block *b = g_blocks; b; b = b->next)
            out[i] += __atomic_load_n(&b->c[i], __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&g_mu);
    /* a launch that passes is counted once on the launch path, under its fate */
    out[AG_ST_RESTED] += out[AG_ST_FATE_REST_NO_REPEAT] + out[AG_ST_FATE_REST_BACKOFF];
    out[AG_ST_PASSED] += out[AG_ST_RESTED];
    for (int i = AG_ST_FATE_FIRST; i < AG_ST_FATE_END; i++)
        if (ag_fate_passes(i))
            out[AG_ST_PASSED] += out[i];
}

int ag_fate_passes(int fate)
{
    switch (fate) {
    case AG_ST_FATE_EAGER_LEARNING:
    case AG_ST_FATE_EAGER_POLICY:
    case AG_ST_FATE_UNGRAPHABLE:
    case AG_ST_FATE_CAPTURE:
    case AG_ST_FATE_PAUSED:
    case AG_ST_FATE_OFF:
    case AG_ST_FATE_NO_STATE:
    case AG_ST_FATE_NOT_HELD:
        return 1;
    default: /* held (replayed or flushed eagerly), or rested (counted apart) */
        return 0;
    }
}

const char *const ag_why_names[AG_WHY_COUNT] = {
#define AG_WHY_NAME(id, name, unit) name,
    AG_WHYS(AG_WHY_NAME)
#undef AG_WHY_NAME
};
static const char *const why_units[AG_WHY_COUNT] = {
#define AG_WHY_UNIT(id, name, unit) unit,
    AG_WHYS(AG_WHY_UNIT)
#undef AG_WHY_UNIT
};
const char *const ag_seq_status_names[AG_SEQ_STATUS_COUNT] = {
    "unknown", "graphed", "eager_policy", "off_failures", "never_graphable", "trial"
};

static int seq_status(const ag_seq_report *s)
{
    if (s->status > AG_SEQ_UNSET && s->status < AG_SEQ_STATUS_COUNT)
        return s->status;
    if (!s->state)
        return AG_SEQ_UNSET;
    return !strcmp(s->state, "graph") ? AG_SEQ_GRAPHED
         : !strcmp(s->state, "eager") ? AG_SEQ_EAGER_POLICY
                                      : AG_SEQ_TRIAL;
}

/* The most frequent reasons process-wide, from the counters (the per-sequence counts only
 * cover the sequences reported), largest first. */
typedef struct {
    const char *name, *unit;
    uint64_t count;
    int why; /* enum ag_why, or -1 */
} reason;

#define MAX_REASONS 16 /* room in `out`: at least every entry of reasons()'s table */
static int reasons(const uint64_t *c, reason out[MAX_REASONS])
{
    uint64_t ung = c[AG_ST_UNG_ATTR] + c[AG_ST_UNG_PSIZE] + c[AG_ST_UNG_DENIED] + c[AG_ST_UNG_LAYOUT];
    reason all[] = {
        { ag_why_names[AG_WHY_DIVERGENCE], why_units[AG_WHY_DIVERGENCE], c[AG_ST_FL_DIVERGE], AG_WHY_DIVERGENCE },
        { ag_why_names[AG_WHY_ATTRIBUTE], why_units[AG_WHY_ATTRIBUTE], c[AG_ST_UNG_ATTR], AG_WHY_ATTRIBUTE },
        { ag_why_names[AG_WHY_PARAM_SIZE], why_units[AG_WHY_PARAM_SIZE], c[AG_ST_UNG_PSIZE], AG_WHY_PARAM_SIZE },
        { ag_why_names[AG_WHY_DENIED], why_units[AG_WHY_DENIED], c[AG_ST_UNG_DENIED], AG_WHY_DENIED },
        { ag_why_names[AG_WHY_LAYOUT], why_units[AG_WHY_LAYOUT], c[AG_ST_UNG_LAYOUT], AG_WHY_LAYOUT },
        /* ungraphable launches whose cause the engine did not record */
        { "ungraphable_other", "launches", c[AG_ST_OPAQUE] > ung ? c[AG_ST_OPAQUE] - ung : 0, -1 },
        { ag_why_names[AG_WHY_COPY], why_units[AG_WHY_COPY], c[AG_ST_FL_COPY], AG_WHY_COPY },
        { ag_why_names[AG_WHY_HOLD_TIMEOUT], why_units[AG_WHY_HOLD_TIMEOUT], c[AG_ST_FL_TIMEOUT], AG_WHY_HOLD_TIMEOUT },
        { ag_why_names[AG_WHY_GRAPH_API], why_units[AG_WHY_GRAPH_API],
          c[AG_ST_FAIL_BUILD] + c[AG_ST_FAIL_UPDATE] + c[AG_ST_FAIL_LAUNCH], AG_WHY_GRAPH_API },
        { ag_why_names[AG_WHY_EAGER_FASTER], why_units[AG_WHY_EAGER_FASTER], c[AG_ST_POLICY_OFF], AG_WHY_EAGER_FASTER },
        { ag_why_names[AG_WHY_ATTR_CHURN], why_units[AG_WHY_ATTR_CHURN], c[AG_ST_POLICY_ATTR_OFF], AG_WHY_ATTR_CHURN },
        { "cache_full", "replays", c[AG_ST_GRAPH_CACHE_FULL], -1 },
        { "in_app_capture", "launches", c[AG_ST_CAPTURED], -1 },
        { "paused", "launches", c[AG_ST_PAUSED], -1 },
    };
    _Static_assert(sizeof all / sizeof all[0] <= MAX_REASONS, "reasons: out is too small");
    int n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (!all[i].count)
            continue;
        int pos = n++;
        while (pos > 0 && out[pos - 1].count < all[i].count) {
            out[pos] = out[pos - 1];
            pos--;
        }
        out[pos] = all[i];
    }
    return n;
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void json_kernels(FILE *f, const ag_seq_report *s)
{
    fputc('[', f);
    if (s->nkernels) {
        for (uint32_t k = 0; k < s->nkernels && k < AG_SEQ_KERNELS; k++) {
            if (k)
                fputs(", ", f);
            json_str(f, s->kernel[k] ? s->kernel[k] : "?");
        }
    } else {
        char one[sizeof s->names];
        const char *p = s->names;
        for (int k = 0; *p; k++) {
            size_t n = strcspn(p, ",");
            memcpy(one, p, n);
            one[n] = 0;
            if (k)
                fputs(", ", f);
            json_str(f, one);
            p += n + (p[n] == ',');
        }
    }
    fputc(']', f);
}

static void summarise(uint64_t *c, double *frac)
{
    ag_stats_sum(c);
    uint64_t launches = 0;
    for (int i = AG_ST_LAUNCH; i <= AG_ST_COOP_PTSZ; i++)
        launches += c[i];
    /* kernel launches only: launches.replayed counts replayed copies and memsets too */
    *frac = launches ? (double)c[AG_ST_FATE_REPLAYED] / (double)launches : 0.0;
}

int ag_stats_write_json(const char *pattern, const ag_seq_report *top, int ntop, uint64_t nseq,
                        double saved_us)
{
    uint64_t c[AG_ST_COUNT];
    double frac;
    summarise(c, &frac);
    char path[4096], host[256];
    if (ag_path_expand(pattern, path, sizeof path)) {
        ag_log(AG_LOG_WARN, "AUTOGRAPH_STATS path too long: %s", pattern);
        return -1;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        ag_log(AG_LOG_WARN, "cannot write AUTOGRAPH_STATS file %s", path);
        return -1;
    }
    if (gethostname(host, sizeof host - 1))
        strcpy(host, "unknown");
    host[sizeof host - 1] = 0;
    fprintf(f, "{\n  \"schema\": \"libautograph-stats/2\",\n  \"pid\": %ld,\n  \"host\": ",
            (long)getpid());
    json_str(f, host);
    fprintf(f, ",\n  \"counters\": {\n");
    for (int i = 0; i < AG_ST_COUNT; i++)
        fprintf(f, "    \"%s\": %llu%s\n", ag_stat_names[i], (unsigned long long)c[i],
                i + 1 < AG_ST_COUNT ? "," : "");
    fprintf(f, "  },\n  \"fates\": {");
    for (int i = AG_ST_FATE_FIRST; i < AG_ST_FATE_END; i++)
        fprintf(f, "%s\n    \"%s\": %llu", i > AG_ST_FATE_FIRST ? "," : "",
                ag_stat_names[i] + sizeof "fate." - 1, (unsigned long long)c[i]);
    fprintf(f, "\n  },\n  \"replayed_fraction\": %.6f,\n  \"estimated_saved_us\": %.1f,\n", frac,
            saved_us);
    fprintf(f, "  \"warnings_suppressed\": %llu,\n", (unsigned long long)ag_log_suppressed());
    fprintf(f, "  \"sequences_total\": %llu,\n  \"top_sequences\": [", (unsigned long long)nseq);
    for (int i = 0; i < ntop; i++) {
        const ag_seq_report *s = &top[i];
        fprintf(f, "%s\n    {\"key\": \"%016llx\", \"length\": %u, \"replays\": %llu, "
                   "\"eager_runs\": %llu, \"state\": ",
                i ? "," : "", (unsigned long long)s->key, s->len,
                (unsigned long long)s->replays, (unsigned long long)s->eager_runs);
        json_str(f, s->state ? s->state : "trial");
        fprintf(f, ", \"median_graph_us\": %.2f, \"median_eager_us\": %.2f, \"kernels\": ",
                s->med_graph_ns / 1e3, s->med_eager_ns / 1e3);
        json_str(f, s->names);
        fprintf(f, ",\n     \"status\": \"%s\", \"kernel_names\": ",
                ag_seq_status_names[seq_status(s)]);
        json_kernels(f, s);
        fprintf(f, ",\n     \"reasons\": {");
        for (int w = 0; w < AG_WHY_COUNT; w++)
            fprintf(f, "%s\"%s\": %llu", w ? ", " : "", ag_why_names[w],
                    (unsigned long long)s->why[w]);
        fprintf(f, "},\n     \"host_graph_ns\": %llu, \"host_eager_ns\": %llu, "
                   "\"gpu_graph_ns\": %llu, \"gpu_eager_ns\": %llu, \"estimated_saved_us\": %.1f}",
                (unsigned long long)s->host_graph_ns, (unsigned long long)s->host_eager_ns,
                (unsigned long long)s->gpu_graph_ns, (unsigned long long)s->gpu_eager_ns,
                s->saved_ns / 1e3);
    }
    fprintf(f, "%s],\n  \"not_graphed\": [", ntop ? "\n  " : "");
    reason r[MAX_REASONS];
    int nr = reasons(c, r);
    for (int i = 0; i < nr; i++) {
        int seqs = 0;
        for (int k = 0; r[i].why >= 0 && k < ntop; k++)
            seqs += top[k].why[r[i].why] != 0;
        fprintf(f, "%s\n    {\"reason\": \"%s\", \"count\": %llu, \"unit\": \"%s\", "
                   "\"sequences\": %d}",
                i ? "," : "", r[i].name, (unsigned long long)r[i].count, r[i].unit, seqs);
    }
    fprintf(f, "%s]\n}\n", nr ? "\n  " : "");
    return fclose(f) ? -1 : 0;
}

void ag_stats_report(const ag_seq_report *top, int ntop, uint64_t nseq, double saved_us)
{
    const char *mode = ag_opt_str(AG_OPT_STATS);
    if (!strcmp(mode, "0") || !*mode)
        return;
    uint64_t c[AG_ST_COUNT];
    double frac;
    summarise(c, &frac);

    ag_print(2, "---- statistics (pid %ld) ----", (long)getpid());
    for (int i = 0; i < AG_ST_COUNT; i++)
        ag_print(2, "%-42s %llu", ag_stat_names[i], (unsigned long long)c[i]);
    ag_print(2, "%-42s %.1f%%", "launches.replayed_percent", 100.0 * frac);
    ag_print(2, "%-42s %.1f", "time.estimated_saved_us", saved_us);
    ag_print(2, "%-42s %llu", "sequences.total", (unsigned long long)nseq);
    for (int i = 0; i < ntop; i++)
        ag_print(2, "sequence #%d: %u launches, %llu replays, %llu eager, %s, graph %.1f us vs "
                    "eager %.1f us: %s",
                 i + 1, top[i].len, (unsigned long long)top[i].replays,
                 (unsigned long long)top[i].eager_runs, ag_seq_status_names[seq_status(&top[i])],
                 top[i].med_graph_ns / 1e3, top[i].med_eager_ns / 1e3, top[i].names);
    reason r[MAX_REASONS];
    int nr = reasons(c, r);
    for (int i = 0; i < nr && i < 3; i++)
        ag_print(2, "not graphed #%d: %s (%llu %s)", i + 1, r[i].name,
                 (unsigned long long)r[i].count, r[i].unit);
    if (strcmp(mode, "1"))
        ag_stats_write_json(mode, top, ntop, nseq, saved_us);
}
