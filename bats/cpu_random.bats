#!/usr/bin/env bats
# Seeded random programs (tests/harness/random.c) on the fake driver: a fixed set of seeds
# under several option sets, every result checked exactly against the program's host model.
# A failure names its seed: rerun it with `ag ... random SEED ITERATIONS` and RANDOM_TRACE=1.
# Build first: make lib harness.

load harness

setup_file() { harness_require random; }
setup() { harness_setup; }

# Seeds 1-20: between them every stream kind, every operation and divergences; most replay
# graphs under `ag`.
SEEDS="1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20"

# random_seeds [VAR=VALUE...]: every seed under ag with these options, 80 iterations each;
# each must pass with no graph failures.
random_seeds() {
    local s
    for s in $SEEDS; do
        ag "$@" "$H/random" "$s" 80
        [ "$status" -eq 0 ] && [[ "$output" == *"PASS random"* ]] ||
            fail "seed $s (options: $*) failed: $(grep -m1 FAIL <<<"$output")"
        no_failures
    done
}

@test "random: every seed passes without libautograph (the model alone)" {
    local s
    for s in $SEEDS; do
        run timeout 60 "$H/random" "$s" 80
        [ "$status" -eq 0 ] && [[ "$output" == *"PASS random"* ]] ||
            fail "seed $s failed eagerly: $(grep -m1 FAIL <<<"$output")"
    done
    # a slow fake GPU: the model's checks wait for nothing they do not cover
    for s in 1 2 3 4 5; do
        run timeout 60 env FAKECUDA_DELAY_US=200 "$H/random" "$s" 40
        assert_success
        assert_output --partial "PASS random"
    done
}

@test "random: the seeds replay graphs with copy and memset nodes and check many values" {
    local s replays=0 copies=0 values=0 v
    for s in $SEEDS; do
        ag "$H/random" "$s" 80
        assert_success
        replays=$((replays + $(stat graphs.replays)))
        copies=$((copies + $(fc graph_copies_executed)))
        v="$(sed -n 's/.* \([0-9]*\) values and.*/\1/p' <<<"$output")"
        values=$((values + v))
    done
    [ "$replays" -ge 800 ] || fail "only $replays graph replays over the seeds"
    [ "$copies" -ge 300 ] || fail "only $copies memset and memcpy nodes run"
    [ "$values" -ge 20000 ] || fail "only $values values compared"
}

@test "random: every operation's values and cells take turns (RANDOM_ALTERNATE=1): second execs, exact" {
    local s swaps=0
    for s in $SEEDS; do
        ag RANDOM_ALTERNATE=1 "$H/random" "$s" 80
        [ "$status" -eq 0 ] && [[ "$output" == *"PASS random"* ]] ||
            fail "seed $s (RANDOM_ALTERNATE=1) failed: $(grep -m1 FAIL <<<"$output")"
        no_failures
        swaps=$((swaps + $(stat updates.variant)))
    done
    # (divergences and bodies that share a stream break the turns now and then: about half of
    # the seeds keep a second exec)
    [ "$swaps" -ge 150 ] || fail "only $swaps replays of a second exec over the seeds"
    for s in 3 7 11 20; do
        ag RANDOM_ALTERNATE=1 AUTOGRAPH_PIECE=2 FAKECUDA_DELAY_US=50 "$H/random" "$s" 60
        [ "$status" -eq 0 ] && [[ "$output" == *"PASS random"* ]] ||
            fail "seed $s (pieces of 2, slow GPU) failed: $(grep -m1 FAIL <<<"$output")"
        no_failures
    done
}

@test "random: default options (deterministic graphing)" {
    random_seeds
}

@test "random: a piece every 2 launches" {
    random_seeds AUTOGRAPH_PIECE=2
}

@test "random: a piece every 3 launches, slow fake GPU" {
    random_seeds AUTOGRAPH_PIECE=3 FAKECUDA_DELAY_US=50
}

@test "random: MAX_NODES=8 (chunks cut in long stretches)" {
    random_seeds AUTOGRAPH_MAX_NODES=8
}

@test "random: COPY_NODES=all (copies into pageable memory are nodes too)" {
    random_seeds AUTOGRAPH_COPY_NODES=all AUTOGRAPH_PIECE=2
}

@test "random: READBACK_NODES=1 (trailing read-backs as memcpy nodes, not after the graph)" {
    random_seeds AUTOGRAPH_READBACK_NODES=1 AUTOGRAPH_COPY_NODES=all
}

@test "random: measured benefit and the default hold time" {
    local s
    for s in $SEEDS; do
        run timeout 60 env LD_PRELOAD="$LIB" AUTOGRAPH_MIN_REPEATS=2 AUTOGRAPH_STATS=1 \
            "$H/random" "$s" 80
        [ "$status" -eq 0 ] && [[ "$output" == *"PASS random"* ]] ||
            fail "seed $s failed: $(grep -m1 FAIL <<<"$output")"
        no_failures
    done
}

@test "random: seeds that lost held launches when a hold moved to a template whose piece ended earlier" {
    # the measured piece plan (no AUTOGRAPH_PIECE): before the fix in cache/hold.c
    # (held_prefix_of) each of these lost a launch in 1 to 4 runs of 10
    local s i
    for s in "10145 80" "12758 120" "14304 40" "10924 40" "13586 120" "10602 120"; do
        for i in 1 2 3 4 5; do
            ag "$H/random" $s
            [ "$status" -eq 0 ] && [[ "$output" == *"PASS random"* ]] ||
                fail "seed $s, run $i: $(grep -m1 FAIL <<<"$output")"
            no_failures
        done
    done
}

@test "random: an async copy into pageable memory is done when it returns (default COPY_NODES)" {
    # CUDA says such a copy "might be" synchronous; drivers make it so, and programs rely on
    # it. With the default COPY_NODES=pinned it stays an ordering point and keeps that.
    random_seeds RANDOM_PAGEABLE_SYNC=1
}

@test "random: an async copy into pageable memory is done when it returns (COPY_NODES=all)" {
    # As a graph node it ends its sequence, and the call waits for the stream (cache/copy.c).
    random_seeds RANDOM_PAGEABLE_SYNC=1 AUTOGRAPH_COPY_NODES=all
    random_seeds RANDOM_PAGEABLE_SYNC=1 AUTOGRAPH_COPY_NODES=all AUTOGRAPH_PIECE=2
}

@test "random: the library paused and resumed before random operations (RANDOM_PAUSE=1): exact" {
    local s toggles=0 paused=0 replays=0
    for s in $SEEDS; do
        ag RANDOM_PAUSE=1 "$H/random" "$s" 80
        [ "$status" -eq 0 ] && [[ "$output" == *"PASS random"* ]] ||
            fail "seed $s failed with pauses: $(grep -m1 FAIL <<<"$output")"
        no_failures
        toggles=$((toggles + $(sed -n 's/^random: the library paused or resumed \([0-9]*\) times$/\1/p' <<<"$output")))
        paused=$((paused + $(stat launches.paused)))
        replays=$((replays + $(stat graphs.replays)))
    done
    # the pauses came in every seed's program, launches passed while paused, and graphs
    # still replayed between them
    [ "$toggles" -ge 100 ] || fail "only $toggles pauses and resumes over the seeds"
    [ "$paused" -ge 500 ] || fail "only $paused launches while paused"
    [ "$replays" -ge 200 ] || fail "only $replays graph replays"
}
