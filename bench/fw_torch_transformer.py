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
    return fw.torch_forward_bench(torch, a, model, inputs, acc)


if __name__ == "__main__":
    raise SystemExit(main())
