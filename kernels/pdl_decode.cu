// pdl_decode -- one LLM-decode-like step per iteration, ~300 launches on one non-blocking
// stream, most of them programmatic dependent launches (PDL), as inference engines issue them
// on Hopper.
//
// Step g (0-based, warm-up included):
//   host: in = {token, pos = g % 16} into pinned memory; cudaMemcpyAsync(d_in, in, 8, HtoD)
//   embed                          h = f(token)                 (<<<>>>, resets best)
//   layer l = 0..L-1, 12 kernels, s = 16 l + k:
//      0 norm(h -> a)  [<<<>>>]     1 proj(a -> b)   2 act(b -> c)     3 kv_write(c -> kv[l][pos])
//      4 attn(b, kv[l] -> a)        5 proj(a -> c)   6 add(h += c)     7 norm(h -> a)
//      8 proj(a -> b)               9 act(b -> c)   10 proj(c -> a)   11 add(h += a)
//   argmax(h -> best)              (atomicMax of (h[i] << 32 | ~i): deterministic)
//   cudaMemcpyAsync(out, best, 8, DtoH) to pinned memory; cudaStreamSynchronize
//   host: next token = f(best) (greedy decoding: step g+1 depends on step g's read-back)
// Kernels 1..11 of each layer and argmax go through cudaLaunchKernelEx with
// cudaLaunchAttributeProgrammaticStreamSerialization = --pdl (1 by default, 0: same calls, value
// 0).  Every kernel reads only constant weights before cudaGridDependencySynchronize() (which
// waits for its predecessor's completion and memory flush) and calls
// cudaTriggerProgrammaticLaunchCompletion() after its last write, so results do not depend on
// PDL.  All arithmetic is uint32 and wraps; the CPU model repeats it exactly.
// --mode=graph: one step stream-captured once (the capture keeps the PDL edges) and replayed
// with cudaGraphLaunch each step; the host fills the same pinned input before each launch.
#include <algorithm>

#include "common.h"

namespace {

constexpr uint32_t kH = 1024, kThreads = 256, kBlocks = kH / kThreads;
constexpr uint32_t kPos = 16, kWin = 4, kW = 4096, kVocab = 50257, kPerLayer = 12;

// ---- element maths, shared by the kernels and the CPU model -----------------------------------

__host__ __device__ inline uint32_t rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }
__host__ __device__ inline uint32_t f_embed(uint32_t token, uint32_t i) {
  return (token * 0x9E3779B1u) ^ (i * 0x85EBCA6Bu) ^ 0x27D4EB2Fu;
}
__host__ __device__ inline uint32_t f_norm(uint32_t x, uint32_t next, uint32_t i, uint32_t s) {
  const uint32_t v = x ^ rotl(next, 5);
  return (v ^ (v >> 11)) + (s ^ i);
}
__host__ __device__ inline uint32_t proj_src(uint32_t i, uint32_t j) { return (i * 7u + j * 129u) % kH; }
__host__ __device__ inline uint32_t proj_w(uint32_t i, uint32_t j, uint32_t s) {
  return (i + j * (s | 1u)) % kW;
}
__host__ __device__ inline uint32_t f_act(uint32_t x, uint32_t i, uint32_t s) {
  return rotl(x, 7) * 5u + s + i;
}
__host__ __device__ inline uint32_t f_kv(uint32_t x, uint32_t pos) { return x ^ (pos * 0x01000193u); }
__host__ __device__ inline uint32_t f_add(uint32_t a, uint32_t b) { return a + rotl(b, 3); }
__host__ __device__ inline uint64_t argmax_key(uint32_t v, uint32_t i) {
  return ((uint64_t)v << 32) | (uint64_t)(0xFFFFFFFFu - i);  // ties: the smaller index wins
}
uint32_t next_token(uint64_t best) {
  const uint32_t idx = 0xFFFFFFFFu - (uint32_t)best;
  return (idx * 2654435761u + (uint32_t)(best >> 32)) % kVocab;
}

// ---- kernels --------------------------------------------------------------------------------

// Waits for the predecessor grid (complete and flushed); a no-op without PDL.
__device__ __forceinline__ void wait_inputs() { cudaGridDependencySynchronize(); }
// Lets the successor launch; after the last global write of the block.
__device__ __forceinline__ void release() { cudaTriggerProgrammaticLaunchCompletion(); }

__global__ void embed_kernel(const uint32_t *in, uint32_t *h, unsigned long long *best) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  wait_inputs();
  h[i] = f_embed(in[0], i);
  if (i == 0) *best = 0;
  release();
}

__global__ void norm_kernel(const uint32_t *in, uint32_t *out, uint32_t s) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  wait_inputs();
  out[i] = f_norm(in[i], in[(i + 1) % kH], i, s);
  release();
}

__global__ void proj_kernel(const uint32_t *in, const uint32_t *w, uint32_t *out, uint32_t s) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t wv[kWin];  // constant weights: loaded before the wait (the prologue PDL overlaps)
  for (uint32_t j = 0; j < kWin; j++) wv[j] = w[proj_w(i, j, s)];
  wait_inputs();
  uint32_t acc = s;
  for (uint32_t j = 0; j < kWin; j++) acc = acc * 31u + in[proj_src(i, j)] * wv[j];
  out[i] = acc;
  release();
}

__global__ void act_kernel(const uint32_t *in, uint32_t *out, uint32_t s) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  wait_inputs();
  out[i] = f_act(in[i], i, s);
  release();
}

__global__ void kv_write_kernel(const uint32_t *in, const uint32_t *din, uint32_t *kv) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  wait_inputs();
  const uint32_t pos = din[1];
  kv[pos * kH + i] = f_kv(in[i], pos);
  release();
}

__global__ void attn_kernel(const uint32_t *q, const uint32_t *kv, uint32_t *out, uint32_t s) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  wait_inputs();
  uint32_t acc = q[i];
  for (uint32_t p = 0; p < kPos; p++) acc = acc * 0x01000193u + (kv[p * kH + (i + p) % kH] ^ s);
  out[i] = acc;
  release();
}

__global__ void add_kernel(uint32_t *h, const uint32_t *x) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  wait_inputs();
  h[i] = f_add(h[i], x[i]);
  release();
}

__global__ void argmax_kernel(const uint32_t *h, unsigned long long *best) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  wait_inputs();
  atomicMax(best, (unsigned long long)argmax_key(h[i], i));
  release();
}

// ---- host -----------------------------------------------------------------------------------

struct Dec {
  int layers;
  bool pdl;
  cudaStream_t st;
  uint32_t *h_in;              // pinned {token, pos}
  unsigned long long *h_out;   // pinned best
  uint32_t *d_in, *h, *a, *b, *c, *w, *kv;
  unsigned long long *best;
};

uint32_t scalar(int l, uint32_t k) { return (uint32_t)l * 16u + k; }

// cudaLaunchKernelEx with the PDL attribute set to --pdl.
template <class... P, class... A>
void launch_ex(const Dec &d, void (*k)(P...), A... args) {
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = d.pdl ? 1 : 0;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(kBlocks);
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = 0;
  cfg.stream = d.st;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CHECK_CUDA(cudaLaunchKernelEx(&cfg, k, args...));
}

// Everything a step enqueues; launches made returned.
long long enqueue_step(const Dec &d) {
  CHECK_CUDA(cudaMemcpyAsync(d.d_in, d.h_in, 2 * sizeof(uint32_t), cudaMemcpyHostToDevice, d.st));
  embed_kernel<<<kBlocks, kThreads, 0, d.st>>>(d.d_in, d.h, d.best);
  CHECK_LAUNCH();
  for (int l = 0; l < d.layers; l++) {
    uint32_t *kv = d.kv + (size_t)l * kPos * kH;
    norm_kernel<<<kBlocks, kThreads, 0, d.st>>>(d.h, d.a, scalar(l, 0));
    CHECK_LAUNCH();
    launch_ex(d, proj_kernel, (const uint32_t *)d.a, (const uint32_t *)d.w, d.b, scalar(l, 1));
    launch_ex(d, act_kernel, (const uint32_t *)d.b, d.c, scalar(l, 2));
    launch_ex(d, kv_write_kernel, (const uint32_t *)d.c, (const uint32_t *)d.d_in, kv);
    launch_ex(d, attn_kernel, (const uint32_t *)d.b, (const uint32_t *)kv, d.a, scalar(l, 4));
    launch_ex(d, proj_kernel, (const uint32_t *)d.a, (const uint32_t *)d.w, d.c, scalar(l, 5));
    launch_ex(d, add_kernel, d.h, (const uint32_t *)d.c);
    launch_ex(d, norm_kernel, (const uint32_t *)d.h, d.a, scalar(l, 7));
    launch_ex(d, proj_kernel, (const uint32_t *)d.a, (const uint32_t *)d.w, d.b, scalar(l, 8));
    launch_ex(d, act_kernel, (const uint32_t *)d.b, d.c, scalar(l, 9));
    launch_ex(d, proj_kernel, (const uint32_t *)d.c, (const uint32_t *)d.w, d.a, scalar(l, 10));
    launch_ex(d, add_kernel, d.h, (const uint32_t *)d.a);
  }
  launch_ex(d, argmax_kernel, (const uint32_t *)d.h, d.best);
  CHECK_CUDA(
      cudaMemcpyAsync(d.h_out, d.best, sizeof(unsigned long long), cudaMemcpyDeviceToHost, d.st));
  return 2 + (long long)d.layers * kPerLayer;
}

cudaGraphExec_t capture(const Dec &d) {
  cudaGraph_t graph;
  CHECK_CUDA(cudaStreamBeginCapture(d.st, cudaStreamCaptureModeGlobal));
  enqueue_step(d);
  CHECK_CUDA(cudaStreamEndCapture(d.st, &graph));
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  CHECK_CUDA(cudaGraphDestroy(graph));
  return exec;
}

struct Host {
  uint32_t token;
  std::vector<uint32_t> tokens;  // the token fed into every step
};

long long run(const Dec &d, cudaGraphExec_t exec, Host &host, long long g0, long long g1) {
  long long launches = 0;
  for (long long g = g0; g < g1; g++) {
    host.tokens.push_back(host.token);
    d.h_in[0] = host.token;
    d.h_in[1] = (uint32_t)(g % kPos);
    if (exec)
      CHECK_CUDA(cudaGraphLaunch(exec, d.st));
    else
      launches += enqueue_step(d);
    CHECK_CUDA(cudaStreamSynchronize(d.st));
    host.token = next_token(*d.h_out);
  }
  return launches;
}

// ---- CPU model ------------------------------------------------------------------------------

struct Model {
  int layers;
  std::vector<uint32_t> w, h, a, b, c, kv;
  uint32_t in[2];

  void norm(const std::vector<uint32_t> &x, std::vector<uint32_t> &y, uint32_t s) {
    for (uint32_t i = 0; i < kH; i++) y[i] = f_norm(x[i], x[(i + 1) % kH], i, s);
  }
  void proj(const std::vector<uint32_t> &x, std::vector<uint32_t> &y, uint32_t s) {
    for (uint32_t i = 0; i < kH; i++) {
      uint32_t acc = s;
      for (uint32_t j = 0; j < kWin; j++) acc = acc * 31u + x[proj_src(i, j)] * w[proj_w(i, j, s)];
      y[i] = acc;
    }
  }
  void act(const std::vector<uint32_t> &x, std::vector<uint32_t> &y, uint32_t s) {
    for (uint32_t i = 0; i < kH; i++) y[i] = f_act(x[i], i, s);
  }
  void add(const std::vector<uint32_t> &x) {
    for (uint32_t i = 0; i < kH; i++) h[i] = f_add(h[i], x[i]);
  }

  uint64_t step() {
    for (uint32_t i = 0; i < kH; i++) h[i] = f_embed(in[0], i);
    for (int l = 0; l < layers; l++) {
      uint32_t *kvl = kv.data() + (size_t)l * kPos * kH;
      norm(h, a, scalar(l, 0));
      proj(a, b, scalar(l, 1));
      act(b, c, scalar(l, 2));
      for (uint32_t i = 0; i < kH; i++) kvl[in[1] * kH + i] = f_kv(c[i], in[1]);
      const uint32_t s4 = scalar(l, 4);
      for (uint32_t i = 0; i < kH; i++) {
        uint32_t acc = b[i];
        for (uint32_t p = 0; p < kPos; p++) acc = acc * 0x01000193u + (kvl[p * kH + (i + p) % kH] ^ s4);
        a[i] = acc;
      }
      proj(a, c, scalar(l, 5));
      add(c);
      norm(h, a, scalar(l, 7));
      proj(a, b, scalar(l, 8));
      act(b, c, scalar(l, 9));
      proj(c, a, scalar(l, 10));
      add(a);
    }
    uint64_t best = 0;
    for (uint32_t i = 0; i < kH; i++) best = std::max(best, argmax_key(h[i], i));
    return best;
  }
};

}  // namespace

int main(int argc, char **argv) {
  Args a(argc, argv,
         "pdl_decode: LLM-decode-like step of ~300 launches, most with programmatic dependent "
         "launch; token copied in, result read back, sync per step");
  const LoopFlags loop = loop_flags(a, 100);
  const uint64_t seed = seed_flag(a);
  Dec d;
  d.layers = (int)a.num("layers", 24, 1, 1000, "layers of 12 kernels per step");
  d.pdl = a.num("pdl", 1, 0, 1, "programmatic stream serialization on the Ex launches") != 0;
  const bool graph =
      a.choice("mode", "eager", "eager|graph", "eager or one stream-captured step replayed") ==
      "graph";
  a.done();

  d.st = new_stream(cudaStreamNonBlocking);
  CHECK_CUDA(cudaMallocHost((void **)&d.h_in, 2 * sizeof(uint32_t)));
  CHECK_CUDA(cudaMallocHost((void **)&d.h_out, sizeof(unsigned long long)));
  std::vector<uint32_t> w_init;
  d.w = upload_random(kW, seed, w_init);
  d.d_in = device_alloc<uint32_t>(2);
  d.h = device_alloc<uint32_t>(kH);
  d.a = device_alloc<uint32_t>(kH);
  d.b = device_alloc<uint32_t>(kH);
  d.c = device_alloc<uint32_t>(kH);
  const size_t kv_words = (size_t)d.layers * kPos * kH;
  d.kv = device_alloc<uint32_t>(kv_words);
  CHECK_CUDA(cudaMemset(d.kv, 0, kv_words * sizeof(uint32_t)));
  d.best = device_alloc<unsigned long long>(1);
  CHECK_CUDA(cudaDeviceSynchronize());

  cudaGraphExec_t exec = graph ? capture(d) : nullptr;
  Host host;
  host.token = (uint32_t)(seed % kVocab);
  long long launches = 0;
  const double us = time_phases(loop, [&](long long g0, long long g1) {
    launches += run(d, exec, host, g0, g1);
  });

  const std::vector<uint32_t> got_h = from_device(d.h, kH), got_kv = from_device(d.kv, kv_words);

  Model m;
  m.layers = d.layers;
  m.w = w_init;
  m.h.assign(kH, 0);
  m.a = m.b = m.c = m.h;
  m.kv.assign(kv_words, 0);
  std::vector<uint32_t> want_tokens;
  uint32_t token = (uint32_t)(seed % kVocab);
  for (long long g = 0; g < loop.total(); g++) {
    want_tokens.push_back(token);
    m.in[0] = token;
    m.in[1] = (uint32_t)(g % kPos);
    token = next_token(m.step());
  }
  want_tokens.push_back(token);
  host.tokens.push_back(host.token);
  const bool ok = check_equal("tokens", host.tokens, want_tokens) &
                  check_equal("h", got_h, m.h) & check_equal("kv", got_kv, m.kv);

  printf("last_token: %u\n", host.token);
  if (graph) printf("graph_launches: %lld\n", loop.total());
  return report(launches, checksum_of(host.tokens, got_h, got_kv), us, ok);
}
