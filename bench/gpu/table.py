#!/usr/bin/env python3
"""The goals table of docs/performance.md from one run's raw output.

    bench/gpu/table.py BENCH.csv ONE_BLOCK.csv LAYOUTS.md SWEEP.md

BENCH.csv: bench_reduce with the default bodies; ONE_BLOCK.csv: the same
with BENCH_CONFIG="one_block_per_sm: true"; LAYOUTS.md: the layouts run
(the emitted body at every group size and width, and hand-written
layouts); SWEEP.md: `bench_reduce --sweep` (the reference at every G,
sums).  For every shape, op and mode: the default body, the one-block
body, `shared`, CUB, and the best layout of the run (the least time over
the reference, the sweep, the hand-written layouts and the emitted body
at every knob setting), with the ratios the goals name.
"""
import csv
import re
import sys


def load_csv(path):
    rows = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            rows[(r["case"], r["mode"])] = r
    return rows


def shape_key(text):
    m = re.match(r"\[(\d+),(\d+)\] / (\d+)", text.strip())
    return (int(m.group(1)), int(m.group(2)), int(m.group(3)))


def main():
    bench, one, lay_path, sweep_path = sys.argv[1:5]
    main_rows, ob_rows = load_csv(bench), load_csv(one)
    best = {}  # (R, C, T, op, mode) -> (ns, what)

    def offer(key, ns, what):
        if key not in best or ns < best[key][0]:
            best[key] = (ns, what)

    with open(lay_path) as f:
        for line in f:
            p = [x.strip() for x in line.strip().strip("|").split("|")]
            if len(p) != 5 or not p[0].startswith("["):
                continue
            what = p[2]
            if what.startswith("shared") or what == "cub":
                continue
            if what.startswith("emitted "):
                what = "emitted " + re.sub(r"^r\d+x\d+_t\d+_(sum|max|min)_",
                                           "", what.split()[1])
            for m, v in (("full", p[3]), ("one", p[4])):
                offer(shape_key(p[0]) + (p[1], m), float(v), what)
    with open(sweep_path) as f:
        for line in f:
            p = [x.strip() for x in line.strip().strip("|").split("|")]
            if len(p) != 4 or not p[0].startswith("["):
                continue
            what = "ref G=" + p[1].replace(" (ref)", "")
            for m, v in (("full", p[2]), ("one", p[3])):
                offer(shape_key(p[0]) + ("sum", m), float(v), what)
    for (case, m), r in main_rows.items():
        k = (int(r["R"]), int(r["C"]), int(r["threads"]), r["op"], m)
        offer(k, float(r["ref_ns"]), "ref")

    titles = {"full": "Full occupancy, ns per tile per SM",
              "one": "One block per SM, ns per tile"}
    order = []
    for (case, m) in main_rows:
        if case not in order:
            order.append(case)
    for m in ("full", "one"):
        print("### %s\n" % titles[m])
        print("| tile / threads | op | default | one_block_per_sm | shared "
              "| cub | best layout (which) | default/best | "
              "one_block/best | shared/default | cub/default |")
        print("|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|")
        for case in order:
            r, o = main_rows[(case, m)], ob_rows[(case, m)]
            k = (int(r["R"]), int(r["C"]), int(r["threads"]), r["op"], m)
            d, ob = float(r["default_ns"]), float(o["default_ns"])
            sh, cub = float(r["shared_ns"]), float(r["cub_ns"])
            b, what = best[k]
            b = min(b, d, ob)
            if b == d and best[k][0] > d:
                what = "the default"
            elif b == ob and best[k][0] > ob:
                what = "the one-block body"
            flag = ""
            if d > min(sh, cub) or d / b > 1.1:
                flag = " **miss**"
            print("| [%s,%s] / %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f "
                  "(%s) | %.2f%s | %.2f | %.2fx | %.2fx |"
                  % (r["R"], r["C"], r["threads"], r["op"], d, ob, sh,
                     cub, b, what, d / b, flag, ob / b, sh / d, cub / d))
        print()


if __name__ == "__main__":
    main()
