"""Phase C groundwork (design/gemm/plan.md 3.7): how TVM 0.27 lowers the
block-scaled gemm_async (SFA / SFB in tensor memory), at the dispatch level
(gemm_async_tcgen05_impl on a constructed GemmAsync call, as upstream's
test_gemm_tcgen05_preserves_block_scale_tmem_lane_bases does), and the
PTX helper of one block-scaled MMA from a full compile.  Run with the
venv's python:

    /work/main/build-python/venv/bin/python design/gemm/probes/block_scaled_probe.py \
        > design/gemm/probes/out_block_scaled.txt
"""
import re

import tvm
from tvm.ir import Range
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.cuda.tile_primitive.gemm_async.tcgen05 import (gemm_async_tcgen05_impl,
                                                             sf_tmem_layout)
from tvm.tirx.cuda.tile_primitive.tma_utils import SwizzleMode, mma_shared_layout
from tvm.tirx.exec_scope import ExecScope
from tvm.tirx.layout import TileLayout, TLane, tmem_datapath_layout
from tvm.tirx.operator.tile_primitive.ops import GemmAsync
from tvm.tirx.stmt import BufferRegion
from tvm.tirx.tile_primitive import DispatchContext


def full(buf):
    return BufferRegion(buf, [Range.from_min_extent(0, s) for s in buf.shape])


def call(name, *, M=128, N=64, K=128, data="float8_e4m3fn", sf="float8_e8m0fnu",
         sf_k=None, sw=SwizzleMode.SWIZZLE_128B_ATOM, cfg=None, sfa_lane=0, sf_scope="tmem",
         sfa_rows=None, scope="thread"):
    mma_k = 64 if data == "float4_e2m1fn" else 32
    per = {"float8_e4m3fn": 1, "float8_e5m2": 1}.get(data, 2 if sf == "float8_e8m0fnu" else 4)
    sf_k = sf_k or per * (K // mma_k)
    A = tvm.tirx.decl_buffer((M, K), data, "A_smem", scope="shared.dyn",
                             layout=mma_shared_layout(data, sw, (M, K)))
    B = tvm.tirx.decl_buffer((N, K), data, "B_smem", scope="shared.dyn",
                             layout=mma_shared_layout(data, sw, (N, K)))
    C = tvm.tirx.decl_buffer((M, N), "float32", "C_tmem", scope="tmem",
                             layout=tmem_datapath_layout("D", M, N)
                             ).with_allocated_addr([tvm.tirx.IntImm("uint32", 0)])
    ra = sfa_rows or M
    la = sf_tmem_layout(ra, SF_K=sf_k, sf_per_mma=per)
    if sfa_lane:
        la = TileLayout.from_iters(la.shard, la.replica, {TLane: sfa_lane})
    lb = sf_tmem_layout(N if N % 32 == 0 else 128, SF_K=sf_k, sf_per_mma=per)
    SFA = tvm.tirx.decl_buffer((ra, sf_k), sf, "SFA_tmem", scope=sf_scope, layout=la)
    SFB = tvm.tirx.decl_buffer((N if N % 32 == 0 else 128, sf_k), sf, "SFB_tmem",
                               scope=sf_scope, layout=lb)
    if sf_scope == "tmem":
        SFA = SFA.with_allocated_addr([tvm.tirx.IntImm("uint32", 256)])
        SFB = SFB.with_allocated_addr([tvm.tirx.IntImm("uint32", 320)])
    op = GemmAsync(full(C), full(A), full(B), full(SFA), full(SFB), False, False, False,
                   config=dict(cfg or {}))
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_100a"})
    sctx = DispatchContext(target, ExecScope(scope), {}, {}, scope_kind=scope)
    print(f"==== {name}: M={M} N={N} K={K} A/B={data} SF={sf} SF_K={sf_k} sf_per_mma={per} "
          f"cfg={cfg or {}}")
    print(f"SFA layout {la}\nSFB layout {lb}")
    try:
        print(gemm_async_tcgen05_impl(op, sctx).script())
    except Exception as e:  # TVM's reason
        print("ERROR", type(e).__name__, re.sub(r"\s+", " ", str(e))[:400])


call("fp8_e8m0_cta1 (block_scaled_fp8_cta_group_1's shape, K = 128: 4 MMAs)")
call("fp8_e8m0_sf_id (SF_K 4 packed in one cell: sf_id rotates per ki)", sf_k=4 * 4)
call("nvfp4 (e2m1 + e4m3 scales, scale_vec::4X)", K=128, data="float4_e2m1fn",
     sf="float8_e4m3fn", sw=SwizzleMode.SWIZZLE_32B_ATOM)
call("mxfp4 (e2m1 + e8m0 scales, scale_vec::2X)", K=128, data="float4_e2m1fn",
     sf="float8_e8m0fnu", sw=SwizzleMode.SWIZZLE_32B_ATOM)
call("fp8 lane base 1 on SFA (preserves_block_scale_tmem_lane_bases)", sfa_lane=1,
     cfg={"mma_m": 128, "mma_n": 64})
call("fp8 descI passed (block-scaled keeps it)", cfg={"descI": 12345})
call("fp8 smem_desc=encode (refused for block scaling)", cfg={"smem_desc": "encode"})
call("rejects SF in shared memory", sf_scope="shared.dyn")
call("rejects SF dtype float16", sf="float16")
call("rejects SFA rows 256 != M", sfa_rows=256)
call("rejects A float16 block-scaled", data="float16")

# The PTX helper of one block-scaled MMA, from a full compile.
M, N, K = 128, 64, 128
Al = mma_shared_layout("float8_e4m3fn", SwizzleMode.SWIZZLE_128B_ATOM, (M, K))
Bl = mma_shared_layout("float8_e4m3fn", SwizzleMode.SWIZZLE_128B_ATOM, (N, K))
sfa_l = sf_tmem_layout(M, SF_K=4, sf_per_mma=1)
sfb_l = sf_tmem_layout(N if N >= 128 else 128, SF_K=4, sf_per_mma=1)


@T.prim_func
def f():
    T.device_entry()
    T.cta_id([1])
    T.thread_id([128])
    tid = T.thread_id_in_wg([128])
    A_smem = T.alloc_buffer((M, K), "float8_e4m3fn", scope="shared", layout=Al)
    B_smem = T.alloc_buffer((N, K), "float8_e4m3fn", scope="shared", layout=Bl)
    C_tmem = T.decl_buffer((M, N), "float32", scope="tmem", allocated_addr=0,
                           layout=tmem_datapath_layout("D", M, N))
    SFA = T.decl_buffer((M, 4), "float8_e8m0fnu", scope="tmem", allocated_addr=256, layout=sfa_l)
    SFB = T.decl_buffer((128, 4), "float8_e8m0fnu", scope="tmem", allocated_addr=320,
                        layout=sfb_l)
    if tid < 1:
        Tx.gemm_async(C_tmem[:, :], A_smem[:, :], B_smem[:, :], SFA[:, :], SFB[0:64, :],
                      dispatch="tcgen05")


print("==== CUDA of a compiled fp8 + e8m0 call (M=128 N=64 K=128, SF_K=4)")
try:
    tgt = tvm.target.Target({"kind": "cuda", "arch": "sm_100a"})
    with tgt:
        src = tvm.compile(tvm.IRModule({"main": f}), target=tgt,
                          tir_pipeline="tirx").mod.imports[0].inspect_source()
    for line in src.splitlines():
        if "block_scale" in line or "instr_desc" in line or "runtime_instr" in line:
            print(line.strip()[:600])
except Exception as e:
    print("ERROR", type(e).__name__, re.sub(r"\s+", " ", str(e))[:600])
