#!/usr/bin/env python3
"""Parses the TIRx of tiledispatch's asynchronous IR nodes back with TVM.

tests/codegen/async_tirx_dump prints a body that uses every async node (TMA
loads and stores in every form, mbarriers, fences, cluster sync, bulk
groups, prefetch, mapa and the cluster copy) and the host statements of its
tensor maps.  This script wraps the body in a prim_func that declares its
buffers, the host statements in another, parses both with the released TVM
(tvm.script.from_source; the maps are free variables in the body, as in
TVM's own lowered copies, so well-formedness is not checked) and requires
TVM to print every statement back as tiledispatch printed it, apart from two
spellings of the printers' own (`T.serial(n)` is TVM's `range(n)`, a
ptr_byte_offset's dtype string is `T.type_annotation(...)`) and where a
map's declaration `NAME = T.TensorMap()` stands (tiledispatch declares the
maps at the body's top, TVM's printer before a free variable's first use):
the same maps must be declared.

usage: async_tirx.py DUMP_EXECUTABLE
"""
import re
import subprocess
import sys
import textwrap

import tvm

BODY_HEAD = '''@T.prim_func
def f(A_ptr: T.handle, cbx: T.int32):
    A = T.match_buffer(A_ptr, (256, 64), "float16")
    A_smem = T.alloc_buffer((128, 64), "float16", scope="shared.dyn")
    P = T.alloc_buffer((128, 64), "float16", scope="shared")
    mbar = T.alloc_buffer((4,), "uint64", scope="shared")
'''
HOST_HEAD = '''@T.prim_func
def h(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (256, 64), "float16")
'''
DECLS = re.compile(r"^(A|A_smem|P|mbar) = |^@T\.prim_func|^def |^#|^$")
MAP = re.compile(r"^\s*(\w+) = T\.TensorMap\(\)$")


def ours(line):
    line = re.sub(r"T\.serial\(([^()]*)\)", r"range(\1)", line)
    return re.sub(r'(T\.ptr_byte_offset\(.*?), "(\w+)"\)',
                  r'\1, T.type_annotation("\2"))', line)


def round_trip(head, text, tail=""):
    src = head + textwrap.indent(text, "    ") + tail
    func = tvm.script.from_source(src, check_well_formed=False)
    back = [l[4:] for l in func.script().splitlines()
            if l.startswith("    ") and not DECLS.match(l[4:])]
    return back


def compare(what, printed, back):
    want = [ours(l) for l in printed.splitlines()]
    maps = sorted(MAP.match(l).group(1) for l in want if MAP.match(l))
    tvm_maps = sorted(MAP.match(l).group(1) for l in back if MAP.match(l))
    want = [l for l in want if not MAP.match(l)]
    back = [l for l in back if not MAP.match(l)]
    bad = 0
    if maps != tvm_maps:
        bad += 1
        print(f"{what}: maps declared {maps}, TVM's {tvm_maps}")
    for i in range(max(len(want), len(back))):
        w = want[i] if i < len(want) else "<missing>"
        g = back[i] if i < len(back) else "<missing>"
        if w != g:
            bad += 1
            print(f"{what} line {i + 1}:\n  ours: {w}\n  tvm:  {g}")
    return len(want), bad


def main():
    out = subprocess.run([sys.argv[1]], check=True, capture_output=True,
                         text=True).stdout
    body, host = out.split("### host\n")
    n1, bad1 = compare("body", body, round_trip(BODY_HEAD, body))
    n2, bad2 = compare("host", host,
                       round_trip(HOST_HEAD, host,
                                  "    T.tvm_kernel_replace_point()\n")[:-1])
    print(f"{n1} body and {n2} host statements parsed by TVM "
          f"{tvm.__version__}; {bad1 + bad2} printed back differently")
    return 1 if bad1 + bad2 else 0


if __name__ == "__main__":
    sys.exit(main())
