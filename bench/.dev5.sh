source .devdeps/env.sh
OUT0=$OUT
OUT=$OUT0/t bash bench/device_plan.sh tests > /dev/null 2>&1
head -12 $OUT0/t/summary.txt
K=build/kernels
for i in 1 2 3; do echo "[P3 hand graph] $($K/tiny --n=64 --sync-every=100 --iters=300 --warmup=100 --mode=graph | grep time_us)"; echo "[P3 eager] $($K/tiny --n=64 --sync-every=100 --iters=300 --warmup=100 | grep time_us)"; done
LD_PRELOAD=build/libautograph.so AUTOGRAPH_STATS=1 $K/tiny --n=64 --sync-every=100 --iters=300 --warmup=100 2>&1 | grep -E "time_us|fate\.|replayed_percent|sequence #1"
OUT=$OUT0/w ABT=90 R=10 bash bench/device_plan.sh worker > /dev/null 2>&1
grep -E "==|new|w0|old" $OUT0/w/summary.txt | head -40
