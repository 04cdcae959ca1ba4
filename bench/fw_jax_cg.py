#!/usr/bin/env python3
"""A JAX iterative solver: jitted conjugate gradients until convergence (framework row F22).

Models a user's JAX solver: jax.scipy.sparse.linalg.cg on a matrix-free 2D Poisson operator (a
5-point stencil on a 128 x 128 grid, written with jnp slicing), inside jax.jit, tol 1e-6, for a
new right-hand side each iteration, the answer's norm read to the host. The solver's loop is a
lax.while_loop whose trip count depends on the data: XLA runs its body and condition on the
GPU and asks the host whether to go on every iteration (or keeps it on the GPU where its command
buffers can), so the launches between the host's looks are short and many. XLA_FLAGS gets
--xla_gpu_deterministic_ops=true (unless XLA_FLAGS names it already) so that every run computes
bit-identical answers, which the checksum compares. No GPU event line (JAX exposes no CUDA
events).

  python3 bench/fw_jax_cg.py                                           # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_jax_cg.py          # with libautograph
"""

import fw_common as fw


def main():
    ap = fw.parser(__doc__, iters=100, warmup=5)
    ap.add_argument("--n", type=int, default=128)
    ap.add_argument("--tol", type=float, default=1e-6)
    a = ap.parse_args()
    jax, jnp = fw.jax_or_skip()
    import numpy as np
    from jax.scipy.sparse.linalg import cg

    n = a.n

    def laplacian(x):  # -div grad on the interior, zero boundary: symmetric positive definite
        u = x.reshape(n, n)
        p = jnp.pad(u, 1)
        out = 4.0 * u - p[:-2, 1:-1] - p[2:, 1:-1] - p[1:-1, :-2] - p[1:-1, 2:]
        return out.reshape(-1)

    @jax.jit
    def solve(b):
        x, _ = cg(laplacian, b, tol=a.tol, maxiter=2000)
        return x, jnp.linalg.norm(x), jnp.linalg.norm(laplacian(x) - b)

    keys = jax.random.split(jax.random.PRNGKey(1234), 8)
    rhs = [jax.random.normal(k, (n * n,)) for k in keys]
    norms, resid = [], []
    last = [None]

    def step(i):
        x, nx, r = solve(rhs[i % len(rhs)] * (1.0 + 0.01 * (i % 5)))
        norms.append(float(nx))  # (a sync: the answer to the host)
        resid.append(float(r))
        last[0] = x

    wall = fw.host_timed(step, a.warmup, a.iters)  # (each step ends in a sync)
    ok = all(np.isfinite(norms)) and max(resid) < 1e-2 * max(norms)
    print("largest residual: %.3g (answer norms %.3g-%.3g)" % (max(resid), min(norms), max(norms)))
    return fw.report(fw.floats_digest(norms + resid, np.asarray(last[0]).tobytes()), wall,
                     a.iters, None, ok)


if __name__ == "__main__":
    raise SystemExit(main())
