#!/usr/bin/env python3
"""Paired ratios pooled over several bench/ab.py runs of one row (their --out JSON files): for
two variants of them, REF and VARIANT, the geometric mean of REF's time over VARIANT's in each
repetition (the speed-up of VARIANT over REF, as ab.py prints against its first variant), with
its 95% CI, per file and over all of them. Comparing two builds run beside eager (new against
base) is what it is for: the sixteenth session pooled P4c's 20 and 40 pairs so.

  bench/pool.py --ref base --variant new run6/ab_P4c.json run8/ab_P4c.json

--calibrated pools each run's time over its process's host speed (ab.py's calib_us, printed by
the framework rows): the files must all have it.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import paired_ratio  # noqa: E402


def pairs(path, ref, variant, calibrated=False):
    """The (ref, variant) times of each repetition in one ab.py JSON file; calibrated: each
    over its process's host speed (calib_us)."""
    with open(path) as f:
        d = json.load(f)
    t = d["times_us"]
    for v in (ref, variant):
        if v not in t:
            sys.exit("pool.py: %s has no variant %r (it has %s)" % (path, v, ", ".join(t)))
    if calibrated:
        c = d.get("calib_us")
        if not c:
            sys.exit("pool.py: %s has no calib_us (an app that prints no host_calib_us)" % path)
        t = {v: [x / y for x, y in zip(t[v], c[v])] for v in (ref, variant)}
    return list(zip(t[ref], t[variant]))


def line(name, ps):
    r, lo, hi = paired_ratio([a for a, _ in ps], [b for _, b in ps])
    return "%-40s %5d  %.3fx (%.3f-%.3f)" % (name, len(ps), r, lo, hi)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ref", required=True)
    ap.add_argument("--variant", required=True)
    ap.add_argument("--calibrated", action="store_true",
                    help="times over each process's host speed (ab.py's calib_us)")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    print("%-40s %5s  %s/%s%s, 95%% CI" % ("file", "pairs", a.ref, a.variant,
                                          ", calibrated" if a.calibrated else ""))
    every = []
    for path in a.files:
        ps = pairs(path, a.ref, a.variant, a.calibrated)
        every += ps
        print(line(os.path.basename(os.path.dirname(path)) + "/" + os.path.basename(path), ps))
    if len(a.files) > 1:
        print(line("pooled", every))


if __name__ == "__main__":
    main()
