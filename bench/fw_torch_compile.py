#!/usr/bin/env python3
"""PyTorch torch.compile (Inductor) inference of a small transformer, batch 1 (framework row F6).

Models a user's compiled batch-1 inference loop: a random-init stack of pre-norm blocks
(LayerNorm, fused QKV Linear + F.scaled_dot_product_attention, output Linear, MLP with GELU),
d_model 512, 16 tokens, fp16, under torch.no_grad, compiled with torch.compile (default mode:
Inductor's Triton kernels and cuBLAS matmuls, launched eagerly); one forward per iteration and
torch.cuda.synchronize() after each. Compilation happens in the warm-up, before the timed
loop (the first run of a machine compiles for tens of seconds; later runs reuse Inductor's
on-disk cache). --mode=reduce-overhead compiles with PyTorch's own CUDA graphs (cudagraph
trees): the framework's graph, the reference; --mode=graph is the same (bench/run.py's name).

  python3 bench/fw_torch_compile.py                                     # Inductor, eager launches
  LD_PRELOAD=build/libautograph.so python3 bench/fw_torch_compile.py    # with libautograph
  python3 bench/fw_torch_compile.py --mode=reduce-overhead              # PyTorch's CUDA graphs
"""
import fw_common as fw


def main():
    ap = fw.parser(__doc__, iters=60, warmup=20, count=True)
    ap.add_argument("--mode", choices=["default", "reduce-overhead", "graph"], default="default",
                    help="torch.compile mode; graph = reduce-overhead (the reference)")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--d-model", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--dtype", choices=["fp16", "fp32"], default="fp16")
    a = ap.parse_args()
    if a.warmup < 5:
        ap.error("--warmup must be at least 5 (compilation, and cudagraph trees record late)")
    try:
        import torch
        import torch.nn.functional as F
        from torch import nn
    except ImportError:
        fw.skip("PyTorch is not installed")
    if not torch.cuda.is_available():
        fw.skip("no CUDA device")
    mode = "reduce-overhead" if a.mode == "graph" else a.mode
    dtype = torch.float16 if a.dtype == "fp16" else torch.float32

    class Block(nn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.heads = heads
            self.ln1 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.ln2 = nn.LayerNorm(d)
            self.fc1 = nn.Linear(d, 4 * d)
            self.fc2 = nn.Linear(4 * d, d)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
            q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class Model(nn.Module):
        def __init__(self, d, heads, layers):
            super().__init__()
            self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
            self.ln = nn.LayerNorm(d)

        def forward(self, x):
            for blk in self.blocks:
                x = blk(x)
            return self.ln(x)

    torch.manual_seed(1234)
    d = a.d_model
    model = Model(d, a.heads, a.layers).to("cuda", dtype).eval()
    compiled = torch.compile(model, mode=mode)
    # separate tensors (not views of one): every input has the same layout and alignment
    inputs = [torch.randn(1, a.tokens, d, device="cuda", dtype=dtype) for _ in range(8)]
    acc = torch.zeros(1, a.tokens, d, device="cuda", dtype=torch.float32)
    graphs = mode == "reduce-overhead"

    with torch.no_grad():
        def step(i):
            if graphs:
                torch.compiler.cudagraph_mark_step_begin()
            out = compiled(inputs[i % len(inputs)])
            acc.add_(out)  # consumes the output before the next replay overwrites it
            torch.cuda.synchronize()

        wall, gpu_us = fw.torch_timed(torch, step, a.warmup, a.iters)
        ok = bool(torch.isfinite(acc).all())
        digest = fw.floats_digest([], fw.torch_bytes(torch, acc))
        counted = None
        if a.count_launches and not graphs:
            counted = fw.torch_count_launches(torch, step, 0, 10)
    return fw.report(digest, wall, a.iters, gpu_us, ok, counted)


if __name__ == "__main__":
    raise SystemExit(main())
