#!/usr/bin/env bats
# Documented rules of the engine, each with a scenario that fails when the rule is removed,
# and the profile loader's bound. Run against the fake driver (tests/fakecuda), like
# bats/cpu_harness.bats. Build first: make lib harness.

setup() {
    load helpers
    H="$BUILD/harness"
    [ -x "$H/rest_legacy" ] && [ -x "$H/legacy_one" ] && [ -x "$H/asyncpool" ] && [ -x "$H/growcopy" ] && [ -x "$H/capture_race" ] && [ -e "$BUILD/fakecuda/libcuda.so.1" ] ||
        skip "harness not built (make lib harness)"
    unset AUTOGRAPH_DISABLE AUTOGRAPH_FAULT AUTOGRAPH_PROFILE AUTOGRAPH_ALLOW AUTOGRAPH_DENY \
          AUTOGRAPH_MAX_NODES AUTOGRAPH_MAX_GRAPHS AUTOGRAPH_MAX_GRAPH_MEM AUTOGRAPH_LOG \
          FAKECUDA_FAIL FAKECUDA_DELAY_US FAKECUDA_TRACE
}

# ag [VAR=VALUE...] PROGRAM [ARGS...]: as in cpu_harness.bats (holds released by ordering
# points only: the watchdog period is 10 s; graphs built at their first replay), statistics
# on stderr.
ag() {
    run --separate-stderr timeout 120 env LD_PRELOAD="$LIB" AUTOGRAPH_MIN_REPEATS=2 \
        AUTOGRAPH_BENEFIT=always AUTOGRAPH_MAX_HOLD_US=10000000 AUTOGRAPH_STATS=1 \
        AUTOGRAPH_WORKER=0 "$@"
    printf '%s\n' "--- stdout ($status):" "$output" "--- stderr:" "$stderr"
}

at_least() {
    local v
    v="$(s "$1")"
    [ "$v" != missing ] || fail "statistic $1 not printed"
    [ "$v" -ge "$2" ] || fail "statistic $1 is $v, expected at least $2"
}

@test "rule: a rest token does not pass a blocking stream's launch while the legacy stream holds" {
    ag "$H/rest_legacy" 1100 8
    assert_success
    assert_output --partial "PASS rest_legacy"
    # the scenario reaches what it is about: the blocking stream rested (its launches passed
    # through rest tokens), the legacy stream held, and each round flushed it from the other side
    at_least learning.rests 1
    at_least launches.learning_rested 8
    at_least launches.held 16
    at_least flushes.other_stream 8
}

@test "rule: a second context's legacy stream finds its own state, not the first one's resting one" {
    # context 1's legacy stream rests; context 2 is made, its blocking stream holds, and a
    # launch on context 2's legacy stream must flush it first (legacy_one.c). While only one
    # context had states, its resting legacy state answered for "the" legacy stream (rest.h)
    ag "$H/legacy_one" 1100 8
    assert_success
    assert_output --partial "PASS legacy_one"
    at_least learning.rests 1
    at_least launches.learning_rested 800
    at_least launches.held 16
    at_least flushes.other_stream 8
}

@test "rule: a stream-ordered allocation is no ordering point; its free is" {
    # asyncpool.c: per iteration a launch, two cuMemAllocAsync temporaries a value goes through
    # (three copies), their cuMemFreeAsync, one more launch. The allocations no longer cut the
    # sequence (an ordering point there left 2 of the 5 launches graphable: 116 replayed); the
    # frees still send what is held before the memory goes (else the log shows the poison).
    ag "$H/asyncpool" 60
    assert_success
    assert_output --partial "PASS asyncpool"
    at_least launches.replayed 200
}

@test "rule: a device copy's size is a value: a copy that grows every iteration is one sequence" {
    # growcopy.c: a launch, a device-to-device copy 8 bytes longer each iteration, a launch, a
    # synchronisation. With the size in the shape no two iterations matched (nothing replayed);
    # as a value, the copy node's size is updated in the exec, and the program checks that
    # each replay copied exactly this iteration's bytes.
    ag "$H/growcopy" 60
    assert_success
    assert_output --partial "PASS growcopy"
    at_least launches.replayed 150
    at_least copies.replayed 50
    # and with the worker building the graphs
    ag AUTOGRAPH_WORKER=1 HX_SETTLE=1 "$H/growcopy" 60
    assert_success
    assert_output --partial "PASS growcopy"
}

@test "rule: a launch whose stream lock comes after a capture began holds nothing (re-checked)" {
    # the fake driver's call hook stops the launch between its capture check and its stream
    # lock while another thread begins a capture (see tests/harness/capture_race.c)
    ag "$H/capture_race" 5
    assert_success
    assert_output --partial "PASS capture_race"
    assert_equal "$(s launches.in_app_capture)" 5
    at_least graphs.replays 1 # the legacy stream's sequence was learned: K0 starts a template
    assert_equal "$(s flushes.timeout)" 0
}

# save_profile FILE: the profile loop8 leaves with the default options (one sequence of 8),
# trusted (BENEFIT=always: the graph is kept whatever the timings say), its graph built where
# it is first replayed (the worker, late on a loaded machine, built none in loop8's 50
# iterations once in two runs of `make test` beside another).
save_profile() {
    run --separate-stderr env LD_PRELOAD="$LIB" AUTOGRAPH_PROFILE="$1" AUTOGRAPH_BENEFIT=always \
        AUTOGRAPH_WORKER=0 "$H/loop8"
    assert_success
    grep -q '^seq 8 1 ' "$1" || fail "no trusted sequence of 8 launches in the profile: $(cat "$1")"
}

@test "profile: sequences longer than AUTOGRAPH_MAX_NODES are not loaded, and nothing breaks" {
    local p="$BATS_TEST_TMPDIR/p.agp"
    save_profile "$p"
    cp "$p" "$BATS_TEST_TMPDIR/saved.agp"
    ag AUTOGRAPH_PROFILE="$p" AUTOGRAPH_MAX_NODES=4 AUTOGRAPH_LOG=debug "$H/loop8" 50
    assert_success
    assert_output --partial "PASS loop8"
    assert_equal "$(s profile.loaded)" 0
    assert_equal "$(s profile.used)" 0
    [[ "$stderr" == *"1 sequences longer than AUTOGRAPH_MAX_NODES=4 dropped"* ]] ||
        fail "no debug line for the dropped sequence"
    # the bound is the engine's: with room for 8 the same sequence loads and is used
    cp "$BATS_TEST_TMPDIR/saved.agp" "$p"
    ag AUTOGRAPH_PROFILE="$p" AUTOGRAPH_MAX_NODES=8 "$H/loop8" 50
    assert_success
    assert_output --partial "PASS loop8"
    assert_equal "$(s profile.loaded)" 1
    assert_equal "$(s profile.used)" 1
}

@test "decode: a 290-launch step between a copy in and a read-back is one sequence, exact" {
    # longer than a graph used to be (128 launches): held as one template and replayed in
    # pieces, not cut into chunks that drift from step to step
    ag "$H/decode" 60
    assert_success
    assert_output --partial "PASS decode"
    [ "$(s sequences.templates)" = 1 ] || fail "templates: $(s sequences.templates)"
    [ "$(s flushes.divergence)" = 0 ] || fail "divergences: $(s flushes.divergence)"
    at_least launches.replayed $((50 * 290))
}

@test "decode, slowly issued (20 us of host work per launch, a step of ~6 ms): replayed in pieces" {
    # A framework's forward: the step is longer than MAX_HOLD_US (2 ms). Its first template
    # must be cut into pieces when it is made; unplanned, it is one piece whose holds all time
    # out, and it never replays.
    ag AUTOGRAPH_MAX_HOLD_US=2000 "$H/decode" 30 20
    assert_success
    assert_output --partial "PASS decode"
    at_least graphs.replays 30
    at_least launches.replayed $((15 * 290))
    [ "$(s failures.build)" = 0 ] || fail "build failures: $(s failures.build)"
}
