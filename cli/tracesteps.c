/* `autograph trace steps FILE`: a trace's repeated steps and their variants (tracesteps.h). */
#include "tracesteps.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "traceread.h"

/* What the engine would take for a variant group (cache/tmpl.c, join_variants): segments of at
 * least this many items that start alike and are about as long (within an eighth). */
#define MIN_LEN 16
#define MAX_SHOWN_DIFFS 6
#define MEM_DEVICE 1 /* enum ag_mem (cache/copy.h): AG_MEM_DEVICE */

/* An item of a segment: a launch's function id, or a device-side copy or memset (kind and
 * size: what a graph node of it would keep). */
typedef struct item {
    uint32_t func;  /* 0 for a copy */
    uint32_t op;    /* the copy's enum ag_copy_entry */
    uint64_t bytes;
} item;

/* A distinct segment: its items and how often it came. */
typedef struct seg {
    uint64_t key;
    uint64_t stream;
    uint32_t len, count;
    item *items;
    UT_hash_handle hh;
} seg;

/* The segment under way on one stream. */
typedef struct open_seg {
    uint64_t stream;
    item *items;
    uint32_t len, cap;
    UT_hash_handle hh;
} open_seg;

/* A function class: its name-and-layout fingerprint and its first function's id. */
typedef struct fclass {
    uint64_t key;
    uint32_t id;
    UT_hash_handle hh;
} fclass;

typedef struct steps {
    open_seg *open;
    seg *segs;
    fclass *classes;
    char **fname;   /* function names by id */
    uint32_t *fcls; /* each function's class: the first id of its name and parameter layout
                     * (as the engine's function classes, cache/params.h: cuDNN's kernels
                     * compiled once per sequence length are one kernel to it) */
    uint32_t nfname;
    uint64_t nsegs; /* closed segments of MIN_LEN or more */
} steps;

static void set_func(steps *s, const ag_tr_func *f)
{
    uint32_t id = f->id;
    if (id > 1000000)
        return;
    if (id >= s->nfname) {
        uint32_t n = id + 64;
        char **v = realloc(s->fname, n * sizeof *v);
        uint32_t *c = v ? realloc(s->fcls, n * sizeof *c) : NULL;
        if (v)
            s->fname = v;
        if (!c)
            return;
        s->fcls = c;
        memset(v + s->nfname, 0, (n - s->nfname) * sizeof *v);
        memset(c + s->nfname, 0, (n - s->nfname) * sizeof *c);
        s->nfname = n;
    }
    const char *name = ag_trr_func_name(f);
    free(s->fname[id]);
    s->fname[id] = strdup(name);
    uint64_t key = XXH3_64bits(name, strlen(name));
    if (f->flags & AG_TRFN_LAYOUT)
        key ^= XXH3_64bits(ag_trr_func_params(f), f->nparams * sizeof(uint32_t)) * 31;
    fclass *c = NULL;
    if (*name)
        HASH_FIND(hh, s->classes, &key, sizeof key, c);
    if (!c && *name && (c = calloc(1, sizeof *c))) {
        c->key = key;
        c->id = id;
        HASH_ADD(hh, s->classes, key, sizeof c->key, c);
    }
    s->fcls[id] = c ? c->id : id;
}

/* The class a launch of function id runs (itself when unknown). */
static uint32_t class_of(const steps *s, uint32_t id)
{
    return id < s->nfname && s->fcls[id] ? s->fcls[id] : id;
}

/* The full name of an item (a function's, or the copy's kind and size). */
static void item_name(const steps *s, const item *it, char *buf, size_t n)
{
    if (!it->func)
        snprintf(buf, n, "[%s %" PRIu64 " bytes]", ag_trr_copy_name(it->op), it->bytes);
    else
        snprintf(buf, n, "%s",
                 it->func < s->nfname && s->fname[it->func] ? s->fname[it->func] : "?");
}

/* Prints "a -> b" for two item names, each from a little before where they first differ (the
 * template argument that changed, not the namespace they share), 60 characters at most. */
static void print_change(const char *a, const char *b)
{
    size_t d = 0;
    while (a[d] && a[d] == b[d])
        d++;
    size_t from = d > 24 ? d - 24 : 0;
    printf("%s%.60s -> %s%.60s", from ? "..." : "", a + from, from ? "..." : "", b + from);
}

static void close_seg(steps *s, open_seg *o)
{
    if (o->len >= MIN_LEN) {
        uint64_t key = XXH3_64bits(o->items, o->len * sizeof *o->items) ^ o->stream;
        seg *g;
        HASH_FIND(hh, s->segs, &key, sizeof key, g);
        if (!g && (g = calloc(1, sizeof *g)) &&
            (g->items = malloc(o->len * sizeof *o->items))) {
            memcpy(g->items, o->items, o->len * sizeof *o->items);
            g->key = key;
            g->stream = o->stream;
            g->len = o->len;
            HASH_ADD(hh, s->segs, key, sizeof g->key, g);
        } else if (g && !g->items) {
            free(g);
            g = NULL;
        }
        if (g)
            g->count++;
        s->nsegs++;
    }
    o->len = 0;
}

static open_seg *open_of(steps *s, uint64_t stream)
{
    open_seg *o;
    HASH_FIND(hh, s->open, &stream, sizeof stream, o);
    if (!o && (o = calloc(1, sizeof *o))) {
        o->stream = stream;
        HASH_ADD(hh, s->open, stream, sizeof o->stream, o);
    }
    return o;
}

static void push(steps *s, uint64_t stream, item it)
{
    open_seg *o = open_of(s, stream);
    if (!o)
        return;
    if (o->len == o->cap) {
        uint32_t cap = o->cap ? 2 * o->cap : 256;
        item *v = realloc(o->items, cap * sizeof *v);
        if (!v)
            return;
        o->items = v;
        o->cap = cap;
    }
    memset(&o->items[o->len], 0, sizeof it);
    o->items[o->len++] = it;
}

static void one(steps *s, const ag_tr_hdr *h)
{
    open_seg *o, *tmp;
    switch (h->type) {
    case AG_TR_FUNC:
        set_func(s, (const ag_tr_func *)h);
        break;
    case AG_TR_LAUNCH: {
        item it = { class_of(s, ((const ag_tr_launch *)h)->func), 0, 0 };
        push(s, h->stream, it);
        break;
    }
    case AG_TR_COPY: {
        const ag_tr_copy *c = (const ag_tr_copy *)h;
        /* device-side copies and memsets go into graphs; anything that touches the host is an
         * ordering point of its stream (a read-back) */
        if (c->dst_mem == MEM_DEVICE && (c->op <= 2 || c->src_mem == MEM_DEVICE)) {
            item it = { 0, c->op, c->bytes };
            push(s, h->stream, it);
        } else if ((o = open_of(s, h->stream))) {
            close_seg(s, o);
        }
        break;
    }
    case AG_TR_OP: {
        const ag_tr_op *op = (const ag_tr_op *)h;
        if (op->cls == AG_TRC_FUNCATTR || op->cls == AG_TRC_INIT)
            break;
        if (op->cls == AG_TRC_STREAM || op->cls == AG_TRC_STREAM_ATTR ||
            op->cls == AG_TRC_DESTROY || op->cls == AG_TRC_FREE_ASYNC) {
            if ((o = open_of(s, h->stream)))
                close_seg(s, o);
        } else {
            HASH_ITER(hh, s->open, o, tmp) close_seg(s, o);
        }
        break;
    }
    default:
        break;
    }
}

static int by_count(seg *a, seg *b)
{
    return a->count != b->count ? (a->count < b->count ? 1 : -1)
                                : (a->key < b->key ? -1 : a->key > b->key);
}

/* A variant group: a reference segment and the others like it (first item, stream, length
 * within an eighth of the reference's). */
static int alike(const seg *ref, const seg *g)
{
    uint32_t d = ref->len > g->len ? ref->len - g->len : g->len - ref->len;
    return g->stream == ref->stream && 8 * d <= ref->len &&
           !memcmp(&g->items[0], &ref->items[0], sizeof(item));
}

static int same_item(const item *a, const item *b)
{
    return a->func == b->func && a->op == b->op && a->bytes == b->bytes;
}

static void print_groups(steps *s)
{
    HASH_SORT(s->segs, by_count);
    uint32_t nseg = HASH_COUNT(s->segs), ngroups = 0;
    seg **v = calloc(nseg ? nseg : 1, sizeof *v);
    uint8_t *done = calloc(nseg ? nseg : 1, 1);
    if (!v || !done) {
        free(v);
        free(done);
        return;
    }
    uint32_t k = 0;
    for (seg *g = s->segs; g; g = g->hh.next)
        v[k++] = g;
    printf("%" PRIu64 " segments of %d or more launches and device copies between ordering "
           "points, %u distinct\n", s->nsegs, MIN_LEN, nseg);
    for (uint32_t i = 0; i < nseg; i++) {
        if (done[i])
            continue;
        const seg *ref = v[i];
        uint32_t nvar = 0, occ = 0, lo = ref->len, hi = ref->len;
        for (uint32_t j = i; j < nseg; j++)
            if (!done[j] && alike(ref, v[j])) {
                nvar++;
                occ += v[j]->count;
                lo = v[j]->len < lo ? v[j]->len : lo;
                hi = v[j]->len > hi ? v[j]->len : hi;
            }
        char name[1024];
        item_name(s, &ref->items[0], name, sizeof name);
        printf("\ngroup %u on stream %#" PRIx64 ": %u occurrences in %u variant%s of %u-%u, "
               "first %.70s\n", ++ngroups, ref->stream, occ, nvar, nvar > 1 ? "s" : "", lo, hi,
               name);
        for (uint32_t j = i, nv = 0; j < nseg; j++) {
            if (done[j] || !alike(ref, v[j]))
                continue;
            done[j] = 1;
            const seg *g = v[j];
            printf("  variant %u: %u occurrences, %u long", ++nv, g->count, g->len);
            if (g == ref) {
                printf(" (the reference)\n");
                continue;
            }
            if (g->len != ref->len) {
                uint32_t p = 0;
                while (p < g->len && p < ref->len && same_item(&g->items[p], &ref->items[p]))
                    p++;
                printf("; the same as the reference for its first %u\n", p);
                continue;
            }
            uint32_t ndiff = 0;
            for (uint32_t p = 0; p < g->len; p++)
                if (!same_item(&g->items[p], &ref->items[p]))
                    ndiff++;
            printf("; differs at %u position%s:", ndiff, ndiff > 1 ? "s" : "");
            for (uint32_t p = 0, shown = 0; p < g->len && shown < MAX_SHOWN_DIFFS; p++) {
                if (same_item(&g->items[p], &ref->items[p]))
                    continue;
                char a[1024], b[1024];
                item_name(s, &ref->items[p], a, sizeof a);
                item_name(s, &g->items[p], b, sizeof b);
                printf("\n    %u: ", p);
                print_change(a, b);
                shown++;
            }
            printf("%s\n", ndiff > MAX_SHOWN_DIFFS ? "\n    ..." : "");
        }
    }
    free(v);
    free(done);
}

static void steps_free(steps *s)
{
    seg *g, *gt;
    HASH_ITER(hh, s->segs, g, gt) {
        HASH_DEL(s->segs, g);
        free(g->items);
        free(g);
    }
    open_seg *o, *ot;
    HASH_ITER(hh, s->open, o, ot) {
        HASH_DEL(s->open, o);
        free(o->items);
        free(o);
    }
    for (uint32_t i = 0; i < s->nfname; i++)
        free(s->fname[i]);
    free(s->fname);
    free(s->fcls);
    fclass *c, *ct;
    HASH_ITER(hh, s->classes, c, ct) {
        HASH_DEL(s->classes, c);
        free(c);
    }
}

int ag_trace_steps(ag_trr *r)
{
    steps s;
    memset(&s, 0, sizeof s);
    const ag_tr_hdr *h;
    int rc;
    while ((rc = ag_trr_next(r, &h)) == 1)
        one(&s, h);
    open_seg *o, *tmp;
    HASH_ITER(hh, s.open, o, tmp) close_seg(&s, o);
    print_groups(&s);
    steps_free(&s);
    return rc;
}
