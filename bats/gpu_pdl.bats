#!/usr/bin/env bats
# Issue 13, items 1 and 3, on the GPU: launches with programmatic stream serialisation
# (programmatic dependent launch) are replayed as kernel nodes behind programmatic edges, and
# launches whose grid changes every iteration are replayed with their nodes updated; results
# are identical to the runs without the library.

setup() {
    load helpers
    require_gpu
    # deterministic graphing for correctness tests, built where they are asked (replay counts
    # do not depend on how fast the worker builds on a GPU shared with other tests); the
    # default policy and the worker are tested separately
    export AUTOGRAPH_STATS=1 AUTOGRAPH_BENEFIT=always AUTOGRAPH_WORKER=0
}

graphed() { # at least one graph built and replayed
    [ "$(s graphs.built)" -ge 1 ] || fail "no graph built: $stderr"
    [ "$(s graphs.replays)" -ge 1 ] || fail "no replay: $stderr"
    [ "$(s launches.replayed)" -gt 0 ] || fail "no launch replayed: $stderr"
}

no_failures() {
    assert_equal "$(s failures.build)" 0
    assert_equal "$(s failures.update)" 0
    assert_equal "$(s failures.launch)" 0
    assert_equal "$(s failures.eager_launch)" 0
}

@test "pdl_decode: PDL launches are graphed, identical checksum" {
    # 290 launches per step, most of them with programmatic stream serialisation on
    same_results pdl_decode --pdl=1 --iters=100
    graphed
    no_failures
    assert_equal "$(s launches.ungraphable)" 0
    # every step but the first few (learning, the build) is replayed: 290 launches each
    [ "$(s launches.replayed)" -ge $((290 * 80)) ] || fail "too few launches replayed: $stderr"
}

@test "pdl_decode: the attribute present with value 0 (no PDL), identical checksum" {
    same_results pdl_decode --pdl=0 --iters=100
    graphed
    no_failures
    assert_equal "$(s launches.ungraphable)" 0
}

@test "pdl_decode: pieces (pipelined replay) begin with a PDL launch: identical checksum" {
    # pieces of 7 launches: most begin with a serialised launch, which has no edge there
    export AUTOGRAPH_PIECE=7
    same_results pdl_decode --pdl=1 --iters=60
    graphed
    no_failures
}

@test "pdl_decode: the application's own captured graph (PDL edges) passes through" {
    same_results pdl_decode --pdl=1 --mode=graph --iters=50
    assert_equal "$(s failures.build)" 0
}

@test "grow_grid: a grid that grows every iteration is one template, nodes updated in place" {
    same_results grow_grid --iters=300
    graphed
    no_failures
    [ "$(s graphs.replays)" -ge 250 ] || fail "too few replays: $stderr"
    # every replay needs the attention node's new grid
    [ $(( $(s updates.per_node) + $(s updates.whole_graph) )) -ge 250 ] || fail "$stderr"
}
