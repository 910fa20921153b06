"""Route Apache TVM's TIRx reduction dispatch through tiledispatch.

    import tiledispatch.tvm as tdtvm
    tdtvm.install()            # sum / max / min on CUDA now dispatch in C
    ...tvm.compile(mod, target=..., tir_pipeline="tirx")...
    tdtvm.uninstall()          # TVM's own dispatcher again

TVM's lowering pass calls the global function ``tirx.f_op_dispatcher``
once per tile-primitive call with the ``TilePrimitiveCall`` and its
``DispatchContext``; it hands them to ``dispatcher.run_dispatch``, which
:func:`install` replaces with a function that, for the
reductions tiledispatch serves (``tirx.tile.sum``, ``max``, ``min`` on a
``cuda`` target), converts both into a :class:`tiledispatch.Call`
(:func:`to_call`), dispatches it in C, prints the winner's TIRx body and
parses it back with TVM's own TVMScript parser into the ``PrimFunc`` the
pass splices in (:func:`lower`).  Every other op, and every other target,
goes to the dispatcher that was registered before, untouched.

Written against apache-tvm 0.27.0.post1.  Import this module only where
TVM is installed; ``import tiledispatch`` never imports TVM.
"""

from __future__ import annotations

import re
import threading
from typing import Any

import tiledispatch as _td

__all__ = ["install", "uninstall", "installed", "to_call", "lower", "default_registry",
           "BridgeError"]

_OPS = {"tirx.tile.sum": "sum", "tirx.tile.max": "max", "tirx.tile.min": "min"}

_lock = threading.Lock()
_previous = None          # the dispatcher install() replaced
_registry = None          # the tiledispatch.Registry in use


def default_registry() -> _td.Registry:
    """The registry the bridge uses unless given one: the built-in rules,
    every variant included (TVM 0.27's parser reads every body they print:
    the packed sm100 paths and shared_rows too)."""
    return _td.Registry()


class BridgeError(_td.Error):
    """A TVM call the bridge cannot express as a tiledispatch call (a
    symbolic shape, an unknown layout, ...), or a body TVM's parser refused."""


# ---- TVM objects -> a tiledispatch call ------------------------------------


def _int(x: Any, what: str) -> int:
    try:
        return int(x)
    except (TypeError, ValueError):
        raise BridgeError(f"{what} must be a constant, got {x!r}") from None


_NAME_OK = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _layout_text(layout: Any) -> str | None:
    """TVM's TileLayout as tiledispatch's TileLayout notation:
    ``T.TileLayout(T.S[(32, 4):(1 @ Axis.laneid, 1)])`` becomes
    ``S[(32, 4) : (1@laneid, 1)]``."""
    if layout is None:
        return None
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


def _buffer_entry(buf: Any) -> dict[str, Any]:
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
    return entry


def _region_text(name: str, region: Any) -> str:
    parts = []
    for r in region.region:
        lo = _int(r.min, f"region start of {name}")
        ext = _int(r.extent, f"region extent of {name}")
        parts.append(f"{lo}:{lo + ext}")
    return f"{name}[{', '.join(parts)}]"


_LAUNCH_TAGS = ("threadIdx.x", "threadIdx.y", "threadIdx.z",
                "blockIdx.x", "blockIdx.y", "blockIdx.z")


def _launch(sctx: Any) -> dict[str, Any]:
    """The thread and block extents (TVM also lists derived ids such as
    warp_id_in_cta; a call file has the six launch tags only)."""
    out: dict[str, Any] = {}
    for tag, iv in dict(sctx.launch_params).items():
        if str(tag) not in _LAUNCH_TAGS:
            continue
        ext = iv.dom.extent if hasattr(iv, "dom") and iv.dom is not None else iv
        try:
            out[str(tag)] = int(ext)
        except (TypeError, ValueError):
            out[str(tag)] = str(ext)
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


def to_call(op_call: Any, sctx: Any) -> tuple[_td.Call, dict[str, Any]]:
    """The tiledispatch call for a TVM reduction call, and the TVM buffers
    by the names the call gives them."""
    from tvm.tirx.tile_primitive import TilePrimitiveCall

    op = TilePrimitiveCall.downcast(op_call)
    op_name = _OPS.get(op_call.op.name)
    if op_name is None:
        raise BridgeError(f"{op_call.op.name} is not a reduction tiledispatch serves")
    dst, src = op.output, op.input
    buffers: dict[str, Any] = {}
    names: list[str] = []
    for region in (dst, src):
        buf = region.source
        name = next((n for n, b in buffers.items() if b.same_as(buf)), None)
        if name is None:
            name = str(buf.name)
            if not _NAME_OK.match(name) or name in buffers:
                name = f"buf{len(buffers)}"
            buffers[name] = buf
        names.append(name)
    fields: dict[str, Any] = dict(
        op=op_name,
        target="cuda",
        arch=_arch(sctx),
        scope=str(sctx.scope_kind) or None,
        launch=_launch(sctx) or None,
        buffers={n: _buffer_entry(b) for n, b in buffers.items()},
        dst=_region_text(names[0], dst),
        src=_region_text(names[1], src),
        axes=[int(a) for a in op.reduce_axes],
        accum=bool(op.accum),
        config=_config(op) or None,
        dispatch=str(op.dispatch) if getattr(op, "dispatch", None) else None,
    )
    return _td.Call(**fields), buffers


def _launch_vars(sctx: Any) -> dict[str, Any]:
    """`threadIdx` / `blockIdx` for the body: the printed `threadIdx.x`
    binds to the launch parameter's variable of the kernel being lowered."""
    from types import SimpleNamespace

    groups: dict[str, dict[str, Any]] = {}
    for tag, iv in dict(sctx.launch_params).items():
        tag = str(tag)
        if tag in _LAUNCH_TAGS and hasattr(iv, "var"):
            base, axis = tag.split(".")
            groups.setdefault(base, {})[axis] = iv.var
    return {base: SimpleNamespace(**axes) for base, axes in groups.items()}


def _parse_body(tirx_body: str, buffers: dict[str, Any], sctx: Any = None,
                storage_views: tuple[str, ...] = ()) -> Any:
    """The PrimFunc of a TIRx body printed by tiledispatch, through TVM's
    TVMScript parser; the body's buffer names bind to the call's buffers
    and its thread indices to the kernel's launch variables.  The buffers
    named in `storage_views` are indexed by the body in per-thread storage
    order (the warp / warpgroup register paths): there the name binds to
    the buffer's local storage view (`Buffer.local()`), declared first."""
    import tvm.script
    from tvm.script import tirx as T

    lines = ["@T.prim_func(check_well_formed=False)", "def tiledispatch_impl():"]
    for name in storage_views:
        lines.append(f"    {name} = {name}__buffer.local()")
    buffers = {(f"{n}__buffer" if n in storage_views else n): b for n, b in buffers.items()}
    lines += ["    " + line if line else "" for line in tirx_body.splitlines()]
    if len(lines) == 2 + len(storage_views):
        lines.append("    pass")
    source = "\n".join(lines) + "\n"
    extra = {"T": T, **(_launch_vars(sctx) if sctx is not None else {}), **buffers}
    try:
        return tvm.script.parse(source, extra_vars=extra, check_well_formed=False)
    except Exception as e:  # the parser's own error types vary
        raise BridgeError(f"TVM could not parse tiledispatch's TIRx body:\n{source}\n{e}") from e


def lower(op_call: Any, sctx: Any, registry: _td.Registry | None = None) -> Any:
    """Dispatch one TVM reduction call with tiledispatch and return the
    PrimFunc TVM inlines.  Raises RuntimeError with tiledispatch's table
    when no variant matches (as TVM's dispatcher does)."""
    reg = registry or _registry or default_registry()
    call, buffers = to_call(op_call, sctx)
    try:
        d = reg.dispatch(call)
    except _td.DispatchError as e:
        raise RuntimeError(f"tiledispatch: {e}") from e
    views: tuple[str, ...] = ()
    if call.scope in ("warp", "warpgroup"):
        views = tuple(n for n, b in call.buffers.items()
                      if b["scope"] == "local" and "layout" in b)
    return _parse_body(d.emit("tirx"), buffers, sctx, views)


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
    prev, reg = _previous, _registry
    if prev is not None and op_call.op.name in _OPS and _is_cuda(sctx):
        return lower(op_call, sctx, reg)
    if prev is None:  # uninstalled while a reference was held
        from tvm.tirx.operator.tile_primitive import dispatcher

        prev = dispatcher.run_dispatch
    return prev(op_call, sctx)


def _dispatcher_module() -> Any:
    # Importing the CUDA backend registers TVM's own variants and its hook.
    import tvm.backend.cuda.tile_primitive  # noqa: F401
    import tvm.tirx.operator.tile_primitive.registry  # noqa: F401
    from tvm.tirx.operator.tile_primitive import dispatcher

    return dispatcher


def installed() -> bool:
    """Whether install() is in effect."""
    return _previous is not None


def install(registry: _td.Registry | None = None) -> None:
    """Route TVM's sum / max / min dispatch on CUDA through tiledispatch
    (with `registry`, or default_registry()); everything else still goes to
    TVM's dispatcher.  Installing again only replaces the registry."""
    global _previous, _registry
    dispatcher = _dispatcher_module()
    with _lock:
        _registry = registry or _registry or default_registry()
        if _previous is None:
            _previous = dispatcher.run_dispatch
            dispatcher.run_dispatch = _run_dispatch


def uninstall() -> None:
    """Restore TVM's own dispatcher.  A no-op when not installed."""
    global _previous, _registry
    dispatcher = _dispatcher_module()
    with _lock:
        if _previous is None:
            return
        dispatcher.run_dispatch = _previous
        _previous = None
        _registry = None
