#!/usr/bin/env python3
"""The host cost of single PyTorch operations, one kind at a time, in a process of its own.

What interception alone costs a framework shows here first: each kind runs N times in a loop
after a warm-up, with a device sync only at its end (kinds that sync do so themselves), and its
mean wall time per operation is printed, "us per op KIND: X". Kinds:
  add     x.add_(1.0) on a 16-element tensor x: one kernel launch (cudaLaunchKernel)
  mm      a 16x16 fp16 matmul into a preallocated output: cuBLAS (cuLaunchKernelEx)
  item    x.sum().item(): a launch, an 8-byte device-to-host copy and a stream sync
  alloc   torch.empty(1024) dropped at once: the caching allocator, no driver call
Run it as it is, with LD_PRELOAD=build/libautograph.so, and with AUTOGRAPH_DISABLE=1 too, in
alternating processes (bench/ab.py cannot: several numbers per run).
"""
import argparse
import time

import fw_common as fw


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--kinds", default="add,mm,item,alloc")
    a = ap.parse_args()
    torch = fw.torch_or_skip()
    x = torch.zeros(16, device="cuda")
    m = torch.randn(16, 16, device="cuda", dtype=torch.float16)
    out = torch.empty(16, 16, device="cuda", dtype=torch.float16)
    ops = {
        "add": lambda: x.add_(1.0),
        "mm": lambda: torch.mm(m, m, out=out),
        "item": lambda: x.sum().item(),
        "alloc": lambda: torch.empty(1024, device="cuda"),
    }
    for kind in a.kinds.split(","):
        op = ops[kind]
        for _ in range(2000):
            op()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(a.n):
            op()
        torch.cuda.synchronize()
        print("us per op %s: %.3f" % (kind, (time.perf_counter() - t0) * 1e6 / a.n), flush=True)
    print("result: OK")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
