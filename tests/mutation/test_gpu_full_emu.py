#!/usr/bin/env python3
"""Checks gpu_full.py's one-process-per-bundle runs on the CPU stand-in
(`gpu_full.py run --emu`): the mutants of one emulatable program, run in
one process per bundle of 8 (state put back between runs; a crash ends
the process and a fresh one runs the rest; with --slow 0 every mutant
spread over processes of their own), get the same status as when each
mutant runs in a process with only the unmutated kernel before it
(bundles of 1).  One program has a mutant that crashes the process (a
segfault on the stand-in).

usage: test_gpu_full_emu.py TILEDISPATCH CASES_DIR
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = "ewise_tvm_fma_smem_region_scalar_cta,ewise_swz_exp_f32_units"


def statuses(progdir, out, *extra):
    p = subprocess.run([sys.executable, os.path.join(HERE, "gpu_full.py"),
                        "run", progdir, out, "--all", "--emu", "--only",
                        NAMES, "-j", "2", "--runners", "2"] + list(extra),
                       capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stdout + p.stderr)
        sys.exit(1)
    with open(os.path.join(out, "results-0.tsv")) as f:
        rows = [line.split("\t") for line in f]
    return {r[0]: r[3] for r in rows}, p.stdout


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    exe, cases = sys.argv[1:]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        progs = os.path.join(tmp, "progs")
        os.makedirs(progs)
        for n in NAMES.split(","):
            subprocess.run([exe, "kernel", os.path.join(cases, n + ".yaml"),
                            "-o", os.path.join(progs, n + ".cu")], check=True)
        with open(os.path.join(progs, "manifest.tsv"), "w") as f:
            for n in NAMES.split(","):
                f.write(f"{n}\tx\tsm_90a\texact,random\tgpu\n")
        batch, log = statuses(progs, os.path.join(tmp, "a"), "--bundle", "8")
        alone, _ = statuses(progs, os.path.join(tmp, "b"), "--bundle", "1")
        split, _ = statuses(progs, os.path.join(tmp, "c"), "--bundle", "8",
                            "--slow", "0", "--part", "0.001")
        checks = [
            ("every mutant has a status", len(batch) > 30 and
             set(batch.values()) <= {"killed", "survived"}),
            ("bundles of 8 give each mutant the status bundles of 1 give",
             batch == alone),
            ("a slow program's parts (--slow 0) give the same statuses",
             batch == split),
            # 19 and 21 mutants: 6 bundles of 8, one process more after
            # the crash.
            ("a crash ends a process and a fresh one runs the rest",
             " processes," in log and
             int(log.split(" processes,")[0].split()[-1]) >= 7),
            ("most are killed",
             list(batch.values()).count("killed") > 30),
        ]
        for what, ok in checks:
            print(("ok   " if ok else "FAIL ") + what)
            failed += not ok
        if batch != alone:
            for k in sorted(batch):
                if batch[k] != alone.get(k):
                    print(f"  {k}: {batch[k]} in bundles of 8, "
                          f"{alone.get(k)} alone")
    print(f"test_gpu_full_emu: {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
