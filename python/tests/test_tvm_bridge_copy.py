"""tiledispatch.tvm with Tx.copy against real TVM (apache-tvm 0.27.0.post1):
copy kernels compile inside `tvm.compile(..., tir_pipeline="tirx")` with
every copy dispatched by tiledispatch (stats()), each variant the one TVM
picks (vec_auto global<->shared with a swizzled shared tile, ldstmatrix,
fallback, a forced vec_128b with cache hints), and the CUDA TVM generates
holds tiledispatch's access (the PTX instruction and its byte-offset
address); tvm.compile compiles the CUDA for sm_90a, with nvcc where it is
on PATH (TVM_CUDA_COMPILE_MODE=nvcc; else TVM's default, NVRTC).

Skipped, with the reason, where TVM is not installed."""
import importlib.util
import re
import warnings
from pathlib import Path

import pytest

tvm = pytest.importorskip("tvm", reason="apache-tvm not installed (pip install apache-tvm==0.27.0.post1)")

import tiledispatch.tvm as tdtvm  # noqa: E402
from conftest import both, compile_cuda  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
# TVM's own copy tests (vendored unmodified): their kernel builders.
TVM_COPY = (ROOT / "tests" / "upstream" / "tvm_tests" / "tests" / "python" / "tirx" /
            "operator" / "tile_primitive" / "cuda" / "copy")


def tvm_test_module(name: str):
    spec = importlib.util.spec_from_file_location(f"tvm_copy_{name}", TVM_COPY / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    with warnings.catch_warnings():   # their `gpu` mark is registered by TVM's conftest
        warnings.simplefilter("ignore", pytest.PytestUnknownMarkWarning)
        spec.loader.exec_module(mod)
    return mod


# The bridge set up and put back around every test, and the compile
# helpers: conftest.py (shared with the other copy module).
pytestmark = pytest.mark.usefixtures("tvm_bridge")


def swizzled_round_trip(scope: str, n: int, shape: tuple, dtype: str):
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.layout import ComposeLayout, S, TileLayout

    layout = ComposeLayout(3, 3, 3, TileLayout(S[shape]))
    full = tuple(slice(0, d) for d in shape)
    copy = {"warp": Tx.warp.copy, "cta": Tx.cta.copy}[scope]

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, shape, dtype)
        B = T.match_buffer(B_ptr, shape, dtype)
        T.device_entry()
        T.cta_id([1])
        T.warp_id([n // 32])
        T.lane_id([32])
        T.thread_id([n])
        Sm = T.alloc_buffer(shape, dtype, scope="shared", layout=layout)
        copy(Sm[full], A[full])
        T.cuda.cta_sync()
        copy(B[full], Sm[full])

    return kernel


@pytest.mark.parametrize("scope,n,shape,dtype", [
    ("warp", 32, (32, 64), "float16"),
    ("cta", 128, (128, 64), "float16"),
    ("cta", 256, (64, 128), "float32"),
])
def test_vec_auto_swizzled_round_trip(scope, n, shape, dtype):
    """Global -> swizzled shared -> global: both copies vec_auto, 16-byte
    accesses on both sides, the shared address swizzled (an XOR) and
    given as a byte offset; TVM's own lowering picks the same accesses."""
    plain, ours, dispatched = both(swizzled_round_trip(scope, n, shape, dtype))
    assert dispatched == {"copy": {"vec_auto": 2}}
    for inst in ("ld.global.v4.u32", "st.shared.v4.u32", "ld.shared.v4.u32",
                 "st.global.v4.u32"):
        assert inst in ours and inst in plain
    assert ours != plain
    assert "tvm_builtin_pointer_offset" in plain and "tvm_builtin_pointer_offset" not in ours
    elem = 2 if dtype == "float16" else 4
    assert re.search(r"\(\(char\*\)\(&\(Sm_ptr\[0\]\)\)\) \+ \(.*\* %d\)\)" % elem, ours)
    assert "^" in ours                     # the swizzle


@pytest.mark.parametrize("direction,trans,num", [("ld", False, 4), ("st", True, 2),
                                                 ("ld", True, 1)])
def test_ldstmatrix(direction, trans, num):
    """TVM's own ldstmatrix kernels (warp scope, swizzled shared tile):
    tiledispatch picks ldstmatrix and emits the instruction TVM's test
    asserts."""
    m = tvm_test_module("test_ld_stmatrix")
    kernel, _ = m._build_warp_kernel(num, direction, trans, swizzle=True)
    plain, ours, dispatched = both(kernel)
    assert dispatched == {"copy": {"ldstmatrix": 1}}
    inst = (f"{'ldmatrix' if direction == 'ld' else 'stmatrix'}.sync.aligned.m8n8.x{num}"
            f"{'.trans' if trans else ''}.shared.b16")
    assert inst in ours and inst in plain


def test_fallback():
    """A CTA copy of 4x8 elements over 256 threads (32 does not divide
    into 256 threads): fallback in both directions, as TVM picks, with
    the thread gate."""
    m = tvm_test_module("test_fallback")
    kernel = m._build_round_trip_kernel("cta", 256, (4, 8), "float16")
    with pytest.warns(UserWarning) as plain_warned:
        plain = compile_cuda(kernel)
    tdtvm.install(strict=True)
    with pytest.warns(UserWarning) as ours_warned:
        ours = compile_cuda(kernel)
    assert tdtvm.stats() == {"dispatched": {"copy": {"fallback": 2}}, "handed_back": {}}
    assert "ld.global" not in ours and "threadIdx.x" in ours
    # The bridge warns as TVM's fallback does, in the same words.
    def said(rec):
        return sorted(str(w.message) for w in rec if "copy/fallback" in str(w.message))
    assert said(ours_warned) == said(plain_warned) == [
        "copy/fallback (scalar single-thread) picked for global -> shared at scope_kind=cta; "
        "all faster variants rejected.",
        "copy/fallback (scalar single-thread) picked for shared -> global at scope_kind=cta; "
        "all faster variants rejected."]


def test_forced_vec_128b_cache_hints():
    """dispatch="vec_128b" with cache="nc" and L1 / prefetch hints (TVM's
    own kernel): the forced variant wins and the load carries the hints."""
    m = tvm_test_module("test_vec_forced_cache")
    kernel = m._build_g2l2g_kernel(4, "int32", "vec_128b", cache="nc",
                                   l1_evict="L1::no_allocate", prefetch_size="L2::256B")
    plain, ours, dispatched = both(kernel)
    assert dispatched == {"copy": {"vec_128b": 2}}
    for src in (plain, ours):
        assert "ld.global.nc.L1::no_allocate.L2::256B.v4.u32" in src
        assert "st.global.v4.u32" in src


def test_forced_vec_g2s_nc():
    m = tvm_test_module("test_vec_forced_cache")
    _, ours, dispatched = both(m._build_g2s2g_kernel(4, "float32", "vec_128b", cache="nc"))
    assert dispatched == {"copy": {"vec_128b": 1}}
    assert "ld.global.nc.v4.u32" in ours and "st.shared.v4.u32" in ours


def block_tiled(rows: int, cols: int, tiles: int, dtype: str, start):
    """A -> Sm -> B, each CTA its own rows of the whole arrays: the
    regions start at start(bx, rows) (TVM's `A[bx * R:bx * R + R, :]`)."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (tiles * rows, cols), dtype)
        B = T.match_buffer(B_ptr, (tiles * rows, cols), dtype)
        T.device_entry()
        bx = T.cta_id([tiles])
        T.warp_id([4])
        T.lane_id([32])
        T.thread_id([128])
        Sm = T.alloc_buffer((rows, cols), dtype, scope="shared")
        Tx.cta.copy(Sm[:, :], A[start(bx, rows):start(bx, rows) + rows, :])
        T.cuda.cta_sync()
        Tx.cta.copy(B[start(bx, rows):start(bx, rows) + rows, :], Sm[:, :])

    return kernel


def test_block_tiled_region():
    """A region whose start is `bx * 64` is a tiledispatch call (the
    variable as blockIdx.x): both copies vec_auto, and the block offset
    is inside the 32-bit index as TVM's own code puts it."""
    plain, ours, dispatched = both(block_tiled(64, 128, 4, "float32", lambda bx, r: bx * r))
    assert dispatched == {"copy": {"vec_auto": 2}}
    for src in (plain, ours):
        assert "ld.global.v4.u32" in src and "st.global.v4.u32" in src
        assert "((int)blockIdx.x) * 8192)" in src
    assert "tvm_builtin_pointer_offset" in plain and "tvm_builtin_pointer_offset" not in ours


def test_block_tiled_region_offset():
    """`(bx + 1) * 64 - 32`: the constant part stays in the region's
    start and the block id's coefficient is folded in (an 8-byte
    aligned start in every block keeps 16-byte vectors for float16)."""
    _, ours, dispatched = both(block_tiled(32, 64, 4, "float16",
                                           lambda bx, r: (bx + 1) * 64 - 32))
    assert dispatched == {"copy": {"vec_auto": 2}}
    assert "ld.global.v4.u32" in ours and "((int)blockIdx.x) * 4096)" in ours


def test_block_tiled_region_not_affine():
    """A start that is not affine in the variables (`bx * bx`) goes back
    to TVM."""
    tdtvm.install()
    compile_cuda(block_tiled(32, 64, 4, "float16", lambda bx, r: bx * bx))
    assert tdtvm.stats()["handed_back"] == {
        "not expressible as a tiledispatch call": {"tirx.tile.copy": 2}}


def test_softmax_example_stages_with_copy():
    """examples/tvm_softmax.py: the kernel stages its tile and writes it
    back with Tx.cta.copy, and every tile op goes through tiledispatch
    (the example asserts it from stats(); its output says so too)."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, str(ROOT / "examples" / "tvm_softmax.py"), "--quiet"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.splitlines()
    assert ("tiledispatch chose: {'copy': {'vec_auto': 2}, 'exp': {'smem': 1}, "
            "'fdiv': {'smem': 1}, 'max': {'shared_rows': 1}, 'sub': {'smem': 1}, "
            "'sum': {'shared_rows': 1}}") in lines
    assert "handed back to TVM: {}" in lines
