#!/usr/bin/env python3
"""Golden-file tests: call -> chosen variant -> TIRx and CUDA text.

Each case is tests/golden/cases/NAME.yaml (a call file) with its expected
output in NAME.expected:

    == variant
    local
    == tirx
    <tiledispatch emit NAME.yaml --lang tirx>
    == cuda
    <tiledispatch emit NAME.yaml --lang cuda>

An IR case is NAME.ir instead of NAME.yaml: IR built directly (a node
whose variant does not exist yet), one line of arguments for the
tests/codegen/ir_golden program (lines starting with # are comments),
whose output is the .expected file (variant "(ir)").  The program is
found beside TILEDISPATCH in the build tree (build/tests/codegen/
ir_golden), or given with --ir-hook PATH.

usage: check.py TILEDISPATCH CASES_DIR [--update] [--ir-hook PATH] [NAME...]
--update rewrites the .expected files from the current output (review the
diff before committing).  An orphaned NAME.expected (no NAME.yaml uses it)
is a failure: delete it, or restore its call file.
"""
import difflib
import os
import subprocess
import sys


def run(exe, args):
    p = subprocess.run([exe] + args, capture_output=True, text=True,
                       env=dict(os.environ, TILEDISPATCH_RULES=""))
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {p.returncode}:\n"
                           f"{p.stderr}")
    return p.stdout


def render(exe, call):
    variant = run(exe, ["dispatch", call]).strip()
    tirx = run(exe, ["emit", call, "--lang", "tirx"])
    cuda = run(exe, ["emit", call, "--lang", "cuda"])
    return f"== variant\n{variant}\n== tirx\n{tirx}== cuda\n{cuda}"


def render_ir(hook, path):
    """The output of the IR hook for the arguments of an .ir case."""
    with open(path) as f:
        lines = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    if len(lines) != 1:
        raise RuntimeError(f"{path}: want one line of arguments, "
                           f"got {len(lines)}")
    p = subprocess.run([hook] + lines[0].split(), capture_output=True,
                       text=True)
    if p.returncode != 0:
        raise RuntimeError(f"ir_golden {lines[0]} exited {p.returncode}:\n"
                           f"{p.stderr}")
    return p.stdout


def main():
    args = sys.argv[1:]
    hook = None
    if "--ir-hook" in args:
        i = args.index("--ir-hook")
        hook = args[i + 1]
        del args[i:i + 2]
    exe, cases = args[0], args[1]
    if hook is None:
        hook = os.path.join(os.path.dirname(os.path.abspath(exe)), "tests",
                            "codegen", "ir_golden")
    update = "--update" in args[2:]
    only = [a for a in args[2:] if not a.startswith("--")]
    files = os.listdir(cases)
    ir_cases = {f[:-3] for f in files if f.endswith(".ir")}
    names = sorted({f[:-5] for f in files if f.endswith(".yaml")} | ir_cases)
    orphans = sorted(f for f in files if f.endswith(".expected")
                     and f[:-len(".expected")] not in names)
    if only:
        names = [n for n in names if n in only]
    if not names:
        print("no golden cases found", file=sys.stderr)
        return 1
    failed = 0
    for f in orphans:
        print(f"FAIL {f}: orphaned (no {f[:-len('.expected')]}.yaml uses it; "
              "delete it or restore the call file)")
        failed += 1
    for name in names:
        call = os.path.join(cases, name + ".yaml")
        exp_path = os.path.join(cases, name + ".expected")
        try:
            if name in ir_cases:
                got = render_ir(hook, os.path.join(cases, name + ".ir"))
            else:
                got = render(exe, call)
        except RuntimeError as e:
            print(f"FAIL {name}: {e}")
            failed += 1
            continue
        if update:
            with open(exp_path, "w") as f:
                f.write(got)
            print(f"updated {name}")
            continue
        try:
            with open(exp_path) as f:
                want = f.read()
        except FileNotFoundError:
            print(f"FAIL {name}: no {exp_path} (run with --update)")
            failed += 1
            continue
        if got != want:
            failed += 1
            print(f"FAIL {name}")
            sys.stdout.writelines(difflib.unified_diff(
                want.splitlines(True), got.splitlines(True),
                exp_path, "actual"))
        else:
            print(f"ok   {name}")
    print(f"{len(names) + len(orphans) - failed} passed, {failed} failed"
          + (f" ({len(orphans)} orphaned .expected)" if orphans else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
