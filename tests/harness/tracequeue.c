/* Scenario for the trace recorder's GPU times (bats/cpu_trace.bats): n kernels queued behind
 * a host function that holds the stream until all n are issued (the "GPU" busy: each call is
 * queued), then n kernels each followed by a stream sync (the stream idle when each is issued).
 * With FAKECUDA_LAUNCH_HOST_US, each launch call spends that long on the host before its kernel
 * is enqueued: the queued kernels' recorded durations must not hold it; the idle ones are
 * flagged idle (their durations do hold it). The host function is released by the host after
 * the last launch (no sleep, no timing decides anything).
 *
 * Usage: tracequeue [n=8] */
#include <stdatomic.h>

#include "harness.h"

static atomic_int g_go;

static void CUDA_CB hold(void *arg)
{
    (void)arg;
    while (!atomic_load(&g_go))
        ;
}

int main(int argc, char **argv)
{
    long n = hx_arg(argc, argv, 1, 8);
    hx_init();
    CUfunction ACC = hx_kernel_acc("tq_acc");
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    uint64_t *x = hx_dev_u64(1, 1), m = 1;
    CK(cuLaunchHostFunc(s, hold, NULL));
    for (long k = 0; k < n; k++) {
        hx_acc(ACC, s, NULL, x, 1, (uint32_t)k);
        m = hx_mix(m, 1, (uint32_t)k);
    }
    atomic_store(&g_go, 1);
    CK(cuStreamSynchronize(s));
    for (long k = 0; k < n; k++) {
        hx_acc(ACC, s, NULL, x, 2, (uint32_t)k);
        m = hx_mix(m, 2, (uint32_t)k);
        CK(cuStreamSynchronize(s));
    }
    HX_ASSERT(*x == m, "tracequeue: %#llx, expected %#llx", (unsigned long long)*x,
              (unsigned long long)m);
    CK(cuStreamDestroy_v2(s));
    hx_pass("tracequeue");
    return 0;
}
