/* Kernel parameter layouts and copies (see params.h). */
/* Each thread keeps a small direct-mapped cache in front of the shared table; an epoch number
 * invalidates all of them at once. Layouts are never freed while the process runs (a thread
 * may still read one after an unload): they are small, and only unloads retire them. */
#include "cache/params.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "policy/filter.h"
#include "policy/log.h"
#include "policy/options.h"
#include "policy/stats.h"
#include "cache/compiler.h"
#include "cache/driver.h"
#include "cache/selftime.h"
#include "cache/shape.h"
#include "cache/spare_uthash.h"


typedef struct entry {
    ag_layout lay;
    uint8_t probed;          /* 0: seen once, not asked about yet (ag_layout_get_seen) */
    uint8_t asked;           /* its probe is queued for the worker (ag_layout_async) */
    uint8_t failed;          /* the worker's probe found no layout: none ever (launches pass) */
    uint8_t waiting;         /* sightings since its probe was queued (ag_layout_async) */
    struct entry *replaced;  /* a placeholder's probed entry, once made (probe; read without
                              * g_lock by the threads' caches of the placeholder) */
    UT_hash_handle hh;
} entry;

/* Probes asked of the worker: handles, under g_lock (written with it held for writing). The
 * worker registers its wake-up; without one every probe is made where it is needed. */
#define PENDING 256
static struct {
    void *h;
    CUcontext ctx;           /* the asking thread's current context: the driver answers in it */
} g_pending[PENDING];
static unsigned g_npending;
static void (*g_wake)(void);
/* Probes queued, the worker not woken for them yet (read without g_lock). A wake-up is a
 * system call, which the launch that first asks for a layout would pay, and the probes then
 * run in the driver beside the application's next launches, slowing them: the worker is woken
 * where the host next waits for the GPU instead (ag_layout_wake_due: a stream or context sync,
 * a synchronous copy, a free), or in a launch once the function was seen again
 * AG_LAYOUT_WAKE_AFTER times with no such wait. */
static atomic_int g_due;

static entry *g_table;
static entry *g_retired;

/* Function classes (ag_layout.cls): class key -> the first member's handle, under g_lock. */
typedef struct cls_entry {
    uint64_t key;
    void *rep;
    UT_hash_handle hh;
} cls_entry;
static cls_entry *g_classes;   /* chained through hh.next after an unload */
/* The names of the classes (hashes), under g_lock: a function seen for the first time with one
 * of them is probed at once (named_like_a_class). */
typedef struct name_entry {
    uint64_t key;
    UT_hash_handle hh;
} name_entry;
static name_entry *g_names;
static atomic_uint g_nnames;
/* Whether the last function probed was a CUkernel: which name call to try first for a new one
 * (the call of the other kind fails, and costs the H100's driver ~1.8 us against 0.07 us) */
static atomic_int g_kernel_hint;
static pthread_rwlock_t g_lock = PTHREAD_RWLOCK_INITIALIZER;
static atomic_uint g_epoch = 1;

/* A function whose probe the worker has not made yet is cached too, under its handle tagged
 * (awaiting(), never a handle: they are aligned) with lay its placeholder's: its learning
 * launches -- all of a short region's, as G2's 30 sgemm timed once -- would otherwise each take
 * g_lock to find the placeholder again (~200 instructions). */
#define TCACHE 32
static __thread struct {
    void *handle;
    const ag_layout *lay;
    unsigned epoch;
} t_cache[TCACHE] __attribute__((tls_model("initial-exec")));

static inline void *awaiting(void *h) { return (void *)((uintptr_t)h | 1); }
_Static_assert(offsetof(entry, lay) == 0, "a cached placeholder is found from its layout");

static inline unsigned slot(void *h)
{
    uintptr_t x = (uintptr_t)h;
    return (unsigned)((x >> 4) ^ (x >> 12)) & (TCACHE - 1);
}

static void cache_lay(void *h, const ag_layout *lay, unsigned epoch)
{
    unsigned i = slot(h);
    t_cache[i].handle = h;
    t_cache[i].lay = lay;
    t_cache[i].epoch = epoch;
}

static void cache_wait(void *h, entry *w, unsigned epoch)
{
    unsigned i = slot(h);
    t_cache[i].handle = awaiting(h);
    t_cache[i].lay = &w->lay;
    t_cache[i].epoch = epoch;
}

static int query(void *h, ag_layout *out)
{
    size_t off, sz;
    CUresult r = ag_drv.cuFuncGetParamInfo((CUfunction)h, 0, &off, &sz);
    if (r == CUDA_ERROR_INVALID_HANDLE && ag_drv.cuKernelGetParamInfo) {
        out->is_kernel = 1;
        r = ag_drv.cuKernelGetParamInfo((CUkernel)h, 0, &off, &sz);
    }
    uint32_t cap = 0;
    while (r == CUDA_SUCCESS) {
        if (out->nparams == cap) {
            cap = cap ? cap * 2 : 8;
            uint32_t *o = realloc(out->off, cap * sizeof *o), *s = o ? realloc(out->sz, cap * sizeof *s) : NULL;
            if (!o || !s) {
                free(o ? o : out->off);
                return -1;
            }
            out->off = o;
            out->sz = s;
        }
        out->off[out->nparams] = (uint32_t)off;
        out->sz[out->nparams] = (uint32_t)sz;
        if (off + sz > out->size)
            out->size = (uint32_t)(off + sz);
        out->nparams++;
        r = out->is_kernel ? ag_drv.cuKernelGetParamInfo((CUkernel)h, out->nparams, &off, &sz)
                           : ag_drv.cuFuncGetParamInfo((CUfunction)h, out->nparams, &off, &sz);
    }
    if (r != CUDA_ERROR_INVALID_VALUE) /* the end of the list; anything else: not describable */
        return -1;
    uint32_t sum = 0;
    for (uint32_t i = 0; i < out->nparams; i++)
        sum += out->sz[i];
    out->dense = sum == out->size;
    const char *name = NULL;
    if (out->is_kernel ? (ag_drv.cuKernelGetName && ag_drv.cuKernelGetName(&name, (CUkernel)h))
                       : (ag_drv.cuFuncGetName && ag_drv.cuFuncGetName(&name, (CUfunction)h)))
        name = NULL;
    strncpy(out->name, name ? name : "?", sizeof out->name - 1);
    out->graphable = (uint8_t)ag_filter_allows(out->name);
    /* identity across runs: handles differ from run to run, names and layouts do not (the
     * module's kernel count, one more driver question per kernel, only for profiles) */
    unsigned count = 0;
    if (!ag_opt_str(AG_OPT_PROFILE)[0]) {
    } else if (out->is_kernel) {
        CUlibrary lib;
        if (ag_drv.cuKernelGetLibrary && !ag_drv.cuKernelGetLibrary(&lib, (CUkernel)h) &&
            ag_drv.cuLibraryGetKernelCount)
            ag_drv.cuLibraryGetKernelCount(&count, lib);
    } else {
        CUmodule mod;
        if (ag_drv.cuFuncGetModule && !ag_drv.cuFuncGetModule(&mod, (CUfunction)h) &&
            ag_drv.cuModuleGetFunctionCount)
            ag_drv.cuModuleGetFunctionCount(&count, mod);
    }
    out->name_key = ag_hash(name ? name : "", name ? strlen(name) : 0);
    uint64_t parts[4] = { out->name_key, out->nparams, count,
                          out->nparams ? ag_hash(out->off, out->nparams * 4) ^
                                             ag_hash(out->sz, out->nparams * 4) * 31
                                       : 0 };
    out->ident = ag_hash(parts, sizeof parts);
    if (name && *name) { /* the class key: parts without the module's kernel count */
        parts[2] = out->is_kernel;
        out->cls_key = ag_hash(parts, sizeof parts) | 1; /* (0: no class) */
    }
    return 0;
}

/* Sets e's class: the representative of its key, or e itself. Under g_lock (writing). */
static void join_class(entry *e)
{
    e->lay.cls = e->lay.handle;
    if (!e->lay.cls_key)
        return;
    cls_entry *c;
    HASH_FIND(hh, g_classes, &e->lay.cls_key, sizeof c->key, c);
    if (c) {
        e->lay.cls = c->rep;
    } else if ((c = calloc(1, sizeof *c))) {
        c->key = e->lay.cls_key;
        c->rep = e->lay.handle;
        HASH_ADD(hh, g_classes, key, sizeof c->key, c);
        uint64_t nk = e->lay.name_key; /* (the whole name's: lay.name may be cut) */
        name_entry *n;
        HASH_FIND(hh, g_names, &nk, sizeof nk, n);
        if (!n && (n = calloc(1, sizeof *n))) {
            n->key = nk;
            HASH_ADD(hh, g_names, key, sizeof n->key, n);
            atomic_fetch_add_explicit(&g_nnames, 1, memory_order_relaxed);
        }
    }
}

void ag_layout_spares(void)
{
    ag_spare_keep(sizeof(entry), 0);
    ag_spare_keep_uthash();
}

/* A function seen for the first time: remembered, not asked about. */
static void remember(void *h)
{
    entry *n = ag_spare_calloc(sizeof *n), *e;
    if (!n)
        return;
    n->lay.handle = h;
    pthread_rwlock_wrlock(&g_lock);
    HASH_FIND_PTR(g_table, &h, e);
    if (!e) {
        HASH_ADD_PTR(g_table, lay.handle, n);
        n = NULL;
    }
    pthread_rwlock_unlock(&g_lock);
    free(n);
}

/* Asks the driver about h and publishes the layout (NULL: no layout). The answers can cost
 * tens of microseconds the first time a function is asked about (35-46 us seen on the H100 for
 * cuBLAS's and the sample apps' kernels): on the worker when there is one. */
static entry *probe(void *h)
{
    entry *e, *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->lay.handle = h;
    if (query(h, &n->lay) != 0) {
        ag_log(AG_LOG_DEBUG, "no parameter layout for function %p", h);
        free(n->lay.off);
        free(n->lay.sz);
        free(n);
        return NULL;
    }
    ag_log(AG_LOG_TRACE, "layout %s: %u params, %u bytes%s", n->lay.name, n->lay.nparams,
           n->lay.size, n->lay.is_kernel ? " (CUkernel)" : "");
    n->probed = 1;
    atomic_store_explicit(&g_kernel_hint, n->lay.is_kernel, memory_order_relaxed);
    pthread_rwlock_wrlock(&g_lock);
    HASH_FIND_PTR(g_table, &h, e);
    entry *placeholder = NULL;
    if (e && !e->probed) { /* the placeholder goes where retired entries go */
        HASH_DEL(g_table, e);
        e->hh.next = g_retired;
        g_retired = e;
        placeholder = e;
        e = NULL;
    }
    if (!e) {
        join_class(n);
        HASH_ADD_PTR(g_table, lay.handle, n);
        if (placeholder) /* (n complete: the caches read it through this) */
            __atomic_store_n(&placeholder->replaced, n, __ATOMIC_RELEASE);
        e = n;
        n = NULL;
    }
    pthread_rwlock_unlock(&g_lock);
    if (n) {
        free(n->lay.off);
        free(n->lay.sz);
        free(n);
    }
    return e;
}

/* Queues a probe of h for the worker, once (a full queue: asked again at a later sighting),
 * to be made in ctx (NULL: the calling thread's current context). Asking the driver for that
 * cost a learning launch between cuBLAS calls ~420 ns (G2, H100 host, selftime). */
static void ask(void *h, CUcontext ctx)
{
    entry *e;
    int queued = 0;
    if (!ctx && ag_drv.cuCtxGetCurrent(&ctx))
        ctx = NULL;
    AG_SELF_MARK(AG_SM_L_CTX);
    pthread_rwlock_wrlock(&g_lock);
    HASH_FIND_PTR(g_table, &h, e);
    if (e && !e->probed && !e->asked && g_npending < PENDING) {
        __atomic_store_n(&e->asked, 1, __ATOMIC_RELAXED); /* (read unlocked) */
        g_pending[g_npending].h = h;
        g_pending[g_npending++].ctx = ctx;
        queued = 1;
    }
    pthread_rwlock_unlock(&g_lock);
    AG_SELF_MARK(AG_SM_L_QUEUED);
    if (queued && __atomic_load_n(&g_wake, __ATOMIC_ACQUIRE))
        atomic_store_explicit(&g_due, 1, memory_order_release);
}

/* The worker is woken for what is due. */
static void wake_due(enum ag_stat why)
{
    void (*wake)(void) = __atomic_load_n(&g_wake, __ATOMIC_ACQUIRE);
    if (!wake)
        return;
    ag_stat_inc(why);
    atomic_store_explicit(&g_due, 0, memory_order_relaxed);
    wake();
}

/* A function whose probe is queued was seen again: after AG_LAYOUT_WAKE_AFTER sightings with
 * no wait for the GPU between (where the worker is woken: worker.c), it is woken now. */
static void seen_waiting(entry *e)
{
    uint8_t n = __atomic_add_fetch(&e->waiting, 1, __ATOMIC_RELAXED);
    if (n == AG_LAYOUT_WAKE_AFTER && atomic_load_explicit(&g_due, memory_order_relaxed))
        wake_due(AG_ST_WORKER_WAKE_LAUNCH); /* (not woken at a wait since) */
}

/* Whether h, seen for the first time, has the name of a class already probed. A library that
 * loads a copy of a kernel per problem size (cuDNN's attention, one module per sequence length
 * in a Hugging Face decode with a growing cache) launches a new function in every step: left
 * unknown until its second sighting, it made every step a new sequence. Probed at once, it is
 * its class's from its first launch. On the H100 (driver 580, a fresh module's kernel) the
 * name costs 0.07 us; the probe before the first launch took 24-27 us, but then the launch
 * itself took 4 us instead of 27 (the module's lazy load moved into the probe), so the probe
 * adds ~3 us, once per copy. */
static int named_like_a_class(void *h)
{
    if (!atomic_load_explicit(&g_nnames, memory_order_relaxed))
        return 0;
    const char *name = NULL;
    int k = atomic_load_explicit(&g_kernel_hint, memory_order_relaxed);
    for (int tries = 0; tries < 2 && !name; tries++, k = !k) {
        CUresult r = k ? (ag_drv.cuKernelGetName ? ag_drv.cuKernelGetName(&name, (CUkernel)h)
                                                 : CUDA_ERROR_NOT_FOUND)
                       : (ag_drv.cuFuncGetName ? ag_drv.cuFuncGetName(&name, (CUfunction)h)
                                               : CUDA_ERROR_NOT_FOUND);
        if (r)
            name = NULL;
    }
    if (!name || !*name)
        return 0;
    uint64_t nk = ag_hash(name, strlen(name));
    name_entry *n;
    pthread_rwlock_rdlock(&g_lock);
    HASH_FIND(hh, g_names, &nk, sizeof nk, n);
    pthread_rwlock_unlock(&g_lock);
    return n != NULL;
}

/* A launch that may only remember meets e, h's placeholder (its probe not made): it gets NULL
 * when the worker found no layout, or NULL and *first = 1 while the worker is to make the probe
 * (queued now at the second sighting, else seen once more). Returns 0 without a worker: the
 * probe is made here. */
static int placeholder_wait(void *h, entry *e, unsigned epoch, CUcontext ctx, int *first)
{
    if (!__atomic_load_n(&e->failed, __ATOMIC_RELAXED)) {
        if (!__atomic_load_n(&g_wake, __ATOMIC_ACQUIRE))
            return 0;
        if (!__atomic_load_n(&e->asked, __ATOMIC_RELAXED))
            ask(h, ctx);
        else
            seen_waiting(e);
        *first = 1;
    }
    cache_wait(h, e, epoch);
    return 1;
}

static const ag_layout *slow_get(void *h, unsigned epoch, CUcontext ctx, int *first)
{
    entry *e;
    ag_stat_inc(AG_ST_LAYOUT_LOCKED);
    pthread_rwlock_rdlock(&g_lock);
    HASH_FIND_PTR(g_table, &h, e);
    pthread_rwlock_unlock(&g_lock);
    AG_SELF_MARK(AG_SM_L_FOUND);
    if (!e && first && named_like_a_class(h) && (e = probe(h))) {
        ag_stat_inc(AG_ST_LAYOUT_AT_FIRST);
    } else if (!e && first) {
        *first = 1;
        remember(h);
        return NULL;
    }
    if (!e || !e->probed) {
        if (first && e && placeholder_wait(h, e, epoch, ctx, first))
            return NULL;
        if (!(e = probe(h)))
            return NULL;
    }
    cache_lay(h, &e->lay, epoch);
    return &e->lay;
}

/* A cached placeholder (see t_cache): what slow_get would answer, without g_lock. Not inlined:
 * inlined, it cost every launch that finds its layout cached ~9 instructions (bench-hotpath). */
static __attribute__((noinline)) const ag_layout *awaited_get(void *h, entry *w, unsigned epoch,
                                                              CUcontext ctx, int *first)
{
    entry *r = __atomic_load_n(&w->replaced, __ATOMIC_ACQUIRE);
    if (r) {
        cache_lay(h, &r->lay, epoch);
        return &r->lay;
    }
    return placeholder_wait(h, w, epoch, ctx, first) ? NULL : slow_get(h, epoch, ctx, first);
}

const ag_layout *ag_layout_get(void *h)
{
    unsigned epoch = atomic_load_explicit(&g_epoch, memory_order_acquire);
    unsigned i = slot(h);
    if (t_cache[i].handle == h && t_cache[i].epoch == epoch)
        return t_cache[i].lay;
    return slow_get(h, epoch, NULL, NULL);
}

int ag_layout_awaited(void *h)
{
    unsigned epoch = atomic_load_explicit(&g_epoch, memory_order_acquire);
    unsigned i = slot(h);
    if ((t_cache[i].handle == h && t_cache[i].epoch == epoch) ||
        !__atomic_load_n(&g_wake, __ATOMIC_ACQUIRE))
        return 0;
    entry *e;
    pthread_rwlock_rdlock(&g_lock);
    HASH_FIND_PTR(g_table, &h, e);
    int awaited = e && !e->probed && !__atomic_load_n(&e->failed, __ATOMIC_RELAXED);
    pthread_rwlock_unlock(&g_lock);
    return awaited;
}

const ag_layout *ag_layout_known(void *h)
{
    int asked = 0;
    return ag_layout_get_seen(h, NULL, &asked); /* (asked: a probe is queued, or h is new) */
}

void ag_layout_async(void (*wake)(void))
{
    __atomic_store_n(&g_wake, wake, __ATOMIC_RELEASE);
    if (!wake)
        atomic_store_explicit(&g_due, 0, memory_order_relaxed);
}

void ag_layout_wake_due(void)
{
    if (AG_LIKELY(!atomic_load_explicit(&g_due, memory_order_relaxed)))
        return;
    wake_due(AG_ST_WORKER_WAKE_ORDER);
}

int ag_layout_take_due(void)
{
    return atomic_exchange_explicit(&g_due, 0, memory_order_relaxed);
}

int ag_layout_probe_pending(void)
{
    void *h = NULL;
    CUcontext ctx = NULL;
    pthread_rwlock_wrlock(&g_lock);
    if (g_npending) {
        g_npending--;
        h = g_pending[g_npending].h;
        ctx = g_pending[g_npending].ctx;
    }
    pthread_rwlock_unlock(&g_lock);
    if (!h)
        return 0;
    if (ctx)
        ag_drv.cuCtxSetCurrent(ctx);
    if (!probe(h)) { /* no layout: say so, or every launch of h would ask again */
        entry *e;
        pthread_rwlock_wrlock(&g_lock);
        HASH_FIND_PTR(g_table, &h, e);
        if (e && !e->probed)
            __atomic_store_n(&e->failed, 1, __ATOMIC_RELAXED);
        pthread_rwlock_unlock(&g_lock);
    }
    return 1;
}

void ag_layout_drop_pending(void)
{
    pthread_rwlock_wrlock(&g_lock);
    g_npending = 0;
    pthread_rwlock_unlock(&g_lock);
}

const ag_layout *ag_layout_get_seen(void *h, CUcontext ctx, int *first)
{
    unsigned epoch = atomic_load_explicit(&g_epoch, memory_order_acquire);
    unsigned i = slot(h);
    *first = 0;
    if (t_cache[i].handle == h && t_cache[i].epoch == epoch)
        return t_cache[i].lay;
    if (t_cache[i].handle == awaiting(h) && t_cache[i].epoch == epoch)
        return awaited_get(h, (entry *)t_cache[i].lay, epoch, ctx, first); /* (lay: first) */
    return slow_get(h, epoch, ctx, first);
}

void ag_layout_invalidate(void)
{
    entry *e, *tmp;
    pthread_rwlock_wrlock(&g_lock);
    g_npending = 0; /* (the worker was quiesced first: no probe of these is under way) */
    HASH_ITER(hh, g_table, e, tmp) {
        HASH_DEL(g_table, e);
        e->hh.next = g_retired;
        g_retired = e;
    }
    cls_entry *c, *ctmp;
    HASH_ITER(hh, g_classes, c, ctmp) {
        HASH_DEL(g_classes, c);
        free(c);
    }
    name_entry *n, *ntmp;
    HASH_ITER(hh, g_names, n, ntmp) {
        HASH_DEL(g_names, n);
        free(n);
    }
    atomic_store_explicit(&g_nnames, 0, memory_order_relaxed);
    atomic_fetch_add_explicit(&g_epoch, 1, memory_order_release);
    pthread_rwlock_unlock(&g_lock);
}

int ag_extra_buffer(void **extra, uint32_t want, const void **buf)
{
    const void *p = NULL;
    size_t size = (size_t)-1;
    for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            p = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1])
            size = *(size_t *)extra[i + 1];
        else
            return -1;
        if (i > 64)
            return -1;
    }
    if (!p || size != want)
        return -1;
    *buf = p;
    return 0;
}

/* One parameter: the common sizes as plain loads and stores, not a call to memcpy. */
static inline void copy_param(uint8_t *dst, const void *src, uint32_t n)
{
    switch (n) {
    case 8: { uint64_t v; __builtin_memcpy(&v, src, 8); __builtin_memcpy(dst, &v, 8); break; }
    case 4: { uint32_t v; __builtin_memcpy(&v, src, 4); __builtin_memcpy(dst, &v, 4); break; }
    case 16: { uint64_t v[2]; __builtin_memcpy(v, src, 16); __builtin_memcpy(dst, v, 16); break; }
    case 2: { uint16_t v; __builtin_memcpy(&v, src, 2); __builtin_memcpy(dst, &v, 2); break; }
    case 1: *dst = *(const uint8_t *)src; break;
    default: memcpy(dst, src, n);
    }
}

int ag_params_copy(const ag_layout *lay, void **params, void **extra, uint8_t *dst)
{
    if (params && extra)
        return -1; /* the driver refuses both; let it say so */
    if (extra) {
        const void *buf;
        if (ag_extra_buffer(extra, lay->size, &buf))
            return -1;
        memcpy(dst, buf, lay->size);
        return 0;
    }
    if (!params)
        return lay->nparams ? -1 : 0;
    if (!lay->dense)
        memset(dst, 0, lay->size);
    for (uint32_t i = 0; i < lay->nparams; i++) {
        if (!params[i])
            return -1;
        copy_param(dst + lay->off[i], params[i], lay->sz[i]);
    }
    return 0;
}
