#!/usr/bin/env python3
"""Python-side dispatch cost next to the C figure, measured side by side.

    bench/bench_python.py [--iterations N] [CALL.yaml...]

For each call file (default: the three of docs/bench.md), through the
installed `tiledispatch` package:

    C loop              td_dispatch + td_ir_free in a C loop inside the same
                        process (_core._bench_c_dispatch: what
                        bench/bench_dispatch times)
    reg.dispatch(call)  from Python; the goal is <= 3 us
    reg.select(call)    dispatch, IR freed in C, the variant name back
    dispatch+emit       reg.dispatch(call).emit("cuda")
    Call.from_text      parsing the call file's text, for reference

Each figure is the best of 7 rounds of N calls (the Python loop included),
the C and Python rounds interleaved so that both see the machine alike; two
clocks: wall time, and the thread's CPU time (which a busy machine
preempting the process does not inflate).  `binding` is Python minus C:
the argument check, releasing and taking the GIL, the result object.  The
calls that match nothing raise DispatchError, which builds the explain
table: that path is reported but is not the fast path.
"""
import argparse
import sys
import time
from pathlib import Path

import tiledispatch as td
from tiledispatch import _core

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ["examples/calls/seed_local_sum.yaml", "tests/cli/data/cta_local.yaml",
           "tests/golden/cases/sum_3d_axes_0_2.yaml"]


ROUNDS = 7


def one_round(fn, arg, n):
    """(wall, cpu) ns per call of fn(arg) over n calls."""
    w0, c0 = time.perf_counter_ns(), time.thread_time_ns()
    for _ in range(n):
        fn(arg)
    c1, w1 = time.thread_time_ns(), time.perf_counter_ns()
    return (w1 - w0) / n, (c1 - c0) / n


def interleaved(measures):
    """Best (wall, cpu) of each measure (a no-argument function returning
    one round's (wall, cpu)), the measures' rounds interleaved."""
    best = [(float("inf"), float("inf"))] * len(measures)
    for _ in range(ROUNDS):
        for i, m in enumerate(measures):
            w, c = m()
            best[i] = (min(best[i][0], w), min(best[i][1], c))
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iterations", type=int, default=20000)
    ap.add_argument("calls", nargs="*", type=Path)
    args = ap.parse_args()
    files = args.calls or [ROOT / f for f in DEFAULT]
    n = args.iterations
    reg = td.Registry()

    def catching(fn):
        def run(call):
            try:
                return fn(call)
            except td.DispatchError:
                return None
        return run

    def dispatch_emit(call):
        return reg.dispatch(call).emit("cuda")

    print(f"tiledispatch {td.__version__}, Python {sys.version.split()[0]}, "
          f"N={n}, best of {ROUNDS} interleaved rounds; ns per call (wall / thread CPU)")
    print(f"{'call':<26} {'operation':<18} {'wall':>8} {'cpu':>8} {'binding wall':>13} {'binding cpu':>12}")
    for f in files:
        call = td.Call.from_yaml(f)
        try:
            reg.dispatch(call)
            matched = True
        except td.DispatchError:
            matched = False
        k = n if matched else max(n // 20, 1)
        text = f.read_text()
        names = ["C loop", "reg.dispatch", "reg.select", "dispatch+emit cuda", "Call.from_text"]
        measures = [
            lambda: _core._bench_c_dispatch(reg, call, n),
            lambda: one_round(reg.dispatch if matched else catching(reg.dispatch), call, k),
            lambda: one_round(reg.select if matched else catching(reg.select), call, k),
            lambda: one_round(dispatch_emit, call, max(n // 4, 1)),
            lambda: one_round(td.Call.from_text, text, max(n // 10, 1)),
        ]
        if not matched:
            names = [nm + (" (raises)" if nm.startswith("reg.") else "") for nm in names]
            del names[3], measures[3]
        figs = interleaved(measures)
        c = figs[0]
        rows = [(nm, fig, c if nm.startswith("reg.") else None) for nm, fig in zip(names, figs)]
        for op, (w, cpu), base in rows:
            bw = f"{w - base[0]:13.0f}" if base else f"{'':13}"
            bc = f"{cpu - base[1]:12.0f}" if base else f"{'':12}"
            print(f"{f.name:<26} {op:<18} {w:8.0f} {cpu:8.0f} {bw} {bc}")


if __name__ == "__main__":
    main()
