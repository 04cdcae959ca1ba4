// pipeline50 -- a ~50-launch pipeline of distinct kernels, run once, as a program that times a
// one-off job sees it: a stable LSD radix sort of n 32-bit keys (with their indices as values)
// in 8 passes of 4 bits.
//
//   init                 keys[i] = key_of(i, seed), vals[i] = i
//   pass P = 0..7, each kernel a distinct function (templates on P), digit = key >> 4P & 15:
//     zero<P>            counts = 0                              (16 x blocks, digit-major)
//     hist<P>            counts[d * blocks + b] = keys of tile b with digit d
//     scan_local<P>      exclusive scan of counts in chunks of 256, chunk totals to sums
//     scan_top<P>        exclusive scan of the chunk totals
//     scan_add<P>        counts[i] += sums[i / 256]
//     scatter<P>         stable scatter of tile b's keys/vals to the other buffer
//   check                descents[0] = number of i with keys[i] > keys[i + 1]
// = 50 launches on one created stream.  Timed with a host clock: from the first launch to the
// return of cudaStreamSynchronize after the last.  No --iters / --warmup / --mode: it runs once.
// The CPU model is std::stable_sort of the same keys.
#include <algorithm>
#include <numeric>
#include <utility>

#include "common.h"

namespace {

constexpr uint32_t kTile = 256, kDigits = 16, kPasses = 8;

__host__ __device__ inline uint32_t key_of(uint32_t i, uint32_t seed) {
  uint32_t x = (i * 0x9E3779B1u) ^ seed;
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  x *= 0xC2B2AE35u;
  return x ^ (x >> 16);
}

template <int P>
__device__ __forceinline__ uint32_t digit(uint32_t k) {
  return (k >> (4 * P)) & (kDigits - 1);
}

__global__ void init_kernel(uint32_t *keys, uint32_t *vals, uint32_t n, uint32_t seed) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) keys[i] = key_of(i, seed), vals[i] = i;
}

template <int P>
__global__ void zero_kernel(uint32_t *counts, uint32_t len) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < len) counts[i] = 0;
}

template <int P>
__global__ void hist_kernel(const uint32_t *keys, uint32_t n, uint32_t *counts, uint32_t nb) {
  __shared__ uint32_t h[kDigits];
  const uint32_t t = threadIdx.x, i = blockIdx.x * kTile + t;
  if (t < kDigits) h[t] = 0;
  __syncthreads();
  if (i < n) atomicAdd(&h[digit<P>(keys[i])], 1u);
  __syncthreads();
  if (t < kDigits) counts[t * nb + blockIdx.x] = h[t];
}

template <int P>
__global__ void scan_local_kernel(uint32_t *counts, uint32_t *sums, uint32_t len) {
  __shared__ uint32_t s[kTile];
  const uint32_t t = threadIdx.x, i = blockIdx.x * kTile + t;
  const uint32_t v = i < len ? counts[i] : 0;
  s[t] = v;
  __syncthreads();
  for (uint32_t off = 1; off < kTile; off <<= 1) {  // inclusive Hillis-Steele scan
    const uint32_t add = t >= off ? s[t - off] : 0;
    __syncthreads();
    s[t] += add;
    __syncthreads();
  }
  if (i < len) counts[i] = s[t] - v;
  if (t == kTile - 1) sums[blockIdx.x] = s[t];
}

template <int P>
__global__ void scan_top_kernel(uint32_t *sums, uint32_t chunks) {
  if (threadIdx.x != 0) return;
  uint32_t run = 0;
  for (uint32_t c = 0; c < chunks; c++) {
    const uint32_t v = sums[c];
    sums[c] = run;
    run += v;
  }
}

template <int P>
__global__ void scan_add_kernel(uint32_t *counts, const uint32_t *sums, uint32_t len) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < len) counts[i] += sums[i / kTile];
}

template <int P>
__global__ void scatter_kernel(const uint32_t *kin, const uint32_t *vin, uint32_t *kout,
                               uint32_t *vout, const uint32_t *counts, uint32_t n, uint32_t nb) {
  __shared__ uint32_t d[kTile];
  const uint32_t t = threadIdx.x, i = blockIdx.x * kTile + t;
  const uint32_t k = i < n ? kin[i] : 0;
  d[t] = i < n ? digit<P>(k) : kDigits;  // kDigits: no key
  __syncthreads();
  if (i >= n) return;
  uint32_t rank = 0;  // earlier keys of the tile with the same digit: keeps the sort stable
  for (uint32_t j = 0; j < t; j++) rank += d[j] == d[t];
  const uint32_t dest = counts[d[t] * nb + blockIdx.x] + rank;
  kout[dest] = k;
  vout[dest] = vin[i];
}

__global__ void check_kernel(const uint32_t *keys, uint32_t n, uint32_t *descents) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i + 1 < n && keys[i] > keys[i + 1]) atomicAdd(descents, 1u);
}

struct Sort {
  uint32_t n, nb, len, chunks;
  cudaStream_t st;
  uint32_t *keys[2], *vals[2], *counts, *sums, *descents;
};

template <int P>
void pass(const Sort &s) {
  const uint32_t len_blocks = (s.len + kTile - 1) / kTile;
  zero_kernel<P><<<len_blocks, kTile, 0, s.st>>>(s.counts, s.len);
  hist_kernel<P><<<s.nb, kTile, 0, s.st>>>(s.keys[P % 2], s.n, s.counts, s.nb);
  scan_local_kernel<P><<<s.chunks, kTile, 0, s.st>>>(s.counts, s.sums, s.len);
  scan_top_kernel<P><<<1, 32, 0, s.st>>>(s.sums, s.chunks);
  scan_add_kernel<P><<<len_blocks, kTile, 0, s.st>>>(s.counts, s.sums, s.len);
  scatter_kernel<P><<<s.nb, kTile, 0, s.st>>>(s.keys[P % 2], s.vals[P % 2], s.keys[(P + 1) % 2],
                                              s.vals[(P + 1) % 2], s.counts, s.n, s.nb);
}

template <int... P>
void passes(const Sort &s, std::integer_sequence<int, P...>) {
  (pass<P>(s), ...);
}

}  // namespace

int main(int argc, char **argv) {
  Args a(argc, argv,
         "pipeline50: a 50-launch radix sort of distinct kernels, run once, timed by the program");
  const uint64_t seed = seed_flag(a);
  Sort s;
  s.n = (uint32_t)a.num("n", 65536, 2, 1 << 20, "keys");
  a.done();
  s.nb = (s.n + kTile - 1) / kTile;
  s.len = kDigits * s.nb;
  s.chunks = (s.len + kTile - 1) / kTile;
  s.st = new_stream();
  for (int b = 0; b < 2; b++) {
    s.keys[b] = device_alloc<uint32_t>(s.n);
    s.vals[b] = device_alloc<uint32_t>(s.n);
  }
  s.counts = device_alloc<uint32_t>(s.len);
  s.sums = device_alloc<uint32_t>(s.chunks);
  s.descents = device_alloc<uint32_t>(1);
  CHECK_CUDA(cudaMemset(s.descents, 0, sizeof(uint32_t)));
  CHECK_CUDA(cudaDeviceSynchronize());
  const uint32_t seed32 = (uint32_t)seed ^ (uint32_t)(seed >> 32);

  region_mark(true);  // the timed region, as profilers (and the replay model) see it
  const double t0 = now_us();
  init_kernel<<<s.nb, kTile, 0, s.st>>>(s.keys[0], s.vals[0], s.n, seed32);
  passes(s, std::make_integer_sequence<int, kPasses>());
  check_kernel<<<s.nb, kTile, 0, s.st>>>(s.keys[kPasses % 2], s.n, s.descents);
  CHECK_LAUNCH();
  CHECK_CUDA(cudaStreamSynchronize(s.st));
  const double t1 = now_us();
  region_mark(false);

  const std::vector<uint32_t> keys = from_device(s.keys[kPasses % 2], s.n),
                              vals = from_device(s.vals[kPasses % 2], s.n),
                              descents = from_device(s.descents, 1);
  std::vector<uint32_t> want_vals(s.n), want_keys(s.n);
  std::iota(want_vals.begin(), want_vals.end(), 0u);
  std::stable_sort(want_vals.begin(), want_vals.end(), [&](uint32_t x, uint32_t y) {
    return key_of(x, seed32) < key_of(y, seed32);
  });
  for (uint32_t i = 0; i < s.n; i++) want_keys[i] = key_of(want_vals[i], seed32);
  const bool ok = check_equal("keys", keys, want_keys) & check_equal("vals", vals, want_vals) &
                  check_equal("descents", descents, std::vector<uint32_t>{0});
  return report(2 + 6 * kPasses, checksum_of(keys, vals), t1 - t0, ok);
}
