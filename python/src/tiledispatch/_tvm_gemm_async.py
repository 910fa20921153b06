"""gemm_async through the TVM bridge (tiledispatch.tvm): a
`Tx.gemm_async(C, A, B, transA=, transB=, accum=, **config)` call as a
tiledispatch call writes it, the threads TVM's guards leave (the call's
`active:`), and the hoisted shared-memory descriptors placed where TVM's
tcgen05 variant places them.

TVM's `GemmAsync` holds C, A, B, transA, transB and accum positionally
(eight operands, with SFA and SFB after B, when block-scaled).  C is in
tensor memory, declared over the address tcgen05.alloc wrote
(`allocated_addr`), which the body names `C_taddr` (copy_async's
tmem_addresses binds it); `accum` is a Python bool or a TIR expression (a
run-time flag, upstream's `accum=k > 0`), which becomes a named int of the
call (`td_accum`) tested against zero.  The config keys go through as TVM
wrote them: tiledispatch's op refuses an unknown key or value with its
reason (docs/upstream.md D4).

With `smem_desc: hoist` (the default) TVM encodes each operand's
descriptor once, right after the shared buffer's definition
(`sctx.add_post_buffer_def_stmt`), so that a K loop around the call does
not encode it again; tiledispatch prints the encodes at the top of its
body.  `hoisted` splits them off the built body and hands them to TVM
the same way.  Written against apache-tvm 0.27.0.post1; imported by
tiledispatch.tvm only.
"""

from __future__ import annotations

import re
from typing import Any

from ._tvm_base import BridgeError, _dtype, active_axes, const_flag

# The thread axes of TVM's active sets (DispatchContext.inter / intra)
# that a call's `active:` names (TVM's cta_id, the CTA in its cluster, is
# not a thread axis: tcgen05.mma's CTA pair is the cluster's business).
_THREAD_AXES = ("wgid", "warpid", "wid_in_wg", "laneid", "tid_in_wg")


def _flag(x: Any, what: str) -> bool:
    return const_flag(x, "gemm_async", what)


def fields(op_call: Any, ops: Any, scalars: dict[str, Any]) -> dict[str, Any]:
    """dst, a, b, transA, transB and accum of a gemm_async call; `ops`
    (tiledispatch.tvm's _Operands) names the buffers, `scalars` gets the
    declaration of accum's flag where accum is an expression."""
    from tvm.tirx import Cast, IntImm

    args = list(op_call.args)
    if len(args) not in (6, 8):
        raise BridgeError(f"gemm_async takes 6 operands (C, A, B, transA, transB, accum) "
                          f"or 8 (C, A, B, SFA, SFB, transA, transB, accum), got {len(args)}")
    c, a, b = (ops.region(x) for x in args[:3])
    out: dict[str, Any] = dict(dst=c, a=a, b=b)
    if len(args) == 8:
        # Block-scaled (TVM's GemmAsync.is_block_scaled): the scale
        # factors' regions, tmem buffers whose allocated_addr the body
        # names NAME_taddr (tmem_addresses binds every tmem operand).
        out["sfa"], out["sfb"] = ops.region(args[3]), ops.region(args[4])
        args = args[:3] + args[5:]
    out.update(transA=_flag(args[3], "transA"), transB=_flag(args[4], "transB"))
    accum = args[5]
    if isinstance(accum, bool):
        out["accum"] = accum
    elif isinstance(accum, IntImm):
        out["accum"] = bool(accum.value)
    else:
        dtype = _dtype(accum)
        if dtype is None or not (dtype == "bool" or dtype.startswith(("int", "uint"))):
            raise BridgeError(f"gemm_async accum={accum!r} is neither a bool nor an integer "
                              "expression")
        # TVM casts a non-bool flag to bool (nonzero: accumulate); the call
        # tests the named int against zero, the same thing.
        ops.scalars["td_accum"] = accum if dtype == "int32" else Cast("int32", accum)
        scalars["td_accum"] = {"dtype": "int32"}
        out["accum"] = "td_accum != 0"
    return out


_LAYOUT_D = re.compile(r"S\[\((\d+), (\d+)\) : \(1@TLane, 1@TCol\)\]")


def per_cta(buffers: dict[str, dict[str, Any]], dst: str,
            config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The call's buffers with a cta_group 2 accumulator declared per CTA:
    upstream declares C over both CTAs' rows (`(256, N)`, datapath D),
    each CTA's region within its 128 lanes, where a tiledispatch tmem
    buffer is one CTA's tensor memory (docs/upstream.md, the gemm_async
    cases).  Any other buffer as it is."""
    if config.get("cta_group") != 2:
        return buffers
    name, _, rest = dst.partition("[")
    entry = buffers.get(name)
    m = _LAYOUT_D.fullmatch(str((entry or {}).get("layout", "")))
    if entry is None or m is None or entry["shape"][0] <= 128:
        return buffers
    try:
        rows_end = int(rest.split(",", 1)[0].split(":")[1])
    except (IndexError, ValueError):
        return buffers
    if rows_end > 128:
        return buffers
    # Datapath D over one CTA's 128 lanes: the buffer without a layout.
    per = {k: v for k, v in entry.items() if k != "layout"}
    per["shape"] = [128, entry["shape"][1]]
    return {**buffers, name: per}


def active(sctx: Any) -> dict[str, list[int]] | None:
    """The threads that reach the call, as the call's `active:`: TVM's
    DispatchContext narrows `inter` (which warps / lanes of the CTA run a
    thread- or warp-scope call) and `intra` (the lanes of a warp-scope
    call) by the guards it understands (`if tid == 0`, `if warp_id == 0`;
    not `if tid < 1`, which leaves the whole CTA).  None when TVM gives
    nothing: the call then claims no guard."""
    return active_axes((getattr(sctx, "inter", None), getattr(sctx, "intra", None)),
                       _THREAD_AXES)


class HoistError(BridgeError):
    """A body whose descriptor encodes the bridge cannot separate from its
    MMAs (the call goes back to TVM, not expressible)."""


_DESC = re.compile(r"\b(desc[AB])(?:_lo|_hi)?\b")
# A local scalar the body declares (block scaling's `descI_local: T.uint32`,
# with a value where descI is given), which TVMScript builds as an
# allocation (and a store of the value), as it does `T.alloc_buffer`.
_SCALAR_DECL = re.compile(r"\w+: T\.\w+( = .+)?")


def _kinds(line: str) -> list[bool]:
    """The statements TVMScript builds from a top-level line of the body,
    each as whether it is an allocation."""
    m = _SCALAR_DECL.fullmatch(line.strip())
    if m is not None:
        return [True, False] if m.group(1) else [True]
    return [" = T.alloc_buffer(" in line]


def hoisted(func: Any, body: str, call: Any, ops: Any, sctx: Any) -> Any:
    """`func` (the PrimFunc built from `body`) without the descriptor
    encodes that TVM hoists (smem_desc hoist, the default), which go to
    the shared buffers' definitions through `sctx.add_post_buffer_def_stmt`,
    each group as TVM's variant builds it (the descriptor's allocation,
    its encode, at warp scope the shuffle that makes its low word uniform,
    then tvm_kernel_replace_point).  The other modes encode at the call:
    `func` unchanged.  The encodes are the lines at the top of the body
    that name one of `descA` / `descB` (tiledispatch prints them there,
    before the first MMA, which names both, or only `descB` when A is in
    tensor memory: the first `T.ptx.tcgen05(` line ends them either way;
    block-scaled, the instruction descriptor's `descI_local` and its
    encode, which name neither, end them first and stay at the call, as in
    TVM); each is one statement of the built body's top-level sequence."""
    import tvm
    from tvm.tirx import AllocBuffer, Evaluate, SeqStmt

    if str(call.config.get("smem_desc", "hoist")) != "hoist":
        return func
    operands = {"descA": call.srcs[0], "descB": call.srcs[1]}
    lines = [ln for ln in body.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    owners: list[str] = []
    for ln in lines:
        named = set(_DESC.findall(ln))
        if ln[0].isspace() or len(named) != 1 or "T.ptx.tcgen05(" in ln:
            break
        owners.append(named.pop())
    if not owners:
        return func
    stmts = list(func.body.seq) if isinstance(func.body, SeqStmt) else [func.body]
    kinds = [k for ln in lines if not ln[0].isspace() for k in _kinds(ln)]
    if len(stmts) != len(kinds) or not all(
            isinstance(st, AllocBuffer) == k for st, k in zip(stmts, kinds)):
        raise HoistError("the built body's statements do not match its lines; the "
                         "descriptors cannot be hoisted")
    groups: dict[str, list[Any]] = {}
    for owner, st in zip(owners, stmts):
        groups.setdefault(owner, []).append(st)
    for owner, group in groups.items():
        name = str(operands[owner]).split("[", 1)[0]
        buf = ops.buffers.get(name)
        if buf is None:
            raise HoistError(f"{owner}: the body's descriptor names no shared operand")
        krp = Evaluate(tvm.tirx.call_intrin("void", "tirx.tvm_kernel_replace_point"))
        sctx.add_post_buffer_def_stmt(buf, SeqStmt(group + [krp]))
    rest = stmts[len(owners):]
    return func.with_body(rest[0] if len(rest) == 1 else SeqStmt(rest))
