#!/usr/bin/env python3
"""A program that does not compile fails run.py --compile with its own name,
although the programs are compiled many to a translation unit
(nvcc_batch.py).

usage: test_nvcc_batch.py TILEDISPATCH CONFORMANCE_DIR GOLDEN_DIR

run.py compiles four cases with a wrapper around nvcc that plants an
`#error` in one program (rows_axis0_sum: the line after its TD_NAME), wherever that program's text is, alone or inside a batch.
golden-rows_axis0_sum's program is byte-identical to it (compiled once).
The run must exit 1; rows_axis0_sum must FAIL with the planted error at its
own file and line, golden-rows_axis0_sum FAIL as its copy, and the two
other cases pass, compiled in the same batch as the broken program.
Exit 0 when all holds, 1 otherwise, 77 without nvcc.
"""
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BROKEN = "rows_axis0_sum"
GOOD = ["local_sum_f32_1024", "local_min_int32"]

WRAPPER = r'''#!/usr/bin/env python3
import re, subprocess, sys
# The .cu argument: plant the error after the broken program's name.
for a in sys.argv[1:]:
    if a.endswith(".cu"):
        text = open(a).read()
        new = re.sub(r'^(static const char TD_NAME\[\] = "BROKEN";\n)',
                     r"\1#error planted in BROKEN\n", text, flags=re.M)
        if new != text:
            open(a, "w").write(new)
sys.exit(subprocess.run(["NVCC"] + sys.argv[1:]).returncode)
'''


def main():
    exe, cases, golden = sys.argv[1:4]
    nvcc = shutil.which("nvcc") or (
        "/usr/local/cuda/bin/nvcc"
        if os.access("/usr/local/cuda/bin/nvcc", os.X_OK) else None)
    if nvcc is None:
        print("SKIP: nvcc not found")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        wrapper = os.path.join(tmp, "nvcc")
        with open(wrapper, "w") as f:
            f.write(WRAPPER.replace("BROKEN", BROKEN).replace("NVCC", nvcc))
        os.chmod(wrapper, stat.S_IRWXU)
        out = os.path.join(tmp, "out")
        p = subprocess.run(
            [sys.executable, os.path.join(HERE, "run.py"), exe, BROKEN,
             "golden-" + BROKEN] + GOOD +
            ["--cases", cases, "--golden", golden, "--out", out,
             "--compile", "--nvcc", wrapper, "-j", "2"],
            capture_output=True, text=True)
        text = p.stdout + p.stderr
        problems = []
        if p.returncode != 1:
            problems.append(f"run.py exited {p.returncode}, expected 1")
        path = re.escape(os.path.join(out, BROKEN + ".cu"))
        if not re.search(rf"^FAIL {BROKEN}: nvcc .*\n(.*\n)*?{path}[:(]\d+"
                         rf".*planted in {BROKEN}", text, re.M):
            problems.append(f"no FAIL line for {BROKEN} naming its file")
        if not re.search(rf"^FAIL golden-{BROKEN}: byte-identical to "
                         rf"{BROKEN}, which failed", text, re.M):
            problems.append(f"golden-{BROKEN} does not fail as its copy")
        for g in GOOD:
            if not re.search(rf"^ok   {g}: ", text, re.M):
                problems.append(f"{g} did not pass")
        if not re.search(r"^2/4 cases ok", text, re.M):
            problems.append("the count is not 2/4")
        if problems:
            print("FAIL: " + "; ".join(problems) + "\n" + text)
            return 1
    print(f"PASS: {BROKEN} fails by name (and its byte-identical copy), "
          f"{', '.join(GOOD)} pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
