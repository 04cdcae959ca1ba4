/* Scenario for the trace recorder (bats/cpu_trace.bats): every kind of call it records, in
 * counts the test derives from this source. Before the loop, one launch of C is captured on
 * S3 into a graph. Then, per iteration, on the non-blocking stream S:
 *     launch A, cuEventRecord(E1), launch B, cuMemsetD32Async (2 words = 8 bytes),
 *     cuMemcpyDtoHAsync_v2 (8 bytes into pinned memory), cuGraphLaunch (runs C),
 *     cuEventRecord(E2), cuEventSynchronize(E2), cuEventQuery(E1),
 *     cuEventElapsedTime(E1, E2),
 * and on S2: cuStreamWaitEvent(S2, E2), launch D, cuStreamSynchronize(S2). The loop is the
 * profiler region (cuProfilerStart before it, cuProfilerStop after it).
 * So with N iterations: 3N + 1 launches (the captured one included), 2N copies, and 2N
 * cuEventRecord, N each of the other calls; 6N calls run on the GPU outside the capture
 * (3N launches, 2N copies, N graph launches).
 *
 * Usage: traceops [iterations=10] */
#include <cudaProfiler.h>

#include "harness.h"

int main(int argc, char **argv)
{
    long iters = hx_arg(argc, argv, 1, 10);
    hx_init();
    CUfunction A = hx_kernel_rec("tr_a"), B = hx_kernel_rec("tr_b"), C = hx_kernel_rec("tr_c"),
               D = hx_kernel_rec("tr_d");
    CUstream s, s2, s3;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&s3, CU_STREAM_NON_BLOCKING));
    CUevent e1, e2;
    CK(cuEventCreate(&e1, CU_EVENT_DEFAULT));
    CK(cuEventCreate(&e2, CU_EVENT_DEFAULT));
    hx_log *log = hx_log_new((uint32_t)(iters * 3 + 8)), *log2 = hx_log_new((uint32_t)(iters + 8));
    uint64_t *d = hx_dev_u64(1, 0), *h;
    CK(cuMemAllocHost_v2((void **)&h, sizeof *h));

    CUgraph g;
    CUgraphExec ge;
    CK(cuStreamBeginCapture_v2(s3, CU_STREAM_CAPTURE_MODE_GLOBAL));
    hx_rec(C, s3, log, 3, 7);
    CK(cuStreamEndCapture(s3, &g));
    CK(cuGraphInstantiateWithFlags(&ge, g, 0));

    CK(cuProfilerStart());
    for (long it = 0; it < iters; it++) {
        uint32_t v = (uint32_t)it;
        hx_rec(A, s, log, 1, v);
        CK(cuEventRecord(e1, s));
        hx_rec(B, s, log, 2, v);
        CK(cuMemsetD32Async((CUdeviceptr)(uintptr_t)d, 0x10000 + v, 2, s));
        CK(cuMemcpyDtoHAsync_v2(h, (CUdeviceptr)(uintptr_t)d, sizeof *h, s));
        CK(cuGraphLaunch(ge, s));
        CK(cuEventRecord(e2, s));
        CK(cuEventSynchronize(e2));
        CK(cuEventQuery(e1));
        float ms = -1;
        CK(cuEventElapsedTime(&ms, e1, e2));
        HX_ASSERT(ms >= 0, "traceops: elapsed time %f", (double)ms);
        hx_entry exp[3] = { { 1, v, 0 }, { 2, v, 0 }, { 3, 7, 0 } };
        hx_log_expect(log, (uint32_t)(it * 3), exp, 3, "traceops: stream S", it);
        uint64_t want = (uint64_t)(0x10000 + v) << 32 | (0x10000 + v);
        HX_ASSERT(*h == want, "traceops: copied %#llx, expected %#llx", (unsigned long long)*h,
                  (unsigned long long)want);
        CK(cuStreamWaitEvent(s2, e2, 0));
        hx_rec(D, s2, log2, 4, v);
        CK(cuStreamSynchronize(s2));
        hx_entry e4 = { 4, v, 0 };
        hx_log_expect(log2, (uint32_t)it, &e4, 1, "traceops: stream S2", it);
    }
    CK(cuProfilerStop());
    CK(cuGraphExecDestroy(ge));
    CK(cuGraphDestroy(g));
    hx_pass("traceops");
    return 0;
}
