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
3. TVM parses the TIRx tiledispatch emits for every accepted call (and the
   gemm_async goldens), in a prim_func that declares the shared buffers
   and takes the tensor-memory addresses (C_taddr, A_taddr when A is in
   tensor memory) and the call's scalars as parameters.  TVM's printer
   prints it back in its own spelling (a (1,) local buffer as a scalar),
   so only the parse is required.

Exit 0 when all three agree.
"""
import difflib
import glob
import os
import re
import subprocess
import textwrap
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
        for c in gen.CASES + gen.BS_CASES:
            gen.write(c, out)
            name = f"gemm_async_tvm_{c['name']}.yaml"
            want = (cdir / name).read_text() if (cdir / name).exists() else ""
            got = (out / name).read_text()
            if got != want:
                bad += 1
                print(f"FAIL {name}: TVM's lowering differs from the committed call")
                sys.stdout.writelines(difflib.unified_diff(
                    want.splitlines(True), got.splitlines(True), "committed", "TVM now", n=0))
        total = len(gen.CASES) + len(gen.BS_CASES)
        print(f"{total - bad} of {total} gemm_async calls as TVM lowers them now")
    p = subprocess.run([sys.executable, str(HERE / "check_gemm_async.py"), exe, str(cdir)])
    cases = sorted(glob.glob(str(cdir / "gemm_async_*.yaml")) +
                   glob.glob(str(root / "tests/golden/cases/gemm_async_*.yaml")))
    parsed = unparsed = 0
    for case in cases:
        q = subprocess.run([exe, "emit", case, "--lang", "tirx"], capture_output=True,
                           text=True, env=dict(os.environ, TILEDISPATCH_RULES=""))
        if q.returncode != 0:
            continue  # a refusal: nothing to parse
        try:
            parse_tirx(Path(case).read_text(), q.stdout)
            parsed += 1
        except Exception as e:  # TVM's parser says why
            unparsed += 1
            why = re.sub(r"\s+", " ", str(e))[:300]
            print(f"FAIL {os.path.basename(case)}: TVM cannot parse the TIRx: {why}")
    print(f"{parsed} of {parsed + unparsed} gemm_async TIRx bodies parsed by TVM")
    return 1 if bad or unparsed or p.returncode else 0


def parse_tirx(call_text, body):
    """The body in a prim_func declaring the call's shared buffers, with
    C_taddr and the scalars as parameters, parsed by TVM."""
    import tvm
    decl, taddrs = [], []
    for name, scope, dtype, shape in re.findall(
            r"^\s+(\w+):\s*\{\s*scope:\s*([\w.]+)\s*,\s*dtype:\s*(\w+)\s*,"
            r"\s*shape:\s*\[([\d,\s]+)\]", call_text, re.M):
        if scope != "tmem":
            decl.append(f'{name} = T.alloc_buffer(({shape},), "{dtype}", scope="{scope}")')
        else:  # C, and A in tensor memory: their addresses
            taddrs.append(f"{name}_taddr: T.uint32")
    params = taddrs + [
        f"{n}: T.int32" for n in re.findall(r"^  (\w+): \{dtype", call_text, re.M)]
    src = (f"@T.prim_func\ndef f({', '.join(params)}):\n" +
           textwrap.indent("\n".join(decl) + "\n" + body, "    "))
    tvm.script.from_source(src, check_well_formed=False)


if __name__ == "__main__":
    sys.exit(main())
