/* Scenario e: the legacy default stream mixed with a blocking created stream S, relying on the
 * implicit synchronisation between them (work on the legacy stream waits for earlier work on
 * S, and later work on S waits for it), plus a non-blocking stream N that is never
 * synchronised with either (only with itself). Each iteration:
 *   S: 4 kernels update x       legacy: y = x, then y updated
 *   S: y updated (after the legacy work)   N: 3 kernels update z
 *   cuMemcpyDtoH_v2 of y (synchronous, legacy: waits for S too), cuStreamSynchronize(N)
 * then a second phase on S alone: 3 or (odd iterations) 4 kernels update y, and a synchronous
 * copy on the legacy stream reads y; the 3-launch sequence is a prefix of the 4-launch one, so
 * the copy finds 3 launches held on S, which it must flush first; cuStreamSynchronize(S).
 *
 * Usage: legacy [iterations=50] */
#include "harness.h"

int main(int argc, char **argv)
{
    long iters = hx_arg(argc, argv, 1, 50);
    hx_init();
    CUfunction ACC = hx_kernel_acc("lg_acc"), ACC2 = hx_kernel_acc("lg_acc2"),
               COPY = hx_kernel_copy("lg_copy");
    CUstream s, nb;
    CK(cuStreamCreate(&s, 0));
    CK(cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING));
    hx_log *ls = hx_log_new((uint32_t)(iters * 5 + 8)), *ll = hx_log_new((uint32_t)(iters * 3 + 8)),
           *ln = hx_log_new((uint32_t)(iters * 3 + 8));
    uint64_t *x = hx_dev_u64(1, 1), *y = hx_dev_u64(1, 2), *z = hx_dev_u64(1, 3);
    uint64_t mx = 1, my = 2, mz = 3;
    for (long it = 0; it < iters; it++) {
        hx_entry es[5], el[3], en[3];
        uint32_t v = (uint32_t)it;
        for (uint32_t k = 0; k < 4; k++) {
            hx_acc(k % 2 ? ACC2 : ACC, s, ls, x, 1 + k, v);
            es[k] = (hx_entry){ 1 + k, v, mx = hx_mix(mx, 1 + k, v) };
        }
        hx_copy(COPY, NULL, y, x, ll, 10); /* legacy: must see all four updates of x */
        el[0] = (hx_entry){ 10, 0, my = mx };
        hx_acc(ACC, NULL, ll, y, 11, v);
        el[1] = (hx_entry){ 11, v, my = hx_mix(my, 11, v) };
        for (uint32_t k = 0; k < 3; k++) { /* non-blocking: independent */
            hx_acc(ACC2, nb, ln, z, 30 + k, v);
            en[k] = (hx_entry){ 30 + k, v, mz = hx_mix(mz, 30 + k, v) };
        }
        hx_acc(ACC2, s, ls, y, 5, v); /* S: must run after the legacy work above */
        es[4] = (hx_entry){ 5, v, my = hx_mix(my, 5, v) };
        hx_acc(ACC, CU_STREAM_LEGACY, ll, y, 12, v); /* legacy again: after S's update */
        el[2] = (hx_entry){ 12, v, my = hx_mix(my, 12, v) };
        uint64_t hy = 0;
        CK(cuMemcpyDtoH_v2(&hy, (CUdeviceptr)(uintptr_t)y, sizeof hy));
        HX_ASSERT(hy == my, "legacy, iteration %ld: y is %#llx, expected %#llx", it,
                  (unsigned long long)hy, (unsigned long long)my);
        hx_log_expect(ll, (uint32_t)(it * 3), el, 3, "legacy: legacy stream", it);
        hx_log_expect(ls, (uint32_t)(it * 5), es, 5, "legacy: blocking stream", it);
        CK(cuStreamSynchronize(nb));
        hx_log_expect(ln, (uint32_t)(it * 3), en, 3, "legacy: non-blocking stream", it);
        CK(cuStreamSynchronize(s)); /* phase 2: S alone */
        uint32_t m = it % 2 ? 4 : 3;
        for (uint32_t k = 0; k < m; k++) {
            hx_acc(k % 2 ? ACC2 : ACC, s, NULL, y, 50 + k, v);
            my = hx_mix(my, 50 + k, v);
        }
        CK(cuMemcpyDtoH_v2(&hy, (CUdeviceptr)(uintptr_t)y, sizeof hy));
        HX_ASSERT(hy == my, "legacy, iteration %ld, phase 2: y is %#llx, expected %#llx", it,
                  (unsigned long long)hy, (unsigned long long)my);
        CK(cuStreamSynchronize(s));
    }
    CK(cuStreamDestroy_v2(s));
    CK(cuStreamDestroy_v2(nb));
    hx_pass("legacy");
    return 0;
}
