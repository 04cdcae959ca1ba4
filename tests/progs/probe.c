/* Measures, on the GPU machine, the driver costs libautograph's design leans on:
 * cuCtxGetCurrent (every default-stream launch), cuEventRecord on the per-thread stream
 * (every per-thread-stream hold), and the device memory an instantiated, uploaded graph of
 * kernel nodes takes (AG_NODE_MEM_EST). Not a test: prints numbers. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char ptx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry k(.param .u64 p, .param .u32 n) { ret; }\n";

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

#define OK(x) do { CUresult r_ = (x); if (r_) { printf("%s failed: %d\n", #x, r_); return 1; } } while (0)

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The cost of one launch call as the application sees it: 64 launches of one kernel then a
 * stream sync, 3000 times; the launch calls alone are timed (median per iteration). Under
 * libautograph (AUTOGRAPH_BENEFIT=always) the first 63 are held (no driver call) and the 64th
 * replays the graph: the two are reported apart. */
static int loop_probe(CUfunction f)
{
    CUstream s;
    OK(cuStreamCreate(&s, 0));
    CUdeviceptr p = 0;
    unsigned n = 1;
    void *args[] = { &p, &n };
    enum { ITERS = 3000, N = 64 };
    static double first63[ITERS], last[ITERS];
    for (int it = 0; it < ITERS; it++) {
        double t0 = now_ns();
        for (int i = 0; i < N - 1; i++)
            cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, args, NULL);
        double t1 = now_ns();
        cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, args, NULL);
        double t2 = now_ns();
        OK(cuStreamSynchronize(s));
        first63[it] = (t1 - t0) / (N - 1);
        last[it] = t2 - t1;
    }
    qsort(first63 + 100, ITERS - 100, sizeof(double), cmp_d);
    qsort(last + 100, ITERS - 100, sizeof(double), cmp_d);
    printf("loop: launches 1-63: %.1f ns each; launch 64: %.1f ns (medians after warm-up)\n",
           first63[100 + (ITERS - 100) / 2], last[100 + (ITERS - 100) / 2]);
    return 0;
}

/* Launches the driver refuses at once (no function): the interception cost stands out. */
static void invalid_probe(void)
{
    enum { N = 2000000 };
    double t0 = now_ns();
    for (int i = 0; i < N; i++)
        cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
    printf("invalid launch: %.1f ns per call\n", (now_ns() - t0) / N);
}

int main(int argc, char **argv)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    OK(cuInit(0));
    OK(cuDeviceGet(&dev, 0));
    OK(cuDevicePrimaryCtxRetain(&ctx, dev));
    OK(cuCtxSetCurrent(ctx));
    OK(cuModuleLoadData(&mod, ptx));
    OK(cuModuleGetFunction(&f, mod, "k"));
    if (argc > 1 && !strcmp(argv[1], "loop"))
        return loop_probe(f);
    if (argc > 1 && !strcmp(argv[1], "invalid")) {
        invalid_probe();
        return 0;
    }

    const int N = 200000;
    double t0 = now_ns();
    for (int i = 0; i < N; i++) {
        CUcontext c;
        cuCtxGetCurrent(&c);
    }
    printf("cuCtxGetCurrent: %.1f ns\n", (now_ns() - t0) / N);

    CUevent ev;
    OK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    t0 = now_ns();
    for (int i = 0; i < 20000; i++)
        cuEventRecord(ev, CU_STREAM_PER_THREAD);
    printf("cuEventRecord (no timing, per-thread stream): %.1f ns\n", (now_ns() - t0) / 20000);
    OK(cuCtxSynchronize());

    CUdeviceptr p = 0;
    unsigned n = 1;
    void *args[] = { &p, &n };
    t0 = now_ns();
    for (int i = 0; i < 20000; i++)
        cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
    printf("cuLaunchKernel (empty kernel, legacy stream): %.1f ns\n", (now_ns() - t0) / 20000);
    OK(cuCtxSynchronize());

    /* memory of instantiated + uploaded graphs: 8 graphs of 512 kernel nodes */
    size_t free0, free1, total;
    OK(cuMemGetInfo(&free0, &total));
    enum { G = 8, NODES = 512 };
    CUgraphExec execs[G];
    for (int g = 0; g < G; g++) {
        CUgraph gr;
        CUgraphNode prev = NULL, node;
        OK(cuGraphCreate(&gr, 0));
        for (int i = 0; i < NODES; i++) {
            CUDA_KERNEL_NODE_PARAMS kp;
            memset(&kp, 0, sizeof kp);
            kp.func = f;
            kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
            kp.blockDimX = 32;
            kp.blockDimY = kp.blockDimZ = 1;
            kp.kernelParams = args;
            OK(cuGraphAddKernelNode(&node, gr, prev ? &prev : NULL, prev ? 1 : 0, &kp));
            prev = node;
        }
        t0 = now_ns();
        OK(cuGraphInstantiateWithFlags(&execs[g], gr, 0));
        OK(cuGraphUpload(execs[g], NULL));
        OK(cuCtxSynchronize());
        if (g == 0)
            printf("instantiate+upload of %d nodes: %.1f us\n", NODES, (now_ns() - t0) / 1e3);
        OK(cuGraphDestroy(gr));
    }
    OK(cuMemGetInfo(&free1, &total));
    printf("device memory per uploaded kernel node: %.0f bytes (%zu bytes for %d nodes)\n",
           (double)(free0 - free1) / (G * NODES), free0 - free1, G * NODES);
    return 0;
}
