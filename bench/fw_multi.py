#!/usr/bin/env python3
"""Two GPUs from one process: model parallelism, nn.DataParallel, jax.pmap (rows M3, M4, M5).

Models the two ways a user spreads one process's work over two GPUs without torchrun:

  --mode=pipe (M3)  a model split in two stages, stage 1 (4 x Linear 1024 + GELU, fp16) on
                    cuda:0 and stage 2 (the same, then a Linear head) on cuda:1; each iteration
                    runs 4 micro-batches through both stages, the activations copied from one
                    GPU to the other (.to("cuda:1", non_blocking=True): a peer copy ordered
                    after stage 1 on cuda:0's stream and before stage 2 on cuda:1's), and reads
                    the top classes back (.tolist(): a sync of cuda:1's stream).
  --mode=dp (M4)    training with nn.DataParallel on devices 0 and 1: the MLP of
                    fw_torch_train.py (Linear 256 + LayerNorm + GELU, x3, then Linear), SGD with
                    momentum, MSE loss, loss.item() per step. Each step scatters the batch,
                    broadcasts the parameters to cuda:1 (replicate), runs the two replicas from
                    two host threads at once (parallel_apply), gathers the outputs on cuda:0,
                    and sums the gradients back onto cuda:0 in backward.

  --mode=pmap (M5)  JAX data-parallel training with jax.pmap over both GPUs: the MLP of
                    fw_jax_loop.py (3 x Dense 256 + GELU), each device its half of the batch,
                    the gradients averaged across the devices (lax.pmean: an all-reduce XLA
                    runs through NCCL), an SGD update, the loss read back per step.

All three are deterministic (the same bits each run; JAX with --xla_gpu_deterministic_ops): the checksum covers every iteration's answers
(pipe) or losses (dp) and the final outputs or parameters.

  python3 bench/fw_multi.py --mode=pipe                                   # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_multi.py --mode=pipe  # with libautograph
"""
import math
import time

import fw_common as fw


def sync_all(torch):
    torch.cuda.synchronize(0)
    torch.cuda.synchronize(1)


def timed(torch, step, warmup, n):
    """fw.torch_timed over both GPUs: wall seconds, and cuda:1's events around the timed loop
    (its work ends each iteration, so they span the whole loop)."""
    for i in range(warmup):
        step(i)
    sync_all(torch)
    with torch.cuda.device(1):
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        torch.cuda.profiler.start()
        e0.record()
    t0 = time.perf_counter()
    for i in range(warmup, warmup + n):
        step(i)
    with torch.cuda.device(1):
        e1.record()
    sync_all(torch)
    t1 = time.perf_counter()
    torch.cuda.profiler.stop()
    return t1 - t0, e0.elapsed_time(e1) * 1e3


def pipe(torch, a):
    from torch import nn
    torch.manual_seed(1234)
    dt = torch.float16
    w = a.width

    def mlp(extra):
        return nn.Sequential(*[m for _ in range(4) for m in (nn.Linear(w, w), nn.GELU())], *extra)

    s1 = mlp([]).to("cuda:0", dt).eval()
    s2 = mlp([nn.Linear(w, 64)]).to("cuda:1", dt).eval()
    inputs = [torch.randn(a.micro * a.batch, w, device="cuda:0", dtype=dt) for _ in range(8)]
    acc = torch.zeros(a.batch, 64, device="cuda:1", dtype=torch.float32)
    answers = []
    sync_all(torch)

    def step(i):
        with torch.no_grad():
            x = inputs[i % len(inputs)]
            tops = []
            for m in range(a.micro):
                h = s1(x[m * a.batch:(m + 1) * a.batch])
                out = s2(h.to("cuda:1", non_blocking=True))
                acc.add_(out.float())
                tops.append(out.argmax(dim=1))
            answers.append(torch.cat(tops).tolist())

    wall, gpu_us = timed(torch, step, a.warmup, a.iters)
    flat = [float(v) for ans in answers for v in ans]
    ok = bool(torch.isfinite(acc).all())
    return fw.floats_digest(flat, fw.torch_bytes(torch, acc)), wall, gpu_us, ok


def dp(torch, a):
    from torch import nn
    torch.use_deterministic_algorithms(True, warn_only=True)
    w = a.width
    model = fw.train_mlp(torch, w, "cuda:0")
    par = nn.DataParallel(model, device_ids=[0, 1], output_device=0)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    gen = torch.Generator(device="cuda:0")
    gen.manual_seed(1000)
    xs = torch.randn(8, 2 * a.batch, w, device="cuda:0", generator=gen)
    ys = torch.randn(8, 2 * a.batch, w, device="cuda:0", generator=gen)
    losses = []
    sync_all(torch)

    wall, gpu_us = timed(torch, fw.mse_train_step(torch, par, opt, xs, ys, losses), a.warmup, a.iters)
    ok = all(math.isfinite(v) for v in losses)
    return fw.floats_digest(losses, fw.torch_bytes(torch, *model.parameters())), wall, gpu_us, ok


def pmap(a):
    jax, jnp = fw.jax_or_skip()
    import numpy as np
    if jax.local_device_count() < 2:
        fw.skip("needs 2 GPUs")
    ndev = 2
    devs = jax.local_devices()[:ndev]
    w, key = a.width, jax.random.PRNGKey(1234)
    keys = jax.random.split(key, 19)
    params = [(jax.random.normal(keys[j], (w, w)) * w ** -0.5, jnp.zeros(w)) for j in range(3)]
    # a leading axis of one entry per device, which pmap splits across them: every device a
    # copy of the parameters, and its half of each batch, placed there once (an identity pmap
    # leaves its results split across the devices)
    place = jax.pmap(lambda v: v, devices=devs)
    params = jax.tree.map(lambda p: place(jnp.stack([p] * ndev)), params)
    xs = [place(jax.random.normal(keys[3 + j], (ndev, a.batch, w))) for j in range(8)]
    ys = [place(jax.random.normal(keys[11 + j], (ndev, a.batch, w))) for j in range(8)]

    def loss_fn(params, x, y):
        for W, b in params[:-1]:
            x = jax.nn.gelu(x @ W + b)
        W, b = params[-1]
        return jnp.mean((x @ W + b - y) ** 2)

    def train_step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        grads = jax.lax.pmean(grads, "d")
        return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads), jax.lax.pmean(loss, "d")

    train = jax.pmap(train_step, axis_name="d", devices=devs)
    losses = []

    def step(i):
        nonlocal params
        params, loss = train(params, xs[i % 8], ys[i % 8])
        losses.append(float(loss[0]))

    wall = fw.host_timed(step, a.warmup, a.iters)
    ok = all(math.isfinite(v) for v in losses)
    leaves = [np.asarray(p) for p in jax.tree.leaves(params)]
    agree = all((l[0] == l[1]).all() for l in leaves)  # every device the same parameters
    raw = b"".join(l.tobytes() for l in leaves)
    return fw.floats_digest(losses, raw), wall, None, ok and agree


def main():
    ap = fw.parser(__doc__, iters=200, warmup=20)
    ap.add_argument("--mode", choices=["pipe", "dp", "pmap"], default="pipe")
    ap.add_argument("--width", type=int, default=0, help="layer width (pipe 1024, dp and pmap 256)")
    ap.add_argument("--batch", type=int, default=0, help="rows per micro-batch or device "
                    "(pipe 8, dp and pmap 32)")
    ap.add_argument("--micro", type=int, default=4, help="micro-batches per iteration (pipe)")
    a = ap.parse_args()
    a.width = a.width or (1024 if a.mode == "pipe" else 256)
    a.batch = a.batch or (8 if a.mode == "pipe" else 32)
    if a.mode == "pmap":  # (JAX alone in its process: it takes most of each GPU's memory)
        digest, wall, gpu_us, ok = pmap(a)
        return fw.report(digest, wall, a.iters, gpu_us, ok)
    torch = fw.torch_or_skip()
    if torch.cuda.device_count() < 2:
        fw.skip("needs 2 GPUs")
    digest, wall, gpu_us, ok = (pipe if a.mode == "pipe" else dp)(torch, a)
    return fw.report(digest, wall, a.iters, gpu_us, ok)


if __name__ == "__main__":
    raise SystemExit(main())
