#!/usr/bin/env python3
"""Checks a stats JSON file's launch accounting (docs/STATS.md, "fates"): every kernel launch
under exactly one fate. Used by bats/cpu_harness_fates.bats.

usage: check_fates.py FILE.json [--dominant FATE[,FATE...] [--among FATE,FATE...]]...
                                [--at-least FATE=N]... [--none FATE,...]

Checked always, once the process has exited (nothing held):
  - the fates sum to the launches of the six entry points;
  - the fates of held launches sum to the kernel launches held (launches.held - copies.held),
    the replayed one to launches.replayed - copies.replayed, the flushed ones to
    launches.flushed_eager - copies.flushed_eager;
  - fate.app_capture is launches.in_app_capture, fate.paused is launches.paused,
    fate.ungraphable is launches.ungraphable;
  - launches.eager is the sum of the fates that pass, and the rests (ag_stats_sum);
  - the JSON's `fates` object is the fate.* counters, and replayed_fraction is
    fate.replayed / launches (at most 1).
--dominant FATE[,FATE...]: the largest fate (of those --among names, when given) is one of these
(a tie counts), and it is not 0.
--at-least FATE=N: FATE counted at least N launches. --none: these fates counted none.
Prints the fates, and exits 1 with the first failed check."""
import json
import sys

HELD = ["replayed", "building", "diverged", "hold_timeout", "ordering_point", "graph_failure", "cache_full"]
RESTED = ["rested_no_repeat", "rested_backoff"]
ENTRIES = ["cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz",
           "cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel_ptsz"]


def explain(d):
    """What a failed run's engine did, for a failure seen once (a test under load): the
    learning, policy, graph and flush counters that are not 0, and the sequences."""
    c = d["counters"]
    keep = ("sequences.", "learning.", "policy.", "graphs.", "flushes.", "holds.", "pieces.",
            "updates.", "failures.")
    print("counters: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())
                                   if v and k.startswith(keep)))
    for q in d["top_sequences"]:
        print("sequence: %d launches, %d replays, %d eager, %s: %s"
              % (q["length"], q["replays"], q["eager_runs"], q["status"], q["kernels"][:160]))


def main(argv):
    path, opts = argv[1], argv[2:]
    d = json.load(open(path))
    c, fates = d["counters"], d["fates"]
    launches = sum(c["launches." + e] for e in ENTRIES)
    shown = ", ".join(f"{k} {v}" for k, v in sorted(fates.items(), key=lambda kv: -kv[1]) if v)
    print(f"{path}: {launches} launches: {shown}")

    def check(ok, what):
        if not ok:
            print(f"FAIL: {what}")
            explain(d)
            sys.exit(1)

    check(set(fates) == {k[5:] for k in c if k.startswith("fate.")} and
          all(fates[k] == c["fate." + k] for k in fates), "the fates object is the fate.* counters")
    total = sum(fates.values())
    check(total == launches, f"the fates sum to {total}, not to the {launches} launches")
    held = sum(fates[k] for k in HELD)
    check(held == c["launches.held"] - c["copies.held"],
          f"held fates {held} != launches.held {c['launches.held']} - copies.held {c['copies.held']}")
    check(fates["replayed"] == c["launches.replayed"] - c["copies.replayed"],
          "fate.replayed != launches.replayed - copies.replayed")
    flushed = sum(fates[k] for k in HELD if k != "replayed")
    check(flushed == c["launches.flushed_eager"] - c["copies.flushed_eager"],
          f"flushed fates {flushed} != launches.flushed_eager - copies.flushed_eager")
    check(fates["app_capture"] == c["launches.in_app_capture"], "app_capture != in_app_capture")
    check(fates["paused"] == c["launches.paused"], "paused != launches.paused")
    check(fates["ungraphable"] == c["launches.ungraphable"], "ungraphable != launches.ungraphable")
    check(sum(fates[k] for k in RESTED) == c["launches.learning_rested"], "rests")
    check(total - held == c["launches.eager"], "launches.eager is not the fates that pass")
    check(abs(d["replayed_fraction"] - (fates["replayed"] / launches if launches else 0)) < 1e-5
          and d["replayed_fraction"] <= 1, "replayed_fraction is not fate.replayed / launches")

    i = 0
    while i < len(opts):
        o = opts[i]
        if o == "--dominant":
            want, among = opts[i + 1].split(","), list(fates)
            if i + 2 < len(opts) and opts[i + 2] == "--among":
                among = opts[i + 3].split(",")
                i += 2
            top = max(among, key=lambda k: fates[k])
            check(fates[top] > 0 and fates[top] in [fates[k] for k in want],
                  f"{'/'.join(want)} does not dominate {'/'.join(among)}: {top} has {fates[top]}")
            i += 2
        elif o == "--at-least":
            k, n = opts[i + 1].split("=")
            check(fates[k] >= int(n), f"{k} is {fates[k]}, expected at least {n}")
            i += 2
        elif o == "--none":
            for k in opts[i + 1].split(","):
                check(fates[k] == 0, f"{k} is {fates[k]}, expected none")
            i += 2
        else:
            check(False, f"unknown option {o}")
    print("fates ok")


if __name__ == "__main__":
    main(sys.argv)
