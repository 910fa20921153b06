"""Probes of TVM 0.27's `gemm` (mma.m16n8k*) dispatch: lowers one-warp kernels
through LowerTIRx (and tvm.compile for CUDA source) and prints the chosen
lowering or the dispatcher's failure text.  Usage: python gemm_probe.py [NAME..]"""
import sys, traceback
import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import S, TileLayout, laneid

D_FRAG = TileLayout(S[(2, 8, 4, 2) : (2, 4 @ laneid, 1 @ laneid, 1)])
A_FRAG_K8 = TileLayout(S[(2, 8, 4, 2) : (2, 4 @ laneid, 1 @ laneid, 1)])
B_FRAG_K8 = TileLayout(S[(4, 2, 8) : (1 @ laneid, 1, 4 @ laneid)])
A_FRAG = A_FRAG_K8.tile_to([16, 16], [16, 8])
B_FRAG = B_FRAG_K8.tile_to([16, 8], [8, 8])

def tposed(layout, shape):
    g, seps = layout.group(shape)
    return g.permute_by_groups(seps, [1, 0])

def frag(Mt, Nt, Kt, kinst):
    Ab = A_FRAG if kinst == 16 else A_FRAG_K8
    Bb = B_FRAG if kinst == 16 else B_FRAG_K8
    return (D_FRAG.tile_to([16 * Mt, 8 * Nt], [16, 8]),
            Ab.tile_to([16 * Mt, kinst * Kt], [16, kinst]),
            Bb.tile_to([kinst * Kt, 8 * Nt], [kinst, 8]))

def kern(Mt=1, Nt=1, Kt=1, kinst=16, a="float16", b=None, c="float32", d=None,
         alpha=1.0, beta=0.0, tA=False, tB=False, scope="warp", Dl=None, Al=None, Bl=None,
         Cl=None, threads=32, guard=None, store=False):
    b = b or a; d = d or c
    Dl0, Al0, Bl0 = frag(Mt, Nt, Kt, kinst)
    Dl = Dl or Dl0; Cl = Cl or Dl; Al = Al or Al0; Bl = Bl or Bl0
    M, N, K = 16 * Mt, 8 * Nt, kinst * Kt
    if tA: Al = tposed(Al, [M, K])
    if tB: Bl = tposed(Bl, [K, N])
    Ash = (K, M) if tA else (M, K)
    Bsh = (N, K) if tB else (K, N)
    op = {"warp": Tx.warp.gemm, "thread": Tx.thread.gemm, "cta": Tx.cta.gemm}[scope]
    if not store:
        @T.prim_func
        def f():
            T.device_entry()
            _cta = T.cta_id([1])
            _warp = T.warp_id([threads // 32])
            _lane = T.lane_id([32])
            A = T.alloc_buffer(Ash, a, scope="local", layout=Al)
            B = T.alloc_buffer(Bsh, b, scope="local", layout=Bl)
            C = T.alloc_buffer((M, N), c, scope="local", layout=Cl)
            D = T.alloc_buffer((M, N), d, scope="local", layout=Dl)
            if guard is None:
                op(D, A, B, C, transpose_A=tA, transpose_B=tB, alpha=alpha, beta=beta)
            else:
                if _lane < guard:
                    op(D, A, B, C, transpose_A=tA, transpose_B=tB, alpha=alpha, beta=beta)
        return f
    @T.prim_func
    def f(D_ptr: T.handle):
        D_g = T.match_buffer(D_ptr, (M, N), "float32")
        T.device_entry()
        _cta = T.cta_id([1])
        _warp = T.warp_id([1])
        lane = T.lane_id([32])
        A = T.alloc_buffer(Ash, a, scope="local", layout=Al)
        B = T.alloc_buffer(Bsh, b, scope="local", layout=Bl)
        C = T.alloc_buffer((M, N), c, scope="local", layout=Cl)
        D = T.alloc_buffer((M, N), d, scope="local", layout=Dl)
        Tx.warp.gemm(D, A, B, C, transpose_A=tA, transpose_B=tB, alpha=alpha, beta=beta)
        D_reg = D.local(Mt * Nt * 4)
        for cc in T.unroll(Mt * Nt * 4):
            D_g[(cc // (4 * Nt)) * 16 + lane // 4 + ((cc // 2) % 2) * 8,
                ((cc // 4) % Nt) * 8 + (lane % 4) * 2 + cc % 2] = D_reg[cc]
    return f

CASES = {
    "k16_f16": dict(),
    "k16_bf16_beta1": dict(a="bfloat16", beta=1.0),
    "k8_f16": dict(kinst=8),
    "k8_K24_tiled": dict(Mt=2, Nt=2, Kt=3, kinst=8),
    "tiled_2x2x2": dict(Mt=2, Nt=2, Kt=2),
    "tA": dict(tA=True), "tB": dict(tB=True), "tAtB": dict(tA=True, tB=True),
    "tAtB_2x2x2": dict(Mt=2, Nt=2, Kt=2, tA=True, tB=True),
    "alpha2": dict(alpha=2.0), "beta_half": dict(beta=0.5),
    "dt_f16acc": dict(a="float16", c="float16"),
    "dt_mixed": dict(a="bfloat16", b="float16"),
    "dt_tf32": dict(a="float32"), "dt_int8": dict(a="int8", c="int32"),
    "dt_e4m3": dict(a="float8_e4m3fn"),
    "dt_C_f16_D_f32": dict(c="float16", d="float32"),
    "M8": dict(Dl=TileLayout(S[(8, 4, 2) : (4 @ laneid, 1 @ laneid, 1)])),
    "guard_lane16": dict(guard=16),
    "thread_scope": dict(scope="thread"),
    "cta_scope_4warps": dict(scope="cta", threads=128),
    "swapped_B": dict(Bl=B_FRAG.tile_to([16, 8], [16, 8]) if False else TileLayout(S[(4, 2, 2, 8) : (1 @ laneid, 1, 2, 4 @ laneid)])),
    "row_major_local_A": dict(Al=TileLayout(S[(16, 16) : (16, 1)])),
    "k16_f16_sm70": dict(arch="sm_70"),
    "k16_f16_sm75": dict(arch="sm_75"),
    "k8_bf16_sm75": dict(kinst=8, a="bfloat16", arch="sm_75"),
}

def lower(f, arch="sm_80"):
    tgt = tvm.target.Target({"kind": "cuda", "arch": arch})
    with tgt:
        return tvm.tirx.transform.LowerTIRx()(tvm.IRModule({"main": f}))

def compile_src(f, arch="sm_80"):
    tgt = tvm.target.Target({"kind": "cuda", "arch": arch})
    with tgt:
        m = tvm.compile(tvm.IRModule({"main": f}), target=tgt, tir_pipeline="tirx")
    return m.mod.imports[0].inspect_source()

def run(name, kw, show=True):
    print(f"===== {name}: {kw}")
    try:
        out = lower(kern(**kw))["main"].script()
        lines = [l for l in out.splitlines() if "ptx" in l or "local[" in l or "words" in l]
        print("LOWERED; ptx lines:")
        for l in out.splitlines():
            if "T.ptx" in l: print("   ", l.strip()[:300])
        if show: print(out)
    except Exception as e:
        msg = str(e)
        print("FAILED:", type(e).__name__, msg[-3000:])

if __name__ == "__main__":
    names = sys.argv[1:] or list(CASES)
    for n in names:
        if n.startswith("src:"):
            n = n[4:]; kw = dict(CASES[n]); arch = kw.pop("arch", "sm_80")
            print(f"===== CUDA source for {n} ({arch})")
            try:
                print(compile_src(kern(store=True, **kw), arch))
            except Exception as e:
                print("FAILED:", type(e).__name__, str(e)[-3000:])
            continue
        kw = dict(CASES[n]); kw.pop("arch", None)
        run(n, kw, show=(n in ("k16_f16", "k16_bf16_beta1")))
