"""Run upstream test_tma.py's 52-case TMA matrix through the installed wheel.

The mirror's test file targets a newer API than the wheel; this script reads it
from the mirror (git show), rewrites its imports to the wheel's module paths
(tvm.arith -> tvm.sym, tvm.tirx.cuda -> tvm.backend.cuda, StringImm from
tvm.ir, a stand-in StmtExprVisitor base: the wheel has no Python TIR visitor),
imports it, and for every TMA_CASES entry lowers the call with the
wheel's impl (tma_explicit for _TMA_EXPLICIT_CASES, tma_auto otherwise).
Output, one line per case (tab-separated):
  id  variant  ok|error  dtype  dims  strides  boxes  coords  enums(interleave,swizzle,l2,oob)
  n_tma (TMA instructions in the printed impl)  test_expectation
where test_expectation is the test's golden row or error regex, so a mismatch
between the wheel and the newer test shows.
With --validator it prints the 24-row validator matrix instead
(test_shared_validator_static_boundary_matrix): the mutated spec field values,
the expected rule, and every DISPROVEN finding of the wheel's validator
(rule: message) for that spec.
Usage: python probe_matrix.py > out_matrix.tsv
       python probe_matrix.py --validator > out_validator.tsv
"""

import importlib.util
import os
import subprocess
import sys
import tempfile

MIRROR = "/work/.mirror/apache+tvm/repo"
PATH = "tests/python/tirx/operator/tile_primitive/cuda/copy_async/test_tma.py"

src = subprocess.run(["git", "-C", MIRROR, "show", f"HEAD:{PATH}"], check=True,
                     capture_output=True, text=True).stdout
src = (src.replace("from tvm.arith import Analyzer", "from tvm.sym import Analyzer")
          .replace("from tvm.tirx import IntImm, StringImm, Var",
                   "from tvm.tirx import IntImm, Var\nfrom tvm.ir import StringImm")
          .replace("tvm.tirx.cuda.tile_primitive", "tvm.backend.cuda.tile_primitive")
          # The wheel has no Python TIR visitor; the test's visitor classes are
          # only defined, the counts below come from the printed TIR instead.
          .replace("from tvm.tirx.stmt_functor import StmtExprVisitor",
                   "class StmtExprVisitor:\n    pass"))
fn = os.path.join(tempfile.mkdtemp(), "upstream_test_tma.py")
with open(fn, "w") as fh:
    fh.write(src)
spec = importlib.util.spec_from_file_location("upstream_test_tma", fn)
tt = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tt)


def ints(values):
    return ",".join(str(int(v)) for v in values)


if "--validator" in sys.argv:
    import dataclasses

    base = tt._make_spec()
    marks = [m for m in tt.test_shared_validator_static_boundary_matrix.pytestmark
             if m.name == "parametrize"]
    print("\t".join(["row", "expected_rule", "changed_fields", "disproven_findings"]))
    for i, (mutate, rule) in enumerate(marks[0].args[1]):
        spec = mutate(base)
        changed = {f.name: getattr(spec, f.name) for f in dataclasses.fields(spec)
                   if str(getattr(spec, f.name)) != str(getattr(base, f.name))}
        found = [f"{f.rule}: {f.message}" for f in tt.validate_tensor_map_spec(spec)
                 if f.status == tt.ProofStatus.DISPROVEN]
        print("\t".join([str(i), rule, repr(changed), " | ".join(found)]))
    sys.exit(0)

print("\t".join(["id", "variant", "result", "dtype", "dims", "strides", "boxes", "coords",
                 "enums", "n_tma", "test_expectation"]))
for case in tt.TMA_CASES:
    case_id, kwargs = case.values
    variant = "tma_explicit" if case_id in tt._TMA_EXPLICIT_CASES else "tma_auto"
    if case_id in tt._TMA_CASE_ERRORS:
        expect = "error /" + tt._TMA_CASE_ERRORS[case_id] + "/"
    else:
        g = tt._TMA_CASE_GOLDENS[case_id]
        expect = f"{g.dtype} {ints(g.dims)} {ints(g.strides)} {ints(g.boxes)} {ints(g.coordinates)} {ints(g.enums)}"
    try:
        plan = tt._direct_plan(variant, **kwargs)
        impl, host, _ = tt._lower_direct(variant, **kwargs)
        s = plan.spec
        text = impl.script()
        n = text.count('"bulk", "tensor"')
        row = [case_id, variant, "ok", s.descriptor_dtype, ints(s.global_dims),
               ints(s.global_strides), ints(s.box_dims), ints(s.coordinates),
               ints((s.interleave, s.swizzle, s.l2_promotion, s.oob_fill)), str(n), expect]
    except Exception as e:  # noqa: BLE001
        msg = str(e).replace("\t", " ").replace("\n", " ")[:400]
        row = [case_id, variant, "error", msg, "", "", "", "", "", "", expect]
    print("\t".join(row))
    sys.stdout.flush()
