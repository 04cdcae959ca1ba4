#!/usr/bin/env python3
"""PyTorch inference with branches on side streams (framework row F17).

Models a user who overlaps the independent branches of a model by hand: a two-tower network
(a text tower of 4 Linear + GELU layers and an image tower of 3 Conv2d + ReLU layers with a
pooled head, batch 4, fp16) whose towers each run on their own torch.cuda.Stream, after
wait_stream on the main stream; the main stream waits for both (events), fuses them
(concatenate, Linear, softmax) and reads the top class back per iteration (.tolist(), a sync).
Each side stream's outputs are kept alive with record_stream, as the documentation says.
No graph mode.

  python3 bench/fw_torch_streams.py                                   # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_torch_streams.py  # with libautograph
"""
import fw_common as fw


def main():
    ap = fw.parser(__doc__, iters=300, warmup=30)
    ap.add_argument("--batch", type=int, default=4)
    a = ap.parse_args()
    torch = fw.torch_or_skip()
    from torch import nn

    torch.manual_seed(1234)
    dt = torch.float16
    text = nn.Sequential(*[m for _ in range(4) for m in (nn.Linear(512, 512), nn.GELU())])
    image = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(),
                          nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU(),
                          nn.Conv2d(64, 64, 3, stride=2, padding=1), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 512))
    head = nn.Linear(1024, 100)
    for m in (text, image, head):
        m.to("cuda", dt).eval()
    main_s = torch.cuda.current_stream()
    s_text, s_image = torch.cuda.Stream(), torch.cuda.Stream()
    tokens = [torch.randn(a.batch, 512, device="cuda", dtype=dt) for _ in range(4)]
    pixels = [torch.randn(a.batch, 3, 64, 64, device="cuda", dtype=dt) for _ in range(4)]
    tops = []

    def step(i):
        t_in, p_in = tokens[i % 4], pixels[i % 4]
        s_text.wait_stream(main_s)
        s_image.wait_stream(main_s)
        with torch.cuda.stream(s_text):
            ft = text(t_in)
        with torch.cuda.stream(s_image):
            fi = image(p_in)
        main_s.wait_stream(s_text)
        main_s.wait_stream(s_image)
        ft.record_stream(main_s)
        fi.record_stream(main_s)
        probs = torch.softmax(head(torch.cat([ft, fi], dim=1)).float(), dim=1)
        tops.append(probs.argmax(dim=1).tolist() + [round(float(probs.max()), 6)])

    with torch.no_grad():
        wall, gpu_us = fw.torch_timed(torch, step, a.warmup, a.iters)
    flat = [float(v) for t in tops for v in t]
    ok = len(tops) == a.warmup + a.iters
    return fw.report(fw.floats_digest(flat), wall, a.iters, gpu_us, ok)


if __name__ == "__main__":
    raise SystemExit(main())
