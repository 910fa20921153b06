"""Compile upstream test_ldgsts.py's 18 cta-scope kernels with the wheel (sm_90a).

Each kernel is the test's: A[region] -> A_smem by Tx.cta.copy_async(dispatch="ldgsts")
with commit/wait/cta_sync, then Tx.cta.copy back to B.  Prints per (task, dtype)
the cp.async chains in the CUDA, a count of the cp.async helper calls, and
the trip count of the ldgsts body's round loop `f` (= 16-byte copies per thread).
Usage: python probe_ldgsts.py
"""

import importlib.util
import os
import re
import tempfile

import tvm

TASKS = [
    # g_shape, s_shape, g_st, g_extent, threads
    ((128, 32), (128, 32), (0, 0), (128, 32), 32),
    ((64, 64), (32, 32), (32, 0), (32, 32), 32),
    ((4, 32, 32), (32, 32), (0, 0, 0), (1, 32, 32), 32),
]
DTYPES = ["int8", "float8_e4m3fn", "float8_e5m2", "float16", "bfloat16", "float32"]

SRC = '''
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import S, TileLayout

@T.prim_func
def f(A_ptr: T.handle, B_ptr: T.handle) -> None:
    A = T.match_buffer(A_ptr, {g_shape}, "{dtype}", layout=TileLayout(S[{g_shape}]))
    B = T.match_buffer(B_ptr, {g_shape}, "{dtype}", layout=TileLayout(S[{g_shape}]))
    T.device_entry()
    cta_id = T.cta_id([1])
    tid = T.thread_id([{threads}])
    A_smem = T.alloc_buffer({s_shape}, "{dtype}", scope="shared", layout=TileLayout(S[{s_shape}]))
    Tx.cta.copy_async(A_smem[{r_smem}], A[{r_gmem}], dispatch="ldgsts")
    T.ptx.cp.async_.commit_group()
    T.ptx.cp.async_.wait_group(0)
    T.cuda.cta_sync()
    Tx.cta.copy(B[{r_gmem}], A_smem[{r_smem}])
'''

for t, (g_shape, s_shape, g_st, g_ext, threads) in enumerate(TASKS):
    for dtype in DTYPES:
        r_smem = ", ".join(f"0:{e}" for e in s_shape)
        r_gmem = ", ".join(f"{a}:{a + e}" for a, e in zip(g_st, g_ext))
        src = SRC.format(g_shape=g_shape, s_shape=s_shape, dtype=dtype, threads=threads,
                         r_smem=r_smem, r_gmem=r_gmem)
        fn = os.path.join(tempfile.mkdtemp(), f"k{t}_{dtype}.py")
        with open(fn, "w") as fh:
            fh.write(src)
        spec = importlib.util.spec_from_file_location(f"k{t}_{dtype}", fn)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
        try:
            with target:
                ex = tvm.compile(tvm.IRModule({"main": mod.f}), target=target, tir_pipeline="tirx")
            cu = ex.mod.imports[0].inspect_source()
            chains = sorted(set(re.findall(r'"(cp\.async\.c[ag]\.shared\.global[^ ]*) \[%0\], \[%1\], (\d+)', cu)))
            calls = len(re.findall(r"tvm_builtin_ptx_cp_async_c[ag]\w*\(", cu)) - len(chains)
            unroll = re.findall(r"for \(int f = 0; f < (\d+); \+\+f\)", cu)
            print(f"task{t} {dtype}: {chains} call sites {calls} loop {unroll or '-'}")
        except Exception as e:  # noqa: BLE001
            print(f"task{t} {dtype}: ERROR {type(e).__name__}: {str(e)[:300]}")
