"""The gemm_async differential against TVM, live (suite upstream; the venv's
python, where TVM is installed):

    gemm_async_differential.py TILEDISPATCH ROOT

1. Every tests/conformance/gemm_async_tvm_*.yaml is written again by
   gen_gemm_async_conformance.py into a scratch directory, TVM lowering
   each program now: the files must be the committed ones byte for byte
   (a difference is TVM's lowering, or its refusal text, having changed
   since the corpus was written).
2. check_gemm_async.py then compares `tiledispatch emit` with what TVM
   emitted (the headers), bit for bit.

Exit 0 when both agree.
"""
import difflib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gen_gemm_async_conformance as gen  # noqa: E402


def main():
    exe, root = sys.argv[1], Path(sys.argv[2])
    cdir = root / "tests" / "conformance"
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        for c in gen.CASES:
            gen.write(c, out)
            name = f"gemm_async_tvm_{c['name']}.yaml"
            want = (cdir / name).read_text() if (cdir / name).exists() else ""
            got = (out / name).read_text()
            if got != want:
                bad += 1
                print(f"FAIL {name}: TVM's lowering differs from the committed call")
                sys.stdout.writelines(difflib.unified_diff(
                    want.splitlines(True), got.splitlines(True), "committed", "TVM now", n=0))
        print(f"{len(gen.CASES) - bad} of {len(gen.CASES)} gemm_async calls as TVM lowers them now")
    p = subprocess.run([sys.executable, str(HERE / "check_gemm_async.py"), exe, str(cdir)])
    return 1 if bad or p.returncode else 0


if __name__ == "__main__":
    sys.exit(main())
