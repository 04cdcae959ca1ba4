#!/usr/bin/env bats
# Issue 6 on the GPU: exit with launches held, fork, cudaDeviceReset in mid-run, and
# compute-sanitizer on the sample apps with the library preloaded.

setup() {
    load helpers
    require_gpu
    require_app lifetime
    export AUTOGRAPH_BENEFIT=always
}

@test "exit with launches held: they still run before the process ends" {
    f="$BATS_TEST_TMPDIR/marker"
    run "$APPS/lifetime" --event=exit --file="$f" --iters=30
    assert_success
    run "$APPS/lifetime" --event=exit --file="$f" --check=1
    assert_success # without the library the marker is there: the test is sound
    run --separate-stderr env LD_PRELOAD="$LIB" AUTOGRAPH_STATS=1 "$APPS/lifetime" --event=exit --file="$f" --iters=30
    printf '%s\n' "$output" "$stderr"
    assert_success
    [ "$(s flushes.exit_or_fork)" -ge 1 ] || fail "nothing was held at exit: the test proves nothing"
    [ "$(s graphs.replays)" -ge 1 ]
    run "$APPS/lifetime" --event=exit --file="$f" --check=1
    assert_success
}

@test "fork after the library is active: the child touches nothing, the parent is exact" {
    run_both "$APPS/lifetime" --event=fork --iters=60
    printf '%s\n' "$plain_output" "---" "$output" "$stderr"
    assert_equal "$plain_status" 0
    assert_success
    assert_equal "$(field checksum)" "$(plain_field checksum)"
    run --separate-stderr env LD_PRELOAD="$LIB" AUTOGRAPH_STATS=1 "$APPS/lifetime" --event=fork --iters=60
    assert_success
    [ "$(s graphs.replays)" -ge 20 ]
    # one report: the child's exit printed nothing
    [ "$(grep -c -- '---- statistics' <<<"$stderr")" -eq 1 ]
}

@test "cudaDeviceReset in mid-run: caches dropped, graphs rebuilt, results exact" {
    run_both "$APPS/lifetime" --event=reset --iters=60
    printf '%s\n' "$plain_output" "---" "$output" "$stderr"
    assert_equal "$plain_status" 0
    assert_success
    assert_equal "$(field checksum)" "$(plain_field checksum)"
    run --separate-stderr env LD_PRELOAD="$LIB" AUTOGRAPH_STATS=1 "$APPS/lifetime" --event=reset --iters=60
    assert_success
    [ "$(s cache.invalidations)" -ge 1 ]
    [ "$(s graphs.built)" -ge 2 ]
}

@test "compute-sanitizer memcheck finds no memory error with the library preloaded" {
    cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    [ -x "$cs" ] || skip "compute-sanitizer not installed"
    for app in "tiny --iters=40 --n=16 --vary=1" "driver_api --iters=30" "multistream --iters=30 --repeat=2" \
               "lifetime --event=reset --iters=30"; do
        # shellcheck disable=SC2086
        run "$cs" --tool memcheck --report-api-errors no --error-exitcode 9 env LD_PRELOAD="$LIB" $APPS/$app
        printf '%s\n' "== $app" "$output"
        assert_success
        assert_output --partial "ERROR SUMMARY: 0 errors"
        assert_output --partial "result: OK"
        # With API errors reported, the only ones may be the end of our parameter-layout probe:
        # the driver has no parameter count, so the probe asks for one index past the last
        # (once per kernel) and gets CUDA_ERROR_INVALID_VALUE, as documented.
        # shellcheck disable=SC2086
        run "$cs" --tool memcheck env LD_PRELOAD="$LIB" $APPS/$app
        printf '%s\n' "$output"
        assert_output --partial "result: OK"
        refute_output --regexp 'Invalid (__global__|__shared__|__local__)'
        if grep 'Program hit' <<<"$output" | grep -vqE 'cu(Func|Kernel)GetParamInfo'; then
            fail "an API error other than the parameter-layout probe"
        fi
    done
}

@test "stress on the GPU: 8 threads + the legacy stream, more than 10^6 launches, exact" {
    require_app threads
    # (iters + warmup) * n * (threads + legacy) = 14010 * 8 * 9 = 1,008,720 launches
    run_both timeout 300 "$APPS/threads" --threads=8 --legacy=1 --n=8 --iters=14000
    printf '%s\n' "$plain_output" "---" "$output" "$stderr"
    assert_equal "$plain_status" 0
    assert_success
    assert_equal "$(field checksum)" "$(plain_field checksum)"
    [ "$(field launches)" -ge 1000000 ]
    run --separate-stderr env LD_PRELOAD="$LIB" AUTOGRAPH_STATS=1 AUTOGRAPH_DISABLE=0 \
        timeout 300 "$APPS/threads-ptsz" --threads=8 --legacy=1 --n=8 --iters=14000
    assert_success
    assert_equal "$(field result)" OK
    [ "$(s graphs.replays)" -ge 100000 ] || fail "$stderr"
}
