#!/usr/bin/env python3
"""A neural ODE solved with torchdiffeq's adaptive dopri5 (framework row F20).

Models a user's solver loop: each iteration integrates a batch of 64 states of 32 dimensions
through a learned vector field (an MLP: 3 x Linear 128 + tanh, fp32) from t = 0 to 1 with
torchdiffeq.odeint (Dormand-Prince 5(4), rtol 1e-5, atol 1e-6), starting from a new initial
state each time. The solver decides every step on the host: it reads the step size, the error
ratio and the accept flag back (several small syncs a step), so its steps are short runs of
launches between syncs, and a rejected step makes the run differ. The checksum covers the
end states, every solve's count of function evaluations and the last solution's bytes.

  python3 bench/fw_torch_ode.py                                        # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_torch_ode.py       # with libautograph
"""
import math

import fw_common as fw


def main():
    ap = fw.parser(__doc__, iters=60, warmup=5)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--dim", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--method", default="dopri5")
    a = ap.parse_args()
    torch = fw.torch_or_skip()
    try:
        from torchdiffeq import odeint
    except ImportError:
        fw.skip("torchdiffeq is not installed")

    torch.manual_seed(1234)
    dev = torch.device("cuda")

    class Field(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(
                torch.nn.Linear(a.dim + 1, a.hidden), torch.nn.Tanh(),
                torch.nn.Linear(a.hidden, a.hidden), torch.nn.Tanh(),
                torch.nn.Linear(a.hidden, a.dim))
            self.nfe = 0

        def forward(self, t, y):
            self.nfe += 1
            return self.net(torch.cat([y, t.expand(y.shape[0], 1)], dim=1))

    f = Field().to(dev)
    ts = torch.tensor([0.0, 0.5, 1.0], device=dev)
    g = torch.Generator(device=dev)
    g.manual_seed(99)
    y0s = [torch.randn(a.batch, a.dim, device=dev, generator=g) for _ in range(8)]
    ends, nfes = [], []
    last = [None]

    def step(i):
        f.nfe = 0
        with torch.no_grad():
            sol = odeint(f, y0s[i % len(y0s)] * (1.0 + 0.01 * (i % 5)), ts,
                         rtol=1e-5, atol=1e-6, method=a.method)
        ends.append(float(sol[-1].abs().sum()))  # (a sync: the solve's answer to the host)
        nfes.append(float(f.nfe))
        last[0] = sol

    wall, gpu_us = fw.torch_timed(torch, step, a.warmup, a.iters)
    ok = all(math.isfinite(v) for v in ends)
    print("function evaluations per solve: %.1f" % (sum(nfes) / len(nfes)))
    return fw.report(fw.floats_digest(ends + nfes, fw.torch_bytes(torch, last[0])), wall,
                     a.iters, gpu_us, ok)


if __name__ == "__main__":
    raise SystemExit(main())
