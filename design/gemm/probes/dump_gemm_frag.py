"""Dumps TVM 0.27's fragment carving (mma_m16n8k_.py: _split, _align, _canon,
_region_totals, _frag_group) for the full-region operands of every upstream
tiling and orientation, so the C port of the carve (plan section 1.4, build
step G2) can be unit-tested against TVM's groups.  Full regions only: the
emitter's slice of a full region is the layout itself.
Usage: python dump_gemm_frag.py > out_gemm_frag.txt"""
import importlib
import gemm_probe as g
m = importlib.import_module("tvm.backend.cuda.tile_primitive.gemm.mma_m16n8k_")


def iters(lay):
    return "[" + ", ".join(f"{int(i.extent)}:{int(i.stride)}@{i.axis.name}" if i.axis.is_thread()
                           else f"{int(i.extent)}:{int(i.stride)}" for i in lay.shard) + "]"


def groups(gl, seps):
    return " | ".join(iters(m.TileLayout.from_iters(list(gl.shard[seps[k]:seps[k + 1]]), [], {}))
                      for k in range(len(seps) - 1))


def dump(Mt, Nt, Kt, kinst, tA=False, tB=False):
    Dl, Al, Bl = g.frag(Mt, Nt, Kt, kinst)
    M, N, K = 16 * Mt, 8 * Nt, kinst * Kt
    if tA: Al = g.tposed(Al, [M, K])
    if tB: Bl = g.tposed(Bl, [K, N])
    inst = next(i for i in m.MMA_INSTRUCTIONS if i.k == kinst and i.dtype[0] == "float16")
    def sg(lay, shape):
        return lay.canonicalize().group(list(shape))
    Ag, As = sg(Al, (K, M) if tA else (M, K)); Bg, Bs = sg(Bl, (N, K) if tB else (K, N))
    Dg, Ds = sg(Dl, (M, N))
    (DM, DN), _ = m._split(Dg, Ds)
    A_subs, _ = m._split(Ag, As); B_subs, _ = m._split(Bg, Bs)
    AM, AK = (A_subs[1], A_subs[0]) if tA else (A_subs[0], A_subs[1])
    BK, BN = (B_subs[1], B_subs[0]) if tB else (B_subs[0], B_subs[1])
    AM = m._align(DM, AM, "A.M"); BN = m._align(DN, BN, "B.N"); BK = m._align(AK, BK, "B.K")
    DM, DN, AK = m._canon(DM), m._canon(DN), m._canon(AK)
    mt, mm = m._region_totals(DM); nt, nm = m._region_totals(DN); kt, km = m._region_totals(AK)
    kHi = inst.k // (4 * inst.k_pack)
    print(f"== Mt={Mt} Nt={Nt} Kt={Kt} k{kinst} tA={tA} tB={tB}  totals M=({mt},{mm}) N=({nt},{nm}) K=({kt},{km})")
    specs = {
        "D.M": (DM, [(8, 4, True)], [(inst.m // 8, None, False)], mt, mm),
        "D.N": (DN, [(4, 1, True)], [(inst.n // 4, 1, False)], nt, nm),
        "A.M": (AM, [(8, 4, True)], [(inst.m // 8, None, False)], mt, mm),
        "A.K": (AK, [(4, 1, True)], [(kHi, None, False), (inst.k_pack, 1, False)], kt, km),
        "B.K": (BK, [(4, 1, True)], [(kHi, None, False), (inst.k_pack, 1, False)], kt, km),
        "B.N": (BN, [(4, 8, True)], [(2, 4, True)], nt, nm),
    }
    for name, (lay, lane, mem, tt, mt_) in specs.items():
        print(f"  {name} in : {iters(lay)}")
        try:
            gl, seps = m._frag_group(lay, lane, mem, tt, mt_)
            print(f"  {name} out: {groups(gl, seps)}")
        except Exception as e:
            print(f"  {name} FAILS: {str(e).splitlines()[0][:200]}")


SHAPES = [(1, 1, 1, 16), (2, 1, 1, 16), (1, 2, 1, 16), (1, 1, 2, 16), (2, 2, 2, 16),
          (4, 1, 1, 16), (1, 1, 1, 8), (1, 1, 3, 8), (2, 2, 3, 8)]
if __name__ == "__main__":
    for s in SHAPES:
        dump(*s)
    for tA, tB in ((True, False), (False, True), (True, True)):
        dump(1, 1, 1, 16, tA, tB)
