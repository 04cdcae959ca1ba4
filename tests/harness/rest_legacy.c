/* Rule: a rest token does not let a launch on a blocking stream pass while the legacy default
 * stream holds launches (engine.c, token_valid).
 *
 * A thread whose created stream rests (nothing repeated there) takes a batch of the rest at
 * once and lets its next launches on that stream pass without looking at the stream. But in
 * the driver, work on a blocking stream waits for the work already on the legacy stream: if
 * the legacy stream holds launches, a launch on the blocking stream must first flush them, or
 * it runs before them.
 *
 *  1. the legacy stream learns a 4-launch sequence L0..L3 (then it holds L0 onwards);
 *  2. a blocking stream s runs launches that never repeat (every grid different, an ordering
 *     point every 8): its learning rests, and this thread takes rest tokens for s;
 *  3. rounds of: L0 L1 on the legacy stream (held), X on s (through the token), L2 L3, a
 *     synchronisation; the log must be L0 L1 X L2 L3 (X after L0 L1 by the blocking stream's
 *     rule, L2 after X by the legacy stream's).
 *
 * Usage: rest_legacy [rest launches=1100] [rounds=8] */
#include "harness.h"

int main(int argc, char **argv)
{
    long nrest = hx_arg(argc, argv, 1, 1100), rounds = hx_arg(argc, argv, 2, 8);
    hx_init();
    CUfunction L[4] = { hx_kernel_rec("rl_l0"), hx_kernel_rec("rl_l1"), hx_kernel_rec("rl_l2"),
                        hx_kernel_rec("rl_l3") };
    CUfunction R = hx_kernel_rec("rl_rest"), X = hx_kernel_rec("rl_x");
    CUstream s;
    CK(cuStreamCreate(&s, 0)); /* blocking */
    hx_log *log = hx_log_new((uint32_t)(24 + 5 * rounds + 8)), *rlog = hx_log_new(16);

    /* 1 */
    for (int it = 0; it < 6; it++) {
        hx_entry exp[4];
        for (uint32_t k = 0; k < 4; k++) {
            hx_rec(L[k], NULL, log, k, 0);
            exp[k] = (hx_entry){ k, 0, 0 };
        }
        CK(cuStreamSynchronize(NULL));
        hx_log_expect(log, (uint32_t)(it * 4), exp, 4, "rest_legacy teach", it);
    }
    uint32_t have = 24;

    /* 2: distinct shapes (an attribute's value: grids are values, not shapes), so no
     * segment and no period ever repeats */
    hx_never_repeat(R, s, rlog, nrest);

    /* 3 */
    for (long r = 0; r < rounds; r++) {
        hx_entry exp[5];
        uint32_t n = 0;
        for (uint32_t k = 0; k < 2; k++, n++) {
            hx_rec(L[k], NULL, log, k, 0);
            exp[n] = (hx_entry){ k, 0, 0 };
        }
        hx_rec(X, s, log, 50, (uint32_t)r);
        exp[n++] = (hx_entry){ 50, (uint32_t)r, 0 };
        for (uint32_t k = 2; k < 4; k++, n++) {
            hx_rec(L[k], NULL, log, k, 0);
            exp[n] = (hx_entry){ k, 0, 0 };
        }
        CK(cuStreamSynchronize(NULL));
        hx_log_expect(log, have, exp, n, "rest_legacy", r);
        have += n;
    }
    hx_pass("rest_legacy");
    return 0;
}
