/* cuCtxRecordEvent records everything the context has issued, with no stream argument: the
 * launches libautograph holds must be in that event. Each iteration launches 4 or (odd
 * iterations) 6 kernels on a blocking stream and 2 or 3 on a non-blocking one -- the shorter
 * sequences are prefixes of the longer ones, so at the record they are still held (the
 * sequence might go on) --, records an event for the whole context, synchronises on that
 * event only, and then reads both logs: every kernel of the iteration must have run. The
 * event is also recorded with the wrong context's event (refused), and during a capture
 * (refused, as the driver does).
 *
 * Usage: ctxrecord [iterations=40] */
#include "harness.h"

int main(int argc, char **argv)
{
    long iters = hx_arg(argc, argv, 1, 40);
    CUcontext ctx = hx_init();
    CUfunction R1 = hx_kernel_rec("cr_a"), R2 = hx_kernel_rec("cr_b");
    CUstream s, nb;
    CK(cuStreamCreate(&s, 0));
    CK(cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING));
    CUevent ev;
    CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    hx_log *ls = hx_log_new((uint32_t)(iters * 6 + 8)), *ln = hx_log_new((uint32_t)(iters * 3 + 8));
    uint32_t at_s = 0, at_n = 0;
    for (long it = 0; it < iters; it++) {
        hx_entry es[6], en[3];
        uint32_t v = (uint32_t)it, ns = it % 2 ? 6 : 4, nn = it % 2 ? 3 : 2;
        for (uint32_t k = 0; k < ns; k++) {
            hx_rec(k % 2 ? R2 : R1, s, ls, 1 + k, v);
            es[k] = (hx_entry){ 1 + k, v, 0 };
        }
        for (uint32_t k = 0; k < nn; k++) {
            hx_rec(k % 2 ? R1 : R2, nb, ln, 10 + k, v);
            en[k] = (hx_entry){ 10 + k, v, 0 };
        }
        CK(cuCtxRecordEvent(ctx, ev));
        CK(cuEventSynchronize(ev));
        hx_log_expect(ls, at_s, es, ns, "ctxrecord: blocking stream", it);
        hx_log_expect(ln, at_n, en, nn, "ctxrecord: non-blocking stream", it);
        at_s += ns;
        at_n += nn;
        /* stream ordering points too: learning does not depend on the record being one */
        CK(cuStreamSynchronize(s));
        CK(cuStreamSynchronize(nb));
    }
    /* an event of another context is refused */
    CUcontext other;
    CK(cuCtxCreate_v4(&other, NULL, 0, 0));
    CUevent ev2;
    CK(cuEventCreate(&ev2, CU_EVENT_DISABLE_TIMING));
    CK(cuCtxPopCurrent_v2(NULL));
    HX_ASSERT(cuCtxRecordEvent(ctx, ev2) == CUDA_ERROR_INVALID_HANDLE,
              "ctxrecord: an event of another context was accepted");
    /* a capture in the context: refused (and the capture invalidated) */
    CK(cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED));
    HX_ASSERT(cuCtxRecordEvent(ctx, ev) == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
              "ctxrecord: a record during a capture was accepted");
    CUgraph g = NULL;
    HX_ASSERT(cuStreamEndCapture(nb, &g) == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
              "ctxrecord: the capture was not invalidated");
    HX_ASSERT(cuGreenCtxRecordEvent(NULL, ev) != CUDA_SUCCESS,
              "ctxrecord: the fake has no green contexts");
    CK(cuStreamDestroy_v2(s));
    CK(cuStreamDestroy_v2(nb));
    hx_pass("ctxrecord");
    return 0;
}
