/* Scenario m2: as phases.c, but two threads share the one stream and take turns (a mutex and a
 * turn counter order them, as an application's own locking would): in each turn a thread
 * makes a few launches -- never-repeating ones, or its part of the loop -- and sometimes a
 * synchronisation. So one thread may still carry rest tokens (engine.c) for the stream when
 * the other has woken it up and begins holding: the tokens must be void by then, or a launch
 * would overtake what is held. After every synchronisation the log must hold exactly the
 * launches so far, in order.
 *
 * Usage: phases_mt [irregular turns=12000] [loop turns=12000] */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static long g_turn, g_nirr, g_nloop;
static CUfunction g_K[8];
static CUstream g_s;
static CUcontext g_ctx;
static hx_log *g_log;
static hx_entry g_exp[4096];
static uint32_t g_nexp, g_have;

static uint32_t below(uint64_t *r, uint32_t n)
{
    *r ^= *r << 13;
    *r ^= *r >> 7;
    *r ^= *r << 17;
    return (uint32_t)(*r % n);
}

static void sync_and_check(long at)
{
    CK(cuStreamSynchronize(g_s));
    hx_log_expect(g_log, g_have, g_exp, g_nexp, "phases_mt", at);
    g_have += g_nexp;
    g_nexp = 0;
}

/* Turn t: the turns go irregular (g_nirr), loop (g_nloop), irregular, loop. */
static void turn(long t, uint64_t *r)
{
    long in = t % (g_nirr + g_nloop);
    if (in < g_nirr) {
        uint32_t n = 1 + below(r, 6);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t k = below(r, 8), gx = 1 + below(r, 16), val = below(r, 1u << 30);
            void *p[] = { &g_log, &k, &val };
            /* launch dimensions are values, not part of a shape: an attribute value (in the
             * shape) makes the launches differ */
            CUlaunchAttribute at;
            memset(&at, 0, sizeof at);
            at.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
            at.value.priority = (int)gx;
            CUlaunchConfig cfg = { gx, 1, 1, 32, 1, 1, 0, g_s, &at, 1 };
            CK(cuLaunchKernelEx(&cfg, g_K[k], p, NULL));
            g_exp[g_nexp++] = (hx_entry){ k, val, 0 };
        }
        if (below(r, 3) == 0 || g_nexp > 3000)
            sync_and_check(t);
    } else {
        /* the loop: 8 launches per iteration, 4 in each of two consecutive turns */
        uint32_t half = (uint32_t)(in & 1), it = (uint32_t)(in / 2);
        for (uint32_t k = 4 * half; k < 4 * half + 4; k++) {
            hx_rec(g_K[k], g_s, g_log, 100 + k, it);
            g_exp[g_nexp++] = (hx_entry){ 100 + k, it, 0 };
        }
        if (half)
            sync_and_check(t);
    }
}

static void *worker(void *arg)
{
    long me = (long)(intptr_t)arg, total = 2 * (g_nirr + g_nloop);
    uint64_t r = 0x9E3779B97F4A7C15ull * (uint64_t)(me + 1);
    CK(cuCtxSetCurrent(g_ctx));
    for (;;) {
        pthread_mutex_lock(&g_mu);
        /* threads alternate in runs of a random length, so either may begin a phase */
        while (g_turn < total && (g_turn / 3 + (g_turn % 7 == 0)) % 2 != me)
            pthread_cond_wait(&g_cv, &g_mu);
        if (g_turn >= total) {
            pthread_mutex_unlock(&g_mu);
            return NULL;
        }
        turn(g_turn, &r);
        g_turn++;
        pthread_cond_broadcast(&g_cv);
        pthread_mutex_unlock(&g_mu);
    }
}

int main(int argc, char **argv)
{
    g_nirr = hx_arg(argc, argv, 1, 12000);
    g_nloop = hx_arg(argc, argv, 2, 12000) & ~1L;
    hx_init();
    CK(cuCtxGetCurrent(&g_ctx));
    char name[16];
    for (int k = 0; k < 8; k++) {
        snprintf(name, sizeof name, "mt_k%d", k);
        g_K[k] = hx_kernel_rec(name);
    }
    CK(cuStreamCreate(&g_s, 0));
    g_log = hx_log_new((uint32_t)(2 * (6 * g_nirr + 4 * g_nloop) + 16));
    pthread_t th[2];
    for (long i = 0; i < 2; i++)
        if (pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i))
            return 1;
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_lock(&g_mu);
    sync_and_check(-1);
    pthread_mutex_unlock(&g_mu);
    CK(cuStreamDestroy_v2(g_s));
    hx_pass("phases_mt");
    return 0;
}
