/* Scenario a: a loop of one sequence of 8 launches of 4 different kernels (3 parameter
 * layouts) and a cuStreamSynchronize, constant arguments. After every synchronisation the
 * log must hold exactly the launches so far, in order, with their arguments. Two of the 8
 * launches go through a cuLaunchKernel found with dlsym on a libcuda.so.1 handle. HX_SETTLE=1:
 * more iterations, until the worker's graph is in use (harness.h).
 *
 * Usage: loop8 [iterations=50] [keep]   (keep: the stream is not destroyed before exit) */
#include <string.h>

#include "harness.h"

int main(int argc, char **argv)
{
    long iters = hx_arg(argc, argv, 1, 50);
    hx_init();
    CUfunction A = hx_kernel_rec("loop_a"), B = hx_kernel_rec64("loop_b"),
               C = hx_kernel_acc("loop_c"), D = hx_kernel_rec("loop_d");
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_settle settle;
    hx_log *log = hx_log_new((uint32_t)(hx_settle_init(&settle, iters) * 8 + 8));
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       unsigned, CUstream, void **, void **) = hx_driver_sym("cuLaunchKernel");
    uint64_t *acc = hx_dev_u64(1, 1), model = 1;
    for (long it = 0; hx_settle_more(&settle, it, iters); it++) {
        hx_entry exp[8];
        hx_rec(A, s, log, 1, 10);
        exp[0] = (hx_entry){ 1, 10, 0 };
        hx_rec64(B, s, log, 0x1234, 2, 20);
        exp[1] = (hx_entry){ 2, 20, 0x1234 };
        hx_acc(C, s, log, acc, 3, 30);
        exp[2] = (hx_entry){ 3, 30, model = hx_mix(model, 3, 30) };
        uint32_t kid = 4, val = 40;
        void *p4[] = { &log, &kid, &val };
        CK(launch(A, 1, 1, 1, 32, 1, 1, 0, s, p4, NULL));
        exp[3] = (hx_entry){ 4, 40, 0 };
        hx_rec(D, s, log, 5, 50);
        exp[4] = (hx_entry){ 5, 50, 0 };
        hx_rec64(B, s, log, 0x5678, 6, 60);
        exp[5] = (hx_entry){ 6, 60, 0x5678 };
        hx_acc(C, s, log, acc, 7, 70);
        exp[6] = (hx_entry){ 7, 70, model = hx_mix(model, 7, 70) };
        kid = 8;
        val = 80;
        void *p8[] = { &log, &kid, &val };
        CK(launch(D, 1, 1, 1, 32, 1, 1, 0, s, p8, NULL));
        exp[7] = (hx_entry){ 8, 80, 0 };
        CK(cuStreamSynchronize(s));
        hx_log_expect(log, (uint32_t)(it * 8), exp, 8, "loop8", it);
        hx_settle_done(&settle, 8);
    }
    if (!(argc > 2 && !strcmp(argv[2], "keep")))
        CK(cuStreamDestroy_v2(s));
    hx_pass("loop8");
    return 0;
}
