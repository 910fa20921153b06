"""The TVM half of issue 24's bench: pipelined [128,64] float16 tile loads.

Two TIRx kernels, each CTA streaming T tiles of A[rows, 64] (float16) through
STAGES shared-memory stages and folding every tile into a per-thread checksum
(so the loads are not dead), one written per thread to Out:
  tma    - Tx.copy_async(dispatch="tma_auto") by thread 0 on an mbarrier per stage,
           expect_tx by the same thread, everyone waits on the stage's phase;
  ldgsts - Tx.cta.copy_async(dispatch="ldgsts") + commit_group, wait_group(STAGES-1).
The script compiles both with tvm.compile for sm_90a and prints the CUDA
(CU=1) or the asm lines; with RUN=1 on a GPU it also times them.
Usage: python probe_bench.py [tma|ldgsts]
"""

import os
import sys

import numpy as np
import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import ComposeLayout, S, TileLayout

STAGES = 4
TILES = 16          # tiles per CTA
CTAS = 132 * 2
ROWS = CTAS * TILES * 128
NT = 128
TILE_BYTES = 128 * 64 * 2


def tma_kernel():
    # fmt: off
    @T.prim_func
    def f(A_ptr: T.handle, Out_ptr: T.handle):
        A = T.match_buffer(A_ptr, (ROWS, 64), "float16", layout=TileLayout(S[ROWS, 64]))
        Out = T.match_buffer(Out_ptr, (CTAS * NT,), "float32")
        T.device_entry()
        bx = T.cta_id([CTAS])
        tx = T.thread_id([NT])
        # align=1024: the tensor map swizzles 128B, whose pattern the hardware
        # takes from address bits, so the stages must start 1024-byte aligned.
        # Without it TVM declares the dynamic array __align__(64) and ptxas
        # places it right after the static mbarriers (offset 0x40): the
        # cp.async.bulk.tensor faults with a misaligned address.
        A_smem = T.alloc_buffer((STAGES, 128, 64), "float16", scope="shared.dyn", align=1024,
                                layout=ComposeLayout(3, 3, 3, TileLayout(S[STAGES, 128, 64])))
        mbar = T.alloc_buffer((STAGES,), "uint64", scope="shared")
        acc = T.alloc_local((1,), "float32")
        acc[0] = T.float32(0)
        if tx == 0:
            for s in range(STAGES):
                T.ptx.mbarrier.init.shared.b64(mbar.ptr_to([s]), T.uint32(1))
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if tx == 0:
            for s in range(STAGES):
                T.ptx.mbarrier.arrive.expect_tx.shared.b64(mbar.ptr_to([s]), T.uint32(TILE_BYTES))
                Tx.copy_async(A_smem[s, :, :], A[(bx * TILES + s) * 128:(bx * TILES + s) * 128 + 128, :],
                              dispatch="tma_auto", mbar=mbar.ptr_to([s]))
        for k in range(TILES):
            T.cuda.mbarrier_wait(mbar.ptr_to([k % STAGES]), (k // STAGES) % 2)
            for j in range(64):
                acc[0] = acc[0] + T.cast(A_smem[k % STAGES, tx, j], "float32")
            T.cuda.cta_sync()
            if tx == 0:
                if k + STAGES < TILES:
                    T.ptx.mbarrier.arrive.expect_tx.shared.b64(mbar.ptr_to([k % STAGES]), T.uint32(TILE_BYTES))
                    Tx.copy_async(A_smem[k % STAGES, :, :],
                                  A[(bx * TILES + k + STAGES) * 128:(bx * TILES + k + STAGES) * 128 + 128, :],
                                  dispatch="tma_auto", mbar=mbar.ptr_to([k % STAGES]))
        Out[bx * NT + tx] = acc[0]
    # fmt: on
    return f


def ldgsts_kernel():
    # fmt: off
    @T.prim_func
    def f(A_ptr: T.handle, Out_ptr: T.handle):
        A = T.match_buffer(A_ptr, (ROWS, 64), "float16", layout=TileLayout(S[ROWS, 64]))
        Out = T.match_buffer(Out_ptr, (CTAS * NT,), "float32")
        T.device_entry()
        bx = T.cta_id([CTAS])
        tx = T.thread_id([NT])
        A_smem = T.alloc_buffer((STAGES, 128, 64), "float16", scope="shared.dyn",
                                layout=TileLayout(S[STAGES, 128, 64]))
        acc = T.alloc_local((1,), "float32")
        acc[0] = T.float32(0)
        for s in range(STAGES - 1):
            Tx.cta.copy_async(A_smem[s, :, :], A[(bx * TILES + s) * 128:(bx * TILES + s) * 128 + 128, :],
                              dispatch="ldgsts")
            T.ptx.cp.async_.commit_group()
        for k in range(TILES):
            if k + STAGES - 1 < TILES:
                Tx.cta.copy_async(A_smem[(k + STAGES - 1) % STAGES, :, :],
                                  A[(bx * TILES + k + STAGES - 1) * 128:(bx * TILES + k + STAGES - 1) * 128 + 128, :],
                                  dispatch="ldgsts")
            T.ptx.cp.async_.commit_group()
            T.ptx.cp.async_.wait_group(STAGES - 1)
            T.cuda.cta_sync()
            for j in range(64):
                acc[0] = acc[0] + T.cast(A_smem[k % STAGES, tx, j], "float32")
            T.cuda.cta_sync()
        Out[bx * NT + tx] = acc[0]
    # fmt: on
    return f


def main():
    which = sys.argv[1:] or ["tma", "ldgsts"]
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
    for name in which:
        f = {"tma": tma_kernel, "ldgsts": ldgsts_kernel}[name]()
        print(f"=== {name}")
        try:
            with target:
                ex = tvm.compile(tvm.IRModule({"main": f}), target=target, tir_pipeline="tirx")
        except Exception as e:  # noqa: BLE001
            print("--- ERROR", type(e).__name__, str(e)[:3000])
            continue
        cu = ex.mod.imports[0].inspect_source()
        if os.environ.get("CU"):
            print(cu)
        else:
            for line in cu.splitlines():
                if "asm" in line or "__global__" in line or "mbarrier" in line:
                    print(line.rstrip()[:300])
        if os.environ.get("RUN"):
            dev = tvm.cuda(0)
            a = tvm.runtime.tensor(np.random.rand(ROWS, 64).astype("float16"), dev)
            out = tvm.runtime.tensor(np.zeros(CTAS * NT, "float32"), dev)
            timer = ex.time_evaluator(ex.entry_name, dev, number=50, repeat=5)
            t = timer(a, out).mean
            print(f"--- {name}: {t * 1e6:.2f} us, {ROWS * 64 * 2 / t / 1e9:.1f} GB/s")


if __name__ == "__main__":
    main()
