#!/usr/bin/env python3
"""Checks, on the CPU stand-in, the checks that closed the sixth GPU run's
known gaps (docs/verification.md, "Closing the sixth run's gaps"): each
named mutant must be killed, by the check named beside it.

  - golden-shared_cta64_sum_r3:ror:13:20: lanes other than 0 store the
    value the butterfly gave every lane; only the one-writer check sees it
    ("written by threads");
  - rows_t96_r1x8192_sum:ror:44:15 (r <= 1) with the stand-in's scratch
    bounds check off (TD_EMU_UNCHECKED_SCRATCH=1, what a GPU sees): the
    one-writer check;
  - rows_t96_r1x8192_sum:ror:6:17 (grp <= 1, a store one past the body's
    __shared__ array): the stand-in's bounds-checked scratch (an abort);
  - golden-ldgsts_direct_scalar:const:1:87 (4 <= k made 5 <= k): every
    value of the scalar's range, FAIL at k = 4 (round 8);
  - tma_g2s_multicast_expr:const:1:81 and its golden twin (the barrier
    mbar_ptr + k % 3 for k % 2): the TMA program's covering sweep of k
    and m (22 sets) runs k = 2, where the copy completes on mbar[2],
    outside the buffer and never initialised: the stand-in aborts
    ("mbarrier used before mbarrier.init"), exit -6.

usage: test_gaps_emu.py TILEDISPATCH CASES_DIR GOLDEN_DIR
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_PY = os.path.join(HERE, "..", "conformance", "run.py")
CASES = [
    # (mutant id, extra environment, what the kill must say)
    ("golden-shared_cta64_sum_r3:ror:13:20", {}, "written by threads"),
    ("rows_t96_r1x8192_sum:ror:44:15", {"TD_EMU_UNCHECKED_SCRATCH": "1"},
     "written by threads"),
    ("rows_t96_r1x8192_sum:ror:6:17", {}, "exit -6"),
    ("golden-ldgsts_direct_scalar:const:1:87", {}, "round=8 "),
    ("tma_g2s_multicast_expr:const:1:81", {}, "exit -6"),
    ("golden-tma_g2s_multicast_expr:const:1:81", {}, "exit -6"),
]


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    exe, cases, golden = sys.argv[1:]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        progs = os.path.join(tmp, "progs")
        names = sorted({c[0].split(":")[0] for c in CASES})
        p = subprocess.run([sys.executable, RUN_PY, "--cases", cases,
                            "--golden", golden, "--out", progs, "--data",
                            "both", exe] + names,
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(p.stdout + p.stderr)
            return 1
        for k, (mid, env, want) in enumerate(CASES):
            res = os.path.join(tmp, f"r{k}.tsv")
            q = subprocess.run([sys.executable, os.path.join(HERE, "cpu.py"),
                                "-j", "2", "--all-programs",
                                "--allow-survivors", "--mutants", mid,
                                "--results", res, progs,
                                mid.split(":")[0]],
                               capture_output=True, text=True,
                               env=dict(os.environ, **env))
            rows = []
            if os.path.exists(res):
                with open(res) as f:
                    rows = [line.rstrip("\n").split("\t") for line in f]
            ok = (q.returncode == 0 and len(rows) == 1 and
                  rows[0][3] == "killed" and want in rows[0][5])
            print(("ok   " if ok else "FAIL ") + f"{mid} killed ({want})"
                  + ("" if ok else f": {rows or q.stdout[-2000:]}"))
            failed += not ok
    print(f"test_gaps_emu: {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
