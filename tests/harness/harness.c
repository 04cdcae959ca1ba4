/* See harness.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void hx_fail(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "FAIL: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    fflush(stderr);
    _Exit(1); /* no exit handlers: they could hide or change what went wrong */
}

void hx_check(CUresult r, const char *what, const char *file, int line)
{
    if (r == CUDA_SUCCESS)
        return;
    const char *name = NULL;
    if (cuGetErrorName(r, &name) != CUDA_SUCCESS)
        name = "?";
    hx_fail("%s:%d: %s returned %d (%s)", file, line, what, (int)r, name);
}

CUcontext hx_init(void)
{
    CUdevice dev;
    CUcontext ctx;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    return ctx;
}

void hx_pass(const char *name)
{
    fakecuda_print_counters(stdout);
    printf("PASS %s\n", name);
    fflush(stdout);
}

long hx_arg(int argc, char **argv, int i, long def)
{
    return argc > i ? strtol(argv[i], NULL, 10) : def;
}

double hx_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- waiting for the library's worker ---------------------------------------------------- */

uint64_t hx_graph_kernels(void)
{
    struct fakecuda_counters c;
    fakecuda_counters(&c);
    return c.graph_kernels_executed;
}

long hx_settle_init(hx_settle *st, long iters)
{
    const char *e = getenv("HX_SETTLE");
    memset(st, 0, sizeof *st);
    st->on = e && !strcmp(e, "1");
    return st->on && iters < HX_SETTLE_MAX ? HX_SETTLE_MAX : iters;
}

int hx_settle_more(hx_settle *st, long it, long iters)
{
    if (it >= iters && (!st->on || st->graphed >= st->other))
        return 0;
    HX_ASSERT(!st->on || it < HX_SETTLE_MAX, "HX_SETTLE: after %ld iterations, %ld ran from graphs, %ld "
              "not", it, st->graphed, st->other);
    st->g0 = hx_graph_kernels();
    return 1;
}

void hx_settle_done(hx_settle *st, uint32_t kernels)
{
    if (hx_graph_kernels() - st->g0 == kernels)
        st->graphed++;
    else
        st->other++;
}

/* ---- logs ---------------------------------------------------------------------------------- */

size_t hx_log_bytes(uint32_t cap)
{
    return sizeof(hx_log) + (size_t)cap * sizeof(hx_entry);
}

void hx_log_init(hx_log *l, uint32_t cap)
{
    memset(l, 0, hx_log_bytes(cap));
    l->cap = cap;
}

hx_log *hx_log_new(uint32_t cap)
{
    void *p = NULL;
    CK(cuMemAllocHost_v2(&p, hx_log_bytes(cap)));
    hx_log_init(p, cap);
    return p;
}

void hx_log_put(hx_log *l, uint32_t kid, uint32_t a, uint64_t b)
{
    uint32_t n = __atomic_load_n(&l->n, __ATOMIC_RELAXED);
    if (n >= l->cap) {
        __atomic_store_n(&l->overflow, 1, __ATOMIC_RELEASE);
        return;
    }
    l->e[n].kid = kid;
    l->e[n].a = a;
    l->e[n].b = b;
    __atomic_store_n(&l->n, n + 1, __ATOMIC_RELEASE);
}

void hx_log_expect(const hx_log *l, uint32_t from, const hx_entry *exp, uint32_t n,
                   const char *what, long iter)
{
    uint32_t have = __atomic_load_n(&l->n, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&l->overflow, __ATOMIC_ACQUIRE))
        hx_fail("%s, iteration %ld: log overflow", what, iter);
    for (uint32_t i = 0; i < n && from + i < have; i++) {
        const hx_entry *g = &l->e[from + i], *w = &exp[i];
        if (g->kid != w->kid || g->a != w->a || g->b != w->b)
            hx_fail("%s, iteration %ld: log entry %u is {kid %u, a %u, b %#llx}, expected "
                    "{kid %u, a %u, b %#llx} (%u entries, %u expected)",
                    what, iter, from + i, g->kid, g->a, (unsigned long long)g->b, w->kid, w->a,
                    (unsigned long long)w->b, have, from + n);
    }
    if (have != from + n)
        hx_fail("%s, iteration %ld: the log holds %u entries after synchronising, expected %u "
                "(work %s)",
                what, iter, have, from + n, have < from + n ? "missing or late" : "extra");
}

/* ---- kernels ------------------------------------------------------------------------------- */

static void k_rec(const void *pp, const unsigned g[3], const unsigned b[3])
{
    (void)g;
    (void)b;
    const hx_p_rec *p = pp;
    hx_log_put(p->log, p->kid, p->val, 0);
}

static void k_rec64(const void *pp, const unsigned g[3], const unsigned b[3])
{
    (void)g;
    (void)b;
    const hx_p_rec64 *p = pp;
    hx_log_put(p->log, p->kid, p->x, p->v);
}

static void k_acc(const void *pp, const unsigned g[3], const unsigned b[3])
{
    (void)g;
    (void)b;
    const hx_p_acc *p = pp;
    uint64_t v = hx_mix(*p->acc, p->kid, p->val);
    *p->acc = v;
    if (p->log)
        hx_log_put(p->log, p->kid, p->val, v);
}

static void k_copy(const void *pp, const unsigned g[3], const unsigned b[3])
{
    (void)g;
    (void)b;
    const hx_p_copy *p = pp;
    uint64_t v = *p->src;
    *p->dst = v;
    if (p->log)
        hx_log_put(p->log, p->kid, 0, v);
}

static void k_flag(const void *pp, const unsigned g[3], const unsigned b[3])
{
    (void)g;
    (void)b;
    const hx_p_flag *p = pp;
    __atomic_store_n(p->flag, p->v, __ATOMIC_RELEASE);
}

static const size_t s_rec[] = { 8, 4, 4 }, s_rec64[] = { 8, 8, 1, 2 }, s_acc[] = { 8, 8, 4, 4 },
                    s_copy[] = { 8, 8, 8, 4 }, s_flag[] = { 8, 4 };

static CUfunction must(CUfunction f, const char *name)
{
    HX_ASSERT(f, "cannot register kernel %s", name);
    return f;
}

CUfunction hx_kernel_rec(const char *n) { return must(fakecuda_kernel(n, k_rec, 3, s_rec), n); }
CUfunction hx_kernel_rec64(const char *n) { return must(fakecuda_kernel(n, k_rec64, 4, s_rec64), n); }
CUfunction hx_kernel_acc(const char *n) { return must(fakecuda_kernel(n, k_acc, 4, s_acc), n); }
CUfunction hx_kernel_copy(const char *n) { return must(fakecuda_kernel(n, k_copy, 4, s_copy), n); }
CUfunction hx_kernel_flag(const char *n) { return must(fakecuda_kernel(n, k_flag, 2, s_flag), n); }

CUfunction hx_module_rec(CUmodule m, const char *n)
{
    return must(fakecuda_module_kernel(m, n, k_rec, 3, s_rec), n);
}

CUfunction hx_module_rec64(CUmodule m, const char *n)
{
    return must(fakecuda_module_kernel(m, n, k_rec64, 4, s_rec64), n);
}

static void launch(CUfunction f, CUstream s, void **params, int ptsz)
{
    if (ptsz)
        CK(cuLaunchKernel_ptsz(f, 1, 1, 1, 32, 1, 1, 0, s, params, NULL));
    else
        CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, params, NULL));
}

void hx_rec(CUfunction f, CUstream s, hx_log *log, uint32_t kid, uint32_t val)
{
    void *p[] = { &log, &kid, &val };
    launch(f, s, p, 0);
}

void hx_rec_ptsz(CUfunction f, CUstream s, hx_log *log, uint32_t kid, uint32_t val)
{
    void *p[] = { &log, &kid, &val };
    launch(f, s, p, 1);
}

void hx_never_repeat(CUfunction f, CUstream s, hx_log *scratch, long n)
{
    for (long i = 0; i < n; i++) {
        uint32_t zero = 0, kid = 99;
        void *p[] = { &scratch, &kid, &zero };
        CUlaunchAttribute at = { .id = CU_LAUNCH_ATTRIBUTE_PRIORITY };
        at.value.priority = (int)(1 + i);
        CUlaunchConfig cfg = { (unsigned)(1 + i), 1, 1, 32, 1, 1, 0, s, &at, 1 };
        CK(cuLaunchKernelEx(&cfg, f, p, NULL));
        if (i % 8 == 7) {
            CK(cuStreamSynchronize(s));
            __atomic_store_n(&scratch->n, 0, __ATOMIC_RELAXED); /* its content is not the point */
        }
    }
    CK(cuStreamSynchronize(s));
}

void hx_rec64(CUfunction f, CUstream s, hx_log *log, uint64_t v, uint8_t kid, uint16_t x)
{
    void *p[] = { &log, &v, &kid, &x };
    launch(f, s, p, 0);
}

void hx_acc(CUfunction f, CUstream s, hx_log *log, uint64_t *acc, uint32_t kid, uint32_t val)
{
    void *p[] = { &log, &acc, &kid, &val };
    launch(f, s, p, 0);
}

void hx_copy(CUfunction f, CUstream s, uint64_t *dst, const uint64_t *src, hx_log *log,
             uint32_t kid)
{
    void *p[] = { &dst, &src, &log, &kid };
    launch(f, s, p, 0);
}

void hx_flag(CUfunction f, CUstream s, uint32_t *flag, uint32_t v)
{
    void *p[] = { &flag, &v };
    launch(f, s, p, 0);
}

uint64_t *hx_dev_u64(size_t n, uint64_t init)
{
    CUdeviceptr d;
    CK(cuMemAlloc_v2(&d, n * sizeof(uint64_t)));
    uint64_t *host = malloc(n * sizeof *host);
    HX_ASSERT(host, "out of memory");
    for (size_t i = 0; i < n; i++)
        host[i] = init;
    CK(cuMemcpyHtoD_v2(d, host, n * sizeof *host));
    free(host);
    return (uint64_t *)(uintptr_t)d;
}

void *hx_driver_sym(const char *name)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    HX_ASSERT(h, "dlopen libcuda.so.1: %s", dlerror());
    void *p = dlsym(h, name);
    HX_ASSERT(p, "dlsym %s: %s", name, dlerror());
    return p;
}
