"""Writes the conformance calls of upstream's test_gemm_async.py (phase A of
design/gemm/plan.md 3.6: dense kinds, shared A and B, C in tensor memory)
as tests/conformance/gemm_async_tvm_*.yaml, each lowered by TVM first (run
with the venv's python, where TVM is installed):

    /work/main/build-python/venv/bin/python \
        tests/upstream/gen_gemm_async_conformance.py tests/conformance

For every case TVM builds the same one-CTA kernel as design/gemm/probes/
async_probe.py (A, B in shared memory with the layouts TVM's
mma_shared_layout makes, C in tensor memory at address 0, the call under
`if tid < 1` or, at warp scope, `if tid < 32`) and compiles it with
smem_desc="encode", whose CUDA spells every MMA's operands as byte
offsets.  What TVM emits goes into the call file's header, which
tests/upstream/check_gemm_async.py compares with `tiledispatch emit` (no
TVM needed):

    # expect: tcgen05          (or `none` with `# error: TVM's text`)
    # arch: sm_100a            (what run.py --compile builds it for)
    # access: tcgen05.mma.cta_group::1.kind::f16
    # count: 4
    # tvm-desc: A 0 64 3 B 0 64 3          (ldo sdo swizzle per operand)
    # tvm-mma: 0 0 0 135266320 0           (per MMA: D column offset, A and
                                            B offsets in 16-byte units,
                                            idesc, enable_input_d)

Where TVM is wrong (design/gemm/plan.md section 4) the call says what we
do instead and why (`# deviation: Dn ...`); TVM's own outcome is then not
compared.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.cuda.tile_primitive.tma_utils import (SwizzleMode, mma_atom_layout,
                                                     mma_atom_shape, mma_shared_layout)
from tvm.tirx.layout import ComposeLayout, R, S, TileLayout, TLane, TCol, tmem_datapath_layout

A_FLAT = "S[({}, {}) : (1@TLane, 1@TCol)]"
F_TEXT = "S[(4, 16, {}) : (32@TLane, 1@TLane, 1@TCol)]"
A_REP = "S[(64, 128) : (1@TLane, 1@TCol)] + R[2 : 64@TLane]"
A_BATCHED = "S[(2, {}, {}) : (64@TLane, 1@TLane, 1@TCol)]"

IMPL = "tvm/backend/cuda/tile_primitive/gemm_async/tcgen05.py"
SRC = "apache/tvm tests/python/tirx/operator/tile_primitive/cuda/gemm_async/test_gemm_async.py"


def case(name, frm, *, C=((128, 64), (0, 128), (0, 64)), c_layout="D",
         A=((128, 64), "float16", None, 3), B=((64, 64), "float16", None, 3),
         transA=False, transB=False, accum=False, scope="thread", cfg=None,
         cluster=False, arch="sm_100a", active=None, deviation=None, sf=None):
    """A's fourth field is a shared layout (a swizzle mode, a function) or,
    for A in tensor memory, TMEM(text): the layout in the call-file
    notation, which TVM's constructor reads as well.  c_layout "batched" is
    the .ws fold C[2, M, N/2] (C's shape is then 3-D)."""
    return dict(name=name, frm=frm, C=C, c_layout=c_layout, A=A, B=B, transA=transA,
                transB=transB, accum=accum, scope=scope, cfg=dict(cfg or {}),
                cluster=cluster, arch=arch, active=active, deviation=deviation, sf=sf)


class TMEM(str):
    """A in tensor memory, its layout in the call-file notation."""


def tmem_layout(text):
    """The call-file notation of a tensor-memory layout as TVM's object
    (S[(..) : (..@TLane, ..)] with an optional + R[n : s@TLane])."""
    m = re.fullmatch(r"S\[\(?([^:]*?)\)? : \(?([^\]]*?)\)?\](?: \+ R\[(\d+) : (\d+)@TLane\])?"
                     r"(?: \+ (\d+)@TLane)?", text)
    shape = tuple(int(x) for x in m.group(1).split(","))
    axes = {"TLane": TLane, "TCol": TCol}
    strides = tuple(int(x) if "@" not in x else int(x.split("@")[0]) @ axes[x.split("@")[1]]
                    for x in (y.strip() for y in m.group(2).split(",")))
    if len(shape) == 1:
        shape, strides = shape[0], strides[0]
    spec = S[shape:strides]
    if m.group(3):
        spec = spec + R[int(m.group(3)):int(m.group(4)) @ TLane]
    lay = TileLayout(spec)
    if m.group(5):  # a lane offset
        lay = TileLayout.from_iters(lay.shard, lay.replica, {TLane: int(m.group(5))})
    return lay


def full(shape):
    return tuple((0, s) for s in shape)


def mid_stage(dtype, shape):
    """upstream's _mid_stage_layout (128B): (D0, stages, D1), stages the
    outermost stride."""
    base = mma_shared_layout(dtype, SwizzleMode.SWIZZLE_128B_ATOM, (shape[0], shape[-1]))
    return base.tile_to(shape, [shape[0], 1, shape[-1]])


def mn_major(dtype, shape):
    """upstream's _mn_major_layout (128B): the penultimate dim contiguous
    within the atom."""
    sw = SwizzleMode.SWIZZLE_128B_ATOM
    atom = mma_atom_layout(dtype, sw)
    base = mma_atom_shape(dtype, sw)
    swapped = [base[1], base[0]]
    mn_atom = ComposeLayout(atom.per_element, atom.swizzle_len, atom.atom_len,
                            TileLayout(S[tuple(swapped):(1, swapped[0])]),
                            atom.swizzle_inner)
    step = [1] * (len(shape) - 2) + [shape[-2], swapped[1]]
    atom_nd = [1] * (len(shape) - 2) + swapped
    return mn_atom.tile_to(step, atom_nd).tile_to(shape, step).canonicalize()


def fixed(text):
    """A layout given as TVM's constructor: S[...] with strides."""
    return lambda dtype, shape: text


# (shape, dtype, region or None for the whole buffer, swizzle mode or a
# function (dtype, shape) -> TVM layout)
CASES = [
    case("cta_group_1", "test_gemm_tcgen05_cta_group_1",
         C=((128, 512), (0, 128), (256, 384)),
         A=((3, 128, 64), "float16", ((1, 2), (0, 128), (0, 64)), 3),
         B=((3, 128, 64), "float16", ((2, 3), (0, 128), (0, 64)), 3)),
    case("cta_group_2", "test_gemm_tcgen05_cta_group_2",
         C=((256, 512), (0, 128), (128, 256)),
         A=((3, 256, 64), "float16", ((1, 2), (0, 128), (0, 64)), 3),
         B=((3, 128, 64), "float16", ((2, 3), (0, 64), (0, 64)), 3),
         cfg={"cta_group": 2}, cluster=True),
    case("arbitrary_tiles_fp16_K128", "test_gemm_tcgen05_arbitrary_tiles[fp16_K128]",
         C=((128, 128), (0, 128), (0, 128)),
         A=((3, 128, 128), "float16", ((1, 2), (0, 128), (0, 128)), 3),
         B=((3, 128, 128), "float16", ((2, 3), (0, 128), (0, 128)), 3)),
    case("arbitrary_tiles_fp16_K128_N64", "test_gemm_tcgen05_arbitrary_tiles[fp16_K128_N64]",
         C=((128, 64), (0, 128), (0, 64)),
         A=((3, 128, 128), "float16", ((1, 2), (0, 128), (0, 128)), 3),
         B=((3, 64, 128), "float16", ((2, 3), (0, 64), (0, 128)), 3)),
    case("arbitrary_tiles_transB", "test_gemm_tcgen05_arbitrary_tiles[transB]",
         C=((128, 128), (0, 128), (0, 128)),
         A=((3, 128, 64), "float16", ((1, 2), (0, 128), (0, 64)), 3),
         B=((3, 64, 128), "float16", ((2, 3), (0, 64), (0, 128)), 3), transB=True),
    case("arbitrary_tiles_transA", "test_gemm_tcgen05_arbitrary_tiles[transA]",
         C=((128, 128), (0, 128), (0, 128)),
         A=((3, 64, 128), "float16", ((1, 2), (0, 64), (0, 128)), 3),
         B=((3, 128, 64), "float16", ((2, 3), (0, 128), (0, 64)), 3), transA=True),
    case("arbitrary_tiles_transAB_K128", "test_gemm_tcgen05_arbitrary_tiles[transAB_K128]",
         C=((128, 128), (0, 128), (0, 128)),
         A=((3, 128, 128), "float16", ((1, 2), (0, 128), (0, 128)), 3),
         B=((3, 128, 128), "float16", ((2, 3), (0, 128), (0, 128)), 3),
         transA=True, transB=True),
    case("arbitrary_tiles_unit_dim_middle", "test_gemm_tcgen05_arbitrary_tiles[unit_dim_middle]",
         C=((128, 128), (0, 128), (0, 128)),
         A=((128, 3, 64), "float16", ((0, 128), (1, 2), (0, 64)), mid_stage),
         B=((3, 128, 64), "float16", ((2, 3), (0, 128), (0, 64)), 3)),
    case("arbitrary_tiles_mn_major", "test_gemm_tcgen05_arbitrary_tiles[mn_major]",
         C=((128, 128), (0, 128), (0, 128)),
         A=((3, 128, 128), "float16", ((1, 2), (0, 128), (0, 128)), mn_major),
         B=((3, 128, 128), "float16", ((2, 3), (0, 128), (0, 128)), 3)),
    case("arbitrary_tiles_transA_kmajor_smem", "test_gemm_tcgen05_arbitrary_tiles[transA_kmajor_smem]",
         C=((128, 128), (0, 128), (0, 128)),
         A=((3, 128, 128), "float16", ((1, 2), (0, 128), (0, 128)), mn_major),
         B=((3, 128, 128), "float16", ((2, 3), (0, 128), (0, 128)), 3), transA=True),
    case("no_swizzle_column_major", "test_gemm_tcgen05_no_swizzle_smem_descriptor_codegen[column_major] (cta_group 1, N = 128)",
         C=((64, 128), (0, 64), (0, 128)),
         A=((64, 64), "bfloat16", None, fixed(TileLayout(S[(64, 64):(1, 64)]))),
         B=((64, 128), "bfloat16", None, mn_major), transB=True),
    case("no_swizzle_packed_16b", "test_gemm_tcgen05_no_swizzle_smem_descriptor_codegen[packed_16b] (cta_group 1, N = 128)",
         C=((64, 128), (0, 64), (0, 128)),
         A=((64, 64), "bfloat16", None, fixed(TileLayout(S[(64, 8, 8):(8, 512, 1)]))),
         B=((64, 128), "bfloat16", None, mn_major), transB=True),
    case("no_swizzle_col_major_64", "test_gemm_tcgen05_no_swizzle_col_major_rejects_non_128B_contiguous (M = 64, accepted)",
         C=((64, 256), (0, 64), (0, 256)),
         A=((64, 64), "bfloat16", None, fixed(TileLayout(S[(64, 64):(1, 64)]))),
         B=((64, 256), "bfloat16", None, 3), transB=True),
    case("rejects_no_swizzle_col_major_128", "test_gemm_tcgen05_no_swizzle_col_major_rejects_non_128B_contiguous",
         C=((128, 256), (0, 128), (0, 256)),
         A=((128, 64), "bfloat16", None, fixed(TileLayout(S[(128, 64):(1, 128)]))),
         B=((64, 256), "bfloat16", None, 3), transB=True),
    case("rejects_packed_16b_fp8", "test_gemm_tcgen05_no_swizzle_packed_16b_rejects_non_16bit_dtype",
         C=((64, 256), (0, 64), (0, 256)),
         A=((64, 64), "float8_e4m3fn", None, fixed(TileLayout(S[(64, 4, 16):(16, 1024, 1)]))),
         B=((64, 256), "float8_e4m3fn", None, 3), transB=True),
    case("packed_16b_bf16", "test_gemm_tcgen05_no_swizzle_packed_16b_rejects_non_16bit_dtype (bf16, accepted)",
         C=((64, 256), (0, 64), (0, 256)),
         A=((64, 64), "bfloat16", None, fixed(TileLayout(S[(64, 8, 8):(8, 512, 1)]))),
         B=((64, 256), "bfloat16", None, 3), transB=True),
    case("rejects_tf32_b_mn_major", "test_gemm_tcgen05_rejects_tf32_mn_major",
         C=((64, 256), (0, 64), (0, 256)), A=((64, 32), "float32", None, 3),
         B=((32, 256), "float32", None, 3), transB=True, cfg={"is_AB_tf32": True}),
    case("bf16_b_mn_major", "test_gemm_tcgen05_rejects_tf32_mn_major (bf16, accepted)",
         C=((64, 256), (0, 64), (0, 256)), A=((64, 64), "bfloat16", None, 3),
         B=((64, 256), "bfloat16", None, 3), transB=True),
    case("rejects_non_uniform_atom_grid", "test_gemm_tcgen05_rejects_non_uniform_atom_grid",
         C=((64, 256), (0, 64), (0, 256)),
         A=((64, 64), "bfloat16", None, fixed(ComposeLayout(3, 3, 3, TileLayout(S[(2, 4, 8, 64):(4096, 512, 64, 1)])))),
         B=((64, 256), "bfloat16", None, 3), transB=True),
    case("uniform_atom_grid", "test_gemm_tcgen05_rejects_non_uniform_atom_grid (uniform, accepted)",
         C=((64, 256), (0, 64), (0, 256)),
         A=((64, 64), "bfloat16", None, fixed(ComposeLayout(3, 3, 3, TileLayout(S[(2, 4, 8, 64):(2048, 512, 64, 1)])))),
         B=((64, 256), "bfloat16", None, 3), transB=True),
    case("instr_desc_n32", "test_gemm_tcgen05_instr_desc_fold_mirrors_runtime_shape_rules (N = 32, accepted)",
         C=((128, 32), (0, 128), (0, 32)), A=((128, 64), "bfloat16", None, 3),
         B=((32, 64), "bfloat16", None, 3)),
    case("rejects_instr_desc_n24", "test_gemm_tcgen05_instr_desc_fold_mirrors_runtime_shape_rules",
         C=((128, 24), (0, 128), (0, 24)), A=((128, 64), "bfloat16", None, 3),
         B=((24, 64), "bfloat16", None, 3),
         deviation="D6: TVM's tile chooser keeps N=24, then its encoder raises; we decline with that text"),
    case("layout_f_m64", "test_gemm_tcgen05_cta_group_1_layout_f_m64",
         C=((64, 64), (0, 64), (0, 64)), c_layout="F", A=((64, 64), "float16", None, 3)),
    case("layout_f_m64_n128_cols", "test_gemm_tcgen05_cta_group_1_layout_f_m64 (N = 128, columns 64..128 of a (64, 256) buffer)",
         C=((64, 256), (0, 64), (64, 192)), c_layout="F", A=((64, 64), "float16", None, 3),
         B=((128, 64), "float16", None, 3)),
    case("layout_b_cta2_m64", "test_gemm_tcgen05_cta_group_2_layout_b",
         C=((64, 128), (0, 64), (0, 128)), c_layout="B", A=((64, 64), "float16", None, 3),
         B=((64, 64), "float16", None, 3), cfg={"cta_group": 2, "mma_m": 128, "mma_n": 128},
         cluster=True),
    case("layout_b_cta2_m64_n256", "test_gemm_tcgen05_cta_group_2_layout_b (N = 256, tile chosen)",
         C=((64, 256), (0, 64), (0, 256)), c_layout="B", A=((64, 64), "float16", None, 3),
         B=((128, 64), "float16", None, 3), cfg={"cta_group": 2}, cluster=True),
    case("rejects_cta2_m64_identity", "test_gemm_tcgen05_cta_group_2_layout_b (C not Layout B)",
         C=((64, 128), (0, 64), (0, 128)), A=((64, 64), "float16", None, 3),
         B=((64, 64), "float16", None, 3), cfg={"cta_group": 2}, cluster=True,
         deviation="TVM raises a structural-equality error for C; we decline naming Layout B's layout"),
    case("weight_stationary", "test_gemm_tcgen05_weight_stationary_codegen",
         C=((128, 512), (0, 128), (256, 384)),
         A=((3, 128, 64), "float16", ((1, 2), (0, 128), (0, 64)), 3),
         B=((3, 128, 64), "float16", ((2, 3), (0, 128), (0, 64)), 3),
         cfg={"weight_stationary": True}),
    case("m64_packed_c_infers_ws", "test_gemm_tcgen05_cta1_m64_packed_c_infers_weight_stationary (A in shared memory)",
         C=((64, 128), (0, 64), (0, 128)), c_layout="E", A=((64, 64), "float16", None, 3),
         B=((128, 64), "float16", None, 3)),
    case("m64_packed_c_ws_n256", "test_gemm_tcgen05_cta1_m64_accepts_packed_c_layout_ws (N = 256, A in shared memory)",
         C=((64, 256), (0, 64), (0, 256)), c_layout="E", A=((64, 64), "float16", None, 3),
         B=((256, 64), "float16", None, 3), cfg={"weight_stationary": True}),
    case("rejects_m64_packed_c_ws_false", "test_gemm_tcgen05_cta1_m64_packed_c_infers_weight_stationary (weight_stationary=False)",
         C=((64, 128), (0, 64), (0, 128)), c_layout="E", A=((64, 64), "float16", None, 3),
         B=((128, 64), "float16", None, 3), cfg={"weight_stationary": False}),
    case("rejects_m64_ws_identity_c", "test_gemm_tcgen05_cta1_m64_ws_requires_layout_e_c (A in shared memory)",
         C=((64, 128), (0, 64), (0, 128)), A=((64, 64), "float16", None, 3),
         B=((128, 64), "float16", None, 3), cfg={"weight_stationary": True}),
    case("layout_b_readback", "test_gemm_tcgen05_cta_group_2_datapath_b_readback",
         C=((64, 128), (0, 64), (0, 128)), c_layout="B", A=((64, 64), "float16", None, 3),
         B=((64, 64), "float16", None, 3), cfg={"cta_group": 2}, cluster=True),
    case("no_swizzle_col_major_a_ws", "test_gemm_tcgen05_no_swizzle_col_major_a_ws_local_idesc",
         C=((64, 256), (0, 64), (0, 256)), c_layout="E",
         A=((64, 64), "bfloat16", None, fixed(TileLayout(S[(64, 64):(1, 64)]))),
         B=((64, 256), "bfloat16", None, 3), transB=True, cfg={"weight_stationary": True}),
    # A in tensor memory (phase B): the [a_tmem] form, its datapaths, the
    # batched A[2, M, K] and C[2, M, N/2] folds of .ws
    case("tmem_a_cta2_replicated", "test_gemm_tcgen05_cta_group_2_accepts_replicated_tmem_a_codegen",
         C=((64, 128), (0, 64), (0, 128)), c_layout="B",
         A=((64, 128), "bfloat16", None, TMEM(A_REP)),
         B=((64, 128), "bfloat16", None, 3), cfg={"cta_group": 2}, cluster=True),
    case("rejects_tmem_a_cta2_flat", "test_gemm_tcgen05_cta_group_2_rejects_flat_tmem_a_codegen",
         C=((64, 128), (0, 64), (0, 128)), c_layout="B",
         A=((64, 128), "bfloat16", None, TMEM(A_FLAT.format(64, 128))),
         B=((64, 128), "bfloat16", None, 3), cfg={"cta_group": 2}, cluster=True),
    case("tmem_a_cta2_batched", "test_gemm_tcgen05_cta_group_2_accepts_replicated_tmem_a_codegen (A batched A[2, 64, 128], Layout B)",
         C=((64, 128), (0, 64), (0, 128)), c_layout="B",
         A=((2, 64, 128), "bfloat16", None, TMEM(A_BATCHED.format(64, 128))),
         B=((64, 128), "bfloat16", None, 3), cfg={"cta_group": 2}, cluster=True),
    case("tmem_a_ws_packed_c", "test_gemm_tcgen05_cta1_m64_accepts_packed_c_layout_ws",
         C=((64, 128), (0, 64), (0, 128)), c_layout="E",
         A=((2, 64, 16), "bfloat16", None, TMEM(A_BATCHED.format(64, 16))),
         B=((128, 16), "bfloat16", None, 1), cfg={"weight_stationary": True}),
    case("tmem_a_packed_c_infers_ws", "test_gemm_tcgen05_cta1_m64_packed_c_infers_weight_stationary",
         C=((64, 128), (0, 64), (0, 128)), c_layout="E",
         A=((2, 64, 16), "bfloat16", None, TMEM(A_BATCHED.format(64, 16))),
         B=((128, 16), "bfloat16", None, 1)),
    case("rejects_tmem_a_packed_c_ws_false", "test_gemm_tcgen05_cta1_m64_packed_c_infers_weight_stationary (weight_stationary=False)",
         C=((64, 128), (0, 64), (0, 128)), c_layout="E",
         A=((2, 64, 16), "bfloat16", None, TMEM(A_BATCHED.format(64, 16))),
         B=((128, 16), "bfloat16", None, 1), cfg={"weight_stationary": False}),
    case("tmem_a_ws_explicit_tile", "test_gemm_tcgen05_explicit_mma_tile_preserves_inferred_ws_datapath",
         C=((64, 128), (0, 64), (0, 128)), c_layout="E",
         A=((2, 64, 16), "bfloat16", None, TMEM(A_BATCHED.format(64, 16))),
         B=((128, 16), "bfloat16", None, 1), cfg={"mma_m": 64, "mma_n": 64}),
    case("tmem_a_batched_c", "test_gemm_tcgen05_cta1_m64_accepts_batched_c_layout_ws",
         C=((2, 64, 64), (0, 2), (0, 64), (0, 64)), c_layout="batched",
         A=((2, 64, 16), "bfloat16", None, TMEM(A_BATCHED.format(64, 16))),
         B=((128, 16), "bfloat16", None, 1)),
    case("batched_c_smem_a", "test_gemm_tcgen05_cta1_m64_accepts_batched_c_layout_ws (A in shared memory)",
         C=((2, 64, 64), (0, 2), (0, 64), (0, 64)), c_layout="batched",
         A=((64, 64), "float16", None, 3), B=((128, 64), "float16", None, 3)),
    case("rejects_batched_c_ws_false", "test_gemm_tcgen05_cta1_m64_accepts_batched_c_layout_ws (weight_stationary=False)",
         C=((2, 64, 64), (0, 2), (0, 64), (0, 64)), c_layout="batched",
         A=((64, 64), "float16", None, 3), B=((128, 64), "float16", None, 3),
         cfg={"weight_stationary": False}),
    case("rejects_tmem_a_ws_identity_c", "test_gemm_tcgen05_cta1_m64_ws_requires_layout_e_c",
         C=((64, 128), (0, 64), (0, 128)),
         A=((64, 16), "bfloat16", None, TMEM(A_FLAT.format(64, 16))),
         B=((128, 16), "bfloat16", None, 1), cfg={"weight_stationary": True}),
    case("rejects_tmem_a_ws_flat_a", "test_gemm_tcgen05_cta1_m64_ws_requires_batched_a",
         C=((64, 128), (0, 64), (0, 128)), c_layout="E",
         A=((64, 16), "bfloat16", None, TMEM(A_FLAT.format(64, 16))),
         B=((128, 16), "bfloat16", None, 1), cfg={"weight_stationary": True}),
    # (upstream's batched_a_rejects_unproven_datapath itself declares A (2, 128, 16) reaching
    # lane 191, which our loader refuses first: tests/cli/data/gemm_async_tmem_a_lane_191.yaml)
    case("rejects_tmem_a_batched_m64_cta1", "test_gemm_tcgen05_batched_a_rejects_unproven_datapath (M = 64, cta_group 1, not .ws)",
         C=((64, 64), (0, 64), (0, 64)), c_layout="F",
         A=((2, 64, 16), "bfloat16", None, TMEM(A_BATCHED.format(64, 16))),
         B=((64, 16), "bfloat16", None, 1)),
    case("tmem_a_m128", "gemm_async_tcgen05_impl: A in tensor memory (M = 128, datapath D)",
         C=((128, 128), (0, 128), (0, 128)),
         A=((128, 64), "bfloat16", None, TMEM(A_FLAT.format(128, 64))),
         B=((128, 64), "bfloat16", None, 3)),
    case("tmem_a_m128_cols", "gemm_async_tcgen05_impl: A in tensor memory, columns 32..96 of a (128, 128) A, accumulating",
         C=((128, 256), (0, 128), (128, 256)),
         A=((128, 128), "float16", ((0, 128), (32, 96)), TMEM(A_FLAT.format(128, 128))),
         B=((128, 64), "float16", None, 3), accum=True),
    case("tmem_a_m64_layout_f", "test_gemm_tcgen05_preserves_explicit_tmem_lane_bases (A in tensor memory, Layout F C)",
         C=((64, 64), (0, 64), (0, 64)), c_layout="F",
         A=((64, 16), "bfloat16", None, TMEM(A_FLAT.format(64, 16))),
         B=((64, 16), "bfloat16", None, 1), cfg={"mma_m": 64, "mma_n": 64}),
    case("lane_base_c", "test_gemm_tcgen05_preserves_explicit_tmem_lane_bases (C: Layout F + 1@TLane)",
         C=((64, 64), (0, 64), (0, 64)), c_layout="F+1", A=((64, 16), "bfloat16", None, 1),
         B=((16, 64), "bfloat16", None, 1), transB=True, cfg={"mma_m": 64, "mma_n": 64}),
    case("tmem_a_lane_base", "test_gemm_tcgen05_preserves_explicit_tmem_lane_bases (A in tensor memory + 1@TLane)",
         C=((64, 64), (0, 64), (0, 64)), c_layout="F",
         A=((64, 16), "bfloat16", None, TMEM(A_FLAT.format(64, 16) + " + 1@TLane")),
         B=((16, 64), "bfloat16", None, 1), transB=True, cfg={"mma_m": 64, "mma_n": 64}),
    case("tmem_a_e4m3", "gemm_async_tcgen05_impl: A in tensor memory, float8_e4m3fn (4 to a cell)",
         C=((128, 64), (0, 128), (0, 64)),
         A=((128, 128), "float8_e4m3fn", None, TMEM(A_FLAT.format(128, 128))),
         B=((64, 128), "float8_e4m3fn", None, 3)),
    case("tmem_a_tf32", "gemm_async_tcgen05_impl: A in tensor memory, is_AB_tf32",
         C=((128, 64), (0, 128), (0, 64)),
         A=((128, 32), "float32", None, TMEM(A_FLAT.format(128, 32))),
         B=((64, 32), "float32", None, 3), cfg={"is_AB_tf32": True}),
    case("tmem_a_warp", "gemm_async_tcgen05_impl: A in tensor memory at warp scope (hoisted B)",
         C=((128, 128), (0, 128), (0, 128)),
         A=((128, 64), "bfloat16", None, TMEM(A_FLAT.format(128, 64))),
         B=((128, 64), "bfloat16", None, 3), scope="warp"),
    case("tmem_a_cta2_m128", "gemm_async_tcgen05_impl: A in tensor memory, cta_group 2 (M = 256, datapath A)",
         C=((128, 128), (0, 128), (0, 128)),
         A=((128, 64), "bfloat16", None, TMEM(A_FLAT.format(128, 64))),
         B=((64, 64), "bfloat16", None, 3), cfg={"cta_group": 2}, cluster=True),
    case("rejects_tmem_a_transA", "gemm_async_tcgen05_impl: A in tensor memory with transA",
         C=((128, 128), (0, 128), (0, 128)),
         A=((128, 128), "bfloat16", None, TMEM(A_FLAT.format(128, 128))),
         B=((128, 128), "bfloat16", None, 3), transA=True),
    case("rejects_tmem_a_ws_m128", "gemm_async_tcgen05_impl: A in tensor memory, .ws at M = 128",
         C=((128, 128), (0, 128), (0, 128)),
         A=((128, 64), "bfloat16", None, TMEM(A_FLAT.format(128, 64))),
         B=((128, 64), "bfloat16", None, 3), cfg={"weight_stationary": True}),
    case("rejects_tmem_a_replicated_cta1", "gemm_async_tcgen05_impl: A in tensor memory, the cta_group 2 replica at cta_group 1",
         C=((64, 64), (0, 64), (0, 64)), c_layout="F",
         A=((64, 128), "bfloat16", None, TMEM(A_REP)),
         B=((64, 128), "bfloat16", None, 3)),

    # the probes of design/gemm/probes/async_probe.py
    case("f16_128x64x64_sw128", "async_probe.py f16_128x64x64_sw128"),
    case("f16_warp", "async_probe.py f16_warp", scope="warp"),
    case("bf16_128x256x64", "async_probe.py bf16_128x256x64",
         C=((128, 256), (0, 128), (0, 256)), A=((128, 64), "bfloat16", None, 3),
         B=((256, 64), "bfloat16", None, 3)),
    case("f16_N512", "async_probe.py f16_N512", C=((128, 512), (0, 128), (0, 512)),
         B=((512, 64), "float16", None, 3)),
    case("f16_M64", "async_probe.py f16_M64", C=((64, 64), (0, 64), (0, 64)),
         A=((64, 64), "float16", None, 3)),
    case("e4m3_128x64x128", "async_probe.py e4m3_128x64x128",
         A=((128, 128), "float8_e4m3fn", None, 3), B=((64, 128), "float8_e4m3fn", None, 3)),
    case("e5m2_128x64x128", "test_gemm_dense_fp8 (e5m2)",
         A=((128, 128), "float8_e5m2", None, 3), B=((64, 128), "float8_e5m2", None, 3)),
    case("tf32_f32_cfg", "async_probe.py tf32_f32_cfg",
         A=((128, 32), "float32", None, 3), B=((64, 32), "float32", None, 3),
         cfg={"is_AB_tf32": True}),
    case("sw64", "async_probe.py sw64", A=((128, 32), "float16", None, 2),
         B=((64, 32), "float16", None, 2)),
    case("sw32", "async_probe.py sw32", A=((128, 16), "float16", None, 1),
         B=((64, 16), "float16", None, 1)),
    case("transA", "async_probe.py transA", A=((64, 128), "float16", None, 3), transA=True),
    case("transB", "async_probe.py transB", B=((64, 64), "float16", None, 3), transB=True),
    case("accum", "async_probe.py f16_128x64x64_sw128, accum=True", accum=True),
    case("explicit_mma_tile", "test_gemm_tcgen05_explicit_mma_tile_changes_physical_instructions",
         C=((128, 512), (0, 128), (256, 384)),
         A=((3, 128, 64), "float16", ((1, 2), (0, 128), (0, 64)), 3),
         B=((3, 128, 64), "float16", ((2, 3), (0, 128), (0, 64)), 3),
         cfg={"mma_m": 128, "mma_n": 64}),
    case("explicit_mma_m_cluster_total_128", "test_gemm_tcgen05_explicit_mma_m_is_cluster_total_for_cta_group_2[128-256]",
         C=((128, 64), (0, 128), (0, 64)), A=((128, 64), "float16", None, 3),
         B=((32, 64), "float16", None, 3), cfg={"cta_group": 2, "mma_m": 256, "mma_n": 64},
         cluster=True),
]
for mode in ("hoist", "local_hoist", "encode", "recompute"):
    CASES.append(case(f"smem_desc_{mode}", f"test_gemm_smem_desc_modes_codegen[{mode}]",
                      C=((128, 512), (0, 128), (256, 384)),
                      A=((3, 128, 64), "float16", ((1, 2), (0, 128), (0, 64)), 3),
                      B=((3, 128, 64), "float16", ((2, 3), (0, 128), (0, 64)), 3),
                      cfg={"smem_desc": mode}))
for mode in ("local_hoist", "encode", "recompute"):
    CASES.append(case(f"warp_smem_desc_{mode}", f"async_probe.py f16_warp, smem_desc={mode}",
                      scope="warp", cfg={"smem_desc": mode}))
for lo, hi in ((0, 16), (0, 32), (16, 32), (16, 48), (32, 64)):
    CASES.append(case(f"kslice_{lo}_{hi}", f"test_gemm_tcgen05_contiguous_kslice_partial_k[{lo}-{hi}]",
                      A=((128, 64), "float16", ((0, 128), (lo, hi)), 3),
                      B=((64, 64), "float16", ((0, 64), (lo, hi)), 3)))
# TVM's rejections (its texts) and the explicit tile's bad configs
for cfg, tag in (({"mma_m": 128}, "m_only"), ({"mma_n": 64}, "n_only"),
                 ({"mma_m": 0, "mma_n": 64}, "m_zero"), ({"mma_m": 128, "mma_n": -1}, "n_neg"),
                 ({"mma_m": True, "mma_n": 64}, "m_bool"), ({"mma_m": 64, "mma_n": 64}, "m_mismatch"),
                 ({"mma_m": 128, "mma_n": 96}, "n_not_divide"), ({"mma_m": 128, "mma_n": 8}, "bad_shape")):
    CASES.append(case(f"explicit_tile_rejects_{tag}",
                      f"test_gemm_tcgen05_explicit_mma_tile_rejects_invalid_config[{tag}]",
                      C=((128, 512), (0, 128), (256, 384)),
                      A=((3, 128, 64), "float16", ((1, 2), (0, 128), (0, 64)), 3),
                      B=((3, 128, 64), "float16", ((2, 3), (0, 128), (0, 64)), 3), cfg=cfg))
CASES += [
    case("rejects_c_f16", "async_probe.py c_f16 (C float16)"),
    case("rejects_int8", "async_probe.py int8 (K = 128)", A=((128, 128), "int8", None, 3),
         B=((64, 128), "int8", None, 3)),
    case("rejects_K_not_mult", "async_probe.py K_not_mult", A=((128, 24), "float16", None, 0),
         B=((64, 24), "float16", None, 0)),
    case("rejects_tf32_mn_major", "test_gemm_tcgen05_rejects_tf32_mn_major",
         A=((32, 128), "float32", None, 3), B=((64, 32), "float32", None, 3), transA=True,
         cfg={"is_AB_tf32": True}),
    case("rejects_kslice_unaligned", "test_gemm_tcgen05_contiguous_kslice_partial_k (start 4)",
         A=((128, 64), "float16", ((0, 128), (4, 20)), 3),
         B=((64, 64), "float16", ((0, 64), (4, 20)), 3)),
    case("descI_rejected", "test_gemm_tcgen05_dense_descI_rejected_at_dispatch",
         cfg={"descI": 0}),
    case("rejects_f16_N24", "async_probe.py f16_N24", C=((128, 24), (0, 128), (0, 24)),
         B=((24, 64), "float16", None, 3),
         deviation="D6: TVM's tile chooser keeps N=24, then its encoder raises; we decline with that text"),
    case("rejects_cta2_no_cluster", "async_probe.py cta2_no_cluster",
         C=((128, 128), (0, 128), (0, 128)), B=((64, 64), "float16", None, 3),
         cfg={"cta_group": 2},
         deviation="D7: TVM compiles cta_group::2 without a CTA pair; we refuse"),
    case("rejects_sm90a", "async_probe.py arch=sm_90a f16_128x64x64_sw128", arch="sm_90a",
         deviation="D2: TVM lowers tcgen05.mma for sm_90a; we refuse"),
    case("rejects_noguard_thread", "async_probe.py noguard_thread", active={},
         deviation="D3: TVM issues the MMAs from all 128 threads; we refuse"),
    case("rejects_cta_scope", "async_probe.py cta_scope", scope="cta"),
    case("rejects_wg_scope", "async_probe.py wg_scope", scope="warpgroup"),
]



def sfl(rows, sf_k, per, lane=0):
    """TVM's sf_tmem_layout(rows, SF_K, sf_per_mma) in the call-file
    notation (+ a lane base)."""
    from tvm.tirx.cuda.tile_primitive.gemm_async import sf_tmem_layout
    t = str(sf_tmem_layout(rows, SF_K=sf_k, sf_per_mma=per))
    m = re.fullmatch(r"T\.TileLayout\(T\.S\[(\(.*\)|\d+):(\(.*\)|[^\]]+)\] \+ "
                     r"T\.R\[(\d+):(\d+) @ Axis\.TLane\]\)", t)
    strides = m.group(2).replace(" @ Axis.", "@")
    return (f"S[{m.group(1)} : {strides}] + R[{m.group(3)} : {m.group(4)}@TLane]" +
            (f" + {lane}@TLane" if lane else ""))


def sf_pair(dtype, a_rows, b_rows, sf_k, per, base, *, a_reg=None, b_reg=None, a_lane=0,
            b_lane=0, scope="tmem", b_layout_rows=None, a_text=None, b_text=None,
            a_shape=None, b_shape=None):
    """SFA (a_rows, sf_k) and SFB (b_rows, sf_k) as upstream lays them out:
    sf_tmem_layout, SFA at column `base`, SFB after SFA's columns."""
    from tvm.tirx.cuda.tile_primitive.gemm_async import sf_tmem_layout
    epc = 4
    span = int(sf_tmem_layout(a_rows, SF_K=sf_k, sf_per_mma=per).span("TCol"))
    la = a_text or sfl(a_rows, sf_k, per, a_lane)
    lb = b_text or sfl(b_layout_rows or b_rows, sf_k, per, b_lane)
    return dict(dtype=dtype, scope=scope,
                sfa=(a_shape or (a_rows, sf_k), a_reg, la, base),
                sfb=(b_shape or (b_layout_rows or b_rows, sf_k), b_reg, lb,
                     base + (span + epc - 1) // epc))


T_F8, T_F4, T_E8, T_E4 = "float8_e4m3fn", "float4_e2m1fn", "float8_e8m0fnu", "float8_e4m3fn"

# Block scaling (design/gemm/plan.md 3.7): upstream's block-scaled programs
# and the probe's, then each of TVM's refusals.  Kept apart from CASES (their
# call files carry sfa / sfb; the TVM bridge's test reads both lists).
BS_CASES = [
    case("bs_fp8_cta_group_1", "test_gemm_block_scaled_fp8_cta_group_1",
         C=((128, 512), (0, 128), (0, 32)), A=((128, 128), T_F8, None, 3),
         B=((32, 128), T_F8, None, 3), sf=sf_pair(T_E8, 128, 32, 1, 1, 32)),
    case("bs_fp8_cta_group_2", "test_gemm_block_scaled_fp8_cta_group_2",
         C=((256, 512), (0, 128), (0, 128)),
         A=((3, 256, 128), T_F8, ((1, 2), (0, 128), (0, 128)), 3),
         B=((3, 128, 128), T_F8, ((2, 3), (0, 64), (0, 128)), 3),
         cfg={"cta_group": 2}, cluster=True, sf=sf_pair(T_E8, 128, 128, 1, 1, 128)),
    case("bs_nvfp4_cta_group_1", "test_gemm_block_scaled_nvfp4_cta_group_1",
         C=((128, 512), (0, 128), (0, 32)), A=((128, 256), T_F4, None, 3),
         B=((32, 256), T_F4, None, 3), sf=sf_pair(T_E4, 128, 32, 4, 4, 32)),
    case("bs_nvfp4_cta_group_2", "test_gemm_block_scaled_nvfp4_cta_group_2",
         C=((256, 512), (0, 128), (0, 64)), A=((128, 256), T_F4, None, 3),
         B=((32, 256), T_F4, None, 3), cfg={"cta_group": 2}, cluster=True,
         sf=sf_pair(T_E4, 128, 64, 4, 4, 64)),
    case("bs_fp8_sf_id", "test_gemm_block_scaled_fp8_sf_id",
         C=((128, 512), (0, 128), (0, 32)), A=((128, 128), T_F8, None, 3),
         B=((32, 128), T_F8, None, 3), sf=sf_pair(T_E8, 128, 32, 4, 1, 32)),
    case("bs_explicit_split_n", "test_gemm_tcgen05_explicit_block_scaled_split_n (cta_group 2, mma_n 64)",
         C=((128, 128), (0, 128), (0, 128)), A=((128, 32), T_F8, None, 1),
         B=((64, 32), T_F8, None, 1), cfg={"cta_group": 2, "mma_m": 256, "mma_n": 64},
         cluster=True, sf=sf_pair(T_E8, 128, 128, 1, 1, 128)),
    case("bs_lane_bases", "test_gemm_tcgen05_preserves_block_scale_tmem_lane_bases",
         C=((128, 64), (0, 128), (0, 64)), A=((128, 64), T_F4, None, 1),
         B=((64, 64), T_F4, None, 1), cfg={"cta_group": 1, "mma_m": 128, "mma_n": 64},
         sf=sf_pair(T_E4, 128, 64, 4, 4, 256, a_lane=1, b_lane=2),
         deviation="SFA's replicas R[4 : 32@TLane] from lane 1 reach lane 128, past tensor "
                   "memory; TVM's test reads the printed addresses only; the loader refuses"),
    case("bs_lane_base_sfa", "derived: SFA's lane base 1 without replicas, SFB's 2 (lanes in range)",
         C=((128, 64), (0, 128), (0, 64)), A=((128, 64), T_F4, None, 1),
         B=((64, 64), T_F4, None, 1),
         sf=sf_pair(T_E4, 128, 64, 4, 4, 256,
                    a_text="S[(4, 32, 4) : (4@TCol, 1@TLane, 1@TCol)] + 1@TLane",
                    b_text="S[(2, 32, 4) : (4@TCol, 1@TLane, 1@TCol)] + 2@TLane")),
    case("bs_mxfp4", "block_scaled_probe.py mxfp4 (e2m1 + e8m0 scales, scale_vec::2X)",
         C=((128, 64), (0, 128), (0, 64)), A=((128, 128), T_F4, None, 1),
         B=((64, 128), T_F4, None, 1), sf=sf_pair(T_E8, 128, 64, 4, 2, 256)),
    case("bs_fp8_sf_id_packed", "block_scaled_probe.py fp8_e8m0_sf_id (SF_K 16: sf_id rotates per ki)",
         C=((128, 64), (0, 128), (0, 64)), A=((128, 128), T_F8, None, 3),
         B=((64, 128), T_F8, None, 3), sf=sf_pair(T_E8, 128, 64, 16, 1, 256)),
    case("bs_descI_given", "block_scaled_probe.py fp8 descI passed (block-scaled keeps it)",
         C=((128, 64), (0, 128), (0, 64)), A=((128, 128), T_F8, None, 3),
         B=((64, 128), T_F8, None, 3), cfg={"descI": 12345},
         sf=sf_pair(T_E8, 128, 64, 4, 1, 256)),
    case("bs_descI_given_no_sf_id", "block_scaled_probe.py descI with one SF per K (no sf_id patch)",
         C=((128, 64), (0, 128), (0, 64)), A=((128, 128), T_F8, None, 3),
         B=((64, 128), T_F8, None, 3), cfg={"descI": 12345},
         sf=sf_pair(T_E8, 128, 64, 1, 1, 256)),
    case("bs_warp", "block_scaled_probe.py fp8 at warp scope",
         C=((128, 64), (0, 128), (0, 64)), A=((128, 128), T_F8, None, 3),
         B=((64, 128), T_F8, None, 3), scope="warp", sf=sf_pair(T_E8, 128, 64, 4, 1, 256)),
    case("bs_tmem_a", "block_scaled_probe.py fp8 with A in tensor memory",
         C=((128, 64), (0, 128), (0, 64)),
         A=((128, 128), T_F8, None, TMEM(A_FLAT.format(128, 128))),
         B=((64, 128), T_F8, None, 3), sf=sf_pair(T_E8, 128, 64, 4, 1, 256)),
    case("bs_rejects_smem_desc_encode", "block_scaled_probe.py fp8 smem_desc=encode",
         C=((128, 64), (0, 128), (0, 64)), A=((128, 128), T_F8, None, 3),
         B=((64, 128), T_F8, None, 3), cfg={"smem_desc": "encode"},
         sf=sf_pair(T_E8, 128, 64, 4, 1, 256)),
    case("bs_rejects_sf_shared", "block_scaled_probe.py rejects SF in shared memory (nvfp4: "
         "float8_e8m0fnu is confined to tensor memory by the loader)",
         C=((128, 64), (0, 128), (0, 64)), A=((128, 128), T_F4, None, 1),
         B=((64, 128), T_F4, None, 1),
         sf=sf_pair(T_E4, 128, 64, 8, 4, 256, scope="shared",
                    a_text="S[(128, 8) : (8, 1)]", b_text="S[(64, 8) : (8, 1)]")),
    case("bs_rejects_a_f16", "block_scaled_probe.py rejects A float16 block-scaled",
         C=((128, 64), (0, 128), (0, 64)), A=((128, 128), "float16", None, 3),
         B=((64, 128), "float16", None, 3), sf=sf_pair(T_E8, 128, 64, 8, 2, 256)),
    case("bs_rejects_sfa_rows", "block_scaled_probe.py rejects SFA rows 256 != M",
         C=((128, 64), (0, 128), (0, 64)), A=((128, 128), T_F8, None, 3),
         B=((64, 128), T_F8, None, 3), sf=sf_pair(T_E8, 256, 64, 4, 1, 256)),
    case("bs_rejects_sfb_rows", "derived: SFB rows 32 < N = 64",
         C=((128, 64), (0, 128), (0, 64)), A=((128, 128), T_F8, None, 3),
         B=((64, 128), T_F8, None, 3), sf=sf_pair(T_E8, 128, 32, 4, 1, 256)),
    case("bs_rejects_sf_k", "derived: SF K extent 2 of K_iters 4 (valid 1, 4, 16)",
         C=((128, 64), (0, 128), (0, 64)), A=((128, 128), T_F8, None, 3),
         B=((64, 128), T_F8, None, 3), sf=sf_pair(T_E8, 128, 64, 2, 1, 256)),
    case("bs_rejects_sf_mixed", "derived: SFA e8m0 (sf_mma_k 2) with SFB e4m3 (4)",
         C=((128, 64), (0, 128), (0, 64)), A=((128, 128), T_F4, None, 1),
         B=((64, 128), T_F4, None, 1),
         sf=sf_pair((T_E8, T_E4), 128, 64, 8, 4, 256,
                    a_text=None)),
    case("bs_rejects_sf_layout", "derived: SFA's K steps 2 columns apart (not the atom)",
         C=((128, 64), (0, 128), (0, 64)), A=((128, 128), T_F4, None, 1),
         B=((64, 128), T_F4, None, 1),
         sf=sf_pair(T_E4, 128, 64, 8, 4, 256, a_text="S[(128, 8) : (1@TLane, 2@TCol)]")),
    case("bs_rejects_fp8_e4m3_scales", "derived: float8 data with float8_e4m3fn scales (no kind)",
         C=((128, 64), (0, 128), (0, 64)), A=((128, 128), T_F8, None, 3),
         B=((64, 128), T_F8, None, 3), sf=sf_pair(T_E4, 128, 64, 4, 1, 256)),
    case("bs_rejects_m64", "derived: M = 64 (the block-scaled shapes start at M = 128)",
         C=((64, 64), (0, 64), (0, 64)), A=((64, 128), T_F8, None, 3),
         B=((64, 128), T_F8, None, 3), sf=sf_pair(T_E8, 64, 64, 4, 1, 256)),
    case("bs_rejects_fp4_transA", "derived: transA with float4_e2m1fn A",
         C=((128, 64), (0, 128), (0, 64)), A=((128, 128), T_F4, None, 1),
         B=((64, 128), T_F4, None, 1), transA=True, sf=sf_pair(T_E4, 128, 64, 8, 4, 256)),
    case("bs_rejects_sf_k_not_multiple", "derived: nvfp4 SF regions 6 wide, not a multiple of sf_mma_k 4",
         C=((128, 64), (0, 128), (0, 64)), A=((128, 128), T_F4, None, 1),
         B=((64, 128), T_F4, None, 1),
         sf=sf_pair(T_E4, 128, 64, 8, 4, 256, a_text="S[(128, 8) : (1@TLane, 1@TCol)]",
                    b_text="S[(64, 8) : (1@TLane, 1@TCol)]",
                    a_reg=((0, 128), (0, 6)), b_reg=((0, 64), (0, 6)))),
    case("bs_rejects_ab_mixed", "derived: float8_e4m3fn A with float4_e2m1fn B",
         C=((128, 64), (0, 128), (0, 64)), A=((128, 128), T_F8, None, 3),
         B=((64, 128), T_F4, None, 1), sf=sf_pair(T_E8, 128, 64, 4, 1, 256)),
    case("bs_explicit_rejects_n8", "derived: cta_group 2 block-scaled with mma_n 8 (N a multiple of 16)",
         C=((128, 128), (0, 128), (0, 128)), A=((128, 32), T_F8, None, 1),
         B=((64, 32), T_F8, None, 1), cfg={"cta_group": 2, "mma_m": 256, "mma_n": 8},
         cluster=True, sf=sf_pair(T_E8, 128, 128, 1, 1, 128)),
    case("bs_explicit_rejects_kind_first", "derived: float8 data with e4m3 scales and a wrong mma_m: "
         "the kind is looked up before the tile's checks",
         C=((128, 64), (0, 128), (0, 64)), A=((128, 128), T_F8, None, 3),
         B=((64, 128), T_F8, None, 3), cfg={"mma_m": 64, "mma_n": 64},
         sf=sf_pair(T_E4, 128, 64, 4, 1, 256)),
    case("bs_rejects_sf_f16", "block_scaled_probe.py rejects SF dtype float16",
         C=((128, 64), (0, 128), (0, 64)), A=((128, 128), T_F8, None, 3),
         B=((64, 128), T_F8, None, 3), sf=sf_pair("float16", 128, 64, 4, 1, 256)),
]

# Our reasons where we deviate (docs/upstream.md).
OURS = {
    "rejects_f16_N24": "Invalid matrix shape for Tcgen05 MMA, check failed for kind: f16",
    "rejects_instr_desc_n24": "Invalid matrix shape for Tcgen05 MMA, check failed for kind: f16",
    "rejects_cta2_m64_identity": "gemm_async: C's region of tensor memory is not the layout the MMA writes, S[(64, 2, 64) : (1@TLane, 64@TLane, 1@TCol)]",
    "rejects_cta2_no_cluster": "cta_group=2 needs a cluster of 2 CTAs along x (launch has none)",
    "rejects_sm90a": "tcgen05.mma needs tensor memory (sm_100a, sm_101a, sm_103a or sm_110a), got sm_90a",
    "rejects_noguard_thread": "guard the call to one thread (active set has 128 threads)",
    "bs_lane_bases": "tmem buffer 'SFA': its layout reaches lane 128; tensor memory has 128 lanes",
}
# Deviations refused by the loader (`# expect: error`), not by the variant.
LOAD_ERRORS = {"bs_lane_bases"}

SW = {0: SwizzleMode.SWIZZLE_NONE, 1: SwizzleMode.SWIZZLE_32B_ATOM,
      2: SwizzleMode.SWIZZLE_64B_ATOM, 3: SwizzleMode.SWIZZLE_128B_ATOM}


def tvm_layout(dtype, sw, shape):
    if callable(sw):
        return sw(dtype, tuple(shape))
    if sw == 0:
        return TileLayout(S[tuple(shape)])
    # mma_shared_layout knows the float widths only; int8's is e4m3's.
    return mma_shared_layout("float8_e4m3fn" if dtype == "int8" else dtype,
                             SW[sw], tuple(shape))


def layout_text(lay) -> str:
    """TVM's layout in the call-file notation: S[...] + Swizzle(b, m, s)."""
    s = str(lay)
    m = re.fullmatch(r"T\.ComposeLayout\((\d+), (\d+), (\d+), T\.TileLayout\(T\.S\[(.*)\]\)\)", s)
    if m:
        pe, sl, al, body = m.groups()
        return f"S[{body.replace(':', ' : ')}] + Swizzle({sl}, {pe}, {al})"
    m = re.fullmatch(r"T\.TileLayout\(T\.S\[(.*)\]\)", s)
    if m:
        return f"S[{m.group(1).replace(':', ' : ')}]"
    raise ValueError(f"layout {s} has no call-file form here")


def region_slices(shape, region):
    region = region or full(shape)
    return tuple(slice(a, b) for a, b in region)


def build(c, guard="lt"):
    """TVM's program of case `c`: the call under `if tid < 1` (warp scope:
    `if tid < 32`), or with guard="eq" under `if tid == 0` at thread
    scope, the guard TVM's dispatch context understands (its active set
    narrows to one thread; tests of the bridge use it)."""
    (C_shape, *C_reg) = c["C"]
    A_shape, dt, A_reg, A_sw = c["A"]
    B_shape, _, B_reg, B_sw = c["B"]
    cg = c["cfg"].get("cta_group", 1)
    c_dtype = "float16" if c["name"] == "rejects_c_f16" else "float32"
    a_tmem = isinstance(A_sw, TMEM)
    Al = tmem_layout(A_sw) if a_tmem else tvm_layout(dt, A_sw, A_shape)
    Bl = tvm_layout(c["B"][1], B_sw, B_shape)
    Cl = (tmem_datapath_layout("F", C_shape[0], C_shape[1]) if c["c_layout"] == "F"
          else tmem_layout(F_TEXT.format(C_shape[1]) + " + 1@TLane") if c["c_layout"] == "F+1"
          else TileLayout(S[tuple(C_shape):(64 @ TLane, 1 @ TLane, 1 @ TCol)])
          if c["c_layout"] == "batched"
          else TileLayout(S[(C_shape[0], 2, C_shape[1] // 2):(1 @ TLane, 64 @ TLane, 1 @ TCol)])
          if c["c_layout"] in ("B", "E")
          else TileLayout(S[tuple(C_shape):(1 @ TLane, 1 @ TCol)]))
    rA, rB = region_slices(A_shape, A_reg), region_slices(B_shape, B_reg)
    rC = tuple(slice(a, b) for a, b in C_reg)
    sf = c.get("sf")
    has_sf = bool(sf)
    sf_tmem = has_sf and sf.get("scope", "tmem") == "tmem"
    if sf:  # block scaling: SFA, SFB (tensor memory unless the case says)
        (sfa_shape, sfa_reg, sfa_l, sfa_addr), (sfb_shape, sfb_reg, sfb_l, sfb_addr) = \
            sf["sfa"], sf["sfb"]
        sf_scope = sf.get("scope", "tmem")
        sfa_dt, sfb_dt = sf["dtype"] if isinstance(sf["dtype"], tuple) else (sf["dtype"],) * 2
        rSFA, rSFB = region_slices(sfa_shape, sfa_reg), region_slices(sfb_shape, sfb_reg)
        sfa_tl, sfb_tl = tmem_layout(sfa_l), tmem_layout(sfb_l)
    op = {"thread": Tx.gemm_async, "warp": Tx.warp.gemm_async,
          "warpgroup": Tx.wg.gemm_async, "cta": Tx.cta.gemm_async}[c["scope"]]
    cfg = dict(c["cfg"])
    transA, transB, accum = c["transA"], c["transB"], c["accum"]
    guarded = c["active"] is None and c["scope"] in ("thread", "warp")
    limit = 1 if c["scope"] == "thread" else 32
    eq = guard == "eq" and c["scope"] == "thread"
    cluster = c["cluster"]

    @T.prim_func
    def f():
        T.device_entry()
        cta_id = T.cta_id([cg])
        if cluster:
            cbx, cby = T.cta_id_in_cluster([2, 1])
        thread_id = T.thread_id([128])
        tid = T.thread_id_in_wg([128])
        if a_tmem:
            A_smem = T.decl_buffer(A_shape, dt, scope="tmem", allocated_addr=0, layout=Al)
        else:
            A_smem = T.alloc_buffer(A_shape, dt, scope="shared", layout=Al)
        B_smem = T.alloc_buffer(B_shape, c["B"][1], scope="shared", layout=Bl)
        C_tmem = T.decl_buffer(C_shape, c_dtype, scope="tmem", allocated_addr=0, layout=Cl)
        if sf_tmem:
            SFA = T.decl_buffer(sfa_shape, sfa_dt, scope="tmem", allocated_addr=sfa_addr,
                                layout=sfa_tl)
            SFB = T.decl_buffer(sfb_shape, sfb_dt, scope="tmem", allocated_addr=sfb_addr,
                                layout=sfb_tl)
        elif has_sf:
            SFA = T.alloc_buffer(sfa_shape, sfa_dt, scope=sf_scope, layout=sfa_tl)
            SFB = T.alloc_buffer(sfb_shape, sfb_dt, scope=sf_scope, layout=sfb_tl)
        if has_sf and guarded and eq:
            if tid == 0:
                op(C_tmem[rC], A_smem[rA], B_smem[rB], SFA=SFA[rSFA], SFB=SFB[rSFB],
                   transA=transA, transB=transB, accum=accum, dispatch="tcgen05", **cfg)
        elif has_sf and guarded:
            if tid < limit:
                op(C_tmem[rC], A_smem[rA], B_smem[rB], SFA=SFA[rSFA], SFB=SFB[rSFB],
                   transA=transA, transB=transB, accum=accum, dispatch="tcgen05", **cfg)
        elif guarded and eq:
            if tid == 0:
                op(C_tmem[rC], A_smem[rA], B_smem[rB], transA=transA, transB=transB,
                   accum=accum, dispatch="tcgen05", **cfg)
        elif guarded:
            if tid < limit:
                op(C_tmem[rC], A_smem[rA], B_smem[rB], transA=transA, transB=transB,
                   accum=accum, dispatch="tcgen05", **cfg)
        else:
            op(C_tmem[rC], A_smem[rA], B_smem[rB], transA=transA, transB=transB,
               accum=accum, dispatch="tcgen05", **cfg)
    return f, Al, Bl


# A tensor-memory address as TVM's CUDA spells a constant one (the bridge's
# base, a uint32 value, gets a cast).
TADDR = r"(?:\(uint\)\d+|tvm_builtin_cuda_get_tmem_addr\((?:\(uint\))?\d+, \d+, \d+\))"
MMA_RE = re.compile(r"tvm_builtin_ptx_tcgen05_mma_(ws_)?[st]s_mma_(?:ws_)?cta_group__(\d)_kind__(\w+)"
                    rf"\(({TADDR}), (?:(\w+)\[0\]|({TADDR})), (\w+)\[0\], \(uint\)(\d+), "
                    r"(?:\(uint\)0, )*\(bool\)(\d)(?:, \(uint64_t\)0ULL)?\);")


def taddr(text):
    """A constant tensor-memory address: base + (lane << 16) + column."""
    m = re.fullmatch(r"\(uint\)(\d+)", text)
    if m:
        return int(m.group(1))
    m = re.fullmatch(r"tvm_builtin_cuda_get_tmem_addr\((?:\(uint\))?(\d+), (\d+), (\d+)\)", text)
    base, lane, col = map(int, m.groups())
    return base + (lane << 16) + col


ENC_RE = re.compile(r"tvm_builtin_ptx_tcgen05_encode_matrix_descriptor\(\(&\((\w+)\[0\]\)\), "
                    r"\(\(void\*\)\(\(char\*\)\(&\((\w)_smem_ptr\[0\]\)\) \+ (\d+)\)\), "
                    r"(\d+), (\d+), (\d+)\);")


def lower(c):
    """TVM's outcome: ('ok', descs, mmas) or ('error', text)."""
    if not c.get("sf"):
        c = dict(c, cfg=dict(c["cfg"], smem_desc="encode"))
    try:
        f, _, _ = build(c)
        tgt = tvm.target.Target({"kind": "cuda", "arch": c["arch"]})
        with tgt:
            m = tvm.compile(tvm.IRModule({"main": f}), target=tgt, tir_pipeline="tirx")
        src = m.mod.imports[0].inspect_source()
    except Exception as e:  # TVM raises its reasons
        text = re.sub(r"\s+", " ", str(e))
        text = text.split(" | | | opcall:")[0]
        for pat in (r"(?:ValueError|AssertionError): (.*)$",
                    r"rejected: \S+ — (.*?)(?:\s*\||$)", r"(Check failed.*?)(?:$)"):
            mm = re.search(pat, text)
            if mm:
                return ("error", mm.group(1).strip()[:300])
        return ("error", text[-300:])
    return ("ok", *(parse_bs(src) if c.get("sf") else parse(src)))


def base_offsets(src):
    """`src` with every descriptor encode at an operand's base (offset 0)
    spelt as TVM's encode mode spells it, `+ 0` (tiledispatch's prints the
    address alone)."""
    return re.sub(r"\(&\((\w)_smem_ptr\[0\]\)\), (\d+, \d+, \d+\);)",
                  r"((void*)((char*)(&(\1_smem_ptr[0])) + 0)), \2", src)


def parse(src):
    """(descs, mmas) of a kernel's CUDA compiled with smem_desc="encode":
    descs {"A": (ldo, sdo, swizzle), "B": ...}, per MMA in order (D
    column, A and B offsets in 16-byte units, idesc, enable_input_d,
    cta_group, kind)."""
    src = base_offsets(src)
    enc = {}
    for name, op, off, ldo, sdo, sw in ENC_RE.findall(src):
        enc[name] = (op, int(off) // 16, int(ldo), int(sdo), int(sw))
    descs, mmas = {}, []
    for ws, cg, kind, col, a, a_taddr, b, idesc, en in MMA_RE.findall(src):
        eb = enc[b]
        descs["B"] = eb[2:]
        if a:  # A's descriptor; else A in tensor memory (its address)
            descs["A"] = enc[a][2:]
        a_off = enc[a][1] if a else taddr(a_taddr)
        mmas.append((taddr(col), a_off, eb[1], int(idesc), int(en), int(cg),
                     ("ws." if ws else "") + kind))
    return descs, mmas


# Block scaling: TVM's CUDA of the hoisted descriptors (encode is refused
# for block-scaled MMAs): each operand a 64-bit descriptor whose low word
# gets the offset in 16-byte units, the scale factors' addresses
# expressions of sfa_linear / sfb_linear locals (constants once unrolled).
BS_MMA = re.compile(r"tvm_builtin_ptx_tcgen05_mma_block_scale_([st])s_mma_cta_group__(\d)_kind__(\w+?)"
                    r"_block_scale_scale_vec__(\d)X\((.*)\);$", re.M)
BS_ENC = re.compile(r"ptx_tcgen05_encode_instr_descriptor_block_scaled\(\(&\((\w+)\[0\]\)\), "
                    r"(\d+), (\d+), (\d+), (\d+), (\d+), (\d+), \(bool\)(\d), \(bool\)(\d)")


def split_args(text):
    """The top-level comma-separated arguments of a call's text."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += ch in "([" 
        depth -= ch in ")]"
        cur += ch
    return out + [cur.strip()]


def c_value(text, env):
    """A constant C expression of TVM's CUDA: locals from env, tensor
    addresses packed as get_tmem_addr does (lane in the high half-word)."""
    def gta(base, row, col):
        return ((((base >> 16) & 0xFFFF) + row) << 16) | ((base & 0xFFFF) + col)
    e = re.sub(r"\((?:uint|int|bool|uint32_t)\)", "", text)
    e = re.sub(r"(\w+)\[0\]", lambda m: str(env[m.group(1)]), e)
    e = e.replace("tvm_builtin_cuda_get_tmem_addr", "gta")
    return int(eval(e, {"gta": gta}))  # noqa: S307 (TVM's own constant text)


def tvm_idesc_values(src, idesc, mmas):
    """What TVM's own helpers (its InstrDescriptorBlockScaled union, the
    encode and runtime_instr_desc, from its CUDA) make of each MMA's
    descriptor: the local encoded (or given) and patched in order."""
    if idesc[0] == "none":
        return [m[3] for m in mmas]
    parts = []
    for start, end in (("union InstrDescriptorBlockScaled", "\n};"),
                       ("__forceinline__ __device__ void ptx_tcgen05_encode_instr_descriptor_"
                        "block_scaled(", "\n}\n"),
                       ("__forceinline__ __device__ void tvm_builtin_cuda_runtime_instr_desc(",
                        "\n}\n")):
        i = src.find(start)
        if i >= 0:
            parts.append(src[i:src.index(end, i) + len(end)])
    if idesc[0] == "given":
        init = f"d = {idesc[1]}u;"
    else:
        m, n, k, a, b, sf, ta, tb = idesc
        init = (f"ptx_tcgen05_encode_instr_descriptor_block_scaled(&d, {m}, {n}, {k}, {a}, "
                f"{b}, {sf}, {ta}, {tb}, false, false, false);")
    patches = [f"tvm_builtin_cuda_runtime_instr_desc(&d, {mm[7]}u);" if mm[7] >= 0 else ""
               for mm in mmas]
    from check_gemm_async import host_values
    return host_values("\n".join(parts), init, patches)


def parse_bs(src):
    """(descs, mmas) of a block-scaled kernel: descs as parse() gives them
    plus "I": the run-time descriptor's encode (M, N, K, a, b, s formats,
    transA, transB) or ("given", value); per MMA in order (D address, A
    offset (or address), B offset, descriptor ("L": the local, or a
    constant), SFA address, SFB address, enable_input_d, sf_id patched
    before it (-1: none), cta_group, kind.scale_vec)."""
    enc = {}
    for name, addr, ldo, sdo, sw in re.findall(
            r"tvm_builtin_ptx_tcgen05_encode_matrix_descriptor\(\(&\((\w+)\[0\]\)\), (.*?), "
            r"(\d+), (\d+), (\d+)\);", src):
        # the address: &(X_smem_ptr[0]) plus a byte offset, or (4-bit
        # data) X_smem_ptr + elements / 2
        op = re.search(r"(\w)_smem_ptr", addr).group(1)
        m = re.search(r"\+ (\d+)(?: / 2)?\)", addr)
        off = int(m.group(1)) // (2 if m and "/ 2" in addr else 1) if m else 0
        enc[name] = (op, off // 16, int(ldo), int(sdo), int(sw))
    env, view, descs, mmas, sf_id = {}, {}, {}, [], -1
    for line in src.splitlines():
        line = line.strip()
        m = re.match(r"(\w+)\[0\] = \(?(?:\(uint\))?(\d+)\)?;$", line)
        if m:
            env[m.group(1)] = int(m.group(2))
            continue
        m = re.match(r"uint64_t (\w+) = (\w+)\[0\];$", line)
        if m:
            view[m.group(1)] = m.group(2)
            continue
        m = re.match(r"uint2 (\w+) = make_uint2\(\(*\(\*\(uint2 \*\)\(&\((\w+)\)\)\)\)\.x"
                     r"(?: \+ \(uint\)(\d+)\))?", line)
        if m:
            view[m.group(1)] = (view[m.group(2)], int(m.group(3) or 0))
            continue
        m = BS_ENC.search(line)
        if m:
            descs["I"] = tuple(int(x) for x in m.groups()[1:])
            continue
        m = re.match(r"tvm_builtin_cuda_runtime_instr_desc\(\(&\((\w+)\[0\]\)\), (.*)\);$", line)
        if m:
            sf_id = c_value(m.group(2), env)
            continue
        m = BS_MMA.search(line)
        if not m:
            continue
        ts, cg, kind, vec, args = m.groups()
        d, a, b, i, sfa, sfb, en = split_args(args)

        def operand(text):
            v = re.fullmatch(r"\(\*\(uint64_t \*\)\(&\((\w+)\)\)\)", text)
            if v:
                desc, off = view[v.group(1)]
                descs["A" if desc.startswith("descA") else "B"] = enc[desc][2:]
                return off
            return c_value(text, env)
        ival = "L" if i.startswith("descI_local") else c_value(i, env)
        mmas.append((c_value(d, env), operand(a), operand(b), ival, c_value(sfa, env),
                     c_value(sfb, env), c_value(en, env), sf_id, int(cg), f"{kind}.{vec}"))
        sf_id = -1
    if "I" not in descs:
        m = re.search(r"descI_local\w*\[0\] = \(?\(uint\)(\d+)\)?;", src)
        descs["I"] = ("given", int(m.group(1))) if m else ("none",)
    descs["V"] = tvm_idesc_values(src, descs["I"], mmas)
    return descs, mmas


def write(c, out: Path):
    res = lower(c)
    C_shape, *C_reg = c["C"]
    A_shape, dt, A_reg, A_sw = c["A"]
    B_shape, bdt, B_reg, B_sw = c["B"]
    lines = []
    if c["deviation"]:
        lines += [f"# expect: {'error' if c['name'] in LOAD_ERRORS else 'none'}",
                  f"# error: {OURS[c['name']]}",
                  f"# deviation: {c['deviation']}"]
    elif res[0] == "error":
        lines += ["# expect: none", f"# error: {res[1]}"]
    elif c.get("sf"):
        _, descs, mmas = res
        cg, kv = mmas[0][8], mmas[0][9]
        kind, vec = kv.split(".")
        idesc = descs.pop("I")
        values = descs.pop("V")
        lines += ["# expect: tcgen05", "# arch: sm_100a",
                  f"# access: tcgen05.mma.cta_group::{cg}.kind::{kind}.block_scale"
                  f".scale_vec::{vec}X",
                  f"# count: {len(mmas)}",
                  "# tvm-desc: " + " ".join(f"{op} {ldo} {sdo} {sw}" for op, (ldo, sdo, sw)
                                            in sorted(descs.items())),
                  "# tvm-idesc-bs: " + " ".join(map(str, idesc)),
                  "# tvm-idesc-values: " + " ".join(map(str, values))]
        # the scale factors' addresses from their bases (SFA_taddr, SFB_taddr)
        base_a, base_b = c["sf"]["sfa"][3], c["sf"]["sfb"][3]
        lines += ["# tvm-bs-mma: " + " ".join(map(str, (*m[:4], m[4] - base_a, m[5] - base_b,
                                                        *m[6:8]))) for m in mmas]
    else:
        _, descs, mmas = res
        cg, kind = mmas[0][5], mmas[0][6]
        ws = "ws." if kind.startswith("ws.") else ""
        kind = kind[len(ws):]
        lines += ["# expect: tcgen05", "# arch: sm_100a",
                  f"# access: tcgen05.mma.{ws}cta_group::{cg}.kind::{kind}",
                  f"# count: {len(mmas)}",
                  "# tvm-desc: " + " ".join(f"{op} {ldo} {sdo} {sw}" for op, (ldo, sdo, sw)
                                            in sorted(descs.items()))]
        lines += [f"# tvm-mma: {col} {a} {b} {idesc} {en}" for col, a, b, idesc, en, _, _ in mmas]
    lines += [f"# from: {SRC}::{c['frm']}" if c["frm"].startswith("test_")
              else f"# from: {IMPL}::{c['frm']}"
              if c["frm"].startswith("gemm_async_tcgen05_impl")
              else f"# from: design/gemm/probes/{c['frm']}",
              "# written by tests/upstream/gen_gemm_async_conformance.py",
              "op: gemm_async", "target: cuda", f"arch: {c['arch']}",
              f"scope: {c['scope']}"]
    launch = "{threadIdx.x: 128" + (", cluster: [2, 1, 1]" if c["cluster"] else "") + "}"
    lines.append(f"launch: {launch}")
    if c["active"] is None and c["scope"] == "thread":
        lines.append("active: {tx: [0, 1]}")
    elif c["active"] is None and c["scope"] == "warp":
        lines.append("active: {tx: [0, 32]}")
    c_dtype = "float16" if c["name"] == "rejects_c_f16" else "float32"
    _, Al, Bl = build(c)
    # A CTA's tensor memory has 128 lanes: upstream's cta_group 2 C
    # (256 rows, each CTA's region 128 of them) is declared per CTA.
    C_rows = 128 if C_shape[0] > 128 and C_reg[0][1] <= 128 else C_shape[0]
    c_text = (F_TEXT.format(C_shape[1]) if c["c_layout"] == "F"
              else F_TEXT.format(C_shape[1]) + " + 1@TLane" if c["c_layout"] == "F+1"
              else f"S[(2, {C_shape[1]}, {C_shape[2]}) : (64@TLane, 1@TLane, 1@TCol)]"
              if c["c_layout"] == "batched"
              else f"S[({C_shape[0]}, 2, {C_shape[1] // 2}) : (1@TLane, 64@TLane, 1@TCol)]"
              if c["c_layout"] in ("B", "E")
              else f"S[({C_rows}, {C_shape[1]}) : (1@TLane, 1@TCol)]")
    lines += ["buffers:",
              f"  C: {{scope: tmem, dtype: {c_dtype}, shape: "
              f"{[C_rows, *C_shape[1:]]}, layout: \"{c_text}\"}}",
              f"  A: {{scope: {'tmem' if isinstance(A_sw, TMEM) else 'shared'}, dtype: {dt}, "
              f"shape: {list(A_shape)}, layout: \"{A_sw if isinstance(A_sw, TMEM) else layout_text(Al)}\"}}",
              f"  B: {{scope: shared, dtype: {bdt}, shape: {list(B_shape)}, layout: \"{layout_text(Bl)}\"}}"]
    sf = c.get("sf")
    if sf:
        sdt = sf["dtype"] if isinstance(sf["dtype"], tuple) else (sf["dtype"],) * 2
        for name, (shape, _, lay, _), d in (("SFA", sf["sfa"], sdt[0]), ("SFB", sf["sfb"], sdt[1])):
            lines.append(f"  {name}: {{scope: {sf.get('scope', 'tmem')}, dtype: {d}, "
                         f"shape: {list(shape)}, layout: \"{lay}\"}}")

    def reg(name, shape, r):
        r = r or full(shape)
        return f"\"{name}[" + ", ".join(f"{a}:{b}" for a, b in r) + "]\""
    lines += [f"dst: {reg('C', C_shape, C_reg)}", f"a: {reg('A', A_shape, A_reg)}",
              f"b: {reg('B', B_shape, B_reg)}",
              *([f"sfa: {reg('SFA', sf['sfa'][0], sf['sfa'][1])}",
                 f"sfb: {reg('SFB', sf['sfb'][0], sf['sfb'][1])}"] if sf else []),
              f"transA: {str(c['transA']).lower()}", f"transB: {str(c['transB']).lower()}",
              f"accum: {str(c['accum']).lower()}"]
    if c["cfg"]:
        items = []
        for k, v in c["cfg"].items():
            items.append(f"{k}: {str(v).lower() if isinstance(v, bool) else v}")
        lines.append("config: {" + ", ".join(items) + "}")
    (out / f"gemm_async_tvm_{c['name']}.yaml").write_text("\n".join(lines) + "\n")
    return res[0]


def main():
    out = Path(sys.argv[1])
    names = set(sys.argv[2:])
    for c in CASES + BS_CASES:
        if names and c["name"] not in names:
            continue
        print(c["name"], write(c, out))


if __name__ == "__main__":
    main()
