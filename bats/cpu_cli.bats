#!/usr/bin/env bats
# The autograph command and the option table.

setup() { load helpers; }

@test "autograph --version and --help" {
    run "$CLI" --version
    assert_success
    assert_output --regexp '^autograph [0-9]+\.[0-9]+\.[0-9]+$'
    run "$CLI" --help
    assert_success
    assert_output --partial "usage: autograph"
}

@test "autograph without a program or with an unknown option: usage, exit 2" {
    run "$CLI"
    assert_failure 2
    run "$CLI" --frobnicate ls
    assert_failure 2
    assert_output --partial "unknown option --frobnicate"
}

@test "autograph runs the program with the library preloaded and the options set" {
    run "$CLI" --stats --log=debug --disable -- env
    assert_success
    assert_line --regexp "^LD_PRELOAD=.*libautograph\.so$"
    assert_line "AUTOGRAPH_STATS=1"
    assert_line "AUTOGRAPH_LOG=debug"
    assert_line "AUTOGRAPH_DISABLE=1"
    run env LD_PRELOAD=/lib/x86_64-linux-gnu/libm.so.6 "$CLI" --stats=/tmp/x.json env
    assert_success
    assert_line --regexp "^LD_PRELOAD=.*libautograph\.so:/lib/x86_64-linux-gnu/libm\.so\.6$"
    assert_line "AUTOGRAPH_STATS=/tmp/x.json"
}

@test "autograph rejects bad flag values before running anything" {
    run "$CLI" --log=loud true
    assert_failure 2
    assert_output --partial 'invalid --log'
    run "$CLI" --stats=stats.txt true
    assert_failure 2
}

@test "autograph exits 127 when the program does not exist" {
    run -127 "$CLI" /nonexistent/program
    assert_output --partial "cannot run /nonexistent/program"
}

@test "autograph config lists every option with default and current value" {
    run env AUTOGRAPH_MAX_NODES=64 "$CLI" config
    assert_success
    for o in DISABLE MIN_REPEATS MAX_NODES MAX_GRAPHS MAX_GRAPH_MEM MAX_HOLD_US LOG LOG_FILE STATS ALLOW \
             DENY PROFILE BENEFIT FAULT; do
        assert_line --regexp "^AUTOGRAPH_$o "
    done
    assert_line --regexp '^AUTOGRAPH_MAX_NODES +1024 +64 '
}

@test "autograph config says when CUDA_LAUNCH_BLOCKING keeps the library off" {
    run env CUDA_LAUNCH_BLOCKING=1 "$CLI" config
    assert_success
    assert_line "CUDA_LAUNCH_BLOCKING is set: the library stays off (every launch passes through)"
    run env CUDA_LAUNCH_BLOCKING=0 "$CLI" config
    assert_success
    refute_output --partial "CUDA_LAUNCH_BLOCKING"
}

# Every option: a valid value is taken silently; a garbage one gives exactly one warning naming
# the variable and the default, and the default is used. The line starts "autograph[PID]: ".
pid_of_warning() { sed -n 's/^autograph\[\([0-9]*\)\]: .*/\1/p' <<<"$stderr" | head -1; }
option_case() { # name valid garbage default
    run --separate-stderr env "AUTOGRAPH_$1=$2" "$CLI" config
    assert_success
    assert_equal "$stderr" ""
    assert_equal "$(awk -v n="AUTOGRAPH_$1" '$1 == n { print $3 }' <<<"$output")" "$2"
    run --separate-stderr env "AUTOGRAPH_$1=$3" "$CLI" config
    assert_success
    assert_equal "$stderr" "autograph[$(pid_of_warning)]: warning: invalid AUTOGRAPH_$1=\"$3\"; using the default $4"
    assert_line --partial "\"$3\" (invalid: default used)"
}

@test "option DISABLE: valid and garbage" { option_case DISABLE 1 maybe 0; }
@test "option MIN_REPEATS: valid and garbage" { option_case MIN_REPEATS 5 -2 3; }
@test "option MAX_NODES: valid and garbage" { option_case MAX_NODES 256 99999 1024; }
@test "option MAX_GRAPHS: valid and garbage" { option_case MAX_GRAPHS 64 many 512; }
@test "option MAX_GRAPH_MEM: valid and garbage" { option_case MAX_GRAPH_MEM 1G 12Q 256M; }
@test "option MAX_HOLD_US: valid and garbage" { option_case MAX_HOLD_US 500 0 2000; }
@test "option LOG: valid and garbage" { option_case LOG info loud warn; }
@test "option STATS: valid and garbage" { option_case STATS /tmp/s.json yes 0; }
@test "option STATS: %p in the path is valid" {
    run --separate-stderr env AUTOGRAPH_STATS=/tmp/s.%p.json "$CLI" config
    assert_success
    assert_equal "$stderr" ""
}
@test "option LOG_FILE: valid and garbage" { option_case LOG_FILE /tmp/ag.%h.%p.log $'a\tb' '""'; }
@test "option ALLOW: valid and garbage" { option_case ALLOW 'gemm*,k?' 'a,,b' '""'; }
@test "option DENY: valid and garbage" { option_case DENY '*softmax*' ',' '""'; }
@test "option PROFILE: valid" {
    run --separate-stderr env AUTOGRAPH_PROFILE=/tmp/p.agp "$CLI" config
    assert_success
    assert_equal "$stderr" ""
    assert_line --regexp '^AUTOGRAPH_PROFILE +"" +/tmp/p.agp '
}
@test "option BENEFIT: valid and garbage" { option_case BENEFIT always sometimes measure; }
@test "option FAULT: valid and garbage" { option_case FAULT instantiate:2 explode:1 '""'; }

@test "docs/CONFIG.md holds the option table as the code has it" {
    run "$CLI" config --markdown
    assert_success
    table="$output"
    doc=$(cat "$ROOT/docs/CONFIG.md")
    [[ "$doc" == *"$table"* ]] || fail "docs/CONFIG.md is out of date: regenerate with 'build/autograph config --markdown'"
}

@test "bench/ab.py --deadline reports the repetitions done when the next would end too late" {
    local app="$BATS_TEST_TMPDIR/app.sh"
    printf '#!/bin/sh\nsleep 0.3\necho "time_us_per_iter: 7.5"\necho "checksum: 1"\necho "result: OK"\n' >"$app"
    chmod +x "$app"
    run python3 "$BATS_TEST_DIRNAME/../bench/ab.py" --reps 6 --deadline 1.5 \
        --out "$BATS_TEST_TMPDIR/ab.json" a= b=X=1 -- "$app"
    assert_success
    assert_output --partial "# deadline: 2 of 6 repetitions"
    assert_output --partial ", 2 repetitions"
    [ "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["reps"], len(d["times_us"]["b"]))' "$BATS_TEST_TMPDIR/ab.json")" = "2 2" ]
    run python3 "$BATS_TEST_DIRNAME/../bench/ab.py" --reps 3 a= b=X=1 -- "$app"
    assert_success
    assert_output --partial ", 3 repetitions"
}

@test "bench/ab.py: arg=FLAG passes one more argument to that variant only (a paired hand graph)" {
    local app="$BATS_TEST_TMPDIR/app.sh"
    # 4 us per iteration with --mode=graph, 8 without: the variant's ratio tells which it got
    printf '#!/bin/sh\nt=8\n[ "$1" = --mode=graph ] && t=4\necho "time_us_per_iter: $t"\necho "checksum: 1"\necho "result: OK"\n' >"$app"
    chmod +x "$app"
    run python3 "$BATS_TEST_DIRNAME/../bench/ab.py" --reps 3 eager= hand=arg=--mode=graph -- "$app"
    assert_success
    assert_line --regexp '^eager +8\.00 '
    assert_line --regexp '^hand +4\.00 .* 2\.000x \(2\.000-2\.000\)$'
}

@test "bench/ab.py: host_calib_us pairs each process's own host speed, and the times over it" {
    local app="$BATS_TEST_TMPDIR/app.sh"
    # variant b's process runs twice as slow on the host (F=2): time and calibration both double
    printf '#!/bin/sh\nf=${F:-1}\necho "time_us_per_iter: $((8*f))"\necho "host_calib_us: $((100*f)).0"\necho "checksum: 1"\necho "result: OK"\n' >"$app"
    chmod +x "$app"
    run python3 "$BATS_TEST_DIRNAME/../bench/ab.py" --reps 3 --out "$BATS_TEST_TMPDIR/ab.json" \
        a=F=1 b=F=2 -- "$app"
    assert_success
    assert_line --regexp '^b +16\.00 .* 0\.500x \(0\.500-0\.500\)$'
    assert_line --regexp '^b +200\.0  0\.500x \(0\.500-0\.500\) +1\.000x \(1\.000-1\.000\)$'
    [ "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["calib_us"]["b"], d["rows"][1]["calibrated_geomean"])' "$BATS_TEST_TMPDIR/ab.json")" = "[200.0, 200.0, 200.0] 1.0" ]
    # pool.py pools the same calibrated ratios
    run python3 "$BATS_TEST_DIRNAME/../bench/pool.py" --calibrated --ref a --variant b \
        "$BATS_TEST_TMPDIR/ab.json" "$BATS_TEST_TMPDIR/ab.json"
    assert_success
    assert_line --regexp '^pooled +6  1\.000x \(1\.000-1\.000\)$'
    # an app that prints no calibration: no second table
    printf '#!/bin/sh\necho "time_us_per_iter: 8"\necho "checksum: 1"\necho "result: OK"\n' >"$app"
    run python3 "$BATS_TEST_DIRNAME/../bench/ab.py" --reps 2 --out "$BATS_TEST_TMPDIR/ab2.json" \
        a= b=X=1 -- "$app"
    assert_success
    refute_output --partial "host_calib_us"
    run python3 "$BATS_TEST_DIRNAME/../bench/pool.py" --calibrated --ref a --variant b \
        "$BATS_TEST_TMPDIR/ab2.json"
    assert_failure
    assert_output --partial "has no calib_us"
}

@test "bench/pool.py: two variants' paired ratio per ab.py file and pooled over them" {
    local d="$BATS_TEST_TMPDIR"
    mkdir -p "$d/r1" "$d/r2"
    echo '{"times_us": {"eager": [9, 9], "base": [2, 2], "new": [1, 1]}}' >"$d/r1/ab.json"
    echo '{"times_us": {"eager": [9], "base": [3], "new": [1]}}' >"$d/r2/ab.json"
    run python3 "$BATS_TEST_DIRNAME/../bench/pool.py" --ref base --variant new "$d/r1/ab.json" "$d/r2/ab.json"
    assert_success
    assert_line --regexp '^r1/ab\.json +2  2\.000x \(2\.000-2\.000\)$'
    assert_line --regexp '^r2/ab\.json +1  3\.000x \(3\.000-3\.000\)$'
    # the geometric mean of 2, 2 and 3: 12^(1/3)
    assert_line --regexp '^pooled +3  2\.289x '
    run python3 "$BATS_TEST_DIRNAME/../bench/pool.py" --ref base --variant old "$d/r1/ab.json"
    assert_failure
    assert_output --partial "has no variant 'old'"
}

@test "bench/hotpath.py takes off the driver's cost only where the library called it" {
    # callgrind_annotate --tree=caller --inclusive=yes: callers ('<') before each function ('*');
    # the fake driver's functions are known by object or by file (listed twice, callers under one)
    python3 - "$BATS_TEST_DIRNAME/../bench" <<'EOF2'
import sys
sys.path.insert(0, sys.argv[1])
from hotpath import driver_cost
text = """
2,489,312 (73.22%)  < cache/issue.c:ag_launch_call (1,600x) [/x/build/libautograph.so]
2,489,312 (73.22%)  *  /x/tests/fakecuda/fc_stream.c:cuLaunchKernel

2,489,312 (73.22%)  *  tests/fakecuda/fc_stream.c:cuLaunchKernel [/x/build/fakecuda/libcuda.so.1]

2,391,712 (70.35%)  < tests/fakecuda/fc_stream.c:cuLaunchKernel (1,600x) [/x/build/fakecuda/libcuda.so.1]
2,391,712 (70.35%)  *  tests/fakecuda/fc_stream.c:launch [/x/build/fakecuda/libcuda.so.1]

    1,000 ( 0.03%)  < cache/params.c:slow_get (5x) [/x/build/libautograph.so]
      130 ( 0.00%)  < tests/fakecuda/fc_stream.c:cuStreamGetCtx (1x) [/x/build/fakecuda/libcuda.so.1]
    1,130 ( 0.03%)  *  tests/fakecuda/fakecuda.c:cuFuncGetParamInfo [/x/build/fakecuda/libcuda.so.1]

      500 ( 0.01%)  < cache/launch.c:launch_learning (5x) [/x/build/libautograph.so]
      500 ( 0.01%)  *  ./malloc/./malloc/malloc.c:malloc [/usr/lib/x86_64-linux-gnu/libc.so.6]
"""
got = driver_cost(text)
assert got == 2489312 + 1000, got
EOF2
}

@test "bench/frameworks.py: the ceiling and the share of its saving (doctests), and --goal on a paired row" {
    run python3 -m doctest "$BATS_TEST_DIRNAME/../bench/frameworks.py"
    assert_success
    printf '{"rows": [{"variant": "eager", "median_us": 1200.0}, {"variant": "new", "median_us": 1020.0}]}' \
        >"$BATS_TEST_TMPDIR/ab.json"
    # 1200 us eager, 75 launches at 2.85 - 0.1 us: 206.25 us of launches, ceiling 1.2075x,
    # allowed saving 206.25 us; 180 taken: 0.87
    run python3 "$BATS_TEST_DIRNAME/../bench/frameworks.py" --goal "$BATS_TEST_TMPDIR/ab.json" 75
    assert_success
    assert_output --partial "ceiling 1.208x; share of the saving it allows: 0.87 (goal 0.9)"
    # the same launches per iteration from two processes' stats: 10 iterations each, 750 and
    # 650 kernel launches (through two entry points in the first); a third process launched
    # nothing (a compile worker of torch.compile, preloaded too) and is left out
    python3 - "$BATS_TEST_TMPDIR" <<'EOF2'
import json, sys
d = sys.argv[1]
ab = json.load(open(d + "/ab.json"))
ab["cmd"] = ["python3", "x.py", "--iters=8", "--warmup=2"]
json.dump(ab, open(d + "/ab.json", "w"))
json.dump({"counters": {"launches.cuLaunchKernel": 700, "launches.cuLaunchKernelEx": 50,
                        "launches.eager": 999}}, open(d + "/s1.json", "w"))
json.dump({"counters": {"launches.cuLaunchKernel": 650}}, open(d + "/s2.json", "w"))
json.dump({"counters": {"launches.cuLaunchKernel": 0, "launches.eager": 0}},
          open(d + "/s3.json", "w"))
EOF2
    run python3 "$BATS_TEST_DIRNAME/../bench/frameworks.py" --goal "$BATS_TEST_TMPDIR/ab.json" \
        "$BATS_TEST_TMPDIR/s1.json" "$BATS_TEST_TMPDIR/s2.json" "$BATS_TEST_TMPDIR/s3.json"
    assert_success
    assert_output --partial "70.0 launches per iteration"
}

# An app of the framework rows' shape (bench/fw_common.py's timed loop) whose step asks the
# library whether it is paused (autograph_resume answers 0 only then; the step pauses again).
inproc_app() {
    cat >"$BATS_TEST_TMPDIR/app.py" <<'PY'
import ctypes, os, sys
sys.path.insert(0, os.environ["BENCH"])
import fw_common as fw
lib = ctypes.CDLL(None)
have = hasattr(lib, "autograph_resume")
states, acc = [], 0
def step(i):
    global acc
    s = "-"
    if have:
        s = "o"
        if lib.autograph_resume() == 0:
            lib.autograph_pause()
            s = "P"
    states.append(s)
    acc = (acc * 31 + i) % 1000003
fw.timed_loop(step, 0, int(sys.argv[1]), lambda: None)
print("states: " + "".join(states))
skew = int(os.environ.get("SKEW", "0")) if os.environ.get("LD_PRELOAD") else 0
print("checksum: %d" % (acc + skew))
print("time_us_per_iter: 1.0")
print("result: OK")
PY
}

@test "INPROC_ROUNDS: the timed loop's blocks alternate on and paused, every iteration runs, pauses balance" {
    inproc_app
    export BENCH="$BATS_TEST_DIRNAME/../bench"
    # 3 rounds of 20 iterations: blocks of 3 (the first untimed), on-off, off-on, on-off, then
    # the 2 left over, on
    run env INPROC_ROUNDS=3 LD_PRELOAD="$LIB" python3 "$BATS_TEST_TMPDIR/app.py" 20
    assert_success
    assert_line "states: oooPPPPPPooooooPPPoo"
    [ "$(grep -c '^inproc_block: [0-2] \(on\|off\) [0-9.]*$' <<<"$output")" -eq 6 ]
    assert_line --regexp '^inproc_block: 1 off '
    # without the library: the same iterations, unpaused, said so
    run env INPROC_ROUNDS=3 python3 "$BATS_TEST_TMPDIR/app.py" 20
    assert_success
    assert_line "states: --------------------"
    assert_output --partial "libautograph is not preloaded"
    # no INPROC_ROUNDS: one loop, no blocks
    run env LD_PRELOAD="$LIB" python3 "$BATS_TEST_TMPDIR/app.py" 20
    assert_line "states: oooooooooooooooooooo"
    refute_output --partial "inproc_block"
}

@test "bench/inproc.py pairs each process's rounds and checks every checksum against a run without the library" {
    inproc_app
    export BENCH="$BATS_TEST_DIRNAME/../bench"
    run python3 "$BENCH/inproc.py" --procs 2 --rounds 3 --lib "$LIB" --out "$BATS_TEST_TMPDIR/in.json" \
        -- python3 "$BATS_TEST_TMPDIR/app.py" 20
    assert_success
    assert_line --regexp '^process 2: 3 rounds, '
    assert_line --regexp '^pooled over 6 rounds: paused / on '
    assert_line --regexp "^over 2 processes' means: "
    [ "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["processes"]), [len(p["ratios"]) for p in d["processes"]], all(p["same"] for p in d["processes"]))' "$BATS_TEST_TMPDIR/in.json")" = "2 [3, 3] True" ]
    # a process whose checksum differs from the reference fails the run
    run env SKEW=1 python3 "$BENCH/inproc.py" --procs 1 --rounds 3 --lib "$LIB" \
        -- python3 "$BATS_TEST_TMPDIR/app.py" 20
    assert_failure
    assert_output --partial "CHECKSUM DIFFERS"
    # --env reaches the processes with the library, not the reference: the same skew so
    run python3 "$BENCH/inproc.py" --procs 1 --rounds 3 --lib "$LIB" --env SKEW=1 \
        -- python3 "$BATS_TEST_TMPDIR/app.py" 20
    assert_failure
    assert_output --partial "CHECKSUM DIFFERS"
    assert_output --partial ", SKEW=1"
    run python3 "$BENCH/inproc.py" --procs 1 --rounds 3 --lib "$LIB" --env SKEW \
        -- python3 "$BATS_TEST_TMPDIR/app.py" 20
    assert_failure 2
    assert_output --partial "not KEY=VALUE"
    # --deadline: a deadline already past runs one process (never none) and still prints the
    # figures, over it
    run python3 "$BENCH/inproc.py" --procs 3 --rounds 3 --lib "$LIB" --deadline 0 \
        -- python3 "$BATS_TEST_TMPDIR/app.py" 20
    assert_success
    assert_line --regexp '^process 1: 3 rounds, '
    refute_line --regexp '^process 2: '
    assert_line "stopped after 1 of 3 processes: the next would end past the 0 s deadline"
    assert_line --regexp '^pooled over 3 rounds: paused / on '
    assert_line --regexp "^over 1 processes' means: "
}

@test "INPROC_ROUNDS in the sample apps' loop (kernels/common.h): the same blocks as the Python rows'" {
    g++ -std=c++17 -I"$BATS_TEST_DIRNAME/.." -o "$BATS_TEST_TMPDIR/loop" \
        "$BATS_TEST_DIRNAME/../tests/progs/inproc_loop.cpp" -ldl
    run env INPROC_ROUNDS=3 LD_PRELOAD="$LIB" "$BATS_TEST_TMPDIR/loop"
    assert_success
    assert_line "states: oooPPPPPPooooooPPPoo"
    assert_line "ran: 22"
    [ "$(grep -c '^inproc_block: [0-2] \(on\|off\) [0-9.]*$' <<<"$output")" -eq 6 ]
    run env INPROC_ROUNDS=3 "$BATS_TEST_TMPDIR/loop"
    assert_line "states: --------------------"
    assert_line "ran: 22"
    run env LD_PRELOAD="$LIB" "$BATS_TEST_TMPDIR/loop"
    assert_line "states: oooooooooooooooooooo"
    refute_output --partial "inproc_block"
}
