#!/usr/bin/env bats
# Issue 3: with graphing on, every app gives identical results, and the report shows graphs
# built and replayed; plus the dedicated engine scenarios.

setup() {
    load helpers
    require_gpu
    # deterministic graphing for correctness tests, built where they are asked (replay counts
    # do not depend on how fast the worker builds on a GPU shared with other tests); the
    # default policy and the worker are tested separately
    export AUTOGRAPH_STATS=1 AUTOGRAPH_BENEFIT=always AUTOGRAPH_WORKER=0
}

graphed() { # at least one graph built and replayed
    [ "$(s graphs.built)" -ge 1 ] || fail "no graph built: $stderr"
    [ "$(s graphs.replays)" -ge 1 ] || fail "no replay: $stderr"
}

@test "tiny: constant arguments, replayed without updates" {
    same_results tiny --iters=300
    graphed
    [ "$(s updates.none)" -ge 250 ]
    [ "$(s failures.build)" -eq 0 ]
}

@test "tiny: pointer ping-pong and a scalar changing every iteration" {
    same_results tiny --iters=300 --vary=1
    graphed
    [ $(( $(s updates.per_node) + $(s updates.whole_graph) )) -ge 250 ]
}

@test "tiny: divergence in mid-sequence" {
    # every 7th iteration has an extra kernel in the middle: it diverges from the learned
    # sequence until the variant is learned too (as a template sharing the prefix)
    same_results tiny --iters=300 --diverge-every=7
    graphed
    [ "$(s flushes.divergence)" -ge 1 ]
    [ "$(s sequences.templates)" -ge 2 ]
    [ "$(s graphs.replays)" -ge 280 ]
}

@test "tiny: no sync for 100 iterations (chunked, period-aligned sequences)" {
    same_results tiny --iters=1000 --sync-every=100
    graphed
    [ "$(s launches.replayed)" -gt 30000 ]
}

@test "tiny variants: shared cudart, cudaLaunchKernel, legacy stream" {
    same_results tiny-shared --iters=200
    graphed
    same_results tiny --iters=200 --api=launchkernel
    graphed
    same_results tiny --iters=200 --stream=legacy
    graphed
}

@test "tiny on per-thread default streams: identical and graphed (both builds)" {
    same_results tiny-ptsz --iters=200 --stream=legacy
    graphed
    [ "$(s launches.cuLaunchKernel_ptsz)" -gt 0 ] || fail "no _ptsz launch: $stderr"
    same_results tiny --iters=200 --stream=ptds
    graphed
}

@test "launch_ex and driver_api (attributes, extra-form arguments)" {
    same_results launch_ex --iters=100
    graphed
    same_results driver_api --iters=100
    graphed
    same_results driver_api-ptsz --iters=100
    graphed
}

@test "modcopies: one kernel in 4 modules shares one template; its node changes copy in exec updates" {
    same_results modcopies --iters=200 --copies=4
    graphed
    # one sequence for every step whichever copy it runs (a template per copy without classes)
    [ "$(s sequences.templates)" -eq 1 ] || fail "$(s sequences.templates) templates"
    [ "$(s graphs.replays)" -ge 150 ]
    [ "$(s failures.update)" -eq 0 ] || fail "the driver refused an exec update: $stderr"
    [ "$(s cache.invalidations)" -eq 0 ]
}

@test "an event recorded mid-sequence, waited on by another stream" {
    same_results multistream --iters=200 --repeat=4
    graphed
}

@test "the legacy default stream mixed with a blocking stream" {
    same_results multistream --iters=200 --repeat=4 --legacy=1
    graphed
}

@test "the application's own capture is left untouched" {
    same_results app_graphs --iters=100
    [ "$(s launches.in_app_capture)" -ge 1 ]
}

@test "a thread captures in GLOBAL mode while the worker builds another thread's graphs" {
    # every capture of the capturing thread must end without error (CHECK_CUDA exits
    # otherwise), and both buffers match the host; the worker built graphs meanwhile
    AUTOGRAPH_WORKER=1 same_results capture_worker --patterns=200 --captures=400
    [ "$(s worker.builds)" -ge 1 ] || fail "the worker built no graph"
    [ "$(s launches.in_app_capture)" -ge 1200 ]
}

@test "the worker (the default) builds: changing arguments, PDL, copy nodes, pieces: identical" {
    # how many occurrences run eagerly while a graph is built depends on the load: only that
    # the worker built what was replayed, and that nothing failed. Each loop runs long enough
    # (>= 20 ms eagerly) for a worker starved by a loaded host to finish a build before it
    # ends: the solver's 300 iterations took ~5 ms, and with every GPU suite running at once
    # its graph came after the loop (built, never replayed: 171 occurrences eager).
    for app in "tiny --iters=300 --vary=1" "pdl_decode --pdl=1 --iters=60" \
               "solver --pinned=1 --iters=3000" "tiny --n=64 --iters=300 --diverge-every=7"; do
        # shellcheck disable=SC2086
        AUTOGRAPH_WORKER=1 same_results $app
        graphed
        [ "$(s worker.builds)" -ge 1 ] || fail "$app: the worker built no graph: $stderr"
        [ "$(s failures.build)" -eq 0 ] || fail "$app: $stderr"
        [ "$(s failures.update)" -eq 0 ] || fail "$app: $stderr"
    done
}

@test "several threads, own streams and per-thread default streams" {
    same_results threads --iters=200
    graphed
    same_results threads-ptsz --iters=200
    graphed
    [ "$(s launches.cuLaunchKernel_ptsz)" -gt 0 ] || fail "no _ptsz launch: $stderr"
}

@test "a host thread spinning on mapped memory that a held kernel writes finishes" {
    require_app spin
    # chunks of 64 launches (the loop never synchronises): learned well within the run
    run --separate-stderr timeout 120 env LD_PRELOAD="$LIB" AUTOGRAPH_MAX_NODES=64 "$APPS/spin" --iters=300
    printf '%s\n' "$output" "$stderr"
    assert_success
    assert_equal "$(field result)" "OK"
    # what the test is about: kernels were held, and the watchdog released them (the host made
    # no CUDA call while it waited)
    [ "$(s launches.held)" -ge 1 ] || fail "nothing held: the scenario did not happen"
    [ "$(s flushes.timeout)" -ge 1 ] || fail "no watchdog flush"
}

@test "compute-bound and irregular programs are unchanged" {
    same_results heavy --iters=10
    same_results irregular --iters=300
}

@test "cuBLAS loop: identical, most launches replayed" {
    same_results cublas_loop --iters=200
    graphed
    pct=$(s launches.replayed_percent)
    [ "${pct%.*}" -ge 50 ] || fail "only $pct% replayed: $stderr"
}

@test "PyTorch loop: identical values, most launches replayed" {
    python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null || skip "no PyTorch with CUDA"
    run_both python3 "$ROOT/bench/torch_mlp.py" --iters=200 --check
    printf '%s\n' "$plain_output" "---" "$output" "$stderr"
    assert_equal "$plain_status" 0
    assert_success
    assert_equal "$(field checksum)" "$(plain_field checksum)"
    graphed
    pct=$(s launches.replayed_percent)
    [ "${pct%.*}" -ge 50 ] || fail "only $pct% replayed: $stderr"
    # the replayed sequences hold cuBLAS's kernels
    run env LD_PRELOAD="$LIB" AUTOGRAPH_STATS="$BATS_TEST_TMPDIR/t.json" python3 "$ROOT/bench/torch_mlp.py" --iters=100
    assert_success
    python3 -c 'import json, re, sys
d = json.load(open(sys.argv[1]))
names = " ".join(q["kernels"] for q in d["top_sequences"])
assert re.search("gemm|gemv|xmma|cutlass", names, re.I), names' "$BATS_TEST_TMPDIR/t.json"
}

@test "the default policy keeps graphs on for a launch-bound loop" {
    unset AUTOGRAPH_BENEFIT
    same_results tiny --iters=400
    [ "$(s policy.graph_wins)" -ge 1 ]
    pct=$(s launches.replayed_percent)
    [ "${pct%.*}" -ge 70 ] || fail "only $pct% replayed: $stderr"
}

@test "the default policy turns graphs off for a compute-bound loop" {
    # Either verdict keeps the loop eager: a trial that found eager as fast, or a probe that
    # found the GPU behind the host. Which one comes depends on what else runs on the GPU
    # (with every GPU test file at once on two H200 this failed once in 60 iterations, session
    # 31 run B); 200 give the policy a re-check after a trial that noise decided for graphs.
    unset AUTOGRAPH_BENEFIT
    same_results heavy --iters=200
    [ $(( $(s policy.eager_wins) + $(s policy.gpu_bound) )) -ge 1 ] || fail "$stderr"
}

@test "fault injection on the real driver: results identical, failures counted" {
    for f in add_node:1 instantiate:1 upload:1 update:1 set_params:1 launch:2; do
        AUTOGRAPH_FAULT=$f same_results tiny --iters=100 --vary=1
        total=$(( $(s failures.build) + $(s failures.update) + $(s failures.launch) ))
        [ "$total" -ge 1 ] || fail "fault $f: nothing counted: $stderr"
    done
}

@test "AUTOGRAPH_STATS=file.json writes the documented JSON" {
    json="$BATS_TEST_TMPDIR/stats.json"
    AUTOGRAPH_STATS="$json" same_results tiny --iters=200
    python3 - "$json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "libautograph-stats/2"
c = d["counters"]
assert c["graphs.built"] >= 1 and c["graphs.replays"] >= 1
assert 0 < d["replayed_fraction"] <= 1
assert d["top_sequences"] and d["top_sequences"][0]["length"] >= 2
assert "kernel" in d["top_sequences"][0]["kernels"]
PY
}

@test "the driver's facts about function attributes and graphs, which cache/funcattr.h and the fake driver rest on" {
    # a limit lowered under an exec does not stop it; a new node or an exec update over the
    # limit is refused, as an eager launch is (kernels/attr_probe.cu)
    run --separate-stderr "$APPS/attr_probe"
    [ "$status" -ne 77 ] || skip "$output"
    assert_success
    assert_line "fact eager_over_limit: 1 ran 0"
    assert_line "fact node_over_limit: 1"
    assert_line "fact instantiate_over_limit: 0"
    assert_line "fact exec_after_lowered: 0 ran 1"
    assert_line --regexp "^fact update_over_limit: 1 "
    # under libautograph, the same answers (its hooks change none of them)
    run --separate-stderr env LD_PRELOAD="$LIB" AUTOGRAPH_BENEFIT=measure "$APPS/attr_probe"
    assert_success
    assert_line "fact eager_over_limit: 1 ran 0"
    assert_line "fact exec_after_lowered: 0 ran 1"
}
