#!/usr/bin/env bash
# The GPU runs the replay model needs (issue 18), in parts that each fit one device call (each
# under 9 minutes). Run from the repository root on the device, with .devdeps carried:
#
#   source .devdeps/env.sh; bash bench/device_trace.sh PART
#
#   traces     build (make -j16 all); build/kernels/costs > $OUT/costs.json; then per row an
#              untraced eager run and a traced one (AUTOGRAPH_TRACE=<dir>/<row>.%p.agt
#              AUTOGRAPH_TRACE_GPU=1, LD_PRELOAD=build/libautograph.so), each trace gzipped;
#              the summary has both runs' time_us_per_iter (the simulator's eager prediction is
#              checked against the untraced one) and whether their checksums agree
#   validate1  paired A/B runs (bench/ab.py --cpus 4-7, eager= vs ag=preload) of the C rows
#              P1 P3 C1 C2 G2 S1 S2 D1 G1 T1, then the Python rows F3 F1 F2 F4
#   validate2  likewise: F6 (torch.compile; its Inductor cache filled first), F7 (ResNet-50),
#              F8 (AMP training), F9 (CuPy CG), F10 (LSTM training), F11 (two-stream
#              prefetching inference), F12 (CuPy FFT), F13 (PyTorch batched least squares)
#              and F14 (Hugging Face BERT encoder)
#
# Every row runs the same command line in every part (the model predicts the ratio of the
# traced shape); ROWS="P1 D1" restricts a part to some rows. REPS_C (default 10) and REPS_PY
# (default 6) are the ab.py repetitions of C and Python rows; before its A/B runs each row runs
# once untimed (warming the page cache, and for F6 Inductor's cache: then twice) and that run's
# wall time sizes the row: a row gets fewer repetitions (at least 3) when the part's time budget
# (LIMIT, default 510 s from the part's start) would not hold them, and is skipped, saying so,
# when not even that fits. TRACE_ENV adds settings to the traced runs
# (e.g. TRACE_ENV="AUTOGRAPH_DISABLE=1" if the recorder wants the engine off explicitly);
# COSTS=0 leaves out the cost table's measurement (traces of some rows only).
#
# Everything lands in $OUT (default /tmp/out), at most 8 files: summary.txt (last),
# logs.tgz, and for traces costs.json, traces_c.tgz and traces_fw.tgz (a tarball over 15 MiB is
# split into .partN pieces: `cat traces_fw.tgz.part* | tar xz`).
set -uo pipefail
part=${1:?usage: device_trace.sh traces|validate1|validate2}
top=${OUT:-/tmp/out}
logs=$top/logs
tr=$top/traces
mkdir -p "$logs"
K=build/kernels
PY=python3
LIB=build/libautograph.so
LIMIT=${LIMIT:-510}
REPS_C=${REPS_C:-10}
REPS_PY=${REPS_PY:-6}
summary=$top/summary.txt
SECONDS=0

# The rows: id, name, command line. The
# iteration counts keep each trace to a few hundred iterations (the solver's 1000 iterations
# are 4 small records each) and its gzipped file small.
# traces: the C rows first (cheap), F6 last (a cold Inductor cache compiles for minutes)
ROW_IDS=(G2 S1 P1 P3 P4c C1 C2 D1 S2 G1 T1 F3 F1 F2 F4 F8 F9 F10 F11 F12 F13 F14 F15s F15d F15r F16 F17 F18 F19 F20 F21 F22 F23 F24 F7 F6)
declare -A NAME CMD
row() { NAME[$1]=$2; CMD[$1]=$3; }
row F1 torch_transformer "$PY bench/fw_torch_transformer.py --iters=60 --warmup=20"
row F2 torch_train "$PY bench/fw_torch_train.py --iters=60 --warmup=20"
row F4 hf_gpt2 "$PY bench/fw_hf_gpt2.py --iters=20 --warmup=3"
row F6 torch_compile "$PY bench/fw_torch_compile.py --iters=60 --warmup=20"
row F7 cnn_resnet50 "$PY bench/fw_cnn.py --iters=60 --warmup=20"
row F3 cupy_loop "$PY bench/fw_cupy_loop.py --iters=200 --warmup=20"
row F8 amp_train "$PY bench/fw_amp_train.py --iters=60 --warmup=20"
row F9 cupy_cg "$PY bench/fw_cupy_cg.py --iters=4 --warmup=1"
row F10 lstm_train "$PY bench/fw_lstm_train.py --iters=60 --warmup=20"
row F11 prefetch "$PY bench/fw_prefetch.py --iters=200 --warmup=20"
row F12 cupy_fft "$PY bench/fw_cupy_fft.py --iters=300 --warmup=30"
row F13 torch_solve "$PY bench/fw_torch_solve.py --iters=200 --warmup=30"
row F14 hf_bert "$PY bench/fw_hf_bert.py --iters=100 --warmup=20"
row F15s hf_llama_static "$PY bench/fw_hf_llama.py --cache=static --iters=4 --warmup=1"
row F15d hf_llama_dynamic "$PY bench/fw_hf_llama.py --cache=dynamic --iters=16 --warmup=2"
row F15r hf_llama_sample "$PY bench/fw_hf_llama.py --cache=dynamic --sample --iters=4 --warmup=1"
row F16 triton "$PY bench/fw_triton.py --iters=200 --warmup=20"
row F17 torch_streams "$PY bench/fw_torch_streams.py --iters=200 --warmup=20"
row F18 cupy_async "$PY bench/fw_cupy_async.py --iters=300 --warmup=30"
row F19 torch_threads "$PY bench/fw_torch_threads.py --iters=200 --warmup=20"
row F20 torch_ode "$PY bench/fw_torch_ode.py --iters=20 --warmup=3"
row F21 numba "$PY bench/fw_numba.py --iters=200 --warmup=10"
row F22 jax_cg "$PY bench/fw_jax_cg.py --iters=20 --warmup=3"
row F23 diffusion "$PY bench/fw_diffusion.py --iters=10 --warmup=2"
row F24 hf_t5 "$PY bench/fw_hf_t5.py --iters=16 --warmup=3"
row G2 cublas_once "$K/cublas_once"
row S1 solver_pageable "$K/solver --pinned=0 --iters=1000 --warmup=10"
row P1 tiny64 "$K/tiny --n=64 --iters=300 --warmup=50"
row P3 tiny64_sync100 "$K/tiny --n=64 --sync-every=100 --iters=300 --warmup=100"
row P4c irregular "$K/irregular --iters=1000 --warmup=50"
row C1 first_launch "$K/first_launch"
row C2 pipeline50 "$K/pipeline50"
row D1 pdl_decode "$K/pdl_decode --iters=100"
row S2 solver_pinned "$K/solver --pinned=1 --iters=1000 --warmup=10"
row G1 cublas_async "$K/cublas_async --iters=200 --warmup=20"
row T1 thrust_loop "$K/thrust_loop --iters=300"

wanted() { [ -z "${ROWS:-}" ] || [[ " $ROWS " == *" $1 "* ]]; }
is_py() { [[ ${CMD[$1]} == "$PY "* ]]; }
left() { echo $((LIMIT - SECONDS)); }
say() { echo "$*" >>"$summary"; }
field() { sed -n "s/^$1: *//p" "$2" | tail -1; }

# run_one ID TAG [ENV=VAL...]: one run of the row with those settings (no LD_PRELOAD unless
# given), stdout+stderr to logs/ID_TAG.txt; prints "time checksum result" or "FAILED(rc)".
run_one() {
    local id=$1 tag=$2
    shift 2
    local cap=60 t out=$logs/${id}_$tag.txt cmd rc
    is_py "$id" && cap=180
    [ "$id" = F6 ] && cap=300  # a cold Inductor cache compiles for minutes
    t=$(left)
    [ "$t" -lt "$cap" ] && cap=$t
    if [ "$cap" -lt 10 ]; then echo "SKIPPED(no time left)"; return; fi
    read -ra cmd <<<"${CMD[$id]}"
    env -u LD_PRELOAD "$@" timeout "$cap" "${cmd[@]}" >"$out" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then echo "FAILED(rc=$rc: $(tail -1 "$out" | cut -c1-160))"; return; fi
    echo "$(field time_us_per_iter "$out") $(field checksum "$out") $(field result "$out")"
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# ab ID: one untimed run (twice for F6) to size the row, then bench/ab.py eager= vs ag=preload
# with the repetitions that fit the time left; its table goes into the summary.
ab() {
    local id=$1 reps est need t cmd rc out=$logs/ab_$1.txt t0 probe
    reps=$REPS_C
    is_py "$id" && reps=$REPS_PY
    t0=$(now_ms)
    probe=$(run_one "$id" probe)
    if [ "$id" = F6 ]; then
        say "F6 Inductor cache filled: $probe ($(( ($(now_ms) - t0) / 1000 )) s)"
        t0=$(now_ms)
        probe=$(run_one "$id" probe2)
    fi
    est=$(( ($(now_ms) - t0) * 11 / 10000 + 1 ))  # s per process, rounded up, +10%
    t=$(left)
    while [ "$reps" -gt 3 ] && [ $((reps * 2 * est + 10)) -gt "$t" ]; do reps=$((reps - 1)); done
    need=$((reps * 2 * est + 10))
    say "== $id ${NAME[$id]}: python3 bench/ab.py --reps $reps --cpus 4-7 eager= ag=preload -- ${CMD[$id]}"
    say "   (untimed run first: $probe; about $est s per process)"
    case $probe in
    FAILED* | SKIPPED*) say "SKIPPED: the untimed run did not succeed"; return ;;
    esac
    if [ "$need" -gt "$t" ]; then
        say "SKIPPED: $t s left of the part's $LIMIT, $reps reps need about $need"
        return
    fi
    read -ra cmd <<<"${CMD[$id]}"
    # a row may take up to 2x its estimate before it is stopped, within the time left
    t=$((2 * need < t ? 2 * need : t))
    timeout "$t" python3 bench/ab.py --reps "$reps" --cpus 4-7 --lib "$LIB" --out "$logs/ab_$id.json" \
        eager= ag=preload -- "${cmd[@]}" >"$out" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
        sed -n '/^# /,$p' "$out" >>"$summary"
    else
        say "FAILED (rc=$rc$([ $rc -eq 124 ] && echo ', timed out'), ${SECONDS}s into the part):"
        tail -15 "$out" >>"$summary"
    fi
}

{
    echo "device_trace.sh $part, $(date -u '+%F %T') UTC"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    cat .commit 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo "commit: unknown"
} >"$summary" 2>&1

if ! make -j16 all >"$logs/build.log" 2>&1; then
    say "BUILD FAILED:"
    tail -40 "$logs/build.log" >>"$summary"
    tar czf "$top/logs.tgz" -C "$top" logs && rm -rf "$logs"
    cat "$summary"
    exit 1
fi
say "built in ${SECONDS}s"

case $part in
traces)
    mkdir -p "$tr"
    if [ "${COSTS:-1}" = 0 ]; then  # (COSTS=0: only the rows' traces)
        : >"$logs/costs.txt"
    elif timeout 120 $K/costs >"$top/costs.json" 2>"$logs/costs.txt"; then
        say "== costs (build/kernels/costs > costs.json)"
    else
        say "== costs FAILED (rc=$?); its stderr:"
    fi
    cat "$logs/costs.txt" >>"$summary"
    say ""
    say "== traces: id name | untraced eager: time_us_per_iter checksum result | traced: the same | checksums | trace files"
    for id in "${ROW_IDS[@]}"; do
        wanted "$id" || continue
        plain=$(run_one "$id" eager)
        # shellcheck disable=SC2086  # TRACE_ENV: words on purpose
        traced=$(run_one "$id" traced LD_PRELOAD="$LIB" AUTOGRAPH_TRACE="$tr/${id}_${NAME[$id]}.%p.agt" \
            AUTOGRAPH_TRACE_GPU=1 ${TRACE_ENV:-})
        same=n/a
        if [[ $plain == *" OK" && $traced == *" OK" ]]; then
            same=differ
            [ "${plain#* }" = "${traced#* }" ] && same=same
        fi
        files=$(find "$tr" -name "${id}_${NAME[$id]}.*.agt" | wc -l)
        say "$id ${NAME[$id]} | $plain | $traced | checksums $same | $files file(s) | ${CMD[$id]}"
    done
    gzip -9 "$tr"/*.agt 2>/dev/null
    say ""
    say "== trace files (gzipped bytes)"
    find "$tr" -name '*.agt.gz' -printf '%s %f\n' | sort -k2 >>"$summary"
    # Python rows' traces and the C rows' in two tarballs (each file coming back is <= 16 MiB)
    (cd "$tr" && ls -- F*.agt.gz >/dev/null 2>&1 && tar czf "$top/traces_fw.tgz" -- F*.agt.gz)
    (cd "$tr" && ls -- [!F]*.agt.gz >/dev/null 2>&1 && tar czf "$top/traces_c.tgz" -- [!F]*.agt.gz)
    rm -rf "$tr"
    for f in "$top"/traces_*.tgz; do
        [ -f "$f" ] || continue
        if [ "$(stat -c %s "$f")" -gt $((15 * 1024 * 1024)) ]; then
            split -b 15M -d -a 1 "$f" "$f.part" && rm -f "$f"
            say "$(basename "$f") is over 15 MiB: split into $(basename "$f").part* (cat them | tar xz)"
        fi
    done
    ;;
validate1 | validate2)
    if [ "$part" = validate1 ]; then set -- P1 P3 C1 C2 G2 S1 S2 D1 G1 T1 F3 F1 F2 F4; else set -- F6 F7 F8 F9 F10 F11 F12 F13 F14; fi
    for id in "$@"; do
        wanted "$id" || continue
        ab "$id"
    done
    ;;
*)
    echo "device_trace.sh: unknown part $part" >&2
    exit 2
    ;;
esac

say ""
say "part $part done in ${SECONDS}s"
tar czf "$top/logs.tgz" -C "$top" logs && rm -rf "$logs"
cat "$summary"
