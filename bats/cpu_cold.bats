#!/usr/bin/env bats
# Cold work happens before the program's first launch: the loader binds every symbol we import
# at load time, and cuInit maps every page of our image in (interpose/warm.c), so that a first,
# perhaps timed, launch takes neither lazy symbol lookups nor page faults of ours.

setup() { load helpers; }

@test "every imported symbol is bound at load (BIND_NOW)" {
    run readelf -d "$LIB"
    assert_success
    assert_output --regexp "FLAGS.*BIND_NOW"
}

@test "after cuInit every page of the library is mapped (fake driver)" {
    [ -x "$BUILD/tests/resident" ] || skip "make progs first"
    run env LD_PRELOAD="$LIB" "$BUILD/tests/resident"
    [ "$status" -ne 77 ] || skip "$output"
    assert_success
    assert_output --regexp "mapped after cuInit: ([0-9]+) of \1 pages"
}

@test "the engine starts in cuInit, not in the first launch (fake driver)" {
    local h="$BUILD/harness/distinct"
    [ -x "$h" ] || skip "make harness first"
    run env LD_PRELOAD="$LIB" AUTOGRAPH_LOG=info FAKECUDA_TRACE=1 "$h" 1 1
    assert_success
    # our start comes between cuInit and the program's next driver call
    run awk '/call cuInit$/ && !i { i = NR; next } /: active \(/ && !a { a = NR }
             i && /fakecuda: call / && !n { n = NR }
             END { print (i && a && n && i < a && a < n) ? "in cuInit" : "not in cuInit" }' <<<"$output"
    assert_output "in cuInit"
}

@test "the first stream state's memory is made in cuInit, not in its first launch (fake driver)" {
    # its allocations in a launch found fresh heap pages: 3-6 us of page faults inside what
    # may be the program's timed region (G2's phase marks, H100 host). distinct 2 2: two
    # kernels twice on one stream, which then gets a state and learns
    local h="$BUILD/harness/distinct"
    [ -x "$h" ] || skip "make harness first"
    run env LD_PRELOAD="$LIB" AUTOGRAPH_STATS=1 "$h" 2 2
    assert_success
    assert_equal "$(stat streams.states)" 1
    assert_equal "$(stat streams.spares)" 2
    # and the tables its first learning launches make (the registry's, the layouts', the
    # sightings', uthash's table and buckets each) with their first entries: a page fault each
    # in G2's first learning launch and first segment close on the H100 host
    assert_equal "$(stat learning.spares)" 8
}

@test "cuInit rehearses the first launch's path, with no effect the program can see (fake driver)" {
    # the rehearsal reads what a watched launch reads, on a stream no program has; it makes no
    # state, sets no filter bit and calls no driver function. distinct 1 1: one kernel once,
    # so its launch is the process's first and must still be watched
    local h="$BUILD/harness/distinct"
    [ -x "$h" ] || skip "make harness first"
    run env LD_PRELOAD="$LIB" AUTOGRAPH_LOG=debug AUTOGRAPH_STATS=1 FAKECUDA_TRACE=1 "$h" 1 1
    assert_success
    run awk '/call cuInit$/ && !i { i = NR; next } /first launch.s path rehearsed/ && !r { r = NR }
             i && /fakecuda: call / && !n { n = NR }
             END { print (i && r && n && i < r && r < n) ? "in cuInit, no driver call" : "not" }' <<<"$output"
    assert_output "in cuInit, no driver call"
    run env LD_PRELOAD="$LIB" AUTOGRAPH_STATS=1 "$h" 1 1
    assert_success
    assert_equal "$(stat launches.watched)" 1
    assert_equal "$(stat streams.states)" 0
}

@test "cuInit makes the thread's counters, with the engine on or disabled, not its first launch (fake driver)" {
    # disabled, the first launch made them (a calloc, a key, a lock): C1 with
    # AUTOGRAPH_DISABLE=1 ran 0.818x of eager on the H200, the library on 0.994x
    local h="$BUILD/harness/distinct" d
    [ -x "$h" ] || skip "make harness first"
    for d in 0 1; do
        run env LD_PRELOAD="$LIB" AUTOGRAPH_DISABLE=$d AUTOGRAPH_LOG=debug FAKECUDA_TRACE=1 "$h" 1 1
        assert_success
        run awk '/call cuInit$/ && !i { i = NR; next } /counters made/ && !c { c = NR }
                 i && /fakecuda: call / && !n { n = NR }
                 END { print (i && c && n && i < c && c < n) ? "in cuInit" : "not in cuInit" }' <<<"$output"
        assert_output "in cuInit"
    done
}
