/* The simulator's trace reader (see simtrace.h). */
#include "simtrace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NAME_ID (1u << 20)
#define CHUNK ((size_t)1 << 20) /* records are kept in blocks of this size (a record: < 64 KiB) */

static uint64_t roi_of(const sim_trace *t);

static int fail(char *err, size_t n, const char *path, const char *fmt, const char *detail)
{
    char what[512];
    snprintf(what, sizeof what, fmt, detail ? detail : "");
    snprintf(err, n, "%s: %s", path, what);
    return -1;
}

/* A record, copied out of the reader into the arena (whose blocks never move: the calls and
 * declarations point into them). */
static const ag_tr_hdr *keep(sim_trace *t, const void *rec, size_t size)
{
    void *p = ag_arena_alloc(&t->records, size, CHUNK);
    if (!p)
        return NULL;
    memcpy(p, rec, size);
    t->len += size;
    return p;
}

typedef struct seq_idx {
    uint32_t seq;
    uint32_t idx;
    uint8_t flags;       /* (GPU records: their AG_TRG_* flags) */
} seq_idx;

static int cmp_seq(const void *a, const void *b)
{
    const seq_idx *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq ? 1 : x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int grow(void **p, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 256;
    void *q = realloc(*p, nc * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = nc;
    return 0;
}

/* Reads the records through the trace reader (cli/traceread.c: every record it hands out is
 * checked), keeps them, and indexes the calls, declarations and names. */
static int parse(ag_trr *r, const char *path, sim_trace *t, char *err, size_t errlen)
{
    if (!(t->file = (const ag_tr_file *)keep(t, ag_trr_header(r), sizeof(ag_tr_file))))
        return fail(err, errlen, path, "out of memory%s", NULL);
    size_t ccap = 0, dcap = 0, gcap = 0, ng = 0;
    seq_idx *gpus = NULL; /* (of_seq, gpu_ns) pairs: matched below */
    const ag_tr_hdr *rec;
    int rc;
    while ((rc = ag_trr_next(r, &rec)) == 1) {
        const ag_tr_hdr *h = keep(t, rec, rec->size);
        if (!h)
            goto oom;
        switch (h->type) {
        case AG_TR_NAME: {
            const ag_tr_name *n = (const ag_tr_name *)h;
            if (n->id >= MAX_NAME_ID)
                goto corrupt;
            if (n->id >= t->nnames) {
                uint32_t nn = n->id + 64;
                const char **q = realloc(t->names, nn * sizeof *q);
                if (!q)
                    goto oom;
                memset(q + t->nnames, 0, (nn - t->nnames) * sizeof *q);
                t->names = q;
                t->nnames = nn;
            }
            t->names[n->id] = ag_trr_name_str(n);
            __attribute__((fallthrough)); /* kept in order with the calls, too */
        }
        case AG_TR_FUNC:
        case AG_TR_STREAM:
            if (grow((void **)&t->decls, &dcap, t->ndecls, sizeof *t->decls))
                goto oom;
            t->decls[t->ndecls].h = h;
            t->decls[t->ndecls++].at = t->ncalls;
            break;
        case AG_TR_LAUNCH:
        case AG_TR_OP:
        case AG_TR_COPY:
            if (grow((void **)&t->calls, &ccap, t->ncalls, sizeof *t->calls))
                goto oom;
            t->calls[t->ncalls].h = h;
            t->calls[t->ncalls].gpu_ns = 0;
            t->calls[t->ncalls].gpu_flags = 0;
            t->calls[t->ncalls++].has_gpu = 0;
            break;
        case AG_TR_GPU: {
            const ag_tr_gpu *g = (const ag_tr_gpu *)h;
            if (grow((void **)&gpus, &gcap, ng, sizeof *gpus))
                goto oom;
            gpus[ng].seq = g->of_seq;
            gpus[ng].flags = h->size >= sizeof(ag_tr_gpu_ext)
                                 ? (uint8_t)(((const ag_tr_gpu_ext *)h)->flags &
                                             (AG_TRG_QUEUED | AG_TRG_IDLE))
                                 : 0;
            gpus[ng++].idx = g->gpu_ns;
            break;
        }
        case AG_TR_END:
            t->ended = 1;
            t->dropped = ((const ag_tr_end *)h)->dropped;
            break;
        default:
            break; /* a later type: skipped */
        }
    }
    if (rc < 0) {
        free(gpus);
        return fail(err, errlen, path, "%s", ag_trr_error(r));
    }
    if (!t->ncalls) {
        free(gpus);
        return fail(err, errlen, path, "the trace holds no calls%s", NULL);
    }
    /* GPU durations to their calls, by seq (a sorted index of the calls' seqs) */
    if (ng) {
        seq_idx *by = malloc(t->ncalls * sizeof *by);
        if (!by)
            goto oom;
        for (size_t i = 0; i < t->ncalls; i++) {
            by[i].seq = t->calls[i].h->seq;
            by[i].idx = (uint32_t)i;
        }
        qsort(by, t->ncalls, sizeof *by, cmp_seq);
        for (size_t k = 0; k < ng; k++) {
            seq_idx key = { gpus[k].seq, 0, 0 };
            size_t lo = 0, hi = t->ncalls;
            while (lo < hi) { /* first entry with seq >= key */
                size_t mid = (lo + hi) / 2;
                if (by[mid].seq < key.seq)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo < t->ncalls && by[lo].seq == key.seq) {
                sim_call *c = &t->calls[by[lo].idx];
                c->gpu_ns = gpus[k].idx;
                c->gpu_flags = gpus[k].flags;
                c->has_gpu = 1;
                t->ngpu++;
            }
        }
        free(by);
    }
    free(gpus);
    uint64_t t0 = UINT64_MAX, t1 = 0;
    for (size_t i = 0; i < t->ncalls; i++) {
        const ag_tr_hdr *h = t->calls[i].h;
        if (h->t_ns < t0)
            t0 = h->t_ns;
        if (h->t_ns + h->dur_ns > t1)
            t1 = h->t_ns + h->dur_ns;
    }
    t->span_ns = t1 - t0;
    t->roi_ns = roi_of(t);
    if (!(t->exec = malloc(t->ncalls * sizeof *t->exec)))
        goto oom;
    memset(t->exec, 0xff, t->ncalls * sizeof *t->exec);
    return 0;
corrupt: {
    char num[32];
    free(gpus);
    snprintf(num, sizeof num, "%llu", (unsigned long long)ag_trr_offset(r));
    return fail(err, errlen, path, "corrupt NAME record at offset %s (name id too large)", num);
}
oom:
    free(gpus);
    return fail(err, errlen, path, "out of memory%s", NULL);
}

int sim_trace_read(const char *path, sim_trace *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    ag_trr *r = ag_trr_open(path, err, errlen);
    if (!r)
        return -1;
    int bad = parse(r, path, t, err, errlen);
    if (ag_trr_close(r) && !bad)
        bad = fail(err, errlen, path, "gzip -dc failed: not a gzip file, or cut short%s", NULL);
    if (bad) {
        sim_trace_free(t);
        return -1;
    }
    return 0;
}

void sim_trace_free(sim_trace *t)
{
    ag_arena_free(&t->records);
    free(t->calls);
    free(t->decls);
    free(t->names);
    free(t->exec);
    memset(t, 0, sizeof *t);
}

const char *sim_trace_op_name(const sim_trace *t, const ag_tr_op *op)
{
    return op->name < t->nnames ? t->names[op->name] : NULL;
}

/* The recorded region, as the simulator takes it (cli/simulate.c: the first cuProfilerStart's
 * start to the last cuProfilerStop's end), or 0. */
static uint64_t roi_of(const sim_trace *t)
{
    uint64_t start = 0, end = 0;
    int started = 0;
    for (size_t i = 0; i < t->ncalls; i++) {
        const ag_tr_hdr *h = t->calls[i].h;
        const char *n = h->type == AG_TR_OP ? sim_trace_op_name(t, (const ag_tr_op *)h) : NULL;
        if (!n)
            continue;
        if (!started && !strncmp(n, "cuProfilerStart", 15)) {
            start = h->t_ns;
            started = 1;
        } else if (started && !strncmp(n, "cuProfilerStop", 14)) {
            end = h->t_ns + h->dur_ns;
        }
    }
    return end > start ? end - start : 0;
}
