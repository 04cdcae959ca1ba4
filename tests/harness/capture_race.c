/* Rule: the capture is re-checked under the stream lock (engine.c, launch_learning's idle
 * path). A launch looks at "does the application capture?" first thing, then takes its
 * stream's lock; an application capture that begins in between flushes every stream first --
 * but this one's lock was free then, so the flush found nothing, and the launch, once it has
 * the lock, must see the capture and hold nothing: while the application captures, nothing may
 * be held (a held launch would wait for the watchdog, or be issued in the middle of the
 * capture).
 *
 * The race is made deterministic with the fake driver's call hook: the main thread (A) learns
 * a sequence K0 K1 K2 on the legacy stream, then launches K0 -- a template's start -- with the
 * hook set to stop it in its next cuCtxGetCurrent, which libautograph calls to find the legacy
 * stream's state: after the capture check, before the stream's lock. There, thread B begins a
 * capture on its own stream and launches into it; then A goes on. K0 must then run with no
 * further CUDA call from A (a held K0 would wait for the watchdog, 10 s in the tests; A gives
 * up after 5 s) -- while B's capture is still open. Then B ends its capture and launches the
 * graph; A launches K1 K2; both logs are checked.
 *
 * Usage: capture_race [rounds=3] */
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "harness.h"

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_phase;             /* 1: A stopped in the driver; 2: B captures; 3: A checked K0 */
static __thread int t_stop_next; /* this thread stops in its next cuCtxGetCurrent */
static CUcontext g_ctx;
static CUfunction g_cap;

static void set_phase(int p)
{
    pthread_mutex_lock(&g_mu);
    g_phase = p;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_mu);
}

static void wait_phase(int p)
{
    pthread_mutex_lock(&g_mu);
    while (g_phase < p)
        pthread_cond_wait(&g_cv, &g_mu);
    pthread_mutex_unlock(&g_mu);
}

static void hook(const char *name)
{
    if (!t_stop_next || strcmp(name, "cuCtxGetCurrent"))
        return;
    t_stop_next = 0;
    set_phase(1);
    wait_phase(2); /* B's capture has begun */
}

typedef struct {
    long round;
    hx_log *log;
} b_arg;

static void *capturer(void *arg)
{
    b_arg *a = arg;
    CK(cuCtxSetCurrent(g_ctx));
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    wait_phase(1);
    CUgraph g;
    CUgraphExec ge;
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    hx_rec(g_cap, s, a->log, 20, (uint32_t)a->round);
    set_phase(2);
    wait_phase(3); /* A has seen K0 run, or given up: only then does the capture end */
    CK(cuStreamEndCapture(s, &g));
    CK(cuGraphInstantiateWithFlags(&ge, g, 0));
    CK(cuGraphLaunch(ge, s));
    CK(cuStreamSynchronize(s));
    hx_entry exp = { 20, (uint32_t)a->round, 0 };
    hx_log_expect(a->log, (uint32_t)a->round, &exp, 1, "capture_race capture", a->round);
    CK(cuGraphExecDestroy(ge));
    CK(cuGraphDestroy(g));
    CK(cuStreamDestroy_v2(s));
    return NULL;
}

int main(int argc, char **argv)
{
    long rounds = hx_arg(argc, argv, 1, 3);
    g_ctx = hx_init();
    CUfunction K[3] = { hx_kernel_rec("cr_k0"), hx_kernel_rec("cr_k1"), hx_kernel_rec("cr_k2") };
    g_cap = hx_kernel_rec("cr_captured");
    hx_log *log = hx_log_new((uint32_t)(3 * (4 + rounds) + 8));
    hx_log *clog = hx_log_new((uint32_t)rounds + 8);
    fakecuda_set_call_hook(hook);
    uint32_t have = 0;
    hx_entry exp[3];
    for (uint32_t k = 0; k < 3; k++)
        exp[k] = (hx_entry){ k, 0, 0 };
    /* the legacy stream learns K0 K1 K2 */
    for (int it = 0; it < 4; it++, have += 3) {
        for (uint32_t k = 0; k < 3; k++)
            hx_rec(K[k], NULL, log, k, 0);
        CK(cuStreamSynchronize(NULL));
        hx_log_expect(log, have, exp, 3, "capture_race teach", it);
    }
    for (long r = 0; r < rounds; r++, have += 3) {
        pthread_mutex_lock(&g_mu);
        g_phase = 0;
        pthread_mutex_unlock(&g_mu);
        b_arg a = { r, clog };
        pthread_t b;
        HX_ASSERT(pthread_create(&b, NULL, capturer, &a) == 0, "pthread_create");
        t_stop_next = 1;
        hx_rec(K[0], NULL, log, 0, 0); /* stops in the driver until B captures */
        HX_ASSERT(!t_stop_next, "round %ld: the launch made no cuCtxGetCurrent call", r);
        /* B still captures: K0 must not be held (no CUDA call until it has run) */
        double limit = hx_now() + 5.0;
        int ran = 1;
        while (__atomic_load_n(&log->n, __ATOMIC_ACQUIRE) < have + 1)
            if (hx_now() > limit) {
                ran = 0;
                break;
            }
            else
                sched_yield();
        set_phase(3);
        pthread_join(b, NULL);
        HX_ASSERT(ran, "round %ld: K0, launched while another thread's capture began, was "
                  "held during the capture (not run within 5 s)", r);
        for (uint32_t k = 1; k < 3; k++)
            hx_rec(K[k], NULL, log, k, 0);
        CK(cuStreamSynchronize(NULL));
        hx_log_expect(log, have, exp, 3, "capture_race", r);
    }
    fakecuda_set_call_hook(NULL);
    hx_pass("capture_race");
    return 0;
}
