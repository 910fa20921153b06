"""Writes the conformance calls of upstream's test_tcgen05_ldst.py .16x*b
tests (tests/conformance/tcgen05_ldst_16x*.yaml, ..._32x32b_*.yaml): every
distinct copy_async program of its sweeps, one call per direction, with the
register layout TVM's own tcgen05_atom_layout builds (run with the venv's
python, where TVM is installed):

    /work/main/build-python/venv/bin/python \
        tests/upstream/gen_tcgen05_ldst_conformance.py tests/conformance

The .32x32b programs test_copy_tmem2reg* hold were written before
(tcgen05_ldst_float*_w*_o*.yaml, ..._async_*, ..._sliced_*): a program
already in the corpus is not written again.  Each file says which test
and parameters it comes from, and its `# access:` line is the instruction
TVM's impl emits (tests/upstream/copy_differential.py checks it against
TVM's lowering).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

from tvm.tirx.layout import tcgen05_atom_layout, tmem_datapath_layout

SHAPE_REPS = {
    "32x32b": (1, 2, 4, 8, 16, 32, 64, 128),
    "16x64b": (1, 2, 4, 8, 16, 32, 64, 128),
    "16x128b": (1, 2, 4, 8, 16, 32, 64),
    "16x256b": (1, 2, 4, 8, 16, 32),
}
COL_FACTOR = {"32x32b": 1, "16x64b": 2, "16x128b": 4, "16x256b": 8}
FRAG_ROWS = {"32x32b": 128, "16x64b": 64, "16x128b": 64, "16x256b": 64}
SHORT = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}


def next_pow2(x: int) -> int:
    return 1 if x <= 1 else 1 << (x - 1).bit_length()


def layout_text(lay) -> str:
    """TVM's TileLayout as the call file's notation."""
    s = str(lay)
    m = re.search(r"S\[\((.*?)\):\((.*?)\)\]", s)
    if not m:
        raise ValueError(s)
    ext = m.group(1).rstrip(",")
    strides = re.sub(r"\s*@\s*Axis\.", "@", m.group(2)).rstrip(",")
    return f"S[({ext}) : ({strides})]"


class Corpus:
    def __init__(self, out: Path):
        self.out = out
        self.seen: dict[str, str] = {}
        for f in sorted(out.glob("tcgen05_ldst_*.yaml")):
            body = self._body(f.read_text())
            self.seen.setdefault(body, f.stem)
        self.written: list[str] = []

    @staticmethod
    def _body(text: str) -> str:
        return "\n".join(ln for ln in text.splitlines() if not ln.startswith("#"))

    def add(self, name, source, dtype, tmem_cols, rows, cols, layout, treg, lreg, ld,
            access, tmem_rows=128, tmem_layout=None, expect="tmem<->local"):
        """One call: the tmem buffer (tmem_rows, tmem_cols) in tmem_layout
        (None: datapath D), the register fragment (rows, cols) with
        `layout`, the regions (rows_lo:rows_hi, lo:hi); `access` the
        instruction, or the `# error:` text where expect is none."""
        t = f"Acc[{treg[0]}:{treg[1]}, {treg[2]}:{treg[3]}]"
        r = f"Rg[{lreg[0]}:{lreg[1]}, {lreg[2]}:{lreg[3]}]"
        body = "\n".join([
            "op: copy_async",
            "target: cuda",
            "arch: sm_100a",
            "scope: warpgroup",
            "launch: {threadIdx.x: 128}",
            "buffers:",
            f"  Acc: {{scope: tmem, dtype: {dtype}, shape: [{tmem_rows}, {tmem_cols}]"
            + (f", layout: \"{tmem_layout}\"}}" if tmem_layout else "}"),
            f"  Rg: {{scope: local, dtype: {dtype}, shape: [{rows}, {cols}], "
            f"layout: \"{layout}\"}}",
            f"dst: \"{r if ld else t}\"",
            f"src: \"{t if ld else r}\"",
        ])
        if body in self.seen:
            return
        self.seen[body] = name
        if expect == "none":
            head = ["# expect: none", f"# from {source}", f"# error: {access}"]
        else:
            head = [f"# expect: {expect}", "# arch: sm_100a", f"# from {source}",
                    f"# access: {access}"]
        (self.out / f"{name}.yaml").write_text("\n".join(head) + "\n" + body + "\n")
        self.written.append(name)


def chain(ld: bool, shape: str, num: int) -> str:
    return f"tcgen05.{'ld' if ld else 'st'}.sync.aligned.{shape}.x{num}.b32"


def frag(c: Corpus, test, shape, rep, dtype, rows, tmem_cols, ld, lo=0, width=None,
         tcol=0, tag=""):
    """The atom's (rows, K) fragment, or its column slice [lo, lo+width),
    against tmem rows 0:rows, columns tcol:tcol+width."""
    per = 32 // int(re.sub(r"\D", "", dtype))
    k = COL_FACTOR[shape] * rep * per
    width = k if width is None else width
    lay = layout_text(tcgen05_atom_layout(shape, (rows, k), dtype))
    num = rep * width // k
    name = (f"tcgen05_ldst_{shape}_{SHORT[dtype]}_m{rows}_x{rep}"
            + (f"_c{lo}w{width}" if width != k else "")
            + (f"_t{tcol}" if tcol else "") + tag + ("_ld" if ld else "_st"))
    if rows == 64 and shape != "32x32b":
        # TVM pairs a 64-row .16x*b fragment with datapath D, moving lanes
        # 32w..32w+15 of each warp for rows 0:64 (lanes 0..63): refused
        # here (D-M64, docs/upstream.md); its datapath F twin (the same
        # instruction, the lanes named) is the program tiledispatch lowers.
        c.add(name, f"test_tcgen05_ldst.py::{test} (datapath D: refused, "
              "its datapath F twin lowers)", dtype, tmem_cols, rows, k, lay,
              (0, rows, tcol, tcol + width), (0, rows, lo, lo + width), ld,
              D_M64_ERROR, expect="none")
        frag_f(c, f"{test} (its datapath D buffer as datapath F)", shape, rep,
               dtype, tmem_cols, ld)
        return
    c.add(name, f"test_tcgen05_ldst.py::{test}", dtype, tmem_cols, rows, k, lay,
          (0, rows, tcol, tcol + width), (0, rows, lo, lo + width), ld,
          chain(ld, shape, num))


D_M64_ERROR = "rows 0:64 of a datapath D buffer are lanes 0..63"


def stage(c: Corpus, test, dtype, tmem_cols, chunk, off, ld):
    """A .32x32b staging copy of (128, chunk) registers at tmem column off."""
    lay = f"S[(128, {chunk}) : (1@tid_in_wg, 1)]"
    per = 32 // int(re.sub(r"\D", "", dtype))
    name = (f"tcgen05_ldst_32x32b_stage_{SHORT[dtype]}_t{tmem_cols}_w{chunk}"
            + (f"_o{off}" if off else "") + ("_ld" if ld else "_st"))
    c.add(name, f"test_tcgen05_ldst.py::{test} (the .32x32b staging copy)", dtype,
          tmem_cols, 128, chunk, lay, (0, 128, off, off + chunk), (0, 128, 0, chunk), ld,
          chain(ld, "32x32b", chunk // per))


def tmem_text(dp: str, cols: int, sub_slab: int = 0) -> str:
    """TVM's tmem_datapath_layout for 64 rows, in the call file's notation."""
    lay = tmem_datapath_layout(dp, 64, cols, sub_slab=sub_slab)
    text = layout_text(lay)
    return text + (" + 16@TLane" if sub_slab else "")


def frag_f(c: Corpus, test, shape, rep, dtype, tmem_cols, ld, sub_slab=0, tag=""):
    """A 64-row .16x*b fragment against a datapath F buffer (64, tmem_cols)."""
    per = 32 // int(re.sub(r"\D", "", dtype))
    k = COL_FACTOR[shape] * rep * per
    lay = layout_text(tcgen05_atom_layout(shape, (64, k), dtype))
    name = (f"tcgen05_ldst_{shape}_{SHORT[dtype]}_f{sub_slab}_x{rep}" + tag
            + ("_ld" if ld else "_st"))
    c.add(name, f"test_tcgen05_ldst.py::{test}", dtype, tmem_cols, 64, k, lay,
          (0, 64, 0, k), (0, 64, 0, k), ld, chain(ld, shape, rep), tmem_rows=64,
          tmem_layout=tmem_text("F", tmem_cols, sub_slab))


def frag_b(c: Corpus, test, n, ld, lo=0, w=None, expect="tmem<->local", error=None):
    """The datapath B image (64, n) against a datapath B buffer (64, n)."""
    w = n if w is None else w
    lay = layout_text(tcgen05_atom_layout("32x32b", (64, n), "float32"))
    name = (f"tcgen05_ldst_b_f32_n{n}" + (f"_c{lo}w{w}" if w != n else "")
            + ("_ld" if ld else "_st"))
    c.add(name, f"test_tcgen05_ldst.py::{test}", "float32", n, 64, n, lay,
          (0, 64, lo, lo + w), (0, 64, lo, lo + w), ld,
          error or chain(ld, "32x32b", n // 2), tmem_rows=64,
          tmem_layout=tmem_text("B", n), expect=expect)


def main(out: Path) -> None:
    c = Corpus(out)
    # test_tcgen05_ld_16xnb_load_fp32 (+ _large_rep): stage by .32x32b.st in
    # chunks of at most 128 columns, read the fragment back.
    loads = [(s, r) for s in SHAPE_REPS for r in (1, 2, 4, 8, 16, 32) if r in SHAPE_REPS[s]]
    loads += [("16x64b", 64), ("16x64b", 128), ("16x128b", 64)]
    for shape, rep in loads:
        test = f"test_tcgen05_ld_16xnb_load_fp32[float32-{rep}-{shape}]"
        kf = COL_FACTOR[shape] * rep
        tw = max(32, next_pow2(kf))
        chunk = min(tw, 128)
        for off in range(0, tw, chunk):
            stage(c, test, "float32", tw, chunk, off, False)
        frag(c, test, shape, rep, "float32", FRAG_ROWS[shape], tw, True)
    # test_tcgen05_16xnb_roundtrip_16b (and _M128): .16x*b st then ld.
    for dtype in ("float16", "bfloat16"):
        for shape in SHAPE_REPS:
            for rep in (1, 2, 4, 8, 16, 32):
                if rep not in SHAPE_REPS[shape]:
                    continue
                test = f"test_tcgen05_16xnb_roundtrip_16b[{dtype}-{rep}-{shape}]"
                tw = max(32, next_pow2(COL_FACTOR[shape] * rep)) * 2
                for ld in (False, True):
                    frag(c, test, shape, rep, dtype, FRAG_ROWS[shape], tw, ld)
        for shape in ("16x64b", "16x128b", "16x256b"):
            for rep in (1, 2, 4):
                test = f"test_tcgen05_16xnb_roundtrip_16b_M128[{dtype}-{rep}-{shape}]"
                tw = max(32, next_pow2(COL_FACTOR[shape] * rep)) * 2
                for ld in (False, True):
                    frag(c, test, shape, rep, dtype, 128, tw, ld)
    # test_tcgen05_st_16xnb_store: .16x*b st, .32x32b read-out of the whole
    # tmem buffer (up to 128 columns).
    for shape in SHAPE_REPS:
        for rep in (1, 4, 16):
            if rep not in SHAPE_REPS[shape]:
                continue
            tw = max(32, next_pow2(COL_FACTOR[shape] * rep))
            if tw > 128:
                continue
            test = f"test_tcgen05_st_16xnb_store[float32-{rep}-{shape}]"
            frag(c, test, shape, rep, "float32", FRAG_ROWS[shape], tw, False)
            stage(c, test, "float32", tw, tw, 0, True)
    # test_alloc_tcgen05_frag_wrapper_compiles.
    for shape, rows, k in [("32x32b", 128, 32), ("32x32b", 128, 64), ("16x64b", 64, 64),
                           ("16x128b", 64, 64), ("16x256b", 64, 64)]:
        rep = k // COL_FACTOR[shape]
        test = f"test_alloc_tcgen05_frag_wrapper_compiles[{shape}-{rows}-{k}]"
        frag(c, test, shape, rep, "float32", rows, k, True)
    # test_tcgen05_16xnb_sub_slab_view_read: the datapath D part (a 128-row
    # fragment stored and read back; the datapath F views are not ported).
    for shape, rep in [("16x256b", 4), ("16x128b", 4), ("16x64b", 8)]:
        test = f"test_tcgen05_16xnb_sub_slab_view_read[{shape}-{rep}] (datapath D)"
        tw = max(32, next_pow2(COL_FACTOR[shape] * rep))
        for ld in (False, True):
            frag(c, test, shape, rep, "float32", 128, tw, ld)
    # test_tcgen05_ld_16x256b_sliced_matches_full_M128: the full load and
    # each column slice of the 128-row .16x256b fragment.
    for full_rep, n_chunks in [(32, 8), (32, 16), (32, 4), (16, 8), (16, 2)]:
        test = f"test_tcgen05_ld_16x256b_sliced_matches_full_M128[{full_rep}-{n_chunks}]"
        kf = 8 * full_rep
        tw = max(32, next_pow2(kf))
        sw = min(tw, 128)
        for off in range(0, tw, sw):
            stage(c, test, "float32", tw, sw, off, False)
        frag(c, test, "16x256b", full_rep, "float32", 128, tw, True)
        w = kf // n_chunks
        for ck in range(n_chunks):
            frag(c, test, "16x256b", full_rep, "float32", 128, tw, True, lo=ck * w,
                 width=w, tcol=ck * w)
    # test_tcgen05_16xnb_roundtrip_16b_layout_F: .16x*b st then ld against
    # datapath F (the lower sub-slab).
    for dtype in ("float16", "bfloat16"):
        for shape in ("16x64b", "16x128b", "16x256b"):
            for rep in (1, 2, 4):
                test = f"test_tcgen05_16xnb_roundtrip_16b_layout_F[{dtype}-{rep}-{shape}]"
                tw = max(32, next_pow2(COL_FACTOR[shape] * rep)) * 2
                for ld in (False, True):
                    frag_f(c, test, shape, rep, dtype, tw, ld)
    # test_tcgen05_16xnb_sub_slab_view_read: the two datapath F views of
    # the datapath D accumulator, lower and upper sub-slab.
    for shape, rep in [("16x256b", 4), ("16x128b", 4), ("16x64b", 8)]:
        test = f"test_tcgen05_16xnb_sub_slab_view_read[{shape}-{rep}] (datapath F view)"
        tw = max(32, next_pow2(COL_FACTOR[shape] * rep))
        for sub in (0, 1):
            frag_f(c, test, shape, rep, "float32", tw, True, sub_slab=sub)
    # test_datapath_B_codegen and test_datapath_B_ld_st_roundtrip: one
    # .32x32b.x(N/2) of the whole (64, N) tile.
    for n in (32, 64, 128, 256):
        for ld in (False, True):
            frag_b(c, f"test_datapath_B_ld_st_roundtrip[0-{n}]", n, ld)
    # test_layout_B_rejects_partial_column_copy.
    frag_b(c, "test_layout_B_rejects_partial_column_copy", 64, True, w=32,
           expect="none", error="datapath B copy must cover the full (64, N) TMEM buffer")
    print(f"{len(c.written)} calls written")
    for n in c.written:
        print(" ", n)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
