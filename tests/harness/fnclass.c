/* Function classes (cache/params.h): K modules each hold their own copy of a kernel "attn" (one
 * name, one parameter layout, K handles), as a library that compiles a kernel per problem size
 * at run time makes them (cuDNN's attention, one per sequence length). Step i of a decode-like
 * loop launches A, attn_j, B, attn_j (j = (i / 2) mod K: each copy two steps in a row), then
 * synchronises; it sets attn_j's dynamic shared memory limit before every step, to a new
 * value before the copy's first launch (as cuDNN does), to the same value after. One template
 * serves every step: its attn nodes take the step's function in an exec update.
 *
 * Each copy logs which one it is, the arguments and the attribute value in effect, so the log
 * after every synchronisation says whether the right function ran, in order, with the right
 * attribute. In step `chg` (odd: the copy's second step, so the graph holds that copy), the
 * copy's limit is raised while A is held: the attn launches after the change must see the new
 * value, so the graph that holds the copy must go (an update that changes only arguments would
 * keep the old value); a first value set for a copy no graph holds drops nothing.
 *
 * With per=1 each step launches a copy no step launched before (copies <= steps), as a Hugging
 * Face decode with a growing cache does (cuDNN compiles its attention for each new length): a
 * copy is then its class's from its first launch (probed at once: a class has its name), or no
 * two steps would be the same sequence.
 *
 * With long=1 the copies' name is longer than the 120 characters a layout keeps of it (as
 * cuDNN's and CUTLASS's mangled names are): a class is still found by its full name.
 *
 * Usage: fnclass [steps=40] [copies=4] [chg=31] [per=2: steps per copy] [long=0] */
#include <stdint.h>

#include "harness.h"

#define MAX_K 16

typedef struct { hx_log *log; uint32_t kid, val; } p_attn;

static void k_attn(int copy, const void *pp)
{
    const p_attn *p = pp;
    uint64_t dyn = (uint64_t)fakecuda_launch_attr(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
    hx_log_put(p->log, p->kid, p->val, dyn << 8 | (uint64_t)copy);
}

#define COPY(j)                                                                                \
    static void k_attn##j(const void *pp, const unsigned g[3], const unsigned b[3])           \
    {                                                                                          \
        (void)g;                                                                               \
        (void)b;                                                                               \
        k_attn(j, pp);                                                                         \
    }
COPY(0) COPY(1) COPY(2) COPY(3) COPY(4) COPY(5) COPY(6) COPY(7)
COPY(8) COPY(9) COPY(10) COPY(11) COPY(12) COPY(13) COPY(14) COPY(15)
static const fakecuda_kernel_fn copies[MAX_K] = {
    k_attn0, k_attn1, k_attn2,  k_attn3,  k_attn4,  k_attn5,  k_attn6,  k_attn7,
    k_attn8, k_attn9, k_attn10, k_attn11, k_attn12, k_attn13, k_attn14, k_attn15,
};

static void launch(CUfunction f, CUstream s, hx_log *log, uint32_t kid, uint32_t val)
{
    void *p[] = { &log, &kid, &val };
    CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, p, NULL));
}

int main(int argc, char **argv)
{
    long steps = hx_arg(argc, argv, 1, 40), K = hx_arg(argc, argv, 2, 4),
         chg = hx_arg(argc, argv, 3, 31), per = hx_arg(argc, argv, 4, 2),
         long_name = hx_arg(argc, argv, 5, 0);
    HX_ASSERT(steps >= 1 && K >= 1 && K <= MAX_K && per >= 1, "fnclass: bad arguments");
    hx_init();
    static const size_t sz[] = { sizeof(void *), 4, 4 };
    char name[256] = "attn";
    if (long_name) /* 200 characters, the part a layout keeps the same for every copy */
        snprintf(name, sizeof name, "attn_%0195d", 7);
    CUfunction attn[MAX_K];
    for (long j = 0; j < K; j++) {
        CUmodule m = fakecuda_module();
        HX_ASSERT(m, "fnclass: module");
        attn[j] = fakecuda_module_kernel(m, name, copies[j], 3, sz);
        HX_ASSERT(attn[j], "fnclass: kernel");
    }
    CUfunction A = hx_kernel_rec("fnclass_a"), B = hx_kernel_rec("fnclass_b");
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_log *log = hx_log_new((uint32_t)(steps * 4 + 8));
    const CUfunction_attribute dyn = CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
    int limit[MAX_K];
    for (long i = 0; i < steps; i++) {
        int j = (int)(i / per % K);
        uint32_t v = (uint32_t)i;
        if (i < per * K && i % per == 0) { /* a copy met for the first time: its limit set */
            limit[j] = 1024 * (j + 1);
            CK(cuFuncSetAttribute(attn[j], dyn, limit[j]));
        } else {
            CK(cuFuncSetAttribute(attn[j], dyn, limit[j])); /* the same value again */
        }
        launch(A, s, log, 1, v);
        if (i == chg) { /* a new value while A is held: the next attn launches see it */
            limit[j] += 512;
            CK(cuFuncSetAttribute(attn[j], dyn, limit[j]));
        }
        launch(attn[j], s, log, 2, v);
        launch(B, s, log, 3, v);
        launch(attn[j], s, log, 4, v);
        uint64_t in_effect = (uint64_t)limit[j] << 8 | (uint64_t)j;
        hx_entry e[4] = { { 1, v, 0 }, { 2, v, in_effect }, { 3, v, 0 }, { 4, v, in_effect } };
        CK(cuStreamSynchronize(s));
        hx_log_expect(log, (uint32_t)(i * 4), e, 4, "fnclass step", i);
    }
    CK(cuStreamDestroy_v2(s));
    hx_pass("fnclass");
    return 0;
}
