// modcopies -- copies of one kernel in several modules, as libraries that compile a kernel per
// problem size at run time make them (cuDNN's attention gets one per sequence length in a
// Hugging Face decode loop): driver_kernels.fatbin loaded --copies times, each copy of
// dk_salted with its own dk_salt, so a launch that ran the wrong copy changes the result.
// libautograph gives the copies one class (same name and parameters): one template, its
// dk_salted node switched between copies by exec updates.
//
// Step g: dk_affine (copy 0), dk_salted (copy g/2 mod K: each copy two steps running; its
// dynamic shared memory limit set before every step, a new value on its first step, as cuDNN
// sets its attributes), dk_affine, then a stream sync. Driver API only.
#include <cuda.h>

#include <vector>

#include "common.h"
#include "driver_ops.h"

namespace {

constexpr unsigned kElems = 4096, kBlocks = 16, kThreads = 256, kMaxCopies = 16;

uint32_t salt_of(unsigned c) { return 0x5A17u * (c + 1) ^ 0xC0FFEEu; }
uint32_t a1(uint64_t g) { return 0x01000193u + (uint32_t)g; }
uint32_t a2(uint64_t g) { return (uint32_t)g * 2654435761u; }

}  // namespace

int main(int argc, char **argv) {
  Args a(argc, argv, "modcopies: one kernel in several modules, alternating, stream sync per step");
  const LoopFlags loop = loop_flags(a, 200);
  const uint64_t seed = seed_flag(a);
  const int copies = (int)a.num("copies", 4, 1, kMaxCopies, "modules holding dk_salted");
  a.done();

  CUmodule mod0 = driver_setup("");
  const std::vector<char> image = read_file(next_to_exe("driver_kernels.fatbin"));
  CUfunction affine, salted[kMaxCopies];
  CHECK_CU(cuModuleGetFunction(&affine, mod0, "dk_affine"));
  for (int c = 0; c < copies; c++) {
    CUmodule m;
    CHECK_CU(cuModuleLoadData(&m, image.data()));
    CHECK_CU(cuModuleGetFunction(&salted[c], m, "dk_salted"));
    CUdeviceptr salt;
    size_t bytes = 0;
    CHECK_CU(cuModuleGetGlobal(&salt, &bytes, m, "dk_salt"));
    const uint32_t v = salt_of((unsigned)c);
    CHECK_CU(cuMemcpyHtoD(salt, &v, sizeof v));
  }
  CUstream st;
  CHECK_CU(cuStreamCreate(&st, CU_STREAM_DEFAULT));
  const std::vector<uint32_t> init = random_words(kElems, seed);
  CUdeviceptr p;
  CHECK_CU(cuMemAlloc(&p, kElems * sizeof(uint32_t)));
  CHECK_CU(cuMemcpyHtoD(p, init.data(), kElems * sizeof(uint32_t)));

  std::vector<int> limit(copies, 0);
  auto body = [&](long long g0, long long g1) {
    for (long long g = g0; g < g1; g++) {
      const int c = (int)((g / 2) % copies);
      if (!limit[c]) limit[c] = 1024 * (c + 1);
      CHECK_CU(cuFuncSetAttribute(salted[c], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                  limit[c]));
      uint32_t x = a1((uint64_t)g), y = a2((uint64_t)g), b = 7;
      void *pa[] = {&p, &x, &b};
      CHECK_CU(cuLaunchKernel(affine, kBlocks, 1, 1, kThreads, 1, 1, 0, st, pa, nullptr));
      void *ps[] = {&p, &y};
      CHECK_CU(cuLaunchKernel(salted[c], kBlocks, 1, 1, kThreads, 1, 1, 0, st, ps, nullptr));
      void *pb[] = {&p, &y, &x};
      CHECK_CU(cuLaunchKernel(affine, kBlocks, 1, 1, kThreads, 1, 1, 0, st, pb, nullptr));
      CHECK_CU(cuStreamSynchronize(st));
    }
  };
  const double us = time_phases(loop, body, [] { CHECK_CU(cuCtxSynchronize()); });

  std::vector<uint32_t> got(kElems), ref = init;
  CHECK_CU(cuMemcpyDtoH(got.data(), p, kElems * sizeof(uint32_t)));
  for (long long g = 0; g < loop.total(); g++) {
    const unsigned c = (unsigned)((g / 2) % copies);
    for (uint32_t i = 0; i < kElems; i++) {
      ref[i] = drv_affine(ref[i], i, a1((uint64_t)g), 7);
      ref[i] = drv_salted(ref[i], i, a2((uint64_t)g), salt_of(c));
      ref[i] = drv_affine(ref[i], i, a2((uint64_t)g), a1((uint64_t)g));
    }
  }
  const bool ok = check_equal("p", got, ref);
  return report(loop.total() * 3, checksum_of(got), us, ok);
}
