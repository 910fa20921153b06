"""copy_async through the TVM bridge (tiledispatch.tvm): a call's config
as a tiledispatch call writes it, its tensor-memory buffers, and a TMA
copy's tensor maps given to TVM's host side.

The bridge takes every copy_async call (all six of TVM's variants have
tiledispatch counterparts); what the library declines goes back as a
failed match with its reason, what a call file cannot hold as not
expressible.  tiledispatch.tvm calls `config` and `tmem_entry` while it
converts a call, `tmem_addresses` and `tensor_maps` before it builds the
PrimFunc of the TIRx body.  Written against apache-tvm 0.27.0.post1;
imported by tiledispatch.tvm only.
"""

from __future__ import annotations

import re
from typing import Any

from ._tvm_base import BridgeError, _dtype

# The TMA copies' (tma_auto, tma_explicit) and dsmem's config keys, whose
# values may be TVM expressions (tma_config reads them).  Every other key
# is passed as it is (a constant by its value, anything else as its text):
# ldgsts's four, tcgen05.cp's shape, multicast and decompress, and any key
# no variant reads, which tiledispatch's variants refuse with the reason.
TMA_KEYS = frozenset({"mbar", "cache_hint", "cta_group", "cta_mask", "mbarrier_addr",
                      "oob", "tensormap_l2_promotion", "tma_dtype", "use_tma_reduce",
                      "remote_cta_id", "prefetch_tensormap"})
# tma_explicit's gather4 (four rows gathered by coordinate: the regions
# differ in shape, which no copy call allows) and src_selector (a run-time
# choice among tensor maps): tiledispatch's TMA variants decline both
# (docs/upstream.md A14), so the bridge hands such a call back as not
# expressible, saying so (config() raises).
GATHER_KEYS = frozenset({"gather4", "src_selector"})


def element_text(load: Any, ops: Any, sctx: Any, scalars: dict[str, Any], what: str) -> str:
    """A buffer element (`bar[0]`, `bar[k % 2]`) as the call writes it, its
    buffer registered with the call; an index that is not a constant is a
    call expression (expr_text: its variables become scalars of the call)."""
    idx = []
    for i in load.indices:
        try:
            idx.append(str(int(i)))
        except (TypeError, ValueError):
            idx.append(expr_text(i, ops, sctx, scalars, what))
    return f"{ops.buffer_name(load.source)}[{', '.join(idx)}]"


_BINOPS = {"Add": "+", "Sub": "-", "Mul": "*", "FloorDiv": "//", "FloorMod": "%"}


def expr_text(x: Any, ops: Any, sctx: Any, scalars: dict[str, Any], what: str) -> str:
    """An integer expression of TIR variables (`1 - cbx`) as a call's
    config expression: each variable becomes a scalar of the call
    (`td_cbx`), bound to the variable in the body and declared with its
    dtype and, where TVM knows one (sctx.var_range_map), its range."""
    from tvm.tirx import Cast, IntImm, Var

    if isinstance(x, IntImm):
        return str(int(x.value))
    if isinstance(x, Cast) and "int" in str(x.dtype):
        return expr_text(x.value, ops, sctx, scalars, what)
    if isinstance(x, Var):
        for name, v in ops.scalars.items():
            if v.same_as(x):
                return name
        decl: dict[str, Any] = {"dtype": _dtype(x) or "int32"}
        rng = next((r for v, r in dict(sctx.var_range_map or {}).items() if v.same_as(x)),
                   None)
        try:
            if rng is not None:
                decl["range"] = [int(rng.min), int(rng.min) + int(rng.extent)]
        except (TypeError, ValueError):
            pass   # a symbolic range: the scalar is declared without one
        base = f"td_{x.name}" if re.fullmatch(r"[A-Za-z_]\w*", str(x.name)) else "td_v"
        name, n = base, 0
        while name in ops.scalars or name in ops.buffers:
            n += 1
            name = f"{base}{n}"
        ops.scalars[name] = x
        scalars[name] = decl
        return name
    op = _BINOPS.get(type(x).__name__)
    if op is None:
        raise BridgeError(f"copy_async {what}={x!r}: an expression the bridge does not "
                          "take yet")
    return (f"({expr_text(x.a, ops, sctx, scalars, what)} {op} "
            f"{expr_text(x.b, ops, sctx, scalars, what)})")


def tma_config(raw: dict, config: dict[str, Any], ops: Any, sctx: Any,
               scalars: dict[str, Any]) -> dict[str, Any]:
    """The TMA keys' values as the call writes them: `mbar` (TVM's
    `bar.ptr_to([k % 2])`, i.e. `T.address_of(bar[k % 2])`, or the element
    itself) as the element `bar[(td_k % 2)]` of a call buffer (scope shared,
    uint64; element_text); dsmem's `remote_cta_id` (`1 - cbx`) and a
    multicast `cta_mask` computed at run time by expr_text; strings,
    integers and booleans as they are.  Any other expression (a cache
    policy computed at run time, an operator a call expression lacks) is
    not expressible yet."""
    from tvm.ir import TensorLoad
    from tvm.tirx import FloatImm, IntImm, Var

    out = dict(config)
    for key in sorted(TMA_KEYS & {str(k) for k in raw}):
        v = raw[key]
        if isinstance(v, (bool, int, float, str, IntImm, FloatImm)):
            continue
        if key == "mbar":
            load = v
            if getattr(getattr(v, "op", None), "name", "") == "tirx.address_of":
                load = v.args[0]
            if isinstance(load, TensorLoad):
                out[key] = element_text(load, ops, sctx, scalars, "mbar")
                continue
            name = str(getattr(v, "name", ""))
            if (isinstance(v, Var) and re.fullmatch(r"[A-Za-z_]\w*", name)
                    and name not in ops.buffers and name not in ops.scalars):
                # A pointer (a handle parameter), no barrier element: the
                # name as the call file writes it, which every variant
                # refuses with its reason (an mbarrier is an element of a
                # shared uint64 buffer; ldgsts arrives on none, A2).
                out[key] = name
                continue
        if key in ("remote_cta_id", "cta_mask"):
            out[key] = expr_text(v, ops, sctx, scalars, key)
            continue
        raise BridgeError(f"copy_async {key}={v!r} is an expression the bridge does not "
                          "take yet")
    return out


def config(op_call: Any, config: dict[str, Any], ops: Any, sctx: Any,
           scalars: dict[str, Any]) -> dict[str, Any]:
    """The call's config (the TMA and dsmem keys by tma_config, the
    scalars their expressions use added to `scalars`).  ldgsts's
    `predicate` is an expression (TVM's guard, `p != 0`): a constant stays
    one, anything else is bound to a named int of the call (the body's
    `td_pred`; a boolean as 0 or 1), as tiledispatch's predicate names an
    int."""
    from tvm.tirx import IntImm

    raw = dict(op_call.config or {})
    gather = sorted(GATHER_KEYS & {str(k) for k in raw})
    if gather:
        raise BridgeError(f"copy_async {' and '.join(gather)}: tiledispatch's tma_explicit "
                          "does not build gathered rows or a run-time choice of tensor "
                          "map yet (docs/upstream.md A14)")
    config = tma_config(raw, config, ops, sctx, scalars)
    pred = raw.get("predicate")
    if pred is None or isinstance(pred, (bool, int)):
        return config
    if isinstance(pred, IntImm):
        return {**config, "predicate": int(pred.value)}
    dtype = _dtype(pred)
    if dtype == "bool":
        # TVM tests `p != 0` on it; the named int is its value as 0 or 1.
        from tvm.tirx import Cast

        pred = Cast("int32", pred)
    elif dtype is None or not dtype.startswith(("int", "uint")):
        raise BridgeError(f"copy_async predicate {pred!r} is not an integer expression")
    ops.scalars["td_pred"] = pred
    return {**config, "predicate": "td_pred"}


# ---- tensor memory (tcgen05) ----------------------------------------------
#
# TVM declares a tmem buffer over the address tcgen05.alloc gave
# (`T.decl_buffer(..., scope="tmem", allocated_addr=A, layout=L)`); its
# tcgen05 variants address it from `allocated_addr[0]`.  A tiledispatch tmem
# buffer is lanes x columns with the same `layout:` over TLane and TCol
# (the call loader classifies it: datapath D, F or B, or none, which
# smem->tmem writes and every copy reading a datapath refuses); without one
# it is datapath D.  The emitted body names its base address `NAME_taddr`,
# which the bridge binds to `allocated_addr[0]`.

_LAYOUT_D = re.compile(r"S\[\((\d+), (\d+)\) : \(1@TLane, 1@TCol\)\]")


def tmem_entry(buf: Any, entry: dict[str, Any]) -> dict[str, Any]:
    """The call file's entry of a tmem buffer: TVM's layout as the call
    file's `layout:` (its loader checks and classifies it, and refuses at
    the value what tensor memory cannot hold), left out where it is
    datapath D over the buffer's own 128 lanes, which a tmem buffer
    without a layout means (a D layout over 64 rows stays: without it the
    loader would take the rows for 128 lanes)."""
    del buf
    layout = entry.get("layout")
    if layout is not None:
        m = _LAYOUT_D.fullmatch(layout)
        if (m is not None and [int(m.group(1)), int(m.group(2))] == entry["shape"]
                and entry["shape"][0] == 128):
            return {k: v for k, v in entry.items() if k != "layout"}
    return entry


def tmem_addresses(ops: Any) -> dict[str, Any]:
    """`NAME_taddr` for each tmem buffer of the call, bound to the TVM
    buffer's allocated_addr[0] (what TVM's own tcgen05 variants use) as a
    uint32, the type of a tensor-memory address (TVM 0.27's TMEMPool gives
    an int column; a constant becomes a uint32 constant, any other
    expression is cast)."""
    from tvm.tirx import Cast, IntImm

    out: dict[str, Any] = {}
    for name, buf in ops.buffers.items():
        if str(buf.scope()) != "tmem":
            continue
        addr = list(getattr(buf, "allocated_addr", None) or [])
        if not addr:
            raise BridgeError(f"tmem buffer {buf.name} has no allocated_addr (the address "
                              "tcgen05.alloc wrote), which its copies address it by")
        a = addr[0]
        if isinstance(a, int):
            a = IntImm("uint32", a)
        elif isinstance(a, IntImm):
            a = IntImm("uint32", int(a.value))
        elif _dtype(a) != "uint32":
            a = Cast("uint32", a)
        out[f"{name}_taddr"] = a
    return out


# ---- a TMA copy's tensor maps: TVM's host side ---------------------------
#
# A TMA copy's TIRx starts with its tensor maps as "# host: " lines: the
# map's allocation and its T.tensormap_encode_tiled(...) (TVM's host
# statements, which `tiledispatch emit` shows), and declares each map in
# the body as `NAME = T.TensorMap()`.  In TVM a map is a variable of type
# handle("tensormap") that the host allocates and encodes before the
# launch; a kernel that uses it gets it as a `__grid_constant__`
# parameter.  The bridge makes the variable, hands the host statements to
# TVM through the dispatch context (sctx.add_init_stmt(..., host=True)),
# as TVM's own TMA variants do, and binds the body's name to it.  A map
# is looked up first in sctx's cache, under the key TVM's variants use
# (in TVM 0.27 the cache does not carry a map from one call to the next:
# two calls get two maps, with the bridge as with TVM's own lowering).

_HOST = re.compile(r"^# host: (.*)$", re.M)
_MAP_DECL = re.compile(r"^(\w+) = T\.TensorMap\(\)\n", re.M)
_ENCODE_KW = ("descriptor_dtype", "rank", "interleave", "swizzle", "l2_promotion",
              "oob_fill", "force_cu_dtype")


class MapError(BridgeError):
    """A TMA copy's host statement the bridge does not know how to build."""


def encode_args(line: str, buffers: dict[str, Any]) -> tuple[str, Any, int, list[int],
                                                             dict[str, Any]]:
    """(map name, global buffer, byte offset, the integer arguments, the
    keywords) of a printed `T.tensormap_encode_tiled(MAP,
    T.handle_add_byte_offset(BUF.data, OFF), ints..., key=value...)`."""
    import ast

    try:
        call = ast.parse(line, mode="eval").body
        fn = ast.unparse(call.func)
        name = call.args[0].id
        base = call.args[1]
        buf = base.args[0].value.id
        off = ast.literal_eval(base.args[1])
        ints = [ast.literal_eval(a) for a in call.args[2:]]
        kw = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    except (SyntaxError, AttributeError, IndexError, ValueError) as e:
        raise MapError(f"unexpected host statement {line!r}: {e}") from None
    if (fn != "T.tensormap_encode_tiled" or ast.unparse(base.func) != "T.handle_add_byte_offset"
            or buf not in buffers or sorted(kw) != sorted(_ENCODE_KW)
            or not all(isinstance(i, int) for i in ints)):
        raise MapError(f"unexpected host statement {line!r}")
    return name, buffers[buf], off, ints, kw


def host_encode(tmap: Any, base: Any, ints: list[int], kw: dict[str, Any]) -> Any:
    """The host statements that allocate and encode `tmap`: what TVM's
    TMA variants give sctx.add_init_stmt(..., host=True)."""
    from tvm.script import tirx as T

    dtype, rank, interleave = kw["descriptor_dtype"], kw["rank"], kw["interleave"]
    swizzle, l2, oob, force = (kw["swizzle"], kw["l2_promotion"], kw["oob_fill"],
                               kw["force_cu_dtype"])

    @T.prim_func(check_well_formed=False)
    def encode():
        T.Bind(T.tvm_stack_alloca("tensormap", 1), var=tmap)
        T.tensormap_encode_tiled(tmap, base, *ints, descriptor_dtype=dtype, rank=rank,
                                 interleave=interleave, swizzle=swizzle, l2_promotion=l2,
                                 oob_fill=oob, force_cu_dtype=force)
        T.tvm_kernel_replace_point()

    return encode.body


def tensor_maps(body: str, ops: Any, sctx: Any) -> tuple[str, dict[str, Any]]:
    """The body without its map declarations, and each map's name bound
    to its variable, whose host statements sctx now holds."""
    import tvm
    from tvm.script import tirx as T

    maps: dict[str, Any] = {}
    for line in _HOST.findall(body):
        if not line.startswith("T.tensormap_encode_tiled("):
            continue   # the allocation: part of host_encode's statements
        name, buf, off, ints, kw = encode_args(line, ops.buffers)
        rank = kw["rank"]
        dims, strides = ints[:rank], ints[rank:2 * rank - 1]
        boxes, estrides = ints[2 * rank - 1:3 * rank - 1], ints[3 * rank - 1:]
        base = tvm.tirx.handle_add_byte_offset(buf.data, off)
        bits = tvm.DataType(kw["descriptor_dtype"]).bits
        key = "tensormap:" + ":".join(str(f) for f in (
            f"{hash(buf.data)}:{base}", kw["descriptor_dtype"], bits, kw["force_cu_dtype"],
            tuple(dims), tuple(strides), tuple(boxes), tuple(estrides), kw["interleave"],
            kw["swizzle"], kw["l2_promotion"], kw["oob_fill"]))
        tmap = sctx.cache_get(key)
        if tmap is None:
            tmap = T.Var(name, ty=T.handle("tensormap").ty)
            sctx.add_init_stmt(host_encode(tmap, base, ints, kw), host=True)
            sctx.cache_set(key, tmap)
        maps[name] = tmap
    declared = _MAP_DECL.findall(body)
    if sorted(declared) != sorted(maps):
        raise MapError(f"the body declares maps {declared} but encodes {sorted(maps)}")
    return _MAP_DECL.sub("", body), maps


def with_cluster(launch: dict[str, Any], sctx: Any) -> dict[str, Any]:
    """The call's launch with the kernel's cluster (`cluster: [x, y, z]`,
    from TVM's clusterCtaIdx launch parameters), which dsmem needs; the
    launch unchanged in a kernel without one."""
    params = {str(k): v for k, v in dict(sctx.launch_params).items()}
    if not any(k.startswith("clusterCtaIdx.") for k in params):
        return launch
    dims = []
    for axis in "xyz":
        iv = params.get(f"clusterCtaIdx.{axis}")
        try:
            dims.append(int(iv.dom.extent) if iv is not None else 1)
        except (TypeError, ValueError):
            raise BridgeError("the kernel's cluster has a symbolic extent") from None
    return {**launch, "cluster": dims}
