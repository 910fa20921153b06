#!/usr/bin/env python3
"""Writes tests/conformance/tcgen05_cp_*.yaml: every distinct program of
upstream's test_tcgen05_cp.py (tests/python/tirx/operator/tile_primitive/
cuda/copy_async/ in apache/tvm) as a call file, its shared layouts printed
by TVM's own mma_shared_layout, its tmem layouts as the test declares them.

Run with the TVM venv's python (it imports tvm):
  /work/main/build-python/venv/bin/python tests/upstream/gen_tcgen05_cp_cases.py tests/conformance

Each entry: name, from, expect ("smem->tmem" or "none"), error text,
access line, buffers, regions, config, launch.  Cases the test matrix
shares (the same program under two tests) are written once.
"""
import sys
from pathlib import Path

from tvm.tirx.cuda.tile_primitive.tma_utils import SwizzleMode, mma_shared_layout

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else "tests/conformance")

MATRIX = [("128x256b", None), ("128x128b", None), ("64x128b", "warpx2::02_13"),
          ("64x128b", "warpx2::01_23"), ("32x128b", "warpx4"), ("4x256b", None)]
BITS = {"bfloat16": 16, "float32": 32, "uint8": 8}


def lay(obj) -> str:
    """TVM's printed layout without the T. prefixes."""
    return str(obj).replace("T.", "")


def mma(dtype, sw, shape):
    return lay(mma_shared_layout(dtype, SwizzleMode(sw), shape))


def tmem_layout(shape, mc, c):
    """_tmem_layout_for: (layout text or None for datapath D, shape)."""
    if shape in ("128x256b", "128x128b"):
        return None, [128, c]
    if shape == "4x256b":
        return f"S[(4, {c}) : (32@TLane, 1@TCol)]", [4, c]
    if shape == "32x128b":
        return f"S[(32, {c}) : (1@TLane, 1@TCol)] + R[4 : 32@TLane]", [32, c]
    if mc == "warpx2::02_13":
        return f"S[(64, {c}) : (1@TLane, 1@TCol)] + R[2 : 64@TLane]", [64, c]
    return f"S[(2, 32, {c}) : (64@TLane, 1@TLane, 1@TCol)] + R[2 : 32@TLane]", [64, c]


def build_case(shape, mc, sw, dtype, n_mid, s_row_off=0, t_col_off=0, extra=None,
               infer=False):
    """_build_case: the call of one (shape, multicast, swizzle, dtype, size)."""
    bits = BITS[dtype]
    rows, abits = int(shape.split("x")[0]), int(shape.split("x")[1][:-1])
    epa = abits // bits
    c = epa * n_mid
    t_c = c + t_col_off
    s_rows = max(rows + s_row_off, 8)
    if sw == 0:
        if abits == 128:
            s_shape, s_lay = [s_rows, epa], f"S[({s_rows}, {epa}) : ({epa}, 1)]"
        else:
            u = 128 // bits
            s_shape = [s_rows, 2 * u]
            s_lay = f"S[({s_rows // 8}, 8, 2, {u}) : ({16 * u}, {u}, {8 * u}, 1)]"
    else:
        s_cols = max(c, (16 << sw) // (bits // 8))
        s_shape = [s_rows, s_cols]
        s_lay = mma(dtype, sw, s_shape)
    t_lay, t_shape = tmem_layout(shape, mc, t_c)
    cfg = {"cta_group": 1} if infer else {"shape": shape, "cta_group": 1}
    if not infer and mc is not None:
        cfg["multicast"] = mc
    cfg.update(extra or {})
    return dict(dtype=dtype, s_shape=s_shape, s_lay=s_lay, t_shape=t_shape, t_lay=t_lay,
                s_reg=[(s_row_off, s_row_off + rows), (0, c)],
                t_reg=[(0, t_shape[0]), (t_col_off, t_c)], cfg=cfg)


def access(shape, mc, cg=1):
    return f"tcgen05.cp.cta_group::{cg}.{shape}" + (f".{mc}" if mc else "")


def reg(name, r):
    return f"{name}[{', '.join(f'{a}:{b}' for a, b in r)}]"


def write(name, frm, expect, case, error=None, acc=None, note=None, cluster=None):
    def cfgtext(cfg):
        items = []
        for k, v in cfg.items():
            items.append(f'{k}: "{v}"' if isinstance(v, str) else f"{k}: {v}")
        return "{" + ", ".join(items) + "}"
    t_lay = f', layout: "{case["t_lay"]}"' if case["t_lay"] else ""
    lines = [f"# expect: {expect}"]
    if expect != "none":
        lines.append("# arch: sm_100a")
    lines.append(f"# from {frm}")
    if error:
        lines.append(f"# error: {error}")
    if note:
        lines.append(f"# note: {note}")
    if acc:
        lines.append(f"# access: {acc}")
    lines += ["op: copy_async", "target: cuda", "arch: sm_100a", "scope: thread"]
    if cluster:
        n = int(cluster.split(",")[0])
        lines.append(f"launch: {{threadIdx.x: 128, blockIdx.x: {n}, cluster: [{cluster}]}}")
    lines += ["buffers:",
              f"  Tm: {{scope: tmem, dtype: {case['dtype']}, shape: {case['t_shape']}{t_lay}}}",
              f"  As: {{scope: shared, dtype: {case['dtype']}, shape: {case['s_shape']}, "
              f"layout: \"{case['s_lay']}\"}}",
              f"dst: \"{reg('Tm', case['t_reg'])}\"",
              f"src: \"{reg('As', case['s_reg'])}\""]
    if case["cfg"]:
        lines.append(f"config: {cfgtext(case['cfg'])}")
    (OUT / f"tcgen05_cp_{name}.yaml").write_text("\n".join(lines) + "\n")


def sid(shape, mc):
    return shape + ("_" + mc.replace("::", "_") if mc else "")


T = "test_tcgen05_cp.py::"
# The swizzled round-trip matrix.
for shape, mc in MATRIX:
    for sw in (1, 2, 3):
        for dtype in ("bfloat16", "float32"):
            for n_mid in (1, 4):
                ids = f"{shape}-{mc}-SW{16 << sw}-{dtype}-{'single_cp' if n_mid == 1 else 'multi_cp'}"
                write(f"rt_{sid(shape, mc)}_sw{sw}_{dtype}_n{n_mid}",
                      f"{T}test_cp_shape_roundtrip_swizzled[{ids}]", "smem->tmem",
                      build_case(shape, mc, sw, dtype, n_mid), acc=access(shape, mc))
# The nonswizzled round trips (two of them predate this file under their own names).
for shape, mc, dtype in [("64x128b", "warpx2::02_13", "bfloat16"),
                         ("64x128b", "warpx2::01_23", "float32"),
                         ("32x128b", "warpx4", "float32"), ("4x256b", None, "float32")]:
    write(f"rt_{sid(shape, mc)}_sw0_{dtype}_n1",
          f"{T}test_cp_shape_roundtrip_nonswizzled[{shape}-{mc}-{dtype}]", "smem->tmem",
          build_case(shape, mc, 0, dtype, 1), acc=access(shape, mc))
# Sub-region copies.
for shape, mc, sw, dtype, n_mid, sro, tco in [
        ("32x128b", "warpx4", 3, "bfloat16", 1, 8, 0),
        ("64x128b", "warpx2::02_13", 3, "bfloat16", 2, 0, 8),
        ("128x256b", None, 2, "float32", 2, 0, 8)]:
    write(f"off_{sid(shape, mc)}_sw{sw}_{dtype}_r{sro}_c{tco}",
          f"{T}test_cp_shape_roundtrip_offsets[{shape}-{mc}-{sw}-{dtype}-{n_mid}-{sro}-{tco}]",
          "smem->tmem", build_case(shape, mc, sw, dtype, n_mid, s_row_off=sro, t_col_off=tco),
          acc=access(shape, mc))
# Inference matches the explicit shape (both forms), and 128x128b's layout infers 256b.
for shape, mc in MATRIX:
    if shape == "128x128b":
        continue
    for infer in (False, True):
        write(f"{'infer' if infer else 'explicit'}_{sid(shape, mc)}_sw2_bfloat16_n2",
              f"{T}test_cp_shape_inferred_from_layouts_matches_explicit[{shape}-{mc}]"
              + (" (the bare call)" if infer else " (the explicit call)"),
              "smem->tmem", build_case(shape, mc, 2, "bfloat16", 2, infer=infer),
              acc=access(shape, mc))
write("infer_128x128b_layout_sw2_bfloat16_n2",
      f"{T}test_cp_128x128b_layout_infers_wider_256b_atom: a layout that fits 128x128b twice "
      "also fits one 128x256b atom, which inference prefers", "smem->tmem",
      build_case("128x128b", None, 2, "bfloat16", 2, infer=True), acc=access("128x256b", None))
write("4x256b_sw1_bfloat16_n2", f"{T}test_cp_4x256b_compile_emits_shape_and_count (two copies)",
      "smem->tmem", build_case("4x256b", None, 1, "bfloat16", 2), acc=access("4x256b", None))
# Layout-F scatter: 4x256b atoms tiled through the taddr lane half-word.
f_scatter = dict(dtype="bfloat16", s_shape=[64, 16], s_lay=mma("bfloat16", 1, [64, 16]),
                 t_shape=[64, 16], t_lay="S[(16, 4, 16) : (1@TLane, 32@TLane, 1@TCol)]",
                 s_reg=[(0, 64), (0, 16)], t_reg=[(0, 64), (0, 16)], cfg={"cta_group": 1})
write("4x256b_lane_tiled_layout_f", f"{T}test_cp_4x256b_lane_tiled_layout_f_scatter "
      "(16 copies, the lane base in the address's bits 16-31)", "smem->tmem", f_scatter,
      acc=access("4x256b", None))
write("4x256b_lane_tiled_partial", f"{T}test_cp_4x256b_lane_tiled_partial_window "
      "(rows 4:12 of the Layout-F view: lanes 32q + 4..11)", "smem->tmem",
      dict(f_scatter, s_reg=[(0, 32), (0, 16)], t_reg=[(16, 48), (0, 16)]),
      acc=access("4x256b", None))
# The CTA-pair form.
write("cta2_128x256b", f"{T}test_cp_cta_group_2_128x256b_pair_collective", "smem->tmem",
      dict(dtype="bfloat16", s_shape=[128, 16], s_lay=mma("bfloat16", 1, [128, 16]),
           t_shape=[128, 16], t_lay=None, s_reg=[(0, 128), (0, 16)], t_reg=[(0, 128), (0, 16)],
           cfg={"shape": "128x256b", "cta_group": 2}),
      acc=access("128x256b", None, 2), note="pair-collective", cluster="2, 1")
write("cta2_64x128b_warpx2_02_13", f"{T}test_cp_cta_group_2_64x128b_warpx2_pair_collective",
      "smem->tmem",
      dict(dtype="bfloat16", s_shape=[64, 8], s_lay="S[(64, 8) : (8, 1)]", t_shape=[64, 8],
           t_lay="S[(64, 8) : (1@TLane, 1@TCol)] + R[2 : 64@TLane]",
           s_reg=[(0, 64), (0, 8)], t_reg=[(0, 64), (0, 8)],
           cfg={"shape": "64x128b", "multicast": "warpx2::02_13", "cta_group": 2}),
      acc=access("64x128b", "warpx2::02_13", 2), cluster="2, 1")
write("cta2_no_cluster", f"{T}test_cp_cta_group_2_128x256b_pair_collective without its "
      "cluster launch (ours: a CTA pair needs one)", "none",
      dict(dtype="bfloat16", s_shape=[128, 16], s_lay=mma("bfloat16", 1, [128, 16]),
           t_shape=[128, 16], t_lay=None, s_reg=[(0, 128), (0, 16)], t_reg=[(0, 128), (0, 16)],
           cfg={"shape": "128x256b", "cta_group": 2}),
      error="cta_group 2 copies into the tensor memory of a CTA pair")
# The legacy 32x128b.warpx4 programs (uint8).
four = dict(dtype="uint8", s_shape=[4, 32, 16], s_lay="S[(4, 32, 16) : (512, 16, 1)]",
            t_shape=[4, 32, 16],
            t_lay="S[(4, 32, 16) : (16@TCol, 1@TLane, 1@TCol)] + R[4 : 32@TLane]",
            s_reg=[(0, 4), (0, 32), (0, 16)], t_reg=[(0, 4), (0, 32), (0, 16)],
            cfg={"cta_group": 1})
write("default_32x128b_u8_4tiles", f"{T}test_cp_default_32x128b_instruction_sequence_unchanged, "
      "::test_multi_cp_sw0_4tiles and ::test_multi_cp_encodes_descriptor_once_and_patches_addr "
      "(one program: descriptor (0, 8, 0), tmem columns 0/4/8/12, shared bytes 0/512/1024/1536)",
      "smem->tmem", four, acc=access("32x128b", "warpx4"))
T_BASIC = "S[(32, 16) : (1@TLane, 1@TCol)] + R[4 : 32@TLane]"
single = [
    ("sw0_plain_atom_aligned", "S[(32, 16) : (16, 1)]", [32, 16], [(0, 32), (0, 16)]),
    ("sw1_32B_atom", mma("uint8", 1, [32, 32]), [32, 32], [(0, 32), (0, 16)]),
    ("sw2_64B_atom", mma("uint8", 2, [32, 64]), [32, 64], [(0, 32), (0, 16)]),
    ("sw3_128B_atom", mma("uint8", 3, [32, 128]), [32, 128], [(0, 32), (0, 16)]),
    ("sw3_64x128_corner", mma("uint8", 3, [64, 128]), [64, 128], [(0, 32), (0, 16)]),
    ("sw3_64x128_atom_row_8", mma("uint8", 3, [64, 128]), [64, 128], [(8, 40), (0, 16)]),
    ("sw2_32x256_col_64", mma("uint8", 2, [32, 256]), [32, 256], [(0, 32), (64, 80)]),
    ("sw0_M_atom_major_4_0", "S[(8, 8, 2, 16) : (128, 16, 1024, 1)]", [64, 32],
     [(4, 36), (0, 16)]),
]
for name, s_lay, s_shape, s_reg in single:
    write(f"single_{name}", f"{T}test_single_cp[{name}]", "smem->tmem",
          dict(dtype="uint8", s_shape=s_shape, s_lay=s_lay, t_shape=[32, 16], t_lay=T_BASIC,
               s_reg=s_reg, t_reg=[(0, 32), (0, 16)], cfg={"cta_group": 1}),
          acc=access("32x128b", "warpx4"))
write("nvfp4_sfb_align_middle", f"{T}test_align_middle_2_to_1_nvfp4_sfb (shared middle "
      "[(4, 512), (2, 2048)] against one tmem middle iter: 8 copies)", "smem->tmem",
      dict(dtype="uint8", s_shape=[256, 16], s_lay="S[(2, 4, 32, 4, 4) : (2048, 4, 16, 512, 1)]",
           t_shape=[256, 16],
           t_lay="S[(2, 4, 32, 4, 4) : (16@TCol, 4@TCol, 1@TLane, 32@TCol, 1@TCol)] + R[4 : 32@TLane]",
           s_reg=[(0, 256), (0, 16)], t_reg=[(0, 256), (0, 16)], cfg={"cta_group": 1}),
      acc=access("32x128b", "warpx4"))
bad = [
    ("sw3_mid_atom_row", mma("uint8", 3, [64, 128]), [64, 128], [(4, 36), (0, 16)],
     "not provably aligned to atom=1024B"),
    ("sw2_mid_atom_col", mma("uint8", 2, [32, 128]), [32, 128], [(0, 32), (32, 48)],
     "not provably aligned to atom=512B"),
    ("sw0_row_stride_64", "S[(64, 64) : (64, 1)]", [64, 64], [(4, 36), (0, 16)],
     "swizzle mode mismatch: s_layout swizzle_len=0 but atom_K_byte=64 implies sw=2"),
]
for name, s_lay, s_shape, s_reg, err in bad:
    write(f"rejects_bad_{name}", f"{T}test_dispatch_rejects_bad_inputs[{name}]", "none",
          dict(dtype="uint8", s_shape=s_shape, s_lay=s_lay, t_shape=[32, 16], t_lay=T_BASIC,
               s_reg=s_reg, t_reg=[(0, 32), (0, 16)], cfg={"cta_group": 1}), error=err)
# The negative tests (their programs; the texts are TVM's).
c8 = 8
r02, _ = tmem_layout("64x128b", "warpx2::02_13", c8)
write("rejects_wrong_replica", f"{T}test_cp_rejects_wrong_replica_for_multicast", "none",
      dict(dtype="bfloat16", s_shape=[64, 64], s_lay=mma("bfloat16", 3, [64, 64]), t_shape=[64, 8],
           t_lay=r02, s_reg=[(0, 64), (0, 8)], t_reg=[(0, 64), (0, 8)],
           cfg={"shape": "64x128b", "multicast": "warpx2::01_23", "cta_group": 1}),
      error="replica mismatch for tcgen05.cp 64x128b.warpx2::01_23")
write("rejects_missing_multicast", f"{T}test_cp_rejects_missing_multicast_for_64x128b", "none",
      dict(dtype="bfloat16", s_shape=[64, 64], s_lay=mma("bfloat16", 3, [64, 64]), t_shape=[64, 8],
           t_lay=r02, s_reg=[(0, 64), (0, 8)], t_reg=[(0, 64), (0, 8)],
           cfg={"shape": "64x128b", "cta_group": 1}),
      error="tcgen05.cp shape '64x128b' requires an explicit multicast config")
w4, _ = tmem_layout("32x128b", "warpx4", 24)
write("rejects_non_128b_tcol_offset", f"{T}test_cp_rejects_non_128b_tcol_offset", "none",
      dict(dtype="bfloat16", s_shape=[32, 64], s_lay=mma("bfloat16", 3, [32, 64]), t_shape=[32, 24],
           t_lay=w4, s_reg=[(0, 32), (0, 16)], t_reg=[(0, 32), (2, 18)],
           cfg={"shape": "32x128b", "multicast": "warpx4", "cta_group": 1}),
      error="t TCol offset 2 not provably 128b-aligned")
write("rejects_unknown_shape", f"{T}test_cp_rejects_unknown_shape (shape 96x128b)", "none",
      build_case("32x128b", "warpx4", 3, "bfloat16", 1, extra={"shape": "96x128b"}),
      error="unknown tcgen05.cp shape '96x128b'")
write("rejects_illegal_multicast", f"{T}test_cp_rejects_illegal_shape_multicast_combo", "none",
      build_case("128x256b", None, 3, "bfloat16", 1, extra={"multicast": "warpx4"}),
      error="illegal multicast 'warpx4' for tcgen05.cp shape '128x256b'")
# test_cp_rejects_nonzero_tmem_lane_offset's tmem buffer (lanes 64:128
# mirrored at +64, reaching lane 191) is refused where it is declared: the
# call loader's case tests/call/data/bad/tmem_layout_lane_reach.yaml.  So
# are TLane on a shared buffer and a tmem layout naming another axis
# (shared_layout_tlane.yaml, tmem_layout.yaml there); the conformance
# corpus holds calls that load.
write("rejects_decompress", f"{T}test_cp_rejects_decompress_on_generic_path", "none",
      build_case("128x256b", None, 3, "bfloat16", 1, extra={"decompress": "b8x16.b6x16_p32"}),
      error="tcgen05.cp planner does not support decompress")
write("rejects_non_16b_row_group_stride", f"{T}test_cp_rejects_non_16b_aligned_row_group_stride",
      "none", dict(dtype="bfloat16", s_shape=[32, 8], s_lay="S[(4, 8, 8) : (100, 8, 1)]",
                   t_shape=[32, 8], t_lay="S[(32, 8) : (1@TLane, 1@TCol)] + R[4 : 32@TLane]",
                   s_reg=[(0, 32), (0, 8)], t_reg=[(0, 32), (0, 8)],
                   cfg={"shape": "32x128b", "multicast": "warpx4", "cta_group": 1}),
      error="s_lane row-group stride 200B not 16B-aligned")
write("rejects_swizzle_family", f"{T}test_cp_rejects_non_canonical_swizzle_family", "none",
      dict(dtype="bfloat16", s_shape=[128, 64],
           s_lay="ComposeLayout(2, 3, 3, TileLayout(S[(16, 8, 64) : (512, 64, 1)]))",
           t_shape=[128, 8], t_lay=None, s_reg=[(0, 128), (0, 8)], t_reg=[(0, 128), (0, 8)],
           cfg={"shape": "128x128b", "cta_group": 1}),
      error="swizzle family mismatch: expected canonical mma atom ComposeLayout(per_element=3, "
            "swizzle_len=3, atom_len=3); got per_element=2, atom_len=3")
# Derived edges (ours).
write("tmem_cell_twice", "ours: a tmem layout with a stride-0 column iter puts two elements of "
      "the region in one cell, which no copy can write", "none",
      dict(dtype="float32", s_shape=[128, 8], s_lay="S[(128, 2, 4) : (4, 512, 1)]",
           t_shape=[128, 8], t_lay="S[(128, 2, 4) : (1@TLane, 0@TCol, 1@TCol)]",
           s_reg=[(0, 128), (0, 8)], t_reg=[(0, 128), (0, 8)],
           cfg={"shape": "128x128b", "cta_group": 1}),
      error="two elements of the region land in one tensor-memory cell")
write("cta2_odd_cluster", "ours: cta_group 2 with a cluster of 3 CTAs (a CTA has no pair)", "none",
      dict(dtype="bfloat16", s_shape=[128, 16], s_lay=mma("bfloat16", 1, [128, 16]),
           t_shape=[128, 16], t_lay=None, s_reg=[(0, 128), (0, 16)], t_reg=[(0, 128), (0, 16)],
           cfg={"shape": "128x256b", "cta_group": 2}),
      error="needs a cluster launch of an even number of CTAs", cluster="3, 1")
write("swizzled_256b_units_apart", "ours, TVM's text: a 128-byte-swizzled 256-bit row whose "
      "two 16-byte units are not adjacent", "none",
      dict(dtype="bfloat16", s_shape=[128, 128],
           s_lay="ComposeLayout(3, 3, 3, TileLayout(S[(128, 2, 64) : (64, 8192, 1)]))",
           t_shape=[128, 16], t_lay=None, s_reg=[(0, 128), (56, 72)], t_reg=[(0, 128), (0, 16)],
           cfg={"shape": "128x256b", "cta_group": 1}),
      error="swizzled 256b atom requires the two 16B units adjacent in the linear layout")
