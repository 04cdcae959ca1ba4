#!/usr/bin/env python3
"""A PyTorch eager batch-1 MLP forward loop (benchmark P6, and the PyTorch test).

Modes: eager (plain PyTorch: run it with or without libautograph preloaded) and graph (the
same loop captured once with torch.cuda.CUDAGraph and replayed: the hand-written reference).
Prints the same result lines as the sample apps: checksum, time_us_per_iter, result.
"""
import argparse
import hashlib
import time

import torch

import fw_common as fw


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--width", type=int, default=512)
    ap.add_argument("--mode", choices=["eager", "graph"], default="eager")
    ap.add_argument("--sync-every", type=int, default=1)
    ap.add_argument("--check", action="store_true", help="also compare with a float64 CPU reference")
    a = ap.parse_args()

    torch.manual_seed(1234)
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    layers = []
    for _ in range(a.layers):
        layers += [torch.nn.Linear(a.width, a.width), torch.nn.GELU()]
    model = torch.nn.Sequential(*layers).to(dev).eval()
    inputs = torch.randn(16, 1, a.width, device=dev)      # cycled through, one per iteration
    acc = torch.zeros(1, a.width, device=dev)

    static_in = torch.zeros(1, a.width, device=dev)
    graph = None
    with torch.no_grad():
        if a.mode == "graph":
            graph, static_out = fw.torch_capture(torch, model, static_in)

        def step(i):
            x = inputs[i % inputs.shape[0]]
            if graph is not None:
                static_in.copy_(x)
                graph.replay()
                out = static_out
            else:
                out = model(x)
            acc.add_(out)
            if a.sync_every and (i + 1) % a.sync_every == 0:
                torch.cuda.synchronize()

        for i in range(a.warmup):
            step(i)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for i in range(a.warmup, a.warmup + a.iters):
            step(i)
        torch.cuda.synchronize()
        t1 = time.perf_counter()

    ok = bool(torch.isfinite(acc).all())
    if a.check:
        # float64 reference on the CPU of the same accumulation
        m64 = model.to("cpu").double()
        ref = torch.zeros(1, a.width, dtype=torch.float64)
        with torch.no_grad():
            for i in range(a.warmup + a.iters):
                ref += m64(inputs[i % inputs.shape[0]].cpu().double())
        err = float((acc.cpu().double() - ref).norm() / ref.norm())
        ok = ok and err < 1e-3
        print("relative_error: %.3e" % err)
    digest = hashlib.sha256(acc.cpu().numpy().tobytes()).hexdigest()[:16]
    print("launches: unknown")
    print("checksum: %s" % digest)
    print("time_us_per_iter: %.3f" % ((t1 - t0) * 1e6 / a.iters))
    print("result: %s" % ("OK" if ok else "MISMATCH"))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
