#!/usr/bin/env python3
"""Checks that the layers depend on each other one way only.

The layers, bottom to top, one folder each:

    core < model < codegen < predicates < variants < registry < include
         < tools | python/src

include/ holds the umbrella header tiledispatch.h.  tools/ (the command
line tools/tiledispatch.c and the program generator tools/kernel/) and
python/src/ (the Python extension) are two front-ends side by side on top:
each may use every layer below it, and neither may use the other.

A layer may use its own files and those of the layers below it; the rule is
checked in three views, all from the tree as built:

1. #include lines ("..." and <...>) of every .c and .h file of every layer
   folder, tools/ and python/src/ included.  A spelling that names no file
   of the tree is a system header and is skipped.  Two extra rules:
   - include/ (the umbrella) names the public headers only (those under
     LAYER/include/tiledispatch/);
   - python/src/ is an extension over the public API: it includes its own
     headers, the umbrella or the public headers only, never a layer's
     internal header
     (model.h, td_internal.h, ...) nor tools' td_kernel.h.  Its meson
     target is compiled against the public include directories alone, so
     this is the rule its build already assumes; today it includes the
     umbrella only.
   The includes between the tree's own files have no cycle either.
2. Symbols: nm on every object file of the layered program: the library
   layers (libtd_LAYER.a), the program generator (libtdkernel.a), the
   command line's object and, when the build has it, the Python
   extension's.  An undefined symbol of one object that another object
   defines is an arrow between the two files.  No arrow runs to a higher
   layer (or between the two front-ends).
3. The arrows between object files have no cycle, within a layer either:
   each file of a layer is a module with its own responsibility, and two
   files that call each other are one module in two pieces.

The object files come from the build directory's own records: meson's
meson-info/intro-targets.json names the targets (those defined outside
tests/, examples/ and bench/ are the program's) and compile_commands.json
names each object of a target (under its private directory TARGET.p/) and
the source it was compiled from, whose folder gives its layer.  A generated
source (default_rules.c) takes the layer of its target.  The Python
extension is built only with -Dpython=true or by pip; when the build has no
object of python/src the output says so, and its includes are still
checked.

usage: check_layers.py SRC_ROOT BUILD_DIR
Exit 0 when the layering holds, 1 with one line per violation otherwise.
"""
import json
import os
import re
import subprocess
import sys

LIB_LAYERS = ["core", "model", "codegen", "predicates", "variants",
              "registry"]
# layer -> (rank, folder relative to the source root)
LAYERS = {name: (i, name) for i, name in enumerate(LIB_LAYERS)}
LAYERS["include"] = (len(LIB_LAYERS), "include")
LAYERS["tools"] = (len(LIB_LAYERS) + 1, "tools")
LAYERS["python"] = (len(LIB_LAYERS) + 1, os.path.join("python", "src"))
ORDER = sorted(LAYERS, key=lambda n: (LAYERS[n][0], n))

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.M)
# targets defined under these folders are not part of the layered program
NOT_PROGRAM = ("tests", "examples", "bench", "subprojects")


def rel(path, root):
    return os.path.relpath(path, root)


def layer_of(path, root):
    """The layer a file of the source tree belongs to, or None."""
    r = rel(os.path.realpath(path), os.path.realpath(root))
    best = None
    for name, (_, folder) in LAYERS.items():
        if r == folder or r.startswith(folder + os.sep):
            if best is None or len(folder) > len(LAYERS[best][1]):
                best = name
    return best


def may_use(me, them):
    """A layer uses its own files and those of strictly lower layers."""
    return me == them or LAYERS[them][0] < LAYERS[me][0]


def is_public(path, root):
    r = rel(path, root).split(os.sep)
    if r == ["include", "tiledispatch.h"]:
        return True
    return (len(r) >= 4 and r[0] in LIB_LAYERS and r[1] == "include"
            and r[2] == "tiledispatch")


def layer_files(root, exts):
    out = []
    for name in ORDER:
        base = os.path.join(root, LAYERS[name][1])
        for dirpath, dirs, files in os.walk(base):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for f in sorted(files):
                if f.endswith(exts):
                    out.append(os.path.join(dirpath, f))
    return out


def header_index(root):
    """Maps an include spelling (a path suffix) to the headers it names."""
    index = {}
    for full in layer_files(root, (".h", ".h.in")):
        name = full[:-3] if full.endswith(".in") else full
        parts = rel(name, root).split(os.sep)
        for i in range(len(parts)):
            index.setdefault("/".join(parts[i:]), []).append(full)
    return index


def check_includes(root, errors):
    index = header_index(root)
    graph = {}
    files = layer_files(root, (".c", ".h"))
    for path in files:
        me = layer_of(path, root)
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        graph.setdefault(path, {})
        for m in INCLUDE.finditer(text):
            quote, spelled = m.groups()
            if "\\n" in spelled:
                continue  # a generated program's text in the generator
            local = os.path.normpath(os.path.join(os.path.dirname(path),
                                                  spelled))
            if quote == '"' and os.path.isfile(local):
                targets = [local]
            else:
                targets = index.get(spelled, [])
            if not targets:
                continue  # a system header
            line = text.count("\n", 0, m.start()) + 1
            where = "%s:%d: " % (rel(path, root), line)
            # The compiler of a layer sees only its own and lower include
            # directories, so a spelling that also names an allowed header
            # reaches that one.
            ok = [t for t in targets if may_use(me, layer_of(t, root))]
            if not ok:
                them = layer_of(targets[0], root)
                errors.append("%sincludes \"%s\" of the layer %s, which %s "
                              "(layer %s) may not use" % (
                                  where, spelled, them,
                                  rel(path, root), me))
                continue
            if me in ("include", "python"):
                # The extension's own headers (python/src/...) are its
                # layer's; what it reaches below must be public.
                pub = [t for t in ok if is_public(t, root) or
                       (me == "python" and layer_of(t, root) == "python")]
                if not pub:
                    errors.append("%sincludes \"%s\" (%s), an internal "
                                  "header: %s uses the public headers only"
                                  % (where, spelled, rel(ok[0], root),
                                     "the umbrella" if me == "include"
                                     else "the Python extension"))
                    continue
                ok = pub
            graph[path].setdefault(ok[0], spelled)
    for cyc in cycles(graph):
        errors.append("include cycle: " + " -> ".join(
            rel(p, root) for p in cyc))
    return len(files)


def cycles(graph):
    """One shortest cycle per strongly connected component of more than
    one node (Tarjan's algorithm, iterative), sorted."""
    index, low, on, stack, comps = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            node, it = work[-1]
            advanced = False
            for t in it:
                if t not in index:
                    index[t] = low[t] = counter[0]
                    counter[0] += 1
                    stack.append(t)
                    on.add(t)
                    work.append((t, iter(sorted(graph.get(t, ())))))
                    advanced = True
                    break
                if t in on:
                    low[node] = min(low[node], index[t])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    t = stack.pop()
                    on.discard(t)
                    comp.append(t)
                    if t == node:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))
    out = []
    for comp in sorted(comps):
        members = set(comp)
        first = comp[0]
        # breadth first from first back to first, inside the component
        prev = {first: None}
        queue = [first]
        found = None
        while queue and found is None:
            nxt = []
            for n in queue:
                for t in sorted(graph.get(n, ())):
                    if t not in members:
                        continue
                    if t == first:
                        found = n
                        break
                    if t not in prev:
                        prev[t] = n
                        nxt.append(t)
                if found is not None:
                    break
            queue = nxt
        path = [first]
        n = found
        while n is not None and n != first:
            path.append(n)
            n = prev[n]
        path = [first] + list(reversed(path[1:])) + [first]
        out.append(path)
    return out


# ---- the objects of the build ---------------------------------------------

def program_objects(root, build, errors):
    """[(object path, source path or None, layer, target name)]."""
    targets_json = os.path.join(build, "meson-info", "intro-targets.json")
    cc_json = os.path.join(build, "compile_commands.json")
    for f in (targets_json, cc_json):
        if not os.path.isfile(f):
            errors.append("%s: missing; is %s a meson build directory?"
                          % (f, build))
            return []
    with open(targets_json, encoding="utf-8") as fh:
        targets = json.load(fh)
    with open(cc_json, encoding="utf-8") as fh:
        commands = json.load(fh)
    real_root = os.path.realpath(root)
    real_build = os.path.realpath(build)
    private = {}  # private directory -> target name
    for t in targets:
        if t.get("type") == "custom" or not t.get("filename"):
            continue
        defined = rel(os.path.realpath(t.get("defined_in", "")), real_root)
        top = defined.split(os.sep)[0]
        if top in NOT_PROGRAM or defined.startswith(".."):
            continue
        private[os.path.realpath(t["filename"][0]) + ".p"] = t["name"]
    objs = []
    for c in commands:
        out = os.path.realpath(os.path.join(c["directory"], c["output"]))
        target = private.get(os.path.dirname(out))
        if target is None:
            continue
        src = os.path.realpath(os.path.join(c["directory"], c["file"]))
        layer = None
        if rel(src, real_root).startswith("..") or \
                not rel(src, real_build).startswith(".."):
            src_name = None  # generated in the build directory
        else:
            src_name = src
            layer = layer_of(src, real_root)
            if layer is None:
                continue  # not a file of a layer
        objs.append([out, src_name, layer, target])
    # A generated source belongs to the layer of its target's other files.
    for o in objs:
        if o[2] is None:
            same = {p[2] for p in objs if p[3] == o[3] and p[2] is not None}
            if len(same) != 1:
                errors.append("%s: generated, and its target %s has no one "
                              "layer" % (rel(o[0], build), o[3]))
                continue
            o[2] = same.pop()
    return [tuple(o) for o in objs if o[2] is not None]


def nm(path):
    out = subprocess.run([os.environ.get("NM", "nm"), "-P", path],
                         check=True, capture_output=True, text=True).stdout
    defs, undefs = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        sym, kind = parts[0], parts[1]
        if kind in ("U", "w", "v"):
            undefs.add(sym)
        elif kind.isupper() and kind not in "UN":
            defs.add(sym)
    return defs, undefs


def check_symbols(root, build, errors):
    objs = program_objects(root, build, errors)
    name = {}
    layer = {}
    defined_by = {}
    undefs = {}
    for out, src, lay, target in objs:
        if not os.path.isfile(out):
            errors.append("%s: not built (target %s)" % (rel(out, build),
                                                         target))
            continue
        name[out] = rel(src, root) if src else \
            "%s (generated, %s)" % (os.path.basename(out), target)
        layer[out] = lay
        d, u = nm(out)
        undefs[out] = u
        for s in d:
            defined_by.setdefault(s, []).append(out)
    present = set(layer.values())
    for lay in LIB_LAYERS + ["tools"]:
        if lay not in present:
            errors.append("layer %s: no object file in %s" % (lay, build))
    edges = {o: {} for o in layer}
    for obj in sorted(undefs):
        for s in sorted(undefs[obj]):
            for target in defined_by.get(s, ()):
                if target == obj:
                    continue
                edges[obj].setdefault(target, s)
                if not may_use(layer[obj], layer[target]):
                    errors.append("%s (layer %s) uses %s of %s (layer %s)"
                                  % (name[obj], layer[obj], s, name[target],
                                     layer[target]))
    for cyc in cycles(edges):
        steps = ["%s uses %s of %s" % (os.path.basename(name[a]),
                                       edges[a][b],
                                       os.path.basename(name[b]))
                 for a, b in zip(cyc, cyc[1:])]
        lays = sorted({layer[o] for o in cyc})
        errors.append("cycle between object files (layer %s): %s (%s)" % (
            " and ".join(lays), " -> ".join(name[o] for o in cyc),
            "; ".join(steps)))
    counts = {lay: sum(1 for o in layer if layer[o] == lay)
              for lay in ORDER}
    return counts


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    root, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    errors = []
    nfiles = check_includes(root, errors)
    counts = check_symbols(root, build, errors)
    if counts.get("python", 0) == 0:
        print("layering: note: this build has no object of the Python "
              "extension (python/src; -Dpython=true or pip builds it): its "
              "includes are checked, its symbols are not")
    for e in errors:
        print("layering: " + e)
    if errors:
        print("layering: %d violation%s" % (len(errors),
                                           "" if len(errors) == 1 else "s"))
        return 1
    print("layering holds: includes of %d files; %d object files (%s); "
          "no arrow upward or between the front-ends, no cycle" % (
              nfiles, sum(counts.values()),
              ", ".join("%s %d" % (k, v) for k, v in counts.items() if v)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
