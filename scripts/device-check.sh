#!/usr/bin/env bash
# Development helper for the GPU machine: builds everything, runs the driver probe, the GPU
# tests and (optionally) the benchmarks, and leaves logs in $OUT. Usage (from the repo root,
# after `source .devdeps/env.sh`): scripts/device-check.sh [tests|bench|all]
set -uo pipefail
what=${1:-all}
out=${OUT:-build/device}
mkdir -p "$out"
# the device's copy of the tree has no .git: the commit comes along in .commit
[ -r .commit ] && export AG_COMMIT="$(cat .commit)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
make -j16 all progs >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
{
    build/tests/probe
    echo "-- without libautograph"; build/tests/probe loop; build/tests/probe invalid
    echo "-- libautograph, graphing (BENEFIT=always)"
    LD_PRELOAD=build/libautograph.so AUTOGRAPH_BENEFIT=always build/tests/probe loop
    LD_PRELOAD=build/libautograph.so build/tests/probe invalid
    echo "-- libautograph, AUTOGRAPH_DISABLE=1"
    LD_PRELOAD=build/libautograph.so AUTOGRAPH_DISABLE=1 build/tests/probe loop
    LD_PRELOAD=build/libautograph.so AUTOGRAPH_DISABLE=1 build/tests/probe invalid
} >>"$out/device.txt" 2>&1
if [ "$what" != bench ]; then
    for f in bats/gpu_apps.bats bats/gpu_frameworks.bats bats/gpu_engine.bats bats/gpu_policy.bats bats/gpu_lifetime.bats; do
        timeout 280 bats --tap --print-output-on-failure "$f" >>"$out/gpu-bats.tap" 2>&1 || echo "FAILED OR TIMED OUT: $f" >>"$out/gpu-bats.tap"
    done
    grep -E '^(not ok|ok|FAILED)' "$out/gpu-bats.tap" | grep -cE '^ok' | sed 's/^/passed: /'
    grep -E '^(not ok|FAILED)' "$out/gpu-bats.tap"
fi
if [ "$what" != bench ]; then
    make demo >"$out/demo.txt" 2>&1 || echo "DEMO FAILED" >>"$out/demo.txt"
    cat "$out/demo.txt"
fi
if [ "$what" != tests ]; then
    timeout 480 python3 bench/run.py ${BENCH_ARGS:-} --out "$out" >"$out/bench.txt" 2>&1
    tail -25 "$out/bench.txt"
fi
