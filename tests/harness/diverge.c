/* Scenario c: divergence. The loop of 8 launches, but every 5th iteration has an extra launch
 * in mid-sequence, one iteration starts with a different launch, one stops mid-sequence with a
 * synchronisation, and every 7th stops after 6 launches (a sequence that is a prefix of the
 * usual one: held at the synchronisation, which must flush it). The log must always hold
 * exactly what was launched, in order. The synchronisation goes through a
 * cuStreamSynchronize found with dlsym on a libcuda.so.1 handle.
 *
 * Usage: diverge [iterations=60] */
#include "harness.h"

int main(int argc, char **argv)
{
    long iters = hx_arg(argc, argv, 1, 60);
    hx_init();
    CUfunction K[4] = { hx_kernel_rec("div_a"), hx_kernel_rec("div_b"), hx_kernel_rec("div_c"),
                        hx_kernel_rec("div_d") };
    CUfunction X = hx_kernel_rec("div_extra");
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_log *log = hx_log_new((uint32_t)(iters * 10 + 16));
    uint32_t have = 0;
    CUresult (*sync)(CUstream) = hx_driver_sym("cuStreamSynchronize");
    for (long it = 0; it < iters; it++) {
        hx_entry exp[10];
        uint32_t n = 0;
        if (it == 37) { /* starts differently */
            hx_rec(X, s, log, 98, (uint32_t)it);
            exp[n++] = (hx_entry){ 98, (uint32_t)it, 0 };
        }
        for (uint32_t pos = 0; pos < 8; pos++) {
            if ((it == 23 && pos == 5) || (it % 7 == 6 && pos == 6))
                break; /* stops mid-sequence */
            hx_rec(K[pos % 4], s, log, pos, pos * 7);
            exp[n++] = (hx_entry){ pos, pos * 7, 0 };
            if (it % 5 == 4 && pos == 3) { /* an extra launch in mid-sequence */
                hx_rec(X, s, log, 99, (uint32_t)it);
                exp[n++] = (hx_entry){ 99, (uint32_t)it, 0 };
            }
        }
        CK(sync(s));
        hx_log_expect(log, have, exp, n, "diverge", it);
        have += n;
    }
    CK(cuStreamDestroy_v2(s));
    hx_pass("diverge");
    return 0;
}
