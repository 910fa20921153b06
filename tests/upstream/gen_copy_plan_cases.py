#!/usr/bin/env python3
"""Writes tests/variants/copy_plan_cases.h: one row per copy of the TVM
inventories design/copy/inv1.tsv, inv2.tsv and inv3.tsv whose TVM variant is
vec_auto or ldstmatrix, with the call's parameters (as the probes in
/work/tools/copyplan/inv*.py build them) and TVM's access width.  Run by hand
from the repository root; the output is checked in.

    python3 tests/upstream/gen_copy_plan_cases.py > tests/variants/copy_plan_cases.h

The call parameters (ROWS) are shared with gen_copy_conformance.py, which
writes the same copies as conformance call files.
"""
import re
import sys

G = "global"
ROWS = {}


def rm(shape):
    st, s = [], 1
    for d in reversed(shape):
        st.append(s)
        s *= d
    return tuple(reversed(st))


def tl(shape, strides=None, axes=None):
    """Our notation of TileLayout(S[shape : strides])."""
    strides = strides or rm(shape)
    axes = axes or [None] * len(shape)
    st = [f"{s}@{a}" if a else f"{s}" for s, a in zip(strides, axes)]
    if len(shape) == 1:
        return f"S[{shape[0]} : {st[0]}]"
    return f"S[({', '.join(map(str, shape))}) : ({', '.join(st)})]"


def add(name, scope, n, bufs, dst, src):
    """bufs: name -> (scope, shape, dtype, layout text or None, swizzle (p, s, a) or None);
    dst/src: (buffer, [(start, stop), ...])."""
    ROWS[name] = (scope, n, bufs, dst, src)


def full(sh):
    return [(0, d) for d in sh]


# inv.py: test_gmem_smem_roundtrip
for sc, n, sh in [("warp", 32, (32, 32)), ("warp", 32, (32, 64)), ("warpgroup", 128, (128, 32)),
                  ("warpgroup", 128, (128, 64)), ("warpgroup", 128, (256, 16)), ("cta", 256, (256, 32)),
                  ("cta", 256, (512, 16))]:
    for dt in ["float16", "float32", "uint8"]:
        b = {"A": (G, sh, dt, None, None), "Sm": ("shared", sh, dt, None, None)}
        add(f"gsrt_{sc}{n}_{sh[0]}x{sh[1]}_{dt}_g2s", sc, n, b, ("Sm", full(sh)), ("A", full(sh)))
        add(f"gsrt_{sc}{n}_{sh[0]}x{sh[1]}_{dt}_s2g", sc, n, b, ("A", full(sh)), ("Sm", full(sh)))
# inv.py: test_copy_g2s_s2g (t4: the tile_to result TVM prints)
SWZ4 = (tl((2, 2, 8, 2, 2, 64), (4096, 1024, 64, 2048, 512, 1)), (3, 3, 3))
tasks = [((128, 32), (128, 32), [(0, 128), (0, 32)], None), ((64, 64), (32, 32), [(32, 64), (32, 64)], None),
         ((4, 32, 32), (32, 32), [(0, 1), (0, 32), (0, 32)], None), ((16, 16), (8, 8), [(0, 8), (0, 8)], None),
         ((96, 512), (32, 256), [(16, 48), (256, 512)], SWZ4)]
for ti, (gs, ss, gr, lay) in enumerate(tasks):
    for dt in ["int8", "float8_e4m3fn", "float8_e5m2", "float16", "bfloat16", "float32"]:
        for sc in ["cta", "thread"]:
            n = 32 if sc == "cta" else 1
            b = {"A": (G, gs, dt, None, None),
                 "Sm": ("shared", ss, dt, lay[0] if lay else None, lay[1] if lay else None)}
            add(f"g2s_t{ti}_{dt}_{sc}", sc, n, b, ("Sm", full(ss)), ("A", gr))
            add(f"s2g_t{ti}_{dt}_{sc}", sc, n, b, ("A", gr), ("Sm", full(ss)))


# inv2.py
def rl(scope, shape):
    ax = {"warpgroup": "tid_in_wg", "warp": "laneid", "cta": "tx"}[scope]
    return tl(shape, (1, 1), (ax, None))


for sc, n, k in [("warpgroup", 128, 16), ("warpgroup", 128, 32), ("warpgroup", 128, 8), ("warp", 32, 8),
                 ("warp", 32, 16), ("cta", 256, 8), ("cta", 256, 16)]:
    for dt in ["float16", "float32", "uint8"]:
        for nr in ["shared", "global"]:
            sh = (n, k)
            b = {"A": (nr, sh, dt, None, None), "Rg": ("local", sh, dt, rl(sc, sh), None)}
            add(f"regrt_{sc}{n}_k{k}_{dt}_{nr}_r2x", sc, n, b, ("A", full(sh)), ("Rg", full(sh)))
            add(f"regrt_{sc}{n}_k{k}_{dt}_{nr}_x2r", sc, n, b, ("Rg", full(sh)), ("A", full(sh)))
b = {"A": (G, (32, 2, 2), "float32", None, None),
     "Rg": ("local", (32, 2, 2), "float32", tl((32, 2, 2), (1, 2, 4), ("laneid", None, None)), None)}
add("reg_gapped_g2r", "warp", 32, b, ("Rg", full((32, 2, 2))), ("A", full((32, 2, 2))))
add("reg_gapped_r2g", "warp", 32, b, ("A", full((32, 2, 2))), ("Rg", full((32, 2, 2))))
for dt in ["int8", "float8_e4m3fn", "float8_e5m2", "float16", "bfloat16", "float32"]:
    b = {"A": (G, (4, 16, 16), dt, None, None), "Rg": ("local", (8, 8), dt, None, None)}
    add(f"g2l_{dt}", "thread", 1, b, ("Rg", full((8, 8))), ("A", [(3, 4), (8, 16), (8, 16)]))
    add(f"l2g_{dt}", "thread", 1, b, ("A", [(3, 4), (8, 16), (8, 16)]), ("Rg", full((8, 8))))
b = {"A": (G, (16, 4, 4, 4), "int32", None, None), "Rg": ("local", (4, 4), "int32", None, None)}
add("reg_nc_strided", "thread", 1, b, ("Rg", full((4, 4))), ("A", [(0, 1), (0, 4), (1, 2), (0, 4)]))
add("reg_plain_strided", "thread", 1, b, ("Rg", full((4, 4))), ("A", [(0, 1), (0, 4), (1, 2), (0, 4)]))
b = {"Sm": ("shared", (128, 64), "float16", None, None),
     "Rg": ("local", (128, 64), "float16", rl("warpgroup", (128, 64)), None)}
add("reg_wg_linear_hoist", "warpgroup", 128, b, ("Sm", full((128, 64))), ("Rg", full((128, 64))))
b = {"Sm": ("shared", (128, 64), "float16", "S[512 : 1]", (3, 3, 3)),
     "Rg": ("local", (128, 64), "float16", rl("warpgroup", (128, 64)), None)}
add("reg_wg_swz", "warpgroup", 128, b, ("Sm", full((128, 64))), ("Rg", full((128, 64))))
add("reg_wg_swz_slice", "warpgroup", 128, b, ("Sm", [(0, 128), (8, 40)]), ("Rg", [(0, 128), (8, 40)]))
TC = tl((4, 2, 8, 8, 4, 2), (1, 2, 4, 4, 1, 1), ("wid_in_wg", None, "laneid", None, "laneid", None))
b = {"Sm": ("shared", (64, 64), "float32", tl((64, 2, 32), (32, 2048, 1)), (2, 3, 3)),
     "Rg": ("local", (64, 64), "float32", TC, None)}
add("tc_deposit_r2s", "warpgroup", 128, b, ("Sm", full((64, 64))), ("Rg", full((64, 64))))
add("tc_deposit_s2r", "warpgroup", 128, b, ("Rg", full((64, 64))), ("Sm", full((64, 64))))
b = {"Sm": ("shared", (64, 64), "bfloat16", "S[4096 : 1]", (3, 3, 3)),
     "Rg": ("local", (64, 64), "bfloat16", TC, None)}
add("tc_ldsm_wg_bf16", "warpgroup", 128, b, ("Rg", full((64, 64))), ("Sm", full((64, 64))))
b = {"Sm": ("shared", (4,), "float32", None, None), "Rg": ("local", (4,), "float32", "S[4 : 1]", None)}
add("explicit_vec_auto_r2s", "thread", 1, b, ("Sm", full((4,))), ("Rg", full((4,))))
add("explicit_vec_auto_s2r", "thread", 1, b, ("Rg", full((4,))), ("Sm", full((4,))))
b = {"A": (G, (4, 6), "float32", None, None), "Sm": ("shared", (4, 6), "float32", None, None)}
add("fb_thread_4x6_g2s", "thread", 1, b, ("Sm", full((4, 6))), ("A", full((4, 6))))
add("fb_thread_4x6_s2g", "thread", 1, b, ("A", full((4, 6))), ("Sm", full((4, 6))))

# inv3.py
for scope in ["warp", "warpgroup", "cta"]:
    for trans in [False, True]:
        for d in ["ld", "st"]:
            for num in [1, 2, 4]:
                for swz in [False, True]:
                    if scope == "warp":
                        sh = (8, 4, num, 2)
                        r = tl(sh, (4, 1, 2, 1), ("laneid", "laneid", None, None))
                        s = tl(sh, (num * 8, 2, 8, 1) if not trans else (1, 2 * num * 8, 8, num * 8))
                        n = 32
                    else:
                        ax = "tid_in_wg" if scope == "warpgroup" else "tx"
                        sh = (4, 8, 4, num, 2)
                        r = tl(sh, (32, 4, 1, 2, 1), (ax, ax, ax, None, None))
                        s = tl(sh, (64 * num, num * 8, 2, 8, 1) if not trans else (64 * num, 1, 16 * num, 8, 8 * num))
                        n = 128
                    b = {"Sm": ("shared", sh, "float16", s, (3, 3, 3) if swz else None),
                         "Rg": ("local", sh, "float16", r, None)}
                    name = f"ldst_{scope}_{'T' if trans else 'N'}_{d}_x{num}{'_swz' if swz else ''}"
                    if d == "ld":
                        add(name, scope, n, b, ("Rg", full(sh)), ("Sm", full(sh)))
                    else:
                        add(name, scope, n, b, ("Sm", full(sh)), ("Rg", full(sh)))
for oe in [4, 5]:
    sh = (oe, 8, 2, 4, 4, 2)
    b = {"Sm": ("shared", sh, "float16", "S[512 : 1]", (3, 3, 3)),
         "Rg": ("local", sh, "float16", tl(sh, (16, 4, 8, 2, 1, 1), (None, "laneid", None, None, "laneid", None)), None)}
    add(f"ldst_multi_iter_{oe}", "warp", 32, b, ("Rg", full(sh)), ("Sm", full(sh)))

BITS = {"int8": 8, "uint8": 8, "float8_e4m3fn": 8, "float8_e5m2": 8, "float16": 16, "bfloat16": 16,
        "int32": 32, "float32": 32}


def width_bytes(acc):
    m = re.search(r"(?:_v(\d))?_u(\d+)(?:,|$)", acc)
    lanes = int(m.group(1) or 1)
    return lanes * int(m.group(2)) // 8


def c_side(bufs, ref):
    name, region = ref
    sc, shape, dt, lay, swz = bufs[name]
    p, s, a = -1, 0, 0
    if swz:  # TVM's printed ComposeLayout, through our parser
        lay = "ComposeLayout(%d, %d, %d, TileLayout(%s))" % (swz + (lay,))
    laytxt = '"%s"' % lay if lay else "NULL"
    ints = lambda v: "{" + ", ".join(str(x) for x in v) + "}"
    return (f'{{"{name}", "{sc}", "{dt}", {len(shape)}, {ints(shape)}, {ints([r[0] for r in region])}, '
            f'{ints([r[1] - r[0] for r in region])}, {laytxt}, {p}, {s}, {a}}}')


def main():
    out = sys.stdout
    out.write("/*\n * Generated by tests/upstream/gen_copy_plan_cases.py from design/copy/inv*.tsv\n"
              " * (TVM 0.27's variant and access per upstream copy test): do not edit.\n"
              " * kind: 0 = vec_auto global<->shared, 1 = vec_auto registers, 2 = ldstmatrix.\n */\n")
    n = 0
    for tsv in ["design/copy/inv1.tsv", "design/copy/inv2.tsv", "design/copy/inv3.tsv"]:
        for line in open(tsv):
            f = line.rstrip("\n").split("\t")
            name, var, acc = f[0], f[1], f[2]
            if var not in ("vec_auto", "ldstmatrix"):
                continue
            scope, nthr, bufs, dst, src = ROWS[name]
            dt = bufs[dst[0]][2]
            if var == "ldstmatrix":
                m = re.search(r"_x(\d)_", acc)
                kind, vec, num, trans = 2, 0, int(m.group(1)), int("_trans_" in acc)
            else:
                local = bufs[dst[0]][0] == "local" or bufs[src[0]][0] == "local"
                kind, vec, num, trans = (1 if local else 0), width_bytes(acc) * 8 // BITS[dt], 0, 0
            out.write(f'{{"{name}", {kind}, TD_SCOPE_{scope.upper()}, {nthr}, {vec}, {num}, {trans},\n'
                      f' {c_side(bufs, src)},\n {c_side(bufs, dst)}}},\n')
            n += 1
    sys.stderr.write(f"{n} rows\n")


if __name__ == "__main__":
    main()
