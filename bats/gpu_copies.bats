#!/usr/bin/env bats
# Issue 13, item 2: async memsets and copies as graph nodes on the GPU. The solver sample app
# (kernels/solver.cu: memset + kernel + 8-byte read-back + stream sync per iteration) gives the
# same checksum with and without the library; with a pinned read-back the memset and the kernel
# are one graph that is replayed, the read-back issued right after it (with
# AUTOGRAPH_READBACK_NODES=1 the whole iteration is one graph, the read-back a memcpy node).

setup() {
    load helpers
    require_gpu
    # graphs built where they are asked, so that replay counts do not depend on how fast the
    # worker builds on a GPU shared with other tests (gpu_engine tests the worker)
    export AUTOGRAPH_STATS=1 AUTOGRAPH_BENEFIT=always AUTOGRAPH_WORKER=0
    unset AUTOGRAPH_COPY_NODES
}

# pinned_solver RECORDS: the pinned solver is identical with the library, its graph built once
# and replayed, with RECORDS memsets, kernels and copies replayed at least, no graph call
# failing, and the kernel's input and output (they swap every iteration) in two execs taking
# turns
pinned_solver() {
    same_results solver --pinned=1 --iters=300
    [ "$(s graphs.built)" -ge 1 ] || fail "no graph built: $stderr"
    [ "$(s graphs.replays)" -ge 250 ] || fail "too few replays: $stderr"
    [ "$(s launches.replayed)" -ge "$1" ] || fail "fewer than $1 records replayed: $stderr"
    [ "$(s failures.build)" -eq 0 ] || fail "a graph failed to build: $stderr"
    [ "$(s failures.update)" -eq 0 ] || fail "an update failed: $stderr"
    [ "$(s graphs.variants)" -ge 1 ] || fail "no second exec: $stderr"
    [ "$(s updates.variant)" -ge 240 ] || fail "too few replays of the second exec: $stderr"
}

@test "solver, pinned read-back: identical results, memset + kernel replayed, the read-back after" {
    # memset + kernel in the graph (two records per replayed iteration), the read-back issued
    # right after it (DESIGN.md, "Read-backs at the end")
    pinned_solver 500
    [ "$(s copies.after_graph)" -ge 250 ] || fail "read-backs not issued after the graph: $stderr"
}

@test "solver, pinned read-back, READBACK_NODES=1: identical results, the whole iteration replayed" {
    # memset + kernel + read-back: three records per replayed iteration
    AUTOGRAPH_READBACK_NODES=1 pinned_solver 750
    assert_equal "$(s copies.after_graph)" 0
}

@test "solver, two kernels, pinned read-back: identical results, replayed" {
    same_results solver --pinned=1 --kernels=2 --iters=300
    [ "$(s graphs.replays)" -ge 250 ] || fail "too few replays: $stderr"
    [ "$(s failures.build)" -eq 0 ] || fail "a graph failed to build: $stderr"
}

@test "solver, pageable read-back (default COPY_NODES=pinned): identical results" {
    same_results solver --iters=300
    [ "$(s failures.build)" -eq 0 ] || fail "a graph failed to build: $stderr"
}

@test "solver, pageable read-back, COPY_NODES=all: identical results (graphed if accepted)" {
    # Whether the driver takes a memcpy node into pageable memory decides whether this
    # replays; either way the results must be exact.
    AUTOGRAPH_COPY_NODES=all same_results solver --iters=300
    echo "replays: $(s graphs.replays), build failures: $(s failures.build)"
}

@test "solver, COPY_NODES=off: identical results, no copy in any graph" {
    AUTOGRAPH_COPY_NODES=off same_results solver --pinned=1 --iters=300
    [ "$(s launches.replayed)" -le "$(s graphs.replays)" ] ||
        fail "more than one record per replay with copies off: $stderr"
}
