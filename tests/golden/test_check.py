#!/usr/bin/env python3
"""Tests of the golden checker itself (check.py), on a copy of one case in a
temporary directory: the copy passes; an orphaned .expected (no call file)
fails and is named; a changed .expected fails; a missing one fails.  The
same for an IR case (NAME.ir, rendered by tests/codegen/ir_golden beside
TILEDISPATCH), and an .ir file with two argument lines or an unknown
instruction fails with the reason.

usage: test_check.py TILEDISPATCH CASES_DIR
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def check(exe, d):
    p = subprocess.run([sys.executable, os.path.join(HERE, "check.py"), exe,
                        d], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def main():
    exe, cases = sys.argv[1], sys.argv[2]
    name = sorted(f[:-5] for f in os.listdir(cases) if f.endswith(".yaml"))[0]
    failed = 0

    def expect(what, ok, out):
        nonlocal failed
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
        if not ok:
            print("    " + out.replace("\n", "\n    "))
            failed += 1

    with tempfile.TemporaryDirectory() as d:
        for ext in (".yaml", ".expected"):
            shutil.copy(os.path.join(cases, name + ext), d)
        rc, out = check(exe, d)
        expect(f"a copy of {name} passes", rc == 0 and "1 passed, 0 failed"
               in out, out)

        orphan = os.path.join(d, "gone.expected")
        shutil.copy(os.path.join(d, name + ".expected"), orphan)
        rc, out = check(exe, d)
        expect("an orphaned .expected fails and is named",
               rc == 1 and "FAIL gone.expected: orphaned" in out
               and "1 failed" in out, out)
        os.remove(orphan)

        exp = os.path.join(d, name + ".expected")
        with open(exp) as f:
            text = f.read()
        with open(exp, "w") as f:
            f.write(text + "changed\n")
        rc, out = check(exe, d)
        expect("a changed .expected fails", rc == 1 and f"FAIL {name}" in out,
               out)
        os.remove(exp)
        rc, out = check(exe, d)
        expect("a missing .expected fails", rc == 1 and "--update" in out, out)

    ir = sorted(f[:-3] for f in os.listdir(cases) if f.endswith(".ir"))[0]
    with tempfile.TemporaryDirectory() as d:
        for ext in (".ir", ".expected"):
            shutil.copy(os.path.join(cases, ir + ext), d)
        rc, out = check(exe, d)
        expect(f"a copy of the IR case {ir} passes",
               rc == 0 and "1 passed, 0 failed" in out, out)
        exp = os.path.join(d, ir + ".expected")
        with open(exp) as f:
            text = f.read()
        with open(exp, "w") as f:
            f.write(text.replace("T.ptx.mma(", "T.ptx.mma_(", 1))
        rc, out = check(exe, d)
        expect("a changed IR .expected fails", rc == 1 and f"FAIL {ir}" in out
               and "T.ptx.mma_(" in out, out)
        src = os.path.join(d, ir + ".ir")
        with open(src) as f:
            args = [l for l in f if not l.startswith("#")][0]
        with open(src, "w") as f:
            f.write(args + args)
        rc, out = check(exe, d)
        expect("an .ir file with two argument lines fails",
               rc == 1 and "want one line of arguments, got 2" in out, out)
        with open(src, "w") as f:
            f.write("mma m16n8k4.f16 1 1 1 D\n")
        rc, out = check(exe, d)
        expect("an .ir file naming an unknown instruction fails",
               rc == 1 and "exited 2" in out and "bad mma case" in out, out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
