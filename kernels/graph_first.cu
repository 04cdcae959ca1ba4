// graph_first: what a process's first CUDA graph costs on the host, against its second and
// later ones.  A program that times a short region once pays, inside that region, whatever
// an interposer does the first time (G2 in docs/BENCHMARKS.md): if the driver's first graph
// of a process carries a one-time cost, a graph built there cannot pay back.
//
// In a fresh process, after one eager launch (the context and module are up): ROUNDS times,
// capture K tiny kernels on a created stream, instantiate, upload, launch and synchronise, and
// print each step's host time per round; then the eager launches alone for comparison.
#include <cmath>

#include "common.h"

namespace {

__global__ void tiny_kernel(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 0.5f + 1.0f;
}

}  // namespace

int main(int argc, char **argv) {
  Args a(argc, argv, "graph_first: host time of a process's first CUDA graphs, step by step");
  const int rounds = (int)a.num("rounds", 4, 1, 100, "graphs built one after the other");
  const int k = (int)a.num("kernels", 2, 1, 1024, "kernels per graph");
  a.done();
  const int n = 4096;
  float *x;
  CHECK_CUDA(cudaMalloc(&x, n * sizeof(float)));
  CHECK_CUDA(cudaMemset(x, 0, n * sizeof(float)));
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  tiny_kernel<<<16, 256, 0, s>>>(x, n);  // context, module, first launch: outside the rounds
  CHECK_LAUNCH();
  CHECK_CUDA(cudaStreamSynchronize(s));
  printf("round capture_us instantiate_us upload_us launch_us sync_us total_us\n");
  for (int r = 0; r < rounds; r++) {
    const double t0 = now_us();
    cudaGraph_t g;
    CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < k; i++) tiny_kernel<<<16, 256, 0, s>>>(x, n);
    CHECK_CUDA(cudaStreamEndCapture(s, &g));
    const double t1 = now_us();
    cudaGraphExec_t e;
    CHECK_CUDA(cudaGraphInstantiate(&e, g, 0));
    const double t2 = now_us();
    CHECK_CUDA(cudaGraphUpload(e, s));
    const double t3 = now_us();
    CHECK_CUDA(cudaGraphLaunch(e, s));
    const double t4 = now_us();
    CHECK_CUDA(cudaStreamSynchronize(s));
    const double t5 = now_us();
    printf("%d %.1f %.1f %.1f %.1f %.1f %.1f\n", r, t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4,
           t5 - t0);
    CHECK_CUDA(cudaGraphExecDestroy(e));
    CHECK_CUDA(cudaGraphDestroy(g));
  }
  const double t0 = now_us();
  for (int i = 0; i < k; i++) tiny_kernel<<<16, 256, 0, s>>>(x, n);
  CHECK_LAUNCH();
  CHECK_CUDA(cudaStreamSynchronize(s));
  printf("eager %d kernels + sync: %.1f us\n", k, now_us() - t0);
  std::vector<float> h(n);
  CHECK_CUDA(cudaMemcpy(h.data(), x, n * sizeof(float), cudaMemcpyDeviceToHost));
  // every element went through 1 + rounds * k + k steps of x = x / 2 + 1 from 0
  double want = 0;
  for (int i = 0; i < 1 + rounds * k + k; i++) want = want * 0.5 + 1.0;
  bool ok = fabs(h[0] - want) < 1e-4 && fabs(h[n - 1] - want) < 1e-4;
  return report(1 + (rounds + 1) * k, checksum_of(h), 0.0, ok);
}
