#!/usr/bin/env python3
"""Prepares, and on a GPU machine runs, the mutant check of the
self-checking programs: one-change mutants of emitted bodies that the
programs' data must catch, including the 16-bit ones the CPU stand-in
cannot run.

usage: gpu_mutants.py prepare TILEDISPATCH OUTDIR
       gpu_mutants.py run OUTDIR RESULTDIR

prepare (on the build machine) writes OUTDIR/NAME.cu for each case below
(the program as written, and its mutants) and OUTDIR/cases.tsv (file,
expected PASS or FAIL).  run (on the GPU machine: needs nvcc and python3
only) compiles each for the GPU's arch (sm_90a; -arch may be changed with
$NVCC_ARCH), runs it with --data exact and --data random, and writes
RESULTDIR/mutants.txt: a line per program and mutant (its modes below it),
then "programs: P of Q pass every mode" and "mutants: K of M caught".  A
program must PASS in every mode; a mutant is caught when ANY mode does not
pass (a FAIL line, a crash, a hang) or it does not compile.  Exit 0 when
every program passed and every mutant was caught.
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# (name, op, dtype, src shape, dst shape, accum, scope, threads, dispatch)
CALLS = [
    ("sum_f16_32", "sum", "float16", [32], [1], False, "thread", 1, None),
    ("sum_bf16_32", "sum", "bfloat16", [32], [1], False, "thread", 1, None),
    ("sum_f16_32_accum", "sum", "float16", [32], [1], True, "thread", 1,
     None),
    ("max_f16_16", "max", "float16", [16], [1], False, "thread", 1, None),
    ("max_f32_16", "max", "float32", [16], [1], False, "thread", 1, None),
    ("min_f32_rows", "min", "float32", [4, 32], [4], False, "warp", 32,
     "shared"),
]


def call_yaml(op, dtype, src, dst, accum, scope, threads, dispatch):
    shared = dispatch is not None
    lines = [f"op: {op}", "target: cuda", "arch: sm_90a", f"scope: {scope}",
             f"launch: {{threadIdx.x: {threads}}}", "buffers:",
             f"  A: {{scope: {'shared' if shared else 'local'}, dtype: "
             f"{dtype}, shape: {src}}}",
             f"  B: {{scope: {'shared' if shared else 'local'}, dtype: "
             f"{dtype}, shape: {dst}}}",
             "dst: B", "src: A", "axes: [-1]",
             f"accum: {'true' if accum else 'false'}"]
    if dispatch:
        lines.append(f"dispatch: {dispatch}")
    return "\n".join(lines) + "\n"


def mutants(name, src):
    """(suffix, text) of each one-change mutant of the program's body."""
    at = src.find("/* The emitted body")
    body_end = src.find("\n    }\n", at)
    out = []

    def sub(suffix, pattern, repl):
        m = re.compile(pattern).search(src, at, body_end)
        if m is not None:
            out.append((suffix, src[:m.start()] + m.expand(repl)
                        + src[m.end():]))

    # The accumulator starting at 1 (a float literal 0 in the body).
    sub("init1", r"= (__float2half\(|__float2bfloat16\()?0\.0+e\+00f",
        r"= \g<1>1.000000e+00f")
    # The loop stopping one short.
    m = re.compile(r"(for \(int (\w+) = 0; \2 < )(\d+)(; \+\+\2\))").search(
        src, at, body_end)
    if m is not None:
        out.append(("short", src[:m.start()] + m.group(1)
                    + str(int(m.group(3)) - 1) + m.group(4) + src[m.end():]))
    # The initialising store dropped (accum: false).
    sub("noinit", r"\n\s*B_ptr\[0\] = (?![^;]*A_ptr)[^;]*;", "")
    # fmaxf -> fminf (and back).
    if "fmaxf(" in src[at:body_end]:
        out.append(("fminf", src[:at] + src[at:body_end].replace(
            "fmaxf(", "fminf(") + src[body_end:]))
    # The next row's data.
    sub("nextrow", r"A_ptr\[(\w+) \* 32 \+ (\w+)\]",
        r"A_ptr[(\1 + 1) % 4 * 32 + \2]")
    return out


def prepare(exe, outdir):
    os.makedirs(outdir, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, *args in CALLS:
            y = os.path.join(tmp, name + ".yaml")
            with open(y, "w") as f:
                f.write(call_yaml(*args))
            cu = os.path.join(outdir, name + ".cu")
            p = subprocess.run([exe, "kernel", y, "-o", cu],
                               capture_output=True, text=True,
                               env=dict(os.environ, TILEDISPATCH_RULES=""))
            if p.returncode != 0:
                print(f"FAIL tiledispatch kernel {name}: {p.stderr}")
                return 1
            src = open(cu).read()
            rows.append((name + ".cu", "PASS"))
            for suffix, text in mutants(name, src):
                fn = f"{name}-{suffix}.cu"
                with open(os.path.join(outdir, fn), "w") as f:
                    f.write(text)
                rows.append((fn, "FAIL"))
    with open(os.path.join(outdir, "cases.tsv"), "w") as f:
        for fn, want in rows:
            f.write(f"{fn}\t{want}\n")
    print(f"prepared {len(rows)} programs in {outdir}")
    return 0


def run_one(exe, mode):
    """(verdict, line): PASS, FAIL (a FAIL line, a crash or another
    program error), HANG (past 120 s) or SKIP (no usable device)."""
    try:
        r = subprocess.run([exe, "--data", mode], capture_output=True,
                           text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return "HANG", "timeout after 120 s"
    first = (r.stdout.strip().splitlines() or [""])[0]
    if r.returncode == 0 and first.startswith("PASS "):
        return "PASS", first
    if r.returncode == 77:
        return "SKIP", first
    return "FAIL", f"exit {r.returncode}: {first}"


def run(outdir, resdir):
    """A program is right when it PASSes in every mode; a mutant is caught
    when ANY mode does not pass (a FAIL line, a crash, a hang) or it does
    not compile: one mode that catches it is enough, as in the mutation
    suite.  A SKIP (no device) proves nothing either way."""
    os.makedirs(resdir, exist_ok=True)
    nvcc = os.environ.get("NVCC", "nvcc")
    arch = os.environ.get("NVCC_ARCH", "sm_90a")
    lines = []
    progs = [0, 0]    # passed, total
    muts = [0, 0]     # caught, total
    with tempfile.TemporaryDirectory() as tmp:
        for row in open(os.path.join(outdir, "cases.tsv")):
            fn, want = row.split()
            exe = os.path.join(tmp, fn[:-3])
            p = subprocess.run([nvcc, f"-arch={arch}", "-o", exe,
                                os.path.join(outdir, fn)],
                               capture_output=True, text=True)
            if p.returncode != 0:
                verdicts = [("nvcc", "FAIL", "nvcc failed: "
                             + p.stderr.strip()[:300])]
            else:
                verdicts = [(mode,) + run_one(exe, mode)
                            for mode in ("exact", "random")]
            if want == "PASS":
                ok = all(v == "PASS" for _, v, _ in verdicts)
                progs[0] += ok
                progs[1] += 1
                tag = "ok    " if ok else "BAD   "
            else:
                skipped = any(v == "SKIP" for _, v, _ in verdicts)
                ok = not skipped and any(v != "PASS" for _, v, _ in verdicts)
                muts[0] += ok
                muts[1] += 1
                tag = "caught" if ok else "MISSED"
            lines.append(f"{tag} {fn} (want {want})")
            lines += [f"         {mode}: {v}: {line}"
                      for mode, v, line in verdicts]
    lines.append(f"programs: {progs[0]} of {progs[1]} pass every mode")
    lines.append(f"mutants: {muts[0]} of {muts[1]} caught (a mutant is "
                 "caught when any mode fails or it does not compile)")
    with open(os.path.join(resdir, "mutants.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if progs[0] == progs[1] and muts[0] == muts[1] else 1


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "prepare":
        return prepare(sys.argv[2], sys.argv[3])
    if len(sys.argv) == 4 and sys.argv[1] == "run":
        return run(sys.argv[2], sys.argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
