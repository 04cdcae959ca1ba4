/* The simulator's trace reader (see simtrace.h). */
#include "simtrace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_TRACE_BYTES ((size_t)1 << 34) /* 16 GiB: anything larger is refused, not read */
#define MAX_NAME_ID (1u << 20)

static int fail(char *err, size_t n, const char *path, const char *fmt, const char *detail)
{
    char what[160];
    snprintf(what, sizeof what, fmt, detail ? detail : "");
    snprintf(err, n, "%s: %s", path, what);
    return -1;
}

/* Reads all of fd into *buf. */
static int slurp(int fd, char **buf, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    if (!b)
        return -1;
    for (;;) {
        if (n == cap) {
            if (cap >= MAX_TRACE_BYTES) {
                free(b);
                errno = EFBIG;
                return -1;
            }
            char *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                return -1;
            }
            b = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, b + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(b);
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    *buf = b;
    *len = n;
    return 0;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

/* gzip -dc, run directly (no shell: any path is safe); its stdout read whole. */
static int read_gz(const char *path, char **buf, size_t *len, char *err, size_t errlen)
{
    int p[2];
    if (pipe(p))
        return fail(err, errlen, path, "cannot run gzip: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return fail(err, errlen, path, "cannot run gzip: %s", strerror(errno));
    }
    if (pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        int devnull = open("/dev/null", 1);
        if (devnull >= 0)
            dup2(devnull, 2); /* its own message would be a second one: ours says it */
        execlp("gzip", "gzip", "-dc", "--", path, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    int r = slurp(p[0], buf, len);
    int e = errno;
    close(p[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (r)
        return fail(err, errlen, path, "cannot read: %s", strerror(e));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        free(*buf);
        *buf = NULL;
        return fail(err, errlen, path,
                    WIFEXITED(status) && WEXITSTATUS(status) == 127
                        ? "cannot run gzip to decompress it%s"
                        : "gzip -dc failed: not a gzip file, or cut short%s",
                    "");
    }
    return 0;
}

static int read_plain(const char *path, char **buf, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail(err, errlen, path, "cannot open: %s", strerror(errno));
    int r = slurp(fileno(f), buf, len);
    int e = errno;
    fclose(f);
    if (r)
        return fail(err, errlen, path, "cannot read: %s", strerror(e));
    return 0;
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

static size_t min_size(const ag_tr_hdr *h)
{
    switch (h->type) {
    case AG_TR_NAME: return sizeof(ag_tr_name);
    case AG_TR_FUNC: return sizeof(ag_tr_func);
    case AG_TR_STREAM: return sizeof(ag_tr_stream);
    case AG_TR_LAUNCH: return sizeof(ag_tr_launch);
    case AG_TR_OP: return sizeof(ag_tr_op);
    case AG_TR_COPY: return sizeof(ag_tr_copy);
    case AG_TR_GPU: return sizeof(ag_tr_gpu);
    case AG_TR_END: return sizeof(ag_tr_end);
    default: return sizeof(ag_tr_hdr);
    }
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

static int parse(const char *path, sim_trace *t, char *err, size_t errlen)
{
    char num[64];
    if (t->len < sizeof(ag_tr_file) || memcmp(t->buf, AG_TR_MAGIC, 8))
        return fail(err, errlen, path, "not an autograph trace (no AGTRACE header)%s", NULL);
    const ag_tr_file *f = (const ag_tr_file *)t->buf;
    if (f->version != AG_TR_VERSION) {
        snprintf(num, sizeof num, "%u", f->version);
        return fail(err, errlen, path, "trace format version %s is not supported (1 is)", num);
    }
    if (f->hdr_size < sizeof(ag_tr_file) || f->hdr_size % 8 || f->hdr_size > t->len)
        return fail(err, errlen, path, "corrupt file header (header size)%s", NULL);
    t->file = f;
    size_t off = f->hdr_size, ccap = 0, dcap = 0, gcap = 0, ng = 0;
    seq_idx *gpus = NULL; /* (of_seq, gpu_ns) pairs: matched below */
    while (off < t->len) {
        if (t->len - off < sizeof(ag_tr_hdr))
            goto truncated;
        const ag_tr_hdr *h = (const ag_tr_hdr *)(t->buf + off);
        if (h->size < sizeof(ag_tr_hdr) || h->size % 8) {
            snprintf(num, sizeof num, "%zu", off);
            free(gpus);
            return fail(err, errlen, path, "corrupt record at byte %s (bad size)", num);
        }
        if (h->size > t->len - off)
            goto truncated;
        if (h->size < min_size(h)) {
            snprintf(num, sizeof num, "%zu", off);
            free(gpus);
            return fail(err, errlen, path, "corrupt record at byte %s (too short for its type)",
                        num);
        }
        switch (h->type) {
        case AG_TR_NAME: {
            const ag_tr_name *n = (const ag_tr_name *)h;
            if ((uint64_t)sizeof *n + n->len + 1 > h->size || n->id >= MAX_NAME_ID ||
                ((const char *)(n + 1))[n->len] != 0)
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
            t->names[n->id] = (const char *)(n + 1);
            __attribute__((fallthrough)); /* kept in order with the calls, too */
        }
        case AG_TR_FUNC:
        case AG_TR_STREAM:
            if (h->type == AG_TR_FUNC) {
                const ag_tr_func *fn = (const ag_tr_func *)h;
                if ((uint64_t)sizeof *fn + 4ull * fn->nparams + fn->name_len + 1 > h->size ||
                    sim_func_name(fn)[fn->name_len] != 0)
                    goto corrupt;
            }
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
        off += h->size;
        if (t->ended)
            break;
    }
    if (!t->ended) {
        free(gpus);
        return fail(err, errlen, path, "truncated: the recording did not end (no END record)%s",
                    NULL);
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
    if (!(t->exec = malloc(t->ncalls * sizeof *t->exec)))
        goto oom;
    memset(t->exec, 0xff, t->ncalls * sizeof *t->exec);
    return 0;
truncated:
    free(gpus);
    snprintf(num, sizeof num, "%zu", off);
    return fail(err, errlen, path, "truncated: the last record (at byte %s) is cut short", num);
corrupt:
    free(gpus);
    snprintf(num, sizeof num, "%zu", off);
    return fail(err, errlen, path, "corrupt record at byte %s", num);
oom:
    free(gpus);
    return fail(err, errlen, path, "out of memory%s", NULL);
}

int sim_trace_read(const char *path, sim_trace *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    int r = ends_with(path, ".gz") ? read_gz(path, &t->buf, &t->len, err, errlen)
                                   : read_plain(path, &t->buf, &t->len, err, errlen);
    if (r)
        return -1;
    if (parse(path, t, err, errlen)) {
        sim_trace_free(t);
        return -1;
    }
    return 0;
}

void sim_trace_free(sim_trace *t)
{
    free(t->buf);
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
