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

/* A copy record's values, in its arena blob: what an exec update may change. A 1D copy's size
 * is one of them (the driver lets an exec update change it), so a loop whose copy grows by a
 * byte a step (a decode step's growing mask or id list) is one sequence; a memset's size is in
 * its shape too, as the driver may refuse to change it. */
typedef struct copy_vals {
    uint64_t dst, src, value, n;
} copy_vals;

/* One layout per (entry, destination kind, source kind): the shape's `fn` points to it, so the
 * operation and its memory kinds are part of the shape (a different kind is another shape),
 * and the layout describes the four values for the held-launch machinery. A memset's size is
 * also in the shape's attr_hash (ag_copy_shape). */
typedef struct copy_lay {
    ag_layout lay;           /* first: the shape's fn and the record's lay point here */
    uint8_t entry, dk, sk;
} copy_lay;

static copy_lay g_lay[AG_CP_COUNT][AG_MEM_COUNT][AG_MEM_COUNT];
static uint32_t g_off[4] = { 0, 8, 16, 24 }, g_sz[4] = { 8, 8, 8, 8 };
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
                c->lay.nparams = 4;
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
    return call(c->entry, plain_fn(c->entry), v.dst, v.src, (uint32_t)v.value, (size_t)v.n,
                st->issue);
}

/* ---- graph nodes --------------------------------------------------------------------------- */

static void memset_params(const ag_node *n, const copy_vals *v, CUDA_MEMSET_NODE_PARAMS *p)
{
    static const unsigned elem[3] = { 1, 2, 4 };
    memset(p, 0, sizeof *p);
    p->dst = v->dst;
    p->value = (unsigned)v->value;
    p->elementSize = elem[lay_of(n->lay)->entry];
    p->width = (size_t)v->n;
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
    p->WidthInBytes = (size_t)v->n;
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

/* ---- shapes ----------------------------------------------------------------------------- */

int ag_copy_is_memset(int entry)
{
    return is_memset(entry);
}

int ag_copy_is_readback(const ag_shape *sh)
{
    if (sh->kind != AG_KIND_COPY)
        return 0;
    const copy_lay *c = lay_of(ag_copy_layout(sh->fn));
    return !is_memset(c->entry) && c->sk == AG_MEM_DEVICE &&
           (c->dk == AG_MEM_PINNED || c->dk == AG_MEM_PAGEABLE);
}

void ag_copy_shape(const ag_copy *op, CUcontext ctx, int dk, int sk, ag_shape *sh)
{
    pthread_once(&g_lay_once, lay_init);
    memset(sh, 0, sizeof *sh);
    sh->fn = &g_lay[op->entry][dk][sk].lay;
    sh->ctx = ctx;
    sh->kind = AG_KIND_COPY;
    sh->attr_hash = is_memset(op->entry) ? op->n : 0;
}
