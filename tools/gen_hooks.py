#!/usr/bin/env python3
"""Generate interpose/hooks_gen.h: the driver functions libautograph wraps as ordering points.

Every driver function of cuda.h that takes a CUstream, and every synchronous copy, free,
unload or context teardown, must let the engine flush held launches before it runs. Rather
than trusting a hand-kept list, this script reads the preprocessed cuda.h (with
__CUDA_API_VERSION_INTERNAL, so that every exported variant -- _v2, _ptsz, _ptds, old ABIs --
is declared) and classifies each function by the rules below. With --check it fails when
cuda.h holds a function that is neither classified by a rule, nor hand-written, nor on the
reviewed list of harmless functions below (a new CUDA release: every new function must be looked
at), or when the committed table differs from what it would generate.

Usage: tools/gen_hooks.py [--cuda-include DIR] [--check] [--out FILE]
"""
import argparse, os, re, subprocess, sys

# Hand-written wrappers (interpose/launch.c, interpose/procaddr.c): never generated.
HANDWRITTEN = {
    "cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz",
    "cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel_ptsz",
    "cuGetProcAddress", "cuGetProcAddress_v2",
    # Function attributes (interpose/hooks.c, cache/funcattr.c): flush and drop every graph
    # only when the value really changes.
    "cuFuncSetAttribute", "cuFuncSetCacheConfig", "cuFuncSetSharedMemConfig",
    "cuKernelSetAttribute", "cuKernelSetCacheConfig",
    # cuInit: our own set-up happens there, not in the first launch (cache/life.c).
    "cuInit",
}
# Take a CUstream but neither enqueue work nor wait for it: left alone.
NOT_ORDERING = re.compile(
    r"^cu(StreamCreate|StreamCreateWithPriority|StreamGetPriority|StreamGetDevice|StreamGetFlags|"
    r"StreamGetId|StreamGetCtx|StreamGetCtx_v2|StreamIsCapturing|StreamGetCaptureInfo(_v2|_v3)?|"
    r"StreamUpdateCaptureDependencies(_v2)?|StreamGetAttribute|StreamGetGreenCtx|"
    # A stream-ordered allocation: the launches held when it is made were made before its
    # pointer existed, and those that use it come after it in the program; none need go out
    # first. An ordering point here cut every iteration of a program on the asynchronous pool
    # (CuPy's MemoryAsyncPool, PyTorch's cudaMallocAsync backend) at each temporary, and cost
    # a flush per allocation. Its free stays one (FREE_ASYNC).
    r"MemAllocAsync|MemAllocFromPoolAsync)(_ptsz)?$")
CAPTURE_BEGIN = re.compile(r"^cuStreamBeginCapture(_v2|ToGraph)?(_ptsz)?$")
CAPTURE_END = re.compile(r"^cuStreamEndCapture(_ptsz)?$")
STREAM_DESTROY = re.compile(r"^cuStreamDestroy(_v2)?$")
FREE_ASYNC = re.compile(r"^cuMemFreeAsync(_ptsz)?$")
# Stream attributes: an ordering point, and afterwards the engine reads the stream's attributes
# again (some apply to kernels launched on the stream but not to graph nodes: cache/graph.h).
STREAM_ATTR = re.compile(r"^cuStream(SetAttribute|CopyAttributes)(_ptsz)?$")
# Synchronous copies and memsets: work on the legacy default stream (the _ptds variants on the
# per-thread default stream), which waits for every blocking stream.
SYNC_COPY = re.compile(
    r"^cu(Memcpy|MemcpyPeer|Memcpy3DPeer|Memcpy(HtoD|DtoH|DtoD|DtoA|AtoD|HtoA|AtoH|AtoA)(_v2)?|"
    r"Memcpy(2D|2DUnaligned|3D)(_v2)?|MemsetD(8|16|32|2D8|2D16|2D32)(_v2)?)(_ptds)?$")
# Async memsets and 1D copies: offered to the engine first (cache/copy.h), which may hold them
# as graph nodes; otherwise stream operations like the rest. The hand-written offer for each
# name is in interpose/hooks.c.
COPY = re.compile(
    r"^cu(MemsetD(8|16|32)Async|MemcpyAsync|Memcpy(HtoD|DtoH|DtoD)Async_v2)(_ptsz)?$")
# Event queries, waits and timings: no ordering point for the engine (an event's work was
# flushed when it was recorded), but the trace recorder (AUTOGRAPH_TRACE, cache/tracerec.h)
# records them, so they are wrapped; the wrapper hands them out only while recording
# (interpose/real.c).
OBSERVE = re.compile(r"^cuEvent(Query|Synchronize|ElapsedTime(_v2)?)$")
# Whatever frees memory or handles a held kernel may still use, or waits for a whole context.
FLUSH_ALL = re.compile(
    r"^cu(MemFree(_v2)?|MemFreeHost|MemHostUnregister|ArrayDestroy|MipmappedArrayDestroy|"
    r"MemRelease|MemUnmap|TexObjectDestroy|SurfObjectDestroy|IpcCloseMemHandle|MemPoolDestroy|"
    r"MemPoolTrimTo|GraphicsUnregisterResource|DestroyExternalMemory|DestroyExternalSemaphore|"
    r"CtxSynchronize(_v2)?|MemcpyPeer(_ptds)?|Memcpy3DPeer(_ptds)?|"
    # record or wait for everything a context has issued, with no stream argument
    r"CtxRecordEvent|GreenCtxRecordEvent|CtxWaitEvent|GreenCtxWaitEvent|"
    # enqueue onto streams named inside their parameters (a launch list; the upload stream
    # of CUDA_GRAPH_INSTANTIATE_PARAMS)
    r"LaunchCooperativeKernelMultiDevice|GraphInstantiateWithParams(_ptsz)?|"
    # change how work already issued (held) would run, or take memory access away from it
    r"CtxSetLimit|CtxSetCacheConfig|CtxSetSharedMemConfig|CtxDisablePeerAccess|MemSetAccess|"
    r"MemPoolSetAccess|MulticastUnbind|MemAddressFree|TexRefDestroy|"
    r"FlushGPUDirectRDMAWrites|CheckpointProcessLock|CheckpointProcessCheckpoint)$")
# The deprecated launches without a stream argument run on the legacy default stream, like the
# synchronous copies (cuLaunchGridAsync takes a stream: an ordinary stream operation).
LEGACY_LAUNCH = re.compile(r"^cu(Launch|LaunchGrid)$")
# After these, function handles, streams or graphs may be gone or reused: drop every cache.
INVALIDATE = re.compile(
    r"^cu(ModuleUnload|LibraryUnload|CtxDestroy(_v2)?|DevicePrimaryCtxReset(_v2)?|"
    r"DevicePrimaryCtxRelease(_v2)?|GreenCtxDestroy|CtxDetach|"
    # texture/surface reference bindings are read by every later launch (and graph) using
    # them: held launches run with the old binding, graphs made before are dropped
    r"TexRefSet\w+|SurfRefSetArray)$")

# Functions reviewed and judged harmless: they neither enqueue onto a stream, record, wait,
# synchronise, free or unload anything a held launch may use, nor change how a held launch or
# a graph made earlier would run. Everything in cuda.h must be classified by a rule above, be
# hand-written, or be listed here (NOT_ORDERING covers the stream-taking getters): --check
# fails on any other function, so that each new CUDA release is reviewed.
HARMLESS = set(re.sub(r"#[^\n]*", "", """
    cuDriverGetVersion cuGetErrorName cuGetErrorString cuGetExportTable
    cuDeviceGet cuDeviceGetCount cuDeviceGetName cuDeviceGetUuid cuDeviceGetUuid_v2
    cuDeviceGetLuid cuDeviceTotalMem cuDeviceTotalMem_v2 cuDeviceGetAttribute
    cuDeviceGetProperties cuDeviceComputeCapability cuDeviceGetByPCIBusId cuDeviceGetPCIBusId
    cuDeviceGetTexture1DLinearMaxWidth cuDeviceGetNvSciSyncAttributes cuDeviceGetP2PAttribute
    cuDeviceGetP2PAtomicCapabilities cuDeviceGetHostAtomicCapabilities cuDeviceCanAccessPeer
    cuDeviceGetExecAffinitySupport cuDeviceGetDevResource cuDeviceGetDefaultMemPool
    cuDeviceGetMemPool cuDeviceGetGraphMemAttribute cuDeviceSetGraphMemAttribute
    cuDeviceRegisterAsyncNotification cuDeviceUnregisterAsyncNotification

    # contexts: creation, the current context, getters, scheduling flags (no effect on results)
    cuCtxCreate cuCtxCreate_v2 cuCtxCreate_v3 cuCtxCreate_v4 cuCtxAttach
    cuCtxGetCurrent cuCtxSetCurrent cuCtxPushCurrent cuCtxPushCurrent_v2 cuCtxPopCurrent
    cuCtxPopCurrent_v2 cuCtxGetDevice cuCtxGetDevice_v2 cuCtxGetFlags cuCtxSetFlags cuCtxGetId
    cuCtxGetApiVersion cuCtxGetCacheConfig cuCtxGetSharedMemConfig cuCtxGetLimit
    cuCtxGetStreamPriorityRange cuCtxGetExecAffinity cuCtxGetDevResource cuCtxEnablePeerAccess
    cuCtxResetPersistingL2Cache cuCtxFromGreenCtx
    cuDevicePrimaryCtxRetain cuDevicePrimaryCtxGetState cuDevicePrimaryCtxSetFlags
    cuDevicePrimaryCtxSetFlags_v2
    cuGreenCtxCreate cuGreenCtxGetDevResource cuGreenCtxGetId cuGreenCtxStreamCreate
    cuDevResourceGenerateDesc cuDevSmResourceSplitByCount
    cuStreamCreate cuStreamCreateWithPriority cuThreadExchangeStreamCaptureMode

    # events: creation, destruction, queries and waits (an event's work was flushed when it
    # was recorded: every record is an ordering point)
    cuEventCreate cuEventDestroy cuEventDestroy_v2 cuIpcGetEventHandle cuIpcOpenEventHandle

    # modules, libraries, functions: loading and getters (unloads are INVALIDATE)
    cuModuleLoad cuModuleLoadData cuModuleLoadDataEx cuModuleLoadFatBinary cuModuleGetFunction
    cuModuleGetFunctionCount cuModuleEnumerateFunctions cuModuleGetGlobal cuModuleGetGlobal_v2
    cuModuleGetLoadingMode cuModuleGetTexRef cuModuleGetSurfRef
    cuLibraryLoadData cuLibraryLoadFromFile cuLibraryGetKernel cuLibraryGetKernelCount
    cuLibraryEnumerateKernels cuLibraryGetModule cuLibraryGetGlobal cuLibraryGetManaged
    cuLibraryGetUnifiedFunction
    cuLinkCreate cuLinkCreate_v2 cuLinkAddData cuLinkAddData_v2 cuLinkAddFile cuLinkAddFile_v2
    cuLinkComplete cuLinkDestroy
    cuFuncGetAttribute cuFuncGetModule cuFuncGetName cuFuncGetParamInfo cuFuncIsLoaded
    cuFuncLoad cuKernelGetAttribute cuKernelGetFunction cuKernelGetLibrary cuKernelGetName
    cuKernelGetParamInfo
    cuOccupancyAvailableDynamicSMemPerBlock cuOccupancyMaxActiveBlocksPerMultiprocessor
    cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags cuOccupancyMaxActiveClusters
    cuOccupancyMaxPotentialBlockSize cuOccupancyMaxPotentialBlockSizeWithFlags
    cuOccupancyMaxPotentialClusterSize

    # the deprecated launch state: read only by cuLaunch / cuLaunchGrid / cuLaunchGridAsync,
    # which are never held, and pass through in call order after their ordering point
    cuFuncSetBlockShape cuFuncSetSharedSize cuParamSetSize cuParamSeti cuParamSetf cuParamSetv
    cuParamSetTexRef

    # memory: allocation, mapping, registration, getters, hints (frees, unmaps and access
    # removals are ALL)
    cuMemAlloc cuMemAlloc_v2 cuMemAllocPitch cuMemAllocPitch_v2 cuMemAllocHost
    cuMemAllocHost_v2 cuMemHostAlloc cuMemAllocManaged cuMemHostRegister cuMemHostRegister_v2
    cuMemHostGetDevicePointer cuMemHostGetDevicePointer_v2 cuMemHostGetFlags cuMemGetInfo
    cuMemGetInfo_v2 cuMemGetAddressRange cuMemGetAddressRange_v2 cuMemAdvise cuMemAdvise_v2
    cuMemRangeGetAttribute cuMemRangeGetAttributes cuPointerGetAttribute cuPointerGetAttributes
    cuPointerSetAttribute cuMemAddressReserve cuMemCreate cuMemMap cuMemGetAccess
    cuMemExportToShareableHandle cuMemImportFromShareableHandle cuMemGetAllocationGranularity
    cuMemGetAllocationPropertiesFromHandle cuMemRetainAllocationHandle
    cuMemGetHandleForAddressRange cuMemPoolCreate cuMemPoolGetAccess cuMemPoolGetAttribute
    cuMemPoolSetAttribute cuMemPoolExportPointer cuMemPoolExportToShareableHandle
    cuMemPoolImportFromShareableHandle cuMemPoolImportPointer cuDeviceSetMemPool
    cuMemGetDefaultMemPool cuMemGetMemPool cuMemSetMemPool cuDeviceGraphMemTrim
    cuIpcGetMemHandle cuIpcOpenMemHandle cuIpcOpenMemHandle_v2
    cuMulticastCreate cuMulticastAddDevice cuMulticastBindMem cuMulticastBindAddr
    cuMulticastGetGranularity
    cuImportExternalMemory cuExternalMemoryGetMappedBuffer
    cuExternalMemoryGetMappedMipmappedArray cuImportExternalSemaphore

    # arrays, textures, surfaces, tensor maps: creation and getters (destruction is ALL,
    # texture/surface reference bindings INVALIDATE)
    cuArrayCreate cuArrayCreate_v2 cuArray3DCreate cuArray3DCreate_v2 cuArrayGetDescriptor
    cuArrayGetDescriptor_v2 cuArray3DGetDescriptor cuArray3DGetDescriptor_v2
    cuArrayGetMemoryRequirements cuArrayGetPlane cuArrayGetSparseProperties
    cuMipmappedArrayCreate cuMipmappedArrayGetLevel cuMipmappedArrayGetMemoryRequirements
    cuMipmappedArrayGetSparseProperties
    cuTexObjectCreate cuTexObjectGetResourceDesc cuTexObjectGetResourceViewDesc
    cuTexObjectGetTextureDesc cuSurfObjectCreate cuSurfObjectGetResourceDesc cuTexRefCreate
    cuTexRefGetAddress cuTexRefGetAddress_v2 cuTexRefGetAddressMode cuTexRefGetArray
    cuTexRefGetBorderColor cuTexRefGetFilterMode cuTexRefGetFlags cuTexRefGetFormat
    cuTexRefGetMaxAnisotropy cuTexRefGetMipmapFilterMode cuTexRefGetMipmapLevelBias
    cuTexRefGetMipmapLevelClamp cuTexRefGetMipmappedArray cuSurfRefGetArray
    cuTensorMapEncodeTiled cuTensorMapEncodeIm2col cuTensorMapEncodeIm2colWide
    cuTensorMapReplaceAddress
    cuGraphicsResourceGetMappedPointer cuGraphicsResourceGetMappedPointer_v2
    cuGraphicsResourceGetMappedMipmappedArray cuGraphicsSubResourceGetMappedArray
    cuGraphicsResourceSetMapFlags cuGraphicsResourceSetMapFlags_v2

    # the application's graphs: building, instantiating, updating, destroying. Its graph
    # launches are stream operations; what they ran was issued when they were launched.
    cuGraphCreate cuGraphClone cuGraphDestroy cuGraphDestroyNode cuGraphDebugDotPrint
    cuGraphAddNode cuGraphAddNode_v2 cuGraphAddKernelNode cuGraphAddKernelNode_v2
    cuGraphAddMemcpyNode cuGraphAddMemsetNode cuGraphAddHostNode cuGraphAddChildGraphNode
    cuGraphAddEmptyNode cuGraphAddEventRecordNode cuGraphAddEventWaitNode
    cuGraphAddExternalSemaphoresSignalNode cuGraphAddExternalSemaphoresWaitNode
    cuGraphAddBatchMemOpNode cuGraphAddMemAllocNode cuGraphAddMemFreeNode
    cuGraphAddDependencies cuGraphAddDependencies_v2 cuGraphRemoveDependencies
    cuGraphRemoveDependencies_v2 cuGraphGetNodes cuGraphGetRootNodes cuGraphGetEdges
    cuGraphGetEdges_v2 cuGraphNodeGetType cuGraphNodeGetDependencies
    cuGraphNodeGetDependencies_v2 cuGraphNodeGetDependentNodes cuGraphNodeGetDependentNodes_v2
    cuGraphNodeFindInClone cuGraphNodeGetEnabled cuGraphNodeSetEnabled cuGraphNodeSetParams
    cuGraphKernelNodeGetParams cuGraphKernelNodeGetParams_v2 cuGraphKernelNodeSetParams
    cuGraphKernelNodeSetParams_v2 cuGraphKernelNodeGetAttribute cuGraphKernelNodeSetAttribute
    cuGraphKernelNodeCopyAttributes cuGraphMemcpyNodeGetParams cuGraphMemcpyNodeSetParams
    cuGraphMemsetNodeGetParams cuGraphMemsetNodeSetParams cuGraphHostNodeGetParams
    cuGraphHostNodeSetParams cuGraphChildGraphNodeGetGraph cuGraphEventRecordNodeGetEvent
    cuGraphEventRecordNodeSetEvent cuGraphEventWaitNodeGetEvent cuGraphEventWaitNodeSetEvent
    cuGraphExternalSemaphoresSignalNodeGetParams cuGraphExternalSemaphoresSignalNodeSetParams
    cuGraphExternalSemaphoresWaitNodeGetParams cuGraphExternalSemaphoresWaitNodeSetParams
    cuGraphBatchMemOpNodeGetParams cuGraphBatchMemOpNodeSetParams cuGraphMemAllocNodeGetParams
    cuGraphMemFreeNodeGetParams cuGraphConditionalHandleCreate
    cuGraphInstantiate cuGraphInstantiate_v2 cuGraphInstantiateWithFlags cuGraphExecDestroy
    cuGraphExecGetFlags cuGraphExecUpdate cuGraphExecUpdate_v2 cuGraphExecNodeSetParams
    cuGraphExecKernelNodeSetParams cuGraphExecKernelNodeSetParams_v2
    cuGraphExecMemcpyNodeSetParams cuGraphExecMemsetNodeSetParams cuGraphExecHostNodeSetParams
    cuGraphExecChildGraphNodeSetParams cuGraphExecEventRecordNodeSetEvent
    cuGraphExecEventWaitNodeSetEvent cuGraphExecExternalSemaphoresSignalNodeSetParams
    cuGraphExecExternalSemaphoresWaitNodeSetParams cuGraphExecBatchMemOpNodeSetParams
    cuGraphRetainUserObject cuGraphReleaseUserObject cuUserObjectCreate cuUserObjectRetain
    cuUserObjectRelease

    # tools: checkpoint state of another process, core dumps, logs
    cuCheckpointProcessGetRestoreThreadId cuCheckpointProcessGetState
    cuCheckpointProcessRestore cuCheckpointProcessUnlock
    cuCoredumpGetAttribute cuCoredumpGetAttributeGlobal cuCoredumpSetAttribute
    cuCoredumpSetAttributeGlobal
    cuLogsCurrent cuLogsDumpToFile cuLogsDumpToMemory cuLogsRegisterCallback
    cuLogsUnregisterCallback
""").split())

PROTO = re.compile(r"^\s*CUresult\s+(cu\w+)\s*\((.*)\)\s*;\s*$", re.S)


def preprocess(include):
    src = "#define __CUDA_API_VERSION_INTERNAL\n#include <cuda.h>\n"
    out = subprocess.run(["cc", "-E", "-P", "-I", include, "-x", "c", "-"], input=src,
                         capture_output=True, text=True, check=True).stdout
    text = re.sub(r"\s+", " ", out)
    protos = {}
    for stmt in text.split(";"):
        m = PROTO.match(stmt + ";")
        if m and m.group(1) not in protos:
            protos[m.group(1)] = m.group(2).strip()
    return protos


def split_params(params):
    depth, cur, out = 0, "", []
    for ch in params:
        if ch == "," and depth == 0:
            out.append(cur.strip()); cur = ""; continue
        depth += ch in "([" ; depth -= ch in ")]"
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return [] if out == ["void"] else out


def param_name(p):
    m = re.search(r"(\w+)\s*(\[[^\]]*\])?$", p)
    if not m or "(" in p:
        raise ValueError("cannot name parameter: " + p)
    return m.group(1)


def classify(name, params):
    """(action, stream argument, ptsz) of a generated wrapper; "hand" for a hand-written one,
    "harmless" for a reviewed function left alone, None for an unclassified one."""
    if name in HANDWRITTEN:
        return "hand"
    stream = next((param_name(p) for p in params
                   if re.match(r"^(const\s+)?CUstream\s+\w+$", p)), None)
    ptsz = 1 if name.endswith("_ptsz") or name.endswith("_ptds") else 0
    if INVALIDATE.match(name):
        return ("INVALIDATE", "NULL", 0)
    if FLUSH_ALL.match(name):
        return ("ALL", "NULL", 0)
    if SYNC_COPY.match(name) or LEGACY_LAUNCH.match(name):
        return ("SYNC", "NULL", ptsz)
    if OBSERVE.match(name):
        return ("OBSERVE", "NULL", 0)
    if stream is None:
        return "harmless" if name in HARMLESS else None
    if NOT_ORDERING.match(name):
        return "harmless"
    if COPY.match(name):
        return ("COPY", stream, ptsz)
    if CAPTURE_BEGIN.match(name):
        return ("CAPTURE_BEGIN", stream, ptsz)
    if CAPTURE_END.match(name):
        return ("CAPTURE_END", stream, ptsz)
    if STREAM_DESTROY.match(name):
        return ("DESTROY", stream, 0)
    if FREE_ASYNC.match(name):
        return ("FREE_ASYNC", stream, ptsz)
    if STREAM_ATTR.match(name):
        return ("STREAM_ATTR", stream, ptsz)
    # Any other function that takes a stream is treated as work on that stream.
    return ("STREAM", stream, ptsz)


MEMSET_ELEM = re.compile(r"^cuMemsetD(2D)?(8|16|32)")


def trace_args(name, params):
    """The two values the trace recorder keeps of a call (ag_tr_op.arg, arg2 of
    cache/tracefmt.h): its first and second CUevent parameters; else its byte count (ByteCount,
    a memset's elements times their size, an allocation's bytesize); else 0."""
    events = [param_name(p) for p in params if re.match(r"^(const\s+)?CUevent\s+\w+$", p)]
    if events:
        ev = ["(uint64_t)(uintptr_t)%s" % e for e in events[:2]]
        return ev[0], ev[1] if len(ev) > 1 else "0"
    names = [param_name(p) for p in params]
    m = MEMSET_ELEM.match(name)
    if m and m.group(1) and "Width" in names and "Height" in names:
        return "(uint64_t)Width * Height * %d" % (int(m.group(2)) // 8), "0"
    if m and "N" in names:
        return "(uint64_t)N * %d" % (int(m.group(2)) // 8), "0"
    for n in ("ByteCount", "bytesize"):
        if n in names:
            return "(uint64_t)%s" % n, "0"
    return "0", "0"


def generate(include):
    """The text of hooks_gen.h, the prototypes, and the problems found (unclassified
    functions, harmless-listed functions a rule also classifies)."""
    protos = preprocess(include)
    version = re.search(r"#define\s+CUDA_VERSION\s+(\d+)",
                        open(os.path.join(include, "cuda.h")).read()).group(1)
    lines = [
        "/* Generated by tools/gen_hooks.py from cuda.h (CUDA_VERSION %s). Do not edit: rerun it. */" % version,
        "/* AG_HOOK(action, name, ptsz, (params), (args), stream, arg, arg2) -- see interpose/hooks.c. */",
        "#define AG_HOOKS_CUDA_VERSION %s" % version,
    ]
    problems = []
    for name in sorted(protos):
        params = split_params(protos[name])
        c = classify(name, params)
        if c is None:
            problems.append("%s is not classified: add a rule, or review it and list it in "
                            "HARMLESS" % name)
            continue
        if isinstance(c, str):
            continue
        if name in HARMLESS:
            problems.append("%s is listed as HARMLESS but a rule classifies it %s"
                            % (name, c[0]))
        action, stream, ptsz = c
        args = ", ".join(param_name(p) for p in params)
        arg, arg2 = trace_args(name, params)
        lines.append("AG_HOOK(%s, %s, %d, (%s), (%s), %s, %s, %s)"
                     % (action, name, ptsz, ", ".join(params), args, stream, arg, arg2))
    return "\n".join(lines) + "\n", protos, problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cuda-include", default="/usr/local/cuda/include")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "interpose", "hooks_gen.h"))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    text, protos, problems = generate(a.cuda_include)
    missing = [n for n in HANDWRITTEN if n not in protos]
    if missing:
        sys.exit("gen_hooks: cuda.h lacks hand-wrapped functions: " + ", ".join(sorted(missing)))
    if problems:
        sys.exit("gen_hooks: %d function(s) of cuda.h need a decision:\n  %s"
                 % (len(problems), "\n  ".join(problems)))
    if a.check:
        old = open(a.out).read() if os.path.exists(a.out) else ""
        if old != text:
            sys.exit("gen_hooks: %s is stale for this cuda.h; run tools/gen_hooks.py" % a.out)
        print("gen_hooks: %s matches cuda.h (%d hooks)" % (a.out, text.count("AG_HOOK(") - 1))
        return
    open(a.out, "w").write(text)
    print("gen_hooks: wrote %s (%d hooks)" % (a.out, text.count("AG_HOOK(") - 1))


if __name__ == "__main__":
    main()
