"""tiledispatch.tvm with Tx.copy_async against real TVM (apache-tvm
0.27.0.post1): global -> shared copies by cp.async compile inside
`tvm.compile(..., tir_pipeline="tirx")` with the copy dispatched by
tiledispatch's ldgsts (stats()), and the CUDA TVM generates holds the
cp.async TVM's own ldgsts writes for the same call; tvm.compile compiles
the CUDA for sm_90a, with nvcc where it is on PATH
(TVM_CUDA_COMPILE_MODE=nvcc; else TVM's default, NVRTC).  TMA copies
(tma_auto, tma_explicit) go through tiledispatch too: their tensor maps
reach TVM's host side (the compiled host code encodes them), the kernel
gets them as parameters, and the CUDA holds the cp.async.bulk.tensor
chains TVM's own variants write; so do cluster copies (dsmem), a
prefetched map and an mbarrier slot or multicast mask computed at run
time.  What tiledispatch cannot express (gather4, a shared region
starting at a variable) goes back to TVM with the reason.  The
tensor-memory copies (sm_100a): test_tvm_bridge_tcgen05.py.

Skipped, with the reason, where TVM is not installed."""
import re

import pytest

tvm = pytest.importorskip("tvm", reason="apache-tvm not installed (pip install apache-tvm==0.27.0.post1)")

import tiledispatch.tvm as tdtvm  # noqa: E402
from conftest import both, compile_cuda  # noqa: E402


# The bridge set up and put back around every test, and the compile
# helpers: conftest.py (shared with the other copy module).
pytestmark = pytest.mark.usefixtures("tvm_bridge")


def cp_async(src: str) -> list[str]:
    """The cp.async instructions of a CUDA source (their spelling)."""
    return sorted(set(re.findall(r"cp\.async\.c[ag]\.shared\.global[.:\w]*", src)))


def staged(shape: tuple, region: tuple, threads: int, dtype: str, *, tiles: int = 1,
           start=None, **config):
    """A's region -> Sm by copy_async at cta scope, then the wait (commit,
    wait_group 0, cta_sync) and Sm -> B by a plain copy.  With `start`,
    each CTA copies rows start(bx, rows) of A (a block-tiled region)."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    rows, cols = region
    if start is None:
        def start(bx, r):
            return 0

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, shape, dtype)
        B = T.match_buffer(B_ptr, region, dtype)
        T.device_entry()
        bx = T.cta_id([tiles])
        T.warp_id([threads // 32])
        T.lane_id([32])
        T.thread_id([threads])
        Sm = T.alloc_buffer(region, dtype, scope="shared")
        Tx.cta.copy_async(Sm[:, :], A[start(bx, rows):start(bx, rows) + rows, 0:cols],
                          **config)
        T.ptx.cp.async_.commit_group()
        T.ptx.cp.async_.wait_group(0)
        T.cuda.cta_sync()
        Tx.cta.copy(B[:, :], Sm[:, :])

    return kernel


@pytest.mark.parametrize("dtype,inst", [
    ("float16", "cp.async.cg.shared.global"),
    ("float32", "cp.async.cg.shared.global"),
    ("int8", "cp.async.ca.shared.global"),   # 8 bytes a thread
])
def test_ldgsts_tile(dtype, inst):
    """A 32x32 tile over 128 threads: ldgsts (TVM's choice too), 16-byte
    cp.async in both, the shared address given as a byte offset."""
    plain, ours, dispatched = both(staged((64, 32), (32, 32), 128, dtype))
    assert dispatched == {"copy_async": {"ldgsts": 1}, "copy": {"vec_auto": 1}}
    assert cp_async(ours) == cp_async(plain)
    assert any(i.startswith(inst) for i in cp_async(ours))


def test_ldgsts_column_f32():
    """A float32 column: 4-byte pieces (.ca), as TVM spells them."""
    plain, ours, dispatched = both(staged((32, 32), (32, 1), 32, "float32"))
    assert dispatched["copy_async"] == {"ldgsts": 1}
    assert cp_async(ours) == cp_async(plain)
    assert any(i.startswith("cp.async.ca.shared.global") for i in cp_async(ours))


def test_ldgsts_prefetch():
    """prefetch_size=128 lands in the instruction (.L2::128B)."""
    plain, ours, dispatched = both(staged((64, 32), (32, 32), 128, "float16",
                                          prefetch_size=128))
    assert dispatched["copy_async"] == {"ldgsts": 1}
    assert "L2::128B" in ours and "L2::128B" in plain


def test_ldgsts_block_tiled():
    """A region starting at bx * 32: the block offset is in the 32-bit
    index (bx * 1024 for 32-column float16 rows), as TVM's own copy
    puts it."""
    plain, ours, dispatched = both(staged((128, 32), (32, 32), 128, "float16", tiles=4,
                                          start=lambda bx, r: bx * r))
    assert dispatched == {"copy_async": {"ldgsts": 1}, "copy": {"vec_auto": 1}}
    assert cp_async(ours) == cp_async(plain)
    assert "((int)blockIdx.x) * 1024)" in ours


def test_ldgsts_zero_fill_predicate():
    """predicate=expression with fill_mode="zero": the guard is bound as
    an int of the body; the copy's src-size is `p != 0 ? 16 : 0`."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle, n: T.int32) -> None:
        A = T.match_buffer(A_ptr, (32, 32), "float32")
        B = T.match_buffer(B_ptr, (32, 32), "float32")
        T.device_entry()
        T.cta_id([1])
        T.warp_id([1])
        T.lane_id([32])
        T.thread_id([32])
        Sm = T.alloc_buffer((32, 32), "float32", scope="shared")
        Tx.warp.copy_async(Sm[:, :], A[:, :], predicate=n, fill_mode="zero")
        T.ptx.cp.async_.commit_group()
        T.ptx.cp.async_.wait_group(0)
        T.cuda.cta_sync()
        Tx.warp.copy(B[:, :], Sm[:, :])

    plain, ours, dispatched = both(kernel)
    assert dispatched["copy_async"] == {"ldgsts": 1}
    assert cp_async(ours) == cp_async(plain)
    # The src-size form of the instruction, its operand 16 or 0 by the guard.
    for src in (plain, ours):
        assert '"cp.async.cg.shared.global [%0], [%1], 16, %2;"' in src
    assert "condval = 16;" in ours and "condval = 0;" in ours


def test_ldgsts_bool_predicate():
    """A boolean guard (`tx < 16`, no fill): bound as an int of the body;
    each cp.async is skipped where it is false (@p), in both."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (32, 32), "float32")
        B = T.match_buffer(B_ptr, (32, 32), "float32")
        T.device_entry()
        T.cta_id([1])
        T.warp_id([1])
        T.lane_id([32])
        tx = T.thread_id([32])
        Sm = T.alloc_buffer((32, 32), "float32", scope="shared")
        Tx.warp.copy_async(Sm[:, :], A[:, :], predicate=tx < 16)
        T.ptx.cp.async_.commit_group()
        T.ptx.cp.async_.wait_group(0)
        T.cuda.cta_sync()
        Tx.warp.copy(B[:, :], Sm[:, :])

    plain, ours, dispatched = both(kernel)
    assert dispatched["copy_async"] == {"ldgsts": 1}
    assert cp_async(ours) == cp_async(plain) == ["cp.async.cg.shared.global"]
    for src in (plain, ours):
        assert "@p cp.async.cg.shared.global" in src


def test_ldgsts_direct_per_thread():
    """TVM's test_copy_ldgsts_predicate_zero_fill_codegen (test_ldgsts.py):
    each thread copies its 16-byte row, `A_smem[tid, :]` <- `A[tid, :]`,
    direct, guarded, zero-filled, with a prefetch.  The shared region
    starts at `tid`: the bridge makes it the whole of a view of A_smem at
    `tid * 16` (declared in front of the body), so tiledispatch's ldgsts
    takes it; TVM's own assertions on the CUDA hold, and the cp.async is
    TVM's, at the same addresses (spelled as byte offsets)."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.layout import S, TileLayout

    @T.prim_func
    def copy_async(A_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (32, 16), "uint8", layout=TileLayout(S[32, 16]))
        T.device_entry()
        tid = T.thread_id([32])
        A_smem = T.alloc_buffer((32, 16), "uint8", scope="shared", layout=TileLayout(S[32, 16]))
        Tx.copy_async(A_smem[tid, :], A[tid, :], dispatch="ldgsts", direct=True,
                      prefetch_size=128, predicate=tid < 16, fill_mode="zero")

    plain = compile_cuda(copy_async, arch="sm_100a")
    tdtvm.install(strict=True)
    src = compile_cuda(copy_async, arch="sm_100a")
    assert tdtvm.stats() == {"dispatched": {"copy_async": {"ldgsts": 1}}, "handed_back": {}}
    # TVM's assertions, on the bridge's CUDA.
    assert "cp.async.cg.shared.global.L2::128B" in src
    assert "cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;" in src
    assert "condval" in src
    assert "s_ptr_ptr" not in src
    assert "g_ptr_ptr" not in src
    assert cp_async(src) == cp_async(plain)
    assert "(&(A_smem_ptr[(((int)threadIdx.x) * 16)]))" in src
    assert "(((int)threadIdx.x) * 16)" in src.split("A_ptr[0]")[1]


def test_per_thread_shared_region_unaligned_handed_back(caplog):
    """A per-thread shared row of 12 bytes (`Sm[tx, 0:3]`, float32): a view
    at `tx * 12` would not be 16-byte aligned, which the variants assume
    of a shared buffer, so the region stays as it is and the call goes
    back to TVM as not expressible, with the loader's reason."""
    import logging

    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    @T.prim_func
    def kernel(A_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (32, 3), "float32")
        T.device_entry()
        T.cta_id([1])
        T.warp_id([1])
        T.lane_id([32])
        tx = T.thread_id([32])
        Sm = T.alloc_buffer((32, 3), "float32", scope="shared")
        Tx.thread.copy_async(Sm[tx, 0:1], A[tx, 0:1], direct=True, predicate=tx < 16)
        Tx.thread.copy_async(Sm[tx, 0:3], A[tx, 0:3])

    tdtvm.install()
    with caplog.at_level(logging.INFO, logger="tiledispatch.tvm"):
        compile_cuda(kernel)
    assert tdtvm.stats() == {"dispatched": {}, "handed_back": {
        "not expressible as a tiledispatch call": {"tirx.tile.copy_async": 2}}}
    logs = [r.getMessage() for r in caplog.records if r.name == "tiledispatch.tvm"]
    assert "needs a global buffer; 'Sm' is shared" in logs[0]


# ---- TMA copies (tma_auto, tma_explicit) -----------------------------------

def tma_kernel(kind: str, **config):
    """Thread 0 issues one TMA copy between A (f16 [256, 64]) and a shared
    [128, 64] tile (TVM's TMA variants take single-thread calls):
    "load" rows 0:128 completing on mbar[0], "store" the tile to rows
    128:256, "two_loads" both halves of a [128, 64] region as two [64, 64]
    copies (one map: the same spec at two coordinates)."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.layout import S, TileLayout

    @T.prim_func
    def kernel(A_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (256, 64), "float16")
        T.device_entry()
        T.cta_id([1])
        T.warp_id([4])
        T.lane_id([32])
        tx = T.thread_id([128])
        Sm = T.alloc_buffer((128, 64), "float16", scope="shared.dyn", align=128,
                            layout=TileLayout(S[128, 64]))
        mbar = T.alloc_buffer((1,), "uint64", scope="shared")
        if tx == 0:
            if kind == "load":
                Tx.copy_async(Sm[:, :], A[0:128, :], mbar=mbar.ptr_to([0]), **config)
            elif kind == "store":
                Tx.copy_async(A[128:256, :], Sm[:, :], **config)
            else:
                Tx.copy_async(Sm[0:64, :], A[0:64, :], mbar=mbar.ptr_to([0]), **config)
                Tx.copy_async(Sm[64:128, :], A[64:128, :], mbar=mbar.ptr_to([0]), **config)

    return kernel


def compile_both(func) -> tuple[str, str, str, dict]:
    """(plain TVM's CUDA, the bridge's CUDA, the bridge's host LLVM IR, the
    bridge's dispatches): compiled for sm_90a, the bridge strict."""
    import tvm

    def build():
        target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
        with target:
            ex = tvm.compile(tvm.IRModule({"main": func}), target=target, tir_pipeline="tirx")
        return ex.mod.imports[0].inspect_source(), ex.mod.inspect_source("ll")

    plain, _ = build()
    tdtvm.install(strict=True)
    ours, host = build()
    st = tdtvm.stats()
    tdtvm.uninstall()
    assert st["handed_back"] == {}
    return plain, ours, host, st["dispatched"]


def tma_chains(src: str) -> list[str]:
    """The TMA instructions of a CUDA source, with their qualifiers."""
    return sorted(set(re.findall(r"cp\.(?:reduce\.)?async\.bulk\.tensor\.[.:\w]*", src)))


def map_params(src: str) -> list[str]:
    """The kernel's tensor-map parameters (their names), once each."""
    sig = re.search(r'extern "C" __global__[^{;]*\{', src).group(0)
    return re.findall(r"const __grid_constant__ CUtensorMap (\w+)", sig)


# Loads name tma_auto: unforced, TVM's ldgsts (priority 20) would take them
# and drop the mbarrier (deviation A2, test_tma_unforced_load below).
@pytest.mark.parametrize("kind,config,chain", [
    ("load", {"dispatch": "tma_auto"},
     "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"),
    ("load", {"dispatch": "tma_auto", "cache_hint": "evict_last"},
     "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
     ".L2::cache_hint"),
    ("store", {}, "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"),
    ("store", {"use_tma_reduce": "add"},
     "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group"),
])
def test_tma_auto(kind, config, chain):
    """tma_auto (tiledispatch's choice, as TVM's): the CUDA holds the
    instruction TVM's own variant writes, the map is a __grid_constant__
    kernel parameter, and the host code encodes it (TVM's
    runtime.cuTensorMapEncodeTiled, from the statements the bridge gave
    sctx)."""
    plain, ours, host, dispatched = compile_both(tma_kernel(kind, **config))
    assert dispatched == {"copy_async": {"tma_auto": 1}}
    assert tma_chains(ours) == tma_chains(plain) == [chain]
    assert map_params(ours) == map_params(plain) == ["A_tensormap"]
    assert "runtime.cuTensorMapEncodeTiled" in host


def test_tma_unforced_load():
    """An unforced load with an mbarrier: tiledispatch's ldgsts refuses the
    barrier it would never arrive on, so tma_auto takes it; plain TVM's
    ldgsts takes it and drops the barrier (deviation A2: cp.async, no
    TMA, a waiter would hang)."""
    from conftest import compile_cuda as build

    plain = build(tma_kernel("load"))
    tdtvm.install(strict=True)
    ours = build(tma_kernel("load"))
    assert tdtvm.stats()["dispatched"] == {"copy_async": {"tma_auto": 1}}
    assert tma_chains(ours) == [
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"]
    assert tma_chains(plain) == [] and "cp.async.cg.shared.global" in plain


def test_tma_explicit_forced():
    """dispatch="tma_explicit": tiledispatch's tma_explicit, the same load."""
    plain, ours, host, dispatched = compile_both(tma_kernel("load", dispatch="tma_explicit"))
    assert dispatched == {"copy_async": {"tma_explicit": 1}}
    assert tma_chains(ours) == tma_chains(plain)
    assert map_params(ours) == ["A_tensormap"]
    assert "runtime.cuTensorMapEncodeTiled" in host


def test_tma_two_loads_maps_as_tvm():
    """Two loads of the same spec at rows 0 and 64: two instructions at
    coordinates (0, 0) and (0, 64), and the kernel's map parameters exactly
    TVM's (TVM 0.27's own lowering makes one map per call here too: the
    bridge looks a map up in sctx's cache with TVM's key, as TVM does)."""
    plain, ours, host, dispatched = compile_both(tma_kernel("two_loads", dispatch="tma_auto"))
    assert dispatched == {"copy_async": {"tma_auto": 2}}
    assert map_params(ours) == map_params(plain)
    calls = re.findall(r"complete_tx__bytes\((.*?)\);\n", ours)
    assert len(calls) == 2 and ", 0, 0, " in calls[0] and ", 0, 64, " in calls[1]


def test_tma_without_mbar_no_match():
    """A global -> shared TMA load needs an mbarrier: tiledispatch declines
    in TVM's words (strict raises with them; not strict, TVM gets the call
    and fails the same way)."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    @T.prim_func
    def kernel(A_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (256, 64), "float16")
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([128])
        Sm = T.alloc_buffer((128, 64), "float16", scope="shared.dyn")
        if tx == 0:
            Tx.copy_async(Sm[:, :], A[0:128, :], dispatch="tma_auto")

    tdtvm.install(strict=True)
    with pytest.raises(Exception, match="global-to-shared TMA requires mbar"):
        compile_cuda(kernel)


def test_dsmem_cluster_copy():
    """A shared -> shared copy into the peer CTA of a cluster of two
    (TVM's dsmem test kernel): tiledispatch's dsmem, the cluster from TVM's
    clusterCtaIdx launch parameters, `remote_cta_id=1 - cbx` with cbx a
    scalar of the call bound to the kernel's variable; the same
    cp.async.bulk as TVM's, the address mapped by
    mapa.shared::cluster.u32 (deviation A4: TVM 0.27's own dsmem spells
    the mapa its own way)."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.layout import S, TileLayout

    @T.prim_func
    def kernel(A_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (2, 64, 64), "float16", layout=TileLayout(S[2, 64, 64]))
        T.device_entry()
        cbx = T.cta_id_in_cluster([2])
        T.cta_id([2])
        tx = T.thread_id([128])
        S_src = T.alloc_buffer((64, 64), "float16", scope="shared.dyn",
                               layout=TileLayout(S[64, 64]))
        S_dst = T.alloc_buffer((64, 64), "float16", scope="shared",
                               layout=TileLayout(S[64, 64]))
        mbar = T.alloc_buffer((1,), "uint64", scope="shared")
        if tx == 0:
            Tx.copy_async(S_dst[:, :], S_src[:, :], mbar=mbar.ptr_to([0]),
                          remote_cta_id=1 - cbx)

    plain, ours, _, dispatched = compile_both(kernel)
    assert dispatched == {"copy_async": {"dsmem": 1}}

    def bulk(src):
        return sorted(set(re.findall(r"cp\.async\.bulk\.shared[.:\w]*", src)))

    assert bulk(ours) == bulk(plain) == [
        "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes"]
    assert "mapa.shared::cluster.u32" in ours
    # 1 - cbx: the peer's rank, from the CTA's rank in its cluster.
    assert "(1 - ((int)tvm_builtin_cluster_ctaid_x()))" in ours


def kernel_source(src: str) -> str:
    """The kernel of a CUDA source, from its `extern "C" __global__` on."""
    return src[src.index('extern "C" __global__'):]


def tma_loop_kernel(stage_buffer: bool = False, **config):
    """Thread 0 loads rows k * 128 of A (f16 [256, 64]) for k = 0, 1 into a
    shared [128, 64] tile, completing on mbar[k % 2]: the barrier slot is
    chosen at run time.  With `stage_buffer`, into stage k of a [2, 128,
    64] buffer (a shared region starting at a variable)."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.layout import S, TileLayout

    @T.prim_func
    def loop(A_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (256, 64), "float16")
        T.device_entry()
        T.cta_id([1])
        T.warp_id([4])
        T.lane_id([32])
        tx = T.thread_id([128])
        Sm = T.alloc_buffer((128, 64), "float16", scope="shared.dyn",
                            layout=TileLayout(S[128, 64]))
        mbar = T.alloc_buffer((2,), "uint64", scope="shared")
        for k in range(2):
            if tx == 0:
                Tx.copy_async(Sm[:, :], A[k * 128:k * 128 + 128, :], dispatch="tma_auto",
                              mbar=mbar.ptr_to([k % 2]), **config)

    @T.prim_func
    def staged_loop(A_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (256, 64), "float16")
        T.device_entry()
        T.cta_id([1])
        T.warp_id([4])
        T.lane_id([32])
        tx = T.thread_id([128])
        Sm = T.alloc_buffer((2, 128, 64), "float16", scope="shared.dyn",
                            layout=TileLayout(S[2, 128, 64]))
        mbar = T.alloc_buffer((2,), "uint64", scope="shared")
        for k in range(2):
            if tx == 0:
                Tx.copy_async(Sm[k, :, :], A[k * 128:k * 128 + 128, :],
                              dispatch="tma_auto", mbar=mbar.ptr_to([k % 2]))

    return staged_loop if stage_buffer else loop


def test_tma_mbar_slot_expression():
    """`mbar=bar.ptr_to([k % 2])` (the slot chosen at run time): the call's
    `mbar: "mbar[(td_k % 2)]"`, td_k a scalar bound to the loop variable
    (its range [0, 2) from TVM, so the library proves the index inside
    the barrier buffer); the kernel TVM generates is exactly plain TVM's."""
    plain, ours, host, dispatched = compile_both(tma_loop_kernel())
    assert dispatched == {"copy_async": {"tma_auto": 1}}
    assert kernel_source(ours) == kernel_source(plain)
    assert "(&(mbar_ptr[k]))" in ours   # k % 2, simplified by TVM for k < 2


def test_tma_mbar_slot_expression_call():
    """The call the bridge makes of that copy (to_call, inside TVM's
    dispatch): the element as a call expression, its variable a scalar
    with TVM's range."""
    from tvm.tirx.operator.tile_primitive import dispatcher

    seen = []
    prev = dispatcher.run_dispatch

    def spy(op_call, sctx):
        if str(op_call.op.name) == "tirx.tile.copy_async":
            seen.append(tdtvm.to_call(op_call, sctx))
        return prev(op_call, sctx)

    dispatcher.run_dispatch = spy
    try:
        compile_cuda(tma_loop_kernel())
    finally:
        dispatcher.run_dispatch = prev
    ((call, names),) = seen
    assert call.config["mbar"] == "mbar[(td_k % 2)]"
    assert names["td_k"].name == "k" and names["mbar"].name == "mbar"
    assert "mbar=T.address_of(mbar[(td_k % 2)])" in call.script


def test_tma_cta_mask_expression():
    """A multicast mask computed at run time (a kernel parameter), in a
    cluster of two: the call's `cta_mask: td_mask`, bound to the
    parameter; the kernel is exactly plain TVM's."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.layout import S, TileLayout

    @T.prim_func
    def kernel(A_ptr: T.handle, mask: T.int32) -> None:
        A = T.match_buffer(A_ptr, (256, 64), "float16")
        T.device_entry()
        T.cta_id_in_cluster([2])
        T.cta_id([2])
        tx = T.thread_id([128])
        Sm = T.alloc_buffer((128, 64), "float16", scope="shared.dyn",
                            layout=TileLayout(S[128, 64]))
        mbar = T.alloc_buffer((1,), "uint64", scope="shared")
        if tx == 0:
            Tx.copy_async(Sm[:, :], A[0:128, :], mbar=mbar.ptr_to([0]),
                          dispatch="tma_auto", cta_mask=mask)

    plain, ours, host, dispatched = compile_both(kernel)
    assert dispatched == {"copy_async": {"tma_auto": 1}}
    assert kernel_source(ours) == kernel_source(plain)
    assert "multicast__cluster" in ours


_PREFETCH_LINES = re.compile(r"^\s*(?:if \(warp_id_in_cta == 0\) \{|if \(tvm_builtin_elect_one"
                             r"_sync_op\(\) != \(uint\)0\) \{|tvm_builtin_ptx_prefetch_tensormap"
                             r"\(.*\);|\})$")


def test_tma_prefetch_tensormap():
    """prefetch_tensormap=True: tiledispatch's tma_auto prefetches the map
    in the issuing thread just before its copy, where TVM prefetches it at
    the kernel's top in warp 0's elected lane (docs/upstream.md, the
    listed prefetch deviation): one prefetch of A_tensormap in each, and
    the kernels are equal but for where it is."""
    plain, ours, host, dispatched = compile_both(tma_kernel(
        "load", dispatch="tma_auto", prefetch_tensormap=True))
    assert dispatched == {"copy_async": {"tma_auto": 1}}
    call = "tvm_builtin_ptx_prefetch_tensormap(((void*)((unsigned long long)(&(A_tensormap)))));"
    assert plain.count(call) == ours.count(call) == 1
    ours_lines = kernel_source(ours).splitlines()
    at = next(i for i, line in enumerate(ours_lines) if call in line)
    assert "cp_async_bulk_tensor" in ours_lines[at + 1]   # just before the copy

    def rest(src):
        return [line for line in kernel_source(src).splitlines()
                if not _PREFETCH_LINES.match(line)]

    assert rest(ours) == rest(plain)
    assert "runtime.cuTensorMapEncodeTiled" in host


# TVM's gather kernel (test_tma.py, _SELECTOR_SOURCE): four rows of A
# gathered by coordinate into a [4, 64] tile, the map chosen at run time
# between A's and a view of B's by `flag`.
_SELECTOR_SOURCE = """
@T.prim_func
def selector_gather(A_ptr: T.handle, B_ptr: T.handle, flag: T.int32):
    A = T.match_buffer(A_ptr, (256, 64), "bfloat16")
    B = T.match_buffer(B_ptr, (512, 80), "bfloat16")
    B_view = B.sub[16:512, 8:72]
    T.device_entry()
    T.cta_id([1])
    tid = T.thread_id([128])
    dyn = T.alloc_buffer((520,), "uint64", scope="shared.dyn")
    T.attr({"tirx.dyn_smem_bytes": 520 * 8})
    A_smem = T.decl_buffer((4, 64), "bfloat16", dyn.data, layout=T.TileLayout(T.S[4, 64]))
    mbar = T.decl_buffer((1,), "uint64", dyn.data, elem_offset=64)
    if tid == 0:
        T.ptx.mbarrier.init.shared.b64(mbar.ptr_to([0]), T.uint32(1))
        Tx.copy_async(
            A_smem[:, :],
            A[0:1, :],
            dispatch="tma_explicit",
            mbar=mbar.ptr_to([0]),
            gather4=[1, 2, 3, 4],
            src_selector=[(flag != 0, B_view)],
        )
"""


@pytest.mark.parametrize("selector", [True, False])
def test_tma_gather4_handed_back(selector, caplog):
    """gather4 (with and without src_selector): tiledispatch's tma_explicit
    builds neither (docs/upstream.md A14), so the bridge hands the call
    back as not expressible, naming the keys; TVM lowers it (sm_100a, its
    gather4 instruction); strict=True raises BridgeError with the same
    words."""
    import logging

    src = _SELECTOR_SOURCE
    keys = "gather4 and src_selector"
    if not selector:
        src = src.replace("            src_selector=[(flag != 0, B_view)],\n", "")
        keys = "gather4"
    func = tvm.script.from_source(src)
    tdtvm.install()
    with caplog.at_level(logging.INFO, logger="tiledispatch.tvm"):
        cuda = compile_cuda(func, arch="sm_100a")
    assert tdtvm.stats() == {"dispatched": {}, "handed_back": {
        "not expressible as a tiledispatch call": {"tirx.tile.copy_async": 1}}}
    logs = [r.getMessage() for r in caplog.records if r.name == "tiledispatch.tvm"]
    assert logs == [f"tirx.tile.copy_async handed back to TVM: not expressible as a "
                    f"tiledispatch call (copy_async {keys}: tiledispatch's tma_explicit does "
                    "not build gathered rows or a run-time choice of tensor map yet "
                    "(docs/upstream.md A14))"]
    assert "tile__gather4_mbarrier__complete_tx__bytes" in cuda
    tdtvm.install(strict=True)
    with pytest.raises(Exception, match=f"copy_async {keys}: tiledispatch's tma_explicit"):
        compile_cuda(func, arch="sm_100a")


def test_tma_stage_buffer():
    """A pipeline's stage (`Sm[k, :, :]` of a [2, 128, 64] buffer, k the
    loop variable) with the barrier slot `k % 2`: the shared region is the
    whole of a view of Sm at `k * 8192` (declared in front of the body),
    so tma_auto takes the call; the kernel is plain TVM's."""
    plain, ours, host, dispatched = compile_both(tma_loop_kernel(stage_buffer=True))
    assert dispatched == {"copy_async": {"tma_auto": 1}}
    assert kernel_source(ours) == kernel_source(plain)
    assert "(&(Sm_ptr[(k * 8192)]))" in ours


def test_tma_swizzled_stage_buffer():
    """Stages of a 128-byte-swizzled buffer (`mma_shared_layout("float16",
    SW128, (2, 128, 64))`, TVM's MMA layout, as GEMM kernels stage their
    tiles): the view of stage s is the buffer's swizzle moved by s * 8192
    elements, a multiple of the swizzle's period (512), so tma_auto takes
    it with the same SWIZZLE_128B map; the kernel and the host module
    (the map's encode) are plain TVM's."""
    import tvm
    from tvm.backend.cuda.tile_primitive.tma_utils import SwizzleMode, mma_shared_layout
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    layout = mma_shared_layout("float16", SwizzleMode(3), (2, 128, 64))

    @T.prim_func
    def kernel(A_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (256, 64), "float16")
        T.device_entry()
        T.cta_id([1])
        T.warp_id([4])
        T.lane_id([32])
        tx = T.thread_id([128])
        Sm = T.alloc_buffer((2, 128, 64), "float16", scope="shared.dyn", layout=layout,
                            align=1024)
        mbar = T.alloc_buffer((2,), "uint64", scope="shared")
        for s in range(2):
            if tx == 0:
                Tx.copy_async(Sm[s, :, :], A[s * 128:s * 128 + 128, :], dispatch="tma_auto",
                              mbar=mbar.ptr_to([s]))

    def build():
        target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
        with target:
            return tvm.compile(tvm.IRModule({"main": kernel}), target=target,
                               tir_pipeline="tirx")

    plain = build()
    tdtvm.install(strict=True)
    ours = build()
    assert tdtvm.stats() == {"dispatched": {"copy_async": {"tma_auto": 1}}, "handed_back": {}}
    assert ours.mod.imports[0].inspect_source() == plain.mod.imports[0].inspect_source()

    def host(ex):   # the host module without its debug locations
        text = re.sub(r", !dbg !\d+", "", ex.mod.inspect_source("ll"))
        return [ln for ln in text.splitlines() if not ln.startswith("!")]

    assert host(ours) == host(plain)


# TVM's test_dispatch_propagates_flat_bind_to_auto_coordinate_proof
# (test_tma.py): a TMA store whose global column starts at a let-bound
# `d_n = tile_index[0] * 128`, a value loaded from a local buffer.
_FLAT_BIND_SOURCE = """
@T.prim_func
def bind_coordinate(D_ptr: T.handle):
    D = T.match_buffer(D_ptr, (33360, 6144), "bfloat16")
    T.device_entry()
    block = T.cta_id([192])
    tid = T.thread_id([1])
    tile_index = T.alloc_local((1,), "int32")
    D_smem = T.alloc_buffer(
        (2, 16, 128),
        "bfloat16",
        scope="shared.dyn",
        layout=T.TileLayout(T.S[(2, 16, 2, 64) : (2048, 64, 1024, 1)]),
    )
    tile_index[0] = block
    d_n: T.let = tile_index[0] * 128
    if tid == 0:
        Tx.copy_async(
            D[0:16, d_n : d_n + 128],
            D_smem[0, :, :],
            dispatch="tma_auto",
        )
"""


def test_tma_let_bound_start():
    """The column start `d_n` is a let variable TVM binds to
    `tile_index[0] * 128` (a point range in the dispatch context): the
    bridge writes its value, the load as a block id with coefficient 128,
    so tma_auto proves the coordinate aligned, as TVM does; the kernel
    (coordinate `tile_index[0] * 2` of the 3-d map) is plain TVM's, and
    the host encodes one map both ways (sm_100a, as TVM's test)."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    func = tvm.script.from_source(_FLAT_BIND_SOURCE, {"T": T, "Tx": Tx})

    def build():
        target = tvm.target.Target({"kind": "cuda", "arch": "sm_100a"})
        with target:
            return tvm.compile(tvm.IRModule({"main": func}), target=target, tir_pipeline="tirx")

    plain = build()
    tdtvm.install(strict=True)
    ours = build()
    assert tdtvm.stats() == {"dispatched": {"copy_async": {"tma_auto": 1}}, "handed_back": {}}
    src = ours.mod.imports[0].inspect_source()
    assert src == plain.mod.imports[0].inspect_source()
    assert "(tile_index_ptr[0] * 2)" in src
    assert tma_chains(src) == ["cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group"]
    for ex in (plain, ours):
        assert ex.mod.inspect_source("ll").count("runtime.cuTensorMapEncodeTiled") >= 1


def test_tma_rank_change_no_match(caplog):
    """TVM's test_explicit_allows_different_operand_ranks_with_equal_payload_bytes:
    tma_explicit copying A[:, :] (8, 8) into A_smem[:] (64).  copy's
    operand check, which copy_async shares, wants the same region shape on
    both sides (docs/upstream.md lists the deviation): the call goes back
    as no variant matched, with the check's words, and TVM lowers it."""
    import logging

    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    func = tvm.script.from_source("""
@T.prim_func
def rank_change(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (8, 8), "float16")
    T.device_entry()
    T.cta_id([1])
    tid = T.thread_id([1])
    dyn = T.alloc_buffer((65,), "uint64", scope="shared.dyn")
    T.attr({"tirx.dyn_smem_bytes": 65 * 8})
    A_smem = T.decl_buffer((64,), "float16", dyn.data, layout=T.TileLayout(T.S[64]))
    mbar = T.decl_buffer((1,), "uint64", dyn.data, elem_offset=16)
    if tid == 0:
        Tx.copy_async(
            A_smem[:], A[:, :], dispatch="tma_explicit", mbar=mbar.ptr_to([0])
        )
""", {"T": T, "Tx": Tx})
    tdtvm.install()
    with caplog.at_level(logging.INFO, logger="tiledispatch.tvm"):
        src = compile_cuda(func)
    assert tdtvm.stats() == {"dispatched": {}, "handed_back": {
        "no variant matched": {"tirx.tile.copy_async": 1}}}
    logs = [r.getMessage() for r in caplog.records if r.name == "tiledispatch.tvm"]
    assert "dst region shape ['64'] != src region shape ['8', '8']" in logs[0]
    assert "cp.async.bulk.tensor" in src


def _tma_reduce_gen():
    """tests/bridge/tma_reduce/gen.py as a module."""
    import importlib.util

    from conftest import ROOT

    path = ROOT / "tests" / "bridge" / "tma_reduce" / "gen.py"
    spec = importlib.util.spec_from_file_location("tma_reduce_gen", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_issue_kernel_tma_load_sum_tma_store(tmp_path):
    """The issue's kernel: a TMA load on an mbarrier, Tx.cta.sum over the
    shared tile, a TMA store of the row, every tile op dispatched by
    tiledispatch (strict, nothing handed back); TVM's CUDA has both TMA
    chains and takes both maps as parameters, the host encodes them;
    the committed GPU inputs (kernel.cu, params.h) are what gen.py makes
    now, and the GPU harness compiles with nvcc -arch=sm_90a."""
    import shutil
    import subprocess

    gen = _tma_reduce_gen()
    src, stats, maps, ex = gen.compile_through_bridge()
    assert stats == gen.EXPECTED_STATS
    assert tma_chains(src) == [
        "cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group",
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"]
    assert map_params(src) == ["A_tensormap", "B_tensormap"]
    assert [m["name"] for m in maps] == ["A_tensormap", "B_tensormap"]
    assert "runtime.cuTensorMapEncodeTiled" in ex.mod.inspect_source("ll")
    a, b = gen.data()
    assert gen.params_h(maps, a, b) == (gen.HERE / "params.h").read_text()
    assert src == (gen.HERE / "kernel.cu").read_text()
    if shutil.which("nvcc") is None:
        pytest.skip("no nvcc to compile the GPU harness")
    r = subprocess.run(["nvcc", "-arch=sm_90a", "-diag-suppress", "174,177", "-o",
                        str(tmp_path / "tma_reduce"), str(gen.HERE / "harness.cu")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_served_ops_has_copy_async():
    assert "copy_async" in tdtvm.served_ops()
