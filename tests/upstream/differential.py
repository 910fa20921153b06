#!/usr/bin/env python3
"""The upstream differential check (a start): for every conformance case
(tests/conformance/*.yaml), which variant real TVM (apache-tvm
0.27.0.post1, its own dispatcher) selects for the same call, next to
tiledispatch's choice.

    differential.py [--cases DIR] [--markdown] [NAME...]

Each call file becomes a one-CTA TVMScript kernel (its buffers allocated
in their scopes with their layouts, the call as `Tx.<scope>.<op>(dst, src,
axes=..., accum=..., <config>, dispatch=...)`) compiled with
`tvm.compile(..., tir_pipeline="tirx")` for the call's arch.  TVM's choice
is the variant whose implementation returned a PrimFunc (every variant's
implementation is wrapped to record it), or the failure.  Alongside, the
call that tiledispatch's bridge builds from TVM's own TilePrimitiveCall and
DispatchContext (tiledispatch.tvm.to_call) is dispatched too: it must
choose what the call file chooses (the conversion round-trips).

Elementwise calls (EWISE_OPS: zero, fill, reciprocal, sqrt, exp, exp2,
log2, silu, add, sub, mul, fdiv, maximum, cast, fma) are read from the call
file itself (their `srcs`, literals, named scalars and `extras`) and become
`Tx.<scope>.<op>(dst, *srcs, bias=..., scale=..., <config>)`: a literal is
`T.<dtype>(value)`, a named scalar a scalar parameter of the kernel, a
global buffer a `T.match_buffer` parameter.  When TVM finds no variant (or
its frontend refuses the call), its answer is `no match`, which is what
`# expect: none` and tiledispatch's failed dispatch say, and what a call
tiledispatch refuses before dispatch (`# expect: error`, its op's operand
check) agrees with.  The bridge's
round trip is not run for them (the bridge converts reductions only).

Gemm call files (`op: gemm`) are compared by gemm_differential.py: the
mma.sync issues of TVM's CUDA and tiledispatch's, register by register,
or the decline's text (its own DEVIATIONS).

Copy call files (`op: copy` and `op: copy_async`) are compared after the others by
copy_differential.py: TVM's variant and the PTX access of its CUDA against
tiledispatch's, with their own deviations (COPY_DEVIATIONS there);
--no-copy leaves them out, --copy-only runs them alone.

Prints one row per case and the agreement counts per expected path (and,
for the elementwise cases, per op); exit status 0 when every disagreement
is a listed deviation (DEVIATIONS, EWISE_DEVIATIONS), 1 otherwise.  A path
of the corpus that no case exercised against TVM fails the run too.

    differential.py --tvm-only [NAME...]      # TVM's choice alone
    differential.py --tvm-only --set-expect   # and write it into the
                                              # `# expect:` line of each
                                              # elementwise case
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import tiledispatch as td

ROOT = Path(__file__).resolve().parents[2]
TVM_PIN = "0.27.0.post1"

# Deliberate or known deviations: (predicate on the case, reason).
DEVIATIONS = [
    ("shared_rows", "tiledispatch's own shared-memory row reduction (issue 12): "
     "TVM has no such variant, and its `shared` fails on the released wheel"),
    ("shared", "the released wheel's `shared` variant fails every call: its "
     "PrimFunc uses threadIdx.x / tid_in_scope undefined (`Program is not "
     "well-formed`) or a buffer without DeclBuffer at thread scope; TVM then "
     "reports no variant (issue 13)"),
]

# What the bridge does not lower yet (with --nvcc), by expected path: none
# (the packed sm100 paths and shared_rows parse in TVM 0.27 since their TIRx
# spellings follow TVM's; both_ways.py lowers, compiles and runs every case).
BRIDGE_LIMITS: dict[str, str] = {}


_NS = {"thread": "Tx", "warp": "Tx.warp", "warpgroup": "Tx.wg", "cta": "Tx.cta",
       "cluster": "Tx.cluster"}

# The elementwise family (issue 14) and how TVM spells each op's operands.
EWISE_UNARY = {"zero", "reciprocal", "sqrt", "exp", "exp2", "log2", "silu"}
EWISE_BINARY = {"add", "sub", "mul", "fdiv", "maximum"}
EWISE_OPS = EWISE_UNARY | EWISE_BINARY | {"fill", "cast", "fma"}

# Deliberate or known deviations of elementwise cases, by case name (the
# file's stem): reason.
EWISE_DEVIATIONS: dict[str, str] = {
    "ewise_tvm_exp_int32_local":
        "exp of int32 registers: TVM selects reg and emits exp() of an int (C++ "
        "promotes it to double and the store truncates); tiledispatch's math ops "
        "want a floating-point compute dtype and reject the call",
    "ewise_tvm_reciprocal_scale_ignored_upstream":
        "reciprocal with a scale: TVM's front end has no scale argument, the "
        "keyword lands in the call's config, which nothing reads, and reg lowers "
        "the call without it; tiledispatch refuses extras on ops that do not "
        "apply them",
    "ewise_swz_add_colmajor_rejected":
        "a swizzle over a column-major tile: TVM selects smem and indexes through "
        "the layout; tiledispatch's smem indexes row-major storage (possibly "
        "swizzled) only and refuses it",
    "ewise_swz_add_partial_rejected":
        "8 x 60 halves under a 128-byte swizzle: TVM selects smem and its index "
        "of element 479 is 487, past the 480-element buffer; tiledispatch "
        "refuses a swizzle that moves elements past the buffer",
    "ewise_fp8_add_rejected":
        "add of float8_e4m3fn buffers: TVM selects smem and emits `v_.x + "
        "v__1.x` on __nv_fp8x4_e4m3 vectors, which nvcc (CUDA 13) refuses (no "
        "member x; cuda_fp8.h defines no arithmetic on float8); tiledispatch "
        "refuses ops that would compute in float8",
    "ewise_tvm_silu_extras_ignored_upstream":
        "silu with bias and scale: as for reciprocal (TVM: config entries nobody "
        "reads; tiledispatch: refused by the op check)",
}


def tvm_layout(text: str) -> str:
    """A call file's layout in TVMScript.  A swizzle, TVM's printed
    ComposeLayout(per_element, swizzle_len, atom_len, TileLayout(X)) or our
    X + Swizzle(b, m, s), becomes T.ComposeLayout(m, b, s, T.TileLayout(X))."""
    m = re.fullmatch(r"\s*(?:T\.)?ComposeLayout\((\d+),\s*(\d+),\s*(\d+),\s*"
                     r"(?:T\.)?TileLayout\((.*)\)(\s*,\s*swizzle_inner=\w+)?\)\s*",
                     text)
    if m:
        inner = (m.group(5) or "").strip()
        return (f"T.ComposeLayout({m.group(1)}, {m.group(2)}, {m.group(3)}, "
                f"{tvm_layout(m.group(4))}{inner})")
    m = re.fullmatch(r"(.*?)\s*\+\s*Swizzle\((\d+),\s*(\d+),\s*(\d+)\)\s*", text)
    if m:
        return (f"T.ComposeLayout({m.group(3)}, {m.group(2)}, {m.group(4)}, "
                f"{tvm_layout(m.group(1))})")
    body = re.sub(r"(-?\d+)@(\w+)", r"\1 @ Axis.\2", text)
    body = re.sub(r"\bT\.(?=[SR]\[)", "", body)
    body = re.sub(r"\bS\[", "T.S[", body)
    body = re.sub(r"\bR\[", "T.R[", body)
    body = body.replace(" : ", ":")
    return f"T.TileLayout({body})"


class Unsupported(Exception):
    pass


def launch_extents(launch: dict) -> tuple:
    """threadIdx.x and the blockIdx extents (trailing 1s dropped) of a
    launch with constant extents and one thread dimension."""
    if any(not isinstance(v, int) for v in launch.values()):
        raise Unsupported(f"symbolic launch {launch}")
    if launch.get("threadIdx.y", 1) != 1 or launch.get("threadIdx.z", 1) != 1:
        raise Unsupported(f"launch {launch}: multi-dimensional threads")
    threads = launch.get("threadIdx.x", 1)
    blocks = [launch.get(f"blockIdx.{a}", 1) for a in "xyz"]
    while len(blocks) > 1 and blocks[-1] == 1:
        blocks.pop()
    return threads, blocks


def tvm_source(call: td.Call) -> str:
    if call.op not in ("sum", "max", "min"):
        # The kernel below is a reduction call; the elementwise ops
        # (reg, smem) need their own operand spelling.
        raise Unsupported(f"elementwise op {call.op}: no TVMScript writer yet")
    if call.scope not in _NS:
        raise Unsupported(f"scope {call.scope}")
    threads, blocks = launch_extents(call.launch)
    ln = ["@T.prim_func", "def f():", "    T.device_entry()",
          f"    {', '.join(['bx', 'by', 'bz'][:len(blocks)])} = "
          f"T.cta_id([{', '.join(map(str, blocks))}])",
          f"    tx = T.thread_id([{threads}])"]
    for name, b in call.buffers.items():
        if b["scope"] not in ("local", "shared", "shared.dyn"):
            raise Unsupported(f"buffer scope {b['scope']}")
        lay = f", layout={tvm_layout(b['layout'])}" if "layout" in b else ""
        shape = ", ".join(map(str, b["shape"]))
        ln.append(f'    {name} = T.alloc_buffer([{shape}], "{b["dtype"]}", '
                  f'scope="{b["scope"]}"{lay})')
    kw = [f"axes=[{', '.join(map(str, call.axes))}]", f"accum={call.accum}"]
    kw += [f"{k}={v!r}" for k, v in call.config.items()]
    if call.dispatch:
        kw.append(f"dispatch={call.dispatch!r}")
    ln.append(f"    {_NS[call.scope]}.{call.op}({call.dst}, {call.src}, {', '.join(kw)})")
    return "\n".join(ln) + "\n"


_INT_DTYPES = re.compile(r"u?int\d+$")


def read_spec(path: Path) -> dict:
    """The call file as plain YAML (the elementwise operands are read from
    here, not from tiledispatch's loader, so that the TVM side stands on
    its own)."""
    import yaml

    spec = yaml.safe_load(path.read_text())
    if not isinstance(spec, dict):
        raise Unsupported("not a mapping")
    return spec


def _tvm_literal(value, dtype: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Unsupported(f"literal {value!r}")
    if _INT_DTYPES.match(dtype):
        return f"T.{dtype}({int(value)})"
    return f"T.{dtype}({float(value)!r})"


def _region_buffer(region: str) -> str:
    return region.split("[", 1)[0].strip()


def _declare_buffers(spec: dict, scopes=None):
    """The kernel's buffers as TVMScript: (params, head, body), the global
    operands as match_buffer parameters (head: before T.device_entry), the
    others allocated in the body; a scope outside `scopes` (None: any) is
    Unsupported."""
    params: list = []
    head: list = []
    body: list = []
    for name, b in spec["buffers"].items():
        lay = f", layout={tvm_layout(b['layout'])}" if b.get("layout") else ""
        shape = ", ".join(map(str, b["shape"]))
        if b["scope"] == "global":
            params.append(f"{name}_ptr: T.handle")
            head.append(f'    {name} = T.match_buffer({name}_ptr, [{shape}], "{b["dtype"]}"{lay})')
        elif b["scope"] == "tmem" and (scopes is None or "tmem" in scopes):
            # Tensor memory, as upstream's tcgen05 tests declare it: the
            # address tcgen05.alloc writes in shared memory, and the
            # buffer over it in its layout (TLane, TCol: a datapath's or
            # lane replicas), datapath D (lane = row) where the call file
            # gives none.
            body.append(f'    {name}_taddr = T.alloc_shared([1], "uint32")')
            tl = (tvm_layout(b["layout"]) if b.get("layout") else
                  f"T.TileLayout(T.S[({shape}):(1 @ Axis.TLane, 1 @ Axis.TCol)])")
            body.append(f'    {name} = T.decl_buffer(({shape}), "{b["dtype"]}", '
                        f'scope="tmem", allocated_addr={name}_taddr[0], '
                        f'layout={tl})')
        elif scopes is None or b["scope"] in scopes:
            body.append(f'    {name} = T.alloc_buffer([{shape}], "{b["dtype"]}", '
                        f'scope="{b["scope"]}"{lay})')
        else:
            raise Unsupported(f"buffer scope {b['scope']}")
    return params, head, body


def _call_kwargs(spec: dict, params: list) -> list:
    """The tile call's keyword arguments: extras, config, dispatch."""
    kw = []
    for key, o in (spec.get("extras") or {}).items():
        kw.append(f"{key}={_tvm_operand(o, spec, params)}")
    kw += [f"{k}={v!r}" for k, v in (spec.get("config") or {}).items()]
    if spec.get("dispatch"):
        kw.append(f"dispatch={spec['dispatch']!r}")
    return kw


def _prologue(params: list, head: list, blocks: list) -> list:
    """The prim_func's first lines: signature, global buffers, device
    entry and the CTA ids."""
    return ["@T.prim_func", f"def f({', '.join(params)}):"] + head + [
            "    T.device_entry()",
            f"    {', '.join(['bx', 'by', 'bz'][:len(blocks)])} = "
            f"T.cta_id([{', '.join(map(str, blocks))}])"]


def _tvm_operand(o, spec: dict, params: list) -> str:
    """One operand of an elementwise call as TVMScript: a region as
    written, a literal as T.<dtype>(v), a named scalar as the name of a
    scalar parameter (added to params)."""
    if isinstance(o, str):
        if _region_buffer(o) not in spec.get("buffers", {}):
            raise Unsupported(f"operand {o!r} names no buffer")
        return o
    if isinstance(o, (int, float)) and not isinstance(o, bool):
        dst = spec["buffers"][_region_buffer(str(spec["dst"]))]
        return _tvm_literal(o, dst["dtype"])
    if isinstance(o, dict) and "value" in o:
        return _tvm_literal(o["value"], o["dtype"])
    if isinstance(o, dict) and "scalar" in o:
        name, dtype = o["scalar"], o["dtype"]
        decl = f"{name}: T.{dtype}"
        if decl not in params:
            params.append(decl)
        return name
    raise Unsupported(f"operand {o!r}")


def ewise_source(spec: dict) -> str:
    """The one-CTA TVMScript kernel of an elementwise call file."""
    op, scope = spec["op"], spec.get("scope", "thread")
    if op not in EWISE_OPS:
        raise Unsupported(f"op {op}")
    if scope not in _NS:
        raise Unsupported(f"scope {scope}")
    threads, blocks = launch_extents(spec.get("launch") or {})
    params, head, body = _declare_buffers(spec, ("local", "shared", "shared.dyn"))
    if "srcs" in spec:
        srcs = list(spec["srcs"] or [])
    elif "src" in spec:
        srcs = [spec["src"]]
    else:
        srcs = []
    args = [_tvm_operand(str(spec["dst"]), spec, params)]
    args += [_tvm_operand(o, spec, params) for o in srcs]
    kw = _call_kwargs(spec, params)
    ln = _prologue(params, head, blocks)
    # The warp and warpgroup ids upstream's kernels declare (TVM's later
    # passes need them for the sub-CTA scopes' thread ids).
    if scope in ("warp", "warpgroup") and threads % 32 == 0:
        ln.append(f"    wid = T.warp_id([{threads // 32}])")
    if scope == "warpgroup" and threads % 128 == 0:
        ln.append(f"    wgid = T.warpgroup_id([{threads // 128}])")
    ln.append(f"    tx = T.thread_id([{threads}])")
    ln += body
    ln.append(f"    {_NS[scope]}.{op}({', '.join(args + kw)})")
    return "\n".join(ln) + "\n"


LAST_REASONS: dict = {}   # variant -> TVM's reason, of the last no-match


def _tvm_reasons(e: Exception) -> str:
    """`reg: REASON; smem: REASON` from TVM's dispatch failure table (also
    left in LAST_REASONS), or the first line of any other error."""
    text = str(e)
    LAST_REASONS.clear()
    if "dispatch failed" not in text:
        return "TVM refuses the call: " + _first_line(e)
    out: dict = {}
    cur = None
    for ln in text.splitlines():
        m = re.match(r"^\| (\S+) \(prio=-?\d+\)\s*\| (.*?)\s*\|$", ln)
        if m:
            cur = m.group(1)
            out[cur] = [m.group(2)]
            continue
        m = re.match(r"^\|\s+\| (.*?)\s*\|$", ln)
        if m and cur is not None:
            if m.group(1).startswith("opcall:"):
                cur = None
            else:
                out[cur].append(m.group(1))
    if not out:
        return _first_line(e)
    parts = []
    for v, lines in out.items():
        r = " ".join(lines)
        r = re.sub(r"^rejected: \S+ \u2014 ", "", r)
        LAST_REASONS[v] = r
        parts.append(f"{v}: {r}")
    return "; ".join(parts)


def tvm_select_ewise(spec: dict):
    """(TVM's variant or 'no match', why, seconds in TVM's dispatcher) for
    an elementwise call file."""
    import tvm
    import tvm.script
    from tvm.tirx.operator.tile_primitive import dispatcher as D

    import tvm.backend.cuda.tile_primitive  # noqa: F401  (registers the variants)

    _record_impls()
    _CHOSEN.clear()
    spent: list = []
    inner = D.run_dispatch

    def observe(op_call, sctx):
        t = time.perf_counter()
        try:
            return inner(op_call, sctx)
        finally:
            spent.append(time.perf_counter() - t)

    src = ewise_source(spec)
    D.run_dispatch = observe
    why = ""
    try:
        func = tvm.script.parse(src)
        target = tvm.target.Target({"kind": "cuda", "arch": spec.get("arch") or "sm_90a"})
        with target:
            tvm.compile(tvm.IRModule({"main": func}), target=target, tir_pipeline="tirx")
        got = _CHOSEN[-1] if _CHOSEN else "no match"
    except Exception as e:  # noqa: BLE001
        if _CHOSEN:  # selected, then failed later in the pipeline
            got, why = _CHOSEN[-1], f"then: {_first_line(e)}"
        else:
            got, why = "no match", _tvm_reasons(e)
    finally:
        D.run_dispatch = inner
    return got, why, sum(spent)


def same_reasons(reg: td.Registry, call, ours: str) -> bool | None:
    """Where TVM's variants all rejected the call: does tiledispatch give
    TVM's reason, word for word, for each of them (among the reasons of
    that variant's row in `explain`, or as the message of its operand
    check)?  None where there is nothing to compare."""
    if not LAST_REASONS:
        return None
    if ours.startswith("input error"):
        msg = ours.split(": ", 2)[-1]
        return all(r == msg for r in LAST_REASONS.values())
    if call is None or ours != "no match":
        return None
    rows = {row.variant: [x.split(": ", 1)[-1] for x in row.reasons]
            for row in reg.explain(call)}
    return all(r in rows.get(v, []) for v, r in LAST_REASONS.items())


def set_expect(path: Path, variant: str) -> bool:
    """Writes `# expect: VARIANT` (none for no match) as the file's first
    expect line; True when the file changed."""
    want = "none" if variant == "no match" else variant
    text = path.read_text()
    new, n = re.subn(r"^# expect: \S+", f"# expect: {want}", text, count=1, flags=re.M)
    if n == 0:
        new = f"# expect: {want}\n" + text
    if new != text:
        path.write_text(new)
        return True
    return False


_CHOSEN: list = []   # the variants whose implementation returned, in order


def _record_impls():
    from tvm.tirx.operator.tile_primitive import dispatcher as D

    for cases in D._DISPATCH_TABLE.values():
        for c in cases:
            if getattr(c, "_td_recorded", False):
                continue
            orig = c.impl

            def wrapped(op_call, sctx, _orig=orig, _case=c):
                res = _orig(op_call, sctx)
                _CHOSEN.append(_case.variant)
                return res

            c.impl = wrapped
            c._td_recorded = True


def tvm_select(call: td.Call, reg: td.Registry):
    """(TVM's variant or 'FAIL: reason', the bridge-converted call's variant,
    seconds in TVM's dispatcher)."""
    import tvm
    import tvm.script
    import tiledispatch.tvm as tdtvm
    from tvm.tirx.operator.tile_primitive import dispatcher as D

    import tvm.backend.cuda.tile_primitive  # noqa: F401  (registers the variants)

    _record_impls()
    _CHOSEN.clear()
    chosen = _CHOSEN
    roundtrip: list = []
    spent: list = []
    inner = D.run_dispatch

    def observe(op_call, sctx):
        try:
            c2, _ = tdtvm.to_call(op_call, sctx)
            roundtrip.append(_select(reg, c2))
        except Exception as e:  # noqa: BLE001
            roundtrip.append(f"CONVERT: {e}")
        t = time.perf_counter()
        try:
            return inner(op_call, sctx)
        finally:
            spent.append(time.perf_counter() - t)

    D.run_dispatch = observe
    try:
        func = tvm.script.parse(tvm_source(call))
        target = tvm.target.Target({"kind": "cuda", "arch": call.arch or "sm_90a"})
        with target:
            ex = tvm.compile(tvm.IRModule({"main": func}), target=target, tir_pipeline="tirx")
        got = chosen[-1] if chosen else "FAIL: no variant recorded"
        LAST_SOURCE["tvm"] = (ex.mod if hasattr(ex, "mod") else ex).imports[0].inspect_source()
    except Unsupported:
        raise
    except Exception as e:  # noqa: BLE001
        if chosen:  # selected, then failed later in the pipeline
            got = f"{chosen[-1]} (then: {_first_line(e)})"
        else:
            got = f"FAIL: {_first_line(e)}"
    finally:
        D.run_dispatch = inner
    return got, (roundtrip[0] if roundtrip else None), sum(spent)


LAST_SOURCE: dict = {}


def bridge_source(call: td.Call, reg: td.Registry) -> str:
    """The CUDA tvm.compile generates for the case with the bridge in."""
    import tvm
    import tvm.script
    import tiledispatch.tvm as tdtvm

    tdtvm.install(tdtvm.default_registry())
    try:
        func = tvm.script.parse(tvm_source(call))
        target = tvm.target.Target({"kind": "cuda", "arch": call.arch or "sm_90a"})
        with target:
            ex = tvm.compile(tvm.IRModule({"main": func}), target=target, tir_pipeline="tirx")
        return (ex.mod if hasattr(ex, "mod") else ex).imports[0].inspect_source()
    finally:
        tdtvm.uninstall()


def nvcc_ok(src: str, arch: str) -> str:
    import subprocess

    r = subprocess.run(["nvcc", f"-arch={arch}", "-x", "cu", "-c", "-o", "/dev/null", "-"],
                       input=src, capture_output=True, text=True)
    return "ok" if r.returncode == 0 else "FAILS: " + (r.stderr.strip().splitlines() or ["?"])[0][:80]


def _first_line(e: Exception) -> str:
    lines = [ln.strip(" |") for ln in str(e).splitlines() if ln.strip(" |+-")]
    for key in ("Invalid use", "DeclBuffer", "ill-formed", "Error:", "rejected"):
        for ln in lines:
            if key in ln:
                return ln[:140]
    return lines[0][:140] if lines else type(e).__name__


def _select(reg: td.Registry, call: td.Call) -> str:
    try:
        return reg.select(call)
    except td.DispatchError:
        return "no match"
    except td.InputError as e:
        return f"input error: {e.message}"


def _ewise_op(path: Path) -> str | None:
    m = re.search(r"^op:\s*(\w+)", path.read_text(), re.M)
    return m.group(1) if m and m.group(1) in EWISE_OPS else None


def _time_select(reg: td.Registry, call) -> float:
    if call is None:
        return 0.0
    t = time.perf_counter()
    for _ in range(200):
        _select(reg, call)
    return (time.perf_counter() - t) / 200 * 1e6


def _load_call(path: Path):
    """(tiledispatch's Call, or None and why it did not load)."""
    try:
        return td.Call.from_yaml(path), None
    except td.InputError as e:
        return None, f"input error: {e.message}"


def tvm_only(files: list, set_exp: bool) -> int:
    """TVM's choice for each elementwise case, nothing of tiledispatch."""
    changed = n = 0
    for f in files:
        op = _ewise_op(f)
        if op is None:
            continue
        try:
            theirs, why, secs = tvm_select_ewise(read_spec(f))
        except Unsupported as e:
            print(f"- {f.stem:<52} not run ({e})")
            continue
        n += 1
        print(f"  {f.stem:<52} {theirs:<9} {secs * 1e3:6.1f} ms  {why[:150]}")
        if set_exp and theirs in ("reg", "smem", "no match"):
            changed += set_expect(f, theirs)
    print(f"{n} elementwise cases ran against TVM" +
          (f"; {changed} expect lines written" if set_exp else ""))
    return 0 if n else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=Path, default=ROOT / "tests" / "conformance")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--nvcc", action="store_true",
                    help="where TVM lowers a case, lower it with the bridge too and "
                         "compile both CUDA texts with nvcc")
    ap.add_argument("--tvm-only", action="store_true",
                    help="elementwise cases only: print TVM's choice, leave tiledispatch out")
    ap.add_argument("--set-expect", action="store_true",
                    help="with --tvm-only: write TVM's choice into each case's # expect: line")
    ap.add_argument("--no-copy", action="store_true",
                    help="leave the copy cases out (copy_differential.py)")
    ap.add_argument("--copy-only", action="store_true",
                    help="the copy cases alone")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    try:
        import tvm
    except ImportError:
        print("SKIP upstream: apache-tvm is not installed (pip install apache-tvm==0.27.0.post1)")
        return 77
    if getattr(tvm, "__version__", "?") != TVM_PIN:
        print(f"FAIL upstream: apache-tvm {getattr(tvm, '__version__', '?')} is installed; "
              f"the differential and its expectations are pinned to {TVM_PIN}")
        return 1
    files = sorted(args.cases.glob("*.yaml"))
    if args.names:
        files = [f for f in files if f.stem in args.names]
    if args.tvm_only:
        return tvm_only(files, args.set_expect)
    reg = td.Registry()
    rows, counts, unexplained = [], {}, 0
    op_counts: dict = {}
    ew_names: list = []
    reasons = [0, 0]   # no-match cases with TVM's reasons; with the same reasons here
    copies: list = []
    permutes: list = []
    gemms: list = []
    gemm_asyncs: list = []
    for f in files:
        m = re.search(r"^# expect: (\S+)", f.read_text(), re.M)
        expect = m.group(1) if m else "?"
        if re.search(r"^op:\s*permute_layout\s*$", f.read_text(), re.M):
            # Compared after the loop, by permute_differential.py.
            permutes.append(f)
            continue
        if re.search(r"^op:\s*gemm\s*$", f.read_text(), re.M):
            # Compared after the loop, by gemm_differential.py.
            gemms.append(f)
            continue
        if re.search(r"^op:\s*gemm_async\s*$", f.read_text(), re.M):
            # Compared by gemm_async_differential.py (upstream-gemm-async:
            # TVM lowers each accepted program, bit for bit), not here.
            gemm_asyncs.append(f)
            continue
        if re.search(r"^op:\s*copy(_async)?\s*$", f.read_text(), re.M):
            # Compared after the loop, by copy_differential.py.
            copies.append(f)
            continue
        if args.copy_only:
            continue
        ewise = _ewise_op(f)
        if ewise:
            ew_names.append(f.stem)
            call, load_err = _load_call(f)
            ours = _select(reg, call) if call is not None else load_err
            td_us = _time_select(reg, call)
            LAST_REASONS.clear()
            try:
                theirs, why, secs = tvm_select_ewise(read_spec(f))
            except Unsupported as e:
                theirs, why, secs = f"not run ({e})", "", 0.0
            if theirs == "no match":
                sr = same_reasons(reg, call, ours)
                if sr is not None:
                    reasons[0] += 1
                    reasons[1] += sr
                    if not sr:
                        print(f"reasons differ: {f.stem}: TVM {LAST_REASONS}; tiledispatch {ours}",
                              file=sys.stderr)
            roundtrip = None
            agree = theirs == ours or (
                # `# expect: error`: refused by the op's operand check
                # (exit 2) where TVM's variants all reject the call.
                expect == "error" and theirs == "no match" and ours.startswith("input error"))
            dev = "" if agree else EWISE_DEVIATIONS.get(f.stem, "")
            if why:   # the selection is compared; the reason is shown
                theirs = f"{theirs} ({why})"
            c = op_counts.setdefault(ewise, [0, 0, 0, 0])
            c[0] += 1
            c[1] += agree
            c[2] += bool(dev)
            c[3] += theirs.startswith("not run")
            if not agree and not dev and not theirs.startswith("not run"):
                unexplained += 1
            c = counts.setdefault(expect, [0, 0, 0, 0])
            c[0] += 1
            c[1] += agree
            c[2] += bool(dev)
            c[3] += theirs.startswith("not run")
            rows.append((f.stem, expect, ours, theirs, roundtrip, secs, agree, dev, td_us))
            continue
        call = td.Call.from_yaml(f)
        ours = _select(reg, call)
        td_us = _time_select(reg, call)
        LAST_SOURCE.clear()
        try:
            theirs, roundtrip, secs = tvm_select(call, reg)
        except Unsupported as e:
            theirs, roundtrip, secs = f"not run ({e})", None, 0.0
        if args.nvcc and "tvm" in LAST_SOURCE:
            arch = (call.arch or "sm_90a")
            arch = arch if arch.endswith("a") or int(re.sub(r"\D", "", arch)) < 90 else arch + "a"
            try:
                ours_src = bridge_source(call, reg)
                comp = (nvcc_ok(LAST_SOURCE["tvm"], arch), nvcc_ok(ours_src, arch))
            except Exception as e:  # noqa: BLE001
                comp = (nvcc_ok(LAST_SOURCE["tvm"], arch), f"bridge cannot lower: {_first_line(e)}")
            nv = counts.setdefault("nvcc", [0, 0, 0])
            nv[0] += 1
            nv[1] += comp[0] == "ok"
            nv[2] += comp[1] == "ok"
            if comp != ("ok", "ok"):
                print(f"nvcc {f.stem}: TVM {comp[0]}; bridge {comp[1]}", file=sys.stderr)
                if comp[1] != "ok" and comp[0] == "ok" and expect not in BRIDGE_LIMITS:
                    unexplained += 1
        agree = theirs == ours
        dev = "" if agree else next((why for key, why in DEVIATIONS if key == expect), "")
        rt_ok = roundtrip is None or roundtrip == ours
        if (not agree and not dev and not theirs.startswith("not run")) or not rt_ok:
            unexplained += 1
        c = counts.setdefault(expect, [0, 0, 0, 0])   # cases, agree, deviation, not run
        c[0] += 1
        c[1] += agree
        c[2] += bool(dev)
        c[3] += theirs.startswith("not run")
        rows.append((f.stem, expect, ours, theirs, roundtrip, secs, agree, dev, td_us))
    if args.markdown:
        print("| case | expected | tiledispatch | TVM 0.27.0.post1 | bridge call | "
              "TVM dispatch ms | tiledispatch us |")
        print("|---|---|---|---|---|---:|---:|")
        for name, expect, ours, theirs, rt, secs, agree, dev, td_us in rows:
            mark = "" if agree else (" (deviation)" if dev else " **(differs)**")
            theirs = theirs.replace("|", "/")
            print(f"| {name} | {expect} | {ours} | {theirs}{mark} | {rt or '-'} | "
                  f"{secs * 1e3:.1f} | {td_us:.1f} |")
    else:
        for name, expect, ours, theirs, rt, secs, agree, dev, td_us in rows:
            print(f"{'=' if agree else ('~' if dev else '!')} {name:<40} td={ours:<16} tvm={theirs[:90]}"
                  f"  bridge={rt}  {secs * 1e3:.1f} ms")
    print()
    print("expected path | cases | TVM agrees | listed deviation | not run")
    nv = counts.pop("nvcc", None)
    for k, (n, a, d, nr) in sorted(counts.items()):
        print(f"{k} | {n} | {a} | {d} | {nr}")
    if op_counts:
        print()
        print("elementwise op | cases | TVM agrees | listed deviation | not run")
        for k, (n, a, d, nr) in sorted(op_counts.items()):
            print(f"{k} | {n} | {a} | {d} | {nr}")
    if reasons[0]:
        print(f"rejected by every TVM variant: {reasons[0]} cases; tiledispatch gives TVM's "
              f"reasons word for word in {reasons[1]}")
    if nv:
        print(f"lowered by TVM: {nv[0]} cases; nvcc compiles TVM's CUDA: {nv[1]}, "
              f"the bridge's CUDA: {nv[2]} (known bridge limits: "
              f"{', '.join(sorted(BRIDGE_LIMITS)) or 'none'})")
    ew = set(ew_names)
    for label, pick in (("reduction", lambda r: r[0] not in ew),
                        ("elementwise", lambda r: r[0] in ew)):
        ran = [r for r in rows if r[5] > 0 and pick(r)]
        if ran:
            tvm_ms = sorted(r[5] * 1e3 for r in ran)
            ours_us = sorted(r[8] for r in ran if r[8] > 0) or [0.0]
            print(f"median dispatch ({label}): TVM {tvm_ms[len(tvm_ms) // 2]:.1f} ms (its whole "
                  f"run_dispatch: selection and lowering), tiledispatch "
                  f"{ours_us[len(ours_us) // 2]:.1f} us (reg.select: selection and IR) "
                  f"over {len(ran)} cases")
    # Never pass silently: every expected path of the corpus must have run
    # against TVM at least once.
    silent = [k for k, (n, a, d, nr) in counts.items() if n and nr == n]
    if not args.names and silent:
        print(f"paths no case exercised against TVM: {', '.join(sorted(silent))}")
        unexplained += len(silent)
    if copies and not args.no_copy:
        import copy_differential

        copy_bad, _ = copy_differential.run(copies, reg, sys.modules[__name__],
                                            markdown=args.markdown)
        unexplained += copy_bad
    if permutes and not args.copy_only:
        import permute_differential

        perm_bad, _ = permute_differential.run(permutes, reg, sys.modules[__name__],
                                               markdown=args.markdown)
        unexplained += perm_bad
    if gemms and not args.copy_only:
        import gemm_differential

        gemm_bad, _ = gemm_differential.run(gemms, reg, sys.modules[__name__],
                                            markdown=args.markdown)
        unexplained += gemm_bad
    if gemm_asyncs:
        print(f"gemm_async: {len(gemm_asyncs)} cases, compared with TVM's lowering by "
              f"gemm_async_differential.py (suite upstream, upstream-gemm-async)")
    print(f"unexplained disagreements (or bridge round-trip mismatches): {unexplained}")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
