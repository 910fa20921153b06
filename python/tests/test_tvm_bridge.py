"""tiledispatch.tvm against real TVM (apache-tvm 0.27.0.post1): reductions
lowered through the bridge inside tvm.compile(..., tir_pipeline="tirx").

Skipped, with the reason, where TVM is not installed (scripts/test-python
installs it with TD_WITH_TVM=1)."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

tvm = pytest.importorskip("tvm", reason="apache-tvm not installed (pip install apache-tvm==0.27.0.post1)")

import tiledispatch as td  # noqa: E402
import tiledispatch.tvm as tdtvm  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "upstream"))
import tvm_cases as tc  # noqa: E402

CASES = {c.name: c for c in tc.CASES}


@pytest.fixture(autouse=True)
def _restore():
    yield
    tdtvm.uninstall()


def dispatcher():
    from tvm.tirx.operator.tile_primitive import dispatcher as d
    return d


def test_install_uninstall():
    original = dispatcher().run_dispatch
    assert not tdtvm.installed()
    tdtvm.install()
    assert tdtvm.installed() and dispatcher().run_dispatch is not original
    tdtvm.install(td.Registry())          # again: replaces the registry only
    tdtvm.uninstall()
    assert not tdtvm.installed() and dispatcher().run_dispatch is original
    tdtvm.uninstall()                     # a no-op


def test_seed_program_same_cuda_as_tvm():
    case = CASES["seed_local_sum"]
    own = tc.compile_cuda(case)
    tdtvm.install()
    assert tc.compile_cuda(case) == own


@pytest.mark.parametrize("name", [c.name for c in tc.CASES])
def test_bridge_lowers(name):
    case = CASES[name]
    if case.released_tvm_fails:
        with pytest.raises(Exception, match="dispatch failed"):
            tc.compile_cuda(case)
    tdtvm.install()
    src = tc.compile_cuda(case)
    assert "f_kernel" in src
    nvcc = shutil.which("nvcc")
    if nvcc:
        r = subprocess.run([nvcc, "-arch=sm_90a", "-x", "cu", "-c", "-o", "/dev/null", "-"],
                           input=src, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


def test_calls_really_go_through_tiledispatch():
    tdtvm.install(td.Registry(default_rules=False))
    with pytest.raises(Exception, match="tiledispatch: dispatch failed") as e:
        tc.compile_cuda(CASES["seed_local_sum"])
    assert "no registered variants" in str(e.value)


def test_to_call():
    seen = []
    real = tdtvm.to_call

    def spy(op_call, sctx):
        call, bufs = real(op_call, sctx)
        seen.append((call, sorted(bufs)))
        return call, bufs

    tdtvm.install()
    tdtvm.to_call = spy
    try:
        tc.compile_cuda(CASES["shared_cta_sum_4x8"])
    finally:
        tdtvm.to_call = real
    (call, names), = seen
    assert names == ["dst", "src"]
    assert (call.op, call.target, call.arch, call.scope) == ("sum", "cuda", "sm_90a", "cta")
    assert call.launch == {"threadIdx.x": 32, "blockIdx.x": 1}
    assert call.buffers["src"] == {"scope": "shared", "dtype": "float32", "shape": (4, 8),
                                   "layout": "S[(4, 8) : (8, 1)]"}
    assert (call.dst, call.src, call.axes, call.accum) == ("dst[0:4]", "src[0:4, 0:8]", (-1,), False)
    assert tdtvm.default_registry().select(call) == td.Registry().select(call)


def test_layout_text():
    from tvm.tirx.layout import S, TileLayout, laneid
    assert tdtvm._layout_text(TileLayout(S[(32, 4):(1 @ laneid, 1)])) == "S[(32, 4) : (1@laneid, 1)]"
    assert tdtvm._layout_text(None) is None


@pytest.mark.parametrize("name", ["warp_sum_f32_4_w4", "wg_sum_f32_x2", "view_wgmma_sum_f16_w4",
                                  "warp_min_gapped_accum", "local_sum_3d_axes_0_2",
                                  "packed_sum_65", "maxmin_min_10_accum",
                                  "rows_cta32_sum", "rows_f16_r8x36_max", "rows_warp128_sum"])
def test_bridge_lowers_conformance_case(name):
    """Register (view / shuffle) paths through the bridge: the body indexes
    per-thread storage, bound to Buffer.local() views; the packed sm100 PTX
    statements and shared_rows's vector loads parse in TVM 0.27."""
    import differential as D
    call = td.Call.from_yaml(Path(D.ROOT) / "tests" / "conformance" / f"{name}.yaml")
    assert tdtvm.default_registry().select(call) == td.Registry().select(call)
    src = D.bridge_source(call, td.Registry())
    variant = td.Registry().select(call)
    if variant in ("packed_add_sum", "3input_maxmin"):
        assert "tvm_builtin_ptx_" in src       # TVM's own PTX helpers
    nvcc = shutil.which("nvcc")
    if nvcc:
        arch = "sm_100a" if (call.arch or "").startswith("sm_100") else "sm_90a"
        assert D.nvcc_ok(src, arch) == "ok"
