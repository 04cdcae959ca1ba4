#!/usr/bin/env python3
"""A CuPy iteration loop (framework row F3; issues 12 and 14).

Models a user's NumPy-style GPU loop: each iteration a few elementwise ops on a vector of 16384
floats, one cupy.RawKernel that updates the state in place, and a reduction read back to the
host (float(y.sum()), which also synchronises). No graph mode: the read-back cannot be captured.

  python3 bench/fw_cupy_loop.py                                          # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_cupy_loop.py         # with libautograph
"""
import math
import time

import fw_common as fw

UPDATE = r"""
extern "C" __global__ void update(float *x, const float *y, float decay, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = decay * x[i] + tanhf(y[i]);
}
"""


def main():
    ap = fw.parser(__doc__, iters=1000, warmup=50)
    ap.add_argument("--n", type=int, default=16384)
    a = ap.parse_args()
    try:
        import cupy as cp
        import numpy as np
    except ImportError:
        fw.skip("CuPy is not installed")
    try:
        if cp.cuda.runtime.getDeviceCount() == 0:
            fw.skip("no CUDA device")
    except cp.cuda.runtime.CUDARuntimeError:
        fw.skip("no CUDA device")

    update = cp.RawKernel(UPDATE, "update")
    x = cp.asarray(np.random.default_rng(1234).standard_normal(a.n).astype(np.float32))
    sums = []

    def step(i):
        y = cp.sin(x) * 0.5 + x * 0.25
        update(((a.n + 255) // 256,), (256,), (x, y, np.float32(0.9), np.int32(a.n)))
        sums.append(float(y.sum()))

    for i in range(a.warmup):
        step(i)
    cp.cuda.Device().synchronize()
    e0, e1 = cp.cuda.Event(), cp.cuda.Event()
    e0.record()
    cp.cuda.profiler.start()  # the timed region, as profilers (and the replay model) see it
    t0 = time.perf_counter()
    for i in range(a.warmup, a.warmup + a.iters):
        step(i)
    e1.record()
    e1.synchronize()
    t1 = time.perf_counter()
    cp.cuda.profiler.stop()
    gpu_us = cp.cuda.get_elapsed_time(e0, e1) * 1e3
    ok = all(math.isfinite(v) for v in sums)
    return fw.report(fw.floats_digest(sums, cp.asnumpy(x).tobytes()), t1 - t0, a.iters, gpu_us, ok)


if __name__ == "__main__":
    raise SystemExit(main())
