/* Scenario m: learning rests and wakes up. One stream goes through four phases: launches that
 * never repeat (a random one of 8 kernels with a random grid, a synchronisation after one
 * launch in five on average) long enough for the learner to rest; then a loop of 8 launches
 * and a synchronisation, long enough for it to wake up and graph the loop; then never
 * repeating again; then the loop again. After every synchronisation the log must hold exactly
 * the launches so far, in order, with their arguments.
 *
 * Usage: phases [launches per irregular phase=60000] [loop iterations per phase=12000] */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;

static uint32_t below(uint32_t n)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng % n);
}

static hx_entry *g_exp;
static uint32_t g_nexp, g_have;

static void sync_and_check(CUstream s, hx_log *log, long at)
{
    CK(cuStreamSynchronize(s));
    hx_log_expect(log, g_have, g_exp, g_nexp, "phases", at);
    g_have += g_nexp;
    g_nexp = 0;
}

static void irregular(CUfunction K[8], CUstream s, hx_log *log, long n)
{
    for (long i = 0; i < n; i++) {
        uint32_t k = below(8), gx = 1 + below(16), gy = 1 + below(3), val = below(1u << 30);
        void *p[] = { &log, &k, &val };
        /* launch dimensions are values, not part of a shape: an attribute value (in the
         * shape) makes the launches differ */
        CUlaunchAttribute at;
        memset(&at, 0, sizeof at);
        at.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
        at.value.priority = (int)(gx * 4 + gy);
        CUlaunchConfig cfg = { gx, gy, 1, 32, 1, 1, 0, s, &at, 1 };
        CK(cuLaunchKernelEx(&cfg, K[k], p, NULL));
        g_exp[g_nexp++] = (hx_entry){ k, val, 0 };
        if (below(5) == 0 || g_nexp > 1000)
            sync_and_check(s, log, i);
    }
    sync_and_check(s, log, n);
}

static void loop(CUfunction K[8], CUstream s, hx_log *log, long iters)
{
    for (long it = 0; it < iters; it++) {
        for (uint32_t k = 0; k < 8; k++) {
            hx_rec(K[k], s, log, 100 + k, (uint32_t)it); /* the value changes: exec updates */
            g_exp[g_nexp++] = (hx_entry){ 100 + k, (uint32_t)it, 0 };
        }
        sync_and_check(s, log, it);
    }
}

int main(int argc, char **argv)
{
    long nirr = hx_arg(argc, argv, 1, 60000), nloop = hx_arg(argc, argv, 2, 12000);
    hx_init();
    CUfunction K[8];
    char name[16];
    for (int k = 0; k < 8; k++) {
        snprintf(name, sizeof name, "phase_k%d", k);
        K[k] = hx_kernel_rec(name);
    }
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_log *log = hx_log_new((uint32_t)(2 * nirr + 16 * nloop + 16));
    g_exp = calloc(1100, sizeof *g_exp);
    if (!g_exp)
        return 1;
    irregular(K, s, log, nirr);
    loop(K, s, log, nloop);
    irregular(K, s, log, nirr);
    loop(K, s, log, nloop);
    CK(cuStreamDestroy_v2(s));
    hx_pass("phases");
    return 0;
}
