/* The kernel-launch entry points. Each only packs its arguments into an ag_launch and hands it
 * to the engine, which also passes it through to the real variant of the same name. */
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>

#include "cache/driver.h"
#include "cache/engine.h"
#include "real.h"

/* Where the driver lacks this variant (or is absent), the caller gets an error, not a crash. */
#define AG_NEED(name)                                                                          \
    if (AG_UNLIKELY(!ag_drv.name) && (ag_real_init() != 0 || !ag_drv.name))                    \
        return CUDA_ERROR_NOT_FOUND;

/* cuLaunchKernel and cuLaunchCooperativeKernel (and their _ptsz variants) differ only in the
 * trailing `extra` parameter: extra_param is `AG_EXTRA_PARAM` or empty, extra the value. */
#define AG_EXTRA_PARAM , void **extra
#define AG_LAUNCH_ENTRY(name, entry, extra_param, extra)                                       \
    AG_EXPORT __attribute__((hot)) CUresult CUDAAPI name(                                      \
        CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,         \
        unsigned bz, unsigned smem, CUstream s, void **params extra_param)                     \
    {                                                                                          \
        AG_NEED(name)                                                                          \
        ag_launch l = { f, { gx, gy, gz }, { bx, by, bz }, smem, s, NULL, 0, params, extra,    \
                        entry };                                                               \
        return ag_launch_kernel(&l);                                                           \
    }
AG_LAUNCH_ENTRY(cuLaunchKernel, AG_ENTRY_LAUNCH, AG_EXTRA_PARAM, extra)
AG_LAUNCH_ENTRY(cuLaunchKernel_ptsz, AG_ENTRY_LAUNCH_PTSZ, AG_EXTRA_PARAM, extra)
AG_LAUNCH_ENTRY(cuLaunchCooperativeKernel, AG_ENTRY_COOP, , NULL)
AG_LAUNCH_ENTRY(cuLaunchCooperativeKernel_ptsz, AG_ENTRY_COOP_PTSZ, , NULL)

#define AG_LAUNCH_EX_ENTRY(name, entry)                                                        \
    AG_EXPORT __attribute__((hot)) CUresult CUDAAPI name(const CUlaunchConfig *c, CUfunction f,   \
                                                         void **params, void **extra)         \
    {                                                                                          \
        AG_NEED(name)                                                                          \
        static const CUlaunchConfig none; /* a NULL config is the driver's to refuse */       \
        const CUlaunchConfig *k = c ? c : &none;                                               \
        ag_launch l = { f,       { k->gridDimX, k->gridDimY, k->gridDimZ },                    \
                        { k->blockDimX, k->blockDimY, k->blockDimZ },                          \
                        k->sharedMemBytes, k->hStream, k->attrs, k->numAttrs, params, extra,   \
                        entry, c };                                                            \
        return ag_launch_kernel(&l);                                                           \
    }
AG_LAUNCH_EX_ENTRY(cuLaunchKernelEx, AG_ENTRY_EX)
AG_LAUNCH_EX_ENTRY(cuLaunchKernelEx_ptsz, AG_ENTRY_EX_PTSZ)

