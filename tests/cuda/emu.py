#!/usr/bin/env python3
"""Runs the self-checking programs on the CPU.

usage: emu.py PROGDIR [NAME...]
       emu.py --gen TILEDISPATCH CASES_DIR [GOLDEN_DIR]

PROGDIR holds NAME.cu files and manifest.tsv (scripts/gen-programs).  Each
program without 16-bit floats or inline PTX (bar.sync excepted) is compiled
with g++ against tests/cuda/emu/cuda_runtime.h (one host thread per CUDA
thread; barriers and shuffles emulated) and run; it must print PASS.  This
checks the harness (staging, reference, comparison) without a GPU; the GPU
run (scripts/gpu-check) is the real verification.
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = re.compile(r"__half|__nv_bfloat16|\basm\b(?! volatile\(\"bar\.sync)")
# The id may be an expression (one named barrier per warpgroup:
# "8 + (int)threadIdx.x / 128").
BAR = re.compile(r'asm volatile\("bar\.sync %0, %1;" :: "r"\((.+?)\), '
                 r'"r"\((\d+)\) : "memory"\);')


def main():
    if sys.argv[1] == "--gen":
        # Generate the programs first (tests/conformance/run.py --out).
        with tempfile.TemporaryDirectory() as d:
            cmd = [sys.executable,
                   os.path.join(HERE, "..", "conformance", "run.py"),
                   sys.argv[2], "--cases", sys.argv[3], "--out", d]
            if len(sys.argv) > 4:
                cmd += ["--golden", sys.argv[4]]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if not os.path.exists(os.path.join(d, "manifest.tsv")):
                print(p.stdout + p.stderr)
                return 1
            # Cases that did not dispatch as expected fail in cuda-compile;
            # here the programs that were written are run.
            for line in p.stdout.splitlines():
                if line.startswith("FAIL"):
                    print("not generated: " + line[5:])
            return check(d, [])
    return check(sys.argv[1], sys.argv[2:])


def check(d, only):
    names = [l.split("\t")[0] for l in open(os.path.join(d, "manifest.tsv"))
             if l.strip()]
    if only:
        names = [n for n in names if n in only]
    ran = failed = skipped = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n in names:
            src = open(os.path.join(d, n + ".cu")).read()
            if SKIP.search(src):
                skipped += 1
                continue
            src = re.sub(r"td_kernel<<<(dim3\([^)]*\)), (dim3\([^)]*\))>>>"
                         r"\((.*)\);",
                         r"td_emu_launch(\1, \2, [&] { td_kernel(\3); });", src)
            src = BAR.sub(r"td_emu_bar(\1, \2);", src)
            cpp = os.path.join(tmp, n + ".cpp")
            open(cpp, "w").write(src)
            exe = os.path.join(tmp, n)
            p = subprocess.run(["g++", "-std=c++17", "-O1", "-w", "-pthread", "-I",
                                os.path.join(HERE, "emu"), cpp, "-o", exe],
                               capture_output=True, text=True)
            ran += 1
            if p.returncode != 0:
                print(f"FAIL {n}: g++:\n{p.stderr[:2000]}")
                failed += 1
                continue
            try:
                p = subprocess.run([exe], capture_output=True, text=True,
                                   timeout=60)
            except subprocess.TimeoutExpired:
                print(f"FAIL {n}: timeout (emulated barrier or shuffle "
                      "never completed)")
                failed += 1
                continue
            line = p.stdout.strip()
            ok = p.returncode == 0 and line.startswith("PASS ")
            print(line if line else f"FAIL {n}: exit {p.returncode}")
            failed += not ok
    print(f"emu: {ran - failed}/{ran} passed, {skipped} skipped "
          "(16-bit floats, inline PTX other than bar.sync)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
