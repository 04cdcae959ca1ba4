/* Errors of held launches, and the engine's smaller ordering defects (issue 10, items 4-5).
 * A launch the library holds is reported done (CUDA_SUCCESS); these scenarios check that it is
 * one the driver would have taken, that an error it meets when it goes out later still reaches
 * the application, and that nothing held is lost. Run without the library they pass too (the
 * driver's errors come at the launch itself). bats/cpu_harness_errors.bats runs them.
 *
 * Usage: errors SCENARIO [ARG]
 *   late      a held launch the driver refuses when it goes out (dynamic shared memory over
 *             the kernel's limit): its error comes at the launch or at the sync after it, once
 *   latefree  the same, flushed by another thread's cuMemFree: the error comes at the stream's
 *             next launch
 *   latesync  the same, flushed by a cuCtxSynchronize, which returns the error
 *   wide      launches of 21 parameters held and issued eagerly (cut by a sync)
 *   ctx       a launch on a stream of a context that is not current: INVALID_CONTEXT at once
 *   destroy   a stream destroyed while it holds, another context current: what it held runs
 *   freeseg   another thread frees at varying points of this thread's loop (sequence A B C D)
 *   ptdsexit  ARG threads hold launches on their per-thread streams and exit
 *   ctxslots  ARG contexts, one after the other, each running the loop and destroyed
 *   first     profile: ARG "save" runs the loop; "check" first launches its kernel with too much
 *             shared memory, which must fail (a profile may not hold a launch never run here) */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static CUresult launch_smem(CUfunction f, CUstream s, hx_log *log, uint32_t kid, uint32_t val,
                            unsigned smem)
{
    void *p[] = { &log, &kid, &val };
    return cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, smem, s, p, NULL);
}

#define TOO_MUCH_SMEM (64 * 1024) /* over the default 48 KiB limit */

/* The loop every scenario learns: A B C on s (kids base+0..2), then a sync. */
static void loop3(CUfunction *K, CUstream s, hx_log *log, uint32_t base, long iters)
{
    for (long it = 0; it < iters; it++) {
        uint32_t from = log->n;
        hx_entry e[3];
        for (uint32_t k = 0; k < 3; k++) {
            hx_rec(K[k], s, log, base + k, (uint32_t)it);
            e[k] = (hx_entry){ base + k, (uint32_t)it, 0 };
        }
        CK(cuStreamSynchronize(s));
        hx_log_expect(log, from, e, 3, "loop", it);
    }
}

static void kernels(CUfunction *K, const char *pfx)
{
    char n[32];
    for (int k = 0; k < 3; k++) {
        snprintf(n, sizeof n, "%s_%c", pfx, 'a' + k);
        K[k] = hx_kernel_rec(n);
    }
}

/* wide: a kernel of 21 parameters (more than issue()'s 16 on the stack), held and issued
 * eagerly: its parameters go out through the stream's scratch array, reserved when held */
#define WIDE 20
typedef struct { hx_log *log; uint32_t v[WIDE]; } wide_p;

static void k_wide(const void *pp, const unsigned g[3], const unsigned b[3])
{
    (void)g;
    (void)b;
    const wide_p *p = pp;
    uint64_t h = 0;
    for (int i = 0; i < WIDE; i++)
        h = hx_mix(h, (uint32_t)i, p->v[i]);
    hx_log *l = p->log;
    uint32_t n = __atomic_load_n(&l->n, __ATOMIC_RELAXED);
    if (n < l->cap) {
        l->e[n] = (hx_entry){ p->v[0], p->v[WIDE - 1], h };
        __atomic_store_n(&l->n, n + 1, __ATOMIC_RELEASE);
    }
}

static void wide_launch(CUfunction f, CUstream s, hx_log *log, uint32_t kid, uint32_t it,
                        hx_entry *e)
{
    uint32_t v[WIDE];
    void *p[WIDE + 1] = { &log };
    uint64_t h = 0;
    for (int i = 0; i < WIDE; i++) {
        v[i] = i ? it * 31 + (uint32_t)i : kid;
        p[i + 1] = &v[i];
        h = hx_mix(h, (uint32_t)i, v[i]);
    }
    CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, p, NULL));
    *e = (hx_entry){ kid, v[WIDE - 1], h };
}

static void wide(void)
{
    hx_init();
    size_t sz[WIDE + 1] = { 8 };
    for (int i = 1; i <= WIDE; i++)
        sz[i] = 4;
    CUfunction W[3] = { fakecuda_kernel("wide_a", k_wide, WIDE + 1, sz),
                        fakecuda_kernel("wide_b", k_wide, WIDE + 1, sz),
                        fakecuda_kernel("wide_c", k_wide, WIDE + 1, sz) };
    HX_ASSERT(W[0] && W[1] && W[2], "wide: cannot register the kernels");
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_log *log = hx_log_new(128);
    for (uint32_t it = 0; it < 12; it++) {
        uint32_t from = log->n;
        hx_entry e[3];
        for (uint32_t k = 0; k < 3; k++) {
            wide_launch(W[k], s, log, k, it, &e[k]);
            /* A B held (the first time before any graph was built: iteration 0 is only
             * watched, 1 and 2 are learned, cache/watch.h): a sync sends them out eagerly */
            if (k == 1 && (it == 3 || it == 8))
                CK(cuStreamSynchronize(s));
        }
        CK(cuStreamSynchronize(s));
        hx_log_expect(log, from, e, 3, "wide", it);
    }
    CK(cuStreamDestroy_v2(s));
}

/* ctx */
static void ctx(void)
{
    hx_init();
    CUfunction K[3];
    kernels(K, "ctx");
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_log *log = hx_log_new(64);
    loop3(K, s, log, 0, 6);
    uint32_t from = log->n;
    CUcontext other;
    CK(cuCtxCreate_v4(&other, NULL, 0, 0)); /* now current */
    CUresult r = launch_smem(K[0], s, log, 0, 100, 0);
    HX_ASSERT(r == CUDA_ERROR_INVALID_CONTEXT,
              "ctx: a launch on a stream of a context that is not current returned %d, "
              "expected CUDA_ERROR_INVALID_CONTEXT (%d)", (int)r, (int)CUDA_ERROR_INVALID_CONTEXT);
    CK(cuCtxPopCurrent_v2(NULL));
    CK(cuStreamSynchronize(s));
    hx_log_expect(log, from, NULL, 0, "ctx: nothing ran", 0);
    loop3(K, s, log, 0, 3);
    CK(cuCtxDestroy_v2(other));
    CK(cuStreamDestroy_v2(s));
}

/* destroy */
static void destroy(void)
{
    CUcontext c = hx_init();
    CUfunction K[3];
    kernels(K, "ds");
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_log *log = hx_log_new(64);
    loop3(K, s, log, 0, 6);
    uint32_t from = log->n;
    hx_rec(K[0], s, log, 0, 100); /* held */
    hx_rec(K[1], s, log, 1, 100);
    CUcontext other;
    CK(cuCtxCreate_v4(&other, NULL, 0, 0)); /* now current */
    CK(cuStreamDestroy_v2(s));
    CK(cuCtxSetCurrent(c));
    CK(cuCtxSynchronize());
    hx_entry e[2] = { { 0, 100, 0 }, { 1, 100, 0 } };
    hx_log_expect(log, from, e, 2, "destroy: what was held ran", 0);
    CK(cuCtxDestroy_v2(other));
}

/* freeseg: the helper frees when told, while the main thread waits (no timing involved) */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_req, g_done, g_quit;
static CUcontext g_ctx;

static void *freer(void *arg)
{
    (void)arg;
    CK(cuCtxSetCurrent(g_ctx));
    pthread_mutex_lock(&g_mu);
    for (;;) {
        while (g_req == g_done && !g_quit)
            pthread_cond_wait(&g_cv, &g_mu);
        if (g_req == g_done)
            break;
        pthread_mutex_unlock(&g_mu);
        CUdeviceptr d;
        CK(cuMemAlloc_v2(&d, 64));
        CK(cuMemFree_v2(d));
        pthread_mutex_lock(&g_mu);
        g_done++;
        pthread_cond_broadcast(&g_cv);
    }
    pthread_mutex_unlock(&g_mu);
    return NULL;
}

static void free_quit(pthread_t th)
{
    pthread_mutex_lock(&g_mu);
    g_quit = 1;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_mu);
    pthread_join(th, NULL);
}

static void free_now(void)
{
    pthread_mutex_lock(&g_mu);
    int want = ++g_req;
    pthread_cond_broadcast(&g_cv);
    while (g_done != want)
        pthread_cond_wait(&g_cv, &g_mu);
    pthread_mutex_unlock(&g_mu);
}

/* late / latefree / latesync */
static void late(int by_free)
{
    g_ctx = hx_init();
    CUfunction K[3];
    kernels(K, "late");
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_log *log = hx_log_new(64);
    loop3(K, s, log, 0, 6);
    uint32_t from = log->n;
    /* A is held (the template begins), B too (dimensions are values), but B cannot run */
    CK(launch_smem(K[0], s, log, 0, 100, 0));
    CUresult rb = launch_smem(K[1], s, log, 1, 100, TOO_MUCH_SMEM), r2, r3 = CUDA_SUCCESS;
    if (by_free == 2) {
        r2 = cuCtxSynchronize(); /* a sync of every stream: the driver would return it here */
        r3 = cuStreamSynchronize(s);
    } else if (by_free) {
        /* another thread frees: every stream is flushed, and the error stays on s (that
         * thread never launched on it) */
        pthread_t th;
        HX_ASSERT(pthread_create(&th, NULL, freer, NULL) == 0, "latefree: pthread_create");
        free_now();
        free_quit(th);
        r2 = launch_smem(K[2], s, log, 2, 100, 0);
        r3 = cuStreamSynchronize(s);
    } else {
        r2 = cuStreamSynchronize(s);
    }
    int errs = (rb == CUDA_ERROR_INVALID_VALUE) + (r2 == CUDA_ERROR_INVALID_VALUE) +
               (r3 == CUDA_ERROR_INVALID_VALUE);
    printf("late: launch %d, next call %d, sync %d\n", (int)rb, (int)r2, (int)r3);
    HX_ASSERT(errs == 1 && (rb == CUDA_SUCCESS || rb == CUDA_ERROR_INVALID_VALUE) &&
                  (r2 == CUDA_SUCCESS || r2 == CUDA_ERROR_INVALID_VALUE) &&
                  (r3 == CUDA_SUCCESS || r3 == CUDA_ERROR_INVALID_VALUE),
              "late: the refused launch's error must reach the application exactly once "
              "(launch %d, next call %d, sync %d)", (int)rb, (int)r2, (int)r3);
    CK(cuStreamSynchronize(s)); /* not sticky: returned once */
    hx_entry e[2] = { { 0, 100, 0 }, { 2, 100, 0 } };
    hx_log_expect(log, from, e, by_free == 1 ? 2 : 1, "late: what ran", 0);
    loop3(K, s, log, 0, 4); /* and the stream goes on as before */
    CK(cuStreamDestroy_v2(s));
}

static void freeseg(long iters)
{
    g_ctx = hx_init();
    CUfunction K[4];
    kernels(K, "fs");
    K[3] = hx_kernel_rec("fs_d");
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_log *log = hx_log_new((uint32_t)(iters * 4 + 8));
    pthread_t th;
    HX_ASSERT(pthread_create(&th, NULL, freer, NULL) == 0, "freeseg: pthread_create");
    for (long it = 0; it < iters; it++) {
        uint32_t from = log->n;
        hx_entry e[4];
        for (uint32_t k = 0; k < 4; k++) {
            hx_rec(K[k], s, log, k, (uint32_t)it);
            e[k] = (hx_entry){ k, (uint32_t)it, 0 };
            if (k == (uint32_t)(it % 4)) /* after A, B, C or D: a different place each time */
                free_now();
        }
        CK(cuStreamSynchronize(s));
        hx_log_expect(log, from, e, 4, "freeseg", it);
    }
    free_quit(th);
    CK(cuStreamDestroy_v2(s));
}

/* ptdsexit */
static CUfunction g_K[3];
static hx_log *g_log;

static void *ptds_thread(void *arg)
{
    uint32_t base = (uint32_t)(uintptr_t)arg * 10;
    CK(cuCtxSetCurrent(g_ctx));
    for (uint32_t it = 0; it < 5; it++) {
        for (uint32_t k = 0; k < 3; k++)
            hx_rec_ptsz(g_K[k], NULL, g_log, base + k, it);
        CK(cuStreamSynchronize_ptsz(NULL));
    }
    hx_rec_ptsz(g_K[0], NULL, g_log, base, 99); /* held as the thread exits */
    return NULL;
}

static void ptdsexit(long n)
{
    g_ctx = hx_init();
    kernels(g_K, "px");
    g_log = hx_log_new((uint32_t)(n * 16 + 8));
    for (long i = 0; i < n; i++) { /* one after the other: the log's order is known */
        pthread_t th;
        HX_ASSERT(pthread_create(&th, NULL, ptds_thread, (void *)(uintptr_t)i) == 0,
                  "ptdsexit: pthread_create");
        pthread_join(th, NULL);
        /* the exited thread's last launch is on its own per-thread stream, which nothing
         * orders before the next thread's: the context waits for it (without this, a loaded
         * host let the next thread's launches run first, with or without the library) */
        CK(cuCtxSynchronize());
    }
    CK(cuCtxSynchronize());
    hx_entry *e = calloc((size_t)n * 16, sizeof *e);
    HX_ASSERT(e, "ptdsexit: calloc");
    uint32_t m = 0;
    for (long i = 0; i < n; i++) {
        uint32_t base = (uint32_t)i * 10;
        for (uint32_t it = 0; it < 5; it++)
            for (uint32_t k = 0; k < 3; k++)
                e[m++] = (hx_entry){ base + k, it, 0 };
        e[m++] = (hx_entry){ base, 99, 0 };
    }
    hx_log_expect(g_log, 0, e, m, "ptdsexit: every thread's launches, the held one included", 0);
    free(e);
}

/* ctxslots: each context's graph launches are printed ("ctxslots: context I graph launches
 * G"). Before its loop, each stream launches W twice: its state is made there (at the second
 * W, or the first), never in the loop. Else the watch (cache/watch.h) makes it at the loop's
 * second iteration, or at its first launch when another pair's bits in the watch's filter
 * match this one's -- which depends on heap addresses, so the replays would vary from run to
 * run. */
static void ctxslots(long n)
{
    hx_init();
    for (long i = 0; i < n; i++) {
        CUcontext c;
        CK(cuCtxCreate_v4(&c, NULL, 0, 0));
        CUfunction K[3];
        kernels(K, "cs");
        CUfunction W = hx_kernel_rec("cs_w");
        CUstream s;
        CK(cuStreamCreate(&s, 0));
        hx_log *log = hx_log_new(64);
        hx_rec(W, s, log, 9, 0);
        hx_rec(W, s, log, 9, 1);
        CK(cuStreamSynchronize(s));
        hx_log_expect(log, 0, (hx_entry[]){ { 9, 0, 0 }, { 9, 1, 0 } }, 2, "ctxslots: W W", 0);
        struct fakecuda_counters c0, c1;
        fakecuda_counters(&c0);
        loop3(K, s, log, 0, 6);
        fakecuda_counters(&c1);
        printf("ctxslots: context %ld graph launches %llu\n", i + 1,
               (unsigned long long)(c1.graph_launches - c0.graph_launches));
        CK(cuStreamDestroy_v2(s));
        CK(cuCtxDestroy_v2(c));
    }
    fflush(stdout);
}

/* first */
static void first(const char *mode)
{
    hx_init();
    CUfunction K[3];
    kernels(K, "pf");
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_log *log = hx_log_new(64);
    if (!strcmp(mode, "check")) {
        CUresult r = launch_smem(K[0], s, log, 0, 100, TOO_MUCH_SMEM);
        HX_ASSERT(r == CUDA_ERROR_INVALID_VALUE,
                  "first: the process's first launch of a profiled kernel, with more shared "
                  "memory than it may use, returned %d, expected CUDA_ERROR_INVALID_VALUE",
                  (int)r);
        CK(cuStreamSynchronize(s));
        hx_log_expect(log, 0, NULL, 0, "first: nothing ran", 0);
    }
    loop3(K, s, log, 0, 6);
    CK(cuStreamDestroy_v2(s));
}

int main(int argc, char **argv)
{
    const char *sc = argc > 1 ? argv[1] : "";
    if (!strcmp(sc, "late") || !strcmp(sc, "latefree") || !strcmp(sc, "latesync"))
        late(sc[4] == 'f' ? 1 : sc[4] == 's' ? 2 : 0);
    else if (!strcmp(sc, "wide"))
        wide();
    else if (!strcmp(sc, "ctx"))
        ctx();
    else if (!strcmp(sc, "destroy"))
        destroy();
    else if (!strcmp(sc, "freeseg"))
        freeseg(hx_arg(argc, argv, 2, 40));
    else if (!strcmp(sc, "ptdsexit"))
        ptdsexit(hx_arg(argc, argv, 2, 8));
    else if (!strcmp(sc, "ctxslots"))
        ctxslots(hx_arg(argc, argv, 2, 70));
    else if (!strcmp(sc, "first"))
        first(argc > 2 ? argv[2] : "save");
    else
        hx_fail("usage: errors late|latefree|latesync|wide|ctx|destroy|freeseg|ptdsexit|ctxslots|first [ARG]");
    char name[64];
    snprintf(name, sizeof name, "errors %s", sc);
    hx_pass(name);
    return 0;
}
