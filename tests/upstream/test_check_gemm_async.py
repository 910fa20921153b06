#!/usr/bin/env python3
"""The gemm_async differential's checker, checked: check_gemm_async.py must
pass the committed calls it reads and fail each one whose recorded TVM
lowering is changed in one field (a descriptor's sdo, an MMA's D address
with its lane, A's shared offset, A's tensor-memory address, the
instruction descriptor, the enable flag, one MMA fewer; block scaling: the
run-time descriptor's fields, a given descriptor, a scale factor's cell
or lane, the sf_id).

    test_check_gemm_async.py TILEDISPATCH CONFORMANCE_DIR

Exit 0 when every mutant fails and the originals pass.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = {  # call -> (header line prefix, field index to bump, what it is)
    "gemm_async_tvm_f16_128x64x64_sw128.yaml": [
        ("# tvm-desc:", 1, "A's sdo"), ("# tvm-mma:", 1, "A's 16-byte offset"),
        ("# tvm-mma:", 3, "the instruction descriptor"), ("# tvm-mma:", 4, "enable_input_d")],
    "gemm_async_tvm_tmem_a_ws_explicit_tile.yaml": [
        ("# tvm-mma:", 0, "the D address"), ("# tvm-mma:", 1, "A's tensor-memory address")],
    "gemm_async_tvm_tmem_a_lane_base.yaml": [("# tvm-mma:", 1, "A's lane (1 << 16)")],
    "gemm_async_tvm_lane_base_c.yaml": [("# tvm-mma:", 0, "C's lane (1 << 16)")],
    # block scaling: the run-time descriptor's encode, the SF cells, sf_id
    "gemm_async_tvm_bs_fp8_sf_id_packed.yaml": [
        ("# tvm-idesc-bs:", 5, "scale format"), ("# tvm-idesc-bs:", 1, "instruction N"),
        ("# tvm-idesc-values:", 2, "descriptor the third MMA reads"),
        ("# tvm-bs-mma:", 1, "A's 16-byte offset"), ("# tvm-bs-mma:", 3, "SFA's column"),
        ("# tvm-bs-mma:", 4, "SFB's column"), ("# tvm-bs-mma:", 6, "sf_id")],
    "gemm_async_tvm_bs_lane_base_sfa.yaml": [("# tvm-bs-mma:", 3, "SFA's lane (1 << 16)")],
    "gemm_async_tvm_bs_descI_given.yaml": [("# tvm-idesc-bs:", 0, "given descriptor")],
}


def check(exe, d, cache):
    # The host-compiled descriptor programs are the same for every mutant:
    # check_gemm_async.py keeps their outputs in `cache` (a directory of
    # this run's own).
    env = dict(os.environ, TD_HOST_VALUES_CACHE=cache)
    p = subprocess.run([sys.executable, os.path.join(HERE, "check_gemm_async.py"), exe, d],
                       capture_output=True, text=True, env=env)
    return p.returncode, p.stdout


def main():
    exe, cdir = sys.argv[1], sys.argv[2]
    bad = 0
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as cache:
        for name in CASES:
            shutil.copy(os.path.join(cdir, name), tmp)
        rc, out = check(exe, tmp, cache)
        if rc != 0:
            print(f"FAIL the committed calls do not pass:\n{out}")
            return 1
        for name, muts in CASES.items():
            path = os.path.join(tmp, name)
            text = open(path, encoding="utf-8").read()
            variants = [(p, i, "changed " + w) for p, i, w in muts] + [("drop", 0, "MMA fewer")]
            for prefix, idx, what in variants:
                lines = text.split("\n")
                if prefix == "drop":
                    k = max(j for j, line in enumerate(lines)
                            if line.startswith(("# tvm-mma:", "# tvm-bs-mma:")))
                    del lines[k]
                else:
                    k = next(j for j, line in enumerate(lines) if line.startswith(prefix))
                    head, fields = prefix, lines[k][len(prefix):].split()
                    ints = [j for j, f in enumerate(fields) if re.fullmatch(r"\d+", f)]
                    j = ints[idx]
                    bump = 1 << 16 if "lane" in what else 1
                    fields[j] = str(int(fields[j]) + bump)
                    lines[k] = head + " " + " ".join(fields)
                with open(path, "w", encoding="utf-8") as f:
                    f.write("\n".join(lines))
                rc, out = check(exe, tmp, cache)
                if rc != 1 or f"FAIL {name}" not in out:
                    bad += 1
                    print(f"FAIL {name}: the checker misses a {what} (exit {rc})")
                else:
                    print(f"ok   {name}: a {what} fails")
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
