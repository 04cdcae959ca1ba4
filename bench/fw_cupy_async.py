#!/usr/bin/env python3
"""CuPy on the stream-ordered allocator, on a stream of its own (framework row F18).

Models a user who switched CuPy to CUDA's asynchronous memory pool
(cupy.cuda.MemoryAsyncPool: every temporary is a cudaMallocAsync and its release a
cudaFreeAsync on the current stream) and runs on a non-blocking cupy.cuda.Stream: each
iteration a damped wave update of a 256 x 256 grid (a stencil as array slices, elementwise ops
and a cupy.ElementwiseKernel, each temporary allocated and freed in stream order) and the
energy read back to the host (float(...), a sync). No graph mode.

  python3 bench/fw_cupy_async.py                                      # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_cupy_async.py     # with libautograph
"""
import math

import fw_common as fw


def main():
    ap = fw.parser(__doc__, iters=600, warmup=50)
    ap.add_argument("--n", type=int, default=256)
    a = ap.parse_args()
    cp = fw.cupy_or_skip()
    import numpy as np
    try:
        cp.cuda.set_allocator(cp.cuda.MemoryAsyncPool().malloc)
    except (AttributeError, cp.cuda.runtime.CUDARuntimeError) as e:
        fw.skip("no stream-ordered allocator here: %s" % e)

    damp = cp.ElementwiseKernel("T u, T prev, T lap, T c", "T out",
                                "out = (2 * u - prev + c * lap) * 0.999", "wave_damp")
    stream = cp.cuda.Stream(non_blocking=True)
    energies = []
    with stream:
        rng = np.random.default_rng(1234)
        u = cp.asarray(rng.standard_normal((a.n, a.n)).astype(np.float32)) * 0.01
        prev = u.copy()

        def step(i):
            nonlocal u, prev
            lap = cp.zeros_like(u)
            lap[1:-1, 1:-1] = (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                               - 4 * u[1:-1, 1:-1])
            nxt = damp(u, prev, lap, np.float32(0.2))
            prev, u = u, nxt
            energies.append(float(cp.sum(u * u)))

        wall, gpu_us = fw.cupy_timed(cp, step, a.warmup, a.iters)
    ok = all(math.isfinite(v) for v in energies)
    return fw.report(fw.floats_digest(energies, cp.asnumpy(u).tobytes()), wall, a.iters, gpu_us,
                     ok)


if __name__ == "__main__":
    raise SystemExit(main())
