// thrust_loop -- a user's Thrust program: an own kernel makes key/value pairs, then Thrust sorts,
// transforms, scans and reduces them, every call on the app's created stream through
// thrust::cuda::par.on(s), with Thrust's default temporary storage (cudaMalloc / cudaFree inside
// each call that needs it) and its default synchronous behaviour (the stream is synchronized at
// the end of each call; reduce returns its value to the host).
//
// Iteration g (0-based, warm-up included), n elements, all uint32 (wrapping arithmetic):
//   fill_kernel:          keys[i] = mix(i ^ ks(g)), vals[i] = mix(i * 0x9E3779B1 + vs(g))
//   thrust::sort_by_key:  keys, vals sorted by key (in place)
//   thrust::transform:    mapped[i] = vals[i] * 3 + 1
//   thrust::inclusive_scan: scanned = prefix sums of mapped
//   thrust::reduce:       r(g) = sum of scanned -> host; fold = (fold ^ r(g)) * 16777619
// mix is murmur3's fmix32, a bijection of uint32, and i -> i ^ ks(g) is one too, so the keys of
// an iteration are distinct: the sorted order is unique (sort_by_key is not stable, and need not
// be), and r(g) = sum_j (n - j) * mapped[j] depends on it.  ks(g) and vs(g) are per-iteration
// salts from --seed and g, passed to fill_kernel as scalars (they change every iteration).
//
// Checked on the CPU: r(g) of every iteration (std::sort, std::transform, std::partial_sum,
// std::accumulate, all uint32) and the last iteration's four buffers.  Thrust launches its own
// kernels, so `launches:` is unknown; `own_launches:` counts fill_kernel's.
#include <algorithm>
#include <exception>
#include <numeric>

#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include "common.h"

namespace {

constexpr int kThreads = 256;

__host__ __device__ inline uint32_t fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}

__host__ __device__ inline uint32_t key_of(uint32_t i, uint32_t ks) { return fmix32(i ^ ks); }
__host__ __device__ inline uint32_t value_of(uint32_t i, uint32_t vs) {
  return fmix32(i * 0x9E3779B1u + vs);
}

// The per-iteration salts.
struct Salts {
  uint32_t ks, vs;
};

Salts salts(uint64_t seed, long long g) {
  const uint32_t base = fmix32((uint32_t)seed ^ (uint32_t)(seed >> 32) ^ 0x5BD1E995u);
  const uint32_t ks = fmix32(base + (uint32_t)g * 0x85EBCA77u);
  return Salts{ks, fmix32(ks ^ 0x27D4EB2Fu)};
}

__global__ void fill_kernel(uint32_t *keys, uint32_t *vals, int n, uint32_t ks, uint32_t vs) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    keys[i] = key_of((uint32_t)i, ks);
    vals[i] = value_of((uint32_t)i, vs);
  }
}

struct Affine {
  __host__ __device__ uint32_t operator()(uint32_t x) const { return x * 3u + 1u; }
};

// The CPU model of iteration g: the four buffers as the GPU leaves them, and r(g).
struct Model {
  std::vector<uint32_t> keys, vals, mapped, scanned;
  std::vector<uint64_t> pairs;  // key << 32 | value: sorting these sorts by key (keys distinct)

  uint32_t run(uint64_t seed, long long g, size_t n) {
    const Salts s = salts(seed, g);
    pairs.resize(n);
    for (size_t i = 0; i < n; i++)
      pairs[i] = (uint64_t)key_of((uint32_t)i, s.ks) << 32 | value_of((uint32_t)i, s.vs);
    std::sort(pairs.begin(), pairs.end());
    keys.resize(n);
    vals.resize(n);
    mapped.resize(n);
    scanned.resize(n);
    for (size_t i = 0; i < n; i++) {
      keys[i] = (uint32_t)(pairs[i] >> 32);
      vals[i] = (uint32_t)pairs[i];
    }
    std::transform(vals.begin(), vals.end(), mapped.begin(), Affine{});
    std::partial_sum(mapped.begin(), mapped.end(), scanned.begin());  // uint32_t: wraps
    return std::accumulate(scanned.begin(), scanned.end(), (uint32_t)0);
  }
};

std::vector<uint32_t> download(const thrust::device_vector<uint32_t> &v) {
  std::vector<uint32_t> h(v.size());
  CHECK_CUDA(cudaMemcpy(h.data(), thrust::raw_pointer_cast(v.data()), v.size() * sizeof(uint32_t),
                        cudaMemcpyDeviceToHost));
  return h;
}

int run_app(int argc, char **argv) {
  Args a(argc, argv,
         "thrust_loop: a Thrust program; per iteration an own fill kernel, then sort_by_key, "
         "transform, inclusive_scan and reduce (to the host) on one created stream");
  const LoopFlags loop = loop_flags(a, 300);
  const uint64_t seed = seed_flag(a);
  const int n = (int)a.num("n", 1 << 14, 1, 1 << 24, "elements (key/value pairs)");
  a.done();

  cudaStream_t s = new_stream();
  // Allocated once, before the loop (value-initialised by Thrust on the default stream).
  thrust::device_vector<uint32_t> keys(n), vals(n), mapped(n), scanned(n);
  uint32_t *const keys_p = thrust::raw_pointer_cast(keys.data());
  uint32_t *const vals_p = thrust::raw_pointer_cast(vals.data());
  const dim3 grid((unsigned)((n + kThreads - 1) / kThreads));
  CHECK_CUDA(cudaDeviceSynchronize());

  const long long G = loop.total();
  std::vector<uint32_t> sums;
  sums.reserve((size_t)G);
  uint32_t fold = 0;

  const double us = time_phases(loop, [&](long long g0, long long g1) {
    for (long long g = g0; g < g1; g++) {
      const Salts salt = salts(seed, g);
      fill_kernel<<<grid, kThreads, 0, s>>>(keys_p, vals_p, n, salt.ks, salt.vs);
      CHECK_LAUNCH();
      thrust::sort_by_key(thrust::cuda::par.on(s), keys.begin(), keys.end(), vals.begin());
      thrust::transform(thrust::cuda::par.on(s), vals.begin(), vals.end(), mapped.begin(),
                        Affine{});
      thrust::inclusive_scan(thrust::cuda::par.on(s), mapped.begin(), mapped.end(),
                             scanned.begin());
      const uint32_t r = thrust::reduce(thrust::cuda::par.on(s), scanned.begin(), scanned.end(),
                                        (uint32_t)0, thrust::plus<uint32_t>());
      sums.push_back(r);
      fold = (fold ^ r) * 16777619u;
    }
  });

  const std::vector<uint32_t> got_keys = download(keys), got_vals = download(vals),
                              got_mapped = download(mapped), got_scanned = download(scanned);

  // CPU model: every iteration's r(g) (iterations are independent: split over host threads),
  // then the last iteration's buffers.
  std::vector<uint32_t> want((size_t)G);
  parallel_for((size_t)G, [&](size_t lo, size_t hi) {
    Model m;
    for (size_t g = lo; g < hi; g++) want[g] = m.run(seed, (long long)g, (size_t)n);
  }, 1);
  Model last;
  last.run(seed, G - 1, (size_t)n);

  bool ok = check_equal("keys", got_keys, last.keys) & check_equal("vals", got_vals, last.vals) &
            check_equal("mapped", got_mapped, last.mapped) &
            check_equal("scanned", got_scanned, last.scanned);
  if (sums.size() != want.size()) {
    fprintf(stderr, "mismatch: %zu reduce values, expected %zu\n", sums.size(), want.size());
    ok = false;
  } else {
    size_t bad = 0;
    for (size_t g = 0; g < want.size(); g++)
      if (sums[g] != want[g] && bad++ < 5)
        fprintf(stderr, "mismatch: reduce of iteration %zu = %08" PRIx32 ", expected %08" PRIx32 "\n",
                g, sums[g], want[g]);
    if (bad) fprintf(stderr, "mismatch: %zu of %zu reduce values differ\n", bad, want.size());
    ok &= bad == 0;
  }

  printf("reduce_fold: %08" PRIx32 "\n", fold);
  // Thrust launches its own kernels, so only the app's own launch calls are known.
  printf("own_launches: %lld\n", G);
  const std::vector<uint32_t> fold_v(1, fold);
  return report(kLaunchesUnknown,
                checksum_of(got_keys, got_vals, got_mapped, got_scanned, sums, fold_v), us, ok);
}

}  // namespace

int main(int argc, char **argv) {
  // Thrust reports CUDA errors (and failed allocations) by throwing.
  try {
    return run_app(argc, argv);
  } catch (const std::exception &e) {
    fprintf(stderr, "CUDA error: Thrust: %s\n", e.what());
    die(2);
  }
}
