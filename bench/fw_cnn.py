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
    graph = None
    with torch.no_grad():
        if a.mode == "graph":
            static_in = torch.zeros_like(inputs[0])
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
            x = inputs[i % len(inputs)]
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
