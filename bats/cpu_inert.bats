#!/usr/bin/env bats
# The library must be invisible to programs that do not use CUDA, and harmless where no
# driver exists.

setup() { load helpers; }

@test "preloaded into /bin/true: exit 0, prints nothing" {
    run --separate-stderr env LD_PRELOAD="$LIB" AUTOGRAPH_STATS=1 AUTOGRAPH_LOG=trace /bin/true
    assert_success
    assert_equal "$output" ""
    assert_equal "$stderr" ""
}

@test "preloaded into python3: output unchanged, nothing on stderr" {
    run --separate-stderr env LD_PRELOAD="$LIB" AUTOGRAPH_STATS=1 \
        python3 -c 'import ctypes, json; print(json.dumps({"x": [1, 2]}))'
    assert_success
    assert_equal "$output" '{"x": [1, 2]}'
    assert_equal "$stderr" ""
}

@test "preloaded into a shell pipeline with a bad option value: no warning without CUDA" {
    run --separate-stderr env LD_PRELOAD="$LIB" AUTOGRAPH_MIN_REPEATS=garbage sh -c 'echo a | tr a b'
    assert_success
    assert_equal "$output" "b"
    assert_equal "$stderr" ""
}

@test "without libcuda: driver entry points fail with an error code, never crash" {
    [ -x "$BUILD/tests/nocuda" ] || skip "make progs first"
    if "$BUILD/tests/nocuda" | grep -q 'libcuda: present'; then
        skip "this machine has libcuda.so.1; the test needs one without (CI)"
    fi
    run --separate-stderr env LD_PRELOAD="$LIB" AUTOGRAPH_STATS=1 "$BUILD/tests/nocuda"
    assert_success
    assert_line "exported: yes yes yes"
    # CUDA_ERROR_NOT_FOUND (500) from our wrappers; the proc-address lookup is refused too
    assert_line "cuLaunchKernel: 500"
    assert_line "cuStreamSynchronize: 500"
    refute_line "cuGetProcAddress_v2: 0"
}

@test "dlsym keeps RTLD_NEXT relative to the caller and passes other names through" {
    [ -x "$BUILD/tests/next_main" ] || skip "make progs first"
    run env LD_PRELOAD="$LIB" "$BUILD/tests/next_main"
    assert_success
    assert_output "next: 2, default: 1"
}

@test "AUTOGRAPH_DISABLE and friends leave non-CUDA programs alone" {
    run env LD_PRELOAD="$LIB" AUTOGRAPH_DISABLE=1 AUTOGRAPH_STATS=/tmp/ag-inert-$$.json ls "$ROOT/Makefile"
    assert_success
    assert_output "$ROOT/Makefile"
    [ ! -e "/tmp/ag-inert-$$.json" ]
}
