// driver_kernels.cu -- device code of driver_api, built into driver_kernels.fatbin at make time
// and loaded with cuModuleLoadData.  extern "C" keeps the names cuModuleGetFunction looks up.
#include "driver_ops.h"

extern "C" __global__ void dk_affine(unsigned *p, unsigned a, unsigned b) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  p[i] = drv_affine(p[i], i, a, b);
}

extern "C" __global__ void dk_mixed(unsigned *p, Mixed s, char k, double x) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  p[i] = drv_mixed(p[i], i, s, k, x);
}

// Per module: modcopies loads this image several times and sets each copy's salt, so that
// which copy of dk_salted ran shows in the result (a graph node left on the wrong copy).
extern "C" {
__device__ unsigned dk_salt;  // (the block form: a definition, with the C name)
}

extern "C" __global__ void dk_salted(unsigned *p, unsigned a) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  p[i] = drv_salted(p[i], i, a, dk_salt);
}
