#!/usr/bin/env python3
"""PyTorch inference with a prefetching input pipeline (framework row F11): two streams.

Models a user's data-loader prefetcher: host batches in pinned memory are copied to the GPU
on a side stream (non_blocking=True) one step ahead; the compute stream waits on an event,
runs a random-init MLP (6 x Linear 1024 + GELU, batch 64) and the prediction's argmax is read
back each step (.cpu(), a sync); record_stream keeps the caching allocator honest.

  python3 bench/fw_prefetch.py                                        # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_prefetch.py       # with libautograph
"""
import hashlib

import fw_common as fw


def main():
    ap = fw.parser(__doc__, iters=300, warmup=30)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--width", type=int, default=1024)
    a = ap.parse_args()
    torch = fw.torch_or_skip()
    from torch import nn

    torch.manual_seed(1234)
    w = a.width
    layers = []
    for _ in range(6):
        layers += [nn.Linear(w, w), nn.GELU()]
    model = nn.Sequential(*layers, nn.Linear(w, 16)).cuda().eval()
    host = [torch.randn(a.batch, w).pin_memory() for _ in range(8)]
    side = torch.cuda.Stream()
    preds = hashlib.sha256()

    def load(i):
        with torch.cuda.stream(side):
            x = host[i % 8].to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        return x, ev

    state = {"next": None}

    def step(i):
        x, ev = state["next"] if state["next"] is not None else load(i)
        state["next"] = load(i + 1)
        torch.cuda.current_stream().wait_event(ev)
        x.record_stream(torch.cuda.current_stream())
        with torch.no_grad():
            p = model(x).argmax(dim=1)
        preds.update(bytes(p.cpu().numpy().astype("int64").tobytes()))

    wall, gpu_us = fw.torch_timed(torch, step, a.warmup, a.iters)
    return fw.report(preds.hexdigest()[:16], wall, a.iters, gpu_us, True)


if __name__ == "__main__":
    raise SystemExit(main())
