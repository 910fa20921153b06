"""Regions of TVM tile calls as a tiledispatch call writes them
(tiledispatch.tvm): TVM's layouts in tiledispatch's notation, region
starts affine in TIR variables written with block ids (a let-bound
variable as its value, a loaded index as a term), and a shared region
starting at a variable as the whole of a view of its buffer.  Imports
_tvm_base only; tiledispatch.tvm imports it.  Written against apache-tvm
0.27.0.post1."""

from __future__ import annotations

import re
from typing import Any

from ._tvm_base import BridgeError, _dtype


def _int(x: Any, what: str) -> int:
    try:
        return int(x)
    except (TypeError, ValueError):
        raise BridgeError(f"{what} must be a constant, got {x!r}") from None


def _layout_text(layout: Any) -> str | None:
    """TVM's TileLayout as tiledispatch's TileLayout notation:
    ``T.TileLayout(T.S[(32, 4):(1 @ Axis.laneid, 1)])`` becomes
    ``S[(32, 4) : (1@laneid, 1)]``; a ``ComposeLayout(m, b, s, X)`` (TVM's
    swizzle) becomes ``X + Swizzle(b, m, s)``."""
    if layout is None:
        return None
    if type(layout).__name__ == "ComposeLayout":
        # TVM's swizzled layout: a TileLayout and a swizzle of the offsets
        # it gives, ours as `X + Swizzle(b, m, s)` (docs/contract.md).
        if not bool(layout.swizzle_inner):
            raise BridgeError(f"unsupported layout {layout!r}: swizzle_inner=False "
                              "(tiledispatch swizzles the offsets the tile layout gives)")
        inner = _layout_text(layout.tile_layout)
        return (f"{inner} + Swizzle({int(layout.swizzle_len)}, {int(layout.per_element)}, "
                f"{int(layout.atom_len)})")
    text = repr(layout)
    m = re.fullmatch(r"T\.TileLayout\((.*)\)", text, re.S)
    if m is None:
        raise BridgeError(f"unsupported layout {text}")
    body = m.group(1)
    body = body.replace("T.", "").replace("Axis.", "")
    body = re.sub(r"\s*@\s*", "@", body)
    body = re.sub(r"\)\s*:\s*\(", ") : (", body)
    body = re.sub(r"(?<=[\d\w\)])\s*:\s*(?=[\d\(])", " : ", body)
    return body


def _affine(x: Any, lets: tuple = ()) -> tuple[int, list[tuple[Any, int]]] | None:
    """x as (constant, [(term, coefficient)]) when it is a sum of integer
    multiples of terms and integers (None otherwise).  A term is a
    variable, or a value loaded from a buffer (`tile_index[0]`); a
    variable TVM binds to a value (`d_n: T.let = tile_index[0] * 128`, a
    point range in the dispatch context's var_range_map: `lets`, pairs of
    variable and value) is its value where that is affine, else a term
    itself."""
    from tvm.ir import TensorLoad
    from tvm.tirx import Add, Cast, IntImm, Mul, Sub, Var

    if isinstance(x, IntImm):
        return int(x.value), []
    if isinstance(x, Var):
        for v, value in lets:
            if v.same_as(x):
                # Its value where that is affine, else the variable itself.
                sub = _affine(value, tuple(p for p in lets if not p[0].same_as(x)))
                return sub if sub is not None else (0, [(x, 1)])
        return 0, [(x, 1)]
    if isinstance(x, TensorLoad) and "int" in str(_dtype(x) or ""):
        return 0, [(x, 1)]
    if isinstance(x, Cast) and "int" in str(x.dtype):
        return _affine(x.value, lets)
    if isinstance(x, (Add, Sub)):
        a, b = _affine(x.a, lets), _affine(x.b, lets)
        if a is None or b is None:
            return None
        sign = 1 if isinstance(x, Add) else -1
        terms = list(a[1])
        for v, k in b[1]:
            terms.append((v, sign * k))
        return a[0] + sign * b[0], terms
    if isinstance(x, Mul):
        a, b = _affine(x.a, lets), _affine(x.b, lets)
        if a is None or b is None or (a[1] and b[1]):
            return None
        const, (c, terms) = (a[0], b) if not a[1] else (b[0], a)
        return c * const, [(v, k * const) for v, k in terms]
    return None


def _lets(sctx: Any) -> tuple:
    """The variables TVM binds to a value where the call is (a point
    range of sctx.var_range_map), as (variable, value) pairs."""
    out = []
    for v, rng in dict(sctx.var_range_map or {}).items():
        try:
            if int(rng.extent) == 1:
                out.append((v, rng.min))
        except (TypeError, ValueError):
            continue
    return tuple(out)


class _Blocks:
    """The variables a call's region starts use (TVM's `bx = T.cta_id(...)`,
    a loop variable, a value loaded from a buffer such as `tile_index[0]`;
    a let-bound variable is its value: _affine), each written as a block id
    of the call (blockIdx.x, .y, .z in turn); the
    body's `blockIdx.x` binds to the variable itself, as TVM's own copy uses
    the region's expression.  The grid extents those block ids get in the
    call are names (unknown): TVM does not say what range the variable has,
    so tiledispatch checks the tile of block 0 and the alignment of every
    block (docs/copy.md)."""

    def __init__(self, lets: tuple = ()) -> None:
        self.vars: list[Any] = []
        self.lets = lets

    def tag(self, var: Any) -> str:
        """The block id of a term: a variable by identity, a loaded value
        (`tile_index[0]`) by structure (each load is its own object)."""
        import tvm_ffi
        from tvm.tirx import Var

        for i, v in enumerate(self.vars):
            if v.same_as(var) or (not isinstance(var, Var) and not isinstance(v, Var)
                                  and tvm_ffi.structural_equal(v, var)):
                return "xyz"[i]
        if len(self.vars) == 3:
            raise BridgeError("a region start uses more than three variables")
        self.vars.append(var)
        return "xyz"[len(self.vars) - 1]

    def start(self, x: Any, what: str) -> str:
        """The call file's text of a start that is not a constant."""
        aff = _affine(x, self.lets)
        if aff is None:
            raise BridgeError(f"{what} must be a constant or affine in variables, got {x!r}")
        const, terms = aff
        coef: dict[str, int] = {}
        for v, k in terms:
            t = self.tag(v)
            coef[t] = coef.get(t, 0) + k
        parts = [f"blockIdx.{t} * {k}" for t, k in sorted(coef.items()) if k != 0]
        if const != 0 or not parts:
            parts.append(str(const))
        return " + ".join(parts)

    def launch(self, launch: dict[str, Any]) -> dict[str, Any]:
        """The call's launch with a grid extent by name for each block id
        the regions use."""
        out = dict(launch)
        for i in range(len(self.vars)):
            out[f"blockIdx.{'xyz'[i]}"] = f"td_grid_{'xyz'[i]}"
        return out

    def names(self, launch_vars: dict[str, Any]) -> dict[str, Any]:
        """The body's `blockIdx` with the regions' variables in place."""
        from types import SimpleNamespace

        if not self.vars:
            return {}
        base = dict(vars(launch_vars["blockIdx"])) if "blockIdx" in launch_vars else {}
        for i, v in enumerate(self.vars):
            base["xyz"[i]] = v
        return {"blockIdx": SimpleNamespace(**base)}


def _region_text(name: str, region: Any, blocks: _Blocks | None = None) -> str:
    parts = []
    for r in region.region:
        ext = _int(r.extent, f"region extent of {name}")
        try:
            lo = int(r.min)
        except (TypeError, ValueError):
            if blocks is None:
                raise BridgeError(f"region start of {name} must be a constant, "
                                  f"got {r.min!r}") from None
            start = blocks.start(r.min, f"region start of {name}")
            parts.append(f"{start}:{start} + {ext}")
            continue
        parts.append(f"{lo}:{lo + ext}")
    return f"{name}[{', '.join(parts)}]"


_STRIDED = re.compile(r"S\[\(([\d, ]+)\) : \(([\d, ]+)\)\]")
_FLAT = re.compile(r"S\[(\d+) : 1\]")


def _strides(buf: Any, layout: Any) -> list[int] | None:
    """The element strides of a buffer laid out by plain strides (no
    layout: row-major; `S[(shape) : (strides)]` over its own shape;
    `S[N : 1]`, N its size: row-major), else None."""
    shape = [int(n) for n in buf.shape]
    row_major, step = [], 1
    for n in reversed(shape):
        row_major.insert(0, step)
        step *= n
    if layout is None:
        return row_major
    text = _layout_text(layout) or ""
    m = _FLAT.fullmatch(text)
    if m is not None:
        return row_major if int(m.group(1)) == step else None
    m = _STRIDED.fullmatch(text)
    if m is None:
        return None
    dims = [int(x) for x in m.group(1).split(",") if x.strip()]
    strides = [int(x) for x in m.group(2).split(",") if x.strip()]
    return strides if dims == shape and len(strides) == len(dims) else None


def _shared_view(region: Any, lets: tuple) -> tuple[Any, Any] | None:
    """A copy_async's or gemm_async's shared region that starts at a
    variable in some dimension (`A_smem[tid, :]`, a pipeline's stage
    `Sm[k, :, :]`): a tiledispatch
    call takes a variable start on a global region only, so the region
    becomes the whole of a view of the buffer at that offset (TVM's
    `decl_buffer` over the same data, `elem_offset` moved by the
    variables' part, the same strides, the variable dimensions cut to the
    region's extent).  Only for a buffer of plain strides, or TVM's
    swizzle over plain strides (a ComposeLayout, as `mma_shared_layout`
    gives a stage buffer), whose offset is a multiple of 16 bytes and of
    the swizzle's period (2^(b + m + s) elements: the swizzle of the view
    is the buffer's, moved by the offset) for every value of the
    variables (the alignment the variants assume of a shared buffer);
    else None, and the
    region stays as it is (a start tiledispatch refuses, with its
    reason).  A start that is not affine (a stage `k % 3`) counts as a
    variable of coefficient 1.  Returns (the view, a function of the
    view's call name giving the region's text)."""
    import math

    import tvm
    from tvm.tirx.layout import ComposeLayout, S, TileLayout

    buf = region.source
    if not str(buf.scope()).startswith("shared"):
        return None
    var_dims = []
    for d, r in enumerate(region.region):
        try:
            int(r.min)
        except (TypeError, ValueError):
            var_dims.append(d)
    if not var_dims:
        return None
    layout = getattr(buf, "layout", None)
    swizzle = None
    if type(layout).__name__ == "ComposeLayout":
        if not bool(layout.swizzle_inner):
            return None
        swizzle = (int(layout.per_element), int(layout.swizzle_len), int(layout.atom_len))
        layout = layout.tile_layout
    try:
        strides = _strides(buf, layout)
        extents = [int(r.extent) for r in region.region]
    except (TypeError, ValueError, BridgeError):
        return None
    if strides is None:
        return None
    bits = tvm.DataType(str(buf.dtype)).bits
    align = 0   # in bits: a sub-byte dtype (float4) has two elements to a byte
    offset = None
    for d in var_dims:
        start = region.region[d].min
        aff = _affine(start, lets)
        if aff is None:
            # Any other integer expression (a stage `k % 3`) is a term of
            # its own: the offset is a multiple of the dimension's stride.
            if "int" not in str(_dtype(start) or ""):
                return None
            aff = (0, [(start, 1)])
        const, terms = aff
        for _, k in terms:
            align = math.gcd(align, abs(k) * strides[d] * bits)
        align = math.gcd(align, abs(const) * strides[d] * bits)
        term = start * strides[d]
        offset = term if offset is None else offset + term
    if align == 0 or align % 128 != 0:
        return None
    if swizzle is not None and (align // bits) % (1 << sum(swizzle)) != 0:
        return None
    shape = [extents[d] if d in var_dims else int(n) for d, n in enumerate(buf.shape)]
    view_layout = TileLayout(S[tuple(shape):tuple(strides)])
    if swizzle is not None:
        view_layout = ComposeLayout(*swizzle, view_layout)
    view = tvm.tirx.decl_buffer(shape, str(buf.dtype), name=f"{buf.name}_v", data=buf.data,
                                elem_offset=buf.elem_offset + offset, scope=str(buf.scope()),
                                layout=view_layout)
    parts = []
    for d, r in enumerate(region.region):
        if d in var_dims:
            parts.append(f"0:{extents[d]}")
        else:
            lo = int(r.min)
            parts.append(f"{lo}:{lo + extents[d]}")
    return view, lambda name: f"{name}[{', '.join(parts)}]"


_TMEM_D = re.compile(r"S\[\((\d+), (\d+)\) : \(1@TLane, 1@TCol\)\]")


def _tmem_view(region: Any, lets: tuple) -> tuple[Any, Any] | None:
    """A gemm_async accumulator's tensor-memory region whose column
    starts at a variable (`C[:, (k % 2) * 64:(k % 2) * 64 + 64]`, a tile
    of C per iteration): a tiledispatch call takes constant starts only,
    so the region becomes the whole of a view of the buffer there: a tmem
    buffer of the region's columns in datapath D, its `allocated_addr`
    the buffer's moved by the start in 32-bit columns (what TVM's tcgen05
    adds to C's address).  Only for a buffer in datapath D (`S[(R, N) :
    (1@TLane, 1@TCol)]`) with constant rows and a column start that is a
    whole number of 32-bit cells for every value of its variables; else
    None (the region stays, and a start tiledispatch refuses).  A tmem
    buffer in another layout (a block-scaled call's scale factors) is
    _sf_view's, which makes its view or says why not.  Returns
    (the view, a function of the view's call name giving the region's
    text)."""
    import math

    import tvm
    from tvm.sym.analyzer import Analyzer
    from tvm.tirx.layout import S, TCol, TileLayout, TLane

    buf = region.source
    if str(buf.scope()) != "tmem" or len(region.region) != 2:
        return None
    rows, cols = region.region
    try:
        int(cols.min)
        return None   # a constant start: the region as it is
    except (TypeError, ValueError):
        pass
    try:
        r0, nr, nc = int(rows.min), int(rows.extent), int(cols.extent)
    except (TypeError, ValueError):
        return None
    m = _TMEM_D.fullmatch(_layout_text(getattr(buf, "layout", None)) or "")
    addr = list(getattr(buf, "allocated_addr", None) or [])
    if m is None and addr and getattr(buf, "layout", None) is not None:
        return _sf_view(region, addr[0])
    if m is None or [int(m.group(1)), int(m.group(2))] != [int(n) for n in buf.shape] \
            or not addr:
        return None
    bits = tvm.DataType(str(buf.dtype)).bits
    aff = _affine(cols.min, lets)
    if aff is None:
        if "int" not in str(_dtype(cols.min) or ""):
            return None
        aff = (0, [(cols.min, 1)])
    align = math.gcd(abs(aff[0]) * bits, *(abs(k) * bits for _, k in aff[1]))
    if align == 0 or align % 32 != 0:
        return None
    base = addr[0]
    if isinstance(base, int):
        base = tvm.tirx.IntImm("uint32", base)
    dtype = str(_dtype(base) or "uint32")
    offset = cols.min * bits // 32 if bits != 32 else cols.min
    moved = Analyzer().simplify(base + tvm.tirx.Cast(dtype, offset))
    shape = (int(buf.shape[0]), nc)
    view = tvm.tirx.decl_buffer(shape, str(buf.dtype), name=f"{buf.name}_v", scope="tmem",
                                layout=TileLayout(S[shape:(1 @ TLane, 1 @ TCol)]))
    view = view.with_allocated_addr([moved])
    return view, lambda name: f"{name}[{r0}:{r0 + nr}, 0:{nc}]"


def _sf_view(region: Any, base: Any) -> tuple[Any, Any]:
    """A block-scaled gemm_async's scale-factor region (SFA / SFB, laid out
    by TVM's sf_tmem_layout: `S[...] + R[4 : 32@TLane]`) whose start is a
    variable (a K loop's `SFA[:, k * 4:k * 4 + 4]`), as the whole of a
    tmem view there.  TVM's tcgen05 slices the buffer's layout at the
    region (`layout.slice`: the region's own layout plus an offset that
    holds the variable) and gives each MMA get_tmem_addr(base, TLane,
    TCol / epc) with sf_id TCol % epc (epc: scale factors per 32-bit
    column) of the sliced layout at the MMA's element.  The view is that
    sliced layout without its column offset, its `allocated_addr` the
    buffer's moved by the offset in 32-bit columns, which gives every MMA
    TVM's address and sf_id exactly when the offset is a whole number of
    columns for every value of the variables; a constant lane offset stays
    in the view's layout.  Otherwise BridgeError: a call with constant
    starts cannot express the start (the call goes back to TVM, saying
    why).  Returns (the view, a function of the view's call name giving the
    region's text)."""
    import tvm
    from tvm.sym.analyzer import Analyzer
    from tvm.tirx.layout import TileLayout, TLane

    buf = region.source
    name, starts = str(buf.name), ", ".join(str(r.min) for r in region.region)
    what = f"the scale-factor region {name}[{starts}] (start at a variable)"
    try:
        extents = [int(r.extent) for r in region.region]
        sliced = buf.layout.slice(buf.shape, region.region)
    except Exception as e:  # noqa: BLE001  TVM's slice of a layout it cannot cut there
        raise BridgeError(f"{what}: TVM's layout does not slice there ({e})") from None
    if sliced is None:
        # (TVM's tcgen05, slicing it the same way, refuses the call too.)
        raise BridgeError(f"{what}: its layout {_layout_text(buf.layout)} has no slice "
                          "there (the region is not one piece of it for every value of "
                          "its variables)")
    at0 = sliced.apply(0)
    if type(sliced).__name__ != "TileLayout":
        raise BridgeError(f"{what}: its sliced layout {sliced!r} is not a tile layout")
    bits = tvm.DataType(str(buf.dtype)).bits
    epc = 32 // bits if bits in (4, 8, 16, 32) else 0
    ana = Analyzer()
    col = ana.simplify(at0.get("TCol", 0) if "TCol" in at0 else 0)
    lane = ana.simplify(at0.get("TLane", 0) if "TLane" in at0 else 0)
    try:
        lane = int(lane)
    except (TypeError, ValueError):
        raise BridgeError(f"{what}: its tensor-memory lane offset {lane} is not a constant "
                          "(the MMA's rows are the lanes)") from None
    if epc == 0 or not ana.can_prove(tvm.tirx.floormod(col, epc) == 0):
        raise BridgeError(
            f"{what}: its column offset {col} (in {bits}-bit scale factors) is not a whole "
            f"number of 32-bit tensor-memory columns ({epc} scale factors) for every value of "
            "its variables, so each MMA's sf_id would depend on it, which a call with "
            "constant starts cannot express")
    layout = TileLayout.from_iters(sliced.shard, sliced.replica,
                                   {TLane: lane} if lane else {})
    if isinstance(base, int):
        base = tvm.tirx.IntImm("uint32", base)
    dtype = str(_dtype(base) or "uint32")
    moved = ana.simplify(base + tvm.tirx.Cast(dtype, tvm.tirx.floordiv(col, epc)))
    view = tvm.tirx.decl_buffer(tuple(extents), str(buf.dtype), name=f"{buf.name}_v",
                                scope="tmem", layout=layout)
    view = view.with_allocated_addr([moved])
    return view, lambda vname: f"{vname}[{', '.join(f'0:{n}' for n in extents)}]"
