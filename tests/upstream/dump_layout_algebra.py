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
# is_tile_inner (td__lay_is_tile_inner): the shared-memory swizzle atoms of
# gemm_async (tma_utils) against mma_shared_layout, fragments against their
# tilings, and refusals.  Run under the CUDA target, as dispatch does.
import tvm  # noqa: E402
from tvm.backend.cuda.tile_primitive import tma_utils as tu  # noqa: E402
from tvm.tirx.layout import tx  # noqa: E402


def tile_inner(name, atom, tiled, tshape, ishape):
    try:
        r = atom.is_tile_inner(tiled, tshape, ishape)
    except Exception as e:
        r = "raises " + str(e).splitlines()[0][:160]
    print(name, r)


with tvm.target.Target({"kind": "cuda", "arch": "sm_100a"}):
    for mode in (tu.SwizzleMode.SWIZZLE_128B_ATOM, tu.SwizzleMode.SWIZZLE_64B_ATOM,
                 tu.SwizzleMode.SWIZZLE_32B_ATOM):
        atom = tu.mma_atom_layout("float16", mode)
        shared = tu.mma_shared_layout("float16", mode, (128, 64))
        print("atom", mode.name, atom, "shared", shared)
        tile_inner(f"tile_inner_{mode.name}", atom, shared, [128, 64], tu.mma_atom_shape("float16", mode))
    a128 = tu.mma_atom_layout("float16", tu.SwizzleMode.SWIZZLE_128B_ATOM)
    s128 = tu.mma_shared_layout("float16", tu.SwizzleMode.SWIZZLE_128B_ATOM, (128, 64))
    mn = ComposeLayout(3, 3, 3, TileLayout(S[(64, 8):(1, 64)]))
    tile_inner("tile_inner_mn_vs_k", mn, s128, [128, 64], [64, 8])
    a64 = tu.mma_atom_layout("float16", tu.SwizzleMode.SWIZZLE_64B_ATOM)
    tile_inner("tile_inner_other_swizzle", a64, s128, [128, 64], [8, 32])
    tile_inner("tile_inner_plain_vs_swizzle", TileLayout(S[(8, 64):(64, 1)]), s128, [128, 64], [8, 64])
    D = TileLayout(S[(2, 8, 4, 2):(2, 4 @ L, 1 @ L, 1)])
    tile_inner("tile_inner_frag", D, D.tile_to([32, 16], [16, 8]), [32, 16], [16, 8])
    A = TileLayout(S[(2, 8, 2, 4, 2):(2, 4 @ L, 4, 1 @ L, 1)])
    tile_inner("tile_inner_frag_a", A, A.tile_to([32, 32], [16, 16]), [32, 32], [16, 16])
    tile_inner("tile_inner_offset", TileLayout(S[(2, 8):(8, 1)]), TileLayout(S[(4, 8):(8, 1)] + 3), [4, 8], [2, 8])
    tile_inner("tile_inner_span", TileLayout(S[(2, 2):(2, 1)]), TileLayout(S[(2, 2, 2):(3, 2, 1)]), [4, 2], [2, 2])
    tile_inner("tile_inner_stride", TileLayout(S[(2, 8):(8, 1)]), TileLayout(S[(4, 8):(16, 2)]), [4, 8], [2, 8])
    tile_inner("tile_inner_replica", TileLayout(S[(2, 8):(8, 1)]), TileLayout(S[(4, 8):(8, 1)] + R[2:1 @ L]), [4, 8], [2, 8])
    tile_inner("tile_inner_scope", TileLayout(S[32:1 @ L]), TileLayout(S[(2, 32):(32 @ tx, 1 @ tx)]), [2, 32], [1, 32])
    tile_inner("tile_inner_not_divisible", TileLayout(S[(3, 8):(8, 1)]), TileLayout(S[(4, 8):(8, 1)]), [4, 8], [3, 8])
