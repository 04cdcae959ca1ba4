// tiny -- the launch-bound workhorse: every iteration launches n tiny kernels (16 x 256 threads,
// one element of a 4096-word buffer each) on one stream, cycling through 4 different kernels.
//
// Built three times: tiny (static cudart), tiny-shared (-cudart shared) and tiny-ptsz
// (--default-stream per-thread, where stream handle 0 means the per-thread stream).
//
// Schedule of iteration g (0-based, warm-up included), step k = 0..n-1:
//   kernel op_kernel<k % 4>, scalar s = vary ? g*131 + k : k + 1
//   vary=0: in = out = buffer 0
//   vary=1: step 0 reads buffer g%2 and writes buffer (g+1)%2, later steps work in place on
//           buffer (g+1)%2 (ping-pong, so pointer arguments change every iteration)
// Every diverge-every-th iteration ((g+1) % D == 0) gets one extra op_kernel<4> (scalar
// vary ? g*7 + 0xD1 : 0xD1) in place on the output buffer, inserted before step (n+1)/2.
#include <algorithm>

#include "common.h"
#include "ops.h"

namespace {

constexpr uint32_t kElems = 4096;
constexpr int kBlocks = 16, kThreads = 256;  // kBlocks * kThreads == kElems
constexpr int kCycle = 4;                    // kernels op_kernel<0..3> cycle inside an iteration
constexpr int kDivergeKernel = 4;            // op_kernel<4>: the inserted, different kernel

struct Cfg {
  LoopFlags loop;
  long long n, sync_every, diverge_every, host_us, piece, piece_host_ns;
  bool vary, graph, launch_api;
  std::string stream;
  uint64_t seed;
};

struct Step {
  int kernel;
  int in, out;  // buffer indices 0/1
  uint32_t s;
};

bool diverges(const Cfg &c, long long g) {
  return c.diverge_every > 0 && (g + 1) % c.diverge_every == 0;
}

long long steps_in(const Cfg &c, bool div) { return c.n + (div ? 1 : 0); }

// Step j of iteration g; a diverging iteration has n + 1 steps.
Step step_at(const Cfg &c, long long g, bool div, long long j) {
  const int out = c.vary ? (int)((g + 1) % 2) : 0;
  const long long pos = (c.n + 1) / 2;  // >= 1, so the insert always works in place on `out`
  if (div && j == pos)
    return Step{kDivergeKernel, out, out, c.vary ? (uint32_t)(g * 7 + 0xD1) : 0xD1u};
  const long long k = (div && j > pos) ? j - 1 : j;  // index into the regular sequence
  Step st;
  st.kernel = (int)(k % kCycle);
  st.in = (k == 0 && c.vary) ? (int)(g % 2) : out;
  st.out = out;
  st.s = c.vary ? (uint32_t)(g * 131 + k) : (uint32_t)(k + 1);
  return st;
}

cudaStream_t pick_stream(const std::string &name) {
  if (name == "legacy") return 0;  // handle 0: the legacy stream (per-thread in tiny-ptsz)
  if (name == "ptds") return cudaStreamPerThread;
  if (name == "legacy-handle") return cudaStreamLegacy;
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreate(&s));
  return s;
}

// ---- eager: one launch per step ---------------------------------------------------------------

long long run_eager(const Cfg &c, long long g0, long long g1, uint32_t *buf[2], cudaStream_t st) {
  long long launches = 0;
  for (long long g = g0; g < g1; g++) {
    const bool div = diverges(c, g);
    const long long steps = steps_in(c, div);
    for (long long j = 0; j < steps; j++) {
      const Step p = step_at(c, g, div, j);
      const uint32_t *in = buf[p.in];
      uint32_t *out = buf[p.out];
      uint32_t s = p.s, n = kElems;
      if (c.launch_api) {
        void *args[] = {&in, &out, &s, &n};
        CHECK_CUDA(cudaLaunchKernel(op_kernel_fn(p.kernel), dim3(kBlocks), dim3(kThreads), args,
                                    0, st));
      } else {
        launch_op(p.kernel, dim3(kBlocks), dim3(kThreads), st, in, out, s, n);
      }
      launches++;
      busy_wait_us((double)c.host_us);
    }
    CHECK_LAUNCH();
    if (c.sync_every > 0 && (g + 1) % c.sync_every == 0) CHECK_CUDA(cudaStreamSynchronize(st));
  }
  return launches;
}

// ---- graph: the benchmarks' hand-written reference ---------------------------------------------
// One chain of kernel nodes per iteration shape (regular, diverging), instantiated once.  With
// vary=1 every node's arguments change, so each launch is preceded by exec-node updates.

struct IterGraph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  std::vector<cudaGraphNode_t> nodes;
};

void step_args(const Step &p, uint32_t *buf[2], const uint32_t *&in, uint32_t *&out,
               uint32_t &s) {
  in = buf[p.in];
  out = buf[p.out];
  s = p.s;
}

// Steps [j0, j1) of iteration g as a chain of kernel nodes, instantiated.
IterGraph build_steps(const Cfg &c, long long g, bool div, uint32_t *buf[2], long long j0,
                      long long j1) {
  IterGraph ig;
  CHECK_CUDA(cudaGraphCreate(&ig.graph, 0));
  cudaGraphNode_t prev = nullptr;
  for (long long j = j0; j < j1; j++) {
    const Step p = step_at(c, g, div, j);
    const uint32_t *in;
    uint32_t *out, s, n = kElems;
    step_args(p, buf, in, out, s);
    void *args[] = {&in, &out, &s, &n};
    prev = add_kernel_node(ig.graph, prev, op_kernel_fn(p.kernel), dim3(kBlocks), dim3(kThreads),
                           args);
    ig.nodes.push_back(prev);
  }
  CHECK_CUDA(cudaGraphInstantiate(&ig.exec, ig.graph, 0));
  return ig;
}

IterGraph build_graph(const Cfg &c, long long g, bool div, uint32_t *buf[2]) {
  return build_steps(c, g, div, buf, 0, steps_in(c, div));
}

// An iteration as consecutive graphs of `piece` nodes each (the last may be shorter), sent one
// after another as an interposer sends the pieces of a held sequence: before each, the host
// spends piece_host_ns per node (the held launches' own time). The same GPU work as one graph;
// what the boundaries and the pacing cost, without an interposer (docs/MODEL.md, twenty-seventh
// session: the model's miss on plans of many equal pieces).
std::vector<IterGraph> build_pieces(const Cfg &c, uint32_t *buf[2]) {
  std::vector<IterGraph> pieces;
  for (long long j0 = 0; j0 < c.n; j0 += c.piece)
    pieces.push_back(build_steps(c, 0, false, buf, j0, std::min(c.n, j0 + c.piece)));
  return pieces;
}

void run_pieces(const Cfg &c, long long g0, long long g1, cudaStream_t st,
                std::vector<IterGraph> &pieces) {
  for (long long g = g0; g < g1; g++) {
    for (IterGraph &ig : pieces) {
      busy_wait_us(1e-3 * (double)(c.piece_host_ns * (long long)ig.nodes.size()));
      CHECK_CUDA(cudaGraphLaunch(ig.exec, st));
    }
    if (c.sync_every > 0 && (g + 1) % c.sync_every == 0) CHECK_CUDA(cudaStreamSynchronize(st));
  }
}

void run_graph(const Cfg &c, long long g0, long long g1, uint32_t *buf[2], cudaStream_t st,
               IterGraph graphs[2]) {
  for (long long g = g0; g < g1; g++) {
    const bool div = diverges(c, g);
    IterGraph &ig = graphs[div ? 1 : 0];
    if (c.vary) {
      for (size_t j = 0; j < ig.nodes.size(); j++) {
        const Step p = step_at(c, g, div, (long long)j);
        const uint32_t *in;
        uint32_t *out, s, n = kElems;
        step_args(p, buf, in, out, s);
        void *args[] = {&in, &out, &s, &n};
        set_kernel_node(ig.exec, ig.nodes[j], op_kernel_fn(p.kernel), dim3(kBlocks),
                        dim3(kThreads), args);
      }
    }
    // The same host work as eager mode, spent before the single launch.
    busy_wait_us((double)(c.host_us * steps_in(c, div)));
    CHECK_CUDA(cudaGraphLaunch(ig.exec, st));
    if (c.sync_every > 0 && (g + 1) % c.sync_every == 0) CHECK_CUDA(cudaStreamSynchronize(st));
  }
}

// ---- CPU model ------------------------------------------------------------------------------------

void cpu_model(const Cfg &c, std::vector<uint32_t> ref[2]) {
  parallel_for(kElems, [&](size_t lo, size_t hi) {
    for (long long g = 0; g < c.loop.total(); g++) {
      const bool div = diverges(c, g);
      for (long long j = 0; j < steps_in(c, div); j++) {
        const Step p = step_at(c, g, div, j);
        cpu_op(p.kernel, ref[p.in].data(), ref[p.out].data(), p.s, lo, hi);
      }
    }
  });
}

}  // namespace

int main(int argc, char **argv) {
  Args a(argc, argv,
         "tiny: n tiny kernels per iteration on one stream (launch-bound benchmark workhorse)");
  Cfg c;
  c.loop = loop_flags(a, 1000);
  c.seed = seed_flag(a);
  c.n = a.num("n", 64, 1, 1000000, "kernels per iteration");
  c.sync_every = a.num("sync-every", 1, 0, LLONG_MAX,
                       "stream sync after every K-th iteration (0: only the phase-end syncs)");
  c.stream = a.choice("stream", "created", "created|legacy|ptds|legacy-handle",
                      "created stream, handle 0, cudaStreamPerThread or cudaStreamLegacy");
  c.vary = a.num("vary", 0, 0, 1, "1: per-iteration scalar and ping-pong buffers") != 0;
  c.host_us = a.num("host-us", 0, 0, 10000000, "host busy-wait after every launch (us)");
  c.diverge_every = a.num("diverge-every", 0, 0, LLONG_MAX,
                          "every D-th iteration inserts one extra kernel (0: never)");
  c.launch_api = a.choice("api", "runtime", "runtime|launchkernel",
                          "<<<>>> or explicit cudaLaunchKernel") == "launchkernel";
  c.graph = a.choice("mode", "eager", "eager|graph", "eager launches or hand-written graph") ==
            "graph";
  c.piece = a.num("piece", 0, 0, 1000000,
                  "with --mode=graph: an iteration as graphs of this many nodes, sent one after "
                  "another (0: one graph; needs --vary=0 and --diverge-every=0)");
  c.piece_host_ns = a.num("piece-host-ns", 0, 0, 1000000,
                          "with --piece: host busy-wait per node before each piece's launch (ns)");
  a.done();
  if (c.piece && (!c.graph || c.vary || c.diverge_every)) {
    fprintf(stderr, "tiny: --piece needs --mode=graph, --vary=0 and --diverge-every=0\n");
    return 2;
  }

  const std::vector<uint32_t> init[2] = {random_words(kElems, c.seed),
                                         random_words(kElems, c.seed + 1)};
  uint32_t *buf[2];
  for (int b = 0; b < 2; b++) {
    buf[b] = device_alloc<uint32_t>(kElems);
    to_device(buf[b], init[b]);
  }
  cudaStream_t st = pick_stream(c.stream);

  IterGraph graphs[2];
  std::vector<IterGraph> pieces;
  if (c.piece) pieces = build_pieces(c, buf);
  if (c.graph && !c.piece) {
    graphs[0] = build_graph(c, 0, false, buf);
    if (c.diverge_every > 0) graphs[1] = build_graph(c, c.diverge_every - 1, true, buf);
  }

  long long launches = 0, graph_launches = 0;
  const double us = time_phases(c.loop, [&](long long g0, long long g1) {
    if (c.piece) {
      run_pieces(c, g0, g1, st, pieces);
      graph_launches += (g1 - g0) * (long long)pieces.size();
    } else if (c.graph) {
      run_graph(c, g0, g1, buf, st, graphs);
      graph_launches += g1 - g0;
    } else {
      launches += run_eager(c, g0, g1, buf, st);
    }
  });

  const std::vector<uint32_t> got[2] = {from_device(buf[0], kElems), from_device(buf[1], kElems)};
  std::vector<uint32_t> ref[2] = {init[0], init[1]};
  cpu_model(c, ref);
  const bool ok = check_equal("buf0", got[0], ref[0]) & check_equal("buf1", got[1], ref[1]);

  if (c.graph) printf("graph_launches: %lld\n", graph_launches);
  return report(launches, checksum_of(got[0], got[1]), us, ok);
}
