#!/usr/bin/env python3
"""A PyTorch batched least-squares loop (framework row F13): Gauss-Newton steps of a curve fit.

Models a user's solver loop on the GPU: 64 independent exponential-sum fits (8 parameters each,
256 samples), one Gauss-Newton step per iteration. Each step builds the residuals and the
Jacobian with elementwise ops, forms J^T J + damping and J^T r with batched matmuls (cuBLAS),
solves with a Cholesky factorisation (torch.linalg.cholesky_ex + cholesky_solve: cuSOLVER or
cuBLAS batched kernels), updates the parameters, and reads the mean squared residual back
(.item(), a sync) to decide convergence, as such loops do. No graph mode.

  python3 bench/fw_torch_solve.py                                        # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_torch_solve.py       # with libautograph
"""
import math

import fw_common as fw


def main():
    ap = fw.parser(__doc__, iters=300, warmup=30, count=True)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--samples", type=int, default=256)
    ap.add_argument("--terms", type=int, default=4, help="exponential terms (2 parameters each)")
    a = ap.parse_args()
    torch = fw.torch_or_skip()
    torch.manual_seed(1234)
    dev = "cuda"
    B, S, K = a.batch, a.samples, a.terms
    t = torch.linspace(0, 4, S, device=dev).expand(B, S)
    true_a = torch.rand(B, K, device=dev) + 0.5
    true_k = torch.rand(B, K, device=dev) * 2 + 0.1
    y = (true_a[:, :, None] * torch.exp(-true_k[:, :, None] * t[:, None, :])).sum(1)
    y = y + 0.01 * torch.randn(B, S, device=dev)
    p0 = torch.cat([torch.ones(B, K, device=dev), torch.linspace(0.2, 2, K, device=dev).expand(B, K)], 1)
    state = {"p": p0.clone()}
    eye = torch.eye(2 * K, device=dev).expand(B, 2 * K, 2 * K)
    losses = []

    def step(i):
        p = state["p"]
        if i % 50 == 0:  # restart from the initial guess now and then: the loop keeps working
            p = p0.clone()
        amp, rate = p[:, :K], p[:, K:]
        e = torch.exp(-rate[:, :, None] * t[:, None, :])            # B K S
        r = (amp[:, :, None] * e).sum(1) - y                        # B S
        J = torch.cat([e, -amp[:, :, None] * t[:, None, :] * e], 1)  # B 2K S
        JtJ = J @ J.transpose(1, 2) + 1e-3 * eye
        Jtr = (J @ r[:, :, None])
        L, info = torch.linalg.cholesky_ex(JtJ)
        dp = torch.cholesky_solve(Jtr, L)[:, :, 0]
        state["p"] = (p - dp).clamp(-10, 10)
        losses.append(float((r * r).mean().item()))

    wall, gpu_us = fw.torch_timed(torch, step, a.warmup, a.iters)
    ok = all(math.isfinite(v) for v in losses)
    digest = fw.floats_digest(losses, fw.torch_bytes(torch, state["p"]))
    counted = fw.torch_count_launches(torch, step, 0, 10) if a.count_launches else None
    return fw.report(digest, wall, a.iters, gpu_us, ok, counted)


if __name__ == "__main__":
    raise SystemExit(main())
