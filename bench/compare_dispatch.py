#!/usr/bin/env python3
"""Runs two bench_dispatch binaries alternately and prints the medians.

    bench/compare_dispatch.py [--runs N] [--iterations N] [--cpu]
                              OLD NEW CALL.yaml...

Each run is one `bench_dispatch [--cpu] ITERATIONS CALL...` (best of 5
rounds per figure); OLD and NEW alternate, so a load that comes and goes
hits both (--cpu: thread CPU time, for a busy machine; both binaries need
the --cpu option, bench_dispatch.c of 2026-11-30 or later).
Prints, per call and operation, the median over the runs of each binary
and NEW / OLD.
"""
import argparse
import statistics
import subprocess
import sys


def run(binary, iters, calls, cpu):
    out = subprocess.run([binary] + (["--cpu"] if cpu else []) +
                         [str(iters)] + calls, check=True,
                         capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines()[1:]:
        f = line.split()
        res[(f[0], " ".join(f[1:-1]))] = float(f[-1])
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--iterations", type=int, default=20000)
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("calls", nargs="+")
    a = ap.parse_args()
    old, new = {}, {}
    for _ in range(a.runs):
        for binary, acc in ((a.old, old), (a.new, new)):
            for k, v in run(binary, a.iterations, a.calls, a.cpu).items():
                acc.setdefault(k, []).append(v)
    print(f"{'call':<28} {'operation':<18} {'old ns':>9} {'new ns':>9} "
          f"{'new/old':>8}")
    for k in old:
        o, n = statistics.median(old[k]), statistics.median(new[k])
        print(f"{k[0]:<28} {k[1]:<18} {o:>9.0f} {n:>9.0f} {n / o:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
