#!/usr/bin/env bash
# The demo: one launch-bound sample app (64 tiny kernels + a sync per iteration) run three
# ways -- as it is, under libautograph, and as its own hand-written CUDA graph -- with the
# results compared and libautograph's report printed.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
app=$build/kernels/tiny
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "demo: no GPU visible (nvidia-smi lists none); the demo needs one. 'make test' runs the CPU tests." >&2
    exit 2
fi
[ -x "$app" ] || { echo "demo: $app not built (needs nvcc)" >&2; exit 2; }
args=(--n=64 --iters=3000 --warmup=100)
run() { "$@" "$app" "${args[@]}"; }
echo "== $app ${args[*]}"
eager=$(run env -u LD_PRELOAD)
ag=$(run "$build/autograph" --stats 2>"$build/demo-stats.txt")
graph=$(env -u LD_PRELOAD "$app" "${args[@]}" --mode=graph)
val() { awk -v k="$1:" '$1 == k { print $2 }' <<<"$2"; }
for r in "$eager" "$ag" "$graph"; do
    [ "$(val result "$r")" = OK ] || { echo "demo: a run failed:"; echo "$r"; exit 1; }
done
if [ "$(val checksum "$eager")" != "$(val checksum "$ag")" ]; then
    echo "demo: CHECKSUM MISMATCH between eager and libautograph" >&2
    exit 1
fi
te=$(val time_us_per_iter "$eager") ta=$(val time_us_per_iter "$ag") tg=$(val time_us_per_iter "$graph")
awk -v e="$te" -v a="$ta" -v g="$tg" 'BEGIN {
    printf "%-32s %10s %9s\n", "", "us/iter", "speed-up"
    printf "%-32s %10.1f %8.2fx\n", "eager (as built)", e, 1
    printf "%-32s %10.1f %8.2fx\n", "libautograph (LD_PRELOAD)", a, e / a
    printf "%-32s %10.1f %8.2fx\n", "hand-written CUDA graph", g, e / g }'
echo "checksums identical: $(val checksum "$eager")"
echo
echo "== libautograph's report (AUTOGRAPH_STATS=1)"
grep -E 'launches\.(cuLaunchKernel|replayed|held) |graphs\.(built|replays) |updates\.none|replayed_percent|sequence #1' \
    "$build/demo-stats.txt" || cat "$build/demo-stats.txt"
