"""Run upstream test_dsmem.py's dispatch cases through the wheel's dsmem impl.

Builds CopyAsync(dst, src, config={mbar, remote_cta_id}) on shared.dyn buffers
with the test's layouts (DSMEM_CONFIGS, test_dsmem.py:94-115) and calls
copy_dsmem_impl with a thread-scope DispatchContext, as the test does.
Prints per case: the number of bulk-copy instructions (printed calls times
the trip counts of the loops around them), the chunk bytes, or the decline.
Usage: python probe_dsmem.py
"""

import re

import tvm
from tvm.backend.cuda.tile_primitive.copy_async.dsmem import copy_dsmem_impl
from tvm.ir import Range
from tvm.tirx import IntImm, Var
from tvm.tirx.exec_scope import ExecScope
from tvm.tirx.layout import S, TileLayout
from tvm.tirx.operator.tile_primitive.ops import CopyAsync
from tvm.tirx.stmt import BufferRegion
from tvm.tirx.tile_primitive import DispatchContext

CASES = [
    ("contiguous-2d", (128, 64), "float16", S[128, 64], S[128, 64], 1),
    ("contiguous-1d", (256,), "float16", S[256], S[256], 1),
    ("stride-gap", (8, 128), "float16", S[(8, 128):(256, 1)], S[(8, 128):(256, 1)], 8),
    ("partial-contiguity-diff-stride", (8, 128), "float16", S[(8, 128):(256, 1)],
     S[(8, 128):(512, 1)], 8),
    ("incompatible-row-vs-col", (4, 64), "float16", S[4, 64], S[(4, 64):(1, 4)], "fail"),
]


for name, shape, dtype, src_spec, dst_spec, expected in CASES:
    src = tvm.tirx.decl_buffer(shape, dtype, "src_smem", scope="shared.dyn",
                               layout=TileLayout(src_spec))
    dst = tvm.tirx.decl_buffer(shape, dtype, "dst_smem", scope="shared.dyn",
                               layout=TileLayout(dst_spec))
    rng = [Range.from_min_extent(0, e) for e in shape]
    op = CopyAsync(BufferRegion(dst, rng), BufferRegion(src, rng),
                   config={"mbar": Var("mbar", "handle"), "remote_cta_id": IntImm("int32", 1)})
    sctx = DispatchContext(tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}),
                           ExecScope("thread"), {}, {})
    try:
        text = copy_dsmem_impl(op, sctx).script()
        calls = text.count('"async", "bulk"')
        trips = 1
        for m in re.finditer(r"in range\((\d+)\)|in T.grid\(([\d, ]+)\)", text):
            for v in (m.group(1) or m.group(2)).split(","):
                trips *= int(v)
        sizes = re.findall(r"T.uint32\((\d+)\), T.Cast", text)
        print(f"{name}: bulk copies {calls * trips} (expected {expected}), chunk bytes {sizes}")
    except Exception as e:  # noqa: BLE001
        print(f"{name}: {type(e).__name__}: {e} (expected {expected})")
