// launch_ex -- kernels launched through cudaLaunchKernelExC (the typed cudaLaunchKernelEx
// template and the C entry point), with and without launch attributes (priority, a 1x1x1 cluster
// dimension, both), mixed with plain <<<>>> and cudaLaunchKernel launches; stream sync per
// iteration.  Every launch works in place on one 4096-word buffer.
//
// Iteration g (0-based, warm-up included), six launches in this order:
//   1. <<<>>>                                    op_kernel<0>, s = g
//   2. cudaLaunchKernelEx (template), priority   mixed_kernel, w = g * 2^32 + 77, b = g & 0xff
//   3. cudaLaunchKernelExC, cluster 1x1x1        op_kernel<2>, s = g ^ 0x5555
//   4. cudaLaunchKernelEx (template), no attrs   op_kernel<3>, s = g + 1000
//   5. cudaLaunchKernelExC, priority + cluster   op_kernel<5>, s = ~g
//   6. cudaLaunchKernel                          mixed_kernel, w = 0xABCDEF0000000000 + g, b = 7
#include "common.h"
#include "ops.h"

namespace {

constexpr uint32_t kElems = 4096;
constexpr int kBlocks = 16, kThreads = 256;

// A parameter list with 8-, 8- and 1-byte arguments, so the argument packing matters.
__host__ __device__ inline uint32_t mixed_op(uint32_t x, uint32_t i, uint64_t w, uint8_t b) {
  return (x ^ (uint32_t)(w >> 32)) * 0x2C1B3C6Du + (uint32_t)w + b * (i | 1u);
}

__global__ void mixed_kernel(uint32_t *x, uint64_t w, uint8_t b) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kElems) x[i] = mixed_op(x[i], i, w, b);
}

struct Launch {
  int kind;  // 0..7: op_kernel<kind>; -1: mixed_kernel
  uint32_t s;
  uint64_t w;
  uint8_t b;
};

// The six launches of iteration g, in order (shared by the GPU loop and the CPU model).
void plan(uint64_t g, Launch l[6]) {
  const uint32_t g32 = (uint32_t)g;
  l[0] = {0, g32, 0, 0};
  l[1] = {-1, 0, (g << 32) + 77, (uint8_t)(g & 0xff)};
  l[2] = {2, g32 ^ 0x5555u, 0, 0};
  l[3] = {3, g32 + 1000u, 0, 0};
  l[4] = {5, ~g32, 0, 0};
  l[5] = {-1, 0, 0xABCDEF0000000000ull + g, 7};
}

void run(long long g0, long long g1, uint32_t *x, cudaStream_t st, int prio) {
  const dim3 grid(kBlocks), block(kThreads);
  const uint32_t n = kElems;

  cudaLaunchAttribute a_prio, a_cluster;
  a_prio.id = cudaLaunchAttributePriority;
  a_prio.val.priority = prio;
  a_cluster.id = cudaLaunchAttributeClusterDimension;
  a_cluster.val.clusterDim.x = a_cluster.val.clusterDim.y = a_cluster.val.clusterDim.z = 1;
  cudaLaunchAttribute a_both[2] = {a_prio, a_cluster};

  auto config = [&](cudaLaunchAttribute *attrs, unsigned num) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = 0;
    cfg.stream = st;
    cfg.attrs = attrs;
    cfg.numAttrs = num;
    return cfg;
  };
  const cudaLaunchConfig_t c_prio = config(&a_prio, 1), c_cluster = config(&a_cluster, 1),
                           c_none = config(nullptr, 0), c_both = config(a_both, 2);

  for (long long g = g0; g < g1; g++) {
    Launch l[6];
    plan((uint64_t)g, l);
    op_kernel<0><<<grid, block, 0, st>>>(x, x, l[0].s, n);
    CHECK_CUDA(cudaLaunchKernelEx(&c_prio, mixed_kernel, x, l[1].w, l[1].b));
    {
      const uint32_t *in = x;
      uint32_t s = l[2].s, nn = n;
      void *args[] = {&in, &x, &s, &nn};
      CHECK_CUDA(cudaLaunchKernelExC(&c_cluster, (const void *)op_kernel<2>, args));
    }
    CHECK_CUDA(cudaLaunchKernelEx(&c_none, op_kernel<3>, (const uint32_t *)x, x, l[3].s, n));
    {
      const uint32_t *in = x;
      uint32_t s = l[4].s, nn = n;
      void *args[] = {&in, &x, &s, &nn};
      CHECK_CUDA(cudaLaunchKernelExC(&c_both, (const void *)op_kernel<5>, args));
    }
    {
      uint64_t w = l[5].w;
      uint8_t b = l[5].b;
      void *args[] = {&x, &w, &b};
      CHECK_CUDA(cudaLaunchKernel((const void *)mixed_kernel, grid, block, args, 0, st));
    }
    CHECK_LAUNCH();
    CHECK_CUDA(cudaStreamSynchronize(st));
  }
}

void cpu_model(long long total, std::vector<uint32_t> &x) {
  for (long long g = 0; g < total; g++) {
    Launch l[6];
    plan((uint64_t)g, l);
    for (const Launch &p : l) {
      if (p.kind >= 0)
        cpu_op(p.kind, x.data(), x.data(), p.s, 0, kElems);
      else
        for (uint32_t i = 0; i < kElems; i++) x[i] = mixed_op(x[i], i, p.w, p.b);
    }
  }
}

}  // namespace

int main(int argc, char **argv) {
  Args a(argc, argv,
         "launch_ex: cudaLaunchKernelEx/ExC with priority and cluster attributes, mixed with "
         "plain launches");
  const LoopFlags loop = loop_flags(a, 100);
  const uint64_t seed = seed_flag(a);
  a.done();

  int least = 0, greatest = 0;
  CHECK_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaStream_t st = new_stream();
  std::vector<uint32_t> init;
  uint32_t *x = upload_random(kElems, seed, init);

  const double us =
      time_phases(loop, [&](long long g0, long long g1) { run(g0, g1, x, st, greatest); });

  const std::vector<uint32_t> got = from_device(x, kElems);
  std::vector<uint32_t> ref = init;
  cpu_model(loop.total(), ref);
  const bool ok = check_equal("x", got, ref);
  return report(loop.total() * 6, checksum_of(got), us, ok);
}
