// multistream -- a producer/consumer pipeline over S created (blocking) streams, ordered only by
// events recorded in the MIDDLE of each stream's sequence; device sync per iteration.
//
// Iteration g (0-based, warm-up included), buffers b[s] (pipeline) and t[s] (per-stream tails):
//   stream 0:            b[0] = op0(b[0], s = g)              ; record ev[0] ; t[0] = tail(t[0], b[0])
//   stream s = 1..S-1:   wait ev[s-1] ; b[s] = cons(b[s], b[s-1]) ; record ev[s] ; t[s] = tail(t[s], b[s])
// --legacy=1 adds, after the pipeline and with NO event:
//   legacy stream (0):   L = leg(L, b[S-1])       (implicitly waits for all blocking streams)
//   stream min(1, S-1):  M = cons(M, L)           (implicitly waits for the legacy kernel)
// The kernels that produce what another stream reads (op0, cons, leg) read their inputs, then
// hold their result back for --delay-us before storing it: a consumer that does not really wait
// reads stale data and the run reports MISMATCH, instead of passing by luck.
// --repeat=R launches each of these kernels R times in a row (the same operation applied R
// times), so that the runs between ordering points are long enough to be graphed.
// Launches per iteration: R*(2*S (+2 with --legacy=1)).
#include "common.h"
#include "ops.h"

namespace {

constexpr uint32_t kElems = 4096;
constexpr int kBlocks = 16, kThreads = 256;

// Binary element ops: dst = f(dst, src); K 0: consumer, 1: tail, 2: legacy reader.
template <int K>
__host__ __device__ inline uint32_t combine(uint32_t dst, uint32_t src, uint32_t i, uint32_t s) {
  if constexpr (K == 0) return dst * 0x2545F491u + src + s;
  if constexpr (K == 1) return rotl32(dst ^ src, 5) + s + i;
  return (dst + rotl32(src, 11)) * 0x9E3779B1u ^ s;
}

// Busy-waits ns nanoseconds of the GPU's global timer.
__device__ void spin_ns(uint32_t ns) {
  if (ns == 0) return;
  uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

__global__ void produce_kernel(uint32_t *x, uint32_t s, uint32_t delay_ns) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= kElems) return;
  const uint32_t v = op<0>(x[i], i, s);
  spin_ns(delay_ns);
  x[i] = v;
}

template <int K>
__global__ void combine_kernel(uint32_t *dst, const uint32_t *src, uint32_t s, uint32_t delay_ns) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= kElems) return;
  const uint32_t v = combine<K>(dst[i], src[i], i, s);
  spin_ns(delay_ns);
  dst[i] = v;
}

template <int K>
void cpu_combine(std::vector<uint32_t> &dst, const std::vector<uint32_t> &src, uint32_t s) {
  for (uint32_t i = 0; i < kElems; i++) dst[i] = combine<K>(dst[i], src[i], i, s);
}

// Per-launch scalars, so each stream's kernels differ from iteration to iteration.
uint32_t scalar(long long g, int stage, int which) {
  return (uint32_t)g * 977u + (uint32_t)stage * 31u + (uint32_t)which;
}

struct Bufs {
  std::vector<uint32_t *> b, t;
  uint32_t *L, *M;
};

void run(int S, int R, bool legacy, uint32_t delay, long long g0, long long g1, const Bufs &d,
         const std::vector<cudaStream_t> &st, const std::vector<cudaEvent_t> &ev) {
  const dim3 grid(kBlocks), block(kThreads);
  for (long long g = g0; g < g1; g++) {
    for (int r = 0; r < R; r++)
      produce_kernel<<<grid, block, 0, st[0]>>>(d.b[0], scalar(g, 0, 0), delay);
    CHECK_CUDA(cudaEventRecord(ev[0], st[0]));
    for (int r = 0; r < R; r++)
      combine_kernel<1><<<grid, block, 0, st[0]>>>(d.t[0], d.b[0], scalar(g, 0, 1), 0);
    for (int s = 1; s < S; s++) {
      CHECK_CUDA(cudaStreamWaitEvent(st[s], ev[s - 1], 0));
      for (int r = 0; r < R; r++)
        combine_kernel<0><<<grid, block, 0, st[s]>>>(d.b[s], d.b[s - 1], scalar(g, s, 0), delay);
      CHECK_CUDA(cudaEventRecord(ev[s], st[s]));
      for (int r = 0; r < R; r++)
        combine_kernel<1><<<grid, block, 0, st[s]>>>(d.t[s], d.b[s], scalar(g, s, 1), 0);
    }
    if (legacy) {
      for (int r = 0; r < R; r++)
        combine_kernel<2><<<grid, block, 0, 0>>>(d.L, d.b[S - 1], scalar(g, S, 0), delay);
      for (int r = 0; r < R; r++)
        combine_kernel<0><<<grid, block, 0, st[S > 1 ? 1 : 0]>>>(d.M, d.L, scalar(g, S, 1), 0);
    }
    CHECK_LAUNCH();
    CHECK_CUDA(cudaDeviceSynchronize());
  }
}

}  // namespace

int main(int argc, char **argv) {
  Args a(argc, argv,
         "multistream: producer/consumer pipeline across streams ordered by mid-sequence events");
  const LoopFlags loop = loop_flags(a, 100);
  const uint64_t seed = seed_flag(a);
  const int S = (int)a.num("streams", 3, 1, 64, "number of created streams");
  const bool legacy =
      a.num("legacy", 0, 0, 1, "1: also legacy-stream launches ordered only implicitly") != 0;
  const int R = (int)a.num("repeat", 1, 1, 1000, "launches of each kernel in a row");
  const uint32_t delay_ns = (uint32_t)a.num(
      "delay-us", 20, 0, 1000000, "producers hold their results back this long (us)") * 1000u;
  a.done();

  // Host buffers: 0..S-1 pipeline, S..2S-1 tails, 2S legacy L, 2S+1 M.
  const int nbuf = 2 * S + 2;
  std::vector<std::vector<uint32_t>> init(nbuf);
  std::vector<uint32_t *> dev(nbuf);
  for (int k = 0; k < nbuf; k++) {
    init[k] = random_words(kElems, seed + (uint64_t)k);
    dev[k] = device_alloc<uint32_t>(kElems);
    to_device(dev[k], init[k]);
  }
  Bufs d;
  d.b.assign(dev.begin(), dev.begin() + S);
  d.t.assign(dev.begin() + S, dev.begin() + 2 * S);
  d.L = dev[2 * S];
  d.M = dev[2 * S + 1];

  std::vector<cudaStream_t> st(S);
  std::vector<cudaEvent_t> ev(S);
  for (int s = 0; s < S; s++) {
    CHECK_CUDA(cudaStreamCreate(&st[s]));  // blocking: synchronizes with the legacy stream
    CHECK_CUDA(cudaEventCreateWithFlags(&ev[s], cudaEventDisableTiming));
  }
  CHECK_CUDA(cudaDeviceSynchronize());

  run(S, R, legacy, delay_ns, 0, loop.warmup, d, st, ev);
  const double t0 = now_us();
  run(S, R, legacy, delay_ns, loop.warmup, loop.total(), d, st, ev);
  const double t1 = now_us();

  std::vector<std::vector<uint32_t>> got(nbuf);
  for (int k = 0; k < nbuf; k++) got[k] = from_device(dev[k], kElems);

  // CPU model, in the order the dependencies define.
  std::vector<std::vector<uint32_t>> ref = init;
  auto &L = ref[2 * S], &M = ref[2 * S + 1];
  for (long long g = 0; g < loop.total(); g++) {
    for (int r = 0; r < R; r++)
      cpu_op(0, ref[0].data(), ref[0].data(), scalar(g, 0, 0), 0, kElems);
    for (int r = 0; r < R; r++) cpu_combine<1>(ref[S], ref[0], scalar(g, 0, 1));
    for (int s = 1; s < S; s++) {
      for (int r = 0; r < R; r++) cpu_combine<0>(ref[s], ref[s - 1], scalar(g, s, 0));
      for (int r = 0; r < R; r++) cpu_combine<1>(ref[S + s], ref[s], scalar(g, s, 1));
    }
    if (legacy) {
      for (int r = 0; r < R; r++) cpu_combine<2>(L, ref[S - 1], scalar(g, S, 0));
      for (int r = 0; r < R; r++) cpu_combine<0>(M, L, scalar(g, S, 1));
    }
  }
  bool ok = true;
  Fnv1a h;
  for (int k = 0; k < nbuf; k++) {
    char name[32];
    snprintf(name, sizeof name, "buffer%d", k);
    ok &= check_equal(name, got[k], ref[k]);
    h.add(got[k]);
  }
  const long long launches = loop.total() * R * (2LL * S + (legacy ? 2 : 0));
  return report(launches, h.h, (t1 - t0) / (double)loop.iters, ok);
}
