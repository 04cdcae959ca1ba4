# What the fake-driver harness test files (bats/cpu_harness_*.bats) share. Load it at the top of
# a file, name the file's harness programs in setup_file, and call harness_setup in setup:
#     load harness
#     setup_file() { harness_require pieces; }
#     setup() { harness_setup; }

# The library, the fake driver and these harness programs must be built (else every test of
# the file skips, saying what to build).
harness_require() {
    local root="$BATS_TEST_DIRNAME/.." f
    for f in build/libautograph.so build/fakecuda/libcuda.so.1 "${@/#/build/harness/}"; do
        if [ ! -e "$root/$f" ]; then
            export HARNESS_MISSING="$f is not built: run 'make lib harness' first"
            return 0
        fi
    done
}

# Each test starts from no AUTOGRAPH_* or FAKECUDA_* setting of the caller's (nor the names
# given); H is the harness programs' folder, LIB the library (HARNESS_LIB: another build).
harness_setup() {
    bats_load_library bats-support
    bats_load_library bats-assert
    if [ -n "${HARNESS_MISSING:-}" ]; then
        skip "$HARNESS_MISSING"
    fi
    H="$BATS_TEST_DIRNAME/../build/harness"
    LIB="${HARNESS_LIB:-$BATS_TEST_DIRNAME/../build/libautograph.so}"
    local v
    for v in $(compgen -e) "$@"; do
        case "$v" in AUTOGRAPH_* | FAKECUDA_* | "$1" | "$2" | "$3") unset "$v" ;; esac
    done
}

# ag [VAR=VALUE...] PROGRAM [ARGS...]: deterministic graphing (always, after 2 sightings,
# each graph built on the launching thread at its first replay, not on the worker: replay
# counts are exact), holds released by ordering points only, statistics at exit.
ag() {
    run timeout "${AG_TIMEOUT:-120}" env LD_PRELOAD="$LIB" AUTOGRAPH_MIN_REPEATS=2 \
        AUTOGRAPH_BENEFIT=always AUTOGRAPH_MAX_HOLD_US=10000000 AUTOGRAPH_STATS=1 \
        AUTOGRAPH_WORKER=0 "$@"
}

# A statistic of libautograph's, and a counter of the fake driver's, from the last run.
stat() {
    awk -v n="$1" '$1 ~ /^autograph(\[[0-9:]+\])?:$/ && $2 == n { v = $3 } END { print v }' <<<"$output"
}

fc() {
    awk -v n="$1" '$1 == "fakecuda:" && $2 == n { v = $3 } END { print v }' <<<"$output"
}

at_least() {
    local v
    v="$(stat "$1")"
    [ -n "$v" ] || fail "statistic $1 not printed"
    [ "$v" -ge "$2" ] || fail "statistic $1 is $v, expected at least $2"
}

no_failures() {
    assert_equal "$(stat failures.build)" 0
    assert_equal "$(stat failures.update)" 0
    assert_equal "$(stat failures.launch)" 0
    assert_equal "$(stat failures.eager_launch)" 0
}
