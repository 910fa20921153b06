"""A GEMM written in TVM's TIRx and compiled with tiledispatch's bridge:
every tile op (staging A and B into shared memory, loading the warps'
fragments with ldmatrix, the mma.sync products, the epilogue and the store
of D) is dispatched by tiledispatch, and the same kernel is compiled by
TVM 0.27's own dispatcher beside it for comparison.

D = alpha A B^T (A: M x K, B: N x K, both float16 row-major; D: M x N
float32; alpha a constant, 0.5 unless --alpha says otherwise).  A CTA computes a
128 x 128 tile of D with 4 warps (2 x 2), each a 64 x 64 warp tile of
m16n8k16 instructions (4 x 8 per k16, 2 per K step of 32); per K step the
CTA stages A and B into 128-byte-swizzled shared memory (`Tx.cta.copy`,
global -> shared), each warp loads its fragments (`Tx.warp.copy`, shared
-> registers: ldmatrix) and issues `Tx.warp.gemm`; the epilogue scales the
accumulator by alpha (`Tx.warp.mul`, registers) and stores it
(`Tx.warp.copy`, registers -> global).  design/gemm/plan.md section 7.2.
`--stages 2` compiles the plan's next step instead: two shared stages
filled by cp.async (`Tx.cta.copy_async`), the next K tile in flight while
the current one is multiplied.
(A bias row added to the accumulator, the plan's other epilogue, is not
one of them: TVM's `reg` variant declines a [1, 64] operand broadcast over
the accumulator's fragment, "thread part mismatch between anchor and
operand after alignment".)

    python examples/tvm_gemm.py                  # compile both ways, compare
    python examples/tvm_gemm.py --print td       # also print one way's CUDA
    python examples/tvm_gemm.py --export DIR     # write td.cu, tvm.cu, gemm.json (bench/gpu/gemm)
    python examples/tvm_gemm.py --size 256 256 256
    python examples/tvm_gemm.py --stages 2       # the cp.async-pipelined kernel

Needs apache-tvm 0.27.0.post1 and the tiledispatch package (docs/python.md);
no GPU: tvm.compile writes the CUDA source without one.

Where a tile starts at a variable the kernel says so in a form both
dispatchers take: a warp's part of the shared tile is a view of the shared
buffer at the warp's offset (`T.decl_buffer(..., data=A_s.data,
elem_offset=...)`, the swizzle's period divides the offset), and the
epilogue's tile of D starts at a product of a constant and one index per
dimension (the warp tile's row and column in D), so that the store's
alignment is known.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx   # the tile primitives
from tvm.tirx.layout import ComposeLayout, S, TileLayout, laneid

import tiledispatch.tvm as tdtvm

BM, BN, BK = 128, 128, 32          # a CTA's tile of D and its K step
WM, WN = 64, 64                    # a warp's tile of D (the CTA's warps: 2 x 2)
THREADS = 128
ARCH = "sm_90a"

# The m16n8k16 fragments as TVM's layouts (lane and register of each
# element), tiled to a warp's share of a K step: A as [M, K], B as [N, K]
# (the kernel computes A B^T), the accumulator as [M, N].
A_FRAG_K8 = TileLayout(S[(2, 8, 4, 2):(2, 4 @ laneid, 1 @ laneid, 1)])
B_FRAG_K8 = TileLayout(S[(4, 2, 8):(1 @ laneid, 1, 4 @ laneid)])
D_FRAG = TileLayout(S[(2, 8, 4, 2):(2, 4 @ laneid, 1 @ laneid, 1)])
A_FRAG = A_FRAG_K8.tile_to([16, 16], [16, 8])
_b_grouped, _b_seps = B_FRAG_K8.tile_to([16, 8], [8, 8]).group([16, 8])
B_NK_FRAG = _b_grouped.permute_by_groups(_b_seps, [1, 0])

A_W = A_FRAG.tile_to([WM, BK], [16, 16])
B_W = B_NK_FRAG.tile_to([WN, BK], [8, 16])
D_W = D_FRAG.tile_to([WM, WN], [16, 8])

# 128-byte swizzle of float16 rows of BK = 32 elements (8-element chunks).
_SW = ComposeLayout(3, 3, 3, TileLayout(S[(BM * BK,)]))


def smem_layout(rows: int) -> ComposeLayout:
    inner = TileLayout(S[(rows, BK):(BK, 1)])
    return ComposeLayout(_SW.per_element, _SW.swizzle_len, _SW.atom_len, inner, _SW.swizzle_inner)


def kernel(M: int, N: int, K: int, alpha: float | None = 0.5):
    """The PrimFunc for M x N x K (multiples of 128, 128 and 32); with
    alpha None the epilogue is the store alone (the plan's first kernel)."""
    if M % BM or N % BN or K % BK:
        raise ValueError(f"M, N, K must be multiples of {BM}, {BN}, {BK}: got {M}, {N}, {K}")

    @T.prim_func
    def gemm(A_ptr: T.handle, B_ptr: T.handle, D_ptr: T.handle):
        A = T.match_buffer(A_ptr, (M, K), "float16")
        B = T.match_buffer(B_ptr, (N, K), "float16")
        Dg = T.match_buffer(D_ptr, (M, N), "float32")
        T.device_entry()
        bx, by = T.cta_id([N // BN, M // BM])
        wid = T.warp_id([THREADS // 32])
        T.lane_id([32])
        T.thread_id([THREADS])
        A_s = T.alloc_buffer((BM, BK), "float16", scope="shared", layout=smem_layout(BM))
        B_s = T.alloc_buffer((BN, BK), "float16", scope="shared", layout=smem_layout(BN))
        a_f = T.alloc_buffer((WM, BK), "float16", scope="local", layout=A_W)
        b_f = T.alloc_buffer((WN, BK), "float16", scope="local", layout=B_W)
        acc = T.alloc_buffer((WM, WN), "float32", scope="local", layout=D_W)
        wm = wid // 2
        wn = wid % 2
        # The warp's rows of A_s and B_s: views at the warp's offset (a
        # multiple of the swizzle's period of 512 elements).
        A_w = T.decl_buffer((WM, BK), "float16", data=A_s.data, scope="shared",
                            elem_offset=wm * (WM * BK), layout=smem_layout(WM))
        B_w = T.decl_buffer((WN, BK), "float16", data=B_s.data, scope="shared",
                            elem_offset=wn * (WN * BK), layout=smem_layout(WN))
        # The warp tile's row and column in D, in units of a warp tile.
        wr = by * (BM // WM) + wm
        wc = bx * (BN // WN) + wn
        acc_r = acc.local()
        for i in T.unroll((WM * WN) // 32):
            acc_r[i] = T.float32(0)
        for ko in T.serial(K // BK):
            Tx.cta.copy(A_s[:, :], A[by * BM:(by + 1) * BM, ko * BK:(ko + 1) * BK])
            Tx.cta.copy(B_s[:, :], B[bx * BN:(bx + 1) * BN, ko * BK:(ko + 1) * BK])
            T.cuda.cta_sync()
            Tx.warp.copy(a_f[:, :], A_w[:, :])
            Tx.warp.copy(b_f[:, :], B_w[:, :])
            Tx.warp.gemm(acc, a_f, b_f, acc, transpose_A=False, transpose_B=True,
                         alpha=1.0, beta=1.0)
            T.cuda.cta_sync()
        if alpha is not None:
            Tx.warp.mul(acc[:, :], acc[:, :], T.float32(alpha))
        Tx.warp.copy(Dg[wr * WM:(wr + 1) * WM, wc * WN:(wc + 1) * WN], acc[:, :])

    return gemm


def kernel_pipelined(M: int, N: int, K: int, alpha: float | None = 0.5):
    """The same GEMM with two shared stages filled by cp.async
    (`Tx.cta.copy_async`, TVM's and tiledispatch's `ldgsts`): the next K
    tile's copy is issued before the current tile's ldmatrix and mma, so
    its global latency overlaps them (K / 32 must be even)."""
    if M % BM or N % BN or K % (2 * BK):
        raise ValueError(f"M, N, K must be multiples of {BM}, {BN}, {2 * BK}: got {M}, {N}, {K}")
    nk = K // BK

    @T.prim_func
    def gemm(A_ptr: T.handle, B_ptr: T.handle, D_ptr: T.handle):
        A = T.match_buffer(A_ptr, (M, K), "float16")
        B = T.match_buffer(B_ptr, (N, K), "float16")
        Dg = T.match_buffer(D_ptr, (M, N), "float32")
        T.device_entry()
        bx, by = T.cta_id([N // BN, M // BM])
        wid = T.warp_id([THREADS // 32])
        T.lane_id([32])
        T.thread_id([THREADS])
        A_s0 = T.alloc_buffer((BM, BK), "float16", scope="shared", layout=smem_layout(BM))
        B_s0 = T.alloc_buffer((BN, BK), "float16", scope="shared", layout=smem_layout(BN))
        A_s1 = T.alloc_buffer((BM, BK), "float16", scope="shared", layout=smem_layout(BM))
        B_s1 = T.alloc_buffer((BN, BK), "float16", scope="shared", layout=smem_layout(BN))
        a_f = T.alloc_buffer((WM, BK), "float16", scope="local", layout=A_W)
        b_f = T.alloc_buffer((WN, BK), "float16", scope="local", layout=B_W)
        acc = T.alloc_buffer((WM, WN), "float32", scope="local", layout=D_W)
        wm = wid // 2
        wn = wid % 2
        A_w0 = T.decl_buffer((WM, BK), "float16", data=A_s0.data, scope="shared",
                             elem_offset=wm * (WM * BK), layout=smem_layout(WM))
        B_w0 = T.decl_buffer((WN, BK), "float16", data=B_s0.data, scope="shared",
                             elem_offset=wn * (WN * BK), layout=smem_layout(WN))
        A_w1 = T.decl_buffer((WM, BK), "float16", data=A_s1.data, scope="shared",
                             elem_offset=wm * (WM * BK), layout=smem_layout(WM))
        B_w1 = T.decl_buffer((WN, BK), "float16", data=B_s1.data, scope="shared",
                             elem_offset=wn * (WN * BK), layout=smem_layout(WN))
        wr = by * (BM // WM) + wm
        wc = bx * (BN // WN) + wn
        acc_r = acc.local()
        for i in T.unroll((WM * WN) // 32):
            acc_r[i] = T.float32(0)
        Tx.cta.copy_async(A_s0[:, :], A[by * BM:(by + 1) * BM, 0:BK])
        Tx.cta.copy_async(B_s0[:, :], B[bx * BN:(bx + 1) * BN, 0:BK])
        T.ptx.cp.async_.commit_group()
        for k2 in T.serial(nk // 2):
            # Stage 1 <- tile 2 k2 + 1 while stage 0 (tile 2 k2) is used.
            Tx.cta.copy_async(A_s1[:, :], A[by * BM:(by + 1) * BM,
                                            (k2 * 2 + 1) * BK:(k2 * 2 + 2) * BK])
            Tx.cta.copy_async(B_s1[:, :], B[bx * BN:(bx + 1) * BN,
                                            (k2 * 2 + 1) * BK:(k2 * 2 + 2) * BK])
            T.ptx.cp.async_.commit_group()
            T.ptx.cp.async_.wait_group(1)
            T.cuda.cta_sync()
            Tx.warp.copy(a_f[:, :], A_w0[:, :])
            Tx.warp.copy(b_f[:, :], B_w0[:, :])
            Tx.warp.gemm(acc, a_f, b_f, acc, transpose_A=False, transpose_B=True,
                         alpha=1.0, beta=1.0)
            T.cuda.cta_sync()
            # Stage 0 <- tile 2 k2 + 2 (if any) while stage 1 is used.
            if k2 * 2 + 2 < nk:
                Tx.cta.copy_async(A_s0[:, :], A[by * BM:(by + 1) * BM,
                                                (k2 * 2 + 2) * BK:(k2 * 2 + 3) * BK])
                Tx.cta.copy_async(B_s0[:, :], B[bx * BN:(bx + 1) * BN,
                                                (k2 * 2 + 2) * BK:(k2 * 2 + 3) * BK])
            T.ptx.cp.async_.commit_group()
            T.ptx.cp.async_.wait_group(1)
            T.cuda.cta_sync()
            Tx.warp.copy(a_f[:, :], A_w1[:, :])
            Tx.warp.copy(b_f[:, :], B_w1[:, :])
            Tx.warp.gemm(acc, a_f, b_f, acc, transpose_A=False, transpose_B=True,
                         alpha=1.0, beta=1.0)
            T.cuda.cta_sync()
        if alpha is not None:
            Tx.warp.mul(acc[:, :], acc[:, :], T.float32(alpha))
        Tx.warp.copy(Dg[wr * WM:(wr + 1) * WM, wc * WN:(wc + 1) * WN], acc[:, :])

    return gemm


def build(func, arch: str = ARCH):
    """The compiled module for `arch` and its CUDA source."""
    target = tvm.target.Target({"kind": "cuda", "arch": arch})
    with target:
        ex = tvm.compile(tvm.IRModule({"main": func}), target=target, tir_pipeline="tirx")
    return ex, ex.mod.imports[0].inspect_source()


_PTX = re.compile(r"\b(mma\.sync\.aligned\.[\w.]+|ldmatrix\.sync\.aligned\.[\w.]+|"
                  r"(?:ld|st)\.(?:global|shared)(?:\.[\w]+)*|cp\.async[\w.]*|bar\.sync)\b")


def ptx_counts(cuda: str) -> Counter:
    """The PTX instructions the CUDA source writes (inline asm and TVM's
    builtin helpers), each with the number of places it is written: the
    kernel's instruction set as its source shows it (loops unrolled by
    the generator count once per place)."""
    return Counter(m.group(1) for m in _PTX.finditer(cuda))


def compile_both(M: int, N: int, K: int, alpha: float | None = 0.5, arch: str = ARCH,
                 stages: int = 1) -> dict:
    """The kernel compiled twice: every tile op through tiledispatch
    (install(strict=True): a hand-back raises) and by TVM's own dispatcher.
    Returns {"td": (module, cuda), "tvm": (module, cuda), "stats": ...}."""
    func = (kernel if stages == 1 else kernel_pipelined)(M, N, K, alpha)
    tdtvm.install(strict=True)
    tdtvm.reset_stats()
    try:
        td = build(func, arch)
        stats = tdtvm.stats()
    finally:
        tdtvm.uninstall()
    return {"td": td, "tvm": build(func, arch), "stats": stats}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, nargs=3, default=(4096, 4096, 4096),
                    metavar=("M", "N", "K"))
    ap.add_argument("--alpha", type=float, default=0.5, help="the epilogue's scale (0.5)")
    ap.add_argument("--no-epilogue", action="store_true", help="store the accumulator as it is")
    ap.add_argument("--stages", type=int, choices=(1, 2), default=1,
                    help="2: the cp.async-pipelined kernel (kernel_pipelined)")
    ap.add_argument("--arch", default=ARCH)
    ap.add_argument("--print", choices=("td", "tvm"), help="print that build's CUDA")
    ap.add_argument("--export", type=Path, help="write td.cu, tvm.cu and gemm.json here")
    args = ap.parse_args()
    M, N, K = args.size
    alpha = None if args.no_epilogue else args.alpha
    out = compile_both(M, N, K, alpha, args.arch, args.stages)
    stats = out["stats"]
    td_cuda, tvm_cuda = out["td"][1], out["tvm"][1]
    if args.print:
        print(out[args.print][1])
    print("tiledispatch chose:", stats["dispatched"])
    print("handed back to TVM:", stats["handed_back"])
    td_ptx, tvm_ptx = ptx_counts(td_cuda), ptx_counts(tvm_cuda)
    for name in sorted(set(td_ptx) | set(tvm_ptx)):
        mark = "" if td_ptx[name] == tvm_ptx[name] else "   <- differs"
        print(f"  {name:58s} td {td_ptx[name]:4d}  tvm {tvm_ptx[name]:4d}{mark}")
    if args.export:
        args.export.mkdir(parents=True, exist_ok=True)
        (args.export / "td.cu").write_text(td_cuda)
        (args.export / "tvm.cu").write_text(tvm_cuda)
        (args.export / "gemm.json").write_text(json.dumps({
            "M": M, "N": N, "K": K, "alpha": 1.0 if alpha is None else alpha,
            "stages": args.stages,
            "arch": args.arch, "block": [THREADS, 1, 1], "grid": [N // BN, M // BM, 1],
            "params": ["A", "B", "D"], "tiledispatch": stats["dispatched"]},
            indent=1) + "\n")
        print("wrote", ", ".join(sorted(p.name for p in args.export.iterdir())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
