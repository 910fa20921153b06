#!/usr/bin/env python3
"""Python-side dispatch cost next to the C figure, measured side by side.

    bench/bench_python.py [--iterations N] [--c-bench build/bench/bench_dispatch] CALL.yaml...

For each call file: the C library's own figures (bench/bench_dispatch, run
as a subprocess on the same files) and, through the installed `tiledispatch`
package, the cost per call of

    reg.dispatch(call)                     the goal is <= 3 us
    reg.select(call)                       dispatch, IR freed in C, a str back
    reg.dispatch(call).emit("cuda")        dispatch + CUDA text
    Call.from_text(text)                   parsing a call (for reference)

Each Python figure is the best of 5 rounds of N calls (the loop included);
the C and Python rounds alternate three times and the best of each is kept,
so that a busy machine slows both alike.  The difference is what the
binding costs: argument check, releasing the GIL, the result object.
"""
import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import tiledispatch as td

ROOT = Path(__file__).resolve().parents[1]


def best_ns(fn, arg, n, rounds=5):
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter_ns()
        for _ in range(n):
            fn(arg)
        best = min(best, (time.perf_counter_ns() - t) / n)
    return best


def c_figures(exe, n, files):
    out = subprocess.run([exe, str(n), *map(str, files)], check=True,
                         capture_output=True, text=True).stdout
    figs = {}
    for line in out.splitlines()[1:]:
        parts = line.split()
        call, value = parts[0], float(parts[-1])
        figs[(call, " ".join(parts[1:-1]))] = value
    return figs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iterations", type=int, default=20000)
    ap.add_argument("--c-bench", default=str(ROOT / "build" / "bench" / "bench_dispatch"))
    ap.add_argument("calls", nargs="*", type=Path)
    args = ap.parse_args()
    files = args.calls or [ROOT / "examples/calls/seed_local_sum.yaml",
                           ROOT / "tests/cli/data/cta_local.yaml",
                           ROOT / "tests/golden/cases/sum_3d_axes_0_2.yaml"]
    n = args.iterations
    have_c = os.access(args.c_bench, os.X_OK)
    reg = td.Registry()
    calls = [(f, td.Call.from_yaml(f), f.read_text()) for f in files]

    def dispatch_or_none(call):
        try:
            return reg.dispatch(call)
        except td.DispatchError:
            return None

    def dispatch_emit(call):
        d = dispatch_or_none(call)
        return d.emit("cuda") if d is not None else None

    def select(call):
        try:
            return reg.select(call)
        except td.DispatchError:
            return None

    best = {}
    for _ in range(3):
        if have_c:
            for k, v in c_figures(args.c_bench, n, files).items():
                best[("C",) + k] = min(best.get(("C",) + k, v), v)
        for f, call, text in calls:
            matched = dispatch_or_none(call) is not None
            figs = {
                "dispatch": best_ns(reg.dispatch if matched else dispatch_or_none, call, n),
                "select": best_ns(select, call, n),
                "dispatch+cuda": best_ns(dispatch_emit, call, n // 4 or 1),
                "Call.from_text": best_ns(td.Call.from_text, text, n // 4 or 1),
            }
            for op, v in figs.items():
                key = ("py", f.name, op)
                best[key] = min(best.get(key, v), v)

    print(f"tiledispatch {td.__version__}, Python {sys.version.split()[0]}, "
          f"{n} iterations, best of 5 rounds x 3 alternations")
    print(f"{'call':<28} {'operation':<16} {'C ns':>9} {'Python ns':>10} {'binding ns':>11}")
    for f, call, _ in calls:
        matched = dispatch_or_none(call) is not None
        for op in ("dispatch", "select", "dispatch+cuda", "Call.from_text"):
            c_op = "dispatch" if op == "select" else op
            c = best.get(("C", f.name, c_op))
            py = best[("py", f.name, op)]
            note = "" if matched or op not in ("dispatch", "select") else "  (no match: raises DispatchError)"
            c_txt = f"{c:9.0f}" if c is not None and op != "Call.from_text" else f"{'-':>9}"
            diff = f"{py - c:11.0f}" if c is not None and op != "Call.from_text" else f"{'-':>11}"
            print(f"{f.name:<28} {op:<16} {c_txt} {py:10.0f} {diff}{note}")
    if not have_c:
        print(f"(no C figures: {args.c_bench} is not built; ninja -C build)")


if __name__ == "__main__":
    main()
