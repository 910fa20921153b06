"""Writes tests/upstream/data/tma_matrix.tsv: TVM's 52-case TMA matrix, run on the wheel.

The cases are upstream test_tma.py's TMA_CASES (apache/tvm, read from the
mirror with git show, or from a file given with --test).  The mirror's test
targets a newer API than the installed wheel, so its imports are rewritten
to the wheel's module paths before it is imported (as
design/copy_async/probes/probe_matrix.py does).  For every case the wheel's
own planner runs (_build_auto_plan, or _build_explicit_plan for the
explicit cases) and its answer is written next to the case's inputs, so the
expected rows come from TVM, never from hand.  The test's own goldens are a
cross-check: a row whose answer differs from them stops the script.

Run with the wheel's Python:
  /work/main/build-python/venv/bin/python tests/upstream/tma_matrix.py \
      > tests/upstream/data/tma_matrix.tsv

Columns (tab-separated; arrays comma-separated, outermost first unless
said; a region is start:extent per dimension):
  id variant direction dtype s_dtype g_shape g_layout g_region g_offset
  s_shape s_layout s_region s_offset config arch
  result (ok|error)
  then for ok: descriptor dtype, dims, strides (bytes), boxes, element
  strides, coordinates (all CUDA order, innermost first), enums
  (interleave,swizzle,l2,oob), issue axes (extent/smem_stride, outermost
  first, '-' when none), smem start (the shared region's start indices),
  and the number of TMA instructions in the printed impl;
  for error: TVM's message in the dtype column, the rest empty.
"""

import importlib.util
import os
import subprocess
import sys
import tempfile

MIRROR = "/work/.mirror/apache+tvm/repo"
PATH = "tests/python/tirx/operator/tile_primitive/cuda/copy_async/test_tma.py"


def load_upstream(path):
    if path:
        with open(path, encoding="utf-8") as fh:
            src = fh.read()
    else:
        src = subprocess.run(["git", "-C", MIRROR, "show", f"HEAD:{PATH}"], check=True,
                             capture_output=True, text=True).stdout
    src = (src.replace("from tvm.arith import Analyzer", "from tvm.sym import Analyzer")
              .replace("from tvm.tirx import IntImm, StringImm, Var",
                       "from tvm.tirx import IntImm, Var\nfrom tvm.ir import StringImm")
              .replace("tvm.tirx.cuda.tile_primitive", "tvm.backend.cuda.tile_primitive")
              # The wheel has no Python TIR visitor; the test's visitor
              # classes are only defined, never used here.
              .replace("from tvm.tirx.stmt_functor import StmtExprVisitor",
                       "class StmtExprVisitor:\n    pass"))
    fn = os.path.join(tempfile.mkdtemp(), "upstream_test_tma.py")
    with open(fn, "w", encoding="utf-8") as fh:
        fh.write(src)
    spec = importlib.util.spec_from_file_location("upstream_test_tma", fn)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def ints(values):
    return ",".join(str(int(v)) for v in values)


def region_text(region, shape):
    region = region or tuple((0, e) for e in shape)
    return ",".join(f"{int(s)}:{int(e)}" for s, e in region)


def one_line(text):
    return " ".join(str(text).split())


def config_text(config):
    if not config:
        return "-"
    return ";".join(f"{k}={v}" for k, v in sorted(config.items()))


def main(argv):
    path = argv[argv.index("--test") + 1] if "--test" in argv else None
    tt = load_upstream(path)
    print("\t".join([
        "id", "variant", "direction", "dtype", "s_dtype", "g_shape", "g_layout", "g_region",
        "g_offset", "s_shape", "s_layout", "s_region", "s_offset", "config", "arch",
        "result", "desc_dtype", "dims", "strides", "boxes", "estrides", "coords", "enums",
        "issue", "smem_start", "n_tma"]))
    bad = 0
    for case in tt.TMA_CASES:
        case_id, kw = case.values
        variant = "tma_explicit" if case_id in tt._TMA_EXPLICIT_CASES else "tma_auto"
        g_shape = tuple(kw["g_shape"])
        s_shape = tuple(kw.get("s_shape") or g_shape)
        g_layout = kw.get("g_layout") or tt._plain_layout(g_shape)
        s_layout = kw.get("s_layout") or tt._plain_layout(s_shape)
        inputs = [
            case_id, variant, kw.get("direction", "g2s"), kw.get("dtype", "float16"),
            kw.get("s_dtype") or kw.get("dtype", "float16"), ints(g_shape),
            one_line(g_layout), region_text(kw.get("g_region"), g_shape),
            str(int(kw.get("g_elem_offset", 0))), ints(s_shape), one_line(s_layout),
            region_text(kw.get("s_region"), s_shape), str(int(kw.get("s_elem_offset", 0))),
            config_text(kw.get("config")), kw.get("target_arch", "sm_90a")]
        try:
            plan = tt._direct_plan(variant, **kw)
            impl, _, _ = tt._lower_direct(variant, **kw)
            s = plan.spec
            n_tma = impl.script().count('"bulk", "tensor"')
            issue = ",".join(f"{int(a.extent)}/{int(a.smem_stride)}"
                             for a in plan.issue_axes) or "-"
            out = ["ok", s.descriptor_dtype, ints(s.global_dims), ints(s.global_strides),
                   ints(s.box_dims), ints(s.element_strides), ints(s.coordinates),
                   ints((s.interleave, s.swizzle, s.l2_promotion, s.oob_fill)), issue,
                   ints(s.smem_start), str(n_tma)]
            if case_id in tt._TMA_CASE_GOLDENS:
                g = tt._TMA_CASE_GOLDENS[case_id]
                want = (g.dtype, ints(g.dims), ints(g.strides), ints(g.boxes))
                if want != tuple(out[1:5]):
                    print(f"{case_id}: wheel {out[1:5]} != test golden {want}",
                          file=sys.stderr)
                    bad += 1
        except Exception as e:  # noqa: BLE001 - TVM raises several types
            out = ["error", one_line(e)] + [""] * 9
        print("\t".join(inputs + out))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
