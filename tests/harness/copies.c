/* Scenario c: async memsets and copies inside repeated sequences (memset and memcpy graph
 * nodes). Every value changes every iteration: memset values, pointers (two buffers taking
 * turns) and kernel arguments, so a stale node parameter shows as a wrong result. Results are
 * read right after the ordering point that ends each iteration (a stream sync, or an event
 * record + event sync), and must be there then, as eagerly.
 *
 * Usage: copies solver pinned|pageable|managed [iterations=40] [diverge|legacy]
 *          the iterative-solver loop: memset(d_sum) + kernel + DtoH read-back + sync, into
 *          pinned or pageable host memory, or with a managed d_sum; diverge: every 5th
 *          iteration has one more kernel before the read-back (held records go out eagerly);
 *          legacy: on the legacy default stream (NULL)
 *        copies dtod [iterations=40]
 *          memsetD8, DtoD copy (_ptsz entry point), kernel, memsetD16, cuMemcpyAsync to
 *          pinned memory, DtoH to pinned memory, sync
 *        copies htod pageable|pinned [iterations=40]
 *          HtoD copy from host memory, then the kernel and a read-back; a pageable source is
 *          overwritten right after the call (the driver read it during the call)
 *        copies freed [iterations=40]
 *          as MAGMA's batched solvers do: each iteration allocates its buffer, memsets it,
 *          runs the kernel on it, reads it back and frees it after the sync. The fake's call
 *          hook holds the first memset node that another thread (the library's worker) adds
 *          until the iteration's free has returned: the driver then refuses the node (the
 *          memory is gone), as the H200 refused F13's (MAGMA's memset, 2026-11-27)
 *        copies freed_two [iterations=40]
 *          the same with a second memset and kernel on the buffer's other word (run with
 *          AUTOGRAPH_PIECE=2: two pieces, each with a memset node; the second piece's request,
 *          made before the first one's refusal came back, is refused too)
 *        copies freed_late [iterations=40]
 *          the same, the hook holding the worker's instantiation instead: the node was added
 *          while the memory lived, and the instantiation is refused (Thrust's temporaries, the
 *          H100, sixteenth session) */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "harness.h"

static uint64_t pattern(uint64_t unit, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 8; i += bytes)
        v |= unit << (8 * i);
    return v;
}

static void end_iteration(CUstream s, CUevent ev, long it)
{
    if (it % 3 == 2) {
        CK(cuEventRecord(ev, s));
        CK(cuEventSynchronize(ev));
    } else {
        CK(cuStreamSynchronize(s));
    }
}

static uint64_t host_pageable[2];

static int solver(const char *mode, long iters, int diverge, int legacy)
{
    CUfunction ACC = hx_kernel_acc("solver_acc"), X = hx_kernel_rec("solver_extra");
    CUstream s = NULL;
    if (!legacy)
        CK(cuStreamCreate(&s, 0));
    CUevent ev;
    CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    hx_log *log = hx_log_new((uint32_t)(iters * 2 + 8));
    uint64_t *d[2], *host;
    if (!strcmp(mode, "managed")) {
        for (int b = 0; b < 2; b++) {
            CUdeviceptr p;
            CK(cuMemAllocManaged(&p, 8, CU_MEM_ATTACH_GLOBAL));
            d[b] = (uint64_t *)(uintptr_t)p;
        }
    } else {
        d[0] = hx_dev_u64(1, 0);
        d[1] = hx_dev_u64(1, 0);
    }
    if (!strcmp(mode, "pageable")) {
        host = host_pageable;
    } else {
        void *p;
        CK(cuMemAllocHost_v2(&p, 16));
        host = p;
    }
    host[0] = host[1] = 0;
    uint64_t want[2] = { 0, 0 };
    uint32_t nlog = 0;
    for (long it = 0; it < iters; it++) {
        int b = (int)(it % 2);
        uint32_t v = (uint32_t)(it * 7 + 1);
        hx_entry exp[2];
        uint32_t n = 0;
        CK(cuMemsetD32Async((CUdeviceptr)(uintptr_t)d[b], v, 2, s));
        hx_acc(ACC, s, log, d[b], 1, (uint32_t)it);
        want[b] = hx_mix(pattern(v, 4), 1, (uint32_t)it);
        exp[n++] = (hx_entry){ 1, (uint32_t)it, want[b] };
        if (diverge && it % 5 == 3) {
            hx_rec(X, s, log, 2, (uint32_t)it);
            exp[n++] = (hx_entry){ 2, (uint32_t)it, 0 };
        }
        CK(cuMemcpyDtoHAsync_v2(&host[b], (CUdeviceptr)(uintptr_t)d[b], 8, s));
        end_iteration(s, ev, it);
        HX_ASSERT(host[b] == want[b] && host[!b] == want[!b],
                  "solver %s, iteration %ld: read back %#llx / %#llx, expected %#llx / %#llx",
                  mode, it, (unsigned long long)host[b], (unsigned long long)host[!b],
                  (unsigned long long)want[b], (unsigned long long)want[!b]);
        hx_log_expect(log, nlog, exp, n, "solver", it);
        nlog += n;
    }
    if (!legacy)
        CK(cuStreamDestroy_v2(s));
    hx_pass("copies solver");
    return 0;
}

static int dtod(long iters)
{
    CUfunction ACC = hx_kernel_acc("dtod_acc");
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    CUevent ev;
    CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    hx_log *log = hx_log_new((uint32_t)(iters + 8));
    uint64_t *a = hx_dev_u64(1, 0), *b2[2] = { hx_dev_u64(1, 0), hx_dev_u64(1, 0) },
             *c = hx_dev_u64(1, 0);
    void *p;
    CK(cuMemAllocHost_v2(&p, 16));
    uint64_t *out = p;
    for (long it = 0; it < iters; it++) {
        uint64_t *b = b2[it % 2];
        uint8_t u8 = (uint8_t)(it * 3 + 1);
        uint16_t u16 = (uint16_t)(it * 1001 + 7);
        CK(cuMemsetD8Async((CUdeviceptr)(uintptr_t)a, u8, 8, s));
        CK(cuMemcpyDtoDAsync_v2_ptsz((CUdeviceptr)(uintptr_t)b, (CUdeviceptr)(uintptr_t)a, 8, s));
        hx_acc(ACC, s, log, b, 3, (uint32_t)it);
        uint64_t wb = hx_mix(pattern(u8, 1), 3, (uint32_t)it);
        CK(cuMemsetD16Async((CUdeviceptr)(uintptr_t)c, u16, 4, s));
        CK(cuMemcpyAsync((CUdeviceptr)(uintptr_t)&out[0], (CUdeviceptr)(uintptr_t)c, 8, s));
        CK(cuMemcpyDtoHAsync_v2(&out[1], (CUdeviceptr)(uintptr_t)b, 8, s));
        end_iteration(s, ev, it);
        HX_ASSERT(out[0] == pattern(u16, 2) && out[1] == wb,
                  "dtod, iteration %ld: read back %#llx / %#llx, expected %#llx / %#llx", it,
                  (unsigned long long)out[0], (unsigned long long)out[1],
                  (unsigned long long)pattern(u16, 2), (unsigned long long)wb);
        hx_entry e = { 3, (uint32_t)it, wb };
        hx_log_expect(log, (uint32_t)it, &e, 1, "dtod", it);
    }
    CK(cuStreamDestroy_v2(s));
    hx_pass("copies dtod");
    return 0;
}

static uint64_t src_pageable;

static int htod(const char *mode, long iters)
{
    CUfunction ACC = hx_kernel_acc("htod_acc");
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    CUevent ev;
    CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    hx_log *log = hx_log_new((uint32_t)(iters + 8));
    uint64_t *d = hx_dev_u64(1, 0), *src = &src_pageable, *out;
    int pageable = !strcmp(mode, "pageable");
    void *p;
    CK(cuMemAllocHost_v2(&p, 16));
    out = p;
    if (!pageable)
        src = out + 1;
    for (long it = 0; it < iters; it++) {
        uint64_t v = (uint64_t)it * 5 + 3;
        *src = v;
        CK(cuMemcpyHtoDAsync_v2((CUdeviceptr)(uintptr_t)d, src, 8, s));
        if (pageable)
            *src = 0xdeadbeef; /* allowed: the driver has read a pageable source already */
        hx_acc(ACC, s, log, d, 4, (uint32_t)it);
        uint64_t w = hx_mix(v, 4, (uint32_t)it);
        CK(cuMemcpyDtoHAsync_v2(out, (CUdeviceptr)(uintptr_t)d, 8, s));
        end_iteration(s, ev, it);
        HX_ASSERT(*out == w, "htod %s, iteration %ld: read back %#llx, expected %#llx", mode, it,
                  (unsigned long long)*out, (unsigned long long)w);
        hx_entry e = { 4, (uint32_t)it, w };
        hx_log_expect(log, (uint32_t)it, &e, 1, "htod", it);
    }
    CK(cuStreamDestroy_v2(s));
    hx_pass("copies htod");
    return 0;
}

/* The "freed" scenarios' hook: the first g_hold_call (cuGraphAddMemsetNode, or
 * cuGraphInstantiateWithFlags) of a thread other than main's waits (at most 5 s) for the next
 * free of main's to return. */
static const char *g_hold_call = "cuGraphAddMemsetNode";
static pthread_t g_main;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static long g_frees;
static int g_held_once;

static void freed_hook(const char *name)
{
    if (pthread_equal(pthread_self(), g_main) || strcmp(name, g_hold_call))
        return;
    pthread_mutex_lock(&g_mu);
    if (!g_held_once) {
        g_held_once = 1;
        long seen = g_frees;
        double limit = hx_now() + 5.0;
        while (g_frees == seen && hx_now() < limit) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 10 * 1000 * 1000;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&g_cv, &g_mu, &ts);
        }
    }
    pthread_mutex_unlock(&g_mu);
}

/* two: a second memset and kernel on the buffer's second word after the first kernel (with
 * AUTOGRAPH_PIECE=2, two pieces with a memset node each) */
static int freed(long iters, int two)
{
    CUfunction ACC = hx_kernel_acc("freed_acc");
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_settle settle;
    hx_log *log = hx_log_new((uint32_t)(2 * hx_settle_init(&settle, iters) + 8));
    void *p;
    CK(cuMemAllocHost_v2(&p, 16));
    uint64_t *host = p;
    g_main = pthread_self();
    fakecuda_set_call_hook(freed_hook);
    for (long it = 0; hx_settle_more(&settle, it, iters); it++) {
        CUdeviceptr d;
        CK(cuMemAlloc_v2(&d, 16));
        uint32_t v = (uint32_t)(it * 5 + 2), v2 = (uint32_t)(it * 7 + 1);
        CK(cuMemsetD32Async(d, v, 2, s));
        hx_acc(ACC, s, log, (uint64_t *)(uintptr_t)d, 1, (uint32_t)it);
        if (two) {
            CK(cuMemsetD32Async(d + 8, v2, 2, s));
            hx_acc(ACC, s, log, (uint64_t *)(uintptr_t)(d + 8), 2, (uint32_t)it);
        }
        CK(cuMemcpyDtoHAsync_v2(host, d, two ? 16 : 8, s));
        CK(cuStreamSynchronize(s));
        hx_settle_done(&settle, 1 + (uint32_t)two);
        CK(cuMemFree_v2(d));
        pthread_mutex_lock(&g_mu);
        g_frees++;
        pthread_cond_broadcast(&g_cv);
        pthread_mutex_unlock(&g_mu);
        hx_entry e[2] = { { 1, (uint32_t)it, hx_mix(pattern(v, 4), 1, (uint32_t)it) },
                          { 2, (uint32_t)it, hx_mix(pattern(v2, 4), 2, (uint32_t)it) } };
        for (int k = 0; k < 1 + two; k++)
            HX_ASSERT(host[k] == e[k].b, "freed, iteration %ld: word %d read back %#llx, "
                      "expected %#llx", it, k, (unsigned long long)host[k],
                      (unsigned long long)e[k].b);
        hx_log_expect(log, (uint32_t)(it * (1 + two)), e, (uint32_t)(1 + two), "freed", it);
    }
    fakecuda_set_call_hook(NULL);
    CK(cuStreamDestroy_v2(s));
    hx_pass(strcmp(g_hold_call, "cuGraphAddMemsetNode") ? "copies freed_late"
            : two ? "copies freed_two" : "copies freed");
    return 0;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "solver";
    hx_init();
    if (!strcmp(what, "solver"))
        return solver(argc > 2 ? argv[2] : "pinned", hx_arg(argc, argv, 3, 40),
                      argc > 4 && !strcmp(argv[4], "diverge"),
                      argc > 4 && !strcmp(argv[4], "legacy"));
    if (!strcmp(what, "dtod"))
        return dtod(hx_arg(argc, argv, 2, 40));
    if (!strcmp(what, "freed") || !strcmp(what, "freed_two"))
        return freed(hx_arg(argc, argv, 2, 40), !strcmp(what, "freed_two"));
    if (!strcmp(what, "freed_late")) {
        g_hold_call = "cuGraphInstantiateWithFlags";
        return freed(hx_arg(argc, argv, 2, 40), 0);
    }
    if (!strcmp(what, "htod"))
        return htod(argc > 2 ? argv[2] : "pageable", hx_arg(argc, argv, 3, 40));
    hx_fail("unknown scenario %s", what);
}
