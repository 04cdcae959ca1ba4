#!/usr/bin/env bats
# A cuBLAS loop timed once (G2: kernels/cublas_once.cu) on the fake driver (tests/harness/
# once.c): the region's calls on the legacy default stream learn a little, then rest, and
# nothing is ever held. What the library spends there is the program's loss, so the cold
# work it skips is checked here: the driver calls it does not make, the exit handler it does
# not register. Build first: make lib harness.

load harness

setup_file() { harness_require once loop8 distinct pdl_stream_attr; }
setup() { harness_setup; }

@test "once: exact; the resting legacy stream's calls do not ask the driver for the context" {
    # 31 sgemm (a pair of kernels and an event record each) plus two events: 95 calls on the
    # legacy stream. While its state rests and is the only context's, the shortcut (cache/
    # rest.h) answers for it: only learning launches and the ordering points before the rest
    # ask cuCtxGetCurrent (9 here; 98 without the shortcut, 11 while a learning launch that
    # queued a layout probe asked which context the worker was to make it in)
    run timeout "${AG_TIMEOUT:-120}" env LD_PRELOAD="$LIB" AUTOGRAPH_STATS=1 "$H/once" 30
    assert_success
    assert_output --partial "PASS once"
    at_least launches.learning_rested 50
    assert_equal "$(stat launches.held)" 0
    [ "$(fc ctx_current_gets)" -le 9 ] || fail "cuCtxGetCurrent asked $(fc ctx_current_gets) times"
}

@test "once: a function whose layout probe is awaited is not looked up in the shared table at every launch" {
    # 300 sgemm: the two kernels' probes wait for the worker (woken at a wait, and the region
    # has none) through all of the learning launches; each thread caches the placeholder, so the
    # table (and its lock) is asked twice per function: at its first and second sighting (64
    # lookups for 66 learning launches without that cache)
    run timeout "${AG_TIMEOUT:-120}" env LD_PRELOAD="$LIB" AUTOGRAPH_STATS=1 AUTOGRAPH_WORKER=1 \
        "$H/once" 300
    assert_success
    assert_output --partial "PASS once"
    at_least fate.eager_learning 60
    [ "$(stat layouts.table_lookups)" -le 4 ] ||
        fail "the layout table was asked $(stat layouts.table_lookups) times"
}

@test "once: a stream's attributes are asked of the driver only once some stream's were set" {
    # streams are made without a window or domain: until cuStreamSetAttribute or
    # cuStreamCopyAttributes is called, a state's first learning launch asks nothing (stream.c)
    run timeout "${AG_TIMEOUT:-120}" env LD_PRELOAD="$LIB" AUTOGRAPH_STATS=1 "$H/once" 30
    assert_success
    assert_output --partial "PASS once"
    assert_equal "$(fc stream_attr_gets)" 0
    # with attributes set (one of them before the stream's first launch), they are read, and
    # those launches are not graphed (cpu_harness_pdl.bats counts them exactly)
    ag "$H/pdl_stream_attr"
    assert_success
    assert_output --partial "PASS pdl_stream_attr"
    [ "$(fc stream_attr_gets)" -ge 2 ] || fail "attributes read $(fc stream_attr_gets) times"
    at_least launches.ungraphable 600
}

@test "once: no exit handler is registered where nothing is held and the worker never woke" {
    # glibc's atexit, cold, took 1.1-2.6 us of G2's first learning launch on the H100 host
    run timeout "${AG_TIMEOUT:-120}" env LD_PRELOAD="$LIB" AUTOGRAPH_STATS=1 AUTOGRAPH_LOG=debug \
        AUTOGRAPH_WORKER=1 "$H/once" 30
    assert_success
    assert_output --partial "PASS once"
    refute_output --partial "exit handler registered"
    assert_equal "$(stat worker.wakes_ordering)" 0
    assert_equal "$(stat worker.wakes_launch)" 0
    # the statistics are written all the same (by the library's destructor)
    at_least launches.learning_rested 50
}

@test "exit handler: registered before the first hold" {
    ag AUTOGRAPH_LOG=debug "$H/loop8" 20
    assert_success
    assert_output --partial "PASS loop8"
    assert_output --partial "exit handler registered"
    at_least launches.held 8
}

@test "exit handler: registered before the worker is first woken, even with nothing held" {
    # the worker's layout probes call the driver: an exit must stop it first (cache/life.c).
    # distinct 4 3: iteration 1 learns, 2 queues the probes, its synchronisation wakes the worker
    run timeout "${AG_TIMEOUT:-120}" env LD_PRELOAD="$LIB" AUTOGRAPH_STATS=1 AUTOGRAPH_LOG=debug \
        AUTOGRAPH_WORKER=1 "$H/distinct" 4 3 legacy spaced
    assert_success
    assert_output --partial "PASS distinct"
    at_least worker.wakes_ordering 1
    assert_equal "$(stat launches.held)" 0
    assert_output --partial "exit handler registered"
}

@test "once: a call that waits before the first launch rehearses the launch path again; none after" {
    # G2 synchronises right before its warm-up sgemm: what cuInit left in the CPU's caches is
    # gone by then, so the rehearsal runs again there (order.c); after the first launch, the
    # synchronisation before the region (and every later one) does not
    run timeout "${AG_TIMEOUT:-120}" env LD_PRELOAD="$LIB" AUTOGRAPH_LOG=debug FAKECUDA_TRACE=1 \
        "$H/once" 3
    assert_success
    assert_output --partial "PASS once"
    # (our wrapper logs before the fake driver logs the call: the rehearsal line comes first)
    run awk '/first launch.s path rehearsed/ { r++; if (l) late++; if (r == 2) w = 1; next }
             w == 1 { w = $0 ~ /call cuCtxSynchronize$/ ? 2 : 3 }
             /fakecuda: call cuLaunchKernel$/ && !l { l = NR }
             END { print r, late + 0, w == 2 ? "at the synchronisation" : "not" }' <<<"$output"
    assert_output "2 0 at the synchronisation"
}
