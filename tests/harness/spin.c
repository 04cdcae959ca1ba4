/* Scenario g: host spin. Each iteration launches 3 kernels and one that sets a flag in mapped
 * host memory, then spins on the flag with no CUDA call at all (10 s -> fail), then launches
 * a 5th kernel and synchronises. Once the sequence is known, the first four launches are a
 * held prefix: only libautograph's hold watchdog (AUTOGRAPH_MAX_HOLD_US) can release them.
 *
 * Usage: spin [stream|legacy|ptds] [iterations=20] */
#include <string.h>

#include "harness.h"

static int g_ptsz;

static void rec(CUfunction f, CUstream s, hx_log *log, uint32_t kid, uint32_t val)
{
    if (g_ptsz)
        hx_rec_ptsz(f, s, log, kid, val);
    else
        hx_rec(f, s, log, kid, val);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "stream";
    long iters = hx_arg(argc, argv, 2, 20);
    hx_init();
    CUfunction K[3] = { hx_kernel_rec("spin_a"), hx_kernel_rec("spin_b"), hx_kernel_rec("spin_c") };
    CUfunction F = hx_kernel_flag("spin_flag");
    CUstream s = NULL;
    if (!strcmp(mode, "stream"))
        CK(cuStreamCreate(&s, 0));
    else if (!strcmp(mode, "ptds"))
        g_ptsz = 1;
    else
        HX_ASSERT(!strcmp(mode, "legacy"), "unknown mode %s", mode);
    uint32_t *flag;
    CK(cuMemHostAlloc((void **)&flag, sizeof *flag, CU_MEMHOSTALLOC_DEVICEMAP));
    *flag = 0;
    hx_log *log = hx_log_new((uint32_t)(iters * 4 + 8));
    for (long it = 0; it < iters; it++) {
        hx_entry exp[4];
        for (uint32_t k = 0; k < 3; k++) {
            rec(K[k], s, log, k, (uint32_t)it);
            exp[k] = (hx_entry){ k, (uint32_t)it, 0 };
        }
        uint32_t want = (uint32_t)it + 1;
        void *p[] = { &flag, &want };
        if (g_ptsz)
            CK(cuLaunchKernel_ptsz(F, 1, 1, 1, 1, 1, 1, 0, s, p, NULL));
        else
            CK(cuLaunchKernel(F, 1, 1, 1, 1, 1, 1, 0, s, p, NULL));
        double t0 = hx_now();
        while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != want)
            if (hx_now() - t0 > 10.0)
                hx_fail("spin, iteration %ld: the flag was not set within 10 s (launches held "
                        "with no later CUDA call)", it);
        rec(K[0], s, log, 3, (uint32_t)it);
        exp[3] = (hx_entry){ 3, (uint32_t)it, 0 };
        if (g_ptsz)
            CK(cuStreamSynchronize_ptsz(NULL));
        else
            CK(cuStreamSynchronize(s));
        hx_log_expect(log, (uint32_t)(it * 4), exp, 4, "spin", it);
    }
    hx_pass("spin");
    return 0;
}
