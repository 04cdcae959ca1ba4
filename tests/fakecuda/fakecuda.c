/* fakecuda: the core of the fake driver -- handles, initialisation, devices and contexts,
 * kernels and modules, counters, fault injection, fork and exit. Streams, events, launches
 * and memory are in fc_stream.c, graphs in fc_graph.c, cuGetProcAddress in fc_procaddr.c.
 * See fakecuda.h for the model. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fc_internal.h"

atomic_ullong fc_cnt[FC_C_COUNT];
__thread int fc_t_launcher;
atomic_int fc_initialized, fc_forked, fc_nfail, fc_trace;
atomic_uintptr_t fc_hook;

FC_EXPORT void fakecuda_set_call_hook(fakecuda_call_hook fn)
{
    atomic_store_explicit(&fc_hook, (uintptr_t)fn, memory_order_release);
}

/* ---- the handle registry: an open-addressing set of live handle addresses --------------- */

#define FC_TOMB ((const void *)1)
static pthread_rwlock_t g_reg_lock = PTHREAD_RWLOCK_INITIALIZER;
static const void **g_reg;
static size_t g_reg_cap, g_reg_used;

static size_t reg_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 29;
    x *= 0x9E3779B97F4A7C15ull;
    return (size_t)(x ^ (x >> 32));
}

static void reg_grow(void)
{
    size_t ncap = g_reg_cap ? g_reg_cap * 2 : 1024;
    const void **n = calloc(ncap, sizeof *n);
    if (!n) {
        fprintf(stderr, "fakecuda: out of memory\n");
        abort();
    }
    size_t used = 0;
    for (size_t i = 0; i < g_reg_cap; i++) {
        const void *p = g_reg[i];
        if (!p || p == FC_TOMB)
            continue;
        size_t j = reg_hash(p) & (ncap - 1);
        while (n[j])
            j = (j + 1) & (ncap - 1);
        n[j] = p;
        used++;
    }
    free(g_reg);
    g_reg = n;
    g_reg_cap = ncap;
    g_reg_used = used;
}

void fc_reg_add(const void *p)
{
    pthread_rwlock_wrlock(&g_reg_lock);
    if ((g_reg_used + 1) * 2 >= g_reg_cap)
        reg_grow();
    size_t j = reg_hash(p) & (g_reg_cap - 1);
    while (g_reg[j] && g_reg[j] != FC_TOMB && g_reg[j] != p)
        j = (j + 1) & (g_reg_cap - 1);
    if (!g_reg[j])
        g_reg_used++;
    g_reg[j] = p;
    pthread_rwlock_unlock(&g_reg_lock);
}

static size_t reg_find(const void *p)
{
    if (!g_reg_cap)
        return (size_t)-1;
    size_t j = reg_hash(p) & (g_reg_cap - 1);
    while (g_reg[j]) {
        if (g_reg[j] == p)
            return j;
        j = (j + 1) & (g_reg_cap - 1);
    }
    return (size_t)-1;
}

void fc_reg_del(const void *p)
{
    pthread_rwlock_wrlock(&g_reg_lock);
    size_t j = reg_find(p);
    if (j != (size_t)-1)
        g_reg[j] = FC_TOMB;
    pthread_rwlock_unlock(&g_reg_lock);
}

int fc_reg_has(const void *p)
{
    pthread_rwlock_rdlock(&g_reg_lock);
    int r = reg_find(p) != (size_t)-1;
    pthread_rwlock_unlock(&g_reg_lock);
    return r;
}

/* ---- errors, tracing, fault injection --------------------------------------------------- */

CUresult fc_err(CUresult r)
{
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_READY)
        FC_COUNT(api_errors);
    return r;
}

void fc_trace_call(const char *name)
{
    char buf[160];
    int n = snprintf(buf, sizeof buf, "fakecuda: call %s\n", name);
    if (n > 0 && write(2, buf, (size_t)n) < 0)
        return;
}

#define FC_MAX_FAIL 32
static struct {
    char name[96];
    long every;
    atomic_long calls;
} g_fail[FC_MAX_FAIL];

int fc_fail_hit(const char *name)
{
    int n = atomic_load(&fc_nfail);
    for (int i = 0; i < n; i++) {
        if (strcmp(g_fail[i].name, name))
            continue;
        if ((atomic_fetch_add(&g_fail[i].calls, 1) + 1) % g_fail[i].every == 0) {
            FC_COUNT(injected_failures);
            return 1;
        }
        return 0;
    }
    return 0;
}

static void parse_fail(const char *s)
{
    int n = 0;
    while (s && *s && n < FC_MAX_FAIL) {
        size_t len = strcspn(s, ":,");
        long k = 1;
        const char *rest = s + len;
        if (*rest == ':') {
            char *end;
            k = strtol(rest + 1, &end, 10);
            rest = end;
        }
        if (len && len < sizeof g_fail[n].name && k >= 1) {
            memcpy(g_fail[n].name, s, len);
            g_fail[n].name[len] = 0;
            g_fail[n].every = k;
            n++;
        } else {
            fprintf(stderr, "fakecuda: ignoring bad FAKECUDA_FAIL item near '%s'\n", s);
        }
        s = rest;
        while (*s && *s != ',')
            s++;
        if (*s == ',')
            s++;
    }
    atomic_store(&fc_nfail, n);
}

static const struct {
    CUresult r;
    const char *name, *str;
} g_errors[] = {
    { CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
    { CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
    { CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
    { CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
    { CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED", "driver shutting down" },
    { CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
    { CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
    { CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
    { CUDA_ERROR_CONTEXT_IS_DESTROYED, "CUDA_ERROR_CONTEXT_IS_DESTROYED",
      "context is destroyed" },
    { CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
    { CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
    { CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready" },
    { CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE",
      "the operation cannot be performed in the present state" },
    { CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported" },
    { CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
      "operation not permitted when stream is capturing" },
    { CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
      "operation failed due to a previous error during capture" },
    { CUDA_ERROR_STREAM_CAPTURE_ISOLATION, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION",
      "dependency created on uncaptured work in another stream" },
    { CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT",
      "operation would make the legacy stream depend on a capturing blocking stream" },
    { CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE",
      "the graph update was not performed because it included changes which violated "
      "constraints specific to instantiated graph update" },
    { CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error" },
};

FC_EXPORT CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr)
{
    if (!pStr)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    for (size_t i = 0; i < sizeof g_errors / sizeof g_errors[0]; i++)
        if (g_errors[i].r == error) {
            *pStr = g_errors[i].name;
            return CUDA_SUCCESS;
        }
    *pStr = NULL;
    return fc_err(CUDA_ERROR_INVALID_VALUE);
}

FC_EXPORT CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr)
{
    if (!pStr)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    for (size_t i = 0; i < sizeof g_errors / sizeof g_errors[0]; i++)
        if (g_errors[i].r == error) {
            *pStr = g_errors[i].str;
            return CUDA_SUCCESS;
        }
    *pStr = NULL;
    return fc_err(CUDA_ERROR_INVALID_VALUE);
}

/* ---- counters ---------------------------------------------------------------------------- */

FC_EXPORT void fakecuda_counters(struct fakecuda_counters *out)
{
#define FC_CNT_COPY(n) out->n = atomic_load(&fc_cnt[FC_C_##n]);
    FC_COUNTERS(FC_CNT_COPY)
#undef FC_CNT_COPY
}

FC_EXPORT void fakecuda_print_counters(void *file)
{
    FILE *f = file ? file : stdout;
#define FC_CNT_PRINT(n) fprintf(f, "fakecuda: %s %llu\n", #n, atomic_load(&fc_cnt[FC_C_##n]));
    FC_COUNTERS(FC_CNT_PRINT)
#undef FC_CNT_PRINT
    fflush(f);
}

/* ---- process life: environment, fork, exit ---------------------------------------------- */

static int g_fork_fatal = 1;

CUresult fc_forked_call(const char *name)
{
    /* The driver cannot be used in a fork child; the harness wants to know when it is. */
    char buf[200];
    int n = snprintf(buf, sizeof buf, "fakecuda: %s called in a fork child%s\n", name,
                     g_fork_fatal ? ": exiting with status 97" : "");
    if (n > 0 && write(2, buf, (size_t)n) < 0)
        n = 0;
    if (g_fork_fatal)
        _exit(97);
    return fc_err(CUDA_ERROR_NOT_INITIALIZED);
}

static void in_child(void)
{
    /* The child has none of the parent's worker threads: it may use nothing. */
    atomic_store(&fc_forked, 1);
}

__attribute__((constructor)) static void fc_load(void)
{
    const char *e = getenv("FAKECUDA_FAIL");
    if (e && *e)
        parse_fail(e);
    e = getenv("FAKECUDA_TRACE");
    if (e && *e && strcmp(e, "0"))
        atomic_store(&fc_trace, 1);
    unsigned delay = 5;
    uint64_t seed = 12345;
    if ((e = getenv("FAKECUDA_DELAY_US")) && *e)
        delay = (unsigned)strtoul(e, NULL, 10);
    if ((e = getenv("FAKECUDA_FORK_CHILD")) && !strcmp(e, "error"))
        g_fork_fatal = 0;
    if ((e = getenv("FAKECUDA_SEED")) && *e)
        seed = strtoull(e, NULL, 10);
    e = getenv("FAKECUDA_CHECK_CONTEXT");
    fc_check_current_config(!(e && !strcmp(e, "0")));
    e = getenv("FAKECUDA_REUSE_HANDLES");
    fc_stream_config(delay, seed, !(e && !strcmp(e, "0")));
    pthread_atfork(NULL, NULL, in_child);
}

static void at_exit(void)
{
    if (atomic_load(&fc_forked))
        return;
    fc_drain_all(60.0);
}

/* ---- initialisation, devices, contexts ------------------------------------------------- */

static pthread_mutex_t g_ctx_mu = PTHREAD_MUTEX_INITIALIZER;
static fc_ctx *g_ctxs;
static fc_ctx *g_primary;
static int g_primary_refs;
static int g_next_ctx_id = 1;

#define FC_CTX_STACK 32
static __thread fc_ctx *t_stack[FC_CTX_STACK];
static __thread int t_depth;

fc_ctx *fc_current_ctx(void)
{
    return t_depth ? t_stack[t_depth - 1] : NULL;
}

static fc_ctx *ctx_new(int primary)
{
    fc_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->magic = FC_M_CTX;
    c->primary = primary;
    pthread_mutex_init(&c->mu, NULL);
    pthread_mutex_lock(&g_ctx_mu);
    c->id = g_next_ctx_id++;
    c->next = g_ctxs;
    g_ctxs = c;
    pthread_mutex_unlock(&g_ctx_mu);
    c->legacy = fc_stream_new_internal(c, FC_S_LEGACY, 0, 0);
    if (!c->legacy)
        return NULL;
    fc_reg_add(c);
    return c;
}

void fc_for_each_ctx(void (*fn)(fc_ctx *, void *), void *arg)
{
    pthread_mutex_lock(&g_ctx_mu);
    fc_ctx *list = g_ctxs;
    pthread_mutex_unlock(&g_ctx_mu);
    for (fc_ctx *c = list; c; c = c->next) /* contexts are never freed; new ones go in front */
        fn(c, arg);
}

static pthread_once_t g_init_once = PTHREAD_ONCE_INIT;
static int g_init_ok;

static void do_init(void)
{
    g_primary = ctx_new(1);
    if (!g_primary)
        return;
    atexit(at_exit); /* after the application's first CUDA call: runs after later handlers */
    g_init_ok = 1;
    atomic_store(&fc_initialized, 1);
}

/* The profiler's region marks (cudaProfiler.h): nothing to do without a profiler. */
FC_EXPORT CUresult CUDAAPI cuProfilerStart(void)
{
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuProfilerStop(void)
{
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuInit(unsigned int Flags)
{
    FC_ENTER_NOINIT();
    if (Flags != 0)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    pthread_once(&g_init_once, do_init);
    return g_init_ok ? CUDA_SUCCESS : fc_err(CUDA_ERROR_OUT_OF_MEMORY);
}

FC_EXPORT CUresult CUDAAPI cuDriverGetVersion(int *driverVersion)
{
    FC_ENTER_NOINIT();
    if (!driverVersion)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    *driverVersion = 13000;
    return CUDA_SUCCESS;
}

#define FC_NDEV 1

FC_EXPORT CUresult CUDAAPI cuDeviceGetCount(int *count)
{
    FC_ENTER();
    if (!count)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    *count = FC_NDEV;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
    FC_ENTER();
    if (!device)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    if (ordinal < 0 || ordinal >= FC_NDEV)
        return fc_err(CUDA_ERROR_INVALID_DEVICE);
    *device = ordinal;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    FC_ENTER();
    if (!pctx)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    if (dev < 0 || dev >= FC_NDEV)
        return fc_err(CUDA_ERROR_INVALID_DEVICE);
    pthread_mutex_lock(&g_ctx_mu);
    g_primary_refs++;
    pthread_mutex_unlock(&g_ctx_mu);
    *pctx = (CUcontext)g_primary;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    FC_ENTER();
    if (dev < 0 || dev >= FC_NDEV)
        return fc_err(CUDA_ERROR_INVALID_DEVICE);
    pthread_mutex_lock(&g_ctx_mu);
    int ok = g_primary_refs > 0;
    if (ok)
        g_primary_refs--;
    pthread_mutex_unlock(&g_ctx_mu);
    /* The primary context stays usable: nothing in the fake depends on its teardown. */
    return ok ? CUDA_SUCCESS : fc_err(CUDA_ERROR_INVALID_CONTEXT);
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    FC_ENTER();
    if (dev < 0 || dev >= FC_NDEV)
        return fc_err(CUDA_ERROR_INVALID_DEVICE);
    fc_ctx_sync(g_primary);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params,
                                           unsigned int flags, CUdevice dev)
{
    FC_ENTER();
    (void)params;
    (void)flags;
    if (!pctx)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    if (dev < 0 || dev >= FC_NDEV)
        return fc_err(CUDA_ERROR_INVALID_DEVICE);
    if (t_depth == FC_CTX_STACK)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_ctx *c = ctx_new(0);
    if (!c)
        return fc_err(CUDA_ERROR_OUT_OF_MEMORY);
    t_stack[t_depth++] = c;
    *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx)
{
    FC_ENTER();
    fc_ctx *c = (fc_ctx *)ctx;
    if (!fc_valid(c, FC_M_CTX) || c->destroyed)
        return fc_err(CUDA_ERROR_INVALID_CONTEXT);
    if (c->primary)
        return fc_err(CUDA_ERROR_INVALID_CONTEXT);
    fc_ctx_sync(c);
    c->destroyed = 1;
    fc_reg_del(c);
    if (t_depth && t_stack[t_depth - 1] == c)
        t_depth--;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
    FC_ENTER();
    FC_COUNT(ctx_current_gets);
    if (!pctx)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    *pctx = (CUcontext)fc_current_ctx();
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
    FC_ENTER();
    fc_ctx *c = (fc_ctx *)ctx;
    if (!c) {
        if (t_depth)
            t_depth--;
        return CUDA_SUCCESS;
    }
    if (!fc_valid(c, FC_M_CTX) || c->destroyed)
        return fc_err(CUDA_ERROR_INVALID_CONTEXT);
    if (t_depth)
        t_stack[t_depth - 1] = c;
    else
        t_stack[t_depth++] = c;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx)
{
    FC_ENTER();
    fc_ctx *c = (fc_ctx *)ctx;
    if (!fc_valid(c, FC_M_CTX) || c->destroyed)
        return fc_err(CUDA_ERROR_INVALID_CONTEXT);
    if (t_depth == FC_CTX_STACK)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    t_stack[t_depth++] = c;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext *pctx)
{
    FC_ENTER();
    if (!t_depth)
        return fc_err(CUDA_ERROR_INVALID_CONTEXT);
    fc_ctx *c = t_stack[--t_depth];
    if (pctx)
        *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}

CUresult fc_need_ctx(fc_ctx **out)
{
    fc_ctx *c = fc_current_ctx();
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (c->destroyed)
        return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    *out = c;
    return CUDA_SUCCESS;
}

/* ---- kernels and modules ---------------------------------------------------------------- */

struct fc_module {
    uint32_t magic;
    fc_func *funcs;
};

static pthread_mutex_t g_func_mu = PTHREAD_MUTEX_INITIALIZER;
static fc_func *g_free_funcs;           /* handle memory of unloaded functions, LIFO */
static fc_module g_default_module = { FC_M_MOD, NULL };

__attribute__((constructor)) static void register_default_module(void)
{
    fc_reg_add(&g_default_module);
}

static fc_func *func_alloc(void)
{
    fc_func *f = g_free_funcs;
    if (f)
        g_free_funcs = f->next;
    else
        f = malloc(sizeof *f);
    if (f)
        memset(f, 0, sizeof *f);
    return f;
}

fc_func *fc_func_get(const void *h, uint32_t want)
{
    const fc_func *f = h;
    if (!f || !fc_reg_has(f))
        return NULL;
    if (want ? f->magic != want : (f->magic != FC_M_FUNC && f->magic != FC_M_KERN))
        return NULL;
    return f->alive ? (fc_func *)f : NULL;
}

static CUfunction make_kernel(fc_module *m, const char *name, fakecuda_kernel_fn fn, int nparams,
                              const size_t sizes[])
{
    if (!fn || nparams < 0 || nparams > FAKECUDA_MAX_PARAMS || (nparams && !sizes))
        return NULL;
    fc_def d;
    memset(&d, 0, sizeof d);
    d.fn = fn;
    d.nparams = nparams;
    size_t off = 0;
    for (int i = 0; i < nparams; i++) {
        size_t sz = sizes[i], al = sz < 8 ? sz : 8;
        if (!sz || sz > 4096)
            return NULL;
        /* natural alignment: the smallest power of two >= min(size, 8) */
        size_t a = 1;
        while (a < al)
            a <<= 1;
        off = (off + a - 1) & ~(a - 1);
        d.off[i] = off;
        d.sz[i] = sz;
        off += sz;
    }
    d.size = off;
    snprintf(d.name, sizeof d.name, "%s", name ? name : "kernel");
    pthread_mutex_lock(&g_func_mu);
    fc_func *f = func_alloc();
    if (f) {
        f->magic = FC_M_FUNC;
        f->alive = 1;
        f->def = d;
        f->ctx = fc_current_ctx();
        f->mod = m;
        f->next = m->funcs;
        m->funcs = f;
        fc_reg_add(f);
    }
    pthread_mutex_unlock(&g_func_mu);
    return (CUfunction)f;
}

FC_EXPORT CUfunction fakecuda_kernel(const char *name, fakecuda_kernel_fn fn, int nparams,
                                     const size_t sizes[])
{
    return make_kernel(&g_default_module, name, fn, nparams, sizes);
}

FC_EXPORT CUmodule fakecuda_module(void)
{
    fc_module *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->magic = FC_M_MOD;
    fc_reg_add(m);
    return (CUmodule)m;
}

FC_EXPORT CUfunction fakecuda_module_kernel(CUmodule mod, const char *name,
                                            fakecuda_kernel_fn fn, int nparams,
                                            const size_t sizes[])
{
    fc_module *m = (fc_module *)mod;
    if (!fc_valid(m, FC_M_MOD))
        return NULL;
    return make_kernel(m, name, fn, nparams, sizes);
}

FC_EXPORT CUkernel fakecuda_kernel_as_kernel(CUfunction h)
{
    fc_func *f = fc_func_get(h, FC_M_FUNC);
    if (!f)
        return NULL;
    pthread_mutex_lock(&g_func_mu);
    if (!f->alias) {
        fc_func *k = func_alloc();
        if (k) {
            k->magic = FC_M_KERN;
            k->alive = 1;
            k->def = f->def;
            k->mod = f->mod;
            k->orig = f;
            f->alias = k;
            fc_reg_add(k);
        }
    }
    fc_func *k = f->alias;
    pthread_mutex_unlock(&g_func_mu);
    return (CUkernel)k;
}

static CUresult module_unload(fc_module *m)
{
    if (!fc_valid(m, FC_M_MOD) || m == &g_default_module)
        return fc_err(CUDA_ERROR_INVALID_HANDLE);
    pthread_mutex_lock(&g_func_mu);
    fc_reg_del(m);
    for (fc_func *f = m->funcs, *next; f; f = next) {
        next = f->next;
        fc_func *k = f->alias;
        f->alive = 0;
        fc_reg_del(f);
        f->next = g_free_funcs;
        g_free_funcs = f;
        if (k) {
            k->alive = 0;
            fc_reg_del(k);
            k->next = g_free_funcs;
            g_free_funcs = k;
        }
    }
    pthread_mutex_unlock(&g_func_mu);
    m->magic = 0;
    free(m);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuModuleUnload(CUmodule hmod)
{
    FC_ENTER();
    return module_unload((fc_module *)hmod);
}

/* A module doubles as the library of its CUkernels (cuKernelGetLibrary). */
FC_EXPORT CUresult CUDAAPI cuLibraryUnload(CUlibrary library)
{
    FC_ENTER();
    if (!library)
        return fc_err(CUDA_ERROR_INVALID_HANDLE);
    if (fc_valid(library, FC_M_MOD))
        return module_unload((fc_module *)library);
    /* a library the fake never made: accepted and forgotten */
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuFuncGetModule(CUmodule *hmod, CUfunction hfunc)
{
    FC_ENTER();
    if (!hmod)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_func *f = fc_func_get(hfunc, FC_M_FUNC);
    if (!f)
        return fc_err(CUDA_ERROR_INVALID_HANDLE);
    *hmod = (CUmodule)f->mod;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuKernelGetLibrary(CUlibrary *pLib, CUkernel kernel)
{
    FC_ENTER();
    if (!pLib)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_func *f = fc_func_get(kernel, FC_M_KERN);
    if (!f)
        return fc_err(CUDA_ERROR_INVALID_HANDLE);
    *pLib = (CUlibrary)f->mod;
    return CUDA_SUCCESS;
}

static CUresult count_funcs(unsigned *count, const void *h)
{
    const fc_module *m = h;
    if (!count)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    if (!fc_valid(m, FC_M_MOD))
        return fc_err(CUDA_ERROR_INVALID_HANDLE);
    unsigned n = 0;
    pthread_mutex_lock(&g_func_mu);
    for (const fc_func *f = m->funcs; f; f = f->next)
        n++;
    pthread_mutex_unlock(&g_func_mu);
    *count = n;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuModuleGetFunctionCount(unsigned int *count, CUmodule mod)
{
    FC_ENTER();
    return count_funcs(count, mod);
}

FC_EXPORT CUresult CUDAAPI cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib)
{
    FC_ENTER();
    return count_funcs(count, lib);
}

static CUresult param_info(const fc_func *f, size_t i, size_t *off, size_t *sz)
{
    if ((!off && !sz) || i >= (size_t)f->def.nparams)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    if (off)
        *off = f->def.off[i];
    if (sz)
        *sz = f->def.sz[i];
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuFuncGetParamInfo(CUfunction func, size_t paramIndex,
                                              size_t *paramOffset, size_t *paramSize)
{
    FC_ENTER();
    if (fc_t_launcher)
        FC_COUNT(launcher_param_queries);
    fc_func *f = fc_func_get(func, FC_M_FUNC); /* a CUkernel is refused, as by the driver */
    if (!f)
        return fc_err(CUDA_ERROR_INVALID_HANDLE);
    /* the H100's driver answered nothing on a thread without a current context (2026-11-24:
     * the worker's first probes found no layout) */
    if (!fc_current_ctx())
        return fc_err(CUDA_ERROR_INVALID_CONTEXT);
    return param_info(f, paramIndex, paramOffset, paramSize);
}

FC_EXPORT CUresult CUDAAPI cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex,
                                                size_t *paramOffset, size_t *paramSize)
{
    FC_ENTER();
    if (fc_t_launcher)
        FC_COUNT(launcher_param_queries);
    fc_func *f = fc_func_get(kernel, FC_M_KERN);
    if (!f)
        return fc_err(CUDA_ERROR_INVALID_HANDLE);
    return param_info(f, paramIndex, paramOffset, paramSize);
}

FC_EXPORT CUresult CUDAAPI cuFuncGetName(const char **name, CUfunction hfunc)
{
    FC_ENTER();
    if (!name)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_func *f = fc_func_get(hfunc, FC_M_FUNC);
    if (!f)
        return fc_err(CUDA_ERROR_INVALID_HANDLE);
    *name = f->def.name;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuKernelGetName(const char **name, CUkernel hfunc)
{
    FC_ENTER();
    if (!name)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_func *f = fc_func_get(hfunc, FC_M_KERN);
    if (!f)
        return fc_err(CUDA_ERROR_INVALID_HANDLE);
    *name = f->def.name;
    return CUDA_SUCCESS;
}

CUresult fc_pack_params(const fc_def *d, void **params, void **extra, uint8_t *dst)
{
    if (params && extra)
        return CUDA_ERROR_INVALID_VALUE;
    if (extra) {
        const void *buf = NULL;
        size_t size = (size_t)-1;
        int have_size = 0;
        for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
            if (i > 64)
                return CUDA_ERROR_INVALID_VALUE;
            if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
                buf = extra[i + 1];
            else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
                if (!extra[i + 1])
                    return CUDA_ERROR_INVALID_VALUE;
                size = *(const size_t *)extra[i + 1];
                have_size = 1;
            } else
                return CUDA_ERROR_INVALID_VALUE;
        }
        if ((d->size && !buf) || !have_size || size != d->size)
            return CUDA_ERROR_INVALID_VALUE;
        if (d->size)
            memcpy(dst, buf, d->size);
        return CUDA_SUCCESS;
    }
    if (d->nparams && !params)
        return CUDA_ERROR_INVALID_VALUE;
    /* Padding gets a fixed garbage byte: a kernel must never depend on it. */
    memset(dst, 0xA5, d->size);
    for (int i = 0; i < d->nparams; i++) {
        if (!params[i])
            return CUDA_ERROR_INVALID_VALUE;
        memcpy(dst + d->off[i], params[i], d->sz[i]);
    }
    return CUDA_SUCCESS;
}
