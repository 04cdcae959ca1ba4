// grow_grid -- a decode-like loop whose main kernel's grid grows by one block each iteration
// (attention over a KV cache that grows by one entry per token), plus six fixed kernels; stream
// sync per iteration.
//
// Iteration g (0-based, warm-up included), len = --start + g (KV entries of 128 words):
//   1 qproj  <<<1, 128>>>       q[t] = op<3>(x[t] ^ x[t + 512], t, g)
//   2 append <<<1, 128>>>       kv[(len-1) * 128 + t] = x[(3t) % 1024] + (len-1) * 0x9E3779B1
//   3 attend <<<len, 128>>>     part[b] = sum_t kv[b * 128 + t] * q[t]          (the growing grid)
//   4 combine<<<1, 128>>>       y[t] = sum_{b < len} part[b] * (b + t + 1)
//   5 update <<<4, 256>>>       x[i] = op<0>(x[i], i, y[i % 128] + g)
//   6 mix    <<<4, 256>>>       x[i] = op<5>(x[i], i, g)
//   7 norm   <<<4, 256>>>       x[i] = op<2>(x[i], i, 7)
// uint32 arithmetic that wraps (sums are order-independent); the CPU model repeats it exactly.
// --mode=graph: a hand-written chain of 7 kernel nodes, instantiated once; per iteration the
// nodes whose grid or arguments change get cudaGraphExecKernelNodeSetParams (attend: its grid),
// then cudaGraphLaunch.
#include "common.h"
#include "ops.h"

namespace {

constexpr uint32_t kX = 1024, kT = 128, kThreads = 256, kXBlocks = kX / kThreads;

__global__ void qproj_kernel(const uint32_t *x, uint32_t *q, uint32_t g) {
  const uint32_t t = threadIdx.x;
  q[t] = op<3>(x[t] ^ x[t + kX / 2], t, g);
}

__global__ void append_kernel(const uint32_t *x, uint32_t *kv, uint32_t len) {
  const uint32_t t = threadIdx.x;
  kv[(size_t)(len - 1) * kT + t] = x[(3 * t) % kX] + (len - 1) * 0x9E3779B1u;
}

__global__ void attend_kernel(const uint32_t *kv, const uint32_t *q, uint32_t *part) {
  __shared__ uint32_t s[kT];
  const uint32_t t = threadIdx.x, b = blockIdx.x;
  s[t] = kv[(size_t)b * kT + t] * q[t];
  __syncthreads();
  for (uint32_t w = kT / 2; w > 0; w >>= 1) {
    if (t < w) s[t] += s[t + w];
    __syncthreads();
  }
  if (t == 0) part[b] = s[0];
}

__global__ void combine_kernel(const uint32_t *part, uint32_t len, uint32_t *y) {
  const uint32_t t = threadIdx.x;
  uint32_t acc = 0;
  for (uint32_t b = 0; b < len; b++) acc += part[b] * (b + t + 1);
  y[t] = acc;
}

__global__ void update_kernel(uint32_t *x, const uint32_t *y, uint32_t g) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  x[i] = op<0>(x[i], i, y[i % kT] + g);
}

__global__ void mix_kernel(uint32_t *x, uint32_t g) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  x[i] = op<5>(x[i], i, g);
}

__global__ void norm_kernel(uint32_t *x) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  x[i] = op<2>(x[i], i, 7);
}

struct Bufs {
  uint32_t *x, *q, *kv, *part, *y;
  uint32_t start;
};

uint32_t len_at(const Bufs &d, long long g) { return d.start + (uint32_t)g; }

void run_eager(const Bufs &d, cudaStream_t st, long long g0, long long g1) {
  for (long long g = g0; g < g1; g++) {
    const uint32_t len = len_at(d, g), gg = (uint32_t)g;
    qproj_kernel<<<1, kT, 0, st>>>(d.x, d.q, gg);
    append_kernel<<<1, kT, 0, st>>>(d.x, d.kv, len);
    attend_kernel<<<len, kT, 0, st>>>(d.kv, d.q, d.part);
    combine_kernel<<<1, kT, 0, st>>>(d.part, len, d.y);
    update_kernel<<<kXBlocks, kThreads, 0, st>>>(d.x, d.y, gg);
    mix_kernel<<<kXBlocks, kThreads, 0, st>>>(d.x, gg);
    norm_kernel<<<kXBlocks, kThreads, 0, st>>>(d.x);
    CHECK_LAUNCH();
    CHECK_CUDA(cudaStreamSynchronize(st));
  }
}

// The graph's nodes, in launch order; args_at fills a node's arguments and grid for iteration g.
constexpr int kNodes = 7;
const void *const kFns[kNodes] = {
    (const void *)qproj_kernel,  (const void *)append_kernel, (const void *)attend_kernel,
    (const void *)combine_kernel, (const void *)update_kernel, (const void *)mix_kernel,
    (const void *)norm_kernel};

struct NodeArgs {
  const uint32_t *cx, *cq, *ckv, *cpart, *cy;
  uint32_t *x, *q, *kv, *part, *y;
  uint32_t g, len;
  void *args[3];
  dim3 grid, block;
};

void args_at(const Bufs &d, int node, long long g, NodeArgs &n) {
  n.cx = n.x = d.x;
  n.cq = n.q = d.q;
  n.ckv = n.kv = d.kv;
  n.cpart = n.part = d.part;
  n.cy = n.y = d.y;
  n.g = (uint32_t)g;
  n.len = len_at(d, g);
  n.block = dim3(kT);
  n.grid = dim3(1);
  switch (node) {
    case 0: n.args[0] = &n.cx, n.args[1] = &n.q, n.args[2] = &n.g; break;
    case 1: n.args[0] = &n.cx, n.args[1] = &n.kv, n.args[2] = &n.len; break;
    case 2:
      n.args[0] = &n.ckv, n.args[1] = &n.cq, n.args[2] = &n.part;
      n.grid = dim3(n.len);
      break;
    case 3: n.args[0] = &n.cpart, n.args[1] = &n.len, n.args[2] = &n.y; break;
    default:
      n.grid = dim3(kXBlocks);
      n.block = dim3(kThreads);
      n.args[0] = &n.x;
      if (node == 4) n.args[1] = &n.cy, n.args[2] = &n.g;
      if (node == 5) n.args[1] = &n.g;
      break;
  }
}

struct Graph {
  cudaGraphExec_t exec;
  cudaGraphNode_t nodes[kNodes];
};

Graph build_graph(const Bufs &d) {
  cudaGraph_t gr;
  CHECK_CUDA(cudaGraphCreate(&gr, 0));
  Graph out;
  cudaGraphNode_t prev = nullptr;
  for (int k = 0; k < kNodes; k++) {
    NodeArgs n;
    args_at(d, k, 0, n);
    prev = out.nodes[k] = add_kernel_node(gr, prev, kFns[k], n.grid, n.block, n.args);
  }
  CHECK_CUDA(cudaGraphInstantiate(&out.exec, gr, 0));
  CHECK_CUDA(cudaGraphDestroy(gr));
  return out;
}

void run_graph(const Bufs &d, const Graph &gr, cudaStream_t st, long long g0, long long g1) {
  for (long long g = g0; g < g1; g++) {
    for (int k = 0; k < kNodes - 1; k++) {  // norm (the last) never changes
      NodeArgs n;
      args_at(d, k, g, n);
      set_kernel_node(gr.exec, gr.nodes[k], kFns[k], n.grid, n.block, n.args);
    }
    CHECK_CUDA(cudaGraphLaunch(gr.exec, st));
    CHECK_CUDA(cudaStreamSynchronize(st));
  }
}

}  // namespace

int main(int argc, char **argv) {
  Args a(argc, argv,
         "grow_grid: decode-like loop, the attention kernel's grid grows by one block per "
         "iteration, six fixed kernels, sync per iteration");
  const LoopFlags loop = loop_flags(a, 500);
  const uint64_t seed = seed_flag(a);
  Bufs d;
  d.start = (uint32_t)a.num("start", 64, 1, 1 << 20, "KV length (blocks) of iteration 0");
  const bool graph =
      a.choice("mode", "eager", "eager|graph", "eager or hand-written graph, grid updated") ==
      "graph";
  a.done();
  const long long G = loop.total();
  if (G + d.start > (1LL << 24)) {
    fprintf(stderr, "grow_grid: start + iterations too large\n");
    die(2);
  }
  const size_t cap = (size_t)(d.start + G);  // KV entries at the end

  cudaStream_t st = new_stream();
  std::vector<uint32_t> x_init, kv_init;
  d.x = upload_random(kX, seed, x_init);
  d.kv = upload_random(cap * kT, seed + 1, kv_init);
  d.q = device_alloc<uint32_t>(kT);
  d.y = device_alloc<uint32_t>(kT);
  d.part = device_alloc<uint32_t>(cap);
  CHECK_CUDA(cudaMemset(d.part, 0, cap * sizeof(uint32_t)));
  CHECK_CUDA(cudaDeviceSynchronize());

  Graph gr{};
  if (graph) gr = build_graph(d);
  const double us = time_phases(loop, [&](long long g0, long long g1) {
    if (graph)
      run_graph(d, gr, st, g0, g1);
    else
      run_eager(d, st, g0, g1);
  });

  const std::vector<uint32_t> got_x = from_device(d.x, kX), got_kv = from_device(d.kv, cap * kT),
                              got_part = from_device(d.part, cap), got_y = from_device(d.y, kT);

  std::vector<uint32_t> x = x_init, kv = kv_init, q(kT), part(cap, 0), y(kT, 0);
  for (long long g = 0; g < G; g++) {
    const uint32_t len = len_at(d, g), gg = (uint32_t)g;
    for (uint32_t t = 0; t < kT; t++) q[t] = op<3>(x[t] ^ x[t + kX / 2], t, gg);
    for (uint32_t t = 0; t < kT; t++)
      kv[(size_t)(len - 1) * kT + t] = x[(3 * t) % kX] + (len - 1) * 0x9E3779B1u;
    for (uint32_t b = 0; b < len; b++) {
      uint32_t acc = 0;
      for (uint32_t t = 0; t < kT; t++) acc += kv[(size_t)b * kT + t] * q[t];
      part[b] = acc;
    }
    for (uint32_t t = 0; t < kT; t++) {
      uint32_t acc = 0;
      for (uint32_t b = 0; b < len; b++) acc += part[b] * (b + t + 1);
      y[t] = acc;
    }
    for (uint32_t i = 0; i < kX; i++) x[i] = op<0>(x[i], i, y[i % kT] + gg);
    for (uint32_t i = 0; i < kX; i++) x[i] = op<5>(x[i], i, gg);
    for (uint32_t i = 0; i < kX; i++) x[i] = op<2>(x[i], i, 7);
  }
  const bool ok = check_equal("x", got_x, x) & check_equal("kv", got_kv, kv) &
                  check_equal("part", got_part, part) & check_equal("y", got_y, y);

  printf("final_grid: %lld\n", (long long)len_at(d, G - 1));
  if (graph) printf("graph_launches: %lld\n", G);
  return report(graph ? 0 : G * kNodes, checksum_of(got_x, got_kv, got_part, got_y), us, ok);
}
