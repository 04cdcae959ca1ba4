// app_graphs -- an application that uses CUDA graphs itself: it captures its own graph once,
// launches it every iteration between eager kernels, and captures a second graph mid-run (the
// captured launches must NOT execute eagerly; that graph is launched exactly once).  All work is
// in place on one 4096-word buffer on one created stream, stream sync per iteration.
//
// Before warm-up: capture G1 = [op2(s=11), op3(s=12), op5(s=13)], instantiate.
// Iteration g (0-based, warm-up included), G = warmup + iters:
//   if g == G/2: capture G2 = [op6(s=21), op7(s=22)], instantiate, launch once, sync, destroy
//   op0(s=g) eager ; launch G1 ; op1(s=g^0x55) eager ; sync
// Kernel launch calls: 3 + 2 (captured) + 2*G.  Graph launches: G + 1.
#include "common.h"
#include "ops.h"

namespace {

constexpr uint32_t kElems = 4096;
const dim3 kGrid(16), kBlock(256);

// Kernel kinds and scalars of the two captured graphs.
const int kG1Kind[3] = {2, 3, 5};
const uint32_t kG1Scalar[3] = {11, 12, 13};
const int kG2Kind[2] = {6, 7};
const uint32_t kG2Scalar[2] = {21, 22};

cudaGraphExec_t capture(cudaStream_t st, uint32_t *x, const int *kinds, const uint32_t *scalars,
                        int count) {
  cudaGraph_t graph;
  CHECK_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
  for (int k = 0; k < count; k++) launch_op(kinds[k], kGrid, kBlock, st, x, x, scalars[k], kElems);
  CHECK_CUDA(cudaStreamEndCapture(st, &graph));
  CHECK_LAUNCH();
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  CHECK_CUDA(cudaGraphDestroy(graph));
  return exec;
}

void run(long long g0, long long g1, long long total, cudaStream_t st, uint32_t *x,
         cudaGraphExec_t g1exec) {
  for (long long g = g0; g < g1; g++) {
    if (g == total / 2) {
      cudaGraphExec_t g2 = capture(st, x, kG2Kind, kG2Scalar, 2);
      CHECK_CUDA(cudaGraphLaunch(g2, st));
      CHECK_CUDA(cudaStreamSynchronize(st));
      CHECK_CUDA(cudaGraphExecDestroy(g2));
    }
    op_kernel<0><<<kGrid, kBlock, 0, st>>>(x, x, (uint32_t)g, kElems);
    CHECK_CUDA(cudaGraphLaunch(g1exec, st));
    op_kernel<1><<<kGrid, kBlock, 0, st>>>(x, x, (uint32_t)g ^ 0x55u, kElems);
    CHECK_LAUNCH();
    CHECK_CUDA(cudaStreamSynchronize(st));
  }
}

}  // namespace

int main(int argc, char **argv) {
  Args a(argc, argv,
         "app_graphs: the app captures and launches its own graphs between eager kernels");
  const LoopFlags loop = loop_flags(a, 100);
  const uint64_t seed = seed_flag(a);
  a.done();

  cudaStream_t st = new_stream();
  std::vector<uint32_t> init;
  uint32_t *x = upload_random(kElems, seed, init);
  CHECK_CUDA(cudaDeviceSynchronize());

  cudaGraphExec_t g1exec = capture(st, x, kG1Kind, kG1Scalar, 3);
  const double us = time_phases(
      loop, [&](long long g0, long long g1) { run(g0, g1, loop.total(), st, x, g1exec); });

  const std::vector<uint32_t> got = from_device(x, kElems);
  std::vector<uint32_t> ref = init;
  uint32_t *r = ref.data();
  for (long long g = 0; g < loop.total(); g++) {
    if (g == loop.total() / 2)
      for (int k = 0; k < 2; k++) cpu_op(kG2Kind[k], r, r, kG2Scalar[k], 0, kElems);
    cpu_op(0, r, r, (uint32_t)g, 0, kElems);
    for (int k = 0; k < 3; k++) cpu_op(kG1Kind[k], r, r, kG1Scalar[k], 0, kElems);
    cpu_op(1, r, r, (uint32_t)g ^ 0x55u, 0, kElems);
  }
  const bool ok = check_equal("x", got, ref);

  printf("graph_launches: %lld\n", loop.total() + 1);
  return report(5 + 2 * loop.total(), checksum_of(got), us, ok);
}
