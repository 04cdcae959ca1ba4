// node_update: what updating a kernel node of an instantiated graph costs on the host, by how
// the node names its kernel, and what the graph launch after it costs.  libautograph updates
// replayed graphs node by node (cuGraphExecKernelNodeSetParams) when arguments change; a
// ResNet-50 forward in PyTorch changes ~100 of its 281 kernels' arguments every forward, and
// its pieces' sends cost 20-40 us each on the H100 (make selftime, fourteenth session), where
// the cost table's tiny kernel says 0.26 us a node.
//
// A graph of N nodes of a kernel with a 40-byte argument block (an int, a 16-byte functor, two
// pointers: PyTorch's vectorized elementwise kernels), added with the kernel named as
//   func:  a CUfunction (cudaGetFuncBySymbol)
//   kern:  a CUkernel and the context (cudaGetKernel), as a library kernel is launched
//   kfunc: the CUfunction of that CUkernel in the context (cuKernelGetFunction)
// Each round: every node gets new pointers (cuGraphExecKernelNodeSetParams, timed), then the
// graph is launched (timed) and synchronised; also rounds with no update (launch alone).
// Prints the medians, per node and per launch.  Not a test: a measurement for the cost table.
#include <algorithm>
#include <vector>

#include <cuda.h>

#include "common.h"

namespace {

struct Functor {
  float a, b, c, d;
};

__global__ void bn_like(int n, Functor f, float *out, const float *in) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * f.a + f.b;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Args40 {
  int n;
  Functor f;
  float *out;
  const float *in;
  void *ptrs[4];
  void fill() {
    ptrs[0] = &n;
    ptrs[1] = &f;
    ptrs[2] = &out;
    ptrs[3] = &in;
  }
};

}  // namespace

int main(int argc, char **argv) {
  Args a(argc, argv, "node_update: host cost of updating kernel nodes of an exec, func vs kern");
  const int nodes = (int)a.num("nodes", 40, 1, 1024, "kernel nodes in the graph");
  const int rounds = (int)a.num("rounds", 50, 3, 10000, "timed rounds per variant");
  a.done();
  const int n = 4096;
  std::vector<float *> bufs(4);
  for (auto &b : bufs) CHECK_CUDA(cudaMalloc(&b, n * sizeof(float)));
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  bn_like<<<16, 256, 0, s>>>(n, Functor{1, 0, 0, 0}, bufs[0], bufs[1]);
  CHECK_LAUNCH();
  CHECK_CUDA(cudaStreamSynchronize(s));
  CUcontext ctx;
  CHECK_CU(cuCtxGetCurrent(&ctx));
  cudaFunction_t fn;
  CHECK_CUDA(cudaGetFuncBySymbol(&fn, (const void *)bn_like));
  cudaKernel_t kn;
  CHECK_CUDA(cudaGetKernel(&kn, (const void *)bn_like));
  printf("variant nodes set_params_ns_per_node launch_after_update_us launch_alone_us\n");
  CUfunction kf;
  CHECK_CU(cuKernelGetFunction(&kf, (CUkernel)kn));
  static const char *const names[3] = {"func", "kern", "kfunc"};
  for (int variant = 0; variant < 3; variant++) {
    Args40 args{n, Functor{1, 0, 0, 0}, bufs[0], bufs[1], {}};
    args.fill();
    CUDA_KERNEL_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    if (variant == 0) {
      p.func = (CUfunction)fn;
    } else if (variant == 1) {
      p.kern = (CUkernel)kn;
      p.ctx = ctx;
    } else {
      p.func = kf;
    }
    p.gridDimX = 16;
    p.gridDimY = p.gridDimZ = 1;
    p.blockDimX = 256;
    p.blockDimY = p.blockDimZ = 1;
    p.kernelParams = args.ptrs;
    CUgraph g;
    CHECK_CU(cuGraphCreate(&g, 0));
    std::vector<CUgraphNode> nd(nodes);
    for (int i = 0; i < nodes; i++)
      CHECK_CU(cuGraphAddKernelNode(&nd[i], g, i ? &nd[i - 1] : nullptr, i ? 1 : 0, &p));
    CUgraphExec e;
    CHECK_CU(cuGraphInstantiate(&e, g, 0));
    CHECK_CU(cuGraphUpload(e, (CUstream)s));
    CHECK_CUDA(cudaStreamSynchronize(s));
    std::vector<double> set, after, alone;
    for (int r = -2; r < rounds; r++) {
      // new pointers every round (never the same pair twice in a row), as a forward's new
      // activations
      args.out = bufs[(r + 2) % 4];
      args.in = bufs[(r + 3) % 4];
      args.f.b = (float)r;
      const double t0 = now_us();
      for (int i = 0; i < nodes; i++) CHECK_CU(cuGraphExecKernelNodeSetParams(e, nd[i], &p));
      const double t1 = now_us();
      CHECK_CU(cuGraphLaunch(e, (CUstream)s));
      const double t2 = now_us();
      CHECK_CUDA(cudaStreamSynchronize(s));
      const double t3 = now_us();
      CHECK_CU(cuGraphLaunch(e, (CUstream)s));
      const double t4 = now_us();
      CHECK_CUDA(cudaStreamSynchronize(s));
      if (r >= 0) {
        set.push_back((t1 - t0) * 1e3 / nodes);
        after.push_back(t2 - t1);
        alone.push_back(t4 - t3);
      }
    }
    printf("%s %d %.1f %.2f %.2f\n", names[variant], nodes, median(set), median(after),
           median(alone));
    CHECK_CU(cuGraphExecDestroy(e));
    CHECK_CU(cuGraphDestroy(g));
  }
  for (auto b : bufs) CHECK_CUDA(cudaFree(b));
  printf("PASS node_update\n");
  return 0;
}
