#!/usr/bin/env bats
# Errors of held launches and the engine's smaller ordering defects (issue 10, items 4-5), on
# the CPU harness: tests/harness/errors.c (its header says what each scenario checks). Each
# scenario passes without the library too; the tests here run it with the library and check
# the counters that show the engine did what the scenario is about. Build first:
# make lib harness.

load harness

setup_file() { harness_require errors; }
# one piece per template (the scenarios cut templates at known places)
setup() {
    harness_setup
    export AUTOGRAPH_PIECE=64
}

@test "errors: each scenario passes without the library (the driver's own answers)" {
    local sc
    for sc in late latefree latesync wide ctx destroy freeseg ptdsexit ctxslots first; do
        run timeout 60 "$H/errors" "$sc"
        assert_success
        assert_output --partial "PASS errors $sc"
    done
}

@test "errors: a held launch refused when it goes out returns its error at the next call" {
    ag "$H/errors" late
    assert_success
    assert_output --partial "PASS errors late"
    # it was held (reported done) and went out at the sync, which returned its error
    assert_output --partial "late: launch 0, next call 1, sync 0"
    assert_equal "$(stat failures.eager_launch)" 1
}

@test "errors: ... flushed by another thread's free: the stream's next launch returns it" {
    ag "$H/errors" latefree
    assert_success
    assert_output --partial "PASS errors latefree"
    assert_output --partial "late: launch 0, next call 1, sync 0"
    assert_equal "$(stat failures.eager_launch)" 1
}

@test "errors: ... flushed by a context-wide sync of the thread that launched it: it returns it" {
    ag "$H/errors" latesync
    assert_success
    assert_output --partial "PASS errors latesync"
    assert_output --partial "late: launch 0, next call 1, sync 0"
    assert_equal "$(stat failures.eager_launch)" 1
}

@test "errors: held launches of more than 16 parameters go out eagerly, allocating nothing" {
    ag "$H/errors" wide
    assert_success
    assert_output --partial "PASS errors wide"
    assert_equal "$(stat flushes.ordering_point)" 2
    assert_equal "$(stat launches.flushed_eager)" 4
    assert_equal "$(stat failures.eager_launch)" 0
}

@test "errors: a launch on a stream of a context that is not current is not held" {
    ag "$H/errors" ctx
    assert_success
    assert_output --partial "PASS errors ctx"
    assert_equal "$(stat failures.eager_launch)" 0
    at_least graphs.replays 4
}

@test "errors: a stream destroyed while another context is current: what it held runs" {
    ag "$H/errors" destroy
    assert_success
    assert_output --partial "PASS errors destroy"
    assert_equal "$(stat failures.eager_launch)" 0
}

@test "errors: another thread's frees flush this thread's holds but do not cut its sequences" {
    ag "$H/errors" freeseg 40
    assert_success
    assert_output --partial "PASS errors freeseg"
    # one sequence, A B C D, whatever the place of the free in each iteration
    assert_equal "$(stat sequences.templates)" 1
    at_least graphs.replays 5
}

@test "errors: per-thread stream states of exited threads are flushed and retired" {
    ag AUTOGRAPH_LOG=debug "$H/errors" ptdsexit 8
    assert_success
    assert_output --partial "PASS errors ptdsexit"
    # each thread flushed its own hold as it exited (no side stream, nothing left for others)
    assert_equal "$(grep -cE '^autograph(\[[0-9:]+\])?: debug: thread [0-9]+ exits: 1 per-thread stream state retired' <<<"$output")" 8
    assert_equal "$(stat flushes.exit_or_fork)" 8
    assert_equal "$(stat flushes.side_stream)" 0
}

# (64 context slots: contexts 65-70 are graphed only if the destroyed ones' slots came back)
@test "errors: context slots are reclaimed: the 70th context's streams are still graphed" {
    ag "$H/errors" ctxslots 1
    assert_success
    local one
    one="$(stat graphs.replays)"
    [ "$one" -ge 1 ] || fail "no replays with one context"
    assert_output --partial "ctxslots: context 1 graph launches $one"
    ag "$H/errors" ctxslots 70
    assert_success
    assert_output --partial "PASS errors ctxslots"
    assert_equal "$(stat graphs.replays)" $((70 * one))
    # every context as many as the one alone, the 70th included
    assert_equal "$(grep -cx "ctxslots: context [0-9]* graph launches $one" <<<"$output")" 70
    assert_output --partial "ctxslots: context 70 graph launches $one"
}

@test "errors: a profile holds no launch whose function has not run in this process" {
    local prof="$BATS_TEST_TMPDIR/profile"
    ag AUTOGRAPH_PROFILE="$prof" "$H/errors" first save
    assert_success
    ag AUTOGRAPH_PROFILE="$prof" "$H/errors" first check
    assert_success
    assert_output --partial "PASS errors first"
    at_least profile.loaded 1
    at_least profile.used 1
    assert_equal "$(stat failures.eager_launch)" 0
}
