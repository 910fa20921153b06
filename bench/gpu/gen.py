#!/usr/bin/env python3
"""Generates the emitted-code half of the GPU reduction benchmark.

    bench/gpu/gen.py TILEDISPATCH CALLS_DIR OUT.cuh

(cases in the order of cases.txt beside CALLS_DIR, then any others by name)

With BENCH_CONFIG set (e.g. "one_block_per_sm: true"), every call gets
`config: {BENCH_CONFIG}` for the default's emission (a call with a config
of its own is an error): the benchmark then measures the body a user gets
with that config.

For every call file NAME.yaml in CALLS_DIR (a CTA-scope float32 row
reduction of a shared [R, C] tile A into a shared vector B), runs

    TILEDISPATCH emit NAME.yaml --lang cuda           (the default choice)
    TILEDISPATCH emit NAME.yaml + `dispatch: shared`  (the `shared` variant,
                                                     in place of any other)

and pastes each body, unchanged, into a __device__ function
`td_default_NAME` / `td_shared_NAME` (A_ptr, B_ptr), with the preludes
(includes, helpers) merged at file scope.  BENCH_CASES(X) lists the cases:
X(NAME, R, C, THREADS, OP, "default variant") with OP 0 sum, 1 max, 2 min.
Nothing is written by hand, so the benchmark measures what the tool emits.
"""
import os
import re
import subprocess
import sys
import tempfile

OPS = {"sum": 0, "max": 1, "min": 2}


def die(msg):
    sys.stderr.write("gen.py: error: %s\n" % msg)
    sys.exit(2)


def run(tool, args):
    p = subprocess.run([tool] + args, capture_output=True, text=True)
    if p.returncode != 0:
        die("%s %s failed (exit %d):\n%s" % (tool, " ".join(args),
                                             p.returncode, p.stderr))
    return p.stdout


def split_emit(text):
    """emit prints the prelude, a blank line, then the body; a body with
    no prelude comes alone.  The prelude is made of blocks separated by
    blank lines (the includes, then each helper), each starting with '#'
    or a helper definition ('__device__', '__forceinline__', 'static',
    'template'); the body is what follows the last of them."""
    heads = ("#", "static", "__device__", "__forceinline__", "template")
    blocks = text.split("\n\n")
    n = 0
    while n < len(blocks) - 1 and blocks[n].startswith(heads):
        n += 1
    if n == 0:
        return "", text
    return "\n\n".join(blocks[:n]) + "\n", "\n\n".join(blocks[n:])


def field(text, key, path):
    m = re.search(r"^%s:\s*(.+?)\s*$" % key, text, re.M)
    if m is None:
        die("%s: no '%s:' line" % (path, key))
    return m.group(1)


def parse_call(path):
    with open(path) as f:
        text = f.read()
    op = field(text, "op", path)
    if op not in OPS:
        die("%s: op %s is not sum, max or min" % (path, op))
    m = re.search(r"threadIdx\.x:\s*(\d+)", text)
    s = re.search(r"A:\s*\{[^}]*shape:\s*\[\s*(\d+)\s*,\s*(\d+)\s*\]", text)
    if m is None or s is None:
        die("%s: expected launch {threadIdx.x: N} and A of shape [R, C]"
            % path)
    return text, OPS[op], int(s.group(1)), int(s.group(2)), int(m.group(1))


def main():
    if len(sys.argv) != 4:
        die("usage: gen.py TILEDISPATCH CALLS_DIR OUT.cuh")
    tool, calls, out = sys.argv[1:]
    if not os.access(tool, os.X_OK):
        die("%s is not an executable (build the tool first)" % tool)
    names = sorted(n[:-5] for n in os.listdir(calls) if n.endswith(".yaml"))
    order = os.path.join(os.path.dirname(os.path.abspath(calls)), "cases.txt")
    if os.path.exists(order):
        with open(order) as f:
            listed = [l.strip() for l in f
                      if l.strip() and not l.startswith("#")]
        missing = [n for n in listed if n not in names]
        if missing:
            die("%s names cases with no call file: %s"
                % (order, ", ".join(missing)))
        names = listed + [n for n in names if n not in listed]
    if not names:
        die("no call files in %s" % calls)
    preludes, funcs, cases = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            path = os.path.join(calls, name + ".yaml")
            text, op, rows, cols, threads = parse_call(path)
            forced = os.path.join(tmp, name + ".yaml")
            with open(forced, "w") as f:
                # a call of its own dispatch (layouts/calls) gives way
                f.write(re.sub(r"^dispatch:.*\n?", "", text, flags=re.M)
                        .rstrip("\n") + "\ndispatch: shared\n")
            extra = os.environ.get("BENCH_CONFIG", "").strip()
            if extra:
                if re.search(r"^config:", text, re.M):
                    die("%s has a config; BENCH_CONFIG would replace it"
                        % path)
                path = os.path.join(tmp, name + ".config.yaml")
                text = text.rstrip("\n") + "\nconfig: {%s}\n" % extra
                with open(path, "w") as f:
                    f.write(text)
            variant = run(tool, ["dispatch", path]).strip()
            for kind, p in (("shared", forced), ("default", path)):
                pre, body = split_emit(run(tool, ["emit", p, "--lang",
                                                  "cuda"]))
                # once each: an include line, a helper (a block)
                for block in pre.split("\n\n"):
                    parts = (block.splitlines(keepends=True)
                             if block.startswith("#") else [block])
                    for part in parts:
                        part = part.strip("\n") + "\n"
                        if part.strip() and part not in preludes:
                            preludes.append(part)
                body = "".join("  " + l if l.strip() else l
                               for l in body.splitlines(keepends=True))
                funcs.append(
                    "/* %s: %s */\n__device__ __forceinline__ void "
                    "td_%s_%s(float *A_ptr, float *B_ptr)\n{\n%s}\n\n"
                    % (name, "tiledispatch emit, dispatch: shared"
                       if kind == "shared" else
                       "tiledispatch emit (default: %s)" % variant,
                       kind, name, body))
            cases.append('X(%s, %d, %d, %d, %d, "%s")'
                         % (name, rows, cols, threads, op, variant))
    with open(out, "w") as f:
        f.write("/* Generated by bench/gpu/gen.py from %s with %s; do not "
                "edit. */\n#pragma once\n" % (calls, os.path.basename(tool)))
        f.write("".join(preludes) + "\n")
        f.write("".join(funcs))
        f.write("#define BENCH_CASES(X) \\\n    "
                + " \\\n    ".join(cases) + "\n")


if __name__ == "__main__":
    main()
