"""A softmax over the rows of a tile, written in TVM's TIRx and compiled
with tiledispatch's bridge: every tile op (staging the tile into shared
memory, row max, subtract, exp, row sum, divide, writing it back) is
dispatched by tiledispatch, and the generated CUDA is printed.  Each CTA
takes a 16 x 128 float32 tile of a 32768 x 128 matrix: it stages it with
`Tx.cta.copy` (global -> shared, 16-byte vector accesses), reduces it and
writes it back with `Tx.cta.copy` (shared -> global).  The same kernel
through plain TVM 0.27 is compiled beside it for comparison (TVM's own
reductions fail there), and a third build in which tiledispatch takes the
two reductions only and TVM lowers the copies and the elementwise ops
(`install(ops=["max", "sum"])`): the closest plain TVM comes.

    python examples/tvm_softmax.py                 # print the CUDA, both ways
    python examples/tvm_softmax.py --export DIR    # also write what a GPU runs

Needs apache-tvm 0.27.0.post1 and the tiledispatch package (docs/python.md
says how to install both); no GPU: tvm.compile writes the CUDA source
without one.  `--export DIR` writes each way's compiled library
(`td.so`, `hybrid.so`, `tvm.so` where TVM builds it) for
tests/upstream/tvm_tests/gpu_run.py, which runs them on a GPU against
numpy and times them.

A CTA's tile of X and Y is a buffer view at the CTA's offset
(`T.decl_buffer(..., data=X.data, elem_offset=...)`): the bridge takes
regions with constant bounds, so `Tx.cta.copy(A, Xt)` copies the whole
view rather than `X[bx * 16:bx * 16 + 16, 0:128]`.  TVM's copies and
tile ops emit no barrier: the kernel synchronises between them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx   # the tile primitives: Tx.cta.max, Tx.cta.exp, ...

import tiledispatch.tvm as tdtvm

ROWS, COLS, THREADS = 16, 128, 128   # a CTA's tile: 16 rows of 128 float32
BLOCKS = 2048                        # CTAs: 32768 rows in all


@T.prim_func
def softmax(X_ptr: T.handle, Y_ptr: T.handle):
    X = T.match_buffer(X_ptr, [BLOCKS * ROWS, COLS], "float32")
    Y = T.match_buffer(Y_ptr, [BLOCKS * ROWS, COLS], "float32")
    T.device_entry()
    bx = T.cta_id([BLOCKS])
    T.warp_id([THREADS // 32])
    T.lane_id([32])
    T.thread_id([THREADS])
    # This CTA's rows of X and Y, as buffers of their own.
    Xt = T.decl_buffer([ROWS, COLS], "float32", data=X.data, elem_offset=bx * ROWS * COLS)
    Yt = T.decl_buffer([ROWS, COLS], "float32", data=Y.data, elem_offset=bx * ROWS * COLS)
    A = T.alloc_buffer([ROWS, COLS], "float32", scope="shared")
    rmax = T.alloc_buffer([ROWS, 1], "float32", scope="shared")
    rsum = T.alloc_buffer([ROWS, 1], "float32", scope="shared")
    Tx.cta.copy(A, Xt)                  # stage the tile: global -> shared
    T.cuda.cta_sync()
    Tx.cta.max(rmax, A, axes=[-1])      # the row max, kept as a column
    T.cuda.cta_sync()
    Tx.cta.sub(A, A, rmax)              # rmax broadcast along each row
    T.cuda.cta_sync()
    Tx.cta.exp(A, A)
    T.cuda.cta_sync()
    Tx.cta.sum(rsum, A, axes=[-1])      # the row sum
    T.cuda.cta_sync()
    Tx.cta.fdiv(A, A, rsum)
    T.cuda.cta_sync()
    Tx.cta.copy(Yt, A)                  # write it back: shared -> global


def build(func):
    """The compiled module for sm_90a (the H200), and its CUDA source."""
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
    with target:
        ex = tvm.compile(tvm.IRModule({"main": func}), target=target, tir_pipeline="tirx")
    return ex, ex.mod.imports[0].inspect_source()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--export", type=Path, help="write the compiled libraries here")
    ap.add_argument("--quiet", action="store_true", help="print no CUDA source")
    args = ap.parse_args()

    tdtvm.install(strict=True)      # every tile op through tiledispatch, or an error
    tdtvm.reset_stats()
    try:
        td_ex, td_cuda = build(softmax)
        stats = tdtvm.stats()
    finally:
        tdtvm.uninstall()
    # strict=True raised on any hand-back; every tile op of the kernel went
    # through tiledispatch, the two copies included.
    assert stats["handed_back"] == {}, stats
    assert set(stats["dispatched"]) == {"copy", "max", "sub", "exp", "sum", "fdiv"}, stats
    assert sum(stats["dispatched"]["copy"].values()) == 2, stats
    if not args.quiet:
        print("// ---- CUDA, every tile op dispatched by tiledispatch ----")
        print(td_cuda)
    print("tiledispatch chose:", stats["dispatched"])
    print("handed back to TVM:", stats["handed_back"])

    # The same kernel through TVM's own dispatcher.
    try:
        tvm_ex, tvm_cuda = build(softmax)
        tvm_error = None
    except Exception as e:  # TVM's errors vary by pass
        tvm_ex, tvm_cuda = None, None
        lines = str(e).strip().splitlines()
        why = next((ln.strip(" |") for ln in lines if "ValueError:" in ln), lines[-1])
        tvm_error = f"{lines[0].strip()}: {why}"
    if tvm_error:
        print("plain TVM 0.27 refuses the kernel:", tvm_error)
    else:
        print(f"plain TVM 0.27 compiles it too ({len(tvm_cuda.splitlines())} lines of CUDA;"
              f" tiledispatch's: {len(td_cuda.splitlines())})")

    # tiledispatch's reductions, TVM's elementwise ops.
    tdtvm.install(ops=["max", "sum"], strict=True)
    tdtvm.reset_stats()
    try:
        hybrid_ex, hybrid_cuda = build(softmax)
        hybrid_stats = tdtvm.stats()
    finally:
        tdtvm.uninstall()
    print("tiledispatch takes max and sum only:", hybrid_stats["dispatched"],
          "handed back:", hybrid_stats["handed_back"])

    if args.export:
        args.export.mkdir(parents=True, exist_ok=True)
        td_ex.export_library(str(args.export / "td.so"))
        (args.export / "td.cu").write_text(td_cuda)
        hybrid_ex.export_library(str(args.export / "hybrid.so"))
        (args.export / "hybrid.cu").write_text(hybrid_cuda)
        if tvm_ex is not None:
            tvm_ex.export_library(str(args.export / "tvm.so"))
            (args.export / "tvm.cu").write_text(tvm_cuda)
        (args.export / "softmax.json").write_text(json.dumps({
            "rows": BLOCKS * ROWS, "cols": COLS, "dtype": "float32",
            "tiledispatch": stats["dispatched"], "tvm_error": tvm_error}, indent=1) + "\n")
        print("wrote", ", ".join(sorted(p.name for p in args.export.iterdir())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
