// spin -- the host waits for a kernel's result by polling mapped host memory, with NO CUDA call
// between the launches and the wait (an interceptor that holds launches back must still get
// them to the GPU).  Times out after 10 s per iteration: prints "result: TIMEOUT", exits 3.
//
// Iteration g (0-based, warm-up included), on one created stream, 4096-word buffer x:
//   op0(s = g), op1(s = g + 1), op2(s = g + 2) in place on x, then
//   signal_kernel<<<1,1>>>: mailbox.payload = x[0] ^ x[4095]; __threadfence_system();
//                           mailbox.flag = g + 1   (volatile stores to the mapped host memory)
//   host: spin until flag == g + 1, then record payload.
// Launches: (warmup + iters) * 4.  Verified: x and every iteration's payload.
#include "common.h"
#include "ops.h"

namespace {

constexpr uint32_t kElems = 4096;
const dim3 kGrid(16), kBlock(256);
constexpr double kTimeoutUs = 10e6;

struct Mailbox {
  uint32_t flag, payload;
};

__global__ void signal_kernel(const uint32_t *x, volatile Mailbox *box, uint32_t iter) {
  box->payload = x[0] ^ x[kElems - 1];
  __threadfence_system();  // the payload is visible to the host before the flag
  box->flag = iter;
}

void run(long long g0, long long g1, cudaStream_t st, uint32_t *x, volatile Mailbox *host_box,
         Mailbox *dev_box, std::vector<uint32_t> &payloads) {
  for (long long g = g0; g < g1; g++) {
    const uint32_t want = (uint32_t)g + 1;
    for (int k = 0; k < 3; k++)
      launch_op(k, kGrid, kBlock, st, x, x, (uint32_t)g + (uint32_t)k, kElems);
    signal_kernel<<<1, 1, 0, st>>>(x, dev_box, want);
    CHECK_LAUNCH();

    // No CUDA call from here until the flag arrives.
    const double deadline = now_us() + kTimeoutUs;
    while (host_box->flag != want) {
      if (now_us() > deadline) {
        fprintf(stderr, "spin: iteration %lld: flag still %u after 10 s (want %u)\n", g,
                host_box->flag, want);
        printf("result: TIMEOUT\n");
        die(3);
      }
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    const uint32_t payload = host_box->payload;
    payloads.push_back(payload);
  }
}

}  // namespace

int main(int argc, char **argv) {
  Args a(argc, argv,
         "spin: the host polls mapped memory written by a kernel, no CUDA call in between");
  const LoopFlags loop = loop_flags(a, 50);
  const uint64_t seed = seed_flag(a);
  a.done();

  cudaStream_t st = new_stream();
  std::vector<uint32_t> init;
  uint32_t *x = upload_random(kElems, seed, init);
  Mailbox *host_box = nullptr, *dev_box = nullptr;
  CHECK_CUDA(cudaHostAlloc((void **)&host_box, sizeof(Mailbox), cudaHostAllocMapped));
  CHECK_CUDA(cudaHostGetDevicePointer((void **)&dev_box, host_box, 0));
  host_box->flag = host_box->payload = 0;
  CHECK_CUDA(cudaDeviceSynchronize());

  std::vector<uint32_t> payloads;
  const double us = time_phases(loop, [&](long long g0, long long g1) {
    run(g0, g1, st, x, host_box, dev_box, payloads);
  });

  const std::vector<uint32_t> got = from_device(x, kElems);
  std::vector<uint32_t> ref = init, ref_payloads;
  uint32_t *r = ref.data();
  for (long long g = 0; g < loop.total(); g++) {
    for (int k = 0; k < 3; k++) cpu_op(k, r, r, (uint32_t)g + (uint32_t)k, 0, kElems);
    ref_payloads.push_back(r[0] ^ r[kElems - 1]);
  }
  const bool ok = check_equal("x", got, ref) & check_equal("payload", payloads, ref_payloads);

  return report(loop.total() * 4, checksum_of(got, payloads), us, ok);
}
