// cublas_async -- a GPU-bound asynchronous library loop, timed by the program's own events:
// per iteration --gemms cublasSgemm (m, n, k = 640, 480, 320) on one created stream between two
// cudaEventRecord's, with no sync inside the timed block; the host runs ahead until the
// launch queue is full.  The time reported is GPU time from the events.
//
// Iteration g (0-based, warm-up included): cudaEventRecord(it_begin); gemm j = 0..gemms-1:
//   C = A[j % 4] * B + (j == 0 ? 0 : 1) * C        (column-major, m x k times k x n)
// cudaEventRecord(it_end).  So after every iteration C = sum_j A[j % 4] * B.  A and B hold
// integers in [-2, 2], so every partial sum is an integer below 2^24 and the floats are exact
// whatever order cuBLAS adds in (and with TF32: the inputs are exact there too).
//
// Timed block: cudaEventRecord(block_begin), the timed iterations, then one
// cudaEventSynchronize(it_end).  time_us_per_iter = elapsed(block_begin, last it_end) / iters
// (ms -> us); host_time_us_per_iter is the host's wall time of the same block, for reference.
// --mode=graph: the gemms of one iteration captured once (stream capture, fixed cuBLAS
// workspace) and replayed with cudaGraphLaunch between the same two events.
#include "cublas_common.h"

namespace {


constexpr int kM = 640, kN = 480, kK = 320, kDistinctA = 4;

struct Gpu {
  int gemms;
  cudaStream_t st;
  cublasHandle_t h;
  float *a[kDistinctA], *b, *c;
  cudaEvent_t block_begin, it_begin, it_end;
};

void gemms(const Gpu &d) {
  const float one = 1.0f, zero = 0.0f;
  for (int j = 0; j < d.gemms; j++)
    CHECK_CUBLAS(cublasSgemm(d.h, CUBLAS_OP_N, CUBLAS_OP_N, kM, kN, kK, &one, d.a[j % kDistinctA],
                             kM, d.b, kK, j == 0 ? &zero : &one, d.c, kM));
}

cudaGraphExec_t capture(const Gpu &d) {
  cudaGraph_t graph;
  CHECK_CUDA(cudaStreamBeginCapture(d.st, cudaStreamCaptureModeGlobal));
  gemms(d);
  CHECK_CUDA(cudaStreamEndCapture(d.st, &graph));
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  CHECK_CUDA(cudaGraphDestroy(graph));
  return exec;
}

// Iterations [g0, g1): no host synchronisation at all.
void run(const Gpu &d, cudaGraphExec_t exec, long long g0, long long g1) {
  for (long long g = g0; g < g1; g++) {
    CHECK_CUDA(cudaEventRecord(d.it_begin, d.st));
    if (exec)
      CHECK_CUDA(cudaGraphLaunch(exec, d.st));
    else
      gemms(d);
    CHECK_CUDA(cudaEventRecord(d.it_end, d.st));
  }
}



}  // namespace

int main(int argc, char **argv) {
  Args a(argc, argv,
         "cublas_async: GPU-bound sgemm loop between events, no sync inside, timed by its own "
         "events");
  const LoopFlags loop = loop_flags(a, 200);
  const uint64_t seed = seed_flag(a);
  Gpu d;
  d.gemms = (int)a.num("gemms", 30, 1, 1000, "cublasSgemm per iteration (<= 1000 keeps C exact)");
  const bool graph =
      a.choice("mode", "eager", "eager|graph", "eager or one captured iteration replayed") ==
      "graph";
  a.done();

  std::vector<float> A[kDistinctA];
  for (int j = 0; j < kDistinctA; j++) A[j] = small_ints((size_t)kM * kK, seed + (uint64_t)j);
  const std::vector<float> B = small_ints((size_t)kK * kN, seed + kDistinctA);

  d.st = new_stream();
  CHECK_CUBLAS(cublasCreate(&d.h));
  CHECK_CUBLAS(cublasSetStream(d.h, d.st));
  // A fixed workspace, so nothing is allocated inside the capture.
  const size_t ws_bytes = 32u << 20;
  CHECK_CUBLAS(cublasSetWorkspace(d.h, device_alloc<char>(ws_bytes), ws_bytes));
  for (int j = 0; j < kDistinctA; j++) d.a[j] = upload(A[j]);
  d.b = upload(B);
  d.c = device_alloc<float>((size_t)kM * kN);
  CHECK_CUDA(cudaEventCreate(&d.block_begin));
  CHECK_CUDA(cudaEventCreate(&d.it_begin));
  CHECK_CUDA(cudaEventCreate(&d.it_end));
  CHECK_CUDA(cudaDeviceSynchronize());

  cudaGraphExec_t exec = graph ? capture(d) : nullptr;

  run(d, exec, 0, loop.warmup);
  CHECK_CUDA(cudaDeviceSynchronize());
  const double t0 = now_us();
  CHECK_CUDA(cudaEventRecord(d.block_begin, d.st));
  run(d, exec, loop.warmup, loop.total());
  CHECK_CUDA(cudaEventSynchronize(d.it_end));
  const double t1 = now_us();
  float block_ms = 0.0f, last_ms = 0.0f;
  CHECK_CUDA(cudaEventElapsedTime(&block_ms, d.block_begin, d.it_end));
  CHECK_CUDA(cudaEventElapsedTime(&last_ms, d.it_begin, d.it_end));
  CHECK_CUDA(cudaDeviceSynchronize());

  std::vector<float> C((size_t)kM * kN);
  CHECK_CUDA(cudaMemcpy(C.data(), d.c, C.size() * sizeof(float), cudaMemcpyDeviceToHost));
  std::vector<uint32_t> got(C.size());
  for (size_t i = 0; i < C.size(); i++) got[i] = (uint32_t)(int32_t)C[i];

  // CPU model: C = (sum_j A[j % 4]) * B in int32 (exact, as on the GPU).
  const std::vector<uint32_t> want = gemm_sum_model(A, kDistinctA, B, d.gemms, kM, kN, kK);
  const bool ok = check_equal("C", got, want);

  printf("gemms: %lld\n", graph ? 0 : d.gemms * loop.total());
  if (graph) printf("graph_launches: %lld\n", loop.total());
  printf("last_iter_gpu_us: %.3f\n", (double)last_ms * 1e3);
  printf("host_time_us_per_iter: %.3f\n", (t1 - t0) / (double)loop.iters);
  return report(kLaunchesUnknown, checksum_of(got), (double)block_ms * 1e3 / (double)loop.iters,
                ok);
}
