#!/usr/bin/env bats
# Issue 2: every sample app and build variant gives identical output, checksum and exit code
# with and without the library, and every launch is seen through the expected entry point.
# Interception only here (AUTOGRAPH_DISABLE=1); gpu_engine.bats runs the same apps graphed.

setup() {
    load helpers
    require_gpu
}

# identical_output: besides the timing line, the two runs printed the same bytes.
identical_output() {
    assert_equal "$(printf '%s\n' "$output" | grep -v '^time_us_per_iter:')" \
                 "$(printf '%s\n' "$plain_output" | grep -v '^time_us_per_iter:')"
}

# seen_through ENTRY...: the app's own launch count equals what the library counted, all of it
# through the named entry points. Reads the report from $stderr.
seen_through() {
    local want total=0 got=0 e
    want=$(field launches)
    local report="$stderr"
    for e in cuLaunchKernel cuLaunchKernel_ptsz cuLaunchKernelEx cuLaunchKernelEx_ptsz \
             cuLaunchCooperativeKernel cuLaunchCooperativeKernel_ptsz; do
        local v
        v=$(output="$report" stat "launches.$e")
        [ "$v" = missing ] && fail "no launches.$e in the report: $report"
        total=$((total + v))
        for x in "$@"; do [ "$x" = "$e" ] && got=$((got + v)); done
    done
    assert_equal "$total" "$want"
    assert_equal "$got" "$want"
}

intercept() { # ENTRIES APP ARGS...: same results, every launch seen through ENTRIES
    local entries=$1; shift
    export AUTOGRAPH_DISABLE=1 AUTOGRAPH_STATS=1
    same_results "$@"
    identical_output
    # shellcheck disable=SC2086
    seen_through $entries
}

@test "tiny, static cudart, <<<>>>" { intercept cuLaunchKernel tiny --iters=200; }
@test "tiny, shared cudart" { intercept cuLaunchKernel tiny-shared --iters=200; }
@test "tiny, cudaLaunchKernel" { intercept cuLaunchKernel tiny --iters=200 --api=launchkernel; }
@test "tiny, legacy default stream" { intercept cuLaunchKernel tiny --iters=200 --stream=legacy; }
@test "tiny, cudaStreamPerThread handle" { intercept cuLaunchKernel tiny --iters=200 --stream=ptds; }
@test "tiny, --default-stream per-thread build" {
    intercept cuLaunchKernel_ptsz tiny-ptsz --iters=200 --stream=legacy
}
@test "launch_ex: cudaLaunchKernelExC with attributes" {
    intercept "cuLaunchKernelEx cuLaunchKernel" launch_ex --iters=100
    [ "$(s launches.cuLaunchKernelEx)" -gt 0 ]
}
@test "driver_api: cuLaunchKernel (params and extra) and cuLaunchKernelEx, -lcuda" {
    intercept "cuLaunchKernel cuLaunchKernelEx" driver_api --iters=100
    [ "$(s launches.cuLaunchKernelEx)" -gt 0 ]
}
@test "driver_api, per-thread default stream build: _ptsz entry points" {
    intercept "cuLaunchKernel_ptsz cuLaunchKernelEx_ptsz" driver_api-ptsz --iters=100
}
@test "multistream with events" { intercept cuLaunchKernel multistream --iters=100 --repeat=2; }
@test "multistream with the legacy default stream" {
    intercept cuLaunchKernel multistream --iters=100 --legacy=1
}
@test "app_graphs: the application's own graphs" { intercept cuLaunchKernel app_graphs --iters=50; }
@test "threads" { intercept cuLaunchKernel threads --iters=100; }
@test "threads, per-thread default streams" { intercept cuLaunchKernel_ptsz threads-ptsz --iters=100; }
@test "spin on mapped memory" { intercept cuLaunchKernel spin --iters=20; }
@test "heavy" { intercept cuLaunchKernel heavy --iters=5; }
@test "irregular" { intercept cuLaunchKernel irregular --iters=200; }

@test "cublas_loop: cuBLAS launches are seen (through cuLaunchKernelEx)" {
    export AUTOGRAPH_DISABLE=1 AUTOGRAPH_STATS=1
    same_results cublas_loop --iters=50
    identical_output
    [ "$(s launches.cuLaunchKernelEx)" -gt 0 ]
}

@test "PyTorch: matmul + elementwise loop, identical values, every launch seen" {
    python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null || skip "no PyTorch with CUDA"
    export AUTOGRAPH_DISABLE=1 AUTOGRAPH_STATS=1
    run_both python3 "$ROOT/bench/torch_mlp.py" --iters=30 --check
    printf '%s\n' "$plain_output" "---" "$output" "$stderr"
    assert_equal "$plain_status" 0
    assert_success
    assert_equal "$(field checksum)" "$(plain_field checksum)"
    # 8 layers: every Linear (cuBLAS) and every GELU launches at least one kernel per
    # iteration, 20 warm-up + 30 timed iterations: all of them seen
    total=$(( $(s launches.cuLaunchKernel) + $(s launches.cuLaunchKernelEx) ))
    [ "$total" -ge $((16 * 50)) ] || fail "only $total launches seen"
}

@test "thrust_loop: Thrust (sort_by_key, transform, scan, reduce to the host) graphed: identical" {
    # graphing on, unlike the rest of this file: Thrust's own launches, its cudaMalloc/cudaFree
    # per call and its stream syncs around them; only the results are asserted (how much is
    # replayed is printed for the log)
    export AUTOGRAPH_STATS=1 AUTOGRAPH_BENEFIT=always
    same_results thrust_loop --iters=100
    identical_output
    echo "# thrust_loop: launches.replayed $(s launches.replayed), launches.replayed_percent $(s launches.replayed_percent)" >&3
}
