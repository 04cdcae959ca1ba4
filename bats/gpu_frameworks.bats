#!/usr/bin/env bats
# The framework programs of bench/ (fw_*.py) with graphing on: without and with the library
# they give the same results, and the library replays what it should. Split from
# gpu_apps.bats, whose interception-only apps run beside these (device_plan.sh tests runs every
# file at once, each under a time-out).

setup() {
    load helpers
    require_gpu
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
