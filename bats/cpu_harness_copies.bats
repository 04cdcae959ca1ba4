#!/usr/bin/env bats
# Async memsets and copies as graph nodes (issue 13, item 2), on the fake driver: the
# iterative-solver loop (memset + kernel + read-back + sync) becomes one graph, its read-back
# issued right after it (or, with AUTOGRAPH_READBACK_NODES=1, a node of it); values that change
# every iteration (memset values, pointers) reach the nodes; the read-back is there when the
# next ordering point returns; pageable, pinned and managed memory per AUTOGRAPH_COPY_NODES.
# Build first: make lib harness.

load harness

setup_file() { harness_require copies; }
setup() { harness_setup; }

@test "copies: every scenario passes without libautograph" {
    local a
    for a in "solver pinned" "solver pageable" "solver managed" "solver pinned 40 diverge" \
             "solver pinned 40 legacy" "dtod" "htod pageable" "htod pinned" "freed"; do
        run timeout 60 "$H/copies" $a
        assert_success
        assert_output --partial "PASS copies"
    done
}

@test "solver loop, pinned read-back: memset + kernel one graph, the read-back right after it" {
    ag "$H/copies" solver pinned 40
    assert_success
    assert_output --partial "PASS copies solver"
    # learned as in the test below; the read-back ends the sequence, so it is no node: it goes
    # out eagerly after each replay of the memset + kernel graph
    assert_equal "$(stat graphs.built)" 1
    assert_equal "$(stat graphs.replays)" 36
    assert_equal "$(fc memset_nodes_added)" 1
    assert_equal "$(fc memcpy_nodes_added)" 0
    assert_equal "$(fc graph_copies_executed)" 36
    assert_equal "$(fc graph_kernels_executed)" 36
    assert_equal "$(stat copies.after_graph)" 36
    [ $(( $(stat updates.per_node) + $(stat updates.whole_graph) )) -eq 35 ] ||
        fail "not every replay after the first was an update"
    no_failures
}

@test "solver loop, pinned read-back, READBACK_NODES=1: memset + kernel + DtoH is one graph, values updated" {
    ag env AUTOGRAPH_READBACK_NODES=1 "$H/copies" solver pinned 40
    assert_success
    assert_output --partial "PASS copies solver"
    # the stream has no state until its kernel repeats (cache/watch.h): iteration 0 is only
    # watched (its memset and copy are plain ordering points), iteration 1 is learned from its
    # kernel on; learned from iterations 2 and 3, replayed in the other 36 as one 3-node graph
    assert_equal "$(stat launches.watched)" 1
    assert_equal "$(stat graphs.built)" 1
    assert_equal "$(stat graphs.replays)" 36
    assert_equal "$(fc memset_nodes_added)" 1
    assert_equal "$(fc memcpy_nodes_added)" 1
    assert_equal "$(fc graph_copies_executed)" 72
    assert_equal "$(fc graph_kernels_executed)" 36
    # every iteration has other pointers and memset values: every replay updated the exec
    [ $(( $(fc exec_copy_node_updates) + $(fc copy_node_set_params) )) -ge 36 ] ||
        fail "memset/memcpy node parameters were not updated"
    [ $(( $(stat updates.per_node) + $(stat updates.whole_graph) )) -eq 35 ] ||
        fail "not every replay after the first was an update"
    no_failures
}

@test "solver loop, pageable read-back: not a node by default, a node with COPY_NODES=all" {
    ag "$H/copies" solver pageable 40
    assert_success
    assert_output --partial "PASS copies solver"
    assert_equal "$(fc memcpy_nodes_added)" 0
    assert_equal "$(fc memset_nodes_added)" 1 # memset + kernel still are one graph
    no_failures
    ag env AUTOGRAPH_COPY_NODES=all AUTOGRAPH_READBACK_NODES=1 "$H/copies" solver pageable 40
    assert_success
    assert_output --partial "PASS copies solver"
    assert_equal "$(fc memcpy_nodes_added)" 1
    assert_equal "$(stat graphs.replays)" 36 # as in the pinned test above
    assert_equal "$(fc graph_copies_executed)" 72
    no_failures
}

@test "solver loop, managed d_sum: never a node, exact results" {
    local m
    for m in pinned all; do
        ag env AUTOGRAPH_COPY_NODES=$m "$H/copies" solver managed 40
        assert_success
        assert_output --partial "PASS copies solver"
        assert_equal "$(fc memset_nodes_added)" 0
        assert_equal "$(fc memcpy_nodes_added)" 0
    done
}

@test "COPY_NODES=off: memsets and copies stay ordering points" {
    ag env AUTOGRAPH_COPY_NODES=off "$H/copies" solver pinned 40
    assert_success
    assert_output --partial "PASS copies solver"
    assert_equal "$(fc memset_nodes_added)" 0
    assert_equal "$(fc memcpy_nodes_added)" 0
    assert_equal "$(stat graphs.replays)" 0
}

@test "solver loop with divergence: held memsets and copies go out eagerly, in order" {
    ag "$H/copies" solver pinned 40 diverge
    assert_success
    assert_output --partial "PASS copies solver"
    [ "$(stat flushes.divergence)" -ge 1 ] || fail "no divergence flush"
    [ "$(stat launches.flushed_eager)" -ge 2 ] || fail "nothing held went out eagerly"
    [ "$(stat graphs.replays)" -ge 30 ] || fail "too few replays"
    no_failures
}

@test "solver loop on the legacy default stream: one graph, exact results" {
    ag "$H/copies" solver pinned 40 legacy
    assert_success
    assert_output --partial "PASS copies solver"
    assert_equal "$(stat graphs.replays)" 36 # iterations 0 and 1 watched, as on a created stream
    assert_equal "$(fc memcpy_nodes_added)" 0
    assert_equal "$(stat copies.after_graph)" 36
    no_failures
}

@test "solver loop in pieces of 2 (pipelined replay across memset/copy records)" {
    ag env AUTOGRAPH_PIECE=2 "$H/copies" solver pinned 40
    assert_success
    assert_output --partial "PASS copies solver"
    [ "$(fc graph_copies_executed)" -ge 60 ] || fail "copies not replayed"
    no_failures
}

@test "device-to-device, memsetD8/D16, cuMemcpyAsync, _ptsz entry point: one graph" {
    ag "$H/copies" dtod 40
    assert_success
    assert_output --partial "PASS copies dtod"
    # the copies before the kernel are learned once the kernel repeated (iteration 1): seen in
    # iterations 2 and 3, replayed in the other 36: three copies each in the graph, and the two
    # read-backs that end the iteration right after it
    assert_equal "$(stat graphs.built)" 1
    assert_equal "$(stat graphs.replays)" 36
    assert_equal "$(fc memset_nodes_added)" 2
    assert_equal "$(fc memcpy_nodes_added)" 1
    assert_equal "$(fc graph_copies_executed)" 108
    assert_equal "$(stat copies.after_graph)" 72
    no_failures
}

@test "HtoD from pageable memory is never held, even with COPY_NODES=all" {
    local m
    for m in pinned all; do
        ag env AUTOGRAPH_COPY_NODES=$m AUTOGRAPH_READBACK_NODES=1 "$H/copies" htod pageable 40
        assert_success
        assert_output --partial "PASS copies htod"
        # only the read-back into pinned memory is a node
        assert_equal "$(fc memcpy_nodes_added)" 1
    done
}

@test "pageable memory that the driver calls host memory (HMM) is still never held" {
    ag env FAKECUDA_HMM=1 AUTOGRAPH_COPY_NODES=all AUTOGRAPH_READBACK_NODES=1 "$H/copies" htod pageable 40
    assert_success
    assert_output --partial "PASS copies htod"
    assert_equal "$(fc memcpy_nodes_added)" 1
    ag env FAKECUDA_HMM=1 "$H/copies" solver pageable 40
    assert_success
    assert_output --partial "PASS copies solver"
    assert_equal "$(fc memcpy_nodes_added)" 0
}

@test "HtoD from pinned memory is held: a node, and the read-back too with READBACK_NODES=1" {
    ag "$H/copies" htod pinned 40
    assert_success
    assert_output --partial "PASS copies htod"
    assert_equal "$(fc memcpy_nodes_added)" 1
    assert_equal "$(stat graphs.replays)" 36 # the HtoD copy learned from iteration 2 on
    assert_equal "$(stat copies.after_graph)" 36
    no_failures
    ag env AUTOGRAPH_READBACK_NODES=1 "$H/copies" htod pinned 40
    assert_success
    assert_output --partial "PASS copies htod"
    assert_equal "$(fc memcpy_nodes_added)" 2
    assert_equal "$(stat graphs.replays)" 36
    no_failures
}

@test "a failing memcpy node update sends the piece eagerly, results stay exact" {
    ag env FAKECUDA_FAIL=cuGraphExecMemcpyNodeSetParams:2 AUTOGRAPH_READBACK_NODES=1 "$H/copies" solver pinned 40
    assert_success
    assert_output --partial "PASS copies solver"
    [ "$(stat failures.update)" -ge 1 ] || fail "no update failure injected"
}

@test "a read-back issued after its graph that the driver refuses: the next call returns the error" {
    # the 30th read-back is one issued right after a replay: reported done when held, refused
    # when it went out, so the iteration's ordering point returns the error (eagerly the copy
    # call itself would have)
    ag env FAKECUDA_FAIL=cuMemcpyDtoHAsync_v2:30 "$H/copies" solver pinned 40
    assert_failure
    assert_output --partial "held launch of [memcpyDtoH pinned<-device] failed on flush"
    assert_output --regexp "FAIL: .*(cuEventRecord|cuStreamSynchronize).* returned 999"
    run timeout 60 env FAKECUDA_FAIL=cuMemcpyDtoHAsync_v2:30 "$H/copies" solver pinned 40
    assert_failure
    assert_output --regexp "FAIL: .*cuMemcpyDtoHAsync_v2.* returned 999"
}

# freed SCENARIO [ENV...]: copies SCENARIO 100 with the worker (and the settings ENV), until as
# many iterations ran from graphs as
# not (HX_SETTLE=1: how many go out eagerly while the worker tries depends on when it runs, 79
# of 100 replayed beside another test suite, 93 alone, 71 of 400 under heavier load). The
# refusal is one refused copy, no failure: every launch is learned, issued while the worker
# built, or replayed -- never turned off.
freed() {
    local scenario=$1
    shift
    ag env AUTOGRAPH_WORKER=1 HX_SETTLE=1 "$@" "$H/copies" "$scenario" 100
    assert_success
    assert_output --partial "PASS copies $scenario"
    assert_equal "$(stat worker.copy_refused)" 1
    assert_equal "$(stat failures.build)" 0
    local n r
    n=$(stat launches.cuLaunchKernel) r=$(stat fate.replayed)
    [ "$r" -ge 50 ] && [ $((2 * r)) -ge "$n" ] || fail "too few replays: $r of $n"
    assert_equal $(( r + $(stat fate.eager_learning) + $(stat fate.building) )) "$n"
    no_failures
}

@test "a copy node the driver refuses the worker (its memory freed meanwhile) is built where held" {
    # MAGMA's pattern: allocate, memset, kernel, read back, sync, free, every iteration; the
    # fake's hook makes the worker add its memset node after the free, which the driver refuses
    freed freed
}

@test "a graph with a copy node whose instantiation the driver refuses the worker (memory freed meanwhile) is built where held" {
    # the hook holds the worker's instantiation until the iteration's free instead: the memset
    # node was added while its memory lived, the instantiation is refused (Thrust's temporaries
    # on the H100)
    freed freed_late
}

@test "the worker's requests for a template's other pieces, refused after its first refusal, are no failure either" {
    # two memsets and kernels an iteration, in pieces of 2: the second piece's request is queued
    # while the worker waits in the hook, and its memset node is refused too once it runs (the
    # memory freed); so is the read-back's piece. One refused copy, no failure
    freed freed_two AUTOGRAPH_PIECE=2
}
