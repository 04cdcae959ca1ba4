#!/usr/bin/env python3
"""A CuPy FFT filter loop (framework row F12): cuFFT plans reused, elementwise ops, a norm.

Models a user's signal-processing loop: each iteration a batch of 16 signals of 4096 complex
samples is filtered in the frequency domain (cupy.fft.fft, multiply by a fixed response,
cupy.fft.ifft, cuFFT's cached plans), a nonlinearity updates the state, and a norm is read
back to the host (float(), a sync).

  python3 bench/fw_cupy_fft.py                                        # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_cupy_fft.py       # with libautograph
"""
import math

import fw_common as fw


def main():
    ap = fw.parser(__doc__, iters=1000, warmup=50)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--batch", type=int, default=16)
    a = ap.parse_args()
    cp = fw.cupy_or_skip()
    import numpy as np

    rng = np.random.default_rng(1234)
    x = cp.asarray(rng.standard_normal((a.batch, a.n)) + 1j * rng.standard_normal((a.batch, a.n))).astype(cp.complex64)
    resp = cp.asarray(np.exp(-np.linspace(0, 8, a.n)).astype(np.float32))
    norms = []

    def step(i):
        nonlocal x
        y = cp.fft.ifft(cp.fft.fft(x, axis=1) * resp, axis=1)
        x = (cp.tanh(y.real) + 1j * cp.tanh(y.imag)).astype(cp.complex64)
        norms.append(float(cp.linalg.norm(x)))

    wall, gpu_us = fw.cupy_timed(cp, step, a.warmup, a.iters)
    ok = all(math.isfinite(v) for v in norms)
    return fw.report(fw.floats_digest(norms, cp.asnumpy(x).tobytes()), wall, a.iters, gpu_us, ok)


if __name__ == "__main__":
    raise SystemExit(main())
