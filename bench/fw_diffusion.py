#!/usr/bin/env python3
"""PyTorch diffusion sampling: a small UNet denoiser run through DDIM steps (framework row F23).

Models a user sampling images from a latent diffusion model at batch 1, written in plain
PyTorch as diffusers' UNet2DModel and DDIMScheduler do it: a 4-channel 32x32 latent, a UNet of
two resolutions (64 and 128 channels: ResNet blocks of GroupNorm, SiLU, 3x3 convolutions and a
timestep embedding added in; self-attention at 16x16; a middle block; skip connections), fp16,
random init (nothing downloaded), eval() and torch.no_grad(). One iteration is one image: a
fresh latent from a seeded generator, then 20 DDIM steps, each a UNet forward at that step's
timestep (a sinusoidal embedding computed on the device from a new scalar every step) and the
update x = sqrt(a_prev) * x0 + sqrt(1 - a_prev) * eps, whose coefficients are Python floats that
change every step (kernel arguments that differ between the steps of one image, the same between
images). The image is copied to the host at the end (a sync); there is no sync inside the 20
steps. The checksum covers every image.

--mode=graph: the UNet forward captured once with torch.cuda.CUDAGraph (the timestep as a
tensor copied in), replayed every step: PyTorch's own graph, the reference.

  python3 bench/fw_diffusion.py                                    # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_diffusion.py   # with libautograph
  python3 bench/fw_diffusion.py --mode=graph                       # CUDAGraph reference
"""
import math

import fw_common as fw


def build(torch, base):
    nn = torch.nn
    F = torch.nn.functional

    class Res(nn.Module):
        def __init__(self, cin, cout, temb):
            super().__init__()
            self.n1 = nn.GroupNorm(16, cin)
            self.c1 = nn.Conv2d(cin, cout, 3, padding=1)
            self.t = nn.Linear(temb, cout)
            self.n2 = nn.GroupNorm(16, cout)
            self.c2 = nn.Conv2d(cout, cout, 3, padding=1)
            self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()
            with torch.no_grad():  # (random init: keep the residual branch small, as trained
                self.c2.weight.mul_(0.1)  # models' zero-initialised last convolutions do)

        def forward(self, x, t):
            h = self.c1(F.silu(self.n1(x)))
            h = h + self.t(F.silu(t))[:, :, None, None]
            h = self.c2(F.silu(self.n2(h)))
            return self.skip(x) + h

    class Attn(nn.Module):
        def __init__(self, c, heads=4):
            super().__init__()
            self.n = nn.GroupNorm(16, c)
            self.qkv = nn.Linear(c, 3 * c)
            self.o = nn.Linear(c, c)
            self.heads = heads

        def forward(self, x):
            b, c, hh, ww = x.shape
            h = self.n(x).flatten(2).transpose(1, 2)  # b, hw, c
            q, k, v = self.qkv(h).chunk(3, dim=-1)
            sh = (b, hh * ww, self.heads, c // self.heads)
            q, k, v = (z.reshape(sh).transpose(1, 2) for z in (q, k, v))
            a = F.scaled_dot_product_attention(q, k, v)
            a = a.transpose(1, 2).reshape(b, hh * ww, c)
            return x + self.o(a).transpose(1, 2).reshape(b, c, hh, ww)

    class UNet(nn.Module):
        def __init__(self, cin=4, c0=base, c1=2 * base, temb=4 * base):
            super().__init__()
            self.c0 = c0
            self.temb = nn.Sequential(nn.Linear(c0, temb), nn.SiLU(), nn.Linear(temb, temb))
            self.inp = nn.Conv2d(cin, c0, 3, padding=1)
            self.d0 = nn.ModuleList([Res(c0, c0, temb), Res(c0, c0, temb)])
            self.down = nn.Conv2d(c0, c0, 3, stride=2, padding=1)
            self.d1 = nn.ModuleList([Res(c0, c1, temb), Res(c1, c1, temb)])
            self.a1 = nn.ModuleList([Attn(c1), Attn(c1)])
            self.mid = nn.ModuleList([Res(c1, c1, temb), Res(c1, c1, temb)])
            self.mid_attn = Attn(c1)
            self.u1 = nn.ModuleList([Res(2 * c1, c1, temb), Res(2 * c1, c1, temb),
                                     Res(c1 + c0, c1, temb)])
            self.ua = nn.ModuleList([Attn(c1), Attn(c1), Attn(c1)])
            self.up = nn.Conv2d(c1, c1, 3, padding=1)
            self.u0 = nn.ModuleList([Res(c1 + c0, c0, temb), Res(2 * c0, c0, temb),
                                     Res(2 * c0, c0, temb)])
            self.out_n = nn.GroupNorm(16, c0)
            self.out = nn.Conv2d(c0, cin, 3, padding=1)

        def embed(self, t):
            half = self.c0 // 2
            f = torch.exp(torch.arange(half, device=t.device, dtype=torch.float32)
                          * (-math.log(10000.0) / half))
            e = t.float()[:, None] * f[None, :]
            return self.temb(torch.cat([e.sin(), e.cos()], dim=1).to(self.inp.weight.dtype))

        def forward(self, x, t):
            te = self.embed(t)
            h = self.inp(x)
            skips = [h]
            for r in self.d0:
                h = r(h, te)
                skips.append(h)
            h = self.down(h)
            skips.append(h)
            for r, a in zip(self.d1, self.a1):
                h = a(r(h, te))
                skips.append(h)
            h = self.mid[0](h, te)
            h = self.mid_attn(h)
            h = self.mid[1](h, te)
            for r, a in zip(self.u1, self.ua):
                h = a(r(torch.cat([h, skips.pop()], dim=1), te))
            h = self.up(F.interpolate(h, scale_factor=2.0, mode="nearest"))
            for r in self.u0:
                h = r(torch.cat([h, skips.pop()], dim=1), te)
            return self.out(F.silu(self.out_n(h)))

    return UNet()


def main():
    ap = fw.parser(__doc__, iters=30, warmup=3, graph=True)
    ap.add_argument("--steps", type=int, default=20, help="DDIM steps per image")
    ap.add_argument("--size", type=int, default=32, help="latent height and width")
    ap.add_argument("--base", type=int, default=64, help="the UNet's first width")
    a = ap.parse_args()
    torch = fw.torch_or_skip()

    torch.manual_seed(1234)
    dev = "cuda"
    unet = build(torch, a.base).to(dev, torch.float16).eval()
    # the DDPM training schedule (linear betas, 1000 steps) and DDIM's evenly spaced timesteps
    betas = [1e-4 + (0.02 - 1e-4) * i / 999 for i in range(1000)]
    alphas, acc = [], 1.0
    for b in betas:
        acc *= 1.0 - b
        alphas.append(acc)
    ts = list(range(999, -1, -1000 // a.steps))[:a.steps]
    shape = (1, 4, a.size, a.size)
    gen = torch.Generator(device=dev)
    images = []

    graph = None
    if a.mode == "graph":
        static_x = torch.zeros(shape, device=dev, dtype=torch.float16)
        static_t = torch.zeros(1, device=dev, dtype=torch.int64)
        with torch.no_grad():
            graph, static_eps = fw.torch_capture(torch, lambda x: unet(x, static_t), static_x)

    def denoise(x, t):
        if graph is None:
            return unet(x, torch.full((1,), t, device=dev, dtype=torch.int64))
        static_x.copy_(x)
        static_t.fill_(t)
        graph.replay()
        return static_eps

    def step(i):
        gen.manual_seed(1000 + i)
        x = torch.randn(shape, device=dev, dtype=torch.float16, generator=gen)
        with torch.no_grad():
            for k, t in enumerate(ts):
                a_t = alphas[t]
                a_prev = alphas[ts[k + 1]] if k + 1 < len(ts) else 1.0
                eps = denoise(x, t)
                x0 = (x - math.sqrt(1.0 - a_t) * eps) / math.sqrt(a_t)
                x0 = x0.clamp(-4.0, 4.0)
                x = math.sqrt(a_prev) * x0 + math.sqrt(1.0 - a_prev) * eps
        images.append(x.float().cpu())  # the image to the host: a sync

    wall, gpu_us = fw.torch_timed(torch, step, a.warmup, a.iters)
    ok = all(bool(torch.isfinite(im).all()) for im in images)
    digest = fw.floats_digest([], fw.torch_bytes(torch, *images))
    print("us per denoising step: %.3f" % (wall * 1e6 / (a.iters * a.steps)))
    return fw.report(digest, wall, a.iters, gpu_us, ok)


if __name__ == "__main__":
    raise SystemExit(main())
