"""The softmax A/B variants: from the CUDA of examples/tvm_softmax.py's
two builds (td.cu: every tile op by tiledispatch; hybrid.cu: the
elementwise steps by TVM), write td_subTVM.cu, td_expTVM.cu, td_divTVM.cu
and td_allTVM.cu, each td.cu with that step's loop (sub, exp, fdiv, or all
three) taken from hybrid.cu, so that a GPU run says which step costs what.

    python3 splice.py DIR     # DIR has td.cu and hybrid.cu (--export DIR)
"""
import re
import sys
from pathlib import Path


def loops(src: str) -> list[str]:
    """The elementwise steps' loops (with tiledispatch's tid let), in order."""
    pat = (r'(?:\n  alignas\(64\) int tid_ptr_\d\[1\];\n  tid_ptr_\d\[0\] = '
           r'\(\(int\)threadIdx.x\);)?\n  for \(int s(?:_\d)? = 0;.*?\n  \}')
    return [m.group(0) for m in re.finditer(pat, src, re.S)]


def main() -> int:
    d = Path(sys.argv[1])
    td, hy = (d / "td.cu").read_text(), (d / "hybrid.cu").read_text()
    a, b = loops(td), loops(hy)
    if len(a) != 3 or len(b) != 3:
        sys.exit(f"expected 3 elementwise loops in each, got {len(a)} and {len(b)}")
    for i, name in enumerate(["sub", "exp", "div"]):
        (d / f"td_{name}TVM.cu").write_text(td.replace(a[i], b[i]))
    out = td
    for x, y in zip(a, b):
        out = out.replace(x, y)
    (d / "td_allTVM.cu").write_text(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
