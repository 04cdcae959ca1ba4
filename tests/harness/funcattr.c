/* Function attributes: a kernel logs the value of CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
 * in effect for its launch (the fake snapshots attributes at launch, and a graph node at its
 * creation and instantiation, as the driver does). The sequence A, B, A (A is the function
 * whose attribute changes) repeats on a stream, so it is learned, held and replayed as a
 * graph. In cycle c the attribute is V(c): each iteration sets it again to the same value
 * before launching (as libraries do before every launch) -- that must not stop the graph
 * replays -- and the last iteration of the cycle launches A, B, sets V(c+1) while those two are
 * held, then launches A again: the first two must run with V(c), the third with V(c+1), and
 * the next cycle with V(c+1), not with a graph built under V(c). The cycles reach
 * cuFuncSetAttribute in turn directly, through dlsym and through cuGetProcAddress_v2 (as
 * cudart does).
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
    hx_log *l = p->log;
    uint32_t n = __atomic_load_n(&l->n, __ATOMIC_RELAXED);
    if (n >= l->cap) {
        __atomic_store_n(&l->overflow, 1, __ATOMIC_RELEASE);
        return;
    }
    l->e[n] = (hx_entry){ p->kid, p->val,
                          (uint64_t)fakecuda_launch_attr(
                              CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) };
    __atomic_store_n(&l->n, n + 1, __ATOMIC_RELEASE);
}

static void launch(CUfunction f, CUstream s, hx_log *log, uint32_t kid, uint32_t val)
{
    void *p[] = { &log, &kid, &val };
    CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, p, NULL));
}

static int value(long c) { return 1024 * (int)(c + 1); }

static uint64_t graph_launches(void)
{
    struct fakecuda_counters k;
    fakecuda_counters(&k);
    return k.graph_launches;
}

int main(int argc, char **argv)
{
    long cycles = hx_arg(argc, argv, 1, 6), per = hx_arg(argc, argv, 2, 6);
    HX_ASSERT(per >= 5, "funcattr: at least 5 iterations per cycle (learn, build, replay)");
    hx_init();
    static const size_t sz[] = { sizeof(void *), 4, 4 };
    CUfunction A = fakecuda_kernel("fa_a", k_attr, 3, sz), B = fakecuda_kernel("fa_b", k_attr, 3, sz);
    HX_ASSERT(A && B, "funcattr: kernels");
    const uint64_t dflt = 48 * 1024; /* B is never changed */
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_log *log = hx_log_new((uint32_t)(cycles * per * 3 + 8));
    typedef CUresult (*set_fn)(CUfunction, CUfunction_attribute, int);
    set_fn via[3] = { cuFuncSetAttribute, (set_fn)hx_driver_sym("cuFuncSetAttribute"), NULL };
    void *pa = NULL;
    CUdriverProcAddressQueryResult st;
    CK(cuGetProcAddress_v2("cuFuncSetAttribute", &pa, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &st));
    via[2] = (set_fn)pa;
    HX_ASSERT(via[1] && via[2], "funcattr: cuFuncSetAttribute not found");
    uint32_t at = 0;
    for (long c = 0; c < cycles; c++) {
        set_fn set = via[c % 3];
        uint64_t before = 0;
        for (long j = 0; j < per; j++) {
            long it = c * per + j;
            uint32_t v = (uint32_t)it;
            hx_entry e[3];
            if (j < per - 1) {
                CK(set(A, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, value(c)));
                launch(A, s, log, 1, v);
                launch(B, s, log, 2, v);
                launch(A, s, log, 3, v);
                e[2] = (hx_entry){ 3, v, (uint64_t)value(c) };
            } else {
                launch(A, s, log, 1, v);
                launch(B, s, log, 2, v);
                CK(set(A, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, value(c + 1)));
                launch(A, s, log, 3, v);
                e[2] = (hx_entry){ 3, v, (uint64_t)value(c + 1) };
            }
            e[0] = (hx_entry){ 1, v, (uint64_t)value(c) };
            e[1] = (hx_entry){ 2, v, dflt };
            CK(cuStreamSynchronize(s));
            hx_log_expect(log, at, e, 3, "funcattr", it);
            at += 3;
            if (j == 1)
                before = graph_launches();
        }
        /* the same-value sets of iterations 2..per-2 left the graph replaying */
        if (getenv("FUNCATTR_EXPECT_REPLAYS"))
            HX_ASSERT(graph_launches() >= before + (uint64_t)(per - 3),
                      "funcattr, cycle %ld: %llu graph launches in the cycle, expected at "
                      "least %ld",
                      c, (unsigned long long)(graph_launches() - before), per - 3);
    }
    /* The fake's model itself: the application's own graph keeps the value of its
     * instantiation, an eager launch takes the current one, and a launch asking for more
     * dynamic shared memory than the attribute allows is refused. */
    int cur = value(cycles), next = cur + 1024;
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
    hx_entry e[2] = { { 7, 0, (uint64_t)cur }, { 8, 0, (uint64_t)next } };
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
