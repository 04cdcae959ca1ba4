#!/usr/bin/env python3
"""PyTorch eager CNN inference, torchvision ResNet-50, batch 1 (framework row F7).

Models a user's batch-1 image inference loop: torchvision.models.resnet50(weights=None) (random
init, nothing downloaded), fp16, channels_last, eval() and torch.no_grad() (cuDNN
convolutions), one 224x224 image per iteration (8 of them, cycled), a forward and
torch.cuda.synchronize() after each. Random init lets activations grow through the 16 residual
blocks until fp16 overflows, so before converting to fp16 the last BatchNorm of every residual
branch gets weight 0.2 (a fixed, deterministic change; every kernel still runs).
--model=resnet18 is the smaller one. --mode=graph (or --graph) runs the same forward captured
once with torch.cuda.CUDAGraph and replayed: PyTorch's own graph, the reference.

  python3 bench/fw_cnn.py                                               # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_cnn.py              # with libautograph
  python3 bench/fw_cnn.py --graph                                       # CUDAGraph reference
"""
import fw_common as fw


def main():
    ap = fw.parser(__doc__, iters=60, warmup=20, graph=True, count=True)
    ap.add_argument("--graph", dest="mode", action="store_const", const="graph",
                    help="the same as --mode=graph")
    ap.add_argument("--model", choices=["resnet50", "resnet18"], default="resnet50")
    ap.add_argument("--size", type=int, default=224, help="image height and width")
    a = ap.parse_args()
    try:
        import torch
        import torchvision
    except ImportError:
        fw.skip("PyTorch or torchvision is not installed")
    if not torch.cuda.is_available():
        fw.skip("no CUDA device")

    torch.manual_seed(1234)
    model = getattr(torchvision.models, a.model)(weights=None)
    from torchvision.models.resnet import BasicBlock, Bottleneck
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, Bottleneck):
                m.bn3.weight.fill_(0.2)
            elif isinstance(m, BasicBlock):
                m.bn2.weight.fill_(0.2)
    model = model.to("cuda", torch.float16).to(memory_format=torch.channels_last).eval()
    inputs = [torch.randn(1, 3, a.size, a.size, device="cuda", dtype=torch.float16)
              .to(memory_format=torch.channels_last) for _ in range(8)]
    acc = torch.zeros(1, 1000, device="cuda", dtype=torch.float32)
    return fw.torch_forward_bench(torch, a, model, inputs, acc)


if __name__ == "__main__":
    raise SystemExit(main())
