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
#include "cache/selftime.h"
#include "cache/fill.h"
#include "cache/gcache.h"
#include "cache/update.h"




/* Whether this process has built a graph yet (relaxed: a hint for the payback estimate). */
static int g_built_once;

int ag_graph_built_once(void)
{
    return __atomic_load_n(&g_built_once, __ATOMIC_RELAXED);
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

/* What make_graph names when a memset or memcpy node is refused, or the graph with them is
 * (refused_copy_node). */
static const char g_copy_node_call[] = "cuGraphAddMemsetNode/MemcpyNode";
static const char g_instantiate_call[] = "cuGraphInstantiate";

/* Makes the graph of nodes[0, n) (a piece's) from the launches src->recs[0, n): adds the
 * nodes (their handles go into nodes[i]), instantiates and uploads it on `upload` (none when
 * NULL). On failure *what names the call and nothing is left behind. */
static CUresult make_graph(ag_src *src, ag_node *nodes, uint32_t n, CUstream upload,
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
            *what = g_copy_node_call;
            if ((r = ag_copy_add_node(g, prev, nd, src->arena + rec->blob)))
                goto fail;
            prev = nd->node;
            continue;
        }
        *what = "cuGraphAddKernelNode";
        if (ag_fill(src, nd, rec, &kp)) {
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
            for (uint32_t a = 0; a < nd->shape.nattrs; a++) {
                CUlaunchAttribute at; /* (the worker's build writes nothing of the template's) */
                memcpy(&at, src->arena + rec->attrs + a * sizeof at, sizeof at);
                if (at.id != CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION &&
                    (r = ag_drv.cuGraphKernelNodeSetAttribute(nd->node, at.id, &at.value)))
                    goto fail; /* (serialisation is the edge above, not an attribute) */
            }
        }
        prev = nd->node;
    }
    *what = g_instantiate_call;
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

/* Piece p of T has its graph and exec now (the reservation of est was made): the values the
 * exec holds are those of the launches it was built from. */
static void built(ag_stream *st, ag_tmpl *T, uint32_t p, CUgraph g, CUgraphExec x, size_t est,
                  const ag_rec *recs, const uint8_t *arena, int probed)
{
    ag_piece *P = &T->pieces[p];
    uint32_t s = ag_piece_start(T, p), e = ag_piece_gend(T, p);
    for (uint32_t i = s; i < e; i++) {
        ag_node *n = &T->nodes[i];
        const uint8_t *blob = arena + recs[i - s].blob;
        memcpy(n->exec_vals, blob, n->lay->size);
        memcpy(n->graph_vals, blob, n->lay->size);
        n->exec_vhash = ag_hash(n->exec_vals, n->lay->size);
        n->prev_vhash = 0;
        n->exec_dims = n->graph_dims = recs[i - s].dims;
        n->exec_fn = n->graph_fn = recs[i - s].lay->handle;
        if (n->shape.kind == AG_KIND_ATTRS) /* what ag_node_matches compares a built node by */
            memcpy(n->attrs, arena + recs[i - s].attrs, n->shape.nattrs * sizeof *n->attrs);
    }
    P->graph = g;
    P->exec = x;
    P->pending = 0;
    P->nkern = 0;
    for (uint32_t i = s; i < e; i++)
        P->nkern += T->nodes[i].shape.kind != AG_KIND_COPY;
    T->mem_est += est;
    if (!T->nbuilt++)
        ag_gcache_front(st, T);
    if (!ag_graph_built_once())
        __atomic_store_n(&g_built_once, 1, __ATOMIC_RELAXED);
    ag_stat_inc(AG_ST_GRAPH_BUILT);
    ag_log(AG_LOG_INFO, "graph built for sequence %016llx: piece %u of %u, launches %u-%u of %u "
           "starting with %s%s", (unsigned long long)T->key, p + 1, T->npieces, s, e - 1, T->len,
           T->nodes[s].lay->name, probed ? " (from an occurrence in its probe)" : "");
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
    size_t est = ag_piece_mem(T, p);
    if (ag_gcache_reserve(st, T, est)) {
        ag_stat_inc(AG_ST_GRAPH_CACHE_FULL);
        return AG_REPLAY_FULL;
    }
    ag_src src = ag_src_of_stream(st);
    const char *what;
    CUgraph g;
    CUgraphExec x;
    CUresult r = make_graph(&src, &T->nodes[ag_piece_start(T, p)],
                            ag_piece_gend(T, p) - ag_piece_start(T, p), st->issue, &g, &x, &what);
    if (r) {
        build_failed(T, what, r);
        ag_gcache_release(T, est);
        return -1;
    }
    built(st, T, p, g, x, est, st->held, st->arena, 0);
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
    uint8_t probed;                  /* made in T's probe (for the log) */
};

ag_build_req *ag_build_snapshot(ag_stream *st, ag_tmpl *T, uint32_t p, uint32_t first)
{
    AG_ASSERT(ag_lock_held(&st->mu) && !T->pieces[p].exec && !T->pieces[p].pending);
    uint32_t s = ag_piece_start(T, p), n = ag_piece_gend(T, p) - s, np = 1;
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
    q->probed = (uint8_t)ag_benefit_probing(T->bp);
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
    ag_src src = { NULL, q->recs, q->arena, q->ptrs, q->ptrs_cap };
    q->r = make_graph(&src, q->nodes, q->n, upload, &q->g, &q->x, &q->what);
}

/* The driver checks a memset or memcpy node's memory when the node is added, and again when
 * the graph is instantiated: the worker builds after its occurrence went out, and a program that
 * frees what it used once the stream synced (MAGMA's batched solvers in F13, allocating and
 * freeing every call: the H200 refused their memset nodes, 2026-11-27; Thrust's temporaries:
 * the H100 refused the instantiation of a sort's piece, sixteenth session) has freed it by
 * then. Where the launches are held the memory is still in use. */
static int refused_copy_node(const ag_build_req *q)
{
    if (!q->r)
        return 0;
    if (q->what == g_copy_node_call)
        return 1;
    if (q->what != g_instantiate_call)
        return 0;
    for (uint32_t i = 0; i < q->n; i++)
        if (q->nodes[i].shape.kind == AG_KIND_COPY)
            return 1;
    return 0;
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
    if (failed && refused_copy_node(q)) {
        /* its graphs are built where held from now on: no failure yet (nor for the requests
         * of its other pieces, made before this one came back) */
        failed = 0;
        if (!T->build_here) {
            T->build_here = 1;
            ag_stat_inc(AG_ST_WORKER_COPY_REFUSED);
            ag_log(AG_LOG_INFO, "graph of sequence %016llx: the worker's %s failed (%d; a copy "
                   "node's memory freed meanwhile?): built where it is held from now on",
                   (unsigned long long)T->key, q->what, (int)q->r);
        }
    } else if (failed) {
        build_failed(T, q->what, q->r);
    }
    if (current && run && !q->r) {
        size_t est = ag_piece_mem(T, q->p);
        if (ag_gcache_reserve(st, T, est)) {
            ag_stat_inc(AG_ST_GRAPH_CACHE_FULL);
            failed = 1;
        } else {
            uint32_t s = ag_piece_start(T, q->p);
            for (uint32_t i = 0; i < q->n; i++)
                T->nodes[s + i].node = q->nodes[i].node;
            built(st, T, q->p, q->g, q->x, est, q->recs, q->arena, q->probed);
            T->pieces[q->p].fresh = 1;
            ag_stat_inc(AG_ST_WORKER_BUILDS);
            q->g = NULL;
            q->x = NULL;
        }
    }
    if (failed) { /* as a build that fails where it is held: graphs off for a while (back-off) */
        T->broken[AG_BREAK_GRAPH_API]++;
        ag_benefit_failed(T->bp);
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

/* The host's time for one graph launch, process-wide (EWMA, relaxed: a hint for planning). */
static uint64_t g_graph_launch_ns;

uint64_t ag_graph_launch_ns(void)
{
    return __atomic_load_n(&g_graph_launch_ns, __ATOMIC_RELAXED);
}

int ag_tmpl_replay(ag_stream *st, ag_tmpl *T, uint32_t p, int *built)
{
    AG_SELF_MARK(AG_SM_REPLAY);
    ag_piece *P = &T->pieces[p];
    *built = 0;
    int path = -1;
    uint64_t t0 = 0;
    if (!P->exec) {
        int b = build(st, T, p);
        if (b)
            return b;
        *built = 1;
    } else if (t0 = ag_now_ns(), (path = ag_update(st, T, p)) == -2) {
        ag_log(AG_LOG_INFO, "update of sequence %016llx failed; dropping its graph",
               (unsigned long long)T->key);
        ag_stat_inc(AG_ST_FAIL_UPDATE);
        ag_tmpl_drop_graph(st, T);
        return -1;
    }
    AG_SELF_MARK(AG_SM_UPDATED);
    if (!T->nvtx_name)
        T->nvtx_name = ag_nvtx_name(T->key, T->len, T->nodes[0].lay->name);
    ag_nvtx_push(T->nvtx_name);
    uint64_t tl = ag_now_ns();
    CUresult r = ag_fault(AG_F_LAUNCH)
                     ? CUDA_ERROR_UNKNOWN
                     : AG_SELF_CALL(AG_SC_GRAPH_LAUNCH, ag_drv.cuGraphLaunch(P->exec, st->issue));
    uint64_t te = ag_now_ns();
    AG_SELF_MARK(AG_SM_GLAUNCHED);
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
            ag_update_record(P, path, te - t0);
    }
    ag_gcache_front(st, T);
    ag_stat_inc(AG_ST_GRAPH_LAUNCHES);
    uint32_t s = ag_piece_start(T, p), n = ag_piece_gend(T, p) - s;
    if (n < T->ends[p] - s) { /* the read-backs the graph stops short of (fill.h) */
        ag_issue_held_from(st, n, AG_ST_FATE_REPLAYED); /* (copies: no fate is counted) */
        ag_stat_add(AG_ST_COPY_AFTER_GRAPH, T->ends[p] - s - n);
    }
    ag_stat_add(AG_ST_REPLAYED, n);
    ag_stat_add(AG_ST_FATE_REPLAYED, P->nkern); /* kernel launches: where they went */
    if (AG_UNLIKELY(n != P->nkern))
        ag_stat_add(AG_ST_COPY_REPLAYED, n - P->nkern);
    return 0;
}
