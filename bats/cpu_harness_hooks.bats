#!/usr/bin/env bats
# Driver calls that order work without a stream argument, on the fake driver: context-wide
# event records (cuCtxRecordEvent), the deprecated launches (cuLaunch, cuLaunchGrid on the
# legacy default stream, cuLaunchGridAsync), and function attributes (cuFuncSetAttribute and
# friends), which change how later launches run. Each program checks its own results; the
# tests also check libautograph's statistics and the fake's counters. Build first:
# make lib harness.

setup_file() {
    local root="$BATS_TEST_DIRNAME/.."
    local f
    for f in build/libautograph.so build/fakecuda/libcuda.so.1 build/harness/ctxrecord \
             build/harness/legacygrid build/harness/funcattr build/harness/curctx; do
        if [ ! -e "$root/$f" ]; then
            export HARNESS_MISSING="$f is not built: run 'make lib harness' first"
            return 0
        fi
    done
}

setup() {
    bats_load_library bats-support
    bats_load_library bats-assert
    if [ -n "${HARNESS_MISSING:-}" ]; then
        skip "$HARNESS_MISSING"
    fi
    H="$BATS_TEST_DIRNAME/../build/harness"
    LIB="${HARNESS_LIB:-$BATS_TEST_DIRNAME/../build/libautograph.so}"
    unset AUTOGRAPH_DISABLE AUTOGRAPH_FAULT AUTOGRAPH_PROFILE AUTOGRAPH_ALLOW AUTOGRAPH_DENY \
          AUTOGRAPH_MAX_NODES AUTOGRAPH_MAX_GRAPHS AUTOGRAPH_MAX_GRAPH_MEM AUTOGRAPH_LOG \
          FAKECUDA_FAIL FAKECUDA_DELAY_US FAKECUDA_TRACE FUNCATTR_EXPECT_REPLAYS
}

# As in cpu_harness.bats: deterministic graphing, holds released only by ordering points.
ag() {
    run timeout "${AG_TIMEOUT:-120}" env LD_PRELOAD="$LIB" AUTOGRAPH_MIN_REPEATS=2 \
        AUTOGRAPH_BENEFIT=always AUTOGRAPH_MAX_HOLD_US=10000000 AUTOGRAPH_STATS=1 "$@"
}

stat() {
    awk -v n="$1" '$1 ~ /^autograph(\[[0-9:]+\])?:$/ && $2 == n { v = $3 } END { print v }' <<<"$output"
}

fc() {
    awk -v n="$1" '$1 == "fakecuda:" && $2 == n { v = $3 } END { print v }' <<<"$output"
}

at_least() {
    local v
    v="$(stat "$1")"
    [ -n "$v" ] || fail "statistic $1 not printed"
    [ "$v" -ge "$2" ] || fail "statistic $1 is $v, expected at least $2"
}

no_failures() {
    assert_equal "$(stat failures.build)" 0
    assert_equal "$(stat failures.update)" 0
    assert_equal "$(stat failures.launch)" 0
    assert_equal "$(stat failures.eager_launch)" 0
}

@test "fake driver alone: context records, deprecated launches, attribute snapshots, current context" {
    for p in ctxrecord legacygrid funcattr curctx; do
        run timeout 60 "$H/$p"
        assert_success
        assert_output --partial "PASS $p"
    done
}

@test "cuCtxRecordEvent: launches held on every stream of the context are in the event" {
    ag "$H/ctxrecord" 40
    assert_success
    assert_output --partial "PASS ctxrecord"
    at_least launches.held 40
    at_least graphs.replays 20
    no_failures
    assert_equal "$(fc events_recorded)" 40
}

@test "cuLaunch / cuLaunchGrid (legacy stream) and cuLaunchGridAsync keep their order with held launches" {
    ag "$H/legacygrid" 40
    assert_success
    assert_output --partial "PASS legacygrid"
    at_least launches.held 40
    at_least graphs.replays 20
    no_failures
    assert_equal "$(fc legacy_launches)" 80
}

@test "cuFuncSetAttribute: a new value reaches later launches only; the same value keeps graphs" {
    ag FUNCATTR_EXPECT_REPLAYS=1 "$H/funcattr" 6 6
    assert_success
    assert_output --partial "PASS funcattr"
    # 6 cycles of 6 iterations, one per kind of call: iterations 2..4 of each replay (the
    # program checks it per cycle). The caches are dropped once per change (6, +1 for the model
    # check at the end) and once for each attribute first set after the engine started
    # (cuKernelSetAttribute, cuFuncSetCacheConfig, cuKernelSetCacheConfig: 3); the 24
    # same-value sets drop nothing.
    at_least graphs.replays 18
    assert_equal "$(stat cache.invalidations)" 10
    no_failures
}
