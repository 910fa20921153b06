"""Route Apache TVM's TIRx tile-primitive dispatch through tiledispatch.

    import tiledispatch.tvm as tdtvm
    tdtvm.install()            # every op tiledispatch has, on CUDA, in C
    ...tvm.compile(mod, target=..., tir_pipeline="tirx")...
    tdtvm.stats()              # what went where, and why
    tdtvm.uninstall()          # TVM's own dispatcher again

TVM's lowering pass calls the global function ``tirx.f_op_dispatcher``
once per tile-primitive call with the ``TilePrimitiveCall`` and its
``DispatchContext``; it hands them to ``dispatcher.run_dispatch``, which
:func:`install` replaces with a function that, for the ops tiledispatch
has (the reductions ``tirx.tile.sum`` / ``max`` / ``min``, the
elementwise ops ``tirx.tile.add``, ``exp``, ``cast``, ... and
``tirx.tile.copy``, ``copy_async``, ``gemm`` (mma.sync),
``permute_layout`` and ``gemm_async`` (tcgen05) on a ``cuda`` target;
:func:`install`'s ``ops`` / ``exclude`` narrow them), converts
both into a :class:`tiledispatch.Call` (:func:`to_call`), dispatches it in
C, prints the winner's TIRx body and builds from it, with TVM's IR
builder, the ``PrimFunc`` the pass splices in (:func:`lower`): the
PrimFunc TVM's TVMScript parser would make of the same text, without the
parser's cost.  Every other call goes to the dispatcher that was
registered before; each such hand-back is logged (logger
``tiledispatch.tvm``, level INFO) and counted (:func:`stats`) with its
reason.

Written against apache-tvm 0.27.0.post1.  Import this module only where
TVM is installed; ``import tiledispatch`` never imports TVM.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import Counter
from typing import Any, Iterable

import tiledispatch as _td

# What this module and copy_async's part of the bridge (its config, a TMA
# copy's tensor maps) share lives below both, so neither imports the other
# back.
from . import _tvm_copy_async as _ca
from . import _tvm_gemm as _gemm
from . import _tvm_gemm_async as _gemm_async
from ._tvm_base import BridgeError, _dtype
# Regions, layouts and views (a module of their own, below this one).
from ._tvm_regions import (_Blocks, _int, _layout_text, _lets, _region_text, _shared_view,
                           _tmem_view)

__all__ = ["install", "uninstall", "installed", "to_call", "lower", "default_registry",
           "served_ops", "taken_ops", "stats", "reset_stats", "BridgeError"]

log = logging.getLogger("tiledispatch.tvm")

_PREFIX = "tirx.tile."
_REDUCTIONS = frozenset({"sum", "max", "min"})
# TVM's unary ops whose positional arguments are (dst, src, bias, scale);
# every other elementwise op is (dst, *srcs).
_BIAS_SCALE = frozenset({"sqrt", "exp", "exp2", "log2"})

# Why a call went back to TVM's dispatcher (the keys of stats()["handed_back"]).
NOT_OURS = "not an op tiledispatch has"
EXCLUDED = "excluded by install()"
NOT_CUDA = "not a cuda target"
NOT_EXPRESSIBLE = "not expressible as a tiledispatch call"
NO_MATCH = "no variant matched"
NOT_BRIDGED = "not bridged yet"

# Ops the library has that the bridge does not take yet: it hands them
# back (counted under NOT_BRIDGED) until their family joins it.  copy
# joined when its PTX addresses became T.ptr_byte_offset, copy_async when
# the bridge read its config (the predicate expression), gemm when it
# named its operands (_tvm_gemm) and hoisted the bodies' register views
# (_hoist_views), permute_layout (dst, src as copy's) with it, gemm_async
# (tcgen05, sm_100a) when the bridge read its tensor-memory accumulator and
# placed its hoisted descriptors where TVM places them (_tvm_gemm_async).
# Empty today; a family that joins the library before the bridge can read
# its calls goes here.
_NOT_BRIDGED: frozenset[str] = frozenset()

_lock = threading.Lock()
_previous = None          # the dispatcher install() replaced
_registry = None          # the tiledispatch.Registry in use
_only: frozenset[str] | None = None  # install(ops=...): the ops the bridge takes, or all
_exclude: frozenset[str] = frozenset()  # install(exclude=...)
_strict = False           # no match / inexpressible: raise instead of handing back
_dispatched: Counter = Counter()     # (op, variant) -> calls
_handed_back: Counter = Counter()    # (reason, TVM op name) -> calls


def default_registry() -> _td.Registry:
    """The registry the bridge uses unless given one: the built-in rules
    (with TILEDISPATCH_RULES / TILEDISPATCH_PLUGINS, as everywhere), every
    variant included (TVM 0.27's parser reads every body they print: the
    packed sm100 paths and shared_rows too)."""
    return _td.Registry()


def served_ops(registry: _td.Registry | None = None) -> frozenset[str]:
    """The tile primitives TVM has (``tirx.tile.X``, by X) that `registry`
    (default: default_registry()) has too, built-in or from a plugin,
    rules or not: the ops the bridge can take."""
    reg = registry if registry is not None else default_registry()
    names = _dispatcher_module().list_registered_schedules()
    return frozenset(op for op in map(_td_op, names)
                     if op is not None and reg.has_op(op) and op not in _NOT_BRIDGED)


# ---- TVM objects -> a tiledispatch call ------------------------------------


_NAME_OK = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


# Conversions of immutable TVM objects, kept per object: the address of
# the object behind a Python handle (`__chandle__()`) -> (the handle, the
# value).  Keeping the handle keeps the object alive, so its address
# cannot be reused for another object while the entry exists.  A kernel's
# tile calls share their buffers and launch parameters, so each is
# converted once per kernel, not once per call.
_KEPT: dict[tuple[str, int], tuple[Any, Any]] = {}
_KEPT_MAX = 4096


def _kept(what: str, obj: Any, make: Any) -> Any:
    key = (what, obj.__chandle__())
    hit = _KEPT.get(key)
    if hit is not None and hit[0].same_as(obj):
        return hit[1]
    value = make(obj)
    if len(_KEPT) >= _KEPT_MAX:
        _KEPT.clear()
    _KEPT[key] = (obj, value)
    return value


def _buffer_entry(buf: Any) -> dict[str, Any]:
    """The call file's entry of a buffer (the value is shared: read only)."""
    return _kept("buffer", buf, _make_buffer_entry)


def _make_buffer_entry(buf: Any) -> dict[str, Any]:
    entry = {
        "scope": str(buf.scope()),
        "dtype": str(buf.dtype),
        "shape": [_int(s, f"shape of buffer {buf.name}") for s in buf.shape],
    }
    layout = getattr(buf, "layout", None)
    if layout is not None:
        # A plain row-major layout is what tiledispatch assumes without one.
        text = _layout_text(layout)
        if text is not None:
            entry["layout"] = text
    if entry["scope"] == "tmem":
        return _ca.tmem_entry(buf, entry)
    return entry


_LAUNCH_TAGS = ("threadIdx.x", "threadIdx.y", "threadIdx.z",
                "blockIdx.x", "blockIdx.y", "blockIdx.z")


_LAST_LAUNCH: Any = None   # (DispatchContext, (launch, launch vars)) of the last call


def _launch_info(sctx: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(_launch(sctx), _launch_vars(sctx)).  TVM hands every call a new
    DispatchContext with a new map of launch parameters, but the IterVars
    in it are a kernel's own: the two are made once per set of IterVars
    (kept with them, see _KEPT), and the last context's pair is kept too,
    for the builder's second look within the same call."""
    global _LAST_LAUNCH
    last = _LAST_LAUNCH
    if last is not None and last[0].same_as(sctx):
        return last[1]
    items = tuple((str(k), v) for k, v in dict(sctx.launch_params).items())
    key = ("launch", tuple((k, v.__chandle__()) for k, v in items))
    hit = _KEPT.get(key)
    if hit is not None and all(a[1].same_as(b[1]) for a, b in zip(hit[0], items)):
        info = hit[1]
    else:
        info = (_make_launch(items), _make_launch_vars(items))
        if len(_KEPT) >= _KEPT_MAX:
            _KEPT.clear()
        _KEPT[key] = (items, info)
    _LAST_LAUNCH = (sctx, info)
    return info


def _launch(sctx: Any) -> dict[str, Any]:
    """The thread and block extents (TVM also lists derived ids such as
    warp_id_in_cta; a call file has the six launch tags only; the value is
    shared: read only)."""
    return _launch_info(sctx)[0]


def _make_launch(items: tuple) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for tag, iv in items:
        if tag not in _LAUNCH_TAGS:
            continue
        ext = iv.dom.extent if hasattr(iv, "dom") and iv.dom is not None else iv
        try:
            out[tag] = int(ext)
        except (TypeError, ValueError):
            out[tag] = str(ext)
    return out


def _config(op: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in dict(op.config or {}).items():
        if isinstance(v, (bool, int, str)):
            out[str(k)] = v
        elif hasattr(v, "value"):
            out[str(k)] = v.value
        else:
            out[str(k)] = str(v)
    return out


def _arch(sctx: Any) -> str | None:
    target = getattr(sctx, "target", None)
    if target is None:
        return None
    attrs = getattr(target, "attrs", {}) or {}
    arch = attrs.get("arch") if hasattr(attrs, "get") else None
    return str(arch) if arch else None


def _tvm_op(op_call: Any) -> str:
    return str(op_call.op.name)


def _td_op(tvm_name: str) -> str | None:
    return tvm_name[len(_PREFIX):] if tvm_name.startswith(_PREFIX) else None


# Names the body's namespace gives something else: a buffer of that name
# is renamed for the call.
_RESERVED = frozenset({"T", "threadIdx", "blockIdx", "__td_op", "__td_bool"})


class _Operands:
    """The buffers and named scalars of one call, by the names its
    tiledispatch call (and so the printed body) gives them."""

    def __init__(self) -> None:
        self.buffers: dict[str, Any] = {}
        self.scalars: dict[str, Any] = {}
        # Only a copy's or copy_async's regions may start at a variable
        # (tiledispatch's rule); other ops' non-constant starts stay not
        # expressible.
        self.blocks: _Blocks | None = None
        # Views of shared buffers at a variable offset (_shared_view),
        # declared in front of the body.
        self.views: list[tuple[Any, Any]] = []   # (view, its buffer)
        # Whose shared regions may start at a variable (through a view):
        # copy_async's and gemm_async's (copy's: not yet); `lets` the
        # let-bound variables where the call is.
        self.shared_views = False
        self.lets: tuple = ()
        # gemm_async's: C's columns at a variable, a tmem view there.
        self.tmem_views = False

    def region(self, region: Any) -> str:
        if self.shared_views:
            view = _shared_view(region, self.lets)
            if view is None and self.tmem_views:
                view = _tmem_view(region, self.lets)
            if view is not None:
                buf, region_text = view
                self.views.append((buf, region.source))
                return region_text(self.buffer_name(buf))
        return _region_text(self.buffer_name(region.source), region, self.blocks)

    def buffer_name(self, buf: Any) -> str:
        """The call's name of a TVM buffer, registered on first sight."""
        name = next((n for n, b in self.buffers.items() if b.same_as(buf)), None)
        if name is None:
            name = str(buf.name)
            if (not _NAME_OK.match(name) or name in _RESERVED or name.startswith("td_")
                    or name in self.buffers):
                n = len(self.buffers)
                while f"buf{n}" in self.buffers:
                    n += 1
                name = f"buf{n}"
            self.buffers[name] = buf
        return name

    def operand(self, x: Any) -> Any:
        """A region as its text, a constant as {value, dtype}, any other
        scalar expression as {scalar: NAME, dtype}, NAME bound to it."""
        from tvm.ir import TensorRegion
        from tvm.tirx import FloatImm, IntImm

        if isinstance(x, TensorRegion):
            return self.region(x)
        dtype = _dtype(x)
        if dtype is None or dtype == "bool":
            raise BridgeError(f"unsupported operand {type(x).__name__}: {x!r}")
        if isinstance(x, (FloatImm, IntImm)):
            return {"value": float(x.value) if isinstance(x, FloatImm) else int(x.value),
                    "dtype": dtype}
        name = f"td_scalar{len(self.scalars)}"
        self.scalars[name] = x
        return {"scalar": name, "dtype": dtype}


def _call_fields(op_name: str, op_call: Any, ops: _Operands,
                 scalars: dict[str, Any]) -> dict[str, Any]:
    """The op's operand fields of the call: dst, src, axes and accum for a
    reduction; dst and src for a copy; dst, srcs and extras (bias, scale)
    for an elementwise op."""
    from tvm.tirx.tile_primitive import TilePrimitiveCall

    op = TilePrimitiveCall.downcast(op_call)
    if op_name in ("copy", "copy_async", "permute_layout"):
        # TVM's Tx.copy(dst, src), Tx.copy_async(dst, src) and
        # Tx.permute_layout(dst, src): two regions
        # (the config carries the cache and eviction hints, ldgsts's
        # settings, the dispatch a forced variant).
        return dict(dst=ops.region(op.dst), src=ops.region(op.src))
    if op_name == "gemm":
        # Tx.warp.gemm(D, A, B, C, transpose_A, transpose_B, alpha, beta).
        return _gemm.fields(op_call, ops)
    if op_name == "gemm_async":
        # Tx.gemm_async(C, A, B, transA, transB, accum).
        return _gemm_async.fields(op_call, ops, scalars)
    if op_name in _REDUCTIONS:
        dst = ops.region(op.output)
        return dict(dst=dst, src=ops.region(op.input),
                    axes=[int(a) for a in op.reduce_axes], accum=bool(op.accum))
    args = list(op_call.args)
    if not args:
        raise BridgeError(f"{_tvm_op(op_call)} has no operands")
    fields: dict[str, Any] = {"dst": ops.region(args[0])}
    rest = args[1:]
    if op_name in _BIAS_SCALE:
        extras = {}
        for key, x in zip(("bias", "scale"), rest[1:3]):
            if x is not None:
                extras[key] = ops.operand(x)
        rest = rest[:1]
        if extras:
            fields["extras"] = extras
    fields["srcs"] = [ops.operand(x) for x in rest if x is not None]
    return fields


def _to_call(op_call: Any, sctx: Any) -> tuple[_td.Call, _Operands]:
    op_name = _td_op(_tvm_op(op_call))
    if op_name is None:
        raise BridgeError(f"{_tvm_op(op_call)} is not a tile primitive")
    ops = _Operands()
    if op_name in ("copy", "copy_async"):
        ops.blocks = _Blocks(_lets(sctx))
    if op_name in ("copy_async", "gemm_async"):
        # A pipeline's stage `A[k % 3, :, :]`: a view of the buffer there.
        ops.shared_views, ops.lets = True, _lets(sctx)
        ops.tmem_views = op_name == "gemm_async"
    scalars: dict[str, Any] = {}
    operands = _call_fields(op_name, op_call, ops, scalars)
    config = _config(op_call)
    launch = _launch(sctx)
    if op_name == "copy_async":
        config = _ca.config(op_call, config, ops, sctx, scalars)
        launch = _ca.with_cluster(launch, sctx)
        ops.scalars.update(_ca.tmem_addresses(ops))
    elif op_name == "gemm_async":
        # cta_group 2 needs the kernel's CTA pair; C's address is its
        # allocated_addr, as for the tensor-memory copies.
        launch = _ca.with_cluster(launch, sctx)
        ops.scalars.update(_ca.tmem_addresses(ops))
    if ops.blocks is not None and ops.blocks.vars:
        launch = ops.blocks.launch(launch)
    # What TVM's guards leave active: gemm's full_active_lanes reads it
    # (mma.sync is warp-collective), gemm_async's single_thread_or_warp
    # (one thread issues tcgen05.mma).  The other ops have no use for it.
    active = (_gemm.active(sctx) if op_name == "gemm"
              else _gemm_async.active(sctx) if op_name == "gemm_async" else None)
    fields: dict[str, Any] = dict(
        op=op_name,
        target="cuda",
        arch=_arch(sctx),
        scope=str(sctx.scope_kind) or None,
        launch=launch or None,
        **operands,
        config=config or None,
        dispatch=str(op_call.dispatch) if getattr(op_call, "dispatch", None) else None,
        active=active,
    )
    fields["buffers"] = {n: _buffer_entry(b) for n, b in ops.buffers.items()}
    if op_name == "gemm_async":
        fields["buffers"] = _gemm_async.per_cta(fields["buffers"], operands["dst"], config)
    if scalars:
        fields["scalars"] = scalars
    try:
        return _td.Call(**fields), ops
    except _td.InputError as e:
        raise BridgeError(f"tiledispatch refuses the call: {e.message or e}") from e


def to_call(op_call: Any, sctx: Any) -> tuple[_td.Call, dict[str, Any]]:
    """The tiledispatch call for a TVM tile-primitive call (a reduction,
    an elementwise op, a copy, a gemm, a permute_layout or a gemm_async),
    and the TVM buffers and scalar expressions by the names the call
    gives them."""
    call, ops = _to_call(op_call, sctx)
    return call, {**ops.buffers, **ops.scalars}


def _launch_vars(sctx: Any) -> dict[str, Any]:
    """`threadIdx` / `blockIdx` for the body: the printed `threadIdx.x`
    binds to the launch parameter's variable of the kernel being lowered
    (the value is shared: read only)."""
    return _launch_info(sctx)[1]


def _make_launch_vars(items: tuple) -> dict[str, Any]:
    from types import SimpleNamespace

    groups: dict[str, dict[str, Any]] = {}
    for tag, iv in items:
        if tag in _LAUNCH_TAGS and hasattr(iv, "var"):
            base, axis = tag.split(".")
            groups.setdefault(base, {})[axis] = iv.var
    return {base: SimpleNamespace(**axes) for base, axes in groups.items()}


def _parse_body(tirx_body: str, buffers: dict[str, Any], sctx: Any = None,
                storage_views: tuple[str, ...] = (), scalars: dict[str, Any] | None = None) -> Any:
    """The PrimFunc of a TIRx body printed by tiledispatch, through TVM's
    TVMScript parser; the body's buffer names bind to the call's buffers
    and its thread indices to the kernel's launch variables.  The buffers
    named in `storage_views` are indexed by the body in per-thread storage
    order (the warp / warpgroup register paths): there the name binds to
    the buffer's local storage view (`Buffer.local()`), declared first."""
    import tvm.script
    from tvm.script import tirx as T

    # `@T.prim_func` bare: called with arguments, TVM's decorator factory
    # takes inspect.stack() of the whole compile pipeline (a third of the
    # parse); parse() below gets check_well_formed itself.
    lines = ["@T.prim_func", "def tiledispatch_impl():"]
    for name in storage_views:
        lines.append(f"    {name} = {name}__buffer.local()")
    buffers = {(f"{n}__buffer" if n in storage_views else n): b for n, b in buffers.items()}
    lines += ["    " + line if line else "" for line in tirx_body.splitlines()]
    if len(lines) == 2 + len(storage_views):
        lines.append("    pass")
    source = "\n".join(lines) + "\n"
    extra = {"T": T, **(_launch_vars(sctx) if sctx is not None else {}), **buffers,
             **(scalars or {})}
    try:
        return tvm.script.parse(source, extra_vars=extra, check_well_formed=False)
    except Exception as e:  # the parser's own error types vary
        raise BridgeError(f"TVM could not parse tiledispatch's TIRx body:\n{source}\n{e}") from e


# ---- the body built directly ----------------------------------------------
#
# TVM's TVMScript parser spends ~20 ms on a body of a dozen lines: it turns
# the text into its own AST, evaluates every expression through its
# dispatching evaluator and inspects frames.  The bodies tiledispatch
# prints use a small part of TVMScript, so the bridge builds them with
# TVM's IR builder itself: Python's `ast` splits the text into statements
# (cached per text), each expression is evaluated by Python over the same
# `T` namespace (PrimExpr operators build the same nodes), and each
# statement makes the IR-builder calls TVMScript's tirx parser makes for
# it.  Anything outside that part raises _Unsupported and the text goes to
# TVM's parser after all.


class _Unsupported(Exception):
    pass


_PLANS: dict[str, Any] = {}    # body text -> its statements, operators rewritten


# (operator, operand types) -> the function TVMScript's evaluator picks.
_OP_FUNCS: dict[tuple, Any] = {}


def _op_func(op_name: str, types: tuple) -> Any:
    """The function TVMScript's evaluator (`_eval_op`) applies for operator
    `op_name` on operands of `types`: the first operand whose type has a
    `_dispatch_type` with an entry in the parser's operator table for its
    position decides, else Python's own operator.  The choice depends on
    the types alone, so it is looked up once per combination."""
    from tvm.script.parser.core import dispatch, doc
    from tvm.script.parser.core.evaluator import DEFAULT_OP

    op_type = getattr(doc, op_name)
    for i, t in enumerate(types):
        v_type = getattr(t, "_dispatch_type", None)
        if v_type is None:
            continue
        f = dispatch.get_op(operand_type=v_type, op_node_type=op_type, operand_index=i,
                            default=None)
        if f is not None:
            return f
    return DEFAULT_OP[op_type]


def _apply_op(op_name: str, *values: Any) -> Any:
    """An operator as TVMScript's evaluator applies it (its table of
    operator functions per operand type: literals take the other operand's
    dtype, `and` of PrimExprs is tirx.And, ...)."""
    key = (op_name, *map(type, values))
    f = _OP_FUNCS.get(key)
    if f is None:
        f = _OP_FUNCS[key] = _op_func(op_name, key[1:])
    return f(*values)


def _apply_bool(op_name: str, *thunks: Any) -> Any:
    value = thunks[0]()
    for thunk in thunks[1:]:
        if isinstance(value, bool) and value == (op_name == "Or"):
            return value
        value = _apply_op(op_name, value, thunk())
    return value


def _rewrite(tree: Any) -> Any:
    """Every operator of `tree` as a call of _apply_op / _apply_bool."""
    import ast

    def call(fn: str, *args: Any) -> Any:
        return ast.Call(func=ast.Name(id=fn, ctx=ast.Load()), args=list(args), keywords=[])

    class Ops(ast.NodeTransformer):
        def visit_BinOp(self, node: Any) -> Any:
            self.generic_visit(node)
            return call("__td_op", ast.Constant(type(node.op).__name__), node.left, node.right)

        def visit_UnaryOp(self, node: Any) -> Any:
            self.generic_visit(node)
            return call("__td_op", ast.Constant(type(node.op).__name__), node.operand)

        def visit_Compare(self, node: Any) -> Any:
            self.generic_visit(node)
            if len(node.ops) != 1:
                raise _Unsupported("chained comparison")
            return call("__td_op", ast.Constant(type(node.ops[0]).__name__), node.left,
                        node.comparators[0])

        def visit_BoolOp(self, node: Any) -> Any:
            self.generic_visit(node)
            thunks = [ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                                                    kw_defaults=[], defaults=[]), body=v)
                      for v in node.values]
            return call("__td_bool", ast.Constant(type(node.op).__name__), *thunks)

    return ast.fix_missing_locations(Ops().visit(tree))


def _plan(tirx_body: str) -> list:
    import ast

    plan = _PLANS.get(tirx_body)
    if plan is None:
        tree = ast.parse(tirx_body)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Lambda, ast.Starred, ast.IfExp, ast.NamedExpr)):
                raise _Unsupported(type(node).__name__)
        plan = _rewrite(tree).body
        if len(_PLANS) > 4096:
            _PLANS.clear()
            _CODE.clear()
        _PLANS[tirx_body] = plan
    return plan


_CODE: dict[int, Any] = {}


def _eval(node: Any, env: dict[str, Any]) -> Any:
    import ast

    code = _CODE.get(id(node))
    if code is None or code[0] is not node:
        code = (node, compile(ast.Expression(node), "<tiledispatch>", "eval"))
        _CODE[id(node)] = code
    return eval(code[1], env)  # noqa: S307  (tiledispatch's own printed body)


_MODS: Any = None


def _mods() -> Any:
    """The TVM modules and names the builder uses, imported once (an import
    statement in a function costs a lookup on every call, and the builder
    runs once per statement)."""
    global _MODS
    if _MODS is None:
        from types import SimpleNamespace

        import tvm
        from tvm.ir import TensorLoad
        from tvm.script import tirx as T
        from tvm.script.ir_builder.base import IRBuilder
        from tvm.tirx import is_buffer_var
        from tvm.tirx.script import builder as B

        _MODS = SimpleNamespace(tvm=tvm, TensorLoad=TensorLoad, T=T, IRBuilder=IRBuilder,
                                is_buffer_var=is_buffer_var, B=B, ForFrame=B.frame.ForFrame,
                                Var=tvm.ir.Var, is_prim_expr=tvm.ir.is_prim_expr,
                                ExprOp=tvm.tirx.expr.ExprOp, Call=tvm.ir.Call,
                                fast_T=_FastT(T, B))
    return _MODS


_LAYOUTS: dict[tuple, Any] = {}   # constant shape -> TileLayout(S[shape])


def _default_layout(shape: tuple) -> Any:
    """`TileLayout(S[shape])`, the layout TVM's builder gives a buffer
    allocated without one in a tirx (not s_tir) PrimFunc, made once per
    shape (a layout is immutable; building one costs more than the
    allocation itself)."""
    layout = _LAYOUTS.get(shape)
    if layout is None:
        from tvm.tirx.layout import S, TileLayout

        if len(_LAYOUTS) > 1024:
            _LAYOUTS.clear()
        layout = _LAYOUTS[shape] = TileLayout(S[shape])
    return layout


def _const_shape(shape: Any) -> tuple | None:
    """`shape` as a tuple of Python ints, or None where it is not one."""
    if isinstance(shape, int) and not isinstance(shape, bool):
        return (shape,)
    if isinstance(shape, (tuple, list)) and all(
            isinstance(n, int) and not isinstance(n, bool) for n in shape):
        return tuple(shape)
    return None


class _FastT:
    """The `T` of the printed bodies for the builder: TVMScript's `T`
    (tvm.script.tirx), attribute for attribute, except `alloc_buffer`,
    which passes the default layout of a constant shape made once
    (`_default_layout`) where TVM's would build it again for every
    buffer.  The bodies are built inside a tirx PrimFunc (s_tir=False),
    where TVM's default is exactly that layout."""

    def __init__(self, T: Any, B: Any) -> None:
        self._T, self._alloc = T, B.alloc_buffer

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._T, name)
        setattr(self, name, value)   # found once, then a plain attribute
        return value

    def alloc_buffer(self, shape: Any, dtype: str = "float32", *args: Any,
                     **kwargs: Any) -> Any:
        const = _const_shape(shape)
        scope = kwargs.get("scope", "global")
        if (const is not None and not args and "layout" not in kwargs
                and isinstance(scope, str) and not scope.startswith("trn.")):
            kwargs["layout"] = _default_layout(const)
        return self._alloc(shape, dtype, *args, **kwargs)


def _local_scalar(dtype: str) -> Any:
    """B.local_scalar(dtype) (TVM's alloc_scalar at local scope) with the
    [1] layout made once."""
    from tvm.tirx.script.builder import ir

    buf = ir.alloc_buffer(shape=(1,), dtype=dtype, scope="local", layout=_default_layout((1,)))
    scalar = buf[0]
    if ir._current_meta_construction_scope() is not None:
        return scalar
    return ir.scalar_wrapper(scalar)


def _build_stmts(stmts: list, env: dict[str, Any]) -> None:
    import ast

    m = _mods()
    tvm, TensorLoad, IRBuilder, is_buffer_var, B = (m.tvm, m.TensorLoad, m.IRBuilder,
                                                    m.is_buffer_var, m.B)
    for st in stmts:
        if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
            ann = _eval(st.annotation, env)
            var = ann() if callable(ann) else ann
            if not isinstance(var, tvm.ir.Var):
                raise _Unsupported("annotation")
            rhs = _eval(st.value, env) if st.value is not None else None
            scalar = _local_scalar(str(var.ty))
            IRBuilder.name(st.target.id, scalar.scalar.source)
            env[st.target.id] = scalar.scalar
            if rhs is not None:
                B.buffer_store(scalar.scalar.source, rhs, [0])
        elif isinstance(st, ast.Assign) and len(st.targets) == 1:
            lhs = st.targets[0]
            rhs = _eval(st.value, env)
            if isinstance(lhs, ast.Subscript):
                if isinstance(lhs.slice, ast.Slice) or (
                        isinstance(lhs.slice, ast.Tuple)
                        and any(isinstance(e, ast.Slice) for e in lhs.slice.elts)):
                    raise _Unsupported("slice store")
                if isinstance(lhs.slice, ast.Tuple):
                    indices = [_eval(e, env) for e in lhs.slice.elts]
                else:
                    indices = _eval(lhs.slice, env)
                B.buffer_store(_eval(lhs.value, env), rhs, indices)
            elif isinstance(lhs, ast.Name):
                old = env.get(lhs.id)
                if isinstance(old, TensorLoad) and len(old.source.ty.shape) == 1 and \
                        int(old.source.ty.shape[0]) == 1:
                    B.buffer_store(old.source, rhs, [0])
                elif is_buffer_var(rhs):
                    IRBuilder.name(lhs.id, rhs)
                    env[lhs.id] = rhs
                else:
                    raise _Unsupported("assignment")
            else:
                raise _Unsupported("assignment target")
        elif isinstance(st, ast.For) and isinstance(st.target, ast.Name) and not st.orelse:
            frame = _eval(st.iter, env)
            if not isinstance(frame, B.frame.ForFrame):
                raise _Unsupported("loop")
            with frame as v:
                IRBuilder.name(st.target.id, v)
                _build_stmts(st.body, {**env, st.target.id: v})
        elif isinstance(st, ast.If):
            cond = _eval(st.test, env)
            if not (tvm.ir.is_prim_expr(cond) or isinstance(cond, tvm.tirx.expr.ExprOp)):
                raise _Unsupported("condition")
            with B.If(cond):
                with B.Then():
                    _build_stmts(st.body, dict(env))
                if st.orelse:
                    with B.Else():
                        _build_stmts(st.orelse, dict(env))
        elif isinstance(st, ast.Expr):
            res = _eval(st.value, env)
            if res is None or isinstance(res, str):
                continue
            if tvm.ir.is_prim_expr(res) or isinstance(res, tvm.ir.Call):
                B.evaluate(res)
            else:
                raise _Unsupported(f"statement {type(res).__name__}")
        elif isinstance(st, ast.Pass):
            continue
        else:
            raise _Unsupported(type(st).__name__)


def _build_body(tirx_body: str, buffers: dict[str, Any], sctx: Any = None,
                storage_views: tuple[str, ...] = (), scalars: dict[str, Any] | None = None) -> Any:
    """The PrimFunc _parse_body makes of the same body, built directly
    (raises _Unsupported where the body leaves the part it handles)."""
    m = _mods()
    IRBuilder, B = m.IRBuilder, m.B
    plan = _plan(tirx_body)
    env: dict[str, Any] = {"T": m.fast_T, "__td_op": _apply_op, "__td_bool": _apply_bool,
                           **(_launch_vars(sctx) if sctx is not None else {}),
                           **buffers, **(scalars or {})}
    with IRBuilder() as ib:
        with B.prim_func(is_private=False, s_tir=False, persistent=False):
            B.func_name("tiledispatch_impl")
            for name in storage_views:
                view = buffers[name].local()
                IRBuilder.name(name, view)
                env[name] = view
            _build_stmts(plan, env)
    return ib.get()


def _forget() -> None:
    """Empty every cache the bridge keeps between calls (the plans per
    body text, their compiled expressions, the conversions per TVM object,
    the layouts per shape, the operator functions): bench_bridge.py
    --cold calls it before each compile."""
    global _LAST_LAUNCH
    _PLANS.clear()
    _CODE.clear()
    _KEPT.clear()
    _LAYOUTS.clear()
    _OP_FUNCS.clear()
    _LAST_LAUNCH = None


_direct = True      # build bodies directly (False: always through TVM's parser)
_verify = False     # also parse each body and require the same PrimFunc (the tests)


def _make_body(tirx_body: str, buffers: dict[str, Any], sctx: Any,
               storage_views: tuple[str, ...], scalars: dict[str, Any]) -> Any:
    if _direct:
        try:
            built = _build_body(tirx_body, buffers, sctx, storage_views, scalars)
        except _Unsupported as e:
            log.debug("body parsed by TVMScript (%s)", e)
        else:
            if _verify:
                import tvm_ffi

                parsed = _parse_body(tirx_body, buffers, sctx, storage_views, scalars)
                if not tvm_ffi.structural_equal(parsed, built):
                    raise BridgeError("the body built directly differs from TVM's parse:\n"
                                      f"{tirx_body}\nparsed:\n{parsed.script()}\n"
                                      f"built:\n{built.script()}")
            return built
    return _parse_body(tirx_body, buffers, sctx, storage_views, scalars)


def _storage_views(call: _td.Call) -> tuple[str, ...]:
    """The local buffers with a layout that the body indexes in per-thread
    storage order: all of them at warp and warpgroup scope (the reduction
    paths) and all of them for elementwise ops (`reg` walks the storage)."""
    out = []
    for name, b in call.buffers.items():
        if b["scope"] != "local" or "layout" not in b:
            continue
        if call.scope in ("warp", "warpgroup") or call.op not in _REDUCTIONS:
            out.append(name)
    return tuple(out)


_VIEW = re.compile(r"\b([A-Za-z_]\w*)((?:\.local\(\))?)(?:\.view\(\"(\w+)\"\))?")


def _hoist_views(body: str, buffers: dict[str, Any], storage_views: tuple[str, ...]) -> str:
    """The body with each view of a call buffer (`A.local()`,
    `A.view("uint32")`, `A.local().view("uint32")`) declared once at its
    top and named (`A__uint32`): TVM's `Buffer.local()` and `.view()` each
    open a DeclBuffer frame that encloses the rest of the body, so a view
    written at every use (an mma per line, fourteen registers each) nests
    the body a thousand frames deep, past Python's recursion limit in
    TVM's builder.  A buffer in `storage_views` is bound to its
    per-thread storage already: its `.local()` is the buffer itself."""
    if ".view(" not in body and ".local()" not in body:
        return body
    decls: dict[str, str] = {}

    def sub(m: "re.Match[str]") -> str:
        name, local, dtype = m.group(1), m.group(2), m.group(3)
        if name not in buffers or not (local or dtype):
            return m.group(0)
        base = name
        if local and name not in storage_views:
            base = f"{name}__local"
            decls.setdefault(base, f"{base} = {name}.local()")
        if dtype is None:
            return base
        view = f"{name}__{dtype}"
        decls.setdefault(view, f"{view} = {base}.view(\"{dtype}\")")
        return view

    lines = [_VIEW.sub(sub, line) if not line.lstrip().startswith("#") else line
             for line in body.splitlines()]
    return "\n".join(list(decls.values()) + lines) + "\n"


def _lower(call: _td.Call, ops: _Operands, sctx: Any, reg: _td.Registry) -> tuple[Any, str]:
    d = reg.dispatch(call)
    views = _storage_views(call)
    body = _hoist_views(d.emit("tirx"), ops.buffers, views)
    names = ops.scalars
    if "# host: " in body:
        body, maps = _ca.tensor_maps(body, ops, sctx)
        names = {**names, **maps}

    if ops.blocks is not None and ops.blocks.vars:
        # The body's blockIdx.x is the region's own variable.
        names = {**names, **ops.blocks.names(_launch_vars(sctx))}
    if call.op == "gemm_async" and ops.views:
        # Descriptors encoded once from the buffer's base, the view's
        # offset added at each MMA, as TVM's tcgen05 does (hoist,
        # local_hoist).
        body, offsets = _gemm_async.view_offsets(body, call, ops)
        names = {**names, **offsets}
    func = _make_body(body, ops.buffers, sctx, views, names)
    if call.op == "gemm_async":
        func = _gemm_async.hoisted(func, body, call, ops, sctx)
    # (A gemm_async view whose descriptors now start at the buffer's
    # base is not named by the body: not declared.)
    used = [(v, src) for v, src in ops.views if call.op != "gemm_async"
            or re.search(rf"\b{re.escape(ops.buffer_name(v))}\[", body)]
    if used:
        import tvm

        func = func.with_body(tvm.tirx.SeqStmt(
            [tvm.tirx.DeclBuffer(v, data=src.data) for v, src in used] + [func.body]))
    return func, d.variant


def lower(op_call: Any, sctx: Any, registry: _td.Registry | None = None) -> Any:
    """Dispatch one TVM call with tiledispatch and return the PrimFunc TVM
    inlines.  Raises RuntimeError with tiledispatch's table when no variant
    matches (as TVM's dispatcher does) and BridgeError when the call cannot
    be expressed as a tiledispatch call."""
    reg = registry or _registry or default_registry()
    call, ops = _to_call(op_call, sctx)
    try:
        return _lower(call, ops, sctx, reg)[0]
    except (_td.DispatchError, _td.InputError) as e:
        raise RuntimeError(f"tiledispatch: {e}") from e


# ---- the account: what went back to TVM, and why ---------------------------


def _hand_back(reason: str, tvm_name: str, detail: str = "") -> None:
    with _lock:
        _handed_back[(reason, tvm_name)] += 1
    if log.isEnabledFor(logging.INFO):
        log.info("%s handed back to TVM: %s%s", tvm_name, reason,
                 f" ({detail})" if detail else "")


def _no_match_detail(e: _td.DispatchError) -> str:
    if e.reason:
        return e.reason
    return "; ".join(f"{r.variant}: {r.status}" + (f" - {r.reasons[0]}" if r.reasons else "")
                     for r in e.rows)


def stats() -> dict[str, dict[str, dict[str, int]]]:
    """What the bridge did since the last reset_stats():
    ``{"dispatched": {op: {variant: calls}}, "handed_back": {reason: {TVM
    op: calls}}}``; the reasons are ``"not an op tiledispatch has"``,
    ``"excluded by install()"``, ``"not a cuda target"``, ``"not
    expressible as a tiledispatch call"``, ``"no variant matched"`` and
    ``"not bridged yet"`` (an op in _NOT_BRIDGED: none today)."""
    out: dict[str, dict[str, dict[str, int]]] = {"dispatched": {}, "handed_back": {}}
    with _lock:
        for (op, variant), n in sorted(_dispatched.items()):
            out["dispatched"].setdefault(op, {})[variant] = n
        for (reason, op), n in sorted(_handed_back.items()):
            out["handed_back"].setdefault(reason, {})[op] = n
    return out


def reset_stats() -> None:
    """Zero the counters of stats()."""
    with _lock:
        _dispatched.clear()
        _handed_back.clear()


# ---- the hook --------------------------------------------------------------
#
# TVM's lowering pass calls the global function tirx.f_op_dispatcher, whose
# Python body imports `run_dispatch` from
# tvm.tirx.operator.tile_primitive.dispatcher on every call.  The C++ side
# may hold on to the global function it looked up first, so re-registering
# the global would not take effect in a process that already compiled;
# replacing the module's `run_dispatch` does, at once and for every caller.


def _is_cuda(sctx: Any) -> bool:
    kind = getattr(getattr(sctx, "target", None), "kind", None)
    return getattr(kind, "name", str(kind)) == "cuda"


def _run_dispatch(op_call: Any, sctx: Any) -> Any:
    prev, reg, only, exclude, strict = _previous, _registry, _only, _exclude, _strict
    if prev is None or reg is None:  # uninstalled while a reference was held
        from tvm.tirx.operator.tile_primitive import dispatcher

        return dispatcher.run_dispatch(op_call, sctx)
    tvm_name = _tvm_op(op_call)
    op = _td_op(tvm_name)
    if op is None or not reg.has_op(op):
        _hand_back(NOT_OURS, tvm_name)
        return prev(op_call, sctx)
    if op in _NOT_BRIDGED:
        _hand_back(NOT_BRIDGED, tvm_name)
        return prev(op_call, sctx)
    if op in exclude or (only is not None and op not in only):
        _hand_back(EXCLUDED, tvm_name)
        return prev(op_call, sctx)
    if not _is_cuda(sctx):
        _hand_back(NOT_CUDA, tvm_name)
        return prev(op_call, sctx)
    try:
        call, operands = _to_call(op_call, sctx)
    except BridgeError as e:
        if strict:
            raise
        _hand_back(NOT_EXPRESSIBLE, tvm_name, str(e))
        return prev(op_call, sctx)
    try:
        func, variant = _lower(call, operands, sctx, reg)
    except (_ca.MapError, _gemm_async.HoistError) as e:
        # A tensor map the bridge cannot give TVM's host side, descriptors
        # it cannot hoist.
        if strict:
            raise
        _hand_back(NOT_EXPRESSIBLE, tvm_name, str(e))
        return prev(op_call, sctx)
    except (_td.DispatchError, _td.InputError) as e:
        # InputError: the op's own operand check refused the call.
        if strict:
            raise RuntimeError(f"tiledispatch: {e}") from e
        detail = (_no_match_detail(e) if isinstance(e, _td.DispatchError)
                  else e.message or str(e))
        _hand_back(NO_MATCH, tvm_name, detail)
        return prev(op_call, sctx)
    with _lock:
        _dispatched[(op, variant)] += 1
    if op == "copy" and variant == "fallback":
        _warn_copy_fallback(call)
    return func


def _warn_copy_fallback(call: _td.Call) -> None:
    """TVM's copy fallback warns when it is picked (a scalar copy by one
    thread: every faster variant refused the call); so does the bridge,
    in TVM's words, so that code watching for it sees the same."""
    import warnings

    def scope(region: str) -> str:
        return call.buffers[region.split("[", 1)[0]]["scope"]

    warnings.warn(f"copy/fallback (scalar single-thread) picked for {scope(call.src)} -> "
                  f"{scope(call.dst)} at scope_kind={call.scope}; all faster variants "
                  "rejected.", stacklevel=2)


def _dispatcher_module() -> Any:
    # Importing the CUDA backend registers TVM's own variants and its hook.
    import tvm.backend.cuda.tile_primitive  # noqa: F401
    import tvm.tirx.operator.tile_primitive.registry  # noqa: F401
    from tvm.tirx.operator.tile_primitive import dispatcher

    return dispatcher


def installed() -> bool:
    """Whether install() is in effect."""
    return _previous is not None


def _op_names(names: Iterable[str] | None, what: str) -> set[str] | None:
    if names is None:
        return None
    if isinstance(names, str):
        raise TypeError(f"{what}= takes a list of op names, not one string")
    return {n[len(_PREFIX):] if n.startswith(_PREFIX) else n for n in names}


def install(registry: _td.Registry | None = None, *, ops: Iterable[str] | None = None,
            exclude: Iterable[str] = (), strict: bool = False) -> None:
    """Route TVM's dispatch of the ops tiledispatch has, on CUDA, through
    tiledispatch with `registry` (default: default_registry()).

    `ops` names the ops the bridge takes (``"exp"`` or ``"tirx.tile.exp"``;
    default: every op the registry has, see served_ops()), `exclude`
    removes some; naming an op the registry does not have raises
    ValueError.  A
    call the bridge takes but no variant matches, or that it cannot
    express as a tiledispatch call, goes back to TVM's dispatcher (logged
    and counted, see stats()); with ``strict=True`` it raises instead
    (RuntimeError with tiledispatch's table for no match, BridgeError
    otherwise).

    Each install() states the whole configuration: installing again
    replaces the registry, the ops and `strict` (so ``install()`` after
    ``install(custom)`` is back on the default registry); uninstall()
    restores TVM's dispatcher."""
    global _previous, _registry, _only, _exclude, _strict
    reg = registry if registry is not None else default_registry()
    want = _op_names(ops, "ops")
    drop = _op_names(exclude, "exclude") or set()
    unknown = sorted(n for n in (want or set()) | drop if not reg.has_op(n))
    if unknown:
        raise ValueError(f"not ops tiledispatch has: {', '.join(unknown)} "
                         f"(it has {', '.join(sorted(served_ops(reg)))})")
    later = sorted(n for n in (want or set()) if n in _NOT_BRIDGED)
    if later:
        raise ValueError(f"not bridged yet: {', '.join(later)} (TVM cannot build "
                         f"the TIRx tiledispatch prints for it; the bridge takes "
                         f"{', '.join(sorted(served_ops(reg)))})")
    dispatcher = _dispatcher_module()
    with _lock:
        _registry, _strict = reg, bool(strict)
        _only = frozenset(want) if want is not None else None
        _exclude = frozenset(drop)
        if _previous is None:
            _previous = dispatcher.run_dispatch
            dispatcher.run_dispatch = _run_dispatch


def taken_ops() -> frozenset[str]:
    """The ops the installed bridge takes, of those TVM has (empty when
    not installed)."""
    with _lock:
        reg, only, exclude = _registry, _only, _exclude
    if reg is None:
        return frozenset()
    return frozenset(op for op in served_ops(reg)
                     if op not in exclude and (only is None or op in only))


def uninstall() -> None:
    """Restore TVM's own dispatcher.  A no-op when not installed."""
    global _previous, _registry, _only, _exclude
    dispatcher = _dispatcher_module()
    with _lock:
        if _previous is None:
            return
        dispatcher.run_dispatch = _previous
        _previous = None
        _registry = None
        _only, _exclude = None, frozenset()

