# Shared by every bats file: paths, helper libraries, GPU detection, stats parsing.
bats_require_minimum_version 1.5.0
ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
LIB="$BUILD/libautograph.so"
CLI="$BUILD/autograph"
APPS="$BUILD/kernels"

bats_load_library bats-support
bats_load_library bats-assert

# gpu_present: nvidia-smi lists a GPU, or the driver's device node exists (a machine with a
# GPU whose nvidia-smi is missing still has one).
gpu_present() {
    nvidia-smi -L 2>/dev/null | grep -q '^GPU ' || [ -e /dev/nvidia0 ]
}

# GPU tests skip with a reason where no GPU is visible.
require_gpu() {
    gpu_present || skip "no GPU: nvidia-smi lists no device and there is no /dev/nvidia0"
}

# The sample apps need nvcc. Where there is no GPU the test skips anyway; where there is one, a
# missing app is a failure: `make test` on a GPU machine without nvcc must not pass by skipping
# every GPU test.
require_app() {
    [ -x "$APPS/$1" ] && return 0
    if gpu_present; then
        fail "a GPU is present but the sample app $APPS/$1 is not built (nvcc missing? run 'make apps' with CUDA's nvcc on PATH or NVCC=...)"
    fi
    skip "sample app $1 not built (needs nvcc: make apps)"
}

# stat NAME: the value of one counter in the AUTOGRAPH_STATS=1 report held in $output
# (lines "autograph[PID]: <name> <value>").
stat() {
    printf '%s\n' "$output" | awk -v k="$1" '$1 ~ /^autograph(\[[0-9:]+\])?:$/ && $2 == k { print $3; f = 1 }
        END { if (!f) print "missing" }'
}

# field NAME: a "name: value" line printed by a sample app, from $output.
field() {
    printf '%s\n' "$output" | awk -v k="$1:" '$1 == k { print $2; exit }'
}

# Runs a command with and without the library, keeping both outputs.
run_both() {
    run --separate-stderr env -u LD_PRELOAD "$@"
    plain_status=$status plain_output=$output
    run --separate-stderr env LD_PRELOAD="$LIB" "$@"
}

# plain_field NAME: the same, from the run without the library (run_both).
plain_field() {
    printf '%s\n' "$plain_output" | awk -v k="$1:" '$1 == k { print $2; exit }'
}

# s NAME: a counter of the report on stderr of the last `run --separate-stderr`.
s() { output="$stderr" stat "$1"; }

# same_results APP ARGS...: the sample app runs without and with the library (run_both, with
# the AUTOGRAPH_* variables of the caller) and both give exit code 0, result OK and the same
# checksum. Leaves the preloaded run in $output / $stderr; prints both (shown on failure).
same_results() {
    require_app "$1"
    local app="$APPS/$1"; shift
    run_both "$app" "$@"
    printf '%s\n' "--- plain ($plain_status):" "$plain_output" "--- preloaded ($status):" "$output" "$stderr"
    [ "$plain_status" -eq 0 ] || fail "the app fails without the library ($plain_status)"
    assert_equal "$status" "$plain_status"
    assert_equal "$(field checksum)" "$(plain_field checksum)"
    assert_equal "$(field result)" "OK"
}
