#!/usr/bin/env python3
"""Tests of the docs checker itself, so the docs suite cannot pass
vacuously:

- fixtures/pass.md uses every form of the convention and must pass, with
  the expected number of commands run (none may be skipped silently), and
  the commands must not see TILEDISPATCH_* variables nor touch the tree;
- fixtures/fail.md must fail, and every case in it (wrong output, wrong
  exit status, timeout, unmarked shell block, block without a language,
  `$ ` in a text block, text before the first command, missing script in
  a norun block, missing path, broken link, unclosed block) must be
  reported at its own line;
- fixtures/update.md, copied, is rewritten by --update into the expected
  text, after which it passes; the check without --update never rewrites.

    test_check_docs.py SRC BUILD
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "check_docs.py")
FIXTURES = os.path.join(HERE, "fixtures")

UPDATED = """# A document whose outputs --update rewrites

```console
$ echo new output
new output
$ false    # exit 1
$ (echo first; echo second) | head -1
first

$ echo kept
...
$ printf 'a\\nb\\n'
a
b
```

  ```console
  $ echo indented
  indented
  ```
"""

# marker in fail.md -> (fragment the checker's report must hold, offset of
# the reported line from the marker's line)
FAIL_CASES = {
    "case: wrong-output": ("output differs", 0),
    "case: bad-status": ("exit status: expected 3, got 0", 0),
    "case: status-and-output": ("exit status: expected 0, got 1", 0),
    "case: timeout": ("timed out after 1 s", 0),
    "case: unmarked-shell": ("has text before its first '$ ' command", 0),
    "case: no-language": ("code block without a language", -1),
    "case: dollar-in-text": ("a '$ ' command in a ```text block is never run",
                             0),
    "case: text-before-command": ("has text before its first '$ ' command",
                                  0),
    "case: norun-missing-script": ("'scripts/no-such-script' does not exist",
                                   0),
    "case: missing-path": ("`registry/no_such_file.c` does not exist", 0),
    "case: broken-link": ("link target 'no-such-page.md' does not exist", 0),
    "case: unclosed": ("code block is never closed", -1),
}

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"FAIL: {what}")


def run(args, env=None):
    p = subprocess.run([sys.executable, CHECKER] + args, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=120)
    return p.returncode, p.stdout


def line_of(path, marker):
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if marker in line:
                return n
    raise SystemExit(f"marker {marker!r} not in {path}")


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    src, build = (os.path.abspath(a) for a in sys.argv[1:])
    base = ["--root", src, "--build", build]

    # 1. The passing fixture, with a TILEDISPATCH_ variable to hide.
    env = dict(os.environ, TILEDISPATCH_RULES="/nonexistent/rules.yaml")
    rc, out = run(base + [os.path.join(FIXTURES, "pass.md")], env)
    check(rc == 0, f"pass.md must pass (exit {rc}):\n{out}")
    check("docs: 14 commands run in 1 of 1 files, 0 failed" in out,
          f"pass.md: expected 14 commands run:\n{out}")
    check(not os.path.exists(os.path.join(src, "fixture-copy.yaml")),
          "pass.md's commands wrote into the source tree")

    # 2. The failing fixture, on an empty tree (nothing to copy): every
    # case reported at its line.
    empty = tempfile.mkdtemp(prefix="td-docs-empty-")
    small = ["--root", empty, "--build", build]
    fail_md = os.path.join(FIXTURES, "fail.md")
    rc, out = run(small + ["--timeout", "1", fail_md])
    check(rc == 1, f"fail.md must fail with exit 1 (exit {rc}):\n{out}")
    lines = out.splitlines()
    for marker, (fragment, offset) in FAIL_CASES.items():
        n = line_of(fail_md, marker) + offset
        at = f"fail.md:{n}:"
        hit = [i for i, l in enumerate(lines) if at in l]
        # The report of a command is its header line and the lines after.
        text = "\n".join("\n".join(lines[i:i + 12]) for i in hit)
        check(hit and fragment in text,
              f"fail.md line {n} ({marker}): expected a report holding "
              f"{fragment!r}; got:\n{out}")
    check("docs: 4 commands run in 1 of 1 files, 4 failed" in out,
          f"fail.md: expected 4 commands run, 4 failed:\n{out}")
    check("-expected" in out and "+actual" in out,
          f"fail.md: the report must show a diff:\n{out}")

    # 3. --update rewrites a copy; the plain check never rewrites.
    with tempfile.TemporaryDirectory() as tmp:
        doc = os.path.join(tmp, "update.md")
        shutil.copy(os.path.join(FIXTURES, "update.md"), doc)
        with open(doc, encoding="utf-8") as f:
            before = f.read()
        rc, out = run(small + [doc])
        check(rc == 1, f"update.md must fail before --update:\n{out}")
        with open(doc, encoding="utf-8") as f:
            check(f.read() == before, "the check without --update rewrote")
        rc, out = run(small + ["--update", doc])
        with open(doc, encoding="utf-8") as f:
            after = f.read()
        check(after == UPDATED, "update.md after --update:\n" + after)
        rc, out = run(small + [doc])
        check(rc == 0, f"update.md must pass after --update:\n{out}")

    shutil.rmtree(empty)
    if failures:
        print(f"{len(failures)} check(s) of the docs checker failed")
        return 1
    print("the docs checker passes, fails and updates as it should")
    return 0


if __name__ == "__main__":
    sys.exit(main())
