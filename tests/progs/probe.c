/* Measures, on the GPU machine, the driver costs libautograph's design leans on:
 * cuCtxGetCurrent (every default-stream launch), cuEventRecord on the per-thread stream
 * (every per-thread-stream hold), and the device memory an instantiated, uploaded graph of
 * kernel nodes takes (AG_NODE_MEM_EST). Not a test: prints numbers. */
#include <cuda.h>
#include <stdio.h>
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

int main(void)
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
