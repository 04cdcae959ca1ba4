// lifetime -- the process events a launch interceptor must survive, each after a loop long
// enough for sequences to be graphed (so that launches are held when the event comes):
//
//   --event=exit   every iteration's sequence has, in its middle, a kernel that writes a value
//                  into host memory shared with a watcher process (anonymous MAP_SHARED memory,
//                  registered with cudaHostRegister; the watcher is forked before any CUDA
//                  call). The last iteration launches only the first half of its sequence, up
//                  to and including that kernel (which writes the final marker) -- a prefix of
//                  a known sequence, which an interceptor holds -- then calls exit(0) with
//                  nothing synchronised. The watcher wakes when the process is gone and writes
//                  what it finds to --file; `--check=1` reads that file: the marker must be
//                  there, as it is when the launches go out eagerly.
//   --event=fork   fork() in mid-run (after graphs exist); the child makes no CUDA call and
//                  exits 0; the parent goes on and verifies everything.
//   --event=reset  cudaDeviceReset() in mid-run, then allocate again and go on: results exact.
//
// Every iteration: N kernels (op kinds cycled) over one buffer, then a sync; the CPU model runs
// the same operations. Flags: --event --file --iters --n.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "ops.h"

namespace {

constexpr uint32_t kElems = 4096;
const dim3 kGrid(16), kBlock(256);

// The marker kernel: one thread stores v into host-mapped memory and makes it visible.
__global__ void mark_kernel(volatile uint32_t *where, uint32_t v) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    *where = v;
    __threadfence_system();
  }
}

// One iteration's sequence: n op kernels with a marker kernel after the first half; `upto`
// launches only the first half and the marker (the exit case), with the marker `last`.
void iteration(long long g, int n, uint32_t *x, uint32_t *mark, cudaStream_t st,
               std::vector<uint32_t> &ref, long long &launches, bool upto = false,
               uint32_t last = 0) {
  for (int k = 0; k < n; k++) {
    if (k == n / 2) {
      mark_kernel<<<1, 32, 0, st>>>(mark, upto ? last : (uint32_t)g);
      launches++;
      if (upto) break;
    }
    launch_op(k % kOpKinds, kGrid, kBlock, st, x, x, (uint32_t)(g * 131 + k), kElems);
    cpu_op(k % kOpKinds, ref.data(), ref.data(), (uint32_t)(g * 131 + k), 0, kElems);
    launches++;
  }
  CHECK_LAUNCH();
}

// The exit case: memory shared with a watcher process, forked before any CUDA call, that
// waits for this process to end (its end of a pipe closes) and then writes the marker it
// sees to `file`.
void *shared_with_watcher(const std::string &file) {
  void *map = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  int fds[2];
  if (map == MAP_FAILED || pipe(fds) != 0) die(2);
  pid_t pid = fork();
  if (pid < 0) die(2);
  if (pid == 0) {  // the watcher: no CUDA at all
    close(fds[1]);
    char c;
    while (read(fds[0], &c, 1) > 0) {
    }
    std::string tmp = file + ".tmp";  // written whole, then renamed: never seen half done
    FILE *f = fopen(tmp.c_str(), "wb");
    if (f) {
      fwrite(map, sizeof(uint32_t), 1, f);
      fclose(f);
      rename(tmp.c_str(), file.c_str());
    }
    _exit(0);
  }
  close(fds[0]);  // fds[1] stays open until this process is gone
  return map;
}

// Where the marker kernel writes: memory shared with the watcher (exit) or mapped host memory.
uint32_t *marker_target(int ev, void *shared) {
  void *map = shared;
  if (ev == 0) {
    CHECK_CUDA(cudaHostRegister(map, 4096, cudaHostRegisterMapped));
  } else {
    CHECK_CUDA(cudaHostAlloc(&map, 4096, cudaHostAllocMapped));
  }
  uint32_t *d = nullptr;
  CHECK_CUDA(cudaHostGetDevicePointer((void **)&d, map, 0));
  return d;
}

}  // namespace

int main(int argc, char **argv) {
  Args a(argc, argv, "lifetime: exit with held launches, fork, cudaDeviceReset in mid-run");
  const LoopFlags loop = loop_flags(a, 100);
  const int n = (int)a.num("n", 16, 2, 1024, "kernels per iteration");
  const std::string evs = a.choice("event", "exit", "exit|fork|reset", "the event in mid-run");
  const int ev = evs == "exit" ? 0 : evs == "fork" ? 1 : 2;
  const bool check = a.num("check", 0, 0, 1, "1: only check the marker file of an exit run") != 0;
  std::string file = a.str("file", "", "marker file (exit)");
  a.done();

  const uint32_t kMarker = 0xC0FFEE00u + (uint32_t)n;
  if (ev == 0 && file.empty()) {
    fprintf(stderr, "lifetime: --event=0 needs --file\n");
    die(2);
  }
  if (check) {  // the exit run's marker, written by its watcher after the process was gone
    int fd = -1;
    for (int tries = 0; tries < 100 && fd < 0; tries++) {  // the watcher may still be writing
      fd = open(file.c_str(), O_RDONLY);
      if (fd < 0) usleep(50000);
    }
    uint32_t got = 0;
    bool ok = fd >= 0 && read(fd, &got, sizeof got) == (ssize_t)sizeof got && got == kMarker;
    if (fd >= 0) close(fd);
    printf("marker: %08x (want %08x)\n", got, kMarker);
    return report(0, got, 0.0, ok);
  }

  if (!file.empty()) remove(file.c_str());
  void *shared = ev == 0 ? shared_with_watcher(file) : nullptr;
  std::vector<uint32_t> ref = random_words(kElems, seed_flag(a));
  uint32_t *x = device_alloc<uint32_t>(kElems);
  to_device(x, ref);
  cudaStream_t st;
  CHECK_CUDA(cudaStreamCreate(&st));
  uint32_t *mark = marker_target(ev, shared);
  long long launches = 0;
  const long long total = loop.total(), half = total / 2;
  const double t0 = now_us();

  for (long long g = 0; g < total; g++) {
    if (ev == 1 && g == half) {
      fflush(stdout);
      pid_t pid = fork();
      if (pid < 0) die(2);
      if (pid == 0) _exit(0);  // the child: no CUDA call at all (exit handlers run, none may touch CUDA)
      int status = 0;
      waitpid(pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        printf("child exit status %d\n", status);
        die(1);
      }
    }
    if (ev == 2 && g == half) {
      std::vector<uint32_t> now = from_device(x, kElems);
      CHECK_CUDA(cudaStreamDestroy(st));
      CHECK_CUDA(cudaDeviceReset());
      x = device_alloc<uint32_t>(kElems);
      to_device(x, now);
      CHECK_CUDA(cudaStreamCreate(&st));
      mark = marker_target(ev, shared);
    }
    if (ev == 0 && g == total - 1) {
      iteration(g, n, x, mark, st, ref, launches, true, kMarker);
      printf("exiting with %d launches unsynchronised\n", n / 2 + 1);
      fflush(stdout);
      exit(0);
    }
    iteration(g, n, x, mark, st, ref, launches);
    CHECK_CUDA(cudaStreamSynchronize(st));
  }
  const double t1 = now_us();
  std::vector<uint32_t> got = from_device(x, kElems);
  Fnv1a h;
  h.add(got);
  return report(launches, h.h, (t1 - t0) / (double)loop.iters, check_equal("x", got, ref));
}
