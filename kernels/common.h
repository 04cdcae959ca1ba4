// common.h -- shared host helpers for the libautograph sample apps (kernels/*.cu, *.cpp).
//
// Every app: parses --name=value flags (Args), checks every CUDA call (CHECK_CUDA / CHECK_CU:
// print the failing call, exit 2), times the timed loop with a host monotonic clock
// (time_phases: warm-up, sync, timed iterations, sync), verifies its GPU result against a CPU
// model and ends with the standard result lines (report(), checksum_of()).
//
// Include cuda_runtime.h (implicit in .cu files) and/or cuda.h BEFORE this header to get the
// matching error-check macros.
#pragma once

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <dlfcn.h>
#if defined(CUDART_VERSION)
#include <cuda_profiler_api.h>
#elif defined(CUDA_VERSION)
#include <cudaProfiler.h>
#endif
#include <thread>
#include <vector>

#include <unistd.h>

// ---------------------------------------------------------------------------------------------
// Failure exits.  Exit codes: 0 OK, 1 MISMATCH, 2 CUDA error or bad command line, 3 spin timeout.

[[noreturn]] inline void die(int code) {
  fflush(stdout);
  fflush(stderr);
  exit(code);
}

// ---------------------------------------------------------------------------------------------
// Command line: flags are --name=value only.  Each query registers the flag for --help and marks
// it known; done() then rejects anything unknown, so a typo in a test never goes unnoticed.

class Args {
 public:
  Args(int argc, char **argv, const char *about) : about_(about), prog_(argv[0]) {
    for (int i = 1; i < argc; i++) {
      const char *a = argv[i];
      if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
        help_ = true;
        continue;
      }
      const char *eq = strchr(a, '=');
      if (strncmp(a, "--", 2) != 0 || !eq || eq == a + 2) {
        fprintf(stderr, "%s: bad argument '%s' (flags are --name=value; see --help)\n", prog_, a);
        die(2);
      }
      flags_.push_back(Flag{std::string(a + 2, eq), std::string(eq + 1), false});
    }
  }

  // Integer flag in [lo, hi].
  long long num(const char *name, long long def, long long lo, long long hi, const char *what) {
    char line[256];
    snprintf(line, sizeof line, "  --%s=N  (%lld..%lld, default %lld)  %s", name, lo, hi, def,
             what);
    usage_ += line;
    usage_ += '\n';
    const char *v = find(name);
    if (!v) return def;
    char *end = nullptr;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi) {
      fprintf(stderr, "%s: --%s=%s: expected an integer in %lld..%lld\n", prog_, name, v, lo, hi);
      die(2);
    }
    return x;
  }

  // String flag restricted to the '|'-separated choices.
  std::string choice(const char *name, const char *def, const char *choices, const char *what) {
    char line[256];
    snprintf(line, sizeof line, "  --%s=%s  (default %s)  %s", name, choices, def, what);
    usage_ += line;
    usage_ += '\n';
    const char *v = find(name);
    std::string val = v ? v : def;
    std::string all = std::string("|") + choices + "|";
    if (all.find("|" + val + "|") == std::string::npos) {
      fprintf(stderr, "%s: --%s=%s: expected one of %s\n", prog_, name, val.c_str(), choices);
      die(2);
    }
    return val;
  }

  // Free-form string flag.
  std::string str(const char *name, const char *def, const char *what) {
    char line[256];
    snprintf(line, sizeof line, "  --%s=STRING  (default '%s')  %s", name, def, what);
    usage_ += line;
    usage_ += '\n';
    const char *v = find(name);
    return v ? v : def;
  }

  // Call after all queries: handles --help and unknown flags.
  void done() {
    if (help_) {
      printf("%s\n\nusage: %s [--name=value ...]\n%s", about_, prog_, usage_.c_str());
      die(0);
    }
    for (const Flag &f : flags_)
      if (!f.used) {
        fprintf(stderr, "%s: unknown flag --%s (see --help)\n", prog_, f.name.c_str());
        die(2);
      }
  }

 private:
  struct Flag {
    std::string name, value;
    bool used;
  };
  const char *find(const char *name) {
    const char *v = nullptr;
    for (Flag &f : flags_)
      if (f.name == name) {
        f.used = true;
        v = f.value.c_str();  // the last occurrence wins
      }
    return v;
  }
  const char *about_;
  const char *prog_;
  bool help_ = false;
  std::vector<Flag> flags_;
  std::string usage_;
};

// The loop flags every app shares.
struct LoopFlags {
  long long iters, warmup;
  long long total() const { return iters + warmup; }
};

inline LoopFlags loop_flags(Args &a, long long def_iters) {
  LoopFlags f;
  f.iters = a.num("iters", def_iters, 1, 100000000, "timed iterations");
  f.warmup = a.num("warmup", 10, 0, 100000000, "untimed iterations run first");
  return f;
}

inline uint64_t seed_flag(Args &a) {
  return (uint64_t)a.num("seed", 1, 0, LLONG_MAX, "seed of the input data / random choices");
}

// ---------------------------------------------------------------------------------------------
// Time.

inline double now_us() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

// Simulated host work (no CUDA calls, no sleeping: a sleeping thread changes launch timing).
inline void busy_wait_us(double us) {
  if (us <= 0) return;
  const double end = now_us() + us;
  while (now_us() < end) {
  }
}

// The timed region's marks, as a program tells a profiler (cudaProfilerStart/Stop): the trace
// recorder keeps them, and the replay model takes its ratio over them (docs/MODEL.md).  The
// result is ignored: without a profiler they do nothing.
inline void region_mark(bool start) {
#if defined(CUDART_VERSION)
  (void)(start ? cudaProfilerStart() : cudaProfilerStop());
#elif defined(CUDA_VERSION)
  (void)(start ? cuProfilerStart() : cuProfilerStop());
#else
  (void)start;
#endif
}

// Where the time of a timed region goes, iteration by iteration: with APP_ITER_US=FILE set,
// time_phases runs the timed body one iteration at a time and writes each iteration's host
// time (us, one a line) to FILE.  An app without a sync per iteration shows only how long the
// host took to issue it.
inline void write_iter_us(const char *path, const std::vector<double> &t, double t0) {
  FILE *f = fopen(path, "w");
  if (!f) return;
  for (double ti : t) {
    fprintf(f, "%.3f\n", ti - t0);
    t0 = ti;
  }
  fclose(f);
}

// The library on against paused inside one process (INPROC_ROUNDS=B, bench/inproc.py; the
// same as bench/fw_common.py's): the timed iterations [warmup, total) in B rounds of two
// blocks, one with the library on and one paused (autograph_pause, looked up at run time:
// without the library both run alike, so a reference run does the same iterations), the
// order alternating (on-off, off-on, ...), each block's first iteration untimed (a switch's
// own cost).  Prints "inproc_block: ROUND on|off US" per block (host us per timed iteration,
// the block ended by sync()); what is left of the iterations runs last, on.
// The rounds INPROC_ROUNDS asks for (0: none); read once (inproc_same_work asks every iteration).
inline long long inproc_rounds() {
  static const long long rounds = [] {
    const char *inproc = getenv("INPROC_ROUNDS");
    return inproc ? atoll(inproc) : 0LL;
  }();
  return rounds;
}

// Iterations a block of inproc_blocks runs: the timed ones cut into 2 x rounds.
inline long long inproc_block_len(const LoopFlags &loop, long long rounds) {
  return loop.iters / (2 * rounds);
}

// The iteration whose work iteration g repeats: g itself, except under INPROC_ROUNDS, where a
// round's second block repeats the first block's iterations. For an app whose iterations
// differ (kernels/irregular.cu): both blocks of a round then do the same work, else every
// process's on/paused comparison leans the way its seed's blocks happen to.
inline long long inproc_same_work(const LoopFlags &loop, long long g) {
  const long long rounds = inproc_rounds();
  if (rounds <= 0) return g;
  const long long m = inproc_block_len(loop, rounds);
  if (m < 2 || g < loop.warmup || g >= loop.warmup + 2 * rounds * m) return g;
  const long long off = g - loop.warmup;
  return loop.warmup + off / (2 * m) * 2 * m + off % m;
}

template <class Body, class Sync>
void inproc_blocks(const LoopFlags &loop, long long rounds, Body &&body, Sync &&sync) {
  using call = int (*)(void);
  call pause = (call)dlsym(RTLD_DEFAULT, "autograph_pause");
  call resume = (call)dlsym(RTLD_DEFAULT, "autograph_resume");
  if (!pause || !resume) {
    pause = resume = nullptr;
    printf("inproc: libautograph is not preloaded: the rounds run unpaused\n");
  }
  const long long m = inproc_block_len(loop, rounds);
  if (m < 2) {
    fprintf(stderr, "inproc: %lld iterations cannot make %lld rounds of two blocks of at least 2\n",
            loop.iters, rounds);
    exit(2);
  }
  long long g = loop.warmup;
  for (long long r = 0; r < rounds; r++) {
    for (int k = 0; k < 2; k++) {
      const bool off = (k == 0) == (r % 2 == 1);
      if (off && pause) pause();
      body(g, g + 1);
      sync();
      const double t0 = now_us();
      body(g + 1, g + m);
      sync();
      const double t = now_us() - t0;
      if (off && resume) resume();
      g += m;
      printf("inproc_block: %lld %s %.3f\n", r, off ? "off" : "on", t / (double)(m - 1));
    }
  }
  body(g, loop.total());
}

// The skeleton of every app's main loop: body(0, warmup) untimed, sync(), then
// body(warmup, total) between sync() and sync(), timed on the host (and marked as the
// region).  Returns us per timed iteration.  body(g0, g1) runs iterations [g0, g1).  With
// INPROC_ROUNDS set, the timed iterations run in inproc_blocks (the time returned is then of
// both kinds of block together).
template <class Body, class Sync>
double time_phases(const LoopFlags &loop, Body &&body, Sync &&sync) {
  const char *iter_us = getenv("APP_ITER_US");
  const long long rounds = inproc_rounds();
  std::vector<double> marks;
  if (iter_us) marks.reserve((size_t)loop.iters);
  body(0LL, loop.warmup);
  sync();
  region_mark(true);
  const double t0 = now_us();
  if (rounds > 0) {
    inproc_blocks(loop, rounds, body, sync);
  } else if (iter_us) {
    for (long long g = loop.warmup; g < loop.total(); g++) {
      body(g, g + 1);
      marks.push_back(now_us());
    }
  } else {
    body(loop.warmup, loop.total());
  }
  sync();
  const double t1 = now_us();
  region_mark(false);
  if (iter_us) write_iter_us(iter_us, marks, t0);
  return (t1 - t0) / (double)loop.iters;
}

// ---------------------------------------------------------------------------------------------
// Deterministic data: splitmix64 PRNG and FNV-1a 64 checksum.

struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed) {}
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint32_t u32() { return (uint32_t)(next() >> 32); }
  uint32_t below(uint32_t n) { return (uint32_t)(((next() >> 32) * n) >> 32); }  // [0, n)
};

inline std::vector<uint32_t> random_words(size_t n, uint64_t seed) {
  Rng r(seed);
  std::vector<uint32_t> v(n);
  for (auto &x : v) x = r.u32();
  return v;
}

struct Fnv1a {
  uint64_t h = 0xCBF29CE484222325ull;
  void add(const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001B3ull;
  }
  template <class T>
  void add(const std::vector<T> &v) {
    add(v.data(), v.size() * sizeof(T));
  }
};

// ---------------------------------------------------------------------------------------------
// Verification and the standard result lines.

// Compares element-wise; reports the first few differences on stderr.
inline bool check_equal(const char *what, const uint32_t *got, const uint32_t *want, size_t n) {
  size_t bad = 0;
  for (size_t i = 0; i < n; i++)
    if (got[i] != want[i] && bad++ < 5)
      fprintf(stderr, "mismatch: %s[%zu] = %08" PRIx32 ", expected %08" PRIx32 "\n", what, i,
              got[i], want[i]);
  if (bad) fprintf(stderr, "mismatch: %s: %zu of %zu elements differ\n", what, bad, n);
  return bad == 0;
}

inline bool check_equal(const char *what, const std::vector<uint32_t> &got,
                        const std::vector<uint32_t> &want) {
  if (got.size() != want.size()) {
    fprintf(stderr, "mismatch: %s: size %zu, expected %zu\n", what, got.size(), want.size());
    return false;
  }
  return check_equal(what, got.data(), want.data(), got.size());
}

// FNV-1a 64 over several buffers in order (the checksum line of most apps).
template <class... V>
uint64_t checksum_of(const V &...v) {
  Fnv1a h;
  (h.add(v), ...);
  return h.h;
}

constexpr long long kLaunchesUnknown = -1;  // for apps whose library launches internally

// Prints the lines the tests parse and returns the exit code.
inline int report(long long launches, uint64_t checksum, double us_per_iter, bool ok) {
  if (launches >= 0)
    printf("launches: %lld\n", launches);
  else
    printf("launches: unknown\n");
  printf("checksum: %016" PRIx64 "\n", checksum);
  printf("time_us_per_iter: %.3f\n", us_per_iter);
  printf("result: %s\n", ok ? "OK" : "MISMATCH");
  fflush(stdout);
  return ok ? 0 : 1;
}

// ---------------------------------------------------------------------------------------------
// CPU models are per element; split big ones over host threads so verification stays cheap
// next to the GPU run.  fn(lo, hi) handles elements [lo, hi); each thread gets >= grain of them.

template <class F>
void parallel_for(size_t n, F fn, size_t grain = 64) {
  size_t t = std::thread::hardware_concurrency();
  if (t > 16) t = 16;
  if (t > n / grain) t = n / grain;
  if (t <= 1) {
    fn((size_t)0, n);
    return;
  }
  const size_t chunk = (n + t - 1) / t;
  std::vector<std::thread> pool;
  for (size_t lo = 0; lo < n; lo += chunk) pool.emplace_back(fn, lo, lo + chunk < n ? lo + chunk : n);
  for (auto &th : pool) th.join();
}

// ---------------------------------------------------------------------------------------------
// Files: the driver-API apps load driver_kernels.fatbin from next to their executable.

inline std::string next_to_exe(const char *name) {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return name;
  exe[n] = 0;
  std::string dir(exe);
  return dir.substr(0, dir.rfind('/') + 1) + name;
}

inline std::vector<char> read_file(const std::string &path) {
  FILE *f = fopen(path.c_str(), "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s: %s\n", path.c_str(), strerror(errno));
    die(2);
  }
  std::vector<char> data;
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) data.insert(data.end(), chunk, chunk + n);
  fclose(f);
  return data;
}

// ---------------------------------------------------------------------------------------------
// CUDA runtime API helpers.

#ifdef __CUDA_RUNTIME_H__

inline void check_cuda_(cudaError_t e, const char *call, const char *file, int line) {
  if (e == cudaSuccess) return;
  fprintf(stderr, "CUDA error: %s failed: %s (%s) at %s:%d\n", call, cudaGetErrorName(e),
          cudaGetErrorString(e), file, line);
  die(2);
}
#define CHECK_CUDA(call) check_cuda_((call), #call, __FILE__, __LINE__)
// After <<<>>> launches (they return nothing): picks up a launch error of any earlier launch.
#define CHECK_LAUNCH() check_cuda_(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

template <class T>
T *device_alloc(size_t n) {
  T *p = nullptr;
  CHECK_CUDA(cudaMalloc((void **)&p, n * sizeof(T)));
  return p;
}

inline void to_device(uint32_t *d, const std::vector<uint32_t> &h) {
  CHECK_CUDA(cudaMemcpy(d, h.data(), h.size() * sizeof(uint32_t), cudaMemcpyHostToDevice));
}

inline std::vector<uint32_t> from_device(const uint32_t *d, size_t n) {
  std::vector<uint32_t> h(n);
  CHECK_CUDA(cudaMemcpy(h.data(), d, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  return h;
}

inline void device_sync() { CHECK_CUDA(cudaDeviceSynchronize()); }

// time_phases bracketed by cudaDeviceSynchronize.
template <class Body>
double time_phases(const LoopFlags &loop, Body &&body) {
  return time_phases(loop, body, device_sync);
}

// A device buffer of n random words (seed), its initial contents kept in init; synchronous.
inline uint32_t *upload_random(size_t n, uint64_t seed, std::vector<uint32_t> &init) {
  init = random_words(n, seed);
  uint32_t *d = device_alloc<uint32_t>(n);
  to_device(d, init);
  return d;
}

inline cudaStream_t new_stream(unsigned flags = cudaStreamDefault) {
  cudaStream_t st;
  CHECK_CUDA(cudaStreamCreateWithFlags(&st, flags));
  return st;
}

// Hand-written graphs: kernel nodes chained in launch order.
inline cudaKernelNodeParams kernel_params(const void *fn, dim3 grid, dim3 block, void **args) {
  cudaKernelNodeParams p = {};
  p.func = (void *)fn;
  p.gridDim = grid;
  p.blockDim = block;
  p.sharedMemBytes = 0;
  p.kernelParams = args;
  p.extra = nullptr;
  return p;
}

// Appends a kernel node depending on `prev` (none if null); the arguments are copied.
inline cudaGraphNode_t add_kernel_node(cudaGraph_t g, cudaGraphNode_t prev, const void *fn,
                                       dim3 grid, dim3 block, void **args) {
  cudaKernelNodeParams p = kernel_params(fn, grid, block, args);
  cudaGraphNode_t node;
  CHECK_CUDA(cudaGraphAddKernelNode(&node, g, prev ? &prev : nullptr, prev ? 1 : 0, &p));
  return node;
}

// The per-iteration update of a hand-written graph: new arguments for one instantiated node.
inline void set_kernel_node(cudaGraphExec_t e, cudaGraphNode_t node, const void *fn, dim3 grid,
                            dim3 block, void **args) {
  cudaKernelNodeParams p = kernel_params(fn, grid, block, args);
  CHECK_CUDA(cudaGraphExecKernelNodeSetParams(e, node, &p));
}

#endif  // __CUDA_RUNTIME_H__

// ---------------------------------------------------------------------------------------------
// CUDA driver API helpers.

#ifdef __cuda_cuda_h__

inline void check_cu_(CUresult r, const char *call, const char *file, int line) {
  if (r == CUDA_SUCCESS) return;
  const char *name = nullptr, *text = nullptr;
  cuGetErrorName(r, &name);
  cuGetErrorString(r, &text);
  fprintf(stderr, "CUDA error: %s failed: %s (%s) at %s:%d\n", call, name ? name : "?",
          text ? text : "?", file, line);
  die(2);
}
#define CHECK_CU(call) check_cu_((call), #call, __FILE__, __LINE__)

// The driver-API apps' start: device 0's primary context made current, and the kernel image
// (`module`, or driver_kernels.fatbin next to the executable) loaded.
inline CUmodule driver_setup(const std::string &module) {
  CHECK_CU(cuInit(0));
  CUdevice dev;
  CHECK_CU(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CHECK_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK_CU(cuCtxSetCurrent(ctx));
  const std::vector<char> image =
      read_file(module.empty() ? next_to_exe("driver_kernels.fatbin") : module);
  CUmodule mod;
  CHECK_CU(cuModuleLoadData(&mod, image.data()));
  return mod;
}

#endif  // __cuda_cuda_h__
