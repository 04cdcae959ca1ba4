#!/usr/bin/env python3
"""PyTorch mixed-precision training of a small CNN (framework row F8).

Models a user's AMP training loop: a random-init CNN (4 x Conv2d 3x3 + BatchNorm + ReLU, a
max-pool after the second, global average pool, Linear to 10 classes), channels_last, batch 32
of random 32x32 images (a few batches, cycled), cross-entropy under torch.autocast(fp16),
torch.amp.GradScaler (its inf check, unscale and skipped steps), SGD with momentum, and
loss.item() every step. cuDNN convolutions forward and backward. No graph mode: GradScaler's
step reads found_inf on the host.

  python3 bench/fw_amp_train.py                                        # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_amp_train.py       # with libautograph
"""
import fw_common as fw


def main():
    ap = fw.parser(__doc__, iters=200, warmup=30, count=True)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--width", type=int, default=64)
    a = ap.parse_args()
    torch = fw.torch_or_skip()
    from torch import nn

    torch.manual_seed(1234)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True  # the checksum compares runs bit for bit
    c = a.width

    def block(i, o):
        return [nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True)]

    model = nn.Sequential(*block(3, c), *block(c, c), nn.MaxPool2d(2), *block(c, 2 * c),
                          *block(2 * c, 2 * c), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(2 * c, 10))
    model = model.cuda().to(memory_format=torch.channels_last).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda")
    xs = [torch.randn(a.batch, 3, 32, 32, device="cuda").contiguous(memory_format=torch.channels_last)
          for _ in range(4)]
    ys = torch.randint(0, 10, (4, a.batch), device="cuda")
    losses = []

    def step(i):
        x, y = xs[i % 4], ys[i % 4]
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())

    return fw.torch_train_bench(torch, a, step, losses, model.parameters())


if __name__ == "__main__":
    raise SystemExit(main())
