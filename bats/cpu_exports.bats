#!/usr/bin/env bats
# The library exports exactly the interposed entry points: dlsym, the hand-written launch,
# proc-address and function-attribute wrappers, and every ordering-point wrapper of
# interpose/hooks_gen.h; and its own calls (interpose/api.c).

setup() { load helpers; }

@test "exported symbols are exactly the intended ones" {
    expected=$( (echo dlsym
        printf '%s\n' cuLaunchKernel cuLaunchKernel_ptsz cuLaunchKernelEx cuLaunchKernelEx_ptsz \
            cuLaunchCooperativeKernel cuLaunchCooperativeKernel_ptsz cuGetProcAddress cuGetProcAddress_v2 \
            cuFuncSetAttribute cuFuncSetCacheConfig cuFuncSetSharedMemConfig cuKernelSetAttribute \
            cuKernelSetCacheConfig cuInit cuProfilerStart cuProfilerStop autograph_pause autograph_resume
        sed -n 's/^AG_HOOK([A-Z_]*, \(cu[A-Za-z0-9_]*\),.*/\1/p' "$ROOT/interpose/hooks_gen.h") | sort)
    actual=$(nm -D --defined-only "$LIB" | awk '{ print $3 }' | sort)
    assert_equal "$actual" "$expected"
}

@test "the hook table covers the ordering points of the brief" {
    for f in cuStreamSynchronize cuStreamSynchronize_ptsz cuEventRecord cuEventRecord_ptsz \
             cuStreamWaitEvent cuStreamQuery cuLaunchHostFunc cuStreamAddCallback cuMemcpyAsync \
             cuMemcpyHtoD_v2 cuMemcpyDtoH_v2 cuMemcpyDtoH_v2_ptds cuMemsetD32Async cuMemFree_v2 \
             cuMemFreeHost cuMemFreeAsync cuModuleUnload cuLibraryUnload cuCtxSynchronize \
             cuCtxDestroy_v2 cuDevicePrimaryCtxReset_v2 cuGraphLaunch cuStreamBeginCapture_v2 \
             cuStreamEndCapture cuStreamDestroy_v2 cuStreamSetAttribute cuLaunchGridAsync; do
        grep -q "^AG_HOOK([A-Z_]*, $f," "$ROOT/interpose/hooks_gen.h" || fail "$f is not hooked"
    done
    # no stream argument, yet they record, wait for or enqueue work of a whole context, or
    # run on the legacy default stream
    for f in cuCtxRecordEvent cuGreenCtxRecordEvent cuCtxWaitEvent cuGreenCtxWaitEvent; do
        grep -q "^AG_HOOK(ALL, $f," "$ROOT/interpose/hooks_gen.h" || fail "$f is not ALL"
    done
    for f in cuLaunch cuLaunchGrid; do
        grep -q "^AG_HOOK(SYNC, $f, 0," "$ROOT/interpose/hooks_gen.h" || fail "$f is not SYNC"
    done
}

# A copy of cuda.h with one more function: gen_hooks.py --check must refuse it until someone
# classifies it.
check_with_extra() {
    mkdir -p "$BATS_TEST_TMPDIR/inc"
    sed "s|^CUresult CUDAAPI cuCtxRecordEvent(|$1\n&|" /usr/local/cuda/include/cuda.h \
        >"$BATS_TEST_TMPDIR/inc/cuda.h"
    grep -qF "$1" "$BATS_TEST_TMPDIR/inc/cuda.h" || fail "could not add the prototype"
    run python3 "$ROOT/tools/gen_hooks.py" --check --cuda-include "$BATS_TEST_TMPDIR/inc"
}

@test "gen_hooks --check fails on a function of cuda.h that nothing classifies" {
    [ -r /usr/local/cuda/include/cuda.h ] || skip "no CUDA toolkit headers"
    check_with_extra "CUresult CUDAAPI cuCtxEnqueueSomething(CUcontext hCtx, CUevent hEvent);"
    assert_failure
    assert_output --partial "cuCtxEnqueueSomething is not classified"
    # the same copy with a stream-taking function instead: a rule classifies it (STREAM), so
    # only the table is stale
    check_with_extra "CUresult CUDAAPI cuStreamEnqueueSomething(CUstream hStream, int x);"
    assert_failure
    refute_output --partial "not classified"
    assert_output --partial "stale"
}

@test "gen_hooks: no function is both harmless and classified by a rule, every harmless one exists" {
    [ -r /usr/local/cuda/include/cuda.h ] || skip "no CUDA toolkit headers"
    run python3 - "$ROOT/tools" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import gen_hooks as g
protos = g.preprocess("/usr/local/cuda/include")
bad = [n for n in g.HARMLESS if n not in protos]
bad += [n for n in g.HARMLESS if n in protos
        and not isinstance(g.classify(n, g.split_params(protos[n])), str)]
print("bad:", " ".join(sorted(bad)))
PY
    assert_success
    assert_output "bad: "
}

@test "hooks_gen.h is what tools/gen_hooks.py makes of this cuda.h" {
    [ -r /usr/local/cuda/include/cuda.h ] || skip "no CUDA toolkit headers"
    run python3 "$ROOT/tools/gen_hooks.py" --check
    assert_success
}

@test "no text relocations, no dependency on libcuda" {
    run readelf -d "$LIB"
    assert_success
    refute_output --partial "TEXTREL"
    refute_output --partial "libcuda"
}

@test "cuGetProcAddress and dlsym give the wrapper of exactly the variant asked for (fake driver)" {
    [ -x "$BUILD/tests/procaddr" ] || skip "make progs first"
    run env LD_PRELOAD="$LIB" "$BUILD/tests/procaddr"
    assert_success
    assert_output --partial "PASS: 0 failures"
}
