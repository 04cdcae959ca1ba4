/* Scenario l: two contexts. The loop of 8 launches runs on the legacy default stream of each
 * context in turn, switching contexts in mid-sequence (cuCtxSetCurrent, cuCtxPushCurrent /
 * cuCtxPopCurrent); ordering points made while the other context is current (a
 * cuCtxSynchronize, cuMemFree_v2, cuMemFreeHost) must flush what the first context holds into that
 * context, and each context's synchronous copy must find its own work done. They come from
 * iteration 6 on, once the sequence is known, so that they find launches held. At the end
 * the second context is destroyed while it holds launches.
 *
 * Usage: contexts [iterations=30] */
#include "harness.h"

int main(int argc, char **argv)
{
    long iters = hx_arg(argc, argv, 1, 30);
    CUcontext c1 = hx_init(), c2;
    CK(cuCtxCreate_v4(&c2, NULL, 0, 0)); /* now current */
    CK(cuCtxSetCurrent(c1));
    /* functions belong to the context current when they are registered, as a module's do */
    CUfunction KK[2][4], AA[2];
    for (int c = 0; c < 2; c++) {
        CK(cuCtxPushCurrent_v2(c ? c2 : c1));
        KK[c][0] = hx_kernel_rec("cx_a");
        KK[c][1] = hx_kernel_rec("cx_b");
        KK[c][2] = hx_kernel_rec("cx_c");
        KK[c][3] = hx_kernel_rec("cx_d");
        AA[c] = hx_kernel_acc("cx_acc");
        CK(cuCtxPopCurrent_v2(NULL));
    }
    hx_log *log[2] = { hx_log_new((uint32_t)(iters * 8 + 16)), hx_log_new((uint32_t)(iters * 8 + 16)) };
    uint64_t *acc[2] = { hx_dev_u64(1, 1), NULL }, model[2] = { 1, 2 };
    CK(cuCtxPushCurrent_v2(c2));
    acc[1] = hx_dev_u64(1, 2);
    CK(cuCtxPopCurrent_v2(NULL));
    CUcontext ctx[2] = { c1, c2 };
    uint32_t have[2] = { 0, 0 };
    for (long it = 0; it < iters; it++) {
        for (int c = 0; c < 2; c++) {
            CK(cuCtxSetCurrent(ctx[c]));
            CUfunction *K = KK[c], ACC = AA[c];
            hx_entry exp[8];
            for (uint32_t pos = 0; pos < 8; pos++) {
                uint32_t kid = (uint32_t)c * 10 + pos, val = (uint32_t)it;
                if (pos == 6) {
                    hx_acc(ACC, NULL, log[c], acc[c], kid, val);
                    exp[pos] = (hx_entry){ kid, val, model[c] = hx_mix(model[c], kid, val) };
                } else {
                    hx_rec(K[pos % 4], NULL, log[c], kid, val);
                    exp[pos] = (hx_entry){ kid, val, 0 };
                }
                if (pos == 4 && it >= 6 && it % 3 == 1) {
                    /* the other context, mid-sequence: a context-wide synchronisation there */
                    CK(cuCtxPushCurrent_v2(ctx[1 - c]));
                    CK(cuCtxSynchronize());
                    CK(cuCtxPopCurrent_v2(NULL));
                }
                if (pos == 4 && it >= 6 && it % 3 == 2) {
                    /* frees in the other context: cuMemFree_v2 waits for that context's
                     * work, cuMemFreeHost for nothing; what this context holds must be
                     * flushed too, into this context (into the other one, it could run
                     * after this context's later work) */
                    CK(cuCtxPushCurrent_v2(ctx[1 - c]));
                    CUdeviceptr d;
                    void *hp;
                    CK(cuMemAlloc_v2(&d, 64));
                    CK(cuMemAllocHost_v2(&hp, 64));
                    CK(cuMemFree_v2(d));
                    CK(cuMemFreeHost(hp));
                    CK(cuCtxPopCurrent_v2(NULL));
                }
                if (pos == 2 && it >= 6 && it % 3 == 0) {
                    CK(cuCtxPushCurrent_v2(ctx[1 - c]));
                    void *hp;
                    CK(cuMemAllocHost_v2(&hp, 64));
                    CK(cuMemFreeHost(hp));
                    CK(cuCtxPopCurrent_v2(NULL));
                }
            }
            uint64_t h = 0;
            CK(cuMemcpyDtoH_v2(&h, (CUdeviceptr)(uintptr_t)acc[c], sizeof h));
            HX_ASSERT(h == model[c], "contexts, iteration %ld, context %d: %#llx, expected %#llx",
                      it, c + 1, (unsigned long long)h, (unsigned long long)model[c]);
            CK(cuStreamSynchronize(NULL));
            hx_log_expect(log[c], have[c], exp, 8, c ? "contexts: context 2" : "contexts: context 1",
                          it);
            have[c] += 8;
        }
    }
    /* context 2 destroyed while it holds the first launches of its sequence */
    CK(cuCtxSetCurrent(c2));
    hx_entry exp[4];
    for (uint32_t pos = 0; pos < 4; pos++) {
        hx_rec(KK[1][pos % 4], NULL, log[1], 10 + pos, 999);
        exp[pos] = (hx_entry){ 10 + pos, 999, 0 };
    }
    CK(cuCtxDestroy_v2(c2));
    hx_log_expect(log[1], have[1], exp, 4, "contexts: after cuCtxDestroy", iters);
    CK(cuCtxSetCurrent(c1));
    CK(cuCtxSynchronize());
    hx_pass("contexts");
    return 0;
}
