#!/usr/bin/env python3
"""Parses the TIRx of tiledispatch's mma.sync node back with TVM.

For every golden IR case tests/golden/cases/ir_mma_*.ir, tests/codegen/
ir_golden prints the body (T.ptx.mma in unrolled loops, the registers as
D.local()[i] and A.local().view("uint32")[i]).  This script declares the
case's local buffers in a prim_func (each with room for twice a lane's
registers: layout S[(32, n) : (1@laneid, 1)]), parses the body with the released TVM
(tvm.script.from_source) and requires TVM to print every statement back
as tiledispatch printed it.  TVM prints each register's buffer view as a
declaration of its own (`buffer_5 = buffer_4.view("uint32")`); those are
folded back into the operand before comparing.

Then, for one tile of every instruction kind (TVM's four and
tiledispatch's own), TVM compiles that TIRx to CUDA for sm_90a
(tvm.compile, the tirx pipeline: TVM's own PTX table writes the asm) and
the CUDA must agree with tiledispatch's for the same IR: the same
instruction text and operand constraints in the helper, and the same
registers in the same order in the call (`((uint*)A_ptr)[1]` and
`((unsigned int *)A_ptr)[1]` are both A's word 1); and TVM's CUDA of a
2 x 2 x 3 tiling (its loops unrolled) issues 12 calls whose registers are
those TVM's own gemm gives each tile (plan 1.5: D (m*Nt + n)*4 + i, A
(m*Kt + k)*words + i, B (k*Nt + n)*words + i).

usage: mma_tirx.py IR_GOLDEN CASES_DIR
"""
import glob
import os
import re
import subprocess
import sys
import textwrap

import tvm
from tvm.script import tirx as T
from tvm.tirx.layout import Axis

# td_mma_info's rows: name -> (A/B dtype, C/D dtype, k)
KINDS = {
    "m16n8k16.bf16": ("bfloat16", "float32", 16),
    "m16n8k16.f16": ("float16", "float32", 16),
    "m16n8k8.bf16": ("bfloat16", "float32", 8),
    "m16n8k8.f16": ("float16", "float32", 8),
    "m16n8k16.f16acc": ("float16", "float16", 16),
    "m16n8k8.f16acc": ("float16", "float16", 8),
    "m16n8k8.tf32": ("float32", "float32", 8),
    "m16n8k32.s8": ("int8", "int32", 32),
    "m16n8k32.u8": ("uint8", "int32", 32),
    "m16n8k32.e4m3": ("float8_e4m3fn", "float32", 32),
    "m16n8k32.e5m2": ("float8_e5m2", "float32", 32),
}
ALIAS = re.compile(r"^(buffer(?:_\d+)?) = (.+)$")
USE = re.compile(r"\b(buffer(?:_\d+)?)\[")


def local(name, shape, dtype):
    # Twice the lane's registers: TVM prints a load of a one-element view
    # as the view itself, which would hide the index.
    regs = 2 * shape[0] * shape[1] // 32
    return (f'    {name} = T.alloc_local(({shape[0]}, {shape[1]}), "{dtype}", '
            f'layout=T.TileLayout(T.S[(32, {regs}) : (1 @ Axis.laneid, 1)]))\n')


def head(args):
    _, kind, mt, nt, kt, c = args
    ab, cd, k = KINDS[kind]
    mt, nt, kt = int(mt), int(nt), int(kt)
    h = ('@T.prim_func\ndef f():\n'
         '    threadIdx_x = T.launch_thread("threadIdx.x", 32)\n')
    h += local("D", (16 * mt, 8 * nt), cd)
    h += local("A", (16 * mt, k * kt), ab)
    h += local("B", (k * kt, 8 * nt), ab)
    if c == "C":
        h += local("C", (16 * mt, 8 * nt), cd)
    return h


def back(src):
    """TVM's reprint of the body, its buffer aliases folded back."""
    func = tvm.script.from_source(src, extra_vars={"T": T, "Axis": Axis},
                                  check_well_formed=False)
    alias, out = {}, []
    for line in func.script().splitlines():
        if not line.startswith("    ") or "T.alloc_local" in line or \
                "T.launch_thread" in line:
            continue
        body = line[4:]
        m = ALIAS.match(body.strip())
        if m:
            alias[m.group(1)] = USE.sub(lambda u: alias[u.group(1)] + "[",
                                        re.sub(r"\b(buffer(?:_\d+)?)\.",
                                               lambda u: alias[u.group(1)]
                                               + ".", m.group(2)))
            continue
        out.append(USE.sub(lambda u: alias[u.group(1)] + "[", body))
    return out


ASM = re.compile(r'asm volatile\("(mma\.sync[^"]*)"(.*?)\);', re.S)
CONSTRAINT = re.compile(r'"(=?[a-z])"\(')
CALL = re.compile(r"\b(?:td_ptx|tvm_builtin_ptx)_mma\w*\(([^;]*)\);")
REG = re.compile(r"^(?:\(\((?:uint|unsigned int) ?\*\)(\w+)_ptr\)|"
                 r"(\w+)_ptr)\[(\d+)\]$")


def registers(args):
    regs = []
    for arg in args.split(","):
        m = REG.match(arg.strip())
        regs.append(f"{m.group(1) or m.group(2)}[{m.group(3)}]" if m
                    else arg.strip())
    return regs


def cuda_view(text):
    """(instruction, constraints, registers of the first call)."""
    a = ASM.search(text)
    c = CALL.search(text[a.end():] if a else text)
    if a is None or c is None:
        return None
    return a.group(1), CONSTRAINT.findall(a.group(2)), registers(c.group(1))


def tvm_cuda(hook, args):
    """tiledispatch's golden text of args, and TVM's CUDA of its TIRx."""
    out = subprocess.run([hook] + args, check=True, capture_output=True,
                         text=True).stdout
    tirx = out.split("== tirx\n")[1].split("== cuda\n")[0]
    src = head(args) + textwrap.indent(tirx, "    ")
    func = tvm.script.from_source(src, extra_vars={"T": T, "Axis": Axis},
                                  check_well_formed=False)
    tgt = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
    with tgt:
        mod = tvm.compile(tvm.IRModule({"main": func}), target=tgt,
                          tir_pipeline="tirx")
    return out, mod.mod.imports[0].inspect_source()


def tiled_calls(hook, kind, mt=2, nt=2, kt=3):
    """TVM's calls of an mt x nt x kt tiling (its unrolled loops), and the
    registers TVM's gemm gives tile (m, n, k), in that order: D / C
    (m*nt + n)*regs + i, A (m*kt + k)*words + i, B (k*nt + n)*words + i."""
    _, cuda = tvm_cuda(hook, ["mma", kind, str(mt), str(nt), str(kt), "C"])
    got = [registers(c) for c in CALL.findall(cuda)]
    ab, cd, k = KINDS[kind]
    bits = {"float32": 32, "float16": 16, "bfloat16": 16}.get(ab, 8)
    aw, bw = 16 * k * bits // 1024, k * 8 * bits // 1024
    nc = 2 if cd == "float16" else 4
    want = []
    for m in range(mt):
        for n in range(nt):
            for kk in range(kt):
                t = m * nt + n
                want.append([f"D[{t * nc + i}]" for i in range(nc)] +
                            [f"A[{(m * kt + kk) * aw + i}]" for i in range(aw)] +
                            [f"B[{(kk * nt + n) * bw + i}]" for i in range(bw)] +
                            [f"C[{t * nc + i}]" for i in range(nc)])
    return got, want


def compiled_by_tvm(hook, kind):
    """TVM's CUDA and ours for one tile of kind (C a buffer of its own)."""
    args = ["mma", kind, "1", "1", "1", "C"]
    out, cuda = tvm_cuda(hook, args)
    return cuda_view(cuda), cuda_view(out.split("== cuda\n")[1])


def main():
    hook, cases = sys.argv[1], sys.argv[2]
    files = sorted(glob.glob(os.path.join(cases, "ir_mma_*.ir")))
    bad = total = 0
    for path in files:
        with open(path) as f:
            args = [l.split() for l in f if l.strip() and l[0] != "#"][0]
        out = subprocess.run([hook] + args, check=True, capture_output=True,
                             text=True).stdout
        tirx = out.split("== tirx\n")[1].split("== cuda\n")[0]
        src = head(args) + textwrap.indent(tirx, "    ")
        name = os.path.basename(path)[:-3]
        try:
            got = back(src)
        except Exception as e:  # a parse error is a failure, with its text
            print(f"FAIL {name}: TVM does not parse it: {e}")
            bad += 1
            continue
        want = tirx.splitlines()
        total += len(want)
        diff = [(w, g) for w, g in zip(want, got) if w != g]
        if len(want) != len(got) or diff:
            bad += 1
            print(f"FAIL {name}: TVM prints it back differently")
            for w, g in diff[:2]:
                print(f"  ours: {w}\n  tvm:  {g}")
        else:
            print(f"ok   {name}")
    print(f"{len(files)} cases, {total} statements parsed by TVM "
          f"{tvm.__version__}; {bad} printed back differently")
    differ = 0
    for kind in KINDS:
        try:
            theirs, ours = compiled_by_tvm(hook, kind)
        except Exception as e:  # a compile error is a failure, with its text
            print(f"FAIL {kind}: TVM does not compile it: {str(e)[-800:]}")
            differ += 1
            continue
        if theirs is None or theirs != ours:
            differ += 1
            print(f"FAIL {kind}: TVM's CUDA differs\n  tvm:  {theirs}\n"
                  f"  ours: {ours}")
            continue
        got, want = tiled_calls(hook, kind)
        if got != want:
            differ += 1
            print(f"FAIL {kind}: TVM's calls of the 2 x 2 x 3 tiling "
                  f"(ours through TVM) are not TVM gemm's registers\n"
                  f"  tvm:  {got[:2]}\n  want: {want[:2]}")
            continue
        print(f"ok   {kind}: {ours[0].split()[0]}, {len(ours[2])} "
              f"registers; 2 x 2 x 3 tiles: {len(got)} calls")
    print(f"{len(KINDS)} kinds compiled by TVM; {differ} differ")
    return 1 if bad or differ or not files else 0


if __name__ == "__main__":
    sys.exit(main())
