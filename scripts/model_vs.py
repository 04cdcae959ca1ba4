#!/usr/bin/env python3
"""The replay model against a row measured on another host: the trace is replayed on a host
scaled to the measured eager time (`autograph simulate --host-scale`), and the predicted ratio
eager/autograph is set beside the measured one and its 95% CI.

A trace is recorded on one host; a paired row is measured on whichever host the device run got,
and on the GPU machine a process's host speed varies by up to 2x. The ratio of a host-bound
program moves with the host's speed, so the model and a measurement agree only for the same
host speed: this fits the scale F so that the predicted eager time per iteration equals the
measured one (the GPU's share does not scale, so F is found by a few fixed-point steps), then
reads the predicted ratio at F.

    scripts/model_vs.py [--autograph PATH] [--costs FILE] TRACE PER_ITER EAGER_US RATIO LO HI [TRACE ...]

PER_ITER: launches per iteration in the trace's region (it prints kernel launches in the region;
iterations = those / PER_ITER); EAGER_US: the measured eager time per iteration; RATIO LO HI:
the measured ratio eager/ours and its 95% CI. Prints one line per row: the fitted F, predicted
eager and ours per iteration, the predicted ratio and whether it lies inside the CI. Exits 1
when a trace cannot be simulated.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_json(autograph, traces, costs=None, args=(), echo=False):
    """`autograph simulate --json` of traces (with the cost table and the extra args given):
    (its exit status, the JSON document or None). echo: its output goes on to ours (the gate
    shows each trace's line); else it is kept back."""
    with tempfile.NamedTemporaryFile(suffix=".json") as tmp:
        cmd = [autograph, "simulate", "--json", tmp.name] + list(args)
        r = subprocess.run(cmd + (["--costs", costs] if costs else []) + list(traces),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if echo:
            sys.stdout.write(r.stdout)
            sys.stderr.write(r.stderr)
        if r.returncode:
            return r.returncode, r.stderr
        with open(tmp.name) as f:
            return 0, json.load(f)


def simulate(autograph, costs, trace, scale):
    """(eager region us, autograph region us, kernel launches in the region) at host scale."""
    rc, doc = run_json(autograph, [trace], costs, ["--host-scale", "%.6f" % scale])
    if rc:
        sys.exit("model_vs.py: %s: %s" % (trace, doc.strip()))
    t = doc["traces"][0]
    return t["eager"]["time_us"], t["autograph"]["time_us"], t["ceiling_launches"]


def fit(autograph, costs, trace, per_iter, eager_us, steps=6):
    """(F, eager us/iter, ours us/iter) with the predicted eager time at F ~ eager_us."""
    f = 1.0
    for _ in range(steps):
        e, a, n = simulate(autograph, costs, trace, f)
        nf = f * eager_us / (e / (n / per_iter))
        if abs(nf - f) < 1e-3 * f or not 0.05 <= nf <= 20:
            break
        f = nf
    else:  # (the last step moved F: its prediction is not simulated yet)
        e, a, n = simulate(autograph, costs, trace, f)
    iters = n / per_iter
    return f, e / iters, a / iters


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--autograph", default=os.path.join(ROOT, "build", "autograph"))
    ap.add_argument("--costs", default=None, help="the cost table (default: the simulator's)")
    ap.add_argument("rows", nargs="+", help="TRACE PER_ITER EAGER_US RATIO LO HI, repeated")
    a = ap.parse_args()
    if len(a.rows) % 6:
        ap.error("each row is six values: TRACE PER_ITER EAGER_US RATIO LO HI")
    for k in range(0, len(a.rows), 6):
        trace, per_iter, eager, ratio, lo, hi = a.rows[k:k + 6]
        per_iter, eager, ratio, lo, hi = map(float, (per_iter, eager, ratio, lo, hi))
        f, pe, pa = fit(a.autograph, a.costs, trace, per_iter, eager)
        pr = pe / pa
        where = "inside" if lo <= pr <= hi else "over" if pr > hi else "under"
        print("%s: host x%.3f, eager %.2f us/iter (measured %.2f), ours %.2f us/iter; "
              "predicted %.3fx, measured %.3fx (%.3f-%.3f): %s (%+.1f%%)"
              % (os.path.basename(trace), f, pe, eager, pa, pr, ratio, lo, hi, where,
                 100 * (pr / ratio - 1)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
