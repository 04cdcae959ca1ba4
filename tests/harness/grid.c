/* Launch dimensions as values: a loop whose first kernel's grid grows by one block every
 * iteration (its arguments never change: a pure grid change), a kernel whose block and dynamic
 * shared memory alternate, and fixed kernels, then a synchronisation. The launches of every
 * iteration have the same shapes, so they make one template, replayed with its exec's nodes
 * updated to each iteration's dimensions. Every kernel logs the grid and block it ran with:
 * a replay with stale dimensions fails the check after the synchronisation.
 *
 * Usage: grid [iterations=80] */
#include "harness.h"

enum { NK = 5 };

static void k_dims(const void *pp, const unsigned g[3], const unsigned b[3])
{
    const hx_p_rec *p = pp;
    hx_log *l = p->log;
    if (l->n < l->cap)
        l->e[l->n++] = (hx_entry){ p->kid, g[0], ((uint64_t)b[0] << 32) | p->val };
    else
        l->overflow++;
}

static void dims_of(int pos, long it, unsigned g[3], unsigned b[3], unsigned *smem)
{
    g[0] = pos == 0 ? 1 + (unsigned)it : 4;
    g[1] = g[2] = 1;
    b[0] = pos == 1 ? (it % 2 ? 64 : 128) : 32;
    b[1] = b[2] = 1;
    *smem = pos == 1 ? (it % 3) * 256u : 0;
}

int main(int argc, char **argv)
{
    long iters = hx_arg(argc, argv, 1, 80);
    hx_init();
    static const size_t sz[] = { 8, 4, 4 };
    CUfunction K[NK];
    for (int i = 0; i < NK; i++) {
        char name[16];
        snprintf(name, sizeof name, "grid_%d", i);
        K[i] = fakecuda_kernel(name, k_dims, 3, sz);
        HX_ASSERT(K[i], "kernel %s", name);
    }
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_log *log = hx_log_new((uint32_t)(iters * NK + 8));
    for (long it = 0; it < iters; it++) {
        uint32_t from = log->n;
        for (int pos = 0; pos < NK; pos++) {
            unsigned g[3], b[3], smem;
            dims_of(pos, it, g, b, &smem);
            uint32_t kid = (uint32_t)pos, val = 100 + (uint32_t)pos;
            void *p[] = { &log, &kid, &val };
            if (pos == 3) { /* through cuLaunchKernelEx too */
                CUlaunchConfig cfg = { g[0], g[1], g[2], b[0], b[1], b[2], smem, s, NULL, 0 };
                CK(cuLaunchKernelEx(&cfg, K[pos], p, NULL));
            } else {
                CK(cuLaunchKernel(K[pos], g[0], g[1], g[2], b[0], b[1], b[2], smem, s, p, NULL));
            }
        }
        CK(cuStreamSynchronize(s));
        HX_ASSERT(log->n == from + NK && !log->overflow, "iteration %ld: %u entries, expected %u",
                  it, log->n - from, NK);
        for (int pos = 0; pos < NK; pos++) {
            unsigned g[3], b[3], smem;
            dims_of(pos, it, g, b, &smem);
            const hx_entry *e = &log->e[from + pos];
            uint64_t want = ((uint64_t)b[0] << 32) | (100u + (uint32_t)pos);
            HX_ASSERT(e->kid == (uint32_t)pos && e->a == g[0] && e->b == want,
                      "iteration %ld, launch %d: ran kid %u with grid %u, block %llu; expected "
                      "grid %u, block %u", it, pos, e->kid, e->a,
                      (unsigned long long)(e->b >> 32), g[0], b[0]);
        }
    }
    CK(cuStreamDestroy_v2(s));
    hx_pass("grid");
    return 0;
}
