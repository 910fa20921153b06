#!/usr/bin/env python3
"""Shows that the architecture checks fail when they should.

check_layers.py and check_sources.py print "holds" on a tree that keeps the
rules; that proves nothing unless they also fail on a tree that breaks
them.  This script builds a small tree laid out like the real one (the six
library layers, the umbrella, tools/ with a program generator and a command
line, python/src/ with an extension, tests/ that compile a library file
again) with meson, runs check_layers.py on it clean, then once per planted
fault, and expects exit 1 with a message that names the planted files:

- a circle of calls between the two files of tools/kernel/;
- a circle of calls between two files of one library layer (model/);
- an upward call (core -> registry), an upward include (core -> model);
- two headers of one layer that include each other;
- the Python extension calling into tools/, including tools' header, and
  including a layer's internal header.

Then check_sources.py on a tree with a file over 1,200 lines, files that
do not open with a comment saying what they hold, and the same faults where
the rule does not look (tests/, build directories, subprojects/,
bench/gpu/results/).

usage: test_plants.py CHECK_DIR MESON [ARGS...]
(CHECK_DIR holds the two checkers; MESON is the meson command.)
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = None
MESON = None

# ---- the synthetic layered tree -------------------------------------------

MESON_BUILD = """\
project('mini', 'c', default_options : ['default_library=static'])
fs = import('fs')
py = get_option('py')
inc = []
libs = {}
foreach l : [['core', ['core/a.c']],
             ['model', ['model/m1.c', 'model/m2.c']],
             ['codegen', ['codegen/g.c']],
             ['predicates', ['predicates/p.c']],
             ['variants', ['variants/v.c']],
             ['registry', ['registry/r.c']]]
  inc += [l[0]]
  if fs.is_dir(l[0] / 'include')
    inc += [l[0] / 'include']
  endif
  extra = []
  if l[0] == 'registry'
    extra = [configure_file(input : 'registry/gen.c.in', output : 'gen.c',
                            copy : true)]
  endif
  libs += {l[0] : static_library('td_' + l[0], l[1], extra,
                                 include_directories : include_directories(inc),
                                 implicit_include_directories : false)}
endforeach
all_libs = []
foreach l : ['registry', 'variants', 'predicates', 'codegen', 'model', 'core']
  all_libs += [libs[l]]
endforeach
public = include_directories('include', 'core/include', 'registry/include')
kinc = include_directories('tools/kernel/include')
kernel = static_library('tdkernel', 'tools/kernel/k1.c', 'tools/kernel/k2.c',
  include_directories : [include_directories(inc), public, kinc])
executable('cli', 'tools/cli.c', link_with : [kernel] + all_libs,
  include_directories : [public, kinc])
if py
  subdir('python/src')
endif
subdir('tests')
"""

FILES = {
    "meson_options.txt":
        "option('py', type : 'boolean', value : true)\n",
    "python/src/meson.build":
        "shared_module('_core', 'tiledispatch/_core.c', name_prefix : '',\n"
        "  link_with : [kernel] + all_libs, include_directories : public)\n",
    "tests/meson.build":
        "# a test target compiles a library file again, with a plant of its\n"
        "# own: targets defined under tests/ are not the program's\n"
        "executable('t', 't.c', '../model/m1.c', c_args : ['-DIN_TEST'],\n"
        "  include_directories : include_directories('../core', '../model'),\n"
        "  link_with : all_libs)\n",
    "tests/t.c":
        "int td__model_m1(void);\n"
        "int main(void) { return td__model_m1(); }\n",
    "core/include/tiledispatch/td_core.h":
        "/* The public core header of the synthetic tree. */\n"
        "int td_core_one(void);\n",
    "core/td_internal.h":
        "/* The internal core header of the synthetic tree. */\n"
        "int td__core_two(void);\n",
    "core/a.c":
        "#include \"tiledispatch/td_core.h\"\n#include \"td_internal.h\"\n"
        "int td_core_one(void) { return 1; }\n"
        "int td__core_two(void) { return 2; }\n",
    "model/model.h":
        "#include \"td_internal.h\"\n"
        "int td__model_m1(void);\nint td__model_m2(void);\n",
    "model/m1.c":
        "#include \"model.h\"\n"
        "#ifdef IN_TEST\nint td_registry_go(void);\n#endif\n"
        "int td__model_m1(void) {\n"
        "#ifdef IN_TEST\n    return td_registry_go();\n#endif\n"
        "    return td__core_two();\n}\n",
    "model/m2.c":
        "#include \"model.h\"\n"
        "int td__model_m2(void) { return td__model_m1() + td_core_one(); }\n",
    "codegen/g.c": "int td__codegen_g(void) { return 0; }\n",
    "predicates/p.c": "int td__pred_p(void) { return 0; }\n",
    "variants/v.c": "int td__variant_v(void) { return 0; }\n",
    "registry/include/tiledispatch/td_registry.h":
        "int td_registry_go(void);\n",
    "registry/r.c":
        "#include \"tiledispatch/td_registry.h\"\n#include \"model.h\"\n"
        "int td__registry_table(void);\n"
        "int td_registry_go(void) {\n"
        "    return td__model_m2() + td__registry_table();\n}\n",
    "registry/gen.c.in": "int td__registry_table(void) { return 3; }\n",
    "include/tiledispatch.h":
        "#include \"tiledispatch/td_core.h\"\n"
        "#include \"tiledispatch/td_registry.h\"\n",
    "tools/kernel/include/tiledispatch/td_kernel.h":
        "int td_kernel_k1(void);\nint td__k2(void);\n",
    "tools/kernel/k1.c":
        "#include \"tiledispatch.h\"\n#include \"tiledispatch/td_kernel.h\"\n"
        "int td_kernel_k1(void) { return td__k2() + td_registry_go(); }\n",
    "tools/kernel/k2.c":
        "#include \"tiledispatch/td_kernel.h\"\n"
        "int td__k2(void) { return 1; }\n",
    "tools/cli.c":
        "#include \"tiledispatch.h\"\n#include \"tiledispatch/td_kernel.h\"\n"
        "int main(void) { return td_kernel_k1(); }\n",
    "python/src/tiledispatch/_core.c":
        "#include \"tiledispatch.h\"\n"
        "int PyInit__core(void);\n"
        "int PyInit__core(void) { return td_registry_go(); }\n",
}


def write(root, files):
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as fh:
            fh.write(text)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def layered(changes, py=True):
    """Builds the synthetic tree with CHANGES over it and returns (exit
    status, output) of check_layers.py."""
    with tempfile.TemporaryDirectory(prefix="td-arch-") as tmp:
        src = os.path.join(tmp, "src")
        files = dict(FILES)
        files["meson.build"] = MESON_BUILD
        for path, text in changes.items():
            if text.startswith("+"):
                files[path] = files.get(path, "") + text[1:]
            else:
                files[path] = text
        write(src, files)
        build = os.path.join(tmp, "build")
        setup = run(MESON + ["setup", build, src, "-Dpy=%s" %
                             ("true" if py else "false")])
        if setup.returncode != 0:
            raise SystemExit("meson setup failed:\n" + setup.stdout +
                             setup.stderr)
        comp = run(MESON + ["compile", "-C", build])
        if comp.returncode != 0:
            raise SystemExit("the synthetic tree does not build:\n" +
                             comp.stdout + comp.stderr)
        res = run([sys.executable, os.path.join(HERE, "check_layers.py"),
                   src, build])
        return res.returncode, res.stdout + res.stderr


FAILED = []


def expect(what, status, out, want_status, must, lines=None):
    """MUST: strings that one violation line must all contain."""
    errs = [l for l in out.splitlines()
            if re.match(r"(layering|sources)\b", l)
            and not re.match(r"\w+: (note:|\d+ violations?\b)", l)]
    ok = status == want_status
    for group in must:
        if not any(all(s in l for s in group) for l in errs):
            ok = False
    if lines is not None and len(errs) != lines:
        ok = False
    print("%s: %s" % ("ok" if ok else "FAILED", what))
    if not ok:
        FAILED.append(what)
        print("  exit %d (wanted %d); output:" % (status, want_status))
        print("  " + out.replace("\n", "\n  "))


def check_layering():
    s, out = layered({})
    expect("a clean tree holds (python built)", s, out, 0,
           [["layering holds", "python 1", "tools 3", "registry 2"]], 1)
    s, out = layered({}, py=False)
    expect("a clean tree without the extension holds and says so", s, out,
           0, [["layering holds"]], 1)
    if "no object of the Python extension" not in out:
        FAILED.append("the missing extension is not named")
        print("FAILED: the missing extension is not named:\n" + out)

    s, out = layered({"tools/kernel/k2.c":
                      "+int td__k2b(void) { return td_kernel_k1(); }\n"})
    expect("a circle between tools/kernel/k1.c and k2.c", s, out, 1,
           [["cycle", "layer tools", "tools/kernel/k1.c",
             "tools/kernel/k2.c", "td__k2", "td_kernel_k1"]], 1)

    s, out = layered({"model/m1.c":
                      "+int td__m1b(void) { return td__model_m2(); }\n"})
    expect("a circle inside the model layer", s, out, 1,
           [["cycle", "layer model", "model/m1.c", "model/m2.c"]], 1)

    s, out = layered({"core/a.c":
                      "+int td_registry_go(void);\n"
                      "int td__core_up(void) { return td_registry_go(); }\n"})
    expect("an upward call core -> registry", s, out, 1,
           [["core/a.c (layer core) uses td_registry_go of registry/r.c "
             "(layer registry)"],
            ["cycle", "core/a.c", "registry/r.c"]])

    s, out = layered({"core/stray.h": "#include \"model.h\"\n"})
    expect("an upward include core -> model", s, out, 1,
           [["core/stray.h:1:", "\"model.h\"", "layer model"]], 1)

    s, out = layered({"codegen/x.h": "#include \"y.h\"\n",
                      "codegen/y.h": "#include \"x.h\"\n"})
    expect("an include cycle inside the codegen layer", s, out, 1,
           [["include cycle", "codegen/x.h -> codegen/y.h -> codegen/x.h"]],
           1)

    s, out = layered({"python/src/tiledispatch/_core.c":
                      "+int td__k2(void);\n"
                      "int td__py_k(void) { return td__k2(); }\n"})
    expect("the extension calls into tools/", s, out, 1,
           [["python/src/tiledispatch/_core.c (layer python) uses td__k2 "
             "of tools/kernel/k2.c (layer tools)"]], 1)

    s, out = layered({"python/src/tiledispatch/extra.h":
                      "#include \"tiledispatch/td_kernel.h\"\n"
                      "#include \"model.h\"\n"
                      "#include \"tiledispatch/td_core.h\"\n"})
    expect("the extension includes tools' header and an internal one", s,
           out, 1,
           [["python/src/tiledispatch/extra.h:1:", "td_kernel.h",
             "layer tools"],
            ["python/src/tiledispatch/extra.h:2:", "model.h", "internal"]],
           2)


# ---- the source hygiene check ---------------------------------------------

def check_hygiene():
    long_c = "/* A file that is too long by one line. */\n" + \
        "int x;\n" * 1200
    just_c = "// Exactly as long as allowed, and says so.\n" + \
        "int y;\n" * 1199
    files = {
        "core/long.c": long_c,
        "core/just.c": just_c,
        "core/bare.c": "#include <stdio.h>\n/* Too late for a comment. */\n",
        "core/banner.h": "/* x */\nint z;\n",
        "core/guard.h": "#pragma once\n/* A comment after code. */\n",
        "core/good.h": "\n/*\n * The good header: what it holds.\n */\n",
        "scripts/good.py": "#!/usr/bin/env python3\n"
                           "\"\"\"Does a thing and says so here.\"\"\"\n"
                           "import os\n",
        "scripts/comment.py": "# Holds the helpers of the scripts.\n"
                              "import os\n",
        "scripts/code.py": "import os\n\"\"\"Not a docstring at all.\"\"\"\n",
        "python/src/pkg/stub.pyi": "def f() -> int: ...\n",
        "tests/big.c": "int t;\n" * 5000,
        "python/tests/test_x.py": "import os\n",
        "build/x.c": "int b;\n",
        "out/meson-info/intro.json": "{}\n",
        "out/gen.c": "int g;\n",
        "subprojects/lib/y.c": "int s;\n",
        "bench/gpu/results/r.py": "x = 1\n",
        "bench/gpu/gen.py": "\"\"\"Generates the benchmark's code.\"\"\"\n",
    }
    with tempfile.TemporaryDirectory(prefix="td-src-") as tmp:
        write(tmp, files)
        res = run([sys.executable, os.path.join(HERE, "check_sources.py"),
                   tmp])
    out = res.stdout + res.stderr
    expect("long files and files without an opening comment", res.returncode,
           out, 1,
           [["core/long.c: 1201 lines, over 1200"],
            ["core/bare.c: does not open with a comment"],
            ["core/banner.h: does not open with a comment"],
            ["core/guard.h: does not open with a comment"],
            ["scripts/code.py: does not open with a docstring"],
            ["python/src/pkg/stub.pyi: does not open with a docstring"]], 6)
    with tempfile.TemporaryDirectory(prefix="td-src-") as tmp:
        write(tmp, {k: v for k, v in files.items()
                    if k in ("core/just.c", "core/good.h", "scripts/good.py",
                             "scripts/comment.py", "tests/big.c")})
        res = run([sys.executable, os.path.join(HERE, "check_sources.py"),
                   tmp])
    expect("a tree that keeps both habits", res.returncode,
           res.stdout + res.stderr, 0, [["sources: 4 files"]], 1)


def main():
    global HERE, MESON
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    HERE, MESON = sys.argv[1], sys.argv[2:]
    check_hygiene()
    check_layering()
    if FAILED:
        print("%d check%s failed" % (len(FAILED),
                                     "" if len(FAILED) == 1 else "s"))
        return 1
    print("every planted fault was found, and nothing else")
    return 0


if __name__ == "__main__":
    sys.exit(main())
