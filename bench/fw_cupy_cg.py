#!/usr/bin/env python3
"""A CuPy sparse solver: conjugate gradients on a 2D Poisson matrix (framework row F9).

Models a user's SciPy-style GPU solve: the 5-point Laplacian of an n x n grid as a
cupyx.scipy.sparse CSR matrix, then cupyx.scipy.sparse.linalg.cg for one right-hand side after
another (each random, each from x0 = 0, tol 1e-6, at most --maxiter iterations). Each CG
iteration is a cuSPARSE product, cuBLAS dots and axpys and a residual norm read back for the
convergence test (a sync). The time is per solve.

  python3 bench/fw_cupy_cg.py                                          # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_cupy_cg.py         # with libautograph
"""
import math

import fw_common as fw


def main():
    ap = fw.parser(__doc__, iters=20, warmup=3)
    ap.add_argument("--n", type=int, default=128, help="grid side (n*n unknowns)")
    ap.add_argument("--maxiter", type=int, default=300)
    a = ap.parse_args()
    cp = fw.cupy_or_skip()
    import cupyx.scipy.sparse as sp
    import cupyx.scipy.sparse.linalg as spla
    import numpy as np

    n = a.n
    one = cp.ones(n, dtype=cp.float64)
    t = sp.diags([-one[:-1], 2 * one, -one[:-1]], [-1, 0, 1], format="csr")
    eye = sp.identity(n, dtype=cp.float64, format="csr")
    A = (sp.kron(t, eye) + sp.kron(eye, t)).tocsr()
    rng = np.random.default_rng(1234)
    rhs = [cp.asarray(rng.standard_normal(n * n)) for _ in range(a.warmup + a.iters)]
    norms = []

    import inspect
    tol = "rtol" if "rtol" in inspect.signature(spla.cg).parameters else "tol"  # (SciPy's rename)

    last = []

    def solve(i):
        x, info = spla.cg(A, rhs[i], maxiter=a.maxiter, **{tol: 1e-6})
        r = rhs[i] - A @ x
        norms.append(float(cp.linalg.norm(r)))
        norms.append(float(info))
        last[:] = [x]

    wall, gpu_us = fw.cupy_timed(cp, solve, a.warmup, a.iters)
    ok = all(math.isfinite(v) for v in norms)
    return fw.report(fw.floats_digest(norms, cp.asnumpy(last[0]).tobytes()), wall, a.iters, gpu_us, ok)


if __name__ == "__main__":
    raise SystemExit(main())
