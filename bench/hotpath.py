#!/usr/bin/env python3
"""The library's own instructions per kernel launch, by what the engine does with it, counted
by valgrind's callgrind on the CPU harness (the fake driver). The count is deterministic but
for the "updated" row, so two commits compare exactly, on any machine without a GPU (issue 19:
the launch path's cost per state, on the CPU harness; `make selftime` gives the times on a real
host).

Collects only inside the library's launch entry (ag_launch_kernel, --toggle-collect) and takes
off what that spends in the driver functions it calls (each fake driver function's inclusive
cost from callers in libautograph.so): what remains is the interposer's and the engine's own,
locks and allocations included.

  bench/hotpath.py [--build DIR] [--lib PATH] [--json FILE] [--rows off,learning,...]

--lib measures another build of the library (an older commit's) with this tree's harness.

Rows (tests/harness programs, with the library preloaded):
  off        loop8 200, AUTOGRAPH_DISABLE=1: interception only
  watched    distinct 50 1: a stream without state (no function repeats yet)
  learning   loop8 200, AUTOGRAPH_MIN_REPEATS=1000000: every launch shown to the learner
  held       loop8 400, AUTOGRAPH_MIN_REPEATS=2 AUTOGRAPH_BENEFIT=always AUTOGRAPH_WORKER=0
             AUTOGRAPH_MAX_HOLD_US=10000000: held and matched, replayed as graphs (the graph
             launches' driver cost taken off)
  paused     pause 200 0 1000000: launches while the program paused the library
             (autograph_pause after the first 3; bench/inproc.py's "off" blocks)
  once       once 30: G2's calls (31 sgemm of two kernels on the legacy stream, the last 30 timed
             once): a few learning launches whose functions' layout probes wait for the worker,
             then launches passed while learning rests
  rested     phases 10000 0: a stream that never repeats (P4c's kind: 8 kernels at random, random
             grids, a sync after one launch in five), AUTOGRAPH_WORKER=0: 98% of its launches
             pass while learning rests, the rest are learning launches
  updated    bigparams 200, the same settings: a CNN-like forward of 36 launches, 12 with a
             1720-byte argument block that never changes, 24 whose pointers change every
             iteration: held, and the replayed graph brought up to date (node by node or whole).
             Which of the two is chosen from their measured times, which callgrind distorts
             differently from run to run: this row moves between runs (1115 and 1242 seen)
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The hold watchdog's limit for the rows that hold: under callgrind a program runs ~50 times
# slower, so the default 2 ms let the watchdog flush holds at moments that differ from run to
# run (counts varied by 1.5% between runs of one build); 10 s keeps it out
HOLD = "10000000"

# name: (program and arguments, launches it makes, settings)
ROWS = {
    "off": (["loop8", "200"], 200 * 8, {"AUTOGRAPH_DISABLE": "1"}),
    "watched": (["distinct", "50", "1"], 50, {}),
    "learning": (["loop8", "200"], 200 * 8, {"AUTOGRAPH_MIN_REPEATS": "1000000"}),
    "held": (["loop8", "400"], 400 * 8, {"AUTOGRAPH_MIN_REPEATS": "2", "AUTOGRAPH_BENEFIT": "always",
                                         "AUTOGRAPH_WORKER": "0", "AUTOGRAPH_MAX_HOLD_US": HOLD}),
    "once": (["once", "30"], 31 * 2, {"AUTOGRAPH_WORKER": "1"}),
    "paused": (["pause", "200", "0", "1000000"], 200 * 8, {}),
    "rested": (["phases", "10000", "0"], 2 * 10000, {"AUTOGRAPH_WORKER": "0"}),
    "updated": (["bigparams", "200"], 200 * 36, {"AUTOGRAPH_MIN_REPEATS": "2", "AUTOGRAPH_BENEFIT": "always",
                                                 "AUTOGRAPH_WORKER": "0", "AUTOGRAPH_MAX_HOLD_US": HOLD}),
}

LINE = re.compile(r"^\s*([\d,]+) \([ \d.]+%\)\s+([<*>])\s+(.*?)(?: \((\d[\d,]*)x\))?(?: \[(.*)\])?$")


def driver_cost(annotated, lib="libautograph.so"):
    """Inclusive Ir of fake driver functions called from the library (file name `lib`), from
    `callgrind_annotate --tree=caller --inclusive=yes`: each block lists a function's callers
    ('<', the inclusive cost from that caller) before the function itself ('*')."""
    total, callers = 0, []
    for line in annotated.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        ir, kind, obj = int(m.group(1).replace(",", "")), m.group(2), m.group(5) or ""
        if kind == "<":
            callers.append((ir, obj))
        elif kind == "*":
            # (callgrind_annotate may list a function twice, by absolute and relative file
            # name, its callers under one of them: know the fake driver by either)
            if obj.endswith("libcuda.so.1") or "tests/fakecuda/" in m.group(3):
                total += sum(c for c, o in callers if os.path.basename(o) == lib)
            callers = []
    return total


def measure(build, lib, row):
    args, launches, env_extra = ROWS[row]
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("AUTOGRAPH_"):
            del env[k]
    env.update(env_extra)
    lib = lib or os.path.join(build, "libautograph.so")
    env["LD_PRELOAD"] = lib
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
                            "--toggle-collect=ag_launch_kernel",
                            os.path.join(build, "harness", args[0])] + args[1:],
                           env=env, capture_output=True, text=True, timeout=600)
        if p.returncode != 0 or "PASS" not in p.stdout + p.stderr:
            sys.exit("hotpath.py: %s failed (exit %d)\n%s\n%s" % (row, p.returncode, p.stdout[-2000:],
                                                                  p.stderr[-2000:]))
        total = int(re.search(r"Collected : (\d+)", p.stderr).group(1))
        a = subprocess.run(["callgrind_annotate", "--tree=caller", "--inclusive=yes", out],
                           capture_output=True, text=True, check=True).stdout
    drv = driver_cost(a, os.path.basename(lib))
    return {"row": row, "launches": launches, "collected_ir": total, "driver_ir": drv,
            "own_ir_per_launch": (total - drv) / launches}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--lib", default=None)
    ap.add_argument("--json", default=None)
    ap.add_argument("--rows", default=",".join(ROWS))
    a = ap.parse_args()
    for tool in ("valgrind", "callgrind_annotate"):
        if not shutil.which(tool):
            print("skip: %s not found (Debian: apt install valgrind)" % tool)
            return
    rows = [measure(a.build, a.lib, r) for r in a.rows.split(",")]
    print("%-10s %9s %14s %12s %18s" % ("row", "launches", "collected Ir", "driver Ir",
                                        "own Ir per launch"))
    for r in rows:
        print("%-10s %9d %14d %12d %18.1f" % (r["row"], r["launches"], r["collected_ir"],
                                              r["driver_ir"], r["own_ir_per_launch"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
