/* A library that sets a kernel's attribute to alternating values before its launches (PyTorch
 * under AMP: MAX_DYNAMIC_SHARED_SIZE_BYTES of one kernel set to 0 and 8192 in turn, once per
 * step). Each iteration sets X's attribute to V(it) (two values in turn), then launches X, B,
 * B and synchronises; X logs the value in effect at its launch (the fake snapshots attributes
 * at launch and a graph node at its creation, as the driver does). Every change must reach
 * the launches after it; the graphs holding X are dropped at every change, so a graph is never
 * replayed twice, and the engine must not keep holding and building the sequence for nothing.
 * Prints "built N" (graphs instantiated) for the bats test to bound.
 *
 * Usage: attrchurn [iterations=200] */
#include "harness.h"

typedef struct { hx_log *log; uint32_t kid, val; } p_attr;

static void k_attr(const void *pp, const unsigned g[3], const unsigned b[3])
{
    (void)g;
    (void)b;
    const p_attr *p = pp;
    int dyn = fakecuda_launch_attr(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
    hx_log_put(p->log, p->kid, p->val, (uint64_t)dyn);
}

static void launch(CUfunction f, CUstream s, hx_log *log, uint32_t kid, uint32_t val)
{
    void *p[] = { &log, &kid, &val };
    CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, p, NULL));
}

int main(int argc, char **argv)
{
    long iters = hx_arg(argc, argv, 1, 200);
    hx_init();
    static const size_t sz[] = { sizeof(void *), 4, 4 };
    CUfunction X = fakecuda_kernel("ac_x", k_attr, 3, sz), B = fakecuda_kernel("ac_b", k_attr, 3, sz);
    HX_ASSERT(X && B, "attrchurn: kernels");
    const int dflt = 48 * 1024;
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_log *log = hx_log_new((uint32_t)(iters * 3 + 8));
    uint32_t at = 0;
    for (long it = 0; it < iters; it++) {
        uint32_t v = (uint32_t)it;
        int dyn = it % 2 ? 8192 : 0;
        CK(cuFuncSetAttribute(X, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dyn));
        launch(X, s, log, 1, v);
        launch(B, s, log, 2, v);
        launch(B, s, log, 3, v);
        CK(cuStreamSynchronize(s));
        hx_entry e[3] = { { 1, v, (uint64_t)dyn }, { 2, v, (uint64_t)dflt }, { 3, v, (uint64_t)dflt } };
        hx_log_expect(log, at, e, 3, "attrchurn", it);
        at += 3;
    }
    struct fakecuda_counters k;
    fakecuda_counters(&k);
    printf("built %llu\n", (unsigned long long)k.instantiations);
    CK(cuStreamDestroy(s));
    hx_pass("attrchurn");
    return 0;
}
