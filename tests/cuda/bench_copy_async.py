#!/usr/bin/env python3
"""Checks the copy_async GPU benchmark (bench/gpu/copy_async/) without a GPU.

usage: bench_copy_async.py --current TILEDISPATCH
       bench_copy_async.py --emu
       bench_copy_async.py --harness
       bench_copy_async.py --compile WORKDIR

--current regenerates the kernels of ours (gen.py --ours, with the
tiledispatch just built) and compares them byte for byte with the committed
gen/ours_gen.cu, gen/ours_tma_gen.cu and gen/cases.h: a change to the
ldgsts or tma_auto emitter or to the printed tensor-map C shows up as a
stale bench.
It checks that every committed TVM TMA kernel declares its dynamic shared
array with the alignment its tensor maps' swizzle needs (gen.py's
tma_alignment_problem: the first GPU run faulted with a misaligned
address when the SWIZZLE_128B stages sat at shared offset 0x440).
TVM's half (gen/tvm_*.cu, cases.h) needs the released TVM and is checked
only with TD_BENCH_TVM_CHECK=1 (TVM 0.27 does not always print the same
TMA kernel: about one run in ten encodes a map once where it usually
encodes it twice): then, with a Python that imports tvm
(TD_UPSTREAM_PYTHON, else ROOT/build-python/venv/bin/python), the whole
gen/ is regenerated and compared; otherwise that half is reported as not
checked.

--emu makes gen/ours_gen.cu and gen/ours_tma_gen.cu host C++ (as
tests/cuda/emu.py does for the programs: the dynamic shared memory, the
launches, the driver header) and runs every kernel of ours on the CPU
stand-in (tests/cuda/emu/) for two CTAs with
data/bench_async_emu/driver.cpp, which checks every checksum exactly; the
TMA kernels run the stand-in's mbarriers and TMA loads through the map
the printed encode function gives (the stand-in's cuTensorMapEncodeTiled
checks the driver's limits).  Then mutants must FAIL: the skeleton
folding the next stage instead of the current one, the emitted body
loading from the wrong offset, the TMA skeleton folding the next stage,
the TMA tile's row coordinate halved, and the printed map's rows cut
short.

--harness builds the bench's harness (bench_copy_async.cu) with g++
against a fake runtime and fake kernels (data/bench_async_harness/), one
per way a kernel can go wrong: one that faults (a sticky error), one with
a wrong checksum, one that hangs, one whose launcher refuses, one that
faults only when timed.  Each must be reported FAILED by name, the right
ones checked, timed and tabled, exit 1; without a device, exit 3.

--compile builds the whole bench with nvcc -arch=sm_90a (run.sh with
BUILD_ONLY=1 into WORKDIR); exit 77 (skip) without nvcc.  With
TD_TEST_QUICK set it compiles, without linking, the harness, ours (both
files) and TVM's 4-stage TMA kernel (with the tensor-map encode gen.py writes) only.
Either takes tens of seconds of nvcc, so meson runs it in the cuda-full
suite (scripts/test, CI), not in the plain `meson test`.
"""
import filecmp
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
BENCH = os.path.join(ROOT, "bench", "gpu", "copy_async")
EMU_INC = os.path.join(HERE, "emu")
DATA = os.path.join(HERE, "data", "bench_async_emu")


def fail(msg):
    print("FAIL " + msg)
    sys.exit(1)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def tvm_python():
    py = os.environ.get("TD_UPSTREAM_PYTHON") or os.path.join(
        ROOT, "build-python", "venv", "bin", "python")
    if not os.access(py, os.X_OK):
        return None
    return py if run([py, "-c", "import tvm"]).returncode == 0 else None


def gen_module():
    """bench/gpu/copy_async/gen.py as a module (its name clashes with
    bench/gpu/gen.py, which it imports)."""
    spec = importlib.util.spec_from_file_location(
        "copy_async_gen", os.path.join(BENCH, "gen.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def tma_alignment():
    gen = gen_module()
    names = sorted(n for n in os.listdir(os.path.join(BENCH, "gen"))
                   if n.startswith("tvm_tma_") and n.endswith(".cu"))
    if not names:
        fail("no gen/tvm_tma_*.cu")
    for n in names:
        with open(os.path.join(BENCH, "gen", n)) as f:
            why = gen.tma_alignment_problem(f.read())
        if why:
            fail("bench/gpu/copy_async/gen/%s: %s" % (n, why))
    print("PASS the dynamic shared arrays of %d TMA kernels are aligned "
          "for their swizzle" % len(names))


def current(tool):
    tma_alignment()
    gen = os.path.join(BENCH, "gen.py")
    with tempfile.TemporaryDirectory() as tmp:
        p = run([sys.executable, gen, "--ours", tool, tmp])
        if p.returncode != 0:
            fail("gen.py --ours:\n" + p.stderr)
        for n in ("ours_gen.cu", "ours_tma_gen.cu", "cases.h"):
            if not filecmp.cmp(os.path.join(tmp, n),
                               os.path.join(BENCH, "gen", n),
                               shallow=False):
                fail("bench/gpu/copy_async/gen/%s is stale: run "
                     "PYTHON=<python with tvm> bench/gpu/copy_async/run.sh "
                     "--gen (or gen.py --ours %s bench/gpu/copy_async/gen)"
                     % (n, tool))
            print("PASS %s is current" % n)
        if os.environ.get("TD_BENCH_TVM_CHECK", "") != "1":
            # TVM 0.27 does not always print the same TMA kernel (about one
            # run in ten encodes tvm_tma_s2's map once, not twice), so its
            # half is checked on request only, never in a test run.
            print("note: TVM's half (gen/tvm_*.cu, cases.h) not checked: "
                  "set TD_BENCH_TVM_CHECK=1 (TVM's output is not always "
                  "the same)")
            return
        py = tvm_python()
        if py is None:
            print("note: TVM's half (gen/tvm_*.cu, cases.h) not checked: no "
                  "Python with tvm (TD_UPSTREAM_PYTHON)")
            return
        p = run([py, gen, tool, tmp])
        if p.returncode != 0:
            fail("gen.py:\n" + p.stderr)
        names = sorted(os.listdir(os.path.join(BENCH, "gen")))
        if sorted(os.listdir(tmp)) != names:
            fail("gen/ holds %s, gen.py writes %s"
                 % (names, sorted(os.listdir(tmp))))
        for n in names:
            if not filecmp.cmp(os.path.join(tmp, n),
                               os.path.join(BENCH, "gen", n), shallow=False):
                fail("bench/gpu/copy_async/gen/%s is stale: run "
                     "PYTHON=%s bench/gpu/copy_async/run.sh --gen" % (n, py))
        print("PASS all of gen/ is current (TVM %s)" % py)


def to_host(src):
    """ours_gen.cu or ours_tma_gen.cu as host C++ against the stand-in."""
    # the driver-API header: the stand-in provides its types
    src = re.sub(r"^#include <(?:cuda|cudaTypedefs)\.h>\n", "", src,
                 flags=re.M)
    src, n = re.subn(r"extern __shared__ __align__\(\d+\) unsigned char "
                     r"(\w+)\[\];",
                     r"unsigned char *const \1 = td_emu_dyn_smem;", src)
    if n != 1:
        fail("ours_gen.cu: no dynamic shared memory declaration to replace")
    src, n = re.subn(r"(\w+<[^<>]*>)<<<(\w+), (\w+), (\w+), (\w+)>>>"
                     r"\(([^;]*)\);",
                     r"td_emu_launch(dim3(\2), dim3(\3), \4, "
                     r"[&] { \1(\6); });", src)
    if n != 1:
        fail("ours_gen.cu: expected one kernel launch, found %d" % n)
    return src


MUTANTS = {
    "ours_gen.cu": [
        ("skeleton folds the next stage",
         "(k % STAGES) * OURS_TILE +", "((k + 1) % STAGES) * OURS_TILE +"),
        ("body loads from the wrong offset",
         "int g_lin = f * 1024 + tid * 8;", "int g_lin = f * 1024 + tid * 4;"),
    ],
    "ours_tma_gen.cu": [
        ("TMA skeleton folds the next stage",
         "tma_stage + (size_t)(k % STAGES) * OURS_TILE",
         "tma_stage + (size_t)((k + 1) % STAGES) * OURS_TILE"),
        ("TMA tile's row coordinate halved",
         "tile_row + 0, mbar_ptr", "tile_row / 2 + 0, mbar_ptr"),
        # (a wrong swizzle mode is no mutant here: the 128-byte swizzle
        # moves 16-byte chunks within a 128-byte row, and each thread sums
        # its whole row)
        ("printed map's rows cut to 256 (the rest read as zeros)",
         "global_dim[2] = {64u, 540672u};", "global_dim[2] = {64u, 256u};"),
    ],
}


def emu_build(src, tmp, name):
    d = os.path.join(tmp, name)
    os.makedirs(d)
    with open(os.path.join(d, "ours_gen_host.cpp"), "w") as f:
        f.write(src)
    names = re.findall(r'^extern "C" int (\w+)_launch\(', src, re.M)
    if not names:
        fail("ours_gen.cu: no kernel entries")
    with open(os.path.join(d, "emu_list.h"), "w") as f:
        f.write("#define EMU_OURS(X) %s\n"
                % " ".join("X(%s)" % n for n in names))
    exe = os.path.join(d, "driver")
    p = run(["g++", "-std=c++17", "-O1", "-w", "-pthread", "-I", DATA,
             "-I", EMU_INC, "-I", d, os.path.join(DATA, "driver.cpp"),
             "-o", exe])
    if p.returncode != 0:
        fail("g++ (%s):\n%s" % (name, p.stderr[:3000]))
    return exe, len(names)


def emu():
    if shutil.which("g++") is None:
        print("SKIP: no g++")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as tmp:
        for name, mutants in MUTANTS.items():
            with open(os.path.join(BENCH, "gen", name)) as f:
                src = to_host(f.read())
            stem = name.split(".")[0]
            exe, n = emu_build(src, tmp, stem)
            p = run([exe], timeout=600)
            sys.stdout.write(p.stdout)
            if p.returncode != 0 or p.stdout.count("PASS") != n:
                fail("the bench's kernels of ours (%s) on the stand-in "
                     "(exit %d)\n%s" % (name, p.returncode, p.stderr[-2000:]))
            for i, (what, old, new) in enumerate(mutants):
                if old not in src:
                    fail("mutant '%s': '%s' not in %s (update the mutant "
                         "with the emitter)" % (what, old, name))
                exe, _ = emu_build(src.replace(old, new, 1), tmp,
                                   "%s_mutant%d" % (stem, i))
                p = run([exe], timeout=600)
                if p.returncode == 0 or "PASS" in p.stdout:
                    fail("mutant '%s' was not caught:\n%s" % (what, p.stdout))
                print("PASS mutant caught: %s" % what)


HARNESS_DATA = os.path.join(HERE, "data", "bench_async_harness")


def harness():
    if shutil.which("g++") is None:
        print("SKIP: no g++")
        sys.exit(77)
    with open(os.path.join(BENCH, "bench_copy_async.cu")) as f:
        src = f.read()
    src, n = re.subn(r"(\w+)<<<(.*?), (\w+)>>>\(",
                     r"td_fake_launch(\2, \3, \1, ", src, flags=re.S)
    if n != 1:
        fail("bench_copy_async.cu: expected one <<<>>> launch, found %d" % n)
    with tempfile.TemporaryDirectory() as tmp:
        host = os.path.join(tmp, "harness_host.cpp")
        with open(host, "w") as f:
            f.write(src)
        exe = os.path.join(tmp, "harness")
        p = run(["g++", "-std=c++17", "-O1", "-w", "-I", HARNESS_DATA,
                 "-I", DATA, host,
                 os.path.join(HARNESS_DATA, "fake_kernels.cpp"), "-o", exe])
        if p.returncode != 0:
            fail("g++ (harness):\n" + p.stderr[:3000])
        csv = os.path.join(tmp, "samples.csv")
        p = run([exe, csv], timeout=120)
        out = p.stdout
        sys.stdout.write(out)
        if p.returncode != 1:
            fail("the harness exited %d, want 1 (some kernels failed)\n%s"
                 % (p.returncode, p.stderr[-2000:]))
        want = [
            "check fake_good: ok",
            "check fake_fault: FAILED, cudaErrorMisalignedAddress",
            "check fake_wrong: WRONG checksum of CTA 1 thread 5",
            "check fake_wrong: FAILED, 1 of 256 checksums wrong",
            "check fake_hang: FAILED, time limit",
            "check fake_refuse: FAILED to launch (-1000)",
            "check fake_late_fault: ok",
            "check fake_good2: ok",
            "timing fake_late_fault: FAILED, while timing: "
            "cudaErrorMisalignedAddress; timing the others again",
            "| fake_fault | 2 | 1 | FAILED |",
            "| fake_wrong | 2 | 1 | FAILED |",
            "| fake_hang | 2 | 1 | FAILED |",
            "| fake_refuse | 2 | 1 | FAILED |",
            "| fake_late_fault | 4 | 1 | FAILED |",
            "correctness: 5 FAILED: fake_fault (cudaErrorMisalignedAddress)",
        ]
        for w in want:
            if w not in out:
                fail("no '%s' in the harness's output" % w)
        for name in ("fake_good", "fake_good2", "d2d_kernel",
                     "cudaMemcpy_d2d"):
            if not re.search(r"^\| %s \|[^|]*\|[^|]*\| \d+\.\d\d \|"
                             % name, out, re.M):
                fail("%s has no time in the table" % name)
        with open(csv) as f:
            rows = [line.split(",")[0] for line in f.read().split()[1:]]
        if sorted(set(rows)) != ["cudaMemcpy_d2d", "d2d_kernel",
                                 "fake_good", "fake_good2"]:
            fail("the CSV times %s" % sorted(set(rows)))
        print("PASS every failing kernel reported by name, the others "
              "timed")
        p = run([exe], env=dict(os.environ, TD_FAKE_NO_DEVICE="1"),
                timeout=60)
        if p.returncode != 3 or "no usable device" not in p.stdout:
            fail("without a device: exit %d (want 3)\n%s"
                 % (p.returncode, p.stdout))
        print("PASS without a device: exit 3")


def compile_bench(work):
    if shutil.which("nvcc") is None:
        print("SKIP: no nvcc")
        sys.exit(77)
    quick = os.environ.get("TD_TEST_QUICK", "") not in ("", "0")
    os.makedirs(work, exist_ok=True)
    if not quick:
        env = dict(os.environ, BUILD_ONLY="1", JOBS="2")
        p = run(["sh", os.path.join(BENCH, "run.sh"), work], env=env)
        if p.returncode != 0:
            fail("run.sh BUILD_ONLY=1 (exit %d):\n%s%s"
                 % (p.returncode, p.stdout[-2000:], p.stderr[-4000:]))
        print("PASS the whole bench compiles and links (sm_90a)")
        return
    for src in ("bench_copy_async.cu", "gen/ours_gen.cu",
                "gen/ours_tma_gen.cu", "gen/tvm_tma_s4.cu"):
        o = os.path.join(work, os.path.basename(src) + ".o")
        p = run(["nvcc", "-O3", "-std=c++17", "-arch=sm_90a", "-I",
                 os.path.join(BENCH, "gen"), "-c", "-o", o,
                 os.path.join(BENCH, src)])
        if p.returncode != 0:
            fail("nvcc %s:\n%s" % (src, p.stderr[-4000:]))
        print("PASS %s compiles (sm_90a)" % src)


def main():
    a = sys.argv[1:]
    if a[:1] == ["--current"] and len(a) == 2:
        current(a[1])
    elif a == ["--emu"]:
        emu()
    elif a == ["--harness"]:
        harness()
    elif a[:1] == ["--compile"] and len(a) == 2:
        compile_bench(a[1])
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()
