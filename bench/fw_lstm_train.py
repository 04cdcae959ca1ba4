#!/usr/bin/env python3
"""PyTorch LSTM training (framework row F10): cuDNN's RNN kernels forward and backward.

Models a user's sequence-model training loop: a random-init 2-layer nn.LSTM (hidden 256) over
sequences of 32 steps, batch 16, a Linear head, MSE loss, Adam, loss.item() every step.

  python3 bench/fw_lstm_train.py                                        # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_lstm_train.py       # with libautograph
"""
import fw_common as fw


def main():
    ap = fw.parser(__doc__, iters=200, warmup=30, count=True)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("--batch", type=int, default=16)
    a = ap.parse_args()
    torch = fw.torch_or_skip()
    from torch import nn

    torch.manual_seed(1234)
    torch.backends.cudnn.deterministic = True  # the checksum compares runs bit for bit
    h = a.hidden
    lstm = nn.LSTM(64, h, num_layers=2, batch_first=True).cuda()
    head = nn.Linear(h, 8).cuda()
    params = list(lstm.parameters()) + list(head.parameters())
    opt = torch.optim.Adam(params, lr=1e-3)
    xs = torch.randn(4, a.batch, a.seq, 64, device="cuda")
    ys = torch.randn(4, a.batch, 8, device="cuda")
    losses = []

    def step(i):
        opt.zero_grad(set_to_none=True)
        out, _ = lstm(xs[i % 4])
        loss = nn.functional.mse_loss(head(out[:, -1]), ys[i % 4])
        loss.backward()
        opt.step()
        losses.append(loss.item())

    return fw.torch_train_bench(torch, a, step, losses, params)


if __name__ == "__main__":
    raise SystemExit(main())
