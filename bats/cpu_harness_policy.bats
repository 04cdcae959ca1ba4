#!/usr/bin/env bats
# The measured policy on the CPU harness (tests/harness/queue.c): graphs are tried only where
# the host is the bottleneck, pieces only where the GPU would wait, and sequences that keep
# breaking off back off exponentially (policy/benefit.h). The fake GPU is made slow by a gate
# kernel that the host opens later, never by time, so what the engine sees does not depend on
# the machine's load. The default policy (no AUTOGRAPH_BENEFIT=always). Build first: make lib
# harness.

load harness

setup_file() { harness_require queue; }
setup() { harness_setup; }

# measured [VAR=VALUE...] PROGRAM [ARGS...]: the measured policy from a sequence's first
# repeats (BENEFIT=now: the fake driver's launches are too cheap for the payback estimate to
# ever let a graph be tried), templates after 2 sightings, holds released by ordering points
# only, graphs built at their first replay (no worker: counts are exact), statistics at exit.
measured() {
    run timeout "${AG_TIMEOUT:-120}" env LD_PRELOAD="$LIB" AUTOGRAPH_MIN_REPEATS=2 \
        AUTOGRAPH_BENEFIT=now AUTOGRAPH_WORKER=0 \
        AUTOGRAPH_MAX_HOLD_US=10000000 AUTOGRAPH_STATS=1 "$@"
}

@test "fake driver: every queue scenario passes without libautograph" {
    local m
    for m in "gpubound 50" "hostbound 50" "phase 20 20" "p3 20 10" "p1 20 10" "diverge 50" \
        "variants 50" "cycle 30 0" "align 50"; do
        run timeout 60 "$H/queue" $m
        assert_success
        assert_output --partial "PASS queue ${m%% *}"
    done
}

@test "policy: a GPU-bound stream (the host runs ahead of a queue) stays eager: no graph built, nothing held" {
    # a timed region of {A, B, event record} with the GPU behind the host throughout
    measured "$H/queue" gpubound 300
    assert_success
    assert_output --partial "PASS queue gpubound"
    assert_equal "$(stat sequences.templates)" 1
    assert_equal "$(stat graphs.built)" 0
    assert_equal "$(stat launches.held)" 0
    assert_equal "$(stat policy.graph_wins)" 0
    assert_equal "$(stat policy.eager_wins)" 0
    assert_equal "$(stat policy.host_bound)" 0
    # probed after 2, 64 + 128 more occurrences (the back-off grows): 3 probes in 300
    assert_equal "$(stat policy.gpu_bound)" 3
    # the stream's only sequence is eager by policy: learning rests through each of the 3
    # back-offs (2 launches an occurrence: 62 x 2, 126 x 2, 254 x 2), waking for each probe
    assert_equal "$(stat learning.rests)" 3
    at_least launches.learning_rested 300
}

@test "policy: a short region is not spent on a probe or a trial (the payback estimate)" {
    # 30 occurrences of {A, B, stream sync}, the default policy: a graph could never pay for
    # its trial there (issue 20: G2), so the sequence stays eager, unmarked and untried. No
    # worker: it would ask the driver about A's and B's parameters, and on a loaded host it may
    # do so only after the 30 occurrences, when no template can form any more
    run timeout "${AG_TIMEOUT:-120}" env LD_PRELOAD="$LIB" AUTOGRAPH_MIN_REPEATS=2 \
        AUTOGRAPH_WORKER=0 AUTOGRAPH_MAX_HOLD_US=10000000 AUTOGRAPH_STATS=1 "$H/queue" hostbound 30
    assert_success
    assert_output --partial "PASS queue hostbound"
    assert_equal "$(stat sequences.templates)" 1
    assert_equal "$(stat graphs.built)" 0
    assert_equal "$(stat launches.held)" 0
    assert_equal "$(stat policy.host_bound)" 0
    assert_equal "$(stat policy.gpu_bound)" 0
    assert_equal "$(stat policy.graph_wins)" 0
    assert_equal "$(stat policy.eager_wins)" 0
    # nothing else runs there: the stream rests through the payback wait (made at the 3rd
    # occurrence, resting from the 4th: 26 occurrences of 2 launches)
    assert_equal "$(stat learning.rests)" 1
    assert_equal "$(stat fate.rested_backoff)" 52
}

@test "policy: a host-bound stream (a sync every iteration) is tried as graphs" {
    measured "$H/queue" hostbound 300
    assert_success
    assert_output --partial "PASS queue hostbound"
    assert_equal "$(stat policy.gpu_bound)" 0
    at_least policy.host_bound 1
    at_least graphs.built 1
    at_least launches.replayed 2
    no_failures
}

@test "policy: a GPU-bound phase, then a host-bound one: probed again after the back-off, then tried" {
    measured "$H/queue" phase 100 300
    assert_success
    assert_output --partial "PASS queue phase"
    at_least policy.gpu_bound 1
    at_least policy.host_bound 1
    at_least graphs.built 1
    no_failures
}

# replayed occurrences of the 16-launch sequence of queue p3 / p1
p3_occurrences() { echo $(( $(stat launches.replayed) / 16 )); }

@test "policy: the host runs far ahead (P3): graph occurrences find the GPU busy, one piece" {
    # AUTOGRAPH_PIECE=4 would cut 4 pieces; the GPU still busy with earlier work when holds
    # begin makes it one graph (policy.whole_graph). The switch comes at the latest at the
    # 4th graph occurrence (the 2nd and 3rd looks that find the GPU behind): at most 4
    # occurrences in pieces, 3 extra graph launches each; every later one is one launch.
    measured AUTOGRAPH_PIECE=4 "$H/queue" p3 40 100
    assert_success
    assert_output --partial "PASS queue p3"
    assert_equal "$(stat policy.host_bound)" 1
    assert_equal "$(stat policy.whole_graph)" 1
    local occ extra
    occ="$(p3_occurrences)"
    [ "$occ" -ge 6 ] || fail "only $occ occurrences replayed"
    extra=$(( $(stat graphs.replays) - occ ))
    [ "$extra" -le 12 ] || fail "$extra graph launches more than the $occ occurrences: still in pieces"
    no_failures
}

@test "policy: a sync every iteration (P1): the GPU waits for the host, pieces stay" {
    measured AUTOGRAPH_PIECE=4 "$H/queue" p1 40 100
    assert_success
    assert_output --partial "PASS queue p1"
    assert_equal "$(stat policy.whole_graph)" 0
    local occ
    occ="$(p3_occurrences)"
    [ "$occ" -ge 6 ] || fail "only $occ occurrences replayed"
    assert_equal "$(stat graphs.replays)" $(( 4 * occ ))
    no_failures
}

@test "policy: a sequence that breaks off 3 times in 4 backs off exponentially: O(log n) holds" {
    # before: four breaks *in a row* turned it off, so one completion in four kept it on and
    # every start was a hold that went out late (1500 of 2000 iterations)
    measured "$H/queue" diverge 2000
    assert_success
    assert_output --partial "PASS queue diverge"
    at_least policy.abort_backoffs 1
    local d
    d="$(stat flushes.divergence)"
    [ "$d" -le 40 ] || fail "flushes.divergence $d: holds that broke off did not back off"
    no_failures
}

@test "policy: decode-like variants and a prefill that break off holds are not turned off" {
    # steps alternate between two variants differing at position 5, every fifth is a prefill
    # differing at its second launch: breaking off there is another sequence's doing (or costs
    # one held launch), so no back-off; before, 4 such holds turned the template off for 64
    # occurrences at a time (8 replays in 400 steps; how many replay now depends on the
    # trials' timings here)
    measured "$H/queue" variants 400
    assert_success
    assert_output --partial "PASS queue variants"
    assert_equal "$(stat policy.abort_backoffs)" 0
    no_failures
}

@test "policy: a variant whose steps begin as its sibling's hold is told its occurrences" {
    # queue variants in pieces of 4: a step of the second variant begins as a hold of the
    # first, sends the first piece as its graph and breaks off at position 5; the learner sees
    # only the rest, so the second variant's own occurrences were never counted and its probe
    # never ended. Occurrences told (replayed or eager) of each variant: 60 for the second
    # before, 150-160 now (how many of them replay depends on the trials' timings here), and
    # down to 116 and 131 under load (make test beside .ci/run; three busy loops, with the
    # library of fb16763 too), so the bound sits between 60 and those
    measured AUTOGRAPH_PIECE=4 AUTOGRAPH_STATS="$BATS_TEST_TMPDIR/v.json" "$H/queue" variants 400
    assert_success
    assert_output --partial "PASS queue variants"
    run python3 -c 'import json,sys; s=[q["replays"] + q["eager_runs"] for q in json.load(open(sys.argv[1]))["top_sequences"] if q["length"] == 8]; print(s); sys.exit(len(s) < 2 or min(s[:2]) < 90)' "$BATS_TEST_TMPDIR/v.json"
    assert_success
}

@test "policy: four variants of a step (a kernel that changes with alignment) stay exact, follow one policy, and are replayed" {
    # queue align: 16 launches a step, position 14 one of four kernels in turn; every step but
    # a variant's own begins as another variant's hold and moves to its own at launch 14, or
    # breaks off there. Eager launches cost 20 us here, so graphs win the trials that end.
    # With a trial each, how many ended within the run depended on timing (0 to 3 under load:
    # the variants whose steps begin as the others' holds collect their samples slowly), and
    # 3110 to 5408 of the 6400 launches were replayed; the three later variants now follow the
    # first one's policy (one trial over every step): 6064 in three runs
    measured FAKECUDA_LAUNCH_HOST_US=20 "$H/queue" align 400
    assert_success
    assert_output --partial "PASS queue align"
    at_least policy.variants_joined 3
    at_least fate.replayed 4500
    no_failures
}

@test "a step whose hold breaks off mid-way (tiny --diverge-every=7, pieces of 10): the rest stays quiet" {
    # holds of the step's template made to wait for a segment's start (f8eeab8) let the
    # variant's tail begin a hold at every fourth launch of the rest, each breaking off two
    # launches later: 322 divergence flushes and 17580 launches replayed, against 42 and 18840
    # (the GPU test "tiny: divergence in mid-sequence" fell below its 280 replays)
    ag AUTOGRAPH_PIECE=10 "$H/queue" cycle 300 0
    assert_success
    assert_output --partial "PASS queue cycle"
    at_least fate.replayed 18800
    [ "$(stat flushes.divergence)" -le 50 ] || fail "$(stat flushes.divergence) holds broke off"
    no_failures
}
