#!/usr/bin/env python3
"""Runs the self-checking programs on the CPU.

usage: emu.py [-j N] [--sample] PROGDIR [NAME...]
       emu.py [-j N] [--sample] --gen TILEDISPATCH CASES_DIR [GOLDEN_DIR]
       emu.py --paths TILEDISPATCH CALL.yaml
       emu.py --copy-paths TEST_KERNEL_COPY
       emu.py --async-paths PROGRAM.cu...
       emu.py --tma-programs TILEDISPATCH CASES_DIR
       emu.py --cluster-programs TILEDISPATCH
       emu.py --gemm-programs TILEDISPATCH

PROGDIR holds NAME.cu files and manifest.tsv (scripts/gen-programs).  Each
program without 16-bit floats or inline PTX (bar.sync excepted) is compiled
with g++ against tests/cuda/emu/cuda_runtime.h (one host thread per CUDA
thread; barriers and shuffles emulated; the header is precompiled once) and
run once per data mode of its manifest line (`--data exact`, `--data
random`); every run must print PASS.  When a random-data run took place, at
least one must report max_err > 0 (else the inexact inputs are not
inexact).  This checks the harness (staging, reference, tolerance,
comparison) without a GPU; the GPU run (scripts/gpu-check) is the real
verification.  -j N compiles and runs N programs at a time (default: the
number of CPUs); a progress line comes every 10 programs.

--gen first writes the programs of every case (tests/conformance/run.py
--out, both data modes).  --sample keeps the emulated programs by
run.py's strata (run.py --sample: for reductions one per (variant, exec
scope, dtype class) and one more per (variant, op) not yet covered; for
elementwise ops one per (variant, exec scope), op and dtype class), as
cuda-compile's sample does; the suite cuda-sample (`meson test --setup
full`) runs the sample, cuda-full everything.

--ewise-paths checks one float32 elementwise program (exp, a bias region,
a named scalar): it passes in both modes, and fails with a zero tolerance
(random data), with exp2f in place of expf, with the last loop iteration
left out (the sentinel names it), with one iteration past the end (the
guard bytes after the buffer name it) and with another value for the
scalar.

Corpus programs run at most EMU_ROUNDS of their rounds (--rounds): the
longest rows of max / min programs run thousands, and an emulated launch
costs milliseconds.

--red-paths checks reduction bodies the data must catch (each mutant must
FAIL in both modes, the programs PASS): a float32 max whose loop skips its
last element, the same max without its initialising store (accum: false:
it reads the poisoned dst), a shared-memory min whose index reads the
next row, and an in-place sum (src and dst one region) whose body does
nothing (the poisoned dst must not replace its sources).

--copy-paths runs the copy programs of the unit test test_kernel_copy.c
(its fake copy variant and three wrong ones) and a body that writes its
source: the good programs PASS in both modes, the wrong ones FAIL.

--async-paths runs hand-written programs of the asynchronous copies
(tests/cuda/emu/tma_async.cu: TMA loads with each swizzle mode, an
out-of-bounds box, a store and a reduce-add, an mbarrier's two phases,
the encoder's limits): each PASSes here, and FAILs when built with
-DTD_MUTANT_SWIZZLE and against stand-ins with a wrong swizzle, an
mbarrier that ignores its transaction bytes, or a load that leaves
out-of-bounds elements alone (async_paths says which checks); and the
stand-in must stop each of tma_async's `--misuse N` mistakes (an mbarrier
never initialised, a misaligned TMA destination, a map never encoded, an
arrival beyond the count) with its reason.

--cluster-programs runs the cluster-launch programs that
tests/cuda/gpu-cluster.sh prepares (every dsmem case, every TMA multicast):
the stand-in runs the CTAs of a cluster together (one host thread per CUDA
thread of each, each CTA its own dynamic shared memory at the same offset
from a 1024-byte boundary), with barrier.cluster, mapa (a shared::cluster
address is the rank and the offset), the cluster copy completing on the
peer's mbarrier and the multicast load into every CTA of its mask.  Each
program PASSes in both modes; each of the script's mutants (mapa into the
CTA itself, a chunk read from the wrong offset, the multicast box a row
off) FAILs.

--gemm-programs runs the gemm programs that tests/cuda/gpu-gemm.sh
prepares (every gemm case that dispatches; 16-bit and 8-bit floats are
storage here, the mma.sync helpers' host path computes each lane's D from
its warp's registers): each PASSes in both modes (random data with max_err
> 0, except int32 accumulators and 8-bit float inputs, which the stand-in
sums exactly), each of the script's mutants (B words swapped, A words
swapped, D's zeroing dropped, D started from C at beta 0, and their like
in the extension signatures' programs) FAILs in both.

--paths checks one float32 sum call's program on the paths a full run never
takes: no device (TD_EMU_DEVICES=0, TD_EMU_DEVICE_ERROR, a launch failing
with a no-device error) must print `SKIP NAME: no CUDA device (...)` and
exit 77; a launch failing otherwise must FAIL (exit 1); a bad option exits
2; built with -DTD_TOL_SCALE=0, exact data must still pass (its sums are
exact) and random data must FAIL (its sums are not); the body with its
accumulator starting at 1 must FAIL on exact data (tolerance 0).

With TD_TEST_QUICK set (not empty, not 0: the plain `meson test`) the
four *-paths checks with mutants compile every good program but a part of
the mutants (g++ takes most of their time): --async-paths leaves out its
third stand-in mutant (out-of-bounds elements); --ewise-paths leaves out exp2f and the
other scalar value (the zero tolerance already fails on values), the
short loop and the one past the end stay; --red-paths leaves out the max
without its initialising store and the min reading the next row (one
mutant per good program stays); --copy-paths keeps the wrong programs of
the global -> shared placement and leaves out those of shared -> global
and global -> global (the same wrong indexing on other placements).
`meson test --setup full` (and `--setup whole`) runs them all.
"""
import argparse
import concurrent.futures
import glob
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
QUICK = os.environ.get("TD_TEST_QUICK", "") not in ("", "0")
RUN_PY = os.path.join(HERE, "..", "conformance", "run.py")
# Clusters too: the stand-in runs blocks one after another, so a cluster
# barrier would never open.
_NOT_EMULATED = re.compile(r"__half|__nv_bfloat16|__nv_fp8|__cluster_dims__|"
                           r"\basm\b(?! volatile\(\"bar\.sync)")
# Device-only code with a host path beside it (the copy variants' PTX
# helpers: `#ifdef __CUDA_ARCH__` asm `#else` plain C++ `#endif`): g++
# compiles the host path, so the asm there does not keep a program off the
# stand-in.
# The host branch may also be `#elif defined(TD_EMU)` (the stand-in's
# async-copy functions, which nvcc's host pass must not see).
# A program that uses 16-bit floats only as storage and conversions
# (the stand-in's __half and __nv_bfloat16: tests/cuda/emu/cuda_runtime.h)
# says so; the others with 16-bit floats do arithmetic the stand-in lacks.
STORAGE_16BIT = re.compile(r"^#define TD_EMU_16BIT_STORAGE 1\b", re.M)
# The same for the 8-bit floats (the gemm programs of the e4m3 / e5m2
# instructions: __nv_fp8_e4m3 and __nv_fp8_e5m2 as storage).
STORAGE_FP8 = re.compile(r"^#define TD_EMU_FP8_STORAGE 1\b", re.M)
DEVICE_ONLY = re.compile(r"^#ifdef __CUDA_ARCH__\n.*?^#(?:else|elif\b[^\n]*)\n",
                         re.M | re.S)


class _NotEmulated:
    """NOT_EMULATED.search(src): what keeps a program off the stand-in
    (16-bit floats, float8, a cluster launch, inline PTX other than
    bar.sync outside device-only blocks with a host path), or None."""

    @staticmethod
    def search(src):
        src = DEVICE_ONLY.sub("", src)
        if STORAGE_16BIT.search(src):
            # 16-bit floats only stored and converted (the gemm
            # programs): the stand-in has that much of them.
            src = re.sub(r"__half|__nv_bfloat16", "", src)
        if STORAGE_FP8.search(src):
            src = re.sub(r"__nv_fp8_e4m3|__nv_fp8_e5m2", "", src)
        return _NOT_EMULATED.search(src)


NOT_EMULATED = _NotEmulated()
# The id may be an expression (one named barrier per warpgroup:
# "8 + (int)threadIdx.x / 128").
BAR = re.compile(r'asm volatile\("bar\.sync %0, %1;" :: "r"\((.+?)\), '
                 r'"r"\((\d+)\) : "memory"\);')
CXXFLAGS = ["-std=c++17", "-O1", "-w", "-pthread"]
# Rounds a corpus program runs here at most (--rounds): an emulated launch
# costs milliseconds, and a max over one row of 4096 runs 4097 rounds on
# the GPU.  The path tests run every round.
EMU_ROUNDS = "16"


def load_run_py():
    spec = importlib.util.spec_from_file_location("td_conformance_run",
                                                  RUN_PY)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# A launch's grid or block: dim3(...) or a plain expression.
_LAUNCH_DIM = r"(dim3\([^)]*\)|[^,<>()]+)"
LAUNCH = re.compile(r"(\w+)<<<%s, %s(?:, ([^>]+))?>>>\((.*)\);"
                    % (_LAUNCH_DIM, _LAUNCH_DIM))
# The driver-API headers of programs with tensor maps, and the 16-bit
# float headers: the stand-in provides their types.
DRIVER_INCLUDES = re.compile(r"^#include <(?:cuda|cudaTypedefs|cuda_fp16|"
                             r"cuda_bf16|cuda_fp8)\.h>\n", re.M)


# The body's own scratch: `__shared__ float red_part[8];`.
SCRATCH = re.compile(r"__shared__ ((?:\w+ )*\w+) (\w+)\[(\d+)\];")


def bound_scratch(src):
    """Each `__shared__ T name[N];` whose name the program uses only as
    `name[...]` becomes a bounds-checked td_emu_scratch<T, N> (a function
    static, as __shared__ is here): an index outside the array aborts.
    TD_EMU_UNCHECKED_SCRATCH=1 leaves them plain arrays (to see what the
    other checks catch alone, as on a GPU)."""
    if os.environ.get("TD_EMU_UNCHECKED_SCRATCH", "") not in ("", "0"):
        return src

    def one(m):
        name = m.group(2)
        uses = [u.end() for u in re.finditer(r"\b%s\b" % re.escape(name), src)]
        decl = m.start(2) + len(name)
        if any(e != decl and src[e:e + 1] != "[" for e in uses):
            return m.group(0)
        return "static td_emu_scratch<%s, %s> %s;" % (m.group(1),
                                                     m.group(3), name)
    return SCRATCH.sub(one, src)


# The emitted body (write.c: the marker, then the body inside "    {" and
# "    }" lines) and a local array it declares: `unsigned int regs[4];`.
BODY = re.compile(r"/\* The emitted body \(variant [^)]*\)\. \*/\n    \{\n"
                  r"(.*?)\n    \}\n", re.S)
LOCAL_ARRAY = re.compile(r"^(\s+)((?:(?:unsigned|signed|const) )*\w+) (\w+)"
                         r"\[(\d+)\];$", re.M)


def bound_locals(src):
    """Each local array the emitted body declares (`T name[N];`, one
    dimension) and uses only as `name[...]` becomes a bounds-checked
    td_emu_local<T, N>: an index outside the array aborts, where the GPU
    reads or writes a register or local slot past it, unseen (a loop bound
    one past the register array: `r <= 4` over `regs[4]`).  Off with
    TD_EMU_UNCHECKED_SCRATCH=1, as bound_scratch."""
    if os.environ.get("TD_EMU_UNCHECKED_SCRATCH", "") not in ("", "0"):
        return src
    m = BODY.search(src)
    if m is None:
        return src
    body = m.group(1)

    def one(d):
        name = d.group(3)
        if d.group(2).startswith(("static", "__shared__")):
            return d.group(0)
        uses = [u.end() for u in re.finditer(r"\b%s\b" % re.escape(name),
                                             body)]
        decl = d.start(3) + len(name)
        if any(e != decl and body[e:e + 1] != "[" for e in uses):
            return d.group(0)
        return "%std_emu_local<%s, %s> %s;" % (d.group(1), d.group(2),
                                              d.group(4), name)
    new = LOCAL_ARRAY.sub(one, body)
    return src[:m.start(1)] + new + src[m.end(1):]


def to_host(src):
    """The program's source made host C++ against the stand-in runtime."""
    src = LAUNCH.sub(lambda m: "td_emu_launch(%s, %s, %s, [&] { %s(%s); });"
                     % (m.group(2), m.group(3), m.group(4) or "0",
                        m.group(1), m.group(5)), src)
    src = DRIVER_INCLUDES.sub("", src)
    # Dynamic shared memory: the launch's buffer (blocks run one after
    # another, so one buffer serves them all).
    src = src.replace("extern __shared__ __align__(16) unsigned char "
                      "td_smem[];",
                      "unsigned char *const td_smem = td_emu_dyn_smem;")
    src = BAR.sub(r"td_emu_bar(\1, \2);", src)
    src = bound_scratch(src)
    src = bound_locals(src)
    # The precompiled header must come first.
    return "#include <cuda_runtime.h>\n" + src


def precompile(tmp):
    """Copies the stand-in header into tmp and precompiles it there; returns
    the include directory to use (falls back to the source directory)."""
    inc = os.path.join(tmp, "include")
    os.makedirs(inc)
    hdr = os.path.join(inc, "cuda_runtime.h")
    shutil.copy(os.path.join(HERE, "emu", "cuda_runtime.h"), hdr)
    p = subprocess.run(["g++"] + CXXFLAGS + ["-x", "c++-header", hdr, "-o",
                                             hdr + ".gch"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        print("note: precompiling the stand-in header failed; going on "
              "without:\n" + p.stderr[:1000])
        return os.path.join(HERE, "emu")
    return inc


def compile_program(src_text, name, tmp, inc, extra=()):
    cpp = os.path.join(tmp, name + ".cpp")
    with open(cpp, "w") as f:
        f.write(to_host(src_text))
    exe = os.path.join(tmp, name)
    p = subprocess.run(["g++"] + CXXFLAGS + list(extra) + ["-I", inc, cpp,
                                                           "-o", exe],
                       capture_output=True, text=True)
    return exe if p.returncode == 0 else None, p.stderr


def run_program(exe, args=(), env=None):
    """(exit status, stdout first line, stderr); status None on timeout."""
    try:
        p = subprocess.run([exe] + list(args), capture_output=True, text=True,
                           timeout=60, env=env)
    except subprocess.TimeoutExpired:
        return None, "", ""
    return p.returncode, (p.stdout.strip().splitlines() or [""])[0], p.stderr


def max_err(line):
    m = re.search(r"max_err=(\S+)", line)
    return float(m.group(1)) if m else None


def read_manifest(d):
    rows = []
    with open(os.path.join(d, "manifest.tsv")) as f:
        for line in f:
            if not line.strip():
                continue
            cols = line.rstrip("\n").split("\t")
            modes = cols[3].split(",") if len(cols) > 3 and cols[3] else \
                ["exact"]
            cls = cols[4] if len(cols) > 4 else "?/?/?/?"
            v, sc, dt, op = (cls.split("/") + ["?"] * 4)[:4]
            rows.append({"name": cols[0], "modes": modes,
                         "class": {"variant": v, "scope": sc, "dtype": dt,
                                   "op": op}})
    return rows


def check(d, only, jobs, sample):
    rows = read_manifest(d)
    if only:
        rows = [r for r in rows if r["name"] in only]
    emulated, skipped = [], 0
    for r in rows:
        with open(os.path.join(d, r["name"] + ".cu")) as f:
            r["src"] = f.read()
        if NOT_EMULATED.search(r["src"]):
            skipped += 1
        else:
            emulated.append(r)
    total = len(emulated)
    if sample:
        emulated, _ = load_run_py().sample(
            emulated, lambda r: r["name"], lambda r: r["class"])
        print(f"sample: {len(emulated)} of {total} emulated programs "
              "(run.py's strata)", flush=True)
    lock = threading.Lock()
    state = {"done": 0, "failed": 0, "runs": 0, "random": 0,
             "random_inexact": 0}
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        inc = precompile(tmp)

        def work(r):
            n = r["name"]
            m = re.search(r'TD_NAME\[\] = "([^"]*)"', r["src"])
            pname = m.group(1) if m else n
            out = []
            ok = True
            exe, err = compile_program(r["src"], n, tmp, inc)
            if exe is None:
                out.append(f"FAIL {n}: g++:\n{err[:2000]}")
                ok = False
            else:
                for mode in r["modes"]:
                    rc, line, _ = run_program(exe, ["--data", mode,
                                                    "--rounds", EMU_ROUNDS])
                    good = rc == 0 and line.startswith(f"PASS {pname} ")
                    if rc is None:
                        line = (f"FAIL {n}: timeout (emulated barrier or "
                                "shuffle never completed)")
                    elif not line:
                        line = f"FAIL {n}: exit {rc}"
                    elif not good and not line.startswith("FAIL"):
                        line = f"FAIL {n}: exit {rc}: {line}"
                    out.append(line)
                    ok = ok and good
                    with lock:
                        state["runs"] += 1
                        if mode == "random" and good:
                            state["random"] += 1
                            if (max_err(line) or 0.0) > 0.0:
                                state["random_inexact"] += 1
            with lock:
                state["done"] += 1
                state["failed"] += not ok
                if state["done"] % 10 == 0 or state["done"] == len(emulated):
                    print(f"progress: {state['done']}/{len(emulated)} "
                          f"programs, {state['failed']} failed, "
                          f"{time.monotonic() - start:.0f} s", flush=True)
            return out

        with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as ex:
            results = list(ex.map(work, emulated))
    for out in results:
        for line in out:
            print(line)
    failed = state["failed"]
    print(f"emu: {len(emulated) - failed}/{len(emulated)} programs passed "
          f"({state['runs']} runs), {skipped} not emulated (16-bit floats, "
          "clusters, inline PTX other than bar.sync)"
          + (f", a sample of {total}" if sample else ""))
    if state["random"]:
        print(f"emu: {state['random_inexact']} of {state['random']} "
              "random-data runs had max_err > 0")
        if state["random_inexact"] == 0:
            print("FAIL: no random-data run had a rounding error: the "
                  "inexact mode is not exercised")
            failed += 1
    if not emulated:
        print("FAIL: no program was emulated")
        failed += 1
    return 1 if failed else 0


def gen(exe, cases, golden, outdir, jobs):
    cmd = [sys.executable, RUN_PY, exe, "--cases", cases, "--out", outdir,
           "--data", "both", "-j", str(jobs)]
    if golden:
        cmd += ["--golden", golden]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if not os.path.exists(os.path.join(outdir, "manifest.tsv")):
        print(p.stdout + p.stderr)
        return False
    # Cases that did not dispatch as expected fail in cuda-compile; here
    # the programs that were written are run.
    for line in p.stdout.splitlines():
        if line.startswith("FAIL"):
            print("not generated: " + line[5:])
    return True


class Expect:
    """expect(what, ok, detail) prints an ok or FAIL line (with the detail
    when it fails); expect.failed counts the failures."""

    def __init__(self):
        self.failed = 0

    def __call__(self, what, ok, detail):
        print(f"{'ok  ' if ok else 'FAIL'} {what}" + ("" if ok else
                                                       f": {detail}"))
        self.failed += not ok


def kernel_source(exe, call, tmp):
    """The program `tiledispatch kernel` writes for a call (the default
    rules) and its TD_NAME, or (None, None) after a FAIL line."""
    cu = os.path.join(tmp, "prog.cu")
    p = subprocess.run([exe, "kernel", call, "-o", cu],
                       capture_output=True, text=True,
                       env=dict(os.environ, TILEDISPATCH_RULES=""))
    if p.returncode != 0:
        print(f"FAIL tiledispatch kernel exited {p.returncode}: " + p.stderr)
        return None, None
    with open(cu) as f:
        src = f.read()
    return src, re.search(r'TD_NAME\[\] = "([^"]*)"', src).group(1)


def paths(exe, call):
    """The SKIP, FAIL, usage and tolerance paths of one program."""
    expect = Expect()

    with tempfile.TemporaryDirectory() as tmp:
        src, name = kernel_source(exe, call, tmp)
        if src is None:
            return 1
        if NOT_EMULATED.search(src) or "#define TD_OP 0 " not in src or \
                "float *" not in src:
            print(f"FAIL {call}: not an emulated float32 sum")
            return 1
        inc = precompile(tmp)
        prog, err = compile_program(src, "prog", tmp, inc)
        strict, err2 = compile_program(src, "strict", tmp, inc,
                                       ["-DTD_TOL_SCALE=0"])
        if prog is None or strict is None:
            print("FAIL g++:\n" + (err or err2)[:2000])
            return 1

        def env(**kw):
            e = {k: v for k, v in os.environ.items()
                 if not k.startswith("TD_EMU_")}
            e.update(kw)
            return e

        rc, line, _ = run_program(prog, [], env())
        expect("exact data passes", rc == 0 and line.startswith(
            f"PASS {name} max_err="), f"exit {rc}: {line}")
        for var, val, reason in (
                ("TD_EMU_DEVICES", "0", "cudaGetDeviceCount found none"),
                ("TD_EMU_DEVICE_ERROR", "cudaErrorInsufficientDriver",
                 "cudaErrorInsufficientDriver: CUDA driver version is "
                 "insufficient for CUDA runtime version"),
                ("TD_EMU_DEVICE_ERROR", "cudaErrorNoDevice",
                 "cudaErrorNoDevice: no CUDA-capable device is detected"),
                ("TD_EMU_LAUNCH_ERROR", "cudaErrorNoKernelImageForDevice",
                 "cudaErrorNoKernelImageForDevice: no kernel image is "
                 "available for execution on the device"),
                ("TD_EMU_LAUNCH_ERROR", "cudaErrorInsufficientDriver",
                 "cudaErrorInsufficientDriver: CUDA driver version is "
                 "insufficient for CUDA runtime version")):
            rc, line, _ = run_program(prog, [], env(**{var: val}))
            expect(f"{var}={val}: SKIP, exit 77",
                   rc == 77 and line == f"SKIP {name}: no CUDA device "
                   f"({reason})", f"exit {rc}: {line}")
        rc, line, _ = run_program(prog, [], env(
            TD_EMU_LAUNCH_ERROR="cudaErrorLaunchFailure"))
        expect("a launch failure that is not about the device: FAIL, exit 1",
               rc == 1 and line.startswith(f"FAIL {name} CUDA error "
                                           "cudaErrorLaunchFailure"),
               f"exit {rc}: {line}")
        for bad in (["--data", "fuzzy"], ["--seed", "x"], ["--seed"],
                    ["--frobnicate"]):
            rc, line, err = run_program(prog, bad, env())
            expect(f"{' '.join(bad)}: usage, exit 2",
                   rc == 2 and line == "" and "usage:" in err,
                   f"exit {rc}: {line} {err}")
        rc, line, _ = run_program(prog, ["--data", "random"], env())
        e1 = max_err(line)
        expect("random data passes with a rounding error",
               rc == 0 and line.startswith(f"PASS {name} max_err=")
               and " data=random seed=0x9e3779b97f4a7c15 " in line
               and e1 is not None and e1 > 0, f"exit {rc}: {line}")
        rc, line2, _ = run_program(prog, ["--data=random", "--seed=7"], env())
        expect("--data=random --seed=7: another input, seed printed",
               rc == 0 and " data=random seed=0x7 " in line2
               and line2.split(" data=")[0] != line.split(" data=")[0],
               f"exit {rc}: {line2}")
        rc, line, _ = run_program(strict, ["--data", "exact"], env())
        expect("zero tolerance, exact data: passes (the sums are exact)",
               rc == 0 and line == f"PASS {name} max_err=0",
               f"exit {rc}: {line}")
        rc, line, _ = run_program(strict, ["--data", "random"], env())
        expect("zero tolerance, random data: FAIL, exit 1",
               rc == 1 and line.startswith(f"FAIL {name} round=0 instance=")
               and line.endswith("data=random seed=0x9e3779b97f4a7c15"),
               f"exit {rc}: {line}")
        # The accumulator starting at 1 instead of 0: exact data makes the
        # check ==, so the error of 1 shows in the first round.
        init = re.search(r"(\w+_ptr\[0\] = )0\.0+e\+00f;",
                         src[src.find("/* The emitted body"):])
        if init is None:
            expect("the body starts its accumulator at 0", False, "not found")
        else:
            at = src.find("/* The emitted body") + init.start()
            one, err = compile_program(
                src[:at] + init.group(1) + "1.000000e+00f;"
                + src[at + len(init.group(0)):], "one", tmp, inc)
            rc, line, _ = run_program(one, ["--data", "exact"], env())
            expect("accumulator starting at 1 (exact data, tol 0): FAIL",
                   rc == 1 and line.startswith(f"FAIL {name} round=0 ")
                   and " tol=0 " in line, f"exit {rc}: {line}")
    return 1 if expect.failed else 0


def red_paths(exe, max_call, rows_call, inplace_call):
    """Mutants of reduction bodies that the data must catch: a max loop
    that skips its last element (the extreme visits every position over
    the rounds), a body without accum that reads the dst before writing
    it (the dst starts poisoned) and a shared-memory min whose index reads
    the next row (neighbouring rows have distinct extremes).  The programs
    themselves pass in both modes; each mutant must FAIL in both."""
    expect = Expect()
    with tempfile.TemporaryDirectory() as tmp:
        inc = precompile(tmp)
        cases = []
        src, name = kernel_source(exe, max_call, tmp)
        if src is None:
            return 1
        body = src.find("/* The emitted body")
        loop = re.compile(r"(for \(int (\w+) = 0; \2 < )(\d+)(; \+\+\2\))"
                          ).search(src, body)
        init = re.compile(r"\n\s*\w+_ptr\[0\] = -FLT_MAX;").search(src, body)
        if NOT_EMULATED.search(src) or loop is None or init is None:
            print(f"FAIL {max_call}: not an emulated float32 max with an "
                  "initialising store and a loop")
            return 1
        last = int(loop.group(3)) - 1
        # Exact data, one row: round r puts the maximum at position
        # r * TD_POS_STRIDE mod P (P = last + 1), so at the last one in
        # the round r that solves r * stride = last (mod P).
        stride = re.search(r"#define TD_POS_STRIDE (\d+)LL", src)
        stride = int(stride.group(1)) if stride else 1
        at_last = next(r for r in range(last + 1)
                       if r * stride % (last + 1) == last)
        cases.append((name, "max", src, None))
        cases.append((name, "max loop skipping its last element",
                      src[:loop.start()] + loop.group(1) + str(last)
                      + loop.group(4) + src[loop.end():],
                      f"round={at_last} "))
        if not QUICK:
            cases.append((name, "max without accum reading the dst (its "
                          "initialising store dropped)",
                          src[:init.start()] + src[init.end():], "round=0 "))
        src, name2 = kernel_source(exe, rows_call, tmp)
        if src is None:
            return 1
        idx = re.compile(r"A_ptr\[(\w+) \* 32 \+ (\w+)\]").search(
            src, src.find("/* The emitted body"))
        if NOT_EMULATED.search(src) or idx is None or "fminf" not in src:
            print(f"FAIL {rows_call}: not an emulated float32 min of rows "
                  "of 32")
            return 1
        cases.append((name2, "min of rows", src, None))
        if not QUICK:
            cases.append((name2, "min reading the next row",
                          src[:idx.start()]
                          + f"A_ptr[({idx.group(1)} + 1) % 4 "
                          f"* 32 + {idx.group(2)}]" + src[idx.end():],
                          "round=0 "))
        # In place (src and dst one region): the poison must not replace
        # the sources, so a body that does nothing still fails.
        isrc, name3 = kernel_source(exe, inplace_call, tmp)
        if isrc is None:
            return 1
        at = isrc.find("/* The emitted body")
        op, cl = isrc.find("{", at), isrc.find("\n    }\n", at)
        if NOT_EMULATED.search(isrc) or at < 0:
            print(f"FAIL {inplace_call}: not an emulated in-place reduction")
            return 1
        cases.append((name3, "in place", isrc, None))
        cases.append((name3, "in place, the body emptied",
                      isrc[:op + 1] + "\n" + isrc[cl:], "round=0 "))
        for k, (pname, what, text, fail) in enumerate(cases):
            prog, err = compile_program(text, f"m{k}", tmp, inc)
            if prog is None:
                print(f"FAIL g++ ({what}):\n" + err[:2000])
                return 1
            for mode in ("exact", "random"):
                rc, line, _ = run_program(prog, ["--data", mode])
                if fail is None:
                    expect(f"{what} ({mode}): PASS", rc == 0 and
                           line.startswith(f"PASS {pname} max_err="),
                           f"exit {rc}: {line}")
                else:
                    # Random data moves the extremes: any round may fail.
                    tail = fail if mode == "exact" else "round="
                    expect(f"{what} ({mode}): FAIL", rc == 1 and
                           line.startswith(f"FAIL {pname} {tail}"),
                           f"exit {rc}: {line}")
    return 1 if expect.failed else 0


def ewise_paths(exe, call):
    """An elementwise program (float32 exp with a bias region and a named
    scalar scale) must pass, and must FAIL when its tolerance is 0 (random
    data), when the body computes another function, when the body leaves
    elements unwritten (the sentinel) and when the scalar's value differs
    from the reference's."""
    expect = Expect()

    with tempfile.TemporaryDirectory() as tmp:
        src, name = kernel_source(exe, call, tmp)
        if src is None:
            return 1
        # The body's first loop (after the staging).
        body = src.find("/* The emitted body")
        loop = re.compile(r"for \(int (\w+) = 0; \1 < (\d+); \+\+\1\) \{"
                          ).search(src, body if body >= 0 else len(src))
        scal = re.search(r"(const float td_sv_\w+ = td_from_double<float>\()"
                         r"([^)]*)\)", src)
        if NOT_EMULATED.search(src) or "expf(" not in src or loop is None \
                or scal is None:
            print(f"FAIL {call}: not an emulated float32 exp with a loop and "
                  "a named scalar")
            return 1
        inc = precompile(tmp)
        variants = {
            "prog": (src, []),
            "strict": (src, ["-DTD_TOL_SCALE=0"]),
            "exp2": (src.replace("expf(", "exp2f("), []),
            "short": (src[:loop.start()] + loop.group(0).replace(
                f"< {loop.group(2)};", f"< {int(loop.group(2)) - 1};")
                + src[loop.end():], []),
            "scalar": (src[:scal.start()] + scal.group(1) + "0.25)"
                       + src[scal.end():], []),
            "past": (src[:loop.start()] + loop.group(0).replace(
                f"< {loop.group(2)};", f"<= {loop.group(2)};")
                + src[loop.end():], []),
        }
        if QUICK:
            del variants["exp2"], variants["scalar"]
        exes = {}
        for k, (text, flags) in variants.items():
            exes[k], err = compile_program(text, k, tmp, inc, flags)
            if exes[k] is None:
                print(f"FAIL g++ ({k}):\n" + err[:2000])
                return 1
        for mode in ("exact", "random"):
            rc, line, _ = run_program(exes["prog"], ["--data", mode])
            e = max_err(line)
            expect(f"{mode} data passes, with max_ulp and max_err/tol",
                   rc == 0 and line.startswith(f"PASS {name} max_err=")
                   and " max_ulp=" in line and " max_err/tol=" in line
                   and (mode == "exact" or (e is not None and e > 0)),
                   f"exit {rc}: {line}")
        rc, line, _ = run_program(exes["strict"], ["--data", "random"])
        expect("zero tolerance, random data: FAIL", rc == 1 and
               line.startswith(f"FAIL {name} round="), f"exit {rc}: {line}")
        for k, what, tail in (
                ("exp2", "exp2f in place of expf", ""),
                ("short", "the last loop iteration left out",
                 "(the dst sentinel: never written)"),
                ("scalar", "another value for the named scalar", ""),
                ("past", "one loop iteration past the end",
                 "wrote past the end of the buffer")):
            if k not in exes:
                continue
            for mode in ("exact", "random"):
                rc, line, _ = run_program(exes[k], ["--data", mode])
                expect(f"{what} ({mode}): FAIL", rc == 1 and
                       line.startswith(f"FAIL {name} round=") and
                       tail in line, f"exit {rc}: {line}")
    return 1 if expect.failed else 0


def copy_paths(test_exe):
    """The copy programs the unit test tests/cuda/test_kernel_copy.c writes
    (TD_COPY_DUMP; a fake copy variant: global <-> shared at warp and cta
    scope, global -> registers with specials, registers -> global, global
    -> global) must PASS in both data modes; its wrong variants must FAIL in
    both: one store past the region ("written outside the region"), a
    transposed source index and a dropped last store (both "first mismatch
    at" the element, with the paired source element); a body that also
    writes its global source must FAIL ("the buffer must not change"), and
    one that writes a register slot its layout leaves to no element (the
    fake variant ignores layouts) too ("a register slot no element owns")."""
    expect = Expect()
    with tempfile.TemporaryDirectory() as tmp:
        dump = os.path.join(tmp, "dump")
        os.makedirs(dump)
        p = subprocess.run([test_exe], capture_output=True, text=True,
                           env=dict(os.environ, TD_COPY_DUMP=dump))
        if p.returncode != 0:
            print(f"FAIL {test_exe}: exit {p.returncode}\n{p.stdout[-2000:]}")
            return 1
        names = sorted(f[:-3] for f in os.listdir(dump) if f.endswith(".cu"))
        inc = precompile(tmp)
        progs = {}
        for n in names:
            with open(os.path.join(dump, n + ".cu")) as f:
                text = f.read()
            # 16-bit floats: the GPU run's (tests/cuda/gpu-copy.sh); the
            # global -> global program's transposed and dropped stores
            # show nothing the other placements' do not (time).
            if not NOT_EMULATED.search(text) and n not in (
                    "cp_g2g_copy_transpose", "cp_g2g_copy_drop"):
                progs[n] = text
        if QUICK:
            for n in [n for n in progs if re.match(
                    r"cp_(s2g|g2g)_copy_(past|transpose|drop)$", n)]:
                del progs[n]
        # The good g2s program, its body also writing the global source.
        good = progs.get("cp_g2s_copy", "")
        at = good.find("    /* The emitted body")
        if at < 0:
            print("FAIL cp_g2s_copy.cu: no emitted body")
            return 1
        progs["cp_g2s_srcwrite"] = (good[:at] + "    if (td_tid == 0) "
                                    "A_ptr[70] = A_ptr[71];\n" + good[at:])
        wrong = {"_copy_past": "written outside the region",
                 "_copy_transpose": "first mismatch at ",
                 "_copy_drop": "first mismatch at ",
                 "_srcwrite": "the buffer must not change",
                 "cp_g2l_holes": "a register slot no element owns",
                 "cp_g2s_holes": "a hole no element has"}
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            built = dict(zip(sorted(progs), ex.map(
                lambda n: compile_program(progs[n], n, tmp, inc),
                sorted(progs))))
        for n, text in sorted(progs.items()):
            exe, err = built[n]
            if exe is None:
                print(f"FAIL g++ ({n}):\n" + err[:2000])
                return 1
            m = re.search(r'TD_NAME\[\] = "([^"]*)"', text)
            pname = m.group(1) if m else n
            tail = next((t for k, t in wrong.items() if n.endswith(k)), None)
            for mode in ("exact", "random"):
                rc, line, _ = run_program(exe, ["--data", mode])
                if tail is None:
                    expect(f"{n} ({mode}): PASS bit-exact",
                           rc == 0 and line.startswith(
                               f"PASS {pname} max_err=0 bit-exact: "),
                           f"exit {rc}: {line}")
                else:
                    expect(f"{n} ({mode}): FAIL, '{tail}'",
                           rc == 1 and line.startswith(f"FAIL {pname} round=")
                           and tail in line, f"exit {rc}: {line}")
    return 1 if expect.failed else 0


# The stand-in's own mutants for --async-paths: (name, text in
# emu/cuda_runtime.h, its replacement, the checks that must FAIL).
ASYNC_MUTANTS = [
    ("the swizzle's row index from address bits [8, 11)",
     "(((a >> 7) & mask) << 4)", "(((a >> 8) & mask) << 4)",
     ["swizzle_32b", "swizzle_64b", "swizzle_128b", "store"]),
    ("a phase completing on its arrivals alone (tx ignored)",
     "if (m.pending == 0 && m.tx == 0) {", "if (m.pending == 0) {",
     ["mbarrier_phases"]),
    ("out-of-bounds elements left unwritten",
     "memcpy(s, g != NULL ? g : nan, es);",
     "if (g != NULL)\n                memcpy(s, g, es);",
     ["oob_zero", "oob_nan"]),
]


# tma_async.cu --misuse N on the stand-in: what the stand-in must stop on
# (abort), and the words its message must hold.
ASYNC_MISUSE = [
    (1, "a wait on an mbarrier never initialised", "before mbarrier.init"),
    (2, "a TMA load off 128-byte shared alignment", "not 128-byte aligned"),
    (3, "a TMA load through a map never encoded", "did not write"),
    (4, "an arrival beyond the phase's count", "beyond the phase's count"),
]


def async_paths(progs):
    """The hand-written async-copy programs (tests/cuda/emu/*.cu, valid
    CUDA that also runs here) PASS every check on the stand-in; built with
    -DTD_MUTANT_SWIZZLE (their maps encoded with another swizzle mode) they
    FAIL the swizzle checks; and against a stand-in whose swizzle takes the
    row from the wrong address bits, whose mbarrier ignores transaction
    bytes or whose TMA load leaves out-of-bounds elements alone, they FAIL
    the checks each mutant breaks (the last one left out under
    TD_TEST_QUICK).  A program that takes `--misuse N` (ASYNC_MISUSE)
    must be stopped by the stand-in on each mistake, with its reason."""
    expect = Expect()
    mutants = ASYNC_MUTANTS[:2] if QUICK else ASYNC_MUTANTS
    with open(os.path.join(HERE, "emu", "cuda_runtime.h")) as f:
        header = f.read()
    with tempfile.TemporaryDirectory() as tmp:
        inc = precompile(tmp)
        jobs = []  # (label, source, name, include dir, flags, checks to FAIL)
        for k, mut in enumerate(mutants):
            if mut[1] not in header:
                print(f"FAIL the stand-in no longer holds {mut[1]!r}")
                return 1
            d = os.path.join(tmp, f"mut{k}")
            os.makedirs(d)
            with open(os.path.join(d, "cuda_runtime.h"), "w") as f:
                f.write(header.replace(mut[1], mut[2]))
        for prog in progs:
            with open(prog) as f:
                src = f.read()
            base = os.path.splitext(os.path.basename(prog))[0]
            jobs.append((base, src, base, inc, [], None))
            jobs.append((f"{base} with another swizzle mode encoded", src,
                         base + "_mswz", inc, ["-DTD_MUTANT_SWIZZLE"],
                         ["swizzle_32b", "swizzle_64b", "swizzle_128b"]))
            for k, mut in enumerate(mutants):
                jobs.append((f"{base} on a stand-in with {mut[0]}", src,
                             f"{base}_m{k}", os.path.join(tmp, f"mut{k}"), [],
                             mut[3]))
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            built = list(ex.map(lambda j: compile_program(
                j[1], j[2], tmp, j[3], ["-Wno-psabi"] + j[4]), jobs))
        for (label, src, name, _, _, fails), (exe, err) in zip(jobs, built):
            if exe is None:
                print(f"FAIL g++ ({label}):\n" + err[:2000])
                expect.failed += 1
                continue
            try:
                p = subprocess.run([exe], capture_output=True, text=True,
                                   timeout=60)
            except subprocess.TimeoutExpired:
                expect(label, False, "timeout (an mbarrier never completed?)")
                continue
            lines = p.stdout.strip().splitlines() or [""]
            failed = {ln.split()[1].rstrip(":") for ln in lines[:-1]
                      if ln.startswith("FAIL ")}
            if fails is None:
                expect(f"{label}: PASS", p.returncode == 0 and
                       lines[-1].startswith("PASS ") and not failed,
                       f"exit {p.returncode}: " + "; ".join(
                           ln for ln in lines if ln.startswith("FAIL"))
                       + p.stderr[-500:])
                if "--misuse" not in src:
                    continue
                for k, what, words in ASYNC_MISUSE:
                    m = subprocess.run([exe, "--misuse", str(k)],
                                       capture_output=True, text=True,
                                       timeout=60)
                    expect(f"{label} --misuse {k}: stopped on {what}",
                           m.returncode not in (0, 1) and words in m.stderr,
                           f"exit {m.returncode}: {m.stdout.strip()} "
                           f"{m.stderr.strip()[-300:]}")
            else:
                expect(f"{label}: FAIL ({', '.join(fails)})",
                       p.returncode == 1 and lines[-1].startswith("FAIL ")
                       and set(fails) <= failed,
                       f"exit {p.returncode}, failed checks "
                       f"{sorted(failed)}" + p.stderr[-500:])
    return 1 if expect.failed else 0


# A TMA program's mutants: (name, pattern, replacement); each must FAIL.
# The first TMA instruction of the body one row off (its outer
# coordinate + 1), and a swizzled map encoded without its swizzle.
TMA_CALL = re.compile(r"(\n\s*td_tma_\w+_\dd\((?:\w+_ptr[^,]*, )?&\w+, "
                      r"(?:[^,]+, )*?)([^,]+)(, (?:\w+_ptr\b[^)]*)?\);)")
TMA_SWIZZLE = re.compile(r"CU_TENSOR_MAP_SWIZZLE_(32B|64B|128B),")
TMA_SAMPLE = ("tma_g2s_sw128", "tma_s2g_reduce_add")


def tma_mutants(src):
    """[(label, mutated source)] for a generated TMA program."""
    out = []
    m = TMA_CALL.search(src)
    if m:
        out.append(("outer coordinate + 1", src[:m.start(2)] +
                    "(" + m.group(2) + ") + 1" + src[m.end(2):]))
    if TMA_SWIZZLE.search(src):
        out.append(("map encoded without its swizzle",
                    TMA_SWIZZLE.sub("CU_TENSOR_MAP_SWIZZLE_NONE,", src, 1)))
    return out


def tma_programs(exe, cases_dir):
    """Every TMA conformance case (tests/conformance/tma_*.yaml) that
    dispatches to tma_auto or tma_explicit: its program is written (or
    refused for a reason the stand-in cannot run: sm_100, cta_group 2),
    builds against the stand-in and PASSes with exact data and
    with random data (seed 1); each program's mutants (the first TMA
    instruction a row off; a swizzled map encoded without its swizzle)
    FAIL.  Under TD_TEST_QUICK only TMA_SAMPLE runs, and the first mutant
    of the first of them."""
    expect = Expect()
    calls = sorted(glob.glob(os.path.join(cases_dir, "tma_*.yaml")))
    if QUICK:
        calls = [c for c in calls
                 if os.path.splitext(os.path.basename(c))[0] in TMA_SAMPLE]
    with tempfile.TemporaryDirectory() as tmp:
        inc = precompile(tmp)
        jobs = []  # (label, source, name, must pass)
        for call in calls:
            base = os.path.splitext(os.path.basename(call))[0]
            d = subprocess.run([exe, "dispatch", call], capture_output=True,
                               text=True)
            if d.returncode != 0 or d.stdout.strip() not in (
                    "tma_auto", "tma_explicit"):
                continue
            cu = os.path.join(tmp, base + ".cu")
            k = subprocess.run([exe, "kernel", call, "-o", cu],
                               capture_output=True, text=True)
            if k.returncode != 0:
                # sm_100 maps and cta_group 2 (a multicast has its
                # program: --cluster-programs runs it too).
                expect(f"{base}: refused for a reason",
                       ("has no self-checking program yet" in k.stderr and
                        re.search(r"sm_100|cta_group 2|multicast", k.stderr))
                       or "no self-checking program for a cluster launch"
                       in k.stderr,
                       k.stderr.strip()[-300:])
                continue
            with open(cu) as f:
                src = f.read()
            jobs.append((base, src, base, True))
            if QUICK and base != TMA_SAMPLE[0]:
                continue
            for i, (what, msrc) in enumerate(tma_mutants(src)):
                if QUICK and i > 0:
                    break
                jobs.append((f"{base} with {what}", msrc, f"{base}_m{i}",
                             False))
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            built = list(ex.map(lambda j: compile_program(
                j[1], j[2], tmp, inc, ["-Wno-psabi"]), jobs))
        for (label, _, _, good), (prog, err) in zip(jobs, built):
            if prog is None:
                expect(f"{label}: builds", False, err[:2000])
                continue
            for args in (["--data", "exact"],
                         ["--data", "random", "--seed", "1"]):
                rc, line, stderr = run_program(prog, args)
                if good:
                    expect(f"{label} {' '.join(args)}: PASS",
                           rc == 0 and line.startswith("PASS "),
                           f"exit {rc}: {line} {stderr[-300:]}")
                else:
                    expect(f"{label} {' '.join(args)}: FAIL",
                           rc == 1 and line.startswith("FAIL "),
                           f"exit {rc}: {line} {stderr[-300:]}")
        if not jobs:
            expect("some TMA program was written", False, "none")
    return 1 if expect.failed else 0


def cluster_programs(exe):
    """The cluster-launch programs of tests/cuda/gpu-cluster.sh (its
    prepare writes them: every dsmem case and every TMA multicast, and its
    mutants): each program PASSes on the stand-in (a cluster's CTAs run
    together there) with exact data and with random data (seed 1), each
    mutant FAILs in both.  None may be refused.  Under TD_TEST_QUICK two
    programs and one mutant run."""
    expect = Expect()
    with tempfile.TemporaryDirectory() as tmp:
        prep = os.path.join(tmp, "prep")
        p = subprocess.run(["bash", os.path.join(HERE, "gpu-cluster.sh"),
                            "prepare", prep], capture_output=True, text=True,
                           env=dict(os.environ, TILEDISPATCH=exe))
        expect("gpu-cluster.sh prepare", p.returncode == 0,
               p.stdout + p.stderr)
        if p.returncode != 0:
            return 1
        with open(os.path.join(prep, "refused.txt")) as f:
            refused = f.read().strip()
        expect("no cluster case refused", refused == "", refused)
        inc = precompile(tmp)
        jobs = []  # (name, source, must pass)
        for kind, good in (("progs", True), ("mutants", False)):
            names = sorted(glob.glob(os.path.join(prep, kind, "*.cu")))
            if QUICK:
                names = names[:2] if good else names[:1]
            for cu in names:
                with open(cu) as f:
                    jobs.append((os.path.basename(cu)[:-3], f.read(), good))
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            built = list(ex.map(lambda j: compile_program(
                j[1], j[0], tmp, inc, ["-Wno-psabi"]), jobs))
        for (name, src, good), (prog, err) in zip(jobs, built):
            expect(f"{name}: emulated", NOT_EMULATED.search(src) is None,
                   "the stand-in cannot run it")
            if prog is None:
                expect(f"{name}: builds", False, err[:2000])
                continue
            for args in (["--data", "exact"],
                         ["--data", "random", "--seed", "1"]):
                rc, line, stderr = run_program(prog, args)
                want = "PASS" if good else "FAIL"
                ok = rc == (0 if good else 1) and line.startswith(want + " ")
                # A mutant the GPU's checked mode traps on (TD_CHECKED:
                # a rank outside the cluster, a size not 16 x n, a barrier
                # in another CTA) the stand-in refuses as misuse: it
                # aborts with its reason ("emu: ...").
                if not good and not ok:
                    ok = rc == -6 and "emu: " in stderr
                    want = "FAIL or the stand-in's misuse abort"
                expect(f"{name} {' '.join(args)}: {want}", ok,
                       f"exit {rc}: {line} {stderr[-300:]}")
        expect("some cluster program was written", bool(jobs), "none")
    return 1 if expect.failed else 0


# The gemm programs whose random data the stand-in computes exactly.
EXACT_RANDOM = re.compile(r"^#define (TD_GM_INT|TD_EMU_FP8_STORAGE) 1\b",
                          re.M)


def gemm_programs(exe):
    """The gemm programs of tests/cuda/gpu-gemm.sh (its prepare writes
    every gemm conformance and golden case's program, and its mutants: B
    words swapped, A words swapped, D's zeroing dropped, D started from C
    at beta 0, four of the extension signatures): each program PASSes on
    the stand-in (whose mma.sync helpers compute each lane's D from the
    warp's registers) with exact data and with random data (seed 1), each
    mutant FAILs in both.  Under
    TD_TEST_QUICK three programs and two mutants run."""
    expect = Expect()
    with tempfile.TemporaryDirectory() as tmp:
        prep = os.path.join(tmp, "prep")
        p = subprocess.run(["bash", os.path.join(HERE, "gpu-gemm.sh"),
                            "prepare", prep], capture_output=True, text=True,
                           env=dict(os.environ, TILEDISPATCH=exe))
        expect("gpu-gemm.sh prepare", p.returncode == 0,
               p.stdout[-2000:] + p.stderr)
        if p.returncode != 0:
            return 1
        inc = precompile(tmp)
        jobs = []  # (name, source, must pass)
        for kind, good in (("progs", True), ("mut", False)):
            names = sorted(glob.glob(os.path.join(prep, kind, "gemm_*.cu")) +
                           glob.glob(os.path.join(prep, kind,
                                                  "golden-gemm_*.cu")))
            if QUICK:
                names = names[:3] if good else names[:2]
            for cu in names:
                with open(cu) as f:
                    jobs.append((os.path.basename(cu)[:-3], f.read(), good))
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            built = list(ex.map(lambda j: compile_program(
                j[1], j[0], tmp, inc), jobs))
        for (name, src, good), (prog, err) in zip(jobs, built):
            expect(f"{name}: emulated", NOT_EMULATED.search(src) is None,
                   "the stand-in cannot run it")
            if prog is None:
                expect(f"{name}: builds", False, err[:2000])
                continue
            for args in (["--data", "exact"],
                         ["--data", "random", "--seed", "1"]):
                rc, line, stderr = run_program(prog, args)
                want = "PASS" if good else "FAIL"
                ok = rc == (0 if good else 1) and line.startswith(want + " ")
                # Random data must be inexact, except where the stand-in
                # is exact: int32 accumulators, and the 8-bit floats'
                # products summed in float.
                if good and "random" in args and not EXACT_RANDOM.search(src):
                    ok = ok and (max_err(line) or 0.0) > 0.0
                expect(f"{name} {' '.join(args)}: {want}", ok,
                       f"exit {rc}: {line} {stderr[-300:]}")
        expect("gemm programs were written",
               sum(1 for j in jobs if j[2]) >= (3 if QUICK else 85),
               f"{len(jobs)} programs and mutants")
    return 1 if expect.failed else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--sample", action="store_true")
    ap.add_argument("--gen", action="store_true")
    ap.add_argument("--paths", action="store_true")
    ap.add_argument("--ewise-paths", action="store_true")
    ap.add_argument("--red-paths", action="store_true")
    ap.add_argument("--copy-paths", action="store_true")
    ap.add_argument("--async-paths", action="store_true")
    ap.add_argument("--tma-programs", action="store_true")
    ap.add_argument("--cluster-programs", action="store_true")
    ap.add_argument("--gemm-programs", action="store_true")
    ap.add_argument("rest", nargs="+")
    args = ap.parse_args()
    if args.async_paths:
        return async_paths(args.rest)
    if args.cluster_programs:
        if len(args.rest) != 1:
            ap.error("--cluster-programs TILEDISPATCH")
        return cluster_programs(args.rest[0])
    if args.gemm_programs:
        if len(args.rest) != 1:
            ap.error("--gemm-programs TILEDISPATCH")
        return gemm_programs(args.rest[0])
    if args.tma_programs:
        if len(args.rest) != 2:
            ap.error("--tma-programs TILEDISPATCH CASES_DIR")
        return tma_programs(args.rest[0], args.rest[1])
    if args.copy_paths:
        if len(args.rest) != 1:
            ap.error("--copy-paths TEST_KERNEL_COPY")
        return copy_paths(args.rest[0])
    if args.red_paths:
        if len(args.rest) != 4:
            ap.error("--red-paths TILEDISPATCH MAX_CALL.yaml ROWS_CALL.yaml "
                     "INPLACE_CALL.yaml")
        return red_paths(*args.rest)
    if args.ewise_paths:
        if len(args.rest) != 2:
            ap.error("--ewise-paths TILEDISPATCH CALL.yaml")
        return ewise_paths(args.rest[0], args.rest[1])
    if args.paths:
        if len(args.rest) != 2:
            ap.error("--paths TILEDISPATCH CALL.yaml")
        return paths(args.rest[0], args.rest[1])
    if args.gen:
        if len(args.rest) not in (2, 3):
            ap.error("--gen TILEDISPATCH CASES_DIR [GOLDEN_DIR]")
        with tempfile.TemporaryDirectory() as d:
            if not gen(args.rest[0], args.rest[1],
                       args.rest[2] if len(args.rest) > 2 else None, d,
                       args.j):
                return 1
            return check(d, [], args.j, args.sample)
    return check(args.rest[0], args.rest[1:], args.j, args.sample)


if __name__ == "__main__":
    sys.exit(main())
