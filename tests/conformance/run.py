#!/usr/bin/env python3
"""Conformance corpus runner: dispatch check, program generation, nvcc.

Each case is a call file CASES/NAME.yaml whose first lines say what it
must dispatch to and, optionally, the arch its program needs:

    # expect: local
    # arch: sm_100a

Golden cases (tests/golden/cases/NAME.yaml) can be added with --golden DIR;
their expected variant is the `== variant` section of NAME.expected.

usage:
  run.py TILEDISPATCH [--cases DIR]... [--golden DIR] [--out DIR]
         [--compile] [--nvcc PATH] [-j N] [NAME...]

For every case: `tiledispatch dispatch` must print the expected variant,
`tiledispatch kernel` must write the program (to --out DIR/NAME.cu, else a
temporary directory), and with --compile `nvcc -arch=ARCH -c` must compile
it.  With --out, DIR/manifest.tsv lists `name<TAB>variant<TAB>arch` for
scripts/gpu-check.  Exit status: 0 all good, 1 a failure, 77 when
--compile is given and nvcc cannot be found (meson's "skipped").
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

PACKED = {"packed_add_sum", "3input_maxmin"}
DEFAULT_ARCH = "sm_90a"


def read_header(path):
    """The `# expect:` and `# arch:` comments of a call file."""
    expect = arch = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\s*#\s*(expect|arch)\s*:\s*(\S+)\s*$", line)
            if m:
                if m.group(1) == "expect":
                    expect = m.group(2)
                else:
                    arch = m.group(2)
            elif line.strip() and not line.lstrip().startswith("#"):
                break
    return expect, arch


def golden_variant(path):
    """The `== variant` section of a golden .expected file, or None."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError:
        return None
    for i, line in enumerate(lines):
        if line.strip() == "== variant" and i + 1 < len(lines):
            return lines[i + 1].strip() or None
    return None


def collect(args):
    cases = []
    for d in args.cases:
        for f in sorted(os.listdir(d)):
            if f.endswith(".yaml"):
                path = os.path.join(d, f)
                expect, arch = read_header(path)
                cases.append({"name": f[:-5], "path": path, "expect": expect,
                              "arch": arch, "kind": "conformance"})
    if args.golden:
        for f in sorted(os.listdir(args.golden)):
            if f.endswith(".yaml"):
                name = f[:-5]
                path = os.path.join(args.golden, f)
                expect = golden_variant(os.path.join(args.golden,
                                                     name + ".expected"))
                _, arch = read_header(path)
                cases.append({"name": "golden-" + name, "path": path,
                              "expect": expect, "arch": arch,
                              "kind": "golden"})
    if args.names:
        cases = [c for c in cases if c["name"] in args.names]
    return cases


def run_case(c, args, outdir):
    env = dict(os.environ, TILEDISPATCH_RULES="")
    p = subprocess.run([args.exe, "dispatch", c["path"]], capture_output=True,
                       text=True, env=env)
    if p.returncode != 0:
        return False, f"dispatch exited {p.returncode}: " + \
            (p.stderr.strip().splitlines() or [""])[0]
    variant = p.stdout.strip()
    c["variant"] = variant
    if c["expect"] is None and c["kind"] == "conformance":
        return False, "no '# expect: VARIANT' line"
    if c["expect"] is not None and variant != c["expect"]:
        return False, f"dispatched to {variant}, expected {c['expect']}"
    arch = c["arch"] or ("sm_100a" if variant in PACKED else DEFAULT_ARCH)
    c["compile_arch"] = arch
    cu = os.path.join(outdir, c["name"] + ".cu")
    p = subprocess.run([args.exe, "kernel", c["path"], "-o", cu],
                       capture_output=True, text=True, env=env)
    if p.returncode != 0:
        return False, f"kernel exited {p.returncode}: " + p.stderr.strip()
    if args.compile:
        obj = os.path.join(outdir, c["name"] + ".o")
        p = subprocess.run([args.nvcc, "-arch=" + arch, "-c", cu, "-o", obj],
                           capture_output=True, text=True)
        if p.returncode != 0:
            return False, f"nvcc -arch={arch} failed:\n" + \
                "\n".join(p.stderr.strip().splitlines()[:20])
        try:
            os.remove(obj)
        except OSError:
            pass
    return True, f"{variant} ({arch})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("exe")
    ap.add_argument("--cases", action="append", default=[])
    ap.add_argument("--golden")
    ap.add_argument("--out")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--nvcc")
    ap.add_argument("-j", type=int, default=min(4, os.cpu_count() or 1))
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    if not args.cases:
        args.cases = [os.path.dirname(os.path.abspath(__file__))]

    if args.compile:
        nvcc = args.nvcc or shutil.which("nvcc")
        if nvcc is None and os.access("/usr/local/cuda/bin/nvcc", os.X_OK):
            nvcc = "/usr/local/cuda/bin/nvcc"
        if nvcc is None:
            print("SKIP: nvcc not found")
            return 77
        args.nvcc = nvcc

    cases = collect(args)
    if not cases:
        print("no cases found", file=sys.stderr)
        return 1
    tmp = None
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        outdir = args.out
    else:
        tmp = tempfile.TemporaryDirectory()
        outdir = tmp.name
    with concurrent.futures.ThreadPoolExecutor(max(1, args.j)) as ex:
        results = list(ex.map(lambda c: run_case(c, args, outdir), cases))
    failed = 0
    for c, (ok, msg) in zip(cases, results):
        print(f"{'ok  ' if ok else 'FAIL'} {c['name']}: {msg}")
        failed += not ok
    if args.out:
        with open(os.path.join(outdir, "manifest.tsv"), "w") as f:
            for c, (ok, _) in zip(cases, results):
                if ok:
                    f.write(f"{c['name']}\t{c['variant']}\t"
                            f"{c['compile_arch']}\n")
    print(f"{len(cases) - failed}/{len(cases)} cases ok"
          + (" (compiled with nvcc)" if args.compile else ""))
    if tmp is not None:
        tmp.cleanup()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
