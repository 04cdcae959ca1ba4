/* fakecuda: graphs of kernel nodes, execs and their updates, graph upload and launch.
 *
 * Node parameters are copied when a node is added or set. An exec is a snapshot of its graph's
 * nodes (in creation order, which is a topological order: an added edge must go from an
 * earlier node to a later one) taken at instantiation; only exec updates change it. A launch copies the exec's nodes into stream items, so later updates
 * never reach a launch already made. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>

#include "fc_internal.h"

typedef struct fc_exec {
    uint32_t magic;
    pthread_mutex_t mu;
    int n;
    const fc_node **orig;            /* the graph's nodes it was made from (identity only) */
    int **deps;                      /* per node: dependency indices, for update checks */
    int *ndeps;
    fc_knode *nodes;
} fc_exec;

/* Graph nodes keep their dependencies as edges (kept beside the node list): the upstream
 * node's index times 4 plus the edge kind below, so that comparing edges compares kinds. */
typedef struct fc_gnode_deps {
    int n;
    int *idx;
} fc_gnode_deps;

enum { FC_EDGE_DEFAULT, FC_EDGE_PROG, FC_EDGE_PROG_LAUNCH_ORDER };
#define FC_EDGE(index, kind) ((index) * 4 + (kind))
#define FC_EDGE_INDEX(e) ((e) / 4)
#define FC_EDGE_KIND(e) ((e) % 4)

static void knode_clear(fc_knode *k)
{
    free(k->blob);
    k->blob = NULL;
}

static CUresult knode_copy(fc_knode *dst, const fc_knode *src)
{
    *dst = *src;
    dst->blob = malloc(src->def.size ? src->def.size : 1);
    if (!dst->blob)
        return CUDA_ERROR_OUT_OF_MEMORY;
    memcpy(dst->blob, src->blob, src->def.size);
    return CUDA_SUCCESS;
}

/* Builds a node's kernel from explicit values; params are packed (copied) now. */
static CUresult knode_make(fc_knode *k, const fc_func *f, const void *h, fc_ctx *ctx,
                           const unsigned grid[3], const unsigned block[3], unsigned smem,
                           void **params, void **extra)
{
    memset(k, 0, sizeof *k);
    if (!grid[0] || !grid[1] || !grid[2] || !block[0] || !block[1] || !block[2] ||
        (uint64_t)block[0] * block[1] * block[2] > 1024)
        return CUDA_ERROR_INVALID_VALUE;
    k->def = f->def;
    k->origin = h;
    k->is_kern = f->magic == FC_M_KERN;
    k->fctx = k->is_kern ? NULL : f->ctx;
    k->ctx = ctx;
    memcpy(k->grid, grid, sizeof k->grid);
    memcpy(k->block, block, sizeof k->block);
    k->smem = smem;
    k->fn_obj = f;
    fc_attrs_now(f, &k->attrs); /* a node snapshots the function's attributes */
    if (!fc_attrs_allow_smem(&k->attrs, smem))
        return CUDA_ERROR_INVALID_VALUE;
    if (!(k->blob = malloc(f->def.size ? f->def.size : 1)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = fc_pack_params(&f->def, params, extra, k->blob);
    if (r)
        knode_clear(k);
    return r;
}

/* From CUDA_KERNEL_NODE_PARAMS: `func` (a CUfunction, or a CUkernel passed as one), else
 * `kern` with `ctx` (NULL: the current context). */
static CUresult knode_from_params(fc_knode *k, const CUDA_KERNEL_NODE_PARAMS *p)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    const void *h = p->func ? (const void *)p->func : (const void *)p->kern;
    if (!h)
        return CUDA_ERROR_INVALID_VALUE;
    fc_func *f = p->func ? fc_func_get(p->func, 0) : fc_func_get(p->kern, FC_M_KERN);
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    fc_ctx *ctx = NULL;
    if (!p->func && p->ctx) {
        ctx = (fc_ctx *)p->ctx;
        if (!fc_valid(ctx, FC_M_CTX) || ctx->destroyed)
            return CUDA_ERROR_INVALID_CONTEXT;
    } else if (!p->func) {
        CUresult r = fc_need_ctx(&ctx);
        if (r)
            return r;
    } else {
        ctx = fc_current_ctx(); /* a CUfunction carries its own context */
    }
    unsigned grid[3] = { p->gridDimX, p->gridDimY, p->gridDimZ };
    unsigned block[3] = { p->blockDimX, p->blockDimY, p->blockDimZ };
    return knode_make(k, f, h, ctx, grid, block, p->sharedMemBytes, p->kernelParams, p->extra);
}

/* ---- graphs ------------------------------------------------------------------------------ */

/* Dependencies of node i live in a side array of the graph, indexed by node index. */
typedef struct fc_graph_x {
    fc_graph g;
    fc_gnode_deps *deps;
    int cap;
} fc_graph_x;

fc_graph *fc_graph_new(void)
{
    fc_graph_x *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    x->g.magic = FC_M_GRAPH;
    pthread_mutex_init(&x->g.mu, NULL);
    fc_reg_add(&x->g);
    FC_COUNT(graphs_created);
    return &x->g;
}

void fc_graph_free(fc_graph *g)
{
    fc_graph_x *x = (fc_graph_x *)g;
    fc_reg_del(g);
    for (fc_node *n = g->first, *next; n; n = next) {
        next = n->next;
        fc_reg_del(n);
        knode_clear(&n->k);
        n->magic = 0;
        free(n);
    }
    for (int i = 0; i < g->n; i++)
        free(x->deps[i].idx);
    free(x->deps);
    pthread_mutex_destroy(&g->mu);
    g->magic = 0;
    free(x);
}

static fc_graph *graph_get(CUgraph h)
{
    fc_graph *g = (fc_graph *)h;
    return fc_valid(g, FC_M_GRAPH) ? g : NULL;
}

static fc_node *node_get(CUgraphNode h)
{
    fc_node *n = (fc_node *)h;
    return fc_valid(n, FC_M_NODE) ? n : NULL;
}

/* Appends a node (taking k) with the given dependencies; g->mu held. */
static CUresult append_locked(fc_graph *g, fc_knode *k, fc_node *const *deps, size_t ndeps,
                              fc_node **out)
{
    fc_graph_x *x = (fc_graph_x *)g;
    for (size_t i = 0; i < ndeps; i++)
        for (size_t j = 0; j < i; j++)
            if (deps[i] == deps[j])
                return CUDA_ERROR_INVALID_VALUE; /* duplicate dependency */
    if (g->n == x->cap) {
        int ncap = x->cap ? x->cap * 2 : 16;
        fc_gnode_deps *d = realloc(x->deps, (size_t)ncap * sizeof *d);
        if (!d)
            return CUDA_ERROR_OUT_OF_MEMORY;
        x->deps = d;
        x->cap = ncap;
    }
    fc_node *n = calloc(1, sizeof *n);
    int *idx = ndeps ? malloc(ndeps * sizeof *idx) : NULL;
    if (!n || (ndeps && !idx)) {
        free(n);
        free(idx);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < ndeps; i++)
        idx[i] = FC_EDGE(deps[i]->index, FC_EDGE_DEFAULT);
    n->magic = FC_M_NODE;
    n->g = g;
    n->index = g->n;
    n->k = *k;
    x->deps[g->n].n = (int)ndeps;
    x->deps[g->n].idx = idx;
    g->n++;
    if (g->last)
        g->last->next = n;
    else
        g->first = n;
    g->last = n;
    fc_reg_add(n);
    *out = n;
    return CUDA_SUCCESS;
}

CUresult fc_graph_append_kernel(fc_graph *g, fc_node *after, const fc_func *f, const void *h,
                                fc_ctx *ctx, const unsigned grid[3], const unsigned block[3],
                                unsigned smem, void **params, void **extra, fc_node **out)
{
    fc_knode k;
    CUresult r = knode_make(&k, f, h, ctx, grid, block, smem, params, extra);
    if (r)
        return r;
    pthread_mutex_lock(&g->mu);
    r = append_locked(g, &k, after ? &after : NULL, after ? 1 : 0, out);
    pthread_mutex_unlock(&g->mu);
    if (r)
        knode_clear(&k);
    return r;
}

FC_EXPORT CUresult CUDAAPI cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
    FC_ENTER();
    if (!phGraph || flags)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_graph *g = fc_graph_new();
    if (!g)
        return fc_err(CUDA_ERROR_OUT_OF_MEMORY);
    *phGraph = (CUgraph)g;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph)
{
    FC_ENTER();
    fc_graph *g = graph_get(hGraph);
    if (!g)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_graph_free(g);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
                                                   const CUgraphNode *dependencies,
                                                   size_t numDependencies,
                                                   const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    FC_ENTER();
    fc_graph *g = graph_get(hGraph);
    if (!g || !phGraphNode || (numDependencies && !dependencies))
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_node *small[8], **deps = numDependencies <= 8 ? small : malloc(numDependencies * sizeof *deps);
    if (!deps)
        return fc_err(CUDA_ERROR_OUT_OF_MEMORY);
    CUresult r = CUDA_SUCCESS;
    for (size_t i = 0; i < numDependencies && !r; i++) {
        deps[i] = node_get(dependencies[i]);
        if (!deps[i] || deps[i]->g != g)
            r = CUDA_ERROR_INVALID_VALUE;
    }
    fc_knode k;
    if (!r && !(r = knode_from_params(&k, nodeParams))) {
        fc_node *n = NULL;
        pthread_mutex_lock(&g->mu);
        r = append_locked(g, &k, deps, numDependencies, &n);
        pthread_mutex_unlock(&g->mu);
        if (r)
            knode_clear(&k);
        else
            *phGraphNode = (CUgraphNode)n;
    }
    if (deps != small)
        free(deps);
    if (r)
        return fc_err(r);
    FC_COUNT(graph_nodes_added);
    return CUDA_SUCCESS;
}

/* Edge data as the driver checks it: a programmatic edge leaves a kernel node's programmatic
 * or launch-order port; to_port and the reserved bytes are 0. -1: refused. */
static int edge_kind(const CUgraphEdgeData *d)
{
    if (!d)
        return FC_EDGE_DEFAULT;
    for (int i = 0; i < 5; i++)
        if (d->reserved[i])
            return -1;
    if (d->to_port)
        return -1;
    if (d->type == CU_GRAPH_DEPENDENCY_TYPE_DEFAULT)
        return d->from_port == CU_GRAPH_KERNEL_NODE_PORT_DEFAULT ? FC_EDGE_DEFAULT : -1;
    if (d->type != CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC)
        return -1;
    if (d->from_port == CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC)
        return FC_EDGE_PROG;
    if (d->from_port == CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER)
        return FC_EDGE_PROG_LAUNCH_ORDER;
    return -1;
}

/* Adds edges from[i] -> to[i]. The fake runs nodes in creation order, so an edge must go from
 * an earlier node to a later one (the driver would take any acyclic edge); a duplicate edge is
 * refused, as by the driver. All edges are checked before any is added. */
FC_EXPORT CUresult CUDAAPI cuGraphAddDependencies_v2(CUgraph hGraph, const CUgraphNode *from,
                                                     const CUgraphNode *to,
                                                     const CUgraphEdgeData *edgeData,
                                                     size_t numDependencies)
{
    FC_ENTER();
    fc_graph *g = graph_get(hGraph);
    if (!g || (numDependencies && (!from || !to)))
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_graph_x *x = (fc_graph_x *)g;
    CUresult r = CUDA_SUCCESS;
    size_t nprog = 0;
    pthread_mutex_lock(&g->mu);
    for (size_t i = 0; i < numDependencies && !r; i++) {
        fc_node *a = node_get(from[i]), *b = node_get(to[i]);
        int kind = edge_kind(edgeData ? &edgeData[i] : NULL);
        if (!a || !b || a->g != g || b->g != g || a->index >= b->index || kind < 0) {
            r = CUDA_ERROR_INVALID_VALUE;
            break;
        }
        nprog += kind != FC_EDGE_DEFAULT;
        fc_gnode_deps *d = &x->deps[b->index];
        for (int j = 0; j < d->n; j++)
            if (FC_EDGE_INDEX(d->idx[j]) == a->index)
                r = CUDA_ERROR_INVALID_VALUE; /* already an edge */
        for (size_t j = 0; j < i; j++)
            if (from[j] == from[i] && to[j] == to[i])
                r = CUDA_ERROR_INVALID_VALUE;
    }
    for (size_t i = 0; i < numDependencies && !r; i++) {
        fc_gnode_deps *d = &x->deps[node_get(to[i])->index];
        int *idx = realloc(d->idx, (size_t)(d->n + 1) * sizeof *idx);
        if (!idx) {
            r = CUDA_ERROR_OUT_OF_MEMORY; /* (edges before this one stay: unlikely enough) */
            break;
        }
        idx[d->n++] = FC_EDGE(node_get(from[i])->index, edge_kind(edgeData ? &edgeData[i] : NULL));
        d->idx = idx;
    }
    pthread_mutex_unlock(&g->mu);
    if (r)
        return fc_err(r);
    for (size_t i = 0; i < nprog; i++)
        FC_COUNT(programmatic_edges);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphKernelNodeSetParams_v2(CUgraphNode hNode,
                                                         const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    FC_ENTER();
    fc_node *n = node_get(hNode);
    if (!n)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_knode k;
    CUresult r = knode_from_params(&k, nodeParams);
    if (r)
        return fc_err(r);
    pthread_mutex_lock(&n->g->mu);
    k.coop = n->k.coop; /* attributes stay */
    k.priority = n->k.priority;
    knode_clear(&n->k);
    n->k = k;
    pthread_mutex_unlock(&n->g->mu);
    FC_COUNT(node_set_params);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphKernelNodeSetAttribute(CUgraphNode hNode, CUkernelNodeAttrID attr,
                                                         const CUkernelNodeAttrValue *value)
{
    FC_ENTER();
    fc_node *n = node_get(hNode);
    if (!n || !value)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&n->g->mu);
    switch ((int)attr) {
    case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
        n->k.coop = value->cooperative;
        break;
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
        n->k.priority = value->priority;
        break;
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
    case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
    case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
    case CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE:
        break;
    default: /* launch-only attributes have no meaning on a node */
        r = CUDA_ERROR_INVALID_VALUE;
        break;
    }
    pthread_mutex_unlock(&n->g->mu);
    if (r)
        return fc_err(r);
    FC_COUNT(node_set_attributes);
    return CUDA_SUCCESS;
}

/* ---- execs ------------------------------------------------------------------------------- */

static void exec_free(fc_exec *e)
{
    for (int i = 0; i < e->n; i++) {
        knode_clear(&e->nodes[i]);
        if (e->deps)
            free(e->deps[i]);
    }
    free(e->nodes);
    free(e->orig);
    free(e->deps);
    free(e->ndeps);
    pthread_mutex_destroy(&e->mu);
    e->magic = 0;
    free(e);
}

static int copy_node_live(const fc_knode *k);

FC_EXPORT CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                       unsigned long long flags)
{
    FC_ENTER();
    if (fc_t_launcher)
        FC_COUNT(launcher_instantiations);
    fc_graph *g = graph_get(hGraph);
    if (!g || !phGraphExec || (flags & ~0xFull))
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_graph_x *x = (fc_graph_x *)g;
    fc_exec *e = calloc(1, sizeof *e);
    if (!e)
        return fc_err(CUDA_ERROR_OUT_OF_MEMORY);
    e->magic = FC_M_EXEC;
    pthread_mutex_init(&e->mu, NULL);
    pthread_mutex_lock(&g->mu);
    int n = g->n;
    size_t cnt = n ? (size_t)n : 1;
    e->nodes = calloc(cnt, sizeof *e->nodes);
    e->orig = calloc(cnt, sizeof *e->orig);
    e->deps = calloc(cnt, sizeof *e->deps);
    e->ndeps = calloc(cnt, sizeof *e->ndeps);
    CUresult r = e->nodes && e->orig && e->deps && e->ndeps ? CUDA_SUCCESS
                                                            : CUDA_ERROR_OUT_OF_MEMORY;
    int i = 0;
    for (fc_node *nd = g->first; nd && !r; nd = nd->next, i++) {
        e->n = i + 1;
        e->orig[i] = nd;
        e->ndeps[i] = x->deps[i].n;
        if (x->deps[i].n) {
            e->deps[i] = malloc((size_t)x->deps[i].n * sizeof(int));
            if (!e->deps[i]) {
                r = CUDA_ERROR_OUT_OF_MEMORY;
                break;
            }
            memcpy(e->deps[i], x->deps[i].idx, (size_t)x->deps[i].n * sizeof(int));
        }
        /* a memset or memcpy node's device memory is checked again: freed since the node was
         * added, instantiation fails (Thrust's temporaries, H100, sixteenth session) */
        if (fc_is_copy_fn(nd->k.def.fn) && !copy_node_live(&nd->k)) {
            r = CUDA_ERROR_INVALID_VALUE;
            break;
        }
        r = knode_copy(&e->nodes[i], &nd->k);
        if (r) {
            e->nodes[i].blob = NULL;
            break;
        }
        /* and instantiation snapshots them again (a handle still alive), but refuses nothing:
         * the driver instantiates a node made under a limit that was lowered since
         * (kernels/attr_probe, H100, driver 580) */
        const fc_func *f = fc_func_get(nd->k.origin, 0);
        if (f && f == nd->k.fn_obj)
            fc_attrs_now(f, &e->nodes[i].attrs);
    }
    pthread_mutex_unlock(&g->mu);
    if (r) {
        exec_free(e);
        return fc_err(r);
    }
    fc_reg_add(e);
    *phGraphExec = (CUgraphExec)e;
    FC_COUNT(instantiations);
    return CUDA_SUCCESS;
}

static fc_exec *exec_get(CUgraphExec h)
{
    fc_exec *e = (fc_exec *)h;
    return fc_valid(e, FC_M_EXEC) ? e : NULL;
}

FC_EXPORT CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    FC_ENTER();
    fc_exec *e = exec_get(hGraphExec);
    if (!e)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_reg_del(e);
    exec_free(e);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec,
                                                             CUgraphNode hNode,
                                                             const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    FC_ENTER();
    fc_exec *e = exec_get(hGraphExec);
    fc_node *n = node_get(hNode);
    if (!e || !n)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_knode k;
    CUresult r = knode_from_params(&k, nodeParams);
    if (r)
        return fc_err(r);
    pthread_mutex_lock(&e->mu);
    int i;
    for (i = 0; i < e->n && e->orig[i] != n; i++)
        ;
    if (i == e->n) {
        r = CUDA_ERROR_INVALID_VALUE; /* not a node of the exec's graph */
    } else if (k.origin != e->nodes[i].origin &&
               (k.ctx != e->nodes[i].ctx || k.fctx != e->nodes[i].fctx)) {
        r = CUDA_ERROR_INVALID_VALUE; /* CUDA 13: a node's function may change, its context not */
    } else {
        k.coop = e->nodes[i].coop;
        k.priority = e->nodes[i].priority;
        if (k.origin == e->nodes[i].origin)
            k.attrs = e->nodes[i].attrs; /* the exec's snapshot, from its instantiation */
        /* (another function: its attributes now, as made by knode_from_params) */
        knode_clear(&e->nodes[i]);
        e->nodes[i] = k;
    }
    pthread_mutex_unlock(&e->mu);
    if (r) {
        knode_clear(&k);
        return fc_err(r);
    }
    FC_COUNT(exec_node_updates);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
                                                CUgraphExecUpdateResultInfo *resultInfo)
{
    FC_ENTER();
    fc_exec *e = exec_get(hGraphExec);
    fc_graph *g = graph_get(hGraph);
    if (!e || !g || !resultInfo)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_graph_x *x = (fc_graph_x *)g;
    memset(resultInfo, 0, sizeof *resultInfo);
    pthread_mutex_lock(&g->mu);
    pthread_mutex_lock(&e->mu);
    CUgraphExecUpdateResult res = CU_GRAPH_EXEC_UPDATE_SUCCESS;
    fc_node *bad = NULL;
    if (g->n != e->n) {
        res = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    } else {
        int i = 0;
        for (fc_node *nd = g->first; nd; nd = nd->next, i++) {
            if (x->deps[i].n != e->ndeps[i] ||
                (e->ndeps[i] &&
                 memcmp(x->deps[i].idx, e->deps[i], (size_t)e->ndeps[i] * sizeof(int)))) {
                res = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
                bad = nd;
                break;
            }
            if (nd->k.origin != e->nodes[i].origin &&
                (nd->k.ctx != e->nodes[i].ctx || nd->k.fctx != e->nodes[i].fctx)) {
                res = CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED; /* (its context changed) */
                bad = nd;
                break;
            }
        }
    }
    CUresult r = CUDA_SUCCESS;
    if (res == CU_GRAPH_EXEC_UPDATE_SUCCESS) {
        /* copy everything first, so that a failure leaves the exec as it was */
        fc_knode *fresh = calloc(e->n ? (size_t)e->n : 1, sizeof *fresh);
        int i = 0;
        if (!fresh)
            r = CUDA_ERROR_OUT_OF_MEMORY;
        for (fc_node *nd = g->first; nd && !r; nd = nd->next, i++)
            r = knode_copy(&fresh[i], &nd->k);
        if (!r) {
            for (i = 0; i < e->n; i++) {
                knode_clear(&e->nodes[i]);
                e->nodes[i] = fresh[i];
            }
        } else if (fresh) {
            for (int j = 0; j < i; j++)
                knode_clear(&fresh[j]);
        }
        free(fresh);
    } else {
        r = CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    }
    pthread_mutex_unlock(&e->mu);
    pthread_mutex_unlock(&g->mu);
    resultInfo->result = res;
    resultInfo->errorNode = (CUgraphNode)bad;
    if (r)
        return fc_err(r);
    FC_COUNT(exec_updates);
    return CUDA_SUCCESS;
}

/* ---- upload and launch ------------------------------------------------------------------- */

static CUresult upload(CUgraphExec h, CUstream hs, int ptsz)
{
    CUresult r;
    fc_exec *e = exec_get(h);
    if (!e)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_stream *s = fc_stream_resolve(hs, ptsz, &r);
    if (!s)
        return fc_err(r);
    if ((r = fc_enqueue_marker(s)))
        return fc_err(r);
    FC_COUNT(graph_uploads);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{
    FC_ENTER();
    return upload(hGraphExec, hStream, 0);
}

FC_EXPORT CUresult CUDAAPI cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    FC_ENTER();
    return upload(hGraphExec, hStream, 1);
}

static CUresult graph_launch(CUgraphExec h, CUstream hs, int ptsz)
{
    CUresult r;
    fc_exec *e = exec_get(h);
    if (!e)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_stream *s = fc_stream_resolve(hs, ptsz, &r);
    if (!s)
        return fc_err(r);
    if ((r = fc_check_current(s)))
        return fc_err(r);
    pthread_mutex_lock(&e->mu);
    int n = e->n;
    for (int i = 0; i < n; i++)
        if ((e->nodes[i].fctx && e->nodes[i].fctx != s->ctx) ||
            (e->nodes[i].is_kern && e->nodes[i].ctx && e->nodes[i].ctx != s->ctx)) {
            pthread_mutex_unlock(&e->mu);
            return fc_err(CUDA_ERROR_INVALID_CONTEXT); /* nodes of another context */
        }
    fc_kcall *k = calloc(n > 0 ? (size_t)n : 1, sizeof *k);
    if (!k) {
        pthread_mutex_unlock(&e->mu);
        return fc_err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    for (int i = 0; i < n; i++) {
        const fc_knode *kn = &e->nodes[i];
        k[i].fn = kn->def.fn;
        memcpy(k[i].grid, kn->grid, sizeof k[i].grid);
        memcpy(k[i].block, kn->block, sizeof k[i].block);
        k[i].size = kn->def.size;
        k[i].blob = kn->blob; /* copied again by the enqueue, under e->mu */
        k[i].attrs = kn->attrs;
        for (int j = 0; j < e->ndeps[i]; j++)
            if (FC_EDGE_KIND(e->deps[i][j]) != FC_EDGE_DEFAULT)
                k[i].attrs.v[FAKECUDA_ATTR_PROGRAMMATIC] =
                    FC_EDGE_KIND(e->deps[i][j]) == FC_EDGE_PROG ? CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC
                                                                : CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER;
    }
    r = fc_enqueue_kernels(s, k, n, 1);
    pthread_mutex_unlock(&e->mu);
    free(k);
    if (r)
        return fc_err(r);
    FC_COUNT(graph_launches);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
    FC_ENTER();
    return graph_launch(hGraphExec, hStream, 0);
}

FC_EXPORT CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    FC_ENTER();
    return graph_launch(hGraphExec, hStream, 1);
}

/* ---- memset and memcpy nodes ------------------------------------------------------------- */

/* A memset or memcpy node is a node whose "kernel" is one of the two bodies below, with the
 * operation in its blob: it runs as an item in stream order like any node, and exec updates,
 * whole-graph updates and launches treat it like a kernel node (the body cannot change). */
typedef struct fc_copy_blob {
    void *dst;
    const void *src;
    size_t n;                        /* memset: elements; memcpy: bytes */
    uint32_t val;
    unsigned elem;                   /* memset element size */
    int dkind, skind;                /* memcpy: CUmemorytype of each side */
} fc_copy_blob;

static void memset_node_fn(const void *params, const unsigned grid[3], const unsigned block[3])
{
    (void)grid;
    (void)block;
    const fc_copy_blob *b = params;
    fc_memset_run(b->dst, b->val, b->elem, b->n);
}

static void memcpy_node_fn(const void *params, const unsigned grid[3], const unsigned block[3])
{
    (void)grid;
    (void)block;
    const fc_copy_blob *b = params;
    memmove(b->dst, b->src, b->n);
}

int fc_is_copy_fn(fakecuda_kernel_fn fn)
{
    return fn == memset_node_fn || fn == memcpy_node_fn;
}

/* Whether [p, p+n) is device (or managed) memory of a live allocation. */
static int device_range(uintptr_t p, size_t n)
{
    int k = fc_mem_kind(p, n);
    return k == 0 || k == 2;
}

/* Whether a copy node's device memory is still allocated. */
static int copy_node_live(const fc_knode *k)
{
    const fc_copy_blob *b = (const fc_copy_blob *)k->blob;
    if (k->def.fn == memset_node_fn)
        return device_range((uintptr_t)b->dst, b->n * b->elem);
    return (b->dkind != CU_MEMORYTYPE_DEVICE || device_range((uintptr_t)b->dst, b->n)) &&
           (b->skind != CU_MEMORYTYPE_DEVICE || device_range((uintptr_t)b->src, b->n));
}

static CUresult copy_knode(fc_knode *k, fakecuda_kernel_fn fn, const fc_copy_blob *b,
                           CUcontext ctx)
{
    memset(k, 0, sizeof *k);
    if (ctx && (!fc_valid(ctx, FC_M_CTX) || ((fc_ctx *)ctx)->destroyed))
        return CUDA_ERROR_INVALID_CONTEXT;
    k->def.fn = fn;
    k->def.size = sizeof *b;
    strcpy(k->def.name, fn == memset_node_fn ? "memset" : "memcpy");
    k->ctx = ctx ? (fc_ctx *)ctx : fc_current_ctx();
    k->grid[0] = k->grid[1] = k->grid[2] = 1;
    k->block[0] = k->block[1] = k->block[2] = 1;
    if (!(k->blob = malloc(sizeof *b)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    memcpy(k->blob, b, sizeof *b);
    return CUDA_SUCCESS;
}

/* 1D memsets of device memory only (what libautograph makes). */
static CUresult memset_blob(const CUDA_MEMSET_NODE_PARAMS *p, fc_copy_blob *b)
{
    memset(b, 0, sizeof *b);
    if (!p || !p->width || p->height != 1 ||
        (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) ||
        (p->dst & (p->elementSize - 1)) || !device_range((uintptr_t)p->dst, p->width * p->elementSize))
        return CUDA_ERROR_INVALID_VALUE;
    b->dst = (void *)(uintptr_t)p->dst;
    b->n = p->width;
    b->val = p->value;
    b->elem = p->elementSize;
    return CUDA_SUCCESS;
}

/* 1D copies between device and host memory (pinned or pageable: a graph memcpy node may
 * target pageable host memory, brief/costs.md). */
static CUresult side(CUmemorytype t, CUdeviceptr d, const void *h, size_t n, int *kind,
                     const void **out)
{
    if (t == CU_MEMORYTYPE_DEVICE) {
        if (!device_range((uintptr_t)d, n))
            return CUDA_ERROR_INVALID_VALUE;
        *out = (const void *)(uintptr_t)d;
    } else if (t == CU_MEMORYTYPE_HOST) {
        if (!h)
            return CUDA_ERROR_INVALID_VALUE;
        *out = h;
    } else {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    *kind = (int)t;
    return CUDA_SUCCESS;
}

static CUresult memcpy_blob(const CUDA_MEMCPY3D *p, fc_copy_blob *b)
{
    memset(b, 0, sizeof *b);
    if (!p || !p->WidthInBytes || p->Height != 1 || p->Depth != 1 || p->srcXInBytes ||
        p->srcY || p->srcZ || p->dstXInBytes || p->dstY || p->dstZ)
        return CUDA_ERROR_INVALID_VALUE;
    const void *dst = NULL, *src = NULL;
    CUresult r = side(p->dstMemoryType, p->dstDevice, p->dstHost, p->WidthInBytes, &b->dkind,
                      &dst);
    if (!r)
        r = side(p->srcMemoryType, p->srcDevice, p->srcHost, p->WidthInBytes, &b->skind, &src);
    b->dst = (void *)dst;
    b->src = src;
    b->n = p->WidthInBytes;
    return r;
}

static CUresult add_copy_node(CUgraphNode *ph, CUgraph hg, const CUgraphNode *deps, size_t nd,
                              fakecuda_kernel_fn fn, const fc_copy_blob *b, CUcontext ctx)
{
    fc_graph *g = graph_get(hg);
    if (!g || !ph || (nd && !deps) || nd > 8)
        return CUDA_ERROR_INVALID_VALUE;
    fc_node *dn[8];
    for (size_t i = 0; i < nd; i++)
        if (!(dn[i] = node_get(deps[i])) || dn[i]->g != g)
            return CUDA_ERROR_INVALID_VALUE;
    fc_knode k;
    CUresult r = copy_knode(&k, fn, b, ctx);
    if (r)
        return r;
    fc_node *n = NULL;
    pthread_mutex_lock(&g->mu);
    r = append_locked(g, &k, dn, nd, &n);
    pthread_mutex_unlock(&g->mu);
    if (r) {
        knode_clear(&k);
        return r;
    }
    *ph = (CUgraphNode)n;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                                const CUgraphNode *dependencies,
                                                size_t numDependencies,
                                                const CUDA_MEMSET_NODE_PARAMS *memsetParams,
                                                CUcontext ctx)
{
    FC_ENTER();
    fc_copy_blob b;
    CUresult r = memset_blob(memsetParams, &b);
    if (!r)
        r = add_copy_node(phGraphNode, hGraph, dependencies, numDependencies, memset_node_fn, &b,
                          ctx);
    if (r)
        return fc_err(r);
    FC_COUNT(memset_nodes_added);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphAddMemcpyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                                const CUgraphNode *dependencies,
                                                size_t numDependencies,
                                                const CUDA_MEMCPY3D *copyParams, CUcontext ctx)
{
    FC_ENTER();
    fc_copy_blob b;
    CUresult r = memcpy_blob(copyParams, &b);
    if (!r)
        r = add_copy_node(phGraphNode, hGraph, dependencies, numDependencies, memcpy_node_fn, &b,
                          ctx);
    if (r)
        return fc_err(r);
    FC_COUNT(memcpy_nodes_added);
    return CUDA_SUCCESS;
}

/* The template graph's node: any new parameters of the same kind of operation. */
static CUresult set_graph_copy(CUgraphNode h, fakecuda_kernel_fn fn, const fc_copy_blob *b)
{
    fc_node *n = node_get(h);
    if (!n || n->k.def.fn != fn)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&n->g->mu);
    memcpy(n->k.blob, b, sizeof *b);
    pthread_mutex_unlock(&n->g->mu);
    FC_COUNT(copy_node_set_params);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphMemsetNodeSetParams(CUgraphNode hNode,
                                                      const CUDA_MEMSET_NODE_PARAMS *nodeParams)
{
    FC_ENTER();
    fc_copy_blob b;
    CUresult r = memset_blob(nodeParams, &b);
    if (!r)
        r = set_graph_copy(hNode, memset_node_fn, &b);
    return r ? fc_err(r) : CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphMemcpyNodeSetParams(CUgraphNode hNode,
                                                      const CUDA_MEMCPY3D *nodeParams)
{
    FC_ENTER();
    fc_copy_blob b;
    CUresult r = memcpy_blob(nodeParams, &b);
    if (!r)
        r = set_graph_copy(hNode, memcpy_node_fn, &b);
    return r ? fc_err(r) : CUDA_SUCCESS;
}

/* An exec's node: pointers and the memset value may change, as the driver allows for 1D
 * operations; the size, element size and memory types may not. */
static CUresult set_exec_copy(CUgraphExec hx, CUgraphNode hn, fakecuda_kernel_fn fn,
                              const fc_copy_blob *b)
{
    fc_exec *e = exec_get(hx);
    fc_node *n = node_get(hn);
    if (!e || !n)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&e->mu);
    int i;
    for (i = 0; i < e->n && e->orig[i] != n; i++)
        ;
    if (i == e->n || e->nodes[i].def.fn != fn) {
        r = CUDA_ERROR_INVALID_VALUE;
    } else {
        /* as the H100's driver 580 does (2026-11-27): a 1D memcpy node takes any other size
         * (21 bytes, then 22, 100, 4000, 1 were each copied exactly); a memset node refused a
         * width of 5000 for 21 (and took 22): here a memset's size never changes */
        const fc_copy_blob *old = (const fc_copy_blob *)e->nodes[i].blob;
        if ((fn == memset_node_fn && old->n != b->n) || old->elem != b->elem ||
            old->dkind != b->dkind || old->skind != b->skind)
            r = CUDA_ERROR_INVALID_VALUE;
        else
            memcpy(e->nodes[i].blob, b, sizeof *b);
    }
    pthread_mutex_unlock(&e->mu);
    if (!r)
        FC_COUNT(exec_copy_node_updates);
    return r;
}

FC_EXPORT CUresult CUDAAPI cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                          const CUDA_MEMSET_NODE_PARAMS *memsetParams,
                                                          CUcontext ctx)
{
    FC_ENTER();
    (void)ctx;
    fc_copy_blob b;
    CUresult r = memset_blob(memsetParams, &b);
    if (!r)
        r = set_exec_copy(hGraphExec, hNode, memset_node_fn, &b);
    return r ? fc_err(r) : CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                          const CUDA_MEMCPY3D *copyParams,
                                                          CUcontext ctx)
{
    FC_ENTER();
    (void)ctx;
    fc_copy_blob b;
    CUresult r = memcpy_blob(copyParams, &b);
    if (!r)
        r = set_exec_copy(hGraphExec, hNode, memcpy_node_fn, &b);
    return r ? fc_err(r) : CUDA_SUCCESS;
}
