/* AUTOGRAPH_PROFILE: loading and saving learned sequences (see profile.h). */
/* The file is text, one sequence per "seq" line followed by its nodes:
 *
 *   libautograph-profile 1
 *   seq <nodes> <trusted 0|1> <median graph ns> <median eager ns>
 *   n <ident> <gx> <gy> <gz> <bx> <by> <bz> <smem> <psize> <kind> <nattrs> <attr hash> <name>
 *
 * Malformed or oversized input is skipped with a warning; saving writes a temporary file and
 * renames it, so a crash never leaves half a profile. */
#include "cache/profile.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/log.h"
#include "policy/options.h"
#include "policy/stats.h"
#include "cache/internal.h"
#include "cache/stream.h"

#define MAX_SEQS 100000
#define MAX_FAILS 3

struct ag_pseq {
    uint32_t len;
    uint8_t trusted;
    uint64_t med_graph, med_eager;
    ag_pshape *nodes;
    char **names;
    atomic_int fails, used;
    ag_pseq *next;
};

static ag_pseq *g_seqs;          /* everything loaded */
static ag_pseq *g_kept;          /* learned by streams that are gone (destroyed, unloaded) */
static pthread_mutex_t g_kept_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_first_bits[4];  /* like ag_stream.first_bits, for the loaded sequences */

static uint64_t first_key(const ag_pshape *p)
{
    return ag_hash(p, sizeof *p);
}

void ag_pshape_of(const ag_shape *s, const ag_layout *lay, ag_pshape *p)
{
    memset(p, 0, sizeof *p);
    p->ident = lay->ident;
    memcpy(p->grid, s->dims.grid, sizeof p->grid);
    memcpy(p->block, s->dims.block, sizeof p->block);
    p->smem = s->dims.smem;
    p->psize = lay->size;
    p->kind = s->kind;
    p->nattrs = s->nattrs;
    p->attr_hash = s->attr_hash;
}

uint32_t ag_profile_len(const ag_pseq *q) { return q->len; }

int ag_profile_node_is(const ag_pseq *q, uint32_t k, const ag_pshape *p)
{
    return k < q->len && !memcmp(&q->nodes[k], p, sizeof *p);
}

ag_pseq *ag_profile_first(const ag_pshape *p)
{
    uint64_t k = first_key(p);
    if (!(g_first_bits[(k >> 6) & 3] & (1ull << (k & 63))))
        return NULL;
    for (ag_pseq *q = g_seqs; q; q = q->next)
        if (q->trusted && atomic_load(&q->fails) < MAX_FAILS && !memcmp(&q->nodes[0], p, sizeof *p))
            return q;
    return NULL;
}

void ag_profile_failed(ag_pseq *q)
{
    if (atomic_fetch_add(&q->fails, 1) + 1 == MAX_FAILS)
        atomic_fetch_sub(&ag_hot.profile_live, 1);
}

void ag_profile_used(ag_pseq *q)
{
    if (atomic_fetch_add(&q->used, 1) == 0)
        ag_stat_inc(AG_ST_PROFILE_USED);
}

static void free_seq(ag_pseq *q)
{
    if (q->names)
        for (uint32_t i = 0; i < q->len; i++)
            free(q->names[i]);
    free(q->names);
    free(q->nodes);
    free(q);
}

void ag_profile_load(void)
{
    const char *path = ag_opt_str(AG_OPT_PROFILE);
    if (!*path)
        return;
    FILE *f = fopen(path, "r");
    if (!f) {
        ag_log(AG_LOG_INFO, "profile %s not found: it will be written at exit", path);
        return;
    }
    char line[1024];
    int n = 0, bad = 0;
    if (!fgets(line, sizeof line, f) || strncmp(line, "libautograph-profile 1", 22)) {
        ag_log(AG_LOG_WARN, "%s is not a libautograph profile (version 1); ignored", path);
        fclose(f);
        return;
    }
    ag_pseq *q = NULL, **tail = &g_seqs;
    uint32_t k = 0;
    /* a stream holds at most MAX_NODES launches (its held array): a longer sequence could
     * never be held, and holding it would write past that array */
    unsigned max_len = (unsigned)ag_opt(AG_OPT_MAX_NODES);
    int too_long = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned len, trusted;
        unsigned long long mg, me;
        if (sscanf(line, "seq %u %u %llu %llu", &len, &trusted, &mg, &me) == 4) {
            if (q) { /* the previous one was cut short */
                free_seq(q);
                bad++;
            }
            q = NULL;
            if (len > max_len && len <= 4096) {
                too_long++;
                continue; /* its node lines are skipped: no sequence is open */
            }
            if (len < 2 || len > 4096 || n >= MAX_SEQS || !(q = calloc(1, sizeof *q)) ||
                !(q->nodes = calloc(len, sizeof *q->nodes)) || !(q->names = calloc(len, sizeof *q->names))) {
                if (q)
                    free_seq(q);
                q = NULL;
                bad++;
                continue;
            }
            q->len = len;
            q->trusted = trusted == 1;
            q->med_graph = mg;
            q->med_eager = me;
            k = 0;
            continue;
        }
        if (!q)
            continue;
        ag_pshape *p = &q->nodes[k];
        unsigned long long ident, ah;
        char name[512] = "?";
        int got = sscanf(line, "n %llx %u %u %u %u %u %u %u %u %u %u %llx %511s", &ident, &p->grid[0],
                         &p->grid[1], &p->grid[2], &p->block[0], &p->block[1], &p->block[2],
                         &p->smem, &p->psize, &p->kind, &p->nattrs, &ah, name);
        if (got < 12) {
            free_seq(q);
            q = NULL;
            bad++;
            continue;
        }
        p->ident = ident;
        p->attr_hash = ah;
        q->names[k] = strdup(name);
        if (++k == q->len) {
            *tail = q;
            tail = &q->next;
            n++;
            q = NULL;
        }
    }
    if (q) {
        free_seq(q);
        bad++;
    }
    fclose(f);
    int live = 0;
    for (ag_pseq *x = g_seqs; x; x = x->next) {
        uint64_t k = first_key(&x->nodes[0]);
        g_first_bits[(k >> 6) & 3] |= 1ull << (k & 63);
        live += x->trusted;
    }
    atomic_store(&ag_hot.profile_live, live);
    ag_stat_add(AG_ST_PROFILE_LOADED, (uint64_t)n);
    if (bad)
        ag_log(AG_LOG_WARN, "profile %s: %d malformed sequences ignored", path, bad);
    if (too_long)
        ag_log(AG_LOG_DEBUG, "profile %s: %d sequences longer than AUTOGRAPH_MAX_NODES=%u dropped",
               path, too_long, max_len);
    ag_log(AG_LOG_INFO, "profile %s: %d sequences loaded", path, n);
}

/* ---- saving ------------------------------------------------------------------------------ */

typedef struct {
    FILE *f;
    uint64_t *seen;
    size_t nseen, cap;
    int n;
} saver;

static int seen_before(saver *s, uint64_t key)
{
    for (size_t i = 0; i < s->nseen; i++)
        if (s->seen[i] == key)
            return 1;
    if (s->nseen == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        uint64_t *p = realloc(s->seen, cap * sizeof *p);
        if (!p)
            return 0;
        s->seen = p;
        s->cap = cap;
    }
    s->seen[s->nseen++] = key;
    return 0;
}

static void write_node(FILE *f, const ag_pshape *p, const char *name)
{
    fprintf(f, "n %016llx %u %u %u %u %u %u %u %u %u %u %016llx %s\n",
            (unsigned long long)p->ident, p->grid[0], p->grid[1], p->grid[2], p->block[0],
            p->block[1], p->block[2], p->smem, p->psize, p->kind, p->nattrs,
            (unsigned long long)p->attr_hash, name && *name ? name : "?");
}

/* Whether a template is worth keeping: graphs won for it. */
static int worth_keeping(const ag_tmpl *T)
{
    return !T->prof && (T->replays || T->bp->state == AG_BEN_ON);
}

/* A template as a profile sequence (NULL when out of memory). */
static ag_pseq *from_template(const ag_tmpl *T)
{
    ag_pseq *q = calloc(1, sizeof *q);
    if (!q || !(q->nodes = calloc(T->len, sizeof *q->nodes)) || !(q->names = calloc(T->len, sizeof *q->names))) {
        if (q)
            free_seq(q);
        return NULL;
    }
    q->len = T->len;
    q->trusted = T->bp->state == AG_BEN_ON;
    q->med_graph = T->bp->med_graph;
    q->med_eager = T->bp->med_eager;
    for (uint32_t i = 0; i < T->len; i++) {
        ag_pshape_of(&T->nodes[i].shape, T->nodes[i].lay, &q->nodes[i]);
        q->names[i] = strdup(T->nodes[i].lay->name);
    }
    return q;
}

static void write_seq(saver *s, const ag_pseq *q)
{
    if (seen_before(s, ag_hash(q->nodes, q->len * sizeof *q->nodes)))
        return;
    fprintf(s->f, "seq %u %d %llu %llu\n", q->len, q->trusted, (unsigned long long)q->med_graph,
            (unsigned long long)q->med_eager);
    for (uint32_t i = 0; i < q->len; i++)
        write_node(s->f, &q->nodes[i], q->names[i]);
    s->n++;
}

void ag_profile_keep(ag_stream *st)
{
    if (!*ag_opt_str(AG_OPT_PROFILE))
        return;
    for (ag_tmpl *T = st->tmpls; T; T = T->next_all) {
        ag_pseq *q = worth_keeping(T) ? from_template(T) : NULL;
        if (!q)
            continue;
        pthread_mutex_lock(&g_kept_mu);
        q->next = g_kept;
        g_kept = q;
        pthread_mutex_unlock(&g_kept_mu);
    }
}

static void save_stream(ag_stream *st, void *arg)
{
    ag_lock(&st->mu);
    for (ag_tmpl *T = st->tmpls; T; T = T->next_all) {
        ag_pseq *q = worth_keeping(T) ? from_template(T) : NULL;
        if (q) {
            write_seq(arg, q);
            free_seq(q);
        }
    }
    ag_unlock(&st->mu);
}

void ag_profile_save(void)
{
    const char *path = ag_opt_str(AG_OPT_PROFILE);
    if (!*path)
        return;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    saver s = { fopen(tmp, "w"), NULL, 0, 0, 0 };
    if (!s.f) {
        ag_log(AG_LOG_WARN, "cannot write profile %s", tmp);
        return;
    }
    fprintf(s.f, "libautograph-profile 1\n");
    ag_streams_each(save_stream, &s);
    pthread_mutex_lock(&g_kept_mu);
    for (ag_pseq *q = g_kept; q; q = q->next)
        write_seq(&s, q);
    pthread_mutex_unlock(&g_kept_mu);
    /* what was loaded and not seen this run stays: a run that took another path keeps it */
    for (ag_pseq *q = g_seqs; q; q = q->next)
        if (atomic_load(&q->fails) < MAX_FAILS)
            write_seq(&s, q);
    free(s.seen);
    if (fclose(s.f) || rename(tmp, path)) {
        ag_log(AG_LOG_WARN, "cannot write profile %s", path);
        unlink(tmp);
        return;
    }
    ag_log(AG_LOG_INFO, "profile %s: %d sequences saved", path, s.n);
}
