"""tiledispatch.tvm with sm_100's tensor-memory copies against real TVM
(apache-tvm 0.27.0.post1): `Tx.wg.copy_async` between registers and
tensor memory (tcgen05.ld / tcgen05.st, tiledispatch's `tmem<->local`)
and `Tx.copy_async` from shared into tensor memory (tcgen05.cp,
`smem->tmem`) lower through tiledispatch inside `tvm.compile(...,
tir_pipeline="tirx")` for sm_100a (compiled only: no GPU here has tensor
memory; with nvcc on PATH, TVM_CUDA_COMPILE_MODE=nvcc compiles the CUDA
for sm_100a).  The kernels are TVM's test_tcgen05_ldst.py /
test_tcgen05_cp.py programs, the tmem buffer declared over a constant
column address (`allocated_addr=0`, as TVM 0.27's TMEMPool declares it:
over `tmem_addr[0]`, TVM 0.27's own pipeline fails, test below).  Each
test compiles the kernel with plain TVM and through the bridge (strict)
and compares the CUDA; what tiledispatch declines goes back to TVM with
the library's reason.

Skipped, with the reason, where TVM is not installed."""
import logging
import re

import pytest

tvm = pytest.importorskip("tvm", reason="apache-tvm not installed (pip install apache-tvm==0.27.0.post1)")

import tiledispatch.tvm as tdtvm  # noqa: E402
from conftest import compile_cuda  # noqa: E402

pytestmark = pytest.mark.usefixtures("tvm_bridge")

ARCH = "sm_100a"


def kernel_source(src: str) -> str:
    return src[src.index('extern "C" __global__'):]


def both(func, **install) -> tuple[str, str, dict]:
    """(plain TVM's CUDA, the bridge's CUDA, the bridge's dispatches) for
    sm_100a, the bridge strict, nothing handed back but what `install`
    excludes."""
    plain = compile_cuda(func, arch=ARCH)
    tdtvm.install(strict=True, **install)
    ours = compile_cuda(func, arch=ARCH)
    st = tdtvm.stats()
    tdtvm.uninstall()
    assert set(st["handed_back"]) <= {"excluded by install()"}, st
    return plain, ours, st["dispatched"]


def handed_back(func, caplog, arch=ARCH) -> tuple[str, dict, list[str]]:
    """(the CUDA, stats, the bridge's log lines) of `func` compiled for
    `arch` with the bridge installed, not strict."""
    tdtvm.install()
    with caplog.at_level(logging.INFO, logger="tiledispatch.tvm"):
        src = compile_cuda(func, arch=arch)
    logs = [r.getMessage() for r in caplog.records if r.name == "tiledispatch.tvm"]
    return src, tdtvm.stats(), logs


def declined_or_as_tvm(func, caplog, variant: str, reason: str, tvm_helper: str) -> None:
    """A call tiledispatch's `variant` declines today (a shape the
    tc05cp / tc05ldst branches are adding): either it goes back to TVM as
    no variant matched with `reason` in the log and TVM lowers it (its
    helper `tvm_helper` in the CUDA), or, once the variant builds it, the
    variant dispatches it (strict) with plain TVM's tcgen05 instructions."""
    src, st, logs = handed_back(func, caplog)
    if st["dispatched"]:
        assert st == {"dispatched": {"copy_async": {variant: 1}}, "handed_back": {}}, st
        tdtvm.uninstall()
        plain, ours, _ = both(func)
        insns = re.compile(r'"(tcgen05\.(?:ld|st|cp)[^"]*)"')
        assert sorted(set(insns.findall(ours))) == sorted(set(insns.findall(plain)))
        return
    assert st["handed_back"] == {"no variant matched": {"tirx.tile.copy_async": 1}}, st
    assert reason in logs[0], logs
    assert tvm_helper in src


# ---- tmem<->local: tcgen05.ld / tcgen05.st -----------------------------------

def ldst_kernel(dtype: str, width_32b: int, offset_32b: int = 0, local_offset: int = 0,
                addr: str = "const"):
    """test_tcgen05_ldst.py's round trip (test_copy_tmem2reg, and with
    `local_offset` test_copy_tmem2reg_sliced_local): a warpgroup stores
    its registers A_local into tensor memory at column offset_32b (in
    32-bit cells) and loads them back into B_local, each row in its
    thread (the `.32x32b` fragment layout).  `addr="shared"` declares the
    tmem buffer over the address tcgen05.alloc writes (`tmem_addr[0]`, as
    the upstream tests do); "const" over column 0."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.layout import S, TCol, TileLayout, TLane
    from tvm.tirx.layout import tid_in_wg as axis_tid_in_wg

    bits = tvm.runtime.DataType(dtype).bits
    width = width_32b * (32 // bits)
    offset = offset_32b * (32 // bits)
    local_offset = local_offset * (32 // bits)
    total = local_offset + width
    cols = max(32, 1 << max(offset_32b + width_32b - 1, 0).bit_length())
    local_view = TileLayout(S[(128, total) : (1 @ axis_tid_in_wg, 1)])
    tmem_layout = TileLayout(S[(128, offset + width) : (1 @ TLane, 1 @ TCol)])

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (128, width), dtype)
        B = T.match_buffer(B_ptr, (128, width), dtype)
        T.device_entry()
        warp_id = T.warp_id([4])
        T.cta_id([1])
        wg_id = T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        T.lane_id([32])
        tid = T.thread_id([128])
        tmem_addr = T.alloc_buffer((1,), "uint32", scope="shared")
        if wg_id == 0:
            if warp_id == 0:
                T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(
                    T.address_of(tmem_addr[0]), T.uint32(cols))
            T.tvm_storage_sync("shared")
            if addr == "shared":
                tmem = T.decl_buffer((128, offset + width), dtype, scope="tmem",
                                     allocated_addr=tmem_addr[0], layout=tmem_layout)
            else:
                tmem = T.decl_buffer((128, offset + width), dtype, scope="tmem",
                                     allocated_addr=0, layout=tmem_layout)
            A_reg = T.alloc_local((total,), dtype)
            B_reg = T.alloc_local((total,), dtype)
            A_local = A_reg.view(128, total, layout=local_view)
            B_local = B_reg.view(128, total, layout=local_view)
            for i in range(width):
                A_reg[local_offset + i] = A[tid, i]
            T.cuda.cta_sync()
            Tx.wg.copy_async(tmem[:, offset:offset + width],
                             A_local[:, local_offset:local_offset + width])
            T.ptx.tcgen05.wait__st.sync.aligned()
            T.cuda.cta_sync()
            Tx.wg.copy_async(B_local[:, local_offset:local_offset + width],
                             tmem[:, offset:offset + width])
            T.ptx.tcgen05.wait__ld.sync.aligned()
            T.cuda.cta_sync()
            for i in range(width):
                B[tid, i] = B_reg[local_offset + i]
            if warp_id == 0:
                T.ptx.tcgen05.relinquish_alloc_permit.cta_group__1.sync.aligned()
                T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(tmem_addr[0],
                                                                    T.uint32(cols))

    return kernel


def tcgen05_asm(src: str) -> list[str]:
    """The tcgen05.ld / tcgen05.st instructions of a CUDA source."""
    return sorted(set(re.findall(r'"(tcgen05\.(?:ld|st)\.[^"]*)"', src)))


def f32_registers_as_b32(src: str) -> str:
    """A CUDA source with float32 registers spelled as tiledispatch spells
    every register of a tcgen05.ld / st (`((uint*)A_reg_ptr)[i]` into TVM's
    b32 helper, where TVM passes float32 registers to its `_b32_f32`
    helper, the same instruction on the same bits)."""
    src = re.sub(r"(tcgen05_(?:ld|st)_\w+_b32)_f32\b", r"\1", src)
    return re.sub(r"\(\(uint\*\)(\w+)\)\[", r"\1[", src)


@pytest.mark.parametrize("dtype,width_32b,offset_32b,local_offset", [
    ("uint8", 4, 0, 0),
    ("uint8", 128, 10, 0),
    ("float16", 8, 3, 0),
    ("float16", 64, 0, 0),
    ("float16", 16, 0, 4),     # test_copy_tmem2reg_sliced_local
    ("float32", 4, 0, 0),
    ("float32", 32, 10, 0),
    ("float32", 128, 3, 0),
    ("float32", 8, 0, 8),      # test_copy_tmem2reg_sliced_local
])
def test_ldst_round_trip(dtype, width_32b, offset_32b, local_offset):
    """Both copies go through tiledispatch's tmem<->local (`NAME_taddr`
    bound to the buffer's allocated_addr as a uint32) and the kernel TVM
    generates is plain TVM's: byte for byte for 8- and 16-bit data (the
    registers packed into b32 cells by a uint32 view in both); for float32
    the same tcgen05 instructions, TVM passing the float registers to its
    `_f32` helper where tiledispatch passes their bits through the uint32
    view (docs/upstream.md, tmem<->local)."""
    plain, ours, dispatched = both(ldst_kernel(dtype, width_32b, offset_32b, local_offset))
    assert dispatched == {"copy_async": {"tmem<->local": 2}}
    x = f"x{width_32b}"
    assert tcgen05_asm(ours) == tcgen05_asm(plain) == sorted([
        f"tcgen05.ld.sync.aligned.32x32b.{x}.b32 " + "{" + ", ".join(
            f"%{i}" for i in range(width_32b)) + "}, " + f"[%{width_32b}];",
        f"tcgen05.st.sync.aligned.32x32b.{x}.b32 [%0], " + "{" + ", ".join(
            f"%{i + 1}" for i in range(width_32b)) + "};"])
    if dtype == "float32":
        assert kernel_source(ours) != kernel_source(plain)
        assert (f32_registers_as_b32(kernel_source(ours))
                == f32_registers_as_b32(kernel_source(plain)))
    else:
        assert ours == plain


def test_ldst_column_address():
    """The column offset reaches the address as TVM writes it: 3 cells
    past the buffer's address, get_tmem_addr(addr, lane 0, column 3), in
    both."""
    plain, ours, _ = both(ldst_kernel("float16", 8, 3))
    for src in (plain, ours):
        assert ("tcgen05_st_st_sync_aligned_32x32b_x8_b32(tvm_builtin_cuda_get_tmem_addr("
                "(uint)0, 0, 3), ") in src


def test_ldst_shared_address_fails_in_tvm_as_without_bridge():
    """Over `allocated_addr=tmem_addr[0]` (the upstream tests' form) the
    bridge takes both copies, and TVM 0.27's own pipeline then fails at
    MakePackedAPI, as it fails without the bridge (docs/upstream.md,
    tmem<->local: the harness issue the differential met)."""
    func = ldst_kernel("float16", 8, addr="shared")
    with pytest.raises(Exception, match=r"tmem_addr.source,\) are used, but are not passed"):
        compile_cuda(func, arch=ARCH)
    tdtvm.install(strict=True)
    with pytest.raises(Exception, match=r"tmem_addr.source,\) are used, but are not passed"):
        compile_cuda(func, arch=ARCH)
    assert tdtvm.stats()["dispatched"] == {"copy_async": {"tmem<->local": 2}}


def test_ldst_sm90a_handed_back(caplog):
    """For sm_90a (no tensor memory) tiledispatch declines, with its
    reason, where TVM emits tcgen05 for any arch (docs/upstream.md): the
    call goes back as a failed match and TVM lowers it."""
    src, st, logs = handed_back(ldst_kernel("float16", 8), caplog, arch="sm_90a")
    assert st == {"dispatched": {}, "handed_back": {
        "no variant matched": {"tirx.tile.copy_async": 2}}}
    assert ("tmem<->local: declined - tmem<->local: tcgen05.ld/st needs tensor memory "
            "(sm_100a, sm_101a, sm_103a or sm_110a), got sm_90a") in logs[0]
    assert "tcgen05_st" in src


def test_ldst_16x_fragment_handed_back(caplog):
    """A `.16x256b` fragment (test_tcgen05_16xnb_sub_slab_view_read's
    M = 128 store, registers in TVM's tcgen05 atom layout): tiledispatch
    builds the `.32x32b` fragment only and declines with the reason; TVM
    lowers it (once tmem<->local builds the fragment: TVM's instruction,
    declined_or_as_tvm)."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.layout import tcgen05_atom_layout, tmem_datapath_layout

    cols, regs = 16, 16
    atom = tcgen05_atom_layout("16x256b", (128, cols), "float32")
    layout_d = tmem_datapath_layout("D", 128, 32)

    @T.prim_func
    def kernel(A_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (128, regs), "float32")
        T.device_entry()
        T.warp_id([4])
        T.cta_id([1])
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        T.lane_id([32])
        tid = T.thread_id([128])
        tmem = T.decl_buffer((128, 32), "float32", scope="tmem", allocated_addr=0,
                             layout=layout_d)
        source = T.alloc_local((regs,), "float32")
        for i in range(regs):
            source[i] = A[tid, i]
        Tx.wg.copy_async(tmem[0:128, 0:cols], source.view(128, cols, layout=atom))

    declined_or_as_tvm(kernel, caplog, "tmem<->local",
                       "TVM's .16x64b/.16x128b/.16x256b fragments are not supported by "
                       "tiledispatch yet)", "tcgen05_st_st_sync_aligned_16x256b")


# ---- smem->tmem: tcgen05.cp ------------------------------------------------

def cp_kernel(dtype, s_shape, s_layout, t_cols, t_cols_region, **config):
    """test_tcgen05_cp.py's _make_cp_kernel, the copy itself: thread 0 of
    the warpgroup copies the shared tile A_smem into tmem columns
    t_cols_region (the caller's commit and wait are the upstream test's,
    left out: they are no tile op)."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.layout import S, TCol, TileLayout, TLane

    lo, hi = t_cols_region
    t_layout = TileLayout(S[(128, t_cols) : (1 @ TLane, 1 @ TCol)])

    @T.prim_func
    def kernel(A_ptr: T.handle):
        A = T.match_buffer(A_ptr, s_shape, dtype)
        T.device_entry()
        T.warp_id([4])
        T.warpgroup_id([1])
        tid_in_wg = T.thread_id_in_wg([128])
        T.lane_id([32])
        A_smem = T.alloc_buffer(s_shape, dtype, scope="shared", layout=s_layout, align=1024)
        T.cuda.cta_sync()
        tmem = T.decl_buffer((128, t_cols), dtype, scope="tmem", allocated_addr=0,
                             layout=t_layout)
        if tid_in_wg == 0:
            Tx.copy_async(tmem[:, lo:hi], A_smem[:, :], **config)

    return kernel


def _cp_cases():
    from tvm.tirx.layout import S, TileLayout

    core16 = TileLayout(S[(16, 8, 2, 8) : (128, 8, 64, 1)])   # 16-byte rows, two halves
    return {
        # test_cp_shape_roundtrip_nonswizzled[128x256b-None-bfloat16]
        "128x256b_bf16": ("bfloat16", (128, 16), core16, 16, (0, 16),
                          {"shape": "128x256b", "cta_group": 1}),
        # ...[128x128b-None-bfloat16]
        "128x128b_bf16": ("bfloat16", (128, 8), TileLayout(S[(128, 8) : (8, 1)]), 8, (0, 8),
                          {"shape": "128x128b", "cta_group": 1}),
        # two 128x128b copies at a tmem column offset
        "128x128b_f32_two": ("float32", (128, 8), TileLayout(S[(128, 2, 4) : (4, 512, 1)]),
                             12, (4, 12), {"shape": "128x128b", "cta_group": 1}),
        # the shape inferred (test_cp_infers_shape)
        "inferred_f16": ("float16", (128, 16), core16, 16, (0, 16), {"cta_group": 1}),
    }


_DESC_LINES = re.compile(r"^\s*(?:alignas\(64\) uint64_t cp_desc_ptr\[1\];|"
                         r"tvm_builtin_ptx_tcgen05_encode_matrix_descriptor\(cp_desc_ptr, .*\);)$")


@pytest.mark.parametrize("case", ["128x256b_bf16", "128x128b_bf16", "128x128b_f32_two",
                                  "inferred_f16"])
def test_cp(case):
    """tiledispatch's smem->tmem: the same tcgen05.cp instructions on the
    same descriptor and tmem addresses as TVM's; the kernels differ only
    in where the descriptor is encoded (TVM hoists its encode after the
    shared buffer's definition, tiledispatch's body encodes it in the
    issuing thread before its first copy: docs/upstream.md, smem->tmem),
    and TVM's unrolled loop of a two-copy tile compiles to
    tiledispatch's two statements."""
    dtype, s_shape, s_layout, t_cols, region, config = _cp_cases()[case]
    plain, ours, dispatched = both(cp_kernel(dtype, s_shape, s_layout, t_cols, region,
                                             **config))
    assert dispatched == {"copy_async": {"smem->tmem": 1}}

    def split(src):
        lines = kernel_source(src).splitlines()
        return ([ln for ln in lines if _DESC_LINES.match(ln)],
                [ln for ln in lines if not _DESC_LINES.match(ln)])

    (desc_p, rest_p), (desc_o, rest_o) = split(plain), split(ours)
    assert len(desc_o) == 2 and [ln.strip() for ln in desc_o] == [ln.strip() for ln in desc_p]
    assert rest_o == rest_p
    n = 2 if case == "128x128b_f32_two" else 1
    assert ours.count("tvm_builtin_ptx_tcgen05_cp_cp_cta_group__1_") == n + 1   # + the helper


def test_cp_swizzled_handed_back(caplog):
    """A 128-byte-swizzled shared tile (test_cp_shape_roundtrip_swizzled's
    SW128 MMA layout, `mma_shared_layout`): tiledispatch's smem->tmem
    builds no swizzled descriptor yet and declines with the reason; TVM
    lowers it (once smem->tmem builds it: TVM's instruction,
    declined_or_as_tvm)."""
    from tvm.backend.cuda.tile_primitive.tma_utils import SwizzleMode, mma_shared_layout

    s_layout = mma_shared_layout("bfloat16", SwizzleMode(3), (128, 64))
    func = cp_kernel("bfloat16", (128, 64), s_layout, 64, (0, 64), shape="128x256b",
                     cta_group=1)
    declined_or_as_tvm(func, caplog, "smem->tmem",
                       "swizzled shared layouts are not supported by tiledispatch yet",
                       "tcgen05_cp_cp_cta_group__1_128x256b")


def test_tmem_layout_not_d():
    """A tmem buffer in another layout than datapath D (TVM's SFB layout of
    test_tcgen05_cp.py, with a replica) goes to the call file as its
    `layout:` (the loader classifies it: no datapath, which smem->tmem
    writes), and smem->tmem dispatches it with plain TVM's tcgen05.cp
    instructions."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.layout import R, S, TCol, TileLayout, TLane

    s_full = TileLayout(S[(2, 4, 32, 4, 4) : (2048, 4, 16, 512, 1)])
    t_full = TileLayout(S[(2, 4, 32, 4, 4) : (16 @ TCol, 4 @ TCol, 1 @ TLane, 32 @ TCol,
                                               1 @ TCol)] + R[4 : 32 @ TLane])

    @T.prim_func
    def kernel(A_ptr: T.handle):
        A = T.match_buffer(A_ptr, (256, 16), "uint8")
        T.device_entry()
        T.warp_id([4])
        T.warpgroup_id([1])
        tid_in_wg = T.thread_id_in_wg([128])
        T.lane_id([32])
        A_smem = T.alloc_buffer((256, 16), "uint8", scope="shared", layout=s_full, align=1024)
        tmem = T.decl_buffer((256, 16), "uint8", scope="tmem", allocated_addr=0,
                             layout=t_full)
        if tid_in_wg == 0:
            Tx.copy_async(tmem[:, :], A_smem[:, :], cta_group=1)

    plain, ours, dispatched = both(kernel)
    assert dispatched == {"copy_async": {"smem->tmem": 1}}
    insns = re.compile(r'"(tcgen05\.cp[^"]*)"')
    assert insns.findall(ours) and sorted(set(insns.findall(ours))) == sorted(
        set(insns.findall(plain)))
