#!/usr/bin/env python3
"""The gemm goldens' mma.sync calls and explain rows against TVM's.

    check_gemm_src.py TILEDISPATCH [ROOT]

design/gemm/probes/out_gemm_src.txt holds the CUDA tvm.compile wrote for
the probes of gemm_probe.py (TVM 0.27.0.post1, sm_80).  For each probe
that has a golden call file here, the mma.sync calls of TVM's kernel and of
`tiledispatch emit --lang cuda` must be the same list: the same
instruction (the helper's name less its prefix), in the same order, with
the same operands (D registers, A and B words, C registers; TVM's
`((uint*)A_ptr)[i]` is our `((unsigned int *)A_ptr)[i]`).  Only the probes
where TVM is wrong (sm_70 / sm_75: docs/upstream.md, D2) are left out.
And for the probes of out_gemm.txt that TVM refuses (ROWS), the row of
`explain --format tvm` for the matching conformance case is TVM's row of
its failure table: the variant and the reason, word for word.
Both run under rules/upstream.yaml (TVM's dispatch).  Needs no TVM: the
output was stored when the probes ran.
"""
import os
import re
import subprocess
import sys

# probe -> call file (a golden or a conformance case) and the file of
# design/gemm/probes holding TVM's CUDA for it.
G, C = "tests/golden/cases/", "tests/conformance/"
PROBES = {
    "k16_f16": (G + "gemm_k16_f16.yaml", "out_gemm_src.txt"),
    "tAtB": (G + "gemm_tAtB.yaml", "out_gemm_src.txt"),
    "k8_K24_tiled": (G + "gemm_k8_K24_tiled.yaml", "out_gemm_src.txt"),
    "tiled_2x2x2": (C + "gemm_tvm_tiled_2x2x2_k16_f16_b0.yaml",
                    "out_gemm_src_tiled.txt"),
    "tA": (C + "gemm_tvm_transpose_A1_B0_f16.yaml", "out_gemm_src_tiled.txt"),
    "tB": (C + "gemm_tvm_transpose_A0_B1_f16.yaml", "out_gemm_src_tiled.txt"),
    "tAtB_2x2x2": (C + "gemm_tvm_transpose_tiled_2x2x2_f16.yaml",
                   "out_gemm_src_tiled.txt"),
}
# probe of out_gemm.txt whose dispatch fails -> conformance call file: the
# row of `explain --format tvm` must be TVM's row (variant and reason).
ROWS = {
    "alpha2": "gemm_alpha2.yaml",
    "beta_half": "gemm_beta_half.yaml",
    "dt_f16acc": "gemm_rejects_dtype_f16acc.yaml",
    "dt_mixed": "gemm_rejects_dtype_mixed.yaml",
    "dt_tf32": "gemm_rejects_dtype_f32.yaml",
    "dt_int8": "gemm_rejects_dtype_int8.yaml",
    "dt_e4m3": "gemm_rejects_dtype_e4m3.yaml",
    "dt_C_f16_D_f32": "gemm_rejects_dtype_c_f16.yaml",
    "guard_lane16": "gemm_guard_lane16.yaml",
    "swapped_B": "gemm_tvm_swapped_B.yaml",
    "row_major_local_A": "gemm_tvm_row_major_local_A.yaml",
}
ROW = re.compile(r"^\| (mma\.m16n8k\* \(prio=10\))\s+\| (.*?)\s*\|\s*$", re.M)
TVM_CALL = re.compile(r"^\s*tvm_builtin_ptx_mma_(\w+)\((.*)\);\s*$", re.M)
OUR_CALL = re.compile(r"^\s*td_ptx_mma_(\w+)\((.*)\);\s*$", re.M)


def tvm_sections(path):
    out, name, buf = {}, None, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"===== CUDA source for (\S+) ", line)
            if m:
                if name:
                    out[name] = "".join(buf)
                name, buf = m.group(1), []
            elif name:
                buf.append(line)
    if name:
        out[name] = "".join(buf)
    return out


def calls(pattern, text):
    norm = lambda a: a.replace("((uint*)", "((unsigned int *)")
    return [(m.group(1), [norm(a.strip()) for a in m.group(2).split(",")])
            for m in pattern.finditer(text)]


def main():
    exe = sys.argv[1]
    root = sys.argv[2] if len(sys.argv) > 2 else \
        os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__))))
    bad = 0
    # TVM's dispatch: the overlay that turns tiledispatch's own variants
    # off (mma_ext.m16n8k* would take the float16-accumulation probe).
    upstream = ["--rules", os.path.join(root, "rules", "upstream.yaml")]
    for probe, (case, out) in PROBES.items():
        src = tvm_sections(os.path.join(root, "design", "gemm", "probes", out))
        path = os.path.join(root, case)
        p = subprocess.run([exe, "emit", path, "--lang", "cuda"] + upstream,
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAIL {probe}: emit exited {p.returncode}: {p.stderr}")
            bad += 1
            continue
        theirs = calls(TVM_CALL, src.get(probe, ""))
        ours = calls(OUR_CALL, p.stdout)
        if not theirs:
            print(f"FAIL {probe}: no mma.sync call in TVM's CUDA")
            bad += 1
        elif theirs != ours:
            print(f"FAIL {probe}: {case} differs from TVM's CUDA")
            for i in range(max(len(theirs), len(ours))):
                t = theirs[i] if i < len(theirs) else None
                o = ours[i] if i < len(ours) else None
                if t != o:
                    print(f"  call {i}: TVM {t}\n  call {i}: ours {o}")
                    break
            bad += 1
        else:
            print(f"ok   {probe}: {len(ours)} mma.sync call(s) as TVM's")
    probes = tvm_sections_by(os.path.join(root, "design", "gemm", "probes",
                                          "out_gemm.txt"), r"===== (\S+): ")
    for probe, case in ROWS.items():
        path = os.path.join(root, "tests", "conformance", case)
        p = subprocess.run([exe, "explain", path, "--format", "tvm"] + upstream,
                           capture_output=True, text=True)
        theirs = ROW.findall(probes.get(probe, ""))[:1]
        ours = ROW.findall(p.stdout)[:1]
        if p.returncode != 1 or not theirs or theirs != ours:
            print(f"FAIL {probe}: {case}: explain row {ours} (exit "
                  f"{p.returncode}), TVM's {theirs}")
            bad += 1
        else:
            print(f"ok   {probe}: {theirs[0][1]}")
    return 1 if bad else 0


def tvm_sections_by(path, header):
    out, name, buf = {}, None, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(header, line)
            if m:
                if name:
                    out[name] = "".join(buf)
                name, buf = m.group(1), []
            elif name:
                buf.append(line)
    if name:
        out[name] = "".join(buf)
    return out


if __name__ == "__main__":
    sys.exit(main())
