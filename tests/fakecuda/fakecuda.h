/* fakecuda: a CPU-only stand-in for the CUDA driver (libcuda.so.1), for the CPU test harness.
 *
 * It implements the part of the driver API that libautograph and its tests use, with the exact
 * prototypes of <cuda.h>, and an execution model made to expose missing flushes and reordering:
 *
 *  - every stream has a FIFO of work items run asynchronously, in order, by one worker thread
 *    per stream, each item after a small random delay (FAKECUDA_DELAY_US, default 5, the
 *    upper bound of a uniform delay in microseconds; FAKECUDA_SEED seeds it); a kernel
 *    launch spends FAKECUDA_LAUNCH_HOST_US (default 0) on the host before its kernel is
 *    enqueued, as a real launch call does;
 *  - synchronous calls (stream/context/event synchronize, synchronous copies and memsets,
 *    cuMemFree_v2, which synchronizes the current context) block until the work they cover
 *    has run; cuStreamQuery / cuEventQuery answer CUDA_ERROR_NOT_READY while it has not;
 *  - cuStreamWaitEvent makes later work on the stream wait for the work before the event's
 *    most recent record;
 *  - the legacy default stream (NULL in plain entry points, CU_STREAM_LEGACY) is one per
 *    context: work on it waits for all work already enqueued on the blocking streams of its
 *    context, and later work on a blocking stream waits for work already on it. Streams
 *    created with CU_STREAM_NON_BLOCKING are exempt. The per-thread default stream (NULL in
 *    _ptsz/_ptds entry points, CU_STREAM_PER_THREAD) is a separate blocking stream per
 *    (thread, context);
 *  - "device memory" is host memory: a CUdeviceptr is the host address. Freed blocks are
 *    poisoned (0xDB bytes) and never reused, so late work on them reads garbage, not data;
 *  - kernels are host functions registered below; a kernel runs on the stream's worker with a
 *    pointer to a copy of its packed parameter block (copied at launch, as the driver does);
 *  - graph node parameters are copied when a node is added or set; edges may carry edge data
 *    (cuGraphAddDependencies_v2: programmatic edges are checked and counted, and a kernel run
 *    from a graph sees its in-edge's port: FAKECUDA_ATTR_PROGRAMMATIC); an exec is a snapshot taken
 *    at instantiation and changed only by exec updates; a graph launch enqueues its nodes in
 *    order on the stream. A capturing stream records kernel launches as nodes instead of
 *    running them (other work on a capturing stream is refused and invalidates the capture:
 *    events are not recorded in a capture, and waiting in a capture for an event recorded
 *    outside it fails with CUDA_ERROR_STREAM_CAPTURE_ISOLATION, as in the driver);
 *  - work enqueued before the process exits still runs: the fake drains every stream at exit
 *    (from an atexit handler registered by cuInit);
 *  - handles are reused as a real driver may reuse them: a destroyed stream's handle (once its
 *    work has run) goes to the next stream created in its context (FAKECUDA_REUSE_HANDLES=0:
 *    never), and unloaded functions' handles to the next functions registered;
 *  - cuCtxRecordEvent records all work issued in the context so far (every stream, the
 *    non-blocking ones included); cuGreenCtxRecordEvent answers CUDA_ERROR_NOT_SUPPORTED;
 *  - the deprecated launches (cuLaunch, cuLaunchGrid on the legacy default stream,
 *    cuLaunchGridAsync) take the block shape, shared size and parameters set with
 *    cuFuncSetBlockShape, cuFuncSetSharedSize and cuParamSet*;
 *  - function attributes (cuFuncSetAttribute, cuKernelSetAttribute, the cache and shared
 *    memory configurations) are kept per handle and snapshotted by each launch, graph node
 *    and instantiation: see fakecuda_launch_attr;
 *  - a launch, event record or graph launch on a stream of a context that is not current on
 *    the calling thread fails with CUDA_ERROR_INVALID_CONTEXT (FAKECUDA_CHECK_CONTEXT=0:
 *    not checked);
 *  - in a fork child, where the driver is unusable, any call prints a message and ends the
 *    child with status 97 (FAKECUDA_FORK_CHILD=error: returns CUDA_ERROR_NOT_INITIALIZED).
 *
 * Fault injection: FAKECUDA_FAIL="cuGraphInstantiateWithFlags:1,cuGraphLaunch:3" makes every
 * K-th call of the named (exact exported name) function fail with CUDA_ERROR_UNKNOWN without
 * doing anything. FAKECUDA_TRACE=1 prints every API call on stderr.
 *
 * Including this header declares every variant of every driver function (it defines
 * __CUDA_API_VERSION_INTERNAL before <cuda.h>): call them by their exact exported names
 * (cuMemFree_v2, cuLaunchKernel_ptsz, ...). */
#ifndef FAKECUDA_H
#define FAKECUDA_H

#ifndef __CUDA_API_VERSION_INTERNAL
#define __CUDA_API_VERSION_INTERNAL
#endif
#include <cuda.h>
#include <cudaProfiler.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A kernel body: params points to the packed parameter block (parameter i at its natural
 * alignment, offset rounded up to min(size, 8)); grid and block are the launch dimensions. */
typedef void (*fakecuda_kernel_fn)(const void *params, const unsigned grid[3],
                                   const unsigned block[3]);

#define FAKECUDA_MAX_PARAMS 32

/* Registers a kernel in the default module (never unloaded) and returns its CUfunction.
 * NULL when nparams is out of range or a size is 0. Like a function of a module loaded in a
 * context, the CUfunction belongs to the context current when it is registered (if any):
 * launching it on a stream of another context fails with CUDA_ERROR_INVALID_CONTEXT. Its
 * CUkernel (below) is context-independent. */
CUfunction fakecuda_kernel(const char *name, fakecuda_kernel_fn fn, int nparams,
                           const size_t sizes[]);

/* A distinct CUkernel handle for the same kernel (cuKernelGetParamInfo accepts it,
 * cuFuncGetParamInfo refuses it with CUDA_ERROR_INVALID_HANDLE, launches accept both). */
CUkernel fakecuda_kernel_as_kernel(CUfunction f);

/* Modules: a module created here can be unloaded with cuModuleUnload, which invalidates its
 * functions; their handle memory is then reused (last freed, first reused) by the next
 * functions registered, as a real driver may reuse handles after an unload. */
CUmodule fakecuda_module(void);
CUfunction fakecuda_module_kernel(CUmodule m, const char *name, fakecuda_kernel_fn fn,
                                  int nparams, const size_t sizes[]);

/* Inside a kernel body: the value of a function attribute (a CUfunction_attribute, or one of
 * the two below) that was in effect when this launch was enqueued, or when its graph node was
 * made / its graph instantiated -- the driver snapshots attributes then, so a later
 * cuFuncSetAttribute does not reach work already issued. Outside a kernel: -1.
 * Defaults: MAX_DYNAMIC_SHARED_SIZE_BYTES 49152 (a launch asking for more dynamic shared
 * memory fails with CUDA_ERROR_INVALID_VALUE), PREFERRED_SHARED_MEMORY_CARVEOUT -1, others 0. */
#define FAKECUDA_ATTR_CACHE_CONFIG ((int)CU_FUNC_ATTRIBUTE_MAX)      /* CUfunc_cache */
#define FAKECUDA_ATTR_SHMEM_CONFIG ((int)CU_FUNC_ATTRIBUTE_MAX + 1)  /* CUsharedconfig */
/* Inside a kernel run as a graph node: the outgoing port of the programmatic edge into its
 * node (CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC or _LAUNCH_ORDER), 0 without one; always 0
 * for an eager launch. */
#define FAKECUDA_ATTR_PROGRAMMATIC ((int)CU_FUNC_ATTRIBUTE_MAX + 2)
int fakecuda_launch_attr(int attr);

struct fakecuda_counters {
    uint64_t kernels_executed;        /* kernels run, eagerly or from graphs */
    uint64_t eager_launches;          /* kernels enqueued through cuLaunchKernel* (not captured) */
    uint64_t captured_launches;       /* kernel launches recorded by a stream capture */
    uint64_t graph_launches;          /* successful cuGraphLaunch* */
    uint64_t graph_kernels_executed;  /* kernels run as graph nodes */
    uint64_t graphs_created;          /* cuGraphCreate + captures ended */
    uint64_t graph_nodes_added;       /* cuGraphAddKernelNode_v2 */
    uint64_t node_set_params;         /* cuGraphKernelNodeSetParams_v2 */
    uint64_t node_set_attributes;     /* cuGraphKernelNodeSetAttribute */
    uint64_t instantiations;          /* successful cuGraphInstantiateWithFlags */
    uint64_t exec_node_updates;       /* successful cuGraphExecKernelNodeSetParams_v2 */
    uint64_t exec_updates;            /* successful cuGraphExecUpdate_v2 */
    uint64_t graph_uploads;           /* successful cuGraphUpload* */
    uint64_t programmatic_edges;      /* programmatic edges added (cuGraphAddDependencies_v2) */
    uint64_t streams_created;
    uint64_t events_recorded;         /* cuEventRecord*, cuCtxRecordEvent */
    uint64_t legacy_launches;         /* cuLaunch, cuLaunchGrid, cuLaunchGridAsync */
    uint64_t attribute_sets;          /* successful cuFuncSet* / cuKernelSet* calls */
    uint64_t stream_attr_gets;        /* cuStreamGetAttribute* calls */
    uint64_t ctx_current_gets;        /* cuCtxGetCurrent calls */
    uint64_t memcpys;                 /* copies and memsets, synchronous or not */
    uint64_t host_funcs;              /* cuLaunchHostFunc* run */
    uint64_t syncs;                   /* stream/context/event synchronizations */
    uint64_t memset_nodes_added;      /* cuGraphAddMemsetNode */
    uint64_t memcpy_nodes_added;      /* cuGraphAddMemcpyNode */
    uint64_t copy_node_set_params;    /* cuGraphMemsetNodeSetParams / MemcpyNodeSetParams */
    uint64_t exec_copy_node_updates;  /* cuGraphExecMemsetNodeSetParams / MemcpyNodeSetParams */
    uint64_t graph_copies_executed;   /* memset and memcpy nodes run */
    uint64_t injected_failures;       /* calls failed by FAKECUDA_FAIL */
    uint64_t api_errors;              /* calls that returned an error (injected ones included) */
    uint64_t launcher_param_queries;  /* cu{Func,Kernel}GetParamInfo on a thread that launched */
    uint64_t launcher_instantiations; /* cuGraphInstantiateWithFlags on a thread that launched */
};

void fakecuda_counters(struct fakecuda_counters *out);

/* A function the fake calls first thing in every driver entry point, on the calling thread,
 * with the entry point's exported name; NULL removes it. A test uses it to stop a thread
 * inside a given driver call while another thread acts: a race made deterministic. */
typedef void (*fakecuda_call_hook)(const char *name);
void fakecuda_set_call_hook(fakecuda_call_hook fn);

/* Prints every counter on the stream as "fakecuda: <name> <value>" lines. */
void fakecuda_print_counters(void *file /* FILE * */);

#ifdef __cplusplus
}
#endif

#endif
