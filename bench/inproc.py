#!/usr/bin/env python3
"""The library on against paused inside each process (INPROC_ROUNDS, bench/fw_common.py): a
framework row's speed-up free of the host speed that differs from process to process (on the
GPU machine a whole process runs at one of two speeds, whatever the variant, so a pair of
processes compares hosts as much as libraries).

  bench/inproc.py [--procs N] [--rounds B] [--cpus 4-7] [--lib PATH] [--env KEY=VALUE]...
                  [--deadline S] [--out F.json] -- CMD...

Runs CMD once without the library (the checksum reference: with INPROC_ROUNDS too, so that it runs
the same iterations), then N processes with the library preloaded and INPROC_ROUNDS=B. A process's
round pairs its two blocks of iterations, one with the library on and one paused
(autograph_pause: launches pass straight through, graphs and what was learned are kept):
paused / on is that round's speed-up. Prints each process's geometric mean over its rounds,
then two pooled figures with a 95% CI: over every round of every process, and over the
processes' means (the cautious one: a process's rounds share its host speed and its state).

What "paused" is not: a process without the library. It still pays the interception (the
launch path's first checks; `make bench-hotpath`, row off) and keeps the library's threads; the
pairs of processes (bench/ab.py, eager against off) measure that part.

--deadline S: start no further process once the slowest so far would end more than S seconds
after the start (the reference included); the figures are then over the processes done, and
the output says how many were left out. A caller's time-out would otherwise cut the row
before its pooled lines.

--env sets a variable in the processes with the library only (AUTOGRAPH_WORKER=0, say: what
their threads do to the rounds).

Exits 1 when a process fails, prints no rounds, or gives another checksum than the reference."""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import ROOT, cpu_set, gmean_ci, parse as parse_fields, spawn  # noqa: E402


def parse(out):
    """(rounds, checksum, result) of one process's stdout: rounds maps a round number to
    {"on": us, "off": us}."""
    rounds = {}
    for line in out.splitlines():
        key, _, val = line.partition(":")
        if key == "inproc_block":
            r, arm, us = val.split()
            rounds.setdefault(int(r), {})[arm] = float(us)
    fields = parse_fields(out)
    return rounds, fields.get("checksum"), fields.get("result")


def round_ratios(rounds):
    """paused / on of every complete round, in round order."""
    return [rounds[r]["off"] / rounds[r]["on"] for r in sorted(rounds)
            if rounds[r].get("on", 0) > 0 and rounds[r].get("off", 0) > 0]


def run_one(cmd, env_extra, lib, cpus):
    p = spawn(cmd, env_extra, bool(lib), lib, cpus, timeout=1800)
    if p.returncode != 0:
        sys.exit("inproc.py: %s exited %d\n%s\n%s" % (" ".join(cmd), p.returncode, p.stdout[-2000:],
                                                      p.stderr[-2000:]))
    return parse(p.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--procs", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--cpus", default=None, help="pin every process to these CPUs (e.g. 4-7)")
    ap.add_argument("--lib", default=os.path.join(ROOT, "build", "libautograph.so"))
    ap.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                    help="a variable for the processes with the library (repeatable)")
    ap.add_argument("--out", default=None, help="the rounds of every process, as JSON")
    ap.add_argument("--deadline", type=float, default=None, metavar="S",
                    help="no further process once the next would end past S seconds")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd:
        ap.error("no command")
    cpus = cpu_set(a.cpus) if a.cpus else None
    env = {"INPROC_ROUNDS": str(a.rounds)}
    lib_env = dict(env)
    for kv in a.env:
        k, eq, v = kv.partition("=")
        if not k or not eq:
            ap.error("--env %r: not KEY=VALUE" % kv)
        lib_env[k] = v
    t0 = time.monotonic()
    ref_rounds, ref_sum, ref_result = run_one(cmd, env, None, cpus)
    slowest = time.monotonic() - t0
    print("# %s, INPROC_ROUNDS=%d, %d processes%s%s" % (" ".join(cmd), a.rounds, a.procs,
                                                    ", pinned to CPUs %s" % a.cpus if a.cpus else "",
                                                    "".join(", " + kv for kv in a.env)))
    print("reference (no library): checksum %s, result %s" % (ref_sum, ref_result))
    procs, bad = [], 0
    for i in range(a.procs):
        if a.deadline is not None and i and time.monotonic() - t0 + slowest > a.deadline:
            print("stopped after %d of %d processes: the next would end past the %g s deadline"
                  % (i, a.procs, a.deadline))
            break
        t = time.monotonic()
        rounds, csum, result = run_one(cmd, lib_env, a.lib, cpus)
        slowest = max(slowest, time.monotonic() - t)
        ratios = round_ratios(rounds)
        same = csum == ref_sum and result == "OK"
        bad += not same or not ratios
        procs.append({"rounds": rounds, "ratios": ratios, "checksum": csum, "same": same})
        if ratios:
            g, lo, hi = gmean_ci(ratios)
            on = statistics.median(rounds[r]["on"] for r in rounds if "on" in rounds[r])
            print("process %d: %d rounds, on %.1f us (median), paused / on %.3fx (%.3f-%.3f)%s"
                  % (i + 1, len(ratios), on, g, lo, hi, "" if same else ", CHECKSUM DIFFERS"))
        else:
            print("process %d: no complete round (%s)" % (i + 1, "checksum differs" if not same else
                                                          "no inproc_block lines"))
    every = [x for p in procs for x in p["ratios"]]
    means = [gmean_ci(p["ratios"])[0] for p in procs if p["ratios"]]
    if every:
        print("pooled over %d rounds: paused / on %.3fx (%.3f-%.3f)" % ((len(every),) + gmean_ci(every)))
    if means:
        print("over %d processes' means: paused / on %.3fx (%.3f-%.3f)" % ((len(means),) + gmean_ci(means)))
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"cmd": cmd, "rounds": a.rounds, "cpus": a.cpus, "reference": ref_sum,
                       "processes": procs}, f, indent=1)
    if bad:
        sys.exit("inproc.py: %d process(es) without rounds or with another checksum" % bad)


if __name__ == "__main__":
    main()
