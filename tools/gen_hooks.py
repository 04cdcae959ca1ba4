#!/usr/bin/env python3
"""Generate interpose/hooks_gen.h: the driver functions libautograph wraps as ordering points.

Every driver function of cuda.h that takes a CUstream, and every synchronous copy, free,
unload or context teardown, must let the engine flush held launches before it runs. Rather
than trusting a hand-kept list, this script reads the preprocessed cuda.h (with
__CUDA_API_VERSION_INTERNAL, so that every exported variant -- _v2, _ptsz, _ptds, old ABIs --
is declared) and classifies each function by the rules below. With --check it fails when
cuda.h holds a stream-taking function the rules do not classify (a new CUDA release), or when
the committed table differs from what it would generate.

Usage: tools/gen_hooks.py [--cuda-include DIR] [--check] [--out FILE]
"""
import argparse, os, re, subprocess, sys

# Hand-written wrappers (interpose/launch.c, interpose/procaddr.c): never generated.
HANDWRITTEN = {
    "cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz",
    "cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel_ptsz",
    "cuGetProcAddress", "cuGetProcAddress_v2",
}
# Take a CUstream but neither enqueue work nor wait for it: left alone.
NOT_ORDERING = re.compile(
    r"^cu(StreamCreate|StreamCreateWithPriority|StreamGetPriority|StreamGetDevice|StreamGetFlags|"
    r"StreamGetId|StreamGetCtx|StreamGetCtx_v2|StreamIsCapturing|StreamGetCaptureInfo(_v2|_v3)?|"
    r"StreamUpdateCaptureDependencies(_v2)?|StreamGetAttribute|StreamGetGreenCtx)(_ptsz)?$")
CAPTURE_BEGIN = re.compile(r"^cuStreamBeginCapture(_v2|ToGraph)?(_ptsz)?$")
CAPTURE_END = re.compile(r"^cuStreamEndCapture(_ptsz)?$")
STREAM_DESTROY = re.compile(r"^cuStreamDestroy(_v2)?$")
FREE_ASYNC = re.compile(r"^cuMemFreeAsync(_ptsz)?$")
# Synchronous copies and memsets: work on the legacy default stream (the _ptds variants on the
# per-thread default stream), which waits for every blocking stream.
SYNC_COPY = re.compile(
    r"^cu(Memcpy|MemcpyPeer|Memcpy3DPeer|Memcpy(HtoD|DtoH|DtoD|DtoA|AtoD|HtoA|AtoH|AtoA)(_v2)?|"
    r"Memcpy(2D|2DUnaligned|3D)(_v2)?|MemsetD(8|16|32|2D8|2D16|2D32)(_v2)?)(_ptds)?$")
# Whatever frees memory or handles a held kernel may still use, or waits for a whole context.
FLUSH_ALL = re.compile(
    r"^cu(MemFree(_v2)?|MemFreeHost|MemHostUnregister|ArrayDestroy|MipmappedArrayDestroy|"
    r"MemRelease|MemUnmap|TexObjectDestroy|SurfObjectDestroy|IpcCloseMemHandle|MemPoolDestroy|"
    r"MemPoolTrimTo|GraphicsUnregisterResource|DestroyExternalMemory|DestroyExternalSemaphore|"
    r"CtxSynchronize(_v2)?|MemcpyPeer(_ptds)?|Memcpy3DPeer(_ptds)?)$")
# After these, function handles, streams or graphs may be gone or reused: drop every cache.
INVALIDATE = re.compile(
    r"^cu(ModuleUnload|LibraryUnload|CtxDestroy(_v2)?|DevicePrimaryCtxReset(_v2)?|"
    r"DevicePrimaryCtxRelease(_v2)?|GreenCtxDestroy)$")

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
    if name in HANDWRITTEN:
        return None
    stream = next((param_name(p) for p in params
                   if re.match(r"^(const\s+)?CUstream\s+\w+$", p)), None)
    ptsz = 1 if name.endswith("_ptsz") or name.endswith("_ptds") else 0
    if INVALIDATE.match(name):
        return ("INVALIDATE", "NULL", 0)
    if FLUSH_ALL.match(name):
        return ("ALL", "NULL", 0)
    if SYNC_COPY.match(name):
        return ("SYNC", "NULL", ptsz)
    if stream is None:
        return None
    if NOT_ORDERING.match(name):
        return None
    if CAPTURE_BEGIN.match(name):
        return ("CAPTURE_BEGIN", stream, ptsz)
    if CAPTURE_END.match(name):
        return ("CAPTURE_END", stream, ptsz)
    if STREAM_DESTROY.match(name):
        return ("DESTROY", stream, 0)
    if FREE_ASYNC.match(name):
        return ("FREE_ASYNC", stream, ptsz)
    return ("STREAM", stream, ptsz)


def generate(include):
    protos = preprocess(include)
    version = re.search(r"#define\s+CUDA_VERSION\s+(\d+)",
                        open(os.path.join(include, "cuda.h")).read()).group(1)
    lines = [
        "/* Generated by tools/gen_hooks.py from cuda.h (CUDA_VERSION %s). Do not edit: rerun it. */" % version,
        "/* AG_HOOK(action, name, ptsz, (params), (args), stream) -- see interpose/hooks.c. */",
        "#define AG_HOOKS_CUDA_VERSION %s" % version,
    ]
    for name in sorted(protos):
        params = split_params(protos[name])
        c = classify(name, params)
        if c is None:
            continue
        action, stream, ptsz = c
        args = ", ".join(param_name(p) for p in params)
        lines.append("AG_HOOK(%s, %s, %d, (%s), (%s), %s)"
                     % (action, name, ptsz, ", ".join(params), args, stream))
    return "\n".join(lines) + "\n", protos


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cuda-include", default="/usr/local/cuda/include")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "interpose", "hooks_gen.h"))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    text, protos = generate(a.cuda_include)
    missing = [n for n in HANDWRITTEN if n not in protos]
    if missing:
        sys.exit("gen_hooks: cuda.h lacks hand-wrapped functions: " + ", ".join(sorted(missing)))
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
