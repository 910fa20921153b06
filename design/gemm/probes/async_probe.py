"""Probes of TVM 0.27's `gemm_async` (tcgen05): a minimal one-CTA kernel
(A, B in swizzled shared memory, C in tensor memory at a constant address)
compiled with tvm.compile for an arch; prints the lowered TIR of the call and
the tcgen05 lines of the CUDA, or the failure.  Usage: python async_probe.py [NAME..]"""
import re, sys
import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.cuda.tile_primitive.tma_utils import SwizzleMode, mma_shared_layout
from tvm.tirx.layout import S, TileLayout, TLane, TCol

def kern(M=128, N=64, K=64, dtype="float16", sw=SwizzleMode.SWIZZLE_128B_ATOM, scope="thread",
         guard=True, cta_group=1, cfg=None, transA=False, transB=False, c_dtype="float32",
         addr_from_smem=False):
    cfg = dict(cfg or {})
    cluster = not cfg.pop("no_cluster", False)
    A_shape = (K, M) if transA else (M, K)
    B_Nc = N // cta_group
    # TVM's gemm_async: transB=False means B is [N, K] (K-major), True means [K, N].
    B_shape = (K, B_Nc) if transB else (B_Nc, K)
    Al = mma_shared_layout(dtype, sw, A_shape)
    Bl = mma_shared_layout(dtype, sw, B_shape)
    Cl = TileLayout(S[(M, N):(1 @ TLane, 1 @ TCol)])
    op = {"thread": Tx.gemm_async, "warp": Tx.warp.gemm_async,
          "wg": Tx.wg.gemm_async, "cta": Tx.cta.gemm_async}[scope]
    @T.prim_func
    def f():
        T.device_entry()
        cta_id = T.cta_id([cta_group])
        if cta_group == 2 and cluster:
            cbx, cby = T.cta_id_in_cluster([2, 1])
        thread_id = T.thread_id([128])
        tid = T.thread_id_in_wg([128])
        A_smem = T.alloc_buffer(A_shape, dtype, scope="shared", layout=Al)
        B_smem = T.alloc_buffer(B_shape, dtype, scope="shared", layout=Bl)
        if addr_from_smem:
            tmem_addr = T.alloc_shared([1], "uint32")
            C_tmem = T.decl_buffer((M, N), c_dtype, scope="tmem", allocated_addr=tmem_addr[0], layout=Cl)
        else:
            C_tmem = T.decl_buffer((M, N), c_dtype, scope="tmem", allocated_addr=0, layout=Cl)
        if guard:
            if tid < (1 if scope == "thread" else 32):
                op(C_tmem[:, :], A_smem[:, :], B_smem[:, :], transA=transA, transB=transB, accum=False, dispatch="tcgen05", cta_group=cta_group, **cfg)
        else:
            op(C_tmem[:, :], A_smem[:, :], B_smem[:, :], transA=transA, transB=transB, accum=False, dispatch="tcgen05", cta_group=cta_group, **cfg)
    return f

CASES = {
    "f16_128x64x64_sw128": dict(),
    "f16_warp": dict(scope="warp"),
    "bf16_128x256x64": dict(N=256, dtype="bfloat16"),
    "f16_N512": dict(N=512),
    "f16_M64": dict(M=64),
    "e4m3_128x64x128": dict(K=128, dtype="float8_e4m3fn"),
    "tf32_f32_cfg": dict(K=32, dtype="float32", cfg={"is_AB_tf32": True}, sw=SwizzleMode.SWIZZLE_128B_ATOM),
    "cta2_256": dict(cta_group=2, N=128),
    "sw64": dict(K=32, sw=SwizzleMode.SWIZZLE_64B_ATOM),
    "sw32": dict(K=16, sw=SwizzleMode.SWIZZLE_32B_ATOM),
    "transA": dict(transA=True),
    "transB": dict(transB=True),
    "noguard_thread": dict(guard=False),
    "misspelt_key": dict(cfg={"cta_gruop": 2}),
    "unknown_smem_desc": dict(cfg={"smem_desc": "hoisted"}),
    "smem_desc_encode": dict(cfg={"smem_desc": "encode"}),
    "c_f16": dict(c_dtype="float16"),
    "int8": dict(dtype="int8"),
    "K_not_mult": dict(K=24, sw=SwizzleMode.SWIZZLE_NONE),
    "cta_group3": dict(cfg={}, cta_group=1) ,
    "tmem_addr_idiom": dict(addr_from_smem=True),
    "f16_N24": dict(N=24),
    "f16_N8": dict(N=8),
    "cta2_no_cluster": dict(cta_group=2, N=128, cfg={"no_cluster": True}),
    "cta_scope": dict(scope="cta", guard=False),
    "wg_scope": dict(scope="wg", guard=False),
}

def go(name, arch):
    kw = CASES[name]
    print(f"===== {name} {arch}: {kw}")
    try:
        f = kern(**kw)
    except Exception as e:
        print("BUILD FAILED:", type(e).__name__, str(e)[-600:]); return
    tgt = tvm.target.Target({"kind": "cuda", "arch": arch})
    try:
        with tgt:
            low = tvm.tirx.transform.LowerTIRx()(tvm.IRModule({"main": f}))
        s = low["main"].script()
        print("LowerTIRx OK; tcgen05 / desc lines:")
        for l in s.splitlines():
            if re.search(r"tcgen05|desc|elect|shfl|if ", l):
                print("   ", l.strip()[:400])
    except Exception as e:
        for l in str(e).splitlines():
            l = re.sub(r"\s+", " ", l)
            if re.search(r"declined|rejected|exception|Error|error:", l):
                print("LowerTIRx FAILED:", l[:500])
        return
    try:
        with tgt:
            m = tvm.compile(tvm.IRModule({"main": f}), target=tgt, tir_pipeline="tirx")
        src = m.mod.imports[0].inspect_source()
        print("tvm.compile OK; tcgen05 lines of the kernel:")
        for l in src.splitlines():
            if "tcgen05" in l and ("asm" in l or "(" in l):
                print("   ", l.strip()[:400])
    except Exception as e:
        print("tvm.compile FAILED:", type(e).__name__, re.sub(r"\s+", " ", str(e))[-700:])

if __name__ == "__main__":
    args = sys.argv[1:]
    archs = [a[5:] for a in args if a.startswith("arch=")] or ["sm_100a"]
    names = [a for a in args if not a.startswith("arch=")] or list(CASES)
    for a in archs:
        for n in names:
            go(n, a)
