/* Scenario k (unload, free, destroy): lifetime events in mid-run.
 *  - iteration 10, mid-sequence: an unrelated module is unloaded (libautograph drops its
 *    caches while holding launches);
 *  - iteration 15, mid-sequence: cuMemFree_v2 of an unrelated buffer, which waits for all the
 *    context's work: the launches made so far must have run when it returns;
 *  - after iteration 20: the module of half the kernels is unloaded and a new module loaded
 *    whose kernels have another parameter layout -- and, as the fake reuses the handle memory
 *    of unloaded functions, the same handles. Stale layouts or templates would show;
 *  - at the end, a stream is destroyed while launches on it are held: they must still run;
 *    and the next stream created (blocking, where the destroyed one was non-blocking) gets
 *    the same handle from the fake: it must be treated as the new stream it is (the legacy
 *    stream's implicit synchronisation with it must hold).
 *
 * Usage: unload [iterations=40] */
#include "harness.h"

int main(int argc, char **argv)
{
    long iters = hx_arg(argc, argv, 1, 40);
    hx_init();
    CUmodule m1 = fakecuda_module(), m2 = fakecuda_module();
    CUfunction f[4], g[4];
    for (int i = 0; i < 4; i++) {
        f[i] = hx_module_rec(m1, "ul_f");
        g[i] = hx_kernel_rec("ul_g");
    }
    /* one of them launched through its CUkernel handle */
    CUfunction f3 = (CUfunction)fakecuda_kernel_as_kernel(f[3]);
    (void)hx_module_rec(m2, "ul_unused");
    CUfunction n[4] = { NULL, NULL, NULL, NULL };
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_log *log = hx_log_new((uint32_t)(iters * 8 + 8));
    int reused = 0;
    uint64_t *scratch = hx_dev_u64(4, 0);
    for (long it = 0; it < iters; it++) {
        hx_entry exp[8];
        int late = it > 20;
        for (uint32_t pos = 0; pos < 8; pos++) {
            uint32_t k = pos / 2, val = (uint32_t)(it * 10 + pos);
            if (pos % 2) {
                hx_rec(g[k], s, log, pos, val);
                exp[pos] = (hx_entry){ pos, val, 0 };
            } else if (!late) {
                hx_rec(k == 3 ? f3 : f[k], s, log, pos, val);
                exp[pos] = (hx_entry){ pos, val, 0 };
            } else {
                hx_rec64(n[k], s, log, 0xABC00000u + val, (uint8_t)pos, (uint16_t)(val * 3));
                exp[pos] = (hx_entry){ pos, (uint16_t)(val * 3), 0xABC00000u + val };
            }
            if (it == 10 && pos == 2)
                CK(cuModuleUnload(m2));
            if (it == 15 && pos == 4) {
                CK(cuMemFree_v2((CUdeviceptr)(uintptr_t)scratch));
                hx_log_expect(log, (uint32_t)(it * 8), exp, pos + 1, "unload: after cuMemFree_v2",
                              it);
            }
        }
        CK(cuStreamSynchronize(s));
        hx_log_expect(log, (uint32_t)(it * 8), exp, 8, "unload", it);
        if (it == 20) {
            CK(cuModuleUnload(m1));
            CUmodule m3 = fakecuda_module();
            for (int i = 0; i < 4; i++) {
                n[i] = hx_module_rec64(m3, "ul_n");
                int hit = (void *)n[i] == (void *)f3;
                for (int j = 0; j < 4; j++)
                    hit |= (void *)n[i] == (void *)f[j];
                reused += hit;
            }
        }
    }
    HX_ASSERT(reused == 4, "unload: the fake did not reuse the unloaded handles (%d)", reused);

    /* a stream destroyed while it holds launches */
    CUstream t;
    CK(cuStreamCreate(&t, CU_STREAM_NON_BLOCKING));
    hx_log *lt = hx_log_new(64);
    hx_entry et[16];
    uint32_t nt = 0;
    for (int it = 0; it < 4; it++) {
        for (uint32_t k = 0; k < (it == 3 ? 3u : 4u); k++) {
            hx_rec(g[k], t, lt, 60 + k, (uint32_t)it);
            et[nt++] = (hx_entry){ 60 + k, (uint32_t)it, 0 };
        }
        if (it < 3)
            CK(cuStreamSynchronize(t));
    }
    CK(cuStreamDestroy_v2(t));
    CK(cuCtxSynchronize());
    hx_log_expect(lt, 0, et, nt, "unload: stream destroyed while holding", 3);
    CUstream t2;
    CK(cuStreamCreate(&t2, 0));
    HX_ASSERT(t2 == t, "unload: the fake did not reuse the destroyed stream's handle");
    CUfunction ACC = hx_kernel_acc("ul_acc"), COPY = hx_kernel_copy("ul_copy");
    uint64_t *x = hx_dev_u64(1, 1), *y = hx_dev_u64(1, 0), mx = 1, hy = 0;
    for (uint32_t it = 0; it < 6; it++) {
        for (uint32_t k = 0; k < 3; k++) {
            hx_acc(ACC, t2, NULL, x, 70 + k, it);
            mx = hx_mix(mx, 70 + k, it);
        }
        hx_copy(COPY, NULL, y, x, NULL, 0); /* legacy: waits for the blocking stream t2 */
        CK(cuMemcpyDtoH_v2(&hy, (CUdeviceptr)(uintptr_t)y, sizeof hy));
        HX_ASSERT(hy == mx, "unload: reused stream handle, iteration %u: %#llx, expected %#llx",
                  it, (unsigned long long)hy, (unsigned long long)mx);
    }
    CK(cuStreamDestroy_v2(t2));
    hx_pass("unload");
    return 0;
}
