#!/usr/bin/env bash
# The runs every open issue still needs on the GPU machine, in parts that each fit one device
# call (under 10 minutes). Run from the repository root on the device, with .devdeps carried and
# an older build to compare with in .old/libautograph.so (carry it too; without it the "old"
# column is left out):
#
#   source .devdeps/env.sh; bash bench/device_plan.sh PART [PART...]
#
#   tests   build, every GPU test (bats/gpu_*.bats, in parallel), selftime of the first launches
#           and of a decode step's piece sends (the phases, the engine's own driver calls)
#   ab      paired A/B rows (bench/ab.py, 10 pairs, CPUs pinned): C1 C2 D1 D2 D3 S1 S2 G1 P4c T1
#   fw      the framework rows F1-F5 and P6 (bench/run.py), and `autograph report` on the stats
#           of a GPU run (pdl_decode, Hugging Face GPT-2)
#   p       the P rows against the hand-written graphs (bench/run.py: P1 P2 P3 P4 P5 P8)
#   goals   issues 20/21's sample-app rows, paired with the program's own graph where it has one
#           (hand = arg=--mode=graph): C1 C2 G2 P1(64, 256) P3 S1 S2 D1 (and read-backs as
#           nodes) P4c; about 7 minutes
#   goalsfw1, goalsfw2, goalsfw20
#           the framework rows the same way, the library's stats kept (AUTOGRAPH_STATS) for
#           `autograph report`: F7 F4 F1, then F6 F14 F13 F2, or issue 20's own (F1 F6 F15d);
#           about 8, 9 and 8 minutes (one call each; FWSCALE=80 gives each row 80% of its
#           time limit)
#   old     a row against older builds (scripts/old-builds.sh puts them in .old/; carry .old):
#           OLDCMD="the command" [OLDT=seconds, default 500] -- eager, this build and every
#           .old/*.so, paired (the tenth session's G2 run 4 was this, by hand)
#   harm    issue 20's rows where the library costs without graphing, paired against every
#           .old/*.so: G2 C1 C2 P4c S2; then G2's launches by state and phase (make selftime,
#           three processes); about 5 minutes
#   multi   on nvidia-h200-x2: bats/gpu_multi.bats (kernels/multigpu, bench/fw_ddp.py)
#   multiab on a two-GPU kind: paired rows, eager vs this build: M1 kernels/multigpu (peer
#           copies, then a host-side combine), M2 bench/fw_ddp.py (torchrun, 2 ranks, NCCL;
#           stats kept for `autograph report`), M3, M4 and M5 bench/fw_multi.py (one process on
#           both GPUs: model parallel, nn.DataParallel, jax.pmap); about 9 minutes
#   f6      F6 (torch.compile) eager, this build and interception alone, each process's host
#           speed paired (bench/fw_common.py's host_calib_us); 7 minutes after the build
#   inproc  the library on against paused inside each process (bench/inproc.py, INPROC_ROUNDS: 8
#           rounds of a block each way, 4 processes and a reference without the library): F1,
#           F6, F15d, F4, P1 n=64, D1, P4c, free of the host speed that differs between
#           processes; ~8 minutes
#   ONLY="C1 G2" limits a part's paired and in-process rows to those named.
#   fwnew   F20-F22 (torchdiffeq, Numba, JAX CG): their GPU tests, paired processes with
#           `autograph report`, in-process pairs; about 7 minutes
#   fwnew2  F23, F24 (diffusion sampling, T5 generate): the same, F23 also against PyTorch's own
#           graph; about 7 minutes
#   groups  the decode rows the variant groups moved (thirtieth session: F24, F15d, F15r, F4):
#           paired eager / this build (/ the old one in .old/libautograph.so) with reports, then
#           F24 and F15d in-process; about 9 minutes
#   p4c     where P4c's early in-process rounds lose: selftime by state, its report, finer rounds
#   slowhost  F15d and F20 in-process with the worker on and off (AUTOGRAPH_WORKER), 4 rounds of
#           blocks of 5 and 20 iterations: do the slow processes lose to our threads? ~8 minutes
#   pieces  P1 n=64 with the library's fixed pieces (AUTOGRAPH_PIECE=K) against the same pieces
#           sent by hand (tiny --mode=graph --piece=K, the held launches' host time spent as
#           --piece-host-ns), K = 4, 8, 16, 32, and the adaptive plan and one graph: where the
#           model's miss on plans of many equal pieces lies (the GPU or the interposer); ~2 min
#   bytes   the cost table with its per-byte keys (build/kernels/costs), F24's own time by state
#           with the worker on and off (make selftime, two processes each), F24 paired eager /
#           worker on / worker off; about 8 minutes
#   worker  issue 19: C1 C2 G2 P1 P3 S2 D1 paired, eager vs this build vs this build with
#           AUTOGRAPH_WORKER=0 (vs the old one); the launch's own time by state (make selftime)
#           with the worker on and off
#
# The replay model's runs (cost table, traces, A/B validation) are bench/device_trace.sh's parts.
#
# Everything lands in $OUT (default /tmp/out) as at most 8 files: a summary and one tarball.
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: device_plan.sh tests|ab|fw|p|goals|goalsfw1|goalsfw2|goalsfw20|f6|inproc|old|harm|multi|multiab|worker|fwnew|fwnew2|groups|p4c|slowhost|pieces|bytes..." >&2; exit 2; }
top=${OUT:-/tmp/out}
logs=$top/logs
mkdir -p "$logs"
K=build/kernels
R=${REPS:-10}
OLD=()
[ -f .old/libautograph.so ] && OLD=(old=preload=.old/libautograph.so)

{
    date -u +%F
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    cat .commit 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo "commit: unknown"
} >"$top/summary.txt" 2>&1

make -j16 all progs harness >"$logs/build.log" 2>&1 || { tail -40 "$logs/build.log"; exit 1; }
make selftime >>"$logs/build.log" 2>&1

# abv NAME VARIANTS CMD...: paired runs of the given variants (bench/ab.py's syntax, space
# separated; the first is the reference), within ABT seconds, pinned to CPUS (default 4-7).
abv() {
    local name=$1 vars=$2
    shift 2
    # ONLY="C1 G2 ...": run just these rows of a part (a call's time is short).
    [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $name "* ]] || return 0
    # shellcheck disable=SC2086 # the variants are words
    timeout "${ABT:-120}" python3 bench/ab.py --reps "${R}" --deadline $(( ${ABT:-120} - 10 )) --cpus "${CPUS:-4-7}" \
        --out "$logs/ab_$name.json" $vars -- "$@" >"$logs/ab_$name.txt" 2>&1
    { echo "== $name $* (at ${SECONDS}s)"; grep -B1 -A15 '^variant' "$logs/ab_$name.txt" || tail -3 "$logs/ab_$name.txt"; } >>"$top/summary.txt"
}

# inp NAME LIMIT [bench/inproc.py OPTIONS] -- CMD...: in-process pairs (CPUs 4-7) within LIMIT
# seconds (no process started that would end past it: the pooled lines are printed over those
# done); every round to logs/inproc_NAME.json, the table (its command line first) to the
# summary.
inp() {
    local name=$1 limit=$2
    shift 2
    [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $name "* ]] || return 0
    timeout "$limit" python3 bench/inproc.py --cpus 4-7 --deadline $((limit - 5)) \
        --out "$logs/inproc_$name.json" "$@" \
        >"$logs/inproc_$name.txt" 2>&1
    { echo "== inproc $name (at ${SECONDS}s)"; grep -v '^inproc_block' "$logs/inproc_$name.txt" | tail -12; } >>"$top/summary.txt"
}

# report_of NAME: `autograph report` of the stats the rows named NAME kept
# (logs/stats_NAME.*.json, if any) to logs/report_NAME.txt; where its launches went and its
# in-process trials to the summary.
report_of() {
    local n=$1
    set -- "$logs"/stats_"$n".*.json
    [ -e "$1" ] || return 0
    build/autograph report "$@" >"$logs/report_$n.txt" 2>&1
    { echo "== report $n ($# processes)"; sed -n '/Where every launch went/,/total/p' "$logs/report_$n.txt"
      grep '^In-process trials' "$logs/report_$n.txt"; } >>"$top/summary.txt"
}

# ab NAME CMD...: eager vs this build (vs the old one); abw: with this build's worker off too.
ab() { local name=$1; shift; abv "$name" "eager= new=preload ${OLD[*]}" "$@"; }
abw() { local name=$1; shift; abv "$name" "eager= new=preload w0=preload,AUTOGRAPH_WORKER=0 ${OLD[*]}" "$@"; }

# old_builds: a variant for every older build in .old/*.so (scripts/old-builds.sh), named
# for its file.
old_builds() {
    local f
    for f in .old/*.so; do
        [ -e "$f" ] && printf '%s=preload=%s ' "$(basename "$f" .so)" "$f"
    done
}

for part in "$@"; do
case $part in
goals)
    H="eager= new=preload hand=arg=--mode=graph"
    R=20 ABT=40 abv C1 "eager= new=preload" $K/first_launch
    R=20 ABT=40 abv C2 "eager= new=preload" $K/pipeline50
    R=20 ABT=40 abv G2 "$H" $K/cublas_once
    # (p8: fixed pieces of 8, which the replay model puts 3% ahead of the adaptive plan on P1
    # at the twenty-fifth session's host speed, and behind it on D1 and P3)
    ABT=45 abv P1_64 "$H p8=preload,AUTOGRAPH_PIECE=8" $K/tiny --n=64 --iters=1000 --warmup=50
    ABT=40 abv P1_256 "$H" $K/tiny --n=256 --iters=1000 --warmup=50
    ABT=40 abv P3 "$H" $K/tiny --n=64 --sync-every=100 --iters=2000 --warmup=200
    ABT=40 abv S1 "$H" $K/solver --pinned=0 --iters=3000 --warmup=10
    ABT=40 abv S2 "$H" $K/solver --pinned=1 --iters=3000 --warmup=10
    ABT=50 abv D1 "$H nodes=preload,AUTOGRAPH_READBACK_NODES=1" $K/pdl_decode --iters=100
    ABT=40 abv P4c "eager= new=preload" $K/irregular --iters=1000 --warmup=50
    ;;
old)
    [ -n "${OLDCMD:-}" ] || { echo "device_plan.sh old: set OLDCMD" >&2; exit 2; }
    V="eager= new=preload $(old_builds)"
    # shellcheck disable=SC2086 # OLDCMD is a command line
    R=${REPS:-30} ABT=${OLDT:-500} abv old "$V" $OLDCMD
    ;;
harm)
    V="eager= new=preload $(old_builds)"
    R=30 ABT=70 abv G2 "$V" $K/cublas_once
    R=20 ABT=45 abv C1 "$V" $K/first_launch
    R=20 ABT=45 abv C2 "$V" $K/pipeline50
    R=15 ABT=45 abv P4c "$V" $K/irregular --iters=1000 --warmup=50
    R=10 ABT=45 abv S2 "$V" $K/solver --pinned=1 --iters=3000 --warmup=10
    for i in 1 2 3; do
        echo "== G2 selftime, process $i"
        LD_PRELOAD=build/selftime/libautograph.so $K/cublas_once 2>&1 | grep -E "time_us|selftime"
    done >>"$top/summary.txt" 2>&1
    ;;
goalsfw1 | goalsfw2 | goalsfw20)
    # a repetition (every variant once) of a Python row takes 10-20 s, but a fresh machine's
    # first one over a minute (imports from a cold page cache: run 2 of the tenth session cut
    # four rows after one repetition); the limits below hold about 10 once warm
    H="eager= new=preload,AUTOGRAPH_STATS=$logs/stats_%s.%%p.json hand=arg=--mode=graph"
    N="eager= new=preload,AUTOGRAPH_STATS=$logs/stats_%s.%%p.json"
    # FWSCALE (percent, default 100) scales every row's time limit, to fit beside other parts
    fw() { local n=$1 v=$2; shift 2; ABT=$(( ${T:-60} * ${FWSCALE:-100} / 100 )) R=10 abv "$n" "$(printf "$v" "$n")" python3 "$@"; }
    if [ "$part" = goalsfw20 ]; then
        rows="F1 F6 F15d"
        T=110 fw F1 "$H" bench/fw_torch_transformer.py --iters=250 --warmup=50
        T=175 fw F6 "$H" bench/fw_torch_compile.py --iters=60 --warmup=20
        T=170 fw F15d "$N" bench/fw_hf_llama.py --cache=dynamic --iters=6 --warmup=1
    elif [ "$part" = goalsfw1 ]; then
        rows="F7 F4 F1"
        T=180 fw F7 "$H" bench/fw_cnn.py --iters=60 --warmup=20
        T=175 fw F4 "$N" bench/fw_hf_gpt2.py --iters=20 --warmup=3
        T=110 fw F1 "$H" bench/fw_torch_transformer.py --iters=250 --warmup=50
    else
        rows="F6 F14 F13 F2"
        T=175 fw F6 "$H" bench/fw_torch_compile.py --iters=60 --warmup=20
        T=150 fw F14 "$H off=preload,AUTOGRAPH_DISABLE=1" bench/fw_hf_bert.py --iters=200 --warmup=20
        T=90 fw F13 "$N" bench/fw_torch_solve.py --iters=250 --warmup=30
        T=110 fw F2 "$N" bench/fw_torch_train.py --iters=250 --warmup=50
    fi
    for n in $rows; do
        set -- "$logs"/stats_"$n".*.json
        [ -e "$1" ] || continue
        build/autograph report "$@" >"$logs/report_$n.txt" 2>&1
        { echo "== report $n ($# processes)"; sed -n '/Where every launch went/,/total/p' "$logs/report_$n.txt"
          grep '^In-process trials' "$logs/report_$n.txt"
          python3 bench/frameworks.py --goal "$logs/ab_$n.json" "$@"; } >>"$top/summary.txt" 2>&1
    done
    ;;
f6)
    # whether the library's F6 processes run at the host's slow speed more often than eager
    # ones (twenty-third session: 7 of 8 against 4 of 8): interception alone beside, each
    # process's host speed paired (host_calib_us); ~90 s a repetition, 4 or 5 in one call
    R=${REPS:-12} ABT=${F6T:-420} abv F6 "eager= new=preload,AUTOGRAPH_STATS=$logs/stats_F6.%p.json off=preload,AUTOGRAPH_DISABLE=1" \
        python3 bench/fw_torch_compile.py --iters=60 --warmup=20
    set -- "$logs"/stats_F6.*.json
    [ -e "$1" ] && build/autograph report "$@" >"$logs/report_F6.txt" 2>&1 &&
        grep '^In-process trials' "$logs/report_F6.txt" >>"$top/summary.txt"
    ;;
inproc)
    # (a row's time limit is its share of the part; its table and the pooled lines go to the
    # summary, every round to logs/inproc_ROW.json)
    for row in "F1 90 bench/fw_torch_transformer.py --iters=400 --warmup=50" \
        "F6 120 bench/fw_torch_compile.py --iters=320 --warmup=20" \
        "F15d 100 bench/fw_hf_llama.py --cache=dynamic --iters=16 --warmup=2" \
        "F4 80 bench/fw_hf_gpt2.py --iters=32 --warmup=3" \
        "P1_64 30 build/kernels/tiny --n=64 --iters=2000 --warmup=50" \
        "D1 30 build/kernels/pdl_decode --iters=400" \
        "P4c 30 build/kernels/irregular --iters=4000 --warmup=50"; do
        set -- $row
        n=$1 t=$2
        shift 2
        rounds=8
        [ "$n" = F15d ] || [ "$n" = F4 ] && rounds=4
        case $1 in *.py) set -- python3 "$@" ;; esac
        inp "$n" "$t" --procs 4 --rounds $rounds -- "$@"
    done
    ;;
fwnew)
    # the twenty-fifth session's programs (F20 torchdiffeq, F21 Numba, F22 JAX CG): their GPU
    # tests, paired processes with the stats kept for `autograph report`, then in-process pairs;
    # about 7 minutes after the build
    bats -f 'torchdiffeq|Numba|JAX conjugate' bats/gpu_frameworks.bats >"$logs/gpu_fwnew.tap" 2>&1
    { echo "== GPU tests of F20-F22"; cat "$logs/gpu_fwnew.tap"; } >>"$top/summary.txt"
    N="eager= new=preload,AUTOGRAPH_STATS=$logs/stats_%s.%%p.json"
    for row in "F20 75 45 bench/fw_torch_ode.py --iters=64 --warmup=5" \
        "F21 60 40 bench/fw_numba.py --iters=600 --warmup=20" \
        "F22 60 40 bench/fw_jax_cg.py --iters=80 --warmup=5"; do
        set -- $row
        n=$1 t=$2 ti=$3
        shift 3
        R=8 ABT=$t abv "$n" "$(printf "$N" "$n")" python3 "$@"
        report_of "$n"
        set -- $row
        shift 3
        inp "$n" "$ti" --procs 4 --rounds 8 -- python3 "$@"
    done
    ;;
groups)
    # the thirtieth session's variant groups (a decode step's variants under one policy): the
    # rows they moved, paired with the stats kept for `autograph report`, then in-process
    N="eager= new=preload,AUTOGRAPH_STATS=$logs/stats_%s.%%p.json ${OLD[*]}"
    for row in "F24 100 bench/fw_hf_t5.py --iters=16 --warmup=3" \
        "F15d 100 bench/fw_hf_llama.py --cache=dynamic --iters=16 --warmup=2" \
        "F15r 80 bench/fw_hf_llama.py --cache=dynamic --sample --iters=16 --warmup=2" \
        "F4 80 bench/fw_hf_gpt2.py --iters=32 --warmup=3"; do
        set -- $row
        n=$1 t=$2
        shift 2
        R=8 ABT=$t abv "$n" "$(printf "$N" "$n")" python3 "$@"
        report_of "$n"
    done
    inp F24 80 --procs 4 --rounds 4 -- python3 bench/fw_hf_t5.py --iters=16 --warmup=3
    inp F15d 80 --procs 4 --rounds 4 -- python3 bench/fw_hf_llama.py --cache=dynamic --iters=16 --warmup=2
    ;;
fwnew2)
    # the twenty-ninth session's programs (F23 diffusion sampling, F24 T5 generate): their GPU
    # tests, paired processes (F23 with PyTorch's own graph of the UNet) with the stats kept for
    # `autograph report`, then F23 in-process; about 7 minutes after the build
    bats -f 'diffusion|T5 generate' bats/gpu_frameworks.bats >"$logs/gpu_fwnew2.tap" 2>&1
    { echo "== GPU tests of F23, F24"; cat "$logs/gpu_fwnew2.tap"; } >>"$top/summary.txt"
    N="eager= new=preload,AUTOGRAPH_STATS=$logs/stats_%s.%%p.json"
    for row in "F23 100 bench/fw_diffusion.py --iters=30 --warmup=3" \
        "F24 90 bench/fw_hf_t5.py --iters=16 --warmup=3"; do
        set -- $row
        n=$1 t=$2
        shift 2
        V="$(printf "$N" "$n")"
        [ "$n" = F23 ] && V="$V hand=arg=--mode=graph"
        R=8 ABT=$t abv "$n" "$V" python3 "$@"
        report_of "$n"
    done
    inp F23 90 --procs 3 --rounds 4 -- python3 bench/fw_diffusion.py --iters=48 --warmup=3
    ;;
p4c)
    # where P4c's early in-process rounds lose (twenty-fifth session: 0.85-0.97 in rounds 0-2,
    # 0.96-1.08 after): our time per launch and ordering point by state (selftime), the fates
    # (`autograph report`), and finer in-process rounds over a longer run
    for i in 1 2; do
        echo "== P4c selftime, process $i"
        LD_PRELOAD=build/selftime/libautograph.so $K/irregular --iters=4000 --warmup=50 2>&1 | grep -E "time_us|selftime"
    done >>"$top/summary.txt" 2>&1
    AUTOGRAPH_STATS="$logs/stats_P4c.json" LD_PRELOAD=build/libautograph.so $K/irregular --iters=4000 --warmup=50 >/dev/null 2>&1
    build/autograph report "$logs/stats_P4c.json" >"$logs/report_P4c.txt" 2>&1
    { echo "== report P4c"; sed -n '/Where every launch went/,/total/p' "$logs/report_P4c.txt"; } >>"$top/summary.txt"
    inp P4c16 60 --procs 3 --rounds 16 -- $K/irregular --iters=8000 --warmup=50
    python3 -c 'import json, sys
for p in json.load(open(sys.argv[1]))["processes"]:
    print("rounds paused/on:", " ".join("%.3f" % r for r in p["ratios"]))' "$logs/inproc_P4c16.json" >>"$top/summary.txt" 2>&1
    ;;
slowhost)
    # whether the processes that run at the host's slow speed lose because of our threads
    # (twenty-fifth session: F15d's and F20's slowest in-process processes lost, F1's and F6's
    # did not; the replay model keeps F15d at 1.076-1.079x at any host scale from 0.5 to 3):
    # in-process pairs with the worker on and off, more iterations a block than the inproc part
    for w in 1 0; do
        for row in "F15d 150 bench/fw_hf_llama.py --cache=dynamic --iters=40 --warmup=2" \
            "F20 90 bench/fw_torch_ode.py --iters=160 --warmup=5"; do
            set -- $row
            n=$1 t=$2
            shift 2
            inp "${n}_w$w" "$t" --procs 4 --rounds 4 --env AUTOGRAPH_WORKER=$w -- python3 "$@"
        done
    done
    ;;
bytes)
    # thirty-first session's open question: what a kernel node's parameter bytes cost the host
    # (bench/costs.cu's *_per_byte keys, not yet in any table), and where F24's own time goes
    # with the worker on and off (its graph launches 13.6-24.5 us, node sets 1.2-2.7 us in the
    # thirtieth session's selftime, against the table's ~3 and 0.35); then F24 paired with the
    # worker on and off
    timeout 150 $K/costs >"$top/costs.json" 2>"$logs/costs.txt"
    { echo "== costs (rc=$?; the per-byte keys and the big-block line)"
      grep -E '_per_byte|_node_byte|128 nodes of a|a launch beside' "$top/costs.json" "$logs/costs.txt"; } >>"$top/summary.txt"
    for w in 1 0; do
        for i in 1 2; do
            echo "[F24, AUTOGRAPH_WORKER=$w, process $i]"
            AUTOGRAPH_WORKER=$w LD_PRELOAD=build/selftime/libautograph.so taskset -c 4-11 \
                python3 bench/fw_hf_t5.py --iters=16 --warmup=3 2>&1 |
                grep -E "time_us|selftime: (launch|the engine|stream)" |
                sed "s/ of libautograph's own time per call (measuring overhead subtracted)//"
        done
    done >>"$top/summary.txt" 2>&1
    CPUS=4-11 R=6 ABT=${F24T:-200} abv F24_worker "eager= on=preload off=preload,AUTOGRAPH_WORKER=0" \
        python3 bench/fw_hf_t5.py --iters=16 --warmup=3
    ;;
worker)
    abw C1 $K/first_launch
    abw C2 $K/pipeline50
    abw G2 $K/cublas_once
    abw P1 $K/tiny --n=64 --iters=300 --warmup=50
    abw P3 $K/tiny --n=64 --sync-every=100 --iters=300 --warmup=100
    abw S2 $K/solver --pinned=1 --iters=1000 --warmup=10
    abw D1 $K/pdl_decode --iters=100
    for app in first_launch pipeline50 cublas_once "tiny --n=64 --iters=300 --warmup=50"; do
        for w in 1 0 1 0; do
            echo "[$app, AUTOGRAPH_WORKER=$w]"
            AUTOGRAPH_WORKER=$w LD_PRELOAD=build/selftime/libautograph.so $K/$app 2>&1 |
                grep -E "time_us|selftime: launch" | sed "s/ of libautograph's own time per call (measuring overhead subtracted)//"
        done
    done >>"$top/summary.txt" 2>&1
    ;;
tests)
    for f in bats/gpu_*.bats; do
        (timeout 400 bats --tap --print-output-on-failure "$f" >"$logs/$(basename "$f" .bats).tap" 2>&1 ||
            echo "FAILED OR TIMED OUT: $f" >>"$logs/$(basename "$f" .bats).tap") &
    done
    wait
    cat "$logs"/gpu_*.tap >"$logs/gpu_all.tap"
    { grep -c '^ok' "$logs/gpu_all.tap" | sed 's/^/passed: /'
      grep -E '^(not ok|FAILED)' "$logs/gpu_all.tap"; } >>"$top/summary.txt"
    for app in first_launch pipeline50 "pdl_decode --iters=100"; do
        for i in 1 2 3; do
            LD_PRELOAD=build/selftime/libautograph.so $K/$app 2>&1 |
                grep -E "time_us|selftime: (launch|mean phases of launch \(held, a piece|the engine's)"
        done
    done >>"$top/summary.txt" 2>&1
    ;;
ab)
    ab C1 $K/first_launch
    ab C2 $K/pipeline50
    ab D1 $K/pdl_decode --iters=100
    ab D2 $K/pdl_decode --iters=100 --pdl=0
    ab D3 $K/grow_grid --iters=500 --warmup=10
    ab S1 $K/solver --pinned=0 --iters=3000 --warmup=10
    ab S2 $K/solver --pinned=1 --iters=3000 --warmup=10
    ab G1 $K/cublas_async --iters=200 --warmup=20
    ab P4c $K/irregular --iters=1000 --warmup=50
    ab T1 $K/thrust_loop --iters=300
    for app in "pdl_decode --iters=100" "pdl_decode --iters=100 --pdl=0" "solver --pinned=0 --iters=3000" \
               "solver --pinned=1 --iters=3000"; do
        echo "[$app, hand-written graph] $($K/$app --mode=graph | grep time_us)"
    done >>"$top/summary.txt" 2>&1
    ;;
fw)
    timeout 420 python3 bench/run.py --only F1,F2,F3,F4,F5,P6 --reps 5 --cpus 4-7 --out "$logs/fw" >"$logs/fw.txt" 2>&1
    tail -30 "$logs/fw.txt" >>"$top/summary.txt"
    AUTOGRAPH_STATS="$logs/stats_decode.%p.json" LD_PRELOAD=build/libautograph.so \
        $K/pdl_decode --iters=100 >/dev/null 2>&1
    AUTOGRAPH_STATS="$logs/stats_gpt2.%p.json" LD_PRELOAD=build/libautograph.so \
        timeout 120 python3 bench/fw_hf_gpt2.py --iters=20 --warmup=3 >/dev/null 2>&1
    build/autograph report "$logs"/stats_decode.*.json >"$logs/report_decode.txt" 2>&1
    build/autograph report --markdown "$logs"/stats_gpt2.*.json >"$logs/report_gpt2.md" 2>&1
    head -60 "$logs/report_decode.txt" >>"$top/summary.txt"
    ;;
p)
    timeout 560 python3 bench/run.py --only P1,P2,P3,P4a,P4b,P4c,P5,P8 --reps 5 --cpus 4-7 \
        --out "$logs/p" >"$logs/p.txt" 2>&1
    tail -40 "$logs/p.txt" >>"$top/summary.txt"
    ;;
pieces)
    # (PIECE_HOST_NS: the held launch's host time between two held launches, the app's own
    # included: ~400 ns on the H200's host, twenty-seventh session)
    V="adaptive=preload hand=arg=--mode=graph"
    for k in 4 8 16 32; do
        V="$V lib$k=preload,AUTOGRAPH_PIECE=$k by$k=arg=--mode=graph,arg=--piece=$k,arg=--piece-host-ns=${PIECE_HOST_NS:-400}"
    done
    R=8 ABT=150 abv P1_pieces "$V" $K/tiny --n=64 --iters=1000 --warmup=50
    ;;
multiab)
    export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
    R=12 ABT=50 abv M1_peer "eager= new=preload" $K/multigpu --iters=2000 --warmup=50
    R=12 ABT=50 abv M1_host "eager= new=preload" $K/multigpu --iters=2000 --warmup=50 --combine=host
    # a torchrun job starts in 10-20 s: few pairs, each a few hundred steps; eight CPUs for two
    # ranks, torchrun, NCCL's threads and ours (on four, the twenty-sixth session's preloaded
    # processes calibrated 0.75x as fast as the eager ones)
    CPUS=4-11 R=8 ABT=${DDPT:-240} abv M2_ddp "eager= new=preload,AUTOGRAPH_STATS=$logs/stats_ddp.%p.json" \
        python3 -m torch.distributed.run --standalone --nproc_per_node=2 bench/fw_ddp.py --iters=400 --warmup=40
    # one process on both GPUs (bench/fw_multi.py): model-parallel inference, nn.DataParallel
    R=10 ABT=${M3T:-60} abv M3_pipe "eager= new=preload" python3 bench/fw_multi.py --mode=pipe --iters=300 --warmup=20
    R=10 ABT=${M4T:-60} abv M4_dp "eager= new=preload" python3 bench/fw_multi.py --mode=dp --iters=200 --warmup=20
    R=10 ABT=${M5T:-60} abv M5_pmap "eager= new=preload" python3 bench/fw_multi.py --mode=pmap --iters=300 --warmup=20
    set -- "$logs"/stats_ddp.*.json
    [ -e "$1" ] && { build/autograph report "$@" >"$logs/report_ddp.txt" 2>&1
                     sed -n '/Where every launch went/,/total/p' "$logs/report_ddp.txt" >>"$top/summary.txt"; }
    ;;
multi)
    export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
    timeout 560 bats --tap --print-output-on-failure bats/gpu_multi.bats >"$logs/gpu_multi.tap" 2>&1
    tail -20 "$logs/gpu_multi.tap" >>"$top/summary.txt"
    ;;
*)
    echo "device_plan.sh: unknown part $part" >&2
    exit 2
    ;;
esac
done

tar czf "$top/logs.tgz" -C "$top" logs && rm -rf "$logs"
cat "$top/summary.txt"
