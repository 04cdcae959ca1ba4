#!/usr/bin/env python3
"""PyTorch DistributedDataParallel training loop: 2 processes, one GPU each, NCCL (issue 10).

Models a user's data-parallel training: the MLP of fw_torch_train.py (4 Linear(256, 256) with
LayerNorm and GELU between them), wrapped in DistributedDataParallel (small gradient buckets,
so several NCCL all-reduces overlap the backward pass), Adam(foreach=True), MSE loss on random
data seeded per rank, and loss.item() every step. Deterministic: the same run gives the same
bits (torch.use_deterministic_algorithms, CUBLAS_WORKSPACE_CONFIG, a fixed NCCL setup).

  torchrun --standalone --nproc_per_node=2 bench/fw_ddp.py
  LD_PRELOAD=build/libautograph.so torchrun --standalone --nproc_per_node=2 bench/fw_ddp.py

(LD_PRELOAD in torchrun's environment reaches the workers.) Output: every rank prints its own
lines prefixed "[rank R] " (pid, params_checksum and the usual result lines: its checksum
covers its losses and the final parameters); then rank 0 prints, unprefixed, params_checksum
(sha256 of the final parameters, identical on every rank after DDP), ranks_agree, and the
usual result lines for the whole job (checksum over every rank's checksum; result OK only if
every rank's losses are finite and all ranks hold the same parameters). --out-dir=D: rank R
also writes its unprefixed lines to D/rank<R>.txt, and rank 0 the final parameters (float32,
in model.parameters() order) to D/params.bin.
"""
import contextlib
import datetime
import hashlib
import io
import math
import os
import sys

import fw_common as fw


def main():
    ap = fw.parser(__doc__, iters=200, warmup=20)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--bucket-mb", type=float, default=0.25,
                    help="DDP bucket_cap_mb (small: one all-reduce per layer or so)")
    ap.add_argument("--out-dir", default="", help="per-rank result files and params.bin here")
    ap.add_argument("--timeout-s", type=int, default=300,
                    help="NCCL collective time-out: a hang becomes an error")
    a = ap.parse_args()

    # Before NCCL and cuBLAS initialise: NVLink multicast stays off on these machines, and
    # cuBLAS needs a fixed workspace configuration to be deterministic.
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
    os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    try:
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
    except ImportError:
        fw.skip("PyTorch is not installed")
    if not torch.cuda.is_available() or torch.cuda.device_count() < 2:
        fw.skip("needs 2 GPUs")
    if "RANK" not in os.environ or "LOCAL_RANK" not in os.environ:
        print("fw_ddp.py: run it with torchrun --standalone --nproc_per_node=2", file=sys.stderr)
        return 2

    rank = int(os.environ["RANK"])
    local = int(os.environ["LOCAL_RANK"])
    dev = torch.device("cuda", local)
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=a.timeout_s))
    world = dist.get_world_size()
    torch.use_deterministic_algorithms(True, warn_only=True)

    # The same initial weights everywhere (DDP also broadcasts rank 0's at construction).
    w = a.width
    model = fw.train_mlp(torch, w, dev)
    ddp = DDP(model, device_ids=[local], bucket_cap_mb=a.bucket_mb)
    opt = torch.optim.Adam(ddp.parameters(), lr=1e-3, foreach=True)
    # Each rank its own data.
    gen = torch.Generator(device=dev)
    gen.manual_seed(1000 + rank)
    xs = torch.randn(8, a.batch, w, device=dev, generator=gen)
    ys = torch.randn(8, a.batch, w, device=dev, generator=gen)
    losses = []

    wall, gpu_us = fw.torch_timed(torch, fw.mse_train_step(torch, ddp, opt, xs, ys, losses),
                                  a.warmup, a.iters)

    pbytes = fw.torch_bytes(torch, *model.parameters())
    params_sum = hashlib.sha256(pbytes).hexdigest()[:16]
    finite = all(math.isfinite(v) for v in losses)
    digest = fw.floats_digest(losses, pbytes)
    everyone = [None] * world
    dist.all_gather_object(everyone, (params_sum, digest, finite))
    agree = all(e[0] == params_sum for e in everyone)
    all_ok = agree and all(e[2] for e in everyone)

    def lines(digest, ok):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            fw.report(digest, wall, a.iters, gpu_us, ok)
        return buf.getvalue().splitlines()

    own = ["pid: %d" % os.getpid(), "params_checksum: %s" % params_sum] + lines(digest, finite)
    if a.out_dir:
        os.makedirs(a.out_dir, exist_ok=True)
        with open(os.path.join(a.out_dir, "rank%d.txt" % rank), "w") as f:
            f.write("\n".join(own) + "\n")
        if rank == 0:
            with open(os.path.join(a.out_dir, "params.bin"), "wb") as f:
                f.write(pbytes)
    # Ranks print in turn, then rank 0 the job's lines: the barriers keep them in that order
    # (every rank writes to the same inherited stdout).
    for r in range(world):
        if r == rank:
            print("\n".join("[rank %d] %s" % (rank, s) for s in own), flush=True)
        dist.barrier(device_ids=[local])
    if rank == 0:
        job = hashlib.sha256("".join(e[1] for e in everyone).encode()).hexdigest()[:16]
        print("params_checksum: %s" % params_sum)
        print("ranks_agree: %s" % ("yes" if agree else "NO: " + " ".join(e[0] for e in everyone)))
        print("\n".join(lines(job, all_ok)), flush=True)
    dist.barrier(device_ids=[local])
    dist.destroy_process_group()
    return 0 if all_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
