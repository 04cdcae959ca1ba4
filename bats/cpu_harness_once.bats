#!/usr/bin/env bats
# A cuBLAS loop timed once (G2: kernels/cublas_once.cu) on the fake driver (tests/harness/
# once.c): the region's calls on the legacy default stream learn a little, then rest, and
# nothing is ever held. What the library spends there is the program's loss, so the cold
# work it skips is checked here: the driver calls it does not make. Build first: make lib harness.

load harness

setup_file() { harness_require once pdl_stream_attr; }
setup() { harness_setup; }

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
