/* The fake driver's current-context checks (run without libautograph): a launch, an event
 * record or a graph launch on a stream of a context that is not current on the calling thread
 * fails with CUDA_ERROR_INVALID_CONTEXT and does nothing; so does a deprecated launch of a
 * function of another context. cuCtxRecordEvent names its context and works from anywhere.
 *
 * Usage: curctx */
#include "harness.h"

int main(void)
{
    CUcontext ctx = hx_init();
    CUfunction R = hx_kernel_rec("cc_rec");
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_log *log = hx_log_new(16);
    CUevent ev;
    CK(cuEventCreate(&ev, 0));
    /* a graph of one launch, made while ctx is current */
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    hx_rec(R, s, log, 1, 1);
    CUgraph g;
    CK(cuStreamEndCapture(s, &g));
    CUgraphExec ge;
    CK(cuGraphInstantiateWithFlags(&ge, g, 0));

    CUcontext other;
    CK(cuCtxCreate_v4(&other, NULL, 0, 0)); /* now current */
    uint32_t kid = 2, v = 2;
    void *p[] = { &log, &kid, &v };
    HX_ASSERT(cuLaunchKernel(R, 1, 1, 1, 32, 1, 1, 0, s, p, NULL) == CUDA_ERROR_INVALID_CONTEXT,
              "curctx: a launch on a stream of a context that is not current was accepted");
    HX_ASSERT(cuEventRecord(ev, s) == CUDA_ERROR_INVALID_CONTEXT,
              "curctx: an event record on a stream of another context was accepted");
    HX_ASSERT(cuGraphLaunch(ge, s) == CUDA_ERROR_INVALID_CONTEXT,
              "curctx: a graph launch on a stream of another context was accepted");
    HX_ASSERT(cuLaunchGrid(R, 1, 1) == CUDA_ERROR_INVALID_CONTEXT,
              "curctx: a deprecated launch of a function of another context was accepted");
    CK(cuCtxRecordEvent(ctx, ev));
    CK(cuCtxPopCurrent_v2(NULL)); /* ctx current again */
    CK(cuGraphLaunch(ge, s));
    CK(cuStreamSynchronize(s));
    hx_entry e[1] = { { 1, 1, 0 } };
    hx_log_expect(log, 0, e, 1, "curctx", 0);
    CK(cuGraphExecDestroy(ge));
    CK(cuGraphDestroy(g));
    CK(cuStreamDestroy_v2(s));
    hx_pass("curctx");
    return 0;
}
