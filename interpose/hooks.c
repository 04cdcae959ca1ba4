/* The ordering-point wrappers, one per line of hooks_gen.h (generated from cuda.h by
 * tools/gen_hooks.py), and the table of everything we wrap.
 *
 * A wrapper tells the engine what is about to happen, calls the real function with the
 * caller's arguments, and returns its result: the application sees the driver's answer at the
 * same call -- or, when that is CUDA_SUCCESS, an error that a launch we held and reported as
 * done met when it went out (the driver would have returned it already). */
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>
#include <cudaProfiler.h>

#include "cache/copy.h"
#include "cache/driver.h"
#include "cache/engine.h"
#include "cache/funcattr.h"
#include "cache/tracefmt.h"
#include "cache/tracerec.h"
#include "cache/clock.h"
#include "real.h"

/* What each kind of ordering point tells the engine, before and after the real call. The
 * PRE step's value is an error a held launch left on the stream (0: none), returned instead of
 * the real call's CUDA_SUCCESS (ag_order_result): the driver would have returned it already. */
#define AG_PRE_STREAM(s, ptsz) ag_order_stream(s, ptsz)
#define AG_PRE_STREAM_ATTR(s, ptsz) ag_order_stream_attr(s, ptsz)
#define AG_PRE_SYNC(s, ptsz) ag_order_sync_copy(ptsz)
/* frees and teardowns may give an address another memory kind (cache/copy.h) */
#define AG_PRE_ALL(s, ptsz) (ag_copy_forget(), ag_order_all_call())
/* Handles of unloaded functions (or of a torn-down context's) may come back for others. */
#define AG_PRE_INVALIDATE(s, ptsz) (ag_funcattr_reset(), ag_copy_forget(), ag_order_invalidate())
#define AG_PRE_DESTROY(s, ptsz) ag_order_stream_destroy(s)
#define AG_PRE_FREE_ASYNC(s, ptsz) (ag_copy_forget(), ag_order_all_call())
/* a capture begins or ends whatever a held launch left: that error waits for the next call */
#define AG_PRE_CAPTURE_BEGIN(s, ptsz) (ag_order_capture_begin(s, ptsz), CUDA_SUCCESS)
#define AG_PRE_CAPTURE_END(s, ptsz) (ag_order_capture_end(s, ptsz), CUDA_SUCCESS)
/* Async memsets and copies (class COPY) are offered to the engine first; when it does not
 * take them they are stream operations like the rest. */
#define AG_PRE_COPY(s, ptsz) ag_order_stream(s, ptsz)
#define AG_POST_COPY(s, ptsz, r) (void)0
#define AG_POST_STREAM(s, ptsz, r) (void)0
#define AG_POST_STREAM_ATTR(s, ptsz, r) ag_order_stream_attr_done(s, ptsz, r)
#define AG_POST_SYNC(s, ptsz, r) (void)0
#define AG_POST_ALL(s, ptsz, r) (void)0
#define AG_POST_INVALIDATE(s, ptsz, r) (void)0
#define AG_POST_DESTROY(s, ptsz, r) (void)0
#define AG_POST_FREE_ASYNC(s, ptsz, r) (void)0
#define AG_POST_CAPTURE_BEGIN(s, ptsz, r) ag_order_capture_begin_done(s, ptsz, r)
#define AG_POST_CAPTURE_END(s, ptsz, r) ag_order_capture_end_done(s, ptsz)
/* Event queries, waits and timings (class OBSERVE): nothing for the engine; only the trace
 * recorder sees them, and they are handed out only while it records (real.c). */
#define AG_PRE_OBSERVE(s, ptsz) CUDA_SUCCESS
#define AG_POST_OBSERVE(s, ptsz, r) (void)0
#define AG_OFFER_OBSERVE(name, ptsz, rp, args) 0
#define AG_TRC_OBSERVE AG_TRC_OTHER

/* Whether the calls of a class name a stream, for the trace recorder (the others' `s` is
 * NULL, or for SYNC the default stream the class implies). */
#define AG_TR_HAS_STREAM_STREAM 1
#define AG_TR_HAS_STREAM_COPY 1
#define AG_TR_HAS_STREAM_STREAM_ATTR 1
#define AG_TR_HAS_STREAM_DESTROY 1
#define AG_TR_HAS_STREAM_FREE_ASYNC 1
#define AG_TR_HAS_STREAM_CAPTURE_BEGIN 1
#define AG_TR_HAS_STREAM_CAPTURE_END 1
#define AG_TR_HAS_STREAM_SYNC 0
#define AG_TR_HAS_STREAM_ALL 0
#define AG_TR_HAS_STREAM_INVALIDATE 0
#define AG_TR_HAS_STREAM_OBSERVE 0

/* The offer of a COPY-class call (0 for every other class: not offered). */
#define AG_OFFER_STREAM(name, ptsz, rp, args) 0
#define AG_OFFER_SYNC(name, ptsz, rp, args) 0
#define AG_OFFER_ALL(name, ptsz, rp, args) 0
#define AG_OFFER_INVALIDATE(name, ptsz, rp, args) 0
#define AG_OFFER_DESTROY(name, ptsz, rp, args) 0
#define AG_OFFER_FREE_ASYNC(name, ptsz, rp, args) 0
#define AG_OFFER_CAPTURE_BEGIN(name, ptsz, rp, args) 0
#define AG_OFFER_CAPTURE_END(name, ptsz, rp, args) 0
#define AG_OFFER_STREAM_ATTR(name, ptsz, rp, args) 0
#define AG_UNPACK(...) __VA_ARGS__
#define AG_OFFER_COPY(name, ptsz, rp, args)                                                    \
    offer_##name(ptsz, (void *)real_##name, rp, AG_UNPACK args)

/* One offer per COPY-class function: the call as an ag_copy (host pointers as integers). */
static inline int copy_offer(uint8_t entry, int ptsz, void *real, CUresult *rp, CUdeviceptr dst,
                             CUdeviceptr src, uint32_t value, size_t n, CUstream s)
{
    ag_copy op = { entry, (uint8_t)ptsz, real, s, dst, src, value, n };
    return ag_copy_offer(&op, rp);
}
#define AG_OFFER_MEMSET(fname, entry, vtype)                                                   \
    static inline int offer_##fname(int ptsz, void *real, CUresult *rp, CUdeviceptr d, vtype v, \
                                    size_t n, CUstream s)                                      \
    {                                                                                          \
        return copy_offer(entry, ptsz, real, rp, d, 0, v, n, s);                               \
    }
AG_OFFER_MEMSET(cuMemsetD8Async, AG_CP_MEMSET8, unsigned char)
AG_OFFER_MEMSET(cuMemsetD8Async_ptsz, AG_CP_MEMSET8, unsigned char)
AG_OFFER_MEMSET(cuMemsetD16Async, AG_CP_MEMSET16, unsigned short)
AG_OFFER_MEMSET(cuMemsetD16Async_ptsz, AG_CP_MEMSET16, unsigned short)
AG_OFFER_MEMSET(cuMemsetD32Async, AG_CP_MEMSET32, unsigned int)
AG_OFFER_MEMSET(cuMemsetD32Async_ptsz, AG_CP_MEMSET32, unsigned int)
#define AG_OFFER_MEMCPY(fname, entry, dtype, stype)                                            \
    static inline int offer_##fname(int ptsz, void *real, CUresult *rp, dtype d, stype src,    \
                                    size_t n, CUstream s)                                      \
    {                                                                                          \
        return copy_offer(entry, ptsz, real, rp, (CUdeviceptr)(uintptr_t)d,                    \
                          (CUdeviceptr)(uintptr_t)src, 0, n, s);                               \
    }
AG_OFFER_MEMCPY(cuMemcpyAsync, AG_CP_MEMCPY, CUdeviceptr, CUdeviceptr)
AG_OFFER_MEMCPY(cuMemcpyAsync_ptsz, AG_CP_MEMCPY, CUdeviceptr, CUdeviceptr)
AG_OFFER_MEMCPY(cuMemcpyHtoDAsync_v2, AG_CP_HTOD, CUdeviceptr, const void *)
AG_OFFER_MEMCPY(cuMemcpyHtoDAsync_v2_ptsz, AG_CP_HTOD, CUdeviceptr, const void *)
AG_OFFER_MEMCPY(cuMemcpyDtoHAsync_v2, AG_CP_DTOH, void *, CUdeviceptr)
AG_OFFER_MEMCPY(cuMemcpyDtoHAsync_v2_ptsz, AG_CP_DTOH, void *, CUdeviceptr)
AG_OFFER_MEMCPY(cuMemcpyDtoDAsync_v2, AG_CP_DTOD, CUdeviceptr, CUdeviceptr)
AG_OFFER_MEMCPY(cuMemcpyDtoDAsync_v2_ptsz, AG_CP_DTOD, CUdeviceptr, CUdeviceptr)

/* While a trace is recorded (ag_tr_on), the real call is recorded with the name, class and
 * argument (the event, the byte count: arg, arg2) the generator found for it. */
#define AG_HOOK(action, name, ptsz, params, args, s, arg, arg2)                                \
    static CUresult(CUDAAPI *real_##name) params;                                              \
    static uint32_t trname_##name;                                                             \
    AG_EXPORT CUresult CUDAAPI name params                                                     \
    {                                                                                          \
        if (AG_UNLIKELY(!real_##name) && (ag_real_init() != 0 || !real_##name))                \
            return CUDA_ERROR_NOT_FOUND;                                                       \
        CUresult r;                                                                            \
        if (AG_OFFER_##action(name, ptsz, &r, args))                                           \
            return r;                                                                          \
        if (ag_call_waits(#name))                                                              \
            ag_order_waits();                                                                  \
        CUresult pending = AG_PRE_##action(s, ptsz);                                           \
        ag_tr_tok tr_tok;                                                                      \
        int tr = ag_tr_op_begin(&tr_tok, s, ptsz, AG_TR_HAS_STREAM_##action, #name);           \
        r = real_##name args;                                                                  \
        if (AG_UNLIKELY(tr))                                                                   \
            ag_tr_op_end(&tr_tok, &trname_##name, #name, AG_TRC_##action, r, arg, arg2);       \
        AG_POST_##action(s, ptsz, r);                                                          \
        return AG_UNLIKELY(pending) ? ag_order_result(s, ptsz, r, pending) : r;                \
    }
#include "hooks_gen.h"
#undef AG_HOOK

/* Function attributes change how later launches of the function run: a call that sets a new
 * value flushes every held launch first (they run under the old value) and, once the driver
 * has taken it, drops every template and graph; setting the value already in effect -- what
 * many libraries do before every launch -- costs one lookup (cache/funcattr.h). */
#define AG_FUNCATTR_HOOK(name, params, args, h, attr, dev, val)                                \
    static CUresult(CUDAAPI *real_##name) params;                                              \
    static uint32_t trname_##name;                                                             \
    AG_EXPORT CUresult CUDAAPI name params                                                     \
    {                                                                                          \
        if (AG_UNLIKELY(!real_##name) && (ag_real_init() != 0 || !real_##name))                \
            return CUDA_ERROR_NOT_FOUND;                                                       \
        int how = ag_funcattr_begin(h, attr, dev, val);                                        \
        ag_tr_tok tr_tok;                                                                      \
        int tr = ag_tr_op_begin(&tr_tok, NULL, 0, 0, #name);                                   \
        CUresult r = real_##name args;                                                         \
        if (AG_UNLIKELY(tr))                                                                   \
            ag_tr_op_end(&tr_tok, &trname_##name, #name, AG_TRC_FUNCATTR, r,                   \
                         (uint64_t)(uintptr_t)(h), ag_tr_funcattr_arg(attr, dev, val));         \
        ag_funcattr_end(h, attr, dev, val, how, r);                                            \
        return r;                                                                              \
    }
AG_FUNCATTR_HOOK(cuFuncSetAttribute, (CUfunction hfunc, CUfunction_attribute attrib, int value),
                 (hfunc, attrib, value), hfunc, (int)attrib, AG_FA_NO_DEVICE, value)
AG_FUNCATTR_HOOK(cuFuncSetCacheConfig, (CUfunction hfunc, CUfunc_cache config), (hfunc, config),
                 hfunc, AG_FA_CACHE_CONFIG, AG_FA_NO_DEVICE, (int)config)
AG_FUNCATTR_HOOK(cuFuncSetSharedMemConfig, (CUfunction hfunc, CUsharedconfig config),
                 (hfunc, config), hfunc, AG_FA_SHMEM_CONFIG, AG_FA_NO_DEVICE, (int)config)
AG_FUNCATTR_HOOK(cuKernelSetAttribute,
                 (CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev),
                 (attrib, val, kernel, dev), kernel, (int)attrib, (int)dev, val)
AG_FUNCATTR_HOOK(cuKernelSetCacheConfig, (CUkernel kernel, CUfunc_cache config, CUdevice dev),
                 (kernel, config, dev), kernel, AG_FA_CACHE_CONFIG, (int)dev, (int)config)

/* cuInit: the program sets CUDA up, so ours happens now too (the table of real functions,
 * options, the profile, our pages mapped in) rather than inside its first, perhaps timed,
 * launch. */
static CUresult(CUDAAPI *real_cuInit)(unsigned int);
AG_EXPORT CUresult CUDAAPI cuInit(unsigned int flags)
{
    if (AG_UNLIKELY(!real_cuInit) && (ag_real_init() != 0 || !real_cuInit))
        return CUDA_ERROR_NOT_FOUND;
    uint64_t t0 = ag_now_ns();
    CUresult r = real_cuInit(flags);
    uint64_t t1 = ag_now_ns();
    if (r == CUDA_SUCCESS) {
        ag_engine_prepare(); /* opens the trace, when one is to be recorded */
        ag_image_warm();
        ag_launch_rehearse();
    }
    if (AG_UNLIKELY(ag_tr_active()))
        ag_tr_init_call(t0, t1, r);
    return r;
}

/* cuProfilerStart / cuProfilerStop (cudaProfiler.h, not cuda.h): how a program tells a
 * profiler which region it times. Nothing for the engine; the trace records them, and the
 * replay model takes its ratio over that region (docs/MODEL.md). Handed out by dlsym and
 * cuGetProcAddress only while recording, like the OBSERVE class. */
#define AG_REGION_HOOK(name)                                                                   \
    static CUresult(CUDAAPI *real_##name)(void);                                               \
    static uint32_t trname_##name;                                                             \
    AG_EXPORT CUresult CUDAAPI name(void)                                                      \
    {                                                                                          \
        if (AG_UNLIKELY(!real_##name) && (ag_real_init() != 0 || !real_##name))                \
            return CUDA_ERROR_NOT_FOUND;                                                       \
        ag_tr_tok tr_tok;                                                                      \
        int tr = ag_tr_op_begin(&tr_tok, NULL, 0, 0, #name);                                   \
        CUresult r = real_##name();                                                            \
        if (AG_UNLIKELY(tr))                                                                   \
            ag_tr_op_end(&tr_tok, &trname_##name, #name, AG_TRC_OTHER, r, 0, 0);               \
        return r;                                                                              \
    }
AG_REGION_HOOK(cuProfilerStart)
AG_REGION_HOOK(cuProfilerStop)

/* Everything we wrap: the generated wrappers, then the hand-written ones (launch.c and
 * procaddr.c, whose real functions live in ag_drv and real.h, and those above). */
ag_hook ag_hook_table[] = {
#define AG_HOOK(action, name, ptsz, params, args, s, arg, arg2)                                \
    { #name, (void *)name, (void **)&real_##name, AG_TRC_##action == AG_TRC_OTHER },
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
#define AG_FUNCATTR_ENTRY(name) { #name, (void *)name, (void **)&real_##name },
    AG_FUNCATTR_ENTRY(cuFuncSetAttribute) AG_FUNCATTR_ENTRY(cuFuncSetCacheConfig)
    AG_FUNCATTR_ENTRY(cuFuncSetSharedMemConfig) AG_FUNCATTR_ENTRY(cuKernelSetAttribute)
    AG_FUNCATTR_ENTRY(cuKernelSetCacheConfig)
    { "cuInit", (void *)cuInit, (void **)&real_cuInit },
    { "cuProfilerStart", (void *)cuProfilerStart, (void **)&real_cuProfilerStart, 1 },
    { "cuProfilerStop", (void *)cuProfilerStop, (void **)&real_cuProfilerStop, 1 },
};
const size_t ag_hook_count = sizeof ag_hook_table / sizeof ag_hook_table[0];
