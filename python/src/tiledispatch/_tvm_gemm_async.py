"""gemm_async through the TVM bridge (tiledispatch.tvm): a
`Tx.gemm_async(C, A, B, transA=, transB=, accum=, **config)` call as a
tiledispatch call writes it, the threads TVM's guards leave (the call's
`active:`), and the hoisted shared-memory descriptors placed where TVM's
tcgen05 variant places them.

TVM's `GemmAsync` holds C, A, B, transA, transB and accum positionally
(eight operands, with SFA and SFB after B, when block-scaled: the call's
`sfa` / `sfb`, tmem buffers bound as `SFA_taddr` / `SFB_taddr`).  C is in
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
    """dst, a, b (sfa, sfb when block-scaled), transA, transB and accum of
    a gemm_async call; `ops` (tiledispatch.tvm's _Operands) names the
    buffers, `scalars` gets the declaration of accum's flag where accum is
    an expression."""
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


_MODES_AT_BASE = ("hoist", "local_hoist")


def view_offsets(body: str, call: Any, ops: Any) -> tuple[str, dict[str, Any]]:
    """`body` with each shared operand that is a view at a variable offset
    (_shared_view: a pipeline's stage `A[k % 3, :, :]`) addressed as TVM's
    tcgen05 addresses it, and the named ints that requires.  In the hoist
    and local_hoist modes TVM encodes the descriptor once from the
    buffer's base and adds the region's offset, variable part included,
    in 16-byte units to the low word of every MMA's descriptor
    (`smem_desc_add_16B_offset`); tiledispatch's body encodes from the
    view's base and adds the constant part: the encode is moved to the
    buffer's base (`T.address_of(A[0, 0, 0])`, which hoist then places
    after the buffer's definition, outside any loop over the stage) and
    the variable part, `td_voffA` (the view's offset from the buffer in
    16-byte units, as TVM's analyzer simplifies it), joins each MMA's
    constant.  In the encode and recompute modes each MMA encodes its own
    address, which from the view is TVM's address: `body` unchanged."""
    import tvm
    from tvm.sym.analyzer import Analyzer

    if str(call.config.get("smem_desc", "hoist")) not in _MODES_AT_BASE:
        return body, {}
    names: dict[str, Any] = {}
    for role, src in (("A", call.srcs[0]), ("B", call.srcs[1])):
        name = str(src).split("[", 1)[0]
        view = ops.buffers.get(name)
        base = next((b for v, b in ops.views if view is not None and v.same_as(view)), None)
        if base is None:
            continue
        bits = tvm.DataType(str(base.dtype)).bits
        per16 = 128 // bits
        offset = Analyzer().simplify(
            tvm.tirx.floordiv(view.elem_offset - base.elem_offset, per16))
        scalar = f"td_voff{role}"
        ops.scalars[scalar] = offset if _dtype(offset) == "int32" else tvm.tirx.Cast(
            "int32", offset)
        names[scalar] = ops.scalars[scalar]
        zeros = ", ".join(["0"] * len(base.shape))
        at = f"T.address_of({ops.buffer_name(base)}[{zeros}])"
        view_at = re.compile(rf"T\.address_of\({re.escape(name)}\[0(?:, 0)*\]\)")
        add = re.compile(rf'(T\.reinterpret\("uint32x2", desc{role}(?:_local)?\[0\]\)\], '
                         rf'\[0\]\) \+ T\.Cast\("uint32", )(\d+)\)')
        lines, encodes, adds = [], 0, 0
        for ln in body.splitlines():
            if "encode_matrix_descriptor(" in ln and re.search(rf"\bdesc{role}", ln):
                ln, n = view_at.subn(at, ln)
                encodes += n
            elif "T.ptx.tcgen05(" in ln:
                ln, n = add.subn(rf"\g<1>{scalar} + \g<2>)", ln)
                adds += n
            lines.append(ln)
        mmas = sum("T.ptx.tcgen05(" in ln for ln in lines)
        if encodes != 1 or adds != mmas:
            raise HoistError(f"{name}: the body's descriptor of {role} is not encoded once at "
                             "the view's base and added to at each MMA; its offset cannot be "
                             "moved to the buffer's base")
        body = "\n".join(lines) + "\n"
    return body, names


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
        # A view's descriptor is encoded from its buffer's base
        # (view_offsets): after that buffer's definition.
        buf = next((b for v, b in ops.views if buf is not None and v.same_as(buf)), buf)
        if buf is None:
            raise HoistError(f"{owner}: the body's descriptor names no shared operand")
        krp = Evaluate(tvm.tirx.call_intrin("void", "tirx.tvm_kernel_replace_point"))
        sctx.add_post_buffer_def_stmt(buf, SeqStmt(group + [krp]))
    rest = stmts[len(owners):]
    return func.with_body(rest[0] if len(rest) == 1 else SeqStmt(rest))
