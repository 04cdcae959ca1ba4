#!/usr/bin/env bats
# `autograph report` on stats made by the fake-driver harness, the stats and log files with
# %p, the autograph[PID] / [PID:TID] prefix and the warning cap. Build first: make lib cli
# harness.

setup() {
    load helpers
    H="$BUILD/harness"
    for f in "$LIB" "$CLI" "$BUILD/fakecuda/libcuda.so.1" "$H/loop8" "$H/stress" "$H/ptds"; do
        [ -e "$f" ] || skip "$f is not built: run 'make lib cli harness' first"
    done
    unset AUTOGRAPH_DISABLE AUTOGRAPH_FAULT AUTOGRAPH_PROFILE AUTOGRAPH_ALLOW AUTOGRAPH_DENY \
          AUTOGRAPH_MAX_NODES AUTOGRAPH_MAX_GRAPHS AUTOGRAPH_MAX_GRAPH_MEM AUTOGRAPH_LOG \
          AUTOGRAPH_LOG_FILE AUTOGRAPH_STATS FAKECUDA_FAIL FAKECUDA_DELAY_US FAKECUDA_TRACE
    T="$BATS_TEST_TMPDIR"
}

# hx PROGRAM [ARGS...]: a harness program under the library, graphing deterministic (graphs
# built where they are first replayed: a worker late on a loaded machine builds none in time).
hx() {
    run --separate-stderr timeout 120 env LD_PRELOAD="$LIB" AUTOGRAPH_MIN_REPEATS=2 \
        AUTOGRAPH_BENEFIT=always AUTOGRAPH_MAX_HOLD_US=10000000 AUTOGRAPH_WORKER=0 "$@"
}

# jq_py FILE EXPR: a value of a JSON file (python, as the other tests use).
jq_py() {
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

@test "AUTOGRAPH_STATS with %p: one file per process, named by its pid, schema 2" {
    hx AUTOGRAPH_STATS="$T/s.%p.json" "$H/stress"
    assert_success
    files=("$T"/s.*.json)
    [ "${#files[@]}" -eq 1 ] || fail "expected one stats file: ${files[*]}"
    pid=$(jq_py "${files[0]}" 'd["pid"]')
    [ "${files[0]}" = "$T/s.$pid.json" ]
    assert_equal "$(jq_py "${files[0]}" 'd["schema"]')" "libautograph-stats/2"
    # every sequence carries the schema-2 fields; these are graphed (BENEFIT=always)
    assert_equal "$(jq_py "${files[0]}" 'sorted({q["status"] for q in d["top_sequences"]})')" "['graphed']"
    assert_equal "$(jq_py "${files[0]}" 'all(q["kernel_names"] and q["length"] >= len(q["kernel_names"]) and len(q["reasons"]) == 10 for q in d["top_sequences"])')" "True"
    assert_equal "$(jq_py "${files[0]}" 'type(d["not_graphed"]).__name__')" "list"
}

@test "report on a harness run: processes, graphed sequences with kernel names" {
    hx AUTOGRAPH_STATS="$T/s.%p.json" "$H/stress"
    assert_success
    f=("$T"/s.*.json)
    pid=$(jq_py "$f" 'd["pid"]')
    launches=$(jq_py "$f" 'sum(v for k, v in d["counters"].items() if k.startswith("launches.cuLaunch"))')
    seqs=$(jq_py "$f" 'len(d["top_sequences"])')
    run "$CLI" report "$f"
    assert_success
    assert_line --index 0 --regexp "^1 process, $launches launches, [0-9.]+% replayed in graphs"
    assert_line --regexp "^  $pid +vm|^  $pid +[^ ]+ +$launches "
    assert_line "Graphed (by estimated saving)"
    # one row per graphed sequence, each naming the harness's kernels
    [ "$(grep -cE "^  $pid +[0-9]+ +[0-9]+ .*st_[abc]" <<<"$output")" -eq "$seqs" ]
}

# two_processes: the stress and ptds harness programs, each writing its stats JSON; files: the
# two files, total: their kernel launches.
two_processes() {
    hx AUTOGRAPH_STATS="$T/s.%p.json" "$H/stress"
    assert_success
    hx AUTOGRAPH_STATS="$T/s.%p.json" "$H/ptds"
    assert_success
    files=("$T"/s.*.json)
    [ "${#files[@]}" -eq 2 ]
    total=0
    for f in "${files[@]}"; do
        total=$((total + $(jq_py "$f" 'sum(v for k, v in d["counters"].items() if k.startswith("launches.cuLaunch"))')))
    done
}

@test "report sums several processes and keeps one line each" {
    two_processes
    run "$CLI" report "${files[@]}"
    assert_success
    assert_line --index 0 --regexp "^2 processes, $total launches"
    for f in "${files[@]}"; do
        assert_line --regexp "^  $(jq_py "$f" 'd["pid"]') "
    done
    assert_line --regexp "^  total +$total "
    assert_output --partial "ptds_a"
    assert_output --partial "st_a"
}

@test "report --markdown: headings and tables" {
    hx AUTOGRAPH_STATS="$T/s.%p.json" "$H/stress"
    run "$CLI" report --markdown "$T"/s.*.json
    assert_success
    assert_line "## libautograph report"
    assert_line "### Graphed (by estimated saving)"
    assert_line --regexp '^\| pid \| length \| replays '
    assert_line --regexp '^\|---\|---\|'
    assert_line --regexp '^\| [0-9]+ \| [0-9]+ \| [0-9]+ .*`st_'
}

# A stats file written by hand: what the engine will fill for sequences that were not graphed.
write_stats() {
    cat >"$1" <<'JSON'
{"schema": "libautograph-stats/2", "pid": 77, "host": "h1",
 "counters": {"launches.cuLaunchKernel": 1000, "launches.replayed": 600, "graphs.built": 1,
              "graphs.replays": 100},
 "estimated_saved_us": 1500.0, "warnings_suppressed": 3, "sequences_total": 2,
 "top_sequences": [
  {"key": "00000000000000aa", "length": 6, "replays": 100, "eager_runs": 2, "state": "graph",
   "median_graph_us": 20.0, "median_eager_us": 35.0, "kernels": "_Z6kernelPfi",
   "status": "graphed", "kernel_names": ["_Z6kernelPfi", "plain_c_kernel"],
   "reasons": {"divergence": 1}, "estimated_saved_us": 1500.0},
  {"key": "00000000000000bb", "length": 3, "replays": 0, "eager_runs": 50, "state": "eager",
   "median_graph_us": 0, "median_eager_us": 0, "kernels": "odd",
   "status": "never_graphable", "kernel_names": ["odd"],
   "reasons": {"divergence": 0, "ungraphable_attribute": 50, "copy": 2}}],
 "not_graphed": [{"reason": "ungraphable_attribute", "count": 50, "unit": "launches", "sequences": 1},
                 {"reason": "divergence", "count": 4, "unit": "holds", "sequences": 1}]}
JSON
}

@test "report: not graphed and why; C++ names demangled when libstdc++ is there" {
    write_stats "$T/a.json"
    run "$CLI" report "$T/a.json"
    assert_success
    assert_line --index 0 "1 process, 1000 launches, 60.0% replayed in graphs, estimated saving 1.500 ms"
    assert_line --regexp '^  77 +3 +never_graphable +50 +ungraphable_attribute \(50\) +odd$'
    assert_line --regexp '^  ungraphable_attribute +50 +launches +1$'
    assert_line --regexp '^  divergence +4 +holds +1$'
    # the first row of "Why" is the largest count
    [ "$(grep -A2 '^Why launches' <<<"$output" | tail -1 | awk '{print $1}')" = ungraphable_attribute ]
    if ldconfig -p 2>/dev/null | grep -q 'libstdc++\.so\.6 '; then
        assert_line --regexp '^  77 +6 +100 +2 +20\.0 +35\.0 +1\.500 +kernel\(float\*, int\), plain_c_kernel$'
    fi
    run env AUTOGRAPH_REPORT_NO_DEMANGLE=1 "$CLI" report "$T/a.json"
    assert_line --regexp ' _Z6kernelPfi, plain_c_kernel$'
}

@test "report reads schema 1 files too (state mapped to a status)" {
    cat >"$T/old.json" <<'JSON'
{"schema": "libautograph-stats/1", "pid": 5, "counters": {"launches.cuLaunchKernel": 10},
 "top_sequences": [{"key": "1", "length": 2, "replays": 0, "eager_runs": 9, "state": "eager",
   "median_graph_us": 3.0, "median_eager_us": 2.0, "kernels": "k1,k2"}]}
JSON
    run "$CLI" report "$T/old.json"
    assert_success
    assert_line --regexp '^  5 +2 +eager_policy +9 +- +k1, k2$'
}

@test "report: bad files give a message and exit 1, the good ones are still reported" {
    write_stats "$T/a.json"
    printf 'not json' >"$T/bad.json"
    printf '{"schema": "something-else"}' >"$T/other.json"
    run --separate-stderr "$CLI" report "$T/a.json" "$T/bad.json" "$T/other.json" "$T/missing.json"
    assert_failure 1
    [[ "$stderr" == *"bad.json: not valid JSON"* ]]
    [[ "$stderr" == *"other.json: not a libautograph stats file"* ]]
    [[ "$stderr" == *"cannot read $T/missing.json"* ]]
    assert_line --index 0 --partial "1 process, 1000 launches"
    run "$CLI" report
    assert_failure 2
    run "$CLI" report --frob "$T/a.json"
    assert_failure 2
}

@test "report: where every launch went, shares that add up to 100%" {
    two_processes
    run "$CLI" report "${files[@]}"
    assert_success
    assert_line "Where every launch went (all processes)"
    rows=$(sed -n '/^Where every launch went/,$p' <<<"$output" | sed '1,2d')
    # every fate once, launches summing to all launches, shares to 100.0%, no launch unaccounted
    grep -q '^  replayed ' <<<"$rows" || fail "no replayed row: $rows"
    grep -q '^  app_capture ' <<<"$rows" || fail "no app_capture row: $rows"
    ! grep -q unaccounted <<<"$rows"
    assert_equal "$(awk '$1 != "total" { n += $2 } END { print n }' <<<"$rows")" "$total"
    assert_equal "$(awk '$1 != "total" { sub("%", "", $3); s += $3 * 10 } END { print s }' <<<"$rows")" 1000
    assert_line --regexp "^  total +$total +100\.0%"
    # the header's share replayed is fate.replayed, kernel launches only
    rep=0
    for f in "${files[@]}"; do
        rep=$((rep + $(jq_py "$f" 'd["fates"]["replayed"]')))
    done
    pct=$(python3 -c "print('%.1f' % (100.0 * $rep / $total))")
    assert_line --index 0 --regexp "^2 processes, $total launches, $pct% replayed in graphs"
}

@test "report: fates by hand (rounding to 100.0%, launches without a fate, replayed copies)" {
    cat >"$T/f.json" <<'JSON'
{"schema": "libautograph-stats/2", "pid": 8, "host": "h",
 "counters": {"launches.cuLaunchKernel": 4, "launches.replayed": 9, "copies.replayed": 6},
 "fates": {"replayed": 1, "eager_learning": 1, "diverged": 1, "ungraphable": 0},
 "top_sequences": [], "not_graphed": []}
JSON
    run "$CLI" report "$T/f.json"
    assert_success
    assert_line --index 0 --partial "1 process, 4 launches, 25.0% replayed in graphs"
    assert_line --regexp '^  (replayed|eager_learning|diverged) +1 +25\.0% '
    assert_line --regexp '^  unaccounted +1 +25\.0% '
    assert_line --regexp '^  total +4 +100\.0%'
    refute_line --regexp '^  ungraphable '
    cat >"$T/g.json" <<'JSON'
{"schema": "libautograph-stats/2", "pid": 9, "host": "h",
 "counters": {"launches.cuLaunchKernel": 3},
 "fates": {"replayed": 1, "eager_learning": 1, "hold_timeout": 1}}
JSON
    run "$CLI" report "$T/g.json"
    assert_success
    assert_equal "$(sed -n '/^Where every launch went/,$p' <<<"$output" | grep -cE '^  [a-z_]+ +1 +33\.[34]% ')" 3
    assert_line --regexp '^  total +3 +100\.0%'
    # before fates: launches.replayed counts replayed copies too, never more than all launches
    cat >"$T/h.json" <<'JSON'
{"schema": "libautograph-stats/2", "pid": 10, "counters": {"launches.cuLaunchKernel": 4, "launches.replayed": 9}}
JSON
    run "$CLI" report "$T/h.json"
    assert_success
    assert_line --index 0 --partial "1 process, 4 launches, 100.0% replayed in graphs"
    refute_output --partial "Where every launch went"
}

@test "report: the trials' in-process comparison, over every sequence timed both ways" {
    # process 8: two sequences, eager/graph 2.0 and 0.5 (a trial lost); process 9: 2.0; one
    # sequence never timed as a graph (left out): geometric mean (2 * 0.5 * 2)^(1/3)
    cat >"$T/a.json" <<'JSON'
{"schema": "libautograph-stats/2", "pid": 8, "host": "h", "counters": {"launches.cuLaunchKernel": 40},
 "top_sequences": [
  {"key": "1", "length": 4, "replays": 9, "eager_runs": 3, "state": "graph", "status": "graphed",
   "median_graph_us": 50.0, "median_eager_us": 100.0, "kernel_names": ["k"]},
  {"key": "2", "length": 2, "replays": 1, "eager_runs": 9, "state": "eager", "status": "eager_policy",
   "median_graph_us": 20.0, "median_eager_us": 10.0, "kernel_names": ["k"]},
  {"key": "3", "length": 2, "replays": 0, "eager_runs": 9, "state": "eager", "status": "trial",
   "median_graph_us": 0, "median_eager_us": 10.0, "kernel_names": ["k"]}]}
JSON
    cat >"$T/b.json" <<'JSON'
{"schema": "libautograph-stats/2", "pid": 9, "host": "h", "counters": {"launches.cuLaunchKernel": 40},
 "top_sequences": [
  {"key": "1", "length": 4, "replays": 9, "eager_runs": 3, "state": "graph", "status": "graphed",
   "median_graph_us": 5.0, "median_eager_us": 10.0, "kernel_names": ["k"]}]}
JSON
    run "$CLI" report "$T/a.json" "$T/b.json"
    assert_success
    assert_line "In-process trials: 3 sequences in 2 processes timed both ways inside their process: eager / graph per occurrence 1.260x (geometric mean; 0.500-2.000)."
    run "$CLI" report "$T/b.json"
    assert_success
    assert_output --partial "1 sequence in 1 process"
    # nothing timed both ways: no line
    cat >"$T/c.json" <<'JSON'
{"schema": "libautograph-stats/2", "pid": 10, "counters": {"launches.cuLaunchKernel": 4}, "top_sequences": []}
JSON
    run "$CLI" report "$T/c.json"
    assert_success
    refute_output --partial "In-process trials"
}

@test "report: graph updates summed over processes, only when there were any" {
    cat >"$T/a.json" <<'JSON'
{"schema": "libautograph-stats/2", "pid": 8, "host": "h",
 "counters": {"launches.cuLaunchKernel": 40, "graphs.replays": 10, "updates.per_node": 4,
              "updates.per_node_nodes": 12, "updates.whole_graph": 2, "updates.variant": 3}}
JSON
    cat >"$T/b.json" <<'JSON'
{"schema": "libautograph-stats/2", "pid": 9, "host": "h",
 "counters": {"launches.cuLaunchKernel": 40, "graphs.replays": 5, "updates.per_node": 2,
              "updates.per_node_nodes": 12}}
JSON
    run "$CLI" report "$T/a.json" "$T/b.json"
    assert_success
    assert_line "Graph updates: 8 of 15 graph replays first set changed values: 6 node by node (4.0 nodes each), 2 with one whole-graph update; 3 swapped to a second graph instead. AUTOGRAPH_LOG=debug names the values that change."
    cat >"$T/c.json" <<'JSON'
{"schema": "libautograph-stats/2", "pid": 10, "counters": {"launches.cuLaunchKernel": 4, "graphs.replays": 4, "updates.none": 3}}
JSON
    run "$CLI" report "$T/c.json"
    assert_success
    refute_output --partial "Graph updates"
}

@test "report never crashes: every truncation, flipped bytes, garbage" {
    hx AUTOGRAPH_STATS="$T/s.%p.json" "$H/stress"
    f=("$T"/s.*.json)
    write_stats "$T/a.json"
    for src in "$f" "$T/a.json"; do
        size=$(stat -c %s "$src")
        for ((n = 0; n < size; n += 13)); do
            head -c "$n" "$src" >"$T/cut.json"
            run "$CLI" report "$T/cut.json"
            [ "$status" -eq 1 ] || fail "truncated to $n bytes: exit $status"
        done
    done
    # random bytes replaced, and pure garbage: exit 0 or 1, never a signal
    for i in $(seq 1 150); do
        python3 - "$T/a.json" "$T/fz.json" "$i" <<'PY'
import random, sys
random.seed(int(sys.argv[3]))
b = bytearray(open(sys.argv[1], "rb").read())
if int(sys.argv[3]) % 5 == 0:
    b = bytearray(random.randbytes(random.randrange(1, 600)))
else:
    for _ in range(random.randrange(1, 6)):
        b[random.randrange(len(b))] = random.choice(b'{}[]",:0123456789-.eE\\u \x00\xff' + bytes([random.randrange(256)]))
open(sys.argv[2], "wb").write(b)
PY
        run "$CLI" report "$T/fz.json"
        [ "$status" -le 1 ] || fail "input $i: exit $status"
    done
}

@test "AUTOGRAPH_LOG_FILE with %p: the log and the summary go to the process's own file" {
    hx AUTOGRAPH_LOG=info AUTOGRAPH_STATS="$T/s.%p.json" AUTOGRAPH_LOG_FILE="$T/log.%p.txt" "$H/loop8"
    assert_success
    refute_output --partial "autograph"
    assert_equal "$stderr" ""
    pid=$(jq_py "$T"/s.*.json 'd["pid"]')
    [ -f "$T/log.$pid.txt" ] || fail "no $T/log.$pid.txt: $(ls "$T")"
    log=$(cat "$T/log.$pid.txt")
    [[ "$log" == *"autograph[$pid]: options: "*"MIN_REPEATS=2 (default 3)"* ]]
    [[ "$log" == *"autograph[$pid]: launches.replayed "* ]]
    # every line carries this process's pid
    [ "$(grep -cv "^autograph\[$pid\(:[0-9]*\)\?\]: " "$T/log.$pid.txt")" -eq 0 ]
}

@test "the pid in every line's prefix, the tid for other threads" {
    hx AUTOGRAPH_LOG=debug AUTOGRAPH_STATS=1 "$H/ptds"
    assert_success
    pids=$(grep -o '^autograph\[[0-9]*' <<<"$stderr" | sort -u)
    [ "$(wc -l <<<"$pids")" -eq 1 ] || fail "several pids: $pids"
    pid=${pids#autograph[}
    # nothing of ours without the prefix; the workers' lines name their tid, a different one
    [ "$(grep -v '^fakecuda' <<<"$stderr" | grep -cv "^autograph\[$pid\(:[0-9]*\)\?\]: ")" -eq 0 ]
    tids=$(grep -o "^autograph\[$pid:[0-9]*\]" <<<"$stderr" | sort -u | wc -l)
    [ "$tids" -ge 2 ] || fail "expected lines from worker threads"
    ! grep -q "^autograph\[$pid:$pid\]" <<<"$stderr"
    grep -q "^autograph\[$pid\]: launches.replayed " <<<"$stderr" # the main thread, at exit
}

@test "warning cap: one kind printed 10 times, then counted, the count printed at exit" {
    # 13 invalid options: 13 warnings of one format
    hx AUTOGRAPH_DISABLE=x AUTOGRAPH_MIN_REPEATS=x AUTOGRAPH_MAX_NODES=x AUTOGRAPH_MAX_GRAPHS=x \
        AUTOGRAPH_MAX_GRAPH_MEM=x AUTOGRAPH_MAX_HOLD_US=x AUTOGRAPH_LOG=x AUTOGRAPH_LOG_FILE=$'\t' \
        AUTOGRAPH_STATS=x AUTOGRAPH_ALLOW=, AUTOGRAPH_DENY=, AUTOGRAPH_BENEFIT=x AUTOGRAPH_FAULT=x \
        "$H/loop8"
    assert_success
    [ "$(grep -c ': warning: invalid AUTOGRAPH_' <<<"$stderr")" -eq 10 ]
    [ "$(grep -c 'further warnings of this kind suppressed' <<<"$stderr")" -eq 1 ]
    grep ': warning: invalid AUTOGRAPH_' <<<"$stderr" | tail -1 | grep -q '(further warnings of this kind suppressed)$'
    grep -qE '^autograph\[[0-9]+\]: warning: 3 more warnings like "invalid %s=.*" were suppressed$' <<<"$stderr"
}
