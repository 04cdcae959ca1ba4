/* `autograph trace dump|summary|steps FILE` (see tracecmd.h; the reader: traceread.h). */
#include "tracecmd.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "traceread.h"
#include "tracesteps.h"

static const char *const type_names[] = { "?", "NAME", "FUNC", "STREAM", "LAUNCH",
                                          "OP", "COPY", "GPU", "END" };
static const char *const cls_names[] = { "?", "stream", "copy", "stream_attr", "sync", "all",
                                         "invalidate", "destroy", "free_async",
                                         "capture_begin", "capture_end", "funcattr", "init",
                                         "other" };
/* enum ag_entry (cache/engine.h) */
static const char *const entry_names[] = { "cuLaunchKernel", "cuLaunchKernel_ptsz",
                                           "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz",
                                           "cuLaunchCooperativeKernel",
                                           "cuLaunchCooperativeKernel_ptsz" };
/* enum ag_mem (cache/copy.h) */
static const char *const mem_names[] = { "-", "device", "pinned", "pageable", "managed" };

#define NAMED(table, i) ((unsigned)(i) < sizeof table / sizeof *table ? table[i] : "?")

/* Op names by id (ids are small and dense: 1, 2, ...). */
typedef struct names {
    char **v;
    uint32_t n;
} names;

static void names_set(names *t, uint32_t id, const char *s)
{
    if (id > 1000000)
        return; /* not ours: ignored */
    if (id >= t->n) {
        uint32_t n = id + 16;
        char **v = realloc(t->v, n * sizeof *v);
        if (!v)
            return;
        memset(v + t->n, 0, (n - t->n) * sizeof *v);
        t->v = v;
        t->n = n;
    }
    free(t->v[id]);
    t->v[id] = strdup(s);
}

static const char *names_get(const names *t, uint32_t id)
{
    return id < t->n && t->v[id] ? t->v[id] : "?";
}

static void names_free(names *t)
{
    for (uint32_t i = 0; i < t->n; i++)
        free(t->v[i]);
    free(t->v);
}

static void print_call(const ag_tr_hdr *h, const char *what)
{
    printf("%14.3f us  +%10.3f  tid %-3u seq %-7u %-6s stream %#" PRIx64, h->t_ns / 1e3,
           h->dur_ns / 1e3, h->tid, h->seq, what, h->stream);
}

static void dump_one(const ag_tr_hdr *h, names *nm)
{
    switch (h->type) {
    case AG_TR_NAME: {
        const ag_tr_name *n = (const ag_tr_name *)h;
        printf("NAME   id %u \"%s\"\n", n->id, ag_trr_name_str(n));
        break;
    }
    case AG_TR_FUNC: {
        const ag_tr_func *f = (const ag_tr_func *)h;
        const uint32_t *p = ag_trr_func_params(f);
        printf("FUNC   id %u handle %#" PRIx64 " %s %u bytes", f->id, f->handle,
               f->flags & AG_TRFN_KERNEL ? "CUkernel" : "CUfunction", f->param_bytes);
        if (f->flags & AG_TRFN_LAYOUT) {
            printf(" params");
            for (uint32_t i = 0; i < f->nparams; i++)
                printf("%s%u:%u", i ? "," : " ", p[i] >> 16, p[i] & 0xffff);
        } else {
            printf(" layout unknown");
        }
        printf(" tid %u name %s\n", h->tid, ag_trr_func_name(f));
        break;
    }
    case AG_TR_STREAM: {
        const ag_tr_stream *s = (const ag_tr_stream *)h;
        printf("STREAM %#" PRIx64 " tid %u%s%s%s priority %d ctx %#" PRIx64 "\n", h->stream,
               h->tid, s->flags & AG_TRST_DEFAULT ? " default" : "",
               s->flags & AG_TRST_PTSZ ? " per-thread" : "",
               s->flags & AG_TRST_NONBLOCKING ? " non-blocking" : "", s->priority, s->ctx);
        break;
    }
    case AG_TR_LAUNCH: {
        const ag_tr_launch *l = (const ag_tr_launch *)h;
        print_call(h, "LAUNCH");
        printf(" func %u grid %u,%u,%u block %u,%u,%u smem %u %s", l->func, l->grid[0],
               l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2], l->smem,
               NAMED(entry_names, l->entry));
        if (l->nattrs)
            printf(" attrs %u (%#x)%s", l->nattrs, l->attrs, l->pdl ? " pdl" : "");
        if (l->cluster[0])
            printf(" cluster %u,%u,%u", l->cluster[0], l->cluster[1], l->cluster[2]);
        printf(" params %uB hash %016" PRIx64 " result %d\n", l->param_bytes, l->param_hash,
               l->result);
        break;
    }
    case AG_TR_OP: {
        const ag_tr_op *o = (const ag_tr_op *)h;
        print_call(h, "OP");
        printf(" %s (%s)", names_get(nm, o->name), NAMED(cls_names, o->cls));
        if (o->cls == AG_TRC_FUNCATTR && o->arg) {
            int attr, dev, v;
            ag_tr_funcattr_of(o->arg2, &attr, &dev, &v);
            printf(" func %" PRIu64 " attr %d dev %d value %d", o->arg, attr, dev, v);
        } else if (o->arg || o->arg2)
            printf(" arg %#" PRIx64, o->arg);
        if (o->arg2 && o->cls != AG_TRC_FUNCATTR)
            printf(" arg2 %#" PRIx64, o->arg2);
        printf(" result %d\n", o->result);
        break;
    }
    case AG_TR_COPY: {
        const ag_tr_copy *c = (const ag_tr_copy *)h;
        print_call(h, "COPY");
        printf(" %s%s %" PRIu64 " bytes dst %#" PRIx64 " (%s)", ag_trr_copy_name(c->op),
               c->ptsz ? "_ptsz" : "", c->bytes, c->dst, NAMED(mem_names, c->dst_mem));
        if (c->op <= 2)
            printf(" value %#x", c->value);
        else
            printf(" src %#" PRIx64 " (%s)", c->src, NAMED(mem_names, c->src_mem));
        printf(" result %d\n", c->result);
        break;
    }
    case AG_TR_GPU: {
        const ag_tr_gpu *g = (const ag_tr_gpu *)h;
        uint32_t fl = h->size >= sizeof(ag_tr_gpu_ext) ? ((const ag_tr_gpu_ext *)h)->flags : 0;
        printf("GPU    seq %u took %.3f us on the GPU (stream %#" PRIx64 ", read at %.3f us)%s\n",
               g->of_seq, g->gpu_ns / 1e3, h->stream, h->t_ns / 1e3,
               fl & AG_TRG_QUEUED ? " queued" : fl & AG_TRG_IDLE ? " idle" : "");
        break;
    }
    case AG_TR_END: {
        const ag_tr_end *e = (const ag_tr_end *)h;
        printf("END    at %.3f us: %" PRIu64 " calls recorded, %" PRIu64 " dropped\n",
               h->t_ns / 1e3, e->calls, e->dropped);
        break;
    }
    default:
        printf("?      record of unknown type %u, %u bytes (skipped)\n", h->type, h->size);
    }
}

/* ---- summary ----------------------------------------------------------------------------- */

typedef struct counter {
    char key[64];
    uint64_t n;
    UT_hash_handle hh;
} counter;

static void count(counter **t, const char *key, uint64_t n)
{
    counter *c;
    HASH_FIND_STR(*t, key, c);
    if (!c) {
        if (!(c = calloc(1, sizeof *c)))
            return;
        snprintf(c->key, sizeof c->key, "%s", key);
        HASH_ADD_STR(*t, key, c);
    }
    c->n += n;
}

static int by_count(counter *a, counter *b)
{
    return a->n < b->n ? 1 : a->n > b->n ? -1 : strcmp(a->key, b->key);
}

static void print_counts(const char *title, counter **t)
{
    counter *c, *tmp;
    printf("%s\n", title);
    if (!*t)
        printf("  (none)\n");
    HASH_SORT(*t, by_count);
    HASH_ITER(hh, *t, c, tmp) {
        printf("  %-40s %" PRIu64 "\n", c->key, c->n);
        HASH_DEL(*t, c);
        free(c);
    }
}

typedef struct summary {
    counter *types, *ops, *streams;
    uint64_t end_ns, drv_ns, gpu_ns, ngpu, calls, dropped;
    int have_end;
} summary;

static void sum_one(summary *s, const ag_tr_hdr *h, const names *nm)
{
    count(&s->types, NAMED(type_names, h->type), 1);
    char key[64];
    if (h->type == AG_TR_LAUNCH || h->type == AG_TR_OP || h->type == AG_TR_COPY) {
        if (h->t_ns + h->dur_ns > s->end_ns)
            s->end_ns = h->t_ns + h->dur_ns;
        s->drv_ns += h->dur_ns;
    }
    if (h->type == AG_TR_LAUNCH) {
        const ag_tr_launch *l = (const ag_tr_launch *)h;
        if (h->stream > 2)
            snprintf(key, sizeof key, "%#" PRIx64, h->stream);
        else if (h->stream == 2 || (h->stream == 0 && (l->entry & 1)))
            snprintf(key, sizeof key, "per-thread default stream of tid %u", h->tid);
        else
            snprintf(key, sizeof key, "legacy default stream (%s)", h->stream ? "0x1" : "NULL");
        count(&s->streams, key, 1);
    } else if (h->type == AG_TR_OP) {
        count(&s->ops, names_get(nm, ((const ag_tr_op *)h)->name), 1);
    } else if (h->type == AG_TR_COPY) {
        const ag_tr_copy *c = (const ag_tr_copy *)h;
        snprintf(key, sizeof key, "[%s]", ag_trr_copy_name(c->op));
        count(&s->ops, key, 1);
    } else if (h->type == AG_TR_GPU) {
        s->gpu_ns += ((const ag_tr_gpu *)h)->gpu_ns;
        s->ngpu++;
    } else if (h->type == AG_TR_END) {
        const ag_tr_end *e = (const ag_tr_end *)h;
        s->have_end = 1;
        s->calls = e->calls;
        s->dropped = e->dropped;
        if (h->t_ns > s->end_ns)
            s->end_ns = h->t_ns;
    }
}

static void sum_print(summary *s, const ag_tr_file *f)
{
    printf("trace of pid %u on %s: %s\n", f->pid, f->host, f->cmd);
    printf("recorded time %.3f ms, of which %.3f ms in driver calls", s->end_ns / 1e6,
           s->drv_ns / 1e6);
    if (f->flags & AG_TRF_GPU)
        printf("; GPU time %.3f ms in %" PRIu64 " timed calls%s", s->gpu_ns / 1e6, s->ngpu,
               f->flags & AG_TRF_GPU_SAMPLED ? " (a sample of the launches)" : "");
    printf("\n");
    if (s->have_end)
        printf("calls %" PRIu64 ", dropped %" PRIu64 "\n", s->calls, s->dropped);
    print_counts("records per type:", &s->types);
    print_counts("ordering points and copies per function:", &s->ops);
    print_counts("launches per stream:", &s->streams);
}

static int usage(void)
{
    fprintf(stderr, "usage: autograph trace dump FILE     one line per record\n"
                    "       autograph trace summary FILE  counts per record type, function "
                    "and stream\n"
                    "       autograph trace steps FILE    repeated segments and their variants "
                    "(the engine's variant groups)\n"
                    "FILE: an AUTOGRAPH_TRACE file (FILE.gz: read through gzip -dc)\n");
    return 2;
}

int ag_trace_main(int argc, char **argv)
{
    if (argc != 3 ||
        (strcmp(argv[1], "dump") && strcmp(argv[1], "summary") && strcmp(argv[1], "steps")))
        return usage();
    int dump = !strcmp(argv[1], "dump"), steps = !strcmp(argv[1], "steps");
    char err[512];
    ag_trr *r = ag_trr_open(argv[2], err, sizeof err);
    if (!r) {
        fprintf(stderr, "autograph trace: %s\n", err);
        return 1;
    }
    const ag_tr_file *f = ag_trr_header(r);
    if (dump)
        printf("TRACE  version %u pid %u host %s t0 %" PRIu64 "%s cmd %s\n", f->version, f->pid,
               f->host, f->t0_ns,
               f->flags & AG_TRF_GPU_SAMPLED ? " gpu sampled" : f->flags & AG_TRF_GPU ? " gpu" : "",
               f->cmd);
    if (dump && (f->flags & AG_TRF_GPU_EXACT))
        printf("       (GPU durations exact: a generator's, no timing events in them)\n");
    names nm = { NULL, 0 };
    summary s;
    memset(&s, 0, sizeof s);
    const ag_tr_hdr *h;
    int rc = steps ? ag_trace_steps(r) : 1;
    while (rc == 1 && (rc = ag_trr_next(r, &h)) == 1) {
        if (h->type == AG_TR_NAME)
            names_set(&nm, ((const ag_tr_name *)h)->id, ag_trr_name_str((const ag_tr_name *)h));
        if (dump)
            dump_one(h, &nm);
        else
            sum_one(&s, h, &nm);
    }
    if (!dump && !steps)
        sum_print(&s, f);
    fflush(stdout);
    if (rc < 0)
        fprintf(stderr, "autograph trace: %s: %s\n", argv[2], ag_trr_error(r));
    if (ag_trr_close(r) && rc == 0) {
        fprintf(stderr, "autograph trace: %s: gzip failed\n", argv[2]);
        rc = -1;
    }
    names_free(&nm);
    return rc < 0 ? 1 : 0;
}
