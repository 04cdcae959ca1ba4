/* Scenario f (per-thread stream): a thread captures its own per-thread default stream right
 * after launches it held there were released from another thread (the hold watchdog, run
 * with a small AUTOGRAPH_MAX_HOLD_US): those went out on a side stream, which the owner's
 * stream must wait for -- but not from inside the capture, where waiting for an event
 * recorded outside it is refused (CUDA_ERROR_STREAM_CAPTURE_ISOLATION) and breaks the
 * application's capture. Each iteration: 4 launches (5 in odd iterations: the 4-launch
 * sequence is a prefix of another, so its launches stay held), a wait with no CUDA call
 * until they have run (with launches held, only the watchdog can have issued them; a
 * generous timeout, not a fixed pause), then a capture of 3 launches on the per-thread stream, its graph launched,
 * a synchronisation, and the log checked.
 *
 * Usage: capture_ptds [iterations=10] */
#include <sched.h>

#include "harness.h"

int main(int argc, char **argv)
{
    long iters = hx_arg(argc, argv, 1, 10);
    hx_init();
    CUfunction K[4] = { hx_kernel_rec("cp_a"), hx_kernel_rec("cp_b"), hx_kernel_rec("cp_c"),
                        hx_kernel_rec("cp_d") };
    CUfunction C = hx_kernel_rec("cp_captured");
    hx_log *log = hx_log_new((uint32_t)(iters * 8 + 8));
    uint32_t have = 0;
    for (long it = 0; it < iters; it++) {
        hx_entry exp[8];
        uint32_t n = it % 2 ? 5 : 4;
        for (uint32_t k = 0; k < n; k++) {
            hx_rec_ptsz(K[k % 4], NULL, log, k, (uint32_t)it);
            exp[k] = (hx_entry){ k, (uint32_t)it, 0 };
        }
        /* held launches outlive AUTOGRAPH_MAX_HOLD_US: wait until they have run */
        double limit = hx_now() + 30.0;
        while (__atomic_load_n(&log->n, __ATOMIC_ACQUIRE) < have + n) {
            HX_ASSERT(hx_now() < limit, "capture_ptds, iteration %ld: launches not run within "
                      "30 s (no watchdog flush?)", it);
            sched_yield();
        }
        CUgraph g;
        CUgraphExec ge;
        CK(cuStreamBeginCapture_v2_ptsz(NULL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
        for (uint32_t k = 0; k < 3; k++)
            hx_rec_ptsz(C, NULL, log, 10 + k, (uint32_t)it);
        CK(cuStreamEndCapture_ptsz(NULL, &g));
        CK(cuGraphInstantiateWithFlags(&ge, g, 0));
        CK(cuGraphLaunch_ptsz(ge, NULL));
        for (uint32_t k = 0; k < 3; k++)
            exp[n + k] = (hx_entry){ 10 + k, (uint32_t)it, 0 };
        CK(cuStreamSynchronize_ptsz(NULL));
        hx_log_expect(log, have, exp, n + 3, "capture_ptds", it);
        have += n + 3;
        CK(cuGraphExecDestroy(ge));
        CK(cuGraphDestroy(g));
    }
    hx_pass("capture_ptds");
    return 0;
}
