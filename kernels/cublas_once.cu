// cublas_once -- "a cuBLAS loop timed once" (row G2): the whole timed region runs ONCE per
// process, so nothing in it ever repeats within the process.
//
//   cublasCreate (default stream: the legacy NULL stream); one warm-up cublasSgemm;
//   cudaEventRecord(start, 0); --gemms (30) cublasSgemm on the NULL stream, no sync inside;
//   cudaEventRecord(stop, 0); cudaEventSynchronize(stop)
//
// time_us_per_iter = elapsed(start, stop) in us: the GPU time of the whole region, once (it is
// not divided by anything).  host_time_us: the host's wall time from before the first record to
// after the event sync.
//
// Gemm j (column-major, m x k times k x n, m = 640, n = 320, k = 480):
//   C = A[j % 4] * B + (j == 0 ? 0 : 1) * C
// so after the region C = sum_j A[j % 4] * B.  The warm-up gemm computes C = A[0] * B (the
// region's first gemm overwrites it).  A and B hold integers in [-2, 2], every partial sum is
// an integer below 2^24: exact in any summation order (TF32 too).  The result is copied back,
// checked against an int32 CPU model and checksummed.
//
// --mode=graph (the reference): the region's gemms stream-captured once on a created stream
// (fixed cuBLAS workspace), instantiated and uploaded before the region, and launched once on
// the NULL stream between the same two events.  No --iters/--warmup: there is one region.
#include "cublas_common.h"

namespace {


constexpr int kM = 640, kN = 320, kK = 480, kDistinctA = 4;



void gemm(cublasHandle_t h, const float *a, const float *b, float *c, bool accumulate) {
  const float one = 1.0f, zero = 0.0f;
  CHECK_CUBLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, kM, kN, kK, &one, a, kM, b, kK,
                           accumulate ? &one : &zero, c, kM));
}

}  // namespace

int main(int argc, char **argv) {
  Args args(argc, argv,
            "cublas_once: 30 cublasSgemm on the NULL stream between two events, timed once per "
            "process");
  const uint64_t seed = seed_flag(args);
  const int gemms =
      (int)args.num("gemms", 30, 1, 1000, "cublasSgemm in the region (<= 1000 keeps C exact)");
  const bool graph = args.choice("mode", "eager", "eager|graph",
                                 "eager, or the region's gemms captured and launched once") ==
                     "graph";
  args.done();

  std::vector<float> A[kDistinctA];
  for (int j = 0; j < kDistinctA; j++) A[j] = small_ints((size_t)kM * kK, seed + (uint64_t)j);
  const std::vector<float> B = small_ints((size_t)kK * kN, seed + kDistinctA);
  float *a[kDistinctA];
  for (int j = 0; j < kDistinctA; j++) a[j] = upload(A[j]);
  float *b = upload(B);
  float *c = device_alloc<float>((size_t)kM * kN);

  cublasHandle_t h;
  CHECK_CUBLAS(cublasCreate(&h));  // its stream: NULL, the legacy default stream
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  CHECK_CUDA(cudaDeviceSynchronize());

  gemm(h, a[0], b, c, false);  // warm-up, on the NULL stream
  CHECK_CUDA(cudaDeviceSynchronize());

  cudaGraphExec_t exec = nullptr;
  cudaStream_t cap = nullptr;
  if (graph) {
    cap = new_stream();
    CHECK_CUBLAS(cublasSetStream(h, cap));
    // A fixed workspace, so nothing is allocated inside the capture.
    const size_t ws_bytes = 32u << 20;
    CHECK_CUBLAS(cublasSetWorkspace(h, device_alloc<char>(ws_bytes), ws_bytes));
    cudaGraph_t g;
    CHECK_CUDA(cudaStreamBeginCapture(cap, cudaStreamCaptureModeGlobal));
    for (int j = 0; j < gemms; j++) gemm(h, a[j % kDistinctA], b, c, j != 0);
    CHECK_CUDA(cudaStreamEndCapture(cap, &g));
    CHECK_CUDA(cudaGraphInstantiate(&exec, g, 0));
    CHECK_CUDA(cudaGraphDestroy(g));
    CHECK_CUDA(cudaGraphUpload(exec, 0));
    CHECK_CUDA(cudaDeviceSynchronize());
  }

  region_mark(true);  // the timed region, as profilers (and the replay model) see it
  const double t0 = now_us();
  CHECK_CUDA(cudaEventRecord(start, 0));
  if (graph)
    CHECK_CUDA(cudaGraphLaunch(exec, 0));
  else
    for (int j = 0; j < gemms; j++) gemm(h, a[j % kDistinctA], b, c, j != 0);
  CHECK_CUDA(cudaEventRecord(stop, 0));
  CHECK_CUDA(cudaEventSynchronize(stop));
  const double t1 = now_us();
  region_mark(false);
  float ms = 0.0f;
  CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));

  std::vector<float> Cv((size_t)kM * kN);
  CHECK_CUDA(cudaMemcpy(Cv.data(), c, Cv.size() * sizeof(float), cudaMemcpyDeviceToHost));
  std::vector<uint32_t> got(Cv.size());
  for (size_t i = 0; i < Cv.size(); i++) got[i] = (uint32_t)(int32_t)Cv[i];

  // CPU model: C = (sum_j A[j % 4]) * B in int32 (exact, as on the GPU).
  const std::vector<uint32_t> want = gemm_sum_model(A, kDistinctA, B, gemms, kM, kN, kK);
  const bool ok = check_equal("C", got, want);

  if (exec) CHECK_CUDA(cudaGraphExecDestroy(exec));
  if (cap) CHECK_CUDA(cudaStreamDestroy(cap));
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  CHECK_CUBLAS(cublasDestroy(h));

  printf("gemms: %d\n", graph ? 1 : 1 + gemms);
  if (graph) printf("graph_launches: 1\n");
  printf("host_time_us: %.3f\n", t1 - t0);
  return report(kLaunchesUnknown, checksum_of(got), (double)ms * 1e3, ok);
}
