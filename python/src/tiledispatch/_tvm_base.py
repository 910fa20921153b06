"""What the TVM bridge's modules share (tiledispatch.tvm and its
copy_async part, tiledispatch._tvm_copy_async): the bridge's error and the
dtype of a TVM scalar expression.  It imports neither, so the two import it
and never each other."""

from __future__ import annotations

from typing import Any

import tiledispatch as _td


class BridgeError(_td.Error):
    """A TVM call the bridge cannot express as a tiledispatch call (a
    symbolic shape, an unknown layout, ...), or a body TVM's parser refused."""

    # The public name is tiledispatch.tvm.BridgeError (re-exported there).
    __module__ = "tiledispatch.tvm"


def _dtype(x: Any) -> str | None:
    """A scalar expression's dtype (TVM 0.27's expressions carry it as
    their PrimType `ty`)."""
    ty = getattr(x, "ty", None)
    dtype = getattr(ty, "dtype", None)
    return str(dtype) if dtype is not None else None


def const_flag(x: Any, op: str, what: str) -> bool:
    """A flag of a TVM call (a transpose): a Python bool or an integer
    constant; anything else raises BridgeError naming `op` and `what`."""
    if isinstance(x, bool):
        return x
    value = getattr(x, "value", None)
    if isinstance(value, int):
        return bool(value)
    raise BridgeError(f"{op} {what} must be a constant bool, got {x!r}")


def active_axes(parts: Any, axes: Any = None) -> dict[str, list[int]] | None:
    """The call file's `active:` ({axis: [begin, end)}) from TVM's
    DispatchContext maps (`intra`, `inter`: each thread axis to (extent,
    offset), narrowed by the guards around the call), in order, the axes
    in `axes` only where given; None when they give none.  A range that is
    not constant raises BridgeError."""
    out: dict[str, list[int]] = {}
    for part in parts:
        for axis, rng in dict(part or {}).items():
            if axes is not None and str(axis) not in axes:
                continue
            try:
                extent, offset = int(rng[0]), int(rng[1])
            except (TypeError, ValueError, IndexError):
                raise BridgeError(f"the active set of axis {axis} is not constant: {rng!r}") \
                    from None
            out[str(axis)] = [offset, offset + extent]
    return out or None
