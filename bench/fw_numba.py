#!/usr/bin/env python3
"""A user's own Numba CUDA kernels: a heat-equation solver on the default stream (row F21).

Models a scientist's explicit solver written with numba.cuda: a 512 x 512 grid, each iteration
20 Jacobi-style stencil steps (`@cuda.jit` kernels, the two grids swapping every step, so the
arguments alternate), a kernel that keeps a hot spot at the boundary, the largest change of the
last step reduced on the device (cuda.atomic.max into a one-element array, zeroed by a kernel)
and read back to the host (copy_to_host: a sync), as a convergence check would. Everything
runs on the legacy default stream, as Numba's launches do unless told otherwise, and reaches
the driver through cuda-bindings (functions found with cuGetProcAddress). The checksum covers
every iteration's residual and the final grid.

  python3 bench/fw_numba.py                                        # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_numba.py       # with libautograph
"""
import math
import os
import time

import fw_common as fw

os.environ.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")  # (the one-block kernels)
try:  # (a module global: kernels compiled by Numba, or run by its simulator, look it up there)
    import numpy as np
    if not hasattr(np, "row_stack"):  # NumPy 2.5 dropped the alias that the GPU machine's
        np.row_stack = np.vstack      # numba-cuda still registers when it compiles
    from numba import cuda
except ImportError:
    cuda = None


def kernels():
    """The solver's kernels, compiled at their first launch."""

    @cuda.jit
    def stencil(u, v, alpha):
        i, j = cuda.grid(2)
        n, m = u.shape
        if 0 < i < n - 1 and 0 < j < m - 1:
            v[i, j] = u[i, j] + alpha * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1]
                                         - 4.0 * u[i, j])

    @cuda.jit
    def hot_spot(u, value):
        j = cuda.grid(1)
        m = u.shape[1]
        if m // 4 <= j < 3 * m // 4:
            u[0, j] = value

    @cuda.jit
    def zero(out):
        if cuda.grid(1) == 0:
            out[0] = 0.0

    @cuda.jit
    def max_change(u, v, out):
        i, j = cuda.grid(2)
        n, m = u.shape
        if i < n and j < m:
            cuda.atomic.max(out, 0, abs(v[i, j] - u[i, j]))

    return stencil, hot_spot, zero, max_change


def main():
    ap = fw.parser(__doc__, iters=300, warmup=20)
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--steps", type=int, default=20, help="stencil steps per iteration")
    a = ap.parse_args()
    if cuda is None:
        fw.skip("Numba is not installed")
    try:
        if not cuda.is_available():
            fw.skip("no CUDA device for Numba")
    except Exception as e:  # (a driver Numba cannot load)
        fw.skip("Numba cannot use CUDA: %s" % e)
    stencil, hot_spot, zero, max_change = kernels()

    n = a.n
    u = cuda.to_device(np.zeros((n, n), dtype=np.float32))
    v = cuda.to_device(np.zeros((n, n), dtype=np.float32))
    out = cuda.device_array(1, dtype=np.float32)
    threads = (16, 16)
    blocks = ((n + 15) // 16, (n + 15) // 16)
    residuals = []
    grids = [u, v]

    def step(i):
        hot_spot[(n + 127) // 128, 128](grids[0], np.float32(1.0 + 0.001 * (i % 7)))
        for _ in range(a.steps):
            stencil[blocks, threads](grids[0], grids[1], np.float32(0.2))
            grids.reverse()
        zero[1, 32](out)
        max_change[blocks, threads](grids[1], grids[0], out)
        residuals.append(float(out.copy_to_host()[0]))  # (a sync: the convergence check)

    try:
        for i in range(a.warmup):  # (the kernels compile in the first)
            step(i)
    except Exception as e:
        if not residuals:
            fw.skip("Numba cannot compile or launch here: %s" % e)
        raise
    cuda.synchronize()
    try:
        ev0, ev1 = cuda.event(timing=True), cuda.event(timing=True)
    except TypeError:  # (Numba's simulator, NUMBA_ENABLE_CUDASIM=1: how this script is tried
        ev0, ev1 = cuda.event(), cuda.event()  # without a GPU)
    ev0.record()
    # the timed region, as profilers (and the replay model) see it (the simulator has none)
    getattr(cuda, "profile_start", lambda: None)()
    t0 = time.perf_counter()
    fw.timed_loop(step, a.warmup, a.iters, cuda.synchronize)
    ev1.record()
    ev1.synchronize()
    wall = time.perf_counter() - t0
    getattr(cuda, "profile_stop", lambda: None)()
    gpu_us = ev0.elapsed_time(ev1) * 1e3
    ok = all(math.isfinite(r) for r in residuals)
    return fw.report(fw.floats_digest(residuals, grids[0].copy_to_host().tobytes()), wall,
                     a.iters, gpu_us, ok)


if __name__ == "__main__":
    raise SystemExit(main())
