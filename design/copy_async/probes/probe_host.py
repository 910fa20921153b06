"""Print the host-side tensor-map encode TVM 0.27 emits for a few TMA copies.

Builds each call the way upstream's test_tma.py _make_op does (the mirror's
test file targets a newer API than the wheel, so it is not imported) and calls
copy_tma_auto_impl directly with a thread-scope DispatchContext.
Usage: python probe_host.py
"""

import importlib.util
import sys

import tvm
from tvm.tirx.layout import ComposeLayout, S, TileLayout

from tvm.backend.cuda.tile_primitive.copy_async.tma import copy_tma_auto_impl
from tvm.ir import Range
from tvm.tirx import Var
from tvm.tirx.exec_scope import ExecScope
from tvm.tirx.operator.tile_primitive.ops import CopyAsync
from tvm.tirx.stmt import BufferRegion
from tvm.tirx.tile_primitive import DispatchContext


def _lower(g_shape, s_shape, g_region, s_layout=None, dtype="float16", direction="g2s",
           config=None, arch="sm_90a"):
    """Build one CopyAsync call by hand (as upstream's _make_op does) and lower it."""
    g_buf = tvm.tirx.decl_buffer(g_shape, dtype, "A", layout=TileLayout(S[tuple(g_shape)]))
    s_buf = tvm.tirx.decl_buffer(s_shape, dtype, "A_smem", scope="shared.dyn",
                                 layout=s_layout or TileLayout(S[tuple(s_shape)]))
    config = dict(config or {})
    g_r = BufferRegion(g_buf, [Range.from_min_extent(a, b) for a, b in g_region])
    s_r = BufferRegion(s_buf, [Range.from_min_extent(0, e) for e in s_shape])
    if direction == "g2s":
        config.setdefault("mbar", Var("mbar", "handle"))
        op = CopyAsync(s_r, g_r, config=config)
    else:
        op = CopyAsync(g_r, s_r, config=config)
    sctx = DispatchContext(tvm.target.Target({"kind": "cuda", "arch": arch}),
                           ExecScope("thread"), {}, {})
    impl = copy_tma_auto_impl(op, sctx)
    return impl, list(sctx.callbacks.get("host_init_stmt", [])), sctx


CASES = {
    "g2s_128x64_f16": dict(g_shape=(256, 64), s_shape=(128, 64), g_region=((0, 128), (0, 64))),
    "g2s_128x64_f16_sw128": dict(
        g_shape=(256, 64), s_shape=(128, 64), g_region=((128, 128), (0, 64)),
        s_layout=ComposeLayout(3, 3, 3, TileLayout(S[128, 64]))),
    "g2s_16x512_f16_promoted": dict(g_shape=(512, 512), s_shape=(16, 512), g_region=((0, 16), (0, 512))),
    "s2g_64x64_f32_add": dict(g_shape=(256, 64), s_shape=(64, 64), g_region=((64, 64), (0, 64)),
                              dtype="float32", direction="s2g", config={"use_tma_reduce": "add"}),
    "g2s_128x128_f16_sw128_two_issues": dict(
        g_shape=(256, 128), s_shape=(128, 128), g_region=((0, 128), (0, 128)),
        s_layout=ComposeLayout(3, 3, 3, TileLayout(S[(128, 2, 64):(64, 8192, 1)]))),
    # Upstream's test_auto_promotion_preserves_payload_and_shared_pointer: uint8 (64, 8).
    "g2s_64x8_uint8_promoted": dict(g_shape=(64, 8), s_shape=(64, 8), g_region=((0, 64), (0, 8)),
                                    dtype="uint8"),
    # The swizzle's 16-byte chunk: ComposeLayout(3, 3, 3) moves 8-element chunks,
    # 32 bytes for float32 (TMA's 128B swizzle moves 16-byte chunks: (2, 3, 3)).
    "g2s_64x32_f32_swz333_wrong_chunk": dict(
        g_shape=(64, 32), s_shape=(64, 32), g_region=((0, 64), (0, 32)), dtype="float32",
        s_layout=ComposeLayout(3, 3, 3, TileLayout(S[64, 32]))),
    "g2s_64x32_f32_swz233": dict(
        g_shape=(64, 32), s_shape=(64, 32), g_region=((0, 64), (0, 32)), dtype="float32",
        s_layout=ComposeLayout(2, 3, 3, TileLayout(S[64, 32]))),
}

for name in sys.argv[1:] or CASES:
    kw = CASES[name]
    print(f"=== {name}")
    try:
        impl, host, sctx = _lower(**kw)
        for st in host:
            print("--- host init")
            print(st)
        print("--- device")
        print(impl.script())
    except Exception as e:  # noqa: BLE001
        print("--- ERROR", type(e).__name__, str(e)[:2000])
