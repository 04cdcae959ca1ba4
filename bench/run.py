#!/usr/bin/env python3
"""libautograph benchmarks: each workload three ways, interleaved, in one run.

  eager      the program as it is (no preload)
  autograph  the same program with LD_PRELOAD=libautograph.so (default settings)
  graph      the program's hand-written CUDA graph of the same loop (--mode=graph, no preload)

Runs are interleaved (eager, autograph, graph, then the order rotates) so drift hits all three
alike; the table shows medians over the repetitions and the ratios eager/autograph (speed-up)
and graph/autograph (1.00 = as fast as the hand-written graph), and the geometric mean of the
per-repetition ratio eager/autograph with its 95% confidence interval. The P4, C and G2 rows (where
the question is "within 2% of eager?") run --p4-factor times as many repetitions. A mode whose
checksum differs from eager's fails the whole run loudly; a hand-written graph mode that the
driver refuses (the app prints "graph: unsupported (...)" and exits 0) shows n/a. Results also
go to OUT/results.json and OUT/results.csv.

Usage: bench/run.py [--reps N] [--p4-factor K] [--only P1,S1] [--out DIR] [--quick] [--cpus 2-5]
                    [--dry-run]
"""
import argparse
import csv
import json
import math
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def workloads(build, quick):
    k = os.path.join(build, "kernels")
    it = 300 if quick else 1000
    W = []
    for n in (8, 64, 256):
        W.append(("P1", "tiny N=%d, sync every iteration" % n,
                  [k + "/tiny", "--n=%d" % n, "--iters=%d" % it, "--warmup=50"], True))
    W.append(("P2", "tiny N=64, scalar + ping-pong pointers change every iteration",
              [k + "/tiny", "--n=64", "--vary=1", "--iters=%d" % it, "--warmup=50"], True))
    W.append(("P3", "tiny N=64, sync every 100 iterations",
              [k + "/tiny", "--n=64", "--sync-every=100", "--iters=%d" % (it * 2), "--warmup=200"], True))
    W.append(("P4a", "compute-bound: 4 kernels of >= 200 us",
              [k + "/heavy", "--iters=%d" % (60 if quick else 200), "--warmup=20"], True))
    W.append(("P4b", "tiny N=16 with 20 us of host work between launches",
              [k + "/tiny", "--n=16", "--host-us=20", "--iters=%d" % (100 if quick else 400),
               "--warmup=50"], False))
    # irregular: the short run is all learning (a stream's first windows always learn); the
    # long one is what a long-running irregular program sees once learning rests
    W.append(("P4c", "irregular, never-repeating launch stream, ~9000 launches",
              [k + "/irregular", "--iters=%d" % it, "--warmup=50"], False))
    W.append(("P4c", "irregular, never-repeating launch stream, ~85000 launches",
              [k + "/irregular", "--iters=%d" % (it * 10), "--warmup=50"], False))
    for size in (64, 128, 256, 512):
        W.append(("P5", "cuBLAS sgemm %d^3 + a small kernel, sync every iteration" % size,
                  [k + "/cublas_loop", "--size=%d" % size, "--iters=%d" % (it // 2), "--warmup=50"], True))
    # issue 12: a GPU-bound async library loop timed by its own events, and one-off timings
    W.append(("G1", "async cuBLAS: 30 sgemm 640x480x320 between events, no sync; GPU time from the app's events",
              [k + "/cublas_async", "--iters=%d" % (60 if quick else 200), "--warmup=20"], True))
    W.append(("G2", "cuBLAS timed once: 1 warm-up sgemm, then 30 sgemm 640x320x480 on the NULL stream between events, once per process",
              [k + "/cublas_once"], True))
    W.append(("C1", "first kernel launch of the process + sync (driver API), timed by the program",
              [k + "/first_launch"], False))
    W.append(("C2", "50 distinct kernels run once (radix sort), timed by the program around launches + sync",
              [k + "/pipeline50"], False))
    # issue 13: memset/copy nodes, programmatic dependent launch, changing grids
    for wid, pinned, what in (("S1", 0, "pageable"), ("S2", 1, "pinned")):
        W.append((wid, "solver: memset + kernel + 8-byte read-back to %s host memory + sync per iteration" % what,
                  [k + "/solver", "--pinned=%d" % pinned, "--iters=%d" % (1000 if quick else 3000),
                   "--warmup=10"], True))
    for wid, pdl in (("D1", 1), ("D2", 0)):
        W.append((wid, "decode step: HtoD token, ~290 kernels (cudaLaunchKernelEx, PDL %s), read-back + sync" %
                  ("on" if pdl else "off"),
                  [k + "/pdl_decode", "--pdl=%d" % pdl, "--iters=%d" % (50 if quick else 200), "--warmup=10"],
                  True))
    W.append(("D3", "decode-like loop: attention grid grows by one block per iteration + 6 fixed kernels, sync",
              [k + "/grow_grid", "--iters=%d" % (300 if quick else 1000), "--warmup=10"], True))
    W.append(("P6", "PyTorch batch-1 MLP forward (8 x Linear 512 + GELU), sync every iteration",
              [sys.executable, os.path.join(ROOT, "bench", "torch_mlp.py"),
               "--iters=%d" % (it // 4), "--warmup=50"], True))
    W.extend(framework_workloads(build, quick))
    return W


def launches_per_iter(stderr, cmd):
    """Kernel launches per iteration of a run, from libautograph's statistics (AUTOGRAPH_STATS=1)
    and the --iters/--warmup of its command line; None when unknown."""
    n = 0
    for line in stderr.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0].startswith("autograph") and f[1].startswith("launches.cuLaunch"):
            n += int(f[2])
    args = dict(x[2:].split("=", 1) for x in cmd if x.startswith("--") and "=" in x)
    iters = int(args.get("iters", 0)) + int(args.get("warmup", 0))
    return n / iters if n and iters else None


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frameworks import ceiling, workloads as framework_workloads  # noqa: E402


def parse(out):
    r = {}
    for line in out.splitlines():
        if ":" in line and not line.startswith("autograph"):
            key, _, val = line.partition(":")
            r[key.strip()] = val.strip()
    return r


def cpu_set(spec):
    """'4-7' or '2,3' or '0-1,6' -> a set of CPU numbers."""
    out = set()
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def unsupported(r):
    """The app's own graph mode was refused by the driver (it says so and exits 0)."""
    return r.get("graph", "").startswith("unsupported")


def run(cmd, env_extra, preload, lib, cpus=None):
    """One run of a sample app: its time per iteration, checksum and stderr; exits on failure.
    (None, None, stderr) when the app's graph mode printed "graph: unsupported (...)".
    Without the caller's LD_PRELOAD and AUTOGRAPH_* settings; pinned to `cpus` if given."""
    r, err = run_lines(cmd, env_extra, preload, lib, cpus)
    if r is None:
        return None, None, err
    return float(r["time_us_per_iter"]), r.get("checksum"), err


def spawn(cmd, env_extra, preload, lib, cpus=None, timeout=600):
    """One run of cmd, its output captured: without the caller's LD_PRELOAD and AUTOGRAPH_*
    settings, with env_extra, the library preloaded if asked, pinned to `cpus` if given."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    for k in list(env):
        if k.startswith("AUTOGRAPH_"):
            del env[k]
    env.update(env_extra)
    if preload:
        env["LD_PRELOAD"] = lib
    pre = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout,
                          preexec_fn=pre)


def run_lines(cmd, env_extra, preload, lib, cpus=None):
    """run's, but every "key: value" line the app printed (parse), and stderr; (None, stderr)
    when its graph mode is unsupported."""
    p = spawn(cmd, env_extra, preload, lib, cpus)
    r = parse(p.stdout)
    if p.returncode == 0 and unsupported(r):
        return None, p.stderr
    if p.returncode != 0 or r.get("result") != "OK":
        sys.exit("FAILED: %s (exit %d)\n%s\n%s" % (" ".join(cmd), p.returncode, p.stdout, p.stderr))
    return r, p.stderr


def paired_ratio(eager, other):
    """Geometric mean of eager/other over the repetitions, with a 95% confidence interval (the
    runs of one repetition are adjacent in time)."""
    return gmean_ci([e / o for e, o in zip(eager, other)])


def gmean_ci(ratios):
    """Geometric mean of some ratios with a 95% confidence interval (normal approximation over
    their logs; none for one)."""
    logs = [math.log(x) for x in ratios]
    m = statistics.mean(logs)
    se = statistics.stdev(logs) / math.sqrt(len(logs)) if len(logs) > 1 else 0.0
    return math.exp(m), math.exp(m - 1.96 * se), math.exp(m + 1.96 * se)


def device_info():
    def sh(c):
        try:
            return subprocess.run(c, shell=True, capture_output=True, text=True).stdout.strip()
        except OSError:
            return "?"
    return {
        "gpu": sh("nvidia-smi --query-gpu=name --format=csv,noheader | head -1"),
        "driver": sh("nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1"),
        "cuda": sh("nvcc --version | sed -n 's/.*release \\([0-9.]*\\).*/\\1/p'"),
        "commit": os.environ.get("AG_COMMIT") or sh("git -C %s rev-parse --short HEAD 2>/dev/null" % ROOT),
        "date": time.strftime("%Y-%m-%d"),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--only", default="")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--p4-factor", type=int, default=4,
                    help="repetitions of the P4, C and G2 rows, as a multiple of --reps")
    ap.add_argument("--cpus", default=None, help="pin every run to these CPUs, e.g. 4-7 or 2,3")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the selected rows' command lines (eager, autograph, graph) and exit")
    a = ap.parse_args()
    cpus = cpu_set(a.cpus) if a.cpus else None
    lib = os.path.join(a.build, "libautograph.so")
    only = set(x for x in a.only.split(",") if x)
    if a.dry_run:
        for wid, desc, cmd, has_graph in workloads(a.build, a.quick):
            if only and wid not in only:
                continue
            built = os.path.exists(cmd[0]) or cmd[0] == sys.executable
            print("%-4s %s%s" % (wid, desc, "" if built else "  [not built: %s]" % cmd[0]))
            print("     eager:     %s" % " ".join(cmd))
            print("     autograph: LD_PRELOAD=%s %s" % (lib, " ".join(cmd)))
            print("     graph:     %s" % (" ".join(cmd + ["--mode=graph"]) if has_graph else "n/a"))
        return
    out = a.out or os.path.join(a.build, "bench")
    os.makedirs(out, exist_ok=True)
    info = device_info()
    print("# %s, driver %s, CUDA %s, commit %s, %s" % (info["gpu"], info["driver"], info["cuda"],
                                                      info["commit"], info["date"]))
    rows, raw = [], []
    t_start = time.time()
    for wid, desc, cmd, has_graph in workloads(a.build, a.quick):
        if only and wid not in only:
            continue
        if not os.path.exists(cmd[0]) and not cmd[0].endswith("python3"):
            print("skip %s: %s not built" % (wid, cmd[0]))
            continue
        if wid == "P6":
            try:
                import torch  # noqa: F401
            except ImportError:
                print("skip P6: no PyTorch")
                continue
        fw = wid.startswith("F")
        modes = [("eager", [], {}, False), ("autograph", [], {"AUTOGRAPH_STATS": "1"} if fw else {}, True)]
        if has_graph:
            modes.append(("graph", ["--mode=graph"], {}, False))
        times = {m[0]: [] for m in modes}
        sums = {}
        # the P4 rows ask "within 2% of eager?": the run-to-run spread between processes on
        # the GPU host is several percent, so they get more repetitions; the order of the
        # modes rotates from one repetition to the next
        reps = a.reps * a.p4_factor if wid.startswith(("P4", "C", "G2")) else a.reps
        lpi = None
        refused = None
        for rep in range(reps):
            for name, extra, env, pre in modes[rep % len(modes):] + modes[:rep % len(modes)]:
                if name == "graph" and refused:
                    continue
                t, ck, err = run(cmd + extra, env, pre, lib, cpus)
                if fw and name == "autograph":
                    lpi = launches_per_iter(err, cmd)
                if t is None:
                    if name != "graph":
                        sys.exit("FAILED: %s: 'graph: unsupported' without --mode=graph" % wid)
                    refused = True
                    del times["graph"]
                    continue
                times[name].append(t)
                sums.setdefault(name, ck)
                if ck != sums["eager"] and "eager" in sums:
                    sys.exit("CHECKSUM MISMATCH in %s: %s gave %s, eager %s" % (wid, name, ck, sums["eager"]))
        med = {k: statistics.median(v) for k, v in times.items()}
        geo, lo, hi = paired_ratio(times["eager"], times["autograph"])
        row = {"id": wid, "workload": desc, "reps": reps, "eager_us": med["eager"],
               "autograph_us": med["autograph"], "graph_us": med.get("graph"),
               "speedup": med["eager"] / med["autograph"],
               "speedup_paired_geomean": geo, "speedup_ci95": [lo, hi],
               "of_hand_graph": (med["graph"] / med["autograph"]) if "graph" in med else None,
               "spread_autograph": (max(times["autograph"]) - min(times["autograph"])) / med["autograph"],
               "graph_unsupported": bool(refused),
               "launches_per_iter": lpi,
               "ceiling": ceiling(lpi, med["eager"]) if lpi else None}
        rows.append(row)
        raw.append({"id": wid, "workload": desc, "times_us": times, "checksum": sums.get("eager")})
        print("%-4s %-62s eager %9.1f  autograph %9.1f  graph %9s  speed-up %5.2fx "
              "(paired %.3fx, 95%% CI %.3f-%.3f, %d reps)  vs graph %5s" % (
                  wid, desc[:62], med["eager"], med["autograph"],
                  "%.1f" % med["graph"] if "graph" in med else ("refused" if refused else "n/a"),
                  row["speedup"], geo, lo, hi,
                  reps, "%.2f" % row["of_hand_graph"] if row["of_hand_graph"] else "n/a"),
              flush=True)
        if row["ceiling"]:
            print("     %.0f launches per iteration; the interposer's ceiling here: %.2fx" % (
                lpi, row["ceiling"]), flush=True)

    # P7: the cost of one launch call as the application sees it, measured at the driver API
    # (tests/progs/probe loop: 63 launches timed alone, then the 64th and a sync; medians):
    # no preload, preloaded with AUTOGRAPH_DISABLE=1 (interception only), and preloaded with
    # graphing (launches held)
    probe = os.path.join(a.build, "tests", "probe")
    if (not only or "P7" in only) and os.path.exists(probe):
        res = {"plain": [], "disabled": [], "held": []}
        for rep in range(a.reps):
            for name, env, pre in (("plain", {}, False), ("disabled", {"AUTOGRAPH_DISABLE": "1"}, True),
                                   ("held", {"AUTOGRAPH_BENEFIT": "always"}, True)):
                e = dict(os.environ)
                e.pop("LD_PRELOAD", None)
                e.update(env)
                if pre:
                    e["LD_PRELOAD"] = lib
                o = subprocess.run([probe, "loop"], env=e, capture_output=True, text=True, timeout=120).stdout
                for line in o.splitlines():
                    if line.startswith("loop:"):
                        res[name].append(float(line.split("launches 1-63:")[1].split("ns")[0]))
        if all(res.values()):
            m = {k: statistics.median(v) for k, v in res.items()}
            rows.append({"id": "P7", "workload": "one launch call (driver API, ns): interception only; held",
                         "eager_us": m["plain"] / 1e3, "autograph_us": m["disabled"] / 1e3, "graph_us": None,
                         "speedup": m["plain"] / m["disabled"], "of_hand_graph": None,
                         "per_launch_ns": m["disabled"] - m["plain"], "held_ns": m["held"]})
            raw.append({"id": "P7", "ns_per_launch": res})
            print("P7   launch call: %.1f ns plain, %.1f ns intercepted (%+.1f ns), %.1f ns when held" %
                  (m["plain"], m["disabled"], m["disabled"] - m["plain"], m["held"]))

    tiny = os.path.join(a.build, "kernels", "tiny")
    # P8: profile warm start -- the first 20 iterations of a fresh run, eager, libautograph
    # learning from nothing (cold), and libautograph starting from a profile saved by an
    # earlier run (warm)
    if (not only or "P8" in only) and os.path.exists(tiny):
        prof = os.path.join(out, "tiny.agp")
        if os.path.exists(prof):
            os.unlink(prof)
        run([tiny, "--n=64", "--iters=300"], {"AUTOGRAPH_PROFILE": prof}, True, lib)
        cmd = [tiny, "--n=64", "--iters=20", "--warmup=0"]
        res = {"eager": [], "cold": [], "warm": []}
        for rep in range(a.reps * 2):
            res["eager"].append(run(cmd, {}, False, lib)[0])
            res["cold"].append(run(cmd, {}, True, lib)[0])
            res["warm"].append(run(cmd, {"AUTOGRAPH_PROFILE": prof}, True, lib)[0])
        m = {k: statistics.median(v) for k, v in res.items()}
        rows.append({"id": "P8", "workload": "first 20 iterations of tiny N=64: cold vs warm (AUTOGRAPH_PROFILE)",
                     "eager_us": m["eager"], "autograph_us": m["warm"], "graph_us": None,
                     "speedup": m["eager"] / m["warm"], "of_hand_graph": None, "cold_us": m["cold"]})
        raw.append({"id": "P8", "times_us": res})
        print("P8   first 20 iterations: eager %.1f us/iter, cold %.1f, warm (profile) %.1f" %
              (m["eager"], m["cold"], m["warm"]))

    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"device": info, "reps": a.reps, "rows": rows, "raw": raw}, f, indent=1)
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["id", "workload", "reps", "eager_us", "autograph_us", "graph_us",
                                          "speedup", "speedup_paired_geomean", "of_hand_graph",
                                          "per_launch_ns", "spread_autograph"],
                           extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    print()
    print("| id | workload | eager µs/iter | libautograph µs/iter | hand graph µs/iter | eager / libautograph | paired, 95% CI | hand graph / libautograph |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        g = "%.1f" % r["graph_us"] if r.get("graph_us") else (
            "n/a (driver refused the graph)" if r.get("graph_unsupported") else "n/a")
        h = "%.2f" % r["of_hand_graph"] if r.get("of_hand_graph") else "n/a"
        extra = " (%+.1f ns/launch; held %.0f ns)" % (r["per_launch_ns"], r["held_ns"]) if "per_launch_ns" in r else ""
        if "cold_us" in r:
            extra = " warm (cold: %.1f)" % r["cold_us"]
        ci = ("%.3fx (%.3f-%.3f, %d reps)" % (r["speedup_paired_geomean"], r["speedup_ci95"][0],
                                              r["speedup_ci95"][1], r["reps"])
              if "speedup_ci95" in r else "")
        print("| %s | %s | %.1f | %.1f%s | %s | %.2fx | %s | %s |" % (
            r["id"], r["workload"], r["eager_us"], r["autograph_us"], extra, g, r["speedup"], ci, h))
    print("\n(%d repetitions each, %d for P4, C and G2; medians; %.0f s in all; raw samples in %s/results.json)" %
          (a.reps, a.reps * a.p4_factor, time.time() - t_start, out))


if __name__ == "__main__":
    main()
