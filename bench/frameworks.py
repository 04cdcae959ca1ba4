#!/usr/bin/env python3
"""Framework benchmark rows (F1-F22) for bench/run.py, and the interposer's ceiling.

workloads(build, quick) returns rows in the format of run.py's workloads(): (id, description,
command, has_graph). A row is left out when its framework cannot be imported here. ceiling()
is the best speed-up an interposer can give a loop (issue 12), to print beside each row.

  bench/frameworks.py                       # list the rows this machine would run
  bench/frameworks.py --ceiling 46 760      # the ceiling of 46 launches in 760 us/iteration
  bench/frameworks.py --goal ab_F7.json 281 # a paired row against its ceiling (issues 20, 21)
  bench/frameworks.py --goal ab_F7.json stats_F7.*.json   # ...launches per iteration from stats
  python3 -m doctest bench/frameworks.py   # check ceiling()
"""
import argparse
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def _have(*modules):
    return all(importlib.util.find_spec(m) is not None for m in modules)


def workloads(build, quick):
    """The framework rows; `build` is unused (the scripts need nothing built), kept for the
    signature of run.py's workloads()."""
    del build
    it = 300 if quick else 1000

    def script(name, *args):
        return [sys.executable, os.path.join(HERE, name)] + list(args)

    W = []
    if _have("torch"):
        W.append(("F1", "PyTorch eager transformer forward, batch 1, d=256, 16 tokens, 3 blocks",
                  script("fw_torch_transformer.py", "--iters=%d" % (it // 4), "--warmup=50"), True))
        W.append(("F2", "PyTorch training step: MLP 4 x Linear 256 + LayerNorm, Adam foreach, loss.item()",
                  script("fw_torch_train.py", "--iters=%d" % (it // 4), "--warmup=50"), False))
    if _have("torch", "triton"):
        W.append(("F6", "torch.compile (Inductor) transformer forward, batch 1, d=512, 16 tokens, 4 blocks, fp16",
                  script("fw_torch_compile.py", "--iters=60", "--warmup=20"), True))
    if _have("torch", "torchvision"):
        W.append(("F7", "PyTorch eager CNN: torchvision ResNet-50, batch 1, fp16, channels_last (cuDNN)",
                  script("fw_cnn.py", "--iters=60", "--warmup=20"), True))
    if _have("torch", "torchvision"):
        W.append(("F8", "PyTorch AMP training: small CNN, GradScaler, SGD momentum, loss.item()",
                  script("fw_amp_train.py", "--iters=%d" % (it // 5), "--warmup=30"), False))
    if _have("cupy"):
        W.append(("F9", "CuPy conjugate gradients (cupyx.scipy.sparse.linalg.cg), 2D Poisson 128x128, per solve",
                  script("fw_cupy_cg.py", "--iters=%d" % (8 if quick else 20), "--warmup=3"), False))
    if _have("torch"):
        W.append(("F10", "PyTorch LSTM training: 2 layers, hidden 256, 32 steps, batch 16 (cuDNN RNN), Adam, loss.item()",
                  script("fw_lstm_train.py", "--iters=%d" % (it // 5), "--warmup=30"), False))
        W.append(("F11", "PyTorch MLP inference fed by a prefetching side stream (pinned copies, events), argmax read back",
                  script("fw_prefetch.py", "--iters=%d" % (it // 3), "--warmup=30"), False))
    if _have("cupy"):
        W.append(("F12", "CuPy FFT filter loop: fft, multiply, ifft (cuFFT plans), tanh, norm read back",
                  script("fw_cupy_fft.py", "--iters=%d" % it, "--warmup=50"), False))
    if _have("cupy"):
        W.append(("F3", "CuPy loop: elementwise ops + RawKernel + sum read back each iteration",
                  script("fw_cupy_loop.py", "--iters=%d" % it, "--warmup=50"), False))
    if _have("torch", "transformers"):
        W.append(("F4", "HF transformers GPT-2 greedy generate, fp16, dynamic cache, 32 new tokens",
                  script("fw_hf_gpt2.py", "--iters=%d" % (8 if quick else 20), "--warmup=3"), False))
    if _have("torch"):
        W.append(("F13", "PyTorch batched least squares: Gauss-Newton steps, bmm, Cholesky solve (cuSOLVER), loss.item()",
                  script("fw_torch_solve.py", "--iters=%d" % (it // 4), "--warmup=30"), False))
    if _have("torch", "transformers"):
        W.append(("F14", "HF transformers BERT encoder inference: 6 layers, batch 8 x 64 tokens, fp16, mean-pooled to the host",
                  script("fw_hf_bert.py", "--iters=%d" % (it // 5), "--warmup=20"), True))
    if _have("torch", "transformers"):
        W.append(("F15", "HF transformers Llama greedy generate (RMSNorm, RoPE, GQA via SDPA), fp16, static cache, 32 new tokens",
                  script("fw_hf_llama.py", "--cache=static", "--iters=%d" % (4 if quick else 12), "--warmup=2"), False))
    if _have("torch", "triton"):
        W.append(("F16", "a user's own Triton kernels (add + RMSNorm, SiLU gate, softmax with a changing temperature) + cuBLAS, loss.item()",
                  script("fw_triton.py", "--iters=%d" % (it // 3), "--warmup=30"), False))
    if _have("torch"):
        W.append(("F17", "PyTorch two-tower inference, each tower on its own side stream (wait_stream, record_stream), top class read back",
                  script("fw_torch_streams.py", "--iters=%d" % (it // 3), "--warmup=30"), False))
    if _have("cupy"):
        W.append(("F18", "CuPy on the stream-ordered allocator (MemoryAsyncPool) on a non-blocking stream: a wave stencil, energy read back",
                  script("fw_cupy_async.py", "--iters=%d" % (it // 2), "--warmup=50"), False))
    if _have("torch"):
        W.append(("F19", "PyTorch inference from 2 host threads, each with its own model and stream, top class read back per request",
                  script("fw_torch_threads.py", "--iters=%d" % (it // 3), "--warmup=20"), False))
    if _have("torch", "torchdiffeq"):
        W.append(("F20", "PyTorch neural ODE: torchdiffeq dopri5 (adaptive; the step, error and accept read back every step), MLP field, batch 64",
                  script("fw_torch_ode.py", "--iters=%d" % (it // 20), "--warmup=5"), False))
    if _have("numba"):
        W.append(("F21", "a user's own Numba CUDA kernels: heat-equation stencil, 20 steps + a max reduction read back per iteration, default stream",
                  script("fw_numba.py", "--iters=%d" % (it // 3), "--warmup=20"), False))
    if _have("torch"):
        W.append(("F23", "PyTorch diffusion sampling: a small UNet (GroupNorm, convolutions, attention), 20 DDIM steps an image, fp16, the image to the host",
                  script("fw_diffusion.py", "--iters=%d" % (it // 20), "--warmup=3"), True))
    if _have("torch", "transformers"):
        W.append(("F24", "HF transformers T5 encoder-decoder greedy generate, fp32, 48-token source, 24 new tokens",
                  script("fw_hf_t5.py", "--iters=%d" % (8 if quick else 16), "--warmup=3"), False))
    if _have("jax"):
        W.append(("F5", "JAX jitted MLP train step (forward + grad + SGD), block_until_ready",
                  script("fw_jax_loop.py", "--iters=%d" % it, "--warmup=50"), False))
    if _have("jax"):
        W.append(("F22", "JAX jitted conjugate gradients until convergence (lax.while_loop), matrix-free 2D Poisson 128x128, a norm to the host",
                  script("fw_jax_cg.py", "--iters=%d" % (it // 10), "--warmup=5"), False))
    return W


def ceiling(launches_per_iter, iter_us, eager_launch_us=2.85, held_launch_us=0.1):
    """The interposer's ceiling for a loop: eager time / best time with libautograph.

    libautograph can only remove launch cost: at best each of the iteration's launches costs
    held_launch_us (a held launch) instead of eager_launch_us, and everything else in the
    iteration (Python, the framework, syncs, GPU time not hidden) stays. The saving is
    f = launches x (eager launch - held launch) / iteration time, and the ceiling 1 / (1 - f).
    Returns inf when f >= 1 (the given costs leave nothing else in the iteration: the inputs
    do not fit the model). The transformer of issue 12, 46 launches in 760 us:

    >>> round(ceiling(46, 760), 3)
    1.2
    >>> ceiling(0, 100), ceiling(1000, 100)
    (1.0, inf)
    """
    f = launches_per_iter * (eager_launch_us - held_launch_us) / iter_us
    return float("inf") if f >= 1 else 1.0 / (1.0 - f)


def saving_share(eager_us, ours_us, ceil):
    """The share of the saving the ceiling allows that was taken: (eager - ours) / (eager -
    eager / ceiling); issues 20 and 21 ask >= 0.9. Above 1 when ours beats the ceiling (the
    launches cost more than the ceiling's constants, or eager's samples were slow).

    >>> round(saving_share(1200, 1020, 1.2), 2)
    0.9
    """
    allowed = eager_us - eager_us / ceil
    return (eager_us - ours_us) / allowed if allowed > 0 else float("nan")


def launches_per_iter(cmd, stats_files):
    """Kernel launches per iteration from the library's stats files (AUTOGRAPH_STATS, one per
    process) of runs of `cmd` (its --iters and --warmup): every launch of the process over its
    iterations, so a little more than the loop's own (the model's set-up launches too). A file
    without launches is another process's (torch.compile's compile workers inherit the preload
    and write one each): left out, or F6's launches per iteration came out halved."""
    counts = []
    for p in stats_files:
        with open(p) as f:
            c = json.load(f)["counters"]
        counts.append(sum(v for k, v in c.items() if k.startswith("launches.cuLaunch")))
    it = sum(int(a.split("=", 1)[1]) for a in cmd if a.startswith(("--iters=", "--warmup=")))
    return per_iter(counts, it)


def per_iter(counts, iters):
    """Mean launches per iteration of the processes that launched (counts: one per process).

    >>> per_iter([700, 0, 660, 0], 10)
    68.0
    >>> per_iter([0, 0], 10), per_iter([], 10), per_iter([5], 0)
    (0.0, 0.0, 0.0)
    """
    ran = [n for n in counts if n]
    return sum(ran) / len(ran) / iters if ran and iters else 0.0


def goal(ab_json, launches, eager_launch_us, held_launch_us):
    """The ceiling goal of a paired bench/ab.py row (its JSON): medians of `eager` and `new`.
    `launches`: per iteration, or the row's stats files (launches_per_iter)."""
    with open(ab_json) as f:
        d = json.load(f)
    rows = {r["variant"]: r for r in d["rows"]}
    try:
        launches_per_iter_ = float(launches[0])
    except ValueError:
        launches_per_iter_ = launches_per_iter(d["cmd"], launches)
    e, o = rows["eager"]["median_us"], rows["new"]["median_us"]
    c = ceiling(launches_per_iter_, e, eager_launch_us, held_launch_us)
    print("eager %.1f us, ours %.1f us (medians); %.1f launches per iteration: ceiling %.3fx; "
          "share of the saving it allows: %.2f (goal 0.9)" % (e, o, launches_per_iter_, c,
                                                              saving_share(e, o, c)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ceiling", nargs=2, type=float, metavar=("LAUNCHES", "ITER_US"))
    ap.add_argument("--goal", nargs="+", metavar="AB_JSON LAUNCHES|STATS...",
                    help="a paired row's medians (bench/ab.py --out) against its ceiling, with its "
                         "launches per iteration or its stats files")
    ap.add_argument("--eager-launch-us", type=float, default=2.85)
    ap.add_argument("--held-launch-us", type=float, default=0.1)
    a = ap.parse_args()
    if a.goal:
        if len(a.goal) < 2:
            ap.error("--goal AB_JSON LAUNCHES|STATS...")
        goal(a.goal[0], a.goal[1:], a.eager_launch_us, a.held_launch_us)
        return 0
    if a.ceiling:
        print("ceiling: %.3fx" % ceiling(a.ceiling[0], a.ceiling[1], a.eager_launch_us, a.held_launch_us))
        return 0
    for wid, desc, cmd, has_graph in workloads(None, False):
        print("%s  %s%s\n    %s" % (wid, desc, " (+ graph mode)" if has_graph else "", " ".join(cmd)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
