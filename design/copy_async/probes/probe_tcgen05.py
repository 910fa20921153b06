"""Probe TVM 0.27's tmem<->local variant (tcgen05.st / tcgen05.ld) on sm_100a and sm_90a.

A warpgroup kernel in the form of upstream's test_tcgen05_ldst.py round trip
(.16x64b, rep 1, float16, datapath D): registers -> TMEM -> registers.
Prints the chosen variant's TIR and the tcgen05 asm lines, or TVM's error.
Finding: the dispatch picks tmem<->local for sm_90a as well (no arch check);
the later compile fails in this harness (the TMEM address buffer is not bound
as upstream's kernels bind it) - the dispatch result is what this probe shows.
Usage: python probe_tcgen05.py
"""

import tvm
import tvm.backend.cuda.tile_primitive  # noqa: F401
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import tcgen05_atom_layout, tmem_datapath_layout
from tvm.tirx.operator.tile_primitive import dispatcher as D

SHAPE, REP, DTYPE = "16x64b", 1, "float16"
FRAG_ROWS, K_COLS_ELEM = 64, 4 * REP     # .16x64b: 2 fp32 columns per rep -> 4 f16
PER_THREAD = 2 * REP                     # one b32 register per rep -> 2 f16
TMEM_COLS_32B = 32
atom_view = tcgen05_atom_layout(SHAPE, (FRAG_ROWS, K_COLS_ELEM), DTYPE)
tmem_layout = tmem_datapath_layout("D", 128, TMEM_COLS_32B * 2)

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


# fmt: off
@T.prim_func
def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
    A = T.match_buffer(A_ptr, (128, PER_THREAD), DTYPE)
    B = T.match_buffer(B_ptr, (128, PER_THREAD), DTYPE)
    T.device_entry()
    warp_id = T.warp_id([4])
    T.cta_id([1])
    wg_id = T.warpgroup_id([1])
    T.warp_id_in_wg([4])
    T.lane_id([32])
    tid_in_wg = T.thread_id([128])
    tmem_addr = T.alloc_shared([1], "uint32")
    if wg_id == 0:
        if warp_id == 0:
            T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(
                T.address_of(tmem_addr), T.uint32(TMEM_COLS_32B))
        T.tvm_storage_sync("shared")
        tmem = T.decl_buffer((128, TMEM_COLS_32B * 2), DTYPE, scope="tmem",
                             allocated_addr=tmem_addr[0], layout=tmem_layout)
        reg_in = T.alloc_local((PER_THREAD,), DTYPE)
        for i in range(PER_THREAD):
            reg_in[i] = A[tid_in_wg, i]
        frag_in = reg_in.view(FRAG_ROWS, K_COLS_ELEM, layout=atom_view)
        Tx.wg.copy_async(tmem[0:FRAG_ROWS, 0:K_COLS_ELEM], frag_in[:, :])
        T.ptx.tcgen05.wait__st.sync.aligned()
        reg_out = T.alloc_local((PER_THREAD,), DTYPE)
        frag_out = reg_out.view(FRAG_ROWS, K_COLS_ELEM, layout=atom_view)
        Tx.wg.copy_async(frag_out[:, :], tmem[0:FRAG_ROWS, 0:K_COLS_ELEM])
        T.ptx.tcgen05.wait__ld.sync.aligned()
        for i in range(PER_THREAD):
            B[tid_in_wg, i] = reg_out[i]
        if warp_id == 0:
            T.ptx.tcgen05.relinquish_alloc_permit.cta_group__1.sync.aligned()
            T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(tmem_addr[0], T.uint32(TMEM_COLS_32B))
# fmt: on

for arch in ("sm_100a", "sm_90a"):
    LOG.clear()
    print(f"=== tmem_local_16x64b ({arch})")
    target = tvm.target.Target({"kind": "cuda", "arch": arch})
    try:
        with target:
            ex = tvm.compile(tvm.IRModule({"main": kernel}), target=target, tir_pipeline="tirx")
        for v, r in LOG:
            print(f"--- chosen: {v}")
            print(r.script())
        for line in ex.mod.imports[0].inspect_source().splitlines():
            if "tcgen05" in line and "asm" in line:
                print(line.rstrip()[:300])
    except Exception as e:  # noqa: BLE001
        for v, r in LOG:
            print(f"--- chosen: {v}")
            print(r.script())
        print("--- ERROR", type(e).__name__, str(e)[:1500])
