#!/usr/bin/env bats
# Pipelined replay on the GPU: a sequence cut into pieces (by the measured plan when the host
# works between launches, or every AUTOGRAPH_PIECE launches), each piece its own graph launch.
# The apps check their own results against a CPU model (result: OK) and print a checksum,
# which must equal the run without the library.

setup() {
    load helpers
    require_gpu
    export AUTOGRAPH_STATS=1 AUTOGRAPH_BENEFIT=always
    unset AUTOGRAPH_PIECE AUTOGRAPH_FAULT AUTOGRAPH_DISABLE AUTOGRAPH_PROFILE
}

no_failures() {
    local k
    for k in failures.build failures.update failures.launch failures.eager_launch; do
        assert_equal "$(s $k)" 0
    done
}

# replays_above N: more than N graph launches (a sequence replayed in pieces launches several
# graphs per iteration).
replays_above() {
    local r
    r="$(s graphs.replays)"
    [ "$r" != missing ] || fail "no graphs.replays in the report: $stderr"
    [ "$r" -gt "$1" ] || fail "graphs.replays $r, expected more than $1: $stderr"
}

# pieces_of N: every graph launch replayed exactly N launches.
pieces_of() {
    local r l
    r="$(s graphs.replays)" l="$(s launches.replayed)"
    [ "$r" -gt 0 ] || fail "no graph launches: $stderr"
    [ "$l" -eq $(( $1 * r )) ] || fail "launches.replayed $l in $r graph launches, not $1 each: $stderr"
}

@test "tiny --host-us=20: the measured plan cuts the sequence into pieces, identical results" {
    # 64 launches 20 us apart: the host takes ~1.3 ms per sequence, far more than a few graph
    # launches, so the plan makes several pieces once the launch costs are measured
    same_results tiny --iters=300 --host-us=20 --vary=1
    replays_above 0
    [ "$(s launches.replayed)" -gt 0 ] || fail "nothing replayed: $stderr"
    # more graph launches than the 310 iterations (warm-up included): pieces
    replays_above 310
    no_failures
}

@test "tiny --host-us=20, constant arguments: pieces, identical results" {
    same_results tiny --iters=300 --host-us=20
    replays_above 310
    no_failures
}

@test "tiny with AUTOGRAPH_PIECE=4: 16 pieces per iteration, identical results" {
    export AUTOGRAPH_PIECE=4
    same_results tiny --iters=300 --vary=1
    # 64 launches in pieces of 4: every graph launch replays 4, and most of the 310 iterations
    # are replayed (how many waited for the worker's 16 builds depends on the machine's load:
    # the twenty-fourth session's GPU tests in parallel replayed fewer than 280)
    pieces_of 4
    replays_above $(( 150 * 16 - 1 ))
    no_failures
    same_results tiny --iters=300
    pieces_of 4
    replays_above $(( 150 * 16 - 1 ))
    no_failures
}

@test "tiny with AUTOGRAPH_PIECE=5 and divergence in mid-sequence: identical results" {
    export AUTOGRAPH_PIECE=5
    same_results tiny --iters=300 --vary=1 --diverge-every=7
    replays_above 310
    [ "$(s flushes.divergence)" -ge 1 ] || fail "no divergence: $stderr"
    no_failures
}

@test "tiny with AUTOGRAPH_PIECE=4, no sync for 100 iterations: identical results" {
    export AUTOGRAPH_PIECE=4
    same_results tiny --iters=1000 --sync-every=100
    replays_above 0
    [ "$(s launches.replayed)" -gt 30000 ] || fail "launches.replayed $(s launches.replayed)"
    no_failures
}

# Its Ex launches carry the programmatic-serialization attribute (launch-only: not graphed), so
# what can be graphed are the short runs of plain launches between them.
@test "pdl_decode under the library: identical checksums (default plan and AUTOGRAPH_PIECE=4)" {
    same_results pdl_decode --iters=30
    export AUTOGRAPH_PIECE=4
    same_results pdl_decode --iters=30
    same_results pdl_decode --iters=30 --pdl=0
    no_failures
}

@test "solver under the library: identical checksums (default plan and AUTOGRAPH_PIECE=2)" {
    same_results solver --iters=200 --kernels=2
    export AUTOGRAPH_PIECE=2
    same_results solver --iters=200 --kernels=2
    same_results solver --iters=200 --kernels=1 --pinned=1
    no_failures
}
