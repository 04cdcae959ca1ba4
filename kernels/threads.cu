// threads -- T host threads, each running its own loop of tiny-kernel sequences on its own
// stream and buffer (stream sync per iteration), joined at the end; verified per thread.
//
// threads:       each worker launches on a stream it cudaStreamCreate's.
// threads-ptsz:  built with --default-stream per-thread; each worker launches on stream 0, its
//                per-thread default stream.
// --legacy=1:    the main thread concurrently runs the same kind of loop on the legacy stream
//                (handle 0 in the legacy build, cudaStreamLegacy in the ptsz build).
//
// Worker t (and the main thread as t = T) in iteration g (0-based, warm-up included), step
// j = 0..n-1: op_kernel<(j + t) % 8> in place, s = t * 65536 + g * 16 + j.
// Launches: (warmup + iters) * n * (T + legacy).
#include <condition_variable>
#include <mutex>

#include "common.h"
#include "ops.h"

namespace {

constexpr uint32_t kElems = 4096;
const dim3 kGrid(16), kBlock(256);

#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
constexpr bool kPtsz = true;
#else
constexpr bool kPtsz = false;
#endif

int kind(int t, long long j) { return (int)((j + t) % kOpKinds); }
uint32_t scalar(int t, long long g, long long j) {
  return (uint32_t)t * 65536u + (uint32_t)g * 16u + (uint32_t)j;
}

// Phases are separated by barriers so the main thread can time the timed phase of all threads.
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> lk(m_);
    const long gen = gen_;
    if (++count_ == n_) {
      count_ = 0;
      gen_++;
      cv_.notify_all();
    } else {
      cv_.wait(lk, [&] { return gen_ != gen; });
    }
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int n_, count_ = 0;
  long gen_ = 0;
};

struct Loop {
  int t;
  long long n;
  uint32_t *x;
  cudaStream_t st;
  void run(long long g0, long long g1) const {
    for (long long g = g0; g < g1; g++) {
      for (long long j = 0; j < n; j++)
        launch_op(kind(t, j), kGrid, kBlock, st, x, x, scalar(t, g, j), kElems);
      CHECK_LAUNCH();
      CHECK_CUDA(cudaStreamSynchronize(st));
    }
  }
};

}  // namespace

int main(int argc, char **argv) {
  Args a(argc, argv,
         kPtsz ? "threads-ptsz: host threads launching on their per-thread default streams"
               : "threads: host threads launching on their own created streams");
  const LoopFlags loop = loop_flags(a, 100);
  const uint64_t seed = seed_flag(a);
  const int T = (int)a.num("threads", 4, 1, 256, "worker threads");
  const long long n = a.num("n", 8, 1, 100000, "kernels per iteration");
  const bool legacy =
      a.num("legacy", 0, 0, 1, "1: the main thread also launches on the legacy stream") != 0;
  a.done();

  const int owners = T + (legacy ? 1 : 0);  // buffer t belongs to worker t; T to main
  std::vector<std::vector<uint32_t>> init(owners);
  std::vector<uint32_t *> dev(owners);
  for (int t = 0; t < owners; t++) {
    init[t] = random_words(kElems, seed + (uint64_t)t);
    dev[t] = device_alloc<uint32_t>(kElems);
    to_device(dev[t], init[t]);
  }
  CHECK_CUDA(cudaDeviceSynchronize());

  // Barriers: ready, warm-up done, go, timed phase done.
  Barrier bar(T + 1);
  std::vector<std::thread> workers;
  for (int t = 0; t < T; t++) {
    workers.emplace_back([&, t] {
      cudaStream_t st = 0;  // per-thread default stream in the ptsz build
      if (!kPtsz) CHECK_CUDA(cudaStreamCreate(&st));
      const Loop l{t, n, dev[t], st};
      bar.wait();
      l.run(0, loop.warmup);
      bar.wait();
      bar.wait();
      l.run(loop.warmup, loop.total());
      bar.wait();
    });
  }
  const Loop main_loop{T, n, legacy ? dev[T] : nullptr, kPtsz ? cudaStreamLegacy : 0};
  bar.wait();
  if (legacy) main_loop.run(0, loop.warmup);
  bar.wait();
  CHECK_CUDA(cudaDeviceSynchronize());
  const double t0 = now_us();
  bar.wait();
  if (legacy) main_loop.run(loop.warmup, loop.total());
  bar.wait();
  CHECK_CUDA(cudaDeviceSynchronize());
  const double t1 = now_us();
  for (auto &w : workers) w.join();

  bool ok = true;
  Fnv1a h;
  for (int t = 0; t < owners; t++) {
    const std::vector<uint32_t> got = from_device(dev[t], kElems);
    std::vector<uint32_t> ref = init[t];
    for (long long g = 0; g < loop.total(); g++)
      for (long long j = 0; j < n; j++)
        cpu_op(kind(t, j), ref.data(), ref.data(), scalar(t, g, j), 0, kElems);
    char name[32];
    snprintf(name, sizeof name, "thread%d", t);
    ok &= check_equal(name, got, ref);
    h.add(got);
  }
  return report(loop.total() * n * owners, h.h, (t1 - t0) / (double)loop.iters, ok);
}
