#!/usr/bin/env python3
"""Writes the first gemm conformance call files from TVM's fragment dump.

    gen_gemm_conformance.py [--data tests/upstream/data/gemm_frag.txt]
                            [--out tests/conformance] [--check]

tests/upstream/data/gemm_frag.txt (dump_gemm_frag.py, TVM 0.27's fragment
analysis of `mma.m16n8k*`) holds, per case, the four operands' layouts,
the buffers and regions, and what TVM's analysis makes of them: the
instruction it takes (the first `inst` with `fit: yes`), or the decline
(`prep FAILS: TEXT`, or no instruction fitting).  Each case becomes a call
file `gemm_tvm_<case>[_<dtype>_b<beta>].yaml`:

- the tilings of upstream's test_gemm_mma_m16n8k_.py (`tiled_*`), crossed
  with its _TILED_MODES (float16 / bfloat16, beta 0 / 1), and the
  transposes with both dtypes: `# expect: mma.m16n8k*`, `# access:` the
  mma.sync instruction, `# count:` the number of mma.sync calls (Mt * Nt *
  Kt per warp);
- the warp tilings over two warps of a CTA (tx, warpid + laneid) and the
  regions: the same at float16, beta 0;
- the declines: `# expect: none` with TVM's text as `# error:`; the two
  whose layout does not cover its buffer do not load and go to
  tests/call/data/bad/ instead (BAD).

The dump was taken with float16 A / B and float32 C / D; a bfloat16 file
is the same analysis (the dtypes take no part in it) with TVM's bfloat16
instruction of the same shape.  --check compares instead of writing (exit
1 on a difference): the upstream suite keeps the files generated.
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TEST = "test_gemm_mma_m16n8k_.py"
# Cases whose layouts name another scope than the warp's, and the
# threadIdx.x extent of their CTA (upstream probe gemm_warps_probe.py:
# two warps splitting M).
CTA = {"warps_tx": 64, "warps_warpid_laneid": 64}
# Cases at warpgroup scope (a warpgroup of 128 threads): the layouts name
# wid_in_wg, which the analysis fuses with laneid into tid_in_wg, and the
# warps of the layout's wid_in_wg axis split M (2 here: each issues one
# m16n8k16).
WG = {"warps_wid_in_wg": 2}
SKIP: set = set()
# tiledispatch's own instructions (the dump's ext_* cases, TVM's analysis
# with them added to its table): the tag's dtypes (A and B, C and D), the
# PTX types of the access, the arch, extra call-file lines.
EXT = {
    "f16acc": ("float16", "float16", "f16.f16.f16.f16", "sm_80", []),
    "tf32": ("float32", "float32", "f32.tf32.tf32.f32", "sm_80",
             ["config: {allow_tf32: true}"]),
    "s8": ("int8", "int32", "s32.s8.s8.s32", "sm_80", []),
    "e4m3": ("float8_e4m3fn", "float32", "f32.e4m3.e4m3.f32", "sm_89", []),
}
PTX = {"float16": "f16", "bfloat16": "bf16"}
# Relative to --out (tests/conformance).
BAD_DIR = os.path.join("..", "call", "data", "bad")
# Cases refused before any variant (exit 2): the call file's own checks
# (a layout of another size than its buffer) and the op's shape check
# (TVM's assert, plan D9), where TVM's analysis alone, as dumped, declines.
REFUSED = {
    "region_cannot_slice": "gemm mma: D dims (16, 2) != (M=16, N=8)",
}
# Cases whose call file does not load (a layout of another size than its
# buffer): tests/call/data/bad/gemm_tvm_NAME.yaml, the message at its
# position (the conformance corpus holds calls that load).
BAD = {
    "M8": "15:61: layout covers 64 elements but buffer 'D' has 128",
    "layout_of_other_shape":
        "12:62: layout covers 256 elements but buffer 'A' has 512",
}


def parse(path):
    cases, cur = [], None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"case (\S+) M=(\d+) N=(\d+) K=(\d+) tA=(\d) tB=(\d)$",
                         line)
            if m:
                cur = {"name": m.group(1), "M": int(m.group(2)),
                       "N": int(m.group(3)), "K": int(m.group(4)),
                       "tA": m.group(5) == "1", "tB": m.group(6) == "1",
                       "layout": {}, "buffer": {}, "prep": None,
                       "inst": None, "tried": None}
                cases.append(cur)
                continue
            if not line.startswith("  "):
                cur = None  # a case runs up to the next unindented line
            if cur is None:
                continue
            s = line.strip()
            if s.startswith("layout "):
                _, op, lay = s.split(" ", 2)
                cur["layout"][op] = lay
            elif s.startswith("buffer "):
                _, op, shape, region = s.split(" ")
                cur["buffer"][op] = ([int(x) for x in shape.split(",")],
                                     region.split(","))
            elif s.startswith("prep FAILS: "):
                cur["prep"] = s[len("prep FAILS: "):]
            elif s.startswith("inst "):
                cur["tried"] = s[5:]
            elif s == "fit: yes" and cur["inst"] is None:
                cur["inst"] = cur["tried"]
    return cases


def shapes(c):
    M, N, K = c["M"], c["N"], c["K"]
    out = {"D": [M, N], "C": [M, N],
           "A": [K, M] if c["tA"] else [M, K],
           "B": [N, K] if c["tB"] else [K, N]}
    regions = {op: [f"0:{e}" for e in out[op]] for op in out}
    for op, (shape, region) in c["buffer"].items():
        out[op], regions[op] = shape, region
    return out, regions


def ext_file(c, tag):
    """A call file of a dump case of tiledispatch's own instructions:
    mma_ext.m16n8k* under the built-in rules, TVM's decline under
    rules/upstream.yaml (the upstream differential)."""
    ab, cd, ptx, arch, extra = EXT[tag]
    shape, region = shapes(c)
    k = int(re.match(r"m16n8k(\d+)", c["inst"]).group(1))
    count = (c["M"] // 16) * (c["N"] // 8) * (c["K"] // k)
    lines = ["# expect: mma_ext.m16n8k*", f"# arch: {arch}",
             f"# access: mma.sync.aligned.m16n8k{k}.row.col.{ptx}",
             f"# count: {count}",
             f"# from: tests/upstream/dump_gemm_frag.py case {c['name']} (derived: "
             "TVM's analysis with the instruction added to its table)",
             "# generated by tests/upstream/gen_gemm_conformance.py from "
             f"tests/upstream/data/gemm_frag.txt case {c['name']}",
             "op: gemm", "target: cuda", f"arch: {arch}", "scope: warp",
             "launch: {threadIdx.x: 32}", "buffers:"]
    dts = {"A": ab, "B": ab, "C": cd, "D": cd}
    for op in "ABCD":
        lines.append(f"  {op}: {{scope: local, dtype: {dts[op]}, shape: "
                     f"[{', '.join(map(str, shape[op]))}], layout: "
                     f"\"{c['layout'][op]}\"}}")
    for key, op in (("dst", "D"), ("a", "A"), ("b", "B"), ("c", "C")):
        lines.append(f"{key}: \"{op}[{', '.join(region[op])}]\"")
    lines += [f"transpose_A: {'true' if c['tA'] else 'false'}",
              f"transpose_B: {'true' if c['tB'] else 'false'}",
              "alpha: 1.0", "beta: 0.0"] + extra
    return "\n".join(lines) + "\n"


def call_file(c, dtype, beta, origin):
    shape, region = shapes(c)
    inst = c["inst"]
    lines = []
    if c["name"] in BAD:
        lines += [f"# expect: {BAD[c['name']]}", "# code: TD_ESCHEMA",
                  f"# tvm: {c['prep']}"]
    elif c["name"] in REFUSED:
        lines += ["# expect: error", f"# error: {REFUSED[c['name']]}",
                  f"# tvm: {c['prep']}"]
    elif c["prep"] is not None:
        lines += ["# expect: none", f"# error: {c['prep']}"]
    elif inst is None:
        lines += ["# expect: none",
                  f"# error: no mma instruction fits M={c['M']}, N={c['N']}, "
                  f"K={c['K']}, dtypes=('{dtype}', '{dtype}', 'float32', "
                  "'float32')"]
    else:
        k = int(re.match(r"m16n8k(\d+)", inst).group(1))
        count = (c["M"] // 16) * (c["N"] // 8) * (c["K"] // k)
        warps = WG.get(c["name"]) or CTA.get(c["name"], 32) // 32
        lines += ["# expect: mma.m16n8k*",
                  f"# access: mma.sync.aligned.m16n8k{k}.row.col.f32."
                  f"{PTX[dtype]}.{PTX[dtype]}.f32",
                  f"# count: {count // warps}"]
    for o in [origin] if isinstance(origin, str) else origin:
        lines.append(f"# from: {o}")
    lines.append("# generated by tests/upstream/gen_gemm_conformance.py from "
                 f"tests/upstream/data/gemm_frag.txt case {c['name']}")
    tx = 128 if c["name"] in WG else CTA.get(c["name"], 32)
    scope = "warpgroup" if c["name"] in WG else "cta" if c["name"] in CTA else "warp"
    lines += ["op: gemm", "target: cuda", "arch: sm_80",
              f"scope: {scope}",
              f"launch: {{threadIdx.x: {tx}}}", "buffers:"]
    dts = {"A": dtype, "B": dtype, "C": "float32", "D": "float32"}
    for op in "ABCD":
        lines.append(f"  {op}: {{scope: local, dtype: {dts[op]}, shape: "
                     f"[{', '.join(map(str, shape[op]))}], layout: "
                     f"\"{c['layout'][op]}\"}}")
    for key, op in (("dst", "D"), ("a", "A"), ("b", "B"), ("c", "C")):
        lines.append(f"{key}: \"{op}[{', '.join(region[op])}]\"")
    lines += [f"transpose_A: {'true' if c['tA'] else 'false'}",
              f"transpose_B: {'true' if c['tB'] else 'false'}",
              "alpha: 1.0", f"beta: {beta}"]
    return "\n".join(lines) + "\n"


# The tilings of upstream's lowering and codegen tests (float16, beta 0).
LOWERS_TILED = {"2-1-1-16", "1-2-1-16", "1-1-2-16", "2-2-2-16", "4-1-1-16",
                "1-1-1-8", "1-1-3-8", "2-2-3-8"}
ISSUE_COUNT = {"1-1-1-16", "2-2-2-16", "4-1-1-16", "1-1-1-8", "1-1-3-8", "2-2-3-8"}


def same_program(shape, dtype, beta):
    """The other upstream items whose kernel is this tiling's call: the
    float16 beta-0 lowering and codegen tests, and the untransposed item
    of the transpose tests (its single k16 tile)."""
    out = []
    if beta == "0.0" and shape == "1-1-1-16":
        out.append(f"{TEST}::test_cuda_gemm_mma_numerical_transpose[False-False-{dtype}]")
    if dtype == "float16" and beta == "0.0":
        if shape in LOWERS_TILED:
            out.append(f"{TEST}::test_cuda_gemm_mma_lowers_tiled[{shape}]")
        if shape in ISSUE_COUNT:
            out.append(f"{TEST}::test_cuda_gemm_mma_codegen_issue_count[{shape}]")
        if shape == "1-1-1-16":
            out += [f"{TEST}::test_cuda_gemm_mma_lowers_transpose[False-False]",
                    f"{TEST}::test_cuda_gemm_mma_codegen_transpose[False-False]"]
    return out


def files(cases):
    out = {}
    for c in cases:
        n = c["name"]
        if n in SKIP or set(c["layout"]) != set("ABCD"):
            continue
        ext = re.match(r"ext_([a-z0-9]+?)(?:_tiled_2x2x2|_tAtB)?$", n)
        if ext:
            out[f"gemm_tvm_{n}.yaml"] = ext_file(c, ext.group(1))
            continue
        tiled = re.fullmatch(r"tiled_(\d+)x(\d+)x(\d+)_k(\d+)", n)
        tposed = re.fullmatch(r"transpose_A([01])_B([01])", n)
        if tiled:
            # pytest's id of the item: dtype-beta-Mt-Nt-Kt-kinst (the two
            # stacked parametrize decorators, the inner one last).
            shape = "-".join(tiled.groups())
            for dtype in ("float16", "bfloat16"):
                for beta in ("0.0", "1.0"):
                    b = beta[0]
                    out[f"gemm_tvm_{n}_{PTX[dtype]}_b{b}.yaml"] = call_file(
                        c, dtype, beta, [
                            f"{TEST}::test_cuda_gemm_mma_numerical_tiled"
                            f"[{dtype}-{beta}-{shape}]"] + same_program(
                                shape, dtype, beta))
        elif tposed:
            flags = "-".join(str(g == "1") for g in tposed.groups())
            for dtype in ("float16", "bfloat16"):
                out[f"gemm_tvm_{n}_{PTX[dtype]}.yaml"] = call_file(
                    c, dtype, "0.0", [
                        f"{TEST}::test_cuda_gemm_mma_numerical_transpose"
                        f"[{flags}-{dtype}]"] + ([
                            f"{TEST}::test_cuda_gemm_mma_lowers_transpose[{flags}]",
                            f"{TEST}::test_cuda_gemm_mma_codegen_transpose[{flags}]"]
                            if dtype == "float16" else []))
        elif n.startswith("transpose_"):
            # A tiled transpose: upstream transposes the single tile only.
            for dtype in ("float16", "bfloat16"):
                out[f"gemm_tvm_{n}_{PTX[dtype]}.yaml"] = call_file(
                    c, dtype, "0.0",
                    f"tests/upstream/dump_gemm_frag.py case {n} (derived)")
        elif n in BAD:
            out[os.path.join(BAD_DIR, f"gemm_tvm_{n}.yaml")] = call_file(
                c, "float16", "0.0",
                f"tests/upstream/dump_gemm_frag.py case {n} (derived)")
        else:
            out[f"gemm_tvm_{n}.yaml"] = call_file(
                c, "float16", "0.0",
                f"tests/upstream/dump_gemm_frag.py case {n} (derived)")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(HERE, "data",
                                                   "gemm_frag.txt"))
    ap.add_argument("--out", default=os.path.join(ROOT, "tests",
                                                  "conformance"))
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    bad = 0
    for name, text in sorted(files(parse(args.data)).items()):
        path = os.path.join(args.out, name)
        if args.check:
            try:
                with open(path, encoding="utf-8") as f:
                    same = f.read() == text
            except OSError:
                same = False
            if not same:
                print(f"gen_gemm_conformance: {path} differs", file=sys.stderr)
                bad += 1
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
