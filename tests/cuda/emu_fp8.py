#!/usr/bin/env python3
"""The CPU stand-in's float -> 8-bit float conversion against CUDA's.

usage: emu_fp8.py NVCC

The stand-in (tests/cuda/emu/cuda_runtime.h) gives __nv_fp8_e4m3 and
__nv_fp8_e5m2 explicit constructors from float through td_emu_f8_bits
(the gemm programs round their random inputs with them).  This builds,
with nvcc, a host program that holds the stand-in's td_emu_f8_value and
td_emu_f8_bits (copied out of the header into a namespace of their own)
beside cuda_fp8.h's __nv_fp8_e4m3 / __nv_fp8_e5m2 (__NV_SATFINITE, round
to nearest even, computed on the host: no GPU needed), and requires the
same bits for every float whose top 16 bits are any pattern (every
bfloat16, with and without a half-way low half: the ties) and for four
million random floats, in both formats (NaN inputs left out: the stand-in
gives one NaN code for both signs).  Exit 77 when NVCC is empty or
missing.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
HEADER = os.path.join(HERE, "emu", "cuda_runtime.h")

MAIN = r"""
#include <cuda_fp8.h>
#include <cmath>
#include <cstdio>
#include <cstring>
namespace emu {
%s
}
int main()
{
    long bad = 0, n = 0;
    unsigned long long st = 12345;
    for (int e4 = 0; e4 < 2; e4++)
        for (long i = 0; i < 4000000 + 2 * 65536; i++) {
            unsigned u;
            if (i < 2 * 65536) {
                u = (unsigned)(i / 2) << 16 | (i & 1 ? 0x8000u : 0);
            } else {
                st = st * 6364136223846793005ULL + 1442695040888963407ULL;
                u = (unsigned)(st >> 32);
            }
            float f;
            memcpy(&f, &u, 4);
            if (std::isnan(f))
                continue;
            unsigned want = e4 ? __nv_fp8_e4m3(f).__x : __nv_fp8_e5m2(f).__x;
            unsigned got = emu::td_emu_f8_bits(f, e4);
            n++;
            if (want != got && bad++ < 8)
                printf("  %%s %%a: CUDA 0x%%02x, stand-in 0x%%02x\n",
                       e4 ? "e4m3" : "e5m2", f, want, got);
        }
    printf("%%s: %%ld of %%ld conversions differ\n", bad ? "FAIL" : "PASS",
           bad, n);
    return bad != 0;
}
"""


def function(text, name):
    """The definition of `static inline ... name(...) { ... }` in text."""
    m = re.search(r"^static inline [^\n]*\b%s\(" % name, text, re.M)
    if m is None:
        raise SystemExit(f"FAIL {name} is not in {HEADER}")
    end = text.index("\n}\n", m.start()) + 3
    return text[m.start():end]


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    nvcc = sys.argv[1]
    if not nvcc or shutil.which(nvcc) is None:
        print("SKIP emu_fp8: no nvcc")
        return 77
    with open(HEADER) as f:
        text = f.read()
    funcs = function(text, "td_emu_f8_value") + function(text,
                                                         "td_emu_f8_bits")
    with tempfile.TemporaryDirectory() as tmp:
        cu = os.path.join(tmp, "fp8.cu")
        with open(cu, "w") as f:
            f.write(MAIN % funcs)
        exe = os.path.join(tmp, "fp8")
        p = subprocess.run([nvcc, "-O1", "-o", exe, cu], capture_output=True,
                           text=True)
        if p.returncode != 0:
            print("FAIL emu_fp8: nvcc failed\n" + p.stderr[-3000:])
            return 1
        p = subprocess.run([exe], capture_output=True, text=True)
        print(p.stdout, end="")
        return 0 if p.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
