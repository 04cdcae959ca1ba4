#!/usr/bin/env python3
"""A user's own Triton kernels in a PyTorch loop (framework row F16).

Models a researcher's hand-written Triton: per layer, a fused residual-add + RMSNorm kernel
(@triton.jit, one program per row), a cuBLAS matmul (torch), and a fused SiLU-gate kernel;
L layers over a batch of 8 rows of 1024, then a row softmax kernel whose temperature changes
every iteration (a scalar argument that differs), and the loss read back (.item(), a sync).
Triton launches its kernels through the driver (cuLaunchKernelEx in recent versions). No graph
mode: the temperature is a kernel argument, as users write it.

  python3 bench/fw_triton.py                                          # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_triton.py         # with libautograph
"""
import math

import fw_common as fw


def main():
    ap = fw.parser(__doc__, iters=400, warmup=30)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--rows", type=int, default=8)
    ap.add_argument("--width", type=int, default=1024)
    a = ap.parse_args()
    torch = fw.torch_or_skip()
    try:
        import triton
        import triton.language as tl
    except ImportError:
        fw.skip("Triton is not installed")

    @triton.jit
    def add_rmsnorm(x_ptr, r_ptr, w_ptr, out_ptr, n, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(x_ptr + row * n + offs, mask=m, other=0.0).to(tl.float32)
        r = tl.load(r_ptr + row * n + offs, mask=m, other=0.0).to(tl.float32)
        h = x + r
        tl.store(r_ptr + row * n + offs, h, mask=m)  # the new residual stream
        rms = tl.sqrt(tl.sum(h * h, axis=0) / n + eps)
        w = tl.load(w_ptr + offs, mask=m, other=0.0)
        tl.store(out_ptr + row * n + offs, h / rms * w, mask=m)

    @triton.jit
    def silu_gate(a_ptr, out_ptr, n, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        m = offs < n
        g = tl.load(a_ptr + row * 2 * n + offs, mask=m, other=0.0)
        u = tl.load(a_ptr + row * 2 * n + n + offs, mask=m, other=0.0)
        tl.store(out_ptr + row * n + offs, g * tl.sigmoid(g) * u, mask=m)

    @triton.jit
    def softmax_t(x_ptr, out_ptr, n, inv_t, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(x_ptr + row * n + offs, mask=m, other=-float("inf")) * inv_t
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(out_ptr + row * n + offs, e / tl.sum(e, axis=0), mask=m)

    torch.manual_seed(1234)
    R, N, L = a.rows, a.width, a.layers
    BLOCK = triton.next_power_of_2(N)
    dev = "cuda"
    ws = [torch.randn(N, 2 * N, device=dev) / math.sqrt(N) for _ in range(L)]
    vs = [torch.randn(N, N, device=dev) / math.sqrt(N) for _ in range(L)]
    norms = [1.0 + 0.1 * torch.randn(N, device=dev) for _ in range(L)]
    x0 = torch.randn(R, N, device=dev)
    resid = torch.zeros(R, N, device=dev)
    h = torch.empty(R, N, device=dev)
    gated = torch.empty(R, N, device=dev)
    probs = torch.empty(R, N, device=dev)
    loss = torch.zeros((), device=dev)
    target = torch.randint(0, N, (R,), device=dev)
    rows = torch.arange(R, device=dev)

    def body(t):
        x = x0
        for li in range(L):
            add_rmsnorm[(R,)](x, resid, norms[li], h, N, 1e-6, BLOCK=BLOCK)
            up = h @ ws[li]
            silu_gate[(R,)](up, gated, N, BLOCK=BLOCK)
            x = gated @ vs[li]
        softmax_t[(R,)](x, probs, N, t, BLOCK=BLOCK)
        loss.copy_(-torch.log(probs[rows, target] + 1e-9).mean())

    losses = []

    def step(i):
        t = 1.0 / (1.0 + 0.01 * (i % 7))
        body(t)
        losses.append(loss.item())

    wall, gpu_us = fw.torch_timed(torch, step, a.warmup, a.iters)
    ok = all(math.isfinite(v) for v in losses)
    return fw.report(fw.floats_digest(losses, fw.torch_bytes(torch, resid)), wall, a.iters,
                     gpu_us, ok)


if __name__ == "__main__":
    raise SystemExit(main())
