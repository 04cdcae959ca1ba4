/* Scenario j: per-thread default streams. Several threads each run the 8-launch loop on their
 * own per-thread default stream (stream NULL through cuLaunchKernel_ptsz: half of them call
 * it directly, half through the pointer cuGetProcAddress_v2 gives for "cuLaunchKernel" with
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM), synchronise with cuStreamSynchronize_ptsz,
 * and every 4th iteration read a checksum back with a synchronous copy on the legacy stream
 * (which waits for the per-thread stream, a blocking stream). Meanwhile a prober thread keeps
 * making synchronous copies on the legacy stream: each must wait for every per-thread stream,
 * so what those hold (each thread pauses mid-sequence) is flushed from a thread that does not
 * own them, and the owner's later launches must still come after it.
 *
 * Usage: ptds [threads=4] [iterations=50] [prober=1] (prober=0: only the hold watchdog,
 * AUTOGRAPH_MAX_HOLD_US, releases what the threads hold while they wait) */
#include <pthread.h>
#include <sched.h>

#include "harness.h"

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);

/* The pauses begin once the whole 8-launch loop has been learned: a pause cuts the learner's
 * segment where it waits, and iterations cut there could otherwise make 4-launch templates
 * first -- each complete, and gone to the GPU, before the pause, so that nothing is held for
 * the other thread to flush (which the test is about). */
#define PAUSE_FROM 8

static CUcontext g_ctx;
static long g_iters;
static int g_done;

static void *prober(void *arg)
{
    (void)arg;
    CK(cuCtxSetCurrent(g_ctx));
    uint64_t *x = hx_dev_u64(1, 77), h = 0;
    long n = 0;
    while (!__atomic_load_n(&g_done, __ATOMIC_ACQUIRE)) {
        CK(cuMemcpyDtoH_v2(&h, (CUdeviceptr)(uintptr_t)x, sizeof h));
        HX_ASSERT(h == 77, "prober");
        n++;
    }
    printf("ptds: prober made %ld synchronous copies\n", n);
    return NULL;
}
static CUfunction K[4], ACC;

static void *run(void *arg)
{
    long t = (long)(intptr_t)arg;
    CK(cuCtxSetCurrent(g_ctx));
    launch_fn launch = cuLaunchKernel_ptsz;
    if (t % 2) {
        void *fn = NULL;
        CUdriverProcAddressQueryResult st;
        CK(cuGetProcAddress_v2("cuLaunchKernel", &fn, 13000,
                               CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
        HX_ASSERT(fn && st == CU_GET_PROC_ADDRESS_SUCCESS, "cuGetProcAddress_v2");
        launch = (launch_fn)fn;
    }
    hx_log *log = hx_log_new((uint32_t)(g_iters * 8 + 8));
    uint64_t *acc = hx_dev_u64(1, (uint64_t)t), model = (uint64_t)t;
    for (long it = 0; it < g_iters; it++) {
        hx_entry exp[8];
        for (uint32_t pos = 0; pos < 8; pos++) {
            uint32_t kid = (uint32_t)t * 100 + pos, val = (uint32_t)it;
            if (pos == 5) {
                void *p[] = { &log, &acc, &kid, &val };
                CK(launch(ACC, 1, 1, 1, 32, 1, 1, 0, NULL, p, NULL));
                exp[pos] = (hx_entry){ kid, val, model = hx_mix(model, kid, val) };
            } else {
                void *p[] = { &log, &kid, &val };
                CK(launch(K[pos % 4], 1, 1, 1, 32, 1, 1, 0, NULL, p, NULL));
                exp[pos] = (hx_entry){ kid, val, 0 };
            }
            if (pos == 3 && it % 2 && it >= PAUSE_FROM) {
                /* host work while launches are held: wait, with no CUDA call, until they have
                 * run -- with launches held, issued from another thread (the prober's legacy
                 * copies, or the watchdog); a generous timeout, not a fixed pause */
                double limit = hx_now() + 30.0;
                while (__atomic_load_n(&log->n, __ATOMIC_ACQUIRE) < (uint32_t)(it * 8 + 4)) {
                    HX_ASSERT(hx_now() < limit, "ptds thread %ld, iteration %ld: launches not "
                              "run within 30 s", t, it);
                    sched_yield();
                }
            }
        }
        if (it % 4 == 3) {
            uint64_t h = 0;
            CK(cuMemcpyDtoH_v2(&h, (CUdeviceptr)(uintptr_t)acc, sizeof h));
            HX_ASSERT(h == model, "ptds thread %ld, iteration %ld: legacy copy read %#llx, "
                      "expected %#llx", t, it, (unsigned long long)h, (unsigned long long)model);
        }
        CK(cuStreamSynchronize_ptsz(NULL));
        hx_log_expect(log, (uint32_t)(it * 8), exp, 8, "ptds", it);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long n = hx_arg(argc, argv, 1, 4);
    g_iters = hx_arg(argc, argv, 2, 50);
    long probe = hx_arg(argc, argv, 3, 1);
    g_ctx = hx_init();
    for (int i = 0; i < 4; i++)
        K[i] = hx_kernel_rec(i % 2 ? "ptds_b" : "ptds_a");
    ACC = hx_kernel_acc("ptds_acc");
    pthread_t th[64], pr;
    HX_ASSERT(n >= 1 && n <= 64, "threads");
    if (probe)
        HX_ASSERT(pthread_create(&pr, NULL, prober, NULL) == 0, "pthread_create");
    for (long t = 0; t < n; t++)
        HX_ASSERT(pthread_create(&th[t], NULL, run, (void *)(intptr_t)t) == 0, "pthread_create");
    for (long t = 0; t < n; t++)
        pthread_join(th[t], NULL);
    __atomic_store_n(&g_done, 1, __ATOMIC_RELEASE);
    if (probe)
        pthread_join(pr, NULL);
    hx_pass("ptds");
    return 0;
}
