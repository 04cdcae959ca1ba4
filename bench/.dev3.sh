source .devdeps/env.sh
OUT0=$OUT
OUT=$OUT0/t bash bench/device_plan.sh tests > /dev/null 2>&1
head -12 $OUT0/t/summary.txt
K=build/kernels
for app in first_launch first_launch cublas_once cublas_once "tiny --n=64 --iters=300 --warmup=50" "pdl_decode --iters=100"; do
  echo "== $app"; LD_PRELOAD=build/selftime/libautograph.so $K/$app 2>&1 | grep -E "time_us|slowest|selftime: launch" | sed "s/ of libautograph's own time per call (measuring overhead subtracted)//; s/ (us before the call returned, the driver's time included)//; s/(0 page faults, the driver's included)//"
done > $OUT0/selftime.txt 2>&1
OUT=$OUT0/w ABT=100 R=8 bash bench/device_plan.sh worker > /dev/null 2>&1
sed -n '/== C1/,/== D1/p' $OUT0/w/summary.txt | grep -E "==|new|w0|old"; grep -A4 "== D1" $OUT0/w/summary.txt | tail -3
