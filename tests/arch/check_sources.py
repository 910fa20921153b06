#!/usr/bin/env python3
"""Checks two habits of every source file outside the tests.

Every C source (.c, .h, .h.in, .cu) and Python source (.py, .pyi) of the
tree, except those of a tests/ folder (tests/, python/tests/), of a build
directory (one holding meson-info/, meson-private/, pyvenv.cfg or
CMakeCache.txt, or a top-level folder named build*), of subprojects/, of
bench/gpu/results/ and of hidden or cache folders:

1. is at most MAX_LINES (1,200) lines long: a file holds one
   responsibility, a few hundred lines;
2. opens with a comment that says what it holds, before any code: a C
   block or line comment, or a Python docstring or # comment, of at least
   MIN_WORDS words (so that an empty or one-word banner does not count).
   A shebang line (and a Python coding line) may precede it.

usage: check_sources.py SRC_ROOT
Exit 0 when every file keeps both, 1 with one line per violation otherwise.
"""
import ast
import os
import re
import sys

MAX_LINES = 1200
MIN_WORDS = 4
C_EXTS = (".c", ".h", ".h.in", ".cu")
PY_EXTS = (".py", ".pyi")
SKIP_DIRS = {"tests", "subprojects", "__pycache__", "node_modules"}
SKIP_PATHS = {os.path.join("bench", "gpu", "results")}
BUILD_MARKERS = ("meson-info", "meson-private", "pyvenv.cfg",
                 "CMakeCache.txt")
CODING = re.compile(r"^#.*coding[:=]")


def sources(root):
    for dirpath, dirs, files in os.walk(root):
        keep = []
        for d in sorted(dirs):
            full = os.path.join(dirpath, d)
            r = os.path.relpath(full, root)
            if d.startswith(".") or d in SKIP_DIRS or r in SKIP_PATHS \
                    or d.endswith(".egg-info"):
                continue
            if dirpath == root and d.startswith("build"):
                continue
            if any(os.path.exists(os.path.join(full, m))
                   for m in BUILD_MARKERS):
                continue
            keep.append(d)
        dirs[:] = keep
        for f in sorted(files):
            if f.endswith(C_EXTS + PY_EXTS):
                yield os.path.join(dirpath, f)


def words(text):
    return len(re.findall(r"[A-Za-z0-9_]+", text))


def c_opening(lines):
    """The text of the opening comment of a C file, or None."""
    i = 0
    if lines and lines[0].startswith("#!"):
        i = 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i == len(lines):
        return None
    first = lines[i].lstrip()
    if first.startswith("/*"):
        text = []
        for line in lines[i:]:
            text.append(line)
            if "*/" in line:
                break
        else:
            return None  # never closed
        body = "\n".join(text)
        return body[body.index("/*") + 2:body.index("*/")].replace("*", " ")
    if first.startswith("//"):
        text = []
        for line in lines[i:]:
            if not line.lstrip().startswith("//"):
                break
            text.append(line.lstrip()[2:])
        return "\n".join(text)
    return None


def py_opening(source, lines):
    """The text of the opening comment or docstring of a Python file, or
    None."""
    i = 0
    while i < len(lines) and i < 2 and (lines[i].startswith("#!")
                                        or CODING.match(lines[i])):
        i += 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i == len(lines):
        return None
    if lines[i].lstrip().startswith("#"):
        text = []
        for line in lines[i:]:
            if not line.lstrip().startswith("#"):
                break
            text.append(line.lstrip()[1:])
        return "\n".join(text)
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    doc = ast.get_docstring(tree, clean=True)
    if doc is None or tree.body[0].lineno != i + 1:
        return None
    return doc


def check(root, errors):
    n = 0
    for path in sources(root):
        n += 1
        r = os.path.relpath(path, root)
        try:
            with open(path, encoding="utf-8") as fh:
                source = fh.read()
        except UnicodeDecodeError:
            errors.append("%s: not UTF-8 text" % r)
            continue
        lines = source.splitlines()
        if len(lines) > MAX_LINES:
            errors.append("%s: %d lines, over %d: split it by "
                          "responsibility" % (r, len(lines), MAX_LINES))
        if path.endswith(PY_EXTS):
            text = py_opening(source, lines)
            kind = "a docstring or # comment"
        else:
            text = c_opening(lines)
            kind = "a comment"
        if text is None or words(text) < MIN_WORDS:
            errors.append("%s: does not open with %s that says what it "
                          "holds" % (r, kind))
    return n


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    errors = []
    n = check(os.path.abspath(sys.argv[1]), errors)
    for e in errors:
        print("sources: " + e)
    if errors:
        print("sources: %d violation%s in %d files" % (
            len(errors), "" if len(errors) == 1 else "s", n))
        return 1
    if n == 0:
        print("sources: no source file found under %s" % sys.argv[1])
        return 1
    print("sources: %d files, each at most %d lines and opening with what it "
          "holds" % (n, MAX_LINES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
