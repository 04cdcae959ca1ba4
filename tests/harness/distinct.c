/* Scenario w: N distinct kernels, each launched once per iteration, then a synchronisation;
 * no function repeats inside an iteration (what C1 and C2 are for N = 1 and N = 50 with one
 * iteration). After every synchronisation the log must hold exactly the launches so far, in
 * order. The engine watches such a stream until a function launched on it repeats (cache/
 * watch.h): the first iteration leaves no state and nothing learned; the loop is learned from
 * the second iteration on.
 *
 * spaced: one more kernel and a synchronisation after each iteration's N, so that the
 * N-launch sequence never follows its last occurrence directly (not a loop's body).
 *
 * Usage: distinct [n=50] [iterations=1] [stream=created|legacy|ptsz] [spaced] */
#include <stdio.h>
#include <string.h>

#include "harness.h"

#define MAX_N 1024

int main(int argc, char **argv)
{
    long n = hx_arg(argc, argv, 1, 50), iters = hx_arg(argc, argv, 2, 1);
    const char *kind = argc > 3 ? argv[3] : "created";
    int spaced = argc > 4 && !strcmp(argv[4], "spaced");
    HX_ASSERT(argc <= 4 || spaced, "distinct: %s?", argv[4]);
    HX_ASSERT(n >= 1 && n <= MAX_N && iters >= 1, "distinct: bad arguments");
    hx_init();
    static CUfunction f[MAX_N + 1];
    for (long k = 0; k < n + spaced; k++) {
        char name[32];
        snprintf(name, sizeof name, "distinct_%ld", k);
        f[k] = hx_kernel_rec(name);
    }
    CUstream s = NULL;
    int ptsz = !strcmp(kind, "ptsz");
    if (!strcmp(kind, "created"))
        CK(cuStreamCreate(&s, 0));
    else
        HX_ASSERT(ptsz || !strcmp(kind, "legacy"), "distinct: stream %s?", kind);
    const long per = n + spaced; /* launches per iteration */
    hx_log *log = hx_log_new((uint32_t)(iters * per + 8));
    static hx_entry exp[MAX_N + 1];
    for (long it = 0; it < iters; it++) {
        for (long k = 0; k < per; k++) {
            uint32_t kid = (uint32_t)k + 1, val = (uint32_t)it;
            if (ptsz)
                hx_rec_ptsz(f[k], s, log, kid, val);
            else
                hx_rec(f[k], s, log, kid, val);
            exp[k] = (hx_entry){ kid, val, 0 };
            if (k == n - 1 || k == n)
                CK(ptsz ? cuStreamSynchronize_ptsz(s) : cuStreamSynchronize(s));
        }
        hx_log_expect(log, (uint32_t)(it * per), exp, (uint32_t)per, "distinct", it);
    }
    if (s)
        CK(cuStreamDestroy_v2(s));
    hx_pass("distinct");
    return 0;
}
