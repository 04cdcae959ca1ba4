#!/usr/bin/env bats
# The library exports exactly the interposed entry points: dlsym, the hand-written launch and
# proc-address wrappers, and every ordering-point wrapper of interpose/hooks_gen.h.

setup() { load helpers; }

@test "exported symbols are exactly the intended ones" {
    expected=$( (echo dlsym
        printf '%s\n' cuLaunchKernel cuLaunchKernel_ptsz cuLaunchKernelEx cuLaunchKernelEx_ptsz \
            cuLaunchCooperativeKernel cuLaunchCooperativeKernel_ptsz cuGetProcAddress cuGetProcAddress_v2
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
             cuStreamEndCapture cuStreamDestroy_v2 cuStreamSetAttribute; do
        grep -q "^AG_HOOK([A-Z_]*, $f," "$ROOT/interpose/hooks_gen.h" || fail "$f is not hooked"
    done
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
