/* Whether graphs can help: the GPU-bound / host-bound probe, pieces only for a GPU that would
 * wait, and sequences that keep breaking off (policy/benefit.h). The fake GPU is made slow by a
 * gate, not by time: a kernel that spins until the host opens its flag, so "the GPU is behind
 * the host" holds by construction, whatever the load on the machine.
 *
 * Modes (each checks the exact log of what ran):
 *   gpubound N   a gate kernel that stays closed while the host issues N iterations of
 *                {A, B, event record} (an ordering point that does not wait, as the events
 *                around a timed region), then opens; one sync at the end. The host runs far
 *                ahead: no graph must be built, nothing held.
 *   hostbound N  N iterations of {A, B, stream sync}: the GPU keeps up; graphs are tried.
 *   phase N M    gpubound for N iterations, then hostbound for M (a phase change: probed again
 *                after a back-off, then tried).
 *   p3 N W       N iterations of {G, K1..K15} with W us of host work between launches (so that
 *                the measured plan cuts pieces); the first 7 iterations synchronise (the probe
 *                finds the host the bottleneck), then end with an event record instead (an
 *                ordering point that does not wait) and G, a gate, opens only three
 *                iterations later: graph occurrences find the GPU still busy with earlier
 *                ones, so the sequence must go as one graph.
 *   p1 N W       the same sequence with a sync every iteration (and the gates open): pieces.
 *   diverge N    N iterations of 8 launches and a sync; three of four put, at position 5, a
 *                cooperative launch whose grid (part of its shape) is new each time: a hold
 *                that breaks off and a segment that never repeats.
 *   variants N   N steps of 8 launches and a sync, as a decode loop's: steps alternate between
 *                two variants that differ at position 5 (another kernel there), and every
 *                fifth step is a "prefill" that differs at its second launch (a cooperative
 *                launch with a new grid). Holds that break off there are another sequence's,
 *                or cost one held launch: the variants must stay graphed.
 *   align N      N steps of 16 launches and a sync, as a decode step whose elementwise kernels
 *                change with the alignment of a growing tensor: position 14 takes one of four
 *                kernels in turn, so the step is four variants of one sequence, the same for
 *                their first 14 launches.
 *   cycle N W    N steps of 64 launches cycling through 4 kernels (W us of host work after
 *                each) and a sync each; every 7th step has a fifth kernel inserted before its
 *                33rd launch, as bench's tiny --diverge-every=7: the step's hold breaks off
 *                there, and the rest of the step must not keep beginning holds that break off.
 *
 * Usage: queue MODE [N=200] [M or W] */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

typedef struct { uint32_t *go; } q_gate;
static void k_gate(const void *pp, const unsigned g[3], const unsigned b[3])
{
    (void)g;
    (void)b;
    const q_gate *p = pp;
    while (!__atomic_load_n(p->go, __ATOMIC_ACQUIRE))
        sched_yield();
}

static CUfunction g_gate;

static void gate(CUstream s, uint32_t *go)
{
    void *p[] = { &go };
    CK(cuLaunchKernel(g_gate, 1, 1, 1, 1, 1, 1, 0, s, p, NULL));
}

static void open_gate(uint32_t *go)
{
    __atomic_store_n(go, 1, __ATOMIC_RELEASE);
}

/* Host work between launches (the program's own, as a framework's Python). */
static void host_work(long us)
{
    double end = hx_now() + (double)us / 1e6;
    while (hx_now() < end)
        ;
}

/* {A, B} then an event record (gated) or a sync, n times; returns the log's new length. */
static uint32_t ab_loop(CUstream s, hx_log *log, uint32_t have, long n, int gated, long it0)
{
    static CUfunction A, B;
    if (!A) {
        A = hx_kernel_rec("q_a");
        B = hx_kernel_rec("q_b");
    }
    CUevent ev;
    CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    uint32_t *go = calloc(1, sizeof *go);
    HX_ASSERT(go, "calloc");
    if (gated)
        gate(s, go);
    for (long i = 0; i < n; i++) {
        uint32_t it = (uint32_t)(it0 + i);
        hx_rec(A, s, log, 1, it);
        hx_rec(B, s, log, 2, it);
        if (gated) {
            CK(cuEventRecord(ev, s));
        } else {
            CK(cuStreamSynchronize(s));
            hx_entry exp[2] = { { 1, it, 0 }, { 2, it, 0 } };
            hx_log_expect(log, have, exp, 2, "queue", (long)it);
        }
        have += 2;
    }
    if (gated) {
        open_gate(go);
        CK(cuStreamSynchronize(s));
        HX_ASSERT(log->n == have, "queue: the log holds %u entries, expected %u", log->n, have);
        for (uint32_t at = have - 2 * (uint32_t)n; at < have; at++) {
            uint32_t it = (uint32_t)it0 + (at - (have - 2 * (uint32_t)n)) / 2, k = 1 + at % 2;
            HX_ASSERT(log->e[at].kid == k && log->e[at].a == it,
                      "queue: entry %u is {%u, %u}, expected {%u, %u}", at, log->e[at].kid,
                      log->e[at].a, k, it);
        }
    }
    CK(cuEventDestroy_v2(ev));
    free(go);
    return have;
}

#define P3_LEN 16
#define P3_SYNCED 7 /* iterations 0, 1 learn (MIN_REPEATS=2); 1-6 are the probe's */
#define P3_LAG 3    /* a gate opens this many iterations later */

static void p3(CUstream s, hx_log *log, long n, long w, int p1)
{
    CUfunction K[P3_LEN];
    char name[16];
    for (int i = 1; i < P3_LEN; i++) {
        snprintf(name, sizeof name, "q_k%d", i);
        K[i] = hx_kernel_rec(name);
    }
    uint32_t *go = calloc((size_t)n, sizeof *go);
    HX_ASSERT(go, "calloc");
    CUevent ev;
    CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    uint32_t have = 0;
    for (long it = 0; it < n; it++) {
        int synced = p1 || it < P3_SYNCED;
        if (synced)
            open_gate(&go[it]);
        else if (it - P3_LAG >= P3_SYNCED)
            open_gate(&go[it - P3_LAG]);
        gate(s, &go[it]);
        for (int i = 1; i < P3_LEN; i++) {
            host_work(w);
            hx_rec(K[i], s, log, (uint32_t)i, (uint32_t)it);
        }
        have += P3_LEN - 1;
        if (synced)
            CK(cuStreamSynchronize(s));
        else
            CK(cuEventRecord(ev, s)); /* an ordering point that does not wait: ends the
                                       * iteration's segment, as a sync would */
    }
    for (long it = 0; it < n; it++)
        open_gate(&go[it]);
    CK(cuStreamSynchronize(s));
    HX_ASSERT(log->n == have, "queue p3: the log holds %u entries, expected %u", log->n, have);
    for (uint32_t at = 0; at < have; at++) {
        uint32_t it = at / (P3_LEN - 1), k = at % (P3_LEN - 1) + 1;
        HX_ASSERT(log->e[at].kid == k && log->e[at].a == it,
                  "queue p3: entry %u is {%u, %u}, expected {%u, %u}", at, log->e[at].kid,
                  log->e[at].a, k, it);
    }
    CK(cuEventDestroy_v2(ev));
    free(go);
}

/* The step loops below (diverge, variants, cycle): each launch logs {kid, step} and is expected
 * so; a step ends with a stream sync, after which the log must hold exactly the steps so far. */
typedef struct step {
    CUstream s;
    hx_log *log;
    hx_entry exp[72];
    uint32_t m, have;
} step;

static void kernels(CUfunction *K, int n, const char *prefix)
{
    char name[16];
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "%s%d", prefix, i);
        K[i] = hx_kernel_rec(name);
    }
}

static void put(step *S, CUfunction f, uint32_t kid, long it)
{
    hx_rec(f, S->s, S->log, kid, (uint32_t)it);
    S->exp[S->m++] = (hx_entry){ kid, (uint32_t)it, 0 };
}

/* A cooperative launch whose grid (part of its shape) is new at every step: never a sequence. */
static void put_new_grid(step *S, CUfunction X, long it)
{
    uint32_t kid = 99, val = (uint32_t)it;
    void *p[] = { &S->log, &kid, &val };
    CK(cuLaunchCooperativeKernel(X, (unsigned)(it % 60000) + 1, 1, 1, 1, 1, 1, 0, S->s, p));
    S->exp[S->m++] = (hx_entry){ 99, val, 0 };
}

static void step_end(step *S, const char *what, long it)
{
    CK(cuStreamSynchronize(S->s));
    hx_log_expect(S->log, S->have, S->exp, S->m, what, it);
    S->have += S->m;
    S->m = 0;
}

static void diverge(CUstream s, hx_log *log, long n)
{
    CUfunction K[8], X = hx_kernel_rec("q_x");
    kernels(K, 8, "q_d");
    step S = { .s = s, .log = log };
    for (long it = 0; it < n; it++) {
        for (uint32_t pos = 0; pos < 8; pos++) {
            if (pos == 5 && it % 4 != 0)
                put_new_grid(&S, X, it);
            put(&S, K[pos], pos, it);
        }
        step_end(&S, "queue diverge", it);
    }
}

static void variants(CUstream s, hx_log *log, long n)
{
    CUfunction K[8], V = hx_kernel_rec("q_v"), X = hx_kernel_rec("q_px");
    kernels(K, 8, "q_s");
    step S = { .s = s, .log = log };
    for (long it = 0; it < n; it++) {
        int prefill = it % 5 == 4, variant = (int)(it % 5) % 2;
        for (uint32_t pos = 0; pos < 8; pos++) {
            if (pos == 1 && prefill)
                put_new_grid(&S, X, it);
            else if (pos == 5 && variant)
                put(&S, V, 50, it);
            else
                put(&S, K[pos], pos, it);
        }
        step_end(&S, "queue variants", it);
    }
}

static void align(CUstream s, hx_log *log, long n)
{
    CUfunction K[16], V[4];
    kernels(K, 16, "q_a");
    kernels(V, 4, "q_av");
    step S = { .s = s, .log = log };
    for (long it = 0; it < n; it++) {
        for (uint32_t pos = 0; pos < 16; pos++) {
            if (pos == 14)
                put(&S, V[it % 4], 60 + (uint32_t)(it % 4), it);
            else
                put(&S, K[pos], pos, it);
        }
        step_end(&S, "queue align", it);
    }
}

static void cycle(CUstream s, hx_log *log, long n, long w)
{
    CUfunction K[5];
    kernels(K, 5, "q_c");
    step S = { .s = s, .log = log };
    for (long it = 0; it < n; it++) {
        for (uint32_t j = 0; j < 64; j++) {
            if (j == 32 && (it + 1) % 7 == 0)
                put(&S, K[4], 4, it);
            put(&S, K[j % 4], j % 4, it);
            host_work(w);
        }
        step_end(&S, "queue cycle", it);
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "gpubound";
    long n = hx_arg(argc, argv, 2, 200), m = hx_arg(argc, argv, 3, 0);
    hx_init();
    static const size_t sz_gate[] = { 8 };
    g_gate = fakecuda_kernel("q_gate", k_gate, 1, sz_gate);
    HX_ASSERT(g_gate, "cannot register the gate kernel");
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_log *log = hx_log_new((uint32_t)((n + m) * 70 + 64));
    if (!strcmp(mode, "gpubound")) {
        ab_loop(s, log, 0, n, 1, 0);
    } else if (!strcmp(mode, "hostbound")) {
        ab_loop(s, log, 0, n, 0, 0);
    } else if (!strcmp(mode, "phase")) {
        uint32_t have = ab_loop(s, log, 0, n, 1, 0);
        ab_loop(s, log, have, m, 0, n);
    } else if (!strcmp(mode, "p3") || !strcmp(mode, "p1")) {
        p3(s, log, n, m, !strcmp(mode, "p1"));
    } else if (!strcmp(mode, "diverge")) {
        diverge(s, log, n);
    } else if (!strcmp(mode, "variants")) {
        variants(s, log, n);
    } else if (!strcmp(mode, "align")) {
        align(s, log, n);
    } else if (!strcmp(mode, "cycle")) {
        cycle(s, log, n, m);

    } else {
        HX_ASSERT(0, "unknown mode %s", mode);
    }
    CK(cuStreamDestroy_v2(s));
    char pass[32];
    snprintf(pass, sizeof pass, "queue %s", mode);
    hx_pass(pass);
    return 0;
}
