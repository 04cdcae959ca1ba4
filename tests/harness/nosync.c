/* A stream with no ordering point for a long time: rounds of N iterations of 4 launches (2
 * kernels, an argument that changes every iteration) and nothing else, then one
 * synchronisation, after which the log must hold every launch of the round in order with its
 * arguments. Layout probes, which wake the worker at ordering points (worker.c), must still be
 * made within the first round: learned and replayed without a sync (bats/cpu_worker.bats).
 * HX_SETTLE=1: more rounds, until one ran mostly from graphs (the worker may be slow to build
 * on a loaded host; at most 100 rounds).
 *
 * Usage: nosync [iterations=2000] */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

int main(int argc, char **argv)
{
    long iters = hx_arg(argc, argv, 1, 2000);
    const char *settle = getenv("HX_SETTLE");
    int rounds = settle && !strcmp(settle, "1") ? 100 : 1;
    hx_init();
    CUfunction A = hx_kernel_rec("ns_a"), B = hx_kernel_rec64("ns_b");
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_log *log = hx_log_new((uint32_t)(iters * 4));
    hx_entry *exp = malloc((size_t)iters * 4 * sizeof *exp);
    HX_ASSERT(exp, "out of memory");
    for (int r = 0;; r++) {
        HX_ASSERT(r < rounds, "HX_SETTLE: %d rounds, none mostly from graphs", rounds);
        uint64_t g0 = hx_graph_kernels();
        hx_log_init(log, (uint32_t)(iters * 4));
        for (long it = 0; it < iters; it++) {
            uint32_t v = (uint32_t)(r * iters + it);
            hx_rec(A, s, log, 1, v);
            hx_rec64(B, s, log, 0x10000u + v, 2, 20);
            hx_rec(A, s, log, 3, 30);
            hx_rec64(B, s, log, 0x20000u + v, 4, 40);
            exp[it * 4] = (hx_entry){ 1, v, 0 };
            exp[it * 4 + 1] = (hx_entry){ 2, 20, 0x10000u + v };
            exp[it * 4 + 2] = (hx_entry){ 3, 30, 0 };
            exp[it * 4 + 3] = (hx_entry){ 4, 40, 0x20000u + v };
        }
        CK(cuStreamSynchronize(s));
        hx_log_expect(log, 0, exp, (uint32_t)(iters * 4), "nosync", r);
        if (rounds == 1 || (hx_graph_kernels() - g0) * 2 > (uint64_t)iters * 4)
            break;
    }
    free(exp);
    CK(cuStreamDestroy_v2(s));
    hx_pass("nosync");
    return 0;
}
