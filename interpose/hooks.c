/* The ordering-point wrappers, one per line of hooks_gen.h (generated from cuda.h by
 * tools/gen_hooks.py), and the table of everything we wrap.
 *
 * A wrapper tells the engine what is about to happen, calls the real function with the
 * caller's arguments, and returns its result untouched: the application sees exactly the
 * driver's answer at the same call. */
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>

#include "cache/driver.h"
#include "cache/engine.h"
#include "real.h"

/* What each kind of ordering point tells the engine, before and after the real call. */
#define AG_PRE_STREAM(s, ptsz) ag_order_stream(s, ptsz)
#define AG_PRE_SYNC(s, ptsz) ag_order_sync_copy(ptsz)
#define AG_PRE_ALL(s, ptsz) ag_order_all()
#define AG_PRE_INVALIDATE(s, ptsz) ag_order_invalidate()
#define AG_PRE_DESTROY(s, ptsz) ag_order_stream_destroy(s)
#define AG_PRE_FREE_ASYNC(s, ptsz) ag_order_all()
#define AG_PRE_CAPTURE_BEGIN(s, ptsz) ag_order_capture_begin(s, ptsz)
#define AG_PRE_CAPTURE_END(s, ptsz) ag_order_stream(s, ptsz)
#define AG_POST_STREAM(s, ptsz, r) (void)0
#define AG_POST_SYNC(s, ptsz, r) (void)0
#define AG_POST_ALL(s, ptsz, r) (void)0
#define AG_POST_INVALIDATE(s, ptsz, r) (void)0
#define AG_POST_DESTROY(s, ptsz, r) (void)0
#define AG_POST_FREE_ASYNC(s, ptsz, r) (void)0
#define AG_POST_CAPTURE_BEGIN(s, ptsz, r) ag_order_capture_begin_done(s, ptsz, r)
#define AG_POST_CAPTURE_END(s, ptsz, r) ag_order_capture_end_done(s, ptsz)

#define AG_HOOK(action, name, ptsz, params, args, s)                                           \
    static CUresult(CUDAAPI *real_##name) params;                                              \
    AG_EXPORT CUresult CUDAAPI name params                                                     \
    {                                                                                          \
        if (AG_UNLIKELY(!real_##name) && (ag_real_init() != 0 || !real_##name))                \
            return CUDA_ERROR_NOT_FOUND;                                                       \
        AG_PRE_##action(s, ptsz);                                                              \
        CUresult r = real_##name args;                                                         \
        AG_POST_##action(s, ptsz, r);                                                          \
        return r;                                                                              \
    }
#include "hooks_gen.h"
#undef AG_HOOK

/* Hand-written wrappers (launch.c, procaddr.c); their real functions live in ag_drv. */
extern CUresult (*ag_real_cuGetProcAddress)(const char *, void **, int, cuuint64_t);
extern CUresult (*ag_real_cuGetProcAddress_v2)(const char *, void **, int, cuuint64_t,
                                               CUdriverProcAddressQueryResult *);

ag_hook ag_hook_table[] = {
#define AG_HOOK(action, name, ptsz, params, args, s) { #name, (void *)name, (void **)&real_##name },
#include "hooks_gen.h"
#undef AG_HOOK
    { "cuLaunchKernel", (void *)cuLaunchKernel, (void **)&ag_drv.cuLaunchKernel },
    { "cuLaunchKernel_ptsz", (void *)cuLaunchKernel_ptsz, (void **)&ag_drv.cuLaunchKernel_ptsz },
    { "cuLaunchKernelEx", (void *)cuLaunchKernelEx, (void **)&ag_drv.cuLaunchKernelEx },
    { "cuLaunchKernelEx_ptsz", (void *)cuLaunchKernelEx_ptsz,
      (void **)&ag_drv.cuLaunchKernelEx_ptsz },
    { "cuLaunchCooperativeKernel", (void *)cuLaunchCooperativeKernel,
      (void **)&ag_drv.cuLaunchCooperativeKernel },
    { "cuLaunchCooperativeKernel_ptsz", (void *)cuLaunchCooperativeKernel_ptsz,
      (void **)&ag_drv.cuLaunchCooperativeKernel_ptsz },
    { "cuGetProcAddress", (void *)cuGetProcAddress, (void **)&ag_real_cuGetProcAddress },
    { "cuGetProcAddress_v2", (void *)cuGetProcAddress_v2, (void **)&ag_real_cuGetProcAddress_v2 },
};
const size_t ag_hook_count = sizeof ag_hook_table / sizeof ag_hook_table[0];
