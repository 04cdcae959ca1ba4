/* Rule: the legacy stream's shortcut (cache/rest.h, ag_rest_legacy_one) answers only while one
 * context has states; a second context's legacy stream must find its own state.
 *
 * While only one context has stream states, its resting legacy stream lets launches and
 * ordering points on "the" legacy stream pass without asking the driver for the current
 * context. Once a second context has states, that must end: its legacy stream's work waits for
 * its own blocking streams, which may hold launches.
 *
 *  1. context 1: launches that never repeat on the legacy stream (every grid different, a
 *     synchronisation every 8): its learning rests;
 *  2. context 2 (made now): a blocking stream s learns a 4-launch sequence L0..L3 (then it
 *     holds L0 onwards);
 *  3. rounds of: L0 L1 on s (held), X on context 2's legacy stream, L2 L3 on s, a
 *     synchronisation; the log must be L0 L1 X L2 L3 (X after L0 L1 by the legacy stream's
 *     rule). Taken for context 1's resting legacy stream, X would pass before L0 and L1.
 *
 * Usage: legacy_one [rest launches=1100] [rounds=8] */
#include "harness.h"

int main(int argc, char **argv)
{
    long nrest = hx_arg(argc, argv, 1, 1100), rounds = hx_arg(argc, argv, 2, 8);
    CUcontext c1 = hx_init(), c2;
    CUfunction R = hx_kernel_rec("lo_rest");
    hx_log *rlog = hx_log_new(16);

    /* 1: distinct shapes (an attribute's value), so no segment and no period ever repeats */
    hx_never_repeat(R, NULL, rlog, nrest);

    /* 2 */
    CK(cuCtxCreate_v4(&c2, NULL, 0, 0)); /* now current */
    CUfunction L[4] = { hx_kernel_rec("lo_l0"), hx_kernel_rec("lo_l1"), hx_kernel_rec("lo_l2"),
                        hx_kernel_rec("lo_l3") };
    CUfunction X = hx_kernel_rec("lo_x");
    CUstream s;
    CK(cuStreamCreate(&s, 0)); /* blocking */
    hx_log *log = hx_log_new((uint32_t)(24 + 5 * rounds + 8));
    for (int it = 0; it < 6; it++) {
        hx_entry exp[4];
        for (uint32_t k = 0; k < 4; k++) {
            hx_rec(L[k], s, log, k, 0);
            exp[k] = (hx_entry){ k, 0, 0 };
        }
        CK(cuStreamSynchronize(s));
        hx_log_expect(log, (uint32_t)(it * 4), exp, 4, "legacy_one teach", it);
    }
    uint32_t have = 24;

    /* 3 */
    for (long r = 0; r < rounds; r++) {
        hx_entry exp[5];
        uint32_t n = 0;
        for (uint32_t k = 0; k < 2; k++, n++) {
            hx_rec(L[k], s, log, k, 0);
            exp[n] = (hx_entry){ k, 0, 0 };
        }
        hx_rec(X, NULL, log, 50, (uint32_t)r);
        exp[n++] = (hx_entry){ 50, (uint32_t)r, 0 };
        for (uint32_t k = 2; k < 4; k++, n++) {
            hx_rec(L[k], s, log, k, 0);
            exp[n] = (hx_entry){ k, 0, 0 };
        }
        CK(cuStreamSynchronize(s));
        CK(cuStreamSynchronize(NULL));
        hx_log_expect(log, have, exp, n, "legacy_one", r);
        have += n;
    }
    CK(cuStreamDestroy_v2(s));
    CK(cuCtxDestroy_v2(c2));
    CK(cuCtxSetCurrent(c1));
    hx_pass("legacy_one");
    return 0;
}
