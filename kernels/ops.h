// ops.h -- the element operations shared by the GPU kernels and the CPU models of the apps.
//
// op<K>(x, i, s) maps element value x at index i with scalar argument s to its new value, in
// uint32 arithmetic that wraps (so GPU and CPU agree bit for bit).  Every op is a bijection in x,
// so a lost, repeated or reordered launch, or a stale argument, changes the final values.
#pragma once

#include <cstdint>
#include <cstdlib>

#ifdef __CUDACC__
#define OPS_HD __host__ __device__ __forceinline__
#else
#define OPS_HD inline
#endif

constexpr int kOpKinds = 8;

OPS_HD uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }  // 0 < r < 32

template <int K>
OPS_HD uint32_t op(uint32_t x, uint32_t i, uint32_t s) {
  static_assert(K >= 0 && K < kOpKinds, "op kind");
  if constexpr (K == 0) return x * 0x9E3779B1u + s;
  if constexpr (K == 1) return (x ^ (x >> 11)) + (s ^ i);
  if constexpr (K == 2) return rotl32(x, 7) * 5u + s;
  if constexpr (K == 3) return ((x + i) * 0x85EBCA6Bu) ^ s;
  if constexpr (K == 4) return ~x + s * 3u + i;
  if constexpr (K == 5) return (x ^ (x << 9)) * 0x01000193u + s + i;
  if constexpr (K == 6) return rotl32(x ^ s, 13) + i * 0x27D4EB2Fu;
  if constexpr (K == 7) {
    uint32_t y = x + (s ^ 0xA5A5A5A5u);
    y ^= y >> 16;
    return y * 0xC2B2AE35u;
  }
  return x;
}

// Runs CALL(0) .. CALL(7) for a run-time kind k.
#define OPS_DISPATCH(k, CALL) \
  switch (k) {                \
    case 0: CALL(0); break;   \
    case 1: CALL(1); break;   \
    case 2: CALL(2); break;   \
    case 3: CALL(3); break;   \
    case 4: CALL(4); break;   \
    case 5: CALL(5); break;   \
    case 6: CALL(6); break;   \
    case 7: CALL(7); break;   \
    default: abort();         \
  }

// CPU model: out[i] = op<k>(in[i], i, s) for i in [lo, hi); in may equal out.
template <int K>
void cpu_op_range(const uint32_t *in, uint32_t *out, uint32_t s, size_t lo, size_t hi) {
  for (size_t i = lo; i < hi; i++) out[i] = op<K>(in[i], (uint32_t)i, s);
}

inline void cpu_op(int k, const uint32_t *in, uint32_t *out, uint32_t s, size_t lo, size_t hi) {
#define OPS_CPU_CALL(K) cpu_op_range<K>(in, out, s, lo, hi)
  OPS_DISPATCH(k, OPS_CPU_CALL)
#undef OPS_CPU_CALL
}

#ifdef __CUDACC__

// One thread per element; eight distinct __global__ functions (op_kernel<0> .. <7>).  in may
// equal out (in-place), hence no __restrict__.
template <int K>
__global__ void op_kernel(const uint32_t *in, uint32_t *out, uint32_t s, uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = op<K>(in[i], i, s);
}

// Host-side handle of op_kernel<k>, for cudaLaunchKernel and graph kernel nodes.
inline const void *op_kernel_fn(int k) {
  const void *fn = nullptr;
#define OPS_FN_CALL(K) fn = (const void *)op_kernel<K>
  OPS_DISPATCH(k, OPS_FN_CALL)
#undef OPS_FN_CALL
  return fn;
}

// op_kernel<k><<<grid, block, 0, st>>>(in, out, s, n) for a run-time k.
inline void launch_op(int k, dim3 grid, dim3 block, cudaStream_t st, const uint32_t *in,
                      uint32_t *out, uint32_t s, uint32_t n) {
#define OPS_LAUNCH_CALL(K) op_kernel<K><<<grid, block, 0, st>>>(in, out, s, n)
  OPS_DISPATCH(k, OPS_LAUNCH_CALL)
#undef OPS_LAUNCH_CALL
}

#endif  // __CUDACC__
