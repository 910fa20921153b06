"""The permute_layout cases of the upstream differential (differential.py
runs it on every tests/conformance file with `op: permute_layout`).

TVM 0.27's warp_xor_swizzle never lowers a valid program: its emitter
uses threadIdx.x without declaring it, and TVMScript's well-formedness
check raises (D1 of design/gemm/plan.md; docs/upstream.md section 8).  So
what is compared is the choice: where TVM's emitter declines, tiledispatch
must decline with the same text; where TVM's emitter gets as far as its
XOR width (recorded from its _choose_xor_k, which _impl calls before it
builds the failing function), tiledispatch must select warp_xor_swizzle
with the same k, and TVM's failure must be D1's (the undefined
threadIdx.x), no other.  Then TVM must parse and compile the TIRx
tiledispatch emits for the call, in the same kernel, with the case's
`# access:` instructions in its CUDA.

usage (from differential.py): run(files, reg, dm) -> (disagreements, rows)
"""
from __future__ import annotations

import re
import time
import warnings
from pathlib import Path

_NS = {"thread": "Tx", "warp": "Tx.warp", "warpgroup": "Tx.wg", "cta": "Tx.cta",
       "cluster": "Tx.cluster"}

# TVM's k of the last _choose_xor_k call (None: no k exists).
_K: list = []

D1_TEXT = "undefined variable threadIdx.x"

# Cases where TVM's emitter raises instead of declining, and tiledispatch
# declines with a reason (docs/upstream.md section 8): the case, the text
# TVM's exception row must hold, and our decline.
DEVIATIONS = {
    "permute_rej_slice_exception": (
        "InternalError: Check failed: (analyzer->CanProveEqual(floormod(extent_i, c), 0))",
        "layout.slice failed"),
}


def _hook_choose_k():
    from tvm.backend.cuda.tile_primitive.permute_layout import warp_xor_swizzle as W

    if getattr(W._choose_xor_k, "_td_recorded", False):
        return
    orig = W._choose_xor_k

    def wrapped(*a, **kw):
        k = orig(*a, **kw)
        _K.append(k)
        return k

    wrapped._td_recorded = True
    W._choose_xor_k = wrapped


def permute_source(spec: dict, dm) -> str:
    """The one-CTA TVMScript kernel of a permute_layout call file: global
    buffers as match_buffer parameters, the others allocated, the launch's
    thread ids, then Tx.<scope>.permute_layout(dst, src)."""
    scope = spec.get("scope", "warp")
    launch = spec.get("launch") or {}
    dims = [launch.get(f"threadIdx.{a}", 1) for a in "xyz"]
    while len(dims) > 1 and dims[-1] == 1:
        dims.pop()
    params, head, body = dm._declare_buffers(spec)
    ln = dm._prologue(params, head, [1])
    ln.append(f"    {', '.join(['tx', 'ty', 'tz'][:len(dims)])} = "
              f"T.thread_id([{', '.join(map(str, dims))}])")
    ln += body
    dst = dm._tvm_operand(str(spec["dst"]), spec, params)
    src = dm._tvm_operand(str(spec["src"]), spec, params)
    kw = [f"{k}={v!r}" for k, v in (spec.get("config") or {}).items()]
    ln[1] = f"def f({', '.join(params)}):"
    ln.append(f"    {_NS[scope]}.permute_layout({', '.join([dst, src] + kw)})")
    return "\n".join(ln) + "\n"


def tvm_permute(spec: dict, dm) -> tuple[str, str, float]:
    """(TVM's outcome, the text, seconds): ('declined', reason),
    ('chosen', 'k=K' or 'k=None'), or ('other', the first line of another
    failure)."""
    import tvm
    import tvm.script

    import tvm.backend.cuda.tile_primitive  # noqa: F401  (registers the variants)

    _hook_choose_k()
    _K.clear()
    t = time.perf_counter()
    try:
        func = tvm.script.parse(permute_source(spec, dm))
        target = tvm.target.Target({"kind": "cuda", "arch": spec.get("arch") or "sm_90a"})
        with target, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tvm.compile(tvm.IRModule({"main": func}), target=target, tir_pipeline="tirx")
        return "lowered", "", time.perf_counter() - t
    except Exception as e:  # noqa: BLE001
        text = str(e)
        secs = time.perf_counter() - t
        if _K and _K[-1] is not None and D1_TEXT in text:
            return "chosen", f"k={_K[-1]}", secs
        m = re.search(r"declined \u2014 (.*?)\s*\|", text)
        if m:
            # The reason may wrap over several table lines.
            reason = dm._tvm_reasons(e)
            reason = re.sub(r"^\S+: declined \u2014 ", "", reason)
            return "declined", reason, secs
        return "other", dm._first_line(e), secs


def ours_permute(reg, path: Path, dm) -> tuple[str, str]:
    """(tiledispatch's outcome, text): ('chosen', 'k=K'), ('declined',
    reason), or what else happened."""
    call, err = dm._load_call(path)
    if call is None:
        return "other", err
    rows = [r for r in reg.explain(call) if r.variant == "warp_xor_swizzle"]
    if not rows:
        return "other", dm._select(reg, call)
    row = rows[0]
    if row.status == "selected":
        m = re.search(r"XOR bits k=(\d+)", " ".join(row.reasons))
        return "chosen", f"k={m.group(1) if m else '?'}"
    if row.status == "declined":
        return "declined", re.sub(r"^declined \u2014 ", "", row.message)
    return row.status, row.message


def ours_through_tvm(reg, path: Path, spec: dict, dm) -> str:
    """Where TVM's own lowering cannot stand (D1), ours must: the TIRx
    tiledispatch emits for the call, put in the same kernel in place of
    the call, parsed and compiled by TVM.  '' when it compiles and its
    CUDA's ld/st.shared instructions are the case's `# access:` line (when
    it has one), else what went wrong."""
    import tvm
    import tvm.script

    call, err = dm._load_call(path)
    if call is None:
        return err
    body = reg.dispatch(call).emit("tirx").replace("threadIdx.x", "tx")
    lines = permute_source(spec, dm).rstrip("\n").split("\n")[:-1]
    lines += ["    " + ln for ln in body.rstrip("\n").split("\n")]
    try:
        func = tvm.script.parse("\n".join(lines) + "\n")
        target = tvm.target.Target({"kind": "cuda", "arch": spec.get("arch") or "sm_90a"})
        with target, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ex = tvm.compile(tvm.IRModule({"main": func}), target=target, tir_pipeline="tirx")
    except Exception as e:  # noqa: BLE001
        return "TVM does not compile our TIRx: " + dm._first_line(e)
    cuda = (ex.mod if hasattr(ex, "mod") else ex).imports[0].inspect_source()
    got = set(re.findall(r"(?:ld|st)\.shared\.\w+", cuda))
    m = re.search(r"^# access: (.*)$", path.read_text(), re.M)
    if m and m.group(1).strip() != "scalar" and got != set(m.group(1).split()):
        return f"TVM's CUDA of our TIRx has {sorted(got)}, the case says {m.group(1)}"
    return ""


def run(files: list, reg, dm, markdown: bool = False) -> tuple[int, list]:
    """Compares every permute_layout case; prints one line each and a
    summary; returns (disagreements, rows)."""
    bad, rows = 0, []
    for f in files:
        spec = dm.read_spec(f)
        try:
            theirs, ttext, secs = tvm_permute(spec, dm)
        except dm.Unsupported as e:
            theirs, ttext, secs = f"not run ({e})", "", 0.0
        ours, otext = ours_permute(reg, f, dm)
        if theirs == "chosen":
            ok = ours == "chosen" and otext == ttext
            note = f"{ttext}; TVM then fails (D1)"
            if ok:
                why = ours_through_tvm(reg, f, spec, dm)
                ok = not why
                note += f"; {why}" if why else "; TVM compiles our TIRx"
        elif theirs == "declined":
            ok = ours == "declined" and otext == ttext
            note = ttext
        elif f.stem in DEVIATIONS:
            want_tvm, want_ours = DEVIATIONS[f.stem]
            ok = (theirs == "other" and want_tvm in ttext and ours == "declined"
                  and otext == want_ours)
            note = f"deviation: TVM raises ({ttext}), tiledispatch declines"
        else:
            ok = False
            note = f"TVM: {theirs} {ttext}"
        bad += not ok
        rows.append((f.stem, theirs, ours, note, ok))
        print(f"{'ok  ' if ok else 'DIFF'} {f.stem}: TVM {theirs} ({ttext}), "
              f"tiledispatch {ours} ({otext}) [{secs:.2f} s]: {note}")
    print(f"permute_layout: {len(files) - bad}/{len(files)} cases agree "
          f"(the choice and k, or the decline text)")
    return bad, rows
