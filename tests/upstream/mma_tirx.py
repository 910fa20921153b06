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
    return 1 if bad or not files else 0


if __name__ == "__main__":
    sys.exit(main())
