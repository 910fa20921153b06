"""The GEMM kernel of the plan's §5 (issue items 6/7) in TIRx, compiled by
TVM 0.27's own dispatcher (compile only: no GPU here).  One CTA computes a
BMxBN tile of D = A @ B^T (A: MxK, B: NxK, both float16 row-major, D float32)
with 4 warps (2x2), each a 64x64 warp tile of m16n8k16 instructions; per K
step of BK the CTA stages A and B into shared memory (Tx.cta.copy), each warp
loads its fragments (Tx.warp.copy -> ldmatrix) and issues Tx.warp.gemm, and the
epilogue stores the float32 accumulator (Tx.warp.copy, registers -> global).
Prints which variant TVM picked for every tile op and the PTX it emitted.
Usage: python gemm_kernel.py [M N K] [arch]"""
import re, sys
import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import S, TileLayout, laneid, ComposeLayout
from tvm.tirx.operator.tile_primitive import dispatcher as D

BM, BN, BK = 128, 128, 32
WM, WN = 64, 64

A_FRAG_K8 = TileLayout(S[(2, 8, 4, 2):(2, 4 @ laneid, 1 @ laneid, 1)])
B_FRAG_K8 = TileLayout(S[(4, 2, 8):(1 @ laneid, 1, 4 @ laneid)])
D_FRAG = TileLayout(S[(2, 8, 4, 2):(2, 4 @ laneid, 1 @ laneid, 1)])
A_FRAG = A_FRAG_K8.tile_to([16, 16], [16, 8])
B_FRAG = B_FRAG_K8.tile_to([16, 8], [8, 8])
g, seps = B_FRAG.group([16, 8])
B_NK_FRAG = g.permute_by_groups(seps, [1, 0])          # B as [N, K]

A_W = A_FRAG.tile_to([WM, BK], [16, 16])
B_W = B_NK_FRAG.tile_to([WN, BK], [8, 16])
D_W = D_FRAG.tile_to([WM, WN], [16, 8])
SW = ComposeLayout(3, 3, 3, TileLayout(S[(BM * BK,)]))  # 128B swizzle, fp16: 8-elt chunks


def smem_layout(rows):
    inner = TileLayout(S[(rows, BK):(BK, 1)])
    return ComposeLayout(SW.per_element, SW.swizzle_len, SW.atom_len, inner, SW.swizzle_inner)


def kernel(M, N, K):
    @T.prim_func
    def gemm(A_ptr: T.handle, B_ptr: T.handle, D_ptr: T.handle):
        A = T.match_buffer(A_ptr, (M, K), "float16")
        B = T.match_buffer(B_ptr, (N, K), "float16")
        Dg = T.match_buffer(D_ptr, (M, N), "float32")
        T.device_entry()
        bx, by = T.cta_id([N // BN, M // BM])
        wid = T.warp_id([4])
        lane = T.lane_id([32])
        tid = T.thread_id([128])
        A_s = T.alloc_buffer((BM, BK), "float16", scope="shared", layout=smem_layout(BM))
        B_s = T.alloc_buffer((BN, BK), "float16", scope="shared", layout=smem_layout(BN))
        a_f = T.alloc_buffer((WM, BK), "float16", scope="local", layout=A_W)
        b_f = T.alloc_buffer((WN, BK), "float16", scope="local", layout=B_W)
        acc = T.alloc_buffer((WM, WN), "float32", scope="local", layout=D_W)
        wm = wid // 2
        wn = wid % 2
        acc_r = acc.local()
        for i in T.unroll((WM * WN) // 32):
            acc_r[i] = T.float32(0)
        for ko in T.serial(K // BK):
            Tx.cta.copy(A_s[:, :], A[by * BM:(by + 1) * BM, ko * BK:(ko + 1) * BK])
            Tx.cta.copy(B_s[:, :], B[bx * BN:(bx + 1) * BN, ko * BK:(ko + 1) * BK])
            T.cuda.cta_sync()
            Tx.warp.copy(a_f[:, :], A_s[wm * WM:(wm + 1) * WM, :])
            Tx.warp.copy(b_f[:, :], B_s[wn * WN:(wn + 1) * WN, :])
            Tx.warp.gemm(acc, a_f, b_f, acc, transpose_A=False, transpose_B=True, alpha=1.0, beta=1.0)
            T.cuda.cta_sync()
        Tx.warp.copy(Dg[by * BM + wm * WM:by * BM + (wm + 1) * WM,
                        bx * BN + wn * WN:bx * BN + (wn + 1) * WN], acc[:, :])
    return gemm


def main():
    a = sys.argv[1:]
    M, N, K = (int(x) for x in a[:3]) if len(a) >= 3 else (4096, 4096, 4096)
    arch = a[3] if len(a) > 3 else "sm_90a"
    picked = []
    # Record which variant returned the lowering of each tile op.
    for (op, tk), cases in D._DISPATCH_TABLE.items():
        if tk != "cuda":
            continue
        for c in cases:
            def wrap(impl, name=f"{op.name}:{c.variant}"):
                def w(op_call, sctx):
                    r = impl(op_call, sctx)
                    picked.append((name, str(sctx.scope_kind)))
                    return r
                return w
            c.impl = wrap(c.impl)
    tgt = tvm.target.Target({"kind": "cuda", "arch": arch})
    f = kernel(M, N, K)
    with tgt:
        low = tvm.tirx.transform.LowerTIRx()(tvm.IRModule({"main": f}))
    s = low["main"].script()
    print("== variants picked, in call order:")
    for n, sc in picked:
        print("   ", n, "at", sc)
    print("== lowered TIR (tile ops replaced):")
    print(s)
    with tgt:
        ex = tvm.compile(tvm.IRModule({"main": f}), target=tgt, tir_pipeline="tirx")
    src = ex.mod.imports[0].inspect_source()
    print("== CUDA source:")
    print(src)
    print("== PTX helpers used:", sorted(set(re.findall(r"tvm_builtin_ptx_(\w+?)\(", src))))


if __name__ == "__main__":
    main()
