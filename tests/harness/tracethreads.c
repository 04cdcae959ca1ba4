/* Scenario for the trace recorder's times with two threads (bats/cpu_trace.bats): the main
 * thread waits at a stream sync behind a host function while a second thread makes n launches
 * on a stream of its own, then releases the host function after its last one (no sleep, no
 * timing decides anything). What the recorder spends on the second thread's launches did not
 * delay the main thread's wait: its next call must not be placed before the wait ended.
 *
 * Usage: tracethreads [n=2000] */
#include <pthread.h>
#include <stdatomic.h>

#include "harness.h"

static atomic_int g_go, g_waiting;
static long g_n;
static CUcontext g_ctx;
static CUfunction g_acc;
static uint64_t *g_x, g_m = 1;

static void CUDA_CB hold(void *arg)
{
    (void)arg;
    while (!atomic_load(&g_go))
        ;
}

static void *other(void *arg)
{
    (void)arg;
    CK(cuCtxSetCurrent(g_ctx));
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    while (!atomic_load(&g_waiting))
        ;
    for (long k = 0; k < g_n; k++) {
        hx_acc(g_acc, s, NULL, g_x, 1, (uint32_t)k);
        g_m = hx_mix(g_m, 1, (uint32_t)k);
    }
    CK(cuStreamSynchronize(s));
    atomic_store(&g_go, 1);
    CK(cuStreamDestroy_v2(s));
    return NULL;
}

int main(int argc, char **argv)
{
    g_n = hx_arg(argc, argv, 1, 2000);
    g_ctx = hx_init();
    g_acc = hx_kernel_acc("tt_acc");
    g_x = hx_dev_u64(1, 1);
    uint64_t *y = hx_dev_u64(1, 1), my = 1;
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuLaunchHostFunc(s, hold, NULL));
    pthread_t th;
    HX_ASSERT(pthread_create(&th, NULL, other, NULL) == 0, "tracethreads: pthread_create");
    atomic_store(&g_waiting, 1);
    CK(cuStreamSynchronize(s)); /* until the other thread's launches are all made */
    hx_acc(g_acc, s, NULL, y, 2, 0);
    my = hx_mix(my, 2, 0);
    CK(cuStreamSynchronize(s));
    pthread_join(th, NULL);
    HX_ASSERT(*g_x == g_m && *y == my, "tracethreads: %#llx and %#llx, expected %#llx and %#llx",
              (unsigned long long)*g_x, (unsigned long long)*y, (unsigned long long)g_m,
              (unsigned long long)my);
    CK(cuStreamDestroy_v2(s));
    hx_pass("tracethreads");
    return 0;
}
