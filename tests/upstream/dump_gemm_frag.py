#!/usr/bin/env python3
"""Dumps TVM 0.27's gemm fragment analysis (mma_m16n8k_.py: the emitter's
_slice_group, _split, _align, _canon, _region_totals, _frag_group and the
warp-tiling checks of its instruction loop), plus TileLayout.tile_to and
_canon_perm, for the operand layouts of every tiling and orientation of
upstream's test_gemm_mma_m16n8k_.py and a few derived layouts (two warps,
declines).  tests/layout/test_gemm_frag.c replays every line of the output,
kept as tests/upstream/data/gemm_frag.txt, through variants/gemm_frag.c and
model/layout_algebra.c:

    /work/main/build-python/venv/bin/python tests/upstream/dump_gemm_frag.py \\
        > tests/upstream/data/gemm_frag.txt

Layouts are written in our notation; a group list as [extent:stride@axis, ...]
(memory iters without @), groups separated by " | ".  Only the two float16
instructions are tried (the dtype is no part of the carve), except in the
`ext_*` cases: tiledispatch's own instructions (EXT), added to TVM's table
for the dump.  Every operand is
sliced to its region (the whole buffer unless a `buffer` line says otherwise)
as the emitter does.  Run under a CUDA target (the emitter's context), where
canonicalize fuses the thread axes by the layout's own scope (laneid + warpid
into tx, laneid + wid_in_wg into tid_in_wg).
"""
import importlib

import tvm

from tvm.tirx import layout as _L
from tvm.tirx.layout import R, S, TileLayout, laneid, tid_in_wg, tx, warpid, wgid, wid_in_wg

bx, by, cbx = _L.bx, _L.by, _L.cbx
m = importlib.import_module("tvm.backend.cuda.tile_primitive.gemm.mma_m16n8k_")


def it_text(i):
    if i.axis.is_thread():
        return f"{int(i.extent)}:{int(i.stride)}@{i.axis.name}"
    return f"{int(i.extent)}:{int(i.stride)}"


def lay(layout):
    """A TileLayout in our notation (shard, replica, offsets)."""
    def spec(kind, its):
        if len(its) == 1:
            return f"{kind}[{int(its[0].extent)} : {stride(its[0])}]"
        return (f"{kind}[(" + ", ".join(str(int(i.extent)) for i in its) + ") : ("
                + ", ".join(stride(i) for i in its) + ")]")

    def stride(i):
        return f"{int(i.stride)}@{i.axis.name}" if i.axis.is_thread() else str(int(i.stride))
    parts = []
    if len(layout.shard):
        parts.append(spec("S", list(layout.shard)))
    if len(layout.replica):
        parts.append(spec("R", list(layout.replica)))
    for ax, v in layout.offset.items():
        if int(v):
            parts.append(f"{int(v)}@{ax.name}" if ax.is_thread() else str(int(v)))
    return " + ".join(parts)


def iters(its):
    return "[" + ", ".join(it_text(i) for i in its) + "]"


def groups(gl, seps):
    return " | ".join(iters(gl.shard[seps[k]:seps[k + 1]]) for k in range(len(seps) - 1))


def first_line(e):
    return str(e).splitlines()[0] if str(e) else type(e).__name__


D_FRAG = TileLayout(S[(2, 8, 4, 2):(2, 4 @ laneid, 1 @ laneid, 1)])
A_FRAG_K8 = TileLayout(S[(2, 8, 4, 2):(2, 4 @ laneid, 1 @ laneid, 1)])
B_FRAG_K8 = TileLayout(S[(4, 2, 8):(1 @ laneid, 1, 4 @ laneid)])


def tile_to(base, to, cur):
    out = base.tile_to(list(to), list(cur))
    print(f"tile_to {lay(base)} | {','.join(map(str, to))} | {','.join(map(str, cur))} -> {lay(out)}")
    return out


def tposed(layout, shape):
    g, seps = layout.group(list(shape))
    return g.permute_by_groups(seps, [1, 0])


def frag(Mt, Nt, Kt, kinst):
    a_base = A_FRAG_K8 if kinst == 8 else tile_to(A_FRAG_K8, (16, 16), (16, 8))
    b_base = B_FRAG_K8 if kinst == 8 else tile_to(B_FRAG_K8, (16, 8), (8, 8))
    return (tile_to(D_FRAG, (16 * Mt, 8 * Nt), (16, 8)),
            tile_to(a_base, (16 * Mt, kinst * Kt), (16, kinst)),
            tile_to(b_base, (kinst * Kt, 8 * Nt), (kinst, 8)))


def slice_group(layout, shape2d, name, sub=None):
    """_slice_group: slice to the region (sub: buffer shape and region;
    None: the whole buffer of shape2d), canonicalize, one thread axis,
    group."""
    if sub is None:
        sub = (shape2d, [(0, e) for e in shape2d])
    canon = None
    try:
        sliced = layout.slice(list(sub[0]), list(sub[1]))
        if sliced is not None:
            canon = sliced.canonicalize()
    except Exception as e:
        raise ValueError(f"gemm mma: {name} layout not tileable as {tuple(shape2d)}: {first_line(e)}")
    if canon is None:
        raise ValueError(f"gemm mma: cannot slice {name} layout to its region")
    axes = {i.axis.name for i in canon.shard if i.axis.is_thread()}
    if len(axes) > 1:
        raise ValueError(f"gemm mma: {name} has >1 thread axis {sorted(axes)}, only one supported")
    try:
        return canon.group(list(shape2d))
    except Exception as e:
        raise ValueError(f"gemm mma: {name} layout not tileable as {tuple(shape2d)}: {first_line(e)}")


DIMS = ("D.M", "D.N", "C.M", "C.N", "A.M", "A.K", "B.K", "B.N")


# tiledispatch's own instructions (mma_ext.m16n8k*, design/gemm/plan.md
# 1.6), given to TVM's analysis as entries of its own table, as its
# MmaInst docstring says one adds an instruction: the carve is generic in
# k_pack, so TVM's groups and register layouts are the reference for ours.
EXT = (
    m.MmaInst("m16n8k16.f16acc", 16, 8, 16, ("float16",) * 4, k_pack=2),
    m.MmaInst("m16n8k8.f16acc", 16, 8, 8, ("float16",) * 4, k_pack=2),
    m.MmaInst("m16n8k8.tf32", 16, 8, 8, ("float32",) * 4, k_pack=1),
    m.MmaInst("m16n8k32.s8", 16, 8, 32, ("int8", "int8", "int32", "int32"), k_pack=4),
    m.MmaInst("m16n8k32.e4m3", 16, 8, 32,
              ("float8_e4m3fn", "float8_e4m3fn", "float32", "float32"), k_pack=4),
)
F16_F32 = ("float16", "float16", "float32", "float32")


def case(name, M, N, K, Dl, Al, Bl, Cl=None, tA=False, tB=False, regions=None,
         sig=F16_F32):
    """regions: operand -> (buffer shape, [(begin, end), ...]) for an
    operand that is a region of a bigger buffer (printed as a `buffer`
    line: shape, then begin:end per dimension).  sig: the dtype signature
    whose instructions are tried (TVM's float16 ones unless a case of
    tiledispatch's own instructions says otherwise)."""
    Cl = Cl if Cl is not None else Dl
    regions = regions or {}
    print(f"case {name} M={M} N={N} K={K} tA={int(tA)} tB={int(tB)}")
    for op, l in (("D", Dl), ("A", Al), ("B", Bl), ("C", Cl)):
        print(f"  layout {op} {lay(l)}")
    for op, (shape, reg) in regions.items():
        print(f"  buffer {op} {','.join(map(str, shape))} "
              + ",".join(f"{b}:{e}" for b, e in reg))
    try:
        Ag, As = slice_group(Al, (K, M) if tA else (M, K), "A", regions.get("A"))
        Bg, Bs = slice_group(Bl, (N, K) if tB else (K, N), "B", regions.get("B"))
        Cg, Cs = slice_group(Cl, (M, N), "C", regions.get("C"))
        Dg, Ds = slice_group(Dl, (M, N), "D", regions.get("D"))
        (DM, DN), D_off = m._split(Dg, Ds)
        (CM, CN), C_off = m._split(Cg, Cs)
        A_subs, A_off = m._split(Ag, As)
        B_subs, B_off = m._split(Bg, Bs)
        offs = {"D": D_off, "C": C_off, "A": A_off, "B": B_off}
        AM, AK = (A_subs[1], A_subs[0]) if tA else (A_subs[0], A_subs[1])
        BK, BN = (B_subs[1], B_subs[0]) if tB else (B_subs[0], B_subs[1])
        AM = m._align(DM, AM, "A.M")
        CM = m._align(DM, CM, "C.M")
        BN = m._align(DN, BN, "B.N")
        CN = m._align(DN, CN, "C.N")
        BK = m._align(AK, BK, "B.K")
    except Exception as e:
        print(f"  prep FAILS: {first_line(e)}")
        return
    DM, DN, AK = m._canon(DM), m._canon(DN), m._canon(AK)
    tot = {d: m._region_totals(a) for d, a in (("M", DM), ("N", DN), ("K", AK))}
    print("  totals " + " ".join(f"{d}=({t},{u})" for d, (t, u) in tot.items()))
    subs = dict(zip(DIMS, (DM, DN, CM, CN, AM, AK, BK, BN)))
    for d in DIMS:
        print(f"  {d} in : {iters(subs[d].shard)}")
    for inst in m.MMA_INSTRUCTIONS + EXT:
        if inst.dtype != sig or M % inst.m or N % inst.n or K % inst.k:
            continue
        kHi = inst.k // (4 * inst.k_pack)
        mspec = ([(8, 4, True)], [(inst.m // 8, None, False)]) + tot["M"]
        nspec = ([(4, 1, True)], [(inst.n // 4, 1, False)]) + tot["N"]
        kspec = ([(4, 1, True)], [(kHi, None, False), (inst.k_pack, 1, False)]) + tot["K"]
        bnspec = ([(4, 8, True)], [(2, 4, True)]) + tot["N"]
        specs = dict(zip(DIMS, (mspec, nspec, mspec, nspec, mspec, kspec, kspec, bnspec)))
        print(f"  inst {inst.name}")
        out, carved, failed = {}, {}, False
        for d in DIMS:
            try:
                gl, seps = m._frag_group(subs[d], *specs[d])
                out[d] = m._grp(gl, seps, 0)
                carved[d] = (gl, seps)
                print(f"  {d} out: {groups(gl, seps)}")
            except Exception as e:
                print(f"  {d} FAILS: {first_line(e)}")
                failed = True
                break
        if failed:
            continue
        if not (m._same_iters(out["D.M"], out["A.M"]) and m._same_iters(out["D.M"], out["C.M"])):
            print("  fit: M.to")
        elif not (m._same_iters(out["D.N"], out["B.N"]) and m._same_iters(out["D.N"], out["C.N"])):
            print("  fit: N.to")
        elif not m._same_iters(out["A.K"], out["B.K"]):
            print("  fit: K.to")
        else:
            print("  fit: yes")
            # The per-thread register layouts and local-view shapes the
            # emitter builds from the carve (_reg_layout).
            def g(d, i):
                return m._grp(carved[d][0], carved[d][1], i)
            regs = {"D": [g("D.M", 2), g("D.N", 2), g("D.M", 3), g("D.N", 3)],
                    "C": [g("C.M", 2), g("C.N", 2), g("C.M", 3), g("C.N", 3)],
                    "A": [g("A.M", 2), g("A.K", 2), g("A.M", 3), g("A.K", 3), g("A.K", 4)],
                    "B": [g("B.K", 2), g("B.N", 2), g("B.K", 3), g("B.K", 4)]}
            for op, grs in regs.items():
                rl, shape = m._reg_layout(grs, offs[op])
                print(f"  reg {op} {lay(rl)} | {','.join(map(str, shape))}")


SHAPES = [(1, 1, 1, 16), (2, 1, 1, 16), (1, 2, 1, 16), (1, 1, 2, 16), (2, 2, 2, 16),
          (4, 1, 1, 16), (1, 1, 1, 8), (1, 1, 3, 8), (2, 2, 3, 8)]

def main():
    # _canon_perm of a few layouts: thread iters by stride descending, then
    # memory iters by stride descending, ties in order.
    for l in (TileLayout(S[(2, 8, 4, 2):(2, 4 @ laneid, 1 @ laneid, 1)]),
              TileLayout(S[(4, 2, 8):(1 @ laneid, 1, 4 @ laneid)]),
              TileLayout(S[(2, 4, 2, 3):(2, 1 @ laneid, 2, 4)]),
              TileLayout(S[(2, 2, 8):(1, 32 @ tx, 4 @ tx)])):
        print(f"canon {lay(l)} -> {','.join(map(str, m._canon_perm(list(l.shard))))}")
    # Canonicalize under the CUDA target: the layout's own scope picks the
    # axis fusers (td__lay_canonicalize_cuda).  Offsets on two axes that
    # fuse into one are left out: TVM keeps one of them (a deviation).
    for l in (TileLayout(S[(2, 32):(1 @ wid_in_wg, 1 @ laneid)]),
              TileLayout(S[(2, 4, 32):(1 @ wgid, 1 @ wid_in_wg, 1 @ laneid)]),
              TileLayout(S[(2, 128):(1 @ wgid, 1 @ tid_in_wg)]),
              TileLayout(S[(2, 4):(1 @ wgid, 1 @ wid_in_wg)]),
              TileLayout(S[(2, 8, 4):(1 @ warpid, 4 @ laneid, 1 @ laneid)] + R[2:1 @ laneid] + 3 @ laneid),
              TileLayout(S[(1, 8, 4):(1 @ warpid, 4 @ laneid, 1 @ laneid)]),
              TileLayout(S[(2, 8, 4, 2):(1 @ wid_in_wg, 4 @ laneid, 1 @ laneid, 1)] + 5),
              TileLayout(S[(2, 32):(32 @ tx, 1 @ laneid)]),
              TileLayout(S[(32, 2):(1 @ laneid, 32 @ tx)]),
              TileLayout(S[(2, 32):(1 @ wgid, 1 @ laneid)]),
              # Block axes: (cta, thread) and (cta, cluster) in upstream's
              # registry.  bx with tx is left out: TVM's walk of the scope
              # chain never ends (ours refuses it).
              TileLayout(S[(2, 32):(1 @ bx, 1 @ laneid)]),
              TileLayout(S[(2, 32):(1 @ bx, 1 @ by)]),
              TileLayout(S[(2, 32):(1 @ cbx, 1 @ bx)]),
              TileLayout(S[(2, 32):(1 @ cbx, 1 @ laneid)])):
        try:
            print(f"canonicalize {lay(l)} -> {lay(l.canonicalize())}")
        except Exception as e:
            print(f"canonicalize {lay(l)} FAILS {first_line(e)}")
    # tile_to beyond the fragments: a row-major tile, a replica, an offset.
    tile_to(TileLayout(S[(4, 8):(8, 1)]), (8, 16), (4, 8))
    tile_to(TileLayout(S[(8, 4):(4 @ laneid, 1 @ laneid)]), (16, 8), (8, 4))
    tile_to(TileLayout(S[(8, 2):(4 @ laneid, 1)]), (16, 6), (8, 2))
    for Mt, Nt, Kt, k in SHAPES:
        Dl, Al, Bl = frag(Mt, Nt, Kt, k)
        M, N, K = 16 * Mt, 8 * Nt, k * Kt
        # The operand layouts of upstream's test (its fragments tiled),
        # stored as is and transposed (td__mma_tile_layout).
        inst = f"m16n8k{k}.f16"
        print(f"fragment {inst} D {Mt},{Nt} 0 -> {lay(Dl)}")
        for op, l, t, shape in (("A", Al, (Mt, Kt), (M, K)), ("B", Bl, (Kt, Nt), (K, N))):
            print(f"fragment {inst} {op} {t[0]},{t[1]} 0 -> {lay(l)}")
            print(f"fragment {inst} {op} {t[0]},{t[1]} 1 -> {lay(tposed(l, shape))}")
        case(f"tiled_{Mt}x{Nt}x{Kt}_k{k}", M, N, K, Dl, Al, Bl)
    for tA, tB in ((True, False), (False, True), (True, True)):
        Dl, Al, Bl = frag(1, 1, 1, 16)
        Al2 = tposed(Al, [16, 16]) if tA else Al
        Bl2 = tposed(Bl, [16, 8]) if tB else Bl
        print(f"tposed {lay(Al)} | 16,16 -> {lay(tposed(Al, [16, 16]))}")
        case(f"transpose_A{int(tA)}_B{int(tB)}", 16, 8, 16, Dl, Al2, Bl2, tA=tA, tB=tB)
    for tA, tB in ((True, True),):
        Dl, Al, Bl = frag(2, 2, 2, 16)
        case("transpose_tiled_2x2x2", 32, 16, 32, Dl, tposed(Al, [32, 32]),
             tposed(Bl, [32, 16]), tA=True, tB=True)
    Dl, Al, Bl = frag(1, 1, 1, 16)
    # Derived declines (plan 1.2 probes M8, swapped_B, row_major_local_A).
    case("M8", 16, 8, 16, TileLayout(S[(8, 4, 2):(4 @ laneid, 1 @ laneid, 1)]), Al, Bl, Cl=Dl)
    case("swapped_B", 16, 8, 16, Dl, Al,
         TileLayout(S[(4, 2, 2, 8):(1 @ laneid, 1, 2, 4 @ laneid)]))
    case("row_major_local_A", 16, 8, 16, Dl, TileLayout(S[(16, 16):(16, 1)]), Bl)
    case("B_k8_fragment_for_k16", 16, 8, 16, Dl, Al,
         tile_to(B_FRAG_K8, (16, 8), (8, 8)).canonicalize())
    # Two warps splitting M (gemm_warps_probe.py): tx axis, and warpid + laneid.
    case("warps_tx", 32, 8, 16,
         TileLayout(S[(2, 2, 8, 4, 2):(32 @ tx, 2, 4 @ tx, 1 @ tx, 1)]),
         TileLayout(S[(2, 2, 8, 2, 4, 2):(32 @ tx, 2, 4 @ tx, 4, 1 @ tx, 1)]),
         TileLayout(S[(2, 4, 2, 8):(2, 1 @ tx, 1, 4 @ tx)]))
    case("warps_warpid_laneid", 32, 8, 16,
         TileLayout(S[(2, 2, 8, 4, 2):(1 @ warpid, 2, 4 @ laneid, 1 @ laneid, 1)]),
         TileLayout(S[(2, 2, 8, 2, 4, 2):(1 @ warpid, 2, 4 @ laneid, 4, 1 @ laneid, 1)]),
         TileLayout(S[(2, 4, 2, 8):(2, 1 @ laneid, 1, 4 @ laneid)]))
    # Two warps of a warpgroup: laneid + wid_in_wg stay two axes.
    case("warps_wid_in_wg", 32, 8, 16,
         TileLayout(S[(2, 2, 8, 4, 2):(1 @ wid_in_wg, 2, 4 @ laneid, 1 @ laneid, 1)]),
         TileLayout(S[(2, 2, 8, 2, 4, 2):(1 @ wid_in_wg, 2, 4 @ laneid, 4, 1 @ laneid, 1)]),
         TileLayout(S[(2, 4, 2, 8):(2, 1 @ laneid, 1, 4 @ laneid)]))
    # A warp tiling that differs between D and A (M.to), and one B whose N
    # lanes are not the g lanes.
    case("warps_A_on_other_warp", 32, 8, 16,
         TileLayout(S[(2, 2, 8, 4, 2):(32 @ tx, 2, 4 @ tx, 1 @ tx, 1)]),
         TileLayout(S[(2, 2, 8, 2, 4, 2):(2, 32 @ tx, 4 @ tx, 4, 1 @ tx, 1)]),
         TileLayout(S[(2, 4, 2, 8):(2, 1 @ tx, 1, 4 @ tx)]))
    case("warps_A_other_warp_stride", 32, 8, 16,
         TileLayout(S[(2, 2, 8, 4, 2):(32 @ tx, 2, 4 @ tx, 1 @ tx, 1)]),
         TileLayout(S[(2, 2, 8, 2, 4, 2):(64 @ tx, 2, 4 @ tx, 4, 1 @ tx, 1)]),
         TileLayout(S[(2, 4, 2, 8):(2, 1 @ tx, 1, 4 @ tx)]))
    # Regions of bigger buffers (the emitter slices them): a quarter of a
    # 2x2-tiled accumulator, the second K tile of A, the second N tile of B,
    # a region that cuts through the lanes (no slice), one that is not a
    # register rectangle of the fragment.
    D22, A22, B22 = frag(2, 2, 2, 16)
    case("region_D_quarter", 16, 8, 16, D22, Al, Bl, Cl=Dl,
         regions={"D": ((32, 16), [(16, 32), (8, 16)])})
    case("region_A_second_k", 16, 8, 16, Dl, A22, Bl,
         regions={"A": ((32, 32), [(16, 32), (16, 32)])})
    case("region_B_second_n", 16, 8, 16, Dl, Al, B22,
         regions={"B": ((32, 16), [(0, 16), (8, 16)])})
    case("region_all_tiled", 16, 8, 16, D22, A22, B22, Cl=D22,
         regions={"D": ((32, 16), [(0, 16), (8, 16)]), "C": ((32, 16), [(0, 16), (8, 16)]),
                  "A": ((32, 32), [(0, 16), (16, 32)]), "B": ((32, 16), [(16, 32), (8, 16)])})
    case("region_cuts_lanes", 16, 4, 16, Dl, Al, Bl, Cl=Dl,
         regions={"D": ((16, 8), [(0, 16), (0, 4)]), "C": ((16, 8), [(0, 16), (0, 4)]),
                  "B": ((16, 8), [(0, 16), (0, 4)])})
    case("region_D_rows_8", 8, 8, 16, Dl, Al, Bl, Cl=Dl,
         regions={"D": ((16, 8), [(0, 8), (0, 8)]), "C": ((16, 8), [(0, 8), (0, 8)]),
                  "A": ((16, 16), [(0, 8), (0, 16)])})
    case("region_cannot_slice", 16, 8, 16, Dl, Al, Bl, Cl=Dl,
         regions={"D": ((16, 8), [(0, 16), (1, 3)])})
    # A layout that is not one of its buffer's shape.
    case("layout_of_other_shape", 16, 8, 16, Dl, Al, Bl, Cl=Dl,
         regions={"A": ((16, 32), [(0, 16), (0, 16)])})
    # A layout whose thread axes do not form one scope (an ICHECK inside
    # slice, reported as not tileable).
    case("conflicting_scopes", 16, 8, 16, Dl, Al,
         TileLayout(S[(2, 4, 2, 8):(2, 1 @ laneid, 1, 4 @ tx)]))
    # wid_in_wg + wgid canonicalize to wgid + warpid: two thread axes.
    case("two_thread_axes", 16, 8, 16,
         TileLayout(S[(2, 4, 16):(1 @ wgid, 1 @ wid_in_wg, 1)]), Al, Bl, Cl=Dl)
    # A B whose K iters do not regroup by A's K extents (K = 24).
    D13, A13, _ = frag(1, 1, 3, 8)
    case("B_K_not_alignable", 16, 8, 24, D13, A13,
         TileLayout(S[(2, 3, 4, 8):(1, 2, 1 @ laneid, 4 @ laneid)]))
    case("B_N_lanes_wrong", 16, 8, 16, Dl, Al,
         TileLayout(S[(2, 4, 2, 8):(2, 8 @ laneid, 1, 1 @ laneid)]))
    # tiledispatch's own instructions (EXT): the PTX ISA's fragments of
    # one tile (A [M, K], B [K, N]; K = k_pack*t + p + 4*k_pack*kHi),
    # tiled 2 x 2 x 2 and with both operands transposed.
    ext_frags = {
        "f16acc": (("float16",) * 4, 16, A_FRAG_K8, B_FRAG_K8, True),
        "tf32": (("float32",) * 4, 8, TileLayout(S[(2, 8, 2, 4):(1, 4 @ laneid, 2, 1 @ laneid)]),
                 TileLayout(S[(2, 4, 8):(1, 1 @ laneid, 4 @ laneid)]), False),
        "s8": (("int8", "int8", "int32", "int32"), 32,
               TileLayout(S[(2, 8, 2, 4, 4):(4, 4 @ laneid, 8, 1 @ laneid, 1)]),
               TileLayout(S[(2, 4, 4, 8):(4, 1 @ laneid, 1, 4 @ laneid)]), False),
        "e4m3": (("float8_e4m3fn", "float8_e4m3fn", "float32", "float32"), 32,
                 TileLayout(S[(2, 8, 2, 4, 4):(4, 4 @ laneid, 8, 1 @ laneid, 1)]),
                 TileLayout(S[(2, 4, 4, 8):(4, 1 @ laneid, 1, 4 @ laneid)]), False),
    }
    for tag, (sig, k, a1, b1, k8_stack) in ext_frags.items():
        if k8_stack:   # the k16 tile: two k8 tiles stacked along K
            a1, b1 = a1.tile_to([16, 16], [16, 8]), b1.tile_to([16, 8], [8, 8])
            k = 16
        case(f"ext_{tag}", 16, 8, k, D_FRAG, a1, b1, sig=sig)
        D2, A2, B2 = (D_FRAG.tile_to([32, 16], [16, 8]), a1.tile_to([32, 2 * k], [16, k]),
                      b1.tile_to([2 * k, 16], [k, 8]))
        case(f"ext_{tag}_tiled_2x2x2", 32, 16, 2 * k, D2, A2, B2, sig=sig)
        case(f"ext_{tag}_tAtB", 16, 8, k, D_FRAG, tposed(a1, [16, k]), tposed(b1, [k, 8]),
             tA=True, tB=True, sig=sig)


if __name__ == "__main__":
    # The emitter runs inside the lowering pass, under a CUDA target: the
    # layouts' canonicalize then fuses laneid + warpid into tx (as ours).
    with tvm.target.Target({"kind": "cuda", "arch": "sm_80"}):
        main()
