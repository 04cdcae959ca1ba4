#!/usr/bin/env bats
# Where every launch went (docs/STATS.md, "fates"): harness programs of every kind on the fake
# driver, each with a stats file, checked by bats/check_fates.py -- the fates sum exactly to the
# launches of the six entry points, the held ones to the kernel launches held, the replayed and
# flushed ones to theirs (copies apart), launches.eager and learning_rested are their sums --
# and the fate each scenario is about dominates. Build first: make lib harness.

load harness

setup_file() {
    harness_require loop8 pingpong ptds diverge pieces spin holdsleep exit_held fork \
        pdl_stream_attr phases queue capture stress distinct errors copies random
}
setup() {
    harness_setup
    N=0
}

# The fates that are the normal lot of a loop (learned, then replayed), and the others.
HELD_EAGER=diverged,hold_timeout,ordering_point,graph_failure,cache_full
UNUSUAL=eager_policy,rested_no_repeat,rested_backoff,ungraphable,app_capture,paused,engine_off,no_state,not_held,$HELD_EAGER

# agf [VAR=VALUE...] PROGRAM [ARGS...]: ag (deterministic graphing) with a stats file, $F; the
# program must succeed (each checks its own results).
agf() {
    F="$BATS_TEST_TMPDIR/s.$((++N)).json"
    ag AUTOGRAPH_STATS="$F" "$@"
    [ "$status" -eq 0 ] || fail "$* failed: $(grep -m3 -v '^autograph' <<<"$output")"
}

# fates [CHECKS...]: bats/check_fates.py on $F (the accounting, and these checks).
fates() {
    run python3 "$BATS_TEST_DIRNAME/check_fates.py" "$F" "$@"
    [ "$status" -eq 0 ] || fail "$output"
}

@test "fates: the check fails when a launch has no fate or two" {
    agf "$H/loop8" 20
    fates --dominant replayed
    python3 - "$F" "$BATS_TEST_TMPDIR/bad.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["fates"]["eager_learning"] += 1
d["counters"]["fate.eager_learning"] += 1
json.dump(d, open(sys.argv[2], "w"))
PY
    run python3 "$BATS_TEST_DIRNAME/check_fates.py" "$BATS_TEST_TMPDIR/bad.json"
    assert_failure
    assert_output --partial "FAIL: the fates sum to 161, not to the 160 launches"
    run python3 "$BATS_TEST_DIRNAME/check_fates.py" "$F" --dominant eager_learning
    assert_failure
}

@test "fates: loops that replay, through every launch form and per-thread streams" {
    agf "$H/loop8" 50
    fates --dominant replayed --none "$UNUSUAL"
    agf "$H/pingpong" 100
    fates --dominant replayed --none "$UNUSUAL"
    agf "$H/ptds" 4 50
    fates --dominant replayed
    agf AUTOGRAPH_PIECE=3 "$H/pieces" loop 40 15 3
    fates --dominant replayed --none "$UNUSUAL"
}

@test "fates: graphs built on the worker (held launches go out eagerly until their graph is there)" {
    # (how many occurrences go out before the graph is there depends on the worker's pace;
    # HX_SETTLE: the loops go on until at least half their iterations ran from graphs, so
    # that a worker that ran late on a loaded host still has its graphs counted)
    agf AUTOGRAPH_WORKER=1 HX_SETTLE=1 "$H/loop8" 50
    fates --dominant replayed,building --at-least building=8 --none "$UNUSUAL"
    agf AUTOGRAPH_WORKER=1 HX_SETTLE=1 AUTOGRAPH_PIECE=3 "$H/pieces" loop 40 15 3
    fates --dominant replayed,building --at-least building=15 --none "$UNUSUAL"
    agf AUTOGRAPH_WORKER=1 "$H/stress"
    fates --at-least building=1
    # (ag builds on the launching thread: nothing goes out as building there)
    agf "$H/loop8" 50
    fates --none building
}

@test "fates: divergences (held launches flushed when a launch leaves the sequence)" {
    agf "$H/pieces" diverge 60 15 3
    fates --dominant diverged --among "$UNUSUAL" --at-least diverged=30
    agf AUTOGRAPH_PIECE=3 "$H/pieces" diverge 60 15 3
    fates --dominant diverged --among "$UNUSUAL"
    agf "$H/diverge" 60
    fates --at-least diverged=1 --dominant replayed
}

@test "fates: hold time-outs (the watchdog flushes)" {
    agf AUTOGRAPH_MAX_HOLD_US=2000 "$H/spin" stream 20
    fates --dominant hold_timeout
    agf AUTOGRAPH_MAX_HOLD_US=20000 "$H/pieces" watch 60 15 3
    fates --dominant hold_timeout --among "$UNUSUAL" --at-least hold_timeout=30
    agf AUTOGRAPH_MAX_HOLD_US=2000 "$H/holdsleep" ptds 10
    fates --dominant hold_timeout --among "$UNUSUAL"
}

@test "fates: ordering points mid-hold (sync, event, query, copy, another thread, exit)" {
    agf "$H/pieces" order 60 15 3
    fates --dominant ordering_point --among "$UNUSUAL" --at-least ordering_point=30
    agf "$H/pieces" thread 60 15 3
    fates --dominant ordering_point --among "$UNUSUAL" --at-least ordering_point=30
    # the 5 launches held when the program exits
    agf "$H/exit_held" "$BATS_TEST_TMPDIR/exit.bin" 5
    fates --dominant ordering_point --among "$UNUSUAL" --at-least ordering_point=5
}

@test "fates: ungraphable launches (a denied name, stream attributes)" {
    agf AUTOGRAPH_DENY='*' "$H/loop8" 50
    fates --dominant ungraphable --none replayed,"$HELD_EAGER"
    agf "$H/pdl_stream_attr"
    fates --dominant ungraphable --among "$UNUSUAL" --at-least ungraphable=600
}

@test "fates: rested streams (no repeat in the window; a back-off)" {
    agf FAKECUDA_DELAY_US=0 "$H/phases" 20000 4000
    fates --dominant rested_no_repeat --at-least replayed=8000
    # the stream's only sequence is GPU-bound: learning rests through its back-offs
    agf AUTOGRAPH_BENEFIT=now "$H/queue" gpubound 300
    fates --dominant rested_backoff --at-least eager_policy=1 --none replayed
}

@test "fates: eager by policy (a short region: its sequence could not pay back a trial)" {
    # (cpu_harness_policy.bats "a short region": the sequence stays eager, untried, and the
    # stream, running nothing else, rests through the wait)
    agf AUTOGRAPH_BENEFIT=measure "$H/queue" hostbound 30
    fates --dominant rested_backoff --at-least eager_policy=1 --none replayed,"$HELD_EAGER"
    # with segments that never repeat between its occurrences, no rest: eager by policy
    agf AUTOGRAPH_BENEFIT=measure "$H/queue" diverge 60
    fates --at-least eager_policy=8 --none rested_backoff,"$HELD_EAGER"
}

@test "fates: launches while the application captures" {
    agf "$H/capture" 30
    fates --dominant app_capture --among "$UNUSUAL"
    agf "$H/stress"
    fates --dominant app_capture --among "$UNUSUAL" --at-least replayed=1000
}

@test "fates: launches while the program paused the library" {
    agf "$H/pause" 40 10 20
    fates --at-least paused=82 --at-least replayed=100
}

@test "fates: graph failures and a full graph cache" {
    agf AUTOGRAPH_PIECE=3 AUTOGRAPH_FAULT=launch:3 "$H/pieces" loop 200 15 3
    fates --dominant graph_failure --among "$HELD_EAGER"
    agf AUTOGRAPH_FAULT=instantiate:1 "$H/loop8" 50
    fates --dominant graph_failure --among "$HELD_EAGER"
    # a sequence of 500 launches whose graph the memory limit cannot hold (built on the
    # launching thread, as ag does)
    agf AUTOGRAPH_WORKER=0 AUTOGRAPH_MAX_GRAPH_MEM=1M "$H/distinct" 500 40
    fates --dominant cache_full --among "$HELD_EAGER" --at-least cache_full=500
}

@test "fates: the engine off (disabled, recording a trace)" {
    agf AUTOGRAPH_DISABLE=1 "$H/loop8" 20
    fates --at-least engine_off=160 --dominant engine_off
    agf AUTOGRAPH_TRACE="$BATS_TEST_TMPDIR/t.bin" "$H/loop8" 20
    fates --at-least engine_off=160 --dominant engine_off
}

@test "fates: a launch a template wants but cannot hold (its context not current)" {
    agf "$H/errors" ctx
    fates --at-least not_held=1
}

@test "fates: copies and memsets held and replayed are not launches" {
    agf "$H/copies" solver pinned 40 diverge
    local held replayed
    held="$(stat copies.held)" replayed="$(stat copies.replayed)"
    fates --dominant replayed
    [ "$replayed" -gt 0 ] || fail "no copy replayed"
    [ "$held" -gt "$replayed" ] || fail "no held copy flushed"
}

@test "fates: a fork while launches are held (flushed before it)" {
    agf "$H/fork" 20
    fates --dominant replayed --at-least ordering_point=1
}

# random programs: several seeds under several option sets (the worker too); deterministic
# graphing keeps replayed or learned launches on top, measured graphing learned or
# eager-by-policy ones
@test "fates: random programs, several seeds and option sets" {
    local s o
    for s in 1 2 3 4 5 6 7 8; do
        for o in "AUTOGRAPH_PIECE=0" "AUTOGRAPH_PIECE=2" "AUTOGRAPH_MAX_NODES=8 AUTOGRAPH_COPY_NODES=all" \
            "AUTOGRAPH_WORKER=1 AUTOGRAPH_PIECE=3"; do
            # shellcheck disable=SC2086
            agf $o "$H/random" "$s" 60
            fates --dominant replayed,eager_learning,building
        done
        agf AUTOGRAPH_BENEFIT=measure AUTOGRAPH_MAX_HOLD_US=2000 "$H/random" "$s" 60
        fates --dominant eager_policy,eager_learning,replayed
    done
}
