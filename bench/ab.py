#!/usr/bin/env python3
"""Side-by-side runs of one sample app under several settings, for differences too small for
the main benchmark (a few percent): many interleaved repetitions, medians, and the geometric
mean of the per-repetition ratios with its 95% confidence interval (each repetition runs every
variant once, back to back, so slow drift of the host hits all of them alike; the order
rotates from one repetition to the next, so no variant always runs first or last). Runs and
ratios are bench/run.py's.

A variant is NAME=ITEMS, ITEMS a comma-separated list of `preload` (LD_PRELOAD the library),
`preload=PATH` (LD_PRELOAD that build of it: compare two builds), `arg=FLAG` (one more argument
for the app, such as `arg=--mode=graph`: the program's own graph, paired like the rest) and
ENV=VALUE settings; the first variant is the reference of the ratios.

  bench/ab.py --reps 15 eager= ag=preload ag-disabled=preload,AUTOGRAPH_DISABLE=1 \\
      -- build/kernels/irregular --iters=5000 --warmup=50
  bench/ab.py --reps 10 eager= ag=preload hand=arg=--mode=graph -- build/kernels/tiny --n=64

The app must print `time_us_per_iter:` and `result: OK` (the sample apps do); checksums must
agree across variants. --out FILE writes every sample as JSON.

Where every run also printed `host_calib_us:` (the framework rows: bench/fw_common.py, a fixed
pure-Python loop timed in the same process), a second table pairs the variants' calibrations
(a variant that slows the process's own host shows there) and the times over them: the paired
ratio with each process's own host speed taken out (the GPU machine's processes run at one of
two speeds, whatever the variant).
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import ROOT, cpu_set, paired_ratio, run_lines  # noqa: E402


def parse_variant(spec):
    name, _, items = spec.partition("=")
    env, preload, args = {}, False, []
    for it in filter(None, items.split(",")):
        if it.startswith("arg="):
            args.append(it[4:])
        elif it == "preload":
            preload = True
        elif it.startswith("preload="):
            preload = it.partition("=")[2]
        elif "=" in it:
            k, _, v = it.partition("=")
            env[k] = v
        else:
            sys.exit("ab.py: bad variant item %r in %r" % (it, spec))
    return name, env, preload, args


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--lib", default=os.path.join(ROOT, "build", "libautograph.so"))
    ap.add_argument("--cpus", default=None, help="pin every run to these CPUs, e.g. 4-7 or 2,3")
    ap.add_argument("--out", default=None)
    ap.add_argument("--deadline", type=float, default=None,
                    help="seconds: start no repetition that would end after this (the slowest "
                         "one so far taken as its length), and report what is done, so that a "
                         "caller's timeout does not lose every sample")
    ap.add_argument("variants", nargs="+")
    if "--" not in sys.argv:
        sys.exit("ab.py: the command goes after --")
    cut = sys.argv.index("--")
    a = ap.parse_args(sys.argv[1:cut])
    cmd = sys.argv[cut + 1:]
    V = [parse_variant(v) for v in a.variants]
    times = {n: [] for n, _, _, _ in V}
    calib = {n: [] for n, _, _, _ in V}
    sums = {}
    cpus = cpu_set(a.cpus) if a.cpus else None
    start, longest, done = time.monotonic(), 0.0, 0
    for rep in range(a.reps):
        t0 = time.monotonic()
        if a.deadline and done >= 1 and t0 - start + longest > a.deadline:
            print("# deadline: %d of %d repetitions" % (done, a.reps), file=sys.stderr)
            break
        for name, env, pre, args in V[rep % len(V):] + V[:rep % len(V)]:
            lib = pre if isinstance(pre, str) else a.lib
            r, _ = run_lines(cmd + args, env, bool(pre), lib, cpus)
            if r is None:
                sys.exit("ab.py: %s: the app's graph mode is unsupported here" % name)
            t, ck = float(r["time_us_per_iter"]), r.get("checksum")
            times[name].append(t)
            if "host_calib_us" in r:
                calib[name].append(float(r["host_calib_us"]))
            sums.setdefault("first", ck)
            if ck != sums["first"]:
                sys.exit("ab.py: checksum of %s differs: %s vs %s" % (name, ck, sums["first"]))
        longest = max(longest, time.monotonic() - t0)
        done += 1
        print("# repetition %d: %s" % (done, ", ".join(
            "%s %.2f" % (n, times[n][-1]) for n, _, _, _ in V)), file=sys.stderr, flush=True)
    ref = V[0][0]
    print("# %s, %d repetitions%s" % (" ".join(cmd), done,
                                      ", pinned to CPUs %s" % a.cpus if a.cpus else ""))
    print("%-16s %10s %10s %10s %12s  %s" % ("variant", "median_us", "min_us", "max_us",
                                             "ref/variant", "paired ref/variant, 95% CI"))
    rows = []
    for name, _, _, _ in V:
        t = times[name]
        geo, lo, hi = paired_ratio(times[ref], t)
        row = {"variant": name, "median_us": statistics.median(t), "min_us": min(t),
               "max_us": max(t), "speedup": statistics.median(times[ref]) / statistics.median(t),
               "paired_geomean": geo, "paired_ci95": [lo, hi]}
        rows.append(row)
        print("%-16s %10.2f %10.2f %10.2f %11.3fx  %.3fx (%.3f-%.3f)" % (
            name, row["median_us"], row["min_us"], row["max_us"], row["speedup"], geo, lo, hi))
    calibrated = all(len(calib[n]) == len(times[n]) > 0 for n in times)
    if calibrated:
        print("# each process's host speed (host_calib_us) paired, and the times over it")
        print("%-16s %10s  %-28s  %s" % ("variant", "calib_us", "calib ref/variant, 95% CI",
                                          "calibrated ref/variant, 95% CI"))
        per = {n: [t / c for t, c in zip(times[n], calib[n])] for n in times}
        for row in rows:
            name = row["variant"]
            cg, clo, chi = paired_ratio(calib[ref], calib[name])
            g, lo, hi = paired_ratio(per[ref], per[name])
            row.update({"calib_median_us": statistics.median(calib[name]), "calib_paired": cg,
                        "calib_ci95": [clo, chi], "calibrated_geomean": g,
                        "calibrated_ci95": [lo, hi]})
            print("%-16s %10.1f  %.3fx (%.3f-%.3f)%9s  %.3fx (%.3f-%.3f)" % (
                name, row["calib_median_us"], cg, clo, chi, "", g, lo, hi))
    if a.out:
        out = {"cmd": cmd, "reps": done, "cpus": a.cpus, "rows": rows, "times_us": times}
        if calibrated:
            out["calib_us"] = calib
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
