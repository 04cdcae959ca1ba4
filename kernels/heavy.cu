// heavy -- compute-bound: each iteration launches n long kernels (a dependent integer chain of
// --work steps per thread over a grid that fills an H100), sync per iteration.  Verified on a
// fixed sample of elements (the full CPU model would take minutes).
//
// Iteration g (0-based, warm-up included), kernel j = 0..n-1: heavy_kernel<j % 2> in place on
// x (blocks * 256 words), s = g * 16 + j:
//   v = x[i] ^ s; repeat work times: v = step<K>(v, r); x[i] = v
// --mode=graph: one hand-written chain of n kernel nodes, instantiated once; per iteration the
// nodes get their new s (cudaGraphExecKernelNodeSetParams), then cudaGraphLaunch.
#include "common.h"

namespace {

constexpr int kThreads = 256;
constexpr size_t kSamples = 64;

template <int K>
__host__ __device__ inline uint32_t step(uint32_t v, uint32_t r) {
  if constexpr (K == 0) {
    v = v * 1664525u + (1013904223u ^ r);
    return v ^ (v >> 15);
  } else {
    v = (v ^ (v >> 13)) * 0x5BD1E995u;
    return v + r;
  }
}

template <int K>
__host__ __device__ inline uint32_t chain(uint32_t v, uint32_t s, uint32_t work) {
  v ^= s;
  for (uint32_t r = 0; r < work; r++) v = step<K>(v, r);
  return v;
}

template <int K>
__global__ void heavy_kernel(uint32_t *x, uint32_t s, uint32_t work, uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = chain<K>(x[i], s, work);
}

const void *kernel_fn(long long j) {
  return j % 2 ? (const void *)heavy_kernel<1> : (const void *)heavy_kernel<0>;
}
uint32_t scalar(long long g, long long j) { return (uint32_t)g * 16u + (uint32_t)j; }

struct Cfg {
  LoopFlags loop;
  long long n, blocks;
  uint32_t work, elems;
};

void run_eager(const Cfg &c, long long g0, long long g1, uint32_t *x, cudaStream_t st) {
  for (long long g = g0; g < g1; g++) {
    for (long long j = 0; j < c.n; j++) {
      const uint32_t s = scalar(g, j);
      if (j % 2)
        heavy_kernel<1><<<(unsigned)c.blocks, kThreads, 0, st>>>(x, s, c.work, c.elems);
      else
        heavy_kernel<0><<<(unsigned)c.blocks, kThreads, 0, st>>>(x, s, c.work, c.elems);
    }
    CHECK_LAUNCH();
    CHECK_CUDA(cudaStreamSynchronize(st));
  }
}

struct Graph {
  cudaGraphExec_t exec;
  std::vector<cudaGraphNode_t> nodes;
};

Graph build_graph(const Cfg &c, uint32_t *x) {
  cudaGraph_t graph;
  CHECK_CUDA(cudaGraphCreate(&graph, 0));
  Graph gr;
  cudaGraphNode_t prev = nullptr;
  for (long long j = 0; j < c.n; j++) {
    uint32_t s = scalar(0, j), work = c.work, n = c.elems;
    void *args[] = {&x, &s, &work, &n};
    prev = add_kernel_node(graph, prev, kernel_fn(j), dim3((unsigned)c.blocks), dim3(kThreads),
                           args);
    gr.nodes.push_back(prev);
  }
  CHECK_CUDA(cudaGraphInstantiate(&gr.exec, graph, 0));
  return gr;
}

void run_graph(const Cfg &c, long long g0, long long g1, uint32_t *x, cudaStream_t st,
               const Graph &gr) {
  for (long long g = g0; g < g1; g++) {
    for (long long j = 0; j < c.n; j++) {
      uint32_t s = scalar(g, j), work = c.work, n = c.elems;
      void *args[] = {&x, &s, &work, &n};
      set_kernel_node(gr.exec, gr.nodes[j], kernel_fn(j), dim3((unsigned)c.blocks),
                      dim3(kThreads), args);
    }
    CHECK_CUDA(cudaGraphLaunch(gr.exec, st));
    CHECK_CUDA(cudaStreamSynchronize(st));
  }
}

}  // namespace

int main(int argc, char **argv) {
  Args a(argc, argv, "heavy: compute-bound kernels (>= 200 us each on an H100 by default)");
  Cfg c;
  c.loop = loop_flags(a, 20);
  const uint64_t seed = seed_flag(a);
  c.n = a.num("n", 4, 1, 1000, "kernels per iteration");
  c.work = (uint32_t)a.num("work", 8192, 1, 1 << 30, "dependent steps per thread per kernel");
  c.blocks = a.num("blocks", 132 * 8, 1, 1 << 20, "blocks of 256 threads (default fills an H100)");
  const bool graph = a.choice("mode", "eager", "eager|graph", "eager or hand-written graph") ==
                     "graph";
  a.done();
  c.elems = (uint32_t)(c.blocks * kThreads);

  cudaStream_t st = new_stream();
  std::vector<uint32_t> init;
  uint32_t *x = upload_random(c.elems, seed, init);
  CHECK_CUDA(cudaDeviceSynchronize());

  Graph gr{};
  if (graph) gr = build_graph(c, x);
  const double us = time_phases(c.loop, [&](long long g0, long long g1) {
    if (graph)
      run_graph(c, g0, g1, x, st, gr);
    else
      run_eager(c, g0, g1, x, st);
  });

  const std::vector<uint32_t> got = from_device(x, c.elems);
  // Samples evenly spread over the buffer, first and last element included.
  const size_t ns = c.elems < kSamples ? c.elems : kSamples;
  std::vector<uint32_t> idx(ns), want(ns), have(ns);
  for (size_t k = 0; k < ns; k++)
    idx[k] = ns == 1 ? 0 : (uint32_t)((uint64_t)k * (c.elems - 1) / (ns - 1));
  parallel_for(
      ns,
      [&](size_t lo, size_t hi) {
        for (size_t k = lo; k < hi; k++) {
          uint32_t v = init[idx[k]];
          for (long long g = 0; g < c.loop.total(); g++)
            for (long long j = 0; j < c.n; j++)
              v = j % 2 ? chain<1>(v, scalar(g, j), c.work) : chain<0>(v, scalar(g, j), c.work);
          want[k] = v;
          have[k] = got[idx[k]];
        }
      },
      1);
  const bool ok = check_equal("x(sample)", have, want);

  if (graph) printf("graph_launches: %lld\n", c.loop.total());
  return report(graph ? 0 : c.loop.total() * c.n, checksum_of(got), us, ok);
}
