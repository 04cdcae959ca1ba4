#!/usr/bin/env bats
# Driver calls that order work without a stream argument, on the fake driver: context-wide
# event records (cuCtxRecordEvent), the deprecated launches (cuLaunch, cuLaunchGrid on the
# legacy default stream, cuLaunchGridAsync), and function attributes (cuFuncSetAttribute and
# friends), which change how later launches run. Each program checks its own results; the
# tests also check libautograph's statistics and the fake's counters. Build first:
# make lib harness.

load harness

setup_file() { harness_require ctxrecord legacygrid funcattr curctx fnclass attrchurn; }
setup() { harness_setup FUNCATTR_EXPECT_REPLAYS; }

@test "fake driver alone: context records, deprecated launches, attribute snapshots, current context, kernel copies" {
    for p in ctxrecord legacygrid funcattr curctx fnclass; do
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
    # cycles 0 and 3, below; the program checks it per cycle). Each cycle's change drops the
    # graph that holds X (6), and the first set of an attribute not known yet may drop one
    # more; nothing is invalidated wholesale (no unload), and the 24 same-value sets drop
    # nothing.
    # 3 replays in each cycle, 2 in the two that open with a function never launched on the
    # stream (cycles 0 and 3: the stream is only watched until it repeats, cache/watch.h)
    at_least graphs.replays 16
    at_least cache.attr_drops 6
    [ "$(stat cache.attr_drops)" -le 9 ] || fail "more graphs dropped than attribute changes"
    assert_equal "$(stat cache.invalidations)" 0
    no_failures
}

@test "an attribute set to alternating values every iteration: exact, and the sequence backs off instead of being built for every occurrence" {
    ag "$H/attrchurn" 200
    assert_success
    assert_output --partial "PASS attrchurn"
    # every change drops the graph holding X: without the back-off, each of the ~197
    # occurrences after learning was built and replayed once; with it, two drops in a row
    # before a graph pays back turn the sequence eager for 64, then 128 occurrences
    local built
    built="$(sed -n 's/^built //p' <<<"$output")"
    [ "$built" -le 20 ] || fail "$built graphs built for 200 iterations"
    at_least policy.attr_backoffs 2
    # and the report says why
    assert_output --regexp "not graphed #[0-9]+: attribute_churn \([0-9]+ back-offs\)"
    no_failures
}

@test "function classes: a copy of a kernel from a new module is its class's from its first launch" {
    # 16 steps, each with a copy of attn no step launched before (cuDNN's attention in a decode
    # with a growing cache): a copy unknown until its second launch made every step a new
    # sequence (nothing replayed); probed at its first launch (a class has its name), one
    # template serves every step from the second on
    ag "$H/fnclass" 16 16 -1 1
    assert_success
    assert_output --partial "PASS fnclass"
    assert_equal "$(stat sequences.templates)" 1
    at_least graphs.replays 10
    at_least layouts.at_first_launch 14
    no_failures
}

@test "function classes: a kernel's class is found by its whole name, not the part a layout keeps" {
    # the same as above with a name of 200 characters (mangled names run to hundreds): the
    # class's name was registered from the layout's cut copy (120 characters) and looked up by
    # the whole name, so no copy was its class's at its first launch and nothing replayed
    ag "$H/fnclass" 16 16 -1 1 1
    assert_success
    assert_output --partial "PASS fnclass"
    assert_equal "$(stat sequences.templates)" 1
    at_least graphs.replays 10
    at_least layouts.at_first_launch 14
    no_failures
}

@test "function classes: copies of one kernel in other modules share a template's nodes" {
    ag "$H/fnclass" 40 4 31
    assert_success
    assert_output --partial "PASS fnclass"
    # 4 copies of attn, two steps each in turn, 40 steps: one template (not one per copy), its
    # attn nodes switched by exec updates; replays from step 2 on, but for the steps whose
    # graph the change in step 31 dropped (rebuilt at the next replay).
    assert_equal "$(stat sequences.templates)" 1
    at_least graphs.replays 33
    # (node by node or whole: which one the engine takes depends on their measured times)
    [ $(( $(fc exec_node_updates) + $(fc exec_updates) )) -ge 30 ] ||
        fail "the attn nodes did not change function"
    # the first values set for copies no graph holds dropped nothing; the change did
    assert_equal "$(stat cache.attr_drops)" 1
    assert_equal "$(stat cache.invalidations)" 0
    no_failures
}
