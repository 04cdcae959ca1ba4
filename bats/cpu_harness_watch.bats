#!/usr/bin/env bats
# The watch (cache/watch.h): a stream has no state until a function launched on it repeats, so
# a process's first launches -- one launch (C1), N distinct kernels once (C2) -- make no stream
# state and learn nothing; a loop is still learned and replayed, one iteration later. On the
# fake driver. Build first: make lib harness.

load harness

setup_file() { harness_require distinct loop8; }
setup() { harness_setup; }

@test "watch: N distinct kernels once each make no stream state and learn nothing" {
    local k n
    for k in created legacy ptsz; do
        for n in 1 50; do
            ag AUTOGRAPH_LOG=debug "$H/distinct" $n 1 $k
            assert_success
            assert_output --partial "PASS distinct"
            # (the pair filter is approximate: about 3 processes in 10,000 of this kind meet a
            # false positive as the addresses fall, and make a state early: tests/test_watch.c)
            # nor registered the exit handler (cold in a first launch: cache/life.c); the
            # statistics below are written at exit all the same
            refute_output --partial "exit handler registered"
            assert_equal "$(stat launches.watched)" $n
            assert_equal "$(stat launches.eager)" $n
            # neither the launches nor the synchronisation after them made a state
            assert_equal "$(stat streams.states)" 0
            assert_equal "$(stat sequences.seen)" 0
            # the synchronisation had nothing to do, and is counted so (orders.passed)
            at_least orders.passed 1
            # nor did the engine ask the driver for the current context: a default stream
            # with no state in any context needs none (stream.c, ag_stream_lookup)
            assert_equal "$(fc ctx_current_gets)" 0
        done
    done
}

@test "watch: a loop of distinct kernels is learned from its second iteration, replayed from its fourth" {
    local k
    for k in created legacy ptsz; do
        # iteration 0: 4 launches watched; 1: the first kernel repeats, the state is made, and
        # the whole iteration is learned; 2: seen again (a template); 3..5 replayed
        ag "$H/distinct" 4 6 $k
        assert_success
        assert_output --partial "PASS distinct"
        assert_equal "$(stat launches.watched)" 4
        assert_equal "$(stat streams.states)" 1
        assert_equal "$(stat graphs.replays)" 3
        assert_equal "$(stat launches.replayed)" 12
        no_failures
    done
}

@test "watch: a function repeated within the first iteration makes the state there" {
    # loop8: A B C A ...: the 4th launch repeats A; that one and the rest are learned
    ag AUTOGRAPH_LOG=debug "$H/loop8" 1
    assert_success
    assert_output --partial "PASS loop8"
    # learning alone registers no exit handler (cache/life.c): nothing was held, no worker woken
    refute_output --partial "exit handler registered"
    assert_equal "$(stat launches.watched)" 3
    assert_equal "$(stat streams.states)" 1
    assert_equal "$(stat sequences.seen)" 1
}

@test "watch: with a profile loaded nothing is watched" {
    # the first run saves the loop's sequence; the second loads it: a profile sequence may
    # start at a function's first launches, so nothing is watched then
    ag AUTOGRAPH_PROFILE="$BATS_TEST_TMPDIR/p.json" "$H/distinct" 4 6
    assert_success
    assert_equal "$(stat launches.watched)" 4
    ag AUTOGRAPH_PROFILE="$BATS_TEST_TMPDIR/p.json" "$H/distinct" 4 1
    assert_success
    at_least profile.loaded 1
    assert_output --partial "PASS distinct"
    assert_equal "$(stat launches.watched)" 0
    assert_equal "$(stat streams.states)" 1
}

@test "learning: a loop body of 32 launches or more, back to back, is a template at its second sighting" {
    # distinct N 3: iteration 0 watched, 1 and 2 learned (sightings 1 and 2). With the default
    # MIN_REPEATS (3) a 40-launch body that repeats with nothing between is a loop's body: a
    # template at sighting 2; an 8-launch one still waits for sighting 3
    ag AUTOGRAPH_MIN_REPEATS=3 "$H/distinct" 40 3
    assert_success
    assert_output --partial "PASS distinct"
    assert_equal "$(stat sequences.seen)" 1
    assert_equal "$(stat sequences.templates)" 1
    no_failures
    ag AUTOGRAPH_MIN_REPEATS=3 "$H/distinct" 8 3
    assert_success
    assert_equal "$(stat sequences.seen)" 1
    assert_equal "$(stat sequences.templates)" 0
    ag AUTOGRAPH_MIN_REPEATS=3 "$H/distinct" 8 4
    assert_success
    assert_equal "$(stat sequences.templates)" 1
    no_failures
    # with a launch between its occurrences (spaced) a long sequence is no loop's body: all
    # three sightings (F4's layer blocks, whose variants come and go between other work)
    ag AUTOGRAPH_MIN_REPEATS=3 "$H/distinct" 40 3 created spaced
    assert_success
    assert_output --partial "PASS distinct"
    assert_equal "$(stat sequences.templates)" 0
    ag AUTOGRAPH_MIN_REPEATS=3 "$H/distinct" 40 4 created spaced
    assert_success
    assert_equal "$(stat sequences.templates)" 1
    no_failures
}
