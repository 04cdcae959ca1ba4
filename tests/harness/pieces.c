/* Pipelined replay (a template cut into pieces, each launched as its own graph as soon as its
 * launches are held): scenarios that fail when pieces go out late, twice, out of order, or not
 * at all. A loop of LEN distinct kernels on one stream, every argument changing every iteration
 * (so every piece's exec is updated), then a synchronisation and an exact check of the log.
 *
 * With AUTOGRAPH_PIECE=N set, the program also checks pipelining itself: at the end of every
 * piece (every N launches, and the last launch) it waits, making no CUDA call, until the
 * launches so far have run -- which they do only if that piece went to the GPU then. The wait
 * fails after 5 s, well before the hold watchdog the tests set (10 s) could release them.
 *
 * Modes (each also checks the exact log of every iteration):
 *   loop     the plain loop.
 *   diverge  every 4th iteration (from the 3rd) launches another kernel at position 1.5 N
 *            (inside the second piece) instead of the usual one; each such iteration uses its
 *            own kernel, so that no template forms for it and the hold must break off.
 *   order    some iterations hit an ordering point at a different position each (inside a
 *            piece or at its end): event record + event synchronize, stream query until
 *            done, or a synchronous copy; when it returns, exactly the launches before it
 *            have run.
 *   thread   some iterations stop at a different position each while another thread calls
 *            cuCtxSynchronize (odd) or cuMemFree (even), which must flush this stream's held
 *            launches; the two threads take turns on a condition variable.
 *   threadptds  the same on the thread's per-thread default stream (cuLaunchKernel_ptsz):
 *            another thread cannot issue there, so the held launches go to a side stream,
 *            which must wait for the pieces already launched -- with a slow fake GPU
 *            (FAKECUDA_DELAY_US) and no piece-end waits (first > iterations), a side stream
 *            ordered only after the occurrence's start runs them too early.
 *   watch    some iterations pause at a different position each inside a piece, with no CUDA
 *            call, until the launches so far have run (the hold watchdog,
 *            AUTOGRAPH_MAX_HOLD_US, must release them; fails after 30 s).
 *   elapsed  the fake driver's cuEventElapsedTime: errors and a plausible value.
 *
 * HX_SETTLE=1: more iterations, until the worker's graphs are in use (harness.h).
 *
 * Usage: pieces MODE [iterations=40] [len=15] [first=2] [keep=0]
 * first: the first iteration whose piece ends are checked (the 3rd is the first held one);
 * keep=1: the stream is not destroyed (its sequences are in the stats report at exit). */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define MAXLEN 64

static hx_log *g_log;
static uint32_t g_piece; /* AUTOGRAPH_PIECE, 0: unknown */

/* Waits, with no CUDA call, until the log holds `n` entries; fails after `secs`. */
static void wait_log(uint32_t n, double secs, const char *why, long it, uint32_t pos)
{
    double limit = hx_now() + secs;
    while (__atomic_load_n(&g_log->n, __ATOMIC_ACQUIRE) < n) {
        HX_ASSERT(hx_now() < limit, "pieces, iteration %ld, after launch %u: %s (the log holds "
                  "%u entries after %.0f s, expected %u)", it, pos, why,
                  __atomic_load_n(&g_log->n, __ATOMIC_ACQUIRE), secs, n);
        sched_yield();
    }
}

/* Whether a piece ends after `n` launches of `len`: every g_piece launches, at most 16
 * pieces (AG_MAX_PIECES: the last one takes the rest). */
static int piece_end(uint32_t n, uint32_t len)
{
    return n == len || (n % g_piece == 0 && n / g_piece < 16);
}

/* Exactly n entries now (the launches before an ordering point, nothing after). */
static void expect_count(uint32_t n, const char *what, long it, uint32_t pos)
{
    uint32_t have = __atomic_load_n(&g_log->n, __ATOMIC_ACQUIRE);
    HX_ASSERT(have == n, "pieces, iteration %ld: after %s at launch %u the log holds %u "
              "entries, expected %u", it, what, pos, have, n);
}

/* ---- thread mode: thread B flushes while thread A is in mid-sequence ---------------------- */

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_turn;          /* 0: A runs; 1: B should act; 2: B has acted; 3: B exits */
static int g_b_how;         /* 0: cuMemFree, 1: cuCtxSynchronize */
static uint32_t g_b_expect; /* log entries that must have run once B's call returned */
static CUcontext g_ctx;

static void *thread_b(void *arg)
{
    (void)arg;
    CK(cuCtxSetCurrent(g_ctx));
    pthread_mutex_lock(&g_mu);
    for (;;) {
        while (g_turn != 1 && g_turn != 3)
            pthread_cond_wait(&g_cv, &g_mu);
        if (g_turn == 3)
            break;
        pthread_mutex_unlock(&g_mu);
        if (g_b_how) {
            CK(cuCtxSynchronize()); /* waits for all work issued before it: exact count */
            uint32_t have = __atomic_load_n(&g_log->n, __ATOMIC_ACQUIRE);
            HX_ASSERT(have == g_b_expect, "pieces thread: after another thread's "
                      "cuCtxSynchronize the log holds %u entries, expected %u", have,
                      g_b_expect);
        } else {
            CUdeviceptr d;
            CK(cuMemAlloc_v2(&d, 64));
            CK(cuMemFree_v2(d)); /* class ALL: flushes every stream */
            wait_log(g_b_expect, 5.0, "held launches not flushed by another thread's cuMemFree",
                     -1, 0);
        }
        pthread_mutex_lock(&g_mu);
        g_turn = 2;
        pthread_cond_broadcast(&g_cv);
    }
    pthread_mutex_unlock(&g_mu);
    return NULL;
}

static void b_act(int how, uint32_t expect)
{
    pthread_mutex_lock(&g_mu);
    g_b_how = how;
    g_b_expect = expect;
    g_turn = 1;
    pthread_cond_broadcast(&g_cv);
    while (g_turn != 2)
        pthread_cond_wait(&g_cv, &g_mu);
    g_turn = 0;
    pthread_mutex_unlock(&g_mu);
}

/* ---- elapsed mode: the fake's cuEventElapsedTime ------------------------------------------ */

typedef struct { uint32_t *go; } p_gate;
static void k_gate(const void *pp, const unsigned g[3], const unsigned b[3])
{
    (void)g;
    (void)b;
    const p_gate *p = pp;
    while (!__atomic_load_n(p->go, __ATOMIC_ACQUIRE))
        sched_yield();
}

typedef struct { uint32_t us; } p_busy;
static void k_busy(const void *pp, const unsigned g[3], const unsigned b[3])
{
    (void)g;
    (void)b;
    const p_busy *p = pp;
    double end = hx_now() + p->us / 1e6;
    while (hx_now() < end)
        ;
}

static int elapsed(void)
{
    static const size_t sz_gate[] = { 8 }, sz_busy[] = { 4 };
    CUfunction G = fakecuda_kernel("pc_gate", k_gate, 1, sz_gate);
    CUfunction B = fakecuda_kernel("pc_busy", k_busy, 1, sz_busy);
    HX_ASSERT(G && B, "cannot register kernels");
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUevent a, b, never, notime;
    CK(cuEventCreate(&a, CU_EVENT_DEFAULT));
    CK(cuEventCreate(&b, CU_EVENT_DEFAULT));
    CK(cuEventCreate(&never, CU_EVENT_DEFAULT));
    CK(cuEventCreate(&notime, CU_EVENT_DISABLE_TIMING));
    float ms = -1;
    HX_ASSERT(cuEventElapsedTime_v2(&ms, a, b) == CUDA_ERROR_INVALID_HANDLE,
              "elapsed time of events never recorded: not INVALID_HANDLE");
    HX_ASSERT(cuEventElapsedTime_v2(NULL, a, b) == CUDA_ERROR_INVALID_VALUE,
              "elapsed time into NULL: not INVALID_VALUE");
    uint32_t *go = (uint32_t *)hx_dev_u64(1, 0);
    void *pg[] = { &go };
    CK(cuEventRecord(a, s));
    CK(cuEventRecord(notime, s));
    CK(cuLaunchKernel(G, 1, 1, 1, 1, 1, 1, 0, s, pg, NULL)); /* holds the stream until go */
    uint32_t us = 20000;
    void *pb[] = { &us };
    CK(cuLaunchKernel(B, 1, 1, 1, 1, 1, 1, 0, s, pb, NULL));
    CK(cuEventRecord(b, s));
    HX_ASSERT(cuEventElapsedTime_v2(&ms, a, b) == CUDA_ERROR_NOT_READY,
              "elapsed time to an event not yet complete: not NOT_READY");
    HX_ASSERT(cuEventElapsedTime_v2(&ms, a, never) == CUDA_ERROR_INVALID_HANDLE,
              "elapsed time to an event never recorded: not INVALID_HANDLE");
    __atomic_store_n(go, 1, __ATOMIC_RELEASE);
    CK(cuEventSynchronize(b));
    HX_ASSERT(cuEventElapsedTime_v2(&ms, a, notime) == CUDA_ERROR_INVALID_HANDLE,
              "elapsed time to a CU_EVENT_DISABLE_TIMING event: not INVALID_HANDLE");
    ms = -1;
    CK(cuEventElapsedTime_v2(&ms, a, b));
    HX_ASSERT(ms >= 19.0f && ms < 10000.0f, "elapsed time across a 20 ms kernel: %f ms", ms);
    float back = 0;
    CK(cuEventElapsedTime_v2(&back, b, a));
    HX_ASSERT(back == -ms, "elapsed time backwards: %f, forwards %f", back, ms);
    /* the symbol before 12.8, and cuGetProcAddress's answer */
    void *fn = NULL;
    CUdriverProcAddressQueryResult q;
    CK(cuGetProcAddress_v2("cuEventElapsedTime", &fn, 12080, 0, &q));
    HX_ASSERT(fn, "cuGetProcAddress(cuEventElapsedTime): NULL");
    float ms2 = 0;
    CK(((CUresult(*)(float *, CUevent, CUevent))fn)(&ms2, a, b));
    HX_ASSERT(ms2 == ms, "cuEventElapsedTime through cuGetProcAddress: %f, expected %f", ms2, ms);
    CK(((CUresult(*)(float *, CUevent, CUevent))hx_driver_sym("cuEventElapsedTime"))(&ms2, a, b));
    HX_ASSERT(ms2 == ms, "cuEventElapsedTime (v1): %f, expected %f", ms2, ms);
    /* a record may be replaced or its event destroyed while it is pending */
    __atomic_store_n(go, 0, __ATOMIC_RELEASE);
    CK(cuLaunchKernel(G, 1, 1, 1, 1, 1, 1, 0, s, pg, NULL));
    CK(cuEventRecord(a, s));
    CK(cuEventRecord(a, s));
    CK(cuEventRecord(never, s));
    CK(cuEventDestroy_v2(never));
    __atomic_store_n(go, 1, __ATOMIC_RELEASE);
    CK(cuStreamSynchronize(s));
    CK(cuEventElapsedTime_v2(&ms, b, a));
    HX_ASSERT(ms > 0, "elapsed time to a later record: %f", ms);
    CK(cuEventDestroy_v2(a));
    CK(cuEventDestroy_v2(b));
    CK(cuEventDestroy_v2(notime));
    CK(cuStreamDestroy_v2(s));
    hx_pass("pieces elapsed");
    return 0;
}

/* ---- the loop ------------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "loop";
    long iters = hx_arg(argc, argv, 2, 40);
    uint32_t len = (uint32_t)hx_arg(argc, argv, 3, 15);
    long first = hx_arg(argc, argv, 4, 2);
    HX_ASSERT(len >= 4 && len <= MAXLEN, "len must be 4..%d", MAXLEN);
    g_ctx = hx_init();
    if (!strcmp(mode, "elapsed"))
        return elapsed();
    int diverge = !strcmp(mode, "diverge"), order = !strcmp(mode, "order"),
        thread = !strcmp(mode, "thread"), watch = !strcmp(mode, "watch"),
        ptds = !strcmp(mode, "threadptds");
    thread |= ptds;
    HX_ASSERT(diverge || order || thread || watch || !strcmp(mode, "loop"), "unknown mode %s",
              mode);
    const char *pe = getenv("AUTOGRAPH_PIECE");
    g_piece = pe ? (uint32_t)strtoul(pe, NULL, 10) : 0;
    uint32_t np = g_piece ? g_piece : 3; /* where the scenarios put their events */

    char name[32];
    CUfunction K[MAXLEN], X[64];
    for (uint32_t i = 0; i < len; i++) {
        snprintf(name, sizeof name, "pc_k%u", i);
        K[i] = hx_kernel_rec(name);
    }
    for (uint32_t i = 0; i < 64; i++) {
        snprintf(name, sizeof name, "pc_x%u", i);
        X[i] = hx_kernel_rec(name);
    }
    CUstream s = NULL; /* ptds: the per-thread default stream */
    if (!ptds)
        CK(cuStreamCreate(&s, 0));
    hx_settle settle;
    g_log = hx_log_new((uint32_t)(hx_settle_init(&settle, iters) * (len + 1) + 16));
    uint64_t *dev = hx_dev_u64(1, 7);
    CUevent ev;
    CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    pthread_t tb;
    if (thread)
        HX_ASSERT(!pthread_create(&tb, NULL, thread_b, NULL), "pthread_create");

    uint32_t have = 0, nx = 0, nevent = 0;
    for (long it = 0; hx_settle_more(&settle, it, iters); it++) {
        hx_entry exp[MAXLEN];
        /* the position of this iteration's event, or -1: from the 3rd iteration (the
         * template exists then) every 3rd, each at another position, so that no prefix cut
         * there repeats and becomes a template of its own */
        int at = -1;
        if ((order || thread || watch) && it >= 3 && it % 3 == 0 && nevent < len - 1)
            at = (int)((nevent++ * 5 + 1) % (len - 1)); /* 1, 6, 11, 2, 7, ...: all of 0..len-2 */
        int dpos = -1;
        if (diverge && it >= 3 && it % 4 == 3 && nx < 64)
            dpos = (int)(np + np / 2 < len - 1 ? np + np / 2 : len - 2);
        for (uint32_t pos = 0; pos < len; pos++) {
            uint32_t val = (uint32_t)it * 1000 + pos;
            if ((int)pos == dpos) {
                hx_rec(X[nx++], s, g_log, 100 + pos, val);
                exp[pos] = (hx_entry){ 100 + pos, val, 0 };
            } else {
                (ptds ? hx_rec_ptsz : hx_rec)(K[pos], s, g_log, pos, val);
                exp[pos] = (hx_entry){ pos, val, 0 };
            }
            uint32_t upto = have + pos + 1; /* log entries once this launch has run */
            if ((int)pos == at && order) {
                switch (nevent % 3) {
                case 0:
                    CK(cuEventRecord(ev, s));
                    CK(cuEventSynchronize(ev));
                    expect_count(upto, "an event record and synchronize", it, pos);
                    break;
                case 1: {
                    double limit = hx_now() + 30.0;
                    CUresult r;
                    while ((r = cuStreamQuery(s)) == CUDA_ERROR_NOT_READY) {
                        HX_ASSERT(hx_now() < limit, "pieces, iteration %ld: the stream was "
                                  "not done after 30 s of cuStreamQuery", it);
                        sched_yield();
                    }
                    CK(r);
                    expect_count(upto, "cuStreamQuery returning CUDA_SUCCESS", it, pos);
                    break;
                }
                default: {
                    uint64_t v = 0;
                    CK(cuMemcpyDtoH_v2(&v, (CUdeviceptr)(uintptr_t)dev, sizeof v));
                    HX_ASSERT(v == 7, "copied %llu", (unsigned long long)v);
                    expect_count(upto, "a synchronous copy", it, pos);
                }
                }
            } else if ((int)pos == at && thread) {
                b_act(nevent % 2, upto);
            } else if ((int)pos == at && watch) {
                wait_log(upto, 30.0, "held launches not released by the hold watchdog", it,
                         pos);
            } else if (g_piece && it >= first && piece_end(pos + 1, len) &&
                       (dpos < 0 || (int)pos < dpos)) {
                /* a piece ends here: it must be on its way to the GPU now */
                wait_log(upto, 5.0, "a complete piece was not launched", it, pos);
            }
        }
        CK(cuStreamSynchronize(ptds ? CU_STREAM_PER_THREAD : s));
        hx_log_expect(g_log, have, exp, len, "pieces", it);
        hx_settle_done(&settle, len);
        have += len;
    }
    if (thread) {
        pthread_mutex_lock(&g_mu);
        g_turn = 3;
        pthread_cond_broadcast(&g_cv);
        pthread_mutex_unlock(&g_mu);
        pthread_join(tb, NULL);
    }
    printf("pieces: events %u divergences %u\n", nevent, nx);
    CK(cuEventDestroy_v2(ev));
    if (!ptds && !hx_arg(argc, argv, 5, 0))
        CK(cuStreamDestroy_v2(s));
    char pass[32];
    snprintf(pass, sizeof pass, "pieces %s", mode);
    hx_pass(pass);
    return 0;
}
