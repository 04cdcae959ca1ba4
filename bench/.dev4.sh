source .devdeps/env.sh
OUT0=$OUT
OUT=$OUT0/t bash bench/device_plan.sh tests > /dev/null 2>&1
head -8 $OUT0/t/summary.txt
K=build/kernels
for app in first_launch first_launch first_launch cublas_once; do
  echo "== $app"; LD_PRELOAD=build/selftime/libautograph.so $K/$app 2>&1 | grep -E "slowest launch .watched|selftime: launch:" | sed "s/ of libautograph's own time per call (measuring overhead subtracted)//; s/ (us before the call returned, the driver's time included)//; s/(0 page faults, the driver's included)//"
done > $OUT0/selftime.txt 2>&1
OUT=$OUT0/w ABT=90 R=10 bash bench/device_plan.sh worker > /dev/null 2>&1
grep -E "==|new|w0|old" $OUT0/w/summary.txt | head -40
OUT=$OUT0/f ROWS="F1 F3" LIMIT=150 REPS_PY=5 bash bench/device_trace.sh validate1 > /dev/null 2>&1
cat $OUT0/f/summary.txt | grep -E "==|ag |skip" | head -20
