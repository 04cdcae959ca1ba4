/* Async memsets and copies as records of held sequences and as graph nodes (see copy.h). */
#include "cache/copy.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "policy/options.h"
#include "policy/stats.h"
#include "cache/clock.h"
#include "cache/driver.h"
#include "cache/gpumark.h"
#include "cache/internal.h"
#include "cache/tracerec.h"

/* A copy record's values, in its arena blob: what an exec update may change. */
typedef struct copy_vals {
    uint64_t dst, src, value;
} copy_vals;

/* One layout per (entry, destination kind, source kind): the shape's `fn` points to it, so the
 * operation and its memory kinds are part of the shape (a different kind is another shape),
 * and the layout describes the three values for the held-launch machinery. The size is in
 * the shape's attr_hash (a field of the shape proper, never a value). */
typedef struct copy_lay {
    ag_layout lay;           /* first: the shape's fn and the record's lay point here */
    uint8_t entry, dk, sk;
} copy_lay;

static copy_lay g_lay[AG_CP_COUNT][AG_MEM_COUNT][AG_MEM_COUNT];
static uint32_t g_off[3] = { 0, 8, 16 }, g_sz[3] = { 8, 8, 8 };
static pthread_once_t g_lay_once = PTHREAD_ONCE_INIT;

static const char *const entry_name[AG_CP_COUNT] = {
    "memsetD8", "memsetD16", "memsetD32", "memcpy", "memcpyHtoD", "memcpyDtoH", "memcpyDtoD",
};
static const char *const mem_name[AG_MEM_COUNT] = { "-", "device", "pinned", "pageable",
                                                    "managed" };

static void lay_init(void)
{
    for (int e = 0; e < AG_CP_COUNT; e++)
        for (int d = 0; d < AG_MEM_COUNT; d++)
            for (int s = 0; s < AG_MEM_COUNT; s++) {
                copy_lay *c = &g_lay[e][d][s];
                c->lay.handle = c;
                c->lay.graphable = 1;
                c->lay.dense = 1;
                c->lay.nparams = 3;
                c->lay.size = sizeof(copy_vals);
                c->lay.off = g_off;
                c->lay.sz = g_sz;
                c->entry = (uint8_t)e;
                c->dk = (uint8_t)d;
                c->sk = (uint8_t)s;
                if (e <= AG_CP_MEMSET32)
                    snprintf(c->lay.name, sizeof c->lay.name, "[%s %s]", entry_name[e],
                             mem_name[d]);
                else
                    snprintf(c->lay.name, sizeof c->lay.name, "[%s %s<-%s]", entry_name[e],
                             mem_name[d], mem_name[s]);
            }
}

const ag_layout *ag_copy_layout(const void *fn)
{
    return (const ag_layout *)fn;
}

static const copy_lay *lay_of(const ag_layout *l)
{
    return (const copy_lay *)l;
}

static int is_memset(int entry)
{
    return entry <= AG_CP_MEMSET32;
}

/* ---- memory kinds ------------------------------------------------------------------------ */

/* What p is. Memory the driver does not know is pageable host memory. */
static int mem_kind(CUdeviceptr p)
{
    unsigned int type = 0, managed = 0;
    if (ag_drv.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p))
        return AG_MEM_PAGEABLE;
    if (!ag_drv.cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p) && managed)
        return AG_MEM_MANAGED;
    if (type == CU_MEMORYTYPE_DEVICE)
        return AG_MEM_DEVICE;
    if (type == CU_MEMORYTYPE_HOST) {
        /* host memory is pinned only inside a cuMemAllocHost / cuMemHostAlloc allocation: a
         * driver with heterogeneous memory management may call pageable memory "host" too,
         * and holding a copy from pageable memory would read it too late (registered memory
         * is not told apart from that: it is treated as pageable, never wrongly held) */
        unsigned int flags;
        return ag_drv.cuMemHostGetFlags &&
                       !ag_drv.cuMemHostGetFlags(&flags, (void *)(uintptr_t)p)
                   ? AG_MEM_PINNED
                   : AG_MEM_PAGEABLE;
    }
    return AG_MEM_MANAGED; /* anything else (arrays, unified): never a node */
}

/* What a pointer is, remembered per thread (programs copy to and from the same few buffers
 * every iteration; each answer costs two driver calls). A free, unregistration or context
 * teardown may give an address another kind: every such call forgets all answers first
 * (ag_copy_forget). An address that becomes pinned (cuMemHostRegister) may be remembered as
 * pageable for a while: it is then only not held. */
typedef struct kind_slot {
    CUdeviceptr p;
    unsigned long gen;
    int kind;
} kind_slot;
static atomic_ulong g_kind_gen = 1;
static __thread kind_slot t_kinds[16] __attribute__((tls_model("initial-exec")));

void ag_copy_forget(void)
{
    atomic_fetch_add_explicit(&g_kind_gen, 1, memory_order_acq_rel);
}

static int mem_kind_cached(CUdeviceptr p)
{
    unsigned long gen = atomic_load_explicit(&g_kind_gen, memory_order_acquire);
    kind_slot *k = &t_kinds[(uint64_t)p * 0x9E3779B97F4A7C15ull >> 60]; /* 16 slots */
    if (k->p == p && k->gen == gen)
        return k->kind;
    int kind = mem_kind(p);
    k->p = p;
    k->gen = gen;
    k->kind = kind;
    return kind;
}

int ag_copy_mem_kind(CUdeviceptr p)
{
    return mem_kind_cached(p);
}

/* Whether an operation with these kinds may be a graph node under mode. */
static int may_hold(int mode, int entry, int dk, int sk)
{
    if (dk == AG_MEM_MANAGED || sk == AG_MEM_MANAGED)
        return 0; /* migrations and faults: not graphed */
    if (is_memset(entry))
        return dk == AG_MEM_DEVICE;
    /* the driver reads a pageable source when the call is made (the program may overwrite it
     * as soon as the call returns): holding such a copy would read it later */
    if (sk == AG_MEM_PAGEABLE)
        return 0;
    if (dk == AG_MEM_PAGEABLE)
        return mode == AG_COPY_ALL; /* a graph node into pageable memory: see CONFIG.md */
    return 1;
}

/* A copy into pageable host memory returns only once it is done (drivers make it so, and
 * programs read the result right after the call), so such a copy ends its sequence: what is
 * held goes out with it -- as the template's graph when it completes one -- and the call waits
 * for the stream before it returns, as the driver's own call would. */
static int waits(int entry, int dk)
{
    return !is_memset(entry) && dk == AG_MEM_PAGEABLE;
}

/* After op went out or was held (st->mu held): a copy that waits ends the segment, sends what
 * is held and waits for the stream; r (the call's own result) or the error it meets. */
static CUresult end_if_waits(ag_stream *st, const ag_copy *op, int dk, CUresult r)
{
    if (!waits(op->entry, dk))
        return r;
    ag_order_locked(st, AG_ST_FL_COPY);
    CUresult w = ag_drv.cuStreamSynchronize(st->issue);
    if (r == CUDA_SUCCESS)
        r = w;
    return st->err ? ag_stream_error_take(st, r) : r;
}

/* ---- calling the driver ------------------------------------------------------------------ */

typedef CUresult (*memset8_fn)(CUdeviceptr, unsigned char, size_t, CUstream);
typedef CUresult (*memset16_fn)(CUdeviceptr, unsigned short, size_t, CUstream);
typedef CUresult (*memset32_fn)(CUdeviceptr, unsigned int, size_t, CUstream);
typedef CUresult (*dd_fn)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
typedef CUresult (*htod_fn)(CUdeviceptr, const void *, size_t, CUstream);
typedef CUresult (*dtoh_fn)(void *, CUdeviceptr, size_t, CUstream);

/* Calls fn, an entry point of kind `entry`, with these arguments. */
static CUresult call(int entry, void *fn, CUdeviceptr dst, CUdeviceptr src, uint32_t value,
                     size_t n, CUstream s)
{
    if (!fn)
        return CUDA_ERROR_NOT_FOUND;
    switch (entry) {
    case AG_CP_MEMSET8:
        return ((memset8_fn)fn)(dst, (unsigned char)value, n, s);
    case AG_CP_MEMSET16:
        return ((memset16_fn)fn)(dst, (unsigned short)value, n, s);
    case AG_CP_MEMSET32:
        return ((memset32_fn)fn)(dst, value, n, s);
    case AG_CP_HTOD:
        return ((htod_fn)fn)(dst, (const void *)(uintptr_t)src, n, s);
    case AG_CP_DTOH:
        return ((dtoh_fn)fn)((void *)(uintptr_t)dst, src, n, s);
    default: /* cuMemcpyAsync, cuMemcpyDtoDAsync_v2 */
        return ((dd_fn)fn)(dst, src, n, s);
    }
}

CUresult ag_copy_call(const ag_copy *op)
{
    return call(op->entry, op->real, op->dst, op->src, op->value, op->n, op->stream);
}

static void *plain_fn(int entry)
{
    switch (entry) {
    case AG_CP_MEMSET8: return (void *)ag_drv.cuMemsetD8Async;
    case AG_CP_MEMSET16: return (void *)ag_drv.cuMemsetD16Async;
    case AG_CP_MEMSET32: return (void *)ag_drv.cuMemsetD32Async;
    case AG_CP_MEMCPY: return (void *)ag_drv.cuMemcpyAsync;
    case AG_CP_HTOD: return (void *)ag_drv.cuMemcpyHtoDAsync_v2;
    case AG_CP_DTOH: return (void *)ag_drv.cuMemcpyDtoHAsync_v2;
    default: return (void *)ag_drv.cuMemcpyDtoDAsync_v2;
    }
}

/* A held record goes out as the application made it (the plain entry point, on the stream's
 * issue handle, like held launches), with the pointers and value saved when it was held. */
CUresult ag_copy_issue(ag_stream *st, const ag_rec *r)
{
    const copy_lay *c = lay_of(r->lay);
    copy_vals v;
    memcpy(&v, st->arena + r->blob, sizeof v);
    return call(c->entry, plain_fn(c->entry), v.dst, v.src, (uint32_t)v.value,
                (size_t)r->shape.attr_hash, st->issue);
}

/* ---- graph nodes --------------------------------------------------------------------------- */

static void memset_params(const ag_node *n, const copy_vals *v, CUDA_MEMSET_NODE_PARAMS *p)
{
    static const unsigned elem[3] = { 1, 2, 4 };
    memset(p, 0, sizeof *p);
    p->dst = v->dst;
    p->value = (unsigned)v->value;
    p->elementSize = elem[lay_of(n->lay)->entry];
    p->width = (size_t)n->shape.attr_hash;
    p->height = 1;
}

static void memcpy_params(const ag_node *n, const copy_vals *v, CUDA_MEMCPY3D *p)
{
    const copy_lay *c = lay_of(n->lay);
    memset(p, 0, sizeof *p);
    if (c->sk == AG_MEM_DEVICE) {
        p->srcMemoryType = CU_MEMORYTYPE_DEVICE;
        p->srcDevice = v->src;
    } else {
        p->srcMemoryType = CU_MEMORYTYPE_HOST;
        p->srcHost = (const void *)(uintptr_t)v->src;
    }
    if (c->dk == AG_MEM_DEVICE) {
        p->dstMemoryType = CU_MEMORYTYPE_DEVICE;
        p->dstDevice = v->dst;
    } else {
        p->dstMemoryType = CU_MEMORYTYPE_HOST;
        p->dstHost = (void *)(uintptr_t)v->dst;
    }
    p->WidthInBytes = (size_t)n->shape.attr_hash;
    p->Height = 1;
    p->Depth = 1;
}

CUresult ag_copy_add_node(CUgraph g, CUgraphNode prev, ag_node *n, const uint8_t *blob)
{
    copy_vals v;
    memcpy(&v, blob, sizeof v);
    if (is_memset(lay_of(n->lay)->entry)) {
        CUDA_MEMSET_NODE_PARAMS p;
        memset_params(n, &v, &p);
        return ag_drv.cuGraphAddMemsetNode(&n->node, g, prev ? &prev : NULL, prev ? 1 : 0, &p,
                                           n->shape.ctx);
    }
    CUDA_MEMCPY3D p;
    memcpy_params(n, &v, &p);
    return ag_drv.cuGraphAddMemcpyNode(&n->node, g, prev ? &prev : NULL, prev ? 1 : 0, &p,
                                       n->shape.ctx);
}

CUresult ag_copy_set_node(CUgraphExec x, ag_node *n, const uint8_t *blob)
{
    copy_vals v;
    memcpy(&v, blob, sizeof v);
    if (is_memset(lay_of(n->lay)->entry)) {
        CUDA_MEMSET_NODE_PARAMS p;
        memset_params(n, &v, &p);
        return x ? ag_drv.cuGraphExecMemsetNodeSetParams(x, n->node, &p, n->shape.ctx)
                 : ag_drv.cuGraphMemsetNodeSetParams(n->node, &p);
    }
    CUDA_MEMCPY3D p;
    memcpy_params(n, &v, &p);
    return x ? ag_drv.cuGraphExecMemcpyNodeSetParams(x, n->node, &p, n->shape.ctx)
             : ag_drv.cuGraphMemcpyNodeSetParams(n->node, &p);
}

/* ---- the offer --------------------------------------------------------------------------- */

/* Whether the driver gives us everything a copy node needs. */
static int have_driver(void)
{
    return ag_drv.cuPointerGetAttribute && ag_drv.cuGraphAddMemsetNode &&
           ag_drv.cuGraphAddMemcpyNode && ag_drv.cuGraphMemsetNodeSetParams &&
           ag_drv.cuGraphMemcpyNodeSetParams && ag_drv.cuGraphExecMemsetNodeSetParams &&
           ag_drv.cuGraphExecMemcpyNodeSetParams;
}

/* A copy's shape has no attributes (never read: its kind is not AG_KIND_ATTRS). */
static const CUlaunchAttribute no_attrs[1];

/* Holds op (the record's values copied now; host data never is). */
static int hold(ag_stream *st, const ag_copy *op, const ag_shape *sh, uint64_t h)
{
    uint64_t value = op->value, dst = op->dst, src = op->src;
    void *params[3] = { &dst, &src, &value };
    ag_launch l;
    memset(&l, 0, sizeof l);
    l.params = params;
    return ag_hold_one(st, &l, ag_copy_layout(sh->fn), sh, h, no_attrs);
}

/* Under st->mu: the copy joins the occurrence under way, starts one, or goes out now as a
 * record the learner sees. 0: not dealt with (nothing was changed). */
static int offer_locked(ag_stream *st, const ag_copy *op, const ag_shape *sh, uint64_t h,
                        int dk, CUresult *res)
{
    if (st->kind == AG_SK_DEAD)
        return 0;
    if (st->kind == AG_SK_PTDS)
        ag_ptds_join(st);
    if (!st->cand && ag_learn_rests(&st->learn))
        return 0; /* resting: an ordering point has nothing to end */
    ag_rest_end(st);
    if (ag_stream_prepare(st))
        return 0;
    if (st->cand) {
        if (st->cand->prof) { /* profile sequences are of kernels only */
            ag_flush_locked(st, AG_ST_FL_DIVERGE);
            goto idle;
        }
        if (!ag_node_matches(st->cand, st->pos + st->nheld, sh, h, no_attrs)) {
            ag_tmpl *U = ag_switch_candidate(st, sh, h, no_attrs);
            if (!U) {
                ag_flush_locked(st, AG_ST_FL_DIVERGE);
                goto idle;
            }
            ag_hold_switch(st, U);
        }
        if (hold(st, op, sh, h)) {
            ag_order_locked(st, AG_ST_FL_DIVERGE);
            return 0;
        }
        ag_hold_advance(st);
        *res = end_if_waits(st, op, dk, CUDA_SUCCESS);
        return 1;
    }
idle:;
    int captures = atomic_load_explicit(&ag_hot.captures, memory_order_acquire) != 0;
    ag_tmpl *T = captures ? NULL : ag_find_start(st, sh, h, no_attrs);
    if (T && st->kind == AG_SK_PTDS && ag_ptds_mark(st))
        T = NULL;
    if (T) {
        uint64_t now = ag_now_ns();
        st->cand = T;
        if (hold(st, op, sh, h) == 0) {
            ag_hold_begin(st, now);
            ag_hold_advance(st);
            *res = end_if_waits(st, op, dk, CUDA_SUCCESS);
            return 1;
        }
        st->cand = NULL;
    }
    ag_tmpl *U = st->ntmpl && ag_learn_starting(&st->learn) && !captures
                     ? ag_find_trial_start(st, sh, h, no_attrs)
                     : NULL;
    if (U)
        ag_mark_begin(st, U, 0);
    /* nothing is held here: the copy goes out now, in order, as the application made it, and
     * stays in the learner's sequence (no ordering point: the sequence goes on) */
    CUresult r = call(op->entry, op->real, op->dst, op->src, op->value, op->n, op->stream);
    if (r == CUDA_SUCCESS) {
        ag_learn_launch(st, h, sh, 0);
        if (waits(op->entry, dk))
            ag_order_locked(st, AG_ST_FL_COPY); /* done already: the driver's call waited */
    } else {
        ag_order_locked(st, AG_ST_FL_DIVERGE);
    }
    *res = r;
    return 1;
}

int ag_copy_offer(const ag_copy *op, CUresult *res)
{
    if (AG_UNLIKELY(ag_tr_active())) /* recording a trace (the engine is disabled) */
        return ag_tr_rec_copy(op, res);
    int mode = (int)ag_opt(AG_OPT_COPY_NODES);
    if (mode == AG_COPY_OFF || !op->n || op->entry >= AG_CP_COUNT || !ag_engine_on() ||
        atomic_load_explicit(&ag_hot.captures, memory_order_acquire) ||
        ag_rest_token_covers(op->stream) || !have_driver())
        return 0;
    ag_stream *st = ag_stream_of(op->stream, op->ptsz);
    if (!st || ag_rest_order_passes(st))
        return 0;
    int dk = mem_kind_cached(op->dst);
    int sk = is_memset(op->entry) ? AG_MEM_NONE : mem_kind_cached(op->src);
    if (!may_hold(mode, op->entry, dk, sk))
        return 0;
    pthread_once(&g_lay_once, lay_init);
    ag_shape sh;
    memset(&sh, 0, sizeof sh);
    sh.fn = &g_lay[op->entry][dk][sk].lay;
    sh.ctx = st->ctx;
    sh.kind = AG_KIND_COPY;
    sh.attr_hash = op->n;
    uint64_t h = ag_shape_hash(&sh);
    ag_cross_flush(st);
    ag_lock(&st->mu);
    int took = offer_locked(st, op, &sh, h, dk, res);
    ag_sync_open(st);
    ag_unlock(&st->mu);
    return took;
}
