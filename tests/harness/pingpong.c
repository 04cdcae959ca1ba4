/* Scenario b: the 8-launch loop with a scalar and a pointer argument that change every
 * iteration (the pointer alternates between two buffers), through every launch form: kernel
 * parameters, the `extra` packed buffer, cuLaunchKernelEx with and without attributes,
 * cuLaunchCooperativeKernel, and a CUkernel handle. Every kernel folds its arguments into the
 * buffer it is given and logs the result, so a stale value anywhere shows.
 *
 * The first half of the iterations changes every launch's arguments (a whole-graph update is
 * cheaper); the second half changes one launch's only (a per-node update is cheaper).
 * With "alternate", only the pointer changes, every iteration, between the two buffers (a
 * Jacobi-style solver's swap): two values taking turns.
 *
 * Usage: pingpong [iterations=100] [alternate] */
#include <string.h>

#include "harness.h"

static CUfunction PA, PB;
static CUkernel PAk;
static CUstream g_s;

static void launch(int pos, hx_log *log, uint64_t *buf, uint32_t kid, uint32_t val)
{
    void *p[] = { &log, &buf, &kid, &val };
    hx_p_acc blob = { log, buf, kid, val };
    size_t bsz = 24;
    void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, &blob, CU_LAUNCH_PARAM_BUFFER_SIZE, &bsz,
                      CU_LAUNCH_PARAM_END };
    CUlaunchAttribute at[1];
    memset(at, 0, sizeof at);
    at[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    at[0].value.priority = -1;
    CUlaunchConfig cfg = { 2, 1, 1, 64, 1, 1, 0, g_s, at, 1 };
    switch (pos) {
    case 0:
        CK(cuLaunchKernel(PA, 2, 1, 1, 64, 1, 1, 0, g_s, p, NULL));
        break;
    case 1:
        CK(cuLaunchKernel(PB, 2, 1, 1, 64, 1, 1, 0, g_s, NULL, extra));
        break;
    case 2:
        CK(cuLaunchKernelEx(&cfg, PA, p, NULL));
        break;
    case 3:
        CK(cuLaunchKernel((CUfunction)PAk, 2, 1, 1, 64, 1, 1, 0, g_s, p, NULL));
        break;
    case 4:
        CK(cuLaunchCooperativeKernel(PB, 2, 1, 1, 64, 1, 1, 0, g_s, p));
        break;
    case 5:
        cfg.numAttrs = 0;
        cfg.attrs = NULL;
        CK(cuLaunchKernelEx(&cfg, PB, p, NULL));
        break;
    case 6:
        CK(cuLaunchKernel(PA, 1, 1, 1, 32, 1, 1, 0, g_s, p, NULL));
        break;
    default:
        CK(cuLaunchKernel(PB, 1, 1, 1, 32, 1, 1, 0, g_s, p, NULL));
        break;
    }
}

int main(int argc, char **argv)
{
    long iters = hx_arg(argc, argv, 1, 100);
    int alternate = argc > 2 && !strcmp(argv[2], "alternate");
    hx_init();
    PA = hx_kernel_acc("pp_a");
    PB = hx_kernel_acc("pp_b");
    PAk = fakecuda_kernel_as_kernel(PA);
    CK(cuStreamCreate(&g_s, 0));
    hx_log *log = hx_log_new((uint32_t)(iters * 8 + 8));
    uint64_t *bufs = hx_dev_u64(2, 3), model[2] = { 3, 3 };
    for (long it = 0; it < iters; it++) {
        hx_entry exp[8];
        int phase1 = it < iters / 2;
        int bi = phase1 || alternate ? (int)(it % 2) : 0;
        for (int pos = 0; pos < 8; pos++) {
            uint32_t kid = 10 + (uint32_t)pos;
            uint32_t val = alternate  ? 1000u + (uint32_t)pos
                           : phase1   ? (uint32_t)(it * 8 + pos)
                           : pos == 3 ? (uint32_t)it
                                      : 1000u + (uint32_t)pos;
            launch(pos, log, &bufs[bi], kid, val);
            model[bi] = hx_mix(model[bi], kid, val);
            exp[pos] = (hx_entry){ kid, val, model[bi] };
        }
        CK(cuStreamSynchronize(g_s));
        hx_log_expect(log, (uint32_t)(it * 8), exp, 8, "pingpong", it);
    }
    CK(cuStreamDestroy_v2(g_s));
    hx_pass("pingpong");
    return 0;
}
