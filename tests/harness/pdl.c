/* Programmatic dependent launch: a loop of six launches and a synchronisation, four of them
 * through cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION (one
 * with the value 0, one together with a priority), the others plain. Replayed, a launch with
 * the attribute on must be a kernel node joined to the node before it by a programmatic edge
 * (from its programmatic port); the fake tells each kernel run from a graph the port of the
 * programmatic edge into its node (FAKECUDA_ATTR_PROGRAMMATIC), and the kernels log it.
 *
 * Checked here, after every synchronisation: every launch ran once, in order, with its
 * arguments (an order-sensitive checksum); a launch without the attribute (or with it off)
 * never ran behind a programmatic edge; one with it, if behind an edge, from the programmatic
 * port. Printed: "pdl: programmatic N", the runs behind an edge (the bats test compares it
 * with the graph launches and the fake's counters).
 *
 * Modes (second argument): 0 as above; 1 launch 4 also records a programmatic event, 2 a
 * launch completion event (launch-only: those launches stay eager); 3 launch 3 carries a
 * preferred shared memory carveout and a preferred cluster dimension (node attributes).
 *
 * Usage: pdl [iterations=60] [mode=0] */
#include <string.h>

#include "harness.h"

enum { NK = 6 };
/* per position: the attribute's value (-1: a launch without it) */
static const int g_pdl[NK] = { -1, 1, 1, -1, 1, 0 };
static long g_mode;
static CUevent g_ev;

static void k_pdl(const void *pp, const unsigned g[3], const unsigned b[3])
{
    (void)g;
    (void)b;
    const hx_p_acc *p = pp;
    *p->acc = hx_mix(*p->acc, p->kid, p->val);
    hx_log *l = p->log;
    if (l->n < l->cap)
        l->e[l->n++] = (hx_entry){ p->kid, (uint32_t)fakecuda_launch_attr(FAKECUDA_ATTR_PROGRAMMATIC),
                                   *p->acc };
    else
        l->overflow++;
}

static void launch(CUfunction f, CUstream s, int pos, hx_log *log, uint64_t *acc, uint32_t val)
{
    uint32_t kid = (uint32_t)pos;
    void *p[] = { &log, &acc, &kid, &val };
    if (pos == 0) {
        CK(cuLaunchKernel(f, 2, 1, 1, 32, 1, 1, 0, s, p, NULL));
        return;
    }
    CUlaunchAttribute at[3];
    memset(at, 0x5a, sizeof at); /* garbage in the unused bytes, as callers leave it */
    unsigned n = 0;
    if (g_pdl[pos] >= 0) {
        at[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        at[n++].value.programmaticStreamSerializationAllowed = g_pdl[pos];
    }
    if (pos == 2) {
        at[n].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
        at[n++].value.priority = -1;
    }
    if (pos == 4 && g_mode == 1) {
        at[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT;
        at[n].value.programmaticEvent.event = g_ev;
        at[n].value.programmaticEvent.flags = 0;
        at[n++].value.programmaticEvent.triggerAtBlockStart = 0;
    }
    if (pos == 4 && g_mode == 2) {
        at[n].id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;
        at[n].value.launchCompletionEvent.event = g_ev;
        at[n++].value.launchCompletionEvent.flags = 0;
    }
    if (pos == 3 && g_mode == 3) {
        at[n].id = CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT;
        at[n++].value.sharedMemCarveout = 50;
        at[n].id = CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION;
        at[n].value.preferredClusterDim.x = 1;
        at[n].value.preferredClusterDim.y = 1;
        at[n++].value.preferredClusterDim.z = 1;
    }
    CUlaunchConfig cfg = { 1 + (unsigned)pos, 1, 1, 64, 1, 1, 0, s, n ? at : NULL, n };
    CK(cuLaunchKernelEx(&cfg, f, p, NULL));
}

int main(int argc, char **argv)
{
    long iters = hx_arg(argc, argv, 1, 60);
    g_mode = hx_arg(argc, argv, 2, 0);
    hx_init();
    CK(cuEventCreate(&g_ev, CU_EVENT_DISABLE_TIMING));
    static const size_t sz[] = { 8, 8, 4, 4 };
    CUfunction K[NK];
    for (int i = 0; i < NK; i++) {
        char name[16];
        snprintf(name, sizeof name, "pdl_%d", i);
        K[i] = fakecuda_kernel(name, k_pdl, 4, sz);
        HX_ASSERT(K[i], "kernel %s", name);
    }
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    hx_log *log = hx_log_new((uint32_t)(iters * NK + 8));
    uint64_t *acc = hx_dev_u64(1, 7), model = 7;
    long programmatic = 0;
    for (long it = 0; it < iters; it++) {
        uint32_t from = log->n;
        for (int pos = 0; pos < NK; pos++)
            launch(K[pos], s, pos, log, acc, (uint32_t)(it * 31 + pos));
        CK(cuStreamSynchronize(s));
        HX_ASSERT(log->n == from + NK && !log->overflow, "iteration %ld: %u entries, expected %u",
                  it, log->n - from, NK);
        for (int pos = 0; pos < NK; pos++) {
            const hx_entry *e = &log->e[from + pos];
            model = hx_mix(model, (uint32_t)pos, (uint32_t)(it * 31 + pos));
            HX_ASSERT(e->kid == (uint32_t)pos && e->b == model,
                      "iteration %ld, launch %d: ran kid %u with checksum %llx, expected %llx", it,
                      pos, e->kid, (unsigned long long)e->b, (unsigned long long)model);
            if (g_pdl[pos] > 0)
                HX_ASSERT(e->a == 0 || e->a == CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC,
                          "iteration %ld, launch %d: behind an edge from port %u", it, pos, e->a);
            else
                HX_ASSERT(e->a == 0, "iteration %ld, launch %d (no serialisation): behind a "
                          "programmatic edge from port %u", it, pos, e->a);
            programmatic += e->a != 0;
        }
    }
    HX_ASSERT(*acc == model, "final checksum");
    printf("pdl: programmatic %ld\n", programmatic);
    CK(cuStreamDestroy_v2(s));
    hx_pass("pdl");
    return 0;
}
