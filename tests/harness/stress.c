/* Scenario i: stress. 8 threads, each with its own stream (thread 3 mod 4: its per-thread
 * default stream, as CU_STREAM_PER_THREAD; other odd ones: a non-blocking stream; even ones:
 * a blocking stream), plus the main thread on the legacy default stream, all launching the
 * same kinds of sequences with changing arguments and mixing ordering points chosen per
 * iteration: synchronisations, event records + event synchronisation, cuStreamQuery polling,
 * async copies back + synchronisation (checked mid-run), or none (sequences run into each
 * other); thread 1 now and then captures a sequence into a graph of its own (thread-local
 * mode) and launches it. The main thread also reads its checksum with synchronous copies,
 * which wait for every blocking stream. Every checksum must equal the host's, and nothing
 * may deadlock.
 *
 * Usage: stress [total launches=100000] [threads=8] [features=3]
 *        features: 1 = per-thread default streams, 2 = application captures */
#include <pthread.h>
#include <string.h>

#include "harness.h"

static CUcontext g_ctx;
static long g_per_thread, g_features;
static CUfunction F[3];

typedef struct {
    long id;
    CUstream s;                     /* NULL: the legacy default stream */
    uint64_t *acc;
    uint64_t model;
    long launches;
} worker;

static uint32_t rnd(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return (uint32_t)(*x >> 11);
}

static void check(worker *w, uint64_t got, const char *how, long it)
{
    HX_ASSERT(got == w->model, "stress worker %ld, iteration %ld (%s): checksum %#llx, expected "
              "%#llx", w->id, it, how, (unsigned long long)got, (unsigned long long)w->model);
}

static void *run(void *arg)
{
    worker *w = arg;
    CK(cuCtxSetCurrent(g_ctx));
    CUevent ev;
    CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    uint64_t *host;
    CK(cuMemAllocHost_v2((void **)&host, sizeof *host));
    uint64_t r = 0x9E3779B97F4A7C15ull ^ (uint64_t)(w->id + 1) * 0x2545F4914F6CDD1Dull;
    long it = 0;
    while (w->launches < g_per_thread) {
        /* one of a few sequences: the same shapes recur, the values change */
        uint32_t seq = rnd(&r) % 3, len = 4 + seq * 2;
        for (uint32_t k = 0; k < len && w->launches < g_per_thread; k++) {
            uint32_t kid = seq * 16 + k, val = (uint32_t)(k == 1 ? it : k);
            hx_acc(F[(seq + k) % 3], w->s, NULL, w->acc, kid, val);
            w->model = hx_mix(w->model, kid, val);
            w->launches++;
        }
        if ((g_features & 2) && w->id == 1 && it % 50 == 25) { /* an application capture of its own */
            CUgraph g;
            CUgraphExec ge;
            CK(cuStreamBeginCapture_v2(w->s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
            for (uint32_t k = 0; k < 3; k++)
                hx_acc(F[k], w->s, NULL, w->acc, 200 + k, (uint32_t)it);
            CK(cuStreamEndCapture(w->s, &g));
            CK(cuGraphInstantiateWithFlags(&ge, g, 0));
            for (int rep = 0; rep < 2; rep++) {
                CK(cuGraphLaunch(ge, w->s));
                for (uint32_t k = 0; k < 3; k++)
                    w->model = hx_mix(w->model, 200 + k, (uint32_t)it);
            }
            CK(cuStreamSynchronize(w->s));
            check(w, *w->acc, "after an application graph", it);
            CK(cuGraphExecDestroy(ge));
            CK(cuGraphDestroy(g));
        }
        switch (rnd(&r) % 6) {
        case 0:
            CK(cuStreamSynchronize(w->s));
            check(w, *w->acc, "after cuStreamSynchronize", it);
            break;
        case 1:
            CK(cuEventRecord(ev, w->s));
            CK(cuEventSynchronize(ev));
            check(w, *w->acc, "after an event", it);
            break;
        case 2: {
            CUresult q;
            double t0 = hx_now();
            while ((q = cuStreamQuery(w->s)) == CUDA_ERROR_NOT_READY)
                HX_ASSERT(hx_now() - t0 < 20, "stress worker %ld: cuStreamQuery never ready",
                          w->id);
            CK(q);
            check(w, *w->acc, "after cuStreamQuery", it);
            break;
        }
        case 3:
            CK(cuMemcpyDtoHAsync_v2(host, (CUdeviceptr)(uintptr_t)w->acc, sizeof *host, w->s));
            CK(cuStreamSynchronize(w->s));
            check(w, *host, "async copy", it);
            break;
        case 4:
            if (!w->s) { /* the legacy stream: a synchronous copy waits for blocking streams */
                CK(cuMemcpyDtoH_v2(host, (CUdeviceptr)(uintptr_t)w->acc, sizeof *host));
                check(w, *host, "synchronous copy", it);
            }
            break;
        default:
            break; /* no ordering point: the next sequence follows directly */
        }
        it++;
    }
    CK(cuStreamSynchronize(w->s));
    check(w, *w->acc, "final", it);
    CK(cuEventDestroy_v2(ev));
    return NULL;
}

int main(int argc, char **argv)
{
    long total = hx_arg(argc, argv, 1, 100000);
    long n = hx_arg(argc, argv, 2, 8);
    g_features = hx_arg(argc, argv, 3, 3);
    HX_ASSERT(n >= 1 && n <= 32, "threads");
    g_per_thread = total / (n + 1);
    g_ctx = hx_init();
    F[0] = hx_kernel_acc("st_a");
    F[1] = hx_kernel_acc("st_b");
    F[2] = hx_kernel_acc("st_c");
    worker w[33];
    memset(w, 0, sizeof w);
    pthread_t th[32];
    for (long t = 0; t <= n; t++) {
        w[t].id = t;
        w[t].model = (uint64_t)t * 1000 + 1;
        w[t].acc = hx_dev_u64(1, w[t].model);
        if (t < n && t % 4 == 3 && (g_features & 1))
            w[t].s = CU_STREAM_PER_THREAD;
        else if (t < n)
            CK(cuStreamCreate(&w[t].s, t % 2 ? CU_STREAM_NON_BLOCKING : 0));
    }
    for (long t = 0; t < n; t++)
        HX_ASSERT(pthread_create(&th[t], NULL, run, &w[t]) == 0, "pthread_create");
    run(&w[n]); /* the main thread: the legacy stream */
    for (long t = 0; t < n; t++)
        pthread_join(th[t], NULL);
    CK(cuCtxSynchronize());
    long sum = 0;
    for (long t = 0; t <= n; t++) {
        check(&w[t], *w[t].acc, "after cuCtxSynchronize", -1);
        sum += w[t].launches;
    }
    printf("stress: %ld launches on %ld streams\n", sum, n + 1);
    hx_pass("stress");
    return 0;
}
