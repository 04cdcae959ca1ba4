#!/usr/bin/env python3
"""PyTorch eager inference of a small transformer, batch 1 (framework row F1; issue 12).

Models a user's batch-1 inference loop: a random-init stack of pre-norm blocks (LayerNorm +
nn.MultiheadAttention + MLP with GELU), d_model 256, 16 tokens, under torch.no_grad, one forward
per iteration and torch.cuda.synchronize() after each. The default 3 blocks make about 46 GPU
launches per forward (check with --count-launches). --mode=graph runs the same forward
captured once with torch.cuda.CUDAGraph and replayed: PyTorch's own graph, the reference.

  python3 bench/fw_torch_transformer.py                                  # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_torch_transformer.py # with libautograph
  python3 bench/fw_torch_transformer.py --mode=graph                     # CUDAGraph reference
"""
import fw_common as fw


def main():
    ap = fw.parser(__doc__, iters=250, warmup=50, graph=True, count=True)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--d-model", type=int, default=256)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=16)
    a = ap.parse_args()
    try:
        import torch
        from torch import nn
    except ImportError:
        fw.skip("PyTorch is not installed")
    if not torch.cuda.is_available():
        fw.skip("no CUDA device")

    class Block(nn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.ln1 = nn.LayerNorm(d)
            self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
            self.ln2 = nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            h = self.ln1(x)
            x = x + self.attn(h, h, h, need_weights=False)[0]
            return x + self.mlp(self.ln2(x))

    torch.manual_seed(1234)
    d = a.d_model
    model = nn.Sequential(*[Block(d, a.heads) for _ in range(a.layers)], nn.LayerNorm(d))
    model = model.cuda().eval()
    inputs = torch.randn(8, 1, a.tokens, d, device="cuda")  # cycled, one per iteration
    acc = torch.zeros(1, a.tokens, d, device="cuda")
    graph = None
    with torch.no_grad():
        if a.mode == "graph":
            static_in = torch.zeros(1, a.tokens, d, device="cuda")
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    static_out = model(static_in)
            torch.cuda.current_stream().wait_stream(s)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                static_out = model(static_in)

        def step(i):
            x = inputs[i % inputs.shape[0]]
            if graph is not None:
                static_in.copy_(x)
                graph.replay()
                out = static_out
            else:
                out = model(x)
            acc.add_(out)
            torch.cuda.synchronize()

        for i in range(a.warmup):
            step(i)
        wall, gpu_us = fw.torch_timed(torch, step, a.warmup, a.iters)
        ok = bool(torch.isfinite(acc).all())
        digest = fw.floats_digest([], fw.torch_bytes(torch, acc))
        counted = None
        if a.count_launches and graph is None:
            counted = fw.torch_count_launches(torch, step, 0, 10)
    return fw.report(digest, wall, a.iters, gpu_us, ok, counted)


if __name__ == "__main__":
    raise SystemExit(main())
