"""The copy part of the upstream differential (differential.py): every
copy conformance case (tests/conformance/copy_*.yaml, `op: copy`; ldgsts_*.yaml,
copy_async_*.yaml, dsmem_*.yaml, tma_*.yaml and tcgen05_*.yaml, `op: copy_async`) lowered by real TVM (apache-tvm 0.27.0.post1, its own dispatcher) and by
tiledispatch, the two compared.

Each call file becomes a one-CTA TVMScript kernel: global buffers are
`T.match_buffer` parameters, the others `T.alloc_buffer(..., scope=...,
layout=...)`, the scope ids upstream's copy tests declare for the call's
scope (`T.lane_id`, `T.warp_id`, `T.warpgroup_id`, ...; only where the
thread count is a whole number of warps, else TVM's later passes cannot
infer their extents), and the call `Tx.<scope>.copy(dst, src, <config>,
dispatch=...)` or `Tx.<scope>.copy_async(dst, src, <config>)` (a named
guard or mbarrier a parameter of the kernel).  It is compiled with `tvm.compile(...,
tir_pipeline="tirx")` for the case's arch; TVM's choice is the variant
whose implementation returned (differential._record_impls), or `no match`
when none did (every row rejected or raised, or the front end refused).

Compared, per case:
- the variant: the same, or both refuse (tiledispatch's dispatch fails or
  its operand check refuses the call);
- the access: where both chose the same variant, the PTX memory
  instructions of TVM's CUDA and of `Dispatch.emit("cuda")` (the `asm`
  strings: `ld.global.v4.u32`, `ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16`)
  are the same set, which fixes the vector width in bits, ldmatrix's .xN
  and .trans; none on both sides for the scalar fallback.  Every cp.async
  counts with its form (ptx_mem): .ca/.cg, the .L2::NB prefetch, the
  bytes, a guard, the zero-fill src-size operand.  A tensor-memory call
  (a `tmem` buffer: T.decl_buffer over a shared address, as upstream's
  tcgen05 tests declare it): TVM chooses, then a later pass of its
  pipeline fails on the harness's allocated address (TMEM_HARNESS), so
  its CUDA is not known; a tmem<->local call is compared by what TVM's
  impl returned instead, every tcgen05.ld/st issue of its PrimFunc
  (tcgen05_issues: shape, .num, row, column, registers) against
  tiledispatch's TIRx; a smem->tmem call by variant only.
Besides, TVM's instructions are checked against the case's `# access:`
line (what tests/conformance/run.py holds tiledispatch's CUDA to), so the
corpus cannot drift from TVM unseen.

A difference is either listed in COPY_DEVIATIONS (by case: the deviation
of docs/upstream.md section 6 and why) or COPY_DEVIATION_PATTERNS (by a
name pattern, for a generated family), or counted as unexplained.
"""
from __future__ import annotations

import re
import time
import warnings
from pathlib import Path

import tiledispatch as td

# The scope ids upstream's copy tests declare per scope (TVM's later
# passes need them to give the sub-CTA scopes their thread ids); the warp
# ids only where the threads are whole warps.
_NS = {"thread": "Tx", "warp": "Tx.warp", "warpgroup": "Tx.wg", "cta": "Tx.cta",
       "cluster": "Tx.cluster"}

# PTX memory instructions at the start of an asm string (as
# tests/conformance/run.py reads them).
PTX_MEM = re.compile(r'"\s*((?:ld|st|ldmatrix|stmatrix)\.[A-Za-z0-9_:.]+)')

# cp.async anywhere in an asm string (tiledispatch's guarded form sets a
# predicate register first): an optional guard, the instruction (.ca/.cg,
# the .L2::NB prefetch), the bytes and, in the zero-fill form, the
# src-size operand.
CP_ASYNC = re.compile(r'(@!?%?\w+\s+)?(cp\.async\.(?:ca|cg)\.shared\.global[A-Za-z0-9_:.]*)'
                      r'\s+\[[^\]]*\],\s*\[[^\]]*\],\s*(\w+)\s*(,\s*[^;"]+)?;')


# A TMA tensor copy (load, store, reduction) or map prefetch anywhere in an
# asm string: the whole qualifier chain (rank, direction, completion,
# multicast, cta_group, cache hint) is its form.
TMA = re.compile(r'((?:cp|cp\.reduce)\.async\.bulk\.tensor\.[A-Za-z0-9_:.]+'
                 r'|prefetch\.tensormap)')

# The cluster copy (dsmem) anywhere in an asm string; the mapa before it
# differs by design (TVM's mapa.u64 on generic addresses, ours
# mapa.shared::cluster.u32: deviation A4) and is not compared.
BULK_S2C = re.compile(r'(cp\.async\.bulk\.shared::cluster\.shared::cta[A-Za-z0-9_:.]*)')


# A tensor-memory load or store anywhere in an asm string: its chain
# (shape, .num) is its form.
TCGEN05_LDST = re.compile(r'(tcgen05\.(?:ld|st)\.sync\.aligned\.[A-Za-z0-9_:.]+)')


def ptx_mem(cuda: str) -> set:
    """The PTX memory instructions of a CUDA text: the ld/st/ldmatrix/
    stmatrix names at the start of asm strings, every cp.async as
    `[@guard ]NAME BYTES[ src-size]` (its form, besides the name), every
    TMA instruction's chain and the cluster copy's name."""
    out = (set(PTX_MEM.findall(cuda)) | set(TMA.findall(cuda)) |
           set(BULK_S2C.findall(cuda)) | set(TCGEN05_LDST.findall(cuda)))
    for guard, name, size, extra in CP_ASYNC.findall(cuda):
        out.add(("@guard " if guard else "") + f"{name} {size}" +
                (" src-size" if extra else ""))
    return out


def _names(s: set) -> set:
    """The instruction names of ptx_mem's set (what a case's `# access:`
    line lists)."""
    return {w for t in s for w in t.split() if not w.startswith("@") and "." in w}

# Case (file stem) -> (deviation of docs/upstream.md section 6, reason).
# A case is listed only where TVM 0.27 and tiledispatch really differ
# (variant, or instructions of the same variant).
# Where TVM selects a variant and then fails in its own pipeline, that
# counts as TVM refusing the call (the row says which it selected).
_OPERAND_KW = ("copy's front end takes any keyword and keeps it in the call's config, "
               "which no copy variant reads, so vec_auto lowers the call without it; "
               "tiledispatch's operand check refuses what a copy cannot apply")
COPY_DEVIATIONS: dict[str, tuple[str, str]] = {
    "copy_cta48_g2s": ("D1", "vec_auto at cta scope counts 32 * (threadIdx.x // 32) threads "
                       "and indexes with threadIdx.x: threads 32-47 write past the tile; "
                       "tiledispatch counts 48, 256 is not divisible by it, fallback"),
    "copy_reg_partial_wg_64of128": ("D2", "a register layout covering 64 of the warpgroup's "
                                    "128 threads: TVM's threads outside it read past the "
                                    "buffer; rejected"),
    "copy_reg_partial_warp_16of32": ("D2", "a register layout covering 16 of the warp's 32 "
                                     "lanes: as above; rejected"),
    "copy_ldsm_f32_fragment": ("D3", "ldstmatrix moves float32 as .b16 (half the data); "
                               "tiledispatch's ldstmatrix declines, vec_auto takes it"),
    "copy_ldsm_int8_fragment": ("D3", "ldstmatrix moves int8 as .b16 (past a two-word "
                                "register array); declined, vec_auto takes it"),
    "copy_stsm_sm80": ("D4", "stmatrix emitted for sm_80, which ptxas refuses; declined, "
                       "vec_auto takes it"),
    "copy_v256_sm90": ("D4", "vec_256b's 32-byte accesses for sm_90a, which ptxas refuses; "
                       "rejected (sm_100 and newer)"),
    "copy_v64_misaligned": ("D5", "a forced 8-byte load at byte offset 2 (A[1:5] float16); "
                            "rejected: the region start is not 8-byte aligned"),
    "copy_block_vec_128b_misaligned": ("D5", "a forced 16-byte load at column bx * 2 "
                                       "(8-byte aligned in odd blocks); rejected: not "
                                       "16-byte aligned in every block"),
    "copy_v64_reg_odd_slot": ("D5", "a forced 8-byte access from register slot 1 of float16; "
                              "rejected: not at a 32-bit register boundary"),
    "copy_v128_noncontig": ("D6", "a forced width loads a 2-D region as consecutive "
                            "elements; rejected: not contiguous in memory"),
    "copy_v128_swizzle_chunk": ("D6", "a forced width runs across a swizzle chunk; rejected"),
    "copy_v128_reg_gaps": ("D6", "a forced width over a register layout with gaps; rejected"),
    "copy_reg_gapped_vec": ("D7", "vec_auto's register path stores slots 0, 2, 4, 6 as one "
                            ".v4 of slots 0-3; tiledispatch's vector registers must be "
                            "consecutive too (st.shared.u32)"),
    "copy_fallback_local_dst_warp": ("-", "fallback at warp scope writes a register "
                                     "destination from one thread (the other lanes' "
                                     "registers stay unwritten); rejected"),
    "copy_gs_global_column": ("-", "vec_auto checks only the shared side of a vector: a "
                              "column of a wider global array is loaded as u32 (two "
                              "elements of one row); the global side must be contiguous "
                              "too (u16)"),
    "copy_ldsm_region_offset_misaligned": ("-", "ldstmatrix does not check where the region "
                                           "starts (rows 4 bytes past a 16-byte boundary); "
                                           "declined, vec_auto takes it"),
    "copy_multidim_launch": ("-", "a [64, 2] thread launch: TVM reads threadIdx.x only, its "
                             "fallback copies from every thread with threadIdx.x == 0 (one "
                             "per threadIdx.y, the same elements twice); rejected"),
    "copy_op_accum": ("-", "accum=True: " + _OPERAND_KW),
    "copy_op_axes": ("-", "axes=[0]: " + _OPERAND_KW),
    "copy_op_extras": ("-", "scale=s: " + _OPERAND_KW),
    # copy_async (ldgsts): the deviations of docs/upstream.md's copy_async
    # table, labelled as design/copy_async/plan.md section 4 labels them.
    "ldgsts_cta48": ("A1", "ldgsts at cta scope counts 32 * (threadIdx.x // 32) threads and "
                     "indexes with threadIdx.x (as copy's D1): threads 32-47 copy past the "
                     "tile; tiledispatch counts 48, 256 is not divisible by it; rejected"),
    "ldgsts_mbar": ("A2", "a thread-scope copy_async given mbar goes to ldgsts, which never "
                    "arrives on the mbarrier (a waiter hangs); rejected"),
    "ldgsts_unknown_key": ("A3", "ldgsts takes any config key silently (cache_hint here); "
                           "rejected"),
    # copy_async (tmem<->local): docs/copy_async.md's tcgen05 deviations.
    "tcgen05_ldst_sm90": ("-", "TVM has no arch check: it emits tcgen05.ld for sm_90a, which "
                          "has no tensor memory; tiledispatch declines below sm_100a"),
    "tcgen05_ldst_sm120": ("-", "TVM has no arch check: sm_120a has no tensor memory"),
    "tcgen05_ldst_no_layout": ("-", "TVM's .32x32b path reads only the register buffer's "
                               "shape; tiledispatch requires the .32x32b fragment layout"),
    "tcgen05_ldst_unknown_key": ("A3", "TVM ignores config keys tmem<->local does not read; "
                                 "tiledispatch refuses them"),
    "tcgen05_ldst_16x256b_slice_unaligned": ("-", "a .16x*b column slice that starts inside a "
                                             "rep: TVM moves registers the layout gives other "
                                             "columns; tiledispatch declines it"),
    # copy_async (smem->tmem): docs/upstream.md's tcgen05.cp rows.
    "tcgen05_cp_sm90a": ("-", "TVM has no arch check: it emits tcgen05.cp for sm_90a, which "
                         "has no tensor memory; tiledispatch declines below sm_100a"),
    "tcgen05_cp_unknown_key": ("A3", "TVM ignores config keys smem->tmem does not read; "
                               "tiledispatch refuses them"),
    "tcgen05_cp_cta2_no_cluster": ("-", "TVM emits tcgen05.cp.cta_group::2 in a kernel "
                                   "launched without clusters (no CTA pair exists); "
                                   "tiledispatch declines cta_group 2 without a cluster "
                                   "of an even number of CTAs"),
    "tcgen05_cp_cta2_odd_cluster": ("-", "TVM emits tcgen05.cp.cta_group::2 in a cluster of "
                                    "3 CTAs (the third has no pair); declined"),
    # copy_async (dsmem): docs/copy_async.md's dsmem deviations.
    "dsmem_sm80": ("A5", "dsmem has no arch check: TVM dispatches it for sm_80 and the module "
                   "holds mapa and cp.async.bulk.shared::cluster, which sm_80 lacks; declined"),
    "dsmem_no_cluster": ("A8", "TVM copies into CTA remote_cta_id of a kernel launched without "
                         "clusters (no peer exists); declined without a cluster launch"),
    "dsmem_rank_outside": ("A8", "TVM copies into CTA 2 of a cluster of 2; declined"),
    "dsmem_unaligned": ("A10", "TVM issues cp.async.bulk from byte 8 (chunks must be 16-byte "
                        "aligned); declined"),
    "dsmem_unknown_key": ("A3", "dsmem takes any config key silently (bogus here); refused"),
    "dsmem_mbar_not_u64": ("-", "TVM takes an element of a uint32 buffer as the mbarrier "
                           "(an mbarrier is 8 bytes); declined"),
    "dsmem_swizzled": ("-", "TVM lowers a copy from a swizzled tile through its layout slice; "
                       "tiledispatch plans from storage offsets and declines a layout that is "
                       "not strided over the region (no chunk is one run in both)"),
    "ldgsts_direct_2d": ("-", "direct=True copies 16 consecutive bytes from the region's "
                         "first element: two rows of two floats are not one run; rejected"),
    "ldgsts_direct_misaligned": ("-", "direct=True issues an 8-byte cp.async at byte offset "
                                 "164; rejected: not 8-byte aligned"),
    "ldgsts_block_direct_misaligned": ("-", "direct=True issues a 16-byte cp.async from a row "
                                       "the block ids move by 8 bytes: aligned in block 0, "
                                       "not in block 1; rejected: not 16-byte aligned in "
                                       "every block"),
    # copy_async (TMA): the g2s cases force dispatch=tma_auto (TVM's ldgsts
    # would take them otherwise, A2) except the two that show A2 itself.
    "tma_g2s_unforced_keys": ("A2", "a thread-scope load given mbar, cache_hint and "
                              "prefetch_tensormap goes to ldgsts, which drops all three; "
                              "ldgsts refuses the mbarrier and tma_auto takes the call"),
    "tma_g2s_oob_explicit": ("A2", "ldgsts takes the load given mbar and oob (both dropped); "
                             "here ldgsts refuses the mbarrier, tma_auto declines oob as TVM "
                             "does and tma_explicit takes the call with oob_fill=1"),
    "tma_g2s_multicast": ("A8", "cta_mask=3 multicasts with no cluster launch (the CTAs it "
                          "names may not exist); rejected"),
    "tma_g2s_multicast_outside": ("A8", "cta_mask=5 names CTA rank 2 of a cluster of 2 (a CTA "
                                  "that does not exist); rejected"),
    "tma_g2s_swizzle_wrong_chunk": ("A6", "ComposeLayout(3, 3, 3) on float32 moves 32-byte "
                                    "chunks and is encoded as SWIZZLE_128B (16-byte chunks: the "
                                    "data lands elsewhere, seen on the H200); rejected"),
    "tma_g2s_mbar_not_barrier": ("-", "mbar points into an int32 buffer; TVM takes any pointer, "
                                 "tiledispatch wants an element of a shared uint64 buffer; "
                                 "rejected"),
}


# Deviations of a whole family of generated cases, by name pattern
# (tests/upstream/gen_tcgen05_ldst_conformance.py writes them).
COPY_DEVIATION_PATTERNS: list = [
    (re.compile(r"tcgen05_ldst_16x\d+b_(f32|f16|bf16)_m64_"),
     ("-", "a 64-row .16x*b fragment of a datapath D buffer: TVM moves lanes "
           "32w..32w+15 of each warp for rows 0:64 (lanes 0..63), reading rows the "
           "region does not name and writing rows 64..111 outside it; tiledispatch "
           "declines it, its datapath F twin (_f0_) lowers")),
]


def copy_deviation(stem: str) -> tuple | None:
    """The listed deviation of a case: by name, else by pattern."""
    if stem in COPY_DEVIATIONS:
        return COPY_DEVIATIONS[stem]
    for pat, dev in COPY_DEVIATION_PATTERNS:
        if pat.match(stem):
            return dev
    return None


def _scope_ids(scope: str, threads: int) -> list[str]:
    whole = threads % 32 == 0
    if scope == "warp" and whole:
        return ["T.lane_id([32])"]
    if scope == "warpgroup" and threads % 128 == 0:
        return [f"T.warpgroup_id([{threads // 128}])", "T.warp_id_in_wg([4])",
                "T.lane_id([32])", "T.thread_id_in_wg([128])"]
    if scope in ("cta", "cluster", "warpgroup") and whole:
        return [f"T.warp_id([{threads // 32}])", "T.lane_id([32])"]
    return []


# copy_async's config keys that name a value of the kernel rather than
# hold one: the guard (`predicate: p`, an int parameter, as TVM's test
# passes `tid < 16`) and the mbarrier (a handle parameter, as upstream's
# TMA tests pass `Var("mbar", "handle")`).
_NAMED_CONFIG = {"predicate": "T.int32", "mbar": "T.handle"}


def _config_kwargs(spec: dict, params: list, dm) -> list:
    """The call's keyword arguments (dm._call_kwargs), a named guard or
    mbarrier of copy_async as a kernel parameter of that name; an mbarrier
    that is an element of a declared buffer as TVM takes it
    (`mbar.ptr_to([0])`, as upstream's dsmem test passes it) and the peer
    rank and a multicast mask as the expressions they are (`1 - cbx`)."""
    if spec.get("op") != "copy_async":
        return dm._call_kwargs(spec, params)
    config = dict(spec.get("config") or {})
    kw = []
    m = re.fullmatch(r"\s*(\w+)\s*\[(.*)\]\s*", str(config.get("mbar", "")))
    if m and m.group(1) in spec.get("buffers", {}):
        del config["mbar"]
        kw.append(f"mbar={m.group(1)}.ptr_to([{m.group(2)}])")
    if "remote_cta_id" in config:
        kw.append(f"remote_cta_id={config.pop('remote_cta_id')}")
    if isinstance(config.get("cta_mask"), str):
        # A multicast mask over the call's scalars and ids: the
        # expression it is (`cta_mask=m`), as the peer rank above.
        kw.append(f"cta_mask={config.pop('cta_mask')}")
    for key, kind in _NAMED_CONFIG.items():
        name = config.get(key)
        if isinstance(name, str) and name.isidentifier():
            del config[key]
            params.append(f"{name}: {kind}")
            kw.append(f"{key}={name}")
    # An mbarrier given as an element of a declared shared buffer
    # (`mbar: "mbar[0]"`, the TMA cases): its address, as TVM's probes
    # write it (`mbar=mbar.ptr_to([0])`).
    m = re.fullmatch(r"(\w+)\[(.+)\]", str(config.get("mbar", "")))
    if m and m.group(1) in (spec.get("buffers") or {}):
        del config["mbar"]
        kw.append(f"mbar={m.group(1)}.ptr_to([{m.group(2)}])")
    return dm._call_kwargs({**spec, "config": config}, params) + kw


# What TVM's pipeline says of the harness's tensor-memory buffer after
# tmem<->local was chosen (the allocated address's shared buffer is not
# bound in the kernel; design/copy_async/plan.md section 2.5 saw it too).
TMEM_HARNESS = "_taddr.source"


def _top_args(text: str) -> list:
    """The comma-separated arguments of a call's argument text, split at
    its top level only (brackets and quotes kept whole)."""
    args, depth, cur, quote = [], 0, [], None
    for ch in text:
        if quote:
            cur.append(ch)
            quote = None if ch == quote else quote
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        args.append("".join(cur).strip())
    return args


_EVAL_T = type("T", (), {"floordiv": staticmethod(lambda a, b: a // b),
                         "floormod": staticmethod(lambda a, b: a % b),
                         "int32": staticmethod(int), "uint32": staticmethod(int)})


def tcgen05_issues(script: str) -> list:
    """Every tcgen05.ld/st a TIRx text issues, in order, as (ld|st, shape,
    xN, row, column, first register word, registers): TVM's impl (its
    `for slab in range(N)` loops unrolled, its `NAME: T.int32 = EXPR`
    bindings substituted) or tiledispatch's emitted TIRx.  None where an
    expression is not a constant of the loops and bindings."""
    lines = script.splitlines()
    out: list = []

    def walk(i: int, indent: int, env: dict) -> int:
        while i < len(lines):
            ln = lines[i]
            body = ln.strip()
            ind = len(ln) - len(ln.lstrip())
            if body and ind < indent:
                return i
            m = re.match(r"for (\w+) in (?:T\.serial|range)\((\d+)\):$", body)
            if m:
                end = i + 1
                for v in range(int(m.group(2))):
                    end = walk(i + 1, ind + 1, {**env, m.group(1): v})
                i = end
                continue
            m = re.match(r"(\w+): T\.int32 = (.+)$", body)
            if m:
                env[m.group(1)] = eval(m.group(2), {"T": _EVAL_T}, dict(env))
            m = re.match(r"T\.ptx\.tcgen05\((.*)\)$", body)
            if m:
                out.append(_issue(_top_args(m.group(1)), env))
            i += 1
        return i

    try:
        walk(0, 0, {})
    except (NameError, SyntaxError, TypeError):
        return None
    return out


def _issue(args: list, env: dict) -> tuple:
    """One T.ptx.tcgen05 load or store: its operands are the registers and
    the address (last for a load, first for a store), then the strings."""
    strs = [a.strip("\"") for a in args if a.startswith("\"")]
    ops = [a for a in args if not a.startswith("\"")]
    ld = strs[0] == "ld"
    addr = ops[-1] if ld else ops[0]
    regs = ops[:-1] if ld else ops[1:]
    ev = lambda e: eval(e, {"T": _EVAL_T}, dict(env))  # noqa: E731
    row = col = 0
    m = re.match(r"T\.cuda\.get_tmem_addr\((.*)\)$", addr)
    if m:
        _, r, c = _top_args(m.group(1))
        row, col = ev(r), ev(c)
    # A register is a word of a view; TVM prints word 0 of a one-word view
    # as the view's name.
    first = regs[0] if regs else None
    word = (ev(first[first.rindex("[") + 1:-1]) if first and first.endswith("]")
            else 0 if first else None)
    return (strs[0], strs[3], strs[4], row, col, word, len(regs))


def copy_source(spec: dict, dm) -> str:
    """The one-CTA TVMScript kernel of a copy call file (dm: the
    differential module, its buffer, operand and prologue writers).  Operands given
    as `srcs` (the operand check's cases: two regions, a literal) are
    passed as written, for TVM's front end to judge."""
    launch_extents = dm.launch_extents
    scope = spec.get("scope", "thread")
    if scope not in _NS:
        raise ValueError(f"scope {scope}")
    launch = spec.get("launch") or {}
    # TVM's thread ids take several extents (threadIdx.x, .y, .z); the
    # scope ids are declared for one-dimensional launches only.
    dims = [launch.get(f"threadIdx.{a}", 1) for a in "xyz"]
    while len(dims) > 1 and dims[-1] == 1:
        dims.pop()
    cluster = launch.get("cluster")
    threads, blocks = launch_extents({k: v for k, v in launch.items()
                                      if not k.startswith("threadIdx.")
                                      and k != "cluster"} |
                                     {"threadIdx.x": dims[0]})
    # The wheel takes one shared.dyn allocation per kernel: the others
    # become `shared` (the same to every copy_async predicate, which
    # match `shared*`).
    bufs, dyn = {}, False
    for name, b in spec["buffers"].items():
        if b["scope"] == "shared.dyn":
            if dyn:
                b = {**b, "scope": "shared"}
            dyn = True
        bufs[name] = b
    params, head, body = dm._declare_buffers({**spec, "buffers": bufs})
    # Declared scalars (a pipeline's stage k): int32 parameters of the
    # kernel, as the programs pass them.
    params += [f"{n}: T.{(v or {}).get('dtype', 'int32')}"
               for n, v in (spec.get("scalars") or {}).items()]
    # What copy takes no part in (reduce axes, accum, extras) is passed as
    # written too: TVM's front end decides what becomes of it.
    kw = []
    if "axes" in spec:
        kw.append(f"axes={list(spec['axes'])!r}")
    if "accum" in spec:
        kw.append(f"accum={bool(spec['accum'])}")
    kw += _config_kwargs(spec, params, dm)
    ln = dm._prologue(params, head, blocks)
    if cluster:
        # A cluster kernel declares its ids in the cluster before the CTA
        # ids (as design/copy_async/probes/probe.py learned the wheel
        # wants them).
        ext = list(cluster) + [1] * (3 - len(cluster))
        while len(ext) > 1 and ext[-1] == 1:
            ext.pop()
        ln.insert(len(ln) - 1, f"    {', '.join(['cbx', 'cby', 'cbz'][:len(ext)])} = "
                               f"T.cta_id_in_cluster([{', '.join(map(str, ext))}])")
    if len(dims) == 1:
        ln += [f"    {s}" for s in _scope_ids(scope, threads)]
    ln.append(f"    {', '.join(['tx', 'ty', 'tz'][:len(dims)])} = "
              f"T.thread_id([{', '.join(map(str, dims))}])")
    ln += body
    srcs = spec["srcs"] if "srcs" in spec else [spec["src"]]
    ops = [dm._tvm_operand(str(spec["dst"]), spec, params)]
    ops += [dm._tvm_operand(o, spec, params) for o in srcs]
    # A block-tiled region names the CTA ids as launch axes
    # (blockIdx.x); the kernel's are bx, by, bz (dm._prologue).
    ops = [re.sub(r"\bblockIdx\.([xyz])\b", r"b\1", o) for o in ops]
    ln[1] = f"def f({', '.join(params)}):"
    op = spec.get("op", "copy")
    if op not in ("copy", "copy_async"):
        raise ValueError(f"op {op}")
    ln.append(f"    {_NS[scope]}.{op}({', '.join(ops + kw)})")
    return "\n".join(ln) + "\n"


def tvm_copy(spec: dict, dm) -> tuple[str, set | None, str, float]:
    """(TVM's variant or 'no match', the PTX memory instructions of its CUDA
    or None where it produced none, why, seconds) for a copy call file; dm
    is the differential module (its recorder and reason parser)."""
    import tvm
    import tvm.script

    import tvm.backend.cuda.tile_primitive  # noqa: F401  (registers the variants)

    dm._record_impls()
    dm._CHOSEN.clear()
    _hook_cp_plan()
    _CP_PLAN.clear()
    _record_tmem_impl()
    TMEM_ISSUES.clear()
    t = time.perf_counter()
    why = ""
    ptx = None
    try:
        src = copy_source(spec, dm)
    except (ValueError, dm.Unsupported) as e:
        return f"not run ({e})", None, "", 0.0
    try:
        func = tvm.script.parse(src)
        target = tvm.target.Target({"kind": "cuda", "arch": spec.get("arch") or "sm_90a"})
        with target, warnings.catch_warnings():
            warnings.simplefilter("ignore")   # fallback's UserWarning
            ex = tvm.compile(tvm.IRModule({"main": func}), target=target, tir_pipeline="tirx")
        cuda = (ex.mod if hasattr(ex, "mod") else ex).imports[0].inspect_source()
        ptx = ptx_mem(cuda)
        got = dm._CHOSEN[-1] if dm._CHOSEN else "no match"
    except Exception as e:  # noqa: BLE001
        if dm._CHOSEN:   # selected, then failed later in the pipeline
            got, why = dm._CHOSEN[-1], f"then: {dm._first_line(e)}"
        else:
            got, why = "no match", dm._tvm_reasons(e)
    return got, ptx, why, time.perf_counter() - t


# smem->tmem's lowering, compared where both choose it: the plan TVM's
# planner returned (tcgen05_cp._build_plan, recorded as the dispatch calls
# it; TVM's later pass fails on the harness's tmem address, so its CUDA is
# not known) against the copies tiledispatch's CUDA issues: the shape and
# multicast, the CTA group, the descriptor's LBO, SBO and swizzle mode, and
# the set of (tmem address offset, shared byte offset) of the copies.
_CP_PLAN: list = []
_CP_LAYOUT_MODE = {0: 0, 6: 1, 4: 2, 2: 3}   # descriptor layout type -> TVM's mode
_CP_CALL = re.compile(r"^td_tcgen05_cp(_cg2)?_(\w+?)\((\w+)_taddr(?: \+ (\d+))?, "
                      r"(\w+)_ptr(?: \+ (\d+))?, (\d+), (\d+), (\d+)\);$", re.M)


def _hook_cp_plan():
    from tvm.backend.cuda.tile_primitive.copy_async import tcgen05_cp as cp

    if getattr(cp, "_td_hooked", False):
        return
    inner = cp._build_plan

    def build_plan(op_call, _inner=inner):
        plan = _inner(op_call)
        from tvm.tirx.tile_primitive import TilePrimitiveCall

        op = TilePrimitiveCall.downcast(op_call)
        copies = set()
        total = 1
        for n, _s, _t in plan["middle_iters"]:
            total *= n
        for flat in range(total):
            t_off = s_off = 0
            div = 1
            for n, s_step, t_step in plan["middle_iters"]:
                idx = (flat // div) % n
                div *= n
                t_off += idx * t_step
                s_off += idx * s_step
            copies.add((int(plan["t_addr_off"]) + t_off,
                        (int(plan["init_off_16B"]) + s_off) * 16))
        mc = plan["multicast"]
        _CP_PLAN.append((plan["shape"] + ("_" + mc.replace("::", "_") if mc else ""),
                         int(op.config.get("cta_group", 1)), int(plan["LDO_field"]),
                         int(plan["SDO_field"]), int(plan["swizzle_mode"]),
                         tuple(sorted(copies))))
        return plan

    cp._build_plan = build_plan
    cp._td_hooked = True


def ours_cp_plan(reg: td.Registry, path: Path):
    """tiledispatch's smem->tmem copies, as _CP_PLAN holds TVM's."""
    call = td.Call.from_yaml(path)
    text = reg.dispatch(call).emit("cuda")
    spec = dm_read_spec(path)
    sizes = {n: {"float32": 4, "bfloat16": 2, "float16": 2}.get(b["dtype"], 1)
             for n, b in spec["buffers"].items()}
    copies, key = set(), None
    for m in _CP_CALL.finditer(text):
        key = (m.group(2), 2 if m.group(1) else 1, int(m.group(7)), int(m.group(8)),
               _CP_LAYOUT_MODE.get(int(m.group(9)), -1))
        copies.add((int(m.group(4) or 0), int(m.group(6) or 0) * sizes[m.group(5)]))
    return None if key is None else key + (tuple(sorted(copies)),)


def dm_read_spec(path: Path) -> dict:
    import yaml

    return yaml.safe_load(path.read_text())


# The tcgen05.ld/st issues (tcgen05_issues) of the last call, "tvm" from
# its impl's PrimFunc (TVM's pipeline then fails on the harness's tmem
# address, so its CUDA is not known), "td" from tiledispatch's TIRx.
TMEM_ISSUES: dict = {}


def _record_tmem_impl() -> None:
    """Wraps TVM's tmem<->local impl once, to keep the issues of the
    PrimFunc it returns."""
    import importlib

    m = importlib.import_module("tvm.backend.cuda.tile_primitive.copy_async.tcgen05_ldst")
    if getattr(m.copy_tmem_local_impl, "_td_recorded", False):
        return
    orig = m.copy_tmem_local_impl

    def wrapped(op_call, sctx):
        res = orig(op_call, sctx)
        TMEM_ISSUES["tvm"] = tcgen05_issues(res.script())
        return res

    wrapped._td_recorded = True
    m.copy_tmem_local_impl = wrapped


def ours_copy(reg: td.Registry, path: Path) -> tuple[str, set | None]:
    """(tiledispatch's variant, 'no match' or 'input error: ...'; the PTX
    memory instructions of its CUDA where it selected one)."""
    try:
        call = td.Call.from_yaml(path)
    except td.InputError as e:
        return f"input error: {e.message}", None
    try:
        d = reg.dispatch(call)
    except td.DispatchError:
        return "no match", None
    except td.InputError as e:
        return f"input error: {e.message}", None
    if d.variant == "tmem<->local":
        TMEM_ISSUES["td"] = tcgen05_issues(d.emit("tirx"))
    return d.variant, ptx_mem(d.emit("cuda"))


def read_header(path: Path) -> tuple[str, set | None]:
    """The case's `# expect:` and its `# access:` instructions (None
    without the line; empty for `scalar`)."""
    expect, access = "?", None
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            if line.strip():
                break
            continue
        m = re.match(r"#\s*expect:\s*(\S+)", line)
        if m:
            expect = m.group(1)
        m = re.match(r"#\s*access:\s*(.*?)\s*$", line)
        if m:
            toks = m.group(1).split()
            access = set() if toks == ["scalar"] else set(toks)
    return expect, access


def _show(s: set | None) -> str:
    if s is None:
        return "-"
    return " ".join(sorted(s)) or "scalar"


def _print_markdown(counts: dict, rows: list) -> None:
    """The tables of docs/upstream.md section 6: counts per expected
    variant, then every case that differs."""
    print("| expected variant | cases | TVM agrees (variant and access) | "
          "listed deviation | differs | not run |")
    print("|---|---:|---:|---:|---:|---:|")
    tot = [0] * 5
    for k, c in sorted(counts.items()):
        print(f"| {k} | " + " | ".join(map(str, c)) + " |")
        tot = [a + b for a, b in zip(tot, c)]
    print("| all | " + " | ".join(map(str, tot)) + " |")
    print()
    print("| case | tiledispatch / TVM 0.27 | deviation |")
    print("|---|---|---|")
    for name, expect, mark, detail, dev in rows:
        if mark != "=":
            d = dev.split(" ", 1)[0] if dev.strip() else "**none listed**"
            print(f"| `{name}` | {detail.replace('|', '/')} | {d} |")


def run(files: list, reg: td.Registry, dm, markdown: bool = False) -> tuple[int, list]:
    """Compares every copy case of files; prints one row per case and the
    counts per expected variant; returns (unexplained differences, the
    printed summary lines)."""
    counts: dict = {}       # expect -> [cases, agree, deviation, differ, not run]
    rows = []
    access_line = [0, 0]    # cases with `# access:` TVM lowered; TVM's equals it
    spent = []
    crashed = 0
    stale: list = []   # listed deviations where TVM agrees after all
    plans = [0, 0]     # smem->tmem cases both lowered; same plan
    for f in files:
        expect, access = read_header(f)
        theirs, their_ptx, why, secs = tvm_copy(dm.read_spec(f), dm)
        ours, ours_ptx = ours_copy(reg, f)
        issues_differ = False
        if secs:
            spent.append(secs)
        refused = ours == "no match" or ours.startswith("input error")
        if why.startswith("then:") and TMEM_HARNESS in why:
            # TVM chose, then a later pass of its own failed on the
            # harness's tensor-memory address (the kernel has no
            # tcgen05.alloc TVM accepts): its choice stands, and its
            # access is what its impl's PrimFunc issues (every tcgen05.ld/st
            # with its shape, .num, row, column and registers), compared
            # issue by issue with tiledispatch's TIRx.
            tvm_iss = TMEM_ISSUES.get("tvm")
            if tvm_iss:
                why = ""
                their_ptx = {f"tcgen05.{d}.sync.aligned.{sh}.{x}.b32"
                             for d, sh, x, *_ in tvm_iss}
                td_iss = TMEM_ISSUES.get("td")
                issues_differ = theirs == ours and td_iss != tvm_iss
                if issues_differ:
                    why = f"issues: td {td_iss}; tvm {tvm_iss}"
            else:
                why = ("TVM's later pass fails on the harness's tmem address: "
                       "variant only")
        elif why.startswith("then:"):   # TVM selected, then failed: it refuses
            crashed += 1
            why = f"TVM selected {theirs}, {why}"
            theirs = "no match"
        same_variant = theirs == ours or (theirs == "no match" and refused)
        same_access = not issues_differ and (not same_variant or theirs == "no match"
                                             or why or their_ptx == ours_ptx)
        if same_variant and ours == "smem->tmem" and _CP_PLAN:
            # The lowering, where TVM's CUDA is not known.
            mine = ours_cp_plan(reg, f)
            plans[0] += 1
            if mine == _CP_PLAN[-1]:
                plans[1] += 1
            else:
                same_access = False
                why = f"plans differ: td {mine}; tvm {_CP_PLAN[-1]}"
        agree = same_variant and bool(same_access)
        if access is not None and their_ptx is not None and not why:
            # A listed deviation's line pins tiledispatch's access.
            listed = copy_deviation(f.stem) is not None
            access_line[0] += 1
            access_line[1] += _names(their_ptx) == access or listed
            if _names(their_ptx) != access and not listed:
                print(f"access line of {f.stem}: {_show(access)}; TVM emits {_show(their_ptx)}")
        dev = "" if agree else " ".join(copy_deviation(f.stem) or ("", ""))
        if agree and copy_deviation(f.stem) is not None:
            stale.append(f.stem)
        c = counts.setdefault(expect, [0, 0, 0, 0, 0])
        c[0] += 1
        if theirs.startswith("not run"):
            c[4] += 1
        elif agree:
            c[1] += 1
        elif dev.strip():
            c[2] += 1
        else:
            c[3] += 1
        mark = "=" if agree else ("~" if dev.strip() else "!")
        detail = ""
        if not same_variant:
            detail = f"td={ours} tvm={theirs}"
        elif not agree:
            detail = f"{ours}: td {_show(ours_ptx)}; tvm {_show(their_ptx)}"
        else:
            detail = f"{ours[:30]} {_show(their_ptx) if theirs != 'no match' else ''}"
        if why:
            detail += f" ({why[:120]})"
        rows.append((f.stem, expect, mark, detail, dev))
    unexplained = sum(c[3] for c in counts.values())
    # Never pass silently: every expected variant must have run against TVM.
    silent = sorted(k for k, c in counts.items() if c[4] == c[0])
    if silent:
        print(f"copy: expected variants no case exercised against TVM: {', '.join(silent)}")
        unexplained += len(silent)
    if markdown:
        _print_markdown(counts, rows)
    else:
        for name, expect, mark, detail, dev in rows:
            print(f"{mark} {name:<44} {detail}" + (f"  [{dev[:80]}]" if dev.strip() else ""))
    summary = ["", "copy: expected variant | cases | TVM agrees (variant and access) | "
               "listed deviation | differs | not run"]
    tot = [0] * 5
    for k, c in sorted(counts.items()):
        summary.append(f"copy {k} | " + " | ".join(map(str, c)))
        tot = [a + b for a, b in zip(tot, c)]
    summary.append("copy all | " + " | ".join(map(str, tot)))
    summary.append(f"copy access lines: TVM lowered {access_line[0]} cases that have one; "
                   f"TVM's instructions equal the line in {access_line[1]} (listed "
                   f"deviations: the line is tiledispatch's)")
    summary.append(f"copy smem->tmem lowerings: both lowered {plans[0]} cases; the same "
                   f"copies (shape, CTA group, LBO, SBO, swizzle, tmem and shared offsets) "
                   f"in {plans[1]}")
    summary.append(f"copy: TVM selected a variant, then failed in its own pipeline (counted "
                   f"as refusing): {crashed}")
    unexplained += access_line[0] - access_line[1]
    if stale:
        summary.append(f"copy: listed as deviations, yet TVM agrees: {', '.join(stale)}")
        unexplained += len(stale)
    if spent:
        spent.sort()
        summary.append(f"copy: TVM's tvm.compile median {spent[len(spent) // 2] * 1e3:.0f} ms, "
                       f"total {sum(spent):.0f} s over {len(spent)} cases")
    summary.append(f"copy differences not listed as deviations: {unexplained}")
    for ln in summary:
        print(ln)
    return unexplained, summary
