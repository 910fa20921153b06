#!/usr/bin/env python3
"""Prints what TVM 0.27's TileLayout methods return for the inputs of
tests/layout/test_layout_algebra.c (slice, permute_dims, permute_by_groups,
the copy helpers _sort_by_stride_desc / _carve_tail / strip_swizzle_to_tile,
apply with a shape, a ComposeLayout's apply).  The C tests hold these values
literally; rerun this with the venv's python to see them:

    /work/main/build-python/venv/bin/python tests/upstream/dump_layout_algebra.py
"""
from tvm.tirx.layout import Axis, ComposeLayout, Iter, S, TileLayout
from tvm.backend.cuda.tile_primitive.copy._common import _carve_tail, _sort_by_stride_desc
from tvm.backend.cuda.tile_primitive.layout_utils import strip_swizzle_to_tile

L = Axis.laneid
print("slice1", TileLayout(S[(4, 8)]).slice([4, 8], [(1, 2), (0, 8)]))
print("slice2", TileLayout(S[(4, 35)]).slice([4, 35], [(0, 4), (3, 35)]))
print("slice3", TileLayout(S[(16, 4, 4, 4)]).slice([16, 4, 4, 4], [(0, 1), (0, 4), (1, 2), (0, 4)]))
print("slice4", TileLayout(S[(32, 2, 2):(1 @ L, 2, 4)]).slice([32, 2, 2], [(0, 32), (0, 2), (1, 2)]))
print("slice5", TileLayout(S[(128, 64)]).slice([128, 64], [(0, 128), (8, 40)]))
print("slice6", TileLayout(S[(64, 64)]).slice([64, 64], [(32, 64), (32, 64)]))
print("slice7", TileLayout(S[(4, 8)]).slice([2, 16], [(0, 2), (4, 12)]))
t = TileLayout(S[(2, 3, 4):(1, 8, 2)])
print("permute_dims", t.permute_dims([2, 0, 1]))
g, seps = TileLayout(S[(2, 3, 4, 5)]).group([6, 20])
print("group", g, list(seps))
print("permute_by_groups", g.permute_by_groups(list(seps), [1, 0]))
print("sort", _sort_by_stride_desc(TileLayout(S[(2, 3, 4):(4, 8, 4)])))
print("sort2", _sort_by_stride_desc(TileLayout(S[(4, 8):(1, 4)])))
print("carve8", _carve_tail(list(TileLayout(S[(32, 64)]).shard), 8))
print("carve_multi", _carve_tail(list(TileLayout(S[(4, 2, 4)]).shard), 16))
print("carve_fail", _carve_tail(list(TileLayout(S[(6, 3)]).shard), 4))
print("carve_fail2", _carve_tail(list(TileLayout(S[(4, 3)]).shard), 2))
print("strip_bare", strip_swizzle_to_tile(ComposeLayout(3, 3, 3, TileLayout(S[(512,)])), lambda: [128, 64]))
print("strip_same", strip_swizzle_to_tile(ComposeLayout(3, 3, 3, TileLayout(S[(512,)])), lambda: [8, 64]))
print("strip_tile", strip_swizzle_to_tile(ComposeLayout(2, 3, 3, TileLayout(S[(64, 2, 32):(32, 2048, 1)])), lambda: [64, 64]))
print("apply_shape", TileLayout(S[(2, 16):(20, 1)]).apply(1, 3, shape=[4, 8]))
print("apply_shape2", TileLayout(S[(8, 4, 8):(8, 1024, 1)]).apply(3, 17, 5, shape=[8, 32, 8]))
c = ComposeLayout(3, 3, 3, TileLayout(S[(32, 64)]))
print("swz_inner", [int(c.apply(i)["m"]) for i in (0, 8, 64, 72, 200, 1000)])
c = ComposeLayout(3, 3, 3, TileLayout(S[(32, 64)]), False)
print("swz_outer", [int(c.apply(i)["m"]) for i in (0, 8, 64, 72, 200, 1000)])
c = ComposeLayout(2, 3, 3, TileLayout(S[(4096,)]))
print("swz_p2", [int(c.apply(i)["m"]) for i in (0, 4, 32, 36, 100, 999)])
print("slice8", TileLayout(S[(4, 8)]).slice([4, 8], [(1, 3), (2, 6)]))
print("slice_none", TileLayout(S[(4, 4):(100, 1)]).slice([16], [(2, 10)]))
print("group_fail", end=" ")
try:
    TileLayout(S[(6, 4)]).group([4, 6])
    print("ok")
except Exception as e:
    print(type(e).__name__)
# TVM's ICHECK texts of an impossible group (td__lay_group_why).
for name, lay_, shape in (("group_why", TileLayout(S[(32, 2):(1 @ L, 1)]), [16, 8]),
                          ("group_why2", TileLayout(S[(6, 4)]), [4, 6]),
                          ("group_why3", TileLayout(S[(4, 4)]), [4, 4, 2]),
                          ("group_why4", TileLayout(S[(4, 4)]), [2])):
    try:
        lay_.group(shape)
    except Exception as e:
        print(name, str(e).splitlines()[0])
# How TVM prints layouts (td__lay_format_tvm).
from tvm.tirx.layout import R
print("tvm_print", TileLayout(S[(2, 8, 4, 2):(2, 4 @ L, 1 @ L, 1)] + R[2:4 @ L] + 3))
print("tvm_print2", TileLayout(S[(4,):(1,)]))
print("tvm_print3", TileLayout(S[(2, 8):(2, 4 @ L)] + 3 + 2 @ L))
# tile_to of the accumulator fragment (more in dump_gemm_frag.py).
print("tile_to", TileLayout(S[(2, 8, 4, 2):(2, 4 @ L, 1 @ L, 1)]).tile_to([32, 16], [16, 8]))
