"""The issue's TMA kernel for the GPU, compiled through the TVM bridge.

A TIRx kernel loads a [128, 64] float32 tile of A into shared memory by TMA
(thread 0, an mbarrier with expect_tx, every thread waits on it), sums it
over rows (Tx.cta.sum, axes=[0]) into a shared [1, 64] row, and stores the
row to B by TMA (fence.proxy.async, commit_group, wait_group.read).  With
tiledispatch.tvm installed (strict) tvm.compile takes every tile op through
tiledispatch: both copies by tma_auto, the sum by shared_rows.

TVM's wheel cannot travel to the GPU machine, so this script (run where
apache-tvm 0.27 is installed) writes what the GPU run needs next to itself:

  kernel.cu   the CUDA source tvm.compile generated (TVM's own text);
  params.h    the tensor maps the bridge handed TVM's host side (the very
              arguments of each T.tensormap_encode_tiled), the kernel's
              dynamic shared memory, the input A and numpy's expected B;

and harness.cu (written by hand) encodes the maps with the driver's
cuTensorMapEncodeTiled, launches the kernel as TVM's host code would and
compares B with the expected row.  run.sh builds and runs it.

    PY=/work/main/build-python/venv/bin/python
    $PY tests/bridge/tma_reduce/gen.py            # rewrite kernel.cu, params.h
    $PY tests/bridge/tma_reduce/gen.py --check    # exit 1 when they are stale

The input holds multiples of 1/8 in [-8, 8): every partial sum is exact in
float32, so the expected row is exact whatever order the threads add in.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROWS, COLS, THREADS = 128, 64, 128
SMEM_BYTES = ROWS * COLS * 4          # the kernel's one dynamic shared buffer
SEED = 24


def kernel():
    """The TIRx kernel (TVMScript needs it in a file on disk)."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.layout import S, TileLayout

    @T.prim_func
    def tma_reduce(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (ROWS, COLS), "float32")
        B = T.match_buffer(B_ptr, (1, COLS), "float32")
        T.device_entry()
        T.cta_id([1])
        T.warp_id([THREADS // 32])
        T.lane_id([32])
        tx = T.thread_id([THREADS])
        # TMA needs 16-byte aligned shared addresses (128 for a swizzled map).
        A_smem = T.alloc_buffer((ROWS, COLS), "float32", scope="shared.dyn", align=128,
                                layout=TileLayout(S[ROWS, COLS]))
        R = T.alloc_buffer((1, COLS), "float32", scope="shared", layout=TileLayout(S[1, COLS]))
        mbar = T.alloc_buffer((1,), "uint64", scope="shared")
        if tx == 0:
            T.ptx.mbarrier.init.shared.b64(mbar.ptr_to([0]), T.uint32(1))
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        # The copy only issues: the caller arms the barrier with the bytes
        # it expects and waits on phase 0.
        if tx == 0:
            T.ptx.mbarrier.arrive.expect_tx.shared.b64(mbar.ptr_to([0]), T.uint32(SMEM_BYTES))
            Tx.copy_async(A_smem[:, :], A[:, :], mbar=mbar.ptr_to([0]))
        T.cuda.mbarrier_wait(mbar.ptr_to([0]), 0)
        Tx.cta.sum(R, A_smem, axes=[0])
        # The row was written by the generic proxy; the TMA store reads it
        # through the async proxy.
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if tx == 0:
            Tx.copy_async(B[:, :], R[:, :])
            T.ptx.cp.async_.bulk.commit_group()
            T.ptx.cp.async_.bulk.wait_group.read(0)
        T.cuda.cta_sync()

    return tma_reduce


def compile_through_bridge():
    """(CUDA source, the bridge's stats, the tensor maps it encoded, the
    compiled module): tvm.compile for sm_90a with the bridge installed
    strict, nothing handed back."""
    import tvm

    import tiledispatch._tvm_copy_async as ca
    import tiledispatch.tvm as tdtvm

    maps = []
    encode = ca.host_encode

    def record(tmap, base, ints, kw):
        m = re.fullmatch(r"T\.handle_add_byte_offset\((\w+)\.data, (\d+)\)", str(base))
        if m is None:
            raise SystemExit(f"gen.py: unexpected map base {base}")
        maps.append(dict(name=str(tmap.name), buffer=m.group(1), offset=int(m.group(2)),
                         ints=list(ints), **kw))
        return encode(tmap, base, ints, kw)

    tdtvm.install(strict=True)
    tdtvm.reset_stats()
    ca.host_encode = record
    try:
        target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
        with target:
            ex = tvm.compile(tvm.IRModule({"main": kernel()}), target=target,
                             tir_pipeline="tirx")
        stats = tdtvm.stats()
    finally:
        ca.host_encode = encode
        tdtvm.uninstall()
    return ex.mod.imports[0].inspect_source(), stats, maps, ex


def data():
    """(A, numpy's B) as float32 arrays."""
    import numpy as np

    rng = np.random.default_rng(SEED)
    a = (rng.integers(-64, 64, size=(ROWS, COLS)) / 8).astype("float32")
    return a, a.sum(axis=0, dtype="float64").astype("float32").reshape(1, COLS)


_CU_DTYPE = {"float32": "CU_TENSOR_MAP_DATA_TYPE_FLOAT32",
             "float16": "CU_TENSOR_MAP_DATA_TYPE_FLOAT16",
             "uint32": "CU_TENSOR_MAP_DATA_TYPE_UINT32",
             "uint16": "CU_TENSOR_MAP_DATA_TYPE_UINT16",
             "uint64": "CU_TENSOR_MAP_DATA_TYPE_UINT64"}


def params_h(maps, a, b) -> str:
    """params.h: the maps in the kernel's parameter order (A's, then B's),
    the shared memory size and the data."""
    def floats(xs):
        return ",\n".join("  " + ", ".join(f"{float(x)!r}f" for x in xs[i:i + 8])
                          for i in range(0, len(xs), 8))

    out = ["/* Generated by gen.py from the TVM bridge's compile: do not edit. */",
           f"#define TD_ROWS {ROWS}", f"#define TD_COLS {COLS}",
           f"#define TD_THREADS {THREADS}", f"#define TD_SMEM_BYTES {SMEM_BYTES}",
           f"#define TD_MAPS {len(maps)}", "",
           "struct td_map_spec {",
           "  int buffer;            /* 0: A, 1: B */",
           "  unsigned long long offset;  /* bytes into the buffer */",
           "  CUtensorMapDataType dtype;",
           "  unsigned rank;",
           "  cuuint64_t dims[5];", "  cuuint64_t strides[4];",
           "  cuuint32_t box[5];", "  cuuint32_t estrides[5];",
           "  int interleave, swizzle, l2_promotion, oob_fill;",
           "};", "",
           "static const struct td_map_spec td_maps[TD_MAPS] = {"]
    for m in maps:
        r = m["rank"]
        ints = m["ints"]
        dims, strides = ints[:r], ints[r:2 * r - 1]
        box, est = ints[2 * r - 1:3 * r - 1], ints[3 * r - 1:]
        if m["force_cu_dtype"] != -1 or m["descriptor_dtype"] not in _CU_DTYPE:
            raise SystemExit(f"gen.py: map {m['name']}: dtype {m['descriptor_dtype']} / "
                             f"force_cu_dtype {m['force_cu_dtype']} not handled")

        def arr(xs):
            return "{" + ", ".join(str(x) for x in xs) + "}" if xs else "{0}"

        out.append(f"  /* {m['name']} */ {{{'AB'.index(m['buffer'])}, {m['offset']}, "
                   f"{_CU_DTYPE[m['descriptor_dtype']]}, {r}, {arr(dims)}, {arr(strides)}, "
                   f"{arr(box)}, {arr(est)}, {m['interleave']}, {m['swizzle']}, "
                   f"{m['l2_promotion']}, {m['oob_fill']}}},")
    out += ["};", "",
            "static const float td_input[TD_ROWS * TD_COLS] = {", floats(a.ravel()), "};", "",
            "/* numpy: A.sum(axis=0) */",
            "static const float td_expected[TD_COLS] = {", floats(b.ravel()), "};", ""]
    return "\n".join(out)


def outputs():
    """{file name: text} of everything gen.py writes, and the stats."""
    src, stats, maps, _ = compile_through_bridge()
    a, b = data()
    return {"kernel.cu": src, "params.h": params_h(maps, a, b)}, stats


EXPECTED_STATS = {"dispatched": {"copy_async": {"tma_auto": 2}, "sum": {"shared_rows": 1}},
                  "handed_back": {}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="compare with the files here instead of writing them")
    args = ap.parse_args()
    files, stats = outputs()
    if stats != EXPECTED_STATS:
        print(f"gen.py: the bridge did not take every tile op: {stats}", file=sys.stderr)
        return 1
    stale = [n for n, t in files.items()
             if not (HERE / n).exists() or (HERE / n).read_text() != t]
    if args.check:
        for n in stale:
            print(f"gen.py: {n} is stale (run gen.py)", file=sys.stderr)
        return 1 if stale else 0
    for n, t in files.items():
        (HERE / n).write_text(t)
    print(f"tiledispatch chose: {stats['dispatched']}; wrote {', '.join(files)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
