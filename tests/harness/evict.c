/* Scenario: eviction across streams. Two streams, A and B, each run a loop of LEN launches of
 * their own kernels (the first and last launch's argument changes every iteration) and log
 * what ran in their own log. Run with AUTOGRAPH_MAX_GRAPHS=1, or a MAX_GRAPH_MEM that holds
 * one loop's graph but not two: a stream gets a graph only by evicting the other stream's.
 *
 *   phases   one thread: A alone, B alone, A alone, B alone (ITERS iterations each)
 *   midway   one thread, every iteration: A's first half, B's whole loop, A's second half.
 *            With AUTOGRAPH_PIECE=2, A's first pieces have gone out as graphs when B's build
 *            evicts A's template, in the middle of A's occurrence; A's next piece is built
 *            again from its held launches.
 *   threads  A and B on two threads: A alone, B alone, then both at once (a barrier between
 *            phases; the main thread counts)
 *   churn    A and B on two threads at once; A's stream is destroyed (its templates freed)
 *            and created again ten times meanwhile
 *
 * After every iteration (a synchronisation of the stream) its log must hold exactly that
 * iteration's launches, in order. After each phase the program prints
 * "evict: phase P S graph_kernels N": kernels run as graph nodes in the phase (S: A, B, or AB
 * when both ran). midway also prints "evict: midway rebuilt R of I": the iterations in which
 * A's first half went out as graphs and its second half had to instantiate a graph again.
 *
 * Usage: evict phases|midway|threads|churn [iterations=200] [len=8] */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

typedef struct lane {
    const char *name;
    CUstream s;
    CUfunction k[4];
    hx_log *log;
    uint32_t base, len, nexp;
    hx_entry *exp;
} lane;

static lane g_a, g_b;
static CUcontext g_ctx;
static long g_iters;

static void lane_init(lane *L, const char *name, uint32_t base, uint32_t len)
{
    char kn[32];
    L->name = name;
    L->base = base;
    L->len = len;
    for (int i = 0; i < 4; i++) {
        snprintf(kn, sizeof kn, "evict_%s%d", name, i);
        L->k[i] = hx_kernel_rec(kn);
    }
    CK(cuStreamCreate(&L->s, 0));
    L->log = hx_log_new(len + 8);
    if (!(L->exp = calloc(len, sizeof *L->exp)))
        hx_fail("out of memory");
}

/* Launches [from, to) of iteration it. */
static void run(lane *L, long it, uint32_t from, uint32_t to)
{
    for (uint32_t i = from; i < to; i++) {
        uint32_t kid = L->base + i, val = i == 0 || i == L->len - 1 ? (uint32_t)it : i;
        hx_rec(L->k[i % 4], L->s, L->log, kid, val);
        L->exp[L->nexp++] = (hx_entry){ kid, val, 0 };
    }
}

/* The iteration is complete: synchronise, check, and empty the log for the next. */
static void finish(lane *L, long it)
{
    CK(cuStreamSynchronize(L->s));
    hx_log_expect(L->log, 0, L->exp, L->nexp, L->name, it);
    __atomic_store_n(&L->log->n, 0, __ATOMIC_RELEASE);
    L->nexp = 0;
}

static void loop(lane *L, long iters)
{
    for (long it = 0; it < iters; it++) {
        run(L, it, 0, L->len);
        finish(L, it);
    }
}

static struct fakecuda_counters counters(void)
{
    struct fakecuda_counters c;
    fakecuda_counters(&c);
    return c;
}

static void report(int phase, const char *who, uint64_t before)
{
    printf("evict: phase %d %s graph_kernels %llu\n", phase, who,
           (unsigned long long)(counters().graph_kernels_executed - before));
    fflush(stdout);
}

static void phases(void)
{
    for (int p = 0; p < 4; p++) {
        lane *L = p % 2 ? &g_b : &g_a;
        uint64_t g0 = counters().graph_kernels_executed;
        loop(L, g_iters);
        report(p, L->name, g0);
    }
}

static void midway(void)
{
    uint32_t half = g_a.len / 2;
    long rebuilt = 0;
    uint64_t g0 = counters().graph_kernels_executed;
    for (long it = 0; it < g_iters; it++) {
        struct fakecuda_counters c0 = counters();
        run(&g_a, it, 0, half);
        struct fakecuda_counters c1 = counters();
        run(&g_b, it, 0, g_b.len);
        struct fakecuda_counters c2 = counters();
        run(&g_a, it, half, g_a.len);
        struct fakecuda_counters c3 = counters();
        rebuilt += c1.graph_launches > c0.graph_launches && c3.instantiations > c2.instantiations;
        finish(&g_a, it);
        finish(&g_b, it);
    }
    report(0, "AB", g0);
    printf("evict: midway rebuilt %ld of %ld\n", rebuilt, g_iters);
}

/* threads: phase p runs A (0), B (1) or both (2). */
#define NPHASES 3
static pthread_barrier_t g_bar;

static void *worker(void *arg)
{
    lane *L = arg;
    CK(cuCtxSetCurrent(g_ctx));
    for (int p = 0; p < NPHASES; p++) {
        pthread_barrier_wait(&g_bar);
        if (p == 2 || (p == 1) == (L == &g_b))
            loop(L, g_iters);
        pthread_barrier_wait(&g_bar);
    }
    return NULL;
}

static void threads(void)
{
    static const char *who[NPHASES] = { "A", "B", "AB" };
    pthread_t th[2];
    if (pthread_barrier_init(&g_bar, NULL, 3) || pthread_create(&th[0], NULL, worker, &g_a) ||
        pthread_create(&th[1], NULL, worker, &g_b))
        hx_fail("thread setup failed");
    for (int p = 0; p < NPHASES; p++) {
        uint64_t g0 = counters().graph_kernels_executed;
        pthread_barrier_wait(&g_bar);
        pthread_barrier_wait(&g_bar);
        report(p, who[p], g0);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&g_bar);
}

/* churn: A's stream is destroyed and created again every tenth of the run (its templates
 * freed, off the list of built graphs) while B's thread builds, replays and evicts. */
static void *churn_a(void *arg)
{
    (void)arg;
    CK(cuCtxSetCurrent(g_ctx));
    for (int r = 0; r < 10; r++) {
        loop(&g_a, g_iters / 10 + 2);
        CK(cuStreamDestroy_v2(g_a.s));
        CK(cuStreamCreate(&g_a.s, 0));
    }
    return NULL;
}

static void *churn_b(void *arg)
{
    (void)arg;
    CK(cuCtxSetCurrent(g_ctx));
    loop(&g_b, g_iters);
    return NULL;
}

static void churn(void)
{
    pthread_t th[2];
    uint64_t g0 = counters().graph_kernels_executed;
    if (pthread_create(&th[0], NULL, churn_a, NULL) || pthread_create(&th[1], NULL, churn_b, NULL))
        hx_fail("thread setup failed");
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    report(0, "AB", g0);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "phases";
    g_iters = hx_arg(argc, argv, 2, 200);
    long len = hx_arg(argc, argv, 3, 8);
    if (len < 2 || len > 4096)
        hx_fail("len %ld out of range", len);
    g_ctx = hx_init();
    lane_init(&g_a, "A", 1000, (uint32_t)len);
    lane_init(&g_b, "B", 9000, (uint32_t)len);
    if (!strcmp(mode, "phases"))
        phases();
    else if (!strcmp(mode, "midway"))
        midway();
    else if (!strcmp(mode, "threads"))
        threads();
    else if (!strcmp(mode, "churn"))
        churn();
    else
        hx_fail("unknown mode %s", mode);
    CK(cuStreamDestroy_v2(g_a.s));
    CK(cuStreamDestroy_v2(g_b.s));
    hx_pass("evict");
    return 0;
}
