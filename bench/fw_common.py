"""Scaffolding shared by the bench/fw_*.py framework benchmarks: the common arguments, the skip
exit, and the result lines that bench/run.py and bench/ab.py parse (the same as torch_mlp.py's
and the sample apps': launches, checksum, time_us_per_iter, result), plus two lines for people:
"gpu us per iteration" (CUDA events around the timed loop) and, with --count-launches,
"launches per iteration" (PyTorch only, counted by torch.profiler after the timed loop, so the
timing and the checksum never include the profiler). "host_calib_us" is the process's own host
speed (host_calib_us below), for bench/ab.py.

INPROC_ROUNDS=B (bench/inproc.py): the timed loop compares libautograph on and paused inside this
one process (`inproc_blocks`, below), free of the host speed that differs between processes."""
import argparse
import hashlib
import math
import struct
import sys
import time

SKIP = 77  # "not run here": no CUDA device or no framework; callers tell it from a failure


def parser(doc, iters, warmup, graph=False, count=False):
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--iters", type=int, default=iters, help="timed iterations")
    ap.add_argument("--warmup", type=int, default=warmup, help="untimed iterations first")
    if graph:
        ap.add_argument("--mode", choices=["eager", "graph"], default="eager",
                        help="graph: the framework's own CUDA graph of the same loop (reference)")
    if count:
        ap.add_argument("--count-launches", action="store_true",
                        help="after the timed loop, count GPU kernels per iteration with torch.profiler")
    return ap


def skip(why):
    print("skip: %s" % why, flush=True)
    sys.exit(SKIP)


def floats_digest(values, extra=b""):
    """A checksum of a list of Python floats (bit-exact) and optional raw bytes."""
    h = hashlib.sha256(struct.pack("<%dd" % len(values), *values))
    h.update(extra)
    return h.hexdigest()[:16]


def torch_bytes(torch, *tensors):
    """The raw bytes of some tensors, without needing numpy."""
    out = b""
    for t in tensors:
        out += bytes(t.detach().cpu().contiguous().view(-1).view(torch.uint8).tolist())
    return out


def torch_or_skip():
    """PyTorch with a CUDA device, or the skip exit."""
    try:
        import torch
    except ImportError:
        skip("PyTorch is not installed")
    if not torch.cuda.is_available():
        skip("no CUDA device")
    return torch


def transformers_or_skip(*names):
    """PyTorch with a CUDA device and the named classes of transformers (nothing downloaded: the
    hub is set offline first), or the skip exit. Returns (torch, class, ...)."""
    import os
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        import torch
        import transformers
        classes = [getattr(transformers, n) for n in names]
    except (ImportError, AttributeError):
        skip("PyTorch or transformers is not installed")
    if not torch.cuda.is_available():
        skip("no CUDA device")
    return (torch, *classes)


def cupy_or_skip():
    """CuPy with a CUDA device, or the skip exit."""
    try:
        import cupy as cp
    except ImportError:
        skip("CuPy is not installed")
    try:
        if cp.cuda.runtime.getDeviceCount() == 0:
            skip("no CUDA device")
    except cp.cuda.runtime.CUDARuntimeError:
        skip("no CUDA device")
    return cp


def jax_or_skip():
    """JAX on a CUDA device, with XLA_FLAGS given --xla_gpu_deterministic_ops=true (unless it
    names that flag already) so that every run computes bit-identical values, which the
    checksums compare; or the skip exit. Returns (jax, jax.numpy)."""
    import os
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_gpu_deterministic_ops" not in flags:
        os.environ["XLA_FLAGS"] = (flags + " --xla_gpu_deterministic_ops=true").strip()
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        skip("JAX is not installed")
    if jax.default_backend() != "gpu":
        skip("no CUDA device")
    return jax, jnp


def inproc_blocks():
    """INPROC_ROUNDS=B: (B, pause, resume), the library's autograph_pause and autograph_resume (or,
    without the library, calls that do nothing, so that an eager reference runs the same
    iterations and its checksum compares); None when INPROC_ROUNDS is not set."""
    import ctypes
    import os
    v = os.environ.get("INPROC_ROUNDS", "")
    if not v:
        return None
    try:
        b = int(v)
    except ValueError:
        b = 0
    if b < 1:
        print("inproc: INPROC_ROUNDS=%r is not a count of rounds; timing as usual" % v, flush=True)
        return None
    lib = ctypes.CDLL(None)
    try:
        return b, lib.autograph_pause, lib.autograph_resume
    except AttributeError:
        print("inproc: libautograph is not preloaded: the rounds run unpaused", flush=True)
        return b, (lambda: 0), (lambda: 0)


def run_blocks(step, first, n, sync, ab):
    """The timed loop under INPROC_ROUNDS: B rounds, each a block with the library on and one
    paused (the order alternating: on-off, off-on, ...), n // (2B) iterations a block, its first
    untimed (a switch's own cost: the pause's flush, the first replay after it); what is left
    of n runs last, on. Prints "inproc_block: ROUND on|off US" (wall us per timed iteration,
    the block ending with sync()); returns nothing: every one of the n iterations ran."""
    b, pause, resume = ab
    m = n // (2 * b)
    if m < 2:
        raise SystemExit("inproc: %d iterations cannot make %d rounds of two blocks of at least "
                         "2 iterations" % (n, b))
    i = first
    for r in range(b):
        for arm in (("on", "off") if r % 2 == 0 else ("off", "on")):
            if arm == "off":
                pause()
            step(i)
            sync()
            t0 = time.perf_counter()
            for k in range(i + 1, i + m):
                step(k)
            sync()
            t = time.perf_counter() - t0
            if arm == "off":
                resume()
            i += m
            print("inproc_block: %d %s %.3f" % (r, arm, t * 1e6 / (m - 1)), flush=True)
    for k in range(i, first + n):
        step(k)


def timed_loop(step, first, n, sync):
    """step(first) .. step(first + n - 1), in INPROC_ROUNDS's blocks when it is set."""
    ab = inproc_blocks()
    if ab is None:
        for i in range(first, first + n):
            step(i)
    else:
        run_blocks(step, first, n, sync, ab)


def cupy_timed(cp, step, warmup, n):
    """torch_timed for CuPy: runs step(0) .. step(warmup - 1) untimed, then, after a device
    sync, step(warmup) .. step(warmup + n - 1); returns (wall seconds, GPU microseconds between
    two events recorded around the timed loop)."""
    import time
    for i in range(warmup):
        step(i)
    cp.cuda.Device().synchronize()
    e0, e1 = cp.cuda.Event(), cp.cuda.Event()
    e0.record()
    cp.cuda.profiler.start()  # the timed region, as profilers (and the replay model) see it
    t0 = time.perf_counter()
    timed_loop(step, warmup, n, cp.cuda.Device().synchronize)
    e1.record()
    e1.synchronize()
    t1 = time.perf_counter()
    cp.cuda.profiler.stop()
    return t1 - t0, cp.cuda.get_elapsed_time(e0, e1) * 1e3


def host_timed(step, warmup, n):
    """step(0) .. step(warmup - 1) untimed, then step(warmup) .. step(warmup + n - 1) (in
    INPROC_ROUNDS's blocks when it is set); returns their wall seconds. For frameworks without
    CUDA events (JAX): each step must end in a sync of its own."""
    for i in range(warmup):
        step(i)
    t0 = time.perf_counter()
    timed_loop(step, warmup, n, lambda: None)
    return time.perf_counter() - t0


def train_mlp(torch, w, device):
    """The MLP of F2, M2 and M4 -- (Linear(w, w), LayerNorm, GELU) three times, then Linear(w, w)
    -- from seed 1234, on device, in training mode."""
    from torch import nn
    torch.manual_seed(1234)
    layers = []
    for _ in range(3):
        layers += [nn.Linear(w, w), nn.LayerNorm(w), nn.GELU()]
    return nn.Sequential(*layers, nn.Linear(w, w)).to(device).train()


def mse_train_step(torch, net, opt, xs, ys, losses):
    """The training step of F2, M2 and M4 as step(i): batch i % len(xs), zero_grad, the MSE loss
    of net(x) against y, backward, the optimizer's step, loss.item() appended to losses (a
    sync)."""
    def step(i):
        x, y = xs[i % len(xs)], ys[i % len(ys)]
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(net(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return step


def torch_timed(torch, step, warmup, n):
    """Runs step(0) .. step(warmup - 1) untimed, then step(warmup) .. step(warmup + n - 1);
    returns (wall seconds, GPU microseconds between two events recorded just outside the timed
    loop)."""
    import time
    for i in range(warmup):
        step(i)
    torch.cuda.synchronize()
    e0 = torch.cuda.Event(enable_timing=True)
    e1 = torch.cuda.Event(enable_timing=True)
    torch.cuda.profiler.start()  # the timed region, as profilers (and the replay model) see it
    e0.record()
    t0 = time.perf_counter()
    timed_loop(step, warmup, n, torch.cuda.synchronize)
    e1.record()
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    torch.cuda.profiler.stop()
    return t1 - t0, e0.elapsed_time(e1) * 1e3


def torch_capture(torch, model, static_in):
    """PyTorch's own CUDA graph of model(static_in), the reference of --mode=graph: three
    warm-up forwards on a side stream, then the capture. Returns (graph, static_out)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            static_out = model(static_in)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = model(static_in)
    return graph, static_out


def torch_forward_bench(torch, a, model, inputs, acc):
    """The batch-1 inference loop of the framework rows: under torch.no_grad, one forward per
    iteration of inputs[i % len(inputs)] (or, with a.mode == "graph", the forward captured once
    and replayed), added into acc, and torch.cuda.synchronize(); a.warmup untimed iterations,
    a.iters timed ones. Prints the result lines; returns the exit status."""
    graph = None
    with torch.no_grad():
        if a.mode == "graph":
            static_in = torch.zeros_like(inputs[0])
            graph, static_out = torch_capture(torch, model, static_in)

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

        wall, gpu_us = torch_timed(torch, step, a.warmup, a.iters)
        ok = bool(torch.isfinite(acc).all())
        digest = floats_digest([], torch_bytes(torch, acc))
        counted = None
        if getattr(a, "count_launches", False) and graph is None:
            counted = torch_count_launches(torch, step, 0, 10)
    return report(digest, wall, a.iters, gpu_us, ok, counted)


def torch_train_bench(torch, a, step, losses, params):
    """The training loop of the framework rows: step(i) is one training step that appends its
    loss (read back with .item(), a sync) to losses; a.warmup untimed steps, a.iters timed
    ones. The checksum covers the losses and the parameters' bytes. Prints the result lines;
    returns the exit status."""
    wall, gpu_us = torch_timed(torch, step, a.warmup, a.iters)
    ok = all(math.isfinite(v) for v in losses)
    digest = floats_digest(losses, torch_bytes(torch, *params))
    counted = torch_count_launches(torch, step, 0, 10) if a.count_launches else None
    return report(digest, wall, a.iters, gpu_us, ok, counted)


def generate_report(torch, a, generated, wall_s, gpu_us, step):
    """The result lines of the Hugging Face generate() rows (F4, F15): `generated` holds each
    call's new token ids (a.new_tokens of them), the checksum is theirs; with
    a.count_launches, launches per token over two more calls of step. Returns the exit
    status."""
    ok = all(g.numel() == a.new_tokens for g in generated)
    digest = floats_digest([], torch_bytes(torch, *generated))
    counted = torch_count_launches(torch, step, 0, 2) if a.count_launches else None
    print("us per generated token: %.3f" % (wall_s * 1e6 / (a.iters * a.new_tokens)))
    if counted is not None:
        print("launches per generated token: %.1f" % (counted[0] / a.new_tokens))
    return report(digest, wall_s, a.iters, gpu_us, ok, counted)


def torch_count_launches(torch, step, first, n):
    """GPU kernels and copies/memsets per iteration over n more iterations, by torch.profiler
    (CUPTI); call it only after the checksum is taken, since the iterations change state."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for i in range(first, first + n):
            step(i)
        torch.cuda.synchronize()
    kernels = copies = 0
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            if e.name.startswith(("Memcpy", "Memset")):
                copies += 1
            else:
                kernels += 1
    return kernels / n, copies / n


def host_calib_us(rounds=7, n=20000):
    """The host's speed as this process sees it: the least time, in us, of a fixed pure-Python
    loop (no CUDA, no framework). On the GPU machine a whole process runs at one of two speeds
    (F6 eager 714-773 or 1171-1305 us a forward; `torch.empty` 2.2-2.9 or 4.0-4.7 us), whatever
    the variant: bench/ab.py pairs this with the row's time, to tell the process's speed from
    the library's effect."""
    best = None
    for _ in range(rounds):
        t0 = time.perf_counter()
        d = {}
        for i in range(n):
            d[i & 255] = [i, i]
        t = time.perf_counter() - t0
        best = t if best is None or t < best else best
    return best * 1e6


def report(digest, wall_s, iters, gpu_us=None, ok=True, counted=None):
    """Prints the result lines; returns the exit status. counted: (kernels, copies) per
    iteration, or None."""
    print("launches: unknown")
    print("host_calib_us: %.1f" % host_calib_us())
    if counted is not None:
        print("launches per iteration: %.1f kernels, %.1f copies/memsets" % counted)
    print("checksum: %s" % digest)
    print("time_us_per_iter: %.3f" % (wall_s * 1e6 / iters))
    if gpu_us is not None:
        print("gpu us per iteration: %.3f" % (gpu_us / iters))
    print("result: %s" % ("OK" if ok else "MISMATCH"), flush=True)
    return 0 if ok else 1
