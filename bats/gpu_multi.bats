#!/usr/bin/env bats
# Issue 10 item 7: several GPUs. One process driving two GPUs on its own streams
# (kernels/multigpu) and a PyTorch DDP training loop (bench/fw_ddp.py: 2 processes, NCCL): with
# and without the library the results are identical, nothing hangs, and the stats say what was
# graphed. Needs 2 GPUs (counted with nvidia-smi -L).

setup() {
    load helpers
    require_gpu
    ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
    [ "${ngpu:-0}" -ge 2 ] || skip "needs 2 GPUs (nvidia-smi -L lists ${ngpu:-0})"
    # deterministic graphing for correctness tests; NVLink multicast stays off on these machines
    export AUTOGRAPH_BENEFIT=always NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 \
        NVSHMEM_DISABLE_NVLS=1
}

# killed: a run that `timeout` had to stop (TERM: 124, KILL after the grace period: 137)
killed() { [ "$1" -eq 124 ] || [ "$1" -eq 137 ]; }

# mg ARGS...: kernels/multigpu without and with the library (each under a time-out); both
# succeed with the same checksum, launches were replayed, and a sequence of each device's
# kernels (mgpu_*_dev0, mgpu_*_dev1) was replayed as a graph (stats JSON, top_sequences).
mg() {
    require_app multigpu
    local json="$BATS_TEST_TMPDIR/mg.json"
    run --separate-stderr timeout -k 10 300 env -u LD_PRELOAD "$APPS/multigpu" "$@"
    plain_status=$status plain_output=$output
    local plain_stderr=$stderr
    run --separate-stderr timeout -k 10 300 env LD_PRELOAD="$LIB" AUTOGRAPH_STATS="$json" \
        "$APPS/multigpu" "$@"
    printf '%s\n' "--- plain ($plain_status):" "$plain_output" "$plain_stderr" \
        "--- preloaded ($status):" "$output" "$stderr"
    ! killed "$plain_status" || fail "multigpu hangs without the library (killed after 300 s)"
    ! killed "$status" || fail "multigpu hangs with the library (killed after 300 s)"
    [ "$plain_status" -eq 0 ] || fail "multigpu fails without the library ($plain_status)"
    assert_equal "$status" 0
    assert_equal "$(field result)" "OK"
    assert_equal "$(field checksum)" "$(plain_field checksum)"
    [ "$(s launches.replayed)" -gt 0 ] || fail "nothing replayed"
    python3 - "$json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for dev in (0, 1):
    tag = "mgpu_step_dev%d" % dev
    seqs = [q for q in d["top_sequences"]
            if tag in q["kernels"] or any(tag in k for k in q["kernel_names"])]
    print("device %d sequences (length, replays, eager_runs, status):" % dev,
          [(q["length"], q["replays"], q["eager_runs"], q["status"]) for q in seqs])
    assert any(q["replays"] > 0 for q in seqs), "no sequence of device %d was replayed" % dev
PY
}

@test "multigpu: two GPUs, own streams, peer copies each iteration: identical, graphed on both" {
    mg --iters=300
}

@test "multigpu: two GPUs, own streams, host-side combine each iteration: identical, graphed on both" {
    mg --iters=300 --combine=host
}

# ddp NAME ENV...: one torchrun job of bench/fw_ddp.py (2 workers) with the environment changes
# ENV (as for env(1)), under a time-out; outputs in $BATS_TEST_TMPDIR/NAME. The job succeeds,
# every rank's losses are finite and both ranks hold the same final parameters.
ddp() {
    local name=$1
    shift
    run --separate-stderr timeout -k 10 600 env "$@" \
        python3 -m torch.distributed.run --standalone --nproc_per_node=2 \
        "$ROOT/bench/fw_ddp.py" --iters=120 --warmup=20 --out-dir="$BATS_TEST_TMPDIR/$name"
    printf '%s\n' "--- $name ($status):" "$output" "--- $name stderr (last 150 lines):"
    printf '%s\n' "$stderr" | tail -n 150
    ! killed "$status" || fail "$name: the DDP job hangs (killed after 600 s)"
    [ "$status" -eq 0 ] || fail "$name: the DDP job fails ($status)"
    assert_equal "$(field result)" "OK"
    assert_equal "$(field ranks_agree)" "yes"
}

@test "PyTorch DDP (torchrun, 2 processes, NCCL): identical parameters with the library, stats per rank" {
    python3 -c 'import torch, torch.distributed as d; assert torch.cuda.device_count() >= 2 and d.is_nccl_available()' \
        2>/dev/null || skip "no PyTorch with CUDA and NCCL on 2 GPUs"
    local T=$BATS_TEST_TMPDIR
    ddp plain -u LD_PRELOAD
    local plain_params plain_sum
    plain_params=$(field params_checksum) plain_sum=$(field checksum)
    ddp pre LD_PRELOAD="$LIB" AUTOGRAPH_STATS="$T/stats.%p.json"
    local pre_params=$(field params_checksum) pre_sum=$(field checksum)

    # Stats: one file per process (the workers, and torchrun itself if it wrote one); each
    # worker's file is found by the pid it printed. Replays are reported, not required: NCCL's
    # kernels and DDP's hooks may legitimately keep sequences eager.
    python3 - "$T" <<'PY' >&3
import glob, json, os, sys
t = sys.argv[1]
files = sorted(glob.glob(os.path.join(t, "stats.*.json")))
assert files, "no stats file written"
for f in files:
    d = json.load(open(f))
    assert d["schema"] == "libautograph-stats/2", f
for r in (0, 1):
    lines = dict(l.split(": ", 1) for l in open(os.path.join(t, "pre", "rank%d.txt" % r)).read().splitlines())
    path = os.path.join(t, "stats.%s.json" % lines["pid"])
    assert os.path.exists(path), "rank %d (pid %s) wrote no stats file: %s" % (r, lines["pid"], files)
    d = json.load(open(path))
    c = d["counters"]
    assert "launches.replayed" in c, sorted(c)
    print("# DDP rank %d: launches.replayed %d (%.1f%% of launches), graphs.built %d, sequences %d"
          % (r, c["launches.replayed"], 100 * d["replayed_fraction"], c.get("graphs.built", -1),
             d["sequences_total"]))
    for q in d["top_sequences"][:5]:
        print("#   %3d launches, %d replays, %d eager, %s: %s"
              % (q["length"], q["replays"], q["eager_runs"], q["status"], q["kernels"][:100]))
PY

    # Seeded and deterministic, so the final parameters (and every rank's losses) are expected
    # bit-identical. If they differ, a second plain run tells whether the job is
    # nondeterministic by itself (then only a tolerance can be asked) or the library changed it.
    [ "$pre_params" = "$plain_params" ] && [ "$pre_sum" = "$plain_sum" ] && return 0
    ddp plain2 -u LD_PRELOAD
    if [ "$(field params_checksum)" = "$plain_params" ] && [ "$(field checksum)" = "$plain_sum" ]; then
        fail "the library changed the results of a deterministic DDP job: params $plain_params -> $pre_params, checksum $plain_sum -> $pre_sum"
    fi
    echo "# DDP: two runs without the library differ; comparing parameters with a tolerance" >&3
    python3 - "$T/plain/params.bin" "$T/pre/params.bin" <<'PY' >&3
import array, sys
a, b = (array.array("f", open(p, "rb").read()) for p in sys.argv[1:])
assert len(a) == len(b), (len(a), len(b))
diff = max(abs(x - y) for x, y in zip(a, b))
scale = max(abs(x) for x in a)
print("# DDP: max |plain - preloaded| = %.3g (max |param| %.3g)" % (diff, scale))
assert diff <= 5e-3, "parameters differ by %.3g" % diff
PY
}

# multi MODE: bench/fw_multi.py --mode=MODE (one process, two GPUs) without and with the
# library: both succeed with the same checksum (every iteration's answers or losses, and the
# final outputs or parameters), and the stats say what was replayed on each device.
multi() {
    if [ "$1" = pmap ]; then
        python3 -c 'import jax; assert jax.default_backend() == "gpu" and jax.local_device_count() >= 2' \
            2>/dev/null || skip "no JAX on 2 GPUs"
    else
        python3 -c 'import torch; assert torch.cuda.device_count() >= 2' 2>/dev/null ||
            skip "no PyTorch with CUDA on 2 GPUs"
    fi
    local json="$BATS_TEST_TMPDIR/multi.json"
    run --separate-stderr timeout -k 10 300 env -u LD_PRELOAD \
        python3 "$ROOT/bench/fw_multi.py" --mode="$1" --iters=150 --warmup=10
    plain_status=$status plain_output=$output
    local plain_stderr=$stderr
    run --separate-stderr timeout -k 10 300 env LD_PRELOAD="$LIB" AUTOGRAPH_STATS="$json" \
        python3 "$ROOT/bench/fw_multi.py" --mode="$1" --iters=150 --warmup=10
    printf '%s\n' "--- plain ($plain_status):" "$plain_output" "$plain_stderr" \
        "--- preloaded ($status):" "$output" "$stderr"
    ! killed "$plain_status" || fail "fw_multi.py hangs without the library (killed after 300 s)"
    ! killed "$status" || fail "fw_multi.py hangs with the library (killed after 300 s)"
    [ "$plain_status" -eq 0 ] || fail "fw_multi.py fails without the library ($plain_status)"
    assert_equal "$status" 0
    assert_equal "$(field result)" "OK"
    assert_equal "$(field checksum)" "$(plain_field checksum)"
    replayed=$(python3 - "$json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["counters"]
print("# launches: %d replayed (%.1f%%), %d passed eagerly; graphs.built %d, sequences %d"
      % (c.get("launches.replayed", 0), 100 * d["replayed_fraction"], c.get("launches.eager", 0),
         c.get("graphs.built", 0), d["sequences_total"]))
for q in d["top_sequences"][:4]:
    print("#   %3d launches, %d replays, %d eager, %s: %s"
          % (q["length"], q["replays"], q["eager_runs"], q["status"], q["kernels"][:90]))
print(c.get("launches.replayed", 0))
PY
    )
    printf '%s\n' "$replayed" | sed '$d' >&3
    replayed=$(printf '%s\n' "$replayed" | tail -n 1)
}

@test "PyTorch model parallel on two GPUs (fw_multi.py --mode=pipe): identical answers with the library" {
    multi pipe
    [ "$replayed" -gt 0 ] || fail "nothing replayed"
}

@test "PyTorch nn.DataParallel on two GPUs (fw_multi.py --mode=dp): identical losses and parameters with the library" {
    multi dp
}

@test "JAX pmap on two GPUs (fw_multi.py --mode=pmap, gradients all-reduced): identical losses and parameters with the library" {
    # (JAX takes 75% of each GPU's memory at start unless told not to: the other GPU test files,
    # JAX's CG among them, run beside this one)
    XLA_PYTHON_CLIENT_PREALLOCATE=false multi pmap
}
