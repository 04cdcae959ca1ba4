// cublas_loop -- small cuBLAS sgemms mixed with the app's own kernels, stream sync per
// iteration.  Inputs are small integers, so every float result is an exact integer and the CPU
// model (int32) matches bit for bit.
//
// Iteration g (0-based, warm-up included), f = 1 + g % 5, all column-major n x n:
//   scale_kernel:  Bs = f * B
//   cublasSgemm:   C  = A * Bs
//   cublasSgemm:   E  = A^T * Bs
//   accum_kernel:  acc = acc * 31 + (uint32)C + 3 * (uint32)E      (uint32, wraps)
// --mode=graph captures one iteration once, instantiates it once, and per iteration sets the
// scale node's new factor (cudaGraphExecKernelNodeSetParams) before cudaGraphLaunch.
#include "cublas_common.h"

namespace {


constexpr int kThreads = 256;

__global__ void scale_kernel(const float *b, float *bs, float f, int count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) bs[i] = b[i] * f;
}

__global__ void accum_kernel(const float *c, const float *e, uint32_t *acc, int count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) acc[i] = acc[i] * 31u + (uint32_t)(int32_t)c[i] + 3u * (uint32_t)(int32_t)e[i];
}

float factor(long long g) { return (float)(1 + g % 5); }

struct Gpu {
  int n, count;
  dim3 grid;
  cudaStream_t st;
  cublasHandle_t h;
  float *a, *b, *bs, *c, *e;
  uint32_t *acc;
};

void scale(Gpu &d, float f) {
  scale_kernel<<<d.grid, kThreads, 0, d.st>>>(d.b, d.bs, f, d.count);
}

// The body of one iteration after the scale kernel.
void gemms_and_accum(Gpu &d) {
  const float one = 1.0f, zero = 0.0f;
  CHECK_CUBLAS(cublasSgemm(d.h, CUBLAS_OP_N, CUBLAS_OP_N, d.n, d.n, d.n, &one, d.a, d.n, d.bs,
                           d.n, &zero, d.c, d.n));
  CHECK_CUBLAS(cublasSgemm(d.h, CUBLAS_OP_T, CUBLAS_OP_N, d.n, d.n, d.n, &one, d.a, d.n, d.bs,
                           d.n, &zero, d.e, d.n));
  accum_kernel<<<d.grid, kThreads, 0, d.st>>>(d.c, d.e, d.acc, d.count);
}

// Capture of one iteration; its only root is the scale kernel (captured first), the node that
// changes every iteration.
struct Captured {
  cudaGraphExec_t exec;
  cudaGraphNode_t scale_node;
};

Captured capture(Gpu &d) {
  cudaGraph_t graph;
  CHECK_CUDA(cudaStreamBeginCapture(d.st, cudaStreamCaptureModeGlobal));
  scale(d, factor(0));
  gemms_and_accum(d);
  CHECK_CUDA(cudaStreamEndCapture(d.st, &graph));
  CHECK_LAUNCH();
  Captured cap;
  size_t roots = 0;
  CHECK_CUDA(cudaGraphGetRootNodes(graph, nullptr, &roots));
  if (roots != 1) {
    fprintf(stderr, "cublas_loop: captured graph has %zu roots (want 1)\n", roots);
    die(2);
  }
  CHECK_CUDA(cudaGraphGetRootNodes(graph, &cap.scale_node, &roots));
  cudaGraphNodeType type;
  CHECK_CUDA(cudaGraphNodeGetType(cap.scale_node, &type));
  if (type != cudaGraphNodeTypeKernel) {
    fprintf(stderr, "cublas_loop: the captured graph's root is not a kernel node\n");
    die(2);
  }
  CHECK_CUDA(cudaGraphInstantiate(&cap.exec, graph, 0));
  return cap;
}

void run(Gpu &d, const Captured *cap, long long g0, long long g1) {
  for (long long g = g0; g < g1; g++) {
    if (cap) {
      const float *b = d.b;
      float *bs = d.bs;
      float f = factor(g);
      int count = d.count;
      void *args[] = {&b, &bs, &f, &count};
      set_kernel_node(cap->exec, cap->scale_node, (const void *)scale_kernel, d.grid,
                      dim3(kThreads), args);
      CHECK_CUDA(cudaGraphLaunch(cap->exec, d.st));
    } else {
      scale(d, factor(g));
      gemms_and_accum(d);
      CHECK_LAUNCH();
    }
    CHECK_CUDA(cudaStreamSynchronize(d.st));
  }
}

std::vector<float> small_ints(size_t count, uint64_t seed, int lo, int hi) {
  Rng r(seed);
  std::vector<float> v(count);
  for (auto &x : v) x = (float)(lo + (int)r.below((uint32_t)(hi - lo + 1)));
  return v;
}


std::vector<float> download(const float *d, size_t count) {
  std::vector<float> h(count);
  CHECK_CUDA(cudaMemcpy(h.data(), d, count * sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

// Flattens exact-integer floats for the comparison and the checksum.
std::vector<uint32_t> as_ints(const std::vector<float> &v) {
  std::vector<uint32_t> out(v.size());
  for (size_t i = 0; i < v.size(); i++) out[i] = (uint32_t)(int32_t)v[i];
  return out;
}

}  // namespace

int main(int argc, char **argv) {
  Args a(argc, argv, "cublas_loop: sgemms (cuBLAS) mixed with own kernels, sync per iteration");
  const LoopFlags loop = loop_flags(a, 100);
  const uint64_t seed = seed_flag(a);
  const int n = (int)a.num("size", 128, 1, 1024, "matrix size n (n x n)");
  const bool graph =
      a.choice("mode", "eager", "eager|graph", "eager or one captured iteration replayed") ==
      "graph";
  a.done();

  const size_t count = (size_t)n * n;
  const std::vector<float> A = small_ints(count, seed, -3, 3), B = small_ints(count, seed + 1, 0, 6);

  Gpu d;
  d.n = n;
  d.count = (int)count;
  d.grid = dim3((unsigned)((count + kThreads - 1) / kThreads));
  CHECK_CUDA(cudaStreamCreate(&d.st));
  CHECK_CUBLAS(cublasCreate(&d.h));
  CHECK_CUBLAS(cublasSetStream(d.h, d.st));
  // A fixed workspace, so nothing is allocated inside the capture.
  const size_t ws_bytes = 32u << 20;
  CHECK_CUBLAS(cublasSetWorkspace(d.h, device_alloc<char>(ws_bytes), ws_bytes));
  d.a = upload(A);
  d.b = upload(B);
  d.bs = device_alloc<float>(count);
  d.c = device_alloc<float>(count);
  d.e = device_alloc<float>(count);
  d.acc = device_alloc<uint32_t>(count);
  CHECK_CUDA(cudaMemset(d.acc, 0, count * sizeof(uint32_t)));
  CHECK_CUDA(cudaDeviceSynchronize());

  Captured cap{};
  if (graph) cap = capture(d);
  const Captured *capp = graph ? &cap : nullptr;

  const double us =
      time_phases(loop, [&](long long g0, long long g1) { run(d, capp, g0, g1); });

  const std::vector<uint32_t> acc = from_device(d.acc, count);
  const std::vector<uint32_t> C = as_ints(download(d.c, count)), E = as_ints(download(d.e, count));

  // CPU model: P = A*B and Q = A^T*B once; iteration g's C and E are f*P and f*Q.
  std::vector<int32_t> Ai(count), Bi(count), P(count, 0), Q(count, 0);
  for (size_t i = 0; i < count; i++) Ai[i] = (int32_t)A[i], Bi[i] = (int32_t)B[i];
  parallel_for((size_t)n, [&](size_t j0, size_t j1) {
    for (size_t j = j0; j < j1; j++)
      for (int k = 0; k < n; k++) {
        const int32_t bkj = Bi[k + j * n];
        for (int i = 0; i < n; i++) P[i + j * n] += Ai[i + (size_t)k * n] * bkj;
      }
    for (size_t j = j0; j < j1; j++)
      for (int i = 0; i < n; i++) {
        int32_t sum = 0;
        for (int k = 0; k < n; k++) sum += Ai[k + (size_t)i * n] * Bi[k + j * n];
        Q[i + j * n] = sum;
      }
  });
  std::vector<uint32_t> acc_ref(count, 0), C_ref(count), E_ref(count);
  parallel_for(count, [&](size_t lo, size_t hi) {
    for (long long g = 0; g < loop.total(); g++) {
      const uint32_t f = 1 + (uint32_t)(g % 5);
      for (size_t i = lo; i < hi; i++)
        acc_ref[i] = acc_ref[i] * 31u + f * (uint32_t)P[i] + 3u * f * (uint32_t)Q[i];
    }
  });
  const uint32_t f_last = 1 + (uint32_t)((loop.total() - 1) % 5);
  for (size_t i = 0; i < count; i++) {
    C_ref[i] = f_last * (uint32_t)P[i];
    E_ref[i] = f_last * (uint32_t)Q[i];
  }
  const bool ok =
      check_equal("acc", acc, acc_ref) & check_equal("C", C, C_ref) & check_equal("E", E, E_ref);

  // cuBLAS launches its own kernels, so only the app's own launch calls are known.
  printf("own_launches: %lld\n", graph ? 2 : 2 * loop.total());
  return report(kLaunchesUnknown, checksum_of(acc, C, E), us, ok);
}
