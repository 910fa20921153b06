"""Probe TVM 0.27's smem->tmem variant (tcgen05.cp) on sm_100a.

Kernels in the form of upstream's test_tcgen05_cp.py round trip (_make_cp_kernel):
an unswizzled 128x256b float16 copy (the canonical (16, 8, 2, 8) core-matrix smem
layout, n_mid 1 and 2) and a 128x128b float32 one.  Prints the chosen variant's TIR
and the tcgen05.cp asm lines of the CUDA, or TVM's error.
Usage: python probe_tcgen05_cp.py
"""

import tvm
import tvm.backend.cuda.tile_primitive  # noqa: F401
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import S, TCol, TileLayout, TLane
from tvm.tirx.operator.tile_primitive import dispatcher as D

LOG = []
for key, cases in D._DISPATCH_TABLE.items():
    if "copy_async" in str(key[0]):
        for c in cases:
            inner = c.impl

            def w(op, sctx, _inner=inner, _name=c.variant):
                r = _inner(op, sctx)
                LOG.append((_name, r))
                return r

            c.impl = w


def make(s_shape, s_layout, C, dtype, cfg):
    t_layout = TileLayout(S[(128, C) : (1 @ TLane, 1 @ TCol)])

    # fmt: off
    @T.prim_func(check_well_formed=False)
    def kernel(A_ptr: T.handle):
        A = T.match_buffer(A_ptr, s_shape, dtype)
        T.device_entry()
        warp_id = T.warp_id([4])
        wg_id = T.warpgroup_id([1])
        tid_in_wg = T.thread_id_in_wg([128])
        T.lane_id([32])
        A_smem = T.alloc_buffer(s_shape, dtype, scope="shared", layout=s_layout, align=1024)
        tmem_addr = T.alloc_shared([1], "uint32")
        cp_mbar = T.alloc_shared([1], "uint64")
        if wg_id == 0:
            if warp_id == 0:
                T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(
                    T.address_of(tmem_addr), T.uint32(64))
            if tid_in_wg == 0:
                T.ptx.mbarrier.init.shared.b64(cp_mbar.ptr_to([0]), T.uint32(1))
            T.ptx.fence.proxy.async_.shared__cta()
            T.cuda.cta_sync()
            Tx.cta.copy(A_smem[0:s_shape[0], 0:s_shape[1]], A[0:s_shape[0], 0:s_shape[1]])
            T.cuda.cta_sync()
            tmem = T.decl_buffer((128, C), dtype, scope="tmem", allocated_addr=tmem_addr[0],
                                 layout=t_layout)
            if tid_in_wg == 0:
                Tx.copy_async(tmem[0:128, 0:C], A_smem[0:128, 0:C], **cfg)
                T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(
                    cp_mbar.ptr_to([0]))
            T.cuda.mbarrier_wait(cp_mbar.ptr_to([0]), 0)
            if warp_id == 0:
                T.ptx.tcgen05.relinquish_alloc_permit.cta_group__1.sync.aligned()
                T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(tmem_addr[0], T.uint32(64))
    # fmt: on
    return kernel


u16 = 8  # float16 elements per 16-byte unit
CASES = {
    "128x256b_f16_nmid1": ([128, 16], TileLayout(S[(16, 8, 2, 8) : (128, 8, 64, 1)]), 16,
                           "float16", {"shape": "128x256b", "cta_group": 1}),
    "128x256b_f16_nmid1_inferred": ([128, 16], TileLayout(S[(16, 8, 2, 8) : (128, 8, 64, 1)]),
                                    16, "float16", {"cta_group": 1}),
    "128x128b_f32_nmid1": ([128, 4], TileLayout(S[(128, 4) : (4, 1)]), 4, "float32",
                           {"cta_group": 1}),
    "128x128b_f32_nmid2": ([128, 8], TileLayout(S[(128, 2, 4) : (4, 512, 1)]), 8, "float32",
                           {"shape": "128x128b", "cta_group": 1}),
}

for name, (shape, lay, C, dtype, cfg) in CASES.items():
    LOG.clear()
    print(f"=== {name}")
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_100a"})
    try:
        with target:
            ex = tvm.compile(tvm.IRModule({"main": make(shape, lay, C, dtype, cfg)}),
                             target=target, tir_pipeline="tirx")
        for v, r in LOG:
            print(f"--- chosen: {v}")
            print(r.script())
        for line in ex.mod.imports[0].inspect_source().splitlines():
            if "tcgen05.cp" in line or "desc" in line.lower():
                print(line.rstrip()[:300])
    except Exception as e:  # noqa: BLE001
        for v, r in LOG:
            print(f"--- chosen: {v}")
            print(r.script())
        print("--- ERROR", type(e).__name__, str(e)[:1500])
