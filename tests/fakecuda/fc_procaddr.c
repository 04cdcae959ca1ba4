/* fakecuda: cuGetProcAddress and cuGetProcAddress_v2 -- a name -> function table.
 *
 * Names are looked up as the driver does, by base name ("cuMemFree", "cuLaunchKernel"): the
 * answer is the newest variant, and with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM the
 * _ptsz / _ptds variant where one exists. "cuGetProcAddress" gives the 5-argument _v2 for
 * cudaVersion >= 12000 and the 4-argument one below. Exact exported names are accepted too. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <string.h>

#include "fc_internal.h"

#define P(base, fn, pt) { base, (void *)(fn), (void *)(pt), #fn, #pt }

static const struct {
    const char *base;
    void *fn, *ptds;
    const char *fn_name, *ptds_name;
} g_table[] = {
    P("cuInit", cuInit, NULL),
    P("cuProfilerStart", cuProfilerStart, NULL),
    P("cuProfilerStop", cuProfilerStop, NULL),
    P("cuDriverGetVersion", cuDriverGetVersion, NULL),
    P("cuDeviceGet", cuDeviceGet, NULL),
    P("cuDeviceGetCount", cuDeviceGetCount, NULL),
    P("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain, NULL),
    P("cuDevicePrimaryCtxRelease", cuDevicePrimaryCtxRelease_v2, NULL),
    P("cuDevicePrimaryCtxReset", cuDevicePrimaryCtxReset_v2, NULL),
    P("cuCtxCreate", cuCtxCreate_v4, NULL),
    P("cuCtxDestroy", cuCtxDestroy_v2, NULL),
    P("cuCtxGetCurrent", cuCtxGetCurrent, NULL),
    P("cuCtxSetCurrent", cuCtxSetCurrent, NULL),
    P("cuCtxPushCurrent", cuCtxPushCurrent_v2, NULL),
    P("cuCtxPopCurrent", cuCtxPopCurrent_v2, NULL),
    P("cuCtxSynchronize", cuCtxSynchronize, NULL),
    P("cuGetErrorName", cuGetErrorName, NULL),
    P("cuGetErrorString", cuGetErrorString, NULL),
    P("cuFuncGetParamInfo", cuFuncGetParamInfo, NULL),
    P("cuKernelGetParamInfo", cuKernelGetParamInfo, NULL),
    P("cuFuncGetName", cuFuncGetName, NULL),
    P("cuKernelGetName", cuKernelGetName, NULL),
    P("cuModuleUnload", cuModuleUnload, NULL),
    P("cuLibraryUnload", cuLibraryUnload, NULL),
    P("cuFuncGetModule", cuFuncGetModule, NULL),
    P("cuKernelGetLibrary", cuKernelGetLibrary, NULL),
    P("cuModuleGetFunctionCount", cuModuleGetFunctionCount, NULL),
    P("cuLibraryGetKernelCount", cuLibraryGetKernelCount, NULL),
    P("cuFuncSetAttribute", cuFuncSetAttribute, NULL),
    P("cuFuncSetCacheConfig", cuFuncSetCacheConfig, NULL),
    P("cuFuncSetSharedMemConfig", cuFuncSetSharedMemConfig, NULL),
    P("cuFuncGetAttribute", cuFuncGetAttribute, NULL),
    P("cuKernelSetAttribute", cuKernelSetAttribute, NULL),
    P("cuKernelSetCacheConfig", cuKernelSetCacheConfig, NULL),
    P("cuKernelGetAttribute", cuKernelGetAttribute, NULL),
    P("cuFuncSetBlockShape", cuFuncSetBlockShape, NULL),
    P("cuFuncSetSharedSize", cuFuncSetSharedSize, NULL),
    P("cuParamSetSize", cuParamSetSize, NULL),
    P("cuParamSeti", cuParamSeti, NULL),
    P("cuParamSetf", cuParamSetf, NULL),
    P("cuParamSetv", cuParamSetv, NULL),
    P("cuLaunch", cuLaunch, NULL),
    P("cuLaunchGrid", cuLaunchGrid, NULL),
    P("cuLaunchGridAsync", cuLaunchGridAsync, NULL),
    P("cuCtxRecordEvent", cuCtxRecordEvent, NULL),
    P("cuGreenCtxRecordEvent", cuGreenCtxRecordEvent, NULL),
    P("cuLaunchKernel", cuLaunchKernel, cuLaunchKernel_ptsz),
    P("cuLaunchKernelEx", cuLaunchKernelEx, cuLaunchKernelEx_ptsz),
    P("cuLaunchCooperativeKernel", cuLaunchCooperativeKernel, cuLaunchCooperativeKernel_ptsz),
    P("cuStreamCreate", cuStreamCreate, NULL),
    P("cuStreamCreateWithPriority", cuStreamCreateWithPriority, NULL),
    P("cuStreamDestroy", cuStreamDestroy_v2, NULL),
    P("cuStreamSynchronize", cuStreamSynchronize, cuStreamSynchronize_ptsz),
    P("cuStreamQuery", cuStreamQuery, cuStreamQuery_ptsz),
    P("cuStreamGetFlags", cuStreamGetFlags, cuStreamGetFlags_ptsz),
    P("cuStreamGetCtx", cuStreamGetCtx, cuStreamGetCtx_ptsz),
    P("cuStreamWaitEvent", cuStreamWaitEvent, cuStreamWaitEvent_ptsz),
    P("cuStreamIsCapturing", cuStreamIsCapturing, cuStreamIsCapturing_ptsz),
    P("cuStreamBeginCapture", cuStreamBeginCapture_v2, cuStreamBeginCapture_v2_ptsz),
    P("cuStreamEndCapture", cuStreamEndCapture, cuStreamEndCapture_ptsz),
    P("cuLaunchHostFunc", cuLaunchHostFunc, cuLaunchHostFunc_ptsz),
    P("cuEventCreate", cuEventCreate, NULL),
    P("cuEventRecord", cuEventRecord, cuEventRecord_ptsz),
    P("cuEventSynchronize", cuEventSynchronize, NULL),
    P("cuEventQuery", cuEventQuery, NULL),
    P("cuEventDestroy", cuEventDestroy_v2, NULL),
    P("cuEventElapsedTime", cuEventElapsedTime_v2, NULL),
    P("cuMemAlloc", cuMemAlloc_v2, NULL),
    P("cuMemFree", cuMemFree_v2, NULL),
    P("cuMemAllocHost", cuMemAllocHost_v2, NULL),
    P("cuMemFreeHost", cuMemFreeHost, NULL),
    P("cuMemHostAlloc", cuMemHostAlloc, NULL),
    P("cuMemcpyHtoD", cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds),
    P("cuMemcpyDtoH", cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds),
    P("cuMemcpyDtoD", cuMemcpyDtoD_v2, NULL),
    P("cuMemcpyHtoDAsync", cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz),
    P("cuMemcpyDtoHAsync", cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz),
    P("cuMemcpyDtoDAsync", cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz),
    P("cuMemsetD32", cuMemsetD32_v2, cuMemsetD32_v2_ptds),
    P("cuMemsetD32Async", cuMemsetD32Async, cuMemsetD32Async_ptsz),
    P("cuMemsetD8Async", cuMemsetD8Async, cuMemsetD8Async_ptsz),
    P("cuMemsetD16Async", cuMemsetD16Async, cuMemsetD16Async_ptsz),
    P("cuMemcpyAsync", cuMemcpyAsync, cuMemcpyAsync_ptsz),
    P("cuMemAllocManaged", cuMemAllocManaged, NULL),
    P("cuMemAllocAsync", cuMemAllocAsync, cuMemAllocAsync_ptsz),
    P("cuMemFreeAsync", cuMemFreeAsync, cuMemFreeAsync_ptsz),
    P("cuPointerGetAttribute", cuPointerGetAttribute, NULL),
    P("cuMemHostGetFlags", cuMemHostGetFlags, NULL),
    P("cuGraphAddMemsetNode", cuGraphAddMemsetNode, NULL),
    P("cuGraphAddMemcpyNode", cuGraphAddMemcpyNode, NULL),
    P("cuGraphMemsetNodeSetParams", cuGraphMemsetNodeSetParams, NULL),
    P("cuGraphMemcpyNodeSetParams", cuGraphMemcpyNodeSetParams, NULL),
    P("cuGraphExecMemsetNodeSetParams", cuGraphExecMemsetNodeSetParams, NULL),
    P("cuGraphExecMemcpyNodeSetParams", cuGraphExecMemcpyNodeSetParams, NULL),
    P("cuGraphCreate", cuGraphCreate, NULL),
    P("cuGraphDestroy", cuGraphDestroy, NULL),
    P("cuGraphAddKernelNode", cuGraphAddKernelNode_v2, NULL),
    P("cuGraphKernelNodeSetParams", cuGraphKernelNodeSetParams_v2, NULL),
    P("cuGraphKernelNodeSetAttribute", cuGraphKernelNodeSetAttribute, NULL),
    P("cuGraphInstantiate", cuGraphInstantiateWithFlags, NULL),
    P("cuGraphInstantiateWithFlags", cuGraphInstantiateWithFlags, NULL),
    P("cuGraphExecDestroy", cuGraphExecDestroy, NULL),
    P("cuGraphExecKernelNodeSetParams", cuGraphExecKernelNodeSetParams_v2, NULL),
    P("cuGraphExecUpdate", cuGraphExecUpdate_v2, NULL),
    P("cuGraphUpload", cuGraphUpload, cuGraphUpload_ptsz),
    P("cuGraphLaunch", cuGraphLaunch, cuGraphLaunch_ptsz),
};

void *fc_proc_lookup(const char *name, int cudaVersion, cuuint64_t flags, int *found)
{
    int ptds = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    *found = 1;
    if (!strcmp(name, "cuGetProcAddress"))
        return cudaVersion >= 12000 ? (void *)cuGetProcAddress_v2 : (void *)cuGetProcAddress;
    if (!strcmp(name, "cuGetProcAddress_v2"))
        return (void *)cuGetProcAddress_v2;
    size_t n = sizeof g_table / sizeof g_table[0];
    for (size_t i = 0; i < n; i++)
        if (!strcmp(g_table[i].base, name))
            return ptds && g_table[i].ptds ? g_table[i].ptds : g_table[i].fn;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(g_table[i].fn_name, name))
            return g_table[i].fn;
        if (g_table[i].ptds && !strcmp(g_table[i].ptds_name, name))
            return g_table[i].ptds;
    }
    *found = 0;
    return NULL;
}

static CUresult proc(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                     CUdriverProcAddressQueryResult *status)
{
    if (!symbol || !pfn || (flags & ~(cuuint64_t)3))
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    int found;
    void *p = fc_proc_lookup(symbol, cudaVersion, flags, &found);
    *pfn = p;
    if (status)
        *status = found ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return found ? CUDA_SUCCESS : fc_err(CUDA_ERROR_NOT_FOUND);
}

FC_EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                               cuuint64_t flags,
                                               CUdriverProcAddressQueryResult *symbolStatus)
{
    FC_ENTER_NOINIT();
    return proc(symbol, pfn, cudaVersion, flags, symbolStatus);
}

FC_EXPORT CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                            cuuint64_t flags)
{
    FC_ENTER_NOINIT();
    return proc(symbol, pfn, cudaVersion, flags, NULL);
}
