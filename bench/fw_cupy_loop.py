#!/usr/bin/env python3
"""A CuPy iteration loop (framework row F3; issues 12 and 14).

Models a user's NumPy-style GPU loop: each iteration a few elementwise ops on a vector of 16384
floats, one cupy.RawKernel that updates the state in place, and a reduction read back to the
host (float(y.sum()), which also synchronises). No graph mode: the read-back cannot be captured.

  python3 bench/fw_cupy_loop.py                                          # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_cupy_loop.py         # with libautograph
"""
import math

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
    cp = fw.cupy_or_skip()
    import numpy as np

    update = cp.RawKernel(UPDATE, "update")
    x = cp.asarray(np.random.default_rng(1234).standard_normal(a.n).astype(np.float32))
    sums = []

    def step(i):
        y = cp.sin(x) * 0.5 + x * 0.25
        update(((a.n + 255) // 256,), (256,), (x, y, np.float32(0.9), np.int32(a.n)))
        sums.append(float(y.sum()))

    wall, gpu_us = fw.cupy_timed(cp, step, a.warmup, a.iters)
    ok = all(math.isfinite(v) for v in sums)
    return fw.report(fw.floats_digest(sums, cp.asnumpy(x).tobytes()), wall, a.iters, gpu_us, ok)


if __name__ == "__main__":
    raise SystemExit(main())
