#!/usr/bin/env python3
"""Generates the elementwise GPU benchmark's header.

    bench/gpu/ewise/gen.py TILEDISPATCH OUT.cuh [--tvm PYTHON]

For every case of CASES (a CTA-scope elementwise op on [64, 64] tiles
with 128 threads, in shared memory (smem_*) or in registers (reg_*, 32
elements a thread: layout S[(64, 2, 32) : (2@tx, 1@tx, 1)])) it writes the
call file to bench/gpu/ewise/calls/, runs `TILEDISPATCH emit CALL --lang
cuda` and pastes the body, unchanged, into `td_NAME(A_ptr, ..., C_ptr)`.  With --tvm PYTHON (a Python
that imports TVM 0.27), it also lowers the same call through TVM
(tests/upstream/differential.py's kernel construction), cuts the kernel's
body out of TVM's CUDA (its own shared arrays dropped: the harness passes
the tiles) and pastes it into `tvm_NAME(...)`.  Nothing is written by
hand; bench_ewise.cu holds the hand-written reference.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
# name, op, input dtype, output dtype, sources
CASES = [
    ("add_f16", "add", "float16", "float16", 2),
    ("add_bf16", "add", "bfloat16", "bfloat16", 2),
    ("add_f32", "add", "float32", "float32", 2),
    ("mul_f16", "mul", "float16", "float16", 2),
    ("mul_bf16", "mul", "bfloat16", "bfloat16", 2),
    ("mul_f32", "mul", "float32", "float32", 2),
    ("fma_f16", "fma", "float16", "float16", 3),
    ("fma_bf16", "fma", "bfloat16", "bfloat16", 3),
    ("fma_f32", "fma", "float32", "float32", 3),
    ("exp_f16", "exp", "float16", "float16", 1),
    ("exp_bf16", "exp", "bfloat16", "bfloat16", 1),
    ("exp_f32", "exp", "float32", "float32", 1),
    ("cast_f32_f16", "cast", "float32", "float16", 1),
    ("cast_f16_f32", "cast", "float16", "float32", 1),
    ("cast_f32_bf16", "cast", "float32", "bfloat16", 1),
    ("cast_bf16_f32", "cast", "bfloat16", "float32", 1),
]
OPC = {"add": 0, "mul": 1, "fma": 2, "exp": 3, "cast": 4}
LAYOUT = '"S[(64, 2, 32) : (2@tx, 1@tx, 1)]"'
CT = {"float16": "__half", "bfloat16": "__nv_bfloat16", "float32": "float"}
SRC = ["A", "B", "D"]


def call_text(op, ti, to, n, reg):
    scope = "local" if reg else "shared"
    lay = ", layout: %s" % LAYOUT if reg else ""
    buf = "  %s: {scope: " + scope + ", dtype: %s, shape: [64, 64]" + lay + "}\n"
    bufs = "".join(buf % (SRC[i], ti) for i in range(n))
    return ("op: %s\ntarget: cuda\narch: sm_90a\nscope: cta\n"
            "launch: {threadIdx.x: 128}\nbuffers:\n%s%s"
            "dst: C\nsrcs: [%s]\n" % (op, bufs, buf % ("C", to),
                                       ", ".join(SRC[:n])))


def split_emit(text):
    heads = ("#", "static", "__device__", "__forceinline__", "template")
    blocks = text.split("\n\n")
    n = 0
    while n < len(blocks) - 1 and blocks[n].startswith(heads):
        n += 1
    return "\n\n".join(blocks[:n]) + "\n", "\n\n".join(blocks[n:])


TVM_SCRIPT = r'''
import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
import differential as D
import tvm, tvm.script
import tvm.backend.cuda.tile_primitive  # noqa: F401
func = tvm.script.parse(D.ewise_source(D.read_spec(Path(sys.argv[2]))))
target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
with target:
    ex = tvm.compile(tvm.IRModule({"main": func}), target=target,
                     tir_pipeline="tirx")
sys.stdout.write((ex.mod if hasattr(ex, "mod") else ex).imports[0]
                 .inspect_source())
'''


def tvm_cuda(python, call):
    p = subprocess.run([python, "-c", TVM_SCRIPT,
                        os.path.join(ROOT, "tests", "upstream"), call],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("gen.py: TVM failed on %s:\n%s" % (call, p.stderr[-2000:]))
    return p.stdout


def tvm_split(src, name, n):
    """(prelude, function) from TVM's module source."""
    k = src.index('extern "C" __global__')
    pre, kern = src[:k], src[k:]
    kern = re.sub(r'extern "C" __global__[^\n]*\);\n', "", kern, count=1)
    kern = re.sub(r'extern "C" __global__ void[^\n]*f_kernel\([^)]*\) \{',
                  "__device__ __forceinline__ void tvm_%s(%s) {" % (
                      name, "%PARAMS%"), kern, count=1)
    types = {}
    names = [s + "_ptr" for s in SRC[:n] + ["C"]]
    def drop(m):
        if m.group(2) not in names:
            return m.group(0)
        types[m.group(2)] = m.group(1)
        return ""
    kern = re.sub(r'[ \t]*(?:__shared__ )?alignas\(\d+\) (\w+) (\w+)\[\d+\];\n',
                  drop, kern)
    params = ", ".join("%s *%s_ptr" % (types.get(s + "_ptr", "void"), s)
                       for s in SRC[:n] + ["C"])
    return pre, kern.replace("%PARAMS%", params)


def main():
    args = sys.argv[1:]
    tvm = None
    if "--tvm" in args:
        i = args.index("--tvm")
        tvm = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit("usage: gen.py TILEDISPATCH OUT.cuh [--tvm PYTHON]")
    tool, out = args
    calls = os.path.join(HERE, "calls")
    os.makedirs(calls, exist_ok=True)
    pres, funcs, tpres, cases = [], [], [], []
    for (base, op, ti, to, n), reg in [(c, r) for r in (0, 1) for c in CASES]:
        name = ("reg_" if reg else "smem_") + base
        path = os.path.join(calls, name + ".yaml")
        with open(path, "w") as f:
            f.write(call_text(op, ti, to, n, reg))
        p = subprocess.run([tool, "emit", path, "--lang", "cuda"],
                           capture_output=True, text=True, check=True)
        pre, body = split_emit(p.stdout)
        for block in pre.split("\n\n"):
            for part in (block.splitlines(keepends=True)
                         if block.startswith("#") else [block]):
                part = part.strip("\n") + "\n"
                if part.strip() and part not in pres:
                    pres.append(part)
        body = "".join("  " + l if l.strip() else l
                       for l in body.splitlines(keepends=True))
        params = ", ".join("%s *%s_ptr" % (CT[ti], s) for s in SRC[:n])
        funcs.append("__device__ __forceinline__ void td_%s(%s, %s *C_ptr)\n"
                     "{\n%s}\n\n" % (name, params, CT[to], body))
        if tvm:
            tp, tk = tvm_split(tvm_cuda(tvm, path), name, n)
            for block in tp.split("\n\n"):
                block = block.strip("\n") + "\n"
                if block.strip() and block not in tpres:
                    tpres.append(block)
            funcs.append(tk + "\n")
        cases.append("X(%s, %d, %s, %s, %d, %d)"
                     % (name, n, CT[ti], CT[to], reg, OPC[op]))
    with open(out, "w") as f:
        f.write("/* Generated by bench/gpu/ewise/gen.py; do not edit. */\n"
                "#pragma once\n#define BENCH_TVM %d\n" % (1 if tvm else 0))
        f.write("".join(pres) + "\n" + "\n".join(tpres) + "\n")
        f.write("".join(funcs))
        f.write("#define EW_CASES(X) \\\n    " + " \\\n    ".join(cases)
                + "\n")


if __name__ == "__main__":
    main()
