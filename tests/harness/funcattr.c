/* Function attributes: a kernel logs the values of CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
 * and of the cache configuration in effect for its launch (the fake snapshots attributes at
 * launch, and a graph node at its creation and instantiation, as the driver does). The
 * sequence X, B, X (X is the function whose attribute changes) repeats on a stream, so it is
 * learned, held and replayed as a graph. In cycle c the attribute is V(c): each iteration sets
 * it again to the same value before launching (as libraries do before every launch) -- that
 * must not stop the graph replays -- and the last iteration of the cycle launches X, B, sets
 * V(c+1) while those two are held, then launches X again: the first two must run with V(c),
 * the third with V(c+1), and the next cycle with V(c+1), not with a graph built under V(c).
 * Cycles go in turn through cuFuncSetAttribute called directly, through dlsym and through
 * cuGetProcAddress_v2 (as cudart does), cuKernelSetAttribute (X launched by its CUkernel),
 * cuFuncSetCacheConfig and cuKernelSetCacheConfig.
 *
 * Usage: funcattr [cycles=6] [iterations per cycle=6] */
#include <stdlib.h>

#include "harness.h"

typedef struct { hx_log *log; uint32_t kid, val; } p_attr;

static void k_attr(const void *pp, const unsigned g[3], const unsigned b[3])
{
    (void)g;
    (void)b;
    const p_attr *p = pp;
    uint64_t dyn = (uint64_t)fakecuda_launch_attr(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
    uint64_t cache = (uint64_t)fakecuda_launch_attr(FAKECUDA_ATTR_CACHE_CONFIG);
    hx_log_put(p->log, p->kid, p->val, dyn << 8 | cache);
}

static void launch(CUfunction f, CUstream s, hx_log *log, uint32_t kid, uint32_t val)
{
    void *p[] = { &log, &kid, &val };
    CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, p, NULL));
}

static uint64_t graph_launches(void)
{
    struct fakecuda_counters k;
    fakecuda_counters(&k);
    return k.graph_launches;
}

/* What the kernel logs for a function in that state. */
typedef struct { int dyn, cache; } state;
static uint64_t logged(state st) { return (uint64_t)st.dyn << 8 | (uint64_t)st.cache; }

typedef CUresult (*set_fn)(CUfunction, CUfunction_attribute, int);
static set_fn via_dlsym, via_procaddr;

enum { K_DIRECT, K_DLSYM, K_PROCADDR, K_KERNEL, K_CACHE, K_KERNEL_CACHE, K_COUNT };

/* Sets, by the cycle's kind of call, the value st gives. */
static void set(int kind, CUfunction A, CUkernel KC, state st)
{
    const CUfunction_attribute dyn = CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
    switch (kind) {
    case K_DIRECT: CK(cuFuncSetAttribute(A, dyn, st.dyn)); break;
    case K_DLSYM: CK(via_dlsym(A, dyn, st.dyn)); break;
    case K_PROCADDR: CK(via_procaddr(A, dyn, st.dyn)); break;
    case K_KERNEL: CK(cuKernelSetAttribute(dyn, st.dyn, KC, 0)); break;
    case K_CACHE: CK(cuFuncSetCacheConfig(A, (CUfunc_cache)st.cache)); break;
    default: CK(cuKernelSetCacheConfig(KC, (CUfunc_cache)st.cache, 0)); break;
    }
}

int main(int argc, char **argv)
{
    long cycles = hx_arg(argc, argv, 1, 6), per = hx_arg(argc, argv, 2, 6);
    HX_ASSERT(per >= 5, "funcattr: at least 5 iterations per cycle (learn, build, replay)");
    hx_init();
    static const size_t sz[] = { sizeof(void *), 4, 4 };
    CUfunction A = fakecuda_kernel("fa_a", k_attr, 3, sz), B = fakecuda_kernel("fa_b", k_attr, 3, sz),
               C = fakecuda_kernel("fa_c", k_attr, 3, sz);
    HX_ASSERT(A && B && C, "funcattr: kernels");
    CUkernel KC = fakecuda_kernel_as_kernel(C);
    const state dflt = { 48 * 1024, 0 };
    state sa = dflt, sk = dflt; /* A's, and KC's */
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_log *log = hx_log_new((uint32_t)(cycles * per * 3 + 8));
    via_dlsym = (set_fn)hx_driver_sym("cuFuncSetAttribute");
    void *pa = NULL;
    CUdriverProcAddressQueryResult qr;
    CK(cuGetProcAddress_v2("cuFuncSetAttribute", &pa, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &qr));
    via_procaddr = (set_fn)pa;
    HX_ASSERT(via_dlsym && via_procaddr, "funcattr: cuFuncSetAttribute not found");
    uint32_t at = 0;
    int x_ran[2] = { 0, 0 }; /* A, KC launched on s before */
    for (long c = 0; c < cycles; c++) {
        int kind = (int)(c % K_COUNT), on_kernel = kind == K_KERNEL || kind == K_KERNEL_CACHE;
        CUfunction X = on_kernel ? (CUfunction)KC : A;
        state *sx = on_kernel ? &sk : &sa, next = *sx;
        if (kind == K_CACHE || kind == K_KERNEL_CACHE)
            next.cache = (next.cache + 1) % 4;
        else
            next.dyn = 1024 * (int)(c + 1);
        uint64_t before = 0;
        for (long j = 0; j < per; j++) {
            long it = c * per + j;
            uint32_t v = (uint32_t)it;
            hx_entry e[3];
            e[0] = (hx_entry){ 1, v, logged(*sx) };
            e[1] = (hx_entry){ 2, v, logged(dflt) };
            if (j < per - 1) {
                set(kind, A, KC, *sx);
                launch(X, s, log, 1, v);
                launch(B, s, log, 2, v);
                launch(X, s, log, 3, v);
            } else {
                launch(X, s, log, 1, v);
                launch(B, s, log, 2, v);
                set(kind, A, KC, next);
                *sx = next;
                launch(X, s, log, 3, v);
            }
            e[2] = (hx_entry){ 3, v, logged(*sx) };
            CK(cuStreamSynchronize(s));
            hx_log_expect(log, at, e, 3, "funcattr", it);
            at += 3;
            if (j == 1)
                before = graph_launches();
        }
        /* the same-value sets of iterations 2..per-2 left the graph replaying -- from
         * iteration 3 on in a cycle whose X never ran on s before (cycles 0 and 3: A, then
         * KC): a value change drops the engine's state of s, and libautograph keeps a stream
         * without state until a function launched on it repeats (cache/watch.h), so such a
         * cycle's iteration 0 is only watched until X's second launch, and the sequence is
         * learned in iterations 1 and 2 */
        long want = per - 3 - !x_ran[on_kernel];
        x_ran[on_kernel] = 1;
        if (getenv("FUNCATTR_EXPECT_REPLAYS"))
            HX_ASSERT(graph_launches() >= before + (uint64_t)want,
                      "funcattr, cycle %ld: %llu graph launches in the cycle, expected at "
                      "least %ld",
                      c, (unsigned long long)(graph_launches() - before), want);
    }
    /* The fake's model itself: the application's own graph keeps the value of its
     * instantiation, an eager launch takes the current one, and a launch asking for more
     * dynamic shared memory than the attribute allows is refused. */
    int cur = sa.dyn, next = cur + 1024;
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    launch(A, s, log, 7, 0);
    CUgraph g;
    CK(cuStreamEndCapture(s, &g));
    CUgraphExec ge;
    CK(cuGraphInstantiateWithFlags(&ge, g, 0));
    CK(cuFuncSetAttribute(A, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, next));
    CK(cuGraphLaunch(ge, s));
    launch(A, s, log, 8, 0);
    CK(cuStreamSynchronize(s));
    hx_entry e[2] = { { 7, 0, logged(sa) }, { 8, 0, logged((state){ next, sa.cache }) } };
    hx_log_expect(log, at, e, 2, "funcattr: graph snapshot", -1);
    void *p[] = { &log, &at, &at };
    HX_ASSERT(cuLaunchKernel(B, 1, 1, 1, 32, 1, 1, 49153, s, p, NULL) == CUDA_ERROR_INVALID_VALUE,
              "funcattr: more dynamic shared memory than the default limit was accepted");
    CK(cuGraphExecDestroy(ge));
    CK(cuGraphDestroy(g));
    CK(cuStreamDestroy_v2(s));
    hx_pass("funcattr");
    return 0;
}
