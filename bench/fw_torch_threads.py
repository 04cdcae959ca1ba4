#!/usr/bin/env python3
"""PyTorch inference from several host threads at once, each on its own stream (row F19).

Models a server that answers requests from a thread pool: each of --threads Python threads owns
a model (an MLP of 6 x Linear 1024 + GELU, batch 16, fp16; the same weights) and a
torch.cuda.Stream, and per request runs a forward on its stream and reads the top class back
(.tolist(), a sync of its stream only). The threads share the GPU, the caching allocator and
the GIL, so their launches interleave differently from run to run; each thread's results do
not depend on that. One iteration is one request on every thread; the checksum covers every
thread's answers, in thread order. No graph mode.

  python3 bench/fw_torch_threads.py                                   # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_torch_threads.py  # with libautograph
"""
import copy
import threading

import fw_common as fw


def main():
    ap = fw.parser(__doc__, iters=200, warmup=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=16)
    a = ap.parse_args()
    torch = fw.torch_or_skip()
    from torch import nn

    torch.manual_seed(1234)
    dt = torch.float16
    base = nn.Sequential(*[m for _ in range(6) for m in (nn.Linear(1024, 1024), nn.GELU())])
    models = [copy.deepcopy(base).to("cuda", dt).eval() for _ in range(a.threads)]
    streams = [torch.cuda.Stream() for _ in range(a.threads)]
    inputs = [torch.randn(a.batch, 1024, device="cuda", dtype=dt) for _ in range(8)]
    torch.cuda.synchronize()
    answers = [[] for _ in range(a.threads)]

    def serve(t, first, n, errors):
        try:
            with torch.no_grad(), torch.cuda.stream(streams[t]):
                for i in range(first, first + n):
                    out = models[t](inputs[(i + t) % len(inputs)])
                    answers[t].append(out.float().argmax(dim=1).tolist())
        except BaseException as e:  # (re-raised by the main thread)
            errors.append(e)

    def run(first, n):
        """Every thread serves requests first .. first + n - 1, all threads at once."""
        errors = []
        ts = [threading.Thread(target=serve, args=(t, first, n, errors))
              for t in range(a.threads)]
        for th in ts:
            th.start()
        for th in ts:
            th.join()
        if errors:
            raise errors[0]

    run(0, a.warmup)
    # one timed call: every thread's a.iters requests (a thread per request would time thread
    # starts)
    wall, gpu_us = fw.torch_timed(torch, lambda i: run(a.warmup, a.iters), 0, 1)
    ok = all(len(ans) == a.warmup + a.iters for ans in answers)
    flat = [float(v) for ans in answers for req in ans for v in req]
    return fw.report(fw.floats_digest(flat), wall, a.iters, gpu_us, ok)


if __name__ == "__main__":
    raise SystemExit(main())
