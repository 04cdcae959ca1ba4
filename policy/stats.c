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
    pthread_mutex_lock(&g_mu);
    b->next = g_blocks;
    g_blocks = b;
    pthread_mutex_unlock(&g_mu);
    pthread_setspecific(g_key, b);
    ag_tstats = b;
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
    out[AG_ST_PASSED] += out[AG_ST_RESTED]; /* counted once on the launch path */
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

static void write_json(const char *path, const uint64_t *c, const ag_seq_report *top, int ntop,
                       uint64_t nseq, double frac, double saved_us)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        ag_log(AG_LOG_WARN, "cannot write AUTOGRAPH_STATS file %s", path);
        return;
    }
    fprintf(f, "{\n  \"schema\": \"libautograph-stats/1\",\n  \"pid\": %ld,\n", (long)getpid());
    fprintf(f, "  \"counters\": {\n");
    for (int i = 0; i < AG_ST_COUNT; i++)
        fprintf(f, "    \"%s\": %llu%s\n", ag_stat_names[i], (unsigned long long)c[i],
                i + 1 < AG_ST_COUNT ? "," : "");
    fprintf(f, "  },\n  \"replayed_fraction\": %.6f,\n  \"estimated_saved_us\": %.1f,\n", frac,
            saved_us);
    fprintf(f, "  \"sequences_total\": %llu,\n  \"top_sequences\": [", (unsigned long long)nseq);
    for (int i = 0; i < ntop; i++) {
        const ag_seq_report *s = &top[i];
        fprintf(f, "%s\n    {\"key\": \"%016llx\", \"length\": %u, \"replays\": %llu, "
                   "\"eager_runs\": %llu, \"state\": ",
                i ? "," : "", (unsigned long long)s->key, s->len,
                (unsigned long long)s->replays, (unsigned long long)s->eager_runs);
        json_str(f, s->state);
        fprintf(f, ", \"median_graph_us\": %.2f, \"median_eager_us\": %.2f, \"kernels\": ",
                s->med_graph_ns / 1e3, s->med_eager_ns / 1e3);
        json_str(f, s->names);
        fputc('}', f);
    }
    fprintf(f, "%s]\n}\n", ntop ? "\n  " : "");
    fclose(f);
}

void ag_stats_report(const ag_seq_report *top, int ntop, uint64_t nseq, double saved_us)
{
    const char *mode = ag_opt_str(AG_OPT_STATS);
    if (!strcmp(mode, "0") || !*mode)
        return;
    uint64_t c[AG_ST_COUNT];
    ag_stats_sum(c);
    uint64_t launches = 0;
    for (int i = AG_ST_LAUNCH; i <= AG_ST_COOP_PTSZ; i++)
        launches += c[i];
    double frac = launches ? (double)c[AG_ST_REPLAYED] / (double)launches : 0.0;

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
                 (unsigned long long)top[i].eager_runs, top[i].state,
                 top[i].med_graph_ns / 1e3, top[i].med_eager_ns / 1e3, top[i].names);
    if (strcmp(mode, "1"))
        write_json(mode, c, top, ntop, nseq, frac, saved_us);
}
