source .devdeps/env.sh
make -j16 all progs harness > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
make selftime >> $OUT/build.log 2>&1
K=build/kernels
for r in 0 1; do echo "== capture_worker plain relaxed=$r"; timeout 60 $K/capture_worker --relaxed=$r 2>&1 | tail -3; done
echo "== capture_worker preloaded"; AUTOGRAPH_STATS=1 LD_PRELOAD=build/libautograph.so timeout 60 $K/capture_worker 2>&1 | grep -E "result|worker\.|in_app|graphs.built|error|ERROR"
(timeout 300 bats --tap bats/gpu_engine.bats > $OUT/gpu_engine.tap 2>&1; timeout 300 bats --tap bats/gpu_policy.bats > $OUT/gpu_policy.tap 2>&1) &
for app in first_launch first_launch pipeline50 cublas_once cublas_once "tiny --n=64 --iters=300 --warmup=50"; do
  echo "== $app"; LD_PRELOAD=build/selftime/libautograph.so $K/$app 2>&1 | grep -E "time_us|slowest|selftime: launch" | sed "s/ of libautograph's own time per call (measuring overhead subtracted)//; s/ (us before the call returned, the driver's time included)//"
done
wait
grep -E "^not ok|^ok" $OUT/gpu_engine.tap $OUT/gpu_policy.tap | grep -c "ok"; grep -A12 "^not ok" $OUT/gpu_engine.tap $OUT/gpu_policy.tap | head -40
which perf gdb 2>&1 | head -2
