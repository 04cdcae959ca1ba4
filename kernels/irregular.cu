// irregular -- a launch stream that never repeats: each iteration launches a random number
// (1..16) of kernels, each a random one of 8 (op_kernel<0..7>) with a random grid (1..16 blocks
// of 64, 128 or 256 threads, covering a prefix of one 4096-word buffer) and a random scalar, and
// syncs the stream after a launch with probability 1/5.  The choices come from --seed and the
// iteration's index; the CPU model replays the same choices.  Under INPROC_ROUNDS
// (bench/inproc.py) the two blocks of a round draw the same choices: a block is ~250 random
// iterations whose launches per iteration vary by ~3% from block to block, and every process
// runs the same seed, so blocks of other content made the on/paused comparison of every
// process lean the same way.  Eager only (--mode=graph is accepted and runs eagerly).
// Launches: the sum of the random per-iteration counts (printed; fixed by --seed, --warmup,
// --iters).
#include "common.h"
#include "ops.h"

namespace {

constexpr uint32_t kElems = 4096;

struct Choice {
  int kind;
  uint32_t blocks, threads, s;
  bool sync_after;
};

// Draws are made in the same order by the GPU loop and the CPU model.
uint32_t draw_count(Rng &r) { return 1 + r.below(16); }

Choice draw_launch(Rng &r) {
  Choice c;
  c.kind = (int)r.below(kOpKinds);
  c.blocks = 1 + r.below(16);
  c.threads = 64u << r.below(3);
  c.s = r.u32();
  c.sync_after = r.below(5) == 0;
  return c;
}

// The generator of iteration g's choices (counter-based: any iteration's, in any order; the
// same for two iterations that do the same work, common.h's inproc_same_work).
Rng iteration_rng(uint64_t seed, const LoopFlags &loop, long long g) {
  const long long w = inproc_same_work(loop, g);
  return Rng(seed ^ 0x1A2B3C4D5E6F7788ull ^ (0xD1B54A32D192ED03ull * (uint64_t)(w + 1)));
}

long long run(long long g0, long long g1, uint64_t seed, const LoopFlags &loop, cudaStream_t st,
              uint32_t *x) {
  long long launches = 0;
  for (long long g = g0; g < g1; g++) {
    Rng r = iteration_rng(seed, loop, g);
    const uint32_t count = draw_count(r);
    for (uint32_t k = 0; k < count; k++) {
      const Choice c = draw_launch(r);
      launch_op(c.kind, dim3(c.blocks), dim3(c.threads), st, x, x, c.s, c.blocks * c.threads);
      launches++;
      if (c.sync_after) {
        CHECK_LAUNCH();
        CHECK_CUDA(cudaStreamSynchronize(st));
      }
    }
    CHECK_LAUNCH();
  }
  return launches;
}

}  // namespace

int main(int argc, char **argv) {
  Args a(argc, argv, "irregular: a random, never-repeating launch stream with random syncs");
  const LoopFlags loop = loop_flags(a, 200);
  const uint64_t seed = seed_flag(a);
  const std::string mode =
      a.choice("mode", "eager", "eager|graph", "eager only; graph runs eagerly");
  a.done();
  if (mode == "graph")
    fprintf(stderr, "irregular: no hand-written graph for a never-repeating stream; "
                    "running eagerly\n");

  cudaStream_t st = new_stream();
  std::vector<uint32_t> init;
  uint32_t *x = upload_random(kElems, seed, init);
  CHECK_CUDA(cudaDeviceSynchronize());

  // Launch choices use their own generators, distinct from the data's.
  long long launches = 0;
  const double us = time_phases(
      loop, [&](long long g0, long long g1) { launches += run(g0, g1, seed, loop, st, x); });

  const std::vector<uint32_t> got = from_device(x, kElems);
  std::vector<uint32_t> ref = init;
  for (long long g = 0; g < loop.total(); g++) {
    Rng rr = iteration_rng(seed, loop, g);
    const uint32_t count = draw_count(rr);
    for (uint32_t k = 0; k < count; k++) {
      const Choice c = draw_launch(rr);
      cpu_op(c.kind, ref.data(), ref.data(), c.s, 0, (size_t)c.blocks * c.threads);
    }
  }
  const bool ok = check_equal("x", got, ref);

  return report(launches, checksum_of(got), us, ok);
}
