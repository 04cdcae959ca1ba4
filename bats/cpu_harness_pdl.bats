#!/usr/bin/env bats
# Programmatic dependent launch and launch dimensions in graphs, on the fake driver: launches
# with programmatic stream serialisation become kernel nodes behind a programmatic edge
# (tests/harness/pdl.c), launch-only attributes stay eager, node attributes are set on nodes,
# and launches whose grid, block or shared memory change every iteration are one template
# whose exec nodes are updated (tests/harness/grid.c); launches on a stream with an access
# policy window or memory sync domain are not graphed (tests/harness/pdl_stream_attr.c). Each program checks its own results;
# the tests also check libautograph's statistics and the fake's counters. Build first:
# make lib harness.

load harness

setup_file() { harness_require pdl grid pdl_stream_attr; }
setup() { harness_setup; }

# runs of PDL launches behind a programmatic edge, as pdl.c counted them
prog() {
    awk '$1 == "pdl:" && $2 == "programmatic" { v = $3 } END { print v }' <<<"$output"
}

@test "pdl: without the library every launch is eager, none behind a programmatic edge" {
    run timeout 60 "$H/pdl" 20
    assert_success
    assert_output --partial "PASS pdl"
    assert_equal "$(prog)" 0
    assert_equal "$(fc graph_launches)" 0
}

@test "pdl: serialised launches are graphed behind programmatic edges from the node before" {
    # one piece: the three launches with serialisation on follow another node of the graph
    ag AUTOGRAPH_PIECE=100 "$H/pdl" 60
    assert_success
    assert_output --partial "PASS pdl"
    assert_equal "$(stat launches.ungraphable)" 0
    no_failures
    local replays built
    replays="$(stat graphs.replays)"
    built="$(stat graphs.built)"
    [ "$replays" -ge 50 ] || fail "only $replays replays"
    # one edge per serialised node of each graph built (none for the attribute set to 0)...
    assert_equal "$(fc programmatic_edges)" "$((3 * built))"
    # ...and every serialised launch of every replay ran behind it, no other launch did
    assert_equal "$(prog)" "$((3 * replays))"
    # the priority next to the serialisation was set on its node (serialisation is not an
    # attribute of a node: the fake refuses it, and the build would fail)
    [ "$(fc node_set_attributes)" -ge "$built" ] || fail "node attributes not set"
}

@test "pdl: the first launch of a piece has no programmatic edge (the graph launch orders it)" {
    # pieces of two launches: serialised launches 2 and 4 begin pieces, only launch 1 follows
    # a node of its own graph
    ag AUTOGRAPH_PIECE=2 "$H/pdl" 60
    assert_success
    assert_output --partial "PASS pdl"
    no_failures
    local replays
    replays="$(stat graphs.replays)"
    [ "$replays" -ge 100 ] || fail "too few replays"
    [ "$(fc programmatic_edges)" -ge 1 ] || fail "no programmatic edge"
    # launch 1 behind its edge in (almost) every occurrence, launches 2 and 4 never: fewer
    # runs behind an edge than piece graphs launched
    [ "$(prog)" -ge 50 ] || fail "serialised launches did not run behind edges"
    [ "$(prog)" -lt "$replays" ] || fail "$(prog) runs behind edges in $replays piece replays"
}

@test "pdl: programmatic and launch-completion events stay eager, the rest is graphed" {
    local mode
    for mode in 1 2; do
        ag AUTOGRAPH_PIECE=100 "$H/pdl" 60 "$mode"
        assert_success
        assert_output --partial "PASS pdl"
        no_failures
        # launch 4 of every iteration passes through; launches 0-3 are still replayed. In
        # iteration 0 the stream has no state yet (six distinct kernels: all watched, cache/
        # watch.h), so launch 4 is counted ungraphable in the other 59
        assert_equal "$(stat launches.watched)" 6
        assert_equal "$(stat launches.ungraphable)" 59
        [ "$(stat graphs.replays)" -ge 50 ] || fail "mode $mode: nothing replayed"
        assert_equal "$(prog)" "$((2 * $(stat graphs.replays)))"
    done
}

@test "pdl: preferred carveout and cluster dimension are node attributes: graphed" {
    ag AUTOGRAPH_PIECE=100 "$H/pdl" 60 3
    assert_success
    assert_output --partial "PASS pdl"
    no_failures
    assert_equal "$(stat launches.ungraphable)" 0
    [ "$(stat graphs.replays)" -ge 50 ] || fail "nothing replayed"
    # the priority, the carveout and the cluster dimension: three node attributes per build
    assert_equal "$(fc node_set_attributes)" "$((3 * $(stat graphs.built)))"
}

@test "grid: a growing grid, changing block and shared memory: one template, nodes updated" {
    ag "$H/grid" 80
    assert_success
    assert_output --partial "PASS grid"
    no_failures
    assert_equal "$(stat sequences.templates)" 1
    [ "$(stat graphs.replays)" -ge 70 ] || fail "only $(stat graphs.replays) replays"
    # every replay changes the first launch's grid (and half of them the second's block):
    # each replay but the one that built the graph needs an update, none goes without
    assert_equal "$(stat updates.none)" 0
    assert_equal "$(($(stat updates.per_node) + $(stat updates.whole_graph)))" \
                 "$(($(stat graphs.replays) - $(stat graphs.built)))"
    [ "$(($(fc exec_node_updates) + $(fc exec_updates)))" -ge 70 ] || fail "too few exec updates"
    assert_equal "$(stat launches.ungraphable)" 0
}

@test "grid: pieces of one launch updated from their own held dimensions" {
    ag AUTOGRAPH_PIECE=1 "$H/grid" 60
    assert_success
    assert_output --partial "PASS grid"
    no_failures
    [ "$(stat graphs.replays)" -ge 200 ] || fail "only $(stat graphs.replays) replays"
}

@test "stream attributes: launches on a stream with a window or sync domain are not graphed" {
    # 4 phases of 20 iterations x 8 launches run with a stream attribute that kernel nodes
    # would not inherit (set, set before the first launch, copied): exactly those are eager;
    # the phases after each reset (or a copy of default attributes) are graphed again. Each of
    # the streams A, B, C is only watched in its first iteration (8 distinct kernels: cache/
    # watch.h), and B's first phase is one of the four: 8 of its launches pass watched, not
    # counted as ungraphable
    ag "$H/pdl_stream_attr"
    assert_success
    assert_output --partial "PASS pdl_stream_attr"
    no_failures
    assert_equal "$(stat launches.watched)" 24
    assert_equal "$(stat launches.ungraphable)" 632
    [ "$(stat graphs.replays)" -ge 80 ] || fail "only $(stat graphs.replays) replays"
}
