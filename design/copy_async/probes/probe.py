"""Probe TVM 0.27's copy_async dispatch: one TVMScript kernel per named case.

Each case is compiled with tvm.compile(tir_pipeline="tirx") for its arch.  Every
copy_async variant's impl is wrapped so the chosen variant and its PrimFunc
(impl.script()) are printed; on a dispatch failure TVM's failure table is
printed.  With CU=1 the kernel's CUDA source is printed too.

Usage: python probe.py [CASE ...]   (no argument: all cases)
"""

import os
import sys
import textwrap
import traceback

import tvm
import tvm.backend.cuda.tile_primitive  # noqa: F401
from tvm.tirx.operator.tile_primitive import dispatcher as D

CASES = {}


def case(name, arch="sm_90a"):
    def deco(src):
        CASES[name] = (arch, textwrap.dedent(src))
        return src

    return deco


HDR = """
import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import S, TileLayout, ComposeLayout
"""

# ---------------------------------------------------------------- TMA ----
case("tma_g2s_128x64")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (256, 64), "float16", layout=TileLayout(S[256, 64]))
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    A_smem = T.alloc_buffer((128, 64), "float16", scope="shared.dyn", layout=TileLayout(S[128, 64]))
    mbar = T.alloc_buffer((1,), "uint64", scope="shared")
    if tx == 0:
        Tx.copy_async(A_smem[:, :], A[0:128, :], dispatch="tma_auto", mbar=mbar.ptr_to([0]))
"""
)

case("tma_g2s_sw128")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (256, 64), "float16", layout=TileLayout(S[256, 64]))
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    A_smem = T.alloc_buffer((128, 64), "float16", scope="shared.dyn",
        layout=ComposeLayout(3, 3, 3, TileLayout(S[128, 64])))
    mbar = T.alloc_buffer((1,), "uint64", scope="shared")
    if tx == 0:
        Tx.copy_async(A_smem[:, :], A[128:256, :], mbar=mbar.ptr_to([0]), dispatch="tma_auto",
                      cache_hint="evict_last", prefetch_tensormap=True)
"""
)

case("tma_s2g_reduce")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (256, 64), "float32", layout=TileLayout(S[256, 64]))
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    A_smem = T.alloc_buffer((64, 64), "float32", scope="shared.dyn", layout=TileLayout(S[64, 64]))
    if tx == 0:
        Tx.copy_async(A[64:128, :], A_smem[:, :], use_tma_reduce="add")
"""
)

case("tma_s2g_plain")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (256, 64), "float16", layout=TileLayout(S[256, 64]))
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    A_smem = T.alloc_buffer((128, 64), "float16", scope="shared.dyn", layout=TileLayout(S[128, 64]))
    if tx == 0:
        Tx.copy_async(A[0:128, :], A_smem[:, :])
"""
)

case("tma_g2s_multicast")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (256, 64), "float16", layout=TileLayout(S[256, 64]))
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([128])
    A_smem = T.alloc_buffer((128, 64), "float16", scope="shared.dyn", layout=TileLayout(S[128, 64]))
    mbar = T.alloc_buffer((1,), "uint64", scope="shared")
    if tx == 0:
        Tx.copy_async(A_smem[:, :], A[0:128, :], mbar=mbar.ptr_to([0]), cta_mask=3, dispatch="tma_auto")
"""
)

case("tma_g2s_warp_scope")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (256, 64), "float16", layout=TileLayout(S[256, 64]))
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    A_smem = T.alloc_buffer((128, 64), "float16", scope="shared.dyn", layout=TileLayout(S[128, 64]))
    mbar = T.alloc_buffer((1,), "uint64", scope="shared")
    Tx.cta.copy_async(A_smem[:, :], A[0:128, :], mbar=mbar.ptr_to([0]))
"""
)

case("tma_g2s_no_mbar")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (256, 64), "float16", layout=TileLayout(S[256, 64]))
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    A_smem = T.alloc_buffer((128, 64), "float16", scope="shared.dyn", layout=TileLayout(S[128, 64]))
    if tx == 0:
        Tx.copy_async(A_smem[:, :], A[0:128, :], dispatch="tma_auto")
"""
)

case("tma_g2s_sm80", arch="sm_80")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (256, 64), "float16", layout=TileLayout(S[256, 64]))
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    A_smem = T.alloc_buffer((128, 64), "float16", scope="shared.dyn", layout=TileLayout(S[128, 64]))
    mbar = T.alloc_buffer((1,), "uint64", scope="shared")
    if tx == 0:
        Tx.copy_async(A_smem[:, :], A[0:128, :], mbar=mbar.ptr_to([0]), dispatch="tma_auto")
"""
)

case("tma_explicit_g2s")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (256, 64), "float16", layout=TileLayout(S[256, 64]))
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    A_smem = T.alloc_buffer((128, 64), "float16", scope="shared.dyn", layout=TileLayout(S[128, 64]))
    mbar = T.alloc_buffer((1,), "uint64", scope="shared")
    if tx == 0:
        Tx.copy_async(A_smem[:, :], A[0:128, :], dispatch="tma_explicit", mbar=mbar.ptr_to([0]), oob="nan")
"""
)

case("tma_bad_key")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (256, 64), "float16", layout=TileLayout(S[256, 64]))
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    A_smem = T.alloc_buffer((128, 64), "float16", scope="shared.dyn", layout=TileLayout(S[128, 64]))
    mbar = T.alloc_buffer((1,), "uint64", scope="shared")
    if tx == 0:
        Tx.copy_async(A_smem[:, :], A[0:128, :], mbar=mbar.ptr_to([0]), bogus=1, dispatch="tma_auto")
"""
)

case("tma_g2s_unforced_mbar")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (256, 64), "float16", layout=TileLayout(S[256, 64]))
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    A_smem = T.alloc_buffer((128, 64), "float16", scope="shared.dyn", layout=TileLayout(S[128, 64]))
    mbar = T.alloc_buffer((1,), "uint64", scope="shared")
    if tx == 0:
        Tx.copy_async(A_smem[:, :], A[0:128, :], mbar=mbar.ptr_to([0]))
"""
)

case("tma_g2s_unforced_keys")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (256, 64), "float16", layout=TileLayout(S[256, 64]))
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([128])
    A_smem = T.alloc_buffer((128, 64), "float16", scope="shared.dyn", layout=TileLayout(S[128, 64]))
    mbar = T.alloc_buffer((1,), "uint64", scope="shared")
    if tx == 0:
        Tx.copy_async(A_smem[:, :], A[0:128, :], mbar=mbar.ptr_to([0]), cta_mask=3,
                      cache_hint="evict_last", prefetch_tensormap=True)
"""
)

case("tma_g2s_sm100", arch="sm_100a")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (256, 64), "float16", layout=TileLayout(S[256, 64]))
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    A_smem = T.alloc_buffer((128, 64), "float16", scope="shared.dyn", layout=TileLayout(S[128, 64]))
    mbar = T.alloc_buffer((1,), "uint64", scope="shared")
    if tx == 0:
        Tx.copy_async(A_smem[:, :], A[0:128, :], mbar=mbar.ptr_to([0]), dispatch="tma_auto")
"""
)

case("tma_g2s_cta_group2_sm90")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (256, 64), "float16", layout=TileLayout(S[256, 64]))
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([128])
    A_smem = T.alloc_buffer((128, 64), "float16", scope="shared.dyn", layout=TileLayout(S[128, 64]))
    mbar = T.alloc_buffer((1,), "uint64", scope="shared")
    if tx == 0:
        Tx.copy_async(A_smem[:, :], A[0:128, :], mbar=mbar.ptr_to([0]), dispatch="tma_auto", cta_group=2)
"""
)

case("tma_s2g_with_mbar")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (256, 64), "float16", layout=TileLayout(S[256, 64]))
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    A_smem = T.alloc_buffer((128, 64), "float16", scope="shared.dyn", layout=TileLayout(S[128, 64]))
    mbar = T.alloc_buffer((1,), "uint64", scope="shared")
    if tx == 0:
        Tx.copy_async(A[0:128, :], A_smem[:, :], mbar=mbar.ptr_to([0]))
"""
)

case("tma_g2s_box_too_big")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (512, 512), "float16", layout=TileLayout(S[512, 512]))
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    A_smem = T.alloc_buffer((16, 512), "float16", scope="shared.dyn", layout=TileLayout(S[16, 512]))
    mbar = T.alloc_buffer((1,), "uint64", scope="shared")
    if tx == 0:
        Tx.copy_async(A_smem[:, :], A[0:16, :], mbar=mbar.ptr_to([0]), dispatch="tma_auto")
"""
)

case("tma_g2s_oob_region")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (100, 64), "float16", layout=TileLayout(S[100, 64]))
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    A_smem = T.alloc_buffer((128, 64), "float16", scope="shared.dyn", layout=TileLayout(S[128, 64]))
    mbar = T.alloc_buffer((1,), "uint64", scope="shared")
    if tx == 0:
        Tx.copy_async(A_smem[:, :], A[bx * 128:bx * 128 + 128, :], mbar=mbar.ptr_to([0]), dispatch="tma_auto")
"""
)

case("tma_g2s_pipelined")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (4096, 64), "float16", layout=TileLayout(S[4096, 64]))
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    A_smem = T.alloc_buffer((4, 128, 64), "float16", scope="shared.dyn",
        layout=ComposeLayout(3, 3, 3, TileLayout(S[4, 128, 64])))
    mbar = T.alloc_buffer((4,), "uint64", scope="shared")
    if tx == 0:
        for k in range(32):
            Tx.copy_async(A_smem[k % 4, :, :], A[k * 128:k * 128 + 128, :], mbar=mbar.ptr_to([k % 4]), dispatch="tma_auto")
"""
)

# ------------------------------------------------------------- ldgsts ----
case("ldgsts_cta_128x64")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (256, 64), "float16", layout=TileLayout(S[256, 64]))
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    A_smem = T.alloc_buffer((128, 64), "float16", scope="shared", layout=TileLayout(S[128, 64]))
    Tx.cta.copy_async(A_smem[:, :], A[0:128, :])
    T.ptx.cp.async_.commit_group()
    T.ptx.cp.async_.wait_group(0)
"""
)

case("ldgsts_thread_mbar")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (256, 64), "float16", layout=TileLayout(S[256, 64]))
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    A_smem = T.alloc_buffer((128, 64), "float16", scope="shared", layout=TileLayout(S[128, 64]))
    mbar = T.alloc_buffer((1,), "uint64", scope="shared")
    if tx == 0:
        Tx.copy_async(A_smem[:, :], A[0:128, :], mbar=mbar.ptr_to([0]))
"""
)

case("ldgsts_bad_key")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (256, 64), "float16", layout=TileLayout(S[256, 64]))
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    A_smem = T.alloc_buffer((128, 64), "float16", scope="shared", layout=TileLayout(S[128, 64]))
    Tx.cta.copy_async(A_smem[:, :], A[0:128, :], bogus=1)
"""
)

case("ldgsts_cta_96")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (256, 64), "float16", layout=TileLayout(S[256, 64]))
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([100])
    A_smem = T.alloc_buffer((128, 64), "float16", scope="shared", layout=TileLayout(S[128, 64]))
    Tx.cta.copy_async(A_smem[:, :], A[0:128, :])
"""
)

# -------------------------------------------------------------- dsmem ----
case("dsmem_2cta")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (2, 64, 64), "float16", layout=TileLayout(S[2, 64, 64]))
    T.device_entry()
    cbx = T.cta_id_in_cluster([2])
    bx = T.cta_id([2])
    tx = T.thread_id([128])
    S_src = T.alloc_buffer((64, 64), "float16", scope="shared.dyn", layout=TileLayout(S[64, 64]))
    S_dst = T.alloc_buffer((64, 64), "float16", scope="shared", layout=TileLayout(S[64, 64]))
    mbar = T.alloc_buffer((1,), "uint64", scope="shared")
    if tx == 0:
        Tx.copy_async(S_dst[:, :], S_src[:, :], mbar=mbar.ptr_to([0]), remote_cta_id=1 - cbx)
"""
)

case("dsmem_strided")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (2, 64, 64), "float16", layout=TileLayout(S[2, 64, 64]))
    T.device_entry()
    cbx = T.cta_id_in_cluster([2])
    bx = T.cta_id([2])
    tx = T.thread_id([128])
    S_src = T.alloc_buffer((64, 64), "float16", scope="shared.dyn", layout=TileLayout(S[64, 64]))
    S_dst = T.alloc_buffer((64, 64), "float16", scope="shared", layout=TileLayout(S[64, 64]))
    mbar = T.alloc_buffer((1,), "uint64", scope="shared")
    if tx == 0:
        Tx.copy_async(S_dst[0:64, 0:32], S_src[0:64, 32:64], mbar=mbar.ptr_to([0]), remote_cta_id=1 - cbx)
"""
)

case("dsmem_sm80", arch="sm_80")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (2, 64, 64), "float16", layout=TileLayout(S[2, 64, 64]))
    T.device_entry()
    cbx = T.cta_id_in_cluster([2])
    bx = T.cta_id([2])
    tx = T.thread_id([128])
    S_src = T.alloc_buffer((64, 64), "float16", scope="shared.dyn", layout=TileLayout(S[64, 64]))
    S_dst = T.alloc_buffer((64, 64), "float16", scope="shared", layout=TileLayout(S[64, 64]))
    mbar = T.alloc_buffer((1,), "uint64", scope="shared")
    if tx == 0:
        Tx.copy_async(S_dst[:, :], S_src[:, :], mbar=mbar.ptr_to([0]), remote_cta_id=1 - cbx)
"""
)

case("dsmem_no_cluster")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (2, 64, 64), "float16", layout=TileLayout(S[2, 64, 64]))
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([128])
    S_src = T.alloc_buffer((64, 64), "float16", scope="shared.dyn", layout=TileLayout(S[64, 64]))
    S_dst = T.alloc_buffer((64, 64), "float16", scope="shared", layout=TileLayout(S[64, 64]))
    mbar = T.alloc_buffer((1,), "uint64", scope="shared")
    if tx == 0:
        Tx.copy_async(S_dst[:, :], S_src[:, :], mbar=mbar.ptr_to([0]), remote_cta_id=5)
"""
)

case("dsmem_no_mbar")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (2, 64, 64), "float16", layout=TileLayout(S[2, 64, 64]))
    T.device_entry()
    cbx = T.cta_id_in_cluster([2])
    bx = T.cta_id([2])
    tx = T.thread_id([128])
    S_src = T.alloc_buffer((64, 64), "float16", scope="shared.dyn", layout=TileLayout(S[64, 64]))
    S_dst = T.alloc_buffer((64, 64), "float16", scope="shared", layout=TileLayout(S[64, 64]))
    if tx == 0:
        Tx.copy_async(S_dst[:, :], S_src[:, :], remote_cta_id=1 - cbx)
"""
)

case("dsmem_small_chunk")(
    """
@T.prim_func
def f(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (2, 64, 64), "float16", layout=TileLayout(S[2, 64, 64]))
    T.device_entry()
    cbx = T.cta_id_in_cluster([2])
    bx = T.cta_id([2])
    tx = T.thread_id([128])
    S_src = T.alloc_buffer((64, 64), "float16", scope="shared.dyn", layout=TileLayout(S[64, 64]))
    S_dst = T.alloc_buffer((64, 64), "float16", scope="shared", layout=TileLayout(S[64, 64]))
    mbar = T.alloc_buffer((1,), "uint64", scope="shared")
    if tx == 0:
        Tx.copy_async(S_dst[0:64, 0:4], S_src[0:64, 0:4], mbar=mbar.ptr_to([0]), remote_cta_id=1 - cbx)
"""
)


LOG = []


def wrap_variants(log=LOG):
    for key, cases in D._DISPATCH_TABLE.items():
        if key[0].name != "tirx.tile.copy_async" and "copy_async" not in str(key[0]):
            continue
        for c in cases:
            if getattr(c, "_probe_wrapped", False):
                continue
            inner = c.impl

            def w(op, sctx, _inner=inner, _name=c.variant):
                r = _inner(op, sctx)
                log.append((_name, r))
                return r

            c.impl = w
            c._probe_wrapped = True


def table():
    for key, cases in D._DISPATCH_TABLE.items():
        if "copy_async" in str(key[0]):
            print("registered", key[1], [(c.variant, c.priority, [p.name for p in c.preds]) for c in cases])


def run(name):
    arch, src = CASES[name]
    LOG.clear()
    log = LOG
    wrap_variants()
    print(f"=== {name} (arch {arch})")
    ns = {}
    try:
        import importlib.util
        import tempfile

        fn = os.path.join(tempfile.mkdtemp(), f"k_{name}.py")
        with open(fn, "w") as fh:
            fh.write(HDR + src)
        spec = importlib.util.spec_from_file_location(f"k_{name}", fn)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        ns = vars(mod)
        target = tvm.target.Target({"kind": "cuda", "arch": arch})
        with target:
            ex = tvm.compile(tvm.IRModule({"main": ns["f"]}), target=target, tir_pipeline="tirx")
        for v, r in log:
            print(f"--- chosen: {v}")
            print(r.script())
        if os.environ.get("CU"):
            print("--- CUDA")
            print(ex.mod.imports[0].inspect_source())
        else:
            cu = ex.mod.imports[0].inspect_source()
            print("--- CUDA lines with asm/tensormap/kernel signature")
            for line in cu.splitlines():
                if any(k in line for k in ("asm", "CUtensorMap", "__global__", "tensormap", "mbarrier", "__cluster_dims__")):
                    print(line.rstrip())
    except Exception as e:  # noqa: BLE001
        for v, r in log:
            print(f"--- chosen: {v}")
            print(r.script())
        print("--- ERROR", type(e).__name__)
        print(str(e)[:6000])


if __name__ == "__main__":
    if "--table" in sys.argv:
        table()
        sys.exit(0)
    for n in sys.argv[1:] or list(CASES):
        run(n)
