/* Scenario g (second part): the hold watchdog releases held launches while the program
 * makes no CUDA call, and later launches must still come after them. Each iteration launches
 * a slow kernel (30 ms) and 3 more, then waits, with no CUDA call, until the slow kernel has
 * started -- which it does only once something issued it: with launches held, the watchdog
 * (AUTOGRAPH_MAX_HOLD_US) -- then launches 2 more (as a rule while it still runs) and
 * synchronises; the log must be in launch order. The wait is for that condition, with a
 * generous timeout (a watchdog that never fires fails the program), not for a fixed time.
 * On a per-thread default stream the watchdog (another thread) cannot issue onto the owner's
 * stream: what it flushes goes elsewhere, and the owner's next launches must wait for it.
 *
 * Usage: holdsleep [stream|legacy|ptds] [iterations=10] */
#include <sched.h>
#include <string.h>

#include "harness.h"

typedef struct { hx_log *log; uint32_t *started; uint32_t kid, ms; } p_slow;
static void k_slow(const void *pp, const unsigned g[3], const unsigned b[3])
{
    (void)g;
    (void)b;
    const p_slow *p = pp;
    __atomic_fetch_add(p->started, 1, __ATOMIC_RELEASE);
    double end = hx_now() + p->ms / 1000.0;
    while (hx_now() < end)
        ;
    hx_log *l = p->log;
    uint32_t n = __atomic_load_n(&l->n, __ATOMIC_RELAXED);
    if (n < l->cap) {
        l->e[n] = (hx_entry){ p->kid, p->ms, 0 };
        __atomic_store_n(&l->n, n + 1, __ATOMIC_RELEASE);
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "stream";
    long iters = hx_arg(argc, argv, 2, 10);
    hx_init();
    static const size_t sz[] = { 8, 8, 4, 4 };
    CUfunction S = fakecuda_kernel("hs_slow", k_slow, 4, sz);
    CUfunction K[2] = { hx_kernel_rec("hs_a"), hx_kernel_rec("hs_b") };
    CUstream s = NULL;
    int ptsz = !strcmp(mode, "ptds");
    if (!strcmp(mode, "stream"))
        CK(cuStreamCreate(&s, 0));
    else
        HX_ASSERT(ptsz || !strcmp(mode, "legacy"), "unknown mode %s", mode);
    hx_log *log = hx_log_new((uint32_t)(iters * 6 + 8));
    uint32_t *started = (uint32_t *)hx_dev_u64(1, 0); /* slow kernels begun so far */
    for (long it = 0; it < iters; it++) {
        hx_entry exp[6];
        uint32_t kid = 0, ms = 30;
        void *p[] = { &log, &started, &kid, &ms };
        if (ptsz)
            CK(cuLaunchKernel_ptsz(S, 1, 1, 1, 1, 1, 1, 0, s, p, NULL));
        else
            CK(cuLaunchKernel(S, 1, 1, 1, 1, 1, 1, 0, s, p, NULL));
        exp[0] = (hx_entry){ 0, 30, 0 };
        for (uint32_t k = 1; k < 6; k++) {
            if (k == 4) { /* held launches outlive AUTOGRAPH_MAX_HOLD_US: wait for it */
                double limit = hx_now() + 30.0;
                while (__atomic_load_n(started, __ATOMIC_ACQUIRE) <= (uint32_t)it) {
                    HX_ASSERT(hx_now() < limit, "holdsleep, iteration %ld: the slow kernel "
                              "was not issued within 30 s (no watchdog flush?)", it);
                    sched_yield();
                }
            }
            if (ptsz)
                hx_rec_ptsz(K[k % 2], s, log, k, (uint32_t)it);
            else
                hx_rec(K[k % 2], s, log, k, (uint32_t)it);
            exp[k] = (hx_entry){ k, (uint32_t)it, 0 };
        }
        if (ptsz)
            CK(cuStreamSynchronize_ptsz(NULL));
        else
            CK(cuStreamSynchronize(s));
        hx_log_expect(log, (uint32_t)(it * 6), exp, 6, "holdsleep", it);
    }
    hx_pass("holdsleep");
    return 0;
}
