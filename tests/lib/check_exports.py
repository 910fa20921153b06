#!/usr/bin/env python3
"""Checks that the shared library exports exactly the public API.

1. Every function declared in a public header (file scope, not a typedef)
   is declared with TD_API in front of it (except those declared with
   TD_PLUGIN_EXPORT: a plugin defines them, td_plugin.h).
2. The shared library's dynamic symbol table (nm -D --defined-only) holds
   every one of them, and nothing else: every exported symbol starts with
   td_ (never td__, the internal prefix) and is declared in a public header.

3. With --program EXE (the command line, linked statically with
   --export-dynamic so that plugins can call back into it): EXE exports
   every public function too, and no td__ symbol.

usage: check_exports.py LIBTILEDISPATCH.so [--program EXE]... HEADER_OR_DIR...
(a directory stands for every *.h in it)
Exit 0 when both hold, 1 with one line per violation otherwise.
"""
import glob
import os
import re
import subprocess
import sys

# Symbols the toolchain itself may put into a shared library.
TOOLCHAIN = {"_init", "_fini", "_edata", "_end", "__bss_start"}


def blank(text, start, end):
    """text with [start, end) replaced by spaces, newlines kept."""
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


def strip(text):
    """Blanks comments, the C++ guards and preprocessor lines, keeping every
    other character at its offset."""
    for pat in (r"/\*.*?\*/", r"//[^\n]*",
                r"#\s*ifdef\s+__cplusplus.*?#\s*endif",
                r"^\s*#(?:[^\n]*\\\n)*[^\n]*"):
        while True:
            m = re.search(pat, text, re.S | re.M)
            if m is None or m.end() == m.start():
                break
            text = blank(text, m.start(), m.end())
    return text


def declarations(path):
    """(name, line, has TD_API, offset of the statement) of every function
    declared at file scope in the header."""
    with open(path, encoding="utf-8") as fh:
        raw = fh.read()
    text = strip(raw)
    out = []
    depth, start = 0, 0
    for i, c in enumerate(text):
        if c in "{(":
            depth += 1
        elif c in "})":
            depth -= 1
        elif c == ";" and depth == 0:
            stmt = text[start:i]
            lead = len(stmt) - len(stmt.lstrip())
            body = stmt.strip()
            begin = start + lead
            start = i + 1
            if (not body or "{" in body or
                    re.match(r"(typedef|struct|enum|union)\b", body)):
                continue
            m = re.search(r"\b([A-Za-z_]\w*)\s*\(", body)
            if m is None or m.group(1) in ("__attribute__", "TD_API"):
                continue
            # A function a plugin defines (td_plugin.h), not the library.
            if re.match(r"TD_PLUGIN_EXPORT\b", body):
                continue
            out.append((m.group(1), raw.count("\n", 0, begin) + 1,
                        re.match(r"TD_API\b", body) is not None, begin))
    return out


def exported(lib):
    res = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    syms = set()
    for line in res.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            syms.add(parts[-1].split("@")[0])
    return syms


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    lib, headers, programs = sys.argv[1], [], []
    args = sys.argv[2:]
    while args:
        arg = args.pop(0)
        if arg == "--program" and args:
            programs.append(args.pop(0))
        elif os.path.isdir(arg):
            headers += sorted(glob.glob(os.path.join(arg, "*.h")))
        else:
            headers.append(arg)
    errors = []
    declared = {}
    for h in headers:
        for name, line, has_api, _ in declarations(h):
            declared[name] = "%s:%d" % (h, line)
            if not has_api:
                errors.append("%s:%d: %s is declared without TD_API"
                              % (h, line, name))
    syms = exported(lib)
    for name in sorted(declared):
        if name not in syms:
            errors.append("%s: %s is declared public but %s does not "
                          "export it" % (declared[name], name, lib))
    for s in sorted(syms - TOOLCHAIN):
        if s.startswith("td__") or not s.startswith("td_"):
            errors.append("%s exports %s, which is not public API" % (lib, s))
        elif s not in declared:
            errors.append("%s exports %s, which no public header declares"
                          % (lib, s))
    for exe in programs:
        got = exported(exe)
        for name in sorted(declared):
            if name not in got:
                errors.append("%s does not export %s: a plugin it loads "
                              "cannot call it" % (exe, name))
        for s_ in sorted(got):
            if s_.startswith("td__"):
                errors.append("%s exports the internal %s" % (exe, s_))
    for e in errors:
        print(e)
    if not errors:
        print("%d public functions declared with TD_API, all exported; "
              "%d symbols exported, none other" % (len(declared), len(syms)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
