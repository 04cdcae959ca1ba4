/* Scenario f: the application captures graphs of its own in the middle of the loop.
 *  - iteration 15: after the 4th launch on S, a capture on another stream S2 (3 launches),
 *    instantiated and launched twice, then the rest of S's sequence;
 *  - iteration 20: the whole sequence on S itself is captured, and the graph launched twice.
 * Launches made while capturing must be passed through (into the capture), never held.
 *
 * Usage: capture [iterations=30] */
#include "harness.h"

int main(int argc, char **argv)
{
    long iters = hx_arg(argc, argv, 1, 30);
    hx_init();
    CUfunction K[4] = { hx_kernel_rec("cap_a"), hx_kernel_rec("cap_b"), hx_kernel_rec("cap_c"),
                        hx_kernel_rec("cap_d") };
    CUfunction ACC = hx_kernel_acc("cap_acc");
    CUstream s, s2;
    CK(cuStreamCreate(&s, 0));
    CK(cuStreamCreate(&s2, 0));
    hx_log *ls = hx_log_new((uint32_t)(iters * 8 + 32)), *lc = hx_log_new(16);
    uint64_t *c = hx_dev_u64(1, 9), mc = 9;
    uint32_t have = 0;
    for (long it = 0; it < iters; it++) {
        hx_entry exp[16];
        uint32_t n = 0;
        if (it == 20) {
            CUgraph g;
            CUgraphExec ge;
            CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
            for (uint32_t pos = 0; pos < 8; pos++)
                hx_rec(K[pos % 4], s, ls, pos, pos * 3);
            CK(cuStreamEndCapture(s, &g));
            HX_ASSERT(__atomic_load_n(&ls->n, __ATOMIC_ACQUIRE) == have,
                      "capture: launches made while capturing ran");
            CK(cuGraphInstantiateWithFlags(&ge, g, 0));
            CK(cuGraphLaunch(ge, s));
            CK(cuGraphLaunch(ge, s));
            for (uint32_t r = 0; r < 2; r++)
                for (uint32_t pos = 0; pos < 8; pos++)
                    exp[n++] = (hx_entry){ pos, pos * 3, 0 };
            CK(cuStreamSynchronize(s));
            hx_log_expect(ls, have, exp, n, "capture: whole sequence captured", it);
            have += n;
            CK(cuGraphExecDestroy(ge));
            CK(cuGraphDestroy(g));
            continue;
        }
        for (uint32_t pos = 0; pos < 8; pos++) {
            hx_rec(K[pos % 4], s, ls, pos, pos * 3);
            exp[n++] = (hx_entry){ pos, pos * 3, 0 };
            if (it == 15 && pos == 3) {
                CUgraph g;
                CUgraphExec ge;
                CK(cuStreamBeginCapture_v2(s2, CU_STREAM_CAPTURE_MODE_GLOBAL));
                for (uint32_t k = 0; k < 3; k++)
                    hx_acc(ACC, s2, lc, c, 40 + k, k);
                CK(cuStreamEndCapture(s2, &g));
                CK(cuGraphInstantiateWithFlags(&ge, g, 0));
                CK(cuGraphLaunch(ge, s2));
                CK(cuGraphLaunch(ge, s2));
                CK(cuStreamSynchronize(s2));
                hx_entry ec[6];
                for (uint32_t k = 0; k < 6; k++)
                    ec[k] = (hx_entry){ 40 + k % 3, k % 3, mc = hx_mix(mc, 40 + k % 3, k % 3) };
                hx_log_expect(lc, 0, ec, 6, "capture: graph captured on S2", it);
                CK(cuGraphExecDestroy(ge));
                CK(cuGraphDestroy(g));
            }
        }
        CK(cuStreamSynchronize(s));
        hx_log_expect(ls, have, exp, n, "capture: stream S", it);
        have += n;
    }
    CK(cuStreamDestroy_v2(s));
    CK(cuStreamDestroy_v2(s2));
    hx_pass("capture");
    return 0;
}
