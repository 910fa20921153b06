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

usage: check.py TILEDISPATCH CASES_DIR [--update] [NAME...]
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


def main():
    exe, cases = sys.argv[1], sys.argv[2]
    update = "--update" in sys.argv[3:]
    only = [a for a in sys.argv[3:] if not a.startswith("--")]
    files = os.listdir(cases)
    names = sorted(f[:-5] for f in files if f.endswith(".yaml"))
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
