/* cuGetProcAddress: cudart 13 asks the driver for every function through the pointer it gets
 * for "cuGetProcAddress" (at version 12000: the 5-argument _v2; below: the 4-argument one).
 * Both our wrappers call the real function with the caller's arguments unchanged and only
 * swap the answer when it is a real function we wrap -- including when the answer is the real
 * cuGetProcAddress itself, so every later lookup also comes through here. */
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>

#include "real.h"

CUresult (*ag_real_cuGetProcAddress)(const char *, void **, int, cuuint64_t);
CUresult (*ag_real_cuGetProcAddress_v2)(const char *, void **, int, cuuint64_t,
                                        CUdriverProcAddressQueryResult *);

static void swap(void **pfn)
{
    if (pfn && *pfn) {
        void *w = ag_real_wrapper_for(NULL, *pfn);
        if (w)
            *pfn = w;
    }
}

AG_EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                               cuuint64_t flags,
                                               CUdriverProcAddressQueryResult *symbolStatus)
{
    if (ag_real_init() != 0 || !ag_real_cuGetProcAddress_v2)
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = ag_real_cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, symbolStatus);
    if (r == CUDA_SUCCESS)
        swap(pfn);
    return r;
}

AG_EXPORT CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                            cuuint64_t flags)
{
    if (ag_real_init() != 0 || !ag_real_cuGetProcAddress)
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = ag_real_cuGetProcAddress(symbol, pfn, cudaVersion, flags);
    if (r == CUDA_SUCCESS)
        swap(pfn);
    return r;
}
