"""The upstream differential check (tests/upstream/differential.py) as part
of the Python suite: TVM's own choice for every conformance case equals
tiledispatch's, except the listed deviations (a case where TVM finds no
variant must be a no-match here too), and the bridge's conversion of TVM's
reduction calls chooses what the call file chooses; for copies, the
variant and the PTX access of TVM's code equal tiledispatch's."""
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("tvm", reason="apache-tvm not installed (pip install apache-tvm==0.27.0.post1)")

SCRIPT = Path(__file__).resolve().parents[2] / "tests" / "upstream" / "differential.py"


def test_differential():
    r = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=1200)
    tail = r.stdout[-3000:]
    assert r.returncode == 0, tail + r.stderr[-2000:]
    assert "unexplained disagreements (or bridge round-trip mismatches): 0" in r.stdout
    # Every path was exercised against TVM.
    for path in ("local", "shared", "packed_add_sum", "3input_maxmin", "reg", "smem", "none"):
        assert f"\n{path} | " in r.stdout, tail
    # Every elementwise op has a case that ran against TVM.
    for op in ("zero", "fill", "reciprocal", "sqrt", "exp", "exp2", "log2", "silu",
               "add", "sub", "mul", "fdiv", "maximum", "cast", "fma"):
        assert f"\n{op} | " in r.stdout, tail
    # The copy cases ran against TVM too (copy_differential.py): every
    # copy variant had a case, and nothing differs that is not listed.
    for v in ("fallback", "ldstmatrix", "vec_auto", "vec_16b", "vec_32b", "vec_64b",
              "vec_128b", "vec_256b", "ldgsts", "tma_auto", "tma_explicit",
              "tmem<->local",
              "none"):
        assert f"\ncopy {v} | " in r.stdout, tail
    assert "copy differences not listed as deviations: 0" in r.stdout, tail


BOTH = Path(__file__).resolve().parents[2] / "tests" / "upstream" / "both_ways.py"


def test_both_ways_sample(tmp_path):
    """A sample of both_ways.py: a local case both TVM and the bridge lower,
    a packed sm100 case and a shared_rows case (bridge only on the released
    wheel); the programs compile with nvcc where it is installed."""
    import shutil
    names = ["local_sum_region_keepdim", "packed_sum_65", "maxmin_min_10_accum",
             "rows_f16_r16x256_sum", "shared_warpgroup256_sum_accum"]
    r = subprocess.run([sys.executable, str(BOTH), str(tmp_path), *names],
                       capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    summary = r.stdout.strip().splitlines()[-2]
    assert "cases=5 tvm=3 bridge=5 both=3" in summary, r.stdout
    if shutil.which("nvcc"):
        assert "compiled_tvm=3 compiled_bridge=5" in summary, r.stdout
    for n in names:
        assert (tmp_path / f"{n}.bridge.cu").exists()


BRIDGE_CA = Path(__file__).resolve().parents[2] / "tests" / "upstream" / "bridge_copy_async.py"


def test_bridge_copy_async_cases():
    """Every copy_async conformance case through tvm.compile with and
    without the bridge (tests/upstream/bridge_copy_async.py): the bridge
    treats each call as its call file says tiledispatch does (the
    expected variant dispatched it, or no variant matched), every one of
    TVM's six copy_async variants dispatched some case, and nothing went
    back as not bridged."""
    r = subprocess.run([sys.executable, str(BRIDGE_CA)], capture_output=True, text=True,
                       timeout=1200)
    tail = r.stdout[-3000:]
    assert r.returncode == 0, tail + r.stderr[-2000:]
    assert ("cases the bridge did not treat as the call file expects (or whose "
            "instructions differ unlisted): 0") in r.stdout, tail
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("dispatched by"))
    for v in ("dsmem", "ldgsts", "smem->tmem", "tma_auto", "tma_explicit", "tmem<->local"):
        assert f" {v} " in line, line
    assert "not bridged yet" not in r.stdout, tail
