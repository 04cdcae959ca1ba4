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

# graphed_same MIN WHAT SCRIPT ARGS...: bench/SCRIPT run without and with the library, graphing
# on (AUTOGRAPH_BENEFIT=always): both succeed with result OK and the same checksum, and more than
# MIN launches were replayed (WHAT: the failure's words otherwise).
graphed_same() {
    local min=$1 what=$2 script=$3
    shift 3
    export AUTOGRAPH_STATS=1 AUTOGRAPH_BENEFIT=always
    run_both python3 "$ROOT/bench/$script" "$@"
    printf '%s\n' "$plain_output" "---" "$output" "$stderr"
    assert_equal "$plain_status" 0
    assert_success
    assert_equal "$(field result)" OK
    assert_equal "$(field checksum)" "$(plain_field checksum)"
    [ "$(s launches.replayed)" -gt "$min" ] || fail "$what"
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

@test "CuPy on the stream-ordered allocator (cudaMallocAsync/cudaFreeAsync temporaries) graphed: identical" {
    # graphing on: bench/fw_cupy_async.py, every temporary allocated and freed in stream order
    # on a non-blocking stream; the allocations no longer cut its sequences, the frees still
    # send what is held first -- the checksum (every iteration's energy) shows a late one
    python3 -c 'import cupy; assert cupy.cuda.runtime.getDeviceCount() > 0' 2>/dev/null || skip "no CuPy with CUDA"
    graphed_same 0 "nothing replayed" fw_cupy_async.py --iters=300 --warmup=20
}

@test "Hugging Face Llama decode, static cache: the step graphed (its copy grows a byte a token), the same tokens" {
    # bench/fw_hf_llama.py --cache=static: each decode step copies one byte more than the last
    # (a size that is a value of the step's sequence, updated in the copy node) and starts with
    # two device copies that its tail repeats (false starts the step's replays pay for); the
    # checksum is that of every generated id
    python3 -c 'import torch, transformers; assert torch.cuda.is_available()' 2>/dev/null ||
        skip "no PyTorch with CUDA, or no transformers"
    graphed_same 10000 "the steps were not replayed" fw_hf_llama.py --cache=static --iters=4 --warmup=1
}

@test "Hugging Face Llama sampling (top-k, top-p: the generator's offset an argument every step), dynamic cache, graphed: the same tokens" {
    # bench/fw_hf_llama.py --sample: the random kernels of every step take the generator's
    # seed and offset by value, so a replayed step's nodes are updated; the generator is seeded
    # before each call, so the tokens are the same with and without the library only if every
    # draw saw its own offset
    python3 -c 'import torch, transformers; assert torch.cuda.is_available()' 2>/dev/null ||
        skip "no PyTorch with CUDA, or no transformers"
    graphed_same 1000 "the steps were not replayed" fw_hf_llama.py --cache=dynamic --sample --iters=4 --warmup=1
}

@test "PyTorch inference from two threads, each on its own stream, graphed: the same answers" {
    # bench/fw_torch_threads.py: two Python threads, own models and streams, sharing the
    # caching allocator and the GIL; each thread's answers are checked in its own order
    python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null || skip "no PyTorch with CUDA"
    graphed_same 1000 "nothing much replayed" fw_torch_threads.py --iters=200 --warmup=20
}

@test "torchdiffeq: a neural ODE's adaptive solve (the step and accept read back every step) graphed: the same solutions" {
    # bench/fw_torch_ode.py: dopri5 decides every step on the host (several small syncs a step),
    # rejected steps make the runs between syncs differ; the checksum covers every solve's end
    # state, its count of function evaluations and the last solution
    python3 -c 'import torch, torchdiffeq; assert torch.cuda.is_available()' 2>/dev/null ||
        skip "no PyTorch with CUDA, or no torchdiffeq"
    graphed_same 1000 "nothing much replayed" fw_torch_ode.py --iters=20 --warmup=3
}

@test "Numba CUDA kernels on the default stream (cuda-bindings, cuGetProcAddress) graphed: the same grid" {
    # bench/fw_numba.py: a user's @cuda.jit stencil (arguments alternating between two grids),
    # a reduction read back per iteration; every launch reaches the driver through functions
    # Numba's bindings found with cuGetProcAddress
    python3 -c 'from numba import cuda; assert cuda.is_available()' 2>/dev/null ||
        skip "no Numba with CUDA"
    graphed_same 1000 "nothing much replayed" fw_numba.py --iters=100 --warmup=10
}

@test "JAX conjugate gradients in a jitted while loop (data-dependent trip count) graphed: the same answers" {
    # bench/fw_jax_cg.py: jax.scipy.sparse.linalg.cg until convergence inside jax.jit, XLA's
    # loop asking the host (or its command buffers) whether to go on; deterministic XLA ops, so
    # the answers' norms and the last answer are bit-identical with and without the library
    # (the results are the point: XLA may run the loop in its own command buffers, leaving us
    # little to replay, so any count passes; it is printed for the log)
    python3 -c 'import jax; assert jax.default_backend() == "gpu"' 2>/dev/null || skip "no JAX with CUDA"
    graphed_same -1 "" fw_jax_cg.py --iters=20 --warmup=3
    echo "# fw_jax_cg: launches.replayed $(s launches.replayed), launches.replayed_percent $(s launches.replayed_percent)" >&3
}

@test "PyTorch diffusion sampling (a UNet's DDIM steps, the step's scalars changing) graphed: the same images" {
    # bench/fw_diffusion.py: 20 UNet forwards an image with no sync between them, each step's
    # timestep and update coefficients new values (arguments updated in the replayed graphs);
    # the checksum covers every image's bytes
    python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null || skip "no PyTorch with CUDA"
    graphed_same 1000 "nothing much replayed" fw_diffusion.py --iters=6 --warmup=2
}

@test "Hugging Face T5 generate (encoder once, decoder steps with cross-attention) graphed: the same tokens" {
    # bench/fw_hf_t5.py: an encoder-decoder's greedy generate, the decoder's self-attention
    # cache growing a token a step beside the fixed cross-attention cache; the checksum is that
    # of every generated id
    python3 -c 'import torch, transformers; assert torch.cuda.is_available()' 2>/dev/null ||
        skip "no PyTorch with CUDA, or no transformers"
    graphed_same 1000 "nothing much replayed" fw_hf_t5.py --iters=6 --warmup=2
}
