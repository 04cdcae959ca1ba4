#!/usr/bin/env bats
# Eviction across streams on the CPU harness (tests/harness/evict.c): two streams, each with
# its own loop, under a graph limit that holds one loop's graph only (AUTOGRAPH_MAX_GRAPHS=1,
# or MAX_GRAPH_MEM=1M with loops of 300 launches). A stream that needs room evicts the least
# recently replayed graph of any stream, so each stream's phase replays as graphs; the program
# checks exact results after every iteration. Build first: make lib harness.
#
# SAN_BUILD (as in bats/cpu_sanitizers.bats): a ThreadSanitizer build (make san-build-thread)
# for the last test; it skips without one.

load harness

setup_file() { harness_require evict; }
setup() { harness_setup; }

# phase_replayed P WHO: phase P (of WHO: A, B or AB) ran kernels as graph nodes.
phase_replayed() {
    local v
    v="$(awk -v p="$1" -v w="$2" '$1 == "evict:" && $2 == "phase" && $3 == p && $4 == w {
             print $6 }' <<<"$output")"
    [ -n "$v" ] || fail "no line for phase $1 ($2)"
    [ "$v" -gt 0 ] || fail "phase $1 ($2): no kernel ran as a graph node (eager throughout)"
}

# Each phase's stream finds the cache full of the other stream's graph: it evicts it (before,
# only its own stream's graphs could go, and it stayed eager: graphs.cache_full).
phases_evict() {
    assert_success
    assert_output --partial "PASS evict"
    phase_replayed 0 A
    phase_replayed 1 B
    phase_replayed 2 A
    phase_replayed 3 B
    at_least graphs.evicted 3
    assert_equal "$(stat graphs.cache_full)" 0
    no_failures
}

@test "evict: MAX_GRAPHS=1, streams A and B in turns: each evicts the other's graph" {
    ag FAKECUDA_DELAY_US=0 AUTOGRAPH_MAX_GRAPHS=1 "$H/evict" phases 200 8
    phases_evict
    at_least graphs.built 4
}

@test "evict: MAX_GRAPH_MEM=1M, loops of 300 launches in turns: each evicts the other's graph" {
    # ~770 KB estimated per loop's graph (300 nodes): one fits in 1 MiB, two do not
    ag FAKECUDA_DELAY_US=0 AUTOGRAPH_MAX_GRAPH_MEM=1M "$H/evict" phases 40 300
    phases_evict
    # the same loops at half the length fit together: nothing is evicted
    ag FAKECUDA_DELAY_US=0 AUTOGRAPH_MAX_GRAPH_MEM=1M "$H/evict" phases 40 150
    assert_success
    assert_equal "$(stat graphs.evicted)" 0
    phase_replayed 1 B
}

@test "evict: another stream's template evicted in the middle of its occurrence (pieces out)" {
    # every iteration: A's first 2 pieces go out as graphs, B's build evicts A's template, A's
    # next piece is built again from its held launches (and evicts B's)
    ag FAKECUDA_DELAY_US=0 AUTOGRAPH_MAX_GRAPHS=1 AUTOGRAPH_PIECE=2 "$H/evict" midway 200 8
    assert_success
    assert_output --partial "PASS evict"
    phase_replayed 0 AB
    local r
    r="$(awk '$1 == "evict:" && $2 == "midway" && $3 == "rebuilt" { print $4 }' <<<"$output")"
    [ -n "$r" ] && [ "$r" -ge 150 ] || fail "A rebuilt mid-occurrence in ${r:-?} iterations of 200"
    at_least graphs.evicted 300
    no_failures
    # and with random delays on the fake's streams (pieces still running when evicted)
    ag FAKECUDA_DELAY_US=50 AUTOGRAPH_MAX_GRAPHS=1 AUTOGRAPH_PIECE=2 "$H/evict" midway 60 8
    assert_success
    assert_output --partial "PASS evict"
    at_least graphs.evicted 60
    no_failures
}

@test "evict: A and B on two threads, in turns and at once (no deadlock, exact results)" {
    local i
    for i in 1 2 3 4 5; do
        ag FAKECUDA_DELAY_US=0 AUTOGRAPH_MAX_GRAPHS=1 "$H/evict" threads 200 8
        assert_success
        assert_output --partial "PASS evict"
        phase_replayed 0 A
        phase_replayed 1 B
        at_least graphs.evicted 1
        no_failures
    done
    ag FAKECUDA_DELAY_US=20 AUTOGRAPH_MAX_GRAPHS=1 AUTOGRAPH_PIECE=3 "$H/evict" threads 100 8
    assert_success
    assert_output --partial "PASS evict"
    phase_replayed 1 B
    no_failures
}

@test "evict: A's stream destroyed and created again while B's thread evicts (templates freed)" {
    local d
    for d in 0 20; do
        # (how often B meets A's graph depends on the threads' timing: exact results and no
        # failure are what is checked here; evictions are the other tests')
        ag FAKECUDA_DELAY_US=$d AUTOGRAPH_MAX_GRAPHS=1 "$H/evict" churn 400 8
        assert_success
        assert_output --partial "PASS evict"
        phase_replayed 0 AB
        no_failures
    done
}

@test "evict: two threads under ThreadSanitizer (SAN_BUILD)" {
    local san="${SAN_BUILD:-}" rt="${SAN_RUNTIME:-}"
    [ -n "$san" ] && [ -e "$san/harness/evict" ] && [ -e "$san/libautograph.so" ] ||
        skip "SAN_BUILD not set or without harness/evict: make san-build-thread"
    [ -n "$rt" ] || rt="$(ldd "$san/libautograph.so" | awk '$1 ~ /^libtsan\.so/ { print $3 }')"
    [ -e "${rt:-/nonexistent}" ] || skip "$san/libautograph.so: not a ThreadSanitizer build"
    local supp="$BATS_TEST_DIRNAME/../tests/fuzz/tsan.supp" mode
    for mode in threads churn; do
        run timeout 300 env LD_PRELOAD="$rt:$san/libautograph.so" \
            TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:exitcode=66:suppressions=$supp}" \
            AUTOGRAPH_MIN_REPEATS=2 AUTOGRAPH_BENEFIT=always AUTOGRAPH_MAX_HOLD_US=10000000 \
            AUTOGRAPH_STATS=1 AUTOGRAPH_MAX_GRAPHS=1 AUTOGRAPH_PIECE=2 FAKECUDA_DELAY_US=10 \
            "$san/harness/evict" $mode 200 8
        assert_success
        refute_output --partial "Sanitizer"
        assert_output --partial "PASS evict"
        [ $mode = churn ] || at_least graphs.evicted 1
    done
}
