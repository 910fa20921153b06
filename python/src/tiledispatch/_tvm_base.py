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
