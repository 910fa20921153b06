#!/usr/bin/env python3
"""Tests of scripts/gpu-check without a GPU: a fake nvidia-smi (an sm_90
GPU) and a fake nvcc that builds the programs with g++ against the CPU
stand-in runtime (tests/cuda/emu/).  Two cases, both data modes:

  - with the device there, every run passes: table rows PASS, exit 0;
  - with no usable device (TD_EMU_DEVICE_ERROR), every run is listed as
    `SKIP (no device)`, none as passed or failed, and the exit status is 77;
  - with a launch failure that is not about the device, every run FAILs:
    exit 1.

usage: test_gpu_check.py TILEDISPATCH CASES_DIR NAME...
"""
import os
import shutil
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")

FAKE_SMI = """#!/bin/sh
case "$*" in
  *compute_cap*) echo "9.0" ;;
  *name*) echo "Fake GPU" ;;
  *) exit 1 ;;
esac
"""

# nvcc [-O2] -arch=ARCH -o OUT IN.cu: the emu's host translation, then g++.
FAKE_NVCC = """#!/usr/bin/env python3
import importlib.util, subprocess, sys
spec = importlib.util.spec_from_file_location("emu", {emu!r})
emu = importlib.util.module_from_spec(spec)
spec.loader.exec_module(emu)
args = sys.argv[1:]
out = args[args.index("-o") + 1]
src = [a for a in args if a.endswith(".cu")][0]
cpp = out + ".cpp"
with open(src) as f, open(cpp, "w") as g:
    g.write(emu.to_host(f.read()))
sys.exit(subprocess.call(["g++"] + emu.CXXFLAGS + ["-I", {inc!r}, cpp,
                                                  "-o", out]))
"""


def main():
    exe, cases, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    failed = 0

    def expect(what, ok, out):
        nonlocal failed
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
        if not ok:
            print("    " + out.replace("\n", "\n    "))
            failed += 1

    with tempfile.TemporaryDirectory() as d:
        bindir = os.path.join(d, "bin")
        os.makedirs(bindir)
        for name, text in (("nvidia-smi", FAKE_SMI),
                           ("nvcc", FAKE_NVCC.format(
                               emu=os.path.join(HERE, "emu.py"),
                               inc=os.path.join(HERE, "emu")))):
            path = os.path.join(bindir, name)
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, stat.S_IRWXU)
        progs = os.path.join(d, "progs")
        p = subprocess.run([sys.executable,
                            os.path.join(ROOT, "tests/conformance/run.py"),
                            exe] + names + ["--cases", cases, "--out", progs,
                                            "--data", "both"],
                           capture_output=True, text=True,
                           env=dict(os.environ, TILEDISPATCH_RULES=""))
        if p.returncode != 0:
            print("FAIL run.py:\n" + p.stdout + p.stderr)
            return 1
        base = {k: v for k, v in os.environ.items()
                if not k.startswith("TD_EMU_")}
        base["PATH"] = bindir + os.pathsep + base.get("PATH", "")
        base["NVCC"] = os.path.join(bindir, "nvcc")

        def gpu_check(**env):
            e = dict(base, **env)
            p = subprocess.run(["bash", os.path.join(ROOT, "scripts/gpu-check"),
                                progs, "-j", "2"], capture_output=True,
                               text=True, env=e)
            rows = [l.split("\t") for l in
                    open(os.path.join(progs, "gpu-check", "results.tsv"))]
            return p.returncode, rows, p.stdout + p.stderr

        runs = 2 * len(names)
        rc, rows, out = gpu_check()
        expect("device present: every run passes, exit 0",
               rc == 0 and len(rows) == runs
               and all(r[3] == "PASS" for r in rows)
               and sorted({r[1] for r in rows}) == ["exact", "random"]
               and f"summary: {runs} passed, 0 failed, 0 skipped" in out, out)
        rc, rows, out = gpu_check(
            TD_EMU_DEVICE_ERROR="cudaErrorInsufficientDriver")
        expect("no usable device: every run SKIP, exit 77",
               rc == 77 and len(rows) == runs
               and all(r[3] == "SKIP (no device)" for r in rows)
               and f"0 passed, 0 failed, {runs} skipped" in out
               and "no CUDA device (cudaErrorInsufficientDriver" in out, out)
        rc, rows, out = gpu_check(TD_EMU_LAUNCH_ERROR="cudaErrorLaunchFailure")
        expect("a launch failure: every run FAIL, exit 1",
               rc == 1 and len(rows) == runs
               and all(r[3] == "FAIL" for r in rows)
               and f"0 passed, {runs} failed, 0 skipped" in out, out)
    return 1 if failed else 0


if __name__ == "__main__":
    if shutil.which("g++") is None:
        print("SKIP: g++ not found")
        sys.exit(77)
    sys.exit(main())
