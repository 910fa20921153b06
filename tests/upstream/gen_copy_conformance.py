#!/usr/bin/env python3
"""Writes the conformance call files of upstream's vec_auto and ldstmatrix
copies: one file per copy of design/copy/inv1.tsv, inv2.tsv and inv3.tsv
that TVM 0.27 lowers with vec_auto or ldstmatrix (plan.md sections 5.1,
5.3 and 5.4), plus the algorithm-level tests of test_gmem_smem.py and the
derived edge cases of section 5.6 that end in those two variants or in
their refusals.

Each file says what tiledispatch must choose (`# expect:`), which upstream
test or probe it comes from (`# from:` / `# derived:`) and the PTX chains
of TVM's access (`# access:`, checked by tests/conformance/run.py against
the emitted CUDA).  The call parameters of the inventory rows are the ones
tests/upstream/gen_copy_plan_cases.py gives the planner's unit tests.
Run by hand from the repository root; the output is checked in:

    python3 tests/upstream/gen_copy_conformance.py tests/conformance

Files whose variant is not registered yet (PENDING) go to DIR/copy_pending
instead, which the conformance suite does not read.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_copy_plan_cases as P  # noqa: E402

G = "global"
PENDING = set()


def access_tokens(acc):
    """TVM's helper names (ld_vec_global_v4_u32, ldmatrix_sync_aligned_...)
    as the PTX instructions they wrap (ld.global.v4.u32)."""
    out = []
    for a in acc.split(","):
        a = a.replace("L1__", "L1::").replace("L2__", "L2::")
        a = re.sub(r"^(ld|st)_vec(256)?_", r"\1_", a)
        out.append(a.replace("_", "."))
    return " ".join(out)


def layout_text(lay, swz):
    if swz:
        return "ComposeLayout(%d, %d, %d, TileLayout(%s))" % (swz + (lay,))
    return lay


def region_text(name, region):
    return "%s[%s]" % (name, ", ".join(f"{a}:{b}" for a, b in region))


def source(name):
    """The upstream test of an inventory row (pytest's id as the row's
    parameters spell it) and which of its copies the row is."""
    m = re.match(r"gsrt_([a-z]+)(\d+)_(\d+x\d+)_(\w+)_(g2s|s2g)$", name)
    if m:
        sc, n, sh, dt, d = m.groups()
        which = "copy 1 of 2: A -> Sm" if d == "g2s" else "copy 2 of 2: Sm -> A"
        return f"test_gmem_smem.py::test_gmem_smem_roundtrip[{sc}-{n}-{sh}-{dt}] ({which})"
    m = re.match(r"(g2s|s2g)_t(\d)_(\w+)_(cta|thread)$", name)
    if m:
        d, t, dt, sc = m.groups()
        which = "copy 1 of 2: A -> Sm" if d == "g2s" else "copy 2 of 2: Sm -> B"
        return f"test_gmem_smem.py::test_copy_g2s_s2g[task{t}-{dt}-{sc}] ({which})"
    m = re.match(r"regrt_([a-z]+)(\d+)_k(\d+)_(\w+)_(shared|global)_(r2x|x2r)$", name)
    if m:
        sc, n, k, dt, nr, d = m.groups()
        which = "copy 1 of 2: Rg -> A" if d == "r2x" else "copy 2 of 2: A -> Rg"
        return f"test_reg.py::test_reg_roundtrip[{nr}-{sc}-{n}-{k}-{dt}] ({which})"
    m = re.match(r"(g2l|l2g)_(\w+)$", name)
    if m:
        d, dt = m.groups()
        which = "copy 1 of 2: A -> Rg" if d == "g2l" else "copy 2 of 2: Rg -> B"
        return f"test_reg.py::test_copy_g2l_l2g_vec_load[{dt}] ({which})"
    m = re.match(r"ldst_(warp|warpgroup|cta)_([NT])_(ld|st)_x(\d)(_swz)?$", name)
    if m:
        sc, t, d, num, swz = m.groups()
        test = "test_ldstmatrix_swizzle" if swz else "test_ldstmatrix"
        trans = "True" if t == "T" else "False"
        return f"test_ld_stmatrix.py::{test}[{num}-{d}-{trans}-{sc}]"
    fixed = {
        "reg_gapped_g2r": "test_reg.py::test_reg_roundtrip_gapped_permuted_storage (copy 1 of 2: A -> Rg)",
        "reg_gapped_r2g": "test_reg.py::test_reg_roundtrip_gapped_permuted_storage (copy 2 of 2: Rg -> A)",
        "reg_nc_strided": "test_reg.py::test_vec_auto_reg_honors_cache_nc (the cache='nc' copy)",
        "reg_plain_strided": "test_reg.py::test_vec_auto_reg_honors_cache_nc (the plain copy)",
        "reg_wg_linear_hoist": "test_reg.py::test_reg_copy_linear_shared_hoists_thread_base",
        "reg_wg_swz": "test_reg.py::test_reg_copy_wg_local_to_swizzled_shared_uses_structured_compose_apply",
        "reg_wg_swz_slice": "test_reg.py::test_reg_synthetic_tile_matches_thread_base_plus_outer_delta[wg_slice]",
        "tc_deposit_r2s": "test_reg.py::test_reg_copy_tcgen05_d_epilogue_deposit_codegen (copy 1 of 2: Rg -> Sm)",
        "tc_deposit_s2r": "test_reg.py::test_reg_copy_tcgen05_d_epilogue_deposit_codegen (copy 2 of 2: Sm -> Rg)",
        "tc_ldsm_wg_bf16": "test_ld_stmatrix.py::test_ldstmatrix_tcgen05_warpgroup_atom_emits_ldmatrix",
        "explicit_vec_auto_r2s": "test_reg.py::test_copy_explicit_vec_auto_uses_auto_family (copy 1 of 2: Rg -> Sm)",
        "explicit_vec_auto_s2r": "test_reg.py::test_copy_explicit_vec_auto_uses_auto_family (copy 2 of 2: Sm -> Rg)",
        "fb_thread_4x6_g2s": "test_fallback.py::test_copy_fallback[thread-1-4x6] (copy 1 of 2: A -> A_smem)",
        "fb_thread_4x6_s2g": "test_fallback.py::test_copy_fallback[thread-1-4x6] (copy 2 of 2: A_smem -> B)",
        "ldst_multi_iter_4": "test_ld_stmatrix.py::test_ldstmatrix_swizzle_multi_iter_pow2",
        "ldst_multi_iter_5": "test_ld_stmatrix.py::test_ldstmatrix_swizzle_multi_iter_linear",
    }
    return fixed[name]


def launch_of(name, scope, n):
    """The launch upstream's kernel declares: the thread count of the
    scope, two blocks where the test runs T.cta_id([2]), all 128 threads at
    thread scope for the nc test (each copies the whole region)."""
    if re.match(r"(g2s|s2g)_t\d_|(g2l|l2g)_", name):
        return {"threadIdx.x": n, "blockIdx.x": 2}
    if name.startswith("reg_") and name.endswith("_strided"):
        return {"threadIdx.x": 128}
    return {"threadIdx.x": n}


def call_text(c):
    """A call file's body (after its comment lines)."""
    lines = ["op: copy", "target: cuda", f"arch: {c.get('arch', 'sm_90a')}",
             f"scope: {c['scope']}",
             "launch: {" + ", ".join(f"{k}: {v}" for k, v in c["launch"].items()) + "}",
             "buffers:"]
    for name, (sc, shape, dt, lay, swz) in c["bufs"].items():
        t = f"  {name}: {{scope: {sc}, dtype: {dt}, shape: [{', '.join(map(str, shape))}]"
        if lay:
            t += f', layout: "{layout_text(lay, swz)}"'
        lines.append(t + "}")
    lines.append(f'dst: "{region_text(*c["dst"])}"')
    lines.append(f'src: "{region_text(*c["src"])}"')
    if c.get("dispatch"):
        lines.append(f"dispatch: {c['dispatch']}")
    if c.get("config"):
        lines.append("config: {" + ", ".join(f'{k}: "{v}"' if ":" in v else f"{k}: {v}"
                                          for k, v in c["config"].items()) + "}")
    return "\n".join(lines) + "\n"


def header(c):
    h = [f"# expect: {c['expect']}"]
    h += [f"# from {c['from']}"] if c.get("from") else []
    h += [f"# derived: {c['derived']}"] if c.get("derived") else []
    h += [f"# {x}" for x in c.get("comments", [])]
    h += [f"# error: {c['error']}"] if c.get("error") else []
    h += [f"# access: {c['access']}"] if c.get("access") else []
    h += [f"# note: {c['note']}"] if c.get("note") else []
    return "\n".join(h) + "\n"


def inventory_cases():
    cases = {}
    for tsv in ["design/copy/inv1.tsv", "design/copy/inv2.tsv", "design/copy/inv3.tsv"]:
        for line in open(tsv):
            f = line.rstrip("\n").split("\t")
            name, var, acc = f[0], f[1], f[2]
            if var not in ("vec_auto", "ldstmatrix"):
                continue
            scope, n, bufs, dst, src = P.ROWS[name]
            c = {"expect": var, "from": source(name), "access": access_tokens(acc),
                 "scope": scope, "launch": launch_of(name, scope, n), "bufs": bufs,
                 "dst": dst, "src": src}
            if name == "reg_nc_strided":
                c["config"] = {"cache": "nc"}
            if name.startswith("reg_gapped") or name.startswith("explicit_vec_auto"):
                c["dispatch"] = "vec_auto"
            sm = bufs.get("Sm")
            if sm and sm[3] and re.fullmatch(r"S\[\d+ : 1\]", sm[3]) and \
                    int(re.search(r"\d+", sm[3]).group()) != prod(sm[1]):
                # TVM's bare swizzle (a trivial tile smaller than the
                # buffer) swizzles the buffer's row-major element index: the
                # call file spells it as a row-major tile of the whole buffer.
                c["bufs"] = dict(bufs, Sm=sm[:3] + (P.tl(sm[1]),) + sm[4:])
                c["comments"] = [f"TVM: layout=ComposeLayout({', '.join(map(str, sm[4]))}, "
                                 f"TileLayout({sm[3]})) (a bare swizzle of the row-major index)"]
            cases["copy_tvm_" + name] = c
    return cases


def prod(v):
    r = 1
    for x in v:
        r *= x
    return r


def rm(shape):
    return P.tl(shape)


def full(sh):
    return [(0, d) for d in sh]


def gs(scope, n, dt, gshape, sshape, greg, sreg=None, glay=None, slay=None, sswz=None, to_shared=True):
    """A global <-> shared call: A global, Sm shared."""
    bufs = {"A": (G, gshape, dt, glay, None), "Sm": ("shared", sshape, dt, slay, sswz)}
    sreg = sreg or full(sshape)
    d, s = (("Sm", sreg), ("A", greg)) if to_shared else (("A", greg), ("Sm", sreg))
    return {"scope": scope, "launch": {"threadIdx.x": n}, "bufs": bufs, "dst": d, "src": s}


def with_(c, **kw):
    c = dict(c)
    c.update(kw)
    return c


G2S = "ld.global.{0} st.shared.{0}"


def extra_cases():
    """plan.md 5.1 (c) and the vec_auto / ldstmatrix rows of 5.6."""
    C = {}
    for p, w in [(2, "v2.u32"), (1, "u32"), (0, "u16")]:
        C[f"copy_tvm_gs_swizzle_chunk_p{p}"] = with_(
            gs("warp", 32, "float16", (32, 32), (32, 32), full((32, 32)),
               slay=rm((32, 32)), sswz=(p, 3, 3)),
            expect="vec_auto", access=G2S.format(w),
            **{"from": f"test_gmem_smem.py::test_swizzled_smem_vec_len_must_fit_chunk[{p}-{1 << p}] "
                       "(the algorithm test as a warp copy)"})
    C["copy_tvm_gs_unaligned_stride"] = with_(
        gs("thread", 1, "float16", (2, 16), (2, 16), full((2, 16)),
           glay="S[(2, 16) : (20, 1)]", slay="S[(2, 16) : (20, 1)]"),
        expect="vec_auto", access=G2S.format("v2.u32"),
        comments=["the test's thread_cnt 4 is no TVM scope: thread scope (probed, .v2.u32)"],
        **{"from": "test_gmem_smem.py::test_unaligned_strides_must_clamp_vec_len"})
    C["copy_tvm_gs_unaligned_region_offset"] = with_(
        gs("thread", 1, "float16", (4, 32), (4, 16), [(0, 4), (3, 19)]),
        expect="vec_auto", access=G2S.format("u16"),
        comments=["the test's thread_cnt 4 is no TVM scope: thread scope"],
        **{"from": "test_gmem_smem.py::test_unaligned_region_offset_must_clamp_vec_len"})
    C["copy_tvm_gs_swizzle_emit_xor"] = with_(
        gs("warpgroup", 128, "float16", (128, 32), (128, 32), full((128, 32)),
           slay=rm((128, 32)), sswz=(3, 3, 3)),
        expect="vec_auto", access=G2S.format("v4.u32"),
        **{"from": "test_gmem_smem.py::test_swizzled_smem_emit_must_be_swizzle_aware"})
    C["copy_tvm_gs_ktiled_smem"] = with_(
        gs("warpgroup", 128, "float16", (128, 64), (128, 64), full((128, 64)),
           slay="S[(128, 8, 8) : (8, 1024, 1)]"),
        expect="vec_auto", access=G2S.format("v4.u32"),
        **{"from": "test_gmem_smem.py::test_layout_permute_copy_preserves_smem_strides"})
    for d in ["g2s", "s2g"]:
        c = gs("warp", 32, "float16", (32, 64), (32, 64), full((32, 64)),
               slay=rm((32, 64)), sswz=(3, 3, 3), to_shared=d == "g2s")
        acc = G2S.format("v4.u32") if d == "g2s" else "ld.shared.v4.u32 st.global.v4.u32"
        C[f"copy_tvm_gs_swizzle_structured_{d}"] = with_(
            c, expect="vec_auto", access=acc,
            **{"from": "test_gmem_smem.py::test_gmem_smem_swizzle_uses_structured_compose_apply "
                       f"(copy {'1' if d == 'g2s' else '2'} of 2)"})

    # 5.6: derived edge cases.
    C["copy_unit_dims_ok"] = {
        "expect": "vec_auto", "derived": "unit dims squeezed: Rg[0:8, 0:8] <- A[3:4, 8:16, 8:16]",
        "access": "ld.global.v4.u32", "scope": "thread", "launch": {"threadIdx.x": 1},
        "bufs": {"A": (G, (4, 16, 16), "float16", None, None), "Rg": ("local", (8, 8), "float16", None, None)},
        "dst": ("Rg", full((8, 8))), "src": ("A", [(3, 4), (8, 16), (8, 16)])}
    C["copy_cta96_g2s"] = with_(
        gs("cta", 96, "float32", (24, 16), (24, 16), full((24, 16))),
        expect="vec_auto", access=G2S.format("v4.u32"),
        derived="a cta of 96 threads (3 warps), 384 elements: 1 round of v4 (probed)")
    C["copy_odd_extent_thread_7x9"] = with_(
        gs("thread", 1, "float16", (7, 9), (7, 9), full((7, 9))),
        expect="vec_auto", access=G2S.format("u16"),
        derived="63 elements on one thread: rows of 9 halves give vec 1 (probed)")
    C["copy_align_offset3_warp"] = with_(
        gs("warp", 32, "float16", (4, 35), (4, 32), [(0, 4), (3, 35)]),
        expect="vec_auto", access=G2S.format("u16"),
        derived="probe gs_off3: a region starting at column 3 (6 bytes) gets vec 1, 4 rounds")
    C["copy_align_offset4_warp"] = with_(
        gs("warp", 32, "float16", (4, 36), (4, 32), [(0, 4), (4, 36)]),
        expect="vec_auto", access=G2S.format("v2.u32"),
        derived="a region starting at column 4 (8 bytes), rows of 36: vec 4 (probed)")
    for p, w in [(0, "u16"), (1, "u32"), (2, "v2.u32"), (3, "v4.u32")]:
        C[f"copy_swizzle_p{p}_g2s"] = with_(
            gs("warp", 32, "float16", (32, 64), (32, 64), full((32, 64)),
               slay=rm((32, 64)), sswz=(p, 3, 3)),
            expect="vec_auto", access=G2S.format(w),
            derived=f"a swizzle of per_element {p}: vectors stay inside 2^{p}-element chunks")
    C["copy_gs_cache_ignored"] = with_(
        gs("warp", 32, "float16", (8, 32), (8, 32), full((8, 32))),
        expect="vec_auto", access=G2S.format("v4.u32"), config={"cache": "nc"},
        note="not applied",
        derived="probe gs_cache_nc: vec_auto's global<->shared path reads no cache config "
                "(TVM drops it silently; explain says so, deviation D8)")
    C["copy_gs_global_column"] = with_(
        gs("thread", 1, "float16", (64, 5), (64, 1), [(0, 64), (2, 3)]),
        expect="vec_auto", access=G2S.format("u16"),
        derived="probe col_g2s: a column of a wider global array. TVM loads u32 at "
                "g_lin = f * 10 + 2, two elements of one row; here the global side of a vector "
                "must be contiguous too (vec 1)")
    wg_half = {"Rg": ("local", (64, 8), "float32", "S[(64, 8) : (1@tid_in_wg, 1)]", None),
               "Sm": ("shared", (64, 8), "float32", None, None)}
    C["copy_reg_partial_wg_64of128"] = {
        "expect": "none",
        "derived": "probe d_reg_wg_half: the register layout covers 64 of the warpgroup's 128 "
                   "threads; TVM's vec_auto reads past the shared buffer (deviation D2)",
        "error": "covers 64 of the warpgroup's 128 threads",
        "scope": "warpgroup", "launch": {"threadIdx.x": 128}, "bufs": wg_half,
        "dst": ("Rg", full((64, 8))), "src": ("Sm", full((64, 8)))}
    C["copy_reg_partial_warp_16of32"] = {
        "expect": "none",
        "derived": "probe d_reg_warp_16: the register layout covers 16 of the warp's 32 lanes; "
                   "TVM's vec_auto reads past the shared buffer (deviation D2)",
        "error": "covers 16 of the warp's 32 threads",
        "scope": "warp", "launch": {"threadIdx.x": 32},
        "bufs": {"Rg": ("local", (16, 8), "float32", "S[(16, 8) : (1@laneid, 1)]", None),
                 "Sm": ("shared", (16, 8), "float32", None, None)},
        "dst": ("Rg", full((16, 8))), "src": ("Sm", full((16, 8)))}
    C["copy_reg_gapped_vec"] = {
        "expect": "vec_auto",
        "derived": "probe d_reg_gapped_vec: 4 elements per lane in register slots 0, 2, 4, 6. "
                   "TVM stores r_words[0..3] as one .v4 (two garbage words); here the registers "
                   "of a vector must be consecutive too (deviation D7: vec 1)",
        "access": "st.shared.u32", "scope": "warp", "launch": {"threadIdx.x": 32},
        "bufs": {"Rg": ("local", (32, 4), "float32", "S[(32, 4) : (1@laneid, 2)]", None),
                 "Sm": ("shared", (32, 4), "float32", None, None)},
        "dst": ("Sm", full((32, 4))), "src": ("Rg", full((32, 4)))}
    frag = "S[(8, 4, 4, 2) : (4@laneid, 1@laneid, 2, 1)]"
    sm_n4 = "S[(8, 4, 4, 2) : (32, 2, 8, 1)]"

    def ldst(dt, ld=True, lay=sm_n4, swz=None, rlay=frag, shape=(8, 4, 4, 2), arch="sm_90a"):
        b = {"Rg": ("local", shape, dt, rlay, None), "Sm": ("shared", shape, dt, lay, swz)}
        rr, sr = ("Rg", full(shape)), ("Sm", full(shape))
        return {"scope": "warp", "launch": {"threadIdx.x": 32}, "bufs": b, "arch": arch,
                "dst": rr if ld else sr, "src": sr if ld else rr}
    C["copy_ldsm_f32_fragment"] = with_(
        ldst("float32"), expect="vec_auto",
        derived="probe d_ldsm_f32: an mma-like fragment of float32. TVM's ldstmatrix moves it as "
                ".b16 (4 of the 8 words, a 16-bit mapping); here ldstmatrix declines "
                "(16-bit elements only, deviation D3) and vec_auto takes it",
        comments=["ldstmatrix declines: ldstmatrix moves 16-bit elements (.b16); Rg is float32"])
    C["copy_ldsm_int8_fragment"] = with_(
        ldst("int8"), expect="vec_auto",
        derived="probe d_ldsm_int8_x4: TVM's ldmatrix.x4 writes 16 bytes into 8 one-byte "
                "registers; here ldstmatrix declines (deviation D3) and vec_auto takes it")
    C["copy_stsm_sm80"] = with_(
        ldst("float16", ld=False, arch="sm_80"), expect="vec_auto",
        derived="probe d_stsm_sm80: TVM emits stmatrix for sm_80 (ptxas refuses it: stmatrix "
                "needs sm_90); here ldstmatrix rejects the arch (deviation D4) and vec_auto "
                "takes it")
    C["copy_ldsm_sm80"] = with_(
        ldst("float16", arch="sm_80"), expect="ldstmatrix",
        access="ldmatrix.sync.aligned.m8n8.x4.shared.b16",
        derived="ldmatrix exists from sm_75: the load direction stays ldstmatrix on sm_80")
    C["copy_ldsm_swizzle_p2"] = with_(
        ldst("float16", swz=(2, 3, 3)), expect="vec_auto",
        derived="probe ldsm_swz2_decl: a swizzle of per_element 2 breaks the 8-half rows; "
                "ldstmatrix declines (TVM's text) and vec_auto takes it",
        comments=["ldstmatrix declines: swizzle per_element=2 < 3 incompatible with .b16 "
                  "ldmatrix/stmatrix (need 8-fp16 chunk integrity)"])
    C["copy_ldsm_not_fragment"] = with_(
        ldst("float16", rlay="S[(32, 8) : (1@laneid, 1)]", lay=None, shape=(32, 8)),
        expect="vec_auto", access="ld.shared.v4.u32",
        derived="probe ldsm_decline: a row per lane is no mma fragment; ldstmatrix declines "
                "(ldstmatrix layout doesn't fit any num in {4,2,1}) and vec_auto takes it")
    for start, name in [(1, "misaligned"), (0, "aligned")]:
        c = ldst("float16", lay="S[(8, 5, 4, 2) : (64, 2, 16, 1)]", shape=(8, 5, 4, 2))
        c["bufs"] = dict(c["bufs"], Rg=("local", (8, 4, 4, 2), "float16", frag, None))
        c["dst"] = ("Rg", full((8, 4, 4, 2)))
        c["src"] = ("Sm", [(0, 8), (start, start + 4), (0, 4), (0, 2)])
        if start:
            C["copy_ldsm_region_offset_misaligned"] = with_(
                c, expect="vec_auto",
                derived="an ldmatrix fragment whose rows start 2 halves (4 bytes) past a 16-byte "
                        "boundary: TVM checks the strides, never the region's start (not probed); "
                        "here ldstmatrix declines (the rows of Sm must start on 16-byte "
                        "boundaries) and vec_auto takes it")
        else:
            C["copy_ldsm_region_offset_aligned"] = with_(
                c, expect="ldstmatrix", access="ldmatrix.sync.aligned.m8n8.x4.shared.b16",
                derived="the same fragment starting on a row boundary of a padded shared tile")
    return C


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    cases = inventory_cases()
    cases.update(extra_cases())
    for name, c in sorted(cases.items()):
        d = os.path.join(out, "copy_pending") if c["expect"] in PENDING else out
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name + ".yaml"), "w", encoding="utf-8") as f:
            f.write(header(c) + call_text(c))
    sys.stderr.write(f"{len(cases)} files\n")


if __name__ == "__main__":
    main()
