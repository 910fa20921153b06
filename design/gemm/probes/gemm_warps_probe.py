"""Probes a cta-scope gemm over 2 warps that split M (the warp tiling of
plan 1.4): fragments on the `tx` axis (lane strides 4@tx/1@tx, warp 32@tx),
and the same split written with warpid + laneid (two thread axes).
Usage: python gemm_warps_probe.py"""
import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import S, TileLayout, tx, laneid, warpid
import gemm_probe as g


def kern(Dl, Al, Bl):
    @T.prim_func
    def f():
        T.device_entry()
        _cta = T.cta_id([1])
        _warp = T.warp_id([2])
        _lane = T.lane_id([32])
        A = T.alloc_buffer((32, 16), "float16", scope="local", layout=Al)
        B = T.alloc_buffer((16, 8), "float16", scope="local", layout=Bl)
        C = T.alloc_buffer((32, 8), "float32", scope="local", layout=Dl)
        D = T.alloc_buffer((32, 8), "float32", scope="local", layout=Dl)
        Tx.cta.gemm(D, A, B, C, transpose_A=False, transpose_B=False, alpha=1.0, beta=0.0)
    return f


CASES = {
    # M = 32 = (warp 2) x (rM 2) x (g 8); the warp is the outermost M factor.
    "tx_axis": (TileLayout(S[(2, 2, 8, 4, 2):(32 @ tx, 2, 4 @ tx, 1 @ tx, 1)]),
                TileLayout(S[(2, 2, 8, 2, 4, 2):(32 @ tx, 2, 4 @ tx, 4, 1 @ tx, 1)]),
                TileLayout(S[(2, 4, 2, 8):(2, 1 @ tx, 1, 4 @ tx)])),
    "warpid_laneid": (TileLayout(S[(2, 2, 8, 4, 2):(1 @ warpid, 2, 4 @ laneid, 1 @ laneid, 1)]),
                      TileLayout(S[(2, 2, 8, 2, 4, 2):(1 @ warpid, 2, 4 @ laneid, 4, 1 @ laneid, 1)]),
                      TileLayout(S[(2, 4, 2, 8):(2, 1 @ laneid, 1, 4 @ laneid)])),
}
for name, (Dl, Al, Bl) in CASES.items():
    print(f"===== {name}")
    try:
        s = g.lower(kern(Dl, Al, Bl))["main"].script()
        print("LOWERED; mma lines:")
        for l in s.splitlines():
            if "T.ptx.mma" in l:
                print("   ", l.strip()[:200])
    except Exception as e:
        for l in str(e).splitlines():
            if "declined" in l or "rejected" in l or "exception" in l:
                print("FAILED:", " ".join(l.split())[:400])
