// driver_api -- pure CUDA driver API (no cudart): primary context, a module loaded from
// driver_kernels.fatbin (next to the executable, or --module=PATH), and every kernel-parameter
// form: cuLaunchKernel with kernelParams, cuLaunchKernel with a packed `extra` buffer,
// cuLaunchKernelEx with no attributes and with a priority attribute.  Stream sync per iteration.
//
// driver_api-ptsz is built with CUDA_API_PER_THREAD_DEFAULT_STREAM=1 (the *_ptsz / *_ptds entry
// points) and launches on stream 0, the per-thread default stream there.
//
// Iteration g (0-based, warm-up included), five launches on one 4096-word buffer, in order:
//   1. cuLaunchKernel   kernelParams  dk_affine(p, a = 0x01000193 + g, b = g)
//   2. cuLaunchKernel   extra         dk_mixed(p, {d = 3g, c = g % 100 + 1}, k = g % 90 + 7,
//                                              x = g/4 + 1.5)
//   3. cuLaunchKernelEx no attrs      dk_mixed(p, {d = g + 0.0, c = 42}, k = 3, x = 0.25)
//   4. cuLaunchKernelEx priority      dk_affine(p, a = 7, b = g ^ 0xFFFF)
//   5. cuLaunchKernel   extra         dk_affine(p, a = g * 2654435761, b = 12345)
#include <cuda.h>

#include <cstddef>

#include "common.h"
#include "driver_ops.h"

namespace {

constexpr unsigned kElems = 4096, kBlocks = 16, kThreads = 256;

struct Affine {
  uint32_t a, b;
};
struct MixedArgs {
  Mixed s;
  char k;
  double x;
};

// The launches' arguments for iteration g (shared by the GPU loop and the CPU model).
Affine affine1(uint64_t g) { return {0x01000193u + (uint32_t)g, (uint32_t)g}; }
MixedArgs mixed2(uint64_t g) {
  return {{3.0 * (double)g, (char)(g % 100 + 1)}, (char)(g % 90 + 7), (double)g / 4.0 + 1.5};
}
MixedArgs mixed3(uint64_t g) { return {{(double)g, 42}, 3, 0.25}; }
Affine affine4(uint64_t g) { return {7u, (uint32_t)g ^ 0xFFFFu}; }
Affine affine5(uint64_t g) { return {(uint32_t)g * 2654435761u, 12345u}; }

// A CU_LAUNCH_PARAM_BUFFER_POINTER buffer: each argument at the next offset aligned to its own
// alignment, as the kernel ABI lays parameters out.
struct ParamBuffer {
  alignas(16) unsigned char bytes[128];
  size_t size = 0;
  template <class T>
  void put(const T &v) {
    size = (size + alignof(T) - 1) / alignof(T) * alignof(T);
    memcpy(bytes + size, &v, sizeof v);
    size += sizeof v;
  }
};

// Launches f with a packed argument buffer through the `extra` form of cuLaunchKernel.
void launch_extra(CUfunction f, CUstream st, ParamBuffer &pb) {
  size_t size = pb.size;
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, pb.bytes, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   CU_LAUNCH_PARAM_END};
  CHECK_CU(cuLaunchKernel(f, kBlocks, 1, 1, kThreads, 1, 1, 0, st, nullptr, extra));
}

struct Driver {
  CUfunction affine, mixed;
  CUstream st;
  CUdeviceptr p;
  int prio;
};

void run(const Driver &d, long long g0, long long g1) {
  CUlaunchAttribute a_prio;
  memset(&a_prio, 0, sizeof a_prio);
  a_prio.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
  a_prio.value.priority = d.prio;
  CUlaunchConfig cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.gridDimX = kBlocks;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = kThreads;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.hStream = d.st;
  CUlaunchConfig cfg_prio = cfg;
  cfg_prio.attrs = &a_prio;
  cfg_prio.numAttrs = 1;

  CUdeviceptr p = d.p;
  for (long long g = g0; g < g1; g++) {
    {
      Affine f = affine1((uint64_t)g);
      void *params[] = {&p, &f.a, &f.b};
      CHECK_CU(cuLaunchKernel(d.affine, kBlocks, 1, 1, kThreads, 1, 1, 0, d.st, params, nullptr));
    }
    {
      MixedArgs m = mixed2((uint64_t)g);
      ParamBuffer pb;
      pb.put(p);
      pb.put(m.s);
      pb.put(m.k);
      pb.put(m.x);
      launch_extra(d.mixed, d.st, pb);
    }
    {
      MixedArgs m = mixed3((uint64_t)g);
      void *params[] = {&p, &m.s, &m.k, &m.x};
      CHECK_CU(cuLaunchKernelEx(&cfg, d.mixed, params, nullptr));
    }
    {
      Affine f = affine4((uint64_t)g);
      void *params[] = {&p, &f.a, &f.b};
      CHECK_CU(cuLaunchKernelEx(&cfg_prio, d.affine, params, nullptr));
    }
    {
      Affine f = affine5((uint64_t)g);
      ParamBuffer pb;
      pb.put(p);
      pb.put(f.a);
      pb.put(f.b);
      launch_extra(d.affine, d.st, pb);
    }
    CHECK_CU(cuStreamSynchronize(d.st));
  }
}

void cpu_model(long long total, std::vector<uint32_t> &x) {
  auto affine = [&](Affine f) {
    for (uint32_t i = 0; i < kElems; i++) x[i] = drv_affine(x[i], i, f.a, f.b);
  };
  auto mixed = [&](MixedArgs m) {
    for (uint32_t i = 0; i < kElems; i++) x[i] = drv_mixed(x[i], i, m.s, m.k, m.x);
  };
  for (long long g = 0; g < total; g++) {
    affine(affine1((uint64_t)g));
    mixed(mixed2((uint64_t)g));
    mixed(mixed3((uint64_t)g));
    affine(affine4((uint64_t)g));
    affine(affine5((uint64_t)g));
  }
}

}  // namespace

int main(int argc, char **argv) {
  Args a(argc, argv,
         "driver_api: cuLaunchKernel (kernelParams and extra) and cuLaunchKernelEx (with and "
         "without a priority attribute) on a module loaded with cuModuleLoadData");
  const LoopFlags loop = loop_flags(a, 100);
  const uint64_t seed = seed_flag(a);
  const std::string module =
      a.str("module", "", "fatbin/cubin with dk_affine, dk_mixed (default: next to the exe)");
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
  const char *def_stream = "null";
#else
  const char *def_stream = "created";
#endif
  const bool null_stream = a.choice("stream", def_stream, "created|null",
                                    "cuStreamCreate'd stream or stream 0") == "null";
  a.done();

  CUmodule mod = driver_setup(module);
  Driver d;
  CHECK_CU(cuModuleGetFunction(&d.affine, mod, "dk_affine"));
  CHECK_CU(cuModuleGetFunction(&d.mixed, mod, "dk_mixed"));
  int least = 0;
  CHECK_CU(cuCtxGetStreamPriorityRange(&least, &d.prio));
  d.st = nullptr;
  if (!null_stream) CHECK_CU(cuStreamCreate(&d.st, CU_STREAM_DEFAULT));

  const std::vector<uint32_t> init = random_words(kElems, seed);
  CHECK_CU(cuMemAlloc(&d.p, kElems * sizeof(uint32_t)));
  CHECK_CU(cuMemcpyHtoD(d.p, init.data(), kElems * sizeof(uint32_t)));

  const double us = time_phases(
      loop, [&](long long g0, long long g1) { run(d, g0, g1); },
      [] { CHECK_CU(cuCtxSynchronize()); });

  std::vector<uint32_t> got(kElems);
  CHECK_CU(cuMemcpyDtoH(got.data(), d.p, kElems * sizeof(uint32_t)));
  std::vector<uint32_t> ref = init;
  cpu_model(loop.total(), ref);
  const bool ok = check_equal("p", got, ref);
  return report(loop.total() * 5, checksum_of(got), us, ok);
}
