// What the cuBLAS sample apps share: the cuBLAS status check, small-integer inputs (exact in
// any summation order), uploads, and the int32 CPU model of C = sum_j A[j % distinct] * B.
#pragma once

#include <cublas_v2.h>

#include "common.h"

inline void check_cublas_(cublasStatus_t s, const char *call, const char *file, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  fprintf(stderr, "CUDA error: %s failed: cuBLAS status %d at %s:%d\n", call, (int)s, file, line);
  die(2);
}
#define CHECK_CUBLAS(call) check_cublas_((call), #call, __FILE__, __LINE__)

// count integers in [-2, 2] as floats: every partial sum of the apps stays below 2^24.
inline std::vector<float> small_ints(size_t count, uint64_t seed) {
  Rng r(seed);
  std::vector<float> v(count);
  for (auto &x : v) x = (float)((int)r.below(5) - 2);
  return v;
}

inline float *upload(const std::vector<float> &h) {
  float *d = device_alloc<float>(h.size());
  CHECK_CUDA(cudaMemcpy(d, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
  return d;
}

// C = (sum over j < gemms of A[j % distinct]) * B, column-major m x k times k x n, in int32
// (exact, as on the GPU), as the bits the apps compare.
inline std::vector<uint32_t> gemm_sum_model(const std::vector<float> *A, int distinct,
                                            const std::vector<float> &B, long long gemms, int m,
                                            int n, int k) {
  std::vector<int32_t> S((size_t)m * k, 0);
  for (long long j = 0; j < gemms; j++)
    for (size_t i = 0; i < S.size(); i++) S[i] += (int32_t)A[j % distinct][i];
  std::vector<uint32_t> want((size_t)m * n);
  parallel_for((size_t)n, [&](size_t c0, size_t c1) {
    std::vector<int32_t> col(m);
    for (size_t c = c0; c < c1; c++) {
      std::fill(col.begin(), col.end(), 0);
      for (int kk = 0; kk < k; kk++) {
        const int32_t bkc = (int32_t)B[(size_t)kk + c * k];
        for (int i = 0; i < m; i++) col[i] += S[(size_t)i + (size_t)kk * m] * bkc;
      }
      for (int i = 0; i < m; i++) want[(size_t)i + c * m] = (uint32_t)col[i];
    }
  }, 1);
  return want;
}
