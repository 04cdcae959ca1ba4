/* The deprecated launches: cuLaunch and cuLaunchGrid run on the legacy default stream (which
 * waits for every blocking stream), cuLaunchGridAsync on its stream; their block shape and
 * parameters come from cuFuncSetBlockShape / cuParamSet*. Each iteration chains updates of x:
 *   S: 4 kernels (learned, then held)   legacy: cuLaunchGrid or cuLaunch (odd/even iteration)
 *   S: 4 kernels (held)                 S: cuLaunchGridAsync
 * and reads x with a synchronous copy: the checksum is order-sensitive, so a legacy launch
 * that overtakes held launches (or is overtaken by later ones) gives another value.
 *
 * Usage: legacygrid [iterations=40] */
#include "harness.h"

static void legacy_params(CUfunction f, hx_log *log, uint64_t *acc, uint32_t kid, uint32_t val)
{
    hx_p_acc p = { log, acc, kid, val };
    CK(cuParamSetv(f, 0, &p, sizeof p));
    CK(cuParamSetSize(f, sizeof p));
}

int main(int argc, char **argv)
{
    long iters = hx_arg(argc, argv, 1, 40);
    hx_init();
    CUfunction ACC = hx_kernel_acc("lgr_acc"), ACC2 = hx_kernel_acc("lgr_acc2"),
               OLD = hx_kernel_acc("lgr_old");
    CK(cuFuncSetBlockShape(OLD, 32, 1, 1));
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_log *log = hx_log_new((uint32_t)(iters * 10 + 8));
    uint64_t *x = hx_dev_u64(1, 7);
    uint64_t mx = 7;
    for (long it = 0; it < iters; it++) {
        hx_entry e[10];
        uint32_t v = (uint32_t)it, n = 0;
        for (uint32_t k = 0; k < 4; k++, n++) {
            hx_acc(k % 2 ? ACC2 : ACC, s, log, x, 1 + k, v);
            e[n] = (hx_entry){ 1 + k, v, mx = hx_mix(mx, 1 + k, v) };
        }
        legacy_params(OLD, log, x, 20, v);
        if (it % 2)
            CK(cuLaunchGrid(OLD, 1, 1));
        else
            CK(cuLaunch(OLD));
        e[n++] = (hx_entry){ 20, v, mx = hx_mix(mx, 20, v) };
        for (uint32_t k = 0; k < 4; k++, n++) {
            hx_acc(k % 2 ? ACC : ACC2, s, log, x, 5 + k, v);
            e[n] = (hx_entry){ 5 + k, v, mx = hx_mix(mx, 5 + k, v) };
        }
        legacy_params(OLD, log, x, 21, v);
        CK(cuLaunchGridAsync(OLD, 1, 1, s));
        e[n++] = (hx_entry){ 21, v, mx = hx_mix(mx, 21, v) };
        uint64_t hx = 0;
        CK(cuMemcpyDtoH_v2(&hx, (CUdeviceptr)(uintptr_t)x, sizeof hx));
        HX_ASSERT(hx == mx, "legacygrid, iteration %ld: x is %#llx, expected %#llx", it,
                  (unsigned long long)hx, (unsigned long long)mx);
        hx_log_expect(log, (uint32_t)(it * 10), e, n, "legacygrid", it);
    }
    CK(cuStreamDestroy_v2(s));
    hx_pass("legacygrid");
    return 0;
}
