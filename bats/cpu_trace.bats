#!/usr/bin/env bats
# The trace recorder (AUTOGRAPH_TRACE, cache/tracerec.c) and its reader (`autograph trace`,
# cli/traceread.c) on the fake driver. The counts below are derived from the scenarios'
# sources: tests/harness/loop8.c (8 launches of 4 kernels and a cuStreamSynchronize per
# iteration, one stream, destroyed at the end) and tests/harness/traceops.c (its header
# comment). Build first: make lib cli harness build/tests/test_traceread.

bats_require_minimum_version 1.5.0
load harness

setup_file() { harness_require loop8 traceops event fork tracequeue tracethreads attrchurn queue; }
setup() {
    harness_setup
    CLI="$BATS_TEST_DIRNAME/../build/autograph"
    T="$BATS_TEST_TMPDIR/t.bin"
}

# rec [VAR=VALUE...] PROGRAM [ARGS...]: the program with the library, recording into $T.
rec() {
    run --separate-stderr timeout 120 env LD_PRELOAD="$LIB" AUTOGRAPH_TRACE="$T" "$@"
}

# dump FILE: `autograph trace dump`, which must read the whole file.
dump() {
    "$CLI" trace dump "$1" >"$BATS_TEST_TMPDIR/dump.txt" || fail "trace dump failed"
}

# calls TYPE [NAME]: lines of the dump of that record type (OP: of that function).
calls() {
    awk -v t="$1" -v n="${2:-}" '{ for (i = 1; i <= NF; i++) if ($i == t && $(i + 1) == "stream") {
        if (n == "" || $(i + 3) == n) c++; break } } END { print c + 0 }' "$BATS_TEST_TMPDIR/dump.txt"
}

# records TYPE: lines of the dump starting with that record type (NAME FUNC STREAM GPU END).
records() {
    awk -v t="$1" '$1 == t { c++ } END { print c + 0 }' "$BATS_TEST_TMPDIR/dump.txt"
}

# args NAME: the arg (and arg2) of every OP record of that function, one line each.
args() {
    awk -v n="$1" '{ for (i = 1; i <= NF; i++) if ($i == "OP" && $(i + 3) ~ "^" n) {
        a = ""; for (j = i; j <= NF; j++) if ($j == "arg" || $j == "arg2") a = a " " $(j + 1)
        print a; break } }' "$BATS_TEST_TMPDIR/dump.txt"
}

@test "trace: recording does not change what the program does (its output and the fake's counters)" {
    local p
    for p in "loop8 20" "traceops 6" "event 10"; do
        run timeout 60 $H/$p
        assert_success
        local plain="$output"
        rec $H/$p
        assert_success
        # the one difference: the parameter-layout probes (cuFuncGetParamInfo) and the driver's
        # "end of the list" answers to them, one per kernel
        diff <(grep -Ev 'api_errors|launcher_param_queries' <<<"$plain") \
             <(grep -Ev 'api_errors|launcher_param_queries' <<<"$output") ||
            fail "$p: the output differs under AUTOGRAPH_TRACE"
        assert_output --partial "PASS ${p% *}"
        dump "$T"
    done
}

@test "trace: recording keeps the engine from graphing (the program's own eager run)" {
    ag env AUTOGRAPH_TRACE="$T" "$H/loop8" 20
    assert_success
    assert_equal "$(stat graphs.built)" 0
    assert_equal "$(stat launches.replayed)" 0
    assert_equal "$(fc graph_launches)" 0
    assert_equal "$(fc eager_launches)" 160
}

@test "trace: loop8 -- launches, ordering points, functions, the stream, hashes, sequence, times" {
    rec "$H/loop8" 12
    assert_success
    dump "$T"
    assert_equal "$(calls LAUNCH)" 96
    assert_equal "$(calls OP cuStreamSynchronize)" 12
    assert_equal "$(calls OP cuStreamDestroy_v2)" 1
    assert_equal "$(calls OP cuInit)" 1
    assert_equal "$(calls OP cuMemcpyHtoD_v2)" 1 # hx_dev_u64's initial value
    assert_equal "$(records FUNC)" 4
    for k in loop_a loop_b loop_c loop_d; do
        grep -q "^FUNC .* CUfunction .* name $k\$" "$BATS_TEST_TMPDIR/dump.txt" || fail "no FUNC for $k"
    done
    assert_equal "$(records STREAM)" 1
    grep -q "^STREAM .* ctx 0x" "$BATS_TEST_TMPDIR/dump.txt" || fail "the stream's context is missing"
    # every launch on that stream, with a function described before it
    awk '$1 == "FUNC" { f[$3] = 1 } $1 == "STREAM" { s = $2 }
         { for (i = 1; i <= NF; i++) if ($i == "LAUNCH") {
             if ($(i + 2) != s) { print "launch on another stream: " $0; bad = 1 }
             if (!f[$(i + 4)]) { print "launch of an undescribed function: " $0; bad = 1 } } }
         END { exit bad }' "$BATS_TEST_TMPDIR/dump.txt"
    # the 8 launches of an iteration have 8 different (function, arguments); every iteration
    # repeats them: 8 distinct parameter hashes, 12 times each
    run awk '{ for (i = 1; i <= NF; i++) if ($i == "LAUNCH") for (j = i; j <= NF; j++)
               if ($j == "hash") n[$(i + 4) " " $(j + 1)]++ }
             END { for (k in n) { d++; if (n[k] != 12) bad = 1 } print d, bad + 0 }' "$BATS_TEST_TMPDIR/dump.txt"
    assert_output "8 0"
    # seq: 0, 1, 2, ... in file order; END counts them all: 96 + 12 + 1 + 1 + 1 calls
    run awk '{ for (i = 1; i <= NF; i++) if ($i == "seq" && $1 != "GPU") { if ($(i + 1) != n) bad = 1; n++ } }
             $1 == "END" { print n, $5, bad + 0 }' "$BATS_TEST_TMPDIR/dump.txt"
    assert_output "111 111 0"
    # one thread: a call begins after the one before it ended (the recorder's own time is
    # taken out of the timestamps, never more than that)
    run awk '{ for (i = 1; i <= NF; i++) if ($i == "seq" && $1 != "GPU") {
                 t = $1; d = $3; sub(/^\+/, "", d); if ($3 == "+") d = $4
                 if (n && t + 0.002 < end) { print "overlap at " $0; bad = 1 }
                 end = t + d; n++ } } END { exit bad }' "$BATS_TEST_TMPDIR/dump.txt"
    assert_success
}

@test "trace: traceops -- copies, events (their handles as arguments), graph launches, streams" {
    rec "$H/traceops" 6
    assert_success
    dump "$T"
    assert_equal "$(calls LAUNCH)" 19
    assert_equal "$(calls COPY)" 12
    assert_equal "$(grep -c ' COPY .* memsetD32 8 bytes dst 0x[0-9a-f]* (device) value ' "$BATS_TEST_TMPDIR/dump.txt")" 6
    assert_equal "$(grep -c ' COPY .* memcpyDtoH 8 bytes dst 0x[0-9a-f]* (pinned) src 0x[0-9a-f]* (device) ' "$BATS_TEST_TMPDIR/dump.txt")" 6
    assert_equal "$(calls OP cuEventRecord)" 12
    assert_equal "$(calls OP cuEventSynchronize)" 6
    assert_equal "$(calls OP cuEventQuery)" 6
    assert_equal "$(( $(calls OP cuEventElapsedTime) + $(calls OP cuEventElapsedTime_v2) ))" 6
    assert_equal "$(calls OP cuGraphLaunch)" 6
    assert_equal "$(calls OP cuStreamWaitEvent)" 6
    # the profiler region around the loop (the replay model's timed region)
    assert_equal "$(calls OP cuProfilerStart)" 1
    assert_equal "$(calls OP cuProfilerStop)" 1
    assert_equal "$(records FUNC)" 4
    # S, S2 and S3 (S3 first seen while capturing: its flags are not asked)
    assert_equal "$(records STREAM)" 3
    assert_equal "$(grep -c '^STREAM .* non-blocking' "$BATS_TEST_TMPDIR/dump.txt")" 2
    # E1 and E2: records alternate E1, E2; the sync waits for E2, the query asks E1,
    # the elapsed time is E1 to E2, S2 waits for E2
    local e1 e2
    e1=$(args cuEventRecord | sed -n 1p | tr -d ' ')
    e2=$(args cuEventRecord | sed -n 2p | tr -d ' ')
    [ -n "$e1" ] && [ -n "$e2" ] && [ "$e1" != "$e2" ] || fail "event arguments missing: '$e1' '$e2'"
    assert_equal "$(args cuEventRecord | tr -d ' ' | sort | uniq -c | awk '{ print $1 }' | tr '\n' ' ')" "6 6 "
    assert_equal "$(args cuEventSynchronize | sort -u)" " $e2"
    assert_equal "$(args cuEventQuery | sort -u)" " $e1"
    assert_equal "$(args cuEventElapsedTime | sort -u)" " $e1 $e2"
    assert_equal "$(args cuStreamWaitEvent | sort -u)" " $e2"
}

@test "trace: function attribute sets carry the function, the attribute, the device and the value" {
    rec "$H/attrchurn" 20
    assert_success
    dump "$T"
    assert_equal "$(calls OP cuFuncSetAttribute)" 20
    # X's MAX_DYNAMIC_SHARED_SIZE_BYTES (8), no device (a cuFunc* call): 0 and 8192 in turn,
    # named by X's FUNC record
    local x
    x=$(awk '$1 == "FUNC" && $NF == "ac_x" { print $3 }' "$BATS_TEST_TMPDIR/dump.txt")
    [ -n "$x" ] || fail "no FUNC record for ac_x"
    assert_equal "$(grep -c "(funcattr) func $x attr 8 dev -1 value 0 result 0" "$BATS_TEST_TMPDIR/dump.txt")" 10
    assert_equal "$(grep -c "(funcattr) func $x attr 8 dev -1 value 8192 result 0" "$BATS_TEST_TMPDIR/dump.txt")" 10
}

@test "trace: the replay model sees the attribute values: alternating ones drop graphs, and the sequence backs off" {
    rec "$H/attrchurn" 200
    assert_success
    run --separate-stderr "$CLI" simulate --opt BENEFIT=always --opt MIN_REPEATS=2 \
        --stats "$BATS_TEST_TMPDIR/s.json" "$T"
    assert_success
    local c
    c=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["counters"]
print(c["cache.attr_drops"], c["policy.attr_backoffs"], c["graphs.built"])' "$BATS_TEST_TMPDIR/s.json")
    read -r drops offs built <<<"$c"
    # (a trace without the values took every set as unchanged: nothing dropped)
    [ "$drops" -ge 2 ] || fail "the model dropped no graph: $c"
    [ "$offs" -ge 2 ] || fail "no back-off in the model: $c"
    [ "$built" -le 20 ] || fail "$built graphs built by the model for 200 iterations"
}

@test "trace: AUTOGRAPH_TRACE_GPU=1 records the GPU time of every launch, copy and graph launch" {
    run timeout 60 "$H/traceops" 6
    local plain_events
    plain_events=$(fc events_recorded)
    rec env AUTOGRAPH_TRACE_GPU=1 "$H/traceops" 6
    assert_success
    dump "$T"
    grep -q '^TRACE .* gpu ' "$BATS_TEST_TMPDIR/dump.txt" || fail "the header lacks the GPU flag"
    # 6 per iteration outside the capture: 3 launches, 2 copies, 1 graph launch
    assert_equal "$(records GPU)" 36
    grep -q '^END .* 0 dropped$' "$BATS_TEST_TMPDIR/dump.txt" || fail "GPU times were dropped"
    # each is the time of one timed call, each call once
    run awk '{ for (i = 1; i <= NF; i++) if ($i == "seq" && $1 != "GPU") {
                 k = $(i + 2); if (k == "OP") k = $(i + 5); kind[$(i + 1)] = k } }
             $1 == "GPU" { if (seen[$3]++) dup++; n[kind[$3]]++ }
             END { print n["LAUNCH"] + 0, n["COPY"] + 0, n["cuGraphLaunch"] + 0, dup + 0 }' "$BATS_TEST_TMPDIR/dump.txt"
    assert_output "18 12 6 0"
    # two events of ours around each (on the fake: counted with the program's own)
    output="$(cat "$BATS_TEST_TMPDIR/dump.txt")"
    run timeout 60 env LD_PRELOAD="$LIB" AUTOGRAPH_TRACE="$T" AUTOGRAPH_TRACE_GPU=1 "$H/traceops" 6
    assert_equal "$(fc events_recorded)" "$((plain_events + 72))"
}

@test "trace: AUTOGRAPH_TRACE_GPU=N times one launch in N of each kernel and dimensions; copies and graph launches each" {
    run timeout 60 "$H/traceops" 8
    local plain_events
    plain_events=$(fc events_recorded)
    rec env AUTOGRAPH_TRACE_GPU=4 "$H/traceops" 8
    assert_success
    dump "$T"
    grep -q '^TRACE .* gpu sampled ' "$BATS_TEST_TMPDIR/dump.txt" || fail "the header lacks the sampled flag"
    grep -q '^END .* 0 dropped$' "$BATS_TEST_TMPDIR/dump.txt" || fail "GPU times were dropped"
    # 8 iterations: A, B and D (functions 2, 3, 4: C, captured first, is 1) launched 8 times
    # each (one dimension each), timed at their 1st and 5th launch; the 16 copies and 8 graph
    # launches each
    run awk '{ for (i = 1; i <= NF; i++) if ($i == "seq" && $1 != "GPU") {
                 k = $(i + 2); if (k == "OP") k = $(i + 5); if (k == "LAUNCH") k = k ":" $(i + 6);
                 kind[$(i + 1)] = k } }
             $1 == "GPU" { n[kind[$3]]++ }
             END { for (k in n) print k, n[k] }' "$BATS_TEST_TMPDIR/dump.txt"
    echo "$output"
    assert_equal "$(LC_ALL=C sort <<<"$output" | tr '\n' ' ')" "COPY 16 LAUNCH:2 2 LAUNCH:3 2 LAUNCH:4 2 cuGraphLaunch 8 "
    # the first launch of each function is timed (but C's: captured, never timed)
    run awk '$1 != "GPU" { for (i = 1; i <= NF; i++) if ($i == "seq" && $(i + 2) == "LAUNCH" &&
                 $(i + 6) != 1 && !($(i + 6) in first)) first[$(i + 6)] = $(i + 1) }
             $1 == "GPU" { timed[$3] = 1 }
             END { for (f in first) if (!(first[f] in timed)) print "func " f " first launch untimed" }' \
        "$BATS_TEST_TMPDIR/dump.txt"
    [ -z "$output" ] || fail "$output"
    # two events of ours around each timed call: 30, not the 48 of AUTOGRAPH_TRACE_GPU=1
    run timeout 60 env LD_PRELOAD="$LIB" AUTOGRAPH_TRACE="$T" AUTOGRAPH_TRACE_GPU=4 "$H/traceops" 8
    assert_equal "$(fc events_recorded)" "$((plain_events + 60))"
    # the boolean words of old still mean 1: every launch
    rec env AUTOGRAPH_TRACE_GPU=yes "$H/traceops" 8
    assert_success
    dump "$T"
    grep -q '^TRACE .* gpu cmd' "$BATS_TEST_TMPDIR/dump.txt" || fail "=yes is not 1"
    assert_equal "$(records GPU)" 48
}

@test "trace: GPU times of queued calls exclude the launch's host time; calls on an idle stream are flagged idle" {
    # tracequeue: 4 kernels queued behind a host function that holds the stream until all 4
    # are issued, then 4 kernels each followed by a sync. Every launch spends 50 ms on the host
    # before its kernel reaches the fake GPU (after the start event was recorded).
    rec env AUTOGRAPH_TRACE_GPU=1 FAKECUDA_DELAY_US=0 FAKECUDA_LAUNCH_HOST_US=50000 \
        "$H/tracequeue" 4
    assert_success
    dump "$T"
    # per launch, in order: the GPU record's flag and duration (us)
    run awk '$1 != "GPU" { for (i = 1; i < NF - 1; i++) if ($i == "seq" && $(i + 2) == "LAUNCH") launch[$(i + 1)] = 1 }
             $1 == "GPU" && ($3 in launch) { printf "%s %s %s\n", $3, ($NF == "queued" || $NF == "idle") ? $NF : "none", $5 }' \
        "$BATS_TEST_TMPDIR/dump.txt"
    echo "$output"
    [ "${#lines[@]}" -eq 8 ] || fail "8 launches timed: ${#lines[@]}"
    local i f d
    for i in 0 1 2 3; do
        read -r _ f d <<<"${lines[$i]}"
        # queued (the stream held until all were issued): the host time is not in the duration
        [ "$f" = queued ] || fail "launch $i: $f, not queued"
        python3 -c "import sys; sys.exit(0 if $d < 25000 else 1)" || fail "launch $i: $d us holds the launch's host time"
    done
    for i in 4 5 6 7; do
        read -r _ f d <<<"${lines[$i]}"
        # idle: the start event fired before the launch returned (the duration holds most of its
        # 50 ms of host time: the fake's GPU thread stamps the event when it gets to it, late
        # by a few ms on a loaded host -- 48.4 ms was seen); or, if that thread was slow to get
        # to it, queued and short
        case $f in
        idle) python3 -c "import sys; sys.exit(0 if $d >= 25000 else 1)" || fail "launch $i: idle, $d us" ;;
        queued) python3 -c "import sys; sys.exit(0 if $d < 50000 else 1)" || fail "launch $i: queued, $d us" ;;
        *) fail "launch $i: no flag" ;;
        esac
    done
}

@test "trace: two threads: the recorder's time on one is not taken off the other's wait; a thread's calls never overlap" {
    # tracethreads: the main thread waits at a sync while a second thread makes 2000 launches,
    # each with the recorder's own work (GPU events: AUTOGRAPH_TRACE_GPU=1). Taken off every
    # thread's later timestamps, that work placed the main thread's next call before its wait
    # had ended
    rec env AUTOGRAPH_TRACE_GPU=1 "$H/tracethreads" 2000
    assert_success
    assert_output --partial "PASS tracethreads"
    dump "$T"
    run python3 - "$BATS_TEST_TMPDIR/dump.txt" <<'EOF'
import re, sys
call = re.compile(r"^\s+([\d.]+) us\s+\+\s*([\d.]+)\s+tid (\d+)")
end, bad, n = {}, [], 0
for line in open(sys.argv[1]):
    m = call.match(line)
    if not m:
        continue
    t, d, tid = float(m[1]), float(m[2]), m[3]
    n += 1
    if tid in end and t < end[tid] - 0.002:  # (the dump's microseconds have 3 decimals)
        bad.append("%.3f us before its thread's last call ended: %s" % (end[tid] - t, line.strip()))
    end[tid] = t + d
print("%d calls, %d threads, %d overlapping" % (n, len(end), len(bad)))
print("\n".join(bad[:5]))
sys.exit(1 if bad or len(end) < 2 or n < 2000 else 0)
EOF
    echo "$output"
    assert_success
}

@test "trace: %p and %h in the path" {
    rec env AUTOGRAPH_TRACE="$BATS_TEST_TMPDIR/t.%h.%p" "$H/loop8" 2
    assert_success
    local f pid
    f=$(ls "$BATS_TEST_TMPDIR"/t.*.*)
    [ "$(echo "$f" | wc -l)" -eq 1 ] || fail "expected one file: $f"
    assert_equal "$(basename "$f")" "t.$(hostname).${f##*.}"
    dump "$f"
    pid=$(awk '$1 == "TRACE" { print $5 }' "$BATS_TEST_TMPDIR/dump.txt")
    assert_equal "${f##*.}" "$pid"
}

@test "trace: an unwritable path gives one warning, and the program runs as before" {
    rec env AUTOGRAPH_TRACE=/nonexistent/dir/t.bin "$H/loop8" 5
    assert_success
    assert_output --partial "PASS loop8"
    assert_equal "$(grep -c 'AUTOGRAPH_TRACE' <<<"$stderr")" 1
    assert_equal "$(grep -c 'warning' <<<"$stderr")" 1
    [[ "$stderr" == *"/nonexistent/dir/t.bin"* ]] || fail "the warning does not name the file: $stderr"
}

@test "trace: a fork child records nothing into the parent's file" {
    rec "$H/fork" 10
    assert_success
    dump "$T"
    # one header, one END, every call in sequence: nothing of the child's in between
    assert_equal "$(records TRACE)" 1
    assert_equal "$(records END)" 1
    run awk '{ for (i = 1; i <= NF; i++) if ($i == "seq" && $1 != "GPU") { if ($(i + 1) != n) bad = 1; n++ } }
             $1 == "END" { print ($5 == n && !bad) }' "$BATS_TEST_TMPDIR/dump.txt"
    assert_output 1
}

@test "trace: summary counts what dump shows" {
    rec "$H/traceops" 4
    assert_success
    dump "$T"
    run "$CLI" trace summary "$T"
    assert_success
    assert_line --regexp "^  LAUNCH +$(calls LAUNCH)\$"
    assert_line --regexp "^  OP +$(grep -c ' OP ' "$BATS_TEST_TMPDIR/dump.txt")\$"
    assert_line --regexp "^  cuEventRecord +8\$"
    assert_line --regexp "^  \[memsetD32\] +4\$"
    assert_line --regexp "^recorded time [0-9.]+ ms"
    # launches per stream: S has A, B (8), S2 has D (4), S3 the captured C (1)
    run awk '/^launches per stream:/ { on = 1; next } on { print $NF }' <<<"$output"
    assert_equal "$(echo $output | tr ' ' '\n' | sort -n | tr '\n' ' ')" "1 4 8 "
}

@test "trace: a cut file, a foreign one, another version: one clear error each, exit 1" {
    rec "$H/loop8" 3
    assert_success
    local size
    size=$(stat -c %s "$T")
    check() { # file, expected message
        run --separate-stderr "$CLI" trace dump "$1"
        assert_failure 1
        assert_equal "$(wc -l <<<"$stderr")" 1
        [[ "$stderr" == *"$2"* ]] || fail "expected '$2', got: $stderr"
        run --separate-stderr "$CLI" trace summary "$1"
        assert_failure 1
        [[ "$stderr" == *"$2"* ]] || fail "summary: expected '$2', got: $stderr"
    }
    head -c $((size - 48)) "$T" >"$BATS_TEST_TMPDIR/cut1"   # without its END record
    check "$BATS_TEST_TMPDIR/cut1" "no END record"
    head -c $((size - 20)) "$T" >"$BATS_TEST_TMPDIR/cut2"   # inside the END record
    check "$BATS_TEST_TMPDIR/cut2" "cut short inside a record"
    head -c 100 "$T" >"$BATS_TEST_TMPDIR/cut3"              # inside the file header
    check "$BATS_TEST_TMPDIR/cut3" "cut short inside its header"
    check /bin/sh "not an autograph trace"
    : >"$BATS_TEST_TMPDIR/empty"
    check "$BATS_TEST_TMPDIR/empty" "is empty"
    cp "$T" "$BATS_TEST_TMPDIR/v2"
    printf '\002' | dd of="$BATS_TEST_TMPDIR/v2" bs=1 seek=8 conv=notrunc status=none
    check "$BATS_TEST_TMPDIR/v2" "format version 2"
    check "$BATS_TEST_TMPDIR/missing" "cannot open"
    # what was read before the cut is still shown
    run "$CLI" trace dump "$BATS_TEST_TMPDIR/cut1"
    assert_line --partial "cuStreamDestroy_v2 (destroy)"
    run "$CLI" trace frobnicate "$T"
    assert_failure 2
}

@test "trace: FILE.gz is read through gzip" {
    rec "$H/loop8" 3
    assert_success
    gzip -c "$T" >"$T.gz"
    run "$CLI" trace dump "$T"
    local plain="$output"
    run "$CLI" trace dump "$T.gz"
    assert_success
    assert_equal "$output" "$plain"
    gzip -c /bin/sh >"$BATS_TEST_TMPDIR/sh.gz"
    run --separate-stderr "$CLI" trace dump "$BATS_TEST_TMPDIR/sh.gz"
    assert_failure 1
    [[ "$stderr" == *"not an autograph trace"* ]] || fail "$stderr"
    head -c 200 "$T.gz" >"$BATS_TEST_TMPDIR/cut.gz"
    run --separate-stderr "$CLI" trace dump "$BATS_TEST_TMPDIR/cut.gz"
    assert_failure 1
}

@test "trace: the reader never crashes: every truncation of a recorded trace, random bytes" {
    local t="$BATS_TEST_DIRNAME/../build/tests/test_traceread"
    [ -x "$t" ] || skip "build/tests/test_traceread is not built (make test-unit)"
    rec env AUTOGRAPH_TRACE_GPU=1 "$H/traceops" 2
    assert_success
    run "$t" "$T"
    assert_success
    run "$t"
    assert_success
}

@test "trace: event queries and waits are handed out wrapped only while recording" {
    local p="$BATS_TEST_DIRNAME/../build/tests/procaddr"
    [ -x "$p" ] || skip "make progs first"
    run env LD_PRELOAD="$LIB" "$p"
    assert_success
    assert_output --partial "PASS: 0 failures"
    run env LD_PRELOAD="$LIB" AUTOGRAPH_TRACE="$T" "$p"
    assert_success
    assert_output --partial "PASS: 0 failures"
}

@test "trace: steps groups a decode-like step's variants and names where each differs" {
    # queue align: 16 launches a step, position 14 one of four kernels in turn (q_av0..3)
    rec "$H/queue" align 40
    assert_success
    run "$CLI" trace steps "$T"
    assert_success
    assert_line --partial "40 segments of 16 or more"
    assert_line --regexp "^group 1 on stream .*: 40 occurrences in 4 variants of 16-16, first q_a0$"
    [ "$(grep -c 'differs at 1 position:' <<<"$output")" -eq 3 ] || fail "$output"
    [ "$(grep -cE '^    14: q_av[0-3] -> q_av[0-3]$' <<<"$output")" -eq 3 ] || fail "$output"
    # a GPU trace: Llama's decode step (F15d) in six variants of 221 launches (and a seventh of
    # 225), where cuDNN's kernels compiled once per sequence length count as one (a function
    # class: the same name and parameters), not 32 variants
    run "$CLI" trace steps "$BATS_TEST_DIRNAME/../bench/traces/F15d_hf_llama_dynamic.agt.gz"
    assert_success
    assert_line --regexp "^group 1 on stream 0: 159 occurrences in 7 variants of 221-225, "
}
