// driver_ops.h -- what driver_kernels.cu (device code, loaded as a fatbin) and driver_api.cpp
// (host code, no CUDA compiler) must agree on: the kernels' parameter types and element maths.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define DRV_HD __host__ __device__ inline
#else
#define DRV_HD inline
#endif

// 16 bytes, 8-byte aligned: a by-value struct parameter with tail padding.
struct Mixed {
  double d;
  char c;
};

// dk_affine(unsigned *p, unsigned a, unsigned b)
DRV_HD uint32_t drv_affine(uint32_t x, uint32_t i, uint32_t a, uint32_t b) {
  return x * (a | 1u) + b + i;
}

// dk_mixed(unsigned *p, Mixed s, char k, double x).  The doubles are integers or quarters, so
// the conversions are exact; every parameter lands in a different part of the result, so a
// mis-packed argument shows.
DRV_HD uint32_t drv_mixed(uint32_t v, uint32_t i, Mixed s, char k, double x) {
  return (v ^ (uint32_t)(int64_t)s.d) * 0x2C1B3C6Du + (uint32_t)(unsigned char)s.c * 0x10000u +
         (uint32_t)(unsigned char)k * 0x100u + (uint32_t)(int64_t)(x * 4.0) + i;
}

// dk_salted(unsigned *p, unsigned a): with the module's own dk_salt.
DRV_HD uint32_t drv_salted(uint32_t x, uint32_t i, uint32_t a, uint32_t salt) {
  return (x ^ salt) * 0x9E3779B1u + a + i;
}
