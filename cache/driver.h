/* The engine's view of the CUDA driver: a table of real driver entry points. */
/* The interposition layer (interpose/real.c) fills it from libcuda; unit tests fill it with
 * fakes. The engine calls the driver only through this table, never through the exported
 * wrappers (that would re-enter the engine) and never through dlsym. */
#ifndef AG_DRIVER_H
#define AG_DRIVER_H

#include <cuda.h>

#define AG_DRV_FUNCS(X)                                                                        \
    X(cuLaunchKernel, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,   \
                       unsigned, CUstream, void **, void **))                                  \
    X(cuLaunchKernel_ptsz, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,       \
                            unsigned, unsigned, CUstream, void **, void **))                   \
    X(cuLaunchKernelEx, (const CUlaunchConfig *, CUfunction, void **, void **))                 \
    X(cuLaunchKernelEx_ptsz, (const CUlaunchConfig *, CUfunction, void **, void **))            \
    X(cuLaunchCooperativeKernel, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, \
                                  unsigned, unsigned, CUstream, void **))                      \
    X(cuLaunchCooperativeKernel_ptsz, (CUfunction, unsigned, unsigned, unsigned, unsigned,      \
                                       unsigned, unsigned, unsigned, CUstream, void **))       \
    X(cuFuncGetParamInfo, (CUfunction, size_t, size_t *, size_t *))                             \
    X(cuKernelGetParamInfo, (CUkernel, size_t, size_t *, size_t *))                             \
    X(cuFuncGetName, (const char **, CUfunction))                                               \
    X(cuKernelGetName, (const char **, CUkernel))                                               \
    X(cuFuncGetModule, (CUmodule *, CUfunction))                                                \
    X(cuKernelGetLibrary, (CUlibrary *, CUkernel))                                              \
    X(cuModuleGetFunctionCount, (unsigned *, CUmodule))                                         \
    X(cuLibraryGetKernelCount, (unsigned *, CUlibrary))                                         \
    X(cuCtxGetCurrent, (CUcontext *))                                                           \
    X(cuCtxSetCurrent, (CUcontext))                                                             \
    X(cuThreadExchangeStreamCaptureMode, (CUstreamCaptureMode *))       /* the worker */         \
    X(cuStreamGetFlags, (CUstream, unsigned *))                                                 \
    X(cuStreamGetCtx, (CUstream, CUcontext *))                                                  \
    X(cuStreamGetPriority, (CUstream, int *))                 /* the trace recorder */         \
    X(cuStreamIsCapturing, (CUstream, CUstreamCaptureStatus *))                                 \
    X(cuStreamGetAttribute, (CUstream, CUstreamAttrID, CUstreamAttrValue *))                    \
    X(cuGraphCreate, (CUgraph *, unsigned))                                                     \
    X(cuGraphDestroy, (CUgraph))                                                                \
    X(cuGraphAddKernelNode_v2, (CUgraphNode *, CUgraph, const CUgraphNode *, size_t,            \
                                const CUDA_KERNEL_NODE_PARAMS *))                              \
    X(cuGraphAddDependencies_v2, (CUgraph, const CUgraphNode *, const CUgraphNode *,           \
                                  const CUgraphEdgeData *, size_t))                            \
    X(cuGraphKernelNodeSetAttribute, (CUgraphNode, CUkernelNodeAttrID,                         \
                                      const CUkernelNodeAttrValue *))                          \
    X(cuGraphKernelNodeSetParams_v2, (CUgraphNode, const CUDA_KERNEL_NODE_PARAMS *))           \
    X(cuGraphInstantiateWithFlags, (CUgraphExec *, CUgraph, unsigned long long))                \
    X(cuGraphExecDestroy, (CUgraphExec))                                                        \
    X(cuGraphExecKernelNodeSetParams_v2, (CUgraphExec, CUgraphNode,                            \
                                          const CUDA_KERNEL_NODE_PARAMS *))                    \
    X(cuGraphExecUpdate_v2, (CUgraphExec, CUgraph, CUgraphExecUpdateResultInfo *))              \
    X(cuGraphUpload, (CUgraphExec, CUstream))                                                   \
    X(cuGraphLaunch, (CUgraphExec, CUstream))                                                   \
    X(cuEventCreate, (CUevent *, unsigned))                                                     \
    X(cuEventDestroy_v2, (CUevent))                                                             \
    X(cuEventRecord, (CUevent, CUstream))                                                       \
    X(cuEventQuery, (CUevent))                                                                  \
    X(cuEventElapsedTime_v2, (float *, CUevent, CUevent))                                       \
    X(cuStreamWaitEvent, (CUstream, CUevent, unsigned))                                         \
    X(cuStreamCreate, (CUstream *, unsigned))                                                   \
    X(cuStreamDestroy_v2, (CUstream))                                                           \
    X(cuStreamSynchronize, (CUstream))                                                          \
    /* memsets and copies as held records and graph nodes (copy.c) */                          \
    X(cuMemsetD8Async, (CUdeviceptr, unsigned char, size_t, CUstream))                          \
    X(cuMemsetD16Async, (CUdeviceptr, unsigned short, size_t, CUstream))                        \
    X(cuMemsetD32Async, (CUdeviceptr, unsigned int, size_t, CUstream))                          \
    X(cuMemcpyAsync, (CUdeviceptr, CUdeviceptr, size_t, CUstream))                              \
    X(cuMemcpyHtoDAsync_v2, (CUdeviceptr, const void *, size_t, CUstream))                      \
    X(cuMemcpyDtoHAsync_v2, (void *, CUdeviceptr, size_t, CUstream))                            \
    X(cuMemcpyDtoDAsync_v2, (CUdeviceptr, CUdeviceptr, size_t, CUstream))                       \
    X(cuPointerGetAttribute, (void *, CUpointer_attribute, CUdeviceptr))                        \
    X(cuMemHostGetFlags, (unsigned int *, void *))                                              \
    X(cuGraphAddMemsetNode, (CUgraphNode *, CUgraph, const CUgraphNode *, size_t,               \
                             const CUDA_MEMSET_NODE_PARAMS *, CUcontext))                      \
    X(cuGraphAddMemcpyNode, (CUgraphNode *, CUgraph, const CUgraphNode *, size_t,               \
                             const CUDA_MEMCPY3D *, CUcontext))                                \
    X(cuGraphMemsetNodeSetParams, (CUgraphNode, const CUDA_MEMSET_NODE_PARAMS *))               \
    X(cuGraphMemcpyNodeSetParams, (CUgraphNode, const CUDA_MEMCPY3D *))                         \
    X(cuGraphExecMemsetNodeSetParams, (CUgraphExec, CUgraphNode,                                \
                                       const CUDA_MEMSET_NODE_PARAMS *, CUcontext))            \
    X(cuGraphExecMemcpyNodeSetParams, (CUgraphExec, CUgraphNode, const CUDA_MEMCPY3D *,         \
                                       CUcontext))                                             \
    X(cuGetErrorName, (CUresult, const char **))

typedef struct ag_driver {
#define AG_DRV_FIELD(name, params) CUresult (*name) params;
    AG_DRV_FUNCS(AG_DRV_FIELD)
#undef AG_DRV_FIELD
} ag_driver;

/* The one table, filled before the engine sees its first call. */
extern ag_driver ag_drv;

#endif
