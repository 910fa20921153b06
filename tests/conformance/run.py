#!/usr/bin/env python3
"""Conformance corpus runner: dispatch check, program generation, nvcc.

Each case is a call file CASES/NAME.yaml whose first lines say what it
must dispatch to and, optionally, the arch its program needs:

    # expect: local
    # arch: sm_100a

A `# rules: NAME` line runs the case's commands with the overlay
rules/NAME.yaml (`upstream`: TVM's dispatch, where a tiledispatch-only
variant would take the call).
`# expect: none` says that no variant may match: `tiledispatch dispatch`
must exit 1 (the failure table), and a `# error: TEXT` line must appear in
the message of one of the candidates or in the reason why there were none
(`explain --format json`).
`# expect: error` says that the call is refused before any variant is
tried (an op's operand check): exit 2, and the positioned message on
stderr must contain the text of an optional `# error: TEXT` line.  No
program is written for either (they are left out of the manifest).  A
`# note: TEXT` line says that the selected variant's note (what the caller
owns, explain's `note:`) contains TEXT.  A `# access: CHAIN...` line
(copies) lists the PTX memory instructions TVM's code for the call uses
(`ld.global.v4.u32 st.shared.v4.u32`,
`ldmatrix.sync.aligned.m8n8.x4.shared.b16`): the `asm` strings of the
emitted CUDA must hold exactly those instructions (the same set; the
operands aside); `# access: scalar` says that they hold none (plain
element accesses, as TVM's fallback).  A gemm case's access is its
`mma.sync...` instruction, and a `# count: N` line after it says how many
times the body calls it (upstream's issue count).

Without `# arch:`, the packed variants and gemm_async's tcgen05 need
sm_100a, and so does any
program whose text uses the Blackwell-only `.f32x2` instructions (the
packed float32-pair paths of the elementwise variants); everything else
is built for sm_90a.

Golden cases (tests/golden/cases/NAME.yaml) can be added with --golden DIR;
their expected variant is the `== variant` section of NAME.expected.

usage:
  run.py TILEDISPATCH [--cases DIR]... [--golden DIR] [--out DIR]
         [--compile] [--nvcc PATH] [-j N] [--sample] [--sass-only] [--singly]
         [--data exact|random|both] [NAME...]

A NAME may be a shell pattern (`tcgen05_ldst_*`); golden cases are named
`golden-NAME`.

For every case: `tiledispatch dispatch` must print the expected variant,
`tiledispatch kernel` must write the program (to --out DIR/NAME.cu, else a
temporary directory), and with --compile `nvcc -arch=ARCH -c` must compile
it (N jobs at a time; a progress line every 10 programs written and per
nvcc run).  With --out,
DIR/manifest.tsv lists `name<TAB>variant<TAB>arch<TAB>data<TAB>class` for
scripts/gpu-check and tests/cuda/emu.py: data is the comma-separated --data
modes the programs are to be run in (default exact), class the case's
stratum (below).

--sample keeps a stratified sample: every case is dispatched, then one case
per class (variant, exec scope, dtype classes) is kept, and one more for
each (variant, op) pair no kept case covers yet.  The elementwise ops are
sampled more coarsely: one case per (variant, exec scope), then one more
per op and per dtype classes not covered yet.  The dtype classes are
float32, float16, bfloat16, float64, int (int8 to int64) and uint.  Within a class the case whose
name has the smallest SHA-1 is taken: deterministic, and not biased to the
first name in sort order.  The full set is the cuda-full suite's.

With --compile the programs are compiled many to a translation unit
(nvcc_batch.py: byte-identical ones once, the rest grouped by arch and
headers, each in its own namespace with its own file name and lines; a
batch that fails is compiled again program by program, so a failure names
its program).  --singly runs nvcc once per program instead.

--sass-only compiles with `-gencode arch=compute_NNa,code=sm_NNa -cubin`,
the arch's SASS only: one device compilation where -arch=sm_NNa does two
(it also embeds PTX for the generic compute_NN), and no host compilation
(nvcc's front end still parses the host code; cuda-full compiles it).  The cuda suite's sample uses
it; cuda-full and scripts/gpu-check keep -arch.

An op the program generator does not support (`kernel` exits with "is
neither a reduction nor elementwise" or "no reference for the elementwise
op": an op of a plugin, say), a call with a cluster launch that is no
cluster copy or multicast (those have programs) or one with a tensor-memory buffer (sm_100a: no GPU here
runs it; the tmem buffer becomes its base address NAME_taddr), gets a
compile-only program
instead: the emitted body in a kernel that declares the call's buffers and
takes its named scalars as parameters.  Those kernels are compiled together,
one translation unit per arch (each on its own only to name a failure), and
left out of the manifest (running them would check nothing).

Exit status: 0 all good, 1 a failure, 77 when --compile is given and nvcc
cannot be found (meson's "skipped").
"""
import argparse
import concurrent.futures
import fnmatch
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

# nvcc_batch sits beside this file; tests/cuda/emu.py loads this file by
# its path, where the folder is not on sys.path.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nvcc_batch  # noqa: E402

PACKED = {"packed_add_sum", "3input_maxmin"}
# Variants whose instructions exist on sm_100a only (tcgen05.mma).
SM100_VARIANTS = {"tcgen05"}
# Instructions that exist only on sm_100 and later (f32x2 pairs).
SM100_ONLY = re.compile(r"\.f32x2\b")
DEFAULT_ARCH = "sm_90a"


def read_header(path, error_text=False):
    """The `# expect:` and `# arch:` comments of a call file (and, with
    error_text, the text of its `# error:` line, or None)."""
    expect = arch = error = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\s*#\s*(expect|arch)\s*:\s*(\S+)\s*$", line)
            e = re.match(r"\s*#\s*error\s*:\s*(.*?)\s*$", line)
            if m:
                if m.group(1) == "expect":
                    expect = m.group(2)
                else:
                    arch = m.group(2)
            elif e:
                error = e.group(1)
            elif line.strip() and not line.lstrip().startswith("#"):
                break
    return (expect, arch, error) if error_text else (expect, arch)


def read_note(path):
    """The text of a call file's `# note:` line, or None."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\s*#\s*note\s*:\s*(.*?)\s*$", line)
            if m:
                return m.group(1)
            if line.strip() and not line.lstrip().startswith("#"):
                break
    return None


def explain_json(c, args, env):
    """`tiledispatch explain --format json` of a case, parsed (None when it
    does not run)."""
    p = subprocess.run([args.exe, "explain", c["path"], "--format", "json"],
                       capture_output=True, text=True, env=env)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return None


def read_access(path):
    """The instructions of a call file's `# access:` line (a set; empty for
    `scalar`), or None without one."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\s*#\s*access\s*:\s*(.*?)\s*$", line)
            if m:
                toks = m.group(1).split()
                return set() if toks == ["scalar"] else set(toks)
            if line.strip() and not line.lstrip().startswith("#"):
                break
    return None


# A PTX memory instruction at the start of an asm string (its operands
# follow after a space): ld.global.nc.v4.u32, st.shared.u16,
# ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16,
# cp.async.cg.shared.global.L2::128B (guarded: after `@p `),
# tcgen05.ld.sync.aligned.32x32b.x8.b32, tcgen05.cp.cta_group::1.128x256b.
# mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 (gemm) and
# tcgen05.mma.cta_group::1.kind::f16 (gemm_async, after the predicate's
# `setp...; `) are no memory instructions but are what a gemm case's
# access names.
PTX_MEM = re.compile(r'(?:"\s*|@p |; )((?:ld|st|ldmatrix|stmatrix|cp\.async|'
                     r'tcgen05\.ld|tcgen05\.st|tcgen05\.cp|tcgen05\.mma|'
                     r'mma\.sync)'
                     r'\.[A-Za-z0-9_:.]+)')
# A call of a prelude helper that issues mma.sync, at the start of a
# statement of the body (the helper's definition starts with
# __forceinline__).
MMA_CALL = re.compile(r'^\s*td_(?:ptx_mma|tcgen05_mma)_\w+\(', re.M)


def read_count(path):
    """The `# count: N` of a call file (the mma.sync calls its emitted
    code makes: upstream's test_cuda_gemm_mma_codegen_issue_count), or
    None."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\s*#\s*count\s*:\s*(\d+)\s*$", line)
            if m:
                return int(m.group(1))
            if line.strip() and not line.lstrip().startswith("#"):
                break
    return None


def access_error(c, args, env, want):
    """None when the emitted CUDA's PTX memory instructions are `want`,
    else what differs."""
    p = subprocess.run([args.exe, "emit", c["path"], "--lang", "cuda"],
                       capture_output=True, text=True, env=env)
    if p.returncode != 0:
        return f"emit exited {p.returncode}: " + p.stderr.strip()
    got = set(PTX_MEM.findall(p.stdout))
    count = read_count(c["path"])
    if got == want and count is not None:
        n = len(MMA_CALL.findall(p.stdout))
        return None if n == count else \
            f"count: {n} mma.sync calls emitted, TVM's code makes {count}"
    if got == want:
        return None
    show = lambda s: " ".join(sorted(s)) or "scalar"
    return f"access: emitted {show(got)}, TVM's is {show(want)}"


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


def dtype_class(dtype):
    """float32, float16, bfloat16 and float64 are classes of their own; the
    integer types make two, int and uint (the programs differ only in the
    type's name and value range)."""
    if re.fullmatch(r"int\d+", dtype):
        return "int"
    if re.fullmatch(r"uint\d+", dtype):
        return "uint"
    return dtype


def case_class(path, variant):
    """The stratum of a case: variant, exec scope, dtype classes and op,
    read from the call file (top-level `scope:` and `op:`, every
    `dtype:`)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    scope = re.search(r"^scope:\s*([\w.]+)", text, re.M)
    op = re.search(r"^op:\s*(\w+)", text, re.M)
    dtypes = sorted(set(dtype_class(t) for t in
                        re.findall(r"\bdtype:\s*(\w+)", text)))
    return {"variant": variant or "?", "scope": scope.group(1) if scope else "?",
            "dtype": "+".join(dtypes) or "?", "op": op.group(1) if op else "?"}


def class_name(k):
    return f"{k['variant']}/{k['scope']}/{k['dtype']}/{k['op']}"


def stratified(items, name_of, class_of, keys, extra_keys=()):
    """One item per distinct value of `keys` of class_of(item), then one
    more for each value of every tuple in extra_keys not covered yet; within
    a stratum, the item whose name has the smallest SHA-1.  Returns the kept
    items in their original order."""
    def h(it):
        return hashlib.sha1(name_of(it).encode()).hexdigest()

    kept = {}
    for group in (keys,) + tuple(extra_keys):
        covered = {tuple(class_of(kept[n])[k] for k in group) for n in kept}
        best = {}
        for it in items:
            key = tuple(class_of(it)[k] for k in group)
            if key in covered:
                continue
            if key not in best or h(it) < h(best[key]):
                best[key] = it
        for it in best.values():
            kept[name_of(it)] = it
    return [it for it in items if name_of(it) in kept]


# The elementwise ops (15 ops x 2 variants x 4 scopes x many dtype mixes):
# sampled more coarsely than the reductions, so that the sample stays small.
EWISE_OPS = {"zero", "fill", "reciprocal", "sqrt", "exp", "exp2", "log2",
             "silu", "add", "sub", "mul", "fdiv", "maximum", "cast", "fma"}
# Copies (one op, bit-exact programs): one per variant, exec scope and
# dtype class.
COPY_OPS = {"copy"}
STRATA = {
    "reduction": (("variant", "scope", "dtype"), ("variant", "op")),
    "elementwise": (("variant", "scope"), ("op",), ("dtype",)),
    "copy": (("variant", "scope"), ("dtype",)),
}


def family(cls):
    if cls["op"] in COPY_OPS:
        return "copy"
    return "elementwise" if cls["op"] in EWISE_OPS else "reduction"


def sample(items, name_of, class_of):
    """The sample of --sample (and of emu.py): per family, stratified() over
    its STRATA.  Returns (kept items in their order, missing strata)."""
    kept, missing = set(), []
    for fam, strata in STRATA.items():
        sub = [it for it in items if family(class_of(it)) == fam]
        got = stratified(sub, name_of, class_of, strata[0], strata[1:])
        kept.update(name_of(it) for it in got)
        for keys in strata:
            def cover(cs):
                return {tuple(class_of(c)[k] for k in keys) for c in cs}
            missing += sorted(cover(sub) - cover(got))
    return [it for it in items if name_of(it) in kept], missing


def collect(args):
    cases = []
    for d in args.cases:
        for f in sorted(os.listdir(d)):
            if f.endswith(".yaml"):
                path = os.path.join(d, f)
                expect, arch, error = read_header(path, error_text=True)
                cases.append({"name": f[:-5], "path": path, "expect": expect,
                              "arch": arch, "error": error,
                              "kind": "conformance"})
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
        # A name, or a shell pattern of names (tcgen05_ldst_*).
        cases = [c for c in cases
                 if any(fnmatch.fnmatchcase(c["name"], n) for n in args.names)]
    return cases


RULES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "rules")


def read_rules(path):
    """The overlay of a call file's `# rules: NAME` line (rules/NAME.yaml:
    `upstream`, TVM's dispatch), or "" for the built-in table alone."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\s*#\s*rules\s*:\s*(\w+)(?:\s.*)?$", line)
            if m:
                return os.path.join(RULES_DIR, m.group(1) + ".yaml")
            if line.strip() and not line.lstrip().startswith("#"):
                break
    return ""


def case_env(c):
    """The environment a case's commands run in: the built-in rules, with
    the overlay of its `# rules:` line."""
    return dict(os.environ, TILEDISPATCH_RULES=read_rules(c["path"]))


def dispatch_case(c, args):
    """Dispatches a case: sets c["variant"] and c["class"]; returns an error
    message, or None."""
    env = case_env(c)
    p = subprocess.run([args.exe, "dispatch", c["path"]], capture_output=True,
                       text=True, env=env)
    c["variant"] = p.stdout.strip() if p.returncode == 0 else None
    c["class"] = case_class(c["path"], c["variant"])
    first = (p.stderr.strip().splitlines() or [""])[0]
    if c["expect"] == "none":
        if p.returncode == 1 and c.get("error"):
            ex = explain_json(c, args, env)
            msgs = [r.get("message", "") for r in (ex or {}).get("candidates", [])]
            msgs.append((ex or {}).get("empty_reason", ""))
            if not any(c["error"] in m for m in msgs):
                return f"no candidate's message has '{c['error']}'"
        if p.returncode == 1:
            return None
        if p.returncode == 0:
            return f"dispatched to {c['variant']}, expected no match"
        return f"dispatch exited {p.returncode}, expected no match (exit 1): " + first
    if c["expect"] == "error":
        if p.returncode == 2 and (c.get("error") or "") in p.stderr:
            return None
        if p.returncode == 2:
            return f"refused with '{first}', expected '{c['error']}'"
        return f"dispatch exited {p.returncode}, expected a refusal (exit 2)" + \
            (f": {first}" if first else f" ({c['variant']})")
    if p.returncode != 0:
        return f"dispatch exited {p.returncode}: " + \
            (p.stderr.strip().splitlines() or [""])[0]
    note = read_note(c["path"])
    if note is not None:
        ex = explain_json(c, args, env)
        got = [r.get("note", "") for r in (ex or {}).get("candidates", [])
               if r.get("status") == "selected"]
        if not got or note not in got[0]:
            return f"the selected variant's note lacks '{note}': {got}"
    want = read_access(c["path"])
    if want is not None:
        return access_error(c, args, env, want)
    return None


CUDA_TYPES = {"float32": "float", "float16": "__half",
              "bfloat16": "__nv_bfloat16", "float64": "double",
              "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
              "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t",
              "uint32": "uint32_t", "uint64": "uint64_t",
              "float8_e4m3fn": "__nv_fp8_e4m3", "float8_e5m2": "__nv_fp8_e5m2",
              "float8_e8m0fnu": "__nv_fp8_e8m0",
              # two to a byte: declared as the bytes (half the elements)
              "float4_e2m1fn": "unsigned char"}


def wrapper_parts(c, args, env):
    """A compile-only kernel around `tiledispatch emit --lang cuda`: the
    call's buffers declared (shared ones __shared__, local ones as register
    arrays loaded from global memory), named scalars as kernel parameters,
    every buffer stored back so that nothing is dead.  Reads the flow-style
    `NAME: {scope: S, dtype: D, shape: [...]}` buffer lines of the call
    file.  Returns (includes, helper functions, kernel text with KERNEL
    for its name), or an error message."""
    p = subprocess.run([args.exe, "emit", c["path"], "--lang", "cuda"],
                       capture_output=True, text=True, env=env)
    if p.returncode != 0:
        return f"emit exited {p.returncode}: " + p.stderr.strip()
    text = open(c["path"], encoding="utf-8").read()
    # The host stand-in's declarations the async helpers call (a
    # file-scope `#ifndef __CUDA_ARCH__` block before them) stay at file
    # scope, ahead of the helpers.
    decls = re.findall(r"^#ifndef __CUDA_ARCH__\n(?:(?!#endif).*\n)*#endif\n",
                       p.stdout.split("__forceinline__")[0], re.M)
    fns = decls + re.findall(r"__forceinline__ __device__.*?\n}\n",
                             p.stdout, re.S)
    body = p.stdout
    for f in fns:
        body = body.replace(f, "")
    incs = [l for l in body.splitlines() if l.startswith("#include")]
    body = "\n".join(l for l in body.splitlines()
                     if not l.startswith("#include"))
    params = set(re.findall(
        r"\{\s*scalar:\s*(\w+)\s*,\s*dtype:\s*(\w+)\s*\}", text))
    # The scalars a region start or a config expression uses (the
    # `scalars:` block, e.g. a pipeline's stage k), kernel parameters too.
    block = re.search(r"^scalars:[ \t]*\n((?:[ \t]+.*\n)*)", text, re.M)
    if block:
        params |= set(re.findall(r"^\s+(\w+):\s*\{\s*dtype:\s*(\w+)",
                                 block.group(1), re.M))
    params = sorted(params)
    decl, store = [], []
    for name, scope, dtype, shape in re.findall(
            r"^\s+(\w+):\s*\{\s*scope:\s*([\w.]+)\s*,\s*dtype:\s*(\w+)"
            r"\s*,\s*shape:\s*\[([\d,\s]+)\]", text, re.M):
        n = 1
        for e in shape.split(","):
            n *= int(e)
        t = CUDA_TYPES[dtype]
        if dtype == "float4_e2m1fn":
            n //= 2
        if scope == "tmem":
            # Tensor memory: the base address tcgen05.alloc wrote, which
            # the emitted body reads as NAME_taddr.
            decl.append(f"unsigned int {name}_taddr = "
                        f"((const unsigned int *)in)[0];")
            continue
        if scope.startswith("shared") and dtype == "uint64":
            # mbarriers: the async helpers take unsigned long long *.
            t = "unsigned long long"
        if scope.startswith("shared"):
            decl.append(f"__shared__ {t} {name}_ptr[{n}];")
        else:
            # alignas(16): the copy variants view registers as 32-bit
            # containers.
            decl.append(f"alignas(16) {t} {name}_ptr[{n}];")
            decl.append(f"for (int i = 0; i < {n}; ++i) "
                        f"{name}_ptr[i] = (({t} *)in)[i];")
        store.append(f"for (int i = 0; i < {n}; ++i) "
                     f"(({t} *)out)[i] = {name}_ptr[i];")
    # TMA tensor maps: kernel parameters, as the IR's kernels take them.
    maps = sorted(set(re.findall(r"&(\w+_tensormap(?:_\d+)?)\b", body)))
    kernel = "\n".join(
        ["__global__ void KERNEL(const void *in, void *out" +
         "".join(f", {CUDA_TYPES[t]} {n}" for n, t in params) +
         "".join(f", const __grid_constant__ CUtensorMap {m}" for m in maps) +
         ") {"] +
        decl + ["{", body, "}"] + store + ["}"])
    return incs, fns, kernel


def compile_wrapped(group, args, outdir, arch):
    """Compiles the compile-only kernels of `group` (cases with their
    parts) as one translation unit for `arch`; on failure, each on its own
    to name the culprit.  Returns {case name: error or None}."""
    def source(items):
        incs, fns, out = ["#include <cstdint>", "#include <cuda_fp16.h>",
                          "#include <cuda_bf16.h>", "#include <cuda_fp8.h>"],\
            [], []
        for i, (c, (ci, cf, k)) in enumerate(items):
            incs += [x for x in ci if x not in incs]
            fns += [x for x in cf if x not in fns]
            out.append(f"// {c['name']}\n" + k.replace("KERNEL", f"td_k{i}"))
        return "\n".join(incs + fns + out) + "\n"

    def nvcc(items, name):
        cu = os.path.join(outdir, name + ".cu")
        with open(cu, "w", encoding="utf-8") as f:
            f.write(source(items))
        obj = os.path.join(outdir, name + ".o")
        p = subprocess.run([args.nvcc, "-gencode",
                            f"arch={arch.replace('sm_', 'compute_')},"
                            f"code={arch}", "-c", cu, "-o", obj],
                           capture_output=True, text=True)
        if os.path.exists(obj):
            os.remove(obj)
        return None if p.returncode == 0 else \
            "\n".join(p.stderr.strip().splitlines()[:20])

    if nvcc(group, f"wrapped_{arch}") is None:
        return {c["name"]: None for c, _ in group}
    return {c["name"]: nvcc([(c, parts)], c["name"]) for c, parts in group}


def run_case(c, args, outdir):
    env = case_env(c)
    if c.get("dispatch_error"):
        return False, c["dispatch_error"]
    variant = c["variant"]
    if c["expect"] is None and c["kind"] == "conformance":
        return False, "no '# expect: VARIANT' line"
    if c["expect"] in ("none", "error"):
        c["compile_arch"] = None
        return True, ("no match" if c["expect"] == "none" else "refused") + ", as expected"
    if c["expect"] is not None and variant != c["expect"]:
        return False, f"dispatched to {variant}, expected {c['expect']}"
    arch = c["arch"] or ("sm_100a" if variant in PACKED | SM100_VARIANTS
                         else DEFAULT_ARCH)
    cu = os.path.join(outdir, c["name"] + ".cu")
    p = subprocess.run([args.exe, "kernel", c["path"], "-o", cu],
                       capture_output=True, text=True, env=env)
    if p.returncode != 0 and ("is neither a reduction nor elementwise"
                              in p.stderr or "no reference for the "
                              "elementwise op" in p.stderr or
                              "has no self-checking program yet"
                              in p.stderr or
                              "no self-checking program for a cluster "
                              "launch" in p.stderr or
                              "no self-checking program for tensor memory"
                              in p.stderr):
        # No self-checking program for this op yet: the emitted body in a
        # kernel that declares its buffers, compiled later with the others
        # of its arch in one translation unit (a compile check only).
        parts = wrapper_parts(c, args, env)
        if isinstance(parts, str):
            return False, parts
        c["wrapped"] = parts
        c["compile_arch"] = arch
        return True, f"{variant} ({arch}) [emitted body, compile only]"
    if p.returncode != 0:
        return False, f"kernel exited {p.returncode}: " + p.stderr.strip()
    if not c["arch"]:
        # Blackwell-only PTX in a program of another variant (the packed
        # float32-pair paths of the elementwise variants): sm_100a.
        with open(cu, encoding="utf-8") as f:
            if SM100_ONLY.search(f.read()):
                arch = "sm_100a"
    c["compile_arch"] = arch
    c["cu"] = cu
    if args.compile and args.singly:
        err = nvcc_batch.nvcc(args.nvcc,
                              nvcc_batch.nvcc_flags(arch, args.sass_only), cu)
        if err:
            return False, err
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
    ap.add_argument("--sample", action="store_true")
    ap.add_argument("--sass-only", action="store_true")
    ap.add_argument("--singly", action="store_true")
    ap.add_argument("--data", choices=["exact", "random", "both"],
                    default="exact")
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
        for c, err in zip(cases, ex.map(lambda c: dispatch_case(c, args),
                                        cases)):
            c["dispatch_error"] = err
    total = len(cases)
    if args.sample:
        kept, missing = sample(cases, lambda c: c["name"], lambda c: c["class"])
        if missing:
            print(f"FAIL sample: no case for {missing}")
            return 1
        cases = kept
        print(f"sample: {len(cases)} of {total} cases; reductions one per "
              "(variant, scope, dtype class) and per (variant, op), "
              "elementwise ops one per (variant, scope), op and "
              "dtype class, copies one per (variant, scope) and dtype class",
              flush=True)
    modes = "exact,random" if args.data == "both" else args.data
    what = "compiled" if args.compile and args.singly else "written"
    start = time.monotonic()
    done = nfail = 0
    lock = threading.Lock()

    def work(c):
        nonlocal done, nfail
        r = run_case(c, args, outdir)
        with lock:
            done += 1
            nfail += not r[0]
            if done % 10 == 0 or done == len(cases):
                print(f"progress: {done}/{len(cases)} {what}, {nfail} failed, "
                      f"{time.monotonic() - start:.0f} s", flush=True)
        return r

    with concurrent.futures.ThreadPoolExecutor(max(1, args.j)) as ex:
        results = list(ex.map(work, cases))
    if args.compile and not args.singly:
        progs = [{"name": c["name"], "cu": c["cu"], "arch": c["compile_arch"]}
                 for c, (ok, _) in zip(cases, results)
                 if ok and c.get("cu") and not c.get("wrapped")]
        start = time.monotonic()

        def progress(done, total, nfail):
            print(f"progress: {done}/{total} batches compiled, {nfail} "
                  f"programs failed, {time.monotonic() - start:.0f} s",
                  flush=True)

        errs, notes = nvcc_batch.compile_all(progs, args.nvcc, args.sass_only,
                                             args.j, outdir, progress)
        results = [(False, errs[c["name"]]) if errs.get(c["name"]) else
                   (ok, msg + (f" [{notes[c['name']]}]"
                               if c["name"] in notes else ""))
                   for c, (ok, msg) in zip(cases, results)]
    if args.compile:
        wrapped = [(c, c["wrapped"]) for c, (ok, _) in zip(cases, results)
                   if ok and c.get("wrapped")]
        errs = {}
        for arch in sorted({c["compile_arch"] for c, _ in wrapped}):
            errs.update(compile_wrapped(
                [w for w in wrapped if w[0]["compile_arch"] == arch], args,
                outdir, arch))
        results = [(False, "nvcc failed on the emitted body:\n" +
                    errs[c["name"]]) if errs.get(c["name"]) else r
                   for c, r in zip(cases, results)]
    failed = 0
    for c, (ok, msg) in zip(cases, results):
        print(f"{'ok  ' if ok else 'FAIL'} {c['name']}: {msg}")
        failed += not ok
    if args.out:
        with open(os.path.join(outdir, "manifest.tsv"), "w") as f:
            for c, (ok, _) in zip(cases, results):
                # Refusals have no program; a compile-only wrapper checks
                # nothing when run.
                if ok and c["expect"] not in ("none", "error") and not c.get("wrapped"):
                    f.write(f"{c['name']}\t{c['variant']}\t"
                            f"{c['compile_arch']}\t{modes}\t"
                            f"{class_name(c['class'])}\n")
    print(f"{len(cases) - failed}/{len(cases)} cases ok"
          + (f" (a sample of {total})" if args.sample else "")
          + (" (compiled with nvcc)" if args.compile else ""))
    if tmp is not None:
        tmp.cleanup()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
