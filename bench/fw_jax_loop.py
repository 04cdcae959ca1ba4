#!/usr/bin/env python3
"""A JAX training loop: a jitted MLP step (framework row F5; issue 14).

Models a user's JAX loop: one jax.jit function doing the forward, the gradient (value_and_grad)
and an SGD update of a random-init MLP (3 x Dense 256 with GELU, batch 64), called once per
iteration with block_until_ready(). XLA already runs its compiled steps through its own CUDA
command buffers, so libautograph has little to gain here; the row asks whether it slows JAX.
XLA_FLAGS gets --xla_gpu_deterministic_ops=true (unless XLA_FLAGS names it already) so that every
run computes bit-identical losses, which the checksum compares. No GPU event line: JAX exposes
no CUDA events. No graph mode.

  python3 bench/fw_jax_loop.py                                           # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_jax_loop.py          # with libautograph
"""

import fw_common as fw


def main():
    ap = fw.parser(__doc__, iters=1000, warmup=50)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--batch", type=int, default=64)
    a = ap.parse_args()
    jax, jnp = fw.jax_or_skip()
    import numpy as np

    w, key = a.width, jax.random.PRNGKey(1234)
    keys = jax.random.split(key, 19)
    params = [(jax.random.normal(keys[j], (w, w)) * w ** -0.5, jnp.zeros(w)) for j in range(3)]
    xs = [jax.random.normal(keys[3 + j], (a.batch, w)) for j in range(8)]
    ys = [jax.random.normal(keys[11 + j], (a.batch, w)) for j in range(8)]

    def loss_fn(params, x, y):
        for W, b in params[:-1]:
            x = jax.nn.gelu(x @ W + b)
        W, b = params[-1]
        return jnp.mean((x @ W + b - y) ** 2)

    @jax.jit
    def train_step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads), loss

    losses = []

    def step(i):
        nonlocal params
        params, loss = train_step(params, xs[i % 8], ys[i % 8])
        loss.block_until_ready()
        losses.append(loss)

    wall = fw.host_timed(step, a.warmup, a.iters)
    vals = np.asarray(jnp.stack(losses), dtype=np.float64)
    ok = bool(np.isfinite(vals).all())
    raw = b"".join(np.asarray(p).tobytes() for p in jax.tree.leaves(params))
    return fw.report(fw.floats_digest([float(v) for v in vals], raw), wall, a.iters, None, ok)


if __name__ == "__main__":
    raise SystemExit(main())
