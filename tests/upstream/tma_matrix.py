"""Writes tests/upstream/data/tma_matrix.tsv: TVM's 52-case TMA matrix, run on the wheel.

The cases are upstream test_tma.py's TMA_CASES (apache/tvm, read from the
mirror with git show, or from a file given with --test).  The mirror's test
targets a newer API than the installed wheel, so its imports are rewritten
to the wheel's module paths before it is imported (as
design/copy_async/probes/probe_matrix.py does).  For every case the wheel's
own planner runs (_build_auto_plan, or _build_explicit_plan for the
explicit cases) and its answer is written next to the case's inputs, so the
expected rows come from TVM, never from hand.  The test's own goldens are a
cross-check: a row whose answer differs from them stops the script.

With --lowering it writes, in the same columns, the static cases of
test_tma.py's tma_auto lowering tests (the canonicalisation, promotion,
issue-loop and refusal tests; their kwargs are listed below by test name,
their answers again come from the wheel) instead; with --random, 300
random copies and 150 random copies into swizzled tiles, drawn with fixed
seeds (planned only, not lowered: the instruction count is '-').

Run with the wheel's Python:
  PY=/work/main/build-python/venv/bin/python
  $PY tests/upstream/tma_matrix.py > tests/upstream/data/tma_matrix.tsv
  $PY tests/upstream/tma_matrix.py --lowering > tests/upstream/data/tma_lowering.tsv
  $PY tests/upstream/tma_matrix.py --random > tests/upstream/data/tma_random.tsv

Columns (tab-separated; arrays comma-separated, outermost first unless
said; a region is start:extent per dimension):
  id variant direction dtype s_dtype g_shape g_layout g_region g_offset
  s_shape s_layout s_region s_offset config arch
  result (ok|error)
  then for ok: descriptor dtype, dims, strides (bytes), boxes, element
  strides, coordinates (all CUDA order, innermost first), enums
  (interleave,swizzle,l2,oob), issue axes (extent/smem_stride@the CUDA
  dimensions they move, outermost first, '-' when none), smem start (the
  shared region's start indices), the number of TMA instructions in the
  printed impl (one, in a loop when there are issue axes), the number of
  issues (the product of the issue extents), the map's base byte offset,
  the shared slice's element offset, and a few issues' shared offsets and
  coordinates (i:offset:coords, TVM's offsets_and_coords);
  for error: TVM's message in the dtype column, the rest empty.
"""

import importlib.util
import os
import subprocess
import sys
import tempfile

MIRROR = "/work/.mirror/apache+tvm/repo"
PATH = "tests/python/tirx/operator/tile_primitive/cuda/copy_async/test_tma.py"


def load_upstream(path):
    if path:
        with open(path, encoding="utf-8") as fh:
            src = fh.read()
    else:
        src = subprocess.run(["git", "-C", MIRROR, "show", f"HEAD:{PATH}"], check=True,
                             capture_output=True, text=True).stdout
    src = (src.replace("from tvm.arith import Analyzer", "from tvm.sym import Analyzer")
              .replace("from tvm.tirx import IntImm, StringImm, Var",
                       "from tvm.tirx import IntImm, Var\nfrom tvm.ir import StringImm")
              .replace("tvm.tirx.cuda.tile_primitive", "tvm.backend.cuda.tile_primitive")
              .replace("from tvm.tirx.layout import S, TileLayout",
                       "from tvm.tirx.layout import ComposeLayout, S, TileLayout")
              # The wheel has no Python TIR visitor; the test's visitor
              # classes are only defined, never used here.
              .replace("from tvm.tirx.stmt_functor import StmtExprVisitor",
                       "class StmtExprVisitor:\n    pass"))
    fn = os.path.join(tempfile.mkdtemp(), "upstream_test_tma.py")
    with open(fn, "w", encoding="utf-8") as fh:
        fh.write(src)
    spec = importlib.util.spec_from_file_location("upstream_test_tma", fn)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def ints(values):
    return ",".join(str(int(v)) for v in values)


def region_text(region, shape):
    region = region or tuple((0, e) for e in shape)
    return ",".join(f"{int(s)}:{int(e)}" for s, e in region)


def one_line(text):
    return " ".join(str(text).split())


def config_text(config):
    if not config:
        return "-"
    return ";".join(f"{k}={v}" for k, v in sorted(config.items()))


def lowering_cases(tt):  # noqa: PLR0915 - one list
    """The static cases of the lowering tests, as (id, kwargs[, variant])."""
    plain, S, TileLayout = tt._plain_layout, tt.S, tt.TileLayout
    return [
        ("canon-oversized-box", dict(g_shape=(8, 64))),
        ("coordinate-only-dim", dict(
            g_shape=(64, 128, 2, 4, 4096), s_shape=(64, 64, 2, 4),
            g_region=((0, 64), (32, 64), (0, 2), (0, 4), (7, 1)),
            g_layout=plain((64, 128, 2, 4, 4096), (1, 512, 256, 64, 65536)),
            s_layout=plain((64, 64, 2, 4), (1, 64, 4096, 8192)))),
        ("unit-copy-dims", dict(
            g_shape=(4, 256, 8, 512), s_shape=(1, 128, 1, 128),
            g_region=((2, 1), (64, 128), (3, 1), (128, 128)))),
        ("split-coordinate-only", dict(
            g_shape=(24576, 7168), s_shape=(128, 128),
            g_region=((128, 128), (0, 128)),
            g_layout=TileLayout(S[(4, 6144, 7168):(44040192, 7168, 1)]))),
        ("interleaved-coordinate-stride", dict(
            g_shape=(2048, 128), s_shape=(5, 128, 16),
            g_region=((128, 128), (16, 16)), s_region=((0, 1), (0, 128), (0, 16)),
            g_layout=TileLayout(S[(16, 4, 32, 32, 4):(16384, 4, 16, 512, 1)]),
            s_layout=TileLayout(S[(5, 4, 32, 4, 4):(2048, 4, 16, 512, 1)]),
            dtype="uint8")),
        ("leading-unit-stride", dict(
            g_shape=(1, 8192), s_shape=(256,), g_region=((0, 1), (512, 256)),
            g_layout=plain((1, 8192), (8192, 1)))),
        ("maximum-prefix-issue", dict(g_shape=(512, 64))),
        ("chain-stride-gap", dict(
            g_shape=(8, 32, 64), s_layout=plain((8, 32, 64), (4096, 64, 1)))),
        ("chain-coordinate", dict(
            g_shape=(128, 64), g_region=((4, 24), (0, 64)), s_shape=(3, 64, 8),
            s_layout=plain((3, 64, 8), (512, 1, 64)))),
        ("chain-global-shape", dict(
            g_shape=(130, 64), g_region=((0, 24), (0, 64)), s_shape=(3, 64, 8),
            s_layout=plain((3, 64, 8), (512, 1, 64)))),
        ("repair-rank", dict(g_shape=(2, 2, 2, 2, 2, 8))),
        ("repair-unaligned-stride", dict(g_shape=(32, 8), dtype="uint8")),
        ("promotion-payload", dict(g_shape=(64, 8), dtype="uint8")),
        ("promotion-before-box-blocked-chain", dict(
            g_shape=(8, 16, 32, 4, 4),
            g_region=((0, 1), (0, 4), (0, 32), (0, 4), (0, 4)),
            s_region=((0, 1), (0, 4), (0, 32), (0, 4), (0, 4)), dtype="uint8")),
        ("odd-partial-box", dict(
            g_shape=(8, 64, 8), g_region=((0, 8), (0, 64), (0, 5)),
            s_shape=(8, 64, 5), dtype="uint8")),
        ("unrepairable-box", dict(g_shape=(4096,), dtype="uint8")),
        ("promotion-cache-key-32", dict(g_shape=(32, 8), dtype="uint8")),
        ("promotion-cache-key-64", dict(g_shape=(64, 8), dtype="uint8")),
        # test_explicit_direct_rank_1_through_5, _view_base_offset_...,
        # _never_repairs_rank_or_descriptor_units, _requires_box_linear_...
        *[(f"explicit-rank-{r}", dict(g_shape=(8,) * r), "tma_explicit")
          for r in range(1, 6)],
        ("explicit-view-base-offset", dict(g_shape=(64, 64), g_elem_offset=8),
         "tma_explicit"),
        ("explicit-never-repairs-rank", dict(g_shape=(2, 2, 2, 2, 2, 8)), "tma_explicit"),
        ("explicit-never-promotes", dict(g_shape=(32, 8), dtype="uint8"), "tma_explicit"),
        ("explicit-box-linear-shared", dict(
            g_shape=(4, 64), s_layout=plain((4, 64), (128, 1))), "tma_explicit"),
        # Derived (ours): copies larger than one box, so the issue loops,
        # their order and the shared offsets show.
        ("derived-issue-two-axes", dict(g_shape=(4, 512, 64))),
        ("derived-issue-odd-extent", dict(g_shape=(300, 64))),
        ("derived-issue-promoted", dict(g_shape=(512, 512))),
        ("derived-issue-odd-two-axes", dict(g_shape=(2, 300, 64))),
        ("derived-issue-region", dict(
            g_shape=(8, 512, 64), g_region=((2, 3), (0, 512), (0, 64)),
            s_shape=(3, 512, 64))),
        ("derived-issue-row-offset", dict(
            g_shape=(1024, 64), g_region=((256, 512), (0, 64)), s_shape=(512, 64))),
        ("derived-shared-offset", dict(
            g_shape=(512, 64), s_shape=(2, 512, 64), s_region=((1, 1), (0, 512), (0, 64)))),
        # Deviation A6 (design/copy_async/plan.md): TVM encodes SWIZZLE_128B
        # for a swizzle whose chunk is not the hardware's 16 bytes.
        ("derived-a6-f32-swizzle-333", dict(
            g_shape=(64, 32), dtype="float32",
            s_layout=tt.ComposeLayout(3, 3, 3, TileLayout(S[64, 32])))),
        ("derived-a6-f32-swizzle-233", dict(
            g_shape=(64, 32), dtype="float32",
            s_layout=tt.ComposeLayout(2, 3, 3, TileLayout(S[64, 32])))),
        ("derived-one-element", dict(g_shape=(4, 8), g_region=((1, 1), (2, 1)),
                                     s_shape=(1, 1))),
        ("derived-shared-offset-misaligned", dict(
            g_shape=(1, 64), s_shape=(2, 68), s_region=((1, 1), (0, 64)))),
    ]


def random_cases(tt, count=300, seed=20261202):
    """Random copies (the C test's kinds: ranks 1-4, 1/2/4-byte dtypes,
    permuted and padded global layouts, staged and permuted shared tiles,
    both directions), fixed by the seed."""
    import random
    rng = random.Random(seed)
    S, TileLayout = tt.S, tt.TileLayout
    sizes = (1, 2, 3, 4, 8, 16, 32, 64, 128, 256, 512, 1024)

    def strided(shape, perm, pad):
        strides = [0] * len(shape)
        stride = 1
        for k in range(len(shape) - 1, -1, -1):
            d = perm[k]
            strides[d] = stride
            stride *= shape[d] + (pad if k == len(shape) - 1 and len(shape) > 1 else 0)
        return TileLayout(S[tuple(shape):tuple(strides)])

    out = []
    for t in range(count):
        n = rng.randint(1, 4)
        shape, start, extent, prod = [], [], [], 1
        for _ in range(n):
            e = rng.choice(sizes)
            if prod * e > 65536:
                e = 1
            prod *= e
            x = rng.randint(1, e) if rng.random() < 1 / 3 else e
            shape.append(e)
            extent.append(x)
            start.append(rng.randint(0, e - x))
        gperm = list(range(n))
        if n > 1 and rng.random() < 0.25:
            a, b = rng.randrange(n), rng.randrange(n)
            gperm[a], gperm[b] = gperm[b], gperm[a]
        staged = rng.random() < 1 / 3
        sshape = ([2] if staged else []) + extent
        sregion = ([(1, 1)] if staged else []) + [(0, x) for x in extent]
        sperm = list(range(len(sshape)))
        if len(sshape) > 1 and rng.random() < 0.25:
            a, b = rng.randrange(len(sshape)), rng.randrange(len(sshape))
            sperm[a], sperm[b] = sperm[b], sperm[a]
        pad = 8 if rng.random() < 1 / 3 else 0
        kw = dict(g_shape=tuple(shape), s_shape=tuple(sshape),
                  g_region=tuple(zip(start, extent)), s_region=tuple(sregion),
                  g_layout=strided(shape, gperm, pad),
                  s_layout=strided(sshape, sperm, 0),
                  dtype=rng.choice(("float16", "uint8", "float32")),
                  direction=rng.choice(("g2s", "s2g")))
        out.append((f"random-{t}", kw))
    # Swizzled shared tiles: TVM's mma_shared_layout (atoms of 16 to 128
    # bytes, 8 rows each) over the region, drawn from a second stream so
    # the rows above stay as they are.
    rng = random.Random(seed + 1)
    bytes_of = {"float16": 2, "uint8": 1, "float32": 4}
    while len(out) < count + count // 2:
        dtype = rng.choice(tuple(bytes_of))
        swz = rng.randint(0, 3)
        atom = (16 << swz) // bytes_of[dtype]
        n = rng.randint(2, 3)
        rows = rng.choice((8, 16, 32, 64, 128))
        cols = atom * rng.choice((1, 2, 4))
        extent = ([rng.choice((1, 2))] if n == 3 else []) + [rows, cols]
        shape = [e * rng.choice((1, 2)) for e in extent]
        start = [rng.randrange(0, sh - e + 1, e) for sh, e in zip(shape, extent)]
        staged = rng.random() < 1 / 3
        sshape = ([2] if staged else []) + extent
        sregion = ([(1, 1)] if staged else []) + [(0, x) for x in extent]
        kw = dict(g_shape=tuple(shape), s_shape=tuple(sshape),
                  g_region=tuple(zip(start, extent)), s_region=tuple(sregion),
                  s_layout=tt.mma_shared_layout(dtype, swz, tuple(sshape)),
                  dtype=dtype, direction=rng.choice(("g2s", "s2g")))
        out.append((f"random-swz-{len(out) - count}", kw))
    return out


def issue_text(axes):
    if not axes:
        return "-"
    return ",".join(f"{int(a.extent)}/{int(a.smem_stride)}@"
                    + "+".join(str(int(c.dim_idx)) for c in a.coords) for a in axes)


def samples(plan):
    """TVM's shared offset and coordinates of a few issues (first, second,
    eighth, last), as i:offset:c0,c1,... joined by spaces."""
    from tvm.sym import Analyzer
    from tvm.tirx import IntImm
    n = int(plan.issue_extent())
    out = []
    for i in sorted({0, 1, 7, n - 1} & set(range(n))):
        off, coords = plan.offsets_and_coords(IntImm("int32", i))
        a = Analyzer()
        out.append(f"{i}:{int(a.simplify(off))}:{ints(a.simplify(c) for c in coords)}")
    return " ".join(out)


def main(argv):
    path = argv[argv.index("--test") + 1] if "--test" in argv else None
    tt = load_upstream(path)
    lower = "--random" not in argv
    if "--random" in argv:
        cases = [(cid, "tma_auto", kw) for cid, kw in random_cases(tt)]
    elif "--lowering" in argv:
        cases = [(c[0], c[2] if len(c) > 2 else "tma_auto", c[1])
                 for c in lowering_cases(tt)]
    else:
        cases = [(c.values[0], "tma_explicit" if c.values[0] in tt._TMA_EXPLICIT_CASES
                  else "tma_auto", c.values[1]) for c in tt.TMA_CASES]
    print("\t".join([
        "id", "variant", "direction", "dtype", "s_dtype", "g_shape", "g_layout", "g_region",
        "g_offset", "s_shape", "s_layout", "s_region", "s_offset", "config", "arch",
        "result", "desc_dtype", "dims", "strides", "boxes", "estrides", "coords", "enums",
        "issue", "smem_start", "n_tma", "n_issue", "base", "smem_offset",
        "samples"]))
    bad = 0
    for case_id, variant, kw in cases:
        g_shape = tuple(kw["g_shape"])
        s_shape = tuple(kw.get("s_shape") or g_shape)
        g_layout = kw.get("g_layout") or tt._plain_layout(g_shape)
        s_layout = kw.get("s_layout") or tt._plain_layout(s_shape)
        inputs = [
            case_id, variant, kw.get("direction", "g2s"), kw.get("dtype", "float16"),
            kw.get("s_dtype") or kw.get("dtype", "float16"), ints(g_shape),
            one_line(g_layout), region_text(kw.get("g_region"), g_shape),
            str(int(kw.get("g_elem_offset", 0))), ints(s_shape), one_line(s_layout),
            region_text(kw.get("s_region"), s_shape), str(int(kw.get("s_elem_offset", 0))),
            config_text(kw.get("config")), kw.get("target_arch", "sm_90a")]
        try:
            plan = tt._direct_plan(variant, **kw)
            s = plan.spec
            n_tma = "-"
            if lower:
                impl, _, _ = tt._lower_direct(variant, **kw)
                n_tma = impl.script().count('"bulk", "tensor"')
            issue = issue_text(plan.issue_axes)
            out = ["ok", s.descriptor_dtype, ints(s.global_dims), ints(s.global_strides),
                   ints(s.box_dims), ints(s.element_strides), ints(s.coordinates),
                   ints((s.interleave, s.swizzle, s.l2_promotion, s.oob_fill)), issue,
                   ints(s.smem_start), str(n_tma), str(int(plan.issue_extent())),
                   str(int(s.base_byte_offset)), str(int(s.smem_base_offset)), samples(plan)]
            if case_id in getattr(tt, "_TMA_CASE_GOLDENS", {}) and "--lowering" not in argv:
                g = tt._TMA_CASE_GOLDENS[case_id]
                want = (g.dtype, ints(g.dims), ints(g.strides), ints(g.boxes))
                if want != tuple(out[1:5]):
                    print(f"{case_id}: wheel {out[1:5]} != test golden {want}",
                          file=sys.stderr)
                    bad += 1
        except Exception as e:  # noqa: BLE001 - TVM raises several types
            out = ["error", one_line(e)] + [""] * 13
        print("\t".join(inputs + out))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
