#!/usr/bin/env bats
# The library itself (not only `autograph config`) reads every option once: a garbage value
# gives exactly one warning naming the variable and the default, and the program runs on with
# the default. Run against the fake driver.

setup() {
    load helpers
    [ -x "$BUILD/harness/loop8" ] || skip "harness not built (make harness)"
}

garbage_case() { # NAME GARBAGE DEFAULT
    run --separate-stderr env LD_PRELOAD="$LIB" "AUTOGRAPH_$1=$2" "$BUILD/harness/loop8"
    assert_success
    assert_output --partial "PASS"
    warnings=$(grep -c '^autograph\[[0-9]*\]: warning:' <<<"$stderr" || true)
    assert_equal "$warnings" 1
    assert_equal "$(grep '^autograph\[[0-9]*\]: warning:' <<<"$stderr" | sed 's/^autograph\[[0-9]*\]/autograph/')" \
        "autograph: warning: invalid AUTOGRAPH_$1=\"$2\"; using the default $3"
}

@test "library: DISABLE garbage" { garbage_case DISABLE maybe 0; }
@test "library: MIN_REPEATS garbage" { garbage_case MIN_REPEATS -2 3; }
@test "library: MAX_NODES garbage" { garbage_case MAX_NODES 99999 1024; }
@test "library: MAX_GRAPHS garbage" { garbage_case MAX_GRAPHS many 512; }
@test "library: MAX_GRAPH_MEM garbage" { garbage_case MAX_GRAPH_MEM -4G 256M; }
@test "library: MAX_HOLD_US garbage" { garbage_case MAX_HOLD_US 0 2000; }
@test "library: LOG garbage" { garbage_case LOG loud warn; }
@test "library: STATS garbage" { garbage_case STATS yes 0; }
@test "library: ALLOW garbage" { garbage_case ALLOW 'a,,b' '""'; }
@test "library: DENY garbage" { garbage_case DENY ',' '""'; }
@test "library: BENEFIT garbage" { garbage_case BENEFIT sometimes measure; }
@test "library: FAULT garbage" { garbage_case FAULT explode:1 '""'; }

@test "library: valid values of every option are taken silently and act" {
    # (WORKER=0: graphs built where they are first replayed, so that a loaded machine, the
    # worker late, still builds one in this short run)
    run --separate-stderr env LD_PRELOAD="$LIB" AUTOGRAPH_MIN_REPEATS=2 AUTOGRAPH_MAX_NODES=64 \
        AUTOGRAPH_MAX_GRAPHS=8 AUTOGRAPH_MAX_GRAPH_MEM=64M AUTOGRAPH_MAX_HOLD_US=5000 \
        AUTOGRAPH_LOG=warn AUTOGRAPH_STATS="$BATS_TEST_TMPDIR/s.json" AUTOGRAPH_ALLOW='*' \
        AUTOGRAPH_DENY='*nothing*' AUTOGRAPH_BENEFIT=always AUTOGRAPH_PROFILE="$BATS_TEST_TMPDIR/p.agp" \
        AUTOGRAPH_FAULT= AUTOGRAPH_DISABLE=0 AUTOGRAPH_WORKER=0 "$BUILD/harness/loop8"
    assert_success
    # the library warns on stderr (stdout is the program's): no warning there, nor anywhere
    output="$stderr" refute_output --partial "warning"
    refute_output --partial "warning"
    [ "$(s graphs.built)" -ge 1 ]
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema"]=="libautograph-stats/2"; assert d["counters"]["graphs.replays"]>=1' "$BATS_TEST_TMPDIR/s.json"
    head -1 "$BATS_TEST_TMPDIR/p.agp" | grep -q '^libautograph-profile 1$'
}

@test "library: CUDA_LAUNCH_BLOCKING=1 keeps it off (launches pass through), with one warning; =0 does not" {
    run --separate-stderr env LD_PRELOAD="$LIB" CUDA_LAUNCH_BLOCKING=1 AUTOGRAPH_STATS=1 \
        AUTOGRAPH_BENEFIT=always AUTOGRAPH_WORKER=0 "$BUILD/harness/loop8"
    assert_success
    assert_output --partial "PASS"
    assert_equal "$(grep -c '^autograph\[[0-9]*\]: warning:' <<<"$stderr")" 1
    output="$stderr" assert_output --partial "warning: CUDA_LAUNCH_BLOCKING is set: every launch passes through"
    [ "$(s launches.cuLaunchKernel)" -ge 8 ]
    assert_equal "$(s graphs.built)" 0
    assert_equal "$(s launches.held)" 0
    run --separate-stderr env LD_PRELOAD="$LIB" CUDA_LAUNCH_BLOCKING=0 AUTOGRAPH_STATS=1 \
        AUTOGRAPH_BENEFIT=always AUTOGRAPH_WORKER=0 "$BUILD/harness/loop8"
    assert_success
    output="$stderr" refute_output --partial "warning"
    [ "$(s graphs.built)" -ge 1 ]
}
