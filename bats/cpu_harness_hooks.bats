#!/usr/bin/env bats
# Driver calls that order work without a stream argument, on the fake driver: context-wide
# event records (cuCtxRecordEvent), the deprecated launches (cuLaunch, cuLaunchGrid on the
# legacy default stream, cuLaunchGridAsync), and function attributes (cuFuncSetAttribute and
# friends), which change how later launches run. Each program checks its own results; the
# tests also check libautograph's statistics and the fake's counters. Build first:
# make lib harness.

load harness

setup_file() { harness_require ctxrecord legacygrid funcattr curctx; }
setup() { harness_setup FUNCATTR_EXPECT_REPLAYS; }

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
    # 6 cycles of 6 iterations, one per kind of call: iterations 2..4 of each replay (3..4 in
    # cycles 0 and 3, below; the
    # program checks it per cycle). The caches are dropped once per change (6, +1 for the model
    # check at the end) and once for each attribute first set after the engine started
    # (cuKernelSetAttribute, cuFuncSetCacheConfig, cuKernelSetCacheConfig: 3); the 24
    # same-value sets drop nothing.
    # 3 replays in each cycle, 2 in the two that open with a function never launched on the
    # stream (cycles 0 and 3: the stream is only watched until it repeats, cache/watch.h)
    at_least graphs.replays 16
    assert_equal "$(stat cache.invalidations)" 10
    no_failures
}
