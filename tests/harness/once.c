/* Scenario: G2's calls (kernels/cublas_once.cu: 30 cuBLAS sgemm timed once) on the fake driver.
 * A synchronisation, one warm-up "sgemm" (a split-K pair of kernels and the event cuBLAS records
 * after it) on the legacy default stream, a synchronisation, an event recorded before the region, N more such
 * sgemm, an event after, and an event synchronisation. Nothing repeats across processes: the
 * region runs once. The log must hold every launch in order.
 *
 * times: print each call's host time (ns, the library's and the fake driver's together), to
 * see which calls of a short timed region pay for the engine's cold work.
 *
 * Usage: once [gemms=30] [times] */
#include <stdio.h>
#include <string.h>

#include "harness.h"

#define MAX_G 1000

int main(int argc, char **argv)
{
    long gemms = hx_arg(argc, argv, 1, 30);
    int times = argc > 2 && !strcmp(argv[2], "times");
    HX_ASSERT(gemms >= 1 && gemms <= MAX_G && (argc <= 2 || times), "once: bad arguments");
    hx_init();
    CUfunction k0 = hx_kernel_rec("once_gemm"), k1 = hx_kernel_rec("once_splitk");
    CUevent done, start, stop;
    CK(cuEventCreate(&done, CU_EVENT_DISABLE_TIMING));
    CK(cuEventCreate(&start, 0));
    CK(cuEventCreate(&stop, 0));
    hx_log *log = hx_log_new((uint32_t)(2 * gemms + 8));
    static hx_entry exp[2 * MAX_G + 2];
    static double dt[3 * MAX_G + 2]; /* seconds */
    static char what[3 * MAX_G + 2];
    uint32_t n = 0, c = 0;

    CK(cuCtxSynchronize()); /* (G2's cudaDeviceSynchronize after its set-up) */
    for (long g = 0; g <= gemms; g++) { /* g 0: the warm-up */
        if (g == 1) {
            CK(cuCtxSynchronize());
            CK(cuEventRecord(start, NULL));
        }
        double t0 = hx_now();
        hx_rec(k0, NULL, log, 1, (uint32_t)g);
        double t1 = hx_now();
        hx_rec(k1, NULL, log, 2, (uint32_t)g);
        double t2 = hx_now();
        CK(cuEventRecord(done, NULL));
        double t3 = hx_now();
        if (g) {
            dt[c] = t1 - t0, what[c++] = 'L';
            dt[c] = t2 - t1, what[c++] = 'L';
            dt[c] = t3 - t2, what[c++] = 'E';
        }
        exp[n++] = (hx_entry){ 1, (uint32_t)g, 0 };
        exp[n++] = (hx_entry){ 2, (uint32_t)g, 0 };
    }
    CK(cuEventRecord(stop, NULL));
    CK(cuEventSynchronize(stop));
    hx_log_expect(log, 0, exp, n, "once", 0);
    if (times)
        for (uint32_t i = 0; i < c; i++)
            printf("%u %c %.0f\n", i, what[i], dt[i] * 1e9);
    hx_pass("once");
    return 0;
}
