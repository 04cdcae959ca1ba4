/* Bringing a piece's exec up to date with the held launches (see update.h). */
#include "cache/update.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "policy/log.h"
#include "policy/options.h"
#include "policy/stats.h"
#include "cache/copy.h"
#include "cache/debug.h"
#include "cache/driver.h"
#include "cache/fault.h"
#include "cache/fill.h"
#include "cache/gcache.h"
#include "cache/selftime.h"
#include "cache/params.h"

/* Whether held launch j has another function, other argument values or launch dimensions
 * than an exec (or the graph) of node n holds (dims, fn, vals). Byte by byte: a comparison
 * stops at the first difference, and costs less than a fingerprint of the block where the
 * two are equal (a 1720-byte block: ~260 instructions against ~1,750, bench/hotpath.py's
 * "updated" row). */
static inline int held_differs(ag_stream *st, const ag_node *n, uint32_t j, const ag_dims *dims,
                               const void *fn, const uint8_t *vals)
{
    if (!ag_dims_eq(&st->held[j].dims, dims) || st->held[j].lay->handle != fn)
        return 1;
    return memcmp(ag_held_blob(st, j), vals, n->lay->size) != 0;
}

/* Bit j of a piece's bitmap of differing nodes (ag_update). */
static inline int bit_of(const uint64_t *bits, uint32_t j)
{
    return bits[j / 64] >> (j % 64) & 1;
}

/* ...than the piece's exec holds in node n. */
static inline int exec_differs(ag_stream *st, const ag_node *n, uint32_t j)
{
    return held_differs(st, n, j, &n->exec_dims, n->exec_fn, n->exec_vals);
}

/* ---- the debug log: which values a replay changes ---------------------------------------- */

#define TELL_MAX 48 /* nodes described per process */

/* Which of node n's values held launch j changes, once per node and TELL_MAX nodes a process:
 * what makes a framework's graphs update at every replay (a pointer to a new allocation, a
 * counter, or bytes the caller never set: PyTorch's batch-norm and clamp functors differ in
 * 2-4 bytes at every call on the H100). Debug level only. */
static void tell_differs(ag_stream *st, const ag_tmpl *T, ag_node *n, uint32_t i, uint32_t j)
{
    static atomic_uint told;
    if (n->told || n->shape.kind == AG_KIND_COPY)
        return;
    n->told = 1;
    unsigned k = atomic_fetch_add(&told, 1);
    if (k >= TELL_MAX) {
        if (k == TELL_MAX)
            ag_log(AG_LOG_DEBUG, "(the new values of further nodes are not described)");
        return;
    }
    const ag_layout *lay = n->lay;
    const uint8_t *h = ag_held_blob(st, j), *x = n->exec_vals;
    char what[400];
    size_t w = 0;
    if (!ag_dims_eq(&st->held[j].dims, &n->exec_dims))
        ag_log_put(what, sizeof what, &w, " launch dimensions;");
    if (st->held[j].lay->handle != n->exec_fn)
        ag_log_put(what, sizeof what, &w, " function;");
    for (uint32_t q = 0, shown = 0; q < lay->nparams; q++) {
        uint32_t o = lay->off[q], z = lay->sz[q];
        if (!memcmp(h + o, x + o, z))
            continue;
        if (shown++ == 4) {
            ag_log_put(what, sizeof what, &w, " ...");
            break;
        }
        ag_log_put(what, sizeof what, &w, " parameter %u (%u byte%s)", q, z, z == 1 ? "" : "s");
        uint32_t a0 = 0, a1 = z - 1; /* the bytes that differ, first to last */
        while (h[o + a0] == x[o + a0])
            a0++;
        while (h[o + a1] == x[o + a1])
            a1--;
        if (z > 8)
            ag_log_put(what, sizeof what, &w, " bytes %u-%u", a0, a1);
        if (a1 - a0 < 8) { /* the value there, as a little-endian integer */
            uint64_t a = 0, b = 0;
            memcpy(&a, x + o + a0, a1 - a0 + 1);
            memcpy(&b, h + o + a0, a1 - a0 + 1);
            ag_log_put(what, sizeof what, &w, " 0x%llx -> 0x%llx", (unsigned long long)a,
                       (unsigned long long)b);
        }
        ag_log_put(what, sizeof what, &w, ";");
    }
    if (!lay->nparams && memcmp(h, x, lay->size))
        ag_log_put(what, sizeof what, &w, " its %u bytes of parameters;", lay->size);
    ag_log(AG_LOG_DEBUG, "sequence %016llx: launch %u of %u (%.60s) replays with new values:%s",
           (unsigned long long)T->key, i, T->len, lay->name, what);
}

/* Which update path to take when `nexec` of a piece's `len` nodes changed. Both are measured on
 * this piece as what they really cost -- the update and the graph launch after it (some of an
 * update's work is deferred to the launch) -- and the cheaper one wins; the other is sampled
 * again now and then. A handful of changed nodes always goes node by node. */
static int choose_path(const ag_tmpl *T, const ag_piece *P, uint32_t len, uint32_t nexec)
{
    if (nexec * 8 <= len)
        return UPD_NODE;
    if (P->upd_n[UPD_NODE] < 2)
        return UPD_NODE;
    if (P->upd_n[UPD_WHOLE] < 2)
        return UPD_WHOLE;
    int best = P->upd_ns[UPD_WHOLE] < P->upd_ns[UPD_NODE] ? UPD_WHOLE : UPD_NODE;
    return (T->replays & 127) == 127 ? !best : best;
}

void ag_update_record(ag_piece *P, int path, uint64_t ns)
{
    uint64_t old = P->upd_ns[path];
    P->upd_ns[path] = P->upd_n[path] ? old - old / 4 + ns / 4 : ns;
    P->upd_n[path]++;
}

/* Whether held launch j goes back, in node n, to the value the exec held before its last
 * change (the other buffer of a ping-pong pair). */
static int goes_back(ag_stream *st, const ag_node *n, uint32_t j)
{
    return n->prev_vhash && ag_dims_eq(&st->held[j].dims, &n->exec_dims) &&
           st->held[j].lay->handle == n->exec_fn &&
           ag_hash(ag_held_blob(st, j), n->lay->size) == n->prev_vhash;
}

/* The exec took node n's new values (those of `vals`): what it held before is remembered. */
static void exec_took(ag_node *n, const uint8_t *vals, const ag_dims *dims, void *fn)
{
    if (vals != n->exec_vals)
        memcpy(n->exec_vals, vals, n->lay->size);
    uint64_t h = ag_hash(n->exec_vals, n->lay->size);
    if (h != n->exec_vhash)
        n->prev_vhash = n->exec_vhash;
    n->exec_vhash = h;
    n->exec_dims = *dims;
    n->exec_fn = fn;
}

/* ...than the piece's second exec holds in node n. */
static inline int alt_differs(ag_stream *st, const ag_node *n, uint32_t j)
{
    return held_differs(st, n, j, &n->alt_dims, n->alt_fn, n->alt_vals);
}

#define SWAP(type, a, b)                                                                        \
    do {                                                                                       \
        type t_ = (a);                                                                         \
        (a) = (b);                                                                             \
        (b) = t_;                                                                              \
    } while (0)

/* The piece's two execs trade places, each node's values with them. */
static void swap_alt(ag_tmpl *T, uint32_t p)
{
    ag_piece *P = &T->pieces[p];
    for (uint32_t i = ag_piece_start(T, p), e = ag_piece_gend(T, p); i < e; i++) {
        ag_node *n = &T->nodes[i];
        SWAP(uint8_t *, n->exec_vals, n->alt_vals);
        SWAP(uint64_t, n->exec_vhash, n->alt_vhash);
        SWAP(ag_dims, n->exec_dims, n->alt_dims);
        SWAP(void *, n->exec_fn, n->alt_fn);
        n->prev_vhash = n->alt_vhash;
    }
    SWAP(CUgraphExec, P->exec, P->alt);
}

static void drop_alt(ag_tmpl *T, uint32_t p)
{
    ag_piece *P = &T->pieces[p];
    size_t est = ag_piece_mem(T, p);
    ag_drv.cuGraphExecDestroy(P->alt);
    P->alt = NULL;
    P->flips = P->alt_misses = 0;
    T->mem_est -= est;
    ag_gcache_release(T, est);
}

/* Sets the piece's graph nodes to the held values (those that differ): 0, or -2 on failure. */
static int graph_to_held(ag_stream *st, ag_tmpl *T, uint32_t p)
{
    ag_src b = ag_src_of_stream(st);
    CUDA_KERNEL_NODE_PARAMS kp;
    uint32_t s = ag_piece_start(T, p), e = ag_piece_gend(T, p);
    for (uint32_t i = s; i < e; i++) {
        ag_node *n = &T->nodes[i];
        if (!held_differs(st, n, i - s, &n->graph_dims, n->graph_fn, n->graph_vals))
            continue;
        if (n->shape.kind == AG_KIND_COPY
                ? ag_fault(AG_F_SET_PARAMS) || ag_copy_set_node(NULL, n, ag_held_blob(st, i - s))
                : ag_fill(&b, n, &st->held[i - s], &kp) || ag_fault(AG_F_SET_PARAMS) ||
                      ag_drv.cuGraphKernelNodeSetParams_v2(n->node, &kp))
            return -2;
        memcpy(n->graph_vals, ag_held_blob(st, i - s), n->lay->size);
        n->graph_dims = st->held[i - s].dims;
        n->graph_fn = st->held[i - s].lay->handle;
    }
    return 0;
}

/* Ping-pong: the held values went back to those before the exec's last change, twice in a row.
 * A second exec of the graph, instantiated with the held values, becomes the exec; the old one
 * keeps its values as the second, and from now on the two take turns with no update at all (as
 * a hand-written loop keeps one exec per buffer; a Jacobi-style solver's kernel swaps its input
 * and output each iteration). Returns 0 when made, -1 when not (no room, the driver refused:
 * the update goes on as before), -2 when the graph could not be set (the update failed). */
static int make_alt(ag_stream *st, ag_tmpl *T, uint32_t p)
{
    ag_piece *P = &T->pieces[p];
    uint32_t s = ag_piece_start(T, p), e = ag_piece_gend(T, p);
    for (uint32_t i = s; i < e; i++)
        if (!T->nodes[i].alt_vals &&
            !(T->nodes[i].alt_vals = malloc(T->nodes[i].lay->size ? T->nodes[i].lay->size : 1)))
            return -1;
    size_t est = ag_piece_mem(T, p);
    if (ag_gcache_reserve(st, T, est))
        return -1;
    if (graph_to_held(st, T, p)) {
        ag_gcache_release(T, est);
        return -2;
    }
    CUgraphExec x = NULL;
    if (ag_fault(AG_F_INSTANTIATE) || ag_drv.cuGraphInstantiateWithFlags(&x, P->graph, 0)) {
        ag_gcache_release(T, est);
        P->flips = 0;
        return -1;
    }
    for (uint32_t i = s; i < e; i++) { /* the old exec's values become the second's */
        ag_node *n = &T->nodes[i];
        SWAP(uint8_t *, n->exec_vals, n->alt_vals);
        n->alt_vhash = n->exec_vhash;
        n->alt_dims = n->exec_dims;
        n->alt_fn = n->exec_fn;
        exec_took(n, n->graph_vals, &n->graph_dims, n->graph_fn);
        n->prev_vhash = n->alt_vhash;
    }
    P->alt = P->exec;
    P->exec = x;
    P->alt_misses = 0;
    T->mem_est += est;
    ag_stat_inc(AG_ST_GRAPH_VARIANTS);
    ag_log(AG_LOG_DEBUG, "sequence %016llx: piece %u's arguments alternate: a second exec",
           (unsigned long long)T->key, p + 1);
    return 0;
}

int ag_update(ag_stream *st, ag_tmpl *T, uint32_t p)
{
    ag_src b = ag_src_of_stream(st);
    ag_piece *P = &T->pieces[p];
    uint32_t s = ag_piece_start(T, p), e = ag_piece_gend(T, p), nexec = 0;
    /* the nodes whose values differ, compared once (a piece has at most MAX_NODES) */
    uint64_t diff[(AG_MAX_NODES_LIMIT + 63) / 64];
    AG_ASSERT(e - s <= AG_MAX_NODES_LIMIT);
    memset(diff, 0, (e - s + 63) / 64 * sizeof *diff);
    int back = !P->alt; /* every changed node goes back (a value hashed until one does not) */
    int tell = AG_UNLIKELY(ag_log_level() >= AG_LOG_DEBUG);
    for (uint32_t i = s; i < e; i++)
        if (exec_differs(st, &T->nodes[i], i - s)) {
            diff[(i - s) / 64] |= 1ull << ((i - s) % 64);
            nexec++;
            back = back && goes_back(st, &T->nodes[i], i - s);
            if (tell)
                tell_differs(st, T, &T->nodes[i], i, i - s);
        }
    if (!nexec) {
        ag_stat_inc(AG_ST_UPD_NONE);
        return -1;
    }
    if (P->alt) {
        uint32_t i = s;
        while (i < e && !alt_differs(st, &T->nodes[i], i - s))
            i++;
        if (i == e) {
            swap_alt(T, p);
            P->alt_misses = 0;
            ag_stat_inc(AG_ST_UPD_VARIANT);
            return -1;
        }
        if (++P->alt_misses >= 8) /* no longer two values taking turns */
            drop_alt(T, p);
    } else {
        P->flips = back ? (uint8_t)(P->flips < 2 ? P->flips + 1 : 2) : 0;
        if (P->flips >= 2) {
            int r = make_alt(st, T, p);
            if (r == 0) {
                ag_stat_inc(AG_ST_UPD_VARIANT);
                return -1;
            }
            if (r == -2)
                return -2;
        }
    }
    CUDA_KERNEL_NODE_PARAMS kp;
    if (choose_path(T, P, e - s, nexec) == UPD_NODE) {
        for (uint32_t i = s; i < e; i++) {
            ag_node *n = &T->nodes[i];
            if (!bit_of(diff, i - s))
                continue;
            if (n->shape.kind == AG_KIND_COPY
                    ? ag_fault(AG_F_SET_PARAMS) || ag_copy_set_node(P->exec, n, ag_held_blob(st, i - s))
                    : ag_fill(&b, n, &st->held[i - s], &kp) || ag_fault(AG_F_SET_PARAMS) ||
                          AG_SELF_CALL(AG_SC_SET_PARAMS,
                                       ag_drv.cuGraphExecKernelNodeSetParams_v2(P->exec, n->node, &kp)))
                return -2;
            exec_took(n, ag_held_blob(st, i - s), &st->held[i - s].dims, st->held[i - s].lay->handle);
        }
        ag_stat_inc(AG_ST_UPD_NODE);
        ag_stat_add(AG_ST_UPD_NODE_NODES, nexec);
        return UPD_NODE;
    }
    if (graph_to_held(st, T, p))
        return -2;
    CUgraphExecUpdateResultInfo info;
    if (ag_fault(AG_F_UPDATE) ||
        AG_SELF_CALL(AG_SC_EXEC_UPDATE, ag_drv.cuGraphExecUpdate_v2(P->exec, P->graph, &info)))
        return -2;
    for (uint32_t i = s; i < e; i++) { /* (the others held these values already) */
        ag_node *n = &T->nodes[i];
        if (bit_of(diff, i - s))
            exec_took(n, n->graph_vals, &n->graph_dims, n->graph_fn);
    }
    ag_stat_inc(AG_ST_UPD_WHOLE);
    return UPD_WHOLE;
}
