// costs -- the cost table of the replay model (`autograph simulate`, docs/MODEL.md "The cost
// table"): what each driver call costs the host and what the GPU adds around work, measured on
// this GPU with the driver API, written as JSON (schema libautograph-costs/1) to stdout and as
// a table for people to stderr.  Built by `make apps` into build/kernels/costs; run it alone on
// an otherwise idle GPU, without LD_PRELOAD:
//
//   build/kernels/costs > bench/costs/h100.json
//
// Every value is in nanoseconds.  Everything is warmed up first (one untimed pass of each
// measurement), and each value is a median over many repetitions.  Host times are
// CLOCK_MONOTONIC around the call(s) on the calling thread; a "batch" measurement times k
// back-to-back calls and divides by k (the clock's own ~20 ns then vanishes), median over
// batches.  The kernel is `tiny`: 16 blocks x 256 threads, p[i] = p[i] * a + b on 4096 floats.
// Kernels, spin and flag helpers are compiled into this file; the CUfunctions come from
// cudaGetFuncBySymbol (cudart only creates the primary context and loads the module), and
// every measured call is a driver API call.
//
// host_ns (host time of one call as the caller sees it):
//   launch                    cuLaunchKernel(tiny) on a created stream, batches of 32 queued
//                             behind a 300 us spin kernel (so the launch queue never blocks)
//   launch_ex                 the same through cuLaunchKernelEx, no attributes
//   graph_launch_base,        cuGraphLaunch of chains of 1, 8, 32, 128, 512 tiny kernel nodes
//   graph_launch_per_node     (uploaded), 8 launches at a time queued behind a spin kernel:
//                             least-squares line through the per-size medians
//   exec_set_params_per_node  cuGraphExecKernelNodeSetParams on every node of a 128-node exec
//                             (a scalar changes), time / 128
//   graph_launch_per_updated_node  the cuGraphLaunch right after those updates less the next
//                             one (none), / 128: the updates' part the driver defers to the
//                             launch (0.3-0.45 us a node on the H100, kernels/node_update)
//   exec_set_params_fn_per_node, graph_launch_per_fn_updated_node  the same two with the
//                             nodes' function changed each time (tiny and tiny_alt in turn: one
//                             parameter layout, as the members of a function class)
//   exec_set_params_per_byte, graph_launch_per_updated_byte, graph_launch_per_node_byte
//                             the node set, the launch after it and the launch without updates
//                             for 128 nodes of `big` (a 1024-byte parameter block, as
//                             PyTorch's kernels take hundreds of bytes to a few KiB), less tiny's,
//                             per byte beyond tiny's 16 (and per node for the last)
//   exec_update_base,         cuGraphExecUpdate(exec, template): the template graph's nodes
//   exec_update_per_node      first given the new scalar (cuGraphKernelNodeSetParams, untimed),
//                             so it is up to date; line through the sizes 1..512
//   graph_add_node            cuGraphAddKernelNode appending to a chain (one dependency),
//                             building 512-node chains, time / 512
//   instantiate_base, _per_node   cuGraphInstantiateWithFlags(flags 0), line through the sizes
//   upload_base, _per_node    cuGraphUpload of a freshly instantiated exec, line through sizes
//   graph_destroy             cuGraphExecDestroy of a (completed) 32-node exec; cuGraphDestroy
//                             of the 32-node graph is printed on stderr beside it
//   event_create              cuEventCreate(CU_EVENT_DEFAULT: timing), batches of 64
//   event_record              cuEventRecord on an idle created stream, batches of 32
//   event_query               cuEventQuery of a completed event, batches of 100
//   event_elapsed             cuEventElapsedTime of two completed events, batches of 100
//   stream_wait_event         cuStreamWaitEvent(other stream, completed event), batches of 100
//   stream_sync_empty         cuStreamSynchronize of an idle stream, batches of 100
//   stream_query              cuStreamQuery of an idle stream, batches of 100
//   ctx_get_current, stream_get_flags, stream_get_ctx, func_get_param_info (index 0),
//   pointer_get_attribute     (CU_POINTER_ATTRIBUTE_MEMORY_TYPE of a device pointer):
//                             batches of 1000
//   memcpy_htod_async_pinned, memcpy_dtoh_async_pinned, memset_async (cuMemsetD8Async),
//   memcpy_dtod_async         8 bytes each, on an idle stream, batches of 16
//   memcpy_dtoh_async_pageable   8 bytes into malloc'ed memory on an idle stream, one call
//                             each (the call returns when the copy is done)
//
// gpu_ns (GPU time; "events around X" = cuEventRecord(a), X, cuEventRecord(b) on one stream,
// all queued behind a spin kernel so the host is far ahead, elapsed(a, b)):
//   tiny_kernel               events around one tiny kernel, median of 2000: the same
//                             measurement AUTOGRAPH_TRACE_GPU makes of every traced call, so
//                             traced durations and this constant mean the same thing
//   eager_kernel_gap          N = 1000 tiny kernels launched eagerly behind a spin kernel of
//                             N x 5 us (all are queued before the GPU gets to them): events
//                             around the N, T / N - tiny_kernel (may be negative where the
//                             events' own overhead exceeds the back-to-back gap)
//   graph_kernel_gap          likewise a 1000-node chain graph launched once: T / N - tiny_kernel
//   graph_boundary_gap        64 launches of an 8-node chain graph queued back to back behind a
//                             spin, events around them, against one 512-node chain:
//                             (T_64x8 - T_512) / 63, what a graph right behind another adds
//                             (a sequence replayed in pieces)
//   graph_pdl_overlap         how much earlier a kernel node reached by a programmatic edge
//                             starts than one reached by a full edge: 1000-node chains of a
//                             tiny kernel that waits for its predecessor and then triggers
//                             (cudaGridDependencySynchronize, cudaTriggerProgrammaticLaunch-
//                             Completion), full edges against programmatic ones:
//                             (T_full - T_programmatic) / 999
//   launch_latency            from the START of the host's cuLaunchKernel on an idle GPU to the
//                             kernel running: the kernel's first thread stores a flag in mapped
//                             pinned memory, the host polls it; latency = (host time the flag
//                             is seen - call start) - RTT / 2, RTT being the median round trip
//                             host -> GPU -> host through mapped memory (a kernel ping-pong).
//                             The RTT/2 split is an approximation (about +-RTT/4).
//   graph_launch_latency      likewise for cuGraphLaunch of a 1-node graph (uploaded)
//   memset_small              events around an 8-byte cuMemsetD8Async
//   memcpy_small_htod         events around an 8-byte cuMemcpyHtoDAsync from pinned memory
//   memcpy_small_dtoh         events around an 8-byte cuMemcpyDtoHAsync into pinned memory
//   graph_memset_gap          K = 200: graph B = kernel, memset, kernel, memset, ... (K of
//                             each) against graph A = K kernels (chains, launched behind a
//                             spin, events around): (T_B - T_A) / K - memset_small, i.e. what a
//                             memset node adds in a graph besides its own duration
//   graph_memcpy_gap          likewise with 8-byte DtoH memcpy nodes into pinned memory:
//                             (T_C - T_A) / K - memcpy_small_dtoh
//   tiny_kernel_span          the tiny kernel's own run time: first block's start to last
//                             block's end from %globaltimer stamps, median of 200
//   tiny_kernel_idle          events around one tiny kernel on an IDLE stream, recorded as the
//                             trace recorder records them (start event, launch, end event
//                             back to back), less the launch call's host time, median of 500
//                             (docs/MODEL.md: how the model reads traced durations)
//
// stderr also shows, for people: the timer's resolution, launch latency counted from the
// call's return, cuGraphDestroy, and what a boundary between graphs adds when each graph is
// sent only once the one before it has started (pieces sent as a held sequence comes in:
// chains of 8 and of 32 nodes, 64 launches, against the same launches queued), and what a
// boundary adds between distinct execs launched in turn over launches of one exec, and
// tiny_kernel_idle in a host-bound loop (the stream idle, not synchronised before each), and
// what a launch costs the calling thread while another thread of the process builds graphs
// (instantiates and uploads 128-node chains, as the library's worker does beside the
// application's launches) against the same launches with that thread idle.
#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <ctime>
#include <functional>
#include <thread>

#include "../kernels/common.h"

namespace {

constexpr int kBlocks = 16, kThreads = 256, kElems = kBlocks * kThreads;

__device__ __forceinline__ unsigned long long gtimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void tiny(float *p, float a, float b) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  p[i] = p[i] * a + b;
}

// tiny's twin, another function of the same parameters: a node whose function an exec update
// changes (a function class's members)
__global__ void tiny_alt(float *p, float a, float b) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  p[i] = p[i] * b + a;
}

// tiny with a 1024-byte parameter block, as PyTorch's elementwise and reduction kernels take
// blocks of hundreds of bytes to a few KiB (their TensorIterator offsets, shapes and strides):
// the driver copies a node's block when it is set and when the exec is next launched
constexpr int kBigBytes = 1024;
struct BigArgs {
  float *p;
  float a, b;
  unsigned char pad[kBigBytes - 16];
};
static_assert(sizeof(BigArgs) == kBigBytes, "BigArgs is the whole block");
__global__ void big(BigArgs x) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  x.p[i] = x.p[i] * x.a + x.b;
}

// tiny for programmatic dependent launch, as pdl_decode's kernels are: it waits for its
// predecessor before touching p and lets its dependent start once it has written (both no-ops
// where no programmatic edge leads to or from it).
__global__ void tiny_pdl(float *p, float a, float b) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  cudaGridDependencySynchronize();
  p[i] = p[i] * a + b;
  cudaTriggerProgrammaticLaunchCompletion();
}

// One thread waits ns on the global timer: holds the stream while the host queues work.
__global__ void spin(unsigned long long ns) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    const unsigned long long t0 = gtimer();
    while (gtimer() - t0 < ns) {
    }
  }
}

// The tiny kernel, and the first thread stores v into mapped host memory at its start.
__global__ void flag_tiny(float *p, float a, float b, unsigned *flag, unsigned v) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    *(volatile unsigned *)flag = v;
    __threadfence_system();
  }
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  p[i] = p[i] * a + b;
}

// The tiny kernel, and the first thread counts one more start in mapped host memory (one
// kernel of a chain at a time: a plain increment).
__global__ void count_tiny(float *p, float a, float b, unsigned *ctr) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    *(volatile unsigned *)ctr = *(volatile unsigned *)ctr + 1;
    __threadfence_system();
  }
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  p[i] = p[i] * a + b;
}

// Ping-pong through mapped host memory: for k = 1..n, wait for ping == k, store pong = k.
// Gives up after 2 s per round (the host reports the time-out).
__global__ void pong(unsigned *ping, unsigned *pongp, unsigned n) {
  for (unsigned k = 1; k <= n; k++) {
    const unsigned long long t0 = gtimer();
    while (*(volatile unsigned *)ping != k)
      if (gtimer() - t0 > 2000000000ull) return;
    *(volatile unsigned *)pongp = k;
    __threadfence_system();
  }
}

// The tiny kernel with %globaltimer stamps: slot[0] = min block start, slot[1] = max block end.
__global__ void stamped_tiny(float *p, float a, float b, unsigned long long *slot) {
  __shared__ unsigned long long t0;
  if (threadIdx.x == 0) t0 = gtimer();
  __syncthreads();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  p[i] = p[i] * a + b;
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicMin(&slot[0], t0);
    atomicMax(&slot[1], gtimer());
  }
}

// The smallest nonzero step of %globaltimer seen in 20000 reads.
__global__ void timer_step(unsigned long long *out) {
  unsigned long long last = gtimer(), best = ~0ull;
  for (int k = 0; k < 20000; k++) {
    const unsigned long long t = gtimer();
    if (t != last && t - last < best) best = t - last;
    last = t;
  }
  *out = best;
}

double now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Line {
  double base, per;
};

// Least squares y = base + per * x.
Line fit(const std::vector<double> &x, const std::vector<double> &y) {
  const double n = (double)x.size();
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); i++) {
    sx += x[i];
    sy += y[i];
    sxx += x[i] * x[i];
    sxy += x[i] * y[i];
  }
  const double per = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  return Line{(sy - per * sx) / n, per};
}

struct Ctx {
  CUcontext ctx;
  CUstream st, st2;
  CUfunction tiny, tiny_alt, tiny_pdl, big, spin, flag_tiny, count_tiny, pong, stamped, timer_step;
  CUdeviceptr buf, small, slot;
  void *pinned;           // 64 bytes, mapped
  unsigned *flag;         // inside pinned (host view)
  CUdeviceptr flag_dev;   // its device view
  float a = 1.0f, b = 0.0f;
  void *tiny_args[3];
  BigArgs big_args;
  void *big_args_p[1];
};

Ctx C;

void launch_tiny(CUstream st) {
  CHECK_CU(cuLaunchKernel(C.tiny, kBlocks, 1, 1, kThreads, 1, 1, 0, st, C.tiny_args, nullptr));
}

void launch_spin(CUstream st, double ns) {
  unsigned long long v = (unsigned long long)ns;
  void *args[] = {&v};
  CHECK_CU(cuLaunchKernel(C.spin, 1, 1, 1, 32, 1, 1, 0, st, args, nullptr));
}

// Median over `batches` of (host time of k calls of f) / k; one untimed batch first.  before()
// runs untimed before each batch, after() untimed after it.
double per_call(int batches, int k, const std::function<void()> &f,
                const std::function<void()> &before = [] {},
                const std::function<void()> &after = [] {}) {
  std::vector<double> v;
  for (int r = -1; r < batches; r++) {
    before();
    const double t0 = now_ns();
    for (int i = 0; i < k; i++) f();
    const double t1 = now_ns();
    after();
    if (r >= 0) v.push_back((t1 - t0) / k);
  }
  return median(v);
}

void sync(CUstream st) { CHECK_CU(cuStreamSynchronize(st)); }

// --- graphs --------------------------------------------------------------------------------

CUDA_KERNEL_NODE_PARAMS tiny_node(void **args) {
  CUDA_KERNEL_NODE_PARAMS p;
  memset(&p, 0, sizeof p);
  p.func = C.tiny;
  p.gridDimX = kBlocks;
  p.gridDimY = p.gridDimZ = 1;
  p.blockDimX = kThreads;
  p.blockDimY = p.blockDimZ = 1;
  p.kernelParams = args;
  return p;
}

// A chain of n nodes; kinds[i]: 'k' tiny kernel, 'm' 8-byte memset, 'c' 8-byte DtoH copy into
// pinned memory.  add_ns (if not null) gets the host time of all cuGraphAddKernelNode calls.
CUgraph chain(const std::string &kinds, std::vector<CUgraphNode> *nodes = nullptr,
              double *add_ns = nullptr) {
  CUgraph g;
  CHECK_CU(cuGraphCreate(&g, 0));
  CUgraphNode prev = nullptr;
  double t_add = 0;
  for (char kind : kinds) {
    CUgraphNode n;
    if (kind == 'k') {
      CUDA_KERNEL_NODE_PARAMS p = tiny_node(C.tiny_args);
      const double t0 = now_ns();
      CHECK_CU(cuGraphAddKernelNode(&n, g, prev ? &prev : nullptr, prev ? 1 : 0, &p));
      t_add += now_ns() - t0;
    } else if (kind == 'm') {
      CUDA_MEMSET_NODE_PARAMS p;
      memset(&p, 0, sizeof p);
      p.dst = C.small;
      p.pitch = 8;
      p.value = 0;
      p.elementSize = 1;
      p.width = 8;
      p.height = 1;
      CHECK_CU(cuGraphAddMemsetNode(&n, g, prev ? &prev : nullptr, prev ? 1 : 0, &p, C.ctx));
    } else {
      CUDA_MEMCPY3D p;
      memset(&p, 0, sizeof p);
      p.srcMemoryType = CU_MEMORYTYPE_DEVICE;
      p.srcDevice = C.small;
      p.dstMemoryType = CU_MEMORYTYPE_HOST;
      p.dstHost = (char *)C.pinned + 32;
      p.WidthInBytes = 8;
      p.Height = 1;
      p.Depth = 1;
      CHECK_CU(cuGraphAddMemcpyNode(&n, g, prev ? &prev : nullptr, prev ? 1 : 0, &p, C.ctx));
    }
    if (nodes) nodes->push_back(n);
    prev = n;
  }
  if (add_ns) *add_ns = t_add;
  return g;
}

// A chain of n tiny_pdl kernel nodes, each after the last through a programmatic edge (as
// stream capture makes one of a launch with programmatic stream serialisation) or, with
// programmatic false, a full one; null where the driver refuses it (the key is then left out
// of the table, which the simulator reads as no overlap, rather than the whole table lost).
CUgraph chain_pdl(int n, bool programmatic) {
  CUgraph g;
  CHECK_CU(cuGraphCreate(&g, 0));
  CUgraphNode prev = nullptr;
  for (int i = 0; i < n; i++) {
    CUDA_KERNEL_NODE_PARAMS p = tiny_node(C.tiny_args);
    p.func = C.tiny_pdl;
    CUgraphNode node;
    const bool full = prev && !programmatic;
    CUresult r = cuGraphAddKernelNode(&node, g, full ? &prev : nullptr, full ? 1 : 0, &p);
    if (!r && prev && programmatic) {
      CUgraphEdgeData e;
      memset(&e, 0, sizeof e);
      e.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
      e.from_port = CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC;
      r = cuGraphAddDependencies(g, &prev, &node, &e, 1);
    }
    if (r) {
      fprintf(stderr, "costs: a %s chain of PDL kernels: error %d; graph_pdl_overlap left out\n",
              programmatic ? "programmatic" : "full", (int)r);
      CHECK_CU(cuGraphDestroy(g));
      return nullptr;
    }
    prev = node;
  }
  return g;
}

CUgraphExec instantiate(CUgraph g) {
  CUgraphExec e;
  CHECK_CU(cuGraphInstantiateWithFlags(&e, g, 0));
  return e;
}

// Host times of cuGraphLaunch(e), 8 launches at a time queued behind a spin, 15 rounds (one
// untimed first): every sample.
std::vector<double> queued_launches(CUgraphExec e) {
  std::vector<double> lv;
  for (int r = -1; r < 15; r++) {
    launch_spin(C.st, 300e3);
    for (int i = 0; i < 8; i++) {
      const double t0 = now_ns();
      CHECK_CU(cuGraphLaunch(e, C.st));
      if (r >= 0) lv.push_back(now_ns() - t0);
    }
    sync(C.st);
  }
  return lv;
}

// Per round r (-1 untimed, then 20): round(r) sets what changes (untimed), then every node of
// e is set to node(r) (timed), then the launch after the sets against one after none: the
// medians, per node, of a set and of the sets' part the driver defers to the launch.
void node_set_costs(CUgraphExec e, const std::vector<CUgraphNode> &nodes,
                    const std::function<void(int)> &round,
                    const std::function<CUDA_KERNEL_NODE_PARAMS(int)> &node, double *per_set,
                    double *per_launch) {
  const double n = (double)nodes.size();
  std::vector<double> sv, dv;
  for (int r = -1; r < 20; r++) {
    round(r);
    const double t0 = now_ns();
    for (CUgraphNode nd : nodes) {
      CUDA_KERNEL_NODE_PARAMS p = node(r);
      CHECK_CU(cuGraphExecKernelNodeSetParams(e, nd, &p));
    }
    const double t1 = now_ns();
    CHECK_CU(cuGraphLaunch(e, C.st));
    const double t2 = now_ns();
    sync(C.st);
    const double t3 = now_ns();
    CHECK_CU(cuGraphLaunch(e, C.st));
    const double t4 = now_ns();
    sync(C.st);
    if (r >= 0) {
      sv.push_back((t1 - t0) / n);
      dv.push_back(((t2 - t1) - (t4 - t3)) / n);
    }
  }
  *per_set = median(sv);
  *per_launch = median(dv);
}

// GPU time (ns) of one launch of exec, events around it, queued behind a spin.
double graph_gpu_ns(CUgraphExec e, CUevent a, CUevent b) {
  launch_spin(C.st, 200e3);
  CHECK_CU(cuEventRecord(a, C.st));
  CHECK_CU(cuGraphLaunch(e, C.st));
  CHECK_CU(cuEventRecord(b, C.st));
  sync(C.st);
  float ms;
  CHECK_CU(cuEventElapsedTime(&ms, a, b));
  return (double)ms * 1e6;
}

double graph_gpu_median(CUgraphExec e, CUevent a, CUevent b, int reps) {
  graph_gpu_ns(e, a, b);  // warm-up
  std::vector<double> v;
  for (int r = 0; r < reps; r++) v.push_back(graph_gpu_ns(e, a, b));
  return median(v);
}

// GPU time (ns) of a burst of calls (op), events around it, all queued behind a spin of
// spin_ns: the median of 7 (after one untimed); warns when the host took longer than the
// spin to queue them (`what` may then include host time).
double burst_gpu_ns(double spin_ns, const std::function<void()> &op, CUevent a, CUevent b,
                    const char *what) {
  std::vector<double> v;
  int behind = 0;
  for (int r = -1; r < 7; r++) {
    launch_spin(C.st, spin_ns);
    const double t0 = now_ns();
    CHECK_CU(cuEventRecord(a, C.st));
    op();
    CHECK_CU(cuEventRecord(b, C.st));
    if (now_ns() - t0 > spin_ns) behind++;
    sync(C.st);
    float ms;
    CHECK_CU(cuEventElapsedTime(&ms, a, b));
    if (r >= 0) v.push_back((double)ms * 1e6);
  }
  if (behind)
    fprintf(stderr, "costs: WARNING: %d of 8 bursts took the host longer than the spin (%s "
            "may include host time)\n", behind, what);
  return median(v);
}

// Median of "events around op" over rounds x per samples, all queued behind a spin.
double events_around(int rounds, int per, const std::function<void()> &op) {
  std::vector<CUevent> ev(2 * per);
  for (auto &e : ev) CHECK_CU(cuEventCreate(&e, CU_EVENT_DEFAULT));
  std::vector<double> v;
  for (int r = -1; r < rounds; r++) {
    launch_spin(C.st, 1e6);
    for (int i = 0; i < per; i++) {
      CHECK_CU(cuEventRecord(ev[2 * i], C.st));
      op();
      CHECK_CU(cuEventRecord(ev[2 * i + 1], C.st));
    }
    sync(C.st);
    for (int i = 0; i < per && r >= 0; i++) {
      float ms;
      CHECK_CU(cuEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
      v.push_back((double)ms * 1e6);
    }
  }
  for (auto &e : ev) CHECK_CU(cuEventDestroy(e));
  return median(v);
}

// Host time until the flag (mapped memory) reads 1 after `go()`, which must start the work
// that stores it; returns {from go's start, from go's return}.  The GPU is idle before.
std::pair<double, double> flag_latency(const std::function<void()> &go) {
  volatile unsigned *flag = C.flag;
  *flag = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  busy_wait_us(20);  // let the GPU settle into idle
  const double t0 = now_ns();
  go();
  const double t_ret = now_ns();
  while (*flag != 1)
    if (now_ns() - t0 > 2e9) {
      fprintf(stderr, "costs: the flag kernel did not run within 2 s\n");
      die(2);
    }
  const double t1 = now_ns();
  sync(C.st);
  return {t1 - t0, t1 - t_ret};
}

std::string driver_version() {
  FILE *f = fopen("/proc/driver/nvidia/version", "r");
  if (f) {
    char line[512] = {0};
    const char *got = fgets(line, sizeof line, f);
    fclose(f);
    // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu ..." or, for the open
    // modules, "... UNIX Open Kernel Module for x86_64  580.159.04 ...": the first word that
    // starts with a digit and has a dot
    for (const char *m = got; m && *m;) {
      while (*m == ' ' || *m == '\t') m++;
      std::string w;
      while (*m && *m != ' ' && *m != '\t' && *m != '\n') w += *m++;
      if (!w.empty() && w[0] >= '0' && w[0] <= '9' && w.find('.') != std::string::npos) return w;
      if (*m == '\n') break;
    }
  }
  return "unknown";
}

std::string json_escape(const std::string &s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if ((unsigned char)c >= 0x20) o += c;
  }
  return o;
}

}  // namespace

int main(int argc, char **argv) {
  Args args(argc, argv,
            "costs: the replay model's cost table (host and GPU costs of driver calls), JSON on "
            "stdout, a table on stderr");
  args.done();
  const double t_start = now_ns();

  // cudart creates the primary context and gives us the CUfunctions; from here on, driver API.
  CHECK_CUDA(cudaSetDevice(0));
  CHECK_CUDA(cudaFree(nullptr));
  CHECK_CU(cuCtxGetCurrent(&C.ctx));
  CHECK_CUDA(cudaGetFuncBySymbol(&C.tiny, (const void *)tiny));
  CHECK_CUDA(cudaGetFuncBySymbol(&C.tiny_alt, (const void *)tiny_alt));
  CHECK_CUDA(cudaGetFuncBySymbol(&C.tiny_pdl, (const void *)tiny_pdl));
  CHECK_CUDA(cudaGetFuncBySymbol(&C.big, (const void *)big));
  CHECK_CUDA(cudaGetFuncBySymbol(&C.spin, (const void *)spin));
  CHECK_CUDA(cudaGetFuncBySymbol(&C.flag_tiny, (const void *)flag_tiny));
  CHECK_CUDA(cudaGetFuncBySymbol(&C.count_tiny, (const void *)count_tiny));
  CHECK_CUDA(cudaGetFuncBySymbol(&C.pong, (const void *)pong));
  CHECK_CUDA(cudaGetFuncBySymbol(&C.stamped, (const void *)stamped_tiny));
  CHECK_CUDA(cudaGetFuncBySymbol(&C.timer_step, (const void *)timer_step));

  CUdevice dev;
  CHECK_CU(cuCtxGetDevice(&dev));
  char name[256] = {0};
  CHECK_CU(cuDeviceGetName(name, sizeof name - 1, dev));
  int drv = 0;
  CHECK_CU(cuDriverGetVersion(&drv));

  CHECK_CU(cuStreamCreate(&C.st, CU_STREAM_NON_BLOCKING));
  CHECK_CU(cuStreamCreate(&C.st2, CU_STREAM_NON_BLOCKING));
  CHECK_CU(cuMemAlloc(&C.buf, kElems * sizeof(float)));
  CHECK_CU(cuMemsetD32(C.buf, 0, kElems));
  CHECK_CU(cuMemAlloc(&C.small, 64));
  CHECK_CU(cuMemAlloc(&C.slot, 2 * sizeof(unsigned long long)));
  CHECK_CU(cuMemHostAlloc(&C.pinned, 4096, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
  memset(C.pinned, 0, 4096);
  C.flag = (unsigned *)C.pinned;
  CHECK_CU(cuMemHostGetDevicePointer(&C.flag_dev, C.pinned, 0));
  C.tiny_args[0] = &C.buf;
  C.tiny_args[1] = &C.a;
  C.tiny_args[2] = &C.b;
  memset(&C.big_args, 0, sizeof C.big_args);
  C.big_args.p = (float *)C.buf;
  C.big_args.a = 1.0f;
  C.big_args_p[0] = &C.big_args;
  std::vector<char> pageable(4096, 0);
  CHECK_CU(cuCtxSynchronize());

  // Warm-up of everything the GPU runs.
  for (int i = 0; i < 100; i++) launch_tiny(C.st);
  launch_spin(C.st, 1000);
  sync(C.st);

  // ---- host: launches ----------------------------------------------------------------------
  const double h_launch = per_call(60, 32, [] { launch_tiny(C.st); },
                                   [] { launch_spin(C.st, 300e3); }, [] { sync(C.st); });
  CUlaunchConfig cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.gridDimX = kBlocks;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = kThreads;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.hStream = C.st;
  const double h_launch_ex = per_call(
      60, 32, [&] { CHECK_CU(cuLaunchKernelEx(&cfg, C.tiny, C.tiny_args, nullptr)); },
      [] { launch_spin(C.st, 300e3); }, [] { sync(C.st); });

  // ---- host: graphs ------------------------------------------------------------------------
  const int sizes[] = {1, 8, 32, 128, 512};
  std::vector<double> xs, g_launch, g_update, g_inst, g_upload, add_per;
  double set_params = NAN, launch_per_updated = NAN, exec_destroy = NAN, graph_destroy = NAN;
  double set_params_fn = NAN, launch_per_fn_updated = NAN;
  for (int n : sizes) {
    std::vector<CUgraphNode> nodes;
    double add_ns = 0;
    CUgraph g = chain(std::string((size_t)n, 'k'), &nodes, &add_ns);
    if (n == 512) add_per.push_back(add_ns / n);
    std::vector<double> inst, upl, edestroy;
    CUgraphExec e = nullptr;
    const int R = 12;
    for (int r = -1; r < R; r++) {
      double t0 = now_ns();
      e = instantiate(g);
      double t1 = now_ns();
      CHECK_CU(cuGraphUpload(e, C.st));
      double t2 = now_ns();
      sync(C.st);
      if (r >= 0) {
        inst.push_back(t1 - t0);
        upl.push_back(t2 - t1);
      }
      if (r < R - 1) {
        CHECK_CU(cuGraphLaunch(e, C.st));  // destroyed after a launch, as in use
        sync(C.st);
        t0 = now_ns();
        CHECK_CU(cuGraphExecDestroy(e));
        if (r >= 0) edestroy.push_back(now_ns() - t0);
      }
    }
    const std::vector<double> lv = queued_launches(e);
    // whole-graph update from an up-to-date template
    std::vector<double> uv;
    for (int r = -1; r < 12; r++) {
      C.a = (r % 2) ? 1.0f : -1.0f;
      for (CUgraphNode nd : nodes) {
        CUDA_KERNEL_NODE_PARAMS p = tiny_node(C.tiny_args);
        CHECK_CU(cuGraphKernelNodeSetParams(nd, &p));
      }
      CUgraphExecUpdateResultInfo info;
      memset(&info, 0, sizeof info);
      const double t0 = now_ns();
      CHECK_CU(cuGraphExecUpdate(e, g, &info));
      const double t1 = now_ns();
      if (info.result != CU_GRAPH_EXEC_UPDATE_SUCCESS) {
        fprintf(stderr, "costs: cuGraphExecUpdate result %d\n", (int)info.result);
        die(2);
      }
      if (r >= 0) uv.push_back(t1 - t0);
    }
    C.a = 1.0f;
    if (n == 128) {
      // every node set per round (a scalar changes; with alt_fn, the function too: tiny_alt,
      // then back to tiny), then the launch after the updates against one after none: the
      // updates' deferred part
      auto node_updates = [&](bool alt_fn, double *per_set, double *per_launch) {
        node_set_costs(
            e, nodes, [&](int r) { if (!alt_fn) C.b = (float)(r & 1); },
            [&](int r) {
              CUDA_KERNEL_NODE_PARAMS p = tiny_node(C.tiny_args);
              if (alt_fn && !(r & 1)) p.func = C.tiny_alt;
              return p;
            },
            per_set, per_launch);
        C.b = 0.0f;
      };
      node_updates(false, &set_params, &launch_per_updated);
      node_updates(true, &set_params_fn, &launch_per_fn_updated);
    }
    sync(C.st);
    CHECK_CU(cuGraphExecDestroy(e));
    if (n == 32) {
      exec_destroy = median(edestroy);
      const double t0 = now_ns();
      CHECK_CU(cuGraphDestroy(g));
      graph_destroy = now_ns() - t0;
    } else {
      CHECK_CU(cuGraphDestroy(g));
    }
    xs.push_back(n);
    g_launch.push_back(median(lv));
    g_update.push_back(median(uv));
    g_inst.push_back(median(inst));
    g_upload.push_back(median(upl));
  }
  for (int r = 0; r < 8; r++) {  // more graph_add_node samples
    double add_ns = 0;
    CUgraph g = chain(std::string(512, 'k'), nullptr, &add_ns);
    add_per.push_back(add_ns / 512);
    CHECK_CU(cuGraphDestroy(g));
  }
  const Line f_launch = fit(xs, g_launch), f_update = fit(xs, g_update),
             f_inst = fit(xs, g_inst), f_upload = fit(xs, g_upload);

  // ---- host: kernel nodes with a large parameter block -------------------------------------
  // A 128-node chain of `big` (a 1024-byte block) measured as tiny's 128-node chain above: its
  // launches with no update (8 at a time behind a spin), a node set of every node (b changes)
  // and the launch after those sets against one after none. Each key is the difference from
  // tiny's, per byte of the block beyond tiny's 16 (per node, for the launch without updates).
  double set_params_per_byte = NAN, launch_per_updated_byte = NAN, launch_per_node_byte = NAN;
  {
    const int n = 128;
    CUgraph g;
    CHECK_CU(cuGraphCreate(&g, 0));
    std::vector<CUgraphNode> nodes;
    CUDA_KERNEL_NODE_PARAMS bp = tiny_node(C.big_args_p);
    bp.func = C.big;
    for (int i = 0; i < n; i++) {
      CUgraphNode nd;
      const bool dep = !nodes.empty();
      CHECK_CU(cuGraphAddKernelNode(&nd, g, dep ? &nodes.back() : nullptr, dep ? 1 : 0, &bp));
      nodes.push_back(nd);
    }
    CUgraphExec e = instantiate(g);
    CHECK_CU(cuGraphUpload(e, C.st));
    sync(C.st);
    const std::vector<double> lv = queued_launches(e);
    double set = NAN, deferred = NAN;
    node_set_costs(
        e, nodes, [](int r) { C.big_args.b = (float)(r & 1); }, [&](int) { return bp; }, &set,
        &deferred);
    C.big_args.b = 0.0f;
    CHECK_CU(cuGraphExecDestroy(e));
    CHECK_CU(cuGraphDestroy(g));
    // (a difference under 0 is noise around none: 0, as the simulator takes no negative cost)
    const double extra = kBigBytes - 16;
    set_params_per_byte = std::max(0.0, (set - set_params) / extra);
    launch_per_updated_byte = std::max(0.0, (deferred - launch_per_updated) / extra);
    for (size_t i = 0; i < xs.size(); i++)
      if (xs[i] == n) launch_per_node_byte = std::max(0.0, (median(lv) - g_launch[i]) / n / extra);
    fprintf(stderr, "# 128 nodes of a %d-byte block: launch %.1f, node set %.1f a node, the "
            "launch after the sets %.1f a node more (tiny: %.1f, %.1f)\n", kBigBytes,
            median(lv), set, deferred, set_params, launch_per_updated);
  }

  // ---- host: events, streams, questions ----------------------------------------------------
  std::vector<CUevent> evs(64);
  const double h_event_create = per_call(
      30, 64, [&, i = 0]() mutable { CHECK_CU(cuEventCreate(&evs[i++ % 64], CU_EVENT_DEFAULT)); },
      [] {}, [&] {
        for (auto e : evs) CHECK_CU(cuEventDestroy(e));
      });
  CUevent e0, e1;
  CHECK_CU(cuEventCreate(&e0, CU_EVENT_DEFAULT));
  CHECK_CU(cuEventCreate(&e1, CU_EVENT_DEFAULT));
  const double h_event_record =
      per_call(50, 32, [&] { CHECK_CU(cuEventRecord(e0, C.st)); }, [] {}, [] { sync(C.st); });
  CHECK_CU(cuEventRecord(e1, C.st));
  sync(C.st);
  const double h_event_query = per_call(50, 100, [&] { CHECK_CU(cuEventQuery(e0)); });
  float ms_dummy;
  const double h_event_elapsed =
      per_call(50, 100, [&] { CHECK_CU(cuEventElapsedTime(&ms_dummy, e0, e1)); });
  const double h_wait_event =
      per_call(50, 100, [&] { CHECK_CU(cuStreamWaitEvent(C.st2, e1, 0)); }, [] {},
               [] { sync(C.st2); });
  const double h_sync_empty = per_call(50, 100, [] { sync(C.st); });
  const double h_stream_query = per_call(50, 100, [] { CHECK_CU(cuStreamQuery(C.st)); });
  CUcontext cx;
  const double h_ctx_get = per_call(50, 1000, [&] { CHECK_CU(cuCtxGetCurrent(&cx)); });
  unsigned flags;
  const double h_get_flags = per_call(50, 1000, [&] { CHECK_CU(cuStreamGetFlags(C.st, &flags)); });
  const double h_get_ctx = per_call(50, 1000, [&] { CHECK_CU(cuStreamGetCtx(C.st, &cx)); });
  unsigned memtype;
  const double h_ptr_attr = per_call(50, 1000, [&] {
    CHECK_CU(cuPointerGetAttribute(&memtype, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, C.buf));
  });
  // the same question about pageable memory fails (not a CUDA pointer): stderr only
  const double h_ptr_attr_pageable = per_call(50, 1000, [&] {
    (void)cuPointerGetAttribute(&memtype, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                (CUdeviceptr)(uintptr_t)pageable.data());
  });
  size_t poff, psize;
  const double h_param_info =
      per_call(50, 1000, [&] { CHECK_CU(cuFuncGetParamInfo(C.tiny, 0, &poff, &psize)); });

  // ---- host: copies and memsets ------------------------------------------------------------
  void *pin_src = (char *)C.pinned + 64, *pin_dst = (char *)C.pinned + 128;
  const double h_htod = per_call(
      50, 16, [&] { CHECK_CU(cuMemcpyHtoDAsync(C.small, pin_src, 8, C.st)); }, [] {},
      [] { sync(C.st); });
  const double h_dtoh = per_call(
      50, 16, [&] { CHECK_CU(cuMemcpyDtoHAsync(pin_dst, C.small, 8, C.st)); }, [] {},
      [] { sync(C.st); });
  const double h_dtoh_pageable =
      per_call(200, 1, [&] { CHECK_CU(cuMemcpyDtoHAsync(pageable.data(), C.small, 8, C.st)); },
               [] {}, [] { sync(C.st); });
  const double h_memset = per_call(
      50, 16, [&] { CHECK_CU(cuMemsetD8Async(C.small, 0, 8, C.st)); }, [] {},
      [] { sync(C.st); });
  const double h_dtod = per_call(
      50, 16, [&] { CHECK_CU(cuMemcpyDtoDAsync(C.small + 32, C.small, 8, C.st)); }, [] {},
      [] { sync(C.st); });

  // ---- GPU ---------------------------------------------------------------------------------
  const double g_tiny = events_around(20, 100, [] { launch_tiny(C.st); });
  const double g_memset =
      events_around(10, 100, [&] { CHECK_CU(cuMemsetD8Async(C.small, 0, 8, C.st)); });
  const double g_htod =
      events_around(10, 100, [&] { CHECK_CU(cuMemcpyHtoDAsync(C.small, pin_src, 8, C.st)); });
  const double g_dtoh =
      events_around(10, 100, [&] { CHECK_CU(cuMemcpyDtoHAsync(pin_dst, C.small, 8, C.st)); });

  // eager back-to-back: N kernels queued behind a spin of N x 5 us
  const int N = 1000;
  const double g_eager_gap =
      burst_gpu_ns(N * 5e3, [&] { for (int i = 0; i < N; i++) launch_tiny(C.st); }, e0, e1,
                   "eager_kernel_gap") / N - g_tiny;

  CUgraph gk = chain(std::string(N, 'k'));
  CUgraphExec ek = instantiate(gk);
  CHECK_CU(cuGraphUpload(ek, C.st));
  const double g_graph_gap = graph_gpu_median(ek, e0, e1, 7) / N - g_tiny;
  CHECK_CU(cuGraphExecDestroy(ek));
  CHECK_CU(cuGraphDestroy(gk));

  // graphs back to back (a sequence cut into pieces): NB launches of an NK-node chain, all
  // queued behind a spin, against one NB x NK-node chain
  const int NB = 64, NK = 8;
  CUgraph gw = chain(std::string(NB * NK, 'k')), gp = chain(std::string(NK, 'k'));
  CUgraphExec ew = instantiate(gw), ep = instantiate(gp);
  CHECK_CU(cuGraphUpload(ew, C.st));
  CHECK_CU(cuGraphUpload(ep, C.st));
  const double T_whole = graph_gpu_median(ew, e0, e1, 7);
  const double T_split = burst_gpu_ns(
      1e6, [&] { for (int i = 0; i < NB; i++) CHECK_CU(cuGraphLaunch(ep, C.st)); }, e0, e1,
      "graph_boundary_gap");
  const double g_boundary_gap = (T_split - T_whole) / (NB - 1);
  for (CUgraphExec x : {ew, ep}) CHECK_CU(cuGraphExecDestroy(x));
  for (CUgraph x : {gw, gp}) CHECK_CU(cuGraphDestroy(x));

  // graphs sent one by one, as pieces of a held sequence are: each launch of an NK-node chain
  // (its first node counts its start in mapped memory) waits until the GPU has started the one
  // before, so it arrives while that one runs, not queued long before; against the same NB
  // launches queued behind a spin. What each boundary adds then (the replay model's P1 with
  // pieces of 8 ran 6% behind the adaptive plan where the model put it 3% ahead).
  auto paced_gap = [&](int nk) {
    CUgraph g;
    CHECK_CU(cuGraphCreate(&g, 0));
    CUdeviceptr cd = C.flag_dev + 16;
    void *cargs[] = {&C.buf, &C.a, &C.b, &cd};
    CUgraphNode prev = nullptr;
    for (int i = 0; i < nk; i++) {
      CUgraphNode n;
      CUDA_KERNEL_NODE_PARAMS p = tiny_node(i ? C.tiny_args : cargs);
      if (!i) p.func = C.count_tiny;
      CHECK_CU(cuGraphAddKernelNode(&n, g, prev ? &prev : nullptr, prev ? 1 : 0, &p));
      prev = n;
    }
    CUgraphExec e = instantiate(g);
    CHECK_CU(cuGraphUpload(e, C.st));
    volatile unsigned *ctr = C.flag + 4;
    const double queued = burst_gpu_ns(
        1e6, [&] { for (int i = 0; i < NB; i++) CHECK_CU(cuGraphLaunch(e, C.st)); }, e0, e1,
        "paced boundary, queued");
    std::vector<double> v;
    for (int r = -1; r < 7; r++) {
      *ctr = 0;
      std::atomic_thread_fence(std::memory_order_seq_cst);
      launch_spin(C.st, 30e3);  // the first graph, too, is queued when its turn comes
      CHECK_CU(cuEventRecord(e0, C.st));
      const double t0 = now_ns();
      for (unsigned i = 0; i < (unsigned)NB; i++) {
        CHECK_CU(cuGraphLaunch(e, C.st));
        if (i + 1 < (unsigned)NB)
          while (*ctr < i + 1)
            if (now_ns() - t0 > 2e9) {
              fprintf(stderr, "costs: a paced graph did not start within 2 s\n");
              die(2);
            }
      }
      CHECK_CU(cuEventRecord(e1, C.st));
      sync(C.st);
      float ms;
      CHECK_CU(cuEventElapsedTime(&ms, e0, e1));
      if (r >= 0) v.push_back((double)ms * 1e6);
    }
    CHECK_CU(cuGraphExecDestroy(e));
    CHECK_CU(cuGraphDestroy(g));
    return g_boundary_gap + (median(v) - queued) / (NB - 1);
  };
  const double g_paced8 = paced_gap(8), g_paced32 = paced_gap(32);

  // the same NB boundaries between NX distinct execs of an NK-node chain, launched in turn
  // (a held sequence's pieces are each their own exec), queued behind a spin, against one
  // exec launched NB times (T_split)
  auto distinct_gap = [&](int nx) {
    CUgraph g = chain(std::string(NK, 'k'));
    std::vector<CUgraphExec> xs(nx);
    for (auto &x : xs) {
      x = instantiate(g);
      CHECK_CU(cuGraphUpload(x, C.st));
    }
    const double T = burst_gpu_ns(
        1e6, [&] { for (int i = 0; i < NB; i++) CHECK_CU(cuGraphLaunch(xs[i % nx], C.st)); }, e0,
        e1, "distinct execs");
    for (auto x : xs) CHECK_CU(cuGraphExecDestroy(x));
    CHECK_CU(cuGraphDestroy(g));
    return T;
  };
  const double T_distinct8 = distinct_gap(8), T_distinct64 = distinct_gap(NB);

  // a programmatic edge against a full one: N tiny_pdl nodes chained each way
  double g_pdl_overlap = NAN;
  CUgraph gf = chain_pdl(N, false), gq = gf ? chain_pdl(N, true) : nullptr;
  if (gf && gq) {
    CUgraphExec ef = instantiate(gf), eq = instantiate(gq);
    CHECK_CU(cuGraphUpload(ef, C.st));
    CHECK_CU(cuGraphUpload(eq, C.st));
    const double T_full = graph_gpu_median(ef, e0, e1, 7), T_prog = graph_gpu_median(eq, e0, e1, 7);
    g_pdl_overlap = (T_full - T_prog) / (N - 1);
    for (CUgraphExec x : {ef, eq}) CHECK_CU(cuGraphExecDestroy(x));
  }
  for (CUgraph x : {gf, gq})
    if (x) CHECK_CU(cuGraphDestroy(x));

  const int K = 200;
  std::string ka(K, 'k'), km, kc;
  for (int i = 0; i < K; i++) {
    km += "km";
    kc += "kc";
  }
  CUgraph ga = chain(ka), gm = chain(km), gc = chain(kc);
  CUgraphExec ea = instantiate(ga), em = instantiate(gm), ec = instantiate(gc);
  CHECK_CU(cuGraphUpload(ea, C.st));
  CHECK_CU(cuGraphUpload(em, C.st));
  CHECK_CU(cuGraphUpload(ec, C.st));
  const double TA = graph_gpu_median(ea, e0, e1, 9), TM = graph_gpu_median(em, e0, e1, 9),
               TC = graph_gpu_median(ec, e0, e1, 9);
  const double g_memset_gap = (TM - TA) / K - g_memset, g_memcpy_gap = (TC - TA) / K - g_dtoh;
  for (CUgraphExec x : {ea, em, ec}) CHECK_CU(cuGraphExecDestroy(x));
  for (CUgraph x : {ga, gm, gc}) CHECK_CU(cuGraphDestroy(x));

  // round trip host -> GPU -> host through mapped memory
  const unsigned rounds = 200;
  unsigned *ping = C.flag + 1, *pongh = C.flag + 2;
  *(volatile unsigned *)ping = 0;
  *(volatile unsigned *)pongh = 0;
  {
    CUdeviceptr ping_d = C.flag_dev + 4, pong_d = C.flag_dev + 8;
    unsigned n = rounds;
    void *a[] = {&ping_d, &pong_d, &n};
    CHECK_CU(cuLaunchKernel(C.pong, 1, 1, 1, 32, 1, 1, 0, C.st, a, nullptr));
  }
  std::vector<double> rtt;
  for (unsigned k = 1; k <= rounds; k++) {
    busy_wait_us(5);
    const double t0 = now_ns();
    std::atomic_thread_fence(std::memory_order_seq_cst);
    *(volatile unsigned *)ping = k;
    while (*(volatile unsigned *)pongh != k)
      if (now_ns() - t0 > 2e9) {
        fprintf(stderr, "costs: the ping-pong kernel did not answer round %u within 2 s\n", k);
        die(2);
      }
    if (k > 10) rtt.push_back(now_ns() - t0);
  }
  sync(C.st);
  const double g_rtt = median(rtt);

  // launch latency: flag_tiny stores 1 at its start
  CUdeviceptr fd = C.flag_dev;
  unsigned one = 1;
  void *fargs[] = {&C.buf, &C.a, &C.b, &fd, &one};
  std::vector<double> ll_start, ll_ret;
  for (int r = -5; r < 200; r++) {
    auto l = flag_latency([&] {
      CHECK_CU(cuLaunchKernel(C.flag_tiny, kBlocks, 1, 1, kThreads, 1, 1, 0, C.st, fargs, nullptr));
    });
    if (r >= 0) {
      ll_start.push_back(l.first);
      ll_ret.push_back(l.second);
    }
  }
  CUgraph g1;
  CHECK_CU(cuGraphCreate(&g1, 0));
  {
    CUgraphNode n;
    CUDA_KERNEL_NODE_PARAMS p = tiny_node(fargs);
    p.func = C.flag_tiny;
    CHECK_CU(cuGraphAddKernelNode(&n, g1, nullptr, 0, &p));
  }
  CUgraphExec e1x = instantiate(g1);
  CHECK_CU(cuGraphUpload(e1x, C.st));
  sync(C.st);
  std::vector<double> gl_start, gl_ret;
  for (int r = -5; r < 200; r++) {
    auto l = flag_latency([&] { CHECK_CU(cuGraphLaunch(e1x, C.st)); });
    if (r >= 0) {
      gl_start.push_back(l.first);
      gl_ret.push_back(l.second);
    }
  }
  CHECK_CU(cuGraphExecDestroy(e1x));
  CHECK_CU(cuGraphDestroy(g1));
  const double g_launch_lat = median(ll_start) - g_rtt / 2,
               g_graph_lat = median(gl_start) - g_rtt / 2;

  // diagnostics: the kernel's span from %globaltimer stamps, and the timer's resolution
  std::vector<double> spans;
  {
    void *sa[] = {&C.buf, &C.a, &C.b, &C.slot};
    const unsigned long long init[2] = {~0ull, 0ull};
    unsigned long long got[2];
    for (int r = -5; r < 200; r++) {
      CHECK_CU(cuMemcpyHtoD(C.slot, init, sizeof init));
      CHECK_CU(cuLaunchKernel(C.stamped, kBlocks, 1, 1, kThreads, 1, 1, 0, C.st, sa, nullptr));
      sync(C.st);
      CHECK_CU(cuMemcpyDtoH(got, C.slot, sizeof got));
      if (r >= 0) spans.push_back((double)(got[1] - got[0]));
    }
  }
  unsigned long long step = 0;
  {
    void *ta[] = {&C.slot};
    CHECK_CU(cuLaunchKernel(C.timer_step, 1, 1, 1, 1, 1, 1, 0, C.st, ta, nullptr));
    sync(C.st);
    CHECK_CU(cuMemcpyDtoH(&step, C.slot, sizeof step));
  }

  // tiny_kernel_idle: events around one tiny kernel on an idle stream, issued as the trace
  // recorder issues them (start event, launch, end event, back to back), less the launch
  // call's host time: what a traced duration holds besides the launch's host time
  std::vector<double> idle;
  for (int r = -20; r < 500; r++) {
    sync(C.st);
    CHECK_CU(cuEventRecord(e0, C.st));
    const double t0 = now_ns();
    launch_tiny(C.st);
    const double t1 = now_ns();
    CHECK_CU(cuEventRecord(e1, C.st));
    sync(C.st);
    float ms = 0;
    CHECK_CU(cuEventElapsedTime(&ms, e0, e1));
    if (r >= 0) idle.push_back((double)ms * 1e6 - (t1 - t0));
  }
  const double g_tiny_idle = median(idle);

  // the same in a host-bound loop: the stream not synchronised before each sample, only idle
  // (the kernel before it finished ~10 us ago), as in a traced launch-bound program (P1's trace
  // reads 2256 ns on the H200, where the above gave 2074.5: twenty-seventh session)
  double g_idle_loop = NAN;
  {
    const int n = 300;
    std::vector<CUevent> ev(2 * n);
    for (auto &e : ev) CHECK_CU(cuEventCreate(&e, CU_EVENT_DEFAULT));
    std::vector<double> host(n), v;
    sync(C.st);
    for (int i = 0; i < n; i++) {
      busy_wait_us(10);
      CHECK_CU(cuEventRecord(ev[2 * i], C.st));
      const double t0 = now_ns();
      launch_tiny(C.st);
      host[i] = now_ns() - t0;
      CHECK_CU(cuEventRecord(ev[2 * i + 1], C.st));
    }
    sync(C.st);
    for (int i = 20; i < n; i++) {
      float ms = 0;
      CHECK_CU(cuEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
      v.push_back((double)ms * 1e6 - host[i]);
    }
    for (auto &e : ev) CHECK_CU(cuEventDestroy(e));
    g_idle_loop = median(v);
  }

  // ---- diagnostic: launches beside another thread's graph builds -------------------------
  // (thirty-first session: a library that built more graphs ran F24 slower on the GPU than the
  // model, which charges the worker's builds to the worker alone)
  double launch_idle = NAN, launch_beside_build = NAN;
  {
    CUgraph g = chain(std::string(128, 'k'));
    auto batch = [&] {
      return per_call(40, 32, [] { launch_tiny(C.st); }, [] { launch_spin(C.st, 300e3); },
                      [] { sync(C.st); });
    };
    launch_idle = batch();
    std::atomic<bool> stop{false};
    std::thread builder([&] {
      CHECK_CU(cuCtxSetCurrent(C.ctx));
      CUstream bs;
      CHECK_CU(cuStreamCreate(&bs, CU_STREAM_NON_BLOCKING));
      while (!stop.load()) {
        CUgraphExec e = instantiate(g);
        CHECK_CU(cuGraphUpload(e, bs));
        CHECK_CU(cuStreamSynchronize(bs));
        CHECK_CU(cuGraphExecDestroy(e));
      }
      CHECK_CU(cuStreamDestroy(bs));
    });
    launch_beside_build = batch();
    stop.store(true);
    builder.join();
    CHECK_CU(cuGraphDestroy(g));
  }

  CHECK_CU(cuEventDestroy(e0));
  CHECK_CU(cuEventDestroy(e1));
  CHECK_CU(cuCtxSynchronize());

  // ---- output ------------------------------------------------------------------------------
  struct KV {
    const char *key;
    double ns;
  };
  const KV host[] = {
      {"launch", h_launch},
      {"launch_ex", h_launch_ex},
      {"graph_launch_base", f_launch.base},
      {"graph_launch_per_node", f_launch.per},
      {"graph_launch_per_updated_node", launch_per_updated},
      {"exec_set_params_per_node", set_params},
      {"exec_set_params_fn_per_node", set_params_fn},
      {"graph_launch_per_fn_updated_node", launch_per_fn_updated},
      {"exec_set_params_per_byte", set_params_per_byte},
      {"graph_launch_per_updated_byte", launch_per_updated_byte},
      {"graph_launch_per_node_byte", launch_per_node_byte},
      {"exec_update_base", f_update.base},
      {"exec_update_per_node", f_update.per},
      {"graph_add_node", median(add_per)},
      {"instantiate_base", f_inst.base},
      {"instantiate_per_node", f_inst.per},
      {"upload_base", f_upload.base},
      {"upload_per_node", f_upload.per},
      {"graph_destroy", exec_destroy},
      {"event_create", h_event_create},
      {"event_record", h_event_record},
      {"event_query", h_event_query},
      {"event_elapsed", h_event_elapsed},
      {"stream_wait_event", h_wait_event},
      {"stream_sync_empty", h_sync_empty},
      {"stream_query", h_stream_query},
      {"ctx_get_current", h_ctx_get},
      {"stream_get_flags", h_get_flags},
      {"stream_get_ctx", h_get_ctx},
      {"pointer_get_attribute", h_ptr_attr},
      {"func_get_param_info", h_param_info},
      {"memcpy_htod_async_pinned", h_htod},
      {"memcpy_dtoh_async_pinned", h_dtoh},
      {"memcpy_dtoh_async_pageable", h_dtoh_pageable},
      {"memset_async", h_memset},
      {"memcpy_dtod_async", h_dtod},
  };
  const KV gpu[] = {
      {"tiny_kernel", g_tiny},
      {"eager_kernel_gap", g_eager_gap},
      {"graph_kernel_gap", g_graph_gap},
      {"graph_boundary_gap", g_boundary_gap},
      {"graph_pdl_overlap", g_pdl_overlap},
      {"launch_latency", g_launch_lat},
      {"graph_launch_latency", g_graph_lat},
      {"memset_small", g_memset},
      {"memcpy_small_htod", g_htod},
      {"memcpy_small_dtoh", g_dtoh},
      {"graph_memset_gap", g_memset_gap},
      {"graph_memcpy_gap", g_memcpy_gap},
      {"tiny_kernel_span", median(spans)},
      {"tiny_kernel_idle", g_tiny_idle},
  };

  char date[16];
  const time_t tt = time(nullptr);
  struct tm tmv;
  gmtime_r(&tt, &tmv);
  strftime(date, sizeof date, "%Y-%m-%d", &tmv);
  printf("{\"schema\": \"libautograph-costs/1\", \"date\": \"%s\", \"device\": \"%s\", "
         "\"driver\": \"%s\", \"cuda\": \"%d.%d\",\n \"host_ns\": {",
         date, json_escape(name).c_str(), json_escape(driver_version()).c_str(), drv / 1000,
         (drv % 1000) / 10);
  for (size_t i = 0, n = 0; i < sizeof host / sizeof host[0]; i++)
    if (!std::isnan(host[i].ns))  // (an optional key that could not be measured)
      printf("%s\n  \"%s\": %.3f", n++ ? "," : "", host[i].key, host[i].ns);
  printf("},\n \"gpu_ns\": {");
  for (size_t i = 0, n = 0; i < sizeof gpu / sizeof gpu[0]; i++)
    if (!std::isnan(gpu[i].ns))  // (an optional key that could not be measured)
      printf("%s\n  \"%s\": %.1f", n++ ? "," : "", gpu[i].key, gpu[i].ns);
  printf("}}\n");
  fflush(stdout);

  fprintf(stderr, "# costs: %s, driver %s, CUDA %d.%d, %s (ns)\n", name, driver_version().c_str(),
          drv / 1000, (drv % 1000) / 10, date);
  fprintf(stderr, "%-28s %12s\n", "host_ns", "ns");
  for (const KV &kv : host) fprintf(stderr, "  %-26s %12.1f\n", kv.key, kv.ns);
  fprintf(stderr, "%-28s %12s\n", "gpu_ns", "ns");
  for (const KV &kv : gpu) fprintf(stderr, "  %-26s %12.1f\n", kv.key, kv.ns);
  fprintf(stderr, "# per graph size (nodes: launch / update / instantiate / upload, host ns)\n");
  for (size_t i = 0; i < xs.size(); i++)
    fprintf(stderr, "  %4.0f: %10.1f %10.1f %12.1f %10.1f\n", xs[i], g_launch[i], g_update[i],
            g_inst[i], g_upload[i]);
  fprintf(stderr, "# diagnostics (not in the JSON)\n");
  fprintf(stderr, "  cuGraphDestroy, 32 nodes         %10.1f\n", graph_destroy);
  fprintf(stderr, "  pointer attribute, pageable      %10.1f (fails: not a CUDA pointer)\n",
          h_ptr_attr_pageable);
  fprintf(stderr, "  mapped-memory round trip         %10.1f\n", g_rtt);
  fprintf(stderr, "  launch latency from the return   %10.1f (launch), %.1f (graph), RTT/2 "
          "subtracted\n", median(ll_ret) - g_rtt / 2, median(gl_ret) - g_rtt / 2);
  fprintf(stderr, "  tiny kernel span, %%globaltimer   %10.1f (timer step %llu ns)\n",
          median(spans), step);
  fprintf(stderr, "  graphs of %d: kernels %.1f, +memsets %.1f, +copies %.1f (GPU ns)\n", K, TA,
          TM, TC);
  fprintf(stderr, "  tiny kernel idle in a host-bound loop (no sync before it)  %10.1f\n",
          g_idle_loop);
  fprintf(stderr, "  boundary, each graph sent once the one before it started: %.1f (8 nodes), "
          "%.1f (32 nodes)\n", g_paced8, g_paced32);
  fprintf(stderr, "  boundary between distinct execs (8-node chains, queued), more than between "
          "launches of one exec: %.1f (8 execs in turn), %.1f (%d)\n",
          (T_distinct8 - T_split) / (NB - 1), (T_distinct64 - T_split) / (NB - 1), NB);
  fprintf(stderr, "  a launch beside another thread's graph builds (128-node instantiate + "
          "upload in a loop): %.1f, with that thread idle %.1f\n", launch_beside_build,
          launch_idle);
  fprintf(stderr, "# %.1f s in all\n", (now_ns() - t_start) * 1e-9);
  return 0;
}
