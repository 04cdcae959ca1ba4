// capture_worker -- an application thread captures graphs in the GLOBAL capture mode while
// another thread keeps the library's worker busy building graphs of new sequences: no capture
// may be invalidated (docs/DESIGN.md, "The worker"; the brief's ordering.md on capture modes).
//
// Thread L (launcher), on its own stream and buffer xl: for pattern p in 0..P-1, a sequence of
// 2 + p % 5 op kernels whose kinds depend on p, run 6 times in a row, stream sync after each
// run: every pattern becomes a new template whose graph the worker builds.
// Thread C (capturer), on its own stream and buffer xc, at the same time: C times, capture
// [op2(s=i), op3(s=i+1), op5(s=i+2)] in cudaStreamCaptureModeGlobal, instantiate, launch,
// sync. Any invalidated capture fails its cudaStreamEndCapture: CHECK_CUDA exits non-zero.
// Both buffers are checked against the host.
#include <thread>

#include "common.h"
#include "ops.h"

namespace {

constexpr uint32_t kElems = 4096;
const dim3 kGrid(16), kBlock(256);

int pattern_len(int p) { return 2 + p % 5; }
int pattern_kind(int p, int k) { return (p * 3 + k * 5) % 8; }

void launcher(int patterns, cudaStream_t st, uint32_t *x, bool relaxed) {
  // its stream syncs would be "potentially unsafe" calls while the other thread captures in
  // GLOBAL mode: the thread says it makes them knowingly (as an application must)
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  if (relaxed) CHECK_CUDA(cudaThreadExchangeStreamCaptureMode(&mode));
  for (int p = 0; p < patterns; p++)
    for (int rep = 0; rep < 6; rep++) {
      for (int k = 0; k < pattern_len(p); k++)
        launch_op(pattern_kind(p, k), kGrid, kBlock, st, x, x, (uint32_t)(p * 7 + rep), kElems);
      CHECK_LAUNCH();
      CHECK_CUDA(cudaStreamSynchronize(st));
    }
}

const int kCapKind[3] = {2, 3, 5};

void capturer(int captures, cudaStream_t st, uint32_t *x) {
  for (int i = 0; i < captures; i++) {
    cudaGraph_t graph;
    CHECK_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    for (int k = 0; k < 3; k++) launch_op(kCapKind[k], kGrid, kBlock, st, x, x, (uint32_t)(i + k), kElems);
    CHECK_CUDA(cudaStreamEndCapture(st, &graph));
    CHECK_LAUNCH();
    cudaGraphExec_t exec;
    CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    CHECK_CUDA(cudaGraphLaunch(exec, st));
    CHECK_CUDA(cudaStreamSynchronize(st));
    CHECK_CUDA(cudaGraphExecDestroy(exec));
    CHECK_CUDA(cudaGraphDestroy(graph));
  }
}

}  // namespace

int main(int argc, char **argv) {
  Args a(argc, argv,
         "capture_worker: one thread captures in GLOBAL mode while another's sequences are "
         "being graphed");
  const long long patterns = a.num("patterns", 200, 1, 100000, "sequences the launching thread makes graphs of");
  const long long captures = a.num("captures", 400, 1, 1000000, "graphs the other thread captures");
  const long long relaxed = a.num("relaxed", 1, 0, 1, "the launching thread's capture mode is RELAXED");
  const uint64_t seed = seed_flag(a);
  a.done();

  cudaStream_t sl = new_stream(), sc = new_stream();
  std::vector<uint32_t> il, ic;
  uint32_t *xl = upload_random(kElems, seed, il);
  uint32_t *xc = upload_random(kElems, seed + 1, ic);
  CHECK_CUDA(cudaDeviceSynchronize());

  const double t0 = now_us();
  std::thread tl(launcher, (int)patterns, sl, xl, relaxed != 0);
  std::thread tc(capturer, (int)captures, sc, xc);
  tl.join();
  tc.join();
  const double us = now_us() - t0;

  const std::vector<uint32_t> gl = from_device(xl, kElems), gc = from_device(xc, kElems);
  std::vector<uint32_t> rl = il, rc = ic;
  long long launches = 0;
  for (int p = 0; p < patterns; p++)
    for (int rep = 0; rep < 6; rep++)
      for (int k = 0; k < pattern_len(p); k++, launches++)
        cpu_op(pattern_kind(p, k), rl.data(), rl.data(), (uint32_t)(p * 7 + rep), 0, kElems);
  for (int i = 0; i < captures; i++)
    for (int k = 0; k < 3; k++, launches++)
      cpu_op(kCapKind[k], rc.data(), rc.data(), (uint32_t)(i + k), 0, kElems);
  const bool ok = check_equal("launcher", gl, rl) && check_equal("capturer", gc, rc);
  printf("captures: %lld\n", captures);
  return report(launches, checksum_of(gl, gc), us, ok);
}
