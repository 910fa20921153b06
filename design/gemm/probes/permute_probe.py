"""Probes of TVM 0.27's `permute_layout` (warp_xor_swizzle): compiles the
upstream test programs (and a few derived ones) with tvm.compile and prints
the emitted TIR / CUDA or the failure text.  Usage: python permute_probe.py [NAME..]"""
import sys
import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import S, TileLayout, ComposeLayout

def glob_kernel(shape, dtype, pre, post, scope="warp", dst_dtype=None, dst_shape=None):
    op = {"warp": Tx.warp.permute_layout, "cta": Tx.cta.permute_layout}[scope]
    dst_dtype = dst_dtype or dtype; dst_shape = dst_shape or shape
    @T.prim_func
    def f(A: T.handle, B: T.handle):
        A_buf = T.match_buffer(A, shape, dtype, layout=pre)
        B_buf = T.match_buffer(B, dst_shape, dst_dtype, layout=post)
        T.device_entry()
        T.cta_id([1])
        T.thread_id([32])
        op(B_buf, A_buf)
    return f

def sf_kernel(pipe, blk, dtype):
    high = blk // 128
    shape = (pipe, high, 4, 32)
    pre = TileLayout(S[shape:(blk, 128, 32, 1)]); post = TileLayout(S[shape:(blk, 128, 1, 4)])
    @T.prim_func
    def f(A: T.handle, B: T.handle):
        A_buf = T.match_buffer(A, shape, dtype, layout=pre)
        B_buf = T.match_buffer(B, shape, dtype, layout=post)
        T.device_entry()
        T.cta_id([1])
        T.thread_id([32])
        for s in T.serial(0, pipe):
            Tx.warp.permute_layout(B_buf[s, 0:high, 0:4, 0:32], A_buf[s, 0:high, 0:4, 0:32])
    return f

def smem_kernel(dtype):
    shape = (4, 32)
    pre = TileLayout(S[shape:(32, 1)]); post = TileLayout(S[shape:(1, 4)])
    @T.prim_func
    def f(A: T.handle, B: T.handle):
        A_buf = T.match_buffer(A, shape, dtype, layout=pre)
        B_buf = T.match_buffer(B, shape, dtype, layout=post)
        T.device_entry()
        T.cta_id([1])
        tid = T.thread_id([32])
        sA = T.alloc_buffer(shape, dtype, scope="shared", layout=pre)
        sB = T.alloc_buffer(shape, dtype, scope="shared", layout=post)
        Tx.cta.copy(sA[:, :], A_buf[:, :])
        T.cuda.cta_sync()
        Tx.warp.permute_layout(sB[:, :], sA[:, :])
        T.cuda.cta_sync()
        Tx.cta.copy(B_buf[:, :], sB[:, :])
    return f

def swz():
    inner = TileLayout(S[(4, 32):(32, 1)])
    sw = ComposeLayout(2, 2, 4, TileLayout(S[(256,)]))
    return ComposeLayout(sw.per_element, sw.swizzle_len, sw.atom_len, inner, sw.swizzle_inner)

L = lambda sh, st: TileLayout(S[sh:st])
CASES = {
    "sf_128_u32": lambda: sf_kernel(2, 128, "uint32"),
    "sf_256_u32": lambda: sf_kernel(2, 256, "uint32"),
    "sf_128_f32": lambda: sf_kernel(2, 128, "float32"),
    "identity": lambda: glob_kernel((4, 32), "uint32", L((4, 32), (32, 1)), L((4, 32), (32, 1))),
    "generic_8x32": lambda: glob_kernel((8, 32), "uint32", L((8, 32), (32, 1)), L((8, 32), (1, 8))),
    "generic_16x32_f32": lambda: glob_kernel((16, 32), "float32", L((16, 32), (32, 1)), L((16, 32), (1, 16))),
    "smem_u32": lambda: smem_kernel("uint32"),
    "smem_f32": lambda: smem_kernel("float32"),
    "rej_dtype": lambda: glob_kernel((4, 32), "uint32", L((4, 32), (32, 1)), L((4, 32), (32, 1)), dst_dtype="uint16"),
    "rej_shape": lambda: glob_kernel((4, 32), "uint32", L((4, 32), (32, 1)), L((8, 16), (16, 1)), dst_shape=(8, 16)),
    "rej_swizzle": lambda: glob_kernel((4, 32), "uint32", swz(), L((4, 32), (1, 4))),
    "rej_cta_scope": lambda: glob_kernel((4, 32), "uint32", L((4, 32), (32, 1)), L((4, 32), (1, 4)), scope="cta"),
    "rej_f16_bank": lambda: glob_kernel((4, 32), "float16", L((4, 32), (32, 1)), L((4, 32), (1, 4))),
    "rej_alias": lambda: glob_kernel((4, 32), "uint32", L((4, 32), (0, 1)), L((4, 32), (1, 4))),
    "rej_volume": lambda: glob_kernel((3, 32), "uint32", L((3, 32), (32, 1)), L((3, 32), (1, 3))),
    "rej_P64": lambda: glob_kernel((64, 32), "uint32", L((64, 32), (32, 1)), L((64, 32), (1, 64))),
}

def go(name):
    print(f"===== {name}")
    f = CASES[name]()
    tgt = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
    try:
        with tgt:
            low = tvm.tirx.transform.LowerTIRx()(tvm.IRModule({"main": f}))
        print("LowerTIRx OK:"); print(low["main"].script())
    except Exception as e:
        print("LowerTIRx FAILED:", type(e).__name__, str(e)[-2500:]); return
    try:
        with tgt:
            m = tvm.compile(tvm.IRModule({"main": f}), target=tgt, tir_pipeline="tirx")
        print("tvm.compile OK"); print(m.mod.imports[0].inspect_source())
    except Exception as e:
        print("tvm.compile FAILED:", type(e).__name__, str(e)[-1500:])

if __name__ == "__main__":
  for n in sys.argv[1:] or list(CASES):
    go(n)
