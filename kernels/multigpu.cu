// multigpu -- one host thread driving two GPUs, each through its own created stream, with the
// devices' results combined every iteration (issue 10 item 7).
//
// Device d (0, 1) owns x[d] (4096 words) and ex[d] (2 x 256 words, one half per iteration
// parity).  Iteration g (0-based, warm-up included):
//   1. for d = 0, 1 (cudaSetDevice(d)): mgpu_mix_dev<d> on x[d] with ex[d][g % 2] and scalar c,
//      then n mgpu_step_dev<d> kernels in place, kind (j % 4) + 4 d, scalar d * 65536 + j + 1;
//   2. --combine=peer: for d = 0, 1: cudaMemcpyPeerAsync of x[d][0..256) into
//      ex[1 - d][(g + 1) % 2] on stream d (read in iteration g + 1; the parity keeps the copy
//      from overwriting what the other device's mix of this iteration reads); c = d + 1;
//      --combine=host: for d = 0, 1: cudaMemcpyAsync of x[d][0..256) to pinned host memory on
//      stream d; after the syncs the host folds both into the next iteration's c (starts at 0);
//   3. cudaStreamSynchronize on each stream.
// Each device has its own kernel names (mgpu_*_dev0 / mgpu_*_dev1) so that the stats'
// kernel_names tell which device's sequences were graphed.  Launches: (warmup + iters) * 2 *
// (n + 1).  Exits 77 ("skip: needs 2 GPUs") with fewer than two devices.
#include "common.h"
#include "ops.h"

namespace {

constexpr uint32_t kElems = 4096, kEx = 256;
constexpr int kDevs = 2;
const dim3 kGrid(16), kBlock(256);

OPS_HD uint32_t mix(uint32_t x, uint32_t e, uint32_t s) { return x * 0x01000193u + (e ^ s); }

__device__ uint32_t op_any(uint32_t k, uint32_t x, uint32_t i, uint32_t s) {
  switch (k) {
    case 0: return op<0>(x, i, s);
    case 1: return op<1>(x, i, s);
    case 2: return op<2>(x, i, s);
    case 3: return op<3>(x, i, s);
    case 4: return op<4>(x, i, s);
    case 5: return op<5>(x, i, s);
    case 6: return op<6>(x, i, s);
    default: return op<7>(x, i, s);
  }
}

// Two copies of each kernel under per-device names (see the header).
#define MGPU_KERNELS(D)                                                                     \
  __global__ void mgpu_mix_dev##D(uint32_t *x, const uint32_t *ex, uint32_t s, uint32_t n) { \
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;                                 \
    if (i < n) x[i] = mix(x[i], ex[i % kEx], s);                                              \
  }                                                                                           \
  __global__ void mgpu_step_dev##D(uint32_t *x, uint32_t k, uint32_t s, uint32_t n) {        \
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;                                 \
    if (i < n) x[i] = op_any(k, x[i], i, s);                                                  \
  }
MGPU_KERNELS(0)
MGPU_KERNELS(1)
#undef MGPU_KERNELS

uint32_t step_kind(int d, long long j) { return (uint32_t)(j % 4) + 4u * (uint32_t)d; }
uint32_t step_scalar(int d, long long j) { return (uint32_t)d * 65536u + (uint32_t)j + 1u; }

// The host-side combine of the two read-backs into the next iteration's mix scalar.
uint32_t fold(const uint32_t *a, const uint32_t *b) {
  uint32_t c = 0x811C9DC5u;
  for (uint32_t i = 0; i < kEx; i++) c = (c ^ a[i] ^ rotl32(b[i], 5)) * 0x01000193u;
  return c;
}

struct Dev {
  uint32_t *x, *ex;  // ex: two halves of kEx words
  cudaStream_t st;
  uint32_t *pin;  // pinned read-back (host combine)
};

}  // namespace

int main(int argc, char **argv) {
  Args a(argc, argv, "multigpu: one thread, two GPUs with their own streams, combined per iteration");
  const LoopFlags loop = loop_flags(a, 200);
  const uint64_t seed = seed_flag(a);
  const long long n = a.num("n", 8, 1, 100000, "step kernels per device per iteration");
  const bool peer = a.choice("combine", "peer", "peer|host",
                             "peer: cudaMemcpyPeerAsync between the devices; host: read back and "
                             "fold on the host") == "peer";
  a.done();

  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  if (count < kDevs) {
    printf("skip: needs 2 GPUs (%d visible)\n", count);
    die(77);
  }

  std::vector<uint32_t> init_x[kDevs], init_ex[kDevs];
  Dev dev[kDevs];
  for (int d = 0; d < kDevs; d++) {
    CHECK_CUDA(cudaSetDevice(d));
    dev[d].x = upload_random(kElems, seed * 4 + (uint64_t)d, init_x[d]);
    dev[d].ex = upload_random(2 * kEx, seed * 4 + 2 + (uint64_t)d, init_ex[d]);
    dev[d].st = new_stream();
    CHECK_CUDA(cudaMallocHost((void **)&dev[d].pin, kEx * sizeof(uint32_t)));
    // Direct copies where the devices allow it; cudaMemcpyPeerAsync works either way.
    int can = 0;
    CHECK_CUDA(cudaDeviceCanAccessPeer(&can, d, 1 - d));
    if (can) {
      const cudaError_t e = cudaDeviceEnablePeerAccess(1 - d, 0);
      if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) CHECK_CUDA(e);
      (void)cudaGetLastError();
    }
    fprintf(stderr, "multigpu: device %d -> %d peer access: %s\n", d, 1 - d, can ? "yes" : "no");
  }
  for (int d = 0; d < kDevs; d++) {
    CHECK_CUDA(cudaSetDevice(d));
    CHECK_CUDA(cudaDeviceSynchronize());
  }

  uint32_t c = 0;  // host combine: the mix scalar of the current iteration
  auto body = [&](long long g0, long long g1) {
    for (long long g = g0; g < g1; g++) {
      const int par = (int)(g % 2);
      for (int d = 0; d < kDevs; d++) {
        Dev &v = dev[d];
        CHECK_CUDA(cudaSetDevice(d));
        const uint32_t s = peer ? (uint32_t)d + 1u : c;
        const uint32_t *ex = v.ex + par * kEx;
        if (d == 0)
          mgpu_mix_dev0<<<kGrid, kBlock, 0, v.st>>>(v.x, ex, s, kElems);
        else
          mgpu_mix_dev1<<<kGrid, kBlock, 0, v.st>>>(v.x, ex, s, kElems);
        for (long long j = 0; j < n; j++) {
          if (d == 0)
            mgpu_step_dev0<<<kGrid, kBlock, 0, v.st>>>(v.x, step_kind(d, j), step_scalar(d, j),
                                                       kElems);
          else
            mgpu_step_dev1<<<kGrid, kBlock, 0, v.st>>>(v.x, step_kind(d, j), step_scalar(d, j),
                                                       kElems);
        }
        CHECK_LAUNCH();
      }
      for (int d = 0; d < kDevs; d++) {
        Dev &v = dev[d];
        CHECK_CUDA(cudaSetDevice(d));
        if (peer)
          CHECK_CUDA(cudaMemcpyPeerAsync(dev[1 - d].ex + (1 - par) * kEx, 1 - d, v.x, d,
                                         kEx * sizeof(uint32_t), v.st));
        else
          CHECK_CUDA(cudaMemcpyAsync(v.pin, v.x, kEx * sizeof(uint32_t), cudaMemcpyDeviceToHost,
                                     v.st));
      }
      for (int d = 0; d < kDevs; d++) CHECK_CUDA(cudaStreamSynchronize(dev[d].st));
      if (!peer) c = fold(dev[0].pin, dev[1].pin);
    }
  };
  auto sync_all = [&] {
    for (int d = 0; d < kDevs; d++) {
      CHECK_CUDA(cudaSetDevice(d));
      CHECK_CUDA(cudaDeviceSynchronize());
    }
  };
  const double us = time_phases(loop, body, sync_all);

  // CPU model of the same sequence, in the same order.
  std::vector<uint32_t> rx[kDevs], rex[kDevs], got_x[kDevs], got_ex[kDevs];
  for (int d = 0; d < kDevs; d++) rx[d] = init_x[d], rex[d] = init_ex[d];
  uint32_t rc = 0;
  for (long long g = 0; g < loop.total(); g++) {
    const int par = (int)(g % 2);
    for (int d = 0; d < kDevs; d++) {
      const uint32_t s = peer ? (uint32_t)d + 1u : rc;
      const uint32_t *ex = rex[d].data() + par * kEx;
      for (uint32_t i = 0; i < kElems; i++) rx[d][i] = mix(rx[d][i], ex[i % kEx], s);
      for (long long j = 0; j < n; j++)
        cpu_op((int)step_kind(d, j), rx[d].data(), rx[d].data(), step_scalar(d, j), 0, kElems);
    }
    if (peer) {
      for (int d = 0; d < kDevs; d++)
        memcpy(rex[1 - d].data() + (1 - par) * kEx, rx[d].data(), kEx * sizeof(uint32_t));
    } else {
      rc = fold(rx[0].data(), rx[1].data());
    }
  }

  bool ok = true;
  Fnv1a h;
  for (int d = 0; d < kDevs; d++) {
    CHECK_CUDA(cudaSetDevice(d));
    got_x[d] = from_device(dev[d].x, kElems);
    got_ex[d] = from_device(dev[d].ex, 2 * kEx);
    char name[32];
    snprintf(name, sizeof name, "x%d", d);
    ok &= check_equal(name, got_x[d], rx[d]);
    snprintf(name, sizeof name, "ex%d", d);
    ok &= check_equal(name, got_ex[d], rex[d]);
    h.add(got_x[d]);
    h.add(got_ex[d]);
  }
  if (!peer && c != rc) {
    fprintf(stderr, "mismatch: host combine %08" PRIx32 ", expected %08" PRIx32 "\n", c, rc);
    ok = false;
  }
  return report(loop.total() * kDevs * (n + 1), h.h, us, ok);
}
