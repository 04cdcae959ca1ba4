/* The fake driver's own test: its execution model, its answers to bad input, graphs, capture
 * and cuGetProcAddress. Run without libautograph (the harness is only worth what the fake is).
 *
 * Usage: selftest            all checks
 *        selftest fail       run under FAKECUDA_FAIL=cuGraphLaunch:2: every 2nd launch fails */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

/* spins `ms` milliseconds, then *dst = v */
typedef struct { uint64_t *dst; uint64_t v; uint32_t ms; } p_slow;
static void k_slow(const void *pp, const unsigned g[3], const unsigned b[3])
{
    (void)g;
    (void)b;
    const p_slow *p = pp;
    double end = hx_now() + p->ms / 1000.0;
    while (hx_now() < end)
        ;
    __atomic_store_n(p->dst, p->v, __ATOMIC_RELEASE);
}
static const size_t s_slow[] = { 8, 8, 4 };
static CUfunction K_slow, K_copy, K_rec, K_acc;

static void slow(CUstream s, uint64_t *dst, uint64_t v, uint32_t ms, int ptsz)
{
    void *p[] = { &dst, &v, &ms };
    if (ptsz)
        CK(cuLaunchKernel_ptsz(K_slow, 1, 1, 1, 1, 1, 1, 0, s, p, NULL));
    else
        CK(cuLaunchKernel(K_slow, 1, 1, 1, 1, 1, 1, 0, s, p, NULL));
}

static uint64_t rd(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

#define EXPECT_ERR(call, err)                                                                  \
    do {                                                                                       \
        CUresult r_ = (call);                                                                  \
        HX_ASSERT(r_ == (err), "%s returned %d, expected %s (%d)", #call, (int)r_, #err,      \
                  (int)(err));                                                                 \
    } while (0)

static void test_async(void)
{
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    uint64_t *x = hx_dev_u64(1, 0);
    slow(s, x, 7, 100, 0);
    HX_ASSERT(rd(x) == 0, "a kernel ran synchronously");
    EXPECT_ERR(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    CK(cuStreamSynchronize(s));
    HX_ASSERT(rd(x) == 7, "cuStreamSynchronize returned before the kernel ran");
    CK(cuStreamQuery(s));
    /* FIFO order on one stream, asynchronously */
    hx_log *log = hx_log_new(64);
    for (uint32_t i = 0; i < 20; i++)
        hx_rec(K_rec, s, log, i, i * 3);
    CK(cuStreamSynchronize(s));
    hx_entry exp[20];
    for (uint32_t i = 0; i < 20; i++)
        exp[i] = (hx_entry){ i, i * 3, 0 };
    hx_log_expect(log, 0, exp, 20, "fifo", 0);
    CK(cuStreamDestroy_v2(s));
    EXPECT_ERR(cuStreamSynchronize(s), CUDA_ERROR_INVALID_HANDLE);
}

static void test_legacy(void)
{
    CUstream b, nb;
    CK(cuStreamCreate(&b, 0));
    CK(cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING));
    unsigned fl;
    CK(cuStreamGetFlags(nb, &fl));
    HX_ASSERT(fl == CU_STREAM_NON_BLOCKING, "flags");
    uint64_t *x = hx_dev_u64(1, 0), *y = hx_dev_u64(1, 0), *z = hx_dev_u64(1, 0);
    /* legacy work waits for earlier work on a blocking stream */
    slow(b, x, 1, 50, 0);
    hx_copy(K_copy, NULL, y, x, NULL, 0);
    uint64_t h = 0;
    CK(cuMemcpyDtoH_v2(&h, (CUdeviceptr)(uintptr_t)y, 8));
    HX_ASSERT(h == 1, "legacy stream did not wait for the blocking stream (%llu)",
              (unsigned long long)h);
    /* later blocking-stream work waits for earlier legacy work */
    slow(NULL, x, 2, 50, 0);
    hx_copy(K_copy, b, z, x, NULL, 0);
    CK(cuStreamSynchronize(b));
    HX_ASSERT(rd(z) == 2, "blocking stream did not wait for the legacy stream");
    /* a non-blocking stream is exempt, both ways */
    slow(nb, x, 3, 200, 0);
    hx_copy(K_copy, NULL, y, x, NULL, 0);
    CK(cuStreamSynchronize(NULL));
    HX_ASSERT(rd(y) == 2, "legacy stream waited for a non-blocking stream");
    CK(cuStreamSynchronize(nb));
    HX_ASSERT(rd(x) == 3, "non-blocking stream");
    /* the legacy stream is CU_STREAM_LEGACY too */
    slow(CU_STREAM_LEGACY, x, 4, 30, 0);
    CK(cuStreamSynchronize(NULL));
    HX_ASSERT(rd(x) == 4, "CU_STREAM_LEGACY is not the legacy stream");
    CK(cuStreamDestroy_v2(b));
    CK(cuStreamDestroy_v2(nb));
}

static void test_events(void)
{
    CUstream a, b;
    CUevent e;
    CK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    CK(cuEventQuery(e)); /* never recorded: complete */
    uint64_t *x = hx_dev_u64(1, 0), *y = hx_dev_u64(1, 0), *w = hx_dev_u64(1, 0);
    slow(a, x, 5, 80, 0);
    CK(cuEventRecord(e, a));
    slow(a, w, 6, 300, 0); /* after the record: not waited for */
    EXPECT_ERR(cuEventQuery(e), CUDA_ERROR_NOT_READY);
    CK(cuStreamWaitEvent(b, e, 0));
    hx_copy(K_copy, b, y, x, NULL, 0);
    CK(cuStreamSynchronize(b));
    HX_ASSERT(rd(y) == 5, "the event wait did not order b after a's work");
    HX_ASSERT(rd(w) == 0, "the event covered work recorded after it");
    CK(cuEventSynchronize(e));
    CK(cuEventQuery(e));
    CK(cuStreamSynchronize(a));
    HX_ASSERT(rd(w) == 6, "stream a");
    CK(cuEventDestroy_v2(e));
    EXPECT_ERR(cuEventQuery(e), CUDA_ERROR_INVALID_HANDLE);
    CK(cuStreamDestroy_v2(a));
    CK(cuStreamDestroy_v2(b));
}

static void test_errors(CUcontext ctx)
{
    uint32_t kid = 1, val = 2;
    hx_log *log = hx_log_new(16);
    void *p[] = { &log, &kid, &val };
    EXPECT_ERR(cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, p, NULL), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_ERR(cuLaunchKernel(K_rec, 0, 1, 1, 1, 1, 1, 0, NULL, p, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT_ERR(cuLaunchKernel(K_rec, 1, 1, 1, 0, 1, 1, 0, NULL, p, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT_ERR(cuLaunchKernel(K_rec, 1, 1, 1, 2048, 1, 1, 0, NULL, p, NULL),
               CUDA_ERROR_INVALID_VALUE);
    EXPECT_ERR(cuLaunchKernel(K_rec, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL),
               CUDA_ERROR_INVALID_VALUE);
    hx_p_rec blob = { log, 9, 10 };
    size_t bsz = sizeof blob - 0; /* 16: the layout's size */
    void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, &blob, CU_LAUNCH_PARAM_BUFFER_SIZE, &bsz,
                      CU_LAUNCH_PARAM_END };
    EXPECT_ERR(cuLaunchKernel(K_rec, 1, 1, 1, 1, 1, 1, 0, NULL, p, extra), CUDA_ERROR_INVALID_VALUE);
    size_t bad = 12;
    void *extra_bad[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, &blob, CU_LAUNCH_PARAM_BUFFER_SIZE, &bad,
                          CU_LAUNCH_PARAM_END };
    EXPECT_ERR(cuLaunchKernel(K_rec, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra_bad),
               CUDA_ERROR_INVALID_VALUE);
    EXPECT_ERR(cuLaunchKernel(K_rec, 1, 1, 1, 1, 1, 1, 0, (CUstream)(uintptr_t)0x1234, p, NULL),
               CUDA_ERROR_INVALID_HANDLE);
    EXPECT_ERR(cuLaunchKernelEx(NULL, K_rec, p, NULL), CUDA_ERROR_INVALID_VALUE);
    /* the packed-buffer form works */
    CK(cuLaunchKernel(K_rec, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
    /* launch attributes */
    CUlaunchAttribute at[2];
    memset(at, 0, sizeof at);
    at[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    at[0].value.priority = -1;
    at[1].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    at[1].value.cooperative = 1;
    CUlaunchConfig cfg = { 1, 1, 1, 1, 1, 1, 0, NULL, at, 2 };
    kid = 11;
    CK(cuLaunchKernelEx(&cfg, K_rec, p, NULL));
    kid = 12;
    CK(cuLaunchCooperativeKernel(K_rec, 1, 1, 1, 1, 1, 1, 0, NULL, p));
    CK(cuCtxSynchronize());
    hx_entry exp[] = { { 9, 10, 0 }, { 11, 2, 0 }, { 12, 2, 0 } };
    hx_log_expect(log, 0, exp, 3, "extra/ex/coop launches", 0);

    /* parameter info: CUfunction vs CUkernel */
    size_t off, sz;
    CK(cuFuncGetParamInfo(K_rec, 2, &off, &sz));
    HX_ASSERT(off == 12 && sz == 4, "param 2 at %zu size %zu", off, sz);
    EXPECT_ERR(cuFuncGetParamInfo(K_rec, 3, &off, &sz), CUDA_ERROR_INVALID_VALUE);
    CUkernel kk = fakecuda_kernel_as_kernel(K_rec);
    HX_ASSERT(kk && (void *)kk != (void *)K_rec, "CUkernel handle");
    HX_ASSERT(fakecuda_kernel_as_kernel(K_rec) == kk, "CUkernel handle not stable");
    EXPECT_ERR(cuFuncGetParamInfo((CUfunction)kk, 0, &off, &sz), CUDA_ERROR_INVALID_HANDLE);
    CK(cuKernelGetParamInfo(kk, 1, &off, &sz));
    HX_ASSERT(off == 8 && sz == 4, "kernel param 1");
    EXPECT_ERR(cuKernelGetParamInfo(kk, 3, &off, &sz), CUDA_ERROR_INVALID_VALUE);
    EXPECT_ERR(cuKernelGetParamInfo((CUkernel)K_rec, 0, &off, &sz), CUDA_ERROR_INVALID_HANDLE);
    const char *name;
    CK(cuFuncGetName(&name, K_rec));
    HX_ASSERT(!strcmp(name, "rec"), "name %s", name);
    CK(cuKernelGetName(&name, kk));
    HX_ASSERT(!strcmp(name, "rec"), "kernel name %s", name);
    CUfunction f64 = hx_kernel_rec64("rec64");
    CK(cuFuncGetParamInfo(f64, 3, &off, &sz));
    HX_ASSERT(off == 18 && sz == 2, "rec64 param 3 at %zu", off);
    /* a CUkernel launches too */
    kid = 13;
    CK(cuLaunchKernel((CUfunction)kk, 1, 1, 1, 1, 1, 1, 0, NULL, p, NULL));
    CK(cuStreamSynchronize(NULL));
    hx_entry e13 = { 13, 2, 0 };
    hx_log_expect(log, 3, &e13, 1, "CUkernel launch", 0);

    /* contexts */
    CUcontext cur, c2;
    CK(cuCtxGetCurrent(&cur));
    HX_ASSERT(cur == ctx, "current context");
    CK(cuCtxCreate_v4(&c2, NULL, 0, 0));
    CK(cuCtxGetCurrent(&cur));
    HX_ASSERT(cur == c2, "cuCtxCreate does not push");
    CK(cuCtxPopCurrent_v2(&cur));
    HX_ASSERT(cur == c2, "pop");
    CK(cuCtxGetCurrent(&cur));
    HX_ASSERT(cur == ctx, "pop restores");
    CK(cuCtxPushCurrent_v2(c2));
    CUstream s2;
    CK(cuStreamCreate(&s2, 0));
    CK(cuStreamGetCtx(s2, &cur));
    HX_ASSERT(cur == c2, "stream context");
    CK(cuCtxPopCurrent_v2(NULL));
    CK(cuCtxDestroy_v2(c2));
    EXPECT_ERR(cuCtxPushCurrent_v2(c2), CUDA_ERROR_INVALID_CONTEXT);
    const char *en;
    CK(cuGetErrorName(CUDA_ERROR_INVALID_HANDLE, &en));
    HX_ASSERT(!strcmp(en, "CUDA_ERROR_INVALID_HANDLE"), "error name");
    int v;
    CK(cuDriverGetVersion(&v));
    HX_ASSERT(v == 13000, "driver version");

    /* memory: a freed block is poisoned, a bad free refused */
    CUdeviceptr d;
    CK(cuMemAlloc_v2(&d, 64));
    CK(cuMemsetD32_v2(d, 0x01020304u, 16));
    HX_ASSERT(*(uint32_t *)(uintptr_t)d == 0x01020304u, "memset");
    CK(cuMemFree_v2(d));
    HX_ASSERT(*(uint32_t *)(uintptr_t)d == 0xDBDBDBDBu, "freed memory not poisoned");
    EXPECT_ERR(cuMemFree_v2(d), CUDA_ERROR_INVALID_VALUE);
    uint32_t src[4] = { 1, 2, 3, 4 };
    EXPECT_ERR(cuMemcpyHtoD_v2(d, src, 16), CUDA_ERROR_INVALID_VALUE);
}

static void test_procaddr(void)
{
    void *fn;
    CUdriverProcAddressQueryResult st;
    CK(cuGetProcAddress_v2("cuLaunchKernel", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &st));
    HX_ASSERT(fn == (void *)cuLaunchKernel && st == CU_GET_PROC_ADDRESS_SUCCESS, "cuLaunchKernel");
    CK(cuGetProcAddress_v2("cuLaunchKernel", &fn, 13000,
                           CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
    HX_ASSERT(fn == (void *)cuLaunchKernel_ptsz, "cuLaunchKernel per-thread");
    CK(cuGetProcAddress_v2("cuMemcpyHtoD", &fn, 13000,
                           CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
    HX_ASSERT(fn == (void *)cuMemcpyHtoD_v2_ptds, "cuMemcpyHtoD per-thread");
    CK(cuGetProcAddress_v2("cuMemFree", &fn, 13000, 0, &st));
    HX_ASSERT(fn == (void *)cuMemFree_v2, "cuMemFree");
    CK(cuGetProcAddress_v2("cuGetProcAddress", &fn, 13000, 0, &st));
    HX_ASSERT(fn == (void *)cuGetProcAddress_v2, "cuGetProcAddress 13000");
    CK(cuGetProcAddress("cuGetProcAddress", &fn, 11080, 0));
    HX_ASSERT(fn == (void *)cuGetProcAddress, "cuGetProcAddress 11080");
    EXPECT_ERR(cuGetProcAddress_v2("cuNoSuchThing", &fn, 13000, 0, &st), CUDA_ERROR_NOT_FOUND);
    HX_ASSERT(fn == NULL && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, "not found");
}

static void test_graphs(void)
{
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_log *log = hx_log_new(256);
    CUgraph g;
    CK(cuGraphCreate(&g, 0));
    CUgraphNode n[3], prev = NULL;
    CUkernel kk = fakecuda_kernel_as_kernel(K_rec);
    for (uint32_t i = 0; i < 3; i++) {
        uint32_t kid = 100 + i, val = i;
        void *p[] = { &log, &kid, &val };
        CUDA_KERNEL_NODE_PARAMS np;
        memset(&np, 0, sizeof np);
        if (i == 1) {
            np.kern = kk; /* CUkernel + current context */
        } else {
            np.func = K_rec;
        }
        np.gridDimX = np.gridDimY = np.gridDimZ = 1;
        np.blockDimX = 32;
        np.blockDimY = np.blockDimZ = 1;
        np.kernelParams = p;
        CK(cuGraphAddKernelNode_v2(&n[i], g, prev ? &prev : NULL, prev ? 1 : 0, &np));
        kid = 999; /* copied at add time: this must not matter */
        prev = n[i];
    }
    CUkernelNodeAttrValue av;
    memset(&av, 0, sizeof av);
    av.cooperative = 1;
    CK(cuGraphKernelNodeSetAttribute(n[0], CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &av));
    EXPECT_ERR(cuGraphKernelNodeSetAttribute(n[0], CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
                                             &av),
               CUDA_ERROR_INVALID_VALUE);
    CUgraphExec e;
    CK(cuGraphInstantiateWithFlags(&e, g, 0));
    CK(cuGraphUpload(e, s));
    CK(cuGraphLaunch(e, s));
    CK(cuStreamSynchronize(s));
    hx_entry e1[] = { { 100, 0, 0 }, { 101, 1, 0 }, { 102, 2, 0 } };
    hx_log_expect(log, 0, e1, 3, "graph launch", 0);

    /* the exec is a snapshot: a graph node change reaches it only through an update */
    uint32_t kid = 200, val = 7;
    void *p[] = { &log, &kid, &val };
    CUDA_KERNEL_NODE_PARAMS np;
    memset(&np, 0, sizeof np);
    np.func = K_rec;
    np.gridDimX = np.gridDimY = np.gridDimZ = 1;
    np.blockDimX = np.blockDimY = np.blockDimZ = 1;
    np.kernelParams = p;
    CK(cuGraphKernelNodeSetParams_v2(n[2], &np));
    CK(cuGraphLaunch(e, s));
    CK(cuStreamSynchronize(s));
    hx_log_expect(log, 3, e1, 3, "exec unchanged by a graph node change", 0);
    CUgraphExecUpdateResultInfo info;
    CK(cuGraphExecUpdate_v2(e, g, &info));
    HX_ASSERT(info.result == CU_GRAPH_EXEC_UPDATE_SUCCESS, "update result");
    CK(cuGraphLaunch(e, s));
    /* an exec node update after a launch does not reach that launch */
    kid = 300;
    CK(cuGraphExecKernelNodeSetParams_v2(e, n[0], &np));
    CK(cuGraphLaunch(e, s));
    CK(cuStreamSynchronize(s));
    hx_entry e2[] = { { 100, 0, 0 }, { 101, 1, 0 }, { 200, 7, 0 },
                      { 300, 7, 0 }, { 101, 1, 0 }, { 200, 7, 0 } };
    hx_log_expect(log, 6, e2, 6, "exec updates", 0);
    /* the kernel of an exec node may change (CUDA 13: within its context), to one with
     * other parameters too; a node of another graph is refused */
    np.func = K_acc;
    uint64_t *acc = hx_dev_u64(1, 0);
    void *pa[] = { &log, &acc, &kid, &val };
    np.kernelParams = pa;
    CK(cuGraphExecKernelNodeSetParams_v2(e, n[0], &np));
    CK(cuGraphLaunch(e, s));
    CK(cuStreamSynchronize(s));
    hx_entry e3[] = { { 300, 7, hx_mix(0, 300, 7) }, { 101, 1, 0 }, { 200, 7, 0 } };
    hx_log_expect(log, 12, e3, 3, "an exec node's kernel changed", 0);
    /* a topology change makes the whole-graph update fail */
    CUgraph g2;
    CK(cuGraphCreate(&g2, 0));
    CUgraphNode m;
    CK(cuGraphAddKernelNode_v2(&m, g2, NULL, 0, &np));
    EXPECT_ERR(cuGraphExecUpdate_v2(e, g2, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    HX_ASSERT(info.result == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, "topology");
    EXPECT_ERR(cuGraphExecKernelNodeSetParams_v2(e, m, &np), CUDA_ERROR_INVALID_VALUE);
    CK(cuGraphDestroy(g2));
    CK(cuGraphExecDestroy(e));
    EXPECT_ERR(cuGraphLaunch(e, s), CUDA_ERROR_INVALID_VALUE);
    CK(cuGraphDestroy(g));
    CK(cuStreamDestroy_v2(s));
}

static void test_capture(void)
{
    CUstream s, b;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&b, 0));
    hx_log *log = hx_log_new(64);
    struct fakecuda_counters c0, c1;
    fakecuda_counters(&c0);
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CUstreamCaptureStatus cs;
    CK(cuStreamIsCapturing(s, &cs));
    HX_ASSERT(cs == CU_STREAM_CAPTURE_STATUS_ACTIVE, "capturing");
    for (uint32_t i = 0; i < 4; i++)
        hx_rec(K_rec, s, log, 50 + i, i);
    EXPECT_ERR(cuStreamSynchronize(s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CUgraph g;
    EXPECT_ERR(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    HX_ASSERT(g == NULL, "invalidated capture returned a graph");
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    for (uint32_t i = 0; i < 4; i++)
        hx_rec(K_rec, s, log, 50 + i, i);
    CK(cuStreamEndCapture(s, &g));
    HX_ASSERT(log->n == 0, "captured launches ran");
    fakecuda_counters(&c1);
    HX_ASSERT(c1.captured_launches - c0.captured_launches == 8, "captured count");
    CUgraphExec e;
    CK(cuGraphInstantiateWithFlags(&e, g, 0));
    CK(cuGraphLaunch(e, s));
    CK(cuGraphLaunch(e, s));
    CK(cuStreamSynchronize(s));
    hx_entry exp[8];
    for (uint32_t i = 0; i < 8; i++)
        exp[i] = (hx_entry){ 50 + i % 4, i % 4, 0 };
    hx_log_expect(log, 0, exp, 8, "captured graph", 0);
    /* legacy work while a blocking stream captures: refused, capture invalidated */
    CK(cuStreamBeginCapture_v2(b, CU_STREAM_CAPTURE_MODE_GLOBAL));
    uint32_t kid = 1, val = 1;
    void *p[] = { &log, &kid, &val };
    EXPECT_ERR(cuLaunchKernel(K_rec, 1, 1, 1, 1, 1, 1, 0, NULL, p, NULL),
               CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    EXPECT_ERR(cuStreamEndCapture(b, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    EXPECT_ERR(cuStreamBeginCapture_v2(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL),
               CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CK(cuGraphExecDestroy(e));
    CK(cuStreamDestroy_v2(s));
    CK(cuStreamDestroy_v2(b));
}

/* per-thread default streams: separate per thread, blocking with respect to the legacy one */
static uint64_t *g_pt;
static void *ptds_thread(void *arg)
{
    CUcontext ctx = arg;
    CK(cuCtxSetCurrent(ctx));
    slow(NULL, &g_pt[1], 9, 300, 1); /* this thread's per-thread stream */
    return NULL;
}

static void test_ptds(CUcontext ctx)
{
    g_pt = hx_dev_u64(2, 0);
    pthread_t t;
    HX_ASSERT(pthread_create(&t, NULL, ptds_thread, ctx) == 0, "thread");
    pthread_join(t, NULL);
    slow(NULL, &g_pt[0], 8, 10, 1);
    CK(cuStreamSynchronize_ptsz(NULL));
    HX_ASSERT(rd(&g_pt[0]) == 8, "per-thread stream sync");
    HX_ASSERT(rd(&g_pt[1]) == 0, "per-thread streams of two threads are not separate");
    CK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
    CK(cuCtxSynchronize());
    HX_ASSERT(rd(&g_pt[1]) == 9, "cuCtxSynchronize missed another thread's per-thread stream");
    /* legacy work waits for the per-thread stream (a blocking stream) */
    slow(NULL, &g_pt[0], 10, 50, 1);
    uint64_t h;
    CK(cuMemcpyDtoH_v2(&h, (CUdeviceptr)(uintptr_t)&g_pt[0], 8));
    HX_ASSERT(h == 10, "legacy copy did not wait for the per-thread stream");
}

static void host_fn(void *ud)
{
    __atomic_store_n((uint64_t *)ud, 42, __ATOMIC_RELEASE);
}

static void test_hostfn_and_copies(void)
{
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    uint64_t *x = hx_dev_u64(4, 0), flag = 0;
    slow(s, x, 1, 30, 0);
    CK(cuLaunchHostFunc(s, host_fn, &flag));
    uint64_t in[4] = { 5, 6, 7, 8 }, out[4] = { 0 };
    CK(cuMemcpyHtoDAsync_v2((CUdeviceptr)(uintptr_t)x, in, sizeof in, s));
    CK(cuMemcpyDtoHAsync_v2(out, (CUdeviceptr)(uintptr_t)x, sizeof out, s));
    CK(cuMemsetD32Async((CUdeviceptr)(uintptr_t)x, 0, 8, s));
    CK(cuStreamSynchronize(s));
    HX_ASSERT(flag == 42 && out[0] == 5 && out[3] == 8 && x[0] == 0, "async copies and host fn");
    CK(cuStreamDestroy_v2(s));
}

static void test_modules(void)
{
    CUmodule m = fakecuda_module();
    CUfunction f = hx_module_rec(m, "modrec");
    CUkernel k = fakecuda_kernel_as_kernel(f);
    CUmodule got;
    unsigned n;
    CK(cuFuncGetModule(&got, f));
    HX_ASSERT(got == m, "module of function");
    CK(cuModuleGetFunctionCount(&n, m));
    HX_ASSERT(n == 1, "function count");
    CK(cuModuleUnload(m));
    size_t off, sz;
    EXPECT_ERR(cuFuncGetParamInfo(f, 0, &off, &sz), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_ERR(cuKernelGetParamInfo(k, 0, &off, &sz), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_ERR(cuModuleUnload(m), CUDA_ERROR_INVALID_HANDLE);
    CUmodule m2 = fakecuda_module();
    CUfunction f2 = hx_module_rec64(m2, "modrec64");
    HX_ASSERT((void *)f2 == (void *)k || (void *)f2 == (void *)f,
              "unloaded handle memory is not reused");
    CK(cuFuncGetParamInfo(f2, 3, &off, &sz));
    HX_ASSERT(off == 18, "reused handle has the new layout");
}

static void test_fail_mode(void)
{
    /* FAKECUDA_FAIL=cuGraphLaunch:2 */
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    CUgraph g;
    CK(cuGraphCreate(&g, 0));
    CUgraphExec e;
    CK(cuGraphInstantiateWithFlags(&e, g, 0));
    for (int i = 1; i <= 6; i++) {
        CUresult r = cuGraphLaunch(e, s);
        HX_ASSERT((i % 2 == 0) == (r == CUDA_ERROR_UNKNOWN), "launch %d returned %d", i, (int)r);
    }
    struct fakecuda_counters c;
    fakecuda_counters(&c);
    HX_ASSERT(c.graph_launches == 3 && c.injected_failures == 3, "counters %llu %llu",
              (unsigned long long)c.graph_launches, (unsigned long long)c.injected_failures);
}

int main(int argc, char **argv)
{
    CUresult r = cuCtxSynchronize();
    HX_ASSERT(r == CUDA_ERROR_NOT_INITIALIZED, "call before cuInit returned %d", (int)r);
    CUcontext ctx = hx_init();
    K_slow = fakecuda_kernel("slow", k_slow, 3, s_slow);
    K_copy = hx_kernel_copy("copy");
    K_rec = hx_kernel_rec("rec");
    K_acc = hx_kernel_acc("acc");
    if (argc > 1 && !strcmp(argv[1], "fail")) {
        test_fail_mode();
        hx_pass("selftest fail");
        return 0;
    }
    test_async();
    test_legacy();
    test_events();
    test_errors(ctx);
    test_procaddr();
    test_graphs();
    test_capture();
    test_ptds(ctx);
    test_hostfn_and_copies();
    test_modules();
    hx_pass("selftest");
    return 0;
}
