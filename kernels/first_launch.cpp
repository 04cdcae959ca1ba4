// first_launch -- the cost of the very first kernel launch of a process, as a program that
// times it sees it: driver API only (no cudart), primary context, driver_kernels.fatbin loaded
// with cuModuleLoadData, a buffer uploaded; then, timed with a host clock, ONE
// cuLaunchKernel(dk_affine) + cuStreamSynchronize.  Nothing is launched before it.
//
// time_us_per_iter is that one launch + sync.  No --iters / --warmup / --mode: there is only
// one first launch.  The launch: dk_affine(p, a = 0x9E3779B1, b = seed) on 4096 words.
#include <cuda.h>

#include "common.h"
#include "driver_ops.h"

namespace {

constexpr unsigned kElems = 4096, kBlocks = 16, kThreads = 256;

}  // namespace

int main(int argc, char **argv) {
  Args a(argc, argv,
         "first_launch: times the process's first kernel launch + stream sync (driver API)");
  const uint64_t seed = seed_flag(a);
  const std::string module =
      a.str("module", "", "fatbin/cubin with dk_affine (default: next to the exe)");
  const bool null_stream = a.choice("stream", "created", "created|null",
                                    "cuStreamCreate'd stream or stream 0") == "null";
  a.done();

  CUmodule mod = driver_setup(module);
  CUfunction affine;
  CHECK_CU(cuModuleGetFunction(&affine, mod, "dk_affine"));
  CUstream st = nullptr;
  if (!null_stream) CHECK_CU(cuStreamCreate(&st, CU_STREAM_DEFAULT));
  const std::vector<uint32_t> init = random_words(kElems, seed);
  CUdeviceptr p;
  CHECK_CU(cuMemAlloc(&p, kElems * sizeof(uint32_t)));
  CHECK_CU(cuMemcpyHtoD(p, init.data(), kElems * sizeof(uint32_t)));
  CHECK_CU(cuCtxSynchronize());

  unsigned pa = 0x9E3779B1u, pb = (unsigned)seed;
  void *params[] = {&p, &pa, &pb};
  region_mark(true);  // the timed region, as profilers (and the replay model) see it
  const double t0 = now_us();
  CHECK_CU(cuLaunchKernel(affine, kBlocks, 1, 1, kThreads, 1, 1, 0, st, params, nullptr));
  CHECK_CU(cuStreamSynchronize(st));
  const double t1 = now_us();
  region_mark(false);

  std::vector<uint32_t> got(kElems), want(kElems);
  CHECK_CU(cuMemcpyDtoH(got.data(), p, kElems * sizeof(uint32_t)));
  for (uint32_t i = 0; i < kElems; i++) want[i] = drv_affine(init[i], i, pa, pb);
  const bool ok = check_equal("p", got, want);
  return report(1, checksum_of(got), t1 - t0, ok);
}
