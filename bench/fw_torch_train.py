#!/usr/bin/env python3
"""PyTorch training step of a small MLP (framework row F2; issue 12).

Models a user's training loop: a random-init MLP of 4 Linear(256, 256) layers with LayerNorm
and GELU between them, batch 64 of random data (a few batches, cycled), MSE loss,
torch.optim.Adam(foreach=True), and loss.item() every step (the usual logging, and a sync).
No graph mode: capturing a whole step needs Adam(capturable=True), a different program.

  python3 bench/fw_torch_train.py                                        # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_torch_train.py       # with libautograph
"""
import fw_common as fw


def main():
    ap = fw.parser(__doc__, iters=250, warmup=50, count=True)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--batch", type=int, default=64)
    a = ap.parse_args()
    torch = fw.torch_or_skip()

    w = a.width
    model = fw.train_mlp(torch, w, "cuda")
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)
    xs = torch.randn(8, a.batch, w, device="cuda")
    ys = torch.randn(8, a.batch, w, device="cuda")
    losses = []

    step = fw.mse_train_step(torch, model, opt, xs, ys, losses)
    return fw.torch_train_bench(torch, a, step, losses, model.parameters())


if __name__ == "__main__":
    raise SystemExit(main())
