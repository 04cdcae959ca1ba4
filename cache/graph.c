/* Template graphs: build, update, replay and eviction (see graph.h). */
#include "cache/graph.h"

#include <stdlib.h>
#include <string.h>

#include "policy/log.h"
#include "policy/options.h"
#include "policy/stats.h"
#include "cache/clock.h"
#include "cache/copy.h"
#include "cache/driver.h"
#include "cache/internal.h"
#include "cache/nvtx.h"

atomic_long ag_graphs_live, ag_graph_mem_live;



/* Whether this process has built a graph yet (relaxed: a hint for the payback estimate). */
static int g_built_once;

int ag_graph_built_once(void)
{
    return __atomic_load_n(&g_built_once, __ATOMIC_RELAXED);
}

/* Where a build or an update reads its launches from: the stream's held list and arena (on
 * the launching thread, the stream's lock held), or a build request's copy of them (the
 * worker). ptrs: scratch for the argument pointers, ptrs_cap of them (grown here only for a
 * stream: a request brings enough). */
typedef struct build_src {
    ag_stream *st;                   /* NULL for a request */
    const ag_rec *recs;
    const uint8_t *arena;
    void **ptrs;
    uint32_t ptrs_cap;
} build_src;

static build_src src_of_stream(ag_stream *st)
{
    build_src b = { st, st->held, st->arena, st->ptrs, st->ptrs_cap };
    return b;
}

static void **scratch_ptrs(build_src *b, uint32_t n)
{
    if (n > b->ptrs_cap) {
        if (!b->st)
            return NULL;
        void **p = realloc(b->st->ptrs, n * sizeof *p);
        if (!p)
            return NULL;
        b->st->ptrs = b->ptrs = p;
        b->st->ptrs_cap = b->ptrs_cap = n;
    }
    return b->ptrs;
}

/* Kernel node parameters of node n for launch r: its function (of n's class), arguments and
 * dimensions. */
static int fill(build_src *b, const ag_node *n, const ag_rec *r, CUDA_KERNEL_NODE_PARAMS *p)
{
    memset(p, 0, sizeof *p);
    if (n->lay->is_kernel) {
        p->kern = (CUkernel)r->lay->handle;
        p->ctx = n->shape.ctx;
    } else {
        p->func = (CUfunction)r->lay->handle;
    }
    p->gridDimX = r->dims.grid[0];
    p->gridDimY = r->dims.grid[1];
    p->gridDimZ = r->dims.grid[2];
    p->blockDimX = r->dims.block[0];
    p->blockDimY = r->dims.block[1];
    p->blockDimZ = r->dims.block[2];
    p->sharedMemBytes = r->dims.smem;
    if (n->lay->nparams) {
        void **ptrs = scratch_ptrs(b, n->lay->nparams);
        if (!ptrs)
            return -1;
        ag_params_ptrs(n->lay, (uint8_t *)b->arena + r->blob, ptrs);
        p->kernelParams = ptrs;
    }
    return 0;
}

static uint8_t *held_blob(ag_stream *st, uint32_t i)
{
    return st->arena + st->held[i].blob;
}

static int dims_eq(const ag_dims *a, const ag_dims *b)
{
    return !memcmp(a, b, sizeof *a);
}

/* Node n goes into graph g after prev (NULL: first of its piece). A launch with programmatic
 * stream serialisation depends on prev through a programmatic edge from prev's programmatic
 * port, as stream capture makes it: it may start once every block of prev has triggered (or
 * ended), and cudaGridDependencySynchronize in it waits for prev's completion. The first node
 * of a piece has no predecessor in its graph: the graph launch orders it after earlier work,
 * which is all the attribute asks. Programmatic edges join kernel nodes only: after any other
 * kind of node (prev_kernel 0) the dependency is an ordinary one, as eagerly the attribute has
 * no effect after a copy or memset. */
static CUresult add_node(CUgraph g, ag_node *n, CUgraphNode prev, int prev_kernel,
                         const CUDA_KERNEL_NODE_PARAMS *kp)
{
    int pdl = prev && prev_kernel && n->shape.pdl;
    CUresult r = ag_drv.cuGraphAddKernelNode_v2(&n->node, g, prev && !pdl ? &prev : NULL,
                                                prev && !pdl ? 1 : 0, kp);
    if (r || !pdl)
        return r;
    CUgraphEdgeData e;
    memset(&e, 0, sizeof e);
    e.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
    e.from_port = CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC;
    return ag_drv.cuGraphAddDependencies_v2(g, &prev, &n->node, &e, 1);
}

/* Every built template of every stream, most recently replayed first: a stream that needs
 * room evicts from the tail, whichever stream's graphs are there. A template is on the list
 * exactly while its nbuilt > 0; both change only under its stream's lock, and the links also
 * under g_lru.mu, taken briefly inside a stream lock (never a stream lock after it, except by
 * trylock: see lru_victim). head is also read without the lock, as a hint (lru_front). */
static struct {
    ag_lock_t mu;
    ag_tmpl *head, *tail;
} g_lru;

static void lru_set_head(ag_tmpl *T)
{
    __atomic_store_n(&g_lru.head, T, __ATOMIC_RELAXED);
}

/* Under g_lru.mu, T on the list. */
static void lru_unlink_locked(ag_tmpl *T)
{
    if (T->lru_prev)
        T->lru_prev->lru_next = T->lru_next;
    else
        lru_set_head(T->lru_next);
    if (T->lru_next)
        T->lru_next->lru_prev = T->lru_prev;
    else
        g_lru.tail = T->lru_prev;
    T->lru_prev = T->lru_next = NULL;
}

/* Moves T (on the list, or joining it: its first piece just built) to the front. A loop
 * replays the same template again and again, and then it is at the front already: a relaxed
 * look says so without the lock. The look is exact for T's membership (only T's stream, under
 * its lock, puts T at the front or takes it off the list), a hint only for the order. */
static void lru_front(ag_stream *st, ag_tmpl *T)
{
    if (__atomic_load_n(&g_lru.head, __ATOMIC_RELAXED) == T)
        return;
    ag_lock(&g_lru.mu);
    if (g_lru.head != T) {
        if (T->lru_prev) /* on the list (every member but the head has a predecessor) */
            lru_unlink_locked(T);
        else
            T->st = st; /* joining: read by lru_victim, under g_lru.mu */
        T->lru_next = g_lru.head;
        if (g_lru.head)
            g_lru.head->lru_prev = T;
        else
            g_lru.tail = T;
        lru_set_head(T);
    }
    ag_unlock(&g_lru.mu);
}

static void lru_unlink(ag_tmpl *T)
{
    ag_lock(&g_lru.mu);
    lru_unlink_locked(T);
    ag_unlock(&g_lru.mu);
}

/* The least recently replayed built template other than T whose stream's lock the caller
 * holds now: one of st's own (its lock is held already), or another stream's whose lock it
 * takes here by trylock -- never waited for, so no thread ever waits on a second stream lock;
 * a stream busy right now is passed over. *vs: the victim's stream (unlock it when not st).
 * Returns NULL when none can be had. The victim stays on the list (its stream's lock keeps
 * it there) until ag_tmpl_drop_graph takes it off. */
static ag_tmpl *lru_victim(ag_stream *st, ag_tmpl *T, ag_stream **vs)
{
    ag_lock(&g_lru.mu);
    ag_tmpl *v = g_lru.tail;
    while (v && (v == T || (v->st != st && !ag_trylock(&v->st->mu))))
        v = v->lru_prev;
    if (v)
        *vs = v->st;
    ag_unlock(&g_lru.mu);
    return v;
}

/* Destroys every piece's graph and exec of T (T stays, and may be built again). */
void ag_tmpl_drop_graph(ag_stream *st, ag_tmpl *T)
{
    AG_ASSERT(ag_lock_held(&st->mu));
    (void)st;
    for (uint32_t p = 0; p < T->npieces; p++) {
        ag_piece *P = &T->pieces[p];
        if (P->exec)
            ag_drv.cuGraphExecDestroy(P->exec);
        if (P->alt)
            ag_drv.cuGraphExecDestroy(P->alt);
        if (P->graph)
            ag_drv.cuGraphDestroy(P->graph);
        P->exec = P->alt = NULL;
        P->graph = NULL;
        P->flips = P->alt_misses = 0;
        P->pending = 0; /* (a build under way is for the old generation: thrown away) */
        P->fresh = 0;
    }
    T->gen++;
    for (uint32_t i = 0; i < T->len; i++)
        T->nodes[i].node = NULL;
    if (T->nbuilt) {
        atomic_fetch_sub(&ag_graphs_live, 1);
        atomic_fetch_sub(&ag_graph_mem_live, (long)T->mem_est);
        lru_unlink(T);
    }
    T->nbuilt = 0;
    T->mem_est = 0;
}

/* Reserves room for `est` more bytes of T's graphs (and, for its first piece, one more graph)
 * within AUTOGRAPH_MAX_GRAPHS and MAX_GRAPH_MEM, destroying the least recently replayed graphs
 * of any stream if need be (lru_victim). The reservation is taken first and checked after, so
 * that threads building at once cannot all slip under the limit. Returns 0 when reserved. */
static int reserve(ag_stream *st, ag_tmpl *T, size_t est)
{
    long max_graphs = (long)ag_opt(AG_OPT_MAX_GRAPHS), max_mem = (long)ag_opt(AG_OPT_MAX_GRAPH_MEM);
    long one = T->nbuilt ? 0 : 1;
    for (;;) {
        long g = atomic_fetch_add(&ag_graphs_live, one) + one;
        long m = atomic_fetch_add(&ag_graph_mem_live, (long)est) + (long)est;
        if (g <= max_graphs && m <= max_mem)
            return 0;
        atomic_fetch_sub(&ag_graphs_live, one);
        atomic_fetch_sub(&ag_graph_mem_live, (long)est);
        ag_stream *vs;
        ag_tmpl *victim = lru_victim(st, T, &vs);
        if (!victim)
            return -1;
        ag_log(AG_LOG_DEBUG, "evicting graph of sequence %016llx (%u launches)%s",
               (unsigned long long)victim->key, victim->len, vs != st ? " of another stream" : "");
        /* The victim may be its stream's occurrence under way, some pieces out already: a
         * piece whose exec is gone is built again when its launches are held (replay). */
        ag_tmpl_drop_graph(vs, victim);
        if (vs != st)
            ag_unlock(&vs->mu);
        ag_stat_inc(AG_ST_GRAPH_EVICTED);
    }
}

static uint32_t piece_start(const ag_tmpl *T, uint32_t p)
{
    return p ? T->ends[p - 1] : 0;
}

/* Makes the graph of nodes[0, n) (a piece's) from the launches src->recs[0, n): adds the
 * nodes (their handles and, for launches with attributes, the attributes go into nodes[i]),
 * instantiates and uploads it on `upload` (none when NULL). On failure *what names the call
 * and nothing is left behind. */
static CUresult make_graph(build_src *src, ag_node *nodes, uint32_t n, CUstream upload,
                           CUgraph *gout, CUgraphExec *xout, const char **what)
{
    CUgraph g = NULL;
    CUgraphExec x = NULL;
    CUgraphNode prev = NULL;
    CUresult r;
    *what = "cuGraphCreate";
    if ((r = ag_drv.cuGraphCreate(&g, 0)))
        goto fail;
    for (uint32_t i = 0; i < n; i++) {
        ag_node *nd = &nodes[i];
        const ag_rec *rec = &src->recs[i];
        CUDA_KERNEL_NODE_PARAMS kp;
        if (nd->shape.kind == AG_KIND_COPY) { /* a memset or copy node (copy.c) */
            *what = "cuGraphAddMemsetNode/MemcpyNode";
            if ((r = ag_copy_add_node(g, prev, nd, src->arena + rec->blob)))
                goto fail;
            prev = nd->node;
            continue;
        }
        *what = "cuGraphAddKernelNode";
        if (fill(src, nd, rec, &kp)) {
            r = CUDA_ERROR_OUT_OF_MEMORY;
            goto fail;
        }
        if (ag_fault(AG_F_ADD_NODE) ? (r = CUDA_ERROR_UNKNOWN) : (r = add_node(g, nd, prev, 1, &kp)))
            goto fail;
        *what = "cuGraphKernelNodeSetAttribute";
        if (nd->shape.kind == AG_KIND_COOP) {
            CUkernelNodeAttrValue v;
            memset(&v, 0, sizeof v);
            v.cooperative = 1;
            if ((r = ag_drv.cuGraphKernelNodeSetAttribute(nd->node, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &v)))
                goto fail;
        } else if (nd->shape.kind == AG_KIND_ATTRS) {
            memcpy(nd->attrs, src->arena + rec->attrs, nd->shape.nattrs * sizeof *nd->attrs);
            for (uint32_t a = 0; a < nd->shape.nattrs; a++)
                if (nd->attrs[a].id != CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION &&
                    (r = ag_drv.cuGraphKernelNodeSetAttribute(nd->node, nd->attrs[a].id,
                                                              &nd->attrs[a].value)))
                    goto fail; /* (serialisation is the edge above, not an attribute) */
        }
        prev = nd->node;
    }
    *what = "cuGraphInstantiate";
    if (ag_fault(AG_F_INSTANTIATE) ? (r = CUDA_ERROR_UNKNOWN)
                                   : (r = ag_drv.cuGraphInstantiateWithFlags(&x, g, 0)))
        goto fail;
    *what = "cuGraphUpload";
    if (upload && (ag_fault(AG_F_UPLOAD) ? (r = CUDA_ERROR_UNKNOWN) : (r = ag_drv.cuGraphUpload(x, upload))))
        goto fail;
    *gout = g;
    *xout = x;
    return CUDA_SUCCESS;
fail:
    for (uint32_t i = 0; i < n; i++)
        nodes[i].node = NULL;
    if (x)
        ag_drv.cuGraphExecDestroy(x);
    if (g)
        ag_drv.cuGraphDestroy(g);
    return r;
}

/* The device memory piece p of T is estimated to take. */
static size_t piece_mem(const ag_tmpl *T, uint32_t p)
{
    uint32_t s = piece_start(T, p), e = T->ends[p];
    size_t est = (size_t)(e - s) * AG_NODE_MEM_EST;
    for (uint32_t i = s; i < e; i++)
        est += T->nodes[i].lay->size;
    return est;
}

/* Piece p of T has its graph and exec now (the reservation of est was made): the values the
 * exec holds are those of the launches it was built from. */
static void built(ag_stream *st, ag_tmpl *T, uint32_t p, CUgraph g, CUgraphExec x, size_t est,
                  const ag_rec *recs, const uint8_t *arena)
{
    ag_piece *P = &T->pieces[p];
    uint32_t s = piece_start(T, p), e = T->ends[p];
    for (uint32_t i = s; i < e; i++) {
        ag_node *n = &T->nodes[i];
        const uint8_t *blob = arena + recs[i - s].blob;
        memcpy(n->exec_vals, blob, n->lay->size);
        memcpy(n->graph_vals, blob, n->lay->size);
        n->exec_vhash = ag_hash(n->exec_vals, n->lay->size);
        n->prev_vhash = 0;
        n->exec_dims = n->graph_dims = recs[i - s].dims;
        n->exec_fn = n->graph_fn = recs[i - s].lay->handle;
    }
    P->graph = g;
    P->exec = x;
    P->pending = 0;
    P->nkern = 0;
    for (uint32_t i = s; i < e; i++)
        P->nkern += T->nodes[i].shape.kind != AG_KIND_COPY;
    T->mem_est += est;
    if (!T->nbuilt++)
        lru_front(st, T);
    if (!ag_graph_built_once())
        __atomic_store_n(&g_built_once, 1, __ATOMIC_RELAXED);
    ag_stat_inc(AG_ST_GRAPH_BUILT);
    ag_log(AG_LOG_INFO, "graph built for sequence %016llx: piece %u of %u, launches %u-%u of %u "
           "starting with %s", (unsigned long long)T->key, p + 1, T->npieces, s, e - 1, T->len,
           T->nodes[s].lay->name);
}

static void build_failed(ag_tmpl *T, const char *what, CUresult r)
{
    ag_log(AG_LOG_INFO, "graph of sequence %016llx not built: %s failed (%d)",
           (unsigned long long)T->key, what, (int)r);
    ag_stat_inc(AG_ST_FAIL_BUILD);
}

/* Builds piece p of T from the held launches (held[0] is its first node), here and now. */
static int build(ag_stream *st, ag_tmpl *T, uint32_t p)
{
    size_t est = piece_mem(T, p);
    if (reserve(st, T, est)) {
        ag_stat_inc(AG_ST_GRAPH_CACHE_FULL);
        return AG_REPLAY_FULL;
    }
    build_src src = src_of_stream(st);
    const char *what;
    CUgraph g;
    CUgraphExec x;
    CUresult r = make_graph(&src, &T->nodes[piece_start(T, p)], T->ends[p] - piece_start(T, p),
                            st->issue, &g, &x, &what);
    if (r) {
        build_failed(T, what, r);
        atomic_fetch_sub(&ag_graphs_live, T->nbuilt ? 0 : 1);
        atomic_fetch_sub(&ag_graph_mem_live, (long)est);
        return -1;
    }
    built(st, T, p, g, x, est, st->held, st->arena);
    return 0;
}

/* ---- building on the worker ------------------------------------------------------------- */

/* Bumped by ag_graph_builds_void: a request made before is thrown away when it finishes. */
static atomic_uint g_builds_epoch;

void ag_graph_builds_void(void)
{
    atomic_fetch_add(&g_builds_epoch, 1);
}

struct ag_build_req {
    ag_stream *st;
    unsigned epoch;                  /* g_builds_epoch when it was made */
    ag_tmpl *T;                      /* valid while st is not retired (checked under st->mu) */
    uint32_t p, gen, n;
    CUcontext ctx;
    ag_node *nodes;                  /* copies of T's nodes of piece p: the build fills them */
    ag_rec *recs;                    /* the held launches it is built from, and their arena */
    uint8_t *arena;
    void **ptrs;
    uint32_t ptrs_cap;
    CUgraph g;
    CUgraphExec x;
    CUresult r;
    const char *what;
};

ag_build_req *ag_build_snapshot(ag_stream *st, ag_tmpl *T, uint32_t p, uint32_t first)
{
    AG_ASSERT(ag_lock_held(&st->mu) && !T->pieces[p].exec && !T->pieces[p].pending);
    uint32_t s = piece_start(T, p), n = T->ends[p] - s, np = 1;
    for (uint32_t i = 0; i < n; i++)
        if (T->nodes[s + i].lay->nparams > np)
            np = T->nodes[s + i].lay->nparams;
    size_t arena = st->arena_used;
    size_t head = (sizeof(ag_build_req) + n * (sizeof(ag_node) + sizeof(ag_rec)) +
                   np * sizeof(void *) + 63) & ~(size_t)63; /* the arena as aligned as ever */
    ag_build_req *q = malloc(head + arena);
    if (!q)
        return NULL;
    memset(q, 0, sizeof *q);
    q->st = st;
    q->T = T;
    q->p = p;
    q->gen = T->gen;
    q->epoch = atomic_load(&g_builds_epoch);
    q->n = n;
    q->ctx = st->ctx;
    q->nodes = (ag_node *)(q + 1);
    q->recs = (ag_rec *)(q->nodes + n);
    q->ptrs = (void **)(q->recs + n);
    q->ptrs_cap = np;
    q->arena = (uint8_t *)q + head;
    memcpy(q->nodes, &T->nodes[s], n * sizeof *q->nodes);
    for (uint32_t i = 0; i < n; i++)
        q->nodes[i].node = NULL;
    memcpy(q->recs, st->held + first, n * sizeof *q->recs);
    memcpy(q->arena, st->arena, arena);
    T->pieces[p].pending = 1;
    return q;
}

void ag_build_cancel_locked(ag_build_req *q)
{
    AG_ASSERT(ag_lock_held(&q->st->mu));
    if (q->T->gen == q->gen)
        q->T->pieces[q->p].pending = 0;
    free(q);
}

CUcontext ag_build_ctx(const ag_build_req *q)
{
    return q->ctx;
}

void ag_build_run(ag_build_req *q, CUstream upload)
{
    build_src src = { NULL, q->recs, q->arena, q->ptrs, q->ptrs_cap };
    q->r = make_graph(&src, q->nodes, q->n, upload, &q->g, &q->x, &q->what);
}

void ag_build_finish(ag_build_req *q, int run)
{
    ag_stream *st = q->st;
    ag_tmpl *T = q->T;
    ag_lock(&st->mu);
    int current = st->kind != AG_SK_DEAD && T->gen == q->gen && T->pieces[q->p].pending;
    if (current && q->epoch != atomic_load(&g_builds_epoch)) {
        T->pieces[q->p].pending = 0; /* voided (ag_graph_builds_void): not current, not broken */
        current = 0;
    }
    if (current)
        T->pieces[q->p].pending = 0;
    int failed = current && run && q->r;
    if (failed)
        build_failed(T, q->what, q->r);
    if (current && run && !q->r) {
        size_t est = piece_mem(T, q->p);
        if (reserve(st, T, est)) {
            ag_stat_inc(AG_ST_GRAPH_CACHE_FULL);
            failed = 1;
        } else {
            uint32_t s = piece_start(T, q->p);
            for (uint32_t i = 0; i < q->n; i++) {
                T->nodes[s + i].node = q->nodes[i].node;
                memcpy(T->nodes[s + i].attrs, q->nodes[i].attrs, sizeof q->nodes[i].attrs);
            }
            built(st, T, q->p, q->g, q->x, est, q->recs, q->arena);
            T->pieces[q->p].fresh = 1;
            ag_stat_inc(AG_ST_WORKER_BUILDS);
            q->g = NULL;
            q->x = NULL;
        }
    }
    if (failed) { /* as a build that fails where it is held: graphs off for a while (back-off) */
        T->broken[AG_BREAK_GRAPH_API]++;
        ag_benefit_failed(&T->ben);
    }
    ag_unlock(&st->mu);
    if (!current || !run)
        ag_stat_inc(AG_ST_WORKER_DROPPED);
    if (q->x) /* thrown away: built for graphs dropped meanwhile, a retired stream, no room */
        ag_drv.cuGraphExecDestroy(q->x);
    if (q->g)
        ag_drv.cuGraphDestroy(q->g);
    free(q);
}

/* Whether held launch j has another function, other argument values or launch dimensions
 * than node n of the exec. Large blocks are told apart by their value fingerprints first;
 * equal fingerprints are confirmed byte by byte. */
static inline int exec_differs(ag_stream *st, const ag_node *n, uint32_t j)
{
    if (!dims_eq(&st->held[j].dims, &n->exec_dims) || st->held[j].lay->handle != n->exec_fn)
        return 1;
    const uint8_t *b = held_blob(st, j);
    if (n->lay->size > 256 && ag_hash(b, n->lay->size) != n->exec_vhash)
        return 1;
    return memcmp(b, n->exec_vals, n->lay->size) != 0;
}

/* Which update path to take when `nexec` of a piece's `len` nodes changed. Both are measured on
 * this piece as what they really cost -- the update and the graph launch after it (some of an
 * update's work is deferred to the launch) -- and the cheaper one wins; the other is sampled
 * again now and then. A handful of changed nodes always goes node by node. */
enum { UPD_NODE, UPD_WHOLE };
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

static void record_path(ag_piece *P, int path, uint64_t ns)
{
    uint64_t old = P->upd_ns[path];
    P->upd_ns[path] = P->upd_n[path] ? old - old / 4 + ns / 4 : ns;
    P->upd_n[path]++;
}

/* Whether held launch j goes back, in node n, to the value the exec held before its last
 * change (the other buffer of a ping-pong pair). */
static int goes_back(ag_stream *st, const ag_node *n, uint32_t j)
{
    return n->prev_vhash && dims_eq(&st->held[j].dims, &n->exec_dims) &&
           st->held[j].lay->handle == n->exec_fn &&
           ag_hash(held_blob(st, j), n->lay->size) == n->prev_vhash;
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

/* Whether held launch j has other values than node n in the piece's second exec. */
static inline int alt_differs(ag_stream *st, const ag_node *n, uint32_t j)
{
    if (!dims_eq(&st->held[j].dims, &n->alt_dims) || st->held[j].lay->handle != n->alt_fn)
        return 1;
    const uint8_t *b = held_blob(st, j);
    if (n->lay->size > 256 && ag_hash(b, n->lay->size) != n->alt_vhash)
        return 1;
    return memcmp(b, n->alt_vals, n->lay->size) != 0;
}

/* The piece's two execs trade places, each node's values with them. */
static void swap_alt(ag_tmpl *T, uint32_t p)
{
    ag_piece *P = &T->pieces[p];
    for (uint32_t i = piece_start(T, p); i < T->ends[p]; i++) {
        ag_node *n = &T->nodes[i];
        uint8_t *v = n->exec_vals;
        n->exec_vals = n->alt_vals;
        n->alt_vals = v;
        uint64_t h = n->exec_vhash;
        n->exec_vhash = n->alt_vhash;
        n->alt_vhash = h;
        n->prev_vhash = h;
        ag_dims d = n->exec_dims;
        n->exec_dims = n->alt_dims;
        n->alt_dims = d;
        void *f = n->exec_fn;
        n->exec_fn = n->alt_fn;
        n->alt_fn = f;
    }
    CUgraphExec x = P->exec;
    P->exec = P->alt;
    P->alt = x;
}

static void drop_alt(ag_tmpl *T, uint32_t p)
{
    ag_piece *P = &T->pieces[p];
    size_t est = piece_mem(T, p);
    ag_drv.cuGraphExecDestroy(P->alt);
    P->alt = NULL;
    P->flips = P->alt_misses = 0;
    T->mem_est -= est;
    atomic_fetch_sub(&ag_graph_mem_live, (long)est);
}

/* Sets the piece's graph nodes to the held values (those that differ): 0, or -2 on failure. */
static int graph_to_held(ag_stream *st, ag_tmpl *T, uint32_t p)
{
    build_src b = src_of_stream(st);
    CUDA_KERNEL_NODE_PARAMS kp;
    uint32_t s = piece_start(T, p), e = T->ends[p];
    for (uint32_t i = s; i < e; i++) {
        ag_node *n = &T->nodes[i];
        if (dims_eq(&st->held[i - s].dims, &n->graph_dims) &&
            st->held[i - s].lay->handle == n->graph_fn &&
            !memcmp(held_blob(st, i - s), n->graph_vals, n->lay->size))
            continue;
        if (n->shape.kind == AG_KIND_COPY
                ? ag_fault(AG_F_SET_PARAMS) || ag_copy_set_node(NULL, n, held_blob(st, i - s))
                : fill(&b, n, &st->held[i - s], &kp) || ag_fault(AG_F_SET_PARAMS) ||
                      ag_drv.cuGraphKernelNodeSetParams_v2(n->node, &kp))
            return -2;
        memcpy(n->graph_vals, held_blob(st, i - s), n->lay->size);
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
    uint32_t s = piece_start(T, p), e = T->ends[p];
    for (uint32_t i = s; i < e; i++)
        if (!T->nodes[i].alt_vals &&
            !(T->nodes[i].alt_vals = malloc(T->nodes[i].lay->size ? T->nodes[i].lay->size : 1)))
            return -1;
    size_t est = piece_mem(T, p);
    if (reserve(st, T, est))
        return -1;
    if (graph_to_held(st, T, p)) {
        atomic_fetch_sub(&ag_graph_mem_live, (long)est);
        return -2;
    }
    CUgraphExec x = NULL;
    if (ag_fault(AG_F_INSTANTIATE) || ag_drv.cuGraphInstantiateWithFlags(&x, P->graph, 0)) {
        atomic_fetch_sub(&ag_graph_mem_live, (long)est);
        P->flips = 0;
        return -1;
    }
    for (uint32_t i = s; i < e; i++) { /* the old exec's values become the second's */
        ag_node *n = &T->nodes[i];
        uint8_t *v = n->alt_vals;
        n->alt_vals = n->exec_vals;
        n->exec_vals = v;
        n->alt_vhash = n->exec_vhash;
        n->alt_dims = n->exec_dims;
        n->alt_fn = n->exec_fn;
        memcpy(n->exec_vals, n->graph_vals, n->lay->size);
        n->exec_vhash = ag_hash(n->exec_vals, n->lay->size);
        n->prev_vhash = n->alt_vhash;
        n->exec_dims = n->graph_dims;
        n->exec_fn = n->graph_fn;
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

/* Brings piece p's exec up to date with the held values; returns the path taken (-1: none
 * needed, -2: failed). */
static int update(ag_stream *st, ag_tmpl *T, uint32_t p)
{
    build_src b = src_of_stream(st);
    ag_piece *P = &T->pieces[p];
    uint32_t s = piece_start(T, p), e = T->ends[p], nexec = 0, nback = 0;
    for (uint32_t i = s; i < e; i++)
        if (exec_differs(st, &T->nodes[i], i - s)) {
            nexec++;
            nback += !P->alt && goes_back(st, &T->nodes[i], i - s);
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
        P->flips = nback == nexec ? (uint8_t)(P->flips < 2 ? P->flips + 1 : 2) : 0;
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
            if (!exec_differs(st, n, i - s))
                continue;
            if (n->shape.kind == AG_KIND_COPY
                    ? ag_fault(AG_F_SET_PARAMS) || ag_copy_set_node(P->exec, n, held_blob(st, i - s))
                    : fill(&b, n, &st->held[i - s], &kp) || ag_fault(AG_F_SET_PARAMS) ||
                          ag_drv.cuGraphExecKernelNodeSetParams_v2(P->exec, n->node, &kp))
                return -2;
            exec_took(n, held_blob(st, i - s), &st->held[i - s].dims, st->held[i - s].lay->handle);
        }
        ag_stat_inc(AG_ST_UPD_NODE);
        ag_stat_add(AG_ST_UPD_NODE_NODES, nexec);
        return UPD_NODE;
    }
    if (graph_to_held(st, T, p))
        return -2;
    CUgraphExecUpdateResultInfo info;
    if (ag_fault(AG_F_UPDATE) || ag_drv.cuGraphExecUpdate_v2(P->exec, P->graph, &info))
        return -2;
    for (uint32_t i = s; i < e; i++) {
        ag_node *n = &T->nodes[i];
        exec_took(n, n->graph_vals, &n->graph_dims, n->graph_fn);
    }
    ag_stat_inc(AG_ST_UPD_WHOLE);
    return UPD_WHOLE;
}

/* The host's time for one graph launch, process-wide (EWMA, relaxed: a hint for planning). */
static uint64_t g_graph_launch_ns;

uint64_t ag_graph_launch_ns(void)
{
    return __atomic_load_n(&g_graph_launch_ns, __ATOMIC_RELAXED);
}

int ag_tmpl_replay(ag_stream *st, ag_tmpl *T, uint32_t p, int *built)
{
    ag_piece *P = &T->pieces[p];
    *built = 0;
    int path = -1;
    uint64_t t0 = 0;
    if (!P->exec) {
        int b = build(st, T, p);
        if (b)
            return b;
        *built = 1;
    } else if (t0 = ag_now_ns(), (path = update(st, T, p)) == -2) {
        ag_log(AG_LOG_INFO, "update of sequence %016llx failed; dropping its graph",
               (unsigned long long)T->key);
        ag_stat_inc(AG_ST_FAIL_UPDATE);
        ag_tmpl_drop_graph(st, T);
        return -1;
    }
    if (!T->nvtx_name)
        T->nvtx_name = ag_nvtx_name(T->key, T->len, T->nodes[0].lay->name);
    ag_nvtx_push(T->nvtx_name);
    uint64_t tl = ag_now_ns();
    CUresult r = ag_fault(AG_F_LAUNCH) ? CUDA_ERROR_UNKNOWN : ag_drv.cuGraphLaunch(P->exec, st->issue);
    uint64_t te = ag_now_ns();
    ag_nvtx_pop();
    if (r) {
        ag_log(AG_LOG_INFO, "launch of sequence %016llx failed (%d); dropping its graph",
               (unsigned long long)T->key, (int)r);
        ag_stat_inc(AG_ST_FAIL_LAUNCH);
        ag_tmpl_drop_graph(st, T);
        return -1;
    }
    /* the first launch of a graph the worker built (uploaded on another stream) is as
     * atypical as one right after a build here: no sample of the graph launch's cost (one
     * made the estimate so large that P1 and D1 were never cut into pieces, H100 5af2918),
     * nor of the occurrence's (*built) */
    if (P->fresh) {
        P->fresh = 0;
        *built = 1;
    } else if (!*built) { /* a launch right after an upload is not a typical one */
        uint64_t old = ag_graph_launch_ns(), d = te - tl;
        __atomic_store_n(&g_graph_launch_ns, old ? old - old / 8 + d / 8 : d, __ATOMIC_RELAXED);
        if (path >= 0)
            record_path(P, path, te - t0);
    }
    lru_front(st, T);
    ag_stat_inc(AG_ST_GRAPH_LAUNCHES);
    uint32_t n = T->ends[p] - piece_start(T, p);
    ag_stat_add(AG_ST_REPLAYED, n);
    ag_stat_add(AG_ST_FATE_REPLAYED, P->nkern); /* kernel launches: where they went */
    if (AG_UNLIKELY(n != P->nkern))
        ag_stat_add(AG_ST_COPY_REPLAYED, n - P->nkern);
    return 0;
}
