// attr_probe -- what the driver does with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES around
// graphs: the facts libautograph's handling of function attributes rests on (cache/funcattr.h,
// tests/fakecuda's model of them). One kernel uses N bytes of dynamic shared memory; the program
// sets the function's limit and launches it eagerly and through graphs, and prints one line per
// fact, "fact NAME: RESULT" (the CUresult of the call, and for launches whether the kernel ran):
//
//   eager_over_limit       eager launch of N bytes with the limit set to 0
//   node_over_limit        cuGraphAddKernelNode of N bytes with the limit 0
//   instantiate_over_limit instantiate a graph whose node (added under limit N) asks N, limit now 0
//   exec_after_lowered     an exec instantiated under limit N, launched after the limit went to 0
//   update_over_limit      cuGraphExecKernelNodeSetParams to N bytes on an exec, limit 0
//
// On the H100 (driver 580, CUDA 13.0, 2026-11-25): the eager launch, the node's creation and the
// exec update are refused (CUDA_ERROR_INVALID_VALUE); instantiation and the exec's launch are
// not -- an exec keeps running under a limit lowered after its nodes were made.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

__global__ void fill(int *out, int v) {
  extern __shared__ int s[];
  s[threadIdx.x] = v + threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x];
}

static void check(CUresult r, const char *what) {
  if (r != CUDA_SUCCESS) {
    std::printf("setup failed: %s: %d\n", what, (int)r);
    std::exit(1);
  }
}

int main() {
  const unsigned N = 8192, T = 256;
  int *d = nullptr;
  if (cudaMalloc(&d, T * sizeof(int)) != cudaSuccess) {
    std::printf("skip: no CUDA device\n");
    return 77;
  }
  cudaFunction_t rf;
  check((CUresult)cudaGetFuncBySymbol(&rf, (const void *)fill), "cudaGetFuncBySymbol");
  CUfunction f = (CUfunction)rf;
  CUstream s;
  check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  const CUfunction_attribute A = CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
  int v = 0;
  void *params[] = {&d, &v};
  auto ran = [&](int want) {
    int h[T];
    cuStreamSynchronize(s);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    for (unsigned i = 0; i < T; i++)
      if (h[i] != want + (int)((i + 1) % T)) return 0;
    return 1;
  };
  CUDA_KERNEL_NODE_PARAMS kp = {};
  kp.func = f;
  kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
  kp.blockDimX = T;
  kp.blockDimY = kp.blockDimZ = 1;
  kp.sharedMemBytes = N;
  kp.kernelParams = params;

  // eager over the limit
  check(cuFuncSetAttribute(f, A, 0), "set 0");
  v = 1;
  CUresult r = cuLaunchKernel(f, 1, 1, 1, T, 1, 1, N, s, params, nullptr);
  int ok = r == CUDA_SUCCESS && ran(1);
  cudaGetLastError();
  std::printf("fact eager_over_limit: %d ran %d\n", (int)r, ok);

  // a node over the limit
  CUgraph g;
  CUgraphNode n;
  check(cuGraphCreate(&g, 0), "cuGraphCreate");
  r = cuGraphAddKernelNode(&n, g, nullptr, 0, &kp);
  std::printf("fact node_over_limit: %d\n", (int)r);
  cuGraphDestroy(g);

  // a node added under limit N, instantiated under 0
  check(cuFuncSetAttribute(f, A, (int)N), "set N");
  check(cuGraphCreate(&g, 0), "cuGraphCreate");
  v = 5;  // (a node copies its parameters at its creation)
  check(cuGraphAddKernelNode(&n, g, nullptr, 0, &kp), "add under N");
  check(cuFuncSetAttribute(f, A, 0), "set 0");
  CUgraphExec x = nullptr;
  r = cuGraphInstantiate(&x, g, 0);
  std::printf("fact instantiate_over_limit: %d\n", (int)r);
  if (x) cuGraphExecDestroy(x);

  // instantiated under N, launched under 0
  check(cuFuncSetAttribute(f, A, (int)N), "set N");
  x = nullptr;
  check(cuGraphInstantiate(&x, g, 0), "instantiate under N");
  check(cuFuncSetAttribute(f, A, 0), "set 0");
  v = 2;  // (not seen: the node holds 5)
  r = cuGraphLaunch(x, s);
  ok = r == CUDA_SUCCESS && ran(5);
  cudaGetLastError();
  std::printf("fact exec_after_lowered: %d ran %d\n", (int)r, ok);

  // an exec update to N bytes while the limit is 0
  CUDA_KERNEL_NODE_PARAMS kq = kp;
  v = 3;
  r = cuGraphExecKernelNodeSetParams(x, n, &kq);
  CUresult r2 = r == CUDA_SUCCESS ? cuGraphLaunch(x, s) : r;
  ok = r2 == CUDA_SUCCESS && ran(3);
  cudaGetLastError();
  std::printf("fact update_over_limit: %d launch %d ran %d\n", (int)r, (int)r2, ok);
  cuGraphExecDestroy(x);
  cuGraphDestroy(g);
  std::printf("result: OK\n");
  return 0;
}
