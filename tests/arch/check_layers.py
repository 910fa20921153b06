#!/usr/bin/env python3
"""Checks that the library's layers depend on each other one way only.

Two views of the same rule, both from the tree as built:

1. #include lines: every file of a layer folder (and of tools/) includes
   only headers of its own layer or of the layers below it; only tools/
   includes the umbrella include/tiledispatch.h.
2. Symbols: for every object file of the library (nm on BUILD/libtd_*.a),
   each undefined symbol that another object defines is an arrow between
   the two files.  No arrow runs from a lower layer to a higher one, and
   the arrows between files have no cycle (within a layer either).

usage: check_layers.py SRC_ROOT BUILD_DIR
Exit 0 when the layering holds, 1 with one line per violation otherwise.
"""
import os
import re
import subprocess
import sys

LAYERS = ["core", "model", "codegen", "predicates", "variants", "registry",
          "tools"]
RANK = {name: i for i, name in enumerate(LAYERS)}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path, root):
    rel = os.path.relpath(path, root)
    top = rel.split(os.sep)[0]
    if top == "include":
        return "tools"  # the umbrella: only the top may use it
    return top if top in RANK else None


def header_index(root):
    """Maps an include spelling to the header files it can name."""
    index = {}
    for layer in LAYERS + ["include"]:
        base = os.path.join(root, layer)
        for dirpath, _, files in os.walk(base):
            for f in files:
                if not f.endswith(".h"):
                    continue
                full = os.path.join(dirpath, f)
                index.setdefault(f, []).append(full)
                if os.path.basename(dirpath) == "tiledispatch":
                    index.setdefault("tiledispatch/" + f, []).append(full)
    index.setdefault("tiledispatch.h", []).append(
        os.path.join(root, "include", "tiledispatch.h"))
    return index


def check_includes(root, errors):
    index = header_index(root)
    for layer in LAYERS + ["include"]:
        for dirpath, _, files in os.walk(os.path.join(root, layer)):
            for f in sorted(files):
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, f)
                me = layer_of(path, root)
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
                for m in INCLUDE.finditer(text):
                    spelled = m.group(1)
                    # a generated-code string in the kernel generator
                    if "\\n" in spelled:
                        continue
                    local = os.path.join(dirpath, spelled)
                    targets = [local] if os.path.exists(local) else \
                        index.get(spelled, [])
                    if not targets:
                        continue  # a system header spelled with quotes
                    them = layer_of(targets[0], root)
                    if them is not None and RANK[them] > RANK[me]:
                        line = text.count("\n", 0, m.start()) + 1
                        errors.append(
                            "%s:%d: %s (layer %s) includes \"%s\" of the "
                            "higher layer %s" % (os.path.relpath(path, root),
                                                 line, f, me, spelled, them))


def nm(path):
    out = subprocess.run(["nm", "-A", path], check=True,
                         capture_output=True, text=True).stdout
    defs, undefs = {}, {}
    for line in out.splitlines():
        m = re.match(r"^[^:]*:([^:]+):\s*(?:[0-9a-fA-F]+)?\s+(\w)\s+(\S+)$",
                     line)
        if not m:
            continue
        obj, kind, sym = m.groups()
        if kind == "U":
            undefs.setdefault(obj, set()).add(sym)
        elif kind in "TDRBC":
            defs.setdefault(obj, set()).add(sym)
    return defs, undefs


def check_symbols(build, errors):
    objs = {}  # object -> layer
    defined_by = {}
    undefs = {}
    for layer in LAYERS[:-1]:
        lib = os.path.join(build, "libtd_%s.a" % layer)
        if not os.path.exists(lib):
            errors.append("%s: not built" % lib)
            continue
        d, u = nm(lib)
        for obj, syms in d.items():
            objs[obj] = layer
            for s in syms:
                defined_by[s] = obj
        for obj, syms in u.items():
            objs[obj] = layer
            undefs[obj] = syms
    edges = {o: set() for o in objs}
    for obj, syms in undefs.items():
        for s in syms:
            target = defined_by.get(s)
            if target is None or target == obj:
                continue
            edges[obj].add(target)
            if RANK[objs[target]] > RANK[objs[obj]]:
                errors.append("%s (layer %s) uses %s of %s (higher layer %s)"
                              % (obj, objs[obj], s, target, objs[target]))
    # cycles between object files
    state = {}

    def visit(o, stack):
        state[o] = 1
        stack.append(o)
        for t in sorted(edges[o]):
            if state.get(t) == 1:
                cyc = stack[stack.index(t):] + [t]
                errors.append("cycle: " + " -> ".join(cyc))
            elif t not in state:
                visit(t, stack)
        stack.pop()
        state[o] = 2

    for o in sorted(edges):
        if o not in state:
            visit(o, [])
    return len(objs)


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    root, build = sys.argv[1], sys.argv[2]
    errors = []
    check_includes(root, errors)
    n = check_symbols(build, errors)
    for e in errors:
        print("layering: " + e)
    if errors:
        return 1
    print("layering holds: %d object files in %d layers, includes and symbols "
          "run one way" % (n, len(LAYERS) - 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
