#!/usr/bin/env python3
"""The gemm cases of the upstream differential: every tests/conformance
file with `op: gemm`, built as a TVM kernel and lowered by TVM 0.27's own
dispatcher (`mma.m16n8k*`), against what tiledispatch emits for the same
call, mma.sync issue by issue.

    gemm_differential.py [--cases DIR] [--show] [NAME...]

(differential.py runs it on the gemm files too: run(files, reg, dm).)

Each call file becomes a one-CTA TVMScript kernel, as upstream's
test_gemm_mma_m16n8k_.py builds its own (`_build_tiled(..., store=True)`):
the four operands allocated as register fragments in their layouts, the
scope's thread ids, the call `Tx.<scope>.gemm(D, A, B, C, transpose_A=,
transpose_B=, alpha=, beta=)` (under `if` the call file's `active:` set),
then each thread's D registers stored to a global buffer so that the CUDA
keeps them.  tvm.compile(..., tir_pipeline="tirx") for the call's arch
gives TVM's CUDA; tiledispatch's is `Registry.dispatch(call).emit("cuda")`
under rules/upstream.yaml (TVM's dispatch: tiledispatch's own
mma_ext.m16n8k* is off there, so its cases are TVM's declines).

Compared, where TVM lowers:
- the mma.sync issues in order: the instruction (shape and the D, A, B, C
  types of the helper's name), and per issue which registers of D, A, B
  and C it passes, in the order passed (TVM's `((uint*)A_ptr)[5]` and our
  `((unsigned int *)A_ptr)[5]` are both A's word 5);
- the initialisation of D before each output tile (zero for beta 0, C's
  register for beta 1), as the list of (D register, source) assignments.
Where TVM refuses: its reason (the dispatcher's row `declined — ...` or
`rejected: PRED — ...`) against tiledispatch's explain row of the same
variant, word for word; an assertion inside TVM's emitter (plan D4/D9)
against the operand check's refusal (`# expect: error`) with the same text.

Where tiledispatch deviates on purpose (docs/upstream.md, section 8: D2
arch, D3 thread scope, the partial warp, the operand check) the case is
listed in DEVIATIONS with what each side must do; a listed deviation that
no longer happens fails too.  Exit 0 when every case agrees or deviates
as listed.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TVM_PIN = "0.27.0.post1"
VARIANT = "mma.m16n8k*"

_NS = {"thread": "Tx.thread", "warp": "Tx.warp", "warpgroup": "Tx.wg", "cta": "Tx.cta",
       "cluster": "Tx.cluster"}
# The thread-id variables the kernel declares, by active-set axis (a
# call file's `active: {AXIS: [lo, hi]}` is the call under `if lo <= VAR < hi`).
_ACTIVE_VAR = {"laneid": "lane", "warpid": "warp", "wid_in_wg": "wiw", "tx": "tx"}

# Deliberate deviations (docs/upstream.md, section 8), by case: (what TVM
# does: "lowers" or a text its failure holds, what tiledispatch does:
# "refuses" with the text of its reason, or "emits" an instruction, why).
DEVIATIONS = {
    "gemm_thread_scope": (
        "lowers", "refuses", "mma.sync is warp-collective; thread scope is not supported",
        "D3: Tx.thread.gemm passes TVM's full_active_lanes vacuously and lowers the "
        "warp-collective mma.sync for one thread"),
    "gemm_partial_warp": (
        "lowers", "refuses",
        "threadIdx.x extent 48 is not a multiple of 32 (warp-scope mma.sync needs whole warps)",
        "a warp-scope mma.sync in a CTA of 48 threads: the second warp is partial and "
        "mma.sync.aligned needs all 32 lanes; TVM does not check the launch"),
    "gemm_cta_partial_warp": (
        "lowers", "refuses", "threadIdx.x extent 80 is not a multiple of 32",
        "a cta-scope mma.sync over 80 threads: the third warp is partial"),
    "gemm_k16_f16_sm70": (
        "lowers", "refuses", "on sm_70",
        "D2: TVM lowers mma.sync.m16n8k16 for sm_70, which ptxas refuses; tiledispatch "
        "declines with TVM's text plus the arch clause"),
    "gemm_k16_f16_sm75": (
        "lowers", "emits", "m16n8k8_row_col_f32_f16_f16_f32",
        "D2: TVM lowers m16n8k16 for sm_75, which ptxas refuses; the k16 fragments "
        "carve as two m16n8k8 steps, which sm_75 has"),
    "gemm_k16_bf16_sm75": (
        "lowers", "refuses", "on sm_75",
        "D2: TVM lowers the bf16 mma.sync for sm_75, which ptxas refuses (bf16 needs sm_80)"),
    "gemm_cta_symbolic_tx": (
        "lowers", "refuses", "non-static threadIdx.x extent nt",
        "TVM turns its exec-context tracking off for a symbolic threadIdx.x extent "
        "(`ExecContext tracking disabled`), so full_active_lanes sees no active set and "
        "passes; tiledispatch refuses with the reason TVM's own predicate has for it"),
    # D12: a 16-bit A or B region that starts past the buffer's first
    # register: TVM indexes the uint32 view of the fragment with the
    # region's element offset instead of its word offset (half of it), so
    # its mma.sync reads other registers than the region's, past the end of
    # the fragment for A[16:32, 16:32] of a 32 x 32 A (word 24 of 16).
    "gemm_tvm_region_A_second_k": (
        "lowers", "words", "", "D12: TVM's A words are the region's element offset "
        "(24..27) where the region's registers are words 12..15"),
    "gemm_tvm_region_B_second_n": (
        "lowers", "words", "", "D12: TVM's B words are the region's element offset "
        "(4, 5) where the region's registers are words 2, 3"),
    "gemm_tvm_region_all_tiled": (
        "lowers", "words", "", "D12: TVM's A and B words are the regions' element "
        "offsets (A 8..11, B 12, 13) where the regions' registers are words 4..7 and 6, 7"),
    "gemm_tvm_region_cannot_slice": (
        "gemm mma: D dims (16, 2) != (M=16, N=8)", "refuses",
        "gemm mma: D dims (16, 2) != (M=16, N=8)",
        "D4/D9: TVM asserts the shape agreement inside its emitter (an `exception` row); "
        "tiledispatch refuses the call in the op's operand check with the assert's text"),
}

# Cases TVMScript cannot state, so TVM's answer is not the variant's:
# (what TVM must do: "lowers", or a text its failure holds; why).  tiledispatch's answer is the
# case's `# error:` (tests/conformance/run.py checks it).
NOT_STATABLE = {
    "gemm_active_tx": (
        "lowers", "an active set with a `tx` axis: TVM's scope analysis never makes one (a "
        "guard on tx at warp scope narrows laneid or is dropped); the case reaches "
        "the predicate's `unsupported active-set axis` reason, which only a call "
        "file can"),
    "gemm_cta_no_launch": (
        "kernel has no thread launch parameters",
        "a cta-scope call without threadIdx.x in the launch: TVM refuses the kernel "
        "before dispatch; the predicate's reason is reached only through a call file"),
}


class Unsupported(Exception):
    pass


def _regs(layout: str) -> int:
    """Per-thread storage of a register fragment: the largest memory offset
    of its layout (the strides without an `@axis`) plus one."""
    m = re.search(r"\(([^()]*)\)\s*:\s*\(([^()]*)\)", layout)
    if not m:
        raise Unsupported(f"layout {layout!r}")
    ext = [int(x) for x in m.group(1).split(",") if x.strip()]
    strides = [x.strip() for x in m.group(2).split(",") if x.strip()]
    last = 0
    for e, s in zip(ext, strides):
        if "@" not in s:
            last += (e - 1) * int(s)
    return last + 1


def _iters(layout: str) -> list:
    """(extent, stride or None for a thread axis) of a layout's iters."""
    m = re.search(r"\(([^()]*)\)\s*:\s*\(([^()]*)\)", layout)
    ext = [int(x) for x in m.group(1).split(",") if x.strip()]
    strides = [x.strip() for x in m.group(2).split(",") if x.strip()]
    return [(e, None if "@" in st else int(st)) for e, st in zip(ext, strides)]


def region_offset(spec: dict, key: str) -> int:
    """The memory offset (elements of the thread's fragment) of the first
    element of the call's `key` region: its origin's row-major index over
    the buffer's shape, decomposed by the layout's extents (last fastest),
    through the memory strides."""
    name = str(spec[key]).split("[", 1)[0].strip()
    b = spec["buffers"][name]
    starts = [int(r.split(":")[0] or 0)
              for r in str(spec[key]).split("[", 1)[1].rstrip("]").split(",")]
    flat = 0
    for st, n in zip(starts, b["shape"]):
        flat = flat * n + st
    off = 0
    for e, stride in reversed(_iters(b["layout"])):
        i, flat = flat % e, flat // e
        off += i * (stride or 0)
    return off


def gemm_source(spec: dict, dm) -> str:
    """The one-CTA TVMScript kernel of a gemm call file (dm: the
    differential module, its buffer writers)."""
    scope = spec.get("scope", "warp")
    if scope not in _NS:
        raise Unsupported(f"scope {scope}")
    launch = dict(spec.get("launch") or {})
    cluster = launch.pop("cluster", None)
    threads = launch.get("threadIdx.x")
    params, head, body = dm._declare_buffers(spec)
    out_dtype = spec["buffers"][dm._region_buffer(str(spec["dst"]))]["dtype"]
    ln = dm._prologue(["Out_ptr: T.handle"] + params, head, [1])
    if cluster:
        # A cluster of the call file's size: one cluster of CTAs.
        ext = [e for e in cluster if e != 1] or [1]
        ln[-1] = f"    bx = T.cta_id([{ext[0]}])"
        ln.insert(len(ln) - 1, f"    cbx = T.cta_id_in_cluster([{ext[0]}])")
    store = None
    if isinstance(threads, int):
        if scope == "warpgroup" and threads % 128 == 0:
            ln += [f"    wg = T.warpgroup_id([{threads // 128}])",
                   "    wiw = T.warp_id_in_wg([4])", "    lane = T.lane_id([32])"]
        elif threads % 32 == 0:
            ln += [f"    warp = T.warp_id([{threads // 32}])", "    lane = T.lane_id([32])"]
        ln.append(f"    tx = T.thread_id([{threads}])")
    elif isinstance(threads, str):
        # A launch extent known at run time: a scalar parameter.
        params.append(f"{threads}: T.int32")
        ln.append(f"    tx = T.thread_id([{threads}])")
    ln[1] = f"def f({', '.join(['Out_ptr: T.handle'] + params)}):"
    ln += body
    dname = dm._region_buffer(str(spec["dst"]))
    d = spec["buffers"][dname]
    if d["scope"] == "local" and d.get("layout") and isinstance(threads, int):
        store = _regs(d["layout"])
        ln.insert(2, f'    Out = T.match_buffer(Out_ptr, [{threads}, {store}], "{out_dtype}")')
    ops = [str(spec[k]) for k in ("dst", "a", "b", "c")]
    kw = [f"transpose_A={bool(spec.get('transpose_A', False))}",
          f"transpose_B={bool(spec.get('transpose_B', False))}",
          f"alpha={float(spec.get('alpha', 1.0))!r}", f"beta={float(spec.get('beta', 0.0))!r}"]
    kw += [f"{k}={v!r}" for k, v in (spec.get("config") or {}).items()]
    call = f"{_NS[scope]}.gemm({', '.join(ops + kw)})"
    conds = []
    for axis, (lo, hi) in (spec.get("active") or {}).items():
        var = _ACTIVE_VAR.get(axis)
        if var is None:
            raise Unsupported(f"active axis {axis}")
        conds += ([f"{var} >= {lo}"] if lo else []) + [f"{var} < {hi}"]
    if conds:
        ln += [f"    if {' and '.join(conds)}:", f"        {call}"]
    else:
        ln.append(f"    {call}")
    if store is not None:
        ln += [f"    D_reg = {dname}.local({store})", f"    for i in T.unroll({store}):",
               "        Out[tx, i] = D_reg[i]"]
    return "\n".join(ln) + "\n"


# One mma.sync call of a CUDA text: the helper's instruction suffix and its
# arguments.
TVM_CALL = re.compile(r"^\s*tvm_builtin_ptx_mma_(\w+)\((.*)\);\s*$", re.M)
OUR_CALL = re.compile(r"^\s*td_ptx_mma_(\w+)\((.*)\);\s*$", re.M)
_REG = re.compile(r"^\(*(?:\((?:uint|unsigned int|uint32_t)\s*\*\))?(\w+?)(?:_ptr)?\)?\[(\d+)\]$")
_INIT = re.compile(r"^\s*(\w+?)(?:_ptr)?\[(\d+)\] = (.*?);\s*$", re.M)


def _reg(arg: str) -> str:
    """`A[5]` for `((uint*)A_ptr)[5]`, `((unsigned int *)A_ptr)[5]`, `A_ptr[5]`."""
    a = arg.strip()
    m = _REG.match(a.replace(" ", "").replace("unsignedint", "unsigned int"))
    return f"{m.group(1)}[{m.group(2)}]" if m else a


def _split_args(text: str) -> list:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += ch in "([" and 1 or (-1 if ch in ")]" else 0)
        cur += ch
    out.append(cur)
    return [_reg(a) for a in out]


def _init_value(v: str, c: str) -> str:
    """An initialisation's source: '0' for a zero literal in any spelling
    (TVM's `0x0p+0f/*0.000000e+00*/`, our `0.000000e+00f`), else the
    register it copies (`C[3]`)."""
    v = re.sub(r"/\*.*?\*/", "", v).strip()
    # A conversion of the literal (float16 accumulators): __float2half(0.f).
    v = re.sub(r"^__float2half(?:_rn)?\((.*)\)$", r"\1", v).strip().rstrip("f").strip("()")
    for parse in (float, float.fromhex):
        try:
            if parse(v) == 0.0:
                return "0"
        except ValueError:
            pass
    m = re.fullmatch(r"\(*(?:\(\w+\))?(\w+?)(?:_ptr)?\)?\[(\d+)\]\)*", v.replace(" ", ""))
    return f"{m.group(1)}[{m.group(2)}]" if m else v


def issues(pattern, cuda: str, dname: str, cname: str) -> list:
    """The mma.sync issues of a CUDA text in order: (instruction, args,
    inits) with inits the D assignments between the previous issue and
    this one, as (D register, source).  The instruction is the helper's
    name from `sync_aligned_` on (TVM names its helpers of the forms it
    does not register itself `..._f16acc_sync_aligned_...`,
    `..._int_sync_aligned_...`)."""
    out, pos = [], 0
    for m in pattern.finditer(cuda):
        inits = [(f"{i.group(1)}[{i.group(2)}]", _init_value(i.group(3), cname))
                 for i in _INIT.finditer(cuda[pos:m.start()]) if i.group(1) == dname]
        inst = re.sub(r"^\w*?(?=sync_aligned_)", "", m.group(1))
        out.append((inst, _split_args(m.group(2)), inits))
        pos = m.end()
    return out


def _roles(inst: str, args: list) -> dict:
    """The issue's arguments by operand: D and C registers, A and B words
    (their counts from the PTX fragment sizes of the instruction)."""
    m = re.search(r"m16n8k(\d+)_row_col_(\w+?)_(\w+?)_(\w+?)_(\w+)$", inst)
    k, dt = (int(m.group(1)), m.group(2)) if m else (16, "f32")
    nd = 2 if dt == "f16" else 4
    bits = {"f16": 16, "bf16": 16, "tf32": 32, "s8": 8, "u8": 8, "e4m3": 8, "e5m2": 8}
    ab = bits.get(m.group(3) if m else "f16", 16)
    na = 16 * k * ab // 32 // 32
    nb = 8 * k * ab // 32 // 32
    return {"D": args[:nd], "A": args[nd:nd + na], "B": args[nd + na:nd + na + nb],
            "C": args[nd + na + nb:]}


def tvm_gemm(spec: dict, dm) -> tuple:
    """(outcome, CUDA or reason, seconds): ('lowered', cuda), ('declined',
    reason), ('rejected', 'PRED — reason'), ('other', first line)."""
    import tvm
    import tvm.script

    import tvm.backend.cuda.tile_primitive  # noqa: F401  (registers the variants)

    t = time.perf_counter()
    src = gemm_source(spec, dm)
    try:
        func = tvm.script.parse(src)
        target = tvm.target.Target({"kind": "cuda", "arch": spec.get("arch") or "sm_80"})
        with target, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ex = tvm.compile(tvm.IRModule({"main": func}), target=target, tir_pipeline="tirx")
        cuda = (ex.mod if hasattr(ex, "mod") else ex).imports[0].inspect_source()
        return "lowered", cuda, time.perf_counter() - t
    except Exception as e:  # noqa: BLE001
        secs = time.perf_counter() - t
        row = _tvm_row(str(e))
        if row is not None:
            return row[0], row[1], secs
        return "other", dm._first_line(e), secs


def _tvm_row(text: str):
    """TVM's row of mma.m16n8k* in its dispatch failure table, the lines
    of a wrapped cell joined: (kind, reason)."""
    if "dispatch failed" not in text:
        return None
    cells, on = [], False
    for ln in text.splitlines():
        m = re.match(r"^\| (\S+) \(prio=-?\d+\)\s*\| (.*?)\s*\|$", ln)
        if m:
            on = m.group(1) == VARIANT
            if on:
                cells.append(m.group(2))
            continue
        m = re.match(r"^\|\s+\| (.*?)\s*\|$", ln)
        if m and on:
            if m.group(1).startswith("opcall:"):
                on = False
            else:
                cells.append(m.group(1))
        elif not ln.startswith("|"):
            on = False
    if not cells:
        return None
    return _row_kind(_join_cells(cells))


def _join_cells(cells: list) -> str:
    """TVM wraps a long cell over several lines, breaking at a space or
    inside a word: join with a space where the break was at a space."""
    out = cells[0]
    for c in cells[1:]:
        out += c if (out.endswith(("(", "[", "_", ".")) or not c[:1].isalnum()
                     and c[:1] not in "'(") else " " + c
    return out


def _row_kind(cell: str) -> tuple:
    m = re.match(r"^declined \u2014 (.*)$", cell)
    if m:
        return "declined", m.group(1)
    m = re.match(r"^rejected: (\S+) \u2014 (.*)$", cell)
    if m:
        return "rejected", f"{m.group(1)} \u2014 {m.group(2)}"
    m = re.match(r"^exception \u2014 \w+: (.*)$", cell)
    if m:
        return "exception", m.group(1)
    return "other", cell


def ours_gemm(reg, path: Path, dm) -> tuple:
    """(outcome, CUDA or reason): ('lowered', cuda), ('declined', reason),
    ('rejected', 'PRED — reason'), ('refused', the operand check's
    message), or ('other', what happened)."""
    import tiledispatch as td

    call, err = dm._load_call(path)
    if call is None:
        return "refused", re.sub(r"^input error: ", "", err)
    try:
        rows = [r for r in reg.explain(call) if r.variant == VARIANT]
    except td.InputError as e:
        return "refused", e.message
    if not rows:
        return "other", dm._select(reg, call)
    row = rows[0]
    if row.status == "selected":
        return "lowered", reg.dispatch(call).emit("cuda")
    kind, text = _row_kind(row.message)
    if kind == "other":
        return row.status, row.message
    return kind, text


def _compare_lowered(tcuda: str, ocuda: str, spec: dict, dm, words: bool = False) -> str:
    """'' when the mma.sync issues (and D's initialisation) are the same,
    else the first difference.  With `words` (D12), TVM's A and B word
    indices must be ours plus half the region's element offset, nonzero for
    at least one of them: TVM indexes the word view with the element
    offset."""
    dname = dm._region_buffer(str(spec["dst"]))
    cname = dm._region_buffer(str(spec["c"]))
    theirs = issues(TVM_CALL, tcuda, dname, cname)
    ours = issues(OUR_CALL, ocuda, dname, cname)
    if not theirs:
        return "no mma.sync call in TVM's CUDA"
    if len(theirs) != len(ours):
        return f"TVM issues {len(theirs)} mma.sync, tiledispatch {len(ours)}"
    for i, ((ti, ta, tn), (oi, oa, on)) in enumerate(zip(theirs, ours)):
        if ti != oi:
            return f"issue {i}: TVM {ti}, tiledispatch {oi}"
        tr, orr = _roles(ti, ta), _roles(oi, oa)
        if words:
            for op, key in (("A", "a"), ("B", "b")):
                half = region_offset(spec, key) // 2
                orr[op] = [re.sub(r"\[(\d+)\]", lambda m: f"[{int(m.group(1)) + half}]", r)
                           for r in orr[op]]
        for op in "DABC":
            if tr[op] != orr[op]:
                return f"issue {i}: {op} registers: TVM {tr[op]}, tiledispatch {orr[op]}"
        if sorted(tn) != sorted(on):
            return f"issue {i}: D's initialisation: TVM {tn}, tiledispatch {on}"
    if words and not (region_offset(spec, "a") or region_offset(spec, "b")):
        return "listed as D12, but neither A's nor B's region starts past word 0"
    return ""


def ours_through_tvm(reg_all, path: Path, spec: dict, dm) -> str | None:
    """Where tiledispatch lowers the call under the built-in rules (TVM's
    instructions and its own): its TIRx in place of the call in the same
    kernel, parsed and compiled by TVM (TVM's PTX table writes the asm).
    TVM's CUDA must issue what tiledispatch's CUDA issues: the same
    instructions, registers and D initialisation.  None when tiledispatch
    does not lower the call, '' when they agree, else the difference.

    The TIRx stores D's registers as `D[i]` (the IR's per-thread buffer)
    where its mma operands say `D.local()[i]`; in TVM's kernel D is the
    call's 2-D buffer, so the stores are given the same `.local()` view."""
    import tiledispatch as td
    import tvm
    import tvm.script

    call, _ = dm._load_call(path)
    if call is None:
        return None
    try:
        got = reg_all.dispatch(call)
    except (td.DispatchError, td.InputError):
        return None
    names = "|".join(map(re.escape, spec["buffers"]))
    body = re.sub(r"(?<![\w.)])(" + names + r")\[(\d+)\]", r"\1.local()[\2]",
                  got.emit("tirx"))
    lines = gemm_source(spec, dm).rstrip("\n").split("\n")
    at = next(i for i, ln in enumerate(lines) if ".gemm(" in ln)
    ind = re.match(r"^\s*", lines[at]).group(0)
    lines[at:at + 1] = [ind + ln for ln in body.rstrip("\n").split("\n")]
    try:
        func = tvm.script.parse("\n".join(lines) + "\n")
        target = tvm.target.Target({"kind": "cuda", "arch": spec.get("arch") or "sm_80"})
        with target, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ex = tvm.compile(tvm.IRModule({"main": func}), target=target, tir_pipeline="tirx")
        cuda = (ex.mod if hasattr(ex, "mod") else ex).imports[0].inspect_source()
    except Exception as e:  # noqa: BLE001
        return "TVM does not compile tiledispatch's TIRx: " + dm._first_line(e)
    diff = _compare_lowered(cuda, got.emit("cuda"), spec, dm)
    return f"through TVM: {diff}" if diff else ""


def compare(path: Path, reg, dm, reg_all=None) -> tuple:
    """(ok, TVM's outcome, ours, note, seconds) for one gemm call file;
    with reg_all (the built-in rules), also ours_through_tvm."""
    ok, theirs, ours, note, secs = _compare(path, reg, dm)
    if reg_all is not None and not note.startswith("not comparable"):
        thru = ours_through_tvm(reg_all, path, dm.read_spec(path), dm)
        if thru:
            ok, note = False, f"{note}; {thru}"
        elif thru == "":
            note += "; TVM compiles tiledispatch's TIRx to the same issues"
    return ok, theirs, ours, note, secs


def _compare(path: Path, reg, dm) -> tuple:
    spec = dm.read_spec(path)
    try:
        theirs, ttext, secs = tvm_gemm(spec, dm)
    except (Unsupported, dm.Unsupported) as e:
        return False, f"not run ({e})", "", "", 0.0
    ours, otext = ours_gemm(reg, path, dm)
    otext_cmp = re.sub(r"^op '\w+': ", "", otext) if ours == "refused" else otext
    if path.stem in NOT_STATABLE:
        want, why = NOT_STATABLE[path.stem]
        ok = theirs == "lowered" if want == "lowers" else (theirs != "lowered" and want in ttext)
        return ok, theirs, ours, (f"not comparable: {why}" if ok else
                                  f"TVM {theirs} without `{want}`: {ttext[:160]}"), secs
    dev = DEVIATIONS.get(path.stem)
    if dev is not None:
        want_tvm, want_ours, text, why = dev
        tvm_ok = theirs == "lowered" if want_tvm == "lowers" else want_tvm in ttext
        if want_ours == "refuses":
            ours_ok = ours in ("rejected", "declined", "refused") and text in otext_cmp
        elif want_ours == "words":
            ours_ok = ours == "lowered" and tvm_ok and not _compare_lowered(
                ttext, otext, spec, dm, words=True)
        else:
            got = issues(OUR_CALL, otext, "D", "C") if ours == "lowered" else []
            ours_ok = bool(got) and all(i.endswith(text) for i, _, _ in got)
        note = f"deviation ({why})"
        if not (tvm_ok and ours_ok):
            extra = (_compare_lowered(ttext, otext, spec, dm, words=True)
                     if want_ours == "words" and theirs == ours == "lowered" else "")
            note = (f"listed deviation does not happen: TVM {theirs}, tiledispatch "
                    f"{ours} ({otext[:120] if ours != 'lowered' else 'emits'}) {extra}; "
                    f"listed: {why}")
        return tvm_ok and ours_ok, theirs, ours, note, secs
    if theirs == "lowered":
        if ours != "lowered":
            return False, theirs, ours, f"TVM lowers, tiledispatch {ours}: {otext}", secs
        diff = _compare_lowered(ttext, otext, spec, dm)
        n = len(issues(TVM_CALL, ttext, "D", "C"))
        inst = issues(TVM_CALL, ttext, "D", "C")[0][0] if n else "-"
        return not diff, theirs, ours, diff or f"{n} x {inst}, registers and order equal", secs
    if theirs in ("declined", "rejected"):
        ok = ours == theirs and otext == ttext
        return ok, theirs, ours, (ttext if ok else f"TVM: {ttext} | tiledispatch: {otext}"), secs
    if theirs == "exception":
        # An assert inside TVM's emitter (plan D4/D9): tiledispatch refuses
        # the call in the op's operand check with the assert's text, or
        # declines with it.
        ok = ours in ("refused", "declined") and otext_cmp == ttext
        return ok, theirs, ours, (f"TVM asserts, tiledispatch {ours}: {ttext}" if ok else
                                  f"TVM asserts: {ttext} | tiledispatch {ours}: {otext}"), secs
    return False, theirs, ours, f"TVM: {ttext} | tiledispatch {ours}: {otext[:200]}", secs


def upstream_registry():
    """tiledispatch as TVM dispatches: the built-in rules under the
    installed rules/upstream.yaml, which turns mma_ext.m16n8k* (float16
    accumulation, tf32, 8-bit operands: tiledispatch's own) off."""
    import tiledispatch as td

    return td.Registry(rules=[td.upstream_rules_path()], environment=False)


def run(files: list, reg, dm, markdown: bool = False, show: bool = False) -> tuple:
    """Compares every gemm case (under upstream_registry(); `reg`, the
    caller's default registry, is not used); prints one line each and a
    summary; returns (disagreements, rows)."""
    import tiledispatch as td

    reg = upstream_registry()
    reg_all = td.Registry(environment=False)
    bad, rows, thru = 0, [], 0
    kinds: dict = {}
    for f in files:
        ok, theirs, ours, note, secs = compare(f, reg, dm, reg_all)
        thru += "TVM compiles tiledispatch's TIRx" in note
        bad += not ok
        rows.append((f.stem, theirs, ours, note, ok))
        key = ("deviation" if f.stem in DEVIATIONS else
               "not statable in TVMScript" if f.stem in NOT_STATABLE else theirs)
        c = kinds.setdefault(key, [0, 0])
        c[0] += 1
        c[1] += ok
        print(f"{'ok  ' if ok else 'DIFF'} {f.stem}: TVM {theirs}, tiledispatch {ours} "
              f"[{secs:.2f} s]: {note}")
        if show and theirs == "lowered":
            print(gemm_source(dm.read_spec(f), dm))
    print("gemm: TVM's outcome | cases | agree")
    for k, (n, a) in sorted(kinds.items()):
        print(f"  {k} | {n} | {a}")
    print(f"gemm: TVM compiles tiledispatch's TIRx to tiledispatch's mma.sync issues in "
          f"{thru} cases (every case tiledispatch lowers under the built-in rules)")
    print(f"gemm: {len(files) - bad}/{len(files)} cases agree (mma.sync issues and "
          f"registers, D's initialisation, or the reason word for word; "
          f"{len(DEVIATIONS)} listed deviations)")
    return bad, rows


VENDORED = (HERE / "tvm_tests" / "tests" / "python" / "tirx" / "operator" / "tile_primitive"
            / "cuda" / "gemm" / "test_gemm_mma_m16n8k_.py")


# The upstream items whose program is a conformance case (the others,
# test_cuda_gemm_mma_variant_is_registered, _lowers_to_mma_sync and
# _accumulates_c_when_beta_one, check TIRx text: goldens and `list`).
CASE_ITEMS = (r"test_cuda_gemm_mma_(numerical_tiled|numerical_transpose|lowers_tiled|"
              r"codegen_issue_count|lowers_transpose|codegen_transpose|"
              r"rejects_unsupported_dtype|rejects_nonunit_alpha|rejects_fractional_beta)\b")


def from_ids_problems(files: list) -> list:
    """The `# from: test_gemm_mma_m16n8k_.py::ITEM` lines of the cases
    against pytest's ids of the vendored upstream file (collected, not
    run): each must name an item, no item may be named twice, and each
    item of CASE_ITEMS must have a case."""
    import subprocess

    p = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                        "-p", "no:cacheprovider", "-c", "/dev/null", "--rootdir",
                        str(VENDORED.parent), str(VENDORED)],
                       capture_output=True, text=True, cwd=VENDORED.parent)
    ids = {ln.split("::", 1)[1] for ln in p.stdout.splitlines()
           if ln.startswith(VENDORED.name + "::") or "::" in ln and VENDORED.name in ln}
    if not ids:
        return [f"pytest collected no item of {VENDORED.name}: {p.stdout[-300:]}{p.stderr[-300:]}"]
    named: dict = {}
    for f in files:
        for i in re.findall(r"^# from: " + re.escape(VENDORED.name) + r"::(\S+)", f.read_text(),
                            re.M):
            if i in named:
                out_dup = f"{f.stem} and {named[i]} both say they are {i}"
                named.setdefault("__dup__", []).append(out_dup)
            named.setdefault(i, f.stem)
    out = named.pop("__dup__", [])
    out += [f"{stem}: `# from:` names no pytest item of {VENDORED.name}: {i}"
            for i, stem in sorted(named.items()) if i not in ids]
    out += [f"no case is upstream's {i}" for i in sorted(ids)
            if re.match(CASE_ITEMS, i) and i not in named]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=Path, default=ROOT / "tests" / "conformance")
    ap.add_argument("--show", action="store_true", help="print the TVM kernel of each case")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    try:
        import tvm
        import tiledispatch as td
    except ImportError as e:
        print(f"SKIP upstream gemm: {e}")
        return 77
    if getattr(tvm, "__version__", "?") != TVM_PIN:
        print(f"FAIL upstream gemm: apache-tvm {tvm.__version__} is installed; pinned to {TVM_PIN}")
        return 1
    sys.path.insert(0, str(HERE))
    import differential as dm

    files = [f for f in sorted(args.cases.glob("*.yaml"))
             if re.search(r"^op:\s*gemm\s*$", f.read_text(), re.M)]
    if args.names:
        files = [f for f in files if f.stem in args.names]
    missing = [n for n in list(DEVIATIONS) + list(NOT_STATABLE) if not (args.cases / f"{n}.yaml").exists()]
    bad = 0
    if missing and not args.names:
        print(f"listed deviations without a case: {', '.join(missing)}")
        bad += len(missing)
    if not args.names:
        probs = from_ids_problems(files)
        for pr in probs:
            print(f"FAIL {pr}")
        print(f"`# from:` lines: {len(probs)} problems against pytest's ids of the "
              f"vendored {VENDORED.name}")
        bad += len(probs)
    b, _ = run(files, td.Registry(), dm, show=args.show)
    return 1 if bad + b else 0


if __name__ == "__main__":
    sys.exit(main())
