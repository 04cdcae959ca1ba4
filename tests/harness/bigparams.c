/* A CNN-like forward, for the cost of updating replayed pieces (bench/hotpath.py "updated"):
 * per iteration 36 launches and a sync, in threes: a "conv" kernel whose one 1720-byte
 * argument never changes (cuDNN's and nvjet's parameter blocks), then a "bn" and a "clamp"
 * kernel (40 and 48 bytes: an int, a functor, two pointers) whose input pointer is new every
 * iteration and never comes back (ResNet-50's batch-norm and clamp kernels, whose arguments
 * never repeat across 60 forwards: BENCHMARKS.md, fourteenth session). Every kernel folds its
 * arguments into one accumulator; the host computes the same and compares after each sync.
 *
 * Usage: bigparams [iterations=100] */
#include <string.h>

#include "harness.h"

#define GROUPS 12
#define BIG 1720

typedef struct {
    uint64_t *acc;
    uint32_t kid, pad;
    uint8_t fill[BIG - 16];
} p_conv;

typedef struct {
    uint64_t a, b;
} functor;

typedef struct {
    uint64_t *out;
    uintptr_t in;
} ptrs;

/* The fold of a conv block: its kid and a sum of its filler, into the accumulator. */
static uint32_t conv_val(const p_conv *p)
{
    uint32_t s = 0;
    for (size_t i = 0; i < sizeof p->fill; i += 97)
        s = s * 31 + p->fill[i];
    return s;
}

static void k_conv(const void *pp, const unsigned g[3], const unsigned b[3])
{
    (void)g;
    (void)b;
    const p_conv *p = pp;
    *p->acc = hx_mix(*p->acc, p->kid, conv_val(p));
}

/* bn and clamp: int n at 0, the functor at 8, the pointers at 24 (bn) or 32 (clamp, whose
 * functor is 24 bytes: a third word, unused). */
static void k_small(const void *pp, const unsigned g[3], const unsigned b[3], size_t at)
{
    (void)g;
    (void)b;
    const uint8_t *p = pp;
    int32_t n;
    functor f;
    ptrs q;
    memcpy(&n, p, 4);
    memcpy(&f, p + 8, sizeof f);
    memcpy(&q, p + at, sizeof q);
    *q.out = hx_mix(*q.out, (uint32_t)n, (uint32_t)(f.a + f.b + q.in));
}

static void k_bn(const void *pp, const unsigned g[3], const unsigned b[3])
{
    k_small(pp, g, b, 24);
}

static void k_clamp(const void *pp, const unsigned g[3], const unsigned b[3])
{
    k_small(pp, g, b, 32);
}

int main(int argc, char **argv)
{
    long iters = hx_arg(argc, argv, 1, 100);
    hx_init();
    static const size_t s_conv[] = { BIG };
    static const size_t s_bn[] = { 4, 16, 16 };
    static const size_t s_clamp[] = { 4, 24, 16 };
    CUfunction conv = fakecuda_kernel("bp_conv", k_conv, 1, s_conv);
    CUfunction bn = fakecuda_kernel("bp_bn", k_bn, 3, s_bn);
    CUfunction clamp = fakecuda_kernel("bp_clamp", k_clamp, 3, s_clamp);
    HX_ASSERT(conv && bn && clamp, "kernels not registered");
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    uint64_t *acc = hx_dev_u64(1, 7), model = 7;
    static p_conv pc[GROUPS];
    for (int k = 0; k < GROUPS; k++) {
        pc[k].acc = acc;
        pc[k].kid = (uint32_t)k;
        for (size_t i = 0; i < sizeof pc[k].fill; i++)
            pc[k].fill[i] = (uint8_t)(i * 7 + (size_t)k);
    }
    for (long it = 0; it < iters; it++) {
        for (int k = 0; k < GROUPS; k++) {
            void *pconv[] = { &pc[k] };
            CK(cuLaunchKernel(conv, 4, 1, 1, 128, 1, 1, 0, s, pconv, NULL));
            model = hx_mix(model, (uint32_t)k, conv_val(&pc[k]));
            int32_t n = 100 + k;
            functor f = { (uint64_t)k, 3 };
            uint64_t f3[3] = { (uint64_t)k, 5, 0 };
            ptrs q = { acc, (uintptr_t)(0x10000 + (it * GROUPS + k) * 64) }; /* never again */
            void *pbn[] = { &n, &f, &q };
            CK(cuLaunchKernel(bn, 2, 1, 1, 256, 1, 1, 0, s, pbn, NULL));
            model = hx_mix(model, (uint32_t)n, (uint32_t)(f.a + f.b + q.in));
            void *pcl[] = { &n, f3, &q };
            CK(cuLaunchKernel(clamp, 2, 1, 1, 256, 1, 1, 0, s, pcl, NULL));
            model = hx_mix(model, (uint32_t)n, (uint32_t)(f3[0] + f3[1] + q.in));
        }
        CK(cuStreamSynchronize(s));
        HX_ASSERT(*acc == model, "iteration %ld: accumulator %016llx, expected %016llx", it,
                  (unsigned long long)*acc, (unsigned long long)model);
    }
    hx_pass("bigparams");
    return 0;
}
